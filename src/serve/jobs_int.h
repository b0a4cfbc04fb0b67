/*
 * jobs_int.h - the vcjob controller's state, shared by its two files:
 * jobs.c (the pod index, events, actions, sync) and job_status.c (the
 * Job's status, its writes, refusal and ttl). Scheduler thread only.
 */
#ifndef MU_SERVE_JOBS_INT_H
#define MU_SERVE_JOBS_INT_H

#include "common/map.h"
#include "ctrl/jobsm.h"
#include "serve/jobs.h"

struct mu_serve;

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
    bool plugins_done;
    int unknown_version;    /* version whose Unknown event fired */
    struct jevent *evs;
    size_t nevs;
    enum mu_jaction *cmds;  /* from Commands, in arrival order */
    size_t ncmds;
    bool expire_sent;       /* the ttl delete went out */
    bool expire_failed;     /* the ttl delete failed once (logged) */
    json_t *written;        /* status last written */
    bool dirty;
};

struct mu_jobctl {
    struct mu_map jobs;     /* "ns/name" -> struct vjob */
};


/* What a write for a Job (a pod, its status) tells the scheduler thread
 * when it completes. */
struct job_write {
    struct mu_serve *sv;
    char *job;              /* the vjob's key */
    char *pod;              /* the pod; for a PodGroup create, its name */
    int version;            /* the job's version when it was sent */
};

/* Index of task name in the Job's spec.tasks, or -1. */
int mu_jc_task_of(const struct vjob *j, const char *task);
/* Counts this Job's pods (jobsm.h); release with mu_jobsm_counts_release. */
void mu_jc_count(const struct vjob *j, struct mu_jcounts *c);
/* "<job>-<uid>", owned by the caller. */
char *mu_jc_group_name(const struct vjob *j);
/* The Job's API path, owned by the caller. */
char *mu_jc_path(const struct vjob *j);
/* An event on the Job (through the writer). */
void mu_jc_event(struct mu_serve *sv, const struct vjob *j, const char *type,
                 const char *reason, const char *msg);
struct job_write *mu_jc_write_new(struct mu_serve *sv, const struct vjob *j,
                                  const char *pod);
void mu_jc_write_free(struct job_write *w);
/* Records a phase change: lastTransitionTime, reason, a condition, a log
 * line (the caller then sets j->st). */
void mu_jc_transition(struct mu_serve *sv, struct vjob *j, enum mu_jphase to,
                      const char *reason);

/* job_status.c */
/* The status the Job should show (new reference). */
json_t *mu_jc_status_json(struct mu_serve *sv, const struct vjob *j);
/* Writes st (stolen) when it differs from what was last sent. */
void mu_jc_write_status(struct mu_serve *sv, struct vjob *j, json_t *st);
/* An invalid Job: Failed with its reason, once; nothing is made. */
void mu_jc_refuse(struct mu_serve *sv, struct vjob *j);
/* Deletes a Job whose ttlSecondsAfterFinished has passed; true when the
 * Job is past it (nothing else to do for it). */
bool mu_jc_expire(struct mu_serve *sv, struct vjob *j);

#endif
