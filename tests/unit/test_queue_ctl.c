/* The queue controller's logic (src/ctrl/queue.h) and Commands
 * (src/ctrl/command.h). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "ctrl/command.h"
#include "ctrl/queue.h"

#define OPEN MU_QUEUE_OPEN
#define CLOSED MU_QUEUE_CLOSED
#define CLOSING MU_QUEUE_CLOSING
#define UNKNOWN MU_QUEUE_UNKNOWN

/* volcano-api.md §3.7: every state x action x (PodGroups or none). */
static const struct {
    enum mu_queue_state cur;
    enum mu_qaction a;
    int npg;
    enum mu_queue_state want;
} next_cases[] = {
    {OPEN, MU_QACT_CLOSE, 0, CLOSED},
    {OPEN, MU_QACT_CLOSE, 2, CLOSING},
    {OPEN, MU_QACT_OPEN, 2, OPEN},
    {OPEN, MU_QACT_SYNC, 0, OPEN},
    {OPEN, MU_QACT_SYNC, 3, OPEN},
    {CLOSING, MU_QACT_SYNC, 1, CLOSING},
    {CLOSING, MU_QACT_SYNC, 0, CLOSED},
    {CLOSING, MU_QACT_OPEN, 1, OPEN},
    {CLOSING, MU_QACT_CLOSE, 0, CLOSED},
    {CLOSED, MU_QACT_SYNC, 0, CLOSED},
    /* a user wrote Closed while PodGroups remain: Closing */
    {CLOSED, MU_QACT_SYNC, 2, CLOSING},
    {CLOSED, MU_QACT_OPEN, 0, OPEN},
    {CLOSED, MU_QACT_CLOSE, 0, CLOSED},
    {UNKNOWN, MU_QACT_SYNC, 0, UNKNOWN},
    {UNKNOWN, MU_QACT_SYNC, 4, UNKNOWN},
    {UNKNOWN, MU_QACT_OPEN, 4, OPEN},
    {UNKNOWN, MU_QACT_CLOSE, 4, CLOSING},
    {UNKNOWN, MU_QACT_CLOSE, 0, CLOSED},
};

START_TEST(test_queue_next_follows_volcano_state_machine)
{
    enum mu_queue_state got =
        mu_queue_next(next_cases[_i].cur, next_cases[_i].a, next_cases[_i].npg);

    ck_assert_msg(got == next_cases[_i].want,
                  "%s + %s with %d PodGroups: "
                  "got %s, want %s",
                  mu_queue_state_name(next_cases[_i].cur),
                  mu_qaction_name(next_cases[_i].a), next_cases[_i].npg,
                  mu_queue_state_name(got),
                  mu_queue_state_name(next_cases[_i].want));
}
END_TEST

START_TEST(test_qaction_parse_knows_volcano_names_only)
{
    enum mu_qaction a = MU_QACT_SYNC;

    ck_assert_int_eq(mu_qaction_parse("CloseQueue", &a), 0);
    ck_assert_int_eq(a, MU_QACT_CLOSE);
    ck_assert_int_eq(mu_qaction_parse("OpenQueue", &a), 0);
    ck_assert_int_eq(a, MU_QACT_OPEN);
    ck_assert_int_eq(mu_qaction_parse("closequeue", &a), -EINVAL);
    ck_assert_int_eq(mu_qaction_parse(NULL, &a), -EINVAL);
    ck_assert_int_eq(a, MU_QACT_OPEN); /* unchanged */
    ck_assert_str_eq(mu_qaction_name(MU_QACT_CLOSE), "CloseQueue");
}
END_TEST

