/* The vcjob lifecycle: policies and the state machine (jobsm.h). */
#include "ctrl/jobsm.h"

#include <string.h>

#include "common/mu.h"

static const char *const phases[MU_JOB__NPHASES] = {
    [MU_JOB_PENDING] = "Pending",         [MU_JOB_ABORTING] = "Aborting",
    [MU_JOB_ABORTED] = "Aborted",         [MU_JOB_RUNNING] = "Running",
    [MU_JOB_RESTARTING] = "Restarting",   [MU_JOB_COMPLETING] = "Completing",
    [MU_JOB_COMPLETED] = "Completed",     [MU_JOB_TERMINATING] = "Terminating",
    [MU_JOB_TERMINATED] = "Terminated",   [MU_JOB_FAILED] = "Failed",
};

static const char *const events[] = {
    [MU_JEV_NONE] = "",
    [MU_JEV_POD_PENDING] = "PodPending",
    [MU_JEV_POD_RUNNING] = "PodRunning",
    [MU_JEV_POD_FAILED] = "PodFailed",
    [MU_JEV_POD_EVICTED] = "PodEvicted",
    [MU_JEV_TASK_COMPLETED] = "TaskCompleted",
    [MU_JEV_TASK_FAILED] = "TaskFailed",
    [MU_JEV_UNKNOWN] = "Unknown",
};

static const char *const actions[] = {
    [MU_JACT_SYNC] = "SyncJob",
    [MU_JACT_RESTART_JOB] = "RestartJob",
    [MU_JACT_RESTART_TASK] = "RestartTask",
    [MU_JACT_RESTART_POD] = "RestartPod",
    [MU_JACT_ABORT_JOB] = "AbortJob",
    [MU_JACT_TERMINATE_JOB] = "TerminateJob",
    [MU_JACT_COMPLETE_JOB] = "CompleteJob",
    [MU_JACT_RESUME_JOB] = "ResumeJob",
};

const char *mu_jphase_name(enum mu_jphase p)
{
    return (unsigned)p < MU_JOB__NPHASES ? phases[p] : "Unknown";
}

bool mu_jphase_parse(const char *s, enum mu_jphase *out)
{
    *out = MU_JOB_PENDING;
    for (int i = 0; s && i < MU_JOB__NPHASES; i++)
        if (!strcmp(s, phases[i])) {
            *out = (enum mu_jphase)i;
            return true;
        }
    return false;
}

bool mu_jphase_final(enum mu_jphase p)
{
    return p == MU_JOB_COMPLETED || p == MU_JOB_TERMINATED ||
           p == MU_JOB_FAILED;
}

const char *mu_jevent_name(enum mu_jevent e)
{
    return (size_t)e < MU_ARRAY_LEN(events) ? events[e] : "";
}

const char *mu_jaction_name(enum mu_jaction a)
{
    return (size_t)a < MU_ARRAY_LEN(actions) ? actions[a] : "";
}

bool mu_jaction_parse(const char *s, enum mu_jaction *out)
{
    /* a partition is restarted with its task: muster makes no partitions */
    if (s && !strcmp(s, "RestartPartition")) {
        *out = MU_JACT_RESTART_TASK;
        return true;
    }
    for (size_t i = 1; s && i < MU_ARRAY_LEN(actions); i++)
        if (!strcmp(s, actions[i])) {
            *out = (enum mu_jaction)i;
            return true;
        }
    return false;
}

static bool policy_matches(const json_t *p, enum mu_jevent ev, int exit_code,
                           int64_t lasted_ms)
{
    const json_t *code = json_object_get(p, "exitCode");
    const char *timeout = json_string_value(json_object_get(p, "timeout"));
    const json_t *list = json_object_get(p, "events"), *e;
    const char *one = json_string_value(json_object_get(p, "event"));
    bool hit = false;
    size_t i;

    if (json_is_integer(code))
        return ev == MU_JEV_POD_FAILED && json_integer_value(code) == exit_code;
    /* PodPending only means something with a timeout: every pod starts
     * Pending (volcano-api.md §1.3), "*" included */
    if (ev == MU_JEV_NONE || (ev == MU_JEV_POD_PENDING && !timeout))
        return false;
    if (one && (!strcmp(one, "*") || !strcmp(one, mu_jevent_name(ev))))
        hit = true;
    json_array_foreach(list, i, e) {
        const char *s = json_string_value(e);

        if (s && (!strcmp(s, "*") || !strcmp(s, mu_jevent_name(ev))))
            hit = true;
    }
    if (hit && timeout) {
        int64_t t;

        hit = mu_duration_parse(timeout, &t, NULL) == 0 && lasted_ms >= 0 &&
              lasted_ms >= t;
    }
    return hit;
}

