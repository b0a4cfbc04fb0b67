/*
 * test_ctl_harness.h - what every controller test stands on: the fake API
 * server (test_kube_fake.h), a real writer with one worker pointed at it
 * (so requests arrive in the order they were submitted), an empty cluster
 * cache, and the struct mu_ctl a controller is given (ctrl/ctl.h), whose
 * log lines are collected in th.logged.
 *
 * One harness per test process (Check forks each test: setup and teardown
 * run in the child). Not thread-safe; the writer's owner is the test.
 */
#ifndef TEST_CTL_HARNESS_H
#define TEST_CTL_HARNESS_H

#include "ctrl/ctl.h"
#include "test_kube_fake.h"

struct th {
    struct kf_server srv;
    struct mu_cluster cluster;
    struct mu_writer *writer;
    struct mu_ctl ctl;
    char logged[8192]; /* every log line, each ended by '\n' */
};

extern struct th th;

/* Starts the fake server and the writer (token may be NULL: none sent),
 * inits the cluster and th.ctl, empties th.logged. */
void th_start(const char *token);
/* The same with a writer that queues at most cap writes (0: its default). */
void th_start_cap(const char *token, size_t cap);
/* Frees the writer: its last done calls run here, so call it while the
 * controller they reach still exists. */
void th_stop_writer(void);
/* Releases the cluster and stops the server (after th_stop_writer). */
void th_stop(void);
/* rounds times: waits (at most timeout_ms) until nothing is queued or
 * being sent, then makes the done calls, so writes submitted by a done
 * call go out in the next round. */
void th_settle(int rounds, long timeout_ms);

#endif
