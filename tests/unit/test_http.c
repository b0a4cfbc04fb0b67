/*
 * The extender's HTTP server, driven with libcurl over 127.0.0.1 (port 0).
 *
 * Run with --tls, the binary serves HTTPS with a client CA: a throwaway
 * CA, server and client certificates (and a stranger CA's client) made by
 * openssl at start in a temporary directory; it skips as a whole (TAP
 * "1..0 # SKIP") without openssl or libmicrohttpd TLS support.
 */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "extender/extender.h"
#include "extender/http.h"

static struct mu_view_slot slot;
static struct mu_barrier *bar;
static struct mu_ext_server *srv;
static char base[64];
static atomic_int n_binds;
static bool tls;                 /* --tls */
static char dir[] = "/tmp/mu-http-tls-XXXXXX";
/* The client certificate and key req() presents ("" none), in dir. */
static const char *client_cert = "client.pem", *client_key = "client.key";

/* Slow runs (valgrind, a loaded machine) stretch every duration by
 * MU_TEST_TIME_SCALE (the valgrind test setup sets it). */
static long scaled(long ms)
{
    const char *e = getenv("MU_TEST_TIME_SCALE");
    long f = e ? strtol(e, NULL, 10) : 1;

    return ms * (f > 0 ? f : 1);
}

static char *path_of(const char *name)
{
    return mu_xasprintf("%s/%s", dir, name);
}

static char *slurp(const char *name)
{
    char *path = path_of(name);
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    free(path);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = calloc(1, (size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* Writes text to dir/name through a rename, as a Secret volume swaps. */
static void put(const char *name, const char *text)
{
    char *path = path_of(name), *tmp = mu_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, path), 0);
    free(tmp);
    free(path);
}

static void copy(const char *from, const char *to)
{
    char *text = slurp(from);

    ck_assert_ptr_nonnull(text);
    put(to, text);
    free(text);
}

static int fake_bind(void *ctx, const char *ns, const char *name,
                     const char *uid, const char *node, struct mu_err *err)
{
    atomic_fetch_add(&n_binds, 1);
    return 0;
}

static int fake_unbind(void *ctx, const char *ns, const char *name,
                       const char *uid, struct mu_err *err)
{
    return 0;
}

static char *extra_metrics(void *ctx)
{
    return mu_xstrdup("# TYPE muster_cycle_seconds gauge\n"
                      "muster_cycle_seconds 0.5");
}

static void publish(bool synced)
{
    struct mu_view *v = mu_view_new(1, synced);

    mu_view_add_pod(v, "u-res", "team-a", "w-0", "team-a/pg", "gpu-02",
                    "team-a/pg#1", 2, NULL);
    mu_view_add_pod(v, "u-res2", "team-a", "w-1", "team-a/pg", "gpu-03",
                    "team-a/pg#1", 2, NULL);
    mu_view_add_pod(v, "u-solo", "team-a", "solo", "team-a/solo", "gpu-04",
                    NULL, 0, NULL);
    mu_view_publish(&slot, v);
}

static atomic_bool is_leader;

static bool leading_fn(void *ctx)
{
    (void)ctx;
    return atomic_load(&is_leader);
}

static void setup(void)
{
    struct mu_ext_server_opts o = {0};
    struct mu_err err = {{0}};

    atomic_init(&n_binds, 0);
    atomic_store(&is_leader, true);
    o.leading = leading_fn;
    mu_view_slot_init(&slot);
    bar = mu_barrier_new(scaled(tls ? 5000 : 600), fake_bind, fake_unbind, NULL,
                         NULL);
    o.listen = "127.0.0.1:0";
    o.views = &slot;
    o.barrier = bar;
    o.metrics = extra_metrics;
    if (tls) {
        /* the server's own copies, which a test may rotate */
        copy("server.pem", "srv.pem");
        copy("server.key", "srv.key");
        o.tls_cert_file = path_of("srv.pem");
        o.tls_key_file = path_of("srv.key");
        o.tls_client_ca_file = path_of("ca.pem");
        o.tls_reload_ms = 20;
        client_cert = "client.pem";
        client_key = "client.key";
    }
    /* a TLS handshake counts towards the arrival deadline, and takes
     * seconds under valgrind */
    if (tls)
        o.arrival_timeout_ms =
            (unsigned)scaled((int)MU_EXT_ARRIVAL_TIMEOUT_S * 1000);
    ck_assert_msg(mu_ext_server_start(&o, &srv, &err) == 0, "%s", err.msg);
    free((char *)o.tls_cert_file);
    free((char *)o.tls_key_file);
    free((char *)o.tls_client_ca_file);
    ck_assert_int_gt(mu_ext_server_port(srv), 0);
    snprintf(base, sizeof(base), "%s://127.0.0.1:%d", tls ? "https" : "http",
             mu_ext_server_port(srv));
}

static void teardown(void)
{
    mu_ext_server_stop(srv);
    mu_barrier_free(bar);
    mu_view_slot_release(&slot);
}

struct resp {
    long status;
    char *body;
    size_t len;
    char allow[64];
    char type[128];
    long connects;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct resp *r = ud;

    r->body = realloc(r->body, r->len + sz * n + 1);
    memcpy(r->body + r->len, p, sz * n);
    r->len += sz * n;
    r->body[r->len] = '\0';
    return sz * n;
}

static void header_value(const char *line, size_t n, const char *name,
                         char *out, size_t outsz)
{
    size_t k = strlen(name);

    if (n > k && !strncasecmp(line, name, k)) {
        int len = (int)(n - k);

        while (len > 0 &&
               (line[k + len - 1] == '\r' || line[k + len - 1] == '\n'))
            len--;
        snprintf(out, outsz, "%.*s", len, line + k);
    }
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct resp *r = ud;

    header_value(p, sz * n, "Allow: ", r->allow, sizeof(r->allow));
    header_value(p, sz * n, "Content-Type: ", r->type, sizeof(r->type));
    return sz * n;
}

/* A body sent in parts (chunked). */
struct parts {
    const char *data;
    size_t len, off;
    int left; /* parts still to send */
};

static size_t on_read(char *buf, size_t sz, size_t n, void *ud)
{
    struct parts *p = ud;
    size_t want, room = sz * n;

    if (p->off >= p->len)
        return 0;
    want = p->left > 1 ? (p->len - p->off) / (size_t)p->left : p->len - p->off;
    if (want > room)
        want = room;
    memcpy(buf, p->data + p->off, want);
    p->off += want;
    p->left--;
    return want;
}

static CURLcode try_req(CURL *h, const char *method, const char *path,
                        const char *body, size_t len, int parts,
                        struct resp *out);

/* One request. h: a handle to reuse (keep-alive) or NULL. parts > 0:
 * chunked in that many parts. */
static struct resp req(CURL *h, const char *method, const char *path,
                       const char *body, size_t len, int parts)
{
    struct resp r = {0};
    CURLcode rc = try_req(h, method, path, body, len, parts, &r);

    ck_assert_msg(rc == CURLE_OK, "%s %s: %s", method, path,
                  curl_easy_strerror(rc));
    if (!r.body)
        r.body = strdup("");
    return r;
}

/* req() that may fail: the curl code, and *r when it is CURLE_OK. */
static CURLcode try_req(CURL *h, const char *method, const char *path,
                        const char *body, size_t len, int parts,
                        struct resp *out)
{
    struct resp r = {0};
    struct parts pr = {body, len, 0, parts};
    struct curl_slist *hdr = NULL;
    char url[256];
    CURL *c = h ? h : curl_easy_init();
    CURLcode rc;

    snprintf(url, sizeof(url), "%s%s", base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, scaled(20));
    if (tls) {
        char *ca = path_of("ca.pem"), *cert = path_of(client_cert),
             *key = path_of(client_key);

        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
        curl_easy_setopt(c, CURLOPT_SSLCERT, *client_cert ? cert : NULL);
        curl_easy_setopt(c, CURLOPT_SSLKEY, *client_key ? key : NULL);
        free(ca);
        free(cert);
        free(key);
    }
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    if (!strcmp(method, "POST")) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        if (parts) {
            hdr = curl_slist_append(hdr, "Transfer-Encoding: chunked");
            curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(c, CURLOPT_READDATA, &pr);
        } else {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        }
    } else {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r.connects);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdr);
    if (!h)
        curl_easy_cleanup(c);
    if (rc != CURLE_OK)
        free(r.body);
    else
        *out = r;
    return rc;
}

