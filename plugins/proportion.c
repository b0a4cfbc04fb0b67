/*
 * proportion.c - weight-based fair share between queues (§8.3).
 *
 * At open every queue with jobs gets its deserved share by water-filling
 * the cluster total among the queues by weight, each capped by its real
 * capability and its request and raised to its guarantee. Volcano works in
 * floats; muster splits each dimension in integers with largest-remainder
 * rounding, so no unit is lost and the result does not depend on map order.
 *
 * The pods dimension takes no part: a queue's share is about what its pods
 * use, not how many there are.
 */
#include "ahead.h"
#include "plugins.h"

__extension__ typedef __int128 i128;

#define DIMS_ALL (~(1u << MU_RES_PODS))

struct prop {
    struct mu_cluster *c;
    struct mu_res *elastic; /* by queue index: Σ max(allocated - min, 0) */
    struct mu_ahead *ahead; /* by queue index: the jobs in its inqueue */
};

/* A queue taking part in the water-fill. */
struct wq {
    struct mu_cqueue *q;
    struct mu_res request;
    bool done;
    struct mu_res add; /* this round's share */
};

struct rem {
    int64_t rem;
    int i;
};

static int64_t get0(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

static int cmp_rem(const void *a, const void *b)
{
    const struct rem *x = a, *y = b;

    if (x->rem != y->rem)
        return x->rem > y->rem ? -1 : 1;
    return x->i - y->i;
}

/*
 * Splits remaining units of dimension d among the queues not done, by
 * weight out of total weight tw: floors first, then one unit each to the
 * largest remainders (lower index first on ties).
 */
static void split(struct wq *w, int n, int d, int64_t remaining, int64_t tw,
                  struct rem *scratch)
{
    int64_t left = remaining;
    int m = 0;

    for (int i = 0; i < n; i++) {
        i128 num;

        if (w[i].done)
            continue;
        num = (i128)remaining * w[i].q->spec.weight;
        w[i].add.v[d] = (int64_t)(num / tw);
        left -= w[i].add.v[d];
        scratch[m].rem = (int64_t)(num % tw);
        scratch[m++].i = i;
    }
    if (left <= 0)
        return;
    qsort(scratch, (size_t)m, sizeof(*scratch), cmp_rem);
    for (int k = 0; k < m && k < left; k++)
        w[scratch[k].i].add.v[d]++;
}

/* One round for queue w: returns whether deserved changed; adds the
 * increase to inc. */
static bool grow(struct wq *w, uint32_t dims, struct mu_res *inc)
{
    struct mu_cqueue *q = w->q;
    bool changed = false, met = true;

    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t before, v;

        if (!((dims >> d) & 1u))
            continue;
        before = q->deserved.v[d];
        v = mu_add_sat(before, w->add.v[d]);
        if (mu_res_has(&q->real_capability, d))
            v = MU_MIN(v, q->real_capability.v[d]);
        v = MU_MIN(v, get0(&w->request, d));
        v = MU_MAX(v, get0(&q->spec.guarantee, d));
        q->deserved.v[d] = v;
        if (v != before)
            changed = true;
        if (v > before)
            inc->v[d] = mu_add_sat(inc->v[d], v - before);
    }
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && get0(&w->request, d) > get0(&q->deserved, d))
            met = false;
    w->done = met || !changed;
    return changed;
}

static void water_fill(struct mu_cluster *c, struct wq *w, int n,
                       uint32_t dims)
{
    struct rem *scratch = mu_xcalloc((size_t)n + 1, sizeof(*scratch));
    struct mu_res remaining = c->total;

    for (;;) {
        struct mu_res inc;
        int64_t tw = 0;
        bool changed = false, empty = true;

        for (int i = 0; i < n; i++)
            if (!w[i].done)
                tw += w[i].q->spec.weight;
        if (tw == 0)
            break;
        for (int d = 0; d < MU_RES_MAX; d++)
            if ((dims >> d) & 1u)
                split(w, n, d, get0(&remaining, d), tw, scratch);
        mu_res_zero(&inc);
        for (int i = 0; i < n; i++)
            if (!w[i].done && grow(&w[i], dims, &inc))
                changed = true;
        for (int d = 0; d < MU_RES_MAX; d++) {
            int64_t r;

            if (!((dims >> d) & 1u))
                continue;
            r = MU_MAX(mu_sub_sat(get0(&remaining, d), inc.v[d]), 0);
            mu_res_put(&remaining, d, r);
            if (r > 0)
                empty = false;
        }
        if (empty || !changed)
            break;
    }
    free(scratch);
}

