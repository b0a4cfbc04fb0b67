#include "serve/serve_int.h"

#include <stdarg.h>

#include "api/podpb.h"
#include "api/vcjob.h"
#include "sched/cluster_dra.h"
#include "kube/paths.h"

void mu_serve_opts_init(struct mu_serve_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->listen = "127.0.0.1:8888";
    o->period_ms = 1000;
    o->coalesce_ms = 20;
    o->bind_timeout_ms = 20000;
    o->qps = 500;
    o->burst = 1000;
    o->watch_list = true;
    o->protobuf = true;
    o->log = stderr;
}

/* Every log line of the daemon and its controllers (sv->ctl.log). */
static void log_line(void *ctx, const char *line)
{
    struct mu_serve *sv = ctx;
    char ts[32];

    if (!sv->o->log)
        return;
    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    fprintf(sv->o->log, "%s %s\n", ts, line);
    fflush(sv->o->log);
}

/* A log line of the daemon. Watch threads use it too: of sv->ctl they read
 * only log and log_ctx, set before they start and never changed. */
#define say(sv, ...) mu_ctl_log(&(sv)->ctl, __VA_ARGS__)

/* Each watch lists and watches a whole collection, in every namespace.
 * `optional` ones may be absent from the API server (404): the DRA kinds
 * before Kubernetes 1.34; the caches wait for them until their list
 * answers or 404s. */
static const struct {
    enum mu_api_kind kind;
    const char *what;
    bool optional;
} sources[MU_SRC__COUNT] = {
    [MU_SRC_NODE] = {MU_API_NODE, "nodes"},
    [MU_SRC_POD] = {MU_API_POD, "pods"},
    [MU_SRC_PODGROUP] = {MU_API_PODGROUP, "podgroups"},
    [MU_SRC_QUEUE] = {MU_API_QUEUE, "queues"},
    [MU_SRC_PRIORITYCLASS] = {MU_API_PRIORITYCLASS, "priorityclasses"},
    [MU_SRC_JOB] = {MU_API_VCJOB, "jobs"},
    [MU_SRC_COMMAND] = {MU_API_COMMAND, "commands"},
    [MU_SRC_DEVICECLASS] = {MU_API_DEVICECLASS, "deviceclasses", true},
    [MU_SRC_SLICE] = {MU_API_RESOURCESLICE, "resourceslices", true},
    [MU_SRC_CLAIM] = {MU_API_RESOURCECLAIM, "resourceclaims", true},
    [MU_SRC_CLAIMTEMPLATE] = {MU_API_RESOURCECLAIMTEMPLATE,
                              "resourceclaimtemplates", true},
    [MU_SRC_HYPERNODE] = {MU_API_HYPERNODE, "hypernodes", true},
};

/*
 * The Command CRD (bus.volcano.sh) is optional: without it the commands
 * watch lists 404 and retries with its backoff (up to 30 s), so Commands
 * work as soon as the CRD is installed, and nothing else waits for it
 * (all_synced). That is said once, not at every retry. Set and read on the
 * commands' watch thread only.
 */
static bool commands_missing;

static void on_event(void *ctx, enum mu_watch_type type, json_t *obj)
{
    struct mu_informer *inf = ctx;
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    if (inf->src == MU_SRC_COMMAND && type == MU_WATCH_LIST_END &&
        commands_missing) {
        commands_missing = false;
        say(inf->sv, "watch commands: the Command CRD is installed now; "
                     "Commands are carried out");
    }

    if (type == MU_WATCH_LIST_END)
        atomic_store(&inf->missing, false);
    ev->src = inf->src;
    ev->type = type;
    ev->obj = obj;
    mu_evq_push(&inf->sv->q, ev);
}

static void watch_log(void *ctx, const char *msg)
{
    struct mu_informer *inf = ctx;

    if (inf->src == MU_SRC_COMMAND && strstr(msg, ": 404 ")) {
        if (!commands_missing)
            say(inf->sv, "watch commands: the Command CRD "
                         "(commands.bus.volcano.sh) is not installed; vcctl's "
                         "queue and job commands are ignored until it is "
                         "(kubectl apply -f crds/)");
        commands_missing = true;
        return;
    }
    if (inf->src == MU_SRC_HYPERNODE && strstr(msg, ": 404 ")) {
        if (!atomic_exchange(&inf->missing, true))
            say(inf->sv, "watch hypernodes: the HyperNode CRD "
                         "(hypernodes.topology.volcano.sh) is not installed: "
                         "no HyperNodes until it is (kubectl apply -f "
                         "crds/); gangs that ask networkTopology hard wait");
        return;
    }
    if (sources[inf->src].optional && strstr(msg, ": 404 ")) {
        if (!atomic_exchange(&inf->missing, true))
            say(inf->sv, "watch %s: resource.k8s.io/v1 is not served (a "
                         "Kubernetes before 1.34?): no DRA devices are "
                         "planned until it is", sources[inf->src].what);
        return;
    }
    say(inf->sv, "watch %s: %s", sources[inf->src].what, msg);
}

