/*
 * slab.c - places of one fixed size, many at a time (slab.h).
 */
#include "common/slab.h"

#include <string.h>

#include "common/mu.h"

void mu_slab_init(struct mu_slab *s, size_t size, size_t per)
{
    memset(s, 0, sizeof(*s));
    if (size < sizeof(void *))
        size = sizeof(void *);
    s->size = (size + 63) / 64 * 64;
    s->per = per ? per : 1;
}

void mu_slab_release(struct mu_slab *s)
{
    for (size_t i = 0; i < s->nblocks; i++)
        free(s->blocks[i]);
    free(s->blocks);
    memset(s, 0, sizeof(*s));
}

void *mu_slab_get(struct mu_slab *s)
{
    void *p = s->free;

    if (p) {
        memcpy(&s->free, p, sizeof(s->free));
        memset(p, 0, s->size);
        return p;
    }
    if (!s->nblocks || s->used == s->per) {
        s->blocks = mu_xrealloc(s->blocks,
                                (s->nblocks + 1) * sizeof(*s->blocks));
        s->blocks[s->nblocks++] = mu_xcalloc_lines(s->per, s->size);
        s->used = 0;
    }
    return (char *)s->blocks[s->nblocks - 1] + s->used++ * s->size;
}

void mu_slab_put(struct mu_slab *s, void *p)
{
    if (!p)
        return;
    memcpy(p, &s->free, sizeof(s->free));
    s->free = p;
}
