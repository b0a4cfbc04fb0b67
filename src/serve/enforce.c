/*
 * Carrying out a cycle: release gangs (ungate and pin muster's pods, wake
 * other operators' pods), evict victims (status is written by status.c).
 */
#include "serve/enforce.h"
#include "serve/podjson.h"

#include "api/nodecheck.h"
#include "api/strconv.h"
#include "api/vcjob.h"
#include "common/clock.h"
#include "kube/paths.h"

#include <time.h>

#define MU_STRATEGIC_MERGE_PATCH "application/strategic-merge-patch+json"

/* Wakes of one reservation after a /filter miss (mu_enforcer_filter_miss):
 * enough for a nomination that lost a race, not a loop when kube-scheduler
 * keeps failing the node (the release then expires and is planned again). */
#define MU_REWAKE_MAX 3

static char *pod_path(const struct mu_task *t)
{
    return mu_api_path(MU_API_POD, t->pod.meta.ns, t->pod.meta.name, NULL);
}

static void resv_free(struct mu_resv *r)
{
    if (!r)
        return;
    free(r->key);
    free(r->uid);
    free(r->node);
    free(r->release);
    free(r);
}

void mu_enforcer_init(struct mu_enforcer *e, const struct mu_ctl *ctl,
                      int64_t bind_timeout_ms)
{
    memset(e, 0, sizeof(*e));
    e->ctl = ctl;
    e->bind_timeout_ms = bind_timeout_ms;
    /* release ids stay unique across processes (a new leader's are never
     * an old one's, written on the pods): seeded from the start time */
    e->release_seq = (uint64_t)time(NULL) << 20;
    e->window = MU_RELEASE_WINDOW_START;
    mu_map_init(&e->resv);
    mu_map_init(&e->announced);
    mu_map_init(&e->unseen);
    mu_map_init(&e->partial);
    mu_map_init(&e->ungating);
}

/* A batch of gated pods whose release patches are out (e->ungating). */
struct ungating {
    char **keys; /* its members' pod keys */
    int n;
    int left;    /* patches not yet landed */
    bool failed; /* one failed: the batch is not bound by muster */
    bool ready;  /* every patch landed (counted in e->nready) */
};

static void ungating_free(struct ungating *u)
{
    if (!u)
        return;
    for (int i = 0; i < u->n; i++)
        free(u->keys[i]);
    free(u->keys);
    free(u);
}

void mu_enforcer_release(struct mu_enforcer *e)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&e->resv, &it, NULL, &v))
        resv_free(v);
    it = 0;
    while (mu_map_next(&e->partial, &it, NULL, &v))
        free(v);
    it = 0;
    while (mu_map_next(&e->ungating, &it, NULL, &v))
        ungating_free(v);
    mu_map_release(&e->ungating);
    mu_map_release(&e->resv);
    mu_map_release(&e->announced);
    mu_map_release(&e->unseen);
    mu_map_release(&e->partial);
    mu_recent_release(&e->recent);
}

const struct mu_resv *mu_enforcer_resv(const struct mu_enforcer *e,
                                       const char *key)
{
    return mu_map_get(&e->resv, key);
}

void mu_enforcer_pod_seen(struct mu_enforcer *e, struct mu_task *t)
{
    struct mu_resv *r = mu_map_get(&e->resv, t->key);
    struct mu_cnode *n;

    if (!r)
        return;
    if (t->pod.node_name || t->pod.meta.deleting ||
        mu_strcmp0(t->pod.meta.uid, r->uid)) {
        resv_free(mu_map_del(&e->resv, t->key));
        return;
    }
    n = mu_cluster_node(e->ctl->cluster, r->node);
    if (n && t->status == MU_TASK_PENDING)
        mu_task_place(e->ctl->cluster, t, n, MU_TASK_BINDING);
}

void mu_enforcer_pod_gone(struct mu_enforcer *e, const char *key,
                          const char *uid)
{
    resv_free(mu_map_del(&e->resv, key));
    if (uid) {
        mu_map_del(&e->announced, uid);
        mu_map_del(&e->unseen, uid);
    }
}

/* The JSON patch ops that set the release's annotations on pod as read
 * (mu_serve_release_annotate's, for mu_serve_release_patch). */
static void annotate_ops(json_t *ops, const json_t *pod,
                         const struct mu_release *c)
{
    const json_t *ann =
        json_object_get(json_object_get(pod, "metadata"), "annotations");
    json_t *want = json_object(), *v;
    const char *k;

    mu_serve_release_annotate(want, c->release, c->batch, c->node, true);
    v = json_object_get(json_object_get(want, "metadata"), "annotations");
    if (!json_is_object(ann)) {
        json_array_append_new(ops, json_pack("{s:s,s:s,s:O}", "op", "add",
                                             "path", "/metadata/annotations",
                                             "value", v));
    } else {
        json_t *x;

        json_object_foreach(v, k, x) {
            char *path = mu_xasprintf("/metadata/annotations/%s", k);
            char *slash;

            /* RFC 6901: "/" in a key is "~1" ("muster.io/x") */
            while ((slash = strchr(path + strlen("/metadata/annotations/"),
                                   '/'))) {
                char *t = mu_xasprintf("%.*s~1%s", (int)(slash - path), path,
                                       slash + 1);

                free(path);
                path = t;
            }
            json_array_append_new(ops, json_pack("{s:s,s:s,s:O}", "op", "add",
                                                 "path", path, "value", x));
            free(path);
        }
    }
    json_decref(want);
}

