/*
 * predicates.c - the static node filters of kube-scheduler that Volcano's
 * predicates plugin wraps (§8.8): NodeUnschedulable, NodeAffinity
 * (nodeSelector and required affinity) and TaintToleration. Resource fit is
 * the session's own (mu_ssn_fits).
 */
#include "plugins.h"

struct pred {
    bool affinity;
    bool taints;
};

static void *open_pred(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct pred *p = mu_xcalloc(1, sizeof(*p));

    p->affinity =
        mu_conf_arg_bool(ssn->conf, opt, "predicate.NodeAffinityEnable", true);
    p->taints = mu_conf_arg_bool(ssn->conf, opt,
                                 "predicate.TaintTolerationEnable", true);
    return p;
}

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

static bool fail(struct mu_fit *fit, enum mu_fit_code code)
{
    if (fit) {
        fit->code = code;
        fit->dim = -1;
    }
    return false;
}

static bool predicate(void *st, const struct mu_task *t,
                      const struct mu_cnode *n, struct mu_fit *fit)
{
    static const struct mu_taint unschedulable = {
        .key = (char *)"node.kubernetes.io/unschedulable",
        .effect = MU_EFFECT_NO_SCHEDULE,
    };
    const struct pred *p = st;

    if (n->spec.unschedulable && !tolerated(&t->pod, &unschedulable))
        return fail(fit, MU_FIT_UNSCHEDULABLE);
    if (p->affinity && !selector_ok(&t->pod, &n->spec))
        return fail(fit, MU_FIT_SELECTOR);
    if (p->taints && !taints_ok(&t->pod, &n->spec))
        return fail(fit, MU_FIT_TAINT);
    return true;
}

const struct mu_plugin mu_plugin_predicates = {
    .name = "predicates",
    .open = open_pred,
    .close = mu_plugin_close_free,
    .predicate = predicate,
};
