/*
 * The release binder (extender/relbind.h): plain gangs bound whole at
 * their release, with no member at /bind, on the fake binder of
 * test_bind_fake.h.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "extender/relbind.h"
#include "test_bind_fake.h"

/* The members of gang g (as add_gang_of names them), for submit; borrowed
 * strings kept in buf. */
struct gang_members {
    struct mu_barrier_member m[8];
    char s[8][4][32];
};

static void members_of(struct gang_members *gm, const char *g, int n)
{
    ck_assert_int_le(n, 8);
    memset(gm, 0, sizeof(*gm));
    for (int i = 0; i < n; i++) {
        snprintf(gm->s[i][0], 32, "%s-w%d", g, i);
        snprintf(gm->s[i][1], 32, "%s-%d", g, i);
        snprintf(gm->s[i][2], 32, "node-%s-%d", g, i);
        snprintf(gm->s[i][3], 32, "team-a");
        gm->m[i].ns = gm->s[i][3];
        gm->m[i].name = gm->s[i][0];
        gm->m[i].uid = gm->s[i][1];
        gm->m[i].node = gm->s[i][2];
        gm->m[i].controlled = true;
    }
}

static int reports(void)
{
    int n;

    pthread_mutex_lock(&fk.mu);
    n = fk.n_reports;
    pthread_mutex_unlock(&fk.mu);
    return n;
}

/* Waits up to ms (scaled) for pred's count to reach want. */
static bool wait_count(int (*pred)(void), int want, int64_t ms)
{
    int64_t until = bf_now_ms() + bf_scaled(ms);

    while (pred() < want && bf_now_ms() < until)
        bf_sleep_ms(10);
    return pred() >= want;
}

/* A release binder on its own barrier and view slot, v published. */
struct relbind_fix {
    struct mu_view_slot slot;
    struct mu_barrier *b;
    struct mu_relbind *rb;
};

static void relbind_start(struct relbind_fix *f, struct mu_view *v)
{
    struct mu_err err;

    mu_view_slot_init(&f->slot);
    mu_view_publish(&f->slot, v);
    f->b = bf_barrier(60000);
    ck_assert_int_eq(mu_relbind_new(f->b, &f->slot, &f->rb, &err), 0);
}

static void relbind_stop(struct relbind_fix *f)
{
    mu_relbind_free(f->rb);
    mu_barrier_free(f->b);
    mu_view_slot_release(&f->slot);
}

static struct relbind_fix rf;

static int stale(void)
{
    return (int)atomic_load(&mu_relbind_stats(rf.rb)->stale);
}

/* A released gang is bound whole with no member at /bind, on its reserved
 * nodes, reported once, not counted as bound at a first member; a member
 * kube-scheduler brings later is answered from the outcome. */
START_TEST(test_relbind_binds_a_released_gang_with_no_member_at_bind)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_ext_stats st;
    struct gang_members gm;
    struct member m;

    bf_add_plain_gang(v, "g", 4, true);
    relbind_start(&rf, v);
    memset(&st, 0, sizeof(st));
    mu_barrier_set_stats(rf.b, &st);
    members_of(&gm, "g", 4);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#1", gm.m, 4), 0);
    ck_assert(wait_count(reports, 1, 5000));
    ck_assert_int_eq(bf_count('b'), 4);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq(bf_bound_on(gm.m[i].uid), gm.m[i].node);
    ck_assert_int_eq(fk.n_reports_ok, 1);
    ck_assert_str_eq(fk.last_release, "team-a/g#1");
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->bound), 1);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->submitted), 1);
    ck_assert_uint_eq(atomic_load(&st.gangs_first_ok), 0);
    v = mu_view_get(&rf.slot);
    bf_bind_member(&m, rf.b, v, "g", 3);
    mu_view_put(v);
    ck_assert_str_eq(m.error, "");
    ck_assert_int_eq(bf_count('b'), 4);
    ck_assert_int_eq(reports(), 1);
    relbind_stop(&rf);
}
END_TEST

/* A release the view no longer holds (its members under another release
 * now) is dropped: nothing bound, nothing reported, counted as stale. One
 * it still holds with a member no longer plain, or reserved on another
 * node, is reported failed, so that it is planned again: nothing bound. */
START_TEST(test_relbind_drops_a_release_the_view_no_longer_holds)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;

    bf_add_plain_gang(v, "g", 2, true);
    bf_add_gang_of(v, "h", 2, true); /* h: not plain */
    bf_add_plain_gang(v, "k", 2, true);
    relbind_start(&rf, v);
    members_of(&gm, "g", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#2", gm.m, 2), 0);
    members_of(&gm, "h", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/h#1", gm.m, 2), 0);
    members_of(&gm, "k", 2);
    snprintf(gm.s[1][2], 32, "node-elsewhere");
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/k#1", gm.m, 2), 0);
    ck_assert(wait_count(reports, 2, 5000));
    ck_assert(wait_count(stale, 1, 5000));
    ck_assert_int_eq(stale(), 1);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->failed), 2);
    relbind_stop(&rf);
    ck_assert_int_eq(bf_count('b'), 0);
    ck_assert_int_eq(reports(), 2);
    ck_assert_int_eq(fk.n_reports_ok, 0);
    ck_assert_ptr_nonnull(strstr(fk.last_detail, "no longer bindable"));
}
END_TEST

