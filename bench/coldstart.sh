#!/usr/bin/env bash
# Cold start of `muster serve` on a cluster that already holds a backlog
# (issue 15, item 2), side by side in one run: one local control plane
# (tests/e2e/cluster.sh; kube-controller-manager and kube-scheduler off, so
# nothing changes the objects between starts), NODES kwok nodes x 8 GPUs and
# GROUPS PodGroups x SIZE pending pods made once; then, ROUNDS times, each
# contender in turn is started, timed to its "caches synced" line and to
# /readyz 200, its peak RSS sampled, and stopped. Between contenders the
# apiserver's own floor is timed: the same pods LISTed in pages of 500 by a
# plain client that only reads the bytes (bench/coldstart.sh floor).
#
# A contender is NAME=COMMAND, a muster binary with serve flags, e.g.
#   base=/tmp/mu-old  pages=build-rel/src/muster
#   watch="build-rel/src/muster --initial-list watch"
#
# Usage: bench/coldstart.sh [--nodes N] [--groups G] [--size S] [--rounds R]
#            [--keep] NAME=COMMAND...
#   --nodes N    kwok nodes (default 5000)
#   --groups G   PodGroups (default 5000)
#   --size S     pending pods per PodGroup (default 8)
#   --rounds R   starts of each contender (default 2), alternated
#   --keep       keep the run directory
# Output: one line per start, then a Markdown table of medians (stdout).
# Exit: 0, or 1 when the cluster or the objects could not be made or a
#       contender never synced.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
E2E=$ROOT/tests/e2e
NODES=5000 NGROUPS=5000 SIZE=8 ROUNDS=2 KEEP=0
CONT=()

usage() { sed -n '/^# Usage:/,/^# Exit:/p' "$0" >&2; exit 2; }
num() { case "$2" in ''|*[!0-9]*) echo "$1: '$2' is not a number" >&2; usage ;; esac; }
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) num "$1" "${2:-}"; NODES=$2; shift 2 ;;
        --groups) num "$1" "${2:-}"; NGROUPS=$2; shift 2 ;;
        --size) num "$1" "${2:-}"; SIZE=$2; shift 2 ;;
        --rounds) num "$1" "${2:-}"; ROUNDS=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,/^# Exit:/p' "$0"; exit 0 ;;
        *=*) CONT+=("$1"); shift ;;
        *) echo "unknown argument '$1'" >&2; usage ;;
    esac
