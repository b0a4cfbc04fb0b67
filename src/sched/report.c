/* report.c - the /debug snapshot and its answers (report.h). */
#include "sched/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/match.h"
#include "api/nodecheck.h"
#include "api/times.h"

#define GPU_PRODUCT_LABEL "nvidia.com/gpu.product"

static json_t *time_json(int64_t s)
{
    char buf[32];

    if (s <= 0 || !mu_rfc3339_format(s, buf, sizeof(buf)))
        return json_null();
    return json_string(buf);
}

/* The set dimensions of r but pods, as {"name": "quantity"}. */
static json_t *res_json(const struct mu_res *r, const struct mu_resnames *rn)
{
    json_t *o = json_object();
    char buf[48];

    for (int d = 0; d < rn->n; d++)
        if (d != MU_RES_PODS && mu_res_has(r, d))
            json_object_set_new(
                o, rn->name[d],
                json_string(mu_quantity_format(rn->name[d], r->v[d], buf,
                                               sizeof(buf))));
    return o;
}

static json_t *queue_json(const struct mu_cluster *c,
                          const struct mu_cqueue *q)
{
    int pending = 0, running = 0;
    json_t *o;

    for (size_t k = 0; k < q->njobs; k++) {
        if (mu_job_ready(q->jobs[k]))
            running++;
        else
            pending++;
    }
    o = json_pack("{s:s,s:s,s:i,s:b,s:o,s:o,s:o,s:i,s:i,s:i}", "name",
                  q->spec.meta.name, "state",
                  mu_queue_state_name(q->spec.state), "weight",
                  (int)q->spec.weight, "reclaimable", q->spec.reclaimable,
                  "capability", res_json(&q->spec.capability, &c->rn),
                  "guarantee", res_json(&q->spec.guarantee, &c->rn),
                  "allocated", res_json(&q->allocated, &c->rn), "gangs",
                  (int)q->njobs, "pendingGangs", pending, "runningGangs",
                  running);
    if (q->has_deserved)
        json_object_set_new(o, "deserved", res_json(&q->deserved, &c->rn));
    return o;
}

static const struct mu_task *first_pending(const struct mu_job *j)
{
    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->status == MU_TASK_PENDING)
            return j->tasks[i];
    return NULL;
}

/* Where pods of one shape could go now, counted once per shape. */
struct room {
    bool done;
    int match;          /* nodes passing its selectors, affinity, taints */
    int with_room;      /* of those, nodes with room for one pod now */
    long long fit;      /* pods of this request that fit there now */
    char products[128]; /* GPU products of the matching nodes */
};

static long long pods_fit(const struct mu_res *req, const struct mu_res *idle,
                          int n)
{
    long long best = 0;
    bool any = false;

    for (int d = 0; d < n; d++) {
        long long k;

        if (!mu_res_has(req, d) || req->v[d] <= 0)
            continue;
        k = MU_MAX(mu_res_get(idle, d), 0) / req->v[d];
        if (!any || k < best)
            best = k;
        any = true;
    }
    return best;
}

static void room_of(const struct mu_cluster *c, const struct mu_task *t,
                    struct room *r)
{
    memset(r, 0, sizeof(*r));
    r->done = true;
    for (size_t i = 0; i < c->nnodes; i++) {
        const struct mu_cnode *n = c->nodes[i];
        const char *product;
        long long k;

        if (mu_nodecheck(&t->pod, &n->spec, true, true) != MU_NODECHECK_OK)
            continue;
        r->match++;
        k = pods_fit(&t->pod.req, &n->idle, c->rn.n);
        r->with_room += k > 0;
        r->fit += k;
        product = mu_kvs_get(&n->spec.meta.labels, GPU_PRODUCT_LABEL);
        if (product && !strstr(r->products, product) &&
            strlen(r->products) + strlen(product) + 3 < sizeof(r->products))
            snprintf(r->products + strlen(r->products),
                     sizeof(r->products) - strlen(r->products), "%s%s",
                     r->products[0] ? ", " : "", product);
    }
}

/* The first dimension of req in which need more pods would take the
 * queue's allocated past lim (its capability or its deserved share), or
 * -1; *want is then what it would reach. */
static int queue_short(const struct mu_cluster *c, const struct mu_cqueue *q,
                       const struct mu_res *req, int need,
                       const struct mu_res *lim, int64_t *want)
{
    for (int d = 0; d < c->rn.n; d++) {
        if (d == MU_RES_PODS || mu_res_get(req, d) <= 0 || !mu_res_has(lim, d))
            continue;
        *want = mu_add_sat(mu_res_get(&q->allocated, d),
                           req->v[d] > INT64_MAX / need ? INT64_MAX
                                                        : req->v[d] * need);
        if (*want > lim->v[d])
            return d;
    }
    return -1;
}

