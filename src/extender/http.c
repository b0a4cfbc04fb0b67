/*
 * http.c - the extender's HTTP server (http.h; libmicrohttpd, a thread per
 * connection since /bind blocks).
 *
 * libmicrohttpd calls the access handler several times per request: once
 * with the headers (route and method are checked, an announced oversize
 * body is refused with 413 before it is read), once per body piece
 * (collected into a buffer bounded by MU_EXT_MAX_BODY on *req_cls), and
 * once more when the request is complete, which calls the pure handler of
 * extender.c and queues its reply. The completed callback frees *req_cls.
 *
 * Deadlines (http.h): every connection has a struct conn on a list (its
 * socket context), made and unlinked by the connection callback. Its
 * deadline moves with the request: arriving (from the accept, or from the
 * request line on a kept-alive connection, which the URI callback
 * reports), none while the handler runs, the reply's once it is queued,
 * idle once the request completed. The watchdog shuts down the socket of
 * a connection past its deadline; libmicrohttpd then closes it. The list
 * lock makes that safe: libmicrohttpd unlinks a connection (the closed
 * callback) before it closes the socket, so a socket on the list is
 * still the connection's.
 */
#include "extender/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/json.h"
#include "extender/metrics.h"
#include "extender/internal.h"
#include "extender/ui.h"
#include "extender/tls.h"
#include "common/clock.h"

/* Waiting /bind members leave connections for /filter and for the members
 * that complete their batches (extender.h, MU_BARRIER_MAX_WAITING). */
_Static_assert(MU_BARRIER_MAX_WAITING + 128 <= MU_EXT_MAX_CONNS_PER_IP,
               "the barrier's waiting cap must leave kube-scheduler "
               "connections for /filter");

/* Where a connection is (see Deadlines above). */
enum phase {
    ARRIVING, /* a request is arriving: the arrival deadline */
    SERVING,  /* the handler runs: no deadline */
    SENDING,  /* a reply is queued: the reply deadline */
    IDLE,     /* kept alive between requests: the idle deadline */
};

struct conn {
    struct conn *prev, *next;
    int fd;
    enum phase phase;
    int64_t deadline_ms; /* CLOCK_MONOTONIC; 0: none */
    bool cut;            /* shut down already */
    bool linked;         /* on the watchdog's list */
    void *tls_ctx;       /* the TLS credentials it holds (tls.h), or NULL */
};

struct mu_ext_server {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock; /* the list, the phases and stopping */
    pthread_cond_t wake;
    struct conn conns; /* list head */
    bool stopping;
    pthread_t watchdog;
    int64_t arrival_ms, reply_ms, idle_ms, tick_ms;
    struct mu_view_slot *views;
    struct mu_barrier *barrier;
    mu_metrics_fn metrics;
    void *metrics_ctx;
    mu_debug_fn debug;
    void *debug_ctx;
    mu_miss_fn miss;
    void *miss_ctx;
    bool (*leading)(void *ctx);
    void *leading_ctx;
    struct mu_ext_stats stats;
    struct mu_ext_tls *tls;     /* NULL: plain HTTP */
    struct MHD_Daemon *md;      /* metrics_listen's, or NULL */
    int metrics_port;
};

static bool follower(const struct mu_ext_server *s)
{
    return s->leading && !s->leading(s->leading_ctx);
}

enum route {
    R_FILTER,
    R_PRIORITIZE,
    R_BIND,
    R_PREEMPT,
    R_HEALTHZ,
    R_READYZ,
    R_METRICS,
    R_DEBUG,
    R_UI,
    R_UNKNOWN,
};

struct req {
    enum route route;
    char *path;      /* R_DEBUG: the URL path, for the debug callback */
    unsigned refuse; /* status to answer once the body is drained, or 0 */
    bool too_big;
    char *body;
    size_t len, cap;
};

