/* OpenSSL's headers come before mu.h (banned.h). */
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "api/vcjob.h"
#include "api/vcjob_expand.h"
#include "api/vcjob_plugins.h"
#include "api/yaml.h"

#define UID "6f1c2d3e-8a4b-4c5d-9e6f-0a1b2c3d4e5f"
#define JOB_NAME "pytorch-dist-8gpu"
#define BOOK_PATH MU_EXAMPLES "/pytorch-8gpu-vcjob.yaml"

#define OWNER                                                                \
    "'ownerReferences':[{'apiVersion':'batch.volcano.sh/v1alpha1',"          \
    "'kind':'Job','name':'" JOB_NAME "','uid':'" UID "',"                    \
    "'controller':true,'blockOwnerDeletion':true}]"
#define SELECTOR                                                             \
    "{'volcano.sh/job-name':'" JOB_NAME "',"                                 \
    "'volcano.sh/job-namespace':'default'}"
#define HOST(task, i) JOB_NAME "-" task "-" #i "." JOB_NAME
#define WORKERS(sep)                                                         \
    HOST("worker", 0) sep HOST("worker", 1) sep HOST("worker", 2) sep       \
    HOST("worker", 3) sep HOST("worker", 4) sep HOST("worker", 5) sep       \
    HOST("worker", 6) sep HOST("worker", 7)

/* The public half of the example key in Volcano's ssh plugin guide
 * (docs/user-guide/how_to_use_ssh_plugin.md), as `ssh-keygen -y` prints
 * it; VOLCANO_KEY below is its private half. */
#define VOLCANO_PUB                                                          \
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDJ7JmNYPHk1r1vDV/rUziz5CUtP+TKsH" \
    "fsBHaPlJv8D2G8lqQs1BCk0L4pV9g2XiN48b7qXAerJ7/+lwL37RJawdbCBpqGMwucC2FH" \
    "aTwkBqQ0D3FX/AfPRhT304oR61o67FelZk9cIdfTO5A7ztht0rNFuDEAKKszc+GTCvtcu1" \
    "C1ZmTJcbfgJBdlBaAEhLUWX4+UY6lWk4+dahk8ylsArviL9PPiw/xmGpzp3JrWGttTBjdh" \
    "8xk1heloDDvBZWOryCt+zT4WXdLEevNNeB7ab55kBnqI8nxxfi5grGLRmbGkz9qAjoyaOr" \
    "QxTvlXGmrbYtpS8cik59flTGGSuzGX"

static const char VOLCANO_KEY[] =
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEAyeyZjWDx5Na9bw1f61M4s+QlLT/kyrB37AR2j5Sb/A9hvJak\n"
    "LNQQpNC+KVfYNl4jePG+6lwHqye//pcC9+0SWsHWwgaahjMLnAthR2k8JAakNA9x\n"
    "V/wHz0YU99OKEetaOuxXpWZPXCHX0zuQO87YbdKzRbgxACirM3Phkwr7XLtQtWZk\n"
    "yXG34CQXZQWgBIS1Fl+PlGOpVpOPnWoZPMpbAK74i/Tz4sP8Zhqc6dya1hrbUwY3\n"
    "YfMZNYXpaAw7wWVjq8grfs0+Fl3SxHrzTXge2m+eZAZ6iPJ8cX4uYKxi0ZmxpM/a\n"
    "gI6Mmjq0MU75Vxpq22LaUvHIpOfX5UxhkrsxlwIDAQABAoIBAQDGOuIb6zpNn4rl\n"
    "BMpPqamW4LimjX08hrWUHGWQWyIu96LJk1GlOKMGSm8FA1odNZm5WApG5QYaPrG7\n"
    "a+DcJ/7G3ljIrdbxPBd/n6RmiKcj7ukwuqBY8fFwyKo5CZEYOmagRfldRO1P02Gf\n"
    "22+jZ1MNrbWVElf4gfRgVLj0s+lEhFkzhi+QGMmMpjEJnnG98xxVGEvWMw1rnKJm\n"
    "3Gi771Gltbg3GuEPs3IeoBgba3EaHmSxJnBivAL4zsO8UUCAXB13cUiXx8qO7y1e\n"
    "CSWSenRmK2ugbL6v0co12O0n0pxF9xlJ6fALdRWzpJsFlN3ttkY9N5GrQc/pVjOa\n"
    "vqa172RRAoGBAOSAIMNLT6QjgYDk5Z7ZxjNnxH/lMso+cx6bxk9YMKRrw0fDQh8m\n"
    "cBAihXhuntCPDGhrzQ+Anqx4jJVDFqac0xBck90a8LmmzD0q72eDTCYPouDWe6DL\n"
    "JQAc/HDmIC13sADEXmGW3c0Qn4hjBnMd89ouYj7ZajU2sED2irPPc/HLAoGBAOI5\n"
    "ruL4Q0FarGrP3a9z9EDrVJsK2OfSTaJ7rhZ+uvB838svbHU+4mEYPhx4PCwvrYyi\n"
    "Fn4hyau003ZmLc1qTABjmwcO/PPiYyoRHJDUIIhiIyIL+id/G53uG2eTzqYtU6uS\n"
    "nAIB2rKwwhU8ek+zbJBLu5uxuxlf4mdZITdkwtXlAoGBALH3RQ02A9JgQQYFwP2G\n"
    "ucLhx/6goX05RGoLg1na4w+8Sr0Cy+X9BvzaFkAlUBY5w700cOLpFyxXO48pUGP1\n"
    "8sFkiVmFGQZPbfUaEpn5ff6K4R3ijyk97xR2fvrjkR44gOEoECZL3XZQwx/zmFti\n"
    "ccF1rNksdnb5oC8IliDTq4cfAoGANyy6asECJj5nLuXju5ccS3kZ+XZ70I6KQMbJ\n"
    "ftMJ5P2P146JdU8RB31SKL9qbZxzR4mA0uKKvUYtDQN+yErUnoOsm9wb9Z+RcAEc\n"
    "ZnZWOO02hGdHa7qkkbAxHuH91KnZbk8jnZm2LT7PFz7Y1fd80vSlnSOL7nRkU7B5\n"
    "WXlJy8ECgYA4g0wc0Jq8c1Q0FulMkOQqYRDXaDo34987L+mZ70i/RtdkKjK/IKJ9\n"
    "18UDCyEaDPD0BWBJGPejZkY8UD6FBG/5k7wNIbT7hHLRSRlw4iRmVX2hRVXrXzD8\n"
    "vc86Qyg2iG0JqkMAvRdH40amPKp5bW4VcfcvQo4TSsI972u12rgwtg==\n"
    "-----END RSA PRIVATE KEY-----\n";

