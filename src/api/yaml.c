#include "api/yaml.h"

#include <math.h>
#include <yaml.h>

#define TAG(s) "tag:yaml.org,2002:" s

/* Nodes copied for alias uses in one input. The alias-use limit alone lets
 * a few aliases of a huge anchored value exhaust memory. */
#define MAX_ALIAS_NODES (100u * MU_YAML_MAX_ALIASES)

/* What a value costs once expanded. */
struct stats {
    size_t nodes;   /* scalars and collections */
    size_t aliases; /* alias uses, nested ones counted per expansion */
    int height;     /* collection levels */
};

struct anchor {
    json_t *value;
    char *text; /* a scalar's source text, for use as a key; else NULL */
    size_t text_len;
    struct stats st;
};

struct ctx {
    const char *name;
    const char *buf;
    size_t len;
    yaml_parser_t parser;
    struct mu_err *err;
    json_t *index; /* anchor name -> index into anchors (latest wins) */
    struct anchor *anchors;
    size_t n_anchors;
    size_t cap_anchors;
    size_t doc_aliases;
    size_t alias_nodes;
    json_t *lines; /* the document's "%p/key" -> line (mu_yaml_key_line) */
};

enum kind { K_NULL, K_BOOL, K_INT, K_REAL, K_SPECIAL, K_STR };

struct scalar {
    enum kind kind;
    bool big; /* K_REAL from an integer beyond int64 */
    bool b;
    json_int_t i;
    double d;
    const char *special;
};

static const char *const null_words[] = {"", "~", "null", "Null", "NULL"};
static const char *const true_words[] = {
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
static const char *const false_words[] = {
    "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
static const struct {
    const char *word;
    const char *text;
} specials[] = {
    {".nan", ".nan"},   {".NaN", ".nan"},   {".NAN", ".nan"},
    {".inf", ".inf"},   {".Inf", ".inf"},   {".INF", ".inf"},
    {"+.inf", ".inf"},  {"+.Inf", ".inf"},  {"+.INF", ".inf"},
    {"-.inf", "-.inf"}, {"-.Inf", "-.inf"}, {"-.INF", "-.inf"},
};

static json_t *jx(json_t *j)
{
    if (!j) {
        fprintf(stderr, "muster: out of memory building JSON\n");
        abort();
    }
    return j;
}

static void jok(int rc)
{
    if (rc)
        jx(NULL);
}

static MU_PRINTF(4, 5) int fail(struct ctx *c, int code, yaml_mark_t m,
                                const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    if (!c->err)
        return code;
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "%s:%zu:%zu: ", c->name, m.line + 1, m.column + 1);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    mu_err_set(c->err, code, "%s", sb.buf);
    mu_sb_release(&sb);
    return code;
}

static int parser_fail(struct ctx *c)
{
    yaml_parser_t *p = &c->parser;
    yaml_mark_t m = p->problem_mark;
    const char *problem = p->problem ? p->problem : "cannot parse";

    if (p->error == YAML_MEMORY_ERROR)
        return mu_err_set(c->err, -ENOMEM, "%s: out of memory", c->name);
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset only. */
        size_t i;

        m.line = m.column = 0;
        for (i = 0; i < MU_MIN(p->problem_offset, c->len); i++) {
            m.column++;
            if (c->buf[i] == '\n') {
                m.line++;
                m.column = 0;
            }
        }
    }
    if (m.index < c->len && c->buf[m.index] == '\t')
        return fail(c, -EINVAL, m, "%s%s%s; YAML indents with spaces, not "
                    "tabs", problem, p->context ? " " : "",
                    p->context ? p->context : "");
    if (p->context)
        return fail(c, -EINVAL, m, "%s %s", problem, p->context);
    return fail(c, -EINVAL, m, "%s", problem);
}

static int next(struct ctx *c, yaml_event_t *ev)
{
    return yaml_parser_parse(&c->parser, ev) ? 0 : parser_fail(c);
}

