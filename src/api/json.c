/*
 * json.c - reading and building jansson values (json.h).
 */
#include "api/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- parsing ---- */

/* Past the string whose opening quote is at p[-1]: the index of its
 * closing quote, or len. */
static size_t string_end(const char *p, size_t i, size_t len)
{
    while (i < len && p[i] != '"')
        i += p[i] == '\\' ? 2 : 1;
    return MU_MIN(i, len);
}

/* Rewrites each "\u0000" of the string p[start..end) as "\ufffd". */
static void nuls_out(char *p, size_t start, size_t end)
{
    for (size_t i = start; i + 6 <= end; i++) {
        if (p[i] != '\\')
            continue;
        if (p[i + 1] == 'u' && memcmp(p + i + 2, "0000", 4) == 0)
            memcpy(p + i + 2, "fffd", 4);
        i++; /* the escaped character */
    }
}

/* nuls_out() on every object key of p[0..len), in place: the text keeps
 * its length. */
static void key_nuls_out(char *p, size_t len)
{
    size_t i = 0, start, end, k;

    while (i < len) {
        if (p[i++] != '"')
            continue;
        start = i;
        end = string_end(p, i, len);
        for (k = end + 1; k < len && p[k] && strchr(" \t\r\n", p[k]); k++)
            ;
        if (k < len && p[k] == ':')
            nuls_out(p, start, end);
        i = end + 1;
    }
}

json_t *mu_json_loadb(const char *buf, size_t len, json_error_t *err)
{
    json_error_t local;
    json_t *j;
    char *copy;

    if (!err)
        err = &local;
    j = json_loadb(buf, len, JSON_ALLOW_NUL, err);
    if (j || json_error_code(err) != json_error_null_byte_in_key)
        return j;
    copy = mu_xmalloc(len ? len : 1);
    memcpy(copy, buf, len);
    key_nuls_out(copy, len);
    j = json_loadb(copy, len, JSON_ALLOW_NUL, err);
    free(copy);
    return j;
}

/* ---- plain reading ---- */

int mu_json_as(const json_t *v, json_type type, const json_t **out)
{
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_typeof(v) != type &&
        !(type == JSON_TRUE && json_is_boolean(v)))
        return -EINVAL;
    *out = v;
    return 0;
}

int mu_json_as_str(const json_t *v, const char **out)
{
    const json_t *s;
    int rc = mu_json_as(v, JSON_STRING, &s);

    *out = s ? json_string_value(s) : NULL;
    return rc;
}

int mu_json_as_text(const json_t *v, char *num, size_t num_len,
                    const char **out)
{
    if (json_is_integer(v)) {
        snprintf(num, num_len, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(v));
        *out = num;
        return 0;
    }
    return mu_json_as_str(v, out);
}

int mu_json_get(const json_t *o, const char *key, json_type type,
                const json_t **out)
{
    return mu_json_as(json_object_get(o, key), type, out);
}

int mu_json_get_str(const json_t *o, const char *key, const char **out)
{
    return mu_json_as_str(json_object_get(o, key), out);
}

const char *mu_json_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

const char *mu_json_nonempty(const json_t *o, const char *key)
{
    const char *s = mu_json_str(o, key);

    return s && *s ? s : NULL;
}

json_t *mu_json_find_ci(const json_t *o, const char *key)
{
    json_t *found = NULL, *val;
    const char *k;

    if (!json_is_object(o))
        return NULL;
    json_object_foreach((json_t *)o, k, val)
    {
        if (!strcasecmp(k, key))
            found = val;
    }
    return found;
}

/* ---- reading with field paths ---- */

const char *mu_json_type_name(json_type t)
{
    static const char *const names[] = {
        [JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
        [JSON_STRING] = "a string",  [JSON_INTEGER] = "an integer",
        [JSON_REAL] = "a number",    [JSON_TRUE] = "a boolean",
        [JSON_FALSE] = "a boolean",  [JSON_NULL] = "null",
    };

    return (size_t)t < MU_ARRAY_LEN(names) ? names[t] : "?";
}

const char *mu_json_kind(const json_t *v)
{
    return mu_json_type_name(json_typeof(v));
}

/* Marks a cut path with "...". */
static const char *cut(char *buf, int n)
{
    if (n >= MU_JSON_PATH_LEN)
        memcpy(buf + MU_JSON_PATH_LEN - 4, "...", 4);
    return buf;
}

const char *mu_json_path(char buf[MU_JSON_PATH_LEN], const char *base,
                         const char *key)
{
    return cut(buf, snprintf(buf, MU_JSON_PATH_LEN, "%s%s%s", base,
                             *base ? "." : "", key));
}

const char *mu_json_path_at(char buf[MU_JSON_PATH_LEN], const char *base,
                            const char *key, size_t i)
{
    return cut(buf, snprintf(buf, MU_JSON_PATH_LEN, "%s%s%s[%zu]", base,
                             *base ? "." : "", key, i));
}

int mu_json_want(struct mu_err *err, const char *path, const char *what,
                 const json_t *v)
{
    if (!*path)
        return mu_err_set(err, -EINVAL, "expected %s, got %s", what,
                          mu_json_kind(v));
    return mu_err_set(err, -EINVAL, "%s: expected %s, got %s", path, what,
                      mu_json_kind(v));
}

int mu_json_member(const json_t *o, const char *base, const char *key,
                   json_type type, const json_t **out, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];

    if (mu_json_get(o, key, type, out) < 0)
        return mu_json_want(err, mu_json_path(p, base, key),
                            mu_json_type_name(type), json_object_get(o, key));
    return 0;
}

