/*
 * qtree.c - the queue tree from spec.parent (qtree.h).
 */
#include "sched/qtree.h"

#include <stdlib.h>
#include <string.h>

/* The index of q's parent: -1 for the root and under an imagined root,
 * -2 when spec.parent names no queue. */
static int parent_of(const struct mu_cluster *c, const struct mu_qtree *t,
                     const struct mu_cqueue *q)
{
    const char *p = q->spec.parent;
    const struct mu_cqueue *pq;

    if (!strcmp(q->spec.meta.name, MU_QTREE_ROOT))
        return -1;
    if (!p || !*p || !strcmp(p, MU_QTREE_ROOT))
        return t->root;
    pq = mu_cluster_queue(c, p);
    return pq ? pq->index : -2;
}

/* Marks path[from .. to) (children first) as below the broken queue at. */
static void mark_below(struct mu_qtree *t, const int *path, int from, int to,
                       int at)
{
    for (int k = from; k < to; k++) {
        t->fault[path[k]] = MU_QTREE_BELOW;
        t->fault_at[path[k]] = at;
    }
}

int mu_qtree_build(struct mu_qtree *t, const struct mu_cluster *c)
{
    size_t n = c->nqueues;
    const struct mu_cqueue *r = mu_cluster_queue(c, MU_QTREE_ROOT);
    unsigned char *state;
    int *path;

    memset(t, 0, sizeof(*t));
    t->n = n;
    t->root = r ? r->index : -1;
    t->parent = mu_xcalloc(n + 1, sizeof(*t->parent));
    t->depth = mu_xcalloc(n + 1, sizeof(*t->depth));
    t->nchildren = mu_xcalloc(n + 1, sizeof(*t->nchildren));
    t->fault = mu_xcalloc(n + 1, sizeof(*t->fault));
    t->fault_at = mu_xcalloc(n + 1, sizeof(*t->fault_at));
    t->order = mu_xcalloc(n + 1, sizeof(*t->order));
    state = mu_xcalloc(n + 1, 1); /* 0 new, 1 on the path, 2 done */
    path = mu_xcalloc(n + 1, sizeof(*path));
    for (size_t i = 0; i < n; i++)
        t->parent[i] = parent_of(c, t, c->queues[i]);
    for (size_t i = 0; i < n; i++) {
        int np = 0, k = (int)i;

        /* up from i while the queues are new: path[0] = i, ... */
        while (k >= 0 && state[k] == 0) {
            state[k] = 1;
            path[np++] = k;
            k = t->parent[k];
        }
        if (k >= 0 && state[k] == 1) { /* came round to k: a cycle */
            int from = 0;

            while (path[from] != k)
                from++;
            for (int m = from; m < np; m++) {
                t->fault[path[m]] = MU_QTREE_CYCLE;
                t->fault_at[path[m]] = k;
            }
            mark_below(t, path, 0, from, k);
        } else if (k == -2) { /* the last one's parent does not exist */
            t->fault[path[np - 1]] = MU_QTREE_NO_PARENT;
            t->fault_at[path[np - 1]] = path[np - 1];
            mark_below(t, path, 0, np - 1, path[np - 1]);
        } else if (k >= 0 && t->fault[k]) { /* below a broken one */
            mark_below(t, path, 0, np, t->fault_at[k]);
        } else { /* down from the root or a done queue */
            int d = k >= 0 ? t->depth[k] : 0;

            for (int m = np; m-- > 0;) {
                int q = path[m];

                t->depth[q] = q == t->root ? 0 : ++d;
            }
        }
        for (int m = 0; m < np; m++)
            state[path[m]] = 2;
    }
    for (size_t i = 0; i < n; i++) {
        if (t->fault[i]) {
            t->parent[i] = -1;
            t->depth[i] = 1;
        }
        if (t->parent[i] >= 0)
            t->nchildren[t->parent[i]]++;
        if (t->depth[i] > t->maxdepth)
            t->maxdepth = t->depth[i];
    }
    /* order: by depth, then index (a counting sort, stable) */
    {
        int *at = mu_xcalloc((size_t)t->maxdepth + 2, sizeof(*at));

        for (size_t i = 0; i < n; i++)
            at[t->depth[i] + 1]++;
        for (int d = 1; d <= t->maxdepth + 1; d++)
            at[d] += at[d - 1];
        for (size_t i = 0; i < n; i++)
            t->order[at[t->depth[i]]++] = (int)i;
        free(at);
    }
    free(state);
    free(path);
    return 0;
}

void mu_qtree_free(struct mu_qtree *t)
{
    free(t->parent);
    free(t->depth);
    free(t->nchildren);
    free(t->fault);
    free(t->fault_at);
    free(t->order);
    memset(t, 0, sizeof(*t));
}

int mu_qtree_meet(const struct mu_qtree *t, int a, int b)
{
    if (a < 0 || b < 0)
        return 0;
    while (t->depth[a] > t->depth[b])
        a = t->parent[a];
    while (t->depth[b] > t->depth[a])
        b = t->parent[b];
    while (a != b && a >= 0 && b >= 0) {
        a = t->parent[a];
        b = t->parent[b];
    }
    return a >= 0 && a == b ? t->depth[a] : 0;
}

void mu_qtree_rollup(const struct mu_qtree *t, const struct mu_cluster *c,
                     struct mu_res *out)
{
    for (size_t i = 0; i < t->n; i++)
        out[i] = c->queues[i]->allocated;
    for (size_t k = t->n; k-- > 0;) { /* children before their parents */
        int i = t->order[k];

        if (t->parent[i] >= 0)
            mu_res_add(&out[t->parent[i]], &out[i]);
    }
}

bool mu_qtree_fault_why(const struct mu_qtree *t, const struct mu_cluster *c,
                        int i, struct mu_sb *sb)
{
    const struct mu_cqueue *q, *at;

    if (i < 0 || (size_t)i >= t->n || !t->fault[i])
        return false;
    if (!sb)
        return true;
    q = c->queues[i];
    at = c->queues[t->fault_at[i]];
    switch (t->fault[i]) {
    case MU_QTREE_NO_PARENT:
        mu_sb_addf(sb, "queue %s's parent %s does not exist",
                   q->spec.meta.name, q->spec.parent);
        break;
    case MU_QTREE_CYCLE:
        mu_sb_addf(sb, "queue %s is its own ancestor (spec.parent goes round "
                       "through queue %s)",
                   q->spec.meta.name, at->spec.meta.name);
        break;
    default:
        if (t->fault[t->fault_at[i]] == MU_QTREE_NO_PARENT)
            mu_sb_addf(sb, "queue %s is below queue %s, whose parent %s "
                           "does not exist",
                       q->spec.meta.name, at->spec.meta.name,
                       at->spec.parent);
        else
            mu_sb_addf(sb, "queue %s is below queue %s, whose parents go "
                           "round",
                       q->spec.meta.name, at->spec.meta.name);
        break;
    }
    return true;
}
