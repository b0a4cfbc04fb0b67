/*
 * bench_cycle - how long one full scheduling cycle takes on a large
 * synthetic GPU cluster (bench/gen.h), and how that grows with the number of
 * pending pods.
 *
 *   bench_cycle [--nodes N] [--queues Q] [--pods P] [--runs R] [--sweep]
 *               [--running F] [--pending] [--dra] [--claims] [--selectors]
 *               [--topology] [--tree]
 *               [--again] [--versus]
 *               [--report] [--seed S]
 *
 * Each run generates a fresh cluster (not timed), then times exactly one
 * mu_cycle_run() with the built-in configuration (mu_conf_default: enqueue,
 * allocate, backfill, reclaim, preempt) with CLOCK_MONOTONIC. Runs use the
 * same seed, so every run must make the same decisions: the bench checks
 * that (a hash of every bind and eviction) and a few invariants of the
 * result (no node over its allocatable, no gang below minMember, nothing
 * left Allocated or Pipelined), and exits 1 when one fails.
 *
 * Reporting (probe.h) follows wrk (src/stats.c): cycle times go into a
 * fixed-bucket histogram (log-linear, 64 sub-buckets per power of two:
 * under 1.6% error) read for percentiles; median, min and max are also
 * exact from the sorted samples. Memory: the process peak (getrusage
 * ru_maxrss) and, per run, the RSS of the built cluster and the
 * high-water mark during the cycle (VmHWM after resetting it through
 * /proc/self/clear_refs, when Linux allows that).
 *
 * --topology puts the nodes in racks of 32 and zones of 16 racks (node
 * labels named as tiers by hyperNodeTiers) and holds every gang to one
 * rack (up to 8 pods) or one zone (sched/topology.h); the check also
 * verifies that every gang bound lies inside its domain.
 *
 * --tree makes the queues the leaves of a three-level tree (queue-i under
 * team-(i/10) under org-(i/50), each deserving an even split of the GPUs)
 * and runs capacity with enableHierarchy where the default has proportion.
 *
 * --again also times a second cycle on the same cluster right after the
 * first, with no event in between (what the first decided stays Binding
 * or Releasing): the cycle that has nothing new to decide.
 *
 * --versus times the same cluster twice per run, once with its GPUs as
 * nvidia.com/gpu and once as DRA devices (with --claims and --selectors
 * as given): both are generated first, then their cycles run back to
 * back, the order alternating, so that the host's noise falls on both
 * (and with the memory a cycle frees kept for the next: no page faults);
 * it prints every pair and the DRA/gpu ratios (of the medians, and the
 * median of the pairs'), and whether both made the same decisions.
 *
 * --report also times the /debug snapshot muster serve builds after a
 * cycle (sched/report.h) on the cluster the cycle left, and one
 * /debug/gangs answer from it.
 *
 * --sweep runs 1k, 10k, 50k and 100k pending pods with nodes = pods / 10
 * and prints ms per cycle against n log2 n, normalised to the first row: a
 * ratio that stays flat means n log n growth, one that climbs linearly
 * means n^2.
 */
#include <limits.h>
#include <malloc.h>
#include <math.h>

#include "common/map.h"
#include "gen.h"
#include "probe.h"
#include "sched/cycle.h"
#include "sched/report.h"
#include "sched/topology.h"

/* ---- one run ---- */

struct run {
    double gen_ms, cycle_ms;
    double cpu_ms;    /* thread CPU time of the cycle */
    size_t binds, evicts, changed;
    uint64_t digest;  /* of every decision, in order */
    uint64_t cond_digest; /* of every job's phase and condition after it */
    long rss_kib;     /* cluster built, before the cycle */
    long hwm_kib;     /* high-water mark during the cycle, -1 unknown */
    struct bench_counts counts;
    /* --again: the second cycle, nothing changed since the first */
    double again_ms, again_cpu_ms;
    size_t again_binds, again_evicts;
};

static uint64_t mix(uint64_t h, const char *s)
{
    return (h ^ mu_hash_str(s)) * 1099511628211ull;
}

/* Every job's phase and condition (type, reason, message: the texts
 * written to the PodGroups) after a cycle, in job order, and which jobs the
 * cycle reported changed. */
