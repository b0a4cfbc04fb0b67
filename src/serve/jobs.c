/* The vcjob controller (jobs.h). */
#include "serve/jobs.h"

#include "api/vcjob.h"
#include "api/vcjob_plugins.h"
#include "ctrl/jobsm.h"
#include "serve/jobs_int.h"
#include "serve/serve_int.h"

#define JOB_API "batch.volcano.sh/v1alpha1"
#define LABEL_JOB_NAME "volcano.sh/job-name"
#define ANN_JOB_VERSION "volcano.sh/job-version"

struct mu_jobctl *mu_jobctl_new(void)
{
    struct mu_jobctl *jc = mu_xcalloc(1, sizeof(*jc));

    mu_map_init(&jc->jobs);
    return jc;
}

static void jpod_free(struct jpod *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->uid);
    free(p->task);
    free(p->owner);
    free(p);
}

static void vjob_free(struct vjob *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->pods.cap; i++)
        if (j->pods.slots[i].key)
            jpod_free(j->pods.slots[i].value);
    mu_map_release(&j->pods);
    mu_map_release(&j->made);
    mu_map_release(&j->done);
    for (size_t i = 0; i < j->nevs; i++) {
        free(j->evs[i].task);
        free(j->evs[i].pod);
    }
    free(j->evs);
    free(j->cmds);
    json_decref(j->obj);
    json_decref(j->def);
    json_decref(j->conds);
    json_decref(j->written);
    free(j->invalid);
    free(j->ltt);
    free(j->reason);
    free(j->key);
    free(j->ns);
    free(j->name);
    free(j->uid);
    free(j);
}

void mu_jobctl_free(struct mu_jobctl *jc)
{
    if (!jc)
        return;
    for (size_t i = 0; i < jc->jobs.cap; i++)
        if (jc->jobs.slots[i].key)
            vjob_free(jc->jobs.slots[i].value);
    mu_map_release(&jc->jobs);
    free(jc);
}

