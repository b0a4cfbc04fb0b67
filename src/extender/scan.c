/*
 * scan.c - reads ExtenderArgs straight from the request bytes.
 *
 * A filter request carries the whole v1.Pod and thousands of node names, of
 * which muster needs four strings and the names as they are. Building a
 * jansson tree of it costs milliseconds at 5,000 names; this scanner
 * validates the whole body in one pass, keeps pointers to the tokens it
 * needs, and lets the reply echo node names byte for byte.
 */
#include "extender/internal.h"

#include <pthread.h>
#include <strings.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct sc {
    const unsigned char *start, *p, *end;
    struct mu_err *err;
    bool failed;
    int code; /* -EINVAL, or -E2BIG for too many NodeNames */
};

/* Bytes that may appear unescaped in a string without a closer look. */
static bool plain[256];
static pthread_once_t plain_once = PTHREAD_ONCE_INIT;

static void init_plain(void)
{
    for (int c = 0; c < 256; c++)
        plain[c] = c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static bool fail(struct sc *s, const char *what)
{
    if (!s->failed)
        mu_err_set(s->err, -EINVAL, "%s at byte %zu", what,
                   (size_t)(s->p - s->start));
    s->failed = true;
    return false;
}

static void ws(struct sc *s)
{
    while (s->p < s->end &&
           (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static bool at(struct sc *s, char c)
{
    return s->p < s->end && *s->p == (unsigned char)c;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The code unit of "\uXXXX" at p (p at the backslash), or -1. */
static long hex4(const unsigned char *p, const unsigned char *end)
{
    long v = 0;

    if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
        return -1;
    for (int i = 2; i < 6; i++) {
        int h = hexval(p[i]);

        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t n;

    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Nonzero when one of the 8 bytes in x may be '"', '\\', below 0x20 or
 * above 0x7f (exact for "none": a false alarm only sends the block to the
 * byte loop). */
static uint64_t special8(uint64_t x)
{
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');

    return ((q - ONES) & ~q) | ((b - ONES) & ~b) | ((x - ONES * 0x20) & ~x) |
           (x & HIGHS);
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                            \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LOWEST_BYTE(m) (__builtin_ctzll(m) >> 3)
#endif

/* The first byte at or after p (before end) that is '"', '\\', a control
 * byte or not ASCII; end if none. 16 or 8 bytes at a time. */
static inline const unsigned char *find_special(const unsigned char *p,
                                                const unsigned char *end)
{
#ifdef __SSE2__
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* signed: below 0x20 is a control byte or above 0x7f */
        __m128i sp =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                      _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                         _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
        int m = _mm_movemask_epi8(sp);

        if (m)
            return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    while (end - p >= 8) {
        uint64_t x, m;

        memcpy(&x, p, 8);
        m = special8(x) & HIGHS;
        if (m) {
#ifdef LOWEST_BYTE
            return p + LOWEST_BYTE(m); /* the lowest flag is a real one */
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end && plain[*p])
        p++;
    return p;
}

/* A string at s->p (which is '"'); on success s->p is past it. */
static bool string(struct sc *s, struct mu_js_tok *t)
{
    const unsigned char *p = s->p + 1, *end = s->end;
    bool esc = false, nul = false;

    for (;;) {
        p = find_special(p, end);
        if (p >= end) {
            s->p = p;
            return fail(s, "unterminated string");
        }
        if (*p == '"')
            break;
        if (*p == '\\') {
            long u;

            esc = true;
            if (p + 1 >= end) {
                s->p = p;
                return fail(s, "unterminated string");
            }
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                p += 2;
                continue;
            case 'u':
                break;
            default:
                s->p = p;
                return fail(s, "invalid escape in string");
            }
            u = hex4(p, end);
            if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) {
                s->p = p;
                return fail(s, u < 0 ? "invalid \\u escape in string"
                                     : "lone low surrogate in string");
            }
            nul |= u == 0;
            p += 6;
            if (u >= 0xD800 && u <= 0xDBFF) {
                long lo = hex4(p, end);

                if (lo < 0xDC00 || lo > 0xDFFF) {
                    s->p = p;
                    return fail(s, "lone high surrogate in string");
                }
                p += 6;
            }
            continue;
        }
        if (*p < 0x20) {
            s->p = p;
            return fail(s, "control character in string");
        }
        {
            size_t n = utf8_len(p, end);

            if (!n) {
                s->p = p;
                return fail(s, "invalid UTF-8 in string");
            }
            p += n;
        }
    }
    if (t) {
        t->p = (const char *)s->p;
        t->len = (size_t)(p + 1 - s->p);
        t->esc = esc;
        t->nul = nul;
    }
    s->p = p + 1;
    return true;
}

static bool digits(struct sc *s)
{
    if (s->p >= s->end || *s->p < '0' || *s->p > '9')
        return fail(s, "invalid number");
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return true;
}

static bool number(struct sc *s)
{
    if (at(s, '-'))
        s->p++;
    if (at(s, '0'))
        s->p++;
    else if (!digits(s))
        return false;
    if (at(s, '.')) {
        s->p++;
        if (!digits(s))
            return false;
    }
    if (at(s, 'e') || at(s, 'E')) {
        s->p++;
        if (at(s, '+') || at(s, '-'))
            s->p++;
        if (!digits(s))
            return false;
    }
    return true;
}

static bool literal(struct sc *s, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return fail(s, "invalid literal");
    s->p += n;
    return true;
}

/* A scalar (string, number, true, false, null) at s->p. */
static bool scalar(struct sc *s)
{
    if (s->p >= s->end)
        return fail(s, "unexpected end of input");
    switch (*s->p) {
    case '"':
        return string(s, NULL);
    case 't':
        return literal(s, "true");
    case 'f':
        return literal(s, "false");
    case 'n':
        return literal(s, "null");
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
            return number(s);
        return fail(s, "unexpected character");
    }
}

/* "key" ws ':' ws, with s->p at the key. */
static bool key(struct sc *s, struct mu_js_tok *k)
{
    if (!at(s, '"'))
        return fail(s, "expected a string key");
    if (!string(s, k))
        return false;
    ws(s);
    if (!at(s, ':'))
        return fail(s, "expected ':'");
    s->p++;
    ws(s);
    return true;
}

/* Skips one value of any kind at s->p (no recursion). */
static bool skip(struct sc *s, int depth0)
{
    unsigned char stack[MU_SCAN_MAX_DEPTH]; /* '{' or '[' */
    int depth = 0;

    for (;;) {
        /* a value starts here */
        if (at(s, '{') || at(s, '[')) {
            unsigned char open = *s->p;

            if (depth0 + depth >= MU_SCAN_MAX_DEPTH)
                return fail(s, "nesting too deep");
            s->p++;
            ws(s);
            if (at(s, open == '{' ? '}' : ']')) {
                s->p++;
            } else {
                stack[depth++] = open;
                if (open == '{' && !key(s, NULL))
                    return false;
                continue;
            }
        } else if (!scalar(s)) {
            return false;
        }
        /* after a value: close containers until a ',' */
        for (;;) {
            if (!depth)
                return true;
            ws(s);
            if (at(s, ',')) {
                s->p++;
                ws(s);
                if (stack[depth - 1] == '{' && !key(s, NULL))
                    return false;
                break;
            }
            if (at(s, stack[depth - 1] == '{' ? '}' : ']')) {
                s->p++;
                depth--;
                continue;
            }
            return fail(s, stack[depth - 1] == '{' ? "expected ',' or '}'"
                                                   : "expected ',' or ']'");
        }
    }
}

/* Case-insensitive key match (ASCII folding, as far as Go's goes here). */
static bool key_is(struct mu_js_tok k, const char *name)
{
    size_t n = strlen(name);
    char buf[64];

    if (!k.esc)
        return k.len - 2 == n && !strncasecmp(k.p + 1, name, n);
    if (k.len > sizeof(buf))
        return false;
    return mu_js_decode(k, buf) == n && !strcasecmp(buf, name);
}

/* Iterates an object at s->p: calls member(s, key, ctx) with s->p at each
 * value; member must consume the value. */
typedef bool (*member_fn)(struct sc *s, struct mu_js_tok k, void *ctx,
                          int depth);

static bool object(struct sc *s, member_fn member, void *ctx, int depth)
{
    if (!at(s, '{'))
        return fail(s, "expected an object");
    s->p++;
    ws(s);
    if (at(s, '}')) {
        s->p++;
        return true;
    }
    for (;;) {
        struct mu_js_tok k;

        if (!key(s, &k) || !member(s, k, ctx, depth + 1))
            return false;
        ws(s);
        if (at(s, ',')) {
            s->p++;
            ws(s);
            continue;
        }
        if (at(s, '}')) {
            s->p++;
            return true;
        }
        return fail(s, "expected ',' or '}'");
    }
}

static bool is_null(struct sc *s)
{
    return (size_t)(s->end - s->p) >= 4 && !memcmp(s->p, "null", 4);
}

/* A string field: a string or null (absent); anything else is an error. */
static bool str_field(struct sc *s, struct mu_js_tok *t, const char *what)
{
    if (is_null(s)) {
        s->p += 4;
        *t = (struct mu_js_tok){NULL, 0, false, false};
        return true;
    }
    if (!at(s, '"'))
        return fail(s, what);
    return string(s, t);
}

static bool meta_member(struct sc *s, struct mu_js_tok k, void *ctx, int depth)
{
    struct mu_ext_args *a = ctx;

    if (key_is(k, "namespace"))
        return str_field(s, &a->ns, "Pod.metadata.namespace: not a string");
    if (key_is(k, "name"))
        return str_field(s, &a->name, "Pod.metadata.name: not a string");
    if (key_is(k, "uid"))
        return str_field(s, &a->uid, "Pod.metadata.uid: not a string");
    return skip(s, depth);
}

static bool spec_member(struct sc *s, struct mu_js_tok k, void *ctx, int depth)
{
    struct mu_ext_args *a = ctx;

    if (key_is(k, "schedulerName"))
        return str_field(s, &a->sched, "Pod.spec.schedulerName: not a string");
    return skip(s, depth);
}

static bool sub_object(struct sc *s, member_fn fn, void *ctx, int depth,
                       const char *what)
{
    if (is_null(s)) {
        s->p += 4;
        return true;
    }
    if (!at(s, '{'))
        return fail(s, what);
    return object(s, fn, ctx, depth);
}

/* A repeated metadata or spec replaces the earlier one whole, as the tree
 * path reads it (the last key wins): what the earlier one said is
 * forgotten. */
static bool pod_member(struct sc *s, struct mu_js_tok k, void *ctx, int depth)
{
    struct mu_ext_args *a = ctx;

    if (key_is(k, "metadata")) {
        a->ns = a->name = a->uid = (struct mu_js_tok){0};
        return sub_object(s, meta_member, ctx, depth,
                          "Pod.metadata: not an object");
    }
    if (key_is(k, "spec")) {
        a->sched = (struct mu_js_tok){0};
        return sub_object(s, spec_member, ctx, depth,
                          "Pod.spec: not an object");
    }
    return skip(s, depth);
}

static bool node_names(struct sc *s, struct mu_ext_args *a)
{
    const unsigned char *open = s->p;

    a->n_names = 0;
    s->p++;
    ws(s);
    if (!at(s, ']')) {
        for (;;) {
            const unsigned char *q;
            struct mu_js_tok t;

            if (!at(s, '"'))
                return fail(s, "NodeNames: not a string");
            /* a plain name (the usual case) ends at its first special
             * byte; anything else takes the general road */
            q = find_special(s->p + 1, s->end);
            if (q < s->end && *q == '"') {
                t = (struct mu_js_tok){(const char *)s->p,
                                       (size_t)(q + 1 - s->p), false,
                                       false};
                s->p = q + 1;
            } else if (!string(s, &t)) {
                return false;
            }
            a->names_nul |= t.nul;
            if (a->n_names == MU_EXT_MAX_NODE_NAMES) {
                mu_err_set(s->err, -E2BIG, MU_EXT_TOO_MANY_NAMES,
                           MU_EXT_MAX_NODE_NAMES);
                s->failed = true;
                s->code = -E2BIG;
                return false;
            }
            if (a->n_names == a->cap_names)
                mu_xgrow((void **)&a->names, &a->cap_names, a->n_names + 1,
                         sizeof(*a->names));
            a->names[a->n_names++] = (struct mu_js_name){
                (uint32_t)((const unsigned char *)t.p - open),
                (uint32_t)t.len | (t.esc ? MU_JS_NAME_ESC : 0)};
            ws(s);
            if (at(s, ',')) {
                s->p++;
                ws(s);
                continue;
            }
            if (at(s, ']'))
                break;
            return fail(s, "expected ',' or ']'");
        }
    }
    s->p++;
    a->node_names = true;
    a->names_raw = (const char *)open;
    a->names_raw_len = (size_t)(s->p - open);
    return true;
}

static bool top_member(struct sc *s, struct mu_js_tok k, void *ctx, int depth)
{
    struct mu_ext_args *a = ctx;

    if (key_is(k, "Pod")) {
        a->ns = a->name = a->uid = a->sched = (struct mu_js_tok){0};
        a->pod = false;
        if (is_null(s)) {
            s->p += 4;
            return true;
        }
        if (!at(s, '{'))
            return fail(s, "Pod: not an object");
        a->pod = true;
        return object(s, pod_member, a, depth);
    }
    if (key_is(k, "NodeNames")) {
        a->node_names = false;
        a->names_nul = false;
        a->n_names = 0;
        a->names_raw = NULL;
        a->names_raw_len = 0;
        if (is_null(s)) {
            s->p += 4;
            return true;
        }
        if (!at(s, '['))
            return fail(s, "NodeNames: not an array");
        return node_names(s, a);
    }
    return skip(s, depth);
}

int mu_scan_ext_args(const char *buf, size_t len, struct mu_ext_args *a,
                     struct mu_err *err)
{
    struct sc s = {(const unsigned char *)buf, (const unsigned char *)buf,
                   (const unsigned char *)buf + len, err, false, -EINVAL};

    pthread_once(&plain_once, init_plain);
    memset(a, 0, sizeof(*a));
    if (len >= MU_JS_NAME_ESC) {
        fail(&s, "request too large");
        return -EINVAL;
    }
    ws(&s);
    if (!at(&s, '{')) {
        if (s.p >= s.end)
            fail(&s, "empty body");
        else
            fail(&s, "not a JSON object");
        return -EINVAL;
    }
    if (!object(&s, top_member, a, 0))
        return s.code;
    ws(&s);
    if (s.p != s.end) {
        fail(&s, "data after the JSON object");
        return -EINVAL;
    }
    return 0;
}

void mu_ext_args_release(struct mu_ext_args *a)
{
    free(a->names);
    memset(a, 0, sizeof(*a));
}

static size_t put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t mu_js_decode(struct mu_js_tok t, char *out)
{
    const unsigned char *p = (const unsigned char *)t.p + 1;
    const unsigned char *end = (const unsigned char *)t.p + t.len - 1;
    size_t n = 0;

    if (!t.esc) {
        memcpy(out, p, (size_t)(end - p));
        out[end - p] = '\0';
        return (size_t)(end - p);
    }
    while (p < end) {
        unsigned long cp;

        if (*p != '\\') {
            out[n++] = (char)*p++;
            continue;
        }
        switch (p[1]) {
        case 'b':
            out[n++] = '\b';
            p += 2;
            continue;
        case 'f':
            out[n++] = '\f';
            p += 2;
            continue;
        case 'n':
            out[n++] = '\n';
            p += 2;
            continue;
        case 'r':
            out[n++] = '\r';
            p += 2;
            continue;
        case 't':
            out[n++] = '\t';
            p += 2;
            continue;
        case 'u':
            break;
        default:
            out[n++] = (char)p[1];
            p += 2;
            continue;
        }
        cp = (unsigned long)hex4(p, end);
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned long lo = (unsigned long)hex4(p, end);

            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        /* a \u escape takes 6 input bytes and at most 3 output bytes; a
         * surrogate pair 12 and 4 */
        n += put_utf8(out + n, cp);
    }
    out[n] = '\0';
    return n;
}

size_t mu_utf8_seq_len(const char *p, const char *end)
{
    if (p >= end)
        return 0;
    if ((unsigned char)*p < 0x80)
        return 1;
    return utf8_len((const unsigned char *)p, (const unsigned char *)end);
}

bool mu_js_tok_eq(struct mu_js_tok t, const char *s)
{
    size_t n = strlen(s);
    char small[256];
    char *buf;
    bool eq;

    if (!t.p)
        return false;
    if (!t.esc)
        return t.len - 2 == n && !memcmp(t.p + 1, s, n);
    if (t.len - 2 < n) /* escapes only shrink */
        return false;
    buf = t.len <= sizeof(small) ? small : mu_xmalloc(t.len);
    eq = mu_js_decode(t, buf) == n && !memcmp(buf, s, n);
    if (buf != small)
        free(buf);
    return eq;
}
