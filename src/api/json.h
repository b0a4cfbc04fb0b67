/*
 * json.h - reading and building jansson values, one way for all of muster.
 *
 * Reading comes in two layers:
 *
 *   plain     mu_json_as*() check a value, mu_json_get*() a member of an
 *             object: absent and null read as absent (*out = NULL, 0); a
 *             value of another type is -EINVAL with no message, so callers
 *             with their own wording (Volcano's webhook says "must be a
 *             string", the extender has one message per request) word it.
 *             mu_json_str() and mu_json_nonempty() are the forgiving forms:
 *             NULL for anything but a string.
 *   with paths
 *             mu_json_member*() read o[key] where o sits at field path
 *             `base` ("" at the top, "spec.containers[0]" deeper), and on a
 *             wrong type or value fail with -EINVAL and a message naming
 *             the full path, worded as the API server's decoders word it:
 *               "spec.priority: expected an integer, got a string"
 *               "spec.priority: must be between -2147483648 and 2147483647"
 *               "spec.preemptionPolicy: unsupported value \"x\": supported
 *                values: \"PreemptLowerPriority\", \"Never\""
 *             Paths longer than MU_JSON_PATH_LEN are cut and end in "...".
 *
 * Building: jansson returns NULL only when malloc fails; muster treats
 * that as it treats mu_xmalloc failing (a message and abort), so the
 * builders never fail.
 *
 * Parsing: mu_json_loadb() is how muster reads every body and every
 * watch line that comes from the API server, which accepts "\u0000" in
 * any string. A NUL in a string value is kept (JSON_ALLOW_NUL): the value
 * round-trips exactly when muster copies it back into an object it writes,
 * json_string_length() counts past it, and json_string_value() - a C
 * string - ends at it. Per field:
 *   - strings muster reads one by one with a path (mu_json_member_str,
 *     _dup, _enum: names, uids, queue names, phases, enums) fail with
 *     "path: must not contain a NUL character", so the object is reported
 *     and skipped instead of being matched under a cut name;
 *   - label and annotation values (match.h's mu_kvs_decode) and the
 *     plain readers (mu_json_as_str, mu_json_str, mu_json_nonempty) see
 *     the text up to the NUL: "a\u0000b" reads as "a", a value the
 *     object's author could have written anyway, so the cut grants
 *     nothing and the object stays in the cache;
 *   - a NUL in an object key, which jansson cannot hold, is read as U+FFFD
 *     (the key "a\u0000b" becomes "a\ufffdb"), so one such key does not
 *     make a whole LIST page unreadable.
 *
 * Ownership: readers borrow o and return borrowed pointers into it (valid
 * while o lives) except mu_json_member_dup(), which returns a malloc'd
 * copy. Setters copy their strings. Out-parameters are written on success
 * only, except that a getter finding nothing writes NULL. Pure, no I/O,
 * thread-safe (on values no other thread modifies).
 */
#ifndef MU_API_JSON_H
#define MU_API_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"

/* Longest field path kept in a message (with its NUL). */
#define MU_JSON_PATH_LEN 512

/* ---- parsing ---- */

/*
 * Parses buf[0..len) as one JSON value with NULs read as described above.
 * Returns a new reference, or NULL with err (may be NULL) filled in as
 * json_loadb() fills it.
 */
json_t *mu_json_loadb(const char *buf, size_t len, json_error_t *err);

/* ---- plain reading ---- */

/*
 * v checked against type: NULL or null -> 0 and *out NULL; a value of that
 * type (JSON_TRUE stands for either boolean) -> 0 and *out = v; anything
 * else -> -EINVAL and *out NULL.
 */
int mu_json_as(const json_t *v, json_type type, const json_t **out);
/* The same for a string: *out its text. */
int mu_json_as_str(const json_t *v, const char **out);
/*
 * A string, or an integer as its decimal text written to num (num_len
 * bytes), as sigs.k8s.io/yaml turns a YAML number into a string field.
 */
