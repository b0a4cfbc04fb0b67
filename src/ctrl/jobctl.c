/* The vcjob controller's entry points and a Job's sync (jobctl.h). */
#include "ctrl/jobctl.h"

#include "api/json.h"
#include "api/vcjob.h"
#include "ctrl/jobctl_int.h"

struct mu_jobctl *mu_jobctl_new(const struct mu_ctl *ctl)
{
    struct mu_jobctl *jc = mu_xcalloc(1, sizeof(*jc));

    jc->ctl = *ctl;
    mu_map_init(&jc->jobs);
    return jc;
}

void mu_jobctl_free(struct mu_jobctl *jc)
{
    size_t it = 0;
    void *j;

    if (!jc)
        return;
    while (mu_map_next(&jc->jobs, &it, NULL, &j))
        mu_jc_job_free(j);
    mu_map_release(&jc->jobs);
    free(jc);
}

static void drop_job(struct mu_jobctl *jc, struct vjob *j)
{
    mu_jc_job_free(mu_map_del(&jc->jobs, j->key));
}

/* Reads the state machine's fields back from a Job's status (a restart of
 * muster, or the first sight of a Job). */
static void load_status(struct vjob *j, const json_t *obj)
{
    const json_t *st = json_object_get(obj, "status");
    const json_t *conds = json_object_get(st, "conditions");

    mu_jphase_parse(mu_json_str_at(st, "state", "phase"), &j->st.phase);
    j->st.version = (int)json_integer_value(json_object_get(st, "version"));
    j->st.retry = (int)json_integer_value(json_object_get(st, "retryCount"));
    free(j->ltt);
    j->ltt = mu_xstrdup_or_null(mu_json_str_at(st, "state", "lastTransitionTime"));
    free(j->reason);
    j->reason = mu_xstrdup_or_null(mu_json_str_at(st, "state", "reason"));
    json_decref(j->conds);
    j->conds = json_is_array(conds) ? json_deep_copy(conds) : json_array();
    json_decref(j->written);
    j->written = json_is_object(st) ? json_deep_copy(st) : NULL;
}

