#include "sched/actions/place.h"

#include "common/sort.h"

#include <float.h>

void mu_place_rollback(struct mu_place *p, size_t mark)
{
    if (p->ssn->stmt.n > mark)
        p->free_gen++;
    mu_stmt_rollback(&p->ssn->stmt, mark);
}

void mu_place_freed(struct mu_place *p)
{
    p->free_gen++;
}

/* Grows *v, an array of *n items of size bytes indexed by task shape, to
 * hold shape (and every shape the cluster has); new items are zero. */
static void shape_grow(void **v, size_t *n, size_t size,
                       const struct mu_cluster *c, int shape)
{
    size_t want = (size_t)shape + 1;

    if (want <= *n)
        return;
    if ((size_t)c->nshapes > want)
        want = (size_t)c->nshapes;
    *v = mu_xrealloc(*v, want * size);
    memset((char *)*v + *n * size, 0, (want - *n) * size);
    *n = want;
}

static bool shape_failed(const struct mu_place *p, int shape)
{
    return (size_t)shape < p->nshape_failed &&
           p->shape_failed[shape] == p->free_gen + 1;
}

static void mark_shape_failed(struct mu_place *p, int shape)
{
    shape_grow((void **)&p->shape_failed, &p->nshape_failed,
               sizeof(*p->shape_failed), p->ssn->cluster, shape);
    p->shape_failed[shape] = p->free_gen + 1;
}

static void hist_add(struct mu_fit_hist *h, const struct mu_fit *f)
{
    if (!h)
        return;
    h->code[f->code]++;
    if (f->code == MU_FIT_RESOURCE)
        h->res[f->dim]++;
}

/* One node in a shape's heap. tier 1: t fits idle; 0: future idle only.
 * slot: the node's index among the heap's nodes (the cluster's node index
 * in a cluster-wide heap, its index in the domain's list in a domain's). */
struct hent {
    double score;
    int tier;
    int node;
    int slot;
};

/* An indexed heap: each node is in it at most once, with the entry it had
 * when last considered, and a node that changes is sifted from where it is
 * (or taken out when it no longer fits). It was pushed again from the
 * bottom, its old entry left to be popped as stale from the top: two walks
 * over the heap's height for every bind, and a heap that grew with them. */
struct mu_shape_heap {
    bool built;
    bool have_hist;
    size_t n;                /* entries in v */
    struct hent *v;          /* capacity nslots */
    int *pos;                /* slot -> index in v, -1: not in the heap */
    uint32_t *seen;          /* slot -> the node's gen when last considered */
    size_t nslots;
    size_t dirty_pos;        /* how much of the (domain's) dirty log is in */
    struct mu_fit_hist hist; /* why nothing fitted, last time */
};

/* a comes before b */
static bool before(const struct hent *a, const struct hent *b)
{
    if (a->tier != b->tier)
        return a->tier > b->tier;
    if (a->score != b->score)
        return a->score > b->score;
    return a->node < b->node;
}

static void heap_put(struct mu_shape_heap *h, size_t i, struct hent e)
{
    h->v[i] = e;
    h->pos[e.slot] = (int)i;
}

/* e into hole i, moving up past the entries it comes before. */
static void sift_up(struct mu_shape_heap *h, size_t i, struct hent e)
{
    while (i > 0 && before(&e, &h->v[(i - 1) / 2])) {
        heap_put(h, i, h->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_put(h, i, e);
}

/* e into hole i, moving down below the children that come before it. */
static void sift_down(struct mu_shape_heap *h, size_t i, struct hent e)
{
    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!before(&h->v[c], &e))
            break;
        heap_put(h, i, h->v[c]);
        i = c;
    }
    heap_put(h, i, e);
}

/* e into hole i, whichever way it belongs. */
static void sift(struct mu_shape_heap *h, size_t i, struct hent e)
{
    if (i > 0 && before(&e, &h->v[(i - 1) / 2]))
        sift_up(h, i, e);
    else
        sift_down(h, i, e);
}

