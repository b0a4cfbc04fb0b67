/*
 * capacity.c - Volcano's capacity plugin: queues share the cluster by the
 * deserved values they state, flat or as a tree of queues
 * (enableHierarchy; the tree is sched/qtree.h).
 *
 * Per queue, at open, top down:
 *   capability  spec.capability (cpu or memory <= 0: unlimited); in a tree
 *               a dimension it leaves out is its parent's
 *   limit       min(max(parent's limit - what the parent's children are
 *               guaranteed, 0) + its own guarantee, capability): the most
 *               it may hold (Volcano's realCapability); the root's, real
 *               or imagined, is the cluster's total
 *   deserved    spec.deserved, bounded by its limit and, in a tree, by
 *               its parent's deserved; raised to its guarantee
 * Allocated, inqueue and elastic of a parent are those of its whole
 * subtree (mu_cqueue.tree_allocated, kept live through the session).
 *
 * Admission and allocation check the queue and every queue above it
 * against its limit. Jobs go to leaf queues only; a queue of a broken tree
 * (a missing parent, parents going round) or below a queue that is not
 * Open takes nothing, saying which queue is at fault.
 *
 * Reclaim (muster's reading of Volcano's, stable by construction): a gang
 * may reclaim when its queue is owed the whole of what it lacks (allocated
 * + the gang within deserved on every dimension the gang asks that
 * deserved names), and so is every queue above it up to where it meets the
 * victim's. A victim's queue, and every queue above it below that meeting
 * point, holds more than it deserves in a dimension the gang asks (or
 * deserves none of them) and keeps its guarantee without the victim.
 * Victims come from the nearest queues first: siblings, then cousins
 * (victim_queue_rank). Since a reclaimer ends within its deserved share
 * and only queues over theirs give way, what was taken is never owed back.
 * capacity.reclaimMinRuntime and capacity.reclaimWindow damp it as
 * proportion's arguments of the same names do.
 *
 * The queues' cycle scratch (has_deserved, deserved, real_capability,
 * inqueue) is written at open, as proportion does, for the why-pending
 * text, overcommit and the simulator.
 */
#include "ahead.h"
#include "plugins.h"
#include "sched/qtree.h"
#include "share.h"

#define DIMS_ALL (~(1u << MU_RES_PODS))

#define MIN_RUNTIME "0s"   /* capacity.reclaimMinRuntime */
#define AGAIN_WINDOW "10m" /* capacity.reclaimWindow */

struct cattr {
    struct mu_res cap;      /* capability, inherited where left out */
    struct mu_res limit;    /* the most it may hold */
    struct mu_res deserved; /* only the dimensions it deserves */
    struct mu_res guarantee;
    struct mu_res inqueue;  /* of its subtree */
    struct mu_res elastic;  /* of its subtree */
};

struct cap {
    struct mu_cluster *c;
    struct mu_ssn *ssn;
    bool tree;              /* enableHierarchy */
    struct mu_qtree t;      /* when tree */
    struct cattr *a;        /* by queue index */
    struct mu_ahead *ahead; /* by queue index */
    int64_t now_ms, min_run_ms, again_ms;
    struct mu_share_need need; /* of the reclaimer victim_ok asks for */
};

