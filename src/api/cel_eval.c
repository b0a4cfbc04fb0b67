/*
 * cel_eval.c - a compiled selector (cel.c) evaluated against one device,
 * with CEL's error rules (cel.h).
 */
#include "api/cel_eval.h"
#include "api/cel_int.h"

#include <errno.h>
#include <string.h>

struct val {
    enum mu_cel_kind kind;
    const char *s; /* STRING, VERSION */
    int64_t i;     /* INT; BOOL as 0 or 1 */
};

static const struct mu_cel_attr *find_attr(const struct mu_cel_device *d,
                                           const char *name)
{
    for (size_t i = 0; i < d->nattrs; i++)
        if (strcmp(d->attrs[i].name, name) == 0)
            return &d->attrs[i];
    return NULL;
}

static const struct mu_cel_cap *find_cap(const struct mu_cel_device *d,
                                         const char *name)
{
    for (size_t i = 0; i < d->ncaps; i++)
        if (strcmp(d->caps[i].name, name) == 0)
            return &d->caps[i];
    return NULL;
}

static int eval(const struct mu_cel *e, const struct mu_cel_device *d,
                struct val *v, struct mu_err *err);

/* 1, 0 or -EINVAL. Only an attribute may not be a bool here: the compiler
 * checked the rest. */
static int eval_bool(const struct mu_cel *e, const struct mu_cel_device *d,
                     struct mu_err *err)
{
    struct val v;
    int rc = eval(e, d, &v, err);

    if (rc)
        return rc;
    if (v.kind != MU_CEL_BOOL)
        return mu_err_set(err, -EINVAL, "attribute %s is %s, not bool", e->s,
                          mu_cel_type_names[v.kind]);
    return (int)v.i;
}

/* && and || as CEL has them: the deciding value (false for &&, true for
 * ||) wins over an error in any operand; otherwise the first error. */
static int eval_logic(const struct mu_cel *e, const struct mu_cel_device *d,
                      struct mu_err *err)
{
    int decide = e->kind == N_OR, rc = 0, r;
    struct mu_err first;

    for (size_t i = 0; i < e->n; i++) {
        r = eval_bool(e->kids[i], d, rc || !err ? NULL : &first);
        if (r == decide)
            return decide;
        if (r < 0 && !rc)
            rc = r;
    }
    if (rc && err)
        *err = first;
    return rc ? rc : !decide;
}

static int eval_cmp(const struct mu_cel *e, const struct mu_cel_device *d,
                    struct mu_err *err)
{
    struct val a, b;
    int rc, c, ver;

    rc = eval(e->kids[0], d, &a, err);
    if (!rc)
        rc = eval(e->kids[1], d, &b, err);
    if (rc)
        return rc;
    if (a.kind == MU_CEL_VERSION || b.kind == MU_CEL_VERSION) {
        ver = a.kind == MU_CEL_VERSION ? 0 : 1;
        if ((e->op != TK_EQ && e->op != TK_NE) ||
            !mu_cel_is_str_lit(e->kids[!ver]))
            return mu_err_set(err, -EINVAL,
                              "attribute %s is a version: it compares only "
                              "with == or != to a string literal",
                              e->kids[ver]->s);
    } else {
        rc = mu_cel_check_overload(err, e->op, (enum type)a.kind,
                            (enum type)b.kind);
        if (rc)
            return rc;
    }
    if (a.kind == MU_CEL_INT || a.kind == MU_CEL_BOOL)
        c = (a.i > b.i) - (a.i < b.i);
    else
        c = strcmp(a.s, b.s);
    switch (e->op) {
    case TK_EQ:
        return c == 0;
    case TK_NE:
        return c != 0;
    case TK_LT:
        return c < 0;
    case TK_LE:
        return c <= 0;
    case TK_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}

static int eval(const struct mu_cel *e, const struct mu_cel_device *d,
                struct val *v, struct mu_err *err)
{
    const struct mu_cel_attr *a;
    const struct mu_cel_cap *c;
    int r;

    v->kind = MU_CEL_BOOL;
    v->s = NULL;
    v->i = 0;
    switch (e->kind) {
    case N_LIT:
        v->kind = (enum mu_cel_kind)e->type;
        v->s = e->s;
        v->i = e->i;
        return 0;
    case N_DRIVER:
        v->kind = MU_CEL_STRING;
        v->s = d->driver ? d->driver : "";
        return 0;
    case N_ATTR:
        a = find_attr(d, e->s);
        if (!a)
            return mu_err_set(err, -EINVAL, "no attribute %s", e->s);
        v->kind = a->kind;
        v->s = a->s ? a->s : "";
        v->i = a->kind == MU_CEL_BOOL ? a->b : a->i;
        return 0;
    case N_IN:
        v->i = find_attr(d, e->s) != NULL;
        return 0;
    case N_CMPTO:
        c = find_cap(d, e->kids[0]->s);
        if (!c)
            return mu_err_set(err, -EINVAL, "no capacity %s",
                              e->kids[0]->s);
        v->kind = MU_CEL_INT;
        v->i = (c->milli > e->i) - (c->milli < e->i);
        return 0;
    case N_NOT:
        r = eval_bool(e->kids[0], d, err);
        r = r < 0 ? r : !r;
        break;
    case N_AND:
    case N_OR:
        r = eval_logic(e, d, err);
        break;
    case N_CMP:
        r = eval_cmp(e, d, err);
        break;
    default: /* N_CAP and N_DOMAIN: never at a place evaluated */
        return mu_err_set(err, -EINVAL, "cannot evaluate %s",
                          mu_cel_type_names[e->type]);
    }
    if (r < 0)
        return r;
    v->i = r;
    return 0;
}

int mu_cel_eval(const struct mu_cel *e, const struct mu_cel_device *d,
                struct mu_err *err)
{
    return eval_bool(e, d, err);
}
