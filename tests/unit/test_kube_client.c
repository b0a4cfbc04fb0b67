#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/json.h"
#include "kube/client.h"
#include "kube/pool.h"
#include "test_kube_fake.h"

static struct kf_server srv;

static void setup(void)
{
    ck_assert_int_eq(kf_start(&srv), 0);
}

static void teardown(void)
{
    kf_stop(&srv);
}

/* Injected time: sleeping advances it. */
struct fclock {
    int64_t now;
    int64_t slept;
    unsigned sleeps;
};

static int64_t f_now(void *c)
{
    return ((struct fclock *)c)->now;
}

static void f_sleep(void *c, int64_t ns)
{
    struct fclock *f = c;

    f->now += ns;
    f->slept += ns;
    f->sleeps++;
}

static struct mu_kube *client_opts(const char *token, const char *token_file,
                                   const struct mu_kube_opts *o)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    cfg.token = mu_xstrdup_or_null(token);
    cfg.token_file = mu_xstrdup_or_null(token_file);
    ck_assert_msg(mu_kube_new(&cfg, o, &k, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    return k;
}

static struct mu_kube *client(void)
{
    return client_opts("admin-token", NULL, NULL);
}

/* The recorded body of request i, parsed, equals want (JSON text). */
static void assert_body_json(size_t i, const char *want)
{
    const struct kf_request *r = kf_req(&srv, i);
    json_t *got = json_loadb(r->body, r->body_len, 0, NULL);
    json_t *exp = json_loads(want, 0, NULL);

    ck_assert_ptr_nonnull(got);
    ck_assert_ptr_nonnull(exp);
    ck_assert_msg(json_equal(got, exp), "body %.*s != %s", (int)r->body_len,
                  r->body, want);
    json_decref(got);
    json_decref(exp);
}

START_TEST(test_kube_get_sends_exact_request_and_parses_reply)
{
    struct mu_kube *k = client();
    const struct kf_request *r;
    struct mu_err err = {{0}};
    json_t *pod = NULL;
    long status = 0;

    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_int_eq(mu_kube_request(k, "GET",
                                     "/api/v1/namespaces/team-a/pods/train-0",
                                     NULL, NULL, NULL, &status, &pod, &err),
                     0);
    ck_assert_int_eq(status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(pod, "metadata"), "uid")),
                     "6f1c0a52-1111-4e2a-9c7e-000000000001");
    ck_assert_uint_eq(kf_count(&srv), 1);
    r = kf_req(&srv, 0);
    ck_assert_str_eq(r->method, "GET");
    ck_assert_str_eq(r->uri, "/api/v1/namespaces/team-a/pods/train-0");
    ck_assert_str_eq(r->query, "");
    ck_assert_str_eq(r->authorization, "Bearer admin-token");
    ck_assert_str_eq(r->accept, "application/json");
    ck_assert_ptr_null(r->content_type);
    ck_assert_uint_eq(r->body_len, 0);
    json_decref(pod);
    mu_kube_free(k);
}
END_TEST

/* A body with "\u0000" in a string value is read, the value whole. */
/* The fake answers only its own clients (test_kube_fake.h): a request
 * without its prefix, as a client of another test's stopped server on a
 * port given out again would send, gets a 404 and is not recorded. */
START_TEST(test_fake_server_refuses_another_servers_client)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err = {{0}};
    char *bare = mu_xasprintf("http://127.0.0.1:%u", srv.port);
    long status = 0;

    kf_reply_body(&srv, 200, "{}");
    mu_kube_config_init(&cfg);
    cfg.server = bare;
    ck_assert_int_eq(mu_kube_new(&cfg, NULL, &k, &err), 0);
    ck_assert_int_le(mu_kube_request(k, "PATCH", "/api/v1/namespaces/a/pods/p",
                                     NULL, NULL, NULL, &status, NULL, &err),
                     0);
    ck_assert_int_eq(status, 404);
    ck_assert_uint_eq(kf_count(&srv), 0);
    mu_kube_free(k);
    mu_kube_config_release(&cfg);
}
END_TEST

START_TEST(test_kube_get_reads_nul_in_a_string)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};
    json_t *pod = NULL;
    const json_t *v;
    long status = 0;

    kf_reply_body(&srv, 200,
                  "{\"metadata\":{\"name\":\"p\",\"annotations\":"
                  "{\"note\":\"a\\u0000b\"}}}");
    ck_assert_int_eq(mu_kube_request(k, "GET", "/api/v1/namespaces/a/pods/p",
                                     NULL, NULL, NULL, &status, &pod, &err),
                     0);
    ck_assert_int_eq(status, 200);
    v = json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "annotations"),
        "note");
    ck_assert_uint_eq(json_string_length(v), 3);
    ck_assert_mem_eq(json_string_value(v), "a\0b", 3);
    json_decref(pod);
    mu_kube_free(k);
}
END_TEST

