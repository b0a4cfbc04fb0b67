/* PodGroup status (src/serve/status.h) with a real th.writer on the fake
 * API server: what can wait never fills the writer's queue past half its
 * cap, is held back past it, and goes at a later call. */
#include <check.h>
#include <stdlib.h>

#include "serve/status.h"
#include "test_ctl_harness.h"

static void teardown(void)
{
    th_stop_writer();
    th_stop();
}

static struct mu_job *add_pg(const char *name)
{
    char buf[256];
    json_t *j;
    struct mu_podgroup pg;
    struct mu_err err;
    struct mu_job *jb;

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"namespace\":\"t\",\"name\":\"%s\",\"uid\":"
             "\"u-%s\"},\"spec\":{\"minMember\":1,\"queue\":\"default\"}}",
             name, name);
    j = json_loads(buf, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(mu_podgroup_decode(j, &th.cluster.rn, &pg, &err), 0);
    json_decref(j);
    jb = mu_cluster_add_job(&th.cluster, &pg, &err);
    ck_assert_ptr_nonnull(jb);
    jb->phase = MU_PG_PENDING;
    jb->cond.type = mu_xstrdup("Unschedulable");
    jb->cond.reason = mu_xstrdup("NotEnoughResources");
    jb->cond.message = mu_xstrdup("waiting");
    return jb;
}

START_TEST(test_status_fills_half_the_queue_and_holds_back_the_rest)
{
    struct mu_status s;
    struct mu_writer_stats st;

    /* queue of 8: status may fill 4 of it, four PodGroups' statuses (their
     * warnings go after them). The worker hangs on the first request, so
     * nothing drains past it. */
    th_start_cap(NULL, 8);
    kf_reply(&th.srv, (struct kf_reply){.status = 200, .body = "{}",
                                        .hang = true});
    for (int i = 0; i < 5; i++) {
        char n[8];

        snprintf(n, sizeof(n), "pg%d", i);
        add_pg(n);
    }
    mu_status_init(&s, &th.ctl);
    ck_assert(mu_status_write(&s)); /* one and five warnings held back */
    mu_writer_stats(th.writer, &st);
    ck_assert_uint_eq(st.submitted, 4);
    /* 3 or 4 still queued (the worker may have taken the first): one
     * more write (a warning) at most; at every call, however many: the
     * other half stays free for releases */
    for (int i = 0; i < 3; i++)
        ck_assert(mu_status_write(&s));
    mu_writer_stats(th.writer, &st);
    ck_assert_uint_ge(st.submitted, 4);
    ck_assert_uint_le(st.submitted, 5);
    ck_assert_uint_ge(mu_writer_room(th.writer), 4);
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

START_TEST(test_status_with_room_writes_all_once)
{
    struct mu_status s;

    th_start_cap(NULL, 0);
    for (int i = 0; i < 3; i++) {
        kf_reply_body(&th.srv, 200, "{}"); /* the PATCH */
        kf_reply_body(&th.srv, 201, "{}"); /* the event */
    }
    add_pg("a");
    add_pg("b");
    add_pg("c");
    mu_status_init(&s, &th.ctl);
    ck_assert(!mu_status_write(&s));
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 6);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert_uint_eq(s.inflight, 0); /* the events' done calls too */
    ck_assert_uint_eq(s.events_owed, 0);
    ck_assert(!mu_status_write(&s)); /* nothing changed: nothing sent */
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 6);
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