START_TEST(test_queue_counts_per_phase)
{
    struct mu_queue_counts n = {0};

    mu_queue_counts_add(&n, MU_PG_NONE);
    mu_queue_counts_add(&n, MU_PG_PENDING);
    mu_queue_counts_add(&n, MU_PG_INQUEUE);
    mu_queue_counts_add(&n, MU_PG_RUNNING);
    mu_queue_counts_add(&n, MU_PG_RUNNING);
    mu_queue_counts_add(&n, MU_PG_UNKNOWN);
    mu_queue_counts_add(&n, MU_PG_COMPLETED);
    ck_assert_int_eq(n.pending, 2);
    ck_assert_int_eq(n.inqueue, 1);
    ck_assert_int_eq(n.running, 2);
    ck_assert_int_eq(n.unknown, 1);
    ck_assert_int_eq(n.completed, 1);
    ck_assert_int_eq(mu_queue_counts_held(&n), 6);
    ck_assert_int_eq(mu_queue_counts_total(&n), 7);
}
END_TEST

static void free_values(struct mu_map *m)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(m, &it, NULL, &v))
        free(v);
    mu_map_release(m);
}

START_TEST(test_qctl_memory_is_per_object)
{
    struct mu_map m;
    struct mu_qctl_q *e, *again;

    mu_map_init(&m);
    e = mu_qctl_get(&m, "team-b", "uid-1");
    mu_qctl_wrote(e, true, CLOSING, 100);
    again = mu_qctl_get(&m, "team-b", "uid-1");
    ck_assert_ptr_eq(again, e);
    ck_assert(again->pending);
    /* deleted and made again: a new object, a fresh memory */
    again = mu_qctl_get(&m, "team-b", "uid-2");
    ck_assert(!again->pending);
    ck_assert(!again->status_written);
    ck_assert_str_eq(again->uid, "uid-2");
    /* a Command seen before the queues listed: the uid is adopted */
    e = mu_qctl_get(&m, "team-c", NULL);
    mu_qctl_request(e, MU_QACT_CLOSE, "default/team-c-closequeue-x");
    e = mu_qctl_get(&m, "team-c", "uid-3");
    ck_assert(e->requested);
    ck_assert_str_eq(e->uid, "uid-3");
    ck_assert_str_eq(e->by, "default/team-c-closequeue-x");
    mu_qctl_forget(&m, "team-c");
    ck_assert(!mu_qctl_get(&m, "team-c", "uid-3")->requested);
    free_values(&m);
}
END_TEST

START_TEST(test_qctl_close_command_is_written_once_and_survives_old_events)
{
    struct mu_qctl_q e;
    enum mu_queue_state s;

    memset(&e, 0, sizeof(e));
    /* first write of a new queue carries Open */
    s = mu_qctl_step(&e, OPEN, 0, 0);
    ck_assert_int_eq(s, OPEN);
    ck_assert(mu_qctl_state_due(&e, OPEN, s));
    mu_qctl_wrote(&e, true, s, 0);
    ck_assert_int_eq(mu_qctl_current(&e, OPEN, 10), OPEN); /* echo */
    ck_assert(!e.pending);
    /* later writes of counts leave state out */
    s = mu_qctl_step(&e, OPEN, 2, 20);
    ck_assert(!mu_qctl_state_due(&e, OPEN, s));
    /* CloseQueue while 2 PodGroups run: Closing */
    mu_qctl_request(&e, MU_QACT_CLOSE, "default/c1");
    s = mu_qctl_step(&e, OPEN, 2, 1000);
    ck_assert_int_eq(s, CLOSING);
    ck_assert(mu_qctl_state_due(&e, OPEN, s));
    mu_qctl_wrote(&e, true, s, 1000);
    ck_assert(!e.requested);
    /* an event from before the write still shows Open: ignored */
    ck_assert_int_eq(mu_qctl_step(&e, OPEN, 2, 1010), CLOSING);
    ck_assert(e.pending);
    /* the echo */
    ck_assert_int_eq(mu_qctl_step(&e, CLOSING, 2, 1020), CLOSING);
    ck_assert(!e.pending);
    /* the PodGroups finish and go: Closed */
    s = mu_qctl_step(&e, CLOSING, 0, 2000);
    ck_assert_int_eq(s, CLOSED);
    ck_assert(mu_qctl_state_due(&e, CLOSING, s));
}
END_TEST

