/*
 * vcjob.h - Volcano's batch.volcano.sh/v1alpha1 Job: validation and the
 * expansion into a PodGroup and pods exactly as Volcano's job controller
 * makes them (volcano-api.md §2.1, §3.1-3.3, §3.5 env plugin).
 *
 * The simulator uses the expansion to turn a vcjob into objects; the job
 * controller (src/ctrl) uses the same functions against the API server, so
 * both agree on names, labels and annotations.
 *
 * Ownership: inputs are borrowed; every json_t written to an out-parameter
 * is a new reference owned by the caller. On failure nothing is written and
 * err names the field ("spec.tasks[1].template: required").
 */
#ifndef MU_API_VCJOB_H
#define MU_API_VCJOB_H

#include <jansson.h>
#include <stdint.h>

#include "api/object.h"
#include "common/mu.h"

/* Scheduling gate muster puts on the pods it creates (DESIGN.md). */
#define MU_GATE MU_GATE_NAME

/*
 * Checks a Job the way Volcano's admission webhook does and applies its
 * defaults to a copy: schedulerName "volcano", queue "default", maxRetry 3,
 * task names default<i>, task minAvailable = replicas, job minAvailable =
 * sum of task minAvailable; schedulerName and priorityClassName copied into
 * templates that have none. Rejects: no tasks; a task without a template;
 * duplicate task names; negative replicas; task minAvailable > replicas;
 * job minAvailable > total replicas; unknown policy event or action;
 * unknown job plugin. Returns 0 and *out (the defaulted job, owned), or
 * -EINVAL with err.
 */
int mu_vcjob_default(const json_t *job, json_t **out, struct mu_err *err);

/*
 * The PodGroup of a defaulted job: name "<job>-<job uid>", namespace of the
 * job, labels and annotations of the job, ownerReference to it, spec
 * {minMember, minTaskMember, queue, priorityClassName, minResources}, where
 * minResources follows volcano-api.md §3.3 but counts real requests (GPUs
 * included: Volcano's omission of them is a bug muster does not copy).
 * `uid` is the job's metadata.uid (required).
 */
int mu_vcjob_podgroup(const json_t *job, json_t **out, struct mu_err *err);

/*
 * The pod for task `task` (index into spec.tasks) and replica `index`:
 * name "<job>-<task>-<index>", the template's metadata and spec, labels
 * volcano.sh/job-name, volcano.sh/job-namespace, volcano.sh/queue-name,
 * volcano.sh/task-spec, volcano.sh/task-index; annotations group-name,
 * job-name, queue-name, task-spec, task-index, job-version, template-uid,
 * job-retry-count (and the job's muster.io/ simulation annotations when the
 * template has none); an ownerReference to the job (controller: true);
 * the env plugin's VK_TASK_INDEX/VC_TASK_INDEX when `plugins.env` is set;
 * with `plugins.svc`: hostname/subdomain, the <job>-svc ConfigMap mounted at
 * /etc/volcano and VC_<TASK>_HOSTS/VC_<TASK>_NUM env (vcjob_plugins.h);
 * with `plugins.ssh`: the <job>-ssh Secret mounted as .ssh; scheduling
 * gate MU_GATE when gated is non-zero. `version` and `retry` are status.version and
 * status.retryCount.
 */
int mu_vcjob_pod(const json_t *job, size_t task, int index, int version,
                 int retry, int gated, json_t **out, struct mu_err *err);

#endif
