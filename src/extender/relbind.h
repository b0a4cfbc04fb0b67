/*
 * relbind.h - binds a gang at its release (muster serve --gang-bind
 * release, the default).
 *
 * A release batch whose members are all plain (view.h, struct
 * mu_view_pod: nothing in their specs is left for kube-scheduler to check
 * or prepare beyond the reserved node) needs nothing of kube-scheduler.
 * The scheduler thread hands it here when it releases it (a batch of
 * muster's own gated pods once their release patches have landed and the
 * view shows them plain: serve/enforce.h, mu_enforcer_bind_ungated),
 * instead of waking each member and
 * waiting for kube-scheduler to bring one to /bind: behind a backlog,
 * kube-scheduler's queue holds every waiting pod, each rejected by /filter
 * and tried again at its backoff, so a woken pod waits its turn behind
 * all of them (issue 15: minutes at 5,000 nodes and 40,000 pods).
 *
 * The binding itself is the barrier's (mu_barrier_bind_gang, internal.h):
 * its gang slots, its retries, its judge, its undo (only pods with a
 * controller are deleted) and its one report to the scheduler thread. A
 * member kube-scheduler brings to /bind meanwhile meets the same batch
 * there and is answered from its outcome.
 *
 * Threads: MU_RELBIND_THREADS workers take the gangs in the order they
 * were submitted. Before each try, a worker reads the published view: a
 * release the view no longer holds (it expired, failed, or a member is
 * bound or gone) is dropped unbound and counted as stale (the scheduler
 * thread has moved on); one it still holds with a member that is no
 * longer plain on its node (cordoned, tainted, relabelled since) is
 * reported failed through the barrier's report, so the scheduler thread
 * drops it and plans again. A gang the barrier refuses for room (every
 * gang slot busy, no batch made: -ENOSPC) is tried again every
 * MU_RELBIND_RETRY_MS, reading the view again first.
 *
 * A gang bound at its release carries none of the release annotations a
 * wake-up writes (muster.io/release...): a leader that dies between its
 * members' binds leaves the bound ones running and the others pending,
 * unreleased, and the next leader's cycle places those again with their
 * running gang-mates counted (or, when they no longer fit,
 * mu_enforcer_partial takes the gang down as for any gang left below
 * minMember).
 * mu_relbind_submit is called from one thread (the scheduler thread);
 * the counters are read from any.
 *
 * Bounds: at most MU_RELBIND_QUEUE_MAX gangs queued, MU_RELBIND_MEMBERS_MAX
 * members a gang; submit refuses past either (-EAGAIN, -E2BIG), and the
 * caller releases the gang the other way. The caller keeps under the first
 * by asking mu_relbind_room before it releases more: a gang released
 * beyond what the workers can bind soon gains nothing (they bind at the
 * API server's pace, not the release's) and, refused, is woken for
 * kube-scheduler, whose queue, behind a backlog, holds it for minutes
 * (issue 15: 5x the size, 25,000 gangs, released at 60 a second
 * and bound at 35, refused by the hundred).
 *
 * Ownership: submit copies what it is given. mu_relbind_free stops the
 * workers (a gang being bound is finished first; queued ones are dropped
 * unbound) and must come before the barrier and the view slot are freed.
 */
#ifndef MU_EXTENDER_RELBIND_H
#define MU_EXTENDER_RELBIND_H

#include <stdatomic.h>

#include "common/mu.h"
#include "extender/extender.h"
#include "extender/view.h"

#define MU_RELBIND_THREADS 8
#define MU_RELBIND_QUEUE_MAX 4096
#define MU_RELBIND_MEMBERS_MAX 4096
#define MU_RELBIND_RETRY_MS 200
/* Members queued or being bound that mu_relbind_room aims at: several
 * seconds of the workers' binds (300-500 pods/s on the bench machine), so
 * they never run dry between two cycles. */
#define MU_RELBIND_PODS_AHEAD 4096
/* A caller within the room stays within the queue's cap too (a gang has
 * one member at least). */
_Static_assert(MU_RELBIND_PODS_AHEAD <= MU_RELBIND_QUEUE_MAX,
               "the binder's room must not outgrow its queue");

struct mu_relbind_stats {
    atomic_ullong submitted; /* gangs taken by mu_relbind_submit */
    atomic_ullong bound;     /* handed to the barrier, which bound them */
    atomic_ullong failed;    /* the barrier did not bind them, or a
                                member was no longer plain (reported) */
    atomic_ullong stale;     /* dropped: the view no longer held them, or
                                a member reached /bind first (its batch
                                binds them there) */
    atomic_ullong refused;   /* submit refused them (queue full, too big) */
};

struct mu_relbind;

/* Starts the workers (at least one; fewer than MU_RELBIND_THREADS when
 * threads cannot be made). b and views are borrowed. 0, or -errno with
 * err when no worker could start. */
int mu_relbind_new(struct mu_barrier *b, struct mu_view_slot *views,
                   struct mu_relbind **out, struct mu_err *err);
void mu_relbind_free(struct mu_relbind *rb);

/* Queues release batch `release` (m[0..n-1], every member) to be bound.
 * 0; -EAGAIN when MU_RELBIND_QUEUE_MAX gangs wait already; -E2BIG past
 * MU_RELBIND_MEMBERS_MAX members; -EINVAL for n < 1 or a member without
 * names, uid or node. Nothing is kept on an error. */
int mu_relbind_submit(struct mu_relbind *rb, const char *release,
                      const struct mu_barrier_member *m, int n);

/* How many more members may be released to be bound here: 0 when
 * MU_RELBIND_QUEUE_MAX gangs are queued or the binder is stopping, else MU_RELBIND_PODS_AHEAD less
 * the members queued or being bound (never below 0). A gang larger than
 * the room is still taken (submit's caps only): the room paces, it does
 * not refuse. Thread-safe. */
long mu_relbind_room(struct mu_relbind *rb);
/* The members queued or being bound now (for /metrics). Thread-safe. */
long mu_relbind_pods(struct mu_relbind *rb);

const struct mu_relbind_stats *mu_relbind_stats(const struct mu_relbind *rb);

#endif
