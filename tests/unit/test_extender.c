/*
 * The pure /filter, /prioritize and /preempt handlers. Every filter and
 * prioritize case runs through both paths (jansson tree and request bytes)
 * and checks that they agree; the last tests generate and mutate requests
 * to compare the two on many more.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "extender/extender.h"

#define GANG "team-a/pytorch-dist-8gpu-5f0c"
#define WHY "3/8 members pending: the cluster is 5 GPUs short"

static const char *const nodes[] = {"gpu-01", "gpu-02", "gpu-03", "gpu-04",
                                    NULL};

/* A synced view: u-res reserved on gpu-02, u-wait waiting, u-far reserved
 * on a node the requests never offer. */
static struct mu_view *view(bool synced)
{
    struct mu_view *v = mu_view_new(3, synced);

    mu_view_add_pod(v, "u-res", "team-a", "w-0", GANG, "gpu-02", GANG "#1", 8,
                    NULL);
    mu_view_add_pod(v, "u-wait", "team-a", "w-1", GANG, NULL, NULL, 0, WHY);
    mu_view_add_pod(v, "u-far", "team-a", "w-2", GANG, "gpu-99", GANG "#1", 8,
                    NULL);
    return v;
}

/* ExtenderArgs for a pod (sched or uid NULL: left out). */
static json_t *args(const char *sched, const char *uid,
                    const char *const *names)
{
    json_t *meta = json_pack("{s:s,s:s}", "namespace", "team-a", "name", "w-0");
    json_t *spec =
        json_pack("{s:[{s:s,s:{s:{s:s}}}]}", "containers", "name", "main",
                  "resources", "limits", "nvidia.com/gpu", "8");
    json_t *list = json_array();

    if (uid)
        json_object_set_new(meta, "uid", json_string(uid));
    if (sched)
        json_object_set_new(spec, "schedulerName", json_string(sched));
    for (; names && *names; names++)
        json_array_append_new(list, json_string(*names));
    return json_pack("{s:{s:o,s:o,s:{s:s}},s:n,s:o}", "Pod", "metadata", meta,
                     "spec", spec, "status", "phase", "Pending", "Nodes",
                     "NodeNames", list);
}

static const char *error_of(const json_t *r)
{
    return json_string_value(json_object_get(r, "Error"));
}

/* Runs /filter both ways on the same request; checks they agree (the
 * error texts may differ); returns the jansson answer. The tree path
 * reads the body as the server reads bodies (mu_json_loadb: a \u0000 is
 * kept). */
static json_t *filter_both(const struct mu_view *v, const char *body,
                           size_t len, bool *bad)
{
    json_error_t je, je2;
    json_t *in = mu_json_loadb(body, len, &je);
    json_t *a = in ? mu_ext_filter(v, in) : NULL, *b;
    size_t n;
    bool was_bad;
    struct mu_ext_miss miss;
    char *raw = mu_ext_filter_body(v, body, len, &n, &was_bad, &miss);

    ck_assert_uint_eq(n, strlen(raw));
    b = mu_json_loadb(raw, n, &je2);
    ck_assert_msg(b != NULL, "byte path wrote bad JSON: %s: %s", je2.text, raw);
    ck_assert_ptr_nonnull(error_of(b));
    ck_assert_int_eq(was_bad, error_of(b)[0] != '\0');
    if (!a) {
        /* jansson refuses numbers it cannot hold; JSON (and Go, for the
         * fields it skips) does not: the byte path reads them as valid */
        ck_assert_msg(was_bad || strstr(je.text, "overflow") ||
                          strstr(je.text, "too big"),
                      "jansson refused (%s), bytes did not: %.*s", je.text,
                      (int)len, body);
        a = b;
    } else {
        ck_assert_ptr_nonnull(error_of(a));
        if (error_of(a)[0] || error_of(b)[0]) {
            ck_assert_msg(error_of(a)[0] && error_of(b)[0],
                          "only one path failed: %s | %s | %.*s", error_of(a),
                          error_of(b), (int)len, body);
            ck_assert(json_is_null(json_object_get(b, "NodeNames")));
        } else {
            char *sa = json_dumps(a, JSON_SORT_KEYS);

            ck_assert_msg(json_equal(a, b), "paths differ:\n%s\n%s\n%.*s", sa,
                          raw, (int)len, body);
            free(sa);
        }
        json_decref(b);
    }
    json_decref(in);
    free(raw);
    if (bad)
        *bad = was_bad;
    return a;
}

static json_t *filter(const struct mu_view *v, json_t *in)
{
    char *body = json_dumps(in, JSON_COMPACT);
    json_t *r = filter_both(v, body, strlen(body), NULL);

    free(body);
    json_decref(in);
    return r;
}

