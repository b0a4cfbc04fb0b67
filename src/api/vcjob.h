/*
 * vcjob.h - Volcano's batch.volcano.sh/v1alpha1 Job read as Volcano's
 * admission webhook reads it: every field checked, the defaults applied
 * (volcano-api.md §2.1, §3.1). The objects a Job makes are built on top:
 * its pods and PodGroup by vcjob_expand.h, its plugins' Service,
 * ConfigMap, NetworkPolicy and Secret by vcjob_plugins.h; the plugins'
 * arguments are read by vcjob_args.h. Inside src/api, vcjob_int.h shares
 * the validated job (mu_vcjob_parse) with those builders.
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

/* The ownerReferences of an object a Job controls (its pods, PodGroup and
 * plugin objects): the Job, as controller, blocking owner deletion. New
 * array, owned by the caller. */
json_t *mu_vcjob_owner_refs(const char *name, const char *uid);

#endif
