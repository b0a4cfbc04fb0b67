/*
 * reclaim and preempt: make room for a starving gang by evicting whole
 * gangs or the elastic surplus of gangs, never cutting a running gang below
 * its minMember, and only when a dry run shows the gang fits afterwards.
 *
 * Victim units: the surplus tasks of a job above its minMember (one unit
 * each, highest task index first) and the whole job. Units are tried from
 * the queues of the lowest victim rank first (framework.h: capacity's tree
 * puts siblings before cousins), then lowest priority first, youngest job first, and a job's surplus before the job
 * itself; once the waiting gang fits, every chosen unit that is not needed
 * is dropped again (the plan is minimal). Nothing is evicted when the gang
 * would not fit even after every eligible unit is gone.
 */
#include "sched/actions/actions.h"

struct unit {
    struct mu_job *job;
    struct mu_task *task; /* NULL: the whole job */
    int seq;              /* made in this order within the job */
    int rank;             /* its queue's victim rank (reclaim: nearest
                             queues in the tree first) */
    bool dropped;
};

struct plan {
    size_t n, cap;
    struct unit *u;
};

static bool running(const struct mu_task *t)
{
    return t->status == MU_TASK_RUNNING || t->status == MU_TASK_BOUND;
}

static const struct mu_task *first_pending(const struct mu_job *j)
{
    /* the count first: a running job's tasks are not read (reclaim asks
     * about every job of the cluster) */
    if (!j->count[MU_TASK_PENDING])
        return NULL;
    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->status == MU_TASK_PENDING && !mu_task_gated_by_others(j->tasks[i]))
            return j->tasks[i];
    return NULL;
}

/* Could evicting v help t at all: same dimensions, a node t may use? */
static bool relevant(struct mu_ssn *s, const struct mu_task *t,
                     const struct mu_task *v)
{
    bool dim = false;

    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && t->qreq->v[d] > 0 && v->qreq->v[d] > 0)
            dim = true;
    return dim && v->node && mu_ssn_predicate(s, t, v->node, NULL);
}

static bool eligible(struct mu_ssn *s, const struct mu_task *pre,
                     const struct mu_task *v, bool reclaim)
{
    return running(v) && v->pod.preemptable &&
           mu_ssn_victim_ok(s, pre, v, reclaim);
}

static void add_unit(struct plan *p, struct mu_job *j, struct mu_task *t,
                     int seq, int rank)
{
    mu_xgrow((void **)&p->u, &p->cap, p->n + 1, sizeof(*p->u));
    p->u[p->n].job = j;
    p->u[p->n].task = t;
    p->u[p->n].seq = seq;
    p->u[p->n].rank = rank;
    p->u[p->n].dropped = false;
    p->n++;
}

