/*
 * enforce.h - the enforcer of muster serve: carries out a cycle's
 * decisions. It releases gangs (muster's gated pods are ungated and pinned
 * to their node, other operators' pods are woken with their node
 * nominated), evicts victims, recovers releases that never reached /bind,
 * takes down gangs left below minMember, and nudges waiting pods once.
 *
 * It owns the reservation ledger: a pod it released keeps its node in the
 * plan (the task placed, MU_TASK_BINDING) until the API shows it bound,
 * failed or gone (mu_enforcer_pod_seen / _pod_gone, called as watch
 * events are applied) or its batch fails (a bind report, an expiry, a
 * release write that failed). The extender's view is built from the
 * ledger (mu_enforcer_resv).
 *
 * Every write goes through ctl->writer; nothing here waits on the API.
 *
 * Threads: the scheduler thread, done callbacks included; evictions and
 * releases (the counters) are also read by /metrics threads.
 *
 * Ownership: the enforcer borrows its context (ctl and what it reaches);
 * mu_enforcer_release() must come after mu_writer_free() of ctl->writer,
 * whose last done calls reach the ledger.
 */
#ifndef MU_SERVE_ENFORCE_H
#define MU_SERVE_ENFORCE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/map.h"
#include "serve/recent.h"
#include "ctrl/ctl.h"
#include "sched/cycle.h"
#include "serve/podjson.h"

/* A pod muster has released and is waiting to see bound. */
struct mu_resv {
    char *key;      /* "ns/name" */
    char *uid;
    char *node;
    char *release;  /* batch id */
    int batch;      /* members of the batch */
    bool pinned;    /* released from muster's gate with a node affinity */
    int wakes;      /* wake-ups sent again after /filter misses */
    int renewals;   /* times its batch timed out and was kept (renew) */
    bool direct;    /* bound at its release by bind_gang (not woken):
                       handed over, or its gate being lifted first */
    bool ungated;   /* muster's gate: its release patch landed (the
                       watch may not show it yet) */
    int64_t since_ns;
};

/*
 * The release window (issue 15): at most `window` pods released and not
 * yet bound, and no more a cycle than half the room left in the writer's
 * queue. A backlog of 5,000 gangs released at once queued 40,000 release
 * patches behind the writer's cap and blocked the scheduler thread for
 * minutes. So a cycle places no more than both allow (mu_enforcer_pace:
 * the cluster's release_budget; the gangs behind wait their turn, and say
 * so): releases go out at the writer's pace, in job order (priority,
 * creation, name), which is the order kube-scheduler's queue takes the
 * pods in, so it finds each released when it reaches it. The window
 * grows by MU_RELEASE_WINDOW_STEP pods for each batch bound whole and
 * halves for each batch that timed out (kube-scheduler had not reached
 * its members in time), between MU_RELEASE_WINDOW_MIN and
 * MU_RELEASE_WINDOW_MAX.
 */
#define MU_RELEASE_WINDOW_MIN 64
#define MU_RELEASE_WINDOW_START 16384
#define MU_RELEASE_WINDOW_STEP 8
#define MU_RELEASE_WINDOW_MAX 65536

/* Since when a PodGroup has run below minMember (mu_enforcer_partial). */
struct mu_partial {
    int64_t since_ns;
    uint64_t seen; /* the last mu_enforcer_partial call that saw its job */
};