/* cfg.api_table: what kube/verbs.h does not list is refused unsent. */
START_TEST(test_kube_api_table_refuses_unlisted_calls_unsent)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err = {{0}};
    struct mu_kube_param watch[] = {{"watch", "1"}, {NULL, NULL}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    cfg.api_table = true;
    ck_assert_int_eq(mu_kube_new(&cfg, NULL, &k, &err), 0);
    mu_kube_config_release(&cfg);
    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/namespaces/a/secrets/s", NULL,
                                 NULL, &err),
                     -EPERM);
    ck_assert_str_eq(err.msg, "GET /api/v1/namespaces/a/secrets/s: not in "
                              "muster's API table (src/kube/verbs.h), not "
                              "sent");
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/secrets", watch, NULL, &err),
                     -EPERM);
    ck_assert_int_eq(mu_kube_get(k, "/version", NULL, NULL, &err), -EPERM);
    ck_assert_uint_eq(kf_count(&srv), 0);
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/namespaces/a/pods/p", NULL, NULL,
                                 &err),
                     0);
    ck_assert_uint_eq(kf_count(&srv), 1);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_handle_is_reused_across_methods)
{
    struct mu_kube *k = client();
    json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
                            "Pod", "metadata", "name", "train-0");
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                              "muster.io/wake", "1");
    struct mu_kube_param grace[] = {{"gracePeriodSeconds", "0"}, {NULL, NULL}};
    struct mu_err err = {{0}};
    json_t *resp = NULL;

    kf_reply_file(&srv, 201, "pod.json");
    kf_reply_file(&srv, 200, "pod.json");
    kf_reply_file(&srv, 200, "pod.json");
    kf_reply_file(&srv, 200, "pod.json");
    kf_reply_file(&srv, 200, "pod.json");
    ck_assert_int_eq(
        mu_kube_create(k, "/api/v1/namespaces/team-a/pods", obj, &resp, &err),
        0);
    ck_assert_ptr_nonnull(resp);
    json_decref(resp);
    ck_assert_int_eq(
        mu_kube_merge_patch(k, "/api/v1/namespaces/team-a/pods/train-0", patch,
                            NULL, &err),
        0);
    ck_assert_int_eq(mu_kube_replace(k,
                                     "/api/v1/namespaces/team-a/pods/train-0",
                                     obj, NULL, &err),
                     0);
    ck_assert_int_eq(mu_kube_delete(k, "/api/v1/namespaces/team-a/pods/train-0",
                                    grace, NULL, &err),
                     0);
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/namespaces/team-a/pods/train-0",
                                 NULL, NULL, &err),
                     0);
    ck_assert_uint_eq(kf_count(&srv), 5);

    ck_assert_str_eq(kf_req(&srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&srv, 0)->uri, "/api/v1/namespaces/team-a/pods");
    ck_assert_str_eq(kf_req(&srv, 0)->content_type, "application/json");
    ck_assert_str_eq(kf_req(&srv, 0)->body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                     "{\"name\":\"train-0\"}}");

    ck_assert_str_eq(kf_req(&srv, 1)->method, "PATCH");
    ck_assert_str_eq(kf_req(&srv, 1)->content_type,
                     "application/merge-patch+json");
    ck_assert_str_eq(kf_req(&srv, 1)->body,
                     "{\"metadata\":{\"annotations\":{\"muster.io/wake\":"
                     "\"1\"}}}");

    ck_assert_str_eq(kf_req(&srv, 2)->method, "PUT");
    ck_assert_str_eq(kf_req(&srv, 2)->content_type, "application/json");

    ck_assert_str_eq(kf_req(&srv, 3)->method, "DELETE");
    ck_assert_str_eq(kf_req(&srv, 3)->uri,
                     "/api/v1/namespaces/team-a/pods/train-0?"
                     "gracePeriodSeconds=0");
    ck_assert_ptr_null(kf_req(&srv, 3)->content_type);
    ck_assert_uint_eq(kf_req(&srv, 3)->body_len, 0);

    /* a GET after a DELETE and a body-carrying PUT is a plain GET */
    ck_assert_str_eq(kf_req(&srv, 4)->method, "GET");
    ck_assert_uint_eq(kf_req(&srv, 4)->body_len, 0);
    json_decref(obj);
    json_decref(patch);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_bind_posts_binding_with_uid)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 201, "status_success.json");
    kf_reply_file(&srv, 201, "status_success.json");
    ck_assert_int_eq(mu_kube_bind(k, "team-a", "train-0", "u0", "gpu-01", &err),
                     0);
    ck_assert_int_eq(mu_kube_bind(k, "team-a", "train-1", NULL, "gpu-02", &err),
                     0);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&srv, 0)->uri,
                     "/api/v1/namespaces/team-a/pods/train-0/binding");
    ck_assert_str_eq(kf_req(&srv, 0)->content_type, "application/json");
    ck_assert_str_eq(kf_req(&srv, 0)->body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Binding\","
                     "\"metadata\":{\"name\":\"train-0\",\"namespace\":"
                     "\"team-a\",\"uid\":\"u0\"},\"target\":{\"apiVersion\":"
                     "\"v1\",\"kind\":\"Node\",\"name\":\"gpu-01\"}}");
    assert_body_json(1, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\","
                        "\"metadata\":{\"name\":\"train-1\",\"namespace\":"
                        "\"team-a\"},\"target\":{\"apiVersion\":\"v1\","
                        "\"kind\":\"Node\",\"name\":\"gpu-02\"}}");
    ck_assert_int_eq(mu_kube_bind(k, "team-a", "", NULL, "gpu-02", &err),
                     -EINVAL);
    ck_assert_uint_eq(kf_count(&srv), 2); /* nothing sent */
    mu_kube_free(k);
}
END_TEST

