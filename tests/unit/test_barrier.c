/*
 * The /bind barrier and mu_ext_bind, on the fake binder of
 * test_bind_fake.h (every call recorded; the read-back answers as an
 * apiserver would). The release binder's tests are test_relbind.c.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "api/json.h"
#include "test_bind_fake.h"

START_TEST(test_barrier_binds_a_batch_of_three_at_once_from_three_threads)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(5000);
    struct member m[3];

    bf_add_gang(v, "g", 3);
    fk.bind_delay_ms = (int)bf_scaled(100);
    for (int i = 0; i < 3; i++)
        bf_start_member(&m[i], b, v, "g", i, 30 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(m[i].error, "");
    ck_assert_int_eq(fk.n_calls, 3);
    for (int i = 0; i < 3; i++) { /* each once, on its node */
        const struct call *c = bf_call_of('b', m[i].uid);

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
    struct mu_barrier *b = bf_barrier(300);
    struct member m[2];
    int64_t t0 = bf_now_ms();

    bf_add_gang(v, "g", 3);
    for (int i = 0; i < 2; i++)
        bf_start_member(&m[i], b, v, "g", i, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(strstr(m[i].error, "2 of 3 members reached bind"), "%s",
                      m[i].error);
        ck_assert_int_ge(m[i].returned_ms - t0, bf_scaled(300) - 10);
        ck_assert_int_lt(m[i].returned_ms - t0, bf_scaled(3000));
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
    struct mu_barrier *b = bf_barrier(5000);
    struct member g[3], h[3];
    int64_t t0;

    bf_add_gang(v, "g", 3);
    bf_add_gang(v, "h", 3);
    mu_barrier_set_max_waiting(b, 2);
    for (int i = 0; i < 2; i++)
        bf_start_member(&g[i], b, v, "g", i, 0);
    bf_sleep_ms(bf_scaled(100)); /* both wait: the cap is full */
    t0 = bf_now_ms();
    bf_start_member(&h[0], b, v, "h", 0, 0);
    pthread_join(h[0].t, NULL);
    ck_assert_int_lt(h[0].returned_ms - t0, bf_scaled(800)); /* not waited */
    ck_assert_msg(strstr(h[0].error, "wait in /bind already (the cap)"), "%s",
                  h[0].error);
    ck_assert_int_eq(bf_count('b'), 0);
    bf_start_member(&g[2], b, v, "g", 2, 0); /* completes g: comes in */
    for (int i = 0; i < 3; i++)
        pthread_join(g[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(g[i].error, "");
    ck_assert_int_eq(bf_count('b'), 3);
    /* g is done: h's members may wait again, and bind */
    for (int i = 0; i < 3; i++)
        bf_start_member(&h[i], b, v, "h", i, 10 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(h[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(h[i].error, "");
    ck_assert_int_eq(bf_count('b'), 6);
    ck_assert_int_eq(fk.n_reports_ok, 2);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_barrier_late_arrival_after_a_timeout_fails_at_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(1000);
    struct member m[3];
    int64_t t0;

    bf_add_gang(v, "g", 3);
    for (int i = 0; i < 2; i++)
        bf_start_member(&m[i], b, v, "g", i, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(m[i].t, NULL);
    t0 = bf_now_ms();
    bf_start_member(&m[2], b, v, "g", 2, 0);
    pthread_join(m[2].t, NULL);
    ck_assert_int_lt(m[2].returned_ms - t0, bf_scaled(800)); /* no new wait */
    ck_assert_msg(strstr(m[2].error, "its batch is over"), "%s", m[2].error);
    ck_assert_msg(strstr(m[2].error, "2 of 3"), "%s", m[2].error);
    ck_assert_int_eq(fk.n_calls, 0);
    ck_assert_int_eq(fk.n_reports, 1); /* the timeout, once */
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* Gang g of three binds with g-1 failing with rc (bf_fake_bind: -ETIMEDOUT
 * or a refusal); each member's error must contain want. */
static void three_with_a_failure(int rc, const char *want)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(5000);
    struct member m[3];

    bf_add_gang(v, "g", 3);
    fk.fail_uid = "g-1";
    fk.fail_rc = rc;
    for (int i = 0; i < 3; i++)
        bf_start_member(&m[i], b, v, "g", i, 30 * i);
    for (int i = 0; i < 3; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(strstr(m[i].error, want), "%s", m[i].error);
    ck_assert_int_eq(bf_count('b'), 3); /* all three bound at once */
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
    ck_assert_ptr_nonnull(bf_call_of('u', "g-0"));
    ck_assert_ptr_nonnull(bf_call_of('u', "g-2"));
    ck_assert_ptr_null(bf_call_of('u', "g-1"));
    for (int i = 3; i < 5; i++)
        ck_assert_int_eq(fk.calls[i].op, 'u');
}
END_TEST

START_TEST(test_barrier_undoes_a_member_whose_bind_may_have_gone_through)
{
    /* a timeout: the apiserver may have bound g-1, so it is undone too */
    three_with_a_failure(-ETIMEDOUT,
                         "the 3 members bound or maybe bound were deleted");
    ck_assert_int_eq(bf_count('u'), 3);
    for (int i = 0; i < 3; i++) {
        char uid[8];

        snprintf(uid, sizeof(uid), "g-%d", i);
        ck_assert_ptr_nonnull(bf_call_of('u', uid));
    }
}
END_TEST

#define N_GANGS 60
#define GANG_SIZE 4

START_TEST(test_barrier_serves_many_batches_at_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(20000);
    static struct member m[N_GANGS * GANG_SIZE];
    unsigned seed = 3;

    fk.bind_delay_ms = 2;
    for (int g = 0; g < N_GANGS; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%d", g);
        bf_add_gang(v, name, GANG_SIZE);
    }
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++) {
        char name[16];

        seed = seed * 1103515245u + 12345u;
        snprintf(name, sizeof(name), "g%d", i % N_GANGS);
        bf_start_member(&m[i], b, v, name, i / N_GANGS, (int)(seed >> 16) % 50);
    }
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++)
        pthread_join(m[i].t, NULL);
    for (int i = 0; i < N_GANGS * GANG_SIZE; i++)
        ck_assert_msg(!m[i].error[0], "%s", m[i].error);
    ck_assert_int_eq(bf_count('b'), N_GANGS * GANG_SIZE);
    ck_assert_int_eq(bf_count('u'), 0);
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
    struct mu_barrier *b = bf_barrier(300);
    struct member m[2];

    bf_add_gang(v, "g", 3);
    bf_start_member(&m[0], b, v, "g", 0, 0);
    bf_start_member(&m[1], b, v, "g", 0, 50);
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
    struct mu_barrier *b = bf_barrier(5000);
    json_t *a = bf_bind_args("g-w0", "g-0", "node-g-0");
    json_t *r;

    bf_add_gang(v, "g", 1);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r), "");
    ck_assert_int_eq(bf_count('b'), 1);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    json_decref(r);
    /* the same batch again: already bound */
    r = mu_ext_bind(b, v, a);
    ck_assert_msg(strstr(bf_error_of(r), "already bound"), "%s",
                  bf_error_of(r));
    ck_assert_int_eq(bf_count('b'), 1);
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
    struct mu_barrier *b = bf_barrier(5000);
    json_t *a = bf_bind_args("web-1", "u-web", "node-7");
    json_t *r;

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r), "");
    ck_assert_int_eq(fk.n_calls, 1);
    ck_assert_str_eq(fk.calls[0].uid, "u-web");
    ck_assert_str_eq(fk.calls[0].node, "node-7");
    ck_assert_int_eq(fk.n_reports, 0);
    json_decref(r);
    /* a failing bind of one is an error, still unreported */
    fk.fail_uid = "u-web";
    r = mu_ext_bind(b, v, a);
    ck_assert_msg(strstr(bf_error_of(r),
                         "binding team-a/web-1 to node-7 failed: "
                         "pods \"web-1\" is forbidden"),
                  "%s", bf_error_of(r));
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
    struct mu_barrier *b = bf_barrier(5000);

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        json_t *a = mu_json_loadb(bodies[i], strlen(bodies[i]), NULL);
        json_t *r;

        ck_assert_ptr_nonnull(a);
        r = mu_ext_bind(b, v, a);
        ck_assert_msg(strstr(bf_error_of(r),
                             "must not contain a NUL character"),
                      "%s: %s", bodies[i], bf_error_of(r));
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
    struct mu_barrier *b = bf_barrier(5000);
    /* a pending kube-system pod's name with a uid muster never placed */
    json_t *a = json_pack("{s:s,s:s,s:s,s:s}", "PodName", "coredns-0",
                          "PodNamespace", "kube-system", "PodUID", "u-dns",
                          "Node", "tainted-1");
    json_t *r;

    bf_add_gang(v, "g", 2);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r),
                     "pod uid u-dns (kube-system/coredns-0) is not in "
                     "muster's view: muster binds only pods it has placed "
                     "(kube-scheduler retries once muster knows the pod)");
    json_decref(r);
    /* nothing published yet, or not synced: refused as well */
    r = mu_ext_bind(b, NULL, a);
    ck_assert_str_eq(bf_error_of(r), "muster is starting (caches not synced): "
                                  "not binding kube-system/coredns-0");
    json_decref(r);
    r = mu_ext_bind(b, unsynced, a);
    ck_assert(strstr(bf_error_of(r), "muster is starting"));
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
    struct mu_barrier *b = bf_barrier(5000);
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

    bf_add_gang(v, "g", 1);
    for (size_t i = 0; i < MU_ARRAY_LEN(forged); i++) {
        r = mu_ext_bind(b, v, forged[i]);
        ck_assert_msg(strstr(bf_error_of(r), "pod uid g-0 is team-a/g-w0 in "
                                          "muster's view, not "),
                      "%zu: %s", i, bf_error_of(r));
        json_decref(r);
        json_decref(forged[i]);
    }
    ck_assert_int_eq(fk.n_calls, 0);
    ck_assert_int_eq(fk.n_reports, 0);
    /* the genuine request still binds (the batch was not spent) */
    forged[0] = bf_bind_args("g-w0", "g-0", "node-g-0");
    r = mu_ext_bind(b, v, forged[0]);
    ck_assert_str_eq(bf_error_of(r), "");
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
    ck_assert_int_eq(bf_count('u'), 2);
}
END_TEST

