/*
 * devices.c - the DRA device inventory and device placement (devices.h).
 */
#include "sched/devices.h"

/* The answers mu_devices_free_count remembers. */
struct devcount {
    const void *opt;
    uint64_t hold_gen, gen;
    int64_t total, nodes, best;
};

struct mu_devcounts {
    struct devcount e[MU_DEV_COUNT_CACHE];
    unsigned next;
};

/* Most devices one fit check may pick (the API allows 32 requests of up
 * to 1024 devices each; beyond this a demand does not fit). */
#define MU_DEV_PICK_MAX 1024

void mu_devices_init(struct mu_devices *d)
{
    memset(d, 0, sizeof(*d));
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
}

/* ---- holds ---- */

static void hold_drop(struct mu_dclaim *c, struct mu_cdev *dev)
{
    for (size_t i = 0; i < c->nheld; i++)
        if (c->held[i] == dev) {
            memmove(&c->held[i], &c->held[i + 1],
                    (c->nheld - i - 1) * sizeof(*c->held));
            c->nheld--;
            break;
        }
    if (!c->nheld)
        c->node = NULL;
    dev->holder = NULL;
}

static void hold_add(struct mu_dclaim *c, struct mu_cdev *dev)
{
    if (dev->holder)
        hold_drop(dev->holder, dev);
    mu_xgrow((void **)&c->held, &c->cap_held, c->nheld + 1,
             sizeof(*c->held));
    c->held[c->nheld++] = dev;
    c->node = dev->slice->node;
    dev->holder = c;
}

static void holds_clear(struct mu_dclaim *c)
{
    while (c->nheld)
        hold_drop(c, c->held[c->nheld - 1]);
}

static void pipe_drop(struct mu_dclaim *c, struct mu_cdev *dev)
{
    for (size_t i = 0; i < c->npiped; i++)
        if (c->piped[i] == dev) {
            c->piped[i] = c->piped[--c->npiped];
            break;
        }
    dev->pipe = NULL;
}

static void pipes_clear(struct mu_dclaim *c)
{
    for (size_t i = 0; i < c->npiped; i++)
        if (c->piped[i]->pipe == c)
            c->piped[i]->pipe = NULL;
    c->npiped = 0;
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

/* Forgets the device keys c waits for. */
static void want_clear(struct mu_devices *d, struct mu_dclaim *c)
{
    for (size_t i = 0; i < c->nwant; i++) {
        if (mu_map_get(&d->wanted, c->want[i]) == c)
            mu_map_del(&d->wanted, c->want[i]);
        free(c->want[i]);
    }
    free(c->want);
    c->want = NULL;
    c->nwant = 0;
}

/* d may be NULL for a private claim (it waits for nothing). */
static void dclaim_free(struct mu_devices *d, struct mu_dclaim *c)
{
    if (!c)
        return;
    if (d)
        want_clear(d, c);
    holds_clear(c);
    pipes_clear(c);
    free(c->held);
    free(c->piped);
    free(c->key);
    mu_claim_release(&c->api);
    free(c);
}

/* ---- slices ---- */

static void list_add(struct mu_devnode *l, struct mu_devslice *s)
{
    size_t i;

    mu_xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    for (i = l->n; i > 0 && strcmp(l->v[i - 1]->s.meta.name,
                                   s->s.meta.name) > 0; i--)
        l->v[i] = l->v[i - 1];
    l->v[i] = s;
    l->n++;
}

static void list_del(struct mu_devnode *l, struct mu_devslice *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == s) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
            l->n--;
            return;
        }
}

static struct mu_devnode *list_at(struct mu_map *m, const char *key)
{
    struct mu_devnode *l = mu_map_get(m, key);

    if (!l) {
        l = mu_xcalloc(1, sizeof(*l));
        mu_map_put(m, key, l);
    }
    return l;
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
                note_node(d, s->s.node);
            }
    }
}

/* Another slice's device of the same key (driver/pool/device) in s's
 * pool, of the newest generation, or NULL. */
