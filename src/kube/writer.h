/*
 * writer.h - asynchronous writes to the Kubernetes API.
 *
 * The scheduler thread owns the cache, the ledger and the cycle; every API
 * round trip it makes itself (5 to 50 ms on a busy apiserver) is time in
 * which it applies no event, hears no bind report and plans nothing.
 * Instead it hands its writes (pod patches, deletes, events, status) to a
 * writer and carries on: a few worker threads, each with its own client
 * (sharing one rate limit), send them, and the outcomes come back to the
 * scheduler thread, which decides what a failure means.
 *
 * Threads:
 *   - The owner (muster serve: the scheduler thread) calls mu_writer_drain()
 *     and mu_writer_free(). Done callbacks run there and only there, so they
 *     may touch the owner's state without locks.
 *   - mu_writer_submit() and mu_writer_event() may be called from any thread
 *     (they take the writer's lock), but only the owner drains.
 *   - opts.threads workers send the writes, each with a client made on its
 *     own thread (opts.kube; one shared qps/burst bucket for all of them).
 *     A write's run function (if any) runs on a worker.
 *   - opts.notify runs on a worker each time a completion is queued for the
 *     owner while none was waiting: it must be thread-safe and must not
 *     block (muster serve pushes an event on its queue, evq.h, so the
 *     scheduler thread wakes up and drains).
 *
 * Ordering per object: every write names the object it writes, its key
 * (by default its path). Writes with the same key are sent one at a time,
 * in the order they were submitted: one starts only after the previous one
 * with that key has completed. Writes with different keys run concurrently
 * and complete in any order. So "patch pod p, then delete pod p" is safe;
 * "release the gang" runs its eight pod patches at once.
 *
 * Urgency: a write flagged MU_WRITE_URGENT goes ahead of every queued write
 * that is not (after the urgent ones already queued), unless a write with
 * its key is queued and not urgent: then it waits its turn, as above. For
 * the writes a gang waits on (releases), which must not queue behind a
 * burst of pod creates or status writes.
 *
 * Background: at most opts.background writes flagged MU_WRITE_BACKGROUND
 * (MU_WRITER_BACKGROUND) are sent at once; a worker passes over the
 * others while that many are out, and takes the next write that is not
 * flagged. For what only tells (status, events): on a small control
 * plane the apiserver's CPU is shared by every request in flight, and a
 * burst of status writes on every worker made the binds and releases
 * that gangs wait on slower and less even (issue 15: a gang's members
 * bound further apart). Background writes keep their order per key and
 * their place in the queue among themselves; a write queued behind a
 * background write of its key becomes one (so the order per key holds). While a submitter waits for
 * room (see Bounds) the cap is lifted: writes that only tell never hold
 * up the owner longer than they would without it.
 *
 * Coalescing: a write flagged MU_WRITE_COALESCE replaces the newest write
 * with the same key that is still queued (not started) if that one was
 * flagged too: the newer content is sent in the older one's place, and the
 * older one completes with -ECANCELED. Use it for writes that set a whole
 * state (a status), never for ones that do something (a delete, an event).
 *
 * Merging: a write flagged MU_WRITE_MERGE is a JSON merge patch (RFC 7386)
 * whose body may be folded with the newest queued (not started) write with
 * the same key, if that one is flagged too: the newer write takes the older
 * one's place with a body that does what the two did one after the other,
 * and the older one completes with -ECANCELED. When the two cannot be
 * composed into one merge patch (the older one deletes a member the newer
 * one sets to an object), the newer write queues behind the older one.
 * Use it for a series of diffs of one state (each written against the one
 * before), where coalescing would lose the older diff.
 *
 * Gate: opts.gate, when set, is asked before a write is queued and again
 * just before a worker starts it (a run function's later requests are
 * not asked again): while it answers false, mu_writer_submit() refuses
 * with -EPERM and a queued write completes with -EPERM, unsent. muster
 * serve gates on its Lease (kube/lease.h): the last guard that a process
 * that is not the leader writes nothing, whatever its loop decided.
 *
 * Errors: a write's outcome is 0 or a negative errno: the request's
 * (client.h; HTTP errors mapped by mu_kube_http_errno(), e.g. -ENOENT for
 * 404) with its one-line message, or the run function's. The writer never
 * retries: a write either happened or the owner is told it did not.
 * MU_WRITE_GONE_OK counts -ENOENT as success (a delete of a pod that is
 * already gone). -ECANCELED means "not sent": replaced by a coalesced
 * write, or the writer was freed before it ran.
 *
 * Completion: a write with a done callback gets exactly one call, on the
 * owner thread: from mu_writer_drain(), or from mu_writer_free() for the
 * writes that never ran or were not drained yet. A write without done is
 * fire and forget; if it fails, the failure is logged (opts.log, from
 * mu_writer_drain on the owner thread). A submit that fails never calls
 * done (libuv's rule).
 *
 * Ownership: the writer copies the strings of a struct mu_write and steals
 * its body (a json_t reference), also when mu_writer_submit() fails. ctx
 * belongs to the submitter: the writer only hands it to run (on a worker,
 * read-only: the submitter must not change it until done) and then to done
 * (which typically frees it).
 *
 * Bounds: at most opts.cap writes (MU_WRITER_QUEUE_CAP) wait at once;
 * mu_writer_submit() blocks while the queue is full, so the owner waits
 * as it would for a synchronous write, and memory stays bounded whatever a
 * cycle decides. Completions waiting for drain are at most the writes
 * submitted, so they are bounded by the owner draining.
 */
