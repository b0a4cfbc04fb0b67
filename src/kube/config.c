#include "kube/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/json.h"
#include "api/yaml.h"
#include "kube/caps.h"

/* One named entry of a kubeconfig (a cluster, user or context) and the file
 * it came from, which relative paths are resolved against. */
struct entry {
    const char *file;
    const char *name;
    json_t *body; /* borrowed from the file's document */
};

/* Everything read from the files of one load, merged. */
struct merged {
    struct mu_yaml_docs *docs; /* one set per file, kept for borrowing */
    char **files;              /* names of the files read, parallel */
    size_t n_files;
    size_t cap_files;
    const char *current;      /* current-context, borrowed */
    const char *current_file; /* file that set it */
    struct entry *v[3];       /* clusters, users, contexts */
    size_t n[3];
    size_t cap[3];
};

enum { CLUSTERS, USERS, CONTEXTS };
static const char *const list_key[] = {"clusters", "users", "contexts"};
static const char *const body_key[] = {"cluster", "user", "context"};

static void wipe(char *p, size_t n)
{
    volatile char *v = p;

    while (p && n--)
        *v++ = 0;
}

static void free_secret(char *p)
{
    if (p)
        wipe(p, strlen(p));
    free(p);
}

void mu_kube_config_init(struct mu_kube_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
}

void mu_kube_config_release(struct mu_kube_config *cfg)
{
    free(cfg->server);
    free(cfg->ca);
    free(cfg->cert);
    wipe(cfg->key, cfg->key_len);
    free(cfg->key);
    free_secret(cfg->token);
    free(cfg->token_file);
    free(cfg->namespace);
    free(cfg->source);
    mu_kube_config_init(cfg);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d;

    if (!p)
        return NULL;
    d = mu_xmalloc(n + 1);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

void mu_kube_config_copy(struct mu_kube_config *dst,
                         const struct mu_kube_config *src)
{
    dst->server = mu_xstrdup_or_null(src->server);
    dst->ca = dup_bytes(src->ca, src->ca_len);
    dst->ca_len = src->ca_len;
    dst->cert = dup_bytes(src->cert, src->cert_len);
    dst->cert_len = src->cert_len;
    dst->key = dup_bytes(src->key, src->key_len);
    dst->key_len = src->key_len;
    dst->token = mu_xstrdup_or_null(src->token);
    dst->token_file = mu_xstrdup_or_null(src->token_file);
    dst->namespace = mu_xstrdup_or_null(src->namespace);
    dst->source = mu_xstrdup_or_null(src->source);
    dst->insecure = src->insecure;
    dst->api_table = src->api_table;
}

int mu_kube_read_file(const char *path, size_t max, char **buf, size_t *len,
                      struct mu_err *err)
{
    struct mu_sb sb;
    char chunk[8192];
    ssize_t got;
    int fd, rc = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        return mu_err_set(err, rc, "%s: %s", path, strerror(-rc));
    }
    mu_sb_init(&sb);
    mu_sb_addn(&sb, "", 0);
    for (;;) {
        got = read(fd, chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            mu_err_set(err, rc, "%s: %s", path, strerror(-rc));
            break;
        }
        if (got == 0)
            break;
        if (sb.len + (size_t)got > max) {
            rc =
                mu_err_set(err, -EFBIG, "%s: larger than %zu bytes", path, max);
            break;
        }
        mu_sb_addn(&sb, chunk, (size_t)got);
    }
    close(fd);
    if (rc) {
        wipe(sb.buf, sb.len);
        mu_sb_release(&sb);
        return rc;
    }
    *len = sb.len;
    *buf = mu_sb_detach(&sb);
    return 0;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int mu_kube_base64_decode(const char *in, size_t len, char **out,
                          size_t *out_len)
{
    char *d = mu_xmalloc(len / 4 * 3 + 4);
    unsigned q[4];
    size_t i, n = 0, k = 0, pad = 0;
    bool done = false;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;

        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (done)
            goto out_bad;
        if (c == '=') {
            if (k < 2)
                goto out_bad;
            pad++;
            q[k++] = 0;
        } else {
            v = b64_value(c);
            if (v < 0 || pad)
                goto out_bad;
            q[k++] = (unsigned)v;
        }
        if (k < 4)
            continue;
        d[n++] = (char)(q[0] << 2 | q[1] >> 4);
        if (pad < 2)
            d[n++] = (char)(q[1] << 4 | q[2] >> 2);
        if (pad < 1)
            d[n++] = (char)(q[2] << 6 | q[3]);
        k = 0;
        done = pad > 0;
    }
    if (k != 0)
        goto out_bad;
    d[n] = '\0';
    *out = d;
    *out_len = n;
    return 0;
out_bad:
    wipe(d, n);
    free(d);
    return -EINVAL;
}

