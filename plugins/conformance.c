/* conformance.c - never evict critical system pods (§8.7). */
#include "plugins.h"

static bool victim_ok(void *st, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim)
{
    const char *pc = victim->pod.priority_class;

    if (mu_strcmp0(victim->pod.meta.ns, "kube-system") == 0)
        return false;
    return !pc || (strcmp(pc, "system-cluster-critical") != 0 &&
                   strcmp(pc, "system-node-critical") != 0);
}

const struct mu_plugin mu_plugin_conformance = {
    .name = "conformance",
    .victim_ok = victim_ok,
};
