/* The DRA selector subset of CEL (api/cel.h). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/cel.h"
#include "api/cel_eval.h"

#define GPU "device.attributes[\"gpu.example.com\"]"
#define MEM "device.capacity[\"gpu.example.com\"].memory"
#define CORES "device.capacity[\"gpu.example.com\"].cores"
#define NO_A GPU ".a == 1"
#define NO_B GPU ".b == 1"
#define NO_A_MSG "no attribute gpu.example.com/a"

static const struct {
    const char *name;
    enum mu_cel_kind kind;
    const char *s;
    int64_t i;
    bool b;
} attr_spec[] = {
    {"gpu.example.com/model", MU_CEL_STRING, "H100", 0, false},
    {"gpu.example.com/count", MU_CEL_INT, NULL, 8, false},
    {"gpu.example.com/mig", MU_CEL_BOOL, NULL, 0, true},
    {"gpu.example.com/ecc", MU_CEL_BOOL, NULL, 0, false},
    {"gpu.example.com/driverVersion", MU_CEL_VERSION, "1.2.3", 0, false},
    {"gpu.example.com/quote", MU_CEL_STRING, "a\"b'c\\d\ne\tf", 0, false},
    {"other.io/zone", MU_CEL_STRING, "z1", 0, false},
};

static const struct {
    const char *name;
    int64_t milli;
} cap_spec[] = {
    {"gpu.example.com/memory", INT64_C(80) * 1024 * 1024 * 1024 * 1000},
    {"gpu.example.com/cores", 1500},
};

static struct mu_cel_attr attrs[MU_ARRAY_LEN(attr_spec)];
static struct mu_cel_cap caps[MU_ARRAY_LEN(cap_spec)];
static const struct mu_cel_device dev = {
    .driver = "gpu.example.com",
    .nattrs = MU_ARRAY_LEN(attrs),
    .attrs = attrs,
    .ncaps = MU_ARRAY_LEN(caps),
    .caps = caps,
};

static void setup(void)
{
    for (size_t i = 0; i < MU_ARRAY_LEN(attrs); i++) {
        attrs[i].name = mu_xstrdup(attr_spec[i].name);
        attrs[i].kind = attr_spec[i].kind;
        attrs[i].s = mu_xstrdup_or_null(attr_spec[i].s);
        attrs[i].i = attr_spec[i].i;
        attrs[i].b = attr_spec[i].b;
    }
    for (size_t i = 0; i < MU_ARRAY_LEN(caps); i++) {
        caps[i].name = mu_xstrdup(cap_spec[i].name);
        caps[i].milli = cap_spec[i].milli;
    }
}

static void teardown(void)
{
    for (size_t i = 0; i < MU_ARRAY_LEN(attrs); i++) {
        free(attrs[i].name);
        free(attrs[i].s);
    }
    for (size_t i = 0; i < MU_ARRAY_LEN(caps); i++)
        free(caps[i].name);
}

/* Compiled, then evaluated on dev: 1, 0, or -EINVAL with msg. */
static const struct {
    const char *src;
    int want;
    const char *msg;
} evals[] = {
    /* literals */
    {"true", 1, NULL},
    {"false", 0, NULL},
    {"(true)", 1, NULL},
    {"!false", 1, NULL},
    {"!!true", 1, NULL},
    {"1 < 2", 1, NULL},
    {"-3 < -2", 1, NULL},
    {"-9223372036854775808 < 9223372036854775807", 1, NULL},
    {"\"a\" < \"b\"", 1, NULL},
    {"\"b\" <= \"a\"", 0, NULL},
    {"\"abc\" > \"abd\"", 0, NULL},
    {"\"abd\" >= \"abc\"", 1, NULL},
    {"true == true", 1, NULL},
    {"false != true", 1, NULL},
    {"(1 == 1) == true", 1, NULL},
    /* device.driver */
    {"device.driver == \"gpu.example.com\"", 1, NULL},
    {"device.driver == \"other\"", 0, NULL},
    {"device.driver != \"other\"", 1, NULL},
    {"\"gpu.example.com\" == device.driver", 1, NULL},
    /* string attributes, both lookups */
    {GPU ".model == \"H100\"", 1, NULL},
    {GPU ".model == \"A100\"", 0, NULL},
    {GPU "[\"model\"] != \"A100\"", 1, NULL},
    {GPU "[\"model\"] != \"H100\"", 0, NULL},
    {GPU ".model > \"A100\"", 1, NULL},
    {GPU ".model < \"A100\"", 0, NULL},
    {"device.attributes[\"other.io\"].zone == \"z1\"", 1, NULL},
    /* int attributes */
    {GPU ".count >= 4", 1, NULL},
    {GPU ".count > 8", 0, NULL},
    {GPU ".count < 9", 1, NULL},
    {GPU ".count <= 7", 0, NULL},
    {GPU "[\"count\"] == 8", 1, NULL},
    {GPU ".count != 8", 0, NULL},
    {GPU ".count == " GPU ".count", 1, NULL},
    /* bool attributes, compared and on their own */
    {GPU ".mig == true", 1, NULL},
    {GPU ".ecc == true", 0, NULL},
    {GPU ".mig != false", 1, NULL},
    {GPU ".mig", 1, NULL},
    {GPU ".ecc", 0, NULL},
    {"!" GPU ".ecc", 1, NULL},
    {GPU ".mig && !" GPU ".ecc", 1, NULL},
    /* capacities through compareTo */
    {MEM ".compareTo(quantity(\"80Gi\")) == 0", 1, NULL},
    {MEM ".compareTo(quantity(\"81920Mi\")) == 0", 1, NULL},
    {MEM ".compareTo(quantity(\"80Gi\")) != 0", 0, NULL},
    {MEM ".compareTo(quantity(\"40Gi\")) == 1", 1, NULL},
    {MEM ".compareTo(quantity(\"40Gi\")) > 0", 1, NULL},
    {MEM ".compareTo(quantity(\"40Gi\")) <= 0", 0, NULL},
    {MEM ".compareTo(quantity(\"160Gi\")) == -1", 1, NULL},
    {MEM ".compareTo(quantity(\"160Gi\")) >= 0", 0, NULL},
    {"-1 == " MEM ".compareTo(quantity(\"160Gi\"))", 1, NULL},
    {MEM ".compareTo(quantity(\"80G\")) > 0", 1, NULL},
    {"device.capacity[\"gpu.example.com\"][\"memory\"]"
     ".compareTo(quantity('80Gi')) < 1", 1, NULL},
    {CORES ".compareTo(quantity(\"1.5\")) == 0", 1, NULL},
    {CORES ".compareTo(quantity(\"1500m\")) == 0", 1, NULL},
    {CORES ".compareTo(quantity(\"1\")) == 1", 1, NULL},
    {CORES ".compareTo(quantity(\"1501m\")) < 0", 1, NULL},
    /* in: true or false, never an error */
    {"\"model\" in " GPU, 1, NULL},
    {"'model' in device.attributes['gpu.example.com']", 1, NULL},
    {"\"missing\" in " GPU, 0, NULL},
    {"\"zone\" in " GPU, 0, NULL},
    {"\"zone\" in device.attributes[\"other.io\"]", 1, NULL},
    {"\"model\" in device.attributes[\"nope.io\"]", 0, NULL},
    {"!(\"model\" in " GPU ")", 0, NULL},
    {"\"missing\" in " GPU " || " GPU ".count == 8", 1, NULL},
    {"(\"a\" in " GPU ") == false", 1, NULL},
    /* && and || with precedence */
    {"true && false", 0, NULL},
    {"true && true", 1, NULL},
    {"false || true", 1, NULL},
    {"false || false", 0, NULL},
    {"true || false && false", 1, NULL},
    {"(true || false) && false", 0, NULL},
    {"!true || true", 1, NULL},
    {"true && true && true && false", 0, NULL},
    /* errors: the deciding value wins over them, wherever they are */
    {"false && " NO_A, 0, NULL},
    {NO_A " && false", 0, NULL},
    {"true && " NO_A, -EINVAL, NO_A_MSG},
    {NO_A " && true", -EINVAL, NO_A_MSG},
    {"true || " NO_A, 1, NULL},
    {NO_A " || true", 1, NULL},
    {"false || " NO_A, -EINVAL, NO_A_MSG},
    {NO_A " || false", -EINVAL, NO_A_MSG},
    {NO_A " && " NO_B, -EINVAL, NO_A_MSG},
    {NO_A " || " NO_B, -EINVAL, NO_A_MSG},
    {NO_A " && " NO_B " && false", 0, NULL},
    {"(" NO_A " || true) && true", 1, NULL},
    {"(" NO_A " || false) && true", -EINVAL, NO_A_MSG},
    {"!(" NO_A ")", -EINVAL, NO_A_MSG},
    {NO_A, -EINVAL, NO_A_MSG},
    {GPU "[\"a\"]", -EINVAL, NO_A_MSG},
    {"device.capacity[\"gpu.example.com\"].nope"
     ".compareTo(quantity(\"1\")) == 0",
     -EINVAL, "no capacity gpu.example.com/nope"},
    {"device.capacity[\"other.io\"].memory"
     ".compareTo(quantity(\"1\")) == 0",
     -EINVAL, "no capacity other.io/memory"},
    /* kinds meet only at evaluation */
    {GPU ".count == \"8\"", -EINVAL, "no such overload: int == string"},
    {GPU ".model < 3", -EINVAL, "no such overload: string < int"},
    {GPU ".mig < true", -EINVAL, "no such overload: bool < bool"},
    {GPU ".mig == " GPU ".count", -EINVAL, "no such overload: bool == int"},
    {GPU ".model", -EINVAL,
     "attribute gpu.example.com/model is string, not bool"},
    {"!" GPU ".count", -EINVAL,
     "attribute gpu.example.com/count is int, not bool"},
    {"true && " GPU ".count", -EINVAL,
     "attribute gpu.example.com/count is int, not bool"},
    /* versions: == and != against a string literal only */
    {GPU ".driverVersion == \"1.2.3\"", 1, NULL},
    {GPU ".driverVersion == \"1.2.4\"", 0, NULL},
    {GPU ".driverVersion != \"1.2.3\"", 0, NULL},
    {"\"1.2.3\" == " GPU ".driverVersion", 1, NULL},
    {GPU ".driverVersion >= \"1.0.0\"", -EINVAL,
     "attribute gpu.example.com/driverVersion is a version: it compares "
     "only with == or != to a string literal"},
    {GPU ".driverVersion == device.driver", -EINVAL,
     "attribute gpu.example.com/driverVersion is a version: it compares "
     "only with == or != to a string literal"},
    {GPU ".driverVersion", -EINVAL,
     "attribute gpu.example.com/driverVersion is version, not bool"},
    /* string escapes and quotes */
    {GPU ".quote == \"a\\\"b'c\\\\d\\ne\\tf\"", 1, NULL},
    {GPU ".quote == 'a\"b\\'c\\\\d\\ne\\tf'", 1, NULL},
    {GPU ".quote == \"a\\\"b'c\\\\d\\ne\\tF\"", 0, NULL},
    {"\"it's\" == 'it\\'s'", 1, NULL},
    {"'say \"hi\"' == \"say \\\"hi\\\"\"", 1, NULL},
    {"\"\" == ''", 1, NULL},
    {"\"caf\xc3\xa9\" > \"cafe\"", 1, NULL},
    /* whitespace between any tokens */
    {"\t device . attributes [ \"gpu.example.com\" ] . count\n >=\r\n 4 ", 1,
     NULL},
    {"device.driver==\"gpu.example.com\"&&!false", 1, NULL},
    {MEM " . compareTo ( quantity ( \"80Gi\" ) ) == 0", 1, NULL},
    {"- 3 < 0", 1, NULL},
    {"\f( ( true ) )\f", 1, NULL},
};

