/*
 * devices.c - the DRA device inventory: slices and pools, classes,
 * templates and claims, the devices the API's allocations hold
 * (devices.h). Demands and placement are devplace.c's, matching
 * devsel.c's, counting devcount.c's.
 */
#include "sched/devices_int.h"

_Static_assert(sizeof(struct mu_cdev) <= 64,
               "a device is read on one cache line (devices.h)");

void mu_devices_init(struct mu_devices *d)
{
    memset(d, 0, sizeof(*d));
    mu_slab_init(&d->priv_slab, sizeof(struct mu_dclaim), MU_DEV_PRIV_SLAB);
    mu_reqpool_init(&d->qreqs);
    mu_map_init(&d->classes);
    mu_map_init(&d->slices);
    mu_map_init(&d->devs);
    mu_map_init(&d->nodes);
    mu_map_init(&d->claims);
    mu_map_init(&d->templates);
    mu_map_init(&d->pools);
    mu_map_init(&d->changed_set);
    mu_map_init(&d->wanted);
    d->counts = mu_xcalloc(1, sizeof(*d->counts));
    mu_map_init(&d->counts->selkeys);
}

static void note_node(struct mu_devices *d, const char *node)
{
    if (!node || mu_map_get(&d->changed_set, node))
        return;
    mu_xgrow((void **)&d->changed, &d->cap_changed, d->nchanged + 1,
             sizeof(*d->changed));
    d->changed[d->nchanged++] = mu_xstrdup(node);
    mu_map_put(&d->changed_set, node, (void *)1);
}

void mu_devices_clear_changed(struct mu_devices *d)
{
    for (size_t i = 0; i < d->nchanged; i++)
        free(d->changed[i]);
    d->nchanged = 0;
    mu_map_release(&d->changed_set);
    mu_map_init(&d->changed_set);
    d->quota_stale = false;
}

/* ---- slices ---- */

static void list_add(struct mu_devnode *l, struct mu_devslice *s)
{
    size_t i, cap = l->cap;

    mu_xgrow_inline((void **)&l->v, &cap, (size_t)l->n + 1, sizeof(*l->v),
                    &l->v_one);
    l->cap = (uint32_t)cap;
    for (i = l->n; i > 0 && strcmp(l->v[i - 1]->s.meta.name,
                                   s->s.meta.name) > 0; i--)
        l->v[i] = l->v[i - 1];
    l->v[i] = s;
    l->n++;
    l->sum_ok = false;
}

static void list_free(struct mu_devnode *l)
{
    if (l->v != &l->v_one)
        free(l->v);
    free(l->reach);
}

static void list_del(struct mu_devnode *l, struct mu_devslice *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == s) {
            memmove(&l->v[i], &l->v[i + 1],
                    (l->n - i - 1) * sizeof(*l->v));
            l->n--;
            l->sum_ok = false;
            return;
        }
}

_Static_assert(sizeof(struct mu_devnode) <= 64,
               "a node's entry is one cache line");

/* The entry of key in m (d->nodes or d->pools), made empty from the slab
 * when it has none. */
static struct mu_devnode *list_at(struct mu_devices *d, struct mu_map *m,
                                  const char *key)
{
    struct mu_devnode *l = mu_map_get(m, key);

    if (l)
        return l;
    if (!d->nslabs || d->slab_used == MU_DEV_SLAB) {
        d->slabs = mu_xrealloc(d->slabs, (d->nslabs + 1) * sizeof(*d->slabs));
        d->slabs[d->nslabs++] = mu_xcalloc_lines(MU_DEV_SLAB, 64);
        d->slab_used = 0;
    }
    l = (struct mu_devnode *)(void *)((char *)d->slabs[d->nslabs - 1] +
                                      64 * d->slab_used++);
    mu_map_put(m, key, l);
    return l;
}

/* Whether s is reached from other nodes than none: allNodes, or a
 * nodeSelector (per-device node selection is not planned). */
static bool unbound(const struct mu_slice *s)
{
    return !s->node && (s->all_nodes || s->node_sel.nterms > 0);
}

/* A slice muster does not plan: not on one node, not unbound. */
static bool unplanned(const struct mu_slice *s)
{
    return !s->node && !unbound(s);
}

