/* Watch events into the cluster. */
#include "serve/apply.h"

#include "api/dra.h"
#include "common/clock.h"
#include "ctrl/jobctl.h"
#include "serve/remake.h"
#include "sched/cluster_dra.h"
#include "sched/topology.h"

static char *key_of(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));

    if (!name)
        return NULL;
    return mu_xasprintf("%s/%s", ns ? ns : "", name);
}

/* Logs that obj (of source s) is ignored, once per uid@resourceVersion. */
static void bad(struct mu_apply *a, enum mu_src s, const char *kind,
                const json_t *obj, const struct mu_err *err)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *rv = json_string_value(json_object_get(md, "resourceVersion"));
    char *k = key_of(obj);
    char *ver = mu_xasprintf("%s@%s", uid ? uid : "", rv ? rv : "");
    char *old = k ? mu_map_get(&a->bad[s], k) : NULL;

    if (old && strcmp(old, ver) == 0) {
        free(ver);
        goto out;
    }
    mu_ctl_log(a->ctl, "ignoring %s %s (uid %s, rv %s): %s", kind,
               k ? k : "(no name)", uid ? uid : "?", rv ? rv : "?", err->msg);
    if (k) {
        free(mu_map_put(&a->bad[s], k, ver));
        ver = NULL;
    }
    free(ver);
out:
    free(k);
}

/* obj of source s decoded (or went away): it may be reported again. */
static void good(struct mu_apply *a, enum mu_src s, const json_t *obj)
{
    char *k;

    if (a->bad[s].n == 0)
        return;
    k = key_of(obj);
    if (k)
        free(mu_map_del(&a->bad[s], k));
    free(k);
}

/* Pod key (uid, when known) is gone: the ledger and the remaker forget
 * it. */
static void pod_gone(struct mu_apply *a, const char *key, const char *uid)
{
    mu_enforcer_pod_gone(a->enf, key, uid);
    if (a->remake)
        mu_remaker_pod_gone(a->remake, uid);
}

static bool apply_pod(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_cluster *c = a->cluster;
    struct mu_pod p;
    struct mu_err err;
    struct mu_task *t;

    mu_jobctl_pod(a->jobctl, ev->type, ev->obj);
    if (ev->type == MU_WATCH_DELETED) {
        char *k = key_of(ev->obj);

        t = k ? mu_map_get(&c->task_by_key, k) : NULL;
        if (t)
            mu_cluster_remove_task(c, t);
        if (k)
            pod_gone(a, k,
                     json_string_value(json_object_get(
                         json_object_get(ev->obj, "metadata"), "uid")));
        free(k);
        return t != NULL;
    }
    if (mu_pod_decode(ev->obj, &c->rn, &p, &err) < 0) {
        bad(a, MU_SRC_POD, "Pod", ev->obj, &err);
        return false;
    }
    t = mu_cluster_update_task(c, &p, &err);
    if (!t) {
        mu_pod_release(&p);
        bad(a, MU_SRC_POD, "Pod", ev->obj, &err);
        return false;
    }
    /* cycles run on the monotonic clock (reclaim's minimum run time); a
     * pod on a node without a startTime yet is starting now */
    if (t->pod.started)
        t->started_ms = t->pod.started * 1000 - mu_wall_ms() + mu_now_ms();
    else if (t->pod.node_name)
        t->started_ms = mu_now_ms();
    good(a, MU_SRC_POD, ev->obj);
    mu_enforcer_pod_seen(a->enf, t);
    return true;
}

static bool apply_node(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_cluster *c = a->cluster;
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
        bad(a, MU_SRC_NODE, "Node", ev->obj, &err);
        return false;
    }
    good(a, MU_SRC_NODE, ev->obj);
    mu_cluster_update_node(c, &n);
    mu_node_release(&n);
    return c->node_gen != gen;
}

