/* The vcjob lifecycle: policies and the state machine (ctrl/jobsm.h). */
#include <check.h>
#include <stdlib.h>

#include "ctrl/jobsm.h"

/* The book's job: 1 master + 8 workers, minAvailable 9, maxRetry 3,
 * PodEvicted -> RestartJob; plus a task policy on the workers. */
static json_t *book_job(void)
{
    json_error_t e;
    json_t *j = json_loads(
        "{\"spec\":{\"minAvailable\":9,\"maxRetry\":3,"
        "\"policies\":[{\"event\":\"PodEvicted\",\"action\":\"RestartJob\"}],"
        "\"tasks\":["
        "{\"name\":\"master\",\"replicas\":1,\"minAvailable\":1},"
        "{\"name\":\"worker\",\"replicas\":8,\"minAvailable\":8,"
        "\"policies\":[{\"exitCode\":137,\"action\":\"RestartTask\"},"
        "{\"events\":[\"TaskCompleted\"],\"action\":\"CompleteJob\"},"
        "{\"event\":\"PodPending\",\"timeout\":\"1m30s\","
        "\"action\":\"AbortJob\"}]}]}}",
        0, &e);

    ck_assert_ptr_nonnull(j);
    return j;
}

static void counts(const json_t *job, int pending, int running, int succ,
                   int failed, int term, struct mu_jcounts *c)
{
    struct mu_jpod pods[32];
    size_t n = 0;

    for (int i = 0; i < pending; i++)
        pods[n++] = (struct mu_jpod){1, i, MU_POD_PENDING, false};
    for (int i = 0; i < running; i++)
        pods[n++] = (struct mu_jpod){i == 0 ? 0 : 1, i, MU_POD_RUNNING, false};
    for (int i = 0; i < succ; i++)
        pods[n++] = (struct mu_jpod){i == 0 ? 0 : 1, i, MU_POD_SUCCEEDED,
                                     false};
    for (int i = 0; i < failed; i++)
        pods[n++] = (struct mu_jpod){1, i, MU_POD_FAILED, false};
    for (int i = 0; i < term; i++)
        pods[n++] = (struct mu_jpod){1, i, MU_POD_RUNNING, true};
    mu_jobsm_count(job, pods, n, c);
}

START_TEST(test_policy_match)
{
    json_t *j = book_job();

    /* job-level PodEvicted, from either task */
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_EVICTED, -1, -1),
                     MU_JACT_RESTART_JOB);
    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_POD_EVICTED, -1, -1),
                     MU_JACT_RESTART_JOB);
    ck_assert_int_eq(mu_jobsm_policy(j, -1, MU_JEV_POD_EVICTED, -1, -1),
                     MU_JACT_RESTART_JOB);
    /* exit codes match only PodFailed with that code */
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_FAILED, 137, -1),
                     MU_JACT_RESTART_TASK);
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_FAILED, 1, -1),
                     MU_JACT_SYNC);
    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_POD_FAILED, 137, -1),
                     MU_JACT_SYNC);
    /* events list, task level */
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_TASK_COMPLETED, -1, -1),
                     MU_JACT_COMPLETE_JOB);
    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_TASK_COMPLETED, -1, -1),
                     MU_JACT_SYNC);
    /* a timeout must have passed */
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_PENDING, -1, -1),
                     MU_JACT_SYNC);
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_PENDING, -1, 89999),
                     MU_JACT_SYNC);
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_POD_PENDING, -1, 90000),
                     MU_JACT_ABORT_JOB);
    /* a plain sync matches nothing */
    ck_assert_int_eq(mu_jobsm_policy(j, 1, MU_JEV_NONE, -1, -1),
                     MU_JACT_SYNC);
    json_decref(j);
}
END_TEST

START_TEST(test_policy_star_and_order)
{
    json_t *j = json_loads(
        "{\"spec\":{\"policies\":[{\"event\":\"PodFailed\","
        "\"action\":\"AbortJob\"},{\"event\":\"*\",\"action\":"
        "\"TerminateJob\"}],\"tasks\":[{\"name\":\"a\",\"replicas\":1}]}}",
        0, NULL);

    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_POD_FAILED, 3, -1),
                     MU_JACT_ABORT_JOB);
    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_UNKNOWN, -1, -1),
                     MU_JACT_TERMINATE_JOB);
    /* every pod starts Pending: "*" without a timeout does not mean it */
    ck_assert_int_eq(mu_jobsm_policy(j, 0, MU_JEV_POD_PENDING, -1, 999999),
                     MU_JACT_SYNC);
    json_decref(j);
}
END_TEST

