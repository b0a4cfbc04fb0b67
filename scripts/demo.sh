#!/bin/sh
# The README's first command: installs what muster needs, builds it, and
# simulates the book's labs on the built-in default configuration.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
m=./build/src/muster
echo "== The book's 8-GPU PyTorch vcjob with only 5 free GPUs: all nine wait"
$m simulate examples/nodes-5gpu.yaml examples/queues.yaml examples/pytorch-8gpu-vcjob.yaml
echo
echo "== The same job on an 8-GPU node: all nine start together"
$m simulate examples/nodes-8gpu.yaml examples/queues.yaml examples/pytorch-8gpu-vcjob.yaml
echo
echo "== Two teams asking for more than 18 GPUs: 12 and 6 by weight"
$m simulate examples/nodes-18gpu.yaml examples/queues.yaml examples/lab-d-fair-share.yaml | tail -6
echo
echo "== team-b arrives at 60s while team-a holds 16 GPUs: reclaim, whole gangs"
$m simulate examples/nodes-18gpu.yaml examples/queues.yaml examples/lab-e-reclaim.yaml | grep -E 'evict|team-b' | head -20
