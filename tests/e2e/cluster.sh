#!/usr/bin/env bash
# A real local control plane on loopback for muster's end-to-end tests:
# etcd, kube-apiserver, kube-controller-manager, the stock kube-scheduler
# (default-scheduler), kwok (simulated nodes; Stages make bound pods Running)
# and, when MUSTER_EXTENDER_URL is set, muster's kube-scheduler (one profile,
# `volcano`, with muster as its extender, rendered from manifests/scheduler-config.yaml).
#
# Usage: tests/e2e/cluster.sh up DIR       start everything; DIR is the run dir
#        tests/e2e/cluster.sh down DIR     stop what `up` started (safe twice)
#        tests/e2e/cluster.sh env DIR      print `export KUBECONFIG=... PATH=...`
#        tests/e2e/cluster.sh status DIR   list components and whether they run
#        tests/e2e/cluster.sh restart-apiserver DIR   stop and start kube-apiserver
#        tests/e2e/cluster.sh stop-component DIR NAME  stop one component
#        tests/e2e/cluster.sh start-component DIR NAME start it again, same
#                                        command line (e.g. kube-scheduler-volcano)
#
# Env (all optional):
#   MUSTER_EXTENDER_URL   start muster's kube-scheduler with this extender URL
#                         (e.g. https://127.0.0.1:8888); muster may start later.
#                         https: mTLS with certificates in DIR/tls (made by
#                         manifests/tls/openssl.sh unless there); http: none
#   MUSTER_ETCD_PORT, MUSTER_ETCD_PEER_PORT, MUSTER_APISERVER_PORT,
#   MUSTER_KCM_PORT, MUSTER_SCHED_PORT, MUSTER_VOLCANO_SCHED_PORT,
#   MUSTER_KWOK_PORT      fixed loopback ports (default: free ones picked at start)
#   MUSTER_E2E_TIMEOUT    seconds to wait for each component (default 60)
#   MUSTER_E2E_V          log verbosity of the Kubernetes components (default 2)
#   MUSTER_KWOK_LEASE_SECONDS  node Lease duration kwok maintains (default 40;
#                         0 = no Leases, nodes then go NotReady after ~40 s)
#   MUSTER_APISERVER_AUDIT_LOG  kube-apiserver writes an audit line (JSON)
#                         for every create of pods/binding to this file: when
#                         each pod was bound, on the apiserver's clock (the
#                         benchmarks' gang span), whatever a watcher sees
#   MUSTER_NO_BUILD=1     fail instead of building missing binaries
#   MUSTER_CACHE          binary cache (default ~/.cache/muster)
# Exit: 0 ok; 1 failure (with the relevant log tails on stderr); 2 usage.
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

usage() { sed -n '8,16p' "$0" >&2; exit 2; }

