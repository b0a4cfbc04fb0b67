#include "sched/actions/topoplace.h"

#include <limits.h>

void mu_topoplace_init(struct mu_topoplace *tp, struct mu_place *p)
{
    memset(tp, 0, sizeof(*tp));
    tp->p = p;
}

void mu_topoplace_release(struct mu_topoplace *tp)
{
    free(tp->free);
    free(tp->seen);
    free(tp->seen_gen);
    for (int d = 0; d < MU_RES_MAX; d++)
        free(tp->dense[d]);
    free(tp->used);
    free(tp->seg);
    memset(tp, 0, sizeof(*tp));
}

/* What node n adds to its domains' room: its future idle, plus its DRA
 * devices by quota name not taken (a pod's plain nvidia.com/gpu may be
 * served by them, KEP-5004). */
static void node_room(const struct mu_cluster *c, const struct mu_cnode *n,
                      struct mu_res *out)
{
    mu_res_zero(out);
    for (int d = 0; d < c->rn.n && d < MU_RES_MAX; d++) {
        int64_t v = 0;
        bool has = false;

        if (mu_res_has(&n->spec.allocatable, d)) {
            v = mu_node_future_idle(n, d);
            has = true;
        }
        if (mu_res_has(&n->devq, d)) {
            /* an unallocated All claim is charged the most it could take
             * on any node: never below none left */
            v += MU_MAX(0, n->devq.v[d] - n->devused.v[d]);
            has = true;
        }
        if (has)
            mu_res_put(out, d, v);
    }
}

static void build(struct mu_topoplace *tp)
{
    const struct mu_cluster *c = tp->p->ssn->cluster;
    const struct mu_topo *t = c->topo;
    size_t nn = c->nnodes;

    tp->built = true;
    tp->dn = mu_place_domnodes(tp->p);
    tp->free = mu_xcalloc(t->ndom ? t->ndom : 1, sizeof(*tp->free));
    tp->seen = mu_xcalloc(nn ? nn : 1, sizeof(*tp->seen));
    tp->seen_gen = mu_xcalloc(nn ? nn : 1, sizeof(*tp->seen_gen));
    for (size_t i = 0; i < nn; i++) {
        node_room(c, c->nodes[i], &tp->seen[i]);
        tp->seen_gen[i] = c->nodes[i]->gen;
        for (size_t k = tp->dn->off[i]; k < tp->dn->off[i + 1]; k++)
            mu_res_add(&tp->free[tp->dn->doms[k]], &tp->seen[i]);
    }
    tp->used = mu_xcalloc(t->ndom ? t->ndom : 1, sizeof(*tp->used));
    tp->seg = mu_xcalloc(t->ndom + 1, sizeof(*tp->seg));
    for (size_t k = 0; k < t->ndom; k++)
        if (k == 0 || t->dom[k].tier != t->dom[k - 1].tier)
            tp->seg[tp->nseg++] = k;
    tp->seg[tp->nseg] = t->ndom;
    tp->dirty_pos = c->ndirty;
}

static int64_t room_in(const struct mu_res *r, int d)
{
    return mu_res_has(r, d) ? r->v[d] : 0;
}

/* The domains' free room in dimension d, one value each. */
static const int64_t *dense_of(struct mu_topoplace *tp, int d)
{
    size_t ndom = tp->p->ssn->cluster->topo->ndom;

    if (!tp->dense[d]) {
        tp->dense[d] = mu_xcalloc(ndom ? ndom : 1, sizeof(*tp->dense[d]));
        for (size_t k = 0; k < ndom; k++)
            tp->dense[d][k] = room_in(&tp->free[k], d);
        tp->dense_dim[tp->ndense++] = d;
    }
    return tp->dense[d];
}