/* Moves c to phase p, with its deadline (lock not held). */
static void set_phase(struct mu_ext_server *s, struct conn *c, enum phase p)
{
    int64_t now = mu_now_ms();

    if (!c)
        return;
    pthread_mutex_lock(&s->lock);
    if (c->phase != p || p != ARRIVING) { /* arriving keeps its deadline */
        c->phase = p;
        c->deadline_ms = p == ARRIVING  ? now + s->arrival_ms
                         : p == SENDING ? now + s->reply_ms
                         : p == IDLE    ? now + s->idle_ms
                                        : 0;
    }
    pthread_mutex_unlock(&s->lock);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return i ? i->socket_context : NULL;
}

static void on_conn(void *cls, struct MHD_Connection *mc, void **ctx,
                    enum MHD_ConnectionNotificationCode toe)
{
    struct mu_ext_server *s = cls;
    struct conn *c = *ctx;
    const union MHD_ConnectionInfo *i;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (!c)
            return;
        if (s->tls)
            mu_ext_tls_notify(s->tls, mc, &c->tls_ctx, toe);
        if (c->linked) {
            pthread_mutex_lock(&s->lock);
            c->prev->next = c->next;
            c->next->prev = c->prev;
            pthread_mutex_unlock(&s->lock);
        }
        free(c);
        *ctx = NULL;
        return;
    }
    c = mu_xcalloc(1, sizeof(*c));
    c->fd = -1;
    /* TLS: this connection's credentials, before its handshake; they
     * require a client certificate that the CA signed */
    if (s->tls)
        mu_ext_tls_notify(s->tls, mc, &c->tls_ctx, toe);
    *ctx = c;
    i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!i)
        return; /* no deadlines for it; MHD's idle timeout still holds */
    c->fd = i->connect_fd;
    c->phase = ARRIVING;
    pthread_mutex_lock(&s->lock);
    c->deadline_ms = mu_now_ms() + s->arrival_ms;
    c->next = &s->conns;
    c->prev = s->conns.prev;
    s->conns.prev->next = c;
    s->conns.prev = c;
    c->linked = true;
    pthread_mutex_unlock(&s->lock);
}

/* The request line of a request has arrived (before its headers). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
    set_phase(cls, conn_of(mc), ARRIVING);
    return NULL;
}

static void *watchdog_main(void *arg)
{
    struct mu_ext_server *s = arg;

    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        int64_t now = mu_now_ms();
        struct timespec ts;

        for (struct conn *c = s->conns.next; c != &s->conns; c = c->next) {
            if (!c->cut && c->deadline_ms && c->deadline_ms <= now) {
                /* counted first: whoever sees the close sees the count */
                atomic_fetch_add(&s->stats.conns_cut, 1);
                c->cut = true;
                shutdown(c->fd, SHUT_RDWR);
            }
        }
        ts = mu_ns_to_timespec((now + s->tick_ms) * 1000000);
        pthread_cond_timedwait(&s->wake, &s->lock, &ts);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && !strcmp(s + n - m, suffix);
}

static enum route route_of(const char *url)
{
    /* kube-scheduler appends "/<verb>" to urlPrefix */
    if (ends_with(url, "/filter"))
        return R_FILTER;
    if (ends_with(url, "/prioritize"))
        return R_PRIORITIZE;
    if (ends_with(url, "/bind"))
        return R_BIND;
    if (ends_with(url, "/preempt"))
        return R_PREEMPT;
    if (!strcmp(url, "/healthz"))
        return R_HEALTHZ;
    if (!strcmp(url, "/readyz"))
        return R_READYZ;
    if (!strcmp(url, "/metrics"))
        return R_METRICS;
    if (!strncmp(url, "/debug/", 7))
        return R_DEBUG;
    if (!strcmp(url, "/ui") || !strcmp(url, "/ui/"))
        return R_UI;
    return R_UNKNOWN;
}

static bool is_verb(enum route r)
{
    return r <= R_PREEMPT;
}

/* With metrics_listen, the verbs are the extender address's and the
 * probes and metrics the metrics address's: each refuses the other's. */
static bool served_here(struct mu_ext_server *s, struct MHD_Connection *c,
                        enum route r)
{
    const union MHD_ConnectionInfo *info;

