/* The vcjob lifecycle: policies and the state machine (ctrl/jobsm.h), as
 * tables: one row per question, and the answer the row expects. */
#include <check.h>
#include <stdlib.h>

#include "common/mu.h"
#include "ctrl/jobsm.h"

enum job { BOOK, STAR, ELASTIC };

/* BOOK: the book's job, 1 master + 8 workers, minAvailable 9, maxRetry 3,
 * PodEvicted -> RestartJob; plus task policies on the workers.
 * STAR: a PodFailed policy before a "*" one. ELASTIC: 8 workers of which 4
 * are enough. */
static json_t *job_json(enum job which)
{
    static const char *const text[] = {
        [BOOK] =
            "{\"spec\":{\"minAvailable\":9,\"maxRetry\":3,"
            "\"policies\":[{\"event\":\"PodEvicted\",\"action\":"
            "\"RestartJob\"}],\"tasks\":["
            "{\"name\":\"master\",\"replicas\":1,\"minAvailable\":1},"
            "{\"name\":\"worker\",\"replicas\":8,\"minAvailable\":8,"
            "\"policies\":[{\"exitCode\":137,\"action\":\"RestartTask\"},"
            "{\"events\":[\"TaskCompleted\"],\"action\":\"CompleteJob\"},"
            "{\"event\":\"PodPending\",\"timeout\":\"1m30s\","
            "\"action\":\"AbortJob\"}]}]}}",
        [STAR] =
            "{\"spec\":{\"policies\":[{\"event\":\"PodFailed\","
            "\"action\":\"AbortJob\"},{\"event\":\"*\",\"action\":"
            "\"TerminateJob\"}],\"tasks\":[{\"name\":\"a\",\"replicas\":1}]}}",
        [ELASTIC] =
            "{\"spec\":{\"minAvailable\":4,\"tasks\":[{\"name\":\"w\","
            "\"replicas\":8,\"minAvailable\":4}]}}",
    };
    json_error_t e;
    json_t *j = json_loads(text[which], 0, &e);

    ck_assert_msg(j != NULL, "%s", e.text);
    return j;
}

/* ------------------------------------------------------------ policies -- */

static const struct {
    enum job job;
    int task;
    enum mu_jevent ev;
    int exit_code;
    int64_t lasted_ms;
    enum mu_jaction want;
} policy_cases[] = {
    /* job-level PodEvicted, from either task */
    {BOOK, 1, MU_JEV_POD_EVICTED, -1, -1, MU_JACT_RESTART_JOB},
    {BOOK, 0, MU_JEV_POD_EVICTED, -1, -1, MU_JACT_RESTART_JOB},
    {BOOK, -1, MU_JEV_POD_EVICTED, -1, -1, MU_JACT_RESTART_JOB},
    /* exit codes match only PodFailed with that code */
    {BOOK, 1, MU_JEV_POD_FAILED, 137, -1, MU_JACT_RESTART_TASK},
    {BOOK, 1, MU_JEV_POD_FAILED, 1, -1, MU_JACT_SYNC},
    {BOOK, 0, MU_JEV_POD_FAILED, 137, -1, MU_JACT_SYNC},
    /* events list, task level */
    {BOOK, 1, MU_JEV_TASK_COMPLETED, -1, -1, MU_JACT_COMPLETE_JOB},
    {BOOK, 0, MU_JEV_TASK_COMPLETED, -1, -1, MU_JACT_SYNC},
    /* a timeout must have passed */
    {BOOK, 1, MU_JEV_POD_PENDING, -1, -1, MU_JACT_SYNC},
    {BOOK, 1, MU_JEV_POD_PENDING, -1, 89999, MU_JACT_SYNC},
    {BOOK, 1, MU_JEV_POD_PENDING, -1, 90000, MU_JACT_ABORT_JOB},
    /* a plain sync matches nothing */
    {BOOK, 1, MU_JEV_NONE, -1, -1, MU_JACT_SYNC},
    /* the first matching policy wins; "*" matches the rest */
    {STAR, 0, MU_JEV_POD_FAILED, 3, -1, MU_JACT_ABORT_JOB},
    {STAR, 0, MU_JEV_UNKNOWN, -1, -1, MU_JACT_TERMINATE_JOB},
    /* every pod starts Pending: "*" without a timeout does not mean it */
    {STAR, 0, MU_JEV_POD_PENDING, -1, 999999, MU_JACT_SYNC},
};

