/*
 * actions.h - the actions a cycle runs, in the order the configuration
 * lists them (volcano-api.md §7), and the placement code they share.
 *
 * Every action runs on the scheduler thread inside a session. Actions
 * change the cluster only through the session's statement and record what
 * must reach the API (binds, evictions) with mu_ssn_add_bind/_evict when
 * they commit.
 */
#ifndef MU_SCHED_ACTIONS_H
#define MU_SCHED_ACTIONS_H

#include <stdbool.h>

#include "sched/framework.h"

void mu_action_enqueue(struct mu_ssn *s);
void mu_action_allocate(struct mu_ssn *s);
void mu_action_backfill(struct mu_ssn *s);
void mu_action_reclaim(struct mu_ssn *s);
void mu_action_preempt(struct mu_ssn *s);

/*
 * Best node for t, or NULL. Looks at nodes passing the static predicates
 * where t fits idle resources; when future is true and none does, at nodes
 * where it fits future idle (then *pipelined is set). Among feasible nodes
 * (a sample of at least 100, as kube-scheduler and Volcano sample large
 * clusters) the highest score wins, ties to the lower node index. When
 * nothing fits and hist is not NULL, hist counts every node's reason.
 */
struct mu_cnode *mu_pick_node(struct mu_ssn *s, const struct mu_task *t,
                              bool future, bool *pipelined,
                              struct mu_fit_hist *hist);

enum mu_place_mode {
    MU_PLACE_GANG,    /* place until the job is ready */
    MU_PLACE_ONE,     /* place one more task (elastic, round robin) */
    MU_PLACE_DRYRUN,  /* place until ready using future idle, no why */
};

/*
 * Places pending tasks of j inside the session's statement, in task order,
 * checking the queue (allocatable) and nodes. Records the first blocking
 * reason in j->why unless mode is DRYRUN. Returns how many tasks it placed.
 */
int mu_place_job(struct mu_ssn *s, struct mu_job *j, enum mu_place_mode mode);

/* Rolls the statement back to mark and notes that resources were freed. */
void mu_ssn_rollback(struct mu_ssn *s, size_t mark);

/* Commits j's ALLOCATED tasks: they become BINDING and are recorded as
 * binds. */
void mu_commit_job(struct mu_ssn *s, struct mu_job *j);

/* Jobs eligible for allocate, reclaim and preempt: has a queue, not
 * Pending, valid, has a pending task. Writes why for invalid ones. */
bool mu_job_schedulable(struct mu_ssn *s, struct mu_job *j);

#endif