static struct mu_cdev *other_copy(struct mu_devices *d,
                                  const struct mu_devslice *s, const char *key)
{
    const struct mu_devnode *p = mu_map_get(&d->pools, s->pool_key);
    struct mu_cdev *best = NULL;

    for (size_t i = 0; p && i < p->n; i++) {
        struct mu_devslice *o = p->v[i];

        if (o == s)
            continue;
        for (size_t k = 0; k < o->s.ndevs; k++)
            if (!strcmp(o->devs[k].key, key) &&
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
        struct mu_dclaim *h = dev->holder;

        if (dev->pipe)
            pipe_drop(dev->pipe, dev);
        if (h)
            hold_drop(h, dev);
        if (mu_map_get(&d->devs, dev->key) != dev)
            continue; /* an older copy: never indexed nor held */
        mu_map_del(&d->devs, dev->key);
        alt = other_copy(d, s, dev->key);
        if (alt) {
            mu_map_put(&d->devs, alt->key, alt);
            if (h && !alt->holder)
                hold_add(h, alt);
            note_node(d, alt->slice->node);
        } else if (h && held && !h->api_alloc) {
            mu_map_put(held, dev->key, h);
        }
    }
    if (s->s.node)
        list_del(list_at(&d->nodes, s->s.node), s);
    list_del(list_at(&d->pools, s->pool_key), s);
    note_node(d, s->s.node);
}

static void slice_free(struct mu_devslice *s)
{
    for (size_t k = 0; k < s->s.ndevs; k++)
        free(s->devs[k].key);
    free(s->devs);
    free(s->pool_key);
    mu_slice_release(&s->s);
    free(s);
}

void mu_devices_put_slice(struct mu_devices *d, struct mu_slice *in)
{
    struct mu_devslice *s = mu_xcalloc(1, sizeof(*s));
    struct mu_devslice *old = mu_map_get(&d->slices, in->meta.name);
    struct mu_map held;
    char *old_pool = NULL;

    d->hold_gen++;
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
    s->devs = mu_xcalloc(s->s.ndevs + 1, sizeof(*s->devs));
    for (size_t k = 0; k < s->s.ndevs; k++) {
        struct mu_cdev *dev = &s->devs[k];
        const struct mu_dev *src = &s->s.devs[k];
        struct mu_dclaim *h;

        dev->key = mu_xasprintf("%s/%s", s->pool_key, src->name);
        dev->slice = &s->s;
        dev->dev = src;
        dev->view.driver = s->s.driver;
        dev->view.nattrs = src->nattrs;
        dev->view.attrs = src->attrs;
        dev->view.ncaps = src->ncaps;
        dev->view.caps = src->caps;
        {
            struct mu_cdev *was = mu_map_get(&d->devs, dev->key);

            /* the key index names the newest generation's copy */
            if (was && was->slice->generation > s->s.generation)
                continue;
            mu_map_put(&d->devs, dev->key, dev);
            if (was && was->holder)
                hold_add(was->holder, dev); /* moves it */
        }
        h = mu_map_get(&held, dev->key);
        if (!h)
            h = mu_map_get(&d->wanted, dev->key);
        if (h && !dev->holder)
            hold_add(h, dev);
    }
    mu_map_release(&held);
    mu_map_put(&d->slices, s->s.meta.name, s);
    if (s->s.node)
        list_add(list_at(&d->nodes, s->s.node), s);
    list_add(list_at(&d->pools, s->pool_key), s);
    note_node(d, s->s.node);
    pool_update(d, s->pool_key);
    if (old_pool && strcmp(old_pool, s->pool_key))
        pool_update(d, old_pool);
    free(old_pool);
}

void mu_devices_del_slice(struct mu_devices *d, const char *name)
{
    struct mu_devslice *s = mu_map_get(&d->slices, name);
    char *pool;

    if (!s)
        return;
    d->hold_gen++;
    slice_unlink(d, s, NULL);
    pool = mu_xstrdup(s->pool_key);
    mu_map_del(&d->slices, name);
    slice_free(s);
    pool_update(d, pool);
    free(pool);
}

/* ---- classes, templates ---- */

void mu_devices_put_class(struct mu_devices *d, struct mu_devclass *in)
{
    struct mu_devclass *c = mu_xcalloc(1, sizeof(*c));

    *c = *in;
    memset(in, 0, sizeof(*in));
    mu_devices_del_class(d, c->meta.name);
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

static void plan_claim(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd);

/* Holds what the API's allocation of c names: the devices the inventory
 * has now, and the others as soon as a slice shows them (the wanted map).
 * A device muster had planned for another claim still in use goes to c
 * (the API decided), and that claim is planned again on its node. */
static void hold_api(struct mu_devices *d, struct mu_dclaim *c)
{
    note_node(d, c->node);
    holds_clear(c);
    want_clear(d, c);
    c->want = mu_xcalloc(c->api.nresults + 1, sizeof(*c->want));
    for (size_t i = 0; i < c->api.nresults; i++) {
        const struct mu_devresult *r = &c->api.results[i];
        char *key = mu_xasprintf("%s/%s/%s", r->driver, r->pool, r->device);
        struct mu_cdev *dev = mu_map_get(&d->devs, key);
        struct mu_dclaim *v = dev ? dev->holder : NULL;

        c->want[c->nwant++] = key;
        mu_map_put(&d->wanted, key, c);
        if (!dev)
            continue;
        hold_add(c, dev);
        if (v && v != c && !v->api_alloc && v->users > 0) {
            const char *node = dev->slice->node;

            holds_clear(v);
            if (node)
                plan_claim(d, v, mu_map_get(&d->nodes, node));
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
        c = mu_xcalloc(1, sizeof(*c));
        c->key = key;
        mu_map_put(&d->claims, key, c);
    } else {
        free(key);
        mu_claim_release(&c->api);
    }
    c->api = *in;
    memset(in, 0, sizeof(*in));
    c->spec = &c->api.spec;
    c->api_alloc = c->api.allocated;
    if (c->api_alloc) {
        hold_api(d, c);
    } else if (was) {
        /* deallocated: what muster plans for it now is the users' */
        note_node(d, c->node);
        holds_clear(c);
        want_clear(d, c);
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
    note_node(d, c->node);
    dclaim_free(d, c);
}

/* ---- release ---- */

static void free_lists(struct mu_map *m)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(m, &it, &k, &v)) {
        free(((struct mu_devnode *)v)->v);
        free(v);
    }
    mu_map_release(m);
}

void mu_devices_release(struct mu_devices *d)
{
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(&d->claims, &it, &k, &v))
        dclaim_free(d, v);
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
    mu_devices_set_maps(d, NULL, 0);
    free(d->maps);
    mu_devices_clear_changed(d);
    mu_map_release(&d->changed_set);
    mu_map_release(&d->wanted);
    free(d->changed);
    free(d->counts);
    memset(d, 0, sizeof(*d));
}

/* ---- demands ---- */

/* The quota name of a class, or NULL. */
static const char *class_quota(const struct mu_devices *d, const char *name)
{
    const struct mu_devclass *c;

    for (size_t i = 0; i < d->nmaps; i++)
        if (!strcmp(d->maps[i].class_name, name))
            return d->maps[i].resource;
    c = mu_map_get(&d->classes, name);
    return c ? c->ext_resource : NULL;
}

/* Checks spec against the inventory; adds its quota. */
static void demand_spec(struct mu_devices *d, const char *what,
                        const struct mu_claimspec *spec, bool charge,
                        struct mu_resnames *rn, struct mu_devdemand *out)
{
    if (spec->bad && !out->why)
        out->why = mu_xasprintf("%s: %s", what, spec->bad);
    for (size_t i = 0; i < spec->nreqs; i++) {
        const struct mu_devreq *r = &spec->reqs[i];

        for (size_t k = 0; k < r->nopts; k++) {
            const struct mu_devopt *o = &r->opts[k];
            const struct mu_devclass *c = mu_map_get(&d->classes,
                                                     o->class_name);
            const char *q;
            int dim;

            if (!c && !out->why)
                out->why = mu_xasprintf("%s: device class %s not found",
                                        what, o->class_name);
            if (c && c->sel.bad && !out->why)
                out->why = mu_xasprintf("DeviceClass %s: %s", o->class_name,
                                        c->sel.bad);
            if (!charge || k || o->mode != MU_ALLOC_EXACT ||
                !(q = class_quota(d, o->class_name)))
                continue;
            dim = mu_resnames_index(rn, q, true);
            if (dim < 0) {
                if (!out->why)
                    out->why = mu_xasprintf("%s: too many resource names "
                                            "for %s", what, q);
                continue;
            }
            mu_res_put(&out->quota, dim,
                       out->quota.v[dim] + o->count);
        }
    }
}

/* The class serving extended resource name (KEP-5004): the newest that
 * names it in extendedResourceName, then the first by name; NULL. */
static const struct mu_devclass *ext_class(const struct mu_devices *d,
                                           const char *name)
{
    const struct mu_devclass *best = NULL;
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(&d->classes, &it, &k, &v)) {
        const struct mu_devclass *c = v;

        if (!c->ext_resource || strcmp(c->ext_resource, name))
            continue;
        if (!best || c->meta.created > best->meta.created ||
            (c->meta.created == best->meta.created &&
             strcmp(c->meta.name, best->meta.name) < 0))
            best = c;
    }
    return best;
}

