#!/usr/bin/env bash
# End-to-end: muster serve + its kube-scheduler on a real control plane
# (etcd, kube-apiserver, kube-controller-manager, two kube-schedulers, kwok),
# driven with kubectl the way a user drives it. Prints TAP, one test point
# per check; exit 0 when all pass.
#
# Usage: tests/e2e/gang.sh MUSTER_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: gang.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"
# this suite runs muster with its defaults: the initial state streamed
# (WatchList), plain gangs bound at their release (vcjob.sh runs LIST pages)
diag() { sed 's/^/# /'; }

# everything a scenario made goes away; nodes too
pod_count() { kubectl get pods -A --no-headers 2>/dev/null | wc -l; }
reset() {
    kubectl delete vcjob --all -A --wait=false >/dev/null 2>&1
    kubectl delete pods --all -A --grace-period=0 --force >/dev/null 2>&1
    kubectl delete podgroups --all -A >/dev/null 2>&1
    kubectl delete nodes --all >/dev/null 2>&1
    wait_for 30 equals 0 pod_count
    # team-a's guarantee would hold 8 GPUs back from every other queue; the
    # queue delete policy refuses a queue until its counts show it empty
    wait_for 30 kubectl delete queue team-a team-b --ignore-not-found >/dev/null 2>&1
}

pods_running() { # PREFIX COUNT
    test "$(kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running ')" = "$2"
}
pods_bound() { # PREFIX: how many have a node
    kubectl get pods -o custom-columns=N:.metadata.name,NODE:.spec.nodeName --no-headers 2>/dev/null |
        grep "^$1" | awk '$2 != "<none>"' | wc -l
}
pg_field() { # PREFIX JSONPATH
    local pg
    pg=$(kubectl get pg --no-headers -o custom-columns=N:.metadata.name 2>/dev/null | grep "^$1" | head -1)
    [ -n "$pg" ] && kubectl get pg "$pg" -o jsonpath="$2"
}

tap_up e2e

pods_exist() { # PREFIX COUNT
    test "$(kubectl get pods --no-headers 2>/dev/null | grep -c "^$1")" = "$2"
}

# --- invalid objects are refused by the CRDs' validation ----------------------
refused() { # FILE-CONTENT on stdin; PATTERN the message must contain
    local out
    out=$(kubectl apply -f - 2>&1) && { echo "accepted: $out"; return 1; }
    echo "$out" | grep -q "$1" || { echo "$out"; return 1; }
}
check "a PodGroup with minMember -1 is refused" refused 'greater than or equal to 0' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: bad-min}
spec: {minMember: -1}
YAML
check "a Queue with weight 0 is refused" refused 'greater than or equal to 1' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: bad-weight}
spec: {weight: 0}
YAML
check "a Queue guaranteed more than its capability is refused" refused 'cannot be guaranteed more' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: bad-guarantee}
spec: {weight: 1, capability: {nvidia.com/gpu: 16}, guarantee: {resource: {nvidia.com/gpu: 20}}}
YAML
check "half a GPU in a PodGroup's minResources is refused" refused 'must be a whole number' <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: bad-gpu}
spec: {minMember: 1, minResources: {nvidia.com/gpu: "0.5"}}
YAML

# --- lab b: the book's vcjob with 5 free GPUs, then with 8 ---------------
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 1 5 small >/dev/null 2>&1
kubectl apply -f "$ROOT/examples/pytorch-8gpu-vcjob.yaml" >/dev/null
check "vcjob: its PodGroup and nine gated pods appear" \
    wait_for 30 pods_exist pytorch-dist-8gpu- 9
check "vcjob: PodGroup named <job>-<uid> with minMember 9 in queue team-a" \
    wait_for 10 equals "9/team-a" pg_field pytorch-dist-8gpu- '{.spec.minMember}/{.spec.queue}'
check "5 free GPUs: the PodGroup says why, with the numbers" \
    wait_for 20 bash -c "kubectl describe podgroup pytorch-dist-8gpu | grep -q 'gang needs 9 more pods with {cpu: 72, memory: 288Gi, nvidia.com/gpu: 8}; free in the cluster {cpu: 96, memory: 1Ti, nvidia.com/gpu: 5}'"
sleep 2
check "5 free GPUs: no pod of the gang is placed" test "$(pods_bound pytorch-dist-8gpu-)" = 0
check "kubectl get pg shows STATUS MINMEMBER RUNNINGS AGE, and QUEUE with -o wide" \
    bash -c "kubectl get pg | head -1 | grep -q 'NAME *STATUS *MINMEMBER *RUNNINGS *AGE' && kubectl get pg -o wide | head -1 | grep -q 'QUEUE'"