/* A string value of obj[key] into *out (NULL when absent or null). Integers
 * are accepted as their decimal text, as sigs.k8s.io/yaml converts a YAML
 * number into a string field. */
static int get_str(const json_t *obj, const char *key, const char **out,
                   char *num, size_t num_len)
{
    return mu_json_as_text(json_object_get(obj, key), num, num_len, out);
}

static void release_merged(struct merged *m)
{
    size_t i;

    for (i = 0; i < m->n_files; i++) {
        mu_yaml_docs_release(&m->docs[i]);
        free(m->files[i]);
    }
    free(m->docs);
    free(m->files);
    for (i = 0; i < 3; i++)
        free(m->v[i]);
}

static const struct entry *find_entry(const struct merged *m, int list,
                                      const char *name)
{
    size_t i;

    for (i = 0; i < m->n[list]; i++)
        if (strcmp(m->v[list][i].name, name) == 0)
            return &m->v[list][i];
    return NULL;
}

/* Adds the named entries of one file's list; earlier files win. */
static int merge_list(struct merged *m, const char *file, const json_t *root,
                      int list, struct mu_err *err)
{
    const json_t *arr = json_object_get(root, list_key[list]);
    const json_t *it;
    size_t i;

    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return mu_err_set(err, -EINVAL, "%s: %s: must be a list", file,
                          list_key[list]);
    json_array_foreach(arr, i, it)
    {
        const json_t *name = json_object_get(it, "name");
        json_t *body = json_object_get(it, body_key[list]);
        struct entry *e;

        if (!json_is_string(name))
            return mu_err_set(err, -EINVAL, "%s: %s[%zu].name: missing", file,
                              list_key[list], i);
        if (!json_is_object(body))
            return mu_err_set(err, -EINVAL, "%s: %s[%s].%s: must be a mapping",
                              file, list_key[list], json_string_value(name),
                              body_key[list]);
        if (find_entry(m, list, json_string_value(name)))
            continue;
        mu_xgrow((void **)&m->v[list], &m->cap[list], m->n[list] + 1,
                 sizeof(*m->v[list]));
        e = &m->v[list][m->n[list]++];
        e->file = file;
        e->name = json_string_value(name);
        e->body = body;
    }
    return 0;
}

static int merge_file(struct merged *m, const char *path, bool skip_missing,
                      struct mu_err *err)
{
    struct mu_yaml_docs *d;
    const json_t *root, *cur;
    const char *file;
    int rc, i;

