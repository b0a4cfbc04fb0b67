/*
 * smetrics.c - the scheduler side's figures for /metrics (smetrics.h).
 */
#include "serve/smetrics.h"

#include "common/clock.h"

void mu_smetrics_init(struct mu_smetrics *m, const struct mu_enforcer *enf)
{
    memset(m, 0, sizeof(*m));
    m->enf = enf;
    pthread_mutex_init(&m->lock, NULL);
    mu_hist_init(&m->cycle_hist, mu_hist_cycle, mu_hist_cycle_n);
    mu_map_init(&m->gang_wait);
}

void mu_smetrics_release(struct mu_smetrics *m)
{
    size_t it = 0;
    void *h;

    while (mu_map_next(&m->gang_wait, &it, NULL, &h))
        free(h);
    mu_map_release(&m->gang_wait);
    free(m->queue_text);
    pthread_mutex_destroy(&m->lock);
}

void mu_smetrics_cycle(struct mu_smetrics *m, int64_t ns)
{
    atomic_store(&m->last_cycle_ns, ns);
    mu_hist_observe_ns(&m->cycle_hist, ns);
    atomic_fetch_add(&m->cycles, 1);
}

void mu_smetrics_skipped(struct mu_smetrics *m)
{
    atomic_fetch_add(&m->cycles_skipped, 1);
}

/* The clients' rate-limit waits, each family's samples together: ws is
 * the writer's stats (NULL: no writer). */
static void limited(struct mu_sb *sb, const struct mu_smetrics *m,
                    const struct mu_writer_stats *ws)
{
    static const char *const name[2] = {"writer", "bind"};
    uint64_t n[2] = {ws ? ws->limited : 0, 0};
    int64_t ns[2] = {ws ? ws->limited_ns : 0, 0};
    bool have[2] = {ws != NULL, m->bind_pool != NULL};

    if (m->bind_pool)
        mu_kube_pool_limit_stats(m->bind_pool, &n[1], &ns[1]);
    if (!have[0] && !have[1])
        return;
    mu_sb_addf(sb, "# HELP muster_kube_rate_limited_total API requests that "
                   "waited for muster's own client rate limit (qps/burst), "
                   "by client: writer (releases, evictions, statuses) or "
                   "bind.\n"
                   "# TYPE muster_kube_rate_limited_total counter\n");
    for (int i = 0; i < 2; i++)
        if (have[i])
            mu_sb_addf(sb,
                       "muster_kube_rate_limited_total{client=\"%s\"} %llu\n",
                       name[i], (unsigned long long)n[i]);
    mu_sb_addf(sb, "# HELP muster_kube_rate_limited_seconds_total Seconds "
                   "API requests waited for muster's own client rate limit, "
                   "summed over the requests, by client.\n"
                   "# TYPE muster_kube_rate_limited_seconds_total counter\n");
    for (int i = 0; i < 2; i++)
        if (have[i])
            mu_sb_addf(sb,
                       "muster_kube_rate_limited_seconds_total{client=\"%s\"} "
                       "%.6f\n",
                       name[i], (double)ns[i] / 1e9);
}

char *mu_smetrics_text(void *ctx)
{
    struct mu_smetrics *m = ctx;
    struct mu_writer_stats ws;
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "# TYPE muster_cycle_duration_seconds histogram\n");
    mu_hist_write(&m->cycle_hist, "muster_cycle_duration_seconds", NULL, &sb);
    mu_sb_addf(&sb,
               "# TYPE muster_cycle_last_duration_seconds gauge\n"
               "muster_cycle_last_duration_seconds %.6f\n"
               "# TYPE muster_cycles_total counter\n"
               "muster_cycles_total %llu\n"
               "# TYPE muster_cycles_skipped_total counter\n"
               "muster_cycles_skipped_total %llu\n"
               "# TYPE muster_evictions_total counter\n"
               "muster_evictions_total{action=\"reclaim\"} %llu\n"
               "muster_evictions_total{action=\"preempt\"} %llu\n"
               "# TYPE muster_releases_total counter\n"
               "muster_releases_total %llu\n",
               (double)atomic_load(&m->last_cycle_ns) / 1e9,
               (unsigned long long)atomic_load(&m->cycles),
               (unsigned long long)atomic_load(&m->cycles_skipped),
               (unsigned long long)atomic_load(&m->enf->evicted_reclaim),
               (unsigned long long)atomic_load(&m->enf->evicted_preempt),
               (unsigned long long)atomic_load(&m->enf->releases));
    if (m->writer) {
        mu_writer_stats(m->writer, &ws);
        mu_sb_addf(&sb,
                   "# TYPE muster_writer_queued gauge\n"
                   "muster_writer_queued %zu\n"
                   "# TYPE muster_writer_queued_max gauge\n"
                   "muster_writer_queued_max %zu\n"
                   "# TYPE muster_writer_writes_total counter\n"
                   "muster_writer_writes_total %llu\n"
                   "# TYPE muster_writer_failed_total counter\n"
                   "muster_writer_failed_total %llu\n",
                   ws.queued + ws.running, ws.queued_max,
                   (unsigned long long)ws.submitted,
                   (unsigned long long)ws.failed);
    }
    limited(&sb, m, m->writer ? &ws : NULL);
    if (m->relbind) {
        const struct mu_relbind_stats *rs = mu_relbind_stats(m->relbind);

        mu_sb_addf(&sb,
                   "# HELP muster_gangs_bound_at_release_total Release "
                   "batches muster bound itself when it released them "
                   "(--gang-bind release), by result: bound; failed (a bind "
                   "failed, or a member no longer plain: planned again); "
                   "stale (over before their turn, or kube-scheduler's "
                   "/bind of a member came first); refused (queue full or "
                   "gang too big: woken instead).\n"
                   "# TYPE muster_gangs_bound_at_release_total counter\n"
                   "muster_gangs_bound_at_release_total{result=\"bound\"} "
                   "%llu\n"
                   "muster_gangs_bound_at_release_total{result=\"failed\"} "
                   "%llu\n"
                   "muster_gangs_bound_at_release_total{result=\"stale\"} "
                   "%llu\n"
                   "muster_gangs_bound_at_release_total{result=\"refused\"} "
                   "%llu\n",
                   (unsigned long long)atomic_load(&rs->bound),
                   (unsigned long long)atomic_load(&rs->failed),
                   (unsigned long long)atomic_load(&rs->stale),
                   (unsigned long long)atomic_load(&rs->refused));
        mu_sb_addf(&sb,
                   "# HELP muster_release_binder_pods Pods of the gangs "
                   "released to be bound at their release, queued or being "
                   "bound.\n"
                   "# TYPE muster_release_binder_pods gauge\n"
                   "muster_release_binder_pods %ld\n",
                   mu_relbind_pods(m->relbind));
    }
    pthread_mutex_lock(&m->lock);
    if (m->queue_text)
        mu_sb_add(&sb, m->queue_text);
    pthread_mutex_unlock(&m->lock);
    return mu_sb_detach(&sb);
}