"$HERE/nodes.sh" "$D" 1 8 big >/dev/null 2>&1
check "an 8-GPU node arrives: all nine pods run" wait_for 60 pods_running pytorch-dist-8gpu- 9
check "the PodGroup is Running with 9 running" \
    wait_for 20 equals "Running/9" pg_field pytorch-dist-8gpu- '{.status.phase}/{.status.running}'
check "each worker's RANK source, volcano.sh/task-index, is its index" \
    test "$(kubectl get pod pytorch-dist-8gpu-worker-5 -o jsonpath='{.metadata.annotations.volcano\.sh/task-index}')" = 5
check "queue team-a's status.allocated counts 8 GPUs" \
    wait_for 20 equals 8 kubectl get queue team-a -o jsonpath='{.status.allocated.nvidia\.com/gpu}'
reset

# --- mTLS: kube-scheduler bound lab b's gang with its client certificate -------
T=$D/tls
ext() { # CURL-ARGS...: an empty ExtenderArgs to muster's /filter over HTTPS
    curl -sS --max-time 5 --cacert "$T/ca.crt" "$@" -H 'Content-Type: application/json' \
        -d '{"Pod":null,"NodeNames":[]}' "https://127.0.0.1:$PORT/gang/filter"
}
kube_scheduler_cert=(--cert "$T/kube-scheduler/tls.crt" --key "$T/kube-scheduler/tls.key")
answered() { ext "${kube_scheduler_cert[@]}" | grep -q '"Error"'; }
tls_refused() { # CURL-ARGS...: the handshake refuses it, no HTTP status comes back
    local out
    out=$(ext -o /dev/null -w '%{http_code}' "$@" 2>&1) && { echo "served: $out"; return 1; }
    case "$out" in *000) ;; *) echo "got: $out"; return 1 ;; esac
}
binds_ok() { # the text first: grep -q quitting early would fail curl (pipefail)
    local m
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    grep -Eq '^muster_extender_binds_total\{result="ok"\} [1-9]' <<<"$m"
}
probes_apart() {
    curl -sf "http://127.0.0.1:$METRICS/readyz" >/dev/null || return 1
    equals 404 curl -s -o /dev/null -w '%{http_code}' --cacert "$T/ca.crt" \
        "${kube_scheduler_cert[@]}" "https://127.0.0.1:$PORT/readyz"
}
no_plain() { ! curl -s --max-time 5 "http://127.0.0.1:$PORT/healthz" | grep -q ok; }
check "its caches took their initial state by watch (sendInitialEvents), not LIST pages" \
    grep -q 'watch /api/v1/pods: initial state streamed: [0-9]* objects' "$D/muster.log"
check "mTLS: muster serves the extender over HTTPS with client certificates required" \
    grep -q 'HTTPS, client certificates required' "$D/muster.log"
check "mTLS: kube-scheduler's binds went through it (binds ok > 0)" binds_ok
check "mTLS: a client with kube-scheduler's certificate is answered" answered
check "mTLS: a client without a certificate is refused at the handshake" tls_refused
"$ROOT/manifests/tls/openssl.sh" "$D/tls-stranger" >/dev/null 2>&1
check "mTLS: a client whose certificate another CA signed is refused" \
    tls_refused --cert "$D/tls-stranger/kube-scheduler/tls.crt" --key "$D/tls-stranger/kube-scheduler/tls.key"
check "mTLS: plain HTTP to the extender port is not served" no_plain
check "--metrics-listen: probes answer on their own port, 404 on the extender's" probes_apart
# a rotation as cert-manager does it: new leaves under the same CA; both
# sides re-read their files, and the rest of this suite runs on them
"$ROOT/manifests/tls/openssl.sh" "$T" IP:127.0.0.1 >/dev/null 2>&1
check "mTLS: rotated certificates are re-read without a restart" \
    wait_for 20 grep -q 'TLS: reloaded' "$D/muster.log"
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: rotated}
spec:
  schedulerName: volcano
  minAvailable: 2
  queue: default
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: w, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}
YAML
"$HERE/nodes.sh" "$D" 1 8 rot >/dev/null 2>&1
check "mTLS: after the rotation kube-scheduler binds a new gang" wait_for 60 pods_running rotated- 2
reset

