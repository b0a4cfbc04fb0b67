/*
 * config.h - where the Kubernetes API server is and how to authenticate.
 *
 * A struct mu_kube_config is plain data: the server URL, the PEM bytes of the
 * CA bundle, client certificate and client key, a bearer token or the path
 * of a token file, and the insecure flag. It comes from a kubeconfig file
 * (what kubectl reads) or from the in-cluster service account. Certificates
 * and keys are held in memory only: the client hands them to libcurl as
 * blobs, so inline `-data` keys never touch the disk.
 *
 * Supported kubeconfig keys (kubectl's names):
 *   current-context; contexts[].context.{cluster,user,namespace}
 *   clusters[].cluster.{server, certificate-authority,
 *     certificate-authority-data, insecure-skip-tls-verify}
 *   users[].user.{token, tokenFile, client-certificate,
 *     client-certificate-data, client-key, client-key-data}
 * `-data` values are base64 (whitespace ignored); file paths that are
 * relative are resolved against the directory of the kubeconfig that names
 * them. When both a `-data` key and its file key are set, `-data` wins; when
 * both token and tokenFile are set, tokenFile wins (client-go). exec,
 * auth-provider and username/password users are refused with an error naming
 * the key rather than silently sending no credentials. Other keys
 * (extensions, proxy-url, ...) are ignored.
 *
 * Errors: every function returns 0 or a negative errno, and on failure
 * writes a message naming the file and the key into err (if not NULL):
 *   "/home/a/.kube/config: current-context \"prod\": no such context"
 *   "kc.yaml: users[admin].user.client-key-data: invalid base64"
 * On failure *out is left initialised and empty.
 *
 * Threads: plain data; no global state. Reads the environment and files.
 */
#ifndef MU_KUBE_CONFIG_H
#define MU_KUBE_CONFIG_H

#include "common/mu.h"

/* Default directory of the in-cluster service account files. */
#define MU_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct mu_kube_config {
    char *server; /* "https://host:port[/prefix]", no trailing '/' */
    char *ca;     /* PEM CA bundle, or NULL for the system store */
    size_t ca_len;
    char *cert; /* PEM client certificate, or NULL */
    size_t cert_len;
    char *key; /* PEM client key, or NULL (set iff cert is) */
    size_t key_len;
    char *token;      /* bearer token, or NULL */
    char *token_file; /* file holding the token, re-read by the client; wins
                       * over token; NULL if none */
    char *namespace;  /* the context's namespace, "default" if unset */
    char *source;     /* file the settings came from or "in-cluster" */
    bool insecure;    /* do not verify the server's certificate */
    /* Refuse every request that kube/verbs.h's table does not list
     * (-EPERM, nothing sent). Not read from any file: muster serve sets
     * it, so each of its clients asks only for what its RBAC grants. */
    bool api_table;
};

/* Where in-cluster settings come from. Any NULL member takes its default:
 * $KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT, MU_KUBE_SA_DIR. */
struct mu_kube_incluster {
    const char *host;
    const char *port;
    const char *sa_dir; /* holds token, ca.crt and (optional) namespace */
};

void mu_kube_config_init(struct mu_kube_config *cfg);
/* Frees every member (overwriting token and key bytes first) and
 * re-initialises cfg. */
void mu_kube_config_release(struct mu_kube_config *cfg);
/* Deep copy of src into dst (dst need not be initialised). Never fails. */
void mu_kube_config_copy(struct mu_kube_config *dst,
                         const struct mu_kube_config *src);

/*
 * Reads the kubeconfig at path, or each file of the colon-separated list
 * path when it contains ':'. Files of a list are merged as kubectl merges
 * $KUBECONFIG: missing files are skipped, the first file that sets
 * current-context wins, and the first cluster, user or context of a name
 * wins. context NULL means current-context. Certificate, key and CA files
 * are read now; a token file is only checked to be readable.
 */
int mu_kube_config_load_file(const char *path, const char *context,
                             struct mu_kube_config *out,
                             struct mu_err *err) MU_WARN_UNUSED;

/*
 * In-cluster settings: server https://HOST:PORT (IPv6 hosts bracketed), the
 * CA from SA_DIR/ca.crt, the token file SA_DIR/token (kept as a path, so the
 * client re-reads it as the kubelet rotates it) and the namespace from
 * SA_DIR/namespace. ic may be NULL. -ENOENT with "not running in a cluster"
 * when the host or port is unset.
 */
int mu_kube_config_load_incluster(const struct mu_kube_incluster *ic,
                                  struct mu_kube_config *out,
                                  struct mu_err *err) MU_WARN_UNUSED;

/*
 * What muster uses, first that applies: path if not NULL; else
 * $KUBECONFIG if set and not empty; else in-cluster if
 * $KUBERNETES_SERVICE_HOST is set; else $HOME/.kube/config. context is
 * passed to mu_kube_config_load_file (ignored in-cluster).
 */
int mu_kube_config_load(const char *path, const char *context,
                        struct mu_kube_config *out,
                        struct mu_err *err) MU_WARN_UNUSED;

/*
 * Reads a whole file of at most max bytes into *buf (NUL-terminated, owned
 * by the caller) and its length into *len. -EFBIG when larger, -errno from
 * open/read; err names the path. Shared with the client (token re-reads).
 */
int mu_kube_read_file(const char *path, size_t max, char **buf, size_t *len,
                      struct mu_err *err) MU_WARN_UNUSED;

/*
 * Decodes standard base64 (RFC 4648 with padding; ASCII whitespace ignored)
 * into a new buffer *out (NUL-terminated, owned by the caller) of *out_len
 * bytes. -EINVAL on any other character or bad padding.
 */
int mu_kube_base64_decode(const char *in, size_t len, char **out,
                          size_t *out_len) MU_WARN_UNUSED;

#endif