/* The binding path is built by paths.h: a name cannot add or climb a
 * segment. */
START_TEST(test_kube_bind_escapes_namespace_and_name)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 201, "status_success.json");
    ck_assert_int_eq(
        mu_kube_bind(k, "team a", "../nodes/n1", "u0", "gpu-01", &err), 0);
    ck_assert_str_eq(kf_req(&srv, 0)->uri,
                     "/api/v1/namespaces/team%20a/pods/..%2Fnodes%2Fn1/"
                     "binding");
    ck_assert_int_eq(mu_kube_bind(k, NULL, "p", NULL, "gpu-01", &err),
                     -EINVAL);
    ck_assert_int_eq(mu_kube_bind(k, "team-a", "p", NULL, "", &err), -EINVAL);
    ck_assert_uint_eq(kf_count(&srv), 1);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_bind_conflict_is_ebusy_with_message)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 409, "status_409_conflict.json");
    ck_assert_int_eq(mu_kube_bind(k, "team-a", "train-0", "u0", "gpu-01", &err),
                     -EBUSY);
    ck_assert_str_eq(err.msg,
                     "POST /api/v1/namespaces/team-a/pods/train-0/binding: "
                     "409 Conflict: Operation cannot be fulfilled on "
                     "pods/binding \"train-0\": pod train-0 is already "
                     "assigned to node \"gpu-02\"");
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_status_subresource_put_and_patch)
{
    struct mu_kube *k = client();
    const char *pg =
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups/pg";
    json_t *obj = json_pack("{s:{s:s}}", "status", "phase", "Running");
    struct mu_err err = {{0}};
    char want[256];

    kf_reply_body(&srv, 200, "{}");
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_status_replace(k, pg, obj, NULL, &err), 0);
    ck_assert_int_eq(mu_kube_status_patch(k, pg, obj, NULL, &err), 0);
    snprintf(want, sizeof(want), "%s/status", pg);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "PUT");
    ck_assert_str_eq(kf_req(&srv, 0)->uri, want);
    ck_assert_str_eq(kf_req(&srv, 0)->content_type, "application/json");
    ck_assert_str_eq(kf_req(&srv, 1)->method, "PATCH");
    ck_assert_str_eq(kf_req(&srv, 1)->uri, want);
    ck_assert_str_eq(kf_req(&srv, 1)->content_type,
                     "application/merge-patch+json");
    ck_assert_str_eq(kf_req(&srv, 1)->body,
                     "{\"status\":{\"phase\":\"Running\"}}");
    json_decref(obj);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_event_post)
{
    struct mu_kube *k = client();
    struct mu_kube_event ev = {
        .involved = {"scheduling.volcano.sh/v1beta1", "PodGroup", "team-a",
                     "pg", "pg-uid"},
        .type = "Warning",
        .reason = "Unschedulable",
        .message = "0/4 nodes: queue team-a is at its capability (8 GPUs)",
        .first_time = 1714564800, /* 2024-05-01T12:00:00Z */
        .last_time = 1714564860,
        .count = 3,
    };
    struct mu_err err = {{0}};

    kf_reply_body(&srv, 201, "{}");
    ck_assert_int_eq(mu_kube_event_post(k, &ev, NULL, &err), 0);
    ck_assert_str_eq(kf_req(&srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&srv, 0)->uri, "/api/v1/namespaces/team-a/events");
    assert_body_json(
        0, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
           "\"pg.17cb5b99f8638000\",\"namespace\":\"team-a\"},"
           "\"involvedObject\":{\"apiVersion\":"
           "\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
           "\"namespace\":\"team-a\",\"name\":\"pg\",\"uid\":\"pg-uid\"},"
           "\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes: queue "
           "team-a is at its capability (8 GPUs)\",\"type\":\"Warning\","
           "\"source\":{\"component\":\"muster\"},\"firstTimestamp\":"
           "\"2024-05-01T12:00:00Z\",\"lastTimestamp\":"
           "\"2024-05-01T12:01:00Z\",\"count\":3}");
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_event_of_cluster_object_goes_to_default)
{
    struct mu_kube_event ev = {
        .involved = {"v1", "Node", NULL, "gpu-01", NULL},
        .reason = "Reserved",
        .message = "m",
        .first_time = 0,
    };
    json_t *a = mu_kube_event_build(&ev, 0), *b = mu_kube_event_build(&ev, 1);
    const char *na, *nb;

    na = json_string_value(
        json_object_get(json_object_get(a, "metadata"), "name"));
    nb = json_string_value(
        json_object_get(json_object_get(b, "metadata"), "name"));
    ck_assert_str_eq(na, "gpu-01.0000000000000000");
    ck_assert_str_ne(na, nb); /* unique per client sequence */
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(a, "metadata"), "namespace")),
                     "default");
    ck_assert_str_eq(json_string_value(json_object_get(a, "type")), "Normal");
    ck_assert_int_eq(json_integer_value(json_object_get(a, "count")), 1);
    ck_assert_ptr_null(
        json_object_get(json_object_get(a, "involvedObject"), "namespace"));
    json_decref(a);
    json_decref(b);
}
END_TEST

