/* The client pool and the shared rate limiter that the writer's workers
 * use (src/kube/pool.h, src/kube/client.h), against the fake API server of
 * the kube tests. */
#include <check.h>
#include <stdlib.h>

#include "kube/pool.h"
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

START_TEST(test_kube_pool_reuses_clients_and_bounds_idle_ones)
{
    struct mu_kube_config cfg;
    struct mu_kube_pool *p = NULL;
    struct mu_kube *a, *b, *c;
    struct mu_err err;

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_int_eq(mu_kube_pool_new(&cfg, NULL, 1, &p, &err), 0);
    mu_kube_config_release(&cfg);
    kf_reply_body(&srv, 200, "{}");
    kf_reply_body(&srv, 200, "{}");
    a = mu_kube_pool_get(p, &err);
    b = mu_kube_pool_get(p, &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_int_eq(mu_kube_get(a, "/api/v1/pods", NULL, NULL, &err), 0);
    mu_kube_pool_put(p, a);
    mu_kube_pool_put(p, b); /* one idle at most: b is freed */
    c = mu_kube_pool_get(p, &err);
    ck_assert_ptr_eq(c, a);
    ck_assert_int_eq(mu_kube_get(c, "/api/v1/pods", NULL, NULL, &err), 0);
    mu_kube_pool_put(p, c);
    mu_kube_pool_free(p);
    ck_assert_uint_eq(kf_count(&srv), 2);
}
END_TEST

START_TEST(test_kube_shared_limiter_is_one_bucket_for_every_client)
{
    struct mu_kube_shared_limiter s;

    mu_kube_shared_limiter_init(&s, 10, 2, 0);
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&s, 0), 0);
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&s, 0), 0);
    /* the third request at once waits a tenth of a second */
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&s, 0), 100000000);
    mu_kube_shared_limiter_release(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_kube_pool_reuses_clients_and_bounds_idle_ones);
    tcase_add_test(tc, test_kube_shared_limiter_is_one_bucket_for_every_client);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