static bool word_in(const char *const *words, size_t n, const char *s)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(words[i], s) == 0)
            return true;
    return false;
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool digit_in_base(char c, int base)
{
    if (base == 16)
        return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return c >= '0' && c < '0' + base;
}

/* Go's strconv.ParseInt(s, 0, 64), then ParseUint for the positive range
 * beyond int64 (which becomes a real here). */
static bool resolve_int(const char *p, struct scalar *r)
{
    bool neg = false;
    int base = 10;
    unsigned long long u;
    const char *q;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O')) {
        base = 8;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
        base = 2;
        p += 2;
    } else if (p[0] == '0' && p[1]) {
        base = 8;
        p++;
    }
    if (!*p)
        return false;
    for (q = p; *q; q++)
        if (!digit_in_base(*q, base))
            return false;
    errno = 0;
    u = strtoull(p, NULL, base);
    if (errno == ERANGE)
        return false;
    if (u <= (unsigned long long)INT64_MAX) {
        r->kind = K_INT;
        r->i = neg ? -(json_int_t)u : (json_int_t)u;
    } else if (neg && u == (unsigned long long)INT64_MAX + 1) {
        r->kind = K_INT;
        r->i = INT64_MIN;
    } else if (!neg) {
        r->kind = K_REAL;
        r->big = true;
        r->d = (double)u;
    } else {
        return false;
    }
    return true;
}

/* go-yaml's ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool float_syntax(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (*s == '.') {
        if (!digit(*++s))
            return false;
    } else if (!digit(*s)) {
        return false;
    }
    while (digit(*s))
        s++;
    if (*s == '.')
        while (digit(*++s))
            ;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!digit(*s))
            return false;
        while (digit(*s))
            s++;
    }
    return *s == '\0';
}

static void resolve_float(const char *s, struct scalar *r)
{
    double d;

    if (!float_syntax(s))
        return;
    d = strtod(s, NULL);
    if (isinf(d))
        return; /* Go's ParseFloat fails on overflow: a string */
    r->kind = K_REAL;
    r->d = d;
}

/* Types a plain scalar as go-yaml v2's resolve() does. */
static void resolve(const char *s, size_t len, struct scalar *r)
{
    size_t i;

    memset(r, 0, sizeof(*r));
    r->kind = K_STR;
    if (strlen(s) != len)
        return;
    if (word_in(null_words, MU_ARRAY_LEN(null_words), s)) {
        r->kind = K_NULL;
    } else if (word_in(true_words, MU_ARRAY_LEN(true_words), s)) {
        r->kind = K_BOOL;
        r->b = true;
    } else if (word_in(false_words, MU_ARRAY_LEN(false_words), s)) {
        r->kind = K_BOOL;
    } else if (digit(s[0]) || s[0] == '+' || s[0] == '-') {
        char *p = mu_xmalloc(len + 1);
        char *q = p;

        for (i = 0; i < len; i++)
            if (s[i] != '_')
                *q++ = s[i];
        *q = '\0';
        if (!resolve_int(p, r))
            resolve_float(p, r);
        free(p);
    } else if (s[0] == '.') {
        resolve_float(s, r);
    }
    for (i = 0; r->kind == K_STR && i < MU_ARRAY_LEN(specials); i++) {
        if (strcmp(specials[i].word, s) == 0) {
            r->kind = K_SPECIAL;
            r->special = specials[i].text;
        }
    }
}

static const char *kind_tag(enum kind k)
{
    static const char *const names[] = {"null", "bool",  "int",
                                        "float", "float", "str"};
    return names[k];
}

static bool resolvable(const char *tag)
{
    return strcmp(tag, TAG("null")) == 0 || strcmp(tag, TAG("bool")) == 0 ||
           strcmp(tag, TAG("int")) == 0 || strcmp(tag, TAG("float")) == 0;
}

