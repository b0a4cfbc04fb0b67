/*
 * Status the cycle owes the API: PodGroup phase, counts and conditions,
 * and their events, each written only on change (Queue status is the queue
 * controller's, ctrl/queuectl.h).
 */
#include "serve/status.h"

#include "api/json.h"
#include "api/unsupported.h"
#include "kube/paths.h"

struct pg_done {
    struct mu_status *s;
    char *key, *sig;
};

void mu_status_init(struct mu_status *s, const struct mu_ctl *ctl)
{
    s->ctl = ctl;
    s->inflight = 0;
    s->events_owed = 0;
    mu_map_init(&s->pgs);
}

/* Owes w's event (see mu_pg_written), or none with msg NULL. */
static void owe_event(struct mu_status *s, struct mu_pg_written *w,
                      const char *msg, bool warn)
{
    if (w->ev_msg)
        s->events_owed--;
    if (msg)
        s->events_owed++;
    free(w->ev_msg);
    w->ev_msg = msg ? mu_xstrdup(msg) : NULL;
    w->ev_warn = warn;
    w->ev_at = time(NULL);
}

static void written_free(struct mu_status *s, struct mu_pg_written *w)
{
    owe_event(s, w, NULL, false);
    free(w->sig);
    free(w->cond);
    free(w->uid);
    free(w);
}

void mu_status_release(struct mu_status *s)
{
    size_t it = 0;
    void *v;

    /* events are told, not kept: one owed at the stop is not sent */
    if (s->events_owed)
        mu_ctl_log(s->ctl, "stopping: %zu PodGroup events owed, not sent",
                   s->events_owed);
    while (mu_map_next(&s->pgs, &it, NULL, &v))
        written_free(s, v);
    mu_map_release(&s->pgs);
}

/* A failed write is forgotten, unless a newer status was sent since. */
static void pg_written(void *ctx, int rc, const char *msg)
{
    struct pg_done *d = ctx;

    d->s->inflight--;
    if (rc < 0 && rc != -ECANCELED) {
        struct mu_pg_written *w = mu_map_get(&d->s->pgs, d->key);

        mu_ctl_log(d->s->ctl, "status of podgroup %s: %s", d->key, msg);
        if (w && w->sig && !strcmp(w->sig, d->sig)) {
            free(w->sig);
            w->sig = NULL;
            w->phase = MU_PG_NONE;
        }
    }
    free(d->key);
    free(d->sig);
    free(d);
}

static json_t *pg_status(const struct mu_job *j)
{
    json_t *st = json_pack("{s:s,s:i,s:i,s:i}", "phase",
                           mu_pg_phase_name(j->phase), "running", j->running,
                           "succeeded", j->succeeded, "failed", j->failed);

    char ts[32];
    json_t *un;

    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    if (j->cond.type)
        json_object_set_new(
            st, "conditions",
            json_pack("[{s:s,s:s,s:s,s:s,s:s}]", "type", j->cond.type,
                      "status", "True", "reason", j->cond.reason, "message",
                      j->cond.message, "lastTransitionTime", ts));
    if ((un = mu_podgroup_unsupported_cond(&j->pg, ts)))
        json_array_append_new(mu_json_child(st, "conditions", true), un);
    return st;
}

/* Replaces the text remembered in *slot; returns true when it changed. */
static bool remember(char **slot, const char *text)
{
    if (*slot && !strcmp(*slot, text))
        return false;
    free(*slot);
    *slot = mu_xstrdup(text);
    return true;
}

/* A status owed: the gang, what it says, and how pressing (status.h). */
struct owed {
    const struct mu_job *j;
    char *sig, *cond;
    int rank;
};

enum { RANK_RUN, RANK_COND, RANK_PHASE, RANK_FIGURES, RANK_N };

static bool phase_runs(enum mu_pg_phase p)
{
    return p != MU_PG_NONE && p != MU_PG_PENDING && p != MU_PG_INQUEUE;
}

/* Fills *o and returns true when j's status differs from what was last
 * handed to the writer for it. */
static bool owed_of(struct mu_status *s, const struct mu_job *j,
                    struct owed *o)
{
    struct mu_pg_written *wr = mu_map_get(&s->pgs, j->key);
    char *sig = mu_xasprintf("%s|%d|%d|%d|%s|%s|%s", mu_pg_phase_name(j->phase),
                             j->running, j->succeeded, j->failed,
                             j->cond.type ? j->cond.type : "",
                             j->cond.message ? j->cond.message : "",
                             j->pg.unsupported ? j->pg.unsupported : "");
    enum mu_pg_phase was;