/* Slot's entry out of the heap, if it is in. */
static void heap_remove(struct mu_shape_heap *h, int slot)
{
    int at = h->pos[slot];
    struct hent last;

    if (at < 0)
        return;
    h->pos[slot] = -1;
    last = h->v[--h->n];
    if ((size_t)at < h->n)
        sift(h, (size_t)at, last);
}

/* An empty heap over nslots nodes. */
static void heap_alloc(struct mu_shape_heap *h, size_t nslots)
{
    h->nslots = nslots;
    h->v = mu_xcalloc(nslots ? nslots : 1, sizeof(*h->v));
    h->pos = mu_xcalloc(nslots ? nslots : 1, sizeof(*h->pos));
    h->seen = mu_xcalloc(nslots ? nslots : 1, sizeof(*h->seen));
    for (size_t i = 0; i < nslots; i++)
        h->pos[i] = -1;
}

/* n as a candidate for t: false when it does not fit t even in future
 * idle, else its entry (tier, score) in *e. */
static bool node_entry(struct mu_ssn *s, const struct mu_task *t,
                       const struct mu_cnode *n, struct hent *e)
{
    if (!mu_ssn_predicate(s, t, n, NULL))
        return false;
    if (mu_ssn_fits(s, t, n, false, NULL))
        e->tier = 1;
    else if (mu_ssn_fits(s, t, n, true, NULL))
        e->tier = 0;
    else
        return false;
    e->score = mu_ssn_node_score(s, t, n);
    e->node = n->index;
    e->slot = -1;
    return true;
}

/* Node n (slot in h) as it is now: in place, in, or out. A node the log
 * names again at the generation it was considered at is as it was (a
 * batch of the log names a node once per change: a place, its rollback,
 * an eviction). */
static void consider(struct mu_place *p, struct mu_shape_heap *h,
                     const struct mu_task *t, struct mu_cnode *n, int slot)
{
    struct mu_ssn *s = p->ssn;
    struct hent e;
    int at = h->pos[slot];

    if (h->seen[slot] == n->gen)
        return;
    h->seen[slot] = n->gen;
    p->nrescored++;
    if (!node_entry(s, t, n, &e)) {
        heap_remove(h, slot);
        return;
    }
    e.slot = slot;
    if (at >= 0) {
        sift(h, (size_t)at, e);
        return;
    }
    sift_up(h, h->n++, e);
}

/* The first fill: every fitting node of nodes[0..nn) (indexes into the
 * cluster's nodes, NULL: the cluster's own order), then heapify. */
static void heap_build(struct mu_ssn *s, struct mu_shape_heap *h,
                       const struct mu_task *t, const int *nodes, size_t nn)
{
    const struct mu_cluster *c = s->cluster;

    heap_alloc(h, nn);
    for (size_t i = 0; i < nn; i++) {
        struct mu_cnode *n = c->nodes[nodes ? (size_t)nodes[i] : i];
        struct hent e;

        h->seen[i] = n->gen;
        if (!node_entry(s, t, n, &e))
            continue;
        e.slot = (int)i;
        heap_put(h, h->n++, e);
    }
    for (size_t i = h->n / 2; i-- > 0;)
        sift_down(h, i, h->v[i]);
    h->built = true;
}

static struct mu_shape_heap *shape_heap(struct mu_place *p,
                                        const struct mu_task *t)
{
    struct mu_ssn *s = p->ssn;
    struct mu_cluster *c = s->cluster;
    struct mu_shape_heap *h;

    shape_grow((void **)&p->heaps, &p->nheaps, sizeof(*p->heaps), c,
               t->shape);
    h = &p->heaps[t->shape];
    if (!h->built) {
        heap_build(s, h, t, NULL, c->nnodes);
        h->dirty_pos = c->ndirty;
    }
    for (; h->dirty_pos < c->ndirty; h->dirty_pos++) {
        int n = c->dirty[h->dirty_pos];

        consider(p, h, t, c->nodes[n], n);
    }
    return h;
}

