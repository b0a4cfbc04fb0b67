/*
 * barrier.c - the /bind barrier (extender.h).
 *
 * A table of batches keyed by release id under one mutex, held only for
 * bookkeeping: each batch has its own condition variable, and the binds
 * themselves (apiserver round trips) run with no lock held. When the last
 * member arrives, every member's thread binds its own pod, all at once
 * (one round trip for the gang, not one per member); the thread whose bind
 * completes last judges the batch: a member whose bind failed while others
 * bound gets one more round of binds, and when it still fails the members
 * that were bound are deleted (only those with a controller: a bare pod is
 * never deleted, it stays and the report names it), then everyone is woken
 * with the outcome. An ambiguous bind failure is read back and retried on
 * the member's own thread (bind_one). A batch that
 * is done (bound, failed or timed out) stays in the table as a tombstone
 * for MU_BARRIER_TOMB_TTL_MS (extender.h) so late arrivals fail at once
 * instead of waiting out a new timeout; tombstones leave in FIFO order
 * (they all live as long), and the oldest go beyond MU_BARRIER_TOMB_MAX.
 *
 * A batch of plain members (mu_barrier_bind_gang, internal.h) is bound
 * whole at its first arrival instead, once fewer than
 * MU_BARRIER_GANGS_BINDING such batches bind: that thread and up to
 * MU_BARRIER_GANG_THREADS - 1 helpers bind every member, the same judge
 * decides, and a tombstone that bound keeps its members (and the uid index
 * `bound`) to answer their later /bind.
 *
 * bind, unbind and report run on HTTP threads (and helpers, and the
 * release binder's workers, relbind.h), several at
 * once for different batches: the callbacks must be thread-safe.
 */
#include "common/map.h"
#include "common/clock.h"
#include "extender/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

enum batch_state {
    WAITING, /* members arriving */
    BINDING, /* all here; each member's thread binds its own pod (eager:
                the first's thread and its helpers bind them all) */
    DONE,    /* outcome known (a tombstone once every member has left) */
};

struct member {
    char *ns, *name, *uid, *node;
    bool controlled; /* a controller makes it again: may be deleted */
    int rc;          /* its bind: 0, or -errno (BINDING and after) */
    char *msg;       /* why, when rc != 0 */
    bool unbound;    /* rc != 0 and the pod was read back unbound */
    char *elsewhere; /* rc != 0 and the pod was read back bound there */
    int64_t bound_ns; /* when its bind was answered ok (rc == 0) */
};

struct batch {
    char *release;
    int size, arrived;
    int binding;      /* binds still running (BINDING) */
    struct member *m; /* size slots, arrived used; freed when DONE, but
                         kept in an eager batch that bound */
    enum batch_state state;
    bool ok;
    int code;     /* -errno when !ok */
    char *detail; /* why not, when !ok */
    int64_t deadline;
    int64_t born_ms;     /* when its first member arrived */
    int64_t retry_until; /* binds are retried until then (BINDING) */
    pthread_cond_t cond;
    int refs; /* one for the table, one per thread still inside (member,
                 eager binder or waiter) */
    int64_t forget_at;
    int counted; /* members counted in mu_barrier.waiting (WAITING) */
    bool eager;  /* bound whole at one member's arrival
                    (mu_barrier_bind_gang): its members stay in the
                    tombstone when it bound, to answer their /bind */
    struct batch *next; /* in the tombstone queue */
};

struct mu_barrier {
    pthread_mutex_t lock;
    struct mu_map batches; /* release -> struct batch * */
    struct batch *tomb_head, *tomb_tail;
    size_t n_tombs;
    int64_t timeout_ms;
    int waiting, max_waiting; /* members waiting in WAITING batches */
    int gangs_binding; /* eager batches binding, at most
                          MU_BARRIER_GANGS_BINDING */
    pthread_cond_t slot_freed; /* gangs_binding went down */
    struct mu_map bound; /* uid -> the eager batch that bound it, while its
                            tombstone is kept (mu_barrier_bound_by_gang) */
    mu_bind_fn bind;
    mu_unbind_fn unbind;
    mu_bindcheck_fn check; /* NULL: ambiguous binds are not read back */
    mu_report_fn report;
    void *ctx;
    _Atomic(struct mu_ext_stats *) stats;
};


