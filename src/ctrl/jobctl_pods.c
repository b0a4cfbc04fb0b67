/* The vcjob controller's index: Jobs and their pods as the watches show
 * them, the lifecycle events they give (jobctl_int.h). */
#include "ctrl/jobctl_int.h"

#include "api/json.h"
#include "api/object.h"

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

void mu_jc_clear_events(struct vjob *j)
{
    for (size_t i = 0; i < j->nevs; i++) {
        free(j->evs[i].task);
        free(j->evs[i].pod);
    }
    j->nevs = 0;
}

void mu_jc_job_free(struct vjob *j)
{
    size_t it = 0;
    void *p;

    if (!j)
        return;
    while (mu_map_next(&j->pods, &it, NULL, &p))
        jpod_free(p);
    mu_map_release(&j->pods);
    mu_map_release(&j->made);
    mu_map_release(&j->done);
    mu_jc_clear_events(j);
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

struct vjob *mu_jc_job_get(struct mu_jobctl *jc, const char *ns,
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

char *mu_jc_group_name(const struct vjob *j)
{
    return mu_xasprintf("%s-%s", j->name, j->uid ? j->uid : "");
}

void mu_jc_push_event(struct vjob *j, enum mu_jevent ev, const char *task,
                      const char *pod, int exit_code)
{
    j->evs = mu_xrealloc(j->evs, (j->nevs + 1) * sizeof(*j->evs));
    j->evs[j->nevs].ev = ev;
    j->evs[j->nevs].task = mu_xstrdup_or_null(task);
    j->evs[j->nevs].pod = mu_xstrdup_or_null(pod);
    j->evs[j->nevs].exit_code = exit_code;
    j->nevs++;
}

/* A pod this Job made (its controller ownerReference is this Job's uid);
 * a same-name Job made again does not inherit the old one's pods. */
static bool ours(const struct vjob *j, const struct jpod *p)
{
    return !p->gone && p->owner && j->uid && !strcmp(p->owner, j->uid);
}

struct jpod **mu_jc_sorted_pods(const struct vjob *j, size_t *n)
{
    size_t nkeys;
    const char **keys = mu_map_sorted_keys(&j->pods, &nkeys);
    struct jpod **v = mu_xcalloc(nkeys + 1, sizeof(*v));

    *n = 0;
    for (size_t i = 0; i < nkeys; i++) {
        struct jpod *p = mu_map_get(&j->pods, keys[i]);

        if (ours(j, p))
            v[(*n)++] = p;
    }
    free(keys);
    return v;
}

void mu_jc_purge(struct vjob *j)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&j->pods, &it, NULL, &v)) {
        struct jpod *p = v;

        if (!p->gone)
            continue;
        mu_map_del(&j->pods, p->name); /* the entry just returned */
        mu_map_del(&j->made, p->name);
        jpod_free(p);
    }
}

/* Counts this Job's pods; Succeeded pods that were deleted since still
 * count as succeeded. */
void mu_jc_count(const struct vjob *j, struct mu_jcounts *c)
{
    struct mu_jpod *v = mu_xcalloc(j->pods.n + j->done.n + 1, sizeof(*v));
    size_t n = 0, it = 0;
    const char *name;
    void *val;

    while (mu_map_next(&j->pods, &it, NULL, &val)) {
        const struct jpod *p = val;

        if (!ours(j, p))
            continue;
        v[n].task = mu_jc_task_of(j, p->task);
        v[n].index = p->index;
        v[n].phase = p->phase;
        v[n].terminating = p->terminating;
        n++;
    }
    it = 0;
    while (mu_map_next(&j->done, &it, &name, &val)) {
        const struct jpod *p = mu_map_get(&j->pods, name);

        if (p && ours(j, p))
            continue;
        v[n].task = (int)((intptr_t)val - 1);
        v[n].index = -1;
        v[n].phase = MU_POD_SUCCEEDED;
        v[n].terminating = false;
        n++;
    }
    mu_jobsm_count(j->def, v, n, c);
    free(v);
}

struct job_write *mu_jc_write_new(struct mu_jobctl *jc, const struct vjob *j,
                                  const char *pod)
{
    struct job_write *w = mu_xcalloc(1, sizeof(*w));

    w->jc = jc;
    w->job = mu_xstrdup(j->key);
    w->uid = mu_xstrdup_or_null(j->uid);
    w->pod = mu_xstrdup_or_null(pod);
    w->version = j->st.version;
    return w;
}

void mu_jc_write_free(struct job_write *w)
{
    free(w->job);
    free(w->uid);
    free(w->pod);
    free(w);
}

