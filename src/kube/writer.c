/*
 * writer.c - asynchronous API writes (writer.h).
 *
 * One lock guards everything: the queue (a FIFO of items, the urgent ones
 * first: urgent_tail ends that prefix), the set of keys
 * being sent (busy), the newest queued item per key (for coalescing) and
 * the completions waiting for the owner. Workers hold it only to pick and
 * to hand back; requests run without it. A worker picks the oldest queued
 * item whose key is not busy, which is what keeps writes of one object in
 * order while other objects go ahead; a background item only while fewer
 * than o.background of them run (nfg_queued lets a pick that could take
 * only those stop at once).
 */
#include "kube/writer.h"

#include <pthread.h>
#include <time.h>

#include "common/map.h"
#include "common/clock.h"
#include "kube/paths.h"

struct item {
    struct mu_write w; /* strings owned (the copies below), body owned */
    char *method, *path, *content_type, *key;
    int rc;
    char *msg; /* on failure */
    struct item *prev, *next;
};

struct worker {
    struct mu_writer *w;
    pthread_t thread;
    bool started;
};

struct mu_writer {
    pthread_mutex_t lock;
    pthread_cond_t work;    /* workers: an item became runnable, or stop */
    pthread_cond_t space;   /* submitters: the queue has room */
    pthread_cond_t settled; /* flush: nothing queued or running; init */
    struct mu_writer_opts o;
    struct mu_kube_config cfg;
    struct mu_kube_shared_limiter lim;
    atomic_bool cancel; /* requests in flight give up (free) */
    bool stopping;
    struct item *head, *tail; /* queued, oldest first */
    struct item *urgent_tail; /* the last urgent item, NULL: none */
    size_t nqueued, nrunning;
    size_t nfg_queued;  /* queued items not flagged MU_WRITE_BACKGROUND */
    size_t nbg_running; /* running items flagged MU_WRITE_BACKGROUND */
    int nspace_waiters; /* submitters waiting for room in the queue */
    struct mu_map busy;   /* key -> (void *)1 while an item of it runs */
    struct mu_map newest; /* key -> newest queued item with that key */
    struct item *done_head, *done_tail;
    struct worker *workers;
    int nworkers, ninit, init_rc;
    struct mu_err init_err;
    struct mu_writer_stats st;
    unsigned event_seq;
};

static bool background(const struct item *it)
{
    return it->w.flags & MU_WRITE_BACKGROUND;
}

static void item_free(struct item *it)
{
    json_decref(it->w.body);
    free(it->method);
    free(it->path);
    free(it->content_type);
    free(it->key);
    free(it->msg);
    free(it);
}

/* Puts it into the queue between prev and next (neighbours; NULL: the
 * head or the tail) (lock held). */
static void link_item(struct mu_writer *w, struct item *it, struct item *prev,
                      struct item *next)
{
    it->prev = prev;
    it->next = next;
    if (prev)
        prev->next = it;
    else
        w->head = it;
    if (next)
        next->prev = it;
    else
        w->tail = it;
}

static void unlink_item(struct mu_writer *w, struct item *it)
{
    if (w->urgent_tail == it) /* urgent items are a prefix */
        w->urgent_tail = it->prev;
    if (it->prev)
        it->prev->next = it->next;
    else
        w->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        w->tail = it->prev;
    it->prev = it->next = NULL;
    w->nqueued--;
    if (!background(it))
        w->nfg_queued--;
    if (mu_map_get(&w->newest, it->key) == it)
        mu_map_del(&w->newest, it->key);
}

/* Queues a completion for the owner (lock held); true when the owner must
 * be told (nothing was waiting before). */
static bool complete(struct mu_writer *w, struct item *it, int rc,
                     const char *msg)
{
    bool first = !w->done_head;

    it->rc = rc;
    free(it->msg);
    it->msg = rc < 0 ? mu_xstrdup(msg && *msg ? msg : strerror(-rc)) : NULL;
    if (rc < 0 && rc != -ECANCELED)
        w->st.failed++;
    if (!it->w.done && (rc >= 0 || rc == -ECANCELED)) {
        item_free(it);
        return false;
    }
    it->next = NULL;
    it->prev = w->done_tail;
    if (w->done_tail)
        w->done_tail->next = it;
    else
        w->done_head = it;
    w->done_tail = it;
    return first;
}