# --- lab c: two 8-GPU gangs on 12 GPUs -------------------------------------
"$HERE/nodes.sh" "$D" 1 8 c8 >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 1 4 c4 >/dev/null 2>&1
kubectl apply -f <(sed -n '/^apiVersion: batch/,$p' "$ROOT/examples/lab-c-two-gangs-12gpu.yaml") >/dev/null
two_gangs_settled() {
    local a b
    a=$(kubectl get pods --no-headers | grep '^train-a-' | grep -c ' Running ')
    b=$(kubectl get pods --no-headers | grep '^train-b-' | grep -c ' Running ')
    [ $((a + b)) = 8 ] && { [ "$a" = 0 ] || [ "$b" = 0 ]; }
}
check "two 8-GPU gangs on 12 GPUs: one runs whole" wait_for 60 two_gangs_settled
sleep 3
check "and the other has no pod placed" \
    test "$(( $(pods_bound train-a-) + $(pods_bound train-b-) ))" = 8
reset

# --- a PodGroup and annotated pods made without a vcjob (another operator) --
"$HERE/nodes.sh" "$D" 2 4 op >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: op-gang}
spec: {minMember: 3, queue: default}
YAML
op_pod() {
    cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: op-$1
  annotations: {scheduling.k8s.io/group-name: op-gang}
spec:
  schedulerName: volcano
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 2}}
YAML
}
op_pod 0 | kubectl apply -f - >/dev/null
op_pod 1 | kubectl apply -f - >/dev/null
sleep 4
check "operator pods: two of a gang of three wait, unbound" test "$(pods_bound op-)" = 0
check "kubectl describe pod shows FailedScheduling naming the gang's reason" \
    wait_for 20 bash -c "kubectl describe pod op-0 | grep FailedScheduling | grep -q 'gang default/op-gang waiting'"
op_pod 2 | kubectl apply -f - >/dev/null
check "operator pods: the third arrives and all three run" wait_for 60 pods_running op- 3
bound_unwoken() {
    local p node wake
    for p in op-0 op-1 op-2; do
        IFS=' ' read -r node wake < <(kubectl get pod "$p" -o jsonpath='{.spec.nodeName} {.metadata.annotations.muster\.io/wake}')
        [ -n "$node" ] && [ -z "$wake" ] || { echo "$p: node '$node' wake '$wake'" >&2; return 1; }
    done
}
# nothing in their specs is left for kube-scheduler to check: muster binds
# them when it releases them (--gang-bind release), no wake-up written
check "operator pods: bound at their release, none woken" bound_unwoken
reset

# --- lab d: fair share by weight on 18 GPUs ----------------------------------
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 2 8 d8 >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 1 2 d2 >/dev/null 2>&1
kubectl apply -f "$ROOT/examples/lab-d-fair-share.yaml" >/dev/null
share_settled() {
    test "$(kubectl get pods --no-headers | grep '^team-a-sweep' | grep -c ' Running ')" = 12 &&
        test "$(kubectl get pods --no-headers | grep '^team-b-sweep' | grep -c ' Running ')" = 6
}
check "two teams asking for more than 18 GPUs get 12 and 6 (weights 2:1)" wait_for 90 share_settled
reset

# --- lab a: one GPU, two bare pods with schedulerName volcano ----------------
"$HERE/nodes.sh" "$D" 1 1 a >/dev/null 2>&1
sed -n '/^apiVersion: v1$/,$p' "$ROOT/examples/lab-a-two-pods-one-gpu.yaml" |
    awk 'BEGIN{RS="---\n"; ORS="---\n"} /kind: Pod/' | kubectl apply -f - >/dev/null
one_of_two() {
    test "$(kubectl get pods --no-headers | grep '^gpu-smi-test' | grep -c ' Running ')" = 1
}
check "lab a: of two 1-GPU pods on one GPU, one runs" wait_for 60 one_of_two
pending_pg_says_gpu() {
    local pod pg
    pod=$(kubectl get pods --no-headers | grep '^gpu-smi-test' | grep -v ' Running ' | awk '{print $1}')
    pg=$(kubectl get pod "$pod" -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name}')
    [ -n "$pg" ] && kubectl get pg "$pg" -o jsonpath='{.status.conditions[0].message}' | grep -qi 'insufficient nvidia.com/gpu'
}
check "lab a: the other one's PodGroup names insufficient nvidia.com/gpu" wait_for 30 pending_pg_says_gpu
reset

# --- lab e: reclaim, whole gangs, down to the deserved share -------------------
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 2 8 e8 >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 1 2 e2 >/dev/null 2>&1
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: team-a-job/' "$ROOT/examples/lab-e-reclaim.yaml" |
    kubectl apply -f - >/dev/null
