/* The fake binder and the gangs of the barrier's tests
 * (test_bind_fake.h). */
#include "test_bind_fake.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fake fk;

void bf_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

int64_t bf_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void record(char op, const char *ns, const char *name,
                   const char *uid, const char *node)
{
    struct call *c;

    pthread_mutex_lock(&fk.mu);
    ck_assert_int_lt(fk.n_calls, MAX_CALLS);
    c = &fk.calls[fk.n_calls++];
    c->op = op;
    snprintf(c->ns, sizeof(c->ns), "%s", ns);
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->uid, sizeof(c->uid), "%s", uid);
    snprintf(c->node, sizeof(c->node), "%s", node ? node : "");
    pthread_mutex_unlock(&fk.mu);
}

/* The node the fake bound uid to, or NULL. */
const char *bf_bound_on(const char *uid)
{
    const char *node = NULL;

    pthread_mutex_lock(&fk.mu);
    for (int i = 0; i < fk.n_bound; i++)
        if (!strcmp(fk.bound[i][0], uid))
            node = fk.bound[i][1];
    pthread_mutex_unlock(&fk.mu);
    return node;
}

static void set_bound(const char *uid, const char *node)
{
    pthread_mutex_lock(&fk.mu);
    ck_assert_int_lt(fk.n_bound, 512);
    snprintf(fk.bound[fk.n_bound][0], 64, "%s", uid);
    snprintf(fk.bound[fk.n_bound][1], 64, "%s", node);
    fk.n_bound++;
    pthread_mutex_unlock(&fk.mu);
}

static int fake_bind(void *ctx, const char *ns, const char *name,
                     const char *uid, const char *node, struct mu_err *err)
{
    ck_assert_ptr_eq(ctx, &fk);
    pthread_mutex_lock(&fk.mu);
    fk.in_bind++;
    if (fk.in_bind > fk.max_in_bind)
        fk.max_in_bind = fk.in_bind;
    pthread_mutex_unlock(&fk.mu);
    if (fk.bind_delay_ms)
        bf_sleep_ms(fk.bind_delay_ms);
    if (fk.slow_uid && !strcmp(uid, fk.slow_uid))
        bf_sleep_ms(fk.slow_ms);
    pthread_mutex_lock(&fk.mu);
    fk.in_bind--;
    pthread_mutex_unlock(&fk.mu);
    record('b', ns, name, uid, node);
    if (fk.fail_uid && !strcmp(uid, fk.fail_uid) &&
        (!fk.fail_times || fk.fails < fk.fail_times)) {
        fk.fails++;
        if (fk.through)
            set_bound(uid, node);
        if (fk.fail_rc == -ETIMEDOUT)
            return mu_err_set(err, -ETIMEDOUT, "binding %s timed out", name);
        if (fk.fail_rc == -EIO)
            return mu_err_set(err, -EIO, "500 Internal Server Error");
        if (fk.fail_rc == -EBUSY)
            return mu_err_set(err, -EBUSY, "409 Conflict");
        return mu_err_set(err, -EPERM, "pods \"%s\" is forbidden", name);
    }
    if (bf_bound_on(uid))
        return mu_err_set(err, -EBUSY, "409 Conflict: pod %s is already "
                                       "assigned to node %s", name,
                          bf_bound_on(uid));
    set_bound(uid, node);
    return 0;
}

static int fake_check(void *ctx, const char *ns, const char *name,
                      const char *uid, struct mu_bind_seen *out,
                      struct mu_err *err)
{
    const char *node = bf_bound_on(uid);

    record('c', ns, name, uid, NULL);
    if (fk.gone)
        out->state = MU_BIND_SEEN_GONE;
    else if (node) {
        out->state = MU_BIND_SEEN_BOUND;
        snprintf(out->node, sizeof(out->node), "%s", node);
    } else
        out->state = MU_BIND_SEEN_UNBOUND;
    return 0;
}

static int fake_unbind(void *ctx, const char *ns, const char *name,
                       const char *uid, struct mu_err *err)
{
    record('u', ns, name, uid, NULL);
    return 0;
}

static void fake_report(void *ctx, const struct mu_bind_report *r)
{
    pthread_mutex_lock(&fk.mu);
    fk.n_reports++;
    fk.n_reports_ok += r->ok;
    fk.n_reports_timed_out += r->timed_out;
    snprintf(fk.last_release, sizeof(fk.last_release), "%s", r->release);
    snprintf(fk.last_detail, sizeof(fk.last_detail), "%s",
             r->detail ? r->detail : "");
    pthread_mutex_unlock(&fk.mu);
}

void bf_setup(void)
{
    memset(&fk, 0, sizeof(fk));
    pthread_mutex_init(&fk.mu, NULL);
}

