/* The vcjob controller's actions: what a plan kills, deletes and makes,
 * sent through the writer, and what the writes' completions tell the
 * controller (jobctl_int.h). */
#include "ctrl/jobctl_int.h"

#include <time.h>

#include "api/vcjob.h"
#include "api/vcjob_expand.h"
#include "api/vcjob_plugins.h"
#include "kube/client.h"
#include "kube/paths.h"

/* A delete that failed: the pod is ours to delete again at a later sync. */
static void deleted(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->jc->jobs, w->job);
    struct jpod *p = j ? mu_map_get(&j->pods, w->pod) : NULL;

    /* gone, or the name is another pod's now (the uid precondition) */
    if ((rc == -ENOENT || rc == -EBUSY) && p) {
        p->gone = true;
        j->dirty = true;
    } else if (rc < 0 && rc != -ECANCELED) {
        mu_ctl_log(&w->jc->ctl, "vcjob %s: delete pod %s: %s", w->job,
                   w->pod, msg);
        if (p) {
            p->killed = false;
            j->dirty = true;
        }
    }
    mu_jc_write_free(w);
}

/* Pod deletes go through the writer (writer.h), after any write already
 * queued for the same pod; the pod counts as terminating at once. */
static void delete_pod(struct mu_jobctl *jc, struct vjob *j, struct jpod *p)
{
    char *path = mu_api_path(MU_API_POD, j->ns, p->name, NULL);
    struct job_write *pw = mu_jc_write_new(jc, j, p->name);
    struct mu_write w = {.method = "DELETE", .path = path, .done = deleted,
                         .body = mu_api_delete_options(p->uid, NULL),
                         .ctx = pw};

    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: delete pod %s not sent: stopping",
                   j->key, p->name);
        mu_jc_write_free(pw);
    } else {
        p->killed = true;
        p->terminating = true;
    }
    free(path);
}

static char *group_path(const struct vjob *j)
{
    char *pg = mu_jc_group_name(j);
    char *path = mu_api_path(MU_API_PODGROUP, j->ns, pg, NULL);

    free(pg);
    return path;
}

/* Through the writer, keyed by the PodGroup: after a create of it still
 * queued, before a create made later (a restart keeps the name). */
static void delete_group(struct mu_jobctl *jc, struct vjob *j)
{
    char *path = group_path(j), *pg = mu_jc_group_name(j);
    const struct mu_job *cj = mu_cluster_job(jc->ctl.cluster, j->ns, pg);
    /* the PodGroup the cache shows, never one made again meanwhile; one
     * not seen yet goes by name (its create may still be queued) */
    struct mu_write w = {.method = "DELETE",
                         .path = path,
                         .body = mu_api_delete_options(
                             cj ? cj->pg.meta.uid : NULL, NULL),
                         .flags = MU_WRITE_GONE_OK};

    if (mu_writer_submit(jc->ctl.writer, &w) < 0)
        mu_ctl_log(&jc->ctl, "vcjob %s: delete %s not sent: stopping", j->key,
                   path);
    j->pg_version = -1;
    j->pg_making = -1;
    free(path);
    free(pg);
}

/* A PodGroup create completed: the version it was made for now has its
 * PodGroup, unless the Job moved on meanwhile; a failure is reported and
 * retried at the next sync. */
static void group_made(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->jc->jobs, w->job);
    char *pg = j ? mu_jc_group_name(j) : NULL;

    /* the same Job (its PodGroup's name carries the uid: a Job made again
     * under the name is another) and the same version */
    if (j && !mu_strcmp0(pg, w->pod) && j->pg_making == w->version) {
        j->pg_making = -1;
        if (rc == 0 || rc == -EEXIST) {
            j->pg_version = w->version;
        } else if (rc != -ECANCELED) {
            char *text = mu_xasprintf("create podgroup: %s", msg);

            mu_ctl_log(&w->jc->ctl, "vcjob %s: %s", j->key, text);
            mu_jc_event(w->jc, j, "Warning", "FailedCreate", text);
            free(text);
        }
        j->dirty = true;
    }
    free(pg);
    mu_jc_write_free(w);
}

/* The PodGroup create, keyed by the PodGroup (ordered with its delete and
 * its spec patches); the pods go at once: gated, they wait for it. */