static void free_members(struct batch *bt)
{
    if (!bt->m)
        return;
    for (int i = 0; i < bt->arrived; i++) {
        free(bt->m[i].ns);
        free(bt->m[i].name);
        free(bt->m[i].uid);
        free(bt->m[i].node);
        free(bt->m[i].msg);
        free(bt->m[i].elsewhere);
    }
    free(bt->m);
    bt->m = NULL;
}

static void free_batch(struct batch *bt)
{
    free_members(bt);
    pthread_cond_destroy(&bt->cond);
    free(bt->release);
    free(bt->detail);
    free(bt);
}

struct mu_barrier *mu_barrier_new(int64_t timeout_ms, mu_bind_fn bind,
                                  mu_unbind_fn unbind, mu_report_fn report,
                                  void *ctx)
{
    struct mu_barrier *b = mu_xcalloc(1, sizeof(*b));

    /* jansson seeds its hash lazily on the first json_object(), racing
     * if that happens on two HTTP threads at once: seed it here, before */
    json_object_seed(0);
    pthread_mutex_init(&b->lock, NULL);
    mu_map_init(&b->batches);
    mu_map_init(&b->bound);
    mu_cond_init_monotonic(&b->slot_freed);
    b->timeout_ms = timeout_ms;
    b->max_waiting = MU_BARRIER_MAX_WAITING;
    b->bind = bind;
    b->unbind = unbind;
    b->report = report;
    b->ctx = ctx;
    atomic_init(&b->stats, NULL);
    return b;
}

void mu_barrier_free(struct mu_barrier *b)
{
    size_t it = 0;
    void *bt;

    if (!b)
        return;
    while (mu_map_next(&b->batches, &it, NULL, &bt))
        free_batch(bt);
    mu_map_release(&b->batches);
    mu_map_release(&b->bound);
    pthread_cond_destroy(&b->slot_freed);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

void mu_barrier_set_max_waiting(struct mu_barrier *b, int n)
{
    pthread_mutex_lock(&b->lock);
    b->max_waiting = n < 0 ? 0 : n;
    pthread_mutex_unlock(&b->lock);
}

void mu_barrier_set_check(struct mu_barrier *b, mu_bindcheck_fn check)
{
    b->check = check;
}

void mu_barrier_set_stats(struct mu_barrier *b, struct mu_ext_stats *st)
{
    atomic_store(&b->stats, st);
}

/* Drops one reference (lock held); returns true when bt must be freed. */
static bool unref(struct batch *bt)
{
    return --bt->refs == 0;
}

static void free_batch(struct batch *bt);

/* A thread leaves bt (lock not held): its reference goes, and the last
 * one frees it. */
static void leave(struct mu_barrier *b, struct batch *bt)
{
    bool gone;

    pthread_mutex_lock(&b->lock);
    gone = unref(bt);
    pthread_mutex_unlock(&b->lock);
    if (gone)
        free_batch(bt);
}

/* Forgets tombstones past their time, or beyond MU_BARRIER_TOMB_MAX (lock
 * held). */
static void prune(struct mu_barrier *b, int64_t now)
{
    while (b->tomb_head && (b->tomb_head->forget_at <= now ||
                            b->n_tombs > MU_BARRIER_TOMB_MAX)) {
        struct batch *bt = b->tomb_head;

        b->tomb_head = bt->next;
        if (!b->tomb_head)
            b->tomb_tail = NULL;
        b->n_tombs--;
        mu_map_del(&b->batches, bt->release);
        for (int i = 0; bt->eager && bt->m && i < bt->size; i++)
            if (mu_map_get(&b->bound, bt->m[i].uid) == bt)
                mu_map_del(&b->bound, bt->m[i].uid);
        if (unref(bt))
            free_batch(bt);
    }
}

/* bt leaves WAITING: its members no longer count as waiting. */
static void stop_waiting(struct mu_barrier *b, struct batch *bt)
{
    b->waiting -= bt->counted;
    bt->counted = 0;
}

/* The span of a batch bound whole (every member's rc 0): from its first
 * member's bind answered to its last, as muster saw the replies. A batch
 * of one has none. */
static void observe_span(struct mu_hist *h, const struct batch *bt)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;

    if (!bt->m || bt->size < 2)
        return;
    for (int i = 0; i < bt->size; i++) {
        lo = MU_MIN(lo, bt->m[i].bound_ns);
        hi = MU_MAX(hi, bt->m[i].bound_ns);
    }
    mu_hist_observe_ns(h, hi - lo);
}