    if (wr && mu_strcmp0(wr->uid, j->pg.meta.uid)) {
        /* made again under the same name: nothing was written for it */
        owe_event(s, wr, NULL, false);
        free(wr->sig);
        free(wr->cond);
        wr->sig = wr->cond = NULL;
        wr->phase = MU_PG_NONE;
        free(wr->uid);
        wr->uid = j->pg.meta.uid ? mu_xstrdup(j->pg.meta.uid) : NULL;
    }
    was = wr && wr->sig ? wr->phase : MU_PG_NONE;
    if (wr && wr->sig && !strcmp(wr->sig, sig)) {
        free(sig);
        return false;
    }
    o->j = j;
    o->sig = sig;
    /* an event per kind of condition (type and reason), not per message:
     * the message's figures move with every member made or GPU freed, and
     * the status above carries the newest one */
    o->cond = mu_xasprintf("%s|%s", j->cond.type ? j->cond.type : "",
                           j->cond.reason ? j->cond.reason : "");
    if (j->phase != was && (phase_runs(j->phase) || phase_runs(was)))
        o->rank = RANK_RUN;
    else if (j->cond.type && (!wr || mu_strcmp0(wr->cond, o->cond)))
        o->rank = RANK_COND;
    else if (j->phase != was)
        o->rank = RANK_PHASE;
    else
        o->rank = RANK_FIGURES;
    return true;
}

/* Hands o's status to the writer, and an event when its condition's type
 * or reason changed. */
static void send_pg(struct mu_status *s, const struct owed *o)
{
    const struct mu_job *j = o->j;
    struct mu_pg_written *wr = mu_map_get(&s->pgs, j->key);
    char *path, *key;
    struct pg_done *d;

    if (!wr) {
        wr = mu_xcalloc(1, sizeof(*wr));
        wr->uid = j->pg.meta.uid ? mu_xstrdup(j->pg.meta.uid) : NULL;
        mu_map_put(&s->pgs, j->key, wr);
    }
    path = mu_api_path(MU_API_PODGROUP, j->pg.meta.ns, j->pg.meta.name, NULL);
    key = mu_xasprintf("pg/%s", j->key);
    d = mu_xcalloc(1, sizeof(*d));
    d->s = s;
    d->key = mu_xstrdup(j->key);
    d->sig = mu_xstrdup(o->sig);
    {
        struct mu_write w = {.method = "PATCH", .path = path,
                             .body = json_pack("{s:o}", "status",
                                               pg_status(j)),
                             .content_type = MU_KUBE_MERGE_PATCH,
                             .key = key,
                             .flags = MU_WRITE_COALESCE | MU_WRITE_BACKGROUND,
                             .done = pg_written, .ctx = d};

        if (mu_writer_submit(s->ctl->writer, &w) < 0) {
            mu_ctl_log(s->ctl, "status of podgroup %s: not sent", j->key);
            free(d->key);
            free(d->sig);
            free(d);
        } else {
            s->inflight++;
            remember(&wr->sig, o->sig);
            wr->phase = j->phase;
            /* a gang that fits and waits its turn in the release window
             * gets no Warning: it is not unschedulable, the condition
             * says what it waits for, and a backlog of 5,000 would post
             * 5,000 of them while its releases go out (issue 15) */
            if (j->cond.type && remember(&wr->cond, o->cond)) {
                bool unsched = !strcmp(j->cond.type, "Unschedulable");

                owe_event(s, wr,
                          !mu_strcmp0(j->cond.reason, "WaitingForRelease")
                              ? NULL
                          : unsched ? j->cond.message
                                    : "pod group is ready",
                          unsched);
            }
        }
    }
    free(path);
    free(key);
}

static void ev_written(void *ctx, int rc, const char *msg)
{
    struct pg_done *d = ctx;

    d->s->inflight--;
    if (rc < 0 && rc != -ECANCELED)
        mu_ctl_log(d->s->ctl, "event on podgroup %s: %s", d->key, msg);
    free(d->key);
    free(d);
}