/* The victim order of jobs, total: lowest priority, youngest, key. */
static int job_cmp(const struct mu_job *x, const struct mu_job *y)
{
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    if (x->pg.meta.created != y->pg.meta.created)
        return x->pg.meta.created > y->pg.meta.created ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int job_ptr_cmp(const void *a, const void *b)
{
    return job_cmp(*(struct mu_job *const *)a, *(struct mu_job *const *)b);
}

/* A total order: by the queues' victim rank, then jobs by job_cmp; within a job its surplus tasks by task
 * index, highest first (equal indices in the order they were made: reverse
 * task order), then the whole job. A job's units are therefore contiguous,
 * and the order of two jobs' units is the order of the jobs. */
static int unit_cmp(const void *a, const void *b)
{
    const struct unit *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->job != y->job)
        return job_cmp(x->job, y->job);
    if (!x->task || !y->task)
        return x->task ? -1 : (y->task ? 1 : 0);
    if (x->task->pod.task_index != y->task->pod.task_index)
        return x->task->pod.task_index > y->task->pod.task_index ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/*
 * The possible victims of one action: the jobs that had something running
 * when it started (evictions only ever shrink that set), in key order, and
 * the same jobs grouped by queue index (job_cmp order within a queue).
 */
struct wq;

struct victims {
    size_t n;
    struct mu_job **jobs;
    size_t *qfirst;       /* by queue index: its jobs are */
    size_t *qn;           /* byq[qfirst[i] .. qfirst[i] + qn[i]) */
    struct mu_job **byq;
    size_t *live;         /* by byq index: i, or past i when byq[i] is known
                             to have nothing running (see live_from) */
    bool plain;           /* take the straightforward scan (tests) */
    struct wq *wq;        /* nqueues: the heap of every walk (one at a
                             time), made once per action, not per gang */
    struct mu_cqueue **cand; /* nqueues: a walk's queues to ask about */
    bool *ok;             /* nqueues: their verdicts */
    size_t nrq;           /* reclaim: the reclaimable queues with running */
    struct mu_cqueue **rq;/* jobs, in queue order (a walk's candidates
                             but the preemptor's own queue) */
};

/* A queue in a walk's heap (struct walk). */
struct wq {
    struct mu_cqueue *q;
    int rank;         /* mu_ssn_victim_queue_rank (reclaim) */
    size_t next, end; /* its jobs left: vs->byq[next .. end) */
};

/* The first job of byq[i .. end) not known to have nothing running, or
 * end; the chains it follows are shortened on the way. */
static size_t live_from(struct victims *vs, size_t i, size_t end)
{
    size_t r = i;

    while (r < end && vs->live[r] != r)
        r = vs->live[r];
    while (i < r) {
        size_t n = vs->live[i];

        vs->live[i] = r;
        i = n;
    }
    return r;
}

/* The units of victim job v for preemptor pre of job j. */
static void job_units(struct mu_ssn *s, const struct mu_task *pre,
                      bool reclaim, struct mu_job *v, int rank,
                      struct plan *p)
{
    int surplus = mu_job_ready_num(v) - v->pg.min_member, seq = 0;
    bool whole = true, useful = false;

    if (v->count[MU_TASK_RUNNING] + v->count[MU_TASK_BOUND] == 0)
        return;
    for (size_t k = v->ntasks; k-- > 0;) {
        struct mu_task *t = v->tasks[k];

        if (!running(t))
            continue;
        if (!eligible(s, pre, t, reclaim)) {
            whole = false;
            continue;
        }
        if (!relevant(s, pre, t))
            continue;
        useful = true;
        if (surplus > 0) {
            add_unit(p, v, t, seq++, rank);
            surplus--;
        }
    }
    if (whole && useful)
        add_unit(p, v, NULL, seq, rank);
}

/* May v's jobs give way to j: another reclaimable queue (reclaim), or
 * j's queue and a lower priority (preempt)? */
static bool victim_job(const struct mu_job *j, const struct mu_job *v,
                       bool reclaim)
{
    if (v == j || !v->queue)
        return false;
    return reclaim ? v->queue != j->queue && v->queue->spec.reclaimable
                   : v->queue == j->queue && v->priority < j->priority;
}

/* The reference (vs->plain, tests): every unit of every victim job,
 * sorted. */
static void candidates(struct mu_ssn *s, struct mu_job *j,
                       const struct mu_task *pre, bool reclaim,
                       const struct victims *vs, struct plan *p)
{
    for (size_t i = 0; i < vs->n; i++)
        if (victim_job(j, vs->jobs[i], reclaim))
            job_units(s, pre, reclaim, vs->jobs[i],
                      reclaim ? mu_ssn_victim_queue_rank(s, pre,
                                                         vs->jobs[i]->queue)
                              : 0,
                      p);
    if (p->n > 1)
        qsort(p->u, p->n, sizeof(*p->u), unit_cmp);
}

/*
 * The same units in the same order, made one victim job at a time as the
 * caller reaches them (struct walk): the queues that may give way are
 * merged by their rank, then by their next job in job_cmp order. Reclaim
 * skips j's queue and queues that are not reclaimable, preempt looks at j's queue alone, and a
 * queue leaves the walk as soon as a plugin's victim_queue_ok rules it out
 * in the current state (none of its tasks is eligible then, and evictions
 * never make one eligible again: framework.h).
 *
 * Judging a job when it is reached rather than when the action starts
 * decides the same: a job's units are contiguous in the order, so its
 * tasks are still running when it is reached, and a verdict that turned
 * false since (proportion's, once the queue is down to its share) would
 * have dropped every unit of the job at still_owed anyway. A gang that
 * fits after its first units is why: the walk stops there instead of
 * making the units of every running job.
 */
struct walk {
    struct mu_ssn *s;
    const struct mu_task *pre;
    bool reclaim;
    int32_t below;     /* preempt: victims have a lower job priority */
    struct victims *vs;
    size_t n;          /* queues left in the heap */
    struct wq *h;      /* a min-heap by the job at next (vs->wq) */
};

static bool wq_less(const struct walk *w, const struct wq *a,
                    const struct wq *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank;
    return job_cmp(w->vs->byq[a->next], w->vs->byq[b->next]) < 0;
}

static void walk_sift(struct walk *w, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        struct wq t;

        if (l < w->n && wq_less(w, &w->h[l], &w->h[m]))
            m = l;
        if (l + 1 < w->n && wq_less(w, &w->h[l + 1], &w->h[m]))
            m = l + 1;
        if (m == i)
            return;
        t = w->h[i];
        w->h[i] = w->h[m];
        w->h[m] = t;
        i = m;
    }
}

