/*
 * devplace.c - a pod's claims resolved into a demand, devices matched to
 * it, a node's sums, and the devices placement takes, gives and promises
 * (devices.h, devices_int.h).
 */
#include "sched/devices_int.h"

/* Most devices one fit check may pick (the API allows 32 requests of up
 * to 1024 devices each; beyond this a demand does not fit). */
#define MU_DEV_PICK_MAX 1024

/* ---- demands ---- */


/* Adds n devices of class class_name to quota (out's, while it is
 * resolved), when the class maps to a quota name. */
static void charge(struct mu_devices *d, const char *what,
                   const char *class_name, int64_t n,
                   struct mu_resnames *rn, struct mu_devdemand *out,
                   struct mu_res *quota)
{
    const char *q = mu_dev_class_quota(d, class_name);
    int dim;

    if (!q || n <= 0)
        return;
    dim = mu_resnames_index(rn, q, true);
    if (dim < 0) {
        if (!out->why)
            out->why = mu_xasprintf("%s: too many resource names for %s",
                                    what, q);
        return;
    }
    mu_res_put(quota, dim, quota->v[dim] + n);
    out->quota_set |= 1u << dim;
}

/* The option of spec that allocation result `request` names: "req" for
 * an exactly request, "req/sub" for a firstAvailable choice (the names
 * its options carry, api/dra.h); NULL. */
static const struct mu_devopt *result_opt(const struct mu_claimspec *spec,
                                          const char *request)
{
    for (size_t i = 0; i < spec->nreqs; i++)
        for (size_t k = 0; k < spec->reqs[i].nopts; k++)
            if (spec->reqs[i].opts[k].name &&
                !strcmp(spec->reqs[i].opts[k].name, request))
                return &spec->reqs[i].opts[k];
    return NULL;
}

/* Checks spec against the inventory; adds its quota when charge: an
 * allocated claim (alloc) by the devices its allocation names, each
 * under the class of the request or firstAvailable choice it came from;
 * else each request by its first option, ExactCount by its count, All by
 * the most devices it selects on one node (out->by_slices: that moves
 * with the slices). */
static void demand_spec(struct mu_devices *d, const char *what,
                        const struct mu_claimspec *spec,
                        const struct mu_claim *alloc, bool charge_it,
                        struct mu_resnames *rn, struct mu_devdemand *out,
                        struct mu_res *quota)
{
    if (spec->bad && !out->why)
        out->why = mu_xasprintf("%s: %s", what, spec->bad);
    for (size_t i = 0; i < spec->nreqs; i++) {
        const struct mu_devreq *r = &spec->reqs[i];

        for (size_t k = 0; k < r->nopts; k++) {
            const struct mu_devopt *o = &r->opts[k];
            const struct mu_devclass *c = mu_map_get(&d->classes,
                                                     o->class_name);

            if (!c && !out->why)
                out->why = mu_xasprintf("%s: device class %s not found",
                                        what, o->class_name);
            if (c && c->sel.bad && !out->why)
                out->why = mu_xasprintf("DeviceClass %s: %s", o->class_name,
                                        c->sel.bad);
        }
    }
    if (!charge_it)
        return;
    if (alloc && alloc->allocated && alloc->nresults) {
        for (size_t i = 0; i < alloc->nresults; i++) {
            const struct mu_devopt *o =
                alloc->results[i].request
                    ? result_opt(spec, alloc->results[i].request)
                    : NULL;

            if (o)
                charge(d, what, o->class_name, 1, rn, out, quota);
        }
        return;
    }
    for (size_t i = 0; i < spec->nreqs; i++) {
        const struct mu_devopt *o = &spec->reqs[i].opts[0];

        if (!spec->reqs[i].nopts || !mu_dev_class_quota(d, o->class_name))
            continue;
        if (o->mode == MU_ALLOC_EXACT) {
            charge(d, what, o->class_name, o->count, rn, out, quota);
        } else {
            out->by_slices = true;
            charge(d, what, o->class_name, mu_dev_all_most(d, o), rn, out,
                   quota);
        }
    }
}

