/*
 * framework.h - plugins, and the session (one scheduling cycle) that calls
 * them.
 *
 * A plugin is a const struct mu_plugin of optional function pointers (NULL:
 * not in this phase). At session open, the configuration's tiers are
 * flattened into one array per hook, in tier order then list order, holding
 * only plugins whose enable flag for that hook is on; the combination rules
 * of volcano-api.md §4.1 are applied by the mu_ssn_* helpers below, so
 * actions call one function per question and never walk tiers themselves.
 *
 * Threads: a session runs on the scheduler thread only. Every hook is
 * called from actions on that thread; `st` is what the plugin's open
 * returned.
 *
 * Hooks and their combination (tier = position in the configuration):
 *   job_order, queue_order, task_order  first non-zero answer wins; then the
 *                                       fallback (creation, then name)
 *   job_valid                           first failure wins (writes why)
 *   job_ready, allocatable, preemptive  AND (true when none)
 *   job_pipelined, job_enqueueable      votes: any reject -> false; a tier
 *                                       with a permit -> true; all abstain ->
 *                                       true
 *   job_starving                        first tier with a hook decides (AND
 *                                       within it); false when none
 *   overused                            OR
 *   predicate                           first failure (fills mu_fit)
 *   node_score                          sum
 *   victim_ok                           AND over plugins (muster differs from
 *                                       Volcano's tier short-circuit on
 *                                       purpose: volcano-api.md §4.1, #5896)
 *   victim_queue_rank                   sum (reclaim's victim queue order)
 */
#ifndef MU_SCHED_FRAMEWORK_H
#define MU_SCHED_FRAMEWORK_H

#include <stdbool.h>

#include "sched/cluster.h"
#include "sched/conf.h"
#include "sched/statement.h"

struct mu_ssn;

enum mu_vote { MU_VOTE_REJECT = -1, MU_VOTE_ABSTAIN = 0, MU_VOTE_PERMIT = 1 };

struct mu_plugin {
    const char *name;
    /* Session open: build per-cycle state from the cluster; return it (may
     * be NULL when the plugin keeps none). Warnings about arguments go to
     * the conf through mu_conf_arg_*. Optional. */
    void *(*open)(struct mu_ssn *ssn, const struct mu_plugin_opt *opt);
    /* Session close: free the state. Optional. */
    void (*close)(struct mu_ssn *ssn, void *st);

    /* <0: a first, >0: b first, 0: no opinion. */
    int (*job_order)(void *st, const struct mu_job *a, const struct mu_job *b);
    int (*queue_order)(void *st, const struct mu_cqueue *a,
                       const struct mu_cqueue *b);
    int (*task_order)(void *st, const struct mu_task *a,
                      const struct mu_task *b);

    /* false: the job cannot be scheduled as it is; why gets one line. */
    bool (*job_valid)(void *st, const struct mu_job *j, struct mu_sb *why);
    bool (*job_ready)(void *st, const struct mu_job *j);
    enum mu_vote (*job_pipelined)(void *st, const struct mu_job *j);
    bool (*job_starving)(void *st, const struct mu_job *j);
    /* Admission (enqueue). A reject writes one line to why. */
    enum mu_vote (*job_enqueueable)(void *st, const struct mu_job *j,
                                    struct mu_sb *why);
    /* The job was admitted: count its minResources as in queue. */
    void (*job_enqueued)(void *st, const struct mu_job *j);

    /* May queue q take task t now? false writes one line to why. */
    bool (*allocatable)(void *st, const struct mu_cqueue *q,
                        const struct mu_task *t, struct mu_sb *why);
    /* Is q at or over its share (skipped by allocate and reclaim)? */
    bool (*overused)(void *st, const struct mu_cqueue *q);
    /* May q reclaim for t (is it owed at least t's request)? */
    bool (*preemptive)(void *st, const struct mu_cqueue *q,
                       const struct mu_task *t, struct mu_sb *why);

    /* Node constraints that depend only on the task's shape and the node
     * (selector, affinity, taints, unschedulable): the session caches the
     * answer per (shape, node) until nodes change. Resource fit is the
     * session's own (mu_ssn_fits). */
    bool (*predicate)(void *st, const struct mu_task *t,
                      const struct mu_cnode *n, struct mu_fit *fit);
    /* Higher is better; summed over plugins. Called for feasible nodes. */
    double (*node_score)(void *st, const struct mu_task *t,
                         const struct mu_cnode *n);

