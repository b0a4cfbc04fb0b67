/*
 * bus.volcano.sh/v1alpha1 Commands: how vcctl opens and closes queues and
 * suspends or resumes jobs. Each Command is deleted first and carried out
 * only when the delete succeeded, as Volcano does, so none is carried out
 * twice (a Command seen again after a relist finds itself gone). A Command
 * muster cannot carry out is deleted too, with a log line and a Warning
 * event naming it and saying why.
 */
#include "serve/serve_int.h"

#include "ctrl/command.h"
#include "ctrl/queue.h"

/* Deletes the Command. Returns 0, -ENOENT when it is already gone (handled
 * before), or another -errno (logged). */
static int delete_command(struct mu_serve *sv, const struct mu_command *c)
{
    char *path =
        mu_xasprintf("/apis/bus.volcano.sh/v1alpha1/namespaces/%s/commands/%s",
                     c->meta.ns, c->meta.name);
    struct mu_err err;
    int r = mu_kube_delete(sv->kube, path, NULL, NULL, &err);

    if (r < 0 && r != -ENOENT)
        mu_serve_log(sv,
                     "command %s/%s: cannot delete it, so it is not "
                     "carried out: %s",
                     c->meta.ns, c->meta.name, err.msg);
    free(path);
    return r;
}

static void refuse(struct mu_serve *sv, const struct mu_command *c,
                   const char *why)
{
    char *msg = mu_xasprintf("command %s/%s (action %s) not carried out and "
                             "deleted: %s",
                             c->meta.ns, c->meta.name,
                             c->action ? c->action : "none", why);

    mu_serve_log(sv, "%s", msg);
    mu_serve_post_event(sv, "bus.volcano.sh/v1alpha1", "Command", c->meta.ns,
                        c->meta.name, c->meta.uid, "Warning", "BadCommand",
                        msg);
    free(msg);
}

/* Every cache but the Commands' own has listed once. */
static bool caches_synced(const struct mu_serve *sv)
{
    for (int s = 0; s < MU_SRC__COUNT; s++)
        if (s != MU_SRC_COMMAND && !sv->synced[s])
            return false;
    return true;
}

/* OpenQueue / CloseQueue: the request waits in the queue controller's
 * memory for the next status write (status.c), which moves the state. */
static bool queue_command(struct mu_serve *sv, const struct mu_command *c)
{
    const struct mu_cqueue *q = mu_cluster_queue(&sv->cluster, c->target);
    char *by;

    if (!q && sv->synced[MU_SRC_QUEUE]) {
        char *why = mu_xasprintf("queue %s does not exist", c->target);

        refuse(sv, c, why);
        free(why);
        return false;
    }
    by = mu_xasprintf("%s/%s", c->meta.ns, c->meta.name);
    /* before the queues have listed, the uid is learnt from the queue */
    mu_qctl_request(
        mu_qctl_get(&sv->written, c->target, q ? q->spec.meta.uid : NULL),
        c->qaction, by);
    mu_serve_log(sv, "command %s: %s %s", by, c->action, c->target);
    free(by);
    return true;
}

static bool job_command(struct mu_serve *sv, const struct mu_command *c)
{
    char *msg = mu_xasprintf("Start to execute command %s, and clean it up "
                             "to make sure executed not more than once.",
                             c->action);

    mu_serve_log(sv, "command %s/%s: %s vcjob %s/%s%s", c->meta.ns,
                 c->meta.name, c->action, c->meta.ns, c->target,
                 caches_synced(sv) ? "" : " (caches not synced yet)");
    mu_serve_post_event(sv, "batch.volcano.sh/v1alpha1", "Job", c->meta.ns,
                        c->target, c->target_uid, "Normal", "CommandIssued",
                        msg);
    free(msg);
    mu_jobctl_command(sv->jobctl, c->meta.ns, c->target, c->action);
    return true;
}

bool mu_serve_command(struct mu_serve *sv, struct mu_ev *ev)
{
    struct mu_command c;
    struct mu_err err;
    bool changed = false;
    int r;

    if (!ev->obj ||
        (ev->type != MU_WATCH_LIST_ITEM && ev->type != MU_WATCH_ADDED &&
         ev->type != MU_WATCH_MODIFIED))
        return false;
    r = mu_command_decode(ev->obj, &c, &err);
    if (!c.meta.name) {
        mu_serve_log(sv, "ignoring a Command: %s", err.msg);
        goto out;
    }
    if (c.meta.deleting || delete_command(sv, &c) < 0)
        goto out;
    if (r < 0)
        refuse(sv, &c, err.msg);
    else if (c.on == MU_COMMAND_QUEUE)
        changed = queue_command(sv, &c);
    else
        changed = job_command(sv, &c);
out:
    mu_command_release(&c);
    return changed;
}
