/*
 * devices_int.h - what the files of the device inventory share
 * (sched/devices.c: the inventory; devholds.c: holds and promises;
 * devplace.c: demands, matching and placement). Not for other files: the
 * contract is devices.h.
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

/* The most devices an All option selects on one node (devplace.c); like
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
/* Frees c and what it holds; d may be NULL for a private claim. */
void mu_dev_claim_free(struct mu_devices *d, struct mu_dclaim *c);

/* Sets c->spec and what a fit check reads of it (mu_dclaim.one, its class
 * as the inventory d has it now). */
void mu_dev_claim_spec(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_claimspec *spec);

/* Placement (devplace.c): fills the class memo of s's devices for every
 * class of d (mu_cdev.cls_ok), while the slice just decoded is in the
 * cache: a cycle then reads no device's attributes. */
void mu_dev_memo_classes(const struct mu_devices *d, struct mu_devslice *s);
/* Makes node entry nd's sums again (struct mu_devnode): its free devices,
 * whether all are usable, and the classes that select every one of them
 * (their memo filled on the way). */
void mu_dev_node_sum(const struct mu_devices *d, struct mu_devnode *nd);

/* Placement (devplace.c): holds for c (which holds nothing) the devices
 * of node nd its requests pick, first fit; a request that finds none is
 * left short. */
void mu_dev_plan_claim(const struct mu_devices *d, struct mu_dclaim *c,
                       const struct mu_devnode *nd);

#endif
