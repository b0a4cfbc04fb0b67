/*
 * pb.h - a reader of the protocol buffers wire format (proto2 as the
 * Kubernetes API writes it: varints, 64- and 32-bit words, length-delimited
 * fields; no groups), for the objects muster reads as protobuf
 * (api/podpb.h, kube/watchpb.h).
 *
 * A reader walks one message, field by field, over a buffer it borrows; a
 * length-delimited field is handed out as a pointer into that buffer, and
 * an embedded message is read with a reader of its own over it. Nothing is
 * allocated. Every length and varint is checked against the buffer: input
 * that ends inside a field, a varint longer than 10 bytes, a group or an
 * unknown wire type is -EPROTO, never a read past the end.
 *
 * Threads: none shared; a reader is used by one thread at a time.
 */
#ifndef MU_COMMON_PB_H
#define MU_COMMON_PB_H

#include <stddef.h>
#include <stdint.h>

enum mu_pb_wire {
    MU_PB_VARINT = 0,
    MU_PB_I64 = 1,
    MU_PB_LEN = 2,
    MU_PB_I32 = 5,
};

struct mu_pb {
    const uint8_t *p, *end;
};

struct mu_pb_field {
    uint32_t num;          /* the field number */
    enum mu_pb_wire wire;
    uint64_t v;            /* VARINT, I64, I32: the value */
    const uint8_t *data;   /* LEN: the bytes (borrowed from the buffer) */
    size_t len;
};

/* A reader over buf[0..len). */
void mu_pb_init(struct mu_pb *r, const void *buf, size_t len);
/* A reader over the bytes of LEN field f (an embedded message). */
void mu_pb_sub(struct mu_pb *r, const struct mu_pb_field *f);
/* The next field into *f: 1, or 0 at the end of the message, or -EPROTO
 * (malformed: see above); after -EPROTO the reader is at its end. */
int mu_pb_next(struct mu_pb *r, struct mu_pb_field *f);

#endif
