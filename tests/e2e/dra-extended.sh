#!/usr/bin/env bash
# End-to-end: KEP-5004 (DRAExtendedResource, alpha in Kubernetes 1.35, the
# gate on for kube-apiserver and kube-scheduler through cluster.sh's
# MUSTER_FEATURE_GATES): a DeviceClass names nvidia.com/gpu as its
# extendedResourceName, so a pod's plain `nvidia.com/gpu: 1` is served by
# a DRA device on nodes whose allocatable has no nvidia.com/gpu
# (kube-scheduler makes the pod a `<pod>-extended-resources-*` claim and
# allocates it). muster plans such pods against the class's devices: a
# vcjob of 8 runs whole on two DRA-only nodes of 4 devices each, every
# pod's claim allocated on its node, and a gang of 4 more waits whole.
# Prints TAP; exit 0 when all pass.
#
# Usage: tests/e2e/dra-extended.sh MUSTER_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: dra-extended.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

export MUSTER_FEATURE_GATES=DRAExtendedResource=true
tap_up dra-extended

plainjob() { gpu_vcjob plain "$1" default "$2" | kubectl apply -f - >/dev/null; }
running() { kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running '; }
bound() {
    kubectl get pods -o custom-columns=N:.metadata.name,NODE:.spec.nodeName --no-headers 2>/dev/null |
        grep "^$1" | awk '$2 != "<none>"' | wc -l
}

kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  extendedResourceName: nvidia.com/gpu
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
YAML
check "the API server keeps extendedResourceName (the gate is on)" \
    equals nvidia.com/gpu kubectl get deviceclass gpu.nvidia.com -o jsonpath='{.spec.extendedResourceName}'
"$HERE/nodes.sh" "$D" 2 0 dra >/dev/null 2>&1
for node in dra-000 dra-001; do
    kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $node-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: $node
  pool: {name: $node, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}, {name: gpu-2}, {name: gpu-3}]
YAML
done

plainjob plain 8
check "8 pods asking a plain nvidia.com/gpu run whole on DRA-only nodes" wait_for 90 equals 8 running plain-
ext_claims_ok() {
    kubectl get pods -o json | python3 -c '
import json, subprocess, sys
pods = [p for p in json.load(sys.stdin)["items"] if p["metadata"]["name"].startswith("plain-")]
claims = {c["metadata"]["name"]: c for c in json.loads(subprocess.check_output(
    ["kubectl", "get", "resourceclaims", "-o", "json"]))["items"]}
bad = []
for p in pods:
    st = (p.get("status") or {}).get("extendedResourceClaimStatus") or {}
    c = claims.get(st.get("resourceClaimName", ""))
    res = (((c or {}).get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
    if not res or res[0]["pool"] != p["spec"].get("nodeName"):
        bad.append((p["metadata"]["name"], p["spec"].get("nodeName"), st, res))
if bad or len(pods) != 8:
    print(bad or pods); sys.exit(1)'
}
# kube-scheduler writes the claim it makes and its allocation in separate
# calls (and makes a new claim when a bind is refused): wait for them
check "each pod's extended-resource claim is allocated on its own node" wait_for 30 ext_claims_ok
# a member muster bound itself at the gang's first /bind would skip the
# PreBind that allocates its claim (it flaked so in CI): never for these
check "muster left every member's bind to kube-scheduler (no gang bound at its first member)" \
    equals 0 bash -c "curl -sf http://127.0.0.1:$METRICS/metrics | awk '\$1 ~ /^muster_extender_gangs_bound_at_first_member_total/ && \$1 ~ /result=\"ok\"/ { v += \$2 } END { print v + 0 }'"
plainjob more 4
sleep 8
check "a gang of 4 more waits whole: the 8 devices are taken" equals 0 bound more-
reason_ok() {
    local pg msg
    pg=$(kubectl get pg -o custom-columns=N:.metadata.name,O:.metadata.ownerReferences[0].name --no-headers | awk '$2 == "more" {print $1}')
    msg=$(kubectl get pg "$pg" -o jsonpath='{.status.conditions[0].message}')
    echo "$msg" | grep -q "nvidia.com/gpu" || { echo "$msg"; return 1; }
}
check "and its reason counts the devices as nvidia.com/gpu" wait_for 20 reason_ok

tap_end