/* The gang-wait histogram of queue name (made on first use). */
static struct mu_hist *wait_hist(struct mu_smetrics *m, const char *name)
{
    struct mu_hist *h = mu_map_get(&m->gang_wait, name);

    if (!h) {
        h = mu_xcalloc(1, sizeof(*h));
        mu_hist_init(h, mu_hist_gang_wait, mu_hist_gang_wait_n);
        mu_map_put(&m->gang_wait, name, h);
    }
    return h;
}

/* Observes, once per gang, the wait from its PodGroup's creation to its
 * minMember bound, for gangs this process saw waiting (a gang running
 * when muster started is not counted: its wait is not known). */
static void gang_waits(struct mu_smetrics *m, struct mu_cluster *c)
{
    int64_t now_s = mu_wall_ms() / 1000;

    for (size_t i = 0; i < c->njobs; i++) {
        struct mu_job *j = c->jobs[i];
        int bound = j->count[MU_TASK_BOUND] + j->count[MU_TASK_RUNNING] +
                    j->count[MU_TASK_SUCCEEDED];

        if (j->implicit || j->wait_seen == 2 || !j->queue)
            continue;
        if (bound >= j->pg.min_member && j->wait_seen == 0) {
            j->wait_seen = 2; /* running before this process saw it wait */
        } else if (bound < j->pg.min_member) {
            j->wait_seen = 1;
        } else if (j->wait_seen == 1) {
            j->wait_seen = 2;
            if (j->pg.meta.created > 0)
                mu_hist_observe_ns(
                    wait_hist(m, j->queue->spec.meta.name),
                    (now_s - j->pg.meta.created) * 1000000000LL);
        }
    }
}

void mu_smetrics_queues(struct mu_smetrics *m, struct mu_cluster *c)
{
    struct mu_sb sb;

    gang_waits(m, c);
    mu_sb_init(&sb);
    mu_sb_add(&sb, "# TYPE muster_queue_pending_gangs gauge\n"
                   "# TYPE muster_queue_running_gangs gauge\n"
                   "# TYPE muster_queue_allocated gauge\n"
                   "# TYPE muster_queue_deserved gauge\n"
                   "# TYPE muster_queue_capability gauge\n"
                   "# TYPE muster_gang_wait_seconds histogram\n");
    for (size_t i = 0; i < c->nqueues; i++) {
        const struct mu_cqueue *q = c->queues[i];
        struct mu_hist *h = mu_map_get(&m->gang_wait, q->spec.meta.name);
        int pending = 0;
        char *lb;

        for (size_t k = 0; k < q->njobs; k++)
            pending += !mu_job_ready(q->jobs[k]);
        mu_sb_addf(&sb, "muster_queue_pending_gangs{queue=\"%s\"} %d\n",
                   q->spec.meta.name, pending);
        mu_sb_addf(&sb, "muster_queue_running_gangs{queue=\"%s\"} %d\n",
                   q->spec.meta.name, (int)q->njobs - pending);
        lb = mu_xasprintf("queue=\"%s\"", q->spec.meta.name);
        if (!h)
            h = wait_hist(m, q->spec.meta.name); /* zeros, but a series */
        mu_hist_write(h, "muster_gang_wait_seconds", lb, &sb);
        free(lb);
        for (int d = 0; d < c->rn.n; d++)
            if (d != MU_RES_PODS && mu_res_has(&q->spec.capability, d))
                mu_sb_addf(&sb,
                           "muster_queue_capability{queue=\"%s\",resource="
                           "\"%s\"} %lld\n",
                           q->spec.meta.name, c->rn.name[d],
                           (long long)q->spec.capability.v[d]);
        for (int d = 0; d < c->rn.n; d++) {
            if (d == MU_RES_PODS)
                continue;
            mu_sb_addf(&sb,
                       "muster_queue_allocated{queue=\"%s\",resource=\"%s\"} "
                       "%lld\n", q->spec.meta.name, c->rn.name[d],
                       (long long)q->allocated.v[d]);
            if (q->has_deserved)
                mu_sb_addf(&sb,
                           "muster_queue_deserved{queue=\"%s\",resource="
                           "\"%s\"} %lld\n", q->spec.meta.name,
                           c->rn.name[d], (long long)q->deserved.v[d]);
        }
    }
    pthread_mutex_lock(&m->lock);
    free(m->queue_text);
    m->queue_text = mu_sb_detach(&sb);
    pthread_mutex_unlock(&m->lock);
}
