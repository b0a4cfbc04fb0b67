#!/usr/bin/env bash
# End-to-end: never lose a pod to undo a gang (issue 11, item 4). muster
# talks to the apiserver through a fault-injecting stand-in (faultproxy.c:
# plain HTTP on loopback, HTTPS to the real apiserver with muster's own
# token), which
#   1. answers 500 to the first binding of one member of a gang of bare
#      pods: the bind is read back and retried, and both pods exist at the
#      end, bound (before, the gang was undone: both deleted, nothing made
#      them again); and the same when the binding went through and only
#      its answer was a 500 (read back: bound, nothing sent again);
#   2. holds every binding while muster releases a gang of bare pods gated
#      by muster (ungated, pinned to their nodes), then muster is killed
#      (kill -9) and started again: after the restart no pod stays pinned
#      to a node where it cannot run (the release is finished: bound);
#   3. the same, and one member's pinned node is deleted while muster is
#      down: that bare pod is made again, unpinned (same name, new uid),
#      and the gang binds whole elsewhere.
# Prints TAP.
#
# Usage: tests/e2e/faults.sh MUSTER_BINARY FAULTPROXY_BINARY
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: faults.sh MUSTER_BINARY FAULTPROXY_BINARY}
PROXY=${2:?usage: faults.sh MUSTER_BINARY FAULTPROXY_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
case "$PROXY" in /*) ;; *) PROXY=$PWD/$PROXY ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"

PXPID="" PXPORT=""

# tap.sh's muster, on a kubeconfig that names the proxy (started once,
# kept across muster's restarts)
start_muster() {
    if [ -z "$PXPID" ]; then
        PXPORT=$(free_port)
        "$PROXY" "$PXPORT" "$MUSTER_APISERVER_URL" "$D/pki/ca.crt" \
            --fail-bind fa-1 --fail-bind-after fb-1 --hold-bind "$D/hold" \
            >>"$D/proxy.log" 2>&1 &
        PXPID=$!
        sed -e "s|server: https://127.0.0.1:[0-9]*|server: http://127.0.0.1:$PXPORT|" \
            -e '/certificate-authority:/d' "$MUSTER_KUBECONFIG" >"$D/proxied.kubeconfig"
        wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PXPORT"
    fi
    "$MUSTER" serve --kubeconfig "$D/proxied.kubeconfig" \
        --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$METRICS" \
        "${MUSTER_TLS_ARGS[@]}" >>"$D/muster.log" 2>&1 &
    MPID=$!
    wait_for 30 curl -sf "http://127.0.0.1:$METRICS/readyz"
}

# start_muster in this shell, not in check's subshell: MPID must be the
# new process's, or the next stop_muster leaves it running beside the next
# one (which then cannot listen)
restarted() { # NAME
    if start_muster >/dev/null 2>&1 && kill -0 "$MPID" 2>/dev/null; then
        ok "$1"
    else
        not_ok "$1" "muster did not become ready (pid ${MPID:-none})"
    fi
}

tap_cleanup() {
    [ -n "$MPID" ] && kill -9 "$MPID" 2>/dev/null
    [ -n "$PXPID" ] && kill -9 "$PXPID" 2>/dev/null
    [ -n "${VSPID:-}" ] && kill -CONT "$VSPID" 2>/dev/null
    "$HERE/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "${MUSTER_E2E_KEEP:-0}" = 1 ]; then
        echo "# kept $D" >&2
    else
        rm -rf "$D"
    fi
}

tap_end() {
    echo "1..$n"
    if [ "$failed" -gt 0 ]; then
        for f in "$D/muster.log" "$D/proxy.log"; do
            echo "# tail $f:"
            tail -40 "$f" | sed 's/^/# /'
        done
        exit 1
    fi
    exit 0
}

tap_up faults
"$HERE/nodes.sh" "$D" 4 8 fn >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 6 8 fm >/dev/null 2>&1

bare_pod() { # NAME GROUP GATED(0/1)
    local gate=""
    # a gated pod here also has a (soft) topology spread: only kube-scheduler
    # checks that, so muster leaves its bind to kube-scheduler (paused below
    # to hold a release between its patches and its binds), instead of
    # binding the gang itself once ungated (--gang-bind release)
    [ "$3" = 1 ] && gate="  schedulingGates: [{name: muster.io/gang}]
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {spread: $2}}}]"
    cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {scheduling.k8s.io/group-name: $2}
spec:
  schedulerName: volcano
$gate
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 8}}
---
YAML
}
podgroup() { # NAME MIN
    cat <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec: {minMember: $2, queue: default}
---
YAML
}
bound_count() { # PREFIX: pods of that prefix with a node
    kubectl get pods --no-headers -o custom-columns=N:.metadata.name,NODE:.spec.nodeName 2>/dev/null |
        awk -v p="$1" 'index($1, p) == 1 && $2 != "<none>" { n++ } END { print n + 0 }'
}
exists_count() { # PREFIX
    kubectl get pods --no-headers 2>/dev/null | awk -v p="$1" 'index($1, p) == 1 { n++ } END { print n + 0 }'
}

# --- 1. a 500 on one binding of a gang of bare pods ------------------------
UID0=""
{ podgroup fa 2; bare_pod fa-0 fa 0; bare_pod fa-1 fa 0; } | kubectl apply -f - >/dev/null
check "the gang of two bare pods binds whole although one binding got a 500" \
    wait_for 60 equals 2 bound_count fa-
check "the proxy did answer 500 to fa-1's binding, once" \
    equals 1 bash -c "grep -c 'injected 500: POST /api/v1/namespaces/default/pods/fa-1/binding' '$D/proxy.log'"
check "both pods still exist (none deleted to undo the gang)" equals 2 exists_count fa-
UID0=$(kubectl get pod fa-0 -o jsonpath='{.metadata.uid}')
check "fa-0 is the pod that was made (never deleted and made again)" \
    bash -c "[ -n '$UID0' ] && ! kubectl get pod fa-0 -o jsonpath='{.metadata.annotations}' | grep -q made-again-from"
check "muster read fa-1 back and bound it again: the batch is ok" \
    wait_for 10 bash -c "grep 'bind default/fa#' '$D/muster.log' | tail -1 | grep -q ': ok'"
check "muster deleted nothing" bash -c "! grep -q 'deleting it\\|were deleted\\|was deleted' '$D/muster.log'"
{ podgroup fb 2; bare_pod fb-0 fb 0; bare_pod fb-1 fb 0; } | kubectl apply -f - >/dev/null
check "a binding that went through with a 500 for an answer: the gang binds whole" \
    wait_for 60 equals 2 bound_count fb-
check "the proxy did send fb-1's binding on and answered 500" \
    grep -q 'injected 500: POST /api/v1/namespaces/default/pods/fb-1/binding' "$D/proxy.log"
check "muster read fb-1 back bound and counted it so: the batch is ok" \
    wait_for 10 bash -c "grep 'bind default/fb#' '$D/muster.log' | tail -1 | grep -q ': ok'"

# --- 2. kill -9 with a gang pinned but unbound --------------------------------
# the proxy holds every binding while $D/hold exists; kube-scheduler is
# paused as well, so that no bind is in flight when muster dies
touch "$D/hold"
read -r VSPID _ <"$D/pids/kube-scheduler-volcano.pid"
kill -STOP "$VSPID"
{ podgroup fk 2; bare_pod fk-0 fk 1; bare_pod fk-1 fk 1; } | kubectl apply -f - >/dev/null
pinned_unbound() { # PREFIX: its pods released by muster (ungated, pinned), unbound
    kubectl get pods -o json 2>/dev/null | python3 -c '
import json, sys
n = 0
for p in json.load(sys.stdin)["items"]:
    m, s = p["metadata"], p["spec"]
    a = m.get("annotations", {})
    if m["name"].startswith(sys.argv[1]) and a.get("muster.io/release-pinned") == "true" \
       and not s.get("schedulingGates") and not s.get("nodeName"):
        n += 1
print(n)' "$1"
}
check "muster releases the gated gang: 2 bare pods ungated and pinned, unbound" \
    wait_for 30 equals 2 pinned_unbound fk-
stop_muster
echo "# killed muster (kill -9) with fk-0 and fk-1 pinned, unbound"
kill -CONT "$VSPID"
rm -f "$D/hold"
restarted "muster starts again"
# nothing stays pinned to a node where it cannot run: each fk-* is bound,
# and to the node it was pinned to, or is no longer pinned
stuck() { # PREFIX: its pods pinned (node affinity on metadata.name) and not bound there
    kubectl get pods -o json 2>/dev/null | python3 -c '
import json, sys
bad = []
for p in json.load(sys.stdin)["items"]:
    m, s = p["metadata"], p["spec"]
    if not m["name"].startswith(sys.argv[1]):
        continue
    pins = [v for t in s.get("affinity", {}).get("nodeAffinity", {})
                      .get("requiredDuringSchedulingIgnoredDuringExecution", {})
                      .get("nodeSelectorTerms", [])
              for f in t.get("matchFields", []) if f.get("key") == "metadata.name"
              for v in f.get("values", [])]
    if pins and s.get("nodeName") not in pins:
        bad.append("%s pinned to %s, on %s" % (m["name"], pins, s.get("nodeName")))
print("\n".join(bad))
sys.exit(1 if bad else 0)' "$1"
}
check "after the restart no fk-* pod stays pinned to a node where it cannot run" \
    wait_for 60 stuck fk-
check "both fk-* pods exist and are bound" wait_for 30 equals 2 bound_count fk-
check "the restarted muster took the release over" grep -q 'release default/fk#[0-9]*: taken over' "$D/muster.log"
check "and still no pod was lost: fa-0 has its first uid" \
    bash -c "[ -n '$UID0' ] && [ \"\$(kubectl get pod fa-0 -o jsonpath='{.metadata.uid}')\" = '$UID0' ]"

# --- 3. kill -9, and a pinned node deleted while muster is down -------------
touch "$D/hold"
kill -STOP "$VSPID"
{ podgroup fm 2; bare_pod fm-0 fm 1; bare_pod fm-1 fm 1; } | kubectl apply -f - >/dev/null
check "muster releases a second gated gang of bare pods: pinned, unbound" \
    wait_for 30 equals 2 pinned_unbound fm-
stop_muster
OLD_UID=$(kubectl get pod fm-1 -o jsonpath='{.metadata.uid}')
GONE_NODE=$(kubectl get pod fm-1 -o jsonpath='{.metadata.annotations.muster\.io/reserved-node}')
kubectl delete node "$GONE_NODE" >/dev/null
echo "# killed muster (kill -9); deleted node $GONE_NODE, fm-1's pinned node"
kill -CONT "$VSPID"
rm -f "$D/hold"
restarted "muster starts again (2)"
check "no fm-* pod stays pinned to a node where it cannot run" wait_for 60 stuck fm-
check "fm-1 was made again: its name, a new uid, the old one noted" \
    wait_for 30 bash -c "[ \"\$(kubectl get pod fm-1 -o jsonpath='{.metadata.annotations.muster\\.io/made-again-from}')\" = '$OLD_UID' ]"
check "both fm-* pods exist and are bound, fm-1 not on the deleted node" \
    wait_for 60 bash -c "[ \"\$(kubectl get pods fm-0 fm-1 --no-headers -o custom-columns=N:.spec.nodeName | grep -vc '<none>\\|^$GONE_NODE\$')\" = 2 ]"
check "muster says why it made fm-1 again" \
    grep -q "pod default/fm-1 is pinned to $GONE_NODE, which is gone, and has no controller: making it again" "$D/muster.log"

tap_end
