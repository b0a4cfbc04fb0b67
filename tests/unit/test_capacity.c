/* test_capacity.c - the queue tree (sched/qtree.h) and the capacity
 * plugin, flat and with enableHierarchy, on small clusters. */
#include "sched/qtree.h"
#include "test_plugins_harness.h"

#define TREE "  - name: capacity\n    enableHierarchy: true\n"
#define FLAT "  - name: capacity\n"

/* A queue with parent (NULL: none), deserved/capability/guarantee GPUs
 * (< 0: absent) and state. */
static struct mu_cqueue *tq(const char *name, const char *parent, int des,
                            int cap, int guar, const char *state)
{
    char p[96] = "", d[96] = "", c[96] = "", g[96] = "";
    struct mu_queue_spec q;
    struct mu_err err;
    struct mu_cqueue *cq;
    json_t *j;

    if (parent)
        snprintf(p, sizeof(p), ",'parent':'%s'", parent);
    if (des >= 0)
        snprintf(d, sizeof(d), ",'deserved':{'nvidia.com/gpu':'%d'}", des);
    if (cap >= 0)
        snprintf(c, sizeof(c), ",'capability':{'nvidia.com/gpu':'%d'}", cap);
    if (guar >= 0)
        snprintf(g, sizeof(g),
                 ",'guarantee':{'resource':{'nvidia.com/gpu':'%d'}}", guar);
    j = js("{'metadata':{'name':'%s'},'spec':{'weight':1%s%s%s%s},"
           "'status':{'state':'%s'}}",
           name, p, d, c, g, state);
    ck_assert_int_eq(mu_queue_decode(j, &C.rn, &q, &err), 0);
    json_decref(j);
    cq = mu_cluster_add_queue(&C, &q, &err);
    ck_assert_ptr_nonnull(cq);
    return cq;
}

static int qi(const char *name)
{
    const struct mu_cqueue *q = mu_cluster_queue(&C, name);

    ck_assert_ptr_nonnull(q);
    return q->index;
}

/* ---- the tree ---- */

START_TEST(test_qtree_depths_faults_and_order)
{
    struct mu_qtree t;
    struct mu_sb sb;
    struct mu_res *roll;

    gpu_node("n1", 8);
    tq("eng", NULL, 6, -1, -1, "Open");
    tq("train", "eng", 4, -1, -1, "Open");
    tq("train-a", "train", 2, -1, -1, "Open");
    tq("infer", "eng", 2, -1, -1, "Open");
    tq("research", "root", 2, -1, -1, "Open");
    tq("lost", "nowhere", -1, -1, -1, "Open");
    tq("below-lost", "lost", -1, -1, -1, "Open");
    tq("ring-a", "ring-b", -1, -1, -1, "Open");
    tq("ring-b", "ring-a", -1, -1, -1, "Open");
    tq("under-ring", "ring-a", -1, -1, -1, "Open");
    add_job("ta", "train-a", 1, "Running", -1);
    pod("ta", "ta-0", 2, "n1");
    add_job("inf", "infer", 1, "Running", -1);
    pod("inf", "inf-0", 3, "n1");
    mu_cluster_link(&C);
    mu_qtree_build(&t, &C);
    ck_assert_int_eq(t.root, -1); /* no queue "root": imagined */
    ck_assert_int_eq(t.depth[qi("eng")], 1);
    ck_assert_int_eq(t.depth[qi("research")], 1);
    ck_assert_int_eq(t.depth[qi("train")], 2);
    ck_assert_int_eq(t.depth[qi("train-a")], 3);
    ck_assert_int_eq(t.maxdepth, 3);
    ck_assert_int_eq(t.parent[qi("train-a")], qi("train"));
    ck_assert_int_eq(t.parent[qi("eng")], -1);
    ck_assert_int_eq(t.nchildren[qi("eng")], 2);
    ck_assert_int_eq(t.nchildren[qi("train-a")], 0);
    /* where two queues meet: siblings at their parent, cousins higher */
    ck_assert_int_eq(mu_qtree_meet(&t, qi("train"), qi("infer")), 1);
    ck_assert_int_eq(mu_qtree_meet(&t, qi("train-a"), qi("infer")), 1);
    ck_assert_int_eq(mu_qtree_meet(&t, qi("train-a"), qi("train")), 2);
    ck_assert_int_eq(mu_qtree_meet(&t, qi("train-a"), qi("research")), 0);
    /* faults, each naming the queue at fault */
    ck_assert_int_eq(t.fault[qi("eng")], MU_QTREE_OK);
    ck_assert_int_eq(t.fault[qi("lost")], MU_QTREE_NO_PARENT);
    ck_assert_int_eq(t.fault[qi("below-lost")], MU_QTREE_BELOW);
    ck_assert_int_eq(t.fault[qi("ring-a")], MU_QTREE_CYCLE);
    ck_assert_int_eq(t.fault[qi("ring-b")], MU_QTREE_CYCLE);
    ck_assert_int_eq(t.fault[qi("under-ring")], MU_QTREE_BELOW);
    mu_sb_init(&sb);
    ck_assert(!mu_qtree_fault_why(&t, &C, qi("eng"), &sb));
    ck_assert(mu_qtree_fault_why(&t, &C, qi("below-lost"), &sb));
    ck_assert_str_eq(sb.buf, "queue below-lost is below queue lost, whose "
                             "parent nowhere does not exist");
    mu_sb_release(&sb);
    mu_sb_init(&sb);
    ck_assert(mu_qtree_fault_why(&t, &C, qi("under-ring"), &sb));
    ck_assert_str_eq(sb.buf, "queue under-ring is below queue ring-a, whose "
                             "parents go round");
    mu_sb_release(&sb);
    /* parents come before their children */
    for (size_t k = 0; k < t.n; k++)
        for (size_t m = k + 1; m < t.n; m++)
            ck_assert_int_ne(t.parent[t.order[k]], t.order[m]);
    /* status.allocated rolls up */
    roll = mu_xcalloc(t.n, sizeof(*roll));
    mu_qtree_rollup(&t, &C, roll);
    ck_assert_int_eq(gpus(&roll[qi("train")]), 2);
    ck_assert_int_eq(gpus(&roll[qi("eng")]), 5);
    ck_assert_int_eq(gpus(&roll[qi("research")]), 0);
    free(roll);
    mu_qtree_free(&t);
}
END_TEST

