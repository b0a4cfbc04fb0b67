/*
 * The /bind barrier and mu_ext_bind, with a fake binder that records every
 * call (bind, unbind, check, report) under a mutex, and keeps which pods
 * it bound, so that the read-back (fake_check) answers as an apiserver
 * would.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "api/json.h"
#include "extender/extender.h"
#include "extender/internal.h"
#include "extender/relbind.h"

#define MAX_CALLS 4096

struct call {
    char op; /* 'b' bind, 'u' unbind */
    char ns[64], name[64];
    char uid[64];
    char node[64];
};

struct fake {
    pthread_mutex_t mu;
    struct call calls[MAX_CALLS];
    int n_calls;
    const char *fail_uid; /* bind of this uid fails */
    int fail_rc;          /* -ETIMEDOUT, -EIO (a 500), -EBUSY (a 409): maybe
                             bound; else refused */
    int fail_times;       /* fails that many times, then binds (0: always) */
    int fails;            /* failures so far */
    bool through;         /* a failing bind binds the pod all the same (its
                             reply is lost) */
    bool gone;            /* the read-back finds the pod gone */
    char bound[512][2][64]; /* uid, node of every pod bound */
    int n_bound;
    int bind_delay_ms;
    const char *slow_uid; /* bind of this uid takes slow_ms more */
    int slow_ms;
    int in_bind, max_in_bind; /* concurrent binds seen */
    int n_reports, n_reports_ok, n_reports_timed_out;
    char last_release[128];
    char last_detail[1024];
};

static struct fake fk;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void record(char op, const char *ns, const char *name,
                   const char *uid, const char *node)
{
    struct call *c;

    pthread_mutex_lock(&fk.mu);
    ck_assert_int_lt(fk.n_calls, MAX_CALLS);
    c = &fk.calls[fk.n_calls++];
    c->op = op;
    snprintf(c->ns, sizeof(c->ns), "%s", ns);
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->uid, sizeof(c->uid), "%s", uid);
    snprintf(c->node, sizeof(c->node), "%s", node ? node : "");
    pthread_mutex_unlock(&fk.mu);
}

/* The node the fake bound uid to, or NULL. */
static const char *bound_on(const char *uid)
{
    const char *node = NULL;

    pthread_mutex_lock(&fk.mu);
    for (int i = 0; i < fk.n_bound; i++)
        if (!strcmp(fk.bound[i][0], uid))
            node = fk.bound[i][1];
    pthread_mutex_unlock(&fk.mu);
    return node;
}

static void set_bound(const char *uid, const char *node)
{
    pthread_mutex_lock(&fk.mu);
    ck_assert_int_lt(fk.n_bound, 512);
    snprintf(fk.bound[fk.n_bound][0], 64, "%s", uid);
    snprintf(fk.bound[fk.n_bound][1], 64, "%s", node);
    fk.n_bound++;
    pthread_mutex_unlock(&fk.mu);
}

static int fake_bind(void *ctx, const char *ns, const char *name,
                     const char *uid, const char *node, struct mu_err *err)
{
    ck_assert_ptr_eq(ctx, &fk);
    pthread_mutex_lock(&fk.mu);
    fk.in_bind++;
    if (fk.in_bind > fk.max_in_bind)
        fk.max_in_bind = fk.in_bind;
    pthread_mutex_unlock(&fk.mu);
    if (fk.bind_delay_ms)
        sleep_ms(fk.bind_delay_ms);
    if (fk.slow_uid && !strcmp(uid, fk.slow_uid))
        sleep_ms(fk.slow_ms);
    pthread_mutex_lock(&fk.mu);
    fk.in_bind--;
    pthread_mutex_unlock(&fk.mu);
    record('b', ns, name, uid, node);
    if (fk.fail_uid && !strcmp(uid, fk.fail_uid) &&
        (!fk.fail_times || fk.fails < fk.fail_times)) {
        fk.fails++;
        if (fk.through)
            set_bound(uid, node);
        if (fk.fail_rc == -ETIMEDOUT)
            return mu_err_set(err, -ETIMEDOUT, "binding %s timed out", name);
        if (fk.fail_rc == -EIO)
            return mu_err_set(err, -EIO, "500 Internal Server Error");
        if (fk.fail_rc == -EBUSY)
            return mu_err_set(err, -EBUSY, "409 Conflict");
        return mu_err_set(err, -EPERM, "pods \"%s\" is forbidden", name);
    }
    if (bound_on(uid))
        return mu_err_set(err, -EBUSY, "409 Conflict: pod %s is already "
                                       "assigned to node %s", name,
                          bound_on(uid));
    set_bound(uid, node);
    return 0;
}

static int fake_check(void *ctx, const char *ns, const char *name,
                      const char *uid, struct mu_bind_seen *out,
                      struct mu_err *err)
{
    const char *node = bound_on(uid);

    record('c', ns, name, uid, NULL);
    if (fk.gone)
        out->state = MU_BIND_SEEN_GONE;
    else if (node) {
        out->state = MU_BIND_SEEN_BOUND;
        snprintf(out->node, sizeof(out->node), "%s", node);
    } else
        out->state = MU_BIND_SEEN_UNBOUND;
    return 0;
}

static int fake_unbind(void *ctx, const char *ns, const char *name,
                       const char *uid, struct mu_err *err)
{
    record('u', ns, name, uid, NULL);
    return 0;
}

static void fake_report(void *ctx, const struct mu_bind_report *r)
{
    pthread_mutex_lock(&fk.mu);
    fk.n_reports++;
    fk.n_reports_ok += r->ok;
    fk.n_reports_timed_out += r->timed_out;
    snprintf(fk.last_release, sizeof(fk.last_release), "%s", r->release);
    snprintf(fk.last_detail, sizeof(fk.last_detail), "%s",
             r->detail ? r->detail : "");
    pthread_mutex_unlock(&fk.mu);
}

static void setup(void)
{
    memset(&fk, 0, sizeof(fk));
    pthread_mutex_init(&fk.mu, NULL);
}

static int count(char op)
{
    int n = 0;

    for (int i = 0; i < fk.n_calls; i++)
        n += fk.calls[i].op == op;
    return n;
}

static json_t *bind_args(const char *name, const char *uid, const char *node)
{
    return json_pack("{s:s,s:s,s:s,s:s}", "PodName", name, "PodNamespace",
                     "team-a", "PodUID", uid, "Node", node);
}

static const char *error_of(const json_t *r)
{
    return json_string_value(json_object_get(r, "Error"));
}

/* One member's thread: waits delay_ms, then binds through mu_ext_bind. */
struct member {
    pthread_t t;
    struct mu_barrier *b;
    const struct mu_view *v;
    char name[32], uid[32], node[32];
    int delay_ms;
    char error[1024];
    int64_t returned_ms;
};

