/*
 * Status the cycle owes the API: PodGroup phase, counts and conditions,
 * and their events, each written only on change (Queue status is the queue
 * controller's, ctrl/queuectl.h).
 */
#include "serve/serve_int.h"

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

void mu_serve_write_status(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->njobs; i++)
        if (!c->jobs[i]->implicit)
            write_pg(sv, c->jobs[i]);
}
