#!/bin/sh
# The README's test command: installs what it needs, builds with -Werror,
# and runs every test three ways: plainly, under AddressSanitizer and
# UndefinedBehaviorSanitizer, and under valgrind. Ends with the line
# "N passed, N failed", counting each Check subtest and each other test
# program once per way it ran.
set -u
cd "$(dirname "$0")/.." || exit 1
./scripts/setup.sh --test || { echo "0 passed, 1 failed"; exit 1; }
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
# kwok from their Go modules, cached by version outside the checkout
# (a no-op when cached; about 6 minutes cold on an idle machine)
if ! tests/e2e/build-control-plane.sh >build-control-plane.log 2>&1; then
    tail -30 build-control-plane.log
    echo "0 passed, 1 failed"
    exit 1
fi
# Volcano v1.14.1's vc-scheduler, vc-controller-manager and CRDs from its Go
# module, cached the same way, for the cutover test (tests/e2e/migrate.sh)
if ! bench/volcano/build.sh >build-volcano.log 2>&1; then
    tail -30 build-volcano.log
    echo "0 passed, 1 failed"
    exit 1
fi
# Helm from its Go module, cached the same way, for the chart's tests
# (tests/helm.sh, tests/e2e/helm.sh)
if ! tests/build-helm.sh >build-helm.log 2>&1; then
    tail -30 build-helm.log
    echo "0 passed, 1 failed"
    exit 1
fi
build=${BUILD_DIR:-build-test}
total=0 bad=0 status=0

# count JUNIT JSON: adds the file's counts to total and bad
count() {
    set -- "$1" "$2" $(grep -o '<testsuite [^>]*>' "$1" | sed -E \
        's/.* tests="([0-9]+)" errors="([0-9]+)" failures="([0-9]+)" skipped="([0-9]+)".*/\1 \2 \3 \4/' |
        awk '{t += $1 - $4; b += $2 + $3} END {print t + 0, b + 0}')
    # a program that crashed or timed out before reporting a failing
    # subtest still counts as a failure
    crashed=$(jq -rs '[.[] | select(.result == "ERROR" or .result == "TIMEOUT")] | length' "$2")
    b=$4
    [ "$crashed" -gt "$b" ] && b=$crashed
    total=$((total + $3))
    bad=$((bad + b))
}

# what failed, named again just before the last line: a CI log shown by
# its end still says which test failed, and which of its checks
failed_list=""
# note_failures JSON SETUP: the failed programs of a run, with their
# "not ok" lines (at most 20 each)
note_failures() {
    f=$(jq -r --arg s "$2" '
        select(.result != "OK" and .result != "SKIP" and .result != "EXPECTEDFAIL")
        | "\($s): \(.name) \(.result) after \(.duration | floor) s",
          ([(.stdout // "") | split("\n")[] | select(startswith("not ok"))][0:20][]
           | "    " + .[0:300])' "$1" 2>/dev/null)
    [ -n "$f" ] && failed_list="$failed_list$f
"
}

# run DIR SETUP-ARGS...: builds DIR and runs its tests with the setup
run() {
    dir=$1 setup=$2
    shift 2
    if [ ! -d "$dir" ]; then
        meson setup "$dir" -Dwerror=true "$@" >/dev/null || {
            echo "meson setup $dir failed"; bad=$((bad + 1)); status=1; return; }
    fi
    if ! ninja -C "$dir" >"$dir/ninja-build.log" 2>&1; then
        cat "$dir/ninja-build.log"; bad=$((bad + 1)); status=1; return
    fi
    suffix="" args=""
    [ "$setup" = default ] || { suffix="-$setup"; args="--setup $setup"; }
    echo "== tests ($setup)"
    # shellcheck disable=SC2086
    meson test -C "$dir" $args --print-errorlogs || status=1
    count "$dir/meson-logs/testlog$suffix.junit.xml" \
          "$dir/meson-logs/testlog$suffix.json"
    note_failures "$dir/meson-logs/testlog$suffix.json" "$setup"
}

run "$build" default
run "$build-asan" asan -Db_sanitize=address,undefined
run "$build" valgrind
if [ -n "$failed_list" ]; then
    echo "== failed"
    printf '%s' "$failed_list"
fi
passed=$((total - bad))
[ "$passed" -lt 0 ] && passed=0
echo "$passed passed, $bad failed"
[ "$status" = 0 ] && [ "$bad" = 0 ]
