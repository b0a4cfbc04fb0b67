#include "serve/hnstatus.h"

#include "common/clock.h"
#include "kube/paths.h"
#include "kube/writer.h"

/* What was last sent for one HyperNode. */
enum hn_state { HN_INFLIGHT, HN_WRITTEN, HN_FAILED };
struct hn_sent {
    size_t count;
    enum hn_state state;
    int64_t retry_ms;  /* HN_FAILED: when it is sent again */
    bool said;         /* its failure was logged (once per count) */
};

void mu_hnstatus_init(struct mu_hnstatus *h, const struct mu_ctl *ctl)
{
    h->ctl = ctl;
    mu_map_init(&h->sent);
}

void mu_hnstatus_release(struct mu_hnstatus *h)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&h->sent, &it, NULL, &v))
        free(v);
    mu_map_release(&h->sent);
}

struct hn_done {
    struct mu_hnstatus *h;
    char *name;
    size_t count;
};

/* A failed write is sent again after MU_HNSTATUS_RETRY_MS, and said once
 * per count (a missing RBAC rule would fail every time). */
static void hn_written(void *ctx, int rc, const char *msg)
{
    struct hn_done *d = ctx;
    struct hn_sent *e = mu_map_get(&d->h->sent, d->name);

    if (!e || e->count != d->count || rc == -ECANCELED) {
        /* a newer count was sent since, or this one folded into it */
    } else if (rc == 0) {
        e->state = HN_WRITTEN;
        e->said = false;
    } else {
        if (!e->said)
            mu_ctl_log(d->h->ctl, "status of hypernode %s: %s (sent again "
                                  "every %d s while it fails)",
                       d->name, msg, MU_HNSTATUS_RETRY_MS / 1000);
        e->said = true;
        e->state = HN_FAILED;
        e->retry_ms = mu_now_ms() + MU_HNSTATUS_RETRY_MS;
    }
    free(d->name);
    free(d);
}

/* Forgets what was sent for HyperNodes deleted since (kept in step with
 * the HyperNodes there are: at most twice as many entries). */
static void prune(struct mu_hnstatus *h, const struct mu_topo *t)
{
    const char **keys;
    size_t n;

    if (h->sent.n <= 2 * t->nhn + 16)
        return;
    keys = mu_map_sorted_keys(&h->sent, &n);
    for (size_t i = 0; i < n; i++)
        if (!mu_topo_hypernode(t, keys[i]))
            free(mu_map_del(&h->sent, keys[i]));
    free(keys);
}

void mu_hnstatus_write(struct mu_hnstatus *h, const struct mu_topo *t)
{
    int64_t now = mu_now_ms();

    prune(h, t);
    for (size_t i = 0; i < t->ndom; i++) {
        const struct mu_domain *d = &t->dom[i];
        const struct mu_hypernode *hn = mu_topo_hypernode(t, d->name);
        struct hn_sent *e = mu_map_get(&h->sent, d->name);
        struct hn_done *done;
        char *path;

        if (!hn || hn->status_count == (int64_t)d->n ||
            (e && e->count == d->n &&
             (e->state != HN_FAILED || now < e->retry_ms)))
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
                .flags = MU_WRITE_COALESCE | MU_WRITE_BACKGROUND,
                .done = hn_written, .ctx = done};

            if (mu_writer_submit(h->ctl->writer, &w) < 0) {
                free(done->name);
                free(done);
            } else {
                if (!e) {
                    e = mu_xcalloc(1, sizeof(*e));
                    mu_map_put(&h->sent, d->name, e);
                }
                if (e->count != d->n)
                    e->said = false; /* a new count's failure is said */
                e->count = d->n;
                e->state = HN_INFLIGHT;
            }
        }
        free(path);
    }
}