static json_t *prioritize_both(const struct mu_view *v, json_t *in)
{
    char *body = json_dumps(in, JSON_COMPACT);
    json_t *a = mu_ext_prioritize(v, in), *b;
    size_t n;
    bool bad;
    char *raw = mu_ext_prioritize_body(v, body, strlen(body), &n, &bad);

    b = json_loadb(raw, n, 0, NULL);
    ck_assert_msg(b && json_equal(a, b), "paths differ: %s", raw);
    json_decref(b);
    json_decref(in);
    free(body);
    free(raw);
    return a;
}

/* Every name of names failed with reason; nothing passes. */
static void assert_all_rejected(const json_t *r, const char *reason)
{
    json_t *fau = json_object_get(r, "FailedAndUnresolvableNodes");

    ck_assert_str_eq(error_of(r), "");
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    ck_assert(json_is_array(json_object_get(r, "NodeNames")));
    ck_assert_uint_eq(json_object_size(json_object_get(r, "FailedNodes")), 0);
    ck_assert_uint_eq(json_object_size(fau), 4);
    for (int i = 0; nodes[i]; i++)
        ck_assert_str_eq(json_string_value(json_object_get(fau, nodes[i])),
                         reason);
}

START_TEST(test_filter_passes_every_node_for_other_schedulers)
{
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("default-scheduler", "u-res", nodes));
    json_t *pass = json_object_get(r, "NodeNames");

    ck_assert_str_eq(error_of(r), "");
    ck_assert_uint_eq(json_array_size(pass), 4);
    for (int i = 0; nodes[i]; i++)
        ck_assert_str_eq(json_string_value(json_array_get(pass, i)), nodes[i]);
    ck_assert_uint_eq(json_object_size(json_object_get(r, "FailedNodes")), 0);
    ck_assert_uint_eq(
        json_object_size(json_object_get(r, "FailedAndUnresolvableNodes")), 0);
    json_decref(r);
    /* a pod without schedulerName is not muster's either */
    r = filter(v, args(NULL, "u-res", nodes));
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 4);
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_rejects_every_node_until_the_view_is_synced)
{
    struct mu_view *v = view(false);
    json_t *r = filter(v, args("volcano", "u-res", nodes));

    assert_all_rejected(r, "muster is starting (caches not synced)");
    json_decref(r);
    /* nothing published yet */
    r = filter(NULL, args("volcano", "u-res", nodes));
    assert_all_rejected(r, "muster is starting (caches not synced)");
    json_decref(r);
    /* other schedulers' pods still pass */
    r = filter(NULL, args("default-scheduler", "u-res", nodes));
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 4);
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_reserved_node_passes_alone_and_the_rest_are_unresolvable)
{
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("volcano", "u-res", nodes));
    json_t *fau = json_object_get(r, "FailedAndUnresolvableNodes");

    ck_assert_str_eq(error_of(r), "");
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)),
        "gpu-02");
    ck_assert_uint_eq(json_object_size(json_object_get(r, "FailedNodes")), 0);
    ck_assert_uint_eq(json_object_size(fau), 3);
    ck_assert_ptr_null(json_object_get(fau, "gpu-02"));
    ck_assert_str_eq(json_string_value(json_object_get(fau, "gpu-01")),
                     "reserved for its gang on gpu-02");
    ck_assert_str_eq(json_string_value(json_object_get(fau, "gpu-03")),
                     "reserved for its gang on gpu-02");
    ck_assert_str_eq(json_string_value(json_object_get(fau, "gpu-04")),
                     "reserved for its gang on gpu-02");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_reserved_node_absent_from_the_list_rejects_every_node)
{
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("volcano", "u-far", nodes));

    assert_all_rejected(r, "reserved for its gang on gpu-99");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

/* The byte path's miss note for one request, filled over a stale one. */
static struct mu_ext_miss note_of(const struct mu_view *v, const char *sched,
                                  const char *uid, const char *const *names)
{
    json_t *a = args(sched, uid, names);
    char *body = json_dumps(a, JSON_COMPACT), *raw;
    struct mu_ext_miss miss = {.missed = true, .unseen = true, .uid = "stale"};
    size_t n;
    bool bad;

    raw = mu_ext_filter_body(v, body, strlen(body), &n, &bad, &miss);
    ck_assert(!bad);
    ck_assert(!(miss.unseen && miss.missed));
    free(raw);
    free(body);
    json_decref(a);
    return miss;
}

/* "" when not missed, else the uid it names. */
static char *miss_of(const struct mu_view *v, const char *sched,
                     const char *uid, const char *const *names)
{
    struct mu_ext_miss m = note_of(v, sched, uid, names);

    return strdup(m.missed ? m.uid : "");
}

