/*
 * times.c - durations and instants as Kubernetes writes them (times.h).
 */
#include "api/times.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <string.h>

#include "api/strconv.h"

static bool digits(const char *s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* RFC 3339 as Go's time.RFC3339 reads it; fractions are dropped. */
bool mu_rfc3339_parse(const char *s, int64_t *out)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30,
                                31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, sec, oh = 0, om = 0, dim;
    int64_t off = 0;

    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' ||
        !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
        s[10] != 'T' || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
        return false;
    s += 19;
    if (*s == '.') {
        if (s[1] < '0' || s[1] > '9')
            return false;
        for (s++; *s >= '0' && *s <= '9'; s++)
            ;
    }
    if (*s == 'Z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om) ||
            oh > 23 || om > 59)
            return false;
        off = (oh * 3600 + om * 60) * (*s == '-' ? -1 : 1);
        s += 6;
    } else {
        return false;
    }
    if (*s || mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59)
        return false;
    dim = mdays[mo - 1];
    if (mo == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
        dim = 29;
    if (d < 1 || d > dim)
        return false;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
           off;
    return true;
}

int mu_duration_parse(const char *s, int64_t *ms, struct mu_err *err)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
        {"ms", 1000000},
        {"s", UINT64_C(1000000000)},
        {"m", UINT64_C(60000000000)},
        {"h", UINT64_C(3600000000000)},
    };
    const uint64_t lim = UINT64_C(1) << 63;
    const char *p = s;
    uint64_t d = 0;
    bool neg = false;
    size_t n;

    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    n = strspn(p, "0123456789");
    if (n > 0 && !p[n]) {
        long long sec;

        /* A bare integer is a number of seconds. */
        if (mu_strconv_int(p, 0, INT64_MAX / 1000, &sec) < 0)
            goto invalid;
        *ms = (neg ? -sec : sec) * 1000;
        return 0;
    }
    if (!*p)
        goto invalid;
    while (*p) {
        uint64_t v = 0, f = 0, unit = 0;
        double scale = 1;
        bool pre = false, post = false, ovf = false;
        const char *u;

        if (*p != '.' && (*p < '0' || *p > '9'))
            goto invalid;
        for (; *p >= '0' && *p <= '9'; p++, pre = true) {
            if (v > lim / 10)
                goto invalid;
            v = v * 10 + (uint64_t)(*p - '0');
            if (v > lim)
                goto invalid;
        }
        if (*p == '.') {
            for (p++; *p >= '0' && *p <= '9'; p++, post = true) {
                if (ovf || f > (lim - 1) / 10 ||
                    f * 10 + (uint64_t)(*p - '0') > lim) {
                    ovf = true;
                    continue;
                }
                f = f * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            }
        }
        if (!pre && !post)
            goto invalid;
        u = p;
        while (*p && *p != '.' && (*p < '0' || *p > '9'))
            p++;
        if (p == u)
            return mu_err_set(err, -EINVAL,
                              "missing unit in duration \"%s\"", s);
        for (size_t i = 0; i < MU_ARRAY_LEN(units); i++)
            if (strlen(units[i].name) == (size_t)(p - u) &&
                memcmp(units[i].name, u, (size_t)(p - u)) == 0)
                unit = units[i].ns;
        if (!unit)
            return mu_err_set(err, -EINVAL,
                              "unknown unit \"%.*s\" in duration \"%s\"",
                              (int)(p - u), u, s);
        if (v > lim / unit)
            goto invalid;
        v *= unit;
        if (f > 0) {
            /* Go computes the fraction in float64; so do we. */
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > lim)
                goto invalid;
        }
        d += v;
        if (d > lim)
            goto invalid;
    }
    if (!neg && d > (uint64_t)INT64_MAX)
        goto invalid;
    if (neg)
        *ms = d == lim ? INT64_MIN / 1000000 : -(int64_t)d / 1000000;
    else
        *ms = (int64_t)d / 1000000;
    return 0;
invalid:
    return mu_err_set(err, -EINVAL, "invalid duration \"%s\"", s);
}

bool mu_rfc3339_format(int64_t s, char *buf, size_t n)
{
    time_t t = (time_t)s;
    struct tm tm;

    if (n)
        buf[0] = '\0';
    return gmtime_r(&t, &tm) && strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