static void walk_drop_top(struct walk *w)
{
    w->h[0] = w->h[--w->n];
    walk_sift(w, 0);
}

static void walk_init(struct walk *w, struct mu_ssn *s, struct mu_job *j,
                      const struct mu_task *pre, bool reclaim,
                      struct victims *vs)
{
    size_t ncand = 0;

    w->s = s;
    w->pre = pre;
    w->reclaim = reclaim;
    w->below = j->priority;
    w->vs = vs;
    w->n = 0;
    w->h = vs->wq;
    if (reclaim) {
        for (size_t i = 0; i < vs->nrq; i++)
            if (vs->rq[i] != j->queue)
                vs->cand[ncand++] = vs->rq[i];
    } else if (j->queue && vs->qn[j->queue->index]) {
        vs->cand[ncand++] = j->queue;
    }
    mu_ssn_victim_queues_ok(s, pre, vs->cand, ncand, reclaim, vs->ok);
    for (size_t i = 0; i < ncand; i++) {
        struct mu_cqueue *q = vs->cand[i];
        size_t qi = (size_t)q->index;

        if (!vs->ok[i])
            continue;
        w->h[w->n].q = q;
        w->h[w->n].rank = reclaim ? mu_ssn_victim_queue_rank(s, pre, q) : 0;
        w->h[w->n].next = vs->qfirst[qi];
        w->h[w->n].end = vs->qfirst[qi] + vs->qn[qi];
        w->n++;
    }
    for (size_t i = w->n / 2; i-- > 0;)
        walk_sift(w, i);
}

static bool runs_nothing(const struct mu_job *v)
{
    return v->count[MU_TASK_RUNNING] + v->count[MU_TASK_BOUND] == 0;
}

/* The next victim job in job_cmp order whose queue may still give way and
 * that still runs something, or NULL. Preempt takes only jobs of a lower
 * priority than j's: the rest of a queue is past them once one is not
 * (job_cmp puts the lowest first). A job found running nothing is skipped
 * for the rest of the action: the walk evicts only from jobs it has
 * passed, so what a job it reaches has lost was committed, and committed
 * evictions stay. */
