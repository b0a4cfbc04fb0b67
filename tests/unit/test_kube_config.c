#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/config.h"
#include "test_kube_fake.h"

static struct mu_kube_config load_ok(const char *name, const char *context)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char *path = kf_data_path(name);
    int rc = mu_kube_config_load_file(path, context, &cfg, &err);

    ck_assert_msg(rc == 0, "%s: %d %s", name, rc, err.msg);
    free(path);
    return cfg;
}

/* Loads expecting failure; returns the code and leaves the message. */
static int load_fail(const char *name, struct mu_err *err)
{
    struct mu_kube_config cfg;
    char *path = kf_data_path(name);
    int rc = mu_kube_config_load_file(path, NULL, &cfg, err);

    ck_assert_int_ne(rc, 0);
    ck_assert_ptr_null(cfg.server); /* left empty */
    ck_assert_ptr_null(cfg.token);
    free(path);
    return rc;
}

START_TEST(test_kube_config_token_and_insecure)
{
    struct mu_kube_config cfg = load_ok("kubeconfig_token.yaml", NULL);

    ck_assert_str_eq(cfg.server, "https://127.0.0.1:6443"); /* no '/' */
    ck_assert_str_eq(cfg.token, "admin-token");
    ck_assert_ptr_null(cfg.token_file);
    ck_assert(cfg.insecure);
    ck_assert_ptr_null(cfg.ca);
    ck_assert_ptr_null(cfg.cert);
    ck_assert_ptr_null(cfg.key);
    ck_assert_str_eq(cfg.namespace, "default");
    ck_assert_ptr_nonnull(strstr(cfg.source, "kubeconfig_token.yaml"));
    mu_kube_config_release(&cfg);
    ck_assert_ptr_null(cfg.server);
}
END_TEST

START_TEST(test_kube_config_explicit_context_and_numeric_token)
{
    struct mu_kube_config cfg = load_ok("kubeconfig_token.yaml", "team-a");

    ck_assert_str_eq(cfg.token, "12345"); /* YAML integer read as text */
    ck_assert_str_eq(cfg.namespace, "team-a");
    mu_kube_config_release(&cfg);
}
END_TEST

START_TEST(test_kube_config_data_fields_are_base64_decoded_and_win)
{
    struct mu_kube_config cfg = load_ok("kubeconfig_data.yaml", NULL);

    /* certificate-authority names a missing file: -data wins, not read */
    ck_assert_uint_eq(cfg.ca_len, strlen("test-ca-bytes\n"));
    ck_assert_mem_eq(cfg.ca, "test-ca-bytes\n", cfg.ca_len);
    ck_assert_uint_eq(cfg.cert_len, strlen("test-client-cert-bytes\n"));
    ck_assert_mem_eq(cfg.cert, "test-client-cert-bytes\n", cfg.cert_len);
    /* split over two lines of a block scalar */
    ck_assert_uint_eq(cfg.key_len, strlen("test-client-key-bytes\n"));
    ck_assert_mem_eq(cfg.key, "test-client-key-bytes\n", cfg.key_len);
    ck_assert_ptr_null(cfg.token);
    ck_assert(!cfg.insecure);
    ck_assert_str_eq(cfg.namespace, "ml");
    mu_kube_config_release(&cfg);
}
END_TEST

START_TEST(test_kube_config_files_relative_to_kubeconfig_dir)
{
    struct mu_kube_config cfg = load_ok("kubeconfig_files.yaml", NULL);
    char *want = kf_data_path("pki/token");

    ck_assert_mem_eq(cfg.ca, "test-ca-bytes\n", cfg.ca_len);
    ck_assert_mem_eq(cfg.cert, "test-client-cert-bytes\n", cfg.cert_len);
    ck_assert_mem_eq(cfg.key, "test-client-key-bytes\n", cfg.key_len);
    ck_assert_str_eq(cfg.token_file, want);
    ck_assert_str_eq(cfg.token, "static-token"); /* kept; the file wins */
    free(want);
    mu_kube_config_release(&cfg);
}
END_TEST

START_TEST(test_kube_config_relative_paths_from_cwd_relative_kubeconfig)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char cwd[4096];

    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    ck_assert_int_eq(chdir(MU_KUBE_DATA "/.."), 0);
    ck_assert_int_eq(mu_kube_config_load_file("kube/kubeconfig_files.yaml",
                                              NULL, &cfg, &err),
                     0);
    ck_assert_str_eq(cfg.token_file, "kube/pki/token");
    ck_assert_mem_eq(cfg.ca, "test-ca-bytes\n", cfg.ca_len);
    mu_kube_config_release(&cfg);
    ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

