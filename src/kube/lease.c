/*
 * lease.c - leader election on a Lease (lease.h).
 *
 * The thread: acquire (a try every retry period until one succeeds), then
 * renew (a try every retry period; each success moves the leading bound
 * to its send time + renew deadline), until a try finds the bound passed
 * or the Lease taken by another: lost, for good. The waits are on a
 * condition so mu_lease_stop() interrupts them.
 */
#include "kube/lease.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "kube/paths.h"

struct mu_lease {
    struct mu_kube_config cfg;
    struct mu_lease_opts o;
    char *ns, *name, *identity;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;     /* under lock */
    atomic_bool cancel; /* interrupts the client's transfer */
    /* leading until this monotonic instant (0: not leading) */
    _Atomic int64_t until_ns;
    atomic_bool held, lost;
    atomic_bool quit;  /* mu_lease_stop was called: never leading again */
    /* the elector thread's own */
    char *observed;
    int64_t observed_ns;
};

static void say(struct mu_lease *l, const char *fmt, ...) MU_PRINTF(2, 3);

static void say(struct mu_lease *l, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!l->o.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    l->o.log(l->o.log_ctx, line);
}

/* "2026-12-01T10:45:17.123456Z" (a MicroTime) */
static json_t *micro_time(time_t t, long us)
{
    char day[32], buf[48];

    mu_kube_time_text(t, day, sizeof(day));
    day[strlen(day) - 1] = '\0'; /* the Z */
    snprintf(buf, sizeof(buf), "%s.%06ldZ", day, us);
    return json_string(buf);
}

static const char *spec_str(const json_t *lease, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(lease, "spec"), key));
}

/* What identifies one state of the record: a change of any of these
 * restarts the observed clock (client-go compares the whole record). */
static char *record_of(const json_t *lease)
{
    const char *h = spec_str(lease, "holderIdentity");
    const char *rt = spec_str(lease, "renewTime");
    const char *rv = json_string_value(json_object_get(
        json_object_get(lease, "metadata"), "resourceVersion"));

    return mu_xasprintf("%s|%s|%s", h ? h : "", rt ? rt : "", rv ? rv : "");
}

json_t *mu_lease_next(const json_t *lease, const char *ns, const char *name,
                      const char *identity, int64_t lease_ms,
                      int64_t now_ns, time_t now_wall, long now_us,
                      char **observed, int64_t *observed_ns, bool *create)
{
    json_int_t secs = (json_int_t)((lease_ms + 999) / 1000);
    const char *holder;
    json_t *out, *spec;
    json_int_t trans;
    char *rec;

    *create = !lease;
    if (!lease) {
        out = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:I,s:I}}", "apiVersion",
                        "coordination.k8s.io/v1", "kind", "Lease",
                        "metadata", "namespace", ns, "name", name, "spec",
                        "holderIdentity", identity, "leaseDurationSeconds",
                        secs, "leaseTransitions", (json_int_t)0);
        spec = json_object_get(out, "spec");
        json_object_set_new(spec, "acquireTime", micro_time(now_wall, now_us));
        json_object_set_new(spec, "renewTime", micro_time(now_wall, now_us));
        return out;
    }
    rec = record_of(lease);
    if (!*observed || strcmp(*observed, rec)) {
        free(*observed);
        *observed = rec;
        *observed_ns = now_ns;
    } else {
        free(rec);
    }
    holder = spec_str(lease, "holderIdentity");
    if (holder && *holder && strcmp(holder, identity) &&
        now_ns - *observed_ns < lease_ms * 1000000)
        return NULL; /* held, and renewed within the lease as we saw it */
    out = json_deep_copy(lease);
    spec = json_object_get(out, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(out, "spec", spec);
    }
    trans = json_integer_value(json_object_get(spec, "leaseTransitions"));
    if (!holder || strcmp(holder, identity)) {
        json_object_set_new(spec, "acquireTime", micro_time(now_wall, now_us));
        json_object_set_new(spec, "leaseTransitions",
                            json_integer(trans + 1));
    }
    json_object_set_new(spec, "holderIdentity", json_string(identity));
    json_object_set_new(spec, "leaseDurationSeconds", json_integer(secs));
    json_object_set_new(spec, "renewTime", micro_time(now_wall, now_us));
    return out;
}

