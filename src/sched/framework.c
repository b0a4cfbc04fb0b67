#include "sched/framework.h"

#include <stdarg.h>
#include <stdint.h>

/* Which flag gates each hook, and whether the plugin has it. */
static bool has_hook(const struct mu_plugin *p, enum mu_hook_id h)
{
    switch (h) {
    case MU_HOOK_JOB_ORDER: return p->job_order;
    case MU_HOOK_QUEUE_ORDER: return p->queue_order;
    case MU_HOOK_TASK_ORDER: return p->task_order;
    case MU_HOOK_JOB_VALID: return p->job_valid;
    case MU_HOOK_JOB_READY: return p->job_ready;
    case MU_HOOK_JOB_PIPELINED: return p->job_pipelined;
    case MU_HOOK_JOB_STARVING: return p->job_starving;
    case MU_HOOK_JOB_ENQUEUEABLE: return p->job_enqueueable;
    case MU_HOOK_JOB_ENQUEUED: return p->job_enqueued;
    case MU_HOOK_ALLOCATABLE: return p->allocatable;
    case MU_HOOK_OVERUSED: return p->overused;
    case MU_HOOK_PREEMPTIVE: return p->preemptive;
    case MU_HOOK_PREDICATE: return p->predicate;
    case MU_HOOK_NODE_SCORE: return p->node_score;
    case MU_HOOK_PREEMPTABLE:
    case MU_HOOK_RECLAIMABLE: return p->victim_ok;
    default: return false;
    }
}

static const int hook_flag[MU_HOOK__COUNT] = {
    [MU_HOOK_JOB_ORDER] = MU_FLAG_JOB_ORDER,
    [MU_HOOK_QUEUE_ORDER] = MU_FLAG_QUEUE_ORDER,
    [MU_HOOK_TASK_ORDER] = MU_FLAG_TASK_ORDER,
    [MU_HOOK_JOB_VALID] = -1,
    [MU_HOOK_JOB_READY] = MU_FLAG_JOB_READY,
    [MU_HOOK_JOB_PIPELINED] = MU_FLAG_JOB_PIPELINED,
    [MU_HOOK_JOB_STARVING] = MU_FLAG_JOB_STARVING,
    [MU_HOOK_JOB_ENQUEUEABLE] = MU_FLAG_JOB_ENQUEUED,
    [MU_HOOK_JOB_ENQUEUED] = MU_FLAG_JOB_ENQUEUED,
    [MU_HOOK_ALLOCATABLE] = MU_FLAG_ALLOCATABLE,
    [MU_HOOK_OVERUSED] = MU_FLAG_OVERUSED,
    [MU_HOOK_PREEMPTIVE] = MU_FLAG_PREEMPTIVE,
    [MU_HOOK_PREDICATE] = MU_FLAG_PREDICATE,
    [MU_HOOK_NODE_SCORE] = MU_FLAG_NODE_ORDER,
    [MU_HOOK_PREEMPTABLE] = MU_FLAG_PREEMPTABLE,
    [MU_HOOK_RECLAIMABLE] = MU_FLAG_RECLAIMABLE,
};

void mu_why_reset(struct mu_job *j)
{
    free(j->why.text);
    free(j->why.reclaim);
    memset(&j->why, 0, sizeof(j->why));
}

void mu_why_set(struct mu_job *j, enum mu_why_kind kind, const char *text)
{
    mu_why_reset(j);
    j->why.kind = kind;
    j->why.text = mu_xstrdup_or_null(text);
}

void mu_why_reclaim(struct mu_job *j, const char *text)
{
    free(j->why.reclaim);
    j->why.reclaim = mu_xstrdup_or_null(text);
}

void mu_why_setf(struct mu_job *j, enum mu_why_kind kind, const char *fmt,
                 ...)
{
    struct mu_sb sb;
    va_list ap;

    mu_why_reset(j);
    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    j->why.kind = kind;
    j->why.text = mu_sb_detach(&sb);
}

