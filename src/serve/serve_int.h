/*
 * serve_int.h - the parts of `muster serve` shared by its files: the
 * daemon's state (owned by the scheduler thread) and the functions that
 * apply watch events and carry out a cycle's decisions.
 */
#ifndef MU_SERVE_SERVE_INT_H
#define MU_SERVE_SERVE_INT_H

#include "common/map.h"
#include "ctrl/ctl.h"
#include "ctrl/pgctl.h"
#include "ctrl/queuectl.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/watch.h"
#include "sched/cluster.h"
#include "sched/conf.h"
#include "sched/cycle.h"
#include "serve/evq.h"
#include "serve/jobs.h"
#include "serve/serve.h"
#include "kube/writer.h"
#include "extender/extender.h"
#include "extender/view.h"

/* A pod muster has released and is waiting to see bound. */
struct mu_resv {
    char *key;      /* "ns/name" */
    char *uid;
    char *node;
    char *release;  /* batch id */
    int batch;      /* members of the batch */
    bool pinned;    /* released from muster's gate with a node affinity */
    int wakes;      /* wake-ups sent again after /filter misses */
    int64_t since_ns;
};

struct mu_informer {
    struct mu_serve *sv;
    enum mu_src src;
    struct mu_watch *w;
    pthread_t thread;
    bool started;
};

struct mu_serve {
    const struct mu_serve_opts *o;
    struct mu_kube_config cfg;
    struct mu_kube *kube;          /* the scheduler thread's client */
    struct mu_writer *writer;      /* its asynchronous writes (writer.h) */
    struct mu_kube_pool *bind_pool; /* clients of the /bind threads */
    struct mu_conf conf;
    struct mu_cluster cluster;
    struct mu_evq q;
    struct mu_informer inf[MU_SRC__COUNT];
    bool synced[MU_SRC__COUNT];
    struct mu_map listed[MU_SRC__COUNT]; /* keys seen in the current LIST */
    bool listing[MU_SRC__COUNT];
    struct mu_map resv;            /* pod key -> struct mu_resv */
    struct mu_map written;         /* "pg/<key>" -> status text (status.c),
                                      "partial/<key>" (enforce.c); values
                                      freed with free() */
    struct mu_map announced;       /* uids of waiting pods nudged once */
    struct mu_ctl ctl;             /* the controllers' context */
    struct mu_pgctl *pgctl;        /* the PodGroup controller */
    struct mu_queuectl *qc;        /* the queue controller, Commands */
    struct mu_jobctl *jobctl;      /* the vcjob controller (jobs.h) */
    struct mu_view_slot views;
    struct mu_barrier *barrier;
    struct mu_ext_server *http;
    uint64_t view_gen;
    uint64_t release_seq;
    /* figures for /metrics */
    _Atomic int64_t last_cycle_ns;
    atomic_ullong cycles, evictions, releases;
    pthread_mutex_t metrics_lock;
    char *metrics_text;            /* per-queue figures, rebuilt per cycle */
};

void mu_serve_log(struct mu_serve *sv, const char *fmt, ...) MU_PRINTF(2, 3);

/* Applies one watch event to the cluster (apply.c). Returns true when
 * scheduling may have changed. */
bool mu_serve_apply(struct mu_serve *sv, struct mu_ev *ev);
/* After a relist: drops objects of src that the list no longer has. */
void mu_serve_list_end(struct mu_serve *sv, enum mu_src src);

/* The JSON patch (RFC 6902) that releases a gated pod to node: drops
 * muster's gate (keeping others) and adds a required node affinity term on
 * metadata.name, whatever affinity the pod already has (enforce.c). */
json_t *mu_serve_release_patch(const json_t *pod, const char *node);
/* The strategic merge patch that does the same without reading the pod,
 * for a gated pod with no required node affinity term; uid (may be NULL)
 * is sent as a precondition (enforce.c). */
json_t *mu_serve_release_smp(const char *uid, const char *node);
/*
 * The wake-up of a reserved pod that muster did not gate (other operators'
 * pods carrying the group annotation): a merge patch for pods/<name>/status
 * that sets status.nominatedNodeName to node, so kube-scheduler tries that
 * one node first (PreferNominatedNode) instead of a sample of all, and the
 * annotations muster.io/reserved-node (node) and muster.io/wake (wake, a
 * value new at every wake-up), because kube-scheduler requeues a rejected
 * pod on a change of its metadata or spec, never of its status alone.
 * pods/status accepts metadata changes. uid (may be NULL) is sent as a
 * precondition. Binding clears the nomination (kube-apiserver v1.35,
 * ClearingNominatedNodeNameAfterBinding); a failed attempt makes
 * kube-scheduler clear it too.
 */
json_t *mu_serve_wake_patch(const char *uid, const char *node,
                            const char *wake);
/* The release of one pod as the writer sends it (enforce.c; a writer run
 * function, exposed for tests). gated: muster's gate goes and the pod is
 * pinned to node, with w->body (mu_serve_release_smp) when smp, else, or
 * when the server refuses that as invalid, with a GET and a JSON patch
 * guarded by the uid; not gated: w->body (a merge patch) as is. */
struct mu_release {
    struct mu_serve *sv; /* for the done callback (scheduler thread) */
    char *key, *release, *node, *uid;
    bool gated; /* muster's gate: ungate and pin; else wake */
    bool smp;   /* gated, and no required node affinity term seen */
};
int mu_serve_release_run(struct mu_kube *k, const struct mu_write *w,
                         void *ctx, struct mu_err *err);

/* POSTs obj to the collection path on the scheduler thread's client; an
 * object that already exists counts as made. 0 or -errno with err. For
 * the vcjob controller until it moves (vcjob_glue.c). */
int mu_serve_create(struct mu_serve *sv, const char *path, const json_t *obj,
                    struct mu_err *err);
/* Posts an event on an object; failures are logged (status.c). */
void mu_serve_post_event(struct mu_serve *sv, const char *api,
                         const char *kind, const char *ns, const char *name,
                         const char *uid, const char *type, const char *reason,
                         const char *msg);
/* Writes PodGroup status that changed since the last write (status.c). */
void mu_serve_write_status(struct mu_serve *sv);

/* Carries out a cycle's decisions and writes status (enforce.c). */
void mu_serve_enforce(struct mu_serve *sv, const struct mu_cycle_out *out);
/* A bind batch finished (from the barrier, via the queue). */
void mu_serve_bind_report(struct mu_serve *sv, const char *release, bool ok,
                          const char *detail);
/* Releases whose pods never reached /bind in time are recovered. */
void mu_serve_expire(struct mu_serve *sv);
/* Takes down gangs that ran below minMember for too long (enforce.c). */
void mu_serve_partial(struct mu_serve *sv);
/* /filter saw pod uid without its reserved node among NodeNames: a pod
 * muster did not gate is woken again (mu_serve_wake_patch), at most a few
 * times per reservation (enforce.c). */
void mu_serve_filter_miss(struct mu_serve *sv, const char *uid);
/* Nudges waiting pods once so their events carry the gang's reason. */
void mu_serve_announce(struct mu_serve *sv);
/* Builds and publishes the extender's view. */
void mu_serve_publish(struct mu_serve *sv);
/* Carries out a job action from a Command on vcjob ns/name (jobs.c). */
void mu_serve_job_command(struct mu_serve *sv, const char *ns,
                          const char *name, const char *action);

#endif
