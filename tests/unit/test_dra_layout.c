/* Where the inventory keeps what placement reads (sched/devices.h,
 * common/slab.h, sched/reqpool.h): a pod's private claim from the
 * inventory's slab, its place reused empty; a node's take hints, where its
 * next take reads (mu_devices_take_hints); and the queue-side requests
 * pods that ask the same share. */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched/cluster.h"
#include "sched/cluster_dra.h"
#include "sched/reqpool.h"
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
    ck_assert_ptr_eq(mu_dev_holder(&dv[0]), first);
    ck_assert_uint_eq(first->nheld, 1);
    mu_cluster_remove_task(&c, a);
    ck_assert_ptr_null(mu_dev_holder(&dv[0]));
    b = pod("b", TMPL("one"), "{}");
    ck_assert_ptr_eq(b->dd->c[0].priv, first);
    ck_assert_uint_eq(first->nheld, 0);
    ck_assert_int_eq(first->users, 0);
    ck_assert(fits(b, "n1"));
    mu_task_place(&c, b, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(mu_dev_holder(&dv[0]), first);
    ck_assert_int_eq(held_on("n1"), 1);
}
END_TEST

/* A node's take hints name where its next take reads (its slice, the
 * slice's holders from the first free device on, and that device), follow
 * each take, and follow the slice when it is replaced. */
START_TEST(test_take_hints_follow_takes_and_slices)
{
    struct mu_task *a;
    struct mu_cnode *n1 = n1_with_devices(3);
    const struct mu_devslice *s = mu_devices_node(&c.dev, "n1")->v[0];

    ck_assert_ptr_eq(n1->dev_hint[0], s);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->holders[0]);
    ck_assert_ptr_eq(n1->dev_hint[2], &s->devs[0]);
    a = pod("a", TMPL("one"), "{}");
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->holders[1]);
    ck_assert_ptr_eq(n1->dev_hint[2], &s->devs[1]);
    /* a new generation of the pool: the hints name the new slice */
    slice("s1", "n1", "p1", 1, 1, 3, "H100");
    s = mu_devices_node(&c.dev, "n1")->v[0];
    ck_assert_ptr_eq(n1->dev_hint[0], s);
    ck_assert_ptr_eq(n1->dev_hint[1], &s->holders[s->first_free]);
    ck_assert_ptr_eq(n1->dev_hint[2], &s->devs[s->first_free]);
    /* a node without slices has none */
    ck_assert_ptr_null(mu_cluster_node(&c, "n2")->dev_hint[0]);
    ck_assert_ptr_null(mu_cluster_node(&c, "n2")->dev_hint[1]);
}
END_TEST

/* Equal requests (equal sets, equal values in them; what lies outside
 * the set does not count) share one copy, counted: it goes with its last
 * reference, and a request that differs in a value or in its set has its
 * own. */
START_TEST(test_reqpool_shares_equal_requests)
{
    struct mu_reqpool p;
    struct mu_res a, b, d;
    const struct mu_res *pa, *pb, *pd;

    mu_reqpool_init(&p);
    mu_res_zero(&a);
    mu_res_put(&a, MU_RES_CPU, 1000);
    mu_res_put(&a, 5, 2);
    b = a;
    b.v[7] = 99; /* not in its set */
    pa = mu_reqpool_get(&p, &a);
    pb = mu_reqpool_get(&p, &b);
    ck_assert_ptr_eq(pa, pb);
    ck_assert_ptr_ne(pa, &a);
    ck_assert_uint_eq(pa->set, a.set);
    ck_assert_int_eq(pa->v[5], 2);
    ck_assert_int_eq(pa->v[7], 0);
    ck_assert_uint_eq(mu_reqpool_count(&p), 1);
    d = a;
    mu_res_put(&d, 5, 3); /* another value */
    pd = mu_reqpool_get(&p, &d);
    ck_assert_ptr_ne(pd, pa);
    d = a;
    mu_res_put(&d, 7, 0); /* another set */
    ck_assert_ptr_ne(mu_reqpool_get(&p, &d), pa);
    ck_assert_uint_eq(mu_reqpool_count(&p), 3);
    mu_reqpool_put(&p, pa);
    ck_assert_uint_eq(mu_reqpool_count(&p), 3);
    ck_assert_int_eq(pb->v[MU_RES_CPU], 1000);
    mu_reqpool_put(&p, pb);
    ck_assert_uint_eq(mu_reqpool_count(&p), 2);
    mu_reqpool_put(&p, pd);
    mu_reqpool_put(&p, NULL);
    ck_assert_uint_eq(mu_reqpool_count(&p), 1);
    mu_reqpool_free(&p); /* with one still held: freed too */
}
END_TEST

