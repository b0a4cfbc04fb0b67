#!/bin/sh
# muster's command line: serve's flags refuse what they cannot take before
# anything starts (exit 2 and a line that names the flag and the value);
# --help on each subcommand and --version answer with exit 0.
# Usage: tests/cli.sh MUSTER_BINARY
M=${1:?usage: cli.sh MUSTER_BINARY}
fail=0
expect() { # WANT-RC PATTERN ARGS...
    want=$1 pat=$2
    shift 2
    out=$("$M" "$@" 2>&1 </dev/null)
    rc=$?
    if [ "$rc" != "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pat"; then
        echo "FAIL: muster $*: rc $rc (want $want), output: $out"
        fail=1
    else
        echo "ok: muster $*"
    fi
}
expect 2 '--gang-bind: "some": want release, first or all' serve --gang-bind some
expect 2 'unknown option --gang-bind' serve --gang-bind
expect 2 '--period: must be positive' serve --period 0s
expect 2 '--initial-list: "stream": want pages or watch' serve --initial-list stream
expect 0 '--initial-list watch|pages' serve --help
expect 0 '--gang-bind release|first|all' serve --help
expect 0 'usage: muster serve' simulate -h
expect 0 '^muster [0-9]' --version

# simulate: a directory stands for its *.yaml/*.yml/*.json files in name
# order (the same output as naming them), --quiet drops the timeline
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$ROOT/examples/lab-c-two-gangs-12gpu.yaml" "$T/b.yaml"
printf 'not: a manifest\n' >"$T/notes.txt"
mkdir "$T/sub" "$T/empty" "$T/dir.yaml"
printf 'kind: Broken\n' >"$T/sub/ignored.yaml"
printf 'kind: Broken\n' >"$T/dir.yaml/ignored.yaml"
ln -s . "$T/loop.yaml"
"$M" simulate "$ROOT/examples/lab-c-two-gangs-12gpu.yaml" >"$T/files.out" 2>&1
"$M" simulate "$T" >"$T/dir.out" 2>&1
if cmp -s "$T/files.out" "$T/dir.out" && grep -q '^\[  0:00:00\] bind pod' "$T/dir.out"; then
    echo "ok: muster simulate DIR is its manifest files"
else
    echo "FAIL: muster simulate DIR differs from its files:"; diff "$T/files.out" "$T/dir.out"
    fail=1
fi
"$M" simulate --quiet "$T" >"$T/quiet.out" 2>&1
if ! grep -q '^\[' "$T/quiet.out" && grep -q 'train-a-.* Running ' "$T/quiet.out"; then
    echo "ok: muster simulate --quiet prints the final state, no timeline"
else
    echo "FAIL: muster simulate --quiet:"; cat "$T/quiet.out"
    fail=1
fi
expect 1 'empty: a directory with no \*.yaml, \*.yml or \*.json file' simulate "$T/empty"
expect 2 '--until: "-5s": simulated time starts at 0' simulate --until -5s "$T"
expect 0 'only the final state' simulate --help
grep -q -- '--strict' <<EOF2 || { echo "FAIL: simulate --help does not name --strict"; fail=1; }
$("$M" simulate --help 2>&1)
EOF2
# muster get / explain: usage errors, nothing sent
expect 2 'want queues or gangs' get nodes
expect 2 'want KIND/NAME' explain justaname
expect 0 'usage: muster explain' explain --help
exit $fail
