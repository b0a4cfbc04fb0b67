#!/usr/bin/env bash
# End-to-end: GPUs through Dynamic Resource Allocation (resource.k8s.io/v1)
# on a real control plane (kube-controller-manager's resourceclaim
# controller makes each pod's claim from its template, kube-scheduler's
# DynamicResources plugin allocates it on the node muster pins, kwok runs
# the pods). The kwok nodes advertise no nvidia.com/gpu: their GPUs are
# devices of the driver gpu.example.com in ResourceSlices this test writes,
# as a DRA driver would. Prints TAP; exit 0 when all pass.
#
#  - a vcjob of 8 pods, each with a one-device claim from a template, waits
#    whole on 5 free devices and says 8 needed / 5 free; when a slice of 4
#    more devices appears it runs whole, each claim allocated on its pod's
#    node;
#  - deviceClassMappings make the class count as nvidia.com/gpu: a queue
#    with capability nvidia.com/gpu: 4 holds its claim gangs to 4 devices
#    while another queue takes the rest, and a device-plugin gang in the
#    same queue runs on the one node that has nvidia.com/gpu allocatable;
#  - a claim pod never lands on the device-plugin node nor a plain GPU pod
#    on a DRA node;
#  - reclaim: a queue owed devices gets them from a queue over its share,
#    the victim gang's claims are freed and the reclaimer's allocated;
#  - kill -9 of muster just after it released a claim gang: after the
#    restart the gang runs whole and no device is left allocated to a pod
#    that does not run;
#  - a claim of allocationMode All counts in its queue's capability as the
#    most devices it could take on one node until it is allocated, then as
#    the devices its allocation names;
#  - devices of a ResourceSlice with a nodeSelector (reached from the nodes
#    it selects, none of their own) are planned too: a gang of 3 runs whole
#    on two device-less nodes, and a fourth pod waits, none free.
#
# Usage: tests/e2e/dra.sh MUSTER_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: dra.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

# muster's configuration: the default, plus the class mapped to a quota name
CONF=$(mktemp)
{ "$MUSTER" simulate --print-config
  printf 'deviceClassMappings:\n- name: nvidia.com/gpu\n  deviceClassNames: [gpu.example.com]\n'
} >"$CONF"
MUSTER_SERVE_ARGS=(--config "$CONF")

tap_up dra
cp "$CONF" "$D/muster.conf" && rm -f "$CONF"
MUSTER_SERVE_ARGS=(--config "$D/muster.conf") # for the restart below

# ---- helpers -----------------------------------------------------------------

# slice NODE COUNT [POOL]: a ResourceSlice of COUNT devices gpu-0.. on NODE
slice() {
    local i devs=""
    for i in $(seq 0 $(($2 - 1))); do
        devs="$devs
  - name: gpu-$i
    attributes:
      model: {string: H100}
    capacity:
      memory: {value: 80Gi}"
    done
    kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: ${3:-$1}-gpu}
spec:
  driver: gpu.example.com
  nodeName: $1
  pool: {name: ${3:-$1}, generation: 1, resourceSliceCount: 1}
  devices:$devs
YAML
}

claimjob() { gpu_vcjob claim "$@" | kubectl apply -f - >/dev/null; }
plainjob() { gpu_vcjob plain "$@" | kubectl apply -f - >/dev/null; }

