/*
 * client.h - a thin Kubernetes REST client: one request function, a few
 * helpers for the writes a scheduler makes, and a client-side rate limit.
 *
 * Model: a struct mu_kube owns one libcurl easy handle, reused for every
 * request so connections (and TLS sessions) are kept alive. Bodies are
 * jansson values, parsed once; paths are API paths ("/api/v1/namespaces/
 * default/pods/a"), so one function serves core objects, CRDs and
 * subresources alike.
 *
 * Threads: a client is NOT thread-safe. One thread uses a client at a
 * time; the simplest is one client per thread, made, used and freed on it.
 * A client may also be handed from thread to thread when the hand-over
 * synchronizes (a mutex), which is what a pool does (pool.h, built on
 * this client). (A watch has its own client, see watch.h.) Nothing here has
 * global state except libcurl's global init, which mu_kube_new() performs
 * once (thread-safe with curl >= 7.84).
 *
 * Authentication: client certificate and key (passed to curl as blobs, so
 * they never touch the disk), CA bundle (a blob too), and a bearer token.
 * With a token file the token is re-read when the copy in memory is older
 * than MU_KUBE_TOKEN_REREAD_NS, and at once after a 401; if the re-read
 * token differs from the one the 401 answered, the request is sent once
 * more (a 401 means the server did nothing, so this is safe for writes).
 *
 * Errors: functions return 0 or a negative errno and, when err is not NULL,
 * write a one-line message naming the method and path into it:
 *   -EIO        transport failure (connect, TLS, reset); curl's text in err
 *   -ETIMEDOUT  the request took longer than its timeout
 *   -ENOBUFS    the response body exceeded MU_KUBE_MAX_BODY (or the
 *               client's max_body)
 *   -EPROTO     a 2xx response whose body is not JSON
 *   -EINVAL     a bad argument (path not starting with '/', or with '?')
 *   -ECANCELED  the stop flag (mu_kube_set_stop) was raised mid-transfer
 *   -ENOMEM     libcurl could not allocate
 * mu_kube_request() reports HTTP errors (>= 400) as success of the
 * exchange: it returns 0 with the status set, and the Status object's
 * message in err. The helpers turn them into -errno with
 * mu_kube_http_errno().
 *
 * Ownership: request bodies are borrowed; response objects are returned
 * owned (a new reference the caller must json_decref). Out-parameters are
 * written only on success; on failure *resp is set to NULL.
 *
 * Logging: the library never prints. Diagnostics that are not errors of the
 * call at hand (a retry after 401, a token that could not be re-read) go to
 * the optional log hook of struct mu_kube_opts.
 */
#ifndef MU_KUBE_CLIENT_H
#define MU_KUBE_CLIENT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/mu.h"
#include "kube/caps.h"
#include "kube/config.h"

struct mu_kube;

/*
 * Time, injectable for tests. now_ns returns a monotonic time in
 * nanoseconds; sleep_ns sleeps for at least ns nanoseconds (callers that
 * must stay responsive sleep in short slices). Both are called on the
 * thread that uses the client. NULL (the struct or a member) means
 * CLOCK_MONOTONIC and nanosleep().
 */
struct mu_kube_clock {
    int64_t (*now_ns)(void *ctx);
    void (*sleep_ns)(void *ctx, int64_t ns);
    void *ctx;
};

/* Reads the clock, or CLOCK_MONOTONIC when c or its member is NULL. */
int64_t mu_kube_clock_now(const struct mu_kube_clock *c);
/* Sleeps through the clock, or nanosleep() when c or its member is NULL. */
void mu_kube_clock_sleep(const struct mu_kube_clock *c, int64_t ns);

/*
 * A token bucket: up to `burst` requests at once, refilled at `qps` per
 * second (client-go's flowcontrol limiter). Pure; time is passed in.
 * qps <= 0 disables the limit.
 */
struct mu_kube_limiter {
    double qps;
    double burst;
    double tokens; /* may go negative: requests already promised a slot */
    int64_t last_ns;
};

/* Starts full (burst tokens) at time now_ns. burst < 1 is taken as 1. */
void mu_kube_limiter_init(struct mu_kube_limiter *l, double qps, int burst,
                          int64_t now_ns);
/* Reserves a slot for one request at now_ns and returns how many
 * nanoseconds the caller must wait before sending it (0: send now). The
 * reservation is kept even if the caller then gives up. */
int64_t mu_kube_limiter_reserve(struct mu_kube_limiter *l, int64_t now_ns);

/*
 * The same bucket shared by several clients, e.g. a pool of threads that
 * together are one component and get one budget (client-go's limiter is
 * shared by every goroutine of a clientset). Thread-safe. The clients that
 * use it (mu_kube_opts.shared_limiter) borrow it: it must outlive them.
 */
struct mu_kube_shared_limiter {
    pthread_mutex_t lock;
    struct mu_kube_limiter l;
    uint64_t delayed;   /* reservations told to wait */
    int64_t delayed_ns; /* the waits they were told, summed */
};