int mu_json_member_str(const json_t *o, const char *base, const char *key,
                       const char **out, struct mu_err *err)
{
    const json_t *v;
    char p[MU_JSON_PATH_LEN];
    int rc = mu_json_member(o, base, key, JSON_STRING, &v, err);

    *out = NULL;
    if (rc || !v)
        return rc;
    if (strlen(json_string_value(v)) != json_string_length(v))
        return mu_err_set(err, -EINVAL, "%s: must not contain a NUL character",
                          mu_json_path(p, base, key));
    *out = json_string_value(v);
    return 0;
}

int mu_json_member_dup(const json_t *o, const char *base, const char *key,
                       char **out, struct mu_err *err)
{
    const char *s;
    int rc = mu_json_member_str(o, base, key, &s, err);

    if (rc == 0 && s && *s)
        *out = mu_xstrdup(s);
    return rc;
}

int mu_json_member_int(const json_t *o, const char *base, const char *key,
                       int64_t min, int64_t max, int64_t *out,
                       struct mu_err *err)
{
    const json_t *v;
    char p[MU_JSON_PATH_LEN];
    int64_t x;
    int rc = mu_json_member(o, base, key, JSON_INTEGER, &v, err);

    if (rc || !v)
        return rc;
    x = json_integer_value(v);
    if (x < min || x > max)
        return mu_err_set(err, -EINVAL, "%s: must be between %lld and %lld",
                          mu_json_path(p, base, key), (long long)min,
                          (long long)max);
    *out = x;
    return 1;
}

int mu_json_member_int32(const json_t *o, const char *base, const char *key,
                         int32_t *out, struct mu_err *err)
{
    int64_t x;
    int rc = mu_json_member_int(o, base, key, INT32_MIN, INT32_MAX, &x, err);

    if (rc == 1)
        *out = (int32_t)x;
    return rc;
}

int mu_json_member_bool(const json_t *o, const char *base, const char *key,
                        bool *out, struct mu_err *err)
{
    const json_t *v;
    int rc = mu_json_member(o, base, key, JSON_TRUE, &v, err);

    if (v)
        *out = json_is_true(v);
    return rc;
}

int mu_json_member_enum(const json_t *o, const char *base, const char *key,
                        const char *const *names, size_t n, int *out,
                        struct mu_err *err)
{
    const char *s;
    char p[MU_JSON_PATH_LEN];
    struct mu_sb sb;
    int rc = mu_json_member_str(o, base, key, &s, err);

    if (rc || !s)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    mu_sb_init(&sb);
    for (size_t i = 0; i < n; i++)
        if (*names[i])
            mu_sb_addf(&sb, "%s\"%s\"", sb.len ? ", " : "", names[i]);
    rc = mu_err_set(err, -EINVAL,
                    "%s: unsupported value \"%s\": supported values: %s",
                    mu_json_path(p, base, key), s, sb.buf);
    mu_sb_release(&sb);
    return rc;
}

/* ---- building ---- */

json_t *mu_json_must(json_t *v)
{
    if (!v) {
        fputs("muster: out of memory in jansson\n", stderr);
        abort();
    }
    return v;
}

void mu_json_set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, mu_json_must(json_string(v)));
}

void mu_json_set_int(json_t *o, const char *key, json_int_t v)
{
    json_object_set_new(o, key, mu_json_must(json_integer(v)));
}

json_t *mu_json_child(json_t *o, const char *key, bool array)
{
    json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v))
        return v;
    v = mu_json_must(array ? json_array() : json_object());
    json_object_set_new(o, key, v);
    return v;
}

const char *mu_json_str_at(const json_t *o, const char *a, const char *b)
{
    return mu_json_str(json_object_get(o, a), b);
}

bool mu_json_given(const json_t *v)
{
    return v && !json_is_null(v) &&
           !(json_is_array(v) && !json_array_size(v)) &&
           !(json_is_object(v) && !json_object_size(v));
}
