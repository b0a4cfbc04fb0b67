#!/usr/bin/env bash
# End-to-end: the vcjob controller on a real control plane. The book's Job
# as written (examples/pytorch-8gpu-vcjob.yaml): eviction restarts the whole
# job and counts a retry; maxRetry ends it Failed; completion and
# ttlSecondsAfterFinished; an exit-code policy; elastic growth; bad Jobs.
# Prints TAP; exit 0 when all pass.
#
# networkTopology on HyperNodes of two racks.
#
# Usage: tests/e2e/vcjob.sh MUSTER_BINARY
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MUSTER=${1:?usage: vcjob.sh MUSTER_BINARY}
case "$MUSTER" in /*) ;; *) MUSTER=$PWD/$MUSTER ;; esac
# shellcheck source=tap.sh
. "$HERE/tap.sh"
# this suite runs muster with LIST pages (--initial-list pages); the
# others run the default, the initial state streamed (WatchList)
MUSTER_SERVE_ARGS=(--initial-list pages)

tap_up vcjob
check "--initial-list pages: muster's caches were listed, not streamed" \
    bash -c "grep -q 'caches synced' '$D/muster.log' && ! grep -q 'initial state streamed' '$D/muster.log'"

job_field() { kubectl get vcjob "$1" -o jsonpath="$2"; }
# job2 NAME SPEC-LINE TASK1 N1 TASK2 N2 [TASK2-LINE]: a vcjob of two tasks
job2() {
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: $(($4 + $6))
  $2
  tasks:
  - name: $3
    replicas: $4
    template: {spec: {containers: [{name: c, image: x}]}}
  - name: $5
    replicas: $6
    ${7:-}
    template: {spec: {containers: [{name: c, image: x}]}}
YAML
}
pods_running() { # PREFIX COUNT
    test "$(kubectl get pods --no-headers 2>/dev/null | grep "^$1" | grep -c ' Running ')" = "$2"
}
pods_exist() { # PREFIX COUNT
    test "$(kubectl get pods --no-headers 2>/dev/null | grep -c "^$1")" = "$2"
}
uids() { kubectl get pods -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | grep -v '^$' | sort; }
versions() { # PREFIX: the distinct job-version annotations of its pods
    kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.annotations.volcano\.sh/job-version}{"\n"}{end}' |
        grep "^$1" | awk '{print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# finish POD PHASE [EXIT]: what a kubelet reports when its container ends
finish() {
    kubectl patch pod "$1" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"$2\",\"containerStatuses\":[{\"name\":\"c\",\"image\":\"busybox\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":${3:-0},\"reason\":\"Done\"}}}]}}" >/dev/null
}
one_gpu_job() { # NAME REPLICAS MINAVAILABLE EXTRA_SPEC_YAML
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: $3
$4
  tasks:
  - name: w
    replicas: $2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
}
reset() {
    kubectl delete vcjob --all --wait=false >/dev/null 2>&1
    kubectl delete pods --all --grace-period=0 --force >/dev/null 2>&1
    kubectl delete nodes --all >/dev/null 2>&1
    wait_for 30 pods_exist '' 0
    kubectl delete podgroups --all >/dev/null 2>&1
    # team-a's guarantee would hold 8 GPUs back from every other queue
    kubectl delete queue team-a team-b --ignore-not-found >/dev/null 2>&1
}

# --- the book's Job: eviction restarts the whole job and counts a retry ----
kubectl apply -f "$ROOT/examples/queues.yaml" >/dev/null
"$HERE/nodes.sh" "$D" 1 8 big >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 1 4 small >/dev/null 2>&1
kubectl apply -f "$ROOT/examples/pytorch-8gpu-vcjob.yaml" >/dev/null
check "book's vcjob: all nine pods run on 12 GPUs" wait_for 60 pods_running pytorch-dist-8gpu- 9
# its pods are muster's, gated: once the release patches land, muster binds
# the gang itself (--gang-bind release) instead of waiting on kube-scheduler
# for each pod; kube-scheduler meeting the batch at /bind first counts
# stale. On a loaded machine kube-scheduler may bind a gang before muster
# has seen its patches land (not counted): the gangs of the whole suite are
# counted before the HyperNode part below.
at_release() { # RESULT...: the sum of muster_gangs_bound_at_release_total
    local m
    m=$(curl -sf "http://127.0.0.1:$METRICS/metrics") || return 1
    for r in "$@"; do
        awk -v k="muster_gangs_bound_at_release_total{result=\"$r\"}" '$1 == k { print $2 }' <<<"$m"
    done | awk '{ v += $1 } END { print v + 0 }'
}
check "the book's gated gang: no release binder batch failed" \
    bash -c "$(declare -f at_release); METRICS=$METRICS; test \"\$(at_release failed)\" = 0"
check "kubectl get vcjob: STATUS Running, MINAVAILABLE 9, RUNNINGS 9" \
    wait_for 20 bash -c "kubectl get vcjob pytorch-dist-8gpu | grep -Eq '^pytorch-dist-8gpu +Running +9 +9 '"
check "kubectl get vcjob shows Volcano's columns (QUEUE with -o wide)" \
    bash -c "kubectl get vcjob | head -1 | grep -Eq '^NAME +STATUS +MINAVAILABLE +RUNNINGS +AGE' && kubectl get vcjob -o wide | head -1 | grep -q QUEUE"
check "status.taskStatusCount counts 1 master and 8 workers Running" \
    equals "1/8" job_field pytorch-dist-8gpu '{.status.taskStatusCount.master.phase.Running}/{.status.taskStatusCount.worker.phase.Running}'
before=$(uids)
kubectl delete pod pytorch-dist-8gpu-worker-3 --wait=false >/dev/null
check "an evicted worker restarts the job: retryCount 1, version 1" \
    wait_for 30 equals "1/1" job_field pytorch-dist-8gpu '{.status.retryCount}/{.status.version}'
check "all nine pods are made again (job-version 1) and run" \
    wait_for 60 bash -c "$(declare -f pods_running versions); pods_running pytorch-dist-8gpu- 9 && test \"\$(versions pytorch-dist-8gpu-)\" = 1"
check "none of the nine is a pod from before the restart" \
    bash -c "test -z \"\$(comm -12 <(echo '$before') <($(declare -f uids); uids))\""
check "the vcjob is Running again, with Restarting in its conditions" \
    wait_for 20 bash -c "kubectl get vcjob pytorch-dist-8gpu -o jsonpath='{.status.state.phase} {.status.conditions[*].status}' | grep -Eq '^Running .*Restarting'"
check "kubectl describe vcjob shows the RestartJob action" \
    wait_for 10 bash -c "kubectl describe vcjob pytorch-dist-8gpu | grep -q 'ExecuteAction.*RestartJob'"
reset

# --- maxRetry: the retry past the limit ends the job Failed ----------------
"$HERE/nodes.sh" "$D" 1 8 m >/dev/null 2>&1
one_gpu_job once 2 2 '  maxRetry: 1
  policies: [{event: PodEvicted, action: RestartJob}]' | kubectl apply -f - >/dev/null
check "maxRetry 1: the job runs" wait_for 60 pods_running once- 2
kubectl delete pod once-w-0 --wait=false >/dev/null
check "maxRetry 1: one eviction makes it Failed (MaxRetryReached)" \
    wait_for 30 equals "Failed/MaxRetryReached/1" job_field once '{.status.state.phase}/{.status.state.reason}/{.status.retryCount}'
check "a Failed job keeps no pod running" wait_for 30 bash -c "! kubectl get pods --no-headers 2>/dev/null | grep -q '^once-.* Running '"
reset

# --- a gang bind that muster undoes is no eviction ---------------------------
# A ValidatingAdmissionPolicy refuses every binding of undo-w-1. muster
# binds the gang itself at its release: undo-w-0's bind goes through,
# undo-w-1's is refused, so muster undoes undo-w-0 (deletes it; the job
# makes it again). Counted as an eviction, that would restart the job, and
# with maxRetry 1 fail it (MaxRetryReached): a third party deleting a
# released pod under muster (kwok's retried deletes do, at times) did that.
"$HERE/nodes.sh" "$D" 1 8 u >/dev/null 2>&1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: refuse-undo-w-1}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods/binding]}
  validations:
  - {expression: "!(object.metadata.name in ['undo-w-1', 'undo-probe'])", message: "e2e: binding undo-w-1 is refused"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: refuse-undo-w-1}
spec: {policyName: refuse-undo-w-1, validationActions: [Deny]}
YAML
# in force once it refuses the binding of a probe pod that no scheduler
# serves (the policy names it too): dry run, so that a bind let through
# before the policy is in force changes nothing
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: undo-probe}
spec: {schedulerName: none, containers: [{name: c, image: x}]}
YAML
refused() { # the refusal is kubectl's failure: read its words, not its status
    local out
    out=$(kubectl create --raw "/api/v1/namespaces/default/pods/undo-probe/binding?dryRun=All" -f - 2>&1 \
        <<<'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"undo-probe"},"target":{"kind":"Node","name":"u-000"}}')
    grep -q 'binding undo-w-1 is refused' <<<"$out"
}
check "a ValidatingAdmissionPolicy refuses the binding of undo-w-1" wait_for 30 refused
kubectl delete pod undo-probe --grace-period=0 --force >/dev/null 2>&1
one_gpu_job undo 2 2 '  maxRetry: 1
  policies: [{event: PodEvicted, action: RestartJob}]' | kubectl apply -f - >/dev/null
check "muster bound undo-w-0 with its gang, then undid it: undo-w-1's bind was refused" \
    wait_for 60 grep -Eq 'binding default/undo-w-1 to [^ ]+ failed: .*refused.*the 1 member bound or maybe bound was deleted' "$D/muster.log"
undone_twice() { test "$(grep -Ec 'binding default/undo-w-1 to [^ ]+ failed' "$D/muster.log")" -ge 2; }
check "and again at the next release, the job made undo-w-0 again" wait_for 60 undone_twice
check "the undone member is no eviction: retryCount 0, version 0, the job not Failed" \
    bash -c "$(declare -f job_field); test \"\$(job_field undo '{.status.retryCount}/{.status.version}/{.status.state.phase}')\" != \"\" && job_field undo '{.status.retryCount}/{.status.version}/{.status.state.phase}' | grep -Eq '^(0)?/(0)?/(Pending|Running)\$'"
kubectl delete validatingadmissionpolicybinding refuse-undo-w-1 >/dev/null
kubectl delete validatingadmissionpolicy refuse-undo-w-1 >/dev/null
check "with the refusal gone the gang runs, and no retry was counted" \
    wait_for 60 bash -c "$(declare -f pods_running job_field); pods_running undo- 2 && job_field undo '{.status.retryCount}/{.status.version}/{.status.state.phase}' | grep -Eq '^(0)?/(0)?/Running\$'"
reset

# --- completion and ttlSecondsAfterFinished --------------------------------
"$HERE/nodes.sh" "$D" 1 8 c >/dev/null 2>&1
one_gpu_job fin 2 2 '  ttlSecondsAfterFinished: 4' | kubectl apply -f - >/dev/null
check "a 2-pod job runs" wait_for 60 pods_running fin- 2
finish fin-w-0 Succeeded
finish fin-w-1 Succeeded
check "both pods succeeded: the job is Completed with succeeded 2" \
    wait_for 20 equals "Completed/2" job_field fin '{.status.state.phase}/{.status.succeeded}'
check "ttlSecondsAfterFinished 4: the job is deleted after it" \
    wait_for 30 bash -c "! kubectl get vcjob fin >/dev/null 2>&1"

# --- an exit-code policy: exit 3 terminates the job -------------------------
one_gpu_job term 3 3 '  policies: [{exitCode: 3, action: TerminateJob}]' | kubectl apply -f - >/dev/null
check "a 3-pod job runs" wait_for 60 pods_running term- 3
finish term-w-1 Failed 3
check "exit code 3 → TerminateJob: the job ends Terminated" \
    wait_for 30 equals "Terminated" job_field term '{.status.state.phase}'
check "and its other pods are stopped" \
    wait_for 30 bash -c "! kubectl get pods --no-headers 2>/dev/null | grep -q '^term-.* Running '"
one_gpu_job other 1 1 '  policies: [{exitCode: 3, action: TerminateJob}]' | kubectl apply -f - >/dev/null
check "another exit code is no match: the pod fails, the job goes on" \
    bash -c "$(declare -f wait_for pods_running finish job_field equals); wait_for 60 pods_running other- 1 && finish other-w-0 Failed 1 && wait_for 20 equals Failed job_field other '{.status.state.phase}' && test \"\$(job_field other '{.status.failed}')\" = 1"
reset

# --- TaskFailed: a container restarted as often as the task's maxRetry ------
"$HERE/nodes.sh" "$D" 1 8 tf >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: flaky}
spec:
  tasks:
  - name: w
    replicas: 2
    maxRetry: 2
    policies: [{event: TaskFailed, action: TerminateJob}]
    template: {spec: {containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]}}
YAML
check "a 2-pod job runs" wait_for 60 pods_running flaky- 2
kubectl patch pod flaky-w-1 --subresource=status --type=merge -p '{"status":{"containerStatuses":[{"name":"c","image":"busybox","imageID":"","ready":true,"restartCount":2,"state":{"running":{}}}]}}' >/dev/null
check "restartCount 2 of maxRetry 2 → TaskFailed → TerminateJob: Terminated" \
    wait_for 30 equals "Terminated" job_field flaky '{.status.state.phase}'
reset

# --- a PodPending policy with a timeout ---------------------------------------
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: stuck}
spec:
  policies: [{event: PodPending, timeout: 5s, action: AbortJob}]
  tasks:
  - name: w
    replicas: 1
    template: {spec: {containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 100}}}]}}
YAML
check "PodPending with timeout 5s: a pod that cannot fit aborts the job after it" \
    wait_for 30 equals "Aborted" job_field stuck '{.status.state.phase}'
check "and not before: the job was Pending for at least 5 s" \
    bash -c "c=\$(kubectl get vcjob stuck -o jsonpath='{.metadata.creationTimestamp}'); a=\$(kubectl get vcjob stuck -o jsonpath='{.status.state.lastTransitionTime}'); test \$((\$(date -d \"\$a\" +%s) - \$(date -d \"\$c\" +%s))) -ge 5"

# --- vcctl job suspend / resume: AbortJob and ResumeJob Commands ------------
command() { # ACTION JOB
    cat <<YAML
apiVersion: bus.volcano.sh/v1alpha1
kind: Command
metadata: {generateName: $2-$(echo "$1" | tr 'A-Z' 'a-z')-, namespace: default}
target: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: $2, uid: "$(kubectl get vcjob "$2" -o jsonpath='{.metadata.uid}')"}
action: $1
YAML
}
"$HERE/nodes.sh" "$D" 1 8 p >/dev/null 2>&1
one_gpu_job pause 2 2 '' | kubectl apply -f - >/dev/null
check "a 2-pod job runs" wait_for 60 pods_running pause- 2
command AbortJob pause | kubectl create -f - >/dev/null
check "AbortJob Command: the job is Aborted and its pods are gone" \
    wait_for 30 bash -c "$(declare -f job_field pods_exist); test \"\$(job_field pause '{.status.state.phase}')\" = Aborted && pods_exist pause- 0"
check "an Aborted job holds no PodGroup (no queue reservation)" \
    wait_for 10 bash -c "! kubectl get pg --no-headers 2>/dev/null | grep -q '^pause-'"
check "the Command is carried out once and deleted" \
    wait_for 10 bash -c "test -z \"\$(kubectl get commands.bus.volcano.sh --no-headers 2>/dev/null)\""
command ResumeJob pause | kubectl create -f - >/dev/null
check "ResumeJob Command: the job runs again, with a retry counted" \
    wait_for 60 bash -c "$(declare -f job_field pods_running); pods_running pause- 2 && test \"\$(job_field pause '{.status.state.phase}/{.status.retryCount}')\" = Running/1"
reset

# --- elastic: minAvailable 2 of 4 starts at 2 and grows ---------------------
"$HERE/nodes.sh" "$D" 1 2 e >/dev/null 2>&1
one_gpu_job elastic 4 2 '' | kubectl apply -f - >/dev/null
check "elastic 2 of 4 on 2 GPUs: 2 run and the job is Running" \
    wait_for 60 bash -c "$(declare -f pods_running job_field); pods_running elastic- 2 && test \"\$(job_field elastic '{.status.state.phase}')\" = Running"
MUSTER_NODE_START=1 "$HERE/nodes.sh" "$D" 1 2 e >/dev/null 2>&1
check "2 more GPUs free up: it grows to 4" wait_for 60 pods_running elastic- 4
kubectl patch vcjob elastic --type json -p '[{"op":"replace","path":"/spec/tasks/0/replicas","value":3}]' >/dev/null
check "scaled to 3 replicas: elastic-w-3 is deleted, 3 run" \
    wait_for 30 bash -c "$(declare -f pods_exist pods_running); pods_exist elastic- 3 && pods_running elastic- 3 && ! kubectl get pod elastic-w-3 >/dev/null 2>&1"
kubectl patch vcjob elastic --type json -p '[{"op":"replace","path":"/spec/minAvailable","value":3}]' >/dev/null
pg_minmember() { kubectl get pg --no-headers 2>/dev/null | awk '$1 ~ /^elastic-/ {print $3}'; }
check "minAvailable raised to 3: the PodGroup's minMember follows" \
    wait_for 30 equals 3 pg_minmember
reset

# --- job plugins: svc (Service, hosts ConfigMap, env) and ssh (Secret) -----
"$HERE/nodes.sh" "$D" 1 8 s >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  minAvailable: 3
  plugins: {svc: [], ssh: [], env: [], mpi: []}
  tasks:
  - name: master
    replicas: 1
    template: {spec: {containers: [{name: c, image: busybox}]}}
  - name: worker
    replicas: 2
    template: {spec: {containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]}}
YAML
check "svc: all three pods run" wait_for 60 pods_running mpi- 3
check "svc: headless Service mpi selects the job's pods" \
    equals "None/mpi" kubectl get service mpi -o jsonpath='{.spec.clusterIP}/{.spec.selector.volcano\.sh/job-name}'
check "svc: ConfigMap mpi-svc lists the workers' hosts" \
    equals "mpi-worker-0.mpi,mpi-worker-1.mpi" kubectl get configmap mpi-svc -o jsonpath='{.data.VC_WORKER_HOSTS}'
check "svc: worker-1's hostname and subdomain make mpi-worker-1.mpi" \
    equals "mpi-worker-1.mpi" kubectl get pod mpi-worker-1 -o jsonpath='{.spec.hostname}.{.spec.subdomain}'
check "svc: pods get VC_MASTER_HOSTS from the ConfigMap and it is mounted at /etc/volcano" \
    bash -c "kubectl get pod mpi-worker-0 -o json | jq -e '[.spec.containers[0].env[] | select(.name==\"VC_MASTER_HOSTS\") | .valueFrom.configMapKeyRef.name] == [\"mpi-svc\"] and ([.spec.containers[0].volumeMounts[] | select(.mountPath==\"/etc/volcano\")] | length == 1)'"
check "ssh: Secret mpi-ssh holds a key pair and a config with 3 hosts" \
    bash -c "kubectl get secret mpi-ssh -o jsonpath='{.data.config}' | base64 -d | grep -c '^Host ' | grep -qx 3 && kubectl get secret mpi-ssh -o jsonpath='{.data.id_rsa}' | base64 -d | grep -q 'BEGIN RSA PRIVATE KEY'"
check "env: each pod gets VC_TASK_INDEX" \
    equals "1" kubectl get pod mpi-worker-1 -o jsonpath='{.spec.containers[0].env[?(@.name=="VC_TASK_INDEX")].value}'
check "mpi: the master gets MPI_HOST, the workers' hosts, and port 22 as mpijob-port" \
    equals "mpi-worker-0.mpi,mpi-worker-1.mpi mpijob-port/22" kubectl get pod mpi-master-0 -o jsonpath='{.spec.containers[0].env[?(@.name=="MPI_HOST")].value} {.spec.containers[0].ports[0].name}/{.spec.containers[0].ports[0].containerPort}'
check "mpi: a worker gets the port, not MPI_HOST" \
    equals "mpijob-port/" kubectl get pod mpi-worker-0 -o jsonpath='{.spec.containers[0].ports[0].name}/{.spec.containers[0].env[?(@.name=="MPI_HOST")].value}'
{ job2 pt 'plugins: {pytorch: ["--master=master", "--worker=worker", "--port=29500"]}' master 1 worker 2
  echo ---
  job2 tf 'plugins: {tensorflow: ["--port=5000"]}' ps 1 worker 2
} | kubectl apply -f - >/dev/null
check "pytorch and tensorflow jobs run" wait_for 60 bash -c "$(declare -f pods_running); pods_running pt- 3 && pods_running tf- 3"
penv() { # POD NAME: the value of env NAME of its first container
    kubectl get pod "$1" -o jsonpath="{.spec.containers[0].env[?(@.name==\"$2\")].value}"
}
check "pytorch: worker-1 gets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK as Volcano sets them" \
    equals "pt-master-0.pt 29500 3 2" bash -c "$(declare -f penv); echo \$(penv pt-worker-1 MASTER_ADDR) \$(penv pt-worker-1 MASTER_PORT) \$(penv pt-worker-1 WORLD_SIZE) \$(penv pt-worker-1 RANK)"
check "pytorch: the master is RANK 0 with the port open as pytorchjob-port" \
    equals "0 pytorchjob-port/29500" bash -c "$(declare -f penv); echo \$(penv pt-master-0 RANK) \$(kubectl get pod pt-master-0 -o jsonpath='{.spec.containers[0].ports[0].name}/{.spec.containers[0].ports[0].containerPort}')"
check "tensorflow: TF_CONFIG names the cluster and the pod's task, as Go marshals it" \
    equals '{"cluster":{"ps":["tf-ps-0.tf:5000"],"worker":["tf-worker-0.tf:5000","tf-worker-1.tf:5000"]},"task":{"type":"worker","index":1}}' \
    penv tf-worker-1 TF_CONFIG
reset

# --- a Deployment's group-min-member reaches its PodGroup ---------------------
"$HERE/nodes.sh" "$D" 1 8 dp >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gangdep
  annotations: {scheduling.volcano.sh/group-min-member: "3"}
spec:
  replicas: 3
  selector: {matchLabels: {app: gangdep}}
  template:
    metadata: {labels: {app: gangdep}}
    spec:
      schedulerName: volcano
      containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
check "Deployment with group-min-member 3: its 3 pods run" wait_for 60 pods_running gangdep- 3
check "its PodGroup podgroup-<ReplicaSet uid> has minMember 3 and 3 GPUs of minResources" \
    bash -c "rs=\$(kubectl get rs -l app=gangdep -o jsonpath='{.items[0].metadata.uid}'); test \"\$(kubectl get pg podgroup-\$rs -o jsonpath='{.spec.minMember}/{.spec.minResources.nvidia\.com/gpu}')\" = 3/3"
kubectl delete deployment gangdep >/dev/null 2>&1
reset

# --- bad Jobs: refused, or reported on the Job, and nothing else moves -----
refused() { # PATTERN < YAML
    local out
    out=$(kubectl apply -f - 2>&1) && { echo "accepted: $out"; return 1; }
    echo "$out" | grep -q "$1" || { echo "$out"; return 1; }
}
check "minAvailable above the total replicas is refused" refused 'must not exceed the total replicas' <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad-min}
spec: {minAvailable: 5, tasks: [{name: w, replicas: 2, template: {spec: {containers: [{name: c, image: x}]}}}]}
YAML
check "an unknown policy event is refused" refused 'Unsupported value: "PodExploded"' <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad-event}
spec: {policies: [{event: PodExploded, action: RestartJob}], tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: x}]}}}]}
YAML
"$HERE/nodes.sh" "$D" 1 8 b >/dev/null 2>&1
cat <<'YAML' | kubectl apply -f - >/dev/null
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad-template}
spec: {tasks: [{name: w, replicas: 2}]}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad-action}
spec: {policies: [{event: PodFailed, action: Explode}], tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: x}]}}}]}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad-queue}
spec: {queue: nosuch, tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: c, image: x}]}}}]}
YAML
one_gpu_job fine 2 2 '' | kubectl apply -f - >/dev/null
check "a task without a template: Failed, the message names the field" \
    wait_for 20 equals "Failed: spec.tasks[0].template: required" job_field bad-template '{.status.state.phase}: {.status.state.message}'
check "an unknown action: Failed, the message names it" \
    wait_for 20 bash -c "kubectl get vcjob bad-action -o jsonpath='{.status.state.phase}: {.status.state.message}' | grep -q '^Failed: spec.policies\[0\].action: unknown action \"Explode\"'"
check "a queue that does not exist: Pending, and the job says why" \
    wait_for 20 bash -c "kubectl get vcjob bad-queue -o jsonpath='{.status.state.phase}: {.status.state.message}' | grep -q '^Pending: .*queue \"nosuch\" does not exist'"
check "no pod is made for the refused jobs" bash -c "! kubectl get pods --no-headers 2>/dev/null | grep -Eq '^bad-(template|action)-'"
check "and a good job next to them runs" wait_for 60 pods_running fine- 2
# --- fields muster does not act on are said on the PodGroup, not dropped -----
job2 topo '' head 1 worker 1 'dependsOn: {name: [head]}' | kubectl apply -f - >/dev/null
pg_of() { kubectl get pg -o custom-columns=N:.metadata.name --no-headers | grep "^$1-"; }
unsupported_said() {
    local pg
    pg=$(pg_of topo) || return 1
    kubectl get pg "$pg" -o jsonpath='{.status.conditions[?(@.type=="Unsupported")].message}' |
        grep -qx "muster does not act on the vcjob's spec.tasks\[1\].dependsOn: the gang is scheduled as if it were not set"
}
check "dependsOn: the PodGroup's Unsupported condition names the field" \
    wait_for 60 unsupported_said
check "and the gang runs" wait_for 60 pods_running topo- 2
check "gated gangs went to the release binder (bound, or met at /bind)" \
    bash -c "$(declare -f at_release); METRICS=$METRICS; test \"\$(at_release bound stale)\" -ge 1"
# --- networkTopology on HyperNodes of 2 racks (issue 12, item 4) -------------
reset
"$HERE/nodes.sh" "$D" 2 8 rack-a >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 2 8 rack-b >/dev/null 2>&1
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-a}
spec:
  tier: 1
  tierName: rack
  members: [{type: Node, selector: {regexMatch: {pattern: "^rack-a-"}}}]
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-b}
spec:
  tier: 1
  tierName: rack
  members: [{type: Node, selector: {labelMatch: {matchLabels: {muster.e2e/pool: rack-b}}}}]
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: spine}
spec:
  tier: 2
  tierName: spine
  members:
  - {type: HyperNode, selector: {exactMatch: {name: rack-a}}}
  - {type: HyperNode, selector: {exactMatch: {name: rack-b}}}
YAML
hn_columns() { kubectl get hypernodes --no-headers | awk '{print $1, $2, $3, $4}' | tr '\n' ' '; }
check "kubectl get hypernodes: tier, tier name and the nodes muster counts in each" \
    wait_for 30 equals "rack-a 1 rack 2 rack-b 1 rack 2 spine 2 spine 4 " hn_columns
# 4 GPUs of one rack-a node taken: without the field the 8-GPU pods would
# take the other rack-a node and a rack-b one
one_gpu_job busy 4 4 '' | kubectl apply -f - >/dev/null
check "a 4-pod job takes 4 GPUs" wait_for 60 pods_running busy- 4
gpu8_job() { # NAME REPLICAS TIER
    cat <<YAML
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: $1}
spec:
  minAvailable: $2
  networkTopology: {mode: hard, highestTierAllowed: $3}
  tasks:
  - name: w
    replicas: $2
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
}
gpu8_job ring 2 1 | kubectl apply -f - >/dev/null
check "a 2 x 8-GPU vcjob, networkTopology hard, highestTierAllowed 1, runs" \
    wait_for 60 pods_running ring- 2
racks_of() { # PREFIX: the racks its pods' nodes are in
    kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
        awk -v p="$1" 'index($1, p) == 1 {sub(/-[0-9]+$/, "", $2); print $2}' | sort -u | tr '\n' ' '
}
check "in one rack: both its pods are on rack-b's nodes" \
    equals "rack-b " racks_of ring-
gpu8_job wide 3 1 | kubectl apply -f - >/dev/null
never_said() {
    local pg
    pg=$(pg_of wide) || return 1
    kubectl get pg "$pg" -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Unschedulable")].message}' |
        grep -q "^Pending .*can never run in one HyperNode of tier <= 1 (networkTopology hard): its 3 pods ask 24 nvidia.com/gpu, the most any such HyperNode has is 16 (rack-a)"
}
check "a 3 x 8-GPU one that no rack could hold is not admitted, and says so" \
    wait_for 60 never_said
check "and none of its pods is bound" bash -c "! kubectl get pods -o wide --no-headers | grep '^wide-' | grep -q rack-"
# --- the same on a tree of node labels (hyperNodeTiers), no HyperNodes ------
reset
kubectl delete hypernodes --all >/dev/null 2>&1
{ "$MUSTER" simulate --print-config
  printf 'hyperNodeTiers:\n- nodeLabel: muster.e2e/pool\n  tierName: rack\n'
} >"$D/labels.conf"
stop_muster
MUSTER_SERVE_ARGS=(--initial-list pages --config "$D/labels.conf")
if start_muster >/dev/null 2>&1; then
    ok "labels: muster restarts with hyperNodeTiers [muster.e2e/pool]"
else
    not_ok "labels: muster restarts with hyperNodeTiers [muster.e2e/pool]" "$(tail -20 "$D/muster.log")"
fi
MUSTER_SERVE_ARGS=(--initial-list pages)
"$HERE/nodes.sh" "$D" 2 8 rack-a >/dev/null 2>&1
"$HERE/nodes.sh" "$D" 2 8 rack-b >/dev/null 2>&1
one_gpu_job busy2 4 4 '' | kubectl apply -f - >/dev/null
check "labels: a 4-pod job takes 4 GPUs" wait_for 60 pods_running busy2- 4
gpu8_job ring2 2 1 | kubectl apply -f - >/dev/null
check "labels: the hard 2 x 8-GPU vcjob runs" wait_for 60 pods_running ring2- 2
check "labels: in one pool: both its pods on rack-b's nodes" \
    equals "rack-b " racks_of ring2-
check "muster never crashed" kill -0 "$MPID"
tap_end
