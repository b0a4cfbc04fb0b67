/* gen.c - the synthetic cluster of gen.h. */
#include "gen.h"

#include "api/dra.h"
#include "sched/cluster_dra.h"

#define GPU_NAME "nvidia.com/gpu"
#define GPU_LABEL "nvidia.com/gpu.product"
#define GPU_PRODUCT "NVIDIA-H100-80GB-HBM3"
#define NS "bench"

#define GIB (1024LL * 1024 * 1024)
#define NODE_CPU 96000LL    /* millicores */
#define NODE_MEM (1024 * GIB)
#define NODE_PODS 110
#define NODE_GPUS 8
#define POD_CPU 8000LL
#define POD_MEM (32 * GIB)

/* 20 gangs, 200 pods: a mean gang of exactly 10 pods. */
static const int size_table[] = {16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
                                 8,  8,  8,  4,  4,  2,  2,  2,  1,  1};
#define NSIZES ((int)MU_ARRAY_LEN(size_table))

struct rng {
    uint64_t s;
};

/* xorshift64* (Vigna): tiny, fast, good enough for shuffles. */
static uint64_t rng_next(struct rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

/* Gang sizes: a fresh shuffle of size_table every NSIZES gangs. */
struct sizes {
    int deck[NSIZES];
    int next;
};

static int next_size(struct sizes *z, struct rng *r)
{
    if (z->next == 0 || z->next >= NSIZES) {
        memcpy(z->deck, size_table, sizeof(z->deck));
        for (int i = NSIZES - 1; i > 0; i--) {
            int k = (int)rng_below(r, (uint64_t)i + 1), t = z->deck[i];

            z->deck[i] = z->deck[k];
            z->deck[k] = t;
        }
        z->next = 0;
    }
    return z->deck[z->next++];
}

static void pod_req(struct mu_res *r, int gpu_dim, int64_t n)
{
    mu_res_zero(r);
    mu_res_put(r, MU_RES_CPU, POD_CPU * n);
    mu_res_put(r, MU_RES_MEMORY, POD_MEM * n);
    mu_res_put(r, gpu_dim, n);
}

/* The DRA objects of spec.dra: a DeviceClass, a template, and one
 * object decoded from JSON text (not timed: the generator). */
static int add_dra_json(struct mu_cluster *c, const char *kind,
                        const char *txt)
{
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_err err;
    int rc = -EINVAL;

    if (!j)
        goto out;
    if (!strcmp(kind, "class")) {
        struct mu_devclass dc;

        if (!(rc = mu_devclass_decode(j, &dc, &err)))
            mu_cluster_put_class(c, &dc);
    } else if (!strcmp(kind, "template")) {
        struct mu_claimtemplate t;

        if (!(rc = mu_claimtemplate_decode(j, &t, &err)))
            mu_cluster_put_template(c, &t);
    } else if (!strcmp(kind, "slice")) {
        struct mu_slice s;

        if (!(rc = mu_slice_decode(j, &s, &err)))
            mu_cluster_put_slice(c, &s);
    } else {
        struct mu_claim cl;

        if (!(rc = mu_claim_decode(j, &cl, &err)))
            mu_cluster_put_claim(c, &cl);
    }
    if (rc)
        fprintf(stderr, "bench_gen: %s: %s\n", kind, err.msg);
out:
    json_decref(j);
    return rc;
}

static int add_slice(struct mu_cluster *c, int i)
{
    char buf[1024];
    size_t n = 0;

    n += (size_t)snprintf(buf, sizeof(buf),
                          "{\"metadata\":{\"name\":\"node-%06d-gpu\"},"
                          "\"spec\":{\"driver\":\"gpu.bench\",\"nodeName\":"
                          "\"node-%06d\",\"pool\":{\"name\":\"node-%06d\","
                          "\"generation\":1,\"resourceSliceCount\":1},"
                          "\"devices\":[", i, i, i);
    for (int d = 0; d < NODE_GPUS; d++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "%s{\"name\":\"gpu-%d\"}", d ? "," : "", d);
    snprintf(buf + n, sizeof(buf) - n, "]}}");
    return add_dra_json(c, "slice", buf);
}

static int add_node(struct mu_cluster *c, int i, int gpu_dim, bool topo)
{
    struct mu_node n;
    struct mu_err err;
    struct mu_kv *kv;

    memset(&n, 0, sizeof(n));
    n.meta.name = mu_xasprintf("node-%06d", i);
    n.meta.labels.v = kv = mu_xcalloc(3, sizeof(*n.meta.labels.v));
    if (topo) { /* sorted by key */
        kv[0].key = mu_xstrdup(BENCH_RACK_LABEL);
        kv[0].value = mu_xasprintf("rack-%04d", i / BENCH_RACK_NODES);
        kv[1].key = mu_xstrdup(BENCH_ZONE_LABEL);
        kv[1].value = mu_xasprintf("zone-%03d", i / (BENCH_RACK_NODES *
                                                     BENCH_ZONE_RACKS));
        kv += 2;
        n.meta.labels.n = 2;
    }
    kv[0].key = mu_xstrdup(GPU_LABEL);
    kv[0].value = mu_xstrdup(GPU_PRODUCT);
    n.meta.labels.n++;
    mu_res_zero(&n.allocatable);
    mu_res_put(&n.allocatable, MU_RES_CPU, NODE_CPU);
    mu_res_put(&n.allocatable, MU_RES_MEMORY, NODE_MEM);
    mu_res_put(&n.allocatable, MU_RES_PODS, NODE_PODS);
    if (gpu_dim >= 0)
        mu_res_put(&n.allocatable, gpu_dim, NODE_GPUS);
    if (!mu_cluster_add_node(c, &n, &err)) {
        fprintf(stderr, "bench_gen: %s\n", err.msg);
        mu_node_release(&n);
        return -EINVAL;
    }
    return 0;
}

/* Queue name (owned) under parent (NULL: none), deserving des GPUs of
 * dimension gpu (< 0: no deserved). */
static int add_queue_named(struct mu_cluster *c, char *name,
                           const char *parent, int i, int gpu, int64_t des,
                           int64_t created)
{
    struct mu_queue_spec q;
    struct mu_err err;

    memset(&q, 0, sizeof(q));
    q.meta.name = name;
    q.meta.created = created;
    q.weight = 1 + i % 4;
    mu_res_zero(&q.capability);
    mu_res_zero(&q.guarantee);
    mu_res_zero(&q.deserved);
    if (des >= 0)
        mu_res_put(&q.deserved, gpu, des);
    q.parent = parent ? mu_xstrdup(parent) : NULL;
    q.reclaimable = true;
    q.state = MU_QUEUE_OPEN;
    if (!mu_cluster_add_queue(c, &q, &err)) {
        fprintf(stderr, "bench_gen: %s\n", err.msg);
        mu_queue_spec_release(&q);
        return -EINVAL;
    }
    return 0;
}

static int add_queue(struct mu_cluster *c, const struct bench_spec *s, int i,
                     int gpu, int64_t created)
{
    int64_t leaf = (int64_t)s->nodes * 8 / s->queues;
    char parent[32];

    if (!s->tree)
        return add_queue_named(c, mu_xasprintf("queue-%04d", i), NULL, i,
                               gpu, -1, created);
    snprintf(parent, sizeof(parent), "team-%03d", i / 10);
    return add_queue_named(c, mu_xasprintf("queue-%04d", i), parent, i, gpu,
                           leaf, created);
}

/* --tree: the teams and orgs above the queues; each deserves what its
 * children do. */
static int add_tree(struct mu_cluster *c, const struct bench_spec *s, int gpu,
                    int64_t created)
{
    int64_t leaf = (int64_t)s->nodes * 8 / s->queues;
    int teams = (s->queues + 9) / 10, rc = 0;

    for (int t = 0; t < teams && !rc; t++) {
        int n = MU_MIN(10, s->queues - t * 10);
        char parent[32];

        snprintf(parent, sizeof(parent), "org-%02d", t / 5);
        rc = add_queue_named(c, mu_xasprintf("team-%03d", t), parent, t, gpu,
                             leaf * n, created);
    }
    for (int o = 0; o < (teams + 4) / 5 && !rc; o++) {
        int n = MU_MIN(50, s->queues - o * 50);

        rc = add_queue_named(c, mu_xasprintf("org-%02d", o), NULL, o, gpu,
                             leaf * n, created);
    }
    return rc;
}

/* One gang as the generator plans it, before anything is added. */
struct gang {
    char *name;     /* owned until handed to the PodGroup */
    int size, queue;
    int first_gpu;  /* running gangs: global GPU slot of pod 0; else -1 */
    int64_t created;
};

static int add_job(struct mu_cluster *c, const struct bench_spec *s,
                   const struct gang *g, int gpu_dim)
{
    struct mu_podgroup pg;
    struct mu_err err;

    memset(&pg, 0, sizeof(pg));
    pg.meta.ns = mu_xstrdup(NS);
    pg.meta.name = mu_xstrdup(g->name);
    pg.meta.created = g->created;
    pg.min_member = g->size;
    pg.queue = mu_xasprintf("queue-%04d", g->queue);
    pod_req(&pg.min_resources, gpu_dim, g->size);
    if (!s->min_resources)
        mu_res_zero(&pg.min_resources);
    pg.has_min_resources = s->min_resources;
    if (g->first_gpu >= 0)
        pg.phase = MU_PG_RUNNING;
    else
        pg.phase = s->inqueue ? MU_PG_INQUEUE : MU_PG_PENDING;
    pg.topo.highest_tier = -1;
    if (s->topology && g->first_gpu < 0) {
        pg.topo.mode = MU_TOPO_HARD;
        pg.topo.highest_tier = g->size <= 8 ? 1 : 2;
    }
    if (!mu_cluster_add_job(c, &pg, &err)) {
        fprintf(stderr, "bench_gen: %s\n", err.msg);
        mu_podgroup_release(&pg);
        return -EINVAL;
    }
    return 0;
}

/* The ResourceClaim <pod>-gpu of pod p (which names it): allocated the
 * device of GPU slot `slot` when slot >= 0, else not yet allocated. */
static int add_claim(struct mu_cluster *c, struct mu_pod *p, int slot,
                     bool selectors)
{
    const char *sel = selectors
                          ? ",\"selectors\":[{\"cel\":{\"expression\":"
                            "\"device.driver == \\\"gpu.bench\\\"\"}}]"
                          : "";
    char status[512] = "";
    char buf[1024];

    p->claims[0].claim = mu_xasprintf("%s-gpu", p->meta.name);
    if (slot >= 0)
        snprintf(status, sizeof(status),
                 ",\"status\":{\"allocation\":{\"devices\":"
                 "{\"results\":[{\"request\":\"gpu\",\"driver\":"
                 "\"gpu.bench\",\"pool\":\"node-%06d\","
                 "\"device\":\"gpu-%d\"}]}}}",
                 slot / NODE_GPUS, slot % NODE_GPUS);
    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"" NS "\","
             "\"name\":\"%s\"},\"spec\":{\"devices\":"
             "{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
             "{\"deviceClassName\":\"gpu.bench\"%s}}]}}%s}",
             p->claims[0].claim, sel, status);
    return add_dra_json(c, "claim", buf);
}