/* Records the outcome, wakes the members, queues the tombstone (lock
 * held). detail is taken. */
static void finish(struct mu_barrier *b, struct batch *bt, bool ok, int code,
                   char *detail, int64_t now)
{
    struct mu_ext_stats *st = atomic_load(&b->stats);

    if (st)
        mu_hist_observe_ns(&st->barrier_hist, (now - bt->born_ms) * 1000000);
    if (st && ok)
        observe_span(&st->span_hist, bt);
    stop_waiting(b, bt);
    bt->state = DONE;
    bt->ok = ok;
    bt->code = code;
    bt->detail = detail;
    if (!(bt->eager && ok))
        free_members(bt);
    for (int i = 0; bt->m && i < bt->size; i++)
        mu_map_put(&b->bound, bt->m[i].uid, bt);
    pthread_cond_broadcast(&bt->cond);
    bt->forget_at = now + MU_BARRIER_TOMB_TTL_MS;
    bt->next = NULL;
    if (b->tomb_tail)
        b->tomb_tail->next = bt;
    else
        b->tomb_head = bt;
    b->tomb_tail = bt;
    b->n_tombs++;
}

static char *timeout_detail(struct mu_barrier *b, struct batch *bt)
{
    return mu_xasprintf("gang batch %s: %d of %d members reached bind within "
                        "%lld ms; none was bound",
                        bt->release, bt->arrived, bt->size,
                        (long long)b->timeout_ms);
}

/* A failed bind that surely bound nothing: the apiserver refused it, or
 * the pod is gone. Anything else (a timeout, a reset, a 5xx, a conflict)
 * may have bound the pod. */
static bool surely_unbound(int rc)
{
    return rc == -EINVAL || rc == -ENOENT || rc == -EPERM || rc == -EACCES ||
           rc == -EOPNOTSUPP;
}

/* Bound, or maybe: the members an undo is about. */
static bool maybe_bound(const struct member *m)
{
    return !m->rc || m->elsewhere ||
           (!surely_unbound(m->rc) && !m->unbound);
}

/* A failed member whose bind may still go through on its node. */
static bool retryable(const struct mu_barrier *b, const struct member *m)
{
    return m->rc && b->check && !surely_unbound(m->rc) && !m->elsewhere;
}

static void pause_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static void set_msg(struct member *m, char *msg)
{
    free(m->msg);
    m->msg = msg;
}

/*
 * Binds m (no lock held: while BINDING a member's slot belongs to the one
 * thread binding it, and judge runs when no other bind does). A failure
 * that may have bound the pod is read back (b->check): bound to m->node is
 * success, bound elsewhere or gone a failure that no retry mends; unbound
 * or not readable, the bind is tried again, max_tries in all, with a
 * doubling backoff, none starting past until.
 */
