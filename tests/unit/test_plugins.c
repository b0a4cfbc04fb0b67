/* test_plugins.c - the scheduling plugins, each on a small cluster. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "plugins.h"

#include "test_plugins_harness.h"

/* ---- registry ---- */

START_TEST(test_registry_lists_plugins_in_order)
{
    static const char *const names[] = {
        "priority",   "gang",       "conformance", "overcommit", "drf",
        "predicates", "proportion", "capacity",    "nodeorder",
        "binpack",
    };
    size_t n = 0;

    for (; mu_plugins[n]; n++) {
        ck_assert_uint_lt(n, MU_ARRAY_LEN(names));
        ck_assert_str_eq(mu_plugins[n]->name, names[n]);
        ck_assert_ptr_eq(mu_plugin_find(names[n]), mu_plugins[n]);
    }
    ck_assert_uint_eq(n, MU_ARRAY_LEN(names));
    ck_assert_ptr_null(mu_plugin_find("sla"));
}
END_TEST

/* The parser accepts exactly the registry's plugins, in its order (both
 * come from plugin_list.h). */
START_TEST(test_conf_knows_the_registry_plugins)
{
    size_t n = 0;

    for (; mu_plugins[n]; n++) {
        ck_assert_ptr_nonnull(mu_conf_known_plugins[n]);
        ck_assert_str_eq(mu_conf_known_plugins[n], mu_plugins[n]->name);
    }
    ck_assert_ptr_null(mu_conf_known_plugins[n]);
}
END_TEST

/* ---- proportion: deserved ---- */

/* The book's queues: team-a weight 2, capability 16, guarantee 8; team-b
 * weight 1, capability 8; 18 GPUs; both want more than they can get. */
static void book_queues(int ngpu, int want_a, int want_b)
{
    gpu_node("n1", ngpu);
    add_queue("default", 1, -1, -1, "Open");
    add_queue("team-a", 2, 16, 8, "Open");
    add_queue("team-b", 1, 8, -1, "Open");
    add_job("a", "team-a", 1, "Inqueue", -1);
    add_job("b", "team-b", 1, "Inqueue", -1);
    pods("a", 0, want_a, NULL);
    pods("b", 0, want_b, NULL);
}

START_TEST(test_proportion_book_queues_deserve_12_and_6)
{
    struct mu_cqueue *a, *b;

    book_queues(18, 20, 20);
    open_ssn("  - name: proportion\n");
    a = mu_cluster_queue(&C, "team-a");
    b = mu_cluster_queue(&C, "team-b");
    ck_assert(a->has_deserved && b->has_deserved);
    ck_assert(!mu_cluster_queue(&C, "default")->has_deserved);
    ck_assert_int_eq(gpus(&a->deserved), 12);
    ck_assert_int_eq(gpus(&b->deserved), 6);
    /* min(18 - 8 + 8, 16) and min(18 - 8 + 0, 8) */
    ck_assert_int_eq(gpus(&a->real_capability), 16);
    ck_assert_int_eq(gpus(&b->real_capability), 8);
    /* cpu is plentiful: each deserves exactly what it requests */
    ck_assert_int_eq(a->deserved.v[MU_RES_CPU], 20000);
    ck_assert_int_eq(b->deserved.v[MU_RES_CPU], 20000);
}
END_TEST

START_TEST(test_proportion_largest_remainder_loses_no_gpu)
{
    gpu_node("n1", 17);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Inqueue", -1);
    add_job("b", "team-b", 1, "Inqueue", -1);
    pods("a", 0, 20, NULL);
    pods("b", 0, 20, NULL);
    open_ssn("  - name: proportion\n");
    /* 17 x 2/3 = 11.33, 17 x 1/3 = 5.67: the spare GPU goes to team-b */
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-a")->deserved), 11);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->deserved), 6);
}
END_TEST

START_TEST(test_proportion_capability_caps_and_rest_flows_on)
{
    gpu_node("n1", 16);
    add_queue("team-a", 1, 4, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Inqueue", -1);
    add_job("b", "team-b", 1, "Inqueue", -1);
    pods("a", 0, 12, NULL);
    pods("b", 0, 12, NULL);
    open_ssn("  - name: proportion\n");
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-a")->deserved), 4);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->deserved), 12);
}
END_TEST

START_TEST(test_proportion_guarantee_raises_and_limits_others)
{
    gpu_node("n1", 20);
    add_queue("team-a", 1, -1, 10, "Open");
    add_queue("team-b", 9, -1, -1, "Open");
    add_job("a", "team-a", 1, "Inqueue", -1);
    add_job("b", "team-b", 1, "Inqueue", -1);
    pods("a", 0, 20, NULL);
    pods("b", 0, 20, NULL);
    open_ssn("  - name: proportion\n");
    /* weight gives team-a 2, its guarantee 10; team-b may use only what
     * guarantees leave: 20 - 10 */
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-a")->deserved), 10);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->deserved), 10);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->real_capability),
                     10);
}
END_TEST

