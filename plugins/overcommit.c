/*
 * overcommit.c - admit a job while the cluster, inflated by a factor, has
 * room for it and for everything admitted before (§7.1).
 *
 * Unlike Volcano, a job whose queue is owed its minResources (allocated +
 * minResources within deserved, per proportion) is not rejected when the
 * cluster looks full: overcommit abstains, the job is admitted, and reclaim
 * makes room. Otherwise a full cluster could never admit the job that
 * should reclaim for its queue (Volcano #4679). Likewise a job that
 * lower-priority work of its own queue could make room for is admitted, so
 * that preempt can act on it.
 */
#include <math.h>

#include "ahead.h"
#include "plugins.h"

#define DEFAULT_FACTOR 1.2

struct oc {
    struct mu_cluster *c;
    double factor;
    struct mu_res limit;   /* floor(total x factor) */
    struct mu_res used;    /* Σ node used */
    struct mu_res inqueue; /* admitted, not yet running */
    struct mu_ahead ahead; /* the jobs summed in inqueue */
};

static int64_t get0(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

/* What j holds while admitted and waiting for room (into h), added to
 * o's inqueue and ahead. */
static void add_inqueue(struct oc *o, const struct mu_job *j)
{
    const struct mu_res *min = &j->pg.min_resources;
    struct mu_res h;

    mu_res_zero(&h);
    if (j->phase == MU_PG_INQUEUE && !mu_job_ready(j)) {
        h = *min;
    } else if (j->phase == MU_PG_RUNNING) {
        for (int d = 0; d < MU_RES_MAX; d++) {
            int64_t x = mu_sub_sat(get0(min, d), get0(&j->allocated, d));

            if (d != MU_RES_PODS && x > 0)
                mu_res_put(&h, d, x);
        }
    }
    mu_res_add(&o->inqueue, &h);
    mu_ahead_add(&o->ahead, j, &h);
}

static void *open_oc(struct mu_ssn *ssn, const struct mu_plugin_opt *opt)
{
    struct mu_cluster *c = ssn->cluster;
    struct oc *o = mu_xcalloc(1, sizeof(*o));

    o->c = c;
    mu_ahead_init(&o->ahead);
    o->factor =
        mu_conf_arg_float(ssn->conf, opt, "overcommit-factor", DEFAULT_FACTOR);
    if (o->factor < 1.0) {
        mu_conf_arg_warn(ssn->conf, opt,
                         "argument overcommit-factor: %g is below 1.0; "
                         "using %g",
                         o->factor, DEFAULT_FACTOR);
        o->factor = DEFAULT_FACTOR;
    }
    for (int d = 0; d < MU_RES_MAX; d++) {
        double v = (double)c->total.v[d] * o->factor;

        /* the relative nudge keeps 10 × 1.2 at 12 despite binary floats;
         * a limit past int64 (the API server takes quantities up to
         * 2^63 - 1) saturates, as converting it would be undefined */
        v = floor(v + fabs(v) * 1e-12);
        if (mu_res_has(&c->total, d))
            mu_res_put(&o->limit, d, v >= 0x1p63 ? INT64_MAX : (int64_t)v);
    }
    for (size_t i = 0; i < c->nnodes; i++)
        mu_res_add(&o->used, &c->nodes[i]->used);
    for (size_t i = 0; i < c->njobs; i++)
        if (c->jobs[i]->pg.has_min_resources)
            add_inqueue(o, c->jobs[i]);
    return o;
}

/* Lower-priority work of j's own queue that preempt could take back. */
static bool can_preempt(const struct mu_job *j)
{
    const struct mu_cqueue *q = j->queue;
    const struct mu_res *min = &j->pg.min_resources;
    struct mu_res low;

    mu_res_zero(&low);
    for (size_t i = 0; i < q->njobs; i++)
        if (q->jobs[i]->priority < j->priority)
            mu_res_add(&low, &q->jobs[i]->allocated);
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && get0(min, d) > get0(&low, d))
            return false;
    return true;
}

/* Preempt can make room, or the queue's allocated + minResources is within
 * its deserved share on the requested dimensions. */
static bool owed(const struct mu_job *j)
{
    const struct mu_cqueue *q = j->queue;
    const struct mu_res *min = &j->pg.min_resources;
    bool named = false;

    if (!q)
        return false;
    if (can_preempt(j))
        return true;
    if (!q->has_deserved)
        return false;
    /* over the dimensions the share names (proportion names every one;
     * capacity those of spec.deserved), at least one of them */
    for (int d = 0; d < MU_RES_MAX; d++) {
        if (d == MU_RES_PODS || get0(min, d) <= 0 ||
            !mu_res_has(&q->deserved, d))
            continue;
        if (mu_add_sat(get0(&q->allocated, d), min->v[d]) > q->deserved.v[d])
            return false;
        named = true;
    }
    return named;
}

static enum mu_vote job_enqueueable(void *st, const struct mu_job *j,
                                    struct mu_sb *why)
{
    const struct oc *o = st;
    const struct mu_res *min = &j->pg.min_resources;
    int short_dim = -1;

    if (!j->pg.has_min_resources)
        return MU_VOTE_PERMIT;
    for (int d = 0; d < MU_RES_MAX && short_dim < 0; d++)
        if (d != MU_RES_PODS && get0(min, d) > 0 &&
            mu_add_sat(mu_add_sat(get0(&o->used, d), get0(&o->inqueue, d)),
                       min->v[d]) > get0(&o->limit, d))
            short_dim = d;
    if (short_dim < 0)
        return MU_VOTE_PERMIT;
    if (owed(j))
        return MU_VOTE_ABSTAIN;
    if (why) {
        const char *name = o->c->rn.name[short_dim];
        char a[32], r[32], l[32], t[32];
        int d = short_dim;

        /* "(1 × overcommit-factor 1.2, rounded down)": 1 × 1.2 = 1
         * would read as a wrong product */
        mu_sb_addf(why,
                   "insufficient %s in the cluster: in use or admitted %s + "
                   "%s requested > %s (%s × overcommit-factor %g%s)",
                   name,
                   mu_quantity_format(name,
                                      mu_add_sat(get0(&o->used, d),
                                                 get0(&o->inqueue, d)),
                                      a, sizeof(a)),
                   mu_quantity_format(name, min->v[d], r, sizeof(r)),
                   mu_quantity_format(name, get0(&o->limit, d), l, sizeof(l)),
                   mu_quantity_format(name, get0(&o->c->total, d), t,
                                      sizeof(t)),
                   o->factor,
                   (double)get0(&o->limit, d) !=
                           (double)get0(&o->c->total, d) * o->factor
                       ? ", rounded down"
                       : "");
        mu_ahead_why(&o->ahead, o->c, d, why);
    }
    return MU_VOTE_REJECT;
}

static void job_enqueued(void *st, const struct mu_job *j)
{
    struct oc *o = st;

    if (!j->pg.has_min_resources)
        return;
    mu_res_add(&o->inqueue, &j->pg.min_resources);
    mu_ahead_add(&o->ahead, j, &j->pg.min_resources);
}

const struct mu_plugin mu_plugin_overcommit = {
    .name = "overcommit",
    .open = open_oc,
    .close = mu_plugin_close_free,
    .job_enqueueable = job_enqueueable,
    .job_enqueued = job_enqueued,
};
