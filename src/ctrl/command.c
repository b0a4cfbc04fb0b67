/* bus.volcano.sh/v1alpha1 Commands, decoded and checked (see command.h). */
#include "ctrl/command.h"

#include "api/json.h"

const char *const mu_command_job_actions[] = {
    "AbortJob",    "ResumeJob",   "RestartJob", "TerminateJob",
    "CompleteJob", "RestartTask", NULL,
};

void mu_command_release(struct mu_command *c)
{
    mu_meta_release(&c->meta);
    free(c->action);
    free(c->target);
    free(c->target_uid);
    free(c->reason);
    free(c->message);
    memset(c, 0, sizeof(*c));
}

/* obj[key] when a string, copied, else NULL. */
static char *dup_str(const json_t *obj, const char *key)
{
    return mu_xstrdup_or_null(mu_json_str(obj, key));
}

static bool is_job_action(const char *a)
{
    for (size_t i = 0; mu_command_job_actions[i]; i++)
        if (!strcmp(a, mu_command_job_actions[i]))
            return true;
    return false;
}

/* apiVersion "group/version" is in group (an absent one is accepted). */
static bool in_group(const char *api_version, const char *group)
{
    size_t n = strlen(group);

    return !api_version ||
           (!strncmp(api_version, group, n) && api_version[n] == '/');
}

static int check_target(struct mu_command *c, const json_t *target,
                        const char *kind, const char *group, struct mu_err *err)
{
    const char *k = json_string_value(json_object_get(target, "kind"));
    const char *api = json_string_value(json_object_get(target, "apiVersion"));

    if (!k || !*k)
        return mu_err_set(err, -EINVAL, "target.kind: required (%s)", kind);
    if (strcmp(k, kind))
        return mu_err_set(err, -EINVAL, "%s acts on a %s, not on a %s",
                          c->action, kind, k);
    if (!in_group(api, group))
        return mu_err_set(err, -EINVAL,
                          "target.apiVersion: a %s of %s/..., not \"%s\"", kind,
                          group, api);
    return 0;
}

int mu_command_decode(const json_t *j, struct mu_command *out,
                      struct mu_err *err)
{
    const json_t *target;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(j))
        return mu_err_set(err, -EINVAL, "a Command must be an object");
    rc = mu_meta_decode(json_object_get(j, "metadata"), true, &out->meta, err);
    if (rc)
        return rc;
    out->action = dup_str(j, "action");
    out->reason = dup_str(j, "reason");
    out->message = dup_str(j, "message");
    target = json_object_get(j, "target");
    if (json_is_object(target)) {
        out->target = dup_str(target, "name");
        out->target_uid = dup_str(target, "uid");
    }
    if (!out->action || !*out->action)
        return mu_err_set(err, -EINVAL, "action: required");
    if (!json_is_object(target))
        return mu_err_set(err, -EINVAL,
                          "target: required, the object to act on "
                          "(apiVersion, kind, name, uid)");
    if (!out->target || !*out->target)
        return mu_err_set(err, -EINVAL, "target.name: required");
    if (!mu_qaction_parse(out->action, &out->qaction) &&
        out->qaction != MU_QACT_SYNC) {
        rc = check_target(out, target, "Queue", "scheduling.volcano.sh", err);
        if (!rc)
            out->on = MU_COMMAND_QUEUE;
        return rc;
    }
    if (is_job_action(out->action)) {
        rc = check_target(out, target, "Job", "batch.volcano.sh", err);
        if (!rc)
            out->on = MU_COMMAND_JOB;
        return rc;
    }
    return mu_err_set(err, -EINVAL,
                      "unknown action \"%.64s\": muster carries out "
                      "OpenQueue and CloseQueue on a Queue, and AbortJob, "
                      "ResumeJob, RestartJob, TerminateJob, CompleteJob and "
                      "RestartTask on a vcjob",
                      out->action);
}
