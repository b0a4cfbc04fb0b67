#include "kube/watch.h"

#include "api/json.h"
#include "kube/watchpb.h"

/* Verdicts of one line, one WATCH or one LIST (positive, so they pass
 * through mu_kube_stream untouched). */
enum {
    V_OK = 0,
    V_STOP = 1,       /* the stop flag is set */
    V_EOF,            /* the server ended the watch normally */
    V_RETRY,          /* transport or 429/5xx: backoff, watch from RV */
    V_RELIST,         /* 410: relist now */
    V_RELIST_BACKOFF, /* bad input or another error: backoff, relist */
    V_REFUSED,        /* a WATCH of the initial state got an HTTP 4xx */
};

struct mu_watch {
    struct mu_kube *k;
    char *path;
    char *label;
    char *field;
    char page[16];
    uint64_t rng;
    const atomic_bool *stop;
    struct mu_kube_opts kopts;
    char *rv;
    struct mu_linebuf lb;
    struct mu_framebuf fb;   /* a protobuf stream's frames */
    mu_watch_pb_fn *pb;      /* opts.protobuf */
    enum { UNKNOWN, LINES, FRAMES } framing; /* the current WATCH's */
    struct mu_watch_stats st;
    unsigned failures;       /* consecutive, for the backoff */
    long refused;            /* the HTTP status of a V_REFUSED */
    char refused_msg[sizeof(((struct mu_err *)0)->msg)]; /* what it said */
    unsigned long in_stream; /* events delivered by the current WATCH */
    bool stream_list;        /* the initial state comes by a WATCH */
    bool initial;            /* the current WATCH streams the state */
    bool began;              /* ... and LIST_BEGIN went out for it */
    unsigned long initial_n; /* ... and objects of it so far */
    mu_watch_fn *fn;
    void *ctx;
};

/* ---- line splitter ------------------------------------------------------ */

void mu_linebuf_init(struct mu_linebuf *lb, size_t max)
{
    lb->buf = NULL;
    lb->len = 0;
    lb->cap = 0;
    lb->max = max;
}

void mu_linebuf_release(struct mu_linebuf *lb)
{
    free(lb->buf);
    mu_linebuf_init(lb, lb->max);
}

void mu_linebuf_reset(struct mu_linebuf *lb)
{
    lb->len = 0;
}

static int emit(const char *line, size_t len,
                int (*on_line)(void *, const char *, size_t), void *ctx)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    return on_line(ctx, line, len);
}

int mu_linebuf_feed(struct mu_linebuf *lb, const char *p, size_t n,
                    int (*on_line)(void *ctx, const char *line, size_t len),
                    void *ctx)
{
    const char *end = p + n, *nl;
    size_t piece;
    int rc;

    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        piece = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (lb->len + piece > lb->max) {
            rc = -ENOBUFS;
            goto out_drop;
        }
        if (!nl) {
            mu_xgrow((void **)&lb->buf, &lb->cap, lb->len + piece, 1);
            memcpy(lb->buf + lb->len, p, piece);
            lb->len += piece;
            return 0;
        }
        if (lb->len == 0) {
            rc = emit(p, piece, on_line, ctx);
        } else {
            size_t total = lb->len + piece;

            mu_xgrow((void **)&lb->buf, &lb->cap, total, 1);
            memcpy(lb->buf + lb->len, p, piece);
            lb->len = 0;
            rc = emit(lb->buf, total, on_line, ctx);
        }
        if (rc)
            goto out_drop;
        p = nl + 1;
    }
    return 0;
out_drop:
    lb->len = 0;
    return rc;
}

/* ---- events ------------------------------------------------------------- */

static const char *const type_names[] = {
    [MU_WATCH_LIST_BEGIN] = "LIST_BEGIN", [MU_WATCH_LIST_ITEM] = "LIST_ITEM",
    [MU_WATCH_LIST_END] = "LIST_END",     [MU_WATCH_ADDED] = "ADDED",
    [MU_WATCH_MODIFIED] = "MODIFIED",     [MU_WATCH_DELETED] = "DELETED",
    [MU_WATCH_BOOKMARK] = "BOOKMARK",     [MU_WATCH_ERROR] = "ERROR",
};

