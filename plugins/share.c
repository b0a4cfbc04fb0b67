/*
 * share.c - helpers of proportion and capacity (share.h).
 */
#include "share.h"

#include <stdio.h>
#include <string.h>

#include "api/times.h"

void mu_share_gang_need(const struct mu_job *j, struct mu_res *need)
{
    int lack = j->pg.min_member - (mu_job_ready_num(j) + mu_job_waiting_num(j));

    mu_res_zero(need);
    lack = MU_MAX(lack, 1);
    if (!j->count[MU_TASK_PENDING])
        return; /* none to read */
    if ((size_t)j->count[MU_TASK_PENDING] == j->ntasks && !j->gated_others &&
        (size_t)lack >= j->ntasks) {
        *need = *mu_job_req_sum(j); /* every task's */
        return;
    }
    for (size_t k = 0; k < j->ntasks && lack > 0; k++) {
        const struct mu_task *t = j->tasks[k];

        if (t->status != MU_TASK_PENDING || mu_task_gated_by_others(t))
            continue;
        mu_res_add(need, t->qreq);
        lack--;
    }
}

void mu_share_figures(const struct mu_cluster *c, int d, int64_t allocated,
                      int64_t x, const char *what, const char *label,
                      int64_t limit, struct mu_sb *why)
{
    const char *name = c->rn.name[d];
    char a[32], r[32], l[32];

    /* "allocated %s + %s %s > %s%s", without a printf */
    mu_sb_add(why, "allocated ");
    mu_sb_add(why, mu_quantity_format(name, allocated, a, sizeof(a)));
    mu_sb_add(why, " + ");
    mu_sb_add(why, mu_quantity_format(name, x, r, sizeof(r)));
    mu_sb_add(why, " ");
    mu_sb_add(why, what);
    mu_sb_add(why, " > ");
    mu_sb_add(why, label);
    mu_sb_add(why, mu_quantity_format(name, limit, l, sizeof(l)));
}

int64_t mu_share_arg_duration(struct mu_ssn *ssn,
                              const struct mu_plugin_opt *opt,
                              const char *key, const char *def)
{
    const char *v = mu_conf_arg_str(ssn->conf, opt, key, def);
    struct mu_err err;
    int64_t ms = 0;

    if (!mu_duration_parse(v, &ms, &err) && ms >= 0)
        return ms;
    if (ms < 0)
        snprintf(err.msg, sizeof(err.msg), "must not be negative");
    mu_conf_arg_warn(ssn->conf, opt, "argument %s: %s; using %s", key,
                     err.msg, def);
    (void)mu_duration_parse(def, &ms, NULL);
    return ms;
}

const struct mu_res *mu_share_need_of(struct mu_share_need *c,
                                      const struct mu_job *j)
{
    int at[3] = {mu_job_ready_num(j), mu_job_waiting_num(j),
                 j->count[MU_TASK_PENDING]};

    if (c->job != j || memcmp(c->at, at, sizeof(at))) {
        mu_share_gang_need(j, &c->need);
        c->job = j;
        memcpy(c->at, at, sizeof(at));
    }
    return &c->need;
}

bool mu_share_held_back(struct mu_ssn *ssn, const struct mu_job *j,
                        int64_t again_ms, const char *arg, struct mu_sb *why)
{
    if (!j->reclaimed || again_ms <= 0 ||
        ssn->now_ms - j->reclaimed_ms >= again_ms)
        return false;
    mu_ssn_wake_at(ssn, j->reclaimed_ms + again_ms);
    /* no figure that moves with the clock: the condition would be written
     * again at every cycle */
    if (why)
        mu_sb_addf(why, "gang %s was evicted by reclaim less than %llds ago "
                        "(%s); it may not reclaim for itself before that",
                   j->key, (long long)(again_ms / 1000), arg);
    return true;
}
