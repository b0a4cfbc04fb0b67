/*
 * The published view: building, looking up, and the slot that hands views
 * from the scheduler thread to HTTP threads (run under valgrind and
 * helgrind: `valgrind --tool=helgrind` with CK_FORK=no stays quiet).
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extender/view.h"

START_TEST(test_view_new_is_empty_unsynced_and_serves_volcano)
{
    struct mu_view *v = mu_view_new(7, false);

    ck_assert_int_eq(atomic_load(&v->refs), 1);
    ck_assert_uint_eq(v->gen, 7);
    ck_assert(!v->synced);
    ck_assert_str_eq(v->sched_names[0], "volcano");
    ck_assert_ptr_null(v->sched_names[1]);
    ck_assert(mu_view_serves(v, "volcano"));
    ck_assert(!mu_view_serves(v, "default-scheduler"));
    ck_assert(!mu_view_serves(v, NULL));
    ck_assert_ptr_null(mu_view_pod(v, "nope"));
    mu_view_put(v);
}
END_TEST

START_TEST(test_view_add_pod_copies_strings_and_replaces_by_uid)
{
    struct mu_view *v = mu_view_new(1, true);
    char uid[] = "u-1", node[] = "gpu-01";
    const struct mu_view_pod *p;

    mu_view_add_pod(v, uid, "team-a", "w-0", "team-a/pg", node, "team-a/pg#1",
                    2, NULL);
    uid[0] = 'X';
    node[0] = 'X';
    p = mu_view_pod(v, "u-1");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->uid, "u-1");
    ck_assert_str_eq(p->ns, "team-a");
    ck_assert_str_eq(p->name, "w-0");
    ck_assert_str_eq(p->gang, "team-a/pg");
    ck_assert_str_eq(p->node, "gpu-01");
    ck_assert_str_eq(p->release, "team-a/pg#1");
    ck_assert_int_eq(p->batch_size, 2);
    ck_assert_ptr_null(p->reason);

    mu_view_add_pod(v, "u-1", "team-a", "w-0", "team-a/pg", NULL, NULL, 0,
                    "3/4 members");
    p = mu_view_pod(v, "u-1");
    ck_assert_ptr_null(p->node);
    ck_assert_ptr_null(p->release);
    ck_assert_str_eq(p->reason, "3/4 members");
    ck_assert_uint_eq(v->npods, 1);
    mu_view_put(v);
}
END_TEST

START_TEST(test_view_lists_a_batchs_members_and_marks_plain_pods)
{
    struct mu_view *v = mu_view_new(1, true);
    const struct mu_view_batch *b;

    mu_view_add_pod(v, "u-0", "ns", "w-0", "ns/pg", "n0", "ns/pg#1", 2, NULL);
    mu_view_add_pod(v, "u-9", "ns", "x-0", "ns/x", NULL, NULL, 0, "waits");
    mu_view_add_pod(v, "u-1", "ns", "w-1", "ns/pg", "n1", "ns/pg#1", 2, NULL);
    mu_view_add_pod(v, "u-2", "ns", "y-0", "ns/y", "n2", "ns/y#7", 1, NULL);
    b = mu_view_batch(v, "ns/pg#1");
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(b->n, 2);
    ck_assert_str_eq(b->uids[0], "u-0");
    ck_assert_str_eq(b->uids[1], "u-1");
    ck_assert_uint_eq(mu_view_batch(v, "ns/y#7")->n, 1);
    ck_assert_ptr_null(mu_view_batch(v, "ns/pg#2"));
    ck_assert_ptr_null(mu_view_batch(v, NULL));
    ck_assert_ptr_null(mu_view_batch(NULL, "ns/pg#1"));
    /* not plain until marked; unknown uids change nothing */
    ck_assert(!mu_view_pod(v, "u-0")->plain);
    mu_view_set_plain(v, "u-0", true);
    mu_view_set_plain(v, "nobody", true);
    mu_view_set_plain(v, NULL, true);
    ck_assert(mu_view_pod(v, "u-0")->plain);
    ck_assert(!mu_view_pod(v, "u-1")->plain);
    /* added again in the same batch: listed once; in another: there */
    mu_view_add_pod(v, "u-1", "ns", "w-1", "ns/pg", "n1", "ns/pg#1", 2, NULL);
    ck_assert_uint_eq(mu_view_batch(v, "ns/pg#1")->n, 2);
    mu_view_add_pod(v, "u-1", "ns", "w-1", "ns/pg", "n1", "ns/pg#2", 1, NULL);
    ck_assert_uint_eq(mu_view_batch(v, "ns/pg#2")->n, 1);
    mu_view_put(v);
}
END_TEST