#define TPL "'template':{'spec':{'containers':[{'name':'c','image':'x'}]}}"
#define JOB(plugins, tasks)                                                  \
    "{'metadata':{'name':'j','uid':'u1'},'spec':{'plugins':" plugins        \
    ",'tasks':" tasks "}}"

/* Test JSON is written with ' for " ; \u0027 is a real '. */
static json_t *load(const char *text)
{
    char *s = strdup(text);
    json_error_t jerr;
    json_t *j;

    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = json_loads(s, 0, &jerr);
    ck_assert_msg(j != NULL, "bad test JSON: %s at %d", jerr.text,
                  jerr.position);
    free(s);
    return j;
}

/* The book's examples/pytorch-8gpu-vcjob.yaml as the API server would hold
 * it (with a uid), with spec.plugins set to `plugins` (JSON, or NULL). */
static json_t *book(const char *plugins)
{
    struct mu_yaml_docs docs;
    struct mu_err err = {{0}};
    json_t *job;

    mu_yaml_docs_init(&docs);
    ck_assert_msg(mu_yaml_parse_file(BOOK_PATH, &docs, &err) == 0, "%s",
                  err.msg);
    ck_assert_uint_eq(docs.n, 1);
    job = json_incref(docs.v[0].root);
    mu_yaml_docs_release(&docs);
    json_object_set_new(json_object_get(job, "metadata"), "uid",
                        json_string(UID));
    if (plugins)
        json_object_set_new(json_object_get(job, "spec"), "plugins",
                            load(plugins));
    return job;
}

static void assert_json(const json_t *got, const char *want_text)
{
    json_t *want = load(want_text);
    char *g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char *w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);

    ck_assert_msg(json_equal(got, want), "got  %s\nwant %s", g, w);
    free(g);
    free(w);
    json_decref(want);
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static json_t *at(const json_t *o, const char *k1, const char *k2)
{
    return json_object_get(json_object_get(o, k1), k2);
}

/* Standard base64 decoding; *n gets the length. The caller frees. */
static unsigned char *unbase64(const char *s, size_t *n)
{
    size_t len = strlen(s);
    unsigned char *out = malloc(len / 4 * 3 + 1);
    int got;

    ck_assert_uint_eq(len % 4, 0);
    got = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
    ck_assert_int_ge(got, 0);
    if (len > 0 && s[len - 1] == '=')
        got--;
    if (len > 1 && s[len - 2] == '=')
        got--;
    out[got] = '\0';
    *n = (size_t)got;
    return out;
}

/* data[key] of a Secret, decoded; the caller frees. */
static char *secret_value(const json_t *secret, const char *key)
{
    const char *b = str(json_object_get(secret, "data"), key);
    size_t n;
    unsigned char *v;

    ck_assert_msg(b != NULL, "no data[%s]", key);
    v = unbase64(b, &n);
    ck_assert_uint_eq(strlen((char *)v), n);
    return (char *)v;
}

typedef int builder(const json_t *, json_t **, struct mu_err *);

static json_t *build(builder *fn, const json_t *job)
{
    struct mu_err err = {{0}};
    json_t *out = json_null();

    ck_assert_msg(fn(job, &out, &err) == 0, "%s", err.msg);
    return out;
}

static json_t *pod_of(const json_t *job, size_t task, int index)
{
    struct mu_err err = {{0}};
    json_t *p = NULL;

    ck_assert_msg(mu_vcjob_pod(job, task, index, 0, 0, 0, &p, &err) == 0,
                  "%s", err.msg);
    return p;
}

/* ------------------------------------------------------------------ */

