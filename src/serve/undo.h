/*
 * undo.h - deleting a pod that the barrier undoes (a member bound while
 * its gang failed), and telling the scheduler thread.
 *
 * mu_undo_pod() first pushes MU_SRC_UNDO (ok: begun) on the event queue,
 * so the scheduler thread takes it before the pod's DELETED watch event
 * and the vcjob controller does not count that deletion as an eviction
 * (ctrl/jobctl.h). Then it sends DELETE with a uid precondition: only the
 * pod that was bound goes, never another made since under the same name.
 * A pod already gone (404), or a name that is another pod's now (409),
 * is done. A DELETE that deleted nothing (never sent, or a 4xx the
 * apiserver refuses before acting: mu_kube_not_done) pushes MU_SRC_UNDO
 * again with ok false, so the mark is taken back and a later loss of that
 * still-bound pod is an eviction again. An answer that may have deleted
 * it (a 5xx, a broken connection) takes nothing back.
 *
 * Threads: any (the barrier's); the pool and the queue are thread-safe.
 * Ownership: borrows pool and q, which outlive every call.
 */
#ifndef MU_SERVE_UNDO_H
#define MU_SERVE_UNDO_H

#include "common/mu.h"
#include "kube/pool.h"
#include "serve/evq.h"

struct mu_undo {
    struct mu_kube_pool *pool; /* borrowed */
    struct mu_evq *q;          /* borrowed */
};

/* Deletes pod ns/name of uid (NULL: whatever pod has that name), as
 * above. 0 when it is gone (or another's), else the call's negative
 * errno with err set. */
int mu_undo_pod(const struct mu_undo *u, const char *ns, const char *name,
                const char *uid, struct mu_err *err);

#endif