START_TEST(test_jobsm_policy_picks_the_action)
{
    json_t *j = job_json(policy_cases[_i].job);
    enum mu_jaction got =
        mu_jobsm_policy(j, policy_cases[_i].task, policy_cases[_i].ev,
                        policy_cases[_i].exit_code, policy_cases[_i].lasted_ms);

    ck_assert_msg(got == policy_cases[_i].want,
                  "row %d: %s on task %d (exit %d, %lld ms): got %s, want %s",
                  _i, mu_jevent_name(policy_cases[_i].ev),
                  policy_cases[_i].task, policy_cases[_i].exit_code,
                  (long long)policy_cases[_i].lasted_ms, mu_jaction_name(got),
                  mu_jaction_name(policy_cases[_i].want));
    json_decref(j);
}
END_TEST

/* --------------------------------------------------------------- names -- */

START_TEST(test_jobsm_phase_names_round_trip)
{
    enum mu_jphase p;

    ck_assert(mu_jphase_parse(mu_jphase_name((enum mu_jphase)_i), &p));
    ck_assert_int_eq(p, _i);
}
END_TEST

static const struct {
    const char *text;
    bool ok;
    enum mu_jaction want; /* when ok */
} action_cases[] = {
    {"ResumeJob", true, MU_JACT_RESUME_JOB},
    {"SyncJob", false, MU_JACT_SYNC},
    {"restartjob", false, MU_JACT_SYNC},
};

START_TEST(test_jobsm_action_names_parse)
{
    enum mu_jaction a;
    bool ok = mu_jaction_parse(action_cases[_i].text, &a);

    ck_assert_msg(ok == action_cases[_i].ok, "%s", action_cases[_i].text);
    if (ok)
        ck_assert_int_eq(a, action_cases[_i].want);
}
END_TEST

START_TEST(test_jobsm_names)
{
    enum mu_jphase p;

    ck_assert(!mu_jphase_parse("Bogus", &p));
    ck_assert_int_eq(p, MU_JOB_PENDING);
    ck_assert(mu_jphase_final(MU_JOB_FAILED));
    ck_assert(!mu_jphase_final(MU_JOB_ABORTED));
}
END_TEST

/* ------------------------------------------------------------- counts -- */

/* Pods by phase. BOOK: running and succeeded ones are the master first,
 * then workers; the others are workers. ELASTIC: all of task 0. */
struct pods {
    int pending, running, succ, failed, term;
};

static void counts(enum job which, const json_t *job, struct pods n,
                   struct mu_jcounts *c)
{
    struct mu_jpod pods[32];
    size_t k = 0;
    int w = which == ELASTIC ? 0 : 1;

    for (int i = 0; i < n.pending; i++)
        pods[k++] = (struct mu_jpod){w, i, MU_POD_PENDING, false};
    for (int i = 0; i < n.running; i++)
        pods[k++] = (struct mu_jpod){i == 0 ? 0 : w, i, MU_POD_RUNNING, false};
    for (int i = 0; i < n.succ; i++)
        pods[k++] = (struct mu_jpod){i == 0 ? 0 : w, i, MU_POD_SUCCEEDED,
                                     false};
    for (int i = 0; i < n.failed; i++)
        pods[k++] = (struct mu_jpod){w, i, MU_POD_FAILED, false};
    for (int i = 0; i < n.term; i++)
        pods[k++] = (struct mu_jpod){w, i, MU_POD_RUNNING, true};
    mu_jobsm_count(job, pods, k, c);
}

