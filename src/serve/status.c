/*
 * Status the cycle owes the API: PodGroup phase, counts and conditions,
 * Queue state (the queue controller), PodGroup counts and allocation, and
 * events, each written only on change.
 */
#include "serve/serve_int.h"

#include "ctrl/queue.h"

/* A queue's figures (allocated, PodGroup counts) are written at most this
 * often: they change with every gang placed, and each write is a request
 * on the scheduler thread. State changes and Commands are written at once. */
#define MU_QUEUE_FIGURES_MS 1000

void mu_serve_post_event(struct mu_serve *sv, const char *api,
                         const char *kind, const char *ns, const char *name,
                         const char *uid, const char *type, const char *reason,
                         const char *msg)
{
    struct mu_kube_event ev = {
        .involved = {api, kind, ns, name, uid},
        .type = type,
        .reason = reason,
        .message = msg,
        .first_time = time(NULL),
        .last_time = time(NULL),
        .count = 1,
    };
    if (mu_writer_event(sv->writer, &ev) < 0)
        mu_serve_log(sv, "event %s on %s/%s: not sent", reason, ns ? ns : "",
                     name);
}

struct pg_done {
    struct mu_serve *sv;
    char *wkey, *sig;
};

static void pg_written(void *ctx, int rc, const char *msg)
{
    struct pg_done *d = ctx;

    if (rc < 0 && rc != -ECANCELED) {
        const char *cur = mu_map_get(&d->sv->written, d->wkey);

        mu_serve_log(d->sv, "status of podgroup %s: %s", d->wkey + 3, msg);
        if (cur && !strcmp(cur, d->sig))
            free(mu_map_del(&d->sv->written, d->wkey));
    }
    free(d->wkey);
    free(d->sig);
    free(d);
}

static json_t *pg_status(const struct mu_job *j)
{
    json_t *st = json_pack("{s:s,s:i,s:i,s:i}", "phase",
                           mu_pg_phase_name(j->phase), "running", j->running,
                           "succeeded", j->succeeded, "failed", j->failed);

    if (j->cond.type) {
        char ts[32];

        mu_kube_time_text(time(NULL), ts, sizeof(ts));
        json_object_set_new(
            st, "conditions",
            json_pack("[{s:s,s:s,s:s,s:s,s:s}]", "type", j->cond.type,
                      "status", "True", "reason", j->cond.reason, "message",
                      j->cond.message, "lastTransitionTime", ts));
    }
    return st;
}

/* Replaces the text remembered under key; returns true when it changed. */
static bool remember(struct mu_serve *sv, const char *key, const char *text)
{
    const char *old = mu_map_get(&sv->written, key);

    if (old && !strcmp(old, text))
        return false;
    free(mu_map_put(&sv->written, key, mu_xstrdup(text)));
    return true;
}

/* Writes a PodGroup's status when what it says changed, and an event when
 * its condition's type or reason changed. */
static void write_pg(struct mu_serve *sv, const struct mu_job *j)
{
    char *sig = mu_xasprintf("%s|%d|%d|%d|%s|%s", mu_pg_phase_name(j->phase),
                             j->running, j->succeeded, j->failed,
                             j->cond.type ? j->cond.type : "",
                             j->cond.message ? j->cond.message : "");
    /* an event per kind of condition (type and reason), not per message:
     * the message's figures move with every member made or GPU freed, and
     * the status above carries the newest one */
    char *cond = mu_xasprintf("%s|%s", j->cond.type ? j->cond.type : "",
                              j->cond.reason ? j->cond.reason : "");
    char *wkey = mu_xasprintf("pg/%s", j->key);
    char *ckey = mu_xasprintf("pgc/%s", j->key);
    const char *old = mu_map_get(&sv->written, wkey);

    if (!old || strcmp(old, sig)) {
        char *path = mu_xasprintf(
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s",
            j->pg.meta.ns, j->pg.meta.name);
        json_t *patch = json_pack("{s:o}", "status", pg_status(j));
        struct pg_done *d = mu_xcalloc(1, sizeof(*d));
        struct mu_write w = {.method = "PATCH", .path = path, .body = patch,
                             .content_type = MU_KUBE_MERGE_PATCH,
                             .key = wkey, .flags = MU_WRITE_COALESCE,
                             .done = pg_written, .ctx = d};

        d->sv = sv;
        d->wkey = mu_xstrdup(wkey);
        d->sig = mu_xstrdup(sig);
        if (mu_writer_submit(sv->writer, &w) < 0) {
            mu_serve_log(sv, "status of podgroup %s: not sent", j->key);
            free(d->wkey);
            free(d->sig);
            free(d);
        } else {
            remember(sv, wkey, sig);
            if (j->cond.type && remember(sv, ckey, cond)) {
                bool unsched = !strcmp(j->cond.type, "Unschedulable");

                mu_serve_post_event(
                    sv, "scheduling.volcano.sh/v1beta1", "PodGroup",
                    j->pg.meta.ns, j->pg.meta.name, j->pg.meta.uid,
                    unsched ? "Warning" : "Normal",
                    unsched ? "Unschedulable" : "Scheduled",
                    unsched ? j->cond.message : "pod group is ready");
            }
        }
        free(path);
    }
    free(sig);
    free(cond);
    free(wkey);
    free(ckey);
}

/* The status.allocated of a queue as a merge patch: every known dimension
 * the queue holds none of is null, so that it is removed (a merge patch
 * with {} would keep what an earlier write put there). */
