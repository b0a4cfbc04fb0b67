#include "sched/topology.h"

#include "common/sort.h"
#include "sched/cluster.h"
#include "sched/conf.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

void mu_topo_init(struct mu_topo *t)
{
    memset(t, 0, sizeof(*t));
}

static void drop_domains(struct mu_topo *t)
{
    for (size_t i = 0; i < t->ndom; i++) {
        free(t->dom[i].name);
        free(t->dom[i].tier_name);
        free(t->dom[i].nodes);
    }
    free(t->dom);
    for (size_t i = 0; i < t->nwarn; i++)
        free(t->warn[i]);
    free(t->warn);
    t->dom = NULL;
    t->warn = NULL;
    t->ndom = t->nwarn = 0;
}

void mu_topo_free(struct mu_topo *t)
{
    drop_domains(t);
    for (size_t i = 0; i < t->nhn; i++)
        mu_hypernode_release(&t->hn[i]);
    free(t->hn);
    free(t->built_labels);
    memset(t, 0, sizeof(*t));
}

/* Index of name in t->hn, or -(insertion point) - 1. */
static long hn_find(const struct mu_topo *t, const char *name)
{
    size_t lo = 0, hi = t->nhn;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->hn[mid].meta.name, name);

        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

int mu_topo_put(struct mu_topo *t, struct mu_hypernode *h)
{
    long at = hn_find(t, h->meta.name);

    t->gen++;
    if (at >= 0) {
        mu_hypernode_release(&t->hn[at]);
        t->hn[at] = *h;
        memset(h, 0, sizeof(*h));
        return 0;
    }
    if (t->nhn >= MU_TOPO_MAX_HYPERNODES) {
        mu_hypernode_release(h);
        return -ENOSPC;
    }
    at = -at - 1;
    mu_xgrow((void **)&t->hn, &t->cap_hn, t->nhn + 1, sizeof(*t->hn));
    memmove(&t->hn[at + 1], &t->hn[at],
            (t->nhn - (size_t)at) * sizeof(*t->hn));
    t->hn[at] = *h;
    t->nhn++;
    memset(h, 0, sizeof(*h));
    return 0;
}

const struct mu_hypernode *mu_topo_hypernode(const struct mu_topo *t,
                                             const char *name)
{
    long at = hn_find(t, name);

    return at >= 0 ? &t->hn[at] : NULL;
}

bool mu_topo_remove(struct mu_topo *t, const char *name)
{
    long at = hn_find(t, name);

    if (at < 0)
        return false;
    t->gen++;
    mu_hypernode_release(&t->hn[at]);
    memmove(&t->hn[at], &t->hn[at + 1],
            (t->nhn - (size_t)at - 1) * sizeof(*t->hn));
    t->nhn--;
    return true;
}

