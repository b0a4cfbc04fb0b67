/*
 * nodeorder.c - kube-scheduler's resource scorers, weighted (§8.8):
 * LeastAllocated, MostAllocated and BalancedAllocation over cpu and memory,
 * in kube-scheduler's integer arithmetic (0..100 each), saturating where
 * the API server's quantities (up to 2^63 - 1) would overflow it. The other scorers'
 * weights are read (so wrong types warn) but add nothing: muster models no
 * preferred affinity, PreferNoSchedule ranking, images or spread.
 */
#include <math.h>

#include "plugins.h"

#define MAX_NODE_SCORE 100

struct nodeorder {
    int64_t least, most, balanced;
};

static void *open_nodeorder(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    static const struct {
        const char *key;
        int64_t def;
    } unused[] = {
        {"nodeaffinity.weight", 2},    {"podaffinity.weight", 2},
        {"tainttoleration.weight", 3}, {"imagelocality.weight", 1},
        {"podtopologyspread.weight", 2},
    };
    struct nodeorder *o = mu_xcalloc(1, sizeof(*o));

    o->least = mu_conf_arg_int(ssn->conf, opt, "leastrequested.weight", 1);
    o->most = mu_conf_arg_int(ssn->conf, opt, "mostrequested.weight", 0);
    o->balanced =
        mu_conf_arg_int(ssn->conf, opt, "balancedresource.weight", 1);
    for (size_t i = 0; i < MU_ARRAY_LEN(unused); i++)
        (void)mu_conf_arg_int(ssn->conf, opt, unused[i].key, unused[i].def);
    return o;
}

static int64_t get0(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

/* floor(x * MAX_NODE_SCORE / cap) for 0 <= x <= cap, cap > 0, without
 * overflow: exact while x * 100 fits in int64; beyond (x > 9.2e16, so cap
 * is as large) x / (cap / 100), off by less than one part in 1e14 and
 * clamped to the maximum. */
static int64_t scaled(int64_t x, int64_t cap)
{
    if (x <= INT64_MAX / MAX_NODE_SCORE)
        return x * MAX_NODE_SCORE / cap;
    return MU_MIN(x / (cap / MAX_NODE_SCORE), MAX_NODE_SCORE);
}

static double node_score(void *st, const struct mu_task *t,
                         const struct mu_cnode *n)
{
    static const int dims[] = {MU_RES_CPU, MU_RES_MEMORY};
    const struct nodeorder *o = st;
    int64_t least = 0, most = 0, count = 0;
    double frac[2], balanced = MAX_NODE_SCORE;

    for (int i = 0; i < 2; i++) {
        int64_t cap = get0(&n->spec.allocatable, dims[i]);
        int64_t req = MU_MAX(
            mu_add_sat(get0(&n->used, dims[i]), get0(&t->pod.req, dims[i])), 0);

        if (cap <= 0)
            continue;
        least += req > cap ? 0 : scaled(cap - req, cap);
        most += scaled(MU_MIN(req, cap), cap);
        frac[count++] = MU_MIN((double)req / (double)cap, 1.0);
    }
    if (count > 0) {
        least /= count;
        most /= count;
    }
    /* kube-scheduler: (1 - std of the fractions) x 100, truncated; the std
     * of two fractions is |f0 - f1| / 2, of fewer 0 */
    if (count == 2)
        balanced = (double)(int64_t)((1.0 - fabs(frac[0] - frac[1]) / 2) *
                                     MAX_NODE_SCORE);
    return (double)o->least * (double)least + (double)o->most * (double)most +
           (double)o->balanced * balanced;
}

const struct mu_plugin mu_plugin_nodeorder = {
    .name = "nodeorder",
    .open = open_nodeorder,
    .close = mu_plugin_close_free,
    .node_score = node_score,
};
