#!/usr/bin/env bash
# End-to-end throughput of muster with GPUs through DRA against the same
# gangs with GPUs as an extended resource, in one run on one local control
# plane (tests/e2e/cluster.sh: etcd, kube-apiserver, kube-controller-manager
# with its resourceclaim controller, kube-scheduler with muster as its
# extender, kwok):
#
#   ext    G vcjobs of S pods, each `limits: {nvidia.com/gpu: 1}`, on N kwok
#          nodes with 8 nvidia.com/gpu in allocatable (the device plugin)
#   claim  the same vcjobs, each pod with a one-device claim from a
#          ResourceClaimTemplate, on N other kwok nodes with no GPU in
#          allocatable and a ResourceSlice of 8 devices (driver
#          gpu.example.com); muster maps the class to nvidia.com/gpu
#          (deviceClassMappings), kube-scheduler's DynamicResources
#          allocates each claim on the node muster pins
#
# Each run starts from a clean slate (no vcjobs, pods or claims), creates
# the vcjobs at t0 and polls until every pod is bound; runs alternate
# between the kinds (noise drifts evenly). With --backlog the objects are
# made before muster starts instead: muster is stopped, G PodGroups and
# their G x S pods (annotated with their group, schedulerName volcano;
# the resourceclaim controller makes the claim pods' claims meanwhile)
# are created, and muster is started at t0. Prints one line per run, then
# per kind and backlog the median seconds and pods/s, and claim/ext.
#
# Usage: bench/dra-throughput.sh [--nodes N] [--groups G[,G..]] [--size S]
#            [--runs R] [--muster PATH] [--backlog] [--keep]
#   --nodes N        kwok nodes of each kind (default 500)
#   --groups G,...   vcjobs per run, each backlog size in turn (default 100,500)
#   --size S         pods per vcjob, one GPU each (default 8)
#   --runs R         runs per kind and backlog (default 2)
#   --muster PATH    muster binary (default build/src/muster)
#   --backlog        PodGroups and pods made before muster starts
#   --keep           keep the run directory, with kube-scheduler's
#                    FailedScheduling events (failed-scheduling.json)
# Exit: 0 when every run completed; 1 when one timed out; 2 usage.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
E2E=$ROOT/tests/e2e
# shellcheck source=tests/e2e/lib.sh
. "$E2E/lib.sh"
NODES=500 GROUPS_LIST=100,500 SIZE=8 RUNS=2 KEEP=0 BACKLOG=0
MUSTER=$ROOT/build/src/muster
usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --nodes) NODES=${2:?}; shift 2 ;;
    --groups) GROUPS_LIST=${2:?}; shift 2 ;;
    --size) SIZE=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    --muster) MUSTER=${2:?}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --backlog) BACKLOG=1; shift ;;
    *) usage ;;
    esac
done
for v in "$NODES" "$SIZE" "$RUNS" ${GROUPS_LIST//,/ }; do
    case "$v" in ''|*[!0-9]*|0) usage ;; esac
done

D=$(mktemp -d)
PORT=$(pick_port) # below the ephemeral range: see free_port, tests/e2e/tap.sh
MPID=""
cleanup() {
    [ -n "$MPID" ] && kill "$MPID" 2>/dev/null
    # why kube-scheduler turned pods away (a node muster nominated that its
    # DynamicResources refused, ...): the events go with the cluster
    [ "$KEEP" = 1 ] && kubectl get events -A --field-selector reason=FailedScheduling \
        -o json >"$D/failed-scheduling.json" 2>/dev/null
    "$E2E/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "$KEEP" = 1 ]; then echo "# kept $D" >&2; else rm -rf "$D"; fi
}
trap cleanup EXIT
say() { echo "# $*" >&2; }

MUSTER_EXTENDER_URL=http://127.0.0.1:$PORT "$E2E/cluster.sh" up "$D" >"$D/up.log" 2>&1 ||
    { tail -20 "$D/up.log" >&2; exit 1; }
eval "$("$E2E/cluster.sh" env "$D")"
kubectl apply -f "$ROOT/crds/" >/dev/null
say "nodes: $NODES with nvidia.com/gpu, $NODES DRA-only"
"$E2E/nodes.sh" "$D" "$NODES" 8 gpu >/dev/null 2>&1 || exit 1
"$E2E/nodes.sh" "$D" "$NODES" 0 dra >/dev/null 2>&1 || exit 1
{
    cat <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
YAML
    for i in $(seq 0 $((NODES - 1))); do
        n=$(printf 'dra-%03d' "$i")
        cat <<YAML
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $n-gpu}
spec:
  driver: gpu.example.com
  nodeName: $n
  pool: {name: $n, generation: 1, resourceSliceCount: 1}
  devices: [{name: g0}, {name: g1}, {name: g2}, {name: g3}, {name: g4}, {name: g5}, {name: g6}, {name: g7}]
