/*
 * The vcjob controller's first duty: a new batch.volcano.sh Job becomes its
 * PodGroup and its pods, gated, named as Volcano names them (api/vcjob.h).
 * An invalid Job is reported on its status and left alone.
 */
#include "serve/serve_int.h"

#include "api/vcjob.h"

static void job_failed(struct mu_serve *sv, const json_t *job,
                       const char *ns, const char *name, const char *msg)
{
    char *path = mu_xasprintf(
        "/apis/batch.volcano.sh/v1alpha1/namespaces/%s/jobs/%s", ns, name);
    char ts[32];
    json_t *patch;
    struct mu_err err;

    (void)job;
    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    patch = json_pack("{s:{s:{s:s,s:s,s:s,s:s}}}", "status", "state", "phase",
                      "Failed", "reason", "InvalidJob", "message", msg,
                      "lastTransitionTime", ts);
    mu_serve_log(sv, "vcjob %s/%s refused: %s", ns, name, msg);
    if (mu_kube_status_patch(sv->kube, path, patch, NULL, &err) < 0)
        mu_serve_log(sv, "status of vcjob %s/%s: %s", ns, name, err.msg);
    json_decref(patch);
    free(path);
}

static int create(struct mu_serve *sv, const char *path, const json_t *obj)
{
    struct mu_err err;
    int r = mu_kube_create(sv->kube, path, obj, NULL, &err);

    if (r == -EEXIST)
        return 0;
    if (r < 0)
        mu_serve_log(sv, "create in %s: %s", path, err.msg);
    return r;
}

void mu_serve_jobs(struct mu_serve *sv, json_t *job)
{
    const json_t *md = json_object_get(job, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    json_t *def = NULL, *pg = NULL, *tasks;
    struct mu_err err;
    char *key, *path;
    size_t ti;
    json_t *task;
    int version, retry;

    if (!ns || !name)
        return;
    key = mu_xasprintf("%s/%s", ns, name);
    if (mu_map_get(&sv->jobs_made, key) ||
        json_object_get(json_object_get(job, "status"), "state")) {
        free(key);
        return;
    }
    if (mu_vcjob_default(job, &def, &err) < 0 ||
        mu_vcjob_podgroup(def, &pg, &err) < 0) {
        job_failed(sv, job, ns, name, err.msg);
        json_decref(mu_map_put(&sv->jobs_made, key, json_object()));
        goto out;
    }
    path = mu_xasprintf(
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups", ns);
    if (create(sv, path, pg) < 0) {
        free(path);
        goto out;
    }
    free(path);
    version = (int)json_integer_value(json_object_get(
        json_object_get(job, "status"), "version"));
    retry = (int)json_integer_value(json_object_get(
        json_object_get(job, "status"), "retryCount"));
    path = mu_xasprintf("/api/v1/namespaces/%s/pods", ns);
    tasks = json_object_get(json_object_get(def, "spec"), "tasks");
    json_array_foreach(tasks, ti, task) {
        json_int_t reps = json_integer_value(json_object_get(task, "replicas"));

        for (json_int_t r = 0; r < reps; r++) {
            json_t *pod = NULL;

            if (mu_vcjob_pod(def, ti, (int)r, version, retry, 1, &pod,
                             &err) < 0) {
                mu_serve_log(sv, "vcjob %s: %s", key, err.msg);
                continue;
            }
            create(sv, path, pod);
            json_decref(pod);
        }
    }
    free(path);
    mu_serve_log(sv, "vcjob %s: podgroup and pods created", key);
    json_decref(mu_map_put(&sv->jobs_made, key, json_incref(def)));
out:
    free(key);
    json_decref(def);
    json_decref(pg);
}

/*
 * Volcano's podgroup controller (volcano-api.md §3.6): a pod of a served
 * schedulerName without a group gets PodGroup podgroup-<owner uid> (or
 * podgroup-<pod uid>), minMember 1 (or the owner's
 * scheduling.volcano.sh/group-min-member, not read here), minResources =
 * the pod's request, and the pod is annotated with the group.
 */
void mu_serve_group_bare_pods(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->ntasks; i++) {
        const struct mu_task *t = c->tasks[i];
        const struct mu_pod *p = &t->pod;
        const char *q = mu_kvs_get(&p->meta.annotations, MU_ANN_QUEUE_NAME);
        char *name, *path, *mkey;
        json_t *pg, *minres, *patch;
        struct mu_err err;

        if (p->group || p->node_name || !p->meta.uid ||
            strcmp(p->scheduler_name, "volcano") || p->phase != MU_POD_PENDING)
            continue;
        name = mu_xasprintf("podgroup-%s",
                            p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid);
        mkey = mu_xasprintf("pg:%s/%s", p->meta.ns, name);
        if (mu_map_get(&sv->jobs_made, mkey) ||
            mu_cluster_job(c, p->meta.ns, name))
            goto annotate;
        minres = json_object();
        for (int d = 0; d < c->rn.n; d++) {
            char buf[64];

            if (p->req.v[d] > 0)
                json_object_set_new(minres, c->rn.name[d],
                                    json_string(mu_quantity_format(
                                        c->rn.name[d], p->req.v[d], buf,
                                        sizeof(buf))));
        }
        pg = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i,s:s,s:o},s:{s:s}}",
                       "apiVersion", "scheduling.volcano.sh/v1beta1", "kind",
                       "PodGroup", "metadata", "name", name, "namespace",
                       p->meta.ns, "spec", "minMember", 1, "queue",
                       q ? q : "default", "minResources", minres, "status",
                       "phase", "Pending");
        if (p->priority_class)
            json_object_set_new(json_object_get(pg, "spec"),
                                "priorityClassName",
                                json_string(p->priority_class));
        if (p->meta.owner_uid || p->meta.uid) {
            json_t *owner = json_pack(
                "[{s:s,s:s,s:s,s:s}]", "apiVersion",
                p->meta.owner_kind ? "apps/v1" : "v1", "kind",
                p->meta.owner_kind ? p->meta.owner_kind : "Pod", "name",
                p->meta.owner_name ? p->meta.owner_name : p->meta.name, "uid",
                p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid);

            json_object_set_new(json_object_get(pg, "metadata"),
                                "ownerReferences", owner);
        }
        path = mu_xasprintf(
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups",
            p->meta.ns);
        if (create(sv, path, pg) == 0)
            json_decref(mu_map_put(&sv->jobs_made, mkey, json_object()));
        json_decref(pg);
        free(path);
    annotate:
        path = mu_xasprintf("/api/v1/namespaces/%s/pods/%s", p->meta.ns,
                            p->meta.name);
        patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                          MU_ANN_GROUP, name);
        if (mu_kube_merge_patch(sv->kube, path, patch, NULL, &err) < 0)
            mu_serve_log(sv, "group annotation on pod %s: %s", t->key,
                         err.msg);
        json_decref(patch);
        free(path);
        free(mkey);
        free(name);
    }
}

