/* The ring of recent decisions (serve/recent.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "serve/recent.h"

START_TEST(test_newest_first_and_the_oldest_pushed_out)
{
    struct mu_recent r;
    json_t *a;

    mu_recent_init(&r);
    a = mu_recent_json(&r);
    ck_assert_uint_eq(json_array_size(a), 0);
    json_decref(a);
    for (int i = 0; i < MU_RECENT_MAX + 3; i++)
        mu_recent_add(&r, i % 2 ? "evict" : "release", 86400 + i, "d%d", i);
    a = mu_recent_json(&r);
    ck_assert_uint_eq(json_array_size(a), MU_RECENT_MAX);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(a, 0), "text")),
        "d66");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(a, 0), "kind")),
        "release");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(a, 0), "at")),
        "1970-01-02T00:01:06Z");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(a, MU_RECENT_MAX - 1), "text")),
                     "d3");
    json_decref(a);
    mu_recent_release(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recent");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_newest_first_and_the_oldest_pushed_out);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
