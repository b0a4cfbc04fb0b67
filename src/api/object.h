/*
 * object.h - the Kubernetes and Volcano objects muster reads, decoded from
 * their JSON form (jansson) into plain C structs.
 *
 * Everything is decoded exactly as the API server would default and read it:
 * a container that sets only limits requests its limits; a pod's request is
 * computed the way kube-scheduler computes it (max of the sum of containers
 * plus sidecars and each init container, plus overhead, plus pods: 1);
 * quantities use resource.h.
 *
 * Ownership: a decoded struct owns every string and array in it; release it
 * with the matching _release(). Decoders never keep a reference to the
 * json_t they read. On failure a decoder returns -EINVAL, writes err with
 * the field path at fault ("spec.containers[0].resources.limits.
 * nvidia.com/gpu: must be an integer"), and leaves *out zeroed (safe to
 * release). Callers prefix err with the file and object.
 *
 * Resource names met while decoding are registered in `rn` (the cluster's
 * dimension registry); running out of dimensions is -ENOSPC.
 *
 * The parts the decoders share live below them: field access with paths
 * (json.h), labels, taints, tolerations and node selectors with their
 * matching rules (match.h, included), durations and RFC 3339 times
 * (times.h, included).
 */
#ifndef MU_API_OBJECT_H
#define MU_API_OBJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/match.h"
#include "api/resource.h"
#include "api/times.h"
#include "common/mu.h"

/* Annotation keys muster reads. */
#define MU_ANN_GROUP "scheduling.k8s.io/group-name"
#define MU_ANN_GROUP_ALIAS "scheduling.volcano.sh/group-name"
#define MU_ANN_TASK_SPEC "volcano.sh/task-spec"
#define MU_ANN_TASK_INDEX "volcano.sh/task-index"
#define MU_ANN_PREEMPTABLE "volcano.sh/preemptable"
#define MU_ANN_TASK_PRIORITY "volcano.sh/task-priority"
#define MU_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
/* The scheduling gate on pods muster creates (DESIGN.md). */
#define MU_GATE_NAME "muster.io/gang"
/* Simulation annotations (see README "Simulated time"). */
#define MU_ANN_SUBMIT_AT "muster.io/submit-at"
#define MU_ANN_RUN_FOR "muster.io/run-for"
/* On a PodGroup: fields of what made it (its vcjob) that muster does not act
 * on, ", "-joined (mu_podgroup.unsupported). */
#define MU_ANN_UNSUPPORTED "muster.io/unsupported"

struct mu_meta {
    char *ns;      /* NULL for cluster-scoped objects */
    char *name;    /* required */
    char *uid;     /* NULL when absent */
    int64_t created; /* creationTimestamp, seconds since the epoch; 0 absent */
    struct mu_kvs labels;
    struct mu_kvs annotations;
    /* the controller ownerReference (controller: true), if any */
    char *owner_kind;
    char *owner_name;
    char *owner_uid;
    bool deleting; /* metadata.deletionTimestamp is set */
};
void mu_meta_release(struct mu_meta *m);
/* Decodes metadata. namespaced: default ns to "default" when absent. */
int mu_meta_decode(const json_t *j, bool namespaced, struct mu_meta *out,
                   struct mu_err *err);
/* The head every object shares: j must be an object; metadata decoded
 * into meta, spec and status borrowed (NULL when absent). */
int mu_object_head(const json_t *j, bool namespaced, struct mu_meta *meta,
                   const json_t **spec, const json_t **status,
                   struct mu_err *err);

struct mu_node {
    struct mu_meta meta;
    struct mu_res allocatable; /* status.allocatable, else status.capacity */
    size_t ntaints;
    struct mu_taint *taints;
    bool unschedulable; /* spec.unschedulable */
};
int mu_node_decode(const json_t *j, struct mu_resnames *rn, struct mu_node *out,
                   struct mu_err *err);
void mu_node_release(struct mu_node *n);

enum mu_pod_phase {
    MU_POD_PENDING,
    MU_POD_RUNNING,
    MU_POD_SUCCEEDED,
    MU_POD_FAILED,
    MU_POD_UNKNOWN,
};
const char *mu_pod_phase_name(enum mu_pod_phase p);
/* status.phase as the API writes it: absent (NULL) is Pending, anything
 * unrecognised Unknown. */
enum mu_pod_phase mu_pod_phase_parse(const char *s);