static int add_pods(struct mu_cluster *c, const struct gang *g, int gpu_dim,
                    bool dra, bool claims, bool selectors)
{
    for (int i = 0; i < g->size; i++) {
        struct mu_pod p;
        struct mu_err err;

        memset(&p, 0, sizeof(p));
        p.meta.ns = mu_xstrdup(NS);
        p.meta.name = mu_xasprintf("%s-worker-%02d", g->name, i);
        p.meta.created = g->created;
        p.scheduler_name = mu_xstrdup("volcano");
        p.phase = MU_POD_PENDING;
        if (g->first_gpu >= 0) {
            p.node_name =
                mu_xasprintf("node-%06d", (g->first_gpu + i) / NODE_GPUS);
            p.phase = MU_POD_RUNNING;
        }
        pod_req(&p.req, gpu_dim, 1);
        mu_res_put(&p.req, MU_RES_PODS, 1);
        if (dra) {
            p.req.v[gpu_dim] = 0;
            p.req.set &= ~(1u << gpu_dim);
            p.nclaims = 1;
            p.claims = mu_xcalloc(1, sizeof(*p.claims));
            p.claims[0].name = mu_xstrdup("gpu");
            p.claims[0].tmpl = mu_xstrdup("one-gpu");
            if ((g->first_gpu >= 0 || claims) &&
                add_claim(c, &p, g->first_gpu >= 0 ? g->first_gpu + i : -1,
                          selectors && g->first_gpu < 0)) {
                mu_pod_release(&p);
                return -EINVAL;
            }
        }
        p.group = mu_xstrdup(g->name);
        p.task_spec = mu_xstrdup("worker");
        p.task_index = i;
        p.preemptable = true;
        p.run_for_ms = -1;
        if (!mu_cluster_add_task(c, &p, &err)) {
            fprintf(stderr, "bench_gen: %s\n", err.msg);
            mu_pod_release(&p);
            return -EINVAL;
        }
    }
    return 0;
}