/* Checks a scalar resolved under an explicit !!null/!!bool/!!int/!!float. */
static int apply_tag(struct ctx *c, const yaml_event_t *ev, const char *tag,
                     struct scalar *r)
{
    const char *want = tag + strlen(TAG(""));
    bool ok;

    if (strcmp(want, "null") == 0)
        ok = r->kind == K_NULL;
    else if (strcmp(want, "bool") == 0)
        ok = r->kind == K_BOOL;
    else if (strcmp(want, "int") == 0)
        ok = r->kind == K_INT || r->big;
    else
        ok = r->kind == K_INT || r->kind == K_REAL || r->kind == K_SPECIAL;
    if (!ok)
        return fail(c, -EINVAL, ev->start_mark,
                    "cannot decode !!%s `%.64s` as a !!%s", kind_tag(r->kind),
                    (const char *)ev->data.scalar.value, want);
    if (r->kind == K_INT && strcmp(want, "float") == 0) {
        r->kind = K_REAL;
        r->d = (double)r->i;
    }
    return 0;
}

static int scalar_value(struct ctx *c, const yaml_event_t *ev, json_t **out)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    struct scalar r = {.kind = K_STR};
    int rc;

    /* !!str, !!binary, !!timestamp and local tags keep the text, as do
     * untagged quoted and block scalars. */
    if (tag ? resolvable(tag)
            : ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        resolve(s, len, &r);
    if (tag && resolvable(tag)) {
        rc = apply_tag(c, ev, tag, &r);
        if (rc)
            return rc;
    }
    switch (r.kind) {
    case K_NULL:
        *out = jx(json_null());
        break;
    case K_BOOL:
        *out = jx(json_boolean(r.b));
        break;
    case K_INT:
        *out = jx(json_integer(r.i));
        break;
    case K_REAL:
        *out = jx(json_real(r.d));
        break;
    case K_SPECIAL:
        *out = jx(json_string(r.special));
        break;
    case K_STR:
        *out = json_stringn(s, len);
        if (!*out)
            return fail(c, -EINVAL, ev->start_mark, "invalid UTF-8 in scalar");
        break;
    }
    return 0;
}

static struct anchor *find_anchor(struct ctx *c, const char *name)
{
    json_t *i = json_object_get(c->index, name);

    return i ? &c->anchors[json_integer_value(i)] : NULL;
}

static void add_anchor(struct ctx *c, const char *name, json_t *v,
                       const yaml_event_t *ev, const struct stats *st)
{
    struct anchor *a;

    mu_xgrow((void **)&c->anchors, &c->cap_anchors, c->n_anchors + 1,
             sizeof(*c->anchors));
    a = &c->anchors[c->n_anchors];
    a->value = json_incref(v);
    a->text = NULL;
    a->text_len = 0;
    if (ev->type == YAML_SCALAR_EVENT) {
        a->text_len = ev->data.scalar.length;
        a->text = mu_xmalloc(a->text_len + 1);
        memcpy(a->text, ev->data.scalar.value, a->text_len + 1);
    }
    a->st = *st;
    jok(json_object_set_new(c->index, name,
                            jx(json_integer((json_int_t)c->n_anchors))));
    c->n_anchors++;
}

static void clear_anchors(struct ctx *c)
{
    size_t i;

    for (i = 0; i < c->n_anchors; i++) {
        json_decref(c->anchors[i].value);
        free(c->anchors[i].text);
    }
    c->n_anchors = 0;
    json_object_clear(c->index);
}