/* min(max(total - Σ guarantees, 0) + own guarantee, capability) */
static void real_capability(struct mu_cluster *c, struct mu_cqueue *q,
                            const struct mu_res *guarantees)
{
    const struct mu_res *cap = &q->spec.capability;
    uint32_t dims = (c->total.set | guarantees->set | cap->set) & DIMS_ALL;

    mu_res_zero(&q->real_capability);
    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t v;

        if (!((dims >> d) & 1u))
            continue;
        v = mu_add_sat(
            MU_MAX(mu_sub_sat(get0(&c->total, d), get0(guarantees, d)), 0),
            get0(&q->spec.guarantee, d));
        /* Volcano: a capability cpu or memory <= 0 means unlimited */
        if (mu_res_has(cap, d) &&
            !(cap->v[d] <= 0 && (d == MU_RES_CPU || d == MU_RES_MEMORY)))
            v = MU_MIN(v, cap->v[d]);
        mu_res_put(&q->real_capability, d, v);
    }
}

/* Why q cannot reach v in dimension d: its capability when that is what
 * bounds it, else the cluster's total less what other queues are
 * guaranteed (real_capability), said as such: a queue without a
 * capability has none to quote. */
static void capability_why(const struct mu_cluster *c,
                           const struct mu_cqueue *q, int d, int64_t v,
                           struct mu_sb *why)
{
    const char *name = c->rn.name[d];
    const struct mu_res *cap = &q->spec.capability;
    int64_t others = 0, lim = q->real_capability.v[d];
    char x[32], l[32], t[32], g[32];

    for (size_t i = 0; i < c->nqueues; i++)
        if (c->queues[i] != q)
            others = mu_add_sat(others, get0(&c->queues[i]->spec.guarantee, d));
    mu_quantity_format(name, v, x, sizeof(x));
    mu_quantity_format(name, lim, l, sizeof(l));
    if (mu_res_has(cap, d) && cap->v[d] == lim &&
        !(cap->v[d] <= 0 && (d == MU_RES_CPU || d == MU_RES_MEMORY)))
        mu_sb_addf(why, "insufficient %s in queue %s: would reach %s of its "
                        "capability %s",
                   name, q->spec.meta.name, x, l);
    else if (others > 0)
        mu_sb_addf(why, "insufficient %s in queue %s: would reach %s of the "
                        "%s it may use (the cluster's %s less %s guaranteed "
                        "to other queues)",
                   name, q->spec.meta.name, x, l,
                   mu_quantity_format(name, get0(&c->total, d), t, sizeof(t)),
                   mu_quantity_format(name, others, g, sizeof(g)));
    else
        mu_sb_addf(why, "insufficient %s in queue %s: would reach %s of the "
                        "cluster's %s",
                   name, q->spec.meta.name, x, l);
}

static void scan_jobs(struct mu_cqueue *q, struct wq *w, struct mu_res *el,
                      struct mu_ahead *ahead)
{
    w->request = q->allocated;
    for (size_t i = 0; i < q->njobs; i++) {
        const struct mu_job *j = q->jobs[i];

        for (size_t k = 0; k < j->ntasks; k++)
            if (j->tasks[k]->status == MU_TASK_PENDING)
                mu_res_add(&w->request, j->tasks[k]->qreq);
        for (int d = 0; d < MU_RES_MAX; d++) {
            int64_t x = mu_sub_sat(get0(&j->allocated, d),
                                   get0(&j->pg.min_resources, d));

            if (d != MU_RES_PODS && x > 0)
                mu_res_put(el, d, mu_add_sat(get0(el, d), x));
        }
        if (j->phase == MU_PG_INQUEUE && j->pg.has_min_resources &&
            !mu_job_ready(j)) {
            mu_res_add(&q->inqueue, &j->pg.min_resources);
            mu_ahead_add(ahead, j, &j->pg.min_resources);
        }
    }
}

