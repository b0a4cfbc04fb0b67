/* drf.c - dominant resource fairness job order (§8.5). */
#include "plugins.h"

static void *open_drf(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    return ssn->cluster;
}

/* max over dimensions the cluster has of allocated / total, pods aside
 * (only the dimensions both set: a job's comparisons are many per cycle) */
static double share(const struct mu_cluster *c, const struct mu_job *j)
{
    uint32_t set = j->allocated.set & c->total.set & ~(1u << MU_RES_PODS);
    double s = 0;

    for (; set; set &= set - 1) {
        int d = __builtin_ctz(set);
        double v;

        if (c->total.v[d] <= 0)
            continue;
        v = (double)j->allocated.v[d] / (double)c->total.v[d];
        if (v > s)
            s = v;
    }
    return s;
}

static int job_order(void *st, const struct mu_job *a, const struct mu_job *b)
{
    double sa = share(st, a), sb = share(st, b);

    return sa < sb ? -1 : sa > sb ? 1 : 0;
}

const struct mu_plugin mu_plugin_drf = {
    .name = "drf",
    .open = open_drf,
    .job_order = job_order,
};
