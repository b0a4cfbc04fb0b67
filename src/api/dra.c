/*
 * dra.c - decoding resource.k8s.io/v1 objects (dra.h).
 */
#include "api/dra.h"

#include "api/cel_eval.h"
#include "api/json.h"
#include "api/resource.h"

/* ---- selectors ---- */

void mu_devsel_release(struct mu_devsel *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->src[i]);
        mu_cel_free(s->cel[i]);
    }
    free(s->src);
    free(s->cel);
    free(s->bad);
    memset(s, 0, sizeof(*s));
}

bool mu_devsel_match(const struct mu_devsel *s, const struct mu_cel_device *d)
{
    if (s->bad)
        return false;
    for (size_t i = 0; i < s->n; i++)
        if (mu_cel_eval(s->cel[i], d, NULL) != 1)
            return false;
    return true;
}

/* o.selectors at base: [{cel: {expression}}]. */
static int sel_decode(const json_t *o, const char *base, struct mu_devsel *out,
                      struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN], q[MU_JSON_PATH_LEN];
    const json_t *a, *v;
    size_t i;
    int rc = mu_json_member(o, base, "selectors", JSON_ARRAY, &a, err);

    if (rc || !a)
        return rc;
    if (json_array_size(a) > MU_DRA_MAX_SELECTORS)
        return mu_err_set(err, -EINVAL, "%s: must have at most %d items",
                          mu_json_path(p, base, "selectors"),
                          MU_DRA_MAX_SELECTORS);
    out->src = mu_xcalloc(json_array_size(a) + 1, sizeof(*out->src));
    out->cel = mu_xcalloc(json_array_size(a) + 1, sizeof(*out->cel));
    json_array_foreach(a, i, v) {
        const json_t *cel;
        const char *expr;
        struct mu_err cerr;

        mu_json_path_at(p, base, "selectors", i);
        rc = mu_json_member(v, p, "cel", JSON_OBJECT, &cel, err);
        if (!rc && !cel)
            return mu_err_set(err, -EINVAL, "%s.cel: Required value", p);
        if (!rc)
            rc = mu_json_member_str(cel, mu_json_path(q, p, "cel"),
                                    "expression", &expr, err);
        if (rc)
            return rc;
        if (!expr || !*expr)
            return mu_err_set(err, -EINVAL, "%s.cel.expression: Required "
                              "value", p);
        out->src[out->n] = mu_xstrdup(expr);
        out->cel[out->n] = mu_cel_compile(expr, &cerr);
        if (!out->cel[out->n] && !out->bad)
            out->bad = mu_xasprintf("%s.cel.expression: %s", p, cerr.msg);
        out->n++;
    }
    return 0;
}

/* ---- DeviceClass ---- */

void mu_devclass_release(struct mu_devclass *c)
{
    mu_meta_release(&c->meta);
    mu_devsel_release(&c->sel);
    free(c->ext_resource);
    memset(c, 0, sizeof(*c));
}

int mu_devclass_decode(const json_t *j, struct mu_devclass *out,
                       struct mu_err *err)
{
    const json_t *spec, *status;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, false, &out->meta, &spec, &status, err);
    if (!rc)
        rc = sel_decode(spec, "spec", &out->sel, err);
    if (!rc)
        rc = mu_json_member_dup(spec, "spec", "extendedResourceName",
                                &out->ext_resource, err);
    if (rc)
        mu_devclass_release(out);
    return rc;
}

/* ---- ResourceSlice ---- */

static void dev_release(struct mu_dev *d)
{
    for (size_t i = 0; i < d->nattrs; i++) {
        free(d->attrs[i].name);
        free(d->attrs[i].s);
    }
    for (size_t i = 0; i < d->ncaps; i++)
        free(d->caps[i].name);
    free(d->attrs);
    free(d->caps);
    free(d->name);
}

void mu_slice_release(struct mu_slice *s)
{
    mu_meta_release(&s->meta);
    for (size_t i = 0; i < s->ndevs; i++)
        dev_release(&s->devs[i]);
    free(s->devs);
    free(s->driver);
    free(s->pool);
    free(s->node);
    mu_affinity_release(&s->node_sel);
    memset(s, 0, sizeof(*s));
}

/* "domain/name" for an attribute or capacity key; a key without a domain
 * is the driver's. */
static char *qualify(const char *driver, const char *key)
{
    return strchr(key, '/') ? mu_xstrdup(key)
                            : mu_xasprintf("%s/%s", driver, key);
}

static int attr_decode(const char *driver, const char *key, const json_t *v,
                       const char *path, struct mu_cel_attr *a,
                       struct mu_err *err)
{
    const json_t *x;

