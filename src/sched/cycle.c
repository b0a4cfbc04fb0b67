#include "sched/cycle.h"
#include "sched/cluster_dra.h"
#include "sched/topology.h"

#include "sched/actions/actions.h"

/* Free resources, computed once per close for the why-pending text. */
struct freestat {
    struct mu_res total;
    struct mu_res best;
    const struct mu_cnode *best_node[MU_RES_MAX];
    int releasing; /* tasks terminating in the cluster (releasing_fill) */
};

static void freestat_fill(const struct mu_cluster *c, struct freestat *f)
{
    mu_res_zero(&f->total);
    mu_res_zero(&f->best);
    memset(f->best_node, 0, sizeof(f->best_node));
    for (size_t i = 0; i < c->nnodes; i++) {
        const struct mu_cnode *n = c->nodes[i];

        if (n->spec.unschedulable)
            continue;
        for (int d = 0; d < c->rn.n; d++) {
            int64_t v = n->idle.v[d];

            if (v <= 0)
                continue;
            f->total.v[d] = mu_add_sat(f->total.v[d], v);
            f->total.set |= 1u << d;
            if (!f->best_node[d] || v > f->best.v[d]) {
                f->best.v[d] = v;
                f->best.set |= 1u << d;
                f->best_node[d] = n;
            }
        }
    }
}

/* Counted once per close, not once per waiting job: with thousands of
 * evictions the per-job walk over every node's tasks was quadratic. */
