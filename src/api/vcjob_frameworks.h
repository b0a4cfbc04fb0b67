/*
 * vcjob_frameworks.h - what Volcano's distributed-framework job plugins
 * (pytorch, tensorflow, mpi; volcano-api.md §3.5) put on each pod of a Job,
 * exactly as Volcano v1.14 does it (pkg/controllers/job/plugins/
 * distributed-framework): env, container ports and the pytorch workers'
 * wait-for-master init container. A host is "<hostname>.<subdomain>" of the
 * task's template, hostname defaulting to "<job>-<task>-<i>" and subdomain
 * to the job's name (the svc plugin's Service, which every one of them
 * implies, resolves them).
 *
 *   pytorch     every container: port "pytorchjob-port" (--port, 23456)
 *               unless one has that number; MASTER_ADDR (the master task's
 *               replica 0), MASTER_PORT, WORLD_SIZE (replicas of the master
 *               and worker tasks); RANK 0 on the master, index + 1 on a
 *               worker, none on other tasks. Nothing without a master task.
 *               --wait-master-enabled: workers get an init container
 *               "wait-for-master" (--wait-master-image) that waits for the
 *               master's port for --wait-master-timeout seconds.
 *   tensorflow  every container: TF_CONFIG, {"cluster": {"ps", "worker",
 *               "chief", "evaluator": ["<host>:<port>", ...]} (those that
 *               exist), "task": {"type", "index"}} as Go marshals it; the
 *               type is the role the task's name plays, else the name.
 *               Nothing for a job of one task of one replica.
 *   mpi         every container and init container: port "mpijob-port"
 *               (--port, 22) unless present; on the master task's pods also
 *               MPI_HOST, the worker task's hosts joined with "," (one host
 *               when its template sets hostname). A master without a worker
 *               task gets nothing.
 *
 * Pure; the job is mu_vcjob_parse()'s (vcjob_int.h), its arguments already
 * checked, so nothing here fails.
 */
#ifndef MU_API_VCJOB_FRAMEWORKS_H
#define MU_API_VCJOB_FRAMEWORKS_H

#include <jansson.h>
#include <stddef.h>

#include "api/vcjob_int.h"

/* Applies j's framework plugins to spec, the pod spec of replica `index`
 * of task ti. */
void mu_vcjob_frameworks_pod(const struct job *j, size_t ti, int index,
                             json_t *spec);

#endif