START_TEST(test_svc_service_of_book_job)
{
    json_t *job = book("{'svc':[]}");
    json_t *svc = build(mu_vcjob_svc_service, job);

    assert_json(svc, "{'apiVersion':'v1','kind':'Service',"
                     "'metadata':{'name':'" JOB_NAME "',"
                     "'namespace':'default'," OWNER "},"
                     "'spec':{'clusterIP':'None','selector':" SELECTOR "}}");
    json_decref(svc);
    json_decref(job);
}
END_TEST

START_TEST(test_svc_service_publishes_not_ready_only_if_asked)
{
    json_t *job = book("{'svc':['--publish-not-ready-addresses']}");
    json_t *svc = build(mu_vcjob_svc_service, job);

    ck_assert(json_is_true(at(svc, "spec", "publishNotReadyAddresses")));
    json_decref(svc);
    json_decref(job);
    job = book("{'svc':['--publish-not-ready-addresses=false']}");
    svc = build(mu_vcjob_svc_service, job);
    ck_assert_ptr_null(at(svc, "spec", "publishNotReadyAddresses"));
    ck_assert_str_eq(str(json_object_get(svc, "spec"), "clusterIP"), "None");
    json_decref(svc);
    json_decref(job);
}
END_TEST

START_TEST(test_svc_configmap_of_book_job)
{
    json_t *job = book("{'svc':[]}");
    json_t *cm = build(mu_vcjob_svc_configmap, job);

    assert_json(cm, "{'apiVersion':'v1','kind':'ConfigMap',"
                    "'metadata':{'name':'" JOB_NAME "-svc',"
                    "'namespace':'default'," OWNER "},"
                    "'data':{"
                    "'master.host':'" HOST("master", 0) "',"
                    "'VC_MASTER_HOSTS':'" HOST("master", 0) "',"
                    "'VC_MASTER_NUM':'1',"
                    "'worker.host':'" WORKERS("\\n") "',"
                    "'VC_WORKER_HOSTS':'" WORKERS(",") "',"
                    "'VC_WORKER_NUM':'8'}}");
    json_decref(cm);
    json_decref(job);
}
END_TEST

START_TEST(test_svc_configmap_follows_task_names_and_templates)
{
    json_t *job = load(JOB(
        "{'svc':[]}",
        "[{'name':'ps-server','replicas':2," TPL "},"
        "{'name':'fixed','replicas':3,'template':{'spec':{'hostname':'h',"
        "'containers':[{}]}}},"
        "{'name':'sub','replicas':1,'template':{'spec':{'subdomain':'s',"
        "'containers':[{}]}}},"
        "{'name':'none','replicas':0," TPL "}]"));
    json_t *cm = build(mu_vcjob_svc_configmap, job);

    assert_json(json_object_get(cm, "data"),
                "{'ps_server.host':'j-ps-server-0.j\\nj-ps-server-1.j',"
                "'VC_PS_SERVER_HOSTS':'j-ps-server-0.j,j-ps-server-1.j',"
                "'VC_PS_SERVER_NUM':'2',"
                "'fixed.host':'h.j','VC_FIXED_HOSTS':'h.j',"
                "'VC_FIXED_NUM':'1',"
                "'sub.host':'j-sub-0.s','VC_SUB_HOSTS':'j-sub-0.s',"
                "'VC_SUB_NUM':'1',"
                "'none.host':'','VC_NONE_HOSTS':'','VC_NONE_NUM':'0'}");
    json_decref(cm);
    json_decref(job);
}
END_TEST

START_TEST(test_svc_networkpolicy_of_book_job)
{
    json_t *job = book("{'svc':['--publish-not-ready-addresses']}");
    json_t *np = build(mu_vcjob_svc_networkpolicy, job);

    assert_json(np, "{'apiVersion':'networking.k8s.io/v1',"
                    "'kind':'NetworkPolicy',"
                    "'metadata':{'name':'" JOB_NAME "',"
                    "'namespace':'default'," OWNER "},"
                    "'spec':{'podSelector':{'matchLabels':" SELECTOR "},"
                    "'ingress':[{'from':[{'podSelector':{'matchLabels':"
                    SELECTOR "}}]}],'policyTypes':['Ingress']}}");
    json_decref(np);
    json_decref(job);
}
END_TEST

START_TEST(test_svc_networkpolicy_disabled_by_flag)
{
    json_t *job = book("{'svc':['--disable-network-policy']}");
    json_t *np = build(mu_vcjob_svc_networkpolicy, job), *svc;

    ck_assert_ptr_null(np);
    /* the other svc objects are still made */
    svc = build(mu_vcjob_svc_service, job);
    ck_assert_ptr_nonnull(svc);
    json_decref(svc);
    json_decref(job);
    job = book("{'svc':['--disable-network-policy=false']}");
    np = build(mu_vcjob_svc_networkpolicy, job);
    ck_assert_ptr_nonnull(np);
    json_decref(np);
    json_decref(job);
}
END_TEST