static void *member_main(void *arg)
{
    struct member *m = arg;
    json_t *a = bind_args(m->name, m->uid, m->node), *r;

    if (m->delay_ms)
        sleep_ms(m->delay_ms);
    r = mu_ext_bind(m->b, m->v, a);
    snprintf(m->error, sizeof(m->error), "%s", error_of(r));
    m->returned_ms = now_ms();
    json_decref(r);
    json_decref(a);
    return NULL;
}

/* A view with gang g: members g-0 .. g-(n-1) reserved on node-<g>-<i>,
 * release "<g>#1" of batch_size n; controlled (a controller makes them
 * again) or bare. */
static void add_gang_of(struct mu_view *v, const char *g, int n,
                        bool controlled)
{
    for (int i = 0; i < n; i++) {
        char uid[32], node[32], name[32], rel[48];

        snprintf(uid, sizeof(uid), "%s-%d", g, i);
        snprintf(name, sizeof(name), "%s-w%d", g, i);
        snprintf(node, sizeof(node), "node-%s-%d", g, i);
        snprintf(rel, sizeof(rel), "team-a/%s#1", g);
        mu_view_add_pod(v, uid, "team-a", name, g, node, rel, n, NULL);
        mu_view_set_controlled(v, uid, controlled);
    }
}

static void add_gang(struct mu_view *v, const char *g, int n)
{
    add_gang_of(v, g, n, true);
}

static void start_member(struct member *m, struct mu_barrier *b,
                         const struct mu_view *v, const char *g, int i,
                         int delay_ms)
{
    memset(m, 0, sizeof(*m));
    m->b = b;
    m->v = v;
    m->delay_ms = delay_ms;
    snprintf(m->uid, sizeof(m->uid), "%s-%d", g, i);
    snprintf(m->name, sizeof(m->name), "%s-w%d", g, i);
    snprintf(m->node, sizeof(m->node), "node-%s-%d", g, i);
    ck_assert_int_eq(pthread_create(&m->t, NULL, member_main, m), 0);
}

/* Slow runs (valgrind, a loaded machine) stretch every duration by
 * MU_TEST_TIME_SCALE (the valgrind test setup sets it). */
static int64_t scaled(int64_t ms)
{
    const char *e = getenv("MU_TEST_TIME_SCALE");
    long f = e ? strtol(e, NULL, 10) : 1;

    return ms * (f > 0 ? f : 1);
}

static struct mu_barrier *barrier(int64_t timeout_ms)
{
    return mu_barrier_new(scaled(timeout_ms), fake_bind, fake_unbind,
                          fake_report, &fk);
}

/* The same, reading ambiguous binds back with fake_check. */
static struct mu_barrier *barrier_checked(int64_t timeout_ms)
{
    struct mu_barrier *b = barrier(timeout_ms);

    mu_barrier_set_check(b, fake_check);
    return b;
}

/* The calls of op on uid. */
static int count_of(char op, const char *uid)
{
    int n = 0;

    for (int i = 0; i < fk.n_calls; i++)
        n += fk.calls[i].op == op && !strcmp(fk.calls[i].uid, uid);
    return n;
}

/* The call of op on uid (NULL when there is none). */
static const struct call *call_of(char op, const char *uid)
{
    for (int i = 0; i < fk.n_calls; i++)
        if (fk.calls[i].op == op && !strcmp(fk.calls[i].uid, uid))
            return &fk.calls[i];
    return NULL;
}

