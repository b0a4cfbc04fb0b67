#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/strict.h"
#include "api/yaml.h"

/* Parses text that holds exactly one document; returns its root (owned). */
static json_t *parse_one(const char *text)
{
    struct mu_yaml_docs d;
    struct mu_err err = {{0}};
    json_t *root;
    int rc;

    mu_yaml_docs_init(&d);
    rc = mu_yaml_parse("t.yaml", text, strlen(text), &d, &err);
    ck_assert_msg(rc == 0, "parse of %s failed: %d %s", text, rc, err.msg);
    ck_assert_uint_eq(d.n, 1);
    root = json_incref(d.v[0].root);
    mu_yaml_docs_release(&d);
    return root;
}

/* Parses text expecting failure; returns the code, message in err. */
static int parse_fail(const char *name, const char *text, struct mu_err *err)
{
    struct mu_yaml_docs d;
    int rc;

    mu_yaml_docs_init(&d);
    rc = mu_yaml_parse(name, text, strlen(text), &d, err);
    ck_assert_int_ne(rc, 0);
    ck_assert_uint_eq(d.n, 0);
    ck_assert_ptr_null(d.v);
    return rc;
}

static char *dump(const json_t *j)
{
    return json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
}

/* Each row: the text after "v: ", and the expected value as JSON (a real
 * written with a decimal point or exponent, so 8.0 and 8 differ). */
static const struct {
    const char *yaml;
    const char *json;
} scalars[] = {
    {"8", "8"},
    {"\"8\"", "\"8\""},
    {"'8'", "\"8\""},
    {"0.5", "0.5"},
    {"32Gi", "\"32Gi\""},
    {"500m", "\"500m\""},
    {"yes", "true"},
    {"Yes", "true"},
    {"y", "true"},
    {"on", "true"},
    {"TRUE", "true"},
    {"No", "false"},
    {"n", "false"},
    {"OFF", "false"},
    {"false", "false"},
    {"yEs", "\"yEs\""},
    {"'yes'", "\"yes\""},
    {"010", "8"},
    {"1_000", "1000"},
    {"0x1F", "31"},
    {"0o17", "15"},
    {"0b101", "5"},
    {"-0x10", "-16"},
    {"+12", "12"},
    {"-0", "0"},
    {"08", "8.0"},
    {"9223372036854775807", "9223372036854775807"},
    {"-9223372036854775808", "-9223372036854775808"},
    {"9223372036854775808", "9223372036854775808.0"},
    {"99999999999999999999", "1e20"},
    {"1e3", "1000.0"},
    {"2E-2", "0.02"},
    {"-2.0", "-2.0"},
    {".5", "0.5"},
    {"-.5", "-0.5"},
    {"1.", "1.0"},
    {"1e400", "\"1e400\""},
    {".inf", "\".inf\""},
    {"+.inf", "\".inf\""},
    {"-.Inf", "\"-.inf\""},
    {".NaN", "\".nan\""},
    {"~", "null"},
    {"null", "null"},
    {"Null", "null"},
    {"NULL", "null"},
    {"", "null"},
    {"nULL", "\"nULL\""},
    {"\"null\"", "\"null\""},
    {"0x", "\"0x\""},
    {"1.2.3", "\"1.2.3\""},
    {"+", "\"+\""},
    {"2001-12-14", "\"2001-12-14\""},
    {"10.0.0.1", "\"10.0.0.1\""},
    {"!!str 12", "\"12\""},
    {"!!str yes", "\"yes\""},
    {"!!float 3", "3.0"},
    {"!!int \"42\"", "42"},
    {"!!bool \"on\"", "true"},
    {"!!null \"\"", "null"},
    {"!!binary aGk=", "\"aGk=\""},
    {"!local 7", "\"7\""},
    {"! 7", "\"7\""},
    {"|\n  8\n", "\"8\\n\""},
    {">-\n  a\n  b\n", "\"a b\""},
    {"\"a\\0b\"", "\"a\\u0000b\""},
    {"\"\\u00e9\"", "\"\\u00e9\""},
};

