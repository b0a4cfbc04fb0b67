/*
 * topology.h - the cluster's network domains: HyperNodes
 * (api/hypernode.h) and, for clusters without them, domains derived from
 * node labels the scheduler configuration names (conf.h: hyperNodeTiers).
 * A PodGroup's networkTopology (object.h: mu_netopo) places its whole gang
 * inside one domain (actions/topoplace.h).
 *
 * A domain is a set of nodes at a tier; lower tiers are nearer (an NVLink
 * clique at 1, a rack at 2, a zone at 3). A HyperNode's nodes are those its
 * Node members select plus the nodes of the HyperNodes its HyperNode
 * members select (a member that would make a HyperNode contain itself is
 * left out, with a warning). A label tier k (the k-th entry of
 * hyperNodeTiers) makes one domain per value of its label, named
 * "<label>=<value>", holding the nodes with that value.
 *
 * Ownership: the caller (the simulator, muster serve) owns a struct
 * mu_topo, feeds it HyperNodes with mu_topo_put/mu_topo_remove, and lends
 * it to the cluster (mu_cluster.topo). mu_topo_sync, called by the cycle at
 * session open, rebuilds the domains when the HyperNodes, the nodes
 * (mu_cluster.node_set_gen: added, removed, labels) or the label tiers
 * changed; between changes it
 * costs nothing. Domains' node lists are indexes into cluster->nodes, valid
 * until the next sync. Thread: the scheduler thread, as the cluster.
 * Allocation failures abort (mu_x*).
 */
#ifndef MU_SCHED_TOPOLOGY_H
#define MU_SCHED_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/hypernode.h"

struct mu_cluster;
struct mu_conf;

/* Most HyperNodes muster keeps; more are refused with a log line. */
#define MU_TOPO_MAX_HYPERNODES 65536
/* Deepest nesting of HyperNodes followed. */
#define MU_TOPO_MAX_DEPTH 16

struct mu_domain {
    char *name;            /* the HyperNode's, or "<label>=<value>" */
    int tier;
    char *tier_name;       /* owned: tierName or the label; may be NULL */
    size_t n;
    int *nodes;            /* indexes into cluster->nodes, ascending */
};

struct mu_topo {
    size_t nhn, cap_hn;
    struct mu_hypernode *hn; /* sorted by name */
    uint64_t gen;            /* moves with every put and remove */

    /* Derived at sync. */
    bool built;
    uint64_t built_gen, built_node_gen;
    char *built_labels;      /* the label tiers it was built with */
    size_t ndom;
    struct mu_domain *dom;   /* by tier, then name */
    size_t nwarn;
    char **warn;             /* what the last build left out, owned */
    uint64_t builds;         /* how many times the domains were built */
    uint64_t warn_sig;       /* a hash of warn (0: none): a caller that logs
                                warn keeps the one it logged */
};

void mu_topo_init(struct mu_topo *t);
void mu_topo_free(struct mu_topo *t);

/* Adds or replaces (by name) a HyperNode, moving *h in (zeroed). -ENOSPC
 * past MU_TOPO_MAX_HYPERNODES (h is released). */
int mu_topo_put(struct mu_topo *t, struct mu_hypernode *h);
/* The HyperNode of that name, or NULL. */
const struct mu_hypernode *mu_topo_hypernode(const struct mu_topo *t,
                                             const char *name);
/* Removes a HyperNode by name; false when there was none. */
bool mu_topo_remove(struct mu_topo *t, const char *name);

/* Brings the domains up to date with c's nodes and conf's label tiers. */
void mu_topo_sync(struct mu_topo *t, const struct mu_cluster *c,
                  const struct mu_conf *conf);

/* The tier whose name is name (a HyperNode's tierName or a label tier's
 * label), -1 when none: the highest such tier when several share it. */
int mu_topo_tier_named(const struct mu_topo *t, const char *name);

/* The highest tier a gang asking nt may use: its highestTierAllowed, or
 * the tier its highestTierName names when lower; INT_MAX when it gives
 * neither (any tier); -1 when highestTierName names no tier (t may be
 * NULL: no tier has a name). */
int mu_topo_tier_limit(const struct mu_topo *t, const struct mu_netopo *nt);

/* Does domain d hold node index n? O(log d->n). */
bool mu_domain_has(const struct mu_domain *d, int n);

#endif