static int expand_alias(struct ctx *c, const yaml_event_t *ev, int depth,
                        json_t **out, struct stats *st)
{
    const char *name = (const char *)ev->data.alias.anchor;
    struct anchor *a = find_anchor(c, name);

    if (!a)
        return fail(c, -EINVAL, ev->start_mark,
                    "unknown anchor '%s' referenced", name);
    if (depth + a->st.height > MU_YAML_MAX_DEPTH)
        return fail(c, -E2BIG, ev->start_mark,
                    "nesting deeper than %d levels", MU_YAML_MAX_DEPTH);
    if (a->st.aliases >= MU_YAML_MAX_ALIASES - c->doc_aliases)
        return fail(c, -E2BIG, ev->start_mark,
                    "more than %d alias expansions in one document",
                    MU_YAML_MAX_ALIASES);
    if (a->st.nodes > MAX_ALIAS_NODES - c->alias_nodes)
        return fail(c, -E2BIG, ev->start_mark,
                    "aliases expand to more than %u nodes", MAX_ALIAS_NODES);
    c->doc_aliases += 1 + a->st.aliases;
    c->alias_nodes += a->st.nodes;
    *out = jx(json_deep_copy(a->value));
    *st = a->st;
    st->aliases++;
    return 0;
}

static void add_stats(struct stats *to, const struct stats *s)
{
    to->nodes += s->nodes;
    to->aliases += s->aliases;
    to->height = MU_MAX(to->height, s->height);
}

static int parse_node(struct ctx *c, yaml_event_t *ev, int depth, json_t **out,
                      struct stats *st);

/* Parses the next node (its first event not yet read) into *out. */
static int parse_next(struct ctx *c, int depth, json_t **out, struct stats *st,
                      yaml_mark_t *mark)
{
    yaml_event_t ev;
    int rc = next(c, &ev);

    if (rc)
        return rc;
    if (mark)
        *mark = ev.start_mark;
    return parse_node(c, &ev, depth, out, st);
}

static int parse_seq(struct ctx *c, int level, json_t *arr, struct stats *st)
{
    for (;;) {
        yaml_event_t ev;
        json_t *item;
        struct stats s;
        int rc = next(c, &ev);

        if (rc)
            return rc;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        rc = parse_node(c, &ev, level, &item, &s);
        if (rc)
            return rc;
        jok(json_array_append_new(arr, item));
        add_stats(st, &s);
    }
}

