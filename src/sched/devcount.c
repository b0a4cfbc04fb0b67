/*
 * devcount.c - devices counted: what a node's devices add to the cluster's
 * quota, the most an All request takes on one node, and the free devices
 * a pending pod's why-pending names (devices_int.h, devices.h).
 */
#include "sched/devices_int.h"

static void quota_of(struct mu_devices *d, const struct mu_devnode *nd,
                     struct mu_resnames *rn, struct mu_res *out);

int64_t mu_dev_all_most(const struct mu_devices *d, const struct mu_devopt *o)
{
    const struct mu_devclass *c = mu_dev_opt_class(d, o);
    const void *key = mu_dev_count_key(d, c, o);
    struct devmost *e;
    int64_t best = 0;
    size_t it = 0;
    const char *k;
    void *v;

    for (size_t i = 0; i < MU_DEV_COUNT_CACHE; i++) {
        e = &d->counts->m[i];
        if (e->opt == key && e->gen == d->gen && e->hold_gen == d->hold_gen)
            return e->most;
    }
    while (c && mu_map_next(&d->nodes, &it, &k, &v)) {
        const struct mu_devnode *nd = v;
        int64_t n = 0;

        for (size_t i = 0; nd->present && i < mu_dev_nd_count(nd); i++)
            for (size_t j = 0; j < mu_dev_nd_slice(nd, i)->s.ndevs; j++)
                n += mu_dev_nd_slice(nd, i)->devs[j].usable &&
                     mu_dev_serves(d, c, o, &mu_dev_nd_slice(nd, i)->devs[j]);
        best = MU_MAX(best, n);
    }
    e = &d->counts->m[d->counts->next_most++ % MU_DEV_COUNT_CACHE];
    e->opt = key;
    e->gen = d->gen;
    e->hold_gen = d->hold_gen;
    e->most = best;
    return best;
}

void mu_devices_unbound_quota(struct mu_devices *d, struct mu_resnames *rn,
                              struct mu_res *out)
{
    quota_of(d, &d->unbound, rn, out);
}

void mu_devices_node_quota(struct mu_devices *d, const char *node,
                           struct mu_resnames *rn, struct mu_res *out)
{
    quota_of(d, mu_map_get(&d->nodes, node), rn, out);
}

/* Per mapped resource name, the usable devices of nd's own slices. */
static void quota_of(struct mu_devices *d, const struct mu_devnode *nd,
                     struct mu_resnames *rn, struct mu_res *out)
{
    size_t it = 0, nc = 0, cap = 0;
    const char **names;
    struct {
        const struct mu_devclass *c;
        int dim;
    } *m = NULL;

    mu_res_zero(out);
    if (!nd || !nd->n)
        return;
    /* the mapped classes in name order (quota names registered in a
     * fixed order), then each usable device counted once per quota name
     * however many of them select it */
    names = mu_map_sorted_keys(&d->classes, &nc);
    for (size_t i = 0; i < nc; i++) {
        const char *q = mu_dev_class_quota(d, names[i]);
        int dim;

        if (!q || (dim = mu_resnames_index(rn, q, true)) < 0)
            continue;
        mu_xgrow((void **)&m, &cap, it + 1, sizeof(*m));
        m[it].c = mu_map_get(&d->classes, names[i]);
        m[it++].dim = dim;
    }
    free(names);
    for (size_t i = 0; i < nd->n && it; i++)
        for (size_t k = 0; k < nd->v[i]->s.ndevs; k++) {
            const struct mu_cdev *dev = &nd->v[i]->devs[k];
            struct mu_cel_device v;
            uint32_t seen = 0;

            if (!dev->usable)
                continue;
            v = mu_cdev_view(dev);
            for (size_t j = 0; j < it; j++)
                if (!(seen & (1u << m[j].dim)) &&
                    mu_devsel_match(&m[j].c->sel, &v)) {
                    seen |= 1u << m[j].dim;
                    mu_res_put(out, m[j].dim, out->v[m[j].dim] + 1);
                }
        }
    free(m);
}

/* Usable free devices option o of class c selects in slice s (those
 * before its first_free are held: not read). */
static int64_t free_on(const struct mu_devices *d, const struct mu_devclass *c,
                       const struct mu_devopt *o, const struct mu_devslice *s)
{
    int64_t n = 0;

    for (size_t j = s->first_free; j < s->ndevs; j++) {
        const struct mu_cdev *dev = &s->devs[j];

        n += dev->usable && !s->holders[j] && mu_dev_serves(d, c, o, dev);
    }
    return n;
}

