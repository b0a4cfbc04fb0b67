#include "api/object.h"
#include "api/yaml.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest field path kept in a message; longer ones are cut. */
#define PATH_LEN 512

static const char *const pod_phases[] = {
    "Pending", "Running", "Succeeded", "Failed", "Unknown",
};
static const char *const pg_phases[] = {
    "", "Pending", "Inqueue", "Running", "Unknown", "Completed",
};
static const char *const queue_states[] = {
    "Open", "Closed", "Closing", "Unknown",
};
static const char *const effects[] = {
    "", "NoSchedule", "PreferNoSchedule", "NoExecute",
};
static const char *const tol_ops[] = {"", "Equal", "Exists"};
static const char *const sel_ops[] = {
    "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt",
};
static const char *const restart_always[] = {"Always"};
static const char *const preempt_policies[] = {
    "PreemptLowerPriority", "Never",
};

const char *mu_pod_phase_name(enum mu_pod_phase p)
{
    return (size_t)p < MU_ARRAY_LEN(pod_phases) ? pod_phases[p] : "Unknown";
}

enum mu_pod_phase mu_pod_phase_parse(const char *s)
{
    if (!s)
        return MU_POD_PENDING;
    for (size_t i = 0; i < MU_ARRAY_LEN(pod_phases); i++)
        if (!strcmp(s, pod_phases[i]))
            return (enum mu_pod_phase)i;
    return MU_POD_UNKNOWN;
}

const char *mu_pg_phase_name(enum mu_pg_phase p)
{
    return (size_t)p < MU_ARRAY_LEN(pg_phases) ? pg_phases[p] : "Unknown";
}

const char *mu_queue_state_name(enum mu_queue_state s)
{
    return (size_t)s < MU_ARRAY_LEN(queue_states) ? queue_states[s]
                                                   : "Unknown";
}

/* ---- JSON access with field paths ---- */

static const char *type_name(json_type t)
{
    static const char *const names[] = {
        [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
        [JSON_STRING] = "a string",  [JSON_INTEGER] = "an integer",
        [JSON_REAL] = "a number",    [JSON_TRUE] = "a boolean",
        [JSON_FALSE] = "a boolean",  [JSON_NULL] = "null",
    };

    return (size_t)t < MU_ARRAY_LEN(names) ? names[t] : "?";
}

static const char *kind_of(const json_t *v)
{
    return type_name(json_typeof(v));
}

/* Marks a cut path with "...". */
static const char *cut(char *buf, int n)
{
    if (n >= PATH_LEN)
        memcpy(buf + PATH_LEN - 4, "...", 4);
    return buf;
}

/* base.key, or key alone at the top level. */
static const char *join(char *buf, const char *base, const char *key)
{
    return cut(buf, snprintf(buf, PATH_LEN, "%s%s%s", base,
                             *base ? "." : "", key));
}

static const char *at(char *buf, const char *base, const char *key, size_t i)
{
    return cut(buf, snprintf(buf, PATH_LEN, "%s%s%s[%zu]", base,
                             *base ? "." : "", key, i));
}

static int want(struct mu_err *err, const char *path, const char *what,
                const json_t *v)
{
    if (!*path)
        return mu_err_set(err, -EINVAL, "expected %s, got %s", what,
                          kind_of(v));
    return mu_err_set(err, -EINVAL, "%s: expected %s, got %s", path, what,
                      kind_of(v));
}

/* o[key] checked against type; *out is NULL when absent or null. */
static int member(const json_t *o, const char *base, const char *key,
                  json_type type, const json_t **out, struct mu_err *err)
{
    const json_t *v = json_object_get(o, key);
    char p[PATH_LEN];

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_typeof(v) != type &&
        !(type == JSON_TRUE && json_is_boolean(v)))
        return want(err, join(p, base, key), type_name(type), v);
    *out = v;
    return 0;
}

static int get_str(const json_t *o, const char *base, const char *key,
                   const char **out, struct mu_err *err)
{
    const json_t *v;
    int rc = member(o, base, key, JSON_STRING, &v, err);

    *out = v ? json_string_value(v) : NULL;
    return rc;
}

/* A copy of the string at key, NULL when absent or empty. */
static int dup_str(const json_t *o, const char *base, const char *key,
                   char **out, struct mu_err *err)
{
    const char *s;
    int rc = get_str(o, base, key, &s, err);

    if (rc == 0 && s && *s)
        *out = mu_xstrdup(s);
    return rc;
}

/* Returns 1 and writes *out when present, 0 when absent, or an error. */
static int get_int(const json_t *o, const char *base, const char *key,
                   int64_t min, int64_t max, int64_t *out, struct mu_err *err)
{
    const json_t *v;
    char p[PATH_LEN];
    int64_t x;
    int rc = member(o, base, key, JSON_INTEGER, &v, err);

    if (rc || !v)
        return rc;
    x = json_integer_value(v);
    if (x < min || x > max)
        return mu_err_set(err, -EINVAL, "%s: must be between %lld and %lld",
                          join(p, base, key), (long long)min, (long long)max);
    *out = x;
    return 1;
}

