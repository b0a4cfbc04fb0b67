#include "sched/cluster.h"

static const char *const status_names[MU_TASK__COUNT] = {
    "Pending",  "Allocated", "Pipelined", "Binding",   "Bound",
    "Running",  "Releasing", "Succeeded", "Failed",    "Unknown",
};

const char *mu_task_status_name(enum mu_task_status s)
{
    return (unsigned)s < MU_TASK__COUNT ? status_names[s] : "?";
}

void mu_cluster_init(struct mu_cluster *c)
{
    memset(c, 0, sizeof(*c));
    mu_resnames_init(&c->rn);
    mu_slab_init(&c->node_slab, sizeof(struct mu_cnode), MU_CNODE_SLAB);
    mu_map_init(&c->node_by_name);
    mu_map_init(&c->task_by_key);
    mu_map_init(&c->job_by_key);
    mu_map_init(&c->queue_by_name);
    mu_map_init(&c->shapes);
    mu_map_init(&c->wait_job);
    mu_map_init(&c->wait_node);
    mu_map_init(&c->claim_users);
    mu_devices_init(&c->dev);
    mu_res_zero(&c->total);
    c->release_budget = -1;
}

/* Removes p from v[0..*n), keeping the order; false when it is not
 * there. */
static bool ptr_remove(void **v, size_t *n, const void *p)
{
    for (size_t i = 0; i < *n; i++) {
        if (v[i] != p)
            continue;
        memmove(v + i, v + i + 1, (*n - i - 1) * sizeof(*v));
        (*n)--;
        return true;
    }
    return false;
}

static void tlist_free(struct mu_tlist *l)
{
    if (!l)
        return;
    free(l->v);
    free(l);
}

static void wait_release(struct mu_map *m)
{
    size_t it = 0;
    void *l;

    while (mu_map_next(m, &it, NULL, &l))
        tlist_free(l);
    mu_map_release(m);
}

static void wait_add(struct mu_map *m, const char *key, struct mu_task *t)
{
    struct mu_tlist *l = mu_map_get(m, key);

    if (!l) {
        l = mu_xcalloc(1, sizeof(*l));
        mu_map_put(m, key, l);
    }
    mu_xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    l->v[l->n++] = t;
}

static void wait_del(struct mu_map *m, const char *key, struct mu_task *t)
{
    struct mu_tlist *l = mu_map_get(m, key);

    if (!l)
        return;
    ptr_remove((void **)l->v, &l->n, t);
    if (!l->n)
        tlist_free(mu_map_del(m, key));
}

/* Removes and returns the list under key (the caller frees it), or NULL. */
static struct mu_tlist *wait_take(struct mu_map *m, const char *key)
{
    return mu_map_del(m, key);
}

static char *obj_key(const char *ns, const char *name)
{
    return mu_xasprintf("%s/%s", ns ? ns : "", name);
}

/* The key of t's PodGroup (that of its job, once there is one). */
static char *group_key(const struct mu_task *t)
{
    return obj_key(t->pod.meta.ns, t->pod.group);
}

static void why_free(struct mu_why *w)
{
    free(w->text);
    free(w->reclaim);
    memset(w, 0, sizeof(*w));
}

static void task_free(struct mu_cluster *c, struct mu_task *t)
{
    if (t->dd) {
        mu_devdemand_release(&c->dev, t->dd);
        if (!t->pod.nclaims)
            free(t->dd); /* else in t's allocation */
    }
    mu_pod_release(&t->pod);
    free(t->key);
    free(t);
}

static void node_free(struct mu_cluster *c, struct mu_cnode *n)
{
    mu_node_release(&n->spec);
    free(n->tasks);
    mu_slab_put(&c->node_slab, n);
}

static void queue_free(struct mu_cqueue *q)
{
    mu_queue_spec_release(&q->spec);
    free(q->jobs);
    free(q->shares);
    free(q);
}

static void job_free(struct mu_job *j)
{
    mu_podgroup_release(&j->pg);
    free(j->key);
    free(j->tasks);
    free(j->cond.type);
    free(j->cond.reason);
    free(j->cond.message);
    why_free(&j->why);
    free(j);
}

void mu_cluster_release(struct mu_cluster *c)
{
    for (size_t i = 0; i < c->ntasks; i++)
        task_free(c, c->tasks[i]);
    for (size_t i = 0; i < c->njobs; i++)
        job_free(c->jobs[i]);
    for (size_t i = 0; i < c->nnodes; i++)
        node_free(c, c->nodes[i]);
    mu_slab_release(&c->node_slab);
    for (size_t i = 0; i < c->nqueues; i++)
        queue_free(c->queues[i]);
    for (size_t i = 0; i < c->npcs; i++)
        mu_priorityclass_release(&c->pcs[i]);
    free(c->pcs);
    free(c->tasks);
    free(c->jobs);
    free(c->nodes);
    free(c->queues);
    free(c->dirty);
    mu_map_release(&c->node_by_name);
    mu_map_release(&c->task_by_key);
    mu_map_release(&c->job_by_key);
    mu_map_release(&c->queue_by_name);
    mu_map_release(&c->shapes);
    wait_release(&c->wait_job);
    wait_release(&c->wait_node);
    wait_release(&c->claim_users);
    mu_devices_release(&c->dev); /* after the tasks: they held devices */
    mu_resnames_release(&c->rn);
    memset(c, 0, sizeof(*c));
}

