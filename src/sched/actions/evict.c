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

static void add_unit(struct plan *p, struct mu_job *j, struct mu_task *t)
{
    mu_xgrow((void **)&p->u, &p->cap, p->n + 1, sizeof(*p->u));
    p->u[p->n].job = j;
    p->u[p->n].task = t;
    p->u[p->n].dropped = false;
    p->n++;
}

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
    return x->task->pod.task_index > y->task->pod.task_index ? -1 : 1;
}

/* Jobs that have something running: the only possible victims. */
struct victims {
    size_t n;
    struct mu_job **jobs;
};

static void candidates(struct mu_ssn *s, struct mu_job *j,
                       const struct mu_task *pre, bool reclaim,
                       const struct victims *vs, struct plan *p)
{
    for (size_t i = 0; i < vs->n; i++) {
        struct mu_job *v = vs->jobs[i];
        int surplus = mu_job_ready_num(v) - v->pg.min_member;
        bool whole = true, useful = false;

        if (v == j || !v->queue ||
            v->count[MU_TASK_RUNNING] + v->count[MU_TASK_BOUND] == 0)
            continue;
        if (reclaim ? (v->queue == j->queue || !v->queue->spec.reclaimable)
                    : (v->queue != j->queue || v->priority >= j->priority))
            continue;
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
                add_unit(p, v, t);
                surplus--;
            }
        }
        if (whole && useful)
            add_unit(p, v, NULL);
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

/* Queues in queue order, starving jobs in job order: each may make room. */
static void evict_action(struct mu_ssn *s, struct mu_place *p, bool reclaim)
{
    struct mu_cluster *c = s->cluster;
    struct victims vs = {0, NULL};
    struct mu_qset qs;
    struct mu_qlist *e;

    vs.jobs = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*vs.jobs));
    for (size_t i = 0; i < c->njobs; i++)
        if (c->jobs[i]->queue && c->jobs[i]->count[MU_TASK_RUNNING] +
                                         c->jobs[i]->count[MU_TASK_BOUND] > 0)
            vs.jobs[vs.n++] = c->jobs[i];
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
    free(vs.jobs);
}

void mu_action_reclaim(struct mu_ssn *s, struct mu_place *p)
{
    evict_action(s, p, true);
}

void mu_action_preempt(struct mu_ssn *s, struct mu_place *p)
{
    evict_action(s, p, false);
}
