/*
 * evq.h - the queue between watch threads (and the bind barrier) and the
 * scheduler thread. Producers push; the scheduler thread takes everything
 * queued at once. Unbounded on purpose: a watch must never block on the
 * scheduler (it would stall its stream), and every item is small next to
 * the cache it updates.
 */
#ifndef MU_SERVE_EVQ_H
#define MU_SERVE_EVQ_H

#include "common/clock.h"
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/watch.h"

enum mu_src {
    MU_SRC_NODE,
    MU_SRC_POD,
    MU_SRC_PODGROUP,
    MU_SRC_QUEUE,
    MU_SRC_PRIORITYCLASS,
    MU_SRC_JOB,
    MU_SRC_COMMAND,
    MU_SRC__COUNT,
    MU_SRC_BIND_REPORT = MU_SRC__COUNT, /* from the barrier */
    MU_SRC_WRITE_DONE,                  /* writes completed (writer.h) */
    MU_SRC_FILTER_MISS, /* /filter missed a reserved node (extender.h) */
};

struct mu_ev {
    enum mu_src src;
    enum mu_watch_type type; /* for watch sources */
    json_t *obj;             /* owned; NULL for LIST_BEGIN/END */
    char *release;           /* bind report: batch id (owned) */
    bool ok;                 /* bind report */
    char *detail;            /* bind report (owned); filter miss: pod uid */
    struct mu_ev *next;
};

struct mu_evq {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct mu_ev *head, *tail;
    size_t n;
};

void mu_evq_init(struct mu_evq *q);
/* Frees whatever is still queued. */
void mu_evq_release(struct mu_evq *q);
/* Takes ownership of ev (allocated with mu_xmalloc). Any thread. */
void mu_evq_push(struct mu_evq *q, struct mu_ev *ev);
/* Waits until something is queued or until deadline_ns (CLOCK_MONOTONIC),
 * then returns the whole list (owned, oldest first) or NULL. */
struct mu_ev *mu_evq_take(struct mu_evq *q, int64_t deadline_ns);
void mu_ev_free(struct mu_ev *ev);

#endif