static void bind_one(struct mu_barrier *b, struct member *m, int64_t until,
                     int max_tries)
{
    int64_t backoff = MU_BARRIER_BACKOFF_MS;

    set_msg(m, NULL);
    free(m->elsewhere);
    m->elsewhere = NULL;
    m->unbound = false;
    for (int tries = 1;; tries++) {
        struct mu_err e = {{0}}, ce = {{0}};
        struct mu_bind_seen seen;
        int crc;

        m->rc = b->bind(b->ctx, m->ns, m->name, m->uid, m->node, &e);
        if (!m->rc) {
            set_msg(m, NULL);
            m->unbound = false;
            m->bound_ns = mu_now_ns();
            return;
        }
        set_msg(m, mu_xstrdup(e.msg[0] ? e.msg
                                       : strerror(m->rc < 0 ? -m->rc : EIO)));
        if (m->rc > 0)
            m->rc = -EIO;
        if (surely_unbound(m->rc) || !b->check)
            return;
        memset(&seen, 0, sizeof(seen));
        crc = b->check(b->ctx, m->ns, m->name, m->uid, &seen, &ce);
        m->unbound = false;
        if (!crc && seen.state == MU_BIND_SEEN_BOUND &&
            !strcmp(seen.node, m->node)) {
            m->rc = 0; /* it went through: the reply was lost */
            set_msg(m, NULL);
            m->bound_ns = mu_now_ns();
            return;
        }
        if (!crc && seen.state == MU_BIND_SEEN_BOUND) {
            m->elsewhere = mu_xstrdup(seen.node);
            set_msg(m, mu_xasprintf("%s (read back: bound to %s)", m->msg,
                                    seen.node));
            return;
        }
        if (!crc && seen.state == MU_BIND_SEEN_GONE) {
            m->rc = -ENOENT;
            set_msg(m, mu_xasprintf("%s (read back: the pod is gone)",
                                    m->msg));
            return;
        }
        if (!crc)
            m->unbound = true;
        if (tries >= max_tries || mu_now_ms() + backoff > until) {
            set_msg(m, mu_xasprintf(
                           "%s (%d tr%s; read back: %s)", m->msg, tries,
                           tries == 1 ? "y" : "ies",
                           crc ? (ce.msg[0] ? ce.msg : "not readable")
                               : "not bound"));
            return;
        }
        pause_ms(backoff);
        backoff = backoff * 2 > MU_BARRIER_BACKOFF_MAX_MS
                      ? MU_BARRIER_BACKOFF_MAX_MS
                      : backoff * 2;
    }
}

/* Tries of a member's bind per round: more in a batch bound at one
 * member's arrival, whose other members' release may still be on its way
 * to the apiserver (a gated pod's bind is refused with a 409 until its
 * gate is off). */
static int tries_of(const struct batch *bt)
{
    return bt->eager ? MU_BARRIER_GANG_TRIES : MU_BARRIER_BIND_TRIES;
}

static int first_failed(const struct batch *bt)
{
    for (int i = 0; i < bt->size; i++)
        if (bt->m[i].rc)
            return i;
    return -1;
}

/*
 * Every bind has completed. When some members bound and others failed, the
 * failed ones that may still bind get one more round (on their reserved
 * nodes; never past bt->retry_until). When one still fails, the members
 * that were bound, or may have been, are undone: deleted when they have a
 * controller, kept (and named in the detail) when not. No lock held: the
 * caller ran the last bind, and the other members only wait for DONE. 0,
 * or the first failed member's -errno with *detail set.
 */
static int judge(struct mu_barrier *b, struct batch *bt, char **detail)
{
    struct mu_err e = {{0}};
    struct mu_sb sb;
    int bad = first_failed(bt), nbound = 0, ndel = 0, nkept = 0, rc;

    if (bad < 0)
        return 0;
    for (int i = 0; i < bt->size; i++)
        nbound += !bt->m[i].rc;
    if (nbound && mu_now_ms() < bt->retry_until) {
        for (int i = 0; i < bt->size; i++)
            if (retryable(b, &bt->m[i]))
                bind_one(b, &bt->m[i], bt->retry_until, tries_of(bt));
        if ((bad = first_failed(bt)) < 0)
            return 0;
    }
    rc = bt->m[bad].rc;
    for (int i = 0; i < bt->size; i++) {
        if (!maybe_bound(&bt->m[i]))
            continue;
        if (bt->m[i].controlled)
            ndel++;
        else
            nkept++;
    }
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "gang batch %s: binding %s/%s to %s failed: %s",
               bt->release, bt->m[bad].ns, bt->m[bad].name, bt->m[bad].node,
               bt->m[bad].msg);
    if (ndel)
        mu_sb_addf(&sb, "; the %d member%s bound or maybe bound %s deleted",
                   ndel, ndel == 1 ? "" : "s", ndel == 1 ? "was" : "were");
    if (nkept) {
        const char *sep = ":";

        mu_sb_addf(&sb, "; %d member%s bound or maybe bound, with no "
                        "controller to make %s again, %s kept",
                   nkept, nkept == 1 ? "" : "s", nkept == 1 ? "it" : "them",
                   nkept == 1 ? "was" : "were");
        for (int i = 0; i < bt->size; i++) {
            const struct member *m = &bt->m[i];

            if (!maybe_bound(m) || m->controlled)
                continue;
            mu_sb_addf(&sb, "%s %s/%s (%s %s)", sep, m->ns, m->name,
                       m->rc ? "maybe bound to" : "bound to",
                       m->elsewhere ? m->elsewhere : m->node);
            sep = ",";
        }
    }
    for (int j = 0; j < bt->size; j++) {
        struct member *m = &bt->m[j];
        int urc;

        if (!maybe_bound(m) || !m->controlled)
            continue;
        e.msg[0] = '\0';
        urc = b->unbind(b->ctx, m->ns, m->name, m->uid, &e);
        if (urc)
            mu_sb_addf(&sb, "; deleting %s/%s failed: %s", m->ns, m->name,
                       e.msg[0] ? e.msg : strerror(-urc));
    }
    *detail = mu_sb_detach(&sb);
    return rc < 0 ? rc : -EIO;
}