/* Inserts p into a pointer array kept sorted by cmp; returns its index. */
static size_t sorted_insert(void ***arr, size_t *n, size_t *cap, void *p,
                            int (*cmp)(const void *, const void *))
{
    size_t lo = 0, hi = *n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (cmp((*arr)[mid], p) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    mu_xgrow((void **)arr, cap, *n + 1, sizeof(void *));
    memmove(*arr + lo + 1, *arr + lo, (*n - lo) * sizeof(void *));
    (*arr)[lo] = p;
    (*n)++;
    return lo;
}

static int node_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_cnode *)a)->spec.meta.name,
                  ((const struct mu_cnode *)b)->spec.meta.name);
}

static int task_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_task *)a)->key,
                  ((const struct mu_task *)b)->key);
}

static int job_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_job *)a)->key,
                  ((const struct mu_job *)b)->key);
}

static int queue_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_cqueue *)a)->spec.meta.name,
                  ((const struct mu_cqueue *)b)->spec.meta.name);
}

/* The node's resources changed: its generation moves and it is logged. */
static void touch(struct mu_cluster *c, struct mu_cnode *n)
{
    n->gen++;
    mu_xgrow((void **)&c->dirty, &c->cap_dirty, c->ndirty + 1,
             sizeof(*c->dirty));
    c->dirty[c->ndirty++] = n->index;
}

void mu_cluster_touch_node(struct mu_cluster *c, struct mu_cnode *n)
{
    touch(c, n);
}

void mu_cluster_dev_reach_all(struct mu_cluster *c)
{
    struct mu_devices *d = &c->dev;
    bool all = d->reach_gen != c->dev_reach_gen;

    c->dev_reach_holds = d->reach_holds;
    if (all) {
        c->dev_reach_gen = d->reach_gen;
        mu_res_sub(&c->total, &c->dev_unbound_q);
        mu_devices_unbound_quota(d, &c->rn, &c->dev_unbound_q);
        mu_res_add(&c->total, &c->dev_unbound_q);
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        struct mu_cnode *n = c->nodes[i];
        bool had = n->devs->nreach > 0;

        if (all)
            mu_devices_node_reach(d, n->spec.meta.name,
                                  &n->spec.meta.labels);
        if (had || n->devs->nreach > 0)
            touch(c, n);
    }
}

static void node_link_task(struct mu_cnode *n, struct mu_task *t)
{
    mu_xgrow((void **)&n->tasks, &n->cap_tasks, n->ntasks + 1,
             sizeof(*n->tasks));
    t->node_slot = (int)n->ntasks;
    n->tasks[n->ntasks++] = t;
}

static void node_unlink_task(struct mu_cnode *n, struct mu_task *t)
{
    size_t i = (size_t)t->node_slot;

    n->tasks[i] = n->tasks[--n->ntasks];
    n->tasks[i]->node_slot = (int)i;
    t->node_slot = -1;
}

static void reindex_nodes(struct mu_cluster *c)
{
    for (size_t i = 0; i < c->nnodes; i++)
        c->nodes[i]->index = (int)i;
}

static void reindex_queues(struct mu_cluster *c)
{
    for (size_t i = 0; i < c->nqueues; i++)
        c->queues[i]->index = (int)i;
}

struct mu_cnode *mu_cluster_add_node(struct mu_cluster *c, struct mu_node *n,
                                     struct mu_err *err)
{
    struct mu_cnode *cn;

    if (mu_map_get(&c->node_by_name, n->meta.name)) {
        mu_err_set(err, -EEXIST, "Node %s exists already", n->meta.name);
        return NULL;
    }
    cn = mu_slab_get(&c->node_slab);
    cn->spec = *n;
    memset(n, 0, sizeof(*n));
    cn->idle = cn->spec.allocatable;
    mu_res_zero(&cn->used);
    mu_res_zero(&cn->releasing);
    mu_res_zero(&cn->pipelined);
    sorted_insert((void ***)&c->nodes, &c->nnodes, &c->cap_nodes, cn,
                  node_cmp);
    reindex_nodes(c);
    mu_map_put(&c->node_by_name, cn->spec.meta.name, cn);
    mu_res_add(&c->total, &cn->spec.allocatable);
    cn->devs = mu_devices_node(&c->dev, cn->spec.meta.name);
    mu_devices_node_reach(&c->dev, cn->spec.meta.name, &cn->spec.meta.labels);
    mu_cluster_node_devices(c, cn);
    c->node_gen++;
    c->node_set_gen++;
    /* adopt tasks already bound to this node */
    {
        struct mu_tlist *l = wait_take(&c->wait_node, cn->spec.meta.name);

        for (size_t i = 0; l && i < l->n; i++) {
            struct mu_task *t = l->v[i];
            enum mu_task_status st = t->status;

            t->status = MU_TASK_PENDING;
            if (t->job)
                t->job->count[st]--, t->job->count[MU_TASK_PENDING]++;
            mu_task_place(c, t, cn, st);
        }
        tlist_free(l);
    }
    return cn;
}

struct mu_cqueue *mu_cluster_add_queue(struct mu_cluster *c,
                                       struct mu_queue_spec *q,
                                       struct mu_err *err)
{
    struct mu_cqueue *cq;

