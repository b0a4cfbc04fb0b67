/*
 * extender.c - the pure /filter, /prioritize, /preempt and /bind handlers.
 *
 * One decision (decide()) per request from four strings of the Pod and the
 * view; two ways to read the request and write the reply: jansson trees
 * (mu_ext_filter & co., the reference) and the request bytes
 * (mu_ext_filter_body & co., what the HTTP threads run: no tree, node names
 * echoed as they came). test_extender checks that both give the same
 * answers.
 */
#include "extender/extender.h"

#include <strings.h>

#include "api/json.h"
#include "extender/internal.h"

/* The caps of extender.h, by their short names here. */
#define VIEW_REASON_CAP MU_EXT_VIEW_REASON_CAP
#define REASON_MAX MU_EXT_REASON_MAX

#define R_STARTING "muster is starting (caches not synced)"
#define R_UNKNOWN "not yet placed by muster"
/* A \u0000 where muster reads a string (both paths say it the same way). */
#define R_NUL_FIELD                                                            \
    "malformed ExtenderArgs: Pod.metadata.namespace, name, uid and "           \
    "Pod.spec.schedulerName must not contain a NUL character"
#define R_NUL_NAME                                                             \
    "malformed ExtenderArgs: NodeNames: a name must not contain a NUL "        \
    "character"

enum verdict_kind {
    PASS_ALL,   /* not muster's pod: every node passes */
    ONLY_NODE,  /* node passes, every other node fails with reason */
    REJECT_ALL, /* every node fails with reason */
};

struct verdict {
    enum verdict_kind kind;
    const char *node; /* ONLY_NODE: borrowed from the view */
    const char *uid;  /* ONLY_NODE, unseen: the pod's, borrowed from the
                         request */
    bool unseen;      /* answered before muster's view had the pod */
    char reason[REASON_MAX];
};

/* The four strings of the Pod that muster reads (NULL when absent). */
struct pod_ref {
    const char *ns, *name, *uid, *sched;
};

/* Appends s to sb: at most cap bytes of it, whole UTF-8 characters only,
 * invalid bytes as '?', "..." when cut. */
static void add_clean(struct mu_sb *sb, const char *s, size_t cap)
{
    const char *p = s, *end = s + strlen(s);

    while (p < end) {
        size_t n = mu_utf8_seq_len(p, end);

        if ((size_t)(p - s) + (n ? n : 1) > cap) {
            mu_sb_add(sb, "...");
            return;
        }
        if (!n) {
            mu_sb_addn(sb, "?", 1);
            p++;
            continue;
        }
        mu_sb_addn(sb, p, n);
        p += n;
    }
}

/* Writes a formatted, cleaned, capped message into buf[REASON_MAX]. */
static void vset_msg(char *buf, const char *fmt, va_list ap)
{
    struct mu_sb raw, clean;

    mu_sb_init(&raw);
    mu_sb_init(&clean);
    mu_sb_vaddf(&raw, fmt, ap);
    add_clean(&clean, raw.buf ? raw.buf : "", REASON_MAX - 4);
    snprintf(buf, REASON_MAX, "%s", clean.buf ? clean.buf : "");
    mu_sb_release(&raw);
    mu_sb_release(&clean);
}

static void set_msg(char *buf, const char *fmt, ...) MU_PRINTF(2, 3);
static void set_msg(char *buf, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vset_msg(buf, fmt, ap);
    va_end(ap);
}

static void waiting_reason(char *buf, const struct mu_view_pod *vp)
{
    struct mu_sb r;

    mu_sb_init(&r);
    if (vp->reason && *vp->reason)
        add_clean(&r, vp->reason, VIEW_REASON_CAP);
    if (vp->gang && r.len)
        set_msg(buf, "gang %s waiting: %s", vp->gang, r.buf);
    else if (vp->gang)
        set_msg(buf, "gang %s waiting", vp->gang);
    else if (r.len)
        set_msg(buf, "waiting: %s", r.buf);
    else
        set_msg(buf, "waiting for its gang");
    mu_sb_release(&r);
}