/* Brings the domains' room up to the nodes' current state. */
static void catch_up(struct mu_topoplace *tp)
{
    const struct mu_cluster *c = tp->p->ssn->cluster;

    if (!tp->built) {
        build(tp);
        return;
    }
    for (; tp->dirty_pos < c->ndirty; tp->dirty_pos++) {
        int i = c->dirty[tp->dirty_pos];
        const struct mu_cnode *n = c->nodes[i];
        struct mu_res now;

        if (n->gen == tp->seen_gen[i])
            continue;
        node_room(c, n, &now);
        for (size_t k = tp->dn->off[i]; k < tp->dn->off[i + 1]; k++) {
            int dom = tp->dn->doms[k];

            mu_res_sub(&tp->free[dom], &tp->seen[i]);
            mu_res_add(&tp->free[dom], &now);
            for (int e = 0; e < tp->ndense; e++)
                tp->dense[tp->dense_dim[e]][dom] =
                    room_in(&tp->free[dom], tp->dense_dim[e]);
        }
        tp->seen[i] = now;
        tp->seen_gen[i] = n->gen;
    }
}

/* What j still needs to be ready (mode GANG) or for one more task (ONE):
 * the requests of its first pending tasks in task order. */
static void gang_need(const struct mu_job *j, enum mu_place_mode mode,
                      struct mu_res *need, int *pods)
{
    int lack = mode == MU_PLACE_ONE ? 1
                                    : j->pg.min_member - mu_job_ready_num(j);

    mu_res_zero(need);
    *pods = 0;
    for (size_t i = 0; i < j->ntasks && *pods < lack; i++) {
        const struct mu_task *t = j->tasks[i];

        if (t->status != MU_TASK_PENDING || mu_task_gated_by_others(t))
            continue;
        mu_res_add(need, &t->pod.req);
        (*pods)++;
    }
}

/* need's dimension the domains are packed by: its first accelerator,
 * else cpu. */
static int pack_dim(const struct mu_cluster *c, const struct mu_res *need)
{
    for (int d = 0; d < c->rn.n && d < MU_RES_MAX; d++)
        if (mu_res_has(need, d) && need->v[d] > 0 &&
            mu_resource_is_accelerator(c->rn.name[d]))
            return d;
    return MU_RES_CPU;
}

/* The dimensions need asks (pods aside: the nodes' pod counts are checked
 * when placing), into dims; returns how many. */
static int need_dims(const struct mu_res *need, int dims[MU_RES_MAX])
{
    int n = 0;

    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && mu_res_has(need, d) && need->v[d] > 0)
            dims[n++] = d;
    return n;
}

/* Does room hold need in each of its dims? */
static bool room_holds(const struct mu_res *room, const struct mu_res *need,
                       const int *dims, int nd)
{
    for (int i = 0; i < nd; i++)
        if (!mu_res_has(room, dims[i]) || room->v[dims[i]] < need->v[dims[i]])
            return false;
    return true;
}

/* How the gang's networkTopology reads, for the reason. */
static void topo_text(const struct mu_topo *t, const struct mu_job *j,
                      struct mu_sb *what)
{
    const struct mu_netopo *nt = &j->pg.topo;

    mu_sb_addf(what, "networkTopology %s",
               nt->mode == MU_TOPO_HARD ? "hard" : "soft");
    if (nt->highest_tier >= 0)
        mu_sb_addf(what, ", highestTierAllowed %d", nt->highest_tier);
    if (nt->highest_tier_name) {
        int named = t ? mu_topo_tier_named(t, nt->highest_tier_name) : -1;

        mu_sb_addf(what, ", highestTierName %s", nt->highest_tier_name);
        if (named >= 0)
            mu_sb_addf(what, " (tier %d)", named);
    }
}

/* Does domain d hold every node of placed[0..n)? */
static bool holds_placed(const struct mu_domain *d, const int *placed,
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!mu_domain_has(d, placed[i]))
            return false;
    return true;
}

/* The room of dims need asks, for the reason. */
static void room_text(const struct mu_cluster *c, const struct mu_res *room,
                      const struct mu_res *need, struct mu_sb *sb)
{
    struct mu_res r;

    mu_res_zero(&r);
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && mu_res_has(need, d) && need->v[d] > 0)
            mu_res_put(&r, d, mu_res_has(room, d) ? room->v[d] : 0);
    mu_res_format(&r, &c->rn, true, sb);
}

