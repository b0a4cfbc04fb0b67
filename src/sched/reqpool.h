/*
 * reqpool.h - requests shared by every holder of the same one.
 *
 * A pod with DRA claims is counted by its queue under a request of its
 * own (mu_task.qreq: its pod's request plus its claims' devices under
 * their quota names), made when its claims are resolved. Pods of a gang
 * ask the same: one copy serves them all, so the cycle, which reads a
 * task's queue-side request for every task it places, reads a few lines
 * that stay in the cache instead of one cold line per task (and a
 * cluster of 100,000 such pods keeps a handful of them, not 26 MB).
 *
 * Copies are counted: mu_reqpool_get gives one (the same pointer for
 * equal requests: equal sets, equal values in them) and takes a
 * reference; mu_reqpool_put drops it, freeing the copy with its last.
 * There are never more copies than references held, so the pool is
 * bounded by what holds them (the cluster's tasks). Copies never move
 * while referenced. Not thread-safe: the cluster's thread only.
 */
#ifndef MU_SCHED_REQPOOL_H
#define MU_SCHED_REQPOOL_H

#include "api/resource.h"
#include "common/map.h"

struct mu_reqpool {
    struct mu_map by_key;      /* a request as text (its set, then its
                                  values) -> its copy's entry (reqpool.c) */
};

/* Longest key: the set and every dimension's value, in hex. */
#define MU_REQPOOL_KEY_MAX (9 + MU_RES_MAX * 18)

void mu_reqpool_init(struct mu_reqpool *p);
/* Frees every copy, held or not: its holders must not use them after. */
void mu_reqpool_free(struct mu_reqpool *p);
/* The shared copy of r (r itself is not kept), one more reference to it.
 * Never NULL (a failed allocation exits, as mu_xcalloc). */
const struct mu_res *mu_reqpool_get(struct mu_reqpool *p,
                                    const struct mu_res *r);
/* Drops a reference to r (from mu_reqpool_get on p, or NULL). */
void mu_reqpool_put(struct mu_reqpool *p, const struct mu_res *r);
/* Copies held now (for tests and figures). */
size_t mu_reqpool_count(const struct mu_reqpool *p);

#endif