START_TEST(test_names)
{
    enum mu_jphase p;
    enum mu_jaction a;

    for (int i = 0; i < MU_JOB__NPHASES; i++) {
        ck_assert(mu_jphase_parse(mu_jphase_name((enum mu_jphase)i), &p));
        ck_assert_int_eq(p, i);
    }
    ck_assert(!mu_jphase_parse("Bogus", &p));
    ck_assert_int_eq(p, MU_JOB_PENDING);
    ck_assert(mu_jaction_parse("ResumeJob", &a));
    ck_assert_int_eq(a, MU_JACT_RESUME_JOB);
    ck_assert(!mu_jaction_parse("SyncJob", &a));
    ck_assert(!mu_jaction_parse("restartjob", &a));
    ck_assert(mu_jphase_final(MU_JOB_FAILED));
    ck_assert(!mu_jphase_final(MU_JOB_ABORTED));
}
END_TEST

START_TEST(test_counts)
{
    json_t *j = book_job();
    struct mu_jcounts c;

    counts(j, 2, 5, 1, 1, 3, &c);
    ck_assert_int_eq(c.total, 9);
    ck_assert_int_eq(c.pending, 2);
    ck_assert_int_eq(c.running, 5);
    ck_assert_int_eq(c.succeeded, 1);
    ck_assert_int_eq(c.failed, 1);
    ck_assert_int_eq(c.terminating, 3);
    ck_assert_int_eq(c.task[0][MU_POD_RUNNING], 1);
    ck_assert_int_eq(c.task[1][MU_POD_RUNNING], 4);
    ck_assert_int_eq(c.task[1][MU_POD_PENDING], 2);
    ck_assert_int_eq(c.task[0][MU_POD_SUCCEEDED], 1);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

/* The book's story: an evicted worker restarts the whole job. */
START_TEST(test_restart_cycle)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RUNNING, 0, 0};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 8, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_RESTART_JOB, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RESTARTING);
    ck_assert_int_eq(p.next.retry, 1);
    ck_assert_int_eq(p.next.version, 1);
    ck_assert_int_eq(p.kill, MU_JKILL_ALL);
    ck_assert_int_eq(p.kill_task, -1);
    ck_assert(p.delete_group);
    ck_assert(!p.create);
    mu_jobsm_counts_release(&c);

    /* while old pods terminate, it waits */
    st = p.next;
    counts(j, 0, 0, 0, 0, 8, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RESTARTING);
    ck_assert(!p.create);
    mu_jobsm_counts_release(&c);

    /* then it is Pending again and makes its pods */
    counts(j, 0, 0, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_PENDING);
    ck_assert(p.create);
    ck_assert_int_eq(p.next.version, 1);
    ck_assert_int_eq(p.kill, MU_JKILL_NONE);
    mu_jobsm_counts_release(&c);

    /* Pending -> Running once minAvailable pods run */
    st = p.next;
    counts(j, 1, 8, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_PENDING);
    mu_jobsm_counts_release(&c);
    counts(j, 0, 9, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RUNNING);
    ck_assert(p.create);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

