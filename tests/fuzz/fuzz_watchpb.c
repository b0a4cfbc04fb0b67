/*
 * fuzz_watchpb - a protobuf watch stream's frame splitter and event parser
 * (kube/watchpb.h, watch.h's mu_watch_event_parse_pb) and the Pod reader
 * behind them (api/podpb.h) must not crash, leak or read out of bounds on
 * any input, and the splitter must give the same frames however the stream
 * is cut.
 *
 * The first input byte picks the piece size (1..32) the rest is fed in;
 * the rest is the stream (4-byte big-endian lengths and WatchEvents; the
 * seeds are real pods, tests/fuzz/corpus/watchpb). Every frame is parsed.
 * The same bytes fed whole must give the same frames (a running hash) and
 * the same error.
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include "api/podpb.h"
#include "kube/watch.h"

#define FUZZ_MAX_FRAME 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct acc {
    uint64_t hash;
    size_t frames;
};

static int on_frame(void *ctx, const uint8_t *f, size_t len)
{
    struct acc *a = ctx;
    struct mu_watch_event ev;
    struct mu_err err;

    if (len > FUZZ_MAX_FRAME)
        abort();
    a->hash = (a->hash ^ len) * 1099511628211ULL;
    for (size_t i = 0; i < len; i++)
        a->hash = (a->hash ^ f[i]) * 1099511628211ULL;
    a->frames++;
    if (mu_watch_event_parse_pb(f, len, mu_podpb_object, &ev, &err) != 0) {
        if (ev.object || !err.msg[0])
            abort();
        return 0;
    }
    if (!ev.object || ev.object->refcount != 1 || ev.type < MU_WATCH_ADDED ||
        ev.type > MU_WATCH_ERROR)
        abort();
    mu_watch_event_release(&ev);
    return 0;
}

static int feed(const uint8_t *data, size_t size, size_t step, struct acc *a)
{
    struct mu_framebuf fb;
    size_t off, n;
    int rc = 0;

    mu_framebuf_init(&fb, FUZZ_MAX_FRAME);
    for (off = 0; off < size && !rc; off += n) {
        n = MU_MIN(step, size - off);
        rc = mu_framebuf_feed(&fb, (const char *)data + off, n, on_frame, a);
        if (fb.len > FUZZ_MAX_FRAME + 4)
            abort();
    }
    mu_framebuf_release(&fb);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct acc pieces = {14695981039346656037ULL, 0};
    struct acc whole = {14695981039346656037ULL, 0};
    size_t step;
    int a, b;

    if (size == 0)
        return 0;
    step = (size_t)(data[0] % 32) + 1;
    a = feed(data + 1, size - 1, step, &pieces);
    b = feed(data + 1, size - 1, size, &whole);
    if (a != b || pieces.frames != whole.frames || pieces.hash != whole.hash)
        abort();
    return 0;
}
