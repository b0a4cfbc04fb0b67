#include "kube/client.h"

#include <curl/curl.h>

#include "api/json.h"
#include "api/times.h"
#include "common/clock.h"
#include "kube/paths.h"
#include "kube/verbs.h"
#include "kube/watchpb.h"

struct mu_kube {
    CURL *curl;
    struct mu_kube_config cfg;
    struct mu_kube_opts opts;
    char *user_agent;
    struct mu_kube_limiter lim;
    char *token;      /* the bearer token sent, or NULL */
    int64_t token_at; /* when token was read from cfg.token_file */
    bool token_read;  /* token_at is valid */
    const atomic_bool *stop;
    unsigned event_seq;
    char errbuf[CURL_ERROR_SIZE];
};

/* Where a response body goes: collected into body (capped), or, in stream
 * mode with a 2xx status, handed to on_data piece by piece. */
struct sink {
    struct mu_kube *k;
    struct mu_sb body;
    bool overflow;
    int (*on_data)(void *ctx, const char *p, size_t n);
    void *ctx;
    int data_rc;
};

/* One request as the caller described it. */
struct req {
    const char *method;
    const char *path;
    const struct mu_kube_param *query;
    const char *body; /* serialised, or NULL */
    size_t body_len;
    const char *content_type;
    long timeout_ms;
    const char *accept; /* NULL: application/json */
};

int64_t mu_kube_clock_now(const struct mu_kube_clock *c)
{
    if (c && c->now_ns)
        return c->now_ns(c->ctx);
    return mu_now_ns();
}