/* A pool's devices are usable when every slice of its newest generation
 * is there. */
static void pool_update(struct mu_devices *d, const char *key)
{
    struct mu_devnode *p = mu_map_get(&d->pools, key);
    int64_t gen = -1, want = 0, have = 0;

    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i]->s.generation > gen)
            gen = p->v[i]->s.generation;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i]->s.generation == gen) {
            have++;
            want = p->v[i]->s.slice_count;
        }
    for (size_t i = 0; i < p->n; i++) {
        struct mu_devslice *s = p->v[i];
        bool ok = s->s.generation == gen && have >= want;

        for (size_t k = 0; k < s->s.ndevs; k++)
            if (s->devs[k].usable != ok) {
                s->devs[k].usable = ok;
                if (s->nd)
                    s->nd->sum_ok = false;
                note_node(d, s->s.node);
                if (!s->s.node)
                    d->reach_gen++;
            }
    }
}

/* A device's key in the index: "driver/pool/device", malloc'd. */
static char *dev_key(const struct mu_devslice *s, const struct mu_cdev *dev)
{
    return mu_xasprintf("%s/%s", s->pool_key, dev->dev->name);
}

/* The newest copy of device `name` of s's pool in a slice other than s
 * (slices of one pool share its key), or NULL. */
static struct mu_cdev *other_copy(struct mu_devices *d,
                                  const struct mu_devslice *s, const char *name)
{
    const struct mu_devnode *p = mu_map_get(&d->pools, s->pool_key);
    struct mu_cdev *best = NULL;

    for (size_t i = 0; p && i < p->n; i++) {
        struct mu_devslice *o = p->v[i];

        if (o == s)
            continue;
        for (size_t k = 0; k < o->s.ndevs; k++)
            if (!strcmp(o->devs[k].dev->name, name) &&
                (!best || o->s.generation > best->slice->generation))
                best = &o->devs[k];
    }
    return best;
}

/* Takes slice s out of every index. A device the key index names moves
 * to another slice's copy of it (a pool changing generation), with its
 * holder; otherwise a muster-planned holder is returned in held (the
 * caller gives it back to the device that replaces it), and an API
 * claim's hold comes back through the wanted map when the device does. */
static void slice_unlink(struct mu_devices *d, struct mu_devslice *s,
                         struct mu_map *held)
{
    for (size_t k = 0; k < s->s.ndevs; k++) {
        struct mu_cdev *dev = &s->devs[k], *alt;
        struct mu_dclaim *h = s->holders[k];
        char *key = dev_key(s, dev);

        if (dev->pipe)
            mu_dev_pipe_drop(dev->pipe, dev);
        if (h)
            mu_dev_hold_drop(h, dev);
        if (mu_map_get(&d->devs, key) != dev) {
            free(key);
            continue; /* an older copy: never indexed nor held */
        }
        mu_map_del(&d->devs, key);
        alt = other_copy(d, s, dev->dev->name);
        if (alt) {
            mu_map_put(&d->devs, key, alt);
            if (h && !mu_dev_holder(alt))
                mu_dev_hold_add(h, alt);
            note_node(d, alt->slice->node);
        } else if (h && held && !h->api_alloc) {
            mu_map_put(held, key, h);
        }
        free(key);
    }
    if (s->s.node)
        list_del(list_at(d, &d->nodes, s->s.node), s);
    if (unbound(&s->s)) { /* no node's reach list may keep it */
        size_t it = 0;
        void *v;

        list_del(&d->unbound, s);
        while (mu_map_next(&d->nodes, &it, NULL, &v)) {
            struct mu_devnode *nd = v;

            for (size_t i = 0; i < nd->nreach; i++)
                if (nd->reach[i] == s) {
                    memmove(&nd->reach[i], &nd->reach[i + 1],
                            (nd->nreach - i - 1) * sizeof(*nd->reach));
                    nd->nreach--;
                    break;
                }
        }
        d->reach_gen++;
    }
    if (unplanned(&s->s))
        list_del(&d->unplanned, s);
    list_del(list_at(d, &d->pools, s->pool_key), s);
    note_node(d, s->s.node);
}

static void slice_free(struct mu_devslice *s)
{
    free(s->devs);
    free(s->holders);
    free(s->pool_key);
    mu_slice_release(&s->s);
    free(s);
}

