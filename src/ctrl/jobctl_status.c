/* The vcjob controller's status side: the Job's status and its writes,
 * refusal, the ttl delete, events (jobctl_int.h). */
#include "ctrl/jobctl_int.h"

#include <time.h>

#include "kube/client.h"
#include "kube/paths.h"

void mu_jc_event(struct mu_jobctl *jc, const struct vjob *j, const char *type,
                 const char *reason, const char *msg)
{
    mu_ctl_event(&jc->ctl, MU_JC_API, "Job", j->ns, j->name, j->uid, type,
                 reason, msg);
}

void mu_jc_transition(struct mu_jobctl *jc, struct vjob *j, enum mu_jphase to,
                      const char *reason)
{
    char ts[32];
    json_t *c;
    size_t i;

    mu_kube_time_text(time(NULL), ts, sizeof(ts));
    free(j->ltt);
    j->ltt = mu_xstrdup(ts);
    free(j->reason);
    j->reason = mu_xstrdup_or_null(reason && *reason ? reason : NULL);
    json_array_foreach(j->conds, i, c)
        if (!mu_strcmp0(json_string_value(json_object_get(c, "status")),
                        mu_jphase_name(to))) {
            json_array_remove(j->conds, i);
            break;
        }
    json_array_append_new(j->conds,
                          json_pack("{s:s,s:s}", "status", mu_jphase_name(to),
                                    "lastTransitionTime", ts));
    if (to != j->st.phase)
        mu_ctl_log(&jc->ctl, "vcjob %s: %s -> %s%s%s%s", j->key,
                   mu_jphase_name(j->st.phase), mu_jphase_name(to),
                   j->reason ? " (" : "", j->reason ? j->reason : "",
                   j->reason ? ")" : "");
}

static json_t *counts_json(const struct vjob *j)
{
    static const char *const names[] = {"Pending", "Running", "Succeeded",
                                        "Failed", "Unknown"};
    const json_t *tasks = json_object_get(json_object_get(j->def, "spec"),
                                          "tasks");
    struct mu_jcounts c;
    json_t *st, *tsc = json_object(), *t;
    size_t ti;

    mu_jc_count(j, &c);
    json_array_foreach(tasks, ti, t) {
        const char *task = json_string_value(json_object_get(t, "name"));
        json_t *ph = json_object();

        for (int k = 0; k < 5; k++)
            if (c.task[ti][k])
                json_object_set_new(ph, names[k], json_integer(c.task[ti][k]));
        if (json_object_size(ph))
            json_object_set_new(tsc, task, json_pack("{s:o}", "phase", ph));
        else
            json_decref(ph);
    }
    st = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:o}", "minAvailable",
                   (int)json_integer_value(json_object_get(
                       json_object_get(j->def, "spec"), "minAvailable")),
                   "pending", c.pending, "running", c.running, "succeeded",
                   c.succeeded, "failed", c.failed, "terminating",
                   c.terminating, "unknown", c.unknown, "version",
                   j->st.version, "retryCount", j->st.retry, "taskStatusCount",
                   tsc);
    mu_jobsm_counts_release(&c);
    return st;
}

/* Why a Pending Job waits: its PodGroup's Unschedulable message. */
static const char *pending_message(struct mu_jobctl *jc, const struct vjob *j)
{
    char *pg = mu_jc_group_name(j);
    const struct mu_job *cj = mu_cluster_job(jc->ctl.cluster, j->ns, pg);

    free(pg);
    if (j->st.phase != MU_JOB_PENDING || !cj || !cj->cond.type ||
        strcmp(cj->cond.type, "Unschedulable"))
        return NULL;
    return cj->cond.message;
}

json_t *mu_jc_status_json(struct mu_jobctl *jc, const struct vjob *j)
{
    json_t *st = counts_json(j), *state, *cr = json_object();
    const json_t *plugins = json_object_get(json_object_get(j->def, "spec"),
                                            "plugins");
    const char *msg = pending_message(jc, j);
    const char *k;
    json_t *v;

    state = json_pack("{s:s}", "phase", mu_jphase_name(j->st.phase));
    if (j->reason)
        json_object_set_new(state, "reason", json_string(j->reason));
    if (msg)
        json_object_set_new(state, "message", json_string(msg));
    if (j->ltt)
        json_object_set_new(state, "lastTransitionTime", json_string(j->ltt));
    json_object_set_new(st, "state", state);
    json_object_set_new(st, "conditions", json_deep_copy(j->conds));
    json_object_foreach((json_t *)plugins, k, v) {
        char *key = mu_xasprintf("plugin-%s", k);

        json_object_set_new(cr, key, json_string(k));
        free(key);
    }
    if (json_object_size(cr))
        json_object_set_new(st, "controlledResources", cr);
    else
        json_decref(cr);
    return st;
}