CMD=${1:-}
case "$CMD" in
    stop-component|start-component) [ $# -eq 3 ] || usage; NAME=$3 ;;
    *) [ $# -eq 2 ] || usage ;;
esac
D=$2
[ -n "$D" ] || usage
case "$D" in /*) ;; *) D=$(pwd)/$D ;; esac
case "$D" in *[[:space:]\'\"\\\$]*) e2e_die "run dir '$D' must not contain spaces, quotes, '\\' or '\$'" ;; esac

TIMEOUT=${MUSTER_E2E_TIMEOUT:-60}
VLOG=${MUSTER_E2E_V:-2}

# ------------------------------------------------------------------ helpers --

# Start NAME BINARY ARGS...: a background process logging to $D/logs/NAME.log.
# The pid file holds "pid binary" so that `down` only kills what it started.
# The command line is kept in $D/pids/NAME.cmd for `restart-apiserver`.
start() {
    local name=$1 bin=$2
    shift 2
    e2e_log "starting $name"
    "$bin" "$@" >>"$D/logs/$name.log" 2>&1 </dev/null &
    local pid=$! i=0 exe
    echo "$pid $bin" >"$D/pids/$name.pid"
    # until it execs "$bin" the child is a copy of this shell, and running()
    # would take it for some other process ("exited while waiting", with an
    # empty log): wait for the exec, or for the child to end (5 s at most)
    while [ "$i" -lt 100 ] && [ -d "/proc/$pid" ]; do
        exe=""
        { IFS= read -r -d '' exe <"/proc/$pid/cmdline"; } 2>/dev/null || true
        [ "$exe" = "$bin" ] && break
        sleep 0.05
        i=$((i + 1))
    done
    printf '%s\0' "$bin" "$@" >"$D/pids/$name.cmd"
    grep -qx "$name" "$D/pids/order" 2>/dev/null || echo "$name" >>"$D/pids/order"
}

# Is component NAME (still) our running process?
running() {
    local f=$D/pids/$1.pid pid bin exe
    [ -s "$f" ] || return 1
    read -r pid bin <"$f"
    [ -d "/proc/$pid" ] || return 1
    exe=""
    { IFS= read -r -d '' exe <"/proc/$pid/cmdline"; } 2>/dev/null || [ -n "$exe" ] || return 1
    [ "$exe" = "$bin" ]
}

# stop_one NAME [GRACE_SECONDS]: SIGTERM, then SIGKILL after GRACE (10) s.
stop_one() {
    local name=$1 grace=${2:-10} pid bin
    running "$name" || { rm -f "$D/pids/$name.pid"; return 0; }
    read -r pid bin <"$D/pids/$name.pid"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $(( grace * 10 ))); do
        running "$name" || break
        sleep 0.1
    done
    if running "$name"; then
        e2e_log "$name (pid $pid) still running ${grace} s after SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
    fi
    rm -f "$D/pids/$name.pid"
}

do_down() {
    local name
    [ -f "$D/pids/order" ] || return 0
    # reverse start order: clients first, etcd last
    for name in $(tac "$D/pids/order"); do stop_one "$name"; done
    rm -f "$D/pids/order"
}

FAILED_COMPONENTS=""
fail() {
    e2e_log "cluster up failed: $*"
    # shellcheck disable=SC2086
    log_tails "$D" ${FAILED_COMPONENTS:-etcd kube-apiserver kube-controller-manager kube-scheduler kube-scheduler-volcano kwok}
    do_down
    e2e_die "$*"
}

# wait_for NAME DESCRIPTION COMMAND...: poll until COMMAND succeeds, NAME dies,
# or $TIMEOUT seconds pass.
wait_for() {
    local name=$1 what=$2 deadline
    shift 2
    deadline=$(( $(date +%s) + TIMEOUT ))
    until "$@" >/dev/null 2>&1; do
        if ! running "$name"; then
            FAILED_COMPONENTS=$name
            fail "$name exited while waiting for $what (log: $D/logs/$name.log)"
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            FAILED_COMPONENTS=$name
            fail "timed out after ${TIMEOUT}s waiting for $what (log: $D/logs/$name.log)"
        fi
        sleep 0.25
    done
    e2e_log "$name ready ($what)"
}

etcd_healthy() {
    case "$(curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health")" in
        *'"health":"true"'*) return 0 ;;
    esac
    return 1
}
# https_ok URL [TOKEN]: GET returns exactly "ok" (TLS verified against our CA
# for the apiserver; the components' self-signed serving certs are not).
apiserver_ready() {
    [ "$(curl -sS --max-time 3 --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
        "https://127.0.0.1:$APISERVER_PORT/readyz")" = ok ]
}
healthz_ok() { [ "$(curl -ksS --max-time 3 "https://127.0.0.1:$1/healthz")" = ok ]; }
kwok_ok() { [ "$(curl -sS --max-time 3 "http://127.0.0.1:$KWOK_PORT/healthz")" = ok ]; }

port_opt() { # port_opt OUT ENVVAR: OUT=$ENVVAR if set (and free), else a free port
    local v=${!2:-}
    if [ -n "$v" ]; then
        case "$v" in *[!0-9]*|"") e2e_die "$2='$v' is not a port number" ;; esac
        case " $PICKED " in *" $v "*) e2e_die "$2=$v: port given twice" ;; esac
        port_free "$v" || e2e_die "$2=$v: port 127.0.0.1:$v is already in use"
        PICKED="$PICKED $v"
    else
        v=$(pick_port)
        PICKED="$PICKED $v"
    fi
    printf -v "$1" '%s' "$v"
}

# Escape a value for the right-hand side of a sed s||| command.
sed_rhs() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }

kubeconfig() { # kubeconfig FILE USER TOKEN
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $D/pki/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
EOF
}

gen_pki() {
    local p=$D/pki
    mkdir -p "$p"
    (
        set -e
        cd "$p"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
            -subj "/CN=muster-e2e-ca" -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign"
        openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
            -subj "/CN=kube-apiserver"
        printf '%s\n' "basicConstraints=CA:FALSE" \
            "keyUsage=critical,digitalSignature,keyEncipherment" \
            "extendedKeyUsage=serverAuth" \
            "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" \
            >apiserver.ext
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -out apiserver.crt -days 30 -extfile apiserver.ext
        openssl genrsa -out sa.key 2048
        openssl rsa -in sa.key -pubout -out sa.pub
    ) >"$D/logs/pki.log" 2>&1 || { cat "$D/logs/pki.log" >&2; e2e_die "openssl failed (log: $D/logs/pki.log)"; }
    chmod 600 "$p"/*.key
}

# kwok's stock Stages, joined as separate YAML documents (a plain cat merges
# them into one broken document and kwok silently falls back to defaults).
# pod-complete is left out on purpose (it completes any pod owned by a kind
# named Job, i.e. whole vcjob gangs at once).
gen_kwok_config() {
    local f first=1
    {
        for f in $KWOK_STAGE_FILES; do
            [ $first = 1 ] || echo "---"
            first=0
            sed -e '/^---[[:space:]]*$/d' "$KWOK_DIR/stages/$f"
        done
    } >"$D/kwok-stages.yaml"
}

# -------------------------------------------------------------------- up ----

do_up() {
    local name
    if [ -f "$D/pids/order" ]; then
        for name in $(cat "$D/pids/order"); do
            running "$name" && e2e_die "$D already has a running cluster ($name); run: $0 down $D"
        done
        do_down
    fi
    if ! binaries_complete; then
        [ "${MUSTER_NO_BUILD:-0}" = 1 ] && e2e_die "control-plane binaries missing under $MUSTER_CACHE; run $HERE/build-control-plane.sh"
        "$HERE/build-control-plane.sh" >&2 || e2e_die "build-control-plane.sh failed"
    fi
    ensure_debs openssl curl jq
    rm -rf "$D/etcd" "$D/logs" "$D/pids"
    mkdir -p "$D/logs" "$D/pids"

    # fixed ports first, so that picked ones avoid them
    local v
    for v in ETCD ETCD_PEER APISERVER KCM SCHED VOLCANO_SCHED KWOK; do
        eval "[ -z \"\${MUSTER_${v}_PORT:-}\" ] || port_opt ${v}_PORT MUSTER_${v}_PORT"
    done
    for v in ETCD ETCD_PEER APISERVER KCM SCHED VOLCANO_SCHED KWOK; do
        eval "[ -n \"\${MUSTER_${v}_PORT:-}\" ] || port_opt ${v}_PORT MUSTER_${v}_PORT"
    done

    gen_pki
    ADMIN_TOKEN=$(openssl rand -hex 16)
    MUSTER_TOKEN=$(openssl rand -hex 16)
    SCHED_TOKEN=$(openssl rand -hex 16)
    {
        echo "$ADMIN_TOKEN,admin,1,\"system:masters\""
        # muster authenticates as its ServiceAccount, so the manifests'
        # own bindings (rbac-muster.yaml) are all it has
        echo "$MUSTER_TOKEN,system:serviceaccount:muster-system:muster,2,\"system:serviceaccounts,system:serviceaccounts:muster-system\""
        echo "$SCHED_TOKEN,system:kube-scheduler,3"
    } >"$D/pki/tokens.csv"
    chmod 600 "$D/pki/tokens.csv"
    kubeconfig "$D/admin.kubeconfig" admin "$ADMIN_TOKEN"
    kubeconfig "$D/muster.kubeconfig" muster "$MUSTER_TOKEN"
    kubeconfig "$D/scheduler.kubeconfig" system:kube-scheduler "$SCHED_TOKEN"

    local K=$K8S_DIR/bin
    cat >"$D/cluster.env" <<EOF
# written by tests/e2e/cluster.sh up; sourced by \`cluster.sh env\`
RUN_DIR='$D'
KUBECONFIG='$D/admin.kubeconfig'
MUSTER_KUBECONFIG='$D/muster.kubeconfig'
APISERVER_URL='https://127.0.0.1:$APISERVER_PORT'
APISERVER_PORT=$APISERVER_PORT
ETCD_URL='http://127.0.0.1:$ETCD_PORT'
ETCD_PORT=$ETCD_PORT
KCM_PORT=$KCM_PORT
SCHED_PORT=$SCHED_PORT
VOLCANO_SCHED_PORT=$VOLCANO_SCHED_PORT
KWOK_PORT=$KWOK_PORT
BIN_PATH='$K:$ETCD_DIR/bin:$KWOK_DIR/bin'
K8S_VERSION=v$MUSTER_K8S_VERSION
ETCD_VERSION=v$MUSTER_ETCD_VERSION
KWOK_VERSION=v$MUSTER_KWOK_VERSION
EXTENDER_URL='${MUSTER_EXTENDER_URL:-}'
EOF

    # 1. etcd
    start etcd "$ETCD_DIR/bin/etcd" --name=default --data-dir="$D/etcd" \
        --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster="default=http://127.0.0.1:$ETCD_PEER_PORT" \
        --unsafe-no-fsync=true --log-level=warn
    wait_for etcd "http://127.0.0.1:$ETCD_PORT/health" etcd_healthy

    # MUSTER_FEATURE_GATES (e.g. DRAExtendedResource=true): --feature-gates
    # for kube-apiserver and both kube-schedulers
    local gates=()
    [ -n "${MUSTER_FEATURE_GATES:-}" ] && gates=(--feature-gates="$MUSTER_FEATURE_GATES")

    # MUSTER_APISERVER_AUDIT_LOG: the binds only, at level Metadata, written
    # as each request completes (blocking: in the request's own goroutine),
    # in one file: a maxsize of 0 would mean 100 MB and a rotation at about
    # 115,000 binds, which the bench's reader would not follow
    local audit=()
    if [ -n "${MUSTER_APISERVER_AUDIT_LOG:-}" ]; then
        cat >"$D/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: None
YAML
        audit=(--audit-policy-file="$D/audit-policy.yaml"
            --audit-log-path="$MUSTER_APISERVER_AUDIT_LOG"
            --audit-log-format=json --audit-log-mode=blocking
            --audit-log-maxsize=1048576)
    fi

    # 2. kube-apiserver (TaintNodesByCondition and ServiceAccount admission off:
    #    there is no kubelet and no token controller in the pod path)
    start kube-apiserver "$K/kube-apiserver" \
        --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
        --tls-cert-file="$D/pki/apiserver.crt" --tls-private-key-file="$D/pki/apiserver.key" \
        --service-account-issuer=https://kubernetes.default.svc \
        --service-account-key-file="$D/pki/sa.pub" \
        --service-account-signing-key-file="$D/pki/sa.key" \
        --service-cluster-ip-range=10.0.0.0/24 \
        --token-auth-file="$D/pki/tokens.csv" --authorization-mode=RBAC \
        --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
        --endpoint-reconciler-type=none --allow-privileged=true \
        --max-requests-inflight=0 --max-mutating-requests-inflight=0 \
        --enable-priority-and-fairness=false "${gates[@]}" "${audit[@]}" -v="$VLOG"
    wait_for kube-apiserver "https://127.0.0.1:$APISERVER_PORT/readyz" apiserver_ready

    # shellcheck disable=SC2054
    local authn=(--bind-address=127.0.0.1
        --authentication-kubeconfig="$D/admin.kubeconfig"
        --authorization-kubeconfig="$D/admin.kubeconfig"
        --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics)

    # 3. kube-controller-manager (Deployments, ReplicaSets, GC, namespaces)
    start kube-controller-manager "$K/kube-controller-manager" \
        --kubeconfig="$D/admin.kubeconfig" --leader-elect=false --controllers='*' \
        --service-account-private-key-file="$D/pki/sa.key" \
        --use-service-account-credentials=false --root-ca-file="$D/pki/ca.crt" \
        --cluster-signing-cert-file="$D/pki/ca.crt" --cluster-signing-key-file="$D/pki/ca.key" \
        --kube-api-qps=1000 --kube-api-burst=1000 \
        --secure-port="$KCM_PORT" "${authn[@]}" -v="$VLOG"

    # 4. kwok, managing nodes annotated kwok.x-k8s.io/node=fake
    gen_kwok_config
    # --node-lease-duration-seconds: the kwok binary defaults to 0 (no node
    # Leases; only kwokctl passes 40), and the heartbeat-with-lease stage then
    # refreshes node status only every 10-20 min, so kube-controller-manager
    # would mark the nodes NotReady and taint them after 40 s.
    start kwok "$KWOK_DIR/bin/kwok" --kubeconfig="$D/admin.kubeconfig" \
        --config="$D/kwok-stages.yaml" \
        --manage-all-nodes=false \
        --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
        --cidr=10.244.0.1/16 --node-ip=127.0.0.1 --node-lease-duration-seconds="${MUSTER_KWOK_LEASE_SECONDS:-40}" \
        --server-address="127.0.0.1:$KWOK_PORT" -v=INFO

    # 5. the stock kube-scheduler: default-scheduler
    cat >"$D/scheduler-default.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "$D/scheduler.kubeconfig"
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
EOF
    start kube-scheduler "$K/kube-scheduler" --config="$D/scheduler-default.yaml" \
        --secure-port="$SCHED_PORT" "${authn[@]}" "${gates[@]}" -v="$VLOG"

    # 6. muster's kube-scheduler: profile `volcano`, muster as extender
    if [ -n "${MUSTER_EXTENDER_URL:-}" ]; then
        # The one KubeSchedulerConfiguration manifests/ ships, pointed at
        # the local addresses (DESIGN.md: the single source of truth); an
        # https URL gets certificates from manifests/tls/openssl.sh.
        case "$MUSTER_EXTENDER_URL" in
        https://*) [ -s "$D/tls/kube-scheduler/tls.crt" ] ||
            "$HERE/../../manifests/tls/openssl.sh" "$D/tls" IP:127.0.0.1 >/dev/null ||
            e2e_die "manifests/tls/openssl.sh $D/tls failed" ;;
        esac
        e2e_scheduler_config "$MUSTER_EXTENDER_URL" "$D/scheduler.kubeconfig" "$D/tls" \
            "$D/scheduler-volcano.yaml"
        start kube-scheduler-volcano "$K/kube-scheduler" --config="$D/scheduler-volcano.yaml" \
            --secure-port="$VOLCANO_SCHED_PORT" "${authn[@]}" "${gates[@]}" -v="$VLOG"
    fi

    wait_for kube-controller-manager "https://127.0.0.1:$KCM_PORT/healthz" healthz_ok "$KCM_PORT"
    wait_for kwok "http://127.0.0.1:$KWOK_PORT/healthz" kwok_ok
    wait_for kube-scheduler "https://127.0.0.1:$SCHED_PORT/healthz" healthz_ok "$SCHED_PORT"
    if [ -n "${MUSTER_EXTENDER_URL:-}" ]; then
        wait_for kube-scheduler-volcano "https://127.0.0.1:$VOLCANO_SCHED_PORT/healthz" \
            healthz_ok "$VOLCANO_SCHED_PORT"
    fi
    # kube-controller-manager's service account controller is running once
    # the `default` ServiceAccount exists.
    wait_for kube-controller-manager "serviceaccount default/default" \
        "$K/kubectl" --kubeconfig="$D/admin.kubeconfig" get serviceaccount default -n default
    e2e_log "cluster up: KUBECONFIG=$D/admin.kubeconfig (eval \"\$($0 env $D)\")"
}

# ------------------------------------------------------------------- env ----

do_env() {
    [ -f "$D/cluster.env" ] || e2e_die "$D/cluster.env not found: run '$0 up $D' first"
    # shellcheck disable=SC1091
    . "$D/cluster.env"
    printf "export KUBECONFIG='%s'\n" "$KUBECONFIG"
    printf "export MUSTER_KUBECONFIG='%s'\n" "$MUSTER_KUBECONFIG"
    printf "export MUSTER_APISERVER_URL='%s'\n" "$APISERVER_URL"
    printf "export MUSTER_RUN_DIR='%s'\n" "$RUN_DIR"
    printf "export PATH='%s':\"\$PATH\"\n" "$BIN_PATH"
}

do_status() {
    local name rc=0
    [ -f "$D/pids/order" ] || { echo "no cluster started in $D"; return 1; }
    for name in $(cat "$D/pids/order"); do
        if running "$name"; then echo "$name running (pid $(cut -d' ' -f1 "$D/pids/$name.pid"))"
        else echo "$name NOT running"; rc=1
        fi
    done
    return $rc
}

# Stop kube-apiserver and start it again with the same command line and port
# (etcd keeps the data): for tests of watch and reconnect handling.
do_restart_apiserver() {
    local args
    [ -f "$D/cluster.env" ] && [ -f "$D/pids/kube-apiserver.cmd" ] ||
        e2e_die "no cluster started in $D"
    running kube-apiserver || e2e_die "kube-apiserver in $D is not running"
    # shellcheck disable=SC1091
    . "$D/cluster.env"
    ADMIN_TOKEN=$(awk -F, '$2 == "admin" {print $1}' "$D/pki/tokens.csv")
    mapfile -d '' args <"$D/pids/kube-apiserver.cmd"
    e2e_log "stopping kube-apiserver"
    # with clients connected it stops listening at once but may take 10+ s
    # to exit; do not wait that long
    stop_one kube-apiserver 3
    local deadline=$(( $(date +%s) + 20 ))
    until port_free "$APISERVER_PORT"; do
        [ "$(date +%s)" -lt "$deadline" ] || e2e_die "port $APISERVER_PORT still busy 20 s after stopping kube-apiserver"
        sleep 0.2
    done
    echo "----- restart at $(date -u +%FT%TZ) -----" >>"$D/logs/kube-apiserver.log"
    start kube-apiserver "${args[@]}"
    FAILED_COMPONENTS=kube-apiserver
    wait_for kube-apiserver "https://127.0.0.1:$APISERVER_PORT/readyz" apiserver_ready
}

# stop-component / start-component NAME: one component of `up`, e.g.
# muster's kube-scheduler while another scheduler owns `volcano` pods.
do_stop_component() {
    [ -f "$D/pids/$NAME.cmd" ] || e2e_die "no component $NAME started in $D"
    stop_one "$NAME"
}

do_start_component() {
    local args
    [ -f "$D/pids/$NAME.cmd" ] || e2e_die "no component $NAME started in $D"
    running "$NAME" && return 0
    mapfile -d '' args <"$D/pids/$NAME.cmd"
    echo "----- started again at $(date -u +%FT%TZ) -----" >>"$D/logs/$NAME.log"
    start "$NAME" "${args[@]}"
    sleep 0.5
    running "$NAME" || { log_tails "$D" "$NAME"; e2e_die "$NAME exited at once"; }
}

case "$CMD" in
    up) do_up ;;
    stop-component) do_stop_component ;;
    start-component) do_start_component ;;
    restart-apiserver) do_restart_apiserver ;;
    down) do_down; e2e_log "cluster in $D stopped" ;;
    env) do_env ;;
    status) do_status ;;
    *) usage ;;
esac