    if (!s->md)
        return true;
    info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
    return is_verb(r) != (info && info->daemon == s->md);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
                             const char *type, char *body, size_t len,
                             bool close, const char *allow)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;

    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    if (close)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
                                  const char *text, bool close)
{
    char *body = mu_xasprintf("%s\n", text);

    return reply(c, status, "text/plain; charset=utf-8", body, strlen(body),
                 close, NULL);
}

static enum MHD_Result reply_json(struct MHD_Connection *c, json_t *j)
{
    char *body = json_dumps(j, JSON_COMPACT);

    json_decref(j);
    if (!body)
        return MHD_NO;
    return reply(c, MHD_HTTP_OK, "application/json", body, strlen(body), false,
                 NULL);
}

/* The bucket of a duration: the smallest i with ns < 2^i microseconds
 * (the last bucket also takes everything longer). */
static unsigned bucket_of(uint64_t ns)
{
    uint64_t us = ns / 1000;
    unsigned i = 0;

    while (us) {
        us >>= 1;
        i++;
    }
    return i < MU_EXT_FILTER_BUCKETS ? i : MU_EXT_FILTER_BUCKETS - 1;
}

static enum MHD_Result serve_filter(struct mu_ext_server *s,
                                    struct MHD_Connection *c, struct req *r,
                                    bool prioritize)
{
    struct mu_view *v = mu_view_get(s->views);
    const char *in = r->body ? r->body : ""; /* an empty body */
    uint64_t t0 = (uint64_t)mu_now_ns(), dt;
    size_t len;
    bool bad;
    struct mu_ext_miss miss = {0};
    char *body = prioritize
                     ? mu_ext_prioritize_body(v, in, r->len, &len, &bad)
                     : mu_ext_filter_body(v, in, r->len, &len, &bad, &miss);

    mu_view_put(v);
    if ((miss.missed || miss.unseen) && s->miss)
        s->miss(s->miss_ctx, miss.uid, miss.unseen);
    if (!prioritize) {
        dt = (uint64_t)mu_now_ns() - t0;
        atomic_fetch_add(&s->stats.filter_calls, 1);
        atomic_fetch_add(&s->stats.filter_ns_total, dt);
        atomic_fetch_add(&s->stats.filter_hist[bucket_of(dt)], 1);
    }
    if (bad)
        atomic_fetch_add(&s->stats.bad_requests, 1);
    return reply(c, MHD_HTTP_OK, "application/json", body, len, false, NULL);
}

static enum MHD_Result serve_bind(struct mu_ext_server *s,
                                  struct MHD_Connection *c, struct req *r)
{
    struct mu_ext_bind_req br;
    json_error_t je;
    json_t *args = mu_json_loadb(r->body ? r->body : "", r->len, &je);
    json_t *res;
    struct mu_view *v;
    const char *e;

    atomic_fetch_add(&s->stats.bind_calls, 1);
    if (!args) {
        char *msg = mu_xasprintf("malformed ExtenderBindingArgs: %s", je.text);

        res = json_pack("{s:s}", "Error", msg);
        if (!res) /* the message quoted invalid UTF-8 */
            res = json_pack("{s:s}", "Error", "malformed ExtenderBindingArgs");
        free(msg);
        atomic_fetch_add(&s->stats.bad_requests, 1);
        atomic_fetch_add(&s->stats.bind_failed, 1);
        return reply_json(c, res);
    }
    v = mu_view_get(s->views);
    mu_ext_bind_prepare(v, args, &br);
    mu_view_put(v); /* not held while the barrier waits */
    json_decref(args);
    if (br.bad)
        atomic_fetch_add(&s->stats.bad_requests, 1);
    res = mu_ext_bind_finish(s->barrier, &br);
    e = json_string_value(json_object_get(res, "Error"));
    atomic_fetch_add(e && *e ? &s->stats.bind_failed : &s->stats.bind_ok, 1);
    return reply_json(c, res);
}

