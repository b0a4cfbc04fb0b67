#!/usr/bin/env bash
# Makes the pairs of this directory: each pod below, read from a real
# kube-apiserver (tests/e2e/cluster.sh, kube-controller-manager and
# kube-scheduler stopped so nothing changes them) as protobuf (NAME.pb, the
# body of a GET with Accept: application/vnd.kubernetes.protobuf) and as
# JSON (NAME.json), at one resourceVersion. tests/unit/test_podpb.c holds
# muster's protobuf reading against them.
#
# Usage: tests/data/kube/pb/capture.sh   (writes into this directory)
set -eu -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
E2E=$ROOT/tests/e2e
# shellcheck source=../../../e2e/lib.sh
. "$E2E/lib.sh"
D=$(mktemp -d /tmp/pb-capture.XXXXXX)
trap '"$E2E/cluster.sh" down "$D" >/dev/null 2>&1; rm -rf "$D"' EXIT
"$E2E/build-control-plane.sh" --check || "$E2E/build-control-plane.sh"
"$E2E/cluster.sh" up "$D" >"$D/up.log" 2>&1 || { tail -20 "$D/up.log"; exit 1; }
eval "$("$E2E/cluster.sh" env "$D")"
# shellcheck source=/dev/null
. "$D/cluster.env"
stop_cluster_component kube-controller-manager
stop_cluster_component kube-scheduler
"$E2E/nodes.sh" "$D" 1 8 gpu >/dev/null
TOKEN=$(awk -F, '$2 == "admin" {print $1}' "$D/pki/tokens.csv")
kubectl create namespace pbfix >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: team-high}
value: 1000
preemptionPolicy: Never
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
YAML
NODE=$(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')
kubectl apply -n pbfix -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  schedulerName: volcano
  containers:
  - name: c
    image: busybox
    resources:
      requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
---
apiVersion: v1
kind: Pod
metadata:
  name: rich-3
  labels: {app: train, volcano.sh/job-name: j, empty: ""}
  annotations:
    scheduling.k8s.io/group-name: j-pg
    volcano.sh/task-spec: worker
    volcano.sh/preemptable: "false"
    muster.io/run-for: 90s
    empty: ""
  ownerReferences:
  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j,
     uid: 0b0c5d4e-0000-4000-8000-000000000001, controller: true,
     blockOwnerDeletion: true}
  - {apiVersion: v1, kind: ConfigMap, name: cm,
     uid: 0b0c5d4e-0000-4000-8000-000000000002}
  finalizers: [example.com/keep]
spec:
  schedulerName: volcano
  priorityClassName: team-high
  runtimeClassName: kata
  nodeSelector: {gpu: a100, zone: ""}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: gpu, operator: In, values: [a100, h100, ""]}
          - {key: spot, operator: DoesNotExist}
        - matchFields:
          - {key: metadata.name, operator: In, values: [gpu-0000]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 7
        preference:
          matchExpressions: [{key: zone, operator: In, values: [a]}]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: train}}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
     tolerationSeconds: 300}
  - {operator: Exists}
  - {key: k, operator: Equal, value: v}
  schedulingGates: [{name: muster.io/gang}, {name: other.example.com/x}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway,
     labelSelector: {matchLabels: {app: train}}}
  initContainers:
  - name: sidecar
    image: busybox
    restartPolicy: Always
    resources: {requests: {cpu: 500m, memory: 1Gi}}
  - name: setup
    image: busybox
    resources: {requests: {cpu: "8"}, limits: {cpu: "8", memory: 2Gi}}
  containers:
  - name: main
    image: busybox
    ports: [{containerPort: 8080}, {containerPort: 9000, hostPort: 9000}]
    resources:
      requests: {cpu: "2", memory: 4Gi, nvidia.com/gpu: "2", ephemeral-storage: 10Gi}
      limits: {nvidia.com/gpu: "2", example.com/foo: "3"}
  - name: log
    image: busybox
    resources: {limits: {cpu: 100m, memory: 64Mi}}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: cfg, configMap: {name: cfg}}
  - {name: data, persistentVolumeClaim: {claimName: data}}
  - name: eph
    ephemeral:
      volumeClaimTemplate:
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
  - {name: csi, csi: {driver: csi.example.com}}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: gpu-template}
  - {name: shared, resourceClaimName: shared-claim}
---
apiVersion: v1
kind: Pod
metadata: {name: bound, labels: {app: train}}
spec:
  nodeName: $NODE
  priority: 0
  containers:
  - name: c
    image: busybox
    resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  nodeName: node-kwok-does-not-run
  containers:
  - {name: a, image: busybox}
  - {name: b, image: busybox}
---
apiVersion: v1
kind: Pod
metadata: {name: besteffort, generateName: be-, namespace: pbfix}
spec:
  containers: [{name: c, image: busybox}]
YAML
kubectl -n pbfix patch pod done --subresource=status --type=merge -p '{
  "status": {"phase": "Failed", "startTime": "2026-12-05T10:00:00Z",
   "containerStatuses": [
    {"name": "a", "ready": false, "restartCount": 2, "image": "busybox", "imageID": "",
     "state": {"terminated": {"exitCode": 3, "reason": "Error",
       "startedAt": "2026-12-05T10:00:01Z", "finishedAt": "2026-12-05T10:00:09Z"}}},
    {"name": "b", "ready": false, "restartCount": 0, "image": "busybox", "imageID": "",
     "state": {"terminated": {"exitCode": 0, "reason": "Completed",
       "startedAt": "2026-12-05T10:00:01Z", "finishedAt": "2026-12-05T10:00:05Z"}}}]}}' >/dev/null
kubectl -n pbfix patch pod rich-3 --subresource=status --type=merge -p '{
  "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "rich-3-gpus-x7k2p"}]}}' >/dev/null
kubectl -n pbfix delete pod rich-3 --wait=false >/dev/null # the finalizer keeps it, deleting
for _ in $(seq 1 100); do
    [ "$(kubectl -n pbfix get pod bound -o jsonpath='{.status.phase}')" = Running ] && break
    sleep 0.2
done
sleep 2 # kwok's last status writes
get() { # NAME ACCEPT OUT
    curl -fsS --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -H "Accept: $2" \
        "$APISERVER_URL/api/v1/namespaces/pbfix/pods/$1" -o "$3"
}
for p in plain rich-3 bound done besteffort; do
    name=$p
    [ "$p" = rich-3 ] && name=rich
    get "$p" application/vnd.kubernetes.protobuf "$HERE/$name.pb"
    get "$p" application/json "$D/$name.json"
    python3 -m json.tool --indent 1 "$D/$name.json" >"$HERE/$name.json"
    get "$p" application/vnd.kubernetes.protobuf "$D/again.pb"
    cmp -s "$HERE/$name.pb" "$D/again.pb" || { echo "$p changed while it was read; run again" >&2; exit 1; }
done
echo "captured: $(ls "$HERE"/*.pb | wc -l) pairs" >&2