static void *open_prop(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct mu_cluster *c = ssn->cluster;
    struct prop *p = mu_xcalloc(1, sizeof(*p));
    struct wq *w = mu_xcalloc(c->nqueues + 1, sizeof(*w));
    struct mu_res guarantees;
    uint32_t dims = c->total.set;
    int n = 0;

    p->c = c;
    p->elastic = mu_xcalloc(c->nqueues + 1, sizeof(*p->elastic));
    p->ahead = mu_xcalloc(c->nqueues + 1, sizeof(*p->ahead));
    mu_res_zero(&guarantees);
    for (size_t i = 0; i < c->nqueues; i++) {
        struct mu_cqueue *q = c->queues[i];

        mu_res_add(&guarantees, &q->spec.guarantee);
        q->has_deserved = q->njobs > 0;
        mu_res_zero(&q->deserved);
        mu_res_zero(&q->real_capability);
        mu_res_zero(&q->inqueue);
        if (!q->has_deserved)
            continue;
        dims |= q->spec.guarantee.set;
        w[n].q = q;
        scan_jobs(q, &w[n++], &p->elastic[q->index], &p->ahead[q->index]);
    }
    dims &= DIMS_ALL;
    for (int i = 0; i < n; i++) {
        real_capability(c, w[i].q, &guarantees);
        for (int d = 0; d < MU_RES_MAX; d++)
            if ((dims >> d) & 1u)
                mu_res_put(&w[i].q->deserved, d, 0);
    }
    water_fill(c, w, n, dims);
    free(w);
    return p;
}

static void close_prop(struct mu_ssn *ssn, void *st)
{
    struct prop *p = st;

    free(p->elastic);
    free(p->ahead);
    free(p);
}

static double share(const struct mu_cqueue *q)
{
    double s = 0;
    uint32_t set = q->deserved.set & ~(1u << MU_RES_PODS);

    for (int d = 0; set; d++, set >>= 1) {
        int64_t a, de;
        double v;

        if (!(set & 1u))
            continue;
        a = get0(&q->allocated, d);
        de = q->deserved.v[d];
        v = de == 0 ? (a == 0 ? 0 : 1) : (double)a / (double)de;
        if (v > s)
            s = v;
    }
    return s;
}

static int queue_order(void *st, const struct mu_cqueue *a,
                       const struct mu_cqueue *b)
{
    double sa, sb;

    if (a->spec.priority != b->spec.priority)
        return a->spec.priority > b->spec.priority ? -1 : 1;
    sa = share(a);
    sb = share(b);
    return sa < sb ? -1 : sa > sb ? 1 : 0;
}

static bool is_open(const struct mu_cqueue *q, struct mu_sb *why)
{
    if (q->spec.state == MU_QUEUE_OPEN)
        return true;
    if (why)
        mu_sb_addf(why, "queue %s is %s", q->spec.meta.name,
                   mu_queue_state_name(q->spec.state));
    return false;
}

static bool allocatable(void *st, const struct mu_cqueue *q,
                        const struct mu_task *t, struct mu_sb *why)
{
    const struct prop *p = st;
    const struct mu_res *req = t->qreq;

    uint32_t set = req->set & ~(1u << MU_RES_PODS);

    if (!is_open(q, why))
        return false;
    for (int d = 0; set; d++, set >>= 1) {
        const char *name;
        char a[32], r[32], de[32];
        int64_t x;

        if (!(set & 1u))
            continue;
        x = get0(req, d);
        if (x <= 0 ||
            mu_add_sat(get0(&q->allocated, d), x) <= get0(&q->deserved, d))
            continue;
        if (why) {
            name = p->c->rn.name[d];
            mu_sb_addf(why,
                       "queue %s would exceed its deserved share: %s "
                       "allocated %s + %s requested > deserved %s",
                       q->spec.meta.name, name,
                       mu_quantity_format(name, get0(&q->allocated, d), a,
                                          sizeof(a)),
                       mu_quantity_format(name, x, r, sizeof(r)),
                       mu_quantity_format(name, get0(&q->deserved, d), de,
                                          sizeof(de)));
        }
        return false;
    }
    return true;
}

