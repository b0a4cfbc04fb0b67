/*
 * devices_int.h - what the files of the device inventory share
 * (sched/devices.c: the inventory; devholds.c: holds and promises;
 * devsel.c: what a class or option selects, and a node's sums;
 * devplace.c: demands, fits and placement; devcount.c: quotas and free
 * counts). Not for other files: the contract is devices.h.
 */
#ifndef MU_SCHED_DEVICES_INT_H
#define MU_SCHED_DEVICES_INT_H

#include "sched/devices.h"

/* The answers mu_devices_free_count remembers. */
struct devcount {
    const void *opt;          /* the option's class when it has no
                                 selectors, else its selector set's key
                                 (selkeys), else the option */
    uint64_t hold_gen, gen, resolve_gen;
    int64_t total, nodes, best, unplanned;
};

/* The most devices an All option selects on one node (devcount.c); like
 * devcount, keyed on hold_gen too, which every slice, claim and template
 * put or deleted moves (an option's address may be reused after). */
struct devmost {
    const void *opt;          /* as devcount's */
    uint64_t gen, hold_gen;
    int64_t most;
};

/* Most selector sets (class and CEL sources of an option with selectors
 * of its own) the memos below key on by their text: every claim made
 * from one template has an option of its own, with the same selectors.
 * Beyond it, such an option is its own key. */
#define MU_DEV_SELKEYS_MAX 4096

struct mu_devcounts {
    struct mu_map selkeys;     /* text -> its own copy (the key), owned */
    struct devcount e[MU_DEV_COUNT_CACHE];
    unsigned next;
    struct devmost m[MU_DEV_COUNT_CACHE];
    unsigned next_most;
};

/* Holds (devholds.c): dev held by c, moved from any other holder; taken
 * back; all of c's; the promises to pipelined claims (mu_cdev.pipe). */
void mu_dev_hold_add(struct mu_dclaim *c, struct mu_cdev *dev);
/* mu_dev_hold_add of device at of slice s, without reading the device's
 * line (s->holders and s->nd's nfree are what it writes). */
void mu_dev_hold_at(struct mu_dclaim *c, struct mu_devslice *s, size_t at);
void mu_dev_hold_drop(struct mu_dclaim *c, struct mu_cdev *dev);
void mu_dev_holds_clear(struct mu_dclaim *c);
/* Moves d->reach_holds when c holds or is promised a device of a slice
 * not bound to one node: what c does next (take, free, promise, leave)
 * changes every node that reaches it. */
void mu_dev_note_reach(struct mu_devices *d, const struct mu_dclaim *c);
void mu_dev_pipe_drop(struct mu_dclaim *c, struct mu_cdev *dev);
void mu_dev_pipes_clear(struct mu_dclaim *c);
/* Forgets the device keys c waits for (d->wanted). */
void mu_dev_want_clear(struct mu_devices *d, struct mu_dclaim *c);
/* Frees claim c of the inventory d and what it holds. */
void mu_dev_claim_free(struct mu_devices *d, struct mu_dclaim *c);
/* A private claim's place, zeroed and line-aligned (d->priv_slab); and
 * its return, with what it holds, for reuse (c may be NULL). */
static inline struct mu_dclaim *mu_dev_priv_alloc(struct mu_devices *d)
{
    return mu_slab_get(&d->priv_slab);
}
void mu_dev_priv_free(struct mu_devices *d, struct mu_dclaim *c);

/* Sets c->spec and what a fit check reads of it (mu_dclaim.one, its class
 * as the inventory d has it now). */
void mu_dev_claim_spec(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_claimspec *spec);

/* Fills the class memo of s's devices for every class of d that has a
 * memo bit (mu_cdev.cls_ok), while the slice just decoded is in the
 * cache: a cycle then reads no device's attributes (devsel.c). */
void mu_dev_memo_classes(const struct mu_devices *d, struct mu_devslice *s);
/* Makes node entry nd's sums again (struct mu_devnode): its free devices,
 * whether all are usable, and the classes that select every one of them
 * (their memo filled on the way) (devsel.c). */
void mu_dev_node_sum(const struct mu_devices *d, struct mu_devnode *nd);
/* Whether nd's sums answer for class c (c has a memo bit, selects every
 * own device of nd, every one usable): then nd->nfree is what c finds
 * free among them. Makes the sums again when stale (the const reader
 * fills them, as it does the memos). */
static inline bool mu_dev_sums_serve(const struct mu_devices *d,
                                     const struct mu_devnode *nd,
                                     const struct mu_devclass *c)
{
    if (c->memo_bit < 0)
        return false;
    if (!nd->sum_ok || nd->sum_gen != d->gen + 1)
        mu_dev_node_sum(d, (struct mu_devnode *)nd);
    return nd->all_usable && (nd->all_cls >> c->memo_bit & 1u);
}

/* Placement (devplace.c): holds for c (which holds nothing) the devices
 * of node nd its requests pick, first fit; a request that finds none is
 * left short. */
void mu_dev_plan_claim(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd);

