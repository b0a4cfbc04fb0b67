/*
 * lease.h - leader election on a coordination.k8s.io/v1 Lease, as
 * kube-scheduler does it (client-go's leaderelection, LeaseLock).
 *
 * One thread, with its own client, tries every retry period to acquire the
 * Lease namespace/name, then renews it every retry period while it holds
 * it. Every write is optimistic: a PUT carrying the resourceVersion it
 * read, so of two candidates racing for an expired Lease one gets 409 and
 * stays a follower. A Lease held by another is taken only once its record
 * (holder, renewTime, resourceVersion) has not changed for the lease
 * duration as measured on this machine's monotonic clock from when this
 * candidate first saw it (client-go's observedTime): the holder's own
 * clock and the Lease's timestamps are never compared with ours.
 *
 * Leading, and the promise to stop before the lease can expire: the
 * elector is leading until T + renew deadline, where T is the monotonic
 * instant at which the last successful acquire or renew was sent.
 * mu_lease_leading() compares that bound with the clock at every call,
 * so it turns false at the deadline even if the renew request is still
 * hanging or the thread is starved. Any other candidate first saw that
 * renewal after it was sent, so it waits at least T + lease duration:
 * the gap (lease duration - renew deadline, 5 s by default) is the time
 * this process has to finish writes already on the wire. Once lost,
 * leadership is never taken again by this elector (client-go's process
 * exits; muster serve exits non-zero, serve.c).
 *
 * Threads: mu_lease_start() and mu_lease_stop() on the owner's thread;
 * mu_lease_leading(), mu_lease_lost(), mu_lease_identity() from any
 * thread (atomics, and a string set before the thread starts). The
 * changed hook runs on the elector's thread when leadership is gained or
 * lost and must not block.
 *
 * Errors: mu_lease_start() returns 0 or -errno with err (bad options, no
 * client, no thread). Failures of the API afterwards are the elector's:
 * it logs them through opts.log (one line) and retries.
 *
 * Ownership: the elector copies the strings of its options; the caller's
 * cfg is copied by the client.
 */
#ifndef MU_KUBE_LEASE_H
#define MU_KUBE_LEASE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"

/* kube-scheduler's defaults */
#define MU_LEASE_DURATION_MS 15000
#define MU_LEASE_RENEW_MS 10000
#define MU_LEASE_RETRY_MS 2000
#define MU_LEASE_NAMESPACE "muster-system"
#define MU_LEASE_NAME "muster"

struct mu_lease_opts {
    const char *ns;        /* NULL: MU_LEASE_NAMESPACE */
    const char *name;      /* NULL: MU_LEASE_NAME */
    const char *identity;  /* holderIdentity; NULL: "<hostname>_<pid>" */
    int64_t lease_ms;      /* leaseDurationSeconds (rounded up); 0: default */
    int64_t renew_ms;      /* renew deadline, < lease_ms; 0: default */
    int64_t retry_ms;      /* between tries, < renew_ms; 0: default */
    /* When stopped while leading, give the Lease up (holder "", duration
     * 1 s) so a follower takes over at its next try instead of after the
     * lease duration (client-go's ReleaseOnCancel). */
    bool release_on_stop;
    struct mu_kube_opts kube; /* the elector's client; timeout_ms 0: the
                                 retry period */
    /* Optional: one line about a failed try or a change, elector thread. */
    void (*log)(void *ctx, const char *msg);
    void *log_ctx;
    /* Optional: leadership was gained or lost (see Threads). */
    void (*changed)(void *ctx);
    void *changed_ctx;
};

struct mu_lease;

/* Checks opts (renew < lease, retry < renew), makes the client and starts
 * the elector's thread. Returns 0 and *out, or -errno with err. */
int mu_lease_start(const struct mu_kube_config *cfg,
                   const struct mu_lease_opts *opts, struct mu_lease **out,
                   struct mu_err *err) MU_WARN_UNUSED;
/* Stops leading at once (mu_lease_leading turns false before this
 * returns), gives the Lease up if release_on_stop and still leading, joins
 * the thread, frees everything. NULL is a no-op. */
void mu_lease_stop(struct mu_lease *l);

/* True while this elector holds the Lease with time to spare (see
 * Leading). Any thread; never blocks. */
bool mu_lease_leading(const struct mu_lease *l);
/* True once leadership was held and then lost (renew deadline passed or
 * the Lease was taken). Any thread. */
bool mu_lease_lost(const struct mu_lease *l);
/* The holderIdentity this elector writes (owned by it). */
const char *mu_lease_identity(const struct mu_lease *l);

/*
 * The pure part of a try, exposed for tests. lease is the Lease as read
 * (NULL: it does not exist); observed/observed_ns are the record last seen
 * and when (monotonic ns; the caller keeps them, updated here when the
 * record changed). Returns the object to send: a new Lease to POST
 * (*create true) or the Lease to PUT; NULL when another holds it and its
 * record is younger than lease_ms as observed (follow).
 * now_wall is the wall clock for acquireTime and renewTime.
 */
json_t *mu_lease_next(const json_t *lease, const char *ns, const char *name,
                      const char *identity, int64_t lease_ms,
                      int64_t now_ns, time_t now_wall, long now_us,
                      char **observed, int64_t *observed_ns, bool *create);

#endif