START_TEST(test_bind_refuses_a_node_other_than_the_reserved_one)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(5000);
    json_t *a = bf_bind_args("g-w0", "g-0", "node-elsewhere");
    json_t *r;

    bf_add_gang(v, "g", 2);
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r),
                     "muster reserved node-g-0 for team-a/g-w0, "
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
    struct mu_barrier *b = bf_barrier(5000);
    json_t *a = bf_bind_args("w-1", "u-wait", "node-1");
    json_t *r;

    mu_view_add_pod(v, "u-wait", "team-a", "w-1", "team-a/pg", NULL, NULL, 0,
                    "3/4 members");
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r), "muster holds no node for team-a/w-1 "
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
    struct mu_barrier *b = bf_barrier(5000);
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
        ck_assert_msg(strstr(bf_error_of(r), "malformed ExtenderBindingArgs"),
                      "%zu: %s", i, bf_error_of(r));
        json_decref(r);
        json_decref(cases[i]);
    }
    ck_assert_int_eq(fk.n_calls, 0);
    mu_view_add_pod(v, "u", "ns", "p", "ns/pg", "n", NULL, 0, NULL);
    r = mu_ext_bind(b, v, lower); /* any case is fine */
    ck_assert_str_eq(bf_error_of(r), "");
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
    struct mu_barrier *b = bf_barrier_checked(5000);

    bf_add_gang_of(v, "g", n, controlled);
    for (int i = 0; i < n; i++)
        bf_start_member(&m[i], b, v, "g", i, 10 * i);
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
    ck_assert_int_eq(bf_count_of('b', "g-0"), 1);
    ck_assert_int_eq(bf_count_of('b', "g-1"), 2); /* the 500, then a bind */
    ck_assert_int_eq(bf_count_of('c', "g-1"), 1); /* read back once */
    ck_assert_int_eq(bf_count('u'), 0);
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), 1); /* not sent again */
    ck_assert_int_eq(bf_count_of('c', "g-1"), 1);
    ck_assert_int_eq(bf_count('u'), 0);
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), 3);
    ck_assert_int_eq(bf_count('u'), 0);
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), MU_BARRIER_BIND_TRIES + 2);
    ck_assert_int_eq(bf_count('u'), 0);
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), 1);
    ck_assert_int_eq(bf_count('c'), 0); /* a refusal is not read back */
    ck_assert_int_eq(bf_count('u'), 0); /* nothing deleted */
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), 1);
    ck_assert_int_eq(bf_count_of('u', "g-0"), 1);
    ck_assert_int_eq(bf_count_of('u', "g-1"), 0);
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
    ck_assert_int_eq(bf_count_of('b', "g-1"), 2 * MU_BARRIER_BIND_TRIES);
    ck_assert_int_eq(bf_count('u'), 0);
}
END_TEST