    if (mu_map_get(&c->queue_by_name, q->meta.name)) {
        mu_err_set(err, -EEXIST, "Queue %s exists already", q->meta.name);
        return NULL;
    }
    cq = mu_xcalloc(1, sizeof(*cq));
    cq->spec = *q;
    memset(q, 0, sizeof(*q));
    mu_res_zero(&cq->allocated);
    sorted_insert((void ***)&c->queues, &c->nqueues, &c->cap_queues, cq,
                  queue_cmp);
    reindex_queues(c);
    mu_map_put(&c->queue_by_name, cq->spec.meta.name, cq);
    return cq;
}

/* q's allocated (and, within a session that set the tree up, its own and
 * its ancestors' tree_allocated) gains or loses r. */
static void queue_account(struct mu_cqueue *q, const struct mu_res *r,
                          bool add)
{
    void (*op)(struct mu_res *, const struct mu_res *) =
        add ? mu_res_add : mu_res_sub;

    op(&q->allocated, r);
    q->alloc_gen++;
    if (q->in_tree)
        for (struct mu_cqueue *a = q; a; a = a->up)
            op(&a->tree_allocated, r);
}

static void job_attach_task(struct mu_job *j, struct mu_task *t)
{
    mu_xgrow((void **)&j->tasks, &j->cap_tasks, j->ntasks + 1,
             sizeof(*j->tasks));
    j->tasks[j->ntasks++] = t;
    t->job = j;
    j->tasks_unsorted = true;
    j->count[t->status]++;
    if (!j->req_sum_stale)
        mu_res_add(&j->req_sum, t->qreq);
    if (mu_task_gated_by_others(t))
        j->gated_others++;
    if (mu_status_allocated(t->status) && t->node) {
        mu_res_add(&j->allocated, t->qreq);
        if (j->queue)
            queue_account(j->queue, t->qreq, true);
    }
}

const struct mu_res *mu_job_req_sum(const struct mu_job *cj)
{
    struct mu_job *j = (struct mu_job *)cj; /* the cache only */

    if (j->req_sum_stale) {
        mu_res_zero(&j->req_sum);
        for (size_t i = 0; i < j->ntasks; i++)
            mu_res_add(&j->req_sum, j->tasks[i]->qreq);
        j->req_sum_stale = false;
    }
    return &j->req_sum;
}

static void job_detach_task(struct mu_job *j, struct mu_task *t)
{
    ptr_remove((void **)j->tasks, &j->ntasks, t);
    j->count[t->status]--;
    j->req_sum_stale = true;
    if (mu_task_gated_by_others(t))
        j->gated_others--;
    if (mu_status_allocated(t->status) && t->node) {
        mu_res_sub(&j->allocated, t->qreq);
        if (j->queue)
            queue_account(j->queue, t->qreq, false);
    }
    t->job = NULL;
}

struct mu_job *mu_cluster_add_job(struct mu_cluster *c, struct mu_podgroup *pg,
                                  struct mu_err *err)
{
    struct mu_job *j;
    char *key = obj_key(pg->meta.ns, pg->meta.name);

    if (mu_map_get(&c->job_by_key, key)) {
        mu_err_set(err, -EEXIST, "PodGroup %s exists already", key);
        free(key);
        return NULL;
    }
    j = mu_xcalloc(1, sizeof(*j));
    j->pg = *pg;
    memset(pg, 0, sizeof(*pg));
    j->key = key;
    j->phase = j->pg.phase;
    mu_res_zero(&j->allocated);
    sorted_insert((void ***)&c->jobs, &c->njobs, &c->cap_jobs, j, job_cmp);
    mu_map_put(&c->job_by_key, key, j);
    /* adopt tasks of this group that arrived first */
    {
        struct mu_tlist *l = wait_take(&c->wait_job, key);

        for (size_t i = 0; l && i < l->n; i++)
            job_attach_task(j, l->v[i]);
        tlist_free(l);
    }
    return j;
}

/* The shape signature: what static predicates and resource fit depend on. */
static int task_shape(struct mu_cluster *c, const struct mu_pod *p,
                      const struct mu_devdemand *dd)
{
    struct mu_sb sb;
    void *v;
    int id;

    mu_sb_init(&sb);
    for (int d = 0; d < MU_RES_MAX; d++)
        if (p->req.v[d])
            mu_sb_addf(&sb, "%d=%lld,", d, (long long)p->req.v[d]);
    mu_sb_add(&sb, "|");
    for (size_t i = 0; i < p->node_selector.n; i++)
        mu_sb_addf(&sb, "%s=%s,", p->node_selector.v[i].key,
                   p->node_selector.v[i].value);
    mu_sb_add(&sb, "|");
    for (size_t i = 0; i < p->affinity.nterms; i++) {
        const struct mu_selterm *term = &p->affinity.terms[i];

        for (size_t e = 0; e < term->nexpr; e++) {
            mu_sb_addf(&sb, "%s %d", term->expr[e].key, term->expr[e].op);
            for (size_t k = 0; k < term->expr[e].nvalues; k++)
                mu_sb_addf(&sb, " %s", term->expr[e].values[k]);
            mu_sb_add(&sb, ";");
        }
        for (size_t e = 0; e < term->nfields; e++) {
            mu_sb_addf(&sb, "F%s %d", term->fields[e].key, term->fields[e].op);
            for (size_t k = 0; k < term->fields[e].nvalues; k++)
                mu_sb_addf(&sb, " %s", term->fields[e].values[k]);
            mu_sb_add(&sb, ";");
        }
        mu_sb_add(&sb, "||");
    }
    mu_sb_add(&sb, "|");
    for (size_t i = 0; i < p->ntol; i++)
        mu_sb_addf(&sb, "%s %d %s %d,", p->tol[i].key ? p->tol[i].key : "",
                   p->tol[i].exists, p->tol[i].value ? p->tol[i].value : "",
                   p->tol[i].effect);
    if (dd)
        mu_sb_addf(&sb, "|%s/%s", p->meta.ns, dd->sig);
    v = mu_map_get(&c->shapes, sb.buf);
    if (v) {
        id = (int)((intptr_t)v - 1);
    } else {
        id = c->nshapes++;
        mu_map_put(&c->shapes, sb.buf, (void *)(intptr_t)(id + 1));
    }
    mu_sb_release(&sb);
    return id;
}