static int get_int32(const json_t *o, const char *base, const char *key,
                     int32_t *out, struct mu_err *err)
{
    int64_t x;
    int rc = get_int(o, base, key, INT32_MIN, INT32_MAX, &x, err);

    if (rc == 1)
        *out = (int32_t)x;
    return rc;
}

/* get_int32 for fields whose presence does not matter: 0 or an error. */
static int opt_int32(const json_t *o, const char *base, const char *key,
                     int32_t *out, struct mu_err *err)
{
    int rc = get_int32(o, base, key, out, err);

    return rc < 0 ? rc : 0;
}

static int get_bool(const json_t *o, const char *base, const char *key,
                    bool *out, struct mu_err *err)
{
    const json_t *v;
    int rc = member(o, base, key, JSON_TRUE, &v, err);

    if (v)
        *out = json_is_true(v);
    return rc;
}

/* Writes the index of the value in names[0..n) when present. */
static int get_enum(const json_t *o, const char *base, const char *key,
                    const char *const *names, size_t n, int *out,
                    struct mu_err *err)
{
    const char *s;
    char p[PATH_LEN];
    struct mu_sb sb;
    int rc = get_str(o, base, key, &s, err);

    if (rc || !s)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    mu_sb_init(&sb);
    for (size_t i = 0; i < n; i++)
        if (*names[i])
            mu_sb_addf(&sb, "%s\"%s\"", sb.len ? ", " : "", names[i]);
    rc = mu_err_set(err, -EINVAL,
                    "%s: unsupported value \"%s\": supported values: %s",
                    join(p, base, key), s, sb.buf);
    mu_sb_release(&sb);
    return rc;
}