struct outcome {
    size_t ncand;      /* domains within the tier limit holding its pods */
    int best;          /* of them, the most room on the pack dim, or -1 */
    int tried;         /* had the room and were tried */
    int first_tried;   /* the first of those, or -1 */
};

static void why_topology(struct mu_topoplace *tp, struct mu_job *j,
                         const char *what, int limit,
                         const struct mu_res *need, int pods,
                         const struct outcome *o, bool placed)
{
    const struct mu_cluster *c = tp->p->ssn->cluster;
    const struct mu_topo *t = c->topo;
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_addf(&sb, "%s: ", what);
    if (limit < 0) {
        mu_sb_add(&sb, "no tier has that name");
    } else if (!o->ncand) {
        if (limit == INT_MAX)
            mu_sb_add(&sb, "no HyperNode");
        else
            mu_sb_addf(&sb, "no HyperNode of tier %d or below", limit);
        if (placed)
            mu_sb_add(&sb, " holds the nodes its placed pods are on");
        else if (!t || !t->ndom)
            mu_sb_add(&sb, " (the cluster has no HyperNodes and the "
                           "scheduler configuration no hyperNodeTiers)");
        else
            mu_sb_add(&sb, " exists");
    } else if (o->tried) {
        const struct mu_domain *d = &t->dom[o->first_tried];

        mu_sb_addf(&sb, "%d HyperNode(s) of the room asked (", o->tried);
        room_text(c, need, need, &sb);
        mu_sb_addf(&sb, " for %d pods) were tried and its pods fit none "
                        "node by node; the first, %s (tier %d), has ",
                   pods, d->name, d->tier);
        room_text(c, &tp->free[o->first_tried], need, &sb);
        mu_sb_add(&sb, " free");
    } else {
        const struct mu_domain *d = &t->dom[o->best];

        mu_sb_addf(&sb, "no HyperNode of tier %s%d has room for the gang (",
                   limit == INT_MAX ? "" : "<= ",
                   limit == INT_MAX ? t->dom[t->ndom - 1].tier : limit);
        room_text(c, need, need, &sb);
        mu_sb_addf(&sb, " for %d pods); the most free, %s (tier %d, %zu "
                        "node%s), has ",
                   pods, d->name, d->tier, d->n, d->n == 1 ? "" : "s");
        room_text(c, &tp->free[o->best], need, &sb);
        mu_sb_add(&sb, " free");
    }
    mu_why_set(j, MU_WHY_TOPOLOGY, sb.buf);
    mu_sb_release(&sb);
}

/* Domains tried or looked at for the current gang: stamped, so nothing
 * is cleared between gangs. */
static bool is_used(const struct mu_topoplace *tp, int k)
{
    return tp->used[k] == tp->stamp;
}

/* The next domain to try in [lo, hi) (one tier, by name): the least room
 * on the pack dimension that still holds want, the first by name on a
 * tie; -1 when none. O(hi - lo) over one array. */
static int best_fit(const struct mu_topoplace *tp, const int64_t *room,
                    size_t lo, size_t hi, int64_t want)
{
    int best = -1;

    for (size_t k = lo; k < hi; k++)
        if (room[k] >= want && !is_used(tp, (int)k) &&
            (best < 0 || room[k] < room[best]))
            best = (int)k;
    return best;
}

/* For the reason: the domains within the limit holding the placed pods,
 * and the one with the most room on the pack dimension. */
static void survey(const struct mu_topo *t, int limit, const int64_t *room, const int *placed_on,
                   size_t nplaced, struct outcome *o)
{
    int64_t best = -1;

    for (size_t k = 0; k < t->ndom && t->dom[k].tier <= limit; k++) {
        if (nplaced && !holds_placed(&t->dom[k], placed_on, nplaced))
            continue;
        o->ncand++;
        if (room[k] > best) {
            o->best = (int)k;
            best = room[k];
        }
    }
}

