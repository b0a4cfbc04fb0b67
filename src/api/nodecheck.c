#include "api/nodecheck.h"

#include <string.h>

#include "common/mu.h"

static bool tolerated(const struct mu_pod *pod, const struct mu_taint *taint)
{
    for (size_t i = 0; i < pod->ntol; i++)
        if (mu_toleration_matches(&pod->tol[i], taint))
            return true;
    return false;
}

static bool selector_ok(const struct mu_pod *pod, const struct mu_node *n)
{
    for (size_t i = 0; i < pod->node_selector.n; i++) {
        const struct mu_kv *kv = &pod->node_selector.v[i];

        if (mu_strcmp0(mu_kvs_get(&n->meta.labels, kv->key), kv->value) != 0)
            return false;
    }
    return pod->affinity.nterms == 0 ||
           mu_affinity_matches(&pod->affinity, &n->meta.labels, n->meta.name);
}

static bool taints_ok(const struct mu_pod *pod, const struct mu_node *n)
{
    for (size_t i = 0; i < n->ntaints; i++) {
        const struct mu_taint *t = &n->taints[i];

        if ((t->effect == MU_EFFECT_NO_SCHEDULE ||
             t->effect == MU_EFFECT_NO_EXECUTE) &&
            !tolerated(pod, t))
            return false;
    }
    return true;
}

enum mu_nodecheck mu_nodecheck(const struct mu_pod *p, const struct mu_node *n,
                               bool affinity, bool taints)
{
    static const struct mu_taint unschedulable = {
        .key = (char *)"node.kubernetes.io/unschedulable",
        .effect = MU_EFFECT_NO_SCHEDULE,
    };

    if (n->unschedulable && !tolerated(p, &unschedulable))
        return MU_NODECHECK_UNSCHEDULABLE;
    if (affinity && !selector_ok(p, n))
        return MU_NODECHECK_SELECTOR;
    if (taints && !taints_ok(p, n))
        return MU_NODECHECK_TAINT;
    return MU_NODECHECK_OK;
}