static json_t *json_of(struct resp *r)
{
    json_error_t e;
    json_t *j = json_loadb(r->body, r->len, 0, &e);

    ck_assert_msg(j != NULL, "%s: %s", e.text, r->body);
    ck_assert_str_eq(r->type, "application/json");
    return j;
}

static const char filter_body[] =
    "{\"Pod\":{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"w-0\","
    "\"uid\":\"u-res\"},\"spec\":{\"schedulerName\":\"volcano\"}},"
    "\"Nodes\":null,\"NodeNames\":[\"gpu-01\",\"gpu-02\",\"gpu-03\"]}";

static void assert_passes_gpu_02(struct resp *r)
{
    json_t *j = json_of(r);
    json_t *names = json_object_get(j, "NodeNames");

    ck_assert_int_eq(r->status, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "Error")), "");
    ck_assert_uint_eq(json_array_size(names), 1);
    ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "gpu-02");
    ck_assert_uint_eq(
        json_object_size(json_object_get(j, "FailedAndUnresolvableNodes")), 2);
    json_decref(j);
}

START_TEST(test_http_healthz_answers_ok)
{
    struct resp r = req(NULL, "GET", "/healthz", NULL, 0, 0);

    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "ok\n");
    free(r.body);
}
END_TEST

START_TEST(test_http_readyz_is_503_until_a_synced_view_is_published)
{
    struct resp r = req(NULL, "GET", "/readyz", NULL, 0, 0);

    ck_assert_int_eq(r.status, 503);
    free(r.body);
    publish(false);
    r = req(NULL, "GET", "/readyz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 503);
    free(r.body);
    publish(true);
    r = req(NULL, "GET", "/readyz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "ok\n");
    free(r.body);
}
END_TEST

START_TEST(test_http_a_follower_is_not_ready_and_refuses_bind)
{
    /* a pod the view reserves, bound alone (no release batch) */
    static const char args[] =
        "{\"PodName\":\"solo\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-solo\",\"Node\":\"gpu-04\"}";
    struct resp r;

    publish(true);
    atomic_store(&is_leader, false);
    r = req(NULL, "GET", "/readyz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(r.body, "not ready: not the leader\n");
    free(r.body);
    r = req(NULL, "POST", "/gang/bind", args, sizeof(args) - 1, 0);
    ck_assert_int_eq(r.status, 503);
    ck_assert_str_eq(r.body, "not the leader\n");
    free(r.body);
    ck_assert_int_eq(atomic_load(&n_binds), 0);
    atomic_store(&is_leader, true);
    r = req(NULL, "GET", "/readyz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    r = req(NULL, "POST", "/gang/bind", args, sizeof(args) - 1, 0);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    ck_assert_int_eq(atomic_load(&n_binds), 1);
}
END_TEST

START_TEST(test_http_filter_is_served_at_any_prefix)
{
    static const char *const paths[] = {"/filter", "/gang/filter",
                                        "/a/b/filter"};

    publish(true);
    for (size_t i = 0; i < MU_ARRAY_LEN(paths); i++) {
        struct resp r = req(NULL, "POST", paths[i], filter_body,
                            sizeof(filter_body) - 1, 0);

        assert_passes_gpu_02(&r);
        free(r.body);
    }
}
END_TEST

START_TEST(test_http_prioritize_scores_and_preempt_vetoes)
{
    struct resp r;
    json_t *j;

    publish(true);
    r = req(NULL, "POST", "/gang/prioritize", filter_body,
            sizeof(filter_body) - 1, 0);
    ck_assert_int_eq(r.status, 200);
    j = json_of(&r);
    ck_assert_uint_eq(json_array_size(j), 3);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_array_get(j, 1), "Score")), 10);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_array_get(j, 0), "Score")), 0);
    json_decref(j);
    free(r.body);
    r = req(NULL, "POST", "/gang/preempt", filter_body, sizeof(filter_body) - 1,
            0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"NodeNameToMetaVictims\":{}}");
    free(r.body);
}
END_TEST