/* ---- what several files match and count with (devsel.c, and inline:
 * placement reads them for every device it looks at) ---- */

/* The quota name a class counts under (the config's mapping, else its
 * extendedResourceName), or NULL. */
const char *mu_dev_class_quota(const struct mu_devices *d, const char *name);
/* The key of o's selector set (o has selectors): their class and CEL
 * sources' text, interned in the inventory (the claims of one template
 * share it), or o itself once MU_DEV_SELKEYS_MAX sets are; remembered on
 * o. */
const void *mu_dev_sel_key(const struct mu_devices *d,
                           const struct mu_devopt *o);
/* What the free-count memos key option o (of class c) on: the class when
 * o has no selectors of its own, else its selector set's key. */
const void *mu_dev_count_key(const struct mu_devices *d,
                             const struct mu_devclass *c,
                             const struct mu_devopt *o);
/* The most usable devices option o selects on one node (an All request
 * takes every one of them on the node it lands on); remembered per class
 * or selector set (the pods of one template share it) while the
 * inventory and its holds stay (devcount.c). */
int64_t mu_dev_all_most(const struct mu_devices *d, const struct mu_devopt *o);

/* Remembers c (found or NULL) as the claim entry e names. */
static inline void mu_dev_entry_memo(const struct mu_devices *d,
                                     struct mu_devdemand_entry *e,
                                     struct mu_dclaim *c)
{
    e->memo = c;
    e->memo_gen = (c ? d->claim_del_gen : d->claim_add_gen) + 1;
}

/* The claim entry i of dm is: its private claim, or the inventory's that
 * its key names (remembered: mu_devdemand_entry.memo), or NULL. */
static inline struct mu_dclaim *mu_dev_entry_claim(
    const struct mu_devices *d, const struct mu_devdemand *dm, size_t i)
{
    struct mu_devdemand_entry *e = (struct mu_devdemand_entry *)&dm->c[i];

    if (e->priv)
        return e->priv;
    if (e->memo_gen != (e->memo ? d->claim_del_gen : d->claim_add_gen) + 1)
        mu_dev_entry_memo(d, e, mu_map_get(&d->claims, e->claim_key));
    return e->memo;
}

/* The slices a node entry serves from: its own, then those it reaches. */
static inline size_t mu_dev_nd_count(const struct mu_devnode *nd)
{
    return (size_t)nd->n + nd->nreach;
}

static inline struct mu_devslice *mu_dev_nd_slice(const struct mu_devnode *nd,
                                                  size_t i)
{
    return i < nd->n ? nd->v[i] : nd->reach[i - nd->n];
}

/* Whether class c selects dev, remembered on the device in c's bit
 * (classes change only with the inventory's gen): most requests name a
 * class and nothing else. */
static inline bool mu_dev_class_ok(const struct mu_devices *d,
                                   const struct mu_devclass *c,
                                   struct mu_cdev *dev)
{
    struct mu_cel_device v;
    uint32_t bit;
    bool ok;

    if (dev->memo_gen != d->gen + 1) {
        dev->memo_gen = d->gen + 1;
        dev->cls_known = 0;
        dev->cls_ok = 0;
    }
    if (c->memo_bit < 0) {
        v = mu_cdev_view(dev);
        return mu_devsel_match(&c->sel, &v);
    }
    bit = 1u << c->memo_bit;
    if (dev->cls_known & bit)
        return (dev->cls_ok & bit) != 0;
    v = mu_cdev_view(dev);
    ok = mu_devsel_match(&c->sel, &v);
    dev->cls_known |= bit;
    if (ok)
        dev->cls_ok |= bit;
    return ok;
}

/* The class o names (NULL when there is none), remembered on o: classes
 * change only with the inventory's gen. */
static inline const struct mu_devclass *
mu_dev_opt_class(const struct mu_devices *d, const struct mu_devopt *o)
{
    struct mu_devopt *m = (struct mu_devopt *)o;

    if (m->memo_gen != d->gen + 1) {
        m->memo_class = mu_map_get(&d->classes, o->class_name);
        m->memo_gen = d->gen + 1;
    }
    return m->memo_class;
}

/* Whether class c and option o (NULL: one without selectors) select
 * dev. */
static inline bool mu_dev_serves(const struct mu_devices *d,
                                 const struct mu_devclass *c,
                                 const struct mu_devopt *o,
                                 const struct mu_cdev *dev)
{
    struct mu_cdev *m = (struct mu_cdev *)dev;
    struct mu_cel_device v;
    const void *k;
    bool ok;

    if (!mu_dev_class_ok(d, c, m))
        return false;
    if (!o || !o->sel.n)
        return true;
    /* the option's own selectors: remembered per selector set (a device's
     * attributes never change) unless the set is not interned */
    k = mu_dev_sel_key(d, o);
    if (k != o && m->memo_sel == k)
        return m->memo_sel_ok;
    v = mu_cdev_view(dev);
    ok = mu_devsel_match(&o->sel, &v);
    if (k != o) {
        m->memo_sel = k;
        m->memo_sel_ok = ok;
    }
    return ok;
}

#endif