/* Plans n_pods pods of gangs named prefix-NNNNNNN; running gangs get
 * consecutive GPU slots. Returns the number of gangs, *out owned. */
static size_t plan(struct rng *r, const struct bench_spec *s,
                   const char *prefix, long n_pods, bool run,
                   struct gang **out)
{
    struct sizes z = {{0}, 0};
    size_t n = 0, cap = 0;
    struct gang *g = NULL;
    long left = n_pods, slot = 0;

    while (left > 0) {
        int size = next_size(&z, r);

        while (size > left)
            size /= 2;
        mu_xgrow((void **)&g, &cap, n + 1, sizeof(*g));
        g[n].name = mu_xasprintf("%s-%07zu", prefix, n);
        g[n].size = size;
        g[n].queue = (int)rng_below(r, (uint64_t)s->queues);
        g[n].first_gpu = run ? (int)slot : -1;
        /* running work is older than anything pending */
        g[n].created = s->created + (run ? 0 : 3600) + (int64_t)(n / 16);
        slot += size;
        left -= size;
        n++;
    }
    *out = g;
    return n;
}

void bench_spec_default(struct bench_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->nodes = 1000;
    s->queues = 10;
    s->pods = 10000;
    s->running = 0;
    s->inqueue = true;
    s->min_resources = true;
    s->seed = 42;
    s->created = 1700000000;
}

