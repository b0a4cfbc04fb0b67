/*
 * jobctl_int.h - the vcjob controller's state and the functions its files
 * share. Each file calls only the ones below it:
 *
 *   jobctl.c         the entry points (jobctl.h), a Job's sync
 *   jobctl_act.c     actions: kills, deletes, the plugins' objects, the
 *                    PodGroup, the pods (the writes and their completions)
 *   jobctl_status.c  the Job's status, its writes, refusal, ttl, events
 *   jobctl_pods.c    the Jobs and their pods as the watches show them, the
 *                    lifecycle events, counts, the writes' context
 *
 * Scheduler thread only (jobctl.h).
 */
#ifndef MU_CTRL_JOBCTL_INT_H
#define MU_CTRL_JOBCTL_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/map.h"
#include "ctrl/ctl.h"
#include "ctrl/jobsm.h"
#include "kube/watch.h"

#define MU_JC_API "batch.volcano.sh/v1alpha1"
#define MU_JC_LABEL_JOB_NAME "volcano.sh/job-name"
#define MU_JC_ANN_JOB_VERSION "volcano.sh/job-version"

/* The svc and ssh plugins' objects (jobctl_act.c), a bit each in
 * struct vjob's plugins_made / plugins_making. */
#define MU_JC_NPLUGIN_OBJS 4

/* A pod of a Job, as the pod watch shows it. */
struct jpod {
    char *name;
    char *uid;
    char *task;             /* volcano.sh/task-spec */
    int index;              /* volcano.sh/task-index, -1 if absent */
    int version;            /* volcano.sh/job-version */
    enum mu_pod_phase phase;
    bool terminating;
    bool bound;
    bool killed;            /* this controller deleted it */
    bool undone;            /* muster deletes it to undo a gang bind
                               (mu_jobctl_pod_undone): no eviction */
    bool gone;              /* known deleted; dropped at the next sync */
    bool task_failed;       /* its TaskFailed event fired */
    int64_t created;        /* creationTimestamp, s since the epoch */
    char *owner;            /* uid of its controller ownerReference */
};

struct jevent {
    enum mu_jevent ev;
    char *task;
    char *pod;
    int exit_code;
};

struct vjob {
    char *key, *ns, *name, *uid;
    json_t *obj;            /* the latest Job, NULL until the watch shows it */
    json_t *def;            /* defaulted spec (mu_vcjob_default) */
    int64_t generation;     /* of obj when def was made */
    char *invalid;          /* why the Job is refused, or NULL */
    struct mu_jstate st;
    char *ltt;              /* state.lastTransitionTime */
    char *reason;           /* state.reason */
    json_t *conds;          /* status.conditions */
    struct mu_map pods;     /* name -> struct jpod */
    struct mu_map made;     /* names created for st.version */
    struct mu_map done;     /* names that Succeeded in st.version -> task
                               index + 1: never made again, counted even
                               once deleted (Volcano #3296) */
    int pg_version;         /* version whose PodGroup exists, -1 none */
    int pg_making;          /* version whose PodGroup create is in the
                               writer, -1 none */
    bool pg_stale;          /* the spec changed: its PodGroup's spec too */
    bool pg_patching;       /* that spec patch is in the writer */
    unsigned plugins_made;  /* plugin objects made (or not needed) */
    unsigned plugins_making; /* their creates in the writer */
    bool plugins_done;      /* every one made: the pods may follow */
    int unknown_version;    /* version whose Unknown event fired */
    struct jevent *evs;
    size_t nevs;
    enum mu_jaction *cmds;  /* from Commands, in arrival order */
    size_t ncmds;
    bool expire_making;     /* the ttl delete is in the writer */
    bool expire_sent;       /* the ttl delete went through */
    bool expire_failed;     /* the ttl delete failed once (logged) */
    json_t *written;        /* status last written */
    bool dirty;
};

struct mu_jobctl {
    struct mu_ctl ctl;      /* a copy; members borrowed */
    struct mu_map jobs;     /* "ns/name" -> struct vjob */
};

/* What a write for a Job tells the scheduler thread when it completes
 * (the write's ctx; freed by its done callback). */