    /* May victim be evicted for preemptor? reclaim tells which action.
     * Evictions added to the session may turn the answer from true to
     * false (proportion's, as the victim's queue comes down to its share),
     * never from false to true: reclaim and preempt judge a victim job
     * when they reach it in victim order, not all of them up front. */
    bool (*victim_ok)(void *st, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim);
    /* Optional, only with victim_ok: false promises that victim_ok(st,
     * preemptor, v, reclaim) is false for every task v of queue q in the
     * current state, so reclaim and preempt skip q's jobs without asking
     * per task; true promises nothing. A plugin whose victim_ok depends on
     * the victim's queue alone answers the same here. */
    bool (*victim_queue_ok)(void *st, const struct mu_task *preemptor,
                            const struct mu_cqueue *q, bool reclaim);
    /* Optional, only with victim_queue_ok: its answers for qs[0..n) at
     * once, each false one written to ok[i] (the others left as they
     * are): the same answers as n calls, for less (reclaim asks about
     * every queue for every gang that makes room). */
    void (*victim_queues_ok)(void *st, const struct mu_task *preemptor,
                             struct mu_cqueue *const *qs, size_t n,
                             bool reclaim, bool *ok);
    /* Optional, only with victim_ok: reclaim takes from queues of a lower
     * rank first (Volcano's VictimQueueOrderFn; capacity: the queues
     * nearest preemptor's in the tree), job order within a rank. Ranks
     * are summed over plugins; fixed for the session. */
    int (*victim_queue_rank)(void *st, const struct mu_task *preemptor,
                             const struct mu_cqueue *q);
};

/* Every plugin muster has, NULL-terminated (plugins/plugins.c). */
extern const struct mu_plugin *const mu_plugins[];
const struct mu_plugin *mu_plugin_find(const char *name);

/* Most plugin instances in a session. */
#define MU_SSN_MAX_PLUGINS (MU_CONF_MAX_TIERS * MU_CONF_MAX_PLUGINS)

struct mu_hook {
    const struct mu_plugin *p;
    void *st;
    int tier;
};

struct mu_hooks {
    int n;
    struct mu_hook h[MU_SSN_MAX_PLUGINS];
};

enum mu_hook_id {
    MU_HOOK_JOB_ORDER,
    MU_HOOK_QUEUE_ORDER,
    MU_HOOK_TASK_ORDER,
    MU_HOOK_JOB_VALID,
    MU_HOOK_JOB_READY,
    MU_HOOK_JOB_PIPELINED,
    MU_HOOK_JOB_STARVING,
    MU_HOOK_JOB_ENQUEUEABLE,
    MU_HOOK_JOB_ENQUEUED,
    MU_HOOK_ALLOCATABLE,
    MU_HOOK_OVERUSED,
    MU_HOOK_PREEMPTIVE,
    MU_HOOK_PREDICATE,
    MU_HOOK_NODE_SCORE,
    MU_HOOK_PREEMPTABLE, /* victim_ok for preempt */
    MU_HOOK_RECLAIMABLE, /* victim_ok for reclaim */
    MU_HOOK__COUNT,
};

/* One eviction decided by the cycle. */
struct mu_eviction {
    struct mu_task *victim;
    const struct mu_job *for_job; /* the job it makes room for */
    const char *action;           /* "reclaim" or "preempt" */
};

struct mu_ssn {
    struct mu_cluster *cluster;
    struct mu_conf *conf;
    int64_t now_ms;
    /* The earliest later time at which a plugin's answer turns with the
     * clock alone (a minimum run time passed, a window ended): a cycle
     * then may decide what this one could not, with no event in between.
     * INT64_MAX: none. Plugins lower it through mu_ssn_wake_at. */
    int64_t wake_ms;
    int ninst;
    const struct mu_plugin *inst[MU_SSN_MAX_PLUGINS];
    void *inst_st[MU_SSN_MAX_PLUGINS];
    struct mu_hooks hooks[MU_HOOK__COUNT];
    struct mu_stmt stmt;

    /* per-(shape, node) predicate cache: 0 unknown, 1 fits, else
     * 2 + enum mu_fit_code of the failure */
    uint8_t **pred_cache;
    int pred_cache_shapes;

    /* Decisions, filled by actions at commit. */
    size_t nbinds, cap_binds;
    struct mu_task **binds;       /* tasks now BINDING, in decision order */
    size_t nevicts, cap_evicts;
    struct mu_eviction *evicts;   /* in decision order */
};