static uint64_t cond_digest(const struct mu_cluster *c,
                            const struct mu_cycle_out *o)
{
    uint64_t h = 14695981039346656037ull;

    for (size_t i = 0; i < c->njobs; i++) {
        const struct mu_job *j = c->jobs[i];

        h = mix(h, j->key);
        h = mix(h, mu_pg_phase_name(j->phase));
        h = mix(h, j->cond.type ? j->cond.type : "");
        h = mix(h, j->cond.reason ? j->cond.reason : "");
        h = mix(h, j->cond.message ? j->cond.message : "");
    }
    for (size_t i = 0; i < o->nchanged; i++)
        h = mix(h, o->changed[i]->key);
    return h;
}

/* Invariants of a finished cycle; prints the first failure. */
static bool check(const struct mu_cluster *c, const struct mu_cycle_out *o)
{
    for (size_t i = 0; i < c->nnodes; i++) {
        const struct mu_cnode *n = c->nodes[i];

        for (int d = 0; d < c->rn.n; d++) {
            if (n->idle.v[d] < 0) {
                fprintf(stderr, "check: node %s over allocatable in %s\n",
                        n->spec.meta.name, c->rn.name[d]);
                return false;
            }
        }
        if (n->used.v[MU_RES_PODS] > n->spec.allocatable.v[MU_RES_PODS]) {
            fprintf(stderr, "check: node %s over its pod count\n",
                    n->spec.meta.name);
            return false;
        }
    }
    for (size_t i = 0; i < c->njobs; i++) {
        const struct mu_job *j = c->jobs[i];
        int on = j->count[MU_TASK_BINDING] + j->count[MU_TASK_BOUND] +
                 j->count[MU_TASK_RUNNING];

        if (j->count[MU_TASK_ALLOCATED] || j->count[MU_TASK_PIPELINED]) {
            fprintf(stderr, "check: %s has Allocated/Pipelined tasks after "
                            "the cycle\n", j->key);
            return false;
        }
        if (on > 0 && on + j->count[MU_TASK_SUCCEEDED] < j->pg.min_member) {
            fprintf(stderr, "check: gang %s has %d of minMember %d placed\n",
                    j->key, on, j->pg.min_member);
            return false;
        }
    }
    for (size_t i = 0; i < o->nbinds; i++) {
        if (o->binds[i]->status != MU_TASK_BINDING || !o->binds[i]->node) {
            fprintf(stderr, "check: bind %s is %s\n", o->binds[i]->key,
                    mu_task_status_name(o->binds[i]->status));
            return false;
        }
    }
    return true;
}

/* Times a second cycle on c as the first left it. */
static void run_again(struct mu_cluster *c, struct mu_conf *conf, int64_t now,
                      struct run *r)
{
    struct mu_cycle_out out;
    double t0, c0;

    c0 = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID);
    t0 = probe_now_ms();
    mu_cycle_run(c, conf, now, &out);
    r->again_ms = probe_now_ms() - t0;
    r->again_cpu_ms = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    r->again_binds = out.nbinds;
    r->again_evicts = out.nevicts;
    mu_cycle_out_release(&out);
}

/* --report: what muster serve does after a cycle for /debug (at most once
 * a second), and what one /debug/gangs answer costs. */
static bool report_too;

static void time_report(const struct mu_cluster *c, int64_t now)
{
    double t0 = probe_now_ms(), t1, c1;
    double c0 = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID);
    json_t *snap = mu_report_build(c, now);
    char *text;
    int status;

    t1 = probe_now_ms();
    c1 = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID);
    text = mu_report_answer(snap, "/debug/gangs", &status);
    printf("  report: built in %.1f ms wall, %.1f ms CPU (%zu queues, %zu "
           "gangs); /debug/gangs answer %.1f MiB in %.1f ms\n",
           t1 - t0, c1 - c0, json_array_size(json_object_get(snap, "queues")),
           json_array_size(json_object_get(snap, "gangs")),
           (double)strlen(text) / (1024.0 * 1024.0), probe_now_ms() - t1);
    free(text);
    json_decref(snap);
}