static char *metrics_text(struct mu_ext_server *s)
{
    struct mu_sb sb;
    char *extra;

    mu_sb_init(&sb);
    mu_ext_metrics_write(&s->stats, s->tls ? mu_ext_tls_stats(s->tls) : NULL,
                         &sb);
    if (s->metrics && (extra = s->metrics(s->metrics_ctx))) {
        mu_sb_add(&sb, extra);
        if (sb.len && sb.buf[sb.len - 1] != '\n')
            mu_sb_add(&sb, "\n");
        free(extra);
    }
    return mu_sb_detach(&sb);
}

static enum MHD_Result serve(struct mu_ext_server *s, struct MHD_Connection *c,
                             struct req *r)
{
    struct mu_view *v;
    bool ready;
    char *text;

    switch (r->route) {
    case R_FILTER:
        return serve_filter(s, c, r, false);
    case R_PRIORITIZE:
        return serve_filter(s, c, r, true);
    case R_BIND:
        if (follower(s)) {
            atomic_fetch_add(&s->stats.bind_calls, 1);
            atomic_fetch_add(&s->stats.bind_failed, 1);
            return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                              "not the leader", false);
        }
        return serve_bind(s, c, r);
    case R_PREEMPT:
        /* always a veto: the body is not even parsed */
        return reply_json(c, mu_ext_preempt(NULL, NULL));
    case R_HEALTHZ:
        return reply_text(c, MHD_HTTP_OK, "ok", false);
    case R_READYZ:
        v = mu_view_get(s->views);
        ready = v && v->synced;
        mu_view_put(v);
        if (ready && follower(s))
            return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                              "not ready: not the leader", false);
        return ready ? reply_text(c, MHD_HTTP_OK, "ok", false)
                     : reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                                  "not ready: caches not synced", false);
    case R_METRICS:
        text = metrics_text(s);
        return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
                     text, strlen(text), false, NULL);
    case R_DEBUG: {
        int status = 404;

        text = s->debug
                   ? s->debug(s->debug_ctx, r->path,
                              MHD_lookup_connection_value(
                                  c, MHD_GET_ARGUMENT_KIND, "fresh") != NULL,
                              &status)
                   : NULL;
        if (!text)
            break;
        return reply(c, (unsigned)status, "application/json", text,
                     strlen(text), false, NULL);
    }
    case R_UI:
        if (!s->debug) /* the page reads /debug */
            break;
        return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
                     mu_xstrdup(mu_ui_html), mu_ui_html_len, false, NULL);
    case R_UNKNOWN:
        break;
    }
    return reply_text(c, MHD_HTTP_NOT_FOUND, "not found", false);
}

/* Content-Length as announced, or -1 (absent, chunked or unreadable). */
static long long content_length(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(
        c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    char *end;
    long long n;

    if (!cl)
        return -1;
    errno = 0;
    n = strtoll(cl, &end, 10);
    if (errno || end == cl || *end || n < 0)
        return -1;
    return n;
}

static enum MHD_Result answer(struct mu_ext_server *s, struct MHD_Connection *c,
                              struct req *r);

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct mu_ext_server *s = cls;
    struct req *r = *req_cls;
    enum MHD_Result ret;

    if (!r) { /* headers only */
        bool get = !strcmp(method, MHD_HTTP_METHOD_GET) ||
                   !strcmp(method, MHD_HTTP_METHOD_HEAD);
        long long cl;

        r = mu_xcalloc(1, sizeof(*r));
        *req_cls = r;
        r->route = route_of(url);
        if (r->route == R_DEBUG)
            r->path = mu_xstrdup(url);
        if (r->route == R_UNKNOWN || !served_here(s, c, r->route))
            r->refuse = MHD_HTTP_NOT_FOUND;
        else if (is_verb(r->route) ? strcmp(method, MHD_HTTP_METHOD_POST)
                                   : !get)
            r->refuse = MHD_HTTP_METHOD_NOT_ALLOWED;
        if (r->refuse || !is_verb(r->route))
            return MHD_YES;
        cl = content_length(c);
        if (cl > (long long)MU_EXT_MAX_BODY) {
            /* refused before the body is read; MHD then closes */
            atomic_fetch_add(&s->stats.bad_requests, 1);
            set_phase(s, conn_of(c), SENDING);
            return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
                              "request body too large", true);
        }
        if (cl > 0) {
            r->cap = (size_t)cl + 1;
            r->body = mu_xmalloc(r->cap);
        }
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        size_t n = *upload_size;

        *upload_size = 0;
        if (r->refuse || r->too_big || !is_verb(r->route))
            return MHD_YES; /* drained */
        if (n > MU_EXT_MAX_BODY - r->len) {
            /* chunked (unannounced): drain the rest, then 413 */
            r->too_big = true;
            free(r->body);
            r->body = NULL;
            r->len = r->cap = 0;
            return MHD_YES;
        }
        mu_xgrow((void **)&r->body, &r->cap, r->len + n + 1, 1);
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        return MHD_YES;
    }
    /* the request is complete: no deadline while it is served (a /bind
     * waits in the barrier), then the reply's */
    set_phase(s, conn_of(c), SERVING);
    ret = answer(s, c, r);
    set_phase(s, conn_of(c), SENDING);
    return ret;
}