/* At or over its share: deserved <= allocated on every dimension deserved
 * sets, and something is allocated (an idle queue is never overused). */
static bool overused(void *st, const struct mu_cqueue *q)
{
    bool any = false;

    if (!q->has_deserved)
        return false;
    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t a = get0(&q->allocated, d);

        if (d == MU_RES_PODS || !mu_res_has(&q->deserved, d))
            continue;
        if (q->deserved.v[d] > a)
            return false;
        if (a > 0)
            any = true;
    }
    return any;
}

static enum mu_vote job_enqueueable(void *st, const struct mu_job *j,
                                    struct mu_sb *why)
{
    const struct prop *p = st;
    const struct mu_cqueue *q = j->queue;
    const struct mu_res *min = &j->pg.min_resources;
    const struct mu_res *el;
    struct mu_res low;

    if (!q || !q->has_deserved)
        return MU_VOTE_ABSTAIN;
    if (!is_open(q, why))
        return MU_VOTE_REJECT;
    if (!j->pg.has_min_resources)
        return MU_VOTE_PERMIT;
    el = &p->elastic[q->index];
    /* lower-priority work of the same queue can be preempted for j, so it
     * does not count against j's admission; its part above minResources is
     * in elastic already */
    mu_res_zero(&low);
    for (size_t i = 0; i < q->njobs; i++) {
        const struct mu_job *o = q->jobs[i];

        if (o->priority >= j->priority)
            continue;
        for (int d = 0; d < MU_RES_MAX; d++) {
            int64_t a = MU_MIN(get0(&o->allocated, d),
                               get0(&o->pg.min_resources, d));

            mu_res_put(&low, d, mu_add_sat(get0(&low, d), MU_MAX(a, 0)));
        }
    }
    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t v = get0(min, d);

        if (d == MU_RES_PODS || v <= 0 ||
            !mu_res_has(&q->real_capability, d))
            continue;
        v = mu_add_sat(v, mu_add_sat(get0(&q->allocated, d),
                                     get0(&q->inqueue, d)));
        v = mu_sub_sat(mu_sub_sat(v, get0(el, d)), get0(&low, d));
        if (v <= q->real_capability.v[d])
            continue;
        if (why) {
            capability_why(p->c, q, d, v, why);
            mu_ahead_why(&p->ahead[q->index], p->c, d, why);
        }
        return MU_VOTE_REJECT;
    }
    return MU_VOTE_PERMIT;
}

static void job_enqueued(void *st, const struct mu_job *j)
{
    struct prop *p = st;

    if (j->queue && j->queue->has_deserved && j->pg.has_min_resources) {
        mu_res_add(&j->queue->inqueue, &j->pg.min_resources);
        mu_ahead_add(&p->ahead[j->queue->index], j, &j->pg.min_resources);
    }
}

/* Reclaim may take from a queue over its deserved share on a dimension the
 * reclaimer needs. Values are live: each eviction lowers allocated. */
/* Reclaim may take from q for preemptor only while q holds more than it
 * deserves in a dimension preemptor asks for. Depends on the queue alone,
 * so victim_queue_ok is the same answer. */
static bool victim_queue_ok(void *st, const struct mu_task *preemptor,
                            const struct mu_cqueue *q, bool reclaim)
{
    uint32_t set = preemptor->qreq->set & DIMS_ALL;

    (void)st;
    if (!reclaim || !q || !q->has_deserved)
        return true;
    for (; set; set &= set - 1) {
        int d = __builtin_ctz(set);

        if (preemptor->qreq->v[d] > 0 &&
            get0(&q->allocated, d) > get0(&q->deserved, d))
            return true;
    }
    return false;
}

static bool victim_ok(void *st, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim)
{
    return victim_queue_ok(st, preemptor,
                           victim->job ? victim->job->queue : NULL, reclaim);
}

const struct mu_plugin mu_plugin_proportion = {
    .name = "proportion",
    .open = open_prop,
    .close = close_prop,
    .queue_order = queue_order,
    .job_enqueueable = job_enqueueable,
    .job_enqueued = job_enqueued,
    .allocatable = allocatable,
    .overused = overused,
    .preemptive = allocatable,
    .victim_ok = victim_ok,
    .victim_queue_ok = victim_queue_ok,
};
