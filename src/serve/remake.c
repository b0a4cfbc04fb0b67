/*
 * Pods pinned to a node that cannot run them, deleted or made again
 * (remake.h).
 */
#include "serve/remake.h"

#include "common/clock.h"
#include "kube/paths.h"
#include "serve/podjson.h"

#include <time.h>

static char *pod_path(const struct mu_task *t)
{
    return mu_api_path(MU_API_POD, t->pod.meta.ns, t->pod.meta.name, NULL);
}

static const char *ann(const struct mu_task *t, const char *key)
{
    return mu_kvs_get(&t->pod.meta.annotations, key);
}

static void remake_free(struct mu_remake *c)
{
    if (!c)
        return;
    free(c->key);
    free(c->uid);
    free(c->node);
    free(c->path);
    free(c->coll);
    json_decref(c->made);
    free(c);
}

void mu_remaker_init(struct mu_remaker *m, const struct mu_ctl *ctl,
                     struct mu_enforcer *enf)
{
    m->ctl = ctl;
    m->enf = enf;
    mu_map_init(&m->pods);
}

void mu_remaker_release(struct mu_remaker *m)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&m->pods, &it, NULL, &v))
        remake_free(v);
    mu_map_release(&m->pods);
}

void mu_remaker_pod_gone(struct mu_remaker *m, const char *uid)
{
    struct mu_remake *c = uid ? mu_map_get(&m->pods, uid) : NULL;

    if (!c || !c->deleted_only) /* a pod being made stays till it is */
        return;
    if (c->inflight)
        c->gone = true; /* its done frees it */
    else
        remake_free(mu_map_del(&m->pods, uid));
}

bool mu_remaker_idle(const struct mu_remaker *m)
{
    return !m->pods.n;
}

/* Creates c->made, a few times over a few seconds before the run gives
 * up (the done call then keeps it for a later try). */
#define MU_REMAKE_CREATE_TRIES 3

/* Creates c->made. A name still taken is looked at: the pod made by an
 * earlier try (its reply lost) is success; the old pod still going (a
 * finalizer, a grace period) -EAGAIN, tried again later; another pod
 * -EEXIST: the name is someone else's now. */
static int create_made(struct mu_kube *k, const struct mu_remake *c,
                       struct mu_err *err)
{
    json_t *pod = NULL;
    const json_t *meta;
    int r = mu_kube_create(k, c->coll, c->made, NULL, err);

    if (r != -EEXIST)
        return r;
    if (mu_kube_get(k, c->path, NULL, &pod, NULL) < 0)
        return mu_err_set(err, -EAGAIN, "the name is taken, by a pod that "
                                        "could not be read");
    meta = json_object_get(pod, "metadata");
    if (!mu_strcmp0(json_string_value(json_object_get(
                        json_object_get(meta, "annotations"),
                        "muster.io/made-again-from")),
                    c->uid))
        r = 0;
    else if (!mu_strcmp0(json_string_value(json_object_get(meta, "uid")),
                         c->uid))
        r = mu_err_set(err, -EAGAIN, "the pod it replaces is still going");
    json_decref(pod);
    return r;
}

/* The writer run of a later try: the create alone. */
static int remake_create_run(struct mu_kube *k, const struct mu_write *w,
                             void *ctx, struct mu_err *err)
{
    return create_made(k, ctx, err);
}

int mu_serve_remake_run(struct mu_kube *k, const struct mu_write *w,
                        void *ctx, struct mu_err *err)
{
    struct mu_remake *c = ctx;
    json_t *pod = NULL, *opts, *made;
    const json_t *meta, *anns;
    int r;

    r = mu_kube_get(k, c->path, NULL, &pod, err);
    if (r == -ENOENT)
        return 0; /* gone: nothing to make again */
    if (r < 0)
        return r;
    meta = json_object_get(pod, "metadata");
    anns = json_object_get(meta, "annotations");
    if (mu_strcmp0(json_string_value(json_object_get(meta, "uid")), c->uid) ||
        json_string_value(
            json_object_get(json_object_get(pod, "spec"), "nodeName")) ||
        json_object_get(meta, "deletionTimestamp") ||
        mu_strcmp0(json_string_value(json_object_get(anns, MU_ANN_PINNED)),
                   "true")) {
        json_decref(pod); /* another pod now, bound, going, or unpinned */
        return 0;
    }
    made = mu_serve_remade_pod(pod, c->node);
    json_decref(pod);
    opts = mu_api_delete_options(c->uid, NULL);
    r = mu_kube_call(k, "DELETE", c->path, NULL, opts, NULL, NULL, err);
    json_decref(opts);
    if (r == -ENOENT || r == -EBUSY) { /* gone, or another pod's name now */
        json_decref(made);
        return 0;
    }
    if (r < 0) {
        json_decref(made);
        return r;
    }
    c->made = made; /* from here on the pod must be made (see remake.h) */
    for (int t = 0; t < MU_REMAKE_CREATE_TRIES; t++) {
        struct timespec ts = {0, 300 * 1000000L};

        r = create_made(k, c, err);
        if (!r || r == -EEXIST || r == -EINVAL || r == -EPERM ||
            r == -EACCES)
            break;
        nanosleep(&ts, NULL);
    }
    return r;
}

