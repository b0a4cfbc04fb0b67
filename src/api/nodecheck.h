/*
 * nodecheck.h - kube-scheduler's static node checks for one pod, as
 * Volcano's predicates plugin wraps them (§8.8): NodeUnschedulable,
 * NodeAffinity (nodeSelector and required node affinity) and
 * TaintToleration (NoSchedule and NoExecute taints). Resource fit is not
 * here (the session's own, mu_ssn_fits).
 *
 * Pure functions of their arguments; no allocation, no errors.
 */
#ifndef MU_API_NODECHECK_H
#define MU_API_NODECHECK_H

#include <stdbool.h>

#include "api/object.h"

enum mu_nodecheck {
    MU_NODECHECK_OK = 0,
    MU_NODECHECK_UNSCHEDULABLE, /* spec.unschedulable, not tolerated */
    MU_NODECHECK_SELECTOR,      /* nodeSelector or required affinity */
    MU_NODECHECK_TAINT,         /* a NoSchedule/NoExecute taint */
};

/* The first check p fails on n, in the order above; affinity and taints
 * turn the second and third off (the plugin's arguments). */
enum mu_nodecheck mu_nodecheck(const struct mu_pod *p, const struct mu_node *n,
                               bool affinity, bool taints);

#endif
