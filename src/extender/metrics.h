/*
 * metrics.h - the extender's counters as Prometheus text: /metrics writes
 * them first, then the scheduler side's own text (http.h's metrics
 * callback).
 *
 * Reads the atomics of struct mu_ext_stats (extender.h) and the TLS reload
 * counters (tls.h), so it may run on any thread while they move; a scrape
 * may see an observation in a count and not yet in its bucket, as any
 * Prometheus histogram may. Nothing is kept.
 */
#ifndef MU_EXTENDER_METRICS_H
#define MU_EXTENDER_METRICS_H

#include "common/mu.h"
#include "extender/extender.h"
#include "extender/tls.h"

/* Appends every extender series to sb: filter, bind and barrier counters
 * and histograms, and (ts not NULL: TLS on) the certificate's. */
void mu_ext_metrics_write(struct mu_ext_stats *st,
                          struct mu_ext_tls_stats *ts, struct mu_sb *sb);

#endif
