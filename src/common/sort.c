#include "common/sort.h"

#include "common/mu.h"

static void merge(void **v, void **tmp, size_t lo, size_t mid, size_t hi,
                  int (*cmp)(const void *, const void *, void *), void *ctx)
{
    size_t i = lo, j = mid, k = lo;

    while (i < mid && j < hi)
        tmp[k++] = cmp(v[j], v[i], ctx) < 0 ? v[j++] : v[i++];
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < hi)
        tmp[k++] = v[j++];
    memcpy(v + lo, tmp + lo, (hi - lo) * sizeof(*v));
}

void mu_sort_ptrs(void **v, size_t n,
                  int (*cmp)(const void *a, const void *b, void *ctx),
                  void *ctx)
{
    void **tmp;

    if (n < 2)
        return;
    tmp = mu_xmalloc(n * sizeof(*tmp));
    for (size_t w = 1; w < n; w *= 2)
        for (size_t lo = 0; lo + w < n; lo += 2 * w)
            merge(v, tmp, lo, lo + w, MU_MIN(lo + 2 * w, n), cmp, ctx);
    free(tmp);
}