static struct vjob *vjob_get(struct mu_jobctl *jc, const char *ns,
                             const char *name)
{
    char *key = mu_xasprintf("%s/%s", ns, name);
    struct vjob *j = mu_map_get(&jc->jobs, key);

    if (j) {
        free(key);
        return j;
    }
    j = mu_xcalloc(1, sizeof(*j));
    j->key = key;
    j->ns = mu_xstrdup(ns);
    j->name = mu_xstrdup(name);
    j->pg_version = -1;
    j->pg_making = -1;
    j->unknown_version = -1;
    j->conds = json_array();
    mu_map_init(&j->pods);
    mu_map_init(&j->made);
    mu_map_init(&j->done);
    mu_map_put(&jc->jobs, key, j);
    return j;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

int mu_jc_task_of(const struct vjob *j, const char *task)
{
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    const json_t *t;
    size_t i;

    json_array_foreach(tasks, i, t)
        if (task && !mu_strcmp0(json_string_value(json_object_get(t, "name")),
                                task))
            return (int)i;
    return -1;
}

static void push_event(struct vjob *j, enum mu_jevent ev, const char *task,
                       const char *pod, int exit_code)
{
    j->evs = mu_xrealloc(j->evs, (j->nevs + 1) * sizeof(*j->evs));
    j->evs[j->nevs].ev = ev;
    j->evs[j->nevs].task = mu_xstrdup_or_null(task);
    j->evs[j->nevs].pod = mu_xstrdup_or_null(pod);
    j->evs[j->nevs].exit_code = exit_code;
    j->nevs++;
}

static void clear_events(struct vjob *j)
{
    for (size_t i = 0; i < j->nevs; i++) {
        free(j->evs[i].task);
        free(j->evs[i].pod);
    }
    j->nevs = 0;
}

/* A pod this Job made (its controller ownerReference is this Job's uid);
 * a same-name Job made again does not inherit the old one's pods. */
static bool ours(const struct vjob *j, const struct jpod *p)
{
    return !p->gone && p->owner && j->uid && !strcmp(p->owner, j->uid);
}

static int cmp_pod(const void *a, const void *b)
{
    return strcmp((*(struct jpod *const *)a)->name,
                  (*(struct jpod *const *)b)->name);
}

/* This Job's pods in name order (deterministic kills and deletes); the
 * array is owned by the caller, the pods by the index. */
static struct jpod **sorted_pods(const struct vjob *j, size_t *n)
{
    struct jpod **v = mu_xcalloc(j->pods.n + 1, sizeof(*v));

    *n = 0;
    for (size_t i = 0; i < j->pods.cap; i++) {
        struct jpod *p = j->pods.slots[i].value;

        if (j->pods.slots[i].key && p && ours(j, p))
            v[(*n)++] = p;
    }
    qsort(v, *n, sizeof(*v), cmp_pod);
    return v;
}

/* Drops pods known to be gone (a delete that found nothing, a relist). */
static void purge(struct vjob *j)
{
    struct jpod **gone = mu_xcalloc(j->pods.n + 1, sizeof(*gone));
    size_t n = 0;

    for (size_t i = 0; i < j->pods.cap; i++) {
        struct jpod *p = j->pods.slots[i].value;

        if (j->pods.slots[i].key && p && p->gone)
            gone[n++] = p;
    }
    for (size_t i = 0; i < n; i++) {
        mu_map_del(&j->pods, gone[i]->name);
        mu_map_del(&j->made, gone[i]->name);
        jpod_free(gone[i]);
    }
    free(gone);
}

/* Reads the state machine's fields back from a Job's status (a restart of
 * muster, or the first sight of a Job). */
static void load_status(struct vjob *j, const json_t *obj)
{
    const json_t *st = json_object_get(obj, "status");
    const json_t *conds = json_object_get(st, "conditions");

    mu_jphase_parse(str_at(st, "state", "phase"), &j->st.phase);
    j->st.version = (int)json_integer_value(json_object_get(st, "version"));
    j->st.retry = (int)json_integer_value(json_object_get(st, "retryCount"));
    free(j->ltt);
    j->ltt = mu_xstrdup_or_null(str_at(st, "state", "lastTransitionTime"));
    free(j->reason);
    j->reason = mu_xstrdup_or_null(str_at(st, "state", "reason"));
    json_decref(j->conds);
    j->conds = json_is_array(conds) ? json_deep_copy(conds) : json_array();
    json_decref(j->written);
    j->written = json_is_object(st) ? json_deep_copy(st) : NULL;
}

void mu_jobctl_job(struct mu_serve *sv, enum mu_watch_type type,
                   const json_t *obj)
{
    struct mu_jobctl *jc = sv->jobctl;
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    int64_t gen = json_integer_value(json_object_get(md, "generation"));
    struct vjob *j;
    struct mu_err err;
    json_t *def = NULL;

    if (!ns || !name)
        return;
    j = vjob_get(jc, ns, name);
    if (type == MU_WATCH_DELETED) {
        /* its pods and PodGroup go with it (ownerReferences) */
        vjob_free(mu_map_del(&jc->jobs, j->key));
        return;
    }
    if (j->uid && mu_strcmp0(j->uid, uid)) {
        /* deleted and made again under the same name */
        vjob_free(mu_map_del(&jc->jobs, j->key));
        j = vjob_get(jc, ns, name);
    }
    if (!j->obj)
        load_status(j, obj);
    free(j->uid);
    j->uid = mu_xstrdup_or_null(uid);
    json_decref(j->obj);
    j->obj = json_incref((json_t *)obj);
    j->dirty = true;
    if (j->def && gen == j->generation)
        return;
    if (mu_vcjob_default(obj, &def, &err) < 0) {
        if (!j->def) {
            free(j->invalid);
            j->invalid = mu_xstrdup(err.msg);
        } else {
            mu_serve_log(sv, "vcjob %s: update refused, keeping the last "
                             "valid spec: %s", j->key, err.msg);
        }
        return;
    }
    if (j->def)
        j->pg_stale = true; /* replicas or minAvailable may have changed */
    json_decref(j->def);
    j->def = def;
    j->generation = gen;
    free(j->invalid);
    j->invalid = NULL;
}

/* Exit code of the first container that terminated, else -1. */
static int exit_code_of(const json_t *pod)
{
    const json_t *cs = json_object_get(json_object_get(pod, "status"),
                                       "containerStatuses");
    const json_t *c;
    size_t i;

    json_array_foreach(cs, i, c) {
        const json_t *term = json_object_get(json_object_get(c, "state"),
                                             "terminated");
        const json_t *code = json_object_get(term, "exitCode");

        if (json_is_integer(code))
            return (int)json_integer_value(code);
    }
    return -1;
}

static int int_text(const char *s, int dflt)
{
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    v = strtol(s, &end, 10);
    return *end || v < 0 || v > 1000000000 ? dflt : (int)v;
}

static bool task_all_succeeded(const struct vjob *j, const char *task)
{
    int ti = mu_jc_task_of(j, task), done = 0;
    json_int_t reps;

    if (ti < 0)
        return false;
    reps = json_integer_value(json_object_get(
        json_array_get(json_object_get(json_object_get(j->def, "spec"),
                                       "tasks"),
                       (size_t)ti),
        "replicas"));
    for (size_t i = 0; i < j->done.cap; i++)
        if (j->done.slots[i].key &&
            (intptr_t)j->done.slots[i].value == (intptr_t)ti + 1)
            done++;
    return done >= reps;
}

/* Volcano's TaskFailed: a container of the pod restarted as often as its
 * task's maxRetry allows (default 3). */
static bool restarted_out(const struct vjob *j, const char *task,
                          const json_t *pod)
{
    const json_t *t = json_array_get(
        json_object_get(json_object_get(j->def, "spec"), "tasks"),
        (size_t)mu_jc_task_of(j, task));
    const json_t *mr = json_object_get(t, "maxRetry");
    json_int_t max = json_is_integer(mr) && json_integer_value(mr) > 0
                         ? json_integer_value(mr)
                         : 3;
    const json_t *cs = json_object_get(json_object_get(pod, "status"),
                                       "containerStatuses"), *c;
    size_t i;

    if (!t)
        return false;
    json_array_foreach(cs, i, c)
        if (json_integer_value(json_object_get(c, "restartCount")) >= max)
            return true;
    return false;
}

/* The uid of an object's controller ownerReference, or NULL. */
static const char *controller_uid(const json_t *md)
{
    const json_t *refs = json_object_get(md, "ownerReferences"), *r;
    size_t i;

    json_array_foreach(refs, i, r)
        if (json_is_true(json_object_get(r, "controller")))
            return json_string_value(json_object_get(r, "uid"));
    return NULL;
}

void mu_jobctl_pod(struct mu_serve *sv, enum mu_watch_type type,
                   const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *job = str_at(md, "labels", LABEL_JOB_NAME);
    const json_t *ann = json_object_get(md, "annotations");
    struct vjob *j;
    struct jpod *p;
    enum mu_pod_phase old;
    bool fresh;

    if (!ns || !name || !job)
        return;
    j = vjob_get(sv->jobctl, ns, job);
    j->dirty = true;
    if (type == MU_WATCH_DELETED) {
        p = mu_map_del(&j->pods, name);
        mu_map_del(&j->made, name);
        /* an eviction is the loss of a pod that had a node and was still
         * to finish; one that never got a node is simply made again */
        if (p && j->def && ours(j, p) && !p->killed && p->bound &&
            p->version == j->st.version &&
            (p->phase == MU_POD_PENDING || p->phase == MU_POD_RUNNING))
            push_event(j, MU_JEV_POD_EVICTED, p->task, p->name, -1);
        jpod_free(p);
        return;
    }
    p = mu_map_get(&j->pods, name);
    fresh = !p || mu_strcmp0(p->uid, str_at(obj, "metadata", "uid"));
    if (!p) {
        p = mu_xcalloc(1, sizeof(*p));
        p->name = mu_xstrdup(name);
        mu_map_put(&j->pods, name, p);
    }
    if (fresh) {
        free(p->uid);
        p->uid = mu_xstrdup_or_null(str_at(obj, "metadata", "uid"));
        free(p->owner);
        p->owner = mu_xstrdup_or_null(controller_uid(md));
        p->killed = false;
        p->gone = false;
        p->task_failed = false;
    }
    old = fresh ? (enum mu_pod_phase)-1 : p->phase;
    free(p->task);
    p->task = mu_xstrdup_or_null(
        json_string_value(json_object_get(ann, MU_ANN_TASK_SPEC)));
    p->index = int_text(json_string_value(json_object_get(
                            ann, MU_ANN_TASK_INDEX)), -1);
    p->version = int_text(json_string_value(json_object_get(
                              ann, ANN_JOB_VERSION)), 0);
    p->phase = mu_pod_phase_parse(str_at(obj, "status", "phase"));
    if (!mu_rfc3339_parse(json_string_value(json_object_get(
                              md, "creationTimestamp")), &p->created))
        p->created = 0;
    p->terminating = p->killed || json_object_get(md, "deletionTimestamp");
    p->bound = str_at(obj, "spec", "nodeName") != NULL;
    if (!j->def || !ours(j, p) || p->terminating ||
        p->version != j->st.version)
        return;
    if (!p->task_failed && (p->phase == MU_POD_PENDING ||
                            p->phase == MU_POD_RUNNING) &&
        restarted_out(j, p->task, obj)) {
        p->task_failed = true;
        push_event(j, MU_JEV_TASK_FAILED, p->task, p->name, -1);
    }
    if (p->phase == old)
        return;
    if (p->phase == MU_POD_SUCCEEDED && mu_jc_task_of(j, p->task) >= 0)
        mu_map_put(&j->done, p->name,
                   (void *)((intptr_t)mu_jc_task_of(j, p->task) + 1));
    if (p->phase == MU_POD_FAILED)
        push_event(j, MU_JEV_POD_FAILED, p->task, p->name, exit_code_of(obj));
    else if (p->phase == MU_POD_SUCCEEDED && task_all_succeeded(j, p->task))
        push_event(j, MU_JEV_TASK_COMPLETED, p->task, NULL, -1);
}

/* ------------------------------------------------------------- actions -- */

char *mu_jc_path(const struct vjob *j)
{
    return mu_xasprintf("/apis/" JOB_API "/namespaces/%s/jobs/%s", j->ns,
                        j->name);
}

void mu_jc_event(struct mu_serve *sv, const struct vjob *j, const char *type,
                 const char *reason, const char *msg)
{
    mu_serve_post_event(sv, JOB_API, "Job", j->ns, j->name, j->uid, type,
                        reason, msg);
}

struct job_write *mu_jc_write_new(struct mu_serve *sv, const struct vjob *j,
                                  const char *pod)
{
    struct job_write *w = mu_xcalloc(1, sizeof(*w));

    w->sv = sv;
    w->job = mu_xstrdup(j->key);
    w->pod = mu_xstrdup_or_null(pod);
    w->version = j->st.version;
    return w;
}

void mu_jc_write_free(struct job_write *w)
{
    free(w->job);
    free(w->pod);
    free(w);
}

/* A delete that failed: the pod is ours to delete again at a later sync. */
static void deleted(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->sv->jobctl->jobs, w->job);
    struct jpod *p = j ? mu_map_get(&j->pods, w->pod) : NULL;

    if (rc == -ENOENT && p) {
        p->gone = true;
        j->dirty = true;
    } else if (rc < 0 && rc != -ECANCELED) {
        mu_serve_log(w->sv, "vcjob %s: delete pod %s: %s", w->job, w->pod,
                     msg);
        if (p) {
            p->killed = false;
            j->dirty = true;
        }
    }
    mu_jc_write_free(w);
}