/* t under key "ns/name<suffix>" in claim_users, or out of it. */
static void claim_user(struct mu_cluster *c, struct mu_task *t,
                       const char *name, const char *suffix, bool add)
{
    char *key;

    if (!name)
        return;
    key = mu_xasprintf("%s/%s%s", t->pod.meta.ns, name, suffix);
    if (add)
        wait_add(&c->claim_users, key, t);
    else
        wait_del(&c->claim_users, key, t);
    free(key);
}

/* t under the claims ("ns/claim") and templates ("ns/template@") its pod
 * names, in claim_users. */
static void claim_users_edit(struct mu_cluster *c, struct mu_task *t, bool add)
{
    claim_user(c, t, t->pod.ext_claim, "", add);
    for (size_t i = 0; i < t->pod.nclaims; i++) {
        claim_user(c, t, t->pod.claims[i].claim, "", add);
        claim_user(c, t, t->pod.claims[i].tmpl, "@", add);
    }
}

/* Resolves t's claims, its queue-side request and its shape; t is under
 * MU_CLUSTER_SLICE_USERS in claim_users while its demand's quota moves
 * with the slices. */
static void task_demand(struct mu_cluster *c, struct mu_task *t)
{
    if (t->job) /* its qreq moves */
        t->job->req_sum_stale = true;
    if (t->dd) {
        if (t->dd->by_slices)
            wait_del(&c->claim_users, MU_CLUSTER_SLICE_USERS, t);
        mu_devdemand_release(&c->dev, t->dd);
        if (!t->pod.nclaims)
            free(t->dd);
        t->dd = NULL;
    }
    t->qreq = &t->pod.req;
    if (mu_devdemand_needed(&c->dev, &t->pod)) {
        /* in the task's allocation when it had claims when added
         * (mu_cluster_add_task), else its own (an extended resource a
         * class serves) */
        t->dd = t->pod.nclaims ? (struct mu_devdemand *)(t + 1)
                               : mu_xcalloc(1, sizeof(*t->dd));
        mu_devdemand_resolve(&c->dev, &t->pod, &c->rn, t->dd);
        if (t->dd->by_slices)
            wait_add(&c->claim_users, MU_CLUSTER_SLICE_USERS, t);
        t->qreq = t->dd->qreq;
    }
    t->dd_ext_dims = t->dd ? t->dd->ext_dims : 0;
    t->dd_one = t->dd ? mu_devdemand_one(t->dd) : NULL;
    t->dd_quota_set = t->dd ? t->dd->quota_set : 0;
    t->dd_shared = t->dd && t->dd->shared;
    t->shape = task_shape(c, &t->pod, t->dd);
}

void mu_cluster_redemand_task(struct mu_cluster *c, struct mu_task *t)
{
    struct mu_cnode *n = t->node;
    enum mu_task_status st = t->status;

    if (n)
        mu_task_unplace(c, t);
    task_demand(c, t);
    if (n)
        mu_task_place(c, t, n, st);
}

static enum mu_task_status status_of_pod(const struct mu_pod *p)
{
    switch (p->phase) {
    case MU_POD_RUNNING:
        return p->meta.deleting ? MU_TASK_RELEASING : MU_TASK_RUNNING;
    case MU_POD_PENDING:
        /* an unbound pod being deleted (held by a finalizer, or deleted by
         * muster itself) can never be bound: the apiserver refuses it */
        if (p->meta.deleting)
            return p->node_name ? MU_TASK_RELEASING : MU_TASK_UNKNOWN;
        return p->node_name ? MU_TASK_BOUND : MU_TASK_PENDING;
    case MU_POD_SUCCEEDED:
        return MU_TASK_SUCCEEDED;
    case MU_POD_FAILED:
        return MU_TASK_FAILED;
    default:
        return MU_TASK_UNKNOWN;
    }
}

/* The index of t in c->tasks, found by its key (the array is sorted by
 * key, task_cmp), or by a search should it ever not be there; c->ntasks
 * when t is not in it. */
