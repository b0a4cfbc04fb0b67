#include "test_kube_fake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef KF_GNUTLS
#include <gnutls/gnutls.h>
#endif

#ifndef MU_KUBE_DATA
#error "MU_KUBE_DATA (the tests/data/kube directory) must be defined"
#endif

/* Largest request body recorded. */
#define KF_MAX_BODY (1u << 20)

struct conn {
    struct kf_server *s;
    char *uri;
    char *body;
    size_t body_len;
    bool started;
};

/* The body of one reply being streamed. */
struct stream {
    struct kf_server *s;
    char *data;
    size_t len;
    size_t off;
    bool drop;
    bool hang;
};

static char *xstrdup0(const char *p)
{
    return p ? strdup(p) : NULL;
}

char *kf_data_path(const char *name)
{
    size_t n = strlen(MU_KUBE_DATA) + strlen(name) + 2;
    char *p = malloc(n);

    snprintf(p, n, "%s/%s", MU_KUBE_DATA, name);
    return p;
}

char *kf_data(const char *name, size_t *len)
{
    char *path = kf_data_path(name);
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f) {
        fprintf(stderr, "kf: %s: %s\n", path, strerror(errno));
        abort();
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        abort();
    buf[n] = '\0';
    fclose(f);
    free(path);
    if (len)
        *len = (size_t)n;
    return buf;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct conn *cn = calloc(1, sizeof(*cn));

    cn->s = cls;
    cn->uri = strdup(uri);
    return cn;
}

static void on_done(void *cls, struct MHD_Connection *c, void **req_cls,
                    enum MHD_RequestTerminationCode toe)
{
    struct conn *cn = *req_cls;

    if (!cn)
        return;
    free(cn->uri);
    free(cn->body);
    free(cn);
    *req_cls = NULL;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    size_t n;