static bool is_merge_key(const yaml_event_t *ev)
{
    const char *tag = (const char *)ev->data.scalar.tag;

    if (ev->type != YAML_SCALAR_EVENT ||
        strcmp((const char *)ev->data.scalar.value, "<<") != 0)
        return false;
    if (tag)
        return strcmp(tag, TAG("merge")) == 0;
    return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* Queues the value of a `<<` key (steals v). */
static int add_merge(struct ctx *c, json_t *merges, json_t *v, yaml_mark_t m)
{
    size_t i;
    json_t *x;

    if (json_is_array(v)) {
        json_array_foreach(v, i, x)
        {
            if (!json_is_object(x))
                break;
        }
        if (i == json_array_size(v)) {
            jok(json_array_extend(merges, v));
            json_decref(v);
            return 0;
        }
    } else if (json_is_object(v)) {
        jok(json_array_append_new(merges, v));
        return 0;
    }
    json_decref(v);
    return fail(c, -EINVAL, m,
                "map merge requires map or sequence of maps as the value");
}

/* The text of the key whose first event is ev. */
static int key_text(struct ctx *c, const yaml_event_t *ev, const char **key,
                    size_t *len)
{
    struct anchor *a;

    if (ev->type == YAML_SCALAR_EVENT) {
        *key = (const char *)ev->data.scalar.value;
        *len = ev->data.scalar.length;
        return 0;
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        a = find_anchor(c, (const char *)ev->data.alias.anchor);
        if (!a)
            return fail(c, -EINVAL, ev->start_mark,
                        "unknown anchor '%s' referenced",
                        (const char *)ev->data.alias.anchor);
        if (a->text) {
            *key = a->text;
            *len = a->text_len;
            return 0;
        }
    }
    return fail(c, -EINVAL, ev->start_mark, "mapping key must be a scalar");
}

static char *line_key(const json_t *obj, const char *key, size_t len)
{
    return mu_xasprintf("%p/%.*s", (const void *)obj, (int)len, key);
}

static int parse_key_value(struct ctx *c, int level, yaml_event_t *k,
                           json_t *obj, struct stats *st)
{
    const char *key = NULL;
    size_t len = 0;
    json_t *v = NULL;
    struct stats s;
    int rc = key_text(c, k, &key, &len);

    if (rc)
        return rc;
    if (k->type == YAML_SCALAR_EVENT &&
        (k->data.scalar.tag || k->data.scalar.anchor)) {
        /* Checks the tag; an anchored key may be aliased as a value. */
        rc = scalar_value(c, k, &v);
        if (rc)
            return rc;
        if (k->data.scalar.anchor) {
            s = (struct stats){.nodes = 1};
            add_anchor(c, (const char *)k->data.scalar.anchor, v, k, &s);
        }
        json_decref(v);
    }
    if (json_object_getn(obj, key, len))
        return fail(c, -EINVAL, k->start_mark, "duplicate key \"%.*s\"",
                    (int)MU_MIN(len, 128), key);
    rc = parse_next(c, level, &v, &s, NULL);
    if (rc)
        return rc;
    jok(json_object_setn_new_nocheck(obj, key, len, v));
    add_stats(st, &s);
    if (c->lines && json_object_size(c->lines) < MU_YAML_MAX_LINE_KEYS &&
        !memchr(key, '\0', len)) {
        char *lk = line_key(obj, key, len);

        jok(json_object_set_new(c->lines, lk,
                                jx(json_integer((json_int_t)k->start_mark.line +
                                                1))));
        free(lk);
    }
    return 0;
}

static int parse_map(struct ctx *c, int level, json_t *obj, struct stats *st)
{
    json_t *merges = jx(json_array());
    json_t *src;
    size_t i;
    int rc;

    for (;;) {
        yaml_event_t k;
        yaml_mark_t m;
        json_t *v;
        struct stats s;

        rc = next(c, &k);
        if (rc)
            goto out;
        if (k.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&k);
            break;
        }
        if (is_merge_key(&k)) {
            yaml_event_delete(&k);
            rc = parse_next(c, level, &v, &s, &m);
            if (rc)
                goto out;
            add_stats(st, &s);
            rc = add_merge(c, merges, v, m);
        } else {
            rc = parse_key_value(c, level, &k, obj, st);
            yaml_event_delete(&k);
        }
        if (rc)
            goto out;
    }
    /* Explicit keys win; among merged maps the earlier one wins. */
    json_array_foreach(merges, i, src)
    {
        jok(json_object_update_missing(obj, src));
    }
out:
    json_decref(merges);
    return rc;
}

/* Takes ownership of ev, the node's first event. depth counts the
 * collections enclosing the node. */
static int parse_node(struct ctx *c, yaml_event_t *ev, int depth, json_t **out,
                      struct stats *st)
{
    const char *anchor = NULL;
    json_t *v = NULL;
    int rc;

    memset(st, 0, sizeof(*st));
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        rc = expand_alias(c, ev, depth, &v, st);
        break;
    case YAML_SCALAR_EVENT:
        anchor = (const char *)ev->data.scalar.anchor;
        st->nodes = 1;
        rc = scalar_value(c, ev, &v);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (depth + 1 > MU_YAML_MAX_DEPTH) {
            rc = fail(c, -E2BIG, ev->start_mark,
                      "nesting deeper than %d levels", MU_YAML_MAX_DEPTH);
            break;
        }
        if (ev->type == YAML_SEQUENCE_START_EVENT) {
            anchor = (const char *)ev->data.sequence_start.anchor;
            v = jx(json_array());
            rc = parse_seq(c, depth + 1, v, st);
        } else {
            anchor = (const char *)ev->data.mapping_start.anchor;
            v = jx(json_object());
            rc = parse_map(c, depth + 1, v, st);
        }
        st->nodes++;
        st->height++;
        break;
    default:
        rc = fail(c, -EINVAL, ev->start_mark, "unexpected YAML event");
        break;
    }
    if (!rc && anchor)
        add_anchor(c, anchor, v, ev, st);
    yaml_event_delete(ev);
    if (rc)
        json_decref(v);
    else
        *out = v;
    return rc;
}