static size_t task_slot(const struct mu_cluster *c, const struct mu_task *t)
{
    size_t lo = 0, hi = c->ntasks;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;

        if (strcmp(c->tasks[mid]->key, t->key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->ntasks && c->tasks[lo] == t)
        return lo;
    for (lo = 0; lo < c->ntasks && c->tasks[lo] != t; lo++)
        ;
    return lo;
}

/* Resolves t's priority from its class, unless its pod sets one. */
static void task_priority(const struct mu_cluster *c, struct mu_task *t)
{
    if (!t->pod.has_priority)
        t->pod.priority = mu_cluster_priority(c, t->pod.priority_class, NULL);
}

/* mu_cluster_add_task, with the task put in c->tasks at slot when it is
 * not SIZE_MAX (the slot of the pod's own key: mu_cluster_update_task),
 * else inserted in key order. */
static struct mu_task *add_task(struct mu_cluster *c, struct mu_pod *p,
                                size_t slot, struct mu_err *err)
{
    struct mu_task *t;
    char *key = obj_key(p->meta.ns, p->meta.name);
    enum mu_task_status st;
    struct mu_cnode *n = NULL;

    if (mu_map_get(&c->task_by_key, key)) {
        mu_err_set(err, -EEXIST, "Pod %s exists already", key);
        free(key);
        return NULL;
    }
    /* a pod with claims gets its demand in the same allocation: the cycle
     * reads its qreq wherever it reads the task */
    t = mu_xcalloc(1, sizeof(*t) +
                          (p->nclaims ? sizeof(struct mu_devdemand) : 0));
    t->pod = *p;
    memset(p, 0, sizeof(*p));
    t->key = key;
    t->node_slot = -1;
    /* resolved now, and again by mu_cluster_link only when the classes
     * change: link then reads no task that did not change */
    task_priority(c, t);
    task_demand(c, t);
    st = status_of_pod(&t->pod);
    if (slot == SIZE_MAX)
        sorted_insert((void ***)&c->tasks, &c->ntasks, &c->cap_tasks, t,
                      task_cmp);
    else
        c->tasks[slot] = t;
    mu_map_put(&c->task_by_key, key, t);
    claim_users_edit(c, t, true);
    if (t->pod.group) {
        char *gk = group_key(t);
        struct mu_job *j = mu_map_get(&c->job_by_key, gk);

        if (j)
            job_attach_task(j, t);
        else
            wait_add(&c->wait_job, gk, t);
        free(gk);
    }
    if (st != MU_TASK_PENDING && t->pod.node_name)
        n = mu_cluster_node(c, t->pod.node_name);
    if (n && mu_status_on_node(st)) {
        mu_task_place(c, t, n, st);
    } else {
        /* finished, or on a node we do not know (yet) */
        if (t->job)
            t->job->count[MU_TASK_PENDING]--, t->job->count[st]++;
        t->status = st;
        if (!n && mu_status_on_node(st) && t->pod.node_name)
            wait_add(&c->wait_node, t->pod.node_name, t);
    }
    return t;
}

struct mu_task *mu_cluster_add_task(struct mu_cluster *c, struct mu_pod *p,
                                    struct mu_err *err)
{
    return add_task(c, p, SIZE_MAX, err);
}

/* Takes t out of everything but c->tasks, and frees it. */
static void task_unlink(struct mu_cluster *c, struct mu_task *t)
{
    if (!t->node && mu_status_on_node(t->status) && t->pod.node_name)
        wait_del(&c->wait_node, t->pod.node_name, t);
    if (!t->job && t->pod.group) {
        char *gk = group_key(t);

        wait_del(&c->wait_job, gk, t);
        free(gk);
    }
    if (t->node)
        mu_task_unplace(c, t);
    if (t->job)
        job_detach_task(t->job, t);
    claim_users_edit(c, t, false);
    if (t->dd && t->dd->by_slices)
        wait_del(&c->claim_users, MU_CLUSTER_SLICE_USERS, t);
    mu_map_del(&c->task_by_key, t->key);
    task_free(c, t);
}

/* Drops slot i of c->tasks, keeping the order. */
static void slot_drop(struct mu_cluster *c, size_t i)
{
    memmove(c->tasks + i, c->tasks + i + 1,
            (c->ntasks - i - 1) * sizeof(*c->tasks));
    c->ntasks--;
}

void mu_cluster_remove_task(struct mu_cluster *c, struct mu_task *t)
{
    size_t i = task_slot(c, t);

    if (i < c->ntasks)
        slot_drop(c, i);
    task_unlink(c, t);
}

void mu_cluster_add_priorityclass(struct mu_cluster *c,
                                  struct mu_priorityclass *pc)
{
    mu_cluster_remove_priorityclass(c, pc->name);
    c->pcs = mu_xrealloc(c->pcs, (c->npcs + 1) * sizeof(*c->pcs));
    c->pcs[c->npcs++] = *pc;
    memset(pc, 0, sizeof(*pc));
    c->pc_gen++;
}

void mu_cluster_remove_priorityclass(struct mu_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->npcs; i++) {
        if (strcmp(c->pcs[i].name, name))
            continue;
        mu_priorityclass_release(&c->pcs[i]);
        c->pcs[i] = c->pcs[--c->npcs];
        c->pc_gen++;
        return;
    }
}

static bool kvs_equal(const struct mu_kvs *a, const struct mu_kvs *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].key, b->v[i].key) ||
            mu_strcmp0(a->v[i].value, b->v[i].value))
            return false;
    return true;
}