/* Every gang held to a rack or a zone has its bound pods inside one. */
static bool check_topology(const struct mu_cluster *c,
                           const struct mu_cycle_out *o)
{
    for (size_t i = 0; i < o->nbinds; i++) {
        const struct mu_task *t = o->binds[i];
        const struct mu_job *j = t->job;
        const char *label = j->pg.topo.highest_tier == 1 ? BENCH_RACK_LABEL
                                                         : BENCH_ZONE_LABEL;
        const char *want = mu_kvs_get(&t->node->spec.meta.labels, label);

        if (j->pg.topo.mode != MU_TOPO_HARD)
            continue;
        for (size_t k = 0; k < j->ntasks; k++) {
            const struct mu_task *u = j->tasks[k];

            if (u->node &&
                mu_strcmp0(mu_kvs_get(&u->node->spec.meta.labels, label),
                           want)) {
                fprintf(stderr, "check: gang %s spans %s %s and %s\n",
                        j->key, label, want,
                        mu_kvs_get(&u->node->spec.meta.labels, label));
                return false;
            }
        }
    }
    (void)c;
    return true;
}

/* A generated cluster waiting for its timed cycle (on the caller's
 * stack: c.topo points into it, so it does not move). */
struct prepared {
    struct mu_cluster c;
    struct mu_topo topo;
    int64_t now;
};

/* Generates spec's cluster into p (not timed, but its time is r's
 * gen_ms); -EINVAL, with nothing left to release, when it cannot. */
static int prepare(const struct bench_spec *spec, struct prepared *p,
                   struct run *r)
{
    double t0;

    memset(r, 0, sizeof(*r));
    p->now = (spec->created + 7200) * 1000;
    mu_cluster_init(&p->c);
    mu_topo_init(&p->topo);
    p->c.topo = &p->topo;
    t0 = probe_now_ms();
    if (bench_gen(&p->c, spec, &r->counts)) {
        mu_cluster_release(&p->c);
        mu_topo_free(&p->topo);
        return -EINVAL;
    }
    r->gen_ms = probe_now_ms() - t0;
    r->rss_kib = probe_status_kib("VmRSS");
    probe_note_peak();
    return 0;
}

/* Times one cycle on p, checks what it decided into r, and releases p;
 * -EPROTO when a check failed. */
static int run_prepared(const struct bench_spec *spec, struct mu_conf *conf,
                        bool again, struct prepared *p, struct run *r)
{
    struct mu_cycle_out out;
    double t0, t1, c0, c1;
    bool hwm = probe_reset_hwm();
    int rc = 0;

    c0 = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID);
    t0 = probe_now_ms();
    mu_cycle_run(&p->c, conf, p->now, &out);
    t1 = probe_now_ms();
    c1 = probe_clock_ms(CLOCK_THREAD_CPUTIME_ID);

    r->cycle_ms = t1 - t0;
    r->cpu_ms = c1 - c0;
    r->hwm_kib = hwm ? probe_status_kib("VmHWM") : -1;
    probe_note_peak();
    r->binds = out.nbinds;
    r->evicts = out.nevicts;
    r->changed = out.nchanged;
    r->digest = 14695981039346656037ull;
    for (size_t i = 0; i < out.nbinds; i++) {
        r->digest = mix(r->digest, out.binds[i]->key);
        r->digest = mix(r->digest, out.binds[i]->node->spec.meta.name);
    }
    for (size_t i = 0; i < out.nevicts; i++)
        r->digest = mix(r->digest, out.evicts[i].victim->key);
    r->cond_digest = cond_digest(&p->c, &out);
    if (!check(&p->c, &out) ||
        (spec->topology && !check_topology(&p->c, &out)))
        rc = -EPROTO;
    mu_cycle_out_release(&out);
    if (report_too && !rc)
        time_report(&p->c, p->now);
    if (again && !rc)
        run_again(&p->c, conf, p->now, r);
    mu_cluster_release(&p->c);
    mu_topo_free(&p->topo);
    return rc;
}

static int run_once(const struct bench_spec *spec, struct mu_conf *conf,
                    bool again, struct run *r)
{
    struct prepared p;
    int rc = prepare(spec, &p, r);

    return rc ? rc : run_prepared(spec, conf, again, &p, r);
}

struct summary {
    double median, min, max, p90, p99, gen_ms;
    double cpu_median, cpu_min;
    double again_median, again_cpu_median; /* --again */
    struct run first;
    long hwm_max_kib, rss_kib;
};