done
[ ${#CONT[@]} -gt 0 ] || { echo "name at least one contender NAME=COMMAND" >&2; usage; }

# shellcheck source=../tests/e2e/lib.sh
. "$E2E/lib.sh"
D=$(mktemp -d /tmp/bench-coldstart.XXXXXX)
R=$D/results
mkdir -p "$R"
log() { echo "[$(date +%T)] $*" >&2; }
cleanup() {
    [ -f "$D/muster.pid" ] && kill -9 "$(cat "$D/muster.pid")" 2>/dev/null
    "$E2E/cluster.sh" down "$D" >/dev/null 2>&1
    if [ "$KEEP" = 1 ]; then echo "run dir kept: $D" >&2; else rm -rf "$D"; fi
}
trap cleanup EXIT INT TERM

"$E2E/build-control-plane.sh" --check || "$E2E/build-control-plane.sh" >&2 ||
    e2e_die "control plane build failed"
PY=$(command -v python3) || e2e_die "python3 not found"
# the bench's client (its concurrent creates) is bench/throughput.sh's own
sed -n '/^cat >"\$D\/bench.py" <<.PYEOF.$/,/^PYEOF$/p' "$HERE/throughput.sh" | sed '1d;$d' >"$D/bench.py"
grep -q '^def cmd_create' "$D/bench.py" || e2e_die "cannot take bench.py out of bench/throughput.sh"

"$E2E/cluster.sh" up "$D" >"$R/cluster-up.log" 2>&1 || { tail -20 "$R/cluster-up.log" >&2; exit 1; }
eval "$("$E2E/cluster.sh" env "$D")"
# shellcheck source=/dev/null
. "$D/cluster.env"
stop_cluster_component kube-controller-manager
stop_cluster_component kube-scheduler
kubectl apply -f "$ROOT/crds/" >/dev/null &&
    kubectl wait --for=condition=Established crd --all --timeout=60s >/dev/null &&
    kubectl apply -f "$ROOT/manifests/namespace.yaml" -f "$ROOT/manifests/rbac-muster.yaml" >/dev/null &&
    kubectl create clusterrolebinding muster-bench --clusterrole=muster --user=muster >/dev/null &&
    kubectl apply -f "$ROOT/manifests/queue-default.yaml" >/dev/null &&
    kubectl create namespace bench >/dev/null || e2e_die "cannot set up the CRDs, RBAC and queue"
"$E2E/nodes.sh" "$D" "$NODES" 8 gpu >"$R/nodes.log" 2>&1 || { tail -5 "$R/nodes.log" >&2; exit 1; }
log "$(tail -1 "$R/nodes.log" | sed 's/^\[[^]]*\] //')"
"$PY" "$D/bench.py" create --kubeconfig "$KUBECONFIG" --ns bench --kind gang --sched volcano \
    --groups "$NGROUPS" --size "$SIZE" >"$R/create.log" 2>&1 || { tail -5 "$R/create.log" >&2; exit 1; }
log "$(tail -1 "$R/create.log")"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg); HEAD $(git -C "$ROOT" rev-parse --short HEAD)" >&2

PORT=$(pick_port)
# floor: every pod LISTed in pages of 500 by one plain client (Python's
# urllib; each page read whole and its JSON parsed for the continue token),
# in seconds, and the number of pages
floor() {
    "$PY" - "$APISERVER_URL" "$D/pki/ca.crt" "$(awk -F, '$2 == "admin" {print $1}' "$D/pki/tokens.csv")" <<'PY'
import json, ssl, sys, time, urllib.parse, urllib.request
url, ca, tok = sys.argv[1:4]
ctx = ssl.create_default_context(cafile=ca)
t0, cont, n = time.time(), "", 0
while True:
    q = "/api/v1/pods?limit=500" + ("&continue=" + urllib.parse.quote(cont) if cont else "")
    req = urllib.request.Request(url + q, headers={"Authorization": "Bearer " + tok})
    with urllib.request.urlopen(req, context=ctx, timeout=120) as r:
        page = json.loads(r.read())
    n += 1
    cont = page["metadata"].get("continue", "")
    if not cont:
        break
print("%.2f %d" % (time.time() - t0, n))
PY
}
# one start: NAME COMMAND ROUND ->
#   "name round synced_s ready_s rss_mib apiserver_rss_max_mib"
# (synced_s "none" for a binary older than the "caches synced in" line)
start_one() {
    local name=$1 cmd=$2 round=$3 lg=$R/$1-$3.log t0 synced="" ready="" pid rss=0 r
    local api api_rss=0
    read -r api _ <"$D/pids/kube-apiserver.pid"
    # shellcheck disable=SC2086
    set -- $cmd # the binary, then flags of serve
    t0=$EPOCHREALTIME
    "$1" serve --kubeconfig "$D/muster.kubeconfig" --listen "127.0.0.1:$PORT" "${@:2}" >"$lg" 2>&1 &
    pid=$!
    echo "$pid" >"$D/muster.pid"
    for _ in $(seq 1 3000); do
        r=$(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null) && [ -n "$r" ] && rss=$r
        r=$(awk '/^VmRSS/ {print int($2/1024)}' "/proc/$api/status" 2>/dev/null) && [ -n "$r" ] &&
            [ "$r" -gt "$api_rss" ] && api_rss=$r
        if [ -z "$ready" ] && curl -fsS --max-time 1 "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then
            ready=$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN{printf "%.2f", a-b}')
            break
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    synced=$(sed -n 's/.*caches synced in \([0-9.]*\) s.*/\1/p' "$lg" | head -1)
    r=$(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null) && [ -n "$r" ] && rss=$r
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    rm -f "$D/muster.pid"
    echo "$name $round ${synced:-none} ${ready:-none} $rss $api_rss"
}

FAILED=0
for round in $(seq 1 "$ROUNDS"); do
    f=$(floor) || f="none 0"
    echo "floor $round $f" | tee -a "$R/starts.txt"
    for c in "${CONT[@]}"; do
        line=$(start_one "${c%%=*}" "${c#*=}" "$round")
        echo "$line" | tee -a "$R/starts.txt"
        [ "$(echo "$line" | awk '{print $4}')" = none ] && FAILED=1 # never ready
        sleep 5 # let the apiserver's watchers of the stopped process go
    done
done

echo
echo "| contender | caches synced (s), median | /readyz 200 (s), median | peak RSS (MiB), median | kube-apiserver RSS during the start, max (MiB), median | starts |"
echo "|---|---|---|---|---|---|"
awk '$1 == "floor" {n["floor"]++; s["floor"] = s["floor"] " " $3; next}
     {n[$1]++; s[$1] = s[$1] " " $3; r[$1] = r[$1] " " $4; m[$1] = m[$1] " " $5; a[$1] = a[$1] " " $6}
     function med(str,   a, k, i, j, t) {
         k = split(str, a, " ")
         if (a[1] == "none") return "-"
         for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
         return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
     }
     END {
         printf "| apiserver floor: the pods LISTed in pages by a plain client | %s | | | | %d |\n", med(s["floor"]), n["floor"]
         for (c in n) if (c != "floor") printf "| %s | %s | %s | %s | %s | %d |\n", c, med(s[c]), med(r[c]), med(m[c]), med(a[c]), n[c]
     }' "$R/starts.txt"
exit "$FAILED"
