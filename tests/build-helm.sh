#!/usr/bin/env bash
# Builds Helm from its Go module (helm.sh/helm/v3, never from a checkout)
# and caches it by version outside the checkout, for the chart's tests
# (tests/helm.sh, tests/e2e/helm.sh).
#
# Usage: tests/build-helm.sh [--check]
#   --check   exit 0 when it is cached, 1 otherwise; build nothing.
# Env:  MUSTER_HELM_VERSION (default 3.22.0), MUSTER_CACHE (default
#       ~/.cache/muster), GO (default: go on PATH, else /usr/local/go/bin/go).
# Cache:  $MUSTER_CACHE/helm-v<version>/bin/helm
# Prints the path of helm on stdout. Exit 0 ok, 1 failure, 2 usage.
set -eu -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/lib.sh
. "$HERE/e2e/lib.sh"

HV=${MUSTER_HELM_VERSION:-3.22.0}
HELM_DIR=$MUSTER_CACHE/helm-v$HV

complete() { [ -x "$HELM_DIR/bin/helm" ]; }

case "${1:-}" in
    "") ;;
    --check) complete; exit ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

if complete; then echo "$HELM_DIR/bin/helm"; exit 0; fi

GO=${GO:-}
if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else e2e_die "Go not found"
    fi
fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-buildvcs=false"

mkdir -p "$MUSTER_CACHE"
exec 9>"$MUSTER_CACHE/.helm-build.lock"
flock -w 1800 9 || e2e_die "timed out waiting for $MUSTER_CACHE/.helm-build.lock"
if complete; then echo "$HELM_DIR/bin/helm"; exit 0; fi
mkdir -p "$MUSTER_CACHE/.tmp"
TMP=$(mktemp -d "$MUSTER_CACHE/.tmp/helm-v$HV.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

t0=$(date +%s)
e2e_log "building Helm v$HV from helm.sh/helm/v3@v$HV; cold ~3 min"
GOBIN="$TMP/bin" "$GO" install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v$HV" \
    "helm.sh/helm/v3/cmd/helm@v$HV" >&2 || e2e_die "go install of helm v$HV failed (see above)"
"$TMP/bin/helm" version >/dev/null 2>&1 || e2e_die "built helm does not run"
rm -rf "$HELM_DIR"
mv -T "$TMP" "$HELM_DIR"
trap - EXIT
e2e_log "Helm v$HV built in $(( $(date +%s) - t0 ))s under $HELM_DIR"
echo "$HELM_DIR/bin/helm"