running() { # PREFIX: pods Running
    kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running '
}
bound() { # PREFIX: pods with a node
    kubectl get pods -o custom-columns=N:.metadata.name,NODE:.spec.nodeName --no-headers 2>/dev/null |
        grep "^$1" | awk '$2 != "<none>"' | wc -l
}
pg_of() { # JOB: its PodGroup's name
    kubectl get pg -o custom-columns=N:.metadata.name,O:.metadata.ownerReferences[0].name --no-headers |
        awk -v j="$1" '$2 == j {print $1}'
}
pg_says() { # JOB TEXT: its PodGroup's condition message has TEXT
    local msg
    msg=$(kubectl get pg "$(pg_of "$1")" -o jsonpath='{.status.conditions[0].message}')
    echo "$msg" | grep -qF "$2" || { echo "$msg"; return 1; }
}
gpus() { # QUEUE: status.allocated nvidia.com/gpu
    kubectl get queue "$1" -o jsonpath='{.status.allocated.nvidia\.com/gpu}'
}
# claims_on_their_nodes PREFIX: every pod's claim is allocated from the
# pool of the node the pod is bound to (pools are named after nodes)
claims_on_their_nodes() {
    kubectl get pods -o json | python3 -c '
import json, subprocess, sys
pods = [p for p in json.load(sys.stdin)["items"] if p["metadata"]["name"].startswith(sys.argv[1])]
claims = json.loads(subprocess.check_output(["kubectl", "get", "resourceclaims", "-o", "json"]))["items"]
by = {c["metadata"]["name"]: c for c in claims}
bad = []
for p in pods:
    node = p["spec"].get("nodeName")
    st = p.get("status", {}).get("resourceClaimStatuses") or []
    if not st:
        bad.append(p["metadata"]["name"] + ": no claim"); continue
    c = by.get(st[0]["resourceClaimName"])
    res = (((c or {}).get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])
    if not res or res[0]["pool"] != node:
        bad.append("%s on %s: %s" % (p["metadata"]["name"], node, res))
if bad or not pods:
    print(bad or "no pods"); sys.exit(1)' "$1"
}
# on PREFIX POOL: pods of PREFIX bound to nodes of pool POOL
on() {
    kubectl get pods -o custom-columns=N:.metadata.name,NODE:.spec.nodeName --no-headers 2>/dev/null |
        grep "^$1" | awk -v p="$2-" 'index($2, p) == 1' | wc -l
}
pod_count() { kubectl get pods --no-headers 2>/dev/null | wc -l; }

# ---- the cluster: 3 DRA-only nodes, 1 device-plugin node --------------------
kubectl apply -f - >/dev/null <<YAML
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
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
YAML
"$HERE/nodes.sh" "$D" 3 0 dra >/dev/null 2>&1
slice dra-000 4
slice dra-001 1

# ---- a: 8 one-device pods wait whole on 5 devices, then run -------------------
claimjob train default 8
check "the resourceclaim controller makes the pods' claims from the template" \
    wait_for 60 equals 8 bash -c "kubectl get resourceclaims --no-headers 2>/dev/null | wc -l"
check "the gang of 8 waits whole on 5 free devices: its reason says 8 needed, 5 free" \
    wait_for 30 pg_says train "needs 8 devices of class gpu.example.com (1 per pod); free: 5 on 2 nodes, at most 4 on one node"
explain_ok() {
    local out
    out=$("$MUSTER" explain "podgroup/$(pg_of train)" --muster-url "http://127.0.0.1:$METRICS") || return 1
    echo "$out" | grep -qF "needs 8 devices of class gpu.example.com (1 per pod); free: 5 on 2 nodes, at most 4 on one node (add devices" ||
        { echo "$out"; return 1; }
}
check "muster explain names the same numbers" wait_for 20 explain_ok
sleep 3
check "no pod of the gang is bound meanwhile" equals 0 bound train-
slice dra-002 4
check "a slice of 4 more devices: the gang runs whole" wait_for 90 equals 8 running train-
check "every claim is allocated from the pool of its pod's node" claims_on_their_nodes train-
check "no node holds more pods than devices (4, 1, 4)" \
    bash -c "$(declare -f on); test \$(on train- dra-000) -le 4 && test \$(on train- dra-001) -le 1 && test \$(on train- dra-002) -le 4"
kubectl delete vcjob train --wait=false >/dev/null
check "the job's pods go, and their claims with them" \
    wait_for 90 bash -c "test \$(kubectl get pods --no-headers 2>/dev/null | wc -l) = 0 && test \$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l) = 0"

# ---- b: quotas by device class, and both kinds of node ------------------------
"$HERE/nodes.sh" "$D" 1 2 plug >/dev/null 2>&1
kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-a}
spec: {weight: 1, reclaimable: true, capability: {nvidia.com/gpu: 4}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-b}
spec: {weight: 1, reclaimable: true}
YAML
claimjob qa-1 team-a 4
check "team-a's first claim gang of 4 runs" wait_for 60 equals 4 running qa-1-
claimjob qa-2 team-a 2
claimjob qb-1 team-b 5
plainjob qb-2 team-b 2
check "team-b's claim gang takes the other 5 devices" wait_for 60 equals 5 running qb-1-
check "team-b's device-plugin gang runs" wait_for 60 equals 2 running qb-2-
check "and on the device-plugin node only" equals 2 on qb-2- plug
check "no claim pod lands on the device-plugin node" \
    bash -c "$(declare -f on); test \$(( \$(on qa- plug) + \$(on qb-1- plug) )) = 0"
