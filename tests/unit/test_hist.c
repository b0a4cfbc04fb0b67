/* Prometheus histograms (common/hist.h): buckets, sum, count, labels. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/hist.h"

static const double le[] = {0.01, 0.1, 1};

START_TEST(test_observations_land_in_cumulative_buckets)
{
    struct mu_hist h;
    struct mu_sb sb;

    mu_hist_init(&h, le, 3);
    mu_hist_observe_ns(&h, 5000000);     /* 5 ms */
    mu_hist_observe_ns(&h, 10000000);    /* 10 ms: le is inclusive */
    mu_hist_observe_ns(&h, 500000000);   /* 0.5 s */
    mu_hist_observe_ns(&h, 3000000000LL); /* 3 s: only +Inf */
    mu_hist_observe_ns(&h, -7);          /* a clock step back: 0 */
    mu_sb_init(&sb);
    mu_hist_write(&h, "x_seconds", NULL, &sb);
    ck_assert_str_eq(sb.buf, "x_seconds_bucket{le=\"0.01\"} 3\n"
                             "x_seconds_bucket{le=\"0.1\"} 3\n"
                             "x_seconds_bucket{le=\"1\"} 4\n"
                             "x_seconds_bucket{le=\"+Inf\"} 5\n"
                             "x_seconds_sum 3.515000000\n"
                             "x_seconds_count 5\n");
    mu_sb_release(&sb);
}
END_TEST

START_TEST(test_labels_come_before_le)
{
    struct mu_hist h;
    struct mu_sb sb;

    mu_hist_init(&h, le, 1);
    mu_hist_observe_ns(&h, 20000000);
    mu_sb_init(&sb);
    mu_hist_write(&h, "w", "queue=\"team-a\"", &sb);
    ck_assert_str_eq(sb.buf, "w_bucket{queue=\"team-a\",le=\"0.01\"} 0\n"
                             "w_bucket{queue=\"team-a\",le=\"+Inf\"} 1\n"
                             "w_sum{queue=\"team-a\"} 0.020000000\n"
                             "w_count{queue=\"team-a\"} 1\n");
    mu_sb_release(&sb);
}
END_TEST

START_TEST(test_the_project_bounds_ascend_and_fit)
{
    const double *b[] = {mu_hist_gang_wait, mu_hist_cycle, mu_hist_barrier};
    const int n[] = {mu_hist_gang_wait_n, mu_hist_cycle_n, mu_hist_barrier_n};

    for (int k = 0; k < 3; k++) {
        ck_assert_int_le(n[k], MU_HIST_MAX_BUCKETS);
        for (int i = 1; i < n[k]; i++)
            ck_assert(b[k][i] > b[k][i - 1]);
    }
    ck_assert(mu_hist_gang_wait[mu_hist_gang_wait_n - 1] == 86400);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_observations_land_in_cumulative_buckets);
    tcase_add_test(tc, test_labels_come_before_le);
    tcase_add_test(tc, test_the_project_bounds_ascend_and_fit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
