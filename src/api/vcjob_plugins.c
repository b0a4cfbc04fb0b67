/* OpenSSL's headers come before mu.h (banned.h). */
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "api/vcjob_plugins.h"

#include <limits.h>

#include "api/json.h"
#include "api/vcjob.h"

#define LBL_JOB_NAME "volcano.sh/job-name"
#define LBL_JOB_NAMESPACE "volcano.sh/job-namespace"

/* ------------------------------------------------------------------ */
/* The job, checked and defaulted.                                     */

struct pjob {
    json_t *def; /* the defaulted job, owned */
    const char *name;
    const char *ns;
    const char *uid;
    const json_t *tasks;
    bool svc;
    bool ssh;
    struct mu_svc_args svc_args;
    struct mu_ssh_args ssh_args;
};

static void set_strn(json_t *o, const char *key, const char *v, size_t n)
{
    json_object_set_new(o, key, mu_json_must(json_stringn(v, n)));
}

static void pjob_release(struct pjob *p)
{
    json_decref(p->def);
    p->def = NULL;
}

static int pjob_load(const json_t *job, struct pjob *p, struct mu_err *err)
{
    const json_t *meta, *spec, *plugins, *args;
    int rc;

    memset(p, 0, sizeof(*p));
    if ((rc = mu_vcjob_default(job, &p->def, err)) < 0)
        return rc;
    meta = json_object_get(p->def, "metadata");
    spec = json_object_get(p->def, "spec");
    p->name = mu_json_nonempty(meta, "name");
    p->ns = mu_json_nonempty(meta, "namespace");
    p->uid = mu_json_nonempty(meta, "uid");
    if (!p->uid)
        return mu_err_set(err, -EINVAL, "metadata.uid: required");
    p->tasks = json_object_get(spec, "tasks");
    plugins = json_object_get(spec, "plugins");
    if ((args = json_object_get(plugins, "svc"))) {
        p->svc = true;
        if ((rc = mu_vcjob_svc_args(args, &p->svc_args, err)) < 0)
            return rc;
    }
    if ((args = json_object_get(plugins, "ssh"))) {
        p->ssh = true;
        if ((rc = mu_vcjob_ssh_args(args, &p->ssh_args, err)) < 0)
            return rc;
    }
    return 0;
}

/* metadata {name, namespace, ownerReferences} of an object of the job. */
static json_t *object_new(const struct pjob *p, const char *api,
                          const char *kind, const char *suffix)
{
    json_t *o = mu_json_must(json_object());
    json_t *meta = mu_json_must(json_object());
    char *name = mu_xasprintf("%s%s", p->name, suffix);

    mu_json_set_str(o, "apiVersion", api);
    mu_json_set_str(o, "kind", kind);
    mu_json_set_str(meta, "name", name);
    mu_json_set_str(meta, "namespace", p->ns);
    json_object_set_new(meta, "ownerReferences",
                        mu_vcjob_owner_refs(p->name, p->uid));
    json_object_set_new(o, "metadata", meta);
    free(name);
    return o;
}

/* {volcano.sh/job-name: <job>, volcano.sh/job-namespace: <ns>} */
static json_t *job_selector(const struct pjob *p)
{
    json_t *sel = mu_json_must(json_object());

    mu_json_set_str(sel, LBL_JOB_NAME, p->name);
    mu_json_set_str(sel, LBL_JOB_NAMESPACE, p->ns);
    return sel;
}

/*
 * Calls fn for every host of task t, as Volcano's GenerateHosts and
 * generateSSHConfig list them: "<job>-<task>-<i>" under subdomain <job> for
 * each replica, or only the template's hostname when it sets one.
 */