/* One domain's heaps (per shape) and its share of the dirty log (the
 * nodes' slots in the domain's list). */
struct mu_domheap {
    size_t nheaps;
    struct mu_shape_heap *heaps;
    size_t ndirty, cap_dirty;
    int *dirty;
};

const struct mu_domnodes *mu_place_domnodes(struct mu_place *p)
{
    const struct mu_cluster *c = p->ssn->cluster;
    const struct mu_topo *t = c->topo;
    size_t *fill;

    if (p->dn.off)
        return &p->dn;
    p->dn.off = mu_xcalloc(c->nnodes + 1, sizeof(*p->dn.off));
    for (size_t k = 0; t && k < t->ndom; k++)
        for (size_t i = 0; i < t->dom[k].n; i++)
            p->dn.off[t->dom[k].nodes[i] + 1]++;
    for (size_t i = 0; i < c->nnodes; i++)
        p->dn.off[i + 1] += p->dn.off[i];
    p->dn.doms = mu_xcalloc(p->dn.off[c->nnodes] ? p->dn.off[c->nnodes] : 1,
                            sizeof(*p->dn.doms));
    p->dn.slot = mu_xcalloc(p->dn.off[c->nnodes] ? p->dn.off[c->nnodes] : 1,
                            sizeof(*p->dn.slot));
    fill = mu_xcalloc(c->nnodes ? c->nnodes : 1, sizeof(*fill));
    for (size_t k = 0; t && k < t->ndom; k++)
        for (size_t i = 0; i < t->dom[k].n; i++) {
            int n = t->dom[k].nodes[i];

            p->dn.slot[p->dn.off[n] + fill[n]] = (int)i;
            p->dn.doms[p->dn.off[n] + fill[n]++] = (int)k;
        }
    free(fill);
    return &p->dn;
}

/* The heap of t's shape among domain k's nodes, up to date. */
static struct mu_shape_heap *dom_heap(struct mu_place *p,
                                      const struct mu_task *t, size_t k)
{
    struct mu_ssn *s = p->ssn;
    struct mu_cluster *c = s->cluster;
    const struct mu_domain *d = &c->topo->dom[k];
    const struct mu_domnodes *dn = mu_place_domnodes(p);
    struct mu_domheap *dh;
    struct mu_shape_heap *h;

    if (!p->domheaps) {
        p->ndomheaps = c->topo->ndom;
        p->domheaps = mu_xcalloc(p->ndomheaps ? p->ndomheaps : 1,
                                 sizeof(*p->domheaps));
    }
    /* hand the cluster's new dirty entries to the domains of their nodes */
    for (; p->dn_dirty_pos < c->ndirty; p->dn_dirty_pos++) {
        int n = c->dirty[p->dn_dirty_pos];

        for (size_t i = dn->off[n]; i < dn->off[n + 1]; i++) {
            struct mu_domheap *e = &p->domheaps[dn->doms[i]];

            if (!e->nheaps)
                continue; /* no heap yet: it reads the nodes when built */
            mu_xgrow((void **)&e->dirty, &e->cap_dirty, e->ndirty + 1,
                     sizeof(*e->dirty));
            e->dirty[e->ndirty++] = dn->slot[i];
        }
    }
    dh = &p->domheaps[k];
    shape_grow((void **)&dh->heaps, &dh->nheaps, sizeof(*dh->heaps), c,
               t->shape);
    h = &dh->heaps[t->shape];
    if (!h->built) {
        heap_build(s, h, t, d->nodes, d->n);
        h->dirty_pos = dh->ndirty;
    }
    for (; h->dirty_pos < dh->ndirty; h->dirty_pos++) {
        int slot = dh->dirty[h->dirty_pos];

        consider(p, h, t, c->nodes[d->nodes[slot]], slot);
    }
    return h;
}