START_TEST(test_plugins_off_make_nothing_and_webhook_implies_them)
{
    static builder *const all[] = {mu_vcjob_svc_service,
                                   mu_vcjob_svc_configmap,
                                   mu_vcjob_svc_networkpolicy,
                                   mu_vcjob_ssh_secret};
    json_t *job = book(NULL), *o, *p;

    for (size_t i = 0; i < MU_ARRAY_LEN(all); i++)
        ck_assert_ptr_null(build(all[i], job));
    p = pod_of(job, 1, 0);
    ck_assert_ptr_null(at(p, "spec", "volumes"));
    json_decref(p);
    json_decref(job);
    /* the webhook adds svc for pytorch, and svc and ssh for mpi */
    job = book("{'pytorch':[]}");
    o = build(mu_vcjob_svc_service, job);
    ck_assert_str_eq(str(json_object_get(o, "metadata"), "name"), JOB_NAME);
    json_decref(o);
    ck_assert_ptr_null(build(mu_vcjob_ssh_secret, job));
    json_decref(job);
    job = book("{'mpi':[]}");
    o = build(mu_vcjob_ssh_secret, job);
    ck_assert_str_eq(str(json_object_get(o, "metadata"), "name"),
                     JOB_NAME "-ssh");
    json_decref(o);
    p = pod_of(job, 0, 0);
    ck_assert_uint_eq(json_array_size(at(p, "spec", "volumes")), 2);
    json_decref(p);
    json_decref(job);
}
END_TEST

/* The key pair of a generated Secret, checked without muster's encoder:
 * id_rsa read back by libcrypto, authorized_keys parsed as RFC 4253
 * "ssh-rsa" (string, mpint e, mpint n) and compared number by number. */
static void assert_key_pair(const json_t *secret)
{
    char *priv = secret_value(secret, "id_rsa");
    char *pub = secret_value(secret, "id_rsa.pub");
    char *auth = secret_value(secret, "authorized_keys");
    BIO *bio = BIO_new_mem_buf(priv, -1);
    EVP_PKEY *pk = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIGNUM *n = NULL, *e = NULL, *bn;
    unsigned char *blob, *q;
    size_t len, k, left;
    const BIGNUM *want[2];
    char *b64, *end;

    ck_assert_ptr_nonnull(pk);
    ck_assert_int_eq(EVP_PKEY_get_base_id(pk), EVP_PKEY_RSA);
    ck_assert_int_eq(EVP_PKEY_get_bits(pk), MU_SSH_RSA_BITS);
    ck_assert(mu_starts_with(priv, "-----BEGIN RSA PRIVATE KEY-----\n"));
    ck_assert(EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n));
    ck_assert(EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_E, &e));

    ck_assert_str_eq(auth, pub);
    ck_assert(mu_starts_with(pub, "ssh-rsa "));
    end = strchr(pub, '\n');
    ck_assert_ptr_nonnull(end);
    ck_assert_str_eq(end, "\n");
    b64 = strndup(pub + 8, (size_t)(end - pub - 8));
    blob = unbase64(b64, &len);
    want[0] = e;
    want[1] = n;
    q = blob;
    left = len;
    for (k = 0; k < 3; k++) {
        size_t l;

        ck_assert_uint_ge(left, 4);
        l = (size_t)q[0] << 24 | (size_t)q[1] << 16 | (size_t)q[2] << 8 | q[3];
        ck_assert_uint_ge(left - 4, l);
        if (k == 0) {
            ck_assert_uint_eq(l, 7);
            ck_assert_mem_eq(q + 4, "ssh-rsa", 7);
        } else {
            /* positive mpint: no superfluous leading zero, top bit clear */
            ck_assert(l > 0 && !(q[4] & 0x80));
            ck_assert(q[4] != 0 || (l > 1 && (q[5] & 0x80)));
            bn = BN_bin2bn(q + 4, (int)l, NULL);
            ck_assert_int_eq(BN_cmp(bn, want[k - 1]), 0);
            BN_free(bn);
        }
        q += 4 + l;
        left -= 4 + l;
    }
    ck_assert_uint_eq(left, 0);
    free(blob);
    free(b64);
    BN_free(n);
    BN_free(e);
    EVP_PKEY_free(pk);
    BIO_free(bio);
    free(priv);
    free(pub);
    free(auth);
}

START_TEST(test_ssh_secret_public_key_is_half_of_private_key)
{
    json_t *job = book("{'ssh':[]}");
    json_t *s1 = build(mu_vcjob_ssh_secret, job);
    json_t *s2 = build(mu_vcjob_ssh_secret, job);
    json_t *meta = json_object_get(s1, "metadata");

    ck_assert_str_eq(str(s1, "apiVersion"), "v1");
    ck_assert_str_eq(str(s1, "kind"), "Secret");
    assert_json(meta, "{'name':'" JOB_NAME "-ssh','namespace':'default',"
                      OWNER "}");
    ck_assert_uint_eq(json_object_size(json_object_get(s1, "data")), 4);
    ck_assert_ptr_null(json_object_get(s1, "stringData"));
    assert_key_pair(s1);
    assert_key_pair(s2);
    /* a fresh key per call */
    ck_assert_str_ne(str(json_object_get(s1, "data"), "id_rsa"),
                     str(json_object_get(s2, "data"), "id_rsa"));
    json_decref(s1);
    json_decref(s2);
    json_decref(job);
}
END_TEST

#define SSH_HOST(h, port)                                                    \
    "Host " h "\n  HostName " h "." JOB_NAME "\n  Port " port "\n"