struct binder {
    pthread_t t;
    const char *body;
    struct resp r;
};

static void *bind_main(void *arg)
{
    struct binder *b = arg;

    b->r = req(NULL, "POST", "/gang/bind", b->body, strlen(b->body), 0);
    return NULL;
}

START_TEST(test_http_bind_holds_a_batch_of_two_until_both_arrive)
{
    struct binder b[2] = {
        {.body = "{\"PodName\":\"w-0\",\"PodNamespace\":\"team-a\","
                 "\"PodUID\":\"u-res\",\"Node\":\"gpu-02\"}"},
        {.body = "{\"PodName\":\"w-1\",\"PodNamespace\":\"team-a\","
                 "\"PodUID\":\"u-res2\",\"Node\":\"gpu-03\"}"},
    };

    publish(true);
    ck_assert_int_eq(pthread_create(&b[0].t, NULL, bind_main, &b[0]), 0);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    ck_assert_int_eq(atomic_load(&n_binds), 0); /* held */
    ck_assert_int_eq(pthread_create(&b[1].t, NULL, bind_main, &b[1]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(b[i].t, NULL);
        ck_assert_int_eq(b[i].r.status, 200);
        ck_assert_str_eq(b[i].r.body, "{\"Error\":\"\"}");
        free(b[i].r.body);
    }
    ck_assert_int_eq(atomic_load(&n_binds), 2);
}
END_TEST

START_TEST(test_http_chunked_body_in_two_parts)
{
    struct resp r;

    publish(true);
    r = req(NULL, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 2);
    assert_passes_gpu_02(&r);
    free(r.body);
}
END_TEST

START_TEST(test_http_oversize_body_is_413)
{
    size_t n = MU_EXT_MAX_BODY + 1;
    char *big = malloc(n);
    struct resp r;

    memset(big, ' ', n);
    r = req(NULL, "POST", "/filter", big, n, 0);
    ck_assert_int_eq(r.status, 413);
    free(r.body);
    r = req(NULL, "POST", "/filter", big, n, 3); /* unannounced */
    ck_assert_int_eq(r.status, 413);
    free(r.body);
    /* exactly the limit is read (and is not JSON) */
    r = req(NULL, "POST", "/filter", big, n - 1, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert(strstr(r.body, "malformed ExtenderArgs"));
    free(r.body);
    free(big);
}
END_TEST

START_TEST(test_http_wrong_method_is_405_and_unknown_path_404)
{
    struct resp r = req(NULL, "GET", "/filter", NULL, 0, 0);

    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(r.allow, "POST");
    free(r.body);
    r = req(NULL, "PUT", "/gang/bind", NULL, 0, 0);
    ck_assert_int_eq(r.status, 405);
    free(r.body);
    r = req(NULL, "POST", "/healthz", "{}", 2, 0);
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(r.allow, "GET, HEAD");
    free(r.body);
    r = req(NULL, "GET", "/nope", NULL, 0, 0);
    ck_assert_int_eq(r.status, 404);
    free(r.body);
    r = req(NULL, "POST", "/filterx", "{}", 2, 0);
    ck_assert_int_eq(r.status, 404);
    free(r.body);
}
END_TEST

START_TEST(test_http_malformed_requests_are_200_with_error)
{
    struct resp r = req(NULL, "POST", "/filter", "{\"Pod\":", 7, 0);
    json_t *j = json_of(&r);

    ck_assert_int_eq(r.status, 200);
    ck_assert(strstr(json_string_value(json_object_get(j, "Error")),
                     "malformed ExtenderArgs"));
    json_decref(j);
    free(r.body);
    r = req(NULL, "POST", "/filter", "", 0, 0); /* no body at all */
    ck_assert_int_eq(r.status, 200);
    j = json_of(&r);
    ck_assert(
        strstr(json_string_value(json_object_get(j, "Error")), "empty body"));
    json_decref(j);
    free(r.body);
    r = req(NULL, "POST", "/prioritize", "", 0, 0);
    ck_assert_str_eq(r.body, "[]");
    free(r.body);
    r = req(NULL, "POST", "/bind", "nope", 4, 0);
    ck_assert_int_eq(r.status, 200);
    j = json_of(&r);
    ck_assert(strstr(json_string_value(json_object_get(j, "Error")),
                     "malformed ExtenderBindingArgs"));
    json_decref(j);
    free(r.body);
}
END_TEST

START_TEST(test_http_metrics_text_has_the_counters)
{
    static const char lonely[] =
        "{\"PodName\":\"w-0\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-res\",\"Node\":\"gpu-02\"}";
    static const char stranger[] =
        "{\"PodName\":\"web\",\"PodNamespace\":\"d\",\"PodUID\":\"u-web\","
        "\"Node\":\"n1\"}";
    static const char solo[] =
        "{\"PodName\":\"solo\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-solo\",\"Node\":\"gpu-04\"}";
    static const char *const want[] = {
        "# TYPE muster_extender_filter_requests_total counter\n",
        "\nmuster_extender_filter_requests_total 2\n",
        "# TYPE muster_extender_filter_duration_seconds histogram\n",
        "\nmuster_extender_filter_duration_seconds_bucket{le=\"0.000001\"} ",
        "\nmuster_extender_filter_duration_seconds_bucket{le=\"4.194304\"} 2\n",
        "\nmuster_extender_filter_duration_seconds_bucket{le=\"+Inf\"} 2\n",
        "\nmuster_extender_filter_duration_seconds_sum 0.",
        "\nmuster_extender_filter_duration_seconds_count 2\n",
        "\nmuster_extender_binds_total{result=\"ok\"} 1\n",
        "\nmuster_extender_binds_total{result=\"failed\"} 3\n",
        "\nmuster_extender_batches_timed_out_total 1\n",
        "\nmuster_extender_bad_requests_total 3\n",
        "\nmuster_extender_connections_cut_total 0\n",
        "\nmuster_cycle_seconds 0.5\n",
    };
    struct resp r;

    publish(true);
    free(req(NULL, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0)
             .body);
    free(req(NULL, "POST", "/filter", "[", 1, 0).body); /* bad 1 */
    free(req(NULL, "GET", "/filter", NULL, 0, 0).body); /* bad 2 */
    free(req(NULL, "POST", "/bind", "x", 1, 0).body);   /* bad 3, failed */
    /* a member alone: times out (600 ms), failed */
    free(req(NULL, "POST", "/bind", lonely, sizeof(lonely) - 1, 0).body);
    /* a pod muster does not know: refused, failed */
    free(req(NULL, "POST", "/bind", stranger, sizeof(stranger) - 1, 0).body);
    /* a reserved pod outside a batch: bound at once, ok */
    free(req(NULL, "POST", "/bind", solo, sizeof(solo) - 1, 0).body);
    r = req(NULL, "GET", "/metrics", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.type, "text/plain; version=0.0.4; charset=utf-8");
    for (size_t i = 0; i < MU_ARRAY_LEN(want); i++)
        ck_assert_msg(strstr(r.body, want[i]), "no \"%s\" in:\n%s", want[i],
                      r.body);
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(srv)->bind_calls), 4);
    free(r.body);
}
END_TEST