START_TEST(test_eval_table)
{
    const char *msg = evals[_i].msg ? evals[_i].msg : "untouched";
    struct mu_err err = {"untouched"}, cerr = {""};
    struct mu_cel *e = mu_cel_compile(evals[_i].src, &cerr);
    int rc;

    ck_assert_msg(e != NULL, "%s: %s", evals[_i].src, cerr.msg);
    rc = mu_cel_eval(e, &dev, &err);
    ck_assert_msg(rc == evals[_i].want, "%s: got %d, want %d (%s)",
                  evals[_i].src, rc, evals[_i].want, err.msg);
    /* err is written only on failure */
    ck_assert_str_eq(err.msg, msg);
    ck_assert_int_eq(mu_cel_eval(e, &dev, NULL), evals[_i].want);
    mu_cel_free(e);
}
END_TEST

/* Outside the subset: refused at compile time, naming the thing. */
static const struct {
    const char *src;
    const char *prefix;
} unsupported[] = {
    {MEM ".isGreaterThan(quantity(\"1\"))",
     "unsupported: method isGreaterThan"},
    {"quantity(\"1\").isLessThan(quantity(\"2\"))",
     "unsupported: method isLessThan"},
    {"request.driver == \"x\"", "unsupported: identifier request"},
    {GPU ".count + 1 == 9", "unsupported: operator +"},
    {GPU ".count - 1 == 7", "unsupported: operator -"},
    {GPU ".count * 2 == 16", "unsupported: operator *"},
    {GPU ".count / 2 == 4", "unsupported: operator /"},
    {GPU ".count % 2 == 0", "unsupported: operator %"},
    {"-" GPU ".count < 0", "unsupported: operator -"},
    {"true ? true : false", "unsupported: operator ?:"},
    {"has(" GPU ".model)", "unsupported: function has"},
    {"size(device.driver) > 0", "unsupported: function size"},
    {"int(\"1\") == 1", "unsupported: function int"},
    {"device.driver in [\"a\", \"b\"]", "unsupported: list"},
    {"{\"a\": true}[\"a\"]", "unsupported: map"},
    {GPU ".all(x, true)", "unsupported: method all"},
    {"device.attributes.exists(d, true)", "unsupported: method exists"},
    {"device.driver.matches(\"gpu.*\")", "unsupported: method matches"},
    {"device.driver.startsWith(\"gpu\")", "unsupported: method startsWith"},
    {GPU ".model.size() > 0", "unsupported: method size"},
    {"device.driver() == \"x\"", "unsupported: method driver"},
    {GPU ".model() == \"x\"", "unsupported: method model"},
    {"device.foo == \"x\"", "unsupported: member foo of device"},
    {GPU ".model.foo == 1", "unsupported: member foo of attribute"},
    {MEM ".value > 0", "unsupported: member value of capacity"},
    {GPU ".model[\"x\"] == 1", "unsupported: index on attribute"},
    {"device[\"driver\"] == \"x\"", "unsupported: index on device"},
    {"device == 1", "unsupported: device as a value"},
    {"device.attributes == 1", "unsupported: device.attributes as a value"},
    {"device.attributes.gpu == 1",
     "unsupported: member gpu of device.attributes"},
    {"1.5 > 1", "unsupported: float literal"},
    {"1e3 > 1", "unsupported: float literal"},
    {".5 > 1", "unsupported: float literal"},
    {"0x10 == 16", "unsupported: hex literal"},
    {"1u == 1u", "unsupported: unsigned int literal"},
    {"r\"abc\" == \"abc\"", "unsupported: raw string"},
    {"b'abc' == b'abc'", "unsupported: bytes literal"},
    {"\"\"\"abc\"\"\" == \"abc\"", "unsupported: triple-quoted string"},
    {"\"a\\rb\" == \"x\"", "unsupported: escape \\r"},
    {"\"\\u00e9\" == \"x\"", "unsupported: escape \\u"},
    {GPU ".model == null", "unsupported: null"},
    {MEM " == 1",
     "unsupported: capacity gpu.example.com/memory without compareTo"},
    {MEM ".compareTo(1) == 0",
     "unsupported: compareTo argument other than quantity(\"...\")"},
    {MEM ".compareTo(quantity(\"1\")) == " GPU ".count",
     "unsupported: compareTo compared with anything but an int literal"},
    {CORES ".compareTo(quantity(\"1\")) == "
     MEM ".compareTo(quantity(\"1\"))",
     "unsupported: compareTo compared with anything but an int literal"},
    {MEM ".compareTo(quantity(\"1\"), 2) == 0",
     "unsupported: compareTo with more than one argument"},
    {"quantity(\"1\") == quantity(\"1\")",
     "unsupported: quantity outside compareTo"},
    {MEM ".compareTo(quantity(device.driver)) == 0",
     "unsupported: quantity of anything but a string literal"},
    {"\"memory\" in device.capacity[\"gpu.example.com\"]",
     "unsupported: in on device.capacity"},
    {"device.driver in " GPU,
     "unsupported: in with a key other than a string literal"},
    {"\"x\" in device.driver", "unsupported: in on string"},
    {"device.attributes[device.driver].model == \"x\"",
     "unsupported: index other than a string literal"},
    {GPU " == \"x\"",
     "unsupported: device.attributes[\"gpu.example.com\"] without a name"},
    {"device.driver == \"x\" // a comment", "unsupported: comment"},
    {".device.driver == \"x\"", "unsupported: leading '.'"},
};

