/* priority.c - order by PriorityClass; preempt lower priority (§8.2). */
#include "plugins.h"

static int cmp_desc(int32_t a, int32_t b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

static int job_order(void *st, const struct mu_job *a, const struct mu_job *b)
{
    return cmp_desc(a->priority, b->priority);
}

static int task_order(void *st, const struct mu_task *a,
                      const struct mu_task *b)
{
    return cmp_desc(a->pod.priority, b->pod.priority);
}

static int32_t job_priority(const struct mu_task *t)
{
    return t->job ? t->job->priority : t->pod.priority;
}

static bool victim_ok(void *st, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim)
{
    if (reclaim)
        return true;
    if (preemptor->job && preemptor->job == victim->job)
        return victim->pod.priority < preemptor->pod.priority;
    return job_priority(victim) < job_priority(preemptor);
}

static bool job_starving(void *st, const struct mu_job *j)
{
    return (size_t)(mu_job_ready_num(j) + mu_job_waiting_num(j)) < j->ntasks;
}

const struct mu_plugin mu_plugin_priority = {
    .name = "priority",
    .job_order = job_order,
    .task_order = task_order,
    .job_starving = job_starving,
    .victim_ok = victim_ok,
};