START_TEST(test_kube_http_errors_carry_status_message)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};
    json_t *st = NULL;
    long status = 0;

    kf_reply_file(&srv, 404, "status_404.json");
    ck_assert_int_eq(mu_kube_request(k, "GET",
                                     "/api/v1/namespaces/team-a/pods/train-9",
                                     NULL, NULL, NULL, &status, &st, &err),
                     0);
    ck_assert_int_eq(status, 404);
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                     "NotFound");
    ck_assert_str_eq(err.msg, "GET /api/v1/namespaces/team-a/pods/train-9: "
                              "404 NotFound: pods \"train-9\" not found");
    json_decref(st);
    mu_kube_free(k);
}
END_TEST

static const struct {
    int status;
    const char *file;
    int want;
    const char *msg;
} http_errors[] = {
    {404, "status_404.json", -ENOENT, "404 NotFound: pods \"train-9\""},
    {409, "status_409_exists.json", -EEXIST, "409 AlreadyExists: pods"},
    {409, "status_409_conflict.json", -EBUSY, "409 Conflict: Operation"},
    {422, "status_422.json", -EINVAL,
     "422 Invalid: PodGroup.scheduling.volcano.sh \"pg\" is invalid: "
     "spec.minMember"},
    {410, "status_410.json", -ESTALE, "410 Expired: too old"},
    {500, "status_500.json", -EIO, "500 InternalError: etcdserver"},
    {401, "status_401.json", -EACCES, "401 Unauthorized: Unauthorized"},
};

START_TEST(test_kube_call_maps_http_errors)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};
    json_t *resp = (json_t *)&err; /* must be reset to NULL */
    json_t *obj = json_object();

    kf_reply_file(&srv, http_errors[_i].status, http_errors[_i].file);
    ck_assert_int_eq(
        mu_kube_create(k, "/api/v1/namespaces/team-a/pods", obj, &resp, &err),
        http_errors[_i].want);
    json_decref(obj);
    ck_assert_ptr_null(resp);
    ck_assert_msg(strstr(err.msg, http_errors[_i].msg), "%s", err.msg);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_http_errno_table)
{
    ck_assert_int_eq(mu_kube_http_errno(200, NULL), 0);
    ck_assert_int_eq(mu_kube_http_errno(201, NULL), 0);
    ck_assert_int_eq(mu_kube_http_errno(400, NULL), -EINVAL);
    ck_assert_int_eq(mu_kube_http_errno(403, NULL), -EPERM);
    ck_assert_int_eq(mu_kube_http_errno(405, NULL), -EOPNOTSUPP);
    ck_assert_int_eq(mu_kube_http_errno(409, NULL), -EBUSY);
    ck_assert_int_eq(mu_kube_http_errno(418, NULL), -EPROTO);
    ck_assert_int_eq(mu_kube_http_errno(429, NULL), -EAGAIN);
    ck_assert_int_eq(mu_kube_http_errno(503, NULL), -EIO);
    ck_assert_int_eq(mu_kube_http_errno(504, NULL), -ETIMEDOUT);
    /* refused before it was carried out, or never sent: surely nothing */
    for (long st = 400; st <= 599; st++) {
        int rc = mu_kube_http_errno(st, NULL);
        bool refused = st == 400 || st == 401 || st == 403 || st == 405 ||
                       st == 422 || st == 429;

        ck_assert_msg(mu_kube_not_done(rc) == refused, "HTTP %ld", st);
    }
    ck_assert(mu_kube_not_done(-ENOMEM));
    ck_assert(!mu_kube_not_done(0));
    ck_assert(!mu_kube_not_done(-ETIMEDOUT));
    ck_assert(!mu_kube_not_done(-EIO));
}
END_TEST

