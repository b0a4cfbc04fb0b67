/*
 * tls.h - the extender's TLS credentials (GnuTLS, under libmicrohttpd):
 * the serving certificate and key, the client CA that every client's
 * certificate must chain to, and their reload when the files change.
 *
 * Why GnuTLS directly: libmicrohttpd 0.9.75 only *asks* for a client
 * certificate (MHD_OPTION_HTTPS_MEM_TRUST sets GNUTLS_CERT_REQUEST and
 * verifies nothing), and it loads its credentials once, at start. So the
 * server hands every new connection, before its handshake, a reference
 * to the current credentials (mu_ext_tls_notify, libmicrohttpd's
 * MHD_OPTION_NOTIFY_CONNECTION): they *require* a client certificate and
 * verify it against the client CA, for the TLS client purpose, inside
 * the handshake. A client without one, or with one another CA signed, is
 * refused by the handshake; no request handler runs for it.
 *
 * Reload: a thread stats the three files every reload_ms (inode, size,
 * mtime, ctime; stat follows the symlinks a Secret volume swaps). On a
 * change it loads them whole into new credentials and, only if they load
 * (certificate and key match, the CA file holds a certificate), makes
 * them current. Connections already open keep the credentials they shook
 * hands with until they close (reference counted), so a rotation drops
 * nothing: a gang waiting in /bind is answered on its own connection. A
 * failed load keeps the current credentials, is logged once, and is
 * retried when the files change again.
 *
 * Threads: new and free by the server's owner; notify on libmicrohttpd's
 * threads, several at once; the reload thread is the tls's own. The
 * counters are read from any thread.
 *
 * Errors: new returns 0 or -errno with err naming the file: the read's
 * errno, -EINVAL (not PEM, key and certificate do not match, no
 * certificate in the CA file), -ENOMEM.
 */
#ifndef MU_EXTENDER_TLS_H
#define MU_EXTENDER_TLS_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common/mu.h"

/* Largest certificate, key or CA file read. */
#define MU_EXT_TLS_MAX_FILE (1u << 20)
/* How often the files are looked at, by default. */
#define MU_EXT_TLS_RELOAD_MS 1000

struct mu_ext_tls;

struct mu_ext_tls_opts {
    const char *cert_file;      /* PEM, the chain from the leaf up */
    const char *key_file;       /* PEM */
    const char *client_ca_file; /* PEM; NULL: no client certificate asked */
    int64_t reload_ms;          /* 0: MU_EXT_TLS_RELOAD_MS; < 0: never */
    void (*log)(void *ctx, const char *line); /* optional; any thread */
    void *log_ctx;
};

/* What the reloads did (counters only grow). */
struct mu_ext_tls_stats {
    atomic_ullong reloads_ok, reloads_failed;
    atomic_llong not_after; /* the serving certificate's, Unix seconds */
};

/* Loads the files and starts the reload thread. 0 and *out, or -errno
 * with err (see Errors). */
int mu_ext_tls_new(const struct mu_ext_tls_opts *o, struct mu_ext_tls **out,
                   struct mu_err *err) MU_WARN_UNUSED;
/* The certificate and key first loaded, as PEM, for libmicrohttpd's own
 * credentials at start (which no connection then uses). Owned by t. */
const char *mu_ext_tls_cert_pem(const struct mu_ext_tls *t);
const char *mu_ext_tls_key_pem(const struct mu_ext_tls *t);
/* MHD_OPTION_NOTIFY_CONNECTION's callback, cls the tls: gives a new
 * connection the current credentials, drops them when it closes. */
void mu_ext_tls_notify(void *cls, struct MHD_Connection *c,
                       void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
struct mu_ext_tls_stats *mu_ext_tls_stats(struct mu_ext_tls *t);
/* Stops the reload thread and frees t. Call after the daemon that uses it
 * has stopped (its connections hold references). NULL is a no-op. */
void mu_ext_tls_free(struct mu_ext_tls *t);

#endif