/* The whole decision. 0, or -EINVAL with a message in err[REASON_MAX]. */
static int decide(const struct mu_view *v, const struct pod_ref *p,
                  struct verdict *out, char *err)
{
    const struct mu_view_pod *vp;

    out->node = NULL;
    out->uid = NULL;
    out->unseen = false;
    out->reason[0] = '\0';
    if (!mu_view_serves(v, p->sched)) {
        out->kind = PASS_ALL;
        return 0;
    }
    out->kind = REJECT_ALL;
    if (!p->uid || !*p->uid) {
        if (!v || !v->synced) {
            set_msg(out->reason, "%s", R_STARTING);
            return 0;
        }
        set_msg(err, "Pod %s/%s has no metadata.uid", p->ns ? p->ns : "",
                p->name ? p->name : "");
        return -EINVAL;
    }
    if (!v || !v->synced) {
        set_msg(out->reason, "%s", R_STARTING);
        out->unseen = true;
        out->uid = p->uid;
        return 0;
    }
    vp = mu_view_pod(v, p->uid);
    if (!vp) {
        set_msg(out->reason, "%s", R_UNKNOWN);
        out->unseen = true;
        out->uid = p->uid;
    } else if (vp->node) {
        out->kind = ONLY_NODE;
        out->node = vp->node;
        out->uid = p->uid;
        set_msg(out->reason, "reserved for its gang on %s", vp->node);
    } else {
        waiting_reason(out->reason, vp);
    }
    return 0;
}

/* ---- the jansson path ---------------------------------------------- */

/* The ExtenderArgs' fields are matched without regard to case, as Go's
 * encoding/json does (api/json.h). */
static json_t *get_ci(const json_t *o, const char *key)
{
    return mu_json_find_ci(o, key);
}

/* A string field: absent or null -> *out NULL; a string -> it; else
 * -EINVAL. */
static int str_field(const json_t *o, const char *key, const char **out)
{
    return mu_json_as_str(get_ci(o, key), out);
}

/* A sub-object: absent or null -> *out NULL; an object -> it; else
 * -EINVAL. */
static int obj_field(const json_t *o, const char *key, const json_t **out)
{
    return mu_json_as(get_ci(o, key), JSON_OBJECT, out);
}

/* A string holding a NUL (mu_json_loadb keeps "\u0000"): a name, uid or
 * schedulerName never has one, and read as a C string it would be cut
 * (api/json.h), so the request is refused instead. */
static bool has_nul(const json_t *x)
{
    return json_is_string(x) &&
           strlen(json_string_value(x)) != json_string_length(x);
}

/* Reads ExtenderArgs. 0, or -EINVAL with a message in err. */
static int read_args(const json_t *args, struct pod_ref *p,
                     const json_t **names, char *err)
{
    const json_t *pod, *meta = NULL, *spec = NULL;
    json_t *n, *x;
    size_t i;

    memset(p, 0, sizeof(*p));
    *names = NULL;
    if (!json_is_object(args)) {
        set_msg(err, "malformed ExtenderArgs: not a JSON object");
        return -EINVAL;
    }
    if (obj_field(args, "Pod", &pod) || !pod) {
        set_msg(err, pod ? "malformed ExtenderArgs: Pod: not an object"
                         : "ExtenderArgs has no Pod");
        return -EINVAL;
    }
    if (obj_field(pod, "metadata", &meta) || obj_field(pod, "spec", &spec) ||
        str_field(meta, "namespace", &p->ns) ||
        str_field(meta, "name", &p->name) || str_field(meta, "uid", &p->uid) ||
        str_field(spec, "schedulerName", &p->sched)) {
        set_msg(err, "malformed ExtenderArgs: Pod.metadata.namespace, name, "
                     "uid and Pod.spec.schedulerName must be strings");
        return -EINVAL;
    }
    if (has_nul(get_ci(meta, "namespace")) || has_nul(get_ci(meta, "name")) ||
        has_nul(get_ci(meta, "uid")) ||
        has_nul(get_ci(spec, "schedulerName"))) {
        set_msg(err, "%s", R_NUL_FIELD);
        return -EINVAL;
    }
    n = get_ci(args, "NodeNames");
    if (!n || json_is_null(n)) {
        set_msg(err, "ExtenderArgs.NodeNames is null (muster needs "
                     "nodeCacheCapable: true)");
        return -EINVAL;
    }
    if (!json_is_array(n)) {
        set_msg(err, "malformed ExtenderArgs: NodeNames: not an array");
        return -EINVAL;
    }
    if (json_array_size(n) > MU_EXT_MAX_NODE_NAMES) {
        set_msg(err, MU_EXT_TOO_MANY_NAMES, MU_EXT_MAX_NODE_NAMES);
        return -E2BIG;
    }
    json_array_foreach(n, i, x)
    {
        if (!json_is_string(x)) {
            set_msg(err, "malformed ExtenderArgs: NodeNames: not a string");
            return -EINVAL;
        }
        if (has_nul(x)) {
            set_msg(err, "%s", R_NUL_NAME);
            return -EINVAL;
        }
    }
    *names = n;
    return 0;
}