/* On a worker: GET the pod, then the JSON patch built from it, guarded by
 * its uid (test op): the general case, two requests. */
static int release_read_patch(struct mu_kube *k, const char *path,
                              const struct mu_release *c,
                              struct mu_err *err)
{
    json_t *pod = NULL, *patch;
    const char *uid;
    int r;

    r = mu_kube_get(k, path, NULL, &pod, err);
    if (r < 0)
        return r;
    uid = json_string_value(
        json_object_get(json_object_get(pod, "metadata"), "uid"));
    if (c->uid && mu_strcmp0(uid, c->uid)) {
        r = mu_err_set(err, -ESTALE, "%s: uid %s, released as %s", path,
                       uid ? uid : "(none)", c->uid);
        json_decref(pod);
        return r;
    }
    patch = mu_serve_release_patch(pod, c->node);
    annotate_ops(patch, pod, c);
    if (c->uid)
        json_array_insert_new(patch, 0,
                              json_pack("{s:s,s:s,s:s}", "op", "test", "path",
                                        "/metadata/uid", "value", c->uid));
    r = mu_kube_call(k, "PATCH", path, NULL, patch,
                     "application/json-patch+json", NULL, err);
    json_decref(patch);
    json_decref(pod);
    return r;
}

int mu_serve_release_run(struct mu_kube *k, const struct mu_write *w,
                         void *ctx, struct mu_err *err)
{
    const struct mu_release *c = ctx;
    int r;

    if (!c->gated) {
        json_t *record;

        r = mu_kube_call(k, w->method, w->path, NULL, w->body,
                         w->content_type, NULL, err);
        /* kube-scheduler tried the pod before its wake-up arrived, found
         * the node and bound it (or the barrier bound it with its gang):
         * nothing left to wake, as the apiserver refuses a nomination on a
         * bound pod with this message. The release's annotations still go
         * on it, alone: they are the record a new leader adopts the
         * release from (mu_enforcer_adopt) and kubectl shows. */
        if (r != -EINVAL || !strstr(err->msg, "already bound"))
            return r;
        record = json_deep_copy(w->body);
        json_object_del(record, "status");
        r = mu_kube_call(k, w->method, w->path, NULL, record,
                         w->content_type, NULL, err);
        json_decref(record);
        return r;
    }
    if (!c->smp)
        return release_read_patch(k, w->path, c, err);
    r = mu_kube_call(k, w->method, w->path, NULL, w->body, w->content_type,
                     NULL, err);
    /* refused as a whole (the pod has terms after all, or the server knows
     * no strategic merge for it): read the pod and patch what is there */
    if (r == -EINVAL || r == -EOPNOTSUPP || r == -EPROTO)
        r = release_read_patch(k, w->path, c, err);
    return r;
}

static void release_ctx_free(struct mu_release *c)
{
    free(c->key);
    free(c->release);
    free(c->node);
    free(c->uid);
    free(c);
}

/* One more of u's patches is over (ok: it landed); the last one makes
 * the batch ready, or drops it when one failed. */
static void ungating_step(struct mu_enforcer *e, const char *release,
                          struct ungating *u, bool ok)
{
    u->failed |= !ok;
    if (--u->left > 0)
        return;
    if (u->failed) {
        ungating_free(mu_map_del(&e->ungating, release));
        return;
    }
    u->ready = true;
    e->nready++;
}

/* On the scheduler thread: a release write completed. A failed one makes
 * its batch expire at the next cycle (mu_enforcer_expire), unless the batch
 * is over already (a newer release or none holds the pod). A gated pod's
 * that landed marks it ungated, and counts for its batch (e->ungating). */
static void release_done(void *ctx, int rc, const char *msg)
{
    struct mu_release *c = ctx;
    struct mu_enforcer *e = c->enf;
    struct mu_resv *r = mu_map_get(&e->resv, c->key);
    bool mine = r && !strcmp(r->release, c->release);
    struct ungating *u;

    if (rc < 0 && rc != -ECANCELED)
        mu_ctl_log(e->ctl, "release of pod %s to %s failed: %s", c->key,
                   c->node, msg);
    if (rc < 0 && mine) {
        r->pinned = false;
        r->since_ns = 0; /* expires at the next cycle */
    }
    if (c->gated && rc == 0 && mine)
        r->ungated = true;
    if (c->gated && (u = mu_map_get(&e->ungating, c->release)))
        ungating_step(e, c->release, u, rc == 0 && mine);
    release_ctx_free(c);
}

/* Hands the release of one pod to the writer: muster's gated pods are
 * ungated and pinned (one strategic merge patch when they have no node
 * affinity term, else a read and a JSON patch), other pods are woken with
 * mu_serve_wake_patch on pods/<name>/status; wake names the wake-up.
 * False when the writer refused it (stopping): no done call will come. */
