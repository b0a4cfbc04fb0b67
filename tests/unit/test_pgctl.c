/* The PodGroup controller (src/ctrl/pgctl.h) with a real th.writer on the
 * fake API server: the exact requests it sends for a bare pod, and that it
 * sends each once. One worker, so requests arrive in submit order. */
#include <check.h>
#include <stdlib.h>

#include "ctrl/pgctl.h"
#include "test_ctl_harness.h"

static void setup(void)
{
    th_start(NULL);
}

static void teardown(void)
{
    th_stop_writer();
    th_stop();
}

static void add_pod(const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    struct mu_pod p;
    struct mu_err err;

    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(mu_pod_decode(j, &th.cluster.rn, &p, &err), 0);
    ck_assert_ptr_nonnull(mu_cluster_update_task(&th.cluster, &p, &err));
    json_decref(j);
}

/* Everything submitted is sent and its done callbacks made (which may
 * submit more: twice). */
static void settle(void)
{
    th_settle(3, 5000);
}

static json_t *body(size_t i)
{
    json_t *j = json_loads(kf_req(&th.srv, i)->body, 0, NULL);

    ck_assert_ptr_nonnull(j);
    return j;
}

#define RS_POD                                                                \
    "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"team-a\",\"uid\":"     \
    "\"pod-uid\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"  \
    "\"ReplicaSet\",\"name\":\"web-rs\",\"uid\":\"rs-uid\",\"controller\":"   \
    "true}]},\"spec\":{\"schedulerName\":\"volcano\",\"containers\":[{"       \
    "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"         \
    "\"status\":{\"phase\":\"Pending\"}}"

#define LONE_POD                                                              \
    "{\"metadata\":{\"name\":\"solo\",\"namespace\":\"team-a\",\"uid\":"      \
    "\"solo-uid\"},\"spec\":{\"schedulerName\":\"volcano\",\"containers\":"   \
    "[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\"}}"

START_TEST(test_bare_pod_gets_its_owners_group_once)
{
    json_t *b;

    kf_reply_body(&th.srv, 200,
                  "{\"metadata\":{\"name\":\"web-rs\",\"annotations\":{"
                  "\"scheduling.volcano.sh/group-min-member\":\"3\"}}}");
    kf_reply_body(&th.srv, 201, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    add_pod(RS_POD);
    struct mu_pgctl *pc = mu_pgctl_new(&th.ctl);

    mu_pgctl_sync(pc);
    mu_pgctl_sync(pc); /* its group write is in flight: nothing more */
    settle();
    mu_pgctl_sync(pc); /* made and patched: still nothing */
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 3);

    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "GET");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/apps/v1/namespaces/team-a/replicasets/web-rs");

    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/"
                     "podgroups");
    b = body(1);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(b, "metadata"), "name")),
                     "podgroup-rs-uid");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(b, "spec"), "minMember")), 3);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(b, "spec"),
                                         "minResources"), "cpu")), "3");
    json_decref(b);

    ck_assert_str_eq(kf_req(&th.srv, 2)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 2)->uri,
                     "/api/v1/namespaces/team-a/pods/web-1");
    ck_assert_str_eq(kf_req(&th.srv, 2)->content_type,
                     "application/merge-patch+json");
    b = body(2);
    {
        json_t *want = json_loads(
            "{\"metadata\":{\"annotations\":{\"scheduling.k8s.io/group-name\":"
            "\"podgroup-rs-uid\"}}}", 0, NULL);

        ck_assert(json_equal(b, want));
        json_decref(want);
    }
    json_decref(b);
    mu_writer_free(th.writer); /* before the controller its done calls reach */
    th.writer = NULL;
    mu_pgctl_free(pc);
}
END_TEST

START_TEST(test_a_podgroup_that_exists_counts_as_made)
{
    kf_reply_body(&th.srv, 409,
                  "{\"kind\":\"Status\",\"code\":409,\"reason\":"
                  "\"AlreadyExists\",\"message\":\"exists\"}");
    kf_reply_body(&th.srv, 200, "{}");
    add_pod(LONE_POD);
    struct mu_pgctl *pc = mu_pgctl_new(&th.ctl);

    mu_pgctl_sync(pc);
    settle();
    mu_pgctl_sync(pc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/"
                     "podgroups");
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/api/v1/namespaces/team-a/pods/solo");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 1)->body, "podgroup-solo-uid"));
    mu_writer_free(th.writer);
    th.writer = NULL;
    mu_pgctl_free(pc);
}
END_TEST

START_TEST(test_a_failed_create_is_retried_at_the_next_sync)
{
    kf_reply_body(&th.srv, 500,
                  "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd\"}");
    kf_reply_body(&th.srv, 201, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    add_pod(LONE_POD);
    struct mu_pgctl *pc = mu_pgctl_new(&th.ctl);

    mu_pgctl_sync(pc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 1); /* no patch for a group not made */
    ck_assert_ptr_nonnull(strstr(th.logged, "create podgroup team-a/podgroup-"
                                         "solo-uid"));
    mu_pgctl_sync(pc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 3);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/"
                     "podgroups");
    ck_assert_str_eq(kf_req(&th.srv, 2)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 2)->uri,
                     "/api/v1/namespaces/team-a/pods/solo");
    mu_writer_free(th.writer);
    th.writer = NULL;
    mu_pgctl_free(pc);
}
END_TEST

START_TEST(test_a_pod_whose_group_is_cached_is_only_annotated)
{
    json_t *pg = json_loads(
        "{\"metadata\":{\"name\":\"podgroup-solo-uid\",\"namespace\":"
        "\"team-a\",\"uid\":\"pg-uid\"},\"spec\":{\"minMember\":1}}", 0,
        NULL);
    struct mu_podgroup g;
    struct mu_err err;

    ck_assert_int_eq(mu_podgroup_decode(pg, &th.cluster.rn, &g, &err), 0);
    mu_cluster_update_job(&th.cluster, &g);
    mu_podgroup_release(&g);
    json_decref(pg);
    kf_reply_body(&th.srv, 200, "{}");
    add_pod(LONE_POD);
    struct mu_pgctl *pc = mu_pgctl_new(&th.ctl);

    mu_pgctl_sync(pc);
    settle();
    mu_pgctl_sync(pc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/api/v1/namespaces/team-a/pods/solo");
    mu_writer_free(th.writer);
    th.writer = NULL;
    mu_pgctl_free(pc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pgctl");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bare_pod_gets_its_owners_group_once);
    tcase_add_test(tc, test_a_podgroup_that_exists_counts_as_made);
    tcase_add_test(tc, test_a_failed_create_is_retried_at_the_next_sync);
    tcase_add_test(tc, test_a_pod_whose_group_is_cached_is_only_annotated);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
