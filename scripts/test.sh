#!/bin/sh
# The README's test command: installs what it needs, builds with -Werror,
# runs every test (unit, scenario, fuzz replay), and ends with the line
# "N passed, N failed" counted per Check subtest and per test program.
set -u
cd "$(dirname "$0")/.." || exit 1
./scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
build=${BUILD_DIR:-build-test}
if [ ! -d "$build" ]; then
    meson setup "$build" -Dwerror=true >/dev/null || {
        echo "0 passed, 1 failed"; exit 1; }
fi
ninja -C "$build" >"$build/ninja-build.log" 2>&1 || {
    cat "$build/ninja-build.log"; echo "0 passed, 1 failed"; exit 1; }
meson test -C "$build" --print-errorlogs
rc=$?
log="$build/meson-logs/testlog.json"
junit="$build/meson-logs/testlog.junit.xml"
# Each Check subtest and each other test program is one testcase in the
# JUnit file; its testsuite elements carry the counts.
set -- $(grep -o '<testsuite [^>]*>' "$junit" | sed -E \
    's/.* tests="([0-9]+)" errors="([0-9]+)" failures="([0-9]+)" skipped="([0-9]+)".*/\1 \2 \3 \4/' |
    awk '{t += $1; e += $2; f += $3; s += $4} END {print t + 0, e + f, s + 0}')
total=$1 bad=$2 skipped=$3
# A program that crashed or timed out before reporting a failing subtest
# must still count as a failure.
crashed=$(jq -rs '[.[] | select(.result == "ERROR" or .result == "TIMEOUT")] | length' "$log")
[ "$crashed" -gt "$bad" ] && bad=$crashed
passed=$((total - bad - skipped))
echo "$passed passed, $bad failed"
[ "$rc" = 0 ] && [ "$bad" = 0 ]