static bool apply_podgroup(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_cluster *c = a->cluster;
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
        bad(a, MU_SRC_PODGROUP, "PodGroup", ev->obj, &err);
        return false;
    }
    good(a, MU_SRC_PODGROUP, ev->obj);
    if (pg.phase == MU_PG_NONE)
        pg.phase = MU_PG_PENDING;
    mu_cluster_update_job(c, &pg);
    mu_podgroup_release(&pg);
    return true;
}

static bool apply_queue(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_cluster *c = a->cluster;
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
        bad(a, MU_SRC_QUEUE, "Queue", ev->obj, &err);
        return false;
    }
    good(a, MU_SRC_QUEUE, ev->obj);
    mu_cluster_update_queue(c, &q);
    mu_queue_spec_release(&q);
    return true;
}

static bool apply_pc(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_priorityclass pc;
    struct mu_err err;

    if (ev->type == MU_WATCH_DELETED) {
        const char *name = json_string_value(json_object_get(
            json_object_get(ev->obj, "metadata"), "name"));

        if (name)
            mu_cluster_remove_priorityclass(a->cluster, name);
        return true;
    }
    if (mu_priorityclass_decode(ev->obj, &pc, &err) < 0) {
        bad(a, MU_SRC_PRIORITYCLASS, "PriorityClass", ev->obj, &err);
        return false;
    }
    good(a, MU_SRC_PRIORITYCLASS, ev->obj);
    mu_cluster_add_priorityclass(a->cluster, &pc);
    return true;
}

/* A HyperNode into the cluster's network domains (sched/topology.h). */
static bool apply_hypernode(struct mu_apply *a, const struct mu_ev *ev)
{
    struct mu_topo *t = a->cluster->topo;
    struct mu_hypernode h;
    struct mu_err err;

    if (!t)
        return false;
    if (ev->type == MU_WATCH_DELETED) {
        const char *name = json_string_value(json_object_get(
            json_object_get(ev->obj, "metadata"), "name"));

        return name && mu_topo_remove(t, name);
    }
    if (mu_hypernode_decode(ev->obj, &h, &err) < 0) {
        bad(a, MU_SRC_HYPERNODE, "HyperNode", ev->obj, &err);
        return false;
    }
    good(a, MU_SRC_HYPERNODE, ev->obj);
    if (mu_topo_put(t, &h) < 0) {
        mu_err_set(&err, -ENOSPC, "more than %d HyperNodes",
                   MU_TOPO_MAX_HYPERNODES);
        bad(a, MU_SRC_HYPERNODE, "HyperNode", ev->obj, &err);
        return false;
    }
    return true;
}