static json_t *filter_error(const char *msg)
{
    return json_pack("{s:n,s:{},s:{},s:s}", "NodeNames", "FailedNodes",
                     "FailedAndUnresolvableNodes", "Error", msg);
}

static json_t *filter_json(const struct mu_view *v, const json_t *args,
                           bool *bad)
{
    char err[REASON_MAX];
    struct verdict vd;
    struct pod_ref p;
    const json_t *names;
    json_t *pass, *failed, *reason, *x;
    bool node_passed = false;
    size_t i;

    *bad =
        read_args(args, &p, &names, err) != 0 || decide(v, &p, &vd, err) != 0;
    if (*bad)
        return filter_error(err);
    if (vd.kind == PASS_ALL)
        return json_pack("{s:O,s:{},s:{},s:s}", "NodeNames", names,
                         "FailedNodes", "FailedAndUnresolvableNodes", "Error",
                         "");
    pass = json_array();
    failed = json_object();
    reason = json_string(vd.reason);
    json_array_foreach(names, i, x)
    {
        const char *name = json_string_value(x);

        if (vd.kind == ONLY_NODE && !strcmp(name, vd.node)) {
            if (!node_passed)
                json_array_append(pass, x);
            node_passed = true;
        } else {
            json_object_set(failed, name, reason);
        }
    }
    json_decref(reason);
    return json_pack("{s:o,s:{},s:o,s:s}", "NodeNames", pass, "FailedNodes",
                     "FailedAndUnresolvableNodes", failed, "Error", "");
}

json_t *mu_ext_filter(const struct mu_view *v, const json_t *args)
{
    bool bad;

    return filter_json(v, args, &bad);
}

json_t *mu_ext_prioritize(const struct mu_view *v, const json_t *args)
{
    char err[REASON_MAX];
    struct verdict vd;
    struct pod_ref p;
    const json_t *names;
    json_t *list = json_array(), *x;
    size_t i;

    if (read_args(args, &p, &names, err) || decide(v, &p, &vd, err))
        return list;
    json_array_foreach(names, i, x)
    {
        int score =
            vd.kind == ONLY_NODE && !strcmp(json_string_value(x), vd.node) ? 10
                                                                           : 0;

        json_array_append_new(
            list, json_pack("{s:O,s:i}", "Host", x, "Score", score));
    }
    return list;
}

json_t *mu_ext_preempt(const struct mu_view *v, const json_t *args)
{
    return json_pack("{s:{}}", "NodeNameToMetaVictims");
}

/* ---- the byte path ------------------------------------------------- */

/* A reply under construction; the buffer grows by doubling. */
struct out {
    char *buf;
    size_t len, cap;
};

static void out_need(struct out *o, size_t n)
{
    mu_xgrow((void **)&o->buf, &o->cap, o->len + n + 1, 1);
}