static int bind_alone(struct mu_barrier *b, const char *ns, const char *name,
                      const char *uid, const char *node, struct mu_err *err)
{
    struct member m = {.ns = (char *)ns, .name = (char *)name,
                       .uid = (char *)uid, .node = (char *)node};
    int rc;

    bind_one(b, &m, mu_now_ms() + MU_BARRIER_RETRY_MS, MU_BARRIER_BIND_TRIES);
    rc = m.rc ? mu_err_set(err, m.rc, "binding %s/%s to %s failed: %s", ns,
                           name, node, m.msg)
              : 0;
    free(m.msg);
    free(m.elsewhere);
    return rc;
}

static void wait_until(struct batch *bt, pthread_mutex_t *lock, int64_t ms,
                       int *rc)
{
    struct timespec ts = mu_ns_to_timespec(ms * 1000000);

    *rc = pthread_cond_timedwait(&bt->cond, lock, &ts);
}

/* The answer to a /bind of ns/name (uid, on node) in bt, which is DONE
 * (lock held). */
static int answer(const struct batch *bt, const char *ns, const char *name,
                  const char *uid, const char *node, struct mu_err *err)
{
    if (!bt->ok)
        return mu_err_set(err, bt->code,
                          "not binding %s/%s: its batch is over: %s", ns,
                          name, bt->detail);
    for (int i = 0; bt->eager && bt->m && i < bt->size; i++) {
        if (strcmp(bt->m[i].uid, uid))
            continue;
        if (!strcmp(bt->m[i].node, node))
            return 0; /* muster bound it there with its gang */
        return mu_err_set(err, -ESTALE,
                          "gang batch %s bound %s/%s to %s, not %s",
                          bt->release, ns, name, bt->m[i].node, node);
    }
    return mu_err_set(err, -ESTALE,
                      "gang batch %s is already bound; not binding %s/%s",
                      bt->release, ns, name);
}

/* Waits (lock held on entry, released on return) until bt is DONE, then
 * answers as answer() does. */
static int answer_when_done(struct mu_barrier *b, struct batch *bt,
                            const char *ns, const char *name,
                            const char *uid, const char *node,
                            struct mu_err *err)
{
    bool gone;
    int rc;

    bt->refs++;
    while (bt->state != DONE)
        pthread_cond_wait(&bt->cond, &b->lock);
    rc = answer(bt, ns, name, uid, node, err);
    gone = unref(bt);
    pthread_mutex_unlock(&b->lock);
    if (gone)
        free_batch(bt);
    return rc;
}