void mu_place_init(struct mu_place *p, struct mu_ssn *s)
{
    memset(p, 0, sizeof(*p));
    p->ssn = s;
}

static void heap_free(struct mu_shape_heap *h)
{
    free(h->v);
    free(h->pos);
    free(h->seen);
}

void mu_place_release(struct mu_place *p)
{
    for (size_t i = 0; i < p->nheaps; i++)
        heap_free(&p->heaps[i]);
    free(p->heaps);
    for (size_t k = 0; k < p->ndomheaps; k++) {
        for (size_t i = 0; i < p->domheaps[k].nheaps; i++)
            heap_free(&p->domheaps[k].heaps[i]);
        free(p->domheaps[k].heaps);
        free(p->domheaps[k].dirty);
    }
    free(p->domheaps);
    free(p->dn.off);
    free(p->dn.doms);
    free(p->dn.slot);
    free(p->shape_failed);
    memset(p, 0, sizeof(*p));
}

/* Why no node fits t: every node's first failing check. */
static void fill_hist(struct mu_ssn *s, const struct mu_task *t,
                      struct mu_fit_hist *hist)
{
    const struct mu_cluster *c = s->cluster;

    memset(hist, 0, sizeof(*hist));
    hist->nodes = (int)c->nnodes;
    for (size_t i = 0; i < c->nnodes; i++) {
        struct mu_fit fit = {MU_FIT_OK, 0};

        if (mu_ssn_predicate(s, t, c->nodes[i], &fit) &&
            mu_ssn_fits(s, t, c->nodes[i], true, &fit))
            continue;
        hist_add(hist, &fit);
    }
}

/* Without pipelining (backfill): the first best node fitting idle. */
static struct mu_cnode *scan_idle(struct mu_ssn *s, const struct mu_task *t)
{
    const struct mu_cluster *c = s->cluster;
    struct mu_cnode *best = NULL;
    double best_score = -DBL_MAX;

    for (size_t i = 0; i < c->nnodes; i++) {
        struct mu_cnode *n = c->nodes[i];
        double score;

        if (!mu_ssn_predicate(s, t, n, NULL) ||
            !mu_ssn_fits(s, t, n, false, NULL))
            continue;
        score = mu_ssn_node_score(s, t, n);
        if (!best || score > best_score) {
            best = n;
            best_score = score;
        }
    }
    return best;
}

/* Every node, best first by tier then score (the heap's order), for a
 * task whose fit the shape's heap cannot follow: one of its claims is
 * shared with other pods, so the first to take it moves where the others
 * fit without their nodes changing. */
static struct mu_cnode *scan_all(struct mu_ssn *s, const struct mu_task *t,
                                 const struct mu_domain *only, bool *pipelined,
                                 struct mu_fit_hist *hist)
{
    const struct mu_cluster *c = s->cluster;
    struct mu_cnode *best = NULL;
    struct hent b = {0, -1, 0, -1};
    size_t nn = only ? only->n : c->nnodes;

    for (size_t i = 0; i < nn; i++) {
        struct mu_cnode *n = c->nodes[only ? (size_t)only->nodes[i] : i];
        struct hent e;

        if (!node_entry(s, t, n, &e))
            continue;
        if (!best || before(&e, &b)) {
            best = n;
            b = e;
        }
    }
    if (best && pipelined)
        *pipelined = b.tier == 0;
    if (!best && hist && !only)
        fill_hist(s, t, hist);
    return best;
}

struct mu_cnode *mu_pick_node(struct mu_place *p, const struct mu_task *t,
                              bool future, bool *pipelined,
                              struct mu_fit_hist *hist)
{
    struct mu_ssn *s = p->ssn;
    struct mu_cluster *c = s->cluster;
    struct mu_shape_heap *h;

