/*
 * caps.h - every size and time limit of the Kubernetes client, in one place.
 *
 * Each buffer the network or a file can fill has a hard cap here (curl's
 * dynbuf rule: the use site names its limit). Exceeding one is an error with
 * a named code, never a silent truncation and never unbounded growth.
 */
#ifndef MU_KUBE_CAPS_H
#define MU_KUBE_CAPS_H

/* Largest response body of one request (a LIST page, a Status, an object).
 * Bigger bodies fail the request with -ENOBUFS. A page of 500 pods is about
 * 5 MiB; 64 MiB leaves room for large CRD objects and big pages. */
#define MU_KUBE_MAX_BODY (64u << 20)

/* Largest file read for credentials: CA bundle, client certificate, client
 * key, token file, namespace file. Larger files are refused with -EFBIG.
 * (The kubeconfig files themselves are parsed by mu_yaml_parse_file, which
 * has no cap yet; the lists built from them grow only with what they
 * hold.) */
#define MU_KUBE_MAX_FILE (1u << 20)

/* Longest single watch event (one line of the JSON stream, without its
 * '\n'). A longer line fails the watch with -ENOBUFS and causes a relist. */
#define MU_WATCH_MAX_LINE (16u << 20)

/* Default bounds of a plain request: connecting, and the whole exchange. */
#define MU_KUBE_CONNECT_TIMEOUT_MS 10000L
#define MU_KUBE_REQUEST_TIMEOUT_MS 60000L

/* A token file is re-read when the cached token is this old, and at once
 * after a 401 (client-go's policy for rotating projected tokens). */
#define MU_KUBE_TOKEN_REREAD_NS (60LL * 1000000000LL)

/* Watch requests ask the server to end the stream after timeoutSeconds,
 * drawn from [MIN, MAX] with the watch's seed, so a fleet of watchers does
 * not reconnect in step. The client gives up on a silent stream
 * MU_WATCH_GRACE_S after that (half-open connections). */
#define MU_WATCH_TIMEOUT_MIN_S 300
#define MU_WATCH_TIMEOUT_MAX_S 600
#define MU_WATCH_GRACE_S 30

/* Backoff after a failed LIST or WATCH: doubles from MIN up to MAX, with
 * jitter in [d/2, d]. */
#define MU_WATCH_BACKOFF_MIN_NS (1000LL * 1000000LL)
#define MU_WATCH_BACKOFF_MAX_NS (30000LL * 1000000LL)

/* A watch that ends cleanly sooner than this without a single event counts
 * as a failure (backoff), so a server that closes at once is not hammered. */
#define MU_WATCH_SHORT_NS (1000LL * 1000000LL)

/* Items per LIST page (the `limit` query parameter). */
#define MU_WATCH_PAGE_SIZE 500u

/* Idle clients a pool keeps by default (pool.h). When that many are idle,
 * a client put back is freed (its connections closed); clients taken at
 * once are not capped. */
#define MU_KUBE_POOL_MAX_IDLE 16u

#endif