/* Volcano's scheduler makes the default queue when it is missing. */
void mu_serve_default_queue(struct mu_serve *sv)
{
    json_t *q;

    if (mu_cluster_queue(&sv->cluster, "default"))
        return;
    q = json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:b}}", "apiVersion",
                  "scheduling.volcano.sh/v1beta1", "kind", "Queue", "metadata",
                  "name", "default", "spec", "weight", 1, "reclaimable", 1);
    if (create(sv, "/apis/scheduling.volcano.sh/v1beta1/queues", q) == 0)
        mu_serve_log(sv, "created queue default");
    json_decref(q);
}

/* A deleted vcjob forgets its expansion. */
void mu_serve_job_deleted(struct mu_serve *sv, const json_t *job)
{
    const json_t *md = json_object_get(job, "metadata");
    char *key = mu_xasprintf(
        "%s/%s", json_string_value(json_object_get(md, "namespace")),
        json_string_value(json_object_get(md, "name")));

    json_decref(mu_map_del(&sv->jobs_made, key));
    free(key);
}

/* The job controller makes a deleted pod of a live vcjob again, gated (an
 * eviction, or a release that did not complete). */
void mu_serve_pod_deleted(struct mu_serve *sv, const json_t *pod)
{
    const json_t *md = json_object_get(pod, "metadata");
    const json_t *ann = json_object_get(md, "annotations");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *task = json_string_value(json_object_get(ann, MU_ANN_TASK_SPEC));
    const char *idx = json_string_value(json_object_get(ann, MU_ANN_TASK_INDEX));
    const char *job = json_string_value(json_object_get(ann, "volcano.sh/job-name"));
    json_t *def, *tasks, *t, *np = NULL;
    struct mu_err err;
    char *key, *path, *end;
    size_t ti;
    long index;

    if (!ns || !task || !idx || !job)
        return;
    key = mu_xasprintf("%s/%s", ns, job);
    def = mu_map_get(&sv->jobs_made, key);
    free(key);
    index = strtol(idx, &end, 10);
    if (!def || !json_object_size(def) || *end || index < 0)
        return;
    tasks = json_object_get(json_object_get(def, "spec"), "tasks");
    json_array_foreach(tasks, ti, t) {
        if (mu_strcmp0(json_string_value(json_object_get(t, "name")), task))
            continue;
        if (mu_vcjob_pod(def, ti, (int)index, 0, 0, 1, &np, &err) < 0) {
            mu_serve_log(sv, "recreate pod of %s/%s: %s", ns, job, err.msg);
            return;
        }
        path = mu_xasprintf("/api/v1/namespaces/%s/pods", ns);
        if (create(sv, path, np) == 0)
            mu_serve_log(sv, "vcjob %s/%s: pod %s-%s-%ld made again", ns, job,
                         job, task, index);
        free(path);
        json_decref(np);
        return;
    }
}

void mu_serve_job_command(struct mu_serve *sv, const char *ns,
                          const char *name, const char *action)
{
    mu_serve_log(sv, "vcjob %s/%s: command %s not handled yet", ns, name,
                 action);
}