START_TEST(test_unsupported_forms_are_named)
{
    struct mu_err err = {""};
    const char *want = unsupported[_i].prefix;

    ck_assert_ptr_null(mu_cel_compile(unsupported[_i].src, &err));
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0,
                  "%s: got '%s', want '%s...'", unsupported[_i].src, err.msg,
                  want);
    ck_assert_ptr_null(mu_cel_compile(unsupported[_i].src, NULL));
}
END_TEST

/* Types known at compile time are checked there. */
static const struct {
    const char *src;
    const char *msg;
} type_errors[] = {
    {"device.driver", "the selector must be a bool, not string"},
    {"1", "the selector must be a bool, not int"},
    {MEM ".compareTo(quantity(\"1\"))",
     "the selector must be a bool, not int"},
    {"\"a\" == 1", "no such overload: string == int"},
    {"device.driver == true", "no such overload: string == bool"},
    {"true < false", "no such overload: bool < bool"},
    {"(1 == 1) == 1", "no such overload: bool == int"},
    {MEM ".compareTo(quantity(\"80Gi\")) == \"x\"",
     "no such overload: int == string"},
    {"1 && true", "an operand of && must be a bool, not int"},
    {"false || \"x\"", "an operand of || must be a bool, not string"},
    {"!\"x\"", "the operand of ! must be a bool, not string"},
    {"!\"model\" in " GPU, "the operand of ! must be a bool, not string"},
    {MEM ".compareTo(quantity(\"80Gx\")) == 0",
     "quantity(\"80Gx\"): quantities must match the regular expression"},
    {MEM ".compareTo(quantity(\"99999999999Ei\")) == 0",
     "quantity(\"99999999999Ei\"): value too large"},
};

