/* Leader election on a Lease (src/kube/lease.h): the pure decision of a
 * try (mu_lease_next), and the elector's thread against the fake API
 * server: acquire by create, renew, and the step-down when renewals fail
 * for the renew deadline. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "kube/lease.h"
#include "test_kube_fake.h"

static const char *spec_s(const json_t *l, const char *k)
{
    return json_string_value(json_object_get(json_object_get(l, "spec"), k));
}

static json_int_t spec_i(const json_t *l, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(l, "spec"), k));
}

static json_t *lease_of(const char *holder, const char *renew, const char *rv,
                        int trans)
{
    return json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:i,s:s,s:s,s:i}}", "metadata",
                     "namespace", "muster-system", "name", "muster",
                     "resourceVersion", rv, "spec", "holderIdentity", holder,
                     "leaseDurationSeconds", 15, "acquireTime",
                     "2026-01-01T00:00:00.000000Z", "renewTime", renew,
                     "leaseTransitions", trans);
}

START_TEST(next_creates_when_absent)
{
    char *obs = NULL;
    int64_t obs_ns = 0;
    bool create = false;
    json_t *o = mu_lease_next(NULL, "muster-system", "muster", "me", 15000,
                              1000, 1764547200, 42, &obs, &obs_ns, &create);

    ck_assert(create);
    ck_assert_str_eq(spec_s(o, "holderIdentity"), "me");
    ck_assert_int_eq(spec_i(o, "leaseDurationSeconds"), 15);
    ck_assert_int_eq(spec_i(o, "leaseTransitions"), 0);
    ck_assert_str_eq(spec_s(o, "renewTime"), "2025-12-01T00:00:00.000042Z");
    ck_assert_str_eq(spec_s(o, "acquireTime"), spec_s(o, "renewTime"));
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(o, "metadata"), "namespace")),
                     "muster-system");
    json_decref(o);
    free(obs);
}
END_TEST

/* Another holder's record is followed until it has not changed for the
 * lease duration as observed here; then taken with one more transition,
 * the resourceVersion kept for the optimistic PUT. */
START_TEST(next_follows_then_takes_over)
{
    char *obs = NULL;
    int64_t obs_ns = 0, s = 1000000000LL;
    bool create = true;
    json_t *l = lease_of("other", "2026-01-01T00:00:05.000000Z", "7", 3);
    json_t *l2 = lease_of("other", "2026-01-01T00:00:07.000000Z", "8", 3);
    json_t *o;

    ck_assert_ptr_null(mu_lease_next(l, "muster-system", "muster", "me",
                                     15000, 10 * s, 0, 0, &obs, &obs_ns,
                                     &create));
    ck_assert(!create);
    ck_assert_int_eq(obs_ns, 10 * s);
    /* renewed: the observed clock restarts */
    ck_assert_ptr_null(mu_lease_next(l2, "muster-system", "muster", "me",
                                     15000, 20 * s, 0, 0, &obs, &obs_ns,
                                     &create));
    ck_assert_int_eq(obs_ns, 20 * s);
    /* not renewed, 14.9 s later: still held */
    ck_assert_ptr_null(mu_lease_next(l2, "muster-system", "muster", "me",
                                     15000, 34 * s + s / 10 * 9, 0, 0, &obs,
                                     &obs_ns, &create));
    o = mu_lease_next(l2, "muster-system", "muster", "me", 15000, 35 * s,
                      1764547200, 0, &obs, &obs_ns, &create);
    ck_assert_ptr_nonnull(o);
    ck_assert(!create);
    ck_assert_str_eq(spec_s(o, "holderIdentity"), "me");
    ck_assert_int_eq(spec_i(o, "leaseTransitions"), 4);
    ck_assert_str_eq(spec_s(o, "acquireTime"), "2025-12-01T00:00:00.000000Z");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(o, "metadata"), "resourceVersion")),
                     "8");
    json_decref(o);
    json_decref(l);
    json_decref(l2);
    free(obs);
}
END_TEST

/* Our own Lease is renewed at once (acquireTime and transitions kept); a
 * Lease given up (holder "") is taken at once. */
START_TEST(next_renews_own_and_takes_released)
{
    char *obs = NULL;
    int64_t obs_ns = 0;
    bool create;
    json_t *l = lease_of("me", "2026-01-01T00:00:05.000000Z", "9", 2);
    json_t *free_l = lease_of("", "2026-01-01T00:00:05.000000Z", "10", 2);
    json_t *o = mu_lease_next(l, "muster-system", "muster", "me", 15000, 1,
                              1764547200, 0, &obs, &obs_ns, &create);

    ck_assert_int_eq(spec_i(o, "leaseTransitions"), 2);
    ck_assert_str_eq(spec_s(o, "acquireTime"), "2026-01-01T00:00:00.000000Z");
    ck_assert_str_eq(spec_s(o, "renewTime"), "2025-12-01T00:00:00.000000Z");
    json_decref(o);
    o = mu_lease_next(free_l, "muster-system", "muster", "me", 15000, 2,
                      1764547200, 0, &obs, &obs_ns, &create);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(spec_i(o, "leaseTransitions"), 3);
    json_decref(o);
    json_decref(l);
    json_decref(free_l);
    free(obs);
}
END_TEST

