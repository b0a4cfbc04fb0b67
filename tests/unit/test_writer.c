/* The asynchronous API writer (src/kube/writer.h), against the fake API
 * server of the kube tests for the requests it sends, and with run
 * functions that block on a gate for ordering, concurrency, coalescing,
 * backpressure and shutdown. The client pool and shared limiter it relies
 * on are test_pool.c's; the requests that release a pod through it are
 * test_release.c's. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kube/writer.h"
#include "test_kube_fake.h"

static struct kf_server srv;
static bool srv_up;

static void setup(void)
{
    ck_assert_int_eq(kf_start(&srv), 0);
    srv_up = true;
}

static void teardown(void)
{
    if (srv_up)
        kf_stop(&srv);
    srv_up = false;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* A writer on the fake server (or, for run-only tests, any URL: clients
 * connect on their first request). */
static struct mu_writer *writer(int threads, size_t cap, void (*notify)(void *),
                                void *nctx)
{
    struct mu_kube_config cfg;
    struct mu_writer_opts o = {
        .threads = threads, .cap = cap, .notify = notify, .notify_ctx = nctx};
    struct mu_writer *w = NULL;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv_up ? srv.url : "http://127.0.0.1:9");
    cfg.token = mu_xstrdup("writer-token");
    ck_assert_msg(mu_writer_new(&cfg, &o, &w, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    return w;
}

/* A writer for run-only tests with at most background MU_WRITE_BACKGROUND
 * writes at once. */
static struct mu_writer *writer_bg(int threads, size_t cap, int background)
{
    struct mu_kube_config cfg;
    struct mu_writer_opts o = {
        .threads = threads, .cap = cap, .background = background};
    struct mu_writer *w = NULL;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup("http://127.0.0.1:9");
    cfg.token = mu_xstrdup("writer-token");
    ck_assert_msg(mu_writer_new(&cfg, &o, &w, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    return w;
}

/* ---------------------------------------------------- outcomes, shared -- */

#define MAXW 256

/* What the tests' run functions and done callbacks record. */
struct rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int order[MAXW]; /* ids in the order their run started */
    int norder;
    int running, running_max;
    bool gate_open; /* runs wait for it when they are told to */
    int done_rc[MAXW];
    int ndone[MAXW];
    char done_msg[MAXW][128];
    int notified;
};

static struct rec R;

static void rec_init(void)
{
    memset(&R, 0, sizeof(R));
    pthread_mutex_init(&R.mu, NULL);
    pthread_cond_init(&R.cv, NULL);
}

static void open_gate(void)
{
    pthread_mutex_lock(&R.mu);
    R.gate_open = true;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
}

/* ctx of a test write: its id and how its run behaves */
struct tw {
    int id;
    bool wait_gate; /* block until the gate opens */
    int sleep_ms;   /* then sleep */
    int rc;         /* and return this */
};

static struct tw tws[MAXW];

static int test_run(struct mu_kube *k, const struct mu_write *w, void *ctx,
                    struct mu_err *err)
{
    struct tw *t = ctx;

    (void)k;
    (void)w;
    pthread_mutex_lock(&R.mu);
    R.order[R.norder++] = t->id;
    R.running++;
    if (R.running > R.running_max)
        R.running_max = R.running;
    pthread_cond_broadcast(&R.cv);
    while (t->wait_gate && !R.gate_open)
        pthread_cond_wait(&R.cv, &R.mu);
    pthread_mutex_unlock(&R.mu);
    if (t->sleep_ms)
        sleep_ms(t->sleep_ms);
    pthread_mutex_lock(&R.mu);
    R.running--;
    pthread_mutex_unlock(&R.mu);
    if (t->rc < 0)
        return mu_err_set(err, t->rc, "test write %d failed", t->id);
    return 0;
}

static void test_done(void *ctx, int rc, const char *msg)
{
    struct tw *t = ctx;

    /* no lock: done calls are on the owner (test) thread */
    R.done_rc[t->id] = rc;
    R.ndone[t->id]++;
    snprintf(R.done_msg[t->id], sizeof(R.done_msg[t->id]), "%s", msg);
}

static void test_notify(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&R.mu);
    R.notified++;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
}

/* Submits test write id with key (flags), run behaviour as given. */
static int submit_tw(struct mu_writer *w, int id, const char *key,
                     unsigned flags, bool wait_gate, int sleep, int rc)
{
    struct mu_write wr = {.method = "PATCH",
                          .key = key,
                          .flags = flags,
                          .run = test_run,
                          .done = test_done};
    char path[64];

    tws[id] = (struct tw){id, wait_gate, sleep, rc};
    /* one object, one path */
    snprintf(path, sizeof(path), "/test/%s", key ? key : "-");
    wr.path = path;
    wr.ctx = &tws[id];
    return mu_writer_submit(w, &wr);
}

/* Waits (up to 5 s) until at least n runs have started. */
static void wait_started(int n)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    pthread_mutex_lock(&R.mu);
    while (R.norder < n)
        if (pthread_cond_timedwait(&R.cv, &R.mu, &ts))
            break;
    pthread_mutex_unlock(&R.mu);
    ck_assert_int_ge(R.norder, n);
}