START_TEST(test_type_errors_at_compile_time)
{
    struct mu_err err = {""};
    const char *want = type_errors[_i].msg;

    ck_assert_ptr_null(mu_cel_compile(type_errors[_i].src, &err));
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0,
                  "%s: got '%s', want '%s...'", type_errors[_i].src, err.msg,
                  want);
}
END_TEST

/* Not CEL: the byte offset and what went wrong. */
static const struct {
    const char *src;
    const char *msg;
} syntax_errors[] = {
    {"(device.driver == \"x\"", "syntax error at offset 21: expected ')'"},
    {"((true)", "syntax error at offset 7: expected ')'"},
    {"device.driver == \"x\")",
     "syntax error at offset 20: expected end of input"},
    {"true)", "syntax error at offset 4: expected end of input"},
    {"device.driver == \"x\" true",
     "syntax error at offset 21: expected end of input"},
    {"device.driver == \"abc",
     "syntax error at offset 17: unterminated string"},
    {"device.driver == 'abc\"",
     "syntax error at offset 17: unterminated string"},
    {"\"abc\\", "syntax error at offset 0: unterminated string"},
    {"\"a\nb\" == \"x\"", "syntax error at offset 2: newline in string"},
    {"", "syntax error at offset 0: unexpected end of input"},
    {"  \t", "syntax error at offset 3: unexpected end of input"},
    {"true &&", "syntax error at offset 7: unexpected end of input"},
    {"true && && true", "syntax error at offset 8: unexpected '&&'"},
    {"== 1", "syntax error at offset 0: unexpected '=='"},
    {"device.driver = \"x\"",
     "syntax error at offset 14: unexpected character '='"},
    {"device.driver == \"x\" & true",
     "syntax error at offset 21: unexpected character '&'"},
    {"true \xc3\xa9", "syntax error at offset 5: unexpected byte 0xc3"},
    {"device.", "syntax error at offset 7: expected a name after '.'"},
    {"device.attributes[\"a\"", "syntax error at offset 21: expected ']'"},
    {MEM ".compareTo() == 0", "syntax error at offset 52: unexpected ')'"},
    {"99999999999999999999 == 1",
     "syntax error at offset 0: int literal out of range"},
    {"9223372036854775808 == 1",
     "syntax error at offset 0: int literal out of range"},
    {"-9223372036854775809 == 1",
     "syntax error at offset 1: int literal out of range"},
    {"12abc == 1", "syntax error at offset 2: unexpected 'a' in a number"},
};