/* The last retry kills softly: failed pods stay for `kubectl logs`. */
START_TEST(test_last_retry_is_soft)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RUNNING, 2, 2};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 7, 0, 1, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_RESTART_JOB, -1, &p);
    ck_assert_int_eq(p.next.retry, 3);
    ck_assert_int_eq(p.kill, MU_JKILL_SOFT);
    ck_assert(p.delete_group);
    ck_assert_int_eq(p.next.version, 3);
    st.retry = 0;
    mu_jobsm_step(j, &st, &c, MU_JACT_RESTART_JOB, -1, &p);
    ck_assert_int_eq(p.kill, MU_JKILL_ALL);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_max_retry)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RESTARTING, 3, 3};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 0, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_FAILED);
    ck_assert(!p.create);
    ck_assert_str_eq(p.reason, "MaxRetryReached");
    mu_jobsm_counts_release(&c);
    st.retry = 2;
    counts(j, 0, 0, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_PENDING);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_finish)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RUNNING, 0, 0};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 0, 9, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_COMPLETED);
    ck_assert(!p.create);
    mu_jobsm_counts_release(&c);
    /* a worker failed: its task's minAvailable 8 is not met */
    counts(j, 0, 0, 8, 1, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_FAILED);
    mu_jobsm_counts_release(&c);
    /* still running: stays */
    counts(j, 0, 5, 4, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RUNNING);
    mu_jobsm_counts_release(&c);
    /* a final job only stops what still runs */
    st.phase = MU_JOB_COMPLETED;
    counts(j, 0, 1, 8, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_RESTART_JOB, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_COMPLETED);
    ck_assert_int_eq(p.kill, MU_JKILL_SOFT);
    ck_assert(!p.create);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_abort_resume)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RUNNING, 2, 1};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 9, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_ABORT_JOB, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_ABORTING);
    ck_assert_int_eq(p.kill, MU_JKILL_SOFT);
    ck_assert(p.delete_group); /* no reservation held while aborted */
    ck_assert_int_eq(p.next.version, 2);
    mu_jobsm_counts_release(&c);
    st = p.next;
    counts(j, 0, 0, 0, 0, 9, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_ABORTING);
    mu_jobsm_counts_release(&c);
    counts(j, 0, 0, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_ABORTED);
    st = p.next;
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_ABORTED);
    mu_jobsm_step(j, &st, &c, MU_JACT_RESUME_JOB, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RESTARTING);
    ck_assert_int_eq(p.next.retry, 2);
    ck_assert_int_eq(p.next.version, 3);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

START_TEST(test_restart_task)
{
    json_t *j = book_job();
    struct mu_jstate st = {MU_JOB_RUNNING, 0, 0};
    struct mu_jcounts c;
    struct mu_jplan p;

    counts(j, 0, 9, 0, 0, 0, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_RESTART_TASK, 1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RESTARTING);
    ck_assert_int_eq(p.kill, MU_JKILL_ALL);
    ck_assert_int_eq(p.kill_task, 1);
    ck_assert(!p.delete_group);
    ck_assert_int_eq(p.next.version, 0);
    ck_assert_int_eq(p.next.retry, 1);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

/* Elastic: 4 of 8 running with minAvailable 4 is Running; more pending than
 * the slack sends it back to Pending. */
START_TEST(test_elastic)
{
    json_t *j = json_loads(
        "{\"spec\":{\"minAvailable\":4,\"tasks\":[{\"name\":\"w\","
        "\"replicas\":8,\"minAvailable\":4}]}}", 0, NULL);
    struct mu_jpod pods[8];
    struct mu_jstate st = {MU_JOB_PENDING, 0, 0};
    struct mu_jcounts c;
    struct mu_jplan p;

    for (int i = 0; i < 8; i++)
        pods[i] = (struct mu_jpod){0, i, i < 4 ? MU_POD_RUNNING
                                              : MU_POD_PENDING, false};
    mu_jobsm_count(j, pods, 8, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RUNNING);
    st = p.next;
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_RUNNING);
    mu_jobsm_counts_release(&c);
    pods[3].phase = MU_POD_PENDING;
    mu_jobsm_count(j, pods, 8, &c);
    mu_jobsm_step(j, &st, &c, MU_JACT_SYNC, -1, &p);
    ck_assert_int_eq(p.next.phase, MU_JOB_PENDING);
    mu_jobsm_counts_release(&c);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jobsm");
    TCase *tc = tcase_create("jobsm");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_policy_match);
    tcase_add_test(tc, test_policy_star_and_order);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_restart_cycle);
    tcase_add_test(tc, test_max_retry);
    tcase_add_test(tc, test_last_retry_is_soft);
    tcase_add_test(tc, test_finish);
    tcase_add_test(tc, test_abort_resume);
    tcase_add_test(tc, test_restart_task);
    tcase_add_test(tc, test_elastic);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
