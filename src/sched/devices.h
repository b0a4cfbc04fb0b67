/*
 * devices.h - the cluster's DRA devices (resource.k8s.io/v1) and who holds
 * them: the device side of placement, next to the resource vectors of
 * cluster.h.
 *
 * The inventory keeps the DeviceClasses, the ResourceSlices (their devices
 * by node), the ResourceClaims and the ResourceClaimTemplates it is given.
 * A device is usable for new plans only when its pool is complete: every
 * one of the resourceSliceCount slices of the pool's newest generation is
 * present (older generations' devices are kept only for the claims that
 * hold them). A device is held by at most one claim: one that the API shows
 * allocated (status.allocation names it), or one that muster plans on a
 * node (a task placed this cycle or binding). A slice not bound to one node
 * (allNodes, or a nodeSelector) serves every node that reaches it: each
 * node's entry lists those slices after its own (mu_devices_node_reach),
 * a hold taken through one node is seen by all of them (reach_holds: the
 * cluster touches them), and a claim holding only such devices has no node
 * (it fits wherever all of them are reached).
 *
 * A pod's claims are resolved into a struct mu_devdemand: the claim it
 * names, the claim made for its template (or, until that claim exists, a
 * private claim with the template's spec, held by the task alone). A claim
 * referenced by several pods is one claim: held once, on one node, however
 * many of them are placed.
 *
 * Matching: a device serves a request option when the option's class
 * exists and every selector of the class and of the option selects it
 * (cel.h). ExactCount takes `count` devices, All every usable device of the
 * node that matches (at least one); a firstAvailable request takes its
 * first option that fits. Picking is first fit in device order (slice name,
 * then position), so the same input picks the same devices.
 *
 * Quotas: a class maps to a resource name (struct mu_devmap: the config's
 * deviceClassMappings, else the class's extendedResourceName); a demand's
 * quota is, per mapped name, the devices of its claims from templates (a
 * claim named by resourceClaimName may be shared: not charged): for an
 * allocated claim, the devices its allocation names, each under the class
 * of the request or firstAvailable choice that took it; else each
 * request's first option, ExactCount by its count and All by the most
 * usable devices it selects on one node. Resolve adds the pod's request
 * to it (the demand's qreq, which the cluster makes the task's queue-side
 * request, mu_task.qreq) and the cluster adds the matching devices to its
 * total, so capability, deserved and guarantee on `nvidia.com/gpu` count
 * DRA GPUs and device-plugin GPUs alike.
 *
 * Ownership: the inventory owns every object given to it (moved in, the
 * source zeroed) and every struct it makes; demands are the caller's, freed
 * with mu_devdemand_release after mu_devices_give. Thread: the scheduler
 * thread (or the simulator), as the cluster. Nothing here touches a node of
 * cluster.h: the cluster calls in and bumps node generations itself.
 */
#ifndef MU_SCHED_DEVICES_H
#define MU_SCHED_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/dra.h"
#include "api/match.h"
#include "api/resource.h"
#include "common/map.h"
#include "common/mu.h"
#include "common/slab.h"
#include "sched/conf.h"
#include "sched/reqpool.h"

/* Addresses mu_devices_take_hints gives. */
#define MU_DEV_HINTS 3
/* Free-device counts remembered (struct mu_devices). */
#define MU_DEV_COUNT_CACHE 16
/* Classes whose answer a device remembers (struct mu_cdev's bits); a
 * class beyond them is matched again at every look. */
#define MU_DEV_CLASS_MEMO 32

struct mu_dclaim;