START_TEST(test_yaml_scalar_typing)
{
    char *text = mu_xasprintf("v: %s\n", scalars[_i].yaml);
    json_t *want = json_loads(scalars[_i].json,
                             JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    json_t *root = parse_one(text);
    json_t *got = json_object_get(root, "v");
    char *gs = dump(got);

    ck_assert_ptr_nonnull(want);
    ck_assert_msg(json_equal(got, want), "v: %s gave %s, want %s",
                  scalars[_i].yaml, gs, scalars[_i].json);
    free(gs);
    json_decref(want);
    json_decref(root);
    free(text);
}
END_TEST

START_TEST(test_yaml_tag_mismatch_is_an_error)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("t.yaml", "v: !!int abc\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg,
                     "t.yaml:1:4: cannot decode !!str `abc` as a !!int");
    ck_assert_int_eq(parse_fail("t.yaml", "v: !!bool 1\n", &err), -EINVAL);
}
END_TEST

START_TEST(test_yaml_keys_are_their_text)
{
    json_t *root = parse_one("1: a\nyes: b\n~: c\n0x10: d\n'q': e\n1.5: f\n");
    const char *keys[] = {"1", "yes", "~", "0x10", "q", "1.5"};
    const char *vals[] = {"a", "b", "c", "d", "e", "f"};
    size_t i;

    ck_assert_uint_eq(json_object_size(root), MU_ARRAY_LEN(keys));
    for (i = 0; i < MU_ARRAY_LEN(keys); i++)
        ck_assert_str_eq(json_string_value(json_object_get(root, keys[i])),
                         vals[i]);
    json_decref(root);
}
END_TEST

START_TEST(test_yaml_non_scalar_key_is_an_error)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("k.yaml", "? [a, b]\n: c\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "k.yaml:1:3: mapping key must be a scalar");
}
END_TEST

START_TEST(test_yaml_multi_doc_skips_empty_and_records_lines)
{
    const char *text = "# leading comment\n"
                       "---\n"
                       "a: 1\n"
                       "---\n"
                       "# only a comment\n"
                       "---\n"
                       "---\n"
                       "\n"
                       "b: 2\n"
                       "...\n"
                       "--- null\n"
                       "---\n"
                       "- x\n";
    struct mu_yaml_docs d;
    struct mu_err err;

    mu_yaml_docs_init(&d);
    ck_assert_int_eq(mu_yaml_parse("m.yaml", text, strlen(text), &d, &err), 0);
    ck_assert_uint_eq(d.n, 3);
    ck_assert_int_eq(d.v[0].line, 3);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[0].root, "a")), 1);
    ck_assert_int_eq(d.v[1].line, 9);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[1].root, "b")), 2);
    ck_assert_int_eq(d.v[2].line, 13);
    ck_assert_str_eq(json_string_value(json_array_get(d.v[2].root, 0)), "x");
    mu_yaml_docs_release(&d);
    ck_assert_uint_eq(d.n, 0);
    ck_assert_ptr_null(d.v);
}
END_TEST

START_TEST(test_yaml_empty_inputs_give_no_documents)
{
    const char *inputs[] = {"", "# nothing\n", "---\n", "---\n...\n", "~\n"};
    struct mu_yaml_docs d;
    struct mu_err err;
    size_t i;

    mu_yaml_docs_init(&d);
    for (i = 0; i < MU_ARRAY_LEN(inputs); i++)
        ck_assert_int_eq(mu_yaml_parse("e.yaml", inputs[i], strlen(inputs[i]),
                                       &d, &err),
                         0);
    ck_assert_int_eq(mu_yaml_parse("e.yaml", NULL, 0, &d, &err), 0);
    ck_assert_uint_eq(d.n, 0);
    mu_yaml_docs_release(&d);
}
END_TEST

