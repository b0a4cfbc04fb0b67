/*
 * The PodGroup controller (volcano-api.md §3.6): pods of a served
 * schedulerName without a group get a PodGroup of their own, one per
 * controlling owner (so a Deployment's ReplicaSet shares one), and the
 * default queue is made when it is missing.
 */
#include "serve/serve_int.h"

int mu_serve_create(struct mu_serve *sv, const char *path, const json_t *obj,
                    struct mu_err *err)
{
    int r = mu_kube_create(sv->kube, path, obj, NULL, err);

    return r == -EEXIST ? 0 : r;
}

static int create(struct mu_serve *sv, const char *path, const json_t *obj)
{
    struct mu_err err;
    int r = mu_serve_create(sv, path, obj, &err);

    if (r < 0)
        mu_serve_log(sv, "create in %s: %s", path, err.msg);
    return r;
}

#define ANN_MIN_MEMBER "scheduling.volcano.sh/group-min-member"

/* The annotations of a pod's controlling owner when it is an apps/v1
 * workload (the Deployment's annotations reach its ReplicaSet), else NULL. */
static json_t *owner_annotations(struct mu_serve *sv, const struct mu_pod *p)
{
    static const struct {
        const char *kind, *plural;
    } kinds[] = {{"ReplicaSet", "replicasets"},
                 {"StatefulSet", "statefulsets"},
                 {"Deployment", "deployments"}};
    json_t *obj = NULL, *ann;
    struct mu_err err;
    char *path = NULL;

    for (size_t i = 0; i < MU_ARRAY_LEN(kinds); i++)
        if (p->meta.owner_kind && p->meta.owner_name &&
            !strcmp(p->meta.owner_kind, kinds[i].kind))
            path = mu_xasprintf("/apis/apps/v1/namespaces/%s/%s/%s",
                                p->meta.ns, kinds[i].plural,
                                p->meta.owner_name);
    if (!path)
        return NULL;
    if (mu_kube_get(sv->kube, path, NULL, &obj, &err) < 0)
        mu_serve_log(sv, "owner of pod %s/%s: %s", p->meta.ns, p->meta.name,
                     err.msg);
    free(path);
    ann = json_incref(json_object_get(json_object_get(obj, "metadata"),
                                      "annotations"));
    json_decref(obj);
    return ann;
}

/*
 * Volcano's podgroup controller (volcano-api.md §3.6): PodGroup
 * podgroup-<owner uid> (or podgroup-<pod uid>) with minMember 1, or the
 * owner's scheduling.volcano.sh/group-min-member; minResources = the pod's
 * request times minMember; the pod's queue annotation and priority class;
 * the owner's volcano.sh/ annotations; an ownerReference to the owner.
 */
static json_t *bare_group(struct mu_serve *sv, const struct mu_pod *p,
                          const char *name)
{
    const struct mu_cluster *c = &sv->cluster;
    const char *q = mu_kvs_get(&p->meta.annotations, MU_ANN_QUEUE_NAME);
    json_t *oann = owner_annotations(sv, p), *minres = json_object(), *pg;
    json_t *ann = json_object(), *v;
    const char *k;
    long min = 1;

    json_object_foreach(oann, k, v) {
        if (!strcmp(k, ANN_MIN_MEMBER) && json_is_string(v)) {
            char *end;
            long m = strtol(json_string_value(v), &end, 10);

            if (*end || m < 1 || m > 1000000)
                mu_serve_log(sv, "pod %s/%s: owner annotation %s=\"%s\" is "
                                 "not a positive integer; using 1",
                             p->meta.ns, p->meta.name, k,
                             json_string_value(v));
            else
                min = m;
        } else if (!strncmp(k, "volcano.sh/", 11)) {
            json_object_set(ann, k, v);
        }
    }
    json_decref(oann);
    for (int d = 0; d < c->rn.n; d++) {
        char buf[64];

        if (p->req.v[d] > 0)
            json_object_set_new(
                minres, c->rn.name[d],
                json_string(mu_quantity_format(c->rn.name[d],
                                               p->req.v[d] * min, buf,
                                               sizeof(buf))));
    }
    pg = json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:{s:I,s:s,s:o},s:{s:s}}",
                   "apiVersion", "scheduling.volcano.sh/v1beta1", "kind",
                   "PodGroup", "metadata", "name", name, "namespace",
                   p->meta.ns, "annotations", ann, "spec", "minMember",
                   (json_int_t)min, "queue", q ? q : "default", "minResources",
                   minres, "status", "phase", "Pending");
    if (p->priority_class)
        json_object_set_new(json_object_get(pg, "spec"), "priorityClassName",
                            json_string(p->priority_class));
    json_object_set_new(
        json_object_get(pg, "metadata"), "ownerReferences",
        json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion",
                  p->meta.owner_kind ? "apps/v1" : "v1", "kind",
                  p->meta.owner_kind ? p->meta.owner_kind : "Pod", "name",
                  p->meta.owner_name ? p->meta.owner_name : p->meta.name,
                  "uid", p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid));
    return pg;
}

/* Pods of a served schedulerName without a group get their PodGroup and
 * are annotated with it. */
void mu_serve_group_bare_pods(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->ntasks; i++) {
        const struct mu_task *t = c->tasks[i];
        const struct mu_pod *p = &t->pod;
        char *name, *path, *mkey;
        json_t *pg, *patch;
        struct mu_err err;

        if (p->group || p->node_name || !p->meta.uid ||
            strcmp(p->scheduler_name, "volcano") || p->phase != MU_POD_PENDING)
            continue;
        name = mu_xasprintf("podgroup-%s",
                            p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid);
        mkey = mu_xasprintf("pg:%s/%s", p->meta.ns, name);
        if (!mu_map_get(&sv->jobs_made, mkey) &&
            !mu_cluster_job(c, p->meta.ns, name)) {
            pg = bare_group(sv, p, name);
            path = mu_xasprintf(
                "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups",
                p->meta.ns);
            if (create(sv, path, pg) == 0)
                json_decref(mu_map_put(&sv->jobs_made, mkey, json_object()));
            json_decref(pg);
            free(path);
        }
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