/* One device of one slice on one node. */
struct mu_cdev {
    /* what a search for a free device reads, first; a device is one
     * cache line (the slice's array is line-aligned) */
    _Alignas(64) bool usable;  /* its pool is complete, newest generation */
    bool memo_sel_ok;          /* whether the selector set memo_sel (an
                                  option's, interned: devsel.c's
                                  mu_dev_sel_key) selects it; a device's
                                  attributes never change */
    /* placement's memo of the classes that select it, one bit per class
     * (mu_devclass.memo_bit): known, and of those, selecting; valid while
     * memo_gen is the inventory's gen + 1. Filled for every class when
     * the slice comes (mu_devices_put_slice), so a cycle does not read
     * the device's attributes; after a class changes, for every class
     * when its node's sums are made again (mu_dev_node_sum), else one
     * class at a time as placement asks. */
    uint32_t cls_known;
    uint32_t cls_ok;
    struct mu_dclaim *pipe;    /* promised to a pipelined task's claim once
                                  its holder goes (a future fit skips it) */
    uint64_t memo_gen;
    const void *memo_sel;
    const struct mu_slice *slice; /* borrowed from the inventory; with dev,
                                  what selectors read (mu_cdev_view); its
                                  key in the index is "driver/pool/name" */
    const struct mu_dev *dev;
};

/* What a selector reads of dev. */
static inline struct mu_cel_device mu_cdev_view(const struct mu_cdev *dev)
{
    return (struct mu_cel_device){
        .driver = dev->slice->driver,
        .nattrs = dev->dev->nattrs,
        .attrs = dev->dev->attrs,
        .ncaps = dev->dev->ncaps,
        .caps = dev->dev->caps,
    };
}

/* A claim as placement sees it; what a fit check and a take read
 * first, the API's object last. */
struct mu_dclaim {
    /* the first cache line (claims are allocated on line boundaries:
     * mu_xcalloc_lines): what a fit check reads */
    /* the spec's only option, when it has one request of one option
     * (most claims): a fit check reads it here, not through the spec
     * (mu_dev_claim_spec sets it); its class is remembered while the
     * inventory's gen is one_gen + 1; one_sel: it has selectors of its
     * own */
    const struct mu_devopt *one;
    const struct mu_devclass *one_class;
    uint64_t one_gen;
    int64_t one_count;         /* one's count (ExactCount) */
    enum mu_alloc_mode one_mode;
    bool one_sel;
    bool api_alloc;            /* holds what status.allocation names */
    int users;                 /* placed tasks that use it */
    int leaving;               /* of them, releasing */
    size_t nheld;
    const struct mu_claimspec *spec; /* &api.spec, or the template's */
    /* then what a take writes */
    size_t cap_held;
    struct mu_cdev **held;     /* &held_one until a second device: most
                                  claims hold one (no allocation on the
                                  placement path) */
    struct mu_cdev *held_one;
    const char *node;          /* node of the held devices, or NULL */
    const struct mu_devnode *plan_nd; /* the node entry muster last
                                  planned it on (lives as the inventory) */
    size_t npiped, cap_piped;
    struct mu_cdev **piped;    /* devices promised to it (mu_cdev.pipe) */
    char *key;                 /* "ns/name"; NULL for a private claim */
    size_t nwant;
    char **want;               /* the device keys it names (in the
                                  inventory's wanted map), owned */
    struct mu_claim api;       /* the API's claim (api.spec) */
};

/* Private claims (a pod's own, from a template or an extended resource)
 * made at once, side by side (struct mu_devices.priv_slab). */
#define MU_DEV_PRIV_SLAB 256

/* One slice and its devices (devs[i] is slice s.devs[i]). */
struct mu_devslice {
    /* what a search for free devices and a hold read, on one cache line
     * (a slice is allocated on a line boundary) */
    struct mu_cdev *devs;
    struct mu_dclaim **holders; /* holders[i]: the claim that holds devs[i],
                                  NULL = free; apart from the devices, 8
                                  to a line (line-aligned), so that a take
                                  on a node whose sums answer for the
                                  claim's class writes no device's line
                                  (mu_dev_holder reads it for one device) */
    size_t ndevs;              /* s.ndevs */
    size_t first_free;         /* every device before it has a holder: a
                                  search for a free one may start there
                                  (holds fill a slice from the front) */
    const char *node;          /* s.node */
    struct mu_devnode *nd;     /* node's entry (its sums), NULL without */
    char *pool_key;            /* "driver/pool" */
    struct mu_slice s;
};

/* The slice dev is a device of (mu_devslice.s is what dev->slice points
 * to), and dev's position in it. */
