/*
 * pace.h - the release window of muster serve: how many pods may be
 * released (woken or ungated and pinned to their node) and not yet seen
 * bound at once.
 *
 * Why. kube-scheduler takes pods one at a time from its queue, in its own
 * order, and interleaves gangs; the /bind barrier holds each member (and
 * its connection) until the last member of its gang arrives. Released all
 * at once, a backlog of 500 gangs x 8 spreads each gang's members over
 * 4,000 queue slots: the first members wait for the last for longer than
 * the barrier's timeout, thousands of /bind calls hold connections, and
 * the batches time out (issue 15). With at most `window` pods released, a
 * gang's members are at most `window` queue slots apart.
 *
 * The window adapts, as TCP's does: it starts at MU_PACE_START; every batch
 * that binds whole grows it by its size (so it doubles in one window's
 * worth of batches while kube-scheduler keeps up), up to MU_PACE_MAX; a
 * batch that times out in the barrier (its members did not all reach
 * /bind in time) halves it, not below MU_PACE_MIN. The cycle then
 * releases gangs in order while the window has room (sched/cluster.h,
 * release_window); a gang bigger than the window goes alone.
 *
 * Threads: the scheduler thread only (the counters are read by /metrics
 * through mu_pace_window's atomic copy).
 */
#ifndef MU_SERVE_PACE_H
#define MU_SERVE_PACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Pods released and unbound at most, at the start. */
#define MU_PACE_START 256u
/* The window never shrinks below this many pods. */
#define MU_PACE_MIN 32u
/* Nor grows beyond this: every released pod may hold one /bind
 * connection while its gang gathers, so the window stays under half the
 * extender's connection cap (MU_EXT_MAX_CONNS, 1,024), and a waiting
 * member never takes the slot a /filter needs. */
#define MU_PACE_MAX 512u

struct mu_pace {
    size_t window;                 /* pods */
    atomic_size_t shown;           /* window, for /metrics */
    unsigned long long grown, shrunk;
};

void mu_pace_init(struct mu_pace *p);
/* A batch of n members bound whole. */
void mu_pace_bound(struct mu_pace *p, int n);
/* A batch timed out in the barrier. */
void mu_pace_timed_out(struct mu_pace *p);
/* The window now; any thread. */
size_t mu_pace_window(struct mu_pace *p);

#endif
