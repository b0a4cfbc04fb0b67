#!/usr/bin/env bash
# Creates COUNT simulated GPU nodes (managed by kwok) in the cluster of run dir
# DIR with one `kubectl apply`, then waits until they are Ready.
#
# Usage: tests/e2e/nodes.sh DIR COUNT [GPUS] [PREFIX]
#   GPUS    nvidia.com/gpu per node (default 8; 0 = a CPU-only node)
#   PREFIX  node names PREFIX-000, PREFIX-001, ... (default gpu); the nodes
#           also carry the label muster.e2e/pool=PREFIX
# Env (optional):
#   MUSTER_NODE_CPU (96), MUSTER_NODE_MEMORY (1Ti), MUSTER_NODE_PODS (110),
#   MUSTER_NODE_GPU_PRODUCT (NVIDIA-A100-SXM4-80GB),
#   MUSTER_NODE_LABELS    extra labels, "k1=v1,k2=v2"
#   MUSTER_NODE_START     first index (default 0), to add nodes to a pool
#   MUSTER_E2E_TIMEOUT    seconds to wait for Ready (default 60 + COUNT/20)
# Exit: 0 ok; 1 failure; 2 usage.
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

usage() { sed -n '5,10p' "$0" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 4 ] || usage
D=$1 COUNT=$2 GPUS=${3:-8} PREFIX=${4:-gpu}
case "$COUNT" in ''|*[!0-9]*) e2e_log "COUNT '$COUNT' is not a number"; usage ;; esac
case "$GPUS" in ''|*[!0-9]*) e2e_log "GPUS '$GPUS' is not a number"; usage ;; esac
case "$PREFIX" in
    *[!a-z0-9-]*|-*|"") e2e_die "PREFIX '$PREFIX' must be lower-case letters, digits and '-'" ;;
esac
[ "$COUNT" -gt 0 ] || e2e_die "COUNT must be > 0"
[ -f "$D/cluster.env" ] || e2e_die "$D/cluster.env not found: run 'cluster.sh up $D' first"
eval "$("$HERE/cluster.sh" env "$D")"

CPU=${MUSTER_NODE_CPU:-96}
MEM=${MUSTER_NODE_MEMORY:-1Ti}
PODS=${MUSTER_NODE_PODS:-110}
PRODUCT=${MUSTER_NODE_GPU_PRODUCT:-NVIDIA-A100-SXM4-80GB}
START=${MUSTER_NODE_START:-0}
TIMEOUT=${MUSTER_E2E_TIMEOUT:-$(( 60 + COUNT / 20 ))}
last=$(( START + COUNT - 1 ))
width=${#last}
[ "$width" -ge 3 ] || width=3

extra=""
if [ -n "${MUSTER_NODE_LABELS:-}" ]; then
    IFS=, read -r -a kvs <<<"$MUSTER_NODE_LABELS"
    for kv in "${kvs[@]}"; do
        case "$kv" in *=*) ;; *) e2e_die "MUSTER_NODE_LABELS: '$kv' is not k=v" ;; esac
        extra="$extra      ${kv%%=*}: \"${kv#*=}\"
"
    done
fi

gpu_labels="" gpu_res=""
if [ "$GPUS" -gt 0 ]; then
    gpu_labels="      nvidia.com/gpu.present: \"true\"
      nvidia.com/gpu.product: \"$PRODUCT\"
      nvidia.com/gpu.count: \"$GPUS\"
"
    gpu_res="      nvidia.com/gpu: \"$GPUS\"
"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/muster-nodes.XXXXXX")
trap 'rm -rf "$work"' EXIT
# One List per NODES_CHUNK nodes, applied NODES_PAR at a time (server-side
# apply: one PATCH per node, no GET before it): thousands of nodes in about
# a minute instead of one client walking them one by one.
NODES_CHUNK=250 NODES_PAR=4
for i in $(seq "$START" "$last"); do
    name=$(printf '%s-%0*d' "$PREFIX" "$width" "$i")
    echo "$name" >>"$work/names"
    f=$work/chunk-$(( (i - START) / NODES_CHUNK )).yaml
    [ -f "$f" ] || printf 'apiVersion: v1\nkind: List\nitems:\n' >"$f"
    # kwok manages nodes annotated kwok.x-k8s.io/node=fake. No taints:
    # the scheduler needs untainted nodes with status.allocatable, which
    # the apiserver accepts on create; kwok's node-initialize stage keeps
    # allocatable/capacity and fills conditions, addresses and nodeInfo.
    cat >>"$f" <<EOF
- apiVersion: v1
  kind: Node
  metadata:
    name: $name
    annotations:
      kwok.x-k8s.io/node: fake
      node.alpha.kubernetes.io/ttl: "0"
    labels:
      type: kwok
      muster.e2e/pool: "$PREFIX"
      kubernetes.io/hostname: $name
      kubernetes.io/os: linux
      kubernetes.io/arch: amd64
      beta.kubernetes.io/os: linux
      beta.kubernetes.io/arch: amd64
      node-role.kubernetes.io/agent: ""
${gpu_labels}${extra}  status:
    allocatable:
      cpu: "$CPU"
      memory: "$MEM"
      pods: "$PODS"
${gpu_res}    capacity:
      cpu: "$CPU"
      memory: "$MEM"
      pods: "$PODS"
${gpu_res}
EOF
done

t0=$(date +%s)
# shellcheck disable=SC2016
if ! ls "$work"/chunk-*.yaml | xargs -P "$NODES_PAR" -I{} sh -c \
    'kubectl apply --server-side --force-conflicts --field-manager=muster-e2e -f "$1" >/dev/null 2>"$1.err" || { cat "$1.err" >&2; exit 1; }' _ {}; then
    e2e_die "kubectl apply of $COUNT nodes failed"
fi
# Ready: one list of the pool per poll (kubectl wait watches node by node,
# which at thousands of nodes outlasts any timeout).
ready_count() {
    kubectl get nodes -l "muster.e2e/pool=$PREFIX" --chunk-size=1000 \
        -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
        awk '$2 == "True" { print $1 }' | grep -cFxf "$work/names" || true
}
deadline=$(( $(date +%s) + TIMEOUT ))
while :; do
    n=$(ready_count)
    [ "${n:-0}" -ge "$COUNT" ] && break
    if [ "$(date +%s)" -ge "$deadline" ]; then
        kubectl get nodes -l "muster.e2e/pool=$PREFIX" -o wide 2>&1 | head -20 >&2 || true
        log_tails "$D" kwok kube-apiserver
        e2e_die "nodes of pool $PREFIX: ${n:-0} of $COUNT Ready within ${TIMEOUT}s (kwok log: $D/logs/kwok.log)"
    fi
    sleep 1
done
e2e_log "$COUNT nodes $(printf '%s-%0*d' "$PREFIX" "$width" "$START")..$(printf '%s-%0*d' "$PREFIX" "$width" "$last") Ready (${GPUS} GPUs each) in $(( $(date +%s) - t0 ))s"