int mu_barrier_bind(struct mu_barrier *b, const char *release, int batch_size,
                    const char *ns, const char *name, const char *uid,
                    const char *node, bool controlled, struct mu_err *err)
{
    struct batch *bt;
    struct member *m = NULL;
    int64_t now;
    bool reporter = false, timed_out = false;
    int rc;

    if (!release)
        return bind_alone(b, ns, name, uid, node, err);
    pthread_mutex_lock(&b->lock);
    now = mu_now_ms();
    prune(b, now);
    bt = mu_map_get(&b->batches, release);
    if (bt && (bt->state == DONE || bt->eager))
        return answer_when_done(b, bt, ns, name, uid, node, err);
    /* a member that would wait, while the cap's worth wait already, is
     * turned away before anything is made for it; one that completes its
     * batch never waits, so it always comes in (see extender.h) */
    if ((bt ? bt->arrived : 0) + 1 < (batch_size < 1 ? 1 : batch_size) &&
        (!bt || bt->state == WAITING) && b->waiting >= b->max_waiting) {
        rc = mu_err_set(err, -EAGAIN,
                        "gang batch %s: %d members of other gangs wait in "
                        "/bind already (the cap); not waiting with them: "
                        "kube-scheduler tries %s/%s again",
                        release, b->waiting, ns, name);
        pthread_mutex_unlock(&b->lock);
        return rc;
    }
    if (!bt) {
        bt = mu_xcalloc(1, sizeof(*bt));
        bt->release = mu_xstrdup(release);
        bt->size = batch_size < 1 ? 1 : batch_size;
        bt->m = mu_xcalloc((size_t)bt->size, sizeof(*bt->m));
        bt->state = WAITING;
        bt->born_ms = now;
        bt->deadline = now + b->timeout_ms;
        bt->refs = 1;
        mu_cond_init_monotonic(&bt->cond);
        mu_map_put(&b->batches, release, bt);
    }
    for (int i = 0; i < bt->arrived; i++) {
        if (!strcmp(bt->m[i].uid, uid)) {
            pthread_mutex_unlock(&b->lock);
            return mu_err_set(err, -EALREADY,
                              "gang batch %s: a bind of %s/%s is already "
                              "waiting",
                              release, ns, name);
        }
    }
    if (bt->state != WAITING) {
        pthread_mutex_unlock(&b->lock);
        return mu_err_set(err, -EBUSY,
                          "gang batch %s already has its %d members; not "
                          "binding %s/%s",
                          release, bt->size, ns, name);
    }
    m = &bt->m[bt->arrived++];
    m->ns = mu_xstrdup(ns);
    m->name = mu_xstrdup(name);
    m->uid = mu_xstrdup(uid);
    m->node = mu_xstrdup(node);
    m->controlled = controlled;
    bt->refs++;
    if (bt->arrived < bt->size) {
        bt->counted++;
        b->waiting++;
    }
    if (bt->arrived == bt->size) {
        stop_waiting(b, bt);
        if (now >= bt->deadline) {
            reporter = timed_out = true;
            finish(b, bt, false, -ETIMEDOUT, timeout_detail(b, bt), now);
        } else {
            bt->state = BINDING;
            bt->binding = bt->size;
            bt->retry_until = now + MU_BARRIER_RETRY_MS;
            pthread_cond_broadcast(&bt->cond);
        }
    }
    while (bt->state != DONE) {
        if (bt->state == WAITING) {
            wait_until(bt, &b->lock, bt->deadline, &rc);
            if (rc == ETIMEDOUT && bt->state == WAITING) {
                reporter = timed_out = true;
                finish(b, bt, false, -ETIMEDOUT, timeout_detail(b, bt),
                       mu_now_ms());
            }
        } else if (m) {
            char *detail = NULL;

            /* BINDING: bind this thread's member, once */
            pthread_mutex_unlock(&b->lock);
            bind_one(b, m, bt->retry_until, MU_BARRIER_BIND_TRIES);
            m = NULL;
            pthread_mutex_lock(&b->lock);
            if (--bt->binding)
                continue;
            pthread_mutex_unlock(&b->lock);
            rc = judge(b, bt, &detail);
            pthread_mutex_lock(&b->lock);
            reporter = true;
            finish(b, bt, rc == 0, rc, detail, mu_now_ms());
        } else {
            pthread_cond_wait(&bt->cond, &b->lock);
        }
    }
    rc = bt->ok ? 0 : mu_err_set(err, bt->code, "%s", bt->detail);
    pthread_mutex_unlock(&b->lock);
    if (reporter) {
        struct mu_bind_report r = {bt->release, bt->ok, timed_out,
                                    bt->detail};
        struct mu_ext_stats *st = atomic_load(&b->stats);

        if (timed_out && st)
            atomic_fetch_add(&st->batches_timed_out, 1);
        if (b->report)
            b->report(b->ctx, &r);
    }
    leave(b, bt);
    return rc;
}