/* Pod deletes go through the writer (writer.h), after any write already
 * queued for the same pod; the pod counts as terminating at once. */
static void delete_pod(struct mu_serve *sv, struct vjob *j, struct jpod *p)
{
    char *path = mu_xasprintf("/api/v1/namespaces/%s/pods/%s", j->ns,
                              p->name);
    struct job_write *pw = mu_jc_write_new(sv, j, p->name);
    struct mu_write w = {.method = "DELETE", .path = path, .done = deleted,
                         .ctx = pw};

    if (mu_writer_submit(sv->writer, &w) < 0) {
        mu_serve_log(sv, "vcjob %s: delete pod %s not sent: stopping",
                     j->key, p->name);
        mu_jc_write_free(pw);
    } else {
        p->killed = true;
        p->terminating = true;
    }
    free(path);
}

char *mu_jc_group_name(const struct vjob *j)
{
    return mu_xasprintf("%s-%s", j->name, j->uid ? j->uid : "");
}

static char *group_path(const struct vjob *j)
{
    char *pg = mu_jc_group_name(j);
    char *path = mu_xasprintf(
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s",
        j->ns, pg);

    free(pg);
    return path;
}

/* Through the writer, keyed by the PodGroup: after a create of it still
 * queued, before a create made later (a restart keeps the name). */
