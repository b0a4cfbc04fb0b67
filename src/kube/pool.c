/* A pool of Kubernetes clients sharing one rate limit (pool.h). */
#include "kube/pool.h"

#include <pthread.h>

#include "common/mu.h"

struct mu_kube_pool {
    pthread_mutex_t lock;
    struct mu_kube_config cfg;
    struct mu_kube_opts opts; /* shared_limiter points at lim */
    char *user_agent;
    struct mu_kube_shared_limiter lim;
    struct mu_kube **idle;
    size_t nidle, max_idle;
};

int mu_kube_pool_new(const struct mu_kube_config *cfg,
                     const struct mu_kube_opts *opts, size_t max_idle,
                     struct mu_kube_pool **out, struct mu_err *err)
{
    struct mu_kube_pool *p;

    *out = NULL;
    if (!cfg->server || !*cfg->server)
        return mu_err_set(err, -EINVAL, "kube client pool: no server URL");
    p = mu_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    if (opts)
        p->opts = *opts;
    p->user_agent = mu_xstrdup_or_null(p->opts.user_agent);
    p->opts.user_agent = p->user_agent;
    mu_kube_config_copy(&p->cfg, cfg);
    mu_kube_shared_limiter_init(&p->lim, p->opts.qps, p->opts.burst,
                                mu_kube_clock_now(&p->opts.clock));
    p->opts.shared_limiter = &p->lim;
    p->max_idle = max_idle ? max_idle : MU_KUBE_POOL_MAX_IDLE;
    p->idle = mu_xcalloc(p->max_idle, sizeof(*p->idle));
    *out = p;
    return 0;
}

struct mu_kube *mu_kube_pool_get(struct mu_kube_pool *p, struct mu_err *err)
{
    struct mu_kube *k = NULL;

    pthread_mutex_lock(&p->lock);
    if (p->nidle)
        k = p->idle[--p->nidle];
    pthread_mutex_unlock(&p->lock);
    if (!k && mu_kube_new(&p->cfg, &p->opts, &k, err) < 0)
        return NULL;
    mu_kube_set_stop(k, NULL);
    return k;
}

void mu_kube_pool_limit_stats(struct mu_kube_pool *p, uint64_t *delayed,
                              int64_t *delayed_ns)
{
    mu_kube_shared_limiter_stats(&p->lim, delayed, delayed_ns);
}

void mu_kube_pool_put(struct mu_kube_pool *p, struct mu_kube *k)
{
    if (!k)
        return;
    mu_kube_set_stop(k, NULL);
    pthread_mutex_lock(&p->lock);
    if (p->nidle < p->max_idle) {
        p->idle[p->nidle++] = k;
        k = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    mu_kube_free(k);
}

void mu_kube_pool_free(struct mu_kube_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nidle; i++)
        mu_kube_free(p->idle[i]);
    free(p->idle);
    mu_kube_config_release(&p->cfg);
    free(p->user_agent);
    mu_kube_shared_limiter_release(&p->lim);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
