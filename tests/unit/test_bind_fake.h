/*
 * test_bind_fake.h - what the barrier's and the release binder's tests
 * stand on: a fake binder that records every call (bind, unbind, check,
 * report) under a mutex and keeps which pods it bound, so that the
 * read-back (check) answers as an apiserver would; member threads that
 * bind through mu_ext_bind; and gangs made in a view.
 *
 * One fake per test process (Check forks each test: bf_setup runs in the
 * child). The fake's state (fk) is read under fk.mu where a binder thread
 * may write it.
 */
#ifndef TEST_BIND_FAKE_H
#define TEST_BIND_FAKE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "extender/extender.h"
#include "extender/internal.h"

#define MAX_CALLS 4096

struct call {
    char op; /* 'b' bind, 'u' unbind */
    char ns[64], name[64];
    char uid[64];
    char node[64];
};

struct fake {
    pthread_mutex_t mu;
    struct call calls[MAX_CALLS];
    int n_calls;
    const char *fail_uid; /* bind of this uid fails */
    int fail_rc;          /* -ETIMEDOUT, -EIO (a 500), -EBUSY (a 409): maybe
                             bound; else refused */
    int fail_times;       /* fails that many times, then binds (0: always) */
    int fails;            /* failures so far */
    bool through;         /* a failing bind binds the pod all the same (its
                             reply is lost) */
    bool gone;            /* the read-back finds the pod gone */
    char bound[512][2][64]; /* uid, node of every pod bound */
    int n_bound;
    int bind_delay_ms;
    const char *slow_uid; /* bind of this uid takes slow_ms more */
    int slow_ms;
    int in_bind, max_in_bind; /* concurrent binds seen */
    int n_reports, n_reports_ok, n_reports_timed_out;
    char last_release[128];
    char last_detail[1024];
};

extern struct fake fk;

/* One member's thread: waits delay_ms, then binds through mu_ext_bind. */
struct member {
    pthread_t t;
    struct mu_barrier *b;
    const struct mu_view *v;
    char name[32], uid[32], node[32];
    int delay_ms;
    char error[1024];
    int64_t returned_ms;
};

/* Empties the fake (every test's checked fixture). */
void bf_setup(void);

/* Sleeps ms; the monotonic clock in ms. */
void bf_sleep_ms(int ms);
int64_t bf_now_ms(void);
/* Slow runs (valgrind, a loaded machine) stretch every duration by
 * MU_TEST_TIME_SCALE (the valgrind test setup sets it). */
int64_t bf_scaled(int64_t ms);

/* A barrier on the fake with timeout_ms (scaled); _checked also reads
 * ambiguous binds back through the fake's check. */
struct mu_barrier *bf_barrier(int64_t timeout_ms);
struct mu_barrier *bf_barrier_checked(int64_t timeout_ms);

/* The calls of op ('b' bind, 'u' unbind, 'c' check), all or on uid; the
 * call of op on uid (NULL when there is none); the node the fake bound
 * uid to, or NULL. */
int bf_count(char op);
int bf_count_of(char op, const char *uid);
const struct call *bf_call_of(char op, const char *uid);
const char *bf_bound_on(const char *uid);

/* ExtenderBindingArgs for pod name (namespace team-a); a reply's Error. */
json_t *bf_bind_args(const char *name, const char *uid, const char *node);
const char *bf_error_of(const json_t *r);

/* A view with gang g: members g-0 .. g-(n-1) (pods g-w0 ..) reserved on
 * node-<g>-<i>, release "team-a/<g>#1" of batch_size n; controlled (a
 * controller makes them again) or bare. bf_add_gang: controlled;
 * bf_add_plain_gang: every member plain as well. */
void bf_add_gang_of(struct mu_view *v, const char *g, int n, bool controlled);
void bf_add_gang(struct mu_view *v, const char *g, int n);
void bf_add_plain_gang(struct mu_view *v, const char *g, int n,
                       bool controlled);

/* Starts member i of gang g binding through mu_ext_bind after delay_ms
 * (join m->t); bf_bind_member binds it now and returns when it is done. */
void bf_start_member(struct member *m, struct mu_barrier *b,
                     const struct mu_view *v, const char *g, int i,
                     int delay_ms);
void bf_bind_member(struct member *m, struct mu_barrier *b,
                    const struct mu_view *v, const char *g, int i);

#endif