/* A pod's fields as publish() gives them. */
static struct mu_view_pod fields(const char *uid, const char *node,
                                 const char *reason)
{
    return (struct mu_view_pod){.uid = (char *)uid, .ns = (char *)"ns",
                                .name = (char *)uid, .gang = (char *)"ns/pg",
                                .node = (char *)node,
                                .release = node ? (char *)"ns/pg#1" : NULL,
                                .batch_size = node ? 2 : 0,
                                .reason = (char *)reason,
                                .controlled = true};
}

START_TEST(test_view_cache_shares_unchanged_entries_and_remakes_moved_ones)
{
    struct mu_view_cache c;
    struct mu_view *v1, *v2, *v3;
    struct mu_view_pod f;
    const struct mu_view_pod *a1, *b1, *b2;
    char reason[] = "waiting for its turn";

    mu_view_cache_init(&c);
    v1 = mu_view_new(1, true);
    f = fields("u-a", NULL, reason);
    mu_view_cache_put(&c, v1, &f);
    f = fields("u-b", NULL, "3/4 members");
    mu_view_cache_put(&c, v1, &f);
    mu_view_cache_sweep(&c);
    a1 = mu_view_pod(v1, "u-a");
    b1 = mu_view_pod(v1, "u-b");
    ck_assert_ptr_nonnull(a1);
    ck_assert_ptr_nonnull(b1);

    /* the same fields, the reason in another buffer: the same entry */
    v2 = mu_view_new(2, true);
    f = fields("u-a", NULL, "waiting for its turn");
    mu_view_cache_put(&c, v2, &f);
    /* u-b reserved now: a new entry; v1 keeps the old one */
    f = fields("u-b", "gpu-1", NULL);
    mu_view_cache_put(&c, v2, &f);
    mu_view_cache_sweep(&c);
    ck_assert_ptr_eq(mu_view_pod(v2, "u-a"), a1);
    b2 = mu_view_pod(v2, "u-b");
    ck_assert_ptr_ne(b2, b1);
    ck_assert_str_eq(b2->node, "gpu-1");
    ck_assert_int_eq(b2->batch_size, 2);
    ck_assert_ptr_nonnull(mu_view_batch(v2, "ns/pg#1"));
    ck_assert_ptr_null(b1->node);
    ck_assert_str_eq(b1->reason, "3/4 members");
    /* a changed flag alone is a new entry too */
    v3 = mu_view_new(3, true);
    f = fields("u-b", "gpu-1", NULL);
    f.plain = true;
    mu_view_cache_put(&c, v3, &f);
    mu_view_cache_sweep(&c);
    ck_assert_ptr_ne(mu_view_pod(v3, "u-b"), b2);
    ck_assert(mu_view_pod(v3, "u-b")->plain);
    ck_assert(!b2->plain);
    /* u-a was not put in v3: swept from the cache, still in v1 and v2 */
    ck_assert_ptr_null(mu_view_pod(v3, "u-a"));
    ck_assert_uint_eq(c.ents.n, 1);
    ck_assert_uint_eq(v3->npods, 1);
    mu_view_put(v1);
    mu_view_put(v3);
    ck_assert_str_eq(mu_view_pod(v2, "u-a")->reason, "waiting for its turn");
    mu_view_put(v2);
    mu_view_cache_release(&c);
}
END_TEST

