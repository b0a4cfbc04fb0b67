/*
 * sim.h - `muster simulate`: the same cycle code on a cluster and a
 * workload read from YAML, in simulated time.
 *
 * Objects arrive at their muster.io/submit-at time (default 0); a pod runs
 * for its muster.io/run-for duration after it is bound (default: until the
 * end), then Succeeded. A cycle runs at every second of simulated time in
 * which something changed, and time jumps to the next arrival or completion
 * when nothing did. Evicted pods terminate at the next tick: pods made by a
 * controller (a vcjob, or any pod with a controller ownerReference) come
 * back Pending, as their controller recreates them; bare pods are gone.
 *
 * Objects made as the live controllers make them (api/implicit.h, the
 * rules `muster serve` follows): a pod without a group annotation gets the
 * PodGroup podgroup-<uid of its controlling owner> (or podgroup-<pod uid>),
 * minMember 1 or its owner's scheduling.volcano.sh/group-min-member; and
 * Queue "default" is made when missing. The owner's annotations are read
 * from the input: apps/v1 ReplicaSets, StatefulSets and Deployments are
 * kept (not scheduled; read at load, whatever their submit-at) and a pod's
 * controlling ownerReference (controller: true) names one by kind,
 * namespace and name (and uid, when both carry one). Only the direct owner
 * counts: a Deployment's pods are owned by its ReplicaSet, to which
 * Kubernetes' Deployment controller copies the Deployment's annotations,
 * so the input's ReplicaSet must carry them, as in a live cluster.
 *
 * Deterministic: nothing reads the clock; the same files give the same
 * bytes.
 *
 * Owner: one thread; struct mu_sim owns everything in it.
 */
#ifndef MU_SIM_SIM_H
#define MU_SIM_SIM_H

#include <stdio.h>

#include "sched/cluster.h"
#include "sched/conf.h"
#include "sched/topology.h"
#include "sim/output.h"

/* Simulated seconds between cycles while something changes. */
#define MU_SIM_PERIOD_MS 1000
/* Simulated time after which a run stops by default (24 h). */
#define MU_SIM_DEFAULT_UNTIL_MS (24LL * 3600 * 1000)

struct mu_arrival;

struct mu_sim {
    struct mu_cluster cluster;
    struct mu_topo topo;        /* its HyperNodes, lent to cluster.topo */
    uint64_t topo_logged;       /* topo.warn_sig last logged */
    struct mu_conf conf;
    size_t narr, cap_arr, next_arr;
    struct mu_arrival *arr;     /* sorted by time, then input order */
    int64_t now_ms;
    int64_t until_ms;
    int errors;                 /* objects rejected (each reported) */
    FILE *log;                  /* where errors and warnings go (stderr) */
    struct mu_sb timeline;
    struct mu_map job_where;    /* PodGroup key -> "file:line" (owned) */
    struct mu_map owners;       /* "Kind/ns/name" -> apps/v1 object (ref) */
    json_t *vcjobs;             /* [{"job": defaulted Job, "podgroup":
                                   "ns/name"}] in arrival order (-o json) */
    int cycles;
    bool quiet;                 /* keep no timeline (--quiet): the table
                                   prints only the final state */
    bool strict;                /* --strict: an unknown field refuses its
                                   object (api/strict.h), as kubectl
                                   --validate=strict; else a warning */
};

/* conf is moved into the simulator (and zeroed). */
void mu_sim_init(struct mu_sim *s, struct mu_conf *conf, FILE *log);
void mu_sim_release(struct mu_sim *s);

/* Manifest files read from one directory at most (mu_sim_load); beyond
 * it none of them is read and the directory is reported. */
#define MU_SIM_DIR_MAX_FILES 10000

/*
 * Reads every object of a YAML/JSON file (or "-"); a directory stands for
 * every *.yaml, *.yml and *.json file directly in it (not in its
 * subdirectories, and no hidden file), read in byte order of their names
 * (a directory without one is an error, as is one with more than
 * MU_SIM_DIR_MAX_FILES). A file that does not
 * parse is reported (file:line:col) and contributes nothing; an object that
 * does not decode is reported (file:line: Kind ns/name: field: why),
 * counted in s->errors and skipped; the rest load. Returns 0, or -errno when
 * the file cannot be read or parsed.
 */
int mu_sim_load(struct mu_sim *s, const char *path);

/* The same for YAML text in memory; name stands for the file. */
int mu_sim_load_text(struct mu_sim *s, const char *name, const char *text);

/*
 * One step of the world at s->now_ms, without a cycle: objects due arrive,
 * evicted pods terminate, pods whose run-for elapsed succeed; then the
 * cluster is linked. Returns true when anything changed. mu_sim_run calls
 * it before every cycle; tests call it to build a cluster.
 */
bool mu_sim_step(struct mu_sim *s);

/* Runs until nothing is left to happen or until_ms. */
void mu_sim_run(struct mu_sim *s);

/* Output of the final state (output.h). */
void mu_sim_print_table(struct mu_sim *s, FILE *out);
void mu_sim_print_json(struct mu_sim *s, FILE *out);
void mu_sim_print_yaml(struct mu_sim *s, FILE *out);

#endif