struct mu_enforcer {
    const struct mu_ctl *ctl;
    int64_t bind_timeout_ms;  /* the barrier's; releases expire later */
    struct mu_map resv;       /* the ledger: pod key -> struct mu_resv */
    struct mu_map announced;  /* uids of waiting pods nudged once -> 1 */
    struct mu_map unseen;     /* uids /filter answered unseen -> 1 */
    struct mu_map partial;    /* PodGroup key -> struct mu_partial */
    uint64_t partial_calls;   /* mu_enforcer_partial calls (seen) */
    uint64_t release_seq;     /* names release batches */
    long window;              /* the release window, in pods (above) */
    atomic_ullong evictions, releases; /* for /metrics */
    atomic_ullong evicted_reclaim, evicted_preempt; /* evictions by action */
    struct mu_recent recent;  /* the last releases and evictions (/ui) */
    /* Binds a released batch without kube-scheduler (muster serve
     * --gang-bind release: extender/relbind.h): t[0..n-1] are its members,
     * each bindable (mu_enforcer_bindable: plain, or its gate lifted),
     * reserved in the ledger. 0 when taken: the outcome comes back as a bind report
     * (mu_enforcer_bind_report), unless the release is over before its
     * turn (expired, failed, a member gone). An error: the batch is
     * woken instead. NULL: every batch is woken. Set
     * by the owner before the first cycle; called on the scheduler
     * thread. */
    int (*bind_gang)(void *ctx, const char *release,
                     struct mu_task *const *t, int n);
    /* How many more pods bind_gang would bind soon (relbind.h,
     * mu_relbind_room): the release budget stays within it. NULL: no
     * bound. */
    long (*bind_gang_room)(void *ctx);
    void *bind_gang_ctx;
    /* releases of gated pods whose patches are out, to be bound once
     * they landed (mu_enforcer_bind_ungated): release -> its record; at
     * most one per release in the ledger */
    struct mu_map ungating;
    size_t nready; /* of those, the ones whose every patch landed */
};

void mu_enforcer_init(struct mu_enforcer *e, const struct mu_ctl *ctl,
                      int64_t bind_timeout_ms);
/* Frees the ledger and the rest (see Ownership). */
void mu_enforcer_release(struct mu_enforcer *e);

/* The reservation of pod key ("ns/name"), or NULL. Valid until the ledger
 * changes. */
const struct mu_resv *mu_enforcer_resv(const struct mu_enforcer *e,
                                       const char *key);
/* The watch shows pod t (added or changed): a reservation it no longer
 * matches (bound, deleting, another uid) is dropped, else its task keeps
 * its node. */
void mu_enforcer_pod_seen(struct mu_enforcer *e, struct mu_task *t);
/* Pod key is gone (deleted, or not in a relist); uid may be NULL. */
void mu_enforcer_pod_gone(struct mu_enforcer *e, const char *key,
                          const char *uid);

/*
 * A cycle's decisions, in this order: mu_enforcer_evict() deletes the
 * victims; mu_enforcer_reserve() records every bind in the ledger, one
 * release batch per job, and returns true when there was any: the caller
 * then publishes the view, so that the extender knows a pod before
 * kube-scheduler first asks about it; mu_enforcer_release_pods() then
 * hands the releases to the writer.
 */
/*
 * True when nothing but the node is left for kube-scheduler to check of
 * pod t there, so muster may bind it itself: its spec asks nothing muster
 * does not model (kube_only), no DRA device serves it (a KEP-5004 pod's
 * plain extended resource: its claim is made and allocated by
 * kube-scheduler's PreBind, which a member muster binds itself would skip,
 * leaving it running on no device), the cache shows it without scheduling
 * gates (a gated pod's bind is refused: its release may still be queued
 * in the writer), and node is still in the cache and passes the static
 * checks (a node deleted, cordoned or tainted since the reservation, or
 * one a restarted muster took a release over onto, is kube-scheduler's to
 * refuse: the batch then waits for every member at /bind).
 */
bool mu_enforcer_plain(const struct mu_cluster *c, const struct mu_task *t,
                       const char *node);

/*
 * Pod t, reserved as r, may be bound by muster now: plain, or plain but
 * for muster's own gate when its release patch has landed (r->ungated:
 * the apiserver has it ungated, the cache may not yet).
 */
bool mu_enforcer_bindable(const struct mu_cluster *c, const struct mu_task *t,
                          const struct mu_resv *r);
/*
 * What the view publishes as plain (view.h): reserved as r, and plain or
 * plain but for muster's own gate, whose release patch is sent with the
 * reservation. kube-scheduler brings a pod to /bind only once its gates
 * are gone, so a member there is ungated; its gang-mates' patches are on
 * their way, and the barrier tries their binds again (a gated pod's bind
 * gets a 409) for MU_BARRIER_RETRY_MS (extender.h).
 */
bool mu_enforcer_plain_at_bind(const struct mu_cluster *c,
                               const struct mu_task *t,
                               const struct mu_resv *r);