static void each_host(const struct pjob *p, const json_t *t,
                      void (*fn)(void *ctx, const char *host,
                                 const char *subdomain),
                      void *ctx)
{
    const json_t *ts = json_object_get(json_object_get(t, "template"), "spec");
    const char *task = mu_json_nonempty(t, "name");
    const char *host = mu_json_nonempty(ts, "hostname");
    const char *sub = mu_json_nonempty(ts, "subdomain");
    json_int_t n = json_integer_value(json_object_get(t, "replicas"));

    for (json_int_t i = 0; i < n; i++) {
        char *name;

        if (host) {
            fn(ctx, host, sub ? sub : p->name);
            break;
        }
        name = mu_xasprintf("%s-%s-%" JSON_INTEGER_FORMAT, p->name, task, i);
        fn(ctx, name, sub ? sub : p->name);
        free(name);
    }
}

/* ------------------------------------------------------------------ */
/* svc                                                                 */

int mu_vcjob_svc_service(const json_t *job, json_t **out, struct mu_err *err)
{
    struct pjob p;
    json_t *svc, *spec;
    int rc = pjob_load(job, &p, err);

    if (rc < 0)
        goto out;
    if (!p.svc) {
        *out = NULL;
        goto out;
    }
    svc = object_new(&p, "v1", "Service", "");
    spec = mu_json_must(json_object());
    mu_json_set_str(spec, "clusterIP", "None");
    json_object_set_new(spec, "selector", job_selector(&p));
    /* Go's omitempty: false is left out */
    if (p.svc_args.publish_not_ready)
        json_object_set_new(spec, "publishNotReadyAddresses", json_true());
    json_object_set_new(svc, "spec", spec);
    *out = svc;
out:
    pjob_release(&p);
    return rc;
}

struct hosts {
    struct mu_sb lines; /* joined with "\n" */
    struct mu_sb list;  /* joined with "," */
    size_t n;
};

static void add_host(void *ctx, const char *host, const char *sub)
{
    struct hosts *h = ctx;

    mu_sb_addf(&h->lines, "%s%s.%s", h->n ? "\n" : "", host, sub);
    mu_sb_addf(&h->list, "%s%s.%s", h->n ? "," : "", host, sub);
    h->n++;
}

int mu_vcjob_svc_configmap(const json_t *job, json_t **out,
                           struct mu_err *err)
{
    struct pjob p;
    json_t *cm, *data, *t;
    size_t i;
    int rc = pjob_load(job, &p, err);

    if (rc < 0)
        goto out;
    if (!p.svc) {
        *out = NULL;
        goto out;
    }
    cm = object_new(&p, "v1", "ConfigMap", "-svc");
    data = mu_json_must(json_object());
    json_array_foreach (p.tasks, i, t) {
        struct hosts h = {.n = 0};
        char *key = mu_xasprintf("%s", mu_json_nonempty(t, "name"));
        char *upper, *k;

        mu_sb_init(&h.lines);
        mu_sb_init(&h.list);
        each_host(&p, t, add_host, &h);
        for (char *c = key; *c; c++)
            if (*c == '-')
                *c = '_';
        upper = mu_xstrdup(key);
        for (char *c = upper; *c; c++)
            if (*c >= 'a' && *c <= 'z')
                *c = (char)(*c - 'a' + 'A');
        k = mu_xasprintf("%s.host", key);
        set_strn(data, k, h.lines.buf ? h.lines.buf : "", h.lines.len);
        free(k);
        k = mu_xasprintf("VC_%s_HOSTS", upper);
        set_strn(data, k, h.list.buf ? h.list.buf : "", h.list.len);
        free(k);
        k = mu_xasprintf("VC_%s_NUM", upper);
        json_object_set_new(data, k, mu_json_must(json_sprintf("%zu", h.n)));
        free(k);
        free(upper);
        free(key);
        mu_sb_release(&h.lines);
        mu_sb_release(&h.list);
    }
    json_object_set_new(cm, "data", data);
    *out = cm;
out:
    pjob_release(&p);
    return rc;
}

int mu_vcjob_svc_networkpolicy(const json_t *job, json_t **out,
                               struct mu_err *err)
{
    struct pjob p;
    json_t *np, *spec, *sel, *peer, *from, *rule, *ingress, *types;
    int rc = pjob_load(job, &p, err);

