/*
 * http.h - the extender's HTTP server (libmicrohttpd): kube-scheduler's
 * /filter /prioritize /bind /preempt, and /healthz /readyz /metrics.
 *
 * The server sits on top of the pure handlers (extender.h) and the /bind
 * barrier: it reads the request, takes a reference to the published view
 * (view.h), calls the handler and writes its reply. Nothing below it
 * knows it exists.
 *
 * Threads: a thread per connection (MHD_USE_THREAD_PER_CONNECTION), since
 * a /bind blocks in the barrier until its batch completes; plus
 * libmicrohttpd's listening thread; with metrics_listen, one more thread
 * polls all of that address's connections; with TLS, tls.c's reload
 * thread. start and stop are called by the owner (muster serve: the main
 * thread); port and stats from any thread.
 * The callbacks of struct mu_ext_server_opts run on connection threads,
 * several at once.
 *
 * Ownership: the server borrows views, barrier and the option strings
 * (they must outlive it, until mu_ext_server_stop returns); it owns its
 * stats, which it hands to the barrier for its timeout counter while it
 * runs (mu_barrier_set_stats).
 *
 * Errors: start returns 0 or a negative errno with err: -EINVAL (bad
 * options, a bad listen address, plain HTTP on an address that is not
 * loopback, a key, certificate or CA that does not load), a TLS file's
 * errno, -ENOTSUP (TLS asked of a libmicrohttpd without it), the socket's
 * errno, -EIO (libmicrohttpd refused to start), -EAGAIN (no watchdog
 * thread). Once running, every verb reply is HTTP 200 with problems in its
 * Error (extender.h); only the transport is refused with a status:
 *   404 an unknown path           405 a wrong method (with Allow)
 *   413 a body over MU_EXT_MAX_BODY (the connection is then closed)
 *   503 /readyz before the view is synced, and /readyz and /bind while
 *       the leading hook says this replica is not the leader
 * and, with TLS and a client CA, a client without a certificate that CA
 * signed is refused by the TLS handshake itself. With metrics_listen, each
 * address answers 404 for the other's paths.
 *
 * Bounds (what happens when full). The handlers' own caps (NodeNames per
 * request, reply size: refused with an Error) are in extender.h.
 *   MU_EXT_MAX_BODY        a request body buffer: an announced larger body
 *                          gets 413 before it is read; an unannounced
 *                          (chunked) one is drained, dropped, then 413.
 *   MU_EXT_MAX_CONNS       connections (and their threads) at once. A
 *                          connection beyond it is refused: libmicrohttpd
 *                          accepts and closes it at once, no reply (not a
 *                          503: the client sees the connection closed;
 *                          kube-scheduler fails that attempt and retries).
 *   MU_EXT_MAX_CONNS_PER_IP  connections from one client IP address at
 *                          once; beyond it refused the same way. One client
 *                          can never take the last MU_EXT_MAX_CONNS -
 *                          MU_EXT_MAX_CONNS_PER_IP connections, so the
 *                          kubelet's probes and a second client still get
 *                          in. kube-scheduler is one client, and each
 *                          member of a release batch waiting in /bind holds
 *                          one of its connections: a batch larger than this
 *                          cap (less kube-scheduler's other connections)
 *                          cannot gather and times out.
 *   MU_EXT_ARRIVAL_TIMEOUT_S  a request (request line, headers and body)
 *                          must have arrived this long after its first
 *                          line (after the accept, for a connection's first
 *                          request), however slowly it trickles; else the
 *                          connection is shut down, no reply. So half-sent
 *                          requests hold a connection seconds, not the
 *                          idle timeout. A request being served (a /bind
 *                          waiting in the barrier, up to its timeout) has
 *                          no deadline.
 *   MU_EXT_REPLY_TIMEOUT_S a reply must be taken by the client this long
 *                          after it is queued; else the connection is shut
 *                          down and the reply freed (a client that does not
 *                          read pins one reply, at most MU_EXT_MAX_REPLY,
 *                          for this long).
 *   MU_EXT_LISTEN_BACKLOG  the kernel's queue of connections not yet
 *                          accepted; beyond it the kernel drops (SYN) or
 *                          refuses new connections.
 *   MU_EXT_IDLE_TIMEOUT_S  a kept-alive connection between requests (and
 *                          its thread) is closed after this long, even if
 *                          bytes of a request line trickle in. Longer than
 *                          Go's 90 s idle timeout, so kube-scheduler closes
 *                          its idle connections first and never sends on
 *                          one muster is closing.
 * The deadlines are kept by a watchdog thread, which shuts a connection's
 * socket down when its deadline passes (ticks of at most 250 ms); they are
 * counted in muster_extender_connections_cut_total.
 */
#ifndef MU_EXTENDER_HTTP_H
#define MU_EXTENDER_HTTP_H

#include "common/mu.h"
#include "extender/extender.h"
#include "extender/view.h"

