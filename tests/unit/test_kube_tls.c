/*
 * The client over HTTPS: a throwaway CA, server and client certificates are
 * made with openssl at start into a temporary directory; the fake server is
 * libmicrohttpd with GnuTLS, verifying client certificates against the CA.
 * Without openssl or MHD TLS support the whole file is skipped (TAP 1..0).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/watch.h"
#include "test_kube_fake.h"

static char dir[] = "/tmp/mu-kube-tls-XXXXXX";
static char *ca_pem, *server_crt, *server_key;
static struct kf_server srv;

static char *slurp(const char *name)
{
    struct mu_err err;
    char *path = mu_xasprintf("%s/%s", dir, name), *buf = NULL;
    size_t len;

    if (mu_kube_read_file(path, 1 << 20, &buf, &len, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    free(path);
    return buf;
}

/* Makes ca, other-ca (untrusted), server (SAN IP:127.0.0.1) and client
 * (O=system:masters) keys and certificates. */
static int make_pki(void)
{
    static const char script[] =
        "set -e; cd '%s'; exec 2>openssl.log;"
        "EC='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';"
        "for ca in ca other-ca; do"
        " openssl req -x509 $EC -keyout $ca.key -out $ca.crt -days 2"
        "  -subj /CN=muster-test-$ca; done;"
        "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n"
        "basicConstraints=CA:FALSE\\n' > server.ext;"
        "printf 'extendedKeyUsage=clientAuth\\nbasicConstraints=CA:FALSE\\n'"
        " > client.ext;"
        "for who in server client; do"
        " openssl req -new $EC -keyout $who.key -out $who.csr"
        "  -subj \"/O=system:masters/CN=$who\";"
        " openssl x509 -req -in $who.csr -CA ca.crt -CAkey ca.key"
        "  -CAcreateserial -days 2 -out $who.crt -extfile $who.ext; done;"
        "base64 -w0 client.crt > client.b64";
    char cmd[2048];

    snprintf(cmd, sizeof(cmd), script, dir);
    if (system(cmd) == 0)
        return 0;
    snprintf(cmd, sizeof(cmd), "cat '%s/openssl.log' >&2", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "openssl failed\n");
    return -1;
}

static void cleanup_pki(void)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static void setup(void)
{
    ck_assert_int_eq(kf_start_tls(&srv, server_crt, server_key, ca_pem), 0);
    srv.require_cert = true;
}

static void teardown(void)
{
    kf_stop(&srv);
}

/* Writes DIR/kc.yaml pointing at the server, with the given cluster and
 * user bodies (YAML flow mappings without braces), and loads it. */
static struct mu_kube_config kubeconfig(const char *cluster, const char *user)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char *path = mu_xasprintf("%s/kc.yaml", dir);
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\n"
            "clusters: [{name: c, cluster: {server: '%s', %s}}]\n"
            "users: [{name: u, user: {%s}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
            "current-context: c\n",
            srv.url, cluster, user);
    fclose(f);
    ck_assert_msg(mu_kube_config_load_file(path, NULL, &cfg, &err) == 0, "%s",
                  err.msg);
    free(path);
    return cfg;
}

static char *client_cert_user(void)
{
    char *b64 = slurp("client.b64");
    char *u = mu_xasprintf("client-certificate-data: %s, "
                           "client-key: client.key",
                           b64);

    free(b64);
    return u;
}

static int get(const struct mu_kube_config *cfg, struct mu_err *err)
{
    struct mu_kube *k = NULL;
    json_t *resp = NULL;
    int rc;

    ck_assert_int_eq(mu_kube_new(cfg, NULL, &k, err), 0);
    rc = mu_kube_get(k, "/api/v1/namespaces/default/pods/train-0", NULL, &resp,
                     err);
    if (rc == 0)
        ck_assert_str_eq(json_string_value(json_object_get(resp, "kind")),
                         "Pod");
    json_decref(resp);
    mu_kube_free(k);
    return rc;
}