static void *watch_main(void *arg)
{
    struct mu_informer *inf = arg;

    mu_watch_run(inf->w, on_event, inf);
    return NULL;
}

static int start_informers(struct mu_serve *sv, struct mu_err *err)
{
    for (int s = 0; s < MU_SRC__COUNT; s++) {
        struct mu_informer *inf = &sv->inf[s];
        struct mu_watch_opts wo;
        char *path;
        int r;

        memset(&wo, 0, sizeof(wo));
        inf->sv = sv;
        inf->src = (enum mu_src)s;
        path = mu_api_path(sources[s].kind, NULL, NULL, NULL);
        wo.path = path; /* copied */
        wo.seed = (uint64_t)s + 1;
        wo.stop = sv->o->stop;
        wo.stream_list = sv->o->watch_list;
        if (s == MU_SRC_POD && sv->o->protobuf)
            wo.protobuf = mu_podpb_object;
        wo.kube.log = watch_log;
        wo.kube.log_ctx = inf;
        r = mu_watch_new(&sv->cfg, &wo, &inf->w, err);
        free(path);
        if (r < 0)
            return -EINVAL;
        if (pthread_create(&inf->thread, NULL, watch_main, inf))
            return mu_err_set(err, -EAGAIN, "cannot start a watch thread");
        inf->started = true;
    }
    return 0;
}

/* Every cache has listed once; the Commands' is not waited for (the CRD
 * is optional, see commands_missing), nor an optional one whose API the
 * server does not serve. */
static bool all_synced(const struct mu_serve *sv)
{
    for (int s = 0; s < MU_SRC__COUNT; s++)
        if (!sv->apply.synced[s] && s != MU_SRC_COMMAND &&
            !(sources[s].optional && atomic_load(&sv->inf[s].missing)))
            return false;
    return true;
}

static bool leading_fn(void *ctx);
static int bind_fn(void *ctx, const char *ns, const char *name,
                   const char *uid, const char *node, struct mu_err *err);
static int unbind_fn(void *ctx, const char *ns, const char *name,
                     const char *uid, struct mu_err *err);
static int bindcheck_fn(void *ctx, const char *ns, const char *name,
                        const char *uid, struct mu_bind_seen *out,
                        struct mu_err *err);

/* The barrier's binds run on HTTP threads, which come and go with
 * kube-scheduler's connections: each call takes a client from a pool and
 * gives it back (a curl handle is used by one thread at a time). */
static int bind_fn(void *ctx, const char *ns, const char *name,
                   const char *uid, const char *node, struct mu_err *err)
{
    struct mu_serve *sv = ctx;
    struct mu_kube *k;
    int r;

    if (!leading_fn(sv))
        return mu_err_set(err, -EPERM, "not the leader: %s/%s not bound",
                          ns, name);
    k = mu_kube_pool_get(sv->bind_pool, err);
    r = k ? mu_kube_bind(k, ns, name, uid, node, err) : -ENOMEM;

    mu_kube_pool_put(sv->bind_pool, k);
    return r;
}

static int unbind_fn(void *ctx, const char *ns, const char *name,
                     const char *uid, struct mu_err *err)
{
    struct mu_serve *sv = ctx;

    if (!leading_fn(sv))
        return mu_err_set(err, -EPERM, "not the leader: %s/%s not undone",
                          ns, name);
    return mu_undo_pod(&sv->undo, ns, name, uid, err);
}

/* Reads a pod back after an ambiguous bind (extender.h, mu_bindcheck_fn):
 * a GET of the view's ns/name on a pooled client, on the HTTP thread. */
static int bindcheck_fn(void *ctx, const char *ns, const char *name,
                        const char *uid, struct mu_bind_seen *out,
                        struct mu_err *err)
{
    struct mu_serve *sv = ctx;
    struct mu_kube *k;
    char *path;
    json_t *pod = NULL;
    const char *got_uid, *node;
    int r;

