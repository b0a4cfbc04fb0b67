#!/usr/bin/env bash
# End-to-end: team queues on a real control plane (etcd, kube-apiserver,
# kube-controller-manager, two kube-schedulers, kwok) with muster serve,
# driven with kubectl the way a user drives it: the book's queues share the
# GPUs by weight within capability; a queue is closed and opened with a
# Command (as vcctl makes it) and with a status patch; deleting a queue that
# holds work is refused (ValidatingAdmissionPolicy in crds/); and the book's
# chapter 17 lab, a Deployment of 8 one-GPU replicas on 5 free GPUs, under
# the default scheduler and under `schedulerName: volcano`; and one rule for
# a lone pod's PodGroup: a Deployment annotated group-min-member gets one
# PodGroup of that size from muster serve, and `muster simulate` on the same
# objects names and sizes the same one; and a queue tree of three levels
# (capacity, enableHierarchy) shares 32 GPUs as its deserved values say,
# reclaiming from the nearest queue over its share. Prints TAP, one test point per
# check; exit 0 when all pass.
#
# Usage: tests/e2e/teams.sh MUSTER_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: teams.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

tap_up teams

# ---- helpers -----------------------------------------------------------------

# gangs TEAM FIRST LAST: vcjobs t<team>-<i>, each a gang of two 1-GPU pods
gangs() {
    local i
    for i in $(seq "$2" "$3"); do
        cat <<YAML
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: t$1-$i}
spec:
  minAvailable: 2
  schedulerName: volcano
  queue: team-$1
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {limits: {nvidia.com/gpu: 1, cpu: "4", memory: 16Gi}}
YAML
    done
}