/* Strict decimal integer in [min, max]. */
static bool parse_ll(const char *s, long long min, long long max,
                     long long *out)
{
    char *end;
    long long v;

    if (!*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

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
        return want(err, path, "an object", j);
    out->v = mu_xcalloc(json_object_size(j), sizeof(*out->v));
    json_object_foreach((json_t *)j, key, v) {
        if (!json_is_string(v)) {
            char p[PATH_LEN];

            mu_kvs_release(out);
            return want(err, join(p, path, key), "a string", v);
        }
        out->v[out->n].key = mu_xstrdup(key);
        out->v[out->n].value = mu_xstrdup(json_string_value(v));
        out->n++;
    }
    qsort(out->v, out->n, sizeof(*out->v), kv_cmp);
    return 0;
}

/* ---- metadata ---- */

static bool digits(const char *s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* RFC 3339 as Go's time.RFC3339 reads it; fractions are dropped. */
bool mu_rfc3339_parse(const char *s, int64_t *out)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30,
                                31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, sec, oh = 0, om = 0, dim;
    int64_t off = 0;

    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' ||
        !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
        s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
        return false;
    s += 19;
    if (*s == '.') {
        if (s[1] < '0' || s[1] > '9')
            return false;
        for (s++; *s >= '0' && *s <= '9'; s++)
            ;
    }
    if (*s == 'Z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om) ||
            oh > 23 || om > 59)
            return false;
        off = (oh * 3600 + om * 60) * (*s == '-' ? -1 : 1);
        s += 6;
    } else {
        return false;
    }
    if (*s || mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59)
        return false;
    dim = mdays[mo - 1];
    if (mo == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        dim = 29;
    if (d < 1 || d > dim)
        return false;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
           off;
    return true;
}

void mu_meta_release(struct mu_meta *m)
{
    free(m->ns);
    free(m->name);
    free(m->uid);
    mu_kvs_release(&m->labels);
    mu_kvs_release(&m->annotations);
    free(m->owner_kind);
    free(m->owner_name);
    free(m->owner_uid);
    memset(m, 0, sizeof(*m));
}

static int owner_decode(const json_t *j, struct mu_meta *out,
                        struct mu_err *err)
{
    const json_t *refs, *ref;
    char p[PATH_LEN];
    size_t i;
    bool found = false;
    int rc = member(j, "metadata", "ownerReferences", JSON_ARRAY, &refs, err);

    json_array_foreach(refs, i, ref) {
        bool ctl = false;

        at(p, "metadata", "ownerReferences", i);
        if (!json_is_object(ref))
            return want(err, p, "an object", ref);
        rc = get_bool(ref, p, "controller", &ctl, err);
        if (rc)
            return rc;
        if (!ctl || found)
            continue;
        found = true;
        rc = dup_str(ref, p, "kind", &out->owner_kind, err);
        if (!rc)
            rc = dup_str(ref, p, "name", &out->owner_name, err);
        if (!rc)
            rc = dup_str(ref, p, "uid", &out->owner_uid, err);
        if (rc)
            return rc;
    }
    return rc;
}

int mu_meta_decode(const json_t *j, bool namespaced, struct mu_meta *out,
                   struct mu_err *err)
{
    const char *name, *ns, *ts;
    int rc;

    memset(out, 0, sizeof(*out));
    if (j && !json_is_null(j) && !json_is_object(j))
        return want(err, "metadata", "an object", j);
    rc = get_str(j, "metadata", "name", &name, err);
    if (rc)
        goto fail;
    if (!name || !*name) {
        rc = mu_err_set(err, -EINVAL, "metadata.name: required");
        goto fail;
    }
    out->name = mu_xstrdup(name);
    rc = get_str(j, "metadata", "namespace", &ns, err);
    if (rc)
        goto fail;
    if (namespaced)
        out->ns = mu_xstrdup(ns && *ns ? ns : "default");
    rc = dup_str(j, "metadata", "uid", &out->uid, err);
    if (rc)
        goto fail;
    rc = get_str(j, "metadata", "creationTimestamp", &ts, err);
    if (rc)
        goto fail;
    if (ts && !mu_rfc3339_parse(ts, &out->created)) {
        rc = mu_err_set(err, -EINVAL,
                        "metadata.creationTimestamp: \"%s\" is not an "
                        "RFC 3339 time (2006-01-02T15:04:05Z)",
                        ts);
        goto fail;
    }
    rc = get_str(j, "metadata", "deletionTimestamp", &ts, err);
    if (rc)
        goto fail;
    out->deleting = ts != NULL;
    rc = mu_kvs_decode(json_object_get(j, "labels"), "metadata.labels",
                       &out->labels, err);
    if (rc)
        goto fail;
    rc = mu_kvs_decode(json_object_get(j, "annotations"),
                       "metadata.annotations", &out->annotations, err);
    if (rc)
        goto fail;
    rc = owner_decode(j, out, err);
    if (rc)
        goto fail;
    return 0;
fail:
    mu_meta_release(out);
    return rc;
}

/* ---- durations ---- */

int mu_duration_parse(const char *s, int64_t *ms, struct mu_err *err)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
        {"ms", 1000000},
        {"s", UINT64_C(1000000000)},
        {"m", UINT64_C(60000000000)},
        {"h", UINT64_C(3600000000000)},
    };
    const uint64_t lim = UINT64_C(1) << 63;
    const char *p = s;
    uint64_t d = 0;
    bool neg = false;
    size_t n;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    n = strspn(p, "0123456789");
    if (n > 0 && !p[n]) {
        long long sec;

        /* A bare integer is a number of seconds. */
        if (!parse_ll(p, 0, INT64_MAX / 1000, &sec))
            goto invalid;
        *ms = (neg ? -sec : sec) * 1000;
        return 0;
    }
    if (!*p)
        goto invalid;
    while (*p) {
        uint64_t v = 0, f = 0, unit = 0;
        double scale = 1;
        bool pre = false, post = false, ovf = false;
        const char *u;

        if (*p != '.' && (*p < '0' || *p > '9'))
            goto invalid;
        for (; *p >= '0' && *p <= '9'; p++, pre = true) {
            if (v > lim / 10)
                goto invalid;
            v = v * 10 + (uint64_t)(*p - '0');
            if (v > lim)
                goto invalid;
        }
        if (*p == '.') {
            for (p++; *p >= '0' && *p <= '9'; p++, post = true) {
                if (ovf || f > (lim - 1) / 10 ||
                    f * 10 + (uint64_t)(*p - '0') > lim) {
                    ovf = true;
                    continue;
                }
                f = f * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
        }
        if (!pre && !post)
            goto invalid;
        u = p;
        while (*p && *p != '.' && (*p < '0' || *p > '9'))
            p++;
        if (p == u)
            return mu_err_set(err, -EINVAL,
                              "missing unit in duration \"%s\"", s);
        for (size_t i = 0; i < MU_ARRAY_LEN(units); i++)
            if (strlen(units[i].name) == (size_t)(p - u) &&
                memcmp(units[i].name, u, (size_t)(p - u)) == 0)
                unit = units[i].ns;
        if (!unit)
            return mu_err_set(err, -EINVAL,
                              "unknown unit \"%.*s\" in duration \"%s\"",
                              (int)(p - u), u, s);
        if (v > lim / unit)
            goto invalid;
        v *= unit;
        if (f > 0) {
            /* Go computes the fraction in float64; so do we. */
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > lim)
                goto invalid;
        }
        d += v;
        if (d > lim)
            goto invalid;
    }
    if (!neg && d > (uint64_t)INT64_MAX)
        goto invalid;
    if (neg)
        *ms = d == lim ? INT64_MIN / 1000000 : -(int64_t)d / 1000000;
    else
        *ms = (int64_t)d / 1000000;
    return 0;
invalid:
    return mu_err_set(err, -EINVAL, "invalid duration \"%s\"", s);
}

/* ---- taints, tolerations, affinity ---- */

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

