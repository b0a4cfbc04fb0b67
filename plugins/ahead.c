/*
 * ahead.c - the jobs admitted ahead of a refused one (ahead.h).
 */
#include "ahead.h"

#include <string.h>

void mu_ahead_init(struct mu_ahead *a)
{
    memset(a, 0, sizeof(*a));
}

void mu_ahead_add(struct mu_ahead *a, const struct mu_job *j,
                  const struct mu_res *h)
{
    for (int d = 0; d < MU_RES_MAX; d++) {
        if (d == MU_RES_PODS || !mu_res_has(h, d) || h->v[d] <= 0)
            continue;
        if (a->n[d] < MU_AHEAD_NAMED) {
            a->named[d][a->n[d]] = j;
            a->held[d][a->n[d]] = h->v[d];
        }
        a->n[d]++;
    }
}

void mu_ahead_why(const struct mu_ahead *a, const struct mu_cluster *c, int d,
                  struct mu_sb *why)
{
    size_t named;

    if (d < 0 || d >= MU_RES_MAX || !a->n[d])
        return;
    named = a->n[d] < MU_AHEAD_NAMED ? a->n[d] : MU_AHEAD_NAMED;
    mu_sb_add(why, "; admitted ahead of it and waiting for room: ");
    for (size_t i = 0; i < named; i++) {
        char q[32];

        mu_sb_addf(why, "%s%s (%s %s)", i ? ", " : "", a->named[d][i]->key,
                   mu_quantity_format(c->rn.name[d], a->held[d][i], q,
                                      sizeof(q)),
                   c->rn.name[d]);
    }
    if (a->n[d] > named)
        mu_sb_addf(why, " and %zu more", a->n[d] - named);
}
