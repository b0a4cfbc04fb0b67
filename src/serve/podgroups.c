/*
 * The PodGroup controller (volcano-api.md §3.6): pods of a served
 * schedulerName without a group get a PodGroup of their own, one per
 * controlling owner (so a Deployment's ReplicaSet shares one), and the
 * default queue is made when it is missing.
 */
#include "api/implicit.h"
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

/* The annotations of a pod's controlling owner when it is an apps/v1
 * workload (the Deployment's annotations reach its ReplicaSet), else NULL. */
static json_t *owner_annotations(struct mu_serve *sv, const struct mu_pod *p)
{
    const char *plural = mu_implicit_owner_plural(p);
    json_t *obj = NULL, *ann;
    struct mu_err err;
    char *path;

    if (!plural)
        return NULL;
    path = mu_xasprintf("/apis/apps/v1/namespaces/%s/%s/%s", p->meta.ns,
                        plural, p->meta.owner_name);
    if (mu_kube_get(sv->kube, path, NULL, &obj, &err) < 0)
        mu_serve_log(sv, "owner of pod %s/%s: %s", p->meta.ns, p->meta.name,
                     err.msg);
    free(path);
    ann = json_incref(json_object_get(json_object_get(obj, "metadata"),
                                      "annotations"));
    json_decref(obj);
    return ann;
}

static json_t *bare_group(struct mu_serve *sv, const struct mu_pod *p)
{
    json_t *oann = owner_annotations(sv, p), *pg;
    struct mu_err warn;

    pg = mu_implicit_podgroup(p, oann, &sv->cluster.rn, &warn);
    if (warn.msg[0])
        mu_serve_log(sv, "%s", warn.msg);
    json_decref(oann);
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
        name = mu_implicit_group_name(p);
        mkey = mu_xasprintf("pg:%s/%s", p->meta.ns, name);
        if (!mu_map_get(&sv->jobs_made, mkey) &&
            !mu_cluster_job(c, p->meta.ns, name)) {
            pg = bare_group(sv, p);
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
    q = mu_default_queue();
    if (create(sv, "/apis/scheduling.volcano.sh/v1beta1/queues", q) == 0)
        mu_serve_log(sv, "created queue default");
    json_decref(q);
}

