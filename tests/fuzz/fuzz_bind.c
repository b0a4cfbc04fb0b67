/*
 * fuzz_bind - ExtenderBindingArgs through mu_ext_bind_prepare and
 * mu_ext_bind_finish on a small fixed view. Never a crash; a refused
 * request carries no names to bind (ns, name and release NULL); an
 * accepted one carries exactly the view's namespace, name and reserved
 * node for its uid; and the bind callback is only ever called with the
 * view's names. Every answer is an ExtenderBindingResult with a string
 * Error, empty only when the pod was bound.
 *
 * The input is the request body, read with mu_json_loadb as the server
 * reads it. The view's pods bind at once (no release) or in batches of one,
 * so the barrier never waits. An accepted request's fields are whole (no
 * NUL cut a name short).
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include "api/json.h"
#include "extender/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct mu_view *view;
static struct mu_barrier *barrier;

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Both callbacks: only ever the view's own names. */
static void check_view_names(const char *ns, const char *name,
                             const char *uid, const char *node)
{
    const struct mu_view_pod *vp = mu_view_pod(view, uid);

    if (!vp || !same(vp->ns, ns) || !same(vp->name, name))
        abort();
    if (node && !same(vp->node, node))
        abort();
}

static int fake_bind(void *ctx, const char *ns, const char *name,
                     const char *uid, const char *node, struct mu_err *err)
{
    check_view_names(ns, name, uid, node);
    return 0;
}

static int fake_unbind(void *ctx, const char *ns, const char *name,
                       const char *uid, struct mu_err *err)
{
    check_view_names(ns, name, uid, NULL);
    return 0;
}

static void setup(void)
{
    view = mu_view_new(7, true);
    mu_view_add_pod(view, "u-now", "team-a", "w-0", "team-a/pg", "gpu-01",
                    NULL, 0, NULL);
    mu_view_add_pod(view, "u-one", "team-a", "w-1", "team-a/pg", "gpu-02",
                    "team-a/pg#1", 1, NULL);
    mu_view_add_pod(view, "u-wait", "team-a", "w-2", "team-a/pg", NULL, NULL,
                    0, "2/3 members pending");
    mu_view_add_pod(view, "u-anon", NULL, NULL, "team-a/pg", "gpu-03", NULL,
                    0, NULL);
    barrier = mu_barrier_new(1000, fake_bind, fake_unbind, NULL, NULL);
}

/* The request's field key as it was sent, whole: an accepted request's
 * fields never had a NUL cut off them. */
static bool whole(const json_t *args, const char *key, const char *got)
{
    const json_t *x = mu_json_find_ci(args, key);

    return json_is_string(x) && json_string_length(x) == strlen(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mu_ext_bind_req r;
    const struct mu_view_pod *vp;
    const char *e;
    json_t *args, *res;
    bool refused;

    if (!view)
        setup();
    args = mu_json_loadb((const char *)data, size, NULL);
    mu_ext_bind_prepare(view, args, &r);
    refused = r.error != NULL;
    if (refused) {
        if (r.ns || r.name || r.release)
            abort();
    } else {
        vp = mu_view_pod(view, r.uid);
        if (!vp || !same(vp->ns, r.ns) || !same(vp->name, r.name) ||
            !same(vp->node, r.node) || r.bad)
            abort();
        if ((vp->release || r.release) && !same(vp->release, r.release))
            abort();
        if (!whole(args, "PodUID", r.uid) || !whole(args, "Node", r.node) ||
            !whole(args, "PodName", r.name) ||
            !whole(args, "PodNamespace", r.ns))
            abort();
    }
    res = mu_ext_bind_finish(barrier, &r);
    e = json_string_value(json_object_get(res, "Error"));
    if (!e || (refused && !*e) || json_object_size(res) != 1)
        abort();
    json_decref(res);
    json_decref(args);
    return 0;
}