static void clause(struct mu_sb *sb, const char *fmt, ...) MU_PRINTF(2, 3);
static void clause(struct mu_sb *sb, const char *fmt, ...)
{
    va_list ap;

    if (sb->len)
        mu_sb_add(sb, "; and ");
    va_start(ap, fmt);
    mu_sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

/* The devices t's DRA claims need for need pods, when too few are free
 * (or why its claims cannot be planned at all). */
static void devices_clause(const struct mu_cluster *c, const struct mu_task *t,
                           int need, struct mu_sb *sb)
{
    struct mu_devfree f;
    struct mu_sb text;

    if (!t->dd)
        return;
    if (t->dd->why) {
        clause(sb, "its claims cannot be planned: %s", t->dd->why);
        return;
    }
    mu_devices_free_count(&c->dev, t->dd, &f);
    if (!f.class_name || (f.total >= f.per * need && f.best >= f.per))
        return;
    mu_sb_init(&text);
    mu_devfree_text(&f, need, &text);
    clause(sb, "%s%s", text.buf,
           f.unplanned ? "" : " (add devices, or wait for claims to be freed)");
    mu_sb_release(&text);
}

/* What would let j start: its queue's capability, its queue's share, room
 * on the nodes its pods may use, each that stands in the way, in words. */
static char *unblock_text(const struct mu_cluster *c, const struct mu_job *j,
                          const struct mu_task *t, int need,
                          struct room *rooms)
{
    const struct mu_cqueue *q = j->queue;
    struct room *r, own = {.done = false};
    struct mu_res req;
    struct mu_sb sb, rs;
    char a[48], b[48];
    int64_t want;
    int d, cap_d;

    if (!q)
        return mu_xasprintf("its queue \"%s\" does not exist: create it",
                            j->pg.queue ? j->pg.queue : "");
    if (q->spec.state != MU_QUEUE_OPEN)
        return mu_xasprintf("queue %s is %s: it admits no new gang until "
                            "it is Open",
                            q->spec.meta.name,
                            mu_queue_state_name(q->spec.state));
    if (!t && (int)j->ntasks < j->pg.min_member)
        return mu_xasprintf("%d more member pod(s): the PodGroup's "
                            "minMember is %d and only %zu pod(s) exist",
                            j->pg.min_member - (int)j->ntasks,
                            j->pg.min_member, j->ntasks);
    if (!t)
        return mu_xasprintf("no pod of it waits to be placed: %d of its %zu "
                            "pod(s) failed, %d are being evicted or in an "
                            "unknown state; its controller makes them again "
                            "or the gang ends",
                            j->count[MU_TASK_FAILED], j->ntasks,
                            j->count[MU_TASK_RELEASING] +
                                j->count[MU_TASK_UNKNOWN]);
    req = *t->qreq; /* what the queue counts: with a DRA claim's devices */
    req.set &= ~(1u << MU_RES_PODS);
    mu_sb_init(&rs);
    mu_res_format(&req, &c->rn, false, &rs);
    mu_sb_init(&sb);
    cap_d = queue_short(c, q, &req, need, &q->spec.capability, &want);
    if (cap_d >= 0)
        clause(&sb,
               "queue %s's capability: %s would reach %s of its %s (raise "
               "it, or wait for the queue's gangs to finish)",
               q->spec.meta.name, c->rn.name[cap_d],
               mu_quantity_format(c->rn.name[cap_d], want, a, sizeof(a)),
               mu_quantity_format(c->rn.name[cap_d],
                                  q->spec.capability.v[cap_d], b, sizeof(b)));
    d = q->has_deserved ? queue_short(c, q, &req, need, &q->deserved, &want)
                        : -1;
    if (d >= 0 && d != cap_d)
        clause(&sb,
               "queue %s's share: %s would reach %s of the %s it deserves "
               "now (wait for its gangs to finish, reclaim from queues over "
               "their share, or give it more weight or a guarantee)",
               q->spec.meta.name, c->rn.name[d],
               mu_quantity_format(c->rn.name[d], want, a, sizeof(a)),
               mu_quantity_format(c->rn.name[d], q->deserved.v[d], b,
                                  sizeof(b)));
    devices_clause(c, t, need, &sb);
    r = t->shape >= 0 && t->shape < c->nshapes ? &rooms[t->shape] : &own;
    if (!r->done)
        room_of(c, t, r);
    if (!r->match) {
        clause(&sb, "no node matches its pods' selectors, affinity and "
                    "taints: add nodes that do (its pods ask %s)",
               rs.buf);
    } else if (r->fit < need) {
        clause(&sb,
               "room for %d pod(s) of %s, each on one node: the %d node(s) "
               "its pods may use (%s) take %lld now; room for %lld more must "
               "be freed there",
               need, rs.buf, r->match,
               r->products[0] ? r->products : "no GPU product label", r->fit,
               (long long)need - r->fit);
    } else if (!sb.len) {
        clause(&sb,
               "nothing in its way now (%lld pods of %s fit on %d node(s)): "
               "it waits for its turn in queue %s at the next cycle",
               r->fit, rs.buf, r->with_room, q->spec.meta.name);
    }
    mu_sb_release(&rs);
    return mu_sb_detach(&sb);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of the nodes j's placed pods are on, sorted, each once. */
static json_t *nodes_json(const struct mu_job *j)
{
    const char **v = mu_xcalloc(j->ntasks ? j->ntasks : 1, sizeof(*v));
    json_t *a = json_array();
    size_t n = 0;

    for (size_t i = 0; i < j->ntasks; i++)
        if (j->tasks[i]->node && j->tasks[i]->status != MU_TASK_PIPELINED)
            v[n++] = j->tasks[i]->node->spec.meta.name;
    qsort(v, n, sizeof(*v), str_cmp);
    for (size_t i = 0; i < n; i++)
        if (!i || strcmp(v[i], v[i - 1]))
            json_array_append_new(a, json_string(v[i]));
    free(v);
    return a;
}

static json_t *gang_json(const struct mu_cluster *c, const struct mu_job *j,
                         int64_t now_ms, struct room *rooms)
{
    const struct mu_task *t = first_pending(j);
    int ready = mu_job_ready_num(j), need = j->pg.min_member - ready;
    int running = j->count[MU_TASK_RUNNING] + j->count[MU_TASK_BOUND] +
                  j->count[MU_TASK_BINDING] + j->count[MU_TASK_ALLOCATED];
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s,s:i,s:i,s:o,s:{s:i,s:i,s:i,s:i,s:i},s:s}",
        "namespace", j->pg.meta.ns ? j->pg.meta.ns : "", "name",
        j->pg.meta.name, "queue", j->pg.queue ? j->pg.queue : "", "phase",
        mu_pg_phase_name(j->phase), "minMember", j->pg.min_member,
        "priority", (int)j->priority, "created",
        time_json(j->pg.meta.created), "pods", "total", (int)j->ntasks,
        "pending", j->count[MU_TASK_PENDING] + j->count[MU_TASK_PIPELINED],
        "running", running, "succeeded", j->count[MU_TASK_SUCCEEDED],
        "failed", j->count[MU_TASK_FAILED], "reason",
        j->cond.message ? j->cond.message : "");

    if (j->pg.meta.owner_kind && !strcmp(j->pg.meta.owner_kind, "Job") &&
        j->pg.meta.owner_name)
        json_object_set_new(o, "vcjob", json_string(j->pg.meta.owner_name));
    if (t)
        json_object_set_new(o, "podRequest", res_json(&t->pod.req, &c->rn));
    if (running)
        json_object_set_new(o, "nodes", nodes_json(j));
    if (need > 0) {
        char *u = unblock_text(c, j, t, need, rooms);

        json_object_set_new(o, "needPods", json_integer(need));
        json_object_set_new(o, "unblock", json_string(u));
        free(u);
        if (j->pg.meta.created > 0 && now_ms / 1000 >= j->pg.meta.created)
            json_object_set_new(
                o, "waitSeconds",
                json_integer(now_ms / 1000 - j->pg.meta.created));
    }
    return o;
}

