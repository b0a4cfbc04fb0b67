/* The free-device counts a pending pod's why is made of (sched/devcount.c:
 * mu_devices_free_count, mu_devfree_text): per class or selector set,
 * remembered while the inventory and the holds stand, only on the
 * cluster's nodes, and in words; and the counts a node's entry keeps for
 * a fit check (mu_devnode's sums). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "api/dra.h"
#include "api/object.h"
#include "sched/cluster.h"
#include "sched/cluster_dra.h"
#include "sched/devices_int.h" /* the free-count memo's fill */
#include "sched/statement.h"
#include "test_dra_fixture.h"

/* The free counts remembered for a pod's option are not another's: a
 * pod asking an extended resource gets a private option, and the next
 * pod's may be allocated where it was. */
START_TEST(test_free_counts_follow_a_new_option_at_an_old_address)
{
    const char *asks[] = {"nvidia.com/gpu", "example.com/t4"};
    struct mu_devfree f;

    class_("t4", "\"device.attributes[\\\"gpu.x\\\"].model == "
                 "\\\"T4\\\"\"", "example.com/t4");
    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    slice("s2", "n2", "p2", 0, 1, 1, "T4");
    /* alternately, so that a freed option's address comes back (the
     * allocator reuses it within a few rounds) for the other class */
    for (size_t i = 0; i < 32; i++) {
        json_t *j = js("{\"metadata\":{\"name\":\"x\"},\"spec\":{"
                       "\"containers\":[{\"name\":\"c\",\"resources\":{"
                       "\"limits\":{\"%s\":\"1\"}}}]}}", asks[i % 2]);
        struct mu_pod p;
        struct mu_task *t;
        struct mu_err err;
        bool t4 = i % 2;

        ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, &err), 0);
        t = i ? mu_cluster_update_task(&c, &p, &err)
              : mu_cluster_add_task(&c, &p, &err);
        json_decref(j);
        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_nonnull(t->dd);
        mu_devices_free_count(&c.dev, t->dd, &f);
        ck_assert_str_eq(f.class_name, t4 ? "t4" : "gpu");
        ck_assert_int_eq(f.total, t4 ? 1 : 4);
        ck_assert_int_eq(f.best, t4 ? 1 : 3);
    }
}
END_TEST

/* Devices count only on nodes of the cluster: a node removed (its slices
 * not yet) or not yet added adds nothing to why-pending's free counts or
 * to what an All request is charged. */
START_TEST(test_devices_count_only_on_nodes_of_the_cluster)
{
    struct mu_task *all, *one;
    struct mu_devfree f;
    int gpu;

    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    slice("s2", "n2", "p2", 0, 1, 4, "H100");
    slice("s9", "n9", "p9", 0, 1, 8, "H100");
    template_("all", ALL_REQ);
    template_("one", ONE);
    all = pod("all", TMPL("all"), "{}");
    one = pod("one", TMPL("one"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert_int_eq(all->qreq->v[gpu], 4);
    /* their group, made after them, adopts them; its sum of requests
     * follows theirs as the slices change (mu_job_req_sum) */
    {
        json_t *j = js("{\"metadata\":{\"name\":\"g\"},\"spec\":{"
                       "\"minMember\":2}}");
        struct mu_podgroup pg;

        ck_assert_int_eq(mu_podgroup_decode(j, &c.rn, &pg, NULL), 0);
        ck_assert_ptr_nonnull(mu_cluster_add_job(&c, &pg, NULL));
        json_decref(j);
    }
    ck_assert_ptr_nonnull(all->job);
    ck_assert_int_eq(mu_job_req_sum(all->job)->v[gpu], 4 + one->qreq->v[gpu]);
    mu_devices_free_count(&c.dev, one->dd, &f);
    ck_assert_int_eq(f.total, 6);
    ck_assert_int_eq(f.best, 4);
    mu_cluster_remove_node(&c, mu_cluster_node(&c, "n2"));
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 2);
    ck_assert_int_eq(mu_job_req_sum(all->job)->v[gpu], 2 + one->qreq->v[gpu]);
    mu_devices_free_count(&c.dev, one->dd, &f);
    ck_assert_int_eq(f.total, 2);
    ck_assert_int_eq(f.nodes, 1);
    ck_assert_int_eq(f.best, 2);
    node("n9");
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 8);
    ck_assert_int_eq(mu_job_req_sum(all->job)->v[gpu], 8 + one->qreq->v[gpu]);
    mu_devices_free_count(&c.dev, one->dd, &f);
    ck_assert_int_eq(f.total, 10);
    ck_assert_int_eq(f.best, 8);
}
END_TEST