#ifndef MU_KUBE_WRITER_H
#define MU_KUBE_WRITER_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"

/* Workers by default: enough to overlap the apiserver's latency, few
 * enough not to crowd a small control plane (writes are cheap for the
 * client, the apiserver and etcd do the work; kube-apiserver's default
 * --max-mutating-requests-inflight is 200). 500 vcjobs x 8 on 1,000 nodes
 * (4,000 creates and 4,000 ungate patches) bound 83 pods/s with 32
 * against 75 with 16, medians of two runs each alternated (bench/RESULTS.md,
 * 2026-12-04). */
#define MU_WRITER_THREADS 32
/* Writes waiting at most by default (a release of a 1,000-pod cycle fits
 * several times). When that many wait, mu_writer_submit() blocks until a
 * worker takes one (a coalesced or merged write, which takes a queued
 * one's place, never waits); see Bounds. */
#define MU_WRITER_QUEUE_CAP 4096u
/* Background writes sent at once at most by default (see Background).
 * 500 gangs x 8 plain pods on 1,000 nodes (bench/RESULTS.md, 2026-12-05):
 * with every status write free to take any of the 32 workers, binds were
 * answered in 58-73 ms on average; with 8, 51-52 ms. */
#define MU_WRITER_BACKGROUND 8
/* Events posted through a writer are named "<object>.<16 hex digits>" from
 * their time and a sequence that starts here, so they never take the name
 * of an event that a plain client (whose sequence starts at 0) posts about
 * the same object in the same second. */
#define MU_WRITER_EVENT_SEQ0 500000000u

/* struct mu_write.flags */
#define MU_WRITE_COALESCE 0x1u /* may replace a queued write, see above */
#define MU_WRITE_GONE_OK 0x2u  /* -ENOENT (404) counts as success */
#define MU_WRITE_URGENT 0x4u   /* ahead of writes that are not, see above */
#define MU_WRITE_MERGE 0x8u    /* a merge patch foldable with the last one */
#define MU_WRITE_BACKGROUND 0x10u /* only tells: a few at once, see above */

struct mu_writer;

/*
 * One write. method/path/body/content_type describe the request, sent with
 * mu_kube_call(); or run does the work instead (several requests, say a GET
 * and a PATCH built from what it returned) with the worker's client.
 */
struct mu_write {
    const char *method;       /* "POST", "PUT", "PATCH", "DELETE" */
    const char *path;         /* API path, no query; copied */
    json_t *body;             /* stolen (also on failure); NULL: none */
    const char *content_type; /* NULL: "application/json"; copied */
    const char *key;          /* the object, for ordering; NULL: path */
    unsigned flags;           /* MU_WRITE_* */
    /* Optional, instead of the request: called on a worker with its client
     * and the write's copies of method, path, body and content_type.
     * Returns 0 or -errno with err set. Must not touch owner state; may
     * read ctx. */
    int (*run)(struct mu_kube *k, const struct mu_write *w, void *ctx,
               struct mu_err *err);
    /* Optional: the outcome, on the owner thread (see Completion). msg is
     * the error's one-line message ("" when rc is 0), valid during the
     * call only. */
    void (*done)(void *ctx, int rc, const char *msg);
    void *ctx;
};

