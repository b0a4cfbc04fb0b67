/*
 * topoplace.h - placing a gang that asks networkTopology (object.h:
 * mu_netopo) inside one network domain (sched/topology.h).
 *
 * For such a gang allocate calls mu_topoplace_job instead of mu_place_job.
 * The candidates are the domains of tier <= its highestTierAllowed (or the
 * tier its highestTierName names) that hold the nodes its placed pods are
 * on already; they are tried nearest tier first and, within a tier,
 * fullest first (the least free room left after the gang on its first
 * accelerator, else cpu: domains are packed as nodes are), then by name.
 * A domain whose free room (future idle, summed over its nodes) is short
 * of what the gang still needs is not tried. Each try places the gang
 * among the domain's nodes only, in the same statement; the first that
 * makes it ready (or pipelined) wins, the others are rolled back. When
 * none does, a hard gang waits with MU_WHY_TOPOLOGY (which tier, the
 * gang's need, the best domain's room), unless its queue's share stopped
 * it first; a soft gang is placed anywhere, as without the field (so is
 * one whose highestTierName names no tier).
 *
 * struct mu_topoplace keeps, for the action it serves, every domain's free
 * room, caught up from the cluster's dirty log as placements move it, so a
 * gang costs, per domain it tries, one pass over one int64 per domain of
 * its tier, plus, per pod, a pick from the domain's own node index
 * (place.h).
 *
 * Ownership: caller-allocated; borrows the placement state (and through it
 * the session and cluster->topo, synced at session open). Lives no longer
 * than the action; mu_topoplace_release frees. Thread: the scheduler
 * thread. Allocation failures abort.
 */
#ifndef MU_SCHED_ACTIONS_TOPOPLACE_H
#define MU_SCHED_ACTIONS_TOPOPLACE_H

#include "sched/actions/place.h"

/* Most domains one gang tries to place itself in, and most it looks at
 * (a domain looked at may turn out short of a dimension other than the
 * one it is packed by, or not hold the gang's placed pods), in one cycle:
 * named caps. A gang the try cap stopped goes on, at its next cycle, past
 * the domains it tried (mu_job.topo_skip), so every domain is reached in
 * turn; a gang that tried them all starts from the best again. */
#define MU_TOPO_MAX_TRIES 32
#define MU_TOPO_MAX_LOOKS 128

struct mu_topoplace {
    struct mu_place *p;     /* borrowed */
    bool built;
    size_t dirty_pos;       /* how much of the cluster's dirty log is in */
    struct mu_res *free;    /* per domain */
    struct mu_res *seen;    /* per node: what it adds to its domains */
    uint32_t *seen_gen;     /* per node: its gen when seen */
    const struct mu_domnodes *dn; /* the nodes' domains (place.h) */
    /* free[] of one dimension, one int64 per domain, for the dimensions
     * gangs are packed by (made on first use): the scan of every domain
     * for a gang reads these, not the whole vectors */
    int ndense;
    int dense_dim[MU_RES_MAX];
    int64_t *dense[MU_RES_MAX];
    uint32_t stamp;         /* one per gang */
    uint32_t *used;         /* per domain: the stamp of the gang that
                               looked at it last */
    size_t nseg;            /* the tiers: domains seg[i]..seg[i + 1] */
    size_t *seg;
};

void mu_topoplace_init(struct mu_topoplace *tp, struct mu_place *p);
void mu_topoplace_release(struct mu_topoplace *tp);

/* Does j ask to be placed in one domain? */
static inline bool mu_job_topo(const struct mu_job *j)
{
    return j->pg.topo.mode != MU_TOPO_NONE;
}

/* mu_place_job(p, j, mode, 0) held to one domain, as above; mode is
 * MU_PLACE_GANG or MU_PLACE_ONE. Returns how many tasks it placed. */
int mu_topoplace_job(struct mu_topoplace *tp, struct mu_job *j,
                     enum mu_place_mode mode);

#endif
