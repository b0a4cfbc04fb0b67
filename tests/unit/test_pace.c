/* The release budget a cycle gets (mu_enforcer_pace, src/serve/enforce.h):
 * the release window less the pods in flight, within half the writer's
 * room and within the release binder's room, with a real writer on the
 * fake API server (test_ctl_harness.h). */
#include <check.h>
#include <stdlib.h>

#include "kube/writer.h"
#include "serve/enforce.h"
#include "test_ctl_harness.h"

static struct mu_enforcer enf;
static long binder_room; /* what fake_room answers */
static int room_calls;

static void setup(void)
{
    th_start_cap(NULL, 64);
    mu_enforcer_init(&enf, &th.ctl, 20000);
    binder_room = 0;
    room_calls = 0;
}

static void teardown(void)
{
    th_stop_writer();
    mu_enforcer_release(&enf);
    th_stop();
}

static int fake_bind_gang(void *ctx, const char *release,
                          struct mu_task *const *t, int n)
{
    (void)ctx;
    (void)release;
    (void)t;
    (void)n;
    return 0;
}

static long fake_room(void *ctx)
{
    ck_assert_ptr_eq(ctx, &enf);
    room_calls++;
    return binder_room;
}

/* Nothing in flight and an idle writer of 64: the budget is half its room
 * (32) while the window is larger; a binder with less room left lowers it
 * to that room, one with none to 0; a binder that is not used (no
 * bind_gang) is not asked. */
START_TEST(test_pace_budget_stays_within_the_writer_and_the_binder)
{
    struct mu_cluster *c = &th.cluster;

    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(c->release_budget, 32);
    ck_assert_int_eq(c->release_window, MU_RELEASE_WINDOW_START);
    ck_assert_int_eq(c->release_inflight, 0);

    enf.bind_gang_room = fake_room;
    enf.bind_gang_ctx = &enf;
    binder_room = 1000;
    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(room_calls, 0); /* no binder: not asked */
    ck_assert_int_eq(c->release_budget, 32);

    enf.bind_gang = fake_bind_gang;
    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(room_calls, 1);
    ck_assert_int_eq(c->release_budget, 32);
    binder_room = 12;
    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(c->release_budget, 12);
    binder_room = 0;
    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(c->release_budget, 0);

    /* the window, when it is the smallest, still rules */
    binder_room = 1000;
    enf.window = 5;
    mu_enforcer_pace(&enf, c);
    ck_assert_int_eq(c->release_budget, 5);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pace");
    TCase *tc = tcase_create("pace");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_pace_budget_stays_within_the_writer_and_the_binder);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
