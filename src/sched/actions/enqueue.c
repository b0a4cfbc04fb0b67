#include "sched/actions/actions.h"

#include <limits.h>

static bool pending(struct mu_ssn *s, struct mu_job *j)
{
    (void)s;
    return j->phase == MU_PG_PENDING || j->phase == MU_PG_NONE;
}

/* The most of each resource one node has (its allocatable, with its DRA
 * devices under their quota names), over every node of the cluster. */
static void node_max(const struct mu_cluster *c, struct mu_res *max)
{
    mu_res_zero(max);
    for (size_t i = 0; i < c->nnodes; i++) {
        struct mu_res r = c->nodes[i]->spec.allocatable;

        mu_res_add(&r, &c->nodes[i]->devq);
        /* and, at most, every device not bound to one node */
        mu_res_add(&r, &c->dev_unbound_q);
        mu_res_max(max, &r);
    }
}

static const char *qty(const struct mu_cluster *c, int d,
                       const struct mu_res *r, char *buf, size_t n)
{
    return mu_quantity_format(c->rn.name[d], mu_res_get(r, d), buf, n);
}

/*
 * True, with the reason in why, when j could not run even on empty nodes:
 * so many of its pending pods ask more of a resource than any node has
 * that fewer than minMember are left, or its minResources ask more than
 * its queue's capability (read as proportion reads it). Such a job is not
 * admitted: admitted, it would hold its queue's room for ever (issue 12).
 * The numbers are today's nodes': a node that joins is counted at the next
 * cycle. A gang that only needs more than all nodes have together keeps
 * the placement's reason (the book's lab B: "gang needs ... free in the
 * cluster ...", with both numbers), since adding a node is how it runs.
 */
static bool never_fits(const struct mu_ssn *s, const struct mu_job *j,
                       const struct mu_res *max, struct mu_sb *why)
{
    const struct mu_cluster *c = s->cluster;
    const struct mu_task *first = NULL;
    struct mu_res cap;
    char a[32], b[32];
    int d = -1, fd = -1, could = 0;

    /* enough pods that fit some node for minMember: a pod beyond it that
     * never fits does not keep the others from running */
    for (size_t i = 0; i < j->ntasks; i++) {
        const struct mu_task *t = j->tasks[i];

        if (t->status == MU_TASK_PENDING &&
            (d = mu_res_first_short(&t->pod.req, max, false)) >= 0) {
            if (!first) {
                first = t;
                fd = d;
            }
            continue;
        }
        could++;
    }
    if (first && could < j->pg.min_member) {
        mu_sb_addf(why, "can never run on this cluster's nodes: pod %s asks "
                        "%s %s, the most any node has is %s",
                   first->key, qty(c, fd, &first->pod.req, a, sizeof(a)),
                   c->rn.name[fd], qty(c, fd, max, b, sizeof(b)));
        return true;
    }
    if (!j->pg.has_min_resources || !j->queue)
        return false;
    /* the queue's capability as proportion reads it: cpu or memory <= 0
     * is unlimited (Volcano) */
    cap = j->queue->spec.capability;
    for (int k = 0; k < MU_RES_MAX; k++)
        if ((k == MU_RES_CPU || k == MU_RES_MEMORY) && mu_res_has(&cap, k) &&
            mu_res_get(&cap, k) <= 0)
            cap.set &= ~(1u << k);
    if ((d = mu_res_first_short(&j->pg.min_resources, &cap, true)) >= 0) {
        mu_sb_addf(why, "can never run in queue %s: its minResources ask %s "
                        "%s, the queue's capability is %s",
                   j->queue->spec.meta.name,
                   qty(c, d, &j->pg.min_resources, a, sizeof(a)),
                   c->rn.name[d], qty(c, d, &cap, b, sizeof(b)));
        return true;
    }
    return false;
}

/* Every domain's nodes' allocatable, summed (built on first use). */
struct domcaps {
    bool built;
    struct mu_res *cap;
};

static const struct mu_res *dom_caps(const struct mu_cluster *c,
                                     struct domcaps *dc)
{
    const struct mu_topo *t = c->topo;

    if (dc->built)
        return dc->cap;
    dc->built = true;
    dc->cap = mu_xcalloc(t->ndom ? t->ndom : 1, sizeof(*dc->cap));
    for (size_t k = 0; k < t->ndom; k++)
        for (size_t i = 0; i < t->dom[k].n; i++)
        {
            const struct mu_cnode *n = c->nodes[t->dom[k].nodes[i]];

            mu_res_add(&dc->cap[k], &n->spec.allocatable);
            mu_res_add(&dc->cap[k], &n->devq); /* DRA devices by quota */
        }
    for (size_t k = 0; k < t->ndom; k++) /* at most, every unbound one */
        mu_res_add(&dc->cap[k], &c->dev_unbound_q);
    return dc->cap;
}