struct mu_writer_opts {
    int threads;              /* workers; < 1: MU_WRITER_THREADS */
    int background;           /* MU_WRITE_BACKGROUND writes sent at once
                                 at most; < 1: MU_WRITER_BACKGROUND */
    size_t cap;               /* queued writes at most; 0: the default */
    struct mu_kube_opts kube; /* every worker's client; qps and burst are
                                 the writer's whole budget (one shared
                                 bucket); shared_limiter is ignored */
    /* Optional: completions are waiting for mu_writer_drain (see
     * Threads). */
    void (*notify)(void *ctx);
    void *notify_ctx;
    /* Optional: may writes go now (see Gate)? Any thread (submitters and
     * workers); must be thread-safe and must not block. */
    bool (*gate)(void *ctx);
    void *gate_ctx;
    /* Optional: one line (no newline) about a failed fire-and-forget
     * write; on the owner thread. */
    void (*log)(void *ctx, const char *msg);
    void *log_ctx;
};

/* Sets how many background writes may be sent at once (opts.background;
 * n < 1: MU_WRITER_BACKGROUND); raising it lets idle workers take the
 * queued ones now. For an owner that keeps the cap only while the writes
 * it protects (a gang's binds) are under way, and lets what only tells
 * catch up on every worker when none are (muster serve: 25,000 PodGroup
 * statuses, 8 at a time, were Running minutes after the last bind).
 * Thread-safe. */
void mu_writer_set_background(struct mu_writer *w, int n);
/* How many more writes may queue before mu_writer_submit() blocks (cap
 * less those waiting to start; 0 when full). For an owner that writes
 * what can wait (status) only while releases still find room. */
size_t mu_writer_room(struct mu_writer *w);
/* The most writes that may queue (opts.cap, or MU_WRITER_QUEUE_CAP);
 * fixed for the writer's life. */
size_t mu_writer_cap(const struct mu_writer *w);

/* Figures for /metrics (a consistent snapshot). */
struct mu_writer_stats {
    size_t queued;      /* waiting to start */
    size_t running;     /* being sent */
    size_t queued_max;  /* the most that ever waited at once */
    uint64_t submitted; /* writes accepted */
    uint64_t failed;    /* completed with an error (not -ECANCELED) */
    uint64_t coalesced; /* replaced before they were sent */
    uint64_t limited;   /* told to wait by the rate limit */
    int64_t limited_ns; /* those waits, summed */
};

/*
 * Starts the workers, each making its client for cfg (copied) on its own
 * thread. Returns 0 and *out, or -errno with err when a client or a thread
 * could not be made (nothing is left running then).
 */
int mu_writer_new(const struct mu_kube_config *cfg,
                  const struct mu_writer_opts *opts, struct mu_writer **out,
                  struct mu_err *err) MU_WARN_UNUSED;

/*
 * Stops the writer: writes being sent are interrupted (they complete with
 * -ECANCELED unless they finished first), queued ones are not sent; every
 * done callback not yet made is made here (-ECANCELED for the writes not
 * sent), on the calling thread, which must be the owner. Call
 * mu_writer_flush() first to send everything.
 * NULL is a no-op.
 */
void mu_writer_free(struct mu_writer *w);

/*
 * Queues a write (see Ownership, Bounds). Returns 0, -EINVAL (no path, or
 * neither method nor run), -EPERM (the gate is closed) or -ECANCELED (the
 * writer is stopping); on an
 * error done is not called and the body is released.
 */
int mu_writer_submit(struct mu_writer *w, const struct mu_write *wr);

/*
 * POSTs a core/v1 Event (client.h, struct mu_kube_event; copied) to
 * /api/v1/namespaces/NS/events (paths.h, NS escaped) through the writer,
 * named as the writer names events (MU_WRITER_EVENT_SEQ0). Fire and
 * forget: a failure is logged. Returns what mu_writer_submit() does.
 */
int mu_writer_event(struct mu_writer *w, const struct mu_kube_event *ev);
/* The same with a done call (see Completion; done may be NULL), for an
 * owner that counts what it has in the writer (serve/status.h). */
int mu_writer_event_done(struct mu_writer *w, const struct mu_kube_event *ev,
                         void (*done)(void *ctx, int rc, const char *msg),
                         void *ctx);

/*
 * Makes the done calls of the writes completed so far, on the owner thread,
 * in the order the writes completed. Returns how many writes it reported;
 * *failed (may be NULL) counts those with an error other than -ECANCELED.
 */
size_t mu_writer_drain(struct mu_writer *w, size_t *failed);

/*
 * Waits until no write is queued or being sent, or until timeout_ms passes
 * (< 0: no limit). Returns 0 or -ETIMEDOUT. When it returns 0, notify has
 * been called for every completion; the completions still wait for
 * mu_writer_drain(). For tests and orderly shutdowns; owner thread.
 */
int mu_writer_flush(struct mu_writer *w, long timeout_ms);

void mu_writer_stats(struct mu_writer *w, struct mu_writer_stats *out);

#endif