static bool release_pod(struct mu_enforcer *e, struct mu_task *t,
                        const char *node, const char *release, int batch,
                        const char *wake)
{
    struct mu_release *c = mu_xcalloc(1, sizeof(*c));
    char *path = pod_path(t), *status = NULL;
    bool sent = true;
    struct mu_write w = {.method = "PATCH",
                         .path = path,
                         .flags = MU_WRITE_URGENT, /* a gang waits on it */
                         .run = mu_serve_release_run,
                         .done = release_done,
                         .ctx = c};

    c->enf = e;
    c->key = mu_xstrdup(t->key);
    c->release = mu_xstrdup(release);
    c->node = mu_xstrdup(node);
    c->uid = mu_xstrdup_or_null(t->pod.meta.uid);
    c->batch = batch;
    c->gated = t->pod.muster_gate;
    c->smp = c->gated && !t->pod.affinity.nterms;
    if (c->smp) {
        w.body = mu_serve_release_smp(c->uid, node);
        mu_serve_release_annotate(w.body, release, batch, node, true);
        w.content_type = MU_STRATEGIC_MERGE_PATCH;
    } else if (!c->gated) {
        /* not ours to pin: wake it so kube-scheduler asks /filter again,
         * with the node nominated so it tries that node first */
        status = mu_api_path(MU_API_POD, t->pod.meta.ns, t->pod.meta.name,
                             "status");
        w.path = status;
        w.key = path; /* in order with the pod's other writes */
        w.body = mu_serve_wake_patch(c->uid, node, wake);
        mu_serve_release_annotate(w.body, release, batch, node, false);
        w.content_type = MU_KUBE_MERGE_PATCH;
    }
    if (mu_writer_submit(e->ctl->writer, &w) < 0) {
        struct mu_resv *r = mu_map_get(&e->resv, t->key);

        mu_ctl_log(e->ctl, "release of pod %s to %s not sent: stopping",
                   t->key, node);
        if (r) {
            r->pinned = false;
            r->since_ns = 0;
        }
        release_ctx_free(c);
        sent = false;
    }
    free(path);
    free(status);
    return sent;
}

void mu_enforcer_filter_miss(struct mu_enforcer *e, const char *uid)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&e->resv, &it, NULL, &v)) {
        struct mu_resv *r = v;
        struct mu_task *t;
        char *wake;

        if (mu_strcmp0(r->uid, uid))
            continue;
        t = mu_map_get(&e->ctl->cluster->task_by_key, r->key);
        /* a batch bound at its release is never woken: kube-scheduler
         * trying a member first is no miss */
        if (r->pinned || r->direct || !t || t->pod.muster_gate ||
            t->pod.node_name || r->wakes >= MU_REWAKE_MAX)
            return;
        r->wakes++;
        wake = mu_xasprintf("%s/%d", r->release, r->wakes);
        mu_ctl_log(e->ctl, "pod %s was tried without its node %s; waking it "
                           "again (%d of %d)", r->key, r->node, r->wakes,
                   MU_REWAKE_MAX);
        release_pod(e, t, r->node, r->release, r->batch, wake);
        free(wake);
        return;
    }
}

/* Deletes pod t through the writer, after any write already queued for it
 * (a release patch); only that pod (its uid as precondition: one made again
 * under the name is spared); fire and forget, a pod already gone is fine. */
static int delete_pod_then(struct mu_enforcer *e, const struct mu_task *t,
                           const char *path,
                            void (*done)(void *ctx, int rc, const char *msg),
                            void *ctx)
{
    struct mu_write w = {.method = "DELETE", .path = path,
                         .body = mu_api_delete_options(t->pod.meta.uid, NULL),
                         .flags = MU_WRITE_GONE_OK, .done = done, .ctx = ctx};
    int r = mu_writer_submit(e->ctl->writer, &w);

    if (r < 0)
        mu_ctl_log(e->ctl, "delete %s not sent: stopping", path);
    return r;
}

static void delete_pod(struct mu_enforcer *e, const struct mu_task *t,
                       const char *path)
{
    (void)delete_pod_then(e, t, path, NULL, NULL);
}

int mu_enforcer_delete_unbound(struct mu_enforcer *e, struct mu_task *t,
                               void (*done)(void *ctx, int rc,
                                            const char *msg),
                               void *ctx)
{
    char *path = pod_path(t);
    int r;

    mu_task_set_status(e->ctl->cluster, t, MU_TASK_UNKNOWN);
    r = delete_pod_then(e, t, path, done, ctx);
    free(path);
    return r;
}

static void add_resv(struct mu_enforcer *e, struct mu_task *t, const char *node,
                     const char *release, int batch, bool pinned)
{
    struct mu_resv *r = mu_xcalloc(1, sizeof(*r));

    r->key = mu_xstrdup(t->key);
    r->uid = mu_xstrdup_or_null(t->pod.meta.uid);
    r->node = mu_xstrdup(node);
    r->release = mu_xstrdup(release);
    r->batch = batch;
    r->pinned = pinned;
    r->since_ns = mu_now_ns();
    resv_free(mu_map_put(&e->resv, r->key, r)); /* an older one */
}

