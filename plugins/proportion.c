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
#include "share.h"

__extension__ typedef __int128 i128;

#define DIMS_ALL (~(1u << MU_RES_PODS))

/* How reclaim is damped: the plugin's arguments (README "Reclaim"). */
#define SHARE_WINDOW "30s"  /* proportion.shareWindow */
#define MIN_RUNTIME "0s"    /* proportion.reclaimMinRuntime */
#define AGAIN_WINDOW "10m"  /* proportion.reclaimWindow */

struct prop {
    struct mu_cluster *c;
    struct mu_res *elastic; /* by queue index: Σ max(allocated - min, 0) */
    struct mu_ahead *ahead; /* by queue index: the jobs in its inqueue */
    struct mu_ssn *ssn;     /* the clock, and its wake_ms */
    int64_t now_ms;
    int64_t window_ms;      /* deserved settles over it */
    int64_t min_run_ms;     /* a victim has run at least this long */
    int64_t again_ms;       /* a gang reclaim evicted reclaims no sooner */
    struct mu_res *vneed;   /* by queue index: per dimension the least a
                               waiting gang of the queue lacks (unset:
                               none waits), made for a queue when first
                               asked (vneed_made) */
    bool *vneed_made;
    struct mu_share_need need; /* of the reclaimer victim_ok asks for */
    /* by queue index: the dimensions where allocated > deserved, made at
     * over_gen - 1 (the queue's alloc_gen; 0: not made) */
    uint32_t *over;
    uint64_t *over_gen;
    /* by queue index: share(q), made at share_gen - 1 (likewise) */
    double *share;
    uint64_t *share_gen;
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
        int pending = j->count[MU_TASK_PENDING];

        /* the pending tasks' requests: a job's sum when all its tasks
         * are pending, so that the walk reads no task then (nor when
         * none is) */
        if ((size_t)pending == j->ntasks)
            mu_res_add(&w->request, mu_job_req_sum(j));
        else
            for (size_t k = 0; pending > 0 && k < j->ntasks; k++)
                if (j->tasks[k]->status == MU_TASK_PENDING)
                    mu_res_add(&w->request, j->tasks[k]->qreq);
        /* a dimension in neither set gives 0 - 0: nothing */
        for (uint32_t set = (j->allocated.set | j->pg.min_resources.set) &
                            DIMS_ALL;
             set; set &= set - 1) {
            int d = __builtin_ctz(set);
            int64_t x = mu_sub_sat(get0(&j->allocated, d),
                                   get0(&j->pg.min_resources, d));

            if (x > 0)
                mu_res_put(el, d, mu_add_sat(get0(el, d), x));
        }
        if (j->phase == MU_PG_INQUEUE && j->pg.has_min_resources &&
            !mu_job_ready(j)) {
            mu_res_add(&q->inqueue, &j->pg.min_resources);
            mu_ahead_add(ahead, j, &j->pg.min_resources);
        }
    }
}

/* Has w's queue work waiting: a request past what it holds? */
static bool asks_more(const struct wq *w)
{
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS &&
            get0(&w->request, d) > get0(&w->q->allocated, d))
            return true;
    return false;
}

/* settled of q: the least its deserved share was in the last window (now's
 * span and the MU_SHARE_SLOTS - 1 before it), now's value included;
 * without a window, deserved. Only cycles in which q has work waiting are
 * remembered: an imbalance is settled when q has waited, short of the
 * gang, for the whole window (whether the others' demand or its own new
 * work moved its share); what it deserved while it asked for nothing more
 * (its jobs ran or were ending) does not count, so a team whose work comes
 * after a quiet spell is owed at once. (Remembering only the cycles where
 * its share, not its own request, bounds q left the churn workload's
 * evictions at 4,398 against 3,788 with a 30 s window: bench/RESULTS.md.) */