/* ------------------------------------------------------------ requests -- */

START_TEST(test_writer_sends_the_request_and_reports_success)
{
    struct mu_writer *w;
    struct mu_write wr = {.method = "PATCH",
                          .path = "/api/v1/namespaces/a/pods/p",
                          .content_type = MU_KUBE_MERGE_PATCH,
                          .done = test_done};
    const struct kf_request *r;
    size_t failed = 99;
    json_t *got;

    rec_init();
    kf_reply_body(&srv, 200, "{\"kind\":\"Pod\"}");
    w = writer(2, 0, test_notify, NULL);
    tws[0] = (struct tw){0};
    wr.ctx = &tws[0];
    wr.body = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "a", "b");
    ck_assert_int_eq(mu_writer_submit(w, &wr), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_int_eq(R.notified, 1);
    ck_assert_int_eq(R.ndone[0], 0); /* only drain calls done */
    ck_assert_uint_eq(mu_writer_drain(w, &failed), 1);
    ck_assert_uint_eq(failed, 0);
    ck_assert_int_eq(R.ndone[0], 1);
    ck_assert_int_eq(R.done_rc[0], 0);
    ck_assert_str_eq(R.done_msg[0], "");
    ck_assert_uint_eq(kf_count(&srv), 1);
    r = kf_req(&srv, 0);
    ck_assert_str_eq(r->method, "PATCH");
    ck_assert_str_eq(r->path, "/api/v1/namespaces/a/pods/p");
    ck_assert_str_eq(r->content_type, "application/merge-patch+json");
    ck_assert_str_eq(r->authorization, "Bearer writer-token");
    got = json_loadb(r->body, r->body_len, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(got, "metadata"), "annotations"),
            "a")),
        "b");
    json_decref(got);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 0); /* reported once */
    mu_writer_free(w);
    ck_assert_int_eq(R.ndone[0], 1);
}
END_TEST

static char logged[512];
static int nlogged;

static void test_log(void *ctx, const char *msg)
{
    (void)ctx;
    snprintf(logged, sizeof(logged), "%s", msg);
    nlogged++;
}

START_TEST(test_writer_maps_http_errors_and_logs_fire_and_forget_failures)
{
    struct mu_kube_config cfg;
    struct mu_writer_opts o = {.threads = 1, .log = test_log};
    struct mu_writer *w = NULL;
    struct mu_err err;
    struct mu_write del = {.method = "DELETE",
                           .path = "/api/v1/namespaces/a/pods/gone",
                           .done = test_done};
    struct mu_write del_ok = {.method = "DELETE",
                              .path = "/api/v1/namespaces/a/pods/gone2",
                              .flags = MU_WRITE_GONE_OK};
    struct mu_write bad = {.method = "PATCH",
                           .path = "/api/v1/namespaces/a/pods/bad"};
    const char *st404 = "{\"kind\":\"Status\",\"code\":404,\"reason\":"
                        "\"NotFound\",\"message\":\"pods \\\"gone\\\" not "
                        "found\"}";
    size_t failed;

    rec_init();
    nlogged = 0;
    kf_reply_body(&srv, 404, st404);
    kf_reply_body(&srv, 404, st404);
    kf_reply_body(&srv, 422,
                  "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\","
                  "\"message\":\"bad patch\"}");
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_int_eq(mu_writer_new(&cfg, &o, &w, &err), 0);
    mu_kube_config_release(&cfg);
    tws[0] = (struct tw){0};
    del.ctx = &tws[0];
    /* one thread: sent in this order */
    ck_assert_int_eq(mu_writer_submit(w, &del), 0);
    ck_assert_int_eq(mu_writer_submit(w, &del_ok), 0);
    bad.body = json_object();
    ck_assert_int_eq(mu_writer_submit(w, &bad), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, &failed), 2); /* del, bad */
    ck_assert_uint_eq(failed, 2);
    ck_assert_int_eq(R.done_rc[0], -ENOENT);
    ck_assert_ptr_nonnull(strstr(R.done_msg[0], "404"));
    ck_assert_int_eq(nlogged, 1); /* bad only: del_ok was fine */
    ck_assert_ptr_nonnull(
        strstr(logged, "PATCH /api/v1/namespaces/a/pods/bad"));
    ck_assert_ptr_nonnull(strstr(logged, "bad patch"));
    mu_writer_free(w);
}
END_TEST