/* A DRA object (resource.k8s.io/v1) into the device inventory. */
static bool apply_dra(struct mu_apply *a, const struct mu_ev *ev)
{
    static const char *const kinds[] = {
        [MU_SRC_DEVICECLASS] = "DeviceClass",
        [MU_SRC_SLICE] = "ResourceSlice",
        [MU_SRC_CLAIM] = "ResourceClaim",
        [MU_SRC_CLAIMTEMPLATE] = "ResourceClaimTemplate",
    };
    struct mu_cluster *c = a->cluster;
    const json_t *md = json_object_get(ev->obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    union {
        struct mu_devclass dc;
        struct mu_slice sl;
        struct mu_claim cl;
        struct mu_claimtemplate t;
    } u;
    struct mu_err err;
    int r = 0;

    if (ev->type == MU_WATCH_DELETED) {
        if (!name)
            return false;
        switch (ev->src) {
        case MU_SRC_DEVICECLASS: mu_cluster_del_class(c, name); break;
        case MU_SRC_SLICE: mu_cluster_del_slice(c, name); break;
        case MU_SRC_CLAIM: mu_cluster_del_claim(c, ns ? ns : "", name); break;
        default: mu_cluster_del_template(c, ns ? ns : "", name); break;
        }
        return true;
    }
    switch (ev->src) {
    case MU_SRC_DEVICECLASS:
        if (!(r = mu_devclass_decode(ev->obj, &u.dc, &err)))
            mu_cluster_put_class(c, &u.dc);
        break;
    case MU_SRC_SLICE:
        if (!(r = mu_slice_decode(ev->obj, &u.sl, &err)))
            mu_cluster_put_slice(c, &u.sl);
        break;
    case MU_SRC_CLAIM:
        if (!(r = mu_claim_decode(ev->obj, &u.cl, &err)))
            mu_cluster_put_claim(c, &u.cl);
        break;
    default:
        if (!(r = mu_claimtemplate_decode(ev->obj, &u.t, &err)))
            mu_cluster_put_template(c, &u.t);
        break;
    }
    if (r < 0) {
        bad(a, ev->src, kinds[ev->src], ev->obj, &err);
        return false;
    }
    good(a, ev->src, ev->obj);
    return true;
}

/* After a relist of a DRA kind: what the inventory has and the list had
 * not goes. */
static void dra_list_end(struct mu_apply *a, enum mu_src s)
{
    struct mu_cluster *c = a->cluster;
    const struct mu_map *m = s == MU_SRC_DEVICECLASS ? &c->dev.classes
                             : s == MU_SRC_SLICE     ? &c->dev.slices
                             : s == MU_SRC_CLAIM     ? &c->dev.claims
                                                     : &c->dev.templates;
    size_t n = 0;
    const char **view = mu_map_sorted_keys(m, &n);
    char **keys = mu_xcalloc(n + 1, sizeof(*keys));

    /* copied: deleting from m ends the keys' validity */
    for (size_t i = 0; i < n; i++)
        keys[i] = mu_xstrdup(view[i]);
    free(view);
    for (size_t i = 0; i < n; i++) {
        /* cluster-scoped kinds are keyed by name, the others "ns/name":
         * the listed keys are "ns/name" with ns "" for the former */
        bool scoped = s == MU_SRC_CLAIM || s == MU_SRC_CLAIMTEMPLATE;
        char *k = scoped ? mu_xstrdup(keys[i]) : mu_xasprintf("/%s", keys[i]);
        char *slash = scoped ? strchr(k, '/') : NULL;

        if (!mu_map_get(&a->listed[s], k)) {
            if (slash)
                *slash = 0;
            switch (s) {
            case MU_SRC_DEVICECLASS: mu_cluster_del_class(c, keys[i]); break;
            case MU_SRC_SLICE: mu_cluster_del_slice(c, keys[i]); break;
            case MU_SRC_CLAIM: mu_cluster_del_claim(c, k, slash + 1); break;
            default: mu_cluster_del_template(c, k, slash + 1); break;
            }
        }
        free(k);
        free(keys[i]);
    }
    free(keys);
}

void mu_apply_init(struct mu_apply *a, struct mu_cluster *cluster,
                   const struct mu_ctl *ctl, struct mu_enforcer *enf,
                   struct mu_jobctl *jobctl)
{
    memset(a, 0, sizeof(*a));
    a->cluster = cluster;
    a->ctl = ctl;
    a->enf = enf;
    a->jobctl = jobctl;
    for (int s = 0; s < MU_SRC__COUNT; s++) {
        mu_map_init(&a->listed[s]);
        mu_map_init(&a->bad[s]);
    }
}

static void forget_bad(struct mu_map *m, const struct mu_map *keep)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(m, &it, &k, &v))
        if (!keep || !mu_map_get(keep, k))
            free(mu_map_del(m, k));
}

void mu_apply_release(struct mu_apply *a)
{
    for (int s = 0; s < MU_SRC__COUNT; s++) {
        mu_map_release(&a->listed[s]);
        forget_bad(&a->bad[s], NULL);
        mu_map_release(&a->bad[s]);
    }
}

static bool listed(const struct mu_apply *a, enum mu_src s, const char *ns,
                   const char *name)
{
    char *k = mu_xasprintf("%s/%s", ns ? ns : "", name);
    bool ok = mu_map_get(&a->listed[s], k) != NULL;

    free(k);
    return ok;
}