    if (pipelined)
        *pipelined = false;
    if (!future)
        return scan_idle(s, t);
    if (t->dd_shared || p->plain)
        return scan_all(s, t, p->only, pipelined, p->only ? NULL : hist);
    if (p->only) {
        h = dom_heap(p, t, (size_t)(p->only - c->topo->dom));
        hist = NULL;
    } else {
        h = shape_heap(p, t);
    }
    if (h->n) {
        if (pipelined)
            *pipelined = h->v[0].tier == 0;
        return c->nodes[h->v[0].node];
    }
    if (hist) {
        if (!h->have_hist) {
            fill_hist(s, t, &h->hist);
            h->have_hist = true;
        }
        *hist = h->hist;
    }
    return NULL;
}

bool mu_job_schedulable(struct mu_ssn *s, struct mu_job *j)
{
    struct mu_sb why;
    bool ok;

    if (!j->queue || j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE ||
        j->phase == MU_PG_COMPLETED)
        return false;
    if (!j->count[MU_TASK_PENDING])
        return false;
    mu_sb_init(&why);
    ok = mu_ssn_job_valid(s, j, &why);
    if (!ok)
        mu_why_set(j, MU_WHY_NOT_ENOUGH_TASKS, why.buf ? why.buf : "");
    mu_sb_release(&why);
    return ok;
}

int mu_place_job(struct mu_place *p, struct mu_job *j,
                 enum mu_place_mode mode, int want)
{
    struct mu_ssn *s = p->ssn;
    bool dry = mode == MU_PLACE_DRYRUN;
    int placed = 0;
    bool stop_on_fail = (size_t)j->pg.min_member >= j->ntasks;

    for (size_t i = 0; i < j->ntasks; i++) {
        struct mu_task *t = j->tasks[i];
        struct mu_fit_hist hist;
        struct mu_cnode *node;
        bool pipe = false;
        struct mu_sb why;

        if (t->status != MU_TASK_PENDING || mu_task_gated_by_others(t))
            continue;
        /* a pod of one private claim reads its claim's first line in its
         * first fit check and writes both when it is placed (struct
         * mu_dclaim, line-aligned): ask for them now, while the checks
         * below run */
        if (t->dd_one) {
            __builtin_prefetch(t->dd_one, 1);
            __builtin_prefetch((const char *)t->dd_one + 64, 1);
        }
        /* BestEffort members count for the gang: leaving them to backfill
         * would deadlock a gang that is not ready without them (allocate
         * discards the rest, backfill cannot make it ready alone). Beyond
         * the gang they are left to backfill, as in Volcano, except in a
         * gang held to one domain (p->only): backfill would place them
         * anywhere. */
        if (t->pod.besteffort && mode == MU_PLACE_ONE && !p->only)
            continue;
        if (mode == MU_PLACE_GANG && mu_ssn_job_ready(s, j))
            break;
        if (mode == MU_PLACE_DRYRUN &&
            mu_job_ready_num(j) + mu_job_waiting_num(j) >=
                (want > 0 ? want : j->pg.min_member))
            break;
        mu_sb_init(&why);
        if (!mu_ssn_allocatable(s, j->queue, t, dry ? NULL : &why)) {
            if (!dry && j->why.kind == MU_WHY_NONE)
                mu_why_set(j, MU_WHY_QUEUE_SHARE, why.buf ? why.buf : "");
            mu_sb_release(&why);
            if (stop_on_fail)
                break;
            continue;
        }
        mu_sb_release(&why);
        if (!dry && !p->only && shape_failed(p, t->shape)) {
            if (stop_on_fail)
                break;
            continue;
        }
        node = mu_pick_node(p, t, true, &pipe, dry ? NULL : &hist);
        if (!node) {
            if (!dry && !p->only) {
                mark_shape_failed(p, t->shape);
                if (j->why.kind == MU_WHY_NONE ||
                    j->why.kind == MU_WHY_WAITING) {
                    mu_why_set(j, MU_WHY_NODES, NULL);
                    j->why.hist = hist;
                    j->why.task = t;
                }
            }
            if (stop_on_fail)
                break;
            continue;
        }
        mu_stmt_place(&s->stmt, t, node,
                      pipe ? MU_TASK_PIPELINED : MU_TASK_ALLOCATED);
        placed++;
        if (mode == MU_PLACE_ONE && !pipe)
            break;
    }
    if (!dry && j->why.kind != MU_WHY_NONE)
        j->why.placed = placed;
    return placed;
}