YAML
    done
} >"$D/dra.yaml"
kubectl apply --server-side -f "$D/dra.yaml" >/dev/null || exit 1
{ "$MUSTER" simulate --print-config
  printf 'deviceClassMappings:\n- name: nvidia.com/gpu\n  deviceClassNames: [gpu.example.com]\n'
} >"$D/muster.conf"
start_muster() {
    "$MUSTER" serve --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$PORT" \
        --config "$D/muster.conf" >>"$D/muster.log" 2>&1 &
    MPID=$!
}
stop_muster() {
    [ -n "$MPID" ] && kill "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null
    MPID=""
}
start_muster
for _ in $(seq 60); do
    grep -q "caches synced" "$D/muster.log" && break
    sleep 1
done

# jobs KIND G: the G vcjobs of one run (ext: plain nvidia.com/gpu)
jobs() {
    local i
    for i in $(seq 1 "$2"); do
        echo ---
        gpu_vcjob "$([ "$1" = claim ] && echo claim || echo plain)" "$1-$i" default "$SIZE"
    done
}
# gangs KIND G: G PodGroups of SIZE and their pods (--backlog)
gangs() {
    local i k res
    if [ "$1" = claim ]; then
        res='resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}}]'
    else
        res='containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1, cpu: "1"}}}]'
    fi
    for i in $(seq 1 "$2"); do
        printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s-%d}\nspec: {minMember: %d, queue: default}\n' "$1" "$i" "$SIZE"
        for k in $(seq 0 $((SIZE - 1))); do
            printf -- '---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d-%d\n  annotations: {scheduling.k8s.io/group-name: %s-%d}\nspec:\n  schedulerName: volcano\n  %s\n' \
                "$1" "$i" "$k" "$1" "$i" "$res"
        done
    done
}
bound() {
    kubectl get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null |
        grep -c .
}
clean() {
    kubectl delete vcjob --all --wait=false >/dev/null 2>&1
    kubectl delete pods --all --wait=false >/dev/null 2>&1
    kubectl delete podgroups --all --wait=false >/dev/null 2>&1
    for _ in $(seq 300); do
        [ "$(kubectl get pods --no-headers 2>/dev/null | wc -l)" = 0 ] &&
            [ "$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l)" = 0 ] && return 0
        sleep 1
    done
    return 1
}

status=0
declare -A T
for g in ${GROUPS_LIST//,/ }; do
    want=$((g * SIZE))
    for r in $(seq 1 "$RUNS"); do
        for kind in ext claim; do
            clean || { say "clean slate not reached"; status=1; continue; }
            if [ "$BACKLOG" = 1 ]; then
                stop_muster
                gangs "$kind" "$g" >"$D/jobs.yaml"
                kubectl apply --server-side -f "$D/jobs.yaml" >/dev/null
                t0=$(date +%s.%N)
                start_muster
            else
                jobs "$kind" "$g" >"$D/jobs.yaml"
                t0=$(date +%s.%N)
                kubectl apply -f "$D/jobs.yaml" >/dev/null
            fi
            limit=$((120 + want / 10)) got=0
            while :; do
                got=$(bound)
                [ "$got" -ge "$want" ] && break
                if [ "$(echo "$(date +%s.%N) - $t0 > $limit" | bc)" = 1 ]; then
                    status=1; break
                fi
                sleep 0.25
            done
            t1=$(date +%s.%N)
            s=$(echo "$t1 - $t0" | bc)
            printf '{"kind":"%s","backlog":%d,"groups":%d,"pods":%d,"bound":%d,"seconds":%.2f,"pods_per_s":%.1f}\n' \
                "$kind" "$BACKLOG" "$g" "$want" "$got" "$s" "$(echo "$got / $s" | bc -l)"
            T[$kind.$g]="${T[$kind.$g]:-} $s"
        done
    done
done
echo
echo "| backlog | ext: median s (pods/s) | claim: median s (pods/s) | claim / ext time |"
echo "|---|---|---|---|"
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for g in ${GROUPS_LIST//,/ }; do
    e=$(echo "${T[ext.$g]}" | med) c=$(echo "${T[claim.$g]}" | med) p=$((g * SIZE))
    printf '| %d x %d | %.1f (%.0f) | %.1f (%.0f) | %.2f |\n' "$g" "$SIZE" "$e" \
        "$(echo "$p / $e" | bc -l)" "$c" "$(echo "$p / $c" | bc -l)" "$(echo "$c / $e" | bc -l)"
done
exit $status
