#include "sched/statement.h"

void mu_stmt_init(struct mu_stmt *s, struct mu_cluster *c)
{
    s->cluster = c;
    s->n = s->cap = 0;
    s->ops = NULL;
}

void mu_stmt_release(struct mu_stmt *s)
{
    free(s->ops);
    s->ops = NULL;
    s->n = s->cap = 0;
}

static void push(struct mu_stmt *s, enum mu_op_kind k, struct mu_task *t)
{
    mu_xgrow((void **)&s->ops, &s->cap, s->n + 1, sizeof(*s->ops));
    s->ops[s->n].kind = k;
    s->ops[s->n].task = t;
    s->ops[s->n].prev = t->status;
    s->n++;
}

void mu_stmt_place(struct mu_stmt *s, struct mu_task *t, struct mu_cnode *n,
                   enum mu_task_status st)
{
    push(s, MU_OP_PLACE, t);
    mu_task_place(s->cluster, t, n, st);
}

void mu_stmt_evict(struct mu_stmt *s, struct mu_task *t)
{
    push(s, MU_OP_EVICT, t);
    mu_task_set_status(s->cluster, t, MU_TASK_RELEASING);
}

void mu_stmt_rollback(struct mu_stmt *s, size_t mark)
{
    while (s->n > mark) {
        struct mu_op *op = &s->ops[--s->n];

        if (op->kind == MU_OP_PLACE)
            mu_task_unplace(s->cluster, op->task);
        else
            mu_task_set_status(s->cluster, op->task, op->prev);
    }
}

void mu_stmt_forget(struct mu_stmt *s, size_t mark)
{
    if (s->n > mark)
        s->n = mark;
}