/* The entries of the pod's extended resources DRA serves. */
static void demand_ext(struct mu_devices *d, const struct mu_pod *pod,
                       const struct mu_resnames *rn, struct mu_devdemand *out,
                       struct mu_sb *sig)
{
    uint32_t set = d->next_classes ? pod->req.set & ~7u : 0;

    for (int dim = 0; set; dim++, set >>= 1) {
        const struct mu_devclass *cls;
        char *key;
        struct mu_dclaim *p;
        struct mu_devopt *o;

        if (!(set & 1u) || pod->req.v[dim] <= 0 || dim >= rn->n ||
            !(cls = ext_class(d, rn->name[dim])))
            continue;
        out->ext_dims |= 1u << dim;
        out->c[out->n].ext_dim = dim;
        key = pod->ext_claim ? mu_xasprintf("%s/%s", pod->meta.ns,
                                            pod->ext_claim)
                             : NULL;
        if (key && mu_map_get(&d->claims, key)) {
            const struct mu_dclaim *c = mu_map_get(&d->claims, key);

            out->c[out->n++].claim_key = key;
            mu_sb_addf(sig, "x%d:at:%s;", dim,
                       c->api_alloc && c->node ? c->node : "");
            continue;
        }
        free(key);
        /* a claim of the pod's count of devices of the class */
        p = mu_xcalloc(1, sizeof(*p));
        p->api.spec.reqs = mu_xcalloc(1, sizeof(*p->api.spec.reqs));
        p->api.spec.nreqs = 1;
        p->api.spec.reqs[0].name = mu_xstrdup(rn->name[dim]);
        p->api.spec.reqs[0].opts = o = mu_xcalloc(1, sizeof(*o));
        p->api.spec.reqs[0].nopts = 1;
        o->name = mu_xstrdup(rn->name[dim]);
        o->class_name = mu_xstrdup(cls->meta.name);
        o->mode = MU_ALLOC_EXACT;
        o->count = pod->req.v[dim];
        p->spec = &p->api.spec;
        out->c[out->n++].priv = p;
        if (cls->sel.bad && !out->why)
            out->why = mu_xasprintf("DeviceClass %s: %s", cls->meta.name,
                                    cls->sel.bad);
        mu_sb_addf(sig, "x%d:%s;", dim, cls->meta.name);
    }
}

