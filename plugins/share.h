/*
 * share.h - what the two plugins that share the cluster between queues
 * (proportion: weights; capacity: deserved values and queue trees) both
 * need: what a waiting gang lacks, the figures of a refusal, and their
 * duration arguments.
 *
 * Threads: the scheduler thread, within one session.
 */
#ifndef MU_PLUGINS_SHARE_H
#define MU_PLUGINS_SHARE_H

#include "sched/framework.h"

/* What j still lacks to run: the requests of its first pending tasks (not
 * gated by others), as many as it is short of minMember (one more task
 * once it has them). */
void mu_share_gang_need(const struct mu_job *j, struct mu_res *need);

/* mu_share_gang_need of one job, kept while its counts stand: victim_ok
 * asks it for every victim of one reclaimer. Zero it to start. */
struct mu_share_need {
    const struct mu_job *job;
    int at[3];
    struct mu_res need;
};
const struct mu_res *mu_share_need_of(struct mu_share_need *c,
                                      const struct mu_job *j);

/* Was j evicted by reclaim less than again_ms ago (the plugin argument
 * arg, "proportion.reclaimWindow")? Then the session wakes when that ends,
 * why (may be NULL) says so, and j may not reclaim for itself. */
bool mu_share_held_back(struct mu_ssn *ssn, const struct mu_job *j,
                        int64_t again_ms, const char *arg, struct mu_sb *why);

/* "allocated A + X what > labelL" for dimension d, quantities as their
 * resource writes them. */
void mu_share_figures(const struct mu_cluster *c, int d, int64_t allocated,
                      int64_t x, const char *what, const char *label,
                      int64_t limit, struct mu_sb *why);

/* A duration argument ("30s"), never negative; a bad one is warned about
 * (mu_conf_arg_warn) and def used. */
int64_t mu_share_arg_duration(struct mu_ssn *ssn,
                              const struct mu_plugin_opt *opt,
                              const char *key, const char *def);

#endif
