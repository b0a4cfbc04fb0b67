/* Pieces of muster serve that need no cluster: the event queue and the
 * release patch. */
#include <check.h>
#include <stdlib.h>

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
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