START_TEST(test_proportion_request_caps_and_counts_pending_jobs)
{
    gpu_node("n1", 18);
    add_queue("team-a", 1, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Pending", -1);
    pods("a", 0, 2, "n1");
    pods("a", 2, 1, NULL);
    pods("b", 0, 20, NULL);
    open_ssn("  - name: proportion\n");
    /* team-a asks for 3 (2 running + 1 pending); the rest goes to team-b,
     * whose job is still Pending */
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-a")->deserved), 3);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->deserved), 15);
}
END_TEST

/* 18 GPUs; team-a (weight 2) runs 6 and wants 10 more, team-b (weight 1)
 * runs 6 and wants 4 more: deserved 12 and 6. */
static void shares(void)
{
    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_queue("team-c", 1, -1, -1, "Closed");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Running", -1);
    add_job("c", "team-c", 1, "Inqueue", -1);
    pods("a", 0, 6, "n1");
    pods("a", 6, 10, NULL);
    pods("b", 0, 6, "n1");
    pods("b", 6, 4, NULL);
    pod("c", "c-0", 0, NULL); /* a closed queue with jobs takes part too */
    open_ssn("  - name: proportion\n");
}

START_TEST(test_proportion_queue_order_lower_share_first)
{
    struct mu_cqueue *a, *b;
    void *st;

    shares();
    st = state(&mu_plugin_proportion);
    a = mu_cluster_queue(&C, "team-a");
    b = mu_cluster_queue(&C, "team-b");
    ck_assert_int_eq(gpus(&a->deserved), 12);
    ck_assert_int_eq(gpus(&b->deserved), 6);
    /* team-a 6/12 = 0.5, team-b 6/6 = 1 */
    ck_assert_int_lt(mu_plugin_proportion.queue_order(st, a, b), 0);
    ck_assert_int_gt(mu_plugin_proportion.queue_order(st, b, a), 0);
    ck_assert_int_eq(mu_plugin_proportion.queue_order(st, a, a), 0);
    /* the order follows allocations made in the session: team-a at
     * 13/12 comes after team-b at 6/6 */
    for (int i = 6; i < 13; i++) {
        char name[16];

        snprintf(name, sizeof(name), "a-%d", i);
        mu_task_place(&C, mu_cluster_task(&C, "default", name),
                      mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    }
    ck_assert_int_gt(mu_plugin_proportion.queue_order(st, a, b), 0);
    /* spec.priority comes before share */
    b->spec.priority = 1;
    ck_assert_int_lt(mu_plugin_proportion.queue_order(st, b, a), 0);
}
END_TEST

START_TEST(test_proportion_allocatable_within_deserved_only)
{
    struct mu_sb why;
    void *st;

    mu_sb_init(&why);
    shares();
    st = state(&mu_plugin_proportion);
    ck_assert(mu_plugin_proportion.allocatable(
        st, mu_cluster_queue(&C, "team-a"),
        mu_cluster_task(&C, "default", "a-6"), &why));
    ck_assert_uint_eq(why.len, 0);
    ck_assert(!mu_plugin_proportion.allocatable(
        st, mu_cluster_queue(&C, "team-b"),
        mu_cluster_task(&C, "default", "b-6"), &why));
    ck_assert_str_eq(why.buf, "queue team-b would exceed its deserved share: "
                              "nvidia.com/gpu allocated 6 + 1 requested > "
                              "deserved 6");
    ck_assert(!mu_plugin_proportion.preemptive(
        st, mu_cluster_queue(&C, "team-b"),
        mu_cluster_task(&C, "default", "b-6"), NULL));
    mu_sb_release(&why);
    mu_sb_init(&why);
    ck_assert(!mu_plugin_proportion.allocatable(
        st, mu_cluster_queue(&C, "team-c"),
        mu_cluster_task(&C, "default", "c-0"), &why));
    ck_assert_str_eq(why.buf, "queue team-c is Closed");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_proportion_allocatable_follows_live_allocation)
{
    struct mu_task *t;
    void *st;

    shares();
    st = state(&mu_plugin_proportion);
    /* team-a may take 6 more GPUs, not 7 */
    for (int i = 6; i < 12; i++) {
        char name[16];

        snprintf(name, sizeof(name), "a-%d", i);
        t = mu_cluster_task(&C, "default", name);
        ck_assert(mu_plugin_proportion.allocatable(
            st, mu_cluster_queue(&C, "team-a"), t, NULL));
        mu_task_place(&C, t, mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    }
    ck_assert(!mu_plugin_proportion.allocatable(
        st, mu_cluster_queue(&C, "team-a"),
        mu_cluster_task(&C, "default", "a-12"), NULL));
}
END_TEST

START_TEST(test_proportion_overused_at_share_with_nothing_pending)
{
    void *st;

    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_queue("team-c", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Running", -1);
    add_job("c", "team-c", 1, "Pending", -1);
    pods("a", 0, 4, "n1");
    pods("a", 4, 10, NULL);
    pods("b", 0, 6, "n1");
    pods("c", 0, 1, "n1");
    mu_task_set_status(&C, mu_cluster_task(&C, "default", "c-0"),
                       MU_TASK_SUCCEEDED);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert(mu_plugin_proportion.overused(st,
                                            mu_cluster_queue(&C, "team-b")));
    ck_assert(!mu_plugin_proportion.overused(st,
                                             mu_cluster_queue(&C, "team-a")));
    /* nothing allocated, nothing deserved: idle, not overused */
    ck_assert(!mu_plugin_proportion.overused(st,
                                             mu_cluster_queue(&C, "team-c")));
}
END_TEST

START_TEST(test_proportion_reclaims_only_from_queues_over_deserved)
{
    struct mu_task *pa, *pb, *victim;
    void *st;

    /* team-b runs 12 of its deserved 6; team-a runs 6 of 12 */
    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Running", -1);
    pods("a", 0, 6, "n1");
    pods("a", 6, 6, NULL);
    pods("b", 0, 12, "n1");
    pods("b", 12, 1, NULL);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->deserved), 6);
    pa = mu_cluster_task(&C, "default", "a-6");
    pb = mu_cluster_task(&C, "default", "b-12");
    /* subtract as you go: six evictions bring team-b down to its share */
    for (int i = 0; i < 6; i++) {
        char name[16];

        snprintf(name, sizeof(name), "b-%d", i);
        victim = mu_cluster_task(&C, "default", name);
        ck_assert(mu_plugin_proportion.victim_ok(st, pa, victim, true));
        mu_task_set_status(&C, victim, MU_TASK_RELEASING);
    }
    victim = mu_cluster_task(&C, "default", "b-6");
    ck_assert(!mu_plugin_proportion.victim_ok(st, pa, victim, true));
    ck_assert(mu_plugin_proportion.victim_ok(st, pa, victim, false));
    /* team-a is within its share */
    ck_assert(!mu_plugin_proportion.victim_ok(
        st, pb, mu_cluster_task(&C, "default", "a-0"), true));
}
END_TEST

/* victim_queues_ok answers as victim_queue_ok queue by queue, and its
 * per-queue record follows every eviction (alloc_gen): asked after each
 * one, team-b is a victim queue until it is down to its share, then not. */
START_TEST(test_proportion_victim_queues_follow_evictions)
{
    struct mu_task *pa;
    struct mu_cqueue *qs[2];
    bool ok[2];

    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Running", -1);
    pods("a", 0, 6, "n1");
    pods("a", 6, 6, NULL);
    pods("b", 0, 12, "n1");
    open_ssn("  - name: proportion\n");
    pa = mu_cluster_task(&C, "default", "a-6");
    qs[0] = mu_cluster_queue(&C, "team-a");
    qs[1] = mu_cluster_queue(&C, "team-b");
    for (int i = 0; i <= 6; i++) {
        char name[16];

        mu_ssn_victim_queues_ok(&ssn, pa, qs, 2, true, ok);
        ck_assert(!ok[0]);
        ck_assert_int_eq(ok[0], mu_ssn_victim_queue_ok(&ssn, pa, qs[0], true));
        ck_assert_int_eq(ok[1], mu_ssn_victim_queue_ok(&ssn, pa, qs[1], true));
        ck_assert_int_eq(ok[1], i < 6);
        snprintf(name, sizeof(name), "b-%d", i);
        mu_task_set_status(&C, mu_cluster_task(&C, "default", name),
                           MU_TASK_RELEASING);
    }
    /* preempt: every queue may give way as far as proportion is concerned */
    mu_ssn_victim_queues_ok(&ssn, pa, qs, 2, false, ok);
    ck_assert(ok[0] && ok[1]);
}
END_TEST

/* A queue whose allocated has moved 2^32 - 1 times (a long-running serve)
 * is not taken for one whose record was never made: with a 32-bit
 * alloc_gen, alloc_gen + 1 wrapped to the "not made" 0, and team-b, over
 * its share, was answered from the zeroed record (not over, share 0). */
START_TEST(test_proportion_records_survive_a_long_alloc_gen)
{
    struct mu_task *pa;
    struct mu_cqueue *qs[2];
    bool ok[2];

    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 1, "Running", -1);
    add_job("b", "team-b", 1, "Running", -1);
    pods("a", 0, 6, "n1");
    pods("a", 6, 6, NULL);
    pods("b", 0, 12, "n1");
    open_ssn("  - name: proportion\n");
    pa = mu_cluster_task(&C, "default", "a-6");
    qs[0] = mu_cluster_queue(&C, "team-a");
    qs[1] = mu_cluster_queue(&C, "team-b");
    qs[0]->alloc_gen = UINT32_MAX;
    qs[1]->alloc_gen = UINT32_MAX;
    mu_ssn_victim_queues_ok(&ssn, pa, qs, 2, true, ok);
    ck_assert(!ok[0]);
    ck_assert(ok[1]); /* team-b holds 12 of a share of 6 */
    /* team-a at 6 of 12 comes before team-b at 12 of 6 */
    ck_assert_int_lt(mu_plugin_proportion.queue_order(
                         state(&mu_plugin_proportion), qs[0], qs[1]), 0);
}
END_TEST

/* ---- enqueue ---- */

/* A queue without a capability is bounded by the cluster (less what other
 * queues are guaranteed): the reason says that, not "its capability". */
START_TEST(test_proportion_enqueue_without_capability_names_the_cluster)
{
    struct mu_job *big, *huge;
    struct mu_sb why;
    void *st;

    mu_sb_init(&why);
    gpu_node("n1", 10);
    add_queue("free", 1, -1, -1, "Open");
    add_queue("held", 1, -1, 4, "Open");
    add_queue("capped", 1, 20, -1, "Open");
    big = add_job("big", "free", 1, "Pending", 8);
    huge = add_job("huge", "capped", 1, "Pending", 12);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, big, &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in queue free: "
                              "would reach 8 of the 6 it may use (the "
                              "cluster's 10 less 4 guaranteed to other "
                              "queues)");
    mu_sb_release(&why);
    mu_sb_init(&why);
    /* a capability of 20 above the cluster's 10 - 4: the cluster bounds */
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, huge, &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in queue capped: "
                              "would reach 12 of the 6 it may use (the "
                              "cluster's 10 less 4 guaranteed to other "
                              "queues)");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_proportion_enqueue_without_capability_or_guarantees)
{
    struct mu_job *big;
    struct mu_sb why;
    void *st;

    mu_sb_init(&why);
    gpu_node("n1", 5);
    add_queue("solo", 1, -1, -1, "Open");
    big = add_job("big", "solo", 1, "Pending", 6);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, big, &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in queue solo: "
                              "would reach 6 of the cluster's 5");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_proportion_enqueue_against_real_capability)
{
    struct mu_job *big, *fits, *more, *none, *closed;
    struct mu_sb why;
    void *st;

    mu_sb_init(&why);
    gpu_node("n1", 18);
    add_queue("team-b", 1, 8, -1, "Open");
    add_queue("team-c", 1, -1, -1, "Closed");
    add_job("run", "team-b", 6, "Running", 6);
    big = add_job("big", "team-b", 4, "Pending", 4);
    fits = add_job("fits", "team-b", 2, "Pending", 2);
    more = add_job("more", "team-b", 1, "Pending", 1);
    none = add_job("none", "team-b", 1, "Pending", -1);
    closed = add_job("closed", "team-c", 1, "Pending", 1);
    pods("run", 0, 6, "n1");
    pods("closed", 0, 1, NULL);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, big, &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in queue team-b: "
                              "would reach 10 of its capability 8");
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, fits, NULL),
                     MU_VOTE_PERMIT);
    mu_plugin_proportion.job_enqueued(st, fits);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->inqueue), 2);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, more, NULL),
                     MU_VOTE_REJECT);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, none, NULL),
                     MU_VOTE_PERMIT);
    mu_sb_release(&why);
    mu_sb_init(&why);
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, closed, &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "queue team-c is Closed");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_proportion_enqueue_discounts_elastic_and_counts_inqueue)
{
    struct mu_job *j;
    void *st;

    gpu_node("n1", 18);
    add_queue("team-b", 1, 8, -1, "Open");
    /* runs 6 but needs only 2: 4 are elastic */
    add_job("run", "team-b", 2, "Running", 2);
    add_job("wait", "team-b", 2, "Inqueue", 2);
    j = add_job("new", "team-b", 4, "Pending", 4);
    pods("run", 0, 6, "n1");
    pods("wait", 0, 2, NULL);
    open_ssn("  - name: proportion\n");
    st = state(&mu_plugin_proportion);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-b")->inqueue), 2);
    /* 4 + 6 allocated + 2 in queue - 4 elastic = 8 <= 8 */
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, j, NULL),
                     MU_VOTE_PERMIT);
}
END_TEST

