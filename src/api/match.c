/*
 * match.c - labels, taints, tolerations and node selectors, and the
 * Kubernetes rules that match them (match.h).
 */
#include "api/match.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/strconv.h"

static const char *const effects[] = {
    "", "NoSchedule", "PreferNoSchedule", "NoExecute",
};
static const char *const tol_ops[] = {"", "Equal", "Exists"};
static const char *const sel_ops[] = {
    "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt",
};

/* ---- key/value lists ---- */

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_kv *)a)->key,
                  ((const struct mu_kv *)b)->key);
}

const char *mu_kvs_get(const struct mu_kvs *kvs, const char *key)
{
    size_t lo = 0, hi = kvs->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key, kvs->v[mid].key);

        if (c == 0)
            return kvs->v[mid].value;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

void mu_kvs_release(struct mu_kvs *kvs)
{
    for (size_t i = 0; i < kvs->n; i++) {
        free(kvs->v[i].key);
        free(kvs->v[i].value);
    }
    free(kvs->v);
    kvs->n = 0;
    kvs->v = NULL;
}

int mu_kvs_decode(const json_t *j, const char *path, struct mu_kvs *out,
                  struct mu_err *err)
{
    const char *key;
    json_t *v;

    out->n = 0;
    out->v = NULL;
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_object(j))
        return mu_json_want(err, path, "an object", j);
    out->v = mu_xcalloc(json_object_size(j), sizeof(*out->v));
    json_object_foreach((json_t *)j, key, v) {
        if (!json_is_string(v)) {
            char p[MU_JSON_PATH_LEN];

            mu_kvs_release(out);
            return mu_json_want(err, mu_json_path(p, path, key), "a string", v);
        }
        out->v[out->n].key = mu_xstrdup(key);
        out->v[out->n].value = mu_xstrdup(json_string_value(v));
        out->n++;
    }
    qsort(out->v, out->n, sizeof(*out->v), kv_cmp);
    return 0;
}

/* ---- taints and tolerations ---- */

