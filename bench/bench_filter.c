/*
 * bench_filter - how long the extender takes to answer /filter.
 *
 * A realistic ExtenderArgs (a full v1.Pod of ~3 KiB and N node names, 5,000
 * by default) for a pod muster reserved on one node, against a view of
 * 10,000 pods. Times, per request:
 *   bytes      mu_ext_filter_body: scan the body, decide, write the reply
 *              (what the HTTP thread runs; the target is p99 <=
 *              200 us at 5,000 names)
 *   jansson    json_loadb + mu_ext_filter + json_dumps (the tree path)
 *   http       a POST /filter over loopback with a keep-alive libcurl
 *              client, request sent to reply read (client side)
 * and, for the bytes path, a waiting pod (every node rejected) and another
 * scheduler's pod (every node echoed). Latencies go into a fixed-bucket
 * histogram (1 us buckets to 100 ms, then an overflow bucket; max exact)
 * and are printed as p50/p90/p99/max in microseconds (and min: on a
 * shared machine it shows the cost without interference).
 *
 *   bench_filter [--nodes N] [--iters N] [--jansson-iters N]
 *                [--http-iters N] [--cpu-time] [--tls]
 *
 * --tls runs a second server with mTLS (a CA, server and client
 * certificates made by openssl) beside the plain one and times the two in
 * alternating rounds on their own keep-alive connections.
 *
 * --cpu-time times the bytes and jansson paths with the thread's CPU clock
 * instead of the wall clock (HTTP is always wall time).
 */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "extender/extender.h"
#include "extender/http.h"

#define HIST_US 100000 /* 1 us buckets below 100 ms */
#define TARGET_P99_US 200

struct hist {
    uint32_t b[HIST_US + 1];
    uint64_t n, min_ns, max_ns;
};

static struct hist h;

/* What the pure paths are timed with: wall time, or with --cpu-time the
 * thread's CPU time (which leaves out time spent descheduled: on a busy
 * shared machine that separates muster's cost from the neighbours'). */
static clockid_t pure_clock = CLOCK_MONOTONIC;

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void hist_add(struct hist *x, uint64_t ns)
{
    uint64_t us = ns / 1000;

    x->b[us < HIST_US ? us : HIST_US]++;
    if (!x->n++ || ns < x->min_ns)
        x->min_ns = ns;
    if (ns > x->max_ns)
        x->max_ns = ns;
}

/* The upper edge (us) of the bucket holding quantile q. */
static double hist_q(const struct hist *x, double q)
{
    uint64_t want = (uint64_t)(q * (double)x->n + 0.5), seen = 0;

    if (want < 1)
        want = 1;
    for (size_t i = 0; i <= HIST_US; i++) {
        seen += x->b[i];
        if (seen >= want)
            return i < HIST_US ? (double)(i + 1) : (double)x->max_ns / 1e3;
    }
    return (double)x->max_ns / 1e3;
}

static double report(const char *what, size_t nodes, const struct hist *x)
{
    double p99 = hist_q(x, 0.99);

    printf("%-26s nodes=%-5zu n=%-6llu min=%-6.0f p50=%-6.0f p90=%-6.0f "
           "p99=%-6.0f max=%.0f us\n",
           what, nodes, (unsigned long long)x->n, (double)x->min_ns / 1e3,
           hist_q(x, 0.50), hist_q(x, 0.90), p99, (double)x->max_ns / 1e3);
    fflush(stdout);
    return p99;
}