void mu_barrier_members_free(struct mu_barrier_member *m, int n)
{
    for (int i = 0; m && i < n; i++) {
        free(m[i].ns);
        free(m[i].name);
        free(m[i].uid);
        free(m[i].node);
    }
    free(m);
}

/* The binds of an eager batch, shared by the threads that run them: each
 * takes the next member not taken yet. */
struct gang_binds {
    struct mu_barrier *b;
    struct batch *bt;
    atomic_int next;
};

/* A member whose bind was never sent: the gang's window had passed before
 * a thread got to it (surely unbound: never undone, never retried). */
static void not_sent(struct member *m)
{
    m->rc = -ETIMEDOUT;
    m->unbound = true;
    set_msg(m, mu_xasprintf("not sent: the gang's %d ms to bind had passed",
                            MU_BARRIER_RETRY_MS));
}

static void bind_some(struct gang_binds *g)
{
    int i;

    while ((i = atomic_fetch_add(&g->next, 1)) < g->bt->size) {
        if (mu_now_ms() >= g->bt->retry_until)
            not_sent(&g->bt->m[i]);
        else
            bind_one(g->b, &g->bt->m[i], g->bt->retry_until,
                     tries_of(g->bt));
    }
}

static void *helper_main(void *arg)
{
    bind_some(arg);
    return NULL;
}

/* Waits for a gang's binds to end (lock held), until ms at the latest. */
static void wait_slot(struct mu_barrier *b, int64_t ms)
{
    struct timespec ts = mu_ns_to_timespec(ms * 1000000);

    pthread_cond_timedwait(&b->slot_freed, &b->lock, &ts);
}

/* Binds every member of bt (BINDING, no lock held), on this thread and up
 * to MU_BARRIER_GANG_THREADS - 1 helpers (fewer when pthread_create
 * fails: this thread then binds the rest). */
static void bind_all(struct batch *bt, struct gang_binds *g)
{
    pthread_t th[MU_BARRIER_GANG_THREADS - 1];
    int want = MU_MIN(bt->size, MU_BARRIER_GANG_THREADS) - 1, got = 0;

    while (got < want && !pthread_create(&th[got], NULL, helper_main, g))
        got++;
    bind_some(g);
    for (int i = 0; i < got; i++)
        pthread_join(th[i], NULL);
}

int mu_barrier_bind_gang(struct mu_barrier *b, const char *release,
                         const struct mu_barrier_member *gang, int n,
                         const char *uid, const char *node,
                         struct mu_err *err)
{
    const struct mu_barrier_member *me = NULL;
    struct mu_ext_stats *st;
    struct gang_binds g;
    struct batch *bt;
    char *detail = NULL;
    int64_t slot_until;
    int rc;

