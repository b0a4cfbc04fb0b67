#include "common/mu.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "muster: out of memory allocating %zu bytes\n", n);
    abort();
}

void *mu_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        oom(n);
    return p;
}

void *mu_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p)
        oom(n * size);
    return p;
}

void *mu_xcalloc_lines(size_t n, size_t size)
{
    size_t bytes;
    void *p;

    if (!n || !size)
        n = size = 1;
    if (n > SIZE_MAX / size - 64)
        oom(SIZE_MAX);
    bytes = (n * size + 63) & ~(size_t)63; /* aligned_alloc's multiple */
    p = aligned_alloc(64, bytes);
    if (!p)
        oom(bytes);
    memset(p, 0, bytes);
    return p;
}

void *mu_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q)
        oom(n);
    return q;
}

void mu_xgrow(void **p, size_t *cap, size_t need, size_t sz)
{
    size_t c = *cap;

    if (need <= c)
        return;
    if (c < 8)
        c = 8;
    while (c < need)
        c *= 2;
    *p = mu_xrealloc(*p, c * sz);
    *cap = c;
}

void mu_xgrow_inline(void **p, size_t *cap, size_t need, size_t sz,
                     void *one)
{
    void *heap;

    if (!*cap) {
        *p = one;
        *cap = 1;
    }
    if (need <= *cap)
        return;
    if (*p != one) {
        mu_xgrow(p, cap, need, sz);
        return;
    }
    heap = NULL;
    *cap = 0;
    mu_xgrow(&heap, cap, need, sz);
    memcpy(heap, one, sz);
    *p = heap;
}

char *mu_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = mu_xmalloc(n);

    memcpy(d, s, n);
    return d;
}

char *mu_xstrdup_or_null(const char *s)
{
    return s ? mu_xstrdup(s) : NULL;
}

char *mu_xasprintf(const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    return mu_sb_detach(&sb);
}

int mu_strcmp0(const char *a, const char *b)
{
    if (!a || !b)
        return a ? 1 : (b ? -1 : 0);
    return strcmp(a, b);
}

int mu_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int mu_err_set(struct mu_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!err)
        return code;
    va_start(ap, fmt);
    n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(err->msg))
        memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
    return code;
}

void mu_err_prefix(struct mu_err *err, const char *fmt, ...)
{
    char pre[MU_ERR_MAX];
    char old[MU_ERR_MAX];
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof(pre), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    mu_err_set(err, 0, "%s: %s", pre, old);
}

void mu_sb_init(struct mu_sb *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void mu_sb_release(struct mu_sb *sb)
{
    free(sb->buf);
    mu_sb_init(sb);
}

void mu_sb_addn(struct mu_sb *sb, const char *s, size_t n)
{
    mu_xgrow((void **)&sb->buf, &sb->cap, sb->len + n + 1, 1);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void mu_sb_add(struct mu_sb *sb, const char *s)
{
    mu_sb_addn(sb, s, strlen(s));
}

void mu_sb_vaddf(struct mu_sb *sb, const char *fmt, va_list ap)
{
    char tmp[MU_SB_ROOM];
    va_list cp;
    int n;

    /* one pass for a text shorter than MU_SB_ROOM (most), which is then
     * appended, so the buffer grows as it always did; a longer one is
     * measured and printed again */
    va_copy(cp, ap);
    n = vsnprintf(tmp, sizeof(tmp), fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(tmp)) {
        mu_sb_addn(sb, tmp, (size_t)n);
        return;
    }
    mu_xgrow((void **)&sb->buf, &sb->cap, sb->len + (size_t)n + 1, 1);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void mu_sb_addf(struct mu_sb *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mu_sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

size_t mu_i64_text(int64_t v, char buf[MU_I64_TEXT])
{
    char rev[MU_I64_TEXT];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, len = 0;

    do {
        rev[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = rev[--n];
    buf[len] = '\0';
    return len;
}

void mu_sb_addi(struct mu_sb *sb, int64_t v)
{
    char t[MU_I64_TEXT];

    mu_sb_addn(sb, t, mu_i64_text(v, t));
}

char *mu_sb_detach(struct mu_sb *sb)
{
    char *s = sb->buf ? sb->buf : mu_xstrdup("");

    mu_sb_init(sb);
    return s;
}
