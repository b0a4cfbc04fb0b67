/*
 * serve.h - `muster serve`: watches the cluster, runs the scheduling cycle,
 * releases whole gangs, and answers kube-scheduler as its extender.
 *
 * Threads: one watch thread per resource (nodes, pods, podgroups, queues,
 * priorityclasses, vcjobs) pushes parsed objects into an event queue; the
 * scheduler thread (the caller of mu_serve_run) owns the cluster, applies
 * events, runs a cycle on every burst of changes (coalesced) and on a
 * periodic tick, carries out the decisions through its own API client, and
 * publishes the view the extender's HTTP threads read.
 */
#ifndef MU_SERVE_SERVE_H
#define MU_SERVE_SERVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/mu.h"

struct mu_serve_opts {
    const char *kubeconfig;   /* NULL: $KUBECONFIG, else in-cluster */
    const char *listen;       /* extender address, "127.0.0.1:8888" */
    const char *config_path;  /* scheduler configuration; NULL: built in */
    int64_t period_ms;        /* cycle tick (1000) */
    int64_t coalesce_ms;      /* wait after the first event of a burst (20),
                                 or as long as the last cycle took when
                                 that is longer (serve.c) */
    int64_t bind_timeout_ms;  /* a release batch must reach /bind (20000) */
    /* How a gang of pods that ask nothing of kube-scheduler beyond their
     * node (mu_enforcer_plain) is bound. MU_GANG_BIND_RELEASE
     * (--gang-bind release, the default): muster binds it when it releases
     * it, when muster did not make its pods (no gate to lift), without
     * waking them (extender/relbind.h); else as with FIRST.
     * MU_GANG_BIND_FIRST (--gang-bind first): it is bound whole when
     * kube-scheduler brings its first member to /bind
     * (extender/internal.h, mu_barrier_bind_gang). MU_GANG_BIND_ALL
     * (--gang-bind all): every member waits in /bind until kube-scheduler
     * has brought each of them. */
    enum mu_gang_bind {
        MU_GANG_BIND_RELEASE,
        MU_GANG_BIND_FIRST,
        MU_GANG_BIND_ALL,
    } gang_bind;
    /* true (--initial-list watch, the default): the caches take their
     * initial state by a WATCH with sendInitialEvents (kube/watch.h,
     * stream_list; a server that refuses or ignores it is listed in pages);
     * false (--initial-list pages): LIST pages. The stream was ready 1-2 s
     * sooner at 5,000 nodes / 40,000 pods, at a lower peak RSS
     * (bench/RESULTS.md) */
    bool watch_list;
    /* true (--kube-api-content-type application/vnd.kubernetes.protobuf,
     * the default, kube-scheduler's flag and default): the pods' WATCHes
     * ask for protobuf (kube/watchpb.h, api/podpb.h), which the apiserver
     * encodes several times faster than JSON; false
     * (application/json): JSON. Every other kind is JSON either way. */
    bool protobuf;
    double qps;               /* API client limits (500 / 1000) */
    int burst;
    /* Leader election (kube/lease.h): off unless leader_elect; 0 and
     * NULL take its defaults. */
    bool leader_elect;
    int64_t lease_ms, renew_ms, retry_ms;
    const char *lease_ns, *lease_name, *lease_identity;
    const atomic_bool *stop;  /* set to stop; required */
    FILE *log;                /* one line per action (stderr) */
    /* TLS on listen (all three, or none: then listen must be loopback);
     * the files are re-read when they change. metrics_listen: /healthz
     * /readyz /metrics there instead of on listen. All optional. */
    const char *tls_cert_file;
    const char *tls_key_file;
    const char *client_ca_file;
    const char *metrics_listen;
};

/* Fills the defaults above. */
void mu_serve_opts_init(struct mu_serve_opts *o);

/*
 * Runs until *stop. Returns 0, or -errno with err when it cannot start
 * (bad kubeconfig or configuration, address in use), or -ENOLCK once it
 * has lost the Lease it led on (leader_elect): it stopped writing at the
 * renew deadline, and the process should exit non-zero so that it comes
 * back as a follower with fresh state (client-go's rule; see serve_int.h,
 * Leadership).
 */
int mu_serve_run(const struct mu_serve_opts *o, struct mu_err *err);

#endif
