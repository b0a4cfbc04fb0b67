/*
 * conf.h - the scheduler configuration, in Volcano's volcano-scheduler.conf
 * format (volcano-api.md §4): an `actions` string, `tiers` of plugin
 * options with Volcano's enable flags, plugin `arguments`, and action
 * `configurations`.
 *
 * Parsing is strict where Volcano is silent: an unknown action or plugin is
 * an error; a plugin Volcano has but muster does not is a warning and is
 * left out; an argument of the wrong type is a warning (Volcano ignores it
 * silently) and the default is used. Warnings are collected in the conf so
 * the caller prints them once.
 *
 * Ownership: struct mu_conf owns everything in it; mu_conf_release() frees.
 */
#ifndef MU_SCHED_CONF_H
#define MU_SCHED_CONF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/mu.h"
#include "sched/actions/action_list.h"

/* Most actions, tiers and plugins per tier a configuration may list. */
#define MU_CONF_MAX_ACTIONS 16
#define MU_CONF_MAX_TIERS 8
#define MU_CONF_MAX_PLUGINS 32
/* Largest configuration file read. */
#define MU_CONF_MAX_BYTES (1u << 20)

/* MU_ACT_ENQUEUE, MU_ACT_ALLOCATE, ... in the order of action_list.h. */
enum mu_action {
#define X(id, name) MU_ACT_##id,
    MU_ACTION_LIST(X)
#undef X
    MU_ACT__COUNT,
};
const char *mu_action_name(enum mu_action a);

/* Volcano's per-plugin enable flags. The YAML spellings (exactly as
 * Volcano's, some "enable", some "enabled") are in conf.c. Every flag
 * defaults to true except enableHierarchy, which Volcano treats as off
 * unless it is written true. */
enum mu_flag {
    MU_FLAG_JOB_ORDER,        /* enableJobOrder */
    MU_FLAG_HIERARCHY,        /* enableHierarchy */
    MU_FLAG_JOB_READY,        /* enableJobReady */
    MU_FLAG_JOB_PIPELINED,    /* enableJobPipelined */
    MU_FLAG_TASK_ORDER,       /* enableTaskOrder */
    MU_FLAG_PREEMPTABLE,      /* enablePreemptable */
    MU_FLAG_RECLAIMABLE,      /* enableReclaimable */
    MU_FLAG_PREEMPTIVE,       /* enablePreemptive */
    MU_FLAG_QUEUE_ORDER,      /* enableQueueOrder */
    MU_FLAG_CLUSTER_ORDER,    /* enabledClusterOrder */
    MU_FLAG_PREDICATE,        /* enablePredicate */
    MU_FLAG_BEST_NODE,        /* enableBestNode */
    MU_FLAG_NODE_ORDER,       /* enableNodeOrder */
    MU_FLAG_TARGET_JOB,       /* enableTargetJob */
    MU_FLAG_RESERVED_NODES,   /* enableReservedNodes */
    MU_FLAG_JOB_ENQUEUED,     /* enableJobEnqueued */
    MU_FLAG_VICTIM,           /* enabledVictim */
    MU_FLAG_JOB_STARVING,     /* enableJobStarving */
    MU_FLAG_OVERUSED,         /* enabledOverused */
    MU_FLAG_ALLOCATABLE,      /* enabledAllocatable */
    MU_FLAG_HYPERNODE_ORDER,  /* enabledHyperNodeOrder */
    MU_FLAG_SUBJOB_READY,     /* enabledSubJobReady */
    MU_FLAG_SUBJOB_PIPELINED, /* enabledSubJobPipelined */
    MU_FLAG_SUBJOB_ORDER,     /* enabledSubJobOrder */
    MU_FLAG_HYPERNODE_GRADIENT, /* enabledHyperNodeGradient */
    MU_FLAG__COUNT,
};
/* The YAML key of a flag ("enablePreemptable"). */
const char *mu_flag_key(enum mu_flag f);

struct mu_plugin_opt {
    char *name;
    uint32_t off;  /* bit f set: flag f was given as false */
    json_t *args;  /* the `arguments` mapping (owned), never NULL */
};

static inline bool mu_plugin_opt_on(const struct mu_plugin_opt *o,
                                    enum mu_flag f)
{
    return !((o->off >> f) & 1u);
}

struct mu_tier {
    int n;
    struct mu_plugin_opt plugins[MU_CONF_MAX_PLUGINS];
};

/* deviceClassMappings (Kueue's shape): the devices of a DRA class count in
 * queue quotas as the named resource (sched/devices.h). */