static inline struct mu_devslice *mu_dev_slice_of(const struct mu_cdev *dev,
                                                  size_t *at)
{
    struct mu_devslice *s = (struct mu_devslice *)(void *)(
        (char *)(uintptr_t)dev->slice - offsetof(struct mu_devslice, s));

    *at = (size_t)(dev - s->devs);
    return s;
}

/* The claim that holds dev, or NULL when it is free. */
static inline struct mu_dclaim *mu_dev_holder(const struct mu_cdev *dev)
{
    size_t at;
    const struct mu_devslice *s = mu_dev_slice_of(dev, &at);

    return s->holders[at];
}

/* The slices of one node (or of one pool), sorted by slice name: device
 * order is slice order, then position. A node's entry also lists the
 * slices not bound to one node that it reaches (allNodes, or a
 * nodeSelector that selects it: mu_devices_node_reach), by name, after
 * its own: their devices serve a pod on this node as well as on the
 * others that reach them, and a device is held by one claim however many
 * nodes reach it.
 *
 * A node's entry also sums up its own slices (mu_dev_node_sum), so
 * that a fit check of the common claim (one request of ExactCount, no
 * selectors of its own, on a node that reaches no other slice) reads this
 * entry and no slice or device: nfree is kept by every hold taken or
 * dropped (devholds.c, through mu_devslice.nd); the rest is made again
 * when sum_ok is false (its slices or their usability changed) or the
 * classes changed (sum_gen). Entries in the maps are line-aligned. */
struct mu_devnode {
    /* one cache line (the map's entries are a slab of lines: struct
     * mu_devices.slabs); what a fit check reads first */
    struct mu_devslice **v;    /* &v_one until a second slice: most nodes
                                  have one (a fit check reads it here) */
    struct mu_devslice *v_one;
    struct mu_devslice **reach;
    uint64_t sum_gen;          /* all_cls holds while the inventory's
                                  gen + 1 is sum_gen */
    uint32_t n, cap;
    uint32_t nreach, cap_reach;
    int32_t nfree;             /* own devices that no claim holds */
    uint32_t all_cls;          /* the class memo bits (mu_devclass.memo_bit)
                                  of the classes that select every own
                                  device */
    bool sum_ok;               /* the sums are of its slices as they are */
    bool all_usable;           /* every own device is usable */
    bool present;              /* a node of that name is in the cluster
                                  (mu_devices_node_reach): the devices of
                                  an entry without one (its node removed,
                                  or not come yet) count nowhere */
};

/* Node entries made at once (struct mu_devices.slabs): they live as
 * long as the inventory, and one allocation each would sit between the
 * cluster's nodes in memory. */
#define MU_DEV_SLAB 256

