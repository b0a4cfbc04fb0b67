/*
 * cluster.h - the scheduler's picture of the cluster: nodes, tasks (pods),
 * jobs (PodGroups) and queues, with the accounting every action relies on.
 *
 * One owner: the scheduler thread (or the simulator) owns a struct
 * mu_cluster and everything in it. Nothing here locks.
 *
 * Vocabulary as in volcano-api.md: a job is one PodGroup and its pods; a
 * task is one pod. Node accounting: idle = allocatable - used;
 * releasing = requests of tasks being evicted; pipelined = requests promised
 * to pipelined tasks; future idle = idle + releasing - pipelined.
 *
 * All status changes of a task go through mu_task_set_status() and
 * mu_task_place()/mu_task_unplace(), which keep node, job and queue sums and
 * the job's per-status counters exact, so the statement (statement.h) can
 * undo anything by calling them in reverse.
 *
 * Determinism: nodes, jobs and queues are kept in arrays sorted by name
 * (namespace/name), and each task list is in a total order; nothing depends
 * on hash order.
 */
#ifndef MU_SCHED_CLUSTER_H
#define MU_SCHED_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "api/object.h"
#include "api/resource.h"
#include "common/map.h"
#include "common/mu.h"
#include "common/slab.h"
#include "sched/devices.h"

enum mu_task_status {
    MU_TASK_PENDING,
    MU_TASK_ALLOCATED, /* this cycle: placed, will bind when committed */
    MU_TASK_PIPELINED, /* this cycle: promised a node once it frees up */
    MU_TASK_BINDING,   /* committed, bind in flight */
    MU_TASK_BOUND,     /* has a node name, not running yet */
    MU_TASK_RUNNING,
    MU_TASK_RELEASING, /* being evicted / terminating, still on its node */
    MU_TASK_SUCCEEDED,
    MU_TASK_FAILED,
    MU_TASK_UNKNOWN,
    MU_TASK__COUNT,
};
const char *mu_task_status_name(enum mu_task_status s);

/* Allocated-like: counts against node and queue (Allocated, Binding,
 * Bound, Running). Releasing tasks still use their node but no longer count
 * for their queue's allocated share. */
static inline bool mu_status_allocated(enum mu_task_status s)
{
    return s == MU_TASK_ALLOCATED || s == MU_TASK_BINDING ||
           s == MU_TASK_BOUND || s == MU_TASK_RUNNING;
}
/* Uses resources on its node: allocated-like or releasing. */
static inline bool mu_status_on_node(enum mu_task_status s)
{
    return mu_status_allocated(s) || s == MU_TASK_RELEASING;
}

struct mu_job;
struct mu_cnode;
struct mu_topo;

struct mu_task {
    struct mu_pod pod;         /* owned */
    char *key;                 /* "namespace/name", owned */
    struct mu_job *job;        /* NULL when the pod has no known group */
    struct mu_cnode *node;     /* where it runs or is placed, or NULL */
    enum mu_task_status status;
    int shape;                 /* equivalence class of (request, selector,
                                  affinity, tolerations); see mu_cluster */
    uint32_t dd_ext_dims;      /* dd->ext_dims and dd->shared (0, false */
    bool dd_shared;            /* without dd), kept here where placement
                                  reads the task already */
    int node_slot;             /* index in node->tasks, or -1 */
    uint32_t dd_quota_set;     /* dd->quota_set (0 without dd), here for
                                  the same reason: a place moves the quota,
                                  qreq less the pod's request in those */
    int64_t started_ms;        /* when it started running, on the clock
                                  the caller runs cycles by (its pod's
                                  status.startTime moved onto it); 0 when
                                  not known: the caller's to set */
    struct mu_devdemand *dd;   /* its DRA claims resolved, NULL without;
                                  it lives in the task's own allocation,
                                  right after the struct */
    struct mu_dclaim *dd_one;  /* mu_devdemand_one(dd), or NULL: a fit
                                  check and a take of a pod of one private
                                  claim read the claim, not the demand */
    const struct mu_res *qreq; /* what its queue counts: &pod.req, or
                                  with DRA claims dd->qreq (pod.req plus
                                  the devices of mapped classes) */
};