const char *mu_watch_type_name(enum mu_watch_type t)
{
    if ((size_t)t >= MU_ARRAY_LEN(type_names))
        return "?";
    return type_names[t];
}

void mu_watch_event_release(struct mu_watch_event *ev)
{
    json_decref(ev->object);
    memset(ev, 0, sizeof(*ev));
}

/* An event of type (text) with obj (stolen) into *ev, as
 * mu_watch_event_parse says: JSON and protobuf streams alike. */
static int event_finish(const char *type, json_t *obj,
                        struct mu_watch_event *ev, struct mu_err *err)
{
    int t;

    for (t = MU_WATCH_ADDED; t <= MU_WATCH_ERROR; t++)
        if (strcmp(type, type_names[t]) == 0)
            break;
    if (t > MU_WATCH_ERROR) {
        mu_err_set(err, -EPROTO, "watch event: unknown type \"%.64s\"", type);
        json_decref(obj);
        return -EPROTO;
    }
    ev->type = (enum mu_watch_type)t;
    ev->object = obj;
    ev->rv = json_string_value(json_object_get(
        json_object_get(ev->object, "metadata"), "resourceVersion"));
    if (ev->type == MU_WATCH_ERROR)
        ev->code = (long)json_integer_value(json_object_get(obj, "code"));
    if (ev->type == MU_WATCH_BOOKMARK && (!ev->rv || !*ev->rv)) {
        mu_watch_event_release(ev);
        return mu_err_set(err, -EPROTO,
                          "watch event: BOOKMARK without "
                          "metadata.resourceVersion");
    }
    return 0;
}

int mu_watch_event_parse(const char *line, size_t len,
                         struct mu_watch_event *ev, struct mu_err *err)
{
    json_error_t jerr;
    json_t *root, *obj;
    const char *type;
    int rc;

    memset(ev, 0, sizeof(*ev));
    root = mu_json_loadb(line, len, &jerr);
    if (!root)
        return mu_err_set(err, -EPROTO, "watch event: %s at byte %d", jerr.text,
                          jerr.position);
    type = json_string_value(json_object_get(root, "type"));
    obj = json_object_get(root, "object");
    if (!type || !json_is_object(obj)) {
        json_decref(root);
        return mu_err_set(err, -EPROTO,
                          "watch event: needs a string \"type\" and an "
                          "object \"object\"");
    }
    rc = event_finish(type, json_incref(obj), ev, err);
    json_decref(root);
    return rc;
}

int mu_watch_event_parse_pb(const uint8_t *frame, size_t len,
                            mu_watch_pb_fn *fn, struct mu_watch_event *ev,
                            struct mu_err *err)
{
    char type[16];
    json_t *obj;

    memset(ev, 0, sizeof(*ev));
    if (mu_watchpb_parse(frame, len, fn, type, &obj, err) < 0)
        return -EPROTO;
    return event_finish(type, obj, ev, err);
}

/* ---- the loop ----------------------------------------------------------- */

static void wlog(struct mu_watch *w, const char *fmt, ...) MU_PRINTF(2, 3);

static void wlog(struct mu_watch *w, const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    if (!w->kopts.log)
        return;
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "watch %s: ", w->path);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    w->kopts.log(w->kopts.log_ctx, sb.buf);
    mu_sb_release(&sb);
}

static bool stopped(const struct mu_watch *w)
{
    return atomic_load(w->stop);
}