START_TEST(test_qtree_real_root_is_depth_zero)
{
    struct mu_qtree t;

    tq("a", NULL, -1, -1, -1, "Open");
    tq("root", NULL, -1, -1, -1, "Open");
    tq("b", "a", -1, -1, -1, "Open");
    mu_cluster_link(&C);
    mu_qtree_build(&t, &C);
    ck_assert_int_eq(t.root, qi("root"));
    ck_assert_int_eq(t.depth[qi("root")], 0);
    ck_assert_int_eq(t.parent[qi("root")], -1);
    ck_assert_int_eq(t.parent[qi("a")], qi("root"));
    ck_assert_int_eq(t.depth[qi("b")], 2);
    ck_assert_int_eq(t.order[0], qi("root"));
    ck_assert_int_eq(mu_qtree_meet(&t, qi("a"), qi("b")), 1);
    mu_qtree_free(&t);
}
END_TEST

/* ---- capacity ---- */

/* eng 24 (train 16: train-a 8, train-b 8; infer 8), research 8 (vision 4,
 * nlp 4) on 4 x 8 GPUs. */
static void org(int eng_cap)
{
    for (int i = 0; i < 4; i++) {
        char n[16];

        snprintf(n, sizeof(n), "n%d", i);
        gpu_node(n, 8);
    }
    tq("eng", NULL, 24, eng_cap, -1, "Open");
    tq("train", "eng", 16, -1, -1, "Open");
    tq("train-a", "train", 8, -1, -1, "Open");
    tq("train-b", "train", 8, -1, -1, "Open");
    tq("infer", "eng", 8, -1, -1, "Open");
    tq("research", NULL, 8, -1, -1, "Open");
    tq("vision", "research", 4, -1, -1, "Open");
    tq("nlp", "research", 4, -1, -1, "Open");
}

/* infer runs one job of three 8-GPU pods on n0..n2 (minResources min_gpu
 * GPUs, < 0: none) */
static void infer_runs(int min_gpu)
{
    add_job("inf", "infer", 1, "Running", min_gpu);
    for (int i = 0; i < 3; i++) {
        char n[16], name[16];

        snprintf(n, sizeof(n), "n%d", i);
        snprintf(name, sizeof(name), "inf-%d", i);
        pod("inf", name, 8, n);
    }
}

static struct mu_cqueue *Q(const char *name)
{
    return mu_cluster_queue(&C, name);
}