int bench_gen(struct mu_cluster *c, const struct bench_spec *s,
              struct bench_counts *out)
{
    struct rng r = {s->seed ? s->seed : 42};
    struct gang *pend = NULL, *run = NULL;
    size_t npend, nrun;
    long run_gpus;
    int gpu_dim, rc = 0;

    if (s->nodes < 1 || s->nodes > 999999 || s->queues < 1 ||
        s->queues > 9999 || s->pods < 0 || s->running < 0 ||
        s->running > 0.95) {
        fprintf(stderr, "bench_gen: spec out of range\n");
        return -EINVAL;
    }
    memset(out, 0, sizeof(*out));
    gpu_dim = mu_resnames_index(&c->rn, GPU_NAME, true);
    if (gpu_dim < 0)
        return -EINVAL;
    run_gpus = (long)(s->running * (double)s->nodes * NODE_GPUS);
    npend = plan(&r, s, "gang", s->pods, false, &pend);
    nrun = plan(&r, s, "run", run_gpus, true, &run);

    /* Nodes, queues, then jobs, then pods: jobs added before their pods
     * adopt nothing (no scan), and pods find their node and job. */
    if (s->dra) {
        rc = add_dra_json(c, "class",
                          "{\"metadata\":{\"name\":\"gpu.bench\"},\"spec\":"
                          "{\"extendedResourceName\":\"" GPU_NAME "\","
                          "\"selectors\":[{\"cel\":{\"expression\":"
                          "\"device.driver == \\\"gpu.bench\\\"\"}}]}}");
        if (!rc)
            rc = add_dra_json(c, "template",
                              "{\"metadata\":{\"namespace\":\"" NS "\","
                              "\"name\":\"one-gpu\"},\"spec\":{\"spec\":"
                              "{\"devices\":{\"requests\":[{\"name\":"
                              "\"gpu\",\"exactly\":{\"deviceClassName\":"
                              "\"gpu.bench\"}}]}}}}");
    }
    for (int i = 0; i < s->nodes && !rc; i++) {
        rc = add_node(c, i, s->dra ? -1 : gpu_dim, s->topology);
        if (!rc && s->dra)
            rc = add_slice(c, i);
    }
    for (int i = 0; i < s->queues && !rc; i++)
        rc = add_queue(c, s, i, gpu_dim, s->created - 86400 + i);
    if (!rc && s->tree)
        rc = add_tree(c, s, gpu_dim, s->created - 86400);
    for (size_t i = 0; i < npend && !rc; i++)
        rc = add_job(c, s, &pend[i], gpu_dim);
    for (size_t i = 0; i < nrun && !rc; i++)
        rc = add_job(c, s, &run[i], gpu_dim);
    for (size_t i = 0; i < npend && !rc; i++)
        rc = add_pods(c, &pend[i], gpu_dim, s->dra, s->claims, s->selectors);
    for (size_t i = 0; i < nrun && !rc; i++)
        rc = add_pods(c, &run[i], gpu_dim, s->dra, s->claims, s->selectors);
    if (!rc)
        mu_cluster_link(c);

    out->gangs = (long)npend;
    out->pods = s->pods;
    out->run_gangs = (long)nrun;
    out->run_pods = run_gpus;
    out->gpus = (long)s->nodes * NODE_GPUS;
    for (size_t i = 0; i < npend; i++)
        free(pend[i].name);
    for (size_t i = 0; i < nrun; i++)
        free(run[i].name);
    free(pend);
    free(run);
    return rc;
}
