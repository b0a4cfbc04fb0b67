/*
 * evq.h - the queue between the watch threads (and the bind barrier, the
 * extender's HTTP threads, the writer's workers) and the scheduler thread.
 * Producers push; the scheduler thread takes everything queued at once.
 *
 * Bounds. Each kind of event has its rule; none is dropped silently:
 *   - Watch events (src < MU_SRC__COUNT): at most q->cap (MU_EVQ_CAP)
 *     queued. A watch thread that pushes while that many wait blocks until
 *     the scheduler thread takes them: backpressure on its stream (it
 *     stops reading; the apiserver buffers, and closes a watch that falls
 *     too far behind, which then relists). Never lost.
 *   - Writes completed (MU_SRC_WRITE_DONE): a flag, not a list: a push
 *     while one waits is folded into it (the drain it asks for reports
 *     every completion so far). Never blocks.
 *   - Bind reports (MU_SRC_BIND_REPORT): never block and are always
 *     queued; there is one per release batch the enforcer made, so they
 *     are bounded by the batches in its ledger.
 *   - Filter misses (MU_SRC_FILTER_MISS): never block; at most
 *     MU_EVQ_MISS_CAP wait, and one pushed beyond that is dropped and
 *     counted in q->misses_dropped (a hint: kube-scheduler's next attempt
 *     at the pod misses again and reports it again).
 *   - Leadership changes (MU_SRC_LEASE): never block, always queued; at
 *     most two per process (gained, lost).
 *   - Undos (MU_SRC_UNDO): never block, always queued; pushed by the
 *     barrier before each DELETE of a member it undoes, so the scheduler
 *     thread takes it before that pod's DELETED watch event (this queue is
 *     one list, oldest first), and again after a DELETE that deleted
 *     nothing. At most two per member of a batch that failed part bound:
 *     bounded by the barrier's batches, as bind reports are.
 * So a producer on a thread the scheduler thread waits for (a writer
 * worker, while the scheduler thread blocks in mu_writer_submit) never
 * blocks here, and the scheduler thread, which only takes, never waits
 * on a producer. mu_evq_close() ends every wait at shutdown.
 */
#ifndef MU_SERVE_EVQ_H
#define MU_SERVE_EVQ_H

#include "common/clock.h"
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/watch.h"

enum mu_src {
    MU_SRC_NODE,
    MU_SRC_POD,
    MU_SRC_PODGROUP,
    MU_SRC_QUEUE,
    MU_SRC_PRIORITYCLASS,
    MU_SRC_JOB,
    MU_SRC_COMMAND,
    MU_SRC_DEVICECLASS,   /* resource.k8s.io/v1 (DRA) */
    MU_SRC_SLICE,
    MU_SRC_CLAIM,
    MU_SRC_CLAIMTEMPLATE,
    MU_SRC_HYPERNODE,     /* topology.volcano.sh (optional CRD) */
    MU_SRC__COUNT,
    MU_SRC_BIND_REPORT = MU_SRC__COUNT, /* from the barrier */
    MU_SRC_WRITE_DONE,                  /* writes completed (writer.h) */
    MU_SRC_FILTER_MISS, /* /filter missed a reserved node (extender.h) */
    MU_SRC_LEASE,       /* leadership gained or lost (kube/lease.h) */
    MU_SRC_UNDO,        /* the barrier deletes a pod to undo a bind (ok),
                           or its DELETE deleted nothing (!ok) */
};

struct mu_ev {
    enum mu_src src;
    enum mu_watch_type type; /* for watch sources */
    json_t *obj;             /* owned; NULL for LIST_BEGIN/END; undo:
                                {"namespace", "name"} of the pod */
    char *release;           /* bind report: batch id (owned) */
    bool ok;                 /* bind report; undo: begun (true) or its
                                DELETE deleted nothing (false) */
    bool timed_out;          /* bind report: not all members came */
    char *detail;            /* bind report (owned); filter miss, undo:
                                pod uid */
    struct mu_ev *next;
};

/* Watch events queued at most (a relist of a big cluster takes a few
 * turns of the loop; each takes them all). */
#define MU_EVQ_CAP 8192u
/* Filter misses queued at most. */
#define MU_EVQ_MISS_CAP 1024u

struct mu_evq {
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* something queued */
    pthread_cond_t room;     /* watch events taken, or closed */
    struct mu_ev *head, *tail;
    size_t n;                /* queued, all kinds */
    size_t nwatch, nmiss;    /* of which watch events, filter misses */
    bool write_done;         /* a MU_SRC_WRITE_DONE is queued */
    bool closed;
    size_t cap;              /* MU_EVQ_CAP; may be set before first use */
    uint64_t misses_dropped; /* filter misses over MU_EVQ_MISS_CAP */
};

void mu_evq_init(struct mu_evq *q);
/* Frees whatever is still queued. */
void mu_evq_release(struct mu_evq *q);
/* Takes ownership of ev (allocated with mu_xmalloc). Any thread; blocks
 * only for a watch event while the queue is full (see Bounds). After
 * mu_evq_close() the event is freed and not queued. */
void mu_evq_push(struct mu_evq *q, struct mu_ev *ev);
/* Shutdown: wakes the producers blocked in mu_evq_push(), and makes every
 * later push a no-op, so the watch threads can be joined. */
void mu_evq_close(struct mu_evq *q);
/* Waits until something is queued or until deadline_ns (CLOCK_MONOTONIC),
 * then returns the whole list (owned, oldest first) or NULL. */
struct mu_ev *mu_evq_take(struct mu_evq *q, int64_t deadline_ns);
void mu_ev_free(struct mu_ev *ev);

#endif
