/*
 * faultproxy.c - a fault-injecting stand-in for kube-apiserver, for
 * tests/e2e/faults.sh: muster's kubeconfig names http://127.0.0.1:LISTEN,
 * and every request that arrives there is sent on, over HTTPS, to the
 * real apiserver (UPSTREAM, its CA in CA_FILE; the client's own
 * Authorization header goes along, so the apiserver still sees muster's
 * ServiceAccount token), and the answer comes back, streamed (watches
 * stay open), as HTTP/1.1 with chunked bodies. Except:
 *
 *   --fail-bind NAME[:COUNT]  the first COUNT (default 1) POSTs of
 *                             .../pods/NAME/binding are answered 500
 *                             (a Status body) and never reach the
 *                             apiserver
 *   --fail-bind-after NAME[:COUNT]
 *                             the same, but the POSTs do reach it and their
 *                             answer is replaced by the 500 (the bind went
 *                             through, the reply says it did not)
 *                             (at most FP_MAX_RULES of the two)
 *   --hold-bind               while the file HOLD_FILE exists, every
 *   HOLD_FILE                 binding POST waits (checked every 100 ms)
 *
 * Prints a line for each fault it injects ("injected 500: POST PATH").
 * A thread per connection, keep-alive, Content-Length request bodies only
 * (what muster's client sends). Test code, not muster's.
 *
 * Usage: faultproxy LISTEN UPSTREAM CA_FILE [options]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A request's header block and body at most (bytes): a refused request
 * closes its connection. */
#define FP_MAX_HEAD (64 * 1024)
#define FP_MAX_BODY (16 * 1024 * 1024)
#define FP_MAX_HEADERS 64

#define FP_MAX_RULES 8

static const char *upstream, *ca_file, *hold_file;
static struct {
    const char *name;
    int left;   /* faults still to inject */
    bool after; /* sent on, then answered 500 */
} rules[FP_MAX_RULES];
static int nrules;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

struct conn {
    int fd;
    char buf[FP_MAX_HEAD];
    size_t len; /* bytes in buf */
};

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads until buf holds a whole header block; its length (with the blank
 * line), 0 at EOF, -1 on error. */
static long read_head(struct conn *c)
{
    for (;;) {
        char *end = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
        ssize_t r;

        if (end)
            return end + 4 - c->buf;
        if (c->len == sizeof(c->buf))
            return -1;
        r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 && c->len == 0 ? 0 : -1;
        c->len += (size_t)r;
    }
}

/* What one response to the client is (streamed as it arrives). */
struct resp {
    int fd;
    bool head_sent, failed, swallow;
    int status;
    char head[FP_MAX_HEAD];
    size_t head_len;
};

static int send_head(struct resp *r)
{
    char line[64];

    if (r->head_sent)
        return 0;
    r->head_sent = true;
    snprintf(line, sizeof(line), "HTTP/1.1 %d X\r\n", r->status);
    if (write_all(r->fd, line, strlen(line)) ||
        write_all(r->fd, r->head, r->head_len) ||
        write_all(r->fd, "Transfer-Encoding: chunked\r\n\r\n", 30))
        return -1;
    return 0;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ctx)
{
    struct resp *r = ctx;
    size_t len = sz * n;

    if (len >= 5 && !strncmp(p, "HTTP/", 5)) { /* a new block (after 1xx) */
        const char *sp = memchr(p, ' ', len);

        r->head_len = 0;
        r->status = sp ? atoi(sp + 1) : 502;
        return len;
    }
    if (len <= 2 || !strncasecmp(p, "content-length:", 15) ||
        !strncasecmp(p, "transfer-encoding:", 18) ||
        !strncasecmp(p, "connection:", 11) ||
        !strncasecmp(p, "keep-alive:", 11))
        return len;
    if (r->head_len + len > sizeof(r->head))
        return 0;
    memcpy(r->head + r->head_len, p, len);
    r->head_len += len;
    return len;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ctx)
{
    struct resp *r = ctx;
    size_t len = sz * n;
    char hex[32];

    if (r->swallow || !len)
        return len;
    if (send_head(r))
        goto fail;
    snprintf(hex, sizeof(hex), "%zx\r\n", len);
    if (write_all(r->fd, hex, strlen(hex)) || write_all(r->fd, p, len) ||
        write_all(r->fd, "\r\n", 2))
        goto fail;
    return len;
fail:
    r->failed = true;
    return 0;
}