static struct mu_job *walk_next(struct walk *w, int *rank)
{
    while (w->n) {
        struct wq *top = &w->h[0];
        struct mu_job *v;
        size_t nx = live_from(w->vs, top->next, top->end);

        while (nx < top->end && runs_nothing(w->vs->byq[nx])) {
            w->vs->live[nx] = nx + 1;
            nx = live_from(w->vs, nx + 1, top->end);
        }
        if (nx == top->end) {
            walk_drop_top(w);
            continue;
        }
        if (nx != top->next) { /* its key moved on: back in place first */
            top->next = nx;
            walk_sift(w, 0);
            continue;
        }
        if ((!w->reclaim && w->vs->byq[top->next]->priority >= w->below) ||
            !mu_ssn_victim_queue_ok(w->s, w->pre, top->q, w->reclaim)) {
            walk_drop_top(w);
            continue;
        }
        v = w->vs->byq[top->next++];
        *rank = top->rank;
        if (top->next == top->end)
            walk_drop_top(w);
        else
            walk_sift(w, 0);
        return v;
    }
    return NULL;
}

static void evict_unit(struct mu_ssn *s, const struct unit *u)
{
    if (u->task) {
        if (running(u->task))
            mu_stmt_evict(&s->stmt, u->task);
        return;
    }
    for (size_t i = 0; i < u->job->ntasks; i++)
        if (running(u->job->tasks[i]))
            mu_stmt_evict(&s->stmt, u->job->tasks[i]);
}

/* Would the job reach want ready-or-waiting tasks (its minMember, or one
 * more task for an elastic job that is ready already)? */
static bool gang_fits(struct mu_place *p, struct mu_job *j, int want)
{
    struct mu_ssn *s = p->ssn;
    size_t mark = mu_stmt_mark(&s->stmt);
    bool ok;

    mu_place_job(p, j, MU_PLACE_DRYRUN, want);
    ok = mu_job_ready_num(j) + mu_job_waiting_num(j) >= want;
    mu_stmt_rollback(&s->stmt, mark);
    return ok;
}

static bool still_owed(struct mu_ssn *s, const struct mu_task *pre,
                       const struct unit *u, bool reclaim)
{
    const struct mu_task *v = u->task;

    if (!v) {
        for (size_t i = 0; i < u->job->ntasks && !v; i++)
            if (running(u->job->tasks[i]))
                v = u->job->tasks[i];
    }
    return v && running(v) && mu_ssn_victim_ok(s, pre, v, reclaim);
}

/* Evicts units from..p->n in order, dropping those no longer owed, until
 * the gang fits (true; *chosen is then one past the last unit evicted). */
static bool try_units(struct mu_place *pl, struct mu_job *j,
                      const struct mu_task *pre, bool reclaim, int want,
                      struct plan *p, size_t from, size_t *chosen)
{
    struct mu_ssn *s = pl->ssn;

    for (size_t i = from; i < p->n; i++) {
        if (!still_owed(s, pre, &p->u[i], reclaim)) {
            p->u[i].dropped = true;
            continue;
        }
        evict_unit(s, &p->u[i]);
        *chosen = i + 1;
        if (gang_fits(pl, j, want))
            return true;
    }
    return false;
}

static void apply(struct mu_ssn *s, struct plan *p, size_t skip)
{
    for (size_t i = 0; i < p->n; i++)
        if (!p->u[i].dropped && i != skip)
            evict_unit(s, &p->u[i]);
}

static bool make_room(struct mu_ssn *s, struct mu_place *p,
                      struct mu_job *j, bool reclaim,
                      struct victims *vs)
{
    const struct mu_task *pre = first_pending(j);
    const char *action = reclaim ? "reclaim" : "preempt";
    struct plan plan = {0, 0, NULL};
    size_t mark = mu_stmt_mark(&s->stmt), chosen = 0;
    bool ok = false;
    int want;