struct mu_devmap {
    char *class_name;
    char *resource;
};
/* Most mappings a configuration may list. */
#define MU_CONF_MAX_DEVMAPS 64

/* hyperNodeTiers: network domains derived from node labels, for clusters
 * without HyperNodes (sched/topology.h): [{nodeLabel, tierName}], tier 1
 * first; tierName defaults to the label. */
struct mu_label_tier {
    char *label;
    char *name;
};
/* Most label tiers a configuration may list. */
#define MU_CONF_MAX_LABEL_TIERS 8

struct mu_conf {
    int nactions;
    enum mu_action actions[MU_CONF_MAX_ACTIONS];
    int ntiers;
    struct mu_tier tiers[MU_CONF_MAX_TIERS];
    json_t *configurations; /* action name -> arguments object (owned) */
    size_t ndevmaps;
    struct mu_devmap *devmaps; /* one per class, in the order given */
    size_t nlabel_tiers;
    struct mu_label_tier *label_tiers; /* tier k at [k - 1] */
    size_t nwarnings;
    char **warnings;        /* owned, in the order found */
    /* reclaim is listed but no plugin says which queue is over its share
     * (proportion with enableReclaimable): the action does nothing, and a
     * warning says so */
    bool reclaim_inert;
};

/* Plugin names muster implements, NULL-terminated, in registry order (made
 * from plugins/plugin_list.h, as the registry is); conf.c refuses anything
 * not listed here or in its list of Volcano plugins muster warns about. */
extern const char *const mu_conf_known_plugins[];

/*
 * Parses a configuration. `name` is used in messages ("sched.conf: tiers[1]
 * .plugins[2].name: unknown plugin \"foo\""). On failure returns -EINVAL
 * and leaves *out released (all zero).
 */
int mu_conf_parse(const char *name, const char *text, size_t len,
                  struct mu_conf *out, struct mu_err *err) MU_WARN_UNUSED;
int mu_conf_load_file(const char *path, struct mu_conf *out,
                      struct mu_err *err) MU_WARN_UNUSED;

/* Which plugin shares the cluster between queues: proportion (weights,
 * flat), capacity (spec.deserved, flat) or capacity with enableHierarchy
 * (a tree of queues, spec.parent); a configuration names at most one. */
enum mu_conf_share {
    MU_SHARE_NONE,
    MU_SHARE_PROPORTION,
    MU_SHARE_CAPACITY,
    MU_SHARE_TREE,
};
enum mu_conf_share mu_conf_share(const struct mu_conf *c);

/*
 * The built-in default: Volcano's shipped Helm configuration with reclaim
 * and preempt switched on:
 *   actions: "enqueue, allocate, backfill, reclaim, preempt"
 *   tiers:
 *   - plugins: [priority, gang (enablePreemptable: false), conformance]
 *   - plugins: [overcommit, drf (enablePreemptable: false), predicates,
 *               proportion, nodeorder, binpack]
 */
void mu_conf_default(struct mu_conf *out);
void mu_conf_release(struct mu_conf *c);

/* The YAML text of the built-in default (what `muster` documents). */
extern const char mu_conf_default_text[];

/*
 * Typed arguments, with Volcano's typing rules: an int argument accepts a
 * YAML integer only; a float accepts an integer or a real; a bool accepts a
 * boolean or a string Go's ParseBool accepts ("1", "t", "T", "TRUE",
 * "true", "True", "0", "f", ...); a string accepts a string only. A value of
 * another type adds a warning to conf ("plugin binpack: argument
 * binpack.weight: want an integer, got string \"x\"; using 1") and returns
 * the default. Absent keys return the default silently.
 */
/*
 * Adds the warning "plugin <o's name>: <fmt text>" to c, once: a text
 * already there is not added again (plugins open every cycle). For what a
 * plugin checks beyond an argument's type. c may be NULL: then nothing.
 */
void mu_conf_arg_warn(struct mu_conf *c, const struct mu_plugin_opt *o,
                      const char *fmt, ...) MU_PRINTF(3, 4);

int64_t mu_conf_arg_int(struct mu_conf *c, const struct mu_plugin_opt *o,
                        const char *key, int64_t def);
double mu_conf_arg_float(struct mu_conf *c, const struct mu_plugin_opt *o,
                         const char *key, double def);
bool mu_conf_arg_bool(struct mu_conf *c, const struct mu_plugin_opt *o,
                      const char *key, bool def);
const char *mu_conf_arg_str(struct mu_conf *c, const struct mu_plugin_opt *o,
                            const char *key, const char *def);

#endif