START_TEST(test_syntax_errors_say_where)
{
    struct mu_err err = {""};

    ck_assert_ptr_null(mu_cel_compile(syntax_errors[_i].src, &err));
    ck_assert_str_eq(err.msg, syntax_errors[_i].msg);
}
END_TEST

/* open x n, mid, close x n. */
static char *nest(const char *open, int n, const char *mid, const char *close)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    for (int i = 0; i < n; i++)
        mu_sb_add(&sb, open);
    mu_sb_add(&sb, mid);
    for (int i = 0; i < n; i++)
        mu_sb_add(&sb, close);
    return mu_sb_detach(&sb);
}

static int compile_eval(const char *src, struct mu_err *err)
{
    struct mu_cel *e = mu_cel_compile(src, err);
    int rc;

    if (!e)
        return -ENOEXEC;
    rc = mu_cel_eval(e, &dev, err);
    mu_cel_free(e);
    return rc;
}

START_TEST(test_nesting_stops_at_max_depth)
{
    const int max = MU_CEL_MAX_DEPTH;
    struct mu_err err = {""};
    char *s;

    /* the whole expression is one level, each parenthesis another */
    s = nest("(", max - 1, "true", ")");
    ck_assert_int_eq(compile_eval(s, &err), 1);
    free(s);
    s = nest("(", max, "true", ")");
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert_str_eq(err.msg, "too deeply nested: more than 64 levels");
    free(s);
    s = nest("(", 100000, "true", ")"); /* too long first */
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert(mu_starts_with(err.msg, "too long"));
    free(s);

    /* each ! is a level */
    s = nest("!", max - 1, "true", "");
    ck_assert_int_eq(compile_eval(s, &err), 0);
    free(s);
    s = nest("!", max, "true", "");
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert_str_eq(err.msg, "too deeply nested: more than 64 levels");
    free(s);
    s = nest("!(", max / 2, "true", ")");
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert_str_eq(err.msg, "too deeply nested: more than 64 levels");
    free(s);

    /* so is each comparison of a chain: ((true == true) == true) ... */
    s = nest("", 0, "true", "");
    for (int i = 0; i < max - 1; i++) {
        char *t = mu_xasprintf("%s == true", s);

        free(s);
        s = t;
    }
    ck_assert_int_eq(compile_eval(s, &err), 1);
    free(s);
    s = nest("", 0, "true", "");
    for (int i = 0; i < max; i++) {
        char *t = mu_xasprintf("%s == true", s);

        free(s);
        s = t;
    }
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert_str_eq(err.msg, "too deeply nested: more than 64 levels");
    free(s);
}
END_TEST