void mu_devices_put_slice(struct mu_devices *d, struct mu_slice *in)
{
    struct mu_devslice *s = mu_xcalloc_lines(1, sizeof(*s));
    struct mu_devslice *old = mu_map_get(&d->slices, in->meta.name);
    struct mu_map held;
    char *old_pool = NULL;

    d->hold_gen++;
    d->slice_gen++;
    mu_map_init(&held);
    if (old) {
        slice_unlink(d, old, &held);
        old_pool = mu_xstrdup(old->pool_key);
        mu_map_del(&d->slices, old->s.meta.name);
        slice_free(old);
    }
    s->s = *in;
    memset(in, 0, sizeof(*in));
    s->pool_key = mu_xasprintf("%s/%s", s->s.driver, s->s.pool);
    s->devs = mu_xcalloc_lines(s->s.ndevs + 1, sizeof(*s->devs));
    s->holders = mu_xcalloc_lines(s->s.ndevs + 1, sizeof(*s->holders));
    s->ndevs = s->s.ndevs;
    s->node = s->s.node;
    s->nd = s->node ? list_at(d, &d->nodes, s->node) : NULL;
    for (size_t k = 0; k < s->s.ndevs; k++) {
        struct mu_cdev *dev = &s->devs[k];
        struct mu_dclaim *h;
        char *key;

        dev->slice = &s->s;
        dev->dev = &s->s.devs[k];
        key = dev_key(s, dev);
        {
            struct mu_cdev *was = mu_map_get(&d->devs, key);
            struct mu_dclaim *was_h = was ? mu_dev_holder(was) : NULL;

            /* the key index names the newest generation's copy */
            if (was && was->slice->generation > s->s.generation) {
                free(key);
                continue;
            }
            mu_map_put(&d->devs, key, dev);
            if (was_h)
                mu_dev_hold_add(was_h, dev); /* moves it */
        }
        h = mu_map_get(&held, key);
        if (!h)
            h = mu_map_get(&d->wanted, key);
        if (h && !s->holders[k])
            mu_dev_hold_add(h, dev);
        free(key);
    }
    mu_map_release(&held);
    if (!s->nd) /* else its node's sums fill it, below */
        mu_dev_memo_classes(d, s);
    mu_map_put(&d->slices, s->s.meta.name, s);
    if (s->s.node)
        list_add(list_at(d, &d->nodes, s->s.node), s);
    if (unbound(&s->s)) {
        list_add(&d->unbound, s);
        d->reach_gen++;
    }
    if (unplanned(&s->s))
        list_add(&d->unplanned, s);
    list_add(list_at(d, &d->pools, s->pool_key), s);
    note_node(d, s->s.node);
    pool_update(d, s->pool_key);
    if (old_pool && strcmp(old_pool, s->pool_key))
        pool_update(d, old_pool);
    free(old_pool);
    if (s->nd) /* now, not in the cycle that first looks at the node */
        mu_dev_node_sum(d, s->nd);
}

void mu_devices_del_slice(struct mu_devices *d, const char *name)
{
    struct mu_devslice *s = mu_map_get(&d->slices, name);
    struct mu_devnode *nd;
    char *pool;

    if (!s)
        return;
    nd = s->nd;
    d->hold_gen++;
    d->slice_gen++;
    slice_unlink(d, s, NULL);
    pool = mu_xstrdup(s->pool_key);
    mu_map_del(&d->slices, name);
    slice_free(s);
    pool_update(d, pool);
    free(pool);
    if (nd)
        mu_dev_node_sum(d, nd);
}

/* ---- classes, templates ---- */

void mu_devices_put_class(struct mu_devices *d, struct mu_devclass *in)
{
    struct mu_devclass *c = mu_xcalloc(1, sizeof(*c));

    *c = *in;
    memset(in, 0, sizeof(*in));
    mu_devices_del_class(d, c->meta.name);
    c->memo_bit = -1;
    for (int b = 0; b < MU_DEV_CLASS_MEMO && c->memo_bit < 0; b++)
        if (!(d->class_bits >> b & 1u))
            c->memo_bit = b;
    if (c->memo_bit >= 0)
        d->class_bits |= 1u << c->memo_bit;
    mu_map_put(&d->classes, c->meta.name, c);
    d->next_classes += c->ext_resource != NULL;
    d->gen++;
    d->quota_stale = true;
}

