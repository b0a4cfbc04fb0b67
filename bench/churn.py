#!/usr/bin/env python3
"""The churn workload of issue 12, for `muster simulate`, and the figures
read from its event log.

  bench/churn.py gen [--nodes 2000] [--queues 20] [--pods 20000]
                     [--arrive 3600] [--seed 42] OUT.yaml
      NODES nodes x 8 GPUs, QUEUES queues (weights 1..4, reclaimable), and
      vcjobs until PODS pods: nine in ten are gangs of 1, 2, 4, 8 or 16
      one-GPU pods, one in ten a large gang of 2 or 4 pods x 8 GPUs; each
      arrives at a uniform time in [0, ARRIVE) s and its pods run 30 min to
      2 h (muster.io/submit-at, muster.io/run-for). Deterministic (--seed).

  bench/churn.py analyze --jobs OUT.yaml LOG
      LOG is `muster simulate --until ... OUT.yaml` (its event lines). Prints
      one JSON object: evictions (total, by action, per hour of
      [0, ARRIVE + 2 h], and the most of any one gang in whole-gang
      evictions: its pods evicted / its pods), GPU utilisation
      (time-weighted, over [0, ARRIVE + 2 h]), GPUs stranded (free on nodes where no waiting
      gang's pod fits; sampled each minute while any gang waits: mean and
      max), and the wait of large gangs (arrival to its last pod bound:
      median, p90, max; never-bound ones counted apart).

Example (the figures in bench/RESULTS.md):
  bench/churn.py gen /tmp/churn.yaml
  build/src/muster simulate --until 4h /tmp/churn.yaml > /tmp/churn.log
  bench/churn.py analyze --jobs /tmp/churn.yaml /tmp/churn.log
"""
import argparse
import json
import random
import re
import sys

SMALL = [1, 2, 4, 8, 16]
EVENT = re.compile(r"^\[\s*(\d+):(\d\d):(\d\d)\] (.*)$")


def gen(a):
    rnd = random.Random(a.seed)
    w = len(str(a.nodes - 1))
    with open(a.out, "w") as f:
        for i in range(a.nodes):
            f.write("apiVersion: v1\nkind: Node\nmetadata: {name: node-%0*d}\n"
                    "status: {allocatable: {cpu: \"96\", memory: 1Ti, pods: \"110\", "
                    "nvidia.com/gpu: \"8\"}}\n---\n" % (w, i))
        for q in range(a.queues):
            f.write("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                    "metadata: {name: q%02d}\nspec: {weight: %d, reclaimable: true}\n---\n"
                    % (q, 1 + q % 4))
        left, j = a.pods, 0
        while left > 0:
            if rnd.random() < 0.1:
                n, g = rnd.choice([2, 4]), 8
            else:
                n, g = rnd.choice(SMALL), 1
            n = min(n, left)
            left -= n
            f.write("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
                    "metadata: {name: j%06d, annotations: {muster.io/submit-at: %ds}}\n"
                    "spec:\n  minAvailable: %d\n  queue: q%02d\n  tasks:\n"
                    "  - name: w\n    replicas: %d\n    template:\n"
                    "      metadata: {annotations: {muster.io/run-for: %ds}}\n"
                    "      spec: {containers: [{name: c, image: x, resources: {limits: "
                    "{nvidia.com/gpu: %d, cpu: %d, memory: %dGi}}}]}\n---\n"
                    % (j, rnd.randrange(a.arrive), n, rnd.randrange(a.queues), n,
                       rnd.randrange(1800, 7201), g, 4 * g, 16 * g))
            j += 1
    print("%s: %d nodes, %d queues, %d jobs, %d pods" % (a.out, a.nodes, a.queues, j, a.pods),
          file=sys.stderr)
    return 0


def read_jobs(path):
    """job name -> (arrival s, pods, GPUs per pod); node names; arrival window."""
    jobs, nodes, name, at, gpus, reps, kind = {}, [], None, 0, 1, 1, None
    for line in open(path):
        line = line.rstrip("\n")
        if line == "---":
            if kind == "Job" and name:
                jobs[name] = (at, reps, gpus)
            name, at, gpus, reps, kind = None, 0, 1, 1, None
            continue
        m = re.match(r"kind: (\w+)", line)
        if m:
            kind = m.group(1)
        m = re.search(r"metadata: \{name: ([\w.-]+)", line)
        if m:
            name = m.group(1)
            if kind == "Node":
                nodes.append(name)
        m = re.search(r"submit-at: (\d+)s", line)
        if m:
            at = int(m.group(1))
        m = re.match(r"\s+replicas: (\d+)", line)
        if m:
            reps = int(m.group(1))
        m = re.search(r"nvidia.com/gpu: (\d+), cpu", line)
        if m:
            gpus = int(m.group(1))
    if kind == "Job" and name:
        jobs[name] = (at, reps, gpus)
    return jobs, nodes


