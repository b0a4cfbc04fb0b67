/* The /debug report: what muster says about queues and gangs (report.h). */
#include <check.h>
#include <stdlib.h>

#include "sched/cycle.h"
#include "sched/report.h"
#include "sim/sim.h"

static struct mu_sim sim;
static struct mu_cycle_out out;
static json_t *snap;

#define NODE(name)                                                            \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: "         \
    "{nvidia.com/gpu.product: H100}}\nstatus: {allocatable: {cpu: '64', "     \
    "memory: 512Gi, nvidia.com/gpu: 8, pods: '110'}}\n---\n"

#define QUEUE(name, spec)                                                     \
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"                \
    "metadata: {name: " name "}\nspec: " spec "\n---\n"

#define PG(name, queue, min)                                                  \
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"             \
    "metadata: {name: " name ", namespace: t}\nspec: {minMember: " min        \
    ", queue: " queue "}\n---\n"

#define POD(name, group, gpus)                                                \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: t, "   \
    "annotations: {scheduling.k8s.io/group-name: " group "}}\nspec:\n"       \
    "  schedulerName: volcano\n  containers:\n  - name: c\n    resources:\n" \
    "      limits: {nvidia.com/gpu: " gpus "}\n---\n"

static struct mu_job *job(const char *name)
{
    struct mu_job *j = mu_cluster_job(&sim.cluster, "t", name);

    ck_assert_msg(j != NULL, "no job %s", name);
    return j;
}

static void cycle_and_run(void)
{
    mu_cycle_out_release(&out);
    mu_cycle_run(&sim.cluster, &sim.conf, sim.now_ms, &out);
    for (size_t i = 0; i < out.nbinds; i++)
        mu_task_set_status(&sim.cluster, out.binds[i], MU_TASK_RUNNING);
}

/* Two 8-GPU nodes. Queue a (weight 1) runs r1 (1 x 8 GPUs) and r2 (1 x 4):
 * 12 GPUs, all it deserves while queue b (capability 4) asks for 8. Then
 * big (2 x 8, created at 500 s) and w3 (1 x 2, at 3000 s) wait in a, and
 * cap (1 x 8) in b. */
static void setup(void)
{
    struct mu_conf conf;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, NULL);
    ck_assert_int_eq(
        mu_sim_load_text(&sim, "t.yaml",
                         NODE("n1") NODE("n2") QUEUE("a", "{weight: 1}")
                             QUEUE("b", "{weight: 1, capability: "
                                        "{nvidia.com/gpu: 4}}")
                                 PG("r1", "a", "1") POD("r1-0", "r1", "8")
                                     PG("r2", "a", "1")
                                         POD("r2-0", "r2", "4")),
        0);
    mu_sim_step(&sim);
    cycle_and_run();
    ck_assert_uint_eq(out.nbinds, 2);
    ck_assert_int_eq(
        mu_sim_load_text(&sim, "u.yaml",
                         PG("big", "a", "2") POD("big-0", "big", "8")
                             POD("big-1", "big", "8") PG("w3", "a", "1")
                                 POD("w3-0", "w3", "2") PG("cap", "b", "1")
                                     POD("cap-0", "cap", "8")),
        0);
    mu_sim_step(&sim);
    ck_assert_int_eq(sim.errors, 0);
    job("r1")->pg.meta.created = 100;
    job("r2")->pg.meta.created = 200;
    job("big")->pg.meta.created = 500;
    job("w3")->pg.meta.created = 3000;
    cycle_and_run();
    cycle_and_run();
    ck_assert_uint_eq(out.nbinds, 0);
    snap = mu_report_build(&sim.cluster, 5000 * 1000LL);
}

static void teardown(void)
{
    json_decref(snap);
    mu_cycle_out_release(&out);
    mu_sim_release(&sim);
}

static json_t *answer(const char *path, int want_status)
{
    int status = 0;
    char *s = mu_report_answer(snap, path, &status);
    json_t *j = json_loads(s, 0, NULL);

    ck_assert_msg(status == want_status, "%s: %d %s", path, status, s);
    ck_assert_msg(j != NULL, "%s: not JSON: %s", path, s);
    free(s);
    return j;
}