/* R runs of one spec; 0, or -1 when a run failed or runs disagreed. */
static int measure(const struct bench_spec *spec, struct mu_conf *conf,
                   int runs, bool again, bool verbose, struct summary *s)
{
    double *ms = mu_xcalloc((size_t)runs, sizeof(*ms));
    double *cpu = mu_xcalloc((size_t)runs, sizeof(*cpu));
    double *ams = mu_xcalloc((size_t)runs, sizeof(*ams));
    double *acpu = mu_xcalloc((size_t)runs, sizeof(*acpu));
    struct probe_hist *h = mu_xcalloc(1, sizeof(*h));
    double gen = 0;
    int rc = 0;

    memset(s, 0, sizeof(*s));
    s->hwm_max_kib = -1;
    for (int i = 0; i < runs && !rc; i++) {
        struct run r;

        if (run_once(spec, conf, again, &r)) {
            rc = -1;
            break;
        }
        if (i == 0) {
            s->first = r;
        } else if (r.digest != s->first.digest || r.binds != s->first.binds ||
                   r.cond_digest != s->first.cond_digest) {
            fprintf(stderr, "run %d decided differently from run 1 "
                            "(%zu binds vs %zu): not deterministic\n",
                    i + 1, r.binds, s->first.binds);
            rc = -1;
        }
        ms[i] = r.cycle_ms;
        cpu[i] = r.cpu_ms;
        ams[i] = r.again_ms;
        acpu[i] = r.again_cpu_ms;
        gen += r.gen_ms;
        probe_hist_add(h, (uint64_t)llround(r.cycle_ms * 1000.0));
        if (r.hwm_kib > s->hwm_max_kib)
            s->hwm_max_kib = r.hwm_kib;
        s->rss_kib = r.rss_kib;
        if (verbose)
            printf("  run %d: cycle %.1f ms wall, %.1f ms CPU (generation %.0f "
                   "ms), %zu binds, %zu evictions, RSS %.1f MiB -> peak %.1f "
                   "MiB\n",
                   i + 1, r.cycle_ms, r.cpu_ms, r.gen_ms, r.binds, r.evicts,
                   (double)r.rss_kib / 1024, (double)r.hwm_kib / 1024);
        if (verbose && again)
            printf("  run %d, again (no event): cycle %.1f ms wall, %.1f ms "
                   "CPU, %zu binds, %zu evictions\n",
                   i + 1, r.again_ms, r.again_cpu_ms, r.again_binds,
                   r.again_evicts);
    }
    if (!rc) {
        s->median = probe_median(ms, runs); /* sorts ms */
        s->min = ms[0];
        s->cpu_median = probe_median(cpu, runs);
        s->cpu_min = cpu[0];
        s->max = ms[runs - 1];
        s->p90 = (double)probe_hist_percentile(h, 90) / 1000.0;
        s->p99 = (double)probe_hist_percentile(h, 99) / 1000.0;
        s->gen_ms = gen / runs;
        s->again_median = probe_median(ams, runs);
        s->again_cpu_median = probe_median(acpu, runs);
    }
    free(ams);
    free(acpu);
    free(h);
    free(cpu);
    free(ms);
    return rc;
}

/* --tree: the default configuration with capacity and its hierarchy where
 * proportion is. */
static int tree_conf(struct mu_conf *conf)
{
    const char *from = "  - name: proportion\n";
    const char *at = strstr(mu_conf_default_text, from);
    struct mu_err err;
    char *text;
    int rc;

    if (!at) {
        fprintf(stderr, "bench_cycle: the default has no proportion\n");
        return -EINVAL;
    }
    text = mu_xasprintf("%.*s  - name: capacity\n    enableHierarchy: true\n"
                        "%s",
                        (int)(at - mu_conf_default_text),
                        mu_conf_default_text, at + strlen(from));
    rc = mu_conf_parse("tree.conf", text, strlen(text), conf, &err);
    if (rc < 0)
        fprintf(stderr, "bench_cycle: %s\n", err.msg);
    free(text);
    return rc;
}

/* ---- command line ---- */

