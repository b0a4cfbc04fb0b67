#!/bin/sh
# Every command of examples/README.md's table runs as it stands: exit 0,
# and no queue it names is missing (the examples run alone or with the
# files the table lists beside them).
# Usage: tests/examples.sh MUSTER_BINARY
M=${1:?usage: examples.sh MUSTER_BINARY}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
cmds=$(sed -n 's/^|[^|]*|[^|]*| `muster simulate \([^`]*\)` |$/\1/p' examples/README.md)
[ -n "$cmds" ] || { echo "FAIL: no command found in examples/README.md"; exit 1; }
fail=0 n=0
echo "$cmds" | {
    while read -r args; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        out=$("$M" simulate --quiet $args 2>&1)
        rc=$?
        if [ "$rc" != 0 ] || printf '%s\n' "$out" | grep -q 'QueueNotFound'; then
            echo "FAIL: muster simulate $args: rc $rc"
            printf '%s\n' "$out" | head -20
            fail=1
        else
            echo "ok: muster simulate $args"
        fi
    done
    [ "$n" -ge 9 ] || { echo "FAIL: only $n commands in the table"; fail=1; }
    exit $fail
}
