/* The queue controller and Commands (src/ctrl/queuectl.h) with a real
 * th.writer on the fake API server: the exact requests a Command, a status
 * sync and the default queue send. One worker, so requests arrive in
 * submit order. */
#include <check.h>
#include <stdlib.h>

#include "ctrl/queuectl.h"
#include "test_ctl_harness.h"

static struct mu_queuectl *qc;

static void setup(void)
{
    th_start(NULL);
    qc = mu_queuectl_new(&th.ctl);
    mu_queuectl_set_synced(qc, true, true);
}

static void teardown(void)
{
    th_stop_writer(); /* its last done calls reach the controller */
    mu_queuectl_free(qc);
    th_stop();
}

static void settle(void)
{
    th_settle(3, 5000);
}

static void add_queue(const char *name, const char *state)
{
    char *js = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":"
        "{\"weight\":1},\"status\":{\"state\":\"%s\"}}", name, name, state);
    json_t *j = json_loads(js, 0, NULL);
    struct mu_queue_spec q;
    struct mu_err err;

    ck_assert_int_eq(mu_queue_decode(j, &th.cluster.rn, &q, &err), 0);
    mu_cluster_update_queue(&th.cluster, &q);
    mu_queue_spec_release(&q);
    json_decref(j);
    free(js);
}

static void add_podgroup(const char *name, const char *queue)
{
    char *js = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"a\",\"uid\":\"pg-%s\"},"
        "\"spec\":{\"minMember\":1,\"queue\":\"%s\"},\"status\":{\"phase\":"
        "\"Running\"}}", name, name, queue);
    json_t *j = json_loads(js, 0, NULL);
    struct mu_podgroup pg;
    struct mu_err err;

    ck_assert_int_eq(mu_podgroup_decode(j, &th.cluster.rn, &pg, &err), 0);
    mu_cluster_update_job(&th.cluster, &pg);
    mu_podgroup_release(&pg);
    json_decref(j);
    free(js);
    mu_cluster_link(&th.cluster);
}

static void command(const char *name, const char *action, const char *kind,
                    const char *target)
{
    char *js = mu_xasprintf(
        "{\"apiVersion\":\"bus.volcano.sh/v1alpha1\",\"kind\":\"Command\","
        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":"
        "\"cmd-uid\"},\"action\":\"%s\",\"target\":{\"apiVersion\":\"%s\","
        "\"kind\":\"%s\",\"name\":\"%s\"}}", name, action,
        !strcmp(kind, "Queue") ? "scheduling.volcano.sh/v1beta1"
                               : "batch.volcano.sh/v1alpha1",
        kind, target);
    json_t *j = json_loads(js, 0, NULL);

    ck_assert_ptr_nonnull(j);
    mu_queuectl_command(qc, MU_WATCH_ADDED, j);
    json_decref(j);
    free(js);
}

static json_t *status_of(size_t i)
{
    json_t *j = json_loads(kf_req(&th.srv, i)->body, 0, NULL);
    json_t *st;

    ck_assert_ptr_nonnull(j);
    st = json_incref(json_object_get(j, "status"));
    json_decref(j);
    ck_assert_ptr_nonnull(st);
    return st;
}

static const char *state_of(json_t *st)
{
    return json_string_value(json_object_get(st, "state"));
}

START_TEST(test_close_queue_command_deletes_it_then_writes_closing)
{
    json_t *st;

    add_queue("team-b", "Open");
    add_podgroup("g1", "team-b");
    kf_reply_body(&th.srv, 200, "{}"); /* DELETE the Command */
    kf_reply_body(&th.srv, 200, "{}"); /* PATCH queues/team-b/status */
    kf_reply_body(&th.srv, 201, "{}"); /* the Queue's event */
    command("team-b-closequeue-x", "CloseQueue", "Queue", "team-b");
    command("team-b-closequeue-x", "CloseQueue", "Queue", "team-b");
    ck_assert(!mu_queuectl_changed(qc)); /* carried out only once deleted */
    settle();
    ck_assert(mu_queuectl_changed(qc));
    ck_assert_uint_eq(kf_count(&th.srv), 1); /* one DELETE, though seen twice */
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/bus.volcano.sh/v1alpha1/namespaces/default/"
                     "commands/team-b-closequeue-x");
    /* only the Command seen, not one made again under its name */
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 0)->body,
                                 "\"preconditions\":{\"uid\":\"cmd-uid\"}"));

    mu_queuectl_sync(qc, 1000);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 3);
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/queues/team-b/status");
    ck_assert_str_eq(kf_req(&th.srv, 1)->content_type,
                     "application/merge-patch+json");
    st = status_of(1);
    ck_assert_str_eq(state_of(st), "Closing");
    ck_assert_int_eq(json_integer_value(json_object_get(st, "running")), 1);
    json_decref(st);
    ck_assert_str_eq(kf_req(&th.srv, 2)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 2)->uri, "/api/v1/namespaces/default/events");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 2)->body, "CloseQueue"));
    ck_assert_ptr_nonnull(strstr(th.logged, "queue team-b closed by command "
                                         "default/team-b-closequeue-x: "
                                         "Closing until its 1 PodGroup is "
                                         "gone"));
}
END_TEST