START_TEST(test_status_waiting_its_turn_is_written_without_a_warning)
{
    struct mu_status s;
    struct mu_job *j;

    th_start_cap(NULL, 0);
    for (int i = 0; i < 3; i++)
        kf_reply_body(&th.srv, 200, "{}");
    j = add_pg("a");
    free(j->cond.reason);
    j->cond.reason = mu_xstrdup("WaitingForRelease");
    mu_status_init(&s, &th.ctl);
    ck_assert(!mu_status_write(&s));
    th_settle(1, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1); /* the status, no event */
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 0)->body,
                                 "WaitingForRelease"));
    /* released and bound: the status and its Scheduled event */
    free(j->cond.type);
    free(j->cond.reason);
    free(j->cond.message);
    j->cond.type = mu_xstrdup("Scheduled");
    j->cond.reason = mu_xstrdup("Scheduled");
    j->cond.message = mu_xstrdup("pod group is ready");
    ck_assert(!mu_status_write(&s));
    th_settle(3, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 3);
    {
        /* the two writers' workers may land them in either order */
        int ev = !strcmp(kf_req(&th.srv, 1)->method, "POST") ? 1 : 2;

        ck_assert_str_eq(kf_req(&th.srv, 3 - ev)->method, "PATCH");
        ck_assert_str_eq(kf_req(&th.srv, ev)->method, "POST");
        ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, ev)->path, "/events"));
        ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, ev)->body, "Scheduled"));
    }
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

static void set_cond(struct mu_job *j, const char *type, const char *reason,
                     const char *message)
{
    free(j->cond.type);
    free(j->cond.reason);
    free(j->cond.message);
    j->cond.type = mu_xstrdup(type);
    j->cond.reason = mu_xstrdup(reason);
    j->cond.message = mu_xstrdup(message);
}

START_TEST(test_status_keeps_a_window_in_the_writer)
{
    struct mu_status s;
    struct mu_writer_stats st;

    /* the worker hangs on the first request: nothing completes. 200
     * PodGroups owe a status and a warning each, the queue has room for
     * all of them (4,096, half of it for statuses), the window takes 128
     * statuses, and their warnings wait behind them */
    th_start_cap(NULL, 0);
    kf_reply(&th.srv, (struct kf_reply){.status = 200, .body = "{}",
                                        .hang = true});
    for (int i = 0; i < 200; i++) {
        char n[16];

        snprintf(n, sizeof(n), "pg%03d", i);
        add_pg(n);
    }
    mu_status_init(&s, &th.ctl);
    ck_assert(mu_status_write(&s));
    mu_writer_stats(th.writer, &st);
    ck_assert_uint_eq(st.submitted, MU_STATUS_WINDOW);
    ck_assert_uint_eq(s.inflight, MU_STATUS_WINDOW);
    ck_assert_uint_eq(s.events_owed, MU_STATUS_WINDOW);
    ck_assert(mu_status_write(&s)); /* none completed: none more */
    mu_writer_stats(th.writer, &st);
    ck_assert_uint_eq(st.submitted, MU_STATUS_WINDOW);
    th_stop_writer();
    ck_assert_uint_eq(s.inflight, 0); /* every one's done was called */
    mu_status_release(&s);
    ck_assert_ptr_nonnull(
        strstr(th.logged, "stopping: 128 PodGroup events owed, not sent"));
}
END_TEST

/* the PodGroup a PATCH wrote, from its path */
static const char *patched(size_t i)
{
    const struct kf_request *r = kf_req(&th.srv, i);

    ck_assert_str_eq(r->method, "PATCH");
    return strrchr(r->path, '/') + 1;
}

