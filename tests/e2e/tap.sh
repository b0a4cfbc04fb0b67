# shellcheck shell=bash
# Shared by the e2e TAP scenarios (sourced, not run): test points, retries,
# a control plane in a fresh run dir and muster serve on it.
#
# The sourcing script sets HERE (this directory) and MUSTER (the binary),
# then calls tap_up NAME, which starts everything or exits with a failed
# test point. Afterwards: kubectl talks to the cluster, $D is the run dir,
# $PORT muster's extender port (HTTPS, client certificates in $D/tls),
# $METRICS its /healthz /readyz /metrics port, start_muster / stop_muster
# restart it.
# Env: MUSTER_E2E_KEEP=1 keeps the run directory (path printed on stderr).

ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
MPID=""
n=0
failed=0

tap_cleanup() {
    [ -n "$MPID" ] && kill -9 "$MPID" 2>/dev/null
    "$HERE/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "${MUSTER_E2E_KEEP:-0}" = 1 ]; then
        echo "# kept $D" >&2
    else
        rm -rf "$D"
    fi
}

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
    n=$((n + 1)); failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    # every line a TAP comment, however many lines each argument has
    for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done
}

# check NAME CMD...: a test point from a command's status
check() {
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}

# equals EXPECTED CMD...: CMD's output is EXPECTED
equals() {
    local want=$1 got
    shift
    got=$("$@" 2>/dev/null)
    [ "$got" = "$want" ] || { echo "got '$got', want '$want'"; return 1; }
}

# wait_for SECONDS CMD...: retries CMD every 0.5 s until it succeeds
wait_for() {
    local limit=$1
    shift
    local end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    "$@"
}

# A port for a listener muster restarts on: below the ephemeral range
# (lib.sh pick_port). An ephemeral one can be lost while muster is down:
# kube-scheduler, retrying the extender, may connect from that very port to
# itself (a TCP self-connect) and hold it, and the restart then fails with
# "Address already in use" (seen in bench/dra-throughput.sh --backlog).
free_port() {
    pick_port
}

# muster as manifests/ runs it: the extender over mTLS on $PORT (the
# certificates cluster.sh made in $D/tls), probes and metrics on $METRICS.
# MUSTER_SERVE_ARGS: more of muster serve's flags (e.g. --config FILE).
MUSTER_TLS_ARGS=()
MUSTER_SERVE_ARGS=()
start_muster() {
    "$MUSTER" serve --kubeconfig "$MUSTER_KUBECONFIG" \
        --listen "127.0.0.1:$PORT" --metrics-listen "127.0.0.1:$METRICS" \
        "${MUSTER_TLS_ARGS[@]}" "${MUSTER_SERVE_ARGS[@]}" >>"$D/muster.log" 2>&1 &
    MPID=$!
    wait_for 30 curl -sf "http://127.0.0.1:$METRICS/readyz"
}

stop_muster() {
    [ -n "$MPID" ] && kill -9 "$MPID" 2>/dev/null
    wait "$MPID" 2>/dev/null
    MPID=""
}

# tap_up NAME: control plane, CRDs, muster's RBAC (manifests/rbac-muster.yaml,
# its bindings and nothing else: muster authenticates as the ServiceAccount
# muster-system/muster, cluster.sh), muster.
tap_up() {
    D=/tmp/muster-$1.$$
    mkdir -m 700 "$D" || { echo "1..1"; not_ok "run dir $D is new" "it exists"; exit 1; }
    PORT=$(free_port)
    METRICS=$(free_port)
    # MUSTER_E2E_SCHEME=http (a suite that tests something else through a
    # plain stand-in, leader.sh): the extender on loopback without TLS
    local scheme=${MUSTER_E2E_SCHEME:-https}
    MUSTER_TLS_ARGS=()
    [ "$scheme" = https ] && MUSTER_TLS_ARGS=(--tls-cert-file "$D/tls/muster/tls.crt"
        --tls-private-key-file "$D/tls/muster/tls.key" --client-ca-file "$D/tls/muster/ca.crt")
    trap tap_cleanup EXIT
    echo "# run dir $D" >&2
    if ! MUSTER_EXTENDER_URL="$scheme://127.0.0.1:$PORT" "$HERE/cluster.sh" up "$D" >"$D/up.log" 2>&1; then
        echo "1..1"
        not_ok "control plane starts" "$(tail -20 "$D/up.log")"
        exit 1
    fi
    eval "$("$HERE/cluster.sh" env "$D")"
    # MUSTER_E2E_NO_MUSTER=1: the control plane only (migrate.sh brings
    # another scheduler's CRDs first, and muster later)
    [ "${MUSTER_E2E_NO_MUSTER:-0}" = 1 ] && return 0
    kubectl apply -f "$ROOT/crds/" >/dev/null
    kubectl apply -f "$ROOT/manifests/namespace.yaml" -f "$ROOT/manifests/rbac-muster.yaml" >/dev/null
    if start_muster >/dev/null 2>&1; then
        ok "muster serve becomes ready with least-privilege RBAC"
    else
        not_ok "muster serve becomes ready with least-privilege RBAC" "$(tail -20 "$D/muster.log")"
    fi
}

# tap_end: the plan line and the exit status.
tap_end() {
    echo "1..$n"
    if [ "$failed" -gt 0 ]; then
        echo "# muster log tail:"
        tail -40 "$D/muster.log" | sed 's/^/# /'
        exit 1
    fi
    exit 0
}