void mu_commit_job(struct mu_ssn *s, struct mu_job *j)
{
    for (size_t i = 0; i < j->ntasks; i++) {
        struct mu_task *t = j->tasks[i];

        if (t->status != MU_TASK_ALLOCATED)
            continue;
        mu_task_set_status(s->cluster, t, MU_TASK_BINDING);
        mu_ssn_add_bind(s, t);
    }
}

static int job_cmp(const void *a, const void *b, void *ssn)
{
    return mu_ssn_job_order(ssn, a, b);
}

static int queue_cmp(const void *a, const void *b, void *ssn)
{
    return mu_ssn_queue_order(ssn, a, b);
}

void mu_sort_jobs(struct mu_ssn *s, struct mu_job **v, size_t n)
{
    mu_sort_ptrs((void **)v, n, job_cmp, s);
}

void mu_sort_queues(struct mu_ssn *s, struct mu_cqueue **v, size_t n)
{
    mu_sort_ptrs((void **)v, n, queue_cmp, s);
}

static bool qbefore(struct mu_ssn *s, const struct mu_qlist *a,
                    const struct mu_qlist *b)
{
    return mu_ssn_queue_order(s, a->q, b->q) < 0;
}

static void qsift_down(struct mu_ssn *s, struct mu_qset *q, size_t i)
{
    struct mu_qlist *x = q->heap[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= q->nheap)
            break;
        if (c + 1 < q->nheap && qbefore(s, q->heap[c + 1], q->heap[c]))
            c++;
        if (!qbefore(s, q->heap[c], x))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    q->heap[i] = x;
}

void mu_qset_build(struct mu_ssn *s,
                   bool (*keep)(struct mu_ssn *s, struct mu_job *j),
                   struct mu_qset *out)
{
    struct mu_cluster *c = s->cluster;

    memset(out, 0, sizeof(*out));
    out->l = mu_xcalloc(c->nqueues ? c->nqueues : 1, sizeof(*out->l));
    for (size_t i = 0; i < c->nqueues; i++) {
        struct mu_cqueue *q = c->queues[i];
        struct mu_qlist *e = &out->l[out->n];

        e->q = q;
        e->jobs = mu_xcalloc(q->njobs ? q->njobs : 1, sizeof(*e->jobs));
        for (size_t k = 0; k < q->njobs; k++)
            if (keep(s, q->jobs[k]))
                e->jobs[e->n++] = q->jobs[k];
        if (!e->n) {
            free(e->jobs);
            memset(e, 0, sizeof(*e));
            continue;
        }
        mu_sort_jobs(s, e->jobs, e->n);
        out->n++;
    }
    out->heap = mu_xcalloc(out->n ? out->n : 1, sizeof(*out->heap));
    for (size_t i = 0; i < out->n; i++)
        out->heap[out->nheap++] = &out->l[i];
    for (size_t i = out->nheap / 2; i-- > 0;)
        qsift_down(s, out, i);
}

void mu_qset_free(struct mu_qset *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->l[i].jobs);
    free(q->l);
    free(q->heap);
    memset(q, 0, sizeof(*q));
}

struct mu_qlist *mu_qset_next(struct mu_ssn *s, struct mu_qset *q)
{
    if (q->last && q->nheap)
        qsift_down(s, q, 0); /* the last one served is on top */
    q->last = NULL;
    while (q->nheap) {
        struct mu_qlist *top = q->heap[0];

        if (!top->dropped && top->head < top->n) {
            q->last = top;
            return top;
        }
        q->heap[0] = q->heap[--q->nheap];
        if (q->nheap)
            qsift_down(s, q, 0);
    }
    return NULL;
}