/* A Pod as kube-scheduler's informer holds it (managedFields trimmed). */
static const char pod_fmt[] =
    "{\"metadata\":{\"name\":\"pytorch-dist-8gpu-worker-3\",\"namespace\":"
    "\"team-a\",\"uid\":\"%s\",\"resourceVersion\":\"81273645\","
    "\"creationTimestamp\":\"2026-11-30T10:12:44Z\",\"labels\":{"
    "\"volcano.sh/job-name\":\"pytorch-dist-8gpu\",\"volcano.sh/job-namespace"
    "\":\"team-a\",\"volcano.sh/queue-name\":\"research\",\"volcano.sh/task-"
    "spec\":\"worker\",\"app.kubernetes.io/part-of\":\"llm-pretrain\"},"
    "\"annotations\":{\"scheduling.k8s.io/group-name\":\"pytorch-dist-8gpu-"
    "5f0c2a91-3b7e-4d2c-9a61-0c8f4e2b7d13\",\"volcano.sh/job-version\":\"0\","
    "\"volcano.sh/task-index\":\"3\",\"volcano.sh/template-uid\":\"pytorch-"
    "dist-8gpu-worker\"},\"ownerReferences\":[{\"apiVersion\":\"batch."
    "volcano.sh/v1alpha1\",\"kind\":\"Job\",\"name\":\"pytorch-dist-8gpu\","
    "\"uid\":\"0c8f4e2b-7d13-4d2c-9a61-5f0c2a913b7e\",\"controller\":true,"
    "\"blockOwnerDeletion\":true}]},\"spec\":{\"volumes\":[{\"name\":\"dshm\","
    "\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"64Gi\"}},{\"name\":"
    "\"data\",\"persistentVolumeClaim\":{\"claimName\":\"imagenet-ro\","
    "\"readOnly\":true}},{\"name\":\"kube-api-access-7x2kq\",\"projected\":{"
    "\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,"
    "\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\","
    "\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}}],\"defaultMode\":"
    "420}}],\"containers\":[{\"name\":\"pytorch\",\"image\":\"registry."
    "example.com/ml/pytorch:2.5.1-cuda12.4\",\"command\":[\"torchrun\"],"
    "\"args\":[\"--nnodes=8\",\"--nproc-per-node=8\",\"--rdzv-backend=c10d\","
    "\"--rdzv-endpoint=pytorch-dist-8gpu-master-0.pytorch-dist-8gpu:29400\","
    "\"train.py\",\"--config=/etc/train/llama-8b.yaml\"],\"env\":[{\"name\":"
    "\"NCCL_DEBUG\",\"value\":\"WARN\"},{\"name\":\"NCCL_IB_HCA\",\"value\":"
    "\"mlx5\"},{\"name\":\"OMP_NUM_THREADS\",\"value\":\"8\"},{\"name\":"
    "\"VC_WORKER_HOSTS\",\"value\":\"pytorch-dist-8gpu-worker-0.pytorch-"
    "dist-8gpu,pytorch-dist-8gpu-worker-1.pytorch-dist-8gpu\"},{\"name\":"
    "\"POD_IP\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\","
    "\"fieldPath\":\"status.podIP\"}}}],\"resources\":{\"limits\":{\"cpu\":"
    "\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\",\"rdma/ib\":\"1\"},"
    "\"requests\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":"
    "\"8\",\"rdma/ib\":\"1\"}},\"volumeMounts\":[{\"name\":\"dshm\","
    "\"mountPath\":\"/dev/shm\"},{\"name\":\"data\",\"readOnly\":true,"
    "\"mountPath\":\"/data\"},{\"name\":\"kube-api-access-7x2kq\","
    "\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/"
    "serviceaccount\"}],\"terminationMessagePath\":\"/dev/termination-log\","
    "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
    "\"IfNotPresent\",\"securityContext\":{\"capabilities\":{\"add\":["
    "\"IPC_LOCK\"]}}}],\"restartPolicy\":\"OnFailure\","
    "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
    "\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\","
    "\"subdomain\":\"pytorch-dist-8gpu\",\"securityContext\":{},"
    "\"schedulerName\":\"%s\",\"tolerations\":[{\"key\":\"nvidia.com/gpu\","
    "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"},{\"key\":\"node."
    "kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
    "\"NoExecute\",\"tolerationSeconds\":300}],\"priorityClassName\":"
    "\"research-high\",\"priority\":100000,\"enableServiceLinks\":true,"
    "\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{\"phase\":"
    "\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
    "\"False\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-30T"
    "10:12:44Z\",\"reason\":\"Unschedulable\",\"message\":\"0/5000 nodes are "
    "available: 5000 gang team-a/pytorch-dist-8gpu waiting: 7/8 members.\"}],"
    "\"qosClass\":\"Guaranteed\"}}";

static char *node_name(size_t i)
{
    return mu_xasprintf("gke-prod-a100-pool-5f0c2a-%05zx", i);
}

/* ExtenderArgs as kube-scheduler sends it with nodeCacheCapable. */
static char *request(const char *uid, const char *sched, size_t nodes,
                     size_t *len)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "{\"Pod\":");
    mu_sb_addf(&sb, pod_fmt, uid, sched);
    mu_sb_add(&sb, ",\"Nodes\":null,\"NodeNames\":[");
    for (size_t i = 0; i < nodes; i++) {
        char *n = node_name(i);

        mu_sb_addf(&sb, "%s\"%s\"", i ? "," : "", n);
        free(n);
    }
    mu_sb_add(&sb, "]}");
    *len = sb.len;
    return mu_sb_detach(&sb);
}

