#!/usr/bin/env bash
# End-to-end smoke test of the local control plane: build (cached), start a
# cluster in a temp dir, create 2 kwok GPU nodes, run a Deployment of two
# one-GPU pods with the stock default-scheduler, wait until both are Running on
# kwok nodes, delete it (garbage collection + kwok's pod-delete stage), stop.
#
# Usage: tests/e2e/smoke.sh
# Env:   MUSTER_KEEP=1 keeps the run dir; MUSTER_SMOKE_TIMEOUT (default 90 s)
#        bounds the wait for Running pods; MUSTER_NO_BUILD=1 skips (exit 77)
#        instead of building when the binaries are not cached; see cluster.sh.
# Prints `ok` and exits 0, or prints the failure with log tails and exits 1.
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

WAIT=${MUSTER_SMOKE_TIMEOUT:-90}
T0=$(date +%s)
D=""
STATUS=1

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ -n "$D" ]; then
        "$HERE/cluster.sh" down "$D" >/dev/null 2>&1 || true
        if [ "${MUSTER_KEEP:-0}" = 1 ]; then
            echo "run dir kept: $D" >&2
        else
            rm -rf "$D"
        fi
    fi
    if [ "$STATUS" = 0 ] && [ "$rc" = 0 ]; then
        e2e_log "smoke test passed in $(( $(date +%s) - T0 ))s"
        echo "ok"
        exit 0
    fi
    echo "FAIL: smoke test failed after $(( $(date +%s) - T0 ))s" >&2
    exit 1
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# fail MESSAGE: print the cluster's state and the components' log tails, exit 1.
# fail --no-dump MESSAGE: the same without them (cluster.sh already printed them).
fail() {
    local dump=1
    [ "$1" != --no-dump ] || { dump=0; shift; }
    e2e_log "FAIL: $*"
    if [ $dump = 1 ] && [ -n "$D" ] && [ -f "$D/cluster.env" ]; then
        eval "$("$HERE/cluster.sh" env "$D" 2>/dev/null)" || true
        {
            echo "----- kubectl get nodes,pods -A -o wide -----"
            kubectl get nodes,pods -A -o wide 2>&1 || true
            echo "----- kubectl describe pods -n smoke -----"
            kubectl describe pods -n smoke 2>&1 | tail -n 60 || true
            echo "----- events -n smoke -----"
            kubectl get events -n smoke --sort-by=.lastTimestamp 2>&1 | tail -n 30 || true
        } >&2
        log_tails "$D" kube-scheduler kube-controller-manager kwok kube-apiserver etcd
    fi
    exit 1
}

# bounded poll: poll SECONDS DESCRIPTION COMMAND...
poll() {
    local secs=$1 what=$2 deadline
    shift 2
    deadline=$(( $(date +%s) + secs ))
    until "$@"; do
        [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what"
        sleep 0.5
    done
}

if [ "${MUSTER_NO_BUILD:-0}" = 1 ] && ! "$HERE/build-control-plane.sh" --check; then
    # meson and automake read 77 as "skipped"
    echo "SKIP: control-plane binaries not built under $MUSTER_CACHE and MUSTER_NO_BUILD=1" >&2
    trap - EXIT
    exit 77
fi
"$HERE/build-control-plane.sh" >/dev/null || fail --no-dump "build-control-plane.sh failed"
D=$(mktemp -d "${TMPDIR:-/tmp}/muster-e2e-smoke.XXXXXX")
"$HERE/cluster.sh" up "$D" || fail --no-dump "cluster.sh up failed"
eval "$("$HERE/cluster.sh" env "$D")"
kubectl version >/dev/null || fail "kubectl cannot reach the apiserver"

"$HERE/nodes.sh" "$D" 2 || fail "nodes.sh failed"

kubectl create namespace smoke >/dev/null || fail "cannot create namespace smoke"
kubectl apply -f - >/dev/null <<'EOF' || fail "cannot create the Deployment"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: smoke
  namespace: smoke
spec:
  replicas: 2
  selector:
    matchLabels: {app: smoke}
  template:
    metadata:
      labels: {app: smoke}
    spec:
      schedulerName: default-scheduler
      containers:
      - name: main
        image: registry.invalid/muster/pause:never-pulled
        resources:
          requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
EOF

# Both pods Running, each bound to a kwok node of the gpu pool.
two_running() {
    local nodes
    nodes=$(kubectl get nodes -l muster.e2e/pool=gpu -o jsonpath='{.items[*].metadata.name}') || return 1
    [ "$(kubectl get pods -n smoke -l app=smoke -o json | jq --arg nodes "$nodes" '
        ($nodes | split(" ")) as $kwok
        | [.items[] | select(.status.phase == "Running"
                             and .metadata.deletionTimestamp == null
                             and ((.spec.nodeName // "") as $n | $kwok | index($n) != null))]
        | length')" = 2 ]
}
poll "$WAIT" "2 Running smoke pods on kwok nodes" two_running
e2e_log "both pods Running after $(( $(date +%s) - T0 ))s"
kubectl get nodes,pods -n smoke -o wide

# The scheduler really accounted for the GPUs: each node has 8, each pod 1.
gpus=$(kubectl get pods -n smoke -o jsonpath='{range .items[*]}{.spec.containers[0].resources.limits.nvidia\.com/gpu}{" "}{end}') ||
    fail "cannot read the pods' GPU limits"
[ "$gpus" = "1 1 " ] || fail "pods do not each request nvidia.com/gpu: 1 (got '$gpus')"

# Deleting the Deployment removes its pods: garbage collector (controller
# manager) plus kwok's pod-delete stage (no kubelet).
kubectl delete deployment -n smoke smoke --wait=false >/dev/null || fail "cannot delete the Deployment"
no_pods() { [ "$(kubectl get pods -n smoke -o name | wc -l)" = 0 ]; }
poll 60 "the smoke pods to be deleted" no_pods
# Namespace deletion finishes (namespace controller).
kubectl delete namespace smoke --wait=false >/dev/null || fail "cannot delete namespace smoke"
ns_gone() { ! kubectl get namespace smoke >/dev/null 2>&1; }
poll 60 "namespace smoke to be deleted" ns_gone

STATUS=0