#define SSH_WORKER(i, port) SSH_HOST(JOB_NAME "-worker-" #i, port)
#define SSH_WORKERS(port)                                                    \
    SSH_WORKER(0, port) SSH_WORKER(1, port) SSH_WORKER(2, port)              \
    SSH_WORKER(3, port) SSH_WORKER(4, port) SSH_WORKER(5, port)              \
    SSH_WORKER(6, port) SSH_WORKER(7, port)

START_TEST(test_ssh_secret_config_has_a_host_per_pod)
{
    json_t *job = book("{'ssh':['--ssh-port','2222']}");
    json_t *s = build(mu_vcjob_ssh_secret, job);
    char *conf = secret_value(s, "config");
    size_t blocks = 0;

    ck_assert_str_eq(conf, "StrictHostKeyChecking no\n"
                           "UserKnownHostsFile /dev/null\n"
                           SSH_HOST(JOB_NAME "-master-0", "2222")
                           SSH_WORKERS("2222"));
    for (const char *c = conf; (c = strstr(c, "Host ")); c++)
        blocks += c == conf || c[-1] == '\n';
    ck_assert_uint_eq(blocks, 9);
    free(conf);
    json_decref(s);
    json_decref(job);
    job = book("{'ssh':[]}");
    s = build(mu_vcjob_ssh_secret, job);
    conf = secret_value(s, "config");
    ck_assert_ptr_nonnull(strstr(conf, SSH_HOST(JOB_NAME "-worker-7", "22")));
    free(conf);
    json_decref(s);
    json_decref(job);
}
END_TEST

START_TEST(test_ssh_secret_uses_given_keys)
{
    json_t *job = book("{'ssh':[]}"), *args, *s;
    char *v;

    /* both given: stored verbatim, as Volcano does */
    args = json_object_get(at(job, "spec", "plugins"), "ssh");
    json_array_append_new(args, json_string("--ssh-private-key=PRIV"));
    json_array_append_new(args, json_string("--ssh-public-key=PUB x"));
    s = build(mu_vcjob_ssh_secret, job);
    v = secret_value(s, "id_rsa");
    ck_assert_str_eq(v, "PRIV");
    free(v);
    v = secret_value(s, "id_rsa.pub");
    ck_assert_str_eq(v, "PUB x");
    free(v);
    v = secret_value(s, "authorized_keys");
    ck_assert_str_eq(v, "PUB x");
    free(v);
    json_decref(s);

    /* only the private key: the public one is derived from it */
    json_array_clear(args);
    json_array_append_new(args, json_string("--ssh-private-key"));
    json_array_append_new(args, json_string(VOLCANO_KEY));
    s = build(mu_vcjob_ssh_secret, job);
    v = secret_value(s, "id_rsa");
    ck_assert_str_eq(v, VOLCANO_KEY);
    free(v);
    v = secret_value(s, "authorized_keys");
    ck_assert_str_eq(v, VOLCANO_PUB "\n");
    free(v);
    json_decref(s);
    json_decref(job);
}
END_TEST

