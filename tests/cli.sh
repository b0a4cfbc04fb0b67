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
expect 2 '--gang-bind: "some": want first or all' serve --gang-bind some
expect 2 'unknown option --gang-bind' serve --gang-bind
expect 2 '--period: must be positive' serve --period 0s
expect 0 '--gang-bind first|all' serve --help
expect 0 'usage: muster serve' simulate -h
expect 0 '^muster [0-9]' --version
exit $fail