START_TEST(test_bind_of_one_retries_an_ambiguous_failure)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier_checked(5000);
    json_t *a = bf_bind_args("web-1", "u-web", "node-7");
    json_t *r;

    mu_view_add_pod(v, "u-web", "team-a", "web-1", "team-a/web", "node-7",
                    NULL, 0, NULL);
    fk.fail_uid = "u-web";
    fk.fail_rc = -EIO;
    fk.fail_times = 1;
    r = mu_ext_bind(b, v, a);
    ck_assert_str_eq(bf_error_of(r), "");
    ck_assert_int_eq(bf_count_of('b', "u-web"), 2);
    json_decref(r);
    json_decref(a);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* ---- a plain gang bound whole at its first member (mu_barrier_bind_gang) */

START_TEST(test_gang_bind_binds_every_plain_member_at_the_first_arrival)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(60000);
    struct member m;
    int64_t t0 = bf_now_ms();

    bf_add_plain_gang(v, "g", 4, true);
    fk.bind_delay_ms = (int)bf_scaled(100);
    bf_bind_member(&m, b, v, "g", 2);
    ck_assert_str_eq(m.error, "");
    /* no wait for the others: well under the barrier's 60 s */
    ck_assert_int_lt(m.returned_ms - t0, bf_scaled(2000));
    ck_assert_int_eq(bf_count('b'), 4);
    for (int i = 0; i < 4; i++) {
        char uid[32], node[32];

        snprintf(uid, sizeof(uid), "g-%d", i);
        snprintf(node, sizeof(node), "node-g-%d", i);
        ck_assert_ptr_nonnull(bf_bound_on(uid));
        ck_assert_str_eq(bf_bound_on(uid), node);
    }
    ck_assert_int_eq(fk.max_in_bind, 4); /* on four threads at once */
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_int_eq(fk.n_reports_timed_out, 0);
    /* kube-scheduler brings the others later: bound already, no bind */
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        bf_bind_member(&m, b, v, "g", i);
        ck_assert_str_eq(m.error, "");
    }
    ck_assert_int_eq(bf_count('b'), 4);
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
    struct mu_barrier *b = bf_barrier(60000);
    struct mu_ext_stats st;
    struct member m;

    memset(&st, 0, sizeof(st));
    mu_hist_init(&st.span_hist, mu_hist_barrier, mu_hist_barrier_n);
    mu_barrier_set_stats(b, &st);
    bf_add_plain_gang(v, "g", 4, true);
    bf_add_plain_gang(v, "h", 2, true);
    fk.slow_uid = "g-3";
    fk.slow_ms = (int)bf_scaled(300);
    bf_bind_member(&m, b, v, "g", 0);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(bf_count('b'), 4);
    ck_assert_uint_eq(atomic_load(&st.gangs_first_ok), 1);
    /* one observation, of at least half the slow member's delay (the
     * other three are answered at once) */
    ck_assert_uint_eq(hist_total(&st.span_hist), 1);
    ck_assert_uint_ge(atomic_load(&st.span_hist.sum_ns),
                      (unsigned long long)bf_scaled(150) * 1000000ull);
    /* h fails: no span */
    fk.slow_uid = NULL;
    fk.fail_uid = "h-1";
    bf_bind_member(&m, b, v, "h", 0);
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
    struct mu_barrier *b = bf_barrier(60000);
    struct member m[2];

    bf_add_plain_gang(v, "g", 3, true);
    fk.bind_delay_ms = (int)bf_scaled(300);
    bf_start_member(&m[0], b, v, "g", 0, 0);
    bf_start_member(&m[1], b, v, "g", 1, (int)bf_scaled(100));
    pthread_join(m[0].t, NULL);
    pthread_join(m[1].t, NULL);
    ck_assert_str_eq(m[0].error, "");
    ck_assert_str_eq(m[1].error, "");
    ck_assert_int_eq(bf_count('b'), 3); /* each once */
    ck_assert_int_eq(bf_count_of('b', "g-1"), 1);
    /* the second returned only once the binds were done */
    ck_assert_int_ge(m[1].returned_ms, m[0].returned_ms - bf_scaled(50));
    ck_assert_int_eq(fk.n_reports, 1);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

