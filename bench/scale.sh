#!/usr/bin/env bash
# The scale comparison of issue 15 in one command: a local control plane
# (tests/e2e/cluster.sh: etcd, kube-apiserver, kwok) with NODES kwok nodes
# x 8 GPUs, GROUPS gangs x SIZE one-GPU pods created before each scheduler
# starts (a backlog, kube-controller-manager off), each contender on the
# same objects in turn:
#
#   noop      kube-scheduler + bench/noop-extender with muster's
#             kube-scheduler config: the protocol's own ceiling
#   bind-floor  no scheduler: a client binds the same backlog as muster does
#             (8 gangs at once, a gang's members together, gang g on the
#             g-th node): the gang span and pods/s that the apiserver, kwok
#             and the watcher allow here, muster's span is held against it
#   muster    kube-scheduler + `muster serve`, PodGroups + annotated pods
#   volcano   Volcano v1.14.1's vc-scheduler (+ vc-controller-manager for the
#             queue) built from its Go module, on the same objects
#
# then muster restarted on a full cluster (every GPU of the NODES nodes
# running, created bound) with RESTART more pods pending and room for them
# on RESTART/8 new nodes. It is bench/throughput.sh with these sizes (the
# runs, the creates, the watch that times the binds and the RSS sampling
# are that script's); this prints one table:
#
#   contender, time to ready (muster), time to kube-scheduler's /readyz
#   200 (the restart case: its own caches of the same objects, the limit
#   muster's ready is held against), first bind, last bind, pods/s,
#   gang span (first -> last member bound) p50 / p99, partial gangs at the
#   end, peak RSS of the scheduler (muster, the no-op extender,
#   vc-scheduler), of kube-scheduler and of kube-apiserver
#
# and the ratios muster / noop and muster / volcano (pods/s), muster /
# bind-floor (gang span p99).
#
# Usage: bench/scale.sh [--nodes N] [--groups G] [--size S] [--restart P]
#            [--contenders LIST] [--muster PATH] [--keep]
#   --nodes N        kwok nodes (default 5000)
#   --groups G       gangs (default 5000)
#   --size S         pods per gang (default 8)
#   --restart P      pending pods for the restart case (default 10000; 0: none)
#   --contenders L   comma list of noop, bind-floor, muster, volcano (default
#                    all four; bind-floor needs GROUPS <= NODES)
#   --muster PATH    muster binary (default build/src/muster; build it
#                    --buildtype=release for figures)
#   --keep           keep the run directory
# Env: MUSTER_BENCH_RUN_TIMEOUT (seconds per run; default 120 + pods/10),
#      MUSTER_BENCH_RESTART_ALONE=1 (the restart case restarts muster alone,
#      kube-scheduler started first and synced: row muster-restart-alone,
#      whose kube-scheduler ready is from kube-scheduler's own start),
#      and bench/throughput.sh's.
# Output: the table on stdout (Markdown), the per-run JSON before it.
# Exit: bench/throughput.sh's (0 when every run completed).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
NODES=5000 NGROUPS=5000 SIZE=8 RESTART=10000 CONTENDERS=noop,bind-floor,muster,volcano KEEP=""
MUSTER=$ROOT/build/src/muster

usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" >&2; exit 2; }
num() { case "$2" in ''|*[!0-9]*) echo "$1: '$2' is not a number" >&2; usage ;; esac; }
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) num "$1" "${2:-}"; NODES=$2; shift 2 ;;
        --groups) num "$1" "${2:-}"; NGROUPS=$2; shift 2 ;;
        --size) num "$1" "${2:-}"; SIZE=$2; shift 2 ;;
        --restart) num "$1" "${2:-}"; RESTART=$2; shift 2 ;;
        --contenders) CONTENDERS=${2:-}; shift 2 ;;
        --muster) MUSTER=${2:-}; shift 2 ;;
        --keep) KEEP=--keep; shift ;;
        -h|--help) sed -n '2,/^# Exit:/p' "$0"; exit 0 ;;
        *) echo "unknown argument '$1'" >&2; usage ;;
    esac
done
for c in ${CONTENDERS//,/ }; do
    case "$c" in noop|bind-floor|muster|volcano) ;; *) echo "unknown contender '$c'" >&2; usage ;; esac
done
command -v jq >/dev/null || { echo "scale.sh needs jq (scripts/setup.sh --test installs it)" >&2; exit 2; }

OUT=$(mktemp "${TMPDIR:-/tmp}/muster-scale.XXXXXX")
trap 'rm -f "$OUT"' EXIT
"$HERE/throughput.sh" --nodes "$NODES" --groups "$NGROUPS" --size "$SIZE" --runs 1 \
    --contenders "$CONTENDERS" --no-latency --restart-pending "$RESTART" \
    --muster "$MUSTER" $KEEP >"$OUT"
rc=$?
grep '^{' "$OUT"
echo
echo "## $NODES nodes x 8 GPUs, $NGROUPS gangs x $SIZE one-GPU pods (a backlog), one run each; restart with $RESTART pending"
echo
echo "| contender | ready (s) | kube-scheduler ready (s) | first bind (s) | last bind (s) | bound | pods/s | gang span p50 / p99 (s) | partial gangs | scheduler RSS (MiB) | kube-scheduler RSS (MiB) | kube-apiserver RSS (MiB) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
grep '^{' "$OUT" | jq -rs '
    def f(n): if . == null then "-" else (. * n | round) / n | tostring end;
    .[] | . as $r
    | ($r.rss_peak_mib // {}) as $m
    | "| \($r.contender) | \($r.muster_ready_s | f(100)) | \($r.kube_scheduler_ready_s | f(100)) | \($r.first_bind_s | f(100)) | \($r.last_bind_s | f(10)) | \($r.bound)/\($r.expect) | \($r.pods_per_s | f(1)) | \($r.spread_p50_s | f(100)) / \($r.spread_p99_s | f(100)) | \($r.groups_partial // "-") | \((if ($r.contender | startswith("volcano")) then $m["vc-scheduler"] elif ($r.contender | startswith("noop")) then $m.noop elif $r.contender == "bind-floor" then null else $m.muster end) // "-") | \($m["kube-scheduler"] // "-") | \($m["kube-apiserver"] // "-") |"'
grep '^{' "$OUT" | jq -rs '
    (map(select(.contender == "muster")) | first | .pods_per_s) as $m
    | (map(select(.contender == "noop")) | first | .pods_per_s) as $n
    | (map(select(.contender == "volcano")) | first | .pods_per_s) as $v
    | (map(select(.contender == "muster")) | first | .spread_p99_s) as $ms
    | (map(select(.contender == "bind-floor")) | first | .spread_p99_s) as $fs
    | if $m == null then empty else
        "\nmuster / noop = \(if $n then ($m / $n * 100 | round) / 100 | tostring else "-" end)x, muster / volcano = \(if $v then ($m / $v * 100 | round) / 100 | tostring else "-" end)x (pods/s); gang span p99 muster / bind-floor = \(if $fs and $ms then ($ms / $fs * 100 | round) / 100 | tostring else "-" end)x" end'
exit $rc
