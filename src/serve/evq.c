#include "serve/evq.h"

#include <time.h>

#include "common/clock.h"
#include "common/mu.h"

void mu_evq_init(struct mu_evq *q)
{
    pthread_mutex_init(&q->lock, NULL);
    mu_cond_init_monotonic(&q->cond);
    q->head = q->tail = NULL;
    q->n = 0;
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
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
}

void mu_evq_push(struct mu_evq *q, struct mu_ev *ev)
{
    ev->next = NULL;
    pthread_mutex_lock(&q->lock);
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
    q->n = 0;
    pthread_mutex_unlock(&q->lock);
    return all;
}
