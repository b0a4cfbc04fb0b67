/*
 * actions.h - the actions a cycle runs, in the order the configuration
 * lists them (volcano-api.md §7). The placement code they share is in
 * place.h.
 *
 * Every action runs on the scheduler thread inside a session s, with the
 * cycle's placement state p (opened over s: p->ssn == s). Actions change
 * the cluster only through the session's statement and record what must
 * reach the API (binds, evictions) with mu_ssn_add_bind/_evict when they
 * commit.
 */
#ifndef MU_SCHED_ACTIONS_H
#define MU_SCHED_ACTIONS_H

#include "sched/actions/action_list.h"
#include "sched/actions/place.h"
#include "sched/framework.h"

/* void mu_action_<name>(s, p) for each action of action_list.h:
 * mu_action_enqueue, _allocate, _backfill, _reclaim, _preempt. */
#define X(id, name) void mu_action_##name(struct mu_ssn *s, struct mu_place *p);
MU_ACTION_LIST(X)
#undef X

#endif