/* A scheduling gate that is not muster's keeps the pod out of muster's
 * plans too (another controller holds it back). */
static inline bool mu_task_gated_by_others(const struct mu_task *t)
{
    return t->pod.ngates > (t->pod.muster_gate ? 1u : 0u);
}

/* A node as the cycle sees it. Each sum below starts a cache line (its
 * set and low dimensions, cpu, memory, pods and the first extended names,
 * in that one line): a fit check, a score and a place read one line of
 * each, not two. On line boundaries: the cluster's slab
 * (mu_cluster.node_slab). */
struct mu_cnode {
    struct mu_node spec;       /* owned */
    _Alignas(64) int index;    /* position in cluster->nodes */
    uint32_t gen;              /* moves whenever its resources change
                                  (not at a change between allocated-like
                                  statuses, which moves none of them) */
    struct mu_devnode *devs;   /* its DRA slices (devices.h), borrowed; next
                                  to gen, which placement reads first */
    const void *dev_hint[MU_DEV_HINTS]; /* where a take on devs will read
                                  (mu_devices_take_hints), as of the last
                                  take here or change of its slices: asked
                                  for at once when a task is placed, never
                                  read through */
    struct mu_res idle;
    _Alignas(64) struct mu_res used;
    _Alignas(64) struct mu_res releasing;
    _Alignas(64) struct mu_res pipelined;
    _Alignas(64) struct mu_res devq; /* its DRA devices by quota name, in
                                  total */
    _Alignas(64) struct mu_res devused; /* of them, what its tasks' quotas
                                  take */
    size_t ntasks, cap_tasks;
    struct mu_task **tasks;    /* tasks using this node (any on-node status,
                                  plus pipelined) */
};

/* Nodes made at once, side by side (struct mu_cluster.node_slab). */
#define MU_CNODE_SLAB 64

/* A PodGroup's condition, as written to status.conditions. */
struct mu_condition {
    char *type;    /* "Unschedulable" or "Scheduled"; NULL = none */
    char *reason;
    char *message;
    int64_t since_ms; /* lastTransitionTime */
};

struct mu_cqueue;

/* Why a node does not fit a task. */
enum mu_fit_code {
    MU_FIT_OK = 0,
    MU_FIT_RESOURCE,      /* Insufficient <dim> */
    MU_FIT_PODS,          /* node(s) pod number exceeded */
    MU_FIT_SELECTOR,      /* didn't match Pod's node affinity/selector */
    MU_FIT_TAINT,         /* had untolerated taint */
    MU_FIT_UNSCHEDULABLE, /* were unschedulable */
    MU_FIT_DEVICES,       /* cannot allocate all claims */
    MU_FIT__COUNT,
};

struct mu_fit {
    enum mu_fit_code code;
    int dim; /* the short dimension, for MU_FIT_RESOURCE */
};

/* How many nodes failed a task, and why. */
struct mu_fit_hist {
    int nodes;                  /* nodes examined */
    int code[MU_FIT__COUNT];
    int res[MU_RES_MAX];        /* MU_FIT_RESOURCE by dimension */
};

/* The one constraint that blocks a pending job, found during a cycle. */
enum mu_why_kind {
    MU_WHY_NONE = 0,
    MU_WHY_QUEUE_MISSING,   /* spec.queue names no queue */
    MU_WHY_QUEUE_CLOSED,    /* the queue is not Open */
    MU_WHY_NOT_ENOUGH_TASKS,/* fewer valid pods than minMember */
    MU_WHY_ENQUEUE,         /* admission refused (text says by whom) */
    MU_WHY_QUEUE_SHARE,     /* the queue's deserved share / capability */
    MU_WHY_NODES,           /* no node fits some task (hist, task) */
    MU_WHY_WAITING,         /* pipelined: waits for evicted pods to go */
    MU_WHY_TURN,            /* fits, but the release window is full */
    MU_WHY_TOPOLOGY,        /* networkTopology: no domain holds the gang
                               (text says which tier and the best one) */
};

