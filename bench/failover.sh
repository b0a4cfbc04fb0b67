#!/usr/bin/env bash
# Leader failover time of `muster serve --leader-elect`: kill -9 the leader,
# then the time until the other replica's first bind (a "bind ...: ok" line
# in its log, polled every 20 ms). Two replicas behind the Service stand-in
# of the e2e test (tests/e2e/forward.c), kube-scheduler's extender on it,
# kube-scheduler's lease defaults (15s / 10s / 2s) unless LEASE etc. say
# otherwise. Each repetition: a follower synced and waiting, kill -9 the
# leader, apply one 4-pod vcjob at once (the new leader makes its pods,
# releases the gang, kube-scheduler binds it through the new leader's
# barrier), measure, start the killed replica again as the next follower.
# Prints one line per repetition and the median and max.
#
# Usage: bench/failover.sh MUSTER_BINARY FORWARD_BINARY [REPS]
#   (FORWARD_BINARY: build/tests/muster-e2e-forward)
# Env: LEASE RENEW RETRY (seconds), MUSTER_E2E_KEEP=1 keeps the run dir.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
E2E=$HERE/../tests/e2e
ROOT=$(cd "$HERE/.." && pwd)
MUSTER=${1:?usage: failover.sh MUSTER_BINARY FORWARD_BINARY [REPS]}
FORWARD=${2:?usage: failover.sh MUSTER_BINARY FORWARD_BINARY [REPS]}
REPS=${3:-10}
LEASE=${LEASE:-15} RENEW=${RENEW:-10} RETRY=${RETRY:-2}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
case "$FORWARD" in /*) ;; *) FORWARD=$PWD/$FORWARD ;; esac
# shellcheck source=../tests/e2e/lib.sh
. "$E2E/lib.sh"

D=/tmp/muster-failover.$$
mkdir -m 700 "$D" || e2e_die "run dir $D exists"
PIDS=""
cleanup() {
    local p
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    "$E2E/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "${MUSTER_E2E_KEEP:-0}" = 1 ]; then echo "# kept $D" >&2; else rm -rf "$D"; fi
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz"; }
until_code() { # PORT CODE SECONDS
    local end=$((SECONDS + $3))
    while [ $SECONDS -lt $end ]; do [ "$(code "$1")" = "$2" ] && return 0; sleep 0.1; done
    return 1
}

FPORT=$(pick_port) P0=$(pick_port) P1=$(pick_port)
MUSTER_EXTENDER_URL="http://127.0.0.1:$FPORT" "$E2E/cluster.sh" up "$D" >"$D/up.log" 2>&1 ||
    { tail -20 "$D/up.log" >&2; e2e_die "cluster up failed"; }
eval "$("$E2E/cluster.sh" env "$D")"
kubectl apply -f "$ROOT/crds/" >/dev/null
kubectl apply -f "$ROOT/manifests/namespace.yaml" -f "$ROOT/manifests/rbac-muster.yaml" >/dev/null
kubectl create clusterrolebinding muster-bench --clusterrole=muster --user=muster >/dev/null
kubectl -n muster-system create rolebinding muster-bench-lease \
    --role=muster-leader-election --user=muster >/dev/null
"$E2E/nodes.sh" "$D" 8 8 fo >/dev/null 2>&1 || e2e_die "nodes"
"$FORWARD" "$FPORT" "$P0" "$P1" >>"$D/forward.log" 2>&1 &
PIDS="$PIDS $!"

declare -A PID LOG
start() { # SLOT (0|1) GEN
    local port
    port=$([ "$1" = 0 ] && echo "$P0" || echo "$P1")
    LOG[$1]=$D/muster-$1-$2.log
    "$MUSTER" serve --kubeconfig "$MUSTER_KUBECONFIG" --listen "127.0.0.1:$port" \
        --leader-elect --leader-elect-identity "slot$1-gen$2" \
        --leader-elect-lease-duration "${LEASE}s" --leader-elect-renew-deadline "${RENEW}s" \
        --leader-elect-retry-period "${RETRY}s" >"${LOG[$1]}" 2>&1 &
    PID[$1]=$!
    PIDS="$PIDS $!"
    disown "$!" # its kill -9 is the point: no "Killed" notice from bash
}
port_of() { [ "$1" = 0 ] && echo "$P0" || echo "$P1"; }
gang() { # NAME
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: 4
  schedulerName: volcano
  queue: default
  tasks:
    - name: w
      replicas: 4
      template:
        spec:
          containers:
            - name: c
              image: busybox
              resources: {limits: {nvidia.com/gpu: 1, cpu: "1", memory: 1Gi}}
YAML
}

start 0 0
until_code "$P0" 200 60 || e2e_die "slot 0 never led"
start 1 0
leader=0
echo "# $(date -u +%FT%TZ) lease ${LEASE}s renew ${RENEW}s retry ${RETRY}s, $REPS reps, load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$D/times"
for rep in $(seq 1 "$REPS"); do
    f=$((1 - leader))
    # the follower is synced and says so
    end=$((SECONDS + 60))
    until curl -s "http://127.0.0.1:$(port_of $f)/readyz" | grep -q 'not the leader'; do
        [ $SECONDS -lt $end ] || e2e_die "rep $rep: follower never synced"
        sleep 0.2
    done
    sleep 1
    kill -9 "${PID[$leader]}"
    t0=$(now_ms)
    gang "fo-$rep" | kubectl apply -f - >/dev/null
    end=$((SECONDS + LEASE + 60))
    until grep -q 'bind .*: ok' "${LOG[$f]}"; do
        [ $SECONDS -lt $end ] || e2e_die "rep $rep: no bind by the new leader ($(tail -3 "${LOG[$f]}"))"
        sleep 0.02
    done
    t1=$(now_ms)
    acq=$(grep -m1 'acquired' "${LOG[$f]}" | cut -c1-20)
    echo "rep $rep: $((t1 - t0)) ms (kill -> first bind by slot $f; acquired at $acq)"
    echo $((t1 - t0)) >>"$D/times"
    kubectl delete vcjob "fo-$rep" --wait=false >/dev/null 2>&1
    start "$leader" "$rep"
    leader=$f
done
sort -n "$D/times" | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "failover (kill -9 -> first bind by the new leader), %d reps: median %d ms, max %d ms, min %d ms\n", NR, m, a[NR], a[1] }'
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
