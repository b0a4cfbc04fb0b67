/*
 * devholds.c - which claim holds a device, and which pipelined claim is
 * promised it (devices_int.h).
 */
#include "sched/devices_int.h"

/* ---- holds ---- */

void mu_dev_hold_drop(struct mu_dclaim *c, struct mu_cdev *dev)
{
    size_t at;
    struct mu_devslice *s = mu_dev_slice_of(dev, &at);

    for (size_t i = 0; i < c->nheld; i++)
        if (c->held[i] == dev) {
            memmove(&c->held[i], &c->held[i + 1],
                    (c->nheld - i - 1) * sizeof(*c->held));
            c->nheld--;
            break;
        }
    /* the node of a device still held (c->node may point into the
     * dropped device's slice, which may be about to go) */
    c->node = NULL;
    for (size_t i = 0; i < c->nheld && !c->node; i++)
        c->node = c->held[i]->slice->node;
    if (s->holders[at] && s->nd)
        s->nd->nfree++;
    s->holders[at] = NULL;
    if (at < s->first_free)
        s->first_free = at;
}

void mu_dev_hold_at(struct mu_dclaim *c, struct mu_devslice *s, size_t at)
{
    struct mu_cdev *dev = &s->devs[at]; /* its address: not read */

    if (s->holders[at])
        mu_dev_hold_drop(s->holders[at], dev);
    if (c->nheld >= c->cap_held) /* (the first fits in held_one) */
        mu_xgrow_inline((void **)&c->held, &c->cap_held, c->nheld + 1,
                        sizeof(*c->held), &c->held_one);
    c->held[c->nheld++] = dev;
    if (s->node) /* a device not bound to one node leaves it */
        c->node = s->node;
    s->holders[at] = c;
    if (s->nd)
        s->nd->nfree--;
    while (s->first_free < s->ndevs && s->holders[s->first_free])
        s->first_free++;
}

void mu_dev_hold_add(struct mu_dclaim *c, struct mu_cdev *dev)
{
    size_t at;
    struct mu_devslice *s = mu_dev_slice_of(dev, &at);

    mu_dev_hold_at(c, s, at);
}

static bool claim_unbound(const struct mu_dclaim *c)
{
    for (size_t i = 0; i < c->nheld; i++)
        if (!c->held[i]->slice->node)
            return true;
    for (size_t i = 0; i < c->npiped; i++)
        if (!c->piped[i]->slice->node)
            return true;
    return false;
}

void mu_dev_note_reach(struct mu_devices *d, const struct mu_dclaim *c)
{
    if (d->unbound.n && claim_unbound(c))
        d->reach_holds++;
}

void mu_dev_holds_clear(struct mu_dclaim *c)
{
    while (c->nheld)
        mu_dev_hold_drop(c, c->held[c->nheld - 1]);
}

void mu_dev_pipe_drop(struct mu_dclaim *c, struct mu_cdev *dev)
{
    for (size_t i = 0; i < c->npiped; i++)
        if (c->piped[i] == dev) {
            c->piped[i] = c->piped[--c->npiped];
            break;
        }
    dev->pipe = NULL;
}

void mu_dev_pipes_clear(struct mu_dclaim *c)
{
    for (size_t i = 0; i < c->npiped; i++)
        if (c->piped[i]->pipe == c)
            c->piped[i]->pipe = NULL;
    c->npiped = 0;
}

/* Forgets the device keys c waits for. */
void mu_dev_want_clear(struct mu_devices *d, struct mu_dclaim *c)
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

/* What c owns and holds, let go (not c itself). */
static void claim_clear(struct mu_devices *d, struct mu_dclaim *c)
{
    mu_dev_want_clear(d, c);
    d->leaving_marks -= c->leaving;
    mu_dev_holds_clear(c);
    mu_dev_pipes_clear(c);
    if (c->held != &c->held_one)
        free(c->held);
    free(c->piped);
    free(c->key);
    mu_claim_release(&c->api);
}

void mu_dev_claim_free(struct mu_devices *d, struct mu_dclaim *c)
{
    if (!c)
        return;
    claim_clear(d, c);
    free(c);
}

void mu_dev_priv_free(struct mu_devices *d, struct mu_dclaim *c)
{
    if (!c)
        return;
    claim_clear(d, c);
    mu_slab_put(&d->priv_slab, c);
}
