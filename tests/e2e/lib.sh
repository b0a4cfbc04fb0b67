# shellcheck shell=bash
# Shared by the e2e scripts (sourced, not run): pinned versions, the binary
# cache layout, and small helpers. See README.md in this directory.

# ---- pinned versions (override with the environment only for experiments) --
# k8s.io/kubernetes v1.35.4 with every staging module replaced by v0.35.4
# (reference/control-plane.md section 1); etcd from go.etcd.io/etcd/server/v3;
# kwok from sigs.k8s.io/kwok (go install).
MUSTER_K8S_VERSION=${MUSTER_K8S_VERSION:-1.35.4}
MUSTER_ETCD_VERSION=${MUSTER_ETCD_VERSION:-3.6.14}
MUSTER_KWOK_VERSION=${MUSTER_KWOK_VERSION:-0.7.0}

# ---- cache layout, outside the checkout ------------------------------------
#   $MUSTER_CACHE/k8s-v<k8s>/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,kubectl}
#   $MUSTER_CACHE/k8s-v<k8s>/wrapper/{go.mod,go.sum}     (what was built, for the record)
#   $MUSTER_CACHE/etcd-v<etcd>/bin/etcd  (+ wrapper/)
#   $MUSTER_CACHE/kwok-v<kwok>/bin/kwok  (+ stages/*.yaml, kwok's stock Stage files)
# A version directory only ever appears complete: it is built under
# $MUSTER_CACHE/.tmp and renamed into place at the end.
MUSTER_CACHE=${MUSTER_CACHE:-${HOME:-/root}/.cache/muster}
K8S_DIR=$MUSTER_CACHE/k8s-v$MUSTER_K8S_VERSION
ETCD_DIR=$MUSTER_CACHE/etcd-v$MUSTER_ETCD_VERSION
KWOK_DIR=$MUSTER_CACHE/kwok-v$MUSTER_KWOK_VERSION
K8S_BINS="kube-apiserver kube-controller-manager kube-scheduler kubectl"
# kwok stock stages, relative to the kwok module root (and to $KWOK_DIR/stages)
KWOK_STAGE_FILES="node/fast/node-initialize.yaml
node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
pod/fast/pod-ready.yaml
pod/fast/pod-delete.yaml"

e2e_log() { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*" >&2; }
e2e_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

k8s_complete() {
    local b
    for b in $K8S_BINS; do [ -x "$K8S_DIR/bin/$b" ] || return 1; done
}
etcd_complete() { [ -x "$ETCD_DIR/bin/etcd" ]; }
kwok_complete() {
    local f
    [ -x "$KWOK_DIR/bin/kwok" ] || return 1
    for f in $KWOK_STAGE_FILES; do [ -s "$KWOK_DIR/stages/$f" ] || return 1; done
}
binaries_complete() { k8s_complete && etcd_complete && kwok_complete; }

# Debian packages: install the missing ones (apt-get update first).
ensure_debs() {
    local missing="" p sudo=""
    for p in "$@"; do
        case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" in
            *"ok installed"*) ;;
            *) missing="$missing $p" ;;
        esac
    done
    [ -z "$missing" ] && return 0
    [ "$(id -u)" = 0 ] || sudo=sudo
    e2e_log "installing Debian packages:$missing"
    $sudo apt-get update -qq >&2 || e2e_die "apt-get update failed"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2 ||
        e2e_die "apt-get install$missing failed"
}

# True when nothing accepts TCP connections on 127.0.0.1:$1.
port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A free loopback port below the Linux ephemeral range (32768-60999), so it
# does not collide with client sockets; not in $PICKED (space separated).
PICKED=""
pick_port() {
    local p
    for _ in $(seq 1 200); do
        p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
        case " $PICKED " in *" $p "*) continue ;; esac
        if port_free "$p"; then PICKED="$PICKED $p"; echo "$p"; return 0; fi
    done
    e2e_die "no free loopback port found in 20000-31999"
}

# Last lines of each named log in run dir $1.
log_tails() {
    local dir=$1 n=${LOG_TAIL_LINES:-25} f
    shift
    for f in "$@"; do
        [ -f "$dir/logs/$f.log" ] || continue
        printf -- '----- tail -%s %s -----\n' "$n" "$dir/logs/$f.log" >&2
        tail -n "$n" "$dir/logs/$f.log" >&2
    done
}

# e2e_scheduler_config URL KUBECONFIG TLSDIR OUT: manifests/scheduler-config.yaml
# (the one KubeSchedulerConfiguration manifests/ ships, DESIGN.md) for a local
# cluster: urlPrefix URL, the given kubeconfig, no leader election. An https
# URL keeps the extender's mTLS with kube-scheduler's client certificate from
# TLSDIR/kube-scheduler (manifests/tls/openssl.sh TLSDIR makes it); an http
# URL drops the TLS settings (muster then listens on loopback only).
e2e_scheduler_config() {
    local url=$1 kc=$2 tls=$3 out=$4 src drop=""
    src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/manifests/scheduler-config.yaml"
    [ -f "$src" ] || e2e_die "missing $src"
    case "$url" in
    https://*) [ -s "$tls/kube-scheduler/tls.crt" ] || e2e_die "no client certificate in $tls/kube-scheduler" ;;
    *) drop='/^ *enableHTTPS: true/d; /^ *tlsConfig: /d' ;;
    esac
    rhs() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
    sed -e "$drop" \
        -e "s|https://muster.muster-system.svc:8888|$(rhs "$url")|" \
        -e "s|/etc/muster-tls/|$(rhs "$tls/kube-scheduler/")|g" \
        -e "s|kubeconfig: \"\"|kubeconfig: \"$(rhs "$kc")\"|" \
        -e "s|leaderElect: true|leaderElect: false|" \
        "$src" >"$out"
    grep -qF "urlPrefix: $url" "$out" && grep -qF "$kc" "$out" ||
        e2e_die "could not render $src into $out"
    case "$url" in
    https://*) grep -q 'enableHTTPS: true' "$out" || e2e_die "no enableHTTPS in $out" ;;
    *) ! grep -q 'enableHTTPS\|tlsConfig\|/etc/muster-tls' "$out" || e2e_die "TLS left in $out" ;;
    esac
}

# gpu_vcjob KIND NAME QUEUE PODS: the YAML of a vcjob of PODS one-GPU pods
# in QUEUE, all of them a gang; KIND plain asks nvidia.com/gpu: 1 (the
# device plugin), claim a device through a claim from the
# ResourceClaimTemplate one-gpu (DRA: dra.sh, dra-extended.sh,
# bench/dra-throughput.sh).
gpu_vcjob() {
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $2}
spec:
  minAvailable: $4
  schedulerName: volcano
  queue: $3
  tasks:
  - name: w
    replicas: $4
    template:
      spec:
YAML
    if [ "$1" = claim ]; then
        cat <<YAML
        resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
        containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {requests: {cpu: "1"}, claims: [{name: gpu}]}
YAML
    else
        cat <<YAML
        containers:
        - name: train
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {limits: {nvidia.com/gpu: 1, cpu: "1"}}
YAML
    fi
}

# A component that tests/e2e/cluster.sh started in $D: stopped by its pid
# file ("pid binary"), checked against /proc first.
stop_cluster_component() {
    local f=$D/pids/$1.pid pid bin exe=""
    [ -s "$f" ] || return 0
    read -r pid bin <"$f"
    { IFS= read -r -d '' exe <"/proc/$pid/cmdline"; } 2>/dev/null
    if [ "$exe" = "$bin" ]; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$f"
}
