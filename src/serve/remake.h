/*
 * remake.h - the remaker of muster serve: nothing stays pinned to a node
 * where it cannot run.
 *
 * A pod muster pinned (MU_ANN_PINNED), not bound, in no live release (the
 * enforcer's ledger does not hold it: its batch failed, expired, or its
 * release was another process's), whose pinned node is gone from the cache
 * or unschedulable:
 *   - with a controller: deleted (its controller makes it again, gated);
 *     a delete that fails is logged and, after a backoff from 1 s doubling
 *     to MU_REMAKE_BACKOFF_MAX_MS, the pod is looked at again and deleted
 *     again if it still qualifies;
 *   - without one: made again, since a pod's node affinity cannot be
 *     loosened once it is ungated. A writer run (mu_serve_remake_run) reads
 *     the pod, and only when it is still that uid, unbound and pinned,
 *     deletes it (uid precondition) and creates it again under its name
 *     from its own spec (mu_serve_remade_pod): unpinned, with muster's gate,
 *     muster's release annotations dropped. A create that fails after the
 *     delete is never given up: the pod as it was to be created stays in
 *     m->pods and is sent again (its POST alone) at a later call, with a
 *     backoff from 1 s doubling to MU_REMAKE_BACKOFF_MAX_MS, until it is
 *     made. A 409 is read: the pod an earlier try made (its reply lost) is
 *     success, the old pod still going (a finalizer) is tried again later,
 *     and only a pod someone else made under the name ends it (logged with
 *     the whole pod that was to be made).
 * One write per pod at a time; every request goes through ctl->writer.
 *
 * Threads: the scheduler thread, done callbacks included.
 *
 * Ownership: the remaker borrows ctl and the enforcer;
 * mu_remaker_release() must come after mu_writer_free() of ctl->writer,
 * whose last done calls reach m->pods.
 */
#ifndef MU_SERVE_REMAKE_H
#define MU_SERVE_REMAKE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/map.h"
#include "ctrl/ctl.h"
#include "serve/enforce.h"

#define MU_REMAKE_BACKOFF_MAX_MS 30000

struct mu_remaker {
    const struct mu_ctl *ctl;
    /* its ledger (a pod in a live release is left alone) and its delete of
     * a pod that has no node (mu_enforcer_delete_unbound) */
    struct mu_enforcer *enf;
    struct mu_map pods; /* pod uid -> struct mu_remake */
};

void mu_remaker_init(struct mu_remaker *m, const struct mu_ctl *ctl,
                     struct mu_enforcer *enf);
/* Frees what it holds (see Ownership). */
void mu_remaker_release(struct mu_remaker *m);

/* Deletes or makes again the pods above (a failed create whose time has
 * come is sent again). Called once per cycle. */
void mu_remaker_recover(struct mu_remaker *m);
/* Pod uid is gone (its DELETED event): a controlled pod deleted here is
 * forgotten (once its delete's outcome is in); a bare pod being made
 * again stays until it is made. */
void mu_remaker_pod_gone(struct mu_remaker *m, const char *uid);
/* No pod being made again or deleted: nothing here changes with time. */
bool mu_remaker_idle(const struct mu_remaker *m);

/* A bare pod being made again; the ctx of its writes. made is the run's
 * output: written by mu_serve_remake_run on the worker once the old pod is
 * deleted, read by the done call after it (the writer orders the two); the
 * scheduler thread reads it only then. */
struct mu_remake {
    struct mu_remaker *rm;
    char *key, *uid, *node;
    char *path, *coll;  /* the pod's path, its collection's */
    json_t *made;       /* the pod to create (owned), once deleted */
    bool inflight;      /* a write of it is queued or running */
    bool deleted_only;  /* a controlled pod being deleted: forgotten
                           when the pod is gone; a delete that failed is
                           forgotten at next_ns, and the pod looked at
                           again then */
    bool gone;          /* its DELETED event came while its delete was
                           still inflight: freed by the delete's done */
    int tries;          /* failed creates, or failed deletes */
    int64_t next_ns;    /* when a failed create or delete goes again */
};
/* The writer run of the first write (exposed for tests): GET, check,
 * DELETE, POST, as said above. 0 when the pod was made again or nothing
 * was to be done (gone, bound, another uid, no longer pinned). */
int mu_serve_remake_run(struct mu_kube *k, const struct mu_write *w,
                        void *ctx, struct mu_err *err);

#endif
