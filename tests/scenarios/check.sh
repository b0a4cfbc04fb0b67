#!/bin/sh
# check.sh MUSTER SRCROOT NAME - runs one simulation scenario and checks it.
#
# tests/scenarios/NAME.files  the files to simulate, one per line, relative
#                             to the source root (run in that order); a line
#                             starting with "-" is a flag (e.g. --strict)
# tests/scenarios/NAME.jq     a jq program over `muster simulate -o json`
#                             that yields an array of failed checks ([] = pass);
#                             prelude.jq is loaded first
# tests/scenarios/NAME.stderr optional: lines that must appear in stderr
#                             (fixed strings)
# tests/scenarios/NAME.rc     optional: the exit code expected (default 0)
#
# Every scenario also runs twice and must print the same bytes both times.
set -u
muster=$1 root=$2 name=$3
dir=$root/tests/scenarios
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
files=$(sed -e 's/#.*//' -e '/^ *$/d' "$dir/$name.files" | while read -r f; do
    case $f in -*) printf '%s\n' "$f" ;; *) printf '%s\n' "$root/$f" ;; esac
    done)
want_rc=0
[ -f "$dir/$name.rc" ] && want_rc=$(cat "$dir/$name.rc")
# shellcheck disable=SC2086
(cd "$root" && "$muster" simulate -o json $files) >"$tmp/out1" 2>"$tmp/err1"
rc=$?
(cd "$root" && "$muster" simulate -o json $files) >"$tmp/out2" 2>"$tmp/err2"
fail=0
if [ "$rc" != "$want_rc" ]; then
    echo "FAIL: exit code $rc, want $want_rc"; cat "$tmp/err1"; fail=1
fi
if ! cmp -s "$tmp/out1" "$tmp/out2" || ! cmp -s "$tmp/err1" "$tmp/err2"; then
    echo "FAIL: two runs printed different output"; fail=1
fi
if [ -f "$dir/$name.stderr" ]; then
    while IFS= read -r line; do
        [ -z "$line" ] && continue
        if ! grep -qF -- "$line" "$tmp/err1"; then
            echo "FAIL: stderr lacks: $line"; fail=1
        fi
    done <"$dir/$name.stderr"
fi
if ! jq -e . "$tmp/out1" >/dev/null 2>&1; then
    echo "FAIL: output is not JSON"; head -c 2000 "$tmp/out1"; exit 1
fi
cat "$dir/prelude.jq" "$dir/$name.jq" >"$tmp/prog.jq"
res=$(jq -c -f "$tmp/prog.jq" "$tmp/out1" 2>&1)
if [ "$res" != "[]" ]; then
    echo "FAIL: $res"; fail=1
    (cd "$root" && "$muster" simulate $files 2>&1 | head -60)
fi
[ $fail = 0 ] && echo "ok: $name"
exit $fail
