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
 * Best node for t, or NULL: among the nodes passing the static predicates
 * where t fits idle resources, the highest score, ties to the lower node
 * index; when future is true and none fits idle, the best node where it
 * fits future idle (then *pipelined is set). Unlike Volcano, which scores
 * a rotating sample of 5-50 % of large clusters, this is the best node of
 * the whole cluster, found in O(log n) through a per-shape heap that
 * follows every change to node resources. When nothing fits and hist is
 * not NULL, hist counts every node's reason (computed once per shape and
 * session, then reused).
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

/* The jobs of one queue an action works through, in job order. */
struct mu_qlist {
    struct mu_cqueue *q;
    size_t n, head;       /* jobs[head..n) are still to do */
    struct mu_job **jobs;
    bool dropped;         /* out for the rest of the action */
};

/* The lists of all queues, in queue order. */
struct mu_qset {
    size_t n;
    struct mu_qlist *l;
    size_t nheap;
    struct mu_qlist **heap; /* lists with jobs left, best queue on top */
    struct mu_qlist *last;  /* what the last mu_qset_next returned */
};

/*
 * One list per queue holding the jobs keep() accepts, each sorted by the
 * session's job order; queues without such jobs are left out.
 */
void mu_qset_build(struct mu_ssn *s,
                   bool (*keep)(struct mu_ssn *s, struct mu_job *j),
                   struct mu_qset *out);
void mu_qset_free(struct mu_qset *q);
/*
 * The list, among those not dropped and with jobs left, whose queue comes
 * first in queue order; NULL when none. O(log queues): the list returned
 * by the previous call is placed again (its queue's share moved as its job
 * was served); the order of the other queues is taken as unchanged, which
 * holds in allocate (each step changes one queue) and is, as in Volcano's
 * priority queues, an approximation in reclaim and preempt.
 */
struct mu_qlist *mu_qset_next(struct mu_ssn *s, struct mu_qset *q);

/* Sorts jobs or queues in the session's order. */
void mu_sort_jobs(struct mu_ssn *s, struct mu_job **v, size_t n);
void mu_sort_queues(struct mu_ssn *s, struct mu_cqueue **v, size_t n);

#endif