bool mu_enforcer_reserve(struct mu_enforcer *e,
                         const struct mu_cycle_out *out)
{
    size_t i;

    for (i = 0; i < out->nbinds;) {
        const struct mu_job *j = out->binds[i]->job;
        size_t k = i;
        char *id;

        while (k < out->nbinds && out->binds[k]->job == j)
            k++;
        id = mu_xasprintf("%s#%llu", j ? j->key : out->binds[i]->key,
                          (unsigned long long)++e->release_seq);
        mu_ctl_log(e->ctl, "release %s: %zu pods", id, k - i);
        mu_recent_add(&e->recent, "release", mu_wall_ms() / 1000, "%s: %zu pod(s) to %s%s",
                      id, k - i, out->binds[i]->node->spec.meta.name,
                      k - i > 1 ? " and others" : "");
        for (size_t m = i; m < k; m++)
            add_resv(e, out->binds[m], out->binds[m]->node->spec.meta.name,
                     id, (int)(k - i), out->binds[m]->pod.muster_gate);
        atomic_fetch_add(&e->releases, 1);
        free(id);
        i = k;
    }
    return out->nbinds > 0;
}

/* mu_enforcer_plain, the scheduling gates aside. */
static bool plain_on(const struct mu_cluster *c, const struct mu_task *t,
                     const char *node)
{
    const struct mu_cnode *n = mu_cluster_node(c, node);

    return !t->pod.kube_only && !t->dd && n &&
           mu_nodecheck(&t->pod, &n->spec, true, true) == MU_NODECHECK_OK;
}

bool mu_enforcer_plain(const struct mu_cluster *c, const struct mu_task *t,
                       const char *node)
{
    return !t->pod.ngates && plain_on(c, t, node);
}

/* Only muster's own gate stands between t and a bind on node. */
static bool plain_but_gate(const struct mu_cluster *c,
                           const struct mu_task *t, const char *node)
{
    return t->pod.muster_gate && t->pod.ngates == 1 && plain_on(c, t, node);
}

bool mu_enforcer_bindable(const struct mu_cluster *c, const struct mu_task *t,
                          const struct mu_resv *r)
{
    return r && (mu_enforcer_plain(c, t, r->node) ||
                 (r->ungated && plain_but_gate(c, t, r->node)));
}

bool mu_enforcer_plain_at_bind(const struct mu_cluster *c,
                               const struct mu_task *t,
                               const struct mu_resv *r)
{
    return r && (mu_enforcer_plain(c, t, r->node) ||
                 (r->batch <= MU_GATED_AT_RELEASE_MAX &&
                  plain_but_gate(c, t, r->node)));
}

/* How batch t[0..n-1] of release may be bound by muster: not at all
 * (kube-scheduler binds it), at once (every member plain), or once the
 * gated members' patches land (*ngated of them; the rest plain). */
enum at_release { AT_NONE, AT_NOW, AT_UNGATED };

static enum at_release at_release(const struct mu_enforcer *e,
                                  struct mu_task *const *t, size_t n,
                                  const char *release, int *ngated)
{
    *ngated = 0;
    for (size_t i = 0; i < n; i++) {
        const struct mu_resv *r = mu_map_get(&e->resv, t[i]->key);

        if (!r || strcmp(r->release, release))
            return AT_NONE;
        if (mu_enforcer_plain(e->ctl->cluster, t[i], r->node))
            continue;
        if (n > MU_GATED_AT_RELEASE_MAX ||
            !plain_but_gate(e->ctl->cluster, t[i], r->node))
            return AT_NONE;
        (*ngated)++;
    }
    return *ngated ? AT_UNGATED : AT_NOW;
}

/* Hands batch t[0..n-1] to bind_gang, its members marked direct; true
 * when taken. */
static bool hand_over(struct mu_enforcer *e, struct mu_task *const *t,
                      size_t n, const char *release)
{
    if (e->bind_gang(e->bind_gang_ctx, release, t, (int)n) < 0)
        return false;
    for (size_t i = 0; i < n; i++)
        ((struct mu_resv *)mu_map_get(&e->resv, t[i]->key))->direct = true;
    return true;
}

/* Sends the release patches of batch t[0..n-1]'s ngated gated members and
 * keeps the batch in e->ungating until they land (release_done); the
 * others are left unwoken (direct), to be bound with them. */
static void ungate_then_bind(struct mu_enforcer *e, struct mu_task *const *t,
                             size_t n, const char *release, int ngated)
{
    struct ungating *u = mu_xcalloc(1, sizeof(*u));

    u->n = (int)n;
    u->left = ngated;
    u->keys = mu_xcalloc(n, sizeof(*u->keys));
    for (size_t i = 0; i < n; i++) {
        u->keys[i] = mu_xstrdup(t[i]->key);
        ((struct mu_resv *)mu_map_get(&e->resv, t[i]->key))->direct = true;
    }
    ungating_free(mu_map_put(&e->ungating, release, u)); /* none before */
    for (size_t i = 0; i < n; i++) {
        const struct mu_resv *r = mu_map_get(&e->resv, t[i]->key);

        /* no done call comes for a patch the writer refused */
        if (t[i]->pod.ngates &&
            !release_pod(e, t[i], r->node, release, r->batch, release)) {
            u->left--;
            u->failed = true;
        }
    }
    if (!u->left) /* every one refused: the batch expires */
        ungating_free(mu_map_del(&e->ungating, release));
}

