/* The vcjob controller's status side (jobs_int.h). */
#include "serve/jobs_int.h"

#include "serve/serve_int.h"

#define JOB_API "batch.volcano.sh/v1alpha1"

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
static const char *pending_message(struct mu_serve *sv, const struct vjob *j)
{
    char *pg = mu_jc_group_name(j);
    const struct mu_job *cj = mu_cluster_job(&sv->cluster, j->ns, pg);

    free(pg);
    if (j->st.phase != MU_JOB_PENDING || !cj || !cj->cond.type ||
        strcmp(cj->cond.type, "Unschedulable"))
        return NULL;
    return cj->cond.message;
}

json_t *mu_jc_status_json(struct mu_serve *sv, const struct vjob *j)
{
    json_t *st = counts_json(j), *state, *cr = json_object();
    const json_t *plugins = json_object_get(json_object_get(j->def, "spec"),
                                            "plugins");
    const char *msg = pending_message(sv, j);
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
    struct vjob *j = mu_map_get(&w->sv->jobctl->jobs, w->job);

    if (rc < 0 && rc != -ECANCELED) {
        mu_serve_log(w->sv, "status of vcjob %s: %s", w->job, msg);
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
void mu_jc_write_status(struct mu_serve *sv, struct vjob *j, json_t *st)
{
    struct job_write *pw;
    struct mu_write w;
    char *path;

    if (j->written && json_equal(j->written, st)) {
        json_decref(st);
        return;
    }
    path = mu_xasprintf("/apis/" JOB_API "/namespaces/%s/jobs/%s/status",
                        j->ns, j->name);
    pw = mu_jc_write_new(sv, j, "");
    memset(&w, 0, sizeof(w));
    w.method = "PATCH";
    w.path = path;
    w.body = json_pack("{s:o}", "status", merge_diff(j->written, st));
    w.content_type = MU_KUBE_MERGE_PATCH;
    w.flags = MU_WRITE_MERGE;
    w.done = status_written;
    w.ctx = pw;
    if (mu_writer_submit(sv->writer, &w) < 0) {
        mu_serve_log(sv, "status of vcjob %s: not sent: stopping", j->key);
        mu_jc_write_free(pw);
        json_decref(st);
    } else {
        json_decref(j->written);
        j->written = st;
    }
    free(path);
}

/* An invalid Job is Failed with the reason, once; nothing is made. */
void mu_jc_refuse(struct mu_serve *sv, struct vjob *j)
{
    json_t *st;

    if (j->st.phase != MU_JOB_FAILED) {
        mu_jc_transition(sv, j, MU_JOB_FAILED, "InvalidJob");
        j->st.phase = MU_JOB_FAILED;
        mu_jc_event(sv, j, "Warning", "InvalidJob", j->invalid);
    }
    st = json_pack("{s:{s:s,s:s,s:s,s:s},s:o}", "state", "phase", "Failed",
                   "reason", "InvalidJob", "message", j->invalid,
                   "lastTransitionTime", j->ltt ? j->ltt : "", "conditions",
                   json_deep_copy(j->conds));
    mu_jc_write_status(sv, j, st);
}

/* A finished Job is deleted ttlSecondsAfterFinished after it finished;
 * returns true when it was. */
bool mu_jc_expire(struct mu_serve *sv, struct vjob *j)
{
    const json_t *ttl = json_object_get(json_object_get(j->def, "spec"),
                                        "ttlSecondsAfterFinished");
    int64_t at;
    struct mu_err err;
    json_t *opts;
    char *path;
    int r;

    if (!json_is_integer(ttl) || !mu_jphase_final(j->st.phase) || !j->ltt ||
        !mu_rfc3339_parse(j->ltt, &at) ||
        (int64_t)time(NULL) < at + json_integer_value(ttl))
        return false;
    if (j->expire_sent)
        return true;
    /* the uid precondition spares a Job made again under the same name */
    opts = json_pack("{s:s,s:s,s:s,s:{s:s}}", "kind", "DeleteOptions",
                     "apiVersion", "v1", "propagationPolicy", "Background",
                     "preconditions", "uid", j->uid ? j->uid : "");
    path = mu_jc_path(j);
    r = mu_kube_call(sv->kube, "DELETE", path, NULL, opts, NULL, NULL, &err);
    if (r == 0 || r == -ENOENT || r == -EBUSY) {
        j->expire_sent = true;
        if (r == 0)
            mu_serve_log(sv, "vcjob %s: deleted %llds after it finished",
                         j->key, (long long)json_integer_value(ttl));
    } else if (!j->expire_failed) {
        mu_serve_log(sv, "vcjob %s: delete after ttl: %s", j->key, err.msg);
        j->expire_failed = true;
    }
    json_decref(opts);
    free(path);
    return true;
}

