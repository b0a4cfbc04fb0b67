#include "sim/output.h"

#include "sched/qtree.h"

#include <jansson.h>

#include "api/json.h"
#include "api/unsupported.h"

void mu_sim_time_text(int64_t ms, char buf[48])
{
    int64_t t = MU_SIM_EPOCH + ms / 1000, days = t / 86400, sod = t % 86400;
    int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;

    char tmp[160];

    y += m <= 2;
    snprintf(tmp, sizeof(tmp), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
             (long long)y, (long long)m, (long long)d, (long long)(sod / 3600),
             (long long)(sod / 60 % 60), (long long)(sod % 60));
    memcpy(buf, tmp, 47);
    buf[47] = '\0';
}

static json_t *reslist(const struct mu_cluster *c, const struct mu_res *r,
                       bool keep_zero)
{
    json_t *o = json_object();
    int idx[MU_RES_MAX], n = 0;

    for (int d = 0; d < c->rn.n; d++)
        if (mu_res_has(r, d) && (keep_zero || r->v[d]))
            idx[n++] = d;
    /* names sorted, so the output does not depend on arrival order */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && strcmp(c->rn.name[idx[k - 1]],
                                        c->rn.name[idx[k]]) > 0; k--) {
            int t = idx[k];

            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        char buf[64];

        json_object_set_new(o, c->rn.name[idx[i]],
                            json_string(mu_quantity_format(
                                c->rn.name[idx[i]], r->v[idx[i]], buf,
                                sizeof(buf))));
    }
    return o;
}

static json_t *meta(const struct mu_meta *m)
{
    json_t *o = json_object();

    json_object_set_new(o, "name", json_string(m->name));
    if (m->ns)
        json_object_set_new(o, "namespace", json_string(m->ns));
    if (m->uid)
        json_object_set_new(o, "uid", json_string(m->uid));
    if (m->labels.n) {
        json_t *l = json_object();

        for (size_t i = 0; i < m->labels.n; i++)
            json_object_set_new(l, m->labels.v[i].key,
                                json_string(m->labels.v[i].value));
        json_object_set_new(o, "labels", l);
    }
    if (m->annotations.n) {
        json_t *l = json_object();

        for (size_t i = 0; i < m->annotations.n; i++)
            json_object_set_new(l, m->annotations.v[i].key,
                                json_string(m->annotations.v[i].value));
        json_object_set_new(o, "annotations", l);
    }
    return o;
}

static json_t *obj(const char *api, const char *kind, json_t *md)
{
    json_t *o = json_object();

    json_object_set_new(o, "apiVersion", json_string(api));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "metadata", md);
    return o;
}

static json_t *queue_json(const struct mu_cluster *c, const struct mu_cqueue *q,
                          const struct mu_res *allocated)
{
    json_t *o = obj("scheduling.volcano.sh/v1beta1", "Queue",
                    meta(&q->spec.meta));
    json_t *spec = json_object(), *st = json_object();

    json_object_set_new(spec, "weight", json_integer(q->spec.weight));
    json_object_set_new(spec, "reclaimable", json_boolean(q->spec.reclaimable));
    if (q->spec.capability.set)
        json_object_set_new(spec, "capability",
                            reslist(c, &q->spec.capability, true));
    if (q->spec.deserved.set)
        json_object_set_new(spec, "deserved",
                            reslist(c, &q->spec.deserved, true));
    if (q->spec.parent)
        json_object_set_new(spec, "parent", json_string(q->spec.parent));
    if (q->spec.guarantee.set) {
        json_t *g = json_object();

        json_object_set_new(g, "resource",
                            reslist(c, &q->spec.guarantee, true));
        json_object_set_new(spec, "guarantee", g);
    }
    json_object_set_new(o, "spec", spec);
    json_object_set_new(st, "state",
                        json_string(mu_queue_state_name(q->spec.state)));
    json_object_set_new(st, "allocated", reslist(c, allocated, false));
    if (q->has_deserved) /* muster's addition: the share it computed */
        json_object_set_new(st, "deserved", reslist(c, &q->deserved, false));
    json_object_set_new(o, "status", st);
    return o;
}

static int ms_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* The start of j's gang: when its minMember-th pod started (-1: not yet);
 * its wait runs from the PodGroup's creation to then, or to now. */
