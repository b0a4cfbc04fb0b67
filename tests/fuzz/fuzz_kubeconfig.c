/*
 * fuzz_kubeconfig - mu_kube_config_load_file must not crash or leak on any
 * kubeconfig, must leave the config empty on failure and give a complete
 * one on success (a server URL without a trailing '/', a namespace, the
 * key iff the certificate).
 *
 * The loader reads files only, so each input is written to a file in a
 * private temporary directory first (relative certificate paths resolve
 * there, and name nothing). The first line may be "#context NAME": then
 * that context is asked for instead of current-context.
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include <fcntl.h>
#include <unistd.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dir, *path;

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}

static void setup(void)
{
    char tmpl[] = "/tmp/mu-fuzz-kc.XXXXXX";

    if (!mkdtemp(tmpl))
        abort();
    dir = mu_xstrdup(tmpl);
    path = mu_xasprintf("%s/config", dir);
    atexit(cleanup);
}

static void write_all(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t n;

    if (fd < 0)
        abort();
    while (size > 0) {
        n = write(fd, data, size);
        if (n <= 0)
            abort();
        data += n;
        size -= (size_t)n;
    }
    close(fd);
}

static bool is_empty(const struct mu_kube_config *c)
{
    return !c->server && !c->ca && !c->cert && !c->key && !c->token &&
           !c->token_file && !c->namespace && !c->source && !c->insecure;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char tag[] = "#context ";
    struct mu_kube_config cfg, copy;
    struct mu_err err;
    char *context = NULL;
    const uint8_t *nl;
    size_t n;

    if (!dir)
        setup();
    if (size > sizeof(tag) - 1 && memcmp(data, tag, sizeof(tag) - 1) == 0) {
        nl = memchr(data, '\n', size);
        n = (nl ? (size_t)(nl - data) : size) - (sizeof(tag) - 1);
        context = mu_xmalloc(n + 1);
        memcpy(context, data + sizeof(tag) - 1, n);
        context[n] = '\0';
    }
    write_all(data, size);
    mu_kube_config_init(&cfg);
    if (mu_kube_config_load_file(path, context, &cfg, &err) != 0) {
        if (!is_empty(&cfg) || !err.msg[0])
            abort();
    } else {
        n = cfg.server ? strlen(cfg.server) : 0;
        if (!n || cfg.server[n - 1] == '/' || !cfg.namespace ||
            !cfg.source || !cfg.cert != !cfg.key)
            abort();
        mu_kube_config_copy(&copy, &cfg);
        mu_kube_config_release(&copy);
    }
    mu_kube_config_release(&cfg);
    free(context);
    return 0;
}