START_TEST(test_gang_bind_a_failed_member_undoes_the_gang_and_its_late_binds)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_barrier *b = bf_barrier(60000);
    struct member m;

    bf_add_plain_gang(v, "g", 3, true);
    fk.fail_uid = "g-2";
    fk.fail_rc = -EPERM; /* refused: surely not bound */
    bf_bind_member(&m, b, v, "g", 0);
    ck_assert_ptr_nonnull(strstr(m.error, "binding team-a/g-w2 to node-g-2 "
                                          "failed"));
    ck_assert_ptr_nonnull(strstr(m.error, "the 2 members bound or maybe "
                                          "bound were deleted"));
    ck_assert_int_eq(bf_count_of('u', "g-0"), 1);
    ck_assert_int_eq(bf_count_of('u', "g-1"), 1);
    ck_assert_int_eq(bf_count_of('u', "g-2"), 0);
    ck_assert_int_eq(fk.n_reports, 1);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    /* a later member's /bind fails at once, binding nothing */
    bf_bind_member(&m, b, v, "g", 1);
    ck_assert_ptr_nonnull(strstr(m.error, "its batch is over"));
    ck_assert_int_eq(bf_count('b'), 3);
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
        struct mu_barrier *b = bf_barrier(300);
        struct member m;

        bf_setup();
        bf_add_plain_gang(v, "g", 3, true);
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
        bf_bind_member(&m, b, v, "g", 0);
        ck_assert_ptr_nonnull(strstr(m.error, "1 of 3 members reached bind"));
        ck_assert_int_eq(bf_count('b'), 0);
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
    struct mu_barrier *b = bf_barrier(60000);
    struct member m;

    bf_add_plain_gang(v, "g", 2, false);
    fk.fail_uid = "g-1";
    fk.fail_rc = -EPERM;
    bf_bind_member(&m, b, v, "g", 0);
    ck_assert_ptr_nonnull(strstr(m.error, "1 member bound or maybe bound, "
                                          "with no controller"));
    ck_assert_int_eq(bf_count('u'), 0);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