START_TEST(test_filter_notes_a_miss_only_for_a_reserved_node_left_out)
{
    static const char *const without[] = {"gpu-01", "gpu-03", NULL};
    struct mu_view *v = view(true), *cold = view(false);
    const struct {
        const struct mu_view *v;
        const char *sched, *uid;
        const char *const *names;
        const char *want; /* the uid missed, "" for none */
    } cases[] = {
        /* reserved, its node left out of the request (or no names) */
        {v, "volcano", "u-res", without, "u-res"},
        {v, "volcano", "u-far", nodes, "u-far"},
        {v, "volcano", "u-res", NULL, "u-res"},
        /* reserved and offered; waiting; unknown; another scheduler's
         * pod; a view not synced */
        {v, "volcano", "u-res", nodes, ""},
        {v, "volcano", "u-wait", without, ""},
        {v, "volcano", "u-nobody", without, ""},
        {v, "default-scheduler", "u-res", without, ""},
        {cold, "volcano", "u-res", without, ""},
    };

    for (size_t i = 0; i < MU_ARRAY_LEN(cases); i++) {
        char *m = miss_of(cases[i].v, cases[i].sched, cases[i].uid,
                          cases[i].names);

        ck_assert_msg(!strcmp(m, cases[i].want), "case %zu: '%s', not '%s'",
                      i, m, cases[i].want);
        free(m);
    }
    mu_view_put(v);
    mu_view_put(cold);
}
END_TEST

/* The uid of a pod answered before the view had it, "" otherwise. */
static char *unseen_of(const struct mu_view *v, const char *sched,
                       const char *uid)
{
    struct mu_ext_miss m = note_of(v, sched, uid, nodes);

    return strdup(m.unseen ? m.uid : "");
}

START_TEST(test_filter_notes_pods_answered_before_the_view_had_them)
{
    struct mu_view *v = view(true), *cold = view(false);
    const struct {
        const struct mu_view *v;
        const char *sched, *uid, *want;
    } cases[] = {
        {v, "volcano", "u-nobody", "u-nobody"}, /* not seen yet */
        {cold, "volcano", "u-res", "u-res"},    /* muster is starting */
        {cold, "volcano", "u-wait", "u-wait"},
        {v, "volcano", "u-wait", ""},           /* the view explains it */
        {v, "volcano", "u-res", ""},
        {v, "default-scheduler", "u-nobody", ""}, /* not muster's */
    };

    for (size_t i = 0; i < MU_ARRAY_LEN(cases); i++) {
        char *m = unseen_of(cases[i].v, cases[i].sched, cases[i].uid);

        ck_assert_msg(!strcmp(m, cases[i].want), "case %zu: '%s', not '%s'",
                      i, m, cases[i].want);
        free(m);
    }
    mu_view_put(v);
    mu_view_put(cold);
}
END_TEST

START_TEST(test_filter_waiting_pod_is_rejected_everywhere_with_its_reason)
{
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("volcano", "u-wait", nodes));

    assert_all_rejected(r, "gang " GANG " waiting: " WHY);
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_long_view_reasons_are_cut_short)
{
    struct mu_view *v = mu_view_new(1, true);
    char why[1000];
    const char *got;
    json_t *r;

    memset(why, 'x', sizeof(why) - 1);
    why[sizeof(why) - 1] = '\0';
    why[199] = '\xc3'; /* a two-byte character across the cut */
    why[200] = '\xa9';
    mu_view_add_pod(v, "u-1", "ns", "p", "ns/g", NULL, NULL, 0, why);
    r = filter(v, args("volcano", "u-1", nodes));
    got = json_string_value(json_object_get(
        json_object_get(r, "FailedAndUnresolvableNodes"), "gpu-01"));
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_lt(strlen(got), 230);
    ck_assert(strstr(got, "gang ns/g waiting: xxx") == got);
    ck_assert_str_eq(got + strlen(got) - 4, "x...");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

/* The whole reason is capped at MU_EXT_REASON_MAX (extender.h), however
 * long the gang name. */
START_TEST(test_filter_reasons_fit_the_reason_cap)
{
    struct mu_view *v = mu_view_new(1, true);
    char gang[3 * MU_EXT_REASON_MAX];
    const char *got;
    json_t *r;

    memset(gang, 'g', sizeof(gang) - 1);
    gang[sizeof(gang) - 1] = '\0';
    mu_view_add_pod(v, "u-1", "ns", "p", gang, NULL, NULL, 0, "why");
    r = filter(v, args("volcano", "u-1", nodes));
    got = json_string_value(json_object_get(
        json_object_get(r, "FailedAndUnresolvableNodes"), "gpu-01"));
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_lt(strlen(got), MU_EXT_REASON_MAX);
    ck_assert(strstr(got, "gang ggg") == got);
    ck_assert_str_eq(got + strlen(got) - 4, "g...");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_unknown_pod_is_rejected_everywhere)
{
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("volcano", "u-nobody", nodes));

    assert_all_rejected(r, "not yet placed by muster");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

/* Requests that must get Error (and count as bad). */
static const char *const malformed[] = {
    "",
    "not json",
    "[]",
    "{}",
    "{\"Pod\":null,\"NodeNames\":[]}",
    "{\"Pod\":{},\"NodeNames\":null}",
    "{\"Pod\":{}}",
    "{\"NodeNames\":[\"a\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"a\",1]}",
    "{\"Pod\":{},\"NodeNames\":[\"a\",null]}",
    "{\"Pod\":\"x\",\"NodeNames\":[]}",
    "{\"Pod\":{\"metadata\":5},\"NodeNames\":[]}",
    "{\"Pod\":{\"metadata\":{\"uid\":7}},\"NodeNames\":[]}",
    "{\"Pod\":{\"spec\":{\"schedulerName\":[]}},\"NodeNames\":[]}",
    "{\"Pod\":{},\"NodeNames\":{}}",
    "{\"Pod\":{},\"NodeNames\":[]} x",
    "{\"Pod\":{},\"NodeNames\":[]}}",
    "{\"Pod\":{},\"NodeNames\":[\"a\xff\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"a\xc3\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"\xed\xa0\x80\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"a\\u0000\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"a\",\"\\u0000\"]}",
    "{\"Pod\":{\"metadata\":{\"uid\":\"u-res\\u0000x\"}},\"NodeNames\":[]}",
    "{\"Pod\":{\"metadata\":{\"name\":\"\\u0000\"}},\"NodeNames\":[]}",
    "{\"Pod\":{\"metadata\":{\"namespace\":\"a\\u0000\"}},\"NodeNames\":[]}",
    "{\"Pod\":{\"spec\":{\"schedulerName\":\"volcano\\u0000\"}},"
    "\"NodeNames\":[]}",
    "{\"Pod\":{},\"NodeNames\":[\"\\ud800\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"\\udc00x\"]}",
    "{\"Pod\":{},\"NodeNames\":[\"\\u12\"]}",
    "{\"Pod\":{\"spec\":{\"schedulerName\":\"volcano\"}},\"NodeNames\":[\"a\"]"
    "}",
    "{\"Pod\":{},\"NodeNames\":[],}",
    "{\"Pod\":{\"x\":[1,2,]},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":01},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":1.},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":-},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":1e},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":tru},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":nul},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":\"\\q\"},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\":\"a\nb\"},\"NodeNames\":[]}",
    "{\"Pod\":{\"x\" 1},\"NodeNames\":[]}",
    "{\"Pod\":{1:1},\"NodeNames\":[]}",
    "{\"Pod\":{},\"NodeNames\":[]",
    "{\"Pod\":{},\"NodeNames\":[\"a\"",
    "{\"Pod\":{},\"NodeNames\":[\"a",
    "{\"Pod\":{\"x\":{\"y\":[{}]]},\"NodeNames\":[]}",
};

