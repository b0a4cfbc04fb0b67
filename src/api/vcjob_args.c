/*
 * vcjob_args.c - the job plugins' arguments, read as Go's flag package
 * reads them (vcjob_args.h).
 */
#include "api/vcjob_args.h"

#include <stddef.h>
#include <string.h>

#include "api/strconv.h"

enum flag_type { FLAG_BOOL, FLAG_STR, FLAG_NAME, FLAG_PORT, FLAG_SECONDS };

struct flag {
    const char *name;
    enum flag_type type;
    size_t off; /* of the field in the args struct */
};

static const struct flag svc_flags[] = {
    {"publish-not-ready-addresses", FLAG_BOOL,
     offsetof(struct mu_svc_args, publish_not_ready)},
    {"disable-network-policy", FLAG_BOOL,
     offsetof(struct mu_svc_args, no_network_policy)},
    {"inject-hosts-env", FLAG_BOOL,
     offsetof(struct mu_svc_args, inject_hosts_env)},
};

static const struct flag ssh_flags[] = {
    {"ssh-key-file-path", FLAG_STR, offsetof(struct mu_ssh_args, key_path)},
    {"ssh-private-key", FLAG_STR, offsetof(struct mu_ssh_args, private_key)},
    {"ssh-public-key", FLAG_STR, offsetof(struct mu_ssh_args, public_key)},
    {"ssh-port", FLAG_PORT, offsetof(struct mu_ssh_args, port)},
};

static const struct flag pytorch_flags[] = {
    {"master", FLAG_NAME, offsetof(struct mu_pytorch_args, master)},
    {"worker", FLAG_NAME, offsetof(struct mu_pytorch_args, worker)},
    {"port", FLAG_PORT, offsetof(struct mu_pytorch_args, port)},
    {"wait-master-enabled", FLAG_BOOL,
     offsetof(struct mu_pytorch_args, wait_master)},
    {"wait-master-timeout", FLAG_SECONDS,
     offsetof(struct mu_pytorch_args, wait_timeout)},
    {"wait-master-image", FLAG_NAME,
     offsetof(struct mu_pytorch_args, wait_image)},
};

static const struct flag tf_flags[] = {
    {"ps", FLAG_NAME, offsetof(struct mu_tf_args, ps)},
    {"worker", FLAG_NAME, offsetof(struct mu_tf_args, worker)},
    {"chief", FLAG_NAME, offsetof(struct mu_tf_args, chief)},
    {"evaluator", FLAG_NAME, offsetof(struct mu_tf_args, evaluator)},
    {"port", FLAG_PORT, offsetof(struct mu_tf_args, port)},
};

static const struct flag mpi_flags[] = {
    {"master", FLAG_NAME, offsetof(struct mu_mpi_args, master)},
    {"worker", FLAG_NAME, offsetof(struct mu_mpi_args, worker)},
    {"port", FLAG_PORT, offsetof(struct mu_mpi_args, port)},
};

/* A decimal in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
    long v = 0;

    if (!*s)
        return -EINVAL;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        v = v * 10 + (*s - '0');
        if (v > hi)
            return -EINVAL;
    }
    if (v < lo)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int unknown_flag(struct mu_err *err, const char *plugin, size_t at,
                        const char *name, size_t len,
                        const struct flag *flags, size_t n)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    for (size_t i = 0; i < n; i++)
        mu_sb_addf(&sb, "%s--%s", i ? ", " : "", flags[i].name);
    mu_err_set(err, -EINVAL,
               "spec.plugins.%s[%zu]: unknown flag --%.*s (known: %s)",
               plugin, at, (int)len, name, sb.buf);
    mu_sb_release(&sb);
    return -EINVAL;
}

/* Parses args into out (one of the mu_*_args structs). */
static int parse_flags(const char *plugin, const struct flag *flags,
                       size_t nflags, const json_t *args, void *out,
                       struct mu_err *err)
{
    size_t nargs, i = 0;

