/*
 * report.h - what `muster serve` says about its queues and gangs on
 * /debug/queues, /debug/gangs and /debug/gang/NS/NAME, and what `muster get`
 * and `muster explain` print from it.
 *
 * A report is a JSON snapshot of the cluster as the last cycle left it:
 *
 *   {"at": "RFC 3339 time", "queues": [QUEUE...], "gangs": [GANG...]}
 *
 *   QUEUE: name, state, weight, reclaimable, capability, guarantee,
 *          deserved (absent without a share plugin), allocated (each a map
 *          of resource name to quantity string, the way kubectl prints
 *          them), gangs, pendingGangs, runningGangs
 *   GANG:  namespace, name, queue, phase (the PodGroup's), minMember,
 *          priority, created (RFC 3339), waitSeconds (since created, for a
 *          gang not running its minMember yet; else absent), pods {total,
 *          pending, running, succeeded, failed}, vcjob (the owning vcjob's
 *          name, when it has one), reason (the PodGroup condition's
 *          message; "" when none), podRequest (one pending pod's request),
 *          needPods (members still to place), unblock (what would let it
 *          start, in words, with numbers; absent for a running gang),
 *          nodes (the nodes its placed pods are on, sorted; only when some
 *          are)
 *
 * Queues are sorted by name, gangs by namespace/name. The gangs ahead of a
 * gang are the pending gangs of its queue that allocate takes first by
 * default: a higher priority, or the same priority and created earlier
 * (then namespace/name).
 *
 * Ownership: both functions return new objects or strings the caller owns.
 * Threads: mu_report_build reads the cluster (the scheduler thread, between
 * cycles); mu_report_answer only reads the snapshot, which never changes
 * once built, so any thread may answer from a snapshot it holds a
 * reference to. Allocation failures abort (mu_x*).
 */
#ifndef MU_SCHED_REPORT_H
#define MU_SCHED_REPORT_H

#include <jansson.h>
#include <stdint.h>

#include "sched/cluster.h"

/* Most gangs ahead listed by name in an answer (the count is exact). */
#define MU_REPORT_AHEAD_MAX 20

/* The snapshot of c at now_ms (wall clock, for "at" and the wait times). */
json_t *mu_report_build(const struct mu_cluster *c, int64_t now_ms);

/*
 * The answer to a /debug path from snapshot snap: "/debug/queues" (the
 * queues array), "/debug/gangs" (the gangs array), "/debug/decisions" (the
 * snapshot's "recent" array, which its owner may add: muster serve puts
 * its last releases and evictions there, serve/recent.h; [] without),
 * "/debug/gang/NS/NAME"
 * ({"gang": GANG, "queue": QUEUE or null, "ahead": N, "aheadGangs":
 * ["ns/name"...]}). *status is 200, 404 for a path or gang it does not know
 * (the body then says which, as {"error": "..."}), or 503 when snap is NULL
 * (no cycle yet). Returns compact JSON text with a newline.
 */
char *mu_report_answer(const json_t *snap, const char *path, int *status);

#endif