void mu_devices_del_class(struct mu_devices *d, const char *name)
{
    struct mu_devclass *c = mu_map_del(&d->classes, name);

    if (!c)
        return;
    if (c->memo_bit >= 0)
        d->class_bits &= ~(1u << c->memo_bit);
    d->next_classes -= c->ext_resource != NULL;
    mu_devclass_release(c);
    free(c);
    d->gen++;
    d->quota_stale = true;
}

void mu_devices_put_template(struct mu_devices *d, struct mu_claimtemplate *in)
{
    struct mu_claimtemplate *t = mu_xcalloc(1, sizeof(*t));
    char *key;

    *t = *in;
    memset(in, 0, sizeof(*in));
    mu_devices_del_template(d, t->meta.ns, t->meta.name);
    key = mu_xasprintf("%s/%s", t->meta.ns, t->meta.name);
    mu_map_put(&d->templates, key, t);
    free(key);
    d->hold_gen++; /* free counts are remembered per template option */
}

void mu_devices_del_template(struct mu_devices *d, const char *ns,
                             const char *name)
{
    char *key = mu_xasprintf("%s/%s", ns, name);
    struct mu_claimtemplate *t = mu_map_del(&d->templates, key);

    free(key);
    if (!t)
        return;
    mu_claimtemplate_release(t);
    free(t);
    d->hold_gen++;
}

void mu_devices_set_maps(struct mu_devices *d, const struct mu_devmap *m,
                         size_t n)
{
    for (size_t i = 0; i < d->nmaps; i++) {
        free(d->maps[i].class_name);
        free(d->maps[i].resource);
    }
    free(d->maps);
    d->maps = mu_xcalloc(n + 1, sizeof(*d->maps));
    for (size_t i = 0; i < n; i++) {
        d->maps[i].class_name = mu_xstrdup(m[i].class_name);
        d->maps[i].resource = mu_xstrdup(m[i].resource);
    }
    d->nmaps = n;
    d->gen++;
    d->quota_stale = true;
}

/* ---- claims ---- */

/* Holds what the API's allocation of c names: the devices the inventory
 * has now, and the others as soon as a slice shows them (the wanted map).
 * A device muster had planned for another claim still in use goes to c
 * (the API decided), and that claim is planned again on its node. */
static void hold_api(struct mu_devices *d, struct mu_dclaim *c)
{
    note_node(d, c->node);
    mu_dev_note_reach(d, c);
    mu_dev_holds_clear(c);
    mu_dev_want_clear(d, c);
    c->want = mu_xcalloc(c->api.nresults + 1, sizeof(*c->want));
    for (size_t i = 0; i < c->api.nresults; i++) {
        const struct mu_devresult *r = &c->api.results[i];
        char *key = mu_xasprintf("%s/%s/%s", r->driver, r->pool, r->device);
        struct mu_cdev *dev = mu_map_get(&d->devs, key);
        struct mu_dclaim *v = dev ? mu_dev_holder(dev) : NULL;

        c->want[c->nwant++] = key;
        mu_map_put(&d->wanted, key, c);
        if (!dev)
            continue;
        if (!dev->slice->node)
            d->reach_holds++;
        mu_dev_hold_add(c, dev);
        if (v && v != c && !v->api_alloc && v->users > 0) {
            const char *node = dev->slice->node;

            mu_dev_note_reach(d, v);
            mu_dev_holds_clear(v);
            /* on the node it was planned on (a device not bound to one
             * node has none of its own) */
            mu_dev_plan_claim(d, v, node ? mu_map_get(&d->nodes, node)
                                         : v->plan_nd);
            mu_dev_note_reach(d, v);
            note_node(d, node);
        }
    }
    note_node(d, c->node);
}

