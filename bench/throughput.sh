#!/usr/bin/env bash
# End-to-end throughput of muster against its peers, side by side in one run
# on one local control plane (tests/e2e/cluster.sh: etcd, kube-apiserver,
# kwok; all on loopback):
#
#   default       stock kube-scheduler alone, schedulerName default-scheduler,
#                 plain pods (no groups)
#   noop          kube-scheduler + bench/noop-extender with muster's own
#                 kube-scheduler config (manifests/scheduler-config.yaml:
#                 filter, bind, preempt, nodeCacheCapable,
#                 percentageOfNodesToScore 100): the ceiling for muster
#   noop-lean     the same no-op extender with filter + bind only and the
#                 default adaptive node sampling (reference/extender.md §9)
#   noop-gated    noop-lean, but the pods are made inside the timed run: at
#                 t0 the bench POSTs them gated (16 at once) and ungates each
#                 gang as soon as its last pod exists: the API work of a
#                 controller that gates its pods (muster-vcjob's floor on
#                 the stock components), at no decision cost
#   bind-floor    no scheduler: at t0 a client binds the same backlog as
#                 `muster` itself, gang by gang, at muster's pace (8 gangs
#                 at once, a gang's members POSTed to pods/binding together,
#                 gang g on the g-th node): the span and rate the apiserver,
#                 kwok and the watcher allow on this machine, with no
#                 decision made (needs GROUPS <= NODES)
#   muster        kube-scheduler + `muster serve`: PodGroups (minMember SIZE)
#                 and pods annotated with their group, schedulerName volcano,
#                 not gated (muster wakes them with an annotation)
#   muster-vcjob  the same, but GROUPS vcjobs: muster makes the PodGroups and
#                 the gated pods and releases them pinned to their nodes
#   muster-tls    `muster` with the extender over mTLS, as manifests/ ships it
#                 (certificates from manifests/tls/openssl.sh; kube-scheduler
#                 with its client certificate; /readyz and /metrics on
#                 --metrics-listen); --tls adds it, and the summary gives
#                 muster-tls / muster
#   base, base-vcjob  muster and muster-vcjob with another muster binary
#                 (--muster-base PATH), e.g. the build before a change, for
#                 a before/after in the same run
#   volcano       Volcano's vc-scheduler (+ vc-controller-manager, which opens
#                 the queue) built from its Go module (bench/volcano/build.sh);
#                 PodGroups + annotated pods as for `muster`
#   volcano-vcjob the same vcjobs as muster-vcjob, with Volcano's job
#                 controller (a second vc-controller-manager) started at t0
#                 beside vc-scheduler, as muster starts at t0: both make the
#                 pods inside the timed run
#
# Each run starts from a clean slate (no pods, PodGroups, vcjobs; same
# nodes), creates the objects with the scheduler stopped, then starts the
# scheduler (t0) and times every pod's first sight bound on a watch.
# Runs go round-robin over the contenders (noise drifts evenly), Volcano
# last (its CRDs replace muster's). Then, with muster, the gang latency:
# fill the cluster with running gangs (one 8-pod gang per node, created
# bound), keep one gang waiting, delete one running gang (exactly the room)
# and time from the room being free (its last pod seen deleted) to the
# waiting gang's last member bound (also from the DELETE call); REPS times
# with annotated pods and REPS times with vcjobs.
#
# Ratios: to kube-scheduler alone, to the no-op with muster's config, to
# the lean no-op (extender.md §9), and each muster kind to Volcano on the
# same objects (muster/volcano, muster-vcjob/volcano-vcjob).
#
# Usage: bench/throughput.sh [--nodes N] [--groups G] [--size S] [--runs R]
#            [--skip-volcano] [--contenders LIST] [--latency-reps K]
#            [--no-latency] [--latency-fill MODE] [--qps Q] [--keep]
#            [--muster PATH] [--muster-base PATH] [--tls] [--restart-pending P]
#   --nodes N         kwok nodes, 8 GPUs each (default 1000)
#   --groups G[,G..]  gangs per run (default 500); a list runs every
#                     contender at each backlog size, in the same cluster
#   --size S          pods per gang, one GPU each (default 8)
#   --runs R          runs per contender (default 3)
#   --contenders L    comma list (default default,noop,noop-lean,noop-gated,
#                     muster,muster-vcjob,volcano,volcano-vcjob)
#   --latency-reps K  freed-capacity repetitions per kind (default 25; 0 = none)
#   --latency-fill M  direct (default): the fill gangs are created bound,
#                     one per node; scheduled: through kube-scheduler and
#                     muster in waves of 50 gangs (slow: ~10 min at 1,000
#                     nodes on 2 busy cores)
#   --qps Q           client qps = burst of kube-scheduler, vc-scheduler and
#                     vc-controller-manager (default 5000). muster serve's
#                     client is fixed at qps 500 / burst 1000 (no flag).
#   --keep            keep the run directory (logs, watch files, metrics)
#   --muster PATH     muster binary (default build/src/muster)
#   --muster-base P   the binary of the base and base-vcjob contenders
#   --tls             add the muster-tls contender (TLS on, against muster off)
#   --restart-pending P  after the runs: muster started on a cluster whose
#                     nodes all run (the largest --groups, created bound) with
#                     P pods pending in gangs of SIZE and room for them on P/8
#                     new nodes: time to ready (and kube-scheduler's /readyz
#                     beside it), first and last new bind, RSS
# Env: MUSTER_BENCH_V (component log verbosity, default 1),
#      MUSTER_BENCH_RUN_TIMEOUT (seconds per run, default 120 + pods/10),
#      MUSTER_BENCH_RESTART_BOUND (gangs created bound for --restart-pending,
#      default the largest --groups; at most NODES: a gang a node), so the
#      restart of a full cluster needs no backlog run of the same size,
#      MUSTER_BENCH_RESTART_ALONE=1 (the restart case restarts muster
#      alone: kube-scheduler is started first and has synced; default both
#      start at once, kube-scheduler's ready the limit beside muster's),
#      MUSTER_BENCH_AUDIT=0 (no apiserver audit log of the binds: the gang
#      spans then come from the watcher alone; by default kube-apiserver
#      logs every pods/binding create, MUSTER_APISERVER_AUDIT_LOG, and the
#      spans are also taken on its clock, spread_api_*: a watcher on two
#      busy cores was seen to stall 2.6 s while the binds went on),
#      MUSTER_CACHE, plus the harness's knobs (tests/e2e/cluster.sh).
# Output: per-run JSON lines, then a Markdown table and the latency figures
# on stdout; the same in $D/results/ (kept with --keep).
# Exit: 0 when every run completed; 1 when a run timed out or failed; 2 usage.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
E2E=$ROOT/tests/e2e
# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"

NODES=1000 GROUPS_LIST=500 SIZE=8 RUNS=3 SKIP_VOLCANO=0 KEEP=0 QPS=5000 TLS=0
CONTENDERS=default,noop,noop-lean,noop-gated,muster,muster-vcjob,volcano,volcano-vcjob
LAT_REPS=25 LAT_FILL=direct RESTART_PENDING=0
MUSTER=$ROOT/build/src/muster
MUSTER_BASE=""
V=${MUSTER_BENCH_V:-1}

usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" >&2; exit 2; }
num() { case "$2" in ''|*[!0-9]*) echo "$1: '$2' is not a number" >&2; usage ;; esac; }
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) num "$1" "${2:-}"; NODES=$2; shift 2 ;;
        --groups) GROUPS_LIST=${2:-}; shift 2 ;;
        --size) num "$1" "${2:-}"; SIZE=$2; shift 2 ;;
        --runs) num "$1" "${2:-}"; RUNS=$2; shift 2 ;;
        --latency-reps) num "$1" "${2:-}"; LAT_REPS=$2; shift 2 ;;
        --no-latency) LAT_REPS=0; shift ;;
        --latency-fill) LAT_FILL=${2:-}; shift 2
            case "$LAT_FILL" in direct|scheduled) ;; *) usage ;; esac ;;
        --qps) num "$1" "${2:-}"; QPS=$2; shift 2 ;;
        --contenders) CONTENDERS=${2:-}; shift 2 ;;
        --skip-volcano) SKIP_VOLCANO=1; shift ;;
        --keep) KEEP=1; shift ;;
        --muster) MUSTER=${2:-}; shift 2 ;;
        --muster-base) MUSTER_BASE=${2:-}; shift 2 ;;
        --tls) TLS=1; shift ;;
        --restart-pending) num "$1" "${2:-}"; RESTART_PENDING=$2; shift 2 ;;
        -h|--help) sed -n '2,/^# Exit:/p' "$0"; exit 0 ;;
        *) echo "unknown argument '$1'" >&2; usage ;;
    esac
done
for g in ${GROUPS_LIST//,/ }; do
    num --groups "$g"; [ "$g" -gt 0 ] || usage
    case ",$CONTENDERS," in *,bind-floor,*)
        [ "$g" -le "$NODES" ] || { echo "bind-floor binds a gang a node: --groups $g > --nodes $NODES" >&2; usage; } ;;
    esac
done
[ "$NODES" -gt 0 ] && [ "$SIZE" -gt 0 ] && [ "$RUNS" -gt 0 ] || usage
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac

want() { case ",$CONTENDERS," in *",$1,"*) return 0 ;; esac; return 1; }
[ "$TLS" = 1 ] && ! want muster-tls && CONTENDERS=$CONTENDERS,muster-tls
for c in ${CONTENDERS//,/ }; do
    case "$c" in default|noop|noop-lean|noop-gated|bind-floor|muster|muster-vcjob|muster-tls|base|base-vcjob|volcano|volcano-vcjob) ;;
        *) echo "unknown contender '$c'" >&2; usage ;; esac
done
if want muster || want muster-vcjob || want muster-tls || [ "$LAT_REPS" -gt 0 ]; then
    [ -x "$MUSTER" ] || e2e_die "muster binary $MUSTER not found (ninja -C build)"