void mu_ssn_open(struct mu_ssn *ssn, struct mu_cluster *c, struct mu_conf *conf,
                 int64_t now_ms)
{
    memset(ssn, 0, sizeof(*ssn));
    ssn->cluster = c;
    ssn->conf = conf;
    ssn->now_ms = now_ms;
    ssn->wake_ms = INT64_MAX;
    mu_stmt_init(&ssn->stmt, c);
    c->ndirty = 0;
    for (size_t i = 0; i < c->njobs; i++)
        mu_why_reset(c->jobs[i]);
    for (size_t i = 0; i < c->nqueues; i++) {
        c->queues[i]->has_deserved = false;
        mu_res_zero(&c->queues[i]->deserved);
        mu_res_zero(&c->queues[i]->real_capability);
        mu_res_zero(&c->queues[i]->inqueue);
        c->queues[i]->up = NULL;
        c->queues[i]->in_tree = false;
    }
    for (int t = 0; t < conf->ntiers; t++) {
        for (int k = 0; k < conf->tiers[t].n; k++) {
            const struct mu_plugin_opt *o = &conf->tiers[t].plugins[k];
            const struct mu_plugin *p = mu_plugin_find(o->name);
            void *st;

            if (!p || ssn->ninst >= MU_SSN_MAX_PLUGINS)
                continue;
            st = p->open ? p->open(ssn, o) : NULL;
            ssn->inst[ssn->ninst] = p;
            ssn->inst_st[ssn->ninst++] = st;
            for (int h = 0; h < MU_HOOK__COUNT; h++) {
                struct mu_hooks *hs = &ssn->hooks[h];

                if (!has_hook(p, (enum mu_hook_id)h))
                    continue;
                if (hook_flag[h] >= 0 &&
                    !mu_plugin_opt_on(o, (enum mu_flag)hook_flag[h]))
                    continue;
                hs->h[hs->n].p = p;
                hs->h[hs->n].st = st;
                hs->h[hs->n].tier = t;
                hs->n++;
            }
        }
    }
}

void mu_ssn_close(struct mu_ssn *ssn)
{
    for (int i = ssn->ninst - 1; i >= 0; i--)
        if (ssn->inst[i]->close)
            ssn->inst[i]->close(ssn, ssn->inst_st[i]);
    for (size_t i = 0; ssn->cluster && i < ssn->cluster->nqueues; i++) {
        ssn->cluster->queues[i]->up = NULL; /* the tree is the session's */
        ssn->cluster->queues[i]->in_tree = false;
    }
    for (int i = 0; i < ssn->pred_cache_shapes; i++)
        free(ssn->pred_cache[i]);
    free(ssn->pred_cache);
    free(ssn->binds);
    free(ssn->evicts);
    mu_stmt_release(&ssn->stmt);
    memset(ssn, 0, sizeof(*ssn));
}

#define HOOKS(s, id) (&(s)->hooks[id])

int mu_ssn_job_order(struct mu_ssn *s, const struct mu_job *a,
                     const struct mu_job *b)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_JOB_ORDER);

    for (int i = 0; i < hs->n; i++) {
        int r = hs->h[i].p->job_order(hs->h[i].st, a, b);

        if (r)
            return r;
    }
    if (a->pg.meta.created != b->pg.meta.created)
        return a->pg.meta.created < b->pg.meta.created ? -1 : 1;
    return strcmp(a->key, b->key);
}

int mu_ssn_queue_order(struct mu_ssn *s, const struct mu_cqueue *a,
                       const struct mu_cqueue *b)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_QUEUE_ORDER);

    for (int i = 0; i < hs->n; i++) {
        int r = hs->h[i].p->queue_order(hs->h[i].st, a, b);

        if (r)
            return r;
    }
    if (a->spec.meta.created != b->spec.meta.created)
        return a->spec.meta.created < b->spec.meta.created ? -1 : 1;
    return strcmp(a->spec.meta.name, b->spec.meta.name);
}

int mu_ssn_task_order(struct mu_ssn *s, const struct mu_task *a,
                      const struct mu_task *b)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_TASK_ORDER);

    for (int i = 0; i < hs->n; i++) {
        int r = hs->h[i].p->task_order(hs->h[i].st, a, b);

        if (r)
            return r;
    }
    if (a->pod.task_index != b->pod.task_index)
        return a->pod.task_index < b->pod.task_index ? -1 : 1;
    if (a->pod.meta.created != b->pod.meta.created)
        return a->pod.meta.created < b->pod.meta.created ? -1 : 1;
    return strcmp(a->key, b->key);
}

bool mu_ssn_job_valid(struct mu_ssn *s, const struct mu_job *j,
                      struct mu_sb *why)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_JOB_VALID);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->job_valid(hs->h[i].st, j, why))
            return false;
    return true;
}

bool mu_ssn_job_ready(struct mu_ssn *s, const struct mu_job *j)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_JOB_READY);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->job_ready(hs->h[i].st, j))
            return false;
    return true;
}

/* Volcano's vote rule: any reject -> false; a tier with a permit -> true;
 * all abstain -> true. */