/* One try: read, decide, write. 0: this elector holds the Lease as of
 * sent_ns; 1: another does; -errno: failed (logged). */
static int try_once(struct mu_lease *l, struct mu_kube *k, int64_t *sent_ns)
{
    char *path = mu_api_path(MU_API_LEASE, l->ns, l->name, NULL);
    char *coll = mu_api_path(MU_API_LEASE, l->ns, NULL, NULL);
    json_t *lease = NULL, *next = NULL, *resp = NULL;
    struct timeval tv;
    struct mu_err err;
    bool create;
    int r;

    r = mu_kube_get(k, path, NULL, &lease, &err);
    if (r < 0 && r != -ENOENT)
        goto out;
    gettimeofday(&tv, NULL);
    *sent_ns = mu_now_ns();
    next = mu_lease_next(r == -ENOENT ? NULL : lease, l->ns, l->name,
                         l->identity, l->o.lease_ms, *sent_ns, tv.tv_sec,
                         (long)tv.tv_usec, &l->observed, &l->observed_ns,
                         &create);
    if (!next) {
        r = 1;
        goto out;
    }
    r = create ? mu_kube_create(k, coll, next, &resp, &err)
               : mu_kube_replace(k, path, next, &resp, &err);
    if (r == 0) {
        /* our own write is the record we observe now */
        free(l->observed);
        l->observed = record_of(resp);
        l->observed_ns = *sent_ns;
    }
out:
    if (r < 0 && r != -EBUSY && r != -EEXIST && r != -ECANCELED)
        say(l, "lease %s/%s: %s", l->ns, l->name, err.msg);
    json_decref(lease);
    json_decref(next);
    json_decref(resp);
    free(path);
    free(coll);
    return r;
}

/* Waits until deadline_ns or a stop; true when stopping. */
static bool nap(struct mu_lease *l, int64_t deadline_ns)
{
    struct timespec ts = mu_ns_to_timespec(deadline_ns);
    bool stop;

    pthread_mutex_lock(&l->lock);
    while (!l->stopping && mu_now_ns() < deadline_ns)
        if (pthread_cond_timedwait(&l->cond, &l->lock, &ts) == ETIMEDOUT)
            break;
    stop = l->stopping;
    pthread_mutex_unlock(&l->lock);
    return stop;
}

static void changed(struct mu_lease *l)
{
    if (l->o.changed)
        l->o.changed(l->o.changed_ctx);
}

/* Gives the Lease up: holder "", 1 s, so the next try of a follower
 * takes it. Only when the Lease still names us. */
static void give_up(struct mu_lease *l, struct mu_kube *k)
{
    char *path = mu_api_path(MU_API_LEASE, l->ns, l->name, NULL);
    json_t *lease = NULL, *spec;
    struct mu_err err;

    if (mu_kube_get(k, path, NULL, &lease, &err) == 0 &&
        !mu_strcmp0(spec_str(lease, "holderIdentity"), l->identity)) {
        spec = json_object_get(lease, "spec");
        json_object_set_new(spec, "holderIdentity", json_string(""));
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
        if (mu_kube_replace(k, path, lease, NULL, &err) < 0)
            say(l, "lease %s/%s: giving it up: %s", l->ns, l->name, err.msg);
        else
            say(l, "lease %s/%s: given up", l->ns, l->name);
    }
    json_decref(lease);
    free(path);
}