static void out_add(struct out *o, const char *s, size_t n)
{
    out_need(o, n);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

#define OUT_LIT(o, s) out_add((o), (s), sizeof(s) - 1)

/* s as a JSON string (s is valid UTF-8: set_msg cleaned it). */
static void out_jstr(struct out *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    out_need(o, 6 * strlen(s) + 2);
    o->buf[o->len++] = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\') {
            o->buf[o->len++] = '\\';
            o->buf[o->len++] = (char)c;
        } else if (c < 0x20) {
            memcpy(o->buf + o->len, "\\u00", 4);
            o->buf[o->len + 4] = hex[c >> 4];
            o->buf[o->len + 5] = hex[c & 15];
            o->len += 6;
        } else {
            o->buf[o->len++] = (char)c;
        }
    }
    o->buf[o->len++] = '"';
}

static char *out_done(struct out *o, size_t *len)
{
    out_need(o, 0);
    o->buf[o->len] = '\0';
    *len = o->len;
    return o->buf;
}

static char *filter_error_body(const char *msg, size_t *len)
{
    struct out o = {0};

    OUT_LIT(&o, "{\"NodeNames\":null,\"FailedNodes\":{},"
                "\"FailedAndUnresolvableNodes\":{},\"Error\":");
    out_jstr(&o, msg);
    OUT_LIT(&o, "}");
    return out_done(&o, len);
}

/* A reply of need bytes (for n names) fits MU_EXT_MAX_REPLY: 0, or
 * -E2BIG with a message in err[REASON_MAX]. */
static int reply_fits(size_t need, size_t n, char *err)
{
    if (need <= MU_EXT_MAX_REPLY)
        return 0;
    set_msg(err,
            "the reply to %zu NodeNames would take %zu bytes, more than "
            "muster's cap of %u",
            n, need, MU_EXT_MAX_REPLY);
    return -E2BIG;
}

/* The token is the string s of n bytes (n = strlen(s)); the common case
 * (no escapes, a different length or last byte) costs no call. */
static inline bool tok_is(const struct mu_js_tok *t, const char *s, size_t n)
{
    if (t->esc)
        return mu_js_tok_eq(*t, s);
    return t->len - 2 == n && (!n || t->p[n] == s[n - 1]) &&
           !memcmp(t->p + 1, s, n);
}

/* Copies n bytes in 16-byte blocks (a few vector moves instead of a call
 * for these short strings): reads and writes up to 15 bytes beyond n, so
 * callers make sure both sides have that room. */
static inline void copy16(char *dst, const char *src, size_t n)
{
    for (size_t k = 0; k < n; k += 16)
        memcpy(dst + k, src + k, 16);
}

/* Scans body and decides. 0, or -EINVAL with err set. On success the pod's
 * strings live in *arena (free it). */
static int body_decide(const struct mu_view *v, const char *body, size_t len,
                       struct mu_ext_args *a, struct verdict *vd, char **arena,
                       char *err)
{
    struct mu_js_tok *toks[] = {&a->ns, &a->name, &a->uid, &a->sched};
    const char **dst[MU_ARRAY_LEN(toks)];
    struct pod_ref p = {0};
    struct mu_err e;
    size_t total = 0;
    char *at;

    dst[0] = &p.ns;
    dst[1] = &p.name;
    dst[2] = &p.uid;
    dst[3] = &p.sched;
    *arena = NULL;
    switch (mu_scan_ext_args(body, len, a, &e)) {
    case 0:
        break;
    case -E2BIG:
        set_msg(err, "%s", e.msg);
        return -E2BIG;
    default:
        set_msg(err, "malformed ExtenderArgs: %s", e.msg);
        return -EINVAL;
    }
    if (!a->pod) {
        set_msg(err, "ExtenderArgs has no Pod");
        return -EINVAL;
    }
    if (!a->node_names) {
        set_msg(err, "ExtenderArgs.NodeNames is null (muster needs "
                     "nodeCacheCapable: true)");
        return -EINVAL;
    }
    for (size_t i = 0; i < MU_ARRAY_LEN(toks); i++) {
        if (toks[i]->nul) {
            set_msg(err, "%s", R_NUL_FIELD);
            return -EINVAL;
        }
        total += toks[i]->len + 1;
    }
    if (a->names_nul) {
        set_msg(err, "%s", R_NUL_NAME);
        return -EINVAL;
    }
    at = *arena = mu_xmalloc(total);
    for (size_t i = 0; i < MU_ARRAY_LEN(toks); i++) {
        if (!toks[i]->p)
            continue;
        *dst[i] = at;
        at += mu_js_decode(*toks[i], at) + 1;
    }
    return decide(v, &p, vd, err);
}