/* The reply to a complete request. */
static enum MHD_Result answer(struct mu_ext_server *s, struct MHD_Connection *c,
                              struct req *r)
{
    if (r->refuse || r->too_big) {
        atomic_fetch_add(&s->stats.bad_requests, 1);
        if (r->too_big)
            return reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE,
                              "request body too large", true);
        if (r->refuse == MHD_HTTP_NOT_FOUND)
            return reply_text(c, r->refuse, "not found", false);
        return reply(c, r->refuse, "text/plain; charset=utf-8",
                     mu_xstrdup("method not allowed\n"), 19, false,
                     is_verb(r->route) ? "POST" : "GET, HEAD");
    }
    return serve(s, c, r);
}

static void on_done(void *cls, struct MHD_Connection *c, void **req_cls,
                    enum MHD_RequestTerminationCode toe)
{
    struct req *r = *req_cls;

    set_phase(cls, conn_of(c), IDLE);
    if (!r)
        return;
    free(r->body);
    free(r->path);
    free(r);
    *req_cls = NULL;
}

/* Splits "HOST:PORT" ("[v6]:PORT", ":PORT" or "*:PORT" for every IPv4
 * address) and makes a listening socket. fd, or -errno with err. */
static int listen_on(const char *listen_addr, struct mu_err *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char host[256], port[16];
    const char *colon, *h = listen_addr;
    size_t hl;
    int fd, one = 1, rc;

    if (listen_addr[0] == '[') {
        const char *close = strchr(listen_addr, ']');

        if (!close || close[1] != ':')
            return mu_err_set(err, -EINVAL, "listen %s: want [IPV6]:PORT",
                              listen_addr);
        h = listen_addr + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen_addr, ':');
        if (!colon)
            return mu_err_set(err, -EINVAL, "listen %s: want HOST:PORT",
                              listen_addr);
        hl = (size_t)(colon - listen_addr);
    }
    if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) || !colon[1] ||
        strspn(colon + 1, "0123456789") != strlen(colon + 1))
        return mu_err_set(err, -EINVAL, "listen %s: bad host or port",
                          listen_addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, sizeof(port), "%s", colon + 1);
    if (!strcmp(host, "*") || !host[0])
        snprintf(host, sizeof(host), "0.0.0.0");
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, port, &hints, &ai);
    if (rc)
        return mu_err_set(err, -EINVAL, "listen %s: %s", listen_addr,
                          gai_strerror(rc));
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = -errno;
        freeaddrinfo(ai);
        return mu_err_set(err, rc, "listen %s: socket: %s", listen_addr,
                          strerror(-rc));
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
        listen(fd, MU_EXT_LISTEN_BACKLOG) ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
        rc = -errno;
        close(fd);
        freeaddrinfo(ai);
        return mu_err_set(err, rc, "listen %s: %s", listen_addr, strerror(-rc));
    }
    freeaddrinfo(ai);
    return fd;
}

static int bound_port(struct MHD_Daemon *d, int fd)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (info && info->port)
        return info->port;
    if (getsockname(fd, (struct sockaddr *)&ss, &len))
        return 0;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* TLS from the option files: t, flags and opts (for MHD_OPTION_ARRAY,
 * room for 3) filled. 0 (t NULL without TLS) or -errno with err. */
