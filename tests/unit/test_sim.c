/* The simulator: time, arrivals, completions, evictions and output. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/yaml.h"
#include "sim/sim.h"

static struct mu_sim sim;

static void load(const char *yaml)
{
    struct mu_conf conf;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, NULL);
    ck_assert_int_eq(mu_sim_load_text(&sim, "t.yaml", yaml), 0);
}

static void teardown(void)
{
    mu_sim_release(&sim);
}

static char *capture(void (*print)(struct mu_sim *, FILE *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    print(&sim, f);
    fclose(f);
    return buf;
}

static const char nodes[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '8', memory: 64Gi, nvidia.com/gpu: 2, "
    "pods: '10'}}\n---\n";

START_TEST(test_time_text_is_rfc3339_from_the_epoch)
{
    char buf[48];

    mu_sim_time_text(0, buf);
    ck_assert_str_eq(buf, "2026-01-01T00:00:00Z");
    mu_sim_time_text(90061000LL, buf);
    ck_assert_str_eq(buf, "2026-01-02T01:01:01Z");
    mu_sim_time_text(59LL * 86400 * 1000, buf);
    ck_assert_str_eq(buf, "2026-03-01T00:00:00Z");
}
END_TEST

START_TEST(test_pod_runs_for_its_duration_then_next_one_starts)
{
    char *table;

    load("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
         "status: {allocatable: {nvidia.com/gpu: 1}}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: a, annotations: "
         "{muster.io/run-for: 90s}}\nspec: {containers: [{name: c, "
         "resources: {limits: {nvidia.com/gpu: 1}}}]}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: b, annotations: "
         "{muster.io/submit-at: 10s}}\nspec: {containers: [{name: c, "
         "resources: {limits: {nvidia.com/gpu: 1}}}]}\n");
    mu_sim_run(&sim);
    ck_assert_int_eq(mu_cluster_task(&sim.cluster, "default", "a")->status,
                     MU_TASK_SUCCEEDED);
    ck_assert_int_eq(mu_cluster_task(&sim.cluster, "default", "b")->status,
                     MU_TASK_RUNNING);
    ck_assert_int_eq(mu_cluster_task(&sim.cluster, "default", "b")->started_ms,
                     90000);
    table = capture(mu_sim_print_table);
    ck_assert_ptr_nonnull(strstr(table, "[  0:01:30] pod default/a succeeded"));
    ck_assert_ptr_nonnull(strstr(table, "[  0:01:30] bind pod default/b to n1"));
    free(table);
}
END_TEST

START_TEST(test_evicted_job_pods_come_back_pending)
{
    load("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: hi}\nvalue: 10\n---\n"
         "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
         "status: {allocatable: {nvidia.com/gpu: 1}}\n---\n"
         "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
         "metadata: {name: low}\nspec:\n  tasks:\n  - replicas: 1\n"
         "    name: w\n    template: {spec: {containers: [{name: c, "
         "resources: {limits: {nvidia.com/gpu: 1}}}]}}\n---\n"
         "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
         "metadata: {name: high, annotations: {muster.io/submit-at: 1m}}\n"
         "spec:\n  priorityClassName: hi\n  tasks:\n  - replicas: 1\n"
         "    name: w\n    template: {spec: {containers: [{name: c, "
         "resources: {limits: {nvidia.com/gpu: 1}}}]}}\n");
    mu_sim_run(&sim);
    ck_assert_int_eq(mu_cluster_task(&sim.cluster, "default", "high-w-0")
                         ->status, MU_TASK_RUNNING);
    ck_assert_int_eq(mu_cluster_task(&sim.cluster, "default", "low-w-0")
                         ->status, MU_TASK_PENDING);
    ck_assert_ptr_null(mu_cluster_task(&sim.cluster, "default", "low-w-0")
                           ->pod.node_name);
}
END_TEST

START_TEST(test_yaml_output_reads_back_as_the_json_output)
{
    char *js, *ys;
    struct mu_yaml_docs docs;
    json_t *fromjson;

    load(nodes);
    ck_assert_int_eq(mu_sim_load_text(&sim, "p.yaml",
                                      "apiVersion: v1\nkind: Pod\nmetadata: "
                                      "{name: 'yes', labels: {a: '010'}}\n"
                                      "spec: {containers: [{name: c}]}\n"), 0);
    mu_sim_run(&sim);
    js = capture(mu_sim_print_json);
    ys = capture(mu_sim_print_yaml);
    fromjson = json_loads(js, 0, NULL);
    ck_assert_ptr_nonnull(fromjson);
    mu_yaml_docs_init(&docs);
    ck_assert_int_eq(mu_yaml_parse("out.yaml", ys, strlen(ys), &docs, NULL), 0);
    ck_assert_uint_eq(docs.n, 1);
    ck_assert(json_equal(docs.v[0].root, fromjson));
    ck_assert_str_eq(json_string_value(json_object_get(fromjson, "kind")),
                     "List");
    mu_yaml_docs_release(&docs);
    json_decref(fromjson);
    free(js);
    free(ys);
}
END_TEST

START_TEST(test_output_is_byte_identical_across_runs)
{
    static const char y[] =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
        "status: {allocatable: {nvidia.com/gpu: 4}}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {nvidia.com/gpu: 4}}\n---\n"
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"
        "metadata: {name: j}\nspec:\n  tasks:\n  - replicas: 6\n"
        "    name: w\n    template: {spec: {containers: [{name: c, "
        "resources: {limits: {nvidia.com/gpu: 1}}}]}}\n";
    char *a, *b;

    load(y);
    mu_sim_run(&sim);
    a = capture(mu_sim_print_json);
    teardown();
    load(y);
    mu_sim_run(&sim);
    b = capture(mu_sim_print_json);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_bad_objects_are_counted_and_the_rest_loads)
{
    load("apiVersion: v1\nkind: Pod\nmetadata: {name: half}\n"
         "spec: {containers: [{name: c, resources: {limits: "
         "{nvidia.com/gpu: 0.5}}}]}\n---\n"
         "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n---\n"
         "- just a list\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: fine}\n"
         "spec: {containers: [{name: c}]}\n");
    mu_sim_run(&sim);
    ck_assert_int_eq(sim.errors, 3);
    ck_assert_ptr_null(mu_cluster_task(&sim.cluster, "default", "half"));
    ck_assert_ptr_nonnull(mu_cluster_task(&sim.cluster, "default", "fine"));
}
END_TEST

/* Three pods of a ReplicaSet whose annotations ask for a gang of n. */
static void load_replicaset(const char *min, int npods, const char *extra)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_addf(&sb, "%s%s"
               "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, "
               "uid: rs-uid, annotations: {scheduling.volcano.sh/"
               "group-min-member: '%s', volcano.sh/preemptable: 'false'}}\n",
               nodes, extra, min);
    for (int i = 0; i < npods; i++)
        mu_sb_addf(&sb, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: "
                   "rs-%d, ownerReferences: [{apiVersion: apps/v1, kind: "
                   "ReplicaSet, name: rs, uid: rs-uid, controller: true}]}\n"
                   "spec: {schedulerName: volcano, containers: [{name: c, "
                   "resources: {requests: {cpu: '1'}}}]}\n", i);
    load(sb.buf);
    mu_sb_release(&sb);
}