START_TEST(test_http_keeps_connections_alive)
{
    CURL *h = curl_easy_init();
    struct resp r;

    publish(true);
    for (int i = 0; i < 3; i++) {
        r = req(h, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0);
        assert_passes_gpu_02(&r);
        ck_assert_int_eq(r.connects, i == 0 ? 1 : 0);
        free(r.body);
    }
    curl_easy_cleanup(h);
}
END_TEST

START_TEST(test_http_start_reports_bad_addresses_and_busy_ports)
{
    struct mu_ext_server_opts o = {0};
    struct mu_ext_server *s2 = NULL;
    struct mu_err err = {{0}};
    char busy[64];

    o.views = &slot;
    o.barrier = bar;
    o.listen = "no-port-here";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_ptr_null(s2);
    o.listen = "127.0.0.1:http";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    snprintf(busy, sizeof(busy), "127.0.0.1:%d", mu_ext_server_port(srv));
    o.listen = busy;
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EADDRINUSE);
    ck_assert_msg(strstr(err.msg, busy), "%s", err.msg);
    o.listen = "127.0.0.1:0";
    o.tls_cert_file = "/nonexistent/only-a-certificate.pem";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_ptr_null(s2);
}
END_TEST

START_TEST(test_http_plain_is_refused_beyond_loopback)
{
    struct mu_ext_server_opts o = {0};
    struct mu_ext_server *s2 = NULL;
    struct mu_err err = {{0}};

    o.views = &slot;
    o.barrier = bar;
    o.listen = "0.0.0.0:0";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_ptr_null(s2);
    ck_assert_msg(strstr(err.msg, "loopback only") &&
                      strstr(err.msg, "--client-ca-file"),
                  "%s", err.msg);
    o.listen = "[::1]:0"; /* loopback too */
    if (mu_ext_server_start(&o, &s2, &err) == 0)
        mu_ext_server_stop(s2);
    else /* a host without IPv6 */
        ck_assert_msg(!strstr(err.msg, "loopback only"), "%s", err.msg);
}
END_TEST