static const json_t *by_name(const json_t *arr, const char *name)
{
    size_t i;
    const json_t *v;

    json_array_foreach(arr, i, v)
    {
        if (!strcmp(json_string_value(json_object_get(v, "name")), name))
            return v;
    }
    ck_abort_msg("no %s", name);
    return NULL;
}

static const char *s_of(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    ck_assert_msg(s != NULL, "no string %s", k);
    return s;
}

static long long i_of(const json_t *o, const char *k)
{
    ck_assert_msg(json_is_integer(json_object_get(o, k)), "no integer %s", k);
    return json_integer_value(json_object_get(o, k));
}

START_TEST(test_queues_say_weight_capability_allocated_and_gangs)
{
    json_t *qs = answer("/debug/queues", 200);
    const json_t *a = by_name(qs, "a"), *b = by_name(qs, "b");

    ck_assert_str_eq(s_of(a, "state"), "Open");
    ck_assert_int_eq(i_of(a, "weight"), 1);
    ck_assert_str_eq(
        s_of(json_object_get(a, "allocated"), "nvidia.com/gpu"), "12");
    ck_assert_str_eq(
        s_of(json_object_get(a, "deserved"), "nvidia.com/gpu"), "12");
    ck_assert_int_eq(i_of(a, "gangs"), 4);
    ck_assert_int_eq(i_of(a, "pendingGangs"), 2);
    ck_assert_int_eq(i_of(a, "runningGangs"), 2);
    ck_assert_int_eq(json_object_size(json_object_get(a, "capability")), 0);
    ck_assert_str_eq(
        s_of(json_object_get(b, "capability"), "nvidia.com/gpu"), "4");
    ck_assert_int_eq(i_of(b, "pendingGangs"), 1);
    json_decref(qs);
}
END_TEST

START_TEST(test_gangs_say_phase_wait_and_what_would_unblock_them)
{
    json_t *gs = answer("/debug/gangs", 200);
    const json_t *r1 = by_name(gs, "r1"), *big = by_name(gs, "big");
    const json_t *w3 = by_name(gs, "w3"), *cap = by_name(gs, "cap");

    ck_assert_uint_eq(json_array_size(gs), 5);
    ck_assert_str_eq(s_of(r1, "phase"), "Running");
    ck_assert_int_eq(i_of(json_object_get(r1, "pods"), "running"), 1);
    ck_assert_ptr_null(json_object_get(r1, "unblock"));
    ck_assert_uint_eq(json_array_size(json_object_get(r1, "nodes")), 1);
    ck_assert_ptr_null(json_object_get(big, "nodes"));
    ck_assert_ptr_null(json_object_get(r1, "waitSeconds"));

    ck_assert_str_eq(s_of(big, "queue"), "a");
    ck_assert_str_eq(s_of(big, "phase"), "Inqueue");
    ck_assert_str_eq(s_of(big, "created"), "1970-01-01T00:08:20Z");
    ck_assert_int_eq(i_of(big, "waitSeconds"), 4500);
    ck_assert_int_eq(i_of(big, "needPods"), 2);
    ck_assert_int_eq(i_of(json_object_get(big, "pods"), "pending"), 2);
    ck_assert_str_eq(
        s_of(json_object_get(big, "podRequest"), "nvidia.com/gpu"), "8");
    ck_assert_str_eq(s_of(big, "reason"),
                     "2/2 tasks in gang unschedulable: queue a has used its "
                     "deserved share");
    ck_assert_str_eq(
        s_of(big, "unblock"),
        "queue a's share: nvidia.com/gpu would reach 28 of the 12 it "
        "deserves now (wait for its gangs to finish, reclaim from queues "
        "over their share, or give it more weight or a guarantee); and room "
        "for 2 pod(s) of {nvidia.com/gpu: 8}, each on one node: the 2 "
        "node(s) its pods may use (H100) take 0 now; room for 2 more must "
        "be freed there");
    /* w3's one 2-GPU pod fits in the 4 GPUs left: only the share stops it */
    ck_assert_str_eq(s_of(w3, "unblock"),
                     "queue a's share: nvidia.com/gpu would reach 14 of the "
                     "12 it deserves now (wait for its gangs to finish, "
                     "reclaim from queues over their share, or give it more "
                     "weight or a guarantee)");
    /* the capability, not the share it bounds, and no room for 8 GPUs */
    ck_assert_str_eq(s_of(cap, "unblock"),
                     "queue b's capability: nvidia.com/gpu would reach 8 of "
                     "its 4 (raise it, or wait for the queue's gangs to "
                     "finish); and room for 1 pod(s) of {nvidia.com/gpu: 8}, "
                     "each on one node: the 2 node(s) its pods may use "
                     "(H100) take 0 now; room for 1 more must be freed "
                     "there");
    json_decref(gs);
}
END_TEST

