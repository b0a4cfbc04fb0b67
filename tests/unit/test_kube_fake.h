/*
 * test_kube_fake.h - a fake Kubernetes API server for the kube tests.
 *
 * libmicrohttpd on 127.0.0.1, port 0 (the kernel picks), in the test
 * process, one thread per connection. It answers with a script: the n-th
 * request gets the n-th reply, whatever it asks (curl's tests/data style),
 * and every request is recorded (method, raw path and query exactly as sent,
 * the headers that matter, the body) so tests assert what the client sent.
 * A request beyond the script gets 503 and raises the `exhausted` flag (if
 * set), which tests use as the watch's stop flag.
 *
 * Every server has a path prefix of its own in its url ("/kf-PID-N"), which
 * clients put before every path: a request without it comes from another
 * test's client (a port the kernel gave out again while a client of a
 * stopped server still retried) and gets a 404, unrecorded and unscripted.
 * Recorded paths are without the prefix.
 *
 * Bodies come from a string or from a file of tests/data/kube/. A reply can
 * break the connection after its body (drop) or keep it open sending
 * nothing until the server stops (hang).
 */
#ifndef TEST_KUBE_FAKE_H
#define TEST_KUBE_FAKE_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define KF_MAX 64

struct kf_reply {
    int status;
    const char *content_type; /* NULL: application/json */
    const char *body;         /* literal body, or NULL */
    const char *file;         /* or a file under tests/data/kube */
    size_t body_len;          /* 0: strlen(body) */
    bool drop;                /* break the connection after the body */
    bool hang;                /* after the body, send nothing, never end */
};

struct kf_request {
    char method[16];
    char *uri;   /* as sent: "/api/v1/pods?limit=2&continue=x" */
    char *path;  /* before '?' */
    char *query; /* after '?', raw (percent-encoded); "" if none */
    char *authorization;
    char *content_type;
    char *accept;
    char *body;
    size_t body_len;
    bool client_cert; /* TLS: a client certificate the trust CA verified */
};

struct kf_server {
    struct MHD_Daemon *d;
    unsigned short port;
    char prefix[32]; /* "/kf-PID-N", this server's own */
    char url[96];    /* "http://127.0.0.1:PORT/kf-PID-N" or https */
    pthread_mutex_t mu;
    struct kf_reply replies[KF_MAX];
    size_t n_replies;
    struct kf_request reqs[KF_MAX];
    size_t n_reqs;
    atomic_bool *exhausted; /* raised when the script runs out */
    atomic_bool stopping;
    bool require_cert; /* TLS: 401 without a verified client cert */
};

/* Starts a plain HTTP server. 0 or -1. */
int kf_start(struct kf_server *s);
/* Starts an HTTPS server with this certificate and key (PEM); trust (may be
 * NULL) is the CA that client certificates are verified against. */
int kf_start_tls(struct kf_server *s, const char *cert, const char *key,
                 const char *trust);
void kf_stop(struct kf_server *s);

/* Appends replies to the script. */
void kf_reply(struct kf_server *s, struct kf_reply r);
void kf_reply_body(struct kf_server *s, int status, const char *body);
void kf_reply_file(struct kf_server *s, int status, const char *file);

/* Recorded requests (copies are not needed: stable until kf_stop). */
size_t kf_count(struct kf_server *s);
const struct kf_request *kf_req(struct kf_server *s, size_t i);

/* A file of tests/data/kube: its path (owned) and its content (owned,
 * NUL-terminated). */
char *kf_data_path(const char *name);
char *kf_data(const char *name, size_t *len);

#endif
