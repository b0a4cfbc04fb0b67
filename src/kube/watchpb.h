/*
 * watchpb.h - a watch stream in protobuf (Content-Type
 * application/vnd.kubernetes.protobuf;stream=watch), the pieces watch.c
 * reads it with: a bounded frame splitter and a WatchEvent parser.
 *
 * The stream is a series of frames, each a 4-byte big-endian length and
 * that many bytes of a meta/v1 WatchEvent {type = 1, object = 2
 * (RawExtension {raw = 1})}. The raw object is "k8s\0" and a
 * runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}:
 * the object's own message, of that kind. A Status (an ERROR event's
 * object) is read here; any other kind is made JSON by the caller's
 * function (mu_watch_pb_fn, e.g. api/podpb.h's for pods).
 *
 * Threads: none shared (a watch thread's own).
 */
#ifndef MU_KUBE_WATCHPB_H
#define MU_KUBE_WATCHPB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"

/* The Content-Type of such a stream, and what a WATCH asks for when it
 * can read it (JSON still accepted: a resource the apiserver serves only
 * as JSON, a CRD, comes as JSON). */
#define MU_WATCHPB_TYPE "application/vnd.kubernetes.protobuf"
#define MU_WATCHPB_ACCEPT \
    "application/vnd.kubernetes.protobuf;stream=watch, application/json"

/* The object message raw[0..len) of kind as JSON (owned), or NULL with err
 * set. */
typedef json_t *mu_watch_pb_fn(const char *kind, const uint8_t *raw,
                               size_t len, struct mu_err *err);

/*
 * Splits a byte stream fed in arbitrary pieces into frames. Only a frame
 * that spans pieces is copied; a frame longer than max bytes is an error,
 * so buf never holds more than max + 4 bytes.
 */
struct mu_framebuf {
    uint8_t *buf; /* the partial frame carried to the next feed */
    size_t len;
    size_t cap;
    size_t max; /* longest frame accepted */
};

void mu_framebuf_init(struct mu_framebuf *fb, size_t max);
void mu_framebuf_release(struct mu_framebuf *fb);
/* Drops the partial frame (after a broken connection). */
void mu_framebuf_reset(struct mu_framebuf *fb);
/*
 * Feeds p[0..n). Calls on_frame(ctx, frame, len) for each frame completed
 * by these bytes, in order (frame valid during the call only). Returns 0;
 * or on_frame's non-zero return (the rest is dropped); or -ENOBUFS for a
 * frame longer than max (the partial frame dropped). fb stays usable.
 */
int mu_framebuf_feed(struct mu_framebuf *fb, const char *p, size_t n,
                     int (*on_frame)(void *ctx, const uint8_t *frame,
                                     size_t len),
                     void *ctx) MU_WARN_UNUSED;

/*
 * Parses one frame: *type gets the event's type ("ADDED", ... at most 15
 * bytes), *obj the object as JSON (owned): a Status as {"kind": "Status",
 * "apiVersion": "v1", "status", "message", "reason", "code"}, any other
 * kind by fn. 0, or -EPROTO with err naming what is wrong (*obj NULL).
 */
int mu_watchpb_parse(const uint8_t *frame, size_t len, mu_watch_pb_fn *fn,
                     char type[16], json_t **obj,
                     struct mu_err *err) MU_WARN_UNUSED;

/* An apiserver's protobuf body ("k8s\0" and a runtime.Unknown) holding a
 * Status, as the JSON Status above (owned); NULL when it is not one. An
 * error answered to a request that accepts protobuf comes so. */
json_t *mu_watchpb_status(const uint8_t *body, size_t len);

#endif