START_TEST(test_view_set_plain_on_a_shared_entry_changes_this_view_only)
{
    struct mu_view_cache c;
    struct mu_view *v1, *v2;
    struct mu_view_pod f = fields("u-a", "gpu-1", NULL);

    mu_view_cache_init(&c);
    v1 = mu_view_new(1, true);
    v2 = mu_view_new(2, true);
    mu_view_cache_put(&c, v1, &f);
    mu_view_cache_put(&c, v2, &f);
    mu_view_cache_sweep(&c);
    ck_assert_ptr_eq(mu_view_pod(v1, "u-a"), mu_view_pod(v2, "u-a"));
    mu_view_set_plain(v2, "u-a", true);
    mu_view_set_controlled(v2, "u-a", false);
    ck_assert(mu_view_pod(v2, "u-a")->plain);
    ck_assert(!mu_view_pod(v2, "u-a")->controlled);
    ck_assert(!mu_view_pod(v1, "u-a")->plain);
    ck_assert(mu_view_pod(v1, "u-a")->controlled);
    ck_assert_str_eq(mu_view_pod(v2, "u-a")->node, "gpu-1");
    mu_view_put(v1);
    mu_view_put(v2);
    mu_view_cache_release(&c);
}
END_TEST

START_TEST(test_view_table_finds_every_pod_past_many_growths)
{
    struct mu_view *v = mu_view_new(1, true);
    char uid[32];

    for (int i = 0; i < 5000; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        mu_view_add_pod(v, uid, "ns", uid, "ns/pg", NULL, NULL, 0, "w");
    }
    /* again: replaced, not added */
    for (int i = 0; i < 5000; i += 7) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        mu_view_add_pod(v, uid, "ns", uid, "ns/pg", "n", "ns/pg#1", 1, NULL);
    }
    ck_assert_uint_eq(v->npods, 5000);
    ck_assert_uint_le(v->npods * 2, v->cap);
    for (int i = 0; i < 5000; i++) {
        const struct mu_view_pod *p;

        snprintf(uid, sizeof(uid), "uid-%d", i);
        p = mu_view_pod(v, uid);
        ck_assert_ptr_nonnull(p);
        ck_assert_str_eq(p->name, uid);
        ck_assert_int_eq(p->node != NULL, i % 7 == 0);
    }
    ck_assert_ptr_null(mu_view_pod(v, "uid-5000"));
    ck_assert_uint_eq(mu_view_batch(v, "ns/pg#1")->n, (5000 + 6) / 7);
    mu_view_put(v);
}
END_TEST

/* A view reserved for n pods takes them in the table it was given; a
 * reservation past what it holds moves them all, found as before. */
START_TEST(test_view_reserve_makes_the_table_once)
{
    struct mu_view *v = mu_view_new(1, true);
    struct mu_view_pod **table;
    char uid[32];

    mu_view_reserve(v, 3000);
    ck_assert_uint_ge(v->cap, 6000);
    table = v->pods;
    for (int i = 0; i < 3000; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        mu_view_add_pod(v, uid, "ns", uid, "ns/pg", NULL, NULL, 0, "w");
    }
    ck_assert_ptr_eq(v->pods, table);
    mu_view_reserve(v, 100); /* less than it holds: nothing moves */
    ck_assert_ptr_eq(v->pods, table);
    mu_view_reserve(v, 20000);
    ck_assert_uint_ge(v->cap, 40000);
    ck_assert_uint_eq(v->npods, 3000);
    for (int i = 0; i < 3000; i++) {
        snprintf(uid, sizeof(uid), "uid-%d", i);
        ck_assert_ptr_nonnull(mu_view_pod(v, uid));
    }
    ck_assert_ptr_null(mu_view_pod(v, "uid-3000"));
    mu_view_put(v);
}
END_TEST

START_TEST(test_view_set_sched_names_replaces_the_list)
{
    struct mu_view *v = mu_view_new(1, true);
    const char *names[] = {"gang", "volcano-2", NULL};

    mu_view_set_sched_names(v, names);
    ck_assert(mu_view_serves(v, "gang"));
    ck_assert(mu_view_serves(v, "volcano-2"));
    ck_assert(!mu_view_serves(v, "volcano"));
    mu_view_put(v);
}
END_TEST

START_TEST(test_view_slot_is_empty_before_the_first_publish)
{
    struct mu_view_slot s;

    mu_view_slot_init(&s);
    ck_assert_ptr_null(mu_view_get(&s));
    mu_view_put(NULL); /* allowed */
    mu_view_slot_release(&s);
}
END_TEST

