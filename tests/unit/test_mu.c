/* The allocation helpers of common/mu.h: an array whose first element
 * lives in its owner (mu_xgrow_inline); blocks on cache lines
 * (mu_xcalloc_lines); and places of one size from slabs
 * (common/slab.h). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mu.h"
#include "common/slab.h"

struct owner {
    int *v;
    size_t n, cap;
    int one;
};

static void add(struct owner *o, int x)
{
    mu_xgrow_inline((void **)&o->v, &o->cap, o->n + 1, sizeof(*o->v),
                    &o->one);
    o->v[o->n++] = x;
}

START_TEST(test_first_element_stays_in_its_owner)
{
    struct owner o = {0};

    add(&o, 7);
    ck_assert_ptr_eq(o.v, &o.one);
    ck_assert_uint_eq(o.cap, 1);
    ck_assert_int_eq(o.one, 7);
}
END_TEST

START_TEST(test_second_element_moves_all_to_the_heap)
{
    struct owner o = {0};

    for (int i = 0; i < 20; i++) {
        add(&o, 100 + i);
        for (int k = 0; k <= i; k++)
            ck_assert_int_eq(o.v[k], 100 + k);
    }
    ck_assert_ptr_ne(o.v, &o.one);
    ck_assert_uint_ge(o.cap, 20);
    ck_assert_uint_eq(o.n, 20);
    free(o.v);
}
END_TEST

START_TEST(test_room_enough_changes_nothing)
{
    struct owner o = {0};
    int *was;

    add(&o, 1);
    add(&o, 2);
    was = o.v;
    ck_assert_uint_eq(o.cap, 8);
    for (int i = 3; i <= 8; i++)
        add(&o, i);
    ck_assert_ptr_eq(o.v, was);
    ck_assert_int_eq(o.v[7], 8);
    free(o.v);
}
END_TEST

START_TEST(test_lines_are_aligned_and_zeroed)
{
    for (size_t n = 1; n < 20; n += 3) {
        unsigned char *p = mu_xcalloc_lines(n, 64);

        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        for (size_t i = 0; i < n * 64; i++)
            ck_assert_uint_eq(p[i], 0);
        free(p);
    }
    free(mu_xcalloc_lines(0, 0)); /* one line, like mu_xcalloc's one byte */
    free(mu_xcalloc_lines(3, 100)); /* not a multiple of 64: rounded up */
}
END_TEST

/* A slab's places are line-aligned, side by side in a block, zeroed when
 * given (also when given again after use), given back last-first, and a
 * new block starts when one is full. */
START_TEST(test_slab_places_are_packed_reused_and_zeroed)
{
    struct mu_slab s;
    unsigned char *p[5], *q;

    mu_slab_init(&s, 100, 2); /* 100 bytes: a place of 128 */
    ck_assert_uint_eq(s.size, 128);
    for (int i = 0; i < 5; i++) {
        p[i] = mu_slab_get(&s);
        ck_assert_uint_eq((uintptr_t)p[i] % 64, 0);
        memset(p[i], 0xab, 100);
    }
    ck_assert_ptr_eq(p[1], p[0] + 128); /* two a block */
    ck_assert_uint_eq(s.nblocks, 3);
    mu_slab_put(&s, p[1]);
    mu_slab_put(&s, p[3]);
    mu_slab_put(&s, NULL); /* nothing */
    q = mu_slab_get(&s);
    ck_assert_ptr_eq(q, p[3]);
    for (int i = 0; i < 128; i++)
        ck_assert_uint_eq(q[i], 0);
    ck_assert_ptr_eq(mu_slab_get(&s), p[1]);
    ck_assert_ptr_eq(mu_slab_get(&s), p[4] + 128); /* then the last block */
    ck_assert_uint_eq(s.nblocks, 3);
    mu_slab_release(&s);
    mu_slab_init(&s, 1, 0); /* a pointer's room at least, one a block */
    ck_assert_uint_eq(s.size, 64);
    ck_assert_uint_eq(s.per, 1);
    p[0] = mu_slab_get(&s);
    p[1] = mu_slab_get(&s);
    ck_assert_uint_eq(s.nblocks, 2);
    mu_slab_release(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mu");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_first_element_stays_in_its_owner);
    tcase_add_test(tc, test_second_element_moves_all_to_the_heap);
    tcase_add_test(tc, test_room_enough_changes_nothing);
    tcase_add_test(tc, test_lines_are_aligned_and_zeroed);
    tcase_add_test(tc, test_slab_places_are_packed_reused_and_zeroed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