json_t *mu_report_build(const struct mu_cluster *c, int64_t now_ms)
{
    json_t *queues = json_array(), *gangs = json_array();
    struct room *rooms =
        mu_xcalloc(c->nshapes > 0 ? (size_t)c->nshapes : 1, sizeof(*rooms));

    for (size_t i = 0; i < c->nqueues; i++)
        json_array_append_new(queues, queue_json(c, c->queues[i]));
    for (size_t i = 0; i < c->njobs; i++)
        json_array_append_new(gangs, gang_json(c, c->jobs[i], now_ms, rooms));
    free(rooms);
    return json_pack("{s:o,s:o,s:o}", "at", time_json(now_ms / 1000),
                     "queues", queues, "gangs", gangs);
}

static char *error_answer(int *status, int code, const char *msg)
{
    json_t *o;
    char *s, *out;

    o = json_pack("{s:s}", "error", msg);
    s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    out = mu_xasprintf("%s\n", s ? s : "{}");
    free(s);
    *status = code;
    return out;
}

static char *dump(const json_t *j, int *status)
{
    char *s = json_dumps(j, JSON_COMPACT), *out;

    if (!s)
        return error_answer(status, 500, "could not write the JSON");
    out = mu_xasprintf("%s\n", s);
    free(s);
    *status = 200;
    return out;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s ? s : "";
}

