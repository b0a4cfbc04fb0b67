#!/usr/bin/env bash
# The Helm chart (manifests/helm/muster) with Helm built from its Go module
# (tests/build-helm.sh, cached; scripts/test.sh builds it first): helm lint;
# helm template renders the same objects as the kustomize base (kind,
# namespace, name; the base's generated ConfigMap names without their hash,
# and no Namespace: helm install --create-namespace makes it); the values
# land where they belong (image, replicas, TLS Secrets, the scheduler
# configuration and its checksum, queues, cert-manager) and another release
# namespace leaves no muster-system behind. Prints one line per check;
# exit 0 when all pass.
# Usage: tests/helm.sh
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHART=$ROOT/manifests/helm/muster
. "$ROOT/tests/e2e/lib.sh"
HELM=$("$ROOT/tests/build-helm.sh" --check >/dev/null && "$ROOT/tests/build-helm.sh") ||
    { echo "FAIL: helm is not built (tests/build-helm.sh)"; exit 1; }
KUBECTL=$K8S_DIR/bin/kubectl
[ -x "$KUBECTL" ] || { echo "FAIL: kubectl is not built (tests/e2e/build-control-plane.sh)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
say() { echo "$1: $2"; [ "$1" = ok ] || fail=1; }

# objects FILE: "Kind namespace/name" per document of a YAML stream
objects() {
    python3 - "$1" <<'PY'
import re, sys
out = []
for doc in re.split(r"(?m)^---\s*$", open(sys.argv[1]).read()):
    kind = re.search(r"(?m)^kind:\s*(\S+)", doc)
    meta = re.search(r"(?m)^metadata:\s*\n((?:[ #].*\n?|\s*\n)*)", doc)
    if not kind or not meta:
        continue
    name = re.search(r"(?m)^  name:\s*(\S+)", meta.group(1))
    ns = re.search(r"(?m)^  namespace:\s*(\S+)", meta.group(1))
    n = name.group(1).strip("'\"")
    if kind.group(1) == "ConfigMap":
        n = re.sub(r"-[a-z0-9]{10}$", "", n)   # kustomize's hash suffix
    out.append("%s %s/%s" % (kind.group(1), ns.group(1) if ns else "", n))
print("\n".join(sorted(out)))
PY
}

if "$HELM" lint "$CHART" >"$T/lint.txt" 2>&1 && grep -q "0 chart(s) failed" "$T/lint.txt"; then
    say ok "helm lint: no failure"
else
    say FAIL "helm lint: $(cat "$T/lint.txt")"
fi
"$HELM" template muster "$CHART" --kube-version v1.35.4 -n muster-system --include-crds >"$T/default.yaml" 2>"$T/err" ||
    say FAIL "helm template: $(cat "$T/err")"
"$KUBECTL" kustomize "$ROOT/manifests" >"$T/kustomize.yaml" 2>"$T/err" ||
    say FAIL "kubectl kustomize manifests: $(cat "$T/err")"
objects "$T/default.yaml" >"$T/helm.objs"
objects "$T/kustomize.yaml" | grep -v '^Namespace ' >"$T/kust.objs"
if [ -s "$T/helm.objs" ] && cmp -s "$T/helm.objs" "$T/kust.objs"; then
    say ok "the chart renders the kustomize base's $(wc -l <"$T/helm.objs") objects, no more, no fewer"
else
    say FAIL "objects differ (< chart, > kustomize): $(diff "$T/helm.objs" "$T/kust.objs" | tr '\n' ' ')"
fi

"$HELM" template muster "$CHART" --kube-version v1.35.4 -n muster-system \
    --set image.repository=registry.example/muster,image.tag=v9,image.pullPolicy=Always \
    --set replicas=3,kubeScheduler.replicas=2,kubeScheduler.image=registry.example/kube-scheduler:v1.35.4 \
    --set tls.musterSecret=m-tls,tls.kubeSchedulerSecret=ks-tls \
    --set 'queues[0].name=team-a,queues[0].weight=2,queues[0].capability.nvidia\.com/gpu=16,queues[0].guarantee.nvidia\.com/gpu=8' \
    --set 'queues[1].name=team-b,queues[1].reclaimable=false' \
    --set defaultQueue=false >"$T/values.yaml" 2>"$T/err" || say FAIL "helm template with values: $(cat "$T/err")"
values_ok() {
    local f=$T/values.yaml
    grep -q '^        image: registry.example/muster:v9$' "$f" &&
        grep -q '^        imagePullPolicy: Always$' "$f" &&
        grep -q '^  replicas: 3 ' "$f" && grep -q '^  replicas: 2$' "$f" &&
        grep -q 'image: registry.example/kube-scheduler:v1.35.4' "$f" &&
        grep -q 'secretName: m-tls$' "$f" && grep -q 'secretName: ks-tls$' "$f" &&
        ! grep -q 'secretName: muster-extender-tls' "$f" &&
        python3 - "$f" <<'PY'
import re, sys
docs = re.split(r"(?m)^---\s*$", open(sys.argv[1]).read())
q = {re.search(r"(?m)^  name: \"?([^\"\n]+)", d).group(1): d for d in docs if re.search(r"(?m)^kind: Queue$", d)}
assert set(q) == {"team-a", "team-b"}, q.keys()      # defaultQueue=false: no default
a, b = q["team-a"], q["team-b"]
assert re.search(r"(?m)^  weight: 2$", a) and re.search(r"(?m)^  reclaimable: true$", a), a
assert re.search(r"(?m)^  capability:\n    nvidia.com/gpu: 16$", a), a
assert re.search(r"(?m)^  guarantee:\n    resource:\n      nvidia.com/gpu: 8$", a), a
assert re.search(r"(?m)^  weight: 1$", b) and re.search(r"(?m)^  reclaimable: false$", b), b
PY
}
if values_ok; then say ok "values: image, pull policy, replicas of both, TLS Secrets, queues (weight, capability, guarantee, reclaimable), no default queue"; else say FAIL "values not rendered as set: $(grep -nE 'image:|replicas:|secretName:' "$T/values.yaml" | tr '\n' ' ')"; fi

printf 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n' >"$T/my.conf"
"$HELM" template muster "$CHART" --kube-version v1.35.4 -n muster-system --set-file config="$T/my.conf" >"$T/conf.yaml" 2>"$T/err" ||
    say FAIL "helm template --set-file config: $(cat "$T/err")"
sum() { grep 'checksum/config' "$1" | sort | tr '\n' ' '; }
if grep -q '^    actions: "enqueue, allocate"$' "$T/conf.yaml" && ! grep -q 'reclaim, preempt' "$T/conf.yaml" &&
   [ -n "$(sum "$T/conf.yaml")" ] && [ "$(sum "$T/conf.yaml")" != "$(sum "$T/default.yaml")" ]; then
    say ok "config: the ConfigMap holds the given volcano-scheduler.conf, and muster's pods roll (checksum/config changes)"
else
    say FAIL "config not rendered: $(grep -n -A3 'volcano-scheduler.conf:' "$T/conf.yaml" | head -5 | tr '\n' ' ')"
fi

"$HELM" template muster "$CHART" --kube-version v1.35.4 -n team-sched --include-crds --set tls.certManager=true >"$T/ns.yaml" 2>"$T/err" ||
    say FAIL "helm template -n team-sched: $(cat "$T/err")"
if ! grep -q 'muster-system' "$T/ns.yaml" &&
   grep -q 'urlPrefix: https://muster.team-sched.svc:8888' "$T/ns.yaml" &&
   grep -q -- '- --leader-elect-resource-namespace' "$T/ns.yaml" && grep -qx '        - team-sched' "$T/ns.yaml" &&
   grep -q '^kind: Certificate$' "$T/ns.yaml" && grep -q 'commonName: muster.team-sched.svc' "$T/ns.yaml"; then
    say ok "another release namespace: nothing says muster-system (the extender URL, the Lease, the RBAC subjects, cert-manager's Certificates)"
else
    say FAIL "namespace: $(grep -n 'muster-system' "$T/ns.yaml" | head -5 | tr '\n' ' ')"
fi
exit $fail