char *mu_ext_filter_body(const struct mu_view *v, const char *body, size_t len,
                         size_t *out_len, bool *bad,
                         struct mu_ext_miss *miss)
{
    struct mu_ext_args a;
    struct verdict vd;
    struct out o = {0}, reason = {0};
    char err[REASON_MAX];
    struct mu_js_tok hit = {NULL, 0, false, false};
    const char *names_end;
    char *arena, *s;
    size_t node_len;
    bool first = true;

    if (miss)
        miss->missed = miss->unseen = false;
    *bad = body_decide(v, body, len, &a, &vd, &arena, err) != 0;
    if (*bad) {
        s = filter_error_body(err, out_len);
        goto out;
    }
    if (vd.kind == PASS_ALL) {
        if (reply_fits(a.names_raw_len + 96, a.n_names, err)) {
            *bad = true;
            s = filter_error_body(err, out_len);
            goto out;
        }
        out_need(&o, a.names_raw_len + 96);
        OUT_LIT(&o, "{\"NodeNames\":");
        out_add(&o, a.names_raw, a.names_raw_len);
        OUT_LIT(&o, ",\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},"
                    "\"Error\":\"\"}");
        s = out_done(&o, out_len);
        goto out;
    }
    out_jstr(&reason, vd.reason);
    if (reply_fits(a.names_raw_len + a.n_names * (reason.len + 2) + 96,
                   a.n_names, err)) {
        *bad = true;
        s = filter_error_body(err, out_len);
        goto out;
    }
    out_need(&reason, 16); /* copy16 room */
    node_len = vd.node ? strlen(vd.node) : 0;
    /* One pass: the failed map first (JSON keys have no order), noting
     * the reserved node on the way. Room for every name (names_raw_len
     * counts each token and a comma) with ':' and the reason, so the loop
     * writes without checks. */
    out_need(&o, a.names_raw_len + a.n_names * (reason.len + 2) + 96);
    OUT_LIT(&o, "{\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{");
    names_end = a.names_raw + a.names_raw_len;
    for (size_t i = 0; i < a.n_names; i++) {
        struct mu_js_tok t = mu_ext_name(&a, i);

        if (vd.kind == ONLY_NODE && tok_is(&t, vd.node, node_len)) {
            if (!hit.p) /* the reserved node (a duplicate is dropped) */
                hit = t;
            continue;
        }
        if (!first)
            o.buf[o.len++] = ',';
        first = false;
        if (t.p + t.len + 16 <= names_end) /* the body has the room */
            copy16(o.buf + o.len, t.p, t.len);
        else
            memcpy(o.buf + o.len, t.p, t.len);
        o.len += t.len;
        o.buf[o.len++] = ':';
        copy16(o.buf + o.len, reason.buf, reason.len);
        o.len += reason.len;
    }
    OUT_LIT(&o, "},\"NodeNames\":[");
    if (hit.p)
        out_add(&o, hit.p, hit.len);
    else if (vd.kind == ONLY_NODE && miss &&
             strlen(vd.uid) < sizeof(miss->uid)) {
        miss->missed = true;
        memcpy(miss->uid, vd.uid, strlen(vd.uid) + 1);
    }
    OUT_LIT(&o, "]");
    OUT_LIT(&o, ",\"Error\":\"\"}");
    s = out_done(&o, out_len);
    if (vd.unseen && miss && strlen(vd.uid) < sizeof(miss->uid)) {
        miss->unseen = true;
        memcpy(miss->uid, vd.uid, strlen(vd.uid) + 1);
    }
out:
    free(reason.buf);
    free(arena);
    mu_ext_args_release(&a);
    return s;
}

