/*
 * extender.h - muster as kube-scheduler's extender (extender.md): the pure
 * request handlers and the /bind barrier. The HTTP server that serves
 * them sits on top, in http.h.
 *
 * Wire format: JSON keys are the capitalised Go field names (Pod, NodeNames,
 * FailedNodes, FailedAndUnresolvableNodes, Error, Host, Score, PodName,
 * PodNamespace, PodUID, Node, NodeNameToMetaVictims). muster runs with
 * nodeCacheCapable: true, so requests carry node names, not Node objects.
 * Every reply is HTTP 200; problems go in Error. Rejected nodes are always
 * listed in FailedAndUnresolvableNodes with one short reason that is the
 * same on every node (so kube-scheduler's message aggregates and default
 * preemption never acts).
 *
 * Threads: the handlers are called on the server's connection threads,
 * several at once. They read the published view (view.h) and meet in the
 * barrier; they never touch scheduler state. The pure handlers (filter,
 * prioritize, preempt) take no lock and never block; /bind blocks in the
 * barrier.
 */
#ifndef MU_EXTENDER_EXTENDER_H
#define MU_EXTENDER_EXTENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/hist.h"
#include "common/mu.h"
#include "extender/view.h"

/*
 * /filter. args is the decoded ExtenderArgs. Pass-through for pods whose
 * schedulerName muster does not serve (every node echoed). For muster's
 * pods: before the view is synced, every node is rejected ("muster is
 * starting"); a pod with a reserved node passes that node only (when it is
 * in NodeNames); a waiting or unknown pod is rejected everywhere with its
 * reason. Returns a new ExtenderFilterResult object; never NULL. A
 * malformed request gives a result with Error set.
 */
json_t *mu_ext_filter(const struct mu_view *v, const json_t *args);

/* /prioritize: a HostPriorityList (top-level array): 10 for a reserved
 * node, 0 for the rest; every node listed. */
json_t *mu_ext_prioritize(const struct mu_view *v, const json_t *args);

/* Longest reason or error message a handler writes (bytes, with the
 * NUL); a longer one is cut, on a UTF-8 boundary, and ends with "...". */
#define MU_EXT_REASON_MAX 1024
/* Longest part of a view pod's reason quoted in a rejection (bytes); a
 * longer one is cut the same way. */
#define MU_EXT_VIEW_REASON_CAP 200

/*
 * Caps of a /filter or /prioritize request and its reply (what happens at
 * each: the request is refused, HTTP 200 as kube-scheduler expects, with
 * Error set in the ExtenderFilterResult, or an empty HostPriorityList for
 * /prioritize, whose errors kube-scheduler ignores; the attempt of that
 * pod fails and is retried with backoff):
 *   MU_EXT_MAX_NODE_NAMES  names in ExtenderArgs.NodeNames. Above
 *                          Kubernetes' largest clusters (5,000 nodes
 *                          upstream, 65,000 on the largest managed
 *                          offerings); kube-scheduler also sends muster
 *                          only its sample of feasible nodes (extender.md
 *                          3). It bounds the per-request names array
 *                          (8 bytes a name).
 *   MU_EXT_MAX_REPLY       bytes of a reply. A reply echoes every name
 *                          and gives each rejected one the reason, so it
 *                          can outgrow the request (8 MiB of empty names
 *                          would make some 84 MB): the size is known before
 *                          the reply is built, and a larger one is not.
 */
#define MU_EXT_MAX_NODE_NAMES 65536u
#define MU_EXT_MAX_REPLY (16u << 20)

/* Longest pod uid a miss names (a Kubernetes uid has 36 bytes). */
#define MU_EXT_UID_MAX 64

/*
 * A miss: /filter was asked about a pod muster has reserved a node for,
 * but that node was not among NodeNames (kube-scheduler sampled it out,
 * or its own filters failed it), so this attempt of the pod fails. The
 * HTTP server hands uid to the miss callback (http.h, mu_ext_server_opts),
 * which wakes the pod again. missed is false otherwise, and for a uid longer
 * than MU_EXT_UID_MAX - 1 bytes.
 */
