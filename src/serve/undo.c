/*
 * undo.c - deleting a pod the barrier undoes (undo.h).
 */
#include "serve/undo.h"

#include <errno.h>
#include <stdlib.h>

#include "kube/client.h"
#include "kube/paths.h"

static void push(const struct mu_undo *u, const char *ns, const char *name,
                 const char *uid, bool on)
{
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    ev->src = MU_SRC_UNDO;
    ev->ok = on;
    ev->obj = json_pack("{s:s,s:s}", "namespace", ns, "name", name);
    ev->detail = mu_xstrdup_or_null(uid);
    mu_evq_push(u->q, ev);
}

int mu_undo_pod(const struct mu_undo *u, const char *ns, const char *name,
                const char *uid, struct mu_err *err)
{
    struct mu_kube *k;
    char *path;
    json_t *opts;
    int r;

    push(u, ns, name, uid, true);
    k = mu_kube_pool_get(u->pool, err);
    path = mu_api_path(MU_API_POD, ns, name, NULL);
    opts = mu_api_delete_options(uid ? uid : "", NULL);
    r = k ? mu_kube_call(k, "DELETE", path, NULL, opts, NULL, NULL, err)
          : -ENOMEM;
    if (r == -ENOENT || r == -EBUSY) /* gone, or the name is another's */
        r = 0;
    if (mu_kube_not_done(r)) /* still there, still bound */
        push(u, ns, name, uid, false);
    mu_kube_pool_put(u->pool, k);
    json_decref(opts);
    free(path);
    return r;
}
