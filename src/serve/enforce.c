/*
 * Carrying out a cycle: release gangs (ungate and pin muster's pods, wake
 * other operators' pods), evict victims (status is written by status.c).
 */
#include "serve/serve_int.h"

#include "api/vcjob.h"

#define MU_ANN_RESERVED "muster.io/reserved-node"

static char *pod_path(const struct mu_task *t)
{
    return mu_xasprintf("/api/v1/namespaces/%s/pods/%s", t->pod.meta.ns,
                        t->pod.meta.name);
}

/* JSON patch that drops muster's gate and pins the pod to node (KEP-3838
 * allows tightening a gated pod's node affinity). */
json_t *mu_serve_release_patch(const json_t *pod, const char *node)
{
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *gates = json_object_get(spec, "schedulingGates");
    const json_t *aff = json_object_get(spec, "affinity");
    const json_t *na = json_object_get(aff, "nodeAffinity");
    const json_t *req = json_object_get(
        na, "requiredDuringSchedulingIgnoredDuringExecution");
    const json_t *terms = json_object_get(req, "nodeSelectorTerms");
    json_t *ops = json_array(), *keep = json_array(), *field;
    size_t i;
    json_t *g;

    json_array_foreach(gates, i, g) if (mu_strcmp0(json_string_value(
        json_object_get(g, "name")), MU_GATE_NAME))
        json_array_append(keep, g);
    field = json_pack("{s:s,s:s,s:[s]}", "key", "metadata.name", "operator",
                      "In", "values", node);
    if (json_array_size(terms)) {
        json_t *t;

        json_array_foreach(terms, i, t) {
            char *path = mu_xasprintf(
                "/spec/affinity/nodeAffinity/requiredDuringScheduling"
                "IgnoredDuringExecution/nodeSelectorTerms/%zu/matchFields%s",
                i, json_object_get(t, "matchFields") ? "/-" : "");
            json_t *v = json_object_get(t, "matchFields")
                            ? json_deep_copy(field)
                            : json_pack("[O]", field);

            json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "add",
                                                 "path", path, "value", v));
            free(path);
        }
    } else {
        json_t *reqv = json_pack("{s:[{s:[O]}]}", "nodeSelectorTerms",
                                 "matchFields", field);
        const char *path;
        json_t *v;

        if (na) {
            path = "/spec/affinity/nodeAffinity/requiredDuringScheduling"
                   "IgnoredDuringExecution";
            v = reqv;
        } else if (aff) {
            path = "/spec/affinity/nodeAffinity";
            v = json_pack("{s:o}", "requiredDuringSchedulingIgnoredDuring"
                                   "Execution", reqv);
        } else {
            path = "/spec/affinity";
            v = json_pack("{s:{s:o}}", "nodeAffinity",
                          "requiredDuringSchedulingIgnoredDuringExecution",
                          reqv);
        }
        json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "add",
                                             "path", path, "value", v));
    }
    if (json_array_size(keep))
        json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "replace",
                                             "path", "/spec/schedulingGates",
                                             "value", keep));
    else {
        json_decref(keep);
        json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove",
                                             "path", "/spec/schedulingGates"));
    }
    json_decref(field);
    return ops;
}

static int release_pod(struct mu_serve *sv, struct mu_task *t,
                       const char *node, bool *pinned)
{
    char *path = pod_path(t);
    json_t *pod = NULL, *patch;
    struct mu_err err;
    int r;

    *pinned = false;
    if (t->pod.muster_gate) {
        r = mu_kube_get(sv->kube, path, NULL, &pod, &err);
        if (r == 0) {
            patch = mu_serve_release_patch(pod, node);
            r = mu_kube_call(sv->kube, "PATCH", path, NULL, patch,
                             "application/json-patch+json", NULL, &err);
            json_decref(patch);
            *pinned = r == 0;
        }
    } else {
        /* not ours to pin: wake it so kube-scheduler asks /filter again */
        patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                          MU_ANN_RESERVED, node);
        r = mu_kube_merge_patch(sv->kube, path, patch, NULL, &err);
        json_decref(patch);
    }
    if (r < 0)
        mu_serve_log(sv, "release of pod %s to %s failed: %s", t->key, node,
                     err.msg);
    json_decref(pod);
    free(path);
    return r;
}

