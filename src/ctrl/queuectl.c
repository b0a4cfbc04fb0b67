/* The queue controller and Commands (see queuectl.h). */
#include "ctrl/queuectl.h"

#include "api/implicit.h"
#include "api/json.h"
#include "api/unsupported.h"
#include "sched/qtree.h"
#include "ctrl/command.h"
#include "ctrl/queue.h"
#include "kube/paths.h"

/* The status last written for one queue (key: its name). */
struct qc_status {
    char *sig;    /* what it said (uid, state, counts, allocated), or NULL */
    bool sending; /* a write is in flight */
    bool again;   /* a sync found newer status while it was */
};

struct mu_queuectl {
    const struct mu_ctl *ctl;
    struct mu_map mem;      /* queue name -> struct mu_qctl_q (queue.h) */
    struct mu_map status;   /* queue name -> struct qc_status */
    struct mu_map deleting; /* "ns/name" of Commands whose DELETE is out */
    struct mu_queuectl_job *jobs; /* due, oldest first */
    size_t njobs;
    bool queues_listed, all_listed, changed;
    enum mu_conf_share share;
};

/* A Command's DELETE in flight: the Command as decoded. */
struct qc_cmd {
    struct mu_queuectl *qc;
    char *key;
    struct mu_command c;
    int decode_rc;
    struct mu_err decode_err;
};

/* A queue status write in flight: what to record when it went through. */
struct qc_write {
    struct mu_queuectl *qc;
    char *name, *uid, *sig;
    enum mu_queue_state observed, s;
    bool with_state, requested;
    enum mu_qaction request;
    char by[MU_QCTL_BY_MAX];
    struct mu_queue_counts n;
    int64_t now_ms;
};

struct mu_queuectl *mu_queuectl_new(const struct mu_ctl *ctl)
{
    struct mu_queuectl *qc = mu_xcalloc(1, sizeof(*qc));

    qc->ctl = ctl;
    qc->share = MU_SHARE_PROPORTION;
    mu_map_init(&qc->mem);
    mu_map_init(&qc->status);
    mu_map_init(&qc->deleting);
    return qc;
}

void mu_queuectl_free(struct mu_queuectl *qc)
{
    size_t it = 0;
    void *v;

    if (!qc)
        return;
    while (mu_map_next(&qc->mem, &it, NULL, &v))
        free(v);
    it = 0;
    while (mu_map_next(&qc->status, &it, NULL, &v)) {
        free(((struct qc_status *)v)->sig);
        free(v);
    }
    for (size_t i = 0; i < qc->njobs; i++)
        mu_queuectl_job_release(&qc->jobs[i]);
    free(qc->jobs);
    mu_map_release(&qc->mem);
    mu_map_release(&qc->status);
    mu_map_release(&qc->deleting);
    free(qc);
}

void mu_queuectl_set_synced(struct mu_queuectl *qc, bool queues_listed,
                            bool all_listed)
{
    qc->queues_listed = queues_listed;
    qc->all_listed = all_listed;
}

bool mu_queuectl_changed(struct mu_queuectl *qc)
{
    bool c = qc->changed;

    qc->changed = false;
    return c;
}

void mu_queuectl_job_release(struct mu_queuectl_job *j)
{
    free(j->ns);
    free(j->name);
    free(j->action);
    memset(j, 0, sizeof(*j));
}

bool mu_queuectl_next_job(struct mu_queuectl *qc, struct mu_queuectl_job *out)
{
    if (!qc->njobs)
        return false;
    *out = qc->jobs[0];
    memmove(qc->jobs, qc->jobs + 1, --qc->njobs * sizeof(*qc->jobs));
    return true;
}

/* ------------------------------------------------------------ Commands -- */

static void refuse(struct mu_queuectl *qc, const struct mu_command *c,
                   const char *why)
{
    char *msg = mu_xasprintf("command %s/%s (action %s) not carried out and "
                             "deleted: %s",
                             c->meta.ns, c->meta.name,
                             c->action ? c->action : "none", why);

    mu_ctl_log(qc->ctl, "%s", msg);
    mu_ctl_event(qc->ctl, "bus.volcano.sh/v1alpha1", "Command", c->meta.ns,
                 c->meta.name, c->meta.uid, "Warning", "BadCommand", msg);
    free(msg);
}