START_TEST(test_close_queue_without_podgroups_is_closed)
{
    json_t *st;

    add_queue("team-c", "Open");
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 201, "{}");
    command("team-c-closequeue-y", "CloseQueue", "Queue", "team-c");
    settle();
    mu_queuectl_sync(qc, 1000);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 3);
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/queues/team-c/status");
    st = status_of(1);
    ck_assert_str_eq(state_of(st), "Closed");
    json_decref(st);
}
END_TEST

START_TEST(test_a_command_whose_delete_fails_is_not_carried_out)
{
    json_t *st;

    add_queue("team-d", "Open");
    kf_reply_body(&th.srv, 404,
                  "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    command("team-d-closequeue-z", "CloseQueue", "Queue", "team-d");
    settle();
    ck_assert(!mu_queuectl_changed(qc));
    mu_queuectl_sync(qc, 1000); /* the first status write: Open, as it is */
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "PATCH");
    st = status_of(1);
    ck_assert_str_eq(state_of(st), "Open");
    json_decref(st);
}
END_TEST

START_TEST(test_a_queue_status_is_written_once)
{
    json_t *st;

    add_queue("team-e", "Open");
    kf_reply_body(&th.srv, 200, "{}");
    mu_queuectl_sync(qc, 1000);
    mu_queuectl_sync(qc, 1001); /* in flight: not sent again */
    settle();
    mu_queuectl_sync(qc, 5000); /* nothing changed */
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/queues/team-e/status");
    st = status_of(0);
    ck_assert_str_eq(state_of(st), "Open"); /* the first write carries it */
    ck_assert_int_eq(json_integer_value(json_object_get(st, "pending")), 0);
    json_decref(st);
}
END_TEST

START_TEST(test_a_queue_tree_field_is_said_on_its_status)
{
    json_t *j = json_loads(
        "{\"metadata\":{\"name\":\"team-t\",\"uid\":\"uid-t\"},\"spec\":"
        "{\"weight\":1,\"parent\":\"org\",\"deserved\":{\"cpu\":\"4\"}}}",
        0, NULL);
    struct mu_queue_spec q;
    struct mu_err err;
    json_t *st, *c;

    ck_assert_int_eq(mu_queue_decode(j, &th.cluster.rn, &q, &err), 0);
    mu_cluster_update_queue(&th.cluster, &q);
    mu_queue_spec_release(&q);
    json_decref(j);
    add_queue("team-u", "Open");
    /* parent root is Volcano's flat queue (its controller sets it) */
    j = json_loads("{\"metadata\":{\"name\":\"team-v\",\"uid\":\"uid-v\"},"
                   "\"spec\":{\"weight\":1,\"parent\":\"root\"}}", 0, NULL);
    ck_assert_int_eq(mu_queue_decode(j, &th.cluster.rn, &q, &err), 0);
    mu_cluster_update_queue(&th.cluster, &q);
    mu_queue_spec_release(&q);
    json_decref(j);
    for (int i = 0; i < 3; i++)
        kf_reply_body(&th.srv, 200, "{}");
    mu_queuectl_sync(qc, 1000);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 3);
    for (size_t i = 0; i < 3; i++) {
        st = status_of(i);
        c = json_array_get(json_object_get(st, "conditions"), 0);
        if (strstr(kf_req(&th.srv, i)->uri, "team-t")) {
            ck_assert_str_eq(json_string_value(json_object_get(c, "type")),
                             "Unsupported");
            ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
                             "muster does not act on spec.parent, "
                             "spec.deserved: the queue's share comes from its "
                             "weight, capability and guarantee (proportion)");
        } else { /* none: a merge patch's null clears an old one */
            ck_assert(json_is_null(json_object_get(st, "conditions")));
        }
        json_decref(st);
    }
}
END_TEST

/* With capacity the Unsupported condition names only what is not acted
 * on: spec.parent when the queues are flat, nothing with the tree. */
