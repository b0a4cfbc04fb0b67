#!/usr/bin/env python3
"""Writes a deterministic cluster for `muster simulate` (issue 15, item 4):
NODES nodes x 8 GPUs, QUEUES queues (weights 1..4), and vcjobs of 1, 2, 4, 8
or 16 one-GPU pods (the mix of bench/gen.h: a mean of 10 pods a job) until
PODS pods, arriving over the first ARRIVE seconds and running 10 to 60
minutes each, so that the simulation has binds, waits and completions.

Usage: bench/simgen.py [--nodes N] [--queues Q] [--pods P] [--arrive S]
                       [--seed X] OUT.yaml
Then:  /usr/bin/time -v build/src/muster simulate --quiet -o json OUT.yaml
"""
import argparse
import random
import sys

SIZES = [16] * 10 + [8] * 3 + [4] * 2 + [2] * 3 + [1] * 2  # 200 pods / 20 jobs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=10000)
    p.add_argument("--queues", type=int, default=100)
    p.add_argument("--pods", type=int, default=100000)
    p.add_argument("--arrive", type=int, default=600)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("out")
    a = p.parse_args()
    if a.nodes < 1 or a.queues < 1 or a.pods < 0 or a.arrive < 0:
        p.error("--nodes and --queues must be >= 1, --pods and --arrive >= 0")
    rnd = random.Random(a.seed)
    w = len(str(a.nodes - 1))
    with open(a.out, "w") as f:
        for i in range(a.nodes):
            f.write("apiVersion: v1\nkind: Node\nmetadata: {name: node-%0*d}\n"
                    "status: {allocatable: {cpu: \"96\", memory: 1Ti, pods: \"110\", "
                    "nvidia.com/gpu: \"8\"}}\n---\n" % (w, i))
        for q in range(a.queues):
            f.write("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                    "metadata: {name: queue-%04d}\nspec: {weight: %d, reclaimable: true}\n---\n"
                    % (q, 1 + q % 4))
        left, j, slots = a.pods, 0, []
        while left > 0:
            if not slots:
                slots = SIZES[:]
                rnd.shuffle(slots)
            n = min(slots.pop(), left)
            left -= n
            f.write("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
                    "metadata: {name: job-%07d, annotations: {muster.io/submit-at: %ds}}\n"
                    "spec:\n  minAvailable: %d\n  queue: queue-%04d\n  tasks:\n"
                    "  - name: w\n    replicas: %d\n    template:\n"
                    "      metadata: {annotations: {muster.io/run-for: %dm}}\n"
                    "      spec: {containers: [{name: c, image: x, resources: {limits: "
                    "{nvidia.com/gpu: 1, cpu: 8, memory: 32Gi}}}]}\n---\n"
                    % (j, rnd.randrange(a.arrive + 1), n, rnd.randrange(a.queues), n,
                       rnd.randrange(10, 61)))
            j += 1
    print("%s: %d nodes, %d queues, %d jobs, %d pods" % (a.out, a.nodes, a.queues, j, a.pods),
          file=sys.stderr)


if __name__ == "__main__":
    main()