static json_t *allocated_patch(const struct mu_cluster *c,
                               const struct mu_cqueue *q)
{
    json_t *alloc = json_object();

    for (int d = 0; d < c->rn.n; d++) {
        char buf[64];

        if (d == MU_RES_PODS)
            continue;
        json_object_set_new(alloc, c->rn.name[d],
                            q->allocated.v[d]
                                ? json_string(mu_quantity_format(
                                      c->rn.name[d], q->allocated.v[d], buf,
                                      sizeof(buf)))
                                : json_null());
    }
    return alloc;
}

static const char *command_verb(enum mu_qaction a)
{
    return a == MU_QACT_OPEN ? "opened" : "closed";
}

/* A Command's open or close has been written: the Queue says so. */
static void queue_event(struct mu_serve *sv, const struct mu_cqueue *q,
                        const struct mu_qctl_q *e, enum mu_queue_state s,
                        const struct mu_queue_counts *n)
{
    int held = mu_queue_counts_total(n);
    char *msg;

    if (s == MU_QUEUE_CLOSING)
        msg = mu_xasprintf("queue %s %s by command %s: Closing until its %d "
                           "PodGroup%s %s gone; it admits no new work, what "
                           "runs keeps running",
                           q->spec.meta.name, command_verb(e->request), e->by,
                           held, held == 1 ? "" : "s",
                           held == 1 ? "is" : "are");
    else
        msg = mu_xasprintf("queue %s %s by command %s: %s",
                           q->spec.meta.name, command_verb(e->request), e->by,
                           mu_queue_state_name(s));
    mu_serve_log(sv, "%s", msg);
    mu_serve_post_event(sv, "scheduling.volcano.sh/v1beta1", "Queue", NULL,
                        q->spec.meta.name, q->spec.meta.uid, "Normal",
                        mu_qaction_name(e->request), msg);
    free(msg);
}

/*
 * The queue controller's sync and the scheduler's share of Queue status:
 * state (volcano-api.md §3.7, ctrl/queue.h), the PodGroup counts per phase
 * and allocated, written with one merge patch when any of them changed.
 * The controller's memory lives in sv->written under "qc/<name>".
 */
static void write_queue(struct mu_serve *sv, const struct mu_cqueue *q,
                        int64_t now_ms)
{
    const char *name = q->spec.meta.name;
    struct mu_queue_counts n = {0};
    struct mu_qctl_q *e;
    enum mu_queue_state s;
    bool with_state, requested;
    int total;
    json_t *alloc, *st, *patch;
    char *wkey, *sig, *path, *text;
    const char *old;
    struct mu_err err;

    for (size_t k = 0; k < q->njobs; k++)
        if (!q->jobs[k]->implicit)
            mu_queue_counts_add(&n, q->jobs[k]->phase);
    total = mu_queue_counts_total(&n);
    e = mu_qctl_get(&sv->written, name, q->spec.meta.uid);
    s = mu_qctl_step(e, q->spec.state, total, now_ms);
    with_state = mu_qctl_state_due(e, q->spec.state, s);
    requested = e->requested;
    alloc = allocated_patch(&sv->cluster, q);
    text = json_dumps(alloc, JSON_SORT_KEYS | JSON_COMPACT);
    wkey = mu_xasprintf("q/%s", name);
    sig = mu_xasprintf("%s|%s|%d %d %d %d %d|%s",
                       q->spec.meta.uid ? q->spec.meta.uid : "",
                       mu_queue_state_name(s), n.pending, n.running,
                       n.inqueue, n.unknown, n.completed, text ? text : "");
    old = mu_map_get(&sv->written, wkey);
    /* unchanged; or only its figures changed, neither to nor from no
     * PodGroup at all (what the deletion policy in crds/ reads), and they
     * were written less than MU_QUEUE_FIGURES_MS ago (a later cycle, at the
     * latest the periodic one, writes them) */
    if (old && !requested &&
        (!strcmp(old, sig) ||
         (!with_state && (total > 0) == (e->status_npg > 0) &&
          now_ms - e->status_at_ms < MU_QUEUE_FIGURES_MS))) {
        json_decref(alloc);
        goto out;
    }
    st = json_pack("{s:o,s:i,s:i,s:i,s:i,s:i}", "allocated", alloc, "pending",
                   n.pending, "running", n.running, "inqueue", n.inqueue,
                   "unknown", n.unknown, "completed", n.completed);
    if (with_state)
        json_object_set_new(st, "state",
                            json_string(mu_queue_state_name(s)));
    patch = json_pack("{s:o}", "status", st);
    path = mu_xasprintf("/apis/scheduling.volcano.sh/v1beta1/queues/%s",
                        name);
    if (mu_kube_status_patch(sv->kube, path, patch, NULL, &err) < 0) {
        mu_serve_log(sv, "status of queue %s: %s", name, err.msg);
    } else {
        if (with_state && s != q->spec.state && !requested)
            mu_serve_log(sv, "queue %s: %s -> %s (%d PodGroups)", name,
                         mu_queue_state_name(q->spec.state),
                         mu_queue_state_name(s), mu_queue_counts_total(&n));
        if (requested)
            queue_event(sv, q, e, s, &n);
        mu_qctl_wrote(e, with_state, s, now_ms);
        e->status_npg = total;
        free(mu_map_put(&sv->written, wkey, sig));
        sig = NULL;
    }
    json_decref(patch);
    free(path);
out:
    free(text);
    free(sig);
    free(wkey);
}

void mu_serve_write_status(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->njobs; i++)
        if (!c->jobs[i]->implicit)
            write_pg(sv, c->jobs[i]);
    for (size_t i = 0; i < c->nqueues; i++)
        write_queue(sv, c->queues[i], mu_now_ns() / 1000000);
}