static void delete_group(struct mu_serve *sv, struct vjob *j)
{
    char *path = group_path(j);
    struct mu_write w = {.method = "DELETE",
                         .path = path,
                         .flags = MU_WRITE_GONE_OK};

    if (mu_writer_submit(sv->writer, &w) < 0)
        mu_serve_log(sv, "vcjob %s: delete %s not sent: stopping", j->key,
                     path);
    j->pg_version = -1;
    j->pg_making = -1;
    free(path);
}

/* A PodGroup create completed (scheduler thread): the version it was made
 * for now has its PodGroup, unless the Job moved on meanwhile; a failure
 * is reported and retried at the next sync. */
static void group_made(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->sv->jobctl->jobs, w->job);
    char *pg = j ? mu_jc_group_name(j) : NULL;

    /* the same Job (its PodGroup's name carries the uid: a Job made again
     * under the name is another) and the same version */
    if (j && !mu_strcmp0(pg, w->pod) && j->pg_making == w->version) {
        j->pg_making = -1;
        if (rc == 0 || rc == -EEXIST) {
            j->pg_version = w->version;
        } else if (rc != -ECANCELED) {
            char *text = mu_xasprintf("create podgroup: %s", msg);

            mu_serve_log(w->sv, "vcjob %s: %s", j->key, text);
            mu_jc_event(w->sv, j, "Warning", "FailedCreate", text);
            free(text);
        }
        j->dirty = true;
    }
    free(pg);
    mu_jc_write_free(w);
}

