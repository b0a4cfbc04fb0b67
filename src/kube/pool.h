/*
 * pool.h - a pool of Kubernetes clients (client.h) sharing one rate limit.
 *
 * For threads that come and go and write now and then (the extender's
 * /bind threads live as long as kube-scheduler's connections): a thread
 * takes a client for a call or a few and puts it back, so connections and
 * TLS sessions outlive the threads, and the number of clients is bounded
 * by how many threads use one at once, not by how many threads ever
 * existed. Every client of the pool is made with the pool's options and
 * shares one rate limit (qps/burst of those options, one
 * struct mu_kube_shared_limiter owned by the pool).
 *
 * Built on the client: the pool calls mu_kube_new/free/set_stop; the
 * client knows nothing of the pool.
 *
 * Threads: get and put are thread-safe (one mutex, held only to take or
 * return an idle client, never across a request or mu_kube_new). A client
 * taken is used by that thread only until it is put back; the hand-over
 * through the pool's mutex is what makes that safe (client.h, Threads).
 * new and free are called once, by the owner, when no client is out.
 *
 * Bounds: at most max_idle (MU_KUBE_POOL_MAX_IDLE by default) idle clients
 * are kept; a client put back when that many are idle is freed (its
 * connections closed). Clients taken at once are not capped by the pool:
 * each get with no idle client makes a new one.
 *
 * Errors: 0 or a negative errno with err, as in client.h.
 */
#ifndef MU_KUBE_POOL_H
#define MU_KUBE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"
#include "kube/caps.h"
#include "kube/client.h"
#include "kube/config.h"

struct mu_kube_pool;

/* Creates an empty pool (clients are made on demand) for cfg (copied).
 * max_idle: clients kept for reuse (0: MU_KUBE_POOL_MAX_IDLE). opts may be
 * NULL (no rate limit); it is copied, and its shared_limiter is replaced
 * by the pool's own. -EINVAL (no server URL) with err. */
int mu_kube_pool_new(const struct mu_kube_config *cfg,
                     const struct mu_kube_opts *opts, size_t max_idle,
                     struct mu_kube_pool **out,
                     struct mu_err *err) MU_WARN_UNUSED;
/* An idle client, or a new one; its stop flag is cleared. NULL with err
 * (mu_kube_new's errors). The caller gives it back with mu_kube_pool_put
 * (or frees it with mu_kube_free). */
struct mu_kube *mu_kube_pool_get(struct mu_kube_pool *p, struct mu_err *err);
/* Gives k back (NULL is a no-op); its stop flag is cleared. A client whose
 * last call failed with a transport error may be put back too: libcurl
 * reconnects. Beyond max_idle idle clients, k is freed. */
void mu_kube_pool_put(struct mu_kube_pool *p, struct mu_kube *k);
/* The pool's rate limit: how many requests waited for it, and how long
 * in all (mu_kube_shared_limiter_stats). Thread-safe. */
void mu_kube_pool_limit_stats(struct mu_kube_pool *p, uint64_t *delayed,
                              int64_t *delayed_ns);
/* Frees the pool and its idle clients; every client taken must be back.
 * NULL is a no-op. */
void mu_kube_pool_free(struct mu_kube_pool *p);

#endif