START_TEST(test_the_tree_fields_follow_the_share_plugin)
{
    json_t *j = json_loads(
        "{\"metadata\":{\"name\":\"team-t\",\"uid\":\"uid-t\"},\"spec\":"
        "{\"weight\":1,\"parent\":\"org\",\"deserved\":{\"cpu\":\"4\"}}}",
        0, NULL);
    struct mu_queue_spec q;
    struct mu_err err;
    json_t *st, *c;

    ck_assert_int_eq(mu_queue_decode(j, &th.cluster.rn, &q, &err), 0);
    mu_cluster_update_queue(&th.cluster, &q);
    mu_queue_spec_release(&q);
    json_decref(j);
    mu_queuectl_set_share(qc, MU_SHARE_CAPACITY);
    kf_reply_body(&th.srv, 200, "{}");
    mu_queuectl_sync(qc, 1000);
    settle();
    st = status_of(0);
    c = json_array_get(json_object_get(st, "conditions"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
                     "muster does not act on spec.parent: the queues share "
                     "the cluster flat, by spec.deserved (capacity without "
                     "enableHierarchy)");
    json_decref(st);
    /* the tree: the condition goes (the status is written again) */
    mu_queuectl_set_share(qc, MU_SHARE_TREE);
    kf_reply_body(&th.srv, 200, "{}");
    mu_queuectl_sync(qc, 3000);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    st = status_of(1);
    ck_assert(json_is_null(json_object_get(st, "conditions")));
    json_decref(st);
}
END_TEST

START_TEST(test_a_failed_status_write_is_sent_again)
{
    add_queue("team-f", "Open");
    kf_reply_body(&th.srv, 500, "{\"kind\":\"Status\",\"code\":500}");
    kf_reply_body(&th.srv, 200, "{}");
    mu_queuectl_sync(qc, 1000);
    settle();
    ck_assert(mu_queuectl_changed(qc));
    mu_queuectl_sync(qc, 1100);
    settle();
    mu_queuectl_sync(qc, 1200);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 1)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/queues/team-f/status");
    ck_assert_ptr_nonnull(strstr(th.logged, "status of queue team-f:"));
}
END_TEST

START_TEST(test_a_job_command_is_handed_back)
{
    struct mu_queuectl_job j;

    kf_reply_body(&th.srv, 200, "{}"); /* DELETE */
    kf_reply_body(&th.srv, 201, "{}"); /* CommandIssued on the Job */
    ck_assert(!mu_queuectl_next_job(qc, &j));
    command("job1-abortjob-q", "AbortJob", "Job", "job1");
    ck_assert(!mu_queuectl_next_job(qc, &j)); /* not before its DELETE */
    settle();
    ck_assert(mu_queuectl_next_job(qc, &j));
    ck_assert_str_eq(j.ns, "default");
    ck_assert_str_eq(j.name, "job1");
    ck_assert_str_eq(j.action, "AbortJob");
    mu_queuectl_job_release(&j);
    ck_assert(!mu_queuectl_next_job(qc, &j));
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/bus.volcano.sh/v1alpha1/namespaces/default/"
                     "commands/job1-abortjob-q");
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "POST");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 1)->body, "CommandIssued"));
}
END_TEST

START_TEST(test_the_default_queue_is_made_when_missing)
{
    json_t *b;

    kf_reply_body(&th.srv, 201, "{}");
    mu_queuectl_default_queue(qc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 0)->uri,
                     "/apis/scheduling.volcano.sh/v1beta1/queues");
    b = json_loads(kf_req(&th.srv, 0)->body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(b, "metadata"), "name")),
                     "default");
    json_decref(b);
    ck_assert_ptr_nonnull(strstr(th.logged, "created queue default"));

    add_queue("default", "Open");
    mu_queuectl_default_queue(qc); /* there now: nothing sent */
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 1);

    /* a queue tree has its root queue, not reclaimable, as Volcano's */
    mu_queuectl_set_share(qc, MU_SHARE_TREE);
    kf_reply_body(&th.srv, 201, "{}");
    mu_queuectl_default_queue(qc);
    settle();
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    b = json_loads(kf_req(&th.srv, 1)->body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(b, "metadata"), "name")),
                     "root");
    ck_assert(json_is_false(
        json_object_get(json_object_get(b, "spec"), "reclaimable")));
    json_decref(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queuectl");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_close_queue_command_deletes_it_then_writes_closing);
    tcase_add_test(tc, test_close_queue_without_podgroups_is_closed);
    tcase_add_test(tc, test_a_command_whose_delete_fails_is_not_carried_out);
    tcase_add_test(tc, test_a_queue_status_is_written_once);
    tcase_add_test(tc, test_a_queue_tree_field_is_said_on_its_status);
    tcase_add_test(tc, test_the_tree_fields_follow_the_share_plugin);
    tcase_add_test(tc, test_a_failed_status_write_is_sent_again);
    tcase_add_test(tc, test_a_job_command_is_handed_back);
    tcase_add_test(tc, test_the_default_queue_is_made_when_missing);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