void mu_enforcer_release_pods(struct mu_enforcer *e,
                              const struct mu_cycle_out *out)
{
    /* r->pinned stays as add_resv set it (the pod is gated: pinned, or
     * about to be) until the write reports a failure (release_done) */
    for (size_t i = 0; i < out->nbinds;) {
        const struct mu_resv *r0 = mu_map_get(&e->resv, out->binds[i]->key);
        size_t k = i + 1;

        /* one batch: the binds of one job, in a row (mu_enforcer_reserve) */
        while (k < out->nbinds && out->binds[k]->job == out->binds[i]->job)
            k++;
        if (r0 && e->bind_gang) {
            int ngated;
            enum at_release a = at_release(e, out->binds + i, k - i,
                                           r0->release, &ngated);

            if (a == AT_UNGATED)
                ungate_then_bind(e, out->binds + i, k - i, r0->release,
                                 ngated);
            if (a == AT_UNGATED ||
                (a == AT_NOW &&
                 hand_over(e, out->binds + i, k - i, r0->release))) {
                i = k;
                continue;
            }
        }
        for (; i < k; i++) {
            struct mu_task *t = out->binds[i];
            struct mu_resv *r = mu_map_get(&e->resv, t->key);

            if (r)
                release_pod(e, t, t->node->spec.meta.name, r->release,
                            r->batch, r->release);
        }
    }
}

bool mu_enforcer_has_ungated(const struct mu_enforcer *e)
{
    return e->nready > 0;
}

/* Binds ready batch u of release (its members' gates lifted), or leaves
 * it to kube-scheduler; nothing when the release is over or not whole. */
static void bind_ready(struct mu_enforcer *e, const char *release,
                       const struct ungating *u)
{
    const struct mu_cluster *c = e->ctl->cluster;
    struct mu_task **t = mu_xcalloc((size_t)u->n, sizeof(*t));
    bool bindable = true;
    int i;

    for (i = 0; i < u->n; i++) {
        const struct mu_resv *r = mu_map_get(&e->resv, u->keys[i]);

        t[i] = mu_map_get(&c->task_by_key, u->keys[i]);
        if (!t[i] || !r || strcmp(r->release, release) || t[i]->pod.node_name)
            goto out; /* bound, gone or released again: not ours now */
        bindable &= mu_enforcer_bindable(c, t[i], r);
    }
    if (bindable && e->bind_gang(e->bind_gang_ctx, release, t, u->n) == 0)
        goto out;
    for (i = 0; i < u->n; i++) { /* kube-scheduler's, as any release */
        struct mu_resv *r = mu_map_get(&e->resv, u->keys[i]);

        r->direct = false;
        if (!r->ungated) /* plain, never gated: woken */
            release_pod(e, t[i], r->node, release, r->batch, release);
    }
out:
    free(t);
}

void mu_enforcer_bind_ungated(struct mu_enforcer *e)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (e->nready && mu_map_next(&e->ungating, &it, &k, &v)) {
        struct ungating *u = v;
        char *release;

        if (!u->ready)
            continue;
        release = mu_xstrdup(k);
        e->nready--;
        bind_ready(e, release, u);
        ungating_free(mu_map_del(&e->ungating, release));
        free(release);
    }
}

void mu_enforcer_evict(struct mu_enforcer *e, const struct mu_cycle_out *out)
{
    for (size_t i = 0; i < out->nevicts; i++) {
        const struct mu_eviction *x = &out->evicts[i];
        struct mu_task *v = x->victim;
        char *path = pod_path(v), *msg;

        msg = mu_xasprintf("Pod %s evicted by muster (%s for %s)", v->key,
                           x->action, x->for_job->key);
        mu_ctl_log(e->ctl, "%s", msg);
        mu_recent_add(&e->recent, "evict", mu_wall_ms() / 1000, "%s", msg);
        delete_pod(e, v, path);
        if (v->job)
            mu_ctl_event(e->ctl, "scheduling.volcano.sh/v1beta1", "PodGroup",
                         v->job->pg.meta.ns, v->job->pg.meta.name,
                         v->job->pg.meta.uid, "Normal", "Evict", msg);
        atomic_fetch_add(&e->evictions, 1);
        atomic_fetch_add(strcmp(x->action, "preempt") ? &e->evicted_reclaim
                                                      : &e->evicted_preempt,
                         1);
        free(msg);
        free(path);
    }
}

/* Drops a batch's reservations; pods pinned to a node they never reached
 * are deleted so their controller makes them again, gated. */
