/* The protocol buffers wire format, read (pb.h). */
#include "common/pb.h"

#include <errno.h>

void mu_pb_init(struct mu_pb *r, const void *buf, size_t len)
{
    r->p = len ? buf : (const uint8_t *)""; /* no arithmetic on NULL */
    r->end = r->p + len;
}

void mu_pb_sub(struct mu_pb *r, const struct mu_pb_field *f)
{
    mu_pb_init(r, f->data, f->len);
}

/* A varint at r->p: 0, or -EPROTO when it runs past the end or past 10
 * bytes. */
static int varint(struct mu_pb *r, uint64_t *out)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b;

        if (r->p >= r->end)
            return -EPROTO;
        b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -EPROTO;
}

static uint64_t little(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int mu_pb_next(struct mu_pb *r, struct mu_pb_field *f)
{
    uint64_t key, len;

    if (r->p >= r->end)
        return 0;
    if (varint(r, &key) < 0 || key >> 3 == 0 || key >> 3 > UINT32_MAX)
        goto bad;
    f->num = (uint32_t)(key >> 3);
    f->wire = (enum mu_pb_wire)(key & 7);
    f->v = 0;
    f->data = NULL;
    f->len = 0;
    switch (key & 7) {
    case MU_PB_VARINT:
        if (varint(r, &f->v) < 0)
            goto bad;
        return 1;
    case MU_PB_I64:
    case MU_PB_I32: {
        int n = (key & 7) == MU_PB_I64 ? 8 : 4;

        if (r->end - r->p < n)
            goto bad;
        f->v = little(r->p, n);
        r->p += n;
        return 1;
    }
    case MU_PB_LEN:
        if (varint(r, &len) < 0 || len > (uint64_t)(r->end - r->p))
            goto bad;
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    default: /* groups (3, 4) and wire types 6, 7 */
        goto bad;
    }
bad:
    r->p = r->end;
    return -EPROTO;
}
