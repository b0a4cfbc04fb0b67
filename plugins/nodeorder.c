/*
 * nodeorder.c - kube-scheduler's resource scorers, weighted (§8.8):
 * LeastAllocated, MostAllocated and BalancedAllocation over cpu and memory,
 * in kube-scheduler's integer arithmetic (0..100 each). The other scorers'
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

static double node_score(void *st, const struct mu_task *t,
                         const struct mu_cnode *n)
{
    static const int dims[] = {MU_RES_CPU, MU_RES_MEMORY};
    const struct nodeorder *o = st;
    int64_t least = 0, most = 0, count = 0;
    double frac[2], balanced = MAX_NODE_SCORE;

    for (int i = 0; i < 2; i++) {
        int64_t cap = get0(&n->spec.allocatable, dims[i]);
        int64_t req = get0(&n->used, dims[i]) + get0(&t->pod.req, dims[i]);

        if (cap <= 0)
            continue;
        least += req > cap ? 0 : (cap - req) * MAX_NODE_SCORE / cap;
        most += MU_MIN(req, cap) * MAX_NODE_SCORE / cap;
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
