#include "sched/actions/actions.h"

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

    (void)p;
    node_max(s->cluster, &max);
    mu_qset_build(s, pending, &qs);

    while ((e = mu_qset_next(s, &qs))) {
        struct mu_job *j = e->jobs[e->head++];
        struct mu_sb why;

        mu_sb_init(&why);
        if (never_fits(s, j, &max, &why)) {
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
    mu_qset_free(&qs);
}
