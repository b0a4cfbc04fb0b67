#include "sched/actions/actions.h"

struct qjobs {
    struct mu_cqueue *q;
    size_t n, head;
    struct mu_job **jobs; /* ring of candidates, in job order */
    bool dropped;         /* overused: out for the rest of the action */
};

static struct mu_ssn *sort_ssn;

static int job_cmp(const void *a, const void *b)
{
    return mu_ssn_job_order(sort_ssn, *(struct mu_job *const *)a,
                            *(struct mu_job *const *)b);
}

static struct mu_job *pop(struct qjobs *e)
{
    if (e->head >= e->n)
        return NULL;
    return e->jobs[e->head++];
}

/* Elastic jobs go round robin: back at the end of their queue's list. */
static void push_back(struct qjobs *e, struct mu_job *j)
{
    memmove(e->jobs, e->jobs + e->head, (e->n - e->head) * sizeof(*e->jobs));
    e->n -= e->head;
    e->head = 0;
    e->jobs[e->n++] = j;
}

static void note_overused(struct mu_ssn *s, struct qjobs *e)
{
    for (size_t k = e->head; k < e->n; k++) {
        struct mu_job *j = e->jobs[k];

        if (j->why.kind == MU_WHY_NONE && !mu_job_ready(j)) {
            char *t = mu_xasprintf("queue %s has used its deserved share",
                                   e->q->spec.meta.name);

            mu_why_set(j, MU_WHY_QUEUE_SHARE, t);
            free(t);
        }
    }
}

void mu_action_allocate(struct mu_ssn *s)
{
    struct mu_cluster *c = s->cluster;
    struct qjobs *qs = mu_xcalloc(c->nqueues ? c->nqueues : 1, sizeof(*qs));
    size_t nq = 0;

    for (size_t i = 0; i < c->nqueues; i++) {
        struct mu_cqueue *q = c->queues[i];
        struct qjobs *e = &qs[nq];

        e->q = q;
        e->jobs = mu_xcalloc(q->njobs ? q->njobs : 1, sizeof(*e->jobs));
        for (size_t k = 0; k < q->njobs; k++) {
            struct mu_job *j = q->jobs[k];

            /* without enqueue in the actions, allocate admits */
            if (j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE) {
                bool has_enqueue = false;

                for (int a = 0; a < s->conf->nactions; a++)
                    has_enqueue |= s->conf->actions[a] == MU_ACT_ENQUEUE;
                if (!has_enqueue)
                    j->phase = MU_PG_INQUEUE;
            }
            if (mu_job_schedulable(s, j))
                e->jobs[e->n++] = j;
        }
        if (!e->n) {
            free(e->jobs);
            continue;
        }
        sort_ssn = s;
        qsort(e->jobs, e->n, sizeof(*e->jobs), job_cmp);
        nq++;
    }
    for (;;) {
        struct qjobs *best = NULL;
        struct mu_job *j;
        size_t mark;
        bool was_ready;
        int placed;

        for (size_t i = 0; i < nq; i++) {
            struct qjobs *e = &qs[i];

            if (e->dropped || e->head >= e->n)
                continue;
            if (mu_ssn_overused(s, e->q)) {
                e->dropped = true;
                note_overused(s, e);
                continue;
            }
            if (!best || mu_ssn_queue_order(s, e->q, best->q) < 0)
                best = e;
        }
        if (!best)
            break;
        j = pop(best);
        mark = mu_stmt_mark(&s->stmt);
        was_ready = mu_ssn_job_ready(s, j);
        placed = mu_place_job(s, j, was_ready ? MU_PLACE_ONE : MU_PLACE_GANG);
        if (mu_ssn_job_ready(s, j)) {
            mu_commit_job(s, j);
            if (placed > 0 && j->count[MU_TASK_PENDING] > 0)
                push_back(best, j);
        } else if (!mu_ssn_job_pipelined(s, j)) {
            mu_ssn_rollback(s, mark);
        } else if (j->why.kind == MU_WHY_NONE || j->why.kind == MU_WHY_NODES) {
            mu_why_set(j, MU_WHY_WAITING, NULL);
        }
    }
    for (size_t i = 0; i < nq; i++)
        free(qs[i].jobs);
    free(qs);
}