    if (!pre)
        return false;
    /* a gang short of minMember needs its gang; a ready elastic job one
     * more task (its queue's share is checked by preemptive/victim_ok) */
    want = mu_job_ready_num(j) + mu_job_waiting_num(j);
    want = want >= j->pg.min_member ? want + 1 : j->pg.min_member;
    if (vs->plain) {
        candidates(s, j, pre, reclaim, vs, &plan);
        ok = try_units(p, j, pre, reclaim, want, &plan, 0, &chosen);
    } else {
        struct walk w;
        struct mu_job *v;
        int rank = 0;

        walk_init(&w, s, j, pre, reclaim, vs);
        while (!ok && (v = walk_next(&w, &rank))) {
            size_t first = plan.n;

            if (!victim_job(j, v, reclaim))
                continue;
            job_units(s, pre, reclaim, v, rank, &plan);
            if (plan.n - first > 1)
                qsort(plan.u + first, plan.n - first, sizeof(*plan.u),
                      unit_cmp);
            ok = try_units(p, j, pre, reclaim, want, &plan, first, &chosen);
        }
    }
    mu_stmt_rollback(&s->stmt, mark);
    if (!ok)
        goto out;
    plan.n = chosen;
    for (size_t i = plan.n; i-- > 0;) {
        if (plan.u[i].dropped)
            continue;
        apply(s, &plan, i);
        if (gang_fits(p, j, want))
            plan.u[i].dropped = true;
        mu_stmt_rollback(&s->stmt, mark);
    }
    for (size_t i = 0; i < plan.n; i++) {
        size_t before = mu_stmt_mark(&s->stmt);

        if (plan.u[i].dropped)
            continue;
        evict_unit(s, &plan.u[i]);
        for (size_t k = before; k < s->stmt.n; k++)
            mu_ssn_add_evict(s, s->stmt.ops[k].task, j, action);
    }
    mu_place_freed(p);
    mu_place_job(p, j, MU_PLACE_DRYRUN, want);
    mu_why_set(j, MU_WHY_WAITING, NULL);
out:
    free(plan.u);
    return ok;
}

/* A gang that waits for evicted pods, or only for its turn to be
 * released (it fits), starves for nothing eviction would give it. */
static bool waits(const struct mu_job *j)
{
    return j->why.kind == MU_WHY_WAITING || j->why.kind == MU_WHY_TURN;
}

/* As in Volcano, a gang held to one network domain (networkTopology hard)
 * does not evict for room: the dry run that picks victims places it
 * anywhere, so its victims could free room in no domain that holds it. */
static bool evicts_for(const struct mu_job *j)
{
    return !waits(j) && j->pg.topo.mode != MU_TOPO_HARD;
}

static bool starving(struct mu_ssn *s, struct mu_job *j)
{
    return evicts_for(j) && mu_job_schedulable(s, j) &&
           mu_ssn_job_starving(s, j);
}

/* Reclaim also serves an elastic job that runs its minimum and still has
 * pending tasks, one task per cycle, while its queue is owed a share
 * (evict_action checks preemptive). Volcano's gang plugin calls such a job
 * not starving, so a team that arrives after another filled the cluster
 * never gets its share back; muster does not copy that. */
static bool starving_reclaim(struct mu_ssn *s, struct mu_job *j)
{
    return starving(s, j) ||
           (evicts_for(j) && mu_job_schedulable(s, j) && first_pending(j) &&
            (size_t)(mu_job_ready_num(j) + mu_job_waiting_num(j)) < j->ntasks);
}

static void victims_build(const struct mu_cluster *c, bool plain,
                          struct victims *vs)
{
    size_t nq = c->nqueues ? c->nqueues : 1;