static int64_t get0(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

static int parent(const struct cap *p, int i)
{
    return p->tree ? p->t.parent[i] : -1;
}

static int depth(const struct cap *p, int i)
{
    return p->tree ? p->t.depth[i] : 1;
}

static const struct mu_res *alloc_of(const struct cap *p,
                                     const struct mu_cqueue *q)
{
    return p->tree ? &q->tree_allocated : &q->allocated;
}

static const char *qname(const struct cap *p, int i)
{
    return p->c->queues[i]->spec.meta.name;
}

/* capability as Volcano reads it: cpu or memory <= 0 is unlimited */
static void own_cap(const struct mu_cqueue *q, struct mu_res *out)
{
    *out = q->spec.capability;
    for (int d = 0; d < MU_RES_MAX; d++)
        if ((d == MU_RES_CPU || d == MU_RES_MEMORY) && mu_res_has(out, d) &&
            out->v[d] <= 0)
            out->set &= ~(1u << d);
}

/* The attributes of queue i under parent attributes pa (NULL: the root,
 * real or imagined), whose children are guaranteed sibg. */
static void attrs(struct cap *p, int i, const struct cattr *pa,
                  const struct mu_res *sibg, uint32_t dims)
{
    const struct mu_cluster *c = p->c;
    const struct mu_cqueue *q = c->queues[i];
    struct cattr *a = &p->a[i];
    bool is_root = p->tree && i == p->t.root;

    a->guarantee = q->spec.guarantee;
    own_cap(q, &a->cap);
    if (pa)
        for (uint32_t s = pa->cap.set & ~a->cap.set; s; s &= s - 1)
            mu_res_put(&a->cap, __builtin_ctz(s), pa->cap.v[__builtin_ctz(s)]);
    mu_res_zero(&a->limit);
    for (uint32_t s = dims; s; s &= s - 1) {
        int d = __builtin_ctz(s);
        int64_t up = pa ? get0(&pa->limit, d) : get0(&c->total, d), v;

        v = is_root ? get0(&c->total, d)
                    : mu_add_sat(MU_MAX(mu_sub_sat(up, get0(sibg, d)), 0),
                                 get0(&a->guarantee, d));
        if (mu_res_has(&a->cap, d))
            v = MU_MIN(v, a->cap.v[d]);
        mu_res_put(&a->limit, d, v);
    }
    mu_res_zero(&a->deserved);
    if (is_root && mu_res_is_empty(&q->spec.deserved)) {
        for (uint32_t s = dims; s; s &= s - 1)
            mu_res_put(&a->deserved, __builtin_ctz(s),
                       get0(&c->total, __builtin_ctz(s)));
        return;
    }
    for (uint32_t s = q->spec.deserved.set & DIMS_ALL; s; s &= s - 1) {
        int d = __builtin_ctz(s);
        int64_t v = MU_MIN(q->spec.deserved.v[d], get0(&a->limit, d));

        if (pa && mu_res_has(&pa->deserved, d))
            v = MU_MIN(v, pa->deserved.v[d]);
        else if (!pa)
            v = MU_MIN(v, get0(&c->total, d));
        mu_res_put(&a->deserved, d, v);
    }
    for (uint32_t s = a->guarantee.set & DIMS_ALL; s; s &= s - 1) {
        int d = __builtin_ctz(s);

        mu_res_put(&a->deserved, d,
                   MU_MAX(get0(&a->deserved, d), a->guarantee.v[d]));
    }
}

/* The children of a parent ask (spec.deserved) more than it deserves:
 * said once. */
static void warn_overbooked(struct cap *p, const struct mu_plugin_opt *opt)
{
    size_t n = p->c->nqueues;
    struct mu_res *sum = mu_xcalloc(n + 1, sizeof(*sum));

    for (size_t i = 0; i < n; i++)
        if (parent(p, (int)i) >= 0)
            mu_res_add(&sum[parent(p, (int)i)],
                       &p->c->queues[i]->spec.deserved);
    for (size_t i = 0; i < n; i++)
        for (uint32_t s = sum[i].set & p->a[i].deserved.set & DIMS_ALL; s;
             s &= s - 1) {
            int d = __builtin_ctz(s);
            const char *r = p->c->rn.name[d];
            char x[32], y[32];

            if (sum[i].v[d] <= p->a[i].deserved.v[d])
                continue;
            mu_conf_arg_warn(
                p->ssn->conf, opt,
                "the queues under %s deserve %s %s in all, more than its %s: "
                "they cannot all have it at once",
                qname(p, (int)i), mu_quantity_format(r, sum[i].v[d], x,
                                                     sizeof(x)),
                r, mu_quantity_format(r, p->a[i].deserved.v[d], y, sizeof(y)));
        }
    free(sum);
}

/* Jobs: what each queue and the queues above it have admitted and hold
 * past their minResources. */
static void scan_jobs(struct cap *p)
{
    struct mu_cluster *c = p->c;

    for (size_t i = 0; i < c->nqueues; i++) {
        struct mu_cqueue *q = c->queues[i];

        for (size_t k = 0; k < q->njobs; k++) {
            const struct mu_job *j = q->jobs[k];
            struct mu_res el;

            mu_res_zero(&el);
            for (int d = 0; d < MU_RES_MAX; d++) {
                int64_t x = mu_sub_sat(get0(&j->allocated, d),
                                       get0(&j->pg.min_resources, d));

                if (d != MU_RES_PODS && x > 0)
                    mu_res_put(&el, d, x);
            }
            for (int a = (int)i; a >= 0; a = parent(p, a)) {
                mu_res_add(&p->a[a].elastic, &el);
                if (j->phase == MU_PG_INQUEUE && j->pg.has_min_resources &&
                    !mu_job_ready(j))
                    mu_res_add(&p->a[a].inqueue, &j->pg.min_resources);
            }
            if (j->phase == MU_PG_INQUEUE && j->pg.has_min_resources &&
                !mu_job_ready(j))
                mu_ahead_add(&p->ahead[i], j, &j->pg.min_resources);
        }
    }
}

static void *open_cap(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct mu_cluster *c = ssn->cluster;
    struct cap *p = mu_xcalloc(1, sizeof(*p));
    size_t n = c->nqueues;
    struct mu_res *sibg = mu_xcalloc(n + 1, sizeof(*sibg)), top;
    uint32_t dims = c->total.set;

    p->c = c;
    p->ssn = ssn;
    p->now_ms = ssn->now_ms;
    p->tree = !mu_plugin_opt_on(opt, MU_FLAG_HIERARCHY) ? false : true;
    p->a = mu_xcalloc(n + 1, sizeof(*p->a));
    p->ahead = mu_xcalloc(n + 1, sizeof(*p->ahead));
    if (p->tree)
        mu_qtree_build(&p->t, c);
    mu_res_zero(&top);
    for (size_t i = 0; i < n; i++) {
        const struct mu_cqueue *q = c->queues[i];
        int up = parent(p, (int)i);

        dims |= q->spec.guarantee.set | q->spec.deserved.set |
                q->spec.capability.set;
        if (p->tree && (int)i == p->t.root)
            continue;
        mu_res_add(up >= 0 ? &sibg[up] : &top, &q->spec.guarantee);
    }
    dims &= DIMS_ALL;
    for (size_t k = 0; k < n; k++) {
        int i = p->tree ? p->t.order[k] : (int)k, up = parent(p, i);

        attrs(p, i, up >= 0 ? &p->a[up] : NULL, up >= 0 ? &sibg[up] : &top,
              dims);
    }
    for (size_t i = 0; i < n; i++) {
        struct mu_cqueue *q = c->queues[i];

        q->has_deserved = true;
        q->deserved = p->a[i].deserved;
        q->real_capability = p->a[i].limit;
        if (p->tree) {
            int up = parent(p, (int)i);

            q->in_tree = true;
            q->up = up >= 0 ? c->queues[up] : NULL;
            q->tree_allocated = q->allocated;
        }
    }
    if (p->tree) {
        for (size_t i = 0; i < n; i++)
            for (int a = parent(p, (int)i); a >= 0; a = parent(p, a))
                mu_res_add(&c->queues[a]->tree_allocated,
                           &c->queues[i]->allocated);
        warn_overbooked(p, opt);
    }
    scan_jobs(p);
    for (size_t i = 0; i < n; i++)
        c->queues[i]->inqueue = p->a[i].inqueue;
    p->min_run_ms = mu_share_arg_duration(ssn, opt,
                                          "capacity.reclaimMinRuntime",
                                          MIN_RUNTIME);
    p->again_ms = mu_share_arg_duration(ssn, opt, "capacity.reclaimWindow",
                                        AGAIN_WINDOW);
    free(sibg);
    return p;
}

static void close_cap(struct mu_ssn *ssn, void *st)
{
    struct cap *p = st;

    (void)ssn;
    if (p->tree)
        mu_qtree_free(&p->t);
    free(p->a);
    free(p->ahead);
    free(p);
}

/* Volcano's share: the most of allocated / deserved over what it deserves;
 * a queue that deserves nothing is best effort, 1. */
static double share(const struct cap *p, int i, bool *has)
{
    const struct mu_res *de = &p->a[i].deserved;
    const struct mu_res *al = alloc_of(p, p->c->queues[i]);
    double s = 0;

    *has = !mu_res_is_empty(de);
    if (!*has)
        return 1;
    for (uint32_t set = de->set & DIMS_ALL; set; set &= set - 1) {
        int d = __builtin_ctz(set);
        int64_t a = get0(al, d);
        double v = de->v[d] == 0 ? (a == 0 ? 0 : 1)
                                 : (double)a / (double)de->v[d];

        s = MU_MAX(s, v);
    }
    return s;
}

/* The ancestor of i at depth dd (i itself when it is no deeper). */
static int at_depth(const struct cap *p, int i, int dd)
{
    while (i >= 0 && depth(p, i) > dd)
        i = parent(p, i);
    return i;
}

/* Lower share first; a tree compares the two branches where the queues
 * part (Volcano's hierarchical queue order). */
static int queue_order(void *st, const struct mu_cqueue *x,
                       const struct mu_cqueue *y)
{
    const struct cap *p = st;
    int a = x->index, b = y->index;
    bool ha, hb;
    double sa, sb;

    if (x->spec.priority != y->spec.priority)
        return x->spec.priority > y->spec.priority ? -1 : 1;
    if (p->tree && a != b) {
        int m = mu_qtree_meet(&p->t, a, b);
        int a2 = at_depth(p, a, m + 1), b2 = at_depth(p, b, m + 1);

        if (a2 >= 0 && b2 >= 0 && a2 != b2) {
            a = a2;
            b = b2;
        }
    }
    sa = share(p, a, &ha);
    sb = share(p, b, &hb);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return ha == hb ? 0 : ha ? -1 : 1;
}

/* Whether q may take work: its tree is whole, it is a leaf, it and every
 * queue above it are Open. */
static bool usable(const struct cap *p, const struct mu_cqueue *q,
                   struct mu_sb *why)
{
    if (p->tree && mu_qtree_fault_why(&p->t, p->c, q->index, why))
        return false;
    if (p->tree && p->t.nchildren[q->index]) {
        if (why)
            mu_sb_addf(why, "queue %s has child queues: jobs go to the "
                            "queues at the leaves of the tree",
                       q->spec.meta.name);
        return false;
    }
    for (int a = q->index; a >= 0; a = parent(p, a)) {
        const struct mu_cqueue *x = p->c->queues[a];

        if (x->spec.state == MU_QUEUE_OPEN)
            continue;
        if (why && a == q->index)
            mu_sb_addf(why, "queue %s is %s", x->spec.meta.name,
                       mu_queue_state_name(x->spec.state));
        else if (why)
            mu_sb_addf(why, "queue %s is below queue %s, which is %s",
                       q->spec.meta.name, x->spec.meta.name,
                       mu_queue_state_name(x->spec.state));
        return false;
    }
    return true;
}

/* "queue a" or "queue b (above a)" */
static void who(const struct cap *p, int a, const struct mu_cqueue *q,
                struct mu_sb *why)
{
    if (a == q->index)
        mu_sb_addf(why, "queue %s", q->spec.meta.name);
    else
        mu_sb_addf(why, "queue %s (above %s)", qname(p, a),
                   q->spec.meta.name);
}

static bool allocatable(void *st, const struct mu_cqueue *q,
                        const struct mu_task *t, struct mu_sb *why)
{
    const struct cap *p = st;
    const struct mu_res *req = t->qreq;

    if (!usable(p, q, why))
        return false;
    for (int a = q->index; a >= 0; a = parent(p, a)) {
        const struct mu_res *lim = &p->a[a].limit;
        const struct mu_res *al = alloc_of(p, p->c->queues[a]);

        for (uint32_t s = req->set & DIMS_ALL; s; s &= s - 1) {
            int d = __builtin_ctz(s);

            if (req->v[d] <= 0 || !mu_res_has(lim, d) ||
                mu_add_sat(get0(al, d), req->v[d]) <= lim->v[d])
                continue;
            if (why) {
                who(p, a, q, why);
                mu_sb_addf(why, " would exceed the most it may hold: %s ",
                           p->c->rn.name[d]);
                mu_share_figures(p->c, d, get0(al, d), req->v[d],
                                 "requested", "", lim->v[d], why);
            }
            return false;
        }
    }
    return true;
}

/* Is queue a owed the whole of need: allocated + need within deserved on
 * every dimension need asks that a deserves, and there is one? -1: yes;
 * else the first dimension that is not (MU_RES_MAX: it deserves none of
 * them). */
static int owed(const struct cap *p, int a, const struct mu_res *need)
{
    const struct mu_res *de = &p->a[a].deserved;
    const struct mu_res *al = alloc_of(p, p->c->queues[a]);
    bool any = false;

    for (uint32_t s = need->set & de->set & DIMS_ALL; s; s &= s - 1) {
        int d = __builtin_ctz(s);

        if (need->v[d] <= 0)
            continue;
        any = true;
        if (mu_add_sat(get0(al, d), need->v[d]) > de->v[d])
            return d;
    }
    return any ? -1 : MU_RES_MAX;
}

/* Admission: minResources + allocated + admitted - elastic within the
 * limit of the queue and of every queue above it; a queue above that is at
 * its limit does not refuse a gang its own queue is owed (within deserved
 * with it): reclaim makes the room, from a sibling or a cousin over its
 * share, or the gang waits admitted and says why (Volcano refuses it, and
 * then never reclaims for it). */
static enum mu_vote job_enqueueable(void *st, const struct mu_job *j,
                                    struct mu_sb *why)
{
    const struct cap *p = st;
    const struct mu_cqueue *q = j->queue;
    const struct mu_res *min = &j->pg.min_resources;
    bool leaf_owed;

    if (!q)
        return MU_VOTE_ABSTAIN;
    if (!usable(p, q, why))
        return MU_VOTE_REJECT;
    if (!j->pg.has_min_resources)
        return MU_VOTE_PERMIT;
    leaf_owed = owed(p, q->index, min) < 0;
    for (int a = q->index; a >= 0; a = parent(p, a)) {
        const struct cattr *at = &p->a[a];
        const struct mu_res *al = alloc_of(p, p->c->queues[a]);

        if (a != q->index && leaf_owed)
            continue;
        for (uint32_t s = min->set & DIMS_ALL; s; s &= s - 1) {
            int d = __builtin_ctz(s);
            int64_t v;
            char x[32], l[32];

            if (min->v[d] <= 0 || !mu_res_has(&at->limit, d))
                continue;
            v = mu_add_sat(min->v[d],
                           mu_add_sat(get0(al, d), get0(&at->inqueue, d)));
            v = mu_sub_sat(v, get0(&at->elastic, d));
            if (v <= at->limit.v[d])
                continue;
            if (why) {
                const char *r = p->c->rn.name[d];

                mu_sb_addf(why, "insufficient %s in ", r);
                who(p, a, q, why);
                mu_sb_addf(why, ": would reach %s of the %s it may hold",
                           mu_quantity_format(r, v, x, sizeof(x)),
                           mu_quantity_format(r, at->limit.v[d], l,
                                              sizeof(l)));
                if (a == q->index)
                    mu_ahead_why(&p->ahead[a], p->c, d, why);
            }
            return MU_VOTE_REJECT;
        }
    }
    return MU_VOTE_PERMIT;
}

static void job_enqueued(void *st, const struct mu_job *j)
{
    struct cap *p = st;

    if (!j->queue || !j->pg.has_min_resources)
        return;
    for (int a = j->queue->index; a >= 0; a = parent(p, a))
        mu_res_add(&p->a[a].inqueue, &j->pg.min_resources);
    j->queue->inqueue = p->a[j->queue->index].inqueue;
    mu_ahead_add(&p->ahead[j->queue->index], j, &j->pg.min_resources);
}

/* What rj lacks, cached by its counts. */
static const struct mu_res *need_of(struct cap *p, const struct mu_job *rj)
{
    return mu_share_need_of(&p->need, rj);
}

static bool preemptive(void *st, const struct mu_cqueue *q,
                       const struct mu_task *t, struct mu_sb *why)
{
    struct cap *p = st;
    const struct mu_job *j = t->job;
    const struct mu_res *need;
    int d;

    if (!usable(p, q, NULL) || !j)
        return false;
    if (mu_share_held_back(p->ssn, j, p->again_ms, "capacity.reclaimWindow",
                           why))
        return false;
    need = need_of(p, j);
    if ((d = owed(p, q->index, need)) < 0)
        return true;
    if (why && d == MU_RES_MAX)
        mu_sb_addf(why, "queue %s deserves none of what the gang asks "
                        "(spec.deserved): it takes only what is free",
                   q->spec.meta.name);
    else if (why) {
        mu_sb_addf(why, "queue %s may reclaim only within its deserved "
                        "share: %s ",
                   q->spec.meta.name, p->c->rn.name[d]);
        mu_share_figures(p->c, d, get0(alloc_of(p, q), d), need->v[d],
                         "the gang lacks", "deserved ",
                         get0(&p->a[q->index].deserved, d), why);
    }
    return false;
}

/* Does queue a hold more than it deserves in a dimension pre asks (or
 * deserve none of them while holding some)? */
static bool over(const struct cap *p, int a, const struct mu_res *ask)
{
    const struct mu_res *de = &p->a[a].deserved;
    const struct mu_res *al = alloc_of(p, p->c->queues[a]);
    bool deserves = false, holds = false;

    for (uint32_t s = ask->set & DIMS_ALL; s; s &= s - 1) {
        int d = __builtin_ctz(s);

        if (ask->v[d] <= 0)
            continue;
        holds |= get0(al, d) > 0;
        if (!mu_res_has(de, d))
            continue;
        deserves = true;
        if (get0(al, d) > de->v[d])
            return true;
    }
    return !deserves && holds;
}

/* The depth where the queues of pre and q meet (0 flat: at the root). */
static int meet(const struct cap *p, int a, int b)
{
    return p->tree ? mu_qtree_meet(&p->t, a, b) : 0;
}

/* Reclaim may take from q for pre: q and the queues above it, below
 * where q meets pre's queue, are over their share; the queues above pre's
 * queue up to there are owed what the gang lacks (see the top). */
static bool victim_queue_ok(void *st, const struct mu_task *pre,
                            const struct mu_cqueue *q, bool reclaim)
{
    struct cap *p = st;
    const struct mu_cqueue *rq = pre->job ? pre->job->queue : NULL;
    int m;

    if (!reclaim || !q || !rq)
        return true;
    m = meet(p, rq->index, q->index);
    for (int a = q->index; a >= 0 && depth(p, a) > m; a = parent(p, a))
        if (!over(p, a, pre->qreq))
            return false;
    for (int a = parent(p, rq->index); a >= 0 && depth(p, a) > m;
         a = parent(p, a))
        if (owed(p, a, need_of(p, pre->job)) >= 0)
            return false;
    return true;
}

static bool victim_ok(void *st, const struct mu_task *pre,
                      const struct mu_task *v, bool reclaim)
{
    struct cap *p = st;
    const struct mu_cqueue *q = v->job ? v->job->queue : NULL;
    const struct mu_cqueue *rq = pre->job ? pre->job->queue : NULL;
    int m;

    if (!reclaim)
        return true;
    if (p->min_run_ms > 0 && p->now_ms - v->started_ms < p->min_run_ms) {
        mu_ssn_wake_at(p->ssn, v->started_ms + p->min_run_ms);
        return false;
    }
    if (!victim_queue_ok(st, pre, q, reclaim))
        return false;
    if (!q || !rq)
        return true;
    /* each queue that loses v keeps its guarantee */
    m = meet(p, rq->index, q->index);
    for (int a = q->index; a >= 0 && depth(p, a) > m; a = parent(p, a)) {
        const struct mu_res *g = &p->a[a].guarantee;
        const struct mu_res *al = alloc_of(p, p->c->queues[a]);

        for (uint32_t s = g->set & v->qreq->set & DIMS_ALL; s; s &= s - 1) {
            int d = __builtin_ctz(s);

            if (v->qreq->v[d] > 0 &&
                mu_sub_sat(get0(al, d), v->qreq->v[d]) < g->v[d])
                return false;
        }
    }
    return true;
}

/* Nearest first: the deeper the queues meet, the lower the rank. */
static int victim_queue_rank(void *st, const struct mu_task *pre,
                             const struct mu_cqueue *q)
{
    const struct cap *p = st;
    const struct mu_cqueue *rq = pre->job ? pre->job->queue : NULL;

    if (!p->tree || !rq || !q)
        return 0;
    return p->t.maxdepth - meet(p, rq->index, q->index);
}

const struct mu_plugin mu_plugin_capacity = {
    .name = "capacity",
    .open = open_cap,
    .close = close_cap,
    .queue_order = queue_order,
    .job_enqueueable = job_enqueueable,
    .job_enqueued = job_enqueued,
    .allocatable = allocatable,
    .preemptive = preemptive,
    .victim_ok = victim_ok,
    .victim_queue_ok = victim_queue_ok,
    .victim_queue_rank = victim_queue_rank,
};