    if (!json_is_object(v))
        return mu_json_want(err, path, "an object", v);
    if ((x = json_object_get(v, "string")) && json_is_string(x)) {
        a->kind = MU_CEL_STRING;
        a->s = mu_xstrdup(json_string_value(x));
    } else if ((x = json_object_get(v, "version")) && json_is_string(x)) {
        a->kind = MU_CEL_VERSION;
        a->s = mu_xstrdup(json_string_value(x));
    } else if ((x = json_object_get(v, "int")) && json_is_integer(x)) {
        a->kind = MU_CEL_INT;
        a->i = json_integer_value(x);
    } else if ((x = json_object_get(v, "bool")) && json_is_boolean(x)) {
        a->kind = MU_CEL_BOOL;
        a->b = json_is_true(x);
    } else {
        return mu_err_set(err, -EINVAL,
                          "%s: exactly one of int, bool, string or version "
                          "is required", path);
    }
    a->name = qualify(driver, key);
    return 0;
}

static int dev_decode(const char *driver, const json_t *v, const char *base,
                      struct mu_dev *d, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN], q[MU_JSON_PATH_LEN];
    const json_t *attrs, *caps, *x;
    const char *key;
    int rc = mu_json_member_dup(v, base, "name", &d->name, err);

    if (!rc && !d->name)
        return mu_err_set(err, -EINVAL, "%s.name: Required value", base);
    if (!rc)
        rc = mu_json_member(v, base, "attributes", JSON_OBJECT, &attrs, err);
    if (!rc)
        rc = mu_json_member(v, base, "capacity", JSON_OBJECT, &caps, err);
    if (rc)
        return rc;
    d->attrs = mu_xcalloc(json_object_size(attrs) + 1, sizeof(*d->attrs));
    mu_json_path(p, base, "attributes");
    json_object_foreach((json_t *)attrs, key, x) {
        rc = attr_decode(driver, key, x, mu_json_path(q, p, key),
                         &d->attrs[d->nattrs], err);
        if (rc)
            return rc;
        d->nattrs++;
    }
    d->caps = mu_xcalloc(json_object_size(caps) + 1, sizeof(*d->caps));
    mu_json_path(p, base, "capacity");
    json_object_foreach((json_t *)caps, key, x) {
        const char *val;
        int64_t milli;

        mu_json_path(q, p, key);
        rc = mu_json_member_str(x, q, "value", &val, err);
        if (!rc && !val)
            return mu_err_set(err, -EINVAL, "%s.value: Required value", q);
        if (!rc && mu_quantity_parse(val, MU_Q_MILLI, &milli, err)) {
            mu_err_prefix(err, "%s.value", q);
            return -EINVAL;
        }
        if (rc)
            return rc;
        d->caps[d->ncaps].name = qualify(driver, key);
        d->caps[d->ncaps++].milli = milli;
    }
    return 0;
}

int mu_slice_decode(const json_t *j, struct mu_slice *out, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];
    const json_t *spec, *status, *pool, *devs, *v, *sel = NULL;
    size_t i;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, false, &out->meta, &spec, &status, err);
    if (!rc)
        rc = mu_json_member_dup(spec, "spec", "driver", &out->driver, err);
    if (!rc && !out->driver)
        rc = mu_err_set(err, -EINVAL, "spec.driver: Required value");
    if (!rc)
        rc = mu_json_member(spec, "spec", "pool", JSON_OBJECT, &pool, err);
    if (!rc)
        rc = mu_json_member_dup(pool, "spec.pool", "name", &out->pool, err);
    if (!rc && !out->pool)
        rc = mu_err_set(err, -EINVAL, "spec.pool.name: Required value");
    if (!rc)
        rc = MU_MIN(mu_json_member_int(pool, "spec.pool", "generation", 0,
                                       INT64_MAX, &out->generation, err), 0);
    out->slice_count = 1;
    if (!rc)
        rc = MU_MIN(mu_json_member_int(pool, "spec.pool", "resourceSliceCount",
                                       1, INT64_MAX, &out->slice_count, err),
                    0);
    if (!rc)
        rc = mu_json_member_dup(spec, "spec", "nodeName", &out->node, err);
    if (!rc)
        rc = mu_json_member_bool(spec, "spec", "allNodes", &out->all_nodes,
                                 err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "nodeSelector", JSON_OBJECT, &sel,
                            err);
    if (!rc && sel)
        rc = mu_nodeselector_decode(sel, "spec.nodeSelector", &out->node_sel,
                                    err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "devices", JSON_ARRAY, &devs, err);
    if (!rc && json_array_size(devs) > MU_DRA_MAX_DEVICES)
        rc = mu_err_set(err, -EINVAL, "spec.devices: must have at most %d "
                        "items", MU_DRA_MAX_DEVICES);
    if (rc)
        goto fail;
    out->devs = mu_xcalloc(json_array_size(devs) + 1, sizeof(*out->devs));
    json_array_foreach(devs, i, v) {
        rc = dev_decode(out->driver, v, mu_json_path_at(p, "spec", "devices",
                                                        i),
                        &out->devs[out->ndevs], err);
        out->ndevs++;
        if (rc)
            goto fail;
    }
    return 0;