START_TEST(test_barrier_binds_a_batch_of_three_at_once_from_three_threads)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    struct member m[3];

    add_gang(v, "g", 3);
    fk.bind_delay_ms = (int)scaled(100);
    for (int i = 0; i < 3; i++)
        start_member(&m[i], b, v, "g", i, 30 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(m[i].error, "");
    ck_assert_int_eq(fk.n_calls, 3);
    for (int i = 0; i < 3; i++) { /* each once, on its node */
        const struct call *c = call_of('b', m[i].uid);

        ck_assert_ptr_nonnull(c);
        ck_assert_str_eq(c->node, m[i].node);
    }
    /* each member's thread bound its own pod, all three at the same time */
    ck_assert_int_eq(fk.max_in_bind, 3);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_str_eq(fk.last_release, "team-a/g#1");
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_barrier_missing_member_times_out_binds_nothing_reports_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(300);
    struct member m[2];
    int64_t t0 = now_ms();

    add_gang(v, "g", 3);
    for (int i = 0; i < 2; i++)
        start_member(&m[i], b, v, "g", i, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(strstr(m[i].error, "2 of 3 members reached bind"), "%s",
                      m[i].error);
        ck_assert_int_ge(m[i].returned_ms - t0, scaled(300) - 10);
        ck_assert_int_lt(m[i].returned_ms - t0, scaled(3000));
    }
    ck_assert_int_eq(fk.n_calls, 0);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    ck_assert_int_eq(fk.n_reports_timed_out, 1);
    ck_assert(strstr(fk.last_detail, "none was bound"));
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* The waiting cap (MU_BARRIER_MAX_WAITING, here 2): a member that would
 * wait beyond it is refused at once, and one that completes its batch
 * always comes in. */
START_TEST(test_barrier_refuses_a_waiter_beyond_the_cap_but_completes_batches)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    struct member g[3], h[3];
    int64_t t0;

    add_gang(v, "g", 3);
    add_gang(v, "h", 3);
    mu_barrier_set_max_waiting(b, 2);
    for (int i = 0; i < 2; i++)
        start_member(&g[i], b, v, "g", i, 0);
    sleep_ms(scaled(100)); /* both wait: the cap is full */
    t0 = now_ms();
    start_member(&h[0], b, v, "h", 0, 0);
    pthread_join(h[0].t, NULL);
    ck_assert_int_lt(h[0].returned_ms - t0, scaled(800)); /* not waited */
    ck_assert_msg(strstr(h[0].error, "wait in /bind already (the cap)"), "%s",
                  h[0].error);
    ck_assert_int_eq(count('b'), 0);
    start_member(&g[2], b, v, "g", 2, 0); /* completes g: comes in */
    for (int i = 0; i < 3; i++)
        pthread_join(g[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(g[i].error, "");
    ck_assert_int_eq(count('b'), 3);
    /* g is done: h's members may wait again, and bind */
    for (int i = 0; i < 3; i++)
        start_member(&h[i], b, v, "h", i, 10 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(h[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(h[i].error, "");
    ck_assert_int_eq(count('b'), 6);
    ck_assert_int_eq(fk.n_reports_ok, 2);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_barrier_late_arrival_after_a_timeout_fails_at_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(1000);
    struct member m[3];
    int64_t t0;

    add_gang(v, "g", 3);
    for (int i = 0; i < 2; i++)
        start_member(&m[i], b, v, "g", i, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(m[i].t, NULL);
    t0 = now_ms();
    start_member(&m[2], b, v, "g", 2, 0);
    pthread_join(m[2].t, NULL);
    ck_assert_int_lt(m[2].returned_ms - t0, scaled(800)); /* no new wait */
    ck_assert_msg(strstr(m[2].error, "its batch is over"), "%s", m[2].error);
    ck_assert_msg(strstr(m[2].error, "2 of 3"), "%s", m[2].error);
    ck_assert_int_eq(fk.n_calls, 0);
    ck_assert_int_eq(fk.n_reports, 1); /* the timeout, once */
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* Gang g of three binds with g-1 failing with rc (fake_bind: -ETIMEDOUT
 * or a refusal); each member's error must contain want. */
static void three_with_a_failure(int rc, const char *want)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    struct member m[3];

    add_gang(v, "g", 3);
    fk.fail_uid = "g-1";
    fk.fail_rc = rc;
    for (int i = 0; i < 3; i++)
        start_member(&m[i], b, v, "g", i, 30 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(strstr(m[i].error, want), "%s", m[i].error);
    ck_assert_int_eq(count('b'), 3); /* all three bound at once */
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    ck_assert_int_eq(fk.n_reports_timed_out, 0); /* a failure, not a wait */
    mu_barrier_free(b);
    mu_view_put(v);
}

START_TEST(test_barrier_failed_bind_undoes_the_bound_ones_and_fails_all)
{
    three_with_a_failure(-EPERM, "binding team-a/g-w1 to node-g-1 failed: "
                                 "pods \"g-w1\" is forbidden; the 2 members "
                                 "bound or maybe bound were deleted");
    /* g-1 refused, so surely not bound: the two others undone after */
    ck_assert_int_eq(fk.n_calls, 5);
    ck_assert_ptr_nonnull(call_of('u', "g-0"));
    ck_assert_ptr_nonnull(call_of('u', "g-2"));
    ck_assert_ptr_null(call_of('u', "g-1"));
    for (int i = 3; i < 5; i++)
        ck_assert_int_eq(fk.calls[i].op, 'u');
}
END_TEST

START_TEST(test_barrier_undoes_a_member_whose_bind_may_have_gone_through)
{
    /* a timeout: the apiserver may have bound g-1, so it is undone too */
    three_with_a_failure(-ETIMEDOUT,
                         "the 3 members bound or maybe bound were deleted");
    ck_assert_int_eq(count('u'), 3);
    for (int i = 0; i < 3; i++) {
        char uid[8];

        snprintf(uid, sizeof(uid), "g-%d", i);
        ck_assert_ptr_nonnull(call_of('u', uid));
    }
}
END_TEST

#define N_GANGS 60
#define GANG_SIZE 4

START_TEST(test_barrier_serves_many_batches_at_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(20000);
    static struct member m[N_GANGS * GANG_SIZE];
    unsigned seed = 3;

    fk.bind_delay_ms = 2;
    for (int g = 0; g < N_GANGS; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%d", g);
        add_gang(v, name, GANG_SIZE);
    }
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++) {
        char name[16];

        seed = seed * 1103515245u + 12345u;
        snprintf(name, sizeof(name), "g%d", i % N_GANGS);
        start_member(&m[i], b, v, name, i / N_GANGS, (int)(seed >> 16) % 50);
    }
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(count('b'), N_GANGS * GANG_SIZE);
    ck_assert_int_eq(count('u'), 0);
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++) { /* each exactly once */
        int seen = 0;

        for (int j = 0; j < fk.n_calls; j++)
            seen += !strcmp(fk.calls[j].uid, m[i].uid);
        ck_assert_int_eq(seen, 1);
    }
    ck_assert_int_eq(fk.n_reports, N_GANGS);
    ck_assert_int_eq(fk.n_reports_ok, N_GANGS);
    ck_assert_int_ge(fk.max_in_bind, 2); /* no global lock while binding */
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_barrier_second_bind_of_a_waiting_pod_is_refused)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(300);
    struct member m[2];

    add_gang(v, "g", 3);
    start_member(&m[0], b, v, "g", 0, 0);
    start_member(&m[1], b, v, "g", 0, 50);
    pthread_join(m[1].t, NULL);
    ck_assert_msg(strstr(m[1].error, "already waiting"), "%s", m[1].error);
    pthread_join(m[0].t, NULL);
    ck_assert(strstr(m[0].error, "1 of 3"));
    ck_assert_int_eq(fk.n_reports, 1);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_barrier_batch_of_one_binds_at_once_and_is_reported)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    json_t *a = bind_args("g-w0", "g-0", "node-g-0");
    json_t *r;

    add_gang(v, "g", 1);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r), "");
    ck_assert_int_eq(count('b'), 1);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    json_decref(r);
    /* the same batch again: already bound */
    r = mu_ext_bind(b, v, a);
    ck_assert_msg(strstr(error_of(r), "already bound"), "%s", error_of(r));
    ck_assert_int_eq(count('b'), 1);
    ck_assert_int_eq(fk.n_reports, 1);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_reserved_pod_outside_a_batch_binds_at_once_unreported)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    json_t *a = bind_args("web-1", "u-web", "node-7");
    json_t *r;

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r), "");
    ck_assert_int_eq(fk.n_calls, 1);
    ck_assert_str_eq(fk.calls[0].uid, "u-web");
    ck_assert_str_eq(fk.calls[0].node, "node-7");
    ck_assert_int_eq(fk.n_reports, 0);
    json_decref(r);
    /* a failing bind of one is an error, still unreported */
    fk.fail_uid = "u-web";
    r = mu_ext_bind(b, v, a);
    ck_assert_msg(strstr(error_of(r), "binding team-a/web-1 to node-7 failed: "
                                      "pods \"web-1\" is forbidden"),
                  "%s", error_of(r));
    ck_assert_int_eq(fk.n_reports, 0);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* A NUL in a field read as a C string would cut it: "u-web\u0000x" read
 * as "u-web" would bind the pod u-web. Refused as malformed, whichever
 * field (the server reads bodies with mu_json_loadb, which keeps it). */