void mu_kube_clock_sleep(const struct mu_kube_clock *c, int64_t ns)
{
    struct timespec ts;

    if (ns <= 0)
        return;
    if (c && c->sleep_ns) {
        c->sleep_ns(c->ctx, ns);
        return;
    }
    ts.tv_sec = (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void mu_kube_limiter_init(struct mu_kube_limiter *l, double qps, int burst,
                          int64_t now_ns)
{
    l->qps = qps;
    l->burst = burst < 1 ? 1 : burst;
    l->tokens = l->burst;
    l->last_ns = now_ns;
}

int64_t mu_kube_limiter_reserve(struct mu_kube_limiter *l, int64_t now_ns)
{
    if (l->qps <= 0)
        return 0;
    if (now_ns > l->last_ns) {
        l->tokens += (double)(now_ns - l->last_ns) * l->qps / 1e9;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
        l->last_ns = now_ns;
    }
    l->tokens -= 1;
    if (l->tokens >= 0)
        return 0;
    /* round up so that a caller woken on time finds its token there */
    return (int64_t)(-l->tokens * 1e9 / l->qps + 0.999999);
}

void mu_kube_shared_limiter_init(struct mu_kube_shared_limiter *s, double qps,
                                 int burst, int64_t now_ns)
{
    pthread_mutex_init(&s->lock, NULL);
    mu_kube_limiter_init(&s->l, qps, burst, now_ns);
    s->delayed = 0;
    s->delayed_ns = 0;
}

void mu_kube_shared_limiter_release(struct mu_kube_shared_limiter *s)
{
    pthread_mutex_destroy(&s->lock);
}

int64_t mu_kube_shared_limiter_reserve(struct mu_kube_shared_limiter *s,
                                       int64_t now_ns)
{
    int64_t wait;

    pthread_mutex_lock(&s->lock);
    wait = mu_kube_limiter_reserve(&s->l, now_ns);
    if (wait > 0) {
        s->delayed++;
        s->delayed_ns += wait;
    }
    pthread_mutex_unlock(&s->lock);
    return wait;
}

void mu_kube_shared_limiter_stats(struct mu_kube_shared_limiter *s,
                                  uint64_t *delayed, int64_t *delayed_ns)
{
    pthread_mutex_lock(&s->lock);
    *delayed = s->delayed;
    *delayed_ns = s->delayed_ns;
    pthread_mutex_unlock(&s->lock);
}

static void log_line(struct mu_kube *k, const char *fmt, ...) MU_PRINTF(2, 3);

static void log_line(struct mu_kube *k, const char *fmt, ...)
{
    char msg[MU_ERR_MAX];
    va_list ap;

    if (!k->opts.log)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    k->opts.log(k->opts.log_ctx, msg);
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    long status = 0;

    n *= size;
    if (s->on_data) {
        curl_easy_getinfo(s->k->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && status < 300) {
            s->data_rc = s->on_data(s->ctx, p, n);
            return s->data_rc ? 0 : n;
        }
    }
    if (s->body.len + n > s->k->opts.max_body) {
        s->overflow = true;
        return 0;
    }
    mu_sb_addn(&s->body, p, n);
    return n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    struct mu_kube *k = arg;

    return k->stop && atomic_load(k->stop);
}

#define SETOPT(k, opt, val)                                                    \
    do {                                                                       \
        if (curl_easy_setopt((k)->curl, opt, val) != CURLE_OK)                 \
            goto out_setopt;                                                   \
    } while (0)

static int setup_handle(struct mu_kube *k, struct mu_err *err)
{
    struct curl_blob blob;

    SETOPT(k, CURLOPT_ERRORBUFFER, k->errbuf);
    SETOPT(k, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    SETOPT(k, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SETOPT(k, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SETOPT(k, CURLOPT_CONNECTTIMEOUT_MS, MU_KUBE_CONNECT_TIMEOUT_MS);
    SETOPT(k, CURLOPT_TCP_KEEPALIVE, 1L);
    SETOPT(k, CURLOPT_USERAGENT, k->user_agent);
    SETOPT(k, CURLOPT_ACCEPT_ENCODING, "");
    SETOPT(k, CURLOPT_WRITEFUNCTION, on_write);
    SETOPT(k, CURLOPT_NOPROGRESS, 0L);
    SETOPT(k, CURLOPT_XFERINFOFUNCTION, on_progress);
    SETOPT(k, CURLOPT_XFERINFODATA, k);
    if (k->cfg.insecure) {
        SETOPT(k, CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(k, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (k->cfg.ca) {
        /* trust the cluster's CA only, as client-go does */
        blob.data = k->cfg.ca;
        blob.len = k->cfg.ca_len;
        blob.flags = CURL_BLOB_COPY;
        SETOPT(k, CURLOPT_CAINFO_BLOB, &blob);
        SETOPT(k, CURLOPT_CAPATH, NULL);
    }
    if (k->cfg.cert) {
        blob.data = k->cfg.cert;
        blob.len = k->cfg.cert_len;
        blob.flags = CURL_BLOB_COPY;
        SETOPT(k, CURLOPT_SSLCERT_BLOB, &blob);
        SETOPT(k, CURLOPT_SSLCERTTYPE, "PEM");
        blob.data = k->cfg.key;
        blob.len = k->cfg.key_len;
        SETOPT(k, CURLOPT_SSLKEY_BLOB, &blob);
        SETOPT(k, CURLOPT_SSLKEYTYPE, "PEM");
    }
    return 0;
out_setopt:
    return mu_err_set(err, -ENOMEM, "%s: libcurl refused an option: %s",
                      k->cfg.server, curl_easy_strerror(CURLE_OUT_OF_MEMORY));
}

int mu_kube_new(const struct mu_kube_config *cfg,
                const struct mu_kube_opts *opts, struct mu_kube **out,
                struct mu_err *err)
{
    struct mu_kube *k;
    int rc;

    *out = NULL;
    if (!cfg->server || !*cfg->server)
        return mu_err_set(err, -EINVAL, "kube client: no server URL");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return mu_err_set(err, -ENOMEM, "kube client: curl_global_init");
    k = mu_xcalloc(1, sizeof(*k));
    if (opts)
        k->opts = *opts;
    k->user_agent =
        mu_xstrdup(k->opts.user_agent ? k->opts.user_agent : "muster");
    k->opts.user_agent = k->user_agent;
    if (k->opts.timeout_ms <= 0)
        k->opts.timeout_ms = MU_KUBE_REQUEST_TIMEOUT_MS;
    if (k->opts.max_body == 0 || k->opts.max_body > MU_KUBE_MAX_BODY)
        k->opts.max_body = MU_KUBE_MAX_BODY;
    mu_kube_config_copy(&k->cfg, cfg);
    k->token = mu_xstrdup_or_null(cfg->token);
    mu_kube_limiter_init(&k->lim, k->opts.qps, k->opts.burst,
                         mu_kube_clock_now(&k->opts.clock));
    k->curl = curl_easy_init();
    if (!k->curl) {
        mu_kube_free(k);
        return mu_err_set(err, -ENOMEM, "kube client: curl_easy_init");
    }
    rc = setup_handle(k, err);
    if (rc) {
        mu_kube_free(k);
        return rc;
    }
    *out = k;
    return 0;
}

static void free_token(struct mu_kube *k)
{
    volatile char *v = k->token;

    while (v && *v)
        *v++ = 0;
    free(k->token);
    k->token = NULL;
}

void mu_kube_free(struct mu_kube *k)
{
    if (!k)
        return;
    if (k->curl)
        curl_easy_cleanup(k->curl);
    free_token(k);
    mu_kube_config_release(&k->cfg);
    free(k->user_agent);
    free(k);
    curl_global_cleanup();
}

void mu_kube_set_stop(struct mu_kube *k, const atomic_bool *stop)
{
    k->stop = stop;
}

/* Re-reads the token file when the token is older than the re-read period,
 * or always when force. A failed read keeps the old token (and is logged):
 * the request will then show the server's verdict. */
static void refresh_token(struct mu_kube *k, bool force)
{
    int64_t now = mu_kube_clock_now(&k->opts.clock);
    struct mu_err e;
    char *buf;
    size_t len;

    if (!k->cfg.token_file)
        return;
    if (!force && k->token_read && now - k->token_at < MU_KUBE_TOKEN_REREAD_NS)
        return;
    k->token_at = now;
    k->token_read = true;
    if (mu_kube_read_file(k->cfg.token_file, MU_KUBE_MAX_FILE, &buf, &len,
                          &e) != 0) {
        log_line(k, "token file: %s; keeping the last token", e.msg);
        return;
    }
    while (len > 0 && strchr(" \t\r\n", buf[len - 1]))
        buf[--len] = '\0';
    free_token(k);
    k->token = buf;
}

static int wait_limiter(struct mu_kube *k)
{
    const struct mu_kube_clock *c = &k->opts.clock;
    int64_t wait =
        k->opts.shared_limiter
            ? mu_kube_shared_limiter_reserve(k->opts.shared_limiter,
                                             mu_kube_clock_now(c))
            : mu_kube_limiter_reserve(&k->lim, mu_kube_clock_now(c));
    int64_t until = mu_kube_clock_now(c) + wait;

    while (wait > 0) {
        if (k->stop && atomic_load(k->stop))
            return -ECANCELED;
        mu_kube_clock_sleep(c, MU_MIN(wait, 100LL * 1000000LL));
        wait = until - mu_kube_clock_now(c);
    }
    return 0;
}

static char *build_url(struct mu_kube *k, const struct req *r)
{
    const struct mu_kube_param *q;
    CURLU *u = curl_url();
    char *base, *url = NULL, *s = NULL;
    bool ok;

    if (!u)
        return NULL;
    base = mu_xasprintf("%s%s", k->cfg.server, r->path);
    ok = curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK;
    free(base);
    for (q = r->query; ok && q && q->name; q++) {
        if (!q->value)
            continue;
        base = mu_xasprintf("%s=%s", q->name, q->value);
        ok = curl_url_set(u, CURLUPART_QUERY, base,
                          CURLU_APPENDQUERY | CURLU_URLENCODE) == CURLUE_OK;
        free(base);
    }
    if (ok && curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
        url = mu_xstrdup(s);
    curl_free(s);
    curl_url_cleanup(u);
    return url;
}

static struct curl_slist *add_header(struct curl_slist *h, bool *ok,
                                     const char *name, const char *value)
{
    struct curl_slist *n;
    char *line;

    if (!*ok)
        return h;
    /* "Name:" with no value removes a header curl would add */
    line = *value ? mu_xasprintf("%s: %s", name, value)
                  : mu_xasprintf("%s:", name);
    n = curl_slist_append(h, line);
    free(line);
    if (!n) {
        *ok = false;
        return h;
    }
    return n;
}

static int curl_errno(CURLcode c, const struct sink *s)
{
    switch (c) {
    case CURLE_OK:
        return 0;
    case CURLE_WRITE_ERROR:
        if (s->overflow)
            return -ENOBUFS;
        return s->data_rc ? s->data_rc : -EIO;
    case CURLE_ABORTED_BY_CALLBACK:
        return -ECANCELED;
    case CURLE_OPERATION_TIMEDOUT:
        return -ETIMEDOUT;
    case CURLE_OUT_OF_MEMORY:
        return -ENOMEM;
    default:
        return -EIO;
    }
}

/* One exchange on the wire, no retries. */
static int exchange(struct mu_kube *k, const struct req *r, struct sink *s,
                    long *status, struct mu_err *err)
{
    struct curl_slist *h = NULL;
    char *url = build_url(k, r);
    bool ok = url != NULL;
    CURLcode c = CURLE_OUT_OF_MEMORY;
    int rc;

    h = add_header(h, &ok, "Accept", r->accept ? r->accept : "application/json");
    h = add_header(h, &ok, "Expect", "");
    if (r->body)
        h = add_header(h, &ok, "Content-Type",
                       r->content_type ? r->content_type : "application/json");
    if (k->token && *k->token) {
        char *auth = mu_xasprintf("Bearer %s", k->token);

        h = add_header(h, &ok, "Authorization", auth);
        free(auth);
    }
    if (!ok)
        goto out;
    k->errbuf[0] = '\0';
    SETOPT(k, CURLOPT_URL, url);
    SETOPT(k, CURLOPT_HTTPHEADER, h);
    SETOPT(k, CURLOPT_WRITEDATA, s);
    SETOPT(k, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    if (r->body) {
        SETOPT(k, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        SETOPT(k, CURLOPT_POSTFIELDS, r->body);
        SETOPT(k, CURLOPT_CUSTOMREQUEST, r->method);
    } else {
        SETOPT(k, CURLOPT_HTTPGET, 1L);
        SETOPT(k, CURLOPT_CUSTOMREQUEST,
               strcmp(r->method, "GET") ? r->method : NULL);
    }
    c = curl_easy_perform(k->curl);
    curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, status);
    goto out;
out_setopt:
    c = CURLE_OUT_OF_MEMORY;
out:
    curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    free(url);
    rc = curl_errno(c, s);
    if (rc == -ENOBUFS)
        mu_err_set(err, rc, "%s %s: response larger than %zu bytes", r->method,
                   r->path, k->opts.max_body);
    else if (rc && rc != s->data_rc)
        mu_err_set(err, rc, "%s %s: %s", r->method, r->path,
                   k->errbuf[0] ? k->errbuf : curl_easy_strerror(c));
    return rc;
}

/* exchange() behind the rate limiter, with the token policy: fresh enough
 * before, re-read after a 401 and sent once more if it changed. */
static int send_req(struct mu_kube *k, const struct req *r, struct sink *s,
                    long *status, struct mu_err *err)
{
    char *used;
    int rc, attempt;

    refresh_token(k, false);
    for (attempt = 0;; attempt++) {
        rc = wait_limiter(k);
        if (rc)
            return mu_err_set(err, rc, "%s %s: stopped", r->method, r->path);
        *status = 0;
        rc = exchange(k, r, s, status, err);
        if (rc || *status != 401 || attempt > 0 || !k->cfg.token_file)
            return rc;
        used = mu_xstrdup_or_null(k->token);
        refresh_token(k, true);
        if (!mu_strcmp0(used, k->token)) {
            free(used);
            return rc;
        }
        free(used);
        log_line(k, "%s %s: 401 Unauthorized; token file changed, retrying",
                 r->method, r->path);
        mu_sb_release(&s->body);
        s->overflow = false;
    }
}

/* "GET /path: 404 NotFound: pods \"x\" not found" from a Status (or the raw
 * text of a body that is not one). */
static void http_error(const struct req *r, long status, const json_t *st,
                       const struct mu_sb *body, struct mu_err *err)
{
    const char *reason = json_string_value(json_object_get(st, "reason"));
    const char *msg = json_string_value(json_object_get(st, "message"));
    int n;

    if (msg) {
        n = (int)strlen(msg); /* mu_err cuts it if need be */
    } else {
        msg = body->len ? body->buf : "";
        n = (int)MU_MIN(body->len, 200);
        while (n > 0 && strchr(" \r\n", msg[n - 1]))
            n--;
        for (int i = 0; i < n; i++)
            if ((unsigned char)msg[i] < 0x20 && msg[i] != '\t' &&
                msg[i] != '\r' && msg[i] != '\n') {
                msg = "(a body that is not text: protobuf?)";
                n = (int)strlen(msg);
                break;
            }
    }
    mu_err_set(err, 0, "%s %s: %ld%s%s: %.*s", r->method, r->path, status,
               reason ? " " : "", reason ? reason : "", n, msg);
}

static bool asks_watch(const struct mu_kube_param *q)
{
    for (; q && q->name; q++)
        if (!strcmp(q->name, "watch") && q->value &&
            (!strcmp(q->value, "1") || !strcmp(q->value, "true")))
            return true;
    return false;
}

/* The path's form, then, with cfg.api_table, kube/verbs.h's table. */
static int check_path(const struct mu_kube *k, const char *method,
                      const char *path, const struct mu_kube_param *query,
                      struct mu_err *err)
{
    struct mu_api_call c;

    if (!path || path[0] != '/' || strchr(path, '?') || strchr(path, '#'))
        return mu_err_set(err, -EINVAL,
                          "%s %s: path must start with '/' "
                          "and carry no query",
                          method, path ? path : "(null)");
    if (k->cfg.api_table &&
        (mu_api_call_parse(method, path, asks_watch(query), &c) < 0 ||
         !mu_api_call_allowed(&c)))
        return mu_err_set(err, -EPERM,
                          "%s %s: not in muster's API table "
                          "(src/kube/verbs.h), not sent",
                          method, path);
    return 0;
}

int mu_kube_request(struct mu_kube *k, const char *method, const char *path,
                    const struct mu_kube_param *query, const json_t *body,
                    const char *content_type, long *http_status, json_t **resp,
                    struct mu_err *err)
{
    struct req r = {.method = method,
                    .path = path,
                    .query = query,
                    .content_type = content_type,
                    .timeout_ms = k->opts.timeout_ms};
    struct sink s = {.k = k};
    json_t *j = NULL;
    json_error_t jerr;
    char *text = NULL;
    long status = 0;
    int rc;

    if (resp)
        *resp = NULL;
    rc = check_path(k, method, path, query, err);
    if (rc)
        return rc;
    if (body) {
        text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!text)
            return mu_err_set(err, -ENOMEM, "%s %s: cannot encode body", method,
                              path);
        r.body = text;
        r.body_len = strlen(text);
    }
    mu_sb_init(&s.body);
    rc = send_req(k, &r, &s, &status, err);
    if (rc)
        goto out;
    if (s.body.len) {
        j = mu_json_loadb(s.body.buf, s.body.len, &jerr);
        if (!j && status < 400) {
            rc = mu_err_set(err, -EPROTO, "%s %s: %ld response is not JSON: %s",
                            method, path, status, jerr.text);
            goto out;
        }
    }
    if (status >= 400)
        http_error(&r, status, j, &s.body, err);
    if (http_status)
        *http_status = status;
    if (resp)
        *resp = j;
    else
        json_decref(j);
    j = NULL;
out:
    json_decref(j);
    mu_sb_release(&s.body);
    free(text);
    return rc;
}

int mu_kube_http_errno(long status, const json_t *status_obj)
{
    const char *reason =
        json_string_value(json_object_get(status_obj, "reason"));

    if (status >= 200 && status < 300)
        return 0;
    switch (status) {
    case 400:
    case 422:
        return -EINVAL;
    case 401:
        return -EACCES;
    case 403:
        return -EPERM;
    case 404:
        return -ENOENT;
    case 405:
        return -EOPNOTSUPP;
    case 409:
        return mu_strcmp0(reason, "AlreadyExists") == 0 ? -EEXIST : -EBUSY;
    case 410:
        return -ESTALE;
    case 429:
        return -EAGAIN;
    case 504:
        return -ETIMEDOUT;
    default:
        return status >= 500 ? -EIO : -EPROTO;
    }
}

bool mu_kube_not_done(int rc)
{
    return rc == -ENOMEM || rc == -EINVAL || rc == -EACCES || rc == -EPERM ||
           rc == -EOPNOTSUPP || rc == -EAGAIN;
}

int mu_kube_call(struct mu_kube *k, const char *method, const char *path,
                 const struct mu_kube_param *query, const json_t *body,
                 const char *content_type, json_t **resp, struct mu_err *err)
{
    json_t *j = NULL;
    long status;
    int rc;

    if (resp)
        *resp = NULL;
    rc = mu_kube_request(k, method, path, query, body, content_type, &status,
                         &j, err);
    if (!rc)
        rc = mu_kube_http_errno(status, j);
    if (rc) {
        json_decref(j);
        return rc;
    }
    if (resp)
        *resp = j;
    else
        json_decref(j);
    return 0;
}

int mu_kube_get(struct mu_kube *k, const char *path,
                const struct mu_kube_param *query, json_t **resp,
                struct mu_err *err)
{
    return mu_kube_call(k, "GET", path, query, NULL, NULL, resp, err);
}

int mu_kube_create(struct mu_kube *k, const char *path, const json_t *obj,
                   json_t **resp, struct mu_err *err)
{
    return mu_kube_call(k, "POST", path, NULL, obj, NULL, resp, err);
}

int mu_kube_replace(struct mu_kube *k, const char *path, const json_t *obj,
                    json_t **resp, struct mu_err *err)
{
    return mu_kube_call(k, "PUT", path, NULL, obj, NULL, resp, err);
}

int mu_kube_merge_patch(struct mu_kube *k, const char *path,
                        const json_t *patch, json_t **resp, struct mu_err *err)
{
    return mu_kube_call(k, "PATCH", path, NULL, patch, MU_KUBE_MERGE_PATCH,
                        resp, err);
}

int mu_kube_delete(struct mu_kube *k, const char *path,
                   const struct mu_kube_param *query, json_t **resp,
                   struct mu_err *err)
{
    return mu_kube_call(k, "DELETE", path, query, NULL, NULL, resp, err);
}

static int status_call(struct mu_kube *k, const char *method, const char *path,
                       const json_t *body, const char *content_type,
                       json_t **resp, struct mu_err *err)
{
    char *sub = mu_xasprintf("%s/status", path ? path : "");
    int rc = mu_kube_call(k, method, sub, NULL, body, content_type, resp, err);

    free(sub);
    return rc;
}

int mu_kube_status_replace(struct mu_kube *k, const char *path,
                           const json_t *obj, json_t **resp, struct mu_err *err)
{
    return status_call(k, "PUT", path, obj, NULL, resp, err);
}

int mu_kube_status_patch(struct mu_kube *k, const char *path,
                         const json_t *patch, json_t **resp, struct mu_err *err)
{
    return status_call(k, "PATCH", path, patch, MU_KUBE_MERGE_PATCH, resp, err);
}

int mu_kube_bind(struct mu_kube *k, const char *ns, const char *name,
                 const char *uid, const char *node, struct mu_err *err)
{
    char *path = NULL;
    json_t *b = NULL, *meta;
    int rc;

    if (!ns || !*ns || !name || !*name || !node || !*node) {
        rc = mu_err_set(err, -EINVAL, "bind %s/%s to %s: missing argument",
                        ns ? ns : "", name ? name : "", node ? node : "");
        goto out;
    }
    meta = json_pack("{s:s, s:s}", "name", name, "namespace", ns);
    if (meta && uid)
        json_object_set_new(meta, "uid", json_string(uid));
    b = json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
                  "kind", "Binding", "metadata", meta, "target", "apiVersion",
                  "v1", "kind", "Node", "name", node);
    if (!b) {
        rc = mu_err_set(err, -ENOMEM, "bind %s/%s: cannot build Binding", ns,
                        name);
        goto out;
    }
    path = mu_api_path(MU_API_POD, ns, name, "binding");
    rc = mu_kube_call(k, "POST", path, NULL, b, NULL, NULL, err);
out:
    json_decref(b);
    free(path);
    return rc;
}

char *mu_kube_time_text(time_t t, char *buf, size_t n)
{
    if (!mu_rfc3339_format((int64_t)t, buf, n))
        snprintf(buf, n, "1970-01-01T00:00:00Z");
    return buf;
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v)
        json_object_set_new(o, key, json_string(v));
}

json_t *mu_kube_event_build(const struct mu_kube_event *ev, unsigned seq)
{
    const struct mu_kube_objref *io = &ev->involved;
    const char *ns =
        io->namespace && *io->namespace ? io->namespace : "default";
    char first[32], last[32];
    json_t *e, *meta, *obj;
    char *name;

    if (ev->name)
        name = mu_xstrdup(ev->name);
    else
        name = mu_xasprintf("%s.%016llx", io->name ? io->name : "muster",
                            (unsigned long long)ev->first_time * 1000000000ULL +
                                seq);
    meta = json_object();
    set_str(meta, "name", name);
    set_str(meta, "namespace", ns);
    free(name);
    obj = json_object();
    set_str(obj, "apiVersion", io->api_version);
    set_str(obj, "kind", io->kind);
    set_str(obj, "namespace", io->namespace);
    set_str(obj, "name", io->name);
    set_str(obj, "uid", io->uid);
    e = json_object();
    if (!meta || !obj || !e) {
        json_decref(meta);
        json_decref(obj);
        json_decref(e);
        return NULL;
    }
    set_str(e, "apiVersion", "v1");
    set_str(e, "kind", "Event");
    json_object_set_new(e, "metadata", meta);
    json_object_set_new(e, "involvedObject", obj);
    set_str(e, "reason", ev->reason);
    set_str(e, "message", ev->message);
    set_str(e, "type", ev->type ? ev->type : "Normal");
    json_object_set_new(e, "source", json_pack("{s:s}", "component", "muster"));
    set_str(e, "firstTimestamp",
            mu_kube_time_text(ev->first_time, first, sizeof(first)));
    set_str(e, "lastTimestamp",
            mu_kube_time_text(ev->last_time ? ev->last_time : ev->first_time,
                              last, sizeof(last)));
    json_object_set_new(e, "count",
                        json_integer(ev->count < 1 ? 1 : ev->count));
    return e;
}

int mu_kube_event_post(struct mu_kube *k, const struct mu_kube_event *ev,
                       json_t **resp, struct mu_err *err)
{
    const char *ns = ev->involved.namespace && *ev->involved.namespace
                         ? ev->involved.namespace
                         : "default";
    json_t *e = mu_kube_event_build(ev, k->event_seq++);
    char *path;
    int rc;

    if (resp)
        *resp = NULL;
    if (!e)
        return mu_err_set(err, -ENOMEM, "event %s: cannot build",
                          ev->reason ? ev->reason : "");
    path = mu_api_path(MU_API_EVENT, ns, NULL, NULL);
    rc = mu_kube_call(k, "POST", path, NULL, e, NULL, resp, err);
    free(path);
    json_decref(e);
    return rc;
}

const char *mu_kube_content_type(struct mu_kube *k)
{
    char *ct = NULL;

    curl_easy_getinfo(k->curl, CURLINFO_CONTENT_TYPE, &ct);
    return ct ? ct : "";
}

int mu_kube_stream(struct mu_kube *k, const char *path,
                   const struct mu_kube_param *query, const char *accept,
                   long timeout_ms,
                   int (*on_data)(void *ctx, const char *p, size_t n),
                   void *ctx, long *http_status, json_t **resp,
                   struct mu_err *err)
{
    struct req r = {.method = "GET",
                    .path = path,
                    .query = query,
                    .timeout_ms = timeout_ms,
                    .accept = accept};
    struct sink s = {.k = k, .on_data = on_data, .ctx = ctx};
    long status = 0;
    int rc;

    if (resp)
        *resp = NULL;
    rc = check_path(k, "GET", path, query, err);
    if (rc)
        return rc;
    mu_sb_init(&s.body);
    rc = send_req(k, &r, &s, &status, err);
    if (!rc) {
        json_t *j =
            s.body.len ? mu_json_loadb(s.body.buf, s.body.len, NULL) : NULL;

        if (!j && s.body.len) /* a Status in protobuf (accept) */
            j = mu_watchpb_status((const uint8_t *)s.body.buf, s.body.len);

        if (status >= 400)
            http_error(&r, status, j, &s.body, err);
        if (http_status)
            *http_status = status;
        if (resp)
            *resp = j;
        else
            json_decref(j);
    }
    mu_sb_release(&s.body);
    return rc;
}