fail:
    mu_slice_release(out);
    return rc;
}

/* ---- claims ---- */

static void opt_release(struct mu_devopt *o)
{
    free(o->name);
    free(o->class_name);
    mu_devsel_release(&o->sel);
}

void mu_claimspec_release(struct mu_claimspec *s)
{
    for (size_t i = 0; i < s->nreqs; i++) {
        for (size_t k = 0; k < s->reqs[i].nopts; k++)
            opt_release(&s->reqs[i].opts[k]);
        free(s->reqs[i].opts);
        free(s->reqs[i].name);
    }
    free(s->reqs);
    free(s->bad);
    memset(s, 0, sizeof(*s));
}

static const char *const alloc_modes[] = {"ExactCount", "All"};

/* An exactly or a firstAvailable item at base. */
static int opt_decode(const json_t *o, const char *base, const char *name,
                      struct mu_devopt *out, char **bad, struct mu_err *err)
{
    int mode = MU_ALLOC_EXACT;
    int rc = mu_json_member_dup(o, base, "deviceClassName", &out->class_name,
                                err);

    if (!rc && !out->class_name)
        return mu_err_set(err, -EINVAL, "%s.deviceClassName: Required value",
                          base);
    if (!rc)
        rc = sel_decode(o, base, &out->sel, err);
    if (!rc)
        rc = mu_json_member_enum(o, base, "allocationMode", alloc_modes,
                                 MU_ARRAY_LEN(alloc_modes), &mode, err);
    out->mode = (enum mu_alloc_mode)mode;
    out->count = 1;
    if (!rc && mode == MU_ALLOC_EXACT)
        rc = MU_MIN(mu_json_member_int(o, base, "count", 1, 1024, &out->count,
                                       err), 0);
    if (rc)
        return rc;
    out->name = mu_xstrdup(name);
    if (!*bad && out->sel.bad)
        *bad = mu_xstrdup(out->sel.bad);
    if (!*bad && json_array_size(json_object_get(o, "tolerations")))
        *bad = mu_xasprintf("%s.tolerations: device taints are not planned",
                            base);
    if (!*bad && json_object_size(json_object_get(o, "capacity")))
        *bad = mu_xasprintf("%s.capacity: consumable capacity is not "
                            "planned", base);
    return 0;
}

static int req_decode(const json_t *v, const char *base, struct mu_devreq *r,
                      char **bad, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];
    const json_t *ex, *fa, *x;
    size_t i;
    int rc = mu_json_member_dup(v, base, "name", &r->name, err);

    if (!rc && !r->name)
        return mu_err_set(err, -EINVAL, "%s.name: Required value", base);
    if (!rc)
        rc = mu_json_member(v, base, "exactly", JSON_OBJECT, &ex, err);
    if (!rc)
        rc = mu_json_member(v, base, "firstAvailable", JSON_ARRAY, &fa, err);
    if (rc)
        return rc;
    if (!ex == !json_array_size(fa))
        return mu_err_set(err, -EINVAL, "%s: exactly one of exactly or "
                          "firstAvailable is required", base);
    if (json_array_size(fa) > MU_DRA_MAX_ALTS)
        return mu_err_set(err, -EINVAL, "%s.firstAvailable: must have at "
                          "most %d items", base, MU_DRA_MAX_ALTS);
    r->opts = mu_xcalloc(ex ? 1 : json_array_size(fa), sizeof(*r->opts));
    if (ex) {
        r->nopts = 1;
        return opt_decode(ex, mu_json_path(p, base, "exactly"), r->name,
                          &r->opts[0], bad, err);
    }
    json_array_foreach(fa, i, x) {
        const char *sub;
        char *full;

        mu_json_path_at(p, base, "firstAvailable", i);
        rc = mu_json_member_str(x, p, "name", &sub, err);
        if (!rc && !sub)
            rc = mu_err_set(err, -EINVAL, "%s.name: Required value", p);
        if (rc)
            return rc;
        full = mu_xasprintf("%s/%s", r->name, sub);
        rc = opt_decode(x, p, full, &r->opts[r->nopts], bad, err);
        free(full);
        r->nopts++;
        if (rc)
            return rc;
    }
    return 0;
}

