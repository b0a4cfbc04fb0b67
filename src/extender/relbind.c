/*
 * relbind.c - binds a gang at its release (relbind.h).
 */
#include "extender/relbind.h"
#include "extender/internal.h"

#include "common/clock.h"

#include <pthread.h>
#include <time.h>

struct gang {
    char *release;
    struct mu_barrier_member *m;
    int n;
    struct gang *next;
};

struct mu_relbind {
    struct mu_barrier *b;
    struct mu_view_slot *views;
    pthread_mutex_t lock;
    pthread_cond_t cond;  /* a gang queued, or stop */
    pthread_cond_t stopc; /* stop (what a retry's pause waits on) */
    struct gang *head, *tail;
    int queued;
    long pods; /* members of the gangs queued or being bound */
    bool stop;
    pthread_t th[MU_RELBIND_THREADS];
    int nth;
    struct mu_relbind_stats stats;
};

static void gang_free(struct gang *g)
{
    if (!g)
        return;
    mu_barrier_members_free(g->m, g->n);
    free(g->release);
    free(g);
}

enum hold {
    HELD,  /* every member in the view, plain, on its node, this release */
    GONE,  /* a member's release is another one now, or it is gone */
    UNFIT, /* the release holds, but a member is no longer plain there */
};

/* What the published view says of g now; why names an unfit member. */
static enum hold held(struct mu_relbind *rb, const struct gang *g,
                      char *why, size_t len)
{
    struct mu_view *v = mu_view_get(rb->views);
    enum hold h = v ? HELD : GONE;

    for (int i = 0; h == HELD && i < g->n; i++) {
        const struct mu_view_pod *p = mu_view_pod(v, g->m[i].uid);

        if (!p || !p->release || strcmp(p->release, g->release))
            h = GONE;
        else if (!p->plain || !p->node || strcmp(p->node, g->m[i].node)) {
            h = UNFIT;
            snprintf(why, len,
                     "not bound at its release: %s/%s is no longer "
                     "bindable by muster on %s",
                     g->m[i].ns, g->m[i].name, g->m[i].node);
        }
    }
    if (v)
        mu_view_put(v);
    return h;
}

/* Waits ms, or less when stopping (lock not held). */
static void pause_ms(struct mu_relbind *rb, int64_t ms)
{
    struct timespec ts = mu_ns_to_timespec((mu_now_ms() + ms) * 1000000);

    pthread_mutex_lock(&rb->lock);
    if (!rb->stop)
        pthread_cond_timedwait(&rb->stopc, &rb->lock, &ts);
    pthread_mutex_unlock(&rb->lock);
}

static bool stopping(struct mu_relbind *rb)
{
    bool s;

    pthread_mutex_lock(&rb->lock);
    s = rb->stop;
    pthread_mutex_unlock(&rb->lock);
    return s;
}

static void bind_gang(struct mu_relbind *rb, const struct gang *g)
{
    char why[512];
    struct mu_err err;
    int rc;

    for (;;) {
        if (stopping(rb))
            return;
        switch (held(rb, g, why, sizeof(why))) {
        case GONE:
            atomic_fetch_add(&rb->stats.stale, 1);
            return;
        case UNFIT: /* the scheduler thread plans it again */
            mu_barrier_report(rb->b, g->release, false, why);
            atomic_fetch_add(&rb->stats.failed, 1);
            return;
        case HELD:
            break;
        }
        rc = mu_barrier_bind_gang(rb->b, g->release, g->m, g->n, NULL,
                                  NULL, &err);
        if (rc == -ENOSPC) { /* every gang slot taken: nothing made */
            pause_ms(rb, MU_RELBIND_RETRY_MS);
            continue;
        }
        /* -EALREADY: kube-scheduler brought a member to /bind first */
        atomic_fetch_add(rc == -EALREADY ? &rb->stats.stale
                         : rc            ? &rb->stats.failed
                                         : &rb->stats.bound,
                         1);
        return;
    }
}

static void *worker(void *arg)
{
    struct mu_relbind *rb = arg;

    pthread_mutex_lock(&rb->lock);
    for (;;) {
        struct gang *g;
        int n;

        while (!rb->stop && !rb->head)
            pthread_cond_wait(&rb->cond, &rb->lock);
        if (rb->stop)
            break;
        g = rb->head;
        rb->head = g->next;
        if (!rb->head)
            rb->tail = NULL;
        rb->queued--;
        pthread_mutex_unlock(&rb->lock);
        bind_gang(rb, g);
        n = g->n;
        gang_free(g);
        pthread_mutex_lock(&rb->lock);
        rb->pods -= n;
    }
    pthread_mutex_unlock(&rb->lock);
    return NULL;
}