/* Gated batches larger than this are bound the way they were before
 * (every member waits at /bind for the others): their patches go out on
 * MU_WRITER_THREADS workers, and past 8 rounds of them the last could
 * land after the barrier stops trying binds (MU_BARRIER_RETRY_MS), which
 * would undo the gang, and again at each release. Neither
 * mu_enforcer_plain_at_bind nor the release binder takes them. */
#define MU_GATED_AT_RELEASE_MAX 256

void mu_enforcer_evict(struct mu_enforcer *e, const struct mu_cycle_out *out);
bool mu_enforcer_reserve(struct mu_enforcer *e,
                         const struct mu_cycle_out *out);
void mu_enforcer_release_pods(struct mu_enforcer *e,
                              const struct mu_cycle_out *out);
/*
 * A batch of muster's own gated pods (a vcjob's) is bound at its release
 * too (with bind_gang set), once its gates are lifted: when every member
 * is plain, or plain but for muster's gate (its only one), release_pods
 * sends the gated members' release patches as before (ungate and pin) and
 * keeps the batch in e->ungating; when the last patch has landed the
 * batch is ready (mu_enforcer_has_ungated). The owner then calls
 * mu_enforcer_bind_ungated (after the writer's done calls), which hands
 * each ready batch to bind_gang and forgets it; the view published with
 * the reservation shows its members plain already
 * (mu_enforcer_plain_at_bind). kube-scheduler sees the pods ungated at the same time
 * and meets the same batch at /bind, whichever comes first. A patch that
 * fails leaves the batch to expire (as before); a ready batch that
 * bind_gang refuses, or whose members changed since (bound, gone, another
 * release, no longer bindable), is left to kube-scheduler: its gated
 * members are ungated and pinned already, the others are woken.
 * Scheduler thread.
 */
bool mu_enforcer_has_ungated(const struct mu_enforcer *e);
void mu_enforcer_bind_ungated(struct mu_enforcer *e);

/*
 * Takeover (a new leader, once, on its synced cache before its first
 * cycle): the releases another process made and that are not finished,
 * read from the members' annotations (MU_ANN_RELEASE...): a pod no longer
 * gated (or woken), not bound, still Pending. A release whose members are
 * all there (bound ones and not), each unbound one's node in the cache, is
 * finished: its unbound members go into
 * the ledger as one batch of that many on their nodes, so kube-scheduler
 * binds them through this barrier. One that is missing members (the old
 * leader died between its patches, a member was deleted) is undone like
 * a failed batch: its pinned pods that have a controller are deleted (it
 * makes them again, gated); woken pods and pods without a controller are
 * left alone (see mu_enforcer_bind_report). Writes only deletes.
 */
void mu_enforcer_adopt(struct mu_enforcer *e);

/*
 * A bind batch finished (the barrier's report): a failed one is dropped,
 * and its pods pinned to a node they never reached are deleted when they
 * have a controller (a controller ownerReference: it makes them again,
 * gated). Never a pod without one: muster does not delete a bare pod. Such
 * a pod stays, pinned: its pin is in its spec (node affinity cannot be
 * loosened once a pod is ungated), so muster's cycle plans it again on that
 * node only, and releases it there (woken, as another operator's pod) when
 * the node can run it; until then its reason says it is pinned there
 * (mu_enforcer_reason). The same rule holds for an expiry
 * (mu_enforcer_expire) and a takeover (mu_enforcer_adopt); a bare pod whose
 * pinned node can no longer run it is made again (serve/remake.h).
 */
void mu_enforcer_bind_report(struct mu_enforcer *e, const char *release,
                             bool ok, const char *detail);
/*
 * A batch timed out in the barrier: not every member reached /bind within
 * the barrier's timeout, and none was bound. That is kube-scheduler not
 * having reached every member yet (it works through its queue one pod at
 * a time, and a pod it rejected earlier comes back behind the rest), not
 * a failure: the reservations are kept on the same nodes under a new
 * batch id, which the next view publishes; the members that waited got an
 * error, and kube-scheduler tries them again into the new batch. Nothing
 * is written (a pinned pod stays pinned: it is where it should be). True
 * when kept; false, and the caller undoes it as a failed batch
 * (mu_enforcer_bind_report), when a member is gone, bound or no longer
 * held on its node, or the release was kept MU_RENEW_MAX times already.
 * The release's age (since_ns) is not reset: mu_enforcer_expire still
 * ends one that never completes.
 */