    for (int i = 0; uid && i < n; i++)
        if (!strcmp(gang[i].uid, uid))
            me = &gang[i];
    if (!release || n < 1 || (uid && !me))
        return mu_err_set(err, -EINVAL,
                          "gang batch %s: pod uid %s is not one of its %d "
                          "members",
                          release ? release : "(none)", uid ? uid : "-", n);
    if (me && strcmp(me->node, node))
        return mu_err_set(err, -EINVAL,
                          "gang batch %s: %s/%s is reserved on %s, not %s",
                          release, me->ns, me->name, me->node, node);
    pthread_mutex_lock(&b->lock);
    slot_until = mu_now_ms() + MU_BARRIER_SLOT_WAIT_MS;
    for (;;) {
        prune(b, mu_now_ms());
        bt = mu_map_get(&b->batches, release);
        if (bt && !me) { /* at its release: bound or binding already */
            pthread_mutex_unlock(&b->lock);
            return -EALREADY;
        }
        if (bt && (bt->state == DONE || bt->eager))
            return answer_when_done(b, bt, me->ns, me->name, uid, node, err);
        if (bt) { /* being gathered the other way: join it */
            pthread_mutex_unlock(&b->lock);
            return mu_barrier_bind(b, release, n, me->ns, me->name, uid, node,
                                   me->controlled, err);
        }
        if (b->gangs_binding < MU_BARRIER_GANGS_BINDING)
            break;
        /* a gang's binds start together, once there is room: binding
         * fewer gangs at once keeps each one's binds close together */
        /* at its release (no member waits): refused at once, so that
         * the caller looks at its view again before the next try */
        if (!me || mu_now_ms() >= slot_until ||
            b->waiting >= b->max_waiting) {
            rc = mu_err_set(err, me ? -EAGAIN : -ENOSPC,
                            "gang batch %s: %d gangs are binding already "
                            "(the cap), %d members wait; nothing bound, "
                            "%s/%s tried again",
                            release, b->gangs_binding, b->waiting,
                            (me ? me : gang)->ns, (me ? me : gang)->name);
            pthread_mutex_unlock(&b->lock);
            return rc;
        }
        /* a waiter holds a connection: it counts against max_waiting */
        b->waiting++;
        wait_slot(b, slot_until);
        b->waiting--;
    }
    b->gangs_binding++;
    bt = mu_xcalloc(1, sizeof(*bt));
    bt->release = mu_xstrdup(release);
    bt->size = bt->arrived = n;
    bt->m = mu_xcalloc((size_t)n, sizeof(*bt->m));
    for (int i = 0; i < n; i++) {
        bt->m[i].ns = mu_xstrdup(gang[i].ns);
        bt->m[i].name = mu_xstrdup(gang[i].name);
        bt->m[i].uid = mu_xstrdup(gang[i].uid);
        bt->m[i].node = mu_xstrdup(gang[i].node);
        bt->m[i].controlled = gang[i].controlled;
    }
    bt->state = BINDING;
    bt->eager = true;
    bt->born_ms = mu_now_ms();
    bt->retry_until = mu_now_ms() + MU_BARRIER_RETRY_MS;
    bt->refs = 2; /* the table's and this thread's */
    mu_cond_init_monotonic(&bt->cond);
    mu_map_put(&b->batches, release, bt);
    pthread_mutex_unlock(&b->lock);

    g.b = b;
    g.bt = bt;
    atomic_init(&g.next, 0);
    bind_all(bt, &g);
    rc = judge(b, bt, &detail);

    pthread_mutex_lock(&b->lock);
    b->gangs_binding--;
    pthread_cond_signal(&b->slot_freed);
    finish(b, bt, rc == 0, rc, detail, mu_now_ms());
    rc = rc ? mu_err_set(err, bt->code, "%s", bt->detail)
         : me ? answer(bt, me->ns, me->name, uid, node, err)
              : 0;
    pthread_mutex_unlock(&b->lock);
    if (me && (st = atomic_load(&b->stats)))
        atomic_fetch_add(bt->ok ? &st->gangs_first_ok
                                : &st->gangs_first_failed, 1);
    if (b->report) {
        struct mu_bind_report r = {bt->release, bt->ok, false, bt->detail};

        b->report(b->ctx, &r);
    }
    leave(b, bt);
    return rc;
}

bool mu_barrier_bound_by_gang(struct mu_barrier *b, const char *uid,
                              const char *node)
{
    const struct batch *bt;
    bool yes = false;

    pthread_mutex_lock(&b->lock);
    bt = mu_map_get(&b->bound, uid);
    for (int i = 0; bt && bt->m && i < bt->size; i++)
        if (!strcmp(bt->m[i].uid, uid))
            yes = !strcmp(bt->m[i].node, node);
    pthread_mutex_unlock(&b->lock);
    return yes;
}

void mu_barrier_report(struct mu_barrier *b, const char *release, bool ok,
                       const char *detail)
{
    struct mu_bind_report r = {(char *)release, ok, false, (char *)detail};

    if (b->report)
        b->report(b->ctx, &r);
}
