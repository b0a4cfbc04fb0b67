/*
 * pgctl.h - the PodGroup controller (volcano-api.md §3.6): a pod of
 * schedulerName "volcano" that is Pending, unbound and in no group gets a
 * PodGroup of its own (api/implicit.h: one per controlling owner, so a
 * Deployment's ReplicaSet shares one) and the group annotation
 * (MU_ANN_GROUP) naming it.
 *
 * Asynchronous (ctrl/ctl.h): the controller only submits writes.
 *   - The group: one write keyed by the PodGroup's path whose run function,
 *     on a writer worker, GETs the pod's apps/v1 owner when it has one
 *     (mu_implicit_owner_plural; its annotations set minMember), builds
 *     the PodGroup with mu_implicit_podgroup() from a copy of the pod taken
 *     at submit, and POSTs it. 409 (it exists) counts as made; a failed GET
 *     of the owner is logged and the PodGroup is made without its
 *     annotations, as before.
 *   - The annotation: once the group is made (its write completed, or the
 *     cache shows it), one merge patch per pod, keyed by the pod's path.
 * A pod whose writes are in flight or done is not written again: a sync
 * sends nothing for it until the write fails (then a later sync retries,
 * group and patch alike) or the pod changes identity (another uid). The
 * memory of a pod is dropped once the cache shows it grouped, bound or
 * gone; that of a group once the cache shows the PodGroup.
 *
 * Threads: everything here runs on the writer's owner thread (the
 * scheduler thread), done callbacks included; nothing locks.
 *
 * Ownership: the controller borrows its context, which must outlive it;
 * mu_pgctl_free() must come after mu_writer_free() of ctl->writer (the
 * writer's last done calls still reach the controller).
 */
#ifndef MU_CTRL_PGCTL_H
#define MU_CTRL_PGCTL_H

#include "ctrl/ctl.h"

struct mu_pgctl;

/* A controller on ctl (borrowed). Never NULL. */
struct mu_pgctl *mu_pgctl_new(const struct mu_ctl *ctl);
/* NULL is a no-op. */
void mu_pgctl_free(struct mu_pgctl *pc);

/* One pass over the cache's pods (see above); never waits on the API. */
void mu_pgctl_sync(struct mu_pgctl *pc);

#endif
