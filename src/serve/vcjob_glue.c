/*
 * What the vcjob controller (jobs.c, job_status.c) still borrows from the
 * daemon until it moves to src/ctrl with a struct mu_ctl of its own
 * (h-jobctl): it goes away with that move. Scheduler thread.
 */
#include "serve/serve_int.h"

#include <stdarg.h>

void mu_serve_log(struct mu_serve *sv, const char *fmt, ...)
{
    va_list ap;
    char line[2048];

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    mu_ctl_log(&sv->ctl, "%s", line);
}

void mu_serve_post_event(struct mu_serve *sv, const char *api,
                         const char *kind, const char *ns, const char *name,
                         const char *uid, const char *type, const char *reason,
                         const char *msg)
{
    mu_ctl_event(&sv->ctl, api, kind, ns, name, uid, type, reason, msg);
}

int mu_serve_create(struct mu_serve *sv, const char *path, const json_t *obj,
                    struct mu_err *err)
{
    int r = mu_kube_create(sv->kube, path, obj, NULL, err);

    return r == -EEXIST ? 0 : r;
}
