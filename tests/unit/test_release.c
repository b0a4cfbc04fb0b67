/* The requests that release a pod through the writer
 * (src/serve/enforce.c: mu_serve_release_run, the release and wake-up
 * patches), against the fake API server of the kube tests. */
#include <check.h>
#include <stdlib.h>

#include "serve/serve_int.h"
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

/* -------------------------------------------------------- release patch -- */

START_TEST(test_release_smp_drops_the_gate_by_name_and_pins_with_a_uid)
{
    json_t *p = mu_serve_release_smp("u-1", "gpu-2");
    json_t *want = json_loads(
        "{\"metadata\":{\"uid\":\"u-1\"},\"spec\":{\"schedulingGates\":"
        "[{\"$patch\":\"delete\",\"name\":\"muster.io/gang\"}],\"affinity\":"
        "{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
        "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
        "\"operator\":\"In\",\"values\":[\"gpu-2\"]}]}]}}}}}",
        0, NULL);

    ck_assert_ptr_nonnull(want);
    ck_assert(json_equal(p, want));
    json_decref(p);
    json_decref(want);
    p = mu_serve_release_smp(NULL, "gpu-2");
    ck_assert_ptr_null(json_object_get(p, "metadata"));
    json_decref(p);
}
END_TEST

/* What enforce.c sends to release one pod, on the fake server. */
static struct mu_kube *plain_client(void)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err;

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_int_eq(mu_kube_new(&cfg, NULL, &k, &err), 0);
    mu_kube_config_release(&cfg);
    return k;
}

static int release(bool gated, bool smp, struct mu_err *err)
{
    char node[] = "gpu-2", uid[] = "u-1", rel[] = "a/g#1";
    struct mu_release c = {.node = node, .uid = uid, .release = rel,
                           .batch = 2, .gated = gated, .smp = smp};
    struct mu_write w = {.method = "PATCH",
                         .path = "/api/v1/namespaces/a/pods/p"};
    struct mu_kube *k = plain_client();
    int rc;

    if (smp) {
        w.body = mu_serve_release_smp(c.uid, c.node);
        mu_serve_release_annotate(w.body, rel, 2, node, true);
        w.content_type = "application/strategic-merge-patch+json";
    } else if (!gated) {
        w.path = "/api/v1/namespaces/a/pods/p/status";
        w.body = mu_serve_wake_patch(c.uid, c.node, "a/g#1");
        mu_serve_release_annotate(w.body, rel, 2, node, false);
        w.content_type = MU_KUBE_MERGE_PATCH;
    }
    rc = mu_serve_release_run(k, &w, &c, err);
    json_decref(w.body);
    mu_kube_free(k);
    return rc;
}

static const char *gated_pod_with_a_term =
    "{\"metadata\":{\"name\":\"p\",\"uid\":\"u-1\"},\"spec\":"
    "{\"schedulingGates\":[{\"name\":\"muster.io/gang\"}],\"affinity\":"
    "{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\","
    "\"operator\":\"Exists\"}]}]}}}}}";

static const char *status_422 =
    "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\","
    "\"message\":\"only additions are allowed\"}";

START_TEST(test_release_of_a_plain_gated_pod_is_one_strategic_merge_patch)
{
    struct mu_err err;

    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(release(true, true, &err), 0);
    ck_assert_uint_eq(kf_count(&srv), 1);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "PATCH");
    ck_assert_str_eq(kf_req(&srv, 0)->content_type,
                     "application/strategic-merge-patch+json");
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 0)->body, "\"$patch\""));
    /* the release's record, in the same request (takeover) */
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 0)->body,
                                 "\"muster.io/release\":\"a/g#1\""));
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 0)->body,
                                 "\"muster.io/release-size\":\"2\""));
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 0)->body,
                                 "\"muster.io/release-pinned\":\"true\""));
}
END_TEST

START_TEST(test_release_refused_as_invalid_reads_the_pod_and_tightens_its_terms)
{
    struct mu_err err;
    const struct kf_request *r;
    json_t *got, *want;

    kf_reply_body(&srv, 422, status_422);
    kf_reply_body(&srv, 200, gated_pod_with_a_term);
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(release(true, true, &err), 0);
    ck_assert_uint_eq(kf_count(&srv), 3);
    ck_assert_str_eq(kf_req(&srv, 1)->method, "GET");
    r = kf_req(&srv, 2);
    ck_assert_str_eq(r->method, "PATCH");
    ck_assert_str_eq(r->content_type, "application/json-patch+json");
    got = json_loadb(r->body, r->body_len, 0, NULL);
    want = json_loads(
        "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":\"u-1\"},"
        "{\"op\":\"add\",\"path\":\"/spec/affinity/nodeAffinity/"
        "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/"
        "matchFields\",\"value\":[{\"key\":\"metadata.name\",\"operator\":"
        "\"In\",\"values\":[\"gpu-2\"]}]},"
        "{\"op\":\"remove\",\"path\":\"/spec/schedulingGates\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":"
        "{\"muster.io/release\":\"a/g#1\",\"muster.io/release-size\":\"2\","
        "\"muster.io/reserved-node\":\"gpu-2\","
        "\"muster.io/release-pinned\":\"true\"}}]",
        0, NULL);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(json_equal(got, want), "%.*s", (int)r->body_len, r->body);
    json_decref(got);
    json_decref(want);
}
END_TEST

