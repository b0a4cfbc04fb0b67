/* Pieces of muster serve that need no cluster: the event queue and the
 * release patch. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "serve/serve_int.h"

static json_t *patch_for(const char *pod_json)
{
    json_t *pod = json_loads(pod_json, 0, NULL);
    json_t *p;

    ck_assert_ptr_nonnull(pod);
    p = mu_serve_release_patch(pod, "gpu-2");
    json_decref(pod);
    return p;
}

static void assert_patch(json_t *p, const char *want)
{
    json_t *w = json_loads(want, 0, NULL);
    char *got = json_dumps(p, JSON_SORT_KEYS);

    ck_assert_ptr_nonnull(w);
    ck_assert_msg(json_equal(p, w), "got %s", got);
    free(got);
    json_decref(w);
    json_decref(p);
}

START_TEST(test_release_patch_without_affinity_adds_it_and_drops_the_gate)
{
    assert_patch(
        patch_for("{\"spec\":{\"schedulingGates\":[{\"name\":\"muster.io/gang\"}]}}"),
        "[{\"op\":\"add\",\"path\":\"/spec/affinity\",\"value\":{\"nodeAffinity\":"
        "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
        "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
        "\"values\":[\"gpu-2\"]}]}]}}}},"
        "{\"op\":\"remove\",\"path\":\"/spec/schedulingGates\"}]");
}
END_TEST

START_TEST(test_release_patch_keeps_other_gates)
{
    assert_patch(
        patch_for("{\"spec\":{\"schedulingGates\":[{\"name\":\"a\"},"
                  "{\"name\":\"muster.io/gang\"}],\"affinity\":{}}}"),
        "[{\"op\":\"add\",\"path\":\"/spec/affinity/nodeAffinity\",\"value\":"
        "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
        "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
        "\"values\":[\"gpu-2\"]}]}]}}},"
        "{\"op\":\"replace\",\"path\":\"/spec/schedulingGates\",\"value\":"
        "[{\"name\":\"a\"}]}]");
}
END_TEST

START_TEST(test_release_patch_tightens_every_existing_term)
{
    assert_patch(
        patch_for("{\"spec\":{\"schedulingGates\":[{\"name\":\"muster.io/gang\"}],"
                  "\"affinity\":{\"nodeAffinity\":{\"requiredDuringScheduling"
                  "IgnoredDuringExecution\":{\"nodeSelectorTerms\":["
                  "{\"matchExpressions\":[{\"key\":\"z\",\"operator\":\"Exists\"}]},"
                  "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
                  "\"NotIn\",\"values\":[\"x\"]}]}]}}}}}"),
        "[{\"op\":\"add\",\"path\":\"/spec/affinity/nodeAffinity/required"
        "DuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchFields\","
        "\"value\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":"
        "[\"gpu-2\"]}]},"
        "{\"op\":\"add\",\"path\":\"/spec/affinity/nodeAffinity/required"
        "DuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/1/matchFields/-\","
        "\"value\":{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":"
        "[\"gpu-2\"]}},"
        "{\"op\":\"remove\",\"path\":\"/spec/schedulingGates\"}]");
}
END_TEST

START_TEST(test_evq_hands_over_everything_in_order)
{
    struct mu_evq q;
    struct mu_ev *all, *e;
    int i = 0;

    mu_evq_init(&q);
    for (int k = 0; k < 3; k++) {
        e = mu_xcalloc(1, sizeof(*e));
        e->src = MU_SRC_POD;
        e->obj = json_integer(k);
        mu_evq_push(&q, e);
    }
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    for (e = all; e; e = e->next, i++)
        ck_assert_int_eq(json_integer_value(e->obj), i);
    ck_assert_int_eq(i, 3);
    mu_ev_free(all);
    ck_assert_ptr_null(q.head);
    mu_evq_release(&q);
}
END_TEST

START_TEST(test_evq_take_returns_at_the_deadline_when_empty)
{
    struct mu_evq q;
    int64_t t0 = mu_now_ns();

    mu_evq_init(&q);
    ck_assert_ptr_null(mu_evq_take(&q, t0 + 50000000LL));
    ck_assert_int_ge(mu_now_ns() - t0, 45000000LL);
    mu_evq_release(&q);
}
END_TEST

static struct mu_ev *ev_of(enum mu_src src, int k)
{
    struct mu_ev *e = mu_xcalloc(1, sizeof(*e));

    e->src = src;
    e->obj = json_integer(k);
    return e;
}

static size_t count(struct mu_ev *all, enum mu_src src)
{
    size_t n = 0;

    for (struct mu_ev *e = all; e; e = e->next)
        n += e->src == src;
    return n;
}

struct pusher {
    struct mu_evq *q;
    int k;
    atomic_bool done;
};

static void *push_main(void *arg)
{
    struct pusher *p = arg;

    mu_evq_push(p->q, ev_of(MU_SRC_POD, p->k));
    atomic_store(&p->done, true);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

START_TEST(test_evq_full_blocks_a_watch_until_the_scheduler_takes)
{
    struct mu_evq q;
    struct pusher p = {.q = &q, .k = 2};
    struct mu_ev *all;
    pthread_t th;

    mu_evq_init(&q);
    ck_assert_uint_eq(q.cap, MU_EVQ_CAP);
    q.cap = 2;
    mu_evq_push(&q, ev_of(MU_SRC_POD, 0));
    mu_evq_push(&q, ev_of(MU_SRC_NODE, 1));
    ck_assert_int_eq(pthread_create(&th, NULL, push_main, &p), 0);
    sleep_ms(100);
    ck_assert(!atomic_load(&p.done)); /* held back, not dropped */
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    ck_assert_uint_eq(count(all, MU_SRC_POD) + count(all, MU_SRC_NODE), 2);
    mu_ev_free(all);
    pthread_join(th, NULL);
    ck_assert(atomic_load(&p.done));
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    ck_assert_ptr_nonnull(all);
    ck_assert_int_eq(json_integer_value(all->obj), 2);
    ck_assert_ptr_null(all->next);
    mu_ev_free(all);
    mu_evq_release(&q);
}
END_TEST