static void fail_release(struct mu_enforcer *e, const char *release)
{
    struct mu_cluster *c = e->ctl->cluster;
    size_t it = 0;
    void *v;

    while (mu_map_next(&e->resv, &it, NULL, &v)) {
        struct mu_resv *r = v;
        struct mu_task *t;

        if (strcmp(r->release, release))
            continue;
        t = mu_map_get(&c->task_by_key, r->key);
        if (t && t->status == MU_TASK_BINDING)
            mu_task_unplace(c, t);
        if (r->pinned && t && !t->pod.meta.owner_kind) {
            mu_ctl_log(e->ctl, "pod %s was pinned to %s by a release that "
                               "did not complete; it has no controller to "
                               "make it again: kept, pinned", r->key,
                       r->node);
        } else if (r->pinned && t) {
            /* queued after its release patch if that is still on its way
             * (the writer keeps one pod's writes in order) */
            mu_ctl_log(e->ctl, "pod %s was pinned to %s by a release that "
                               "did not complete; deleting it", r->key,
                       r->node);
            (void)mu_enforcer_delete_unbound(e, t, NULL, NULL);
        }
        resv_free(mu_map_del(&e->resv, r->key));
    }
}

char *mu_enforcer_reason(const struct mu_task *t, const char *why)
{
    const char *node = mu_kvs_get(&t->pod.meta.annotations, MU_ANN_RESERVED);
    const char *rel = mu_kvs_get(&t->pod.meta.annotations, MU_ANN_RELEASE);

    if (t->pod.muster_gate || t->pod.node_name || !node ||
        mu_strcmp0(mu_kvs_get(&t->pod.meta.annotations, MU_ANN_PINNED),
                   "true"))
        return NULL;
    return mu_xasprintf("pinned to node %s by release %s, not bound%s%s",
                        node, rel ? rel : "?", why && why[0] ? "; " : "",
                        why ? why : "");
}

/* One release found on the pods by mu_enforcer_adopt. */
struct adopt {
    int want, bound, unbound;
    int nodeless; /* unbound members whose node is gone */
    bool said;
};

static const char *ann(const struct mu_task *t, const char *key)
{
    return mu_kvs_get(&t->pod.meta.annotations, key);
}

/* A pod released by someone else and not bound yet: its release id, or
 * NULL. Still gated means the release never reached it. */
static const char *adoptable(const struct mu_task *t)
{
    if (!t->pod.meta.uid || t->pod.meta.deleting || t->pod.node_name ||
        t->pod.muster_gate || t->pod.phase != MU_POD_PENDING ||
        !ann(t, MU_ANN_RESERVED))
        return NULL;
    return ann(t, MU_ANN_RELEASE);
}

void mu_enforcer_adopt(struct mu_enforcer *e)
{
    struct mu_cluster *c = e->ctl->cluster;
    struct mu_map rel;
    size_t it = 0;
    void *v;

    mu_map_init(&rel);
    for (size_t i = 0; i < c->ntasks; i++) {
        struct mu_task *t = c->tasks[i];
        const char *id = ann(t, MU_ANN_RELEASE);
        struct adopt *a;

        if (!id || t->pod.meta.deleting)
            continue;
        if (!t->pod.node_name && !adoptable(t))
            continue; /* gated still, or finished */
        a = mu_map_get(&rel, id);
        if (!a) {
            long long want = 0;

            a = mu_xcalloc(1, sizeof(*a));
            if (!ann(t, MU_ANN_RELEASE_SIZE) ||
                mu_strconv_int(ann(t, MU_ANN_RELEASE_SIZE), 1, 1 << 20,
                               &want) < 0)
                want = 0; /* unreadable: undone, never finished */
            a->want = (int)want;
            mu_map_put(&rel, id, a);
        }
        if (t->pod.node_name)
            a->bound++;
        else
            a->unbound++;
        if (!t->pod.node_name && !mu_cluster_node(c, ann(t, MU_ANN_RESERVED)))
            a->nodeless++;
    }
    for (size_t i = 0; i < c->ntasks; i++) {
        struct mu_task *t = c->tasks[i];
        const char *id = adoptable(t), *node;
        struct adopt *a = id ? mu_map_get(&rel, id) : NULL;
        bool pinned;

        if (!a || !a->unbound || mu_map_get(&e->resv, t->key))
            continue;
        node = ann(t, MU_ANN_RESERVED);
        pinned = !mu_strcmp0(ann(t, MU_ANN_PINNED), "true");
        if (a->want > 0 && a->bound + a->unbound == a->want &&
            !a->nodeless) {
            /* every member released: finish it, the members not bound
             * yet as one batch through this barrier */
            if (!a->said)
                mu_ctl_log(e->ctl, "release %s: taken over, %d of %d "
                                   "members left to bind on their nodes",
                           id, a->unbound, a->want);
            add_resv(e, t, node, id, a->unbound, pinned);
            mu_enforcer_pod_seen(e, t);
        } else if (pinned && !t->pod.meta.owner_kind) {
            mu_ctl_log(e->ctl, "pod %s was pinned to %s by release %s, "
                               "which did not complete; it has no "
                               "controller to make it again: kept, pinned",
                       t->key, node, id);
        } else if (pinned) {
            /* some members were never released (or are gone): undo, as a
             * failed batch is undone; its controller makes it again */
            if (!a->said)
                mu_ctl_log(e->ctl, "release %s: taken over incomplete (%d "
                                   "of %d members released); deleting its "
                                   "pinned pods", id, a->bound + a->unbound,
                           a->want);
            mu_ctl_log(e->ctl, "pod %s was pinned to %s by a release that "
                               "did not complete; deleting it", t->key,
                       node);
            (void)mu_enforcer_delete_unbound(e, t, NULL, NULL);
        }
        a->said = true;
    }
    while (mu_map_next(&rel, &it, NULL, &v))
        free(v);
    mu_map_release(&rel);
}

