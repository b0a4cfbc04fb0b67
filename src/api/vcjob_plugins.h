/*
 * vcjob_plugins.h - the objects Volcano's `svc` and `ssh` job plugins make
 * for a batch.volcano.sh/v1alpha1 Job (volcano-api.md §3.5), as pure JSON
 * builders. The job controller creates them before the job's pods; the pod
 * side (volumes, mounts, env) is applied by mu_vcjob_pod() (vcjob.h).
 *
 * What they make, exactly as Volcano does (vc: pkg/controllers/job/plugins/
 * svc/svc.go, ssh/ssh.go, as of v1.15):
 *
 *   svc  Service <job> (headless: clusterIP None, selector
 *        volcano.sh/job-name and volcano.sh/job-namespace, no ports,
 *        publishNotReadyAddresses only with --publish-not-ready-addresses);
 *        ConfigMap <job>-svc with, per task, "<t>.host" (the hosts joined
 *        with "\n", no trailing newline), "VC_<T>_HOSTS" (joined with ",")
 *        and "VC_<T>_NUM", where <t> is the task name with '-' turned into
 *        '_' and <T> the same upper-cased; a host is "<hostname>.<subdomain>"
 *        = "<job>-<task>-<i>.<job>" unless the task's template sets hostname
 *        (then the task has that one host) or subdomain; NetworkPolicy <job>
 *        admitting ingress only from the job's pods, unless
 *        --disable-network-policy.
 *   ssh  Secret <job>-ssh with id_rsa (PKCS#1 PEM), id_rsa.pub and
 *        authorized_keys ("ssh-rsa <base64>\n") and config
 *        ("StrictHostKeyChecking no", "UserKnownHostsFile /dev/null", then
 *        "Host <hostname>" / "  HostName <hostname>.<subdomain>" /
 *        "  Port <port>" per pod, hosts as for svc).
 *
 * Every object carries the job's namespace and one ownerReference to the Job
 * (batch.volcano.sh/v1alpha1, controller and blockOwnerDeletion true) and no
 * labels (Volcano puts none). Secret values are base64 under `data`, as
 * Volcano writes them.
 *
 * Plugin arguments are read by vcjob_args.h; mu_vcjob_default() (vcjob.h)
 * refuses a job whose arguments it refuses, so a job it accepted never
 * fails here for its arguments.
 *
 * Ownership: inputs are borrowed; every json_t written to an out-parameter
 * is a new reference owned by the caller. Errors are 0 or a negative errno;
 * on failure nothing is written to the out-parameter and err (when not
 * NULL) names the field: "metadata.uid: required",
 * "spec.plugins.ssh[0]: --ssh-port: \"abc\" is not a port (1-65535)".
 */
#ifndef MU_API_VCJOB_PLUGINS_H
#define MU_API_VCJOB_PLUGINS_H

#include <jansson.h>
#include <stdbool.h>

#include "api/vcjob_args.h"
#include "common/mu.h"

/* Bits of the generated RSA key (Volcano: 2048). */
#define MU_SSH_RSA_BITS 2048

/*
 * The builders. `job` is a Job as submitted or as mu_vcjob_default()
 * returns it; it is checked and defaulted the same way first (so the svc
 * plugin the webhook implies for pytorch, tensorflow, mpi and ray counts,
 * and ssh for mpi), and metadata.name and metadata.uid are required
 * (-EINVAL, "metadata.uid: required"). When the job does not use the
 * plugin, or for the NetworkPolicy when --disable-network-policy is given,
 * they return 0 with *out = NULL.
 */
int mu_vcjob_svc_service(const json_t *job, json_t **out, struct mu_err *err);
int mu_vcjob_svc_configmap(const json_t *job, json_t **out,
                           struct mu_err *err);
int mu_vcjob_svc_networkpolicy(const json_t *job, json_t **out,
                               struct mu_err *err);

/*
 * The ssh Secret. Without --ssh-private-key it generates a fresh RSA key of
 * MU_SSH_RSA_BITS bits (libcrypto's random source), so two calls give two
 * keys: the controller must create the Secret once and keep it. With both
 * keys given it stores them verbatim, as Volcano does; with only the
 * private key it derives the public one, and a private key libcrypto cannot
 * read (not PEM RSA) is then -EINVAL naming spec.plugins.ssh. -ENOMEM or
 * -EIO when libcrypto fails.
 */
int mu_vcjob_ssh_secret(const json_t *job, json_t **out, struct mu_err *err);

#endif