static void taints_release(struct mu_taint *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

static void tols_release(struct mu_toleration *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

static int taints_decode(const json_t *spec, struct mu_node *out,
                         struct mu_err *err)
{
    const json_t *arr, *el;
    char p[PATH_LEN];
    size_t i;
    int rc = member(spec, "spec", "taints", JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    out->taints = mu_xcalloc(json_array_size(arr), sizeof(*out->taints));
    json_array_foreach(arr, i, el) {
        struct mu_taint *t = &out->taints[i];
        int eff = 0;

        at(p, "spec", "taints", i);
        if (!json_is_object(el))
            return want(err, p, "an object", el);
        out->ntaints++;
        rc = dup_str(el, p, "key", &t->key, err);
        if (!rc)
            rc = dup_str(el, p, "value", &t->value, err);
        if (!rc)
            rc = get_enum(el, p, "effect", effects, MU_ARRAY_LEN(effects),
                          &eff, err);
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

static int tols_decode(const json_t *spec, struct mu_pod *out,
                       struct mu_err *err)
{
    const json_t *arr, *el;
    char p[PATH_LEN];
    size_t i;
    int rc = member(spec, "spec", "tolerations", JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    out->tol = mu_xcalloc(json_array_size(arr), sizeof(*out->tol));
    json_array_foreach(arr, i, el) {
        struct mu_toleration *t = &out->tol[i];
        int eff = 0, op = 0;

        at(p, "spec", "tolerations", i);
        if (!json_is_object(el))
            return want(err, p, "an object", el);
        out->ntol++;
        rc = dup_str(el, p, "key", &t->key, err);
        if (!rc)
            rc = dup_str(el, p, "value", &t->value, err);
        if (!rc)
            rc = get_enum(el, p, "operator", tol_ops, MU_ARRAY_LEN(tol_ops),
                          &op, err);
        if (!rc)
            rc = get_enum(el, p, "effect", effects, MU_ARRAY_LEN(effects),
                          &eff, err);
        if (rc)
            return rc;
        t->exists = op == 2;
        t->effect = (enum mu_taint_effect)eff;
    }
    return 0;
}

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

static void affinity_release(struct mu_affinity *a)
{
    for (size_t i = 0; i < a->nterms; i++) {
        selreqs_release(a->terms[i].expr, a->terms[i].nexpr);
        selreqs_release(a->terms[i].fields, a->terms[i].nfields);
    }
    free(a->terms);
    a->nterms = 0;
    a->terms = NULL;
}

static int selreq_decode(const json_t *j, const char *p, bool field,
                         struct mu_selreq *r, struct mu_err *err)
{
    const json_t *vals, *v;
    char q[PATH_LEN];
    size_t i;
    int op = 0, rc;

    if (!json_is_object(j))
        return want(err, p, "an object", j);
    rc = dup_str(j, p, "key", &r->key, err);
    if (!rc && !r->key)
        rc = mu_err_set(err, -EINVAL, "%s.key: required", p);
    if (!rc && !json_object_get(j, "operator"))
        rc = mu_err_set(err, -EINVAL, "%s.operator: required", p);
    if (!rc)
        rc = get_enum(j, p, "operator", sel_ops, field ? 2 : 6, &op, err);
    if (!rc && field && strcmp(r->key, "metadata.name") != 0)
        rc = mu_err_set(err, -EINVAL,
                        "%s.key: unsupported value \"%s\": supported "
                        "values: \"metadata.name\"",
                        p, r->key);
    if (!rc)
        rc = member(j, p, "values", JSON_ARRAY, &vals, err);
    if (rc)
        return rc;
    r->op = (enum mu_selop)op;
    r->values = mu_xcalloc(json_array_size(vals), sizeof(*r->values));
    json_array_foreach(vals, i, v) {
        if (!json_is_string(v))
            return want(err, at(q, p, "values", i), "a string", v);
        r->values[r->nvalues++] = mu_xstrdup(json_string_value(v));
    }
    return 0;
}

static int selreqs_decode(const json_t *term, const char *base,
                          const char *key, size_t *n, struct mu_selreq **out,
                          struct mu_err *err)
{
    const json_t *arr, *el;
    char p[PATH_LEN];
    size_t i;
    int rc = member(term, base, key, JSON_ARRAY, &arr, err);

    if (rc || !arr)
        return rc;
    *out = mu_xcalloc(json_array_size(arr), sizeof(**out));
    json_array_foreach(arr, i, el) {
        (*n)++;
        rc = selreq_decode(el, at(p, base, key, i),
                           strcmp(key, "matchFields") == 0, &(*out)[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

static int affinity_decode(const json_t *spec, struct mu_affinity *out,
                           struct mu_err *err)
{
    static const char base[] = "spec.affinity.nodeAffinity."
                               "requiredDuringSchedulingIgnoredDuringExecution";
    const json_t *aff, *na, *req, *terms, *el;
    char p[PATH_LEN];
    size_t i;
    int rc = member(spec, "spec", "affinity", JSON_OBJECT, &aff, err);

    if (!rc)
        rc = member(aff, "spec.affinity", "nodeAffinity", JSON_OBJECT, &na,
                    err);
    if (!rc)
        rc = member(na, "spec.affinity.nodeAffinity",
                    "requiredDuringSchedulingIgnoredDuringExecution",
                    JSON_OBJECT, &req, err);
    if (!rc)
        rc = member(req, base, "nodeSelectorTerms", JSON_ARRAY, &terms, err);
    if (rc || !terms)
        return rc;
    out->terms = mu_xcalloc(json_array_size(terms), sizeof(*out->terms));
    json_array_foreach(terms, i, el) {
        struct mu_selterm *t = &out->terms[i];

        at(p, base, "nodeSelectorTerms", i);
        if (!json_is_object(el))
            return want(err, p, "an object", el);
        out->nterms++;
        rc = selreqs_decode(el, p, "matchExpressions", &t->nexpr, &t->expr,
                            err);
        if (!rc)
            rc = selreqs_decode(el, p, "matchFields", &t->nfields,
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
            !parse_ll(v, LLONG_MIN, LLONG_MAX, &have) ||
            !parse_ll(r->values[0], LLONG_MIN, LLONG_MAX, &limit))
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

/* ---- resource lists ---- */

int mu_reslist_decode(const json_t *j, const char *path, struct mu_resnames *rn,
                      struct mu_res *out, struct mu_err *err)
{
    struct mu_res r;
    const char *key;
    json_t *v;

    memset(out, 0, sizeof(*out));
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_object(j))
        return want(err, path, "an object", j);
    mu_res_zero(&r);
    json_object_foreach((json_t *)j, key, v) {
        const char *name = key, *text = NULL;
        char buf[64], p[PATH_LEN];
        int64_t q;
        int d, rc;

        if (mu_starts_with(key, "limits.") || mu_starts_with(key, "count/"))
            continue;
        if (mu_starts_with(key, "requests."))
            name = key + strlen("requests.");
        join(p, path, key);
        if (json_is_string(v)) {
            text = json_string_value(v);
        } else if (json_is_integer(v)) {
            snprintf(buf, sizeof(buf), "%lld",
                     (long long)json_integer_value(v));
            text = buf;
        } else if (json_is_real(v)) {
            text = mu_json_real_text(json_real_value(v), buf, sizeof(buf));
        } else {
            return want(err, p, "a quantity", v);
        }
        rc = mu_quantity_parse(text, mu_resource_unit(name), &q, err);
        if (rc) {
            mu_err_prefix(err, "%s", p);
            return rc;
        }
        if (q < 0)
            return mu_err_set(err, -EINVAL,
                              "%s: must be greater than or equal to 0", p);
        d = mu_resnames_index(rn, name, true);
        if (d < 0)
            return mu_err_set(err, d,
                              "%s: too many resource names (at most %d)", p,
                              MU_RES_MAX);
        mu_res_put(&r, d, q);
    }
    *out = r;
    return 0;
}

static int reslist_at(const json_t *o, const char *base, const char *key,
                      struct mu_resnames *rn, struct mu_res *out,
                      struct mu_err *err)
{
    char p[PATH_LEN];

    return mu_reslist_decode(json_object_get(o, key), join(p, base, key), rn,
                             out, err);
}

/* ---- nodes ---- */

void mu_node_release(struct mu_node *n)
{
    mu_meta_release(&n->meta);
    taints_release(n->taints, n->ntaints);
    memset(n, 0, sizeof(*n));
}

/* The decoders share this head: j must be an object; metadata, spec and
 * status are looked up. */
static int object_head(const json_t *j, bool namespaced, struct mu_meta *meta,
                       const json_t **spec, const json_t **status,
                       struct mu_err *err)
{
    const json_t *m;
    int rc;

    if (!json_is_object(j))
        return want(err, "", "an object", j);
    rc = member(j, "", "metadata", JSON_OBJECT, &m, err);
    if (!rc)
        rc = mu_meta_decode(m, namespaced, meta, err);
    if (!rc)
        rc = member(j, "", "spec", JSON_OBJECT, spec, err);
    if (!rc)
        rc = member(j, "", "status", JSON_OBJECT, status, err);
    return rc;
}

int mu_node_decode(const json_t *j, struct mu_resnames *rn, struct mu_node *out,
                   struct mu_err *err)
{
    const json_t *spec, *status, *alloc;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = object_head(j, false, &out->meta, &spec, &status, err);
    if (rc)
        goto fail;
    rc = member(status, "status", "allocatable", JSON_OBJECT, &alloc, err);
    if (rc)
        goto fail;
    rc = reslist_at(status, "status", alloc ? "allocatable" : "capacity", rn,
                    &out->allocatable, err);
    if (!rc)
        rc = taints_decode(spec, out, err);
    if (!rc)
        rc = get_bool(spec, "spec", "unschedulable", &out->unschedulable,
                      err);
    if (rc)
        goto fail;
    return 0;
fail:
    mu_node_release(out);
    return rc;
}

/* ---- pods ---- */

void mu_pod_release(struct mu_pod *p)
{
    mu_meta_release(&p->meta);
    free(p->scheduler_name);
    free(p->node_name);
    free(p->priority_class);
    mu_kvs_release(&p->node_selector);
    affinity_release(&p->affinity);
    tols_release(p->tol, p->ntol);
    free(p->group);
    free(p->task_spec);
    memset(p, 0, sizeof(*p));
}

/* A container's request after defaulting: limits fill missing requests. */
static int container_req(const json_t *c, const char *base,
                         struct mu_resnames *rn, struct mu_res *req,
                         struct mu_err *err)
{
    const json_t *res;
    struct mu_res lim;
    char p[PATH_LEN];
    int rc;

    if (!json_is_object(c))
        return want(err, base, "an object", c);
    rc = member(c, base, "resources", JSON_OBJECT, &res, err);
    join(p, base, "resources");
    if (!rc)
        rc = reslist_at(res, p, "requests", rn, req, err);
    if (!rc)
        rc = reslist_at(res, p, "limits", rn, &lim, err);
    if (rc)
        return rc;
    for (int d = 0; d < MU_RES_MAX; d++)
        if (mu_res_has(&lim, d) && !mu_res_has(req, d))
            mu_res_put(req, d, lim.v[d]);
    return 0;
}

/* kube-scheduler's resource.PodRequests, sidecar-aware. */
static int pod_request(const json_t *spec, struct mu_resnames *rn,
                       struct mu_res *out, struct mu_err *err)
{
    struct mu_res sum, sidecars, init, c, overhead;
    const json_t *arr, *el;
    char p[PATH_LEN];
    size_t i;
    int rc;

    mu_res_zero(&sum);
    mu_res_zero(&sidecars);
    mu_res_zero(&init);
    rc = member(spec, "spec", "containers", JSON_ARRAY, &arr, err);
    if (rc)
        return rc;
    json_array_foreach(arr, i, el) {
        rc = container_req(el, at(p, "spec", "containers", i), rn, &c, err);
        if (rc)
            return rc;
        mu_res_add(&sum, &c);
    }
    rc = member(spec, "spec", "initContainers", JSON_ARRAY, &arr, err);
    if (rc)
        return rc;
    json_array_foreach(arr, i, el) {
        int always = -1;

        rc = container_req(el, at(p, "spec", "initContainers", i), rn, &c,
                           err);
        if (!rc)
            rc = get_enum(el, p, "restartPolicy", restart_always, 1, &always,
                          err);
        if (rc)
            return rc;
        if (always == 0) {
            mu_res_add(&sum, &c);
            mu_res_add(&sidecars, &c);
            mu_res_max(&init, &sidecars);
        } else {
            mu_res_add(&c, &sidecars);
            mu_res_max(&init, &c);
        }
    }
    mu_res_max(&sum, &init);
    rc = reslist_at(spec, "spec", "overhead", rn, &overhead, err);
    if (rc)
        return rc;
    mu_res_add(&sum, &overhead);
    mu_res_put(&sum, MU_RES_PODS, 1);
    *out = sum;
    return 0;
}

static int pod_spec(const json_t *spec, struct mu_resnames *rn,
                    struct mu_pod *out, struct mu_err *err)
{
    const json_t *gates;
    const char *s;
    int policy = 0;
    int rc = get_str(spec, "spec", "schedulerName", &s, err);

    if (rc)
        return rc;
    out->scheduler_name = mu_xstrdup(s && *s ? s : "default-scheduler");
    rc = dup_str(spec, "spec", "nodeName", &out->node_name, err);
    if (!rc)
        rc = dup_str(spec, "spec", "priorityClassName", &out->priority_class,
                     err);
    if (!rc) {
        rc = get_int32(spec, "spec", "priority", &out->priority, err);
        out->has_priority = rc == 1;
        rc = MU_MIN(rc, 0);
    }
    if (!rc)
        rc = get_enum(spec, "spec", "preemptionPolicy", preempt_policies,
                      MU_ARRAY_LEN(preempt_policies), &policy, err);
    out->preempt_never = policy == 1;
    if (!rc)
        rc = mu_kvs_decode(json_object_get(spec, "nodeSelector"),
                           "spec.nodeSelector", &out->node_selector, err);
    if (!rc)
        rc = affinity_decode(spec, &out->affinity, err);
    if (!rc)
        rc = tols_decode(spec, out, err);
    if (!rc)
        rc = member(spec, "spec", "schedulingGates", JSON_ARRAY, &gates, err);
    if (!rc) {
        size_t i;
        json_t *g;

        out->ngates = json_array_size(gates);
        json_array_foreach(gates, i, g) if (!mu_strcmp0(json_string_value(
                   json_object_get(g, "name")), MU_GATE_NAME))
            out->muster_gate = true;
    }
    if (!rc)
        rc = pod_request(spec, rn, &out->req, err);
    return rc;
}

/* strconv.ParseBool's spellings. */
static int parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

    for (size_t i = 0; i < MU_ARRAY_LEN(t); i++) {
        if (strcmp(s, t[i]) == 0 || strcmp(s, f[i]) == 0) {
            *out = strcmp(s, t[i]) == 0;
            return 0;
        }
    }
    return -EINVAL;
}

static int ann_duration(const struct mu_meta *m, const char *key, int64_t *ms,
                        struct mu_err *err)
{
    const char *s = mu_kvs_get(&m->annotations, key);
    int64_t v;
    int rc;

    if (!s)
        return 0;
    rc = mu_duration_parse(s, &v, err);
    if (rc) {
        mu_err_prefix(err, "metadata.annotations.%s", key);
        return rc;
    }
    if (v < 0)
        return mu_err_set(err, -EINVAL,
                          "metadata.annotations.%s: must not be negative",
                          key);
    *ms = v;
    return 0;
}

static int task_index(const struct mu_meta *m)
{
    const char *s = mu_kvs_get(&m->annotations, MU_ANN_TASK_INDEX);
    long long v;

    if (s && parse_ll(s, INT_MIN, INT_MAX, &v))
        return (int)v;
    s = strrchr(m->name, '-');
    if (s && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1) &&
        parse_ll(s + 1, 0, INT_MAX, &v))
        return (int)v;
    return -1;
}

static int pod_annotations(struct mu_pod *out, struct mu_err *err)
{
    const struct mu_meta *m = &out->meta;
    const char *s;
    long long v;
    int rc;

    s = mu_kvs_get(&m->annotations, MU_ANN_TASK_PRIORITY);
    if (s && parse_ll(s, INT32_MIN, INT32_MAX, &v)) {
        out->priority = (int32_t)v;
        out->has_priority = true;
    }
    out->task_index = task_index(m);
    s = mu_kvs_get(&m->annotations, MU_ANN_TASK_SPEC);
    if (!s)
        s = mu_kvs_get(&m->labels, MU_ANN_TASK_SPEC);
    out->task_spec = mu_xstrdup_or_null(s);
    s = mu_kvs_get(&m->annotations, MU_ANN_GROUP);
    if (!s)
        s = mu_kvs_get(&m->annotations, MU_ANN_GROUP_ALIAS);
    out->group = mu_xstrdup_or_null(s);
    out->preemptable = true;
    s = mu_kvs_get(&m->annotations, MU_ANN_PREEMPTABLE);
    if (s && parse_bool(s, &out->preemptable))
        return mu_err_set(err, -EINVAL,
                          "metadata.annotations.%s: \"%s\" is not a "
                          "boolean (true or false)",
                          MU_ANN_PREEMPTABLE, s);
    out->run_for_ms = -1;
    rc = ann_duration(m, MU_ANN_SUBMIT_AT, &out->submit_at_ms, err);
    if (!rc)
        rc = ann_duration(m, MU_ANN_RUN_FOR, &out->run_for_ms, err);
    return rc;
}

int mu_pod_decode(const json_t *j, struct mu_resnames *rn, struct mu_pod *out,
                  struct mu_err *err)
{
    const json_t *spec, *status;
    int phase = MU_POD_PENDING;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = pod_spec(spec, rn, out, err);
    if (!rc)
        rc = get_enum(status, "status", "phase", pod_phases,
                      MU_ARRAY_LEN(pod_phases), &phase, err);
    if (!rc)
        rc = pod_annotations(out, err);
    if (rc)
        goto fail;
    out->phase = (enum mu_pod_phase)phase;
    out->besteffort = true;
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && out->req.v[d] > 0)
            out->besteffort = false;
    return 0;
fail:
    mu_pod_release(out);
    return rc;
}

/* ---- PodGroups ---- */

void mu_podgroup_release(struct mu_podgroup *pg)
{
    mu_meta_release(&pg->meta);
    for (size_t i = 0; i < pg->nmin_task; i++)
        free(pg->min_task[i].task);
    free(pg->min_task);
    free(pg->queue);
    free(pg->priority_class);
    memset(pg, 0, sizeof(*pg));
}

static int min_task_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_min_task *)a)->task,
                  ((const struct mu_min_task *)b)->task);
}

static int min_task_decode(const json_t *spec, struct mu_podgroup *out,
                           struct mu_err *err)
{
    const json_t *mt;
    const char *key;
    json_t *v;
    int rc = member(spec, "spec", "minTaskMember", JSON_OBJECT, &mt, err);

    if (rc || !mt)
        return rc;
    out->min_task = mu_xcalloc(json_object_size(mt), sizeof(*out->min_task));
    json_object_foreach((json_t *)mt, key, v) {
        struct mu_min_task *t = &out->min_task[out->nmin_task];
        char p[PATH_LEN];

        join(p, "spec.minTaskMember", key);
        if (!json_is_integer(v))
            return want(err, p, "an integer", v);
        if (json_integer_value(v) < 0)
            return mu_err_set(err, -EINVAL,
                              "%s: must be greater than or equal to 0", p);
        if (json_integer_value(v) > INT32_MAX)
            return mu_err_set(err, -EINVAL, "%s: must be at most %d", p,
                              INT32_MAX);
        t->task = mu_xstrdup(key);
        t->min = (int32_t)json_integer_value(v);
        out->nmin_task++;
    }
    qsort(out->min_task, out->nmin_task, sizeof(*out->min_task),
          min_task_cmp);
    return 0;
}

int mu_podgroup_decode(const json_t *j, struct mu_resnames *rn,
                       struct mu_podgroup *out, struct mu_err *err)
{
    const json_t *spec, *status, *minres;
    const char *queue;
    int phase = MU_PG_NONE;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = opt_int32(spec, "spec", "minMember", &out->min_member, err);
    if (!rc && out->min_member < 0)
        rc = mu_err_set(err, -EINVAL,
                        "spec.minMember: must be greater than or equal to 0");
    if (!rc)
        rc = min_task_decode(spec, out, err);
    if (!rc)
        rc = get_str(spec, "spec", "queue", &queue, err);
    if (rc)
        goto fail;
    out->queue = mu_xstrdup(queue && *queue ? queue : "default");
    rc = dup_str(spec, "spec", "priorityClassName", &out->priority_class,
                 err);
    if (!rc)
        rc = member(spec, "spec", "minResources", JSON_OBJECT, &minres, err);
    if (!rc) {
        out->has_min_resources = minres != NULL;
        rc = mu_reslist_decode(minres, "spec.minResources", rn,
                               &out->min_resources, err);
    }
    if (!rc)
        rc = get_enum(status, "status", "phase", pg_phases,
                      MU_ARRAY_LEN(pg_phases), &phase, err);
    if (!rc)
        rc = ann_duration(&out->meta, MU_ANN_SUBMIT_AT, &out->submit_at_ms,
                          err);
    if (rc)
        goto fail;
    out->phase = (enum mu_pg_phase)phase;
    return 0;
fail:
    mu_podgroup_release(out);
    return rc;
}

/* ---- Queues ---- */

void mu_queue_spec_release(struct mu_queue_spec *q)
{
    mu_meta_release(&q->meta);
    free(q->parent);
    memset(q, 0, sizeof(*q));
}

static int queue_limits(const json_t *spec, struct mu_resnames *rn,
                        struct mu_queue_spec *out, struct mu_err *err)
{
    const json_t *g;
    char a[32], b[32];
    int rc = reslist_at(spec, "spec", "capability", rn, &out->capability,
                        err);

    if (!rc)
        rc = member(spec, "spec", "guarantee", JSON_OBJECT, &g, err);
    if (!rc)
        rc = reslist_at(g, "spec.guarantee", "resource", rn, &out->guarantee,
                        err);
    if (!rc)
        rc = reslist_at(spec, "spec", "deserved", rn, &out->deserved, err);
    if (rc)
        return rc;
    for (int d = 0; d < MU_RES_MAX; d++) {
        const char *name = rn->name[d];

        if (!mu_res_has(&out->guarantee, d) ||
            !mu_res_has(&out->capability, d) ||
            out->guarantee.v[d] <= out->capability.v[d])
            continue;
        return mu_err_set(
            err, -EINVAL, "spec.guarantee.resource.%s: %s exceeds "
            "spec.capability %s", name,
            mu_quantity_format(name, out->guarantee.v[d], a, sizeof(a)),
            mu_quantity_format(name, out->capability.v[d], b, sizeof(b)));
    }
    return 0;
}

int mu_queue_decode(const json_t *j, struct mu_resnames *rn,
                    struct mu_queue_spec *out, struct mu_err *err)
{
    const json_t *spec, *status, *w;
    int state = MU_QUEUE_OPEN;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = object_head(j, false, &out->meta, &spec, &status, err);
    if (!rc)
        rc = member(spec, "spec", "weight", JSON_INTEGER, &w, err);
    if (rc)
        goto fail;
    out->weight = 1;
    if (w && json_integer_value(w) != 0) {
        if (json_integer_value(w) < 1 || json_integer_value(w) > 65535) {
            rc = mu_err_set(err, -EINVAL,
                            "spec.weight: must be between 1 and 65535");
            goto fail;
        }
        out->weight = (int32_t)json_integer_value(w);
    }
    rc = queue_limits(spec, rn, out, err);
    out->reclaimable = true;
    if (!rc)
        rc = get_bool(spec, "spec", "reclaimable", &out->reclaimable, err);
    if (!rc)
        rc = opt_int32(spec, "spec", "priority", &out->priority, err);
    if (!rc)
        rc = dup_str(spec, "spec", "parent", &out->parent, err);
    if (!rc)
        rc = get_enum(status, "status", "state", queue_states,
                      MU_ARRAY_LEN(queue_states), &state, err);
    if (!rc)
        rc = ann_duration(&out->meta, MU_ANN_SUBMIT_AT, &out->submit_at_ms,
                          err);
    if (rc)
        goto fail;
    out->state = (enum mu_queue_state)state;
    return 0;
fail:
    mu_queue_spec_release(out);
    return rc;
}

/* ---- PriorityClasses ---- */

void mu_priorityclass_release(struct mu_priorityclass *pc)
{
    free(pc->name);
    memset(pc, 0, sizeof(*pc));
}

int mu_priorityclass_decode(const json_t *j, struct mu_priorityclass *out,
                            struct mu_err *err)
{
    const json_t *mj;
    struct mu_meta m;
    int policy = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(j))
        return want(err, "", "an object", j);
    rc = member(j, "", "metadata", JSON_OBJECT, &mj, err);
    if (!rc)
        rc = mu_meta_decode(mj, false, &m, err);
    if (rc)
        return rc;
    out->name = m.name;
    m.name = NULL;
    mu_meta_release(&m);
    rc = get_int32(j, "", "value", &out->value, err);
    if (rc == 0)
        rc = mu_err_set(err, -EINVAL, "value: required");
    if (rc < 0)
        goto fail;
    rc = get_bool(j, "", "globalDefault", &out->global_default, err);
    if (!rc)
        rc = get_enum(j, "", "preemptionPolicy", preempt_policies,
                      MU_ARRAY_LEN(preempt_policies), &policy, err);
    if (rc)
        goto fail;
    out->preempt_never = policy == 1;
    return 0;
fail:
    mu_priorityclass_release(out);
    return rc;
}