running() { # PREFIX: pods Running
    kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running '
}
bound() { # PREFIX: pods with a node
    kubectl get pods -o custom-columns=N:.metadata.name,NODE:.spec.nodeName --no-headers 2>/dev/null |
        grep "^$1" | awk '$2 != "<none>"' | wc -l
}
pod_count() { kubectl get pods -A --no-headers 2>/dev/null | wc -l; }
split() { # A B: team-a runs A pods, team-b B
    test "$(running ta-)" = "$1" && test "$(running tb-)" = "$2"
}
qget() { kubectl get queue "$1" -o jsonpath="$2"; }
# waiting PodGroups of a queue: pending + inqueue
qwaiting() {
    echo $(( $(qget "$1" '{.status.pending}') + $(qget "$1" '{.status.inqueue}') ))
}
counts() { # QUEUE...: "running waiting" of each, joined by /
    local q out=""
    for q in "$@"; do
        out="$out${out:+/}$(qget "$q" '{.status.running}') $(qwaiting "$q")"
    done
    echo "$out"
}
gpus() { # QUEUE...: status.allocated nvidia.com/gpu of each, joined by /
    local q out=""
    for q in "$@"; do
        out="$out${out:+/}$(qget "$q" '{.status.allocated.nvidia\.com/gpu}')"
    done
    echo "$out"
}
# command QUEUE ACTION: the Command `vcctl queue operate -n QUEUE -a ...`
# creates: generateName <queue>-<action>-, namespace default, the queue as
# controller owner and as target
command() {
    local uid
    uid=$(qget "$1" '{.metadata.uid}')
    kubectl create -f - <<YAML
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata:
  generateName: $1-$(echo "$2" | tr '[:upper:]' '[:lower:]')-
  namespace: default
  ownerReferences:
  - {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
target: {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
action: $2
YAML
}
no_commands() { test -z "$(kubectl get commands -A --no-headers 2>/dev/null)"; }
pg_says() { # PREFIX TEXT: kubectl describe pg PREFIX shows TEXT
    kubectl describe pg "$1" 2>/dev/null | grep -qF "$2"
}
refused() { # MESSAGE CMD...: CMD fails and says MESSAGE
    local out
    out=$("${@:2}" 2>&1) && { echo "accepted: $out"; return 1; }
    echo "$out" | grep -qF "$1" || { echo "$out"; return 1; }
}
clear_jobs() {
    kubectl delete vcjob --all --wait=false >/dev/null 2>&1
    wait_for 60 equals 0 pod_count | sed "s/^/# /"
}

# ---- a: the book's queues share 18, then 30 GPUs ---------------------------------
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 3 6 gpu >/dev/null 2>&1
gangs a 1 10 | kubectl apply -f - >/dev/null
gangs b 1 10 | kubectl apply -f - >/dev/null
check "18 GPUs, both teams ask for 20: team-a runs 12, team-b 6 (weights 2:1)" \
    wait_for 90 split 12 6
check "kubectl get queue: status.allocated nvidia.com/gpu 12 and 6" \
    wait_for 20 equals "12/6" gpus team-a team-b
check "queue status counts PodGroups: running 6 and 3, waiting 4 and 7" \
    wait_for 20 equals "6 4/3 7" counts team-a team-b
MUSTER_NODE_START=3 "$HERE/nodes.sh" "$D" 2 6 gpu >/dev/null 2>&1
check "30 GPUs: team-a stops at its capability 16, team-b at 8" wait_for 90 split 16 8
check "status.allocated nvidia.com/gpu 16 and 8" wait_for 20 equals "16/8" gpus team-a team-b
sleep 2
check "and the other 6 GPUs stay free: 24 pods run" equals 24 running t

# ---- muster get / muster explain: what a live muster says (issue 14) ---------
URL="http://127.0.0.1:$METRICS"
mget() { "$MUSTER" get "$@" --muster-url "$URL"; }
get_queues_ok() {
    local out
    out=$(mget queues) || return 1
    echo "$out" | head -1 | grep -q '^NAME  *STATE  *WEIGHT  *DESERVED  *ALLOCATED  *CAPABILITY  *PENDING  *RUNNING$' &&
        echo "$out" | grep -Eq '^team-a +Open +2 +.*nvidia.com/gpu=16.*nvidia.com/gpu=16 +2 +8$' &&
        echo "$out" | grep -Eq '^team-b +Open +1 +.*nvidia.com/gpu=8 +.*nvidia.com/gpu=8 +6 +4$' ||
        { echo "$out"; return 1; }
}
check "muster get queues: weight, deserved, allocated 16 of capability 16, 2 pending and 8 running gangs" \
    wait_for 20 get_queues_ok
waiting_a() { # the first team-a PodGroup muster says waits
    mget gangs -o json | python3 -c '
import json, sys
w = [g for g in json.load(sys.stdin) if g["queue"] == "team-a" and "needPods" in g]
print(sorted(g["name"] for g in w)[0] if w else "")'
}
WAITING=$(waiting_a)
check "muster get gangs -o json: each gang with its queue, phase, wait and reason" \
    bash -c "$(declare -f mget); URL=$URL MUSTER=$MUSTER; mget gangs -o json | python3 -c '
import json, sys
g = json.load(sys.stdin)
assert len(g) == 20, len(g)
w = [x for x in g if \"needPods\" in x]
assert len(w) == 8 and all(x[\"waitSeconds\"] >= 0 and x[\"reason\"] for x in w), w
assert all(x[\"phase\"] == \"Running\" for x in g if \"needPods\" not in x)'"
check "muster get gangs (table): one row per gang, waiting ones with their reason" \
    bash -c "$(declare -f mget); URL=$URL MUSTER=$MUSTER; mget gangs | grep -E '^default +$WAITING +team-a +(Pending|Inqueue) +0/2 +[0-9]+[smhd]' | grep -q 'queue team-a'"
explain_ok() {
    local out
    out=$("$MUSTER" explain "podgroup/$WAITING" --muster-url "$URL") || return 1
    echo "$out" | grep -Eq "^PodGroup default/$WAITING \(vcjob ta-[0-9]+\): (Pending|Inqueue) in queue team-a, 0 of 2 members running, waiting [0-9]+[smhd]" &&
        echo "$out" | grep -qF "Blocked:  queue team-a's capability: nvidia.com/gpu would reach 18 of its 16" &&
        echo "$out" | grep -qE '^Ahead:    [0-9]+ gang\(s\) in queue team-a' &&
        echo "$out" | grep -qF "Queue team-a: Open, weight 2" || { echo "$out"; return 1; }
}
check "muster explain podgroup/NAME: the capability in its way with numbers, the gangs ahead, the queue" explain_ok
explain_vcjob_ok() {
    local job
    job=$(kubectl get pg "$WAITING" -o jsonpath='{.metadata.ownerReferences[0].name}')
    "$MUSTER" explain "vcjob/$job" -o yaml --muster-url "$URL" | grep -q "^\"gang\":" &&
        "$MUSTER" explain "vcjob/$job" -o json --muster-url "$URL" |
        python3 -c 'import json,sys; a=json.load(sys.stdin); assert a["gang"]["name"] == sys.argv[1] and a["queue"]["name"] == "team-a"' "$WAITING"
}
check "muster explain vcjob/NAME -o json|yaml: the same answer for the vcjob's PodGroup" explain_vcjob_ok
plugin_ok() {
    mkdir -p "$D/plugin" && ln -sf "$MUSTER" "$D/plugin/kubectl-muster" &&
        PATH="$D/plugin:$PATH" kubectl muster get queues --muster-url "$URL" | grep -q '^team-a '
}
check "as kubectl-muster on the PATH: kubectl muster get queues" plugin_ok
fallback_ok() {
    local out
    # no Service muster-system/muster here: the API server's proxy answers 404
    out=$("$MUSTER" explain "pg/$WAITING" 2>&1) || { echo "$out"; return 1; }
    echo "$out" | grep -qF "muster not reached" &&
        echo "$out" | grep -qF "from the PodGroups' and Queues' status" &&
        echo "$out" | grep -q "^Reason:   .*queue team-a" &&
        echo "$out" | grep -q "^PodGroup default/$WAITING" || { echo "$out"; return 1; }
}
check "muster not reachable: explain falls back to the PodGroup's status and says so" fallback_ok
unknown_ok() {
    local out
    out=$("$MUSTER" explain pg/no-such-gang --muster-url "$URL" 2>&1) && return 1
    echo "$out" | grep -qF "no PodGroup default/no-such-gang in muster's cache" || { echo "$out"; return 1; }
}
check "muster explain of an unknown PodGroup: exit 1, says which" unknown_ok
# ---- the live page /ui in headless Chromium (issue 14) -----------------------
chrome() { # ARGS...: Debian's chromium, headless, offline, a fresh profile
    rm -rf "$D/chrome" && mkdir -p "$D/chrome" &&
        timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic \
            --no-first-run --disable-background-networking --disable-component-update \
            --disable-sync --user-data-dir="$D/chrome" --virtual-time-budget=10000 "$@" \
            2>>"$D/chrome.err"
}
ui_ok() {
    local dom
    curl -sf "$URL/debug/gangs?fresh=1" -o /dev/null # a report to draw (else it retries)
    dom=$(chrome --dump-dom "$URL/ui") || { tail -5 "$D/chrome.err"; return 1; }
    echo "$dom" | grep -q 'data-queue="team-a"' &&
        echo "$dom" | grep -q 'data-queue="team-b"' &&
        echo "$dom" | grep -q "data-gang=\"default/$WAITING\"" &&
        echo "$dom" | grep -qF "queue team-a's capability: nvidia.com/gpu would reach 18 of its 16" &&
        echo "$dom" | grep -q 'data-node="gpu-' &&
        echo "$dom" | grep -q '<td class="release">release</td>' &&
        echo "$dom" | grep -q 'id="status">[0-9]* queues, 20 gangs, 8 pending' || { echo "$dom" | head -c 4000; return 1; }
}
check "/ui in headless Chromium: both queues, a waiting gang with what blocks it, gangs per node, recent releases" \
    wait_for 60 ui_ok
ui_shot() {
    chrome --window-size=1280,1600 --screenshot="$D/ui.png" "$URL/ui" &&
        python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); assert d[:8] == b"\x89PNG\r\n\x1a\n" and len(d) > 20000, len(d)' "$D/ui.png"
}
check "/ui screenshot (a PNG of the page, kept in the run dir)" ui_shot
check "/ui answers only GET" bash -c "curl -s -o /dev/null -w '%{http_code}' -X POST '$URL/ui' | grep -qx 405"

# ---- metrics people can alert on, and the Grafana board's queries (issue 14) --
metric() { # SERIES: its value on /metrics (empty when absent)
    curl -sf "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
waits_ok() { # each queue counts the gangs that started (8 and 4 run now;
    # one evicted for reclaim and started again later is counted once),
    # never more than its 10, and no wait is longer than this run
    local a b sa
    a=$(metric 'muster_gang_wait_seconds_count{queue="team-a"}')
    b=$(metric 'muster_gang_wait_seconds_count{queue="team-b"}')
    sa=$(metric 'muster_gang_wait_seconds_sum{queue="team-a"}')
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge 8 ] && [ "$a" -le 10 ] &&
        [ "$b" -ge 4 ] && [ "$b" -le 10 ] &&
        python3 -c 'import sys; s, n, t = map(float, sys.argv[1:]); assert 0 <= s <= n * t' "$sa" "$a" "$SECONDS" ||
        { echo "team-a $a (sum $sa), team-b $b, after ${SECONDS}s"; return 1; }
}
check "muster_gang_wait_seconds: per queue, each gang that started counted once, creation to minMember bound" waits_ok
hist_ok() {
    local m
    m=$(curl -sf "$URL/metrics") || return 1
    grep -q '^muster_cycle_duration_seconds_bucket{le="+Inf"} [1-9]' <<<"$m" &&
        grep -q '^muster_extender_bind_barrier_seconds_count [1-9]' <<<"$m" &&
        grep -q '^muster_extender_filter_duration_seconds_count [1-9]' <<<"$m" &&
        grep -q '^muster_cycle_last_duration_seconds ' <<<"$m" &&
        grep -q '^muster_evictions_total{action="reclaim"} ' <<<"$m" &&
        grep -q '^muster_queue_capability{queue="team-a",resource="nvidia.com/gpu"} 16$' <<<"$m" &&
        grep -q '^muster_queue_running_gangs{queue="team-a"} 8$' <<<"$m" || { echo "$m" | grep -v '^#' | head -80; return 1; }
}
check "histograms for cycles, the bind barrier and /filter; evictions by action; capability and running gangs per queue" hist_ok
grafana_ok() {
    curl -sf "$URL/metrics" >"$D/metrics.txt" &&
        python3 "$HERE/grafana_check.py" "$ROOT/manifests/grafana/muster-dashboard.json" "$D/metrics.txt"
}
check "every query of manifests/grafana/muster-dashboard.json names series /metrics exports" grafana_ok
grafana_catches() {
    sed 's/muster_queue_running_gangs/muster_queue_runing_gangs/' "$ROOT/manifests/grafana/muster-dashboard.json" >"$D/bad-dash.json"
    ! python3 "$HERE/grafana_check.py" "$D/bad-dash.json" "$D/metrics.txt" >"$D/bad-dash.out" &&
        grep -q "no series muster_queue_runing_gangs" "$D/bad-dash.out"
}
check "and the check fails on a misspelt metric" grafana_catches
check "/debug/gang/NS/NAME of an unknown gang: 404 with a JSON reason" \
    bash -c "curl -s -o /dev/null -w '%{http_code}' '$URL/debug/gang/default/nope' | grep -qx 404 && curl -s '$URL/debug/gang/default/nope' | grep -qF '\"error\"'"
clear_jobs

# ---- b: closing and opening team-b -------------------------------------------
gangs b 1 1 | kubectl apply -f - >/dev/null
check "team-b's first gang runs" wait_for 60 equals 2 running tb-1-
command team-b CloseQueue >/dev/null
check "CloseQueue Command (as vcctl makes it): team-b is Closing while its gang runs" \
    wait_for 20 equals Closing qget team-b '{.status.state}'
check "the Command is carried out once and deleted" wait_for 20 no_commands
check "team-b shows a CloseQueue event" \
    wait_for 20 bash -c "kubectl get events -n default --field-selector involvedObject.name=team-b,reason=CloseQueue --no-headers | grep -q 'closed by command default/team-b-closequeue-'"
gangs b 2 2 | kubectl apply -f - >/dev/null
check "a new team-b vcjob waits: kubectl describe pg says the queue is closed" \
    wait_for 30 pg_says tb-2 "queue team-b is Closing: it admits no new work"
sleep 2
check "and none of its pods is placed" equals 0 bound tb-2-
check "the running team-b gang keeps running" equals 2 running tb-1-
command team-b OpenQueue >/dev/null
check "OpenQueue Command: team-b is Open" wait_for 20 equals Open qget team-b '{.status.state}'
check "the waiting gang now runs" wait_for 60 equals 2 running tb-2-
kubectl patch queue team-b --subresource=status --type=merge \
    -p '{"status":{"state":"Closed"}}' >/dev/null
check "state Closed written with kubectl patch: muster keeps it, Closing while PodGroups remain" \
    wait_for 20 equals Closing qget team-b '{.status.state}'
gangs b 3 3 | kubectl apply -f - >/dev/null
check "a new team-b vcjob waits again" \
    wait_for 30 pg_says tb-3 "queue team-b is Closing: it admits no new work"
check "queue status counts 2 running and 1 waiting PodGroup" \
    wait_for 20 equals "2 1" counts team-b
cat <<'YAML' | kubectl create -f - >/dev/null
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {name: team-b-dance, namespace: default}
target: {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, name: team-b, uid: "0"}
action: DanceQueue
YAML
check "a Command with an unknown action is deleted, logged by name with the reason" \
    wait_for 20 bash -c "grep -q 'command default/team-b-dance (action DanceQueue) not carried out and deleted: unknown action' '$D/muster.log' && test -z \"\$(kubectl get commands -A --no-headers)\""
check "and a Warning event says so" \
    wait_for 20 bash -c "kubectl get events -n default --field-selector involvedObject.name=team-b-dance,reason=BadCommand --no-headers | grep -q Warning"

# ---- c: deleting queues ---------------------------------------------------------
check "kubectl delete queue team-b while it holds work is refused" \
    refused "queue team-b still holds 3 PodGroups; close it and wait for them to finish" \
    kubectl delete queue team-b
check "kubectl delete queue default is refused" \
    refused "queue default cannot be deleted" kubectl delete queue default
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-c}
spec: {weight: 1}
YAML
check "an empty queue deletes fine" wait_for 20 kubectl delete queue team-c
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-tree}
spec: {weight: 1, parent: org, deserved: {nvidia.com/gpu: 4}}
YAML
check "a queue with spec.parent and spec.deserved: its status says muster does not act on them" \
    wait_for 20 equals "Unsupported: muster does not act on spec.parent, spec.deserved: the queue's share comes from its weight, capability and guarantee (proportion)" \
    kubectl get queue team-tree -o jsonpath='{.status.conditions[0].type}: {.status.conditions[0].message}'
check "and it deletes" wait_for 20 kubectl delete queue team-tree
clear_jobs
check "team-b's PodGroups gone: Closing becomes Closed" \
    wait_for 30 equals Closed qget team-b '{.status.state}'
check "and then team-b deletes" wait_for 20 kubectl delete queue team-b
# team-a's guarantee (8 GPUs) would hold GPUs back from the default queue
check "team-a, idle, deletes too" wait_for 20 kubectl delete queue team-a

# ---- the Command CRD is optional ---------------------------------------------------
mark=$(wc -l <"$D/muster.log")
kubectl delete crd commands.bus.volcano.sh >/dev/null
crd_gone_said() {
    tail -n +"$((mark + 1))" "$D/muster.log" | grep -q 'the Command CRD (commands.bus.volcano.sh) is not installed'
}
check "the Command CRD deleted: muster says Commands are ignored" wait_for 60 crd_gone_said

# ---- d: the book's lab: a Deployment of 8 one-GPU replicas on 5 free GPUs --------
kubectl delete nodes --all >/dev/null
"$HERE/nodes.sh" "$D" 1 5 small >/dev/null 2>&1
deployment() { # NAME [SCHEDULER]
    cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 8
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      ${2:+schedulerName: $2}
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources: {limits: {nvidia.com/gpu: 1}}
YAML
}
deployment hog-default | kubectl apply -f - >/dev/null
check "default scheduler: 5 of the 8 replicas run and hold all 5 GPUs" \
    wait_for 60 equals 5 running hog-default-
sleep 2
check "the other 3 stay Pending" \
    equals 3 bash -c "kubectl get pods --no-headers | grep '^hog-default-' | grep -c ' Pending '"
kubectl delete deployment hog-default >/dev/null
wait_for 60 equals 0 pod_count | sed "s/^/# /"
deployment hog-volcano volcano | kubectl apply -f - >/dev/null
check "schedulerName volcano: 5 of the 8 replicas run as well (a Deployment is no gang)" \
    wait_for 60 equals 5 running hog-volcano-
rs_pg() {
    local uid
    uid=$(kubectl get rs -l app=hog-volcano -o jsonpath='{.items[0].metadata.uid}')
    [ -n "$uid" ] && kubectl get pg "podgroup-$uid" -o jsonpath='{.spec.minMember}/{.spec.queue}/{.status.phase}'
}
check "its pods share one PodGroup podgroup-<ReplicaSet uid>, minMember 1, queue default, Running" \
    wait_for 20 equals "1/default/Running" rs_pg
sleep 2
check "the other 3 stay Pending, unplaced" equals 5 bound hog-volcano-

check "and schedules on without it, saying so once" \
    equals 1 bash -c "tail -n +$((mark + 1)) '$D/muster.log' | grep -c 'watch commands'"
# ---- one rule for a lone pod's PodGroup: the live controller and the simulator agree --
kubectl delete deployment hog-volcano >/dev/null
wait_for 60 equals 0 pod_count >/dev/null
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata:
  name: quad
  annotations: {scheduling.volcano.sh/group-min-member: "4"}
spec:
  replicas: 4
  selector: {matchLabels: {app: quad}}
  template:
    metadata: {labels: {app: quad}}
    spec:
      schedulerName: volcano
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources: {limits: {nvidia.com/gpu: 1}}
YAML
quad_pg() { # name/minMember of the PodGroup the live controller made
    local uid
    uid=$(kubectl get rs -l app=quad -o jsonpath='{.items[0].metadata.uid}')
    [ -n "$uid" ] && kubectl get pg "podgroup-$uid" \
        -o jsonpath='{.metadata.name}/{.spec.minMember}' 2>/dev/null
}
quad_live() { quad_pg | grep -q '/4$'; }
check "a Deployment annotated group-min-member 4: its ReplicaSet's PodGroup has minMember 4" \
    wait_for 30 quad_live
check "and its 4 pods run as one gang" wait_for 60 equals 4 running quad-
# the same objects, offline: the nodes, the queues, the ReplicaSet and its
# pods as the cluster has them, without their PodGroup
quad_sim() {
    kubectl get nodes,queues -o json >"$D/quad-cluster.json" &&
        kubectl get rs,pods -l app=quad -o json |
        jq '.items |= map(if .kind == "Pod" then
              del(.metadata.annotations["scheduling.k8s.io/group-name"], .spec.nodeName)
              | .status = {phase: "Pending"} else . end)' >"$D/quad-objs.json" &&
        "$MUSTER" simulate -o json "$D/quad-cluster.json" "$D/quad-objs.json" 2>"$D/quad-sim.err" |
        jq -r '.items[] | select(.kind == "PodGroup") | "\(.metadata.name)/\(.spec.minMember)"'
}
sim_agrees() {
    local want
    want=$(quad_pg)
    [ -n "$want" ] || { echo "no live PodGroup"; return 1; }
    equals "$want" quad_sim
}
check "muster simulate on the same objects names and sizes the same PodGroup" sim_agrees

# ---- a queue tree of three levels shares 32 GPUs (issue 12, item 5) ----------
# Volcano's capacity plugin with enableHierarchy where proportion was; every
# queue deserves a number of GPUs and names its parent:
#   eng 24 (train 16 (train-a 8, train-b 8), infer 8), research 8 (vision 4, nlp 4)
clear_jobs
# the Deployments' ReplicaSets first, and gone (foreground), so that none
# makes its pods again after they are deleted
kubectl delete deployment,replicaset --all --cascade=foreground --timeout=60s >/dev/null 2>&1
kubectl delete pods --all --grace-period=0 --force >/dev/null 2>&1
wait_for 60 equals 0 pod_count | sed "s/^/# /"
kubectl delete nodes --all >/dev/null 2>&1
node_count() { kubectl get nodes --no-headers 2>/dev/null | wc -l; }
wait_for 60 equals 0 node_count | sed "s/^/# /"
"$HERE/nodes.sh" "$D" 4 8 tree >/dev/null 2>&1
"$MUSTER" simulate --print-config |
    sed 's/^  - name: proportion$/  - name: capacity\n    enableHierarchy: true/' >"$D/tree.conf"
stop_muster
MUSTER_SERVE_ARGS=(--config "$D/tree.conf")
if start_muster >/dev/null 2>&1; then
    ok "tree: muster restarts with capacity, enableHierarchy: true"
else
    not_ok "tree: muster restarts with capacity, enableHierarchy: true" "$(tail -20 "$D/muster.log")"
fi
MUSTER_SERVE_ARGS=()
tree_queue() { # NAME PARENT DESERVED
    printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {parent: %s, reclaimable: true, deserved: {nvidia.com/gpu: "%s"}}\n---\n' "$1" "$2" "$3"
}
{ tree_queue eng root 24; tree_queue train eng 16; tree_queue train-a train 8
  tree_queue train-b train 8; tree_queue infer eng 8; tree_queue research root 8
  tree_queue vision research 4; tree_queue nlp research 4
} | kubectl apply -f - >/dev/null
root_made() { test "$(qget root '{.spec.reclaimable}')" = false; }
check "tree: muster makes the root queue, not reclaimable, as Volcano does" wait_for 30 root_made
for i in 1 2 3; do gpu_vcjob plain inf-$i infer 8; echo ---; done | kubectl apply -f - >/dev/null
for i in 1 2; do gpu_vcjob plain vis-$i vision 4; echo ---; done | kubectl apply -f - >/dev/null
check "tree: on an idle cluster infer takes 24 GPUs, vision 8 (over their 8 and 4)" \
    wait_for 90 equals "24/8" gpus infer vision
gpu_vcjob plain tra-1 train-a 8 | kubectl apply -f - >/dev/null
check "tree: train-a's 8-GPU gang runs, reclaimed from infer, its cousin under eng" \
    wait_for 120 equals 8 running tra-1-
check "tree: vision kept its 8: it is research's, and research is at its deserved 8" \
    equals 8 running vis-
gpu_vcjob plain nlp-1 nlp 4 | kubectl apply -f - >/dev/null
check "tree: nlp's 4-GPU gang runs, reclaimed from its sibling vision" \
    wait_for 120 equals 4 running nlp-1-
gpu_vcjob plain trb-1 train-b 8 | kubectl apply -f - >/dev/null
check "tree: train-b's 8-GPU gang runs, reclaimed from infer" \
    wait_for 120 equals 8 running trb-1-
check "tree: every leaf holds what it deserves: train-a/train-b/infer/vision/nlp 8/8/8/4/4" \
    wait_for 60 equals "8/8/8/4/4" gpus train-a train-b infer vision nlp
check "tree: status.allocated rolls up: eng/train/research 24/16/8, root 32" \
    wait_for 30 equals "24/16/8/32" gpus eng train research root
no_unsupported() {
    test -z "$(qget train-a '{.status.conditions[?(@.type=="Unsupported")].message}')"
}
check "tree: spec.parent and spec.deserved are acted on: no Unsupported condition" \
    wait_for 30 no_unsupported

check "muster never crashed" kill -0 "$MPID"
tap_end