START_TEST(test_writer_posts_events_under_its_own_names)
{
    struct mu_writer *w;
    struct mu_kube_event ev = {
        .involved = {"scheduling.volcano.sh/v1beta1", "PodGroup", "team-a",
                     "train", "u1"},
        .type = "Normal",
        .reason = "Evict",
        .message = "m",
        .first_time = 1000,
    };
    const struct kf_request *r;
    json_t *got;
    char want[64];

    kf_reply_body(&srv, 201, "{}");
    w = writer(1, 0, NULL, NULL);
    ck_assert_int_eq(mu_writer_event(w, &ev), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 0); /* success, no done */
    r = kf_req(&srv, 0);
    ck_assert_str_eq(r->method, "POST");
    ck_assert_str_eq(r->path, "/api/v1/namespaces/team-a/events");
    got = json_loadb(r->body, r->body_len, 0, NULL);
    snprintf(want, sizeof(want), "train.%016llx",
             1000ULL * 1000000000ULL + MU_WRITER_EVENT_SEQ0);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(got, "metadata"), "name")),
                     want);
    ck_assert_str_eq(json_string_value(json_object_get(got, "reason")),
                     "Evict");
    json_decref(got);
    mu_writer_free(w);
}
END_TEST

/* The events path comes from paths.h: the namespace is one escaped
 * segment. */
START_TEST(test_writer_event_path_escapes_the_namespace)
{
    struct mu_writer *w;
    struct mu_kube_event ev = {
        .involved = {"v1", "Pod", "team a/x", "p", "u1"},
        .reason = "Evict",
        .message = "m",
        .first_time = 1000,
    };

    kf_reply_body(&srv, 201, "{}");
    w = writer(1, 0, NULL, NULL);
    ck_assert_int_eq(mu_writer_event(w, &ev), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 0);
    ck_assert_uint_eq(kf_count(&srv), 1);
    ck_assert_str_eq(kf_req(&srv, 0)->path,
                     "/api/v1/namespaces/team%20a%2Fx/events");
    mu_writer_free(w);
}
END_TEST

/* ------------------------------------------------------------ ordering -- */

START_TEST(test_writer_keeps_one_objects_writes_in_order_one_at_a_time)
{
    struct mu_writer *w;
    int n = 40;

    rec_init();
    w = writer(4, 0, NULL, NULL);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(submit_tw(w, i, "pod/a", 0, false, i % 3, 0), 0);
    ck_assert_int_eq(mu_writer_flush(w, 10000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), (size_t)n);
    ck_assert_int_eq(R.norder, n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(R.order[i], i);
        ck_assert_int_eq(R.ndone[i], 1);
    }
    ck_assert_int_eq(R.running_max, 1);
    mu_writer_free(w);
}
END_TEST

START_TEST(test_writer_runs_other_objects_while_one_is_blocked)
{
    struct mu_writer *w;

    rec_init();
    w = writer(3, 0, NULL, NULL);
    /* a blocked write of pod/a holds back a's next write, not b's or c's */
    ck_assert_int_eq(submit_tw(w, 0, "pod/a", 0, true, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 1, "pod/a", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 2, "pod/b", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 3, "pod/c", 0, false, 0, 0), 0);
    wait_started(3);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 3); /* 0, 2, 3 in some order; not 1 */
    for (int i = 0; i < 3; i++)
        ck_assert_int_ne(R.order[i], 1);
    pthread_mutex_unlock(&R.mu);
    ck_assert_int_eq(mu_writer_flush(w, 100), -ETIMEDOUT);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_int_eq(R.order[3], 1);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 4);
    mu_writer_free(w);
}
END_TEST

START_TEST(test_writer_sends_different_objects_concurrently)
{
    struct mu_writer *w;

    rec_init();
    w = writer(4, 0, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        char key[16];

        snprintf(key, sizeof(key), "pod/%d", i);
        ck_assert_int_eq(submit_tw(w, i, key, 0, true, 0, 0), 0);
    }
    wait_started(4); /* all four in flight at once, or this times out */
    ck_assert_int_eq(R.running_max, 4);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    mu_writer_free(w);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(R.ndone[i], 1);
}
END_TEST