/* Largest request body accepted; larger ones get 413 (see above). */
#define MU_EXT_MAX_BODY (8u << 20)
/* Most connections served at once (each blocked /bind holds one). */
#define MU_EXT_MAX_CONNS 1024u
/* Most connections from one client IP address at once. */
#define MU_EXT_MAX_CONNS_PER_IP (MU_EXT_MAX_CONNS - 64u)
/* Seconds a request may take to arrive whole. */
#define MU_EXT_ARRIVAL_TIMEOUT_S 5u
/* Seconds a queued reply may wait for the client to take it. */
#define MU_EXT_REPLY_TIMEOUT_S 10u
/* The listening socket's backlog (listen(2)). */
#define MU_EXT_LISTEN_BACKLOG 512
/* Seconds an idle keep-alive connection (and its thread) is kept. */
#define MU_EXT_IDLE_TIMEOUT_S 120u
/* Connections at once on metrics_listen (one polling thread serves them
 * all) and the seconds an idle one is kept. */
#define MU_EXT_METRICS_MAX_CONNS 64
#define MU_EXT_METRICS_IDLE_TIMEOUT_S 30

/* Extra metric text (cycle duration, pending gangs per queue, queue
 * allocated and deserved, evictions), produced by the scheduler side:
 * a malloc'd string the server frees, or NULL. Called on the connection
 * thread serving /metrics: must be thread-safe. */
typedef char *(*mu_metrics_fn)(void *ctx);
/* The answer to GET /debug/... (path as requested, no query; fresh: the
 * query has "fresh", the caller wants the state of the last cycle, not
 * one a few seconds old), produced by the scheduler side: a malloc'd JSON
 * text the server frees, with *status set (200, 404, 503), or NULL for 404
 * "not found". Called on the connection thread, which also serves
 * /healthz and /readyz when metrics_listen is set: must be thread-safe and
 * must not block. */
typedef char *(*mu_debug_fn)(void *ctx, const char *path, bool fresh,
                             int *status);
/* A /filter miss (struct mu_ext_miss: unseen false) or a pod answered
 * before muster's view had it (unseen true), called on the HTTP thread
 * that served it: must be thread-safe and must not block. */
typedef void (*mu_miss_fn)(void *ctx, const char *uid, bool unseen);

struct mu_ext_server;

struct mu_ext_server_opts {
    const char *listen;       /* "HOST:PORT"; port 0 picks a free one */
    struct mu_view_slot *views;
    struct mu_barrier *barrier;
    mu_metrics_fn metrics;    /* optional */
    void *metrics_ctx;
    mu_debug_fn debug;        /* optional: /debug/... (read-only JSON) */
    void *debug_ctx;
    mu_miss_fn miss;          /* optional */
    void *miss_ctx;
    /* Optional (NULL: always): is this replica the leader? While it
     * answers false, /readyz and /bind answer 503 "not the leader" (a
     * Service routes to the leader only; kube-scheduler retries a bind
     * refused). Any connection thread; thread-safe, must not block. */
    bool (*leading)(void *ctx);
    void *leading_ctx;
    /* 0 for each: the caps above (tests set small ones) */
    unsigned max_conns, max_conns_per_ip;
    unsigned arrival_timeout_ms, reply_timeout_ms, idle_timeout_ms;
    /* TLS (optional, tls.h): HTTPS with the certificate and key in these
     * PEM files; with a client CA, only a client whose certificate it
     * signed gets past the handshake. The files are re-read when they
     * change, without a restart. Without TLS and a client CA, listen must
     * be a loopback address. */
    const char *tls_cert_file;
    const char *tls_key_file;
    const char *tls_client_ca_file;
    int64_t tls_reload_ms;      /* 0: MU_EXT_TLS_RELOAD_MS; < 0: never */
    /* Optional: /healthz /readyz /metrics on this address instead (plain
     * HTTP, any address; their own connections, MU_EXT_METRICS_MAX_CONNS),
     * the extender's answering only /filter /prioritize /bind /preempt. */
    const char *metrics_listen;
    void (*log)(void *ctx, const char *line); /* optional (TLS reloads) */
    void *log_ctx;
};

/* Starts serving /filter /prioritize /bind /preempt /healthz /readyz
 * /metrics and, with a debug callback, GET /debug/... (on metrics_listen
 * when it is set, with the probes). /readyz answers 200 once the published view is synced, 503
 * before. Returns 0 and *out, or -errno with err (see Errors). */
int mu_ext_server_start(const struct mu_ext_server_opts *o,
                        struct mu_ext_server **out,
                        struct mu_err *err) MU_WARN_UNUSED;
/* The port actually bound. */
int mu_ext_server_port(const struct mu_ext_server *s);
/* The port metrics_listen bound, or 0 without it. */
int mu_ext_server_metrics_port(const struct mu_ext_server *s);
/* The server's counters (owned by s, valid until stop). */
struct mu_ext_stats *mu_ext_server_stats(struct mu_ext_server *s);
/* Stops serving: waits for every connection thread, blocked binds
 * included, then frees s. NULL is a no-op. */
void mu_ext_server_stop(struct mu_ext_server *s);

#endif