bool mu_domain_has(const struct mu_domain *d, int n)
{
    size_t lo = 0, hi = d->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (d->nodes[mid] == n)
            return true;
        if (d->nodes[mid] < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ---- building ---- */

struct build {
    struct mu_topo *t;
    const struct mu_cluster *c;
    unsigned char *state;  /* per HyperNode: 0 new, 1 on the path, 2 done */
    size_t *dom_of;        /* per HyperNode: its domain's index */
    unsigned char *mark;   /* per node: scratch */
};

/* Adds w (owned) to t's warnings. */
static void add_warn(struct mu_topo *t, char *w)
{
    t->warn = mu_xrealloc(t->warn, (t->nwarn + 1) * sizeof(*t->warn));
    t->warn[t->nwarn++] = w;
}

static struct mu_domain *new_domain(struct mu_topo *t, char *name, int tier,
                                    const char *tier_name)
{
    struct mu_domain *d;

    t->dom = mu_xrealloc(t->dom, (t->ndom + 1) * sizeof(*t->dom));
    d = &t->dom[t->ndom++];
    memset(d, 0, sizeof(*d));
    d->name = name;
    d->tier = tier;
    d->tier_name = mu_xstrdup_or_null(tier_name);
    return d;
}

/* The nodes marked in b->mark, as d's list; clears the marks. */
static void take_marked(struct build *b, struct mu_domain *d)
{
    size_t n = 0;

    for (size_t i = 0; i < b->c->nnodes; i++)
        n += b->mark[i];
    d->nodes = mu_xcalloc(n ? n : 1, sizeof(*d->nodes));
    for (size_t i = 0; i < b->c->nnodes; i++)
        if (b->mark[i]) {
            d->nodes[d->n++] = (int)i;
            b->mark[i] = 0;
        }
}

static void mark_nodes(struct build *b, const struct mu_hn_member *m)
{
    const struct mu_cluster *c = b->c;

    if (m->how == MU_HN_EXACT) {
        struct mu_cnode *n = mu_map_get(&c->node_by_name, m->text);

        if (n)
            b->mark[n->index] = 1;
        return;
    }
    for (size_t i = 0; i < c->nnodes; i++)
        if (mu_hn_member_matches(m, c->nodes[i]->spec.meta.name,
                                 &c->nodes[i]->spec.meta.labels))
            b->mark[i] = 1;
}

static void build_hn(struct build *b, size_t k, int depth);

/* Marks the nodes of the HyperNodes m selects (built first). */
static void mark_children(struct build *b, size_t self,
                          const struct mu_hn_member *m, int depth)
{
    struct mu_topo *t = b->t;
    const struct mu_hypernode *h = &t->hn[self];

    for (size_t k = 0; k < t->nhn; k++) {
        const struct mu_domain *d;

        if (!mu_hn_member_matches(m, t->hn[k].meta.name,
                                  &t->hn[k].meta.labels))
            continue;
        if (b->state[k] == 1 ||
            (b->state[k] == 0 && depth >= MU_TOPO_MAX_DEPTH)) {
            add_warn(t, mu_xasprintf("HyperNode %s: member HyperNode %s "
                                     "would contain %s itself (or nests "
                                     "deeper than %d): left out",
                                     h->meta.name, t->hn[k].meta.name,
                                     h->meta.name, MU_TOPO_MAX_DEPTH));
            continue;
        }
        build_hn(b, k, depth + 1);
        d = &t->dom[b->dom_of[k]];
        for (size_t i = 0; i < d->n; i++)
            b->mark[d->nodes[i]] = 1;
    }
}

/* Builds HyperNode k's domain. b->mark is the caller's scratch (a parent
 * marking its members' nodes): it is set aside on entry and given back
 * as it was, so one child's nodes never land in a sibling's domain. */
static void build_hn(struct build *b, size_t k, int depth)
{
    struct mu_topo *t = b->t;
    const struct mu_hypernode *h = &t->hn[k];
    size_t nn = b->c->nnodes;
    unsigned char *saved;
    size_t di;

    if (b->state[k] == 2)
        return;
    b->state[k] = 1;
    saved = mu_xcalloc(nn ? nn : 1, 1);
    memcpy(saved, b->mark, nn);
    memset(b->mark, 0, nn);
    for (size_t i = 0; i < h->nmembers; i++)
        if (h->members[i].hypernode)
            mark_children(b, k, &h->members[i], depth);
        else
            mark_nodes(b, &h->members[i]);
    di = t->ndom;
    take_marked(b, new_domain(t, mu_xstrdup(h->meta.name), h->tier,
                              h->tier_name)); /* clears the marks */
    memcpy(b->mark, saved, nn);
    free(saved);
    b->dom_of[k] = di;
    b->state[k] = 2;
}

struct lblent {
    const char *value;
    int node;
};

static int lbl_cmp(const void *a, const void *b, void *ctx)
{
    const struct lblent *x = a, *y = b;
    int c = strcmp(x->value, y->value);

    (void)ctx;
    return c ? c : (x->node > y->node) - (x->node < y->node);
}

static void build_labels(struct build *b, int tier, const char *label,
                         const char *tier_name)
{
    const struct mu_cluster *c = b->c;
    struct lblent *ents = mu_xcalloc(c->nnodes ? c->nnodes : 1,
                                     sizeof(*ents));
    struct lblent **ptrs = mu_xcalloc(c->nnodes ? c->nnodes : 1,
                                      sizeof(*ptrs));
    size_t n = 0;

    for (size_t i = 0; i < c->nnodes; i++) {
        const char *v = mu_kvs_get(&c->nodes[i]->spec.meta.labels, label);

        if (!v)
            continue;
        ents[n].value = v;
        ents[n].node = (int)i;
        ptrs[n] = &ents[n];
        n++;
    }
    mu_sort_ptrs((void **)ptrs, n, lbl_cmp, NULL);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        struct mu_domain *d = new_domain(
            b->t, mu_xasprintf("%s=%s", label, ptrs[i]->value), tier,
            tier_name);

        while (j < n && !strcmp(ptrs[j]->value, ptrs[i]->value))
            j++;
        d->nodes = mu_xcalloc(j - i, sizeof(*d->nodes));
        for (size_t k = i; k < j; k++)
            d->nodes[d->n++] = ptrs[k]->node;
        i = j;
    }
    free(ptrs);
    free(ents);
}

static int dom_cmp(const void *a, const void *b, void *ctx)
{
    const struct mu_domain *x = a, *y = b;

    (void)ctx;
    if (x->tier != y->tier)
        return x->tier < y->tier ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* conf's label tiers as one text, to see them change */
static char *labels_sig(const struct mu_conf *conf)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "");
    for (size_t i = 0; conf && i < conf->nlabel_tiers; i++)
        mu_sb_addf(&sb, "%s\n%s\n", conf->label_tiers[i].label,
                   conf->label_tiers[i].name);
    return mu_sb_detach(&sb);
}