static int create(struct mu_serve *sv, const struct vjob *j, const char *path,
                  const json_t *obj, const char *what)
{
    struct mu_err err;
    int r = mu_serve_create(sv, path, obj, &err);

    if (r < 0) {
        char *msg = mu_xasprintf("create %s: %s", what, err.msg);

        mu_serve_log(sv, "vcjob %s: %s", j->key, msg);
        mu_jc_event(sv, j, "Warning", "FailedCreate", msg);
        free(msg);
    }
    return r;
}

/* The svc and ssh plugins' objects, once per Job, before its pods (the
 * pods mount them). An object that exists is kept: the Secret's key pair
 * must not change under running pods. Returns false while one is missing. */
static bool make_plugin_objects(struct mu_serve *sv, struct vjob *j)
{
    static const struct {
        int (*build)(const json_t *, json_t **, struct mu_err *);
        const char *api, *plural, *what;
    } objs[] = {
        {mu_vcjob_svc_service, "api/v1", "services", "service"},
        {mu_vcjob_svc_configmap, "api/v1", "configmaps", "configmap"},
        {mu_vcjob_svc_networkpolicy, "apis/networking.k8s.io/v1",
         "networkpolicies", "networkpolicy"},
        {mu_vcjob_ssh_secret, "api/v1", "secrets", "secret"},
    };
    bool done = true;

    if (j->plugins_done)
        return true;
    for (size_t i = 0; i < MU_ARRAY_LEN(objs); i++) {
        json_t *o = NULL;
        struct mu_err err;
        char *path;

        if (objs[i].build(j->def, &o, &err) < 0) {
            mu_serve_log(sv, "vcjob %s: %s: %s", j->key, objs[i].what,
                         err.msg);
            done = false;
            continue;
        }
        if (!o)
            continue;
        path = mu_xasprintf("/%s/namespaces/%s/%s", objs[i].api, j->ns,
                            objs[i].plural);
        if (create(sv, j, path, o, objs[i].what) < 0)
            done = false;
        free(path);
        json_decref(o);
    }
    j->plugins_done = done;
    return done;
}

/* A pod create that failed is made again at a later sync (AlreadyExists
 * is not a failure: the watch shows the pod). */
static void created(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->sv->jobctl->jobs, w->job);

    if (rc < 0 && rc != -EEXIST && rc != -ECANCELED) {
        char *text = mu_xasprintf("create %s: %s", w->pod, msg);

        mu_serve_log(w->sv, "vcjob %s: %s", w->job, text);
        if (j) {
            mu_jc_event(w->sv, j, "Warning", "FailedCreate", text);
            if (j->st.version == w->version) {
                mu_map_del(&j->made, w->pod);
                j->dirty = true;
            }
        }
        free(text);
    }
    mu_jc_write_free(w);
}

/* The plugins' objects, the PodGroup, then each missing pod, gated; the
 * pods go through the writer, all at once. */