void mu_devdemand_resolve(struct mu_devices *d, const struct mu_pod *pod,
                          struct mu_resnames *rn, struct mu_devdemand *out)
{
    struct mu_sb sig;
    size_t nent;

    memset(out, 0, sizeof(*out));
    mu_sb_init(&sig);
    out->gen = d->gen;
    /* room for the pod's claims and one entry per extended resource it
     * asks (demand_ext) */
    nent = pod->nclaims + 1 +
           (d->next_classes ? (size_t)__builtin_popcount(pod->req.set & ~7u)
                            : 0);
    out->c = mu_xcalloc(nent, sizeof(*out->c));
    for (size_t i = 0; i < nent; i++)
        out->c[i].ext_dim = -1;
    for (size_t i = 0; i < pod->nclaims; i++) {
        const struct mu_pod_claim *pc = &pod->claims[i];
        char *key = pc->claim ? mu_xasprintf("%s/%s", pod->meta.ns,
                                             pc->claim)
                              : NULL;
        struct mu_dclaim *c = key ? mu_map_get(&d->claims, key) : NULL;

        if (c) {
            char *what = mu_xasprintf("ResourceClaim %s", key);

            out->c[out->n++].claim_key = key;
            /* a claim named by resourceClaimName may be shared by any
             * number of pods: it is not charged to each of them */
            demand_spec(d, what, c->spec, pc->tmpl != NULL, rn, out);
            out->shared |= !pc->tmpl;
            free(what);
            if (c->api_alloc)
                mu_sb_addf(&sig, "at:%s;", c->node ? c->node : "");
            else
                mu_sb_addf(&sig, "%s:%s;", pc->tmpl ? "t" : "c",
                           pc->tmpl ? pc->tmpl : key);
            continue;
        }
        if (pc->tmpl) {
            char *tk = mu_xasprintf("%s/%s", pod->meta.ns, pc->tmpl);
            struct mu_claimtemplate *t = mu_map_get(&d->templates, tk);

            if (t) {
                struct mu_dclaim *p = mu_xcalloc(1, sizeof(*p));
                char *what = mu_xasprintf("ResourceClaimTemplate %s", tk);

                p->spec = &t->spec;
                out->c[out->n++].priv = p;
                demand_spec(d, what, p->spec, true, rn, out);
                free(what);
                mu_sb_addf(&sig, "t:%s;", pc->tmpl);
            } else if (!out->why) {
                out->why = mu_xasprintf("waiting for ResourceClaimTemplate "
                                        "%s", tk);
            }
            free(tk);
        } else {
            out->shared = true;
            if (!out->why)
                out->why = mu_xasprintf("waiting for ResourceClaim %s", key);
        }
        free(key);
    }
    demand_ext(d, pod, rn, out, &sig);
    if (out->why)
        mu_sb_add(&sig, "why;");
    out->sig = sig.buf ? sig.buf : mu_xstrdup("");
}