START_TEST(test_enqueue_discounts_preemptable_lower_priority_work)
{
    struct mu_job *low, *high, *huge, *peer;
    void *st;

    gpu_node("n1", 8);
    add_queue("q", 1, 8, -1, "Open");
    /* runs 6 with minResources 2: 4 elastic, 2 preemptable by priority */
    low = add_job("low", "q", 2, "Running", 2);
    high = add_job("high", "q", 8, "Pending", 8);
    huge = add_job("huge", "q", 10, "Pending", 10);
    peer = add_job("peer", "q", 6, "Pending", 6);
    pods("low", 0, 6, "n1");
    open_ssn("  - name: overcommit\n    arguments:\n"
             "      overcommit-factor: 1.0\n  - name: proportion\n");
    high->priority = huge->priority = 10;
    st = state(&mu_plugin_proportion);
    /* 8 + 6 allocated - 4 elastic - 2 preemptable = 8 <= 8 */
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, high, NULL),
                     MU_VOTE_PERMIT);
    /* the elastic part is not discounted twice: 10 > 8 */
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, huge, NULL),
                     MU_VOTE_REJECT);
    /* 6 + 6 - 4 = 8 <= 8, but 6 + 6 > 8 GPUs in the cluster: only the job
     * that may preempt low's 6 GPUs gets past overcommit */
    ck_assert_int_eq(mu_plugin_proportion.job_enqueueable(st, peer, NULL),
                     MU_VOTE_PERMIT);
    st = state(&mu_plugin_overcommit);
    high->pg.min_resources.v[GPU] = 6;
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, high, NULL),
                     MU_VOTE_ABSTAIN);
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, peer, NULL),
                     MU_VOTE_REJECT);
    ck_assert_int_eq(low->priority, 0);
}
END_TEST