/* Once muster's cache sees the binds, the next view no longer holds the
 * bound pods: kube-scheduler's late /bind of one is answered from the
 * bf_barrier (bound there, with its gang), and nothing is written. */
START_TEST(test_gang_bind_answers_a_late_bind_the_view_no_longer_holds)
{
    struct mu_view *v = mu_view_new(1, true), *later = mu_view_new(2, true);
    struct mu_barrier *b = bf_barrier(60000);
    struct member m;
    json_t *a, *r;

    bf_add_plain_gang(v, "g", 2, true);
    bf_bind_member(&m, b, v, "g", 0);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(bf_count('b'), 2);
    bf_bind_member(&m, b, later, "g", 1);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(bf_count('b'), 2);
    /* on another node, or a uid no gang bound: refused as before */
    a = bf_bind_args("g-w1", "g-1", "node-g-0");
    r = mu_ext_bind(b, later, a);
    ck_assert_ptr_nonnull(strstr(bf_error_of(r), "is not in muster's view"));
    json_decref(r);
    json_decref(a);
    a = bf_bind_args("x-w0", "x-0", "node-g-0");
    r = mu_ext_bind(b, later, a);
    ck_assert_ptr_nonnull(strstr(bf_error_of(r), "is not in muster's view"));
    json_decref(r);
    json_decref(a);
    ck_assert_int_eq(bf_count('b'), 2);
    ck_assert_int_eq(bf_count('u'), 0);
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
    struct mu_barrier *b = bf_barrier(60000);
    struct member m[NG];

    for (int g = 0; g < NG; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%02d", g);
        bf_add_plain_gang(v, name, 2, true);
    }
    fk.bind_delay_ms = (int)bf_scaled(200);
    for (int g = 0; g < NG; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%02d", g);
        bf_start_member(&m[g], b, v, name, 0, 0);
    }
    for (int g = 0; g < NG; g++)
        pthread_join(m[g].t, NULL);
    for (int g = 0; g < NG; g++)
        ck_assert_str_eq(m[g].error, "");
    ck_assert_int_eq(bf_count('b'), 2 * NG);
    ck_assert_int_le(fk.max_in_bind, 2 * 16);
    ck_assert_int_ge(fk.max_in_bind, 2); /* a gang's two at once */
    ck_assert_int_eq(fk.n_reports_ok, NG);
    mu_barrier_free(b);
    mu_view_put(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("barrier");
    TCase *tc = tcase_create("barrier");
    TCase *bind = tcase_create("bind");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, bf_setup, NULL);
    tcase_add_checked_fixture(bind, bf_setup, NULL);
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
