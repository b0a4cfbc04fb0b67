/*
 * metrics.c - the extender's counters as Prometheus text (metrics.h).
 */
#include "extender/metrics.h"

static void metric(struct mu_sb *sb, const char *name, const char *type,
                   const char *help)
{
    mu_sb_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void tls_metrics(struct mu_ext_tls_stats *ts, struct mu_sb *sb)
{
    metric(sb, "muster_extender_tls_reloads_total", "counter",
           "Reloads of the TLS certificate, key and client CA after their "
           "files changed, by result.");
    mu_sb_addf(sb, "muster_extender_tls_reloads_total{result=\"ok\"} %llu\n",
               atomic_load(&ts->reloads_ok));
    mu_sb_addf(sb,
               "muster_extender_tls_reloads_total{result=\"failed\"} %llu\n",
               atomic_load(&ts->reloads_failed));
    metric(sb, "muster_extender_tls_certificate_expiry_seconds", "gauge",
           "When the serving certificate expires, Unix seconds.");
    mu_sb_addf(sb, "muster_extender_tls_certificate_expiry_seconds %lld\n",
               atomic_load(&ts->not_after));
}

void mu_ext_metrics_write(struct mu_ext_stats *st,
                          struct mu_ext_tls_stats *ts, struct mu_sb *sb)
{
    const char *h = "muster_extender_filter_duration_seconds";
    unsigned long long cum = 0;

    metric(sb, "muster_extender_filter_requests_total", "counter",
           "Filter requests answered.");
    mu_sb_addf(sb, "muster_extender_filter_requests_total %llu\n",
               atomic_load(&st->filter_calls));
    metric(sb, h, "histogram",
           "Time to answer a filter request (read, decide, write), "
           "seconds.");
    for (unsigned i = 0; i < MU_EXT_FILTER_BUCKETS; i++) {
        cum += atomic_load(&st->filter_hist[i]);
        if (i < MU_EXT_FILTER_BUCKETS - 1) /* the last is the overflow */
            mu_sb_addf(sb, "%s_bucket{le=\"%.6f\"} %llu\n", h,
                       (double)(1u << i) / 1e6, cum);
    }
    mu_sb_addf(sb, "%s_bucket{le=\"+Inf\"} %llu\n", h, cum);
    mu_sb_addf(sb, "%s_sum %.9f\n", h,
               (double)atomic_load(&st->filter_ns_total) / 1e9);
    mu_sb_addf(sb, "%s_count %llu\n", h, cum);
    metric(sb, "muster_extender_bind_requests_total", "counter",
           "Bind requests received.");
    mu_sb_addf(sb, "muster_extender_bind_requests_total %llu\n",
               atomic_load(&st->bind_calls));
    metric(sb, "muster_extender_binds_total", "counter",
           "Bind requests answered, by result.");
    mu_sb_addf(sb, "muster_extender_binds_total{result=\"ok\"} %llu\n",
               atomic_load(&st->bind_ok));
    mu_sb_addf(sb, "muster_extender_binds_total{result=\"failed\"} %llu\n",
               atomic_load(&st->bind_failed));
    metric(sb, "muster_extender_batches_timed_out_total", "counter",
           "Release batches whose members did not all reach bind in time.");
    mu_sb_addf(sb, "muster_extender_batches_timed_out_total %llu\n",
               atomic_load(&st->batches_timed_out));
    metric(sb, "muster_extender_bind_barrier_seconds", "histogram",
           "Time from a release batch's first member at bind to its "
           "outcome (bound, failed or timed out), seconds.");
    mu_hist_write(&st->barrier_hist, "muster_extender_bind_barrier_seconds",
                  NULL, sb);
    metric(sb, "muster_extender_gang_bind_span_seconds", "histogram",
           "Time from the first to the last member of a release batch "
           "bound whole (two or more members) having its bind answered, "
           "seconds.");
    mu_hist_write(&st->span_hist, "muster_extender_gang_bind_span_seconds",
                  NULL, sb);
    metric(sb, "muster_extender_gangs_bound_at_first_member_total",
           "counter",
           "Release batches bound whole when their first member reached "
           "bind (every member plain), by result.");
    mu_sb_addf(sb, "muster_extender_gangs_bound_at_first_member_total"
                    "{result=\"ok\"} %llu\n",
               atomic_load(&st->gangs_first_ok));
    mu_sb_addf(sb, "muster_extender_gangs_bound_at_first_member_total"
                    "{result=\"failed\"} %llu\n",
               atomic_load(&st->gangs_first_failed));
    metric(sb, "muster_extender_bad_requests_total", "counter",
           "Requests refused as malformed, oversize, or of the wrong "
           "method or path.");
    mu_sb_addf(sb, "muster_extender_bad_requests_total %llu\n",
               atomic_load(&st->bad_requests));
    metric(sb, "muster_extender_connections_cut_total", "counter",
           "Connections shut down because a request did not arrive, or a "
           "reply was not taken, in time.");
    mu_sb_addf(sb, "muster_extender_connections_cut_total %llu\n",
               atomic_load(&st->conns_cut));
    if (ts)
        tls_metrics(ts, sb);
}