static void make(struct mu_serve *sv, struct vjob *j)
{
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    const json_t *t;
    struct mu_err err;
    char *path;
    size_t ti;

    if (!make_plugin_objects(sv, j))
        return;
    if (j->pg_version != j->st.version && j->pg_making != j->st.version) {
        json_t *pg = NULL;
        char *gpath, *pgname;
        struct job_write *gw;
        struct mu_write w = {.method = "POST", .done = group_made};

        if (mu_vcjob_podgroup(j->def, &pg, &err) < 0) {
            mu_serve_log(sv, "vcjob %s: %s", j->key, err.msg);
            return;
        }
        /* through the writer, keyed by the PodGroup (ordered with its
         * delete); the pods go at once: gated, they wait for it */
        path = mu_xasprintf(
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups",
            j->ns);
        gpath = group_path(j);
        pgname = mu_jc_group_name(j);
        gw = mu_jc_write_new(sv, j, pgname); /* pod: the PodGroup's name */
        free(pgname);
        w.path = path;
        w.key = gpath;
        w.body = pg; /* stolen */
        w.ctx = gw;
        if (mu_writer_submit(sv->writer, &w) < 0) {
            mu_serve_log(sv, "vcjob %s: create podgroup not sent: stopping",
                         j->key);
            mu_jc_write_free(gw);
        } else {
            j->pg_making = j->st.version;
        }
        free(gpath);
        free(path);
        j->pg_stale = false;
    }
    if (j->pg_stale && j->pg_version == j->st.version) {
        json_t *pg = NULL, *patch;

        /* a scaled Job: minMember, minTaskMember and minResources follow */
        if (mu_vcjob_podgroup(j->def, &pg, &err) == 0) {
            char *gpath = group_path(j);

            patch = json_pack("{s:O}", "spec", json_object_get(pg, "spec"));
            if (mu_kube_merge_patch(sv->kube, gpath, patch, NULL, &err) < 0)
                mu_serve_log(sv, "vcjob %s: update podgroup: %s", j->key,
                             err.msg);
            else
                j->pg_stale = false;
            json_decref(patch);
            free(gpath);
            json_decref(pg);
        }
    }
    path = mu_xasprintf("/api/v1/namespaces/%s/pods", j->ns);
    json_array_foreach(tasks, ti, t) {
        json_int_t reps = json_integer_value(json_object_get(t, "replicas"));
        const char *task = json_string_value(json_object_get(t, "name"));

        for (json_int_t r = 0; r < reps; r++) {
            char *name = mu_xasprintf("%s-%s-%lld", j->name, task,
                                      (long long)r);
            json_t *pod = NULL;

            if (!mu_map_get(&j->pods, name) && !mu_map_get(&j->made, name) &&
                !mu_map_get(&j->done, name)) {
                if (mu_vcjob_pod(j->def, ti, (int)r, j->st.version,
                                 j->st.retry, 1, &pod, &err) < 0) {
                    mu_serve_log(sv, "vcjob %s: %s", j->key, err.msg);
                } else {
                    /* keyed by the pod, so a later delete waits for it */
                    char *key = mu_xasprintf("%s/%s", path, name);
                    struct job_write *pw = mu_jc_write_new(sv, j, name);
                    struct mu_write w = {.method = "POST", .path = path,
                                         .body = pod, .key = key,
                                         .done = created, .ctx = pw};

                    pod = NULL; /* the writer steals it */
                    if (mu_writer_submit(sv->writer, &w) < 0) {
                        mu_serve_log(sv, "vcjob %s: create %s not sent: "
                                         "stopping", j->key, name);
                        mu_jc_write_free(pw);
                    } else {
                        mu_map_put(&j->made, name, (void *)1);
                    }
                    free(key);
                }
                json_decref(pod);
            }
            free(name);
        }
    }
    free(path);
}

/* Pods beyond the spec (replicas lowered, a task removed) and pods of an
 * older version (left by a restart that muster did not finish) are
 * deleted. */
static void trim(struct mu_serve *sv, struct vjob *j)
{
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    size_t n;
    struct jpod **v = sorted_pods(j, &n);

    for (size_t i = 0; i < n; i++) {
        struct jpod *p = v[i];
        int ti = mu_jc_task_of(j, p->task);

        if (p->killed)
            continue;
        if (ti < 0 || p->index < 0 || p->version < j->st.version ||
            p->index >= json_integer_value(json_object_get(
                            json_array_get(tasks, (size_t)ti), "replicas")))
            delete_pod(sv, j, p);
    }
    free(v);
}

/* Deletes what a plan kills: the whole job, one task, or one pod. */
static void kill(struct mu_serve *sv, struct vjob *j,
                 const struct mu_jplan *plan, const char *pod)
{
    size_t n;
    struct jpod **v = sorted_pods(j, &n);

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
        delete_pod(sv, j, p);
    }
    free(v);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Counts this Job's pods; Succeeded pods that were deleted since still
 * count as succeeded. */
void mu_jc_count(const struct vjob *j, struct mu_jcounts *c)
{
    struct mu_jpod *v = mu_xcalloc(j->pods.n + j->done.n + 1, sizeof(*v));
    size_t n = 0;

    for (size_t i = 0; i < j->pods.cap; i++) {
        const struct jpod *p = j->pods.slots[i].value;

        if (!j->pods.slots[i].key || !p || !ours(j, p))
            continue;
        v[n].task = mu_jc_task_of(j, p->task);
        v[n].index = p->index;
        v[n].phase = p->phase;
        v[n].terminating = p->terminating;
        n++;
    }
    for (size_t i = 0; i < j->done.cap; i++) {
        const struct jpod *p;

        if (!j->done.slots[i].key)
            continue;
        p = mu_map_get(&j->pods, j->done.slots[i].key);
        if (p && ours(j, p))
            continue;
        v[n].task = (int)((intptr_t)j->done.slots[i].value - 1);
        v[n].index = -1;
        v[n].phase = MU_POD_SUCCEEDED;
        v[n].terminating = false;
        n++;
    }
    mu_jobsm_count(j->def, v, n, c);
    free(v);
}