/* OpenQueue / CloseQueue: the request waits in the memory for the next
 * sync, which moves the state. */
static void queue_command(struct mu_queuectl *qc, const struct mu_command *c)
{
    const struct mu_cqueue *q = mu_cluster_queue(qc->ctl->cluster, c->target);
    char *by;

    if (!q && qc->queues_listed) {
        char *why = mu_xasprintf("queue %s does not exist", c->target);

        refuse(qc, c, why);
        free(why);
        return;
    }
    by = mu_xasprintf("%s/%s", c->meta.ns, c->meta.name);
    /* before the queues have listed, the uid is learnt from the queue */
    mu_qctl_request(
        mu_qctl_get(&qc->mem, c->target, q ? q->spec.meta.uid : NULL),
        c->qaction, by);
    mu_ctl_log(qc->ctl, "command %s: %s %s", by, c->action, c->target);
    qc->changed = true;
    free(by);
}

static void job_command(struct mu_queuectl *qc, const struct mu_command *c)
{
    char *msg = mu_xasprintf("Start to execute command %s, and clean it up "
                             "to make sure executed not more than once.",
                             c->action);
    struct mu_queuectl_job *j;

    mu_ctl_log(qc->ctl, "command %s/%s: %s vcjob %s/%s%s", c->meta.ns,
               c->meta.name, c->action, c->meta.ns, c->target,
               qc->all_listed ? "" : " (caches not synced yet)");
    mu_ctl_event(qc->ctl, "batch.volcano.sh/v1alpha1", "Job", c->meta.ns,
                 c->target, c->target_uid, "Normal", "CommandIssued", msg);
    free(msg);
    qc->jobs = mu_xrealloc(qc->jobs, (qc->njobs + 1) * sizeof(*qc->jobs));
    j = &qc->jobs[qc->njobs++];
    j->ns = mu_xstrdup(c->meta.ns);
    j->name = mu_xstrdup(c->target);
    j->action = mu_xstrdup(c->action);
    qc->changed = true;
}

static void cmd_free(struct qc_cmd *d)
{
    mu_command_release(&d->c);
    free(d->key);
    free(d);
}

/* The DELETE completed: carried out only when it went through. */
static void command_deleted(void *ctx, int rc, const char *msg)
{
    struct qc_cmd *d = ctx;
    struct mu_queuectl *qc = d->qc;
    const struct mu_command *c = &d->c;

    mu_map_del(&qc->deleting, d->key);
    if (rc == -ENOENT || rc == -ECANCELED) /* handled before; stopping */
        goto out;
    if (rc < 0) {
        mu_ctl_log(qc->ctl,
                   "command %s/%s: cannot delete it, so it is not carried "
                   "out: %s",
                   c->meta.ns, c->meta.name, msg);
        goto out;
    }
    if (d->decode_rc < 0)
        refuse(qc, c, d->decode_err.msg);
    else if (c->on == MU_COMMAND_QUEUE)
        queue_command(qc, c);
    else
        job_command(qc, c);
out:
    cmd_free(d);
}

void mu_queuectl_command(struct mu_queuectl *qc, enum mu_watch_type type,
                         const json_t *obj)
{
    struct qc_cmd *d;
    char *path;

    if (!obj || (type != MU_WATCH_LIST_ITEM && type != MU_WATCH_ADDED &&
                 type != MU_WATCH_MODIFIED))
        return;
    d = mu_xcalloc(1, sizeof(*d));
    d->qc = qc;
    d->decode_rc = mu_command_decode(obj, &d->c, &d->decode_err);
    if (!d->c.meta.name) {
        mu_ctl_log(qc->ctl, "ignoring a Command: %s", d->decode_err.msg);
        cmd_free(d);
        return;
    }
    d->key = mu_xasprintf("%s/%s", d->c.meta.ns, d->c.meta.name);
    if (d->c.meta.deleting || mu_map_get(&qc->deleting, d->key)) {
        cmd_free(d);
        return;
    }
    path = mu_api_path(MU_API_COMMAND, d->c.meta.ns, d->c.meta.name, NULL);
    {
        struct mu_write w = {.method = "DELETE", .path = path,
                             .body = mu_api_delete_options(d->c.meta.uid,
                                                           NULL),
                             .done = command_deleted, .ctx = d};

        mu_map_put(&qc->deleting, d->key, (void *)1);
        if (mu_writer_submit(qc->ctl->writer, &w) < 0) {
            mu_ctl_log(qc->ctl, "command %s: not deleted: stopping", d->key);
            mu_map_del(&qc->deleting, d->key);
            cmd_free(d);
        }
    }
    free(path);
}

