/*
 * ahead.h - the jobs admitted ahead of one that is refused admission.
 *
 * A job that waits for room holds back the jobs behind it only as long as
 * it is admitted and waiting (Inqueue, or Running below its minResources):
 * what it holds counts against the cluster's room (overcommit) and its
 * queue's (proportion). The reason of a job refused for that names them:
 * "; admitted ahead of it and waiting for room: ns/a (8 nvidia.com/gpu),
 * ns/b (8 nvidia.com/gpu) and 3 more". A struct mu_ahead keeps, per
 * resource dimension, the first MU_AHEAD_NAMED such jobs in the order they
 * were added and how many there are: constant memory and constant time per
 * reason, whatever the backlog.
 *
 * Threads: the scheduler thread, within one session. The jobs are
 * borrowed from the session's cluster.
 */
#ifndef MU_PLUGINS_AHEAD_H
#define MU_PLUGINS_AHEAD_H

#include "sched/cluster.h"

#define MU_AHEAD_NAMED 3

struct mu_ahead {
    const struct mu_job *named[MU_RES_MAX][MU_AHEAD_NAMED];
    int64_t held[MU_RES_MAX][MU_AHEAD_NAMED]; /* what each named one holds */
    size_t n[MU_RES_MAX];                      /* jobs holding dimension d */
};

void mu_ahead_init(struct mu_ahead *a);
/* Job j, admitted ahead, holds h (the pods dimension is not counted). */
void mu_ahead_add(struct mu_ahead *a, const struct mu_job *j,
                  const struct mu_res *h);
/* Appends the clause above for dimension d to why (nothing when no job
 * holds d). c names the dimension. */
void mu_ahead_why(const struct mu_ahead *a, const struct mu_cluster *c, int d,
                  struct mu_sb *why);

#endif