START_TEST(test_qctl_keeps_a_users_direct_write)
{
    struct mu_qctl_q e;
    enum mu_queue_state s;

    memset(&e, 0, sizeof(e));
    mu_qctl_wrote(&e, true, OPEN, 0);
    ck_assert_int_eq(mu_qctl_current(&e, OPEN, 5), OPEN);
    /* kubectl patch ... status.state Closed while a PodGroup remains */
    s = mu_qctl_step(&e, CLOSED, 1, 100);
    ck_assert_int_eq(s, CLOSING);
    ck_assert(mu_qctl_state_due(&e, CLOSED, s));
    mu_qctl_wrote(&e, true, s, 100);
    ck_assert_int_eq(mu_qctl_step(&e, CLOSING, 1, 150), CLOSING);
    /* the user opens it again: kept */
    s = mu_qctl_step(&e, OPEN, 1, 200);
    ck_assert_int_eq(s, OPEN);
    ck_assert(!mu_qctl_state_due(&e, OPEN, s));
    /* Closed on an empty queue stays Closed, nothing to write */
    s = mu_qctl_step(&e, CLOSED, 0, 300);
    ck_assert_int_eq(s, CLOSED);
    ck_assert(!mu_qctl_state_due(&e, CLOSED, s));
}
END_TEST

START_TEST(test_qctl_stops_waiting_for_a_lost_echo)
{
    struct mu_qctl_q e;

    memset(&e, 0, sizeof(e));
    e.status_written = true;
    mu_qctl_wrote(&e, true, CLOSED, 1000);
    ck_assert_int_eq(mu_qctl_current(&e, OPEN, 1000 + MU_QCTL_ECHO_MS - 1),
                     CLOSED);
    ck_assert_int_eq(mu_qctl_current(&e, OPEN, 1000 + MU_QCTL_ECHO_MS), OPEN);
    ck_assert(!e.pending);
}
END_TEST

START_TEST(test_qctl_last_request_wins)
{
    struct mu_qctl_q e;

    memset(&e, 0, sizeof(e));
    e.status_written = true;
    mu_qctl_request(&e, MU_QACT_CLOSE, "default/a");
    mu_qctl_request(&e, MU_QACT_OPEN, "default/b");
    ck_assert_int_eq(mu_qctl_step(&e, CLOSED, 3, 0), OPEN);
    ck_assert_str_eq(e.by, "default/b");
    /* an open of an Open queue is still written (and reported) */
    ck_assert(mu_qctl_state_due(&e, OPEN, OPEN));
    mu_qctl_wrote(&e, false, OPEN, 0);
    ck_assert(!e.requested);
    ck_assert(!e.pending);
}
END_TEST

/* ---- Commands ---- */

static json_t *command(const char *action, const char *kind, const char *api)
{
    json_t *c = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion",
                          "bus.volcano.sh/v1alpha1", "kind", "Command",
                          "metadata", "name", "team-b-closequeue-x7k2q",
                          "namespace", "default", "uid", "c-uid");

    if (action)
        json_object_set_new(c, "action", json_string(action));
    if (kind)
        json_object_set_new(c, "target",
                            json_pack("{s:s,s:s,s:s,s:s,s:b}", "apiVersion",
                                      api, "kind", kind, "name", "team-b",
                                      "uid", "q-uid", "controller", 1));
    return c;
}

START_TEST(test_command_close_queue_as_vcctl_makes_it)
{
    json_t *j = command("CloseQueue", "Queue", "scheduling.volcano.sh/v1beta1");
    struct mu_command c;
    struct mu_err err;

    ck_assert_int_eq(mu_command_decode(j, &c, &err), 0);
    ck_assert_int_eq(c.on, MU_COMMAND_QUEUE);
    ck_assert_int_eq(c.qaction, MU_QACT_CLOSE);
    ck_assert_str_eq(c.target, "team-b");
    ck_assert_str_eq(c.target_uid, "q-uid");
    ck_assert_str_eq(c.meta.ns, "default");
    ck_assert_str_eq(c.meta.name, "team-b-closequeue-x7k2q");
    mu_command_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_command_job_actions)
{
    for (size_t i = 0; mu_command_job_actions[i]; i++) {
        json_t *j = command(mu_command_job_actions[i], "Job",
                            "batch.volcano.sh/v1alpha1");
        struct mu_command c;
        struct mu_err err;

        ck_assert_int_eq(mu_command_decode(j, &c, &err), 0);
        ck_assert_int_eq(c.on, MU_COMMAND_JOB);
        ck_assert_str_eq(c.action, mu_command_job_actions[i]);
        mu_command_release(&c);
        json_decref(j);
    }
}
END_TEST