START_TEST(test_release_does_not_touch_a_pod_made_again_under_the_name)
{
    struct mu_err err;

    kf_reply_body(&srv, 422, status_422);
    kf_reply_body(&srv, 200,
                  "{\"metadata\":{\"name\":\"p\",\"uid\":\"u-2\"},"
                  "\"spec\":{\"schedulingGates\":[{\"name\":"
                  "\"muster.io/gang\"}]}}");
    ck_assert_int_eq(release(true, true, &err), -ESTALE);
    ck_assert_uint_eq(kf_count(&srv), 2); /* no PATCH after the GET */
    ck_assert_msg(strstr(err.msg, "u-2") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_release_of_a_pod_with_terms_reads_it_first)
{
    struct mu_err err;

    kf_reply_body(&srv, 200,
                  "{\"metadata\":{\"name\":\"p\",\"uid\":\"u-1\","
                  "\"annotations\":{\"x\":\"y\"}},\"spec\":"
                  "{\"schedulingGates\":[{\"name\":\"muster.io/gang\"}]}}");
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(release(true, false, &err), 0);
    ck_assert_uint_eq(kf_count(&srv), 2);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "GET");
    ck_assert_str_eq(kf_req(&srv, 1)->content_type,
                     "application/json-patch+json");
    /* annotations there already: one add per key, "/" escaped as "~1" */
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 1)->body,
                                 "\"/metadata/annotations/muster.io~1release\""));
    ck_assert_ptr_nonnull(strstr(
        kf_req(&srv, 1)->body,
        "\"/metadata/annotations/muster.io~1release-size\",\"value\":\"2\""));
}
END_TEST

START_TEST(test_wake_patch_nominates_the_node_and_changes_an_annotation)
{
    json_t *p = mu_serve_wake_patch("u-1", "gpu-2", "a/g#7/1");
    json_t *want = json_loads(
        "{\"metadata\":{\"uid\":\"u-1\",\"annotations\":"
        "{\"muster.io/reserved-node\":\"gpu-2\",\"muster.io/wake\":"
        "\"a/g#7/1\"}},\"status\":{\"nominatedNodeName\":\"gpu-2\"}}",
        0, NULL);

    ck_assert_ptr_nonnull(want);
    ck_assert(json_equal(p, want));
    json_decref(p);
    json_decref(want);
    p = mu_serve_wake_patch(NULL, "gpu-2", "w");
    ck_assert_ptr_null(
        json_object_get(json_object_get(p, "metadata"), "uid"));
    json_decref(p);
}
END_TEST

START_TEST(test_wake_up_of_a_pod_bound_meanwhile_writes_its_record)
{
    struct mu_err err;

    kf_reply_body(&srv, 422,
                  "{\"kind\":\"Status\",\"code\":422,\"reason\":"
                  "\"Invalid\",\"message\":\"Pod \\\"p\\\" is invalid: "
                  "status.nominatedNodeName: Forbidden: may not be set on "
                  "pods that are already bound to a node\"}");
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(release(false, false, &err), 0);
    /* then the release's annotations alone: the record on the bound pod */
    ck_assert_uint_eq(kf_count(&srv), 2);
    ck_assert_str_eq(kf_req(&srv, 1)->path,
                     "/api/v1/namespaces/a/pods/p/status");
    ck_assert_str_eq(kf_req(&srv, 1)->content_type,
                     "application/merge-patch+json");
    ck_assert_ptr_null(strstr(kf_req(&srv, 1)->body, "nominatedNodeName"));
    ck_assert_ptr_null(strstr(kf_req(&srv, 1)->body, "\"status\""));
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 1)->body,
                                 "\"muster.io/reserved-node\":\"gpu-2\""));
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 1)->body, "muster.io/wake"));
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 1)->body, "muster.io/release"));
    /* any other refusal is a failure, and nothing follows it */
    kf_reply_body(&srv, 422, status_422);
    ck_assert_int_eq(release(false, false, &err), -EINVAL);
    ck_assert_uint_eq(kf_count(&srv), 3);
}
END_TEST

START_TEST(test_release_of_an_operators_pod_is_the_wake_up_annotation)
{
    struct mu_err err;

    kf_reply_body(&srv, 404,
                  "{\"kind\":\"Status\",\"code\":404,\"reason\":"
                  "\"NotFound\",\"message\":\"gone\"}");
    ck_assert_int_eq(release(false, false, &err), -ENOENT);
    ck_assert_uint_eq(kf_count(&srv), 1); /* no fallback for a 404 */
    ck_assert_str_eq(kf_req(&srv, 0)->content_type,
                     "application/merge-patch+json");
    ck_assert_str_eq(kf_req(&srv, 0)->path,
                     "/api/v1/namespaces/a/pods/p/status");
    ck_assert_ptr_nonnull(
        strstr(kf_req(&srv, 0)->body, "muster.io/reserved-node"));
    ck_assert_ptr_nonnull(
        strstr(kf_req(&srv, 0)->body, "\"nominatedNodeName\":\"gpu-2\""));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("release");
    TCase *tc = tcase_create("requests");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(
        tc, test_release_of_a_plain_gated_pod_is_one_strategic_merge_patch);
    tcase_add_test(
        tc, test_wake_patch_nominates_the_node_and_changes_an_annotation);
    tcase_add_test(tc, test_wake_up_of_a_pod_bound_meanwhile_writes_its_record);
    tcase_add_test(
        tc, test_release_refused_as_invalid_reads_the_pod_and_tightens_its_terms);
    tcase_add_test(tc,
                   test_release_does_not_touch_a_pod_made_again_under_the_name);
    tcase_add_test(tc, test_release_of_a_pod_with_terms_reads_it_first);
    tcase_add_test(tc,
                   test_release_of_an_operators_pod_is_the_wake_up_annotation);
    suite_add_tcase(s, tc);
    tc = tcase_create("patch");
    tcase_add_test(tc,
                   test_release_smp_drops_the_gate_by_name_and_pins_with_a_uid);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
