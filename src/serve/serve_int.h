/*
 * serve_int.h - the daemon of `muster serve` as serve.c wires it: what it
 * owns (clients, the cache, the event queue, the informers, the loop's
 * parts and the controllers) and who each part borrows what from. The
 * loop's parts each have their own header and see only their own context:
 * apply.h (watch events into the cache), enforce.h (a cycle's decisions,
 * the reservation ledger), remake.h (pods pinned where they cannot run),
 * status.h (PodGroup status); the controllers
 * live in src/ctrl with a struct mu_ctl. Everything here belongs to the
 * scheduler thread, except the figures for /metrics (smetrics.h: atomics
 * and a lock) and what the informers and the HTTP threads are handed.
 *
 * Leadership (--leader-elect; kube/lease.h): only the leader writes. The
 * Lease runs on its own thread; the gates, from the loop outwards:
 *   - the loop (serve.c) runs nothing that writes while not leading: no
 *     cycle (so no release, eviction, PodGroup status), no controller
 *     sync, no expiry, nudge or wake-up; Commands seen meanwhile are kept
 *     (pending_cmds) and handed to the queue controller on taking over.
 *     It keeps applying events: the caches stay warm.
 *   - the extender (http.h leading hook): /readyz and /bind answer 503,
 *     so a Service sends kube-scheduler to the leader only;
 *   - the /bind threads' bind and undo (bind_fn, unbind_fn) refuse;
 *   - the writer's gate (writer.h) refuses any write, queued or new: the
 *     last guard, whatever the loop decided a moment before.
 * All of them ask mu_lease_leading(), which turns false at the renew
 * deadline on its own, before the Lease can expire for anyone else.
 * Taking over: on the first pass of the loop that leads with synced
 * caches, mu_enforcer_adopt() reads the releases another leader left
 * unfinished from the pods, then the controllers and the cycle run.
 * Losing it: the loop sees mu_lease_lost() and returns -ENOLCK, and
 * muster exits non-zero (client-go's rule): the ledger, the controllers'
 * memory and the barrier's batches belong to a leadership that is over,
 * and a fresh follower rebuilds them from the API.
 * */
#ifndef MU_SERVE_SERVE_INT_H
#define MU_SERVE_SERVE_INT_H

#include <stdatomic.h>

#include "common/hist.h"
#include "common/map.h"
#include "ctrl/ctl.h"
#include "ctrl/jobctl.h"
#include "ctrl/pgctl.h"
#include "ctrl/queuectl.h"
#include "extender/extender.h"
#include "extender/http.h"
#include "extender/relbind.h"
#include "extender/view.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/lease.h"
#include "kube/pool.h"
#include "kube/watch.h"
#include "kube/writer.h"
#include "sched/cluster.h"
#include "sched/topology.h"
#include "serve/hnstatus.h"
#include "sched/conf.h"
#include "sched/cycle.h"
#include "sched/report.h"
#include "serve/apply.h"
#include "serve/enforce.h"
#include "serve/remake.h"
#include "serve/evq.h"
#include "serve/serve.h"
#include "serve/smetrics.h"
#include "serve/status.h"
#include "serve/undo.h"

/* Idle API clients the /bind pool keeps (kube/pool.h): a gang bound at its
 * first member binds on up to 8 threads, several gangs at once; fewer idle
 * clients would close and reopen apiserver connections (a TLS handshake
 * each) between gangs. */
#define MU_SERVE_BIND_IDLE 64u

struct mu_informer {
    struct mu_serve *sv;
    enum mu_src src;
    struct mu_watch *w;
    pthread_t thread;
    bool started;
    atomic_bool missing;     /* an optional API answered 404 (serve.c) */
};

struct mu_serve {
    const struct mu_serve_opts *o;
    struct mu_kube_config cfg;
    struct mu_writer *writer;      /* every API write of the scheduler
                                      thread (writer.h) */
    struct mu_kube_pool *bind_pool; /* clients of the /bind threads and
                                       the barrier's helpers: at most
                                       MU_SERVE_BIND_IDLE kept idle */
    struct mu_undo undo;       /* the barrier's undos (bind_pool, q) */
    struct mu_conf conf;
    struct mu_cluster cluster;     /* the cache */
    struct mu_topo topo;           /* its HyperNodes (cluster.topo) */
    uint64_t topo_logged;          /* topo.warn_sig last logged */
    struct mu_evq q;
    struct mu_informer inf[MU_SRC__COUNT];
    struct mu_ctl ctl;             /* the context of everything below */
    struct mu_apply apply;         /* events into the cache (apply.h) */
    struct mu_enforcer enf;        /* decisions, the ledger (enforce.h) */
    struct mu_remaker remake;      /* pods pinned where they cannot run
                                      (remake.h) */
    struct mu_status status;       /* PodGroup status (status.h) */
    struct mu_hnstatus hnstatus;   /* HyperNode nodeCount (hnstatus.h) */
    struct mu_pgctl *pgctl;        /* the PodGroup controller */
    struct mu_queuectl *qc;        /* the queue controller, Commands */
    struct mu_jobctl *jobctl;      /* the vcjob controller (jobctl.h) */
    struct mu_view_slot views;
    struct mu_barrier *barrier;
    struct mu_relbind *relbind;    /* NULL unless --gang-bind release */
    uint64_t relbind_refusals;     /* gangs it refused (logged rarely) */
    struct mu_ext_server *http;
    uint64_t view_gen;
    struct mu_view_cache vcache; /* each pod's view entry, kept from one
                                    publication to the next (view.h) */
    struct mu_lease *lease;        /* NULL: no leader election */
    bool leads;                    /* the loop ran as leader (adopted) */
    struct mu_map pending_cmds;    /* follower: Command key -> json_t * */
    struct mu_smetrics metrics;    /* figures for /metrics */
    /* The last cycle decided nothing (no bind, eviction, phase or
     * condition change). With no event since and an empty ledger, the
     * next tick's cycle would decide the same nothing on the same input
     * (the cycle reads the clock only to stamp what changes), so the tick
     * skips it (mu_serve_run). */
    bool settled;
    int64_t wake_ns;               /* ... until this time: the last cycle's
                                      wake_ms (the clock alone turns an
                                      answer then), INT64_MAX none */
    /* /debug (sched/report.h): the snapshot, built on demand. A request
     * that finds one younger than MU_SERVE_REPORT_MS is answered from it;
     * one younger than MU_SERVE_REPORT_STALE_MS too, unless it asks for
     * ?fresh (the CLI does), while it raises report_wanted; otherwise it
     * raises report_wanted and is answered 503 "try again". The scheduler
     * thread builds a snapshot after its next cycle (or tick, as a
     * follower) when report_wanted is up. The HTTP threads take a
     * reference under report_lock and only read it. Nobody asking costs
     * nothing (a build is about as long as a cycle: bench/bench_cycle
     * --report). */
    pthread_mutex_t report_lock;
    json_t *report;
    int64_t report_ns;             /* when it was built (under report_lock) */
    atomic_bool report_wanted;
};

/* Oldest /debug snapshot answered as fresh, and at all (the /ui page,
 * refreshing itself, gets the last one while the next is made). */
#define MU_SERVE_REPORT_MS 2000
#define MU_SERVE_REPORT_STALE_MS 30000
/* Until every cache has listed, the scheduler thread waits for events at
 * most this long at a time (the stop flag and the Lease are looked at in
 * between; nothing else runs then). */
#define MU_SERVE_UNSYNCED_WAIT_NS 100000000LL

#endif