struct mu_ext_miss {
    bool missed;
    /* or: the pod was answered before muster's view had it (starting, or
     * not yet seen), so kube-scheduler set it aside with that reason; the
     * miss callback is told too (unseen set), and muster nudges it once
     * when its view explains why it waits (serve/enforce.h) */
    bool unseen;
    char uid[MU_EXT_UID_MAX];
};

/*
 * The same two answers straight from the request body (len bytes), as the
 * HTTP threads serve them: no jansson tree is built; the body is validated
 * in one pass and node names are echoed exactly as they came. Return the
 * reply's JSON text (NUL-terminated, *out_len bytes; the caller frees it;
 * never NULL) and set *bad when the request was malformed (the filter
 * reply then carries Error; the prioritize reply is []). Equal, as JSON,
 * to dumping mu_ext_filter / mu_ext_prioritize of the parsed body.
 * mu_ext_filter_body also fills *miss (when miss is not NULL).
 * The caps above hold on both paths, except that only these byte paths
 * (what the server runs) check MU_EXT_MAX_REPLY; the tree paths are the
 * reference for tests and benchmarks.
 */
char *mu_ext_filter_body(const struct mu_view *v, const char *body, size_t len,
                         size_t *out_len, bool *bad,
                         struct mu_ext_miss *miss);
char *mu_ext_prioritize_body(const struct mu_view *v, const char *body,
                             size_t len, size_t *out_len, bool *bad);

/* /preempt: always vetoes: {"NodeNameToMetaVictims": {}}. muster's own
 * reclaim and preempt choose victims. */
json_t *mu_ext_preempt(const struct mu_view *v, const json_t *args);

/* Binds one pod: POST pods/<name>/binding. 0 or -errno with err. Called by
 * the barrier, from an HTTP thread, for every member of a batch. */
typedef int (*mu_bind_fn)(void *ctx, const char *ns, const char *name,
                          const char *uid, const char *node,
                          struct mu_err *err);
/* Undoes a bind that went through when a later member of the same batch
 * failed: deletes the pod (its controller recreates it). Called only for a
 * pod the view marks controlled (mu_view_set_controlled): a pod without a
 * controller is never deleted, it stays (bound) and the batch's report
 * says so. The delete must
 * carry DeleteOptions preconditions.uid = uid, so that only the pod that
 * was bound goes, never another one of the same name; a pod already gone
 * (404) or whose name is another pod's now (409) counts as undone (0). ns
 * and name are muster's own (from the view, see mu_ext_bind), never a
 * request's. */
typedef int (*mu_unbind_fn)(void *ctx, const char *ns, const char *name,
                            const char *uid, struct mu_err *err);

/*
 * Reads pod ns/name back after a bind that failed ambiguously (a timeout,
 * a reset, a 5xx, a 429, a 409: the bind may or may not have gone
 * through). Fills *out: MU_BIND_SEEN_GONE when the pod does not exist or
 * has another uid than uid (a pod made again under the name),
 * MU_BIND_SEEN_UNBOUND when it is uid's pod and has no spec.nodeName,
 * MU_BIND_SEEN_BOUND with out->node its spec.nodeName (cut to
 * MU_BIND_NODE_MAX - 1 bytes) when it is bound. 0, or -errno with err
 * when the pod could not be read (the outcome stays unknown). Called by
 * the barrier on an HTTP thread, several at once; no lock held.
 */
#define MU_BIND_NODE_MAX 254 /* a node name has at most 253 bytes */
enum mu_bind_seen_state {
    MU_BIND_SEEN_GONE,
    MU_BIND_SEEN_UNBOUND,
    MU_BIND_SEEN_BOUND,
};
struct mu_bind_seen {
    enum mu_bind_seen_state state;
    char node[MU_BIND_NODE_MAX];
};
typedef int (*mu_bindcheck_fn)(void *ctx, const char *ns, const char *name,
                               const char *uid, struct mu_bind_seen *out,
                               struct mu_err *err);

