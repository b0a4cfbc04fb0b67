/*
 * map.h - a string-keyed hash map (open addressing, linear probing).
 *
 * Keys are copied in; values are borrowed pointers the map never frees.
 * Iteration order is unspecified: nothing that must be deterministic may
 * depend on it (sort first). Not thread-safe.
 */
#ifndef MU_COMMON_MAP_H
#define MU_COMMON_MAP_H

#include <stddef.h>
#include <stdint.h>

struct mu_map_slot {
    char *key; /* NULL: empty; MU_MAP_TOMB: deleted */
    void *value;
    uint64_t hash;
};

struct mu_map {
    size_t n;     /* live entries */
    size_t used;  /* live + tombstones */
    size_t cap;   /* power of two, or 0 */
    struct mu_map_slot *slots;
};

void mu_map_init(struct mu_map *m);
/* Frees the keys and the table, not the values. */
void mu_map_release(struct mu_map *m);
/* Value for key, or NULL. */
void *mu_map_get(const struct mu_map *m, const char *key);
/* Sets key to value (value must not be NULL); returns the previous value or
 * NULL. */
void *mu_map_put(struct mu_map *m, const char *key, void *value);
/* Removes key; returns its value or NULL. */
void *mu_map_del(struct mu_map *m, const char *key);

uint64_t mu_hash_str(const char *s);

#endif