START_TEST(test_kube_config_wrong_current_context_names_it)
{
    struct mu_err err = {{0}};

    ck_assert_int_eq(load_fail("kubeconfig_badctx.yaml", &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "kubeconfig_badctx.yaml: "));
    ck_assert_ptr_nonnull(
        strstr(err.msg, "current-context \"prod\": no such context"));
}
END_TEST

START_TEST(test_kube_config_unknown_explicit_context)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char *path = kf_data_path("kubeconfig_token.yaml");

    ck_assert_int_eq(mu_kube_config_load_file(path, "nope", &cfg, &err),
                     -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "\"nope\": no such context"));
    free(path);
}
END_TEST

START_TEST(test_kube_config_exec_user_is_refused_naming_the_key)
{
    struct mu_err err = {{0}};

    ck_assert_int_eq(load_fail("kubeconfig_exec.yaml", &err), -ENOTSUP);
    ck_assert_ptr_nonnull(strstr(err.msg, "users[eks].user.exec"));
}
END_TEST

START_TEST(test_kube_config_bad_base64_names_the_key)
{
    struct mu_err err = {{0}};

    ck_assert_int_eq(load_fail("kubeconfig_badb64.yaml", &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(
        err.msg, "kubeconfig_badb64.yaml: users[u].user.client-key-data: "
                 "invalid base64"));
}
END_TEST

START_TEST(test_kube_config_insecure_with_ca_is_refused)
{
    struct mu_err err = {{0}};

    ck_assert_int_eq(load_fail("kubeconfig_insecure_ca.yaml", &err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "clusters[c].cluster"));
    ck_assert_ptr_nonnull(strstr(err.msg, "insecure-skip-tls-verify"));
}
END_TEST

START_TEST(test_kube_config_missing_file_names_it)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};

    ck_assert_int_eq(
        mu_kube_config_load_file("/nonexistent/kc.yaml", NULL, &cfg, &err),
        -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/kc.yaml"));
}
END_TEST

/* Writes text to dir/name. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void rm_tree(const char *dir, const char *const *names, size_t n)
{
    char path[512];
    size_t i;

    for (i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

START_TEST(test_kube_config_user_file_errors_name_key)
{
    char dir[] = "/tmp/mu-kube-cfg-XXXXXX";
    static const char *const names[] = {"kc.yaml"};
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char path[512];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    put(dir, "kc.yaml",
        "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
        "users: [{name: u, user: {client-certificate: missing.crt,"
        " client-key: missing.key}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "current-context: c\n");
    snprintf(path, sizeof(path), "%s/kc.yaml", dir);
    ck_assert_int_eq(mu_kube_config_load_file(path, NULL, &cfg, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "users[u].user.client-certificate"));
    ck_assert_ptr_nonnull(strstr(err.msg, "missing.crt"));
    rm_tree(dir, names, MU_ARRAY_LEN(names));
}
END_TEST

START_TEST(test_kube_config_list_merges_first_wins)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char *a = kf_data_path("kubeconfig_merge_a.yaml");
    char *b = kf_data_path("kubeconfig_merge_b.yaml");
    char *list = mu_xasprintf("%s:/nonexistent/skipped.yaml:%s", a, b);

    ck_assert_int_eq(mu_kube_config_load_file(list, NULL, &cfg, &err), 0);
    ck_assert_str_eq(cfg.server, "https://first:6443");
    ck_assert_str_eq(cfg.token, "first-token");
    ck_assert_str_eq(cfg.namespace, "from-b");
    mu_kube_config_release(&cfg);
    free(list);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_kube_config_load_prefers_path_then_kubeconfig_env)
{
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char *tok = kf_data_path("kubeconfig_token.yaml");
    char *data = kf_data_path("kubeconfig_data.yaml");

    setenv("KUBECONFIG", tok, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    ck_assert_int_eq(mu_kube_config_load(data, NULL, &cfg, &err), 0);
    ck_assert_str_eq(cfg.namespace, "ml");
    mu_kube_config_release(&cfg);
    ck_assert_int_eq(mu_kube_config_load(NULL, NULL, &cfg, &err), 0);
    ck_assert_str_eq(cfg.token, "admin-token");
    mu_kube_config_release(&cfg);
    /* without KUBECONFIG: in-cluster (whose files do not exist here) */
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ck_assert_int_ne(mu_kube_config_load(NULL, NULL, &cfg, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "in-cluster"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    free(tok);
    free(data);
}
END_TEST

START_TEST(test_kube_config_incluster)
{
    char dir[] = "/tmp/mu-kube-sa-XXXXXX";
    static const char *const names[] = {"token", "ca.crt", "namespace"};
    struct mu_kube_incluster ic = {"fd00::1", "6443", dir};
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};
    char want[512];

    ck_assert_ptr_nonnull(mkdtemp(dir));
    put(dir, "token", "sa-token-1\n");
    put(dir, "ca.crt", "cluster-ca\n");
    put(dir, "namespace", "muster-system\n");
    ck_assert_int_eq(mu_kube_config_load_incluster(&ic, &cfg, &err), 0);
    ck_assert_str_eq(cfg.server, "https://[fd00::1]:6443");
    snprintf(want, sizeof(want), "%s/token", dir);
    ck_assert_str_eq(cfg.token_file, want);
    ck_assert_ptr_null(cfg.token); /* read by the client, on use */
    ck_assert_mem_eq(cfg.ca, "cluster-ca\n", cfg.ca_len);
    ck_assert_str_eq(cfg.namespace, "muster-system");
    ck_assert_str_eq(cfg.source, "in-cluster");
    mu_kube_config_release(&cfg);

    ic.host = "10.96.0.1";
    unlink(want); /* no token: an error naming the file */
    ck_assert_int_eq(mu_kube_config_load_incluster(&ic, &cfg, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, want));
    rm_tree(dir, names, MU_ARRAY_LEN(names));
}
END_TEST

