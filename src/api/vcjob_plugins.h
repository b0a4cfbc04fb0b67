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
 * Plugin arguments are read the way Go's flag package reads them ("-x" or
 * "--x", "--x=v", or "--x v" for non-boolean flags; booleans take 1, 0, t,
 * f, true, false in Go's spellings), except that muster refuses what
 * Volcano only logs and ignores: an unknown flag, a non-flag argument and a
 * malformed value. mu_vcjob_default() and mu_vcjob_pod() refuse such a job
 * too, so a job they accepted never fails here for its arguments.
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

#include "common/mu.h"

/* Where the svc ConfigMap is mounted, and the ssh default key directory. */
#define MU_SVC_MOUNT_PATH "/etc/volcano"
#define MU_SSH_ROOT_PATH "/root/.ssh"
#define MU_SSH_DEFAULT_PORT 22
/* Bits of the generated RSA key (Volcano: 2048). */
#define MU_SSH_RSA_BITS 2048

/* The svc plugin's arguments, defaults as in Volcano. */
struct mu_svc_args {
    bool publish_not_ready; /* --publish-not-ready-addresses, false */
    bool no_network_policy; /* --disable-network-policy, false */
    bool inject_hosts_env;  /* --inject-hosts-env, true */
};

/* The ssh plugin's arguments; the strings are borrowed from the args. */
struct mu_ssh_args {
    const char *key_path;    /* --ssh-key-file-path, MU_SSH_ROOT_PATH */
    const char *private_key; /* --ssh-private-key (PEM), NULL: generate */
    const char *public_key;  /* --ssh-public-key, NULL: from the private */
    int port;                /* --ssh-port, 1-65535, MU_SSH_DEFAULT_PORT */
};

/*
 * Reads spec.plugins.svc / spec.plugins.ssh (`args`: a JSON array of
 * strings, or NULL or null for none) into *out, defaults first. -EINVAL
 * with err "spec.plugins.svc[i]: ..." for an unknown flag, a non-flag
 * argument, a missing or malformed value; for ssh also an empty
 * --ssh-key-file-path and --ssh-public-key without --ssh-private-key
 * (Volcano would silently ignore the public key). *out is written only on
 * success.
 */
int mu_vcjob_svc_args(const json_t *args, struct mu_svc_args *out,
                      struct mu_err *err);
int mu_vcjob_ssh_args(const json_t *args, struct mu_ssh_args *out,
                      struct mu_err *err);

/* The ownerReferences of an object a Job controls (its pods, PodGroup and
 * plugin objects): the Job, as controller, blocking owner deletion. */
json_t *mu_vcjob_owner_refs(const char *name, const char *uid);

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