START_TEST(test_filter_malformed_requests_get_an_error)
{
    struct mu_view *v = view(true);
    const char *body = malformed[_i];
    bool bad = false;
    json_t *r = filter_both(v, body, strlen(body), &bad);

    ck_assert_msg(bad, "accepted: %s", body);
    ck_assert_str_ne(error_of(r), "");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_rejects_nesting_deeper_than_2048)
{
    struct mu_view *v = view(true);
    struct mu_sb sb;
    bool bad;
    json_t *r;

    for (int depth = 2040; depth <= 2050; depth += 10) {
        mu_sb_init(&sb);
        mu_sb_add(&sb, "{\"Pod\":{\"spec\":{\"schedulerName\":\"x\"},\"x\":");
        for (int i = 0; i < depth; i++)
            mu_sb_add(&sb, "[");
        for (int i = 0; i < depth; i++)
            mu_sb_add(&sb, "]");
        mu_sb_add(&sb, "},\"NodeNames\":[\"a\"]}");
        r = filter_both(v, sb.buf, sb.len, &bad);
        ck_assert_int_eq(bad, depth > 2040);
        json_decref(r);
        mu_sb_release(&sb);
    }
    mu_view_put(v);
}
END_TEST

/* The API server accepts "\u0000" in any string, annotations included:
 * where muster does not read, it is valid JSON like any other (the byte
 * path refused the whole request for it). A NodeNames overwritten by a
 * later one does not count. */
START_TEST(test_filter_skips_a_nul_where_it_does_not_read)
{
    static const char body[] =
        "{\"Pod\":{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"w-0\","
        "\"uid\":\"u-res\",\"annotations\":{\"note\":\"a\\u0000b\","
        "\"k\\u0000\":\"v\"}},\"spec\":{\"schedulerName\":\"volcano\"}},"
        "\"NodeNames\":[\"x\\u0000\"],\"Nodes\":[\"\\u0000\"],"
        "\"NodeNames\":[\"gpu-01\",\"gpu-02\"]}";
    struct mu_view *v = view(true);
    bool bad;
    json_t *r = filter_both(v, body, sizeof(body) - 1, &bad);

    ck_assert_msg(!bad, "%s", error_of(r));
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)),
        "gpu-02");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

/* A second spec (or metadata) replaces the first whole: its
 * schedulerName (uid) is gone, whatever the first said (fuzz_filter found
 * the byte path keeping the first one's). */
