/*
 * recent.h - the last decisions muster serve carried out (releases and
 * evictions, with what they were for), newest first, for /debug/decisions
 * and the /ui page.
 *
 * A ring of MU_RECENT_MAX entries: a new one pushes the oldest out.
 * Ownership: the ring owns its strings; mu_recent_release frees them.
 * Threads: the scheduler thread (the enforcer adds, the report reads).
 */
#ifndef MU_SERVE_RECENT_H
#define MU_SERVE_RECENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"

/* Decisions kept. */
#define MU_RECENT_MAX 64

struct mu_recent {
    struct {
        int64_t at;   /* wall clock, seconds */
        const char *kind; /* "release" or "evict" (static) */
        char *text;
    } v[MU_RECENT_MAX];
    size_t next, n;   /* slot of the next entry; entries held */
};

void mu_recent_init(struct mu_recent *r);
void mu_recent_release(struct mu_recent *r);
/* Adds a decision of kind (a static string) at wall-clock second at. */
void mu_recent_add(struct mu_recent *r, const char *kind, int64_t at,
                   const char *fmt, ...) MU_PRINTF(4, 5);
/* [{"at": RFC 3339, "kind": ..., "text": ...}, ...], newest first. */
json_t *mu_recent_json(const struct mu_recent *r);

#endif