/* Slow runs (valgrind, a loaded machine) stretch every duration by
 * MU_TEST_TIME_SCALE (the valgrind test setup sets it). */
static int64_t scaled(int64_t ms)
{
    const char *e = getenv("MU_TEST_TIME_SCALE");
    long f = e ? strtol(e, NULL, 10) : 1;

    return ms * (f > 0 ? f : 1);
}

static atomic_int changes;

static void on_change(void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&changes, 1);
}

static const char own[] =
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"l\","
    "\"resourceVersion\":\"1\"},\"spec\":{\"holderIdentity\":\"me\","
    "\"leaseDurationSeconds\":1,\"renewTime\":\"2026-01-01T00:00:00.0Z\","
    "\"leaseTransitions\":0}}";

static bool wait_for(bool (*cond)(const struct mu_lease *),
                     const struct mu_lease *l, int64_t ms)
{
    int64_t end = mu_now_ms() + ms;

    while (mu_now_ms() < end) {
        if (cond(l))
            return true;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return cond(l);
}

static bool not_leading(const struct mu_lease *l)
{
    return !mu_lease_leading(l);
}

/* Acquire by POST after a 404, renew by PUT with the resourceVersion read;
 * when the server stops answering (503), the elector stops leading no
 * later than the renew deadline after its last good renewal was sent,
 * and says it lost. */
START_TEST(elector_acquires_renews_and_steps_down)
{
    struct kf_server srv;
    struct mu_kube_config cfg;
    struct mu_lease_opts o = {.ns = "ns", .name = "l", .identity = "me",
                              .lease_ms = scaled(1500),
                              .renew_ms = scaled(1000),
                              .retry_ms = scaled(200), .changed = on_change};
    struct mu_lease *l = NULL;
    struct mu_err err = {{0}};
    int64_t t_leading, t_lost;

    ck_assert_int_eq(kf_start(&srv), 0);
    kf_reply_body(&srv, 404, "{\"kind\":\"Status\",\"code\":404}");
    kf_reply_body(&srv, 201, own);
    kf_reply_body(&srv, 200, own);
    kf_reply_body(&srv, 200, own);
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_msg(mu_lease_start(&cfg, &o, &l, &err) == 0, "%s", err.msg);
    ck_assert(wait_for(mu_lease_leading, l, scaled(3000)));
    t_leading = mu_now_ms();
    ck_assert(wait_for(not_leading, l, scaled(3000)));
    t_lost = mu_now_ms();
    /* the last good renewal was sent one retry period after the acquire:
     * leading ends a renew deadline later, whatever the server does */
    ck_assert_int_le(t_lost - t_leading, scaled(1000 + 200 + 150));
    ck_assert(wait_for(mu_lease_lost, l, scaled(3000)));
    ck_assert_int_eq(atomic_load(&changes), 2);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "GET");
    ck_assert_str_eq(kf_req(&srv, 0)->path,
                     "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l");
    ck_assert_str_eq(kf_req(&srv, 1)->method, "POST");
    ck_assert_str_eq(kf_req(&srv, 1)->path,
                     "/apis/coordination.k8s.io/v1/namespaces/ns/leases");
    ck_assert_str_eq(kf_req(&srv, 3)->method, "PUT");
    ck_assert_ptr_nonnull(strstr(kf_req(&srv, 3)->body,
                                 "\"resourceVersion\":\"1\""));
    mu_lease_stop(l);
    mu_kube_config_release(&cfg);
    kf_stop(&srv);
}
END_TEST

START_TEST(start_checks_durations)
{
    struct mu_kube_config cfg;
    struct mu_lease_opts o = {.lease_ms = 10000, .renew_ms = 10000};
    struct mu_lease *l = (void *)1;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup("http://127.0.0.1:9");
    ck_assert_int_eq(mu_lease_start(&cfg, &o, &l, &err), -EINVAL);
    ck_assert_ptr_null(l);
    mu_kube_config_release(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = tcase_create("lease");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, next_creates_when_absent);
    tcase_add_test(tc, next_follows_then_takes_over);
    tcase_add_test(tc, next_renews_own_and_takes_released);
    tcase_add_test(tc, elector_acquires_renews_and_steps_down);
    tcase_add_test(tc, start_checks_durations);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