START_TEST(test_writer_sends_urgent_writes_first_but_never_before_their_key)
{
    struct mu_writer *w;

    rec_init();
    w = writer(1, 0, NULL, NULL);
    /* 0 blocks the only worker; then a burst, then urgent writes */
    ck_assert_int_eq(submit_tw(w, 0, "k/0", 0, true, 0, 0), 0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(w, 1, "k/1", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 2, "k/2", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 3, "k/3", MU_WRITE_URGENT, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 4, "k/4", MU_WRITE_URGENT, false, 0, 0), 0);
    /* k/2 has a queued write that is not urgent: 5 waits behind it, and 6
     * (k/2 again, urgent) behind 5 */
    ck_assert_int_eq(submit_tw(w, 5, "k/2", MU_WRITE_URGENT, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 6, "k/2", MU_WRITE_URGENT, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 7, "k/7", MU_WRITE_URGENT, false, 0, 0), 0);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 8);
    ck_assert_int_eq(R.norder, 8);
    {
        static const int want[] = {0, 3, 4, 7, 1, 2, 5, 6};

        for (int i = 0; i < 8; i++)
            ck_assert_msg(R.order[i] == want[i], "position %d: %d, not %d",
                          i, R.order[i], want[i]);
    }
    mu_writer_free(w);
}
END_TEST

/* At most opts.background writes flagged MU_WRITE_BACKGROUND run at once:
 * the other workers pass over the queued ones and take the writes behind
 * them; when one ends, the next background write goes. */
START_TEST(test_writer_sends_few_background_writes_at_once)
{
    struct mu_writer *w;

    rec_init();
    w = writer_bg(4, 0, 2);
    /* four status writes first (blocked while they run), then two that
     * are not background */
    for (int i = 0; i < 4; i++) {
        char key[16];

        snprintf(key, sizeof(key), "pg/%d", i);
        ck_assert_int_eq(
            submit_tw(w, i, key, MU_WRITE_BACKGROUND, true, 0, 0), 0);
    }
    ck_assert_int_eq(submit_tw(w, 4, "pod/a", 0, true, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 5, "pod/b", 0, true, 0, 0), 0);
    wait_started(4);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 4); /* 0, 1, 4, 5: not a third status */
    for (int i = 0; i < 4; i++)
        ck_assert_msg(R.order[i] != 2 && R.order[i] != 3,
                      "status %d ran beside two others", R.order[i]);
    ck_assert_int_eq(R.running_max, 4);
    pthread_mutex_unlock(&R.mu);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 6);
    ck_assert_int_eq(R.norder, 6);
    ck_assert_msg((R.order[4] == 2 && R.order[5] == 3) ||
                      (R.order[4] == 3 && R.order[5] == 2),
                  "the waiting statuses ran last");
    mu_writer_free(w);
}
END_TEST

/* The cap changed on a running writer: raised, idle workers take the
 * background writes that wait at once; n < 1 sets the default
 * (MU_WRITER_BACKGROUND, 8); lowered below what runs, no new one starts
 * until fewer run. */
START_TEST(test_writer_background_cap_can_be_raised_and_lowered)
{
    struct mu_writer *w;

    rec_init();
    w = writer_bg(4, 0, 1);
    for (int i = 0; i < 4; i++) {
        char key[16];

        snprintf(key, sizeof(key), "pg/%d", i);
        ck_assert_int_eq(
            submit_tw(w, i, key, MU_WRITE_BACKGROUND, true, 0, 0), 0);
    }
    wait_started(1);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 1);
    pthread_mutex_unlock(&R.mu);
    mu_writer_set_background(w, 3);
    wait_started(3);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 3); /* three, not the fourth */
    pthread_mutex_unlock(&R.mu);
    mu_writer_set_background(w, 0); /* the default, 8: the fourth goes */
    wait_started(4);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 4);
    mu_writer_free(w);

    /* three running under a cap of 4, lowered to 2: a fourth waits */
    rec_init();
    w = writer_bg(4, 0, 4);
    for (int i = 0; i < 3; i++) {
        char key[16];

        snprintf(key, sizeof(key), "pg/%d", i);
        ck_assert_int_eq(
            submit_tw(w, i, key, MU_WRITE_BACKGROUND, true, 0, 0), 0);
    }
    wait_started(3);
    mu_writer_set_background(w, 2);
    ck_assert_int_eq(submit_tw(w, 3, "pg/3", MU_WRITE_BACKGROUND, true, 0, 0),
                     0);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 3);
    pthread_mutex_unlock(&R.mu);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 4);
    mu_writer_free(w);
}
END_TEST

/* --------------------------------------------------------------- gate -- */

static atomic_bool may_write;

static bool gate_fn(void *ctx)
{
    (void)ctx;
    return atomic_load(&may_write);
}

/* A closed gate refuses submits with -EPERM, and a write queued while it
 * was open completes with -EPERM, unsent, once the gate closes before a
 * worker takes it (muster serve's "only the leader writes"). */