/* The oldest queued item whose key is not being sent, and that is not a
 * background one while o.background of those run, unless a submitter
 * waits for room (lock held). */
static struct item *pick(struct mu_writer *w)
{
    bool bg_full = w->nbg_running >= (size_t)w->o.background &&
                   !w->nspace_waiters;

    if (bg_full && !w->nfg_queued)
        return NULL;
    for (struct item *it = w->head; it; it = it->next)
        if (!(bg_full && background(it)) && !mu_map_get(&w->busy, it->key))
            return it;
    return NULL;
}

static int send_one(const struct mu_writer *w_gate, struct mu_kube *k,
                    struct item *it, struct mu_err *err)
{
    int rc;

    if (w_gate->o.gate && !w_gate->o.gate(w_gate->o.gate_ctx))
        return mu_err_set(err, -EPERM, "%s %s: not sent: the gate is closed "
                                       "(not the leader)",
                          it->w.method ? it->w.method : "write", it->w.path);
    if (it->w.run)
        rc = it->w.run(k, &it->w, it->w.ctx, err);
    else
        rc = mu_kube_call(k, it->w.method, it->w.path, NULL, it->w.body,
                          it->w.content_type, NULL, err);
    if (rc == -ENOENT && (it->w.flags & MU_WRITE_GONE_OK))
        rc = 0;
    return rc;
}

static void *worker_main(void *arg)
{
    struct worker *wk = arg;
    struct mu_writer *w = wk->w;
    struct mu_kube_opts ko = w->o.kube;
    struct mu_kube *k = NULL;
    struct mu_err err;
    int rc;

    ko.shared_limiter = &w->lim;
    rc = mu_kube_new(&w->cfg, &ko, &k, &err);
    if (k)
        mu_kube_set_stop(k, &w->cancel);
    pthread_mutex_lock(&w->lock);
    if (rc < 0 && !w->init_rc) {
        w->init_rc = rc;
        w->init_err = err;
    }
    w->ninit++;
    pthread_cond_broadcast(&w->settled);
    while (k && !w->stopping) {
        struct item *it = pick(w);
        bool tell;

        if (!it) {
            pthread_cond_wait(&w->work, &w->lock);
            continue;
        }
        unlink_item(w, it);
        mu_map_put(&w->busy, it->key, (void *)1);
        w->nrunning++;
        w->nbg_running += background(it);
        pthread_cond_signal(&w->space);
        pthread_mutex_unlock(&w->lock);

        err.msg[0] = '\0';
        rc = send_one(w, k, it, &err);

        pthread_mutex_lock(&w->lock);
        mu_map_del(&w->busy, it->key);
        w->nbg_running -= background(it);
        tell = complete(w, it, rc, err.msg);
        /* the key is free: its next write may go, on any worker */
        pthread_cond_broadcast(&w->work);
        if (tell && w->o.notify) {
            pthread_mutex_unlock(&w->lock);
            w->o.notify(w->o.notify_ctx);
            pthread_mutex_lock(&w->lock);
        }
        /* after the notify, so a flush that returns has seen it */
        w->nrunning--;
        if (!w->nqueued && !w->nrunning)
            pthread_cond_broadcast(&w->settled);
    }
    pthread_mutex_unlock(&w->lock);
    mu_kube_free(k);
    return NULL;
}

static void stop_workers(struct mu_writer *w)
{
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->work);
    pthread_cond_broadcast(&w->space);
    pthread_mutex_unlock(&w->lock);
    atomic_store(&w->cancel, true);
    for (int i = 0; i < w->nworkers; i++)
        if (w->workers[i].started)
            pthread_join(w->workers[i].thread, NULL);
}

