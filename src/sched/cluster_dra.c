/*
 * cluster_dra.c - DRA objects into the cluster (cluster_dra.h).
 */
#include "sched/cluster_dra.h"

void mu_cluster_dra_sync(struct mu_cluster *c)
{
    struct mu_devices *d = &c->dev;

    if (d->gen != c->dev_gen) {
        c->dev_gen = d->gen;
        for (size_t i = 0; i < c->ntasks; i++)
            if (c->tasks[i]->dd ||
                mu_devdemand_needed(&c->dev, &c->tasks[i]->pod))
                mu_cluster_redemand_task(c, c->tasks[i]);
    }
    if (d->quota_stale) {
        if (d->unbound.n) /* their devices in the total too */
            d->reach_gen++;
        for (size_t i = 0; i < c->nnodes; i++) {
            mu_cluster_node_devices(c, c->nodes[i]);
            mu_cluster_touch_node(c, c->nodes[i]);
        }
    } else {
        for (size_t i = 0; i < d->nchanged; i++) {
            struct mu_cnode *n = mu_cluster_node(c, d->changed[i]);

            if (!n)
                continue;
            mu_cluster_node_devices(c, n);
            mu_cluster_touch_node(c, n);
        }
    }
    mu_devices_clear_changed(d);
    mu_cluster_dev_reach(c);
}

/* Resolves the users of claim ns/name (template: ns/name@) again. */
static void claim_users(struct mu_cluster *c, const char *ns, const char *name,
                        bool tmpl)
{
    char *key = mu_xasprintf("%s/%s%s", ns, name, tmpl ? "@" : "");
    struct mu_tlist *l = mu_map_get(&c->claim_users, key);

    free(key);
    for (size_t i = 0; l && i < l->n; i++)
        mu_cluster_redemand_task(c, l->v[i]);
}

/* Resolves again the tasks whose quota counts an All request by what the
 * slices offer (their list changes as they are resolved: a copy). */
static void slice_users(struct mu_cluster *c)
{
    const struct mu_tlist *l = mu_map_get(&c->claim_users,
                                          MU_CLUSTER_SLICE_USERS);
    struct mu_task **v;
    size_t n;

    if (!l || !l->n)
        return;
    n = l->n;
    v = mu_xcalloc(n, sizeof(*v));
    memcpy(v, l->v, n * sizeof(*v));
    for (size_t i = 0; i < n; i++)
        mu_cluster_redemand_task(c, v[i]);
    free(v);
}

void mu_cluster_dra_settle(struct mu_cluster *c)
{
    if (c->dev_slice_gen == c->dev.slice_gen)
        return;
    c->dev_slice_gen = c->dev.slice_gen;
    slice_users(c);
}

void mu_cluster_put_slice(struct mu_cluster *c, struct mu_slice *s)
{
    mu_devices_put_slice(&c->dev, s);
    mu_cluster_dra_sync(c);
}

void mu_cluster_del_slice(struct mu_cluster *c, const char *name)
{
    mu_devices_del_slice(&c->dev, name);
    mu_cluster_dra_sync(c);
}

void mu_cluster_put_class(struct mu_cluster *c, struct mu_devclass *dc)
{
    mu_devices_put_class(&c->dev, dc);
    mu_cluster_dra_sync(c);
}

void mu_cluster_del_class(struct mu_cluster *c, const char *name)
{
    mu_devices_del_class(&c->dev, name);
    mu_cluster_dra_sync(c);
}

void mu_cluster_put_claim(struct mu_cluster *c, struct mu_claim *cl)
{
    char *ns = mu_xstrdup(cl->meta.ns), *name = mu_xstrdup(cl->meta.name);

    mu_devices_put_claim(&c->dev, cl);
    claim_users(c, ns, name, false);
    mu_cluster_dra_sync(c);
    free(ns);
    free(name);
}

void mu_cluster_del_claim(struct mu_cluster *c, const char *ns,
                          const char *name)
{
    mu_devices_del_claim(&c->dev, ns, name);
    claim_users(c, ns, name, false);
    mu_cluster_dra_sync(c);
}

void mu_cluster_put_template(struct mu_cluster *c, struct mu_claimtemplate *t)
{
    char *ns = mu_xstrdup(t->meta.ns), *name = mu_xstrdup(t->meta.name);

    mu_devices_put_template(&c->dev, t);
    claim_users(c, ns, name, true);
    mu_cluster_dra_sync(c);
    free(ns);
    free(name);
}

void mu_cluster_del_template(struct mu_cluster *c, const char *ns,
                             const char *name)
{
    mu_devices_del_template(&c->dev, ns, name);
    claim_users(c, ns, name, true);
    mu_cluster_dra_sync(c);
}

void mu_cluster_set_devmaps(struct mu_cluster *c, const struct mu_devmap *m,
                            size_t n)
{
    mu_devices_set_maps(&c->dev, m, n);
    mu_cluster_dra_sync(c);
}