START_TEST(test_writer_gate_refuses_and_fails_queued_writes)
{
    struct mu_kube_config cfg;
    struct mu_writer_opts o = {.threads = 1, .gate = gate_fn};
    struct mu_writer *w = NULL;
    struct mu_err err = {{0}};

    rec_init();
    atomic_store(&may_write, true);
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup("http://127.0.0.1:9");
    ck_assert_msg(mu_writer_new(&cfg, &o, &w, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    ck_assert_int_eq(submit_tw(w, 0, "k/0", 0, true, 0, 0), 0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(w, 1, "k/1", 0, false, 0, 0), 0);
    atomic_store(&may_write, false);
    ck_assert_int_eq(submit_tw(w, 2, "k/2", 0, false, 0, 0), -EPERM);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 2);
    ck_assert_int_eq(R.done_rc[0], 0);
    ck_assert_int_eq(R.done_rc[1], -EPERM);
    ck_assert_int_eq(R.norder, 1); /* 1 never ran */
    ck_assert_int_eq(R.ndone[2], 0);
    mu_writer_free(w);
}
END_TEST

/* ---------------------------------------------------------- coalescing -- */

START_TEST(test_writer_coalesces_queued_state_writes_only)
{
    struct mu_writer *w;
    struct mu_writer_stats st;

    rec_init();
    w = writer(1, 0, NULL, NULL);
    /* 0 runs and blocks the only worker; the rest wait in the queue */
    ck_assert_int_eq(submit_tw(w, 0, "pg/x", MU_WRITE_COALESCE, true, 0, 0), 0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(w, 1, "pg/x", MU_WRITE_COALESCE, false, 0, 0),
                     0);
    ck_assert_int_eq(submit_tw(w, 2, "pg/y", MU_WRITE_COALESCE, false, 0, 0),
                     0);
    ck_assert_int_eq(submit_tw(w, 3, "pg/x", MU_WRITE_COALESCE, false, 0, 0),
                     0); /* replaces 1 */
    ck_assert_int_eq(submit_tw(w, 4, "pg/x", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 5, "pg/x", MU_WRITE_COALESCE, false, 0, 0),
                     0); /* 4 is not coalescable: 5 queues behind it */
    mu_writer_stats(w, &st);
    ck_assert_uint_eq(st.coalesced, 1);
    ck_assert_uint_eq(st.queued, 4);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 6);
    /* sent: 0, then 3 in 1's place (before y), y, 4, 5 */
    ck_assert_int_eq(R.norder, 5);
    ck_assert_int_eq(R.order[0], 0);
    ck_assert_int_eq(R.order[1], 3);
    ck_assert_int_eq(R.order[2], 2);
    ck_assert_int_eq(R.order[3], 4);
    ck_assert_int_eq(R.order[4], 5);
    ck_assert_int_eq(R.done_rc[1], -ECANCELED);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(R.ndone[i], 1);
    mu_writer_free(w);
}
END_TEST

/* Submits a PATCH of pods/x with body (taken) and flags, done -> tws[id]. */
static void submit_patch(struct mu_writer *w, int id, const char *body,
                         unsigned flags)
{
    struct mu_write wr = {.method = "PATCH",
                          .path = "/api/v1/namespaces/a/pods/x/status",
                          .key = "pod/x",
                          .content_type = MU_KUBE_MERGE_PATCH,
                          .flags = flags,
                          .done = test_done};

    wr.body = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(wr.body);
    tws[id] = (struct tw){.id = id};
    wr.ctx = &tws[id];
    ck_assert_int_eq(mu_writer_submit(w, &wr), 0);
}

static void assert_body(int i, const char *want)
{
    const struct kf_request *r = kf_req(&srv, i);
    json_t *got = json_loadb(r->body, r->body_len, 0, NULL);
    json_t *w = json_loads(want, 0, NULL);

    ck_assert_msg(got && w && json_equal(got, w), "request %d: %.*s", i,
                  (int)r->body_len, r->body);
    json_decref(got);
    json_decref(w);
}