START_TEST(test_http_metrics_listen_serves_probes_on_their_own_port)
{
    struct mu_ext_server_opts o = {0};
    struct mu_ext_server *s2 = NULL;
    struct mu_err err = {{0}};
    char ext[64];
    struct resp r;

    o.views = &slot;
    o.barrier = bar;
    o.listen = "127.0.0.1:0";
    o.metrics_listen = "127.0.0.1:0";
    ck_assert_msg(mu_ext_server_start(&o, &s2, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(mu_ext_server_metrics_port(s2), 0);
    ck_assert_int_ne(mu_ext_server_metrics_port(s2), mu_ext_server_port(s2));
    publish(true);
    snprintf(ext, sizeof(ext), "http://127.0.0.1:%d", mu_ext_server_port(s2));
    snprintf(base, sizeof(base), "http://127.0.0.1:%d",
             mu_ext_server_metrics_port(s2));
    r = req(NULL, "GET", "/healthz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    r = req(NULL, "GET", "/readyz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    free(r.body);
    r = req(NULL, "GET", "/metrics", NULL, 0, 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert(strstr(r.body, "muster_extender_filter_requests_total 0\n"));
    free(r.body);
    r = req(NULL, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0);
    ck_assert_int_eq(r.status, 404); /* the verbs are not here */
    free(r.body);
    snprintf(base, sizeof(base), "%s", ext);
    r = req(NULL, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0);
    assert_passes_gpu_02(&r);
    free(r.body);
    r = req(NULL, "GET", "/healthz", NULL, 0, 0);
    ck_assert_int_eq(r.status, 404); /* nor the probes here */
    free(r.body);
    mu_ext_server_stop(s2);
}
END_TEST

START_TEST(test_https_serves_a_client_the_ca_signed)
{
    struct resp r = req(NULL, "GET", "/healthz", NULL, 0, 0);

    ck_assert_int_eq(r.status, 200);
    free(r.body);
    publish(true);
    r = req(NULL, "POST", "/gang/filter", filter_body, sizeof(filter_body) - 1,
            0);
    assert_passes_gpu_02(&r);
    free(r.body);
}
END_TEST

/* No handler ran: nothing counted, not even a bad request. */
static void assert_nothing_served(void)
{
    struct mu_ext_stats *st = mu_ext_server_stats(srv);

    ck_assert_uint_eq(atomic_load(&st->filter_calls), 0);
    ck_assert_uint_eq(atomic_load(&st->bad_requests), 0);
}

START_TEST(test_https_refuses_a_client_without_a_certificate)
{
    struct resp r;

    publish(true);
    client_cert = client_key = "";
    ck_assert_int_ne(try_req(NULL, "POST", "/filter", filter_body,
                             sizeof(filter_body) - 1, 0, &r),
                     CURLE_OK);
    ck_assert_int_ne(try_req(NULL, "GET", "/healthz", NULL, 0, 0, &r),
                     CURLE_OK);
    assert_nothing_served();
}
END_TEST

START_TEST(test_https_refuses_a_certificate_of_another_ca)
{
    struct resp r;

    publish(true);
    client_cert = "stranger.pem";
    client_key = "stranger.key";
    ck_assert_int_ne(try_req(NULL, "POST", "/filter", filter_body,
                             sizeof(filter_body) - 1, 0, &r),
                     CURLE_OK);
    /* the CA's, but a server certificate: not for a TLS client */
    client_cert = "server.pem";
    client_key = "server.key";
    ck_assert_int_ne(try_req(NULL, "POST", "/filter", filter_body,
                             sizeof(filter_body) - 1, 0, &r),
                     CURLE_OK);
    assert_nothing_served();
}
END_TEST

START_TEST(test_https_refuses_plain_http)
{
    CURL *c = curl_easy_init();
    char url[96];

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz",
             mu_ext_server_port(srv));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    ck_assert_int_ne(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
}
END_TEST

/* The subject of the certificate a new connection is served. */
static char *served_subject(void)
{
    CURL *c = curl_easy_init();
    struct curl_certinfo *ci = NULL;
    char url[96], *ca = path_of("ca.pem"), *cert = path_of("client.pem"),
                  *key = path_of("client.key"), *subject = NULL;

    snprintf(url, sizeof(url), "%s/healthz", base);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_SSLCERT, cert);
    curl_easy_setopt(c, CURLOPT_SSLKEY, key);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, scaled(5));
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci);
    for (int i = 0; ci && i < ci->num_of_certs && !subject; i++)
        for (struct curl_slist *l = ci->certinfo[i]; l; l = l->next)
            if (!strncmp(l->data, "Subject:", 8)) {
                subject = strdup(l->data + 8);
                break;
            }
    curl_easy_cleanup(c);
    free(ca);
    free(cert);
    free(key);
    ck_assert_ptr_nonnull(subject);
    return subject;
}

/* Waits (up to 5 s, scaled) until reloads_ok (ok) or reloads_failed is
 * at least n; the other count must stay at most other_max. */
static void wait_reloads(bool ok, unsigned long long n,
                         unsigned long long other_max)
{
    unsigned long long got_ok = 0, got_failed = 0;

    for (long i = 0; i < scaled(250); i++) {
        struct resp r = req(NULL, "GET", "/metrics", NULL, 0, 0);
        const char *p = strstr(r.body, "tls_reloads_total{result=\"ok\"} ");
        const char *q =
            strstr(r.body, "tls_reloads_total{result=\"failed\"} ");

        ck_assert(p && q);
        got_ok = strtoull(strchr(p, ' ') + 1, NULL, 10);
        got_failed = strtoull(strchr(q, ' ') + 1, NULL, 10);
        free(r.body);
        ck_assert_uint_le((ok ? got_failed : got_ok), other_max);
        if ((ok ? got_ok : got_failed) >= n)
            return;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    ck_abort_msg("want %s reloads >= %llu; ok %llu, failed %llu",
                 ok ? "ok" : "failed", n,
                 got_ok, got_failed);
}

START_TEST(test_https_serves_a_rotated_certificate_without_restart)
{
    struct binder b[2] = {
        {.body = "{\"PodName\":\"w-0\",\"PodNamespace\":\"team-a\","
                 "\"PodUID\":\"u-res\",\"Node\":\"gpu-02\"}"},
        {.body = "{\"PodName\":\"w-1\",\"PodNamespace\":\"team-a\","
                 "\"PodUID\":\"u-res2\",\"Node\":\"gpu-03\"}"},
    };
    CURL *h = curl_easy_init();
    char *subject = served_subject();
    struct resp r;

    ck_assert_msg(strstr(subject, "muster-server") &&
                      !strstr(subject, "rotated"),
                  "%s", subject);
    free(subject);
    publish(true);
    r = req(h, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0);
    free(r.body);
    /* a gang member waits in /bind across the rotation */
    ck_assert_int_eq(pthread_create(&b[0].t, NULL, bind_main, &b[0]), 0);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    copy("rotated.key", "srv.key");
    copy("rotated.pem", "srv.pem");
    /* the key alone may be seen first: a mismatch, refused */
    wait_reloads(true, 1, 1);
    subject = served_subject();
    ck_assert_msg(strstr(subject, "muster-server-rotated"), "%s", subject);
    free(subject);
    /* the connection opened before is still served, on its old session */
    r = req(h, "POST", "/filter", filter_body, sizeof(filter_body) - 1, 0);
    assert_passes_gpu_02(&r);
    ck_assert_int_eq(r.connects, 0);
    free(r.body);
    curl_easy_cleanup(h);
    /* and the gang binds whole, its second member on the new certificate */
    ck_assert_int_eq(pthread_create(&b[1].t, NULL, bind_main, &b[1]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(b[i].t, NULL);
        ck_assert_int_eq(b[i].r.status, 200);
        ck_assert_str_eq(b[i].r.body, "{\"Error\":\"\"}");
        free(b[i].r.body);
    }
    ck_assert_int_eq(atomic_load(&n_binds), 2);
}
END_TEST

START_TEST(test_https_keeps_the_certificate_when_a_rotation_is_broken)
{
    char *subject;

    put("srv.pem", "-----BEGIN CERTIFICATE-----\nnope\n"
                   "-----END CERTIFICATE-----\n");
    wait_reloads(false, 1, 0);
    subject = served_subject();
    ck_assert_msg(strstr(subject, "muster-server") &&
                      !strstr(subject, "rotated"),
                  "%s", subject);
    free(subject);
    /* a key that is not the certificate's is refused too (the files never
     * make a valid pair until the last step) */
    copy("rotated.key", "srv.key");
    copy("server.pem", "srv.pem");
    wait_reloads(false, 2, 0);
    subject = served_subject();
    ck_assert_msg(!strstr(subject, "rotated"), "%s", subject);
    free(subject);
    /* and the files made whole again are taken */
    copy("rotated.pem", "srv.pem");
    wait_reloads(true, 1, ~0ull);
    subject = served_subject();
    ck_assert_msg(strstr(subject, "rotated"), "%s", subject);
    free(subject);
}
END_TEST

START_TEST(test_https_bad_files_fail_to_start)
{
    struct mu_ext_server_opts o = {0};
    struct mu_ext_server *s2 = NULL;
    struct mu_err err = {{0}};
    char *cert = path_of("server.pem"), *key = path_of("server.key"),
         *ca = path_of("ca.pem"), *bad = path_of("bad.pem"),
         *other_key = path_of("rotated.key");

    put("bad.pem", "-----BEGIN CERTIFICATE-----\nnope\n");
    o.listen = "127.0.0.1:0";
    o.views = &slot;
    o.barrier = bar;
    o.tls_cert_file = bad;
    o.tls_key_file = key;
    o.tls_client_ca_file = ca;
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_ptr_null(s2);
    ck_assert_msg(strstr(err.msg, "bad.pem: not PEM"), "%s", err.msg);
    o.tls_cert_file = cert;
    o.tls_key_file = other_key;
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "rotated.key"), "%s", err.msg);
    o.tls_key_file = key;
    o.tls_client_ca_file = "/nonexistent/ca.pem";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -ENOENT);
    ck_assert_msg(strstr(err.msg, "/nonexistent/ca.pem"), "%s", err.msg);
    o.tls_client_ca_file = NULL; /* server TLS alone: loopback only */
    o.listen = "0.0.0.0:0";
    ck_assert_int_eq(mu_ext_server_start(&o, &s2, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "loopback only"), "%s", err.msg);
    o.tls_client_ca_file = ca;
    ck_assert_msg(mu_ext_server_start(&o, &s2, &err) == 0, "%s", err.msg);
    mu_ext_server_stop(s2);
    free(cert);
    free(key);
    free(ca);
    free(bad);
    free(other_key);
}
END_TEST

