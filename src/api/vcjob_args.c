/*
 * vcjob_args.c - the svc and ssh job plugins' arguments, read as Go's flag
 * package reads them (vcjob_args.h).
 */
#include "api/vcjob_args.h"

#include <stddef.h>
#include <string.h>

#include "api/strconv.h"

enum flag_type { FLAG_BOOL, FLAG_STR, FLAG_PORT };

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

static int parse_port(const char *s, int *out)
{
    long v = 0;

    if (!*s)
        return -EINVAL;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -EINVAL;
        v = v * 10 + (*s - '0');
        if (v > 65535)
            return -EINVAL;
    }
    if (v < 1)
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

/* Parses args into out (a struct mu_svc_args or mu_ssh_args). */
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
            if (parse_port(val, (int *)(void *)field) < 0)
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: --%s: \"%s\" is "
                                  "not a port (1-65535)",
                                  plugin, at, f->name, val);
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
