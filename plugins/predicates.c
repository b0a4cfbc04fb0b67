/*
 * predicates.c - the static node filters of kube-scheduler that Volcano's
 * predicates plugin wraps (§8.8): NodeUnschedulable, NodeAffinity
 * (nodeSelector and required affinity) and TaintToleration. Resource fit is
 * the session's own (mu_ssn_fits).
 */
#include "plugins.h"

#include "api/nodecheck.h"

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
    const struct pred *p = st;

    switch (mu_nodecheck(&t->pod, &n->spec, p->affinity, p->taints)) {
    case MU_NODECHECK_UNSCHEDULABLE:
        return fail(fit, MU_FIT_UNSCHEDULABLE);
    case MU_NODECHECK_SELECTOR:
        return fail(fit, MU_FIT_SELECTOR);
    case MU_NODECHECK_TAINT:
        return fail(fit, MU_FIT_TAINT);
    case MU_NODECHECK_OK:
        break;
    }
    return true;
}

const struct mu_plugin mu_plugin_predicates = {
    .name = "predicates",
    .open = open_pred,
    .close = mu_plugin_close_free,
    .predicate = predicate,
};