static void docs_push(struct mu_yaml_docs *d, json_t *root, int line,
                      json_t *lines)
{
    mu_xgrow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v));
    d->v[d->n].root = root;
    d->v[d->n].line = line;
    d->v[d->n].lines = lines;
    d->n++;
}

static int parse_stream(struct ctx *c, struct mu_yaml_docs *out)
{
    for (;;) {
        yaml_event_t ev;
        yaml_event_type_t type;
        json_t *root;
        struct stats st;
        int line;
        int rc = next(c, &ev);

        if (rc)
            return rc;
        type = ev.type;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            return 0;
        if (type != YAML_DOCUMENT_START_EVENT)
            continue;
        rc = next(c, &ev);
        if (rc)
            return rc;
        line = (int)ev.start_mark.line + 1; /* input size bounds it */
        c->lines = jx(json_object());
        rc = parse_node(c, &ev, 0, &root, &st);
        if (rc) {
            json_decref(c->lines);
            c->lines = NULL;
            return rc;
        }
        clear_anchors(c);
        c->doc_aliases = 0;
        if (json_is_null(root)) {
            json_decref(root);
            json_decref(c->lines);
        } else {
            docs_push(out, root, line, c->lines);
        }
        c->lines = NULL;
    }
}

void mu_yaml_docs_init(struct mu_yaml_docs *d)
{
    d->n = 0;
    d->cap = 0;
    d->v = NULL;
}

void mu_yaml_docs_release(struct mu_yaml_docs *d)
{
    size_t i;

    for (i = 0; i < d->n; i++) {
        json_decref(d->v[i].root);
        json_decref(d->v[i].lines);
    }
    free(d->v);
    mu_yaml_docs_init(d);
}

int mu_yaml_parse(const char *name, const char *buf, size_t len,
                  struct mu_yaml_docs *docs, struct mu_err *err)
{
    struct ctx c = {
        .name = name, .buf = buf ? buf : "", .len = len, .err = err};
    struct mu_yaml_docs got;
    size_t i;
    int rc;

    if (len > MU_YAML_MAX_BYTES)
        return mu_err_set(err, -E2BIG, "%s: %zu bytes is more than the %u "
                          "allowed", name, len, MU_YAML_MAX_BYTES);
    if (!yaml_parser_initialize(&c.parser))
        return mu_err_set(err, -ENOMEM, "%s: out of memory", name);
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)c.buf,
                                 len);
    c.index = jx(json_object());
    mu_yaml_docs_init(&got);
    rc = parse_stream(&c, &got);
    clear_anchors(&c);
    free(c.anchors);
    json_decref(c.index);
    yaml_parser_delete(&c.parser);
    if (rc) {
        mu_yaml_docs_release(&got);
        return rc;
    }
    for (i = 0; i < got.n; i++)
        docs_push(docs, got.v[i].root, got.v[i].line, got.v[i].lines);
    free(got.v);
    return 0;
}

int mu_yaml_key_line(const struct mu_yaml_doc *d, const json_t *obj,
                     const char *key)
{
    char *lk;
    json_int_t line;

    if (!d || !d->lines || !obj || !key)
        return 0;
    lk = line_key(obj, key, strlen(key));
    line = json_integer_value(json_object_get(d->lines, lk));
    free(lk);
    return (int)line;
}

