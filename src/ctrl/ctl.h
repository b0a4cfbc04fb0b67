/*
 * ctl.h - what a controller is given: the narrow context every controller
 * of muster serve (the vcjob, PodGroup and queue controllers, Commands)
 * works through, instead of the whole daemon.
 *
 * A controller reads the cache (the cluster the watches keep, as of the
 * last event applied) and writes only through the writer (kube/writer.h):
 * it never makes a request itself, so the scheduler thread, which runs
 * every controller, never waits on the network. What it must learn from
 * the API (an owner's annotations, whether a create went through) comes
 * back as a write's completion, on the same thread, at a later drain.
 *
 * Threads: a struct mu_ctl and everything reached through it belong to
 * the scheduler thread (the writer's owner); controllers are called there
 * only. Nothing here locks.
 *
 * Ownership: the context borrows all of its members; whoever made them
 * (muster serve, or a unit test with a fake apiserver) frees them after
 * the controllers that use them.
 */
#ifndef MU_CTRL_CTL_H
#define MU_CTRL_CTL_H

#include "common/mu.h"
#include "kube/writer.h"
#include "sched/cluster.h"

struct mu_ctl {
    struct mu_cluster *cluster; /* the cache (read; apply.c writes it) */
    struct mu_writer *writer;   /* every API write */
    /* One line about something that went wrong or was done, no newline
     * (muster serve prefixes a timestamp). NULL: not logged. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
};

/* Formats one line and hands it to c->log. */
void mu_ctl_log(const struct mu_ctl *c, const char *fmt, ...) MU_PRINTF(2, 3);

/*
 * Posts a core/v1 Event about an object through the writer (fire and
 * forget: a failure is logged by the writer). api/kind/ns/name/uid name the
 * object (ns NULL for cluster-scoped ones); type "Normal" or "Warning".
 * A submit that the writer refuses is logged here.
 */
void mu_ctl_event(const struct mu_ctl *c, const char *api, const char *kind,
                  const char *ns, const char *name, const char *uid,
                  const char *type, const char *reason, const char *msg);

#endif
