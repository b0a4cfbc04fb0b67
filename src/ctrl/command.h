/*
 * command.h - Volcano's bus.volcano.sh/v1alpha1 Command, the object vcctl
 * creates to act on a queue or a vcjob (`vcctl queue operate -a close`,
 * `vcctl job suspend`), decoded and checked. Pure.
 *
 * A Command is {metadata, action, target, reason, message}; target is an
 * OwnerReference {apiVersion, kind, name, uid}. vcctl makes one per action
 * (generateName "<target>-<action lower case>-"), queue Commands in
 * namespace "default"; a job Command acts on the vcjob of its own
 * namespace. The controller carries a Command out once and deletes it.
 *
 * Ownership: the decoded struct owns its strings; release it with
 * mu_command_release() (also after a failed decode).
 */
#ifndef MU_CTRL_COMMAND_H
#define MU_CTRL_COMMAND_H

#include <jansson.h>

#include "common/mu.h"
#include "ctrl/queue.h"

/* What a Command acts on. */
enum mu_command_on {
    MU_COMMAND_BAD = 0, /* not carried out (see the decode error) */
    MU_COMMAND_QUEUE,   /* OpenQueue, CloseQueue on a Queue */
    MU_COMMAND_JOB,     /* a job action on a vcjob (kind Job) */
};

struct mu_command {
    struct mu_meta meta; /* name, namespace ("default" when absent), uid */
    char *action;        /* as written, or NULL */
    enum mu_command_on on;
    enum mu_qaction qaction; /* for MU_COMMAND_QUEUE */
    char *target;            /* target.name */
    char *target_uid;        /* target.uid, or NULL */
    char *reason, *message;  /* optional, as written */
};

/* The job actions a Command may carry, NULL-terminated:
 * AbortJob, ResumeJob, RestartJob, TerminateJob, CompleteJob, RestartTask. */
extern const char *const mu_command_job_actions[];

/*
 * Decodes and checks one Command. Returns 0 with out->on QUEUE or JOB, or
 * -EINVAL with err saying what is wrong: metadata without a name, no
 * action, an action muster does not know, no target or one without kind
 * or name, an action for another kind ("CloseQueue acts on a Queue, not on
 * a Job"), a target apiVersion of another group. Unless the metadata
 * itself was bad, out->meta (and what else could be read) is filled even
 * on failure, so the caller can name the Command and delete it.
 */
int mu_command_decode(const json_t *j, struct mu_command *out,
                      struct mu_err *err);
void mu_command_release(struct mu_command *c);

#endif
