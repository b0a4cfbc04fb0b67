/*
 * tls.c - the extender's TLS credentials and their reload (tls.h).
 *
 * struct creds is one loaded generation: GnuTLS credentials with a
 * reference count, one reference held by the tls while current and one by
 * every connection that shook hands with it. The reload thread swaps the
 * current pointer under t->lock; the notify callback takes a reference
 * under the same lock.
 */
#include "extender/tls.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

struct creds {
    atomic_int refs;
    gnutls_certificate_credentials_t x509;
    bool verify; /* a client certificate is required */
};

/* What stat says of a file; a change of any field is a change. */
struct sig {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

enum { F_CERT, F_KEY, F_CA, F__COUNT };

struct mu_ext_tls {
    char *path[F__COUNT];       /* path[F_CA] may be NULL */
    char *cert_pem, *key_pem;   /* as first loaded */
    int64_t reload_ms;
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
    struct mu_ext_tls_stats stats;

    pthread_mutex_t lock; /* cur; and stop with wake */
    pthread_cond_t wake;
    bool stop;
    struct creds *cur;
    struct sig seen[F__COUNT]; /* what the last load attempt read */
    pthread_t thread;
    bool started;
};

static void say(struct mu_ext_tls *t, const char *fmt, ...) MU_PRINTF(2, 3);

static void say(struct mu_ext_tls *t, const char *fmt, ...)
{
    char line[MU_ERR_MAX + 128];
    va_list ap;

    if (!t->log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    t->log(t->log_ctx, line);
}

static void creds_put(struct creds *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    gnutls_certificate_free_credentials(c->x509);
    free(c);
}

/* Inside the handshake, once the client's certificate is in: it must
 * chain to the client CA and be meant for a TLS client. Not 0 refuses
 * the handshake. */
static int verify_client(gnutls_session_t ses)
{
    gnutls_typed_vdata_st purpose = {
        .type = GNUTLS_DT_KEY_PURPOSE_OID,
        .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
    };
    unsigned status = 0;

    if (gnutls_certificate_verify_peers(ses, &purpose, 1, &status) < 0 ||
        status)
        return GNUTLS_E_CERTIFICATE_ERROR;
    return 0;
}

static int sig_of(const char *path, struct sig *s)
{
    struct stat st;

    if (stat(path, &st))
        return -errno;
    *s = (struct sig){.dev = st.st_dev, .ino = st.st_ino,
                      .size = st.st_size, .mtime = st.st_mtim,
                      .ctime = st.st_ctim};
    return 0;
}

static bool sig_eq(const struct sig *a, const struct sig *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec &&
           a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The whole file, NUL-terminated, in *out. 0 or -errno with err. */
static int slurp(const char *path, char **out, struct mu_err *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    int rc = 0;

    *out = NULL;
    if (!f)
        return mu_err_set(err, -errno, "%s: %s", path, strerror(errno));
    do {
        if (len + 4096 + 1 > cap)
            mu_xgrow((void **)&buf, &cap, len + 4096 + 1, 1);
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (len > MU_EXT_TLS_MAX_FILE) {
            rc = mu_err_set(err, -EFBIG, "%s: larger than %u bytes", path,
                            MU_EXT_TLS_MAX_FILE);
            goto out;
        }
    } while (n);
    if (ferror(f)) {
        rc = mu_err_set(err, -EIO, "%s: read error", path);
        goto out;
    }
    buf[len] = '\0';
    *out = buf;
    buf = NULL;
out:
    free(buf);
    fclose(f);
    return rc;
}

static bool looks_like_pem(const char *pem)
{
    const char *begin = strstr(pem, "-----BEGIN ");

    return begin && strstr(begin, "-----END ");
}

/* The chain and key of cert and key into c, parsed here rather than by
 * gnutls_certificate_set_x509_key_mem, whose failure path leaks a
 * half-parsed certificate; *expiry is the leaf's. 0 or a GnuTLS error. */
static int set_key(struct creds *c, const gnutls_datum_t *cert,
                   const gnutls_datum_t *key, long long *expiry)
{
    gnutls_x509_crt_t *crts = NULL;
    gnutls_x509_privkey_t pk = NULL;
    unsigned ncrts = 0;
    int n;

    n = gnutls_x509_crt_list_import2(&crts, &ncrts, cert, GNUTLS_X509_FMT_PEM,
                                     0);
    if (n < 0)
        return n;
    if ((n = gnutls_x509_privkey_init(&pk)) < 0)
        goto out;
    n = gnutls_x509_privkey_import2(pk, key, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (n < 0)
        goto out;
    /* copies both; refuses a key that is not the leaf's */
    n = gnutls_certificate_set_x509_key(c->x509, crts, ncrts, pk);
    if (n >= 0)
        *expiry = (long long)gnutls_x509_crt_get_expiration_time(crts[0]);
out:
    if (pk)
        gnutls_x509_privkey_deinit(pk);
    for (unsigned i = 0; i < ncrts; i++)
        gnutls_x509_crt_deinit(crts[i]);
    gnutls_free(crts);
    return n;
}

/* Reads the files into new credentials (*out, one reference) and, when
 * cert_out is not NULL, hands back the certificate and key PEM. sigs gets what
 * stat said before the read. 0 or -errno with err. */
static int load(struct mu_ext_tls *t, struct creds **out, char **cert_out,
                char **key_out, struct sig sigs[F__COUNT], struct mu_err *err)
{
    char *pem[F__COUNT] = {NULL};
    gnutls_datum_t cert, key, ca;
    struct creds *c = NULL;
    long long expiry = 0;
    int rc, n;

    *out = NULL;
    for (int i = 0; i < F__COUNT; i++) {
        if (!t->path[i])
            continue;
        if ((rc = sig_of(t->path[i], &sigs[i])) < 0) {
            rc = mu_err_set(err, rc, "%s: %s", t->path[i], strerror(-rc));
            goto out;
        }
        if ((rc = slurp(t->path[i], &pem[i], err)) < 0)
            goto out;
        if (!looks_like_pem(pem[i])) {
            rc = mu_err_set(err, -EINVAL, "%s: not PEM", t->path[i]);
            goto out;
        }
    }
    c = mu_xcalloc(1, sizeof(*c));
    atomic_init(&c->refs, 1);
    if (gnutls_certificate_allocate_credentials(&c->x509) < 0) {
        free(c);
        c = NULL;
        rc = mu_err_set(err, -ENOMEM, "TLS: no memory for credentials");
        goto out;
    }
    cert = (gnutls_datum_t){(unsigned char *)pem[F_CERT],
                            (unsigned)strlen(pem[F_CERT])};
    key = (gnutls_datum_t){(unsigned char *)pem[F_KEY],
                           (unsigned)strlen(pem[F_KEY])};
    n = set_key(c, &cert, &key, &expiry);
    if (n < 0) {
        rc = mu_err_set(err, -EINVAL, "%s, %s: %s", t->path[F_CERT],
                        t->path[F_KEY], gnutls_strerror(n));
        goto out;
    }
    if (pem[F_CA]) {
        ca = (gnutls_datum_t){(unsigned char *)pem[F_CA],
                              (unsigned)strlen(pem[F_CA])};
        n = gnutls_certificate_set_x509_trust_mem(c->x509, &ca,
                                                  GNUTLS_X509_FMT_PEM);
        if (n <= 0) {
            rc = mu_err_set(err, -EINVAL, "%s: %s", t->path[F_CA],
                            n < 0 ? gnutls_strerror(n) : "no certificate");
            goto out;
        }
        gnutls_certificate_set_verify_function(c->x509, verify_client);
        c->verify = true;
    }
    atomic_store(&t->stats.not_after, expiry);
    if (cert_out) {
        *cert_out = pem[F_CERT];
        *key_out = pem[F_KEY];
        pem[F_CERT] = pem[F_KEY] = NULL;
    }
    *out = c;
    c = NULL;
    rc = 0;
out:
    creds_put(c);
    for (int i = 0; i < F__COUNT; i++)
        free(pem[i]);
    return rc;
}

/* The files changed since the last attempt (a file that cannot be
 * stat'ed reads as all zeros, as the failed attempt recorded it). */
static bool changed(struct mu_ext_tls *t)
{
    for (int i = 0; i < F__COUNT; i++) {
        struct sig s = {0};

        if (t->path[i] && (sig_of(t->path[i], &s), !sig_eq(&s, &t->seen[i])))
            return true;
    }
    return false;
}

static void reload(struct mu_ext_tls *t)
{
    struct sig sigs[F__COUNT] = {{0}};
    struct mu_err err = {{0}};
    struct creds *c, *old;

    if (load(t, &c, NULL, NULL, sigs, &err) < 0) {
        /* e.g. a half-written rotation: retried (and logged) when the
         * files change again */
        say(t, "TLS: reload failed, keeping the loaded certificate: %s",
            err.msg);
        memcpy(t->seen, sigs, sizeof(sigs));
        atomic_fetch_add(&t->stats.reloads_failed, 1);
        return;
    }
    memcpy(t->seen, sigs, sizeof(sigs));
    pthread_mutex_lock(&t->lock);
    old = t->cur;
    t->cur = c;
    pthread_mutex_unlock(&t->lock);
    creds_put(old); /* freed when its last connection closes */
    atomic_fetch_add(&t->stats.reloads_ok, 1);
    say(t, "TLS: reloaded %s, %s%s%s", t->path[F_CERT], t->path[F_KEY],
        t->path[F_CA] ? " and " : "", t->path[F_CA] ? t->path[F_CA] : "");
}

static void *reload_main(void *arg)
{
    struct mu_ext_tls *t = arg;

    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += t->reload_ms / 1000;
        ts.tv_nsec += (t->reload_ms % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&t->wake, &t->lock, &ts);
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->lock);
        if (changed(t))
            reload(t);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int mu_ext_tls_new(const struct mu_ext_tls_opts *o, struct mu_ext_tls **out,
                   struct mu_err *err)
{
    struct mu_ext_tls *t;
    int rc;

    *out = NULL;
    if (!o->cert_file || !o->key_file)
        return mu_err_set(err, -EINVAL,
                          "TLS needs both a certificate and a key");
    t = mu_xcalloc(1, sizeof(*t));
    t->path[F_CERT] = mu_xstrdup(o->cert_file);
    t->path[F_KEY] = mu_xstrdup(o->key_file);
    t->path[F_CA] = o->client_ca_file ? mu_xstrdup(o->client_ca_file) : NULL;
    t->reload_ms = o->reload_ms ? o->reload_ms : MU_EXT_TLS_RELOAD_MS;
    t->log = o->log;
    t->log_ctx = o->log_ctx;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    rc = load(t, &t->cur, &t->cert_pem, &t->key_pem, t->seen, err);
    if (rc < 0)
        goto fail;
    if (t->reload_ms > 0) {
        rc = -pthread_create(&t->thread, NULL, reload_main, t);
        if (rc < 0) {
            mu_err_set(err, rc, "TLS: reload thread: %s", strerror(-rc));
            goto fail;
        }
        t->started = true;
    }
    *out = t;
    return 0;
fail:
    mu_ext_tls_free(t);
    return rc;
}

const char *mu_ext_tls_cert_pem(const struct mu_ext_tls *t)
{
    return t->cert_pem;
}

const char *mu_ext_tls_key_pem(const struct mu_ext_tls *t)
{
    return t->key_pem;
}

void mu_ext_tls_notify(void *cls, struct MHD_Connection *c,
                       void **socket_context,
                       enum MHD_ConnectionNotificationCode code)
{
    struct mu_ext_tls *t = cls;
    const union MHD_ConnectionInfo *info;
    gnutls_session_t ses;
    struct creds *cr;

    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        /* after gnutls_deinit: the session no longer needs them */
        creds_put(*socket_context);
        *socket_context = NULL;
        return;
    }
    /* every connection of a TLS daemon has its session by now (MHD
     * 0.9.75 daemon.c: gnutls_init before NOTIFY_STARTED) */
    info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!info || !info->tls_session)
        return;
    ses = info->tls_session;
    pthread_mutex_lock(&t->lock);
    cr = t->cur;
    atomic_fetch_add(&cr->refs, 1);
    pthread_mutex_unlock(&t->lock);
    *socket_context = cr;
    /* replaces libmicrohttpd's own credentials, before the handshake */
    gnutls_credentials_set(ses, GNUTLS_CRD_CERTIFICATE, cr->x509);
    if (cr->verify)
        gnutls_certificate_server_set_request(ses, GNUTLS_CERT_REQUIRE);
}

struct mu_ext_tls_stats *mu_ext_tls_stats(struct mu_ext_tls *t)
{
    return &t->stats;
}

void mu_ext_tls_free(struct mu_ext_tls *t)
{
    if (!t)
        return;
    if (t->started) {
        pthread_mutex_lock(&t->lock);
        t->stop = true;
        pthread_cond_signal(&t->wake);
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->thread, NULL);
    }
    creds_put(t->cur);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    for (int i = 0; i < F__COUNT; i++)
        free(t->path[i]);
    free(t->cert_pem);
    free(t->key_pem);
    free(t);
}