team_a_16() { test "$(kubectl get pods --no-headers | grep '^team-a-job' | grep -c ' Running ')" = 16; }
check "lab e: team-a fills what its capability allows (16 GPUs)" wait_for 60 team_a_16
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: team-b-train/' "$ROOT/examples/lab-e-reclaim.yaml" |
    sed '/muster.io\/submit-at/d; /^  annotations:$/d' | kubectl apply -f - >/dev/null
check "lab e: team-b's gang reclaims and runs whole" wait_for 90 pods_running team-b-train- 6
team_a_back() { test "$(kubectl get pods --no-headers | grep '^team-a-job' | grep -c ' Running ')" = 12; }
check "lab e: team-a is back at its deserved 12 GPUs" wait_for 60 team_a_back
whole_gangs() {
    local j c
    for j in 1 2 3 4 5 6 7 8; do
        c=$(kubectl get pods --no-headers | grep "^team-a-job-$j-" | grep -c ' Running ')
        [ "$c" = 0 ] || [ "$c" = 2 ] || return 1
    done
}
check "lab e: team-a gave back whole gangs" whole_gangs
reset

# --- lab e, damped: reclaim waits for a settled share, then acts by itself ---
# team-c (weight 1) waits with a 100-GPU pod, so team-b's share of the 18 GPUs
# is 4, not its gang's 6; when team-c's job goes, team-b is owed 6 at once but
# owed only 4 a moment ago: with proportion.shareWindow 20s it reclaims once
# the 4 has left the window, the cycle woken by the clock.
{ "$MUSTER" simulate --print-config |
    sed 's/^  - name: proportion$/  - name: proportion\n    arguments: {proportion.shareWindow: 20s}/'
} >"$D/damped.conf"
stop_muster
MUSTER_SERVE_ARGS=(--config "$D/damped.conf")
if start_muster >/dev/null 2>&1; then
    ok "damped: muster restarts with proportion.shareWindow 20s"
else
    not_ok "damped: muster restarts with proportion.shareWindow 20s" "$(tail -20 "$D/muster.log")"
fi
MUSTER_SERVE_ARGS=()
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 2 8 d8 >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 1 2 d2 >/dev/null 2>&1
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: team-a-job/' "$ROOT/examples/lab-e-reclaim.yaml" |
    kubectl apply -f - >/dev/null
check "damped: team-a fills 16 GPUs" wait_for 60 team_a_16
kubectl apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-c}
spec: {weight: 1}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: huge}
spec:
  minAvailable: 1
  schedulerName: volcano
  queue: team-c
  tasks:
  - name: w
    replicas: 1
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 100}}}]
YAML
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: team-b-train/' "$ROOT/examples/lab-e-reclaim.yaml" |
    sed '/muster.io\/submit-at/d; /^  annotations:$/d' | kubectl apply -f - >/dev/null
sleep 5
check "damped: team-b's gang waits: its share (4 of 18 beside team-c) is less than the gang" \
    equals 0 pods_bound team-b-train-
kubectl delete vcjob huge --wait=false >/dev/null
t_b=$(date +%s)
train_waits() {
    local pg
    pg=$(kubectl get pg -o custom-columns=N:.metadata.name --no-headers | grep '^team-b-train')
    kubectl get pg "$pg" -o jsonpath='{.status.conditions[0].message}' |
        grep -q 'reclaim waits: queue team-b is owed the gang.s [a-z./]* now, not yet over time: .*last 20s (proportion.shareWindow)'
}
check "damped: team-c's job gone, team-b is owed 6 but says reclaim waits for the share to settle" \
    wait_for 15 train_waits
check "damped: meanwhile team-a keeps its 16 GPUs" team_a_16
check "damped: then team-b's gang reclaims and runs whole" wait_for 90 pods_running team-b-train- 6
echo "# team-b's gang ran $(( $(date +%s) - t_b )) s after team-c's job went (window 20 s)"
check "damped: not before the window" test $(( $(date +%s) - t_b )) -ge 12
check "damped: team-a is back at its deserved 12 GPUs" wait_for 60 team_a_back
stop_muster
if start_muster >/dev/null 2>&1; then
    ok "damped: muster restarts with the default configuration"
else
    not_ok "damped: muster restarts with the default configuration" "$(tail -20 "$D/muster.log")"
fi
reset
wait_for 30 kubectl delete queue team-c --ignore-not-found >/dev/null 2>&1

# --- lab f: a high-priority gang preempts a low-priority one in its queue -----
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high-priority}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low-priority}
value: 10
YAML
"$HERE/nodes.sh" "$D" 1 8 f >/dev/null 2>&1
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: batch-low/' "$ROOT/examples/lab-f-preempt.yaml" |
    kubectl apply -f - >/dev/null
