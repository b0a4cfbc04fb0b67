#!/usr/bin/env bash
# Builds an OCI image archive of the local muster build, offline: no
# registry, no container engine. The archive is an OCI image layout
# (oci-layout, index.json, blobs/sha256/...) in one tar file, with one
# layer made from scratch: the muster binary, the shared libraries it
# links (as ldd resolves them here, and the dynamic loader), the CA
# certificates, and passwd/group entries for the non-root user muster
# (65532) that the image runs as. Load it with any OCI tool that reads a
# layout archive (skopeo copy oci-archive:OUT docker://REGISTRY/muster:TAG,
# podman load -i OUT, ctr image import OUT), then set that name and tag in
# manifests/ (kustomize: images: [{name: muster, newName: ..., newTag: ...}])
# or the Helm values.
#
# The archive is checked before this script succeeds: it is unpacked
# again, every blob's digest and size are verified against the manifest,
# the layer is extracted and `muster version` is run from its root
# filesystem (chroot as user 65532, with /proc mounted, when run as root;
# else through the image's own dynamic loader and libraries, each library
# it resolves checked to be the image's), and must print this build's
# version.
#
# The same build gives the same archive, byte for byte (sorted entries,
# zero times and owners, gzip without a name or time).
#
# Usage: scripts/image.sh [OUT] | --check ARCHIVE
#   OUT      the archive to write (default build/muster-<version>.oci.tar)
#   --check  only check ARCHIVE as above (against this build's version)
# Env:   MUSTER_BIN (default build/src/muster), MUSTER_IMAGE_TAG (default
#        the version `muster version` prints), MUSTER_IMAGE_NO_CHROOT=1 (run
#        the check through the image's loader even as root)
# Exit:  0 built and checked; 1 a failure (said why); 2 usage.
set -eu -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${MUSTER_BIN:-$ROOT/build/src/muster}
case "${1:-}" in -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
[ $# -le 1 ] || [ "$1" = --check ] || { echo "usage: scripts/image.sh [OUT] | --check ARCHIVE" >&2; exit 2; }
[ -x "$BIN" ] || { echo "image.sh: no muster binary at $BIN (build it: meson setup build && ninja -C build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "image.sh: needs python3" >&2; exit 1; }
command -v ldd >/dev/null || { echo "image.sh: needs ldd" >&2; exit 1; }

VERSION=$("$BIN" version | awk '{print $2}')
[ -n "$VERSION" ] || { echo "image.sh: $BIN version printed no version" >&2; exit 1; }
TAG=${MUSTER_IMAGE_TAG:-$VERSION}
OUT=${1:-$ROOT/build/muster-$VERSION.oci.tar}
CA=/etc/ssl/certs/ca-certificates.crt
[ -r "$CA" ] || { echo "image.sh: no CA bundle at $CA (apt-get install ca-certificates)" >&2; exit 1; }

WORK=$(mktemp -d)
# a /proc left mounted by an interrupted check is unmounted before the rm
trap 'rc=$?; umount "$WORK/rootfs/proc" 2>/dev/null || true; rm -rf --one-file-system "$WORK"; exit $rc' EXIT

# what the binary links, as absolute paths: "name => /path (addr)" and the
# loader's own "/path (addr)" line
ldd "$BIN" >"$WORK/ldd" 2>&1 || { echo "image.sh: ldd $BIN: $(cat "$WORK/ldd") (a static binary is not supported)" >&2; exit 1; }
if grep -q 'not found' "$WORK/ldd"; then
    echo "image.sh: $BIN links a library that is not installed:" >&2
    grep 'not found' "$WORK/ldd" >&2
    exit 1
fi
awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' "$WORK/ldd" | sort -u >"$WORK/libs"
[ -s "$WORK/libs" ] || { echo "image.sh: ldd found no libraries for $BIN" >&2; exit 1; }

# check_archive ARCHIVE VERSION: unpack, verify, run `muster version` from
# the root filesystem; 0 when it prints "muster VERSION"
check_archive() {
    local VERSION=$2 want got how loader libdirs
    rm -rf "$WORK/rootfs"
    python3 - "$1" "$WORK/rootfs" <<'PY'
import gzip, hashlib, io, json, sys, tarfile

out, rootfs = sys.argv[1:3]
with tarfile.open(out) as t:
    blob = lambda d: t.extractfile("blobs/sha256/" + d.split(":", 1)[1]).read()
    def checked(desc):
        b = blob(desc["digest"])
        if "sha256:" + hashlib.sha256(b).hexdigest() != desc["digest"] or len(b) != desc["size"]:
            sys.exit("image.sh: blob %s does not match its descriptor" % desc["digest"])
        return b
    layout = json.loads(t.extractfile("oci-layout").read())
    if layout.get("imageLayoutVersion") != "1.0.0":
        sys.exit("image.sh: oci-layout is %r" % layout)
    index = json.loads(t.extractfile("index.json").read())
    manifest = json.loads(checked(index["manifests"][0]))
    config = json.loads(checked(manifest["config"]))
    layer = gzip.decompress(checked(manifest["layers"][0]))
    if "sha256:" + hashlib.sha256(layer).hexdigest() != config["rootfs"]["diff_ids"][0]:
        sys.exit("image.sh: the layer does not match the config's diff_id")
    user = config.get("config", {}).get("User", "").split(":")[0]
    if user in ("", "0", "root"):
        sys.exit("image.sh: the image runs as root (User %r)" % user)
    with tarfile.open(fileobj=io.BytesIO(layer)) as lt:
        for m in lt.getmembers():
            if m.name.startswith("/") or ".." in m.name.split("/") or \
               not (m.isfile() or m.isdir()):
                sys.exit("image.sh: the layer has an entry it must not: %r" % m.name)
        lt.extractall(rootfs)
PY
    want="muster $VERSION"
    if [ "$(id -u)" = 0 ] && [ -z "${MUSTER_IMAGE_NO_CHROOT:-}" ] && command -v chroot >/dev/null; then
        # /proc as a container runtime gives it (a sanitizer build reads it)
        mkdir -p "$WORK/rootfs/proc"
        mount -t proc proc "$WORK/rootfs/proc" 2>/dev/null || true
        got=$(chroot --userspec=65532:65532 "$WORK/rootfs" /usr/local/bin/muster version 2>&1) || true
        umount "$WORK/rootfs/proc" 2>/dev/null || true
        how="chroot as user 65532"
    else
        loader=$(cd "$WORK/rootfs" && find . -name 'ld-linux*.so*' -type f | sort | head -1)
        libdirs=$(cd "$WORK/rootfs" && find . -name '*.so*' -printf '%h\n' | sort -u | sed "s|^\.|$WORK/rootfs|" | paste -sd:)
        # the loader also searches the host's directories: every library it
        # resolves must be the image's own
        if "$WORK/rootfs/$loader" --library-path "$libdirs" --list "$WORK/rootfs/usr/local/bin/muster" 2>&1 |
               awk -v r="$WORK/rootfs/" '$2 == "=>" && index($3, r) != 1 { bad = 1; print } END { exit !bad }' >"$WORK/outside"; then
            echo "image.sh: the image lacks libraries muster links (found only outside it): $(cat "$WORK/outside")" >&2
            return 1
        fi
        got=$("$WORK/rootfs/$loader" --library-path "$libdirs" "$WORK/rootfs/usr/local/bin/muster" version 2>&1) || true
        how="the image's own loader and libraries"
    fi
    if [ "$got" != "$want" ]; then
        echo "image.sh: muster version from the image's root filesystem ($how) printed '$got', want '$want'" >&2
        return 1
    fi
    echo "checked: unpacked, digests match, '$got' from the root filesystem ($how)"
}

if [ "${1:-}" = --check ]; then
    [ $# = 2 ] && [ -r "$2" ] || { echo "usage: scripts/image.sh --check ARCHIVE" >&2; exit 2; }
    check_archive "$2" "$VERSION"
    exit
fi
mkdir -p "$(dirname "$OUT")"

python3 - "$BIN" "$CA" "$OUT" "$VERSION" "$TAG" "$WORK" <<'PY'
import gzip, hashlib, io, json, os, platform, sys, tarfile

binary, ca, out, version, tag, work = sys.argv[1:7]
libs = open(os.path.join(work, "libs")).read().split("\n")
libs = [l for l in libs if l]
ARCH = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le",
        "s390x": "s390x", "riscv64": "riscv64"}.get(platform.machine())
if not ARCH:
    sys.exit("image.sh: no OCI architecture name for %s" % platform.machine())
UID = GID = 65532

files = {}  # path in the image -> (bytes, mode)
def add(path, data, mode=0o644):
    files[path.lstrip("/")] = (data, mode)

add("/usr/local/bin/muster", open(binary, "rb").read(), 0o755)
for lib in libs:
    add(lib, open(os.path.realpath(lib), "rb").read(), 0o755)
add("/etc/ssl/certs/ca-certificates.crt", open(ca, "rb").read())
add("/etc/passwd", b"root:x:0:0:root:/root:/sbin/nologin\n"
    b"muster:x:%d:%d:muster:/nonexistent:/sbin/nologin\n" % (UID, GID))
add("/etc/group", b"root:x:0:\nmuster:x:%d:\n" % GID)
add("/etc/nsswitch.conf", b"passwd: files\ngroup: files\nhosts: files dns\n")

def dirs_of(paths):
    d = set()
    for p in paths:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d.add("/".join(parts[:i]))
    return sorted(d)

def tar_bytes(entries):
    """entries: sorted list of (name, data or None for a dir, mode)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data, mode in entries:
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            ti.mode = mode
            if data is None:
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()

entries = sorted(set((d, None, 0o755) for d in dirs_of(files)))
entries.append(("tmp", None, 0o1777))
entries += sorted((p, data, mode) for p, (data, mode) in files.items())
entries.sort(key=lambda e: e[0])
layer = tar_bytes(entries)
gz = io.BytesIO()
with gzip.GzipFile(fileobj=gz, mode="wb", mtime=0, filename="") as g:
    g.write(layer)
layer_gz = gz.getvalue()

def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()

def canon(o):
    return json.dumps(o, sort_keys=True, separators=(",", ":")).encode()

config = canon({
    "architecture": ARCH, "os": "linux",
    "config": {
        "User": "%d:%d" % (UID, GID),
        "Entrypoint": ["/usr/local/bin/muster"], "Cmd": ["serve"],
        "Env": ["PATH=/usr/local/bin:/usr/bin:/bin",
                "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
        "WorkingDir": "/",
        "Labels": {"org.opencontainers.image.title": "muster",
                   "org.opencontainers.image.version": version},
    },
    "rootfs": {"type": "layers", "diff_ids": [sha(layer)]},
    "history": [{"created_by": "scripts/image.sh: muster, its shared "
                               "libraries, CA certificates, user muster"}],
})
manifest = canon({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": sha(config), "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": sha(layer_gz), "size": len(layer_gz)}],
    "annotations": {"org.opencontainers.image.version": version},
})
index = canon({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                   "digest": sha(manifest), "size": len(manifest),
                   "platform": {"architecture": ARCH, "os": "linux"},
                   "annotations": {"org.opencontainers.image.ref.name": tag,
                                   "io.containerd.image.name":
                                       "docker.io/library/muster:" + tag}}],
})
blobs = {sha(b)[7:]: b for b in (layer_gz, config, manifest)}
layout = [("blobs", None, 0o755), ("blobs/sha256", None, 0o755)]
layout += [("blobs/sha256/" + d, b, 0o644) for d, b in sorted(blobs.items())]
layout += [("index.json", index, 0o644),
           ("oci-layout", b'{"imageLayoutVersion":"1.0.0"}', 0o644)]
tmp = out + ".part"
with open(tmp, "wb") as f:
    f.write(tar_bytes(sorted(layout, key=lambda e: e[0])))
os.replace(tmp, out)
print("%s: %d bytes, layer %d bytes (%d files), manifest %s"
      % (out, os.path.getsize(out), len(layer_gz), len(files), sha(manifest)))
PY


check_archive "$OUT" "$VERSION"