/* ---- the connection caps and deadlines, with raw sockets ---------------- */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000},
              NULL);
}

/* A second server on the same view and barrier, with small caps. */
static struct mu_ext_server *small_server(unsigned conns, unsigned per_ip,
                                          unsigned arrival_ms,
                                          unsigned reply_ms)
{
    struct mu_ext_server_opts o = {0};
    struct mu_ext_server *s = NULL;
    struct mu_err err = {{0}};

    o.listen = "127.0.0.1:0";
    o.views = &slot;
    o.barrier = bar;
    o.max_conns = conns;
    o.max_conns_per_ip = per_ip;
    o.arrival_timeout_ms = (unsigned)scaled((int)arrival_ms);
    o.reply_timeout_ms = (unsigned)scaled((int)reply_ms);
    ck_assert_msg(mu_ext_server_start(&o, &s, &err) == 0, "%s", err.msg);
    return s;
}

/* A TCP connection to 127.0.0.1:port from address from (NULL: any), with
 * a receive buffer of rcvbuf bytes (0: the default). */
static int raw_connect(const char *from, int port, int rcvbuf)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    ck_assert_int_ge(fd, 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    if (from) {
        ck_assert_int_eq(inet_pton(AF_INET, from, &a.sin_addr), 1);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    }
    a.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static void raw_send(int fd, const char *s)
{
    ck_assert_int_eq(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s));
}

/* Reads what fd gets within ms: the bytes read; *closed when the server
 * closed (EOF or reset) in that time. */
static size_t raw_read(int fd, int ms, bool *closed)
{
    int64_t end = now_ms() + ms;
    size_t total = 0;
    char buf[65536];

    *closed = false;
    for (int64_t left; (left = end - now_ms()) > 0;) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t n;

        if (poll(&p, 1, (int)left) <= 0)
            continue;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            *closed = true;
            break;
        }
        total += (size_t)n;
    }
    return total;
}

/* GET /healthz on port from address from: the status, or -1 when the
 * connection was refused (closed without a reply). */
static long healthz_from(const char *from, int port)
{
    CURL *c = curl_easy_init();
    char url[64];
    long status = -1;
    struct resp r = {0};

    snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_INTERFACE, from);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    free(r.body);
    return status;
}

/* A complete GET /healthz on a fresh connection from from: true when it
 * was closed without a byte of reply (refused). */
static bool refused(const char *from, int port)
{
    int fd = raw_connect(from, port, 0);
    bool closed;
    size_t n;

    send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 35, MSG_NOSIGNAL);
    n = raw_read(fd, scaled(2000), &closed);
    close(fd);
    return n == 0 && closed;
}

