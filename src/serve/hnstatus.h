/*
 * hnstatus.h - a HyperNode's status.nodeCount, which `kubectl get
 * hypernodes` shows (NodeCount): how many nodes its members select now,
 * nested HyperNodes' included, as muster's topology counts them
 * (sched/topology.h). A selector that matches nothing shows 0 there, not a
 * silent gap. Volcano's HyperNode controller writes the same field; where
 * both run they write the same number.
 *
 * After a cycle, each HyperNode whose count differs from its status (as
 * the watch last delivered it) and from what was last sent gets one merge
 * patch of hypernodes/status through the writer (flagged
 * MU_WRITE_COALESCE; gated by the Lease like every write). A failed write
 * is said once (per count) and sent again after MU_HNSTATUS_RETRY_MS, not
 * at every cycle.
 *
 * Threads: the scheduler thread, done callbacks included. Ownership:
 * borrows ctl; mu_hnstatus_release() must come after mu_writer_free() of
 * ctl->writer.
 */
#ifndef MU_SERVE_HNSTATUS_H
#define MU_SERVE_HNSTATUS_H

#include "common/map.h"
#include "ctrl/ctl.h"
#include "sched/topology.h"

/* How long a failed nodeCount write waits before it is sent again. */
#define MU_HNSTATUS_RETRY_MS 30000

struct mu_hnstatus {
    const struct mu_ctl *ctl;
    struct mu_map sent; /* HyperNode name -> what was sent (owned) */
};

void mu_hnstatus_init(struct mu_hnstatus *h, const struct mu_ctl *ctl);
void mu_hnstatus_release(struct mu_hnstatus *h);

/* Sends the counts that changed (see above); t synced by the cycle. */
void mu_hnstatus_write(struct mu_hnstatus *h, const struct mu_topo *t);

#endif