void mu_jc_transition(struct mu_serve *sv, struct vjob *j, enum mu_jphase to,
                      const char *reason)
{
    char ts[32];
    json_t *c;
    size_t i;

    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    free(j->ltt);
    j->ltt = mu_xstrdup(ts);
    free(j->reason);
    j->reason = mu_xstrdup_or_null(reason && *reason ? reason : NULL);
    json_array_foreach(j->conds, i, c)
        if (!mu_strcmp0(json_string_value(json_object_get(c, "status")),
                        mu_jphase_name(to))) {
            json_array_remove(j->conds, i);
            break;
        }
    json_array_append_new(j->conds,
                          json_pack("{s:s,s:s}", "status", mu_jphase_name(to),
                                    "lastTransitionTime", ts));
    if (to != j->st.phase)
        mu_serve_log(sv, "vcjob %s: %s -> %s%s%s%s", j->key,
                     mu_jphase_name(j->st.phase), mu_jphase_name(to),
                     j->reason ? " (" : "", j->reason ? j->reason : "",
                     j->reason ? ")" : "");
}

/* Runs one action through the state machine and carries out its plan;
 * `pod` narrows a RestartPod to that pod. */
static void act(struct mu_serve *sv, struct vjob *j, enum mu_jaction a,
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

        mu_jc_event(sv, j, "Normal", "ExecuteAction", msg);
        free(msg);
    }
    if (plan.kill != MU_JKILL_NONE)
        kill(sv, j, &plan, a == MU_JACT_RESTART_POD ? pod : NULL);
    if (j->st.phase == MU_JOB_RESTARTING)
        trim(sv, j);
    if (plan.delete_group)
        delete_group(sv, j);
    if (plan.next.version != j->st.version) {
        mu_map_release(&j->made);
        mu_map_init(&j->made);
        mu_map_release(&j->done);
        mu_map_init(&j->done);
    }
    counted = plan.next.version != j->st.version ||
              plan.next.retry != j->st.retry;
    if (plan.next.phase != j->st.phase)
        mu_jc_transition(sv, j, plan.next.phase, plan.reason);
    j->st = plan.next;
    /* a new version or retry is on the API before pods carry it: a muster
     * restarted in between reads it back and does not orphan them */
    if (counted)
        mu_jc_write_status(sv, j, mu_jc_status_json(sv, j));
    if (plan.create) {
        make(sv, j);
        trim(sv, j);
    }
}

/* A PodPending policy with a timeout fires once one of the job's pods has
 * been Pending that long (checked at every sync, the periodic one too). */
static void pending_timeouts(struct mu_serve *sv, struct vjob *j)
{
    int64_t now = (int64_t)time(NULL);
    size_t n;
    struct jpod **v;

    if (j->st.phase != MU_JOB_PENDING && j->st.phase != MU_JOB_RUNNING)
        return;
    v = sorted_pods(j, &n);
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
        mu_serve_log(sv, "vcjob %s: pod %s Pending for %llds -> %s", j->key,
                     p->name, (long long)(now - p->created),
                     mu_jaction_name(a));
        act(sv, j, a, task, p->name);
        break;
    }
    free(v);
}

static void sync_job(struct mu_serve *sv, struct vjob *j)
{
    const struct mu_job *cj;
    char *pg;

    j->dirty = false;
    purge(j);
    if (!j->obj)
        return;
    /* a Job being deleted is left to the garbage collector (Volcano) */
    if (json_object_get(json_object_get(j->obj, "metadata"),
                        "deletionTimestamp") ||
        j->invalid || mu_jc_expire(sv, j)) {
        clear_events(j);
        j->ncmds = 0;
        if (j->invalid)
            mu_jc_refuse(sv, j);
        return;
    }
    if (!j->ltt)
        mu_jc_transition(sv, j, j->st.phase, NULL); /* its first condition */
    pg = mu_jc_group_name(j);
    cj = mu_cluster_job(&sv->cluster, j->ns, pg);
    free(pg);
    if (cj && cj->phase == MU_PG_UNKNOWN &&
        j->unknown_version != j->st.version) {
        j->unknown_version = j->st.version;
        push_event(j, MU_JEV_UNKNOWN, NULL, NULL, -1);
    }
    for (size_t i = 0; i < j->ncmds; i++)
        act(sv, j, j->cmds[i], -1, NULL);
    j->ncmds = 0;
    for (size_t i = 0; i < j->nevs; i++) {
        struct jevent *e = &j->evs[i];
        int task = mu_jc_task_of(j, e->task);
        enum mu_jaction a = MU_JACT_SYNC;

        if (j->st.phase == MU_JOB_PENDING || j->st.phase == MU_JOB_RUNNING)
            a = mu_jobsm_policy(j->def, task, e->ev, e->exit_code, INT64_MAX);
        if (a != MU_JACT_SYNC) {
            mu_serve_log(sv, "vcjob %s: %s%s%s -> %s", j->key,
                         mu_jevent_name(e->ev), e->pod ? " of pod " : "",
                         e->pod ? e->pod : "", mu_jaction_name(a));
            act(sv, j, a, task, e->pod);
        }
    }
    clear_events(j);
    pending_timeouts(sv, j);
    /* settle: Pending -> Running -> Completed can follow in one sync */
    for (int k = 0; k < 4; k++) {
        enum mu_jphase before = j->st.phase;

        act(sv, j, MU_JACT_SYNC, -1, NULL);
        if (j->st.phase == before)
            break;
    }
    mu_jc_write_status(sv, j, mu_jc_status_json(sv, j));
}