/* Where allocated claim c may be used, for a shape's signature: its
 * node, or (it holds devices not bound to one node) the claim itself. */
static void sig_at(struct mu_sb *sig, const struct mu_dclaim *c)
{
    if (c->node || !c->nheld)
        mu_sb_addf(sig, "at:%s;", c->node ? c->node : "");
    else
        mu_sb_addf(sig, "at:~%s;", c->key ? c->key : "");
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
            mu_sb_addf(sig, "x%d:", dim);
            if (c->api_alloc)
                sig_at(sig, c);
            else
                mu_sb_add(sig, "at:;");
            continue;
        }
        free(key);
        /* a claim of the pod's count of devices of the class */
        p = mu_dev_priv_alloc(d);
        p->api.spec.reqs = mu_xcalloc(1, sizeof(*p->api.spec.reqs));
        p->api.spec.nreqs = 1;
        p->api.spec.reqs[0].name = mu_xstrdup(rn->name[dim]);
        p->api.spec.reqs[0].opts = o = mu_xcalloc(1, sizeof(*o));
        p->api.spec.reqs[0].nopts = 1;
        o->name = mu_xstrdup(rn->name[dim]);
        o->class_name = mu_xstrdup(cls->meta.name);
        o->mode = MU_ALLOC_EXACT;
        o->count = pod->req.v[dim];
        mu_dev_claim_spec(d, p, &p->api.spec);
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
    struct mu_res quota;
    size_t nent;

    memset(out, 0, sizeof(*out));
    mu_res_zero(&quota);
    d->resolve_gen++;
    mu_sb_init(&sig);
    /* room for the pod's claims and one entry per extended resource it
     * asks (demand_ext) */
    nent = pod->nclaims + 1 +
           (d->next_classes ? (size_t)__builtin_popcount(pod->req.set & ~7u)
                            : 0);
    out->c = nent <= MU_DEVDEMAND_INLINE ? out->c_in
                                         : mu_xcalloc(nent, sizeof(*out->c));
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

            mu_dev_entry_memo(d, &out->c[out->n], c);
            out->c[out->n++].claim_key = key;
            /* a claim named by resourceClaimName may be shared by any
             * number of pods: it is not charged to each of them */
            demand_spec(d, what, c->spec, &c->api, pc->tmpl != NULL, rn,
                        out, &quota);
            out->shared |= !pc->tmpl;
            free(what);
            if (c->api_alloc)
                sig_at(&sig, c);
            else
                mu_sb_addf(&sig, "%s:%s;", pc->tmpl ? "t" : "c",
                           pc->tmpl ? pc->tmpl : key);
            continue;
        }
        if (pc->tmpl) {
            char *tk = mu_xasprintf("%s/%s", pod->meta.ns, pc->tmpl);
            struct mu_claimtemplate *t = mu_map_get(&d->templates, tk);

            if (t) {
                struct mu_dclaim *p = mu_dev_priv_alloc(d);
                char *what = mu_xasprintf("ResourceClaimTemplate %s", tk);

                mu_dev_claim_spec(d, p, &t->spec);
                out->c[out->n++].priv = p;
                demand_spec(d, what, p->spec, NULL, true, rn, out, &quota);
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
    mu_res_add(&quota, &pod->req); /* with the pod's own request */
    out->qreq = mu_reqpool_get(&d->qreqs, &quota);
    if (out->why)
        mu_sb_add(&sig, "why;");
    out->sig = sig.buf ? sig.buf : mu_xstrdup("");
}

bool mu_devdemand_needed(const struct mu_devices *d, const struct mu_pod *pod)
{
    return pod->nclaims || (d->next_classes && (pod->req.set & ~7u));
}

void mu_devdemand_release(struct mu_devices *d, struct mu_devdemand *dm)
{
    for (size_t i = 0; i < dm->n; i++) {
        free(dm->c[i].claim_key);
        mu_dev_priv_free(d, dm->c[i].priv);
    }
    mu_reqpool_put(&d->qreqs, dm->qreq);
    if (dm->c != dm->c_in)
        free(dm->c);
    free(dm->why);
    free(dm->sig);
    memset(dm, 0, sizeof(*dm));
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

/* Whether dev, held by h (NULL: none), is free (future: or held by a
 * claim whose every user is releasing, and promised to no one). */
static bool dev_free(const struct mu_cdev *dev, const struct mu_dclaim *h,
                     bool future)
{
    if (future && dev->pipe)
        return false; /* promised to a pipelined task */
    return !h || (future && h->users > 0 && h->leaving == h->users);
}

/* A fit check of claim c (one request: c->one) on node entry nd from its
 * sums alone, when they can answer: ExactCount of a class without
 * selectors of the option's own, on a node that reaches no other slice,
 * every device usable and of that class; then *fit. The same answer as
 * pick_in, which a future check (leaving holders, promises) still takes. */
static bool sum_fit(const struct mu_devices *d, const struct mu_dclaim *c,
                    const struct mu_devnode *nd, bool *fit)
{
    if (!nd || nd->nreach || c->one_sel || c->one_mode != MU_ALLOC_EXACT ||
        c->one_count < 1 || c->one_count > MU_DEV_PICK_MAX ||
        c->one_gen != d->gen + 1 || !c->one_class ||
        !mu_dev_sums_serve(d, nd, c->one_class))
        return false;
    *fit = nd->nfree >= c->one_count;
    return true;
}

/* Whether node entry nd (of node `node`) reaches every device c holds. */
static bool reaches_held(const struct mu_dclaim *c,
                         const struct mu_devnode *nd, const char *node)
{
    if (!c->nheld || (c->node && strcmp(c->node, node)))
        return false;
    for (size_t i = 0; i < c->nheld; i++) {
        const struct mu_slice *s = c->held[i]->slice;
        bool ok = s->node != NULL; /* on node: c->node said so */

        for (size_t k = 0; !ok && nd && k < nd->nreach; k++)
            ok = &nd->reach[k]->s == s;
        if (!ok)
            return false;
    }
    return true;
}

/* Picks devices of node nd of class c (and option o's selectors; o NULL:
 * none) into p, count of them for ExactCount, every one for All; false (p
 * unchanged) when the node cannot serve it. */
static bool pick_in(const struct mu_devices *d, const struct mu_devnode *nd,
                    const struct mu_devclass *c, const struct mu_devopt *o,
                    enum mu_alloc_mode mode, int64_t count, bool future,
                    struct picks *p)
{
    size_t mark = p->n;
    int64_t got = 0;
    /* an ExactCount passes over devices that are not free: the held
     * ones before a slice's first_free are not, now, nor in the future
     * while no claim is leaving */
    bool skip = mode == MU_ALLOC_EXACT && (!future || !d->leaving_marks);

    if (!c || !nd)
        return false;
    for (size_t i = 0; i < mu_dev_nd_count(nd); i++) {
        const struct mu_devslice *s = mu_dev_nd_slice(nd, i);

        for (size_t k = skip ? s->first_free : 0; k < s->ndevs; k++) {
            struct mu_cdev *dev = &s->devs[k];

            if (!dev->usable || picked(p, dev) || !mu_dev_serves(d, c, o, dev))
                continue;
            if (!dev_free(dev, s->holders[k], future)) {
                if (mode == MU_ALLOC_ALL)
                    goto fail; /* All wants every matching device */
                continue;
            }
            if (p->n >= MU_DEV_PICK_MAX)
                goto fail;
            p->v[p->n++] = dev;
            if (++got >= count && mode == MU_ALLOC_EXACT)
                return true;
        }
    }
    if (got > 0 && (mode == MU_ALLOC_ALL || got >= count))
        return true;
fail:
    p->n = mark;
    return false;
}

static bool pick_opt(const struct mu_devices *d, const struct mu_devnode *nd,
                     const struct mu_devopt *o, bool future, struct picks *p)
{
    return pick_in(d, nd, mu_dev_opt_class(d, o), o, o->mode, o->count,
                   future, p);
}

/* Picks for every request of claim c on node nd (each its first option
 * that fits) into p; false when one found none: at once when whole (a
 * fit check), else after trying the others (a plan keeps what it found). */
static bool pick_claim(const struct mu_devices *d, const struct mu_devnode *nd,
                       const struct mu_dclaim *c, bool future, bool whole,
                       struct picks *p)
{
    bool all = true;

    if (c->one) { /* its class remembered on the claim, as opt_class does */
        struct mu_dclaim *m = (struct mu_dclaim *)c;

        if (m->one_gen != d->gen + 1) {
            m->one_class = mu_dev_opt_class(d, c->one);
            m->one_gen = d->gen + 1;
        }
        return pick_in(d, nd, c->one_class, c->one_sel ? c->one : NULL,
                       c->one_mode, c->one_count, future, p);
    }
    for (size_t i = 0; i < c->spec->nreqs; i++) {
        const struct mu_devreq *r = &c->spec->reqs[i];
        bool ok = false;

        for (size_t k = 0; k < r->nopts && !ok; k++)
            ok = pick_opt(d, nd, &r->opts[k], future, p);
        if (!ok && whole)
            return false;
        all &= ok;
    }
    return all;
}

void mu_dev_claim_spec(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_claimspec *spec)
{
    const struct mu_devopt *o;

    c->spec = spec;
    c->one = NULL;
    c->one_gen = 0;
    if (spec->nreqs != 1 || spec->reqs[0].nopts != 1)
        return;
    o = &spec->reqs[0].opts[0];
    c->one = o;
    c->one_sel = o->sel.n > 0;
    c->one_count = o->count;
    c->one_mode = o->mode;
    /* its class and selector set's key now, while the spec just decoded
     * is in the cache (the first fit would read it cold) */
    c->one_class = mu_dev_opt_class(d, o);
    c->one_gen = d->gen + 1;
    if (c->one_sel)
        mu_dev_sel_key(d, o);
}

void mu_devices_take_hints(const struct mu_devnode *nd,
                           const void *h[MU_DEV_HINTS])
{
    const struct mu_devslice *s = nd->n ? nd->v[0] : NULL;

    h[0] = s;
    h[1] = s && s->first_free < s->ndevs ? &s->holders[s->first_free] : NULL;
    h[2] = h[1] ? &s->devs[s->first_free] : NULL;
}

/* Whether claim c fits on node entry nd (of node `node`) beside what p
 * picked for the demand's claims before it (alone: it is the only one). */
static bool claim_fits(const struct mu_devices *d, const struct mu_dclaim *c,
                       const struct mu_devnode *nd, const char *node,
                       bool alone, bool future, struct picks *p)
{
    bool ok;

    if (c->api_alloc) /* only where the API put its devices */
        return !c->api.nresults ||
               (c->nheld == c->api.nresults && reaches_held(c, nd, node));
    if (c->nheld)
        return reaches_held(c, nd, node);
    if (!alone || future || !c->one || !sum_fit(d, c, nd, &ok))
        ok = pick_claim(d, nd, c, future, true, p);
    return ok;
}

bool mu_devices_fit_one(const struct mu_devices *d, const struct mu_dclaim *c,
                        const struct mu_devnode *nd, const char *node,
                        bool future)
{
    struct picks pk;

    pk.n = 0;
    return claim_fits(d, c, nd, node, true, future, &pk);
}

bool mu_devices_fit(const struct mu_devices *d, const struct mu_devdemand *dm,
                    const struct mu_devnode *nd, const char *node,
                    uint32_t node_dims, bool future)
{
    struct picks pk, *p = &pk;
    bool ok = true;

    if (dm->why)
        return false;
    p->n = 0;
    for (size_t i = 0; i < dm->n && ok; i++) {
        const struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u))
            continue; /* the node's allocatable serves it */
        ok = c && claim_fits(d, c, nd, node, dm->n == 1, future, p);
    }
    return ok;
}

