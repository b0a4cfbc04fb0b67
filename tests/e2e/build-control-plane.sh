#!/usr/bin/env bash
# Builds the real control plane for muster's end-to-end tests from the Go
# module proxy and caches the binaries by version outside the checkout:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok.
# Recipe: shared/reference/control-plane.md sections 1-3.
#
# Usage: tests/e2e/build-control-plane.sh [--check]
#   --check   exit 0 when every binary is cached, 1 otherwise; build nothing.
# Env:  MUSTER_CACHE (default ~/.cache/muster), GO (default: go on PATH, else
#       /usr/local/go/bin/go). A second run with everything cached does nothing.
# Prints, on stdout, one line per component: "<name> <version> <bin dir>".
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

case "${1:-}" in
    "") ;;
    --check) binaries_complete; exit ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) e2e_die "unknown argument '$1' (try --help)" ;;
esac

report() {
    echo "k8s v$MUSTER_K8S_VERSION $K8S_DIR/bin"
    echo "etcd v$MUSTER_ETCD_VERSION $ETCD_DIR/bin"
    echo "kwok v$MUSTER_KWOK_VERSION $KWOK_DIR/bin"
}

# Fast path: nothing to do, touch nothing (no apt, no go, no lock).
if binaries_complete; then report; exit 0; fi

ensure_debs openssl curl jq ca-certificates

GO=${GO:-}
if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else e2e_die "Go not found: need Go >= 1.25 on PATH or at /usr/local/go/bin/go (Debian's golang is too old)"
    fi
fi
gov=$("$GO" env GOVERSION) || e2e_die "'$GO env GOVERSION' failed"
case "$gov" in
    go1.2[5-9]*|go1.[3-9][0-9]*) ;;
    *) e2e_die "$GO is $gov; Kubernetes v$MUSTER_K8S_VERSION and etcd 3.6 need Go >= 1.25" ;;
esac
PATH="$(dirname "$GO"):$PATH"
export PATH
# Never download another toolchain; static binaries; no VCS stamping.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false"

mkdir -p "$MUSTER_CACHE" || e2e_die "cannot create cache dir $MUSTER_CACHE"
exec 9>"$MUSTER_CACHE/.build.lock"
if ! flock -n 9; then
    e2e_log "another build holds $MUSTER_CACHE/.build.lock; waiting (up to 30 min)"
    flock -w 1800 9 || e2e_die "timed out waiting for $MUSTER_CACHE/.build.lock"
