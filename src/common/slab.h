/*
 * slab.h - places of one fixed size, made many at a time, side by side.
 *
 * For objects a hot loop reads in no order (a cycle's nodes, the pods'
 * private claims): made one by one, they sit between whatever else was
 * allocated meanwhile and span more pages; from a slab they are packed.
 * A place given back is given again first. Places are line-aligned and
 * zeroed when given; they live until the slab is released (nothing goes
 * back to the allocator before). Not thread-safe.
 */
#ifndef MU_COMMON_SLAB_H
#define MU_COMMON_SLAB_H

#include <stddef.h>

struct mu_slab {
    size_t size;        /* a place's size: the object's, made a multiple
                           of 64 (so each is line-aligned) */
    size_t per;         /* places per block */
    size_t nblocks;
    void **blocks;      /* owned */
    size_t used;        /* places given of the last block */
    void *free;         /* places given back: each holds the next one's
                           address in its first bytes */
};

/* Places of size bytes (at least a pointer's), per of them a block. */
void mu_slab_init(struct mu_slab *s, size_t size, size_t per);
/* Frees every block: every place given is gone. */
void mu_slab_release(struct mu_slab *s);
/* A zeroed place (never NULL: a failed allocation exits, as mu_xcalloc). */
void *mu_slab_get(struct mu_slab *s);
/* Gives p (from s, or NULL) back for reuse. */
void mu_slab_put(struct mu_slab *s, void *p);

#endif