static int create_group(struct mu_jobctl *jc, struct vjob *j)
{
    struct mu_write w = {.method = "POST", .done = group_made};
    struct job_write *gw;
    struct mu_err err;
    json_t *pg = NULL;
    char *path, *gpath, *pgname;

    if (mu_vcjob_podgroup(j->def, &pg, &err) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: %s", j->key, err.msg);
        return -EINVAL;
    }
    path = mu_api_path(MU_API_PODGROUP, j->ns, NULL, NULL);
    gpath = group_path(j);
    pgname = mu_jc_group_name(j);
    gw = mu_jc_write_new(jc, j, pgname); /* pod: the PodGroup's name */
    free(pgname);
    w.path = path;
    w.key = gpath;
    w.body = pg; /* stolen */
    w.ctx = gw;
    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: create podgroup not sent: stopping",
                   j->key);
        mu_jc_write_free(gw);
    } else {
        j->pg_making = j->st.version;
    }
    free(gpath);
    free(path);
    j->pg_stale = false; /* the create carries the spec */
    return 0;
}

/* A spec patch completed: on a failure the spec is still stale (sent
 * again at the next sync); if the Job changed again meanwhile, the next
 * sync sends the newer spec. */
static void group_patched(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_jc_write_job(w);

    if (rc < 0 && rc != -ECANCELED)
        mu_ctl_log(&w->jc->ctl, "vcjob %s: update podgroup: %s", w->job,
                   msg);
    if (j) {
        j->pg_patching = false;
        if (rc < 0 && j->pg_version == w->version)
            j->pg_stale = true;
        else if (rc == 0 && j->pg_stale)
            j->dirty = true;
    }
    mu_jc_write_free(w);
}

/* A scaled Job: minMember, minTaskMember and minResources follow, as a
 * merge patch of the PodGroup's spec keyed like its create and delete. */
static void patch_group(struct mu_jobctl *jc, struct vjob *j)
{
    struct mu_write w = {.method = "PATCH",
                         .content_type = MU_KUBE_MERGE_PATCH,
                         .done = group_patched};
    struct job_write *gw;
    struct mu_err err;
    json_t *pg = NULL;
    char *gpath;

    if (j->pg_patching || mu_vcjob_podgroup(j->def, &pg, &err) < 0)
        return;
    gpath = group_path(j);
    gw = mu_jc_write_new(jc, j, NULL);
    w.path = gpath;
    w.key = gpath;
    w.body = json_pack("{s:O}", "spec", json_object_get(pg, "spec"));
    w.ctx = gw;
    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: update podgroup not sent: stopping",
                   j->key);
        mu_jc_write_free(gw);
    } else {
        j->pg_patching = true;
        j->pg_stale = false;
    }
    free(gpath);
    json_decref(pg);
}

/* ---------------------------------------------- the plugins' objects -- */

static const struct {
    int (*build)(const json_t *, json_t **, struct mu_err *);
    enum mu_api_kind kind;
    const char *what;
} plugin_objs[MU_JC_NPLUGIN_OBJS] = {
    {mu_vcjob_svc_service, MU_API_SERVICE, "service"},
    {mu_vcjob_svc_configmap, MU_API_CONFIGMAP, "configmap"},
    {mu_vcjob_svc_networkpolicy, MU_API_NETWORKPOLICY, "networkpolicy"},
    {mu_vcjob_ssh_secret, MU_API_SECRET, "secret"},
};

/* A plugin object's create completed: made (or there already: 409
 * AlreadyExists), or reported and sent again at the next sync. When the
 * last one is made, the Job syncs again to make its PodGroup and pods. */
static void plugin_made(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_jc_write_job(w);
    unsigned bit = 1u << w->arg;

    if (j)
        j->plugins_making &= ~bit;
    if (rc == 0 || rc == -EEXIST) {
        if (j) {
            j->plugins_made |= bit;
            j->dirty = true;
        }
    } else if (rc != -ECANCELED) {
        char *text = mu_xasprintf("create %s: %s", plugin_objs[w->arg].what,
                                  msg);

        mu_ctl_log(&w->jc->ctl, "vcjob %s: %s", w->job, text);
        if (j)
            mu_jc_event(w->jc, j, "Warning", "FailedCreate", text);
        free(text);
    }
    mu_jc_write_free(w);
}

/* The svc and ssh plugins' objects, once per Job, before its pods (the
 * pods mount them): each POSTed once at a time, keyed by the object. An
 * object that exists is kept: the Secret's key pair must not change under
 * running pods. Returns false while one is not made. */
