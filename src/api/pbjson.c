/* A protobuf message made into JSON by a schema (pbjson.h). */
#include "api/pbjson.h"

#include <time.h>

/* Seconds of Go's zero time.Time since the Unix epoch. */
#define GO_ZERO_TIME_S (-62135596800LL)

static int bad(struct mu_err *err, const struct mu_pbj_msg *m,
               const struct mu_pbj_field *f, const char *what)
{
    return mu_err_set(err, -EPROTO, "protobuf %s%s%s: %s", m->name,
                      f ? "." : "", f ? f->key : "", what);
}

static const struct mu_pbj_field *lookup(const struct mu_pbj_msg *m,
                                         uint32_t num)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->fields[i].num == num)
            return &m->fields[i];
    return NULL;
}

static enum mu_pb_wire wire_of(enum mu_pbj_kind k)
{
    switch (k) {
    case MU_PBJ_I32:
    case MU_PBJ_I64:
    case MU_PBJ_BOOL:
        return MU_PB_VARINT;
    default:
        return MU_PB_LEN;
    }
}

static json_t *string_of(const struct mu_pb_field *pf)
{
    return json_stringn(pf->len ? (const char *)pf->data : "", pf->len);
}

/* The object or list under key in out, made on first use. */
static json_t *member(json_t *out, const char *key, bool list)
{
    json_t *v = json_object_get(out, key);

    if (list ? !json_is_array(v) : !json_is_object(v)) {
        v = list ? json_array() : json_object();
        json_object_set_new(out, key, v);
    }
    return v;
}

/* A Time message as RFC 3339 text; NULL for the zero time. -EPROTO for a
 * malformed one or one out of range. */
static int time_text(const struct mu_pb_field *pf, json_t **out)
{
    struct mu_pb r;
    struct mu_pb_field f;
    int64_t s = 0;
    struct tm tm;
    time_t t;
    char buf[32];
    int rc;

    *out = NULL;
    mu_pb_sub(&r, pf);
    while ((rc = mu_pb_next(&r, &f)) > 0)
        if (f.num == 1 && f.wire == MU_PB_VARINT)
            s = (int64_t)f.v;
    if (rc < 0)
        return rc;
    if (s == GO_ZERO_TIME_S)
        return 0;
    t = (time_t)s;
    if ((int64_t)t != s || !gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 ||
        tm.tm_year + 1900 < 0 ||
        !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
        return -EPROTO;
    *out = json_string(buf);
    return 0;
}

/* One map entry {key = 1, value = 2} into obj; qty: the value is a
 * Quantity {string = 1}. -EILSEQ for a key or value not UTF-8. */
static int map_entry(const struct mu_pb_field *pf, bool qty, json_t *obj)
{
    struct mu_pb r, q;
    struct mu_pb_field f, g, kf = {0}, vf = {0};
    json_t *v;
    int rc;

    mu_pb_sub(&r, pf);
    while ((rc = mu_pb_next(&r, &f)) > 0) {
        if (f.wire != MU_PB_LEN)
            return -EPROTO;
        if (f.num == 1) {
            kf = f;
        } else if (f.num == 2 && !qty) {
            vf = f;
        } else if (f.num == 2) {
            mu_pb_sub(&q, &f);
            while ((rc = mu_pb_next(&q, &g)) > 0)
                if (g.num == 1 && g.wire == MU_PB_LEN)
                    vf = g;
            if (rc < 0)
                return rc;
        }
    }
    if (rc < 0)
        return rc;
    v = json_stringn(vf.len ? (const char *)vf.data : "", vf.len);
    if (!v || json_object_setn_new(obj, kf.len ? (const char *)kf.data : "",
                                   kf.len, v) < 0)
        return -EILSEQ; /* setn_new released v */
    return 0;
}

static int field(const struct mu_pbj_msg *m, const struct mu_pbj_field *d,
                 const struct mu_pb_field *pf, json_t *out,
                 struct mu_err *err)
{
    json_t *v = NULL;
    int rc;

    if (pf->wire != wire_of(d->kind))
        return bad(err, m, d, "wrong wire type");
    switch (d->kind) {
    case MU_PBJ_STR:
        if (!pf->len) {
            json_object_del(out, d->key);
            return 0;
        }
        /* fall through */
    case MU_PBJ_STRS:
        v = string_of(pf);
        if (!v)
            return bad(err, m, d, "not UTF-8");
        if (d->kind == MU_PBJ_STRS)
            return json_array_append_new(member(out, d->key, true), v), 0;
        break;
    case MU_PBJ_I32:
        v = json_integer((int32_t)(uint32_t)pf->v);
        break;
    case MU_PBJ_I64:
        v = json_integer((json_int_t)(int64_t)pf->v);
        break;
    case MU_PBJ_BOOL:
        v = json_boolean(pf->v != 0);
        break;
    case MU_PBJ_TIME:
        if (time_text(pf, &v) < 0)
            return bad(err, m, d, "not a time");
        if (!v) {
            json_object_del(out, d->key);
            return 0;
        }
        break;
    case MU_PBJ_MAP_STR:
    case MU_PBJ_MAP_QTY:
        rc = map_entry(pf, d->kind == MU_PBJ_MAP_QTY,
                       member(out, d->key, false));
        return rc < 0 ? bad(err, m, d, rc == -EILSEQ ? "not UTF-8"
                                                     : "malformed map entry")
                      : 0;
    case MU_PBJ_MSG:
        return mu_pbj_read(d->sub, pf->data, pf->len,
                           member(out, d->key, false), err);
    case MU_PBJ_MSGS:
        v = json_object();
        json_array_append_new(member(out, d->key, true), v);
        return mu_pbj_read(d->sub, pf->data, pf->len, v, err);
    case MU_PBJ_SET:
        member(out, d->key, false);
        return 0;
    case MU_PBJ_SETS:
        json_array_append_new(member(out, d->key, true), json_object());
        return 0;
    case MU_PBJ_INLINE:
        return mu_pbj_read(d->sub, pf->data, pf->len, out, err);
    }
    json_object_set_new(out, d->key, v);
    return 0;
}

int mu_pbj_read(const struct mu_pbj_msg *m, const uint8_t *buf, size_t len,
                json_t *out, struct mu_err *err)
{
    struct mu_pb r;
    struct mu_pb_field f;
    int rc;

    mu_pb_init(&r, buf, len);
    while ((rc = mu_pb_next(&r, &f)) > 0) {
        const struct mu_pbj_field *d = lookup(m, f.num);

        if (d && (rc = field(m, d, &f, out, err)) < 0)
            return rc;
    }
    return rc < 0 ? bad(err, m, NULL, "malformed wire format") : 0;
}
