/*
 * apply.h - watch events into the cache: muster serve's informers hand
 * their events (serve/evq.h) to the scheduler thread, which applies each
 * here to the cluster (sched/cluster.h), keeps the enforcer's ledger in
 * step with the pods it sees (serve/enforce.h) and the remaker with the
 * pods gone (serve/remake.h), and after every relist drops what the list
 * no longer has.
 *
 * Threads: the scheduler thread only.
 *
 * Ownership: borrows cluster, ctl, enf and remake (made and freed by
 * serve.c);
 * owns the relist bookkeeping.
 */
#ifndef MU_SERVE_APPLY_H
#define MU_SERVE_APPLY_H

#include <stdbool.h>

#include "common/map.h"
#include "ctrl/ctl.h"
#include "serve/enforce.h"
#include "serve/evq.h"

struct mu_jobctl;
struct mu_remaker;

struct mu_apply {
    struct mu_cluster *cluster;
    const struct mu_ctl *ctl;   /* for log lines */
    struct mu_enforcer *enf;    /* its ledger follows the pods */
    struct mu_jobctl *jobctl;   /* told of every Job and pod event */
    struct mu_remaker *remake;  /* forgets the pods it deleted once gone
                                   (NULL: none) */
    bool synced[MU_SRC__COUNT];      /* listed once */
    bool listing[MU_SRC__COUNT];     /* a relist is under way */
    struct mu_map listed[MU_SRC__COUNT]; /* keys seen in it -> 1 */
    /* Objects that did not decode: ns/name -> the malloc'd "uid@rv" last
     * reported. An object is reported once per version, not on every
     * relist; its entry goes when it decodes or is deleted. */
    struct mu_map bad[MU_SRC__COUNT];
};

void mu_apply_init(struct mu_apply *a, struct mu_cluster *cluster,
                   const struct mu_ctl *ctl, struct mu_enforcer *enf,
                   struct mu_jobctl *jobctl);
void mu_apply_release(struct mu_apply *a);

/* Applies one watch event (ev->src < MU_SRC__COUNT). An object that does
 * not decode is skipped (the cache keeps what it had) and logged once per
 * uid and resourceVersion: "ignoring Pod ns/name (uid u, rv 7): <the
 * field at fault and why>". Returns true when
 * scheduling may have changed. Commands are not applied here (the cache
 * has none; ctrl/queuectl.h carries them out), only their relists
 * counted. */
bool mu_apply_event(struct mu_apply *a, const struct mu_ev *ev);

#endif