static int send_500(int fd, const char *method, const char *path)
{
    static const char body[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
        "\"message\":\"injected by faultproxy\",\"reason\":"
        "\"InternalError\",\"code\":500}";
    char head[256];

    printf("injected 500: %s %s\n", method, path);
    fflush(stdout);
    snprintf(head, sizeof(head),
             "HTTP/1.1 500 Internal Server Error\r\nContent-Type: "
             "application/json\r\nContent-Length: %zu\r\n\r\n",
             sizeof(body) - 1);
    return write_all(fd, head, strlen(head)) ||
                   write_all(fd, body, sizeof(body) - 1)
               ? -1
               : 0;
}

/* POST .../pods/NAME/binding: the pod's name, else NULL (in buf). */
static const char *binding_of(const char *method, const char *path,
                              char *buf, size_t cap)
{
    const char *p = strstr(path, "/pods/"), *e;

    if (strcmp(method, "POST") || !p)
        return NULL;
    p += 6;
    e = strchr(p, '/');
    if (!e || strncmp(e, "/binding", 8) || (e[8] && e[8] != '?') ||
        (size_t)(e - p) >= cap)
        return NULL;
    memcpy(buf, p, (size_t)(e - p));
    buf[e - p] = '\0';
    return buf;
}

static void hold(void)
{
    struct stat st;
    struct timespec ts = {0, 100 * 1000000};

    while (hold_file && stat(hold_file, &st) == 0)
        nanosleep(&ts, NULL);
}

/* One request of c (its head is buf[0..hlen)): forwarded, or faulted.
 * 0 to go on with the connection, -1 to close it. */
static int serve_one(struct conn *c, size_t hlen, CURL *h)
{
    char method[16], path[8192], pod[256];
    char *line_end = memmem(c->buf, hlen, "\r\n", 2);
    struct curl_slist *hdrs = NULL;
    size_t clen = 0, have;
    char *body = NULL, *p;
    struct resp r = {.fd = c->fd, .status = 502};
    bool fault = false, fail_after = false;
    int rc = -1;
    CURLcode cc;
    char *url;

    if (!line_end || sscanf(c->buf, "%15s %8191s", method, path) != 2)
        return -1;
    /* the headers: the ones that matter to the apiserver go along */
    for (p = line_end + 2; p < c->buf + hlen - 2;) {
        char *e = memmem(p, (size_t)(c->buf + hlen - p), "\r\n", 2);
        char hdr[FP_MAX_HEAD];

        if (!e)
            break;
        snprintf(hdr, sizeof(hdr), "%.*s", (int)(e - p), p);
        if (!strncasecmp(hdr, "content-length:", 15))
            clen = strtoul(hdr + 15, NULL, 10);
        else if (!strncasecmp(hdr, "transfer-encoding:", 18))
            goto out; /* not what muster sends */
        else if (strncasecmp(hdr, "host:", 5) &&
                 strncasecmp(hdr, "connection:", 11) &&
                 strncasecmp(hdr, "expect:", 7))
            hdrs = curl_slist_append(hdrs, hdr);
        p = e + 2;
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    if (clen > FP_MAX_BODY)
        goto out;
    body = malloc(clen + 1);
    if (!body)
        goto out;
    have = c->len - hlen < clen ? c->len - hlen : clen;
    memcpy(body, c->buf + hlen, have);
    memmove(c->buf, c->buf + hlen + have, c->len - hlen - have);
    c->len -= hlen + have;
    while (have < clen) {
        ssize_t n = recv(c->fd, body + have, clen - have, 0);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
        have += (size_t)n;
    }
    if (binding_of(method, path, pod, sizeof(pod))) {
        hold();
        pthread_mutex_lock(&mu);
        for (int i = 0; i < nrules && !fault; i++) {
            if (strcmp(pod, rules[i].name) || rules[i].left <= 0)
                continue;
            rules[i].left--;
            fault = true;
            fail_after = rules[i].after;
        }
        pthread_mutex_unlock(&mu);
        if (fault && !fail_after) {
            rc = send_500(c->fd, method, path);
            goto out;
        }
    }
    url = malloc(strlen(upstream) + strlen(path) + 1);
    if (!url)
        goto out;
    snprintf(url, strlen(upstream) + strlen(path) + 1, "%s%s", upstream,
             path);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
    if (clen || !strcmp(method, "POST") || !strcmp(method, "PUT") ||
        !strcmp(method, "PATCH")) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)clen);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    r.swallow = fault; /* --fail-bind-after: sent, its answer replaced */
    cc = curl_easy_perform(h);
    free(url);
    if (fault) {
        rc = send_500(c->fd, method, path);
        goto out;
    }
    if (r.failed)
        goto out;
    if (cc != CURLE_OK && !r.head_sent) {
        /* the apiserver could not be reached: a 502, as a proxy says */
        static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\n"
                                  "Content-Length: 0\r\n\r\n";

        rc = write_all(c->fd, bad, sizeof(bad) - 1);
        goto out;
    }
    if (cc != CURLE_OK) /* cut mid-stream: the client sees the cut */
        goto out;
    if (send_head(&r) || write_all(c->fd, "0\r\n\r\n", 5))
        goto out;
    rc = 0;
out:
    curl_slist_free_all(hdrs);
    free(body);
    return rc;
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    CURL *h = curl_easy_init();

    while (h) {
        long hlen = read_head(c);

        if (hlen <= 0 || serve_one(c, (size_t)hlen, h))
            break;
    }
    if (h)
        curl_easy_cleanup(h);
    close(c->fd);
    free(c);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: faultproxy LISTEN UPSTREAM CA_FILE "
                    "[--fail-bind NAME[:COUNT]] "
                    "[--fail-bind-after NAME[:COUNT]] [--hold-bind FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    int one = 1, ls;

    if (argc < 4)
        return usage();
    upstream = argv[2];
    ca_file = argv[3];
    for (int i = 4; i < argc; i++) {
        if ((!strcmp(argv[i], "--fail-bind") ||
             !strcmp(argv[i], "--fail-bind-after")) &&
            i + 1 < argc && nrules < FP_MAX_RULES) {
            char *colon;

            rules[nrules].after = !strcmp(argv[i], "--fail-bind-after");
            rules[nrules].name = argv[++i];
            colon = strchr(argv[i], ':');
            rules[nrules].left = 1;
            if (colon) {
                *colon = '\0';
                rules[nrules].left = atoi(colon + 1);
            }
            nrules++;
        } else if (!strcmp(argv[i], "--hold-bind") && i + 1 < argc) {
            hold_file = argv[++i];
        } else {
            return usage();
        }
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_ALL);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    a.sin_port = htons((uint16_t)atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
        listen(ls, 128)) {
        perror("faultproxy: listen");
        return 1;
    }
    printf("faultproxy: 127.0.0.1:%s -> %s\n", argv[1], upstream);
    fflush(stdout);
    for (;;) {
        struct conn *c;
        pthread_t t;
        int fd = accept(ls, NULL, NULL);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            perror("faultproxy: accept");
            return 1;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        if (pthread_create(&t, NULL, conn_main, c)) {
            close(fd);
            free(c);
            continue;
        }
        pthread_detach(t);
    }
}
