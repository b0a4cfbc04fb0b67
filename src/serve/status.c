/*
 * Status the cycle owes the API: PodGroup phase, counts and conditions,
 * Queue state and allocation, and events, each written only on change.
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
    struct mu_err err;

    if (mu_kube_event_post(sv->kube, &ev, NULL, &err) < 0)
        mu_serve_log(sv, "event %s on %s/%s: %s", reason, ns ? ns : "", name,
                     err.msg);
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
 * its condition changed. */
static void write_pg(struct mu_serve *sv, const struct mu_job *j)
{
    char *sig = mu_xasprintf("%s|%d|%d|%d|%s|%s", mu_pg_phase_name(j->phase),
                             j->running, j->succeeded, j->failed,
                             j->cond.type ? j->cond.type : "",
                             j->cond.message ? j->cond.message : "");
    char *cond = mu_xasprintf("%s|%s", j->cond.type ? j->cond.type : "",
                              j->cond.message ? j->cond.message : "");
    char *wkey = mu_xasprintf("pg/%s", j->key);
    char *ckey = mu_xasprintf("pgc/%s", j->key);
    const char *old = mu_map_get(&sv->written, wkey);

    if (!old || strcmp(old, sig)) {
        char *path = mu_xasprintf(
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s",
            j->pg.meta.ns, j->pg.meta.name);
        json_t *patch = json_pack("{s:o}", "status", pg_status(j));
        struct mu_err err;

        if (mu_kube_merge_patch(sv->kube, path, patch, NULL, &err) < 0) {
            mu_serve_log(sv, "status of podgroup %s: %s", j->key, err.msg);
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
        json_decref(patch);
        free(path);
    }
    free(sig);
    free(cond);
    free(wkey);
    free(ckey);
}

static void write_queue(struct mu_serve *sv, const struct mu_cqueue *q)
{
    struct mu_sb sb;
    char *wkey = mu_xasprintf("q/%s", q->spec.meta.name), *old;
    json_t *alloc = json_object(), *patch;
    struct mu_err err;
    char *path;

    for (int d = 0; d < sv->cluster.rn.n; d++) {
        char buf[64];

        if (!q->allocated.v[d] || d == MU_RES_PODS)
            continue;
        json_object_set_new(alloc, sv->cluster.rn.name[d],
                            json_string(mu_quantity_format(
                                sv->cluster.rn.name[d], q->allocated.v[d], buf,
                                sizeof(buf))));
    }
    mu_sb_init(&sb);
    mu_sb_add(&sb, mu_queue_state_name(q->spec.state));
    {
        char *t = json_dumps(alloc, JSON_SORT_KEYS | JSON_COMPACT);

        mu_sb_add(&sb, t);
        free(t);
    }
    old = mu_map_get(&sv->written, wkey);
    if (old && !strcmp(old, sb.buf)) {
        json_decref(alloc);
        mu_sb_release(&sb);
        free(wkey);
        return;
    }
    path = mu_xasprintf("/apis/scheduling.volcano.sh/v1beta1/queues/%s",
                        q->spec.meta.name);
    patch = json_pack("{s:{s:o,s:s}}", "status", "allocated", alloc, "state",
                      mu_queue_state_name(q->spec.state));
    if (mu_kube_status_patch(sv->kube, path, patch, NULL, &err) < 0)
        mu_serve_log(sv, "status of queue %s: %s", q->spec.meta.name, err.msg);
    else
        free(mu_map_put(&sv->written, wkey, mu_sb_detach(&sb)));
    json_decref(patch);
    free(path);
    mu_sb_release(&sb);
    free(wkey);
}

void mu_serve_write_status(struct mu_serve *sv)
{
    struct mu_cluster *c = &sv->cluster;

    for (size_t i = 0; i < c->njobs; i++)
        if (!c->jobs[i]->implicit)
            write_pg(sv, c->jobs[i]);
    for (size_t i = 0; i < c->nqueues; i++)
        write_queue(sv, c->queues[i]);
}