/*
 * Retries of an ambiguous bind (see mu_bindcheck_fn; only with a check
 * set, mu_barrier_set_check): a pod read back bound to its reserved node
 * counts as bound, bound elsewhere or gone as failed; unbound (or not
 * readable), after a 5xx, a 429, a 409, a timeout or a reset, its bind is
 * sent again after a backoff that starts at MU_BARRIER_BACKOFF_MS and
 * doubles up to MU_BARRIER_BACKOFF_MAX_MS, at most MU_BARRIER_BIND_TRIES
 * times in all per round (MU_BARRIER_GANG_TRIES in a gang bound at its
 * first member, internal.h), and never started past MU_BARRIER_RETRY_MS
 * from the moment the batch started binding (kube-scheduler's
 * httpTimeout, 30 s in manifests/scheduler-config.yaml, bounds how long a
 * member's /bind may last, counted from its arrival). A batch in which
 * some members bound and others failed gets one more round for the failed
 * ones (on their reserved nodes) before it is undone.
 */
#define MU_BARRIER_BIND_TRIES 4
#define MU_BARRIER_BACKOFF_MS 50
#define MU_BARRIER_BACKOFF_MAX_MS 1000
#define MU_BARRIER_RETRY_MS 8000

/* What the barrier tells the scheduler thread after each batch. */
struct mu_bind_report {
    char *release;   /* batch id */
    bool ok;         /* every member bound */
    bool timed_out;  /* not every member reached /bind in time */
    char *detail;    /* why not, when !ok */
};
typedef void (*mu_report_fn)(void *ctx, const struct mu_bind_report *r);

struct mu_barrier;

/* One member of a gang bound whole (mu_barrier_bind_gang, internal.h, and
 * mu_relbind_submit, relbind.h): the view's names and reserved node. */
struct mu_barrier_member {
    char *ns, *name, *uid, *node;
    bool controlled;
};
/* Frees m[0..n-1]'s strings and m (NULL: nothing). */
void mu_barrier_members_free(struct mu_barrier_member *m, int n);

/* A finished batch (bound, failed or timed out) is remembered this long,
 * so its late arrivals fail at once instead of waiting out a new timeout. */
#define MU_BARRIER_TOMB_TTL_MS (5 * 60 * 1000)
/* Tombstones kept at most. Beyond it the oldest are forgotten (at the next
 * arrival of any batch): a late member of a forgotten batch then starts a
 * new batch and waits for the others, as a first arrival does. */
#define MU_BARRIER_TOMB_MAX 65536

/*
 * The /bind barrier. Members of a release batch wait for each other: when
 * the last one arrives, all are bound at once (each member's thread makes
 * its own bind call, so the callbacks run concurrently); an ambiguous
 * failure is resolved by reading the pod and retried (mu_bindcheck_fn,
 * MU_BARRIER_BIND_TRIES); if a bind still fails, the ones that went
 * through are undone (only the controlled members deleted, see
 * mu_unbind_fn) and every member gets the error.
 * If not all arrive within timeout_ms of the first arrival, every waiting
 * member gets an error and nothing of the batch is bound. (A batch whose
 * members are all plain does not wait: it is bound whole at its first
 * arrival, internal.h, mu_barrier_bind_gang.) Each outcome is
 * reported once through report. now_ms and timeouts use CLOCK_MONOTONIC.
 *
 * Bounds: a batch being gathered or bound lives as long as its members
 * wait, and each waiting member holds an HTTP connection, so the server's
 * connection caps (http.h, MU_EXT_MAX_CONNS, and MU_EXT_MAX_CONNS_PER_IP
 * since every member comes from the one kube-scheduler) bound them and
 * the largest batch that can gather; a batch's member slots are its
 * batch_size (from the view). A finished batch stays as a tombstone (see
 * below).
 */
struct mu_barrier *mu_barrier_new(int64_t timeout_ms, mu_bind_fn bind,
                                  mu_unbind_fn unbind, mu_report_fn report,
                                  void *ctx);