START_TEST(test_yaml_nested_structures)
{
    json_t *root = parse_one("apiVersion: batch.volcano.sh/v1alpha1\n"
                             "kind: Job\n"
                             "spec:\n"
                             "  minAvailable: 2\n"
                             "  tasks:\n"
                             "    - name: worker\n"
                             "      replicas: 2\n"
                             "      template:\n"
                             "        spec:\n"
                             "          containers:\n"
                             "            - image: pytorch:2\n"
                             "              args: [--lr, \"0.1\", 3]\n"
                             "              resources:\n"
                             "                limits: {nvidia.com/gpu: 8}\n");
    json_t *task, *c;

    ck_assert_str_eq(json_string_value(json_object_get(root, "kind")), "Job");
    task = json_array_get(
        json_object_get(json_object_get(root, "spec"), "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(task, "name")),
                     "worker");
    c = json_array_get(
        json_object_get(json_object_get(json_object_get(task, "template"),
                                        "spec"),
                        "containers"),
        0);
    ck_assert_str_eq(json_string_value(json_object_get(c, "image")),
                     "pytorch:2");
    ck_assert_str_eq(json_string_value(
                         json_array_get(json_object_get(c, "args"), 1)),
                     "0.1");
    ck_assert(json_is_integer(json_array_get(json_object_get(c, "args"), 2)));
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(json_object_get(c, "resources"),
                                         "limits"),
                         "nvidia.com/gpu")),
                     8);
    json_decref(root);
}
END_TEST

START_TEST(test_yaml_aliases_expand_to_copies)
{
    json_t *root = parse_one("a: &x {k: [1, 2]}\n"
                             "b: *x\n"
                             "s: &s hello\n"
                             "t: *s\n"
                             "*s : keyed\n");
    json_t *a = json_object_get(root, "a");
    json_t *b = json_object_get(root, "b");

    ck_assert(json_equal(a, b));
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_ne(json_object_get(a, "k"), json_object_get(b, "k"));
    ck_assert_str_eq(json_string_value(json_object_get(root, "t")), "hello");
    ck_assert_str_eq(json_string_value(json_object_get(root, "hello")),
                     "keyed");
    json_decref(root);
}
END_TEST

START_TEST(test_yaml_merge_keys_explicit_keys_win)
{
    json_t *root = parse_one("base: &b {p: 1, q: 2}\n"
                             "more: &m {q: 3, r: 4}\n"
                             "one:\n"
                             "  p: 0\n"
                             "  <<: *b\n"
                             "  z: 9\n"
                             "two:\n"
                             "  <<: [*m, *b]\n"
                             "  r: 5\n"
                             "three: {<<: {x: 1}}\n"
                             "quoted: {\"<<\": 1}\n");
    json_t *want = json_loads("{\"p\": 0, \"z\": 9, \"q\": 2}", 0, NULL);

    ck_assert(json_equal(json_object_get(root, "one"), want));
    json_decref(want);
    want = json_loads("{\"r\": 5, \"q\": 3, \"p\": 1}", 0, NULL);
    ck_assert(json_equal(json_object_get(root, "two"), want));
    json_decref(want);
    want = json_loads("{\"x\": 1}", 0, NULL);
    ck_assert(json_equal(json_object_get(root, "three"), want));
    json_decref(want);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(root, "quoted"), "<<")),
                     1);
    json_decref(root);
}
END_TEST

START_TEST(test_yaml_merge_of_non_map_is_an_error)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("g.yaml", "a:\n  <<: [1]\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "g.yaml:2:7: map merge requires map or "
                              "sequence of maps as the value");
}
END_TEST

START_TEST(test_yaml_unknown_alias_is_an_error)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("u.yaml", "a: 1\nb: *nope\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "u.yaml:2:4: unknown anchor 'nope' referenced");
    /* Anchors do not carry over to the next document. */
    ck_assert_int_eq(parse_fail("u.yaml", "a: &x 1\n---\nb: *x\n", &err),
                     -EINVAL);
}
END_TEST

START_TEST(test_yaml_alias_bomb_is_refused)
{
    struct mu_sb sb;
    struct mu_err err;
    const char *prev = "a";
    const char *names[] = {"b", "c", "d", "e", "f", "g", "h", "i"};
    size_t i, j;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (i = 0; i < MU_ARRAY_LEN(names); i++) {
        mu_sb_addf(&sb, "%s: &%s [", names[i], names[i]);
        for (j = 0; j < 9; j++)
            mu_sb_addf(&sb, "%s*%s", j ? ", " : "", prev);
        mu_sb_add(&sb, "]\n");
        prev = names[i];
    }
    ck_assert_int_eq(parse_fail("bomb.yaml", sb.buf, &err), -E2BIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "bomb.yaml:"));
    ck_assert_ptr_nonnull(strstr(err.msg, "alias"));
    mu_sb_release(&sb);

    /* Few aliases of one huge value are refused too. */
    mu_sb_init(&sb);
    mu_sb_add(&sb, "a: &a [0");
    for (i = 0; i < 100000; i++)
        mu_sb_add(&sb, ",1");
    mu_sb_add(&sb, "]\nb: [");
    for (i = 0; i < 20; i++)
        mu_sb_add(&sb, "*a,");
    mu_sb_add(&sb, "]\n");
    ck_assert_int_eq(parse_fail("big.yaml", sb.buf, &err), -E2BIG);
    mu_sb_release(&sb);
}
END_TEST