static struct mu_view *make_view(size_t nodes)
{
    struct mu_view *v = mu_view_new(1, true);
    char *node = node_name(nodes / 2);

    mu_view_add_pod(v, "uid-reserved", "team-a", "pytorch-dist-8gpu-worker-3",
                    "team-a/pytorch-dist-8gpu-5f0c2a91", node,
                    "team-a/pytorch-dist-8gpu-5f0c2a91#1", 8, NULL);
    mu_view_add_pod(v, "uid-waiting", "team-a", "pytorch-dist-8gpu-worker-4",
                    "team-a/pytorch-dist-8gpu-5f0c2a91", NULL, NULL, 0,
                    "7/8 members placed; queue research is at its deserved "
                    "share (512/512 GPUs)");
    for (int i = 0; i < 10000; i++) {
        char uid[32], name[32];

        snprintf(uid, sizeof(uid), "uid-other-%d", i);
        snprintf(name, sizeof(name), "worker-%d", i);
        mu_view_add_pod(v, uid, "team-b", name, "team-b/other", node,
                        "team-b/other#1", 8, NULL);
    }
    free(node);
    return v;
}

static double run_bytes(const char *what, const struct mu_view *v,
                        const char *body, size_t len, size_t nodes, int iters,
                        size_t *reply_len)
{
    memset(&h, 0, sizeof(h));
    for (int i = -iters / 10; i < iters; i++) {
        uint64_t t0 = clock_ns(pure_clock);
        bool bad;
        char *r = mu_ext_filter_body(v, body, len, reply_len, &bad, NULL);
        uint64_t dt = clock_ns(pure_clock) - t0;

        if (bad) {
            fprintf(stderr, "bench_filter: request refused: %s\n", r);
            exit(1);
        }
        free(r);
        if (i >= 0)
            hist_add(&h, dt);
    }
    return report(what, nodes, &h);
}

static void run_jansson(const struct mu_view *v, const char *body, size_t len,
                        size_t nodes, int iters)
{
    memset(&h, 0, sizeof(h));
    for (int i = -iters / 10; i < iters; i++) {
        uint64_t t0 = clock_ns(pure_clock);
        json_t *in = json_loadb(body, len, 0, NULL);
        json_t *out = mu_ext_filter(v, in);
        char *s = json_dumps(out, JSON_COMPACT);
        uint64_t dt = clock_ns(pure_clock) - t0;

        free(s);
        json_decref(out);
        json_decref(in);
        if (i >= 0)
            hist_add(&h, dt);
    }
    report("filter jansson reserved", nodes, &h);
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    *(size_t *)ud += sz * n;
    return sz * n;
}

/* One server and its keep-alive client. */
struct side {
    const char *name;
    struct mu_ext_server *srv;
    CURL *c;
    struct curl_slist *hdr;
    struct hist h;
    size_t got;
};

static char tls_dir[] = "/tmp/mu-bench-tls-XXXXXX";

/* A CA, a server certificate for 127.0.0.1 and a client certificate in
 * tls_dir, made by openssl. 0 or -1. */