START_TEST(test_writer_folds_queued_merge_patches_into_one)
{
    struct mu_writer *w;

    rec_init();
    for (int i = 0; i < 5; i++)
        kf_reply_body(&srv, 200, "{}");
    w = writer(1, 0, NULL, NULL);
    /* 0 holds pod/x's turn; the diffs queue behind it */
    ck_assert_int_eq(submit_tw(w, 0, "pod/x", 0, true, 0, 0), 0);
    wait_started(1);
    submit_patch(w, 1, "{\"status\":{\"a\":1,\"s\":{\"x\":1},\"b\":2}}",
                 MU_WRITE_MERGE);
    submit_patch(w, 2, "{\"status\":{\"s\":{\"y\":2},\"b\":null}}",
                 MU_WRITE_MERGE);
    submit_patch(w, 3, "{\"status\":{\"t\":null}}", MU_WRITE_MERGE);
    /* t deleted, then set to an object: no one merge patch says that */
    submit_patch(w, 4, "{\"status\":{\"t\":{\"z\":3}}}", MU_WRITE_MERGE);
    /* not flagged: never folded */
    submit_patch(w, 5, "{\"status\":{\"c\":5}}", 0);
    /* u set to a string, then to an object: not one merge patch either */
    submit_patch(w, 6, "{\"status\":{\"u\":\"v\"}}", MU_WRITE_MERGE);
    submit_patch(w, 7, "{\"status\":{\"u\":{\"w\":1}}}", MU_WRITE_MERGE);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 8);
    ck_assert_uint_eq(kf_count(&srv), 5);
    assert_body(0, "{\"status\":{\"a\":1,\"s\":{\"x\":1,\"y\":2},"
                   "\"b\":null,\"t\":null}}");
    assert_body(1, "{\"status\":{\"t\":{\"z\":3}}}");
    assert_body(2, "{\"status\":{\"c\":5}}");
    assert_body(3, "{\"status\":{\"u\":\"v\"}}");
    assert_body(4, "{\"status\":{\"u\":{\"w\":1}}}");
    ck_assert_int_eq(R.done_rc[1], -ECANCELED);
    ck_assert_int_eq(R.done_rc[2], -ECANCELED);
    ck_assert_int_eq(R.done_rc[3], 0);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(R.ndone[i], 1);
    mu_writer_free(w);
}
END_TEST

/* ------------------------------------------------------ bounds, errors -- */

struct submitter {
    struct mu_writer *w;
    atomic_bool done;
    int rc;
};

static void *submit_main(void *arg)
{
    struct submitter *s = arg;

    s->rc = submit_tw(s->w, 9, "k/9", 0, false, 0, 0);
    atomic_store(&s->done, true);
    return NULL;
}

START_TEST(test_writer_submit_blocks_while_the_queue_is_full)
{
    struct submitter s = {0};
    struct mu_writer_stats st;
    pthread_t th;

    rec_init();
    s.w = writer(1, 2, NULL, NULL);
    ck_assert_uint_eq(mu_writer_room(s.w), 2);
    ck_assert_int_eq(submit_tw(s.w, 0, "k/0", 0, true, 0, 0), 0);
    wait_started(1); /* the worker holds 0; the queue is empty */
    ck_assert_uint_eq(mu_writer_room(s.w), 2); /* being sent is not queued */
    ck_assert_int_eq(submit_tw(s.w, 1, "k/1", 0, false, 0, 0), 0);
    ck_assert_uint_eq(mu_writer_room(s.w), 1);
    ck_assert_int_eq(submit_tw(s.w, 2, "k/2", 0, false, 0, 0), 0);
    atomic_init(&s.done, false);
    ck_assert_int_eq(pthread_create(&th, NULL, submit_main, &s), 0);
    sleep_ms(100);
    ck_assert(!atomic_load(&s.done)); /* full: it waits */
    mu_writer_stats(s.w, &st);
    ck_assert_uint_eq(st.queued, 2);
    ck_assert_uint_eq(st.running, 1);
    ck_assert_uint_eq(mu_writer_room(s.w), 0); /* what status reads */
    open_gate();
    pthread_join(th, NULL);
    ck_assert_int_eq(s.rc, 0);
    ck_assert_int_eq(mu_writer_flush(s.w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(s.w, NULL), 4);
    mu_writer_stats(s.w, &st);
    ck_assert_uint_eq(st.queued_max, 2);
    ck_assert_uint_eq(st.submitted, 4);
    mu_writer_free(s.w);
}
END_TEST

/* A write queued behind a background write of its own object waits with
 * it under the cap: the object's writes still go in order. */
START_TEST(test_writer_keeps_one_objects_order_under_the_background_cap)
{
    struct mu_writer *w;

    rec_init();
    w = writer_bg(3, 0, 1);
    ck_assert_int_eq(submit_tw(w, 0, "pg/0", MU_WRITE_BACKGROUND, true, 0, 0),
                     0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(w, 1, "pg/1", MU_WRITE_BACKGROUND, false, 0, 0),
                     0);
    ck_assert_int_eq(submit_tw(w, 2, "pg/1", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 3, "pod/a", 0, false, 0, 0), 0);
    wait_started(2);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 2); /* 0 and 3: not 2 before 1 */
    ck_assert_int_eq(R.order[1], 3);
    pthread_mutex_unlock(&R.mu);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 4);
    ck_assert_int_eq(R.order[2], 1);
    ck_assert_int_eq(R.order[3], 2);
    mu_writer_free(w);
}
END_TEST

/* A submitter waiting for room lifts the background cap: the queued
 * statuses go out beside the one that holds the cap, and the write that
 * waited is queued and sent while that one still runs. */
