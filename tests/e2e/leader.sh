#!/usr/bin/env bash
# End-to-end: leader election. Two `muster serve --leader-elect` replicas
# behind a stand-in for a Service (forward.c: the replica whose /readyz is
# 200), kube-scheduler's extender URL on the stand-in. The follower is not
# ready and refuses /bind; kill -9 the leader while 40 gangs are being
# submitted; the other leads within the lease duration and a few seconds,
# and every gang is bound whole, none left partial. Prints TAP.
#
# Usage: tests/e2e/leader.sh MUSTER_BINARY FORWARD_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: leader.sh MUSTER_BINARY FORWARD_BINARY}
FORWARD=${2:?usage: leader.sh MUSTER_BINARY FORWARD_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
case "$FORWARD" in /*) ;; *) FORWARD=$PWD/$FORWARD ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

LEASE=15 # kube-scheduler's defaults: 15s / 10s / 2s
# The stand-in for the Service is plain TCP and probes each replica's
# /readyz on its extender port, so the replicas serve plain HTTP on
# loopback here (mTLS is gang.sh's: the leader's gate sits behind it).
MUSTER_E2E_SCHEME=http
PA="" PB="" APID="" BPID="" FPID=""

# replica NAME PORT: starts one replica in the background, echoes its pid
replica() {
    "$MUSTER" serve --kubeconfig "$MUSTER_KUBECONFIG" --listen "127.0.0.1:$2" \
        --leader-elect --leader-elect-identity "$1" \
        --leader-elect-lease-duration ${LEASE}s --leader-elect-renew-deadline 10s \
        --leader-elect-retry-period 2s >>"$D/muster-$1.log" 2>&1 &
    echo $!
}

# tap.sh's muster is the forwarder on $PORT and two replicas behind it
start_muster() {
    # the Lease's Role is bound to muster's ServiceAccount by
    # rbac-muster.yaml, applied by tap_up
    PA=$(free_port) PB=$(free_port)
    "$FORWARD" "$PORT" "$PA" "$PB" >>"$D/forward.log" 2>&1 &
    FPID=$!
    APID=$(replica replica-a "$PA")
    sleep 1 # a leads first, so the test knows whom to kill
    BPID=$(replica replica-b "$PB")
    MPID=$APID
    wait_for 40 curl -sf "http://127.0.0.1:$PORT/readyz"
}

tap_cleanup() {
    local p
    for p in $APID $BPID $FPID; do kill -9 "$p" 2>/dev/null; done
    "$HERE/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "${MUSTER_E2E_KEEP:-0}" = 1 ]; then
        echo "# kept $D" >&2
    else
        rm -rf "$D"
    fi
}

status_of() { # PORT METHOD PATH: the HTTP status
    curl -s -o /dev/null -w '%{http_code}' -X "$2" -H 'Content-Type: application/json' \
        -d '{"PodName":"x","PodNamespace":"default","PodUID":"none","Node":"n"}' \
        "http://127.0.0.1:$1$3"
}
holder() { kubectl -n muster-system get lease muster -o jsonpath='{.spec.holderIdentity}'; }

tap_end() {
    echo "1..$n"
    if [ "$failed" -gt 0 ]; then
        for f in "$D"/muster-replica-*.log "$D/forward.log"; do
            echo "# tail $f:"
            tail -30 "$f" | sed 's/^/# /'
        done
        exit 1
    fi
    exit 0
}

tap_up leader

check "one leader: replica-a holds Lease muster-system/muster" \
    wait_for 20 equals replica-a holder
check "the leader is ready (200), the follower is not (503)" \
    wait_for 20 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PA/readyz)\" = 200 ] &&
        [ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PB/readyz)\" = 503 ]"
check "the follower's /readyz says why" \
    bash -c "curl -s http://127.0.0.1:$PB/readyz | grep -q 'not the leader'"
check "the follower refuses /bind with 503" equals 503 status_of "$PB" POST /scheduler/bind
check "the leader answers /bind (200, an Error for an unknown pod is its business)" \
    equals 200 status_of "$PA" POST /scheduler/bind

# --- 40 gangs of 4, the leader killed after 16 of them -----------------------
# 176 GPUs: the 40 gangs of 4, and 4 more for the second failover
"$HERE/nodes.sh" "$D" 22 8 lg >/dev/null 2>&1
gang() { # INDEX [EXTRA-POD-SPEC-LINE]
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: lg-$1}
spec:
  minAvailable: 4
  schedulerName: volcano
  queue: default
  tasks:
    - name: w
      replicas: 4
      template:
        spec:
          ${2:-}
          containers:
            - name: c
              image: busybox
              resources: {limits: {nvidia.com/gpu: 1, cpu: "1", memory: 1Gi}}
---
YAML
}
KILL_MS=0
for b in 0 1 2 3 4 5 6 7 8 9; do
    for i in 0 1 2 3; do gang $((b * 4 + i)); done | kubectl apply -f - >/dev/null
    if [ "$b" = 3 ]; then
        sleep 1
        kill -9 "$APID"
        KILL_MS=$(date +%s%3N)
        echo "# killed the leader (replica-a, pid $APID) after 16 gangs"
    fi
    sleep 0.5
done
check "replica-b leads within the lease duration + 5 s of the kill" \
    wait_for $((LEASE + 5)) bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PB/readyz)\" = 200 ]"
LEAD_MS=$(date +%s%3N)
echo "# replica-b ready $((LEAD_MS - KILL_MS)) ms after the kill"
check "the Lease names replica-b, one transition more" \
    bash -c "[ \"\$(kubectl -n muster-system get lease muster -o jsonpath='{.spec.holderIdentity}/{.spec.leaseTransitions}')\" = replica-b/1 ]"

gangs_whole() { # COUNT: that many lg-N have 4 Running pods
    local out
    out=$(kubectl get pods --no-headers 2>/dev/null | awk '$1 ~ /^lg-/ && $3 == "Running" {
        sub(/-w-[0-9]+$/, "", $1); n[$1]++ } END { for (g in n) if (n[g] == 4) w++; print w + 0 }')
    [ "$out" = "$1" ] || { echo "$out of $1 gangs run whole"; return 1; }
}
check "every one of the 40 gangs runs whole" wait_for 180 gangs_whole 40
partial_gangs() { # gangs with some but not all members bound
    kubectl get pods --no-headers -o custom-columns=N:.metadata.name,NODE:.spec.nodeName 2>/dev/null |
        awk '$1 ~ /^lg-/ { g = $1; sub(/-w-[0-9]+$/, "", g); t[g]++; if ($2 != "<none>") b[g]++ }
             END { for (g in t) if (b[g] > 0 && b[g] < 4) p++; print p + 0 }'
}
check "no gang is left partial" equals 0 partial_gangs
check "160 pods, none more (no member made twice and left over)" \
    equals 160 bash -c "kubectl get pods --no-headers | grep -c '^lg-'"
check "no gang was taken down for running below minMember" \
    bash -c "! grep -q 'below minMember' '$D/muster-replica-b.log'"
check "replica-b says it took over" grep -q 'leading: taking over' "$D/muster-replica-b.log"
grep -E 'taken over|acquired|leading' "$D/muster-replica-b.log" | sed 's/^/# /'

# --- the old leader comes back: a follower --------------------------------
APID=$(replica replica-a2 "$PA")
check "a replica started again follows: caches synced, /readyz 503" \
    wait_for 30 bash -c "curl -s http://127.0.0.1:$PA/readyz | grep -q 'not the leader'"
check "and the leader stays" equals replica-b holder

# --- the leader dies between a release and its binds ---------------------
# kube-scheduler paused: replica-b releases 4 gangs (16 pods ungated, pinned,
# annotated with their release) that nobody binds; then replica-b dies and
# replica-a2 must finish those releases from what the pods say.
read -r VSPID _ <"$D/pids/kube-scheduler-volcano.pid"
kill -STOP "$VSPID"
# (a soft topology spread: only kube-scheduler checks it, so muster leaves
# these binds to kube-scheduler instead of binding the gangs itself once
# ungated, --gang-bind release)
for i in 40 41 42 43; do
    gang $i "topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {spread: lg}}}]"
done | kubectl apply -f - >/dev/null
released_unbound() { # pods of lg-40..43 released by muster, not bound
    kubectl get pods -o json 2>/dev/null | python3 -c '
import json, sys
n = 0
for p in json.load(sys.stdin)["items"]:
    m, s = p["metadata"], p["spec"]
    if m["name"].startswith(("lg-40-", "lg-41-", "lg-42-", "lg-43-")) and \
       "muster.io/release" in m.get("annotations", {}) and \
       not s.get("schedulingGates") and not s.get("nodeName"):
        n += 1
print(n)'
}
check "kube-scheduler paused: the leader releases 4 gangs, 16 pods ungated, annotated, unbound" \
    wait_for 30 equals 16 released_unbound
kill -9 "$BPID"
KILL_MS=$(date +%s%3N)
check "replica-a2 leads within the lease duration + 5 s" \
    wait_for $((LEASE + 5)) bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PA/readyz)\" = 200 ]"
echo "# replica-a2 ready $(( $(date +%s%3N) - KILL_MS )) ms after the kill"
kill -CONT "$VSPID"
check "replica-a2 takes the 4 unfinished releases over from the pods" \
    wait_for 10 equals 4 bash -c "grep -c 'taken over, 4 of 4 members left to bind' '$D/muster-replica-a2.log'"
check "and kube-scheduler binds them whole through it: 44 gangs run" wait_for 90 gangs_whole 44
check "still no gang partial" equals 0 partial_gangs
check "176 pods, none made twice" equals 176 bash -c "kubectl get pods --no-headers | grep -c '^lg-'"

tap_end
