/*
 * reclaim and preempt: make room for a starving gang by evicting whole
 * gangs or the elastic surplus of gangs, never cutting a running gang below
 * its minMember, and only when a dry run shows the gang fits afterwards.
 *
 * Victim units: the surplus tasks of a job above its minMember (one unit
 * each, highest task index first) and the whole job. Units are tried lowest
 * priority first, youngest job first, and a job's surplus before the job
 * itself; once the waiting gang fits, every chosen unit that is not needed
 * is dropped again (the plan is minimal). Nothing is evicted when the gang
 * would not fit even after every eligible unit is gone.
 */
#include "sched/actions/actions.h"

struct unit {
    struct mu_job *job;
    struct mu_task *task; /* NULL: the whole job */
    int seq;              /* made in this order within the job */
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
        if (d != MU_RES_PODS && t->pod.req.v[d] > 0 && v->pod.req.v[d] > 0)
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
                     int seq)
{
    mu_xgrow((void **)&p->u, &p->cap, p->n + 1, sizeof(*p->u));
    p->u[p->n].job = j;
    p->u[p->n].task = t;
    p->u[p->n].seq = seq;
    p->u[p->n].dropped = false;
    p->n++;
}

/* A total order: lowest priority, youngest, name; within a job its
 * surplus tasks by task index, highest first (equal indices in the order
 * they were made: reverse task order), then the whole job. */
static int unit_cmp(const void *a, const void *b)
{
    const struct unit *x = a, *y = b;

    if (x->job != y->job) {
        if (x->job->priority != y->job->priority)
            return x->job->priority < y->job->priority ? -1 : 1;
        if (x->job->pg.meta.created != y->job->pg.meta.created)
            return x->job->pg.meta.created > y->job->pg.meta.created ? -1 : 1;
        return strcmp(x->job->key, y->job->key);
    }
    if (!x->task || !y->task)
        return x->task ? -1 : (y->task ? 1 : 0);
    if (x->task->pod.task_index != y->task->pod.task_index)
        return x->task->pod.task_index > y->task->pod.task_index ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/*
 * The possible victims of one action: the jobs that had something running
 * when it started (evictions only ever shrink that set), in key order, and
 * the same jobs grouped by queue index (key order within a queue).
 */
struct victims {
    size_t n;
    struct mu_job **jobs;
    size_t *qfirst;       /* by queue index: its jobs are */
    size_t *qn;           /* byq[qfirst[i] .. qfirst[i] + qn[i]) */
    struct mu_job **byq;
    bool plain;           /* take the straightforward scan (tests) */
};

/* The units of victim job v for preemptor pre of job j. */
static void job_units(struct mu_ssn *s, const struct mu_task *pre,
                      bool reclaim, struct mu_job *v, struct plan *p)
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
            add_unit(p, v, t, seq++);
            surplus--;
        }
    }
    if (whole && useful)
        add_unit(p, v, NULL, seq);
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

/* The reference: every victim job, every running task. */
static void candidates_plain(struct mu_ssn *s, struct mu_job *j,
                             const struct mu_task *pre, bool reclaim,
                             const struct victims *vs, struct plan *p)
{
    for (size_t i = 0; i < vs->n; i++)
        if (victim_job(j, vs->jobs[i], reclaim))
            job_units(s, pre, reclaim, vs->jobs[i], p);
}

/* The same units, visiting only the queues that may give way: reclaim
 * skips j's queue, queues that are not reclaimable and those a plugin's
 * victim_queue_ok rules out (none of their tasks would be eligible, so
 * none of their jobs would make a unit); preempt looks at j's queue
 * alone. The plan is sorted afterwards, so the visiting order does not
 * matter. */
static void candidates(struct mu_ssn *s, struct mu_job *j,
                       const struct mu_task *pre, bool reclaim,
                       const struct victims *vs, struct plan *p)
{
    struct mu_cluster *c = s->cluster;

    if (vs->plain) {
        candidates_plain(s, j, pre, reclaim, vs, p);
    } else {
        for (size_t i = 0; i < c->nqueues; i++) {
            struct mu_cqueue *q = c->queues[i];
            size_t qi = (size_t)q->index;

            if (!vs->qn[qi] || (reclaim ? q == j->queue || !q->spec.reclaimable
                                        : q != j->queue) ||
                !mu_ssn_victim_queue_ok(s, pre, q, reclaim))
                continue;
            for (size_t k = 0; k < vs->qn[qi]; k++) {
                struct mu_job *v = vs->byq[vs->qfirst[qi] + k];

                if (victim_job(j, v, reclaim))
                    job_units(s, pre, reclaim, v, p);
            }
        }
    }
    if (p->n > 1)
        qsort(p->u, p->n, sizeof(*p->u), unit_cmp);
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

static void apply(struct mu_ssn *s, struct plan *p, size_t skip)
{
    for (size_t i = 0; i < p->n; i++)
        if (!p->u[i].dropped && i != skip)
            evict_unit(s, &p->u[i]);
}

static bool make_room(struct mu_ssn *s, struct mu_place *p,
                      struct mu_job *j, bool reclaim,
                      const struct victims *vs)
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
    candidates(s, j, pre, reclaim, vs, &plan);
    for (size_t i = 0; i < plan.n; i++) {
        if (!still_owed(s, pre, &plan.u[i], reclaim)) {
            plan.u[i].dropped = true;
            continue;
        }
        evict_unit(s, &plan.u[i]);
        chosen = i + 1;
        if ((ok = gang_fits(p, j, want)))
            break;
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

static bool starving(struct mu_ssn *s, struct mu_job *j)
{
    return j->why.kind != MU_WHY_WAITING && mu_job_schedulable(s, j) &&
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
           (j->why.kind != MU_WHY_WAITING && mu_job_schedulable(s, j) &&
            first_pending(j) &&
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
    vs->qfirst = mu_xcalloc(nq, sizeof(*vs->qfirst));
    vs->qn = mu_xcalloc(nq, sizeof(*vs->qn));
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
}

static void victims_free(struct victims *vs)
{
    free(vs->jobs);
    free(vs->byq);
    free(vs->qfirst);
    free(vs->qn);
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
        const struct mu_task *pre = first_pending(j);

        if (reclaim && mu_ssn_overused(s, e->q)) {
            e->dropped = true;
            continue;
        }
        if (!pre || pre->pod.preempt_never)
            continue;
        if (reclaim && !mu_ssn_preemptive(s, e->q, pre, NULL))
            continue;
        make_room(s, p, j, reclaim, &vs);
    }
    mu_qset_free(&qs);
out:
    victims_free(&vs);
}

void mu_action_reclaim(struct mu_ssn *s, struct mu_place *p)
{
    evict_action(s, p, true);
}

void mu_action_preempt(struct mu_ssn *s, struct mu_place *p)
{
    evict_action(s, p, false);
}
