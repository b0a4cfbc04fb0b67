/*
 * What the vcjob controller (jobs.c, job_status.c) still borrows from the
 * daemon until it moves to src/ctrl with a struct mu_ctl of its own
 * (h-jobctl): it goes away with that move. Scheduler thread.
 */
#include "serve/serve_int.h"

int mu_serve_create(struct mu_serve *sv, const char *path, const json_t *obj,
                    struct mu_err *err)
{
    int r = mu_kube_create(sv->kube, path, obj, NULL, err);

    return r == -EEXIST ? 0 : r;
}