    if (rc < 0)
        goto out;
    if (!p.svc || p.svc_args.no_network_policy) {
        *out = NULL;
        goto out;
    }
    np = object_new(&p, "networking.k8s.io/v1", "NetworkPolicy", "");
    spec = mu_json_must(json_object());
    sel = mu_json_must(json_object());
    json_object_set_new(sel, "matchLabels", job_selector(&p));
    json_object_set_new(spec, "podSelector", sel);
    sel = mu_json_must(json_object());
    json_object_set_new(sel, "matchLabels", job_selector(&p));
    peer = mu_json_must(json_object());
    json_object_set_new(peer, "podSelector", sel);
    from = mu_json_must(json_array());
    json_array_append_new(from, peer);
    rule = mu_json_must(json_object());
    json_object_set_new(rule, "from", from);
    ingress = mu_json_must(json_array());
    json_array_append_new(ingress, rule);
    json_object_set_new(spec, "ingress", ingress);
    types = mu_json_must(json_array());
    json_array_append_new(types, mu_json_must(json_string("Ingress")));
    json_object_set_new(spec, "policyTypes", types);
    json_object_set_new(np, "spec", spec);
    *out = np;
out:
    pjob_release(&p);
    return rc;
}

/* ------------------------------------------------------------------ */
/* ssh                                                                 */

/* RFC 4251 string: uint32 length, then the bytes. */
static void put_string(struct mu_sb *b, const void *s, size_t n)
{
    unsigned char len[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8), (unsigned char)n};

    mu_sb_addn(b, (const char *)len, sizeof(len));
    mu_sb_addn(b, s, n);
}

/* RFC 4251 mpint of a non-negative bn: big-endian, a 0 byte first when the
 * top bit is set, zero as the empty string. */
static void put_mpint(struct mu_sb *b, const BIGNUM *bn)
{
    int n = BN_num_bytes(bn);
    unsigned char *buf = mu_xmalloc((size_t)n + 1);

    buf[0] = 0;
    BN_bn2bin(bn, buf + 1);
    if (n > 0 && (buf[1] & 0x80))
        put_string(b, buf, (size_t)n + 1);
    else
        put_string(b, buf + 1, (size_t)n);
    free(buf);
}

/* Standard base64 with padding, no line breaks; the caller frees. */
static char *base64(const void *s, size_t n)
{
    char *out;

    if (n > (size_t)INT_MAX / 4 * 3 - 3)
        abort();
    out = mu_xmalloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)out, s, (int)n);
    return out;
}

/* "ssh-rsa <base64 of string ssh-rsa, mpint e, mpint n>\n", as Go's
 * ssh.MarshalAuthorizedKey writes it. */
static int ssh_public_key(EVP_PKEY *pk, char **out)
{
    BIGNUM *n = NULL, *e = NULL;
    struct mu_sb blob;
    char *b64;
    int rc = -EIO;

    mu_sb_init(&blob);
    if (EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA ||
        !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) ||
        !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_E, &e))
        goto out;
    put_string(&blob, "ssh-rsa", 7);
    put_mpint(&blob, e);
    put_mpint(&blob, n);
    b64 = base64(blob.buf, blob.len);
    *out = mu_xasprintf("ssh-rsa %s\n", b64);
    free(b64);
    rc = 0;
out:
    BN_free(n);
    BN_free(e);
    mu_sb_release(&blob);
    return rc;
}

static int rsa_generate(EVP_PKEY **out)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *pk = NULL;
    int rc = -EIO;

    if (!ctx)
        return -ENOMEM;
    if (EVP_PKEY_keygen_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, MU_SSH_RSA_BITS) <= 0 ||
        EVP_PKEY_generate(ctx, &pk) <= 0)
        goto out;
    *out = pk;
    rc = 0;
out:
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