void mu_jobctl_job(struct mu_jobctl *jc, enum mu_watch_type type,
                   const json_t *obj)
{
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
    j = mu_jc_job_get(jc, ns, name);
    if (type == MU_WATCH_DELETED) {
        /* its pods and PodGroup go with it (ownerReferences) */
        drop_job(jc, j);
        return;
    }
    if (j->uid && mu_strcmp0(j->uid, uid)) {
        /* deleted and made again under the same name */
        drop_job(jc, j);
        j = mu_jc_job_get(jc, ns, name);
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
            mu_ctl_log(&jc->ctl, "vcjob %s: update refused, keeping the "
                       "last valid spec: %s", j->key, err.msg);
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

void mu_jobctl_pod(struct mu_jobctl *jc, enum mu_watch_type type,
                   const json_t *obj)
{
    mu_jc_pod_event(jc, type, obj);
}

void mu_jobctl_pod_undone(struct mu_jobctl *jc, const char *ns,
                          const char *name, const char *uid, bool on)
{
    mu_jc_pod_undone(jc, ns, name, uid, on);
}

static void sync_job(struct mu_jobctl *jc, struct vjob *j)
{
    const struct mu_job *cj;
    char *pg;

    j->dirty = false;
    mu_jc_purge(j);
    if (!j->obj)
        return;
    /* a Job being deleted is left to the garbage collector (Volcano) */
    if (json_object_get(json_object_get(j->obj, "metadata"),
                        "deletionTimestamp") ||
        j->invalid || mu_jc_expire(jc, j)) {
        mu_jc_clear_events(j);
        j->ncmds = 0;
        if (j->invalid)
            mu_jc_refuse(jc, j);
        return;
    }
    if (!j->ltt)
        mu_jc_transition(jc, j, j->st.phase, NULL); /* its first condition */
    pg = mu_jc_group_name(j);
    cj = mu_cluster_job(jc->ctl.cluster, j->ns, pg);
    free(pg);
    if (cj && cj->phase == MU_PG_UNKNOWN &&
        j->unknown_version != j->st.version) {
        j->unknown_version = j->st.version;
        mu_jc_push_event(j, MU_JEV_UNKNOWN, NULL, NULL, -1);
    }
    for (size_t i = 0; i < j->ncmds; i++)
        mu_jc_act(jc, j, j->cmds[i], -1, NULL);
    j->ncmds = 0;
    for (size_t i = 0; i < j->nevs; i++) {
        struct jevent *e = &j->evs[i];
        int task = mu_jc_task_of(j, e->task);
        enum mu_jaction a = MU_JACT_SYNC;

        if (j->st.phase == MU_JOB_PENDING || j->st.phase == MU_JOB_RUNNING)
            a = mu_jobsm_policy(j->def, task, e->ev, e->exit_code, INT64_MAX);
        if (a != MU_JACT_SYNC) {
            mu_ctl_log(&jc->ctl, "vcjob %s: %s%s%s -> %s", j->key,
                       mu_jevent_name(e->ev), e->pod ? " of pod " : "",
                       e->pod ? e->pod : "", mu_jaction_name(a));
            mu_jc_act(jc, j, a, task, e->pod);
        }
    }
    mu_jc_clear_events(j);
    mu_jc_pending_timeouts(jc, j);
    /* settle: Pending -> Running -> Completed can follow in one sync */
    for (int k = 0; k < 4; k++) {
        enum mu_jphase before = j->st.phase;

        mu_jc_act(jc, j, MU_JACT_SYNC, -1, NULL);
        if (j->st.phase == before)
            break;
    }
    mu_jc_write_status(jc, j, mu_jc_status_json(jc, j));
}

/* Whether this sync has something to do for j. */
static bool wanted(const struct vjob *j, bool all)
{
    if (!j->obj && !j->pods.n && !j->ncmds && !all)
        return false;
    /* the tick has nothing to do for a finished Job nothing changed
     * (unless its ttl is counting down) */
    if (!j->dirty && j->obj && mu_jphase_final(j->st.phase) &&
        !json_object_get(json_object_get(j->def, "spec"),
                         "ttlSecondsAfterFinished"))
        return false;
    return all || j->dirty;
}

void mu_jobctl_sync(struct mu_jobctl *jc, bool all)
{
    size_t nkeys, n = 0;
    const char **keys = mu_map_sorted_keys(&jc->jobs, &nkeys);
    struct vjob **due = mu_xcalloc(nkeys + 1, sizeof(*due));

    /* chosen before any is synced (a sync may drop a Job) */
    for (size_t i = 0; i < nkeys; i++) {
        struct vjob *j = mu_map_get(&jc->jobs, keys[i]);

        if (wanted(j, all))
            due[n++] = j;
    }
    free(keys);
    for (size_t i = 0; i < n; i++) {
        struct vjob *j = due[i];

        for (size_t k = 0; !j->obj && k < j->ncmds; k++)
            mu_ctl_log(&jc->ctl, "command %s for vcjob %s: no such job",
                       mu_jaction_name(j->cmds[k]), j->key);
        if (!j->obj)
            j->ncmds = 0;
        if (!j->obj && !j->pods.n) {
            /* pods of a Job that is gone: nothing left to follow */
            drop_job(jc, j);
            continue;
        }
        sync_job(jc, j);
    }
    free(due);
}

void mu_jobctl_list_end(struct mu_jobctl *jc, bool pods,
                        const struct mu_map *listed)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&jc->jobs, &it, NULL, &v)) {
        struct vjob *j = v;
        size_t pit = 0;
        void *pv;

        if (!pods) {
            if (j->obj && !mu_map_get(listed, j->key))
                drop_job(jc, j); /* the entry just returned */
            continue;
        }
        while (mu_map_next(&j->pods, &pit, NULL, &pv)) {
            struct jpod *p = pv;
            char *key = mu_xasprintf("%s/%s", j->ns, p->name);

            if (!mu_map_get(listed, key)) {
                p->gone = true; /* deleted while the watch was down */
                j->dirty = true;
            }
            free(key);
        }
    }
}

void mu_jobctl_command(struct mu_jobctl *jc, const char *ns, const char *name,
                       const char *action)
{
    struct vjob *j;
    enum mu_jaction a;

    if (!mu_jaction_parse(action, &a)) {
        mu_ctl_log(&jc->ctl, "command %s for vcjob %s/%s: unknown action",
                   action, ns, name);
        return;
    }
    /* a Command listed before the Jobs waits for them (mu_jobctl_sync
     * drops it once caches are synced and the Job still is not there) */
    j = mu_jc_job_get(jc, ns, name);
    j->cmds = mu_xrealloc(j->cmds, (j->ncmds + 1) * sizeof(*j->cmds));
    j->cmds[j->ncmds++] = a;
    j->dirty = true;
}