static int in_bind(void)
{
    int n;

    pthread_mutex_lock(&fk.mu);
    n = fk.in_bind;
    pthread_mutex_unlock(&fk.mu);
    return n;
}

/* Past MU_RELBIND_QUEUE_MAX gangs waiting, submit refuses (the caller
 * wakes the gang instead); a gang too big or without names is refused
 * too; free drops what is queued, unbound. */
START_TEST(test_relbind_refuses_past_its_caps_and_free_drops_the_queue)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;
    struct mu_barrier_member *big;

    for (int g = 0; g < MU_RELBIND_THREADS; g++) {
        char name[16];

        snprintf(name, sizeof(name), "g%d", g);
        bf_add_plain_gang(v, name, 1, true);
    }
    bf_add_plain_gang(v, "q", 1, true); /* held: bound, if ever its turn */
    fk.bind_delay_ms = (int)bf_scaled(1500);
    relbind_start(&rf, v);
    /* every worker busy binding */
    for (int g = 0; g < MU_RELBIND_THREADS; g++) {
        char name[16], rel[32];

        snprintf(name, sizeof(name), "g%d", g);
        snprintf(rel, sizeof(rel), "team-a/%s#1", name);
        members_of(&gm, name, 1);
        ck_assert_int_eq(mu_relbind_submit(rf.rb, rel, gm.m, 1), 0);
    }
    ck_assert(wait_count(in_bind, MU_RELBIND_THREADS, 1000));
    members_of(&gm, "q", 1);
    for (int i = 0; i < MU_RELBIND_QUEUE_MAX; i++)
        ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/q#1", gm.m, 1), 0);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/q#1", gm.m, 1),
                     -EAGAIN);
    big = mu_xcalloc(MU_RELBIND_MEMBERS_MAX + 1, sizeof(*big));
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big,
                                       MU_RELBIND_MEMBERS_MAX + 1),
                     -E2BIG);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big, 1),
                     -EINVAL); /* no names */
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/big#1", big, 0),
                     -EINVAL);
    free(big);
    ck_assert_uint_eq(atomic_load(&mu_relbind_stats(rf.rb)->refused), 2);
    /* a full queue leaves no room to release into */
    ck_assert_int_eq(mu_relbind_room(rf.rb), 0);
    relbind_stop(&rf); /* waits for the 8 binds, drops the 4,096 */
    ck_assert_int_eq(bf_count('b'), MU_RELBIND_THREADS);
    ck_assert_int_eq(bf_count_of('b', "q-0"), 0);
    ck_assert_int_eq(reports(), MU_RELBIND_THREADS);
}
END_TEST

static long room(void)
{
    return mu_relbind_room(rf.rb);
}

/* Waits up to ms (scaled) for the binder's room to be want. */
static bool wait_room(long want, int64_t ms)
{
    int64_t until = bf_now_ms() + bf_scaled(ms);

    while (room() != want && bf_now_ms() < until)
        bf_sleep_ms(10);
    return room() == want;
}

/* The binder's room is MU_RELBIND_PODS_AHEAD less the members queued or
 * being bound: taken at submit, given back once the gang is over, bound
 * or not (stale: the view no longer holds it; unfit: a member no longer
 * plain). */
START_TEST(test_relbind_room_is_taken_at_submit_and_given_back)
{
    struct mu_view *v = mu_view_new(1, true);
    struct gang_members gm;

    bf_add_plain_gang(v, "g", 5, true);
    bf_add_plain_gang(v, "h", 3, true);
    bf_add_gang_of(v, "u", 2, true); /* not plain: unfit */
    fk.bind_delay_ms = (int)bf_scaled(300);
    relbind_start(&rf, v);
    ck_assert_int_eq(room(), MU_RELBIND_PODS_AHEAD);
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 0);
    members_of(&gm, "g", 5);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#1", gm.m, 5), 0);
    members_of(&gm, "h", 3);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/h#1", gm.m, 3), 0);
    /* both binding (300 ms a bind): eight members held */
    ck_assert_int_eq(room(), MU_RELBIND_PODS_AHEAD - 8);
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 8);
    ck_assert(wait_count(reports, 2, 5000));
    ck_assert(wait_room(MU_RELBIND_PODS_AHEAD, 5000));
    ck_assert_int_eq(fk.n_reports_ok, 2);
    ck_assert_int_eq(bf_count('b'), 8);
    /* a release of another id than the view's (stale) and an unfit one */
    members_of(&gm, "g", 5);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/g#0", gm.m, 5), 0);
    members_of(&gm, "u", 2);
    ck_assert_int_eq(mu_relbind_submit(rf.rb, "team-a/u#1", gm.m, 2), 0);
    ck_assert(wait_count(stale, 1, 5000));
    ck_assert(wait_count(reports, 3, 5000));
    ck_assert(wait_room(MU_RELBIND_PODS_AHEAD, 5000));
    ck_assert_int_eq(mu_relbind_pods(rf.rb), 0);
    ck_assert_int_eq(bf_count('b'), 8);
    relbind_stop(&rf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("relbind");
    TCase *tc = tcase_create("relbind");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, bf_setup, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc,
                   test_relbind_binds_a_released_gang_with_no_member_at_bind);
    tcase_add_test(tc, test_relbind_drops_a_release_the_view_no_longer_holds);
    tcase_add_test(
        tc, test_relbind_refuses_past_its_caps_and_free_drops_the_queue);
    tcase_add_test(tc, test_relbind_room_is_taken_at_submit_and_given_back);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