/* Usable free devices option o of class c selects among node entry nd's
 * own slices: from its sums when they answer (o has no selectors of its
 * own, c selects every device, every one usable), else device by
 * device. */
static int64_t own_free(const struct mu_devices *d,
                        const struct mu_devclass *c, const struct mu_devopt *o,
                        const struct mu_devnode *nd)
{
    int64_t n = 0;

    if (!o->sel.n && mu_dev_sums_serve(d, nd, c))
        return nd->nfree;
    for (size_t i = 0; i < nd->n; i++)
        n += free_on(d, c, o, nd->v[i]);
    return n;
}

void mu_devices_free_count(const struct mu_devices *d,
                           const struct mu_devdemand *dm,
                           struct mu_devfree *out)
{
    const struct mu_devopt *o = NULL;
    const struct mu_devclass *c;
    struct devcount *e;
    const void *key;
    size_t it = 0;
    const char *k;
    void *v;

    memset(out, 0, sizeof(*out));
    out->per = 1;
    for (size_t i = 0; i < dm->n && !o; i++) {
        const struct mu_dclaim *cl = mu_dev_entry_claim(d, dm, i);

        if (cl && !cl->nheld && cl->spec->nreqs)
            o = &cl->spec->reqs[0].opts[0];
    }
    if (!o || !(c = mu_map_get(&d->classes, o->class_name)))
        return;
    out->class_name = o->class_name;
    out->per = o->mode == MU_ALLOC_EXACT ? o->count : 1;
    /* every claim made from one template has an option of its own: they
     * share one answer (count_key) */
    key = mu_dev_count_key(d, c, o);
    for (size_t i = 0; i < MU_DEV_COUNT_CACHE; i++) {
        e = &d->counts->e[i];
        if (e->opt == key && e->hold_gen == d->hold_gen && e->gen == d->gen &&
            e->resolve_gen == d->resolve_gen) {
            out->total = e->total;
            out->nodes = e->nodes;
            out->best = e->best;
            out->unplanned = e->unplanned;
            return;
        }
    }
    while (mu_map_next(&d->nodes, &it, &k, &v)) {
        const struct mu_devnode *nd = v;
        int64_t own, n;

        if (!nd->present)
            continue;
        own = own_free(d, c, o, nd);
        n = own;
        for (size_t i = 0; i < nd->nreach; i++)
            n += free_on(d, c, o, nd->reach[i]);
        out->total += own; /* those it reaches: once, below */
        out->nodes += n > 0;
        out->best = MU_MAX(out->best, n);
    }
    for (size_t i = 0; i < d->unbound.n; i++)
        out->total += free_on(d, c, o, d->unbound.v[i]);
    for (size_t i = 0; i < d->unplanned.n; i++)
        out->unplanned += free_on(d, c, o, d->unplanned.v[i]);
    e = &d->counts->e[d->counts->next++ % MU_DEV_COUNT_CACHE];
    e->opt = key;
    e->hold_gen = d->hold_gen;
    e->gen = d->gen;
    e->resolve_gen = d->resolve_gen;
    e->total = out->total;
    e->nodes = out->nodes;
    e->best = out->best;
    e->unplanned = out->unplanned;
}

void mu_devfree_text(const struct mu_devfree *f, int64_t pods,
                     struct mu_sb *sb)
{
    int64_t need = f->per * pods;

    /* no printf: a cycle writes this for every gang that waits on devices */
    mu_sb_add(sb, "needs ");
    mu_sb_addi(sb, need);
    mu_sb_add(sb, need == 1 ? " device of class " : " devices of class ");
    mu_sb_add(sb, f->class_name);
    mu_sb_add(sb, " (");
    mu_sb_addi(sb, f->per);
    mu_sb_add(sb, " per pod); ");
    if (!f->total) {
        mu_sb_add(sb, "none free");
    } else {
        mu_sb_add(sb, "free: ");
        mu_sb_addi(sb, f->total);
        mu_sb_add(sb, " on ");
        mu_sb_addi(sb, f->nodes);
        mu_sb_add(sb, f->nodes == 1 ? " node, at most " : " nodes, at most ");
        mu_sb_addi(sb, f->best);
        mu_sb_add(sb, " on one node");
    }
    if (f->unplanned) {
        mu_sb_add(sb, " (and ");
        mu_sb_addi(sb, f->unplanned);
        mu_sb_add(sb, " in ResourceSlices with perDeviceNodeSelection, "
                      "which muster does not plan)");
    }
}