fi
if want base || want base-vcjob; then
    case "$MUSTER_BASE" in /*) ;; ?*) MUSTER_BASE=$PWD/$MUSTER_BASE ;; esac
    [ -x "$MUSTER_BASE" ] || e2e_die "contenders base/base-vcjob need --muster-base PATH"
fi
[ "$SKIP_VOLCANO" = 1 ] && CONTENDERS=$(echo ",$CONTENDERS," | sed 's/,volcano,/,/; s/,volcano-vcjob,/,/; s/^,//; s/,$//')

PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || e2e_die "python3 not found"
D=$(mktemp -d /tmp/bench-tput.XXXXXX)
R=$D/results
mkdir -p "$R" "$D/bench-pids" "$D/bin"
log() { e2e_log "$*"; }

# ------------------------------------------------------------- processes --

# bg NAME LOG CMD...: start a background process; its pid in $D/bench-pids.
bg() {
    local name=$1 logf=$2
    shift 2
    "$@" >>"$logf" 2>&1 </dev/null &
    echo "$! $1" >"$D/bench-pids/$name"
}
pid_of() { [ -s "$D/bench-pids/$1" ] && cut -d' ' -f1 "$D/bench-pids/$1"; }
# stop NAME [GRACE]: SIGTERM, SIGKILL after GRACE (10) s; only our own pid.
stop() {
    local name=$1 grace=${2:-10} pid
    pid=$(pid_of "$name") || return 0
    [ -n "$pid" ] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 $(( grace * 10 ))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    rm -f "$D/bench-pids/$name"
}
CLUSTER_UP=0
cleanup() {
    local f
    for f in "$D"/bench-pids/*; do [ -e "$f" ] && stop "$(basename "$f")" 5; done
    [ "$CLUSTER_UP" = 1 ] && "$E2E/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "$KEEP" = 1 ]; then log "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# cpu seconds (user + system) of a pid
cpu_of() {
    local s
    [ -r "/proc/$1/stat" ] || { echo 0; return; }
    s=$(sed 's/^.*) //' "/proc/$1/stat")
    # fields after the comm: state=1 ... utime=12 stime=13
    awk -v t="$(getconf CLK_TCK)" '{printf "%.2f", ($12 + $13) / t}' <<<"$s"
}
cluster_pid() { [ -s "$D/pids/$1.pid" ] && cut -d' ' -f1 "$D/pids/$1.pid"; }
# cpu_snapshot: "name seconds" for the components that matter
cpu_snapshot() {
    local n p
    for n in etcd kube-apiserver kwok; do
        p=$(cluster_pid "$n") && echo "$n $(cpu_of "$p")"
    done
    for n in kube-scheduler muster noop vc-scheduler vc-controller-manager; do
        p=$(pid_of "$n") && echo "$n $(cpu_of "$p")"
    done
}
# rss_sampler OUT: every second, "name kB" (VmRSS) of the components that
# matter, until killed; rss_json OUT: each one's peak in MiB, the peak
# (VmHWM) of a process started for this run read at its end
rss_of() { awk '$1 == "'"$2"':" { print $2 }' "/proc/$1/status" 2>/dev/null; }
rss_sampler() {
    local n p
    while :; do
        for n in etcd kube-apiserver kwok; do
            p=$(cluster_pid "$n") && echo "$n $(rss_of "$p" VmRSS)"
        done
        for n in kube-scheduler muster noop vc-scheduler vc-controller-manager vc-job-controller; do
            p=$(pid_of "$n") && echo "$n $(rss_of "$p" VmRSS)"
        done
        sleep 1
    done >>"$1" 2>/dev/null
}
rss_hwm() { # OUT: the per-run processes' VmHWM, before they are stopped
    local n p
    for n in kube-scheduler muster vc-scheduler vc-job-controller; do
        p=$(pid_of "$n") && echo "$n $(rss_of "$p" VmHWM)"
    done >>"$1" 2>/dev/null
}
rss_json() {
    awk 'NF == 2 && $2 ~ /^[0-9]+$/ { if ($2 > m[$1]) m[$1] = $2 }
         END { printf "{"; s = ""; for (k in m) { printf "%s\"%s\": %.0f", s, k, m[k] / 1024; s = ", " } printf "}" }' "$1"
}
# the apiserver's request counters and latencies (admin token)
# pod DELETEs the apiserver has answered so far (any client)
pod_deletes() {
    apiserver_metrics | awk '/^apiserver_request_duration_seconds_count/ && /verb="DELETE"/ && /resource="pods"/ && /subresource=""/ { n += $2 } END { printf "%d\n", n }'
}

# after a clean: until kwok has finished deleting the pods it still thinks
# terminating (at 5,000 nodes it sent 11,236 DELETEs into the next run),
# i.e. no pod DELETE answered for 5 s, at most 300 s
quiet_deletes() {
    local last now same=0
    last=$(pod_deletes)
    for _ in $(seq 1 300); do
        sleep 1
        now=$(pod_deletes)
        if [ "$now" = "$last" ]; then
            same=$((same + 1)); [ $same -ge 5 ] && return 0
        else
            same=0; last=$now
        fi
    done
    log "pod DELETEs still going 300 s after the clean"
}

apiserver_metrics() {
    curl -s --max-time 10 --cacert "$D/pki/ca.crt" \
        -H "Authorization: Bearer $(awk -F, '$2 == "admin" {print $1}' "$D/pki/tokens.csv")" \
        "$MUSTER_APISERVER_URL/metrics" | grep -E '^apiserver_request_duration_seconds_(sum|count)'
}
cpu_json() { # cpu_json BEFORE_FILE AFTER_FILE
    awk 'NR==FNR {b[$1]=$2; next} {printf "%s\"%s\":%.2f", (n++ ? "," : "{"), $1, $2 - b[$1]}
         END {print (n ? "}" : "{}")}' "$1" "$2"
}

# ------------------------------------------------------------ the python --

cat >"$D/bench.py" <<'PYEOF'
"""bench.py: the client side of bench/throughput.sh (standard library only).

Subcommands (all talk to the apiserver named in --kubeconfig):
  create   make PodGroups + pods, or vcjobs, with a pool of parallel clients
  clean    delete every pod, PodGroup, vcjob and event of the namespace; wait
  watch    LIST then WATCH the namespace's pods; write "t name group node"
           when a pod is first seen bound; exit when --expect are bound
  analyze  figures of one run from a watch file and the start time
  metrics  a few figures from Prometheus text (muster, kube-scheduler)
  latency  capacity freed -> waiting gang bound, repeated
  summary  the table over all runs
"""
import argparse
import concurrent.futures as cf
import datetime
import json
import math
import os
import re
import socket
import ssl
import statistics
import sys
import threading
import time
import http.client
import urllib.parse

GROUP_ANN = "scheduling.k8s.io/group-name"


class Kube:
    def __init__(self, path):
        text = open(path).read()

        def field(name):
            m = re.search(r"^\s*-?\s*%s:\s*\"?([^\"\n]+)\"?\s*$" % re.escape(name), text, re.M)
            return m.group(1).strip() if m else None

        u = urllib.parse.urlparse(field("server"))
        self.host, self.port = u.hostname, u.port or 443
        self.token = field("token")
        ca = field("certificate-authority")
        self.ctx = ssl.create_default_context(cafile=ca) if ca else ssl._create_unverified_context()
        self.local = threading.local()

    def conn(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def req(self, method, path, body=None, ctype="application/json", tries=5):
        """One request on this thread's keep-alive connection; retried on
        connection errors, 429 and 5xx. Returns (status, parsed body)."""
        data = None if body is None else json.dumps(body).encode()
        for i in range(tries):
            c = getattr(self.local, "c", None)
            if c is None:
                c = self.local.c = self.conn()
            try:
                h = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
                if data is not None:
                    h["Content-Type"] = ctype
                c.request(method, path, body=data, headers=h)
                r = c.getresponse()
                raw = r.read()
                if r.status == 429 or r.status >= 500:
                    raise IOError("HTTP %d" % r.status)
                try:
                    return r.status, json.loads(raw) if raw else None
                except ValueError:
                    return r.status, raw.decode(errors="replace")
            except (OSError, http.client.HTTPException) as e:
                try:
                    c.close()
                except Exception:
                    pass
                self.local.c = None
                if i == tries - 1:
                    raise
                time.sleep(0.2 * (i + 1))


def pod_obj(ns, name, group, sched, gpus, cpu, mem, annotate, node=None):
    md = {"name": name, "namespace": ns, "labels": {"bench": "1", "gang": group}}
    if annotate:
        md["annotations"] = {GROUP_ANN: group}
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": md,
        "spec": {
            "schedulerName": sched,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "c", "image": "registry.invalid/bench:1",
                "resources": {"limits": {"nvidia.com/gpu": str(gpus), "cpu": cpu, "memory": mem}},
            }],
        },
    }
    if node:
        pod["spec"]["nodeName"] = node  # created bound: no scheduler involved
    return pod


def pg_obj(ns, name, size, queue):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "labels": {"bench": "1"}},
            "spec": {"minMember": size, "queue": queue}}


def vcjob_obj(ns, name, size, sched, queue, gpus, cpu, mem):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": {"bench": "1"}},
            "spec": {"minAvailable": size, "schedulerName": sched, "queue": queue,
                     "tasks": [{"name": "w", "replicas": size, "template": {
                         "metadata": {"labels": {"bench": "1", "gang": name}},
                         "spec": {"terminationGracePeriodSeconds": 0, "containers": [{
                             "name": "c", "image": "registry.invalid/bench:1",
                             "resources": {"limits": {"nvidia.com/gpu": str(gpus), "cpu": cpu,
                                                      "memory": mem}}}]}}}]}}


def objects(a, names=None, nodes=None):
    """(path, obj) pairs: PodGroups first, then pods; or vcjobs. With nodes
    (one per gang), each gang's pods are created bound to its node."""
    ns = a.ns
    names = names or ["%s%04d" % (a.prefix, g) for g in range(a.start, a.start + a.groups)]
    pgs, pods = [], []
    for gi, g in enumerate(names):
        if a.kind == "vcjob":
            pgs.append(("/apis/batch.volcano.sh/v1alpha1/namespaces/%s/jobs" % ns,
                        vcjob_obj(ns, g, a.size, a.sched, a.queue, a.gpus, a.cpu, a.mem)))
            continue
        if a.kind == "gang":
            pgs.append(("/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups" % ns,
                        pg_obj(ns, g, a.size, a.queue)))
        for i in range(a.size):
            pods.append(("/api/v1/namespaces/%s/pods" % ns,
                         pod_obj(ns, "%s-%d" % (g, i), g, a.sched, a.gpus, a.cpu, a.mem,
                                 a.kind == "gang", nodes[gi] if nodes else None)))
    return pgs, pods


def create_all(k, batches, workers):
    """Creates each batch in parallel, batch after batch. Returns errors."""
    errs = []

    def one(po):
        st, body = k.req("POST", po[0], po[1])
        if st not in (200, 201, 409):
            return "%s %s: HTTP %d %s" % (po[0], po[1]["metadata"]["name"], st, str(body)[:200])
        return None

    with cf.ThreadPoolExecutor(workers) as ex:
        for b in batches:
            for e in ex.map(one, b):
                if e:
                    errs.append(e)
    return errs


def cmd_create(a):
    k = Kube(a.kubeconfig)
    nodes = None
    if a.bound:
        # created bound, one gang per node in name order (no scheduler
        # involved): the pods of a cluster that was running before
        st, body = k.req("GET", "/api/v1/nodes")
        nodes = sorted(n["metadata"]["name"] for n in (body or {}).get("items", []))
        if len(nodes) < a.start + a.groups:
            print("create: %d nodes for %d bound gangs" % (len(nodes), a.start + a.groups), file=sys.stderr)
            return 1
        nodes = nodes[a.start:a.start + a.groups]
    pgs, pods = objects(a, nodes=nodes)
    if a.label:
        lk, _, lv = a.label.partition("=")
        for _, o in pgs + pods:
            o["metadata"]["labels"][lk] = lv
    t = time.time()
    errs = create_all(k, [pgs, pods], a.workers)
    dt = time.time() - t
    for e in errs[:5]:
        print("create error: " + e, file=sys.stderr)
    print("created %d objects in %.2f s (%d errors)" % (len(pgs) + len(pods), dt, len(errs)))
    return 1 if errs else 0


GATE = "bench.muster.io/gate"


def cmd_create_gated(a):
    """At t0, what a controller that gates its pods must ask of the stock
    components, at no decision cost: every pod POSTed with a scheduling
    gate (a.workers at once), and each gang ungated (one JSON patch per
    pod) as soon as its last pod exists."""
    k = Kube(a.kubeconfig)
    ns = a.ns
    names = ["%s%04d" % (a.prefix, g) for g in range(a.start, a.start + a.groups)]
    lock = threading.Lock()
    left = {g: a.size for g in names}
    errs, futs = [], []
    ex = cf.ThreadPoolExecutor(a.workers)
    t = time.time()

    def ungate(name):
        st, body = k.req("PATCH", "/api/v1/namespaces/%s/pods/%s" % (ns, name),
                         [{"op": "remove", "path": "/spec/schedulingGates"}],
                         ctype="application/json-patch+json")
        if st != 200:
            with lock:
                errs.append("ungate %s: HTTP %d %s" % (name, st, str(body)[:200]))

    def create(g, i):
        pod = pod_obj(ns, "%s-%d" % (g, i), g, a.sched, a.gpus, a.cpu, a.mem, True)
        pod["spec"]["schedulingGates"] = [{"name": GATE}]
        st, body = k.req("POST", "/api/v1/namespaces/%s/pods" % ns, pod)
        with lock:
            if st not in (200, 201):
                errs.append("create %s-%d: HTTP %d %s" % (g, i, st, str(body)[:200]))
                return
            left[g] -= 1
            if left[g]:
                return
            for j in range(a.size):
                futs.append(ex.submit(ungate, "%s-%d" % (g, j)))

    for g in names:
        for i in range(a.size):
            futs.append(ex.submit(create, g, i))
    while True:
        with lock:
            pending = [f for f in futs if not f.done()]
        if not pending:
            break
        cf.wait(pending)
    ex.shutdown()
    for e in errs[:5]:
        print("create-gated error: " + e, file=sys.stderr)
    print("created and ungated %d pods in %.2f s (%d errors)" % (
        len(names) * a.size, time.time() - t, len(errs)))
    return 1 if errs else 0


SPAN_LES = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


def cmd_bind_floor(a):
    """At t0, the binds muster sends for a backlog of plain gangs, with no
    scheduler and no decision: the bind-floor contender. a.inflight gangs
    at once (muster's release binder: 8 workers), each gang's members
    POSTed to pods/binding together on threads of their own (the barrier's
    gang binder), gang g on the g-th node in name order (a full 8-GPU node
    for a gang of 8). The span the watcher sees for these gangs is what the
    apiserver, kwok and the watcher allow on this machine at that pace.
    Prints this client's own span (first reply to last) per gang, as
    muster_extender_gang_bind_span_seconds measures muster's."""
    k = Kube(a.kubeconfig)
    ns = a.ns
    names = ["%s%04d" % (a.prefix, g) for g in range(a.start, a.start + a.groups)]
    nodes = sorted(names_of(k, "/api/v1/nodes"))
    if len(nodes) < len(names):
        print("bind_floor: %d nodes for %d gangs" % (len(nodes), len(names)), file=sys.stderr)
        return 1
    lock = threading.Lock()
    errs, spans = [], []
    members = cf.ThreadPoolExecutor(a.inflight * a.size)
    t = time.time()

    def bind(pod, node):
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            st, resp = k.req("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, pod), body)
        except (OSError, http.client.HTTPException) as e:
            st, resp = 0, str(e)
        if st not in (200, 201):
            with lock:
                errs.append("bind %s: HTTP %d %s" % (pod, st, str(resp)[:200]))
        return time.time()

    def gang(gi):
        fs = [members.submit(bind, "%s-%d" % (names[gi], i), nodes[gi]) for i in range(a.size)]
        done = [f.result() for f in fs]
        with lock:
            spans.append(max(done) - min(done))

    with cf.ThreadPoolExecutor(a.inflight) as ex:
        list(ex.map(gang, range(len(names))))
    members.shutdown()
    for e in errs[:5]:
        print("bind-floor error: " + e, file=sys.stderr)
    print("bound %d gangs of %d in %.2f s (%d errors); own span p50 %.3f s p99 %.3f s max %.3f s" % (
        len(names), a.size, time.time() - t, len(errs), pct(spans, 50), pct(spans, 99),
        max(spans) if spans else float("nan")))
    # the same buckets as muster_extender_gang_bind_span_seconds
    within = {"%g" % le: sum(1 for x in spans if x <= le) for le in SPAN_LES}
    print("own span within " + " ".join("%s:%d" % kv for kv in within.items()))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(finite({"gangs": len(spans), "errors": len(errs), "own_span_p50_s": pct(spans, 50),
                              "own_span_p99_s": pct(spans, 99), "own_span_within": within}), f)
    return 1 if errs else 0


def cmd_pg_settle(a):
    """After the binds: polls the bench's PodGroups until a.groups of them
    say phase Running (the status a scheduler writes, as `kubectl get
    podgroup` shows it), or a.timeout. Then, with a.pods, counts the bench's
    pods in phase Running once (what kwok writes: the PodGroups' phase does
    not wait for it; at 200,000 pods kwok is minutes behind, and listing
    them all at every poll slowed the poll to 90 s). Prints
    {"podgroups_running_s": time since a.t0 (null at the timeout, with
    "podgroups_running", the count reached), "pods_running": that count}.
    With a.trace, one line per poll: time since t0, PodGroups Running."""
    k = Kube(a.kubeconfig)
    path = "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups" % a.ns
    t0, deadline, n = float(a.t0), time.time() + a.timeout, 0
    trace = open(a.trace, "w") if a.trace else None
    while True:
        n = sum(1 for i in items_of(k, path) if (i.get("status") or {}).get("phase") == "Running")
        now = time.time()
        if trace:
            trace.write("%.1f %d\n" % (now - t0, n))
            trace.flush()
        if n >= a.groups or now > deadline:
            break
        time.sleep(0.2)
    out = {"podgroups_running_s": now - t0 if n >= a.groups else None}
    if n < a.groups:
        out["podgroups_running"] = n
    if a.pods:
        out["pods_running"] = sum(1 for i in items_of(k, "/api/v1/namespaces/%s/pods" % a.ns)
                                  if (i.get("status") or {}).get("phase") == "Running")
    print(json.dumps(out))
    return 0 if n >= a.groups else 1


def count(k, path):
    st, body = k.req("GET", path + ("&" if "?" in path else "?") + "limit=1")
    if st != 200 or not isinstance(body, dict):
        return -1
    n = len(body.get("items") or [])
    rem = (body.get("metadata") or {}).get("remainingItemCount")
    return n + (rem or 0)


def items_of(k, path):
    """Every object of a collection, listed in pages (stops at an error)."""
    cont = ""
    while True:
        st, body = k.req("GET", path + "?limit=5000" + ("&continue=" + urllib.parse.quote(cont) if cont else ""))
        if st != 200 or not isinstance(body, dict):
            return
        yield from body.get("items") or []
        cont = (body.get("metadata") or {}).get("continue")
        if not cont:
            return


def names_of(k, path):
    """Every object name of a collection, listed in pages."""
    return [i["metadata"]["name"] for i in items_of(k, path)]


def cmd_clean(a):
    """Deletes the bench namespace's vcjobs, pods, PodGroups and events and
    waits until none is left. A collection DELETE of tens of thousands
    outlasts its request (the apiserver stops partway), so what is left
    after it is deleted by name, a.workers at once, until nothing is."""
    k = Kube(a.kubeconfig)
    ns = a.ns
    paths = ["/api/v1/namespaces/%s/pods" % ns,
             "/apis/batch.volcano.sh/v1alpha1/namespaces/%s/jobs" % ns,
             "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups" % ns,
             "/api/v1/namespaces/%s/events" % ns,
             "/apis/events.k8s.io/v1/namespaces/%s/events" % ns]
    opts = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
            "propagationPolicy": "Background"}
    t = time.time()

    def delete(path, tries=5):
        try:
            return k.req("DELETE", path, opts, tries=tries)
        except (OSError, http.client.HTTPException) as e:
            return 0, str(e)

    # vcjobs first (so that a running muster does not make their pods again)
    for p in [paths[1], paths[0], paths[2], paths[3]]:
        st, body = delete(p, tries=1)  # once: a cut-short one is not redone
        if st not in (200, 404):
            print("clean: DELETE %s: HTTP %d %s (deleting the rest by name)" % (p, st, str(body)[:200]),
                  file=sys.stderr)
    deadline = t + a.timeout
    n = None
    with cf.ThreadPoolExecutor(a.workers) as ex:
        while time.time() < deadline:
            n = [count(k, paths[0]), count(k, paths[2]), count(k, paths[1])]
            if n[0] == 0 and n[1] <= 0 and n[2] <= 0:
                print("clean in %.1f s" % (time.time() - t))
                return 0
            # what is left (a collection delete cut short, pods a controller
            # made again) goes by name
            for p in [paths[1], paths[0], paths[2]]:
                left = names_of(k, p)
                list(ex.map(lambda nm, p=p: delete(p + "/" + nm), left))
            time.sleep(1)
    print("clean: still %s after %d s" % (n, a.timeout), file=sys.stderr)
    return 1


def group_of(pod):
    md = pod.get("metadata") or {}
    lb = md.get("labels") or {}
    an = md.get("annotations") or {}
    return lb.get("gang") or an.get(GROUP_ANN) or lb.get("volcano.sh/job-name") or "-"


class Watcher:
    """LIST + WATCH of a namespace's pods. bound[name] = (t, group, node):
    the time this process first saw spec.nodeName set."""

    def __init__(self, k, ns, out=None, selector=None):
        self.k, self.ns, self.out, self.sel = k, ns, out, selector
        self.bound, self.present, self.groups = {}, set(), {}
        self.deleted = {}  # name -> time first seen DELETED
        self.lock = threading.Condition()
        self.rv = None
        self.stop = False
        self.errors = 0

    def _see(self, typ, pod, now):
        md = pod.get("metadata") or {}
        name = md.get("name")
        node = (pod.get("spec") or {}).get("nodeName")
        with self.lock:
            if typ == "DELETED":
                self.present.discard(name)
                self.deleted.setdefault(name, now)
            else:
                self.present.add(name)
                self.groups[name] = group_of(pod)
            if node and name not in self.bound and typ != "DELETED":
                self.bound[name] = (now, self.groups[name], node)
                if self.out:
                    self.out.write("%.6f %s %s %s\n" % (now, name, self.groups[name], node))
                    self.out.flush()
            self.lock.notify_all()

    def list(self):
        q = "/api/v1/namespaces/%s/pods?resourceVersion=0" % self.ns
        if self.sel:
            q += "&labelSelector=" + urllib.parse.quote(self.sel)
        st, body = self.k.req("GET", q)
        if st != 200:
            raise IOError("list pods: HTTP %d" % st)
        now = time.time()
        for p in body.get("items") or []:
            self._see("ADDED", p, now)
        self.rv = body["metadata"]["resourceVersion"]

    def run(self):
        while not self.stop:
            q = ("/api/v1/namespaces/%s/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=600"
                 "&resourceVersion=%s" % (self.ns, self.rv))
            if self.sel:
                q += "&labelSelector=" + urllib.parse.quote(self.sel)
            c = self.k.conn(timeout=None)
            try:
                c.request("GET", q, headers={"Authorization": "Bearer " + self.k.token})
                r = c.getresponse()
                if r.status != 200:
                    raise IOError("watch: HTTP %d" % r.status)
                for line in r:
                    now = time.time()
                    ev = json.loads(line)
                    typ, obj = ev.get("type"), ev.get("object") or {}
                    if typ == "ERROR":  # 410 Gone: list again
                        self.list()
                        break
                    rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if rv:
                        self.rv = rv
                    if typ in ("ADDED", "MODIFIED", "DELETED"):
                        self._see(typ, obj, now)
                    if self.stop:
                        break
            except (OSError, http.client.HTTPException, ValueError):
                self.errors += 1
                if self.stop:
                    break
                time.sleep(0.2)
                try:
                    self.list()
                except Exception:
                    pass
            finally:
                c.close()

    def start(self):
        self.list()
        t = threading.Thread(target=self.run, daemon=True)
        t.start()
        return t


def cmd_watch(a):
    k = Kube(a.kubeconfig)
    out = open(a.out, "a")
    w = Watcher(k, a.ns, out, selector=a.selector)
    w.start()
    with open(a.ready, "w") as f:
        f.write("%.6f %d\n" % (time.time(), len(w.bound)))
    deadline = time.time() + a.timeout
    with w.lock:
        while len(w.bound) < a.expect and time.time() < deadline:
            w.lock.wait(0.5)
        n = len(w.bound)
    out.close()
    print("watch: %d of %d bound%s" % (n, a.expect, "" if n >= a.expect else " (TIMEOUT)"))
    return 0 if n >= a.expect else 3


def finite(o):
    """NaN and infinities become null (jq reads no NaN)."""
    if isinstance(o, float) and (math.isnan(o) or math.isinf(o)):
        return None
    if isinstance(o, dict):
        return {k: finite(v) for k, v in o.items()}
    if isinstance(o, list):
        return [finite(v) for v in o]
    return o


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    i = max(0, min(len(xs) - 1, int(math.ceil(p / 100.0 * len(xs))) - 1))
    return xs[i]


def audit_time(ts):
    """An audit stageTimestamp ("2026-12-06T02:27:37.084035Z") in seconds."""
    d = datetime.datetime.strptime(ts.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f")
    return d.replace(tzinfo=datetime.timezone.utc).timestamp()


def audit_spans(path, t0, rows, size, offset=0):
    """Gang spans on kube-apiserver's clock: each pod of the run (rows, as the
    watcher saw them) is bound when its pods/binding create completed with
    201 after t0 (the last such line, should one be refused and redone), from
    the audit log MUSTER_APISERVER_AUDIT_LOG, read from byte offset (its size
    when the run began: earlier runs' lines are not read again). Also how late
    the watcher saw each bind, and the span's two parts: how far apart a
    gang's binds reached the apiserver (spread_arrive_*: the client's part)
    and how far apart the apiserver's own latencies of them were, received to
    answered (spread_server_*: the span the gang would have had, had every
    member reached the apiserver at one instant; no client can do better on
    that apiserver at that moment)."""
    want = {r[1]: (r[0], r[2]) for r in rows}
    api = {}  # name -> (received, answered)
    try:
        f = open(path)
    except OSError:
        return {}
    with f:
        if offset > 0:
            # from the byte before: the rest of a line the offset cut (or
            # only its newline) is skipped, a whole line at offset is read
            f.seek(offset - 1)
            f.readline()
        for line in f:
            if '"binding"' not in line:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            ref = ev.get("objectRef") or {}
            code = (ev.get("responseStatus") or {}).get("code")
            name = ref.get("name")
            if ref.get("subresource") != "binding" or code != 201 or name not in want:
                continue
            t = audit_time(ev.get("stageTimestamp") or "")
            if t >= t0:
                api[name] = (audit_time(ev.get("requestReceivedTimestamp") or
                                        ev.get("stageTimestamp")), t)
    if not api:
        return {}
    groups, lag, lat = {}, [], []
    for name, (r, t) in api.items():
        seen, g = want[name]
        groups.setdefault(g, []).append((r, t))
        lag.append(seen - t)
        lat.append(t - r)
    whole = [v for v in groups.values() if len(v) >= size]
    spread = [max(d for _, d in v) - min(d for _, d in v) for v in whole]
    arrive = [max(r for r, _ in v) - min(r for r, _ in v) for v in whole]
    server = [max(d - r for r, d in v) - min(d - r for r, d in v) for v in whole]
    return {"binds_in_audit": len(api),
            "spread_api_p50_s": pct(spread, 50), "spread_api_p99_s": pct(spread, 99),
            "spread_api_max_s": max(spread) if spread else float("nan"),
            "spread_arrive_p50_s": pct(arrive, 50), "spread_arrive_p99_s": pct(arrive, 99),
            "spread_server_p50_s": pct(server, 50), "spread_server_p99_s": pct(server, 99),
            "bind_latency_p50_s": pct(lat, 50), "bind_latency_p99_s": pct(lat, 99),
            "watch_lag_p50_s": pct(lag, 50), "watch_lag_p99_s": pct(lag, 99),
            "watch_lag_max_s": max(lag)}


def cmd_analyze(a):
    t0 = float(a.t0)
    rows = []
    for line in open(a.binds):
        p = line.split()
        if len(p) >= 4:
            rows.append((float(p[0]), p[1], p[2], p[3]))
    res = {"contender": a.contender, "groups": a.groups, "size": a.size, "run": a.run,
           "expect": a.expect, "bound": len(rows), "t0": t0}
    if rows:
        ts = sorted(r[0] for r in rows)
        first, last = ts[0], ts[-1]
        res.update({
            "first_bind_s": first - t0,
            "last_bind_s": last - t0,
            "pods_per_s": len(rows) / (last - t0) if last > t0 else float("nan"),
            "pods_per_s_first_last": (len(rows) - 1) / (last - first) if last > first else float("nan"),
        })
        # steady rate between the 10th and the 90th percentile of the binds
        i10, i90 = int(0.1 * len(ts)), int(0.9 * len(ts)) - 1
        if i90 > i10 and ts[i90] > ts[i10]:
            res["pods_per_s_p10_p90"] = (i90 - i10) / (ts[i90] - ts[i10])
        groups = {}
        for t, _, g, node in rows:
            groups.setdefault(g, []).append(t)
        spread = [max(v) - min(v) for v in groups.values() if len(v) >= a.size]
        partial = [g for g, v in groups.items() if len(v) < a.size]
        res.update({
            "groups_complete": len(spread), "groups_partial": len(partial),
            "spread_p50_s": pct(spread, 50), "spread_p99_s": pct(spread, 99),
            "spread_max_s": max(spread) if spread else float("nan"),
        })
        # how many gangs were partly bound at the worst moment
        ev = []
        for v in groups.values():
            v = sorted(v)
            if len(v) >= 1:
                ev.append((v[0], 1))
                ev.append((v[-1] if len(v) >= a.size else float("inf"), -1))
        cur = worst = 0
        for _, d in sorted(ev, key=lambda e: (e[0], -e[1])):
            cur += d
            worst = max(worst, cur)
        res["max_gangs_partly_bound"] = worst
        if a.audit:
            res.update(audit_spans(a.audit, t0, rows, a.size, int(a.audit_offset or 0)))
    print(json.dumps(finite(res)))
    return 0


def parse_prom(text):
    """{(name, frozenset(labels)): value}"""
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)", line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        try:
            out[(m.group(1), labels)] = float(m.group(4))
        except ValueError:
            pass
    return out


def hist(prom, name, want=None):
    """Merged buckets of histogram name over series matching want (dict).
    Returns (count, sum, [(le, cum)])."""
    want = want or {}
    buckets, cnt, tot = {}, 0.0, 0.0
    for (n, lb), v in prom.items():
        d = dict(lb)
        if any(d.get(k) != x for k, x in want.items()):
            continue
        if n == name + "_bucket":
            le = float("inf") if d["le"] == "+Inf" else float(d["le"])
            buckets[le] = buckets.get(le, 0) + v
        elif n == name + "_count":
            cnt += v
        elif n == name + "_sum":
            tot += v
    return cnt, tot, sorted(buckets.items())


def hq(h, q):
    """Quantile from cumulative buckets: the upper bound of the bucket."""
    cnt, _, b = h
    if not cnt:
        return float("nan")
    for le, cum in b:
        if cum >= q * cnt:
            return le
    return float("inf")


def hdiff(h1, h0):
    b0 = dict(h0[2])
    return (h1[0] - h0[0], h1[1] - h0[1], [(le, c - b0.get(le, 0)) for le, c in h1[2]])


def cmd_metrics(a):
    """Figures of one run from the metrics scraped before (optional) and after."""
    res = {}
    after = parse_prom(open(a.after).read()) if os.path.exists(a.after) else {}
    before = parse_prom(open(a.before).read()) if a.before and os.path.exists(a.before) else {}
    if a.kind == "muster":
        h = hist(after, "muster_extender_filter_duration_seconds")
        if before:
            h = hdiff(h, hist(before, "muster_extender_filter_duration_seconds"))
        res.update({"filter_calls": h[0], "filter_mean_ms": 1e3 * h[1] / h[0] if h[0] else None,
                    "filter_p50_ms": 1e3 * hq(h, 0.5), "filter_p99_ms": 1e3 * hq(h, 0.99)})
        for m in ("muster_cycles_total", "muster_releases_total",
                  "muster_extender_bind_requests_total", "muster_writer_writes_total",
                  "muster_writer_failed_total"):
            res[m] = after.get((m, frozenset()), 0) - before.get((m, frozenset()), 0)
        res["writer_queued_max"] = after.get(("muster_writer_queued_max", frozenset()))
        res["binds_failed"] = after.get(("muster_extender_binds_total", frozenset({("result", "failed")})), 0)
        res["batches_timed_out"] = after.get(("muster_extender_batches_timed_out_total", frozenset()), 0)
        # its own gang span (first to last bind answered), as bind_floor
        # prints it: gangs within each bucket bound
        h = hist(after, "muster_extender_gang_bind_span_seconds")
        if h[0]:
            res["own_span_within"] = {"%g" % le: int(cum) for le, cum in h[2] if le in SPAN_LES}
        # cycle durations: the gauge, sampled by the scraper (one file, "# t" headers)
        if a.samples and os.path.exists(a.samples):
            # the gauge: muster_cycle_last_duration_seconds since the
            # histogram took the name; older binaries export the gauge as
            # muster_cycle_duration_seconds
            cyc = [float(x) for x in re.findall(r"^muster_cycle(?:_last)?_duration_seconds (\S+)$",
                                                 open(a.samples).read(), re.M)]
            if cyc:
                res.update({"cycle_samples": len(cyc), "cycle_median_ms": 1e3 * statistics.median(cyc),
                            "cycle_max_ms": 1e3 * max(cyc)})
    elif a.kind == "apiserver":
        # requests during the run by verb/resource/subresource: count, mean
        # latency (apiserver_request_duration_seconds), top 8 by count
        rows = {}
        for (n, lb), v in after.items():
            if n not in ("apiserver_request_duration_seconds_sum", "apiserver_request_duration_seconds_count"):
                continue
            d = dict(lb)
            key = "%s %s%s" % (d.get("verb"), d.get("resource"),
                               "/" + d["subresource"] if d.get("subresource") else "")
            v0 = before.get((n, lb), 0.0)
            r = rows.setdefault(key, [0.0, 0.0])
            r[0 if n.endswith("_count") else 1] += v - v0
        top = sorted(((k, c, t) for k, (c, t) in rows.items() if c > 0 and not k.startswith("WATCH")),
                     key=lambda x: -x[1])[:8]
        res = {k: {"n": int(c), "mean_ms": round(1e3 * t / c, 2)} for k, c, t in top}
    elif a.kind == "volcano":
        h = hist(after, "volcano_e2e_scheduling_latency_milliseconds")
        if h[0]:
            res.update({"sessions": h[0], "session_mean_ms": h[1] / h[0]})
        h = hist(after, "volcano_action_scheduling_latency_milliseconds", {"action": "allocate"})
        if h[0]:
            res["allocate_mean_ms"] = h[1] / h[0]
    else:  # kube-scheduler
        for prof in ("default-scheduler", "volcano"):
            for res_ in ("scheduled", "unschedulable", "error"):
                v = after.get(("scheduler_schedule_attempts_total",
                               frozenset({("profile", prof), ("result", res_)})))
                if v:
                    res["attempts_" + res_] = res.get("attempts_" + res_, 0) + v
        h = hist(after, "scheduler_scheduling_algorithm_duration_seconds")
        if h[0]:
            res["algorithm_mean_ms"] = 1e3 * h[1] / h[0]
            res["algorithm_p99_ms"] = 1e3 * hq(h, 0.99)
        h = hist(after, "scheduler_scheduling_attempt_duration_seconds", {"result": "scheduled"})
        if h[0]:
            res["attempt_mean_ms"] = 1e3 * h[1] / h[0]
        for ep in ("Filter", "Score", "Bind"):
            h = hist(after, "scheduler_framework_extension_point_duration_seconds",
                     {"extension_point": ep, "status": "Success"})
            if h[0]:
                res["%s_mean_ms" % ep.lower()] = 1e3 * h[1] / h[0]
    print(json.dumps(finite(res)))
    return 0


def cmd_latency(a):
    """Fill the cluster with running gangs, then repeatedly: create a gang
    that cannot fit, let it settle, delete one running gang (exactly the
    room it needs) and time from the moment the room is free (the last of
    the victim's pods seen deleted) to the waiting gang's last member
    bound; also from the DELETE call."""
    k = Kube(a.kubeconfig)
    ns = a.ns
    out = open(a.out, "a")
    w = Watcher(k, ns)
    w.start()
    a.kind = "gang"
    t = time.time()
    deadline = t + a.fill_timeout
    need = 0
    nodes = None
    if a.fill_mode == "direct":
        # every fill gang created bound to a node of its own (PodGroups and
        # annotated pods as muster runs them, but no scheduler in the way):
        # a full cluster in a minute; --fill-mode scheduled sends the fill
        # through kube-scheduler and muster instead
        st, body = k.req("GET", "/api/v1/nodes")
        nodes = sorted(n["metadata"]["name"] for n in (body or {}).get("items", []))
        if len(nodes) < a.fill:
            print("latency: %d nodes for %d fill gangs" % (len(nodes), a.fill), file=sys.stderr)
            return 1
    # the scheduled fill goes in waves of --wave gangs, each bound before the
    # next (a whole-cluster backlog at once is what bench runs measure)
    wave = a.fill if nodes else a.wave
    for start in range(0, a.fill, wave):
        a.prefix, a.start, a.groups = "fill", start, min(wave, a.fill - start)
        pgs, pods = objects(a, nodes=nodes[start:start + a.groups] if nodes else None)
        errs = create_all(k, [pgs, pods], a.workers)
        if errs:
            print("latency: fill create errors: %s" % errs[:3], file=sys.stderr)
            return 1
        need += len(pods)
        with w.lock:
            while sum(1 for n in w.bound if n.startswith("fill")) < need and time.time() < deadline:
                w.lock.wait(1)
            nb = sum(1 for n in w.bound if n.startswith("fill"))
        if nb < need:
            break
    need = a.fill * a.size
    with w.lock:
        nb = sum(1 for n in w.bound if n.startswith("fill"))
        last = max([v[0] for n, v in w.bound.items() if n.startswith("fill")] or [t])
    print("latency: fill (%s) %d pods in %d gangs: %d bound, last %.1f s after the first create (%.0f pods/s)"
          % (a.fill_mode, need, a.fill, nb, last - t, nb / (last - t) if last > t else 0), flush=True)
    out.write("# fill %d pods %d bound %.3f s\n" % (need, nb, last - t))
    if nb < need:
        print("latency: the cluster did not fill within %d s" % a.fill_timeout, file=sys.stderr)
        return 1
    kinds = a.kinds.split(",")
    results = {kd: [] for kd in kinds}
    from_call = {kd: [] for kd in kinds}  # the same, timed from the DELETE call
    victim = 0
    # one repetition at once, while muster still writes the fill's status
    # ("busy"), then wait until every fill PodGroup shows all its members
    # running (muster has caught up) before the timed repetitions
    plan = [("busy-pods", -1)]
    plan += [(kd, rep) for rep in range(a.reps) for kd in kinds]
    results["busy-pods"] = []
    from_call["busy-pods"] = []
    for kd, rep in plan:
        if rep == 0 and kd == kinds[0]:
            t_s = time.time()
            while time.time() < t_s + a.fill_timeout:
                st, body = k.req("GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups" % ns)
                pgl = [p for p in (body or {}).get("items", []) if p["metadata"]["name"].startswith("fill")]
                done = sum(1 for p in pgl if ((p.get("status") or {}).get("running") or 0) >= a.size)
                if pgl and done == len(pgl):
                    break
                time.sleep(2)
            print("latency: muster wrote the fill's PodGroup status (all running) %.1f s after the "
                  "busy repetition (%d of %d)" % (time.time() - t_s, done, len(pgl)), flush=True)
            out.write("# settled %.1f s %d/%d\n" % (time.time() - t_s, done, len(pgl)))
            time.sleep(a.settle)
        if True:
            name = "w%s%03d" % ("v" if kd == "vcjob" else "p", rep if rep >= 0 else 999)
            b = argparse.Namespace(**vars(a))
            b.kind = "vcjob" if kd == "vcjob" else "gang"
            pg, pd = objects(b, [name])
            e = create_all(k, [pg, pd], a.workers)
            if e:
                print("latency: create %s: %s" % (name, e[:2]), file=sys.stderr)
                return 1
            # settle: its pods exist (muster makes a vcjob's), none bound
            t_s = time.time()
            with w.lock:
                while time.time() < t_s + 30:
                    mine = [n for n in w.present if w.groups.get(n, "").startswith(name)
                            or n.startswith(name + "-")]
                    if len(mine) >= a.size:
                        break
                    w.lock.wait(0.2)
            time.sleep(a.settle)
            with w.lock:
                early = [n for n in w.bound if n.startswith(name + "-")]
            if early:
                print("latency: %s: %d members bound before any room was freed" % (name, len(early)),
                      file=sys.stderr)
            vname = "fill%04d" % victim
            victim += 1
            t_del = time.time()
            st, body = k.req("DELETE", "/api/v1/namespaces/%s/pods?labelSelector=%s" % (
                ns, urllib.parse.quote("gang=" + vname)),
                {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
            t_ret = time.time()
            if st != 200:
                print("latency: delete %s: HTTP %d" % (vname, st), file=sys.stderr)
                return 1
            ok = False
            limit = a.fill_timeout if rep < 0 else a.rep_timeout
            with w.lock:
                while time.time() < t_del + limit:
                    mine = [v[0] for n, v in w.bound.items() if n.startswith(name + "-")]
                    gone = [w.deleted[n] for n in w.deleted if n.startswith(vname + "-")]
                    if len(mine) >= a.size and len(gone) >= a.size:
                        ok = True
                        break
                    w.lock.wait(0.05)
                mine = sorted(v[0] for n, v in w.bound.items() if n.startswith(name + "-"))
                gone = sorted(w.deleted[n] for n in w.deleted if n.startswith(vname + "-"))
            if ok:
                # the room is free when the last victim pod is gone
                t_free = gone[-1]
                lat = mine[-1] - t_free
                results[kd].append(lat)
                from_call[kd].append(mine[-1] - t_del)
                out.write("%s %s %s %.6f %.6f %.6f %.6f %.6f %.6f\n" % (
                    kd, name, vname, t_del, t_ret - t_del, t_free - t_del,
                    mine[0] - t_free, lat, mine[-1] - t_del))
            else:
                results[kd].append(float("inf"))
                from_call[kd].append(float("inf"))
                out.write("%s %s %s %.6f %.6f TIMEOUT bound=%d\n" % (kd, name, vname, t_del,
                                                                  t_ret - t_del, len(mine)))
                print("latency: %s (%s): %d of %d members bound %d s after the delete"
                      % (name, kd, len(mine), a.size, limit), file=sys.stderr)
            out.flush()
            k.req("DELETE", "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s" % (ns, vname))
            print("latency: %s %s: %s" % (kd, name, "%.3f s" % results[kd][-1] if ok else "TIMEOUT"),
                  flush=True)
    summ = {}
    for kd, xs in results.items():
        fin = [x for x in xs if x != float("inf")]
        ys = from_call[kd]
        summ[kd] = {"reps": len(xs), "timeouts": len(xs) - len(fin),
                    "p50_s": pct(xs, 50), "p90_s": pct(xs, 90), "p99_s": pct(xs, 99),
                    "max_s": max(xs) if xs else None, "min_s": min(fin) if fin else None,
                    "from_delete_call_p50_s": pct(ys, 50), "from_delete_call_p99_s": pct(ys, 99)}
    print("LATENCY " + json.dumps(finite(summ)))
    w.stop = True
    return 0


def fmt(x, f="%.0f"):
    if x is None or (isinstance(x, float) and (math.isnan(x))):
        return "-"
    return f % x


def cmd_summary(a):
    if not os.path.exists(a.results):  # no throughput runs (latency only)
        return 0
    runs = [json.loads(l) for l in open(a.results) if l.strip().startswith("{")]
    sizes = []
    for r in runs:
        if r.get("groups") not in sizes:
            sizes.append(r.get("groups"))
    for gi, g in enumerate(sizes):
        by, order = {}, []
        for r in runs:
            if r.get("groups") != g:
                continue
            if r["contender"] not in by:
                order.append(r["contender"])
            by.setdefault(r["contender"], []).append(r)

        def med(c, key="pods_per_s"):
            xs = [r.get(key) for r in by.get(c, []) if r.get(key) and r.get("bound") == r.get("expect")]
            return statistics.median(xs) if xs else None

        base, ceil, lean = med("default"), med("noop"), med("noop-lean")
        first = by[order[0]][0]
        if gi:
            print()
        print("%s gangs x %s pods = %s pods per run:" % (g, first.get("size"), first.get("expect")))
        print()
        print("| contender | runs complete | pods/s median | min / max | first→last bind pods/s (median) "
              "| first bind at (s) | ratio to kube-scheduler alone | ratio to no-op, muster's config "
              "| ratio to no-op lean | gang spread p50 / p99 (s) "
              "| gang span p50 / p99, apiserver's clock (s) |")
        print("|" + "---|" * 11)
        for c in order:
            rs = by[c]
            ok = [r for r in rs if r.get("bound") == r.get("expect")]
            xs = [r["pods_per_s"] for r in ok]
            m = med(c)
            fl = med(c, "pods_per_s_first_last")
            fb = statistics.median([r["first_bind_s"] for r in ok]) if ok else None
            sp50 = statistics.median([r["spread_p50_s"] for r in ok]) if ok else None
            sp99 = statistics.median([r["spread_p99_s"] for r in ok]) if ok else None
            okapi = [r for r in ok if r.get("spread_api_p99_s") is not None]
            ap50 = statistics.median([r["spread_api_p50_s"] for r in okapi]) if okapi else None
            ap99 = statistics.median([r["spread_api_p99_s"] for r in okapi]) if okapi else None
            note = ""
            if len(ok) < len(rs):
                note = " (incomplete: %s)" % ", ".join("%d/%d bound" % (r.get("bound"), r.get("expect"))
                                                        for r in rs if r not in ok)
            print("| %s | %d/%d%s | %s | %s / %s | %s | %s | %s | %s | %s | %s / %s | %s / %s |" % (
                c, len(ok), len(rs), note, fmt(m), fmt(min(xs) if xs else None),
                fmt(max(xs) if xs else None), fmt(fl), fmt(fb, "%.1f"),
                fmt(m / base if m and base else None, "%.2f×"),
                fmt(m / ceil if m and ceil else None, "%.2f×"),
                fmt(m / lean if m and lean else None, "%.2f×"),
                fmt(sp50, "%.2f"), fmt(sp99, "%.2f"), fmt(ap50, "%.3f"), fmt(ap99, "%.3f")))
        pairs = [(c, v) for c, v in (("muster", "volcano"), ("muster-vcjob", "volcano-vcjob"))
                 if med(c) and med(v)]
        if pairs:
            print()
            print("Against Volcano on the same objects: " + "; ".join(
                "%s / %s = %.2f×" % (c, v, med(c) / med(v)) for c, v in pairs))
        pgr = [(c, med(c, "podgroups_running_s"), med(c, "last_bind_s")) for c in order
               if med(c, "podgroups_running_s")]
        if pgr:
            print()
            print("Every PodGroup's status Running (medians, s from t0): " + "; ".join(
                "%s %.1f (last bind %.1f)" % x for x in pgr))
        fl99, mu99 = med("bind-floor", "spread_p99_s"), med("muster", "spread_p99_s")
        fa99, ma99 = med("bind-floor", "spread_api_p99_s"), med("muster", "spread_api_p99_s")
        if fa99 and ma99:
            print()
            print("On the apiserver's clock: gang span p99 muster / bind-floor = %.2f× (%.3f / %.3f s)"
                  % (ma99 / fa99, ma99, fa99))
        parts = [(c, med(c, "spread_api_p99_s"), med(c, "spread_server_p99_s"),
                  med(c, "spread_arrive_p99_s"), med(c, "bind_latency_p99_s"))
                 for c in order if med(c, "spread_server_p99_s") is not None]
        if parts:
            print()
            print("The apiserver's part of the gang span (p99 of the spread of a gang's bind latencies, "
                  "received to answered: the span had every member arrived at one instant): " + "; ".join(
                      "%s %s of %s (arrivals %s apart; bind latency p99 %s)"
                      % (c, fmt(sv, "%.3f"), fmt(sp, "%.3f"), fmt(ar, "%.3f"), fmt(la, "%.3f"))
                      for c, sp, sv, ar, la in parts))
        if fl99 and mu99:
            print()
            print("Against the bind floor (the same binds at muster's pace, no scheduler): "
                  "gang span p99 muster / bind-floor = %.2f× (%.3f / %.3f s); pods/s %.2f×"
                  % (mu99 / fl99, mu99, fl99, (med("muster") or 0) / (med("bind-floor") or 1)))
        if med("muster-tls") and med("muster"):
            print()
            print("TLS on / off: muster-tls / muster = %.2f× (pods/s medians)"
                  % (med("muster-tls") / med("muster")))
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd")
    p.add_argument("--kubeconfig")
    p.add_argument("--ns", default="bench")
    p.add_argument("--kind", default="gang")      # gang | plain | vcjob
    p.add_argument("--groups", type=int, default=500)
    p.add_argument("--size", type=int, default=8)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--prefix", default="g")
    p.add_argument("--bound", action="store_true")  # create: pods bound, a gang a node
    p.add_argument("--label")                       # create: one more label k=v
    p.add_argument("--selector")                    # watch: a label selector
    p.add_argument("--sched", default="volcano")
    p.add_argument("--queue", default="default")
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--cpu", default="4")
    p.add_argument("--mem", default="16Gi")
    p.add_argument("--workers", type=int, default=32)
    p.add_argument("--inflight", type=int, default=8)  # bind_floor: gangs at once
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--expect", type=int, default=0)
    p.add_argument("--pods", type=int, default=0)  # pg_settle: count pods Running at the end
    p.add_argument("--trace")                      # pg_settle: one line per poll
    p.add_argument("--out")
    p.add_argument("--ready")
    p.add_argument("--binds")
    p.add_argument("--audit")                      # analyze: kube-apiserver's audit log of binds
    p.add_argument("--audit-offset")               # analyze: its size when the run began
    p.add_argument("--t0")
    p.add_argument("--contender")
    p.add_argument("--run", type=int, default=0)
    p.add_argument("--after")
    p.add_argument("--before")
    p.add_argument("--samples")
    p.add_argument("--results")
    p.add_argument("--fill", type=int, default=1000)
    p.add_argument("--fill-timeout", type=int, default=900)
    p.add_argument("--wave", type=int, default=50)
    p.add_argument("--fill-mode", default="direct")  # direct | scheduled
    p.add_argument("--reps", type=int, default=25)
    p.add_argument("--kinds", default="pods,vcjob")
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--rep-timeout", type=int, default=30)
    a = p.parse_args()
    f = globals().get("cmd_" + a.cmd)
    if not f:
        p.error("unknown command " + a.cmd)
    sys.exit(f(a))


if __name__ == "__main__":
    main()
PYEOF
bp() { "$PY" "$D/bench.py" "$1" --kubeconfig "$KUBECONFIG" --ns bench "${@:2}"; }

# ------------------------------------------------------------ the cluster --

log "run dir $D; $NODES nodes x 8 GPUs; $GROUPS_LIST gangs x $SIZE pods; $RUNS runs; contenders $CONTENDERS"
if ! "$E2E/build-control-plane.sh" --check; then
    "$E2E/build-control-plane.sh" >&2 || e2e_die "control plane build failed"
fi
VOL_DIR=""
if want volcano || want volcano-vcjob; then
    if VOL_DIR=$("$HERE/volcano/build.sh" 2>"$R/volcano-build.log"); then
        log "Volcano binaries in $VOL_DIR"
    else
        log "Volcano could not be built (see $R/volcano-build.log); skipping it"
        tail -5 "$R/volcano-build.log" >&2
        CONTENDERS=$(echo ",$CONTENDERS," | sed 's/,volcano,/,/; s/,volcano-vcjob,/,/; s/^,//; s/,$//')
        VOL_DIR=""
    fi
fi
if want noop || want noop-lean || want noop-gated; then
    (cd "$HERE/noop-extender" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
        go build -trimpath -o "$D/bin/noop-extender" .) >"$R/noop-build.log" 2>&1 ||
        { cat "$R/noop-build.log" >&2; e2e_die "cannot build bench/noop-extender"; }
fi

# a private copy: a rebuild of build/ during the run must not change it
if [ -x "$MUSTER" ]; then
    cp -p "$MUSTER" "$D/bin/muster" && MUSTER=$D/bin/muster
fi
if [ -n "$MUSTER_BASE" ]; then
    cp -p "$MUSTER_BASE" "$D/bin/muster-base" && MUSTER_BASE=$D/bin/muster-base
fi
{
    echo "muster: $("$MUSTER" version 2>&1 | head -1), binary built $(date -r "$MUSTER" +%FT%T) (HEAD $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ', src/ modified'))"
    [ -n "$MUSTER_BASE" ] && echo "muster (base contenders): binary built $(date -r "$MUSTER_BASE" +%FT%T)"
    echo "kube-scheduler: $("$K8S_DIR/bin/kube-scheduler" --version 2>&1 | head -1)"
    echo "etcd: v$MUSTER_ETCD_VERSION, kwok: v$MUSTER_KWOK_VERSION"
    [ -n "$VOL_DIR" ] && echo "vc-scheduler: $("$VOL_DIR/bin/vc-scheduler" --version 2>/dev/null | grep -E '^Version' | head -1)"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$R/versions.txt" 2>&1
cat "$R/versions.txt" >&2

AUDIT=""
if [ "${MUSTER_BENCH_AUDIT:-1}" != 0 ]; then
    AUDIT="$R/apiserver-audit.log"
    export MUSTER_APISERVER_AUDIT_LOG="$AUDIT"
fi
# audit_args: analyze's flags for the audit log, read from its size now (a
# run's own binds, not the earlier runs'); none without an audit log
audit_args() {
    [ -n "$AUDIT" ] || return 0
    echo "--audit $AUDIT --audit-offset $(stat -c %s "$AUDIT" 2>/dev/null || echo 0)"
}
CLUSTER_UP=1
"$E2E/cluster.sh" up "$D" >"$R/cluster-up.log" 2>&1 || { tail -20 "$R/cluster-up.log" >&2; e2e_die "cluster up failed"; }
eval "$("$E2E/cluster.sh" env "$D")"
# No kube-controller-manager during benchmarks (control-plane.md §7: with
# 1,000 kwok nodes on 2 busy cores its node lifecycle controller taints
# nodes whose leases lag) and no harness kube-scheduler (qps 500): every
# contender brings its own scheduler.
stop_cluster_component kube-controller-manager
stop_cluster_component kube-scheduler
K=$K8S_DIR/bin

kubectl apply -f "$ROOT/crds/" >/dev/null || e2e_die "cannot apply crds/"
kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null || e2e_die "CRDs not established"
kubectl apply -f "$ROOT/manifests/namespace.yaml" -f "$ROOT/manifests/rbac-muster.yaml" >/dev/null ||
    e2e_die "cannot apply muster's RBAC"
kubectl create clusterrolebinding muster-bench --clusterrole=muster --user=muster >/dev/null
kubectl apply -f "$ROOT/manifests/queue-default.yaml" >/dev/null || e2e_die "cannot create queue default"
kubectl create namespace bench >/dev/null
"$E2E/nodes.sh" "$D" "$NODES" 8 gpu >"$R/nodes.log" 2>&1 || { cat "$R/nodes.log" >&2; e2e_die "nodes.sh failed"; }
log "$(tail -1 "$R/nodes.log" | sed 's/^\[[^]]*\] //')"

MPORT=$(pick_port) NPORT=$(pick_port) SPORT=$(pick_port) MMPORT=$(pick_port)
VSP=$(pick_port) VSH=$(pick_port) VCP=$(pick_port) VCH=$(pick_port)
VJP=$(pick_port) VJH=$(pick_port)

# ------------------------------------------------------ scheduler configs --

# muster's own config as the harness renders it, client qps raised
render_muster_config() { # URL OUT (an https URL: mTLS, certificates in $D/tls)
    e2e_scheduler_config "$1" "$D/scheduler.kubeconfig" "$D/tls" "$2.in"
    sed -E -e "s|^(\s*)qps: [0-9]+|\1qps: $QPS|" -e "s|^(\s*)burst: [0-9]+|\1burst: $QPS|" \
        "$2.in" >"$2"
    grep -q "qps: $QPS" "$2" && grep -q "burst: $QPS" "$2" ||
        e2e_die "cannot render manifests/scheduler-config.yaml into $2"
}
render_muster_config "http://127.0.0.1:$MPORT" "$D/sched-muster.yaml"
render_muster_config "http://127.0.0.1:$NPORT" "$D/sched-noop.yaml"
if want muster-tls; then
    "$ROOT/manifests/tls/openssl.sh" "$D/tls" IP:127.0.0.1 >/dev/null || e2e_die "manifests/tls/openssl.sh failed"
    render_muster_config "https://127.0.0.1:$MPORT" "$D/sched-muster-tls.yaml"
fi
cat >"$D/sched-default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$D/scheduler.kubeconfig", qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
EOF
cat >"$D/sched-noop-lean.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$D/scheduler.kubeconfig", qps: $QPS, burst: $QPS}
leaderElection: {leaderElect: false}
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: 2
profiles:
- schedulerName: volcano
extenders:
- urlPrefix: http://127.0.0.1:$NPORT
  filterVerb: filter
  bindVerb: bind
  nodeCacheCapable: true
  httpTimeout: 30s
EOF

start_kube_scheduler() { # CONFIG LOG
    bg kube-scheduler "$2" "$K/kube-scheduler" --config="$1" \
        --secure-port="$SPORT" --bind-address=127.0.0.1 \
        --authentication-kubeconfig="$D/admin.kubeconfig" \
        --authorization-kubeconfig="$D/admin.kubeconfig" \
        --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics -v="$V"
}
start_muster() { # LOG [BINARY]
    bg muster "$1" "${2:-$MUSTER}" serve --kubeconfig "$D/muster.kubeconfig" --listen "127.0.0.1:$MPORT"
}
start_muster_tls() { # LOG: as manifests/ runs it (mTLS, probes apart)
    bg muster "$1" "$MUSTER" serve --kubeconfig "$D/muster.kubeconfig" --listen "127.0.0.1:$MPORT" \
        --metrics-listen "127.0.0.1:$MMPORT" --tls-cert-file "$D/tls/muster/tls.crt" \
        --tls-private-key-file "$D/tls/muster/tls.key" --client-ca-file "$D/tls/muster/ca.crt"
}
wait_http() { # SECONDS URL [curl opts]: until it answers 200
    local end=$(( SECONDS + $1 )) url=$2
    shift 2
    until curl -fsS --max-time 2 "$@" "$url" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.1
    done
}

if want noop || want noop-lean || want noop-gated; then
    bg noop "$R/noop-extender.log" "$D/bin/noop-extender" --listen "127.0.0.1:$NPORT" \
        --kubeconfig "$D/scheduler.kubeconfig"
    wait_http 30 "http://127.0.0.1:$NPORT/healthz" || e2e_die "noop extender did not start"
fi

# ------------------------------------------------------------------ a run --

FAILED=0
# run_one CONTENDER RUN GROUPS
run_one() {
    local c=$1 i=$2 G=$3 RD kind sched t0 rc mready="" PODS RUN_TIMEOUT cpid=""
    PODS=$(( G * SIZE ))
    RUN_TIMEOUT=${MUSTER_BENCH_RUN_TIMEOUT:-$(( 120 + PODS / 10 ))}
    # names of this run's own: a delete by name of the run before's pods
    # still in flight (kwok finishing its pods, a collection delete that
    # outlived its request: 3,185 of 40,000 pods at 5,000 nodes) would
    # take a new pod made under the same name
    RUNSEQ=$(( RUNSEQ + 1 ))
    local pfx="g$RUNSEQ-"
    RD=$R/$c-g$G-$i
    mkdir -p "$RD"
    bp clean --timeout $(( 180 + PODS / 50 )) >"$RD/clean.log" 2>&1 ||
        { tail -3 "$RD/clean.log" >&2; log "$c run $i: no clean slate: skipped"; FAILED=1; return; }
    quiet_deletes
    case "$c" in
        default) kind=plain sched=default-scheduler ;;
        muster-vcjob|base-vcjob|volcano-vcjob) kind=vcjob sched=volcano ;;
        *) kind=gang sched=volcano ;;
    esac
    if [ "$c" != noop-gated ]; then
        bp create --kind "$kind" --sched "$sched" --groups "$G" --size "$SIZE" --prefix "$pfx" >"$RD/create.log" 2>&1 ||
            { cat "$RD/create.log" >&2; log "$c run $i: create failed"; FAILED=1; return; }
    fi
    rm -f "$RD/ready"
    "$PY" "$D/bench.py" watch --kubeconfig "$KUBECONFIG" --ns bench --expect "$PODS" \
        --timeout "$RUN_TIMEOUT" --out "$RD/binds.txt" --ready "$RD/ready" >"$RD/watch.log" 2>&1 &
    local wpid=$!
    # its LIST of the backlog first: 60 s, and a second per thousand pods
    # (200,000 pods took more than a minute to list here)
    for _ in $(seq 1 $((600 + PODS / 100))); do [ -s "$RD/ready" ] && break; kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
    [ -s "$RD/ready" ] || { cat "$RD/watch.log" >&2; kill $wpid 2>/dev/null; log "watcher did not start"; FAILED=1; return; }
    cpu_snapshot >"$RD/cpu-before.txt"
    apiserver_metrics >"$RD/apiserver-before.txt"
    rss_sampler "$RD/rss.txt" &
    local rsspid=$! audit
    audit=$(audit_args)
    t0=$EPOCHREALTIME
    case "$c" in
        default) start_kube_scheduler "$D/sched-default.yaml" "$RD/kube-scheduler.log" ;;
        noop) start_kube_scheduler "$D/sched-noop.yaml" "$RD/kube-scheduler.log" ;;
        noop-lean) start_kube_scheduler "$D/sched-noop-lean.yaml" "$RD/kube-scheduler.log" ;;
        noop-gated)
            start_kube_scheduler "$D/sched-noop-lean.yaml" "$RD/kube-scheduler.log"
            bp create_gated --sched "$sched" --groups "$G" --size "$SIZE" --workers 16 --prefix "$pfx" \
                >"$RD/create.log" 2>&1 &
            cpid=$! ;;
        bind-floor)
            bp bind_floor --groups "$G" --size "$SIZE" --inflight 8 --prefix "$pfx" --out "$RD/floor.json" \
                >"$RD/floor.log" 2>&1 &
            cpid=$! ;;
        muster|muster-vcjob)
            start_muster "$RD/muster.log"
            start_kube_scheduler "$D/sched-muster.yaml" "$RD/kube-scheduler.log" ;;
        muster-tls)
            start_muster_tls "$RD/muster.log"
            start_kube_scheduler "$D/sched-muster-tls.yaml" "$RD/kube-scheduler.log" ;;
        base|base-vcjob)
            start_muster "$RD/muster.log" "$MUSTER_BASE"
            start_kube_scheduler "$D/sched-muster.yaml" "$RD/kube-scheduler.log" ;;
        volcano|volcano-vcjob)
            [ "$c" = volcano-vcjob ] &&
                bg vc-job-controller "$RD/vc-job-controller.log" "$VOL_DIR/bin/vc-controller-manager" \
                    --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --scheduler-name=volcano \
                    --controllers=job-controller \
                    --listen-address="127.0.0.1:$VJP" --healthz-address="127.0.0.1:$VJH" \
                    --kube-api-qps="$QPS" --kube-api-burst="$QPS" -v="$V"
            bg vc-scheduler "$RD/vc-scheduler.log" "$VOL_DIR/bin/vc-scheduler" \
                --kubeconfig="$D/admin.kubeconfig" --scheduler-conf="$VOL_DIR/volcano-scheduler.conf" \
                --scheduler-name=volcano --leader-elect=false \
                --listen-address="127.0.0.1:$VSP" --healthz-address="127.0.0.1:$VSH" \
                --enable-metrics=true --kube-api-qps="$QPS" --kube-api-burst="$QPS" -v="$V" ;;
    esac
    local scraper="" murl="http://127.0.0.1:$MPORT"
    [ "$c" = muster-tls ] && murl="http://127.0.0.1:$MMPORT"
    if [ "$c" = muster ] || [ "$c" = muster-vcjob ] || [ "$c" = muster-tls ] || [ "$c" = base ] || [ "$c" = base-vcjob ]; then
        wait_http 60 "$murl/readyz" && mready=$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')
        ( while :; do
              printf '# t %s\n' "$EPOCHREALTIME"
              curl -s --max-time 1 "$murl/metrics" | grep -E '^muster_(cycle|releases|cycles|writer_queued |kube_rate_limited|release_binder_pods|gangs_bound_at_release)'
              sleep 1
          done ) >"$RD/muster-samples.txt" 2>/dev/null &
        scraper=$!
    fi
    wait $wpid
    rc=$?
    # the PodGroups' status catching up with the binds (what the scheduler
    # wrote while binding, and how far behind): every gang Running
    local pgs="{}"
    case "$c" in muster|muster-vcjob|muster-tls|base|base-vcjob|volcano|volcano-vcjob)
        # 120 s, and 1 s more per 100 gangs (25,000 gangs: 370 s)
        [ $rc = 0 ] && pgs=$(bp pg_settle --groups "$G" --pods "$PODS" --t0 "$t0" \
            --timeout $((120 + G / 100)) --trace "$RD/settle.txt") ;;
    esac
    jq -e 'type == "object"' <<<"$pgs" >/dev/null 2>&1 || pgs="{}"
    if [ -n "$cpid" ] && ! wait "$cpid"; then
        log "$c run $i: its client failed: $(tail -3 "$RD/create.log" "$RD/floor.log" 2>/dev/null)"
        FAILED=1
    fi
    [ -n "$scraper" ] && { kill "$scraper" 2>/dev/null; wait "$scraper" 2>/dev/null; }
    cpu_snapshot >"$RD/cpu-after.txt"
    apiserver_metrics >"$RD/apiserver-after.txt"
    kill "$rsspid" 2>/dev/null; wait "$rsspid" 2>/dev/null
    rss_hwm "$RD/rss.txt"
    case "$c" in
        volcano|volcano-vcjob) curl -s --max-time 5 "http://127.0.0.1:$VSP/metrics" >"$RD/vc-metrics.txt" ;;
        *) curl -ks --max-time 5 "https://127.0.0.1:$SPORT/metrics" >"$RD/ks-metrics.txt" ;;
    esac
    case "$c" in muster|muster-vcjob|muster-tls|base|base-vcjob)
        curl -s --max-time 5 "$murl/metrics" >"$RD/muster-metrics.txt" ;;
    esac
    if [ $rc != 0 ]; then
        FAILED=1
        log "$c ($G gangs) run $i: not all pods bound within ${RUN_TIMEOUT}s ($(cat "$RD/watch.log"))"
        kubectl get pods -n bench -o wide >"$RD/pods-at-timeout.txt" 2>&1
        kubectl get podgroups -n bench -o wide >"$RD/podgroups-at-timeout.txt" 2>&1
    fi
    stop kube-scheduler; stop muster; stop vc-scheduler; stop vc-job-controller
    local res ms="{}" ks="{}" as
    # shellcheck disable=SC2086 # $audit: its flags, split on purpose
    res=$(bp analyze --binds "$RD/binds.txt" --t0 "$t0" --contender "$c" --run "$i" --expect "$PODS" \
        --size "$SIZE" --groups "$G" $audit)
    case "$c" in
        muster|muster-vcjob|muster-tls|base|base-vcjob)
            ms=$(bp metrics --kind muster --after "$RD/muster-metrics.txt" --samples "$RD/muster-samples.txt")
            ks=$(bp metrics --kind kube --after "$RD/ks-metrics.txt") ;;
        volcano|volcano-vcjob) ms=$(bp metrics --kind volcano --after "$RD/vc-metrics.txt") ;;
        bind-floor) [ -s "$RD/floor.json" ] && ms=$(cat "$RD/floor.json") ;;
        *) ks=$(bp metrics --kind kube --after "$RD/ks-metrics.txt") ;;
    esac
    as=$(bp metrics --kind apiserver --before "$RD/apiserver-before.txt" --after "$RD/apiserver-after.txt")
    res=$(jq -c --argjson ms "$ms" --argjson ks "$ks" --argjson api "$as" \
        --argjson cpu "$(cpu_json "$RD/cpu-before.txt" "$RD/cpu-after.txt")" \
        --argjson rss "$(rss_json "$RD/rss.txt")" \
        --argjson pgs "$pgs" --arg mr "$mready" '. + $pgs + {(if (.contender | startswith("volcano")) then "volcano" elif .contender == "bind-floor" then "client" else "muster" end): $ms, kube_scheduler: $ks, apiserver: $api, cpu_s: $cpu, rss_peak_mib: $rss} + (if $mr == "" then {} else {muster_ready_s: ($mr|tonumber)} end)' <<<"$res")
    echo "$res" >>"$R/runs.jsonl"
    echo "$res"
    log "$c ($G gangs) run $i: $(jq -r '"\(.bound)/\(.expect) bound, \(.pods_per_s // 0 | floor) pods/s (first bind at \(.first_bind_s // 0 | .*10|floor/10) s), gang spread p50 \(.spread_p50_s // 0 | .*1000|floor) ms p99 \(.spread_p99_s // 0 | .*1000|floor) ms\(if .spread_api_p99_s then " (on the apiserver clock: p50 \(.spread_api_p50_s | .*1000|floor) ms p99 \(.spread_api_p99_s | .*1000|floor) ms, the spread of its own latencies p99 \(.spread_server_p99_s // 0 | .*1000|floor) ms; the watcher saw binds \(.watch_lag_p99_s // 0 | .*1000|floor) ms late at p99, \(.watch_lag_max_s // 0 | .*1000|floor) ms at most)" else "" end)\(if has("podgroups_running_s") then ", every PodGroup Running at \(.podgroups_running_s // "timeout" | if type == "number" then (.*10|floor/10 | tostring) + " s" else . end)" else "" end)\(if has("pods_running") then " (pods Running then: \(.pods_running) of \(.expect))" else "" end)"' <<<"$res")"
}

# ------------------------------------------------------------ the runs ----
RUNSEQ=0

NONVOL=""
for c in default noop noop-lean noop-gated bind-floor base muster muster-tls base-vcjob muster-vcjob; do want "$c" && NONVOL="$NONVOL $c"; done
for G in ${GROUPS_LIST//,/ }; do
    for i in $(seq 1 "$RUNS"); do
        for c in $NONVOL; do run_one "$c" "$i" "$G"; done
    done
done

# ------------------------------------------- restart on a full cluster ----
# --restart-pending P: muster (and kube-scheduler) started on a cluster
# that already runs the largest backlog's pods (created bound, a gang a
# node: every GPU of the NODES nodes busy) and holds P more pending pods in
# gangs of SIZE, with room for them on P/8 new nodes: the time to ready,
# to the first new bind and to the last one, and muster's peak RSS.

if [ "$RESTART_PENDING" -gt 0 ] && want muster; then
    RG=$(( RESTART_PENDING / SIZE )) GB=0
    for g in ${GROUPS_LIST//,/ }; do [ "$g" -gt "$GB" ] && GB=$g; done
    if [ -n "${MUSTER_BENCH_RESTART_BOUND:-}" ]; then
        num MUSTER_BENCH_RESTART_BOUND "$MUSTER_BENCH_RESTART_BOUND"
        GB=$MUSTER_BENCH_RESTART_BOUND
    fi
    [ "$GB" -gt "$NODES" ] && GB=$NODES
    SPARE=$(( (RG * SIZE + 7) / 8 ))
    RD=$R/restart
    mkdir -p "$RD"
    log "restart: $GB gangs x $SIZE created bound, $RG gangs x $SIZE pending with room on $SPARE new nodes, then muster started"
    if bp clean --timeout $(( 300 + GB * SIZE / 50 )) >"$RD/clean.log" 2>&1 &&
        bp create --kind gang --sched volcano --groups "$GB" --size "$SIZE" --bound --prefix b >"$RD/create-bound.log" 2>&1 &&
        "$E2E/nodes.sh" "$D" "$SPARE" 8 spare >"$RD/nodes.log" 2>&1 &&
        bp create --kind gang --sched volcano --groups "$RG" --size "$SIZE" --prefix r --label restart=1 >"$RD/create.log" 2>&1; then
        # both waits grow with the objects (at 250,000 pods the initial
        # lists alone took over 6 minutes here)
        rwait=$(( 300 + (GB + RG) * SIZE / 200 ))
        wto=${MUSTER_BENCH_RUN_TIMEOUT:-$(( 300 + RG * SIZE / 10 ))}
        # restarting muster alone, kube-scheduler's sync comes first
        [ "${MUSTER_BENCH_RESTART_ALONE:-0}" = 1 ] && wto=$(( wto + rwait ))
        "$PY" "$D/bench.py" watch --kubeconfig "$KUBECONFIG" --ns bench --expect "$(( RG * SIZE ))" --selector restart=1 \
            --timeout "$wto" --out "$RD/binds.txt" --ready "$RD/ready" >"$RD/watch.log" 2>&1 &
        wpid=$!
        for _ in $(seq 1 $((600 + (GB + RG) * SIZE / 100))); do [ -s "$RD/ready" ] && break; kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
        rss_sampler "$RD/rss.txt" &
        rsspid=$!
        audit=$(audit_args)
        mready="" ksready="" rname=muster-restart
        if [ "${MUSTER_BENCH_RESTART_ALONE:-0}" = 1 ]; then
            # muster restarted alone (a crash, an upgrade, a failover):
            # kube-scheduler runs and has synced before muster starts; t0
            # is muster's start, kube-scheduler's ready is from its own
            rname=muster-restart-alone
            tk=$EPOCHREALTIME
            start_kube_scheduler "$D/sched-muster.yaml" "$RD/kube-scheduler.log"
            wait_http "$rwait" "https://127.0.0.1:$SPORT/readyz" -k &&
                ksready=$(awk -v a="$EPOCHREALTIME" -v b="$tk" 'BEGIN{printf "%.2f", a-b}')
            t0=$EPOCHREALTIME
            start_muster "$RD/muster.log"
        else
            t0=$EPOCHREALTIME
            start_muster "$RD/muster.log"
            start_kube_scheduler "$D/sched-muster.yaml" "$RD/kube-scheduler.log"
            # the limit beside it: kube-scheduler's /readyz turns 200 once
            # its own informers have taken the same objects
            # (sched-handler-sync)
            ( wait_http "$rwait" "https://127.0.0.1:$SPORT/readyz" -k &&
                awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN{printf "%.2f", a-b}' >"$RD/ks-ready" ) &
            kspid=$!
        fi
        wait_http "$rwait" "http://127.0.0.1:$MPORT/readyz" && mready=$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')
        [ "$rname" = muster-restart ] && wait "$kspid" && ksready=$(cat "$RD/ks-ready")
        wait $wpid || { FAILED=1; log "restart: not every pending pod bound ($(cat "$RD/watch.log"))"; }
        kill "$rsspid" 2>/dev/null; wait "$rsspid" 2>/dev/null
        rss_hwm "$RD/rss.txt"
        stop kube-scheduler; stop muster
        # shellcheck disable=SC2086 # $audit: its flags, split on purpose
        res=$(bp analyze --binds "$RD/binds.txt" --t0 "$t0" --contender "$rname" --run 1 \
            --expect "$(( RG * SIZE ))" --size "$SIZE" --groups "$RG" $audit |
            jq -c --argjson rss "$(rss_json "$RD/rss.txt")" --arg mr "$mready" --argjson bound "$(( GB * SIZE ))" \
                --arg kr "$ksready" \
                '. + {rss_peak_mib: $rss, bound_before: $bound} + (if $mr == "" then {} else {muster_ready_s: ($mr|tonumber)} end)
                   + (if $kr == "" then {} else {kube_scheduler_ready_s: ($kr|tonumber)} end)')
        echo "$res" >>"$R/restart.jsonl"
        echo "$res"
        log "restart: $(jq -r '"ready at \(.muster_ready_s // "?") s (kube-scheduler at \(.kube_scheduler_ready_s // "?") s), first new bind at \(.first_bind_s // 0 | .*100|floor/100) s, last at \(.last_bind_s // 0 | .*10|floor/10) s, \(.bound)/\(.expect) bound, muster peak RSS \(.rss_peak_mib.muster // "?") MiB"' <<<"$res")"
    else
        FAILED=1
        log "restart: setting up failed: $(tail -2 "$RD"/*.log | tr '\n' ' ')"
    fi
    bp clean --timeout $(( 300 + GB * SIZE / 50 )) >>"$RD/clean.log" 2>&1
    kubectl delete nodes -l muster.e2e/pool=spare --wait=false >/dev/null 2>&1
fi

# ---------------------------------------------------- gang latency (muster) --

LAT=""
if [ "$LAT_REPS" -gt 0 ]; then
    log "gang latency: filling $NODES nodes with $NODES gangs x 8 one-GPU pods ($LAT_FILL), then $LAT_REPS x (pods, vcjob)"
    LD=$R/latency
    mkdir -p "$LD"
    bp clean --timeout 180 >"$LD/clean.log" 2>&1
    start_muster "$LD/muster.log"
    start_kube_scheduler "$D/sched-muster.yaml" "$LD/kube-scheduler.log"
    wait_http 60 "http://127.0.0.1:$MPORT/readyz" || log "muster not ready after 60 s"
    ( while :; do
          printf '# t %s\n' "$EPOCHREALTIME"
          curl -s --max-time 1 "http://127.0.0.1:$MPORT/metrics" | grep -E '^muster_(cycle|releases|cycles)'
          sleep 1
      done ) >"$LD/muster-samples.txt" 2>/dev/null &
    LSCR=$!
    apiserver_metrics >"$LD/apiserver-before.txt"
    if timeout $(( 1200 + NODES + LAT_REPS * 80 )) "$PY" "$D/bench.py" latency --kubeconfig "$KUBECONFIG" --ns bench \
        --fill "$NODES" --size 8 --reps "$LAT_REPS" --kinds pods,vcjob --fill-mode "$LAT_FILL" \
        --fill-timeout $(( 300 + NODES )) --out "$LD/latency.txt" 2>"$LD/latency.err" | tee "$LD/latency.log" >&2; then
        LAT=$(grep '^LATENCY ' "$LD/latency.log" | sed 's/^LATENCY //')
    else
        FAILED=1
        log "latency test failed: $(tail -3 "$LD/latency.err")"
    fi
    cat "$LD/latency.err" >&2
    kill "$LSCR" 2>/dev/null; wait "$LSCR" 2>/dev/null
    curl -s --max-time 5 "http://127.0.0.1:$MPORT/metrics" >"$LD/muster-metrics.txt"
    bp metrics --kind muster --after "$LD/muster-metrics.txt" --samples "$LD/muster-samples.txt" >"$LD/muster-figures.json"
    apiserver_metrics >"$LD/apiserver-after.txt"
    bp metrics --kind apiserver --before "$LD/apiserver-before.txt" --after "$LD/apiserver-after.txt" >"$LD/apiserver-figures.json"
    stop kube-scheduler; stop muster
fi

# ------------------------------------------------------------- Volcano ----

if want volcano || want volcano-vcjob; then
    log "Volcano: applying its CRDs (they replace muster's) and starting vc-controller-manager"
    bp clean --timeout $(( 300 + NODES / 10 )) >"$R/clean-volcano.log" 2>&1
    kubectl apply --server-side --force-conflicts -f "$VOL_DIR/crd/volcano/" -f "$VOL_DIR/crd/jobflow/" \
        >"$R/volcano-crds.log" 2>&1 || { tail -5 "$R/volcano-crds.log" >&2; e2e_die "cannot apply Volcano's CRDs"; }
    kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null
    bg vc-controller-manager "$R/vc-controller-manager.log" "$VOL_DIR/bin/vc-controller-manager" \
        --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --scheduler-name=volcano \
        --controllers=queue-controller,pg-controller \
        --listen-address="127.0.0.1:$VCP" --healthz-address="127.0.0.1:$VCH" \
        --kube-api-qps="$QPS" --kube-api-burst="$QPS" -v="$V"
    if kubectl wait --for=jsonpath='{.status.state}'=Open queue/default --timeout=90s >/dev/null 2>&1; then
        for G in ${GROUPS_LIST//,/ }; do
            for i in $(seq 1 "$RUNS"); do
                for c in volcano volcano-vcjob; do want "$c" && run_one "$c" "$i" "$G"; done
            done
        done
    else
        log "Volcano: queue default never became Open; skipping (log: $R/vc-controller-manager.log)"
        FAILED=1
    fi
    stop vc-controller-manager
fi

# ------------------------------------------------------------- summary ----

{
    echo
    echo "## $NODES nodes x 8 GPUs, $GROUPS_LIST gangs x $SIZE one-GPU pods, $RUNS runs, client qps $QPS"
    echo
    sed 's/^/    /' "$R/versions.txt"
    echo "    load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    bp summary --results "$R/runs.jsonl"
    if [ -n "$LAT" ]; then
        echo
        echo "Gang latency with muster, capacity freed (the victim's last pod seen deleted) -> last member bound ($NODES gangs running, fill $LAT_FILL):"
        echo
        echo "| waiting gang | reps | timeouts | p50 | p90 | p99 | max | from the DELETE call p50 / p99 |"
        echo "|---|---|---|---|---|---|---|---|"
        jq -r 'def ms: if . == null then "timeout" else "\(. * 1000 | floor) ms" end;
            to_entries[] | "| \(.key) | \(.value.reps) | \(.value.timeouts) | \(.value.p50_s|ms) | \(.value.p90_s|ms) | \(.value.p99_s|ms) | \(.value.max_s|ms) | \(.value.from_delete_call_p50_s|ms) / \(.value.from_delete_call_p99_s|ms) |"' <<<"$LAT"
    fi
} | tee "$R/summary.md"
exit $FAILED