START_TEST(test_bind_refuses_a_nul_in_any_field_and_writes_nothing)
{
    static const char *const bodies[] = {
        "{\"PodName\":\"web-1\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-web\\u0000x\",\"Node\":\"node-7\"}",
        "{\"PodName\":\"web-1\\u0000\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-web\",\"Node\":\"node-7\"}",
        "{\"PodName\":\"web-1\",\"podnamespace\":\"team-a\\u0000\","
        "\"PodUID\":\"u-web\",\"Node\":\"node-7\"}",
        "{\"PodName\":\"web-1\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-web\",\"Node\":\"node-7\\u0000\"}",
    };
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        json_t *a = mu_json_loadb(bodies[i], strlen(bodies[i]), NULL);
        json_t *r;

        ck_assert_ptr_nonnull(a);
        r = mu_ext_bind(b, v, a);
        ck_assert_msg(strstr(error_of(r), "must not contain a NUL character"),
                      "%s: %s", bodies[i], error_of(r));
        json_decref(r);
        json_decref(a);
    }
    ck_assert_int_eq(fk.n_calls, 0);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_refuses_a_uid_not_in_the_view_and_writes_nothing)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_view *unsynced = mu_view_new(1, false);
    struct mu_barrier *b = barrier(5000);
    /* a pending kube-system pod's name with a uid muster never placed */
    json_t *a = json_pack("{s:s,s:s,s:s,s:s}", "PodName", "coredns-0",
                          "PodNamespace", "kube-system", "PodUID", "u-dns",
                          "Node", "tainted-1");
    json_t *r;

    add_gang(v, "g", 2);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r),
                     "pod uid u-dns (kube-system/coredns-0) is not in "
                     "muster's view: muster binds only pods it has placed "
                     "(kube-scheduler retries once muster knows the pod)");
    json_decref(r);
    /* nothing published yet, or not synced: refused as well */
    r = mu_ext_bind(b, NULL, a);
    ck_assert_str_eq(error_of(r), "muster is starting (caches not synced): "
                                  "not binding kube-system/coredns-0");
    json_decref(r);
    r = mu_ext_bind(b, unsynced, a);
    ck_assert(strstr(error_of(r), "muster is starting"));
    json_decref(r);
    ck_assert_int_eq(fk.n_calls, 0); /* no bind, no delete */
    ck_assert_int_eq(fk.n_reports, 0);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(unsynced);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_refuses_a_reserved_uid_with_another_pods_name)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    /* g-0's reserved uid and node, and the name of another pod */
    json_t *forged[] = {
        json_pack("{s:s,s:s,s:s,s:s}", "PodName", "coredns", "PodNamespace",
                  "kube-system", "PodUID", "g-0", "Node", "node-g-0"),
        json_pack("{s:s,s:s,s:s,s:s}", "PodName", "g-w0", "PodNamespace",
                  "team-b", "PodUID", "g-0", "Node", "node-g-0"),
        json_pack("{s:s,s:s,s:s,s:s}", "PodName", "g-w1", "PodNamespace",
                  "team-a", "PodUID", "g-0", "Node", "node-g-0"),
    };
    json_t *r;

    add_gang(v, "g", 1);
    for (size_t i = 0; i < MU_ARRAY_LEN(forged); i++) {
        r = mu_ext_bind(b, v, forged[i]);
        ck_assert_msg(strstr(error_of(r), "pod uid g-0 is team-a/g-w0 in "
                                          "muster's view, not "),
                      "%zu: %s", i, error_of(r));
        json_decref(r);
        json_decref(forged[i]);
    }
    ck_assert_int_eq(fk.n_calls, 0);
    ck_assert_int_eq(fk.n_reports, 0);
    /* the genuine request still binds (the batch was not spent) */
    forged[0] = bind_args("g-w0", "g-0", "node-g-0");
    r = mu_ext_bind(b, v, forged[0]);
    ck_assert_str_eq(error_of(r), "");
    ck_assert_int_eq(fk.n_calls, 1);
    ck_assert_str_eq(fk.calls[0].ns, "team-a");
    ck_assert_str_eq(fk.calls[0].name, "g-w0");
    json_decref(r);
    json_decref(forged[0]);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_undo_deletes_the_views_pod_by_uid)
{
    three_with_a_failure(-EPERM, "were deleted");
    for (int i = 0; i < fk.n_calls; i++) {
        char want[16];

        snprintf(want, sizeof(want), "g-w%s", fk.calls[i].uid + 2);
        ck_assert_str_eq(fk.calls[i].ns, "team-a");
        ck_assert_str_eq(fk.calls[i].name, want);
    }
    ck_assert_int_eq(count('u'), 2);
}
END_TEST

START_TEST(test_bind_refuses_a_node_other_than_the_reserved_one)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    json_t *a = bind_args("g-w0", "g-0", "node-elsewhere");
    json_t *r;

    add_gang(v, "g", 2);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r), "muster reserved node-g-0 for team-a/g-w0, "
                                  "not node-elsewhere");
    ck_assert_int_eq(fk.n_calls, 0);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_refuses_a_pod_that_must_wait)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    json_t *a = bind_args("w-1", "u-wait", "node-1");
    json_t *r;

    mu_view_add_pod(v, "u-wait", "team-a", "w-1", "team-a/pg", NULL, NULL, 0,
                    "3/4 members");
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r), "muster holds no node for team-a/w-1 "
                                  "(gang team-a/pg waiting: 3/4 members)");
    ck_assert_int_eq(fk.n_calls, 0);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_bind_malformed_args_get_an_error)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(5000);
    json_t *cases[] = {
        json_string("x"),
        json_object(),
        json_pack("{s:s,s:s,s:s}", "PodName", "p", "PodNamespace", "ns",
                  "PodUID", "u"),
        json_pack("{s:s,s:s,s:s,s:i}", "PodName", "p", "PodNamespace", "ns",
                  "PodUID", "u", "Node", 3),
        json_pack("{s:s,s:s,s:s,s:s}", "PodName", "", "PodNamespace", "ns",
                  "PodUID", "u", "Node", "n"),
    };
    json_t *lower = json_pack("{s:s,s:s,s:s,s:s}", "podname", "p",
                              "PODNAMESPACE", "ns", "poduid", "u", "node", "n");
    json_t *r;

    for (size_t i = 0; i < MU_ARRAY_LEN(cases); i++) {
        r = mu_ext_bind(b, v, cases[i]);
        ck_assert_msg(strstr(error_of(r), "malformed ExtenderBindingArgs"),
                      "%zu: %s", i, error_of(r));
        json_decref(r);
        json_decref(cases[i]);
    }
    ck_assert_int_eq(fk.n_calls, 0);
    mu_view_add_pod(v, "u", "ns", "p", "ns/pg", "n", NULL, 0, NULL);
    r = mu_ext_bind(b, v, lower); /* any case is fine */
    ck_assert_str_eq(error_of(r), "");
    ck_assert_int_eq(fk.n_calls, 1);
    json_decref(r);
    json_decref(lower);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* Gang g of n (controlled or bare) binds, with the fake set up by the
 * caller, through a barrier that reads ambiguous binds back; m[] holds
 * each member's outcome. */
static void run_checked(struct member *m, int n, bool controlled)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier_checked(5000);

    add_gang_of(v, "g", n, controlled);
    for (int i = 0; i < n; i++)
        start_member(&m[i], b, v, "g", i, 10 * i);
    for (int i = 0; i < n; i++)
        pthread_join(m[i].t, NULL);
    mu_barrier_free(b);
    mu_view_put(v);
}

START_TEST(test_barrier_ambiguous_500_is_read_back_retried_and_ends_bound)
{
    struct member m[2];

    fk.fail_uid = "g-1";
    fk.fail_rc = -EIO;
    fk.fail_times = 1;
    run_checked(m, 2, false);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-0"), 1);
    ck_assert_int_eq(count_of('b', "g-1"), 2); /* the 500, then a bind */
    ck_assert_int_eq(count_of('c', "g-1"), 1); /* read back once */
    ck_assert_int_eq(count('u'), 0);
    ck_assert_int_eq(fk.n_bound, 2);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
}
END_TEST

