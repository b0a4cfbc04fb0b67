/*
 * fuzz_watch - the watch stream's line splitter and event parser must not
 * crash or leak on any input, and the splitter must give the same lines
 * however the stream is cut.
 *
 * The first input byte picks the piece size (1..32) the rest is fed in; the
 * rest is the stream. Every line is parsed as a watch event. The same bytes
 * fed in one piece must give the same sequence of lines (compared through a
 * running hash) and the same error.
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "kube/watch.h"

/* Small, so that the oversize path is reached. */
#define FUZZ_MAX_LINE 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct acc {
    uint64_t hash;
    size_t lines;
};

static int on_line(void *ctx, const char *line, size_t len)
{
    struct acc *a = ctx;
    struct mu_watch_event ev;
    struct mu_err err;
    size_t i;

    if (len > FUZZ_MAX_LINE || memchr(line, '\n', len))
        abort();
    a->hash = (a->hash ^ len) * 1099511628211ULL;
    for (i = 0; i < len; i++)
        a->hash = (a->hash ^ (unsigned char)line[i]) * 1099511628211ULL;
    a->lines++;
    if (mu_watch_event_parse(line, len, &ev, &err) != 0) {
        if (ev.object || !mu_starts_with(err.msg, "watch event: "))
            abort();
        return 0;
    }
    if (!ev.object || ev.object->refcount != 1 || ev.type < MU_WATCH_ADDED ||
        ev.type > MU_WATCH_ERROR)
        abort();
    if (ev.type == MU_WATCH_BOOKMARK && (!ev.rv || !*ev.rv))
        abort();
    mu_watch_event_release(&ev);
    return 0;
}

/* Feeds data in pieces of step bytes; returns the first error or 0. */
static int feed(const uint8_t *data, size_t size, size_t step, struct acc *a)
{
    struct mu_linebuf lb;
    size_t off, n;
    int rc = 0;

    mu_linebuf_init(&lb, FUZZ_MAX_LINE);
    for (off = 0; off < size && !rc; off += n) {
        n = MU_MIN(step, size - off);
        rc = mu_linebuf_feed(&lb, (const char *)data + off, n, on_line, a);
        if (lb.len > FUZZ_MAX_LINE)
            abort();
    }
    mu_linebuf_release(&lb);
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
    if (a != b || pieces.lines != whole.lines || pieces.hash != whole.hash)
        abort();
    return 0;
}
