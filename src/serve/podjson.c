#include "serve/podjson.h"

#include <string.h>

#include "api/json.h"
#include "api/object.h"
#include "common/mu.h"

/* JSON patch that drops muster's gate and pins the pod to node (KEP-3838
 * allows tightening a gated pod's node affinity). */
json_t *mu_serve_release_patch(const json_t *pod, const char *node)
{
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *gates = json_object_get(spec, "schedulingGates");
    const json_t *aff = json_object_get(spec, "affinity");
    const json_t *na = json_object_get(aff, "nodeAffinity");
    const json_t *req = json_object_get(
        na, "requiredDuringSchedulingIgnoredDuringExecution");
    const json_t *terms = json_object_get(req, "nodeSelectorTerms");
    json_t *ops = json_array(), *keep = json_array(), *field;
    size_t i;
    json_t *g;

    json_array_foreach(gates, i, g) if (mu_strcmp0(json_string_value(
        json_object_get(g, "name")), MU_GATE_NAME))
        json_array_append(keep, g);
    field = json_pack("{s:s,s:s,s:[s]}", "key", "metadata.name", "operator",
                      "In", "values", node);
    if (json_array_size(terms)) {
        json_t *t;

        json_array_foreach(terms, i, t) {
            char *path = mu_xasprintf(
                "/spec/affinity/nodeAffinity/requiredDuringScheduling"
                "IgnoredDuringExecution/nodeSelectorTerms/%zu/matchFields%s",
                i, json_object_get(t, "matchFields") ? "/-" : "");
            json_t *v = json_object_get(t, "matchFields")
                            ? json_deep_copy(field)
                            : json_pack("[O]", field);

            json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "add",
                                                 "path", path, "value", v));
            free(path);
        }
    } else {
        json_t *reqv = json_pack("{s:[{s:[O]}]}", "nodeSelectorTerms",
                                 "matchFields", field);
        const char *path;
        json_t *v;

        if (na) {
            path = "/spec/affinity/nodeAffinity/requiredDuringScheduling"
                   "IgnoredDuringExecution";
            v = reqv;
        } else if (aff) {
            path = "/spec/affinity/nodeAffinity";
            v = json_pack("{s:o}", "requiredDuringSchedulingIgnoredDuring"
                                   "Execution", reqv);
        } else {
            path = "/spec/affinity";
            v = json_pack("{s:{s:o}}", "nodeAffinity",
                          "requiredDuringSchedulingIgnoredDuringExecution",
                          reqv);
        }
        json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "add",
                                             "path", path, "value", v));
    }
    if (json_array_size(keep))
        json_array_append_new(ops, json_pack("{s:s,s:s,s:o}", "op", "replace",
                                             "path", "/spec/schedulingGates",
                                             "value", keep));
    else {
        json_decref(keep);
        json_array_append_new(ops, json_pack("{s:s,s:s}", "op", "remove",
                                             "path", "/spec/schedulingGates"));
    }
    json_decref(field);
    return ops;
}

/*
 * A strategic merge patch that releases a gated pod whose spec has no
 * required node affinity term: deletes muster's gate by name (other gates
 * stay) and sets the one term that pins the pod to node, in one request
 * and without reading the pod first. metadata.uid makes it a precondition:
 * a pod of the same name made again since is not touched. When the pod
 * does have terms the apiserver refuses to replace them (a gated pod's
 * affinity may only be tightened), and the release falls back to
 * mu_serve_release_patch() on the pod as read.
 */
json_t *mu_serve_release_smp(const char *uid, const char *node)
{
    json_t *p = json_pack(
        "{s:{s:[{s:s,s:s}],s:{s:{s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}}}", "spec",
        "schedulingGates", "$patch", "delete", "name", MU_GATE_NAME,
        "affinity", "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
        "matchFields", "key", "metadata.name", "operator", "In", "values",
        node);

    if (uid)
        json_object_set_new(p, "metadata", json_pack("{s:s}", "uid", uid));
    return p;
}

json_t *mu_serve_wake_patch(const char *uid, const char *node,
                            const char *wake)
{
    json_t *p = json_pack("{s:{s:{s:s,s:s}},s:{s:s}}", "metadata",
                          "annotations", MU_ANN_RESERVED, node, MU_ANN_WAKE,
                          wake, "status", "nominatedNodeName", node);

    if (uid)
        json_object_set_new(json_object_get(p, "metadata"), "uid",
                            json_string(uid));
    return p;
}