/* 18 GPUs all in use: team-a (weight 2) runs 6, team-b (weight 1) 12. */
static void full_cluster(void)
{
    gpu_node("n1", 18);
    add_queue("team-a", 2, -1, -1, "Open");
    add_queue("team-b", 1, -1, -1, "Open");
    add_job("a", "team-a", 6, "Running", -1);
    add_job("b", "team-b", 12, "Running", -1);
    add_job("a2", "team-a", 6, "Pending", 6);
    add_job("b2", "team-b", 6, "Pending", 6);
    pods("a", 0, 6, "n1");
    pods("b", 0, 12, "n1");
    pods("a2", 0, 6, NULL);
    pods("b2", 0, 6, NULL);
}

START_TEST(test_overcommit_abstains_for_a_queue_owed_its_share)
{
    struct mu_sb why;
    void *st;

    mu_sb_init(&why);
    full_cluster();
    open_ssn("  - name: overcommit\n  - name: proportion\n");
    st = state(&mu_plugin_overcommit);
    ck_assert_int_eq(gpus(&mu_cluster_queue(&C, "team-a")->deserved), 12);
    /* team-a holds 6 of its 12: reclaim will make room */
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(
                         st, mu_cluster_job(&C, "default", "a2"), &why),
                     MU_VOTE_ABSTAIN);
    ck_assert_uint_eq(why.len, 0);
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(
                         st, mu_cluster_job(&C, "default", "b2"), &why),
                     MU_VOTE_REJECT);
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in the cluster: "
                              "in use or admitted 18 + 6 requested > 21 "
                              "(18 × overcommit-factor 1.2, rounded down)");
    /* through the session: overcommit abstains, proportion permits */
    ck_assert(mu_ssn_job_enqueueable(&ssn, mu_cluster_job(&C, "default", "a2"),
                                     NULL));
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_overcommit_without_proportion_rejects_when_full)
{
    full_cluster();
    open_ssn("  - name: overcommit\n");
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(
                         state(&mu_plugin_overcommit),
                         mu_cluster_job(&C, "default", "a2"), NULL),
                     MU_VOTE_REJECT);
}
END_TEST

START_TEST(test_overcommit_counts_admitted_jobs)
{
    struct mu_job *j[4];
    void *st;

    gpu_node("n1", 18);
    add_queue("q", 1, -1, -1, "Open");
    for (int i = 0; i < 4; i++) {
        char name[8];

        snprintf(name, sizeof(name), "j%d", i);
        j[i] = add_job(name, "q", 1, "Pending", i < 3 ? 6 : 4);
    }
    add_job("nomin", "q", 1, "Pending", -1);
    open_ssn("  - name: overcommit\n");
    st = state(&mu_plugin_overcommit);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, j[i], NULL),
                         MU_VOTE_PERMIT);
        mu_plugin_overcommit.job_enqueued(st, j[i]);
    }
    /* 18 admitted + 4 > 21 */
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, j[3], NULL),
                     MU_VOTE_REJECT);
    /* the reason names the first MU_AHEAD_NAMED admitted this session, in
     * the order they were, and counts the rest */
    {
        struct mu_sb why;
        struct mu_job *big = add_job("big", "q", 1, "Pending", 8);

        mu_sb_init(&why);
        ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, big, &why),
                         MU_VOTE_REJECT);
        ck_assert_str_eq(why.buf,
                         "insufficient nvidia.com/gpu in the cluster: in use "
                         "or admitted 18 + 8 requested > 21 (18 × "
                         "overcommit-factor 1.2, rounded down); admitted "
                         "ahead of it and waiting for room: default/j0 (6 "
                         "nvidia.com/gpu), default/j1 (6 nvidia.com/gpu), "
                         "default/j2 (6 nvidia.com/gpu)");
        mu_sb_release(&why);
        mu_plugin_overcommit.job_enqueued(st, j[3]);
        mu_sb_init(&why);
        ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(st, big, &why),
                         MU_VOTE_REJECT);
        ck_assert_ptr_nonnull(strstr(why.buf, "default/j2 (6 nvidia.com/gpu) "
                                              "and 1 more"));
        mu_sb_release(&why);
    }
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(
                         st, mu_cluster_job(&C, "default", "nomin"), NULL),
                     MU_VOTE_PERMIT);
}
END_TEST

