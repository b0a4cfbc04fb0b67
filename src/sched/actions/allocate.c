#include "sched/actions/actions.h"
#include "sched/actions/topoplace.h"

/* Elastic jobs go round robin: back at the end of their queue's list. */
static void push_back(struct mu_qlist *e, struct mu_job *j)
{
    memmove(e->jobs, e->jobs + e->head, (e->n - e->head) * sizeof(*e->jobs));
    e->n -= e->head;
    e->head = 0;
    e->jobs[e->n++] = j;
}

static void note_overused(struct mu_qlist *e)
{
    char *t = mu_xasprintf("queue %s has used its deserved share",
                           e->q->spec.meta.name);

    for (size_t k = e->head; k < e->n; k++)
        if (e->jobs[k]->why.kind == MU_WHY_NONE && !mu_job_ready(e->jobs[k]))
            mu_why_set(e->jobs[k], MU_WHY_QUEUE_SHARE, t);
    free(t);
}

static bool has_enqueue(const struct mu_conf *conf)
{
    for (int a = 0; a < conf->nactions; a++)
        if (conf->actions[a] == MU_ACT_ENQUEUE)
            return true;
    return false;
}

/* Without enqueue among the actions, allocate admits (volcano-api.md §7.1). */
static bool candidate(struct mu_ssn *s, struct mu_job *j)
{
    if ((j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE) &&
        !has_enqueue(s->conf))
        j->phase = MU_PG_INQUEUE;
    return mu_job_schedulable(s, j);
}

/* The release window is full (cluster.h): the job would place more pods
 * than the cycle may still release. The first job of a cycle goes whatever
 * its size while any room is left, so a gang larger than the window is
 * not kept out for ever. */
static bool no_turn(const struct mu_ssn *s, const struct mu_job *j,
                    bool ready)
{
    long budget = s->cluster->release_budget;
    long need = ready ? 1 : j->count[MU_TASK_PENDING];

    if (budget < 0)
        return false;
    return budget == 0 || (s->nbinds > 0 && (long)s->nbinds + need > budget);
}

/*
 * Queues in fair-share order, jobs in job order: each job's tasks are
 * placed in a statement that is committed only when the gang is ready, kept
 * for the cycle when it is pipelined, and discarded otherwise.
 */
void mu_action_allocate(struct mu_ssn *s, struct mu_place *p)
{
    struct mu_qset qs;
    struct mu_topoplace tp;

    mu_qset_build(s, candidate, &qs);
    mu_topoplace_init(&tp, p);

    for (;;) {
        struct mu_qlist *e;
        struct mu_job *j;
        enum mu_place_mode mode;
        size_t mark;
        int placed;

        while ((e = mu_qset_next(s, &qs)) && mu_ssn_overused(s, e->q)) {
            e->dropped = true;
            note_overused(e);
        }
        if (!e)
            break;
        j = e->jobs[e->head++];
        if (no_turn(s, j, mu_ssn_job_ready(s, j))) {
            mu_why_set(j, MU_WHY_TURN, NULL);
            continue;
        }
        mark = mu_stmt_mark(&s->stmt);
        mode = mu_ssn_job_ready(s, j) ? MU_PLACE_ONE : MU_PLACE_GANG;
        placed = mu_job_topo(j) ? mu_topoplace_job(&tp, j, mode)
                                : mu_place_job(p, j, mode, 0);
        if (mu_ssn_job_ready(s, j)) {
            mu_commit_job(s, j);
            if (placed > 0 && j->count[MU_TASK_PENDING] > 0)
                push_back(e, j);
        } else if (!mu_ssn_job_pipelined(s, j)) {
            mu_place_rollback(p, mark);
        } else if (j->why.kind == MU_WHY_NONE || j->why.kind == MU_WHY_NODES) {
            mu_why_set(j, MU_WHY_WAITING, NULL);
        }
    }
    mu_topoplace_release(&tp);
    mu_qset_free(&qs);
}