int mu_json_as_text(const json_t *v, char *num, size_t num_len,
                    const char **out);

/* mu_json_as() and mu_json_as_str() on o[key] (o may be NULL). */
int mu_json_get(const json_t *o, const char *key, json_type type,
                const json_t **out);
int mu_json_get_str(const json_t *o, const char *key, const char **out);

/* o[key] when it is a string, else NULL. */
const char *mu_json_str(const json_t *o, const char *key);
/* o[a][b] when it is a string, else NULL (o may be NULL). */
const char *mu_json_str_at(const json_t *o, const char *a, const char *b);
/* o[key] when it is a string other than "", else NULL. */
const char *mu_json_nonempty(const json_t *o, const char *key);
/* Is v given: present, not null, not an empty list or object? */
bool mu_json_given(const json_t *v);

/* The member of o whose key equals key without regard to case; the last
 * match wins (Go's encoding/json). NULL when absent or o is not an
 * object. */
json_t *mu_json_find_ci(const json_t *o, const char *key);

/* ---- reading with field paths ---- */

/* "an object", "an array", "a string", "an integer", "a number",
 * "a boolean", "null". */
const char *mu_json_type_name(json_type t);
/* The same for v's type. */
const char *mu_json_kind(const json_t *v);

/* base.key (key alone when base is ""), into buf; returns buf. */
const char *mu_json_path(char buf[MU_JSON_PATH_LEN], const char *base,
                         const char *key);
/* base.key[i], into buf; returns buf. */
const char *mu_json_path_at(char buf[MU_JSON_PATH_LEN], const char *base,
                            const char *key, size_t i);

/* -EINVAL with "path: expected <what>, got <v's kind>" ("expected ..."
 * alone when path is ""). */
int mu_json_want(struct mu_err *err, const char *path, const char *what,
                 const json_t *v);

/* o[key] checked against type, as mu_json_as(); o may be NULL. */
int mu_json_member(const json_t *o, const char *base, const char *key,
                   json_type type, const json_t **out, struct mu_err *err);
/* A string member: *out its text, NULL when absent or null. */
int mu_json_member_str(const json_t *o, const char *base, const char *key,
                       const char **out, struct mu_err *err);
/* A copy of a string member; *out untouched when absent, null or "". */
int mu_json_member_dup(const json_t *o, const char *base, const char *key,
                       char **out, struct mu_err *err);
/* An integer member in [min, max]: 1 and *out when present, 0 when absent
 * or null, or -EINVAL ("must be between min and max"). */
int mu_json_member_int(const json_t *o, const char *base, const char *key,
                       int64_t min, int64_t max, int64_t *out,
                       struct mu_err *err);
/* mu_json_member_int() over int32_t's range. */
int mu_json_member_int32(const json_t *o, const char *base, const char *key,
                         int32_t *out, struct mu_err *err);
/* A boolean member; *out untouched when absent or null. */
int mu_json_member_bool(const json_t *o, const char *base, const char *key,
                        bool *out, struct mu_err *err);
/* A string member that must be one of names[0..n): *out its index, untouched
 * when absent or null; -EINVAL lists the non-empty names. */
int mu_json_member_enum(const json_t *o, const char *base, const char *key,
                        const char *const *names, size_t n, int *out,
                        struct mu_err *err);

/* ---- building ---- */

/* v, or abort when jansson could not allocate it. */
json_t *mu_json_must(json_t *v);
/* o[key] = a copy of the string v (replacing what was there). */
void mu_json_set_str(json_t *o, const char *key, const char *v);
/* o[key] = the integer v. */
void mu_json_set_int(json_t *o, const char *key, json_int_t v);
/* o[key] as an object (or array), created when absent or null. Borrowed. */
json_t *mu_json_child(json_t *o, const char *key, bool array);

#endif
