/*
 * strconv.h - the strict readings of Go's strconv that the API's string
 * fields and annotations get: integers (strconv.ParseInt, base 10) and
 * booleans (strconv.ParseBool).
 *
 * Pure, no I/O, thread-safe. 0 or -EINVAL; *out is written on success
 * only.
 */
#ifndef MU_API_STRCONV_H
#define MU_API_STRCONV_H

#include <stdbool.h>

/* A decimal integer with an optional sign, nothing around it, in
 * [min, max]. */
int mu_strconv_int(const char *s, long long min, long long max,
                   long long *out);

/* "1", "t", "T", "TRUE", "true", "True" and the same for false. */
int mu_strconv_bool(const char *s, bool *out);

#endif
