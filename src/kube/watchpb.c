/* A watch stream in protobuf: frames and WatchEvents (watchpb.h). */
#include "kube/watchpb.h"

#include "api/pbjson.h"
#include "common/pb.h"

void mu_framebuf_init(struct mu_framebuf *fb, size_t max)
{
    memset(fb, 0, sizeof(*fb));
    fb->max = max;
}

void mu_framebuf_release(struct mu_framebuf *fb)
{
    free(fb->buf);
    memset(fb, 0, sizeof(*fb));
}

void mu_framebuf_reset(struct mu_framebuf *fb)
{
    fb->len = 0;
}

static size_t frame_len(const uint8_t *p)
{
    return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
}

static void keep(struct mu_framebuf *fb, const uint8_t *p, size_t n)
{
    if (fb->len + n > fb->cap) {
        fb->cap = MU_MAX(fb->len + n, fb->cap * 2);
        fb->buf = mu_xrealloc(fb->buf, fb->cap);
    }
    memcpy(fb->buf + fb->len, p, n);
    fb->len += n;
}

int mu_framebuf_feed(struct mu_framebuf *fb, const char *p, size_t n,
                     int (*on_frame)(void *ctx, const uint8_t *frame,
                                     size_t len),
                     void *ctx)
{
    const uint8_t *in = (const uint8_t *)p, *end = in + n;
    int rc;

    /* a frame begun in an earlier piece: complete it first */
    while (fb->len && in < end) {
        size_t want = fb->len < 4 ? 4 - fb->len : 4 + frame_len(fb->buf) - fb->len;
        size_t take = MU_MIN(want, (size_t)(end - in));

        if (fb->len >= 4 && frame_len(fb->buf) > fb->max)
            goto too_long;
        keep(fb, in, take);
        in += take;
        if (fb->len >= 4 && frame_len(fb->buf) > fb->max)
            goto too_long;
        if (fb->len >= 4 && fb->len == 4 + frame_len(fb->buf)) {
            fb->len = 0;
            rc = on_frame(ctx, fb->buf + 4, frame_len(fb->buf));
            if (rc)
                return rc;
        }
    }
    /* whole frames in this piece: no copy */
    while (end - in >= 4) {
        size_t len = frame_len(in);

        if (len > fb->max)
            goto too_long;
        if ((size_t)(end - in) - 4 < len)
            break;
        rc = on_frame(ctx, in + 4, len);
        if (rc)
            return rc;
        in += 4 + len;
    }
    if (in < end)
        keep(fb, in, (size_t)(end - in));
    return 0;
too_long:
    fb->len = 0;
    return -ENOBUFS;
}

/* meta/v1 Status, as its JSON. */
static const struct mu_pbj_field status_f[] = {
    {2, "status", MU_PBJ_STR, NULL},
    {3, "message", MU_PBJ_STR, NULL},
    {4, "reason", MU_PBJ_STR, NULL},
    {6, "code", MU_PBJ_I32, NULL},
};
static const struct mu_pbj_msg status_m = {"Status", status_f,
                                           MU_ARRAY_LEN(status_f)};

/* The LEN field num of message buf[0..len): 1, 0 (absent) or -EPROTO. */
static int find(const uint8_t *buf, size_t len, uint32_t num,
                struct mu_pb_field *out)
{
    struct mu_pb r;
    struct mu_pb_field f;
    int rc, found = 0;

    mu_pb_init(&r, buf, len);
    while ((rc = mu_pb_next(&r, &f)) > 0)
        if (f.num == num) {
            if (f.wire != MU_PB_LEN)
                return -EPROTO;
            *out = f;
            found = 1;
        }
    return rc < 0 ? rc : found;
}

/* "k8s\0" and a runtime.Unknown in raw[0..len): its kind (NUL-ended) and
 * its message (*msg; empty when absent). 0 or -EPROTO. */
static int unknown(const uint8_t *raw, size_t len, char kname[64],
                   struct mu_pb_field *msg)
{
    static const uint8_t magic[4] = {'k', '8', 's', 0};
    struct mu_pb_field tm = {0}, kind = {0};
    int has_msg;

    if (len < 4 || memcmp(raw, magic, 4) ||
        find(raw + 4, len - 4, 1, &tm) != 1 ||
        find(tm.data, tm.len, 2, &kind) != 1 || kind.len >= 64 ||
        (has_msg = find(raw + 4, len - 4, 2, msg)) < 0)
        return -EPROTO;
    if (!has_msg) { /* an empty message */
        msg->data = (const uint8_t *)"";
        msg->len = 0;
    }
    memcpy(kname, kind.data, kind.len);
    kname[kind.len] = '\0';
    return 0;
}

static json_t *status_json(const struct mu_pb_field *msg, struct mu_err *err)
{
    json_t *j = json_pack("{s:s, s:s}", "kind", "Status", "apiVersion", "v1");

    if (mu_pbj_read(&status_m, msg->data, msg->len, j, err) < 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

json_t *mu_watchpb_status(const uint8_t *body, size_t len)
{
    struct mu_pb_field msg = {0};
    struct mu_err err;
    char kname[64];

    if (unknown(body, len, kname, &msg) < 0 || strcmp(kname, "Status"))
        return NULL;
    return status_json(&msg, &err);
}

int mu_watchpb_parse(const uint8_t *frame, size_t len, mu_watch_pb_fn *fn,
                     char type[16], json_t **obj, struct mu_err *err)
{
    struct mu_pb_field t = {0}, o = {0}, raw = {0}, msg = {0};
    char kname[64];

    *obj = NULL;
    type[0] = '\0';
    if (find(frame, len, 1, &t) != 1 || t.len > 15 ||
        find(frame, len, 2, &o) != 1 || find(o.data, o.len, 1, &raw) != 1)
        return mu_err_set(err, -EPROTO, "watch event (protobuf): needs a "
                                        "type and an object");
    memcpy(type, t.data, t.len);
    type[t.len] = '\0';
    if (unknown(raw.data, raw.len, kname, &msg) < 0)
        return mu_err_set(err, -EPROTO, "watch event (protobuf): its object "
                                        "is not a runtime.Unknown with a "
                                        "kind");
    if (!strcmp(kname, "Status")) {
        *obj = status_json(&msg, err);
        return *obj ? 0 : -EPROTO;
    }
    if (!fn)
        return mu_err_set(err, -EPROTO, "watch event (protobuf): a %s, which "
                                        "this watch cannot read", kname);
    *obj = fn(kname, msg.data, msg.len, err);
    return *obj ? 0 : -EPROTO;
}