bool mu_devdemand_needed(const struct mu_devices *d, const struct mu_pod *pod)
{
    return pod->nclaims || (d->next_classes && (pod->req.set & ~7u));
}

void mu_devdemand_release(struct mu_devdemand *dm)
{
    for (size_t i = 0; i < dm->n; i++) {
        free(dm->c[i].claim_key);
        dclaim_free(NULL, dm->c[i].priv);
    }
    free(dm->c);
    free(dm->why);
    free(dm->sig);
    memset(dm, 0, sizeof(*dm));
}

static struct mu_dclaim *entry_claim(const struct mu_devices *d,
                                     const struct mu_devdemand *dm, size_t i)
{
    return dm->c[i].priv ? dm->c[i].priv
                         : mu_map_get(&d->claims, dm->c[i].claim_key);
}

/* ---- matching ---- */

/* Devices picked by one fit check or take, beyond those held. */
struct picks {
    size_t n;
    struct mu_cdev *v[MU_DEV_PICK_MAX];
};

static bool picked(const struct picks *p, const struct mu_cdev *dev)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] == dev)
            return true;
    return false;
}

static bool dev_free(const struct mu_cdev *dev, bool future)
{
    const struct mu_dclaim *h = dev->holder;

    if (future && dev->pipe)
        return false; /* promised to a pipelined task */
    return !h || (future && h->users > 0 && h->leaving == h->users);
}

/* Whether class c and option o select dev. The class's answer is
 * remembered on the device (classes change only with the inventory's
 * gen): most requests name a class and nothing else. */
static bool serves(const struct mu_devices *d, const struct mu_devclass *c,
                   const struct mu_devopt *o, const struct mu_cdev *dev)
{
    struct mu_cdev *m = (struct mu_cdev *)dev;

    if (m->memo_class != c || m->memo_gen != d->gen + 1) {
        m->memo_class = c;
        m->memo_gen = d->gen + 1;
        m->memo_ok = mu_devsel_match(&c->sel, &dev->view);
    }
    return m->memo_ok && (!o->sel.n || mu_devsel_match(&o->sel, &dev->view));
}

/* The class o names (NULL when there is none), remembered on o: classes
 * change only with the inventory's gen. */
static const struct mu_devclass *opt_class(const struct mu_devices *d,
                                           const struct mu_devopt *o)
{
    struct mu_devopt *m = (struct mu_devopt *)o;

    if (m->memo_gen != d->gen + 1) {
        m->memo_class = mu_map_get(&d->classes, o->class_name);
        m->memo_gen = d->gen + 1;
    }
    return m->memo_class;
}

/* Picks devices of node nd for option o into p; false (p unchanged) when
 * the node cannot serve it. *nfree: matching free devices seen. */
