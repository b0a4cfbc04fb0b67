#include "sched/actions/actions.h"

struct qjobs {
    struct mu_cqueue *q;
    size_t n, next;
    struct mu_job **jobs;
};

static struct mu_ssn *sort_ssn;

static int job_cmp(const void *a, const void *b)
{
    return mu_ssn_job_order(sort_ssn, *(struct mu_job *const *)a,
                            *(struct mu_job *const *)b);
}

/*
 * Pending jobs are admitted queue by queue, best queue first; a refused job
 * does not block its queue (volcano-api.md §7.1).
 */
void mu_action_enqueue(struct mu_ssn *s)
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

            if (j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE)
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
        struct mu_sb why;

        for (size_t i = 0; i < nq; i++)
            if (qs[i].next < qs[i].n &&
                (!best || mu_ssn_queue_order(s, qs[i].q, best->q) < 0))
                best = &qs[i];
        if (!best)
            break;
        j = best->jobs[best->next++];
        mu_sb_init(&why);
        if (!j->pg.has_min_resources || mu_ssn_job_enqueueable(s, j, &why)) {
            mu_ssn_job_enqueued(s, j);
            j->phase = MU_PG_INQUEUE;
            j->inqueue_since_ms = s->now_ms;
        } else {
            mu_why_set(j, MU_WHY_ENQUEUE, why.buf ? why.buf : "");
        }
        mu_sb_release(&why);
    }
    for (size_t i = 0; i < nq; i++)
        free(qs[i].jobs);
    free(qs);
}
