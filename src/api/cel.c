/*
 * cel.c - the DRA selector subset of CEL (cel.h): a lexer and a
 * recursive-descent parser that type-checks the tree as it builds it (the
 * evaluator over one device is cel_eval.c).
 *
 * The grammar is CEL's, cut to the subset:
 *
 *   expr    = and { "||" and }
 *   and     = rel { "&&" rel }
 *   rel     = unary { ("==" | "!=" | "<" | "<=" | ">" | ">=" | "in") unary }
 *   unary   = "!" unary | member
 *   member  = primary [ "." "compareTo" "(" expr ")" ]
 *   primary = INT | "-" INT | STRING | "true" | "false" | "(" expr ")"
 *           | "quantity" "(" STRING ")" | device
 *   device  = "device" "." "driver"
 *           | "device" "." ("attributes" | "capacity") "[" STRING "]"
 *             [ "." NAME | "[" STRING "]" ]
 *
 * and, checked as the tree is built: in takes a string literal and a
 * bare device.attributes["..."]; compareTo's argument is a quantity and
 * its result meets an int literal; where both types of a comparison are
 * known they must agree, and a bool goes wherever one is needed (an
 * attribute's kind is checked when evaluating).
 *
 * What CEL has beyond that (operators, lists, maps, other identifiers,
 * functions and methods, other literals) is recognized far enough to be
 * named in an "unsupported: " message. A run of && (or of ||) is one node
 * with many kids, so a long chain of conditions is not a deep tree; the
 * parser's recursion and the tree's height both stop at MU_CEL_MAX_DEPTH.
 */
#include "api/cel_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/resource.h"


/* Two-character tokens first. */
static const struct {
    const char *s;
    enum tk kind;
} puncts[] = {
    {"&&", TK_AND},   {"||", TK_OR},     {"==", TK_EQ},    {"!=", TK_NE},
    {"<=", TK_LE},    {">=", TK_GE},     {"<", TK_LT},     {">", TK_GT},
    {"!", TK_NOT},    {"(", TK_LPAREN},  {")", TK_RPAREN}, {"[", TK_LBRACK},
    {"]", TK_RBRACK}, {"{", TK_LBRACE},  {"}", TK_RBRACE}, {".", TK_DOT},
    {",", TK_COMMA},  {"-", TK_MINUS},   {"+", TK_ARITH},  {"*", TK_ARITH},
    {"/", TK_ARITH},  {"%", TK_ARITH},   {"?", TK_QUEST},  {":", TK_COLON},
};

struct tok {
    enum tk kind;
    size_t off, len; /* in the source */
    uint64_t u;      /* TK_INT: the magnitude, at most 2^63 */
    char *str;       /* TK_STR: the value, owned until a node takes it */
};

struct parser {
    const char *src;
    size_t pos; /* where the next token is read */
    struct tok t;
    int depth;
    struct mu_err *err;
};

/* An identifier in the source, for "%.*s". */
struct name {
    const char *s;
    int len;
};


const char *const mu_cel_type_names[] = {
    [TY_STRING] = "string",   [TY_INT] = "int",    [TY_BOOL] = "bool",
    [TY_VERSION] = "version", [TY_DYN] = "attribute",
    [TY_CAP] = "capacity",    [TY_QTY] = "quantity",
    [TY_DOMAIN] = "domain",
};


/* ---- errors ---- */