START_TEST(test_a_gang_names_the_gangs_ahead_of_it_in_its_queue)
{
    json_t *g = answer("/debug/gang/t/w3", 200);
    json_t *big = answer("/debug/gang/t/big", 200);
    json_t *cap = answer("/debug/gang/t/cap", 200);

    ck_assert_str_eq(s_of(json_object_get(g, "gang"), "name"), "w3");
    ck_assert_str_eq(s_of(json_object_get(g, "queue"), "name"), "a");
    /* big: same priority, created earlier; r1 and r2 run; cap is in b */
    ck_assert_int_eq(i_of(g, "ahead"), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(g, "aheadGangs")), 1);
    ck_assert_str_eq(
        json_string_value(json_array_get(json_object_get(g, "aheadGangs"), 0)),
        "t/big");
    ck_assert_int_eq(i_of(big, "ahead"), 0);
    ck_assert_int_eq(i_of(cap, "ahead"), 0);
    ck_assert_str_eq(s_of(json_object_get(cap, "queue"), "name"), "b");
    json_decref(g);
    json_decref(big);
    json_decref(cap);
}
END_TEST

START_TEST(test_unknown_paths_and_gangs_are_404_with_a_reason)
{
    json_t *e = answer("/debug/gang/t/nope", 404);
    int status = 0;
    char *s;

    ck_assert_str_eq(s_of(e, "error"), "no PodGroup t/nope in muster's cache");
    json_decref(e);
    e = answer("/debug/gang/t", 404);
    ck_assert_ptr_nonnull(strstr(s_of(e, "error"), "NAMESPACE/NAME"));
    json_decref(e);
    e = answer("/debug/nothing", 404);
    ck_assert_ptr_nonnull(strstr(s_of(e, "error"), "/debug/queues"));
    json_decref(e);
    e = answer("/debug/decisions", 200); /* none added: an empty list */
    ck_assert(json_is_array(e) && json_array_size(e) == 0);
    json_decref(e);
    s = mu_report_answer(NULL, "/debug/queues", &status);
    ck_assert_int_eq(status, 503);
    ck_assert_ptr_nonnull(strstr(s, "no cycle has run yet"));
    free(s);
}
END_TEST

START_TEST(test_the_same_cluster_gives_the_same_report)
{
    json_t *again = mu_report_build(&sim.cluster, 5000 * 1000LL);
    char *a = json_dumps(snap, JSON_COMPACT), *b = json_dumps(again,
                                                              JSON_COMPACT);

    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    json_decref(again);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_queues_say_weight_capability_allocated_and_gangs);
    tcase_add_test(tc, test_gangs_say_phase_wait_and_what_would_unblock_them);
    tcase_add_test(tc, test_a_gang_names_the_gangs_ahead_of_it_in_its_queue);
    tcase_add_test(tc, test_unknown_paths_and_gangs_are_404_with_a_reason);
    tcase_add_test(tc, test_the_same_cluster_gives_the_same_report);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