START_TEST(test_owner_annotation_sets_the_implicit_group_min_member)
{
    const struct mu_job *j;

    load_replicaset("3", 3, "");
    mu_sim_run(&sim);
    ck_assert_int_eq(sim.errors, 0);
    j = mu_cluster_job(&sim.cluster, "default", "podgroup-rs-uid");
    ck_assert_ptr_nonnull(j);
    ck_assert(j->implicit);
    ck_assert_int_eq(j->pg.min_member, 3);
    ck_assert_int_eq(j->running, 3);
    /* the owner's volcano.sh/ annotations reach the PodGroup */
    ck_assert_str_eq(mu_kvs_get(&j->pg.meta.annotations,
                                "volcano.sh/preemptable"), "false");
    ck_assert_uint_eq(sim.cluster.njobs, 1);
}
END_TEST

START_TEST(test_implicit_gang_short_of_pods_stays_pending)
{
    const struct mu_job *j;

    load_replicaset("3", 2, "");
    mu_sim_run(&sim);
    j = mu_cluster_job(&sim.cluster, "default", "podgroup-rs-uid");
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(j->pg.min_member, 3);
    ck_assert_int_eq(j->running, 0);
    ck_assert_int_ne(j->phase, MU_PG_RUNNING);
    ck_assert_ptr_nonnull(j->cond.reason);
}
END_TEST