void mu_jobctl_sync(struct mu_serve *sv, bool all)
{
    struct mu_jobctl *jc = sv->jobctl;
    char **keys = mu_xcalloc(jc->jobs.n + 1, sizeof(*keys));
    size_t n = 0;

    for (size_t i = 0; i < jc->jobs.cap; i++) {
        struct vjob *j = jc->jobs.slots[i].value;

        if (!jc->jobs.slots[i].key || !j)
            continue;
        if (!j->obj && !j->pods.n && !j->ncmds && !all)
            continue;
        /* the tick has nothing to do for a finished Job nothing changed
         * (unless its ttl is counting down) */
        if (!j->dirty && j->obj && mu_jphase_final(j->st.phase) &&
            !json_object_get(json_object_get(j->def, "spec"),
                             "ttlSecondsAfterFinished"))
            continue;
        if (all || j->dirty)
            keys[n++] = j->key;
    }
    qsort(keys, n, sizeof(*keys), cmp_name);
    for (size_t i = 0; i < n; i++) {
        struct vjob *j = mu_map_get(&jc->jobs, keys[i]);

        for (size_t k = 0; !j->obj && k < j->ncmds; k++)
            mu_serve_log(sv, "command %s for vcjob %s: no such job",
                         mu_jaction_name(j->cmds[k]), j->key);
        if (!j->obj)
            j->ncmds = 0;
        if (!j->obj && !j->pods.n) {
            /* pods of a Job that is gone: nothing left to follow */
            vjob_free(mu_map_del(&jc->jobs, keys[i]));
            continue;
        }
        sync_job(sv, j);
    }
    free(keys);
}

void mu_jobctl_list_end(struct mu_serve *sv, bool pods,
                        const struct mu_map *listed)
{
    struct mu_jobctl *jc = sv->jobctl;
    char **gone = mu_xcalloc(jc->jobs.n + 1, sizeof(*gone));
    size_t n = 0;

    for (size_t i = 0; i < jc->jobs.cap; i++) {
        struct vjob *j = jc->jobs.slots[i].value;

        if (!jc->jobs.slots[i].key || !j)
            continue;
        if (!pods) {
            if (j->obj && !mu_map_get(listed, j->key))
                gone[n++] = mu_xstrdup(j->key);
            continue;
        }
        for (size_t k = 0; k < j->pods.cap; k++) {
            struct jpod *p = j->pods.slots[k].value;
            char *key;

            if (!j->pods.slots[k].key || !p)
                continue;
            key = mu_xasprintf("%s/%s", j->ns, p->name);
            if (!mu_map_get(listed, key)) {
                p->gone = true; /* deleted while the watch was down */
                j->dirty = true;
            }
            free(key);
        }
    }
    for (size_t i = 0; i < n; i++) {
        vjob_free(mu_map_del(&jc->jobs, gone[i]));
        free(gone[i]);
    }
    free(gone);
}

void mu_serve_job_command(struct mu_serve *sv, const char *ns,
                          const char *name, const char *action)
{
    struct vjob *j;
    enum mu_jaction a;

    if (!mu_jaction_parse(action, &a)) {
        mu_serve_log(sv, "command %s for vcjob %s/%s: unknown action", action,
                     ns, name);
        return;
    }
    /* a Command listed before the Jobs waits for them (mu_jobctl_sync
     * drops it once caches are synced and the Job still is not there) */
    j = vjob_get(sv->jobctl, ns, name);
    j->cmds = mu_xrealloc(j->cmds, (j->ncmds + 1) * sizeof(*j->cmds));
    j->cmds[j->ncmds++] = a;
    j->dirty = true;
}