static void releasing_fill(const struct mu_cluster *c, struct freestat *f)
{
    int rel = 0;

    for (size_t i = 0; i < c->nnodes; i++)
        for (size_t k = 0; k < c->nodes[i]->ntasks; k++)
            rel += c->nodes[i]->tasks[k]->status == MU_TASK_RELEASING;
    f->releasing = rel;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "0/3 nodes are unavailable: 1 Insufficient nvidia.com/gpu, 2 node(s)
 * didn't match Pod's node affinity/selector." */
static void fit_text(const struct mu_cluster *c, const struct mu_fit_hist *h,
                     struct mu_sb *sb)
{
    char *items[MU_RES_MAX + MU_FIT__COUNT];
    int n = 0;
    static const char *const what[MU_FIT__COUNT] = {
        [MU_FIT_PODS] = "node(s) pod number exceeded",
        [MU_FIT_SELECTOR] = "node(s) didn't match Pod's node affinity/selector",
        [MU_FIT_TAINT] = "node(s) had untolerated taint",
        [MU_FIT_UNSCHEDULABLE] = "node(s) were unschedulable",
        [MU_FIT_DEVICES] = "cannot allocate all claims",
    };

    for (int d = 0; d < c->rn.n; d++)
        if (h->res[d])
            items[n++] = mu_xasprintf("%d Insufficient %s", h->res[d],
                                      c->rn.name[d]);
    for (int k = MU_FIT_PODS; k < MU_FIT__COUNT; k++)
        if (h->code[k])
            items[n++] = mu_xasprintf("%d %s", h->code[k], what[k]);
    qsort(items, (size_t)n, sizeof(*items), str_cmp);
    mu_sb_addf(sb, "0/%d nodes are unavailable", h->nodes);
    for (int i = 0; i < n; i++) {
        mu_sb_addf(sb, "%s%s", i ? ", " : ": ", items[i]);
        free(items[i]);
    }
    mu_sb_add(sb, ".");
}

/* The devices the failing pod's claims need and what is free, or why its
 * claims cannot be planned at all. */
static void devices_text(const struct mu_cluster *c, const struct mu_task *t,
                         int pods, struct mu_sb *sb)
{
    struct mu_devfree f;

    if (!t || !t->dd)
        return;
    if (t->dd->why) {
        mu_sb_addf(sb, "; pod %s: %s", t->pod.meta.name, t->dd->why);
        return;
    }
    mu_devices_free_count(&c->dev, t->dd, &f);
    if (!f.class_name)
        return;
    mu_sb_add(sb, "; ");
    mu_devfree_text(&f, pods, sb);
}

static void nodes_text(const struct mu_cluster *c, const struct mu_job *j,
                       const struct freestat *f, struct mu_sb *sb)
{
    struct mu_res need, fr, best;
    int want = j->pg.min_member - mu_job_ready_num(j), pods = 0;
    const struct mu_cnode *bn = NULL;

    mu_res_zero(&need);
    for (size_t i = 0; i < j->ntasks && pods < want; i++) {
        if (j->tasks[i]->status != MU_TASK_PENDING)
            continue;
        mu_res_add(&need, &j->tasks[i]->pod.req);
        pods++;
    }
    need.v[MU_RES_PODS] = 0;
    need.set &= ~(1u << MU_RES_PODS);
    mu_res_zero(&fr);
    mu_res_zero(&best);
    for (int d = 0; d < MU_RES_MAX; d++) {
        if (!need.v[d])
            continue;
        mu_res_put(&fr, d, f->total.v[d]);
        mu_res_put(&best, d, f->best.v[d]);
    }
    if (j->why.task && j->why.hist.res[0] >= 0) {
        for (int d = 0; d < MU_RES_MAX && !bn; d++)
            if (j->why.hist.res[d] && f->best_node[d])
                bn = f->best_node[d];
    }
    mu_sb_addf(sb, "gang needs %d more pod%s with ", pods, pods == 1 ? "" : "s");
    mu_res_format(&need, &c->rn, false, sb);
    mu_sb_add(sb, "; free in the cluster ");
    mu_res_format(&fr, &c->rn, true, sb);
    mu_sb_add(sb, ", at most ");
    mu_res_format(&best, &c->rn, true, sb);
    mu_sb_add(sb, " on one node");
    if (bn)
        mu_sb_addf(sb, " (%s)", bn->spec.meta.name);
    if (j->why.hist.code[MU_FIT_DEVICES])
        devices_text(c, j->why.task, pods, sb);
    if (j->why.task) {
        mu_sb_addf(sb, "; pod %s does not fit: ", j->why.task->pod.meta.name);
        fit_text(c, &j->why.hist, sb);
    }
}

static char *message(const struct mu_cluster *c, const struct mu_job *j,
                     const struct freestat *f, const char **reason)
{
    struct mu_sb sb;
    /* tasks still to place of those that exist: a PodGroup with more
     * minMember than pods says 3/3, not 5/3 (the text says the rest) */
    int n = MU_MIN(j->pg.min_member, (int)j->ntasks) - mu_job_ready_num(j);

    mu_sb_init(&sb);
    *reason = "NotEnoughResources";
    /* "%d/%zu tasks in gang unschedulable: " */
    mu_sb_addi(&sb, n < 0 ? 0 : n);
    mu_sb_add(&sb, "/");
    mu_sb_addi(&sb, (int64_t)j->ntasks);
    mu_sb_add(&sb, " tasks in gang unschedulable: ");
    switch (j->why.kind) {
    case MU_WHY_QUEUE_MISSING:
        *reason = "QueueNotFound";
        mu_sb_add(&sb, j->why.text);
        break;
    case MU_WHY_QUEUE_CLOSED:
        *reason = "QueueClosed";
        mu_sb_add(&sb, j->why.text);
        break;
    case MU_WHY_NOT_ENOUGH_TASKS:
        *reason = "NotEnoughTasks";
        mu_sb_add(&sb, j->why.text);
        break;
    case MU_WHY_ENQUEUE:
        mu_sb_add(&sb, j->why.text);
        break;
    case MU_WHY_QUEUE_SHARE:
        mu_sb_add(&sb, j->why.text);
        /* a queue held to the devices its class maps to: what they are */
        for (size_t i = 0; i < j->ntasks; i++)
            if (j->tasks[i]->status == MU_TASK_PENDING && j->tasks[i]->dd) {
                devices_text(c, j->tasks[i], n < 0 ? 0 : n, &sb);
                break;
            }
        break;
    case MU_WHY_NODES:
        nodes_text(c, j, f, &sb);
        break;
    case MU_WHY_TOPOLOGY:
        mu_sb_add(&sb, j->why.text);
        break;
    case MU_WHY_WAITING:
        mu_sb_addf(&sb, "waiting for evicted pods to terminate "
                        "(%d terminating in the cluster)", f->releasing);
        break;
    case MU_WHY_TURN:
        *reason = "WaitingForRelease";
        /* no figures that move with every bind: the condition would be
         * written again for every waiting gang at every cycle */
        mu_sb_add(&sb, "it fits; waiting its turn to be released: the gangs "
                       "ahead of it fill muster's release window (the pods "
                       "released and not yet bound, kept to the pace "
                       "kube-scheduler binds them)");
        break;
    case MU_WHY_NONE:
    default:
        mu_sb_add(&sb, "waiting for the next scheduling cycle");
        break;
    }
    if (j->why.reclaim)
        mu_sb_addf(&sb, "; reclaim waits: %s", j->why.reclaim);
    return mu_sb_detach(&sb);
}

char *mu_why_message(const struct mu_cluster *c, const struct mu_job *j,
                     const char **reason)
{
    struct freestat f;

    freestat_fill(c, &f);
    releasing_fill(c, &f);
    return message(c, j, &f, reason);
}

/* volcano-api.md §6: the phase at close. */
static enum mu_pg_phase phase_of(const struct mu_job *j, bool unschedulable)
{
    int scheduled = j->count[MU_TASK_RUNNING] + j->count[MU_TASK_BOUND] +
                    j->count[MU_TASK_FAILED] + j->count[MU_TASK_SUCCEEDED];

    if (j->count[MU_TASK_RUNNING] > 0 && unschedulable &&
        !mu_job_ready(j))
        return MU_PG_UNKNOWN;
    scheduled += j->count[MU_TASK_RELEASING];
    if (scheduled >= j->pg.min_member && scheduled > 0) {
        if (j->count[MU_TASK_FAILED] + j->count[MU_TASK_SUCCEEDED] ==
            scheduled && j->count[MU_TASK_PENDING] == 0)
            return MU_PG_COMPLETED;
        return MU_PG_RUNNING;
    }
    if (j->phase == MU_PG_INQUEUE)
        return MU_PG_INQUEUE;
    return MU_PG_PENDING;
}

static bool set_str(char **dst, const char *v)
{
    if (!mu_strcmp0(*dst, v))
        return false;
    free(*dst);
    *dst = mu_xstrdup_or_null(v);
    return true;
}

/* set_str of an owned v, kept instead of copied (freed when the same). */
static bool take_str(char **dst, char *v)
{
    if (!mu_strcmp0(*dst, v)) {
        free(v);
        return false;
    }
    free(*dst);
    *dst = v;
    return true;
}

/* Settles j's phase, counts and condition after the actions; true when
 * any changed since the cycle started (old_phase: its phase then, as
 * enqueue may have moved it meanwhile). */
static bool close_job(struct mu_cluster *c, struct mu_job *j,
                      const struct freestat *f, int64_t now,
                      enum mu_pg_phase old_phase)
{
    bool unsched, changed = false;
    int scheduled = j->count[MU_TASK_RUNNING] + j->count[MU_TASK_BOUND] +
                    j->count[MU_TASK_FAILED] + j->count[MU_TASK_SUCCEEDED] +
                    j->count[MU_TASK_RELEASING];

    if (!j->queue && j->why.kind == MU_WHY_NONE) {
        mu_why_setf(j, MU_WHY_QUEUE_MISSING, "queue \"%s\" does not exist",
                    j->pg.queue);
    } else if (j->queue && j->queue->spec.state != MU_QUEUE_OPEN &&
               !mu_job_ready(j) && j->why.kind != MU_WHY_NOT_ENOUGH_TASKS) {
        mu_why_setf(j, MU_WHY_QUEUE_CLOSED,
                    "queue %s is %s: it admits no new work",
                    j->queue->spec.meta.name,
                    mu_queue_state_name(j->queue->spec.state));
    }
    unsched = !mu_job_ready(j) && j->ntasks > 0 &&
              !(scheduled >= j->pg.min_member && !j->count[MU_TASK_PENDING]);
    if (!j->ntasks && j->pg.min_member > 0) {
        if (j->why.kind == MU_WHY_NONE)
            mu_why_setf(j, MU_WHY_NOT_ENOUGH_TASKS,
                        "Not enough valid tasks for gang-scheduling, "
                        "valid: 0, min: %d",
                        j->pg.min_member);
        unsched = true;
    }
    j->phase = phase_of(j, unsched);
    j->running = j->count[MU_TASK_RUNNING];
    j->succeeded = j->count[MU_TASK_SUCCEEDED];
    j->failed = j->count[MU_TASK_FAILED];
    if (unsched) {
        const char *reason;
        char *msg = message(c, j, f, &reason);
        bool ch = set_str(&j->cond.type, "Unschedulable");

        ch |= set_str(&j->cond.reason, reason);
        ch |= take_str(&j->cond.message, msg);
        if (ch)
            j->cond.since_ms = now;
        changed |= ch;
    } else if (mu_job_ready(j) || scheduled >= j->pg.min_member) {
        bool ch = set_str(&j->cond.type, "Scheduled");

        ch |= set_str(&j->cond.reason, "tasks in gang are ready to be scheduled");
        ch |= set_str(&j->cond.message, "");
        if (ch)
            j->cond.since_ms = now;
        changed |= ch;
    }
    return changed || old_phase != j->phase;
}

/* The action registry: enum mu_action -> its entry point. */
static void (*const actions[MU_ACT__COUNT])(struct mu_ssn *s,
                                            struct mu_place *p) = {
#define X(id, name) [MU_ACT_##id] = mu_action_##name,
    MU_ACTION_LIST(X)
#undef X
};

static void run_action(struct mu_ssn *s, struct mu_place *p,
                       enum mu_action a)
{
    if ((unsigned)a < MU_ACT__COUNT)
        actions[a](s, p);
}

int mu_cycle_run(struct mu_cluster *c, struct mu_conf *conf, int64_t now_ms,
                 struct mu_cycle_out *out)
{
    struct mu_ssn s;
    struct mu_place p;
    struct freestat f;
    size_t cap_changed = 0;

    enum mu_pg_phase *was = mu_xcalloc(c->njobs ? c->njobs : 1, sizeof(*was));

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < c->njobs; i++)
        was[i] = c->jobs[i]->phase;
    if (c->topo)
        mu_topo_sync(c->topo, c, conf);
    mu_cluster_dra_settle(c);
    mu_ssn_open(&s, c, conf, now_ms);
    mu_place_init(&p, &s);
    for (int i = 0; i < conf->nactions; i++)
        run_action(&s, &p, conf->actions[i]);
    mu_place_release(&p);
    /* promises of this cycle end with it */
    for (size_t i = 0; i < c->ntasks; i++) {
        struct mu_task *t = c->tasks[i];

        if (t->status == MU_TASK_ALLOCATED || t->status == MU_TASK_PIPELINED)
            mu_task_unplace(c, t);
    }
    mu_stmt_forget(&s.stmt, 0);
    freestat_fill(c, &f);
    releasing_fill(c, &f);
    for (size_t i = 0; i < c->njobs; i++) {
        if (!close_job(c, c->jobs[i], &f, now_ms, was[i]))
            continue;
        mu_xgrow((void **)&out->changed, &cap_changed, out->nchanged + 1,
                 sizeof(*out->changed));
        out->changed[out->nchanged++] = c->jobs[i];
    }
    free(was);
    out->nbinds = s.nbinds;
    out->binds = s.binds;
    s.binds = NULL;
    out->nevicts = s.nevicts;
    out->evicts = s.evicts;
    s.evicts = NULL;
    out->wake_ms = s.wake_ms;
    for (size_t i = 0; i < out->nevicts; i++) {
        struct mu_job *v = out->evicts[i].victim->job;

        if (v && !strcmp(out->evicts[i].action, "reclaim")) {
            v->reclaimed = true;
            v->reclaimed_ms = now_ms;
        }
    }
    mu_ssn_close(&s);
    return 0;
}

void mu_cycle_out_release(struct mu_cycle_out *o)
{
    free(o->binds);
    free(o->evicts);
    free(o->changed);
    memset(o, 0, sizeof(*o));
}