START_TEST(test_yaml_many_small_aliases_are_fine)
{
    struct mu_sb sb;
    struct mu_err err;
    json_t *root;
    size_t i;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "a: &a {x: 1}\nb:\n");
    for (i = 0; i < MU_YAML_MAX_ALIASES; i++)
        mu_sb_add(&sb, "- *a\n");
    root = parse_one(sb.buf);
    ck_assert_uint_eq(json_array_size(json_object_get(root, "b")),
                      MU_YAML_MAX_ALIASES);
    json_decref(root);
    mu_sb_add(&sb, "- *a\n");
    ck_assert_int_eq(parse_fail("n.yaml", sb.buf, &err), -E2BIG);
    mu_sb_release(&sb);
}
END_TEST

static char *nested(int levels, const char *middle)
{
    struct mu_sb sb;
    int i;

    mu_sb_init(&sb);
    for (i = 0; i < levels; i++)
        mu_sb_add(&sb, "[");
    mu_sb_add(&sb, middle);
    for (i = 0; i < levels; i++)
        mu_sb_add(&sb, "]");
    return mu_sb_detach(&sb);
}

START_TEST(test_yaml_depth_limit)
{
    struct mu_err err;
    char *ok = nested(MU_YAML_MAX_DEPTH, "1");
    char *deep = nested(MU_YAML_MAX_DEPTH + 1, "1");
    char *inner = nested(40, "");
    char *outer = nested(30, "*a");
    char *viaalias = mu_xasprintf("- &a %s\n- %s\n", inner, outer);
    json_t *root = parse_one(ok);

    json_decref(root);
    ck_assert_int_eq(parse_fail("d.yaml", deep, &err), -E2BIG);
    ck_assert_str_eq(err.msg, "d.yaml:1:65: nesting deeper than 64 levels");
    ck_assert_int_eq(parse_fail("d.yaml", viaalias, &err), -E2BIG);
    free(ok);
    free(deep);
    free(inner);
    free(outer);
    free(viaalias);
}
END_TEST

START_TEST(test_yaml_size_limit)
{
    size_t n = (size_t)MU_YAML_MAX_BYTES + 1;
    char *big = calloc(n, 1);
    struct mu_yaml_docs d;
    struct mu_err err;

    ck_assert_ptr_nonnull(big);
    mu_yaml_docs_init(&d);
    ck_assert_int_eq(mu_yaml_parse("huge.yaml", big, n, &d, &err), -E2BIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "huge.yaml"));
    ck_assert_uint_eq(d.n, 0);
    free(big);
}
END_TEST