/* mu_dev_plan_claim when nd's sums answer for c (sum_fit) and it fits:
 * every own device of nd is usable and of c's class, so the first free
 * ones in device order are pick_in's picks; found by the slices' holders
 * alone, reading no device. False (nothing held) otherwise. */
static bool plan_by_sums(const struct mu_devices *d, struct mu_dclaim *c,
                         const struct mu_devnode *nd)
{
    int64_t want;
    bool fit;

    if (!c->one || !sum_fit(d, c, nd, &fit) || !fit)
        return false;
    want = c->one_count;
    for (size_t i = 0; i < nd->n && want > 0; i++) {
        struct mu_devslice *s = nd->v[i];

        for (size_t k = s->first_free; k < s->ndevs && want > 0; k++)
            if (!s->holders[k]) {
                mu_dev_hold_at(c, s, k);
                want--;
            }
    }
    return true;
}

/* Holds for c (which holds nothing) the devices of node nd its requests
 * pick, first fit; a request that finds none is left short. */
void mu_dev_plan_claim(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd)
{
    struct picks pk, *p = &pk;

    c->plan_nd = nd;
    if (plan_by_sums(d, c, nd))
        return;
    p->n = 0;
    pick_claim(d, nd, c, false, false, p);
    for (size_t k = 0; k < p->n; k++)
        mu_dev_hold_add(c, p->v[k]);
}