check "lab f: the low-priority gang runs" wait_for 60 pods_running batch-low- 8
awk 'BEGIN{RS="---\n"; ORS="---\n"} /name: urgent-high/' "$ROOT/examples/lab-f-preempt.yaml" |
    sed '/muster.io\/submit-at/d; /^  annotations:$/d' | kubectl apply -f - >/dev/null
check "lab f: the high-priority gang preempts it and runs whole" wait_for 90 pods_running urgent-high- 8
low_waits() {
    test "$(pods_bound batch-low-)" = 0 &&
        test "$(kubectl get pods --no-headers | grep -c '^batch-low-')" = 8
}
check "lab f: the low-priority gang waits whole, its pods made again" wait_for 60 low_waits
kubectl delete priorityclass high-priority low-priority >/dev/null 2>&1
reset

# --- kill -9 of muster in the middle of a release ---------------------------
"$HERE/nodes.sh" "$D" 2 8 k >/dev/null 2>&1
one_gang() { # NAME: a copy of lab c's first 8-pod vcjob under another name
    sed -n '/^apiVersion: batch/,/^---/p' "$ROOT/examples/lab-c-two-gangs-12gpu.yaml" |
        sed '$d' | sed "s/name: train-a/name: $1/"
}
one_gang crash | kubectl apply -f - >/dev/null
released() { grep -q 'release default/crash' "$D/muster.log"; }
if wait_for 30 released && [ -n "$MPID" ]; then
    kill -9 "$MPID"
    wait "$MPID" 2>/dev/null
    MPID=""
    ok "muster killed with -9 just after it released a gang"
    sleep 3
    # kube-scheduler's binds are separate API calls: a kill in the middle of
    # the barrier's binds can leave some members bound. What must hold is
    # that the restarted muster completes the gang and loses nothing.
    echo "# $(pods_bound crash-) of 8 members were bound when muster died"
    if start_muster >/dev/null 2>&1; then
        ok "muster restarts"
    else
        not_ok "muster restarts" "$(tail -20 "$D/muster.log")"
    fi
    check "after the restart the whole gang runs" wait_for 90 pods_running crash- 8
    check "and none of its pods was lost or doubled" pods_exist crash- 8
else
    not_ok "muster released the gang before the kill" "$(tail -5 "$D/muster.log")"
fi
reset

# --- a gang that falls below minMember is taken down whole, then restarted --
"$HERE/nodes.sh" "$D" 1 2 p >/dev/null 2>&1
one_gang part | sed 's/minAvailable: 8/minAvailable: 2/; s/replicas: 8/replicas: 2/' |
    kubectl apply -f - >/dev/null
check "a 2-pod gang runs" wait_for 60 pods_running part- 2
kubectl cordon p-000 >/dev/null
kubectl delete pod part-worker-1 --wait=false >/dev/null
check "one member lost on a cordoned node: after the grace period the other is taken down too" \
    wait_for 90 equals 0 pods_bound part-
kubectl uncordon p-000 >/dev/null
check "the node back: the whole gang runs again" wait_for 60 pods_running part- 2
reset

# --- the apiserver restarted under a running muster ---------------------------
"$HERE/nodes.sh" "$D" 1 8 r >/dev/null 2>&1
if "$HERE/cluster.sh" restart-apiserver "$D" >"$D/restart.log" 2>&1; then
    ok "kube-apiserver restarted"
    one_gang after | kubectl apply -f - >/dev/null 2>&1
    check "after the restart muster's watches recover and a new gang runs" \
        wait_for 90 pods_running after- 8
else
    not_ok "kube-apiserver restarted" "$(tail -20 "$D/restart.log")"
fi

# --- a forged /bind straight to muster's extender changes nothing --------------
# muster's port is reachable by anyone who can reach the pod: /bind must
# believe only muster's view (the names of a uid it placed), never the request.
"$HERE/nodes.sh" "$D" 1 8 fg >/dev/null 2>&1
kubectl taint node fg-000 forge=1:NoSchedule >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: forge-gang}
spec: {minMember: 2, queue: default}
---
apiVersion: v1
kind: Pod
metadata:
  name: forge-0
  annotations: {scheduling.k8s.io/group-name: forge-gang}
spec:
  schedulerName: volcano
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: forge-victim, namespace: kube-system}
spec:
  schedulerName: nobody-schedules-this
  containers: [{name: c, image: busybox}]