START_TEST(test_kube_tls_client_cert_and_ca_from_kubeconfig)
{
    char *user = client_cert_user();
    struct mu_kube_config cfg =
        kubeconfig("certificate-authority: ca.crt", user);
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_msg(get(&cfg, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(kf_count(&srv), 1);
    ck_assert(kf_req(&srv, 0)->client_cert); /* verified by the server */
    ck_assert_ptr_null(kf_req(&srv, 0)->authorization);
    ck_assert_str_eq(kf_req(&srv, 0)->uri,
                     "/api/v1/namespaces/default/pods/train-0");
    mu_kube_config_release(&cfg);
    free(user);
}
END_TEST

START_TEST(test_kube_tls_untrusted_server_is_eio)
{
    char *user = client_cert_user();
    struct mu_kube_config cfg =
        kubeconfig("certificate-authority: other-ca.crt", user);
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_int_eq(get(&cfg, &err), -EIO);
    ck_assert_msg(strstr(err.msg, "certificate"), "%s", err.msg);
    ck_assert_uint_eq(kf_count(&srv), 0);
    mu_kube_config_release(&cfg);
    free(user);
}
END_TEST

START_TEST(test_kube_tls_insecure_skips_server_verification)
{
    char *user = client_cert_user();
    struct mu_kube_config cfg =
        kubeconfig("insecure-skip-tls-verify: true", user);
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_msg(get(&cfg, &err) == 0, "%s", err.msg);
    ck_assert(kf_req(&srv, 0)->client_cert);
    mu_kube_config_release(&cfg);
    free(user);
}
END_TEST

START_TEST(test_kube_tls_without_client_cert_is_eacces)
{
    struct mu_kube_config cfg =
        kubeconfig("certificate-authority: ca.crt", "token: t");
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_int_eq(get(&cfg, &err), -EACCES);
    ck_assert(!kf_req(&srv, 0)->client_cert);
    ck_assert_str_eq(kf_req(&srv, 0)->authorization, "Bearer t");
    mu_kube_config_release(&cfg);
}
END_TEST

static void count_events(void *ctx, enum mu_watch_type t, json_t *obj)
{
    (*(int *)ctx)++;
    json_decref(obj);
}

START_TEST(test_kube_tls_watch)
{
    char *user = client_cert_user();
    struct mu_kube_config cfg =
        kubeconfig("certificate-authority: ca.crt", user);
    struct mu_watch_opts o = {.path = "/api/v1/pods"};
    struct mu_watch_stats st;
    struct mu_watch *w = NULL;
    struct mu_err err = {{0}};
    atomic_bool stop = false;
    int n = 0;

    o.stop = &stop;
    srv.exhausted = &stop;
    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply_file(&srv, 200, "watch_bookmarks.ndjson");
    ck_assert_int_eq(mu_watch_new(&cfg, &o, &w, &err), 0);
    ck_assert_int_eq(mu_watch_run(w, count_events, &n), 0);
    mu_watch_get_stats(w, &st);
    ck_assert_int_eq(n, 4); /* LIST_BEGIN, LIST_END, ADDED, MODIFIED */
    ck_assert_uint_eq(st.bookmarks, 2);
    ck_assert_str_eq(mu_watch_rv(w), "200");
    ck_assert(kf_req(&srv, 1)->client_cert);
    mu_watch_free(w);
    mu_kube_config_release(&cfg);
    free(user);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_tls");
    TCase *tc = tcase_create("https");
    SRunner *sr;
    int failed;

#ifndef KF_GNUTLS
    printf("1..0 # SKIP built without GnuTLS headers: the fake server "
           "cannot verify client certificates\n");
    return EXIT_SUCCESS;
#endif
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        printf("1..0 # SKIP libmicrohttpd has no TLS support\n");
        return EXIT_SUCCESS;
    }
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("1..0 # SKIP openssl not found (apt-get install openssl)\n");
        return EXIT_SUCCESS;
    }
    if (!mkdtemp(dir) || make_pki() != 0) {
        fprintf(stderr, "could not make a test PKI in %s\n", dir);
        return 99;
    }
    ca_pem = slurp("ca.crt");
    server_crt = slurp("server.crt");
    server_key = slurp("server.key");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_kube_tls_client_cert_and_ca_from_kubeconfig);
    tcase_add_test(tc, test_kube_tls_untrusted_server_is_eio);
    tcase_add_test(tc, test_kube_tls_insecure_skips_server_verification);
    tcase_add_test(tc, test_kube_tls_without_client_cert_is_eacces);
    tcase_add_test(tc, test_kube_tls_watch);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(ca_pem);
    free(server_crt);
    free(server_key);
    cleanup_pki();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