static void destroy(struct mu_writer *w)
{
    mu_map_release(&w->busy);
    mu_map_release(&w->newest);
    mu_kube_config_release(&w->cfg);
    mu_kube_shared_limiter_release(&w->lim);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->space);
    pthread_cond_destroy(&w->settled);
    pthread_mutex_destroy(&w->lock);
    free(w->workers);
    free(w);
}

int mu_writer_new(const struct mu_kube_config *cfg,
                  const struct mu_writer_opts *opts, struct mu_writer **out,
                  struct mu_err *err)
{
    struct mu_writer *w = mu_xcalloc(1, sizeof(*w));

    *out = NULL;
    if (opts)
        w->o = *opts;
    if (w->o.threads < 1)
        w->o.threads = MU_WRITER_THREADS;
    if (!w->o.cap)
        w->o.cap = MU_WRITER_QUEUE_CAP;
    if (w->o.background < 1)
        w->o.background = MU_WRITER_BACKGROUND;
    w->o.kube.shared_limiter = NULL;
    pthread_mutex_init(&w->lock, NULL);
    mu_cond_init_monotonic(&w->work);
    mu_cond_init_monotonic(&w->space);
    mu_cond_init_monotonic(&w->settled);
    atomic_init(&w->cancel, false);
    mu_map_init(&w->busy);
    mu_map_init(&w->newest);
    mu_kube_config_copy(&w->cfg, cfg);
    mu_kube_shared_limiter_init(&w->lim, w->o.kube.qps, w->o.kube.burst,
                                mu_kube_clock_now(&w->o.kube.clock));
    w->event_seq = MU_WRITER_EVENT_SEQ0;
    /* jansson seeds its hash lazily on the first json_object(); do it
     * before any worker can race another thread to it */
    json_object_seed(0);
    w->workers = mu_xcalloc((size_t)w->o.threads, sizeof(*w->workers));
    w->nworkers = w->o.threads;
    for (int i = 0; i < w->nworkers; i++) {
        w->workers[i].w = w;
        if (pthread_create(&w->workers[i].thread, NULL, worker_main,
                           &w->workers[i])) {
            pthread_mutex_lock(&w->lock);
            if (!w->init_rc) {
                w->init_rc = -EAGAIN;
                mu_err_set(&w->init_err, -EAGAIN,
                           "writer: cannot start a thread");
            }
            w->ninit++;
            pthread_mutex_unlock(&w->lock);
            continue;
        }
        w->workers[i].started = true;
    }
    pthread_mutex_lock(&w->lock);
    while (w->ninit < w->nworkers)
        pthread_cond_wait(&w->settled, &w->lock);
    pthread_mutex_unlock(&w->lock);
    if (w->init_rc) {
        int rc = w->init_rc;

        if (err)
            *err = w->init_err;
        stop_workers(w);
        destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

void mu_writer_free(struct mu_writer *w)
{
    struct item *it;

    if (!w)
        return;
    stop_workers(w);
    /* no worker left: what is queued was never sent */
    while ((it = w->head)) {
        unlink_item(w, it);
        complete(w, it, -ECANCELED, "not sent: the writer stopped");
    }
    mu_writer_drain(w, NULL);
    destroy(w);
}

/*
 * The merge patch that does what a then b do (RFC 7386), or NULL when no
 * merge patch can: b sets an object member that a deletes or sets to
 * something other than an object (after a, b builds a new object there;
 * composed it would merge into what the target had). Both must be objects.
 */
static json_t *merge_compose(const json_t *a, const json_t *b)
{
    json_t *out = json_deep_copy(a), *bv;
    const char *k;

    json_object_foreach((json_t *)b, k, bv) {
        json_t *av = json_object_get(out, k);

        if (json_is_object(bv) && json_is_object(av)) {
            json_t *c = merge_compose(av, bv);

            if (!c)
                goto fail;
            json_object_set_new(out, k, c);
        } else if (json_is_object(bv) && av) {
            /* a deleted or replaced k (null, a string, an array): b then
             * builds a new object there, which no merge patch can say */
            goto fail;
        } else {
            json_object_set_new(out, k, json_deep_copy(bv));
        }
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

int mu_writer_submit(struct mu_writer *w, const struct mu_write *wr)
{
    struct item *it, *old;
    bool replace = false;

    if (!wr->path || (!wr->method && !wr->run)) {
        json_decref(wr->body);
        return -EINVAL;
    }
    if (w->o.gate && !w->o.gate(w->o.gate_ctx)) {
        json_decref(wr->body);
        return -EPERM;
    }
    it = mu_xcalloc(1, sizeof(*it));
    it->w = *wr;
    it->method = mu_xstrdup_or_null(wr->method);
    it->path = mu_xstrdup(wr->path);
    it->content_type = mu_xstrdup_or_null(wr->content_type);
    it->key = mu_xstrdup(wr->key ? wr->key : wr->path);
    it->w.method = it->method;
    it->w.path = it->path;
    it->w.content_type = it->content_type;
    it->w.key = it->key;

    pthread_mutex_lock(&w->lock);
    old = mu_map_get(&w->newest, it->key);
    /* replaced or folded only by a write of the same request */
    if (old &&
        !((old->w.flags ^ wr->flags) &
          (MU_WRITE_URGENT | MU_WRITE_BACKGROUND)) &&
        !w->stopping && !strcmp(old->path, it->path) &&
        !mu_strcmp0(old->method, it->method) &&
        !mu_strcmp0(old->content_type, it->content_type)) {
        if (old->w.flags & wr->flags & MU_WRITE_COALESCE) {
            replace = true;
        } else if ((old->w.flags & wr->flags & MU_WRITE_MERGE) &&
                   json_is_object(old->w.body) &&
                   json_is_object(it->w.body)) {
            json_t *c = merge_compose(old->w.body, it->w.body);

            if (c) { /* the composed body replaces both */
                json_decref(it->w.body);
                it->w.body = c;
                replace = true;
            }
        }
    }
    if (replace) {
        /* the newer write takes the older one's place in the queue */
        bool tell;

        link_item(w, it, old->prev, old->next);
        if (w->urgent_tail == old)
            w->urgent_tail = it;
        old->prev = old->next = NULL;
        mu_map_put(&w->newest, it->key, it);
        w->st.submitted++;
        w->st.coalesced++;
        tell = complete(w, old, -ECANCELED, "replaced by a newer write");
        pthread_mutex_unlock(&w->lock);
        if (tell && w->o.notify)
            w->o.notify(w->o.notify_ctx);
        return 0;
    }
    if (!w->stopping && w->nqueued >= w->o.cap) {
        /* a full queue lifts the background cap (pick): workers that
         * passed over background writes take them now */
        w->nspace_waiters++;
        if (w->nbg_running >= (size_t)w->o.background)
            pthread_cond_broadcast(&w->work);
        while (!w->stopping && w->nqueued >= w->o.cap)
            pthread_cond_wait(&w->space, &w->lock);
        w->nspace_waiters--;
    }
    if (w->stopping) {
        pthread_mutex_unlock(&w->lock);
        it->w.done = NULL;
        item_free(it);
        return -ECANCELED;
    }
    /* the wait let go of the lock: the write seen before may be sent and
     * freed by now */
    old = mu_map_get(&w->newest, it->key);
    if ((wr->flags & MU_WRITE_URGENT) &&
        (!old || (old->w.flags & MU_WRITE_URGENT))) {
        /* after the urgent ones, ahead of the rest */
        link_item(w, it, w->urgent_tail,
                  w->urgent_tail ? w->urgent_tail->next : w->head);
        w->urgent_tail = it;
    } else {
        it->w.flags &= ~MU_WRITE_URGENT; /* behind its key's queued write */
        link_item(w, it, w->tail, NULL);
    }
    /* behind a background write of its key, it is one too: a worker that
     * passes over that one must not send this one first */
    if (old && background(old))
        it->w.flags |= MU_WRITE_BACKGROUND;
    w->nqueued++;
    if (!background(it))
        w->nfg_queued++;
    mu_map_put(&w->newest, it->key, it);
    w->st.submitted++;
    if (w->nqueued > w->st.queued_max)
        w->st.queued_max = w->nqueued;
    if (!mu_map_get(&w->busy, it->key))
        pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

int mu_writer_event(struct mu_writer *w, const struct mu_kube_event *ev)
{
    return mu_writer_event_done(w, ev, NULL, NULL);
}

int mu_writer_event_done(struct mu_writer *w, const struct mu_kube_event *ev,
                         void (*done)(void *ctx, int rc, const char *msg),
                         void *ctx)
{
    const struct mu_kube_objref *io = &ev->involved;
    const char *ns =
        io->namespace && *io->namespace ? io->namespace : "default";
    struct mu_write wr = {.method = "POST", .flags = MU_WRITE_BACKGROUND,
                          .done = done, .ctx = ctx};
    unsigned seq;
    char *path;
    int rc;

    pthread_mutex_lock(&w->lock);
    seq = w->event_seq++;
    pthread_mutex_unlock(&w->lock);
    wr.body = mu_kube_event_build(ev, seq);
    if (!wr.body)
        return -ENOMEM;
    path = mu_api_path(MU_API_EVENT, ns, NULL, NULL);
    wr.path = path;
    /* each event is its own object: no ordering behind other events */
    wr.key = json_string_value(
        json_object_get(json_object_get(wr.body, "metadata"), "name"));
    rc = mu_writer_submit(w, &wr);
    free(path);
    return rc;
}

size_t mu_writer_drain(struct mu_writer *w, size_t *failed)
{
    struct item *list, *next;
    size_t n = 0, nf = 0;

    pthread_mutex_lock(&w->lock);
    list = w->done_head;
    w->done_head = w->done_tail = NULL;
    pthread_mutex_unlock(&w->lock);
    for (struct item *it = list; it; it = next) {
        next = it->next;
        n++;
        if (it->rc < 0 && it->rc != -ECANCELED)
            nf++;
        if (it->w.done) {
            it->w.done(it->w.ctx, it->rc, it->msg ? it->msg : "");
        } else if (it->rc < 0 && it->rc != -ECANCELED && w->o.log) {
            char *line =
                mu_xasprintf("%s %s: %s", it->method ? it->method : "write",
                             it->path, it->msg);

            w->o.log(w->o.log_ctx, line);
            free(line);
        }
        item_free(it);
    }
    if (failed)
        *failed = nf;
    return n;
}

int mu_writer_flush(struct mu_writer *w, long timeout_ms)
{
    struct timespec ts =
        mu_ns_to_timespec(mu_now_ns() + (int64_t)timeout_ms * 1000000);
    int rc = 0;

    pthread_mutex_lock(&w->lock);
    while ((w->nqueued || w->nrunning) && !w->stopping) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&w->settled, &w->lock);
        } else if (pthread_cond_timedwait(&w->settled, &w->lock, &ts)) {
            rc = (w->nqueued || w->nrunning) ? -ETIMEDOUT : 0;
            break;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

size_t mu_writer_room(struct mu_writer *w)
{
    size_t room;

    pthread_mutex_lock(&w->lock);
    room = w->nqueued < w->o.cap ? w->o.cap - w->nqueued : 0;
    pthread_mutex_unlock(&w->lock);
    return room;
}

size_t mu_writer_cap(const struct mu_writer *w)
{
    return w->o.cap;
}

void mu_writer_set_background(struct mu_writer *w, int n)
{
    pthread_mutex_lock(&w->lock);
    if (n < 1)
        n = MU_WRITER_BACKGROUND;
    if (n > w->o.background)
        pthread_cond_broadcast(&w->work);
    w->o.background = n;
    pthread_mutex_unlock(&w->lock);
}

void mu_writer_stats(struct mu_writer *w, struct mu_writer_stats *out)
{
    pthread_mutex_lock(&w->lock);
    *out = w->st;
    out->queued = w->nqueued;
    out->running = w->nrunning;
    pthread_mutex_unlock(&w->lock);
    mu_kube_shared_limiter_stats(&w->lim, &out->limited, &out->limited_ns);
}