static bool res_equal(const struct mu_res *a, const struct mu_res *b)
{
    if (a->set != b->set)
        return false;
    for (int d = 0; d < MU_RES_MAX; d++)
        if (a->v[d] != b->v[d])
            return false;
    return true;
}

static bool taints_equal(const struct mu_node *a, const struct mu_node *b)
{
    if (a->ntaints != b->ntaints)
        return false;
    for (size_t i = 0; i < a->ntaints; i++)
        if (strcmp(a->taints[i].key, b->taints[i].key) ||
            mu_strcmp0(a->taints[i].value, b->taints[i].value) ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return true;
}

struct mu_cnode *mu_cluster_update_node(struct mu_cluster *c, struct mu_node *n)
{
    struct mu_cnode *cn = mu_cluster_node(c, n->meta.name);
    bool same;

    if (!cn)
        return mu_cluster_add_node(c, n, NULL);
    if (!kvs_equal(&cn->spec.meta.labels, &n->meta.labels))
        c->node_set_gen++;
    same = kvs_equal(&cn->spec.meta.labels, &n->meta.labels) &&
           taints_equal(&cn->spec, n) &&
           cn->spec.unschedulable == n->unschedulable &&
           res_equal(&cn->spec.allocatable, &n->allocatable);
    mu_res_sub(&cn->idle, &cn->spec.allocatable);
    mu_res_add(&cn->idle, &n->allocatable);
    mu_res_sub(&c->total, &cn->spec.allocatable);
    mu_res_add(&c->total, &n->allocatable);
    touch(c, cn);
    /* the name (the map's key) is the same; keep the old string */
    free(n->meta.name);
    n->meta.name = cn->spec.meta.name;
    cn->spec.meta.name = NULL;
    mu_node_release(&cn->spec);
    cn->spec = *n;
    memset(n, 0, sizeof(*n));
    if (!same)
        c->node_gen++;
    if (c->dev.unbound.n)
        mu_devices_node_reach(&c->dev, cn->spec.meta.name,
                              &cn->spec.meta.labels);
    return cn;
}

void mu_cluster_node_devices(struct mu_cluster *c, struct mu_cnode *n)
{
    mu_res_sub(&c->total, &n->devq);
    mu_devices_node_quota(&c->dev, n->spec.meta.name, &c->rn, &n->devq);
    mu_res_add(&c->total, &n->devq);
    mu_devices_take_hints(n->devs, n->dev_hint);
}

void mu_cluster_remove_node(struct mu_cluster *c, struct mu_cnode *n)
{
    while (n->ntasks)
        mu_task_unplace(c, n->tasks[n->ntasks - 1]);
    ptr_remove((void **)c->nodes, &c->nnodes, n);
    reindex_nodes(c);
    mu_map_del(&c->node_by_name, n->spec.meta.name);
    mu_res_sub(&c->total, &n->spec.allocatable);
    mu_res_sub(&c->total, &n->devq);
    mu_devices_node_reach(&c->dev, n->spec.meta.name, NULL); /* gone */
    node_free(c, n);
    c->node_gen++;
    c->node_set_gen++;
}

struct mu_task *mu_cluster_update_task(struct mu_cluster *c, struct mu_pod *p,
                                       struct mu_err *err)
{
    struct mu_task *old = mu_cluster_task(c, p->meta.ns, p->meta.name);
    struct mu_task *t;
    size_t i;

    if (!old)
        return mu_cluster_add_task(c, p, err);
    /* the new task takes the old one's slot (the same key): a binary
     * search of c->tasks and no move of it, at every event of every pod
     * (issue 15: at 200,000 pods, a linear search and two moves of the
     * whole array per pod event were a quarter of the scheduler thread) */
    i = task_slot(c, old);
    task_unlink(c, old);
    if (i == c->ntasks) /* not in tasks: never expected */
        return mu_cluster_add_task(c, p, err);
    t = add_task(c, p, i, err);
    if (!t)
        slot_drop(c, i);
    return t;
}

struct mu_job *mu_cluster_update_job(struct mu_cluster *c,
                                     struct mu_podgroup *pg)
{
    struct mu_job *j = mu_cluster_job(c, pg->meta.ns, pg->meta.name);
    enum mu_pg_phase phase;

    if (!j)
        return mu_cluster_add_job(c, pg, NULL);
    phase = j->phase;
    mu_podgroup_release(&j->pg);
    j->pg = *pg;
    memset(pg, 0, sizeof(*pg));
    j->phase = phase;
    return j; /* queue and priority are re-resolved by mu_cluster_link */
}

void mu_cluster_remove_job(struct mu_cluster *c, struct mu_job *j)
{
    while (j->ntasks) {
        struct mu_task *t = j->tasks[j->ntasks - 1];

        job_detach_task(j, t);
        if (t->pod.group) {
            char *gk = group_key(t);

            wait_add(&c->wait_job, gk, t);
            free(gk);
        }
    }
    if (j->queue)
        ptr_remove((void **)j->queue->jobs, &j->queue->njobs, j);
    ptr_remove((void **)c->jobs, &c->njobs, j);
    mu_map_del(&c->job_by_key, j->key);
    job_free(j);
}

struct mu_cqueue *mu_cluster_update_queue(struct mu_cluster *c,
                                          struct mu_queue_spec *q)
{
    struct mu_cqueue *cq = mu_cluster_queue(c, q->meta.name);

    if (!cq)
        return mu_cluster_add_queue(c, q, NULL);
    free(q->meta.name);
    q->meta.name = cq->spec.meta.name;
    cq->spec.meta.name = NULL;
    mu_queue_spec_release(&cq->spec);
    cq->spec = *q;
    memset(q, 0, sizeof(*q));
    return cq;
}

void mu_cluster_remove_queue(struct mu_cluster *c, struct mu_cqueue *q)
{
    size_t i;

    for (i = 0; i < q->njobs; i++) {
        mu_res_sub(&q->allocated, &q->jobs[i]->allocated);
        q->alloc_gen++;
        q->jobs[i]->queue = NULL;
    }
    ptr_remove((void **)c->queues, &c->nqueues, q);
    reindex_queues(c);
    mu_map_del(&c->queue_by_name, q->spec.meta.name);
    queue_free(q);
}

struct mu_cnode *mu_cluster_node(const struct mu_cluster *c, const char *name)
{
    return mu_map_get(&c->node_by_name, name);
}

struct mu_cqueue *mu_cluster_queue(const struct mu_cluster *c, const char *name)
{
    return mu_map_get(&c->queue_by_name, name);
}

struct mu_job *mu_cluster_job(const struct mu_cluster *c, const char *ns,
                              const char *name)
{
    char *key = obj_key(ns, name);
    struct mu_job *j = mu_map_get(&c->job_by_key, key);

    free(key);
    return j;
}

struct mu_task *mu_cluster_task(const struct mu_cluster *c, const char *ns,
                                const char *name)
{
    char *key = obj_key(ns, name);
    struct mu_task *t = mu_map_get(&c->task_by_key, key);

    free(key);
    return t;
}

int32_t mu_cluster_priority(const struct mu_cluster *c, const char *name,
                            bool *found)
{
    if (found)
        *found = false;
    for (size_t i = 0; i < c->npcs; i++) {
        if (name ? !strcmp(c->pcs[i].name, name) : c->pcs[i].global_default) {
            if (found)
                *found = true;
            return c->pcs[i].value;
        }
    }
    if (name) {
        /* the built-in classes Kubernetes always has */
        if (!strcmp(name, "system-cluster-critical"))
            return found ? (*found = true, 2000000000) : 2000000000;
        if (!strcmp(name, "system-node-critical"))
            return found ? (*found = true, 2000001000) : 2000001000;
        return mu_cluster_priority(c, NULL, NULL);
    }
    return 0;
}

static int task_order_default(const void *a, const void *b)
{
    const struct mu_task *x = *(struct mu_task *const *)a;
    const struct mu_task *y = *(struct mu_task *const *)b;

    if (x->pod.priority != y->pod.priority)
        return x->pod.priority > y->pod.priority ? -1 : 1;
    if (x->pod.task_index != y->pod.task_index)
        return x->pod.task_index < y->pod.task_index ? -1 : 1;
    if (x->pod.meta.created != y->pod.meta.created)
        return x->pod.meta.created < y->pod.meta.created ? -1 : 1;
    return strcmp(x->key, y->key);
}

void mu_cluster_link(struct mu_cluster *c)
{
    for (size_t i = 0; i < c->nqueues; i++)
        c->queues[i]->njobs = 0;
    bool again = c->pc_gen != c->linked_pc_gen;

    for (size_t i = 0; again && i < c->ntasks; i++)
        task_priority(c, c->tasks[i]);
    c->linked_pc_gen = c->pc_gen;
    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];
        struct mu_cqueue *q = mu_cluster_queue(c, j->pg.queue);

        if (q != j->queue) {
            if (j->queue) {
                mu_res_sub(&j->queue->allocated, &j->allocated);
                j->queue->alloc_gen++;
            }
            if (q) {
                mu_res_add(&q->allocated, &j->allocated);
                q->alloc_gen++;
            }
            j->queue = q;
        }
        j->priority = mu_cluster_priority(c, j->pg.priority_class, NULL);
        /* a job's order moves only when a task joins (a leaving one
         * keeps the others' order) or priorities move */
        if (j->ntasks > 1 && (again || j->tasks_unsorted))
            qsort(j->tasks, j->ntasks, sizeof(*j->tasks), task_order_default);
        j->tasks_unsorted = false;
        if (q) {
            mu_xgrow((void **)&q->jobs, &q->cap_jobs, q->njobs + 1,
                     sizeof(*q->jobs));
            q->jobs[q->njobs++] = j; /* c->jobs is sorted, so q->jobs is */
        }
    }
}