START_TEST(test_filter_a_repeated_spec_or_metadata_replaces_the_first)
{
    static const char *const bodies[] = {
        "{\"Pod\":{\"metadata\":{\"uid\":\"u-res\"},\"spec\":{\"schedulerName\":"
        "\"volcano\"},\"spec\":{}},\"NodeNames\":[\"gpu-01\",\"gpu-02\"]}",
        "{\"Pod\":{\"metadata\":{\"uid\":\"u-res\"},\"spec\":{\"schedulerName\":"
        "\"volcano\"},\"Spec\":null},\"NodeNames\":[\"gpu-01\",\"gpu-02\"]}",
        "{\"Pod\":{\"spec\":{\"schedulerName\":\"default-scheduler\"},"
        "\"metadata\":{\"uid\":\"u-res\"},\"metadata\":{},\"spec\":{"
        "\"schedulerName\":\"volcano\"}},\"NodeNames\":[\"gpu-01\",\"gpu-02\"]}",
    };
    struct mu_view *v = view(true);

    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        bool bad;
        json_t *r = filter_both(v, bodies[i], strlen(bodies[i]), &bad);

        /* the first two pass every node (no schedulerName); the third
         * has no uid left */
        ck_assert_int_eq(bad, i == 2);
        json_decref(r);
    }
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_accepts_keys_in_any_case)
{
    static const char body[] =
        "{\"pod\":{\"METADATA\":{\"Namespace\":\"team-a\",\"NAME\":\"w-0\","
        "\"Uid\":\"u-res\"},\"Spec\":{\"SchedulerName\":\"volcano\"}},"
        "\"nodes\":null,\"nodenames\":[\"gpu-01\",\"gpu-02\"]}";
    struct mu_view *v = view(true);
    bool bad;
    json_t *r = filter_both(v, body, sizeof(body) - 1, &bad);

    ck_assert(!bad);
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)),
        "gpu-02");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_matches_escaped_names_and_echoes_them)
{
    static const char body[] =
        "{\"Pod\":{\"metadata\":{\"uid\":\"u-\\u0072es\"},\"spec\":"
        "{\"schedulerName\":\"volc\\u0061no\"}},\"NodeNames\":"
        "[\"gpu\\u002d01\",\"gpu\\u002d02\",\"\\ud83d\\ude80\",\"gpu-02\"]}";
    struct mu_view *v = view(true);
    bool bad;
    json_t *r = filter_both(v, body, sizeof(body) - 1, &bad);
    json_t *fau = json_object_get(r, "FailedAndUnresolvableNodes");

    ck_assert(!bad);
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)),
        "gpu-02");
    ck_assert_uint_eq(json_object_size(fau), 2); /* gpu-01 and the rocket */
    ck_assert_ptr_nonnull(json_object_get(fau, "\xf0\x9f\x9a\x80"));
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_reasons_with_quotes_are_escaped)
{
    struct mu_view *v = mu_view_new(1, true);
    json_t *r;

    mu_view_add_pod(v, "u-1", "ns", "p", "ns/\"g\"", NULL, NULL, 0,
                    "queue \"a\\b\"\tis full");
    r = filter(v, args("volcano", "u-1", nodes));
    assert_all_rejected(r, "gang ns/\"g\" waiting: queue \"a\\b\"\tis full");
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_with_no_node_names_answers_empty_lists)
{
    static const char *const none[] = {NULL};
    struct mu_view *v = view(true);
    json_t *r = filter(v, args("volcano", "u-res", none));

    ck_assert_str_eq(error_of(r), "");
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    r = filter(v, args("other", "u-res", none));
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_handles_long_node_names)
{
    struct mu_view *v = mu_view_new(1, true);
    char names[4][300];
    const char *list[5];
    json_t *r;

    for (int i = 0; i < 4; i++) { /* 253 bytes, the longest DNS name */
        memset(names[i], 'a' + i, 253);
        names[i][253] = '\0';
        list[i] = names[i];
    }
    list[4] = NULL;
    mu_view_add_pod(v, "u-1", "ns", "p", "ns/g", names[0], NULL, 1, NULL);
    r = filter(v, args("volcano", "u-1", list));
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 1);
    ck_assert_uint_eq(
        json_object_size(json_object_get(r, "FailedAndUnresolvableNodes")), 3);
    json_decref(r);
    r = filter(v, args("volcano", "u-1", list + 1)); /* not offered */
    ck_assert_uint_eq(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    json_decref(prioritize_both(v, args("volcano", "u-1", list)));
    mu_view_put(v);
}
END_TEST

/* A filter body for pod uid (schedulerName sched) with n node names of
 * name_len bytes each ("n-000042xxx..."). */
static char *names_body(const char *sched, const char *uid, size_t n,
                        size_t name_len)
{
    struct mu_sb sb;
    char name[512];

    ck_assert_uint_lt(name_len, sizeof(name));
    mu_sb_init(&sb);
    mu_sb_addf(&sb,
               "{\"Pod\":{\"metadata\":{\"namespace\":\"team-a\","
               "\"name\":\"w\",\"uid\":\"%s\"},\"spec\":{"
               "\"schedulerName\":\"%s\"}},\"NodeNames\":[",
               uid, sched);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(name, sizeof(name), "n-%06zu", i);

        memset(name + k, 'x', name_len > (size_t)k ? name_len - k : 0);
        name[name_len > (size_t)k ? name_len : (size_t)k] = '\0';
        mu_sb_addf(&sb, "%s\"%s\"", i ? "," : "", name);
    }
    mu_sb_add(&sb, "]}");
    return mu_sb_detach(&sb);
}