struct vjob *mu_jc_write_job(const struct job_write *w)
{
    struct vjob *j = mu_map_get(&w->jc->jobs, w->job);

    return j && !mu_strcmp0(j->uid, w->uid) ? j : NULL;
}

/* --------------------------------------------------------- pod events -- */

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
    size_t it = 0;
    void *v;

    if (ti < 0)
        return false;
    reps = json_integer_value(json_object_get(
        json_array_get(json_object_get(json_object_get(j->def, "spec"),
                                       "tasks"),
                       (size_t)ti),
        "replicas"));
    while (mu_map_next(&j->done, &it, NULL, &v))
        if ((intptr_t)v == (intptr_t)ti + 1)
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

void mu_jc_pod_undone(struct mu_jobctl *jc, const char *ns,
                      const char *name, const char *uid, bool on)
{
    size_t it = 0;
    void *v;

    while (uid && mu_map_next(&jc->jobs, &it, NULL, &v)) {
        struct vjob *j = v;
        struct jpod *p;

        if (mu_strcmp0(j->ns, ns) || !(p = mu_map_get(&j->pods, name)) ||
            mu_strcmp0(p->uid, uid))
            continue;
        p->undone = on;
        return;
    }
}

void mu_jc_pod_event(struct mu_jobctl *jc, enum mu_watch_type type,
                     const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *job = mu_json_str_at(md, "labels", MU_JC_LABEL_JOB_NAME);
    const json_t *ann = json_object_get(md, "annotations");
    struct vjob *j;
    struct jpod *p;
    enum mu_pod_phase old;
    bool fresh;

    if (!ns || !name || !job)
        return;
    j = mu_jc_job_get(jc, ns, job);
    j->dirty = true;
    if (type == MU_WATCH_DELETED) {
        p = mu_map_del(&j->pods, name);
        mu_map_del(&j->made, name);
        /* an eviction is the loss of a pod that had a node and was still
         * to finish, deleted by neither this controller nor muster's undo
         * of a gang bind; one that never got a node is simply made again */
        if (p && j->def && ours(j, p) && !p->killed && !p->undone &&
            p->bound &&
            p->version == j->st.version &&
            (p->phase == MU_POD_PENDING || p->phase == MU_POD_RUNNING))
            mu_jc_push_event(j, MU_JEV_POD_EVICTED, p->task, p->name, -1);
        jpod_free(p);
        return;
    }
    p = mu_map_get(&j->pods, name);
    fresh = !p || mu_strcmp0(p->uid, mu_json_str_at(obj, "metadata", "uid"));
    if (!p) {
        p = mu_xcalloc(1, sizeof(*p));
        p->name = mu_xstrdup(name);
        mu_map_put(&j->pods, name, p);
    }
    if (fresh) {
        free(p->uid);
        p->uid = mu_xstrdup_or_null(mu_json_str_at(obj, "metadata", "uid"));
        free(p->owner);
        p->owner = mu_xstrdup_or_null(controller_uid(md));
        p->killed = false;
        p->undone = false;
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
                              ann, MU_JC_ANN_JOB_VERSION)), 0);
    p->phase = mu_pod_phase_parse(mu_json_str_at(obj, "status", "phase"));
    if (!mu_rfc3339_parse(json_string_value(json_object_get(
                              md, "creationTimestamp")), &p->created))
        p->created = 0;
    p->terminating = p->killed || json_object_get(md, "deletionTimestamp");
    p->bound = mu_json_str_at(obj, "spec", "nodeName") != NULL;
    if (!j->def || !ours(j, p) || p->terminating ||
        p->version != j->st.version)
        return;
    if (!p->task_failed && (p->phase == MU_POD_PENDING ||
                            p->phase == MU_POD_RUNNING) &&
        restarted_out(j, p->task, obj)) {
        p->task_failed = true;
        mu_jc_push_event(j, MU_JEV_TASK_FAILED, p->task, p->name, -1);
    }
    if (p->phase == old)
        return;
    if (p->phase == MU_POD_SUCCEEDED && mu_jc_task_of(j, p->task) >= 0)
        mu_map_put(&j->done, p->name,
                   (void *)((intptr_t)mu_jc_task_of(j, p->task) + 1));
    if (p->phase == MU_POD_FAILED)
        mu_jc_push_event(j, MU_JEV_POD_FAILED, p->task, p->name,
                         exit_code_of(obj));
    else if (p->phase == MU_POD_SUCCEEDED && task_all_succeeded(j, p->task))
        mu_jc_push_event(j, MU_JEV_TASK_COMPLETED, p->task, NULL, -1);
}