static void remake_send(struct mu_remaker *rm, struct mu_remake *c);

/* The next try's wait after c->tries failures: 1 s doubling, at most
 * MU_REMAKE_BACKOFF_MAX_MS. */
static int64_t backoff_ms(const struct mu_remake *c)
{
    int64_t b = (int64_t)1000 << (c->tries < 6 ? c->tries : 6);

    return b > MU_REMAKE_BACKOFF_MAX_MS ? MU_REMAKE_BACKOFF_MAX_MS : b;
}

/* On the scheduler thread: the delete of a controlled pod completed. Done
 * or the pod already gone: its entry waits for the DELETED event. Failed:
 * kept until next_ns, then forgotten, and the pod looked at again. */
static void deleted_done(void *ctx, int rc, const char *msg)
{
    struct mu_remake *c = ctx;
    struct mu_remaker *rm = c->rm;

    c->inflight = false;
    if (c->gone) {
        remake_free(mu_map_del(&rm->pods, c->uid));
        return;
    }
    if (!rc) {
        c->tries = 0; /* gone or going: waiting for its DELETED event */
        return;
    }
    if (rc == -ECANCELED)
        return;
    c->tries++;
    c->next_ns = mu_now_ns() + backoff_ms(c) * 1000000;
    mu_ctl_log(rm->ctl, "pod %s: deleting it failed (try %d): %s; looking at "
                        "it again in %lld ms", c->key, c->tries, msg,
               (long long)backoff_ms(c));
}

/* On the scheduler thread: a remake write completed. */
static void remake_done(void *ctx, int rc, const char *msg)
{
    struct mu_remake *c = ctx;
    struct mu_remaker *rm = c->rm;
    int64_t backoff;

    c->inflight = false;
    if (!rc && c->made) {
        mu_ctl_log(rm->ctl, "pod %s was pinned to %s, which cannot run it, "
                            "and has no controller: made again, unpinned, "
                            "gated", c->key, c->node);
    } else if (rc == -EEXIST && c->made) {
        /* another pod holds the name: say what this one was, whole */
        char *txt = json_dumps(c->made, JSON_COMPACT);

        mu_ctl_log(rm->ctl, "pod %s was deleted to be made again, and another "
                            "pod of that name was made meanwhile; it was: %s",
                   c->key, txt);
        free(txt);
    } else if (rc && c->made && rc != -ECANCELED) {
        c->tries++;
        backoff = backoff_ms(c);
        c->next_ns = mu_now_ns() + backoff * 1000000;
        mu_ctl_log(rm->ctl, "pod %s was deleted to be made again unpinned, "
                            "and creating it failed (try %d): %s; trying "
                            "again in %lld ms", c->key, c->tries, msg,
                   (long long)backoff);
        return; /* kept: sent again by mu_remaker_recover */
    } else if (rc && c->made) {
        /* the writer stops: the pod is not made; say what it was */
        char *txt = json_dumps(c->made, JSON_COMPACT);

        mu_ctl_log(rm->ctl, "pod %s was deleted to be made again and muster "
                            "stops before it is: %s", c->key, txt);
        free(txt);
    } else if (rc && rc != -ECANCELED) {
        mu_ctl_log(rm->ctl, "pod %s: making it again unpinned failed (it is "
                            "left as it was): %s", c->key, msg);
    }
    remake_free(mu_map_del(&rm->pods, c->uid));
}

/* Sends c's write: the whole run, or only the create once deleted. */
static void remake_send(struct mu_remaker *rm, struct mu_remake *c)
{
    struct mu_write w = {.method = c->made ? "POST" : "DELETE",
                         .path = c->made ? c->coll : c->path,
                         .key = c->path,
                         .run = c->made ? remake_create_run
                                        : mu_serve_remake_run,
                         .done = remake_done,
                         .ctx = c};

    c->inflight = true;
    if (mu_writer_submit(rm->ctl->writer, &w) < 0) {
        c->inflight = false;
        mu_ctl_log(rm->ctl, "making pod %s again: not sent: stopping", c->key);
    }
}

