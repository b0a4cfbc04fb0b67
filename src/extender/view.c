#include "extender/view.h"

#include "common/mu.h"

/*
 * Helgrind does not see the happens-before edge that the atomic refcount
 * gives between the last reader's put and the free; the annotations tell
 * it (no-ops unless built with valgrind's headers).
 */
#ifdef MU_HAVE_HELGRIND
#include <valgrind/helgrind.h>
#define HB_BEFORE(p) ANNOTATE_HAPPENS_BEFORE(p)
#define HB_AFTER(p) ANNOTATE_HAPPENS_AFTER(p)
#else
#define HB_BEFORE(p) ((void)(p))
#define HB_AFTER(p) ((void)(p))
#endif

static const char *const default_names[] = {"volcano", NULL};

static char **copy_names(const char *const *names)
{
    size_t n = 0;
    char **out;

    while (names[n])
        n++;
    out = mu_xcalloc(n + 1, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = mu_xstrdup(names[i]);
    return out;
}

static void free_names(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

static void free_pod(struct mu_view_pod *p)
{
    free(p->uid);
    free(p->ns);
    free(p->name);
    free(p->node);
    free(p->gang);
    free(p->release);
    free(p->reason);
    free(p);
}

struct mu_view *mu_view_new(uint64_t gen, bool synced)
{
    struct mu_view *v = mu_xcalloc(1, sizeof(*v));

    atomic_init(&v->refs, 1);
    v->gen = gen;
    v->synced = synced;
    v->sched_names = copy_names(default_names);
    mu_map_init(&v->pods);
    mu_map_init(&v->batches);
    return v;
}

void mu_view_set_sched_names(struct mu_view *v, const char *const *names)
{
    free_names(v->sched_names);
    v->sched_names = copy_names(names);
}

static void batch_add(struct mu_view *v, const char *release,
                      const char *uid)
{
    struct mu_view_batch *b = mu_map_get(&v->batches, release);

    if (!b) {
        b = mu_xcalloc(1, sizeof(*b));
        mu_map_put(&v->batches, release, b);
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 8;
        b->uids = mu_xrealloc(b->uids, b->cap * sizeof(*b->uids));
    }
    b->uids[b->n++] = mu_xstrdup(uid);
}

void mu_view_add_pod(struct mu_view *v, const char *uid, const char *ns,
                     const char *name, const char *gang, const char *node,
                     const char *release, int batch_size, const char *reason)
{
    struct mu_view_pod *p = mu_xcalloc(1, sizeof(*p));
    struct mu_view_pod *old;

    p->uid = mu_xstrdup(uid);
    p->ns = mu_xstrdup_or_null(ns);
    p->name = mu_xstrdup_or_null(name);
    p->gang = mu_xstrdup_or_null(gang);
    p->node = mu_xstrdup_or_null(node);
    p->release = mu_xstrdup_or_null(release);
    p->batch_size = batch_size;
    p->reason = mu_xstrdup_or_null(reason);
    old = mu_map_put(&v->pods, uid, p);
    /* a uid added again in the same batch is listed there once */
    if (release && !(old && !mu_strcmp0(old->release, release)))
        batch_add(v, release, uid);
    if (old)
        free_pod(old);
}

void mu_view_set_controlled(struct mu_view *v, const char *uid,
                            bool controlled)
{
    struct mu_view_pod *p = uid ? mu_map_get(&v->pods, uid) : NULL;

    if (p)
        p->controlled = controlled;
}

void mu_view_set_plain(struct mu_view *v, const char *uid, bool plain)
{
    struct mu_view_pod *p = uid ? mu_map_get(&v->pods, uid) : NULL;

    if (p)
        p->plain = plain;
}

const struct mu_view_batch *mu_view_batch(const struct mu_view *v,
                                          const char *release)
{
    if (!v || !release)
        return NULL;
    return mu_map_get(&v->batches, release);
}

const struct mu_view_pod *mu_view_pod(const struct mu_view *v, const char *uid)
{
    if (!v || !uid)
        return NULL;
    return mu_map_get(&v->pods, uid);
}

bool mu_view_serves(const struct mu_view *v, const char *sched_name)
{
    const char *const *names;

    if (!sched_name)
        return false;
    names = v && v->sched_names ? (const char *const *)v->sched_names
                                : default_names;
    for (; *names; names++)
        if (!strcmp(*names, sched_name))
            return true;
    return false;
}

static void view_free(struct mu_view *v)
{
    size_t it = 0;
    void *pod;

    while (mu_map_next(&v->pods, &it, NULL, &pod))
        free_pod(pod);
    mu_map_release(&v->pods);
    it = 0;
    while (mu_map_next(&v->batches, &it, NULL, &pod)) {
        struct mu_view_batch *b = pod;

        for (size_t i = 0; i < b->n; i++)
            free(b->uids[i]);
        free(b->uids);
        free(b);
    }
    mu_map_release(&v->batches);
    free_names(v->sched_names);
    free(v);
}

void mu_view_slot_init(struct mu_view_slot *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->cur = NULL;
}

void mu_view_slot_release(struct mu_view_slot *s)
{
    mu_view_put(s->cur);
    s->cur = NULL;
    pthread_mutex_destroy(&s->lock);
}

void mu_view_publish(struct mu_view_slot *s, struct mu_view *v)
{
    struct mu_view *old;

    pthread_mutex_lock(&s->lock);
    old = s->cur;
    s->cur = v;
    pthread_mutex_unlock(&s->lock);
    mu_view_put(old);
}

struct mu_view *mu_view_get(struct mu_view_slot *s)
{
    struct mu_view *v;

    pthread_mutex_lock(&s->lock);
    v = s->cur;
    if (v)
        atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&s->lock);
    return v;
}

void mu_view_put(struct mu_view *v)
{
    if (!v)
        return;
    HB_BEFORE(&v->refs);
    if (atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1) {
        HB_AFTER(&v->refs);
        view_free(v);
    }
}
