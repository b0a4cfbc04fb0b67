#include "api/resource.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QTY_SYNTAX_MSG                                                        \
    "quantities must match the regular expression "                         \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* Exponents beyond this make any non-zero value overflow or round to one
 * unit, so clamping them keeps the arithmetic below in range. */
#define QTY_EXP_CLAMP (INT64_C(1) << 40)

static const struct {
    const char *s;
    int pow2;
    int pow10;
} suffixes[] = {
    {"Ki", 10, 0}, {"Mi", 20, 0}, {"Gi", 30, 0}, {"Ti", 40, 0},
    {"Pi", 50, 0}, {"Ei", 60, 0}, {"n", 0, -9},  {"u", 0, -6},
    {"m", 0, -3},  {"", 0, 0},    {"k", 0, 3},   {"M", 0, 6},
    {"G", 0, 9},   {"T", 0, 12},  {"P", 0, 15},  {"E", 0, 18},
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int parse_suffix(const char *s, int *pow2, int64_t *pow10)
{
    const char *p;
    long long e;
    char *end;

    for (size_t i = 0; i < MU_ARRAY_LEN(suffixes); i++) {
        if (strcmp(s, suffixes[i].s) == 0) {
            *pow2 = suffixes[i].pow2;
            *pow10 = suffixes[i].pow10;
            return 0;
        }
    }
    if (s[0] != 'e' && s[0] != 'E')
        return -EINVAL;
    p = s + 1;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return -EINVAL;
    for (const char *q = p; *q; q++)
        if (!is_digit(*q))
            return -EINVAL;
    errno = 0;
    e = strtoll(s + 1, &end, 10);
    if (errno == ERANGE || *end)
        return -EINVAL;
    *pow2 = 0;
    *pow10 = MU_MAX(MU_MIN(e, QTY_EXP_CLAMP), -QTY_EXP_CLAMP);
    return 0;
}

/*
 * value = digits * 2^pow2 * 10^pow10, exactly: the digits are kept as a
 * little-endian decimal array, doubled pow2 times, then split into integer
 * and fraction at the decimal point.
 */
int mu_quantity_parse(const char *s, enum mu_qunit unit, int64_t *out,
                      struct mu_err *err)
{
    const char *p = s, *ip, *fp = NULL;
    size_t ni, nf = 0, len = 0;
    int64_t pow10, intdigits;
    uint64_t mag = 0;
    bool neg = false, frac = false;
    unsigned char *d;
    int pow2, rc = 0;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    ip = p;
    while (is_digit(*p))
        p++;
    ni = (size_t)(p - ip);
    if (*p == '.') {
        fp = ++p;
        while (is_digit(*p))
            p++;
        nf = (size_t)(p - fp);
    }
    if (ni + nf == 0 || parse_suffix(p, &pow2, &pow10))
        return mu_err_set(err, -EINVAL, QTY_SYNTAX_MSG);
    pow10 -= (int64_t)nf;
    if (unit == MU_Q_MILLI)
        pow10 += 3;

    d = mu_xmalloc(ni + nf + 20);
    for (size_t i = nf; i-- > 0;)
        d[len++] = (unsigned char)(fp[i] - '0');
    for (size_t i = ni; i-- > 0;)
        d[len++] = (unsigned char)(ip[i] - '0');
    while (len > 0 && d[len - 1] == 0)
        len--;
    for (int i = 0; i < pow2 && len > 0; i++) {
        unsigned carry = 0;

        for (size_t k = 0; k < len; k++) {
            unsigned x = d[k] * 2u + carry;

            d[k] = (unsigned char)(x % 10);
            carry = x / 10;
        }
        if (carry)
            d[len++] = (unsigned char)carry;
    }

    intdigits = len ? (int64_t)len + pow10 : 0;
    if (intdigits > 19) {
        rc = mu_err_set(err, -EINVAL, "value too large");
        goto out;
    }
    for (int64_t i = intdigits - 1; i >= 0; i--) {
        int64_t k = i - pow10;

        mag = mag * 10 + (k >= 0 && k < (int64_t)len ? d[k] : 0);
    }
    for (int64_t k = 0; k < (int64_t)len && k < -pow10; k++)
        frac |= d[k] != 0;
    if (frac && unit == MU_Q_INTEGER) {
        rc = mu_err_set(err, -EINVAL, "must be an integer");
        goto out;
    }
    /* Round away from zero, like Quantity.Value() and MilliValue(). */
    if (frac)
        mag++;
    if (mag > INT64_MAX) {
        rc = mu_err_set(err, -EINVAL, "value too large");
        goto out;
    }
    *out = neg ? -(int64_t)mag : (int64_t)mag;
out:
    free(d);
    return rc;
}

enum mu_qunit mu_resource_unit(const char *name)
{
    if (strcmp(name, "cpu") == 0)
        return MU_Q_MILLI;
    if (strcmp(name, "memory") == 0 || strcmp(name, "ephemeral-storage") == 0 ||
        strcmp(name, "storage") == 0 || mu_starts_with(name, "hugepages-"))
        return MU_Q_BYTES;
    return MU_Q_INTEGER;
}

/* The largest suffix of the table that divides v, or plain digits. */
static void format_suffix(int64_t v, const char *const *sfx,
                          const int64_t *unit, char *buf, size_t n)
{
    for (int i = 5; i >= 0 && v != 0; i--) {
        if (v % unit[i] == 0) {
            snprintf(buf, n, "%lld%s", (long long)(v / unit[i]), sfx[i]);
            return;
        }
    }
    snprintf(buf, n, "%lld", (long long)v);
}

/* Binary and decimal forms, the shorter one (binary on a tie). */
static void format_bytes(int64_t v, char *buf, size_t n)
{
    static const char *const bsfx[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const dsfx[] = {"k", "M", "G", "T", "P", "E"};
    static const int64_t bin[] = {
        INT64_C(1) << 10, INT64_C(1) << 20, INT64_C(1) << 30,
        INT64_C(1) << 40, INT64_C(1) << 50, INT64_C(1) << 60,
    };
    static const int64_t dec[] = {
        INT64_C(1000),
        INT64_C(1000000),
        INT64_C(1000000000),
        INT64_C(1000000000000),
        INT64_C(1000000000000000),
        INT64_C(1000000000000000000),
    };
    char b[32], d[32];

    format_suffix(v, bsfx, bin, b, sizeof(b));
    format_suffix(v, dsfx, dec, d, sizeof(d));
    snprintf(buf, n, "%s", strlen(d) < strlen(b) ? d : b);
}

/* snprintf(buf, n, "%lld%s", v, sfx) */
static void format_int(int64_t v, const char *sfx, char *buf, size_t n)
{
    char t[MU_I64_TEXT + 1];
    size_t len = mu_i64_text(v, t);

    if (*sfx) {
        t[len++] = *sfx;
        t[len] = '\0';
    }
    if (!n)
        return;
    len = MU_MIN(len, n - 1);
    memcpy(buf, t, len);
    buf[len] = '\0';
}

char *mu_quantity_format(const char *name, int64_t v, char *buf, size_t n)
{
    switch (mu_resource_unit(name)) {
    case MU_Q_MILLI:
        if (v % 1000 == 0)
            format_int(v / 1000, "", buf, n);
        else
            format_int(v, "m", buf, n);
        break;
    case MU_Q_BYTES:
        format_bytes(v, buf, n);
        break;
    case MU_Q_INTEGER:
        format_int(v, "", buf, n);
        break;
    }
    return buf;
}

void mu_resnames_init(struct mu_resnames *r)
{
    memset(r, 0, sizeof(*r));
    r->name[MU_RES_CPU] = mu_xstrdup("cpu");
    r->name[MU_RES_MEMORY] = mu_xstrdup("memory");
    r->name[MU_RES_PODS] = mu_xstrdup("pods");
    r->n = 3;
}

void mu_resnames_release(struct mu_resnames *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->name[i]);
    memset(r, 0, sizeof(*r));
}

bool mu_resource_is_accelerator(const char *name)
{
    static const char *const known[] = {
        "habana.ai/gaudi",          "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice",
        "google.com/tpu",           NULL,
    };
    const char *slash = name ? strchr(name, '/') : NULL;

    if (!slash || slash == name || !slash[1])
        return false;
    for (int i = 0; known[i]; i++)
        if (strcmp(name, known[i]) == 0)
            return true;
    return strncmp(slash + 1, "gpu", 3) == 0 ||
           strncmp(slash + 1, "mig-", 4) == 0 || strncmp(name, "gpu.", 4) == 0;
}

int mu_resnames_index(struct mu_resnames *r, const char *name, bool create)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return i;
    if (!create)
        return -ENOENT;
    if (r->n >= MU_RES_MAX)
        return -ENOSPC;
    r->name[r->n] = mu_xstrdup(name);
    return r->n++;
}

