/*
 * vcjob_int.h - vcjob.c's internal half: the validated job that vcjob.c
 * (Volcano's webhook: checks and defaults) makes and vcjob_expand.c (the
 * controller's objects: pods and PodGroup) reads, and reading one
 * (mu_vcjob_parse, defined in vcjob.c). Not for use outside src/api.
 */
#ifndef MU_API_VCJOB_INT_H
#define MU_API_VCJOB_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/vcjob_args.h"
#include "common/mu.h"

#define ANN_JOB_NAME "volcano.sh/job-name"
#define ANN_JOB_NAMESPACE "volcano.sh/job-namespace"
#define ANN_QUEUE "volcano.sh/queue-name"
#define ANN_JOB_VERSION "volcano.sh/job-version"
#define ANN_TEMPLATE_UID "volcano.sh/template-uid"
#define ANN_RETRY_COUNT "volcano.sh/job-retry-count"
#define ANN_NUMA_POLICY "volcano.sh/numa-topology-policy"
#define ANN_COOLDOWN "volcano.sh/cooldown-time"

/* A validated job with the webhook's defaults resolved. Strings are
 * borrowed from the JSON it was read from. */
struct task {
    const json_t *json;
    const json_t *tmpl;
    const char *name;
    const char *topology;
    char defname[32]; /* "default<i>" when the task has no name */
    int32_t replicas;
    int32_t min;
};

struct job {
    const char *name;
    const char *ns;
    const char *uid;
    const char *queue;
    const char *sched;
    const char *pclass;
    const json_t *labels;
    const json_t *annotations;
    int32_t min;
    int32_t max_retry;
    int64_t task_min; /* sum of the tasks' minAvailable */
    bool env;
    bool svc;
    bool ssh;
    bool add_svc;
    bool add_ssh;
    bool pytorch, tensorflow, mpi; /* the distributed-framework plugins */
    struct mu_svc_args svc_args;
    struct mu_ssh_args ssh_args;
    struct mu_pytorch_args pytorch_args;
    struct mu_tf_args tf_args;
    struct mu_mpi_args mpi_args;
    size_t ntask;
    struct task *task;
};

/* Checks job as Volcano's webhook does and fills j with its defaults
 * resolved (strings borrowed from job). 0, or -EINVAL with the field at
 * fault in err (j then needs no release). */
int mu_vcjob_parse(const json_t *job, struct job *j, struct mu_err *err);
void mu_vcjob_job_release(struct job *j);

#endif
