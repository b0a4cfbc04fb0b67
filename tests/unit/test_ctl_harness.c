#include "test_ctl_harness.h"

#include <check.h>
#include <stdio.h>

struct th th;

static void log_line(void *ctx, const char *line)
{
    size_t n = strlen(th.logged);

    (void)ctx;
    snprintf(th.logged + n, sizeof(th.logged) - n, "%s\n", line);
}

void th_start(const char *token)
{
    th_start_cap(token, 0);
}

void th_start_cap(const char *token, size_t cap)
{
    struct mu_kube_config cfg;
    struct mu_writer_opts o = {.threads = 1, .cap = cap};
    struct mu_err err = {{0}};

    ck_assert_int_eq(kf_start(&th.srv), 0);
    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(th.srv.url);
    /* the controllers' requests are muster serve's: only the table's */
    cfg.api_table = true;
    if (token)
        cfg.token = mu_xstrdup(token);
    ck_assert_msg(mu_writer_new(&cfg, &o, &th.writer, &err) == 0, "%s",
                  err.msg);
    mu_kube_config_release(&cfg);
    mu_cluster_init(&th.cluster);
    th.ctl = (struct mu_ctl){.cluster = &th.cluster, .writer = th.writer,
                             .log = log_line};
    th.logged[0] = '\0';
}

void th_stop_writer(void)
{
    mu_writer_free(th.writer);
    th.writer = NULL;
}

void th_stop(void)
{
    mu_cluster_release(&th.cluster);
    kf_stop(&th.srv);
}

void th_settle(int rounds, long timeout_ms)
{
    for (int i = 0; i < rounds; i++) {
        ck_assert_int_eq(mu_writer_flush(th.writer, timeout_ms), 0);
        mu_writer_drain(th.writer, NULL);
    }
}