#define MU_RENEW_MAX 8
bool mu_enforcer_renew(struct mu_enforcer *e, const char *release);
/* Releases whose pods never reached /bind in time are recovered (one
 * batch per call). */
void mu_enforcer_expire(struct mu_enforcer *e);
/* Sets c's release_budget (the window less the pods released and not yet
 * bound, at most half the writer's room and the release binder's room,
 * bind_gang_room, never below 0), release_inflight
 * and release_window for the next cycle. */
void mu_enforcer_pace(const struct mu_enforcer *e, struct mu_cluster *c);
/* Nothing in flight: no reservation in the ledger. Then nothing the
 * enforcer holds can change with time alone. */
bool mu_enforcer_idle(const struct mu_enforcer *e);
/* Deletes pod t, which has no node, through the writer (its uid as the
 * precondition: a pod made again under the name is spared; after any
 * write already queued for it); t leaves every plan (status Unknown)
 * until its DELETED event removes it, or a later event of the pod (a
 * delete that did not go through) shows it as it is. Planned again
 * before its delete lands, it would be released, and bound, only to be
 * deleted under its gang. done (optional) is the write's outcome, on the
 * scheduler thread (mu_write.done; a pod already gone is rc 0); without it
 * a failure is only logged. Returns mu_writer_submit's result: when it is
 * negative, done is never called. */
int mu_enforcer_delete_unbound(struct mu_enforcer *e, struct mu_task *t,
                               void (*done)(void *ctx, int rc,
                                            const char *msg),
                               void *ctx);

/* Takes down gangs that ran below minMember for too long: their running
 * members that have a controller (a pod without one is kept). */
void mu_enforcer_partial(struct mu_enforcer *e);
/* /filter saw pod uid without its reserved node among NodeNames: a pod
 * muster did not gate is woken again (mu_serve_wake_patch), at most a few
 * times per reservation. */
void mu_enforcer_filter_miss(struct mu_enforcer *e, const char *uid);
/* Pod uid was answered by /filter before muster's view had it (starting,
 * or not seen yet): kube-scheduler set it aside with that reason. Kept
 * for mu_enforcer_announce, at most MU_UNSEEN_CAP (one beyond is
 * forgotten: its next attempt, at a release or kube-scheduler's own
 * retry, gets the real reason anyway). */
#define MU_UNSEEN_CAP 65536
void mu_enforcer_unseen(struct mu_enforcer *e, const char *uid);
/* Nudges each pod kept by mu_enforcer_unseen once, with an annotation, so
 * its next attempt and event carry the gang's reason: only pods the view
 * now explains, kube-scheduler can see (not held by muster's gate), and
 * while half the writer's room lasts (a backlog of 40,000 pods must not
 * fill the queue releases need; the rest go at a later call). */
void mu_enforcer_announce(struct mu_enforcer *e);

/*
 * Why pod t waits, as the view and its events say it: why (the gang's
 * reason), preceded, when t is pinned by a release of muster's that did not
 * bind it (MU_ANN_PINNED on a pod not gated, not bound), by "pinned to node
 * X by release R": a reason never hides a pin. Returns an owned string
 * when t is pinned, else NULL (the reason is why as it is: nothing is
 * allocated for the many pods that are not).
 */
char *mu_enforcer_reason(const struct mu_task *t, const char *why);

/* The release of one pod as the writer sends it (a writer run function,
 * exposed for tests). gated: muster's gate goes and the pod is pinned to
 * node, with w->body (mu_serve_release_smp) when smp, else, or when the
 * server refuses that as invalid, with a GET and a JSON patch guarded by
 * the uid; not gated: w->body (a merge patch) as is. */
struct mu_release {
    struct mu_enforcer *enf; /* for the done callback (scheduler thread) */
    char *key, *release, *node, *uid;
    int batch;  /* members of the release, written on the pod */
    bool gated; /* muster's gate: ungate and pin; else wake */
    bool smp;   /* gated, and no required node affinity term seen */
};
int mu_serve_release_run(struct mu_kube *k, const struct mu_write *w,
                         void *ctx, struct mu_err *err);

#endif