void mu_barrier_free(struct mu_barrier *b);
/* Sets the read-back of ambiguous binds (NULL: none; such a bind then
 * counts as maybe bound, is not retried, and its batch is undone). Call
 * before the first mu_ext_bind. */
void mu_barrier_set_check(struct mu_barrier *b, mu_bindcheck_fn check);

/*
 * Members waiting in /bind at most, over all batches. Each waiting member
 * holds one of kube-scheduler's connections (and an HTTP thread) until its
 * batch completes or times out; a backlog of thousands of reserved pods
 * would otherwise take every connection the server has (MU_EXT_MAX_CONNS,
 * MU_EXT_MAX_CONNS_PER_IP), and the /filter and /bind requests that would
 * complete those batches would find none: no batch completes (issue 15).
 * At the cap, a member that would wait is refused at once with an Error
 * (-EAGAIN; nothing bound, nothing kept for it): kube-scheduler tries the
 * pod again after its backoff. A member that completes its batch does not
 * wait, so it is never refused: the batches already waiting can always
 * finish. The HTTP server keeps MU_EXT_MAX_CONNS_PER_IP above this cap
 * (checked at compile time in http.c). mu_barrier_set_max_waiting changes
 * it (tests).
 */
#define MU_BARRIER_MAX_WAITING 768
void mu_barrier_set_max_waiting(struct mu_barrier *b, int n);

/*
 * /bind for one pod (args: ExtenderBindingArgs). /bind believes only the
 * view: it is reachable by anyone who can reach muster's port, so the
 * request's PodUID only names a pod of the view, and the namespace and
 * name that are bound (and, on a failed batch, deleted) are the view's.
 * Refused with an Error, nothing written (no binding, no delete):
 *   - a PodUID not in v (a pod muster has not placed, or a view older than
 *     the pod: kube-scheduler retries it), or v NULL or not synced;
 *   - PodNamespace/PodName other than the view's for that uid;
 *   - a pod that must wait (no reserved node), or args.Node other than
 *     its reserved node.
 * A reserved pod outside a release batch (release NULL) is bound at once.
 * A member of a batch that the view holds whole, every member plain
 * (mu_view_set_plain), binds the whole batch at once: kube-scheduler has
 * checked this member on its node, and nothing is left for it to check of
 * the others (extender/internal.h, mu_barrier_bind_gang); the others'
 * later /bind calls are answered from that outcome. Any other member waits
 * in the barrier until its batch completes or times out. Returns a new
 * ExtenderBindingResult ({"Error": ""} on success).
 */
json_t *mu_ext_bind(struct mu_barrier *b, const struct mu_view *v,
                    const json_t *args);

/* Buckets of the /filter latency histogram (the last one also takes
 * everything slower): fixed, so the counters never grow. */
#define MU_EXT_FILTER_BUCKETS 24

/* Counters exported on /metrics, owned by the HTTP server (http.h) and
 * updated with atomics on its threads (the barrier counts timed-out
 * batches, mu_barrier_set_stats); the scheduler side adds its own text
 * through the server's metrics callback. */
struct mu_ext_stats {
    atomic_ullong filter_calls, filter_ns_total;
    atomic_ullong bind_calls, bind_ok, bind_failed, batches_timed_out;
    atomic_ullong gangs_first_ok, gangs_first_failed; /* bound whole at
                    their first member's /bind (mu_barrier_bind_gang) */
    atomic_ullong bad_requests;
    atomic_ullong conns_cut; /* shut down at a deadline (http.h) */
    /* filter latency histogram: bucket i counts calls < 2^i microseconds */
    atomic_ullong filter_hist[MU_EXT_FILTER_BUCKETS];
    /* each release batch, from its first member's arrival at /bind to its
     * outcome (bound, failed or timed out); mu_hist_init by the owner */
    struct mu_hist barrier_hist;
    /* each release batch of two or more bound whole, from its first
     * member's bind answered ok to its last (the gang's span as muster
     * sees it); mu_hist_init by the owner */
    struct mu_hist span_hist;
};

#endif
