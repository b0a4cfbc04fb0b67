/*
 * qtree.h - the tree of queues that Queue spec.parent draws (Volcano's
 * hierarchical queues, the capacity plugin with enableHierarchy).
 *
 * A queue's parent is the queue spec.parent names; a queue that names
 * none, or names "root", hangs under the root: the Queue named "root" when
 * the cluster has one (Volcano's controller makes it), else a root muster
 * imagines (capability and deserved the cluster's total). The root queue
 * itself has no parent. A queue whose parent does not exist, or whose
 * ancestors come back to itself, is broken, and so is every queue below a
 * broken one: the reason says which and names the queue at fault.
 *
 * Depths: the root (real or imagined) is 0, the queues under it 1, ... .
 * Everything is by queue index (mu_cqueue.index): a tree is made for one
 * state of the cluster's queues and is stale once a queue is added,
 * removed or changes its parent.
 *
 * Ownership: struct mu_qtree is the caller's; mu_qtree_build fills it
 * (arrays owned by it), mu_qtree_free frees them. Threads: whoever owns
 * the cluster.
 */
#ifndef MU_SCHED_QTREE_H
#define MU_SCHED_QTREE_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/cluster.h"

/* The root queue's name, and what spec.parent says to hang under it. */
#define MU_QTREE_ROOT "root"

enum mu_qtree_fault {
    MU_QTREE_OK = 0,
    MU_QTREE_NO_PARENT, /* spec.parent names no queue (at: this queue) */
    MU_QTREE_CYCLE,     /* the parents come back round (at: a queue on it) */
    MU_QTREE_BELOW,     /* an ancestor is broken (at: that ancestor's at) */
};

struct mu_qtree {
    size_t n;         /* queues at build */
    int root;         /* index of the queue "root", or -1: imagined */
    int *parent;      /* by index: the parent's index, -1 under an imagined
                         root, or for the root itself and broken queues */
    int *depth;       /* by index (broken: 1) */
    int *nchildren;   /* by index */
    unsigned char *fault; /* enum mu_qtree_fault by index */
    int *fault_at;    /* by index: the queue whose spec is at fault */
    int *order;       /* every index, parents before their children
                         (by depth, then index) */
    int maxdepth;
};

/* Fills t for c's queues. 0, or -ENOMEM never (allocation aborts). */
int mu_qtree_build(struct mu_qtree *t, const struct mu_cluster *c);
void mu_qtree_free(struct mu_qtree *t);

/* Depth of the lowest common ancestor of a and b (0: the root); a queue
 * is its own ancestor. Broken queues meet others at the root. */
int mu_qtree_meet(const struct mu_qtree *t, int a, int b);

/* out[i] (by index, t->n entries): allocated of queue i and of every queue
 * below it, what its status.allocated says (Volcano rolls it up too). */
void mu_qtree_rollup(const struct mu_qtree *t, const struct mu_cluster *c,
                     struct mu_res *out);

/* Whether queue i is broken; if so, appends why to sb (NULL: nothing),
 * one clause: "queue a's parent x does not exist". */
bool mu_qtree_fault_why(const struct mu_qtree *t, const struct mu_cluster *c,
                        int i, struct mu_sb *sb);

#endif