static void wait_status(const struct mu_job *j, int64_t now_ms, json_t *st)
{
    int64_t *v = mu_xcalloc(j->ntasks ? j->ntasks : 1, sizeof(*v));
    int64_t start = -1, created = j->pg.meta.created * 1000;
    size_t n = 0;
    char ts[48];

    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->pod.node_name)
            v[n++] = j->tasks[i]->started_ms;
    qsort(v, n, sizeof(*v), ms_cmp);
    if (j->pg.min_member > 0 && n >= (size_t)j->pg.min_member)
        start = v[j->pg.min_member - 1];
    free(v);
    if (start >= 0) {
        mu_sim_time_text(start, ts);
        json_object_set_new(st, "startTime", json_string(ts));
    }
    json_object_set_new(
        st, "waitSeconds",
        json_integer(((start >= 0 ? start : now_ms) - created) / 1000 > 0
                         ? ((start >= 0 ? start : now_ms) - created) / 1000
                         : 0));
}

static json_t *pg_json(const struct mu_cluster *c, const struct mu_job *j,
                       int64_t now_ms)
{
    json_t *o = obj("scheduling.volcano.sh/v1beta1", "PodGroup",
                    meta(&j->pg.meta));
    json_t *spec = json_object(), *st = json_object();

    json_object_set_new(spec, "minMember", json_integer(j->pg.min_member));
    if (j->pg.nmin_task) {
        json_t *m = json_object();

        for (size_t i = 0; i < j->pg.nmin_task; i++)
            json_object_set_new(m, j->pg.min_task[i].task,
                                json_integer(j->pg.min_task[i].min));
        json_object_set_new(spec, "minTaskMember", m);
    }
    json_object_set_new(spec, "queue", json_string(j->pg.queue));
    if (j->pg.priority_class)
        json_object_set_new(spec, "priorityClassName",
                            json_string(j->pg.priority_class));
    if (j->pg.has_min_resources)
        json_object_set_new(spec, "minResources",
                            reslist(c, &j->pg.min_resources, false));
    if (j->pg.topo.mode != MU_TOPO_NONE) {
        json_t *nt = json_object();

        json_object_set_new(nt, "mode",
                            json_string(j->pg.topo.mode == MU_TOPO_HARD
                                            ? "hard"
                                            : "soft"));
        if (j->pg.topo.highest_tier >= 0)
            json_object_set_new(nt, "highestTierAllowed",
                                json_integer(j->pg.topo.highest_tier));
        if (j->pg.topo.highest_tier_name)
            json_object_set_new(nt, "highestTierName",
                                json_string(j->pg.topo.highest_tier_name));
        json_object_set_new(spec, "networkTopology", nt);
    }
    json_object_set_new(o, "spec", spec);
    json_object_set_new(st, "phase", json_string(mu_pg_phase_name(j->phase)));
    if (j->cond.type) {
        json_t *cond = json_object(), *arr = json_array();
        char ts[48];

        mu_sim_time_text(j->cond.since_ms, ts);
        json_object_set_new(cond, "type", json_string(j->cond.type));
        json_object_set_new(cond, "status", json_string("True"));
        json_object_set_new(cond, "lastTransitionTime", json_string(ts));
        json_object_set_new(cond, "reason", json_string(j->cond.reason));
        json_object_set_new(cond, "message", json_string(j->cond.message));
        json_array_append_new(arr, cond);
        json_object_set_new(st, "conditions", arr);
    }
    {
        char ts[48];
        json_t *un;

        mu_sim_time_text(j->pg.submit_at_ms, ts);
        if ((un = mu_podgroup_unsupported_cond(&j->pg, ts)))
            json_array_append_new(mu_json_child(st, "conditions", true), un);
    }
    json_object_set_new(st, "running", json_integer(j->running));
    json_object_set_new(st, "succeeded", json_integer(j->succeeded));
    json_object_set_new(st, "failed", json_integer(j->failed));
    wait_status(j, now_ms, st);
    json_object_set_new(o, "status", st);
    return o;
}

static json_t *pod_json(const struct mu_task *t)
{
    json_t *o = obj("v1", "Pod", meta(&t->pod.meta));
    json_t *spec = json_object(), *st = json_object();
    const char *phase = mu_pod_phase_name(t->pod.phase);

    json_object_set_new(spec, "schedulerName",
                        json_string(t->pod.scheduler_name));
    if (t->pod.node_name)
        json_object_set_new(spec, "nodeName", json_string(t->pod.node_name));
    json_object_set_new(o, "spec", spec);
    if (t->status == MU_TASK_PENDING)
        phase = "Pending";
    json_object_set_new(st, "phase", json_string(phase));
    if (t->pod.node_name) {
        char ts[48];

        mu_sim_time_text(t->started_ms, ts);
        json_object_set_new(st, "startTime", json_string(ts));
    }
    json_object_set_new(o, "status", st);
    return o;
}

