/*
 * vcjob_args.h - the arguments of a Job's svc, ssh, pytorch, tensorflow
 * and mpi plugins (spec.plugins.<name>), read the way Go's flag package
 * reads them ("-x" or "--x", "--x=v", or "--x v" for non-boolean flags;
 * booleans take 1, 0, t, f, true, false in Go's spellings), except that
 * muster refuses what Volcano only logs and ignores: an unknown flag, a
 * non-flag argument and a malformed value. The Job's checks (vcjob.h)
 * refuse a job with such arguments, so the builders (vcjob_plugins.h,
 * vcjob_expand.h) never fail on them.
 *
 * Pure: no I/O, thread-safe. Strings written to the structs are borrowed
 * from `args`. Errors are 0 or -EINVAL; on failure nothing is written to
 * the out-parameter and err (when not NULL) names the argument:
 * "spec.plugins.ssh[0]: --ssh-port: \"abc\" is not a port (1-65535)".
 */
#ifndef MU_API_VCJOB_ARGS_H
#define MU_API_VCJOB_ARGS_H

#include <jansson.h>
#include <stdbool.h>

#include "common/mu.h"

/* Where the svc ConfigMap is mounted, and the ssh default key directory. */
#define MU_SVC_MOUNT_PATH "/etc/volcano"
#define MU_SSH_ROOT_PATH "/root/.ssh"
#define MU_SSH_DEFAULT_PORT 22

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

/* The distributed-framework plugins' arguments, defaults as in Volcano
 * (pkg/controllers/job/plugins/distributed-framework, v1.14). Task names
 * are borrowed from the args. */
struct mu_pytorch_args {
    const char *master;     /* --master, "master" */
    const char *worker;     /* --worker, "worker" */
    int port;               /* --port, 23456 */
    bool wait_master;       /* --wait-master-enabled, false */
    int wait_timeout;       /* --wait-master-timeout, seconds, 300 */
    const char *wait_image; /* --wait-master-image, "busybox:1.36.1" */
};
struct mu_tf_args {
    const char *ps, *worker, *chief, *evaluator; /* --ps ps, --worker worker,
                                                    --chief chief,
                                                    --evaluator evaluator */
    int port;               /* --port, 2222 */
};
struct mu_mpi_args {
    const char *master;     /* --master, "master" */
    const char *worker;     /* --worker, "worker" */
    int port;               /* --port, 22 */
};

/*
 * Reads spec.plugins.svc / spec.plugins.ssh (`args`: a JSON array of
 * strings, or NULL or null for none) into *out, defaults first. -EINVAL
 * with err "spec.plugins.svc[i]: ..." for an unknown flag, a non-flag
 * argument, a missing or malformed value; for ssh also an empty
 * --ssh-key-file-path and --ssh-public-key without --ssh-private-key
 * (Volcano would silently ignore the public key).
 */
int mu_vcjob_svc_args(const json_t *args, struct mu_svc_args *out,
                      struct mu_err *err);
int mu_vcjob_ssh_args(const json_t *args, struct mu_ssh_args *out,
                      struct mu_err *err);
/* The same for spec.plugins.pytorch, .tensorflow and .mpi; a task name
 * must not be empty, --wait-master-timeout is a whole number of seconds
 * >= 0 and --port a port. */
int mu_vcjob_pytorch_args(const json_t *args, struct mu_pytorch_args *out,
                          struct mu_err *err);
int mu_vcjob_tf_args(const json_t *args, struct mu_tf_args *out,
                     struct mu_err *err);
int mu_vcjob_mpi_args(const json_t *args, struct mu_mpi_args *out,
                      struct mu_err *err);

#endif
