/*
 * statement.h - an undo log of what a cycle did to the cluster (Volcano's
 * Statement): allocations, pipelines and evictions applied at once to the
 * in-memory state, undone in reverse when discarded.
 *
 * Marks make it nestable: take a mark, try something (a gang placement, an
 * eviction plan), then either keep it or roll back to the mark. Nothing in
 * the log reaches the API; actions record decisions separately when they
 * commit (framework.h).
 *
 * Owner: the session. Not thread-safe.
 */
#ifndef MU_SCHED_STATEMENT_H
#define MU_SCHED_STATEMENT_H

#include <stddef.h>

#include "sched/cluster.h"

enum mu_op_kind {
    MU_OP_PLACE, /* PENDING -> ALLOCATED or PIPELINED on a node */
    MU_OP_EVICT, /* RUNNING/BOUND -> RELEASING */
};

struct mu_op {
    enum mu_op_kind kind;
    struct mu_task *task;
    enum mu_task_status prev; /* status before the op */
};

struct mu_stmt {
    struct mu_cluster *cluster;
    size_t n, cap;
    struct mu_op *ops;
};

void mu_stmt_init(struct mu_stmt *s, struct mu_cluster *c);
void mu_stmt_release(struct mu_stmt *s);

static inline size_t mu_stmt_mark(const struct mu_stmt *s)
{
    return s->n;
}

/* Places a pending task on n as ALLOCATED or PIPELINED. */
void mu_stmt_place(struct mu_stmt *s, struct mu_task *t, struct mu_cnode *n,
                   enum mu_task_status st);
/* Marks an on-node task RELEASING (its resources count as future idle). */
void mu_stmt_evict(struct mu_stmt *s, struct mu_task *t);
/* Undoes every op after mark, newest first. */
void mu_stmt_rollback(struct mu_stmt *s, size_t mark);
/* Forgets the ops after mark without undoing them (they are kept). */
void mu_stmt_forget(struct mu_stmt *s, size_t mark);

#endif
