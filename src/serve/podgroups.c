/*
 * What is left of the PodGroup controller in serve (ctrl/pgctl.h has the
 * rest): the default queue, made when it is missing, and the synchronous
 * create the vcjob controller still uses.
 */
#include "api/implicit.h"
#include "serve/serve_int.h"

int mu_serve_create(struct mu_serve *sv, const char *path, const json_t *obj,
                    struct mu_err *err)
{
    int r = mu_kube_create(sv->kube, path, obj, NULL, err);

    return r == -EEXIST ? 0 : r;
}

static int create(struct mu_serve *sv, const char *path, const json_t *obj)
{
    struct mu_err err;
    int r = mu_serve_create(sv, path, obj, &err);

    if (r < 0)
        mu_serve_log(sv, "create in %s: %s", path, err.msg);
    return r;
}

/* Volcano's scheduler makes the default queue when it is missing. */
void mu_serve_default_queue(struct mu_serve *sv)
{
    json_t *q;

    if (mu_cluster_queue(&sv->cluster, "default"))
        return;
    q = mu_default_queue();
    if (create(sv, "/apis/scheduling.volcano.sh/v1beta1/queues", q) == 0)
        mu_serve_log(sv, "created queue default");
    json_decref(q);
}