static void add_resv(struct mu_serve *sv, struct mu_task *t, const char *node,
                     const char *release, int batch, bool pinned)
{
    struct mu_resv *r = mu_xcalloc(1, sizeof(*r));

    r->key = mu_xstrdup(t->key);
    r->uid = mu_xstrdup_or_null(t->pod.meta.uid);
    r->node = mu_xstrdup(node);
    r->release = mu_xstrdup(release);
    r->batch = batch;
    r->pinned = pinned;
    r->since_ns = mu_now_ns();
    r = mu_map_put(&sv->resv, r->key, r);
    if (r) { /* replaced an older one */
        free(r->key);
        free(r->uid);
        free(r->node);
        free(r->release);
        free(r);
    }
}

/* Binds of one cycle, grouped by job: each group is one release batch.
 * The reservations are published before any pod is released, so that the
 * extender already knows a pod when kube-scheduler first asks about it. */
static void release(struct mu_serve *sv, const struct mu_cycle_out *out)
{
    size_t i;

    for (i = 0; i < out->nbinds;) {
        const struct mu_job *j = out->binds[i]->job;
        size_t k = i;
        char *id;

        while (k < out->nbinds && out->binds[k]->job == j)
            k++;
        id = mu_xasprintf("%s#%llu", j ? j->key : out->binds[i]->key,
                          (unsigned long long)++sv->release_seq);
        mu_serve_log(sv, "release %s: %zu pods", id, k - i);
        for (size_t m = i; m < k; m++)
            add_resv(sv, out->binds[m], out->binds[m]->node->spec.meta.name,
                     id, (int)(k - i), out->binds[m]->pod.muster_gate);
        atomic_fetch_add(&sv->releases, 1);
        free(id);
        i = k;
    }
    if (!out->nbinds)
        return;
    mu_serve_publish(sv);
    for (i = 0; i < out->nbinds; i++) {
        struct mu_task *t = out->binds[i];
        struct mu_resv *r = mu_map_get(&sv->resv, t->key);
        bool pinned;

        int rc = release_pod(sv, t, t->node->spec.meta.name, &pinned);

        if (r) {
            r->pinned = pinned;
            if (rc < 0)
                r->since_ns = 0; /* expires at the next cycle */
        }
    }
}

static void evict(struct mu_serve *sv, const struct mu_cycle_out *out)
{
    for (size_t i = 0; i < out->nevicts; i++) {
        const struct mu_eviction *e = &out->evicts[i];
        struct mu_task *v = e->victim;
        char *path = pod_path(v), *msg;
        struct mu_err err;

        msg = mu_xasprintf("Pod %s evicted by muster (%s for %s)", v->key,
                           e->action, e->for_job->key);
        mu_serve_log(sv, "%s", msg);
        if (mu_kube_delete(sv->kube, path, NULL, NULL, &err) < 0 &&
            !strstr(err.msg, "404"))
            mu_serve_log(sv, "evict %s: %s", v->key, err.msg);
        if (v->job)
            mu_serve_post_event(sv, "scheduling.volcano.sh/v1beta1",
                                "PodGroup", v->job->pg.meta.ns,
                                v->job->pg.meta.name, v->job->pg.meta.uid,
                                "Normal", "Evict", msg);
        atomic_fetch_add(&sv->evictions, 1);
        free(msg);
        free(path);
    }
}

void mu_serve_enforce(struct mu_serve *sv, const struct mu_cycle_out *out)
{

    evict(sv, out);
    release(sv, out);
    mu_serve_write_status(sv);
}

/* Drops a batch's reservations; pods pinned to a node they never reached
 * are deleted so their controller makes them again, gated. */
static void fail_release(struct mu_serve *sv, const char *release)
{
    struct mu_map *m = &sv->resv;

    for (size_t i = 0; i < m->cap; i++) {
        struct mu_resv *r = m->slots[i].value;
        struct mu_task *t;

        if (!m->slots[i].key || !r || strcmp(r->release, release))
            continue;
        t = mu_map_get(&sv->cluster.task_by_key, r->key);
        if (t && t->status == MU_TASK_BINDING)
            mu_task_unplace(&sv->cluster, t);
        if (r->pinned && t) {
            char *path = pod_path(t);
            struct mu_err err;

            mu_serve_log(sv, "pod %s was pinned to %s by a release that did "
                             "not complete; deleting it", r->key, r->node);
            if (mu_kube_delete(sv->kube, path, NULL, NULL, &err) < 0)
                mu_serve_log(sv, "delete %s: %s", r->key, err.msg);
            free(path);
        }
        mu_map_del(m, r->key);
        free(r->key);
        free(r->uid);
        free(r->node);
        free(r->release);
        free(r);
    }
}