static bool make_plugin_objects(struct mu_jobctl *jc, struct vjob *j)
{
    const unsigned all = (1u << MU_JC_NPLUGIN_OBJS) - 1;

    if (j->plugins_done)
        return true;
    for (size_t i = 0; i < MU_ARRAY_LEN(plugin_objs); i++) {
        unsigned bit = 1u << i;
        struct mu_write w = {.method = "POST", .done = plugin_made};
        const char *name;
        struct job_write *pw;
        struct mu_err err;
        json_t *o = NULL;
        char *path, *key;

        if ((j->plugins_made | j->plugins_making) & bit)
            continue;
        if (plugin_objs[i].build(j->def, &o, &err) < 0) {
            mu_ctl_log(&jc->ctl, "vcjob %s: %s: %s", j->key,
                       plugin_objs[i].what, err.msg);
            continue;
        }
        if (!o) { /* its plugin is not on */
            j->plugins_made |= bit;
            continue;
        }
        name = json_string_value(
            json_object_get(json_object_get(o, "metadata"), "name"));
        path = mu_api_path(plugin_objs[i].kind, j->ns, NULL, NULL);
        key = name ? mu_api_path(plugin_objs[i].kind, j->ns, name, NULL)
                   : NULL;
        pw = mu_jc_write_new(jc, j, NULL);
        pw->arg = (long long)i;
        w.path = path;
        w.key = key;
        w.body = o; /* stolen */
        w.ctx = pw;
        if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
            mu_ctl_log(&jc->ctl, "vcjob %s: create %s not sent: stopping",
                       j->key, plugin_objs[i].what);
            mu_jc_write_free(pw);
        } else {
            j->plugins_making |= bit;
        }
        free(key);
        free(path);
    }
    j->plugins_done = j->plugins_made == all;
    return j->plugins_done;
}

/* ------------------------------------------------------------- pods -- */

/* A pod create that failed is made again at a later sync (AlreadyExists
 * is not a failure: the watch shows the pod). */
static void created(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->jc->jobs, w->job);

    if (rc < 0 && rc != -EEXIST && rc != -ECANCELED) {
        char *text = mu_xasprintf("create %s: %s", w->pod, msg);

        mu_ctl_log(&w->jc->ctl, "vcjob %s: %s", w->job, text);
        if (j) {
            mu_jc_event(w->jc, j, "Warning", "FailedCreate", text);
            if (j->st.version == w->version) {
                mu_map_del(&j->made, w->pod);
                j->dirty = true;
            }
        }
        free(text);
    }
    mu_jc_write_free(w);
}

/* One pod create, keyed by the pod, so a later delete waits for it. */
static void create_pod(struct mu_jobctl *jc, struct vjob *j, size_t ti,
                       int r, const char *name)
{
    struct mu_write w = {.method = "POST", .done = created};
    json_t *pod = NULL;
    struct mu_err err;
    char *path, *key;

    if (mu_vcjob_pod(j->def, ti, r, j->st.version, j->st.retry, 1, &pod,
                     &err) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: %s", j->key, err.msg);
        return;
    }
    path = mu_api_path(MU_API_POD, j->ns, NULL, NULL);
    key = mu_api_path(MU_API_POD, j->ns, name, NULL);
    w.path = path;
    w.key = key;
    w.body = pod; /* stolen */
    w.ctx = mu_jc_write_new(jc, j, name);
    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: create %s not sent: stopping", j->key,
                   name);
        mu_jc_write_free(w.ctx);
    } else {
        mu_map_put(&j->made, name, (void *)1);
    }
    free(key);
    free(path);
}

/* The plugins' objects, the PodGroup, then each missing pod, gated; the
 * pods go through the writer, all at once. */
static void make(struct mu_jobctl *jc, struct vjob *j)
{
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    const json_t *t;
    size_t ti;

    if (!make_plugin_objects(jc, j))
        return;
    if (j->pg_version != j->st.version && j->pg_making != j->st.version &&
        create_group(jc, j) < 0)
        return;
    if (j->pg_stale && j->pg_version == j->st.version)
        patch_group(jc, j);
    json_array_foreach(tasks, ti, t) {
        json_int_t reps = json_integer_value(json_object_get(t, "replicas"));
        const char *task = json_string_value(json_object_get(t, "name"));

        for (json_int_t r = 0; r < reps; r++) {
            char *name = mu_xasprintf("%s-%s-%lld", j->name, task,
                                      (long long)r);

            if (!mu_map_get(&j->pods, name) && !mu_map_get(&j->made, name) &&
                !mu_map_get(&j->done, name))
                create_pod(jc, j, ti, (int)r, name);
            free(name);
        }
    }
}

