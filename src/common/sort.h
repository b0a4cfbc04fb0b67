/*
 * sort.h - a stable merge sort that passes a context to its comparator
 * (qsort has none, and qsort_r is not C11). Stable, so equal elements keep
 * their input order: nothing depends on the C library's qsort algorithm.
 */
#ifndef MU_COMMON_SORT_H
#define MU_COMMON_SORT_H

#include <stddef.h>

/* Sorts n pointers in place; cmp(a, b, ctx) < 0 puts a first. */
void mu_sort_ptrs(void **v, size_t n,
                  int (*cmp)(const void *a, const void *b, void *ctx),
                  void *ctx);

#endif
