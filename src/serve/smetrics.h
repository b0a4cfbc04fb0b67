/*
 * smetrics.h - the scheduler side's figures for /metrics, which the
 * extender's HTTP server appends after its own (extender/http.h, the
 * metrics callback): cycles, gang waits and queue shares made on the
 * scheduler thread, and the enforcer's, writer's and release binder's
 * counters read at scrape time.
 *
 * Threads: mu_smetrics_cycle, _skipped and _queues run on the scheduler
 * thread; mu_smetrics_text on any HTTP thread (the per-queue text is
 * swapped under lock, the rest are atomics or the sources' own stats).
 *
 * Ownership: struct mu_smetrics is the caller's; enf, writer, relbind and
 * bind_pool are borrowed, set before the HTTP server starts, and outlive every
 * scrape. The gang-wait histograms (one per queue seen) live as long as
 * the struct, so a queue's series never go back to zero.
 */
#ifndef MU_SERVE_SMETRICS_H
#define MU_SERVE_SMETRICS_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/hist.h"
#include "common/map.h"
#include "extender/relbind.h"
#include "kube/pool.h"
#include "kube/writer.h"
#include "sched/cluster.h"
#include "serve/enforce.h"

struct mu_smetrics {
    const struct mu_enforcer *enf; /* releases, evictions by action */
    struct mu_writer *writer;      /* NULL: none */
    struct mu_relbind *relbind;    /* NULL unless --gang-bind release */
    struct mu_kube_pool *bind_pool; /* the binds' clients; NULL: none */
    _Atomic int64_t last_cycle_ns;
    atomic_ullong cycles;
    atomic_ullong cycles_skipped;  /* ticks that found nothing new */
    struct mu_hist cycle_hist;     /* cycle durations */
    pthread_mutex_t lock;
    char *queue_text;              /* per-queue figures, rebuilt per cycle */
    struct mu_map gang_wait;       /* queue name -> struct mu_hist *: waits
                                      from creation to minMember bound
                                      (scheduler thread only) */
};

void mu_smetrics_init(struct mu_smetrics *m, const struct mu_enforcer *enf);
void mu_smetrics_release(struct mu_smetrics *m);

/* A cycle that took ns; a tick that skipped its cycle. */
void mu_smetrics_cycle(struct mu_smetrics *m, int64_t ns);
void mu_smetrics_skipped(struct mu_smetrics *m);
/* After a cycle: observes, once per gang, the wait from its PodGroup's
 * creation to its minMember bound (gangs this process saw waiting: one
 * running when muster started has no known wait), and rebuilds the
 * per-queue text (pending and running gangs, allocated, deserved and
 * capability per resource, gang waits). */
void mu_smetrics_queues(struct mu_smetrics *m, struct mu_cluster *c);
/* The whole text (a new string, the caller frees it); ctx is the struct
 * (the HTTP server's metrics callback). */
char *mu_smetrics_text(void *ctx);

#endif