START_TEST(test_overcommit_counts_inqueue_and_uncovered_running)
{
    struct mu_job *j;
    struct mu_sb why;

    mu_sb_init(&why);
    gpu_node("n1", 10);
    add_queue("q", 1, -1, -1, "Open");
    add_job("wait", "q", 3, "Inqueue", 3);
    add_job("run", "q", 4, "Running", 4); /* 2 of 4 allocated */
    j = add_job("new", "q", 4, "Pending", 4);
    pods("run", 0, 2, "n1");
    open_ssn("  - name: overcommit\n    arguments:\n"
             "      overcommit-factor: 1.0\n");
    /* used 2 + in queue 3 + uncovered 2 + 4 > 10 */
    ck_assert_int_eq(mu_plugin_overcommit.job_enqueueable(
                         state(&mu_plugin_overcommit), j, &why),
                     MU_VOTE_REJECT);
    /* and names the jobs holding that room, with what each holds: the
     * running one its uncovered 2, the admitted one its 3 */
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in the cluster: "
                              "in use or admitted 7 + 4 requested > 10 "
                              "(10 × overcommit-factor 1); admitted ahead of "
                              "it and waiting for room: default/run (2 "
                              "nvidia.com/gpu), default/wait (3 "
                              "nvidia.com/gpu)");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_overcommit_factor_below_one_warns)
{
    gpu_node("n1", 10);
    open_ssn("  - name: overcommit\n    arguments:\n"
             "      overcommit-factor: 0.5\n");
    ck_assert_uint_eq(conf.nwarnings, 1);
    ck_assert_str_eq(conf.warnings[0], "plugin overcommit: argument "
                                       "overcommit-factor: 0.5 is below 1.0; "
                                       "using 1.2");
}
END_TEST

/* Plugins open every cycle: the same warning is kept once. */
START_TEST(test_overcommit_warning_is_kept_once)
{
    gpu_node("n1", 10);
    open_ssn("  - name: overcommit\n    arguments:\n"
             "      overcommit-factor: 0.5\n");
    mu_ssn_close(&ssn);
    mu_ssn_open(&ssn, &C, &conf, 0);
    ck_assert_uint_eq(conf.nwarnings, 1);
}
END_TEST

/* ---- gang ---- */

