/* serve/apply.c: an object that does not decode is skipped and logged once
 * per version, however often a relist or the watch hands it over again. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "serve/apply.h"
#include "sched/cluster.h"

static struct mu_cluster cluster;
static struct mu_ctl ctl;
static struct mu_apply ap;
static struct mu_sb logged;
static unsigned nlogged;

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    mu_sb_addf(&logged, "%s\n", line);
    nlogged++;
}

static void setup(void)
{
    mu_cluster_init(&cluster);
    memset(&ctl, 0, sizeof(ctl));
    ctl.cluster = &cluster;
    ctl.log = log_line;
    mu_sb_init(&logged);
    mu_sb_add(&logged, "");
    nlogged = 0;
    mu_apply_init(&ap, &cluster, &ctl, NULL, NULL);
}

static void teardown(void)
{
    mu_apply_release(&ap);
    mu_cluster_release(&cluster);
    mu_sb_release(&logged);
}

/* A Node named name at rv whose cpu is cpu. */
static void node(enum mu_watch_type t, const char *name, const char *rv,
                 const char *cpu)
{
    struct mu_ev ev = {.src = MU_SRC_NODE, .type = t};

    ev.obj = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:{s:s, s:s}}}", "kind",
                       "Node", "metadata", "name", name, "uid", name,
                       "resourceVersion", rv, "status", "allocatable", "cpu",
                       cpu, "pods", "110");
    ck_assert_ptr_nonnull(ev.obj);
    mu_apply_event(&ap, &ev);
    json_decref(ev.obj);
}

static void mark(enum mu_watch_type t)
{
    struct mu_ev ev = {.src = MU_SRC_NODE, .type = t};

    mu_apply_event(&ap, &ev);
}

/* A relist of the same bad version logs nothing new; the good node next to
 * it is in the cache. */
START_TEST(test_apply_bad_object_logged_once_per_version)
{
    for (int i = 0; i < 3; i++) {
        mark(MU_WATCH_LIST_BEGIN);
        node(MU_WATCH_LIST_ITEM, "good", "1", "4");
        node(MU_WATCH_LIST_ITEM, "bad", "2", "lots");
        mark(MU_WATCH_LIST_END);
    }
    ck_assert_uint_eq(nlogged, 1);
    ck_assert_ptr_nonnull(strstr(logged.buf, "ignoring Node /bad (uid bad, "
                                             "rv 2): status.allocatable.cpu"));
    ck_assert_ptr_nonnull(mu_cluster_node(&cluster, "good"));
    ck_assert_ptr_null(mu_cluster_node(&cluster, "bad"));
    /* a new version that is still bad is reported again, once */
    node(MU_WATCH_MODIFIED, "bad", "3", "lots");
    node(MU_WATCH_MODIFIED, "bad", "3", "lots");
    ck_assert_uint_eq(nlogged, 2);
    ck_assert_ptr_nonnull(strstr(logged.buf, "rv 3"));
}
END_TEST

/* Once it decodes, or is deleted, or is gone from a relist, the next bad
 * version is news again. */
START_TEST(test_apply_bad_object_forgotten_when_fixed_or_gone)
{
    node(MU_WATCH_ADDED, "n", "1", "lots");
    node(MU_WATCH_MODIFIED, "n", "2", "4");
    ck_assert_ptr_nonnull(mu_cluster_node(&cluster, "n"));
    node(MU_WATCH_MODIFIED, "n", "1", "lots");
    ck_assert_uint_eq(nlogged, 2);
    node(MU_WATCH_DELETED, "n", "1", "lots");
    node(MU_WATCH_ADDED, "n", "1", "lots");
    ck_assert_uint_eq(nlogged, 3);
    mark(MU_WATCH_LIST_BEGIN);
    mark(MU_WATCH_LIST_END);
    ck_assert_uint_eq(ap.bad[MU_SRC_NODE].n, 0);
    node(MU_WATCH_ADDED, "n", "1", "lots");
    ck_assert_uint_eq(nlogged, 4);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("apply");
    TCase *tc = tcase_create("bad");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_apply_bad_object_logged_once_per_version);
    tcase_add_test(tc, test_apply_bad_object_forgotten_when_fixed_or_gone);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