#define VOTE(s, id, call)                                                     \
    do {                                                                      \
        const struct mu_hooks *hs_ = HOOKS(s, id);                            \
        int tier_ = -1;                                                       \
        bool permit_ = false;                                                 \
        for (int i = 0; i < hs_->n; i++) {                                    \
            const struct mu_hook *h = &hs_->h[i];                             \
            enum mu_vote v_;                                                  \
            if (h->tier != tier_) {                                           \
                if (permit_)                                                  \
                    return true;                                              \
                tier_ = h->tier;                                              \
            }                                                                 \
            v_ = (call);                                                      \
            if (v_ == MU_VOTE_REJECT)                                         \
                return false;                                                 \
            if (v_ == MU_VOTE_PERMIT)                                         \
                permit_ = true;                                               \
        }                                                                     \
        return true;                                                          \
    } while (0)

bool mu_ssn_job_pipelined(struct mu_ssn *s, const struct mu_job *j)
{
    VOTE(s, MU_HOOK_JOB_PIPELINED, h->p->job_pipelined(h->st, j));
}

bool mu_ssn_job_enqueueable(struct mu_ssn *s, const struct mu_job *j,
                            struct mu_sb *why)
{
    VOTE(s, MU_HOOK_JOB_ENQUEUEABLE, h->p->job_enqueueable(h->st, j, why));
}

bool mu_ssn_job_starving(struct mu_ssn *s, const struct mu_job *j)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_JOB_STARVING);

    if (!hs->n)
        return false;
    for (int i = 0; i < hs->n && hs->h[i].tier == hs->h[0].tier; i++)
        if (!hs->h[i].p->job_starving(hs->h[i].st, j))
            return false;
    return true;
}

void mu_ssn_job_enqueued(struct mu_ssn *s, const struct mu_job *j)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_JOB_ENQUEUED);

    for (int i = 0; i < hs->n; i++)
        hs->h[i].p->job_enqueued(hs->h[i].st, j);
}

bool mu_ssn_allocatable(struct mu_ssn *s, const struct mu_cqueue *q,
                        const struct mu_task *t, struct mu_sb *why)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_ALLOCATABLE);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->allocatable(hs->h[i].st, q, t, why))
            return false;
    return true;
}

bool mu_ssn_overused(struct mu_ssn *s, const struct mu_cqueue *q)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_OVERUSED);

    for (int i = 0; i < hs->n; i++)
        if (hs->h[i].p->overused(hs->h[i].st, q))
            return true;
    return false;
}

bool mu_ssn_preemptive(struct mu_ssn *s, const struct mu_cqueue *q,
                       const struct mu_task *t, struct mu_sb *why)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_PREEMPTIVE);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->preemptive(hs->h[i].st, q, t, why))
            return false;
    return true;
}

static bool predicate_uncached(struct mu_ssn *s, const struct mu_task *t,
                               const struct mu_cnode *n, struct mu_fit *fit)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_PREDICATE);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->predicate(hs->h[i].st, t, n, fit))
            return false;
    return true;
}

bool mu_ssn_predicate(struct mu_ssn *s, const struct mu_task *t,
                      const struct mu_cnode *n, struct mu_fit *fit)
{
    const struct mu_cluster *c = s->cluster;
    uint8_t *row, v;

    if (t->shape >= s->pred_cache_shapes) {
        int want = c->nshapes > t->shape ? c->nshapes : t->shape + 1;

        s->pred_cache = mu_xrealloc(s->pred_cache,
                                    (size_t)want * sizeof(*s->pred_cache));
        for (int i = s->pred_cache_shapes; i < want; i++)
            s->pred_cache[i] = NULL;
        s->pred_cache_shapes = want;
    }
    row = s->pred_cache[t->shape];
    if (!row)
        row = s->pred_cache[t->shape] = mu_xcalloc(c->nnodes ? c->nnodes : 1, 1);
    v = row[n->index];
    if (!v) {
        struct mu_fit f = {MU_FIT_OK, 0};

        v = predicate_uncached(s, t, n, &f) ? 1 : (uint8_t)(2 + f.code);
        row[n->index] = v;
    }
    if (v == 1)
        return true;
    if (fit) {
        fit->code = (enum mu_fit_code)(v - 2);
        fit->dim = 0;
    }
    return false;
}

double mu_ssn_node_score(struct mu_ssn *s, const struct mu_task *t,
                         const struct mu_cnode *n)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_NODE_SCORE);
    double sum = 0;

    for (int i = 0; i < hs->n; i++)
        sum += hs->h[i].p->node_score(hs->h[i].st, t, n);
    return sum;
}

bool mu_ssn_victim_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                      const struct mu_task *victim, bool reclaim)
{
    const struct mu_hooks *hs =
        HOOKS(s, reclaim ? MU_HOOK_RECLAIMABLE : MU_HOOK_PREEMPTABLE);

    for (int i = 0; i < hs->n; i++)
        if (!hs->h[i].p->victim_ok(hs->h[i].st, preemptor, victim, reclaim))
            return false;
    return true;
}