/* splitmix64 */
static uint64_t next_rand(struct mu_watch *w)
{
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void set_rv(struct mu_watch *w, const char *rv)
{
    if (!rv || !*rv)
        return;
    free(w->rv);
    w->rv = mu_xstrdup(rv);
}

/* Sleeps the backoff for the current failure count, in slices so that the
 * stop flag is seen within 100 ms. */
static void backoff(struct mu_watch *w)
{
    const struct mu_kube_clock *c = &w->kopts.clock;
    int64_t d = MU_WATCH_BACKOFF_MIN_NS, end;
    unsigned i;

    w->failures++;
    w->st.errors++;
    for (i = 1; i < w->failures && d < MU_WATCH_BACKOFF_MAX_NS; i++)
        d *= 2;
    d = MU_MIN(d, MU_WATCH_BACKOFF_MAX_NS);
    d = d / 2 + (int64_t)(next_rand(w) % (uint64_t)(d / 2 + 1));
    w->st.slept_ns += d;
    end = mu_kube_clock_now(c) + d;
    while (!stopped(w)) {
        int64_t left = end - mu_kube_clock_now(c);

        if (left <= 0)
            break;
        mu_kube_clock_sleep(c, MU_MIN(left, 100LL * 1000000LL));
    }
}

static void deliver(struct mu_watch *w, enum mu_watch_type t, json_t *obj)
{
    w->fn(w->ctx, t, obj);
}

/* The bookmark that ends a WATCH's initial state (sendInitialEvents). */
static bool initial_end(const json_t *obj)
{
    const json_t *ann = json_object_get(json_object_get(obj, "metadata"),
                                        "annotations");

    const char *v = json_string_value(json_object_get(ann, MU_WATCH_INITIAL_END));

    return v && strcmp(v, "true") == 0;
}

/* One event of the initial state a WATCH streams: each object is a
 * LIST_ITEM (after one LIST_BEGIN), the marked bookmark is LIST_END and the
 * RV to go on from. Nothing else sets the RV: the objects come in no order
 * of theirs, so a stream broken before its end is relisted, not resumed. */
static int initial_line(struct mu_watch *w, struct mu_watch_event *ev)
{
    const char *msg;
    long code;

    if (ev->type == MU_WATCH_ERROR) {
        code = ev->code;
        msg = json_string_value(json_object_get(ev->object, "message"));
        wlog(w, "ERROR event %ld: %s; relisting", code, msg ? msg : "");
        mu_watch_event_release(ev);
        return code == 410 ? V_RELIST : V_RELIST_BACKOFF;
    }
    if (ev->type != MU_WATCH_ADDED && ev->type != MU_WATCH_BOOKMARK) {
        wlog(w, "%s event inside the initial state; relisting",
             mu_watch_type_name(ev->type));
        mu_watch_event_release(ev);
        return V_RELIST_BACKOFF;
    }
    if (!w->began) {
        w->began = true;
        deliver(w, MU_WATCH_LIST_BEGIN, NULL);
    }
    if (ev->type == MU_WATCH_ADDED) {
        w->in_stream++;
        w->initial_n++;
        w->st.streamed++;
        deliver(w, MU_WATCH_LIST_ITEM, ev->object);
        ev->object = NULL;
    } else if (initial_end(ev->object)) {
        w->st.bookmarks++;
        w->st.lists++;
        w->in_stream++;
        w->initial = false;
        set_rv(w, ev->rv);
        wlog(w, "initial state streamed: %lu objects", w->initial_n);
        deliver(w, MU_WATCH_LIST_END, NULL);
    }
    mu_watch_event_release(ev);
    return stopped(w) ? V_STOP : V_OK;
}

static int on_event(struct mu_watch *w, struct mu_watch_event *evp);

static int on_line(void *arg, const char *line, size_t len)
{
    struct mu_watch *w = arg;
    struct mu_watch_event ev;
    struct mu_err err;
    size_t i;

    if (stopped(w))
        return V_STOP;
    for (i = 0; i < len && strchr(" \t\r", line[i]); i++)
        ;
    if (i == len)
        return V_OK;
    if (mu_watch_event_parse(line, len, &ev, &err) != 0) {
        wlog(w, "%s; relisting", err.msg);
        return V_RELIST_BACKOFF;
    }
    return on_event(w, &ev);
}

static int on_frame(void *arg, const uint8_t *frame, size_t len)
{
    struct mu_watch *w = arg;
    struct mu_watch_event ev;
    struct mu_err err;

    if (stopped(w))
        return V_STOP;
    if (mu_watch_event_parse_pb(frame, len, w->pb, &ev, &err) != 0) {
        wlog(w, "%s; relisting", err.msg);
        return V_RELIST_BACKOFF;
    }
    return on_event(w, &ev);
}

/* One parsed event of a WATCH (ev's object taken or released). */
static int on_event(struct mu_watch *w, struct mu_watch_event *evp)
{
    struct mu_watch_event ev = *evp;
    const char *msg;
    long code;

    if (w->initial)
        return initial_line(w, &ev);
    switch (ev.type) {
    case MU_WATCH_BOOKMARK:
        set_rv(w, ev.rv);
        w->st.bookmarks++;
        break;
    case MU_WATCH_ERROR:
        code = ev.code;
        msg = json_string_value(json_object_get(ev.object, "message"));
        wlog(w, "ERROR event %ld: %s; relisting", code, msg ? msg : "");
        mu_watch_event_release(&ev);
        return code == 410 ? V_RELIST : V_RELIST_BACKOFF;
    default:
        set_rv(w, ev.rv);
        w->st.events++;
        w->in_stream++;
        deliver(w, ev.type, ev.object);
        ev.object = NULL;
        break;
    }
    mu_watch_event_release(&ev);
    return stopped(w) ? V_STOP : V_OK;
}

static int on_data(void *arg, const char *p, size_t n)
{
    struct mu_watch *w = arg;
    int rc;

    if (!w->framing) /* the first bytes: what did the server send? */
        w->framing = w->pb && !strncmp(mu_kube_content_type(w->k),
                                       MU_WATCHPB_TYPE,
                                       strlen(MU_WATCHPB_TYPE))
                         ? FRAMES
                         : LINES;
    rc = w->framing == FRAMES
             ? mu_framebuf_feed(&w->fb, p, n, on_frame, w)
             : mu_linebuf_feed(&w->lb, p, n, on_line, w);
    if (rc == -ENOBUFS) {
        wlog(w, "event longer than %zu bytes; relisting", w->lb.max);
        return V_RELIST_BACKOFF;
    }
    return rc;
}

static int watch_once(struct mu_watch *w)
{
    char timeout[24];
    /* the initial state: every object as ADDED, then a bookmark marked
     * MU_WATCH_INITIAL_END, from the newest state (no resourceVersion) */
    struct mu_kube_param qi[] = {
        {"watch", "1"},
        {"sendInitialEvents", "true"},
        {"resourceVersionMatch", "NotOlderThan"},
        {"allowWatchBookmarks", "true"},
        {"timeoutSeconds", timeout},
        {"labelSelector", w->label},
        {"fieldSelector", w->field},
        {NULL, NULL},
    };
    struct mu_kube_param qw[] = {
        {"watch", "1"},
        {"allowWatchBookmarks", "true"},
        {"resourceVersion", w->rv},
        {"timeoutSeconds", timeout},
        {"labelSelector", w->label},
        {"fieldSelector", w->field},
        {NULL, NULL},
    };
    const struct mu_kube_param *q = w->initial ? qi : qw;
    long t = MU_WATCH_TIMEOUT_MIN_S +
             (long)(next_rand(w) %
                    (MU_WATCH_TIMEOUT_MAX_S - MU_WATCH_TIMEOUT_MIN_S + 1));
    int64_t start = mu_kube_clock_now(&w->kopts.clock);
    struct mu_err err = {{0}};
    long status = 0;
    int rc;

    snprintf(timeout, sizeof(timeout), "%ld", t);
    w->st.last_timeout_s = t;
    w->st.watches++;
    w->in_stream = 0;
    mu_linebuf_reset(&w->lb);
    mu_framebuf_reset(&w->fb);
    w->framing = UNKNOWN;
    rc = mu_kube_stream(w->k, w->path, q, w->pb ? MU_WATCHPB_ACCEPT : NULL,
                        (t + MU_WATCH_GRACE_S) * 1000L, on_data, w, &status,
                        NULL, &err);
    if (w->in_stream)
        w->failures = 0;
    if (stopped(w) || rc == -ECANCELED || rc == V_STOP)
        return V_STOP;
    if (rc > 0)
        return rc;
    if (rc < 0) {
        wlog(w, "%s; watching again from %s", err.msg, w->rv);
        return V_RETRY;
    }
    if (status == 410) {
        wlog(w, "%s; relisting", err.msg);
        return V_RELIST;
    }
    if (status == 429 || status >= 500) {
        wlog(w, "%s; watching again from %s", err.msg, w->rv);
        return V_RETRY;
    }
    if (w->initial && status >= 400 && status != 410 && status != 429) {
        w->refused = status;
        snprintf(w->refused_msg, sizeof(w->refused_msg), "%s", err.msg);
        w->st.refused++;
        return V_REFUSED;
    }
    if (status >= 300) {
        if (status < 400)
            mu_err_set(&err, 0, "unexpected HTTP %ld", status);
        wlog(w, "%s; relisting", err.msg);
        return V_RELIST_BACKOFF;
    }
    if (w->lb.len || w->fb.len) {
        wlog(w, "stream ended inside an event; watching again from %s", w->rv);
        return V_RETRY;
    }
    if (!w->in_stream &&
        mu_kube_clock_now(&w->kopts.clock) - start < MU_WATCH_SHORT_NS) {
        wlog(w, "server closed the watch at once; watching again from %s",
             w->rv);
        return V_RETRY;
    }
    return V_EOF;
}

/* Fills kind and apiVersion of a listed item from its List. */
static void fill_kind(json_t *item, const char *list_kind,
                      const char *api_version)
{
    size_t n = list_kind ? strlen(list_kind) : 0;

    if (!json_object_get(item, "kind") && n > 4 &&
        strcmp(list_kind + n - 4, "List") == 0)
        json_object_set_new(item, "kind", json_stringn(list_kind, n - 4));
    if (!json_object_get(item, "apiVersion") && api_version)
        json_object_set_new(item, "apiVersion", json_string(api_version));
}

/* Hands every item of one page to the callback, each detached from the
 * page so that the callee holds the only reference. */
static int deliver_page(struct mu_watch *w, json_t *page)
{
    json_t *items = json_object_get(page, "items");
    const char *kind = json_string_value(json_object_get(page, "kind"));
    const char *api = json_string_value(json_object_get(page, "apiVersion"));
    size_t i;

    for (i = 0; i < json_array_size(items); i++) {
        json_t *item = json_incref(json_array_get(items, i));

        json_array_set_new(items, i, json_null());
        if (!json_is_object(item)) {
            wlog(w, "list: items[%zu]: expected an object, got %s; skipped",
                 i, mu_json_kind(item));
            w->st.skipped++;
            json_decref(item);
            continue;
        }
        fill_kind(item, kind, api);
        deliver(w, MU_WATCH_LIST_ITEM, item);
        if (stopped(w))
            return V_STOP;
    }
    return V_OK;
}

static int list(struct mu_watch *w)
{
    struct mu_kube_param q[] = {
        {"limit", w->page},
        {"continue", NULL},
        {"labelSelector", w->label},
        {"fieldSelector", w->field},
        {NULL, NULL},
    };
    char *cont = NULL;
    struct mu_err err = {{0}};
    json_t *page = NULL;
    const json_t *meta;
    unsigned long pages_before = w->st.pages;
    long status;
    int rc = V_OK;

    for (;;) {
        if (stopped(w)) {
            rc = V_STOP;
            break;
        }
        q[1].value = cont;
        rc = mu_kube_request(w->k, "GET", w->path, q, NULL, NULL, &status,
                             &page, &err);
        if (rc == -ECANCELED) {
            rc = V_STOP;
            break;
        }
        if (rc == 0 && status >= 300 && status < 400)
            rc = mu_err_set(&err, -EIO, "GET %s: unexpected HTTP %ld", w->path,
                            status);
        else if (rc == 0 && status >= 400)
            rc = -EIO; /* err holds the Status message */
        else if (rc == 0 && !json_is_array(json_object_get(page, "items")))
            rc = mu_err_set(&err, -EPROTO, "GET %s: not a List", w->path);
        if (rc) {
            wlog(w, "list: %s", err.msg);
            rc = V_RELIST_BACKOFF;
            break;
        }
        if (w->st.pages++ == pages_before)
            deliver(w, MU_WATCH_LIST_BEGIN, NULL);
        rc = deliver_page(w, page);
        if (rc)
            break;
        meta = json_object_get(page, "metadata");
        set_rv(w, json_string_value(json_object_get(meta, "resourceVersion")));
        free(cont);
        cont = mu_xstrdup_or_null(
            json_string_value(json_object_get(meta, "continue")));
        json_decref(page);
        page = NULL;
        if (!cont || !*cont)
            break;
    }
    json_decref(page);
    free(cont);
    if (rc == V_OK) {
        w->st.lists++;
        deliver(w, MU_WATCH_LIST_END, NULL);
    }
    return rc;
}

int mu_watch_new(const struct mu_kube_config *cfg,
                 const struct mu_watch_opts *o, struct mu_watch **out,
                 struct mu_err *err)
{
    struct mu_watch *w;
    int rc;

    *out = NULL;
    if (!o->path || o->path[0] != '/' || !o->stop)
        return mu_err_set(err, -EINVAL,
                          "watch: needs a path starting with '/' and a "
                          "stop flag");
    w = mu_xcalloc(1, sizeof(*w));
    w->kopts = o->kube;
    rc = mu_kube_new(cfg, &w->kopts, &w->k, err);
    if (rc) {
        free(w);
        return rc;
    }
    mu_kube_set_stop(w->k, o->stop);
    w->path = mu_xstrdup(o->path);
    w->label = mu_xstrdup_or_null(o->label_selector);
    w->field = mu_xstrdup_or_null(o->field_selector);
    snprintf(w->page, sizeof(w->page), "%u",
             o->page_size ? o->page_size : MU_WATCH_PAGE_SIZE);
    w->rng = o->seed;
    w->stop = o->stop;
    w->stream_list = o->stream_list;
    w->rv = mu_xstrdup("");
    mu_linebuf_init(&w->lb, o->max_line && o->max_line < MU_WATCH_MAX_LINE
                                ? o->max_line
                                : MU_WATCH_MAX_LINE);
    mu_framebuf_init(&w->fb, w->lb.max);
    w->pb = o->protobuf;
    *out = w;
    return 0;
}

int mu_watch_run(struct mu_watch *w, mu_watch_fn *fn, void *ctx)
{
    bool need_list = true, list_now = false;
    int v;

    if (!fn)
        return -EINVAL;
    w->fn = fn;
    w->ctx = ctx;
    while (!stopped(w)) {
        if (need_list && (!w->stream_list || list_now)) {
            v = list(w);
            if (v == V_STOP)
                break;
            if (v) {
                backoff(w);
                continue;
            }
            need_list = list_now = false;
        } else if (need_list) {
            w->initial = true;
            w->began = false;
            w->initial_n = 0;
            need_list = false;
        }
        v = watch_once(w);
        if (w->initial) {
            /* the WATCH ended before its initial state did */
            w->initial = false;
            if (v == V_STOP)
                break;
            need_list = true;
            if (v == V_REFUSED) {
                /* this time a LIST; for good when the server refuses the
                 * parameters (a WatchList gate off, an older server) */
                list_now = true;
                if (w->refused == 400 || w->refused == 422) {
                    w->stream_list = false;
                    wlog(w, "%s: the server does not stream a watch's "
                            "initial state; listing in pages from now on",
                         w->refused_msg);
                }
                continue;
            }
            w->st.relists++;
            if (v == V_EOF && !w->began) {
                /* a server that ignores sendInitialEvents */
                w->stream_list = false;
                wlog(w, "the watch ended without the initial state: listing "
                        "in pages from now on");
                continue;
            }
            if (v != V_RELIST)
                backoff(w);
            continue;
        }
        switch (v) {
        case V_EOF:
            w->failures = 0;
            break;
        case V_RETRY:
            backoff(w);
            break;
        case V_RELIST:
            w->st.relists++;
            need_list = true;
            break;
        case V_RELIST_BACKOFF:
            w->st.relists++;
            need_list = true;
            backoff(w);
            break;
        default: /* V_STOP */
            break;
        }
    }
    mu_linebuf_reset(&w->lb);
    return 0;
}

const char *mu_watch_rv(const struct mu_watch *w)
{
    return w->rv;
}

void mu_watch_get_stats(const struct mu_watch *w, struct mu_watch_stats *st)
{
    *st = w->st;
}

void mu_watch_free(struct mu_watch *w)
{
    if (!w)
        return;
    mu_kube_free(w->k);
    mu_linebuf_release(&w->lb);
    mu_framebuf_release(&w->fb);
    free(w->path);
    free(w->label);
    free(w->field);
    free(w->rv);
    free(w);
}