START_TEST(test_writer_full_queue_lifts_the_background_cap)
{
    struct submitter s = {0};
    pthread_t th;

    rec_init();
    s.w = writer_bg(3, 2, 1);
    ck_assert_int_eq(submit_tw(s.w, 0, "pg/0", MU_WRITE_BACKGROUND, true, 0,
                               0), 0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(s.w, 1, "pg/1", MU_WRITE_BACKGROUND, false, 0,
                               0), 0);
    ck_assert_int_eq(submit_tw(s.w, 2, "pg/2", MU_WRITE_BACKGROUND, false, 0,
                               0), 0);
    sleep_ms(50);
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.norder, 1); /* the cap holds 1 and 2 back */
    pthread_mutex_unlock(&R.mu);
    ck_assert_uint_eq(mu_writer_room(s.w), 0);
    atomic_init(&s.done, false);
    ck_assert_int_eq(pthread_create(&th, NULL, submit_main, &s), 0);
    /* it gets in while 0 still holds its worker (without the lift it
     * waits for the gate: wait_started times out), and goes out */
    wait_started(3);
    pthread_join(th, NULL);
    ck_assert(atomic_load(&s.done));
    ck_assert_int_eq(s.rc, 0);
    ck_assert_int_eq(mu_writer_flush(s.w, 100), -ETIMEDOUT); /* 0 runs */
    pthread_mutex_lock(&R.mu);
    ck_assert_int_eq(R.order[0], 0);
    ck_assert(R.order[1] == 9 || R.order[2] == 9 || R.order[3] == 9);
    pthread_mutex_unlock(&R.mu);
    open_gate();
    ck_assert_int_eq(mu_writer_flush(s.w, 5000), 0);
    ck_assert_uint_eq(mu_writer_drain(s.w, NULL), 4);
    mu_writer_free(s.w);
}
END_TEST

static void *submit_urgent_main(void *arg)
{
    struct submitter *s = arg;

    /* the same object as the fire-and-forget write queued before it */
    s->rc = submit_tw(s->w, 9, "pod/x", MU_WRITE_URGENT, false, 0, 0);
    atomic_store(&s->done, true);
    return NULL;
}

/* An urgent write that waited for room behind a queued write to its own
 * object goes out after it and completes. (Before it goes, the writer
 * looks that queued write up again: it may have been sent and freed during
 * the wait. This test cannot force that interleaving; helper-17 saw it
 * under ASan with a delayed server.) */
START_TEST(test_writer_urgent_submit_after_waiting_for_room)
{
    struct submitter s = {0};
    struct mu_write ff = {.method = "DELETE",
                          .path = "/api/v1/namespaces/a/pods/x",
                          .key = "pod/x"};
    pthread_t th;

    rec_init();
    kf_reply_body(&srv, 200, "{}");
    s.w = writer(1, 1, NULL, NULL);
    ck_assert_int_eq(submit_tw(s.w, 0, "k/0", 0, true, 0, 0), 0);
    wait_started(1);
    ck_assert_int_eq(mu_writer_submit(s.w, &ff), 0); /* fills the queue */
    atomic_init(&s.done, false);
    ck_assert_int_eq(pthread_create(&th, NULL, submit_urgent_main, &s), 0);
    sleep_ms(50);
    ck_assert(!atomic_load(&s.done)); /* full: it waits */
    open_gate();
    pthread_join(th, NULL);
    ck_assert_int_eq(s.rc, 0);
    ck_assert_int_eq(mu_writer_flush(s.w, 5000), 0);
    ck_assert_uint_eq(kf_count(&srv), 1); /* the DELETE */
    ck_assert_uint_eq(mu_writer_drain(s.w, NULL), 2); /* 0 and 9 */
    ck_assert_int_eq(R.ndone[9], 1);
    ck_assert_int_eq(R.done_rc[9], 0);
    mu_writer_free(s.w);
}
END_TEST

START_TEST(test_writer_refuses_bad_writes_without_calling_done)
{
    struct mu_writer *w;
    json_t *body = json_object();
    struct mu_write nopath = {
        .method = "PATCH", .body = body, .done = test_done};
    struct mu_write nomethod = {.path = "/x", .done = test_done};

    rec_init();
    w = writer(1, 0, NULL, NULL);
    json_incref(body);
    tws[0] = (struct tw){0};
    nopath.ctx = nomethod.ctx = &tws[0];
    ck_assert_int_eq(mu_writer_submit(w, &nopath), -EINVAL);
    ck_assert_int_eq(body->refcount, 1); /* stolen and released */
    json_decref(body);
    ck_assert_int_eq(mu_writer_submit(w, &nomethod), -EINVAL);
    mu_writer_free(w);
    ck_assert_int_eq(R.ndone[0], 0);
}
END_TEST