static void usage(FILE *f)
{
    fputs("usage: bench_cycle [--nodes N] [--queues Q] [--pods P] [--runs R] "
          "[--sweep]\n"
          "                   [--running F] [--pending] [--dra] [--claims] [--selectors]\n                   [--again] "
          "[--report] [--seed S]\n"
          "  --nodes N    nodes of 8 GPUs (default 10000)\n"
          "  --queues Q   queues, weights 1..4 cycling (default 100)\n"
          "  --pods P     pending pods, 1 GPU each, in gangs of 1-16 "
          "(default 100000)\n"
          "  --runs R     cycles timed, each on a fresh cluster (default 5)\n"
          "  --sweep      1k, 10k, 50k, 100k pods with nodes = pods / 10\n"
          "  --running F  also fill F (0..0.95) of the GPUs with running "
          "gangs\n"
          "  --pending    PodGroups start Pending (enqueue admits them)\n"
          "  --dra        the GPUs as DRA devices (a slice of 8 per node) "
          "and\n               every pod's GPU as a one-device claim\n"
          "  --claims     --dra, and every pending pod's claim a ResourceClaim "
          "of its own\n               (as kube-controller-manager makes them), "
          "not only the template\n"
          "  --selectors  --claims, each pending claim's request with a CEL "
          "selector of its own\n               (the driver every device has)\n"
          "  --tree       the queues are leaves of a 3-level tree (team, org), "
          "capacity\n"
          "               with enableHierarchy, deserved split evenly\n"
          "  --topology   racks of 32 nodes, zones of 16 racks; every gang "
          "held to\n               one rack (<= 8 pods) or one zone\n"
          "  --again      also time a second cycle with no event between\n"
          "  --versus     R pairs: the cluster with nvidia.com/gpu and the "
          "same with\n               DRA (--claims, --selectors as given), "
          "back to back\n"
          "  --report     also time the /debug snapshot and a /debug/gangs "
          "answer\n"
          "  --seed S     generator seed (default 42)\n",
          f);
}

static bool arg_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool arg_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static void print_spec(const struct bench_spec *s, const struct run *r)
{
    printf("cluster: %d nodes (%ld GPUs), %d queues, %ld pending pods in %ld "
           "gangs (PodGroups %s)",
           s->nodes, r->counts.gpus, s->queues, r->counts.pods,
           r->counts.gangs, s->inqueue ? "Inqueue" : "Pending");
    if (r->counts.run_gangs)
        printf(", %ld running pods in %ld gangs", r->counts.run_pods,
               r->counts.run_gangs);
    if (s->topology)
        printf("; racks of %d nodes, zones of %d racks, every gang held to "
               "one", BENCH_RACK_NODES, BENCH_ZONE_RACKS);
    if (s->tree)
        printf("; the queues in a 3-level tree (capacity, enableHierarchy)");
    printf("; seed %llu\n", (unsigned long long)s->seed);
}

/* --versus: R pairs of cycles, one on spec's cluster with its GPUs as
 * nvidia.com/gpu and one on the same cluster with them as DRA devices,
 * both generated before either cycle runs, run back to back (the order
 * alternating from pair to pair), so that what the host does to one it
 * does to the other; prints each pair and the medians. 0, or -1 when a
 * run failed or the runs of one side disagreed. */