/* Pods beyond the spec (replicas lowered, a task removed) and pods of an
 * older version (left by a restart that muster did not finish) are
 * deleted. */
static void trim(struct mu_jobctl *jc, struct vjob *j)
{
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    size_t n;
    struct jpod **v = mu_jc_sorted_pods(j, &n);

    for (size_t i = 0; i < n; i++) {
        struct jpod *p = v[i];
        int ti = mu_jc_task_of(j, p->task);

        if (p->killed)
            continue;
        if (ti < 0 || p->index < 0 || p->version < j->st.version ||
            p->index >= json_integer_value(json_object_get(
                            json_array_get(tasks, (size_t)ti), "replicas")))
            delete_pod(jc, j, p);
    }
    free(v);
}

/* Deletes what a plan kills: the whole job, one task, or one pod. */
static void kill(struct mu_jobctl *jc, struct vjob *j,
                 const struct mu_jplan *plan, const char *pod)
{
    size_t n;
    struct jpod **v = mu_jc_sorted_pods(j, &n);

    for (size_t i = 0; i < n; i++) {
        struct jpod *p = v[i];

        if (p->killed || (pod && strcmp(p->name, pod)))
            continue;
        if (plan->kill_task >= 0 &&
            mu_jc_task_of(j, p->task) != plan->kill_task)
            continue;
        if (plan->kill == MU_JKILL_SOFT &&
            (p->phase == MU_POD_SUCCEEDED || p->phase == MU_POD_FAILED))
            continue;
        delete_pod(jc, j, p);
    }
    free(v);
}

void mu_jc_act(struct mu_jobctl *jc, struct vjob *j, enum mu_jaction a,
               int task, const char *pod)
{
    struct mu_jcounts c;
    struct mu_jplan plan;
    bool counted;

    mu_jc_count(j, &c);
    mu_jobsm_step(j->def, &j->st, &c, a, task, &plan);
    mu_jobsm_counts_release(&c);
    if (a != MU_JACT_SYNC) {
        char *msg = mu_xasprintf("Start to execute action %s",
                                 mu_jaction_name(a));

        mu_jc_event(jc, j, "Normal", "ExecuteAction", msg);
        free(msg);
    }
    if (plan.kill != MU_JKILL_NONE)
        kill(jc, j, &plan, a == MU_JACT_RESTART_POD ? pod : NULL);
    if (j->st.phase == MU_JOB_RESTARTING)
        trim(jc, j);
    if (plan.delete_group)
        delete_group(jc, j);
    if (plan.next.version != j->st.version) {
        mu_map_release(&j->made);
        mu_map_init(&j->made);
        mu_map_release(&j->done);
        mu_map_init(&j->done);
    }
    counted = plan.next.version != j->st.version ||
              plan.next.retry != j->st.retry;
    if (plan.next.phase != j->st.phase)
        mu_jc_transition(jc, j, plan.next.phase, plan.reason);
    j->st = plan.next;
    /* a new version or retry is on the API before pods carry it: a muster
     * restarted in between reads it back and does not orphan them */
    if (counted)
        mu_jc_write_status(jc, j, mu_jc_status_json(jc, j));
    if (plan.create) {
        make(jc, j);
        trim(jc, j);
    }
}

void mu_jc_pending_timeouts(struct mu_jobctl *jc, struct vjob *j)
{
    int64_t now = (int64_t)time(NULL);
    size_t n;
    struct jpod **v;

    if (j->st.phase != MU_JOB_PENDING && j->st.phase != MU_JOB_RUNNING)
        return;
    v = mu_jc_sorted_pods(j, &n);
    for (size_t i = 0; i < n; i++) {
        const struct jpod *p = v[i];
        enum mu_jaction a;
        int task;

        if (p->phase != MU_POD_PENDING || p->terminating ||
            p->version != j->st.version || !p->created)
            continue;
        task = mu_jc_task_of(j, p->task);
        a = mu_jobsm_policy(j->def, task, MU_JEV_POD_PENDING, -1,
                            (now - p->created) * 1000);
        if (a == MU_JACT_SYNC)
            continue;
        mu_ctl_log(&jc->ctl, "vcjob %s: pod %s Pending for %llds -> %s",
                   j->key, p->name, (long long)(now - p->created),
                   mu_jaction_name(a));
        mu_jc_act(jc, j, a, task, p->name);
        break;
    }
    free(v);
}