START_TEST(test_jobsm_counts)
{
    json_t *j = job_json(BOOK);
    struct mu_jcounts c;

    counts(BOOK, j, (struct pods){2, 5, 1, 1, 3}, &c);
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

/* --------------------------------------------------------------- steps -- */

#define ANY (-99) /* a field the row does not check */
#define R MU_JOB_RUNNING
#define P MU_JOB_PENDING
#define RS MU_JOB_RESTARTING
#define AB MU_JOB_ABORTING
#define ABD MU_JOB_ABORTED

/* One mu_jobsm_step: the state, the pods and the action in; the plan's
 * fields the row checks out (ANY: not checked). Rows that follow a story
 * start from the state the row before planned. */
static const struct step_case {
    const char *what;
    enum job job;
    struct mu_jstate cur;
    struct pods pods;
    enum mu_jaction a;
    int task;
    struct {
        int phase, version, retry;
        int kill, kill_task;
        int delete_group, create; /* 0, 1 or ANY */
        const char *reason;       /* NULL: not checked */
    } want;
} step_cases[] = {
    /* the book's story: an evicted worker restarts the whole job */
    {"restart", BOOK, {R, 0, 0}, {0, 8, 0, 0, 0}, MU_JACT_RESTART_JOB, -1,
     {RS, 1, 1, MU_JKILL_ALL, -1, 1, 0, NULL}},
    {"restart: old pods terminate, it waits", BOOK, {RS, 1, 1},
     {0, 0, 0, 0, 8}, MU_JACT_SYNC, -1,
     {RS, ANY, ANY, ANY, ANY, ANY, 0, NULL}},
    {"restart: then Pending again, making its pods", BOOK, {RS, 1, 1},
     {0, 0, 0, 0, 0}, MU_JACT_SYNC, -1,
     {P, 1, 1, MU_JKILL_NONE, ANY, ANY, 1, NULL}},
    {"restart: Pending below minAvailable", BOOK, {P, 1, 1}, {1, 8, 0, 0, 0},
     MU_JACT_SYNC, -1, {P, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"restart: Running at minAvailable", BOOK, {P, 1, 1}, {0, 9, 0, 0, 0},
     MU_JACT_SYNC, -1, {R, ANY, ANY, ANY, ANY, ANY, 1, NULL}},
    /* the last retry kills softly: failed pods stay for `kubectl logs` */
    {"last retry", BOOK, {R, 2, 2}, {0, 7, 0, 1, 0}, MU_JACT_RESTART_JOB, -1,
     {ANY, 3, 3, MU_JKILL_SOFT, ANY, 1, ANY, NULL}},
    {"not the last retry", BOOK, {R, 2, 0}, {0, 7, 0, 1, 0},
     MU_JACT_RESTART_JOB, -1,
     {ANY, ANY, ANY, MU_JKILL_ALL, ANY, ANY, ANY, NULL}},
    {"max retry", BOOK, {RS, 3, 3}, {0, 0, 0, 0, 0}, MU_JACT_SYNC, -1,
     {MU_JOB_FAILED, ANY, ANY, ANY, ANY, ANY, 0, "MaxRetryReached"}},
    {"below max retry", BOOK, {RS, 3, 2}, {0, 0, 0, 0, 0}, MU_JACT_SYNC, -1,
     {P, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    /* finishing */
    {"all succeeded", BOOK, {R, 0, 0}, {0, 0, 9, 0, 0}, MU_JACT_SYNC, -1,
     {MU_JOB_COMPLETED, ANY, ANY, ANY, ANY, ANY, 0, NULL}},
    {"a worker failed: its task's minAvailable 8 is not met", BOOK,
     {R, 0, 0}, {0, 0, 8, 1, 0}, MU_JACT_SYNC, -1,
     {MU_JOB_FAILED, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"still running", BOOK, {R, 0, 0}, {0, 5, 4, 0, 0}, MU_JACT_SYNC, -1,
     {R, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"a final job only stops what still runs", BOOK,
     {MU_JOB_COMPLETED, 0, 0}, {0, 1, 8, 0, 0}, MU_JACT_RESTART_JOB, -1,
     {MU_JOB_COMPLETED, ANY, ANY, MU_JKILL_SOFT, ANY, ANY, 0, NULL}},
    /* abort, then resume; no reservation is held while aborted */
    {"abort", BOOK, {R, 2, 1}, {0, 9, 0, 0, 0}, MU_JACT_ABORT_JOB, -1,
     {AB, 2, 1, MU_JKILL_SOFT, ANY, 1, ANY, NULL}},
    {"abort: pods terminating", BOOK, {AB, 2, 1}, {0, 0, 0, 0, 9},
     MU_JACT_SYNC, -1, {AB, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"abort: pods gone", BOOK, {AB, 2, 1}, {0, 0, 0, 0, 0}, MU_JACT_SYNC, -1,
     {ABD, 2, 1, ANY, ANY, ANY, ANY, NULL}},
    {"aborted stays", BOOK, {ABD, 2, 1}, {0, 0, 0, 0, 0}, MU_JACT_SYNC, -1,
     {ABD, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"resume", BOOK, {ABD, 2, 1}, {0, 0, 0, 0, 0}, MU_JACT_RESUME_JOB, -1,
     {RS, 3, 2, ANY, ANY, ANY, ANY, NULL}},
    {"restart a task", BOOK, {R, 0, 0}, {0, 9, 0, 0, 0}, MU_JACT_RESTART_TASK,
     1, {RS, 0, 1, MU_JKILL_ALL, 1, 0, ANY, NULL}},
    /* elastic: 4 of 8 running with minAvailable 4 is Running; more pending
     * than the slack sends it back to Pending */
    {"elastic: enough run", ELASTIC, {P, 0, 0}, {4, 4, 0, 0, 0}, MU_JACT_SYNC,
     -1, {R, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"elastic: still enough", ELASTIC, {R, 0, 0}, {4, 4, 0, 0, 0},
     MU_JACT_SYNC, -1, {R, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
    {"elastic: one fewer", ELASTIC, {R, 0, 0}, {5, 3, 0, 0, 0}, MU_JACT_SYNC,
     -1, {P, ANY, ANY, ANY, ANY, ANY, ANY, NULL}},
};

START_TEST(test_jobsm_step_plans)
{
    const struct step_case *c = &step_cases[_i];
    json_t *j = job_json(c->job);
    struct mu_jcounts n;
    struct mu_jplan p;

    counts(c->job, j, c->pods, &n);
    mu_jobsm_step(j, &c->cur, &n, c->a, c->task, &p);
    mu_jobsm_counts_release(&n);
    json_decref(j);
    if (c->want.phase != ANY)
        ck_assert_msg(p.next.phase == (enum mu_jphase)c->want.phase,
                      "%s: phase %s, want %s", c->what,
                      mu_jphase_name(p.next.phase),
                      mu_jphase_name((enum mu_jphase)c->want.phase));
    if (c->want.version != ANY)
        ck_assert_msg(p.next.version == c->want.version, "%s: version %d",
                      c->what, p.next.version);
    if (c->want.retry != ANY)
        ck_assert_msg(p.next.retry == c->want.retry, "%s: retry %d", c->what,
                      p.next.retry);
    if (c->want.kill != ANY)
        ck_assert_msg(p.kill == (enum mu_jkill)c->want.kill, "%s: kill %d",
                      c->what, p.kill);
    if (c->want.kill_task != ANY)
        ck_assert_msg(p.kill_task == c->want.kill_task, "%s: kill_task %d",
                      c->what, p.kill_task);
    if (c->want.delete_group != ANY)
        ck_assert_msg(p.delete_group == (c->want.delete_group == 1),
                      "%s: delete_group %d", c->what, p.delete_group);
    if (c->want.create != ANY)
        ck_assert_msg(p.create == (c->want.create == 1), "%s: create %d",
                      c->what, p.create);
    if (c->want.reason)
        ck_assert_msg(p.reason && !strcmp(p.reason, c->want.reason),
                      "%s: reason %s", c->what, p.reason ? p.reason : "none");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jobsm");
    TCase *tc = tcase_create("jobsm");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_jobsm_policy_picks_the_action, 0,
                        (int)MU_ARRAY_LEN(policy_cases));
    tcase_add_loop_test(tc, test_jobsm_phase_names_round_trip, 0,
                        MU_JOB__NPHASES);
    tcase_add_loop_test(tc, test_jobsm_action_names_parse, 0,
                        (int)MU_ARRAY_LEN(action_cases));
    tcase_add_test(tc, test_jobsm_names);
    tcase_add_test(tc, test_jobsm_counts);
    tcase_add_loop_test(tc, test_jobsm_step_plans, 0,
                        (int)MU_ARRAY_LEN(step_cases));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