struct job_write {
    struct mu_jobctl *jc;
    char *job;              /* the vjob's key */
    char *uid;              /* the Job's uid when it was sent */
    char *pod;              /* the pod; for a PodGroup create, its name */
    int version;            /* the job's version when it was sent */
    long long arg;          /* a plugin object: its row; a ttl delete: the
                               ttl */
};

/* ------------------------------------------------------ jobctl_pods.c -- */

/* The Job ns/name, made (empty, not yet seen by the Job watch) if new. */
struct vjob *mu_jc_job_get(struct mu_jobctl *jc, const char *ns,
                           const char *name);
/* Frees a Job (removed from jc->jobs first) with its pods. NULL: no-op. */
void mu_jc_job_free(struct vjob *j);
/* mu_jobctl_pod_undone (jobctl.h). */
void mu_jc_pod_undone(struct mu_jobctl *jc, const char *ns,
                      const char *name, const char *uid, bool on);
/* The pod index's part of mu_jobctl_pod (jobctl.h). */
void mu_jc_pod_event(struct mu_jobctl *jc, enum mu_watch_type type,
                     const json_t *obj);
/* Queues a lifecycle event for the next sync (task, pod may be NULL). */
void mu_jc_push_event(struct vjob *j, enum mu_jevent ev, const char *task,
                      const char *pod, int exit_code);
void mu_jc_clear_events(struct vjob *j);
/* This Job's pods in name order (deterministic kills and deletes); the
 * array is owned by the caller (free), the pods by the index. */
struct jpod **mu_jc_sorted_pods(const struct vjob *j, size_t *n);
/* Drops pods known to be gone (a delete that found nothing, a relist). */
void mu_jc_purge(struct vjob *j);
/* Index of task name in the Job's spec.tasks, or -1. */
int mu_jc_task_of(const struct vjob *j, const char *task);
/* Counts this Job's pods (jobsm.h); release with mu_jobsm_counts_release. */
void mu_jc_count(const struct vjob *j, struct mu_jcounts *c);
/* "<job>-<uid>", owned by the caller. */
char *mu_jc_group_name(const struct vjob *j);
/* The context of a write for j (pod may be NULL). */
struct job_write *mu_jc_write_new(struct mu_jobctl *jc, const struct vjob *j,
                                  const char *pod);
void mu_jc_write_free(struct job_write *w);
/* The Job a write was sent for, if it is still there and still the same
 * Job (not deleted and made again under the name); else NULL. */
struct vjob *mu_jc_write_job(const struct job_write *w);

/* ---------------------------------------------------- jobctl_status.c -- */

/* An event on the Job (through the writer). */
void mu_jc_event(struct mu_jobctl *jc, const struct vjob *j, const char *type,
                 const char *reason, const char *msg);
/* Records a phase change: lastTransitionTime, reason, a condition, a log
 * line (the caller then sets j->st). */
void mu_jc_transition(struct mu_jobctl *jc, struct vjob *j, enum mu_jphase to,
                      const char *reason);
/* The status the Job should show (new reference). */
json_t *mu_jc_status_json(struct mu_jobctl *jc, const struct vjob *j);
/* Writes st (stolen) when it differs from what was last sent. */
void mu_jc_write_status(struct mu_jobctl *jc, struct vjob *j, json_t *st);
/* An invalid Job: Failed with its reason, once; nothing is made. */
void mu_jc_refuse(struct mu_jobctl *jc, struct vjob *j);
/* Deletes a Job whose ttlSecondsAfterFinished has passed (once: not while
 * that delete is in the writer, not after it went through); true when the
 * Job is past it (nothing else to do for it). */
bool mu_jc_expire(struct mu_jobctl *jc, struct vjob *j);

/* ------------------------------------------------------- jobctl_act.c -- */

/* Runs one action through the state machine and carries out its plan;
 * `pod` narrows a RestartPod to that pod, `task` a RestartTask. */
void mu_jc_act(struct mu_jobctl *jc, struct vjob *j, enum mu_jaction a,
               int task, const char *pod);
/* A PodPending policy with a timeout fires once one of the job's pods has
 * been Pending that long (checked at every sync, the periodic one too). */
void mu_jc_pending_timeouts(struct mu_jobctl *jc, struct vjob *j);

#endif