static int tls_setup(const struct mu_ext_server_opts *o, struct mu_ext_tls **t,
                     unsigned *flags, struct MHD_OptionItem *opts,
                     struct mu_err *err)
{
    struct mu_ext_tls_opts to = {.cert_file = o->tls_cert_file,
                                 .key_file = o->tls_key_file,
                                 .client_ca_file = o->tls_client_ca_file,
                                 .reload_ms = o->tls_reload_ms,
                                 .log = o->log,
                                 .log_ctx = o->log_ctx};
    int rc;

    *t = NULL;
    if (!o->tls_cert_file && !o->tls_key_file && !o->tls_client_ca_file)
        return 0;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return mu_err_set(err, -ENOTSUP,
                          "extender: libmicrohttpd was built without TLS");
    if (!o->tls_cert_file || !o->tls_key_file)
        return mu_err_set(err, -EINVAL,
                          "extender: TLS needs both a certificate and a key");
    if ((rc = mu_ext_tls_new(&to, t, err)) < 0) {
        mu_err_prefix(err, "extender");
        return rc;
    }
    *flags |= MHD_USE_TLS;
    /* libmicrohttpd's own credentials: every connection is handed the
     * current ones before its handshake (mu_ext_tls_notify) */
    opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
                                      (void *)mu_ext_tls_cert_pem(*t)};
    opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
                                      (void *)mu_ext_tls_key_pem(*t)};
    /* the connections get the current credentials from on_conn, the
     * daemon's one MHD_OPTION_NOTIFY_CONNECTION (mu_ext_tls_notify) */
    opts[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return 0;
}

static bool is_loopback(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &len))
        return false;
    if (ss.ss_family == AF_INET)
        return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) ==
               127;
    return ss.ss_family == AF_INET6 &&
           IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
}

/* The second daemon, for /healthz /readyz /metrics: quick handlers, so
 * one polling thread serves all its connections. 0 or -errno with err. */
static int metrics_start(struct mu_ext_server *s, const char *addr,
                         unsigned poll, struct mu_err *err)
{
    int fd = listen_on(addr, err);

    if (fd < 0)
        return fd;
    s->md = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | poll, 0, NULL, NULL, on_request, s,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)MU_EXT_METRICS_MAX_CONNS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)MU_EXT_METRICS_IDLE_TIMEOUT_S, MHD_OPTION_NOTIFY_COMPLETED,
        on_done, s, MHD_OPTION_END);
    if (!s->md) {
        if (fcntl(fd, F_GETFD) != -1)
            close(fd);
        return mu_err_set(err, -EIO,
                          "metrics: libmicrohttpd could not start on %s", addr);
    }
    s->metrics_port = bound_port(s->md, fd);
    return 0;
}

static int64_t or_default(unsigned v, unsigned dflt)
{
    return v ? v : dflt;
}

int mu_ext_server_start(const struct mu_ext_server_opts *o,
                        struct mu_ext_server **out, struct mu_err *err)
{
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    struct MHD_OptionItem tls_opts[4] = {{MHD_OPTION_END, 0, NULL}};
    struct mu_ext_tls *tls = NULL;
    struct mu_ext_server *s;
    unsigned poll = 0;
    int fd, rc;