void mu_kube_shared_limiter_init(struct mu_kube_shared_limiter *s, double qps,
                                 int burst, int64_t now_ns);
void mu_kube_shared_limiter_release(struct mu_kube_shared_limiter *s);
/* mu_kube_limiter_reserve() under the lock, counted when it says wait. */
int64_t mu_kube_shared_limiter_reserve(struct mu_kube_shared_limiter *s,
                                       int64_t now_ns);
/* How many reservations were told to wait, and those waits summed (for
 * the metrics: muster's own limit, not the server, held them back; a
 * caller stopped while it waits is counted all the same). */
void mu_kube_shared_limiter_stats(struct mu_kube_shared_limiter *s,
                                  uint64_t *delayed, int64_t *delayed_ns);

struct mu_kube_opts {
    double qps;                 /* requests per second, <= 0: no limit */
    int burst;                  /* bucket size; < 1 means 1 */
    long timeout_ms;            /* whole request; 0: default */
    size_t max_body;            /* response cap; 0: MU_KUBE_MAX_BODY */
    const char *user_agent;     /* NULL: "muster" */
    struct mu_kube_clock clock; /* members NULL: real time */
    /* Optional. Called on the client's thread with one line, no newline. */
    void (*log)(void *ctx, const char *msg);
    void *log_ctx;
    /* Optional: a limiter shared with other clients, used instead of this
     * client's own qps/burst bucket (borrowed; must outlive the client). */
    struct mu_kube_shared_limiter *shared_limiter;
};

/*
 * Creates a client for cfg (copied; the caller keeps cfg). opts may be NULL
 * (no rate limit, default timeouts). Returns 0 and *out, or -ENOMEM or
 * -EINVAL (no server) with err.
 */
int mu_kube_new(const struct mu_kube_config *cfg,
                const struct mu_kube_opts *opts, struct mu_kube **out,
                struct mu_err *err) MU_WARN_UNUSED;
/* Frees k and closes its connections. NULL is a no-op. */
void mu_kube_free(struct mu_kube *k);

/*
 * A flag, owned by the caller, that interrupts a transfer in progress when
 * it becomes true (checked by libcurl's progress callback about once a
 * second and on every chunk): the call returns -ECANCELED. The flag may be
 * set from any thread. NULL removes it.
 */
void mu_kube_set_stop(struct mu_kube *k, const atomic_bool *stop);

/* Query parameters: an array ended by a member with name NULL. Names and
 * values are percent-encoded by the client. A NULL value skips the entry. */
struct mu_kube_param {
    const char *name;
    const char *value;
};

/*
 * Sends one request and reads the whole response.
 *   method        "GET", "POST", "PUT", "PATCH", "DELETE"
 *   path          API path starting with '/', without a query
 *   query         may be NULL
 *   body          borrowed; NULL sends no body
 *   content_type  for the body; NULL means "application/json"
 *   *http_status  the HTTP status (set whenever 0 is returned)
 *   *resp         the parsed JSON body (owned), or NULL when the body is
 *                 empty or (only for status >= 400) not JSON; resp may be
 *                 NULL if the caller does not want it
 * Waits for the rate limiter first. Returns 0 when a response arrived, even
 * an HTTP error (then err holds "METHOD PATH: CODE Reason: message"), or
 * a negative errno from the table above.
 */
int mu_kube_request(struct mu_kube *k, const char *method, const char *path,
                    const struct mu_kube_param *query, const json_t *body,
                    const char *content_type, long *http_status, json_t **resp,
                    struct mu_err *err) MU_WARN_UNUSED;

/*
 * The errno for an HTTP status (status_obj, the Status body, may be NULL):
 *   2xx -> 0             400 -> -EINVAL         401 -> -EACCES
 *   403 -> -EPERM        404 -> -ENOENT         405 -> -EOPNOTSUPP
 *   409 -> -EEXIST (reason AlreadyExists), else -EBUSY (Conflict)
 *   410 -> -ESTALE       422 -> -EINVAL         429 -> -EAGAIN
 *   504 -> -ETIMEDOUT    other 4xx -> -EPROTO   other 5xx -> -EIO
 */
int mu_kube_http_errno(long status, const json_t *status_obj);
/* Whether a call that returned rc surely did nothing on the server: it was
 * refused before it was carried out (400, 401, 403, 405, 422, 429) or
 * never sent (-ENOMEM, or -EINVAL for a bad argument). A timeout, a
 * transport failure or a 5xx may have been carried out: false. */
bool mu_kube_not_done(int rc);

/*
 * mu_kube_request() with HTTP errors mapped by mu_kube_http_errno(): 0 only
 * for 2xx. *resp (if resp is not NULL) is the parsed body on success.
 */
int mu_kube_call(struct mu_kube *k, const char *method, const char *path,
                 const struct mu_kube_param *query, const json_t *body,
                 const char *content_type, json_t **resp,
                 struct mu_err *err) MU_WARN_UNUSED;

#define MU_KUBE_MERGE_PATCH "application/merge-patch+json"

/* GET path. */
int mu_kube_get(struct mu_kube *k, const char *path,
                const struct mu_kube_param *query, json_t **resp,
                struct mu_err *err) MU_WARN_UNUSED;
