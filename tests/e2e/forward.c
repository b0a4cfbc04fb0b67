/*
 * forward.c - a stand-in for a Kubernetes Service in front of muster's
 * replicas, for tests/e2e/leader.sh: accepts TCP connections on
 * 127.0.0.1:LISTEN and pipes each, both ways, to the first backend
 * 127.0.0.1:PORT whose GET /readyz answers 200 (what a Service's
 * endpoints hold: ready pods only). No ready backend: the connection is
 * closed at once (a Service without endpoints refuses). Readiness is
 * probed at most every MU_FWD_PROBE_MS; a connection keeps its backend
 * for its life, as with kube-proxy. Prints a line when the ready backend
 * changes. A thread per connection; test code, not muster's.
 *
 * Usage: forward LISTEN BACKEND_PORT...
 */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MU_FWD_PROBE_MS 200
#define MU_FWD_MAX 8

static int backends[MU_FWD_MAX], nbackends;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t probed_ms;
static int ready_port; /* 0: none */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(int port, int timeout_ms)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int ready(int port)
{
    static const char req[] = "GET /readyz HTTP/1.0\r\n\r\n";
    char buf[64] = "";
    int fd = dial(port, 300), ok;
    ssize_t n;

    if (fd < 0)
        return 0;
    n = write(fd, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1
            ? read(fd, buf, sizeof(buf) - 1)
            : -1;
    ok = n > 12 && !strncmp(buf + 8, " 200", 4);
    close(fd);
    return ok;
}

static int pick(void)
{
    int port = 0;

    pthread_mutex_lock(&mu);
    if (now_ms() - probed_ms >= MU_FWD_PROBE_MS) {
        for (int i = 0; i < nbackends && !port; i++)
            if (ready(backends[i]))
                port = backends[i];
        if (port != ready_port) {
            char ts[32];
            time_t t = time(NULL);

            strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&t));
            printf("%s forward: ready backend %d (was %d)\n", ts, port,
                   ready_port);
            fflush(stdout);
        }
        ready_port = port;
        probed_ms = now_ms();
    }
    port = ready_port;
    pthread_mutex_unlock(&mu);
    return port;
}

static void *pipe_main(void *arg)
{
    int c = (int)(intptr_t)arg, port = pick(), b = port ? dial(port, 1000) : -1;
    struct timeval none = {0, 0};
    char buf[65536];

    if (b >= 0) {
        struct pollfd p[2] = {{.fd = c, .events = POLLIN},
                              {.fd = b, .events = POLLIN}};

        /* the probe's timeouts are not the connection's */
        setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
        setsockopt(b, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
        for (;;) {
            if (poll(p, 2, -1) < 0 && errno != EINTR)
                break;
            for (int i = 0; i < 2; i++) {
                ssize_t n;

                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                n = read(p[i].fd, buf, sizeof(buf));
                if (n <= 0 || write(p[1 - i].fd, buf, (size_t)n) != n)
                    goto out;
            }
        }
    }
out:
    if (b >= 0)
        close(b);
    close(c);
    return NULL;
}

int main(int argc, char **argv)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    int one = 1, l;

    if (argc < 3 || argc - 2 > MU_FWD_MAX) {
        fprintf(stderr, "usage: forward LISTEN BACKEND_PORT...\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int i = 2; i < argc; i++)
        backends[nbackends++] = atoi(argv[i]);
    a.sin_port = htons((uint16_t)atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(l, 512) < 0) {
        perror("forward: listen");
        return 1;
    }
    for (;;) {
        int c = accept(l, NULL, NULL);
        pthread_t t;

        if (c < 0)
            continue;
        if (pthread_create(&t, NULL, pipe_main, (void *)(intptr_t)c)) {
            close(c);
            continue;
        }
        pthread_detach(t);
    }
}