struct mu_why {
    enum mu_why_kind kind;
    char *text;                 /* owned detail for QUEUE_*, ENQUEUE */
    const struct mu_task *task; /* for NODES: the task that did not fit */
    struct mu_fit_hist hist;    /* for NODES */
    int placed;                 /* tasks the failed attempt did place */
    char *reclaim;              /* owned: why reclaim makes it no room yet
                                   (proportion's damping), or NULL */
};

struct mu_job {
    struct mu_podgroup pg;     /* owned */
    char *key;                 /* "namespace/name", owned */
    struct mu_cqueue *queue;   /* NULL when spec.queue names no queue */
    int32_t priority;          /* resolved from the PriorityClass */
    bool implicit;             /* made by muster for a pod without a group */
    size_t ntasks, cap_tasks;
    struct mu_task **tasks;    /* in task order once sorted */
    int count[MU_TASK__COUNT]; /* tasks per status */
    struct mu_res allocated;   /* requests of allocated-like tasks */
    /* the queue-side requests (mu_task.qreq) of all its tasks, whatever
     * their status: read it with mu_job_req_sum. Kept as tasks join; made
     * again from the tasks at the next read once one left or its request
     * changed (req_sum_stale). */
    struct mu_res req_sum;
    bool req_sum_stale;
    bool tasks_unsorted;       /* a task joined or priorities were resolved
                                  again since mu_cluster_link sorted tasks */
    int gated_others;          /* tasks held by a gate that is not muster's
                                  (mu_task_gated_by_others; a pod's gates
                                  change only with the pod, which leaves
                                  and joins again) */
    enum mu_pg_phase phase;    /* current phase (status.phase) */
    struct mu_condition cond;  /* current condition */
    int64_t inqueue_since_ms;
    int topo_skip;             /* networkTopology: the domains to pass over
                                  at its next try, those the try cap kept
                                  it from reaching (actions/topoplace.h) */
    bool reclaimed;            /* reclaim has evicted its pods, last at */
    int64_t reclaimed_ms;      /* this cycle time (proportion's window) */
    int running, succeeded, failed; /* status counters */
    struct mu_why why;         /* cycle scratch: reset at each cycle open */
    unsigned char wait_seen;   /* muster serve's gang-wait metric: 1 once
                                  seen short of minMember bound, 2 once its
                                  wait is counted or when first seen at
                                  minMember (its wait is not known); the
                                  engine ignores it */
};

/* The sum of the qreq of all of j's tasks (struct mu_job, req_sum): O(1)
 * unless a task left or changed its request since the last call. For a
 * walk that would add every task's request when all of them are pending
 * (proportion's open, once a cycle over every task of the cluster). A
 * cache: it may make the sum again in j, which is not otherwise changed
 * (so it takes j const, as its readers hold it). */
const struct mu_res *mu_job_req_sum(const struct mu_job *j);

/* Ready = allocated-like + succeeded (volcano-api.md §5). */
static inline int mu_job_ready_num(const struct mu_job *j)
{
    return j->count[MU_TASK_ALLOCATED] + j->count[MU_TASK_BINDING] +
           j->count[MU_TASK_BOUND] + j->count[MU_TASK_RUNNING] +
           j->count[MU_TASK_SUCCEEDED];
}
static inline int mu_job_waiting_num(const struct mu_job *j)
{
    return j->count[MU_TASK_PIPELINED];
}
static inline bool mu_job_ready(const struct mu_job *j)
{
    return mu_job_ready_num(j) >= j->pg.min_member;
}
/* Valid = allocated-like + succeeded + pipelined + pending. */
static inline int mu_job_valid_num(const struct mu_job *j)
{
    return mu_job_ready_num(j) + j->count[MU_TASK_PIPELINED] +
           j->count[MU_TASK_PENDING];
}

/* What proportion remembers of a queue's deserved share from cycle to
 * cycle, for its damping (proportion.shareWindow): the least it was in
 * each of MU_SHARE_SLOTS spans of the window; span k of time is kept at
 * slot k % MU_SHARE_SLOTS. Made by proportion, owned by the queue. */
#define MU_SHARE_SLOTS 8
struct mu_sharehist {
    int64_t span_ms;
    int64_t span[MU_SHARE_SLOTS]; /* the span each slot holds, -1 none */
    struct mu_res lo[MU_SHARE_SLOTS];
};