def job_of(pod):
    """default/j000012-w-3 -> j000012"""
    return re.sub(r"-w-\d+$", "", pod.split("/", 1)[-1])


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]


def analyze(a):
    jobs, nodes = read_jobs(a.jobs)
    arrive_end = max(v[0] for v in jobs.values()) + 1 if jobs else 0
    horizon = arrive_end + 7200
    used = {n: 0 for n in nodes}
    on = {}                # pod -> (node, gpus)
    bound = {}             # job -> pods bound at once (current)
    done_at = {}           # job -> time its last pod was first bound
    evictions, by_action, per_gang = 0, {}, {}
    util_area, last_t, cur_used = 0.0, 0, 0
    stranded = []
    next_sample = 0
    total = 8 * len(nodes)

    def sample(t):
        waiting = [jobs[j][2] for j in jobs
                   if jobs[j][0] <= t and bound.get(j, 0) < jobs[j][1] and j not in done_at]
        if not waiting:
            return
        need = min(waiting)
        stranded.append(sum(8 - u for u in used.values() if 0 < 8 - u < need))

    for line in open(a.log):
        m = EVENT.match(line)
        if not m:
            continue
        t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
        ev = m.group(4)
        while next_sample <= t and next_sample <= horizon:
            sample(next_sample)
            next_sample += 60
        if t <= horizon:
            util_area += cur_used * (t - last_t)
            last_t = t
        if ev.startswith("bind pod "):
            p = ev.split()
            pod, node = p[2], p[4]
            j = job_of(pod)
            g = jobs.get(j, (0, 1, 1))[2]
            on[pod] = (node, g)
            used[node] = used.get(node, 0) + g
            cur_used += g
            bound[j] = bound.get(j, 0) + 1
            if j in jobs and bound[j] >= jobs[j][1] and j not in done_at:
                done_at[j] = t
        elif ev.startswith("evict pod "):
            p = ev.split()
            evictions += 1
            act = p[5].lstrip("(")
            by_action[act] = by_action.get(act, 0) + 1
            per_gang[job_of(p[2])] = per_gang.get(job_of(p[2]), 0) + 1
        elif ev.startswith("pod ") and (" terminated" in ev or ev.endswith(" succeeded")):
            pod = ev.split()[1]
            if pod in on:
                node, g = on.pop(pod)
                used[node] -= g
                cur_used -= g
                j = job_of(pod)
                bound[j] = bound.get(j, 1) - 1
    if last_t < horizon:
        util_area += cur_used * (horizon - last_t)
    large = [j for j, v in jobs.items() if v[2] == 8]
    waits = [done_at[j] - jobs[j][0] for j in large if j in done_at]
    gangs_evicted = {}
    for j, n in per_gang.items():
        gangs_evicted[j] = n / max(1, jobs.get(j, (0, 1, 1))[1])
    out = {
        "nodes": len(nodes), "gpus": total, "jobs": len(jobs),
        "pods": sum(v[1] for v in jobs.values()), "arrival_window_s": arrive_end,
        "evictions": evictions,
        "evictions_per_hour": round(evictions / max(horizon / 3600.0, 1e-9), 1),
        "evictions_by_action": by_action,
        "gangs_evicted": len(per_gang),
        "most_evictions_of_one_gang": round(max(gangs_evicted.values()), 1) if gangs_evicted else 0,
        "gpu_utilisation": round(util_area / (total * horizon), 4) if total and horizon else None,
        "stranded_gpus_mean": round(sum(stranded) / len(stranded), 1) if stranded else 0,
        "stranded_gpus_max": max(stranded) if stranded else 0,
        "large_gangs": len(large), "large_gangs_bound": len(waits),
        "large_wait_p50_s": pct(waits, 50), "large_wait_p90_s": pct(waits, 90),
        "large_wait_max_s": max(waits) if waits else None,
        "jobs_never_bound": sum(1 for j in jobs if j not in done_at),
    }
    print(json.dumps(out, sort_keys=True))
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--nodes", type=int, default=2000)
    g.add_argument("--queues", type=int, default=20)
    g.add_argument("--pods", type=int, default=20000)
    g.add_argument("--arrive", type=int, default=3600)
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("out")
    an = sub.add_parser("analyze")
    an.add_argument("--jobs", required=True)
    an.add_argument("log")
    a = p.parse_args()
    if a.cmd == "gen":
        if a.nodes < 1 or a.queues < 1 or a.pods < 0 or a.arrive < 1:
            p.error("--nodes, --queues and --arrive must be >= 1, --pods >= 0")
        return gen(a)
    return analyze(a)


if __name__ == "__main__":
    sys.exit(main())