    if (!args || json_is_null(args))
        return 0;
    if (!json_is_array(args))
        return mu_err_set(err, -EINVAL,
                          "spec.plugins.%s: must be a list of strings",
                          plugin);
    nargs = json_array_size(args);
    while (i < nargs) {
        size_t at = i, len;
        const char *a = json_string_value(json_array_get(args, i++));
        const char *name, *eq, *val;
        const struct flag *f = NULL;
        char *field;

        if (!a)
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s[%zu]: must be a string",
                              plugin, at);
        if (a[0] != '-' || a[1] == '\0')
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s[%zu]: \"%s\" is not a flag "
                              "(--name or --name=value)",
                              plugin, at, a);
        name = a[1] == '-' ? a + 2 : a + 1;
        if (*name == '\0' || *name == '-' || *name == '=')
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s[%zu]: bad flag syntax: %s",
                              plugin, at, a);
        eq = strchr(name, '=');
        len = eq ? (size_t)(eq - name) : strlen(name);
        for (size_t k = 0; k < nflags && !f; k++)
            if (strlen(flags[k].name) == len &&
                memcmp(flags[k].name, name, len) == 0)
                f = &flags[k];
        if (!f)
            return unknown_flag(err, plugin, at, name, len, flags, nflags);
        field = (char *)out + f->off;
        if (f->type == FLAG_BOOL) {
            val = eq ? eq + 1 : "true";
            if (mu_strconv_bool(val, (bool *)(void *)field) < 0)
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: --%s: \"%s\" is "
                                  "not a boolean (true or false)",
                                  plugin, at, f->name, val);
            continue;
        }
        if (eq) {
            val = eq + 1;
        } else if (i < nargs) {
            val = json_string_value(json_array_get(args, i++));
            if (!val)
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: must be a string",
                                  plugin, i - 1);
        } else {
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s[%zu]: --%s needs a value",
                              plugin, at, f->name);
        }
        if (f->type == FLAG_PORT) {
            if (parse_int(val, 1, 65535, (int *)(void *)field) < 0)
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: --%s: \"%s\" is "
                                  "not a port (1-65535)",
                                  plugin, at, f->name, val);
        } else if (f->type == FLAG_SECONDS) {
            if (parse_int(val, 0, 86400 * 365, (int *)(void *)field) < 0)
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: --%s: \"%s\" is "
                                  "not a number of seconds",
                                  plugin, at, f->name, val);
        } else if (f->type == FLAG_NAME && !*val) {
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s[%zu]: --%s must not be empty",
                              plugin, at, f->name);
        } else {
            *(const char **)(void *)field = val;
        }
    }
    return 0;
}

int mu_vcjob_svc_args(const json_t *args, struct mu_svc_args *out,
                      struct mu_err *err)
{
    struct mu_svc_args a = {.inject_hosts_env = true};
    int rc = parse_flags("svc", svc_flags, MU_ARRAY_LEN(svc_flags), args, &a,
                         err);

    if (rc == 0)
        *out = a;
    return rc;
}

int mu_vcjob_ssh_args(const json_t *args, struct mu_ssh_args *out,
                      struct mu_err *err)
{
    struct mu_ssh_args a = {.key_path = MU_SSH_ROOT_PATH,
                            .port = MU_SSH_DEFAULT_PORT};
    int rc = parse_flags("ssh", ssh_flags, MU_ARRAY_LEN(ssh_flags), args, &a,
                         err);

    if (rc < 0)
        return rc;
    if (!*a.key_path)
        return mu_err_set(err, -EINVAL,
                          "spec.plugins.ssh: --ssh-key-file-path must not "
                          "be empty");
    if (a.private_key && !*a.private_key)
        a.private_key = NULL;
    if (a.public_key && !*a.public_key)
        a.public_key = NULL;
    if (a.public_key && !a.private_key)
        return mu_err_set(err, -EINVAL,
                          "spec.plugins.ssh: --ssh-public-key needs "
                          "--ssh-private-key (Volcano would ignore it and "
                          "generate a key)");
    *out = a;
    return 0;
}

int mu_vcjob_pytorch_args(const json_t *args, struct mu_pytorch_args *out,
                          struct mu_err *err)
{
    struct mu_pytorch_args a = {.master = "master", .worker = "worker",
                                .port = 23456, .wait_timeout = 300,
                                .wait_image = "busybox:1.36.1"};
    int rc = parse_flags("pytorch", pytorch_flags,
                         MU_ARRAY_LEN(pytorch_flags), args, &a, err);

    if (rc == 0)
        *out = a;
    return rc;
}

int mu_vcjob_tf_args(const json_t *args, struct mu_tf_args *out,
                     struct mu_err *err)
{
    struct mu_tf_args a = {.ps = "ps", .worker = "worker", .chief = "chief",
                           .evaluator = "evaluator", .port = 2222};
    int rc = parse_flags("tensorflow", tf_flags, MU_ARRAY_LEN(tf_flags), args,
                         &a, err);

    if (rc == 0)
        *out = a;
    return rc;
}

int mu_vcjob_mpi_args(const json_t *args, struct mu_mpi_args *out,
                      struct mu_err *err)
{
    struct mu_mpi_args a = {.master = "master", .worker = "worker",
                            .port = MU_SSH_DEFAULT_PORT};
    int rc = parse_flags("mpi", mpi_flags, MU_ARRAY_LEN(mpi_flags), args, &a,
                         err);

    if (rc == 0)
        *out = a;
    return rc;
}
