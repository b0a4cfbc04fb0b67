/*
 * binpack.c - prefer the fullest node that still fits (§8.6).
 *
 * Unlike Volcano, accelerators are packed without being listed: every
 * resource api/resource.h calls an accelerator (nvidia.com/gpu,
 * nvidia.com/mig-*, amd.com/gpu, ...) that binpack.resources does not name
 * weighs binpack.accelerators (default 1; 0 leaves them out, as Volcano
 * does). So a pod fills a partly used GPU node before an empty one, and
 * whole nodes stay whole for the gangs that need them (issue 12, item 3).
 */
#include "plugins.h"

struct binpack {
    int64_t weight;            /* binpack.weight */
    int64_t acc;               /* binpack.accelerators: weight of those
                                  not listed */
    int64_t w[MU_RES_MAX];     /* per dimension; 0 = not considered */
    bool listed[MU_RES_MAX];   /* has a weight (even 0) */
};

static void set_weight(struct binpack *b, int d, int64_t w)
{
    b->w[d] = w < 0 ? 1 : w;
    b->listed[d] = true;
}

/* binpack.resources: "nvidia.com/gpu, example.com/foo" */
static void read_resources(struct binpack *b, struct mu_ssn *ssn,
                           const struct mu_plugin_opt *opt)
{
    const char *s = mu_conf_arg_str(ssn->conf, opt, "binpack.resources", "");

    while (*s) {
        const char *end = s + strcspn(s, ","), *p = s;
        char *name, *key;
        int d;

        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (end > p) {
            name = mu_xmalloc((size_t)(end - p) + 1);
            memcpy(name, p, (size_t)(end - p));
            name[end - p] = '\0';
            key = mu_xasprintf("binpack.resources.%s", name);
            d = mu_resnames_index(&ssn->cluster->rn, name, false);
            if (d >= 0)
                set_weight(b, d, mu_conf_arg_int(ssn->conf, opt, key, 1));
            else
                (void)mu_conf_arg_int(ssn->conf, opt, key, 1);
            free(key);
            free(name);
        }
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
    }
}

static void *open_binpack(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct binpack *b = mu_xcalloc(1, sizeof(*b));

    b->weight = mu_conf_arg_int(ssn->conf, opt, "binpack.weight", 1);
    set_weight(b, MU_RES_CPU,
               mu_conf_arg_int(ssn->conf, opt, "binpack.cpu", 1));
    set_weight(b, MU_RES_MEMORY,
               mu_conf_arg_int(ssn->conf, opt, "binpack.memory", 1));
    read_resources(b, ssn, opt);
    b->acc = mu_conf_arg_int(ssn->conf, opt, "binpack.accelerators", 1);
    if (b->acc < 0)
        b->acc = 1;
    for (int d = 0; d < ssn->cluster->rn.n && d < MU_RES_MAX; d++)
        if (!b->listed[d] &&
            mu_resource_is_accelerator(ssn->cluster->rn.name[d])) {
            b->w[d] = b->acc;
            b->listed[d] = b->acc > 0;
        }
    return b;
}

static double node_score(void *st, const struct mu_task *t,
                         const struct mu_cnode *n)
{
    const struct binpack *b = st;
    double score = 0;
    int64_t wsum = 0;

    /* qreq: a DRA claim's devices count under their quota name, against
     * the node's devices of that name (devq, devused) */
    uint32_t set = t->qreq->set;

    if (b->weight == 0)
        return 0;
    for (int d = 0; set; d++, set >>= 1) {
        int64_t req, cap, used;

        if (!(set & 1u))
            continue;
        req = t->qreq->v[d];
        if (req == 0 || !b->listed[d])
            continue;
        cap = mu_res_has(&n->spec.allocatable, d) ? n->spec.allocatable.v[d]
                                                  : 0;
        used = mu_res_has(&n->used, d) ? n->used.v[d] : 0;
        if (t->dd) {
            cap += n->devq.v[d];
            used += n->devused.v[d];
        }
        wsum += b->w[d];
        if (cap == 0 || b->w[d] == 0)
            continue;
        if (used + req > cap)
            return 0;
        score += (double)b->w[d] * (double)(used + req) / (double)cap;
    }
    if (wsum > 0)
        score /= (double)wsum;
    return score * 100.0 * (double)b->weight;
}

const struct mu_plugin mu_plugin_binpack = {
    .name = "binpack",
    .open = open_binpack,
    .close = mu_plugin_close_free,
    .node_score = node_score,
};
