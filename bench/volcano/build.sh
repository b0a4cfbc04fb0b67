#!/usr/bin/env bash
# Builds Volcano's scheduler and controller manager from the Go module
# volcano.sh/volcano (never from a checkout; nothing of Volcano's source is
# written into this repository) and caches them by version, for the
# side-by-side comparison in bench/throughput.sh.
# Recipe: shared/reference/control-plane.md section 4.
#
# Usage: bench/volcano/build.sh [--check]
#   --check   exit 0 when everything is cached, 1 otherwise; build nothing.
# Env:  MUSTER_VOLCANO_VERSION (default 1.14.1), MUSTER_VOLCANO_APIS_VERSION
#       (default 1.14.0: the proxy refuses volcano.sh/apis v1.14.1, and
#       v1.14.1's go.mod points apis at a local path), MUSTER_CACHE
#       (default ~/.cache/muster), GO (default: go on PATH, else /usr/local/go/bin/go).
# Cache:  $MUSTER_CACHE/volcano-v<version>/
#           bin/vc-scheduler, bin/vc-controller-manager
#           crd/volcano/*.yaml, crd/jobflow/*.yaml     (Volcano's CRDs)
#           volcano-scheduler.conf                     (the chart's scheduler conf)
#           wrapper/{go.mod,go.sum,tools.go}           (what was built)
# Prints the cache directory on stdout. Exit 0 ok, 1 failure, 2 usage.
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/e2e/lib.sh
. "$HERE/../../tests/e2e/lib.sh"

VV=${MUSTER_VOLCANO_VERSION:-1.14.1}
AV=${MUSTER_VOLCANO_APIS_VERSION:-1.14.0}
VOL_DIR=$MUSTER_CACHE/volcano-v$VV

complete() {
    [ -x "$VOL_DIR/bin/vc-scheduler" ] && [ -x "$VOL_DIR/bin/vc-controller-manager" ] &&
        [ -s "$VOL_DIR/volcano-scheduler.conf" ] && [ -d "$VOL_DIR/crd/volcano" ]
}

case "${1:-}" in
    "") ;;
    --check) complete; exit ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

if complete; then echo "$VOL_DIR"; exit 0; fi

ensure_debs jq
GO=${GO:-}
if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else e2e_die "Go not found (need Go >= 1.24)"
    fi
fi
PATH="$(dirname "$GO"):$PATH"
export PATH GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false"

mkdir -p "$MUSTER_CACHE"
exec 9>"$MUSTER_CACHE/.volcano-build.lock"
flock -w 1800 9 || e2e_die "timed out waiting for $MUSTER_CACHE/.volcano-build.lock"
if complete; then echo "$VOL_DIR"; exit 0; fi
mkdir -p "$MUSTER_CACHE/.tmp"
TMP=$(mktemp -d "$MUSTER_CACHE/.tmp/volcano-v$VV.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

t0=$(date +%s)
e2e_log "building Volcano v$VV (vc-scheduler, vc-controller-manager) with volcano.sh/apis v$AV; cold ~3 min"
info=$("$GO" mod download -json "volcano.sh/volcano@v$VV") ||
    e2e_die "cannot download volcano.sh/volcano@v$VV from the Go module proxy"
gomod=$(jq -r '.GoMod // empty' <<<"$info")
moddir=$(jq -r '.Dir // empty' <<<"$info")
[ -f "$gomod" ] && [ -d "$moddir" ] || e2e_die "no go.mod / module dir for volcano.sh/volcano@v$VV"

mkdir -p "$TMP/wrapper" "$TMP/bin" "$TMP/crd/volcano" "$TMP/crd/jobflow"
cd "$TMP/wrapper"
{
    echo "module muster.invalid/volcanobin"
    echo
    echo "go $(awk '$1 == "go" {print $2; exit}' "$gomod")"
    echo
    echo "require volcano.sh/volcano v$VV"
    echo
    echo "replace ("
    # Volcano's own replace block, minus its local volcano.sh/apis path
    awk '/^replace \($/ {on=1; next} on && /^\)$/ {on=0} on' "$gomod" |
        grep -v '^[[:space:]]*//' | grep -v 'volcano.sh/apis' | grep -v '^[[:space:]]*$'
    echo "	volcano.sh/apis => volcano.sh/apis v$AV"
    echo ")"
} >go.mod
# the main packages (not only their app/), so that the controllers they
# register with blank imports are in go.sum too
cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "volcano.sh/volcano/cmd/controller-manager"
	_ "volcano.sh/volcano/cmd/scheduler"
)
EOF
"$GO" mod tidy -e >&2 || e2e_die "go mod tidy failed (see above)"
ld="-s -w -X volcano.sh/volcano/pkg/version.Version=v$VV -X volcano.sh/volcano/pkg/version.GitSHA=module"
"$GO" build -trimpath -ldflags "$ld" -o "$TMP/bin/vc-scheduler" volcano.sh/volcano/cmd/scheduler >&2 ||
    e2e_die "go build of vc-scheduler failed (see above)"
"$GO" build -trimpath -ldflags "$ld" -o "$TMP/bin/vc-controller-manager" volcano.sh/volcano/cmd/controller-manager >&2 ||
    e2e_die "go build of vc-controller-manager failed (see above)"
cp "$moddir"/config/crd/volcano/bases/*.yaml "$TMP/crd/volcano/"
cp "$moddir"/config/crd/jobflow/bases/*.yaml "$TMP/crd/jobflow/"
cp "$moddir/installer/helm/chart/volcano/config/volcano-scheduler.conf" "$TMP/volcano-scheduler.conf"
chmod -R u+w "$TMP"
"$TMP/bin/vc-scheduler" --version >/dev/null 2>&1 || "$TMP/bin/vc-scheduler" --help >/dev/null 2>&1 ||
    e2e_die "built vc-scheduler does not run"
rm -rf "$VOL_DIR"
mv -T "$TMP" "$VOL_DIR"
trap - EXIT
e2e_log "Volcano v$VV built in $(( $(date +%s) - t0 ))s under $VOL_DIR"
echo "$VOL_DIR"