    if (st->off < st->len) {
        n = st->len - st->off;
        if (n > max)
            n = max;
        memcpy(buf, st->data + st->off, n);
        st->off += n;
        return (ssize_t)n;
    }
    if (st->drop)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (st->hang) {
        struct timespec ts = {0, 20 * 1000 * 1000};

        while (!atomic_load(&st->s->stopping)) {
            nanosleep(&ts, NULL);
            /* returning 0 would busy-loop; wait here instead */
        }
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static void free_stream(void *cls)
{
    struct stream *st = cls;

    free(st->data);
    free(st);
}

static char *header(struct MHD_Connection *c, const char *name)
{
    return xstrdup0(MHD_lookup_connection_value(c, MHD_HEADER_KIND, name));
}

#ifdef KF_GNUTLS
static bool verified_cert(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    unsigned status = 1, n = 0;
    gnutls_session_t tls;

    if (!ci || !ci->tls_session)
        return false;
    tls = (gnutls_session_t)ci->tls_session;
    if (!gnutls_certificate_get_peers(tls, &n) || n == 0)
        return false;
    return gnutls_certificate_verify_peers2(tls, &status) == 0 && status == 0;
}
#else
static bool verified_cert(struct MHD_Connection *c)
{
    return false;
}
#endif

/* A request of this server's own clients: its uri starts with the prefix
 * (see test_kube_fake.h). */
static bool ours(const struct kf_server *s, const char *uri)
{
    size_t n = strlen(s->prefix);

    return !strncmp(uri, s->prefix, n) &&
           (uri[n] == '/' || uri[n] == '?' || uri[n] == '\0');
}

static enum MHD_Result foreign(struct MHD_Connection *c)
{
    static const char msg[] = "not a client of this fake server";
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, 404, resp);

    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct kf_server *s = cls;
    struct conn *cn = *req_cls;
    struct kf_request *r = NULL;
    struct kf_reply rep = {503,   "text/plain", "no more replies", NULL, 0,
                           false, false};
    struct MHD_Response *resp;
    struct stream *st;
    enum MHD_Result ret;
    const char *q;

    if (!cn->started) {
        cn->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (cn->body_len + *upload_size <= KF_MAX_BODY) {
            cn->body = realloc(cn->body, cn->body_len + *upload_size + 1);
            memcpy(cn->body + cn->body_len, upload, *upload_size);
            cn->body_len += *upload_size;
            cn->body[cn->body_len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!ours(s, cn->uri))
        return foreign(c);
    pthread_mutex_lock(&s->mu);
    if (s->n_reqs < KF_MAX) {
        r = &s->reqs[s->n_reqs];
        snprintf(r->method, sizeof(r->method), "%s", method);
        r->uri = strdup(cn->uri + strlen(s->prefix));
        q = strchr(r->uri, '?');
        r->path = q ? strndup(r->uri, (size_t)(q - r->uri)) : strdup(r->uri);
        r->query = strdup(q ? q + 1 : "");
        r->authorization = header(c, "Authorization");
        r->content_type = header(c, "Content-Type");
        r->accept = header(c, "Accept");
        r->body = cn->body;
        r->body_len = cn->body_len;
        cn->body = NULL;
        r->client_cert = verified_cert(c);
        if (s->n_reqs < s->n_replies)
            rep = s->replies[s->n_reqs];
        else if (s->exhausted)
            atomic_store(s->exhausted, true);
        s->n_reqs++;
    }
    pthread_mutex_unlock(&s->mu);
    if (r && s->require_cert && !r->client_cert)
        rep = (struct kf_reply){
            401,
            NULL,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
            "\"Failure\",\"message\":\"Unauthorized\",\"reason\":"
            "\"Unauthorized\",\"code\":401}",
            NULL,
            0,
            false,
            false};
    st = calloc(1, sizeof(*st));
    st->s = s;
    if (rep.file) {
        st->data = kf_data(rep.file, &st->len);
    } else {
        st->len = rep.body_len ? rep.body_len : strlen(rep.body);
        st->data = malloc(st->len + 1);
        memcpy(st->data, rep.body, st->len);
    }
    st->drop = rep.drop;
    st->hang = rep.hang;
    resp = MHD_create_response_from_callback(
        rep.drop || rep.hang ? MHD_SIZE_UNKNOWN : st->len, 64 * 1024, reader,
        st, free_stream);
    MHD_add_response_header(resp, "Content-Type",
                            rep.content_type ? rep.content_type
                                             : "application/json");
    ret = MHD_queue_response(c, (unsigned)rep.status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static atomic_uint kf_servers;

static int start(struct kf_server *s, unsigned flags, const char *cert,
                 const char *key, const char *trust)
{
    struct sockaddr_in a;
    const union MHD_DaemonInfo *info;
    struct MHD_OptionItem tls[4];
    size_t n = 0;

    memset(&s->d, 0, sizeof(*s) - offsetof(struct kf_server, d));
    pthread_mutex_init(&s->mu, NULL);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (cert) {
        tls[n++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert};
        tls[n++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key};
        if (trust)
            tls[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                               (void *)trust};
    }
    tls[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    s->d = MHD_start_daemon(flags | MHD_USE_INTERNAL_POLLING_THREAD |
                                MHD_USE_THREAD_PER_CONNECTION,
                            0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&a, MHD_OPTION_URI_LOG_CALLBACK,
                            on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
                            MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!s->d)
        return -1;
    info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info->port;
    snprintf(s->prefix, sizeof(s->prefix), "/kf-%ld-%u", (long)getpid(),
             atomic_fetch_add(&kf_servers, 1));
    snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%u%s",
             cert ? "https" : "http", s->port, s->prefix);
    return 0;
}

int kf_start(struct kf_server *s)
{
    return start(s, 0, NULL, NULL, NULL);
}

int kf_start_tls(struct kf_server *s, const char *cert, const char *key,
                 const char *trust)
{
    return start(s, MHD_USE_TLS, cert, key, trust);
}

void kf_stop(struct kf_server *s)
{
    size_t i;

    if (!s->d)
        return;
    atomic_store(&s->stopping, true);
    MHD_stop_daemon(s->d);
    s->d = NULL;
    for (i = 0; i < s->n_reqs; i++) {
        struct kf_request *r = &s->reqs[i];

        free(r->uri);
        free(r->path);
        free(r->query);
        free(r->authorization);
        free(r->content_type);
        free(r->accept);
        free(r->body);
    }
    s->n_reqs = 0;
    pthread_mutex_destroy(&s->mu);
}

void kf_reply(struct kf_server *s, struct kf_reply r)
{
    pthread_mutex_lock(&s->mu);
    if (s->n_replies < KF_MAX)
        s->replies[s->n_replies++] = r;
    pthread_mutex_unlock(&s->mu);
}

void kf_reply_body(struct kf_server *s, int status, const char *body)
{
    kf_reply(s, (struct kf_reply){status, NULL, body, NULL, 0, false, false});
}

void kf_reply_file(struct kf_server *s, int status, const char *file)
{
    kf_reply(s, (struct kf_reply){status, NULL, NULL, file, 0, false, false});
}

size_t kf_count(struct kf_server *s)
{
    size_t n;

    pthread_mutex_lock(&s->mu);
    n = s->n_reqs;
    pthread_mutex_unlock(&s->mu);
    return n;
}

const struct kf_request *kf_req(struct kf_server *s, size_t i)
{
    const struct kf_request *r = NULL;

    pthread_mutex_lock(&s->mu);
    if (i < s->n_reqs)
        r = &s->reqs[i];
    pthread_mutex_unlock(&s->mu);
    return r;
}