check "team-a's second gang waits: capability 4 counts the DRA devices" equals 0 bound qa-2-
check "and says so with the queue and nvidia.com/gpu" \
    pg_says qa-2 "queue team-a"
check "kubectl get queue: team-a has 4 nvidia.com/gpu allocated, team-b 7" \
    wait_for 20 equals "4/7" bash -c "$(declare -f gpus); echo \$(gpus team-a)/\$(gpus team-b)"
check "every running claim pod's claim is allocated on its node" \
    bash -c "$(declare -f claims_on_their_nodes); claims_on_their_nodes qa-1- && claims_on_their_nodes qb-1-"

# ---- c: reclaim frees a DRA gang's devices for the queue it owes --------------
kubectl delete vcjob --all --wait=false >/dev/null
check "every job gone: pods and claims with them" \
    wait_for 120 bash -c "test \$(kubectl get pods --no-headers 2>/dev/null | wc -l) = 0 && test \$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l) = 0"
claimjob rb-1 team-b 5
check "team-b takes 5 devices while team-a is idle" wait_for 60 equals 5 running rb-1-
claimjob rb-2 team-b 4
check "and the other 4" wait_for 60 equals 4 running rb-2-
claimjob ra-1 team-a 4
check "team-a asks for 4 devices it is owed: reclaim frees a team-b gang's and team-a's gang runs" \
    wait_for 180 equals 4 running ra-1-
check "the reclaimer's claims are allocated on its pods' nodes" claims_on_their_nodes ra-1-
check "team-b is left with one gang running" \
    bash -c "$(declare -f running); test \$(( \$(running rb-1-) + \$(running rb-2-) )) -le 5"
