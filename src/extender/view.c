#include "extender/view.h"

#include <string.h>

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

/* The bytes f's string s takes in an entry (0 for NULL). */
static size_t str_room(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

/* Copies s to *at and returns the copy (NULL for NULL). */
static char *str_put(char **at, const char *s)
{
    char *out;
    size_t n;

    if (!s)
        return NULL;
    n = strlen(s) + 1;
    out = memcpy(*at, s, n);
    *at += n;
    return out;
}

struct mu_view_pod *mu_view_pod_make(const struct mu_view_pod *f)
{
    size_t room = str_room(f->uid) + str_room(f->ns) + str_room(f->name) +
                  str_room(f->node) + str_room(f->gang) +
                  str_room(f->release) + str_room(f->reason);
    struct mu_view_pod *p = mu_xmalloc(sizeof(*p) + room);
    char *at = (char *)(p + 1);

    p->uid = str_put(&at, f->uid ? f->uid : "");
    p->ns = str_put(&at, f->ns);
    p->name = str_put(&at, f->name);
    p->node = str_put(&at, f->node);
    p->gang = str_put(&at, f->gang);
    p->release = str_put(&at, f->release);
    p->reason = str_put(&at, f->reason);
    p->batch_size = f->batch_size;
    p->controlled = f->controlled;
    p->plain = f->plain;
    p->hash = mu_hash_str(p->uid);
    atomic_init(&p->refs, 1);
    return p;
}

/* Drops one reference of *refs; true when it was the last (the caller
 * frees). */
static bool last_ref(atomic_int *refs)
{
    HB_BEFORE(refs);
    if (atomic_fetch_sub_explicit(refs, 1, memory_order_acq_rel) != 1)
        return false;
    HB_AFTER(refs);
    return true;
}

void mu_view_pod_unref(struct mu_view_pod *p)
{
    if (p && last_ref(&p->refs))
        free(p);
}

static struct mu_view_pod *pod_ref(struct mu_view_pod *p)
{
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}

/* The slot of uid (hash h) in v's table: the pod there, or the empty slot
 * where it would go. v->cap > 0. */
static size_t slot_of(const struct mu_view *v, const char *uid, uint64_t h)
{
    size_t mask = v->cap - 1, i = (size_t)h & mask;

    while (v->pods[i] &&
           !(v->pods[i]->hash == h && !strcmp(v->pods[i]->uid, uid)))
        i = (i + 1) & mask;
    return i;
}

/* Room for n pods at a load of at most a half. */
static void room_for(struct mu_view *v, size_t n)
{
    struct mu_view_pod **old = v->pods;
    size_t ocap = v->cap;

    if (n * 2 <= v->cap)
        return;
    if (!v->cap)
        v->cap = 64;
    while (n * 2 > v->cap)
        v->cap *= 2;
    v->pods = mu_xcalloc(v->cap, sizeof(*v->pods));
    for (size_t i = 0; i < ocap; i++)
        if (old[i])
            v->pods[slot_of(v, old[i]->uid, old[i]->hash)] = old[i];
    free(old);
}

struct mu_view *mu_view_new(uint64_t gen, bool synced)
{
    struct mu_view *v = mu_xcalloc(1, sizeof(*v));

    atomic_init(&v->refs, 1);
    v->gen = gen;
    v->synced = synced;
    v->sched_names = copy_names(default_names);
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

void mu_view_reserve(struct mu_view *v, size_t n)
{
    room_for(v, n);
}

void mu_view_hold_pod(struct mu_view *v, struct mu_view_pod *p)
{
    struct mu_view_pod *old;
    size_t i;

    room_for(v, v->npods + 1);
    i = slot_of(v, p->uid, p->hash);
    old = v->pods[i];
    v->pods[i] = pod_ref(p);
    if (!old)
        v->npods++;
    /* a uid added again in the same batch is listed there once */
    if (p->release && !(old && !mu_strcmp0(old->release, p->release)))
        batch_add(v, p->release, p->uid);
    mu_view_pod_unref(old);
}

void mu_view_add_pod(struct mu_view *v, const char *uid, const char *ns,
                     const char *name, const char *gang, const char *node,
                     const char *release, int batch_size, const char *reason)
{
    struct mu_view_pod f = {.uid = (char *)uid, .ns = (char *)ns,
                            .name = (char *)name, .node = (char *)node,
                            .gang = (char *)gang, .release = (char *)release,
                            .batch_size = batch_size,
                            .reason = (char *)reason};
    struct mu_view_pod *p = mu_view_pod_make(&f);

    mu_view_hold_pod(v, p);
    mu_view_pod_unref(p);
}

/* v's entry for uid, to be changed before publishing: copied first when
 * another view or a cache shares it (entries are immutable once shared). */
static struct mu_view_pod *own_pod(struct mu_view *v, const char *uid)
{
    struct mu_view_pod *p, *copy;
    size_t i;

    if (!uid || !v->cap)
        return NULL;
    i = slot_of(v, uid, mu_hash_str(uid));
    p = v->pods[i];
    if (!p || atomic_load(&p->refs) == 1)
        return p;
    copy = mu_view_pod_make(p);
    v->pods[i] = copy;
    mu_view_pod_unref(p);
    return copy;
}

void mu_view_set_controlled(struct mu_view *v, const char *uid,
                            bool controlled)
{
    struct mu_view_pod *p = own_pod(v, uid);

    if (p)
        p->controlled = controlled;
}

void mu_view_set_plain(struct mu_view *v, const char *uid, bool plain)
{
    struct mu_view_pod *p = own_pod(v, uid);

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
    if (!v || !uid || !v->cap)
        return NULL;
    return v->pods[slot_of(v, uid, mu_hash_str(uid))];
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

    for (size_t i = 0; i < v->cap; i++)
        mu_view_pod_unref(v->pods[i]);
    free(v->pods);
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
    if (v && last_ref(&v->refs))
        view_free(v);
}

/* One cached entry: the pod's last, and the sweep it was last put in. */
struct mu_view_cent {
    struct mu_view_pod *pod;
    uint64_t gen;
};

void mu_view_cache_init(struct mu_view_cache *c)
{
    mu_map_init(&c->ents);
    c->gen = 0;
}

void mu_view_cache_release(struct mu_view_cache *c)
{
    size_t it = 0;
    void *v;

    while (mu_map_next(&c->ents, &it, NULL, &v)) {
        mu_view_pod_unref(((struct mu_view_cent *)v)->pod);
        free(v);
    }
    mu_map_release(&c->ents);
}

static bool same_pod(const struct mu_view_pod *a, const struct mu_view_pod *f)
{
    return a->batch_size == f->batch_size && a->controlled == f->controlled &&
           a->plain == f->plain && !mu_strcmp0(a->ns, f->ns) &&
           !mu_strcmp0(a->name, f->name) && !mu_strcmp0(a->node, f->node) &&
           !mu_strcmp0(a->gang, f->gang) &&
           !mu_strcmp0(a->release, f->release) &&
           !mu_strcmp0(a->reason, f->reason);
}

void mu_view_cache_put(struct mu_view_cache *c, struct mu_view *v,
                       const struct mu_view_pod *f)
{
    struct mu_view_cent *e;

    if (!f->uid)
        return;
    e = mu_map_get(&c->ents, f->uid);
    if (!e) {
        e = mu_xcalloc(1, sizeof(*e));
        mu_map_put(&c->ents, f->uid, e);
    }
    if (!e->pod || !same_pod(e->pod, f)) {
        mu_view_pod_unref(e->pod);
        e->pod = mu_view_pod_make(f);
    }
    e->gen = c->gen + 1;
    mu_view_hold_pod(v, e->pod);
}

void mu_view_cache_sweep(struct mu_view_cache *c)
{
    size_t it = 0;
    const char *k;
    void *v;

    c->gen++;
    while (mu_map_next(&c->ents, &it, &k, &v)) {
        struct mu_view_cent *e = v;

        if (e->gen == c->gen)
            continue;
        mu_map_del(&c->ents, k);
        mu_view_pod_unref(e->pod);
        free(e);
    }
}