static void *lease_main(void *arg)
{
    struct mu_lease *l = arg;
    struct mu_kube_opts ko = l->o.kube;
    struct mu_kube *k = NULL;
    struct mu_err err;
    int64_t sent = 0, next;
    int r;

    if (!ko.timeout_ms)
        ko.timeout_ms = (long)l->o.retry_ms;
    if (mu_kube_new(&l->cfg, &ko, &k, &err) < 0) {
        say(l, "lease: no client: %s", err.msg);
        return NULL;
    }
    mu_kube_set_stop(k, &l->cancel);
    for (;;) {
        bool leading = atomic_load(&l->held);

        next = mu_now_ns() + l->o.retry_ms * 1000000;
        r = try_once(l, k, &sent);
        if (r == 0) {
            atomic_store(&l->until_ns, sent + l->o.renew_ms * 1000000);
            if (!leading) {
                atomic_store(&l->held, true);
                say(l, "lease %s/%s: acquired as %s", l->ns, l->name,
                    l->identity);
                changed(l);
            }
        } else if (leading && (r == 1 || !mu_lease_leading(l))) {
            atomic_store(&l->until_ns, 0);
            atomic_store(&l->lost, true);
            say(l, "lease %s/%s: lost (%s)", l->ns, l->name,
                r == 1 ? "another holder" : "renew deadline passed");
            changed(l);
            break;
        }
        if (nap(l, next))
            break;
    }
    if (atomic_load(&l->held) && !atomic_load(&l->lost)) {
        atomic_store(&l->until_ns, 0);
        if (l->o.release_on_stop) {
            atomic_store(&l->cancel, false);
            give_up(l, k);
        }
    }
    mu_kube_free(k);
    return NULL;
}

static char *default_identity(void)
{
    char host[256];

    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "muster");
    host[sizeof(host) - 1] = '\0';
    return mu_xasprintf("%s_%ld", host, (long)getpid());
}

int mu_lease_start(const struct mu_kube_config *cfg,
                   const struct mu_lease_opts *opts, struct mu_lease **out,
                   struct mu_err *err)
{
    struct mu_lease *l;
    int r;

    *out = NULL;
    l = mu_xcalloc(1, sizeof(*l));
    l->o = *opts;
    if (!l->o.lease_ms)
        l->o.lease_ms = MU_LEASE_DURATION_MS;
    if (!l->o.renew_ms)
        l->o.renew_ms = MU_LEASE_RENEW_MS;
    if (!l->o.retry_ms)
        l->o.retry_ms = MU_LEASE_RETRY_MS;
    if (l->o.renew_ms >= l->o.lease_ms || l->o.retry_ms >= l->o.renew_ms ||
        l->o.retry_ms <= 0) {
        r = mu_err_set(err, -EINVAL,
                       "leader election: want 0 < retry period < renew "
                       "deadline < lease duration (%lld, %lld, %lld ms)",
                       (long long)l->o.retry_ms, (long long)l->o.renew_ms,
                       (long long)l->o.lease_ms);
        free(l);
        return r;
    }
    l->ns = mu_xstrdup(opts->ns ? opts->ns : MU_LEASE_NAMESPACE);
    l->name = mu_xstrdup(opts->name ? opts->name : MU_LEASE_NAME);
    l->identity = opts->identity ? mu_xstrdup(opts->identity)
                                 : default_identity();
    l->o.ns = l->o.name = l->o.identity = NULL;
    pthread_mutex_init(&l->lock, NULL);
    mu_cond_init_monotonic(&l->cond);
    mu_kube_config_init(&l->cfg);
    mu_kube_config_copy(&l->cfg, cfg);
    if (pthread_create(&l->thread, NULL, lease_main, l)) {
        r = mu_err_set(err, -EAGAIN, "cannot start the leader election "
                                     "thread");
        goto fail;
    }
    *out = l;
    return 0;
fail:
    mu_kube_config_release(&l->cfg);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
    return r;
}

void mu_lease_stop(struct mu_lease *l)
{
    if (!l)
        return;
    atomic_store(&l->quit, true); /* no write of ours from here on */
    pthread_mutex_lock(&l->lock);
    l->stopping = true;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
    atomic_store(&l->cancel, true);
    pthread_join(l->thread, NULL);
    mu_kube_config_release(&l->cfg);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->lock);
    free(l->observed);
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l);
}

bool mu_lease_leading(const struct mu_lease *l)
{
    return !atomic_load(&l->quit) && mu_now_ns() < atomic_load(&l->until_ns);
}

bool mu_lease_lost(const struct mu_lease *l)
{
    return atomic_load(&l->lost);
}

const char *mu_lease_identity(const struct mu_lease *l)
{
    return l->identity;
}