int mu_topoplace_job(struct mu_topoplace *tp, struct mu_job *j,
                     enum mu_place_mode mode)
{
    struct mu_place *p = tp->p;
    struct mu_ssn *s = p->ssn;
    const struct mu_cluster *c = s->cluster;
    const struct mu_topo *t = c->topo;
    struct outcome o = {0, -1, 0, -1};
    const int64_t *room = NULL;
    int *placed_on = NULL;
    size_t nplaced = 0;
    struct mu_res need;
    int dims[MU_RES_MAX];
    int limit, pods, pd, nd, placed = 0, looked = 0, skip = j->topo_skip;
    bool done = false;

    limit = mu_topo_tier_limit(t, &j->pg.topo);
    gang_need(j, mode, &need, &pods);
    pd = pack_dim(c, &need);
    nd = need_dims(&need, dims);
    if (t && t->ndom && limit >= 0) {
        catch_up(tp);
        room = dense_of(tp, pd);
        if (++tp->stamp == 0) { /* wrapped: every stamp is stale */
            memset(tp->used, 0, t->ndom * sizeof(*tp->used));
            tp->stamp = 1;
        }
        placed_on = mu_xcalloc(j->ntasks ? j->ntasks : 1, sizeof(*placed_on));
        for (size_t i = 0; i < j->ntasks; i++)
            if (j->tasks[i]->node && j->tasks[i]->status != MU_TASK_PENDING)
                placed_on[nplaced++] = j->tasks[i]->node->index;
    }
    /* tier by tier, nearest first; in each, best fit first */
    for (size_t seg = 0; room && seg < tp->nseg && !done; seg++) {
        size_t lo = tp->seg[seg], hi = tp->seg[seg + 1];
        int k;

        if (t->dom[lo].tier > limit)
            break;
        while (!done && o.tried < MU_TOPO_MAX_TRIES &&
               looked < MU_TOPO_MAX_LOOKS &&
               (k = best_fit(tp, room, lo, hi, need.v[pd])) >= 0) {
            size_t mark = mu_stmt_mark(&s->stmt);

            tp->used[k] = tp->stamp;
            looked++;
            if ((nplaced && !holds_placed(&t->dom[k], placed_on, nplaced)) ||
                !room_holds(&tp->free[k], &need, dims, nd))
                continue;
            if (skip > 0) { /* tried at the last cycle, the cap hit */
                skip--;
                looked--;
                continue;
            }
            if (o.first_tried < 0)
                o.first_tried = k;
            o.tried++;
            p->only = &t->dom[k];
            placed = mu_place_job(p, j, mode, 0);
            p->only = NULL;
            if (mode == MU_PLACE_ONE ? placed > 0
                                     : mu_ssn_job_ready(s, j) ||
                                           mu_ssn_job_pipelined(s, j)) {
                done = true;
            } else {
                mu_place_rollback(p, mark);
                placed = 0;
                if (j->why.kind == MU_WHY_QUEUE_SHARE)
                    goto out; /* the queue, not the domain, stops it */
            }
        }
    }
out:
    /* the cap stopped it: the next cycle goes on past what it tried;
     * otherwise it starts from the best again */
    j->topo_skip = !done && o.tried >= MU_TOPO_MAX_TRIES
                       ? j->topo_skip + o.tried
                       : 0;
    if (!done && j->pg.topo.mode == MU_TOPO_SOFT) {
        mu_why_reset(j);
        placed = mu_place_job(p, j, mode, 0);
    } else if (!done && j->why.kind != MU_WHY_QUEUE_SHARE) {
        struct mu_sb what;

        if (room)
            survey(t, limit, room, placed_on, nplaced, &o);
        mu_sb_init(&what);
        topo_text(t, j, &what);
        why_topology(tp, j, what.buf, limit, &need, pods, &o, nplaced > 0);
        mu_sb_release(&what);
    }
    free(placed_on);
    return placed;
}