START_TEST(test_capacity_tree_deserved_bounded_by_parent_and_limits)
{
    gpu_node("n1", 8);
    gpu_node("n2", 8);
    tq("eng", NULL, 10, 12, -1, "Open");
    tq("team", "eng", 14, -1, -1, "Open");   /* more than eng deserves */
    tq("other", "eng", 2, 20, 3, "Open");    /* capability over eng's */
    tq("flat", NULL, 40, -1, -1, "Open");    /* more than the cluster */
    open_ssn(TREE);
    /* team: bounded by eng's 10, and by its limit: eng's 12 less the 3
     * other is guaranteed */
    ck_assert_int_eq(gpus(&Q("team")->deserved), 9);
    ck_assert_int_eq(gpus(&Q("flat")->deserved), 16);
    /* other's guarantee raises its deserved, and is kept from team */
    ck_assert_int_eq(gpus(&Q("other")->deserved), 3);
    ck_assert_int_eq(gpus(&Q("eng")->real_capability), 12);
    ck_assert_int_eq(gpus(&Q("team")->real_capability), 9);
    ck_assert_int_eq(gpus(&Q("other")->real_capability), 12);
    /* the overbooked children are said once */
    ck_assert_uint_ge(conf.nwarnings, 1);
    ck_assert_str_eq(conf.warnings[conf.nwarnings - 1],
                     "plugin capacity: the queues under eng deserve 16 "
                     "nvidia.com/gpu in all, more than its 10: they "
                     "cannot all have it at once");
}
END_TEST

START_TEST(test_capacity_allocatable_checks_every_queue_up)
{
    struct mu_task *t;
    struct mu_sb why;

    org(24);
    infer_runs(24);
    add_job("ta", "train-a", 1, "Inqueue", -1);
    t = pod("ta", "ta-0", 1, NULL);
    add_job("vi", "vision", 1, "Inqueue", -1);
    pod("vi", "vi-0", 1, NULL);
    open_ssn(TREE);
    /* eng holds its capability of 24 through infer: train-a may not take
     * one more, though it is far below its deserved 8 */
    ck_assert_int_eq(gpus(&Q("eng")->tree_allocated), 24);
    mu_sb_init(&why);
    ck_assert(!mu_ssn_allocatable(&ssn, Q("train-a"), t, &why));
    ck_assert_str_eq(why.buf, "queue eng (above train-a) would exceed the "
                              "most it may hold: nvidia.com/gpu allocated "
                              "24 + 1 requested > 24");
    mu_sb_release(&why);
    ck_assert(mu_ssn_allocatable(&ssn, Q("vision"), C.jobs[2]->tasks[0],
                                 NULL));
    /* a job in a queue with children is refused */
    mu_sb_init(&why);
    ck_assert(!mu_ssn_allocatable(&ssn, Q("train"), t, &why));
    ck_assert_str_eq(why.buf, "queue train has child queues: jobs go to "
                              "the queues at the leaves of the tree");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_capacity_tree_allocated_follows_the_session)
{
    struct mu_task *t;

    org(-1);
    add_job("ta", "train-a", 1, "Inqueue", -1);
    t = pod("ta", "ta-0", 3, NULL);
    open_ssn(TREE);
    ck_assert_int_eq(gpus(&Q("eng")->tree_allocated), 0);
    mu_stmt_place(&ssn.stmt, t, C.nodes[0], MU_TASK_ALLOCATED);
    ck_assert_int_eq(gpus(&Q("train-a")->tree_allocated), 3);
    ck_assert_int_eq(gpus(&Q("train")->tree_allocated), 3);
    ck_assert_int_eq(gpus(&Q("eng")->tree_allocated), 3);
    ck_assert_int_eq(gpus(&Q("research")->tree_allocated), 0);
    mu_stmt_rollback(&ssn.stmt, 0);
    ck_assert_int_eq(gpus(&Q("eng")->tree_allocated), 0);
}
END_TEST

START_TEST(test_capacity_enqueue_owed_branch_passes_a_full_parent)
{
    struct mu_job *ta, *inf4;
    struct mu_sb why;

    org(24);
    infer_runs(24);
    ta = add_job("ta", "train-a", 8, "Pending", 8);
    pods("ta", 0, 8, NULL);
    inf4 = add_job("inf4", "infer", 4, "Pending", 4);
    pods("inf4", 0, 4, NULL);
    open_ssn(TREE);
    /* train-a is owed its 8 (and train its 16): eng's limit, reached by
     * infer, is for reclaim to settle */
    ck_assert(mu_ssn_job_enqueueable(&ssn, ta, NULL));
    /* infer, over its deserved, is held at eng's limit */
    mu_sb_init(&why);
    ck_assert(!mu_ssn_job_enqueueable(&ssn, inf4, &why));
    ck_assert_str_eq(why.buf, "insufficient nvidia.com/gpu in queue infer: "
                              "would reach 28 of the 24 it may hold");
    mu_sb_release(&why);
}
END_TEST

/* infer runs 24 on n0..n2, vision 8 on n3; train-a's and nlp's gangs wait */
static void busy_org(void)
{
    org(-1);
    infer_runs(-1);
    add_job("vis", "vision", 1, "Running", -1);
    pod("vis", "vis-0", 8, "n3");
    add_job("ta", "train-a", 1, "Inqueue", -1);
    pod("ta", "ta-0", 8, NULL);
    add_job("nl", "nlp", 1, "Inqueue", -1);
    pod("nl", "nl-0", 4, NULL);
}