/* Hands the events owed to the writer, in the cluster's order, while
 * *room and the window allow; returns false when some were held back. */
static bool send_events(struct mu_status *s, size_t *room)
{
    const struct mu_cluster *c = s->ctl->cluster;

    for (size_t i = 0; i < c->njobs && s->events_owed; i++) {
        const struct mu_job *j = c->jobs[i];
        struct mu_pg_written *w = mu_map_get(&s->pgs, j->key);
        struct mu_kube_event ev;
        struct pg_done *d;

        if (!w || !w->ev_msg)
            continue;
        if (*room < 1 || s->inflight >= MU_STATUS_WINDOW)
            return false;
        ev = (struct mu_kube_event){
            .involved = {"scheduling.volcano.sh/v1beta1", "PodGroup",
                         j->pg.meta.ns, j->pg.meta.name, j->pg.meta.uid},
            .type = w->ev_warn ? "Warning" : "Normal",
            .reason = w->ev_warn ? "Unschedulable" : "Scheduled",
            .message = w->ev_msg,
            .first_time = w->ev_at,
            .last_time = w->ev_at,
            .count = 1};
        d = mu_xcalloc(1, sizeof(*d));
        d->s = s;
        d->key = mu_xstrdup(j->key);
        if (mu_writer_event_done(s->ctl->writer, &ev, ev_written, d) < 0) {
            mu_ctl_log(s->ctl, "event %s on podgroup %s: not sent",
                       ev.reason, j->key);
            free(d->key);
            free(d);
        } else {
            s->inflight++;
            (*room)--;
        }
        owe_event(s, w, NULL, false);
    }
    return true;
}

/* Forgets what was written for PodGroups that are gone (status.h). */
static void forget_gone(struct mu_status *s)
{
    const struct mu_cluster *c = s->ctl->cluster;
    size_t it = 0;
    const char *key;
    void *v;

    if (s->pgs.n <= c->njobs + MU_STATUS_FORGET_SLACK)
        return;
    while (mu_map_next(&s->pgs, &it, &key, &v)) {
        struct mu_pg_written *w = v;

        if (mu_map_get(&c->job_by_key, key))
            continue;
        mu_map_del(&s->pgs, key);
        written_free(s, w);
    }
}

/* Hands the statuses o[0..n) to the writer while *room and the window
 * allow, and frees them; returns false when some were held back. */
static bool send_statuses(struct mu_status *s, struct owed *o, size_t n,
                          size_t *room)
{
    bool all = true;

    for (size_t i = 0; i < n; i++) {
        if (*room < 1 || s->inflight >= MU_STATUS_WINDOW)
            all = false;
        else {
            send_pg(s, &o[i]);
            (*room)--;
        }
        free(o[i].sig);
        free(o[i].cond);
    }
    return all;
}

bool mu_status_write(struct mu_status *s)
{
    const struct mu_cluster *c = s->ctl->cluster;
    size_t room = 0, half, n = 0, at[RANK_N + 1] = {0};
    struct owed *owed, *sorted;
    bool held = false;

    if (s->ctl->writer) {
        room = mu_writer_room(s->ctl->writer);
        half = mu_writer_cap(s->ctl->writer) / 2;
        room = room > half ? room - half : 0;
    }
    owed = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*owed));
    for (size_t i = 0; i < c->njobs; i++)
        if (!c->jobs[i]->implicit && owed_of(s, c->jobs[i], &owed[n]))
            at[owed[n++].rank + 1]++;
    /* by rank, and in the cluster's order within one (a stable sort):
     * at[r] ends where rank r's statuses end, so the Running ones are
     * sorted[0..at[RANK_RUN]) */
    for (int r = 0; r < RANK_N; r++)
        at[r + 1] += at[r];
    sorted = mu_xcalloc(n ? n : 1, sizeof(*sorted));
    for (size_t i = 0; i < n; i++)
        sorted[at[owed[i].rank]++] = owed[i];
    /* the Running ones, the events owed, the rest, and the events that
     * the rest owe */
    held |= !send_statuses(s, sorted, at[RANK_RUN], &room);
    held |= !send_events(s, &room);
    held |= !send_statuses(s, sorted + at[RANK_RUN], n - at[RANK_RUN], &room);
    held |= !send_events(s, &room);
    free(sorted);
    free(owed);
    forget_gone(s);
    return held;
}