/* After a relist: drops objects of src that the list no longer has. */
static void list_end(struct mu_apply *a, enum mu_src s)
{
    struct mu_cluster *c = a->cluster;

    a->synced[s] = true;
    if (!a->listing[s])
        return;
    a->listing[s] = false;
    forget_bad(&a->bad[s], &a->listed[s]); /* gone from the list */
    switch (s) {
    case MU_SRC_NODE:
        for (size_t i = c->nnodes; i-- > 0;)
            if (!listed(a, s, NULL, c->nodes[i]->spec.meta.name))
                mu_cluster_remove_node(c, c->nodes[i]);
        break;
    case MU_SRC_JOB:
        mu_jobctl_list_end(a->jobctl, false, &a->listed[s]);
        break;
    case MU_SRC_POD:
        mu_jobctl_list_end(a->jobctl, true, &a->listed[s]);
        for (size_t i = c->ntasks; i-- > 0;)
            if (!listed(a, s, c->tasks[i]->pod.meta.ns,
                        c->tasks[i]->pod.meta.name)) {
                pod_gone(a, c->tasks[i]->key, c->tasks[i]->pod.meta.uid);
                mu_cluster_remove_task(c, c->tasks[i]);
            }
        break;
    case MU_SRC_PODGROUP:
        for (size_t i = c->njobs; i-- > 0;)
            if (!listed(a, s, c->jobs[i]->pg.meta.ns,
                        c->jobs[i]->pg.meta.name))
                mu_cluster_remove_job(c, c->jobs[i]);
        break;
    case MU_SRC_QUEUE:
        for (size_t i = c->nqueues; i-- > 0;)
            if (!listed(a, s, NULL, c->queues[i]->spec.meta.name))
                mu_cluster_remove_queue(c, c->queues[i]);
        break;
    case MU_SRC_DEVICECLASS:
    case MU_SRC_SLICE:
    case MU_SRC_CLAIM:
    case MU_SRC_CLAIMTEMPLATE:
        dra_list_end(a, s);
        break;
    case MU_SRC_HYPERNODE:
        for (size_t i = c->topo ? c->topo->nhn : 0; i-- > 0;)
            if (!listed(a, s, NULL, c->topo->hn[i].meta.name))
                mu_topo_remove(c->topo, c->topo->hn[i].meta.name);
        break;
    default:
        break;
    }
    mu_map_release(&a->listed[s]);
    mu_map_init(&a->listed[s]);
}

bool mu_apply_event(struct mu_apply *a, const struct mu_ev *ev)
{
    enum mu_src s = ev->src;
    bool changed = false;

    if (ev->type == MU_WATCH_LIST_BEGIN) {
        mu_map_release(&a->listed[s]);
        mu_map_init(&a->listed[s]);
        a->listing[s] = true;
        return false;
    }
    if (ev->type == MU_WATCH_LIST_END) {
        list_end(a, s);
        return true;
    }
    if (ev->type == MU_WATCH_LIST_ITEM && a->listing[s]) {
        char *k = key_of(ev->obj);

        if (k)
            mu_map_put(&a->listed[s], k, (void *)1);
        free(k);
    }
    if (ev->type == MU_WATCH_DELETED)
        good(a, s, ev->obj);
    switch (s) {
    case MU_SRC_NODE: changed = apply_node(a, ev); break;
    case MU_SRC_POD: changed = apply_pod(a, ev); break;
    case MU_SRC_PODGROUP: changed = apply_podgroup(a, ev); break;
    case MU_SRC_QUEUE: changed = apply_queue(a, ev); break;
    case MU_SRC_PRIORITYCLASS: changed = apply_pc(a, ev); break;
    case MU_SRC_JOB:
        mu_jobctl_job(a->jobctl, ev->type, ev->obj);
        break;
    case MU_SRC_DEVICECLASS:
    case MU_SRC_SLICE:
    case MU_SRC_CLAIM:
    case MU_SRC_CLAIMTEMPLATE:
        changed = apply_dra(a, ev);
        break;
    case MU_SRC_HYPERNODE: changed = apply_hypernode(a, ev); break;
    default: break;
    }
    return changed;
}