    *out = NULL;
    if (!o->listen || !o->views || !o->barrier)
        return mu_err_set(err, -EINVAL,
                          "extender: listen, views and barrier are needed");
    if ((rc = tls_setup(o, &tls, &flags, tls_opts, err)) < 0)
        return rc;
    /* select() cannot watch descriptors above FD_SETSIZE */
    if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        poll = MHD_USE_POLL;
    flags |= poll;
    json_object_seed(0); /* before any handler thread (see barrier.c) */
    fd = listen_on(o->listen, err);
    if (fd < 0) {
        mu_ext_tls_free(tls);
        return fd;
    }
    if (!o->tls_client_ca_file && !is_loopback(fd)) {
        close(fd);
        mu_ext_tls_free(tls);
        return mu_err_set(
            err, -EINVAL,
            "extender: listen %s: plain HTTP (or TLS without a client CA) is "
            "for loopback only; give --tls-cert-file, --tls-private-key-file "
            "and --client-ca-file",
            o->listen);
    }
    s = mu_xcalloc(1, sizeof(*s));
    mu_hist_init(&s->stats.barrier_hist, mu_hist_barrier, mu_hist_barrier_n);
    mu_hist_init(&s->stats.span_hist, mu_hist_barrier, mu_hist_barrier_n);
    s->views = o->views;
    s->barrier = o->barrier;
    s->metrics = o->metrics;
    s->metrics_ctx = o->metrics_ctx;
    s->debug = o->debug;
    s->debug_ctx = o->debug_ctx;
    s->miss = o->miss;
    s->miss_ctx = o->miss_ctx;
    s->arrival_ms = or_default(o->arrival_timeout_ms,
                               MU_EXT_ARRIVAL_TIMEOUT_S * 1000);
    s->reply_ms =
        or_default(o->reply_timeout_ms, MU_EXT_REPLY_TIMEOUT_S * 1000);
    s->idle_ms = or_default(o->idle_timeout_ms, MU_EXT_IDLE_TIMEOUT_S * 1000);
    s->tick_ms = MU_MIN(s->arrival_ms, s->reply_ms) / 5;
    s->tick_ms = s->tick_ms < 10 ? 10 : s->tick_ms > 250 ? 250 : s->tick_ms;
    s->conns.next = s->conns.prev = &s->conns;
    pthread_mutex_init(&s->lock, NULL);
    mu_cond_init_monotonic(&s->wake);
    s->leading = o->leading;
    s->leading_ctx = o->leading_ctx;
    s->tls = tls;
    mu_barrier_set_stats(o->barrier, &s->stats);
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)or_default(o->max_conns, MU_EXT_MAX_CONNS),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)or_default(o->max_conns_per_ip, MU_EXT_MAX_CONNS_PER_IP),
        /* a backstop: the watchdog keeps the idle deadline too */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)((s->idle_ms + 999) / 1000),
        MHD_OPTION_NOTIFY_COMPLETED, on_done, s, MHD_OPTION_NOTIFY_CONNECTION,
        on_conn, s, MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_ARRAY,
        tls_opts, MHD_OPTION_END);
    if (!s->d) {
        if (fcntl(fd, F_GETFD) != -1) /* MHD may have closed it */
            close(fd);
        rc = mu_err_set(
            err, -EIO, "extender: libmicrohttpd could not start on %s%s",
            o->listen, tls ? " (is the TLS certificate or key invalid?)" : "");
        goto out_free;
    }
    if (pthread_create(&s->watchdog, NULL, watchdog_main, s)) {
        MHD_stop_daemon(s->d);
        rc = mu_err_set(err, -EAGAIN, "extender: no watchdog thread");
        goto out_free;
    }
    s->port = bound_port(s->d, fd);
    if (o->metrics_listen &&
        (rc = metrics_start(s, o->metrics_listen, poll, err)) < 0) {
        mu_ext_server_stop(s);
        return rc;
    }
    *out = s;
    return 0;
out_free:
    mu_barrier_set_stats(o->barrier, NULL);
    mu_ext_tls_free(s->tls); /* its daemon is stopped or never ran */
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return rc;
}

int mu_ext_server_port(const struct mu_ext_server *s)
{
    return s->port;
}

int mu_ext_server_metrics_port(const struct mu_ext_server *s)
{
    return s->metrics_port;
}

struct mu_ext_stats *mu_ext_server_stats(struct mu_ext_server *s)
{
    return &s->stats;
}

void mu_ext_server_stop(struct mu_ext_server *s)
{
    if (!s)
        return;
    if (s->md)
        MHD_stop_daemon(s->md);
    /* waits for every connection thread, blocked binds included */
    MHD_stop_daemon(s->d);
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->watchdog, NULL);
    mu_ext_tls_free(s->tls); /* its connections are closed */
    mu_barrier_set_stats(s->barrier, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