YAML
pod_state() { # NS NAME: "uid node" ("uid " while unbound)
    kubectl get pod -n "$1" "$2" -o jsonpath='{.metadata.uid} {.spec.nodeName}'
}
# sent with kube-scheduler's own client certificate: what mTLS lets through
# must still be refused when it names a pod muster's view does not
forge() { # PODNAME PODNAMESPACE PODUID: muster's reply to a forged /bind
    curl -s --max-time 10 --cacert "$T/ca.crt" "${kube_scheduler_cert[@]}" \
        -X POST -H 'Content-Type: application/json' \
        --data "{\"PodName\":\"$1\",\"PodNamespace\":\"$2\",\"PodUID\":\"$3\",\"Node\":\"fg-000\"}" \
        "https://127.0.0.1:$PORT/gang/bind"
}
refused_with() { # PATTERN REPLY
    case "$2" in *'"Error":""'*|'') echo "accepted: '$2'"; return 1 ;; esac
    echo "$2" | grep -q "$1" || { echo "reply: $2"; return 1; }
}
check "forge: a waiting gang member muster knows, and a pending kube-system pod" \
    wait_for 30 bash -c "kubectl describe pod forge-0 | grep FailedScheduling | grep -q 'gang default/forge-gang waiting'"
GANG_UID=$(kubectl get pod forge-0 -o jsonpath='{.metadata.uid}')
VICTIM_UID=$(kubectl get pod -n kube-system forge-victim -o jsonpath='{.metadata.uid}')
before_gang=$(pod_state default forge-0)
before_victim=$(pod_state kube-system forge-victim)
check "forge: muster's uid with another namespace's pod name is refused" \
    refused_with "is default/forge-0 in muster's view, not kube-system/forge-victim" \
    "$(forge forge-victim kube-system "$GANG_UID")"
check "forge: an unknown uid (the pending pod's own) with its name is refused" \
    refused_with "is not in muster's view" "$(forge forge-victim kube-system "$VICTIM_UID")"
check "forge: an unknown made-up uid with a pending pod's name is refused" \
    refused_with "is not in muster's view" \
    "$(forge forge-victim kube-system 00000000-0000-0000-0000-000000000000)"
sleep 2
check "forge: the kube-system pod still exists, same uid, unbound" \
    equals "$VICTIM_UID " pod_state kube-system forge-victim
check "forge: the gang member still exists, same uid, unbound" \
    equals "$GANG_UID " pod_state default forge-0
check "forge: nothing changed (before: '$before_victim' '$before_gang')" \
    test "$before_victim|$before_gang" = "$(pod_state kube-system forge-victim)|$(pod_state default forge-0)"
check "forge: no pod was Scheduled onto the tainted node" \
    equals "" bash -c "kubectl get events -A --field-selector reason=Scheduled -o jsonpath='{.items[*].message}' | tr ' ' '\\n' | grep -x 'fg-000'"
kubectl delete pod -n kube-system forge-victim --grace-period=0 --force >/dev/null 2>&1
kubectl delete pod forge-0 --grace-period=0 --force >/dev/null 2>&1
kubectl delete podgroup forge-gang >/dev/null 2>&1

metrics_ok() {
    local m
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    for k in muster_cycle_duration_seconds_bucket muster_cycle_last_duration_seconds \
             muster_queue_pending_gangs muster_queue_running_gangs \
             muster_queue_allocated muster_queue_deserved muster_evictions_total \
             muster_gang_wait_seconds_count muster_extender_bind_barrier_seconds_bucket \
             muster_extender_binds_total muster_extender_filter_requests_total; do
        grep -q "^$k" <<<"$m" || { echo "no $k"; return 1; }
    done
}
check "/metrics has cycle duration, pending gangs, queue shares, binds and evictions" metrics_ok

# --- a gang of plain pods binds whole at its release (issue 15) ------------
# Nothing in its pods' specs is left for kube-scheduler to check: muster
# binds it itself when it releases it, no member woken or waited for. With
# --gang-bind first, it binds the whole gang when kube-scheduler brings its
# first member to /bind. A gang whose pods ask for what only kube-scheduler
# checks (pod anti-affinity here) still waits at /bind for each member.
"$HERE/nodes.sh" "$D" 2 8 gb >/dev/null 2>&1
metric_of() { # NAME{LABELS}: its value on /metrics (0 when absent)
    curl -sf "http://127.0.0.1:$METRICS/metrics" |
        awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'
}
FIRST_OK='muster_extender_gangs_bound_at_first_member_total{result="ok"}'
RELEASE_OK='muster_gangs_bound_at_release_total{result="bound"}'
gb_gang() { # NAME SIZE EXTRA-SPEC-LINE
    printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s}\nspec: {minMember: %d, queue: default}\n' "$1" "$2"
    for i in $(seq 0 $(($2 - 1))); do
        cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  labels: {gang: $1}
  annotations: {scheduling.k8s.io/group-name: $1}