/* Adds t's quota of DRA devices to n's devused (add), or takes it back:
 * from what the task holds (t->qreq is its demand's), not the demand. */
static void devused_move(struct mu_cnode *n, const struct mu_task *t, bool add)
{
    for (uint32_t set = t->dd_quota_set; set; set &= set - 1) {
        int d = __builtin_ctz(set);
        int64_t q = mu_devdemand_quota_of(t->qreq, &t->pod.req, d);
        int64_t have = mu_res_has(&n->devused, d) ? n->devused.v[d] : 0;

        mu_res_put(&n->devused, d,
                   add ? mu_add_sat(have, q) : mu_sub_sat(have, q));
    }
}

/* Takes t's devices on n and counts its quota there: through its only
 * claim when it has one (dd_one), else through its demand. */
static void dev_take(struct mu_cluster *c, struct mu_task *t,
                     struct mu_cnode *n)
{
    if (t->dd_one)
        mu_devices_take_one(&c->dev, t->dd, t->dd_one, n->devs);
    else
        mu_devices_take(&c->dev, t->dd, n->devs, n->spec.allocatable.set);
    devused_move(n, t, true);
}

void mu_task_place(struct mu_cluster *c, struct mu_task *t, struct mu_cnode *n,
                   enum mu_task_status st)
{
    if (t->dd) { /* the take's lines, together (mu_devices_take_hints) */
        __builtin_prefetch(n->devs);
        for (int i = 0; i < MU_DEV_HINTS; i++)
            __builtin_prefetch(n->dev_hint[i]);
    }
    touch(c, n);
    t->node = n;
    node_link_task(n, t);
    if (st == MU_TASK_PIPELINED) {
        mu_res_add(&n->pipelined, &t->pod.req);
    } else {
        mu_res_sub(&n->idle, &t->pod.req);
        mu_res_add(&n->used, &t->pod.req);
        if (st == MU_TASK_RELEASING)
            mu_res_add(&n->releasing, &t->pod.req);
    }
    if (t->job) {
        t->job->count[t->status]--;
        t->job->count[st]++;
        if (mu_status_allocated(st)) {
            mu_res_add(&t->job->allocated, t->qreq);
            if (t->job->queue)
                queue_account(t->job->queue, t->qreq, true);
        }
    }
    if (t->dd && st == MU_TASK_PIPELINED)
        mu_devices_pipe(&c->dev, t->dd, n->devs, n->spec.allocatable.set);
    if (t->dd && st != MU_TASK_PIPELINED) {
        dev_take(c, t, n);
        mu_devices_take_hints(n->devs, n->dev_hint);
        if (st == MU_TASK_RELEASING)
            mu_devices_leaving(&c->dev, t->dd, true);
    }
    if (t->dd)
        mu_cluster_dev_reach(c);
    t->status = st;
}

