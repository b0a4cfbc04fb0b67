/* Watch events into the cluster. */
#include "serve/serve_int.h"

static char *key_of(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));

    if (!name)
        return NULL;
    return mu_xasprintf("%s/%s", ns ? ns : "", name);
}

static void bad(struct mu_serve *sv, const char *kind, const json_t *obj,
                const struct mu_err *err)
{
    char *k = key_of(obj);

    mu_serve_log(sv, "ignoring %s %s: %s", kind, k ? k : "(no name)",
                 err->msg);
    free(k);
}

static void drop_resv(struct mu_serve *sv, const char *key)
{
    struct mu_resv *r = mu_map_del(&sv->resv, key);

    if (!r)
        return;
    free(r->key);
    free(r->uid);
    free(r->node);
    free(r->release);
    free(r);
}

/* A pod muster released keeps its node in the plan until the API shows it
 * bound, failed, or gone. */
static void keep_resv(struct mu_serve *sv, struct mu_task *t)
{
    struct mu_resv *r = mu_map_get(&sv->resv, t->key);
    struct mu_cnode *n;

    if (!r)
        return;
    if (t->pod.node_name || t->pod.meta.deleting ||
        mu_strcmp0(t->pod.meta.uid, r->uid)) {
        drop_resv(sv, t->key);
        return;
    }
    n = mu_cluster_node(&sv->cluster, r->node);
    if (n && t->status == MU_TASK_PENDING)
        mu_task_place(&sv->cluster, t, n, MU_TASK_BINDING);
}

static bool apply_pod(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_cluster *c = &sv->cluster;
    struct mu_pod p;
    struct mu_err err;
    struct mu_task *t;

    mu_jobctl_pod(sv, ev->type, ev->obj);
    if (ev->type == MU_WATCH_DELETED) {
        char *k = key_of(ev->obj);

        t = k ? mu_map_get(&c->task_by_key, k) : NULL;
        if (t)
            mu_cluster_remove_task(c, t);
        if (k)
            drop_resv(sv, k);
        free(k);
        {
            const char *uid = json_string_value(json_object_get(
                json_object_get(ev->obj, "metadata"), "uid"));

            if (uid)
                mu_map_del(&sv->announced, uid);
        }
        return t != NULL;
    }
    if (mu_pod_decode(ev->obj, &c->rn, &p, &err) < 0) {
        bad(sv, "Pod", ev->obj, &err);
        return false;
    }
    t = mu_cluster_update_task(c, &p, &err);
    if (!t) {
        mu_pod_release(&p);
        bad(sv, "Pod", ev->obj, &err);
        return false;
    }
    keep_resv(sv, t);
    return true;
}

static bool apply_node(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_cluster *c = &sv->cluster;
    struct mu_node n;
    struct mu_err err;
    uint64_t gen = c->node_gen;

    if (ev->type == MU_WATCH_DELETED) {
        const char *name = json_string_value(json_object_get(
            json_object_get(ev->obj, "metadata"), "name"));
        struct mu_cnode *cn = name ? mu_cluster_node(c, name) : NULL;

        if (cn)
            mu_cluster_remove_node(c, cn);
        return cn != NULL;
    }
    if (mu_node_decode(ev->obj, &c->rn, &n, &err) < 0) {
        bad(sv, "Node", ev->obj, &err);
        return false;
    }
    mu_cluster_update_node(c, &n);
    mu_node_release(&n);
    return c->node_gen != gen;
}

static bool apply_podgroup(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_cluster *c = &sv->cluster;
    struct mu_podgroup pg;
    struct mu_err err;

    if (ev->type == MU_WATCH_DELETED) {
        const json_t *md = json_object_get(ev->obj, "metadata");
        struct mu_job *j = mu_cluster_job(
            c, json_string_value(json_object_get(md, "namespace")),
            json_string_value(json_object_get(md, "name")));

        if (j)
            mu_cluster_remove_job(c, j);
        return j != NULL;
    }
    if (mu_podgroup_decode(ev->obj, &c->rn, &pg, &err) < 0) {
        bad(sv, "PodGroup", ev->obj, &err);
        return false;
    }
    if (pg.phase == MU_PG_NONE)
        pg.phase = MU_PG_PENDING;
    mu_cluster_update_job(c, &pg);
    mu_podgroup_release(&pg);
    return true;
}

