/*
 * action_list.h - every action muster has: the one list the action enum
 * and its names (sched/conf.h, conf.c) and the cycle's dispatch table
 * (sched/cycle.c) are made from.
 *
 * X(ID, name) per action: MU_ACT_<ID> in enum mu_action, `name` its
 * spelling in the configuration's `actions` string and the stem of its
 * entry point, mu_action_<name> (actions.h). The order is the enum's and
 * that of the "known: ..." list in the parser's error message; the order a
 * cycle runs them in is the configuration's.
 *
 * Header only, no declarations: including it adds no dependency on the
 * actions, so the parser can use it without linking them.
 */
#ifndef MU_SCHED_ACTIONS_ACTION_LIST_H
#define MU_SCHED_ACTIONS_ACTION_LIST_H

#define MU_ACTION_LIST(X)                                                     \
    X(ENQUEUE, enqueue)                                                       \
    X(ALLOCATE, allocate)                                                     \
    X(BACKFILL, backfill)                                                     \
    X(RECLAIM, reclaim)                                                       \
    X(PREEMPT, preempt)

#endif
