/* muster get and muster explain (cli/inspect.h) against the fake API
 * server: the requests they send, the fallback to status, the output. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/inspect.h"
#include "test_kube_fake.h"

static struct kf_server srv;
/* mkstemp(3) templates, copied afresh for each test */
#define KC_TEMPLATE "/tmp/muster-test-cli-kc.XXXXXX"
#define OUT_TEMPLATE "/tmp/muster-test-cli-out.XXXXXX"
static char kc[sizeof(KC_TEMPLATE)];
static char outf[sizeof(OUT_TEMPLATE)];

static void setup(void)
{
    int fd;
    FILE *f;

    ck_assert_int_eq(kf_start(&srv), 0);
    memcpy(kc, KC_TEMPLATE, sizeof(kc));
    memcpy(outf, OUT_TEMPLATE, sizeof(outf));
    fd = mkstemp(kc);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
            "clusters: [{name: c, cluster: {server: \"%s\"}}]\n"
            "users: [{name: u, user: {token: t0k}}]\n"
            "contexts: [{name: x, context: {cluster: c, user: u, "
            "namespace: team}}]\n",
            srv.url);
    fclose(f);
    fd = mkstemp(outf);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void teardown(void)
{
    kf_stop(&srv);
    unlink(kc);
    unlink(outf);
}