START_TEST(test_kube_error_body_that_is_not_json)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};
    json_t *resp = NULL;
    long status = 0;

    kf_reply(&srv, (struct kf_reply){404, "text/plain", "404 page not found\n",
                                     NULL, 0, false, false});
    ck_assert_int_eq(mu_kube_request(k, "GET", "/apis/nope", NULL, NULL, NULL,
                                     &status, &resp, &err),
                     0);
    ck_assert_int_eq(status, 404);
    ck_assert_ptr_null(resp);
    ck_assert_str_eq(err.msg, "GET /apis/nope: 404: 404 page not found");
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_success_body_that_is_not_json_is_eproto)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};
    json_t *resp = NULL;
    long status = -1;

    kf_reply(&srv, (struct kf_reply){200, "text/html", "<html>", NULL, 0, false,
                                     false});
    ck_assert_int_eq(
        mu_kube_request(k, "GET", "/", NULL, NULL, NULL, &status, &resp, &err),
        -EPROTO);
    ck_assert_int_eq(status, -1); /* out-params untouched on failure */
    ck_assert_ptr_null(resp);
    ck_assert_ptr_nonnull(strstr(err.msg, "GET /: 200 response is not JSON"));
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_body_cap_is_enobufs)
{
    struct mu_kube_opts o = {.max_body = 1000};
    struct mu_kube *k = client_opts("t", NULL, &o);
    struct mu_err err = {{0}};
    char *big = malloc(4001);
    json_t *resp = NULL;
    long status = 0;

    memset(big, ' ', 4000);
    big[0] = '{';
    big[3999] = '}';
    big[4000] = '\0';
    kf_reply_body(&srv, 200, big);
    kf_reply_body(&srv, 200, "{\"kind\":\"Small\"}");
    ck_assert_int_eq(mu_kube_request(k, "GET", "/big", NULL, NULL, NULL,
                                     &status, &resp, &err),
                     -ENOBUFS);
    ck_assert_ptr_null(resp);
    ck_assert_str_eq(err.msg, "GET /big: response larger than 1000 bytes");
    /* the client is still usable */
    ck_assert_int_eq(mu_kube_get(k, "/small", NULL, &resp, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(resp, "kind")), "Small");
    json_decref(resp);
    free(big);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_query_values_are_percent_encoded)
{
    struct mu_kube *k = client();
    struct mu_kube_param q[] = {
        {"labelSelector", "app=web&tier in (a,b)"},
        {"fieldSelector", "spec.nodeName="},
        {"skipped", NULL},
        {"continue", "eyJ2Ijoi+/="},
        {NULL, NULL},
    };
    struct mu_err err = {{0}};

    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/pods", q, NULL, &err), 0);
    ck_assert_str_eq(kf_req(&srv, 0)->path, "/api/v1/pods");
    ck_assert_str_eq(
        kf_req(&srv, 0)->query,
        "labelSelector=app%3dweb%26tier+in+%28a%2cb%29&"
        "fieldSelector=spec.nodeName%3d&continue=eyJ2Ijoi%2b%2f%3d");
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_bad_paths_are_einval)
{
    struct mu_kube *k = client();
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_kube_get(k, "api/v1/pods", NULL, NULL, &err), -EINVAL);
    ck_assert_int_eq(mu_kube_get(k, "/api/v1/pods?watch=1", NULL, NULL, &err),
                     -EINVAL);
    ck_assert_uint_eq(kf_count(&srv), 0);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_transport_error_is_eio_with_curl_text)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err = {{0}};
    char url[64];

    /* a port that was just free: nothing listens there */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", srv.port);
    kf_stop(&srv);
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(url);
    ck_assert_int_eq(mu_kube_new(&cfg, NULL, &k, &err), 0);
    ck_assert_int_eq(mu_kube_get(k, "/api", NULL, NULL, &err), -EIO);
    ck_assert_msg(strstr(err.msg, "GET /api: ") && strstr(err.msg, "onnect"),
                  "%s", err.msg);
    mu_kube_free(k);
    mu_kube_config_release(&cfg);
    ck_assert_int_eq(kf_start(&srv), 0); /* for teardown */
}
END_TEST

START_TEST(test_kube_timeout_is_etimedout)
{
    struct mu_kube_opts o = {.timeout_ms = 300};
    struct mu_kube *k = client_opts("t", NULL, &o);
    struct mu_err err = {{0}};

    kf_reply(&srv, (struct kf_reply){200, NULL, "{", NULL, 0, false, true});
    ck_assert_int_eq(mu_kube_get(k, "/slow", NULL, NULL, &err), -ETIMEDOUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "GET /slow: "));
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_no_token_no_authorization_header)
{
    struct mu_kube *k = client_opts(NULL, NULL, NULL);
    struct mu_err err = {{0}};

    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_get(k, "/version", NULL, NULL, &err), 0);
    ck_assert_ptr_null(kf_req(&srv, 0)->authorization);
    mu_kube_free(k);
}
END_TEST

/* ---- token file rotation ------------------------------------------------ */

static char tokdir[64];
static char tokpath[128];

static void write_token(const char *t)
{
    FILE *f = fopen(tokpath, "w");

    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", t);
    fclose(f);
}

