/*
 * jobs.h - the vcjob controller of `muster serve` (batch.volcano.sh Jobs).
 *
 * A Job becomes its PodGroup "<job>-<uid>" and its pods "<job>-<task>-<i>",
 * gated, as api/vcjob.h makes them. From then on the controller follows the
 * Job's pods: their phase changes and deletions become lifecycle events, the
 * Job's policies turn events into actions, and ctrl/jobsm.h says what each
 * action does in each phase. The controller deletes and makes pods and the
 * PodGroup, writes the Job's status (phase, counts, taskStatusCount,
 * version, retryCount, conditions) only when it changes, and deletes a
 * finished Job after ttlSecondsAfterFinished.
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
 * Threads: every function runs on the scheduler thread, which owns the
 * state. Errors from the API server are logged and retried at the next
 * sync; nothing here fails the daemon.
 */
#ifndef MU_SERVE_JOBS_H
#define MU_SERVE_JOBS_H

#include <jansson.h>
#include <stdbool.h>

#include "common/map.h"
#include "kube/watch.h"

struct mu_serve;
struct mu_jobctl;

struct mu_jobctl *mu_jobctl_new(void);
void mu_jobctl_free(struct mu_jobctl *jc);

/* A Job was added or changed (obj borrowed), or deleted. */
void mu_jobctl_job(struct mu_serve *sv, enum mu_watch_type type,
                   const json_t *obj);
/* A pod event (any pod; pods without volcano.sh/job-name are ignored). */
void mu_jobctl_pod(struct mu_serve *sv, enum mu_watch_type type,
                   const json_t *obj);
/* After a relist of Jobs (pods false) or pods (true): what `listed` (keys
 * "ns/name") no longer has is forgotten; pods with no event, since what
 * happened to them while the watch was down is unknown. */
void mu_jobctl_list_end(struct mu_serve *sv, bool pods,
                        const struct mu_map *listed);
/* Syncs the Jobs that changed, or every Job when `all` (the periodic tick:
 * ttl, retries of failed API calls, PodGroup phase changes). Call only once
 * caches are synced. */
void mu_jobctl_sync(struct mu_serve *sv, bool all);

#endif