static int make_certs(void)
{
    static const char script[] =
        "(set -e; cd '%s'\n"
        "ec='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
        "openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=ca\n"
        "leaf() { openssl req $ec -keyout $1.key -out $1.csr -subj /CN=$1 && "
        "printf '%%b\\n' \"$2\" >$1.ext && openssl x509 -req -in $1.csr "
        "-CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile $1.ext "
        "-out $1.pem; }\n"
        "leaf server 'extendedKeyUsage=serverAuth\\nsubjectAltName=IP:127.0.0.1'\n"
        "leaf client extendedKeyUsage=clientAuth\n"
        ") >'%s/openssl.log' 2>&1";
    char cmd[2048];

    if (!mkdtemp(tls_dir))
        return -1;
    snprintf(cmd, sizeof(cmd), script, tls_dir, tls_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *in_dir(const char *name)
{
    return mu_xasprintf("%s/%s", tls_dir, name);
}

static int side_start(struct side *sd, struct mu_view_slot *slot,
                      struct mu_barrier *b, const char *body, size_t len,
                      bool tls)
{
    struct mu_ext_server_opts o = {0};
    char *cert = in_dir("server.pem"), *key = in_dir("server.key"),
         *ca = in_dir("ca.pem"), *ccert = in_dir("client.pem"),
         *ckey = in_dir("client.key");
    struct mu_err err;
    char url[64];
    int rc = 0;

    o.listen = "127.0.0.1:0";
    o.views = slot;
    o.barrier = b;
    if (tls) {
        o.tls_cert_file = cert;
        o.tls_key_file = key;
        o.tls_client_ca_file = ca;
    }
    if (mu_ext_server_start(&o, &sd->srv, &err)) {
        fprintf(stderr, "bench_filter: %s\n", err.msg);
        rc = -1;
        goto out;
    }
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d/gang/filter",
             tls ? "https" : "http", mu_ext_server_port(sd->srv));
    sd->c = curl_easy_init();
    sd->hdr = curl_slist_append(sd->hdr, "Content-Type: application/json");
    sd->hdr = curl_slist_append(sd->hdr, "Expect:"); /* as Go's: no 100 */
    curl_easy_setopt(sd->c, CURLOPT_URL, url);
    curl_easy_setopt(sd->c, CURLOPT_HTTPHEADER, sd->hdr);
    curl_easy_setopt(sd->c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(sd->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(sd->c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(sd->c, CURLOPT_WRITEDATA, &sd->got);
    curl_easy_setopt(sd->c, CURLOPT_TCP_NODELAY, 1L);
    if (tls) {
        curl_easy_setopt(sd->c, CURLOPT_CAINFO, ca);
        curl_easy_setopt(sd->c, CURLOPT_SSLCERT, ccert);
        curl_easy_setopt(sd->c, CURLOPT_SSLKEY, ckey);
    }
out:
    free(cert);
    free(key);
    free(ca);
    free(ccert);
    free(ckey);
    return rc;
}

/* n requests on sd's connection; timed into sd->h when timed. */
static int side_run(struct side *sd, int n, bool timed)
{
    long status = 0;

    for (int i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        CURLcode rc = curl_easy_perform(sd->c);
        uint64_t dt = now_ns() - t0;

        curl_easy_getinfo(sd->c, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status != 200) {
            fprintf(stderr, "bench_filter: %s POST: %s (HTTP %ld)\n",
                    sd->name, curl_easy_strerror(rc), status);
            return -1;
        }
        if (timed)
            hist_add(&sd->h, dt);
    }
    return 0;
}

static void side_stop(struct side *sd)
{
    struct mu_ext_stats *st = mu_ext_server_stats(sd->srv);

    printf("  %s server side (from /metrics stats): %.0f us mean over %llu "
           "calls\n",
           sd->name,
           (double)atomic_load(&st->filter_ns_total) / 1e3 /
               (double)atomic_load(&st->filter_calls),
           (unsigned long long)atomic_load(&st->filter_calls));
    curl_slist_free_all(sd->hdr);
    curl_easy_cleanup(sd->c);
    mu_ext_server_stop(sd->srv);
}

/* POST /filter over loopback, keep-alive. With tls, a second server with
 * mTLS runs beside the plain one and the two are timed in alternating
 * rounds, so both see the same machine load. */
static int run_http(struct mu_view *v, const char *body, size_t len,
                    size_t nodes, int iters, bool tls)
{
    enum { ROUNDS = 20 };
    static struct side sides[2] = {{.name = "http"}, {.name = "https"}};
    struct mu_view_slot slot;
    struct mu_barrier *b = mu_barrier_new(1000, NULL, NULL, NULL, NULL);
    int n = tls ? 2 : 1, rc = 0;
    char what[64];

    mu_view_slot_init(&slot);
    mu_view_publish(&slot, v);
    for (int k = 0; k < n; k++)
        if (side_start(&sides[k], &slot, b, body, len, k == 1) < 0)
            return 1;
    for (int k = 0; k < n && !rc; k++) /* warm-up; the handshake */
        rc = side_run(&sides[k], iters / 10, false);
    for (int r = 0; r < ROUNDS && !rc; r++)
        for (int k = 0; k < n && !rc; k++)
            rc = side_run(&sides[k], iters / ROUNDS, true);
    for (int k = 0; k < n; k++) {
        if (!rc) {
            snprintf(what, sizeof(what), "filter %s reserved",
                     k ? "https (mTLS)" : "http");
            report(what, nodes, &sides[k].h);
        }
        side_stop(&sides[k]);
    }
    if (!rc && tls)
        printf("  https/http: p50 %.2fx, p99 %.2fx\n",
               hist_q(&sides[1].h, 0.5) / hist_q(&sides[0].h, 0.5),
               hist_q(&sides[1].h, 0.99) / hist_q(&sides[0].h, 0.99));
    mu_barrier_free(b);
    mu_view_slot_release(&slot); /* drops v */
    return rc ? 1 : 0;
}

static long arg_num(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);

    if (*end || n < 0) {
        fprintf(stderr, "bench_filter: not a count: %s\n", s);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    size_t nodes = 5000, len, reply_len = 0;
    int iters = 20000, jansson_iters = 200, http_iters = 5000;
    bool tls = false;
    struct mu_view *v;
    char *body;
    double p99;

    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--nodes"))
            nodes = (size_t)arg_num(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--iters"))
            iters = (int)arg_num(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--jansson-iters"))
            jansson_iters = (int)arg_num(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--http-iters"))
            http_iters = (int)arg_num(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-time"))
            pure_clock = CLOCK_THREAD_CPUTIME_ID;
        else if (!strcmp(argv[i], "--tls"))
            tls = true;
        else {
            fprintf(stderr, "usage: bench_filter [--nodes N] [--iters N] "
                            "[--jansson-iters N] [--http-iters N] "
                            "[--cpu-time] [--tls]\n");
            return 2;
        }
    }
    curl_global_init(CURL_GLOBAL_ALL);
    v = make_view(nodes);
    body = request("uid-reserved", "volcano", nodes, &len);
    printf("request %zu bytes (%zu node names); pure paths timed in %s\n", len,
           nodes,
           pure_clock == CLOCK_MONOTONIC ? "wall time" : "thread CPU time");

    p99 = run_bytes("filter bytes reserved", v, body, len, nodes, iters,
                    &reply_len);
    printf("  reply %zu bytes; target p99 <= %d us: %s\n", reply_len,
           TARGET_P99_US, p99 <= TARGET_P99_US ? "met" : "MISSED");
    {
        char *w = request("uid-waiting", "volcano", nodes, &len);

        run_bytes("filter bytes waiting", v, w, len, nodes, iters, &reply_len);
        free(w);
        w = request("uid-x", "default-scheduler", nodes, &len);
        run_bytes("filter bytes pass-through", v, w, len, nodes, iters,
                  &reply_len);
        free(w);
        len = strlen(body);
    }
    if (jansson_iters)
        run_jansson(v, body, len, nodes, jansson_iters);
    if (tls && http_iters && make_certs() < 0) {
        fprintf(stderr, "bench_filter: openssl failed (see %s/openssl.log)\n",
                tls_dir);
        return 1;
    }
    if (http_iters && run_http(v, body, len, nodes, http_iters, tls))
        return 1;
    if (tls && http_iters) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tls_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_filter: could not remove %s\n", tls_dir);
    }
    if (!http_iters)
        mu_view_put(v);
    free(body);
    curl_global_cleanup();
    return 0;
}