static struct mu_task *first(const char *job)
{
    return mu_cluster_job(&C, "default", job)->tasks[0];
}

START_TEST(test_capacity_reclaim_nearest_first_and_owed_branches)
{
    struct mu_task *ta, *nl;
    struct mu_sb why;

    busy_org();
    open_ssn(TREE);
    ta = first("ta");
    nl = first("nl");
    ck_assert(mu_ssn_preemptive(&ssn, Q("train-a"), ta, NULL));
    ck_assert(mu_ssn_preemptive(&ssn, Q("nlp"), nl, NULL));
    /* train-a: infer (a cousin under eng) before vision (under research) */
    ck_assert_int_lt(mu_ssn_victim_queue_rank(&ssn, ta, Q("infer")),
                     mu_ssn_victim_queue_rank(&ssn, ta, Q("vision")));
    ck_assert(mu_ssn_victim_queue_ok(&ssn, ta, Q("infer"), true));
    /* vision is over its 4, but research, above it, is at its deserved 8:
     * it gives nothing to eng */
    ck_assert(!mu_ssn_victim_queue_ok(&ssn, ta, Q("vision"), true));
    /* nlp: its sibling vision is over its 4; infer is not its to take,
     * as research, at its deserved 8, is owed none of eng's */
    ck_assert(mu_ssn_victim_queue_ok(&ssn, nl, Q("vision"), true));
    ck_assert(!mu_ssn_victim_queue_ok(&ssn, nl, Q("infer"), true));
    ck_assert(mu_ssn_victim_ok(&ssn, nl, first("vis"), true));
    ck_assert(!mu_ssn_victim_ok(&ssn, nl, first("inf"), true));
    /* preempt is not capacity's to judge */
    ck_assert(mu_ssn_victim_ok(&ssn, nl, first("inf"), false));
    /* a gang bigger than its queue deserves reclaims nothing */
    mu_ssn_close(&ssn);
    opened = false;
    mu_conf_release(&conf);
    add_job("big", "nlp", 1, "Inqueue", -1);
    pod("big", "big-0", 6, NULL);
    open_ssn(TREE);
    mu_sb_init(&why);
    ck_assert(!mu_ssn_preemptive(&ssn, Q("nlp"), first("big"), &why));
    ck_assert_str_eq(why.buf, "queue nlp may reclaim only within its "
                              "deserved share: nvidia.com/gpu allocated 0 + "
                              "6 the gang lacks > deserved 4");
    mu_sb_release(&why);
}
END_TEST

START_TEST(test_capacity_flat_ignores_parents)
{
    busy_org();
    open_ssn(FLAT);
    /* flat: every queue under the root; train-a's limit is the cluster's */
    ck_assert_int_eq(mu_ssn_victim_queue_rank(&ssn, first("ta"), Q("infer")),
                     mu_ssn_victim_queue_rank(&ssn, first("ta"),
                                              Q("vision")));
    ck_assert(mu_ssn_allocatable(&ssn, Q("train"), first("ta"), NULL));
    ck_assert_int_eq(gpus(&Q("train-a")->real_capability), 32);
    /* nlp may take from infer too: no tree says research is owed nothing */
    ck_assert(mu_ssn_victim_queue_ok(&ssn, first("nl"), Q("infer"), true));
}
END_TEST

START_TEST(test_capacity_closed_parent_closes_its_tree)
{
    struct mu_sb why;

    org(-1);
    mu_cluster_queue(&C, "research")->spec.state = MU_QUEUE_CLOSED;
    add_job("nl", "nlp", 1, "Pending", -1);
    pod("nl", "nl-0", 1, NULL);
    open_ssn(TREE);
    mu_sb_init(&why);
    ck_assert(!mu_ssn_job_enqueueable(&ssn, mu_cluster_job(&C, "default",
                                                          "nl"),
                                      &why));
    ck_assert_str_eq(why.buf, "queue nlp is below queue research, which is "
                              "Closed");
    mu_sb_release(&why);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("capacity");
    TCase *tc = tcase_create("tree");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_qtree_depths_faults_and_order);
    tcase_add_test(tc, test_qtree_real_root_is_depth_zero);
    tcase_add_test(tc, test_capacity_tree_deserved_bounded_by_parent_and_limits);
    tcase_add_test(tc, test_capacity_allocatable_checks_every_queue_up);
    tcase_add_test(tc, test_capacity_tree_allocated_follows_the_session);
    tcase_add_test(tc, test_capacity_enqueue_owed_branch_passes_a_full_parent);
    tcase_add_test(tc, test_capacity_reclaim_nearest_first_and_owed_branches);
    tcase_add_test(tc, test_capacity_flat_ignores_parents);
    tcase_add_test(tc, test_capacity_closed_parent_closes_its_tree);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