START_TEST(test_gang_valid_ready_pipelined_starving)
{
    struct mu_job *j;
    struct mu_sb why;
    struct mu_task *t;

    mu_sb_init(&why);
    gpu_node("n1", 8);
    add_queue("q", 1, -1, -1, "Open");
    j = add_job("g", "q", 3, "Inqueue", -1);
    pods("g", 0, 1, "n1");
    pods("g", 1, 1, NULL);
    mu_cluster_link(&C);
    ck_assert(!mu_plugin_gang.job_valid(NULL, j, &why));
    ck_assert_str_eq(why.buf, "Not enough valid tasks for gang-scheduling, "
                              "valid: 2, min: 3");
    pods("g", 2, 1, NULL);
    mu_cluster_link(&C);
    ck_assert(mu_plugin_gang.job_valid(NULL, j, NULL));
    ck_assert(!mu_plugin_gang.job_ready(NULL, j));
    ck_assert(mu_plugin_gang.job_starving(NULL, j));
    ck_assert_int_eq(mu_plugin_gang.job_pipelined(NULL, j), MU_VOTE_REJECT);

    t = mu_cluster_task(&C, "default", "g-1");
    mu_task_place(&C, t, mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    t = mu_cluster_task(&C, "default", "g-2");
    mu_task_place(&C, t, mu_cluster_node(&C, "n1"), MU_TASK_PIPELINED);
    ck_assert(!mu_plugin_gang.job_ready(NULL, j));
    ck_assert_int_eq(mu_plugin_gang.job_pipelined(NULL, j), MU_VOTE_PERMIT);
    ck_assert(!mu_plugin_gang.job_starving(NULL, j));
    mu_task_unplace(&C, t);
    mu_task_place(&C, t, mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    ck_assert(mu_plugin_gang.job_ready(NULL, j));
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_gang_orders_unready_jobs_first)
{
    struct mu_job *ready, *waiting;

    gpu_node("n1", 8);
    add_queue("q", 1, -1, -1, "Open");
    ready = add_job("r", "q", 1, "Running", -1);
    waiting = add_job("w", "q", 1, "Inqueue", -1);
    pods("r", 0, 1, "n1");
    pods("w", 0, 1, NULL);
    mu_cluster_link(&C);
    ck_assert_int_gt(mu_plugin_gang.job_order(NULL, ready, waiting), 0);
    ck_assert_int_lt(mu_plugin_gang.job_order(NULL, waiting, ready), 0);
    ck_assert_int_eq(mu_plugin_gang.job_order(NULL, ready, ready), 0);
}
END_TEST

START_TEST(test_gang_per_role_minimums)
{
    struct mu_job *j, *loose;
    struct mu_sb why;

    mu_sb_init(&why);
    gpu_node("n1", 8);
    add_queue("q", 1, -1, -1, "Open");
    j = add_job_x("g", "q", 3, "Inqueue", -1,
                  ",'minTaskMember':{'ps':1,'worker':2}");
    /* minMember 2 < 1 + 2: roles are not checked */
    loose = add_job_x("l", "q", 2, "Inqueue", -1,
                      ",'minTaskMember':{'ps':1,'worker':2}");
    pod_x("g", "g-ps-0", 1, NULL, "ps");
    pod_x("g", "g-chief-0", 1, NULL, "chief");
    pod_x("g", "g-worker-0", 1, NULL, "worker");
    pod_x("l", "l-ps-0", 1, "n1", "ps");
    pod_x("l", "l-chief-0", 1, "n1", "chief");
    mu_cluster_link(&C);
    ck_assert(!mu_plugin_gang.job_valid(NULL, j, &why));
    ck_assert_str_eq(why.buf, "Not enough valid pods of task worker for "
                              "gang-scheduling, valid: 1, min: 2");
    ck_assert(mu_plugin_gang.job_valid(NULL, loose, NULL));
    ck_assert(mu_plugin_gang.job_ready(NULL, loose));

    /* three ready tasks, but only one worker of two */
    pod_x("g", "g-worker-1", 1, NULL, "worker");
    mu_cluster_link(&C);
    ck_assert(mu_plugin_gang.job_valid(NULL, j, NULL));
    mu_task_place(&C, mu_cluster_task(&C, "default", "g-ps-0"),
                  mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    mu_task_place(&C, mu_cluster_task(&C, "default", "g-chief-0"),
                  mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    mu_task_place(&C, mu_cluster_task(&C, "default", "g-worker-0"),
                  mu_cluster_node(&C, "n1"), MU_TASK_ALLOCATED);
    ck_assert(mu_job_ready(j));
    ck_assert(!mu_plugin_gang.job_ready(NULL, j));
    ck_assert_int_eq(mu_plugin_gang.job_pipelined(NULL, j), MU_VOTE_REJECT);
    mu_task_place(&C, mu_cluster_task(&C, "default", "g-worker-1"),
                  mu_cluster_node(&C, "n1"), MU_TASK_PIPELINED);
    ck_assert_int_eq(mu_plugin_gang.job_pipelined(NULL, j), MU_VOTE_PERMIT);
    ck_assert(!mu_plugin_gang.job_ready(NULL, j));
    mu_sb_release(&why);
}
END_TEST

/* ---- priority, conformance, drf ---- */

START_TEST(test_priority_orders_and_victims)
{
    struct mu_job *hi, *lo;
    struct mu_task *h0, *h1, *l0;

    gpu_node("n1", 8);
    add_queue("q", 1, -1, -1, "Open");
    hi = add_job("hi", "q", 1, "Running", -1);
    lo = add_job("lo", "q", 1, "Running", -1);
    h0 = pod("hi", "hi-0", 1, NULL);
    h1 = pod("hi", "hi-1", 1, "n1");
    l0 = pod("lo", "lo-0", 1, "n1");
    mu_cluster_link(&C);
    hi->priority = 100;
    lo->priority = 10;
    h0->pod.priority = 5;
    h1->pod.priority = 1;
    ck_assert_int_lt(mu_plugin_priority.job_order(NULL, hi, lo), 0);
    ck_assert_int_gt(mu_plugin_priority.job_order(NULL, lo, hi), 0);
    ck_assert_int_lt(mu_plugin_priority.task_order(NULL, h0, h1), 0);
    ck_assert_int_eq(mu_plugin_priority.task_order(NULL, h0, h0), 0);
    /* between jobs by job priority, within a job by pod priority */
    ck_assert(mu_plugin_priority.victim_ok(NULL, h0, l0, false));
    ck_assert(!mu_plugin_priority.victim_ok(NULL, l0, h1, false));
    ck_assert(mu_plugin_priority.victim_ok(NULL, h0, h1, false));
    ck_assert(!mu_plugin_priority.victim_ok(NULL, h1, h0, false));
    ck_assert(mu_plugin_priority.victim_ok(NULL, l0, h1, true));
    /* 1 ready of 2 tasks */
    ck_assert(mu_plugin_priority.job_starving(NULL, hi));
    ck_assert(!mu_plugin_priority.job_starving(NULL, lo));
}
END_TEST

START_TEST(test_conformance_spares_critical_pods)
{
    struct mu_task *p, *sys, *crit, *plain;

    gpu_node("n1", 8);
    p = pod("x", "p", 1, NULL);
    sys = add_task(js("{'metadata':{'namespace':'kube-system','name':'dns'},"
                      "'spec':{'nodeName':'n1','containers':[{'name':'c'}]},"
                      "'status':{'phase':'Running'}}"));
    crit = add_task(js("{'metadata':{'namespace':'default','name':'agent'},"
                       "'spec':{'nodeName':'n1','priorityClassName':"
                       "'system-node-critical','containers':[{'name':'c'}]},"
                       "'status':{'phase':'Running'}}"));
    plain = pod("y", "plain", 1, "n1");
    ck_assert(!mu_plugin_conformance.victim_ok(NULL, p, sys, false));
    ck_assert(!mu_plugin_conformance.victim_ok(NULL, p, crit, true));
    ck_assert(mu_plugin_conformance.victim_ok(NULL, p, plain, false));
    ck_assert(mu_plugin_conformance.victim_ok(NULL, p, plain, true));
}
END_TEST

START_TEST(test_drf_lower_dominant_share_first)
{
    struct mu_job *g, *c;

    gpu_node("n1", 16); /* 64 cores */
    add_queue("q", 1, -1, -1, "Open");
    g = add_job("g", "q", 1, "Running", -1);
    c = add_job("c", "q", 1, "Running", -1);
    pods("g", 0, 4, "n1"); /* 4/16 GPUs = 0.25 */
    add_task(js("{'metadata':{'namespace':'default','name':'c-0',"
                "'annotations':{'scheduling.k8s.io/group-name':'c'}},"
                "'spec':{'nodeName':'n1','containers':[{'name':'c',"
                "'resources':{'requests':{'cpu':'32'}}}]},"
                "'status':{'phase':'Running'}}")); /* 32/64 cpu = 0.5 */
    open_ssn("  - name: drf\n");
    ck_assert_int_lt(mu_plugin_drf.job_order(state(&mu_plugin_drf), g, c), 0);
    ck_assert_int_gt(mu_plugin_drf.job_order(state(&mu_plugin_drf), c, g), 0);
}
END_TEST

/* ---- predicates ---- */

static struct mu_task *pred_pod(const char *name, const char *spec)
{
    return add_task(js("{'metadata':{'namespace':'default','name':'%s'},"
                       "'spec':{%s'containers':[{'name':'c'}]}}",
                       name, spec));
}

START_TEST(test_predicates_selector_affinity_taints_unschedulable)
{
    struct mu_cnode *plain, *a100, *tainted, *cordoned;
    struct mu_task *any, *sel, *aff, *tol, *tol_cordon;
    struct mu_fit fit;
    void *st;

    plain = add_node(js("{'metadata':{'name':'plain','labels':{'gpu':'t4'}},"
                        "'status':{'allocatable':{'cpu':'8'}}}"));
    a100 = add_node(js("{'metadata':{'name':'a100','labels':{'gpu':'a100',"
                       "'zone':'z1'}},'status':{'allocatable':{'cpu':'8'}}}"));
    tainted = add_node(js("{'metadata':{'name':'tainted'},'spec':{'taints':["
                          "{'key':'dedicated','value':'ml','effect':"
                          "'NoSchedule'},{'key':'soft','effect':"
                          "'PreferNoSchedule'}]},'status':{'allocatable':"
                          "{'cpu':'8'}}}"));
    cordoned = add_node(js("{'metadata':{'name':'cordoned'},'spec':{"
                           "'unschedulable':true},'status':{'allocatable':"
                           "{'cpu':'8'}}}"));
    any = pred_pod("any", "");
    sel = pred_pod("sel", "'nodeSelector':{'gpu':'a100'},");
    aff = pred_pod("aff", "'affinity':{'nodeAffinity':{"
                          "'requiredDuringSchedulingIgnoredDuringExecution':{"
                          "'nodeSelectorTerms':[{'matchExpressions':[{'key':"
                          "'zone','operator':'In','values':['z1','z2']}]}]}}},");
    tol = pred_pod("tol", "'tolerations':[{'key':'dedicated','operator':"
                          "'Equal','value':'ml','effect':'NoSchedule'}],");
    tol_cordon = pred_pod("tolc", "'tolerations':[{'key':"
                                  "'node.kubernetes.io/unschedulable',"
                                  "'operator':'Exists','effect':"
                                  "'NoSchedule'}],");
    open_ssn("  - name: predicates\n");
    st = state(&mu_plugin_predicates);
    ck_assert(mu_plugin_predicates.predicate(st, any, plain, &fit));
    ck_assert(mu_plugin_predicates.predicate(st, sel, a100, &fit));
    ck_assert(!mu_plugin_predicates.predicate(st, sel, plain, &fit));
    ck_assert_int_eq(fit.code, MU_FIT_SELECTOR);
    ck_assert(mu_plugin_predicates.predicate(st, aff, a100, &fit));
    ck_assert(!mu_plugin_predicates.predicate(st, aff, plain, &fit));
    ck_assert_int_eq(fit.code, MU_FIT_SELECTOR);
    ck_assert(!mu_plugin_predicates.predicate(st, any, tainted, &fit));
    ck_assert_int_eq(fit.code, MU_FIT_TAINT);
    ck_assert(mu_plugin_predicates.predicate(st, tol, tainted, &fit));
    ck_assert(!mu_plugin_predicates.predicate(st, any, cordoned, &fit));
    ck_assert_int_eq(fit.code, MU_FIT_UNSCHEDULABLE);
    ck_assert(mu_plugin_predicates.predicate(st, tol_cordon, cordoned, &fit));
}
END_TEST

START_TEST(test_predicates_arguments_switch_checks_off)
{
    struct mu_cnode *tainted, *cordoned;
    struct mu_task *sel;
    void *st;

    add_node(js("{'metadata':{'name':'plain'},'status':{'allocatable':"
                "{'cpu':'8'}}}"));
    tainted = add_node(js("{'metadata':{'name':'tainted'},'spec':{'taints':["
                          "{'key':'x','effect':'NoExecute'}]},'status':"
                          "{'allocatable':{'cpu':'8'}}}"));
    cordoned = add_node(js("{'metadata':{'name':'cordoned'},'spec':{"
                           "'unschedulable':true},'status':{'allocatable':"
                           "{'cpu':'8'}}}"));
    sel = pred_pod("sel", "'nodeSelector':{'gpu':'a100'},");
    open_ssn("  - name: predicates\n    arguments:\n"
             "      predicate.NodeAffinityEnable: false\n"
             "      predicate.TaintTolerationEnable: \"false\"\n");
    st = state(&mu_plugin_predicates);
    ck_assert(mu_plugin_predicates.predicate(
        st, sel, mu_cluster_node(&C, "plain"), NULL));
    ck_assert(mu_plugin_predicates.predicate(st, sel, tainted, NULL));
    ck_assert(!mu_plugin_predicates.predicate(st, sel, cordoned, NULL));
}
END_TEST

/* ---- scores ---- */

/* A node of 8 cpu, 16Gi and 8 GPUs that uses 2 cpu, 4Gi and 4 GPUs, and a
 * pending task asking for cpu cores, 4Gi and gpu GPUs. */
static struct mu_task *score_setup(int cpu, int gpu)
{
    add_node(js("{'metadata':{'name':'n1'},'status':{'allocatable':{'cpu':"
                "'8','memory':'16Gi','pods':'110','nvidia.com/gpu':'8'}}}"));
    add_task(js("{'metadata':{'namespace':'default','name':'used'},'spec':{"
                "'nodeName':'n1','containers':[{'name':'c','resources':{"
                "'requests':{'cpu':'2','memory':'4Gi','nvidia.com/gpu':"
                "'4'}}}]},'status':{'phase':'Running'}}"));
    return add_task(js("{'metadata':{'namespace':'default','name':'t'},"
                       "'spec':{'containers':[{'name':'c','resources':{"
                       "'requests':{'cpu':'%d','memory':'4Gi',"
                       "'nvidia.com/gpu':'%d'}}}]}}",
                       cpu, gpu));
}

START_TEST(test_binpack_scores_cpu_memory_and_gpus_by_default)
{
    struct mu_task *t = score_setup(2, 2);
    struct mu_cnode *n = mu_cluster_node(&C, "n1");

    open_ssn("  - name: binpack\n");
    /* (4/8 + 8/16 + 6/8) / 3 x 100: GPUs count without being listed */
    ck_assert_double_eq_tol(
        mu_plugin_binpack.node_score(state(&mu_plugin_binpack), t, n),
        175.0 / 3, 1e-9);
}
END_TEST

START_TEST(test_binpack_accelerators_zero_is_volcanos_cpu_and_memory)
{
    struct mu_task *t = score_setup(2, 2);
    struct mu_cnode *n = mu_cluster_node(&C, "n1");

    open_ssn("  - name: binpack\n    arguments:\n"
             "      binpack.accelerators: 0\n");
    /* (4/8 + 8/16) / 2 x 100; GPUs left out */
    ck_assert_double_eq_tol(
        mu_plugin_binpack.node_score(state(&mu_plugin_binpack), t, n), 50.0,
        1e-9);
}
END_TEST

START_TEST(test_binpack_listed_gpus_and_weights)
{
    struct mu_task *t = score_setup(2, 2);
    struct mu_cnode *n = mu_cluster_node(&C, "n1");
    void *st;

    open_ssn("  - name: binpack\n    arguments:\n"
             "      binpack.weight: 2\n"
             "      binpack.resources: \" nvidia.com/gpu , example.com/foo\"\n"
             "      binpack.resources.nvidia.com/gpu: 2\n");
    st = state(&mu_plugin_binpack);
    /* (0.5 + 0.5 + 2 x 6/8) / 4 x 100 x 2 */
    ck_assert_double_eq_tol(mu_plugin_binpack.node_score(st, t, n), 125.0,
                            1e-9);
    /* 4 + 5 GPUs do not fit: 0 */
    t->pod.req.v[GPU] = 5;
    ck_assert_double_eq_tol(mu_plugin_binpack.node_score(st, t, n), 0.0,
                            1e-9);
}
END_TEST

START_TEST(test_nodeorder_least_balanced_most)
{
    struct mu_task *t = score_setup(4, 0);
    struct mu_cnode *n = mu_cluster_node(&C, "n1");

    open_ssn("  - name: nodeorder\n");
    /* cpu 6/8, memory 8/16: least (25 + 50) / 2 = 37; balanced
     * (1 - 0.125) x 100 = 87 */
    ck_assert_double_eq_tol(
        mu_plugin_nodeorder.node_score(state(&mu_plugin_nodeorder), t, n),
        124.0, 1e-9);
}
END_TEST

START_TEST(test_nodeorder_weights)
{
    struct mu_task *t = score_setup(4, 0);
    struct mu_cnode *n = mu_cluster_node(&C, "n1");

    open_ssn("  - name: nodeorder\n    arguments:\n"
             "      leastrequested.weight: 0\n"
             "      balancedresource.weight: 2\n"
             "      mostrequested.weight: 1\n"
             "      nodeaffinity.weight: x\n");
    /* most (75 + 50) / 2 = 62, plus 2 x 87 */
    ck_assert_double_eq_tol(
        mu_plugin_nodeorder.node_score(state(&mu_plugin_nodeorder), t, n),
        236.0, 1e-9);
    ck_assert_uint_eq(conf.nwarnings, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugins");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_registry_lists_plugins_in_order);
    tcase_add_test(tc, test_conf_knows_the_registry_plugins);
    tcase_add_test(tc, test_proportion_book_queues_deserve_12_and_6);
    tcase_add_test(tc, test_proportion_largest_remainder_loses_no_gpu);
    tcase_add_test(tc, test_proportion_capability_caps_and_rest_flows_on);
    tcase_add_test(tc,
                   test_proportion_enqueue_without_capability_names_the_cluster);
    tcase_add_test(tc, test_proportion_enqueue_without_capability_or_guarantees);
    tcase_add_test(tc, test_proportion_guarantee_raises_and_limits_others);
    tcase_add_test(tc, test_proportion_request_caps_and_counts_pending_jobs);
    tcase_add_test(tc, test_proportion_queue_order_lower_share_first);
    tcase_add_test(tc, test_proportion_allocatable_within_deserved_only);
    tcase_add_test(tc, test_proportion_allocatable_follows_live_allocation);
    tcase_add_test(tc, test_proportion_overused_at_share_with_nothing_pending);
    tcase_add_test(tc, test_proportion_reclaims_only_from_queues_over_deserved);
    tcase_add_test(tc, test_proportion_victim_queues_follow_evictions);
    tcase_add_test(tc, test_proportion_records_survive_a_long_alloc_gen);
    tcase_add_test(tc, test_proportion_enqueue_against_real_capability);
    tcase_add_test(tc,
                   test_proportion_enqueue_discounts_elastic_and_counts_inqueue);
    tcase_add_test(tc, test_enqueue_discounts_preemptable_lower_priority_work);
    tcase_add_test(tc, test_overcommit_abstains_for_a_queue_owed_its_share);
    tcase_add_test(tc, test_overcommit_without_proportion_rejects_when_full);
    tcase_add_test(tc, test_overcommit_counts_admitted_jobs);
    tcase_add_test(tc, test_overcommit_counts_inqueue_and_uncovered_running);
    tcase_add_test(tc, test_overcommit_factor_below_one_warns);
    tcase_add_test(tc, test_overcommit_warning_is_kept_once);
    tcase_add_test(tc, test_gang_valid_ready_pipelined_starving);
    tcase_add_test(tc, test_gang_orders_unready_jobs_first);
    tcase_add_test(tc, test_gang_per_role_minimums);
    tcase_add_test(tc, test_priority_orders_and_victims);
    tcase_add_test(tc, test_conformance_spares_critical_pods);
    tcase_add_test(tc, test_drf_lower_dominant_share_first);
    tcase_add_test(tc, test_predicates_selector_affinity_taints_unschedulable);
    tcase_add_test(tc, test_predicates_arguments_switch_checks_off);
    tcase_add_test(tc, test_binpack_scores_cpu_memory_and_gpus_by_default);
    tcase_add_test(tc, test_binpack_accelerators_zero_is_volcanos_cpu_and_memory);
    tcase_add_test(tc, test_binpack_listed_gpus_and_weights);
    tcase_add_test(tc, test_nodeorder_least_balanced_most);
    tcase_add_test(tc, test_nodeorder_weights);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