static const char half_sent[] = "POST /gang/filter HTTP/1.1\r\nHost: x\r\n"
                                "Content-Length: 100\r\n\r\n{\"Pod\":";

START_TEST(test_http_connection_caps_refuse_beyond_and_keep_room_for_others)
{
    struct mu_ext_server *s2 = small_server(8, 4, 1500, 0);
    int port = mu_ext_server_port(s2), fd[8];

    /* one client takes its 4 connections with half-sent requests */
    for (int i = 0; i < 4; i++) {
        fd[i] = raw_connect("127.0.0.1", port, 0);
        raw_send(fd[i], half_sent);
    }
    sleep_ms(scaled(100));
    ck_assert(refused("127.0.0.1", port)); /* its 5th: per-IP cap */
    ck_assert_int_eq(healthz_from("127.0.0.2", port), 200); /* others: in */
    /* that connection counts until the server has seen it close (else
     * 127.0.0.2's fourth below meets its per-IP cap, and 127.0.0.3 finds
     * room: a flake under load) */
    sleep_ms(scaled(300));
    /* another client fills the rest: then everyone is refused */
    for (int i = 4; i < 8; i++) {
        fd[i] = raw_connect("127.0.0.2", port, 0);
        raw_send(fd[i], half_sent);
    }
    sleep_ms(scaled(100));
    ck_assert(refused("127.0.0.3", port)); /* the total cap */
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(s2)->conns_cut), 0);
    /* the half-sent requests are cut at the arrival deadline: room again */
    sleep_ms(scaled(2000));
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(s2)->conns_cut), 8);
    ck_assert_int_eq(healthz_from("127.0.0.1", port), 200);
    for (int i = 0; i < 8; i++)
        close(fd[i]);
    mu_ext_server_stop(s2);
}
END_TEST

START_TEST(test_http_a_request_still_arriving_is_cut_at_the_arrival_deadline)
{
    static const char *const pieces[] = {"POST /gang/filter HTTP/1.1\r\n",
                                         "Host: x\r\n", "Content-Len",
                                         "gth: 9\r\n\r\n", "{", "}"};
    struct mu_ext_server *s2 = small_server(0, 0, 500, 0);
    int port = mu_ext_server_port(s2);
    int fd = raw_connect(NULL, port, 0);
    int64_t t0 = now_ms();
    bool closed = false;

    /* a request trickling in, a piece every 150 ms, never completes */
    for (size_t i = 0; !closed; i = (i + 1) % MU_ARRAY_LEN(pieces)) {
        send(fd, pieces[i], strlen(pieces[i]), MSG_NOSIGNAL);
        ck_assert_uint_eq(raw_read(fd, scaled(150), &closed), 0);
        ck_assert_int_lt(now_ms() - t0, scaled(3000));
    }
    ck_assert_int_ge(now_ms() - t0, scaled(450));
    close(fd);
    /* a kept-alive connection: the deadline starts at the next request */
    fd = raw_connect(NULL, port, 0);
    raw_send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    ck_assert_uint_gt(raw_read(fd, scaled(200), &closed), 0);
    ck_assert(!closed);
    /* idle longer than the arrival deadline: still open */
    sleep_ms(scaled(700));
    t0 = now_ms();
    raw_send(fd, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n");
    ck_assert_uint_eq(raw_read(fd, scaled(2000), &closed), 0);
    ck_assert(closed);
    ck_assert_int_ge(now_ms() - t0, scaled(450));
    close(fd);
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(s2)->conns_cut), 2);
    mu_ext_server_stop(s2);
}
END_TEST

START_TEST(test_http_a_bind_waiting_in_the_barrier_is_not_cut)
{
    static const char lonely[] =
        "{\"PodName\":\"w-0\",\"PodNamespace\":\"team-a\","
        "\"PodUID\":\"u-res\",\"Node\":\"gpu-02\"}";
    /* the barrier waits 600 ms, three times the arrival deadline */
    struct mu_ext_server *s2 = small_server(0, 0, 200, 200);
    char *text;
    int fd;
    bool closed;
    size_t n;

    publish(true);
    fd = raw_connect(NULL, mu_ext_server_port(s2), 0);
    text = mu_xasprintf("POST /bind HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: %zu\r\n\r\n%s",
                        sizeof(lonely) - 1, lonely);
    raw_send(fd, text);
    n = raw_read(fd, scaled(1500), &closed);
    ck_assert_uint_gt(n, 0); /* its answer: the batch timed out */
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(s2)->conns_cut), 0);
    close(fd);
    free(text);
    mu_ext_server_stop(s2);
}
END_TEST

START_TEST(test_http_a_reply_not_taken_is_cut_at_the_reply_deadline)
{
    struct mu_view *v = mu_view_new(2, true);
    struct mu_ext_server *s2 = small_server(0, 0, 2000, 300);
    struct mu_sb sb;
    char *req_text;
    int fd;
    bool closed;
    size_t n;

    /* 65536 rejected names of 60 bytes: a reply of some 11 MB, more than
     * the socket buffers of both ends hold */
    mu_view_add_pod(v, "u-w", "team-a", "w", "team-a/g", NULL, NULL, 0,
                    "waiting for sixty-three more members of its gang, "
                    "which is more than the cluster can place today");
    mu_view_publish(&slot, v);
    mu_sb_init(&sb);
    mu_sb_add(&sb, "{\"Pod\":{\"metadata\":{\"uid\":\"u-w\"},\"spec\":{"
                   "\"schedulerName\":\"volcano\"}},\"NodeNames\":[");
    for (int i = 0; i < 65536; i++)
        mu_sb_addf(&sb, "%s\"node-%06d-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                        "xxxxxxxxxxxxxxx\"",
                   i ? "," : "", i);
    mu_sb_add(&sb, "]}");
    req_text = mu_xasprintf("POST /filter HTTP/1.1\r\nHost: x\r\n"
                            "Content-Length: %zu\r\n\r\n%s",
                            sb.len, sb.buf);
    fd = raw_connect(NULL, mu_ext_server_port(s2), 4096);
    raw_send(fd, req_text);
    sleep_ms(scaled(1500)); /* not reading */
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(s2)->conns_cut), 1);
    n = raw_read(fd, scaled(3000), &closed);
    ck_assert(closed);
    ck_assert_uint_lt(n, 11000000); /* the reply was cut short */
    close(fd);
    free(req_text);
    mu_sb_release(&sb);
    mu_ext_server_stop(s2);
}
END_TEST

