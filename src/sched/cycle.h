/*
 * cycle.h - one scheduling cycle: open a session, run the configured
 * actions in order, close (PodGroup phases, conditions with the why-pending
 * reason, queue status), and hand back the decisions.
 *
 * The cycle works on the cluster in place. When it returns, the cluster
 * holds: committed placements as BINDING tasks on their nodes, evictions as
 * RELEASING tasks, nothing ALLOCATED or PIPELINED (those were promises for
 * this cycle only), and every job's phase and condition updated.
 *
 * Thread: the scheduler thread (or the simulator).
 */
#ifndef MU_SCHED_CYCLE_H
#define MU_SCHED_CYCLE_H

#include "sched/cluster.h"
#include "sched/conf.h"
#include "sched/framework.h"

/* What a cycle decided, in decision order. Task pointers stay valid until
 * the caller changes the cluster. */
struct mu_cycle_out {
    size_t nbinds;
    struct mu_task **binds;
    size_t nevicts;
    struct mu_eviction *evicts;
    size_t nchanged;          /* jobs whose phase or condition changed */
    struct mu_job **changed;
    int64_t wake_ms;          /* a later cycle may decide more at this time
                                 with no event before it (the clock alone);
                                 INT64_MAX: not so (mu_ssn.wake_ms) */
};

void mu_cycle_out_release(struct mu_cycle_out *o);

/* Runs one cycle at time now_ms. Returns 0. */
int mu_cycle_run(struct mu_cluster *c, struct mu_conf *conf, int64_t now_ms,
                 struct mu_cycle_out *out);

/*
 * The why-pending message of a job after a cycle, with numbers, e.g.
 * "9/9 tasks in gang unschedulable: gang needs 9 more pods with {cpu: 72,
 * memory: 288Gi, nvidia.com/gpu: 8}; free: {nvidia.com/gpu: 5} in the
 * cluster, at most {nvidia.com/gpu: 5} on one node (gpu-node-1); pod
 * team-a/x-worker-5: 0/1 nodes are unavailable: 1 Insufficient
 * nvidia.com/gpu." Returns an owned string; reason gets the condition reason
 * (static string).
 */
char *mu_why_message(const struct mu_cluster *c, const struct mu_job *j,
                     const char **reason);

#endif