START_TEST(test_filter_refuses_more_node_names_than_the_cap)
{
    struct mu_view *v = view(true);
    char *at = names_body("volcano", "u-wait", MU_EXT_MAX_NODE_NAMES, 8);
    char *over = names_body("volcano", "u-wait", MU_EXT_MAX_NODE_NAMES + 1, 8);
    char want[128], *raw;
    size_t n;
    bool bad;
    json_t *r;

    /* at the cap: answered, every name rejected with the reason */
    r = filter_both(v, at, strlen(at), &bad);
    ck_assert(!bad);
    ck_assert_uint_eq(
        json_object_size(json_object_get(r, "FailedAndUnresolvableNodes")),
        MU_EXT_MAX_NODE_NAMES);
    json_decref(r);
    /* one more: refused with an Error on both paths, nothing passes */
    snprintf(want, sizeof(want),
             "ExtenderArgs.NodeNames: more than %u names (muster's cap)",
             MU_EXT_MAX_NODE_NAMES);
    r = filter_both(v, over, strlen(over), &bad);
    ck_assert(bad);
    ck_assert_str_eq(error_of(r), want);
    ck_assert(json_is_null(json_object_get(r, "NodeNames")));
    json_decref(r);
    raw = mu_ext_filter_body(v, over, strlen(over), &n, &bad, NULL);
    r = json_loads(raw, 0, NULL);
    ck_assert_str_eq(error_of(r), want);
    json_decref(r);
    free(raw);
    raw = mu_ext_prioritize_body(v, over, strlen(over), &n, &bad);
    ck_assert(bad);
    ck_assert_str_eq(raw, "[]");
    free(raw);
    free(at);
    free(over);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_refuses_a_reply_over_the_reply_cap)
{
    struct mu_view *v = mu_view_new(1, true);
    char why[MU_EXT_VIEW_REASON_CAP + 1], gang[254];
    /* 4 MiB of names: under the body cap, but each rejected name takes
     * the long reason beside it, so the reply would be over 20 MB */
    char *body = names_body("volcano", "u-long", MU_EXT_MAX_NODE_NAMES, 60);
    char *pass = names_body("default-scheduler", "u-x", MU_EXT_MAX_NODE_NAMES,
                            300);
    char *raw;
    size_t n;
    bool bad;
    json_t *r;

    memset(why, 'w', sizeof(why) - 1);
    why[sizeof(why) - 1] = '\0';
    memset(gang, 'g', sizeof(gang) - 1);
    gang[sizeof(gang) - 1] = '\0';
    mu_view_add_pod(v, "u-long", "team-a", "w", gang, NULL, NULL, 0, why);
    raw = mu_ext_filter_body(v, body, strlen(body), &n, &bad, NULL);
    ck_assert(bad);
    ck_assert_uint_lt(n, 1024);
    r = json_loads(raw, 0, NULL);
    ck_assert_msg(strstr(error_of(r), "more than muster's cap of 16777216"),
                  "%s", error_of(r));
    ck_assert(json_is_null(json_object_get(r, "NodeNames")));
    json_decref(r);
    free(raw);
    /* the same names for a pod with a short reason fit */
    memcpy(strstr(body, "u-long"), "u-shrt", 6);
    mu_view_add_pod(v, "u-shrt", "team-a", "w", "g", NULL, NULL, 0, "x");
    raw = mu_ext_filter_body(v, body, strlen(body), &n, &bad, NULL);
    ck_assert(!bad);
    ck_assert_uint_le(n, MU_EXT_MAX_REPLY);
    free(raw);
    /* an echo of every name (another scheduler's pod) counts too */
    ck_assert_uint_gt(strlen(pass), MU_EXT_MAX_REPLY);
    raw = mu_ext_filter_body(v, pass, strlen(pass), &n, &bad, NULL);
    ck_assert(bad);
    ck_assert(strstr(raw, "more than muster's cap"));
    free(raw);
    free(pass);
    free(body);
    mu_view_put(v);
}
END_TEST

START_TEST(test_prioritize_scores_the_reserved_node_ten_and_the_rest_zero)
{
    struct mu_view *v = view(true);
    json_t *r = prioritize_both(v, args("volcano", "u-res", nodes));

    ck_assert(json_is_array(r));
    ck_assert_uint_eq(json_array_size(r), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *e = json_array_get(r, i);

        ck_assert_str_eq(json_string_value(json_object_get(e, "Host")),
                         nodes[i]);
        ck_assert(json_is_integer(json_object_get(e, "Score")));
        ck_assert_int_eq(json_integer_value(json_object_get(e, "Score")),
                         i == 1 ? 10 : 0);
    }
    json_decref(r);
    r = prioritize_both(v, args("default-scheduler", "u-res", nodes));
    ck_assert_uint_eq(json_array_size(r), 4);
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_array_get(r, i), "Score")),
            0);
    json_decref(r);
    mu_view_put(v);
}
END_TEST

