/* hist.c - Prometheus histograms of durations (hist.h). */
#include "common/hist.h"

const double mu_hist_gang_wait[] = {1,   5,    15,   30,    60,    120,  300,
                                    600, 1800, 3600, 7200, 21600, 86400};
const int mu_hist_gang_wait_n = (int)MU_ARRAY_LEN(mu_hist_gang_wait);
const double mu_hist_cycle[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                0.25,  0.5,    1,     2.5,  5,     10};
const int mu_hist_cycle_n = (int)MU_ARRAY_LEN(mu_hist_cycle);
const double mu_hist_barrier[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                  1,     2.5,  5,     10,   20,  30};
const int mu_hist_barrier_n = (int)MU_ARRAY_LEN(mu_hist_barrier);

void mu_hist_init(struct mu_hist *h, const double *le, int n)
{
    h->le = le;
    h->n = n < 0 ? 0 : n > MU_HIST_MAX_BUCKETS ? MU_HIST_MAX_BUCKETS : n;
    for (int i = 0; i <= MU_HIST_MAX_BUCKETS; i++)
        atomic_init(&h->count[i], 0);
    atomic_init(&h->sum_ns, 0);
}

void mu_hist_observe_ns(struct mu_hist *h, int64_t ns)
{
    double s;
    int i = 0;

    if (ns < 0)
        ns = 0;
    s = (double)ns / 1e9;
    while (i < h->n && s > h->le[i])
        i++;
    atomic_fetch_add(&h->count[i], 1);
    atomic_fetch_add(&h->sum_ns, (unsigned long long)ns);
}

void mu_hist_write(struct mu_hist *h, const char *name, const char *labels,
                   struct mu_sb *sb)
{
    const char *sep = labels && labels[0] ? "," : "";
    const char *lb = labels ? labels : "";
    unsigned long long cum = 0;

    for (int i = 0; i <= h->n; i++) {
        cum += atomic_load(&h->count[i]);
        if (i < h->n)
            mu_sb_addf(sb, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, lb, sep,
                       h->le[i], cum);
        else
            mu_sb_addf(sb, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, lb, sep,
                       cum);
    }
    if (lb[0]) {
        mu_sb_addf(sb, "%s_sum{%s} %.9f\n", name, lb,
                   (double)atomic_load(&h->sum_ns) / 1e9);
        mu_sb_addf(sb, "%s_count{%s} %llu\n", name, lb, cum);
    } else {
        mu_sb_addf(sb, "%s_sum %.9f\n", name,
                   (double)atomic_load(&h->sum_ns) / 1e9);
        mu_sb_addf(sb, "%s_count %llu\n", name, cum);
    }
}
