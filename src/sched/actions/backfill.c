#include "sched/actions/actions.h"

/*
 * BestEffort tasks (no requests) of admitted, valid jobs go wherever the
 * static predicates and the pod count allow; they bind once the job is
 * ready. Those of a gang held to one network domain (networkTopology
 * hard) are not: allocate places them, inside its domain
 * (actions/topoplace.h).
 */
void mu_action_backfill(struct mu_ssn *s, struct mu_place *p)
{
    struct mu_cluster *c = s->cluster;

    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];
        size_t mark = mu_stmt_mark(&s->stmt);
        bool any = false;

        if (j->pg.topo.mode == MU_TOPO_HARD || !mu_job_schedulable(s, j))
            continue;
        for (size_t k = 0; k < j->ntasks; k++) {
            struct mu_task *t = j->tasks[k];
            struct mu_cnode *n;

            if (t->status != MU_TASK_PENDING || !t->pod.besteffort ||
                mu_task_gated_by_others(t))
                continue;
            n = mu_pick_node(p, t, false, NULL, NULL);
            if (!n)
                continue;
            mu_stmt_place(&s->stmt, t, n, MU_TASK_ALLOCATED);
            any = true;
        }
        if (!any)
            continue;
        if (mu_ssn_job_ready(s, j))
            mu_commit_job(s, j);
        else if (!mu_ssn_job_pipelined(s, j))
            mu_place_rollback(p, mark);
    }
}