/* The words of why-pending's device figures, which the PodGroup condition,
 * explain and simulate share. */
START_TEST(test_free_devices_in_words)
{
    struct mu_devfree f = {.class_name = "gpu.example.com", .per = 1,
                           .total = 5, .nodes = 2, .best = 4};
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_devfree_text(&f, 8, &sb);
    ck_assert_str_eq(sb.buf, "needs 8 devices of class gpu.example.com "
                             "(1 per pod); free: 5 on 2 nodes, at most 4 "
                             "on one node");
    mu_sb_release(&sb);
    f = (struct mu_devfree){.class_name = "t4", .per = 1, .total = 1,
                            .nodes = 1, .best = 1, .unplanned = 3};
    mu_sb_init(&sb);
    mu_devfree_text(&f, 1, &sb);
    ck_assert_str_eq(sb.buf, "needs 1 device of class t4 (1 per pod); "
                             "free: 1 on 1 node, at most 1 on one node (and "
                             "3 in ResourceSlices with perDeviceNodeSelection, "
                             "which muster does not plan)");
    mu_sb_release(&sb);
    f = (struct mu_devfree){.class_name = "t4", .per = 2};
    mu_sb_init(&sb);
    mu_devfree_text(&f, 4, &sb);
    ck_assert_str_eq(sb.buf, "needs 8 devices of class t4 (2 per pod); "
                             "none free");
    mu_sb_release(&sb);
}
END_TEST

/* Claims made from one template (each a ResourceClaim of its own, as
 * kube-controller-manager makes them) share their class's free counts:
 * why-pending walks the nodes once for all the gangs that wait on that
 * class, not once a gang; claims whose options have the same selectors
 * share theirs. */
#define T4_ONE "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":" \
               "\"gpu\",\"selectors\":[{\"cel\":{\"expression\":"       \
               "\"device.attributes[\\\"gpu.x\\\"].model == "            \
               "\\\"T4\\\"\"}}]}}]"