/* Probes the writer with writes (id 20, cancelled later) until it refuses
 * them, then opens the gate. */
static void *open_when_stopping(void *arg)
{
    struct mu_writer *w = arg;

    while (submit_tw(w, 20, "probe", 0, false, 0, 0) == 0)
        sleep_ms(5);
    open_gate();
    return NULL;
}

START_TEST(test_writer_free_cancels_what_was_not_sent_and_reports_everything)
{
    struct mu_writer *w;
    pthread_t opener;

    rec_init();
    w = writer(1, 0, NULL, NULL);
    ck_assert_int_eq(submit_tw(w, 0, "k/0", 0, true, 0, 0), 0);
    wait_started(1);
    ck_assert_int_eq(submit_tw(w, 1, "k/1", 0, false, 0, 0), 0);
    ck_assert_int_eq(submit_tw(w, 2, "k/2", 0, false, 0, -EIO), 0);
    /* free waits for 0 (in flight): its gate opens only once the writer
     * refuses new writes, i.e. once free has begun */
    ck_assert_int_eq(pthread_create(&opener, NULL, open_when_stopping, w), 0);
    mu_writer_free(w);
    pthread_join(opener, NULL);
    ck_assert_int_eq(R.ndone[0], 1);
    ck_assert_int_eq(R.done_rc[0], 0);
    ck_assert_int_eq(R.ndone[1], 1);
    ck_assert_int_eq(R.done_rc[1], -ECANCELED);
    ck_assert_int_eq(R.ndone[2], 1);
    ck_assert_int_eq(R.done_rc[2], -ECANCELED); /* never ran */
    ck_assert_int_eq(R.norder, 1);
}
END_TEST

START_TEST(test_writer_new_fails_cleanly_without_a_server)
{
    struct mu_kube_config cfg;
    struct mu_writer *w = (struct mu_writer *)&cfg;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    ck_assert_int_eq(mu_writer_new(&cfg, NULL, &w, &err), -EINVAL);
    ck_assert_ptr_null(w);
    ck_assert_ptr_nonnull(strstr(err.msg, "no server"));
}
END_TEST

START_TEST(test_writer_notifies_once_per_batch_of_completions)
{
    struct mu_writer *w;

    rec_init();
    w = writer(2, 0, test_notify, NULL);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(submit_tw(w, i, NULL, 0, false, 0, 0), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_int_eq(R.notified, 1); /* nothing drained in between */
    ck_assert_uint_eq(mu_writer_drain(w, NULL), 10);
    ck_assert_int_eq(submit_tw(w, 10, NULL, 0, false, 0, 0), 0);
    ck_assert_int_eq(mu_writer_flush(w, 5000), 0);
    ck_assert_int_eq(R.notified, 2);
    mu_writer_free(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("writer");
    TCase *tc = tcase_create("requests");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_writer_sends_the_request_and_reports_success);
    tcase_add_test(
        tc, test_writer_maps_http_errors_and_logs_fire_and_forget_failures);
    tcase_add_test(tc, test_writer_posts_events_under_its_own_names);
    tcase_add_test(tc, test_writer_event_path_escapes_the_namespace);
    tcase_add_test(
        tc, test_writer_sends_urgent_writes_first_but_never_before_their_key);
    tcase_add_test(tc, test_writer_folds_queued_merge_patches_into_one);
    tcase_add_test(tc, test_writer_gate_refuses_and_fails_queued_writes);
    tcase_add_test(tc, test_writer_urgent_submit_after_waiting_for_room);
    suite_add_tcase(s, tc);
    tc = tcase_create("queue");
    tcase_add_test(tc,
                   test_writer_keeps_one_objects_writes_in_order_one_at_a_time);
    tcase_add_test(tc, test_writer_runs_other_objects_while_one_is_blocked);
    tcase_add_test(tc, test_writer_sends_different_objects_concurrently);
    tcase_add_test(tc, test_writer_sends_few_background_writes_at_once);
    tcase_add_test(tc, test_writer_full_queue_lifts_the_background_cap);
    tcase_add_test(tc, test_writer_background_cap_can_be_raised_and_lowered);
    tcase_add_test(tc,
                   test_writer_keeps_one_objects_order_under_the_background_cap);
    tcase_add_test(tc, test_writer_coalesces_queued_state_writes_only);
    tcase_add_test(tc, test_writer_submit_blocks_while_the_queue_is_full);
    tcase_add_test(tc, test_writer_refuses_bad_writes_without_calling_done);
    tcase_add_test(
        tc, test_writer_free_cancels_what_was_not_sent_and_reports_everything);
    tcase_add_test(tc, test_writer_new_fails_cleanly_without_a_server);
    tcase_add_test(tc, test_writer_notifies_once_per_batch_of_completions);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