/* Pods of one template share their queue-side request (the pod's own and
 * the claims' devices under the quota name); a template of two devices
 * has its own; the copies go with the pods that hold them. */
START_TEST(test_pods_that_ask_the_same_share_their_qreq)
{
    struct mu_task *a, *b, *d;
    int gpu;

    template_("one", ONE);
    template_("two", TWO);
    slice("s1", "n1", "p1", 0, 1, 4, "H100");
    a = pod("a", TMPL("one"), "{}");
    b = pod("b", TMPL("one"), "{}");
    d = pod("d", TMPL("two"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert_int_ge(gpu, 0);
    ck_assert_ptr_eq(a->qreq, b->qreq);
    ck_assert_ptr_eq(a->qreq, a->dd->qreq);
    ck_assert_ptr_ne(a->qreq, d->qreq);
    ck_assert_int_eq(a->qreq->v[gpu], 1);
    ck_assert_int_eq(d->qreq->v[gpu], 2);
    ck_assert_int_eq(a->qreq->v[MU_RES_CPU], d->qreq->v[MU_RES_CPU]);
    ck_assert_uint_eq(mu_reqpool_count(&c.dev.qreqs), 2);
    mu_cluster_remove_task(&c, a);
    ck_assert_uint_eq(mu_reqpool_count(&c.dev.qreqs), 2);
    ck_assert_int_eq(b->qreq->v[gpu], 1);
    mu_cluster_remove_task(&c, b);
    mu_cluster_remove_task(&c, d);
    ck_assert_uint_eq(mu_reqpool_count(&c.dev.qreqs), 0);
}
END_TEST


/* Where holds leave a slice's first_free: ndevs holds filled from the
 * front (tasks placed in turn), the second's freed and taken again. */
static void check_first_free(int ndevs)
{
    struct mu_cnode *n1 = n1_with_devices(ndevs);
    const struct mu_devslice *s = mu_devices_node(&c.dev, "n1")->v[0];
    struct mu_task *t[80], *again;
    char name[16];

    ck_assert_int_le(ndevs, 80);
    ck_assert_uint_eq((uintptr_t)s % 64, 0); /* one line for a hold */
    for (int i = 0; i < ndevs; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        t[i] = pod(name, TMPL("one"), "{}");
        mu_task_place(&c, t[i], n1, MU_TASK_ALLOCATED);
        ck_assert_uint_eq(s->first_free, (size_t)i + 1);
    }
    ck_assert_ptr_nonnull(s->holders[1]);
    mu_cluster_remove_task(&c, t[1]);
    ck_assert_ptr_null(s->holders[1]);
    ck_assert_uint_eq(s->first_free, 1);
    again = pod("again", TMPL("one"), "{}");
    mu_task_place(&c, again, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_nonnull(s->holders[1]);
    ck_assert_uint_eq(s->first_free, (size_t)ndevs);
    ck_assert_int_eq(held_on("n1"), ndevs);
}

START_TEST(test_first_free_follows_holds)
{
    check_first_free(3);
}
END_TEST

/* A slice of more devices than one machine word has bits. */
START_TEST(test_first_free_follows_holds_past_64_devices)
{
    check_first_free(70);
}
END_TEST

/* A pod of one private claim is checked and taken through its claim
 * (dd_one): on a free node, a full one, the node its claim holds on, and
 * in the future of a releasing holder, the answers are the demand's
 * (fits() compares them); the take marks the demand's entry taken, and a
 * second take of it counts nothing more. */
START_TEST(test_one_claim_fits_and_takes_as_its_demand)
{
    struct mu_task *a, *b, *two;
    struct mu_cnode *n1 = n1_with_devices(1);

    template_("two", TWO);
    slice("s2", "n2", "p2", 0, 1, 1, "H100");
    a = pod("a", TMPL("one"), "{}");
    b = pod("b", TMPL("one"), "{}");
    two = pod("t", TMPL("two"), "{}");
    ck_assert_ptr_eq(a->dd_one, a->dd->c[0].priv);
    ck_assert_ptr_eq(two->dd_one, two->dd->c[0].priv);
    ck_assert(fits(a, "n1"));
    ck_assert(!fits(two, "n1"));
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    ck_assert(a->dd->c[0].taken);
    ck_assert_int_eq(a->dd_one->users, 1);
    mu_devices_take_one(&c.dev, a->dd, a->dd_one, n1->devs); /* again */
    ck_assert_int_eq(a->dd_one->users, 1);
    ck_assert_uint_eq(a->dd_one->nheld, 1);
    ck_assert(fits(a, "n1"));   /* where it holds */
    ck_assert(!fits(a, "n2"));
    ck_assert(!fits(b, "n1"));  /* full */
    ck_assert(fits(b, "n2"));
    mu_task_set_status(&c, a, MU_TASK_RELEASING);
    ck_assert(!fits(b, "n1"));  /* free in the future only: fits() checks */
    ck_assert(mu_devices_fit_one(&c.dev, b->dd_one, n1->devs, "n1", true));
    mu_task_unplace(&c, a);
    ck_assert(!a->dd->c[0].taken);
    ck_assert_int_eq(a->dd_one->users, 0);
    ck_assert(fits(b, "n1"));
}
END_TEST

/* Which device of node `node` (slices <a>, <b> of 3 devices each) t's
 * only claim holds first: the slice's index * 3 + the device's, or -1. */
static int held_at(const struct mu_task *t, const char *node)
{
    const struct mu_devnode *nd = mu_devices_node(&c.dev, node);
    const struct mu_dclaim *cl = t->dd->c[0].priv;

    for (uint32_t i = 0; cl->nheld && i < nd->n; i++)
        for (size_t k = 0; k < nd->v[i]->ndevs; k++)
            if (&nd->v[i]->devs[k] == cl->held[0])
                return (int)(i * 3 + k);
    return -1;
}

/* Takes on a node whose sums answer for the class (every device usable,
 * of the class: the take reads the slices' holders only) pick what the
 * device-by-device search picks on the same node for claims with a
 * selector of their own: the first free devices in device order, across
 * slices and into holes a give left. */
START_TEST(test_take_by_sums_picks_as_the_device_search)
{
    static const char *const nodes[2] = {"n1", "n2"};
    const char *sel = "\"selectors\":[{\"cel\":{\"expression\":"
                      "\"device.attributes[\\\"gpu.x\\\"].model == "
                      "\\\"H100\\\"\"}}]";
    char *q;

    template_("one", ONE);
    template_("two", TWO);
    q = mu_xasprintf("[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
                     "\"gpu\",%s}}]", sel);
    template_("sone", q);
    free(q);
    q = mu_xasprintf("[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
                     "\"gpu\",\"count\":2,%s}}]", sel);
    template_("stwo", q);
    free(q);
    slice("a1", "n1", "p1", 0, 2, 3, "H100");
    slice("b1", "n1", "p1", 0, 2, 3, "H100");
    slice("a2", "n2", "p2", 0, 2, 3, "H100");
    slice("b2", "n2", "p2", 0, 2, 3, "H100");
    for (int i = 0; i < 2; i++) {
        struct mu_cnode *n = mu_cluster_node(&c, nodes[i]);
        struct mu_task *a, *b, *x, *d;
        char name[16];

        snprintf(name, sizeof(name), "a%d", i);
        a = pod(name, i ? TMPL("sone") : TMPL("one"), "{}");
        snprintf(name, sizeof(name), "b%d", i);
        b = pod(name, i ? TMPL("stwo") : TMPL("two"), "{}");
        snprintf(name, sizeof(name), "x%d", i);
        x = pod(name, i ? TMPL("sone") : TMPL("one"), "{}");
        snprintf(name, sizeof(name), "d%d", i);
        d = pod(name, i ? TMPL("stwo") : TMPL("two"), "{}");
        mu_task_place(&c, a, n, MU_TASK_ALLOCATED);
        mu_task_place(&c, b, n, MU_TASK_ALLOCATED);
        mu_task_place(&c, x, n, MU_TASK_ALLOCATED);
        ck_assert_int_eq(held_at(a, nodes[i]), 0);
        ck_assert_int_eq(held_at(b, nodes[i]), 1);
        ck_assert_ptr_eq(b->dd->c[0].priv->held[1],
                         &mu_devices_node(&c.dev, nodes[i])->v[0]->devs[2]);
        ck_assert_int_eq(held_at(x, nodes[i]), 3);
        mu_cluster_remove_task(&c, a);
        ck_assert(fits(d, nodes[i]));
        mu_task_place(&c, d, n, MU_TASK_ALLOCATED);
        ck_assert_int_eq(held_at(d, nodes[i]), 0); /* the hole, then b's */
        ck_assert_ptr_eq(d->dd->c[0].priv->held[1],
                         &mu_devices_node(&c.dev, nodes[i])->v[1]->devs[1]);
        ck_assert_int_eq(held_on(nodes[i]), 5);
        ck_assert_int_eq(n->devs->nfree, 1);
    }
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
    tcase_add_test(tc, test_reqpool_shares_equal_requests);
    tcase_add_test(tc, test_pods_that_ask_the_same_share_their_qreq);
    tcase_add_test(tc, test_first_free_follows_holds);
    tcase_add_test(tc, test_first_free_follows_holds_past_64_devices);
    tcase_add_test(tc, test_one_claim_fits_and_takes_as_its_demand);
    tcase_add_test(tc, test_take_by_sums_picks_as_the_device_search);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
