/* mu_serve_run (src/serve/serve.h) as a whole, against the fake API server
 * (test_kube_fake.h) answering 503 to everything: the caches never list,
 * and the scheduler thread must wait for them, not spin. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve.h"
#include "test_kube_fake.h"

struct run {
    struct mu_serve_opts o;
    atomic_bool stop;
    int rc;
    char msg[1100];
};

static void *run_serve(void *p)
{
    struct run *r = p;
    struct mu_err err = {0};

    r->rc = mu_serve_run(&r->o, &err);
    snprintf(r->msg, sizeof(r->msg), "%s", err.msg);
    return NULL;
}

/* Slow runs (valgrind) stretch every duration by MU_TEST_TIME_SCALE (the
 * valgrind test setup sets it). */
static long scaled_ms(long ms)
{
    const char *e = getenv("MU_TEST_TIME_SCALE");
    long f = e ? strtol(e, NULL, 10) : 1;

    return ms * (f > 0 ? f : 1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static double cpu_s(pthread_t t)
{
    clockid_t id;
    struct timespec ts;

    ck_assert_int_eq(pthread_getcpuclockid(t, &id), 0);
    ck_assert_int_eq(clock_gettime(id, &ts), 0);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Before every cache has listed, nothing runs: the periodic tick and a
 * burst's end pass, and a wait until a moment already past would return
 * at once, again and again (a core taken from the apiserver for the
 * whole initial list). Here the lists never come and the tick is 50 ms;
 * after setup (0.5 s), the scheduler thread's CPU over the next second
 * must be a small part of it. */
START_TEST(unsynced_serve_waits_for_its_caches_without_spinning)
{
    struct kf_server srv;
    static struct run r;
    char dir[] = "/tmp/mu-serve-run-XXXXXX", kc[64];
    pthread_t t;
    double used, window = (double)scaled_ms(1000) / 1000;
    FILE *f;

    ck_assert_int_eq(kf_start(&srv), 0);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(kc, sizeof(kc), "%s/kc.yaml", dir);
    f = fopen(kc, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "clusters: [{name: c, cluster: {server: '%s'}}]\n"
               "users: [{name: u, user: {token: t}}]\n"
               "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
               "current-context: c\n",
            srv.url);
    fclose(f);
    memset(&r, 0, sizeof(r));
    mu_serve_opts_init(&r.o);
    r.o.kubeconfig = kc;
    r.o.listen = "127.0.0.1:0";
    r.o.period_ms = 50;
    r.o.stop = &r.stop;
    r.o.log = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(r.o.log);

    ck_assert_int_eq(pthread_create(&t, NULL, run_serve, &r), 0);
    sleep_ms(scaled_ms(500));
    used = -cpu_s(t);
    sleep_ms(scaled_ms(1000));
    used += cpu_s(t);
    atomic_store(&r.stop, true);
    pthread_join(t, NULL);
    kf_stop(&srv);
    fclose(r.o.log);
    unlink(kc);
    rmdir(dir);

    ck_assert_msg(r.rc == 0, "mu_serve_run: %d %s", r.rc, r.msg);
    ck_assert_msg(used < 0.2 * window, "the scheduler thread used %.2f s of "
                                       "CPU in %.1f s, waiting for caches "
                                       "that never list",
                  used, window);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_run");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, unsynced_serve_waits_for_its_caches_without_spinning);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