START_TEST(test_owner_of_another_uid_or_absent_does_not_count)
{
    const struct mu_job *j;

    /* pods name rs-uid; the input's ReplicaSet rs is another object */
    load("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs, "
         "uid: other, annotations: {scheduling.volcano.sh/group-min-member: "
         "'2'}}\n---\n"
         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, "
         "annotations: {scheduling.volcano.sh/group-min-member: '2'}}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: p, ownerReferences: "
         "[{kind: ReplicaSet, name: rs, uid: rs-uid, controller: true}]}\n"
         "spec: {containers: [{name: c}]}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: q, ownerReferences: "
         "[{kind: ReplicaSet, name: d-1, uid: d1-uid, controller: true}]}\n"
         "spec: {containers: [{name: c}]}\n");
    mu_sim_run(&sim);
    ck_assert_int_eq(sim.errors, 0);
    j = mu_cluster_job(&sim.cluster, "default", "podgroup-rs-uid");
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(j->pg.min_member, 1);
    /* the Deployment's annotation reaches only a ReplicaSet carrying it */
    j = mu_cluster_job(&sim.cluster, "default", "podgroup-d1-uid");
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(j->pg.min_member, 1);
}
END_TEST

START_TEST(test_bad_owner_annotation_warns_and_uses_one)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&buf, &len);
    struct mu_conf conf;
    const struct mu_job *j;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, log);
    ck_assert_int_eq(
        mu_sim_load_text(&sim, "t.yaml",
                         "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: "
                         "{name: ss, uid: ss-uid, annotations: {scheduling."
                         "volcano.sh/group-min-member: 'two'}}\n---\n"
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: ss-0, "
                         "ownerReferences: [{kind: StatefulSet, name: ss, "
                         "uid: ss-uid, controller: true}]}\nspec: "
                         "{containers: [{name: c}]}\n"),
        0);
    mu_sim_run(&sim);
    fclose(log);
    ck_assert_int_eq(sim.errors, 0);
    j = mu_cluster_job(&sim.cluster, "default", "podgroup-ss-uid");
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(j->pg.min_member, 1);
    ck_assert_ptr_nonnull(strstr(buf, "t.yaml:5: pod default/ss-0: owner "
                                      "annotation scheduling.volcano.sh/"
                                      "group-min-member=\"two\" is not a "
                                      "positive integer; using 1"));
    free(buf);
}
END_TEST

START_TEST(test_default_queue_is_made_when_missing)
{
    const struct mu_cqueue *q;

    load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
         "spec: {containers: [{name: c}]}\n");
    mu_sim_run(&sim);
    q = mu_cluster_queue(&sim.cluster, "default");
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(q->spec.weight, 1);
    ck_assert(q->spec.reclaimable);
}
END_TEST

START_TEST(test_malformed_text_is_refused_whole)
{
    struct mu_conf conf;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, NULL);
    ck_assert_int_lt(mu_sim_load_text(&sim, "bad.yaml", "a: [1, 2\nb: c\n"), 0);
    ck_assert_int_eq(sim.errors, 1);
    ck_assert_uint_eq(sim.narr, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_time_text_is_rfc3339_from_the_epoch);
    tcase_add_test(tc, test_pod_runs_for_its_duration_then_next_one_starts);
    tcase_add_test(tc, test_evicted_job_pods_come_back_pending);
    tcase_add_test(tc, test_yaml_output_reads_back_as_the_json_output);
    tcase_add_test(tc, test_output_is_byte_identical_across_runs);
    tcase_add_test(tc, test_bad_objects_are_counted_and_the_rest_loads);
    tcase_add_test(tc, test_malformed_text_is_refused_whole);
    tcase_add_test(tc, test_owner_annotation_sets_the_implicit_group_min_member);
    tcase_add_test(tc, test_implicit_gang_short_of_pods_stays_pending);
    tcase_add_test(tc, test_owner_of_another_uid_or_absent_does_not_count);
    tcase_add_test(tc, test_bad_owner_annotation_warns_and_uses_one);
    tcase_add_test(tc, test_default_queue_is_made_when_missing);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
