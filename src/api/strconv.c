/*
 * strconv.c - Go's strconv readings of integers and booleans (strconv.h).
 */
#include "api/strconv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/mu.h"

int mu_strconv_int(const char *s, long long min, long long max,
                   long long *out)
{
    char *end;
    long long v;

    if (!*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return -EINVAL;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

int mu_strconv_bool(const char *s, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};

    for (size_t i = 0; i < MU_ARRAY_LEN(t); i++) {
        if (strcmp(s, t[i]) == 0 || strcmp(s, f[i]) == 0) {
            *out = strcmp(s, t[i]) == 0;
            return 0;
        }
    }
    return -EINVAL;
}
