#!/bin/sh
# The README's first command: installs what muster needs, builds it and a
# local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager, two kube-schedulers and kwok, from their Go
# modules, cached by version in ~/.cache/muster), starts `muster serve` as
# the extender of the `volcano` kube-scheduler, applies the book's team
# queues and its 8-GPU PyTorch vcjob, and shows `kubectl get pg,pods`.
# The cluster keeps running; the last lines say how to use and stop it.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
D=${MUSTER_DEMO_DIR:-/tmp/muster-demo}
PORT=${MUSTER_DEMO_PORT:-18888}

./scripts/setup.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "== building the control plane (cached after the first time)"
tests/e2e/build-control-plane.sh >/dev/null

if [ -f "$D/cluster.env" ]; then
    tests/e2e/cluster.sh down "$D" >/dev/null 2>&1 || true
    [ -f "$D/muster.pid" ] && kill "$(cat "$D/muster.pid")" 2>/dev/null || true
fi
rm -rf "$D"
mkdir -p "$D"
echo "== starting etcd, kube-apiserver, kube-controller-manager, kube-schedulers, kwok in $D"
MUSTER_EXTENDER_URL="http://127.0.0.1:$PORT" tests/e2e/cluster.sh up "$D" >"$D/up.log" 2>&1 ||
    { tail -20 "$D/up.log"; exit 1; }
eval "$(tests/e2e/cluster.sh env "$D")"
kubectl apply -f crds/ >/dev/null
kubectl apply -f manifests/namespace.yaml -f manifests/rbac-muster.yaml >/dev/null
kubectl create clusterrolebinding muster-local --clusterrole=muster --user=muster >/dev/null
echo "== one kwok GPU node with 8 x nvidia.com/gpu"
tests/e2e/nodes.sh "$D" 1 8 gpu-node >/dev/null
echo "== muster serve --listen 127.0.0.1:$PORT (log: $D/muster.log)"
./build/src/muster serve --kubeconfig "$MUSTER_KUBECONFIG" \
    --listen "127.0.0.1:$PORT" >"$D/muster.log" 2>&1 &
echo $! >"$D/muster.pid"
i=0
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do
    i=$((i + 1)); [ $i -lt 60 ] || { tail "$D/muster.log"; exit 1; }; sleep 0.5
done
echo "== kubectl apply -f examples/queues.yaml -f examples/pytorch-8gpu-vcjob.yaml"
kubectl apply -f examples/queues.yaml -f examples/pytorch-8gpu-vcjob.yaml
i=0
until [ "$(kubectl get pods --no-headers 2>/dev/null | grep -c ' Running ')" = 9 ]; do
    i=$((i + 1)); [ $i -lt 120 ] || break; sleep 0.5
done
echo "== kubectl get pg,pods -o wide"
kubectl get pg,pods -o wide
echo
echo "== the same job, offline: muster simulate with only 5 free GPUs"
./build/src/muster simulate examples/nodes-5gpu.yaml examples/queues.yaml \
    examples/pytorch-8gpu-vcjob.yaml | sed -n '/^Why pending/,/^$/p'
cat <<EOT
The cluster keeps running. To use it:
  eval "\$(tests/e2e/cluster.sh env $D)"; kubectl get pg
To stop it:
  kill \$(cat $D/muster.pid); tests/e2e/cluster.sh down $D
EOT
