/*
 * map.h - a string-keyed hash map (open addressing, linear probing).
 *
 * Keys are copied in; values are borrowed pointers the map never frees.
 * Iteration order is unspecified: nothing that must be deterministic may
 * depend on it (sort first). Not thread-safe.
 */
#ifndef MU_COMMON_MAP_H
#define MU_COMMON_MAP_H

#include <stdbool.h>
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

/*
 * Iteration: `size_t it = 0; const char *k; void *v;
 * while (mu_map_next(m, &it, &k, &v)) ...` visits every live entry once,
 * in table order (unspecified: see above). *it is the cursor, 0 to start.
 * The map may not be changed during the walk, except that the entry just
 * returned may be removed with mu_map_del (removal leaves a tombstone and
 * never moves another entry). key and value (either may be NULL) are set
 * when it returns true.
 */
bool mu_map_next(const struct mu_map *m, size_t *it, const char **key,
                 void **value);

/*
 * The keys of m in strcmp order, for walks whose order must be
 * deterministic: returns a malloc'd array of *n borrowed key pointers
 * (valid until m changes), or NULL when m is empty. The caller frees the
 * array (not the keys).
 */
const char **mu_map_sorted_keys(const struct mu_map *m, size_t *n);

uint64_t mu_hash_str(const char *s);

#endif
