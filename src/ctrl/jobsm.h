/*
 * jobsm.h - the vcjob lifecycle as pure functions: which action a pod or
 * group event asks for (the Job's lifecycle policies), and what each action
 * does in each phase (volcano-api.md §3.4, Volcano's
 * pkg/controllers/job/state/). No I/O: the controller (ctrl/jobctl.h)
 * counts the job's pods, asks mu_jobsm_step() for a plan, carries it out
 * against the API server and writes the status it returns.
 *
 * Jobs are the defaulted JSON of api/vcjob.h (mu_vcjob_default); every
 * json_t is borrowed. Nothing here allocates except mu_jobsm_counts_*.
 * Thread use: any thread, no shared state.
 */
#ifndef MU_CTRL_JOBSM_H
#define MU_CTRL_JOBSM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/object.h"

enum mu_jphase {
    MU_JOB_PENDING,
    MU_JOB_ABORTING,
    MU_JOB_ABORTED,
    MU_JOB_RUNNING,
    MU_JOB_RESTARTING,
    MU_JOB_COMPLETING,
    MU_JOB_COMPLETED,
    MU_JOB_TERMINATING,
    MU_JOB_TERMINATED,
    MU_JOB_FAILED,
    MU_JOB__NPHASES,
};
const char *mu_jphase_name(enum mu_jphase p);
/* Parses a phase name; unknown or NULL gives MU_JOB_PENDING and false. */
bool mu_jphase_parse(const char *s, enum mu_jphase *out);
/* Completed, Terminated or Failed: nothing runs again. */
bool mu_jphase_final(enum mu_jphase p);

enum mu_jevent {
    MU_JEV_NONE,           /* a plain sync */
    MU_JEV_POD_PENDING,
    MU_JEV_POD_RUNNING,
    MU_JEV_POD_FAILED,
    MU_JEV_POD_EVICTED,
    MU_JEV_TASK_COMPLETED,
    MU_JEV_TASK_FAILED,
    MU_JEV_UNKNOWN,        /* the PodGroup's phase became Unknown */
};
const char *mu_jevent_name(enum mu_jevent e);

enum mu_jaction {
    MU_JACT_SYNC,
    MU_JACT_RESTART_JOB,
    MU_JACT_RESTART_TASK,
    MU_JACT_RESTART_POD,
    MU_JACT_ABORT_JOB,
    MU_JACT_TERMINATE_JOB,
    MU_JACT_COMPLETE_JOB,
    MU_JACT_RESUME_JOB,
};
const char *mu_jaction_name(enum mu_jaction a);
/* Parses an action as Commands and policies spell it ("RestartJob");
 * RestartPartition reads as RestartTask (muster makes no partitions).
 * Returns false for anything else, SyncJob included. */
bool mu_jaction_parse(const char *s, enum mu_jaction *out);

/*
 * The action the job's policies give an event on a pod of task `task`
 * (index into spec.tasks, or -1 for a job-wide event). Task policies are
 * looked at first, then job policies; within a list the first match wins.
 * A policy matches on its event or events (or "*"), or, for MU_JEV_POD_FAILED,
 * on exitCode == exit_code. Policies with a timeout match only events whose
 * condition has lasted that long (`lasted_ms`, -1 when unknown: then they do
 * not match); MU_JEV_POD_PENDING matches only policies with a timeout (every
 * pod starts Pending). No match gives MU_JACT_SYNC.
 */
enum mu_jaction mu_jobsm_policy(const json_t *job, int task,
                                enum mu_jevent ev, int exit_code,
                                int64_t lasted_ms);

/* A pod of the job as the controller sees it. */
struct mu_jpod {
    int task;                 /* index into spec.tasks, -1 if none */
    int index;                /* replica index */
    enum mu_pod_phase phase;
    bool terminating;         /* deletionTimestamp set */
};

/* Pod counts, as Volcano's status carries them. */
struct mu_jcounts {
    int pending, running, succeeded, failed, terminating, unknown;
    int total;                /* sum of replicas over tasks */
    int ntasks;
    int (*task)[5];           /* [task][enum mu_pod_phase] (owned) */
};

/* Counts pods[0..n) against job (which gives the task list). */
void mu_jobsm_count(const json_t *job, const struct mu_jpod *pods, size_t n,
                    struct mu_jcounts *out);
void mu_jobsm_counts_release(struct mu_jcounts *c);

/* Status fields the state machine owns. */
struct mu_jstate {
    enum mu_jphase phase;
    int version;              /* bumped by every full kill */
    int retry;                /* retryCount */
};

enum mu_jkill {
    MU_JKILL_NONE,
    MU_JKILL_SOFT,            /* delete Pending/Running/Unknown pods only */
    MU_JKILL_ALL,             /* delete every pod (a restart; its last
                                 retry kills softly, keeping logs) */
};

/* What the controller must do. */
struct mu_jplan {
    struct mu_jstate next;
    enum mu_jkill kill;
    int kill_task;            /* -1: all tasks; else only this task's pods */
    bool delete_group;        /* delete the PodGroup (any whole-job kill:
                                 restart, abort, terminate, complete, the
                                 last retry) */
    bool create;              /* make the PodGroup and missing pods */
    const char *reason;       /* static text for status.state.reason */
};

/*
 * One step: `cur` is the job's state, `c` its pods' counts, `a` the action
 * (from a policy or a Command) and `task` its target for RestartTask. The
 * plan's `next` is the state to write; when it differs from `cur` the
 * controller adds a condition. Deterministic and total: every phase
 * handles every action.
 */
void mu_jobsm_step(const json_t *job, const struct mu_jstate *cur,
                   const struct mu_jcounts *c, enum mu_jaction a, int task,
                   struct mu_jplan *plan);

#endif