struct mu_pod {
    struct mu_meta meta;
    char *scheduler_name;   /* spec.schedulerName, default "default-scheduler" */
    char *node_name;        /* spec.nodeName or NULL */
    enum mu_pod_phase phase;
    struct mu_res req;      /* effective request, including pods: 1 */
    bool besteffort;        /* no request other than pods */
    int32_t priority;       /* spec.priority, else 0 (resolved later) */
    bool has_priority;
    char *priority_class;   /* spec.priorityClassName or NULL */
    bool preempt_never;     /* spec.preemptionPolicy: Never */
    struct mu_kvs node_selector;
    struct mu_affinity affinity;
    size_t ntol;
    struct mu_toleration *tol;
    size_t ngates;          /* spec.schedulingGates count */
    bool muster_gate;       /* one of them is muster's (MU_GATE_NAME): the
                               pod waits for muster to release its gang */
    char *group;            /* group annotation (either spelling) or NULL */
    char *task_spec;        /* volcano.sh/task-spec annotation/label or NULL */
    int task_index;         /* volcano.sh/task-index, else the last "-N" of the
                               name, else -1 */
    bool preemptable;       /* volcano.sh/preemptable, default true */
    int64_t submit_at_ms;   /* muster.io/submit-at, default 0 */
    int64_t run_for_ms;     /* muster.io/run-for, -1 = runs until evicted */
    int64_t started;        /* status.startTime, seconds since the epoch;
                               0 absent */
    bool kube_only;         /* the spec asks for something that only
                               kube-scheduler checks or prepares, which
                               muster's engine does not model: a volume
                               from a claim (persistentVolumeClaim,
                               ephemeral) or one it counts per node (csi,
                               gcePersistentDisk, awsElasticBlockStore,
                               azureDisk, cinder, rbd, iscsi),
                               resourceClaims, pod affinity or
                               anti-affinity, topologySpreadConstraints, a
                               container hostPort, spec.overhead */
    size_t nclaims;         /* spec.resourceClaims, in spec order */
    struct mu_pod_claim {
        char *name;         /* the entry's name */
        char *claim;        /* resourceClaimName, or the claim made from
                               the template (status.resourceClaimStatuses);
                               NULL while not made yet */
        char *tmpl;         /* resourceClaimTemplateName or NULL */
    } *claims;
    char *ext_claim;        /* status.extendedResourceClaimStatus.
                               resourceClaimName: the claim kube-scheduler
                               made for the extended resources DRA serves
                               (KEP-5004), or NULL */
};
int mu_pod_decode(const json_t *j, struct mu_resnames *rn, struct mu_pod *out,
                  struct mu_err *err);
void mu_pod_release(struct mu_pod *p);

enum mu_pg_phase {
    MU_PG_NONE = 0, /* not set yet */
    MU_PG_PENDING,
    MU_PG_INQUEUE,
    MU_PG_RUNNING,
    MU_PG_UNKNOWN,
    MU_PG_COMPLETED,
};
const char *mu_pg_phase_name(enum mu_pg_phase p);

/* spec.networkTopology: the whole gang inside one HyperNode (sched/
 * topology.h). highestTierAllowed absent: any tier; highestTierName is
 * resolved against the tiers' names at each cycle. */
enum mu_topo_mode { MU_TOPO_NONE = 0, MU_TOPO_HARD, MU_TOPO_SOFT };
struct mu_netopo {
    enum mu_topo_mode mode;  /* NONE when the field is absent */
    int highest_tier;        /* highestTierAllowed, -1 when absent */
    char *highest_tier_name; /* highestTierName or NULL */
};

struct mu_podgroup {
    struct mu_meta meta;
    int32_t min_member;       /* spec.minMember (>= 0; absent = 0) */
    size_t nmin_task;         /* spec.minTaskMember, sorted by task name */
    struct mu_min_task {
        char *task;
        int32_t min;
    } *min_task;
    char *queue;              /* spec.queue, default "default" */
    char *priority_class;     /* spec.priorityClassName or NULL */
    struct mu_res min_resources;
    bool has_min_resources;   /* spec.minResources present */
    enum mu_pg_phase phase;   /* status.phase */
    int64_t submit_at_ms;
    struct mu_netopo topo;    /* spec.networkTopology */
    char *unsupported;        /* the fields set that muster does not act on
                                 (spec.subGroupPolicy,
                                 and its vcjob's from MU_ANN_UNSUPPORTED),
                                 ", "-joined, or NULL: said on its status */
};
int mu_podgroup_decode(const json_t *j, struct mu_resnames *rn,
                       struct mu_podgroup *out, struct mu_err *err);
void mu_podgroup_release(struct mu_podgroup *pg);

enum mu_queue_state {
    MU_QUEUE_OPEN = 0,
    MU_QUEUE_CLOSED,
    MU_QUEUE_CLOSING,
    MU_QUEUE_UNKNOWN,
};
const char *mu_queue_state_name(enum mu_queue_state s);

struct mu_queue_spec {
    struct mu_meta meta;
    int32_t weight;          /* default 1; 0 becomes 1 (webhook); <0 error */
    struct mu_res capability;/* absent dimensions are unlimited */
    struct mu_res guarantee; /* spec.guarantee.resource */
    struct mu_res deserved;  /* spec.deserved (capacity plugin) */
    bool reclaimable;        /* default true */
    int32_t priority;        /* spec.priority */
    char *parent;            /* spec.parent or NULL */
    enum mu_queue_state state; /* status.state, default Open */
    int64_t submit_at_ms;
};
int mu_queue_decode(const json_t *j, struct mu_resnames *rn,
                    struct mu_queue_spec *out, struct mu_err *err);
void mu_queue_spec_release(struct mu_queue_spec *q);

struct mu_priorityclass {
    char *name;
    int32_t value;
    bool global_default;
    bool preempt_never;
};
int mu_priorityclass_decode(const json_t *j, struct mu_priorityclass *out,
                            struct mu_err *err);
void mu_priorityclass_release(struct mu_priorityclass *pc);

/*
 * Validation shared with the API server: a resource list (requests,
 * limits, capability, minResources ...) at `path`. Rejects fractional
 * extended resources ("must be an integer"), negative values ("must be
 * greater than or equal to 0") and bad syntax, naming path.name.
 */
int mu_reslist_decode(const json_t *j, const char *path, struct mu_resnames *rn,
                      struct mu_res *out, struct mu_err *err);

#endif