/* The PKCS#1 PEM ("BEGIN RSA PRIVATE KEY") of pk; the caller frees. */
static int rsa_pem(EVP_PKEY *pk, char **out)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *data;
    long n;
    int rc = -EIO;

    if (!bio)
        return -ENOMEM;
    if (!PEM_write_bio_PrivateKey_traditional(bio, pk, NULL, NULL, 0, NULL,
                                              NULL))
        goto out;
    n = BIO_get_mem_data(bio, &data);
    if (n <= 0)
        goto out;
    *out = mu_xmalloc((size_t)n + 1);
    memcpy(*out, data, (size_t)n);
    (*out)[n] = '\0';
    rc = 0;
out:
    BIO_free(bio);
    return rc;
}

/* The public key of a PEM private key (any form libcrypto reads). */
static int public_of(const char *pem, char **out, struct mu_err *err)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *pk;
    int rc;

    if (!bio)
        return -ENOMEM;
    pk = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (!pk || EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA) {
        EVP_PKEY_free(pk);
        return mu_err_set(err, -EINVAL,
                          "spec.plugins.ssh: --ssh-private-key is not a PEM "
                          "RSA private key; give --ssh-public-key as well");
    }
    rc = ssh_public_key(pk, out);
    EVP_PKEY_free(pk);
    if (rc < 0)
        mu_err_set(err, rc, "spec.plugins.ssh: cannot read the public key "
                            "of --ssh-private-key");
    return rc;
}

struct ssh_config {
    struct mu_sb sb;
    int port;
};

static void add_ssh_host(void *ctx, const char *host, const char *sub)
{
    struct ssh_config *c = ctx;

    mu_sb_addf(&c->sb, "Host %s\n  HostName %s.%s\n  Port %d\n", host, host,
               sub, c->port);
}

static void set_b64(json_t *data, const char *key, const char *s)
{
    char *b = base64(s, strlen(s));

    mu_json_set_str(data, key, b);
    free(b);
}

int mu_vcjob_ssh_secret(const json_t *job, json_t **out, struct mu_err *err)
{
    struct pjob p;
    struct ssh_config conf = {.port = 0};
    EVP_PKEY *pk = NULL;
    char *priv = NULL, *pub = NULL;
    json_t *secret, *data, *t;
    size_t i;
    int rc = pjob_load(job, &p, err);

    mu_sb_init(&conf.sb);
    if (rc < 0)
        goto out;
    if (!p.ssh) {
        *out = NULL;
        goto out;
    }
    if (p.ssh_args.private_key) {
        priv = mu_xstrdup(p.ssh_args.private_key);
        if (p.ssh_args.public_key)
            pub = mu_xstrdup(p.ssh_args.public_key);
        else if ((rc = public_of(priv, &pub, err)) < 0)
            goto out;
    } else if ((rc = rsa_generate(&pk)) < 0 || (rc = rsa_pem(pk, &priv)) < 0 ||
               (rc = ssh_public_key(pk, &pub)) < 0) {
        mu_err_set(err, rc, "spec.plugins.ssh: cannot generate an RSA key "
                            "with libcrypto");
        goto out;
    }

    conf.port = p.ssh_args.port;
    mu_sb_add(&conf.sb, "StrictHostKeyChecking no\n"
                        "UserKnownHostsFile /dev/null\n");
    json_array_foreach (p.tasks, i, t)
        each_host(&p, t, add_ssh_host, &conf);

    secret = object_new(&p, "v1", "Secret", "-ssh");
    data = mu_json_must(json_object());
    set_b64(data, "id_rsa", priv);
    set_b64(data, "id_rsa.pub", pub);
    set_b64(data, "authorized_keys", pub);
    set_b64(data, "config", conf.sb.buf);
    json_object_set_new(secret, "data", data);
    *out = secret;
out:
    EVP_PKEY_free(pk);
    if (priv)
        OPENSSL_cleanse(priv, strlen(priv));
    free(priv);
    free(pub);
    mu_sb_release(&conf.sb);
    pjob_release(&p);
    return rc;
}