    vs->n = 0;
    vs->plain = plain;
    vs->jobs = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*vs->jobs));
    vs->byq = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*vs->byq));
    vs->live = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*vs->live));
    vs->qfirst = mu_xcalloc(nq, sizeof(*vs->qfirst));
    vs->qn = mu_xcalloc(nq, sizeof(*vs->qn));
    vs->wq = mu_xcalloc(nq, sizeof(*vs->wq));
    vs->cand = mu_xcalloc(nq, sizeof(*vs->cand));
    vs->ok = mu_xcalloc(nq, sizeof(*vs->ok));
    vs->rq = mu_xcalloc(nq, sizeof(*vs->rq));
    vs->nrq = 0;
    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];

        if (j->queue && j->count[MU_TASK_RUNNING] + j->count[MU_TASK_BOUND] > 0) {
            vs->jobs[vs->n++] = j;
            vs->qn[j->queue->index]++;
        }
    }
    for (size_t i = 1; i < c->nqueues; i++)
        vs->qfirst[i] = vs->qfirst[i - 1] + vs->qn[i - 1];
    memset(vs->qn, 0, nq * sizeof(*vs->qn));
    for (size_t i = 0; i < vs->n; i++) {
        size_t qi = (size_t)vs->jobs[i]->queue->index;

        vs->byq[vs->qfirst[qi] + vs->qn[qi]++] = vs->jobs[i];
    }
    for (size_t i = 0; i < vs->n; i++)
        vs->live[i] = i;
    for (size_t i = 0; i < c->nqueues; i++)
        if (vs->qn[i] > 1)
            qsort(vs->byq + vs->qfirst[i], vs->qn[i], sizeof(*vs->byq),
                  job_ptr_cmp);
    for (size_t i = 0; i < c->nqueues; i++)
        if (vs->qn[c->queues[i]->index] && c->queues[i]->spec.reclaimable)
            vs->rq[vs->nrq++] = c->queues[i];
}

static void victims_free(struct victims *vs)
{
    free(vs->jobs);
    free(vs->byq);
    free(vs->live);
    free(vs->qfirst);
    free(vs->qn);
    free(vs->wq);
    free(vs->cand);
    free(vs->ok);
    free(vs->rq);
}

/* May j's queue reclaim for it? If not, j's reason says why. */
static bool owed(struct mu_ssn *s, const struct mu_cqueue *q,
                 struct mu_job *j, const struct mu_task *pre)
{
    struct mu_sb why;
    bool ok;

    mu_sb_init(&why);
    ok = mu_ssn_preemptive(s, q, pre, &why);
    if (!ok && why.len)
        mu_why_reclaim(j, why.buf);
    mu_sb_release(&why);
    return ok;
}

/* Preempt: might j's queue hold a victim for it, a job running something
 * at a lower priority? Its jobs in vs->byq are in job_cmp order, lowest
 * priority first, and evictions only ever take jobs out: when the first
 * one (however much it still runs) is not lower, none is. Asked before
 * j's tasks are read: a cluster of one priority reads none of them. */
static bool may_preempt(const struct victims *vs, const struct mu_job *j)
{
    size_t qi;

    if (!j->queue)
        return false;
    qi = (size_t)j->queue->index;
    return vs->qn[qi] > 0 && vs->byq[vs->qfirst[qi]]->priority < j->priority;
}

/* Queues in queue order, starving jobs in job order: each may make room. */
static void evict_action(struct mu_ssn *s, struct mu_place *p, bool reclaim)
{
    struct victims vs;
    struct mu_qset qs;
    struct mu_qlist *e;

    victims_build(s->cluster, p->plain, &vs);
    if (!vs.n)
        goto out;
    mu_qset_build(s, reclaim ? starving_reclaim : starving, &qs);
    while ((e = mu_qset_next(s, &qs))) {
        struct mu_job *j = e->jobs[e->head++];
        const struct mu_task *pre;

        if (reclaim && mu_ssn_overused(s, e->q)) {
            e->dropped = true;
            continue;
        }
        if (!reclaim && !may_preempt(&vs, j))
            continue;
        pre = first_pending(j);
        if (!pre || pre->pod.preempt_never)
            continue;
        if (reclaim && !owed(s, e->q, j, pre))
            continue;
        make_room(s, p, j, reclaim, &vs);
    }
    mu_qset_free(&qs);
out:
    victims_free(&vs);
}

void mu_action_reclaim(struct mu_ssn *s, struct mu_place *p)
{
    if (s->conf->reclaim_inert) /* no share plugin: see mu_conf */
        return;
    evict_action(s, p, true);
}

void mu_action_preempt(struct mu_ssn *s, struct mu_place *p)
{
    evict_action(s, p, false);
}
