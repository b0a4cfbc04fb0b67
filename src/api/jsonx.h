/*
 * jsonx.h - the jansson helpers the object builders (vcjob.c,
 * vcjob_expand.c, vcjob_plugins.c) share. jansson returns NULL only when malloc fails;
 * muster treats that as it treats mu_xmalloc failing: a message and abort.
 */
#ifndef MU_API_JSONX_H
#define MU_API_JSONX_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* v, or abort when jansson could not allocate it. */
static inline json_t *mu_json_must(json_t *v)
{
    if (!v) {
        fputs("muster: out of memory in jansson\n", stderr);
        abort();
    }
    return v;
}

/* o[key] = a copy of the string v (replacing what was there). */
static inline void mu_json_set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, mu_json_must(json_string(v)));
}

/* o[key] = the integer v. */
static inline void mu_json_set_int(json_t *o, const char *key, json_int_t v)
{
    json_object_set_new(o, key, mu_json_must(json_integer(v)));
}

/* o[key] as an object (or array), created when absent or null. */
static inline json_t *mu_json_child(json_t *o, const char *key, bool array)
{
    json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v))
        return v;
    v = mu_json_must(array ? json_array() : json_object());
    json_object_set_new(o, key, v);
    return v;
}

#endif
