/* gang.c - all-or-nothing: minMember and per-role minimums (§8.1). */
#include "plugins.h"

#define BIT(s) (1u << (s))
#define READY                                                                 \
    (BIT(MU_TASK_ALLOCATED) | BIT(MU_TASK_BINDING) | BIT(MU_TASK_BOUND) |     \
     BIT(MU_TASK_RUNNING) | BIT(MU_TASK_SUCCEEDED))
#define PIPELINED (READY | BIT(MU_TASK_PIPELINED))
#define VALID (PIPELINED | BIT(MU_TASK_PENDING))

static int role_count(const struct mu_job *j, const char *role, unsigned mask)
{
    int n = 0;

    for (size_t i = 0; i < j->ntasks; i++) {
        const struct mu_task *t = j->tasks[i];

        if ((mask & BIT(t->status)) && mu_strcmp0(t->pod.task_spec, role) == 0)
            n++;
    }
    return n;
}

/*
 * Every role listed in minTaskMember has at least its minimum of tasks in
 * the statuses of mask. Volcano checks roles only when minMember covers
 * their sum; otherwise the check passes.
 */
static bool roles_ok(const struct mu_job *j, unsigned mask, struct mu_sb *why)
{
    int64_t sum = 0;

    for (size_t i = 0; i < j->pg.nmin_task; i++)
        sum += j->pg.min_task[i].min;
    if (j->pg.min_member < sum)
        return true;
    for (size_t i = 0; i < j->pg.nmin_task; i++) {
        const struct mu_min_task *m = &j->pg.min_task[i];
        int n;

        if (m->min <= 0)
            continue;
        n = role_count(j, m->task, mask);
        if (n >= m->min)
            continue;
        if (why)
            mu_sb_addf(why,
                       "Not enough valid pods of task %s for gang-scheduling, "
                       "valid: %d, min: %d",
                       m->task, n, (int)m->min);
        return false;
    }
    return true;
}

static bool job_valid(void *st, const struct mu_job *j, struct mu_sb *why)
{
    int valid = mu_job_valid_num(j);

    if (!roles_ok(j, VALID, why))
        return false;
    if (valid >= j->pg.min_member)
        return true;
    if (why)
        mu_sb_addf(why,
                   "Not enough valid tasks for gang-scheduling, valid: %d, "
                   "min: %d",
                   valid, (int)j->pg.min_member);
    return false;
}

static int job_order(void *st, const struct mu_job *a, const struct mu_job *b)
{
    return (int)mu_job_ready(a) - (int)mu_job_ready(b);
}

static bool job_ready(void *st, const struct mu_job *j)
{
    return mu_job_ready(j) && roles_ok(j, READY, NULL);
}

static enum mu_vote job_pipelined(void *st, const struct mu_job *j)
{
    bool ok = mu_job_ready_num(j) + mu_job_waiting_num(j) >= j->pg.min_member &&
              roles_ok(j, PIPELINED, NULL);

    return ok ? MU_VOTE_PERMIT : MU_VOTE_REJECT;
}

static bool job_starving(void *st, const struct mu_job *j)
{
    return mu_job_ready_num(j) + mu_job_waiting_num(j) < j->pg.min_member;
}

const struct mu_plugin mu_plugin_gang = {
    .name = "gang",
    .job_order = job_order,
    .job_valid = job_valid,
    .job_ready = job_ready,
    .job_pipelined = job_pipelined,
    .job_starving = job_starving,
};
