/* The release window (serve/pace.h): grows by each whole batch up to its
 * cap, halves at a timeout down to its floor. */
#include <check.h>
#include <stdlib.h>

#include "serve/pace.h"

START_TEST(test_pace_starts_grows_and_stops_at_the_cap)
{
    struct mu_pace p;

    mu_pace_init(&p);
    ck_assert_uint_eq(mu_pace_window(&p), MU_PACE_START);
    mu_pace_bound(&p, 8);
    ck_assert_uint_eq(p.window, MU_PACE_START + 8);
    mu_pace_bound(&p, 0); /* no batch, no growth */
    ck_assert_uint_eq(p.window, MU_PACE_START + 8);
    for (int i = 0; i < 1000; i++)
        mu_pace_bound(&p, 8);
    ck_assert_uint_eq(p.window, MU_PACE_MAX);
    ck_assert_uint_eq(mu_pace_window(&p), MU_PACE_MAX);
    ck_assert(MU_PACE_MAX * 2 <= 1024u); /* under MU_EXT_MAX_CONNS / 2 */
}
END_TEST

START_TEST(test_pace_halves_at_a_timeout_down_to_the_floor)
{
    struct mu_pace p;

    mu_pace_init(&p);
    mu_pace_timed_out(&p);
    ck_assert_uint_eq(p.window, MU_PACE_START / 2);
    for (int i = 0; i < 20; i++)
        mu_pace_timed_out(&p);
    ck_assert_uint_eq(p.window, MU_PACE_MIN);
    ck_assert_uint_eq(mu_pace_window(&p), MU_PACE_MIN);
    mu_pace_bound(&p, 8); /* and grows again */
    ck_assert_uint_eq(p.window, MU_PACE_MIN + 8);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pace");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_pace_starts_grows_and_stops_at_the_cap);
    tcase_add_test(tc, test_pace_halves_at_a_timeout_down_to_the_floor);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