START_TEST(test_yaml_duplicate_key_is_an_error)
{
    struct mu_err err;

    ck_assert_int_eq(
        parse_fail("dup.yaml", "a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n", &err),
        -EINVAL);
    ck_assert_str_eq(err.msg, "dup.yaml:5:3: duplicate key \"c\"");
    ck_assert_int_eq(parse_fail("dup.yaml", "{x: 1, \"x\": 2}", &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "dup.yaml:1:8: duplicate key \"x\"");
}
END_TEST

START_TEST(test_yaml_syntax_error_names_position)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("jobs.yaml", "a: b: c\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "jobs.yaml:1:5: mapping values are not allowed "
                              "in this context");
    ck_assert_int_eq(parse_fail("jobs.yaml", "a:\n  - x\n - y\n", &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "jobs.yaml:3:2: did not find expected key "
                              "while parsing a block mapping");
    ck_assert_int_eq(parse_fail("c.yaml", "a: ok\nb: \x01\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "c.yaml:2:4: control characters are not allowed");
    ck_assert_int_eq(parse_fail("u.yaml", "a: \xff\n", &err), -EINVAL);
    ck_assert_str_eq(err.msg, "u.yaml:1:4: invalid leading UTF-8 octet");
}
END_TEST

START_TEST(test_yaml_error_leaves_docs_unchanged)
{
    const char *good = "a: 1\n---\nb: 2\n";
    const char *bad = "c: 3\n---\nd: [\n";
    const char *dup = "x: 1\n---\na: 1\na: 2\n";
    struct mu_yaml_docs d;
    struct mu_err err;
    struct mu_yaml_doc *v;
    json_t *r0, *r1;
    size_t cap;

    mu_yaml_docs_init(&d);
    ck_assert_int_eq(mu_yaml_parse("g.yaml", good, strlen(good), &d, &err), 0);
    ck_assert_uint_eq(d.n, 2);
    v = d.v;
    cap = d.cap;
    r0 = d.v[0].root;
    r1 = d.v[1].root;
    ck_assert_int_eq(mu_yaml_parse("b.yaml", bad, strlen(bad), &d, &err),
                     -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "b.yaml:4:1: "));
    ck_assert_int_eq(mu_yaml_parse("b.yaml", dup, strlen(dup), &d, &err),
                     -EINVAL);
    ck_assert_uint_eq(d.n, 2);
    ck_assert_uint_eq(d.cap, cap);
    ck_assert_ptr_eq(d.v, v);
    ck_assert_ptr_eq(d.v[0].root, r0);
    ck_assert_ptr_eq(d.v[1].root, r1);
    ck_assert_int_eq(json_integer_value(json_object_get(r1, "b")), 2);
    ck_assert_int_eq(d.v[1].line, 3);
    /* A later good parse appends after the kept ones. */
    ck_assert_int_eq(mu_yaml_parse("g.yaml", "z: 0", 4, &d, &err), 0);
    ck_assert_uint_eq(d.n, 3);
    ck_assert_ptr_nonnull(json_object_get(d.v[2].root, "z"));
    mu_yaml_docs_release(&d);
}
END_TEST

START_TEST(test_yaml_reads_json)
{
    json_t *root = parse_one("{\n"
                             "\t\"kind\": \"Pod\",\n"
                             "\t\"n\": [1, -0, 1.5e3, true, null, "
                             "\"\\u00e9\"],\n"
                             "\t\"o\":{\"a\":{}, \"b\":[]}\n"
                             "}\n");
    json_t *want = json_loads("{\"kind\": \"Pod\", \"n\": [1, 0, 1500.0, "
                              "true, null, \"\\u00e9\"], "
                              "\"o\": {\"a\": {}, \"b\": []}}",
                              0, NULL);

    ck_assert_ptr_nonnull(want);
    ck_assert(json_equal(root, want));
    json_decref(want);
    json_decref(root);
}
END_TEST

START_TEST(test_yaml_parse_file_missing)
{
    struct mu_yaml_docs d;
    struct mu_err err;
    const char *path = "/nonexistent/muster/jobs.yaml";

    mu_yaml_docs_init(&d);
    ck_assert_int_eq(mu_yaml_parse_file(path, &d, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_uint_eq(d.n, 0);
}
END_TEST

static char *temp_file(const char *text)
{
    char *path = mu_xstrdup("/tmp/test_yaml_XXXXXX");
    int fd = mkstemp(path);
    size_t n = strlen(text);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

START_TEST(test_yaml_parse_file_reads_path_and_stdin)
{
    struct mu_yaml_docs d;
    struct mu_err err;
    char *path = temp_file("a: 1\n---\nb: x\n");
    char *bad = temp_file("a: 1\n  b: 2\n");
    char *want;

    mu_yaml_docs_init(&d);
    ck_assert_int_eq(mu_yaml_parse_file(path, &d, &err), 0);
    ck_assert_uint_eq(d.n, 2);
    ck_assert_int_eq(mu_yaml_parse_file(bad, &d, &err), -EINVAL);
    want = mu_xasprintf("%s:2:4: ", bad);
    ck_assert_ptr_nonnull(strstr(err.msg, want));
    ck_assert_ptr_nonnull(freopen(path, "r", stdin));
    ck_assert_int_eq(mu_yaml_parse_file("-", &d, &err), 0);
    ck_assert_uint_eq(d.n, 4);
    ck_assert_ptr_nonnull(freopen(bad, "r", stdin));
    ck_assert_int_eq(mu_yaml_parse_file("-", &d, &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "<stdin>:2:4: "));
    ck_assert_uint_eq(d.n, 4);
    mu_yaml_docs_release(&d);
    unlink(path);
    unlink(bad);
    free(want);
    free(path);
    free(bad);
}
END_TEST

static const struct {
    double v;
    const char *text;
} reals[] = {
    {0.1, "0.1"},
    {1.5, "1.5"},
    {2000, "2000"},
    {1e21, "1e+21"},
    {-1e21, "-1e+21"},
    {1e20, "100000000000000000000"},
    {1e-7, "1e-7"},
    {1.5e-10, "1.5e-10"},
    {0.000001, "0.000001"},
    {-2.5, "-2.5"},
    {0.5, "0.5"},
    {33.3, "33.3"},
    {0.1 + 0.2, "0.30000000000000004"},
    {123456789.125, "123456789.125"},
    {5e-324, "5e-324"},
    {1.7976931348623157e308, "1.7976931348623157e+308"},
    {0.0, "0"},
    {-0.0, "-0"},
    {100, "100"},
};

START_TEST(test_json_real_text_is_shortest)
{
    char buf[64];

    ck_assert_ptr_eq(mu_json_real_text(reals[_i].v, buf, sizeof(buf)), buf);
    ck_assert_str_eq(buf, reals[_i].text);
    ck_assert_double_eq(strtod(buf, NULL), reals[_i].v);
}
END_TEST

START_TEST(test_json_real_text_truncates_to_buffer)
{
    char buf[4] = "zzz";

    mu_json_real_text(0.1 + 0.2, buf, sizeof(buf));
    ck_assert_str_eq(buf, "0.3");
    mu_json_real_text(1.0, buf, 0);
    ck_assert_str_eq(buf, "0.3");
}
END_TEST

/* Each mapping key's line, and a decoder's field path to its line. */
START_TEST(test_yaml_lines_of_keys_and_paths)
{
    static const char text[] = "a: 1\n"
                               "spec:\n"
                               "  tasks:\n"
                               "  - name: w\n"
                               "    replicas: 2\n"
                               "  - name: v\n"
                               "    template:\n"
                               "      spec: {containers: [{name: c}]}\n"
                               "---\n"
                               "b: 2\n";
    struct mu_yaml_docs docs;
    struct mu_err err;
    const json_t *spec;

    mu_yaml_docs_init(&docs);
    ck_assert_int_eq(mu_yaml_parse("t.yaml", text, strlen(text), &docs, &err),
                     0);
    ck_assert_uint_eq(docs.n, 2);
    spec = json_object_get(docs.v[0].root, "spec");
    ck_assert_int_eq(mu_yaml_key_line(&docs.v[0], docs.v[0].root, "a"), 1);
    ck_assert_int_eq(mu_yaml_key_line(&docs.v[0], spec, "tasks"), 3);
    ck_assert_int_eq(mu_yaml_key_line(&docs.v[0], spec, "nope"), 0);
    ck_assert_int_eq(mu_yaml_path_line(&docs.v[0], "spec.tasks[0].replicas"),
                     5);
    ck_assert_int_eq(mu_yaml_path_line(&docs.v[0], "spec.tasks[1].name"), 6);
    ck_assert_int_eq(
        mu_yaml_path_line(&docs.v[0],
                          "spec.tasks[1].template.spec.containers[0].name"),
        8);
    /* the deepest key that exists, then the document's line */
    ck_assert_int_eq(mu_yaml_path_line(&docs.v[0], "spec.tasks[7].name"), 3);
    ck_assert_int_eq(mu_yaml_path_line(&docs.v[0], "spec.missing"), 2);
    ck_assert_int_eq(mu_yaml_path_line(&docs.v[0], "zzz"), 1);
    ck_assert_int_eq(mu_yaml_key_line(&docs.v[1], docs.v[1].root, "b"), 10);
    mu_yaml_docs_release(&docs);
}
END_TEST

START_TEST(test_yaml_a_tab_says_so)
{
    struct mu_err err;

    ck_assert_int_eq(parse_fail("t.yaml", "a:\n\tb: 1\n", &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "t.yaml:2:1: ") &&
                      strstr(err.msg, "; YAML indents with spaces, not tabs"),
                  "%s", err.msg);
}
END_TEST

static void count_finding(void *ctx, int line, bool invalid, const char *msg)
{
    int *n = ctx;

    n[invalid ? 1 : 0]++;
    (void)line;
    (void)msg;
}

/* An invalid value refuses its object even behind more unknown fields than
 * are shown (api/strict.h), and a quantity is never read cut short. */
START_TEST(test_strict_counts_invalid_values_past_the_cap)
{
    struct mu_sb sb;
    struct mu_yaml_docs docs;
    struct mu_err err;
    int n[2] = {0, 0};

    mu_sb_init(&sb);
    mu_sb_add(&sb, "kind: Job\nspec:\n  tasks:\n");
    for (int i = 0; i < MU_STRICT_MAX_FINDINGS + 10; i++)
        mu_sb_addf(&sb, "  - {name: t%d, replica: 1}\n", i);
    mu_sb_add(&sb, "  - name: last\n    template:\n      spec:\n"
                   "        containers:\n        - name: c\n"
                   "          resources:\n"
                   "            requests: {cpu: '0000000000000000000000000000"
                   "0000000000000000000000000000000000000002'}\n"
                   "            limits: {cpu: '1', nvidia.com/gpu: '0.5'}\n");
    mu_yaml_docs_init(&docs);
    ck_assert_int_eq(mu_yaml_parse("j.yaml", sb.buf, sb.len, &docs, &err), 0);
    ck_assert_int_eq(mu_strict_check("Job", docs.v[0].root, &docs.v[0],
                                     count_finding, n),
                     2);
    /* the cap's worth shown, then one "more findings not shown" */
    ck_assert_int_eq(n[0] + n[1], MU_STRICT_MAX_FINDINGS + 1);
    mu_yaml_docs_release(&docs);
    mu_sb_release(&sb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_yaml_scalar_typing, 0, MU_ARRAY_LEN(scalars));
    tcase_add_test(tc, test_yaml_tag_mismatch_is_an_error);
    tcase_add_test(tc, test_yaml_lines_of_keys_and_paths);
    tcase_add_test(tc, test_yaml_a_tab_says_so);
    tcase_add_test(tc, test_strict_counts_invalid_values_past_the_cap);
    tcase_add_test(tc, test_yaml_keys_are_their_text);
    tcase_add_test(tc, test_yaml_non_scalar_key_is_an_error);
    tcase_add_test(tc, test_yaml_multi_doc_skips_empty_and_records_lines);
    tcase_add_test(tc, test_yaml_empty_inputs_give_no_documents);
    tcase_add_test(tc, test_yaml_nested_structures);
    tcase_add_test(tc, test_yaml_aliases_expand_to_copies);
    tcase_add_test(tc, test_yaml_merge_keys_explicit_keys_win);
    tcase_add_test(tc, test_yaml_merge_of_non_map_is_an_error);
    tcase_add_test(tc, test_yaml_unknown_alias_is_an_error);
    tcase_add_test(tc, test_yaml_alias_bomb_is_refused);
    tcase_add_test(tc, test_yaml_many_small_aliases_are_fine);
    tcase_add_test(tc, test_yaml_depth_limit);
    tcase_add_test(tc, test_yaml_size_limit);
    tcase_add_test(tc, test_yaml_duplicate_key_is_an_error);
    tcase_add_test(tc, test_yaml_syntax_error_names_position);
    tcase_add_test(tc, test_yaml_error_leaves_docs_unchanged);
    tcase_add_test(tc, test_yaml_reads_json);
    tcase_add_test(tc, test_yaml_parse_file_missing);
    tcase_add_test(tc, test_yaml_parse_file_reads_path_and_stdin);
    tcase_add_loop_test(tc, test_json_real_text_is_shortest, 0,
                        MU_ARRAY_LEN(reals));
    tcase_add_test(tc, test_json_real_text_truncates_to_buffer);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
