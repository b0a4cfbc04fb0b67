#include "sched/actions/actions.h"

#include "common/sort.h"

#include <float.h>

/* kube-scheduler's and Volcano's adaptive sample size. */
static size_t feasible_to_find(size_t n)
{
    size_t pct, k;

    if (n < 100)
        return n;
    pct = n / 125 >= 45 ? 5 : 50 - n / 125;
    k = n * pct / 100;
    return k < 100 ? 100 : k;
}

void mu_ssn_rollback(struct mu_ssn *s, size_t mark)
{
    if (s->stmt.n > mark)
        s->free_gen++;
    mu_stmt_rollback(&s->stmt, mark);
}

static bool shape_failed(struct mu_ssn *s, int shape)
{
    return (size_t)shape < s->nshape_failed &&
           s->shape_failed[shape] == s->free_gen + 1;
}

static void mark_shape_failed(struct mu_ssn *s, int shape)
{
    if ((size_t)shape >= s->nshape_failed) {
        size_t n = (size_t)s->cluster->nshapes > (size_t)shape + 1
                       ? (size_t)s->cluster->nshapes
                       : (size_t)shape + 1;

        s->shape_failed = mu_xrealloc(s->shape_failed, n * sizeof(uint64_t));
        memset(s->shape_failed + s->nshape_failed, 0,
               (n - s->nshape_failed) * sizeof(uint64_t));
        s->nshape_failed = n;
    }
    s->shape_failed[shape] = s->free_gen + 1;
}

static void hist_add(struct mu_fit_hist *h, const struct mu_fit *f)
{
    if (!h)
        return;
    h->code[f->code]++;
    if (f->code == MU_FIT_RESOURCE)
        h->res[f->dim]++;
}

struct mu_cnode *mu_pick_node(struct mu_ssn *s, const struct mu_task *t,
                              bool future, bool *pipelined,
                              struct mu_fit_hist *hist)
{
    const struct mu_cluster *c = s->cluster;
    size_t n = c->nnodes, want = feasible_to_find(n), found = 0, i;
    struct mu_cnode *best = NULL, *best_future = NULL;
    double best_score = -DBL_MAX;
    size_t start = n ? s->rr % n : 0;

    if (pipelined)
        *pipelined = false;
    if (hist)
        memset(hist, 0, sizeof(*hist));
    for (i = 0; i < n && found < want; i++) {
        struct mu_cnode *node = c->nodes[(start + i) % n];
        struct mu_fit fit = {MU_FIT_OK, 0};
        double score;

        if (!mu_ssn_predicate(s, t, node, &fit)) {
            hist_add(hist, &fit);
            continue;
        }
        if (!mu_ssn_fits(s, t, node, false, &fit)) {
            if (future && !best_future && mu_ssn_fits(s, t, node, true, NULL))
                best_future = node;
            else
                hist_add(hist, &fit);
            continue;
        }
        found++;
        score = mu_ssn_node_score(s, t, node);
        if (score > best_score ||
            (score == best_score && node->index < best->index)) {
            best = node;
            best_score = score;
        }
    }
    s->rr += (uint32_t)i;
    if (hist)
        hist->nodes = (int)n;
    if (best)
        return best;
    if (best_future && pipelined)
        *pipelined = true;
    return best_future;
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

int mu_place_job(struct mu_ssn *s, struct mu_job *j, enum mu_place_mode mode)
{
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
        if (t->pod.besteffort && mode != MU_PLACE_DRYRUN)
            continue; /* left to backfill */
        if (mode == MU_PLACE_GANG && mu_ssn_job_ready(s, j))
            break;
        if (mode == MU_PLACE_DRYRUN &&
            mu_job_ready_num(j) + mu_job_waiting_num(j) >= j->pg.min_member)
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
        if (!dry && shape_failed(s, t->shape)) {
            if (stop_on_fail)
                break;
            continue;
        }
        node = mu_pick_node(s, t, true, &pipe, dry ? NULL : &hist);
        if (!node) {
            if (!dry) {
                mark_shape_failed(s, t->shape);
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

size_t mu_qlists_build(struct mu_ssn *s,
                       bool (*keep)(struct mu_ssn *s, struct mu_job *j),
                       struct mu_qlist **out)
{
    struct mu_cluster *c = s->cluster;
    struct mu_qlist *l = mu_xcalloc(c->nqueues ? c->nqueues : 1, sizeof(*l));
    size_t nl = 0;

    for (size_t i = 0; i < c->nqueues; i++) {
        struct mu_cqueue *q = c->queues[i];
        struct mu_qlist *e = &l[nl];

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
        nl++;
    }
    *out = l;
    return nl;
}

void mu_qlists_free(struct mu_qlist *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i].jobs);
    free(l);
}

struct mu_qlist *mu_qlists_best(struct mu_ssn *s, struct mu_qlist *l, size_t n)
{
    struct mu_qlist *best = NULL;

    for (size_t i = 0; i < n; i++)
        if (!l[i].dropped && l[i].head < l[i].n &&
            (!best || mu_ssn_queue_order(s, l[i].q, best->q) < 0))
            best = &l[i];
    return best;
}
