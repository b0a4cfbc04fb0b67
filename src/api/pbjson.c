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

/* The length of the UTF-8 sequence at p[0..n) when it is one (Go's
 * utf8.DecodeRune: no overlong forms, no surrogates, nothing past
 * U+10FFFF), else 0. */
static size_t utf8_len(const uint8_t *p, size_t n)
{
    uint8_t lo = 0x80, hi = 0xbf;
    size_t k;

    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        k = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        k = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        k = 4;
    else
        return 0;
    if (p[0] == 0xe0)
        lo = 0xa0;
    else if (p[0] == 0xed)
        hi = 0x9f;
    else if (p[0] == 0xf0)
        lo = 0x90;
    else if (p[0] == 0xf4)
        hi = 0x8f;
    if (n < k || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return k;
}

/* p[0..n) as UTF-8 (owned, *len its length): each byte that is not part
 * of a UTF-8 sequence becomes U+FFFD, as Go's encoding/json writes it, so
 * a string the apiserver would send as JSON reads the same here. */
static char *utf8_fix(const uint8_t *p, size_t n, size_t *len)
{
    char *out = mu_xmalloc(n * 3 + 1);
    size_t o = 0;

    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(p + i, n - i);

        if (k) {
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

static json_t *string_of(const struct mu_pb_field *pf)
{
    json_t *j = json_stringn(pf->len ? (const char *)pf->data : "", pf->len);
    size_t n;
    char *fixed;

    if (j)
        return j;
    fixed = utf8_fix(pf->data, pf->len, &n);
    j = json_stringn(fixed, n);
    free(fixed);
    return j;
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

/* A Time message as RFC 3339 text; NULL for the zero time and for one out
 * of RFC 3339's range. -EPROTO for a malformed one. */
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
    /* a year RFC 3339 cannot write (Go's JSON refuses the object): left
     * out, as the zero time is */
    if ((int64_t)t != s || !gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 ||
        tm.tm_year + 1900 < 0 ||
        !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
        return 0;
    *out = json_string(buf);
    return 0;
}

/* One map entry {key = 1, value = 2} into obj; qty: the value is a
 * Quantity {string = 1}. Key and value as string_of makes them. */
static int map_entry(const struct mu_pb_field *pf, bool qty, json_t *obj)
{
    struct mu_pb r, q;
    struct mu_pb_field f, g, kf = {0}, vf = {0};
    json_t *v;
    char *key;
    size_t klen;
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
    v = string_of(&vf);
    key = utf8_fix(kf.data, kf.len, &klen);
    rc = v && !json_object_setn_new(obj, key, klen, v) ? 0 : -EILSEQ;
    free(key); /* setn_new took v, or released it */
    return rc;
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
            return bad(err, m, d, "not a string");
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
        return rc < 0 ? bad(err, m, d, "malformed map entry") : 0;
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