START_TEST(test_barrier_a_409_whose_pod_is_bound_there_counts_as_bound)
{
    struct member m[2];

    fk.fail_uid = "g-1";
    fk.fail_rc = -EBUSY;
    fk.fail_times = 1;
    fk.through = true; /* bound, but the reply said 409 */
    run_checked(m, 2, true);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-1"), 1); /* not sent again */
    ck_assert_int_eq(count_of('c', "g-1"), 1);
    ck_assert_int_eq(count('u'), 0);
    ck_assert_int_eq(fk.n_reports_ok, 1);
}
END_TEST

START_TEST(test_barrier_member_failing_twice_then_binding_completes_the_gang)
{
    struct member m[3];

    fk.fail_uid = "g-1";
    fk.fail_rc = -ETIMEDOUT;
    fk.fail_times = 2;
    run_checked(m, 3, true);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-1"), 3);
    ck_assert_int_eq(count('u'), 0);
    ck_assert_int_eq(fk.n_bound, 3);
    ck_assert_int_eq(fk.n_reports_ok, 1);
}
END_TEST

START_TEST(test_barrier_failed_member_is_retried_again_before_an_undo)
{
    struct member m[2];

    /* more failures than one round of tries: the judge's round binds it */
    fk.fail_uid = "g-1";
    fk.fail_rc = -EIO;
    fk.fail_times = MU_BARRIER_BIND_TRIES + 1;
    run_checked(m, 2, true);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-1"), MU_BARRIER_BIND_TRIES + 2);
    ck_assert_int_eq(count('u'), 0);
    ck_assert_int_eq(fk.n_reports_ok, 1);
}
END_TEST

START_TEST(test_barrier_never_deletes_a_bare_pod_and_names_it)
{
    struct member m[3];

    fk.fail_uid = "g-1";
    fk.fail_rc = -EPERM; /* refused: no retry mends it */
    run_checked(m, 3, false);
    for (int i = 0; i < 3; i++) { /* the kept ones in arrival order */
        ck_assert_msg(strstr(m[i].error,
                             "binding team-a/g-w1 to node-g-1 failed: pods "
                             "\"g-w1\" is forbidden; 2 members bound or maybe "
                             "bound, with no controller to make them again, "
                             "were kept: team-a/g-w"),
                      "%s", m[i].error);
        ck_assert_msg(strstr(m[i].error, "team-a/g-w0 (bound to node-g-0)") &&
                          strstr(m[i].error,
                                 "team-a/g-w2 (bound to node-g-2)"),
                      "%s", m[i].error);
    }
    ck_assert_int_eq(count_of('b', "g-1"), 1);
    ck_assert_int_eq(count('c'), 0); /* a refusal is not read back */
    ck_assert_int_eq(count('u'), 0); /* nothing deleted */
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    ck_assert(strstr(fk.last_detail, "were kept"));
}
END_TEST

START_TEST(test_barrier_a_pod_read_back_gone_is_not_retried_and_undoes)
{
    struct member m[2];

    fk.fail_uid = "g-1";
    fk.fail_rc = -EIO;
    fk.gone = true;
    run_checked(m, 2, true);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(strstr(m[i].error, "500 Internal Server Error (read "
                                         "back: the pod is gone); the 1 "
                                         "member bound or maybe bound was "
                                         "deleted"),
                      "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-1"), 1);
    ck_assert_int_eq(count_of('u', "g-0"), 1);
    ck_assert_int_eq(count_of('u', "g-1"), 0);
    ck_assert_int_eq(fk.n_reports_ok, 0);
}
END_TEST

START_TEST(test_barrier_gives_up_after_its_tries_and_keeps_the_bare_pods)
{
    struct member m[2];

    /* a 500 every time: two rounds of tries, then the bound member is
     * kept (bare) and the failed one is known unbound */
    fk.fail_uid = "g-1";
    fk.fail_rc = -EIO;
    run_checked(m, 2, false);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(strstr(m[i].error, "500 Internal Server Error (4 tries; "
                                         "read back: not bound); 1 member "
                                         "bound or maybe bound, with no "
                                         "controller to make it again, was "
                                         "kept: team-a/g-w0 (bound to "
                                         "node-g-0)"),
                      "%s", m[i].error);
    ck_assert_int_eq(count_of('b', "g-1"), 2 * MU_BARRIER_BIND_TRIES);
    ck_assert_int_eq(count('u'), 0);
}
END_TEST

START_TEST(test_bind_of_one_retries_an_ambiguous_failure)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier_checked(5000);
    json_t *a = bind_args("web-1", "u-web", "node-7");
    json_t *r;

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    fk.fail_uid = "u-web";
    fk.fail_rc = -EIO;
    fk.fail_times = 1;
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(error_of(r), "");
    ck_assert_int_eq(count_of('b', "u-web"), 2);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* ---- a plain gang bound whole at its first member (mu_barrier_bind_gang) */

/* gang g of n, as add_gang_of, every member plain */
static void add_plain_gang(struct mu_view *v, const char *g, int n,
                           bool controlled)
{
    add_gang_of(v, g, n, controlled);
    for (int i = 0; i < n; i++) {
        char uid[32];

        snprintf(uid, sizeof(uid), "%s-%d", g, i);
        mu_view_set_plain(v, uid, true);
    }
}

static void bind_member(struct member *m, struct mu_barrier *b,
                        const struct mu_view *v, const char *g, int i)
{
    start_member(m, b, v, g, i, 0);
    pthread_join(m->t, NULL);
}

START_TEST(test_gang_bind_binds_every_plain_member_at_the_first_arrival)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct member m;
    int64_t t0 = now_ms();

    add_plain_gang(v, "g", 4, true);
    fk.bind_delay_ms = (int)scaled(100);
    bind_member(&m, b, v, "g", 2);
    ck_assert_str_eq(m.error, "");
    /* no wait for the others: well under the barrier's 60 s */
    ck_assert_int_lt(m.returned_ms - t0, scaled(2000));
    ck_assert_int_eq(count('b'), 4);
    for (int i = 0; i < 4; i++) {
        char uid[32], node[32];

        snprintf(uid, sizeof(uid), "g-%d", i);
        snprintf(node, sizeof(node), "node-g-%d", i);
        ck_assert_ptr_nonnull(bound_on(uid));
        ck_assert_str_eq(bound_on(uid), node);
    }
    ck_assert_int_eq(fk.max_in_bind, 4); /* on four threads at once */
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_int_eq(fk.n_reports_timed_out, 0);
    /* kube-scheduler brings the others later: bound already, no bind */
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        bind_member(&m, b, v, "g", i);
        ck_assert_str_eq(m.error, "");
    }
    ck_assert_int_eq(count('b'), 4);
    ck_assert_int_eq(fk.n_reports, 1);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

static unsigned long long hist_total(struct mu_hist *h)
{
    unsigned long long total = 0;

    for (int i = 0; i <= h->n; i++)
        total += atomic_load(&h->count[i]);
    return total;
}

/* A gang bound whole records its span (first member's bind answered to
 * the last's): one slow member makes it at least that much longer. A gang
 * that fails records none. */