/* RFC 7386 patch that turns old into new. */
static json_t *merge_diff(const json_t *old, const json_t *new)
{
    json_t *out, *v;
    const char *k;

    if (!json_is_object(old) || !json_is_object(new))
        return json_deep_copy(new);
    out = json_object();
    json_object_foreach((json_t *)new, k, v) {
        const json_t *ov = json_object_get(old, k);

        if (!ov || !json_equal(ov, v))
            json_object_set_new(out, k, json_is_object(ov) && json_is_object(v)
                                            ? merge_diff(ov, v)
                                            : json_deep_copy(v));
    }
    json_object_foreach((json_t *)old, k, v)
        if (!json_object_get(new, k))
            json_object_set_new(out, k, json_null());
    return out;
}

/* A status write that failed: the next sync writes the whole status. */
static void status_written(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_map_get(&w->jc->jobs, w->job);

    if (rc < 0 && rc != -ECANCELED) {
        mu_ctl_log(&w->jc->ctl, "status of vcjob %s: %s", w->job, msg);
        if (j) {
            json_decref(j->written);
            j->written = NULL;
            j->dirty = true;
        }
    }
    mu_jc_write_free(w);
}

/* Status goes through the writer as a merge patch against what was last
 * sent; writes to one Job are sent in order, and the diffs still queued
 * are folded into one (MU_WRITE_MERGE). */
void mu_jc_write_status(struct mu_jobctl *jc, struct vjob *j, json_t *st)
{
    struct job_write *pw;
    struct mu_write w;
    char *path;

    if (j->written && json_equal(j->written, st)) {
        json_decref(st);
        return;
    }
    path = mu_api_path(MU_API_VCJOB, j->ns, j->name, "status");
    pw = mu_jc_write_new(jc, j, "");
    memset(&w, 0, sizeof(w));
    w.method = "PATCH";
    w.path = path;
    w.body = json_pack("{s:o}", "status", merge_diff(j->written, st));
    w.content_type = MU_KUBE_MERGE_PATCH;
    w.flags = MU_WRITE_MERGE | MU_WRITE_BACKGROUND;
    w.done = status_written;
    w.ctx = pw;
    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "status of vcjob %s: not sent: stopping",
                   j->key);
        mu_jc_write_free(pw);
        json_decref(st);
    } else {
        json_decref(j->written);
        j->written = st;
    }
    free(path);
}

/* An invalid Job is Failed with the reason, once; nothing is made. */
void mu_jc_refuse(struct mu_jobctl *jc, struct vjob *j)
{
    json_t *st;

    if (j->st.phase != MU_JOB_FAILED) {
        mu_jc_transition(jc, j, MU_JOB_FAILED, "InvalidJob");
        j->st.phase = MU_JOB_FAILED;
        mu_jc_event(jc, j, "Warning", "InvalidJob", j->invalid);
    }
    st = json_pack("{s:{s:s,s:s,s:s,s:s},s:o}", "state", "phase", "Failed",
                   "reason", "InvalidJob", "message", j->invalid,
                   "lastTransitionTime", j->ltt ? j->ltt : "", "conditions",
                   json_deep_copy(j->conds));
    mu_jc_write_status(jc, j, st);
}

/* The ttl delete completed: done once it went through, found nothing, or
 * met another Job under the name (409: the uid precondition); else sent
 * again at the next sync, its failure logged once. */
static void expired(void *ctx, int rc, const char *msg)
{
    struct job_write *w = ctx;
    struct vjob *j = mu_jc_write_job(w);

    if (j)
        j->expire_making = false;
    if (rc == 0 || rc == -ENOENT || rc == -EBUSY) {
        if (j)
            j->expire_sent = true;
        if (rc == 0)
            mu_ctl_log(&w->jc->ctl, "vcjob %s: deleted %llds after it "
                       "finished", w->job, w->arg);
    } else if (rc != -ECANCELED && j && !j->expire_failed) {
        mu_ctl_log(&w->jc->ctl, "vcjob %s: delete after ttl: %s", w->job,
                   msg);
        j->expire_failed = true;
    }
    mu_jc_write_free(w);
}

bool mu_jc_expire(struct mu_jobctl *jc, struct vjob *j)
{
    const json_t *ttl = json_object_get(json_object_get(j->def, "spec"),
                                        "ttlSecondsAfterFinished");
    struct job_write *jw;
    struct mu_write w;
    int64_t at;
    char *path;

    if (!json_is_integer(ttl) || !mu_jphase_final(j->st.phase) || !j->ltt ||
        !mu_rfc3339_parse(j->ltt, &at) ||
        (int64_t)time(NULL) < at + json_integer_value(ttl))
        return false;
    if (j->expire_sent || j->expire_making)
        return true;
    path = mu_api_path(MU_API_VCJOB, j->ns, j->name, NULL);
    jw = mu_jc_write_new(jc, j, NULL);
    jw->arg = (long long)json_integer_value(ttl);
    memset(&w, 0, sizeof(w));
    w.method = "DELETE";
    w.path = path;
    /* the uid precondition spares a Job made again under the same name */
    w.body = mu_api_delete_options(j->uid ? j->uid : "", "Background");
    w.done = expired;
    w.ctx = jw;
    if (mu_writer_submit(jc->ctl.writer, &w) < 0) {
        mu_ctl_log(&jc->ctl, "vcjob %s: delete after ttl not sent: stopping",
                   j->key);
        mu_jc_write_free(jw);
    } else {
        j->expire_making = true;
    }
    free(path);
    return true;
}
