#include "serve/hnstatus.h"

#include "kube/paths.h"
#include "kube/writer.h"

#include <stdint.h>

void mu_hnstatus_init(struct mu_hnstatus *h, const struct mu_ctl *ctl)
{
    h->ctl = ctl;
    mu_map_init(&h->sent);
}

void mu_hnstatus_release(struct mu_hnstatus *h)
{
    mu_map_release(&h->sent);
}

struct hn_done {
    struct mu_hnstatus *h;
    char *name;
    size_t count;
};

/* A failed write is forgotten, unless another count was sent since. */
static void hn_written(void *ctx, int rc, const char *msg)
{
    struct hn_done *d = ctx;

    if (rc < 0 && rc != -ECANCELED) {
        mu_ctl_log(d->h->ctl, "status of hypernode %s: %s", d->name, msg);
        if ((uintptr_t)mu_map_get(&d->h->sent, d->name) == d->count + 1)
            mu_map_del(&d->h->sent, d->name);
    }
    free(d->name);
    free(d);
}

void mu_hnstatus_write(struct mu_hnstatus *h, const struct mu_topo *t)
{
    for (size_t i = 0; i < t->ndom; i++) {
        const struct mu_domain *d = &t->dom[i];
        const struct mu_hypernode *hn = mu_topo_hypernode(t, d->name);
        struct hn_done *done;
        char *path;

        if (!hn || hn->status_count == (int64_t)d->n ||
            (uintptr_t)mu_map_get(&h->sent, d->name) == d->n + 1)
            continue;
        path = mu_api_path(MU_API_HYPERNODE, NULL, d->name, "status");
        done = mu_xcalloc(1, sizeof(*done));
        done->h = h;
        done->name = mu_xstrdup(d->name);
        done->count = d->n;
        {
            struct mu_write w = {
                .method = "PATCH", .path = path,
                .body = json_pack("{s:{s:I}}", "status", "nodeCount",
                                  (json_int_t)d->n),
                .content_type = MU_KUBE_MERGE_PATCH,
                .flags = MU_WRITE_COALESCE, .done = hn_written, .ctx = done};

            if (mu_writer_submit(h->ctl->writer, &w) < 0) {
                free(done->name);
                free(done);
            } else {
                mu_map_put(&h->sent, d->name, (void *)(uintptr_t)(d->n + 1));
            }
        }
        free(path);
    }
}