START_TEST(test_kube_config_incluster_needs_env)
{
    struct mu_kube_incluster ic = {NULL, NULL, "/nonexistent"};
    struct mu_kube_config cfg;
    struct mu_err err = {{0}};

    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    ck_assert_int_eq(mu_kube_config_load_incluster(&ic, &cfg, &err), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "not running in a cluster"));
    ck_assert_ptr_null(cfg.server);
}
END_TEST

static const struct {
    const char *in;
    const char *out; /* NULL: invalid */
} b64[] = {
    {"", ""},
    {"Zg==", "f"},
    {"Zm8=", "fo"},
    {"Zm9v", "foo"},
    {"Zm9vYg==", "foob"},
    {"Zm9v\nYmFy\n", "foobar"},
    {" Zm9vYmE= ", "fooba"},
    {"Zm9", NULL},
    {"Zg=", NULL},
    {"Z===", NULL},
    {"Zg==Zg==", NULL},
    {"Zm9v!", NULL},
    {"Zg=a", NULL},
};

START_TEST(test_kube_config_base64_table)
{
    char *out = NULL;
    size_t len = 0;
    int rc = mu_kube_base64_decode(b64[_i].in, strlen(b64[_i].in), &out, &len);

    if (!b64[_i].out) {
        ck_assert_msg(rc == -EINVAL, "%s decoded", b64[_i].in);
        return;
    }
    ck_assert_msg(rc == 0, "%s: %d", b64[_i].in, rc);
    ck_assert_uint_eq(len, strlen(b64[_i].out));
    ck_assert_str_eq(out, b64[_i].out);
    free(out);
}
END_TEST

START_TEST(test_kube_config_copy_is_deep)
{
    struct mu_kube_config a = load_ok("kubeconfig_data.yaml", NULL), b;

    mu_kube_config_copy(&b, &a);
    mu_kube_config_release(&a);
    ck_assert_str_eq(b.server, "https://10.0.0.1:6443");
    ck_assert_mem_eq(b.key, "test-client-key-bytes\n", b.key_len);
    mu_kube_config_release(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_config");
    TCase *tc = tcase_create("kubeconfig");
    TCase *ic = tcase_create("incluster");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_kube_config_token_and_insecure);
    tcase_add_test(tc, test_kube_config_explicit_context_and_numeric_token);
    tcase_add_test(tc, test_kube_config_data_fields_are_base64_decoded_and_win);
    tcase_add_test(tc, test_kube_config_files_relative_to_kubeconfig_dir);
    tcase_add_test(
        tc, test_kube_config_relative_paths_from_cwd_relative_kubeconfig);
    tcase_add_test(tc, test_kube_config_wrong_current_context_names_it);
    tcase_add_test(tc, test_kube_config_unknown_explicit_context);
    tcase_add_test(tc, test_kube_config_exec_user_is_refused_naming_the_key);
    tcase_add_test(tc, test_kube_config_bad_base64_names_the_key);
    tcase_add_test(tc, test_kube_config_insecure_with_ca_is_refused);
    tcase_add_test(tc, test_kube_config_missing_file_names_it);
    tcase_add_test(tc, test_kube_config_user_file_errors_name_key);
    tcase_add_test(tc, test_kube_config_list_merges_first_wins);
    tcase_add_test(tc, test_kube_config_load_prefers_path_then_kubeconfig_env);
    tcase_add_loop_test(tc, test_kube_config_base64_table, 0,
                        (int)MU_ARRAY_LEN(b64));
    tcase_add_test(tc, test_kube_config_copy_is_deep);
    tcase_add_test(ic, test_kube_config_incluster);
    tcase_add_test(ic, test_kube_config_incluster_needs_env);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, ic);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