static MU_PRINTF(3, 4) int syntax(struct parser *p, size_t off,
                                  const char *fmt, ...)
{
    char msg[MU_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return mu_err_set(p->err, -EINVAL, "syntax error at offset %zu: %s", off,
                      msg);
}

static MU_PRINTF(2, 3) int unsupported(struct parser *p, const char *fmt, ...)
{
    char msg[MU_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return mu_err_set(p->err, -EINVAL, "unsupported: %s", msg);
}

static int too_deep(struct parser *p)
{
    return mu_err_set(p->err, -EINVAL,
                      "too deeply nested: more than %d levels",
                      MU_CEL_MAX_DEPTH);
}

static int unexpected(struct parser *p)
{
    if (p->t.kind == TK_EOF)
        return syntax(p, p->t.off, "unexpected end of input");
    return syntax(p, p->t.off, "unexpected '%.*s'",
                  (int)MU_MIN(p->t.len, 32), p->src + p->t.off);
}

static const char *op_name(enum tk op)
{
    for (size_t i = 0; i < MU_ARRAY_LEN(puncts); i++)
        if (puncts[i].kind == op)
            return puncts[i].s;
    return "?";
}

/* ---- lexer ---- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* The int at src[i]; *end past it. */
static int lex_int(struct parser *p, size_t i, size_t *end)
{
    const uint64_t max = (uint64_t)INT64_MAX + 1;
    const char *s = p->src;
    uint64_t u = 0;
    size_t j;

    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
        return unsupported(p, "hex literal");
    for (j = i; is_digit(s[j]); j++) {
        unsigned d = (unsigned)(s[j] - '0');

        if (u > (max - d) / 10)
            return syntax(p, i, "int literal out of range");
        u = u * 10 + d;
    }
    if ((s[j] == '.' && is_digit(s[j + 1])) || s[j] == 'e' || s[j] == 'E')
        return unsupported(p, "float literal");
    if (s[j] == 'u' || s[j] == 'U')
        return unsupported(p, "unsigned int literal");
    if (is_alpha(s[j]))
        return syntax(p, j, "unexpected '%c' in a number", s[j]);
    p->t.u = u;
    *end = j;
    return 0;
}

/* The string whose quote is at src[i], into p->t.str; *end past it. */
static int lex_string(struct parser *p, size_t i, size_t *end)
{
    const char *s = p->src;
    char q = s[i], c;
    struct mu_sb sb;
    size_t j;
    int rc = 0;

    if (s[i + 1] == q && s[i + 2] == q)
        return unsupported(p, "triple-quoted string");
    mu_sb_init(&sb);
    mu_sb_add(&sb, "");
    for (j = i + 1; s[j] != q; j++) {
        c = s[j];
        if (c == '\0') {
            rc = syntax(p, i, "unterminated string");
            break;
        }
        if (c == '\n' || c == '\r') {
            rc = syntax(p, j, "newline in string");
            break;
        }
        if (c == '\\') {
            c = s[++j];
            if (c == 'n') {
                c = '\n';
            } else if (c == 't') {
                c = '\t';
            } else if (c == '\0') {
                rc = syntax(p, i, "unterminated string");
                break;
            } else if (c != '"' && c != '\'' && c != '\\') {
                if (c > ' ' && c < 0x7f)
                    rc = unsupported(p, "escape \\%c", c);
                else
                    rc = syntax(p, j - 1, "bad escape");
                break;
            }
        }
        mu_sb_addn(&sb, &c, 1);
    }
    if (rc) {
        mu_sb_release(&sb);
        return rc;
    }
    p->t.str = mu_sb_detach(&sb);
    *end = j + 1;
    return 0;
}

/* Reads the next token into p->t. */
static int lex(struct parser *p)
{
    const char *s = p->src;
    size_t i = p->pos, j = 0, k;
    int rc = 0;

    free(p->t.str);
    p->t.str = NULL;
    while (is_space(s[i]))
        i++;
    p->t.off = i;
    if (s[i] == '\0') {
        p->t.kind = TK_EOF;
        j = i;
    } else if (is_alpha(s[i])) {
        for (j = i; is_alpha(s[j]) || is_digit(s[j]); j++)
            ;
        k = strspn(s + i, "rRbB");
        if ((s[j] == '"' || s[j] == '\'') && k == j - i && k <= 2)
            return unsupported(p, "%s",
                               memchr(s + i, 'b', k) || memchr(s + i, 'B', k)
                                   ? "bytes literal"
                                   : "raw string");
        p->t.kind = j - i == 2 && memcmp(s + i, "in", 2) == 0 ? TK_IN
                                                               : TK_IDENT;
    } else if (is_digit(s[i])) {
        p->t.kind = TK_INT;
        rc = lex_int(p, i, &j);
    } else if (s[i] == '"' || s[i] == '\'') {
        p->t.kind = TK_STR;
        rc = lex_string(p, i, &j);
    } else if (s[i] == '.' && is_digit(s[i + 1])) {
        return unsupported(p, "float literal");
    } else if (s[i] == '/' && s[i + 1] == '/') {
        return unsupported(p, "comment");
    } else {
        for (k = 0; k < MU_ARRAY_LEN(puncts); k++) {
            size_t n = strlen(puncts[k].s);

            if (strncmp(s + i, puncts[k].s, n) == 0) {
                p->t.kind = puncts[k].kind;
                j = i + n;
                break;
            }
        }
        if (k == MU_ARRAY_LEN(puncts)) {
            if (s[i] > ' ' && s[i] < 0x7f)
                return syntax(p, i, "unexpected character '%c'", s[i]);
            return syntax(p, i, "unexpected byte 0x%02x",
                          (unsigned char)s[i]);
        }
    }
    if (rc)
        return rc;
    p->t.len = j - i;
    p->pos = j;
    return 0;
}

/* ---- tree ---- */

static struct mu_cel *node(enum kind kind, enum type type)
{
    struct mu_cel *n = mu_xcalloc(1, sizeof(*n));

    n->kind = kind;
    n->type = type;
    n->height = 1;
    return n;
}

static void add_kid(struct mu_cel *n, struct mu_cel *kid)
{
    mu_xgrow((void **)&n->kids, &n->cap, n->n + 1, sizeof(*n->kids));
    n->kids[n->n++] = kid;
    n->height = MU_MAX(n->height, kid->height + 1);
}

void mu_cel_free(struct mu_cel *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        mu_cel_free(e->kids[i]);
    free(e->kids);
    free(e->s);
    free(e);
}

static int check_height(struct parser *p, const struct mu_cel *n)
{
    return n->height > MU_CEL_MAX_DEPTH ? too_deep(p) : 0;
}

/* Capacities, quantities and domains are parts of compareTo and in only. */
static int need_value(struct parser *p, const struct mu_cel *n)
{
    if (n->type == TY_CAP)
        return unsupported(p, "capacity %s without compareTo", n->s);
    if (n->type == TY_QTY)
        return unsupported(p, "quantity outside compareTo");
    if (n->type == TY_DOMAIN)
        return unsupported(p, "%s[\"%s\"] without a name",
                           n->caps ? "device.capacity" : "device.attributes",
                           n->s);
    return 0;
}

/* n where a bool goes (what: "an operand of &&"); an attribute is checked
 * when evaluated. */
static int need_bool(struct parser *p, const struct mu_cel *n,
                     const char *what)
{
    int rc = need_value(p, n);

    if (rc || n->type == TY_BOOL || n->type == TY_DYN)
        return rc;
    return mu_err_set(p->err, -EINVAL, "%s must be a bool, not %s", what,
                      mu_cel_type_names[n->type]);
}

/* Whether a op b exists: the same types, and bools only (in)equal. */
int mu_cel_check_overload(struct mu_err *err, enum tk op, enum type a,
                          enum type b)
{
    if (a == b && (a != TY_BOOL || op == TK_EQ || op == TK_NE))
        return 0;
    return mu_err_set(err, -EINVAL, "no such overload: %s %s %s",
                      mu_cel_type_names[a], op_name(op), mu_cel_type_names[b]);
}

/* ---- parser ---- */

static struct mu_cel *parse_expr(struct parser *p);
static struct mu_cel *parse_unary(struct parser *p);

static int enter(struct parser *p)
{
    if (p->depth >= MU_CEL_MAX_DEPTH)
        return too_deep(p);
    p->depth++;
    return 0;
}

static struct name tok_name(const struct parser *p)
{
    return (struct name){p->src + p->t.off, (int)p->t.len};
}

static bool name_is(struct name m, const char *w)
{
    return (size_t)m.len == strlen(w) && memcmp(m.s, w, (size_t)m.len) == 0;
}

/* Consumes a token of kind k (what: "')'") or says what came instead. */
static int expect(struct parser *p, enum tk k, const char *what)
{
    if (p->t.kind == k)
        return k == TK_EOF ? 0 : lex(p);
    if (p->t.kind == TK_ARITH || p->t.kind == TK_MINUS)
        return unsupported(p, "operator %.*s", (int)p->t.len,
                           p->src + p->t.off);
    if (p->t.kind == TK_QUEST)
        return unsupported(p, "operator ?:");
    return syntax(p, p->t.off, "expected %s", what);
}

/* At '.': the name after it, with *call set when a '(' follows (read). */
static int read_member(struct parser *p, struct name *m, bool *call)
{
    int rc = lex(p);

    if (rc)
        return rc;
    if (p->t.kind != TK_IDENT)
        return syntax(p, p->t.off, "expected a name after '.'");
    *m = tok_name(p);
    rc = lex(p);
    if (rc)
        return rc;
    *call = p->t.kind == TK_LPAREN;
    return *call ? lex(p) : 0;
}

/* After `what`, which has no members: names what the source tries. */
static int refuse(struct parser *p, const char *what)
{
    struct name m;
    bool call;
    int rc;

    if (p->t.kind == TK_LBRACK)
        return unsupported(p, "index on %s", what);
    if (p->t.kind != TK_DOT)
        return unsupported(p, "%s as a value", what);
    rc = read_member(p, &m, &call);
    if (rc)
        return rc;
    if (call)
        return unsupported(p, "method %.*s", m.len, m.s);
    return unsupported(p, "member %.*s of %s", m.len, m.s, what);
}

/* At '[': the string literal inside the brackets, for the caller to
 * free. */
static char *parse_index(struct parser *p)
{
    struct mu_cel *k;
    char *s = NULL;

    if (lex(p))
        return NULL;
    k = parse_expr(p);
    if (!k)
        return NULL;
    if (!mu_cel_is_str_lit(k))
        unsupported(p, "index other than a string literal");
    else if (!expect(p, TK_RBRACK, "']'"))
        s = mu_xstrdup(k->s);
    mu_cel_free(k);
    return s;
}

/* The one argument of fn, whose '(' was read, and the ')'. */
static struct mu_cel *parse_arg(struct parser *p, const char *fn)
{
    struct mu_cel *a = parse_expr(p);

    if (!a)
        return NULL;
    if (p->t.kind == TK_COMMA) {
        unsupported(p, "%s with more than one argument", fn);
    } else if (!expect(p, TK_RPAREN, "')'")) {
        return a;
    }
    mu_cel_free(a);
    return NULL;
}

/* quantity("..."), its '(' read: a literal of its milli-value. */
static struct mu_cel *parse_quantity(struct parser *p)
{
    struct mu_cel *a = parse_arg(p, "quantity");

    if (!a)
        return NULL;
    if (!mu_cel_is_str_lit(a)) {
        unsupported(p, "quantity of anything but a string literal");
    } else if (mu_quantity_parse(a->s, MU_Q_MILLI, &a->i, p->err)) {
        mu_err_prefix(p->err, "quantity(\"%s\")", a->s);
    } else {
        free(a->s);
        a->s = NULL;
        a->type = TY_QTY;
        return a;
    }
    mu_cel_free(a);
    return NULL;
}

/* What follows "device". */
static struct mu_cel *parse_device(struct parser *p)
{
    const char *map;
    struct mu_cel *n;
    char *dom, *key = NULL;
    struct name m;
    bool call, caps;

    if (p->t.kind != TK_DOT) {
        refuse(p, "device");
        return NULL;
    }
    if (read_member(p, &m, &call))
        return NULL;
    if (call) {
        unsupported(p, "method %.*s", m.len, m.s);
        return NULL;
    }
    if (name_is(m, "driver"))
        return node(N_DRIVER, TY_STRING);
    caps = name_is(m, "capacity");
    if (!caps && !name_is(m, "attributes")) {
        unsupported(p, "member %.*s of device", m.len, m.s);
        return NULL;
    }
    map = caps ? "device.capacity" : "device.attributes";
    if (p->t.kind != TK_LBRACK) {
        refuse(p, map);
        return NULL;
    }
    dom = parse_index(p);
    if (!dom)
        return NULL;
    if (p->t.kind == TK_LBRACK) {
        key = parse_index(p);
    } else if (p->t.kind == TK_DOT) {
        if (read_member(p, &m, &call) == 0) {
            if (call)
                unsupported(p, "method %.*s", m.len, m.s);
            else
                key = mu_xasprintf("%.*s", m.len, m.s);
        }
    } else {
        n = node(N_DOMAIN, TY_DOMAIN);
        n->s = dom;
        n->caps = caps;
        return n;
    }
    n = NULL;
    if (key) {
        n = caps ? node(N_CAP, TY_CAP) : node(N_ATTR, TY_DYN);
        n->s = mu_xasprintf("%s/%s", dom, key);
    }
    free(dom);
    free(key);
    return n;
}

/* What follows an identifier. */
static struct mu_cel *parse_ident(struct parser *p)
{
    struct name m = tok_name(p);
    struct mu_cel *n;

    if (lex(p))
        return NULL;
    if (p->t.kind == TK_LPAREN) {
        if (!name_is(m, "quantity")) {
            unsupported(p, "function %.*s", m.len, m.s);
            return NULL;
        }
        return lex(p) ? NULL : parse_quantity(p);
    }
    if (name_is(m, "device"))
        return parse_device(p);
    if (name_is(m, "true") || name_is(m, "false")) {
        n = node(N_LIT, TY_BOOL);
        n->i = name_is(m, "true");
        return n;
    }
    if (name_is(m, "null"))
        unsupported(p, "null");
    else
        unsupported(p, "identifier %.*s", m.len, m.s);
    return NULL;
}

static struct mu_cel *parse_primary(struct parser *p)
{
    struct mu_cel *n;
    bool neg = false;

    switch (p->t.kind) {
    case TK_IDENT:
        return parse_ident(p);
    case TK_LPAREN:
        if (lex(p))
            return NULL;
        n = parse_expr(p);
        if (n && expect(p, TK_RPAREN, "')'")) {
            mu_cel_free(n);
            return NULL;
        }
        return n;
    case TK_STR:
        n = node(N_LIT, TY_STRING);
        n->s = p->t.str;
        p->t.str = NULL;
        break;
    case TK_MINUS:
        if (lex(p))
            return NULL;
        if (p->t.kind != TK_INT) {
            unsupported(p, "operator -");
            return NULL;
        }
        neg = true;
        /* fall through */
    case TK_INT:
        if (!neg && p->t.u > INT64_MAX) {
            syntax(p, p->t.off, "int literal out of range");
            return NULL;
        }
        n = node(N_LIT, TY_INT);
        /* -2^63 is the one magnitude without a positive int64 */
        n->i = !neg ? (int64_t)p->t.u
                    : p->t.u > INT64_MAX ? INT64_MIN : -(int64_t)p->t.u;
        break;
    case TK_LBRACK:
        unsupported(p, "list");
        return NULL;
    case TK_LBRACE:
        unsupported(p, "map");
        return NULL;
    case TK_DOT:
        unsupported(p, "leading '.'");
        return NULL;
    default:
        unexpected(p);
        return NULL;
    }
    if (lex(p)) {
        mu_cel_free(n);
        return NULL;
    }
    return n;
}

/* A primary, then compareTo on a capacity; no other member or index. */
static struct mu_cel *parse_member(struct parser *p)
{
    struct mu_cel *n = parse_primary(p), *c, *a;
    struct name m;
    bool call;

    if (n && n->type == TY_CAP && p->t.kind == TK_DOT) {
        if (read_member(p, &m, &call))
            goto fail;
        if (!call) {
            unsupported(p, "member %.*s of capacity", m.len, m.s);
            goto fail;
        }
        if (!name_is(m, "compareTo")) {
            unsupported(p, "method %.*s", m.len, m.s);
            goto fail;
        }
        c = node(N_CMPTO, TY_INT);
        add_kid(c, n);
        n = c;
        a = parse_arg(p, "compareTo");
        if (!a)
            goto fail;
        if (a->type != TY_QTY) {
            unsupported(p, "compareTo argument other than quantity(\"...\")");
            mu_cel_free(a);
            goto fail;
        }
        n->i = a->i;
        mu_cel_free(a);
    }
    if (n && (p->t.kind == TK_DOT || p->t.kind == TK_LBRACK)) {
        refuse(p, mu_cel_type_names[n->type]);
        goto fail;
    }
    return n;
fail:
    mu_cel_free(n);
    return NULL;
}

static struct mu_cel *parse_not(struct parser *p)
{
    struct mu_cel *k, *n;

    if (lex(p) || !(k = parse_unary(p)))
        return NULL;
    if (need_bool(p, k, "the operand of !")) {
        mu_cel_free(k);
        return NULL;
    }
    n = node(N_NOT, TY_BOOL);
    add_kid(n, k);
    if (check_height(p, n)) {
        mu_cel_free(n);
        return NULL;
    }
    return n;
}

static struct mu_cel *parse_unary(struct parser *p)
{
    struct mu_cel *n;

    if (p->t.kind != TK_NOT)
        return parse_member(p);
    if (enter(p))
        return NULL;
    n = parse_not(p);
    p->depth--;
    return n;
}

/* key in dom: a literal name in device.attributes["..."]. Takes both. */
static struct mu_cel *make_in(struct parser *p, struct mu_cel *key,
                              struct mu_cel *dom)
{
    struct mu_cel *n = NULL;

    if (!mu_cel_is_str_lit(key))
        unsupported(p, "in with a key other than a string literal");
    else if (dom->kind != N_DOMAIN)
        unsupported(p, "in on %s", mu_cel_type_names[dom->type]);
    else if (dom->caps)
        unsupported(p, "in on device.capacity");
    else {
        n = node(N_IN, TY_BOOL);
        n->s = mu_xasprintf("%s/%s", dom->s, key->s);
    }
    mu_cel_free(key);
    mu_cel_free(dom);
    return n;
}

/* compareTo's result meets an int literal only. */
static int check_compare_to(struct parser *p, const struct mu_cel *l,
                            const struct mu_cel *r)
{
    const struct mu_cel *other = l->kind == N_CMPTO ? r : l;

    if (l->kind != N_CMPTO && r->kind != N_CMPTO)
        return 0;
    if (other->kind == N_LIT && other->type == TY_INT)
        return 0;
    return unsupported(p, "compareTo compared with anything but an int "
                          "literal");
}

/* l op r, type-checked where both types are known. Takes both. */
static struct mu_cel *make_cmp(struct parser *p, enum tk op,
                               struct mu_cel *l, struct mu_cel *r)
{
    struct mu_cel *n = node(N_CMP, TY_BOOL);

    n->op = op;
    add_kid(n, l);
    add_kid(n, r);
    if (check_height(p, n) || need_value(p, l) || need_value(p, r) ||
        (l->type != TY_DYN && r->type != TY_DYN &&
         mu_cel_check_overload(p->err, op, l->type, r->type)) ||
        check_compare_to(p, l, r)) {
        mu_cel_free(n);
        return NULL;
    }
    return n;
}

static struct mu_cel *parse_rel(struct parser *p)
{
    struct mu_cel *l = parse_unary(p), *r;
    enum tk op;

    while (l && ((p->t.kind >= TK_EQ && p->t.kind <= TK_GE) ||
                 p->t.kind == TK_IN)) {
        op = p->t.kind;
        if (lex(p) || !(r = parse_unary(p))) {
            mu_cel_free(l);
            return NULL;
        }
        l = op == TK_IN ? make_in(p, l, r) : make_cmp(p, op, l, r);
    }
    return l;
}

/* sub { op sub } for op && or ||, as one node. */
static struct mu_cel *parse_chain(struct parser *p, enum tk op,
                                  struct mu_cel *(*sub)(struct parser *))
{
    const char *what = op == TK_AND ? "an operand of &&" : "an operand of ||";
    struct mu_cel *k = sub(p), *n;

    if (!k || p->t.kind != op)
        return k;
    n = node(op == TK_AND ? N_AND : N_OR, TY_BOOL);
    add_kid(n, k);
    while (p->t.kind == op) {
        if (lex(p) || !(k = sub(p)))
            goto fail;
        add_kid(n, k);
    }
    for (size_t i = 0; i < n->n; i++)
        if (need_bool(p, n->kids[i], what))
            goto fail;
    if (check_height(p, n))
        goto fail;
    return n;
fail:
    mu_cel_free(n);
    return NULL;
}

static struct mu_cel *parse_and(struct parser *p)
{
    return parse_chain(p, TK_AND, parse_rel);
}

static struct mu_cel *parse_expr(struct parser *p)
{
    struct mu_cel *n;

    if (enter(p))
        return NULL;
    n = parse_chain(p, TK_OR, parse_and);
    p->depth--;
    return n;
}

struct mu_cel *mu_cel_compile(const char *src, struct mu_err *err)
{
    struct parser p = {.src = src, .err = err};
    struct mu_cel *n = NULL;
    size_t len = strlen(src);

    if (len > MU_CEL_MAX_LEN) {
        mu_err_set(err, -EINVAL, "too long: %zu bytes, at most %d", len,
                   MU_CEL_MAX_LEN);
        return NULL;
    }
    if (!lex(&p))
        n = parse_expr(&p);
    if (n && (expect(&p, TK_EOF, "end of input") ||
              need_bool(&p, n, "the selector"))) {
        mu_cel_free(n);
        n = NULL;
    }
    free(p.t.str);
    return n;
}