struct mu_cqueue {
    struct mu_queue_spec spec; /* owned */
    int index;
    struct mu_res allocated;   /* requests of allocated-like tasks */
    uint64_t alloc_gen;        /* moves whenever allocated changes (what
                                  plugins derive from it may key on it, as
                                  alloc_gen + 1, 0 meaning none: 64 bits,
                                  so that never wraps to 0) */
    size_t njobs, cap_jobs;
    struct mu_job **jobs;      /* sorted by key */
    /* Cycle scratch written by the proportion plugin at session open (and
     * read by overcommit, the why-pending text and the simulator): */
    bool has_deserved;
    struct mu_res deserved;
    struct mu_res real_capability; /* absent dimensions unlimited */
    struct mu_res inqueue;     /* minResources of admitted, unstarted jobs */
    struct mu_res settled;     /* the least deserved was over the last
                                  proportion.shareWindow (what reclaim
                                  counts a queue owed against) */
    struct mu_sharehist *shares; /* owned; NULL until proportion damps */
    /* The queue tree of one session (capacity with enableHierarchy sets
     * it at open; the session's close clears it): while in_tree, a change
     * of allocated is added to tree_allocated of the queue and of every
     * queue up from it. */
    bool in_tree;
    struct mu_cqueue *up;         /* the parent, NULL at the top */
    struct mu_res tree_allocated; /* its own and every queue's below it */
};

/* The claim_users key of tasks whose quota moves with the slices (no
 * "ns/name" key starts with '*'). */
#define MU_CLUSTER_SLICE_USERS "*slices"

struct mu_tlist {
    size_t n, cap;
    struct mu_task **v;
};

struct mu_cluster {
    struct mu_resnames rn;
    size_t nnodes, cap_nodes;
    struct mu_cnode **nodes;   /* sorted by name */
    /* The nodes' memory: MU_CNODE_SLAB at a time, side by side, whatever
     * comes between them (a cycle reads nodes in no order, and packed they
     * span the fewest pages); a removed node's place is reused first. */
    struct mu_slab node_slab;
    size_t ntasks, cap_tasks;
    struct mu_task **tasks;    /* sorted by key */
    size_t njobs, cap_jobs;
    struct mu_job **jobs;      /* sorted by key */
    size_t nqueues, cap_queues;
    struct mu_cqueue **queues; /* sorted by name */
    size_t npcs;
    struct mu_priorityclass *pcs;
    /* bumped when a PriorityClass is added, changed or removed; the tasks'
     * priorities were last resolved, all of them, at linked_pc_gen (a
     * task added since was resolved when added) */
    uint64_t pc_gen, linked_pc_gen;
    struct mu_map node_by_name, task_by_key, job_by_key, queue_by_name;
    struct mu_map shapes;      /* shape signature -> id + 1 */
    /* Tasks that arrived before their PodGroup ("ns/group" ->) or before
     * the node they run on (node name ->): struct mu_tlist *, owned. Watches
     * deliver objects in any order; these keep adoption O(1) per object. */
    struct mu_map wait_job, wait_node;
    int nshapes;
    struct mu_res total;       /* sum of node allocatable and devq */
    struct mu_devices dev;     /* DRA devices and claims (devices.h) */
    uint64_t dev_gen;          /* dev.gen the tasks' demands were made at */
    uint64_t dev_reach_gen;    /* dev.reach_gen and dev.reach_holds the */
    uint64_t dev_reach_holds;  /* nodes' reach lists were last brought to */
    struct mu_res dev_unbound_q; /* the unbound slices' devices in total */
    uint64_t dev_slice_gen;    /* dev.slice_gen of the last
                                  mu_cluster_dra_settle */
    /* Tasks by the claims and templates they name ("ns/claim" and
     * "ns/template@" -> struct mu_tlist *, owned): a claim's or template's
     * change re-resolves its users only. Under MU_CLUSTER_SLICE_USERS: the
     * tasks whose quota counts an All request by what the slices offer
     * (struct mu_devdemand.by_slices), re-resolved by mu_cluster_dra_settle
     * (cluster_dra.h) after slices changed. */
    struct mu_map claim_users;
    uint64_t node_gen;         /* bumped when nodes change (caches key on it) */
    uint64_t node_set_gen;     /* bumped when a node is added or removed or
                                  its labels change (what network domains,
                                  sched/topology.h, depend on) */
    /* Indexes of nodes whose resources changed, in order (a node may
     * appear more than once); a cycle's node index reads it to catch up,
     * and clears it at session open. */
    size_t ndirty, cap_dirty;
    int *dirty;
    /* The release window, set by the caller before a cycle (muster serve:
     * serve/enforce.h; the simulator leaves it off): the pods a cycle may
     * place for binding (< 0: no limit), the pods released and not yet
     * bound and the window (for /debug and the figures). */
    long release_budget;
    long release_inflight, release_window;
    /* The network domains (sched/topology.h), lent by the caller, who
     * owns them; NULL: none (a gang that asks networkTopology hard
     * waits, one that asks soft is placed anywhere). */
    struct mu_topo *topo;
};