fi
# We hold the lock: leftovers of interrupted builds are garbage.
rm -rf "$MUSTER_CACHE/.tmp"
mkdir -p "$MUSTER_CACHE/.tmp"
TMP=""
cleanup() { [ -z "$TMP" ] || rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# new_tmp NAME: a fresh build directory under $MUSTER_CACHE/.tmp.
new_tmp() { TMP=$(mktemp -d "$MUSTER_CACHE/.tmp/$1.XXXXXX") && chmod 755 "$TMP"; }
# publish DEST: rename the finished $TMP to DEST (atomic on one filesystem).
publish() {
    rm -rf "$1"
    mv -T "$TMP" "$1"
    TMP=""
}
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

build_k8s() {
    local K=$MUSTER_K8S_VERSION S t0 gomod m staging V C p minor out
    S=0.${K#1.}
    minor=${K#1.}; minor=${minor%%.*}
    t0=$(date +%s)
    e2e_log "building Kubernetes v$K (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl); cold: ~5 min, ~1.8 GB RAM"
    new_tmp "k8s-v$K"
    mkdir -p "$TMP/wrapper" "$TMP/bin"
    cd "$TMP/wrapper"
    "$GO" mod init muster.invalid/k8sbin >/dev/null 2>&1
    # The staging modules are the k8s.io/* requirements at v0.0.0 in
    # k8s.io/kubernetes' own go.mod; replace each with v0.<minor>.<patch>.
    gomod=$("$GO" mod download -json "k8s.io/kubernetes@v$K" | jq -r '.GoMod // empty') ||
        e2e_die "cannot download k8s.io/kubernetes@v$K from the Go module proxy"
    [ -n "$gomod" ] && [ -f "$gomod" ] || e2e_die "no go.mod for k8s.io/kubernetes@v$K"
    staging=$(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod" | sort -u)
    [ -n "$staging" ] || e2e_die "found no staging modules in $gomod"
    for m in $staging; do "$GO" mod edit "-replace=$m=$m@v$S"; done
    "$GO" mod edit "-require=k8s.io/kubernetes@v$K"
    "$GO" get -tool "k8s.io/kubernetes/cmd/kube-apiserver@v$K" \
        "k8s.io/kubernetes/cmd/kube-controller-manager@v$K" \
        "k8s.io/kubernetes/cmd/kube-scheduler@v$K" \
        "k8s.io/kubernetes/cmd/kubectl@v$K" >&2 ||
        e2e_die "go get of the Kubernetes v$K commands failed (see above)"
    V=k8s.io/component-base/version
    C=k8s.io/client-go/pkg/version
    local ld="-s -w"
    for p in $V $C; do
        ld="$ld -X $p.gitVersion=v$K -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    "$GO" build -trimpath -ldflags "$ld" -o "$TMP/bin/" \
        k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl >&2 ||
        e2e_die "go build of Kubernetes v$K failed (see above)"
    for b in $K8S_BINS; do [ -x "$TMP/bin/$b" ] || e2e_die "build produced no $b"; done
    # (no `| grep -q`: with pipefail, grep closing early fails the pipeline)
    out=$("$TMP/bin/kubectl" version --client 2>&1) || e2e_die "built kubectl does not run: $out"
    case "$out" in *"Client Version: v$K"*) ;; *) e2e_die "built kubectl reports '$out', not v$K" ;; esac
    cd /
    publish "$K8S_DIR"
    e2e_log "Kubernetes v$K built in $(elapsed "$t0")"
}

build_etcd() {
    local E=$MUSTER_ETCD_VERSION t0 out
    t0=$(date +%s)
    e2e_log "building etcd v$E; cold: ~1 min"
    new_tmp "etcd-v$E"
    mkdir -p "$TMP/wrapper" "$TMP/bin"
    cd "$TMP/wrapper"
    # go.etcd.io/etcd/server/v3 is itself the main package; its go.mod has
    # local replaces, so it is built from a wrapper module, apart from k8s.
    "$GO" mod init muster.invalid/etcdbin >/dev/null 2>&1
    "$GO" get -tool "go.etcd.io/etcd/server/v3@v$E" >&2 ||
        e2e_die "go get go.etcd.io/etcd/server/v3@v$E failed (see above)"
    "$GO" build -trimpath -ldflags "-s -w" -o "$TMP/bin/etcd" go.etcd.io/etcd/server/v3 >&2 ||
        e2e_die "go build of etcd v$E failed (see above)"
    out=$("$TMP/bin/etcd" --version 2>&1) || e2e_die "built etcd does not run: $out"
    case "$out" in *"etcd Version: $E"*) ;; *) e2e_die "built etcd reports '$out', not $E" ;; esac
    cd /
    publish "$ETCD_DIR"
    e2e_log "etcd v$E built in $(elapsed "$t0")"
}

build_kwok() {
    local W=$MUSTER_KWOK_VERSION t0 mod f
    t0=$(date +%s)
    e2e_log "building kwok v$W; cold: ~1.5 min"
    new_tmp "kwok-v$W"
    mkdir -p "$TMP/bin" "$TMP/stages"
    GOBIN="$TMP/bin" "$GO" install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v$W" >&2 ||
        e2e_die "go install sigs.k8s.io/kwok/cmd/kwok@v$W failed (see above)"
    [ -x "$TMP/bin/kwok" ] || e2e_die "go install produced no kwok"
    # The stock Stage files ship in the module zip; keep a copy beside the binary.
    mod=$("$GO" mod download -json "sigs.k8s.io/kwok@v$W" | jq -r '.Dir // empty')
    [ -n "$mod" ] && [ -d "$mod/kustomize/stage" ] || e2e_die "kwok module dir has no kustomize/stage"
    for f in $KWOK_STAGE_FILES; do
        [ -s "$mod/kustomize/stage/$f" ] || e2e_die "kwok v$W has no kustomize/stage/$f"
        mkdir -p "$TMP/stages/$(dirname "$f")"
        cp "$mod/kustomize/stage/$f" "$TMP/stages/$f"
    done
    publish "$KWOK_DIR"
    e2e_log "kwok v$W built in $(elapsed "$t0")"
}

T0=$(date +%s)
etcd_complete || build_etcd
kwok_complete || build_kwok
k8s_complete || build_k8s
binaries_complete || e2e_die "internal: binaries still incomplete after the build"
e2e_log "control plane ready in $(elapsed "$T0") under $MUSTER_CACHE"
report
