/*
 * place.h - the placement code the actions share: which node a task goes
 * to, placing a job's tasks, and the per-queue job lists the actions walk.
 *
 * struct mu_place is the placement state of one cycle: the node index (per
 * task shape, a heap of the nodes that fit it, best first) and the
 * resource-fit failure cache (a shape that found no node stays failed until
 * something is freed). It lives no longer than the session it was opened
 * on and is not part of it: the cycle owns both, opens the session first,
 * then mu_place_init, and calls mu_place_release before mu_ssn_close.
 *
 * Ownership: struct mu_place is caller-allocated and borrows the session;
 * mu_place_release frees what init and the picks allocated. Allocation
 * failures abort (mu_x*). Thread: the scheduler thread, as the session.
 */
#ifndef MU_SCHED_ACTIONS_PLACE_H
#define MU_SCHED_ACTIONS_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/framework.h"
#include "sched/topology.h"

struct mu_shape_heap;
struct mu_domheap;

/* Which network domains (sched/topology.h) each node is in: node i's are
 * doms[off[i]..off[i+1]), indexes into cluster->topo->dom; slot[k] is the
 * node's index in the nodes of domain doms[k]. */
struct mu_domnodes {
    size_t *off;
    int *doms;
    int *slot;
};

struct mu_place {
    struct mu_ssn *ssn; /* borrowed */

    /* A shape that found no node is failed while free_gen has not moved
     * since (it moves when resources are freed: a rollback, an eviction). */
    uint64_t free_gen;
    size_t nshape_failed;
    uint64_t *shape_failed; /* free_gen + 1 at failure, 0 = not failed */

    /* The node index: one heap per task shape, built on first use, each
     * node in it at most once. A node that changes (the cluster's dirty
     * log) is scored again and moved in place, or taken out when it no
     * longer fits, when the heap is next asked. */
    size_t nheaps;
    struct mu_shape_heap *heaps;

    /* While set (actions/topoplace.h), picks choose among this domain's
     * nodes only, through a heap per (domain, shape) kept like the
     * cluster-wide ones (each domain has its own share of the dirty log),
     * and a shape that finds none there is not marked failed for the rest
     * of the cluster. */
    const struct mu_domain *only;
    struct mu_domnodes dn;      /* built with the first domain heap */
    size_t dn_dirty_pos;        /* the cluster's dirty log handed out */
    size_t ndomheaps;
    struct mu_domheap *domheaps; /* per domain */

    /* Nodes scored again from the dirty log (each once per change of its
     * generation, however often the log names it); for tests. */
    size_t nrescored;

    /* Tests only: take the straightforward paths the indexes replace
     * (reclaim and preempt re-examine every running task of every job for
     * each starving gang; a pick scores every node), to check that both
     * decide the same. false after mu_place_init. */
    bool plain;
};

/* Starts empty placement state over the open session s (allocates
 * nothing). */
void mu_place_init(struct mu_place *p, struct mu_ssn *s);
/* Frees the node index and the failure cache; p is zeroed. */
void mu_place_release(struct mu_place *p);

/* The nodes' domains (p->dn), built on first use from cluster->topo as
 * synced for this session. */
const struct mu_domnodes *mu_place_domnodes(struct mu_place *p);

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
struct mu_cnode *mu_pick_node(struct mu_place *p, const struct mu_task *t,
                              bool future, bool *pipelined,
                              struct mu_fit_hist *hist);

enum mu_place_mode {
    MU_PLACE_GANG,    /* place until the job is ready */
    MU_PLACE_ONE,     /* place one more task (elastic, round robin) */
    MU_PLACE_DRYRUN,  /* place until `want` ready-or-waiting tasks using
                         future idle, no why */
};

/*
 * Places pending tasks of j inside the session's statement, in task order,
 * checking the queue (allocatable) and nodes. Records the first blocking
 * reason in j->why unless mode is DRYRUN. want is read by DRYRUN only: how
 * many ready-or-waiting tasks to aim for, 0 = the job's minMember (reclaim
 * and preempt ask one more than an elastic job that is ready already has).
 * Returns how many tasks it placed.
 */
int mu_place_job(struct mu_place *p, struct mu_job *j,
                 enum mu_place_mode mode, int want);

/* Rolls the statement back to mark and notes that resources were freed
 * when anything was undone. */
void mu_place_rollback(struct mu_place *p, size_t mark);
/* Notes that resources were freed (an eviction): failed shapes may try
 * again. */
void mu_place_freed(struct mu_place *p);

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
