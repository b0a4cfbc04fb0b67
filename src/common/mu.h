/*
 * mu.h - the few things every muster file needs.
 *
 * Memory: mu_xmalloc() and friends never return NULL. Running out of memory
 * in a scheduler leaves nothing sane to do, so they print one line naming the
 * size and abort (git's xmalloc policy). Everything else reports failure as
 * 0 or a negative errno, with human detail in a struct mu_err when the caller
 * passes one.
 *
 * Errors: struct mu_err carries one message naming the file, object and field
 * at fault ("examples/x.yaml: Pod default/a: spec.containers[0].resources.
 * limits.nvidia.com/gpu: must be an integer"). Functions that take one write it
 * only when they fail; a NULL pointer means the caller does not want detail.
 */
#ifndef MU_COMMON_MU_H
#define MU_COMMON_MU_H

/* System headers that banned.h would otherwise break come first. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MU_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define MU_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define MU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MU_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define MU_PRINTF(f, a)
#define MU_WARN_UNUSED
#endif

/* Longest message a struct mu_err holds; longer ones are cut with "...". */
#define MU_ERR_MAX 1024

struct mu_err {
    char msg[MU_ERR_MAX];
};

/* Writes a formatted message into err (if err is not NULL). Returns code, so
 * callers can write `return mu_err_set(err, -EINVAL, "...")`. */
int mu_err_set(struct mu_err *err, int code, const char *fmt, ...)
    MU_PRINTF(3, 4);
/* Prepends "prefix: " to the message already in err. */
void mu_err_prefix(struct mu_err *err, const char *fmt, ...) MU_PRINTF(2, 3);

void *mu_xmalloc(size_t n);
void *mu_xcalloc(size_t n, size_t size);
void *mu_xrealloc(void *p, size_t n);
/* mu_xcalloc of n elements on one cache line each when size is 64 (the
 * block starts on a 64-byte boundary); free() frees it. */
void *mu_xcalloc_lines(size_t n, size_t size);
/* Grows *p (an array of *cap elements of size sz) so that it holds at least
 * need elements; doubles the capacity. */
void mu_xgrow(void **p, size_t *cap, size_t need, size_t sz);
/* mu_xgrow for an array whose first element lives in its owner (one, an
 * element of size sz): an empty array (*cap 0) becomes one; past one it
 * moves to the heap, one copied in. Free *p only when it is not one. */
void mu_xgrow_inline(void **p, size_t *cap, size_t need, size_t sz,
                     void *one);
char *mu_xstrdup(const char *s);
/* strdup of s, or NULL when s is NULL. */
char *mu_xstrdup_or_null(const char *s);
char *mu_xasprintf(const char *fmt, ...) MU_PRINTF(1, 2);

/* Compares possibly NULL strings; NULL sorts first. */
int mu_strcmp0(const char *a, const char *b);
/* True when s starts with prefix. */
int mu_starts_with(const char *s, const char *prefix);

/* A growable string. buf is always NUL-terminated once anything is added;
 * len excludes the NUL. Owner frees buf with free() or mu_sb_release(). */
struct mu_sb {
    char *buf;
    size_t len;
    size_t cap;
};
void mu_sb_init(struct mu_sb *sb);
void mu_sb_release(struct mu_sb *sb);
void mu_sb_add(struct mu_sb *sb, const char *s);
void mu_sb_addn(struct mu_sb *sb, const char *s, size_t n);
/* mu_sb_addf and mu_xasprintf format a text shorter than this in one
 * pass, on the stack (the why texts of a cycle: thousands); a longer one
 * is measured first. Buffers grow as the text needs, doubling from 8. */
#define MU_SB_ROOM 128
void mu_sb_addf(struct mu_sb *sb, const char *fmt, ...) MU_PRINTF(2, 3);
void mu_sb_vaddf(struct mu_sb *sb, const char *fmt, va_list ap)
    MU_PRINTF(2, 0);
/* Returns the string and leaves sb empty; the caller frees it. Never NULL. */
char *mu_sb_detach(struct mu_sb *sb);

/* v in decimal, as "%lld" writes it, into buf (MU_I64_TEXT bytes hold
 * any v with its sign and the NUL); returns the length. For the texts a
 * cycle writes by the thousand, without a printf's cost. */
#define MU_I64_TEXT 21
size_t mu_i64_text(int64_t v, char buf[MU_I64_TEXT]);
/* mu_sb_add of v in decimal. */
void mu_sb_addi(struct mu_sb *sb, int64_t v);

#include "common/banned.h"

#endif
