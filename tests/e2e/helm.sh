#!/usr/bin/env bash
# End-to-end: the Helm chart (manifests/helm/muster) installed on a real
# control plane with Helm built from its Go module (tests/build-helm.sh):
# helm install, then muster serve with the chart's RBAC (it authenticates as
# the chart's ServiceAccount) and the chart's scheduler configuration runs a
# gang in a queue the chart made, then helm uninstall leaves nothing of the
# release behind but what Helm keeps on purpose: the CRDs (Helm never
# deletes what crds/ installed; deleting a CRD deletes every vcjob) and the
# `default` queue (resource-policy keep; the queue-delete policy refuses
# deleting it). kwok runs no containers: the chart's Deployments get
# simulated pods, and muster runs here as a local process, as in every e2e
# suite. Prints TAP; exit 0 when all pass.
#
# Usage: tests/e2e/helm.sh MUSTER_BINARY
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: helm.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

if ! HELM=$("$ROOT/tests/build-helm.sh" --check >/dev/null && "$ROOT/tests/build-helm.sh"); then
    echo "1..1"
    not_ok "helm is built (tests/build-helm.sh; scripts/test.sh builds it first)"
    exit 1
fi
CHART=$ROOT/manifests/helm/muster

MUSTER_E2E_NO_MUSTER=1 tap_up helm
"$HERE/nodes.sh" "$D" 2 8 gpu >/dev/null 2>&1

check "helm install (the CRDs, RBAC, muster, its kube-scheduler, config, queues)" \
    "$HELM" install muster "$CHART" -n muster-system --create-namespace \
        --set 'queues[0].name=team-a,queues[0].weight=2,queues[0].capability.nvidia\.com/gpu=4'
check "helm status: deployed" bash -c "'$HELM' status muster -n muster-system | grep -q '^STATUS: deployed'"
check "the CRDs are established" \
    kubectl wait --for=condition=Established crd/jobs.batch.volcano.sh crd/podgroups.scheduling.volcano.sh \
        crd/queues.scheduling.volcano.sh crd/commands.bus.volcano.sh --timeout=60s
check "the chart's queues: default and team-a (capability 4 GPUs)" \
    equals "4" kubectl get queue team-a -o jsonpath='{.spec.capability.nvidia\.com/gpu}'
kubectl get configmap -n muster-system volcano-scheduler-configmap \
    -o jsonpath='{.data.volcano-scheduler\.conf}' >"$D/chart.conf"
check "the chart's scheduler configuration is the one manifests/ ships" \
    cmp "$D/chart.conf" "$ROOT/manifests/volcano-scheduler.conf"
MUSTER_SERVE_ARGS=(--config "$D/chart.conf")
if start_muster >/dev/null 2>&1; then
    ok "muster serve becomes ready with the chart's RBAC and configuration"
else
    not_ok "muster serve becomes ready with the chart's RBAC and configuration" "$(tail -20 "$D/muster.log")"
fi
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: chart-gang}
spec:
  minAvailable: 4
  schedulerName: volcano
  queue: team-a
  tasks:
  - name: worker
    replicas: 4
    template:
      spec:
        containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {limits: {nvidia.com/gpu: 1}}
YAML
running() { kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running '; }
check "a gang of 4 runs whole in the chart's queue team-a" wait_for 90 equals 4 running chart-gang-
check "team-a's status: allocated nvidia.com/gpu 4" \
    wait_for 30 equals 4 kubectl get queue team-a -o jsonpath='{.status.allocated.nvidia\.com/gpu}'

# the gang goes, and muster writes the queue's counts down to 0 (the
# queue-delete policy refuses deleting a queue that still holds PodGroups)
kubectl delete vcjob chart-gang --wait=true >/dev/null 2>&1
held() { kubectl get queue team-a -o jsonpath='{.status.pending}{.status.inqueue}{.status.running}' | tr -d '0'; }
check "the gang deleted, team-a holds nothing" wait_for 60 equals "" held
stop_muster
check "helm uninstall" "$HELM" uninstall muster -n muster-system --wait --timeout 120s
left_behind() { # every object Helm annotates as the release's, but the default queue
    local kinds
    kinds=$(kubectl api-resources --verbs=list -o name | grep -v '^events' | tr '\n' ',' | sed 's/,$//')
    kubectl get "$kinds" -A -o json 2>/dev/null | python3 -c '
import json, sys
for o in json.load(sys.stdin)["items"]:
    a = o["metadata"].get("annotations") or {}
    if a.get("meta.helm.sh/release-name") == "muster":
        k = "%s/%s" % (o["kind"], o["metadata"]["name"])
        if k != "Queue/default":
            print(k)'
}
check "helm uninstall leaves nothing of the release behind" equals "" left_behind
gone() {
    local o
    for o in clusterrole/muster clusterrolebinding/muster clusterrolebinding/muster-kube-scheduler \
             clusterrolebinding/muster-kube-scheduler-volume queue/team-a \
             validatingadmissionpolicy/muster-queue-delete validatingadmissionpolicybinding/muster-queue-delete; do
        kubectl get "$o" >/dev/null 2>&1 && { echo "$o is still there"; return 1; }
    done
    for o in serviceaccount/muster serviceaccount/muster-kube-scheduler deployment/muster \
             deployment/muster-kube-scheduler service/muster configmap/volcano-scheduler-configmap \
             configmap/muster-kube-scheduler-config networkpolicy/muster poddisruptionbudget/muster \
             role/muster-leader-election rolebinding/muster-leader-election; do
        kubectl get -n muster-system "$o" >/dev/null 2>&1 && { echo "muster-system $o is still there"; return 1; }
    done
    for o in role/muster-kube-scheduler-lease rolebinding/muster-kube-scheduler-lease \
             rolebinding/muster-kube-scheduler-auth-reader; do
        kubectl get -n kube-system "$o" >/dev/null 2>&1 && { echo "kube-system $o is still there"; return 1; }
    done
    return 0
}
check "each object the chart made is gone (RBAC, Deployments, Service, ConfigMaps, policy, queue team-a)" gone
check "kept on purpose: the CRDs (Helm never deletes them) and the default queue" \
    bash -c "kubectl get crd queues.scheduling.volcano.sh >/dev/null && kubectl get queue default >/dev/null"
tap_end
