/*
 * cel_int.h - the compiled tree cel.c builds and cel_eval.c evaluates. Not
 * for other files: the contract is cel.h.
 */
#ifndef MU_API_CEL_INT_H
#define MU_API_CEL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "api/cel.h"

enum tk {
    TK_EOF, TK_IDENT, TK_INT, TK_STR, TK_IN,
    TK_LPAREN, TK_RPAREN, TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE,
    TK_DOT, TK_COMMA, TK_NOT, TK_AND, TK_OR,
    TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, /* relops, in this order */
    TK_MINUS, TK_ARITH, TK_QUEST, TK_COLON,
};

enum kind {
    N_LIT,    /* s (a string), i (an int, a bool, a quantity's milli) */
    N_DRIVER, /* device.driver */
    N_ATTR,   /* s: the qualified name */
    N_CAP,    /* s: the qualified name; only compareTo's receiver */
    N_DOMAIN, /* s: device.attributes[s] (capacity when caps); only in */
    N_CMPTO,  /* kids[0] (an N_CAP).compareTo(i) */
    N_IN,     /* s: the qualified name looked for */
    N_NOT,
    N_AND,
    N_OR,
    N_CMP, /* kids[0] op kids[1] */
};

/* Static types. The value kinds come first, with their numbers, so one
 * table names both; then an attribute (its kind known only when
 * evaluating) and what only compareTo and in take. */
enum type {
    TY_STRING = MU_CEL_STRING,
    TY_INT = MU_CEL_INT,
    TY_BOOL = MU_CEL_BOOL,
    TY_VERSION = MU_CEL_VERSION,
    TY_DYN,
    TY_CAP,
    TY_QTY,
    TY_DOMAIN,
};

/* The names of the types ("string", "attribute", ...), by enum type. */
extern const char *const mu_cel_type_names[];

struct mu_cel {
    enum kind kind;
    enum type type;
    enum tk op; /* N_CMP */
    char *s;
    int64_t i;
    bool caps; /* N_DOMAIN */
    int height;
    size_t n, cap;
    struct mu_cel **kids;
};

static inline bool mu_cel_is_str_lit(const struct mu_cel *n)
{
    return n->kind == N_LIT && n->type == TY_STRING;
}

/* Whether a op b exists: the same types, and bools only (in)equal; else
 * -EINVAL with "no such overload: ..." in err. */
int mu_cel_check_overload(struct mu_err *err, enum tk op, enum type a,
                          enum type b);

#endif