/* One more user of claim c, placed on nd: a claim of muster's that holds
 * nothing and has no user yet is planned there (the API's allocation is
 * the API's: only its users are counted). */
static void claim_take(struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd)
{
    if (!c->api_alloc && !c->nheld && !c->users)
        mu_dev_plan_claim(d, c, nd);
    c->users++; /* moves when its devices are free (leaving, users) */
    mu_dev_note_reach(d, c);
}

void mu_devices_take(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (!c || dm->c[i].taken ||
            (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u)))
            continue;
        claim_take(d, c, nd);
        dm->c[i].taken = true;
    }
}

void mu_devices_take_one(struct mu_devices *d, struct mu_devdemand *dm,
                         struct mu_dclaim *c, const struct mu_devnode *nd)
{
    d->hold_gen++;
    if (c->users) /* taken already: its pod is its only user */
        return;
    claim_take(d, c, nd);
    dm->c[0].taken = true; /* written, not read: give reads it */
}

void mu_devices_pipe(struct mu_devices *d, struct mu_devdemand *dm,
                     const struct mu_devnode *nd, uint32_t node_dims)
{
    struct picks pk, *p = &pk;

    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (!c || c->api_alloc || c->nheld || c->users || c->npiped ||
            (dm->c[i].ext_dim >= 0 && (node_dims >> dm->c[i].ext_dim & 1u)))
            continue;
        p->n = 0;
        pick_claim(d, nd, c, true, false, p);
        mu_xgrow((void **)&c->piped, &c->cap_piped, p->n + 1,
                 sizeof(*c->piped));
        for (size_t k = 0; k < p->n; k++) {
            p->v[k]->pipe = c;
            c->piped[c->npiped++] = p->v[k];
        }
        mu_dev_note_reach(d, c);
    }
}