struct mu_devices {
    struct mu_map classes;     /* name -> struct mu_devclass * */
    struct mu_map slices;      /* name -> struct mu_devslice * */
    struct mu_map devs;        /* key -> struct mu_cdev * */
    struct mu_map nodes;       /* node name -> struct mu_devnode * */
    struct mu_map claims;      /* "ns/name" -> struct mu_dclaim * */
    struct mu_map templates;   /* "ns/name" -> struct mu_claimtemplate * */
    struct mu_map pools;       /* "driver/pool" -> struct mu_devnode * */
    size_t nslabs;
    struct mu_devnode **slabs; /* the entries of nodes and pools, made
                                  MU_DEV_SLAB at a time, line-aligned */
    size_t slab_used;          /* entries given of the last slab */
    struct mu_devnode unbound; /* the slices of allNodes or a nodeSelector */
    struct mu_devnode unplanned; /* those of perDeviceNodeSelection: not
                                  planned, counted apart in why-pending */
    uint64_t reach_gen;        /* moves when unbound's slices come, go or
                                  change usability: every node's reach list
                                  and the cluster's total may differ */
    uint64_t reach_holds;      /* moves when a device of theirs is held,
                                  freed, promised or starts leaving: every
                                  node that reaches it sees it change */
    size_t nmaps;
    struct mu_devmap *maps;    /* from the config, first match wins */
    int next_classes;          /* classes with an extendedResourceName */
    uint32_t class_bits;       /* the memo bits the classes hold
                                  (mu_devclass.memo_bit; at most
                                  MU_DEV_CLASS_MEMO classes have one) */
    uint64_t gen;              /* moves whenever a class or a mapping
                                  changes (every demand resolved before is
                                  stale; a template's or claim's change
                                  concerns its users only) */
    struct mu_map wanted;      /* device key -> the API claim whose
                                  allocation names it (held as soon as a
                                  slice shows the device) */
    bool quota_stale;          /* a class or mapping changed: every
                                  node's mu_devices_node_quota may differ */
    /* Nodes whose devices changed (slices came or went, a claim's
     * allocation moved) since mu_devices_clear_changed(): owned names, in
     * order, each once. */
    size_t nchanged, cap_changed;
    char **changed;
    struct mu_map changed_set; /* the same names -> 1 */
    uint64_t hold_gen;         /* moves with every hold taken or dropped */
    uint64_t claim_add_gen;    /* moves when a claim of the inventory is */
    uint64_t claim_del_gen;    /* made, or goes (its mu_dclaim's address
                                  is kept over updates) */
    int64_t leaving_marks;     /* the claims' leaving counts summed: 0
                                  means no held device is free in the
                                  future, so a future search passes over
                                  held ones too */
    uint64_t slice_gen;        /* moves with every slice put or deleted */
    uint64_t resolve_gen;      /* moves with every demand resolved: its
                                  private options may sit where freed ones
                                  were (mu_devices_free_count's memory is
                                  keyed on an option's address) */
    /* mu_devices_free_count's last answers (a cycle asks the same for
     * every waiting gang of one template): a cache the const reader
     * fills, so behind a pointer; owned */
    struct mu_devcounts *counts;
    /* The private claims' memory: MU_DEV_PRIV_SLAB at a time, side by
     * side, so the tasks they are made beside stay close together (a
     * cycle reads them all); a freed one's place is reused first. */
    struct mu_slab priv_slab;
    struct mu_reqpool qreqs;   /* the demands' qreq copies, shared */
};

void mu_devices_init(struct mu_devices *d);
void mu_devices_release(struct mu_devices *d);
/* Sets the config's class mappings (copied). */
void mu_devices_set_maps(struct mu_devices *d, const struct mu_devmap *m,
                         size_t n);

/* Adding (or replacing by name) and removing objects. A removed claim's
 * devices are freed; a removed slice's devices leave their holders. */
void mu_devices_put_class(struct mu_devices *d, struct mu_devclass *c);
void mu_devices_del_class(struct mu_devices *d, const char *name);
void mu_devices_put_slice(struct mu_devices *d, struct mu_slice *s);
void mu_devices_del_slice(struct mu_devices *d, const char *name);
void mu_devices_put_claim(struct mu_devices *d, struct mu_claim *c);
void mu_devices_del_claim(struct mu_devices *d, const char *ns,
                          const char *name);
void mu_devices_put_template(struct mu_devices *d, struct mu_claimtemplate *t);
void mu_devices_del_template(struct mu_devices *d, const char *ns,
                             const char *name);

/* Empties d->changed (and clears quota_stale). */
void mu_devices_clear_changed(struct mu_devices *d);

/* A pod's claims, resolved. */
/* One entry of a demand. */
struct mu_devdemand_entry {
    char *claim_key;           /* a claim of the inventory ("ns/name") */
    struct mu_dclaim *priv;    /* or a private one (owned) */
    /* the memo of the claim claim_key names (a fit check would look it
     * up in the inventory for every node it tries): a claim found stays
     * valid while no claim goes (claim_del_gen is memo_gen + 1), none
     * found while none comes (claim_add_gen) */
    struct mu_dclaim *memo;
    uint64_t memo_gen;
    int ext_dim;               /* >= 0: it serves the pod's request of
                                  this extended resource through DRA
                                  (KEP-5004), on nodes whose allocatable
                                  lacks it; -1: a claim of the pod */
    bool taken;                /* counted in its claim's users */
};

/* Entries a demand keeps in itself (a pod of one claim, or one claim and
 * one extended resource: no allocation, and a fit check reads them on
 * the demand's first cache line). */
#define MU_DEVDEMAND_INLINE 2