/* A vcjob as its controller would show it: its spec's shape and, from
 * its PodGroup, status.state.phase and the counts. */
static json_t *vcjob_json(const struct mu_cluster *c, const json_t *e)
{
    const json_t *job = json_object_get(e, "job");
    const json_t *md = json_object_get(job, "metadata");
    const json_t *spec = json_object_get(job, "spec");
    const char *key = json_string_value(json_object_get(e, "podgroup"));
    const char *slash = key ? strchr(key, '/') : NULL;
    const struct mu_job *j = NULL;
    json_t *o, *m = json_object(), *sp = json_object(), *tasks = json_array();
    json_t *t, *st;
    const char *phase = "Pending";
    size_t i;

    if (slash) {
        char ns[256];

        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
        j = mu_cluster_job(c, ns, slash + 1);
    }
    json_object_set(m, "name", json_object_get(md, "name"));
    json_object_set(m, "namespace", json_object_get(md, "namespace"));
    if (json_object_get(md, "uid"))
        json_object_set(m, "uid", json_object_get(md, "uid"));
    o = obj("batch.volcano.sh/v1alpha1", "Job", m);
    json_object_set(sp, "minAvailable", json_object_get(spec, "minAvailable"));
    json_object_set(sp, "queue", json_object_get(spec, "queue"));
    json_array_foreach(json_object_get(spec, "tasks"), i, t)
    {
        json_array_append_new(
            tasks, json_pack("{s:O?,s:O?}", "name", json_object_get(t, "name"),
                             "replicas", json_object_get(t, "replicas")));
    }
    json_object_set_new(sp, "tasks", tasks);
    json_object_set_new(o, "spec", sp);
    if (j && j->phase == MU_PG_RUNNING)
        phase = "Running";
    else if (j && j->phase == MU_PG_COMPLETED)
        phase = "Completed";
    st = json_pack("{s:{s:s},s:s,s:i,s:i,s:i}", "state", "phase", phase,
                   "podGroup", key ? key : "", "running",
                   j ? j->running : 0, "succeeded", j ? j->succeeded : 0,
                   "failed", j ? j->failed : 0);
    json_object_set_new(o, "status", st);
    return o;
}

/* Every queue's status.allocated, by index: its own and its subtree's
 * (sched/qtree.h). The caller frees. */
static struct mu_res *tree_allocated(const struct mu_cluster *c)
{
    struct mu_res *out = mu_xcalloc(c->nqueues + 1, sizeof(*out));
    struct mu_qtree t;

    mu_qtree_build(&t, c);
    mu_qtree_rollup(&t, c, out);
    mu_qtree_free(&t);
    return out;
}

static json_t *state_list(const struct mu_cluster *c, const json_t *vcjobs,
                          int64_t now_ms)
{
    json_t *list = obj("v1", "List", json_object()), *items = json_array();
    const json_t *e;
    size_t i;

    json_object_del(list, "metadata");
    {
        struct mu_res *tree_alloc = tree_allocated(c);

        for (i = 0; i < c->nqueues; i++)
            json_array_append_new(items,
                                  queue_json(c, c->queues[i], &tree_alloc[i]));
        free(tree_alloc);
    }
    for (i = 0; i < c->njobs; i++)
        json_array_append_new(items, pg_json(c, c->jobs[i], now_ms));
    json_array_foreach(vcjobs, i, e)
    {
        json_array_append_new(items, vcjob_json(c, e));
    }
    for (i = 0; i < c->ntasks; i++)
        json_array_append_new(items, pod_json(c->tasks[i]));
    json_object_set_new(list, "items", items);
    return list;
}