START_TEST(test_long_chains_are_not_deep)
{
    struct mu_err err = {""};
    struct mu_sb sb;
    char *s;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "true");
    for (int i = 0; i < 200; i++)
        mu_sb_add(&sb, " && " GPU ".mig");
    s = mu_sb_detach(&sb);
    ck_assert_uint_le(strlen(s), MU_CEL_MAX_LEN);
    ck_assert_int_eq(compile_eval(s, &err), 1);
    free(s);

    mu_sb_init(&sb);
    mu_sb_add(&sb, "false");
    for (int i = 0; i < 200; i++)
        mu_sb_add(&sb, " || " GPU ".ecc");
    s = mu_sb_detach(&sb);
    ck_assert_int_eq(compile_eval(s, &err), 0);
    free(s);
}
END_TEST

START_TEST(test_length_limit)
{
    struct mu_err err = {""};
    char *s = mu_xmalloc(MU_CEL_MAX_LEN + 2);

    memset(s, ' ', MU_CEL_MAX_LEN + 1);
    memcpy(s, "true", 4);
    s[MU_CEL_MAX_LEN] = '\0';
    ck_assert_int_eq(compile_eval(s, &err), 1);
    s[MU_CEL_MAX_LEN] = ' ';
    s[MU_CEL_MAX_LEN + 1] = '\0';
    ck_assert_int_eq(compile_eval(s, &err), -ENOEXEC);
    ck_assert_str_eq(err.msg, "too long: 10241 bytes, at most 10240");
    free(s);
}
END_TEST