START_TEST(test_gang_bind_records_the_span_of_a_gang_bound_whole)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct mu_ext_stats st;
    struct member m;

    memset(&st, 0, sizeof(st));
    mu_hist_init(&st.span_hist, mu_hist_barrier, mu_hist_barrier_n);
    mu_barrier_set_stats(b, &st);
    add_plain_gang(v, "g", 4, true);
    add_plain_gang(v, "h", 2, true);
    fk.slow_uid = "g-3";
    fk.slow_ms = (int)scaled(300);
    bind_member(&m, b, v, "g", 0);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(count('b'), 4);
    ck_assert_uint_eq(atomic_load(&st.gangs_first_ok), 1);
    /* one observation, of at least half the slow member's delay (the
     * other three are answered at once) */
    ck_assert_uint_eq(hist_total(&st.span_hist), 1);
    ck_assert_uint_ge(atomic_load(&st.span_hist.sum_ns),
                      (unsigned long long)scaled(150) * 1000000ull);
    /* h fails: no span */
    fk.slow_uid = NULL;
    fk.fail_uid = "h-1";
    bind_member(&m, b, v, "h", 0);
    ck_assert_str_ne(m.error, "");
    ck_assert_int_eq(fk.n_reports, 2);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_uint_eq(hist_total(&st.span_hist), 1);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_gang_bind_a_member_arriving_during_the_binds_waits_for_them)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct member m[2];

    add_plain_gang(v, "g", 3, true);
    fk.bind_delay_ms = (int)scaled(300);
    start_member(&m[0], b, v, "g", 0, 0);
    start_member(&m[1], b, v, "g", 1, (int)scaled(100));
    pthread_join(m[0].t, NULL);
    pthread_join(m[1].t, NULL);
    ck_assert_str_eq(m[0].error, "");
    ck_assert_str_eq(m[1].error, "");
    ck_assert_int_eq(count('b'), 3); /* each once */
    ck_assert_int_eq(count_of('b', "g-1"), 1);
    /* the second returned only once the binds were done */
    ck_assert_int_ge(m[1].returned_ms, m[0].returned_ms - scaled(50));
    ck_assert_int_eq(fk.n_reports, 1);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_gang_bind_a_failed_member_undoes_the_gang_and_its_late_binds)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct member m;

    add_plain_gang(v, "g", 3, true);
    fk.fail_uid = "g-2";
    fk.fail_rc = -EPERM; /* refused: surely not bound */
    bind_member(&m, b, v, "g", 0);
    ck_assert_ptr_nonnull(strstr(m.error, "binding team-a/g-w2 to node-g-2 "
                                          "failed"));
    ck_assert_ptr_nonnull(strstr(m.error, "the 2 members bound or maybe "
                                          "bound were deleted"));
    ck_assert_int_eq(count_of('u', "g-0"), 1);
    ck_assert_int_eq(count_of('u', "g-1"), 1);
    ck_assert_int_eq(count_of('u', "g-2"), 0);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    /* a later member's /bind fails at once, binding nothing */
    bind_member(&m, b, v, "g", 1);
    ck_assert_ptr_nonnull(strstr(m.error, "its batch is over"));
    ck_assert_int_eq(count('b'), 3);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* A member that is not plain, or a batch the view does not hold whole,
 * waits for kube-scheduler to bring every member, as before. */
START_TEST(test_gang_bind_waits_for_all_unless_every_member_is_plain)
{
    for (int k = 0; k < 2; k++) {
        struct mu_view *v = mu_view_new(1, true);
        struct mu_barrier *b = barrier(300);
        struct member m;

        setup();
        add_plain_gang(v, "g", 3, true);
        if (k == 0) {
            mu_view_set_plain(v, "g-1", false);
        } else { /* the view holds 2 of the batch's 3 */
            mu_view_put(v);
            v = mu_view_new(2, true);
            for (int i = 0; i < 2; i++) {
                char uid[32], name[32], node[32];

                snprintf(uid, sizeof(uid), "g-%d", i);
                snprintf(name, sizeof(name), "g-w%d", i);
                snprintf(node, sizeof(node), "node-g-%d", i);
                mu_view_add_pod(v, uid, "team-a", name, "g", node,
                                "team-a/g#1", 3, NULL);
                mu_view_set_plain(v, uid, true);
            }
        }
        bind_member(&m, b, v, "g", 0);
        ck_assert_ptr_nonnull(strstr(m.error, "1 of 3 members reached bind"));
        ck_assert_int_eq(count('b'), 0);
        ck_assert_int_eq(fk.n_reports_timed_out, 1);
        mu_barrier_free(b);
        mu_view_put(v);
    }
}
END_TEST

/* A gang of bare pods (no controller) that fails keeps the bound ones. */
START_TEST(test_gang_bind_never_deletes_a_bare_member)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct member m;

    add_plain_gang(v, "g", 2, false);
    fk.fail_uid = "g-1";
    fk.fail_rc = -EPERM;
    bind_member(&m, b, v, "g", 0);
    ck_assert_ptr_nonnull(strstr(m.error, "1 member bound or maybe bound, "
                                          "with no controller"));
    ck_assert_int_eq(count('u'), 0);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* Once muster's cache sees the binds, the next view no longer holds the
 * bound pods: kube-scheduler's late /bind of one is answered from the
 * barrier (bound there, with its gang), and nothing is written. */
START_TEST(test_gang_bind_answers_a_late_bind_the_view_no_longer_holds)
{
    struct mu_view *v = mu_view_new(1, true), *later = mu_view_new(2, true);
    struct mu_barrier *b = barrier(60000);
    struct member m;
    json_t *a, *r;

    add_plain_gang(v, "g", 2, true);
    bind_member(&m, b, v, "g", 0);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(count('b'), 2);
    bind_member(&m, b, later, "g", 1);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(count('b'), 2);
    /* on another node, or a uid no gang bound: refused as before */
    a = bind_args("g-w1", "g-1", "node-g-0");
    r = mu_ext_bind(b, later, a);
    ck_assert_ptr_nonnull(strstr(error_of(r), "is not in muster's view"));
    json_decref(r);
    json_decref(a);
    a = bind_args("x-w0", "x-0", "node-g-0");
    r = mu_ext_bind(b, later, a);
    ck_assert_ptr_nonnull(strstr(error_of(r), "is not in muster's view"));
    json_decref(r);
    json_decref(a);
    ck_assert_int_eq(count('b'), 2);
    ck_assert_int_eq(count('u'), 0);
    mu_barrier_free(b);
    mu_view_put(v);
    mu_view_put(later);
}
END_TEST

/* More gangs than may bind at once: each waits for room, then binds its
 * members together; never more than MU_BARRIER_GANGS_BINDING gangs' binds
 * run at the same time, and every gang binds whole. */
