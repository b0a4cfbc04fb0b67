/*
 * reqpool.c - requests shared by every holder of the same one
 * (reqpool.h).
 */
#include "sched/reqpool.h"

#include "common/mu.h"

#include <stdio.h>
#include <stdlib.h>

struct mu_reqpool_ent {
    struct mu_res r;           /* first: a copy's address is its entry's */
    size_t refs;
};

/* r as text: its set, then the value of each dimension in it. */
static void key_of(const struct mu_res *r, char key[MU_REQPOOL_KEY_MAX])
{
    size_t n = (size_t)snprintf(key, MU_REQPOOL_KEY_MAX, "%x",
                                (unsigned)r->set);

    for (uint32_t set = r->set; set; set &= set - 1)
        n += (size_t)snprintf(key + n, MU_REQPOOL_KEY_MAX - n, ":%llx",
                              (unsigned long long)r->v[__builtin_ctz(set)]);
}

void mu_reqpool_init(struct mu_reqpool *p)
{
    mu_map_init(&p->by_key);
}

void mu_reqpool_free(struct mu_reqpool *p)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&p->by_key, &it, NULL, &v))
        free(v);
    mu_map_release(&p->by_key);
}

const struct mu_res *mu_reqpool_get(struct mu_reqpool *p,
                                    const struct mu_res *r)
{
    char key[MU_REQPOOL_KEY_MAX];
    struct mu_reqpool_ent *e;

    key_of(r, key);
    e = mu_map_get(&p->by_key, key);
    if (!e) {
        e = mu_xcalloc(1, sizeof(*e));
        mu_res_zero(&e->r);
        for (uint32_t set = r->set; set; set &= set - 1)
            mu_res_put(&e->r, __builtin_ctz(set), r->v[__builtin_ctz(set)]);
        mu_map_put(&p->by_key, key, e);
    }
    e->refs++;
    return &e->r;
}

void mu_reqpool_put(struct mu_reqpool *p, const struct mu_res *r)
{
    struct mu_reqpool_ent *e = (struct mu_reqpool_ent *)(void *)r;
    char key[MU_REQPOOL_KEY_MAX];

    if (!r || --e->refs)
        return;
    key_of(r, key);
    mu_map_del(&p->by_key, key);
    free(e);
}

size_t mu_reqpool_count(const struct mu_reqpool *p)
{
    return p->by_key.n;
}