START_TEST(test_prioritize_malformed_request_is_an_empty_list)
{
    struct mu_view *v = view(true);
    json_t *in = json_pack("{s:{},s:n}", "Pod", "NodeNames");
    json_t *r = mu_ext_prioritize(v, in);
    size_t n;
    bool bad;
    char *raw = mu_ext_prioritize_body(v, "{\"Pod\":", 7, &n, &bad);

    ck_assert(json_is_array(r));
    ck_assert_uint_eq(json_array_size(r), 0);
    ck_assert(bad);
    ck_assert_str_eq(raw, "[]");
    free(raw);
    json_decref(r);
    json_decref(in);
    mu_view_put(v);
}
END_TEST

START_TEST(test_preempt_always_vetoes)
{
    struct mu_view *v = view(true);
    json_t *in = json_pack("{s:{},s:{s:{s:[{s:s}],s:i}}}", "Pod",
                           "NodeNameToMetaVictims", "gpu-01", "Pods", "UID",
                           "victim", "NumPDBViolations", 0);
    json_t *r = mu_ext_preempt(v, in);
    char *s = json_dumps(r, JSON_COMPACT);

    ck_assert_str_eq(s, "{\"NodeNameToMetaVictims\":{}}");
    free(s);
    json_decref(r);
    r = mu_ext_preempt(NULL, NULL);
    ck_assert_uint_eq(
        json_object_size(json_object_get(r, "NodeNameToMetaVictims")), 0);
    json_decref(r);
    json_decref(in);
    mu_view_put(v);
}
END_TEST

/* ---- generated and mutated requests ---- */

static unsigned rnd(unsigned *seed, unsigned n)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 16) % n;
}