void mu_sim_output_json(const struct mu_cluster *c, const json_t *vcjobs,
                        int64_t now_ms, FILE *out)
{
    json_t *l = state_list(c, vcjobs, now_ms);

    json_dumpf(l, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(l);
}

static void yaml_scalar(const json_t *v, FILE *out)
{
    char *txt = json_dumps(v, JSON_ENCODE_ANY);

    fputs(txt ? txt : "null", out);
    free(txt);
}

static void yaml_emit(const json_t *v, int indent, FILE *out);

static void yaml_value(const json_t *v, int indent, FILE *out)
{
    if ((json_is_object(v) && json_object_size(v)) ||
        (json_is_array(v) && json_array_size(v))) {
        fputc('\n', out);
        yaml_emit(v, indent, out);
    } else if (json_is_object(v)) {
        fputs(" {}\n", out);
    } else if (json_is_array(v)) {
        fputs(" []\n", out);
    } else {
        fputc(' ', out);
        yaml_scalar(v, out);
        fputc('\n', out);
    }
}

static void yaml_emit(const json_t *v, int indent, FILE *out)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;

        json_object_foreach((json_t *)v, k, x) {
            json_t *key = json_string(k);

            fprintf(out, "%*s", indent, "");
            yaml_scalar(key, out);
            json_decref(key);
            fputc(':', out);
            yaml_value(x, indent + 2, out);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;

        json_array_foreach(v, i, x) {
            if (json_is_object(x) && json_object_size(x)) {
                const char *k;
                json_t *y;
                bool first = true;

                json_object_foreach(x, k, y) {
                    json_t *key = json_string(k);

                    fprintf(out, "%*s%s", first ? indent : indent + 2,
                            first ? "" : "", first ? "- " : "");
                    yaml_scalar(key, out);
                    json_decref(key);
                    fputc(':', out);
                    yaml_value(y, indent + 4, out);
                    first = false;
                }
            } else {
                fprintf(out, "%*s-", indent, "");
                yaml_value(x, indent + 2, out);
            }
        }
    }
}

void mu_sim_output_yaml(const struct mu_cluster *c, const json_t *vcjobs,
                        int64_t now_ms, FILE *out)
{
    json_t *l = state_list(c, vcjobs, now_ms);

    yaml_emit(l, 0, out);
    json_decref(l);
}

static void pad(FILE *out, const char *s, int w)
{
    fprintf(out, "%-*s", w, s);
}

void mu_sim_output_table(const struct mu_cluster *c, const char *timeline,
                         FILE *out)
{
    int wn = 4, wq = 5;
    struct mu_sb sb;
    struct mu_res *tree_alloc;

    if (timeline && *timeline) {
        fputs(timeline, out);
        fputc('\n', out);
    }
    for (size_t i = 0; i < c->njobs; i++) {
        int n = (int)strlen(c->jobs[i]->key);

        wn = n > wn ? n : wn;
        n = (int)strlen(c->jobs[i]->pg.queue);
        wq = n > wq ? n : wq;
    }
    pad(out, "NAME", wn + 3);
    pad(out, "STATUS", 12);
    pad(out, "MINMEMBER", 12);
    pad(out, "RUNNINGS", 11);
    fputs("QUEUE\n", out);
    for (size_t i = 0; i < c->njobs; i++) {
        const struct mu_job *j = c->jobs[i];

        pad(out, j->key, wn + 3);
        pad(out, mu_pg_phase_name(j->phase), 12);
        fprintf(out, "%-12d%-11d%s\n", j->pg.min_member, j->running,
                j->pg.queue);
    }
    mu_sb_init(&sb);
    for (size_t i = 0; i < c->njobs; i++) {
        const struct mu_job *j = c->jobs[i];

        if (j->cond.type && !strcmp(j->cond.type, "Unschedulable"))
            mu_sb_addf(&sb, "  %s (%s): %s\n", j->key, j->cond.reason,
                       j->cond.message);
    }
    if (sb.len)
        fprintf(out, "\nWhy pending:\n%s", sb.buf);
    mu_sb_release(&sb);
    fputc('\n', out);
    tree_alloc = tree_allocated(c);
    pad(out, "QUEUE", wq + 3);
    pad(out, "WEIGHT", 8);
    pad(out, "STATE", 8);
    fputs("DESERVED / ALLOCATED\n", out);
    for (size_t i = 0; i < c->nqueues; i++) {
        const struct mu_cqueue *q = c->queues[i];

        mu_sb_init(&sb);
        if (q->has_deserved)
            mu_res_format(&q->deserved, &c->rn, false, &sb);
        else
            mu_sb_add(&sb, "-");
        mu_sb_add(&sb, " / ");
        mu_res_format(&tree_alloc[i], &c->rn, false, &sb);
        pad(out, q->spec.meta.name, wq + 3);
        fprintf(out, "%-8d", q->spec.weight);
        pad(out, mu_queue_state_name(q->spec.state), 8);
        fprintf(out, "%s\n", sb.buf);
        mu_sb_release(&sb);
    }
    free(tree_alloc);
}