/* A ResourceClaimSpec at base (its devices member). */
static int claimspec_decode(const json_t *spec, const char *base,
                            struct mu_claimspec *out, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN], q[MU_JSON_PATH_LEN];
    const json_t *devs, *reqs, *v;
    size_t i;
    int rc = mu_json_member(spec, base, "devices", JSON_OBJECT, &devs, err);

    mu_json_path(p, base, "devices");
    if (!rc)
        rc = mu_json_member(devs, p, "requests", JSON_ARRAY, &reqs, err);
    if (rc)
        return rc;
    if (json_array_size(reqs) > MU_DRA_MAX_REQUESTS)
        return mu_err_set(err, -EINVAL, "%s.requests: must have at most %d "
                          "items", p, MU_DRA_MAX_REQUESTS);
    out->reqs = mu_xcalloc(json_array_size(reqs) + 1, sizeof(*out->reqs));
    json_array_foreach(reqs, i, v) {
        rc = req_decode(v, mu_json_path_at(q, p, "requests", i),
                        &out->reqs[out->nreqs], &out->bad, err);
        out->nreqs++;
        if (rc)
            return rc;
    }
    if (!out->bad && json_array_size(json_object_get(devs, "constraints")))
        out->bad = mu_xasprintf("%s.constraints: matchAttribute "
                                "constraints are not planned", p);
    return 0;
}

void mu_claim_release(struct mu_claim *c)
{
    mu_meta_release(&c->meta);
    mu_claimspec_release(&c->spec);
    for (size_t i = 0; i < c->nresults; i++) {
        free(c->results[i].request);
        free(c->results[i].driver);
        free(c->results[i].pool);
        free(c->results[i].device);
    }
    free(c->results);
    for (size_t i = 0; i < c->nreserved; i++)
        free(c->reserved_uids[i]);
    free(c->reserved_uids);
    memset(c, 0, sizeof(*c));
}

static int claim_status(const json_t *status, struct mu_claim *out,
                        struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];
    const json_t *alloc, *devs, *res, *rf, *v;
    size_t i;
    int rc = mu_json_member(status, "status", "allocation", JSON_OBJECT, &alloc,
                            err);

    if (!rc)
        rc = mu_json_member(alloc, "status.allocation", "devices", JSON_OBJECT,
                            &devs, err);
    if (!rc)
        rc = mu_json_member(devs, "status.allocation.devices", "results",
                            JSON_ARRAY, &res, err);
    if (!rc)
        rc = mu_json_member(status, "status", "reservedFor", JSON_ARRAY, &rf,
                            err);
    if (rc)
        return rc;
    out->allocated = alloc != NULL;
    out->results = mu_xcalloc(json_array_size(res) + 1, sizeof(*out->results));
    json_array_foreach(res, i, v) {
        struct mu_devresult *r = &out->results[out->nresults++];

        mu_json_path_at(p, "status.allocation.devices", "results", i);
        rc = mu_json_member_dup(v, p, "request", &r->request, err);
        if (!rc)
            rc = mu_json_member_dup(v, p, "driver", &r->driver, err);
        if (!rc)
            rc = mu_json_member_dup(v, p, "pool", &r->pool, err);
        if (!rc)
            rc = mu_json_member_dup(v, p, "device", &r->device, err);
        if (!rc && (!r->driver || !r->pool || !r->device))
            rc = mu_err_set(err, -EINVAL, "%s: driver, pool and device are "
                            "required", p);
        if (rc)
            return rc;
    }
    out->reserved_uids = mu_xcalloc(json_array_size(rf) + 1,
                                    sizeof(*out->reserved_uids));
    json_array_foreach(rf, i, v) {
        const char *uid = mu_json_str(v, "uid");

        if (uid)
            out->reserved_uids[out->nreserved++] = mu_xstrdup(uid);
    }
    return 0;
}

int mu_claim_decode(const json_t *j, struct mu_claim *out, struct mu_err *err)
{
    const json_t *spec, *status;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = claimspec_decode(spec, "spec", &out->spec, err);
    if (!rc)
        rc = claim_status(status, out, err);
    if (rc)
        mu_claim_release(out);
    return rc;
}

void mu_claimtemplate_release(struct mu_claimtemplate *t)
{
    mu_meta_release(&t->meta);
    mu_claimspec_release(&t->spec);
    memset(t, 0, sizeof(*t));
}

int mu_claimtemplate_decode(const json_t *j, struct mu_claimtemplate *out,
                            struct mu_err *err)
{
    const json_t *spec, *status, *inner;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "spec", JSON_OBJECT, &inner, err);
    if (!rc)
        rc = claimspec_decode(inner, "spec.spec", &out->spec, err);
    if (rc)
        mu_claimtemplate_release(out);
    return rc;
}