START_TEST(test_claims_of_one_class_share_their_free_counts)
{
    struct mu_task *a, *b, *t4, *t4b;
    struct mu_devfree f;
    unsigned walks;

    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    slice("s2", "n2", "p2", 0, 1, 1, "T4");
    claim("a-gpu", ONE, "");
    claim("b-gpu", ONE, "");
    claim("t4-gpu", T4_ONE, "");
    claim("t4b-gpu", T4_ONE, "");
    a = pod("a", "[{\"name\":\"gpu\",\"resourceClaimName\":\"a-gpu\"}]",
            "{}");
    b = pod("b", "[{\"name\":\"gpu\",\"resourceClaimName\":\"b-gpu\"}]",
            "{}");
    t4 = pod("t4", "[{\"name\":\"gpu\",\"resourceClaimName\":\"t4-gpu\"}]",
             "{}");
    t4b = pod("t4b",
              "[{\"name\":\"gpu\",\"resourceClaimName\":\"t4b-gpu\"}]", "{}");
    mu_devices_free_count(&c.dev, a->dd, &f);
    ck_assert_int_eq(f.total, 4);
    walks = c.dev.counts->next;
    mu_devices_free_count(&c.dev, b->dd, &f);
    ck_assert_uint_eq(c.dev.counts->next, walks); /* a's answer */
    ck_assert_str_eq(f.class_name, "gpu");
    ck_assert_int_eq(f.total, 4);
    ck_assert_int_eq(f.nodes, 2);
    ck_assert_int_eq(f.best, 3);
    mu_devices_free_count(&c.dev, t4->dd, &f);
    ck_assert_uint_eq(c.dev.counts->next, walks + 1);
    ck_assert_int_eq(f.total, 1);
    ck_assert_int_eq(f.nodes, 1);
    ck_assert_int_eq(f.best, 1);
    mu_devices_free_count(&c.dev, t4b->dd, &f);
    ck_assert_uint_eq(c.dev.counts->next, walks + 1); /* t4's answer */
    ck_assert_int_eq(f.total, 1);
    /* a hold moves them: counted again, once */
    mu_task_place(&c, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_devices_free_count(&c.dev, b->dd, &f);
    ck_assert_int_eq(f.total, 3);
    ck_assert_int_eq(f.best, 2);
    ck_assert(fits(b, "n1"));
    ck_assert(!fits(t4, "n1"));
    ck_assert(fits(t4, "n2"));
}
END_TEST

/* A device remembers one selector set's answer: claims with other
 * selectors asked in turn on the same devices each get their own. */
START_TEST(test_selector_answers_follow_the_set_asked)
{
    struct mu_task *t4, *h;

    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    slice("s2", "n2", "p2", 0, 1, 2, "T4");
    claim("t4-gpu", T4_ONE, "");
    claim("h-gpu", "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":"
                   "\"gpu\",\"selectors\":[{\"cel\":{\"expression\":"
                   "\"device.attributes[\\\"gpu.x\\\"].model == "
                   "\\\"H100\\\"\"}}]}}]", "");
    t4 = pod("t4", "[{\"name\":\"gpu\",\"resourceClaimName\":\"t4-gpu\"}]",
             "{}");
    h = pod("h", "[{\"name\":\"gpu\",\"resourceClaimName\":\"h-gpu\"}]",
            "{}");
    for (int i = 0; i < 3; i++) {
        ck_assert(fits(h, "n1"));
        ck_assert(!fits(t4, "n1"));
        ck_assert(!fits(h, "n2"));
        ck_assert(fits(t4, "n2"));
    }
    mu_task_place(&c, h, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_task_place(&c, t4, mu_cluster_node(&c, "n2"), MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 1);
    ck_assert_int_eq(held_on("n2"), 1);
}
END_TEST

/* Node n1's free devices counted by reading them, against its sums. */
static void sums_match(void)
{
    const struct mu_devnode *nd = mu_devices_node(&c.dev, "n1");
    int total = 0;

    for (size_t i = 0; i < nd->n; i++)
        total += (int)nd->v[i]->ndevs;
    ck_assert_int_eq(nd->nfree, total - held_on("n1"));
}

/* A node's sums answer the common fit check without reading a device:
 * they follow every hold taken and given back, a slice coming and going
 * with its holds, a pool made incomplete and a class changed; a node
 * with a device its class does not select is read device by device. */
START_TEST(test_node_sums_follow_holds_slices_and_classes)
{
    struct mu_task *a, *b, *one, *h;
    struct mu_stmt st;

    template_("two", TWO);
    template_("one", ONE);
    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    a = pod("a", TMPL("two"), "{}");
    b = pod("b", TMPL("two"), "{}");
    one = pod("o", TMPL("one"), "{}");
    mu_cluster_link(&c);
    mu_stmt_init(&st, &c);
    ck_assert(fits(a, "n1"));
    ck_assert(mu_devices_node(&c.dev, "n1")->sum_ok);
    mu_stmt_place(&st, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    sums_match();
    ck_assert(!fits(b, "n1")); /* one left */
    ck_assert(fits(one, "n1"));
    mu_stmt_rollback(&st, 0);
    sums_match();
    ck_assert(fits(b, "n1"));
    /* a second slice: a and b both fit, then nothing is left */
    slice("s2", "n1", "p2", 0, 1, 1, "H100");
    sums_match();
    mu_stmt_place(&st, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_stmt_place(&st, b, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    sums_match();
    ck_assert(!fits(one, "n1"));
    /* the slice goes with the device b held there */
    mu_cluster_del_slice(&c, "s2");
    sums_match();
    ck_assert(!fits(one, "n1"));
    mu_stmt_rollback(&st, 0);
    sums_match();
    ck_assert(fits(a, "n1"));
    /* an incomplete pool: its devices are not usable */
    slice("s3", "n1", "p3", 0, 2, 1, "H100");
    sums_match();
    ck_assert(fits(a, "n1"));
    mu_cluster_del_slice(&c, "s1");
    ck_assert(!fits(one, "n1")); /* s3 alone, of a pool of two slices */
    slice("s5", "n2", "p3", 0, 2, 1, "H100"); /* the pool whole: n1 too */
    ck_assert(fits(one, "n1"));
    /* the class put again (n1's sums made again, all usable), then the
     * pool incomplete again from n2: n1's sums are stale */
    class_("gpu", "\"device.driver == \\\"gpu.x\\\"\"", "nvidia.com/gpu");
    ck_assert(fits(one, "n1"));
    mu_cluster_del_slice(&c, "s5");
    ck_assert(!fits(one, "n1"));
    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    ck_assert(fits(a, "n1"));
    mu_cluster_del_slice(&c, "s3");
    /* the class changed: it no longer selects these devices, then does */
    class_("gpu", "\"device.driver == \\\"gpu.y\\\"\"", "nvidia.com/gpu");
    ck_assert(!fits(one, "n1"));
    class_("gpu", "\"device.driver == \\\"gpu.x\\\"\"", "nvidia.com/gpu");
    ck_assert(fits(one, "n1"));
    /* a class that selects some of the node's devices only */
    class_("h", "\"device.attributes[\\\"gpu.x\\\"].model == "
                "\\\"H100\\\"\"", NULL);
    template_("h", "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"
                   "\"h\",\"count\":3}}]");
    h = pod("h", TMPL("h"), "{}");
    slice("s4", "n1", "p4", 0, 1, 2, "A100");
    ck_assert(fits(h, "n1")); /* the three H100 of s1 */
    mu_stmt_place(&st, one, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    sums_match();
    /* one took an H100 (s1 comes first): two H100 and two A100 left */
    ck_assert_int_eq(mu_devices_node(&c.dev, "n1")->nfree, 4);
    ck_assert(!fits(h, "n1"));
    mu_stmt_release(&st);
}
END_TEST

/* A node's free devices are counted from its sums only where they
 * answer: a class that selects some of its devices, or a pool not whole,
 * is counted device by device. */
START_TEST(test_free_counts_from_node_sums_only_where_they_answer)
{
    struct mu_task *h, *g, *g2;
    struct mu_devfree f;

    class_("h", "\"device.attributes[\\\"gpu.x\\\"].model == "
                "\\\"H100\\\"\"", NULL);
    template_("h", "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"
                   "\"h\"}}]");
    template_("one", ONE);
    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    slice("s4", "n1", "p4", 0, 1, 2, "A100");
    h = pod("h", TMPL("h"), "{}");
    g = pod("g", TMPL("one"), "{}");
    g2 = pod("g2", TMPL("one"), "{}");
    mu_devices_free_count(&c.dev, h->dd, &f);
    ck_assert_int_eq(f.total, 3); /* the H100 only, not the node's 5 */
    ck_assert_int_eq(f.best, 3);
    mu_devices_free_count(&c.dev, g->dd, &f);
    ck_assert_int_eq(f.total, 5);
    /* a pool of two slices with one come: its device is not usable */
    slice("s3", "n2", "p3", 0, 2, 1, "H100");
    mu_devices_free_count(&c.dev, g->dd, &f);
    ck_assert_int_eq(f.total, 5);
    ck_assert_int_eq(f.nodes, 1);
    /* holds move both */
    mu_task_place(&c, h, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_devices_free_count(&c.dev, g2->dd, &f);
    ck_assert_int_eq(f.total, 4);
    mu_task_place(&c, g, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_devices_free_count(&c.dev, h->dd, &f);
    ck_assert_ptr_null(f.class_name); /* h holds its device: nothing asked */
    mu_devices_free_count(&c.dev, g2->dd, &f);
    ck_assert_int_eq(f.total, 3);
    ck_assert_int_eq(f.best, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dra_counts");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_free_counts_follow_a_new_option_at_an_old_address);
    tcase_add_test(tc, test_devices_count_only_on_nodes_of_the_cluster);
    tcase_add_test(tc, test_free_devices_in_words);
    tcase_add_test(tc, test_claims_of_one_class_share_their_free_counts);
    tcase_add_test(tc, test_selector_answers_follow_the_set_asked);
    tcase_add_test(tc, test_node_sums_follow_holds_slices_and_classes);
    tcase_add_test(tc, test_free_counts_from_node_sums_only_where_they_answer);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
