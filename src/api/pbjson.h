/*
 * pbjson.h - a protobuf message made into JSON by a schema: a table per
 * message type naming the fields to keep, their JSON key and kind. What
 * the Kubernetes API sends as protobuf (api/podpb.h, kube/watchpb.h)
 * becomes the JSON its JSON form would have, for those fields, so that
 * one decoder reads both.
 *
 * JSON's omitempty is kept: an empty string, map or list is left out
 * (a list or map appears with its first element). A field not in the
 * table is skipped. Fields repeated in the message (a message field sent
 * twice) are read as protobuf merges them: the later scalar wins, and a
 * message is merged into the object the earlier one made.
 *
 * What Go's encoding/json would write is written: a byte of a string that
 * is not UTF-8 becomes U+FFFD; a time outside years 0-9999 (which Go's
 * JSON cannot write) is left out. So one pod written through a protobuf
 * client with such a value reads here as it would as JSON, instead of
 * failing the watch it comes in.
 *
 * Errors: -EPROTO with err naming the message type and field (malformed
 * wire format, a field of the wrong wire type).
 */
#ifndef MU_API_PBJSON_H
#define MU_API_PBJSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"
#include "common/pb.h"

enum mu_pbj_kind {
    MU_PBJ_STR,     /* string; "" left out */
    MU_PBJ_STRS,    /* repeated string: a list (empty strings kept) */
    MU_PBJ_I32,     /* int32 (varint, sign as int32) */
    MU_PBJ_I64,     /* int64 */
    MU_PBJ_BOOL,
    MU_PBJ_TIME,    /* meta/v1 Time {seconds, nanos}: RFC 3339 UTC to
                       the second; the zero time left out */
    MU_PBJ_MAP_STR, /* map<string, string>: an object */
    MU_PBJ_MAP_QTY, /* map<string, Quantity>: an object of strings */
    MU_PBJ_MSG,     /* a message: an object by sub */
    MU_PBJ_MSGS,    /* repeated message: a list of objects by sub */
    MU_PBJ_SET,     /* a message whose presence only is read: {} */
    MU_PBJ_SETS,    /* repeated such: a list of {} */
    MU_PBJ_INLINE,  /* a message whose fields JSON inlines into this
                       object (Volume.volumeSource), by sub */
};

struct mu_pbj_msg;

struct mu_pbj_field {
    uint32_t num;
    const char *key;
    enum mu_pbj_kind kind;
    const struct mu_pbj_msg *sub; /* MSG, MSGS, INLINE */
};

struct mu_pbj_msg {
    const char *name; /* for errors: "Pod", "PodSpec" */
    const struct mu_pbj_field *fields;
    size_t n;
};

/* Adds the fields of message buf[0..len) of type m to object out. 0 or
 * -EPROTO (err set; out may hold part of the message). */
int mu_pbj_read(const struct mu_pbj_msg *m, const uint8_t *buf, size_t len,
                json_t *out, struct mu_err *err);

#endif