char *mu_ext_prioritize_body(const struct mu_view *v, const char *body,
                             size_t len, size_t *out_len, bool *bad)
{
    static const char head[] = "{\"Host\":", mid0[] = ",\"Score\":0}",
                      mid10[] = ",\"Score\":10}";
    struct mu_ext_args a;
    struct verdict vd;
    struct out o = {0};
    char err[REASON_MAX];
    char *arena;
    size_t node_len, need;

    *bad = body_decide(v, body, len, &a, &vd, &arena, err) != 0;
    need = a.names_raw_len + a.n_names * (sizeof(head) + sizeof(mid10)) + 8;
    *bad = *bad || reply_fits(need, a.n_names, err) != 0;
    node_len = !*bad && vd.node ? strlen(vd.node) : 0;
    OUT_LIT(&o, "[");
    if (!*bad) {
        out_need(&o, need);
        for (size_t i = 0; i < a.n_names; i++) {
            struct mu_js_tok t = mu_ext_name(&a, i);
            bool top = vd.kind == ONLY_NODE && tok_is(&t, vd.node, node_len);

            if (i)
                o.buf[o.len++] = ',';
            memcpy(o.buf + o.len, head, sizeof(head) - 1);
            o.len += sizeof(head) - 1;
            memcpy(o.buf + o.len, t.p, t.len);
            o.len += t.len;
            if (top) {
                memcpy(o.buf + o.len, mid10, sizeof(mid10) - 1);
                o.len += sizeof(mid10) - 1;
            } else {
                memcpy(o.buf + o.len, mid0, sizeof(mid0) - 1);
                o.len += sizeof(mid0) - 1;
            }
        }
    }
    OUT_LIT(&o, "]");
    free(arena);
    mu_ext_args_release(&a);
    return out_done(&o, out_len);
}

/* ---- /bind ----------------------------------------------------------- */

static char *bind_field(const json_t *args, const char *key,
                        struct mu_ext_bind_req *r)
{
    const char *s = NULL;
    char msg[REASON_MAX];

    if (r->error)
        return NULL;
    if (has_nul(get_ci(args, key))) {
        set_msg(msg, "malformed ExtenderBindingArgs: %s: must not contain a "
                     "NUL character",
                key);
        r->error = mu_xstrdup(msg);
        r->bad = true;
        return NULL;
    }
    if (str_field(args, key, &s) || !s || !*s) {
        set_msg(msg,
                "malformed ExtenderBindingArgs: %s: missing or not a "
                "string",
                key);
        r->error = mu_xstrdup(msg);
        r->bad = true;
        return NULL;
    }
    return mu_xstrdup(s);
}

/* Refuses r with a message (cleaned and capped): nothing will be
 * written. */
static void refuse(struct mu_ext_bind_req *r, const char *fmt, ...)
    MU_PRINTF(2, 3);
static void refuse(struct mu_ext_bind_req *r, const char *fmt, ...)
{
    char msg[REASON_MAX];
    va_list ap;

    va_start(ap, fmt);
    vset_msg(msg, fmt, ap);
    va_end(ap);
    r->error = mu_xstrdup(msg);
}

/* Every member of vp's batch when all of them are in v, reserved, plain
 * and of that batch (r->gang, r->ngang); else nothing: the barrier then
 * waits for kube-scheduler to bring each of them. */
static void plain_gang(const struct mu_view *v, const struct mu_view_pod *vp,
                       struct mu_ext_bind_req *r)
{
    const struct mu_view_batch *bt = mu_view_batch(v, vp->release);
    struct mu_barrier_member *g;

    if (!vp->plain || !bt || bt->n != (size_t)vp->batch_size)
        return;
    for (size_t i = 0; i < bt->n; i++) {
        const struct mu_view_pod *p = mu_view_pod(v, bt->uids[i]);

        if (!p || !p->plain || !p->node || !p->ns || !p->name ||
            mu_strcmp0(p->release, vp->release))
            return;
    }
    g = mu_xcalloc(bt->n, sizeof(*g));
    for (size_t i = 0; i < bt->n; i++) {
        const struct mu_view_pod *p = mu_view_pod(v, bt->uids[i]);

        g[i].ns = mu_xstrdup(p->ns);
        g[i].name = mu_xstrdup(p->name);
        g[i].uid = mu_xstrdup(p->uid);
        g[i].node = mu_xstrdup(p->node);
        g[i].controlled = p->controlled;
    }
    r->gang = g;
    r->ngang = (int)bt->n;
}