/* POST obj to the collection path. */
int mu_kube_create(struct mu_kube *k, const char *path, const json_t *obj,
                   json_t **resp, struct mu_err *err) MU_WARN_UNUSED;
/* PUT obj at path (obj should carry metadata.resourceVersion). */
int mu_kube_replace(struct mu_kube *k, const char *path, const json_t *obj,
                    json_t **resp, struct mu_err *err) MU_WARN_UNUSED;
/* PATCH path with a JSON merge patch (RFC 7386). */
int mu_kube_merge_patch(struct mu_kube *k, const char *path,
                        const json_t *patch, json_t **resp,
                        struct mu_err *err) MU_WARN_UNUSED;
/* DELETE path; query may carry e.g. gracePeriodSeconds. */
int mu_kube_delete(struct mu_kube *k, const char *path,
                   const struct mu_kube_param *query, json_t **resp,
                   struct mu_err *err) MU_WARN_UNUSED;

/* PUT obj at path + "/status" (the status subresource). */
int mu_kube_status_replace(struct mu_kube *k, const char *path,
                           const json_t *obj, json_t **resp,
                           struct mu_err *err) MU_WARN_UNUSED;
/* PATCH path + "/status" with a merge patch. */
int mu_kube_status_patch(struct mu_kube *k, const char *path,
                         const json_t *patch, json_t **resp,
                         struct mu_err *err) MU_WARN_UNUSED;

/*
 * Binds pod namespace/name to node: POST
 * /api/v1/namespaces/NS/pods/NAME/binding with a v1 Binding (the path from
 * paths.h: NS and NAME percent-escaped). ns, name and node must not be
 * NULL or empty (-EINVAL, nothing sent). uid (may be NULL) is sent as
 * metadata.uid, which the server checks, so a pod deleted
 * and recreated under the same name is not bound by mistake (as
 * kube-scheduler's binder does). -EEXIST/-EBUSY (409) when already bound.
 */
int mu_kube_bind(struct mu_kube *k, const char *ns, const char *name,
                 const char *uid, const char *node,
                 struct mu_err *err) MU_WARN_UNUSED;

/* The object an event is about. */
struct mu_kube_objref {
    const char *api_version; /* "v1", "scheduling.volcano.sh/v1beta1" */
    const char *kind;        /* "Pod", "PodGroup" */
    const char *namespace;   /* NULL for cluster-scoped objects */
    const char *name;
    const char *uid; /* may be NULL */
};

/*
 * A core/v1 Event. It is created in the object's namespace ("default" for
 * cluster-scoped objects) with source.component "muster". name NULL means
 * "<object name>.<16 hex digits>" made unique per client from first_time
 * (like client-go's recorder).
 */
struct mu_kube_event {
    struct mu_kube_objref involved;
    const char *type;    /* "Normal" or "Warning" */
    const char *reason;  /* UpperCamelCase, e.g. "Unschedulable" */
    const char *message; /* human text */
    const char *name;    /* may be NULL, see above */
    time_t first_time;   /* wall-clock seconds (caller's clock) */
    time_t last_time;
    int count; /* < 1 is sent as 1 */
};

/* Builds the Event object that mu_kube_event_post() sends (owned).
 * seq makes generated names unique. Pure; exposed for tests. */
json_t *mu_kube_event_build(const struct mu_kube_event *ev, unsigned seq);

/* POST the event to /api/v1/namespaces/NS/events (paths.h; NS escaped). */
int mu_kube_event_post(struct mu_kube *k, const struct mu_kube_event *ev,
                       json_t **resp, struct mu_err *err) MU_WARN_UNUSED;

/* Formats t as RFC 3339 UTC ("2024-05-01T12:00:00Z") into buf of n >= 21
 * bytes; returns buf. */
char *mu_kube_time_text(time_t t, char *buf, size_t n);

/*
 * For watch.c: GET path?query streaming the body, asking for accept (the
 * Accept header; NULL: "application/json"). Every piece of a 2xx body
 * goes to on_data as it arrives, and mu_kube_content_type() tells what
 * the server sent; a non-zero return from on_data ends the transfer and
 * is returned as is. A body of an HTTP error is collected (up to
 * MU_KUBE_MAX_BODY) and returned in *resp as for mu_kube_request (NULL
 * when it is not JSON; the message is then the status alone).
 * timeout_ms bounds the whole transfer (0: none). Returns 0 when the
 * stream ended (status in *http_status), on_data's code, or -errno.
 */
int mu_kube_stream(struct mu_kube *k, const char *path,
                   const struct mu_kube_param *query, const char *accept,
                   long timeout_ms,
                   int (*on_data)(void *ctx, const char *p, size_t n),
                   void *ctx, long *http_status, json_t **resp,
                   struct mu_err *err) MU_WARN_UNUSED;
/* During an on_data call of mu_kube_stream: the response's Content-Type
 * ("" when the server sent none). */
const char *mu_kube_content_type(struct mu_kube *k);

#endif