static int64_t get0(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

/* Only the dimensions b sets are visited: requests set a few of 32. */
/* Over b's set dimensions only, lowest first (the hot path of every
 * placement: a node's, job's and queue's sums). */
void mu_res_add(struct mu_res *a, const struct mu_res *b)
{
    for (uint32_t set = b->set; set; set &= set - 1) {
        int d = __builtin_ctz(set);

        mu_res_put(a, d, mu_add_sat(get0(a, d), b->v[d]));
    }
}

void mu_res_sub(struct mu_res *a, const struct mu_res *b)
{
    for (uint32_t set = b->set; set; set &= set - 1) {
        int d = __builtin_ctz(set);

        mu_res_put(a, d, mu_sub_sat(get0(a, d), b->v[d]));
    }
}

void mu_res_max(struct mu_res *a, const struct mu_res *b)
{
    for (int d = 0; d < MU_RES_MAX; d++)
        if (mu_res_has(b, d))
            mu_res_put(a, d, MU_MAX(get0(a, d), b->v[d]));
}

bool mu_res_is_empty(const struct mu_res *r)
{
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && get0(r, d) != 0)
            return false;
    return true;
}

int mu_res_first_short(const struct mu_res *req, const struct mu_res *have,
                       bool cap_inf)
{
    for (int d = 0; d < MU_RES_MAX; d++) {
        if (d == MU_RES_PODS || get0(req, d) <= 0)
            continue;
        if (!mu_res_has(have, d) && cap_inf)
            continue;
        if (get0(have, d) < req->v[d])
            return d;
    }
    return -1;
}

void mu_res_format(const struct mu_res *r, const struct mu_resnames *names,
                   bool keep_zero, struct mu_sb *sb)
{
    int idx[MU_RES_MAX];
    int n = 0;
    char val[32];

    for (int d = 0; d < MU_RES_MAX && d < names->n; d++) {
        int k = n;

        if (!mu_res_has(r, d) || (!keep_zero && r->v[d] == 0))
            continue;
        n++;
        while (k > 0 && strcmp(names->name[idx[k - 1]], names->name[d]) > 0) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = d;
    }
    mu_sb_add(sb, "{");
    for (int i = 0; i < n; i++) {
        const char *name = names->name[idx[i]];

        mu_sb_addf(sb, "%s%s: %s", i ? ", " : "", name,
                   mu_quantity_format(name, r->v[idx[i]], val, sizeof(val)));
    }
    mu_sb_add(sb, "}");
}