static bool pick_opt(const struct mu_devices *d, const struct mu_devnode *nd,
                     const struct mu_devopt *o, bool future, struct picks *p,
                     int64_t *nfree)
{
    /* nfree NULL: stop as soon as an ExactCount has its devices */
    const struct mu_devclass *c = opt_class(d, o);
    size_t mark = p->n;
    int64_t got = 0;

    if (nfree)
        *nfree = 0;
    if (!c || !nd)
        return false;
    for (size_t i = 0; i < nd->n; i++)
        for (size_t k = 0; k < nd->v[i]->s.ndevs; k++) {
            struct mu_cdev *dev = &nd->v[i]->devs[k];

            if (!dev->usable || picked(p, dev) || !serves(d, c, o, dev))
                continue;
            if (!dev_free(dev, future)) {
                if (o->mode == MU_ALLOC_ALL)
                    goto fail; /* All wants every matching device */
                continue;
            }
            if (nfree)
                (*nfree)++;
            if (o->mode == MU_ALLOC_EXACT && got >= o->count) {
                if (!nfree)
                    return true;
                continue;
            }
            if (p->n >= MU_DEV_PICK_MAX)
                goto fail;
            p->v[p->n++] = dev;
            got++;
        }
    if (got > 0 && (o->mode == MU_ALLOC_ALL || got >= o->count))
        return true;
fail:
    p->n = mark;
    return false;
}

/* Picks for the whole of claim c on node nd. */
static bool pick_claim(const struct mu_devices *d, const struct mu_devnode *nd,
                       const struct mu_dclaim *c, bool future,
                       struct picks *p, struct mu_devfit *why)
{
    for (size_t i = 0; i < c->spec->nreqs; i++) {
        const struct mu_devreq *r = &c->spec->reqs[i];
        bool ok = false;

        for (size_t k = 0; k < r->nopts && !ok; k++) {
            int64_t nfree = 0;

            ok = pick_opt(d, nd, &r->opts[k], future, p,
                          why && !k ? &nfree : NULL);
            if (!ok && !k && why) {
                why->class_name = r->opts[0].class_name;
                why->need = r->opts[0].mode == MU_ALLOC_EXACT
                                ? r->opts[0].count
                                : 1;
                why->free = nfree;
            }
        }
        if (!ok)
            return false;
    }
    return true;
}

struct mu_devnode *mu_devices_node(struct mu_devices *d, const char *name)
{
    return list_at(&d->nodes, name);
}

bool mu_devices_fit(const struct mu_devices *d, const struct mu_devdemand *dm,
                    const struct mu_devnode *nd, const char *node,
                    uint32_t node_dims, bool future, struct mu_devfit *why)
{
    struct picks pk, *p = &pk;
    bool ok = true;

    if (why)
        memset(why, 0, sizeof(*why));
    if (dm->why)
        return false;
    p->n = 0;
    for (size_t i = 0; i < dm->n && ok; i++) {
        const struct mu_dclaim *c = entry_claim(d, dm, i);

        if (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u))
            continue; /* the node's allocatable serves it */
        if (!c)
            ok = false;
        else if (c->api_alloc) /* only where the API put its devices */
            ok = !c->api.nresults ||
                 (c->nheld == c->api.nresults && c->node &&
                  !strcmp(c->node, node));
        else if (c->nheld)
            ok = c->node && !strcmp(c->node, node);
        else
            ok = pick_claim(d, nd, c, future, p, why);
    }
    return ok;
}

/* Holds for c (which holds nothing) the devices of node nd its requests
 * pick, first fit; a request that finds none is left short. */
static void plan_claim(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd)
{
    struct picks pk, *p = &pk;

    p->n = 0;
    for (size_t r = 0; r < c->spec->nreqs; r++) {
        const struct mu_devreq *q = &c->spec->reqs[r];

        for (size_t k = 0; k < q->nopts; k++)
            if (pick_opt(d, nd, &q->opts[k], false, p, NULL))
                break;
    }
    for (size_t k = 0; k < p->n; k++)
        hold_add(c, p->v[k]);
}

void mu_devices_take(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = entry_claim(d, dm, i);

        if (!c || dm->c[i].taken ||
            (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u)))
            continue;
        /* the API's allocation is the API's: only its users are counted */
        if (!c->api_alloc && !c->nheld && !c->users)
            plan_claim(d, c, nd);
        c->users++;
        dm->c[i].taken = true;
    }
}