static void settle(struct mu_ssn *s, const struct wq *w, int64_t window_ms)
{
    struct mu_cqueue *q = w->q;
    int64_t now_ms = s->now_ms;
    struct mu_sharehist *h = q->shares;
    bool waiting = asks_more(w);
    int64_t span;
    int k;

    q->settled = q->deserved;
    if (window_ms <= 0 || now_ms < 0)
        return;
    if (!h || h->span_ms != MU_MAX(window_ms / MU_SHARE_SLOTS, 1)) {
        if (!h)
            h = q->shares = mu_xcalloc(1, sizeof(*h));
        h->span_ms = MU_MAX(window_ms / MU_SHARE_SLOTS, 1);
        for (k = 0; k < MU_SHARE_SLOTS; k++)
            h->span[k] = -1;
    }
    span = now_ms / h->span_ms;
    k = (int)(span % MU_SHARE_SLOTS);
    if (h->span[k] != span) {
        h->span[k] = span;
        mu_res_zero(&h->lo[k]);
    }
    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t v = get0(&q->deserved, d);

        if (!mu_res_has(&q->deserved, d))
            continue;
        if (waiting)
            mu_res_put(&h->lo[k], d,
                       mu_res_has(&h->lo[k], d) ? MU_MIN(v, h->lo[k].v[d])
                                                : v);
        for (int i = 0; i < MU_SHARE_SLOTS; i++) {
            if (h->span[i] < 0 || h->span[i] <= span - MU_SHARE_SLOTS)
                continue;
            if (mu_res_has(&h->lo[i], d))
                q->settled.v[d] = MU_MIN(q->settled.v[d], h->lo[i].v[d]);
        }
        /* an older low leaves the window at a span's end */
        if (q->settled.v[d] != v)
            mu_ssn_wake_at(s, (span + 1) * h->span_ms);
    }
}

static void *open_prop(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct mu_cluster *c = ssn->cluster;
    struct prop *p = mu_xcalloc(1, sizeof(*p));
    struct wq *w = mu_xcalloc(c->nqueues + 1, sizeof(*w));
    struct mu_res guarantees;
    uint32_t dims = c->total.set;
    int64_t window;
    int n = 0;

    p->c = c;
    p->share = mu_xcalloc(c->nqueues + 1, sizeof(*p->share));
    p->share_gen = mu_xcalloc(c->nqueues + 1, sizeof(*p->share_gen));
    p->over = mu_xcalloc(c->nqueues + 1, sizeof(*p->over));
    p->over_gen = mu_xcalloc(c->nqueues + 1, sizeof(*p->over_gen));
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
    window = mu_share_arg_duration(ssn, opt, "proportion.shareWindow", SHARE_WINDOW);
    for (int i = 0; i < n; i++)
        settle(ssn, &w[i], window);
    p->ssn = ssn;
    p->now_ms = ssn->now_ms;
    p->window_ms = window;
    p->min_run_ms = mu_share_arg_duration(
        ssn, opt, "proportion.reclaimMinRuntime", MIN_RUNTIME);
    p->again_ms = mu_share_arg_duration(ssn, opt, "proportion.reclaimWindow",
                                        AGAIN_WINDOW);
    free(w);
    return p;
}

