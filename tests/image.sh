#!/bin/sh
# scripts/image.sh: builds a checked OCI image archive of this build, the
# same bytes twice, and its --check refuses an archive whose layer was
# changed (the digest no longer matches) or that lacks a library.
# Usage: tests/image.sh MUSTER_BINARY
M=${1:?usage: image.sh MUSTER_BINARY}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
say() { echo "$1: $2"; [ "$1" = ok ] || fail=1; }
if MUSTER_BIN=$M "$ROOT/scripts/image.sh" "$T/a.tar" >"$T/a.log" 2>&1 &&
   grep -q "^checked: .*'muster [0-9]" "$T/a.log"; then
    say ok "the archive is built and checked"
else
    say FAIL "build: $(cat "$T/a.log")"
fi
MUSTER_BIN=$M "$ROOT/scripts/image.sh" "$T/b.tar" >/dev/null 2>&1
if cmp -s "$T/a.tar" "$T/b.tar"; then say ok "the same build gives the same bytes"; else say FAIL "two builds differ"; fi
# a changed layer, and a layer without libc, each rewritten into a copy
python3 - "$T/a.tar" "$T/bad-digest.tar" "$T/no-libc.tar" <<'PY'
import gzip, hashlib, io, json, sys, tarfile
src, bad, nolibc = sys.argv[1:4]
with tarfile.open(src) as t:
    members = [(m, t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()]
index = json.loads(dict((m.name, d) for m, d in members)["index.json"])
blobs = dict((m.name, d) for m, d in members)
man = json.loads(blobs["blobs/sha256/" + index["manifests"][0]["digest"][7:]])
layer_name = "blobs/sha256/" + man["layers"][0]["digest"][7:]
def write(path, replace):
    with tarfile.open(path, "w") as o:
        for m, d in members:
            if d is not None and m.name in replace:
                d = replace[m.name]
                m.size = len(d)
            o.addfile(m, io.BytesIO(d) if d is not None else None)
lg = bytearray(blobs[layer_name]); lg[len(lg) // 2] ^= 0xff
write(bad, {layer_name: bytes(lg)})
# without libc: a layer and its digests made again, consistently
layer = gzip.decompress(blobs[layer_name])
out = io.BytesIO()
with tarfile.open(fileobj=io.BytesIO(layer)) as lt, tarfile.open(fileobj=out, mode="w") as nt:
    for m in lt.getmembers():
        if m.name.endswith("/libc.so.6"):
            continue
        nt.addfile(m, lt.extractfile(m) if m.isfile() else None)
nl = out.getvalue(); ngz = gzip.compress(nl, mtime=0)
sha = lambda b: "sha256:" + hashlib.sha256(b).hexdigest()
cfg_name = "blobs/sha256/" + man["config"]["digest"][7:]
cfg = json.loads(blobs[cfg_name]); cfg["rootfs"]["diff_ids"] = [sha(nl)]
cfgb = json.dumps(cfg).encode()
man["config"].update(digest=sha(cfgb), size=len(cfgb))
man["layers"][0].update(digest=sha(ngz), size=len(ngz))
manb = json.dumps(man).encode()
index["manifests"][0].update(digest=sha(manb), size=len(manb))
with tarfile.open(nolibc, "w") as o:
    for name, d in [("oci-layout", blobs["oci-layout"]), ("index.json", json.dumps(index).encode()),
                    ("blobs/sha256/" + sha(manb)[7:], manb), ("blobs/sha256/" + sha(cfgb)[7:], cfgb),
                    ("blobs/sha256/" + sha(ngz)[7:], ngz)]:
        ti = tarfile.TarInfo(name); ti.size = len(d); o.addfile(ti, io.BytesIO(d))
PY
if MUSTER_BIN=$M "$ROOT/scripts/image.sh" --check "$T/a.tar" >/dev/null 2>&1; then
    say ok "--check passes the archive it built"
else
    say FAIL "--check refused a good archive"
fi
if MUSTER_BIN=$M "$ROOT/scripts/image.sh" --check "$T/bad-digest.tar" 2>"$T/bad.err" >/dev/null; then
    say FAIL "--check passed a changed layer"
elif grep -q "does not match its descriptor" "$T/bad.err"; then
    say ok "--check refuses a changed layer by its digest"
else
    say FAIL "--check refused a changed layer, but said: $(cat "$T/bad.err")"
fi
# as root the check is a chroot; the loader's path (not root, or forced)
# must refuse it too
for mode in chroot loader; do
    [ "$mode" = loader ] && force=1 || force=
    [ "$mode" = chroot ] && [ "$(id -u)" != 0 ] && continue
    if MUSTER_IMAGE_NO_CHROOT=$force MUSTER_BIN=$M "$ROOT/scripts/image.sh" --check "$T/no-libc.tar" 2>"$T/nolibc.err" >/dev/null; then
        say FAIL "--check ($mode) passed an image without libc"
    elif grep -q "muster version from the image's root filesystem\|the image lacks libraries" "$T/nolibc.err"; then
        say ok "--check ($mode) refuses an image muster cannot start in"
    else
        say FAIL "--check ($mode) refused an image without libc, but said: $(cat "$T/nolibc.err")"
    fi
done
exit $fail