START_TEST(test_status_most_pressing_first)
{
    struct mu_status s;
    struct mu_job *j[5];
    size_t n, k = 0;
    const char *want[] = {"p3", "p1", "p2", "p0"};

    th_start_cap(NULL, 0);
    for (int i = 0; i < 32; i++)
        kf_reply_body(&th.srv, 200, "{}");
    for (int i = 0; i < 5; i++) {
        char name[8];

        snprintf(name, sizeof(name), "p%d", i);
        j[i] = add_pg(name);
    }
    mu_status_init(&s, &th.ctl);
    ck_assert(!mu_status_write(&s));
    th_settle(2, 5000);
    n = kf_count(&th.srv);
    ck_assert_uint_eq(n, 10); /* 5 statuses, 5 warnings */
    /* in the cluster's order, one a rank (the writer has one worker) */
    free(j[0]->cond.message);
    j[0]->cond.message = mu_xstrdup("waiting, other figures"); /* 4th */
    /* 2nd: another kind of condition */
    set_cond(j[1], "Unschedulable", "NotEnoughTasks", "too few pods");
    j[2]->phase = MU_PG_INQUEUE; /* 3rd: admitted, the same condition */
    j[3]->phase = MU_PG_RUNNING; /* 1st: its pods were bound */
    set_cond(j[3], "Scheduled", "Scheduled", "pod group is ready");
    ck_assert(!mu_status_write(&s));
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), n + 4 + 2); /* and two events */
    for (size_t i = n; i < kf_count(&th.srv); i++)
        if (!strcmp(kf_req(&th.srv, i)->method, "PATCH")) {
            ck_assert_uint_lt(k, 4);
            ck_assert_str_eq(patched(i), want[k]);
            k++;
        }
    /* p3's Scheduled event right after the Running statuses, before the
     * other statuses; p1's warning, owed by its status, after them */
    ck_assert_str_eq(kf_req(&th.srv, n + 1)->method, "POST");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, n + 1)->body, "\"p3\""));
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, n + 1)->body, "Scheduled"));
    ck_assert_str_eq(kf_req(&th.srv, n + 5)->method, "POST");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, n + 5)->body, "\"p1\""));
    ck_assert_ptr_nonnull(
        strstr(kf_req(&th.srv, n + 5)->body, "too few pods"));
    ck_assert_uint_eq(k, 4);
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

START_TEST(test_status_made_again_is_written_again)
{
    struct mu_status s;
    struct mu_job *j;
    char *uid;

    th_start_cap(NULL, 0);
    for (int i = 0; i < 4; i++)
        kf_reply_body(&th.srv, 200, "{}");
    j = add_pg("a");
    mu_status_init(&s, &th.ctl);
    ck_assert(!mu_status_write(&s));
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 2); /* its status, its warning */
    /* deleted and made again under its name, saying the same */
    uid = j->pg.meta.uid;
    j->pg.meta.uid = mu_xstrdup("u-a-again");
    free(uid);
    ck_assert(!mu_status_write(&s));
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 4);
    ck_assert_str_eq(patched(2), "a");
    ck_assert(!mu_status_write(&s)); /* and once */
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 4);
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

/* what was written for PodGroups from..to-1 of a namespace now gone */
static void remember_gone(struct mu_status *s, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        char key[32];
        struct mu_pg_written *w = mu_xcalloc(1, sizeof(*w));

        snprintf(key, sizeof(key), "gone/pg%u", i);
        w->sig = mu_xstrdup("Running|1|0|0|||");
        mu_map_put(&s->pgs, key, w);
    }
}

START_TEST(test_status_forgets_the_gone_past_the_slack)
{
    struct mu_status s;

    th_start_cap(NULL, 0);
    for (int i = 0; i < 4; i++)
        kf_reply_body(&th.srv, 200, "{}");
    add_pg("live");
    mu_status_init(&s, &th.ctl);
    /* as many gone as the slack allows: kept (no walk) */
    remember_gone(&s, 0, MU_STATUS_FORGET_SLACK);
    ck_assert(!mu_status_write(&s));
    ck_assert_uint_eq(s.pgs.n, MU_STATUS_FORGET_SLACK + 1);
    /* one more: every gone one forgotten, the live one kept */
    remember_gone(&s, MU_STATUS_FORGET_SLACK, MU_STATUS_FORGET_SLACK + 1);
    ck_assert(!mu_status_write(&s));
    ck_assert_uint_eq(s.pgs.n, 1);
    ck_assert_ptr_nonnull(mu_map_get(&s.pgs, "t/live"));
    th_settle(2, 5000);
    th_stop_writer();
    mu_status_release(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_status_fills_half_the_queue_and_holds_back_the_rest);
    tcase_add_test(tc, test_status_with_room_writes_all_once);
    tcase_add_test(tc, test_status_waiting_its_turn_is_written_without_a_warning);
    tcase_add_test(tc, test_status_keeps_a_window_in_the_writer);
    tcase_add_test(tc, test_status_most_pressing_first);
    tcase_add_test(tc, test_status_made_again_is_written_again);
    tcase_add_test(tc, test_status_forgets_the_gone_past_the_slack);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