spec:
  schedulerName: volcano
  nodeSelector: {muster.e2e/pool: gb}
$3
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
    done
}
RELEASE_STALE='muster_gangs_bound_at_release_total{result="stale"}'
SPAN_N=muster_extender_gang_bind_span_seconds_count
BEFORE=$(metric_of "$FIRST_OK") REL_BEFORE=$(metric_of "$RELEASE_OK")
STALE_BEFORE=$(metric_of "$RELEASE_STALE") SPAN_BEFORE=$(metric_of "$SPAN_N")
gb_gang gb-plain 4 "" | kubectl apply -f - >/dev/null
check "a gang of 4 plain pods runs whole" wait_for 60 equals 4 pods_bound gb-plain-
unwoken() { # PREFIX N: N pods bound, none with a wake-up annotation
    local out
    out=$(kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.metadata.annotations.muster\.io/wake}{"\n"}{end}' | grep "^$1")
    [ "$(awk 'NF == 2' <<<"$out" | wc -l)" = "$2" ] || { echo "$out" >&2; return 1; }
}
check "none of its pods was woken (bound by muster at its release)" unwoken gb-plain- 4
binder_series() { # the release binder's pods (back to 0) and the rate-limit series
    local m
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    grep -qx 'muster_release_binder_pods 0' <<<"$m" &&
        grep -q '^muster_kube_rate_limited_total{client="bind"} [0-9]' <<<"$m" &&
        grep -q '^muster_kube_rate_limited_seconds_total{client="writer"} [0-9]' <<<"$m"
}
check "/metrics: the release binder holds no pod once the gang is bound; rate-limit waits by client" \
    wait_for 30 binder_series
# bound by the release binder (+1 bound); or, rarely, kube-scheduler tried a
# member between the view's publication and the binder's turn, and its
# /bind bound the gang (+1 at the first member, the binder's try stale)
at_release() {
    local rel first stale
    rel=$(metric_of "$RELEASE_OK") first=$(metric_of "$FIRST_OK") stale=$(metric_of "$RELEASE_STALE")
    echo "bound at release $REL_BEFORE -> $rel, at first member $BEFORE -> $first, stale $STALE_BEFORE -> $stale"
    { [ "$rel" = $((REL_BEFORE + 1)) ] && [ "$first" = "$BEFORE" ]; } ||
        { [ "$rel" = "$REL_BEFORE" ] && [ "$first" = $((BEFORE + 1)) ] && [ "$stale" = $((STALE_BEFORE + 1)) ]; }
}
check "muster bound it whole at once, at its release (+1 on $RELEASE_OK)" wait_for 10 at_release
span_seen() { [ "$(metric_of "$SPAN_N")" = $((SPAN_BEFORE + 1)) ]; }
check "its span (first to last member bound) is on /metrics (+1 on $SPAN_N)" span_seen
REL_AFTER=$(metric_of "$RELEASE_OK") BEFORE=$(metric_of "$FIRST_OK")
gb_gang gb-anti 2 '  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {gang: gb-anti}}}}]}}' |
    kubectl apply -f - >/dev/null
check "a gang with pod anti-affinity runs whole too" wait_for 60 equals 2 pods_bound gb-anti-
metric_lines() { # LINE...: each a whole line of /metrics
    local m l
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    for l in "$@"; do
        grep -qxF "$l" <<<"$m" || { echo "no line: $l" >&2; return 1; }
    done
}
check "through the barrier that waits for each member ($FIRST_OK and $RELEASE_OK unchanged)" \
    metric_lines "$FIRST_OK $BEFORE" "$RELEASE_OK $REL_AFTER"
stop_muster
MUSTER_SERVE_ARGS=(--gang-bind first)
if start_muster >/dev/null 2>&1; then
    ok "--gang-bind first: muster restarts"
else
    not_ok "--gang-bind first: muster restarts" "$(tail -20 "$D/muster.log")"
fi
MUSTER_SERVE_ARGS=()
gb_gang gb-first 4 "" | kubectl apply -f - >/dev/null
check "--gang-bind first: a gang of 4 plain pods runs whole" wait_for 60 equals 4 pods_bound gb-first-
no_release_binder() {
    local m
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    ! grep -q '^muster_gangs_bound_at_release_total' <<<"$m"
}
check "--gang-bind first: bound whole at its first member's /bind ($FIRST_OK 1)" \
    wait_for 10 metric_lines "$FIRST_OK 1"
