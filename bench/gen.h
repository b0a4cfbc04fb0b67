/*
 * gen.h - a deterministic synthetic GPU cluster for the benchmarks.
 *
 * What it builds (into an empty, initialised struct mu_cluster):
 *
 *   nodes    "node-NNNNNN": cpu 96, memory 1Ti, pods 110, nvidia.com/gpu 8,
 *            label nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
 *   queues   "queue-NNNN", weights 1, 2, 3, 4, 1, 2, ... (Open, reclaimable,
 *            no capability)
 *   gangs    PodGroups "bench/gang-NNNNNNN" of 1, 2, 4, 8 or 16 pods
 *            (minMember = size, minResources = size x the pod request), each
 *            in a queue picked by the generator; pods "<gang>-worker-NN" ask
 *            for nvidia.com/gpu 1, cpu 8, memory 32Gi, are Pending, and have
 *            no nodeName. The sizes come from a shuffled table of 20 slots
 *            (16 x10, 8 x3, 4 x2, 2 x3, 1 x2: 200 pods in 20 gangs, a mean of
 *            exactly 10), so P pending pods make about P / 10 gangs; the
 *            last gang is cut to what is left of the pod budget.
 *   dra      optionally, the GPUs come through DRA instead: no node has
 *            nvidia.com/gpu allocatable; each has a ResourceSlice of 8
 *            devices (driver gpu.bench, pool = the node), the DeviceClass
 *            gpu.bench maps them to nvidia.com/gpu (extendedResourceName),
 *            and every pod asks for its GPU through a claim from the
 *            template bench/one-gpu; a running pod's claim is a
 *            ResourceClaim allocated the device of its GPU slot.
 *   claims   with dra, a pending pod's claim is a ResourceClaim too
 *            (<pod>-gpu, unallocated), as the resourceclaim controller
 *            makes it before the scheduler sees the pod; with selectors,
 *            its request has a CEL selector of its own
 *            (device.driver == "gpu.bench", which every device passes).
 *   topology optionally, nodes carry BENCH_RACK_LABEL (rack-NNNN, 32 nodes
 *            a rack) and BENCH_ZONE_LABEL (zone-NNN, 16 racks a zone), and
 *            every pending gang asks networkTopology hard: highestTierAllowed
 *            1 (one rack) for gangs of up to 8 pods, 2 (one zone) for the
 *            rest; with hyperNodeTiers [rack, zone] they are the tiers.
 *   running  optionally, gangs "bench/run-NNNNNNN" of the same shapes
 *            already Running (PodGroup phase Running, pods phase Running
 *            with spec.nodeName), packed onto nodes in order until
 *            `running` x the cluster's GPUs are in use. They come on top of
 *            the P pending pods.
 *
 * Determinism: everything derives from spec->seed through xorshift64*;
 * nothing reads the clock. Same spec, same cluster, byte for byte.
 *
 * Names are generated in sorted order so that the cluster's sorted inserts
 * append (generation stays O(n log n)); objects are filled in directly (no
 * JSON), every string heap-allocated, and handed to mu_cluster_add_*,
 * which takes ownership. mu_cluster_link() is called at the end.
 *
 * Thread: none; the caller owns the cluster.
 */
#ifndef MU_BENCH_GEN_H
#define MU_BENCH_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/cluster.h"

#define BENCH_RACK_LABEL "bench.muster.io/rack"
#define BENCH_ZONE_LABEL "bench.muster.io/zone"
#define BENCH_RACK_NODES 32
#define BENCH_ZONE_RACKS 16

struct bench_spec {
    int nodes;               /* >= 1 */
    int queues;              /* >= 1 */
    long pods;               /* pending pods, >= 0 */
    double running;          /* 0..0.95: GPU fraction already running */
    bool inqueue;            /* pending PodGroups start Inqueue (else
                                Pending, and the enqueue action admits) */
    bool min_resources;      /* PodGroups carry spec.minResources */
    bool dra;                /* GPUs as DRA devices and claims */
    bool claims;             /* with dra: every pending pod's claim is a
                                ResourceClaim of its own, unallocated (as
                                kube-controller-manager makes them from
                                the template), not only the template */
    bool selectors;          /* with claims: each pending claim's request
                                carries a selector of its own (one that
                                every device passes), as a claim made
                                from a template that asks for a model */
    bool topology;           /* racks and zones, gangs held to them */
    bool tree;               /* the queues are the leaves of a 3-level
                                tree (capacity, enableHierarchy): queue-i
                                under team-(i/10) under org-(i/50), each
                                deserving an even split of the GPUs */
    uint64_t seed;           /* != 0 */
    int64_t created;         /* creationTimestamp of the first object, s */
};

/* The defaults: 1000 nodes, 10 queues, 10000 pods, nothing running,
 * Inqueue, with minResources, seed 42. */
void bench_spec_default(struct bench_spec *s);

struct bench_counts {
    long gangs, pods;               /* pending */
    long run_gangs, run_pods;       /* already running */
    long gpus;                      /* GPUs in the cluster */
};

/*
 * Fills c (initialised and empty) as described above and links it.
 * Returns 0, or -EINVAL with a message on stderr when the spec is out of
 * range or the cluster refuses an object (a bug).
 */
int bench_gen(struct mu_cluster *c, const struct bench_spec *s,
              struct bench_counts *out);

#endif
