/*
 * hist.h - Prometheus histograms of durations: fixed upper bounds in
 * seconds, cumulative counts written as name_bucket{le="..."}, name_sum
 * and name_count.
 *
 * struct mu_hist is caller-allocated; mu_hist_init gives it its bounds
 * (borrowed: a static array, ascending, at most MU_HIST_MAX_BUCKETS), and
 * it holds nothing to free. Observations and writing may run on any
 * threads at once (atomic counts; a write concurrent with observations
 * may see one in count and not yet in its bucket, as any scrape may).
 */
#ifndef MU_COMMON_HIST_H
#define MU_COMMON_HIST_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/mu.h"

/* Most upper bounds a histogram has (+Inf comes on top). */
#define MU_HIST_MAX_BUCKETS 20

struct mu_hist {
    const double *le; /* upper bounds, seconds, ascending */
    int n;
    atomic_ullong count[MU_HIST_MAX_BUCKETS + 1]; /* [n]: above the last */
    atomic_ullong sum_ns;
};

/* Upper bounds for waits of gangs (1 s .. 1 d), cycles and binds (1 ms ..
 * 10 s), and the /bind barrier (5 ms .. 30 s). */
extern const double mu_hist_gang_wait[];
extern const int mu_hist_gang_wait_n;
extern const double mu_hist_cycle[];
extern const int mu_hist_cycle_n;
extern const double mu_hist_barrier[];
extern const int mu_hist_barrier_n;

/* n is cut to MU_HIST_MAX_BUCKETS. */
void mu_hist_init(struct mu_hist *h, const double *le, int n);
/* One observation of ns nanoseconds (negative counts as 0). */
void mu_hist_observe_ns(struct mu_hist *h, int64_t ns);
/* Appends the series of h named name, with labels (e.g. `queue="a"`, or
 * NULL) on each, to sb. No # TYPE line: the caller writes one per name. */
void mu_hist_write(struct mu_hist *h, const char *name, const char *labels,
                   struct mu_sb *sb);

#endif