    if (skip_missing && access(path, F_OK) != 0)
        return 0;
    if (m->n_files == m->cap_files) {
        m->cap_files = m->cap_files ? 2 * m->cap_files : 4;
        m->docs = mu_xrealloc(m->docs, m->cap_files * sizeof(*m->docs));
        m->files = mu_xrealloc(m->files, m->cap_files * sizeof(*m->files));
    }
    d = &m->docs[m->n_files];
    mu_yaml_docs_init(d);
    rc = mu_yaml_parse_file(path, d, err);
    if (rc)
        return rc;
    m->files[m->n_files] = mu_xstrdup(path);
    file = m->files[m->n_files];
    m->n_files++;
    if (d->n == 0)
        return 0;
    root = d->v[0].root;
    if (!json_is_object(root))
        return mu_err_set(err, -EINVAL, "%s: not a kubeconfig mapping", file);
    cur = json_object_get(root, "current-context");
    if (!m->current && json_is_string(cur) && json_string_length(cur)) {
        m->current = json_string_value(cur);
        m->current_file = file;
    }
    for (i = 0; i < 3; i++) {
        rc = merge_list(m, file, root, i, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* A path as written in file: absolute paths as they are, relative ones
 * joined to the file's directory. */
static char *resolve(const char *file, const char *path)
{
    const char *slash = strrchr(file, '/');

    if (path[0] == '/' || !slash)
        return mu_xstrdup(path);
    return mu_xasprintf("%.*s/%s", (int)(slash - file), file, path);
}

/* Reads a PEM item given as key_data (base64) or key_file (a path) of entry
 * e; the data key wins. Leaves *out NULL when neither is set. */
static int load_pem(const struct entry *e, int list, const char *key_data,
                    const char *key_file, char **out, size_t *out_len,
                    struct mu_err *err)
{
    char num[32];
    const char *data, *path;
    char *full;
    int rc;

    if (get_str(e->body, key_data, &data, num, sizeof(num)) ||
        get_str(e->body, key_file, &path, num, sizeof(num)))
        return mu_err_set(err, -EINVAL, "%s: %s[%s].%s: must be a string",
                          e->file, list_key[list], e->name, body_key[list]);
    if (data) {
        if (mu_kube_base64_decode(data, strlen(data), out, out_len))
            return mu_err_set(err, -EINVAL, "%s: %s[%s].%s.%s: invalid base64",
                              e->file, list_key[list], e->name, body_key[list],
                              key_data);
        return 0;
    }
    if (!path || !*path)
        return 0;
    full = resolve(e->file, path);
    rc = mu_kube_read_file(full, MU_KUBE_MAX_FILE, out, out_len, err);
    free(full);
    if (rc)
        mu_err_prefix(err, "%s: %s[%s].%s.%s", e->file, list_key[list], e->name,
                      body_key[list], key_file);
    return rc;
}

static int load_cluster(const struct entry *e, struct mu_kube_config *cfg,
                        struct mu_err *err)
{
    const json_t *insecure =
        json_object_get(e->body, "insecure-skip-tls-verify");
    const char *server;
    char num[32];
    size_t n;
    int rc;

    if (get_str(e->body, "server", &server, num, sizeof(num)) || !server ||
        !*server)
        return mu_err_set(err, -EINVAL,
                          "%s: clusters[%s].cluster.server: missing", e->file,
                          e->name);
    if (!mu_starts_with(server, "https://") &&
        !mu_starts_with(server, "http://"))
        return mu_err_set(err, -EINVAL,
                          "%s: clusters[%s].cluster.server: \"%s\" is not an "
                          "http(s) URL",
                          e->file, e->name, server);
    n = strlen(server);
    while (n > 0 && server[n - 1] == '/')
        n--;
    cfg->server = dup_bytes(server, n);
    if (insecure && !json_is_null(insecure) && !json_is_boolean(insecure))
        return mu_err_set(err, -EINVAL,
                          "%s: clusters[%s].cluster.insecure-skip-tls-verify: "
                          "must be true or false",
                          e->file, e->name);
    cfg->insecure = json_is_true(insecure);
    rc = load_pem(e, CLUSTERS, "certificate-authority-data",
                  "certificate-authority", &cfg->ca, &cfg->ca_len, err);
    if (rc)
        return rc;
    if (cfg->insecure && cfg->ca)
        return mu_err_set(err, -EINVAL,
                          "%s: clusters[%s].cluster: a certificate authority "
                          "together with insecure-skip-tls-verify is not "
                          "allowed",
                          e->file, e->name);
    return 0;
}

static int load_user(const struct entry *e, struct mu_kube_config *cfg,
                     struct mu_err *err)
{
    static const char *const unsupported[] = {"exec", "auth-provider",
                                              "username", "password"};
    const char *token, *token_file;
    char num[32], *buf = NULL;
    size_t i, len;
    int rc;

    for (i = 0; i < MU_ARRAY_LEN(unsupported); i++)
        if (json_object_get(e->body, unsupported[i]))
            return mu_err_set(err, -ENOTSUP,
                              "%s: users[%s].user.%s: not supported (use a "
                              "token, tokenFile or client certificate)",
                              e->file, e->name, unsupported[i]);
    if (get_str(e->body, "token", &token, num, sizeof(num)))
        return mu_err_set(err, -EINVAL,
                          "%s: users[%s].user.token: must be a string", e->file,
                          e->name);
    cfg->token = mu_xstrdup_or_null(token && *token ? token : NULL);
    if (get_str(e->body, "tokenFile", &token_file, num, sizeof(num)))
        return mu_err_set(err, -EINVAL,
                          "%s: users[%s].user.tokenFile: must be a string",
                          e->file, e->name);
    if (token_file && *token_file) {
        cfg->token_file = resolve(e->file, token_file);
        rc = mu_kube_read_file(cfg->token_file, MU_KUBE_MAX_FILE, &buf, &len,
                               err);
        free_secret(buf);
        if (rc) {
            mu_err_prefix(err, "%s: users[%s].user.tokenFile", e->file,
                          e->name);
            return rc;
        }
    }
    rc = load_pem(e, USERS, "client-certificate-data", "client-certificate",
                  &cfg->cert, &cfg->cert_len, err);
    if (!rc)
        rc = load_pem(e, USERS, "client-key-data", "client-key", &cfg->key,
                      &cfg->key_len, err);
    if (rc)
        return rc;
    if (!cfg->cert != !cfg->key)
        return mu_err_set(err, -EINVAL, "%s: users[%s].user: %s without %s",
                          e->file, e->name,
                          cfg->cert ? "client-certificate" : "client-key",
                          cfg->cert ? "client-key" : "client-certificate");
    return 0;
}

static int load_context(const struct merged *m, const char *context,
                        struct mu_kube_config *cfg, struct mu_err *err)
{
    const char *where = m->n_files ? m->files[0] : "kubeconfig";
    const struct entry *ctx, *cluster, *user;
    const char *cname, *uname, *ns;
    char num[32];
    int rc;

    if (!context) {
        context = m->current;
        if (!context)
            return mu_err_set(err, -EINVAL, "%s: current-context: not set",
                              where);
        where = m->current_file;
    }
    ctx = find_entry(m, CONTEXTS, context);
    if (!ctx)
        return mu_err_set(err, -ENOENT,
                          "%s: current-context \"%s\": no such context", where,
                          context);
    if (get_str(ctx->body, "cluster", &cname, num, sizeof(num)) || !cname)
        return mu_err_set(err, -EINVAL,
                          "%s: contexts[%s].context.cluster: missing",
                          ctx->file, ctx->name);
    cluster = find_entry(m, CLUSTERS, cname);
    if (!cluster)
        return mu_err_set(err, -ENOENT,
                          "%s: contexts[%s].context.cluster \"%s\": no such "
                          "cluster",
                          ctx->file, ctx->name, cname);
    rc = load_cluster(cluster, cfg, err);
    if (rc)
        return rc;
    if (get_str(ctx->body, "user", &uname, num, sizeof(num)))
        return mu_err_set(err, -EINVAL,
                          "%s: contexts[%s].context.user: must be a string",
                          ctx->file, ctx->name);
    if (uname && *uname) {
        user = find_entry(m, USERS, uname);
        if (!user)
            return mu_err_set(err, -ENOENT,
                              "%s: contexts[%s].context.user \"%s\": no such "
                              "user",
                              ctx->file, ctx->name, uname);
        rc = load_user(user, cfg, err);
        if (rc)
            return rc;
    }
    if (get_str(ctx->body, "namespace", &ns, num, sizeof(num)))
        return mu_err_set(err, -EINVAL,
                          "%s: contexts[%s].context.namespace: must be a "
                          "string",
                          ctx->file, ctx->name);
    cfg->namespace = mu_xstrdup(ns && *ns ? ns : "default");
    cfg->source = mu_xstrdup(ctx->file);
    return 0;
}

int mu_kube_config_load_file(const char *path, const char *context,
                             struct mu_kube_config *out, struct mu_err *err)
{
    bool list = strchr(path, ':') != NULL;
    struct merged m;
    struct mu_kube_config cfg;
    const char *p = path;
    int rc = 0;

    memset(&m, 0, sizeof(m));
    mu_kube_config_init(&cfg);
    mu_kube_config_init(out);
    while (!rc) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);

        if (n) {
            char *one = dup_bytes(p, n);

            rc = merge_file(&m, one, list, err);
            free(one);
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    if (!rc && m.n_files == 0)
        rc = mu_err_set(err, -ENOENT, "%s: no kubeconfig file exists", path);
    if (!rc)
        rc = load_context(&m, context, &cfg, err);
    release_merged(&m);
    if (rc) {
        mu_kube_config_release(&cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int mu_kube_config_load_incluster(const struct mu_kube_incluster *ic,
                                  struct mu_kube_config *out,
                                  struct mu_err *err)
{
    const char *host =
        ic && ic->host ? ic->host : getenv("KUBERNETES_SERVICE_HOST");
    const char *port =
        ic && ic->port ? ic->port : getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = ic && ic->sa_dir ? ic->sa_dir : MU_KUBE_SA_DIR;
    struct mu_kube_config cfg;
    char *path, *buf = NULL;
    size_t len;
    int rc;

    mu_kube_config_init(out);
    if (!host || !*host || !port || !*port)
        return mu_err_set(err, -ENOENT,
                          "in-cluster: not running in a cluster "
                          "(KUBERNETES_SERVICE_HOST and "
                          "KUBERNETES_SERVICE_PORT must be set)");
    mu_kube_config_init(&cfg);
    cfg.server = mu_xasprintf(
        strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    cfg.source = mu_xstrdup("in-cluster");
    cfg.token_file = mu_xasprintf("%s/token", dir);
    rc = mu_kube_read_file(cfg.token_file, MU_KUBE_MAX_FILE, &buf, &len, err);
    free_secret(buf);
    if (rc)
        goto out;
    path = mu_xasprintf("%s/ca.crt", dir);
    rc = mu_kube_read_file(path, MU_KUBE_MAX_FILE, &cfg.ca, &cfg.ca_len, err);
    free(path);
    if (rc)
        goto out;
    path = mu_xasprintf("%s/namespace", dir);
    if (mu_kube_read_file(path, MU_KUBE_MAX_FILE, &buf, &len, NULL) == 0) {
        while (len > 0 && strchr(" \t\r\n", buf[len - 1]))
            buf[--len] = '\0';
        cfg.namespace = buf;
    }
    free(path);
    if (!cfg.namespace || !*cfg.namespace) {
        free(cfg.namespace);
        cfg.namespace = mu_xstrdup("default");
    }
out:
    if (rc) {
        mu_err_prefix(err, "in-cluster");
        mu_kube_config_release(&cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int mu_kube_config_load(const char *path, const char *context,
                        struct mu_kube_config *out, struct mu_err *err)
{
    const char *env = getenv("KUBECONFIG");
    const char *home = getenv("HOME");
    char *def;
    int rc;

    if (path)
        return mu_kube_config_load_file(path, context, out, err);
    if (env && *env)
        return mu_kube_config_load_file(env, context, out, err);
    if (getenv("KUBERNETES_SERVICE_HOST"))
        return mu_kube_config_load_incluster(NULL, out, err);
    if (!home || !*home) {
        mu_kube_config_init(out);
        return mu_err_set(err, -ENOENT,
                          "no kubeconfig: KUBECONFIG, "
                          "KUBERNETES_SERVICE_HOST and HOME are unset");
    }
    def = mu_xasprintf("%s/.kube/config", home);
    rc = mu_kube_config_load_file(def, context, out, err);
    free(def);
    return rc;
}