check "--gang-bind first: no binds at release (no muster_gangs_bound_at_release_total)" \
    no_release_binder
stop_muster
if start_muster >/dev/null 2>&1; then
    ok "muster restarts with its defaults"
else
    not_ok "muster restarts with its defaults" "$(tail -20 "$D/muster.log")"
fi
# --- a tick with nothing new skips its cycle (issue 15, item 1) ---------------
# With no event since a cycle that decided nothing and no release in
# flight, the next cycle would decide the same nothing: the tick skips it.
# An event ends it at once.
skips_while_settled() {
    local c0 s0 c1 s1
    c0=$(metric_of muster_cycles_total) s0=$(metric_of muster_cycles_skipped_total)
    sleep 3.5
    c1=$(metric_of muster_cycles_total) s1=$(metric_of muster_cycles_skipped_total)
    echo "cycles $c0 -> $c1, skipped $s0 -> $s1"
    [ "$c1" = "$c0" ] && [ "$s1" -ge $((s0 + 2)) ]
}
check "a settled cluster's ticks skip the cycle (muster_cycles_skipped_total grows, muster_cycles_total does not)" \
    wait_for 60 skips_while_settled
CYC=$(metric_of muster_cycles_total)
gb_gang gb-late 2 "" | kubectl apply -f - >/dev/null
check "a gang made on the settled cluster runs whole at once" wait_for 30 equals 2 pods_bound gb-late-
cycled_past() { [ "$(metric_of muster_cycles_total)" -gt "$1" ]; }
check "its events ran cycles again (muster_cycles_total past $CYC)" cycled_past "$CYC"
kubectl delete pods -l 'gang in (gb-plain,gb-anti,gb-late)' --grace-period=0 --force >/dev/null 2>&1
kubectl delete podgroup gb-plain gb-anti gb-late >/dev/null 2>&1
kubectl delete node gb-000 gb-001 >/dev/null 2>&1
# --- one pod with a NUL in an annotation does not stop the cache (issue 11) ---
# The apiserver accepts "\u0000" in an annotation value; kubectl's YAML does
# not carry it, so the pod goes in as raw JSON. It names a scheduler nobody
# runs, so it stays in every pods LIST. Before, that one pod failed muster's
# whole LIST: a restarted muster never synced (/readyz 503) and no new gang
# was placed.
reset
"$HERE/nodes.sh" "$D" 1 8 z >/dev/null 2>&1
nul_pod() {
    printf '%s' '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nul-note","annotations":{"note":"a\u0000b"}},"spec":{"schedulerName":"nobody","containers":[{"name":"c","image":"busybox"}]}}' >"$D/nul-pod.json"
    kubectl create --raw /api/v1/namespaces/default/pods -f "$D/nul-pod.json" >/dev/null &&
        kubectl get --raw /api/v1/namespaces/default/pods/nul-note | grep -q '"note":"a\\u0000b"'
}
check "NUL: the apiserver keeps a pod whose annotation holds a NUL" nul_pod
stop_muster
nul_log_at=$(wc -c <"$D/muster.log")
if start_muster >/dev/null 2>&1; then
    ok "NUL: a restarted muster lists the pods and becomes ready (/readyz 200)"
else
    not_ok "NUL: a restarted muster lists the pods and becomes ready (/readyz 200)" \
        "$(tail -20 "$D/muster.log")"
fi
one_gang nulgang | kubectl apply -f - >/dev/null
check "NUL: a new gang binds whole next to that pod" wait_for 90 pods_running nulgang- 8
check "NUL: muster's pods initial state and watch logged no failure since the restart" \
    bash -c "! tail -c +$((nul_log_at + 1)) '$D/muster.log' | grep 'watch /api/v1/pods' |
             grep -v ': initial state streamed: [0-9]* objects$'"
check "NUL: and that initial state was streamed whole, the NUL pod in it" \
    bash -c "tail -c +$((nul_log_at + 1)) '$D/muster.log' |
             grep -q 'watch /api/v1/pods: initial state streamed: [1-9][0-9]* objects'"
kubectl delete pod nul-note --grace-period=0 --force >/dev/null 2>&1

check "muster never crashed" kill -0 "$MPID"
if [ $failed -gt 0 ]; then
    echo "# muster log (tail):"
    tail -40 "$D/muster.log" | diag
fi
echo "1..$n"
[ $failed = 0 ]