/* Runs fn(argc, argv) with stdout and stderr in one file; its text. */
static char *run(int (*fn)(int, char **), int *rc, int argc,
                 const char *const *args)
{
    char *argv[16];

    int saved_out = dup(1), saved_err = dup(2);
    int fd = open(outf, O_WRONLY | O_TRUNC);
    FILE *f;
    char *buf = calloc(1, 65536);

    for (int i = 0; i < argc; i++)
        argv[i] = strdup(args[i]);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    *rc = fn(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    f = fopen(outf, "r");
    ck_assert(fread(buf, 1, 65535, f) < 65535);
    fclose(f);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return buf;
}

#define PG(ns, name, queue, created, phase, running, msg)                     \
    "{\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name "\","         \
    "\"creationTimestamp\":\"" created "\",\"ownerReferences\":[{\"kind\":"  \
    "\"Job\",\"name\":\"job-" name "\"}]},\"spec\":{\"minMember\":2,"        \
    "\"queue\":\"" queue "\"},\"status\":{\"phase\":\"" phase "\","          \
    "\"running\":" running ",\"conditions\":[{\"type\":\"Unschedulable\","   \
    "\"message\":\"" msg "\"}]}}"

START_TEST(test_explain_falls_back_to_status_when_muster_is_not_reached)
{
    const char *argv[] = {"explain", "vcjob/job-big", "--kubeconfig", kc, NULL};
    int rc;
    char *out;

    kf_reply_body(&srv, 404,
                  "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\","
                  "\"message\":\"services \\\"muster\\\" not found\"}");
    kf_reply_body(&srv, 200,
                  "{\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":"
                  "{\"weight\":3,\"capability\":{\"nvidia.com/gpu\":16}},"
                  "\"status\":{\"state\":\"Open\",\"pending\":1,"
                  "\"inqueue\":1,\"running\":1}}]}");
    kf_reply_body(&srv, 200,
                  "{\"items\":["
                  PG("team", "big", "a", "2026-01-01T10:00:00Z", "Inqueue",
                     "0", "2/2 tasks in gang unschedulable: no room")
                  "," PG("team", "early", "a", "2026-01-01T09:00:00Z",
                         "Pending", "0", "waiting")
                  "," PG("team", "done", "a", "2026-01-01T08:00:00Z",
                         "Running", "2", "")
                  "," PG("other", "b2", "b", "2026-01-01T07:00:00Z",
                         "Pending", "0", "x") "]}");
    out = run(mu_cli_explain, &rc, 4, argv);
    ck_assert_msg(rc == 0, "%s", out);
    /* the service proxy first, then queues and every namespace's PodGroups */
    ck_assert_uint_eq(kf_count(&srv), 3);
    ck_assert_str_eq(kf_req(&srv, 0)->path,
                     "/api/v1/namespaces/muster-system/services/"
                     "http:muster:metrics/proxy/debug/gangs");
    ck_assert_str_eq(kf_req(&srv, 0)->authorization, "Bearer t0k");
    ck_assert_str_eq(kf_req(&srv, 0)->query, "fresh=1");
    ck_assert_str_eq(kf_req(&srv, 1)->path,
                     "/apis/scheduling.volcano.sh/v1beta1/queues");
    ck_assert_str_eq(kf_req(&srv, 2)->path,
                     "/apis/scheduling.volcano.sh/v1beta1/podgroups");
    ck_assert_msg(strstr(out, "muster: muster not reached (GET /api/v1/"
                              "namespaces/muster-system/services/"
                              "http:muster:metrics/proxy/debug/gangs: 404"),
                  "%s", out);
    ck_assert_msg(strstr(out, "from the PodGroups' and Queues' status"), "%s",
                  out);
    ck_assert_msg(strstr(out, "PodGroup team/big (vcjob job-big): Inqueue in "
                              "queue a, 0 of 2 members running\n"),
                  "%s", out);
    ck_assert_msg(strstr(out, "Reason:   2/2 tasks in gang unschedulable: "
                              "no room\n"),
                  "%s", out);
    /* early: created before it, waiting; done runs; b2 is in queue b */
    ck_assert_msg(strstr(out, "Ahead:    1 gang(s) in queue a: team/early\n"),
                  "%s", out);
    ck_assert_msg(strstr(out, "Queue a: Open, weight 3, deserved -, allocated "
                              "-, capability nvidia.com/gpu=16; 2 pending, 1 "
                              "running gang(s)\n"),
                  "%s", out);
    free(out);
}
END_TEST

START_TEST(test_get_queues_from_muster_url_as_yaml_and_table)
{
    char url[160];
    const char *y[] = {"get", "queues", "--muster-url", url, "-o", "yaml", NULL};
    const char *t[] = {"get", "queues", "--muster-url", url, NULL};
    static const char q[] =
        "[{\"name\":\"a\",\"state\":\"Open\",\"weight\":2,\"reclaimable\":true,"
        "\"capability\":{\"nvidia.com/gpu\":\"16\"},\"guarantee\":{},"
        "\"allocated\":{\"nvidia.com/gpu\":\"12\"},\"gangs\":3,"
        "\"pendingGangs\":1,\"runningGangs\":2,\"deserved\":{\"nvidia.com/gpu\":"
        "\"12\"}}]";
    int rc;
    char *out;

    snprintf(url, sizeof(url), "%s/", srv.url); /* a trailing / is fine */
    /* muster makes its report on demand: asked again after a 503 */
    kf_reply_body(&srv, 503,
                  "{\"error\":\"muster is making a fresh report after its "
                  "next cycle: try again in a second\"}");
    kf_reply_body(&srv, 200, q);
    kf_reply_body(&srv, 200, q);
    out = run(mu_cli_get, &rc, 6, y);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_uint_eq(kf_count(&srv), 2);
    ck_assert_str_eq(kf_req(&srv, 0)->path, "/debug/queues");
    ck_assert_str_eq(kf_req(&srv, 1)->path, "/debug/queues");
    ck_assert_str_eq(kf_req(&srv, 1)->query, "fresh=1"); /* the last cycle */
    ck_assert_ptr_null(kf_req(&srv, 1)->authorization);
    ck_assert_str_eq(out, "- \"name\": \"a\"\n"
                          "  \"state\": \"Open\"\n"
                          "  \"weight\": 2\n"
                          "  \"reclaimable\": true\n"
                          "  \"capability\":\n"
                          "    \"nvidia.com/gpu\": \"16\"\n"
                          "  \"guarantee\": {}\n"
                          "  \"allocated\":\n"
                          "    \"nvidia.com/gpu\": \"12\"\n"
                          "  \"gangs\": 3\n"
                          "  \"pendingGangs\": 1\n"
                          "  \"runningGangs\": 2\n"
                          "  \"deserved\":\n"
                          "    \"nvidia.com/gpu\": \"12\"\n");
    free(out);
    out = run(mu_cli_get, &rc, 4, t);
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_str_eq(out,
                     "NAME  STATE  WEIGHT  DESERVED           ALLOCATED          "
                     "CAPABILITY         PENDING  RUNNING\n"
                     "a     Open   2       nvidia.com/gpu=12  nvidia.com/gpu=12  "
                     "nvidia.com/gpu=16  1        2\n");
    free(out);
}
END_TEST

START_TEST(test_usage_errors_say_what_is_wrong)
{
    const char *a[] = {"get", "nodes", NULL};
    const char *b[] = {"explain", "pod/x", NULL};
    const char *c[] = {"get", "gangs", "-o", "wide", NULL};
    const char *d[] = {"explain", "pg/x", "-n", NULL};
    int rc;
    char *out;

    out = run(mu_cli_get, &rc, 2, a);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "\"nodes\": want queues or gangs"), "%s", out);
    free(out);
    out = run(mu_cli_explain, &rc, 2, b);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "kind \"pod\": want podgroup or vcjob"), "%s",
                  out);
    free(out);
    out = run(mu_cli_get, &rc, 4, c);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "-o wide: want table, json or yaml"), "%s", out);
    free(out);
    out = run(mu_cli_explain, &rc, 3, d);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "-n needs a value"), "%s", out);
    free(out);
    ck_assert_uint_eq(kf_count(&srv), 0); /* nothing sent */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("inspect");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_explain_falls_back_to_status_when_muster_is_not_reached);
    tcase_add_test(tc, test_get_queues_from_muster_url_as_yaml_and_table);
    tcase_add_test(tc, test_usage_errors_say_what_is_wrong);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
