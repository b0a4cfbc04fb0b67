/* The barrier's undo of a bound member (src/serve/undo.h) on the fake API
 * server: the exact DELETE (the bound pod's uid as precondition), the
 * MU_SRC_UNDO said before it, and said again (ok false) only when the
 * apiserver surely deleted nothing. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"
#include "serve/undo.h"
#include "test_kube_fake.h"

static struct kf_server srv;
static struct mu_kube_pool *pool;
static struct mu_evq q;
static struct mu_undo u;

static void setup(void)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};

    ck_assert_int_eq(kf_start(&srv), 0);
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_msg(mu_kube_pool_new(&cfg, NULL, 0, &pool, &err) == 0, "%s",
                  err.msg);
    mu_kube_config_release(&cfg);
    mu_evq_init(&q);
    u.pool = pool;
    u.q = &q;
}

static void teardown(void)
{
    mu_kube_pool_free(pool);
    mu_evq_release(&q);
    kf_stop(&srv);
}

/* The undos queued, as "+" (begun) and "-" (taken back), each checked
 * to name ns1/p1 of uid u-1. */
static void expect_said(const char *want)
{
    struct mu_ev *all = mu_evq_take(&q, 0), *ev;
    char got[16] = "";
    size_t n = 0;

    for (ev = all; ev && n + 1 < sizeof(got); ev = ev->next) {
        ck_assert_int_eq(ev->src, MU_SRC_UNDO);
        ck_assert_str_eq(json_string_value(json_object_get(ev->obj,
                                                           "namespace")),
                         "ns1");
        ck_assert_str_eq(json_string_value(json_object_get(ev->obj, "name")),
                         "p1");
        ck_assert_str_eq(ev->detail, "u-1");
        got[n++] = ev->ok ? '+' : '-';
    }
    mu_ev_free(all); /* the whole list */
    ck_assert_str_eq(got, want);
}

static int undo_with(int status)
{
    struct mu_err err = {{0}};
    int r;

    kf_reply_body(&srv, status, "{\"kind\":\"Status\"}");
    r = mu_undo_pod(&u, "ns1", "p1", "u-1", &err);
    ck_assert(!r || err.msg[0]);
    return r;
}

START_TEST(test_undo_sends_the_uid_precondition)
{
    const struct kf_request *rq;
    json_t *body;

    ck_assert_int_eq(undo_with(200), 0);
    ck_assert_uint_eq(kf_count(&srv), 1);
    rq = kf_req(&srv, 0);
    ck_assert_str_eq(rq->method, "DELETE");
    ck_assert_str_eq(rq->path, "/api/v1/namespaces/ns1/pods/p1");
    body = json_loads(rq->body, 0, NULL);
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(body, "preconditions"), "uid")),
                     "u-1");
    json_decref(body);
    expect_said("+");
}
END_TEST

START_TEST(test_undo_of_a_pod_gone_or_renamed_is_done)
{
    ck_assert_int_eq(undo_with(404), 0);
    expect_said("+");
    ck_assert_int_eq(undo_with(409), 0); /* the uid is another pod's */
    expect_said("+");
}
END_TEST

START_TEST(test_undo_refused_is_taken_back)
{
    ck_assert_int_eq(undo_with(403), -EPERM);
    expect_said("+-");
    ck_assert_int_eq(undo_with(422), -EINVAL);
    expect_said("+-");
    ck_assert_int_eq(undo_with(429), -EAGAIN);
    expect_said("+-");
}
END_TEST

START_TEST(test_undo_that_may_have_deleted_is_not_taken_back)
{
    ck_assert_int_eq(undo_with(500), -EIO);
    expect_said("+");
    ck_assert_int_eq(undo_with(504), -ETIMEDOUT);
    expect_said("+");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("undo");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_undo_sends_the_uid_precondition);
    tcase_add_test(tc, test_undo_of_a_pod_gone_or_renamed_is_done);
    tcase_add_test(tc, test_undo_refused_is_taken_back);
    tcase_add_test(tc, test_undo_that_may_have_deleted_is_not_taken_back);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
