/* The one JSON reader (api/json.h) and Go's strconv readings
 * (api/strconv.h). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/strconv.h"

static json_t *doc;

static void setup(void)
{
    doc = json_loads("{\"s\": \"x\", \"e\": \"\", \"n\": 7, \"b\": false, "
                     "\"z\": null, \"o\": {}, \"a\": [], \"big\": 4294967296, "
                     "\"Name\": \"first\", \"NAME\": \"last\"}",
                     0, NULL);
    ck_assert_ptr_nonnull(doc);
}

static void teardown(void)
{
    json_decref(doc);
}

START_TEST(test_plain_getters_read_absent_and_null_as_absent)
{
    const json_t *v = doc;
    const char *s = "untouched";

    ck_assert_int_eq(mu_json_get(doc, "z", JSON_OBJECT, &v), 0);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(mu_json_get(doc, "none", JSON_OBJECT, &v), 0);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(mu_json_get(NULL, "o", JSON_OBJECT, &v), 0);
    ck_assert_int_eq(mu_json_get(doc, "o", JSON_OBJECT, &v), 0);
    ck_assert_ptr_eq(v, json_object_get(doc, "o"));
    ck_assert_int_eq(mu_json_get(doc, "b", JSON_TRUE, &v), 0);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(mu_json_get(doc, "a", JSON_OBJECT, &v), -EINVAL);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(mu_json_get_str(doc, "n", &s), -EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(mu_json_get_str(doc, "s", &s), 0);
    ck_assert_str_eq(s, "x");
}
END_TEST

START_TEST(test_forgiving_getters_and_case_insensitive_lookup)
{
    char num[32];
    const char *s;

    ck_assert_str_eq(mu_json_str(doc, "e"), "");
    ck_assert_ptr_null(mu_json_str(doc, "n"));
    ck_assert_ptr_null(mu_json_nonempty(doc, "e"));
    ck_assert_str_eq(mu_json_nonempty(doc, "s"), "x");
    /* the last match wins, as in Go's encoding/json */
    ck_assert_str_eq(json_string_value(mu_json_find_ci(doc, "name")), "last");
    ck_assert_ptr_null(mu_json_find_ci(json_object_get(doc, "a"), "x"));
    ck_assert_int_eq(mu_json_as_text(json_object_get(doc, "big"), num,
                                     sizeof(num), &s), 0);
    ck_assert_str_eq(s, "4294967296");
    ck_assert_int_eq(mu_json_as_text(json_object_get(doc, "b"), num,
                                     sizeof(num), &s), -EINVAL);
}
END_TEST

START_TEST(test_members_name_their_path_as_the_api_server_does)
{
    struct mu_err err;
    const json_t *v;
    int64_t x = 0;
    int32_t i32 = 0;
    int idx = -1;
    char *dup = NULL;
    bool b = true;
    static const char *const names[] = {"", "Equal", "Exists"};

    ck_assert_int_eq(mu_json_member(doc, "spec", "s", JSON_INTEGER, &v, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "spec.s: expected an integer, got a string");
    ck_assert_int_eq(mu_json_member(doc, "", "a", JSON_OBJECT, &v, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "a: expected an object, got an array");
    ck_assert_int_eq(mu_json_want(&err, "", "an object",
                                  json_object_get(doc, "n")), -EINVAL);
    ck_assert_str_eq(err.msg, "expected an object, got an integer");
    ck_assert_int_eq(mu_json_member_int(doc, "spec", "n", 0, 5, &x, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "spec.n: must be between 0 and 5");
    ck_assert_int_eq(mu_json_member_int(doc, "spec", "n", 0, 9, &x, &err), 1);
    ck_assert_int_eq(x, 7);
    ck_assert_int_eq(mu_json_member_int(doc, "spec", "z", 0, 9, &x, &err), 0);
    ck_assert_int_eq(mu_json_member_int32(doc, "", "big", &i32, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "big: must be between -2147483648 and "
                              "2147483647");
    ck_assert_int_eq(mu_json_member_bool(doc, "", "b", &b, &err), 0);
    ck_assert(!b);
    ck_assert_int_eq(mu_json_member_dup(doc, "", "e", &dup, &err), 0);
    ck_assert_ptr_null(dup);
    ck_assert_int_eq(mu_json_member_dup(doc, "", "s", &dup, &err), 0);
    ck_assert_str_eq(dup, "x");
    free(dup);
    ck_assert_int_eq(mu_json_member_enum(doc, "spec.tolerations[0]", "s",
                                         names, 3, &idx, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "spec.tolerations[0].s: unsupported value "
                              "\"x\": supported values: \"Equal\", "
                              "\"Exists\"");
    ck_assert_int_eq(idx, -1);
}
END_TEST

START_TEST(test_long_paths_are_cut)
{
    char base[600], p[MU_JSON_PATH_LEN];

    memset(base, 'a', sizeof(base) - 1);
    base[sizeof(base) - 1] = '\0';
    mu_json_path(p, base, "k");
    ck_assert_uint_eq(strlen(p), MU_JSON_PATH_LEN - 1);
    ck_assert_str_eq(p + strlen(p) - 3, "...");
    ck_assert_str_eq(mu_json_path_at(p, "spec", "containers", 2),
                     "spec.containers[2]");
    ck_assert_str_eq(mu_json_path_at(p, "", "items", 0), "items[0]");
}
END_TEST

START_TEST(test_builders_set_and_create_children)
{
    json_t *o = mu_json_must(json_object());
    json_t *c;

    mu_json_set_str(o, "s", "v");
    mu_json_set_int(o, "n", 3);
    json_object_set_new(o, "z", json_null());
    c = mu_json_child(o, "z", true);
    ck_assert(json_is_array(c));
    ck_assert_ptr_eq(mu_json_child(o, "z", false), c);
    ck_assert_str_eq(mu_json_str(o, "s"), "v");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "n")), 3);
    json_decref(o);
}
END_TEST

START_TEST(test_strconv_is_strict)
{
    long long v = 42;
    bool b = false;

    ck_assert_int_eq(mu_strconv_int("-12", -100, 100, &v), 0);
    ck_assert_int_eq(v, -12);
    ck_assert_int_eq(mu_strconv_int("+3", 0, 9, &v), 0);
    ck_assert_int_eq(v, 3);
    ck_assert_int_eq(mu_strconv_int(" 3", 0, 9, &v), -EINVAL);
    ck_assert_int_eq(mu_strconv_int("3x", 0, 9, &v), -EINVAL);
    ck_assert_int_eq(mu_strconv_int("", 0, 9, &v), -EINVAL);
    ck_assert_int_eq(mu_strconv_int("10", 0, 9, &v), -EINVAL);
    ck_assert_int_eq(mu_strconv_int("99999999999999999999", 0, 9, &v),
                     -EINVAL);
    ck_assert_int_eq(v, 3); /* unchanged */
    ck_assert_int_eq(mu_strconv_bool("True", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(mu_strconv_bool("F", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(mu_strconv_bool("yes", &b), -EINVAL);
    ck_assert(!b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_plain_getters_read_absent_and_null_as_absent);
    tcase_add_test(tc, test_forgiving_getters_and_case_insensitive_lookup);
    tcase_add_test(tc, test_members_name_their_path_as_the_api_server_does);
    tcase_add_test(tc, test_long_paths_are_cut);
    tcase_add_test(tc, test_builders_set_and_create_children);
    tcase_add_test(tc, test_strconv_is_strict);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