/*
 * True, with the reason in why, when j asks networkTopology hard and no
 * domain of the tiers it allows could hold its first minMember pending
 * pods even empty (or there is no such domain): admitted, it would wait
 * for ever. A gang whose pods are placed already is not judged here.
 */
static bool topo_never_fits(const struct mu_ssn *s, const struct mu_job *j,
                            struct domcaps *dc, struct mu_sb *why)
{
    const struct mu_cluster *c = s->cluster;
    const struct mu_topo *t = c->topo;
    const struct mu_res *caps;
    struct mu_res need;
    int limit, pods = 0, n = 0;

    if (j->pg.topo.mode != MU_TOPO_HARD || mu_job_ready_num(j) > 0)
        return false;
    limit = mu_topo_tier_limit(t, &j->pg.topo);
    if (limit < 0) {
        mu_sb_addf(why, "networkTopology hard: highestTierName %s names no "
                        "tier of this cluster's HyperNodes",
                   j->pg.topo.highest_tier_name);
        return true;
    }
    mu_res_zero(&need);
    for (size_t i = 0; i < j->ntasks && pods < j->pg.min_member; i++)
        if (j->tasks[i]->status == MU_TASK_PENDING) {
            mu_res_add(&need, &j->tasks[i]->pod.req);
            pods++;
        }
    need.set &= ~(1u << MU_RES_PODS);
    caps = t && t->ndom ? dom_caps(c, dc) : NULL;
    for (size_t k = 0; caps && k < t->ndom && t->dom[k].tier <= limit; k++) {
        if (mu_res_first_short(&need, &caps[k], false) < 0)
            return false;
        n++;
    }
    if (!n) {
        mu_sb_addf(why, "networkTopology hard: no HyperNode of tier ");
        if (limit == INT_MAX)
            mu_sb_add(why, "any");
        else
            mu_sb_addf(why, "%d or below", limit);
        mu_sb_add(why, t && t->ndom ? " exists"
                                    : " exists (the cluster has no "
                                      "HyperNodes and the scheduler "
                                      "configuration no hyperNodeTiers)");
        return true;
    }
    mu_sb_addf(why, "can never run in one HyperNode of tier %s%d "
                    "(networkTopology hard): ",
               limit == INT_MAX ? "" : "<= ",
               limit == INT_MAX ? t->dom[t->ndom - 1].tier : limit);
    /* a dimension no such domain has enough of, with the most one has */
    for (int d = 0; d < MU_RES_MAX; d++) {
        int64_t most = -1;
        size_t at = 0;

        if (!mu_res_has(&need, d) || need.v[d] <= 0)
            continue;
        for (size_t k = 0; k < t->ndom && t->dom[k].tier <= limit; k++) {
            int64_t v = mu_res_has(&caps[k], d) ? caps[k].v[d] : 0;

            if (v > most) {
                most = v;
                at = k;
            }
        }
        if (most < need.v[d]) {
            char a[32], b[32];
            struct mu_res m;

            mu_res_zero(&m);
            mu_res_put(&m, d, most);
            mu_sb_addf(why, "its %d pods ask %s %s, the most any such "
                            "HyperNode has is %s (%s)",
                       pods, qty(c, d, &need, a, sizeof(a)), c->rn.name[d],
                       qty(c, d, &m, b, sizeof(b)), t->dom[at].name);
            return true;
        }
    }
    mu_sb_addf(why, "its %d pods ask ", pods);
    mu_res_format(&need, &c->rn, false, why);
    mu_sb_add(why, " and no such HyperNode has all of it at once");
    return true;
}

/*
 * Pending jobs are admitted queue by queue, best queue first; a refused job
 * does not block its queue (volcano-api.md §7.1), and a job that could
 * never run is refused (never_fits).
 */
void mu_action_enqueue(struct mu_ssn *s, struct mu_place *p)
{
    struct mu_qset qs;
    struct mu_qlist *e;
    struct mu_res max;
    struct domcaps dc = {false, NULL};

    (void)p;
    node_max(s->cluster, &max);
    mu_qset_build(s, pending, &qs);

    while ((e = mu_qset_next(s, &qs))) {
        struct mu_job *j = e->jobs[e->head++];
        struct mu_sb why;

        mu_sb_init(&why);
        if (never_fits(s, j, &max, &why) ||
            topo_never_fits(s, j, &dc, &why)) {
            mu_why_set(j, MU_WHY_ENQUEUE, why.buf);
        } else if (!j->pg.has_min_resources ||
                   mu_ssn_job_enqueueable(s, j, &why)) {
            mu_ssn_job_enqueued(s, j);
            j->phase = MU_PG_INQUEUE;
            j->inqueue_since_ms = s->now_ms;
        } else {
            mu_why_set(j, MU_WHY_ENQUEUE, why.buf ? why.buf : "");
        }
        mu_sb_release(&why);
    }
    free(dc.cap);
    mu_qset_free(&qs);
}