void mu_ext_bind_prepare(const struct mu_view *v, const json_t *args,
                         struct mu_ext_bind_req *r)
{
    const struct mu_view_pod *vp;
    char *name, *ns; /* as the request says: only compared, never used */

    memset(r, 0, sizeof(*r));
    if (!json_is_object(args)) {
        r->error = mu_xstrdup("malformed ExtenderBindingArgs: not a JSON "
                              "object");
        r->bad = true;
        return;
    }
    name = bind_field(args, "PodName", r);
    ns = bind_field(args, "PodNamespace", r);
    r->uid = bind_field(args, "PodUID", r);
    r->node = bind_field(args, "Node", r);
    if (r->error)
        goto out;
    vp = mu_view_pod(v, r->uid);
    r->unknown = !vp && v && v->synced;
    if (!vp && (!v || !v->synced))
        refuse(r, "%s: not binding %s/%s", R_STARTING, ns, name);
    else if (!vp)
        refuse(r,
               "pod uid %s (%s/%s) is not in muster's view: muster binds "
               "only pods it has placed (kube-scheduler retries once "
               "muster knows the pod)",
               r->uid, ns, name);
    else if (!vp->ns || !vp->name || strcmp(vp->ns, ns) ||
             strcmp(vp->name, name))
        refuse(r, "pod uid %s is %s/%s in muster's view, not %s/%s: not "
                  "binding",
               r->uid, vp->ns ? vp->ns : "?", vp->name ? vp->name : "?", ns,
               name);
    else if (!vp->node) {
        char why[REASON_MAX];

        waiting_reason(why, vp);
        refuse(r, "muster holds no node for %s/%s (%s)", vp->ns, vp->name,
               why);
    } else if (strcmp(vp->node, r->node)) {
        refuse(r, "muster reserved %s for %s/%s, not %s", vp->node, vp->ns,
               vp->name, r->node);
    } else {
        /* the names the barrier binds, and may delete, are the view's */
        r->ns = mu_xstrdup(vp->ns);
        r->name = mu_xstrdup(vp->name);
        r->release = mu_xstrdup_or_null(vp->release);
        r->batch_size = vp->batch_size;
        r->controlled = vp->controlled;
        if (vp->release)
            plain_gang(v, vp, r);
    }
out:
    free(name);
    free(ns);
}

json_t *mu_ext_bind_finish(struct mu_barrier *b, struct mu_ext_bind_req *r)
{
    char msg[REASON_MAX] = "";
    struct mu_err err;

    if (r->error && r->unknown &&
        mu_barrier_bound_by_gang(b, r->uid, r->node))
        ; /* bound already, with its gang, on that node */
    else if (r->error)
        set_msg(msg, "%s", r->error);
    else if (r->gang ? mu_barrier_bind_gang(b, r->release, r->gang, r->ngang,
                                            r->uid, r->node, &err)
                     : mu_barrier_bind(b, r->release, r->batch_size, r->ns,
                                       r->name, r->uid, r->node,
                                       r->controlled, &err))
        set_msg(msg, "%s", err.msg);
    mu_barrier_members_free(r->gang, r->ngang);
    free(r->ns);
    free(r->name);
    free(r->uid);
    free(r->node);
    free(r->release);
    free(r->error);
    memset(r, 0, sizeof(*r));
    return json_pack("{s:s}", "Error", msg);
}

json_t *mu_ext_bind(struct mu_barrier *b, const struct mu_view *v,
                    const json_t *args)
{
    struct mu_ext_bind_req r;

    mu_ext_bind_prepare(v, args, &r);
    return mu_ext_bind_finish(b, &r);
}