void mu_devices_put_claim(struct mu_devices *d, struct mu_claim *in)
{
    char *key = mu_xasprintf("%s/%s", in->meta.ns, in->meta.name);
    struct mu_dclaim *c = mu_map_get(&d->claims, key);
    bool was = c && c->api_alloc;

    d->hold_gen++;
    if (!c) {
        c = mu_xcalloc_lines(1, sizeof(*c));
        c->key = key;
        mu_map_put(&d->claims, key, c);
        d->claim_add_gen++;
    } else {
        free(key);
        mu_claim_release(&c->api);
    }
    c->api = *in;
    memset(in, 0, sizeof(*in));
    mu_dev_claim_spec(d, c, &c->api.spec);
    c->api_alloc = c->api.allocated;
    if (c->api_alloc) {
        hold_api(d, c);
    } else if (was) {
        /* deallocated: what muster plans for it now is the users' */
        note_node(d, c->node);
        mu_dev_note_reach(d, c);
        mu_dev_holds_clear(c);
        mu_dev_want_clear(d, c);
    }
}

void mu_devices_del_claim(struct mu_devices *d, const char *ns,
                          const char *name)
{
    char *key = mu_xasprintf("%s/%s", ns, name);
    struct mu_dclaim *c = mu_map_del(&d->claims, key);

    free(key);
    if (!c)
        return;
    d->hold_gen++;
    d->claim_del_gen++;
    note_node(d, c->node);
    mu_dev_note_reach(d, c);
    mu_dev_claim_free(d, c);
}

/* ---- release ---- */

static void free_lists(struct mu_map *m)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(m, &it, &k, &v))
        list_free(v); /* the entry is the slab's */
    mu_map_release(m);
}

static void free_values(struct mu_map *m)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(m, &it, &k, &v))
        free(v);
}

void mu_devices_release(struct mu_devices *d)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(&d->claims, &it, &k, &v))
        mu_dev_claim_free(d, v);
    mu_map_release(&d->claims);
    it = 0;
    while (mu_map_next(&d->slices, &it, &k, &v))
        slice_free(v);
    mu_map_release(&d->slices);
    it = 0;
    while (mu_map_next(&d->classes, &it, &k, &v)) {
        mu_devclass_release(v);
        free(v);
    }
    mu_map_release(&d->classes);
    it = 0;
    while (mu_map_next(&d->templates, &it, &k, &v)) {
        mu_claimtemplate_release(v);
        free(v);
    }
    mu_map_release(&d->templates);
    mu_map_release(&d->devs);
    free_lists(&d->nodes);
    free_lists(&d->pools);
    for (size_t i = 0; i < d->nslabs; i++)
        free(d->slabs[i]);
    free(d->slabs);
    mu_slab_release(&d->priv_slab);
    mu_reqpool_free(&d->qreqs);
    list_free(&d->unbound);
    list_free(&d->unplanned);
    mu_devices_set_maps(d, NULL, 0);
    free(d->maps);
    mu_devices_clear_changed(d);
    mu_map_release(&d->changed_set);
    mu_map_release(&d->wanted);
    free(d->changed);
    if (d->counts) {
        free_values(&d->counts->selkeys);
        mu_map_release(&d->counts->selkeys);
        free(d->counts);
    }
    memset(d, 0, sizeof(*d));
}

struct mu_devnode *mu_devices_node(struct mu_devices *d, const char *name)
{
    return list_at(d, &d->nodes, name);
}

void mu_devices_node_reach(struct mu_devices *d, const char *name,
                           const struct mu_kvs *labels)
{
    struct mu_devnode *nd = list_at(d, &d->nodes, name);
    size_t n = 0;
    bool moved = false;

    for (size_t i = 0; labels && i < d->unbound.n; i++) {
        struct mu_devslice *s = d->unbound.v[i];

        if (!s->s.all_nodes &&
            !mu_affinity_matches(&s->s.node_sel, labels, name))
            continue;
        size_t cap = nd->cap_reach;

        mu_xgrow((void **)&nd->reach, &cap, n + 1, sizeof(*nd->reach));
        nd->cap_reach = (uint32_t)cap;
        moved |= n >= nd->nreach || nd->reach[n] != s;
        nd->reach[n++] = s;
    }
    moved |= n != nd->nreach || nd->present != (labels != NULL);
    nd->nreach = (uint32_t)n;
    nd->present = labels != NULL;
    if (moved) { /* what an option takes at most, or finds free, moved */
        d->hold_gen++;
        d->slice_gen++;
    }
}