void mu_taints_release(struct mu_taint *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

void mu_tolerations_release(struct mu_toleration *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

int mu_taints_decode(const json_t *spec, size_t *n, struct mu_taint **out,
                     struct mu_err *err)
{
    const json_t *arr, *el;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    int rc = mu_json_member(spec, "spec", "taints", JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    *out = mu_xcalloc(json_array_size(arr), sizeof(**out));
    json_array_foreach(arr, i, el) {
        struct mu_taint *t = &(*out)[i];
        int eff = 0;

        mu_json_path_at(p, "spec", "taints", i);
        if (!json_is_object(el))
            return mu_json_want(err, p, "an object", el);
        (*n)++;
        rc = mu_json_member_dup(el, p, "key", &t->key, err);
        if (!rc)
            rc = mu_json_member_dup(el, p, "value", &t->value, err);
        if (!rc)
            rc = mu_json_member_enum(el, p, "effect", effects,
                                     MU_ARRAY_LEN(effects), &eff, err);
        if (rc)
            return rc;
        if (!t->key)
            return mu_err_set(err, -EINVAL, "%s.key: required", p);
        if (eff == MU_EFFECT_NONE)
            return mu_err_set(err, -EINVAL, "%s.effect: required", p);
        t->effect = (enum mu_taint_effect)eff;
    }
    return 0;
}

int mu_tolerations_decode(const json_t *spec, size_t *n,
                          struct mu_toleration **out, struct mu_err *err)
{
    const json_t *arr, *el;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    int rc = mu_json_member(spec, "spec", "tolerations", JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    *out = mu_xcalloc(json_array_size(arr), sizeof(**out));
    json_array_foreach(arr, i, el) {
        struct mu_toleration *t = &(*out)[i];
        int eff = 0, op = 0;

        mu_json_path_at(p, "spec", "tolerations", i);
        if (!json_is_object(el))
            return mu_json_want(err, p, "an object", el);
        (*n)++;
        rc = mu_json_member_dup(el, p, "key", &t->key, err);
        if (!rc)
            rc = mu_json_member_dup(el, p, "value", &t->value, err);
        if (!rc)
            rc = mu_json_member_enum(el, p, "operator", tol_ops,
                                     MU_ARRAY_LEN(tol_ops), &op, err);
        if (!rc)
            rc = mu_json_member_enum(el, p, "effect", effects,
                                     MU_ARRAY_LEN(effects), &eff, err);
        if (rc)
            return rc;
        t->exists = op == 2;
        t->effect = (enum mu_taint_effect)eff;
    }
    return 0;
}

bool mu_toleration_matches(const struct mu_toleration *tol,
                           const struct mu_taint *taint)
{
    if (tol->effect != MU_EFFECT_NONE && tol->effect != taint->effect)
        return false;
    if (tol->key && *tol->key && mu_strcmp0(tol->key, taint->key) != 0)
        return false;
    if (tol->exists)
        return true;
    return strcmp(tol->value ? tol->value : "",
                  taint->value ? taint->value : "") == 0;
}

/* ---- node selectors ---- */

static void selreqs_release(struct mu_selreq *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].key);
        for (size_t k = 0; k < r[i].nvalues; k++)
            free(r[i].values[k]);
        free(r[i].values);
    }
    free(r);
}

void mu_affinity_release(struct mu_affinity *a)
{
    for (size_t i = 0; i < a->nterms; i++) {
        selreqs_release(a->terms[i].expr, a->terms[i].nexpr);
        selreqs_release(a->terms[i].fields, a->terms[i].nfields);
    }
    free(a->terms);
    a->nterms = 0;
    a->terms = NULL;
}

/* nops: how many of sel_ops the requirement may use (matchFields 2, a
 * label selector 4, a node selector 6). */
static int selreq_decode(const json_t *j, const char *p, bool field,
                         size_t nops, struct mu_selreq *r, struct mu_err *err)
{
    const json_t *vals, *v;
    char q[MU_JSON_PATH_LEN];
    size_t i;
    int op = 0, rc;

    if (!json_is_object(j))
        return mu_json_want(err, p, "an object", j);
    rc = mu_json_member_dup(j, p, "key", &r->key, err);
    if (!rc && !r->key)
        rc = mu_err_set(err, -EINVAL, "%s.key: required", p);
    if (!rc && !json_object_get(j, "operator"))
        rc = mu_err_set(err, -EINVAL, "%s.operator: required", p);
    if (!rc)
        rc = mu_json_member_enum(j, p, "operator", sel_ops, nops, &op, err);
    if (!rc && field && strcmp(r->key, "metadata.name") != 0)
        rc = mu_err_set(err, -EINVAL,
                        "%s.key: unsupported value \"%s\": supported "
                        "values: \"metadata.name\"",
                        p, r->key);
    if (!rc)
        rc = mu_json_member(j, p, "values", JSON_ARRAY, &vals, err);
    if (rc)
        return rc;
    r->op = (enum mu_selop)op;
    if (!vals)
        return 0;
    r->values = mu_xcalloc(json_array_size(vals), sizeof(*r->values));
    json_array_foreach(vals, i, v) {
        if (!json_is_string(v))
            return mu_json_want(err, mu_json_path_at(q, p, "values", i),
                                "a string", v);
        r->values[r->nvalues++] = mu_xstrdup(json_string_value(v));
    }
    return 0;
}

static int selreqs_decode(const json_t *term, const char *base,
                          const char *key, size_t nops, size_t *n,
                          struct mu_selreq **out, struct mu_err *err)
{
    const json_t *arr, *el;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    int rc = mu_json_member(term, base, key, JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    *out = mu_xcalloc(json_array_size(arr), sizeof(**out));
    json_array_foreach(arr, i, el) {
        (*n)++;
        rc = selreq_decode(el, mu_json_path_at(p, base, key, i),
                           strcmp(key, "matchFields") == 0, nops, &(*out)[i],
                           err);
        if (rc)
            return rc;
    }
    return 0;
}

int mu_affinity_decode(const json_t *spec, struct mu_affinity *out,
                       struct mu_err *err)
{
    static const char base[] = "spec.affinity.nodeAffinity."
                               "requiredDuringSchedulingIgnoredDuringExecution";
    const json_t *aff, *na, *req;
    int rc = mu_json_member(spec, "spec", "affinity", JSON_OBJECT, &aff, err);

    if (!rc)
        rc = mu_json_member(aff, "spec.affinity", "nodeAffinity", JSON_OBJECT,
                            &na, err);
    if (!rc)
        rc = mu_json_member(na, "spec.affinity.nodeAffinity",
                            "requiredDuringSchedulingIgnoredDuringExecution",
                            JSON_OBJECT, &req, err);
    if (rc || !req)
        return rc;
    return mu_nodeselector_decode(req, base, out, err);
}

int mu_nodeselector_decode(const json_t *sel, const char *base,
                           struct mu_affinity *out, struct mu_err *err)
{
    const json_t *terms, *el;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    int rc = mu_json_member(sel, base, "nodeSelectorTerms", JSON_ARRAY, &terms,
                            err);

    if (rc || !terms)
        return rc;
    out->terms = mu_xcalloc(json_array_size(terms), sizeof(*out->terms));
    json_array_foreach(terms, i, el) {
        struct mu_selterm *t = &out->terms[i];

        mu_json_path_at(p, base, "nodeSelectorTerms", i);
        if (!json_is_object(el))
            return mu_json_want(err, p, "an object", el);
        out->nterms++;
        rc = selreqs_decode(el, p, "matchExpressions", 6, &t->nexpr,
                            &t->expr, err);
        if (!rc)
            rc = selreqs_decode(el, p, "matchFields", 2, &t->nfields,
                                &t->fields, err);
        if (rc)
            return rc;
    }
    return 0;
}

static bool in_values(const struct mu_selreq *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

/* One requirement against a value (NULL when the label is absent), as
 * k8s.io/apimachinery labels.Requirement.Matches does. */
static bool selreq_matches(const struct mu_selreq *r, const char *v)
{
    long long have, limit;

    switch (r->op) {
    case MU_SEL_IN:
        return v && in_values(r, v);
    case MU_SEL_NOT_IN:
        return !v || !in_values(r, v);
    case MU_SEL_EXISTS:
        return v != NULL;
    case MU_SEL_DOES_NOT_EXIST:
        return v == NULL;
    case MU_SEL_GT:
    case MU_SEL_LT:
        if (!v || r->nvalues != 1 ||
            mu_strconv_int(v, LLONG_MIN, LLONG_MAX, &have) < 0 ||
            mu_strconv_int(r->values[0], LLONG_MIN, LLONG_MAX, &limit) < 0)
            return false;
        return r->op == MU_SEL_GT ? have > limit : have < limit;
    }
    return false;
}

bool mu_affinity_matches(const struct mu_affinity *a,
                         const struct mu_kvs *labels, const char *node_name)
{
    if (a->nterms == 0)
        return true;
    for (size_t i = 0; i < a->nterms; i++) {
        const struct mu_selterm *t = &a->terms[i];
        bool ok = t->nexpr > 0 || t->nfields > 0;

        for (size_t k = 0; ok && k < t->nexpr; k++)
            ok = selreq_matches(&t->expr[k],
                                mu_kvs_get(labels, t->expr[k].key));
        for (size_t k = 0; ok && k < t->nfields; k++)
            ok = selreq_matches(&t->fields[k], node_name ? node_name : "");
        if (ok)
            return true;
    }
    return false;
}

/* ---- label selectors (metav1.LabelSelector) ---- */

void mu_labelsel_release(struct mu_selterm *t)
{
    selreqs_release(t->expr, t->nexpr);
    selreqs_release(t->fields, t->nfields);
    memset(t, 0, sizeof(*t));
}

int mu_labelsel_decode(const json_t *sel, const char *path,
                       struct mu_selterm *out, struct mu_err *err)
{
    const json_t *ml;
    struct mu_kvs kv = {0, NULL};
    size_t nexpr = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(sel))
        return mu_json_want(err, path, "an object", sel);
    rc = mu_json_member(sel, path, "matchLabels", JSON_OBJECT, &ml, err);
    if (!rc && ml) {
        char p[MU_JSON_PATH_LEN];

        rc = mu_kvs_decode(ml, mu_json_path(p, path, "matchLabels"), &kv,
                           err);
    }
    if (!rc)
        rc = selreqs_decode(sel, path, "matchExpressions", 4, &nexpr,
                            &out->expr, err);
    out->nexpr = nexpr;
    if (!rc && kv.n) {
        out->expr = mu_xrealloc(out->expr,
                                (out->nexpr + kv.n) * sizeof(*out->expr));
        for (size_t i = 0; i < kv.n; i++) {
            struct mu_selreq *r = &out->expr[out->nexpr++];

            r->key = kv.v[i].key;
            r->op = MU_SEL_IN;
            r->nvalues = 1;
            r->values = mu_xcalloc(1, sizeof(*r->values));
            r->values[0] = kv.v[i].value;
            kv.v[i].key = kv.v[i].value = NULL;
        }
    }
    mu_kvs_release(&kv);
    if (rc)
        mu_labelsel_release(out);
    return rc;
}

bool mu_labelsel_matches(const struct mu_selterm *t,
                         const struct mu_kvs *labels)
{
    for (size_t k = 0; k < t->nexpr; k++)
        if (!selreq_matches(&t->expr[k], mu_kvs_get(labels, t->expr[k].key)))
            return false;
    return true;
}