/* key with random letter case */
static void add_key(struct mu_sb *sb, const char *k, unsigned *seed)
{
    mu_sb_add(sb, "\"");
    for (; *k; k++) {
        char c = *k;

        if (rnd(seed, 4) == 0 && c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        else if (rnd(seed, 4) == 0 && c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        mu_sb_addn(sb, &c, 1);
    }
    mu_sb_add(sb, "\":");
}

/* a string with some characters written as \u escapes */
static void add_str(struct mu_sb *sb, const char *s, unsigned *seed)
{
    mu_sb_add(sb, "\"");
    for (; *s; s++) {
        if (rnd(seed, 5) == 0)
            mu_sb_addf(sb, "\\u%04x", (unsigned char)*s);
        else
            mu_sb_addn(sb, s, 1);
    }
    mu_sb_add(sb, "\"");
}

static void add_junk(struct mu_sb *sb, unsigned *seed)
{
    static const char *const junk[] = {
        "\"labels\":{\"app\":\"x\",\"n\":[1,2.5,-3e2,true,false,null]},",
        "\"x\":[[[]],{},{\"a\":{\"b\":[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]}}],",
        "\"annotations\":{\"k\":\"caf\xc3\xa9 \xe2\x82\xac "
        "\xf0\x9f\x9a\x80\"},",
        "\"n\":0,\"m\":-0.0e+0,\"o\":123456789,",
        "",
    };

    mu_sb_add(sb, junk[rnd(seed, MU_ARRAY_LEN(junk))]);
}

static char *generate(unsigned *seed)
{
    static const char *const scheds[] = {"volcano", "default-scheduler", NULL};
    static const char *const uids[] = {"u-res", "u-wait", "u-far", "u-none",
                                       NULL};
    static const char *const names[] = {"gpu-01", "gpu-02", "gpu-03", "gpu-99"};
    const char *sched = scheds[rnd(seed, 3)], *uid = uids[rnd(seed, 5)];
    struct mu_sb sb;
    unsigned n = rnd(seed, 6);

    mu_sb_init(&sb);
    mu_sb_add(&sb, "{");
    add_junk(&sb, seed);
    add_key(&sb, "Pod", seed);
    mu_sb_add(&sb, "{");
    add_junk(&sb, seed);
    add_key(&sb, "metadata", seed);
    mu_sb_add(&sb, "{");
    add_junk(&sb, seed);
    add_key(&sb, "name", seed);
    add_str(&sb, "w-0", seed);
    if (uid) {
        mu_sb_add(&sb, ",");
        add_key(&sb, "uid", seed);
        add_str(&sb, uid, seed);
    }
    mu_sb_add(&sb, "},");
    add_key(&sb, "spec", seed);
    mu_sb_add(&sb, "{");
    add_junk(&sb, seed);
    add_key(&sb, "schedulerName", seed);
    if (sched)
        add_str(&sb, sched, seed);
    else
        mu_sb_add(&sb, "null");
    mu_sb_add(&sb, "}},");
    add_junk(&sb, seed);
    add_key(&sb, "NodeNames", seed);
    mu_sb_add(&sb, " [ ");
    for (unsigned i = 0; i < n; i++) {
        if (i)
            mu_sb_add(&sb, " , ");
        add_str(&sb, names[rnd(seed, 4)], seed);
    }
    mu_sb_add(&sb, " ] }");
    return mu_sb_detach(&sb);
}

START_TEST(test_filter_paths_agree_on_generated_requests)
{
    struct mu_view *v = view(true);
    unsigned seed = 42;

    int served = 0;

    for (int i = 0; i < 3000; i++) {
        char *body = generate(&seed);
        bool bad;
        json_t *r = filter_both(v, body, strlen(body), &bad);

        /* only muster's pods without a uid are refused */
        ck_assert_msg(!bad || strstr(error_of(r), "has no metadata.uid"),
                      "refused: %s", body);
        served += !bad && json_object_size(json_object_get(
                              r, "FailedAndUnresolvableNodes")) > 0;
        json_decref(r);
        r = prioritize_both(v, json_loads(body, 0, NULL));
        json_decref(r);
        free(body);
    }
    ck_assert_int_gt(served, 500);
    mu_view_put(v);
}
END_TEST

START_TEST(test_filter_paths_agree_on_mutated_requests)
{
    static const char alphabet[] = "{}[]\":,\\ 0123456789.eE+-tfnulrsab"
                                   "\x80\xbf\xc3\xe2\xed\xf0\xff\t\n\x01";
    struct mu_view *v = view(true);
    unsigned seed = 7;
    int refused = 0;

    for (int i = 0; i < 20000; i++) {
        char *body = generate(&seed);
        size_t len = strlen(body);
        unsigned k = 1 + rnd(&seed, 3);
        bool bad;
        json_t *r;

        for (unsigned j = 0; j < k; j++)
            body[rnd(&seed, (unsigned)len)] =
                alphabet[rnd(&seed, sizeof(alphabet) - 1)];
        if (rnd(&seed, 8) == 0)
            len = rnd(&seed, (unsigned)len); /* cut short */
        r = filter_both(v, body, len, &bad);
        refused += bad;
        json_decref(r);
        free(body);
    }
    ck_assert_int_gt(refused, 1000); /* the mutations did bite */
    mu_view_put(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("extender");
    TCase *tc = tcase_create("filter");
    TCase *gen = tcase_create("generated");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_filter_passes_every_node_for_other_schedulers);
    tcase_add_test(tc, test_filter_rejects_every_node_until_the_view_is_synced);
    tcase_add_test(
        tc,
        test_filter_reserved_node_passes_alone_and_the_rest_are_unresolvable);
    tcase_add_test(
        tc, test_filter_reserved_node_absent_from_the_list_rejects_every_node);
    tcase_add_test(tc,
                   test_filter_notes_a_miss_only_for_a_reserved_node_left_out);
    tcase_add_test(tc, test_filter_notes_pods_answered_before_the_view_had_them);
    tcase_add_test(
        tc, test_filter_waiting_pod_is_rejected_everywhere_with_its_reason);
    tcase_add_test(tc, test_filter_long_view_reasons_are_cut_short);
    tcase_add_test(tc, test_filter_reasons_fit_the_reason_cap);
    tcase_add_test(tc, test_filter_unknown_pod_is_rejected_everywhere);
    tcase_add_loop_test(tc, test_filter_malformed_requests_get_an_error, 0,
                        (int)MU_ARRAY_LEN(malformed));
    tcase_add_test(tc, test_filter_rejects_nesting_deeper_than_2048);
    tcase_add_test(tc, test_filter_skips_a_nul_where_it_does_not_read);
    tcase_add_test(tc, test_filter_a_repeated_spec_or_metadata_replaces_the_first);
    tcase_add_test(tc, test_filter_accepts_keys_in_any_case);
    tcase_add_test(tc, test_filter_matches_escaped_names_and_echoes_them);
    tcase_add_test(tc, test_filter_reasons_with_quotes_are_escaped);
    tcase_add_test(tc, test_filter_with_no_node_names_answers_empty_lists);
    tcase_add_test(tc, test_filter_handles_long_node_names);
    tcase_add_test(tc, test_filter_refuses_more_node_names_than_the_cap);
    tcase_add_test(tc, test_filter_refuses_a_reply_over_the_reply_cap);
    tcase_add_test(
        tc, test_prioritize_scores_the_reserved_node_ten_and_the_rest_zero);
    tcase_add_test(tc, test_prioritize_malformed_request_is_an_empty_list);
    tcase_add_test(tc, test_preempt_always_vetoes);
    suite_add_tcase(s, tc);
    tcase_add_test(gen, test_filter_paths_agree_on_generated_requests);
    tcase_add_test(gen, test_filter_paths_agree_on_mutated_requests);
    tcase_set_timeout(gen, 120);
    suite_add_tcase(s, gen);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