void mu_cluster_init(struct mu_cluster *c);
void mu_cluster_release(struct mu_cluster *c);

/*
 * Adding objects. Each takes ownership of the decoded struct (whose
 * contents are moved in and the source zeroed) and returns the new entry,
 * or NULL with err set when an object with that name exists already.
 * Tasks are linked to their job by group name when the job exists (and
 * jobs adopt existing tasks of their group when added later); a task whose
 * pod has a nodeName and a running phase is accounted on that node.
 */
struct mu_cnode *mu_cluster_add_node(struct mu_cluster *c, struct mu_node *n,
                                     struct mu_err *err);
struct mu_cqueue *mu_cluster_add_queue(struct mu_cluster *c,
                                       struct mu_queue_spec *q,
                                       struct mu_err *err);
struct mu_job *mu_cluster_add_job(struct mu_cluster *c, struct mu_podgroup *pg,
                                  struct mu_err *err);
struct mu_task *mu_cluster_add_task(struct mu_cluster *c, struct mu_pod *p,
                                    struct mu_err *err);
/* Adds or replaces (by name) a PriorityClass. */
void mu_cluster_add_priorityclass(struct mu_cluster *c,
                                  struct mu_priorityclass *pc);
/* Removes a task (its pod was deleted) and frees it. */
void mu_cluster_remove_task(struct mu_cluster *c, struct mu_task *t);

/*
 * Updates from a watch. Each takes the newly decoded object (moved in, the
 * source zeroed) and returns the entry; unknown names are added. What the
 * cycle derived (a job's phase and condition, a task's in-flight status)
 * is the caller's to keep: an update replaces what the API says.
 *
 * mu_cluster_update_node keeps the node's tasks and moves its idle
 * resources by the change in allocatable; node_gen moves only when
 * labels, taints, unschedulable or allocatable changed (a heartbeat that
 * changes nothing else costs nothing).
 * mu_cluster_update_task replaces the pod: it is removed and added again,
 * so its status follows the new pod; the caller re-applies its own
 * reservations (a task it is binding) afterwards. The new task takes the
 * old one's place in tasks (sorted by key): an update costs O(log n) there,
 * a removal a move of the entries after it.
 * mu_cluster_update_job and _queue replace the spec, keeping the entry,
 * its tasks and jobs, and the job's phase and condition.
 */
struct mu_cnode *mu_cluster_update_node(struct mu_cluster *c, struct mu_node *n);
struct mu_task *mu_cluster_update_task(struct mu_cluster *c, struct mu_pod *p,
                                       struct mu_err *err);
struct mu_job *mu_cluster_update_job(struct mu_cluster *c,
                                     struct mu_podgroup *pg);
struct mu_cqueue *mu_cluster_update_queue(struct mu_cluster *c,
                                          struct mu_queue_spec *q);
/* Deletions: a node's tasks go back to pending (their pods will be deleted
 * or rebound); a job's tasks lose their job; a queue's jobs their queue. */
void mu_cluster_remove_node(struct mu_cluster *c, struct mu_cnode *n);
void mu_cluster_remove_job(struct mu_cluster *c, struct mu_job *j);
void mu_cluster_remove_queue(struct mu_cluster *c, struct mu_cqueue *q);
void mu_cluster_remove_priorityclass(struct mu_cluster *c, const char *name);