static void tok_setup(void)
{
    char path[160];
    FILE *f;

    setup();
    snprintf(tokdir, sizeof(tokdir), "/tmp/mu-kube-tok-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tokdir));
    snprintf(tokpath, sizeof(tokpath), "%s/token", tokdir);
    write_token("tok-1");
    snprintf(path, sizeof(path), "%s/ca.crt", tokdir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("cluster-ca\n", f);
    fclose(f);
}

static void tok_teardown(void)
{
    char path[160];

    snprintf(path, sizeof(path), "%s/ca.crt", tokdir);
    unlink(path);
    unlink(tokpath);
    rmdir(tokdir);
    teardown();
}

/* An in-cluster client (service account directory tokdir) pointed at the
 * plain-HTTP fake server. */
static struct mu_kube *incluster_client(const struct mu_kube_opts *o)
{
    struct mu_kube_incluster ic = {"10.96.0.1", "443", tokdir};
    struct mu_kube_config cfg;
    struct mu_kube *k = NULL;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_kube_config_load_incluster(&ic, &cfg, &err) == 0, "%s",
                  err.msg);
    ck_assert_str_eq(cfg.server, "https://10.96.0.1:443");
    ck_assert_str_eq(cfg.token_file, tokpath);
    free(cfg.server);
    cfg.server = mu_xstrdup(srv.url);
    free(cfg.ca);
    cfg.ca = NULL;
    ck_assert_msg(mu_kube_new(&cfg, o, &k, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    return k;
}

START_TEST(test_kube_token_file_reread_after_60s)
{
    struct fclock fc = {.now = 1000};
    struct mu_kube_opts o = {.clock = {f_now, f_sleep, &fc}};
    struct mu_kube *k = incluster_client(&o);
    struct mu_err err = {{0}};
    int i;

    for (i = 0; i < 4; i++)
        kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_get(k, "/a", NULL, NULL, &err), 0);
    write_token("tok-2");
    fc.now += 59LL * 1000000000LL;
    ck_assert_int_eq(mu_kube_get(k, "/b", NULL, NULL, &err), 0);
    fc.now += 1LL * 1000000000LL;
    ck_assert_int_eq(mu_kube_get(k, "/c", NULL, NULL, &err), 0);
    /* a file that vanished keeps the last token */
    unlink(tokpath);
    fc.now += 61LL * 1000000000LL;
    ck_assert_int_eq(mu_kube_get(k, "/d", NULL, NULL, &err), 0);
    ck_assert_str_eq(kf_req(&srv, 0)->authorization, "Bearer tok-1");
    ck_assert_str_eq(kf_req(&srv, 1)->authorization, "Bearer tok-1");
    ck_assert_str_eq(kf_req(&srv, 2)->authorization, "Bearer tok-2");
    ck_assert_str_eq(kf_req(&srv, 3)->authorization, "Bearer tok-2");
    mu_kube_free(k);
}
END_TEST

static char logged[2048];

static void log_to_buf(void *ctx, const char *msg)
{
    size_t n = strlen(logged);

    snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

START_TEST(test_kube_token_file_reread_and_retry_after_401)
{
    struct fclock fc = {.now = 1000};
    struct mu_kube_opts o = {.clock = {f_now, f_sleep, &fc}, .log = log_to_buf};
    struct mu_kube *k = incluster_client(&o);
    json_t *patch = json_pack("{s:i}", "x", 1);
    struct mu_err err = {{0}};

    logged[0] = '\0';
    kf_reply_body(&srv, 200, "{}");
    kf_reply_file(&srv, 401, "status_401.json");
    kf_reply_body(&srv, 200, "{\"ok\":true}");
    ck_assert_int_eq(mu_kube_get(k, "/a", NULL, NULL, &err), 0);
    write_token("tok-3"); /* rotated well before the 60 s re-read */
    fc.now += 5LL * 1000000000LL;
    ck_assert_int_eq(mu_kube_merge_patch(k, "/b", patch, NULL, &err), 0);
    ck_assert_uint_eq(kf_count(&srv), 3);
    ck_assert_str_eq(kf_req(&srv, 1)->authorization, "Bearer tok-1");
    ck_assert_str_eq(kf_req(&srv, 2)->authorization, "Bearer tok-3");
    /* the retry is the same request, body and all */
    ck_assert_str_eq(kf_req(&srv, 2)->method, "PATCH");
    ck_assert_str_eq(kf_req(&srv, 2)->body, "{\"x\":1}");
    ck_assert_ptr_nonnull(strstr(logged, "PATCH /b: 401 Unauthorized"));
    json_decref(patch);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_401_with_unchanged_token_is_not_retried)
{
    struct mu_kube *k = incluster_client(NULL);
    struct mu_err err = {{0}};

    kf_reply_file(&srv, 401, "status_401.json");
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_get(k, "/a", NULL, NULL, &err), -EACCES);
    ck_assert_uint_eq(kf_count(&srv), 1);
    mu_kube_free(k);
}
END_TEST

/* ---- rate limit --------------------------------------------------------- */

START_TEST(test_kube_limiter_token_bucket)
{
    struct mu_kube_limiter l;
    const int64_t s = 1000000000LL;

    mu_kube_limiter_init(&l, 10, 3, 0);
    /* the burst goes at once */
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 0);
    /* then one every 100 ms, reservations queue up */
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), s / 10);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 2 * s / 10);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, s / 20), 3 * s / 10 - s / 20);
    /* a long pause refills only up to the burst */
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 100 * s), 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 100 * s), 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 100 * s), 0);
    ck_assert_int_gt(mu_kube_limiter_reserve(&l, 100 * s), 0);
    /* a clock that goes backwards does not mint tokens */
    ck_assert_int_gt(mu_kube_limiter_reserve(&l, 0), 0);
    /* qps <= 0: no limit */
    mu_kube_limiter_init(&l, 0, 0, 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 0);
    ck_assert_int_eq(mu_kube_limiter_reserve(&l, 0), 0);
}
END_TEST

