#!/bin/sh
# The openssl recipe for muster's extender mTLS: a CA, muster's serving
# certificate and kube-scheduler's client certificate, laid out as the two
# Secrets manifests/ mounts (the keys cert-manager writes: tls.crt, tls.key,
# ca.crt). The e2e harness runs this same script in its run directory.
#
# Usage: manifests/tls/openssl.sh DIR [SAN...]
#   DIR/ca.crt, DIR/ca.key             the CA (kept: run again to renew the
#                                      leaves under the same CA)
#   DIR/muster/{tls.crt,tls.key,ca.crt}          Secret muster-extender-tls
#   DIR/kube-scheduler/{tls.crt,tls.key,ca.crt}  Secret muster-kube-scheduler-tls
#   SAN...   extra subjectAltNames of muster's certificate (e.g. IP:127.0.0.1);
#            it always has muster, muster.muster-system, muster.muster-system.svc
#            and muster.muster-system.svc.cluster.local
# Env: MUSTER_TLS_DAYS validity of the leaves (default 90), of a new CA 3650.
#
# Then, in the cluster:
#   kubectl -n muster-system create secret generic muster-extender-tls \
#       --from-file=DIR/muster
#   kubectl -n muster-system create secret generic muster-kube-scheduler-tls \
#       --from-file=DIR/kube-scheduler
# To rotate, run again and replace the Secrets (kubectl create --dry-run=client
# -o yaml ... | kubectl apply -f -): muster re-reads its files when the kubelet
# updates the volume, without a restart; kube-scheduler (client-go) re-reads
# its client certificate too. A new CA needs both Secrets replaced at once.
set -eu
[ $# -ge 1 ] || { sed -n '6,14p' "$0" >&2; exit 2; }
D=$1
shift
DAYS=${MUSTER_TLS_DAYS:-90}
EC="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
mkdir -p "$D/muster" "$D/kube-scheduler"
umask 077
if [ ! -s "$D/ca.crt" ] || [ ! -s "$D/ca.key" ]; then
    # shellcheck disable=SC2086
    openssl req -x509 $EC -keyout "$D/ca.key" -out "$D/ca.crt" -days 3650 \
        -subj "/CN=muster-extender-ca" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
san="DNS:muster,DNS:muster.muster-system,DNS:muster.muster-system.svc"
san="$san,DNS:muster.muster-system.svc.cluster.local"
for s in "$@"; do san="$san,$s"; done

leaf() { # NAME CN EXTENSIONS
    # shellcheck disable=SC2086
    openssl req $EC -keyout "$D/$1/tls.key" -out "$D/$1.csr" -subj "/CN=$2" 2>/dev/null
    printf '%b\n' "$3" >"$D/$1.ext"
    openssl x509 -req -in "$D/$1.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" \
        -CAcreateserial -days "$DAYS" -extfile "$D/$1.ext" -out "$D/$1/tls.crt.new" 2>/dev/null
    mv "$D/$1/tls.crt.new" "$D/$1/tls.crt"
    cp "$D/ca.crt" "$D/$1/ca.crt"
    rm -f "$D/$1.csr" "$D/$1.ext"
}
leaf muster muster.muster-system.svc \
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=$san"
leaf kube-scheduler muster-kube-scheduler \
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth"
chmod 644 "$D"/*/tls.crt "$D"/*/ca.crt "$D/ca.crt"
echo "$D/muster and $D/kube-scheduler: certificates until $(openssl x509 -enddate -noout -in "$D/muster/tls.crt" | cut -d= -f2)"
