/*
 * fuzz_filter - /filter and /prioritize bodies through both paths: the
 * byte scanner the server runs (mu_ext_filter_body, _prioritize_body) and
 * the jansson tree path that is its reference (mu_json_loadb, as the
 * server reads bodies, then mu_ext_filter, _prioritize). On the same input
 * and the same view they must give the same answer - the same NodeNames,
 * FailedAndUnresolvableNodes and Error emptiness - or both an Error (the
 * texts may differ). A mismatch aborts.
 *
 * The input is the request body. It is run against a synced view (a
 * reserved pod, a waiting one, one reserved on a node no request offers)
 * and an unsynced one.
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include "api/json.h"
#include "extender/extender.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GANG "team-a/pytorch-dist-8gpu-5f0c"

static struct mu_view *views[2];

static void make_views(void)
{
    views[0] = mu_view_new(3, true);
    mu_view_add_pod(views[0], "u-res", "team-a", "w-0", GANG, "gpu-02",
                    GANG "#1", 8, NULL);
    mu_view_add_pod(views[0], "u-wait", "team-a", "w-1", GANG, NULL, NULL, 0,
                    "3/8 members pending: the cluster is 5 GPUs short");
    mu_view_add_pod(views[0], "u-far", "team-a", "w-2", GANG, "gpu-99",
                    GANG "#1", 8, NULL);
    views[1] = mu_view_new(1, false);
}

/* Says what differs, then aborts (the input is what libFuzzer saves). */
static void mismatch(const char *what, const json_t *a, const char *raw)
{
    char *sa = a ? json_dumps(a, JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;

    fprintf(stderr, "fuzz_filter: %s\n  tree:  %s\n  bytes: %s\n", what,
            sa ? sa : "(none)", raw);
    free(sa);
    abort();
}

static const char *error_of(const json_t *r)
{
    return json_string_value(json_object_get(r, "Error"));
}

/* jansson refuses numbers it cannot hold; JSON (and Go, for the fields it
 * skips) does not, so the byte path may read such a body as valid. */
static bool number_refused(const json_error_t *je)
{
    return strstr(je->text, "overflow") || strstr(je->text, "too big");
}

static void check_filter(const struct mu_view *v, const json_t *in,
                         const json_error_t *je, const char *body,
                         size_t len)
{
    struct mu_ext_miss miss;
    json_t *a, *b;
    size_t n;
    bool bad;
    char *raw = mu_ext_filter_body(v, body, len, &n, &bad, &miss);

    if (n != strlen(raw))
        abort();
    if (miss.missed && strnlen(miss.uid, MU_EXT_UID_MAX) >= MU_EXT_UID_MAX)
        abort();
    b = mu_json_loadb(raw, n, NULL);
    if (!b || !error_of(b) || bad != (error_of(b)[0] != '\0'))
        mismatch("filter: bad reply from the byte path", NULL, raw);
    if (!in) {
        if (!bad && !number_refused(je))
            mismatch("filter: jansson refused, bytes did not", NULL, raw);
    } else {
        a = mu_ext_filter(v, in);
        if (!error_of(a))
            mismatch("filter: tree reply without Error", a, raw);
        if (error_of(a)[0] || error_of(b)[0]) {
            if (!error_of(a)[0] || !error_of(b)[0] ||
                !json_is_null(json_object_get(b, "NodeNames")))
                mismatch("filter: only one path failed", a, raw);
        } else if (!json_equal(a, b)) {
            mismatch("filter: the paths differ", a, raw);
        }
        json_decref(a);
    }
    json_decref(b);
    free(raw);
}

static void check_prioritize(const struct mu_view *v, const json_t *in,
                             const json_error_t *je, const char *body,
                             size_t len)
{
    json_t *a, *b;
    size_t n;
    bool bad;
    char *raw = mu_ext_prioritize_body(v, body, len, &n, &bad);

    if (n != strlen(raw))
        abort();
    b = mu_json_loadb(raw, n, NULL);
    if (!json_is_array(b) || (bad && json_array_size(b) != 0))
        mismatch("prioritize: bad reply from the byte path", NULL, raw);
    if (!in) {
        if (!bad && !number_refused(je))
            mismatch("prioritize: jansson refused, bytes did not", NULL, raw);
    } else {
        a = mu_ext_prioritize(v, in);
        if (!json_equal(a, b))
            mismatch("prioritize: the paths differ", a, raw);
        json_decref(a);
    }
    json_decref(b);
    free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    json_error_t je;
    json_t *in;
    size_t i;

    if (!views[0])
        make_views();
    in = mu_json_loadb(body, size, &je);
    for (i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
        check_filter(views[i], in, &je, body, size);
        check_prioritize(views[i], in, &je, body, size);
    }
    json_decref(in);
    return 0;
}
