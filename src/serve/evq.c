#include "serve/evq.h"

#include <time.h>

#include "common/clock.h"
#include "common/mu.h"

void mu_evq_init(struct mu_evq *q)
{
    memset(q, 0, sizeof(*q));
    pthread_mutex_init(&q->lock, NULL);
    mu_cond_init_monotonic(&q->cond);
    pthread_cond_init(&q->room, NULL);
    q->cap = MU_EVQ_CAP;
}

void mu_ev_free(struct mu_ev *ev)
{
    while (ev) {
        struct mu_ev *next = ev->next;

        json_decref(ev->obj);
        free(ev->release);
        free(ev->detail);
        free(ev);
        ev = next;
    }
}

void mu_evq_release(struct mu_evq *q)
{
    mu_ev_free(q->head);
    pthread_cond_destroy(&q->room);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
}

/* Whether ev is queued (see Bounds in evq.h); the caller holds the lock.
 * May wait for room. */
static bool admit(struct mu_evq *q, const struct mu_ev *ev)
{
    switch (ev->src) {
    case MU_SRC_WRITE_DONE:
        if (q->write_done)
            return false;
        q->write_done = true;
        return true;
    case MU_SRC_FILTER_MISS:
        if (q->nmiss >= MU_EVQ_MISS_CAP) {
            q->misses_dropped++;
            return false;
        }
        q->nmiss++;
        return true;
    case MU_SRC_BIND_REPORT:
    case MU_SRC_LEASE:
    case MU_SRC_UNDO:
        return true;
    default:
        while (q->nwatch >= q->cap && !q->closed)
            pthread_cond_wait(&q->room, &q->lock);
        if (q->closed)
            return false;
        q->nwatch++;
        return true;
    }
}

void mu_evq_push(struct mu_evq *q, struct mu_ev *ev)
{
    ev->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->closed || !admit(q, ev)) {
        pthread_mutex_unlock(&q->lock);
        mu_ev_free(ev);
        return;
    }
    if (q->tail)
        q->tail->next = ev;
    else
        q->head = ev;
    q->tail = ev;
    q->n++;
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

struct mu_ev *mu_evq_take(struct mu_evq *q, int64_t deadline_ns)
{
    struct timespec ts = mu_ns_to_timespec(deadline_ns);
    struct mu_ev *all;

    pthread_mutex_lock(&q->lock);
    while (!q->head)
        if (pthread_cond_timedwait(&q->cond, &q->lock, &ts))
            break;
    all = q->head;
    q->head = q->tail = NULL;
    q->n = q->nwatch = q->nmiss = 0;
    q->write_done = false;
    pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->lock);
    return all;
}

void mu_evq_close(struct mu_evq *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->lock);
}
