/*
 * vcjob_expand.h - the objects Volcano's job controller makes for a
 * batch.volcano.sh/v1alpha1 Job: its PodGroup and its pods, exactly as
 * Volcano names, labels and annotates them (volcano-api.md §3.2, §3.3,
 * §3.5 env plugin). The job is checked and defaulted first (vcjob.h).
 *
 * The simulator uses them to turn a vcjob into objects; the job
 * controller (src/serve) uses the same functions against the API server,
 * so both agree on names, labels and annotations.
 *
 * Pure: no I/O, thread-safe. Ownership: inputs are borrowed; every json_t
 * written to an out-parameter is a new reference owned by the caller. On
 * failure nothing is written and err names the field
 * ("spec.tasks[1].template: required").
 */
#ifndef MU_API_VCJOB_EXPAND_H
#define MU_API_VCJOB_EXPAND_H

#include <jansson.h>
#include <stddef.h>

#include "api/vcjob.h"
#include "common/mu.h"

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
 * with `plugins.ssh`: the <job>-ssh Secret mounted as .ssh; the pytorch,
 * tensorflow and mpi plugins' env and ports (vcjob_frameworks.h); scheduling
 * gate MU_GATE when gated is non-zero. `version` and `retry` are status.version and
 * status.retryCount.
 */
int mu_vcjob_pod(const json_t *job, size_t task, int index, int version,
                 int retry, int gated, json_t **out, struct mu_err *err);

#endif