static bool first_match(const json_t *policies, enum mu_jevent ev,
                        int exit_code, int64_t lasted_ms, enum mu_jaction *out)
{
    const json_t *p;
    size_t i;

    json_array_foreach(policies, i, p) {
        if (!policy_matches(p, ev, exit_code, lasted_ms))
            continue;
        if (mu_jaction_parse(json_string_value(json_object_get(p, "action")),
                             out))
            return true;
    }
    return false;
}

enum mu_jaction mu_jobsm_policy(const json_t *job, int task,
                                enum mu_jevent ev, int exit_code,
                                int64_t lasted_ms)
{
    const json_t *spec = json_object_get(job, "spec");
    const json_t *tasks = json_object_get(spec, "tasks");
    enum mu_jaction a;

    if (task >= 0 &&
        first_match(json_object_get(json_array_get(tasks, (size_t)task),
                                    "policies"),
                    ev, exit_code, lasted_ms, &a))
        return a;
    if (first_match(json_object_get(spec, "policies"), ev, exit_code,
                    lasted_ms, &a))
        return a;
    return MU_JACT_SYNC;
}

void mu_jobsm_count(const json_t *job, const struct mu_jpod *pods, size_t n,
                    struct mu_jcounts *out)
{
    const json_t *tasks = json_object_get(json_object_get(job, "spec"),
                                          "tasks");
    const json_t *t;
    size_t i;

    memset(out, 0, sizeof(*out));
    out->ntasks = (int)json_array_size(tasks);
    out->task = mu_xcalloc((size_t)out->ntasks + 1, sizeof(*out->task));
    json_array_foreach(tasks, i, t)
        out->total += (int)json_integer_value(json_object_get(t, "replicas"));
    for (i = 0; i < n; i++) {
        const struct mu_jpod *p = &pods[i];

        if (p->terminating) {
            out->terminating++;
            continue;
        }
        switch (p->phase) {
        case MU_POD_PENDING: out->pending++; break;
        case MU_POD_RUNNING: out->running++; break;
        case MU_POD_SUCCEEDED: out->succeeded++; break;
        case MU_POD_FAILED: out->failed++; break;
        default: out->unknown++; break;
        }
        if (p->task >= 0 && p->task < out->ntasks &&
            (unsigned)p->phase < 5)
            out->task[p->task][p->phase]++;
    }
}

void mu_jobsm_counts_release(struct mu_jcounts *c)
{
    free(c->task);
    c->task = NULL;
}