START_TEST(test_http_default_arrival_deadline_is_the_named_cap)
{
    int fd = raw_connect(NULL, mu_ext_server_port(srv), 0);
    int64_t t0 = now_ms();
    bool closed;

    raw_send(fd, half_sent);
    ck_assert_uint_eq(raw_read(fd,
                               (int)MU_EXT_ARRIVAL_TIMEOUT_S * 1000 +
                                   scaled(1500),
                               &closed),
                      0);
    ck_assert(closed);
    ck_assert_int_ge(now_ms() - t0, (int64_t)MU_EXT_ARRIVAL_TIMEOUT_S * 1000 -
                                        100);
    close(fd);
    ck_assert_uint_eq(atomic_load(&mu_ext_server_stats(srv)->conns_cut), 1);
}
END_TEST

/* 0, 77 (skip, with the TAP line printed) or 99. */
static int make_certs(void)
{
    static const char script[] =
        "set -e; cd '%s'\n"
        "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
        "ca() { openssl req -x509 $ec -keyout $1.key -out $1.pem -days 2 "
        "-subj /CN=$1; }\n"
        "leaf() { openssl req $ec -keyout $1.key -out $1.csr -subj /CN=$3 && "
        "printf '%%s\\n' \"$4\" >$1.ext && "
        "openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key "
        "-CAcreateserial -days 2 -extfile $1.ext -out $1.pem; }\n"
        "srv='extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1'\n"
        "ca ca; ca other-ca\n"
        "leaf server ca muster-server \"$srv\"\n"
        "leaf rotated ca muster-server-rotated \"$srv\"\n"
        "leaf client ca kube-scheduler extendedKeyUsage=clientAuth\n"
        "leaf stranger other-ca kube-scheduler extendedKeyUsage=clientAuth\n";
    char cmd[2048];

    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        printf("1..0 # SKIP libmicrohttpd has no TLS support\n");
        return 77;
    }
    if (system("openssl version >/dev/null 2>&1") != 0) {
        printf("1..0 # SKIP openssl not found (apt-get install openssl)\n");
        return 77;
    }
    if (!mkdtemp(dir))
        return 99;
    snprintf(cmd, sizeof(cmd), script, dir);
    snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
             ") >'%s/openssl.log' 2>&1", dir);
    memmove(cmd + 1, cmd, strlen(cmd) + 1);
    cmd[0] = '(';
    return system(cmd) == 0 ? 0 : 99;
}

static void remove_certs(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed, rc;

    tls = argc > 1 && !strcmp(argv[1], "--tls");
    s = suite_create(tls ? "https" : "http");
    tc = tcase_create(tls ? "https" : "http");
    if (tls && (rc = make_certs()) != 0)
        return rc == 77 ? EXIT_SUCCESS : rc;
    curl_global_init(CURL_GLOBAL_ALL);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    if (tls) {
        tcase_add_test(tc, test_https_serves_a_client_the_ca_signed);
        tcase_add_test(tc, test_https_refuses_a_client_without_a_certificate);
        tcase_add_test(tc, test_https_refuses_a_certificate_of_another_ca);
        tcase_add_test(tc, test_https_refuses_plain_http);
        tcase_add_test(
            tc, test_https_serves_a_rotated_certificate_without_restart);
        tcase_add_test(
            tc, test_https_keeps_the_certificate_when_a_rotation_is_broken);
        tcase_add_test(tc, test_https_bad_files_fail_to_start);
    } else {
        tcase_add_test(tc, test_http_healthz_answers_ok);
        tcase_add_test(
            tc, test_http_readyz_is_503_until_a_synced_view_is_published);
    tcase_add_test(tc, test_http_a_follower_is_not_ready_and_refuses_bind);
        tcase_add_test(tc, test_http_filter_is_served_at_any_prefix);
        tcase_add_test(tc, test_http_prioritize_scores_and_preempt_vetoes);
        tcase_add_test(tc,
                       test_http_bind_holds_a_batch_of_two_until_both_arrive);
        tcase_add_test(tc, test_http_chunked_body_in_two_parts);
        tcase_add_test(tc, test_http_oversize_body_is_413);
        tcase_add_test(tc, test_http_wrong_method_is_405_and_unknown_path_404);
        tcase_add_test(tc, test_http_malformed_requests_are_200_with_error);
        tcase_add_test(tc, test_http_metrics_text_has_the_counters);
        tcase_add_test(tc, test_http_keeps_connections_alive);
        tcase_add_test(tc,
                       test_http_start_reports_bad_addresses_and_busy_ports);
        tcase_add_test(
            tc,
            test_http_connection_caps_refuse_beyond_and_keep_room_for_others);
        tcase_add_test(
            tc,
            test_http_a_request_still_arriving_is_cut_at_the_arrival_deadline);
        tcase_add_test(tc, test_http_a_bind_waiting_in_the_barrier_is_not_cut);
        tcase_add_test(
            tc, test_http_a_reply_not_taken_is_cut_at_the_reply_deadline);
        tcase_add_test(tc, test_http_default_arrival_deadline_is_the_named_cap);
        tcase_add_test(tc, test_http_plain_is_refused_beyond_loopback);
        tcase_add_test(
            tc, test_http_metrics_listen_serves_probes_on_their_own_port);
    }
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (tls)
        remove_certs();
    curl_global_cleanup();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