struct mu_cnode *mu_cluster_node(const struct mu_cluster *c, const char *name);
struct mu_job *mu_cluster_job(const struct mu_cluster *c, const char *ns,
                              const char *name);
struct mu_cqueue *mu_cluster_queue(const struct mu_cluster *c,
                                   const char *name);
struct mu_task *mu_cluster_task(const struct mu_cluster *c, const char *ns,
                                const char *name);

/* Value of a PriorityClass by name; the global default when name is NULL;
 * 0 when neither exists. *found tells whether name was found. */
int32_t mu_cluster_priority(const struct mu_cluster *c, const char *name,
                            bool *found);

/*
 * Re-links everything after objects were added: resolves job queues and
 * priorities, task priorities, sorts each job's tasks into task order
 * (priority desc, index asc, creation, name) and each queue's jobs. Call
 * after a batch of additions and before a cycle. It reads every job but
 * no task that did not change: a task's priority is resolved when it is
 * added and again, for every task, only after a PriorityClass changed
 * (pc_gen); a job's tasks are sorted again only when one joined or the
 * priorities were resolved again (at 10,000 nodes and 124,000 pods,
 * reading every task took 11-13 ms a cycle).
 */
void mu_cluster_link(struct mu_cluster *c);

/*
 * Accounting primitives (the only way statuses change).
 * mu_task_place: status PENDING -> st (ALLOCATED, PIPELINED, BINDING,
 * BOUND, RUNNING) on node n. mu_task_unplace: back to PENDING, off its
 * node. mu_task_set_status: any on-node status change (e.g. RUNNING ->
 * RELEASING, ALLOCATED -> BINDING, RUNNING -> SUCCEEDED, which also takes
 * the task off its node). Each moves the node's generation and logs it
 * dirty, except a change between allocated-like statuses (ALLOCATED ->
 * BINDING, BOUND -> RUNNING): no node sum (idle, used, releasing,
 * pipelined, devices) moves with it.
 */
void mu_task_place(struct mu_cluster *c, struct mu_task *t, struct mu_cnode *n,
                   enum mu_task_status st);
void mu_task_unplace(struct mu_cluster *c, struct mu_task *t);
void mu_task_set_status(struct mu_cluster *c, struct mu_task *t,
                        enum mu_task_status st);

/* future idle of n in dimension d */
static inline int64_t mu_node_future_idle(const struct mu_cnode *n, int d)
{
    return n->idle.v[d] + n->releasing.v[d] - n->pipelined.v[d];
}

/* Counts n's DRA devices again after its slices changed: its devq by
 * quota name (and the cluster's total with it) and its take hints. */
void mu_cluster_node_devices(struct mu_cluster *c, struct mu_cnode *n);

/* Moves n's generation and logs it dirty (its resources or devices
 * changed outside mu_task_place and friends). */
void mu_cluster_touch_node(struct mu_cluster *c, struct mu_cnode *n);
/* After the inventory's slices not bound to one node changed
 * (dev.reach_gen: each node's reach list is made again, and their devices
 * counted in the total once) or one of their devices was held, freed or
 * promised (dev.reach_holds): every node that reaches one is touched
 * (mu_cluster_dev_reach checks first whether either moved). */
void mu_cluster_dev_reach_all(struct mu_cluster *c);
/* Whether either moved since: a task placed calls this, so inline. */
static inline void mu_cluster_dev_reach(struct mu_cluster *c)
{
    if (c->dev.reach_gen != c->dev_reach_gen ||
        c->dev.reach_holds != c->dev_reach_holds)
        mu_cluster_dev_reach_all(c);
}
/* Resolves t's claims again (the inventory changed): a placed task is
 * taken off its node and put back with the same status, so every sum
 * follows the new demand. */
void mu_cluster_redemand_task(struct mu_cluster *c, struct mu_task *t);

/* A deterministic UID for an object that has none: a UUID-shaped hex
 * string derived from kind/namespace/name. Writes 37 bytes into buf. */
void mu_fake_uid(const char *kind, const char *ns, const char *name,
                 char buf[37]);

#endif