static int versus(const struct bench_spec *spec, struct mu_conf *conf,
                  int runs)
{
    struct bench_spec side[2];
    double *v = mu_xcalloc((size_t)runs * 6, sizeof(*v));
    double *wall[2] = {v, v + runs}, *cpu[2] = {v + 2 * runs, v + 3 * runs};
    double *rw = v + 4 * runs, *rc_ = v + 5 * runs;
    struct run first[2];
    int rc = 0;

    /* what one cycle frees stays with the process for the next (no
     * trim, no mmap below 32 MiB): neither side pays the page faults of
     * memory the other gave back */
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    side[0] = *spec;
    side[0].dra = side[0].claims = side[0].selectors = false;
    side[1] = *spec;
    side[1].dra = true;
    for (int i = 0; i < runs && !rc; i++) {
        struct prepared p[2];
        struct run r[2];
        int a = i % 2, b = 1 - a; /* gpu first in even pairs */

        if (prepare(&side[a], &p[a], &r[a]))
            return -1;
        if (prepare(&side[b], &p[b], &r[b])) {
            mu_cluster_release(&p[a].c);
            mu_topo_free(&p[a].topo);
            return -1;
        }
        rc = run_prepared(&side[a], conf, false, &p[a], &r[a]);
        if (run_prepared(&side[b], conf, false, &p[b], &r[b]))
            rc = -1;
        for (int k = 0; k < 2 && !rc; k++) {
            if (i == 0) {
                first[k] = r[k];
            } else if (r[k].digest != first[k].digest ||
                       r[k].cond_digest != first[k].cond_digest) {
                fprintf(stderr, "pair %d: the %s cycle decided differently "
                                "from pair 1: not deterministic\n",
                        i + 1, k ? "DRA" : "gpu");
                rc = -1;
            }
            wall[k][i] = r[k].cycle_ms;
            cpu[k][i] = r[k].cpu_ms;
        }
        if (rc)
            break;
        rw[i] = wall[1][i] / wall[0][i];
        rc_[i] = cpu[1][i] / cpu[0][i];
        printf("  pair %d (%s first): gpu %.1f ms wall, %.1f ms CPU; DRA "
               "%.1f ms wall, %.1f ms CPU; DRA/gpu %.2f wall, %.2f CPU\n",
               i + 1, a ? "DRA" : "gpu", wall[0][i], cpu[0][i], wall[1][i],
               cpu[1][i], rw[i], rc_[i]);
        fflush(stdout);
    }
    if (!rc) {
        double gw = probe_median(wall[0], runs);
        double dw = probe_median(wall[1], runs);
        double gc = probe_median(cpu[0], runs);
        double dc = probe_median(cpu[1], runs);

        print_spec(&side[0], &first[0]);
        printf("versus (%d pairs): gpu median %.1f ms wall, %.1f ms CPU; "
               "DRA median %.1f ms wall, %.1f ms CPU\n",
               runs, gw, gc, dw, dc);
        printf("DRA/gpu: %.2f wall, %.2f CPU (ratio of the medians); "
               "%.2f wall, %.2f CPU (median of the pairs' ratios)\n",
               dw / gw, dc / gc, probe_median(rw, runs),
               probe_median(rc_, runs));
        printf("decisions: gpu %zu binds, digest %016llx; DRA %zu binds, "
               "digest %016llx: %s\n",
               first[0].binds, (unsigned long long)first[0].digest,
               first[1].binds, (unsigned long long)first[1].digest,
               first[0].digest == first[1].digest ? "the same decisions"
                                                  : "different decisions");
    }
    free(v);
    return rc;
}