/* Is a (a pending gang of g's queue) taken before g by default? */
static bool ahead_of(const json_t *a, const json_t *g)
{
    long long pa = json_integer_value(json_object_get(a, "priority"));
    long long pg = json_integer_value(json_object_get(g, "priority"));
    int c;

    if (pa != pg)
        return pa > pg;
    /* RFC 3339 UTC strings of one format sort as the times do */
    c = strcmp(str(a, "created"), str(g, "created"));
    if (c)
        return c < 0;
    c = strcmp(str(a, "namespace"), str(g, "namespace"));
    return c ? c < 0 : strcmp(str(a, "name"), str(g, "name")) < 0;
}

static char *gang_answer(const json_t *snap, const char *key, int *status)
{
    const json_t *gangs = json_object_get(snap, "gangs");
    const json_t *queues = json_object_get(snap, "queues");
    const json_t *g = NULL, *q = NULL, *v;
    const char *slash = strchr(key, '/');
    json_t *ahead = json_array(), *out;
    size_t i, nslen;
    int n = 0;
    char *s, *answer;

    if (!slash || slash == key || !slash[1] || strchr(slash + 1, '/')) {
        json_decref(ahead);
        s = mu_xasprintf("want /debug/gang/NAMESPACE/NAME, not /debug/gang/%s",
                         key);
        goto fail;
    }
    nslen = (size_t)(slash - key);
    json_array_foreach(gangs, i, v)
    {
        const char *ns = str(v, "namespace");

        if (strlen(ns) == nslen && !strncmp(ns, key, nslen) &&
            !strcmp(str(v, "name"), slash + 1))
            g = v;
    }
    if (!g) {
        json_decref(ahead);
        s = mu_xasprintf("no PodGroup %s in muster's cache", key);
        goto fail;
    }
    json_array_foreach(queues, i, v)
    {
        if (!strcmp(str(v, "name"), str(g, "queue")))
            q = v;
    }
    json_array_foreach(gangs, i, v)
    {
        if (v == g || strcmp(str(v, "queue"), str(g, "queue")) ||
            !json_object_get(v, "needPods") || !ahead_of(v, g))
            continue;
        if (n++ < MU_REPORT_AHEAD_MAX) {
            s = mu_xasprintf("%s/%s", str(v, "namespace"), str(v, "name"));
            json_array_append_new(ahead, json_string(s));
            free(s);
        }
    }
    /* copies: the snapshot is shared with other threads, and even a
     * reference count is a write */
    out = json_pack("{s:o,s:o,s:i,s:o}", "gang", json_deep_copy(g), "queue",
                    q ? json_deep_copy(q) : json_null(), "ahead", n,
                    "aheadGangs", ahead);
    s = dump(out, status);
    json_decref(out);
    return s;
fail:
    answer = error_answer(status, 404, s);
    free(s);
    return answer;
}

char *mu_report_answer(const json_t *snap, const char *path, int *status)
{
    static const char gang[] = "/debug/gang/";

    char *msg, *out;

    if (!snap)
        return error_answer(status, 503,
                            "no cycle has run yet: try again shortly");
    if (!strcmp(path, "/debug/queues"))
        return dump(json_object_get(snap, "queues"), status);
    if (!strcmp(path, "/debug/gangs"))
        return dump(json_object_get(snap, "gangs"), status);
    if (!strcmp(path, "/debug/decisions")) {
        const json_t *r = json_object_get(snap, "recent");
        json_t *none;
        char *s;

        if (r)
            return dump(r, status);
        none = json_array();
        s = dump(none, status);
        json_decref(none);
        return s;
    }
    if (!strncmp(path, gang, sizeof(gang) - 1))
        return gang_answer(snap, path + sizeof(gang) - 1, status);
    msg = mu_xasprintf("%s: muster serves /debug/queues, /debug/gangs, "
                       "/debug/decisions and /debug/gang/NAMESPACE/NAME",
                       path);
    out = error_answer(status, 404, msg);
    free(msg);
    return out;
}