int mu_relbind_new(struct mu_barrier *b, struct mu_view_slot *views,
                   struct mu_relbind **out, struct mu_err *err)
{
    struct mu_relbind *rb = mu_xcalloc(1, sizeof(*rb));
    int r = 0;

    *out = NULL;
    rb->b = b;
    rb->views = views;
    pthread_mutex_init(&rb->lock, NULL);
    mu_cond_init_monotonic(&rb->cond);
    mu_cond_init_monotonic(&rb->stopc);
    while (rb->nth < MU_RELBIND_THREADS &&
           !(r = pthread_create(&rb->th[rb->nth], NULL, worker, rb)))
        rb->nth++;
    if (!rb->nth) {
        mu_relbind_free(rb);
        return mu_err_set(err, -r, "release binder: no thread: %s",
                          strerror(r));
    }
    *out = rb;
    return 0;
}

void mu_relbind_free(struct mu_relbind *rb)
{
    struct gang *g;

    if (!rb)
        return;
    pthread_mutex_lock(&rb->lock);
    rb->stop = true;
    pthread_cond_broadcast(&rb->cond);
    pthread_cond_broadcast(&rb->stopc);
    pthread_mutex_unlock(&rb->lock);
    for (int i = 0; i < rb->nth; i++)
        pthread_join(rb->th[i], NULL);
    while ((g = rb->head)) {
        rb->head = g->next;
        gang_free(g);
    }
    pthread_cond_destroy(&rb->cond);
    pthread_cond_destroy(&rb->stopc);
    pthread_mutex_destroy(&rb->lock);
    free(rb);
}

int mu_relbind_submit(struct mu_relbind *rb, const char *release,
                      const struct mu_barrier_member *m, int n)
{
    struct gang *g;

    if (!release || n < 1)
        return -EINVAL;
    if (n > MU_RELBIND_MEMBERS_MAX) {
        atomic_fetch_add(&rb->stats.refused, 1);
        return -E2BIG;
    }
    for (int i = 0; i < n; i++)
        if (!m[i].ns || !m[i].name || !m[i].uid || !m[i].node)
            return -EINVAL;
    g = mu_xcalloc(1, sizeof(*g));
    g->release = mu_xstrdup(release);
    g->n = n;
    g->m = mu_xcalloc((size_t)n, sizeof(*g->m));
    for (int i = 0; i < n; i++) {
        g->m[i].ns = mu_xstrdup(m[i].ns);
        g->m[i].name = mu_xstrdup(m[i].name);
        g->m[i].uid = mu_xstrdup(m[i].uid);
        g->m[i].node = mu_xstrdup(m[i].node);
        g->m[i].controlled = m[i].controlled;
    }
    pthread_mutex_lock(&rb->lock);
    if (rb->queued >= MU_RELBIND_QUEUE_MAX || rb->stop) {
        pthread_mutex_unlock(&rb->lock);
        atomic_fetch_add(&rb->stats.refused, 1);
        gang_free(g);
        return -EAGAIN;
    }
    if (rb->tail)
        rb->tail->next = g;
    else
        rb->head = g;
    rb->tail = g;
    rb->queued++;
    rb->pods += n;
    pthread_cond_signal(&rb->cond);
    pthread_mutex_unlock(&rb->lock);
    atomic_fetch_add(&rb->stats.submitted, 1);
    return 0;
}

long mu_relbind_room(struct mu_relbind *rb)
{
    long room;

    pthread_mutex_lock(&rb->lock);
    room = rb->queued >= MU_RELBIND_QUEUE_MAX || rb->stop
               ? 0
               : MU_MAX(MU_RELBIND_PODS_AHEAD - rb->pods, 0L);
    pthread_mutex_unlock(&rb->lock);
    return room;
}

long mu_relbind_pods(struct mu_relbind *rb)
{
    long n;

    pthread_mutex_lock(&rb->lock);
    n = rb->pods;
    pthread_mutex_unlock(&rb->lock);
    return n;
}

const struct mu_relbind_stats *mu_relbind_stats(const struct mu_relbind *rb)
{
    return &rb->stats;
}
