/* HyperNode status.nodeCount (src/serve/hnstatus.h) with a real writer on
 * the fake API server: the exact patch, nothing sent again for a count
 * written or already on the status, a failure said once and not sent
 * again at every cycle. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "serve/hnstatus.h"
#include "test_ctl_harness.h"

static struct mu_topo topo;

static void setup(void)
{
    mu_topo_init(&topo);
    th.cluster.topo = &topo;
}

static void teardown(void)
{
    th_stop_writer();
    th_stop();
    mu_topo_free(&topo);
}

static void add_node(const char *name)
{
    char buf[256];
    struct mu_node n;
    json_t *j;

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
             "{\"cpu\":\"8\"}}}", name);
    j = json_loads(buf, 0, NULL);
    ck_assert_int_eq(mu_node_decode(j, &th.cluster.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&th.cluster, &n, NULL));
    json_decref(j);
}

/* rack-a selecting nodes a*, its status saying count (-1: no status) */
static void put_rack(int count)
{
    char buf[512];
    struct mu_hypernode h;
    json_t *j;

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"rack-a\"},\"spec\":{\"tier\":1,"
             "\"members\":[{\"type\":\"Node\",\"selector\":{\"regexMatch\":"
             "{\"pattern\":\"^a\"}}}]}%s}",
             count < 0 ? "" : count == 2 ? ",\"status\":{\"nodeCount\":2}"
                                         : ",\"status\":{\"nodeCount\":9}");
    j = json_loads(buf, 0, NULL);
    ck_assert_int_eq(mu_hypernode_decode(j, &h, NULL), 0);
    ck_assert_int_eq(mu_topo_put(&topo, &h), 0);
    json_decref(j);
}

START_TEST(test_nodecount_is_patched_once)
{
    struct mu_hnstatus s;

    th_start(NULL);
    setup();
    add_node("a1");
    add_node("a2");
    add_node("b1");
    put_rack(-1);
    mu_topo_sync(&topo, &th.cluster, NULL);
    kf_reply_body(&th.srv, 200, "{}");
    mu_hnstatus_init(&s, &th.ctl);
    mu_hnstatus_write(&s, &topo);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert(strstr(kf_req(&th.srv, 0)->path,
                     "/apis/topology.volcano.sh/v1alpha1/hypernodes/rack-a/"
                     "status"));
    ck_assert_str_eq(kf_req(&th.srv, 0)->body, "{\"status\":{\"nodeCount\":2}}");
    ck_assert_str_eq(kf_req(&th.srv, 0)->content_type,
                     "application/merge-patch+json");
    mu_hnstatus_write(&s, &topo); /* written: not again */
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    th_stop_writer();
    mu_hnstatus_release(&s);
}
END_TEST

START_TEST(test_a_status_that_says_it_already_is_left)
{
    struct mu_hnstatus s;

    th_start(NULL);
    setup();
    add_node("a1");
    add_node("a2");
    put_rack(2);
    mu_topo_sync(&topo, &th.cluster, NULL);
    mu_hnstatus_init(&s, &th.ctl);
    mu_hnstatus_write(&s, &topo);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 0);
    th_stop_writer();
    mu_hnstatus_release(&s);
}
END_TEST

START_TEST(test_a_failure_is_said_once_and_not_sent_every_cycle)
{
    struct mu_hnstatus s;

    th_start(NULL);
    setup();
    add_node("a1");
    put_rack(9);
    mu_topo_sync(&topo, &th.cluster, NULL);
    kf_reply_body(&th.srv, 403, "{\"kind\":\"Status\",\"message\":\"forbidden\"}");
    mu_hnstatus_init(&s, &th.ctl);
    mu_hnstatus_write(&s, &topo);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    for (int i = 0; i < 5; i++) /* cycles within the retry delay */
        mu_hnstatus_write(&s, &topo);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_msg(strstr(th.logged, "status of hypernode rack-a: ") != NULL,
                  "%s", th.logged);
    ck_assert(strstr(th.logged, "(sent again every 30 s while it fails)"));
    th_stop_writer();
    mu_hnstatus_release(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hnstatus");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_nodecount_is_patched_once);
    tcase_add_test(tc, test_a_status_that_says_it_already_is_left);
    tcase_add_test(tc, test_a_failure_is_said_once_and_not_sent_every_cycle);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