static void close_prop(struct mu_ssn *ssn, void *st)
{
    struct prop *p = st;

    free(p->elastic);
    free(p->ahead);
    free(p->vneed);
    free(p->vneed_made);
    free(p->over);
    free(p->over_gen);
    free(p->share);
    free(p->share_gen);
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

/* share(q), made again only when q's allocated moved (alloc_gen; deserved
 * stands for the session): the queue heaps of allocate, reclaim and
 * preempt compare two queues at every step. */
static double share_of(struct prop *p, const struct mu_cqueue *q)
{
    if (p->share_gen[q->index] != q->alloc_gen + 1u) {
        p->share[q->index] = share(q);
        p->share_gen[q->index] = q->alloc_gen + 1u;
    }
    return p->share[q->index];
}

static int queue_order(void *st, const struct mu_cqueue *a,
                       const struct mu_cqueue *b)
{
    double sa, sb;

    if (a->spec.priority != b->spec.priority)
        return a->spec.priority > b->spec.priority ? -1 : 1;
    sa = share_of(st, a);
    sb = share_of(st, b);
    return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/* mu_share_figures of q's allocated in dimension d. */
static void figures(const struct prop *p, const struct mu_cqueue *q, int d,
                    int64_t x, const char *what, const char *label,
                    int64_t limit, struct mu_sb *why)
{
    mu_share_figures(p->c, d, get0(&q->allocated, d), x, what, label, limit,
                     why);
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
        int64_t x;

        if (!(set & 1u))
            continue;
        x = get0(req, d);
        if (x <= 0 ||
            mu_add_sat(get0(&q->allocated, d), x) <= get0(&q->deserved, d))
            continue;
        if (why) {
            mu_sb_add(why, "queue ");
            mu_sb_add(why, q->spec.meta.name);
            mu_sb_add(why, " would exceed its deserved share: ");
            mu_sb_add(why, p->c->rn.name[d]);
            mu_sb_add(why, " ");
            figures(p, q, d, x, "requested", "deserved ",
                    get0(&q->deserved, d), why);
        }
        return false;
    }
    return true;
}

/* May q reclaim for t's gang? Only on a settled imbalance: q is owed the
 * whole of what the gang lacks against the least its deserved share was
 * over the window (so the gang, once running, is within its share and no
 * reclaim's victim), and the gang was not itself evicted by reclaim within
 * proportion.reclaimWindow (it cannot win its place straight back). why
 * gets a line only when the damping is what says no: a queue not owed even
 * by its share now has that said by allocate already. */
static bool preemptive(void *st, const struct mu_cqueue *q,
                       const struct mu_task *t, struct mu_sb *why)
{
    const struct prop *p = st;
    const struct mu_job *j = t->job;
    struct mu_res need;
    uint32_t set;

    if (!is_open(q, NULL))
        return false;
    if (!j)
        return allocatable(st, q, t, NULL);
    if (mu_share_held_back(p->ssn, j, p->again_ms,
                           "proportion.reclaimWindow", why))
        return false;
    mu_share_gang_need(j, &need);
    set = need.set & DIMS_ALL;
    for (; set; set &= set - 1) {
        int d = __builtin_ctz(set);
        int64_t after = mu_add_sat(get0(&q->allocated, d), need.v[d]);

        if (need.v[d] <= 0 || after <= get0(&q->settled, d))
            continue;
        if (why && after <= get0(&q->deserved, d)) {
            mu_sb_addf(why, "queue %s is owed the gang's %s now, not yet "
                            "over time: ",
                       q->spec.meta.name, p->c->rn.name[d]);
            figures(p, q, d, need.v[d], "the gang lacks", "",
                    get0(&q->settled, d), why);
            mu_sb_addf(why, ", the least its deserved share was in the "
                            "last %llds (proportion.shareWindow)",
                       (long long)(p->window_ms / 1000));
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

/* Reclaim may take from q for preemptor only while q holds more than it
 * deserves in a dimension preemptor asks for. Values are live: each
 * eviction lowers allocated. */
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

/* The dimensions where q's allocated is over its deserved, made again
 * only when allocated moved (alloc_gen): reclaim asks about every queue
 * for every gang, and most gangs leave the queues as they found them. */
static uint32_t over_dims(struct prop *p, const struct mu_cqueue *q)
{
    uint32_t m = 0;

    if (p->over_gen[q->index] == q->alloc_gen + 1u)
        return p->over[q->index];
    for (uint32_t set = (q->allocated.set | q->deserved.set) & DIMS_ALL; set;
         set &= set - 1) {
        int d = __builtin_ctz(set);

        if (get0(&q->allocated, d) > get0(&q->deserved, d))
            m |= 1u << d;
    }
    p->over[q->index] = m;
    p->over_gen[q->index] = q->alloc_gen + 1u;
    return m;
}

/* victim_queue_ok for n queues: the preemptor's dimensions found once,
 * each queue's over_dims kept while its allocated stands. */
static void victim_queues_ok(void *st, const struct mu_task *preemptor,
                             struct mu_cqueue *const *qs, size_t n,
                             bool reclaim, bool *ok)
{
    struct prop *p = st;
    uint32_t want = 0;

    if (!reclaim)
        return;
    for (uint32_t set = preemptor->qreq->set & DIMS_ALL; set; set &= set - 1)
        if (preemptor->qreq->v[__builtin_ctz(set)] > 0)
            want |= 1u << __builtin_ctz(set);
    for (size_t i = 0; i < n; i++) {
        const struct mu_cqueue *q = qs[i];

        if (!ok[i] || !q || !q->has_deserved)
            continue;
        ok[i] = (over_dims(p, q) & want) != 0;
    }
}

/* q's share of dimension d with delta more allocated (deserved 0: none
 * while nothing is allocated, else without bound). */
static double dshare(const struct mu_cqueue *q, int d, int64_t delta)
{
    int64_t a = mu_add_sat(get0(&q->allocated, d), delta);
    int64_t de = get0(&q->deserved, d);

    if (de <= 0)
        return a > 0 ? 1e18 : 0;
    return (double)a / (double)de;
}

/* p->vneed of queue q, made on first use in a session (only the queues
 * reclaim takes from are asked: each costs a walk over the first tasks of
 * every waiting gang it has): per dimension the least that one of its
 * waiting gangs lacks. */
static const struct mu_res *vneed_of(struct prop *p, const struct mu_cqueue *q)
{
    struct mu_res *vn;

    if (!p->vneed) {
        p->vneed = mu_xcalloc(p->c->nqueues + 1, sizeof(*p->vneed));
        p->vneed_made = mu_xcalloc(p->c->nqueues + 1, sizeof(bool));
    }
    vn = &p->vneed[q->index];
    if (p->vneed_made[q->index])
        return vn;
    p->vneed_made[q->index] = true;
    for (size_t k = 0; k < q->njobs; k++) {
        struct mu_res n;

        if (!q->jobs[k]->count[MU_TASK_PENDING])
            continue;
        mu_share_gang_need(q->jobs[k], &n);
        for (int d = 0; d < MU_RES_MAX; d++)
            if (d != MU_RES_PODS && mu_res_has(&n, d) && n.v[d] > 0)
                mu_res_put(vn, d,
                           mu_res_has(vn, d) ? MU_MIN(vn->v[d], n.v[d])
                                             : n.v[d]);
    }
    return vn;
}

/* Reclaim moves a unit from the victim's queue V to the preemptor's R only
 * while V, having lost it, keeps at least the share R reaches with its
 * gang (Kueue's LessThanOrEqualToFinalShare, dominant over the dimensions
 * the gang asks): a V left below it would be owed at once what it lost and
 * take it back. The unit is the task alone while its job runs more than
 * minMember, else the whole job (reclaim's units, evict.c). An
 * approximation: the whole-job unit of a job whose surplus was not all
 * taken first (tasks on nodes that do not help) is judged as one task. */
static bool keeps_share(struct prop *p, const struct mu_task *pre,
                        const struct mu_task *victim)
{
    const struct mu_job *vj = victim->job, *rj = pre->job;
    const struct mu_res *loss, *need;
    double r = 0, v = 0;
    bool back = false;
    uint32_t set;

    if (!vj || !rj || !vj->queue || !rj->queue)
        return true;
    need = mu_share_need_of(&p->need, rj);
    loss = mu_job_ready_num(vj) > vj->pg.min_member ? victim->qreq
                                                    : &vj->allocated;
    /* over the dimensions reclaim takes: those the gang asks and V holds
     * past its share (cpu a queue holds up to its request is not one) */
    for (set = need->set & DIMS_ALL; set; set &= set - 1) {
        int d = __builtin_ctz(set);
        const struct mu_res *vn;

        if (need->v[d] <= 0 ||
            get0(&vj->queue->allocated, d) <= get0(&vj->queue->deserved, d))
            continue;
        r = MU_MAX(r, dshare(rj->queue, d, need->v[d]));
        v = MU_MAX(v, dshare(vj->queue, d, -get0(loss, d)));
        vn = vneed_of(p, vj->queue); /* a queue past its share only */
        if (mu_res_has(vn, d) &&
            mu_add_sat(mu_sub_sat(get0(&vj->queue->allocated, d),
                                  get0(loss, d)),
                       vn->v[d]) <= get0(&vj->queue->deserved, d))
            back = true;
    }
    return !back || v >= r;
}

/* The queue's verdict; for reclaim also a victim that has run at least
 * proportion.reclaimMinRuntime and whose queue keeps its share. */
static bool victim_ok(void *st, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim)
{
    struct prop *p = st;

    if (reclaim && p->min_run_ms > 0 &&
        p->now_ms - victim->started_ms < p->min_run_ms) {
        mu_ssn_wake_at(p->ssn, victim->started_ms + p->min_run_ms);
        return false;
    }
    if (!victim_queue_ok(st, preemptor,
                         victim->job ? victim->job->queue : NULL, reclaim))
        return false;
    return !reclaim || keeps_share(p, preemptor, victim);
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
    .preemptive = preemptive,
    .victim_ok = victim_ok,
    .victim_queue_ok = victim_queue_ok,
    .victim_queues_ok = victim_queues_ok,
};