/* A shared limiter counts the reservations it tells to wait, and their
 * waits: none within the burst, then each one past it. */
START_TEST(test_kube_shared_limiter_counts_the_waits_it_gives)
{
    struct mu_kube_shared_limiter l;
    const int64_t s = 1000000000LL;
    uint64_t n;
    int64_t ns;

    mu_kube_shared_limiter_init(&l, 10, 3, 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(mu_kube_shared_limiter_reserve(&l, 0), 0);
    mu_kube_shared_limiter_stats(&l, &n, &ns);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(ns, 0);
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&l, 0), s / 10);
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&l, 0), 2 * s / 10);
    mu_kube_shared_limiter_stats(&l, &n, &ns);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(ns, 3 * s / 10);
    /* refilled: no wait, no count */
    ck_assert_int_eq(mu_kube_shared_limiter_reserve(&l, 10 * s), 0);
    mu_kube_shared_limiter_stats(&l, &n, &ns);
    ck_assert_uint_eq(n, 2);
    mu_kube_shared_limiter_release(&l);
}
END_TEST

/* A pool's clients share one limit, and the pool reports its waits. */
START_TEST(test_kube_pool_clients_share_one_limit_and_count_its_waits)
{
    struct fclock fc = {.now = 0};
    struct mu_kube_opts o = {
        .qps = 2, .burst = 1, .clock = {f_now, f_sleep, &fc}};
    struct mu_kube_config cfg;
    struct mu_kube_pool *p = NULL;
    struct mu_err err = {{0}};
    struct mu_kube *k[3];
    uint64_t n;
    int64_t ns;

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    ck_assert_int_eq(mu_kube_pool_new(&cfg, &o, 4, &p, &err), 0);
    mu_kube_config_release(&cfg);
    for (int i = 0; i < 3; i++) {
        k[i] = mu_kube_pool_get(p, &err);
        ck_assert_ptr_nonnull(k[i]);
        kf_reply_body(&srv, 200, "{}");
    }
    /* one at once, then one every 500 ms, whichever client sends it */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(mu_kube_get(k[i], "/x", NULL, NULL, &err), 0);
    ck_assert_int_eq(fc.now, 1000000000LL);
    mu_kube_pool_limit_stats(p, &n, &ns);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(ns, 1000000000LL);
    for (int i = 0; i < 3; i++)
        mu_kube_pool_put(p, k[i]);
    mu_kube_pool_free(p);
}
END_TEST

START_TEST(test_kube_client_waits_for_limiter)
{
    struct fclock fc = {.now = 0};
    struct mu_kube_opts o = {
        .qps = 2, .burst = 1, .clock = {f_now, f_sleep, &fc}};
    struct mu_kube *k = client_opts("t", NULL, &o);
    struct mu_err err = {{0}};
    int i;

    for (i = 0; i < 5; i++)
        kf_reply_body(&srv, 200, "{}");
    for (i = 0; i < 5; i++)
        ck_assert_int_eq(mu_kube_get(k, "/x", NULL, NULL, &err), 0);
    /* 1 at once, then 4 more at 2/s: 2 s of (injected) waiting */
    ck_assert_int_eq(fc.slept, 2000000000LL);
    ck_assert_int_eq(fc.now, 2000000000LL);
    mu_kube_free(k);
}
END_TEST

START_TEST(test_kube_stop_flag_cancels_limiter_wait)
{
    struct fclock fc = {.now = 0};
    struct mu_kube_opts o = {
        .qps = 0.001, .burst = 1, .clock = {f_now, f_sleep, &fc}};
    struct mu_kube *k = client_opts("t", NULL, &o);
    struct mu_err err = {{0}};
    atomic_bool stop = false;

    mu_kube_set_stop(k, &stop);
    kf_reply_body(&srv, 200, "{}");
    ck_assert_int_eq(mu_kube_get(k, "/x", NULL, NULL, &err), 0);
    atomic_store(&stop, true);
    ck_assert_int_eq(mu_kube_get(k, "/x", NULL, NULL, &err), -ECANCELED);
    ck_assert_uint_eq(kf_count(&srv), 1);
    mu_kube_free(k);
}
END_TEST

/* mu_json_loadb: a NUL in a value is kept, in a key it becomes U+FFFD
 * (jansson holds no NUL in keys), an escaped backslash before "u0000" is
 * left alone, and text that is not JSON still fails. */
