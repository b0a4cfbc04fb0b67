/*
 * resource.h - Kubernetes quantities and resource vectors as integers.
 *
 * Units: cpu in millicores; memory, ephemeral-storage, storage and
 * hugepages-* in bytes; pods and every extended resource (nvidia.com/gpu,
 * nvidia.com/mig-1g.5gb, nvidia.com/gpumem, ...) in whole units. A fractional
 * extended resource is an error, worded like the API server's
 * ("must be an integer").
 *
 * A resource vector (struct mu_res) is a fixed array indexed by dimension.
 * Dimension numbers come from a registry (struct mu_resnames) owned by the
 * cluster: cpu is always 0, memory 1, pods 2; other names get the next free
 * index the first time they are seen, up to MU_RES_MAX. The bit for a
 * dimension in `set` says the dimension was given; an absent dimension reads
 * as 0 for requests and allocations, and as "unlimited" for capabilities
 * (callers choose with the _cap variants).
 *
 * Thread: none of this is thread-safe; the registry belongs to the scheduler
 * thread.
 */
#ifndef MU_API_RESOURCE_H
#define MU_API_RESOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/mu.h"

/* Most distinct resource names one cluster may use; more is an error. */
#define MU_RES_MAX 32

enum { MU_RES_CPU = 0, MU_RES_MEMORY = 1, MU_RES_PODS = 2 };

/* How a quantity is turned into an integer. */
enum mu_qunit {
    MU_Q_MILLI,   /* cpu: milli-value, rounded up like Quantity.MilliValue() */
    MU_Q_BYTES,   /* memory-like: value, rounded up like Quantity.Value() */
    MU_Q_INTEGER, /* pods and extended resources: must be a whole number */
};

/*
 * Parses a Kubernetes quantity string ("500m", "1.5", "2e3", "64Gi", "1G",
 * "+4", ".5Ki") exactly, with Kubernetes' grammar: sign, digits with an
 * optional decimal point, then one suffix - binary (Ki Mi Gi Ti Pi Ei),
 * decimal (n u m "" k M G T P E) or an exponent (e3, E-2). Negative values
 * are accepted by the parser (callers reject them where they matter).
 *
 * Returns 0 and writes *out, or -EINVAL with err naming why:
 *   "quantities must match the regular expression ..." for bad syntax,
 *   "must be an integer" for a fractional MU_Q_INTEGER value,
 *   "value too large" when the result does not fit in int64.
 * *out is untouched on failure.
 */
int mu_quantity_parse(const char *s, enum mu_qunit unit, int64_t *out,
                      struct mu_err *err) MU_WARN_UNUSED;

/* Which unit a resource name uses (see the table at the top). */
enum mu_qunit mu_resource_unit(const char *name);

/*
 * Formats v (in the unit of `name`) the way kubectl would print it, shortest
 * exact form: cpu 1500 -> "1500m", 2000 -> "2"; memory 34359738368 -> "32Gi",
 * 1000000 -> "1M", 1000 -> "1k", 1234 -> "1234"; integers plainly.
 * Writes at most n bytes including the NUL into buf; returns buf.
 */
char *mu_quantity_format(const char *name, int64_t v, char *buf, size_t n);

/*
 * Whether an extended resource is an accelerator a node advertises, by
 * its name: a name part (after the '/') that is or begins with "gpu"
 * (nvidia.com/gpu, amd.com/gpu, nvidia.com/gpu.shared), one that begins
 * with "mig-" (nvidia.com/mig-1g.10gb), a domain that begins with "gpu."
 * (gpu.intel.com/i915, gpu.intel.com/xe), and habana.ai/gaudi,
 * aws.amazon.com/neuron, neuroncore and neurondevice, google.com/tpu.
 * cpu, memory, pods, hugepages and names without a domain are not.
 */
bool mu_resource_is_accelerator(const char *name);

/* The dimension registry. */
struct mu_resnames {
    int n;
    char *name[MU_RES_MAX];
};

/* Fills in cpu, memory and pods. */
void mu_resnames_init(struct mu_resnames *r);
void mu_resnames_release(struct mu_resnames *r);
/* Returns the index of name, registering it when create is true. Returns
 * -ENOENT when absent and !create, -ENOSPC when the registry is full. */
int mu_resnames_index(struct mu_resnames *r, const char *name, bool create);

struct mu_res {
    uint32_t set; /* bit i: dimension i was given */
    int64_t v[MU_RES_MAX];
};

static inline void mu_res_zero(struct mu_res *r)
{
    r->set = 0;
    for (int i = 0; i < MU_RES_MAX; i++)
        r->v[i] = 0;
}

static inline void mu_res_put(struct mu_res *r, int dim, int64_t v)
{
    r->v[dim] = v;
    r->set |= 1u << dim;
}

static inline int64_t mu_res_get(const struct mu_res *r, int dim)
{
    return r->v[dim];
}

static inline bool mu_res_has(const struct mu_res *r, int dim)
{
    return (r->set >> dim) & 1u;
}

/*
 * Saturating int64 arithmetic: a + b and a - b, clamped to
 * [INT64_MIN, INT64_MAX] instead of overflowing. The API server accepts
 * quantities up to 2^63 - 1 each (memory: 9223372036854775807, cpu:
 * 9223372036854775m), so any sum of two may not fit; a saturated sum
 * reads as "more than anything", which is what a scheduler needs of it.
 * Saturation loses information: (a + b) - b is not a once a + b hit the
 * bound, so a vector that ever saturated stays approximate (a node whose
 * pods sum past 2^63 stays "full").
 */
static inline int64_t mu_add_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t mu_sub_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* a += b; a -= b, each dimension saturating (mu_add_sat, mu_sub_sat); set
 * bits are or-ed; values may go negative on -=, which callers treat as a
 * bug they assert against. */
void mu_res_add(struct mu_res *a, const struct mu_res *b);
void mu_res_sub(struct mu_res *a, const struct mu_res *b);
/* a = max(a, b) and a = min(a, b) dimension by dimension over a.set | b.set,
 * absent reading as 0. */
void mu_res_max(struct mu_res *a, const struct mu_res *b);
/* True when every dimension is 0 (absent dims count as 0); `pods` ignored. */
bool mu_res_is_empty(const struct mu_res *r);

/*
 * "Requested-dimension" comparison: for every dimension where req > 0
 * (pods always skipped), have[d] >= req[d]. Absent dimensions of have read
 * as 0 when cap_inf is false and as unlimited when true. Returns -1 when
 * it fits, else the first dimension (lowest index) that does not.
 */
int mu_res_first_short(const struct mu_res *req, const struct mu_res *have,
                       bool cap_inf);

/* Adds "name: value" pairs of the set dimensions to a JSON-like listing:
 * writes `{cpu: 8, memory: 32Gi, nvidia.com/gpu: 1}` with names sorted, into
 * sb. Dimensions that are 0 are skipped unless keep_zero. */
void mu_res_format(const struct mu_res *r, const struct mu_resnames *names,
                   bool keep_zero, struct mu_sb *sb);

#endif