START_TEST(test_ssh_secret_refuses_unreadable_private_key_alone)
{
    json_t *job = book("{'ssh':['--ssh-private-key=not a key']}");
    json_t *out = json_null();
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_ssh_secret(job, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "spec.plugins.ssh: --ssh-private-key is not a "
                              "PEM RSA private key; give --ssh-public-key "
                              "as well");
    ck_assert_ptr_eq(out, json_null());
    json_decref(job);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The pod side.                                                       */

#define SVC_ENV(task)                                                        \
    "{'name':'VC_" task "_HOSTS','valueFrom':{'configMapKeyRef':{"           \
    "'name':'" JOB_NAME "-svc','key':'VC_" task "_HOSTS'}}},"                \
    "{'name':'VC_" task "_NUM','valueFrom':{'configMapKeyRef':{"             \
    "'name':'" JOB_NAME "-svc','key':'VC_" task "_NUM'}}}"

START_TEST(test_pod_svc_mounts_hosts_and_injects_env)
{
    json_t *job = book("{'svc':[]}");
    json_t *w = pod_of(job, 1, 3), *m = pod_of(job, 0, 0);
    json_t *c = json_array_get(at(w, "spec", "containers"), 0);

    ck_assert_str_eq(str(json_object_get(w, "spec"), "hostname"),
                     JOB_NAME "-worker-3");
    ck_assert_str_eq(str(json_object_get(w, "spec"), "subdomain"), JOB_NAME);
    assert_json(at(w, "spec", "volumes"),
                "[{'name':'" JOB_NAME "-svc','configMap':{'name':'" JOB_NAME
                "-svc'}}]");
    assert_json(json_object_get(c, "volumeMounts"),
                "[{'name':'" JOB_NAME "-svc','mountPath':'/etc/volcano'}]");
    /* the template's RANK first, then every task's hosts */
    assert_json(json_object_get(c, "env"),
                "[{'name':'RANK','valueFrom':{'fieldRef':{'fieldPath':"
                "'metadata.annotations[\\u0027volcano.sh/task-index\\u0027]'"
                "}}}," SVC_ENV("MASTER") "," SVC_ENV("WORKER") "]");
    c = json_array_get(at(m, "spec", "containers"), 0);
    assert_json(json_object_get(c, "env"),
                "[" SVC_ENV("MASTER") "," SVC_ENV("WORKER") "]");
    json_decref(w);
    json_decref(m);
    json_decref(job);
}
END_TEST

START_TEST(test_pod_svc_covers_init_containers_and_inject_flag)
{
    json_t *job = load(JOB(
        "{'svc':[]}",
        "[{'name':'ps-a','replicas':1,'template':{'spec':{"
        "'initContainers':[{'name':'i'}],'containers':[{'name':'c'}]}}}]"));
    json_t *p = pod_of(job, 0, 0), *off;
    const char *const env =
        "[{'name':'VC_PS_A_HOSTS','valueFrom':{'configMapKeyRef':{"
        "'name':'j-svc','key':'VC_PS_A_HOSTS'}}},"
        "{'name':'VC_PS_A_NUM','valueFrom':{'configMapKeyRef':{"
        "'name':'j-svc','key':'VC_PS_A_NUM'}}}]";
    const char *const mounts = "[{'name':'j-svc','mountPath':'/etc/volcano'}]";

    for (int k = 0; k < 2; k++) {
        json_t *c = json_array_get(
            at(p, "spec", k ? "initContainers" : "containers"), 0);

        assert_json(json_object_get(c, "env"), env);
        assert_json(json_object_get(c, "volumeMounts"), mounts);
    }
    json_decref(p);
    off = load(JOB("{'svc':['--inject-hosts-env=false']}",
                   "[{'name':'a','replicas':1,'template':{'spec':{"
                   "'initContainers':[{'name':'i'}],'containers':[{}]}}}]"));
    p = pod_of(off, 0, 0);
    for (int k = 0; k < 2; k++) {
        json_t *c = json_array_get(
            at(p, "spec", k ? "initContainers" : "containers"), 0);

        ck_assert_uint_eq(json_array_size(json_object_get(c, "env")), 0);
        assert_json(json_object_get(c, "volumeMounts"), mounts);
    }
    ck_assert_uint_eq(json_array_size(at(p, "spec", "volumes")), 1);
    json_decref(p);
    json_decref(off);
    json_decref(job);
}
END_TEST

START_TEST(test_pod_ssh_mounts_the_secret)
{
    json_t *job = book("{'ssh':[],'env':[]}");
    json_t *p = pod_of(job, 1, 0), *c, *custom;

    assert_json(at(p, "spec", "volumes"),
                "[{'name':'" JOB_NAME "-ssh','secret':{"
                "'secretName':'" JOB_NAME "-ssh','items':["
                "{'key':'id_rsa','path':'.ssh/id_rsa'},"
                "{'key':'id_rsa.pub','path':'.ssh/id_rsa.pub'},"
                "{'key':'authorized_keys','path':'.ssh/authorized_keys'},"
                "{'key':'config','path':'.ssh/config'}],"
                "'defaultMode':384}}]");
    c = json_array_get(at(p, "spec", "containers"), 0);
    assert_json(json_object_get(c, "volumeMounts"),
                "[{'name':'" JOB_NAME "-ssh','mountPath':'/root/.ssh',"
                "'subPath':'.ssh'}]");
    /* ssh alone adds no hosts env and no hostname */
    ck_assert_uint_eq(json_array_size(json_object_get(c, "env")), 3);
    ck_assert_ptr_null(at(p, "spec", "hostname"));
    json_decref(p);
    json_decref(job);

    custom = load(JOB("{'ssh':['--ssh-key-file-path=/home/u/.ssh']}",
                      "[{'name':'a','replicas':1,'template':{'spec':{"
                      "'initContainers':[{'name':'i'}],'containers':[{}]}}}]"));
    p = pod_of(custom, 0, 0);
    ck_assert_int_eq(json_integer_value(at(json_array_get(
                         at(p, "spec", "volumes"), 0), "secret",
                         "defaultMode")),
                     0644);
    for (int k = 0; k < 2; k++) {
        c = json_array_get(at(p, "spec", k ? "initContainers" : "containers"),
                           0);
        assert_json(json_object_get(c, "volumeMounts"),
                    "[{'name':'j-ssh','mountPath':'/home/u/.ssh',"
                    "'subPath':'.ssh'}]");
    }
    json_decref(p);
    json_decref(custom);
}
END_TEST

START_TEST(test_pod_keeps_template_volumes_without_duplicates)
{
    json_t *job = load(JOB(
        "{'svc':[],'ssh':[]}",
        "[{'name':'a','replicas':1,'template':{'spec':{"
        "'volumes':[{'name':'j-svc','emptyDir':{}},{'name':'data',"
        "'emptyDir':{}}],"
        "'containers':[{'volumeMounts':[{'name':'data',"
        "'mountPath':'/etc/volcano'}]},{'name':'side'}]}}}]"));
    json_t *p = pod_of(job, 0, 0);
    json_t *cs = at(p, "spec", "containers");

    /* the template's j-svc stays; j-ssh is added once */
    assert_json(at(p, "spec", "volumes"),
                "[{'name':'j-svc','emptyDir':{}},{'name':'data',"
                "'emptyDir':{}},{'name':'j-ssh','secret':{"
                "'secretName':'j-ssh','items':["
                "{'key':'id_rsa','path':'.ssh/id_rsa'},"
                "{'key':'id_rsa.pub','path':'.ssh/id_rsa.pub'},"
                "{'key':'authorized_keys','path':'.ssh/authorized_keys'},"
                "{'key':'config','path':'.ssh/config'}],"
                "'defaultMode':384}}]");
    /* a container that mounts something at /etc/volcano keeps it */
    assert_json(json_object_get(json_array_get(cs, 0), "volumeMounts"),
                "[{'name':'data','mountPath':'/etc/volcano'},"
                "{'name':'j-ssh','mountPath':'/root/.ssh','subPath':'.ssh'}]");
    assert_json(json_object_get(json_array_get(cs, 1), "volumeMounts"),
                "[{'name':'j-svc','mountPath':'/etc/volcano'},"
                "{'name':'j-ssh','mountPath':'/root/.ssh','subPath':'.ssh'}]");
    json_decref(p);
    json_decref(job);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Arguments.                                                          */

START_TEST(test_args_read_go_flag_forms)
{
    json_t *a = load("['-publish-not-ready-addresses',"
                     "'--disable-network-policy=T','--inject-hosts-env=0']");
    struct mu_svc_args svc = {0};
    struct mu_ssh_args ssh = {0};
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_svc_args(NULL, &svc, &err), 0);
    ck_assert(!svc.publish_not_ready && !svc.no_network_policy &&
              svc.inject_hosts_env);
    ck_assert_int_eq(mu_vcjob_svc_args(a, &svc, &err), 0);
    ck_assert(svc.publish_not_ready && svc.no_network_policy &&
              !svc.inject_hosts_env);
    json_decref(a);

    ck_assert_int_eq(mu_vcjob_ssh_args(json_null(), &ssh, &err), 0);
    ck_assert_str_eq(ssh.key_path, "/root/.ssh");
    ck_assert_int_eq(ssh.port, 22);
    ck_assert_ptr_null(ssh.private_key);
    ck_assert_ptr_null(ssh.public_key);
    a = load("['--ssh-port','2222','-ssh-key-file-path=/a/b',"
             "'--ssh-port=65535','--ssh-private-key=x=y']");
    ck_assert_int_eq(mu_vcjob_ssh_args(a, &ssh, &err), 0);
    ck_assert_int_eq(ssh.port, 65535);
    ck_assert_str_eq(ssh.key_path, "/a/b");
    ck_assert_str_eq(ssh.private_key, "x=y");
    json_decref(a);
}
END_TEST

static const struct {
    const char *plugins;
    const char *msg;
} bad_args[] = {
    {"{'ssh':['--ssh-port=abc']}",
     "spec.plugins.ssh[0]: --ssh-port: \"abc\" is not a port (1-65535)"},
    {"{'ssh':['--ssh-port=0']}",
     "spec.plugins.ssh[0]: --ssh-port: \"0\" is not a port (1-65535)"},
    {"{'ssh':['--ssh-port=65536']}",
     "spec.plugins.ssh[0]: --ssh-port: \"65536\" is not a port (1-65535)"},
    {"{'ssh':['--ssh-key-file-path=/x','--ssh-port','-1']}",
     "spec.plugins.ssh[1]: --ssh-port: \"-1\" is not a port (1-65535)"},
    {"{'ssh':['--ssh-port']}", "spec.plugins.ssh[0]: --ssh-port needs a value"},
    {"{'ssh':['--ssh-public-key=ssh-rsa AAAA']}",
     "spec.plugins.ssh: --ssh-public-key needs --ssh-private-key (Volcano "
     "would ignore it and generate a key)"},
    {"{'ssh':['--ssh-key-file-path=']}",
     "spec.plugins.ssh: --ssh-key-file-path must not be empty"},
    {"{'ssh':['--no-root']}",
     "spec.plugins.ssh[0]: unknown flag --no-root (known: --ssh-key-file-path, "
     "--ssh-private-key, --ssh-public-key, --ssh-port)"},
    {"{'svc':['--inject-hosts-env=maybe']}",
     "spec.plugins.svc[0]: --inject-hosts-env: \"maybe\" is not a boolean "
     "(true or false)"},
    {"{'svc':['--disable-network-policy','publish']}",
     "spec.plugins.svc[1]: \"publish\" is not a flag (--name or "
     "--name=value)"},
    {"{'svc':['---x']}", "spec.plugins.svc[0]: bad flag syntax: ---x"},
    {"{'svc':['--publish-not-ready']}",
     "spec.plugins.svc[0]: unknown flag --publish-not-ready (known: "
     "--publish-not-ready-addresses, --disable-network-policy, "
     "--inject-hosts-env)"},
};

START_TEST(test_bad_args_are_refused_everywhere)
{
    static builder *const all[] = {mu_vcjob_default,
                                   mu_vcjob_podgroup,
                                   mu_vcjob_svc_service,
                                   mu_vcjob_svc_configmap,
                                   mu_vcjob_svc_networkpolicy,
                                   mu_vcjob_ssh_secret};
    json_t *job = book(bad_args[_i].plugins);
    char *before = json_dumps(job, JSON_SORT_KEYS);
    char *after;

    for (size_t k = 0; k < MU_ARRAY_LEN(all); k++) {
        struct mu_err err = {{0}};
        json_t *out = json_null();

        ck_assert_int_eq(all[k](job, &out, &err), -EINVAL);
        ck_assert_str_eq(err.msg, bad_args[_i].msg);
        ck_assert_ptr_eq(out, json_null());
    }
    {
        struct mu_err err = {{0}};
        json_t *out = json_null();

        ck_assert_int_eq(mu_vcjob_pod(job, 1, 0, 0, 0, 0, &out, &err),
                         -EINVAL);
        ck_assert_str_eq(err.msg, bad_args[_i].msg);
        ck_assert_ptr_eq(out, json_null());
    }
    after = json_dumps(job, JSON_SORT_KEYS);
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    json_decref(job);
}
END_TEST

START_TEST(test_args_untouched_on_failure)
{
    json_t *a = load("['--disable-network-policy','--bogus']");
    struct mu_svc_args svc = {.publish_not_ready = true};
    struct mu_ssh_args ssh = {.port = 7};

    ck_assert_int_eq(mu_vcjob_svc_args(a, &svc, NULL), -EINVAL);
    ck_assert(svc.publish_not_ready && !svc.no_network_policy);
    json_decref(a);
    a = load("{'a':1}");
    ck_assert_int_eq(mu_vcjob_ssh_args(a, &ssh, NULL), -EINVAL);
    ck_assert_int_eq(ssh.port, 7);
    json_decref(a);
}
END_TEST

START_TEST(test_builders_need_name_and_uid)
{
    static builder *const all[] = {mu_vcjob_svc_service,
                                   mu_vcjob_svc_configmap,
                                   mu_vcjob_svc_networkpolicy,
                                   mu_vcjob_ssh_secret};
    json_t *nouid = book("{'svc':[],'ssh':[]}");
    json_t *noname = json_deep_copy(nouid);

    json_object_del(json_object_get(nouid, "metadata"), "uid");
    json_object_del(json_object_get(noname, "metadata"), "name");
    for (size_t k = 0; k < MU_ARRAY_LEN(all); k++) {
        struct mu_err err = {{0}};
        json_t *out = json_null();

        ck_assert_int_eq(all[k](nouid, &out, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "metadata.uid: required");
        ck_assert_int_eq(all[k](noname, &out, &err), -EINVAL);
        ck_assert_str_eq(err.msg, "metadata.name: required");
        ck_assert_int_eq(all[k](noname, &out, NULL), -EINVAL);
        ck_assert_ptr_eq(out, json_null());
    }
    json_decref(nouid);
    json_decref(noname);
}
END_TEST

START_TEST(test_builders_do_not_modify_the_job)
{
    static builder *const all[] = {mu_vcjob_svc_service,
                                   mu_vcjob_svc_configmap,
                                   mu_vcjob_svc_networkpolicy,
                                   mu_vcjob_ssh_secret};
    json_t *job = book("{'mpi':[],'env':[]}");
    char *before = json_dumps(job, JSON_SORT_KEYS), *after;

    for (size_t k = 0; k < MU_ARRAY_LEN(all); k++)
        json_decref(build(all[k], job));
    json_decref(pod_of(job, 1, 2));
    after = json_dumps(job, JSON_SORT_KEYS);
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    json_decref(job);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vcjob_plugins");
    TCase *svc = tcase_create("svc");
    TCase *ssh = tcase_create("ssh");
    TCase *pod = tcase_create("pod");
    TCase *args = tcase_create("args");
    SRunner *sr;
    int failed;

    tcase_add_test(svc, test_svc_service_of_book_job);
    tcase_add_test(svc, test_svc_service_publishes_not_ready_only_if_asked);
    tcase_add_test(svc, test_svc_configmap_of_book_job);
    tcase_add_test(svc, test_svc_configmap_follows_task_names_and_templates);
    tcase_add_test(svc, test_svc_networkpolicy_of_book_job);
    tcase_add_test(svc, test_svc_networkpolicy_disabled_by_flag);
    tcase_add_test(svc, test_plugins_off_make_nothing_and_webhook_implies_them);
    tcase_add_test(ssh, test_ssh_secret_public_key_is_half_of_private_key);
    tcase_add_test(ssh, test_ssh_secret_config_has_a_host_per_pod);
    tcase_add_test(ssh, test_ssh_secret_uses_given_keys);
    tcase_add_test(ssh, test_ssh_secret_refuses_unreadable_private_key_alone);
    tcase_add_test(pod, test_pod_svc_mounts_hosts_and_injects_env);
    tcase_add_test(pod, test_pod_svc_covers_init_containers_and_inject_flag);
    tcase_add_test(pod, test_pod_ssh_mounts_the_secret);
    tcase_add_test(pod, test_pod_keeps_template_volumes_without_duplicates);
    tcase_add_test(args, test_args_read_go_flag_forms);
    tcase_add_loop_test(args, test_bad_args_are_refused_everywhere, 0,
                        (int)MU_ARRAY_LEN(bad_args));
    tcase_add_test(args, test_args_untouched_on_failure);
    tcase_add_test(args, test_builders_need_name_and_uid);
    tcase_add_test(args, test_builders_do_not_modify_the_job);
    suite_add_tcase(s, svc);
    suite_add_tcase(s, ssh);
    suite_add_tcase(s, pod);
    suite_add_tcase(s, args);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