check "no device is held by two claims" bash -c '
kubectl get resourceclaims -o json | python3 -c "
import json, sys
seen = {}
for c in json.load(sys.stdin)[\"items\"]:
    for r in (((c.get(\"status\") or {}).get(\"allocation\") or {}).get(\"devices\") or {}).get(\"results\", []):
        k = (r[\"pool\"], r[\"device\"])
        assert k not in seen, (k, seen.get(k), c[\"metadata\"][\"name\"])
        seen[k] = c[\"metadata\"][\"name\"]
"'

# ---- d: kill -9 between a claim gang's release and its binds ------------------
kubectl delete vcjob --all --wait=false >/dev/null
check "every job gone again" \
    wait_for 120 bash -c "test \$(kubectl get pods --no-headers 2>/dev/null | wc -l) = 0 && test \$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l) = 0"
claimjob crash default 8
# polled every 20 ms: the kill should land before kube-scheduler's binds
released() {
    local end=$((SECONDS + 60))
    until grep -q 'release default/crash' "$D/muster.log"; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.02
    done
}
if released && [ -n "$MPID" ]; then
    kill -9 "$MPID"
    wait "$MPID" 2>/dev/null
    MPID=""
    ok "muster killed with -9 just after it released a claim gang"
    sleep 3
    echo "# $(bound crash-) of 8 members were bound and $(kubectl get resourceclaims -o json | python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin)["items"] if (c.get("status") or {}).get("allocation")))') claims allocated when muster died"
    if start_muster >/dev/null 2>&1; then
        ok "muster restarts"
    else
        not_ok "muster restarts" "$(tail -20 "$D/muster.log")"
    fi
    check "after the restart the whole gang runs" wait_for 120 equals 8 running crash-
    check "each claim allocated on its pod's node, none held by a pod that does not run" \
        claims_on_their_nodes crash-
    check "no claim is left allocated beyond the 8 running pods'" \
        equals 8 bash -c "kubectl get resourceclaims -o json | python3 -c 'import json,sys; print(sum(1 for c in json.load(sys.stdin)[\"items\"] if (c.get(\"status\") or {}).get(\"allocation\")))'"
else
    not_ok "muster released the claim gang before the kill" "$(tail -5 "$D/muster.log")"
fi

# ---- e: an All claim counts in quotas -----------------------------------------
# team-a (capability 4) runs one 1-device gang; a pod whose claim asks All
# the devices of its node counts as the most devices it could take on one
# node (4) until its claim is allocated, then as what the allocation names.
kubectl delete vcjob --all --wait=false >/dev/null
check "every job gone once more" \
    wait_for 120 bash -c "test \$(kubectl get pods --no-headers 2>/dev/null | wc -l) = 0 && test \$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l) = 0"
claimjob ea-1 team-a 1
check "team-a runs a gang of one device" wait_for 60 equals 1 running ea-1-
kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: all-gpus, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com, allocationMode: All}
YAML
gpu_vcjob claim ea-all team-a 1 | sed 's/resourceClaimTemplateName: one-gpu/resourceClaimTemplateName: all-gpus/' |
    kubectl apply -f - >/dev/null
check "a pod asking All the devices of a node waits: 1 running + 4 is past team-a's 4" \
    wait_for 30 pg_says ea-all "queue team-a"
sleep 3
check "and is not bound meanwhile" equals 0 bound ea-all-
kubectl delete vcjob ea-1 --wait=false >/dev/null
check "the 1-device gang gone, the All pod runs" wait_for 90 equals 1 running ea-all-
all_charged() { # team-a's allocated GPUs = the devices the All claim holds
    local n
    n=$(kubectl get resourceclaims -o json | python3 -c '
import json, sys
print(sum(len((((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results", []))
          for c in json.load(sys.stdin)["items"] if c["metadata"]["name"].startswith("ea-all-")))')
    [ "$n" -ge 1 ] && [ "$(gpus team-a)" = "$n" ] || { echo "claim holds $n, team-a allocated $(gpus team-a)"; return 1; }
}
check "team-a is charged the devices its allocation names" wait_for 30 all_charged

# ---- f: devices not bound to one node (a ResourceSlice with a nodeSelector) ----
# Two nodes with no devices of their own reach 3 devices of another driver
# through a slice that selects them (network-attached, as a fabric's): a
# gang of 3 runs whole only if muster plans those devices. (One driver
# per kind: kube-scheduler's allocator tries the pools a node reaches in no
# fixed order, so a class with devices both on nodes and in such slices
# may be allocated other than muster planned; README.)
kubectl delete vcjob --all --wait=false >/dev/null
check "every job gone for the last time" \
    wait_for 120 bash -c "test \$(kubectl get pods --no-headers 2>/dev/null | wc -l) = 0 && test \$(kubectl get resourceclaims --no-headers 2>/dev/null | wc -l) = 0"
"$HERE/nodes.sh" "$D" 2 0 fab >/dev/null 2>&1
kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "fabric.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-fabric, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: fabric.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric}
spec:
  driver: fabric.example.com
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions:
      - {key: muster.e2e/pool, operator: In, values: [fab]}
  pool: {name: fabric, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: dev-0}
  - {name: dev-1}
  - {name: dev-2}
YAML
gpu_vcjob claim wide default 3 | sed 's/resourceClaimTemplateName: one-gpu/resourceClaimTemplateName: one-fabric/' |
    kubectl apply -f - >/dev/null
check "a gang of 3 on the 3 devices two device-less nodes reach runs whole" \
    wait_for 120 equals 3 running wide-
check "on those two nodes" equals 3 on wide- fab
from_pool() { # PREFIX POOL: claims of PREFIX's pods allocated from POOL
    kubectl get resourceclaims -o json | python3 -c '
import json, sys
n = 0
for c in json.load(sys.stdin)["items"]:
    if not c["metadata"]["name"].startswith(sys.argv[1]):
        continue
    for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results", []):
        n += r["pool"] == sys.argv[2]
print(n)' "$1" "$2"
}
check "each claim is allocated from the fabric pool" equals 3 from_pool wide- fabric
claimjob_fabric() { gpu_vcjob claim "$1" default "$2" | sed 's/resourceClaimTemplateName: one-gpu/resourceClaimTemplateName: one-fabric/' | kubectl apply -f - >/dev/null; }
claimjob_fabric more 1
check "one more waits: all 3 are held" \
    wait_for 30 pg_says more "needs 1 device of class fabric.example.com (1 per pod); none free"

tap_end
