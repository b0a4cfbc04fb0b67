/*
 * view.h - what the extender's HTTP threads know: an immutable snapshot of
 * muster's reservations, published by the scheduler thread after every
 * cycle and read without locks by /filter, /prioritize and /bind.
 *
 * Ownership and threads: the scheduler thread builds a view
 * (mu_view_new, mu_view_add_*), then publishes it (mu_view_publish), after
 * which nobody changes it. Readers take a reference with mu_view_get() and
 * drop it with mu_view_put(); the last put frees it. Publishing swaps the
 * current pointer under a mutex held only for the swap (and taken by
 * mu_view_get just long enough to bump the count), so readers never wait
 * for the scheduler's work; readers holding the old view keep it valid.
 */
#ifndef MU_EXTENDER_VIEW_H
#define MU_EXTENDER_VIEW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/map.h"

/* One pod muster has decided about. The publisher fills ns and name from
 * muster's own cache of the pod with that uid: /bind binds (and may delete)
 * exactly these, never the names a request carries (extender.h,
 * mu_ext_bind), and refuses a pod whose ns or name is NULL. */
struct mu_view_pod {
    char *uid;
    char *ns;
    char *name;
    char *node;     /* reserved node; NULL while the pod must wait */
    char *gang;     /* "namespace/podgroup" */
    char *release;  /* release batch id ("<gang>#<n>"): pods released
                       together bind together; NULL while waiting */
    int batch_size; /* members of that release batch */
    char *reason;   /* why it waits (short, the same for every node) */
    bool controlled; /* has a controller ownerReference: a controller makes
                        it again if it is deleted. A pod without one is
                        never deleted by /bind (mu_view_set_controlled) */
    bool plain;     /* nothing in its spec is left for kube-scheduler to
                       check or prepare beyond the reserved node (no
                       volume claims, resource claims, pod (anti-)affinity,
                       topology spread or host ports, mu_pod.kube_only):
                       muster may bind it itself (mu_view_set_plain),
                       once muster's own gate, if it has one, is lifted
                       by its release (a bind before gets a 409) */
    uint64_t hash;  /* of uid: where the view's table keeps it */
    atomic_int refs; /* the views and caches holding it (below) */
};

/* The members of one release batch, in the order they were added (their
 * uids, owned by the view). */
struct mu_view_batch {
    size_t n, cap;
    char **uids;
};

struct mu_view {
    atomic_int refs;
    uint64_t gen;        /* publication number, increasing */
    bool synced;         /* the caches have listed everything once */
    char **sched_names;  /* schedulerNames muster serves (NULL-terminated) */
    size_t npods;        /* pods held */
    size_t cap;          /* slots of pods: a power of two, or 0 */
    struct mu_view_pod **pods; /* open addressing on hash (a reference
                                  held on each) */
    struct mu_map batches; /* release -> struct mu_view_batch * (owned) */
};

/* An empty, unsynced view serving schedulerName "volcano". */
struct mu_view *mu_view_new(uint64_t gen, bool synced);
/* Makes room in v for n pods at once, so that adding them never grows the
 * table again (a publisher that knows the last view's size: 100,000 pods
 * grown from nothing were 11 rehashes of it). */
void mu_view_reserve(struct mu_view *v, size_t n);
/*
 * Pod entries are immutable once made, counted, and may be held by many
 * views at once: a publisher that keeps each pod's entry from one view to
 * the next (struct mu_view_cache) copies nothing for the pods whose state
 * has not moved, so a publication costs a lookup and a compare a pod, not
 * a copy of every string (issue 15: a view of 40,000 pending pods made
 * after every cycle of a backlog was most of the scheduler thread's
 * work).
 *
 * mu_view_pod_make copies f's strings (uid required; the others may be
 * NULL) and f's other fields into one allocation and returns it with one
 * reference, the caller's. mu_view_pod_unref drops one (NULL: nothing);
 * the last frees it. Any thread.
 */
struct mu_view_pod *mu_view_pod_make(const struct mu_view_pod *f);
void mu_view_pod_unref(struct mu_view_pod *p);
/* Adds p (made by mu_view_pod_make) to v, which takes a reference of its
 * own; a pod with p's uid added before is replaced. Only before
 * publishing. */
void mu_view_hold_pod(struct mu_view *v, struct mu_view_pod *p);
/* Adds a pod; strings are copied; reserved node NULL = must wait. */
void mu_view_add_pod(struct mu_view *v, const char *uid, const char *ns,
                     const char *name, const char *gang, const char *node,
                     const char *release, int batch_size, const char *reason);
/* Marks pod uid (added before) as having a controller (controlled true)
 * or not; only before publishing. A pod added is not controlled until
 * marked: /bind never deletes a pod it is not told a controller will make
 * again (extender.h, mu_unbind_fn). Unknown uid: nothing. */
void mu_view_set_controlled(struct mu_view *v, const char *uid,
                            bool controlled);
/* Marks pod uid (added before) as plain (see struct mu_view_pod) or not;
 * only before publishing. A pod added is not plain until marked: /bind
 * then waits for kube-scheduler to bring every member of its batch.
 * Unknown uid: nothing. */
void mu_view_set_plain(struct mu_view *v, const char *uid, bool plain);
const struct mu_view_pod *mu_view_pod(const struct mu_view *v, const char *uid);
/* The members of release batch release (NULL when v has none, or release
 * is NULL). A uid listed may have been added again since with another
 * release: look each up with mu_view_pod and compare its release. */
const struct mu_view_batch *mu_view_batch(const struct mu_view *v,
                                          const char *release);
/* True when sched_name (NULL: false) is one of v's schedulerNames. */
bool mu_view_serves(const struct mu_view *v, const char *sched_name);
/* Replaces the schedulerNames v serves with copies of names (a
 * NULL-terminated list); only before publishing. sched_names is owned by
 * the view (the array and its strings, freed with it). */
void mu_view_set_sched_names(struct mu_view *v, const char *const *names);

/*
 * The publisher's entries from one view to the next: uid -> the entry
 * last put in a view for that pod (a reference held on each). One thread
 * (the publisher's); entries it hands to views are shared read-only.
 *
 * mu_view_cache_put(c, v, f) holds in v the cached entry for f->uid when
 * every field of it equals f's (strings by content), else a new one made
 * from f, which replaces it in the cache. mu_view_cache_sweep(c), after
 * the last put of a view, drops the entries of pods not put since the
 * sweep before (pods gone, bound or no longer muster's), so the cache
 * holds what that view holds.
 */
struct mu_view_cache {
    struct mu_map ents; /* uid -> struct mu_view_cent * */
    uint64_t gen;       /* sweeps made; marks the entries put since */
};

void mu_view_cache_init(struct mu_view_cache *c);
void mu_view_cache_release(struct mu_view_cache *c);
void mu_view_cache_put(struct mu_view_cache *c, struct mu_view *v,
                       const struct mu_view_pod *f);
void mu_view_cache_sweep(struct mu_view_cache *c);

/* The published view, shared between the scheduler and HTTP threads. */
struct mu_view_slot {
    pthread_mutex_t lock;
    struct mu_view *cur;
};

void mu_view_slot_init(struct mu_view_slot *s);
/* Frees the current view (call when no reader can remain). */
void mu_view_slot_release(struct mu_view_slot *s);
/* Replaces the current view with v (taking the caller's reference). */
void mu_view_publish(struct mu_view_slot *s, struct mu_view *v);
/* A reference to the current view (never NULL after the first publish;
 * NULL before). */
struct mu_view *mu_view_get(struct mu_view_slot *s);
void mu_view_put(struct mu_view *v);

#endif