/* The PodGroup of release's members hears why its batch failed (an event
 * BindFailed), so that what happened to each member (deleted, or kept for
 * want of a controller) is said where its users look. */
static void tell_podgroup(struct mu_enforcer *e, const char *release,
                          const char *detail)
{
    struct mu_cluster *c = e->ctl->cluster;
    size_t it = 0;
    void *v;

    while (mu_map_next(&e->resv, &it, NULL, &v)) {
        struct mu_resv *r = v;
        struct mu_task *t;
        if (strcmp(r->release, release))
            continue;
        t = mu_map_get(&c->task_by_key, r->key);
        if (!t || !t->job)
            continue;
        mu_ctl_event(e->ctl, "scheduling.volcano.sh/v1beta1", "PodGroup",
                     t->job->pg.meta.ns, t->job->pg.meta.name,
                     t->job->pg.meta.uid, "Warning", "BindFailed", detail);
        return;
    }
}

void mu_enforcer_bind_report(struct mu_enforcer *e, const char *release,
                             bool ok, const char *detail)
{
    mu_ctl_log(e->ctl, "bind %s: %s%s%s", release, ok ? "ok" : "failed",
               detail ? ": " : "", detail ? detail : "");
    if (!ok && detail)
        tell_podgroup(e, release, detail);
    if (!ok)
        fail_release(e, release);
    else if (e->window < MU_RELEASE_WINDOW_MAX)
        e->window = MU_MIN(e->window + MU_RELEASE_WINDOW_STEP,
                           (long)MU_RELEASE_WINDOW_MAX);
}

void mu_enforcer_pace(const struct mu_enforcer *e, struct mu_cluster *c)
{
    long inflight = (long)e->resv.n;
    long room = e->ctl->writer ? (long)(mu_writer_room(e->ctl->writer) / 2)
                               : 0;

    c->release_window = e->window;
    c->release_inflight = inflight;
    c->release_budget = inflight < e->window ? e->window - inflight : 0;
    if (c->release_budget > room)
        c->release_budget = room;
    if (e->bind_gang && e->bind_gang_room) {
        room = e->bind_gang_room(e->bind_gang_ctx);
        if (c->release_budget > room)
            c->release_budget = room;
    }
}

bool mu_enforcer_renew(struct mu_enforcer *e, const char *release)
{
    size_t it = 0;
    void *v;
    int members = 0, batch = 0, renewals = 0;
    const struct mu_job *j = NULL;
    char *id;

    /* kube-scheduler did not reach the batch in time: fewer at once */
    e->window = MU_MAX(e->window / 2, (long)MU_RELEASE_WINDOW_MIN);
    while (mu_map_next(&e->resv, &it, NULL, &v)) {
        struct mu_resv *r = v;
        struct mu_task *t;

        if (strcmp(r->release, release))
            continue;
        t = mu_map_get(&e->ctl->cluster->task_by_key, r->key);
        if (!t || t->status != MU_TASK_BINDING)
            return false; /* gone, or no longer held on its node */
        members++;
        batch = r->batch;
        renewals = r->renewals;
        j = t->job;
    }
    if (!members || members != batch || renewals >= MU_RENEW_MAX)
        return false;
    id = mu_xasprintf("%s#%llu", j ? j->key : release,
                      (unsigned long long)++e->release_seq);
    it = 0;
    while (mu_map_next(&e->resv, &it, NULL, &v)) {
        struct mu_resv *r = v;

        if (strcmp(r->release, release))
            continue;
        free(r->release);
        r->release = mu_xstrdup(id);
        r->renewals++;
    }
    mu_ctl_log(e->ctl, "release %s: not every member reached /bind in time; "
                       "kept on the same nodes as %s (%d of %d)",
               release, id, renewals + 1, MU_RENEW_MAX);
    free(id);
    return true;
}

/* How long a release may wait for kube-scheduler to reach /bind at all.
 * kube-scheduler works through its queue one pod at a time (tens to
 * hundreds of pods a second), so a big burst of releases legitimately waits
 * minutes; once a member does arrive, the barrier's own timeout applies. */
#define MU_RELEASE_EXPIRE_MS (5 * 60 * 1000LL)

bool mu_enforcer_idle(const struct mu_enforcer *e)
{
    return !e->resv.n;
}