    if (!leading_fn(sv))
        return mu_err_set(err, -EPERM, "not the leader: %s/%s not read",
                          ns, name);
    k = mu_kube_pool_get(sv->bind_pool, err);
    if (!k)
        return -ENOMEM;
    path = mu_api_path(MU_API_POD, ns, name, NULL);
    r = mu_kube_get(k, path, NULL, &pod, err);
    mu_kube_pool_put(sv->bind_pool, k);
    free(path);
    if (r == -ENOENT) {
        out->state = MU_BIND_SEEN_GONE;
        return 0;
    }
    if (r < 0)
        return r;
    got_uid = json_string_value(
        json_object_get(json_object_get(pod, "metadata"), "uid"));
    node = json_string_value(
        json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (mu_strcmp0(got_uid, uid))
        out->state = MU_BIND_SEEN_GONE; /* another pod of the same name */
    else if (node && node[0]) {
        out->state = MU_BIND_SEEN_BOUND;
        snprintf(out->node, sizeof(out->node), "%s", node);
    } else
        out->state = MU_BIND_SEEN_UNBOUND;
    json_decref(pod);
    return 0;
}

/* The writer's workers tell the scheduler thread that writes completed. */
static void writes_done_fn(void *ctx)
{
    struct mu_serve *sv = ctx;
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    ev->src = MU_SRC_WRITE_DONE;
    mu_evq_push(&sv->q, ev);
}

static void writer_log(void *ctx, const char *msg)
{
    log_line(ctx, msg);
}

/* May this process write (serve_int.h, Leadership)? Any thread. */
static bool leading_fn(void *ctx)
{
    struct mu_serve *sv = ctx;

    return !sv->lease || mu_lease_leading(sv->lease);
}

/* The elector's thread: leadership changed; the loop looks at once. */
static void lease_changed_fn(void *ctx)
{
    struct mu_serve *sv = ctx;
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    ev->src = MU_SRC_LEASE;
    mu_evq_push(&sv->q, ev);
}

static int start_lease(struct mu_serve *sv, struct mu_err *err)
{
    const struct mu_serve_opts *o = sv->o;
    struct mu_lease_opts lo = {.ns = o->lease_ns,
                               .name = o->lease_name,
                               .identity = o->lease_identity,
                               .lease_ms = o->lease_ms,
                               .renew_ms = o->renew_ms,
                               .retry_ms = o->retry_ms,
                               .release_on_stop = true,
                               .log = log_line,
                               .log_ctx = sv,
                               .changed = lease_changed_fn,
                               .changed_ctx = sv};
    int r;

    if (!o->leader_elect)
        return 0;
    if ((r = mu_lease_start(&sv->cfg, &lo, &sv->lease, err)) < 0)
        return r;
    say(sv, "leader election on lease %s/%s as %s",
        o->lease_ns ? o->lease_ns : MU_LEASE_NAMESPACE,
        o->lease_name ? o->lease_name : MU_LEASE_NAME,
        mu_lease_identity(sv->lease));
    return 0;
}

/* A follower keeps the Commands it sees for the day it leads: the queue
 * controller acts on a Command when it is seen, and it is seen once. */
static void keep_command(struct mu_serve *sv, const struct mu_ev *e)
{
    const json_t *m = json_object_get(e->obj, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace"));
    const char *name = json_string_value(json_object_get(m, "name"));
    char *key;

    if (!ns || !name) /* the queue controller reports it when it leads */
        return;
    key = mu_xasprintf("%s/%s", ns, name);
    if (e->type == MU_WATCH_DELETED)
        json_decref(mu_map_del(&sv->pending_cmds, key));
    else
        json_decref(mu_map_put(&sv->pending_cmds, key, json_incref(e->obj)));
    free(key);
}

/* Taking over (serve_int.h, Leadership). */
static void take_over(struct mu_serve *sv)
{
    size_t it = 0;
    void *v;

    say(sv, "leading: taking over");
    mu_enforcer_adopt(&sv->enf);
    while (mu_map_next(&sv->pending_cmds, &it, NULL, &v)) {
        mu_queuectl_command(sv->qc, MU_WATCH_ADDED, v);
        json_decref(v);
    }
    mu_map_release(&sv->pending_cmds);
    mu_map_init(&sv->pending_cmds);
    sv->leads = true;
}



static void report_fn(void *ctx, const struct mu_bind_report *r)
{
    struct mu_serve *sv = ctx;
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    ev->src = MU_SRC_BIND_REPORT;
    ev->release = mu_xstrdup(r->release);
    ev->ok = r->ok;
    ev->timed_out = r->timed_out;
    ev->detail = mu_xstrdup_or_null(r->detail);
    mu_evq_push(&sv->q, ev);
}

/* The enforcer's bind_gang (enforce.h): a plain batch to the release
 * binder, with the view's names (the cache's) and reserved nodes. */
static int bind_gang_fn(void *ctx, const char *release,
                        struct mu_task *const *t, int n)
{
    struct mu_serve *sv = ctx;
    struct mu_barrier_member *m = mu_xcalloc((size_t)n, sizeof(*m));
    int r;

    for (int i = 0; i < n; i++) {
        const struct mu_resv *rv = mu_enforcer_resv(&sv->enf, t[i]->key);

        /* borrowed: submit copies them */
        m[i].ns = t[i]->pod.meta.ns;
        m[i].name = t[i]->pod.meta.name;
        m[i].uid = t[i]->pod.meta.uid;
        m[i].node = rv ? rv->node : NULL;
        m[i].controlled = t[i]->pod.meta.owner_kind != NULL;
    }
    r = mu_relbind_submit(sv->relbind, release, m, n);
    free(m);
    /* said once per MU_RELBIND_QUEUE_MAX refusals: a full queue refuses
     * every gang of a burst */
    if (r < 0 && sv->relbind_refusals++ % MU_RELBIND_QUEUE_MAX == 0)
        say(sv, "release %s: not bound at its release (%s): waking its "
                "pods instead (%llu such so far)", release, strerror(-r),
            (unsigned long long)sv->relbind_refusals);
    return r;
}

static long bind_gang_room_fn(void *ctx)
{
    struct mu_serve *sv = ctx;

    return mu_relbind_room(sv->relbind);
}

static void miss_fn(void *ctx, const char *uid, bool unseen)
{
    struct mu_serve *sv = ctx;
    struct mu_ev *ev = mu_xcalloc(1, sizeof(*ev));

    ev->src = MU_SRC_FILTER_MISS;
    ev->ok = unseen; /* a pod answered before the view had it */
    ev->detail = mu_xstrdup(uid);
    mu_evq_push(&sv->q, ev);
}

/* A fresh /debug snapshot, when a request asked for one (serve_int.h). */
static void report(struct mu_serve *sv)
{
    json_t *old, *snap;

    if (!atomic_exchange(&sv->report_wanted, false))
        return;
    snap = mu_report_build(&sv->cluster, mu_wall_ms());
    json_object_set_new(snap, "recent", mu_recent_json(&sv->enf.recent));
    pthread_mutex_lock(&sv->report_lock);
    old = sv->report;
    sv->report = snap;
    sv->report_ns = mu_now_ns();
    json_decref(old);
    pthread_mutex_unlock(&sv->report_lock);
}

/* GET /debug/... on an HTTP thread (mu_debug_fn). */
static char *debug_fn(void *ctx, const char *path, bool fresh, int *status)
{
    struct mu_serve *sv = ctx;
    json_t *snap = NULL;
    int64_t age = 0;
    char *answer;

    pthread_mutex_lock(&sv->report_lock);
    if (sv->report) {
        age = mu_now_ns() - sv->report_ns;
        if (age < (fresh ? MU_SERVE_REPORT_MS : MU_SERVE_REPORT_STALE_MS) *
                      1000000LL)
            snap = json_incref(sv->report);
    }
    pthread_mutex_unlock(&sv->report_lock);
    if (!snap || age >= MU_SERVE_REPORT_MS * 1000000LL)
        atomic_store(&sv->report_wanted, true);
    if (!snap) {
        *status = 503;
        return mu_xstrdup("{\"error\":\"muster is making a fresh report "
                          "after its next cycle: try again in a "
                          "second\"}\n");
    }
    answer = mu_report_answer(snap, path, status);
    pthread_mutex_lock(&sv->report_lock);
    json_decref(snap);
    pthread_mutex_unlock(&sv->report_lock);
    return answer;
}

/* Builds and publishes the extender's view: each pod's entry is the one
 * the last view had while nothing in it moved (view.h, mu_view_cache). */
static void publish(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;
    struct mu_view *v = mu_view_new(++sv->view_gen, all_synced(sv));

    /* about the last view's pods: the table is made once */
    mu_view_reserve(v, sv->vcache.ents.n);
    for (size_t i = 0; i < c->ntasks; i++) {
        const struct mu_task *t = c->tasks[i];
        const struct mu_job *j = t->job;
        const struct mu_resv *r;
        const char *why;
        char *pinned;

        if (!t->pod.meta.uid || t->pod.node_name ||
            !mu_view_serves(v, t->pod.scheduler_name))
            continue;
        r = mu_enforcer_resv(&sv->enf, t->key);
        why = j && j->cond.message ? j->cond.message : "waiting for its gang";
        pinned = r ? NULL : mu_enforcer_reason(t, why);
        mu_view_cache_put(
            &sv->vcache, v,
            &(struct mu_view_pod){
                .uid = t->pod.meta.uid, .ns = t->pod.meta.ns,
                .name = t->pod.meta.name, .gang = j ? j->key : (char *)"",
                .node = r ? r->node : NULL, .release = r ? r->release : NULL,
                .batch_size = r ? r->batch : 0,
                .reason = r ? NULL : pinned ? pinned : (char *)why,
                /* only a pod its controller makes again may be deleted
                 * by /bind */
                .controlled = t->pod.meta.owner_kind != NULL,
                /* nothing left for kube-scheduler but the node: /bind
                 * may bind the whole gang at its first member
                 * (extender/internal.h) */
                .plain = sv->o->gang_bind != MU_GANG_BIND_ALL &&
                         mu_enforcer_plain_at_bind(c, t, r)});
        free(pinned);
    }
    mu_view_cache_sweep(&sv->vcache);
    mu_view_publish(&sv->views, v);
}

/* Status writes and events go a few at a time (MU_WRITER_BACKGROUND)
 * while pods are released and not yet bound: the gangs' binds and release
 * patches share the API server with them. With none in flight they take
 * every worker, so a backlog's statuses catch up once its binds are done
 * (25,000 PodGroups: minutes, 8 at a time). */
static void pace_statuses(struct mu_serve *sv)
{
    bool busy = sv->enf.resv.n > 0 ||
                (sv->relbind && mu_relbind_pods(sv->relbind) > 0);

    if (sv->writer)
        mu_writer_set_background(sv->writer, busy ? 0 : MU_WRITER_THREADS);
}

/* One cycle and what it owes the API. True when it published the view
 * (it reserved pods): nothing after the publication changes what the
 * view holds, so the caller need not publish again. */
static bool cycle(struct mu_serve *sv)
{
    struct mu_cycle_out out;
    int64_t t0 = mu_now_ns();
    bool published;

    mu_pgctl_sync(sv->pgctl);
    mu_cluster_link(&sv->cluster);
    mu_enforcer_pace(&sv->enf, &sv->cluster);
    mu_cycle_run(&sv->cluster, &sv->conf, t0 / 1000000, &out);
    if (sv->topo.warn_sig != sv->topo_logged) {
        sv->topo_logged = sv->topo.warn_sig;
        for (size_t i = 0; i < sv->topo.nwarn; i++)
            say(sv, "topology: %s", sv->topo.warn[i]);
    }
    mu_smetrics_cycle(&sv->metrics, mu_now_ns() - t0);
    sv->settled = !out.nbinds && !out.nevicts && !out.nchanged;
    sv->wake_ns = out.wake_ms == INT64_MAX ? INT64_MAX : out.wake_ms * 1000000;
    mu_enforcer_evict(&sv->enf, &out);
    published = mu_enforcer_reserve(&sv->enf, &out);
    if (published)
        publish(sv);
    mu_enforcer_release_pods(&sv->enf, &out);
    pace_statuses(sv);
    (void)mu_status_write(&sv->status); /* what it holds back: idle_tick */
    mu_hnstatus_write(&sv->hnstatus, &sv->topo);
    mu_queuectl_sync(sv->qc, mu_now_ns() / 1000000);
    mu_cycle_out_release(&out);
    mu_smetrics_queues(&sv->metrics, &sv->cluster);
    report(sv);
    return published;
}

/* A tick with nothing new (see settled in serve_int.h): PodGroup statuses
 * held back for room in the writer and the queue figures deferred by
 * MU_QUEUE_FIGURES_MS still go out, and a /debug snapshot asked for is
 * built on the cache as it stands. */
static void idle_tick(struct mu_serve *sv)
{
    mu_smetrics_skipped(&sv->metrics);
    pace_statuses(sv);
    /* statuses held back for room in the writer (status.h) go now */
    (void)mu_status_write(&sv->status);
    mu_queuectl_sync(sv->qc, mu_now_ns() / 1000000);
    if (atomic_load(&sv->report_wanted))
        mu_cluster_link(&sv->cluster);
    report(sv);
}

static int setup(struct mu_serve *sv, const struct mu_serve_opts *o,
                 struct mu_err *err)
{
    struct mu_kube_opts ko = {.qps = o->qps, .burst = o->burst};
    struct mu_ext_server_opts so;
    int r;

    memset(sv, 0, sizeof(*sv));
    sv->o = o;
    mu_cluster_init(&sv->cluster);
    mu_topo_init(&sv->topo);
    sv->cluster.topo = &sv->topo;
    mu_evq_init(&sv->q);
    /* the writer is filled in once made; nothing writes before */
    sv->ctl = (struct mu_ctl){.cluster = &sv->cluster, .log = log_line,
                              .log_ctx = sv};
    mu_apply_init(&sv->apply, &sv->cluster, &sv->ctl, &sv->enf, NULL);
    mu_enforcer_init(&sv->enf, &sv->ctl, o->bind_timeout_ms);
    mu_remaker_init(&sv->remake, &sv->ctl, &sv->enf);
    sv->apply.remake = &sv->remake;
    mu_status_init(&sv->status, &sv->ctl);
    mu_hnstatus_init(&sv->hnstatus, &sv->ctl);
    sv->pgctl = mu_pgctl_new(&sv->ctl);
    sv->qc = mu_queuectl_new(&sv->ctl);
    mu_view_slot_init(&sv->views);
    mu_view_cache_init(&sv->vcache);
    mu_map_init(&sv->pending_cmds);
    mu_smetrics_init(&sv->metrics, &sv->enf);
    pthread_mutex_init(&sv->report_lock, NULL);
    mu_kube_config_init(&sv->cfg);
    if (o->config_path) {
        if ((r = mu_conf_load_file(o->config_path, &sv->conf, err)) < 0)
            return r;
    } else {
        mu_conf_default(&sv->conf);
    }
    for (size_t i = 0; i < sv->conf.nwarnings; i++)
        say(sv, "warning: %s", sv->conf.warnings[i]);
    mu_cluster_set_devmaps(&sv->cluster, sv->conf.devmaps, sv->conf.ndevmaps);
    mu_queuectl_set_share(sv->qc, mu_conf_share(&sv->conf));
    if ((r = mu_kube_config_load(o->kubeconfig, NULL, &sv->cfg, err)) < 0)
        return r;
    /* every client is made from this config: none asks for more than the
     * API table, which is what the manifests' RBAC grants */
    sv->cfg.api_table = true;
    if ((r = mu_kube_pool_new(&sv->cfg, &ko, MU_SERVE_BIND_IDLE,
                              &sv->bind_pool, err)) < 0)
        return r;
    sv->undo.pool = sv->bind_pool;
    sv->undo.q = &sv->q;
    {
        struct mu_writer_opts wo = {.kube = ko,
                                    .notify = writes_done_fn,
                                    .notify_ctx = sv,
                                    .log = writer_log,
                                    .log_ctx = sv};

        if (o->leader_elect) { /* only the leader writes (serve_int.h) */
            wo.gate = leading_fn;
            wo.gate_ctx = sv;
        }

        if ((r = mu_writer_new(&sv->cfg, &wo, &sv->writer, err)) < 0)
            return r;
    }
    sv->ctl.writer = sv->writer;
    /* the vcjob controller copies its context: made once it is whole */
    sv->jobctl = mu_jobctl_new(&sv->ctl);
    sv->apply.jobctl = sv->jobctl;
    mu_view_publish(&sv->views, mu_view_new(++sv->view_gen, false));
    sv->barrier = mu_barrier_new(o->bind_timeout_ms, bind_fn, unbind_fn,
                                 report_fn, sv);
    mu_barrier_set_check(sv->barrier, bindcheck_fn);
    if (o->gang_bind == MU_GANG_BIND_RELEASE) {
        if ((r = mu_relbind_new(sv->barrier, &sv->views, &sv->relbind,
                                err)) < 0)
            return r;
        sv->enf.bind_gang = bind_gang_fn;
        sv->enf.bind_gang_room = bind_gang_room_fn;
        sv->enf.bind_gang_ctx = sv;
    }
    memset(&so, 0, sizeof(so));
    so.listen = o->listen;
    so.views = &sv->views;
    so.barrier = sv->barrier;
    sv->metrics.writer = sv->writer;
    sv->metrics.relbind = sv->relbind;
    sv->metrics.bind_pool = sv->bind_pool;
    so.metrics = mu_smetrics_text;
    so.metrics_ctx = &sv->metrics;
    so.debug = debug_fn;
    so.debug_ctx = sv;
    so.miss = miss_fn;
    so.miss_ctx = sv;
    if (o->leader_elect) { /* a follower is not ready, refuses /bind */
        so.leading = leading_fn;
        so.leading_ctx = sv;
    }
    so.tls_cert_file = o->tls_cert_file;
    so.tls_key_file = o->tls_key_file;
    so.tls_client_ca_file = o->client_ca_file;
    so.metrics_listen = o->metrics_listen;
    so.log = log_line;
    so.log_ctx = sv;
    if ((r = mu_ext_server_start(&so, &sv->http, err)) < 0)
        return r;
    say(sv, "serving the extender on %s (port %d, %s)", o->listen,
        mu_ext_server_port(sv->http),
        o->tls_cert_file ? "HTTPS, client certificates required" : "HTTP");
    if (o->metrics_listen)
        say(sv, "serving /healthz /readyz /metrics on %s (port %d)",
            o->metrics_listen, mu_ext_server_metrics_port(sv->http));
    if ((r = start_lease(sv, err)) < 0)
        return r;
    return start_informers(sv, err);
}

static void teardown(struct mu_serve *sv)
{
    mu_evq_close(&sv->q); /* a watch blocked on a full queue returns */
    for (int s = 0; s < MU_SRC__COUNT; s++) {
        if (sv->inf[s].started)
            pthread_join(sv->inf[s].thread, NULL);
        mu_watch_free(sv->inf[s].w);
    }
    if (sv->http)
        mu_ext_server_stop(sv->http);
    mu_relbind_free(sv->relbind); /* before the barrier and the views */
    if (sv->barrier)
        mu_barrier_free(sv->barrier);
    mu_writer_free(sv->writer); /* its last done calls use the state below */
    /* after the last write: the Lease is given up only when nothing of
     * this leader's can still land */
    mu_lease_stop(sv->lease);
    mu_pgctl_free(sv->pgctl);
    mu_queuectl_free(sv->qc);
    mu_status_release(&sv->status);
    mu_hnstatus_release(&sv->hnstatus);
    mu_remaker_release(&sv->remake);
    mu_enforcer_release(&sv->enf);
    mu_apply_release(&sv->apply);
    mu_jobctl_free(sv->jobctl);
    mu_view_slot_release(&sv->views);
    mu_view_cache_release(&sv->vcache);
    mu_evq_release(&sv->q);
    mu_kube_pool_free(sv->bind_pool);
    mu_cluster_release(&sv->cluster);
    mu_topo_free(&sv->topo);
    mu_conf_release(&sv->conf);
    mu_kube_config_release(&sv->cfg);
    mu_smetrics_release(&sv->metrics);
    json_decref(sv->report);
    pthread_mutex_destroy(&sv->report_lock);
    {
        size_t it = 0;
        void *v;

        while (mu_map_next(&sv->pending_cmds, &it, NULL, &v))
            json_decref(v);
        mu_map_release(&sv->pending_cmds);
    }
}

/* Commands whose DELETE went through: the job actions among them go to
 * the vcjob controller. True when scheduling may have changed. */
static bool commands_done(struct mu_serve *sv)
{
    struct mu_queuectl_job j;
    bool changed = mu_queuectl_changed(sv->qc);

    while (mu_queuectl_next_job(sv->qc, &j)) {
        mu_jobctl_command(sv->jobctl, j.ns, j.name, j.action);
        mu_queuectl_job_release(&j);
        changed = true;
    }
    return changed;
}

int mu_serve_run(const struct mu_serve_opts *o, struct mu_err *err)
{
    struct mu_serve sv;
    int64_t next_tick, burst_end = 0, start_ns = mu_now_ns();
    int64_t busy_ns = 0; /* the last cycle and its publication took */
    bool dirty = false, was_synced = false;
    int r;

    r = setup(&sv, o, err);
    if (r < 0) {
        teardown(&sv);
        return r;
    }
    r = 0;
    next_tick = mu_now_ns() + o->period_ms * 1000000;
    while (!atomic_load(o->stop)) {
        /* a burst of changes is coalesced for coalesce_ms from its first
         * event, never longer, so a busy stream cannot starve the cycle.
         * Until every cache has listed nothing runs, so only events (and
         * the stop flag, the Lease) are waited for: burst_end and next_tick
         * pass during a long initial list, and a wait until a moment
         * already past would spin (at 50,000 pods it took a core for the
         * whole list, from the apiserver that sends it) */
        struct mu_ev *evs = mu_evq_take(
            &sv.q, !all_synced(&sv) ? mu_now_ns() + MU_SERVE_UNSYNCED_WAIT_NS
                   : dirty          ? burst_end
                                    : next_tick);
        bool was_dirty = dirty;

        for (struct mu_ev *e = evs; e; e = e->next) {
            if (e->src == MU_SRC_BIND_REPORT) {
                if (e->ok || !e->timed_out ||
                    !mu_enforcer_renew(&sv.enf, e->release))
                    mu_enforcer_bind_report(&sv.enf, e->release, e->ok,
                                            e->detail);
                dirty = true;
            } else if (e->src == MU_SRC_UNDO) {
                mu_jobctl_pod_undone(
                    sv.jobctl,
                    json_string_value(json_object_get(e->obj, "namespace")),
                    json_string_value(json_object_get(e->obj, "name")),
                    e->detail, e->ok);
            } else if (e->src == MU_SRC_LEASE) {
                dirty = true; /* leadership changed: look now */
            } else if (e->src == MU_SRC_FILTER_MISS && e->ok) {
                mu_enforcer_unseen(&sv.enf, e->detail);
            } else if (e->src == MU_SRC_FILTER_MISS) {
                if (was_synced && sv.leads)
                    mu_enforcer_filter_miss(&sv.enf, e->detail);
            } else if (e->src == MU_SRC_WRITE_DONE) {
                size_t failed;

                mu_writer_drain(sv.writer, &failed);
                /* gated batches whose gates are lifted now (enforce.h) */
                mu_enforcer_bind_ungated(&sv.enf);
                dirty |= failed > 0;
                dirty |= commands_done(&sv);
            } else {
                dirty |= mu_apply_event(&sv.apply, e);
                mu_queuectl_set_synced(sv.qc, sv.apply.synced[MU_SRC_QUEUE],
                                       all_synced(&sv));
                if (e->src == MU_SRC_COMMAND && sv.leads)
                    mu_queuectl_command(sv.qc, e->type, e->obj);
                else if (e->src == MU_SRC_COMMAND)
                    keep_command(&sv, e);
            }
        }
        mu_ev_free(evs);
        /* lost, or past the renew deadline while the elector's request
         * still hangs: either way this leadership is over */
        if (sv.lease && (mu_lease_lost(sv.lease) ||
                         (sv.leads && !mu_lease_leading(sv.lease)))) {
            say(&sv, "lost the lease: stopped writing; exiting so that a "
                     "fresh process follows");
            r = mu_err_set(err, -ENOLCK, "lost the leader election lease");
            break;
        }
        /* and never shorter than the last cycle took: under a stream
         * that never stops (a backlog binding), the scheduler thread
         * takes at most half a core and leaves the rest to the control
         * plane it shares the machine with (issue 15) */
        if (dirty && !was_dirty)
            burst_end = mu_now_ns() +
                        MU_MAX(o->coalesce_ms * 1000000, busy_ns);
        /* before every cache has listed, the view stays the empty unsynced
         * one of setup: /filter and /bind answer "starting" without
         * looking at pods, so a view of them built per event batch would
         * be wasted (and quadratic in a long initial list) */
        if (!all_synced(&sv))
            continue;
        if (!was_synced)
            say(&sv, "caches synced in %.1f s: %zu nodes, %zu pods, %zu "
                     "podgroups, %zu queues",
                (double)(mu_now_ns() - start_ns) / 1e9, sv.cluster.nnodes,
                sv.cluster.ntasks, sv.cluster.njobs, sv.cluster.nqueues);
        was_synced = true;
        if (!sv.leads) {
            /* a follower: warm caches, a view for /filter, no writes */
            if (!leading_fn(&sv)) {
                if (dirty || mu_now_ns() >= next_tick) {
                    publish(&sv);
                    if (atomic_load(&sv.report_wanted))
                        mu_cluster_link(&sv.cluster); /* no cycle links it */
                    report(&sv);
                    dirty = false;
                    next_tick = mu_now_ns() + o->period_ms * 1000000;
                }
                continue;
            }
            take_over(&sv);
            mu_queuectl_default_queue(sv.qc);
            dirty = true;
            burst_end = 0;
        }
        mu_jobctl_sync(sv.jobctl, false);
        if (dirty && mu_now_ns() < burst_end)
            continue;
        if (dirty || mu_now_ns() >= next_tick) {
            int64_t busy0 = mu_now_ns();

            if (busy0 >= next_tick)
                mu_jobctl_sync(sv.jobctl, true);
            mu_enforcer_expire(&sv.enf);
            mu_remaker_recover(&sv.remake);
            if (!dirty && sv.settled && mu_now_ns() < sv.wake_ns &&
                mu_enforcer_idle(&sv.enf) && mu_remaker_idle(&sv.remake)) {
                idle_tick(&sv);
            } else {
                if (!cycle(&sv))
                    publish(&sv);
            }
            mu_enforcer_announce(&sv.enf);
            mu_enforcer_partial(&sv.enf);
            dirty = false;
            next_tick = mu_now_ns();
            busy_ns = next_tick - busy0;
            next_tick += o->period_ms * 1000000;
        }
    }
    say(&sv, "stopping");
    teardown(&sv);
    return r;
}
