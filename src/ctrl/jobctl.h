/*
 * jobctl.h - the vcjob controller of `muster serve` (batch.volcano.sh Jobs).
 *
 * A Job becomes its PodGroup "<job>-<uid>" and its pods "<job>-<task>-<i>",
 * gated, as api/vcjob.h makes them (after the svc and ssh plugins' Service,
 * ConfigMap, NetworkPolicy and Secret, which the pods mount). From then on
 * the controller follows the Job's pods: their phase changes and deletions
 * become lifecycle events, the Job's policies turn events into actions, and
 * ctrl/jobsm.h says what each action does in each phase. The controller
 * deletes and makes pods and the PodGroup, patches the PodGroup's spec when
 * the Job is scaled, writes the Job's status (phase, counts,
 * taskStatusCount, version, retryCount, conditions) only when it changes,
 * and deletes a finished Job after ttlSecondsAfterFinished.
 *
 * Differences from Volcano, on purpose:
 *  - Pods are made as soon as the Job is valid (gated), not after enqueue:
 *    muster's engine needs the pods to plan the gang; the gate keeps them
 *    off kube-scheduler until the whole gang is reserved.
 *  - A pod deleted before it was bound (a release that never completed) is
 *    not a PodEvicted event: nothing ran, so it is made again without
 *    spending a retry.
 *  - A policy's timeout: a PodPending policy fires once a pod has been
 *    Pending that long (checked at every sync, the 1 s tick too); for other
 *    events the action is not delayed.
 *
 * Context (ctrl/ctl.h): the controller reads the PodGroups of ctl->cluster
 * (a Pending Job's message, the Unknown phase) and sends every request
 * through ctl->writer; it never waits on the network. What a request tells
 * it comes back in the write's done callback, at a later mu_writer_drain()
 * on the same thread: a create that went through (409 AlreadyExists counts
 * as made), a delete that found nothing. A write that failed is sent again
 * at a later sync (the Job's next one, the periodic tick at the latest); a
 * write still in the writer is never sent a second time. Writes are keyed
 * by the object they write (writer.h), so the writes of one pod, of one
 * PodGroup or of one Job are sent in the order they were decided.
 *
 * Threads: every function runs on the scheduler thread (the writer's
 * owner), which owns the controller's state; nothing locks. Errors from the
 * API server are logged (ctl->log) and, where a user should see them, posted
 * as Warning events on the Job; nothing here fails the daemon.
 *
 * Ownership: every json_t passed in is borrowed.
 */
#ifndef MU_CTRL_JOBCTL_H
#define MU_CTRL_JOBCTL_H

#include <jansson.h>
#include <stdbool.h>

#include "common/map.h"
#include "ctrl/ctl.h"
#include "kube/watch.h"

struct mu_jobctl;

/*
 * A controller with no Jobs. *ctl is copied; what its members point to is
 * borrowed and must outlive the controller. Never NULL (aborts on OOM).
 */
struct mu_jobctl *mu_jobctl_new(const struct mu_ctl *ctl);

/*
 * Frees the controller and everything it follows. Writes it submitted
 * still point at it, so the writer must have made its last done calls
 * first (mu_writer_free(), or mu_writer_flush() then mu_writer_drain()).
 * NULL is a no-op.
 */
void mu_jobctl_free(struct mu_jobctl *jc);

/* A Job was listed, added or changed (obj), or deleted. Only marks it for
 * the next sync; a Job deleted is forgotten (its pods and PodGroup go with
 * it through their ownerReferences). */
void mu_jobctl_job(struct mu_jobctl *jc, enum mu_watch_type type,
                   const json_t *obj);

/* A pod event (any pod; pods without the label volcano.sh/job-name are
 * ignored): the pod index and the lifecycle events the next sync acts on. */
void mu_jobctl_pod(struct mu_jobctl *jc, enum mu_watch_type type,
                   const json_t *obj);

/* muster itself is about to delete pod ns/name of uid to undo a gang bind
 * that did not complete (the barrier's undo, extender.h mu_unbind_fn),
 * before the DELETE is sent. Its deletion, when the watch shows it, is
 * then no eviction: the pod is made again without a RestartJob or a retry
 * counted, as a pod that never got a node is (Volcano's job controller
 * never sees its scheduler undo a bind; a vcjob with maxRetry 1 must not
 * fail for one). Unknown pods, and a name whose pod has another uid, are
 * ignored. on false takes the mark back: the DELETE was refused in a way
 * that deletes nothing (a 4xx other than 404 and 409, or never sent), so
 * the pod stays bound and a later loss of it is an eviction again.
 * O(Jobs); undos are rare. */
void mu_jobctl_pod_undone(struct mu_jobctl *jc, const char *ns,
                          const char *name, const char *uid, bool on);

/* After a relist of Jobs (pods false) or pods (true): what `listed` (keys
 * "ns/name", values ignored) no longer has is forgotten; pods with no
 * event, since what happened to them while the watch was down is unknown. */
void mu_jobctl_list_end(struct mu_jobctl *jc, bool pods,
                        const struct mu_map *listed);

/* Syncs the Jobs that changed, or every Job when `all` (the periodic tick:
 * ttl, retries of failed writes, PodGroup phase changes), in key order.
 * Call only once the caches have synced. */
void mu_jobctl_sync(struct mu_jobctl *jc, bool all);

/*
 * A Command asks for `action` ("AbortJob", "ResumeJob", "RestartJob",
 * "TerminateJob", "CompleteJob"; see mu_jaction_parse) on vcjob ns/name.
 * Carried out at the next sync, in arrival order; an unknown action is
 * logged and dropped; a Job that is still not there at that sync drops
 * its commands with a log line.
 */
void mu_jobctl_command(struct mu_jobctl *jc, const char *ns, const char *name,
                       const char *action);

#endif