void mu_topo_sync(struct mu_topo *t, const struct mu_cluster *c,
                  const struct mu_conf *conf)
{
    char *sig = labels_sig(conf);
    struct build b = {t, c, NULL, NULL, NULL};
    struct mu_domain *sorted, **ptrs;

    if (t->built && t->built_gen == t->gen &&
        t->built_node_gen == c->node_set_gen && !strcmp(sig, t->built_labels)) {
        free(sig);
        return;
    }
    drop_domains(t);
    free(t->built_labels);
    t->built_labels = sig;
    t->built = true;
    t->builds++;
    t->built_gen = t->gen;
    t->built_node_gen = c->node_set_gen;
    b.state = mu_xcalloc(t->nhn ? t->nhn : 1, 1);
    b.dom_of = mu_xcalloc(t->nhn ? t->nhn : 1, sizeof(*b.dom_of));
    b.mark = mu_xcalloc(c->nnodes ? c->nnodes : 1, 1);
    for (size_t k = 0; k < t->nhn; k++)
        build_hn(&b, k, 0);
    for (size_t i = 0; conf && i < conf->nlabel_tiers; i++)
        build_labels(&b, (int)i + 1, conf->label_tiers[i].label,
                     conf->label_tiers[i].name);
    free(b.state);
    free(b.dom_of);
    free(b.mark);
    t->warn_sig = 0;
    for (size_t i = 0; i < t->nwarn; i++)
        t->warn_sig = t->warn_sig * 31 + mu_hash_str(t->warn[i]);

    /* by tier, then name */
    ptrs = mu_xcalloc(t->ndom ? t->ndom : 1, sizeof(*ptrs));
    for (size_t i = 0; i < t->ndom; i++)
        ptrs[i] = &t->dom[i];
    mu_sort_ptrs((void **)ptrs, t->ndom, dom_cmp, NULL);
    sorted = mu_xcalloc(t->ndom ? t->ndom : 1, sizeof(*sorted));
    for (size_t i = 0; i < t->ndom; i++)
        sorted[i] = *ptrs[i];
    free(ptrs);
    free(t->dom);
    t->dom = sorted;
}

int mu_topo_tier_named(const struct mu_topo *t, const char *name)
{
    int tier = -1;

    for (size_t i = 0; i < t->ndom; i++)
        if (t->dom[i].tier_name && !strcmp(t->dom[i].tier_name, name) &&
            t->dom[i].tier > tier)
            tier = t->dom[i].tier;
    return tier;
}

int mu_topo_tier_limit(const struct mu_topo *t, const struct mu_netopo *nt)
{
    int limit = nt->highest_tier >= 0 ? nt->highest_tier : INT_MAX;

    if (nt->highest_tier_name) {
        int named = t ? mu_topo_tier_named(t, nt->highest_tier_name) : -1;

        if (named < 0)
            return -1;
        if (named < limit)
            limit = named;
    }
    return limit;
}
