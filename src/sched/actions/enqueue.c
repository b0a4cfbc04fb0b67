#include "sched/actions/actions.h"

static bool pending(struct mu_ssn *s, struct mu_job *j)
{
    (void)s;
    return j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE;
}

/*
 * Pending jobs are admitted queue by queue, best queue first; a refused job
 * does not block its queue (volcano-api.md §7.1).
 */
void mu_action_enqueue(struct mu_ssn *s, struct mu_place *p)
{
    struct mu_qset qs;
    struct mu_qlist *e;

    (void)p;
    mu_qset_build(s, pending, &qs);

    while ((e = mu_qset_next(s, &qs))) {
        struct mu_job *j = e->jobs[e->head++];
        struct mu_sb why;

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
    mu_qset_free(&qs);
}