START_TEST(test_gang_bind_binds_at_most_the_cap_of_gangs_at_once)
{
    enum { NG = 20 };
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = barrier(60000);
    struct member m[NG];

    for (int g = 0; g < NG; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%02d", g);
        add_plain_gang(v, name, 2, true);
    }
    fk.bind_delay_ms = (int)scaled(200);
    for (int g = 0; g < NG; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%02d", g);
        start_member(&m[g], b, v, name, 0, 0);
    }
    for (int g = 0; g < NG; g++)
        pthread_join(m[g].t, NULL);
    for (int g = 0; g < NG; g++)
        ck_assert_str_eq(m[g].error, "");
    ck_assert_int_eq(count('b'), 2 * NG);
    ck_assert_int_le(fk.max_in_bind, 2 * 16);
    ck_assert_int_ge(fk.max_in_bind, 2); /* a gang's two at once */
    ck_assert_int_eq(fk.n_reports_ok, NG);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST


/* ---- a plain gang bound at its release (relbind.h) ------------------------ */

/* The members of gang g (as add_gang_of names them), for submit; borrowed
 * strings kept in buf. */
struct gang_members {
    struct mu_barrier_member m[8];
    char s[8][4][32];
};

static void members_of(struct gang_members *gm, const char *g, int n)
{
    ck_assert_int_le(n, 8);
    memset(gm, 0, sizeof(*gm));
    for (int i = 0; i < n; i++) {
        snprintf(gm->s[i][0], 32, "%s-w%d", g, i);
        snprintf(gm->s[i][1], 32, "%s-%d", g, i);
        snprintf(gm->s[i][2], 32, "node-%s-%d", g, i);
        snprintf(gm->s[i][3], 32, "team-a");
        gm->m[i].ns = gm->s[i][3];
        gm->m[i].name = gm->s[i][0];
        gm->m[i].uid = gm->s[i][1];
        gm->m[i].node = gm->s[i][2];
        gm->m[i].controlled = true;
    }
}

static int reports(void)
{
    int n;

    pthread_mutex_lock(&fk.mu);
    n = fk.n_reports;
    pthread_mutex_unlock(&fk.mu);
    return n;
}

/* Waits up to ms (scaled) for pred's count to reach want. */
static bool wait_count(int (*pred)(void), int want, int64_t ms)
{
    int64_t until = now_ms() + scaled(ms);

    while (pred() < want && now_ms() < until)
        sleep_ms(10);
    return pred() >= want;
}

/* A release binder on its own barrier and view slot, v published. */
struct relbind_fix {
    struct mu_view_slot slot;
    struct mu_barrier *b;
    struct mu_relbind *rb;
};

static void relbind_start(struct relbind_fix *f, struct mu_view *v)
{
    struct mu_err err;

    mu_view_slot_init(&f->slot);
    mu_view_publish(&f->slot, v);
    f->b = barrier(60000);
    ck_assert_int_eq(mu_relbind_new(f->b, &f->slot, &f->rb, &err), 0);
}

static void relbind_stop(struct relbind_fix *f)
{
    mu_relbind_free(f->rb);
    mu_barrier_free(f->b);
    mu_view_slot_release(&f->slot);
}

static struct relbind_fix rf;

static int stale(void)
{
    return (int)atomic_load(&mu_relbind_stats(rf.rb)->stale);
}

/* A released gang is bound whole with no member at /bind, on its reserved
 * nodes, reported once, not counted as bound at a first member; a member
 * kube-scheduler brings later is answered from the outcome. */
START_TEST(test_relbind_binds_a_released_gang_with_no_member_at_bind)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_ext_stats st;
    struct gang_members gm;
    struct member m;

    add_plain_gang(v, "g", 4, true);
    relbind_start(&rf, v);
    memset(&st, 0, sizeof(st));
    mu_barrier_set_stats(rf.b, &st);
    members_of(&gm, "g", 4);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#1", gm.m, 4), 0);
    ck_assert(wait_count(reports, 1, 5000));
    ck_assert_int_eq(count('b'), 4);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq(bound_on(gm.m[i].uid), gm.m[i].node);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_str_eq(fk.last_release, "team-a/g#1");
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->bound), 1);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->submitted), 1);
    ck_assert_uint_eq(atomic_load(&st.gangs_first_ok), 0);
    v = mu_view_get(&rf.slot);
    bind_member(&m, rf.b, v, "g", 3);
    mu_view_put(v);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(count('b'), 4);
    ck_assert_int_eq(reports(), 1);
    relbind_stop(&rf);
}
END_TEST

/* A release the view no longer holds (its members under another release
 * now) is dropped: nothing bound, nothing reported, counted as stale. One
 * it still holds with a member no longer plain, or reserved on another
 * node, is reported failed, so that it is planned again: nothing bound. */
START_TEST(test_relbind_drops_a_release_the_view_no_longer_holds)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;

    add_plain_gang(v, "g", 2, true);
    add_gang_of(v, "h", 2, true); /* h: not plain */
    add_plain_gang(v, "k", 2, true);
    relbind_start(&rf, v);
    members_of(&gm, "g", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#2", gm.m, 2), 0);
    members_of(&gm, "h", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/h#1", gm.m, 2), 0);
    members_of(&gm, "k", 2);
    snprintf(gm.s[1][2], 32, "node-elsewhere");
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/k#1", gm.m, 2), 0);
    ck_assert(wait_count(reports, 2, 5000));
    ck_assert(wait_count(stale, 1, 5000));
    ck_assert_int_eq(stale(), 1);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->failed), 2);
    relbind_stop(&rf);
    ck_assert_int_eq(count('b'), 0);
    ck_assert_int_eq(reports(), 2);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    ck_assert_ptr_nonnull(strstr(fk.last_detail, "no longer bindable"));
}
END_TEST

static int in_bind(void)
{
    int n;

    pthread_mutex_lock(&fk.mu);
    n = fk.in_bind;
    pthread_mutex_unlock(&fk.mu);
    return n;
}

/* Past MU_RELBIND_QUEUE_MAX gangs waiting, submit refuses (the caller
 * wakes the gang instead); a gang too big or without names is refused
 * too; free drops what is queued, unbound. */
START_TEST(test_relbind_refuses_past_its_caps_and_free_drops_the_queue)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;
    struct mu_barrier_member *big;

    for (int g = 0; g < MU_RELBIND_THREADS; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%d", g);
        add_plain_gang(v, name, 1, true);
    }
    add_plain_gang(v, "q", 1, true); /* held: bound, if ever its turn */
    fk.bind_delay_ms = (int)scaled(1500);
    relbind_start(&rf, v);
    /* every worker busy binding */
    for (int g = 0; g < MU_RELBIND_THREADS; g++) {
        char name[16], rel[32];

        snprintf(name, sizeof(name), "g%d", g);
        snprintf(rel, sizeof(rel), "team-a/%s#1", name);
        members_of(&gm, name, 1);
        ck_assert_int_eq(mu_relbind_submit(rf.rb, rel, gm.m, 1), 0);
    }
    ck_assert(wait_count(in_bind, MU_RELBIND_THREADS, 1000));
    members_of(&gm, "q", 1);
    for (int i = 0; i < MU_RELBIND_QUEUE_MAX; i++)
        ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/q#1", gm.m, 1), 0);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/q#1", gm.m, 1),
                     -EAGAIN);
    big = mu_xcalloc(MU_RELBIND_MEMBERS_MAX + 1, sizeof(*big));
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big,
                                       MU_RELBIND_MEMBERS_MAX + 1),
                     -E2BIG);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big, 1),
                     -EINVAL); /* no names */
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big, 0),
                     -EINVAL);
    free(big);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->refused), 2);
    /* a full queue leaves no room to release into */
    ck_assert_int_eq(mu_relbind_room(rf.rb), 0);
    relbind_stop(&rf); /* waits for the 8 binds, drops the 4,096 */
    ck_assert_int_eq(count('b'), MU_RELBIND_THREADS);
    ck_assert_int_eq(count_of('b', "q-0"), 0);
    ck_assert_int_eq(reports(), MU_RELBIND_THREADS);
}
END_TEST