/* ------------------------------------------------------- Queue status -- */

/* The status.allocated of a queue as a merge patch: every known dimension
 * the queue holds none of is null, so that it is removed (a merge patch
 * with {} would keep what an earlier write put there). */
static json_t *allocated_patch(const struct mu_cluster *c,
                               const struct mu_res *allocated)
{
    json_t *alloc = json_object();

    for (int d = 0; d < c->rn.n; d++) {
        char buf[64];

        if (d == MU_RES_PODS)
            continue;
        json_object_set_new(alloc, c->rn.name[d],
                            allocated->v[d]
                                ? json_string(mu_quantity_format(
                                      c->rn.name[d], allocated->v[d], buf,
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
static void queue_event(struct mu_queuectl *qc, const struct qc_write *d)
{
    int held = mu_queue_counts_total(&d->n);
    char *msg;

    if (d->s == MU_QUEUE_CLOSING)
        msg = mu_xasprintf("queue %s %s by command %s: Closing until its %d "
                           "PodGroup%s %s gone; it admits no new work, what "
                           "runs keeps running",
                           d->name, command_verb(d->request), d->by, held,
                           held == 1 ? "" : "s", held == 1 ? "is" : "are");
    else
        msg = mu_xasprintf("queue %s %s by command %s: %s", d->name,
                           command_verb(d->request), d->by,
                           mu_queue_state_name(d->s));
    mu_ctl_log(qc->ctl, "%s", msg);
    mu_ctl_event(qc->ctl, "scheduling.volcano.sh/v1beta1", "Queue", NULL,
                 d->name, d->uid[0] ? d->uid : NULL, "Normal",
                 mu_qaction_name(d->request), msg);
    free(msg);
}

static void write_free(struct qc_write *d)
{
    free(d->name);
    free(d->uid);
    free(d->sig);
    free(d);
}

/* The status write completed: on success the memory moves as it says. */
static void queue_written(void *ctx, int rc, const char *msg)
{
    struct qc_write *d = ctx;
    struct mu_queuectl *qc = d->qc;
    struct qc_status *st = mu_map_get(&qc->status, d->name);
    struct mu_qctl_q *e = mu_map_get(&qc->mem, d->name);

    if (st) {
        st->sending = false;
        if ((st->again || rc < 0) && rc != -ECANCELED)
            qc->changed = true;
        st->again = false;
    }
    if (rc < 0) {
        if (rc != -ECANCELED)
            mu_ctl_log(qc->ctl, "status of queue %s: %s", d->name, msg);
        goto out;
    }
    if (!st || !e || strcmp(e->uid, d->uid)) /* made again since */
        goto out;
    if (d->with_state && d->s != d->observed && !d->requested)
        mu_ctl_log(qc->ctl, "queue %s: %s -> %s (%d PodGroups)", d->name,
                   mu_queue_state_name(d->observed),
                   mu_queue_state_name(d->s), mu_queue_counts_total(&d->n));
    if (d->requested)
        queue_event(qc, d);
    {
        /* a Command that came while the write was out waits on */
        bool newer = e->requested &&
                     (!d->requested || e->request != d->request ||
                      strcmp(e->by, d->by));
        enum mu_qaction a = e->request;
        char by[MU_QCTL_BY_MAX];

        snprintf(by, sizeof(by), "%s", e->by);
        mu_qctl_wrote(e, d->with_state, d->s, d->now_ms);
        if (newer)
            mu_qctl_request(e, a, by);
    }
    e->status_npg = mu_queue_counts_total(&d->n);
    free(st->sig);
    st->sig = d->sig;
    d->sig = NULL;
out:
    write_free(d);
}

/* The fields of q that the configured share plugin does not act on, and
 * what it does instead, or NULL: spec.parent without a queue tree,
 * spec.deserved without capacity. */
static const char *unsupported_fields(const struct mu_queuectl *qc,
                                      const struct mu_cqueue *q,
                                      const char **then)
{
    /* Volcano's queue controller sets parent root on every queue: flat */
    bool parent = q->spec.parent && strcmp(q->spec.parent, "root");
    bool deserved = !mu_res_is_empty(&q->spec.deserved);

    switch (qc->share) {
    case MU_SHARE_TREE:
        return NULL;
    case MU_SHARE_CAPACITY:
        *then = "the queues share the cluster flat, by spec.deserved "
                "(capacity without enableHierarchy)";
        return parent ? "spec.parent" : NULL;
    default:
        *then = "the queue's share comes from its weight, capability and "
                "guarantee (proportion)";
        return parent && deserved ? "spec.parent, spec.deserved"
               : parent           ? "spec.parent"
               : deserved         ? "spec.deserved"
                                  : NULL;
    }
}

/* status.conditions of q: Unsupported naming the fields above, else null
 * (a merge patch's delete). */
static json_t *unsupported(const struct mu_queuectl *qc,
                           const struct mu_cqueue *q)
{
    const char *then = NULL, *f = unsupported_fields(qc, q, &then);
    char ts[32];

    if (!f)
        return json_null();
    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    return mu_json_must(json_pack("[o]", mu_unsupported_cond(f, then, ts)));
}

/*
 * The queue controller's sync and the scheduler's share of Queue status:
 * state (volcano-api.md §3.7, ctrl/queue.h), the PodGroup counts per phase
 * and allocated, written with one merge patch when any of them changed.
 */
static void write_queue(struct mu_queuectl *qc, const struct mu_cqueue *q,
                        const struct mu_res *allocated, int64_t now_ms)
{
    const char *name = q->spec.meta.name;
    struct mu_queue_counts n = {0};
    struct mu_qctl_q *e;
    struct qc_status *st = mu_map_get(&qc->status, name);
    struct qc_write *d;
    enum mu_queue_state s;
    bool with_state;
    int total;
    json_t *alloc, *body;
    char *sig, *path, *text;

    for (size_t k = 0; k < q->njobs; k++)
        if (!q->jobs[k]->implicit)
            mu_queue_counts_add(&n, q->jobs[k]->phase);
    total = mu_queue_counts_total(&n);
    e = mu_qctl_get(&qc->mem, name, q->spec.meta.uid);
    s = mu_qctl_step(e, q->spec.state, total, now_ms);
    with_state = mu_qctl_state_due(e, q->spec.state, s);
    alloc = allocated_patch(qc->ctl->cluster, allocated);
    text = json_dumps(alloc, JSON_SORT_KEYS | JSON_COMPACT);
    {
        const char *then = NULL, *f = unsupported_fields(qc, q, &then);

        sig = mu_xasprintf("%s|%s|%d %d %d %d %d|%s|%s",
                           q->spec.meta.uid ? q->spec.meta.uid : "",
                           mu_queue_state_name(s), n.pending, n.running,
                           n.inqueue, n.unknown, n.completed,
                           text ? text : "", f ? f : "");
    }
    free(text);
    if (!st) {
        st = mu_xcalloc(1, sizeof(*st));
        mu_map_put(&qc->status, name, st);
    }
    /* unchanged; or only its figures changed, neither to nor from no
     * PodGroup at all (what the deletion policy in crds/ reads), and they
     * were written less than MU_QUEUE_FIGURES_MS ago (a later cycle, at the
     * latest the periodic one, writes them) */
    if (st->sig && !e->requested &&
        (!strcmp(st->sig, sig) ||
         (!with_state && (total > 0) == (e->status_npg > 0) &&
          now_ms - e->status_at_ms < MU_QUEUE_FIGURES_MS))) {
        json_decref(alloc);
        free(sig);
        return;
    }
    if (st->sending) { /* one at a time: this one when that one is done */
        st->again = true;
        json_decref(alloc);
        free(sig);
        return;
    }
    body = json_pack("{s:o,s:i,s:i,s:i,s:i,s:i}", "allocated", alloc,
                     "pending", n.pending, "running", n.running, "inqueue",
                     n.inqueue, "unknown", n.unknown, "completed",
                     n.completed);
    json_object_set_new(body, "conditions", unsupported(qc, q));
    if (with_state)
        json_object_set_new(body, "state",
                            json_string(mu_queue_state_name(s)));
    d = mu_xcalloc(1, sizeof(*d));
    *d = (struct qc_write){.qc = qc, .name = mu_xstrdup(name),
                           .uid = mu_xstrdup(e->uid), .sig = sig,
                           .observed = q->spec.state, .s = s,
                           .with_state = with_state,
                           .requested = e->requested, .request = e->request,
                           .n = n, .now_ms = now_ms};
    snprintf(d->by, sizeof(d->by), "%s", e->by);
    path = mu_api_path(MU_API_QUEUE, NULL, name, "status");
    {
        struct mu_write w = {.method = "PATCH", .path = path,
                             .content_type = MU_KUBE_MERGE_PATCH,
                             .body = json_pack("{s:o}", "status", body),
                             .flags = MU_WRITE_BACKGROUND,
                             .done = queue_written, .ctx = d};

        if (mu_writer_submit(qc->ctl->writer, &w) < 0) {
            mu_ctl_log(qc->ctl, "status of queue %s: not sent", name);
            write_free(d);
        } else {
            st->sending = true;
        }
    }
    free(path);
}

void mu_queuectl_sync(struct mu_queuectl *qc, int64_t now_ms)
{
    const struct mu_cluster *c = qc->ctl->cluster;
    struct mu_res *alloc = mu_xcalloc(c->nqueues + 1, sizeof(*alloc));
    struct mu_qtree t;

    mu_qtree_build(&t, c);
    mu_qtree_rollup(&t, c, alloc);
    mu_qtree_free(&t);
    for (size_t i = 0; i < c->nqueues; i++)
        write_queue(qc, c->queues[i], &alloc[i], now_ms);
    free(alloc);
}

void mu_queuectl_set_share(struct mu_queuectl *qc, enum mu_conf_share share)
{
    qc->share = share;
}

/* ------------------------------------------------------ default queue -- */

static void queue_made(struct mu_queuectl *qc, const char *name, int rc,
                       const char *msg)
{
    char *path;

    if (rc == 0 || rc == -EEXIST) {
        mu_ctl_log(qc->ctl, "created queue %s", name);
    } else if (rc != -ECANCELED) {
        path = mu_api_path(MU_API_QUEUE, NULL, NULL, NULL);
        mu_ctl_log(qc->ctl, "create in %s: %s", path, msg);
        free(path);
    }
}

static void default_made(void *ctx, int rc, const char *msg)
{
    queue_made(ctx, "default", rc, msg);
}

static void root_made(void *ctx, int rc, const char *msg)
{
    queue_made(ctx, MU_QTREE_ROOT, rc, msg);
}

/* POSTs queue name (body owned) unless the cache has it. */
static void make_queue(struct mu_queuectl *qc, const char *name, json_t *body,
                       void (*done)(void *ctx, int rc, const char *msg))
{
    char *path;

    if (mu_cluster_queue(qc->ctl->cluster, name)) {
        json_decref(body);
        return;
    }
    path = mu_api_path(MU_API_QUEUE, NULL, NULL, NULL);
    {
        struct mu_write w = {.method = "POST", .path = path, .body = body,
                             .done = done, .ctx = qc};

        if (mu_writer_submit(qc->ctl->writer, &w) < 0)
            mu_ctl_log(qc->ctl, "create queue %s: not sent", name);
    }
    free(path);
}

void mu_queuectl_default_queue(struct mu_queuectl *qc)
{
    make_queue(qc, "default", mu_default_queue(), default_made);
    /* Volcano's root queue: not reclaimable, weight 1 */
    if (qc->share == MU_SHARE_TREE)
        make_queue(qc, MU_QTREE_ROOT,
                   json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:b}}", "apiVersion",
                             "scheduling.volcano.sh/v1beta1", "kind",
                             "Queue", "metadata", "name", MU_QTREE_ROOT,
                             "spec", "weight", 1, "reclaimable", 0),
                   root_made);
}