static int sweep(const struct bench_spec *base, struct mu_conf *conf, int runs,
                 bool again)
{
    static const long sizes[] = {1000, 10000, 50000, 100000};
    double ref = 0;

    printf("sweep: nodes = pods / 10, %d queues, %d runs each, median "
           "cycle\n", base->queues, runs);
    printf("%8s %7s %7s %8s %10s %9s %9s %12s %7s %9s\n", "pods", "nodes",
           "gangs", "binds", "cycle ms", "CPU ms", "us/pod", "ns/(nlog2n)",
           "ratio", "peak MiB");
    for (size_t i = 0; i < MU_ARRAY_LEN(sizes); i++) {
        struct bench_spec s = *base;
        struct summary sum;
        double n = (double)sizes[i], nlogn = n * log2(n), per;

        s.pods = sizes[i];
        s.nodes = (int)(sizes[i] / 10);
        if (measure(&s, conf, runs, again, false, &sum))
            return 1;
        per = sum.median * 1e6 / nlogn;
        if (i == 0)
            ref = per;
        printf("%8ld %7d %7ld %8zu %10.1f %9.1f %9.2f %12.2f %7.2f %9.1f\n",
               sizes[i], s.nodes, sum.first.counts.gangs, sum.first.binds,
               sum.median, sum.cpu_median, sum.median * 1e3 / n, per,
               per / ref,
               probe_peak_mib());
        if (again)
            printf("%8s again (no event): %.1f ms wall, %.1f ms CPU\n", "",
                   sum.again_median, sum.again_cpu_median);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_spec spec;
    struct mu_conf conf;
    struct summary sum;
    long runs = 5, v;
    bool do_sweep = false, do_versus = false, again = false;
    int rc;

    bench_spec_default(&spec);
    spec.nodes = 10000;
    spec.queues = 100;
    spec.pods = 100000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;

        if (!strcmp(a, "--sweep")) {
            do_sweep = true;
            continue;
        }
        if (!strcmp(a, "--again")) {
            again = true;
            continue;
        }
        if (!strcmp(a, "--report")) {
            report_too = true;
            continue;
        }
        if (!strcmp(a, "--pending")) {
            spec.inqueue = false;
            continue;
        }
        if (!strcmp(a, "--dra")) {
            spec.dra = true;
            continue;
        }
        if (!strcmp(a, "--claims")) {
            spec.dra = spec.claims = true;
            continue;
        }
        if (!strcmp(a, "--selectors")) {
            spec.dra = spec.claims = spec.selectors = true;
            continue;
        }
        if (!strcmp(a, "--versus")) {
            do_versus = true;
            continue;
        }
        if (!strcmp(a, "--topology")) {
            spec.topology = true;
            continue;
        }
        if (!strcmp(a, "--tree")) {
            spec.tree = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!val) {
            ok = false;
        } else if (!strcmp(a, "--nodes")) {
            ok = arg_long(val, 1, 999999, &v);
            spec.nodes = (int)v;
        } else if (!strcmp(a, "--queues")) {
            ok = arg_long(val, 1, 9999, &v);
            spec.queues = (int)v;
        } else if (!strcmp(a, "--pods")) {
            ok = arg_long(val, 0, 100000000, &spec.pods);
        } else if (!strcmp(a, "--runs")) {
            ok = arg_long(val, 1, 100000, &runs);
        } else if (!strcmp(a, "--running")) {
            ok = arg_double(val, 0, 0.95, &spec.running);
        } else if (!strcmp(a, "--seed")) {
            ok = arg_long(val, 1, LONG_MAX, &v);
            spec.seed = (uint64_t)v;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "bench_cycle: bad argument %s%s%s\n", a,
                    val ? " " : "", val ? val : "");
            usage(stderr);
            return 2;
        }
        i++;
    }

    if (spec.tree) {
        if (tree_conf(&conf) < 0)
            return 1;
    } else {
        mu_conf_default(&conf);
    }
    if (spec.topology) {
        conf.label_tiers = mu_xcalloc(2, sizeof(*conf.label_tiers));
        conf.label_tiers[0].label = mu_xstrdup(BENCH_RACK_LABEL);
        conf.label_tiers[0].name = mu_xstrdup("rack");
        conf.label_tiers[1].label = mu_xstrdup(BENCH_ZONE_LABEL);
        conf.label_tiers[1].name = mu_xstrdup("zone");
        conf.nlabel_tiers = 2;
    }
    if (do_versus) {
        rc = versus(&spec, &conf, (int)runs);
        mu_conf_release(&conf);
        return rc ? 1 : 0;
    }
    if (do_sweep) {
        rc = sweep(&spec, &conf, (int)runs, again);
        printf("peak RSS (process): %.1f MiB\n",
               probe_peak_mib());
        mu_conf_release(&conf);
        return rc;
    }
    rc = measure(&spec, &conf, (int)runs, again, true, &sum);
    if (!rc) {
        print_spec(&spec, &sum.first);
        printf("cycle (%ld runs): median %.1f ms, min %.1f, max %.1f; "
               "histogram p90 %.1f, p99 %.1f ms\n",
               runs, sum.median, sum.min, sum.max, sum.p90, sum.p99);
        printf("cycle CPU time (thread): median %.1f ms, min %.1f\n",
               sum.cpu_median, sum.cpu_min);
        printf("decisions: %zu pods placed (binds), %zu evictions, %zu "
               "PodGroups changed; identical in every run\n",
               sum.first.binds, sum.first.evicts, sum.first.changed);
        printf("decision digest: %016llx (every bind and eviction, in "
               "order: equal digests, equal decisions)\n",
               (unsigned long long)sum.first.digest);
        printf("conditions digest: %016llx (every PodGroup's phase, "
               "condition and reason text after the cycle)\n",
               (unsigned long long)sum.first.cond_digest);
        if (again)
            printf("second cycle, no event since the first: median %.1f ms "
                   "wall, %.1f ms CPU; %zu binds, %zu evictions\n",
                   sum.again_median, sum.again_cpu_median,
                   sum.first.again_binds, sum.first.again_evicts);
        printf("generation (not timed): %.0f ms per cluster\n", sum.gen_ms);
        printf("memory: cluster built %.1f MiB RSS, cycle high-water %.1f "
               "MiB, process peak (ru_maxrss) %.1f MiB\n",
               (double)sum.rss_kib / 1024, (double)sum.hwm_max_kib / 1024,
               probe_peak_mib());
    }
    mu_conf_release(&conf);
    return rc ? 1 : 0;
}