void mu_task_unplace(struct mu_cluster *c, struct mu_task *t)
{
    mu_task_set_status(c, t, MU_TASK_PENDING);
}

void mu_task_set_status(struct mu_cluster *c, struct mu_task *t,
                        enum mu_task_status st)
{
    struct mu_cnode *n = t->node;
    enum mu_task_status old = t->status;
    bool was_alloc = mu_status_allocated(old) && n, now_alloc;

    if (old == st)
        return;
    /* between allocated-like statuses (a commit: ALLOCATED -> BINDING)
     * no sum of the node moves, so neither does its generation */
    if (n && !(was_alloc && mu_status_allocated(st)))
        touch(c, n);
    if (t->dd && n && old != MU_TASK_PIPELINED &&
        (old == MU_TASK_RELEASING) != (st == MU_TASK_RELEASING))
        mu_devices_leaving(&c->dev, t->dd, st == MU_TASK_RELEASING);
    if (t->dd && n && old == MU_TASK_PIPELINED)
        mu_devices_unpipe(&c->dev, t->dd);
    if (t->dd && n && old == MU_TASK_PIPELINED && mu_status_on_node(st))
        dev_take(c, t, n);
    /* leaving the node (pending, finished) */
    if (n && !mu_status_on_node(st) && st != MU_TASK_PIPELINED) {
        if (t->dd && old != MU_TASK_PIPELINED) {
            mu_devices_give(&c->dev, t->dd);
            devused_move(n, t, false);
        }
        if (old == MU_TASK_PIPELINED) {
            mu_res_sub(&n->pipelined, &t->pod.req);
        } else {
            mu_res_add(&n->idle, &t->pod.req);
            mu_res_sub(&n->used, &t->pod.req);
            if (old == MU_TASK_RELEASING)
                mu_res_sub(&n->releasing, &t->pod.req);
        }
        node_unlink_task(n, t);
        t->node = NULL;
    } else if (n) {
        if (old == MU_TASK_RELEASING && st != MU_TASK_RELEASING)
            mu_res_sub(&n->releasing, &t->pod.req);
        else if (st == MU_TASK_RELEASING)
            mu_res_add(&n->releasing, &t->pod.req);
    }
    if (t->dd && n)
        mu_cluster_dev_reach(c);
    now_alloc = mu_status_allocated(st) && t->node;
    if (t->job) {
        t->job->count[old]--;
        t->job->count[st]++;
        if (was_alloc != now_alloc) {
            void (*op)(struct mu_res *, const struct mu_res *) =
                now_alloc ? mu_res_add : mu_res_sub;

            op(&t->job->allocated, t->qreq);
            if (t->job->queue)
                queue_account(t->job->queue, t->qreq, now_alloc);
        }
    }
    t->status = st;
}

void mu_fake_uid(const char *kind, const char *ns, const char *name,
                 char buf[37])
{
    char *s = mu_xasprintf("%s/%s/%s", kind, ns ? ns : "", name);
    uint64_t a = mu_hash_str(s), b;

    s[0] ^= 0x5a;
    b = mu_hash_str(s);
    free(s);
    snprintf(buf, 37, "%08x-%04x-%04x-%04x-%012llx",
             (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)(a & 0x0fff) | 0x4000,
             (unsigned)((b >> 48) & 0x3fff) | 0x8000,
             (unsigned long long)(b & 0xffffffffffffull));
}