static bool apply_queue(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_cluster *c = &sv->cluster;
    struct mu_queue_spec q;
    struct mu_err err;

    if (ev->type == MU_WATCH_DELETED) {
        const char *name = json_string_value(json_object_get(
            json_object_get(ev->obj, "metadata"), "name"));
        struct mu_cqueue *cq = name ? mu_cluster_queue(c, name) : NULL;

        if (cq)
            mu_cluster_remove_queue(c, cq);
        return cq != NULL;
    }
    if (mu_queue_decode(ev->obj, &c->rn, &q, &err) < 0) {
        bad(sv, "Queue", ev->obj, &err);
        return false;
    }
    mu_cluster_update_queue(c, &q);
    mu_queue_spec_release(&q);
    return true;
}

static bool apply_pc(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_priorityclass pc;
    struct mu_err err;

    if (ev->type == MU_WATCH_DELETED) {
        const char *name = json_string_value(json_object_get(
            json_object_get(ev->obj, "metadata"), "name"));

        if (name)
            mu_cluster_remove_priorityclass(&sv->cluster, name);
        return true;
    }
    if (mu_priorityclass_decode(ev->obj, &pc, &err) < 0) {
        bad(sv, "PriorityClass", ev->obj, &err);
        return false;
    }
    mu_cluster_add_priorityclass(&sv->cluster, &pc);
    return true;
}

bool mu_serve_apply(struct mu_serve *sv, struct mu_ev *ev)
{
    enum mu_src s = ev->src;
    bool changed = false;

    if (ev->type == MU_WATCH_LIST_BEGIN) {
        mu_map_release(&sv->listed[s]);
        mu_map_init(&sv->listed[s]);
        sv->listing[s] = true;
        return false;
    }
    if (ev->type == MU_WATCH_LIST_END) {
        mu_serve_list_end(sv, s);
        return true;
    }
    if (ev->type == MU_WATCH_LIST_ITEM && sv->listing[s]) {
        char *k = key_of(ev->obj);

        if (k)
            mu_map_put(&sv->listed[s], k, (void *)1);
        free(k);
    }
    switch (s) {
    case MU_SRC_NODE: changed = apply_node(sv, ev); break;
    case MU_SRC_POD: changed = apply_pod(sv, ev); break;
    case MU_SRC_PODGROUP: changed = apply_podgroup(sv, ev); break;
    case MU_SRC_QUEUE: changed = apply_queue(sv, ev); break;
    case MU_SRC_PRIORITYCLASS: changed = apply_pc(sv, ev); break;
    case MU_SRC_JOB:
        mu_jobctl_job(sv, ev->type, ev->obj);
        break;
    default: break;
    }
    return changed;
}

static bool listed(struct mu_serve *sv, enum mu_src s, const char *ns,
                   const char *name)
{
    char *k = mu_xasprintf("%s/%s", ns ? ns : "", name);
    bool ok = mu_map_get(&sv->listed[s], k) != NULL;

    free(k);
    return ok;
}

void mu_serve_list_end(struct mu_serve *sv, enum mu_src s)
{
    struct mu_cluster *c = &sv->cluster;

    sv->synced[s] = true;
    if (!sv->listing[s])
        return;
    sv->listing[s] = false;
    switch (s) {
    case MU_SRC_NODE:
        for (size_t i = c->nnodes; i-- > 0;)
            if (!listed(sv, s, NULL, c->nodes[i]->spec.meta.name))
                mu_cluster_remove_node(c, c->nodes[i]);
        break;
    case MU_SRC_JOB:
        mu_jobctl_list_end(sv, false, &sv->listed[s]);
        break;
    case MU_SRC_POD:
        mu_jobctl_list_end(sv, true, &sv->listed[s]);
        for (size_t i = c->ntasks; i-- > 0;)
            if (!listed(sv, s, c->tasks[i]->pod.meta.ns,
                        c->tasks[i]->pod.meta.name)) {
                drop_resv(sv, c->tasks[i]->key);
                mu_cluster_remove_task(c, c->tasks[i]);
            }
        break;
    case MU_SRC_PODGROUP:
        for (size_t i = c->njobs; i-- > 0;)
            if (!listed(sv, s, c->jobs[i]->pg.meta.ns,
                        c->jobs[i]->pg.meta.name))
                mu_cluster_remove_job(c, c->jobs[i]);
        break;
    case MU_SRC_QUEUE:
        for (size_t i = c->nqueues; i-- > 0;)
            if (!listed(sv, s, NULL, c->queues[i]->spec.meta.name))
                mu_cluster_remove_queue(c, c->queues[i]);
        break;
    default:
        break;
    }
    mu_map_release(&sv->listed[s]);
    mu_map_init(&sv->listed[s]);
}