/* The node t is pinned to, when t is pinned by a release no longer live
 * and that node is gone or unschedulable (see remake.h); else NULL. *n:
 * the node's cache entry (NULL: gone). */
static const char *stuck_on(const struct mu_remaker *rm,
                            const struct mu_task *t,
                            const struct mu_cnode **n)
{
    const char *node;

    if (!t->pod.meta.uid || t->pod.meta.deleting || t->pod.node_name ||
        t->pod.muster_gate || t->pod.phase != MU_POD_PENDING ||
        !(node = ann(t, MU_ANN_RESERVED)) ||
        mu_strcmp0(ann(t, MU_ANN_PINNED), "true") ||
        mu_enforcer_resv(rm->enf, t->key))
        return NULL;
    *n = mu_cluster_node(rm->ctl->cluster, node);
    if (*n && !(*n)->spec.unschedulable)
        return NULL; /* it can run there: the cycle plans it there */
    return node;
}

/* Sends the delete of controlled pod t, entry m. */
static void delete_send(struct mu_remaker *rm, struct mu_remake *m,
                        struct mu_task *t)
{
    m->inflight = true;
    if (mu_enforcer_delete_unbound(rm->enf, t, deleted_done, m) < 0)
        m->inflight = false; /* stopping: kept, never sent */
}

/* An entry whose time has come: a create sent again; a failed delete sent
 * again if its pod is still stuck, else forgotten. */
static void retry(struct mu_remaker *rm, struct mu_remake *m)
{
    struct mu_task *t;
    const struct mu_cnode *n;

    if (!m->deleted_only) {
        if (m->made)
            remake_send(rm, m);
        return;
    }
    t = mu_map_get(&rm->ctl->cluster->task_by_key, m->key);
    if (!m->tries) {
        /* its delete went: waiting for the pod to go. A pod no longer in
         * the cache under that uid is gone, its DELETED event missed (a
         * relist, the name taken by the pod its controller made again) */
        if (!t || mu_strcmp0(t->pod.meta.uid, m->uid))
            remake_free(mu_map_del(&rm->pods, m->uid));
        return;
    }
    if (t && !mu_strcmp0(t->pod.meta.uid, m->uid) && stuck_on(rm, t, &n)) {
        mu_ctl_log(rm->ctl, "pod %s: deleting it again (try %d)", m->key,
                   m->tries + 1);
        delete_send(rm, m, t);
    } else {
        remake_free(mu_map_del(&rm->pods, m->uid));
    }
}

void mu_remaker_recover(struct mu_remaker *rm)
{
    struct mu_cluster *c = rm->ctl->cluster;
    int64_t now = mu_now_ns();
    size_t it = 0;
    void *v;

    while (mu_map_next(&rm->pods, &it, NULL, &v)) {
        struct mu_remake *m = v;

        if (!m->inflight && now >= m->next_ns)
            retry(rm, m);
    }
    for (size_t i = 0; i < c->ntasks; i++) {
        struct mu_task *t = c->tasks[i];
        const char *node;
        const struct mu_cnode *n;
        struct mu_remake *m;

        if (!(node = stuck_on(rm, t, &n)) ||
            mu_map_get(&rm->pods, t->pod.meta.uid))
            continue;
        m = mu_xcalloc(1, sizeof(*m));
        m->rm = rm;
        m->key = mu_xstrdup(t->key);
        m->uid = mu_xstrdup(t->pod.meta.uid);
        mu_map_put(&rm->pods, m->uid, m);
        if (t->pod.meta.owner_kind) {
            mu_ctl_log(rm->ctl, "pod %s is pinned to %s, which %s; deleting "
                                "it (its controller makes it again)",
                       t->key, node, n ? "is unschedulable" : "is gone");
            /* once: the entry goes with the pod (mu_remaker_pod_gone) */
            m->deleted_only = true;
            delete_send(rm, m, t);
            continue;
        }
        mu_ctl_log(rm->ctl, "pod %s is pinned to %s, which %s, and has no "
                            "controller: making it again, unpinned", t->key,
                   node, n ? "is unschedulable" : "is gone");
        m->node = mu_xstrdup(node);
        m->path = pod_path(t);
        m->coll = mu_api_path(MU_API_POD, t->pod.meta.ns, NULL, NULL);
        remake_send(rm, m);
    }
}
