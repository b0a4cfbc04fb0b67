/*
 * jsonx.h - the two jansson helpers the object builders (vcjob.c,
 * vcjob_plugins.c) share. jansson returns NULL only when malloc fails;
 * muster treats that as it treats mu_xmalloc failing: a message and abort.
 */
#ifndef MU_API_JSONX_H
#define MU_API_JSONX_H

#include <jansson.h>
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

#endif