void mu_serve_release_annotate(json_t *patch, const char *release, int batch,
                               const char *node, bool pinned)
{
    json_t *meta = json_object_get(patch, "metadata"), *ann;
    char size[16];

    if (!meta) {
        meta = json_object();
        json_object_set_new(patch, "metadata", meta);
    }
    ann = json_object_get(meta, "annotations");
    if (!ann) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    snprintf(size, sizeof(size), "%d", batch);
    json_object_set_new(ann, MU_ANN_RELEASE, json_string(release));
    json_object_set_new(ann, MU_ANN_RELEASE_SIZE, json_string(size));
    json_object_set_new(ann, MU_ANN_RESERVED, json_string(node));
    if (pinned)
        json_object_set_new(ann, MU_ANN_PINNED, json_string("true"));
}

/* Drops from a nodeSelectorTerms array the matchField metadata.name In
 * [node] that a release added, and the terms it leaves empty. */
static void unpin_terms(json_t *terms, const char *node)
{
    for (size_t i = json_array_size(terms); i-- > 0;) {
        json_t *t = json_array_get(terms, i);
        json_t *mf = json_object_get(t, "matchFields");

        for (size_t k = json_array_size(mf); k-- > 0;) {
            json_t *f = json_array_get(mf, k);
            json_t *vals = json_object_get(f, "values");

            if (!mu_strcmp0(json_string_value(json_object_get(f, "key")),
                            "metadata.name") &&
                !mu_strcmp0(json_string_value(
                                json_object_get(f, "operator")),
                            "In") &&
                json_array_size(vals) == 1 &&
                !mu_strcmp0(json_string_value(json_array_get(vals, 0)),
                            node))
                json_array_remove(mf, k);
        }
        if (mf && !json_array_size(mf))
            json_object_del(t, "matchFields");
        if (!json_array_size(json_object_get(t, "matchExpressions")) &&
            !json_object_get(t, "matchFields"))
            json_array_remove(terms, i);
    }
}

json_t *mu_serve_remade_pod(const json_t *pod, const char *node)
{
    static const char *const drop[] = {MU_ANN_RELEASE, MU_ANN_RELEASE_SIZE,
                                       MU_ANN_RESERVED, MU_ANN_PINNED,
                                       MU_ANN_WAKE};
    const json_t *meta = json_object_get(pod, "metadata");
    json_t *spec = json_deep_copy(json_object_get(pod, "spec"));
    json_t *ann = json_deep_copy(json_object_get(meta, "annotations"));
    json_t *m = json_object(), *aff, *na, *req, *gates;
    const char *keys[] = {"name", "namespace", "labels", "finalizers"};
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    bool gated = false;
    size_t i;
    json_t *g;

    for (i = 0; i < MU_ARRAY_LEN(keys); i++)
        if (json_object_get(meta, keys[i]))
            json_object_set(m, keys[i], json_object_get(meta, keys[i]));
    if (!json_is_object(ann)) {
        json_decref(ann);
        ann = json_object();
    }
    for (i = 0; i < MU_ARRAY_LEN(drop); i++)
        json_object_del(ann, drop[i]);
    if (uid)
        json_object_set_new(ann, "muster.io/made-again-from",
                            json_string(uid));
    json_object_set_new(m, "annotations", ann);
    if (!json_is_object(spec)) {
        json_decref(spec);
        spec = json_object();
    }
    json_object_del(spec, "nodeName");
    aff = json_object_get(spec, "affinity");
    na = json_object_get(aff, "nodeAffinity");
    req = json_object_get(na,
                          "requiredDuringSchedulingIgnoredDuringExecution");
    unpin_terms(json_object_get(req, "nodeSelectorTerms"), node);
    if (req && !json_array_size(json_object_get(req, "nodeSelectorTerms")))
        json_object_del(na, "requiredDuringSchedulingIgnoredDuringExecution");
    if (na && !json_object_size(na))
        json_object_del(aff, "nodeAffinity");
    if (aff && !json_object_size(aff))
        json_object_del(spec, "affinity");
    gates = json_object_get(spec, "schedulingGates");
    json_array_foreach(gates, i, g) gated |= !mu_strcmp0(
        json_string_value(json_object_get(g, "name")), MU_GATE_NAME);
    if (!json_is_array(gates)) {
        gates = json_array();
        json_object_set_new(spec, "schedulingGates", gates);
    }
    if (!gated)
        json_array_append_new(gates, json_pack("{s:s}", "name", MU_GATE_NAME));
    return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod",
                     "metadata", m, "spec", spec);
}