struct mu_devdemand {
    /* first, right after the task's end (the demand lives in the task's
     * allocation), beside the line the task's dd is on: what a fit check
     * reads first */
    size_t n;
    char *why;                 /* why it cannot be planned, or NULL: a fit
                                  check reads it first, so next to n and
                                  the entries */
    struct mu_devdemand_entry *c; /* c_in, or allocated when more; so a
                                  demand is not moved once resolved */
    struct mu_devdemand_entry c_in[MU_DEVDEMAND_INLINE];
    const struct mu_res *qreq; /* the pod's request plus the quota, which
                                  the queue's sums read for every task
                                  placed (mu_task.qreq): a copy shared by
                                  the demands that ask the same (the
                                  inventory's reqpool; resolve takes a
                                  reference, release drops it) */
    uint32_t ext_dims;         /* the ext_dim bits of the entries */
    uint32_t quota_set;        /* the mapped resource names its claims'
                                  devices count under: in those, qreq less
                                  the pod's own request is its quota
                                  (mu_devdemand_quota_of) */
    char *sig;                 /* what placement depends on, for shapes */
    bool by_slices;            /* its quota counts an All request by the
                                  devices the slices offer on one node:
                                  resolve it again when slices changed
                                  (mu_cluster_dra_settle) */
    bool shared;               /* names a claim by resourceClaimName: pods
                                  that share it share its node, so their
                                  picks are checked one by one */
};
/* Resolves pod's claims into out, registering mapped names in rn. A
 * request of an extended resource that a DeviceClass names in
 * extendedResourceName (KEP-5004: the API server keeps that field only
 * with the DRAExtendedResource gate on) becomes an entry too: the claim
 * kube-scheduler made for it (pod->ext_claim), else a private claim of
 * that many devices of the class (the newest class naming it, then by
 * name); it applies only on nodes whose allocatable lacks the resource.
 * Never fails: what cannot be resolved (a missing claim, template or
 * class, a selector outside cel.h, rn full) is out->why. */
/* Whether a pod needs a demand at all: it has claims, or asks for an
 * extended resource while some class names one. */
bool mu_devdemand_needed(const struct mu_devices *d, const struct mu_pod *pod);
void mu_devdemand_resolve(struct mu_devices *d, const struct mu_pod *pod,
                          struct mu_resnames *rn, struct mu_devdemand *out);
void mu_devdemand_release(struct mu_devices *d, struct mu_devdemand *dm);
/* dm's only claim when its fit and take on a node are that claim's
 * alone: one entry, a private claim of the pod (not of an extended
 * resource, which depends on the node's allocatable), nothing that keeps
 * it from being planned; else NULL. It lives as dm. A private claim has
 * no user but its pod: it is taken exactly when it has one. */
static inline struct mu_dclaim *mu_devdemand_one(const struct mu_devdemand *dm)
{
    if (dm->n != 1 || dm->why || dm->c[0].ext_dim >= 0)
        return NULL;
    return dm->c[0].priv;
}

/* The quota in dimension d (one of a demand's quota_set) of a pod whose
 * own request is req and whose demand's qreq is qreq: what qreq adds to
 * req there (the cluster keeps qreq on the task, and reads it there). */
static inline int64_t mu_devdemand_quota_of(const struct mu_res *qreq,
                                            const struct mu_res *req, int d)
{
    return qreq->v[d] - (mu_res_has(req, d) ? req->v[d] : 0);
}

/* The slices of node `name`, made empty when it has none yet: the entry
 * lives as long as the inventory, so a cluster node keeps the pointer. */
struct mu_devnode *mu_devices_node(struct mu_devices *d, const char *name);
/* Lists in node `name`'s entry the unbound slices a node of that name and
 * labels reaches (labels NULL: none, the node is gone). The cluster calls
 * it when a node comes, goes or its labels change, and for every node
 * when reach_gen moved. A list that changes moves hold_gen and slice_gen
 * (the counts remembered, the All quotas). */
void mu_devices_node_reach(struct mu_devices *d, const char *name,
                           const struct mu_kvs *labels);
/* Per mapped resource name, the usable devices of the unbound slices
 * (added to the cluster's total once, not per node that reaches them). */
void mu_devices_unbound_quota(struct mu_devices *d, struct mu_resnames *rn,
                              struct mu_res *out);