void mu_enforcer_expire(struct mu_enforcer *e)
{
    int64_t wait = MU_RELEASE_EXPIRE_MS > e->bind_timeout_ms + 10000
                       ? MU_RELEASE_EXPIRE_MS
                       : e->bind_timeout_ms + 10000;
    int64_t limit = mu_now_ns() - wait * 1000000;
    char *expired = NULL;
    size_t it = 0;
    void *v;

    while (!expired && mu_map_next(&e->resv, &it, NULL, &v))
        if (((struct mu_resv *)v)->since_ns < limit)
            expired = mu_xstrdup(((struct mu_resv *)v)->release);
    if (!expired)
        return;
    mu_ctl_log(e->ctl, "release %s did not reach /bind in time", expired);
    fail_release(e, expired);
    free(expired);
}

/*
 * kube-scheduler may ask /filter about a new pod before muster's view has
 * it, and then sets the pod aside with "muster has not seen this pod yet".
 * Once the view explains why the pod waits, the pod is nudged once with an
 * annotation, so the next attempt records the gang's real reason in the
 * pod's FailedScheduling event. Only pods kube-scheduler can see (not held
 * by muster's gate).
 */
void mu_enforcer_unseen(struct mu_enforcer *e, const char *uid)
{
    if (uid && *uid && e->unseen.n < MU_UNSEEN_CAP &&
        !mu_map_get(&e->announced, uid))
        mu_map_put(&e->unseen, uid, (void *)1);
}

void mu_enforcer_announce(struct mu_enforcer *e)
{
    struct mu_cluster *c = e->ctl->cluster;
    size_t room;

    if (!e->unseen.n)
        return;
    room = e->ctl->writer ? mu_writer_room(e->ctl->writer) / 2 : 0;
    for (size_t i = 0; i < c->ntasks && room > 0; i++) {
        struct mu_task *t = c->tasks[i];
        char *path;
        struct mu_write w = {.method = "PATCH",
                             .content_type = MU_KUBE_MERGE_PATCH};

        if (!t->pod.meta.uid || !mu_map_get(&e->unseen, t->pod.meta.uid))
            continue;
        if (t->status != MU_TASK_PENDING || t->pod.muster_gate ||
            t->pod.ngates || !t->job ||
            strcmp(t->pod.scheduler_name, "volcano") ||
            mu_map_get(&e->announced, t->pod.meta.uid)) {
            /* bound, gated, or nudged: nothing to tell it */
            mu_map_del(&e->unseen, t->pod.meta.uid);
            continue;
        }
        mu_map_del(&e->unseen, t->pod.meta.uid);
        mu_map_put(&e->announced, t->pod.meta.uid, (void *)1);
        room--;
        path = pod_path(t);
        w.path = path;
        w.body = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                           "muster.io/waiting", t->job->key);
        if (mu_writer_submit(e->ctl->writer, &w) < 0)
            mu_ctl_log(e->ctl, "annotate %s: not sent: stopping", t->key);
        free(path);
    }
}

/* How long a gang may run below its minMember before muster takes the
 * running part down (a kill in the middle of a bind batch, a node lost
 * under a gang). */
#define MU_PARTIAL_GRACE_NS (30LL * 1000000000)

/*
 * No partial gang holds GPUs: a PodGroup that has run below minMember
 * (phase Unknown: some members running, the rest unschedulable) for
 * MU_PARTIAL_GRACE_NS has its running members deleted; their vcjob makes
 * them again, gated, and the whole gang is planned afresh.
 */
void mu_enforcer_partial(struct mu_enforcer *e)
{
    struct mu_cluster *c = e->ctl->cluster;
    int64_t now = mu_now_ns();
    uint64_t call = ++e->partial_calls;
    size_t it = 0, seen = 0;
    const char *key;
    void *v;

    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];
        struct mu_partial *p;

        if (j->phase != MU_PG_UNKNOWN) {
            /* no lookup per gang per tick when none is partial */
            if (e->partial.n)
                free(mu_map_del(&e->partial, j->key));
            continue;
        }
        p = mu_map_get(&e->partial, j->key);
        if (!p) {
            p = mu_xcalloc(1, sizeof(*p));
            p->since_ns = now;
            mu_map_put(&e->partial, j->key, p);
        }
        p->seen = call;
        seen++;
        if (now - p->since_ns > MU_PARTIAL_GRACE_NS) {
            mu_ctl_log(e->ctl, "gang %s ran below minMember %d for too long; "
                               "taking its running pods down", j->key,
                       j->pg.min_member);
            for (size_t k = 0; k < j->ntasks; k++) {
                struct mu_task *t = j->tasks[k];
                char *path;

                if (t->status != MU_TASK_RUNNING && t->status != MU_TASK_BOUND)
                    continue;
                if (!t->pod.meta.owner_kind) {
                    /* nothing would make it again: kept */
                    mu_ctl_log(e->ctl, "pod %s has no controller: kept",
                               t->key);
                    continue;
                }
                path = pod_path(t);
                delete_pod(e, t, path);
                free(path);
            }
            free(mu_map_del(&e->partial, j->key));
            seen--;
        }
    }
    /* the entries of PodGroups deleted while partial */
    while (e->partial.n > seen && mu_map_next(&e->partial, &it, &key, &v))
        if (((struct mu_partial *)v)->seen != call) {
            mu_map_del(&e->partial, key);
            free(v);
        }
}
