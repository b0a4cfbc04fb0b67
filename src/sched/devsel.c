/*
 * devsel.c - which devices a class or an option selects: the classes'
 * answers a device remembers, and a node's sums of them; the selector
 * sets interned in the inventory, and the quota name a class is counted
 * under (devices_int.h).
 */
#include "sched/devices_int.h"

const char *mu_dev_class_quota(const struct mu_devices *d, const char *name)
{
    const struct mu_devclass *c;

    for (size_t i = 0; i < d->nmaps; i++)
        if (!strcmp(d->maps[i].class_name, name))
            return d->maps[i].resource;
    c = mu_map_get(&d->classes, name);
    return c ? c->ext_resource : NULL;
}

const void *mu_dev_sel_key(const struct mu_devices *d,
                           const struct mu_devopt *o)
{
    struct mu_devopt *memo = (struct mu_devopt *)o;
    struct mu_devcounts *m = d->counts;
    const void *key;
    struct mu_sb sb;

    if (o->memo_selkey)
        return o->memo_selkey;
    mu_sb_init(&sb);
    mu_sb_add(&sb, o->class_name);
    for (size_t i = 0; i < o->sel.n; i++) {
        mu_sb_addn(&sb, "\n", 1);
        mu_sb_add(&sb, o->sel.src[i] ? o->sel.src[i] : "");
    }
    key = mu_map_get(&m->selkeys, sb.buf);
    if (!key && m->selkeys.n < MU_DEV_SELKEYS_MAX) {
        key = mu_xstrdup(sb.buf);
        mu_map_put(&m->selkeys, sb.buf, (void *)key);
    }
    mu_sb_release(&sb);
    memo->memo_selkey = key ? key : o;
    return memo->memo_selkey;
}

const void *mu_dev_count_key(const struct mu_devices *d,
                             const struct mu_devclass *c,
                             const struct mu_devopt *o)
{
    return o->sel.n ? mu_dev_sel_key(d, o) : c;
}

void mu_dev_memo_classes(const struct mu_devices *d, struct mu_devslice *s)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(&d->classes, &it, &k, &v)) {
        const struct mu_devclass *c = v;

        if (c->memo_bit < 0)
            continue; /* no memo to fill: matched at every look */
        for (size_t i = 0; i < s->ndevs; i++)
            mu_dev_class_ok(d, c, &s->devs[i]);
    }
}

void mu_dev_node_sum(const struct mu_devices *d, struct mu_devnode *nd)
{
    uint32_t all = d->class_bits;
    int32_t nfree = 0;
    bool usable = true;

    for (size_t i = 0; i < nd->n; i++) {
        struct mu_devslice *s = nd->v[i];

        mu_dev_memo_classes(d, s);
        for (size_t k = 0; k < s->ndevs; k++) {
            const struct mu_cdev *dev = &s->devs[k];

            nfree += !s->holders[k];
            usable &= dev->usable;
            all &= dev->cls_known & dev->cls_ok;
        }
    }
    nd->nfree = nfree;
    nd->all_usable = usable;
    nd->all_cls = all;
    nd->sum_gen = d->gen + 1;
    nd->sum_ok = true;
}