START_TEST(test_evq_full_never_blocks_what_the_scheduler_waits_for)
{
    struct mu_evq q;
    struct mu_ev *all, *e;

    mu_evq_init(&q);
    q.cap = 1;
    mu_evq_push(&q, ev_of(MU_SRC_POD, 0)); /* full now */
    /* on this (the only) thread: any of these blocking hangs the test */
    e = ev_of(MU_SRC_BIND_REPORT, 1);
    e->release = mu_xstrdup("a/g#1");
    mu_evq_push(&q, e);
    mu_evq_push(&q, ev_of(MU_SRC_WRITE_DONE, 2));
    mu_evq_push(&q, ev_of(MU_SRC_WRITE_DONE, 3)); /* folded into the first */
    mu_evq_push(&q, ev_of(MU_SRC_FILTER_MISS, 4));
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    ck_assert_uint_eq(count(all, MU_SRC_POD), 1);
    ck_assert_uint_eq(count(all, MU_SRC_BIND_REPORT), 1);
    ck_assert_uint_eq(count(all, MU_SRC_WRITE_DONE), 1);
    ck_assert_uint_eq(count(all, MU_SRC_FILTER_MISS), 1);
    mu_ev_free(all);
    /* taken: the next completion is queued again */
    mu_evq_push(&q, ev_of(MU_SRC_WRITE_DONE, 5));
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    ck_assert_uint_eq(count(all, MU_SRC_WRITE_DONE), 1);
    mu_ev_free(all);
    mu_evq_release(&q);
}
END_TEST

START_TEST(test_evq_filter_misses_over_the_cap_are_counted)
{
    struct mu_evq q;
    struct mu_ev *all;

    mu_evq_init(&q);
    for (unsigned i = 0; i < MU_EVQ_MISS_CAP + 3; i++)
        mu_evq_push(&q, ev_of(MU_SRC_FILTER_MISS, (int)i));
    ck_assert_uint_eq(q.misses_dropped, 3);
    all = mu_evq_take(&q, mu_now_ns() + 1000000000LL);
    ck_assert_uint_eq(count(all, MU_SRC_FILTER_MISS), MU_EVQ_MISS_CAP);
    mu_ev_free(all);
    mu_evq_release(&q);
}
END_TEST

START_TEST(test_evq_close_releases_a_blocked_watch)
{
    struct mu_evq q;
    struct pusher p = {.q = &q, .k = 1};
    pthread_t th;

    mu_evq_init(&q);
    q.cap = 1;
    mu_evq_push(&q, ev_of(MU_SRC_POD, 0));
    ck_assert_int_eq(pthread_create(&th, NULL, push_main, &p), 0);
    sleep_ms(50);
    ck_assert(!atomic_load(&p.done));
    mu_evq_close(&q);
    pthread_join(th, NULL);
    ck_assert(atomic_load(&p.done));
    ck_assert_uint_eq(q.n, 1); /* the blocked event was not queued */
    mu_evq_release(&q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_release_patch_without_affinity_adds_it_and_drops_the_gate);
    tcase_add_test(tc, test_release_patch_keeps_other_gates);
    tcase_add_test(tc, test_release_patch_tightens_every_existing_term);
    tcase_add_test(tc, test_evq_hands_over_everything_in_order);
    tcase_add_test(tc, test_evq_take_returns_at_the_deadline_when_empty);
    tcase_add_test(tc, test_evq_full_blocks_a_watch_until_the_scheduler_takes);
    tcase_add_test(tc, test_evq_full_never_blocks_what_the_scheduler_waits_for);
    tcase_add_test(tc, test_evq_filter_misses_over_the_cap_are_counted);
    tcase_add_test(tc, test_evq_close_releases_a_blocked_watch);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