static long room(void)
{
    return mu_relbind_room(rf.rb);
}

/* Waits up to ms (scaled) for the binder's room to be want. */
static bool wait_room(long want, int64_t ms)
{
    int64_t until = now_ms() + scaled(ms);

    while (room() != want && now_ms() < until)
        sleep_ms(10);
    return room() == want;
}

/* The binder's room is MU_RELBIND_PODS_AHEAD less the members queued or
 * being bound: taken at submit, given back once the gang is over, bound
 * or not (stale: the view no longer holds it; unfit: a member no longer
 * plain). */
START_TEST(test_relbind_room_is_taken_at_submit_and_given_back)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;

    add_plain_gang(v, "g", 5, true);
    add_plain_gang(v, "h", 3, true);
    add_gang_of(v, "u", 2, true); /* not plain: unfit */
    fk.bind_delay_ms = (int)scaled(300);
    relbind_start(&rf, v);
    ck_assert_int_eq(room(), MU_RELBIND_PODS_AHEAD);
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 0);
    members_of(&gm, "g", 5);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#1", gm.m, 5), 0);
    members_of(&gm, "h", 3);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/h#1", gm.m, 3), 0);
    /* both binding (300 ms a bind): eight members held */
    ck_assert_int_eq(room(), MU_RELBIND_PODS_AHEAD - 8);
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 8);
    ck_assert(wait_count(reports, 2, 5000));
    ck_assert(wait_room(MU_RELBIND_PODS_AHEAD, 5000));
    ck_assert_int_eq(fk.n_reports_ok, 2);
    ck_assert_int_eq(count('b'), 8);
    /* a release of another id than the view's (stale) and an unfit one */
    members_of(&gm, "g", 5);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#0", gm.m, 5), 0);
    members_of(&gm, "u", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/u#1", gm.m, 2), 0);
    ck_assert(wait_count(stale, 1, 5000));
    ck_assert(wait_count(reports, 3, 5000));
    ck_assert(wait_room(MU_RELBIND_PODS_AHEAD, 5000));
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 0);
    ck_assert_int_eq(count('b'), 8);
    relbind_stop(&rf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("barrier");
    TCase *tc = tcase_create("barrier");
    TCase *bind = tcase_create("bind");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_checked_fixture(bind, setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(
        tc, test_barrier_binds_a_batch_of_three_at_once_from_three_threads);
    tcase_add_test(
        tc, test_barrier_missing_member_times_out_binds_nothing_reports_once);
    tcase_add_test(tc, test_barrier_late_arrival_after_a_timeout_fails_at_once);
    tcase_add_test(
        tc, test_barrier_refuses_a_waiter_beyond_the_cap_but_completes_batches);
    tcase_add_test(
        tc, test_barrier_failed_bind_undoes_the_bound_ones_and_fails_all);
    tcase_add_test(
        tc, test_barrier_undoes_a_member_whose_bind_may_have_gone_through);
    tcase_add_test(tc, test_barrier_serves_many_batches_at_once);
    tcase_add_test(tc, test_barrier_second_bind_of_a_waiting_pod_is_refused);
    tcase_add_test(tc, test_barrier_batch_of_one_binds_at_once_and_is_reported);
    tcase_add_test(
        tc, test_barrier_ambiguous_500_is_read_back_retried_and_ends_bound);
    tcase_add_test(tc,
                   test_barrier_a_409_whose_pod_is_bound_there_counts_as_bound);
    tcase_add_test(
        tc, test_barrier_member_failing_twice_then_binding_completes_the_gang);
    tcase_add_test(tc,
                   test_barrier_failed_member_is_retried_again_before_an_undo);
    tcase_add_test(tc, test_barrier_never_deletes_a_bare_pod_and_names_it);
    tcase_add_test(
        tc, test_barrier_a_pod_read_back_gone_is_not_retried_and_undoes);
    tcase_add_test(
        tc, test_barrier_gives_up_after_its_tries_and_keeps_the_bare_pods);
    tcase_add_test(
        tc, test_gang_bind_binds_every_plain_member_at_the_first_arrival);
    tcase_add_test(tc, test_gang_bind_records_the_span_of_a_gang_bound_whole);
    tcase_add_test(
        tc, test_gang_bind_a_member_arriving_during_the_binds_waits_for_them);
    tcase_add_test(
        tc, test_gang_bind_a_failed_member_undoes_the_gang_and_its_late_binds);
    tcase_add_test(tc,
                   test_gang_bind_waits_for_all_unless_every_member_is_plain);
    tcase_add_test(tc, test_gang_bind_never_deletes_a_bare_member);
    tcase_add_test(
        tc, test_gang_bind_answers_a_late_bind_the_view_no_longer_holds);
    tcase_add_test(tc, test_gang_bind_binds_at_most_the_cap_of_gangs_at_once);
    tcase_add_test(tc,
                   test_relbind_binds_a_released_gang_with_no_member_at_bind);
    tcase_add_test(tc, test_relbind_drops_a_release_the_view_no_longer_holds);
    tcase_add_test(
        tc, test_relbind_refuses_past_its_caps_and_free_drops_the_queue);
    tcase_add_test(tc, test_relbind_room_is_taken_at_submit_and_given_back);
    suite_add_tcase(s, tc);
    tcase_add_test(
        bind, test_bind_reserved_pod_outside_a_batch_binds_at_once_unreported);
    tcase_add_test(bind,
                   test_bind_refuses_a_uid_not_in_the_view_and_writes_nothing);
    tcase_add_test(bind,
                   test_bind_refuses_a_nul_in_any_field_and_writes_nothing);
    tcase_add_test(bind,
                   test_bind_refuses_a_reserved_uid_with_another_pods_name);
    tcase_add_test(bind, test_bind_undo_deletes_the_views_pod_by_uid);
    tcase_add_test(bind, test_bind_refuses_a_node_other_than_the_reserved_one);
    tcase_add_test(bind, test_bind_refuses_a_pod_that_must_wait);
    tcase_add_test(bind, test_bind_malformed_args_get_an_error);
    tcase_add_test(bind, test_bind_of_one_retries_an_ambiguous_failure);
    suite_add_tcase(s, bind);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