int bf_count(char op)
{
    int n = 0;

    for (int i = 0; i < fk.n_calls; i++)
        n += fk.calls[i].op == op;
    return n;
}

json_t *bf_bind_args(const char *name, const char *uid, const char *node)
{
    return json_pack("{s:s,s:s,s:s,s:s}", "PodName", name, "PodNamespace",
                     "team-a", "PodUID", uid, "Node", node);
}

const char *bf_error_of(const json_t *r)
{
    return json_string_value(json_object_get(r, "Error"));
}


static void *member_main(void *arg)
{
    struct member *m = arg;
    json_t *a = bf_bind_args(m->name, m->uid, m->node), *r;

    if (m->delay_ms)
        bf_sleep_ms(m->delay_ms);
    r = mu_ext_bind(m->b, m->v, a);
    snprintf(m->error, sizeof(m->error), "%s", bf_error_of(r));
    m->returned_ms = bf_now_ms();
    json_decref(r);
    json_decref(a);
    return NULL;
}

/* A view with gang g: members g-0 .. g-(n-1) reserved on node-<g>-<i>,
 * release "<g>#1" of batch_size n; controlled (a controller makes them
 * again) or bare. */
void bf_add_gang_of(struct mu_view *v, const char *g, int n,
                    bool controlled)
{
    for (int i = 0; i < n; i++) {
        char uid[32], node[32], name[32], rel[48];

        snprintf(uid, sizeof(uid), "%s-%d", g, i);
        snprintf(name, sizeof(name), "%s-w%d", g, i);
        snprintf(node, sizeof(node), "node-%s-%d", g, i);
        snprintf(rel, sizeof(rel), "team-a/%s#1", g);
        mu_view_add_pod(v, uid, "team-a", name, g, node, rel, n, NULL);
        mu_view_set_controlled(v, uid, controlled);
    }
}

void bf_add_gang(struct mu_view *v, const char *g, int n)
{
    bf_add_gang_of(v, g, n, true);
}

void bf_start_member(struct member *m, struct mu_barrier *b,
                     const struct mu_view *v, const char *g, int i,
                     int delay_ms)
{
    memset(m, 0, sizeof(*m));
    m->b = b;
    m->v = v;
    m->delay_ms = delay_ms;
    snprintf(m->uid, sizeof(m->uid), "%s-%d", g, i);
    snprintf(m->name, sizeof(m->name), "%s-w%d", g, i);
    snprintf(m->node, sizeof(m->node), "node-%s-%d", g, i);
    ck_assert_int_eq(pthread_create(&m->t, NULL, member_main, m), 0);
}

/* Slow runs (valgrind, a loaded machine) stretch every duration by
 * MU_TEST_TIME_SCALE (the valgrind test setup sets it). */
int64_t bf_scaled(int64_t ms)
{
    const char *e = getenv("MU_TEST_TIME_SCALE");
    long f = e ? strtol(e, NULL, 10) : 1;

    return ms * (f > 0 ? f : 1);
}

struct mu_barrier *bf_barrier(int64_t timeout_ms)
{
    return mu_barrier_new(bf_scaled(timeout_ms), fake_bind, fake_unbind,
                          fake_report, &fk);
}

/* The same, reading ambiguous binds back with fake_check. */
struct mu_barrier *bf_barrier_checked(int64_t timeout_ms)
{
    struct mu_barrier *b = bf_barrier(timeout_ms);

    mu_barrier_set_check(b, fake_check);
    return b;
}

/* The calls of op on uid. */
int bf_count_of(char op, const char *uid)
{
    int n = 0;

    for (int i = 0; i < fk.n_calls; i++)
        n += fk.calls[i].op == op && !strcmp(fk.calls[i].uid, uid);
    return n;
}

/* The call of op on uid (NULL when there is none). */
const struct call *bf_call_of(char op, const char *uid)
{
    for (int i = 0; i < fk.n_calls; i++)
        if (fk.calls[i].op == op && !strcmp(fk.calls[i].uid, uid))
            return &fk.calls[i];
    return NULL;
}


/* gang g of n, as add_gang_of, every member plain */
void bf_add_plain_gang(struct mu_view *v, const char *g, int n,
                       bool controlled)
{
    bf_add_gang_of(v, g, n, controlled);
    for (int i = 0; i < n; i++) {
        char uid[32];

        snprintf(uid, sizeof(uid), "%s-%d", g, i);
        mu_view_set_plain(v, uid, true);
    }
}

void bf_bind_member(struct member *m, struct mu_barrier *b,
                    const struct mu_view *v, const char *g, int i)
{
    bf_start_member(m, b, v, g, i, 0);
    pthread_join(m->t, NULL);
}