START_TEST(test_one_tree_many_devices)
{
    struct mu_cel_attr two = {.name = attrs[1].name, .kind = MU_CEL_INT,
                              .i = 2};
    const struct mu_cel_device small = {.driver = "gpu.example.com",
                                        .nattrs = 1, .attrs = &two};
    const struct mu_cel_device bare = {.driver = "gpu.example.com"};
    const struct mu_cel_device other = {.driver = "other.io"};
    struct mu_err err = {"untouched"};
    struct mu_cel *e = mu_cel_compile(
        "device.driver == \"gpu.example.com\" && " GPU ".count >= 4", &err);

    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(mu_cel_eval(e, &dev, &err), 1);
    ck_assert_int_eq(mu_cel_eval(e, &small, &err), 0);
    ck_assert_int_eq(mu_cel_eval(e, &other, &err), 0);
    ck_assert_str_eq(err.msg, "untouched");
    ck_assert_int_eq(mu_cel_eval(e, &bare, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "no attribute gpu.example.com/count");
    ck_assert_int_eq(mu_cel_eval(e, &dev, &err), 1);
    mu_cel_free(e);
}
END_TEST

START_TEST(test_null_err_and_null_tree)
{
    struct mu_err err = {"untouched"};
    struct mu_cel *e;

    mu_cel_free(NULL);
    ck_assert_ptr_null(mu_cel_compile("(", NULL));
    e = mu_cel_compile(NO_A, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(mu_cel_eval(e, &dev, NULL), -EINVAL);
    mu_cel_free(e);
    /* a compile that succeeds leaves err alone */
    e = mu_cel_compile("true", &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(err.msg, "untouched");
    mu_cel_free(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cel");
    TCase *te = tcase_create("eval");
    TCase *tc = tcase_create("compile");
    TCase *tl = tcase_create("limits");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(te, setup, teardown);
    tcase_add_loop_test(te, test_eval_table, 0, (int)MU_ARRAY_LEN(evals));
    tcase_add_test(te, test_one_tree_many_devices);
    tcase_add_test(te, test_null_err_and_null_tree);
    suite_add_tcase(s, te);
    tcase_add_loop_test(tc, test_unsupported_forms_are_named, 0,
                        (int)MU_ARRAY_LEN(unsupported));
    tcase_add_loop_test(tc, test_type_errors_at_compile_time, 0,
                        (int)MU_ARRAY_LEN(type_errors));
    tcase_add_loop_test(tc, test_syntax_errors_say_where, 0,
                        (int)MU_ARRAY_LEN(syntax_errors));
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(tl, setup, teardown);
    tcase_add_test(tl, test_nesting_stops_at_max_depth);
    tcase_add_test(tl, test_long_chains_are_not_deep);
    tcase_add_test(tl, test_length_limit);
    suite_add_tcase(s, tl);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
