#!/bin/sh
# fuzz.sh - runs muster's fuzz targets (tests/fuzz/fuzz_*.c) under libFuzzer
# with ASan and UBSan, one target at a time, each on a copy of its corpus.
#
#   bench/fuzz.sh [--runs N | --seconds S] [--cap S] [--save] [--build DIR]
#                 [TARGET[=N]...]
#
#   --runs N      executions per target (default 100000); TARGET=N gives
#                 one target its own count (to spread a total over targets
#                 of very different speeds)
#   --seconds S   run each target for S seconds instead
#   --cap S       stop a target after S seconds whatever --runs says
#                 (default 3600): the run is bounded in time
#   --save        merge the new inputs that add coverage into the
#                 checkout's tests/fuzz/corpus/<target>/ (default: not)
#   --build DIR   the clang build directory (default build-fuzz, reused)
#   TARGET        filter bind quantity kubeconfig watch yaml (default: all)
#
# Needs clang with libFuzzer (Debian: apt-get install clang). The library
# code is built by meson with CC=clang, -Db_sanitize=address,undefined and
# -fsanitize=fuzzer-no-link (coverage only); each target is linked with
# -fsanitize=fuzzer. No network: the targets read memory and temp files.
# Prints per target the executions, seconds, coverage and crashes, then
# the total; exits 1 when any target crashed (its input is kept in the work
# directory, named in the output), 2 on a usage or build error.
set -eu

runs=100000
seconds=
cap=3600
save=0
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build-fuzz
all="filter bind quantity kubeconfig watch watchpb yaml"

while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --cap) cap=$2; shift 2 ;;
    --save) save=1; shift ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
targets=${*:-$all}
names=
for spec in $targets; do
    t=${spec%%=*}
    names="$names $t"
    [ -f "$src/tests/fuzz/fuzz_$t.c" ] || {
        echo "fuzz.sh: no target $t (tests/fuzz/fuzz_$t.c)" >&2; exit 2; }
done
command -v clang >/dev/null || {
    echo "fuzz.sh: clang not found (apt-get install clang)" >&2; exit 2; }

# ---- build ----------------------------------------------------------------
if [ ! -f "$build/build.ninja" ]; then
    CC=clang meson setup "$build" "$src" -Dtests=disabled \
        -Dbuildtype=debugoptimized -Db_sanitize=address,undefined \
        -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link >/dev/null ||
        { echo "fuzz.sh: meson setup failed" >&2; exit 2; }
fi
ninja -C "$build" src/libmuster_api.a src/libmuster_kube.a \
    src/libmuster_extender.a >/dev/null ||
    { echo "fuzz.sh: ninja failed" >&2; exit 2; }
libs="$build/src/libmuster_extender.a $build/src/libmuster_kube.a \
$build/src/libmuster_api.a"
pc="jansson yaml-0.1 libcrypto libcurl libmicrohttpd gnutls"
cflags="-std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -DMU_FUZZ_ENGINE \
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
-I$src/src -I$src/plugins $(pkg-config --cflags $pc)"
for t in $names; do
    # shellcheck disable=SC2086
    clang $cflags -o "$build/fuzz_$t" "$src/tests/fuzz/fuzz_$t.c" $libs \
        $(pkg-config --libs $pc) -lpthread -lm ||
        { echo "fuzz.sh: building fuzz_$t failed" >&2; exit 2; }
done

# ---- run ------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/mu-fuzz.XXXXXX")
echo "clang: $(clang --version | head -1)"
echo "load:  $(uptime)"
echo "work:  $work"
printf '%-11s %12s %8s %8s %8s %s\n' target execs seconds cov ft crashes
total=0
crashed=0
ncrash=0
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for spec in $targets; do
    t=${spec%%=*}
    r=$runs
    [ "$t" = "$spec" ] || r=${spec#*=}
    d=$work/$t
    mkdir -p "$d/corpus"
    cp "$src/tests/fuzz/corpus/$t/"* "$d/corpus/" 2>/dev/null || true
    if [ -n "$seconds" ]; then
        limit="-max_total_time=$seconds"
    else
        limit="-runs=$r -max_total_time=$cap"
    fi
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    (cd "$d" && "$build/fuzz_$t" $limit -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$d/" corpus \
        </dev/null >"$d/log" 2>&1) || rc=$?
    secs=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" |
        tail -1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$d/log" |
        tail -1)
    [ -n "$execs" ] || execs=0
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$d/log" | tail -1)
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' "$d/log" | tail -1)
    n=$(find "$d" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o \
        -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
        n=1
    fi
    printf '%-11s %12s %8s %8s %8s %s\n' "$t" "$execs" "$secs" "${cov:-?}" \
        "${ft:-?}" "$n"
    ncrash=$((ncrash + n))
    if [ "$n" -ne 0 ]; then
        crashed=1
        echo "  fuzz_$t failed (exit $rc): $d/log" \
            "$(ls "$d" | grep -E '^(crash|leak|timeout|oom)-' | tr '\n' ' ')"
        grep -m5 -E 'ERROR|runtime error|fuzz_' "$d/log" | sed 's/^/  /'
    fi
    total=$((total + execs))
    if [ "$save" -eq 1 ]; then
        "$build/fuzz_$t" -merge=1 "$src/tests/fuzz/corpus/$t" "$d/corpus" \
            >"$d/merge.log" 2>&1 || echo "  merge of $t failed: $d/merge.log"
    fi
done
echo "total: $total executions, $ncrash crashes"
echo "load:  $(uptime)"
exit $crashed