void mu_devices_pipe(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims)
{
    struct picks pk, *p = &pk;

    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = entry_claim(d, dm, i);

        if (!c || c->api_alloc || c->nheld || c->users || c->npiped ||
            (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u)))
            continue;
        p->n = 0;
        for (size_t r = 0; r < c->spec->nreqs; r++)
            for (size_t k = 0; k < c->spec->reqs[r].nopts; k++)
                if (pick_opt(d, nd, &c->spec->reqs[r].opts[k], true, p,
                             NULL))
                    break;
        mu_xgrow((void **)&c->piped, &c->cap_piped, p->n + 1,
                 sizeof(*c->piped));
        for (size_t k = 0; k < p->n; k++) {
            p->v[k]->pipe = c;
            c->piped[c->npiped++] = p->v[k];
        }
    }
}

void mu_devices_unpipe(struct mu_devices *d, struct mu_devdemand *dm)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = entry_claim(d, dm, i);

        if (c)
            pipes_clear(c);
    }
}

void mu_devices_give(struct mu_devices *d, struct mu_devdemand *dm)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = entry_claim(d, dm, i);

        if (!dm->c[i].taken)
            continue;
        dm->c[i].taken = false;
        if (!c || c->users <= 0)
            continue;
        if (--c->users == 0 && !c->api_alloc && c->nheld)
            holds_clear(c);
        if (c->leaving > c->users)
            c->leaving = c->users;
    }
}

void mu_devices_leaving(struct mu_devices *d, struct mu_devdemand *dm,
                        bool on)
{
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = entry_claim(d, dm, i);

        if (!c || !dm->c[i].taken)
            continue;
        c->leaving += on ? 1 : -1;
        if (c->leaving < 0)
            c->leaving = 0;
    }
}

/* ---- counting ---- */

void mu_devices_node_quota(struct mu_devices *d, const char *node,
                           struct mu_resnames *rn, struct mu_res *out)
{
    const struct mu_devnode *nd = mu_map_get(&d->nodes, node);
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
        const char *q = class_quota(d, names[i]);
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
            uint32_t seen = 0;

            if (!dev->usable)
                continue;
            for (size_t j = 0; j < it; j++)
                if (!(seen & (1u << m[j].dim)) &&
                    mu_devsel_match(&m[j].c->sel, &dev->view)) {
                    seen |= 1u << m[j].dim;
                    mu_res_put(out, m[j].dim, out->v[m[j].dim] + 1);
                }
        }
    free(m);
}

void mu_devices_free_count(const struct mu_devices *d,
                           const struct mu_devdemand *dm, int64_t *total,
                           int64_t *nodes, int64_t *best, int64_t *per,
                           const char **class_name)
{
    const struct mu_devopt *o = NULL;
    const struct mu_devclass *c;
    size_t it = 0;
    const char *k;
    void *v;

    *total = *nodes = *best = 0;
    *per = 1;
    *class_name = NULL;
    for (size_t i = 0; i < dm->n && !o; i++) {
        const struct mu_dclaim *cl = entry_claim(d, dm, i);

        if (cl && !cl->nheld && cl->spec->nreqs)
            o = &cl->spec->reqs[0].opts[0];
    }
    if (!o || !(c = mu_map_get(&d->classes, o->class_name)))
        return;
    *class_name = o->class_name;
    *per = o->mode == MU_ALLOC_EXACT ? o->count : 1;
    for (size_t i = 0; i < MU_DEV_COUNT_CACHE; i++) {
        const struct devcount *e = &d->counts->e[i];

        if (e->opt == o && e->hold_gen == d->hold_gen && e->gen == d->gen) {
            *total = e->total;
            *nodes = e->nodes;
            *best = e->best;
            return;
        }
    }
    while (mu_map_next(&d->nodes, &it, &k, &v)) {
        const struct mu_devnode *nd = v;
        int64_t n = 0;

        for (size_t i = 0; i < nd->n; i++)
            for (size_t j = 0; j < nd->v[i]->s.ndevs; j++) {
                const struct mu_cdev *dev = &nd->v[i]->devs[j];

                if (dev->usable && !dev->holder && serves(d, c, o, dev))
                    n++;
            }
        *total += n;
        *nodes += n > 0;
        if (n > *best)
            *best = n;
    }
    {
        struct devcount *e =
            &d->counts->e[d->counts->next++ % MU_DEV_COUNT_CACHE];

        e->opt = o;
        e->hold_gen = d->hold_gen;
        e->gen = d->gen;
        e->total = *total;
        e->nodes = *nodes;
        e->best = *best;
    }
}