static int job_int(const json_t *job, const char *field, int dflt)
{
    const json_t *v = json_object_get(json_object_get(job, "spec"), field);

    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* Volcano's runningState sync: Completed or Failed once every pod is done;
 * back to Pending when too few pods have started. */
static enum mu_jphase running_sync(const json_t *job,
                                   const struct mu_jcounts *c)
{
    const json_t *tasks = json_object_get(json_object_get(job, "spec"),
                                          "tasks");
    int min_avail = job_int(job, "minAvailable", 0);
    int min_success = job_int(job, "minSuccess", -1);
    int task_min = 0;
    const json_t *t;
    size_t i;

    if (c->total == 0)
        return MU_JOB_RUNNING;
    if (min_success > 0 && c->succeeded >= min_success)
        return MU_JOB_COMPLETED;
    json_array_foreach(tasks, i, t) {
        const json_t *m = json_object_get(t, "minAvailable");

        task_min += json_is_integer(m)
                        ? (int)json_integer_value(m)
                        : (int)json_integer_value(
                              json_object_get(t, "replicas"));
    }
    if (c->succeeded + c->failed == c->total) {
        if (min_avail >= task_min) {
            json_array_foreach(tasks, i, t) {
                const json_t *m = json_object_get(t, "minAvailable");

                if (json_is_integer(m) && (int)i < c->ntasks &&
                    c->task[i][MU_POD_SUCCEEDED] < json_integer_value(m))
                    return MU_JOB_FAILED;
            }
        }
        if (min_success > 0 && c->succeeded < min_success)
            return MU_JOB_FAILED;
        return c->succeeded >= min_avail ? MU_JOB_COMPLETED : MU_JOB_FAILED;
    }
    if (c->pending > c->total - min_avail)
        return MU_JOB_PENDING;
    return MU_JOB_RUNNING;
}

/* A transition that kills pods. Every kill of the whole job deletes its
 * PodGroup (an aborted or finished job must not keep its queue's
 * reservation; a restarted one is enqueued afresh); a restart bumps the
 * version so the pods made next are told from the old ones. */
static void kill(struct mu_jplan *p, enum mu_jkill how, enum mu_jphase to,
                 const char *reason, bool bump)
{
    p->kill = how;
    p->next.phase = to;
    p->reason = reason;
    if (p->kill_task < 0) {
        p->delete_group = true;
        if (bump)
            p->next.version++;
    }
}

void mu_jobsm_step(const json_t *job, const struct mu_jstate *cur,
                   const struct mu_jcounts *c, enum mu_jaction a, int task,
                   struct mu_jplan *p)
{
    int min_avail = job_int(job, "minAvailable", 0);
    int max_retry = job_int(job, "maxRetry", 3);
    bool quiet = c->terminating == 0 && c->pending == 0 && c->running == 0 &&
                 c->unknown == 0;

    memset(p, 0, sizeof(*p));
    p->next = *cur;
    p->kill_task = -1;
    switch (cur->phase) {
    case MU_JOB_PENDING:
    case MU_JOB_RUNNING:
        switch (a) {
        case MU_JACT_RESTART_JOB:
            p->next.retry++;
            /* the last retry keeps finished pods for `kubectl logs` */
            kill(p, p->next.retry >= max_retry ? MU_JKILL_SOFT : MU_JKILL_ALL,
                 MU_JOB_RESTARTING, "RestartJob", true);
            return;
        case MU_JACT_RESTART_TASK:
        case MU_JACT_RESTART_POD:
            p->next.retry++;
            p->kill_task = task;
            kill(p, MU_JKILL_ALL, MU_JOB_RESTARTING, mu_jaction_name(a),
                 false);
            return;
        case MU_JACT_ABORT_JOB:
            kill(p, MU_JKILL_SOFT, MU_JOB_ABORTING, "AbortJob", false);
            return;
        case MU_JACT_TERMINATE_JOB:
            kill(p, MU_JKILL_SOFT, MU_JOB_TERMINATING, "TerminateJob", false);
            return;
        case MU_JACT_COMPLETE_JOB:
            kill(p, MU_JKILL_SOFT, MU_JOB_COMPLETING, "CompleteJob", false);
            return;
        default:
            break;
        }
        p->create = true;
        if (cur->phase == MU_JOB_PENDING)
            p->next.phase = min_avail <= c->running + c->succeeded + c->failed
                                ? MU_JOB_RUNNING
                                : MU_JOB_PENDING;
        else
            p->next.phase = running_sync(job, c);
        if (mu_jphase_final(p->next.phase)) {
            p->create = false;
            p->kill = MU_JKILL_SOFT;
        }
        p->reason = "";
        return;
    case MU_JOB_RESTARTING:
        /* keep killing what the restart targets until it is gone */
        p->kill = MU_JKILL_NONE;
        if (cur->retry >= max_retry) {
            kill(p, MU_JKILL_SOFT, MU_JOB_FAILED, "MaxRetryReached", false);
            return;
        }
        if (c->total - c->terminating >= min_avail) {
            p->next.phase = MU_JOB_PENDING;
            p->create = true;
            p->reason = "Restarted";
        }
        return;
    case MU_JOB_ABORTING:
        if (a == MU_JACT_RESUME_JOB) {
            p->next.retry++;
            kill(p, MU_JKILL_SOFT, MU_JOB_RESTARTING, "ResumeJob", true);
            return;
        }
        p->kill = MU_JKILL_SOFT;
        if (quiet)
            p->next.phase = MU_JOB_ABORTED;
        return;
    case MU_JOB_ABORTED:
        if (a == MU_JACT_RESUME_JOB) {
            p->next.retry++;
            kill(p, MU_JKILL_SOFT, MU_JOB_RESTARTING, "ResumeJob", true);
        }
        return;
    case MU_JOB_COMPLETING:
    case MU_JOB_TERMINATING:
        p->kill = MU_JKILL_SOFT;
        if (quiet)
            p->next.phase = cur->phase == MU_JOB_COMPLETING
                                ? MU_JOB_COMPLETED
                                : MU_JOB_TERMINATED;
        return;
    default:
        /* final: whatever still runs is stopped, nothing starts */
        p->kill = MU_JKILL_SOFT;
        return;
    }
}