START_TEST(test_view_readers_keep_an_old_view_after_a_new_publish)
{
    struct mu_view_slot s;
    struct mu_view *a, *b, *held;

    mu_view_slot_init(&s);
    a = mu_view_new(1, true);
    mu_view_add_pod(a, "u-1", "ns", "p", "ns/g", "gpu-01", NULL, 1, NULL);
    mu_view_publish(&s, a);
    held = mu_view_get(&s);
    ck_assert_ptr_eq(held, a);
    ck_assert_int_eq(atomic_load(&a->refs), 2);

    b = mu_view_new(2, true);
    mu_view_publish(&s, b);
    ck_assert_int_eq(atomic_load(&a->refs), 1); /* only the reader's */
    ck_assert_str_eq(mu_view_pod(held, "u-1")->node, "gpu-01");
    mu_view_put(held); /* frees a */

    held = mu_view_get(&s);
    ck_assert_ptr_eq(held, b);
    ck_assert_uint_eq(held->gen, 2);
    mu_view_put(held);
    mu_view_slot_release(&s); /* frees b */
}
END_TEST

#define N_READERS 4
#define N_PUBLISH 300

struct shared {
    struct mu_view_slot slot;
    atomic_bool stop;
    atomic_int regressions, reads;
};

static void *reader(void *arg)
{
    struct shared *sh = arg;
    uint64_t last = 0;

    while (!atomic_load(&sh->stop)) {
        struct mu_view *v = mu_view_get(&sh->slot);
        const struct mu_view_pod *p;

        if (!v)
            continue;
        if (v->gen < last)
            atomic_fetch_add(&sh->regressions, 1);
        last = v->gen;
        p = mu_view_pod(v, "u-0");
        if (!p || strcmp(p->node, "gpu-00") || v->npods != 8)
            atomic_fetch_add(&sh->regressions, 1);
        atomic_fetch_add(&sh->reads, 1);
        mu_view_put(v);
    }
    return NULL;
}

START_TEST(test_view_publish_get_put_across_threads)
{
    struct shared sh;
    pthread_t t[N_READERS];

    mu_view_slot_init(&sh.slot);
    atomic_init(&sh.stop, false);
    atomic_init(&sh.regressions, 0);
    atomic_init(&sh.reads, 0);
    for (int i = 0; i < N_READERS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, reader, &sh), 0);
    for (uint64_t g = 1; g <= N_PUBLISH; g++) {
        struct mu_view *v = mu_view_new(g, true);

        for (int i = 0; i < 8; i++) {
            char uid[16], node[16];

            snprintf(uid, sizeof(uid), "u-%d", i);
            snprintf(node, sizeof(node), "gpu-%02d", i);
            mu_view_add_pod(v, uid, "ns", uid, "ns/g", node, "ns/g#1", 8, NULL);
        }
        mu_view_publish(&sh.slot, v);
    }
    while (atomic_load(&sh.reads) < 100)
        ;
    atomic_store(&sh.stop, true);
    for (int i = 0; i < N_READERS; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(atomic_load(&sh.regressions), 0);
    ck_assert_uint_eq(sh.slot.cur->gen, N_PUBLISH);
    ck_assert_int_eq(atomic_load(&sh.slot.cur->refs), 1);
    mu_view_slot_release(&sh.slot);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_view_new_is_empty_unsynced_and_serves_volcano);
    tcase_add_test(tc, test_view_add_pod_copies_strings_and_replaces_by_uid);
    tcase_add_test(tc, test_view_set_sched_names_replaces_the_list);
    tcase_add_test(tc, test_view_lists_a_batchs_members_and_marks_plain_pods);
    tcase_add_test(tc, test_view_slot_is_empty_before_the_first_publish);
    tcase_add_test(tc, test_view_readers_keep_an_old_view_after_a_new_publish);
    tcase_add_test(tc, test_view_publish_get_put_across_threads);
    tcase_add_test(tc,
                   test_view_cache_shares_unchanged_entries_and_remakes_moved_ones);
    tcase_add_test(tc,
                   test_view_set_plain_on_a_shared_entry_changes_this_view_only);
    tcase_add_test(tc, test_view_table_finds_every_pod_past_many_growths);
    tcase_add_test(tc, test_view_reserve_makes_the_table_once);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