void mu_serve_bind_report(struct mu_serve *sv, const char *release, bool ok,
                          const char *detail)
{
    mu_serve_log(sv, "bind %s: %s%s%s", release, ok ? "ok" : "failed",
                 detail ? ": " : "", detail ? detail : "");
    if (!ok)
        fail_release(sv, release);
}

/* How long a release may wait for kube-scheduler to reach /bind at all.
 * kube-scheduler works through its queue one pod at a time (tens to
 * hundreds of pods a second), so a big burst of releases legitimately waits
 * minutes; once a member does arrive, the barrier's own timeout applies. */
#define MU_RELEASE_EXPIRE_MS (5 * 60 * 1000LL)

void mu_serve_expire(struct mu_serve *sv)
{
    int64_t wait = MU_RELEASE_EXPIRE_MS > sv->o->bind_timeout_ms + 10000
                       ? MU_RELEASE_EXPIRE_MS
                       : sv->o->bind_timeout_ms + 10000;
    int64_t limit = mu_now_ns() - wait * 1000000;
    struct mu_map *m = &sv->resv;
    char *expired = NULL;

    for (size_t i = 0; i < m->cap && !expired; i++) {
        struct mu_resv *r = m->slots[i].value;

        if (m->slots[i].key && r && r->since_ns < limit)
            expired = mu_xstrdup(r->release);
    }
    if (!expired)
        return;
    mu_serve_log(sv, "release %s did not reach /bind in time", expired);
    fail_release(sv, expired);
    free(expired);
}

/*
 * kube-scheduler may ask /filter about a new pod before muster's view has
 * it, and then sets the pod aside with "muster has not seen this pod yet".
 * Once the view explains why the pod waits, the pod is nudged once with an
 * annotation, so the next attempt records the gang's real reason in the
 * pod's FailedScheduling event. Only pods kube-scheduler can see (not held
 * by muster's gate).
 */
void mu_serve_announce(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->ntasks; i++) {
        struct mu_task *t = c->tasks[i];
        char *path;
        json_t *patch;
        struct mu_err err;

        if (t->status != MU_TASK_PENDING || t->pod.muster_gate ||
            t->pod.ngates || !t->job || !t->pod.meta.uid ||
            strcmp(t->pod.scheduler_name, "volcano") ||
            mu_map_get(&sv->announced, t->pod.meta.uid))
            continue;
        mu_map_put(&sv->announced, t->pod.meta.uid, (void *)1);
        path = pod_path(t);
        patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                          "muster.io/waiting", t->job->key);
        if (mu_kube_merge_patch(sv->kube, path, patch, NULL, &err) < 0)
            mu_serve_log(sv, "annotate %s: %s", t->key, err.msg);
        json_decref(patch);
        free(path);
    }
}

/* How long a gang may run below its minMember before muster takes the
 * running part down (a kill in the middle of a bind batch, a node lost
 * under a gang). */
#define MU_PARTIAL_GRACE_NS (30LL * 1000000000)

/*
 * No partial gang holds GPUs: a PodGroup that has run below minMember
 * (phase Unknown: some members running, the rest unschedulable) for
 * MU_PARTIAL_GRACE_NS has its running members deleted; their vcjob makes
 * them again, gated, and the whole gang is planned afresh.
 */
void mu_serve_partial(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;
    int64_t now = mu_now_ns();

    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];
        char *key = mu_xasprintf("partial/%s", j->key);
        const char *since = mu_map_get(&sv->written, key);

        if (j->phase != MU_PG_UNKNOWN) {
            if (since)
                free(mu_map_del(&sv->written, key));
            free(key);
            continue;
        }
        if (!since) {
            free(mu_map_put(&sv->written, key,
                            mu_xasprintf("%lld", (long long)now)));
        } else if (now - strtoll(since, NULL, 10) > MU_PARTIAL_GRACE_NS) {
            mu_serve_log(sv, "gang %s ran below minMember %d for too long; "
                             "taking its running pods down", j->key,
                         j->pg.min_member);
            for (size_t k = 0; k < j->ntasks; k++) {
                struct mu_task *t = j->tasks[k];
                char *path;
                struct mu_err err;

                if (t->status != MU_TASK_RUNNING && t->status != MU_TASK_BOUND)
                    continue;
                path = pod_path(t);
                if (mu_kube_delete(sv->kube, path, NULL, NULL, &err) < 0)
                    mu_serve_log(sv, "delete %s: %s", t->key, err.msg);
                free(path);
            }
            free(mu_map_del(&sv->written, key));
        }
        free(key);
    }
}
