#include "common/map.h"

#include "common/mu.h"
#include "common/sort.h"

static char tomb_key;
#define MU_MAP_TOMB (&tomb_key)

uint64_t mu_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void mu_map_init(struct mu_map *m)
{
    m->n = m->used = m->cap = 0;
    m->slots = NULL;
}

void mu_map_release(struct mu_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != MU_MAP_TOMB)
            free(m->slots[i].key);
    free(m->slots);
    mu_map_init(m);
}

static struct mu_map_slot *find(const struct mu_map *m, const char *key,
                                uint64_t h)
{
    size_t mask = m->cap - 1;

    if (!m->cap)
        return NULL;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct mu_map_slot *s = &m->slots[i];

        if (!s->key)
            return NULL;
        if (s->key != MU_MAP_TOMB && s->hash == h && !strcmp(s->key, key))
            return s;
    }
}

void *mu_map_get(const struct mu_map *m, const char *key)
{
    struct mu_map_slot *s = find(m, key, mu_hash_str(key));

    return s ? s->value : NULL;
}

static void rehash(struct mu_map *m, size_t cap)
{
    struct mu_map_slot *old = m->slots;
    size_t ocap = m->cap;

    m->slots = mu_xcalloc(cap, sizeof(*m->slots));
    m->cap = cap;
    m->used = m->n;
    for (size_t i = 0; i < ocap; i++) {
        struct mu_map_slot *s = &old[i];
        size_t j;

        if (!s->key || s->key == MU_MAP_TOMB)
            continue;
        for (j = s->hash & (cap - 1); m->slots[j].key; j = (j + 1) & (cap - 1))
            ;
        m->slots[j] = *s;
    }
    free(old);
}

void *mu_map_put(struct mu_map *m, const char *key, void *value)
{
    uint64_t h = mu_hash_str(key);
    struct mu_map_slot *s = find(m, key, h);
    size_t i;

    if (s) {
        void *prev = s->value;

        s->value = value;
        return prev;
    }
    if ((m->used + 1) * 4 >= m->cap * 3)
        rehash(m, m->cap ? (m->n * 2 >= m->cap / 2 ? m->cap * 2 : m->cap)
                         : 16);
    for (i = h & (m->cap - 1); m->slots[i].key && m->slots[i].key != MU_MAP_TOMB;
         i = (i + 1) & (m->cap - 1))
        ;
    if (!m->slots[i].key)
        m->used++;
    m->slots[i].key = mu_xstrdup(key);
    m->slots[i].value = value;
    m->slots[i].hash = h;
    m->n++;
    return NULL;
}

void *mu_map_del(struct mu_map *m, const char *key)
{
    struct mu_map_slot *s = find(m, key, mu_hash_str(key));
    void *v;

    if (!s)
        return NULL;
    v = s->value;
    free(s->key);
    s->key = MU_MAP_TOMB;
    s->value = NULL;
    m->n--;
    return v;
}

bool mu_map_next(const struct mu_map *m, size_t *it, const char **key,
                 void **value)
{
    for (; *it < m->cap; (*it)++) {
        const struct mu_map_slot *s = &m->slots[*it];

        if (!s->key || s->key == MU_MAP_TOMB)
            continue;
        if (key)
            *key = s->key;
        if (value)
            *value = s->value;
        (*it)++;
        return true;
    }
    return false;
}

static int key_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(a, b);
}

const char **mu_map_sorted_keys(const struct mu_map *m, size_t *n)
{
    const char **keys;
    const char *k;
    size_t it = 0, i = 0;

    *n = 0;
    if (!m->n)
        return NULL;
    keys = mu_xmalloc(m->n * sizeof(*keys));
    while (mu_map_next(m, &it, &k, NULL))
        keys[i++] = k;
    mu_sort_ptrs((void **)keys, i, key_cmp, NULL);
    *n = i;
    return keys;
}