START_TEST(test_json_loadb_nul_in_values_and_keys)
{
    static const char in[] = "{\"k\\u0000\" : \"v\\u0000\","
                             " \"\\\\u0000\": [\"\\u0000\"]}";
    json_error_t e;
    json_t *j = mu_json_loadb(in, strlen(in), &e);
    const json_t *v;

    ck_assert_msg(j != NULL, "%s", e.text);
    v = json_object_get(j, "k\xef\xbf\xbd");
    ck_assert_uint_eq(json_string_length(v), 2);
    ck_assert_mem_eq(json_string_value(v), "v\0", 2);
    v = json_object_get(j, "\\u0000");
    ck_assert_uint_eq(json_string_length(json_array_get(v, 0)), 1);
    ck_assert_uint_eq(json_object_size(j), 2);
    json_decref(j);
    ck_assert_ptr_null(mu_json_loadb("{\"a\":", 5, &e));
    ck_assert_ptr_null(mu_json_loadb("{\"a\\u0000\":", 11, NULL));
}
END_TEST

/* A field read with a path refuses a NUL; labels and annotations keep the
 * text before it. */
START_TEST(test_json_member_str_refuses_nul)
{
    static const char in[] = "{\"name\":\"a\\u0000b\"}";
    json_t *j = mu_json_loadb(in, strlen(in), NULL);
    struct mu_err err = {{0}};
    const char *s = "untouched";

    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(mu_json_member_str(j, "metadata", "name", &s, &err),
                     -EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(err.msg, "metadata.name: must not contain a NUL character");
    ck_assert_str_eq(mu_json_str(j, "name"), "a");
    json_decref(j);
}
END_TEST

START_TEST(test_kube_time_text)
{
    char buf[32];

    ck_assert_str_eq(mu_kube_time_text(0, buf, sizeof(buf)),
                     "1970-01-01T00:00:00Z");
    ck_assert_str_eq(mu_kube_time_text(1714564800, buf, sizeof(buf)),
                     "2024-05-01T12:00:00Z");
}
END_TEST

START_TEST(test_kube_new_needs_server)
{
    struct mu_kube_config cfg;
    struct mu_kube *k = (struct mu_kube *)&cfg;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    ck_assert_int_eq(mu_kube_new(&cfg, NULL, &k, &err), -EINVAL);
    ck_assert_ptr_null(k);
    mu_kube_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_client");
    TCase *tc = tcase_create("rest");
    TCase *tt = tcase_create("token");
    TCase *tp = tcase_create("pure");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_kube_get_sends_exact_request_and_parses_reply);
    tcase_add_test(tc, test_fake_server_refuses_another_servers_client);
    tcase_add_test(tc, test_kube_get_reads_nul_in_a_string);
    tcase_add_test(tc, test_kube_handle_is_reused_across_methods);
    tcase_add_test(tc, test_kube_api_table_refuses_unlisted_calls_unsent);
    tcase_add_test(tc, test_kube_bind_posts_binding_with_uid);
    tcase_add_test(tc, test_kube_bind_escapes_namespace_and_name);
    tcase_add_test(tc, test_kube_bind_conflict_is_ebusy_with_message);
    tcase_add_test(tc, test_kube_status_subresource_put_and_patch);
    tcase_add_test(tc, test_kube_event_post);
    tcase_add_test(tc, test_kube_http_errors_carry_status_message);
    tcase_add_loop_test(tc, test_kube_call_maps_http_errors, 0,
                        (int)MU_ARRAY_LEN(http_errors));
    tcase_add_test(tc, test_kube_error_body_that_is_not_json);
    tcase_add_test(tc, test_kube_success_body_that_is_not_json_is_eproto);
    tcase_add_test(tc, test_kube_body_cap_is_enobufs);
    tcase_add_test(tc, test_kube_query_values_are_percent_encoded);
    tcase_add_test(tc, test_kube_bad_paths_are_einval);
    tcase_add_test(tc, test_kube_transport_error_is_eio_with_curl_text);
    tcase_add_test(tc, test_kube_timeout_is_etimedout);
    tcase_add_test(tc, test_kube_no_token_no_authorization_header);
    tcase_add_test(tc, test_kube_client_waits_for_limiter);
    tcase_add_test(tc, test_kube_pool_clients_share_one_limit_and_count_its_waits);
    tcase_add_test(tc, test_kube_stop_flag_cancels_limiter_wait);
    tcase_add_checked_fixture(tt, tok_setup, tok_teardown);
    tcase_add_test(tt, test_kube_token_file_reread_after_60s);
    tcase_add_test(tt, test_kube_token_file_reread_and_retry_after_401);
    tcase_add_test(tt, test_kube_401_with_unchanged_token_is_not_retried);
    tcase_add_test(tp, test_kube_limiter_token_bucket);
    tcase_add_test(tp, test_kube_shared_limiter_counts_the_waits_it_gives);

    tcase_add_test(tp, test_kube_http_errno_table);
    tcase_add_test(tp, test_kube_event_of_cluster_object_goes_to_default);
    tcase_add_test(tp, test_json_loadb_nul_in_values_and_keys);
    tcase_add_test(tp, test_json_member_str_refuses_nul);
    tcase_add_test(tp, test_kube_time_text);
    tcase_add_test(tp, test_kube_new_needs_server);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tt);
    suite_add_tcase(s, tp);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
