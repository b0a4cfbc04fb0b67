/*
 * barrier.c - the /bind barrier (extender.h).
 *
 * A table of batches keyed by release id under one mutex, held only for
 * bookkeeping: each batch has its own condition variable, and the binds
 * themselves (apiserver round trips) run with no lock held. When the last
 * member arrives, every member's thread binds its own pod, all at once
 * (one round trip for the gang, not one per member); the thread whose bind
 * completes last judges the batch: on any failure it deletes the members
 * that were bound, then wakes everyone with the outcome. A batch that
 * is done (bound, failed or timed out) stays in the table as a tombstone
 * for MU_BARRIER_TOMB_TTL_MS (extender.h) so late arrivals fail at once
 * instead of waiting out a new timeout; tombstones leave in FIFO order
 * (they all live as long), and the oldest go beyond MU_BARRIER_TOMB_MAX.
 *
 * bind, unbind and report run on HTTP threads, several at once for
 * different batches: the callbacks must be thread-safe.
 */
#include "common/map.h"
#include "common/clock.h"
#include "extender/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

enum batch_state {
    WAITING, /* members arriving */
    BINDING, /* all here; each member's thread binds its own pod */
    DONE,    /* outcome known (a tombstone once every member has left) */
};

struct member {
    char *ns, *name, *uid, *node;
    int rc;      /* its bind: 0, or -errno (BINDING and after) */
    char *msg;   /* why, when rc != 0 */
};

struct batch {
    char *release;
    int size, arrived;
    int binding;      /* binds still running (BINDING) */
    struct member *m; /* size slots, arrived used; freed when DONE */
    enum batch_state state;
    bool ok;
    int code;     /* -errno when !ok */
    char *detail; /* why not, when !ok */
    int64_t deadline;
    pthread_cond_t cond;
    int refs; /* one for the table, one per member still inside */
    int64_t forget_at;
    struct batch *next; /* in the tombstone queue */
};

struct mu_barrier {
    pthread_mutex_t lock;
    struct mu_map batches; /* release -> struct batch * */
    struct batch *tomb_head, *tomb_tail;
    size_t n_tombs;
    int64_t timeout_ms;
    mu_bind_fn bind;
    mu_unbind_fn unbind;
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
    b->timeout_ms = timeout_ms;
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
    pthread_mutex_destroy(&b->lock);
    free(b);
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
        if (unref(bt))
            free_batch(bt);
    }
}

/* Records the outcome, wakes the members, queues the tombstone (lock
 * held). detail is taken. */
static void finish(struct mu_barrier *b, struct batch *bt, bool ok, int code,
                   char *detail, int64_t now)
{
    bt->state = DONE;
    bt->ok = ok;
    bt->code = code;
    bt->detail = detail;
    free_members(bt);
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

/* Binds member i (no lock held: while BINDING a member's slot belongs to
 * its thread). */
static void bind_one(struct mu_barrier *b, struct member *m)
{
    struct mu_err e = {{0}};

    m->rc = b->bind(b->ctx, m->ns, m->name, m->uid, m->node, &e);
    if (m->rc)
        m->msg = mu_xstrdup(e.msg[0] ? e.msg
                                     : strerror(m->rc < 0 ? -m->rc : EIO));
}

/* A failed bind that surely bound nothing: the apiserver refused it, or
 * the pod is gone. Anything else (a timeout, a reset, a 5xx, a conflict)
 * may have bound the pod. */
static bool surely_unbound(int rc)
{
    return rc == -EINVAL || rc == -ENOENT || rc == -EPERM || rc == -EACCES ||
           rc == -EOPNOTSUPP;
}

/* Every bind has completed; when one failed, deletes the members that
 * were bound, or may have been. No lock held: the caller ran the last
 * bind, and the other members only wait for DONE. 0, or the first failed
 * member's -errno with *detail set. */
static int judge(struct mu_barrier *b, struct batch *bt, char **detail)
{
    struct mu_err e = {{0}};
    struct mu_sb sb;
    int bad = -1, nbound = 0, rc;

    for (int i = 0; i < bt->size; i++) {
        if (bt->m[i].rc && bad < 0)
            bad = i;
        nbound += !bt->m[i].rc || !surely_unbound(bt->m[i].rc);
    }
    if (bad < 0)
        return 0;
    rc = bt->m[bad].rc;
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "gang batch %s: binding %s/%s to %s failed: %s",
               bt->release, bt->m[bad].ns, bt->m[bad].name, bt->m[bad].node,
               bt->m[bad].msg);
    if (nbound)
        mu_sb_addf(&sb, "; the %d member%s bound or maybe bound %s deleted",
                   nbound, nbound == 1 ? "" : "s",
                   nbound == 1 ? "was" : "were");
    for (int j = 0; j < bt->size; j++) {
        struct member *m = &bt->m[j];
        int urc;

        if (m->rc && surely_unbound(m->rc))
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
    struct mu_err e = {{0}};
    int rc = b->bind(b->ctx, ns, name, uid, node, &e);

    if (rc)
        return mu_err_set(err, rc < 0 ? rc : -EIO,
                          "binding %s/%s to %s failed: %s", ns, name, node,
                          e.msg[0] ? e.msg : strerror(rc < 0 ? -rc : EIO));
    return 0;
}

static void wait_until(struct batch *bt, pthread_mutex_t *lock, int64_t ms,
                       int *rc)
{
    struct timespec ts = mu_ns_to_timespec(ms * 1000000);

    *rc = pthread_cond_timedwait(&bt->cond, lock, &ts);
}

int mu_barrier_bind(struct mu_barrier *b, const char *release, int batch_size,
                    const char *ns, const char *name, const char *uid,
                    const char *node, struct mu_err *err)
{
    struct batch *bt;
    struct member *m = NULL;
    int64_t now;
    bool reporter = false, timed_out = false, gone;
    int rc;

    if (!release)
        return bind_alone(b, ns, name, uid, node, err);
    pthread_mutex_lock(&b->lock);
    now = mu_now_ms();
    prune(b, now);
    bt = mu_map_get(&b->batches, release);
    if (bt && bt->state == DONE) {
        if (bt->ok)
            rc = mu_err_set(err, -ESTALE,
                            "gang batch %s is already bound; not binding "
                            "%s/%s",
                            release, ns, name);
        else
            rc = mu_err_set(err, bt->code,
                            "not binding %s/%s: its batch is over: %s", ns,
                            name, bt->detail);
        pthread_mutex_unlock(&b->lock);
        return rc;
    }
    if (!bt) {
        bt = mu_xcalloc(1, sizeof(*bt));
        bt->release = mu_xstrdup(release);
        bt->size = batch_size < 1 ? 1 : batch_size;
        bt->m = mu_xcalloc((size_t)bt->size, sizeof(*bt->m));
        bt->state = WAITING;
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
    bt->refs++;
    if (bt->arrived == bt->size) {
        if (now >= bt->deadline) {
            reporter = timed_out = true;
            finish(b, bt, false, -ETIMEDOUT, timeout_detail(b, bt), now);
        } else {
            bt->state = BINDING;
            bt->binding = bt->size;
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
            bind_one(b, m);
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
    pthread_mutex_lock(&b->lock);
    gone = unref(bt);
    pthread_mutex_unlock(&b->lock);
    if (gone)
        free_batch(bt);
    return rc;
}