void mu_devices_unpipe(struct mu_devices *d, struct mu_devdemand *dm)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (c) {
            mu_dev_note_reach(d, c);
            mu_dev_pipes_clear(c);
        }
    }
}

/* c's leaving count, summed in d->leaving_marks. */
static void set_leaving(struct mu_devices *d, struct mu_dclaim *c, int v)
{
    d->leaving_marks += v - c->leaving;
    c->leaving = v;
}

void mu_devices_give(struct mu_devices *d, struct mu_devdemand *dm)
{
    d->hold_gen++;
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (!dm->c[i].taken)
            continue;
        dm->c[i].taken = false;
        if (!c || c->users <= 0)
            continue;
        mu_dev_note_reach(d, c);
        if (--c->users == 0 && !c->api_alloc && c->nheld)
            mu_dev_holds_clear(c);
        if (c->leaving > c->users)
            set_leaving(d, c, c->users);
    }
}

void mu_devices_leaving(struct mu_devices *d, struct mu_devdemand *dm,
                        bool on)
{
    for (size_t i = 0; i < dm->n; i++) {
        struct mu_dclaim *c = mu_dev_entry_claim(d, dm, i);

        if (!c || !dm->c[i].taken)
            continue;
        mu_dev_note_reach(d, c);
        set_leaving(d, c, MU_MAX(0, c->leaving + (on ? 1 : -1)));
    }
}