int mu_yaml_path_line(const struct mu_yaml_doc *d, const char *path)
{
    const json_t *cur = d ? d->root : NULL;
    int best = d ? d->line : 0;
    const char *p = path;

    while (cur && p && *p) {
        char key[256];
        size_t n = strcspn(p, ".[");
        int line;

        if (n == 0 || n >= sizeof(key))
            break;
        memcpy(key, p, n);
        key[n] = '\0';
        if (!json_is_object(cur) || !json_object_get(cur, key))
            break;
        if ((line = mu_yaml_key_line(d, cur, key)) > 0)
            best = line;
        cur = json_object_get(cur, key);
        p += n;
        while (*p == '[') { /* [index] steps into a sequence */
            char *end;
            long i = strtol(p + 1, &end, 10);

            if (*end != ']' || !json_is_array(cur) || i < 0 ||
                (size_t)i >= json_array_size(cur))
                return best;
            cur = json_array_get(cur, (size_t)i);
            p = end + 1;
        }
        if (*p == '.')
            p++;
        else
            break;
    }
    return best;
}

int mu_yaml_parse_file(const char *path, struct mu_yaml_docs *docs,
                       struct mu_err *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, want, got;
    int rc = 0;

    if (!f) {
        rc = -errno;
        return mu_err_set(err, rc, "%s: %s", path, strerror(-rc));
    }
    for (;;) {
        mu_xgrow((void **)&buf, &cap,
                 MU_MIN(len + 65536, (size_t)MU_YAML_MAX_BYTES + 1), 1);
        want = MU_MIN(cap, (size_t)MU_YAML_MAX_BYTES + 1) - len;
        errno = 0;
        got = fread(buf + len, 1, want, f);
        len += got;
        if (len > MU_YAML_MAX_BYTES) {
            rc = mu_err_set(err, -E2BIG, "%s: more than %u bytes", name,
                            MU_YAML_MAX_BYTES);
            break;
        }
        if (got < want) {
            if (ferror(f)) {
                rc = errno ? -errno : -EIO;
                mu_err_set(err, rc, "%s: %s", name, strerror(-rc));
            }
            break;
        }
    }
    if (!is_stdin)
        fclose(f);
    if (!rc)
        rc = mu_yaml_parse(name, buf, len, docs, err);
    free(buf);
    return rc;
}

char *mu_json_real_text(double v, char *buf, size_t n)
{
    char e[32], digits[20], out[48];
    const char *p;
    size_t nd = 0, o = 0;
    int prec, exp, i;
    double mag = fabs(v);

    if (!n)
        return buf;
    if (isnan(v) || isinf(v)) {
        snprintf(buf, n, "%s", isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf");
        return buf;
    }
    /* Shortest %.*e that reads back as v, then Go's 'f'/'e' choice. */
    for (prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec, v);
        if (strtod(e, NULL) == v)
            break;
    }
    for (p = e + (*e == '-'); *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    exp = (int)strtol(p + 1, NULL, 10);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (v < 0 || (v == 0 && signbit(v)))
        out[o++] = '-';
    if (mag != 0 && (mag < 1e-6 || mag >= 1e21)) {
        out[o++] = digits[0];
        if (nd > 1)
            out[o++] = '.';
        for (i = 1; i < (int)nd; i++)
            out[o++] = digits[i];
        o += (size_t)snprintf(out + o, sizeof(out) - o,
                              exp < 0 && exp > -10 ? "e-%d" : "e%+03d",
                              exp < 0 && exp > -10 ? -exp : exp);
    } else if (exp >= 0) {
        for (i = 0; i <= exp || i < (int)nd; i++) {
            if (i == exp + 1)
                out[o++] = '.';
            out[o++] = i < (int)nd ? digits[i] : '0';
        }
    } else {
        out[o++] = '0';
        out[o++] = '.';
        for (i = -1; i > exp; i--)
            out[o++] = '0';
        for (i = 0; i < (int)nd; i++)
            out[o++] = digits[i];
    }
    out[o] = '\0';
    snprintf(buf, n, "%s", out);
    return buf;
}