static const struct {
    const char *action, *kind, *api, *says;
} bad_cases[] = {
    {"DanceJob", "Job", "batch.volcano.sh/v1alpha1",
     "unknown action \"DanceJob\""},
    {NULL, "Queue", "scheduling.volcano.sh/v1beta1", "action: required"},
    {"CloseQueue", NULL, NULL, "target: required"},
    {"CloseQueue", "Job", "batch.volcano.sh/v1alpha1",
     "CloseQueue acts on a Queue, not on a Job"},
    {"AbortJob", "Queue", "scheduling.volcano.sh/v1beta1",
     "AbortJob acts on a Job, not on a Queue"},
    {"OpenQueue", "Queue", "batch.volcano.sh/v1alpha1", "target.apiVersion"},
    {"SyncQueue", "Queue", "scheduling.volcano.sh/v1beta1",
     "unknown action \"SyncQueue\""},
};

START_TEST(test_command_bad_ones_are_named_and_explained)
{
    json_t *j =
        command(bad_cases[_i].action, bad_cases[_i].kind, bad_cases[_i].api);
    struct mu_command c;
    struct mu_err err;

    ck_assert_int_eq(mu_command_decode(j, &c, &err), -EINVAL);
    ck_assert_int_eq(c.on, MU_COMMAND_BAD);
    ck_assert_msg(strstr(err.msg, bad_cases[_i].says), "'%s' lacks '%s'",
                  err.msg, bad_cases[_i].says);
    /* still named, so it can be reported and deleted */
    ck_assert_str_eq(c.meta.name, "team-b-closequeue-x7k2q");
    ck_assert_str_eq(c.meta.ns, "default");
    mu_command_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_command_target_without_name_or_metadata)
{
    json_t *j = command("CloseQueue", "Queue", "scheduling.volcano.sh/v1beta1");
    struct mu_command c;
    struct mu_err err;

    json_object_del(json_object_get(j, "target"), "name");
    ck_assert_int_eq(mu_command_decode(j, &c, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "target.name: required");
    mu_command_release(&c);
    json_object_del(j, "metadata");
    ck_assert_int_eq(mu_command_decode(j, &c, &err), -EINVAL);
    ck_assert_ptr_null(c.meta.name);
    mu_command_release(&c);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue_ctl");
    TCase *tq = tcase_create("queue");
    TCase *tc = tcase_create("command");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tq, test_queue_next_follows_volcano_state_machine, 0,
                        (int)MU_ARRAY_LEN(next_cases));
    tcase_add_test(tq, test_qaction_parse_knows_volcano_names_only);
    tcase_add_test(tq, test_queue_counts_per_phase);
    tcase_add_test(tq, test_qctl_memory_is_per_object);
    tcase_add_test(
        tq, test_qctl_close_command_is_written_once_and_survives_old_events);
    tcase_add_test(tq, test_qctl_keeps_a_users_direct_write);
    tcase_add_test(tq, test_qctl_stops_waiting_for_a_lost_echo);
    tcase_add_test(tq, test_qctl_last_request_wins);
    tcase_add_test(tc, test_command_close_queue_as_vcctl_makes_it);
    tcase_add_test(tc, test_command_job_actions);
    tcase_add_loop_test(tc, test_command_bad_ones_are_named_and_explained, 0,
                        (int)MU_ARRAY_LEN(bad_cases));
    tcase_add_test(tc, test_command_target_without_name_or_metadata);
    suite_add_tcase(s, tq);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
