/* Where the inventory keeps what placement reads (sched/devices.h,
 * common/slab.h): a pod's private claim from the inventory's slab, its
 * place reused empty; and a node's take hints, where its next take reads
 * (mu_devices_take_hints). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "sched/cluster.h"
#include "sched/cluster_dra.h"
#include "test_dra_fixture.h"

/* Node n1 with one slice of ndevs devices, and template "one" of one
 * device. */
static struct mu_cnode *n1_with_devices(int ndevs)
{
    template_("one", ONE);
    slice("s1", "n1", "p1", 0, 1, ndevs, "H100");
    return mu_cluster_node(&c, "n1");
}

/* A removed pod's private claim gives its place to the next pod's, which
 * starts empty: it holds nothing, and the device the first held is free. */
START_TEST(test_a_private_claims_place_is_reused_empty)
{
    struct mu_task *a, *b;
    struct mu_dclaim *first;
    struct mu_cnode *n1 = n1_with_devices(2);
    const struct mu_cdev *dv = mu_devices_node(&c.dev, "n1")->v[0]->devs;

    a = pod("a", TMPL("one"), "{}");
    first = a->dd->c[0].priv;
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(dv[0].holder, first);
    ck_assert_uint_eq(first->nheld, 1);
    mu_cluster_remove_task(&c, a);
    ck_assert_ptr_null(dv[0].holder);
    b = pod("b", TMPL("one"), "{}");
    ck_assert_ptr_eq(b->dd->c[0].priv, first);
    ck_assert_uint_eq(first->nheld, 0);
    ck_assert_int_eq(first->users, 0);
    ck_assert(fits(b, "n1"));
    mu_task_place(&c, b, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(dv[0].holder, first);
    ck_assert_int_eq(held_on("n1"), 1);
}
END_TEST

/* A node's take hints name where its next take reads (its slice, the
 * first free device and the next), follow each take, and follow the slice
 * when it is replaced. */
START_TEST(test_take_hints_follow_takes_and_slices)
{
    struct mu_task *a;
    struct mu_cnode *n1 = n1_with_devices(3);
    const struct mu_devslice *s = mu_devices_node(&c.dev, "n1")->v[0];

    ck_assert_ptr_eq(n1->dev_hint[0], s);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->devs[0]);
    ck_assert_ptr_eq(n1->dev_hint[2], &s->devs[1]);
    a = pod("a", TMPL("one"), "{}");
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->devs[1]);
    ck_assert_ptr_eq(n1->dev_hint[2], &s->devs[2]);
    /* a new generation of the pool: the hints name the new slice */
    slice("s1", "n1", "p1", 1, 1, 3, "H100");
    s = mu_devices_node(&c.dev, "n1")->v[0];
    ck_assert_ptr_eq(n1->dev_hint[0], s);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->devs[s->first_free]);
    /* a node without slices has none */
    ck_assert_ptr_null(mu_cluster_node(&c, "n2")->dev_hint[0]);
    ck_assert_ptr_null(mu_cluster_node(&c, "n2")->dev_hint[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dra_layout");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_a_private_claims_place_is_reused_empty);
    tcase_add_test(tc, test_take_hints_follow_takes_and_slices);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