bool mu_ssn_victim_queue_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                            const struct mu_cqueue *q, bool reclaim)
{
    const struct mu_hooks *hs =
        HOOKS(s, reclaim ? MU_HOOK_RECLAIMABLE : MU_HOOK_PREEMPTABLE);

    for (int i = 0; i < hs->n; i++)
        if (hs->h[i].p->victim_queue_ok &&
            !hs->h[i].p->victim_queue_ok(hs->h[i].st, preemptor, q, reclaim))
            return false;
    return true;
}

void mu_ssn_victim_queues_ok(struct mu_ssn *s, const struct mu_task *preemptor,
                             struct mu_cqueue *const *qs, size_t n,
                             bool reclaim, bool *ok)
{
    const struct mu_hooks *hs =
        HOOKS(s, reclaim ? MU_HOOK_RECLAIMABLE : MU_HOOK_PREEMPTABLE);

    for (size_t k = 0; k < n; k++)
        ok[k] = true;
    for (int i = 0; i < hs->n; i++) {
        const struct mu_plugin *p = hs->h[i].p;

        if (p->victim_queues_ok) {
            p->victim_queues_ok(hs->h[i].st, preemptor, qs, n, reclaim, ok);
            continue;
        }
        for (size_t k = 0; p->victim_queue_ok && k < n; k++)
            if (ok[k] &&
                !p->victim_queue_ok(hs->h[i].st, preemptor, qs[k], reclaim))
                ok[k] = false;
    }
}

int mu_ssn_victim_queue_rank(struct mu_ssn *s, const struct mu_task *preemptor,
                             const struct mu_cqueue *q)
{
    const struct mu_hooks *hs = HOOKS(s, MU_HOOK_RECLAIMABLE);
    int r = 0;

    for (int i = 0; i < hs->n; i++)
        if (hs->h[i].p->victim_queue_rank)
            r += hs->h[i].p->victim_queue_rank(hs->h[i].st, preemptor, q);
    return r;
}

bool mu_ssn_fits(const struct mu_ssn *s, const struct mu_task *t,
                 const struct mu_cnode *n, bool future, struct mu_fit *fit)
{
    const struct mu_res *req = &t->pod.req;
    uint32_t set = req->set;

    for (int d = 0; set; d++, set >>= 1) {
        int64_t have;

        if (!(set & 1u) || d == MU_RES_PODS || req->v[d] <= 0)
            continue;
        /* an extended resource DRA serves where the node has none */
        if ((t->dd_ext_dims >> d & 1u) &&
            !mu_res_has(&n->spec.allocatable, d))
            continue;
        have = future ? mu_node_future_idle(n, d) : n->idle.v[d];
        if (req->v[d] > have) {
            if (fit) {
                fit->code = MU_FIT_RESOURCE;
                fit->dim = d;
            }
            return false;
        }
    }
    if (mu_res_has(&n->spec.allocatable, MU_RES_PODS)) {
        int64_t pods = n->used.v[MU_RES_PODS] + n->pipelined.v[MU_RES_PODS];

        if (future)
            pods -= n->releasing.v[MU_RES_PODS];
        if (pods + 1 > n->spec.allocatable.v[MU_RES_PODS]) {
            if (fit) {
                fit->code = MU_FIT_PODS;
                fit->dim = MU_RES_PODS;
            }
            return false;
        }
    }
    if (t->dd && !(t->dd_one ? mu_devices_fit_one(&s->cluster->dev,
                                                  t->dd_one, n->devs,
                                                  n->spec.meta.name, future)
                             : mu_devices_fit(&s->cluster->dev, t->dd, n->devs,
                                              n->spec.meta.name,
                                              n->spec.allocatable.set,
                                              future))) {
        if (fit) {
            fit->code = MU_FIT_DEVICES;
            fit->dim = -1;
        }
        return false;
    }
    return true;
}

void mu_ssn_add_bind(struct mu_ssn *s, struct mu_task *t)
{
    mu_xgrow((void **)&s->binds, &s->cap_binds, s->nbinds + 1,
             sizeof(*s->binds));
    s->binds[s->nbinds++] = t;
}

void mu_ssn_wake_at(struct mu_ssn *s, int64_t ms)
{
    if (ms > s->now_ms && ms < s->wake_ms)
        s->wake_ms = ms;
}

void mu_ssn_add_evict(struct mu_ssn *s, struct mu_task *victim,
                      const struct mu_job *for_job, const char *action)
{
    mu_xgrow((void **)&s->evicts, &s->cap_evicts, s->nevicts + 1,
             sizeof(*s->evicts));
    s->evicts[s->nevicts].victim = victim;
    s->evicts[s->nevicts].for_job = for_job;
    s->evicts[s->nevicts].action = action;
    s->nevicts++;
}