/*
 * Opens a session over cluster with conf: resets every job's why, flattens
 * hooks and opens every plugin. The predicate cache lives for the session
 * (filled lazily, one row per task shape that is asked about).
 */
void mu_ssn_open(struct mu_ssn *ssn, struct mu_cluster *c, struct mu_conf *conf,
                 int64_t now_ms);
/* Closes plugins and frees the session's arrays (not the cluster). */
void mu_ssn_close(struct mu_ssn *ssn);
/* An answer given now turns by itself at ms (> now): s->wake_ms. */
void mu_ssn_wake_at(struct mu_ssn *s, int64_t ms);

int mu_ssn_job_order(struct mu_ssn *s, const struct mu_job *a,
                     const struct mu_job *b);
int mu_ssn_queue_order(struct mu_ssn *s, const struct mu_cqueue *a,
                       const struct mu_cqueue *b);
int mu_ssn_task_order(struct mu_ssn *s, const struct mu_task *a,
                      const struct mu_task *b);
bool mu_ssn_job_valid(struct mu_ssn *s, const struct mu_job *j,
                      struct mu_sb *why);
bool mu_ssn_job_ready(struct mu_ssn *s, const struct mu_job *j);
bool mu_ssn_job_pipelined(struct mu_ssn *s, const struct mu_job *j);
bool mu_ssn_job_starving(struct mu_ssn *s, const struct mu_job *j);
bool mu_ssn_job_enqueueable(struct mu_ssn *s, const struct mu_job *j,
                            struct mu_sb *why);
void mu_ssn_job_enqueued(struct mu_ssn *s, const struct mu_job *j);
bool mu_ssn_allocatable(struct mu_ssn *s, const struct mu_cqueue *q,
                        const struct mu_task *t, struct mu_sb *why);
bool mu_ssn_overused(struct mu_ssn *s, const struct mu_cqueue *q);
bool mu_ssn_preemptive(struct mu_ssn *s, const struct mu_cqueue *q,
                       const struct mu_task *t, struct mu_sb *why);
/* Static predicates through the cache. */
bool mu_ssn_predicate(struct mu_ssn *s, const struct mu_task *t,
                      const struct mu_cnode *n, struct mu_fit *fit);
double mu_ssn_node_score(struct mu_ssn *s, const struct mu_task *t,
                         const struct mu_cnode *n);
bool mu_ssn_victim_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim);
/* false when some plugin's victim_queue_ok rules out every task of q as a
 * victim for preemptor (then mu_ssn_victim_ok is false for each of them);
 * true when none does. */
bool mu_ssn_victim_queue_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                            const struct mu_cqueue *q, bool reclaim);
/* mu_ssn_victim_queue_ok of each of qs[0..n) into ok[i], through the
 * plugins' victim_queues_ok where they have one. */
void mu_ssn_victim_queues_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                             struct mu_cqueue *const *qs, size_t n,
                             bool reclaim, bool *ok);

/* The sum of the reclaim victim_queue_rank hooks for q (0 when none). */
int mu_ssn_victim_queue_rank(struct mu_ssn *s, const struct mu_task *preemptor,
                             const struct mu_cqueue *q);

/*
 * Resource fit of t on n: request <= idle (future false) or <= future idle
 * (future true) on every requested dimension, and the pod count below the
 * node's allocatable pods. Fills fit on failure.
 */
bool mu_ssn_fits(const struct mu_ssn *s, const struct mu_task *t,
                 const struct mu_cnode *n, bool future, struct mu_fit *fit);

/* Records decisions (actions call these when they commit). */
void mu_ssn_add_bind(struct mu_ssn *s, struct mu_task *t);
void mu_ssn_add_evict(struct mu_ssn *s, struct mu_task *victim,
                      const struct mu_job *for_job, const char *action);

/* Sets a job's why (replacing an earlier one of this cycle); text is
 * copied. */
void mu_why_set(struct mu_job *j, enum mu_why_kind kind, const char *text);
/* mu_why_set with a printf text. */
void mu_why_setf(struct mu_job *j, enum mu_why_kind kind, const char *fmt,
                 ...) MU_PRINTF(3, 4);
void mu_why_reset(struct mu_job *j);
/* Why reclaim makes j no room yet (text copied; NULL clears): said after
 * the blocking constraint. A later mu_why_set clears it. */
void mu_why_reclaim(struct mu_job *j, const char *text);

#endif
