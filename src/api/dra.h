/*
 * dra.h - the Dynamic Resource Allocation objects muster reads
 * (resource.k8s.io/v1): DeviceClass, ResourceSlice, ResourceClaim and
 * ResourceClaimTemplate, decoded from JSON into plain C structs.
 *
 * What is kept is what placement needs: the devices each slice offers on
 * its node (attributes and capacities qualified by domain, as CEL reads
 * them: cel.h), the pool and generation a slice belongs to, what each
 * claim asks (requests with their class, selectors, allocation mode and
 * count, or a firstAvailable list of alternatives), and what an allocated
 * claim holds (devices by driver, pool and name) and for whom.
 *
 * Selectors are compiled while decoding. A selector outside the subset
 * cel.h evaluates does not fail the decode (the API server accepted it):
 * the request keeps it as `bad` ("spec.selectors[0]: unsupported: method
 * isGreaterThan") and placement refuses the claim saying so, never
 * guessing. Likewise `bad` holds the first field muster does not plan
 * (spec.devices.constraints, a device taint toleration...). Slices that are
 * not bound to one node are decoded with node NULL: allNodes and
 * nodeSelector slices with the nodes that reach their devices (all_nodes,
 * node_sel); a perDeviceNodeSelection slice with neither, its devices not
 * planned (why-pending counts them apart, sched/devices.h
 * mu_devices_free_count).
 *
 * Ownership and errors as in object.h: a decoded struct owns everything in
 * it and is released with its _release(); a decode failure is -EINVAL with
 * err naming the field ("spec.devices[2].capacity.memory.value: quantities
 * must match ..."), *out zeroed.
 */
#ifndef MU_API_DRA_H
#define MU_API_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/cel.h"
#include "api/object.h"

/* Most devices one slice may list (the API's own limit is 128; 4 Ki keeps
 * a forged slice from costing more than a bounded allocation). */
#define MU_DRA_MAX_DEVICES 4096
/* Most requests, alternatives and selectors per claim, as the API caps
 * them (32 requests, 8 subrequests, 32 selectors). */
#define MU_DRA_MAX_REQUESTS 32
#define MU_DRA_MAX_ALTS 8
#define MU_DRA_MAX_SELECTORS 32

struct mu_devsel {
    size_t n;
    char **src;          /* CEL sources */
    struct mu_cel **cel; /* compiled; NULL where bad */
    char *bad;           /* first one outside the subset, with its path */
};
void mu_devsel_release(struct mu_devsel *s);
/* true when every selector selects d (none = all do). */
bool mu_devsel_match(const struct mu_devsel *s, const struct mu_cel_device *d);

struct mu_devclass {
    struct mu_meta meta;
    struct mu_devsel sel;     /* spec.selectors */
    char *ext_resource;       /* spec.extendedResourceName or NULL */
    /* not decoded: its bit in the device memo of the inventory that holds
     * it (sched/devices.h: mu_cdev.cls_ok), -1 for none */
    int memo_bit;
};
int mu_devclass_decode(const json_t *j, struct mu_devclass *out,
                       struct mu_err *err);
void mu_devclass_release(struct mu_devclass *c);

struct mu_dev {
    char *name;
    size_t nattrs;
    struct mu_cel_attr *attrs;
    size_t ncaps;
    struct mu_cel_cap *caps;
};

struct mu_slice {
    struct mu_meta meta;
    char *driver;
    char *pool;
    int64_t generation;
    int64_t slice_count;      /* spec.pool.resourceSliceCount */
    char *node;               /* spec.nodeName; NULL when not node-local */
    bool all_nodes;           /* spec.allNodes: reachable from every node */
    struct mu_affinity node_sel; /* spec.nodeSelector: from the nodes it
                                    selects (nterms > 0) */
    size_t ndevs;
    struct mu_dev *devs;
};
int mu_slice_decode(const json_t *j, struct mu_slice *out, struct mu_err *err);
void mu_slice_release(struct mu_slice *s);

enum mu_alloc_mode { MU_ALLOC_EXACT = 0, MU_ALLOC_ALL };

/* One way to satisfy a request: a class, selectors, a mode and count. */
struct mu_devopt {
    char *name;               /* the request's (or subrequest's) name */
    char *class_name;         /* deviceClassName */
    struct mu_devsel sel;
    enum mu_alloc_mode mode;
    int64_t count;            /* ExactCount: default 1 */
    /* not decoded: placement's memo of the class it names
     * (sched/devices.c), valid while memo_gen is the inventory's gen + 1 */
    const void *memo_class;
    uint64_t memo_gen;
    /* not decoded: placement's key for its selector set, interned in the
     * inventory that holds the option (sched/devsel.c: mu_dev_sel_key) */
    const void *memo_selkey;
};

struct mu_devreq {
    char *name;
    size_t nopts;             /* 1 for exactly; firstAvailable in order */
    struct mu_devopt *opts;
};

struct mu_claimspec {
    size_t nreqs;
    struct mu_devreq *reqs;
    char *bad;                /* a field muster does not plan, or NULL */
};
void mu_claimspec_release(struct mu_claimspec *s);

/* One allocated device (status.allocation.devices.results[]). */
struct mu_devresult {
    char *request;
    char *driver;
    char *pool;
    char *device;
};

struct mu_claim {
    struct mu_meta meta;
    struct mu_claimspec spec;
    bool allocated;           /* status.allocation present */
    size_t nresults;
    struct mu_devresult *results;
    size_t nreserved;
    char **reserved_uids;     /* status.reservedFor[].uid */
};
int mu_claim_decode(const json_t *j, struct mu_claim *out, struct mu_err *err);
void mu_claim_release(struct mu_claim *c);

struct mu_claimtemplate {
    struct mu_meta meta;
    struct mu_claimspec spec; /* spec.spec */
};
int mu_claimtemplate_decode(const json_t *j, struct mu_claimtemplate *out,
                            struct mu_err *err);
void mu_claimtemplate_release(struct mu_claimtemplate *t);

#endif