/* Where a take on nd reads beyond nd itself: its first slice's entry,
 * the line of that slice's holders from its first free device on (a take
 * whose class the node's sums answer for reads no more), and that device
 * (any other take reads it) (h[0], h[1], h[2]; NULL when none). The caller
 * keeps them where it reads before a take (struct mu_cnode.dev_hint) and
 * prefetches them with nd, so a take on a node not seen for a while waits
 * for its lines together, not one after another (node, slice, device).
 * They are only prefetched, never read through: a stale one (the slice
 * replaced since, the device taken) costs a wasted prefetch, nothing
 * else (a prefetch does not fault). */
void mu_devices_take_hints(const struct mu_devnode *nd,
                           const void *h[MU_DEV_HINTS]);
/* Whether the node's free devices (future: also those held by claims
 * whose every user is releasing) cover the demand. nd from
 * mu_devices_node; name is the node's; node_dims its allocatable's set
 * (an extended-resource entry applies where its bit is clear). */
bool mu_devices_fit(const struct mu_devices *d, const struct mu_devdemand *dm,
                    const struct mu_devnode *nd, const char *name,
                    uint32_t node_dims, bool future);
/* mu_devices_fit for a demand whose fit is its only claim's, c
 * (mu_devdemand_one): the same answer without reading the demand (a pod
 * of one private claim, checked on many nodes, reads one line less in a
 * chain of dependent reads). */
bool mu_devices_fit_one(const struct mu_devices *d, const struct mu_dclaim *c,
                        const struct mu_devnode *nd, const char *node,
                        bool future);
/* Takes the devices for a task placed on node (claims held already are
 * only counted); a claim short of devices takes what it found. The caller
 * (the cluster, placing the task) moves the node's generation: take, give
 * and leaving do not note nodes changed. */
void mu_devices_take(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims);
/* mu_devices_take for a demand whose take is its only claim's, c
 * (mu_devdemand_one): the same, reading the claim and not the demand
 * (its entry's taken is only written). */
void mu_devices_take_one(struct mu_devices *d, struct mu_devdemand *dm,
                         struct mu_dclaim *c, const struct mu_devnode *nd);
/* The reverse of take: a claim whose last user leaves frees the devices
 * muster planned for it (the API's allocations stay until the API says). */
void mu_devices_give(struct mu_devices *d, struct mu_devdemand *dm);
/* A task pipelined on nd: its claims that hold nothing are promised the
 * future-free devices they would pick (so no other pipelined task counts
 * them); unpipe takes the promises back. */
void mu_devices_pipe(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims);
void mu_devices_unpipe(struct mu_devices *d, struct mu_devdemand *dm);
/* A placed task starts (on) or stops (off) releasing. */
void mu_devices_leaving(struct mu_devices *d, struct mu_devdemand *dm,
                        bool on);

/* Per mapped resource name, the usable devices of the node that its class
 * selects (added to the cluster's total). */
void mu_devices_node_quota(struct mu_devices *d, const char *node,
                           struct mu_resnames *rn, struct mu_res *out);

/* For why-pending: the first option of the first request of a demand
 * that is not held yet, and the usable free devices it matches. */
struct mu_devfree {
    const char *class_name; /* the option's class; NULL when there is none
                               (the rest is then 0) */
    int64_t per;            /* its count per pod, 1 for All */
    int64_t total;          /* free over all nodes */
    int64_t nodes;          /* on how many nodes */
    int64_t best;           /* the most on one node */
    int64_t unplanned;      /* free in slices with perDeviceNodeSelection,
                               which muster does not plan */
};
void mu_devices_free_count(const struct mu_devices *d,
                           const struct mu_devdemand *dm,
                           struct mu_devfree *out);
/* f in words, for pods pods (the PodGroup condition, explain and
 * simulate say the same): "needs 8 devices of class gpu.example.com (1 per
 * pod); free: 5 on 2 nodes, at most 4 on one node", or "...; none free",
 * then the unplanned ones if any. Appends to sb; f->class_name not NULL. */
void mu_devfree_text(const struct mu_devfree *f, int64_t pods,
                     struct mu_sb *sb);

#endif
