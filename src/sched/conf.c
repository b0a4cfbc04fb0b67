#include "sched/conf.h"

#include <inttypes.h>

#include "api/yaml.h"
#include "plugin_list.h"

static const char *const action_names[MU_ACT__COUNT] = {
#define X(id, name) [MU_ACT_##id] = #name,
    MU_ACTION_LIST(X)
#undef X
};

/* "enqueue, allocate, ...": what an unknown action's message lists. */
#define X(id, name) ", " #name
static const char known_actions[] = MU_ACTION_LIST(X);
#undef X

static const char *const volcano_only_actions[] = {
    "shuffle", "gangpreempt", "gangreclaim", NULL,
};

static const char *const flag_keys[MU_FLAG__COUNT] = {
    [MU_FLAG_JOB_ORDER] = "enableJobOrder",
    [MU_FLAG_HIERARCHY] = "enableHierarchy",
    [MU_FLAG_JOB_READY] = "enableJobReady",
    [MU_FLAG_JOB_PIPELINED] = "enableJobPipelined",
    [MU_FLAG_TASK_ORDER] = "enableTaskOrder",
    [MU_FLAG_PREEMPTABLE] = "enablePreemptable",
    [MU_FLAG_RECLAIMABLE] = "enableReclaimable",
    [MU_FLAG_PREEMPTIVE] = "enablePreemptive",
    [MU_FLAG_QUEUE_ORDER] = "enableQueueOrder",
    [MU_FLAG_CLUSTER_ORDER] = "enabledClusterOrder",
    [MU_FLAG_PREDICATE] = "enablePredicate",
    [MU_FLAG_BEST_NODE] = "enableBestNode",
    [MU_FLAG_NODE_ORDER] = "enableNodeOrder",
    [MU_FLAG_TARGET_JOB] = "enableTargetJob",
    [MU_FLAG_RESERVED_NODES] = "enableReservedNodes",
    [MU_FLAG_JOB_ENQUEUED] = "enableJobEnqueued",
    [MU_FLAG_VICTIM] = "enabledVictim",
    [MU_FLAG_JOB_STARVING] = "enableJobStarving",
    [MU_FLAG_OVERUSED] = "enabledOverused",
    [MU_FLAG_ALLOCATABLE] = "enabledAllocatable",
    [MU_FLAG_HYPERNODE_ORDER] = "enabledHyperNodeOrder",
    [MU_FLAG_SUBJOB_READY] = "enabledSubJobReady",
    [MU_FLAG_SUBJOB_PIPELINED] = "enabledSubJobPipelined",
    [MU_FLAG_SUBJOB_ORDER] = "enabledSubJobOrder",
    [MU_FLAG_HYPERNODE_GRADIENT] = "enabledHyperNodeGradient",
};

const char *const mu_conf_known_plugins[] = {
#define X(name) #name,
    MU_PLUGIN_LIST(X)
#undef X
    NULL,
};

/* Registered by Volcano's scheduler (pkg/scheduler/plugins/factory.go). */
static const char *const volcano_only_plugins[] = {
    "sla",         "deviceshare",
    "tdm",         "numa-aware",    "task-topology",
    "nodegroup",   "usage",         "resource-strategy-fit",
    "cdp",         "pdb",           "rescheduling",
    "extender",    "resourcequota", "network-topology-aware",
    NULL,
};

const char mu_conf_default_text[] =
    "actions: \"enqueue, allocate, backfill, reclaim, preempt\"\n"
    "tiers:\n"
    "- plugins:\n"
    "  - name: priority\n"
    "  - name: gang\n"
    "    enablePreemptable: false\n"
    "  - name: conformance\n"
    "- plugins:\n"
    "  - name: overcommit\n"
    "  - name: drf\n"
    "    enablePreemptable: false\n"
    "  - name: predicates\n"
    "  - name: proportion\n"
    "  - name: nodeorder\n"
    "  - name: binpack\n";

const char *mu_action_name(enum mu_action a)
{
    return (unsigned)a < MU_ACT__COUNT ? action_names[a] : NULL;
}

const char *mu_flag_key(enum mu_flag f)
{
    return (unsigned)f < MU_FLAG__COUNT ? flag_keys[f] : NULL;
}

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

static json_t *new_object(void)
{
    json_t *o = json_object();

    if (!o) {
        fprintf(stderr, "muster: out of memory allocating a JSON object\n");
        abort();
    }
    return o;
}

/* Adds a warning unless the same text is already there: argument getters
 * may run every cycle and must not grow the list each time. */
static void add_warning(struct mu_conf *c, char *msg)
{
    for (size_t i = 0; i < c->nwarnings; i++) {
        if (strcmp(c->warnings[i], msg) == 0) {
            free(msg);
            return;
        }
    }
    c->warnings =
        mu_xrealloc(c->warnings, (c->nwarnings + 1) * sizeof(*c->warnings));
    c->warnings[c->nwarnings++] = msg;
}

struct ctx {
    const char *name;
    struct mu_conf *c;
    struct mu_err *err;
};

static MU_PRINTF(2, 3) int bad(struct ctx *x, const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;
    int rc;

    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    rc = mu_err_set(x->err, -EINVAL, "%s: %s", x->name, sb.buf);
    mu_sb_release(&sb);
    return rc;
}

static MU_PRINTF(2, 3) void warn(struct ctx *x, const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    mu_sb_init(&sb);
    mu_sb_addf(&sb, "%s: ", x->name);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    add_warning(x->c, mu_sb_detach(&sb));
}

static int find_action(const char *s, size_t n)
{
    for (int a = 0; a < MU_ACT__COUNT; a++)
        if (strlen(action_names[a]) == n && memcmp(action_names[a], s, n) == 0)
            return a;
    return -1;
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
           ch == '\v' || ch == '\f';
}

static int parse_actions(struct ctx *x, json_t *v)
{
    const char *s, *p;
    int count = 1;

    if (!v || json_is_null(v))
        return bad(x, "actions: missing (want e.g. \"enqueue, allocate, "
                      "backfill\")");
    if (!json_is_string(v))
        return bad(x, "actions: want one comma-separated string like "
                      "\"enqueue, allocate, backfill\"");
    s = json_string_value(v);
    for (p = s; *p; p++)
        count += *p == ',';
    if (count > MU_CONF_MAX_ACTIONS)
        return bad(x, "actions: %d listed, at most %d allowed", count,
                   MU_CONF_MAX_ACTIONS);

    for (p = s;;) {
        const char *end = strchr(p, ',');
        size_t n;
        int a;

        if (!end)
            end = p + strlen(p);
        while (p < end && is_space(*p))
            p++;
        n = (size_t)(end - p);
        while (n > 0 && is_space(p[n - 1]))
            n--;
        if (n == 0) {
            if (count == 1)
                return bad(x, "actions: no action listed");
            return bad(x, "actions: empty name in \"%s\"", s);
        }
        a = find_action(p, n);
        if (a < 0) {
            char *word = mu_xmalloc(n + 1);
            int rc;

            memcpy(word, p, n);
            word[n] = '\0';
            if (in_list(volcano_only_actions, word))
                rc = bad(x, "actions: action \"%s\" is not supported by "
                            "muster", word);
            else
                rc = bad(x, "actions: unknown action \"%s\" (known: %s)",
                         word, known_actions + 2);
            free(word);
            return rc;
        }
        for (int i = 0; i < x->c->nactions; i++)
            if (x->c->actions[i] == (enum mu_action)a)
                return bad(x, "actions: \"%s\" listed twice",
                           action_names[a]);
        x->c->actions[x->c->nactions++] = (enum mu_action)a;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* A plugin name already seen, for the duplicate check. */
struct seen {
    const char *name;
    int tier, idx;
};

static int parse_plugin(struct ctx *x, json_t *p, int ti, int pi,
                        struct seen *seen, int *nseen, bool *hdrf,
                        bool *prop)
{
    struct mu_tier *t = &x->c->tiers[ti];
    struct mu_plugin_opt *o;
    json_t *nv, *args = NULL, *v;
    uint32_t off = 1u << MU_FLAG_HIERARCHY; /* off unless given */
    const char *name, *key;

    if (!json_is_object(p))
        return bad(x, "tiers[%d].plugins[%d]: want a mapping with a name",
                   ti, pi);
    nv = json_object_get(p, "name");
    if (!nv || json_is_null(nv))
        return bad(x, "tiers[%d].plugins[%d]: missing name", ti, pi);
    if (!json_is_string(nv))
        return bad(x, "tiers[%d].plugins[%d].name: want a string", ti, pi);
    name = json_string_value(nv);

    if (!in_list(mu_conf_known_plugins, name) &&
        !in_list(volcano_only_plugins, name))
        return bad(x, "tiers[%d].plugins[%d].name: unknown plugin \"%s\"", ti,
                   pi, name);
    for (int i = 0; i < *nseen; i++)
        if (strcmp(seen[i].name, name) == 0)
            return bad(x, "tiers[%d].plugins[%d].name: plugin \"%s\" listed "
                          "twice (first at tiers[%d].plugins[%d])",
                       ti, pi, name, seen[i].tier, seen[i].idx);
    seen[(*nseen)++] = (struct seen){name, ti, pi};
    if (in_list(volcano_only_plugins, name) &&
        !strcmp(name, "network-topology-aware")) {
        warn(x, "tiers[%d].plugins[%d].name: plugin \"%s\" is left out: "
                "muster places networkTopology gangs in one HyperNode without "
                "it (nearest tier, then fullest domain first)", ti, pi, name);
        return 0;
    }
    if (in_list(volcano_only_plugins, name)) {
        warn(x, "tiers[%d].plugins[%d].name: plugin \"%s\" is not supported "
                "by muster and is ignored", ti, pi, name);
        return 0;
    }

    json_object_foreach(p, key, v) {
        int f;

        if (strcmp(key, "name") == 0)
            continue;
        if (strcmp(key, "arguments") == 0) {
            if (!json_is_null(v) && !json_is_object(v))
                return bad(x, "tiers[%d].plugins[%d].arguments: want a "
                              "mapping", ti, pi);
            args = json_is_object(v) ? v : NULL;
            continue;
        }
        for (f = 0; f < MU_FLAG__COUNT; f++)
            if (strcmp(key, flag_keys[f]) == 0)
                break;
        if (f == MU_FLAG__COUNT) {
            warn(x, "tiers[%d].plugins[%d].%s: unknown key, ignored", ti, pi,
                 key);
            continue;
        }
        if (!json_is_boolean(v))
            return bad(x, "tiers[%d].plugins[%d].%s: want true or false", ti,
                       pi, key);
        if (json_is_false(v)) {
            off |= 1u << f;
        } else if (f == MU_FLAG_HIERARCHY) {
            off &= ~(1u << f);
            /* Volcano's conflict check wants hierarchy given explicitly. */
            if (strcmp(name, "drf") == 0)
                *hdrf = true;
        }
    }

    if (strcmp(name, "proportion") == 0)
        *prop = true;
    o = &t->plugins[t->n++];
    o->name = mu_xstrdup(name);
    o->off = off;
    o->args = args ? json_incref(args) : new_object();
    return 0;
}

static int parse_tier(struct ctx *x, json_t *tier, int ti, struct seen *seen,
                      int *nseen)
{
    json_t *plugins = NULL, *v;
    bool hdrf = false, prop = false;
    const char *key;
    size_t n;

    if (!json_is_object(tier))
        return bad(x, "tiers[%d]: want a mapping with plugins", ti);
    json_object_foreach(tier, key, v) {
        if (strcmp(key, "plugins") == 0)
            plugins = v;
        else
            warn(x, "tiers[%d].%s: unknown key, ignored", ti, key);
    }
    if (plugins && !json_is_null(plugins) && !json_is_array(plugins))
        return bad(x, "tiers[%d].plugins: want a list", ti);
    n = json_is_array(plugins) ? json_array_size(plugins) : 0;
    if (n == 0) {
        warn(x, "tiers[%d]: no plugins", ti);
        return 0;
    }
    if (n > MU_CONF_MAX_PLUGINS)
        return bad(x, "tiers[%d].plugins: %zu listed, at most %d allowed", ti,
                   n, MU_CONF_MAX_PLUGINS);
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(plugins, i);
        int rc = parse_plugin(x, p, ti, (int)i, seen, nseen, &hdrf, &prop);

        if (rc)
            return rc;
    }
    if (hdrf && prop)
        return bad(x, "tiers[%d]: proportion and drf with hierarchy enabled "
                      "conflicts", ti);
    return 0;
}

static const struct mu_plugin_opt *find_plugin(const struct mu_conf *c,
                                               const char *name)
{
    for (int t = 0; t < c->ntiers; t++)
        for (int i = 0; i < c->tiers[t].n; i++)
            if (strcmp(c->tiers[t].plugins[i].name, name) == 0)
                return &c->tiers[t].plugins[i];
    return NULL;
}

enum mu_conf_share mu_conf_share(const struct mu_conf *c)
{
    const struct mu_plugin_opt *o = find_plugin(c, "capacity");

    if (o)
        return mu_plugin_opt_on(o, MU_FLAG_HIERARCHY) ? MU_SHARE_TREE
                                                      : MU_SHARE_CAPACITY;
    return find_plugin(c, "proportion") ? MU_SHARE_PROPORTION
                                        : MU_SHARE_NONE;
}

static int parse_tiers(struct ctx *x, json_t *tiers)
{
    struct seen seen[MU_CONF_MAX_TIERS * MU_CONF_MAX_PLUGINS];
    int nseen = 0;
    size_t n;

    if (!tiers || json_is_null(tiers)) {
        warn(x, "tiers: none listed, so no plugin runs");
        return 0;
    }
    if (!json_is_array(tiers))
        return bad(x, "tiers: want a list of {plugins: [...]}");
    n = json_array_size(tiers);
    if (n == 0) {
        warn(x, "tiers: none listed, so no plugin runs");
        return 0;
    }
    if (n > MU_CONF_MAX_TIERS)
        return bad(x, "tiers: %zu listed, at most %d allowed", n,
                   MU_CONF_MAX_TIERS);
    for (size_t i = 0; i < n; i++) {
        int rc;

        x->c->ntiers++; /* first, so a failure releases this tier too */
        rc = parse_tier(x, json_array_get(tiers, i), (int)i, seen, &nseen);
        if (rc)
            return rc;
    }
    if (find_plugin(x->c, "proportion") && find_plugin(x->c, "capacity"))
        return bad(x, "tiers: proportion and capacity both share the cluster "
                      "between queues (weights, deserved values): name one");
    return 0;
}

static int parse_configurations(struct ctx *x, json_t *list)
{
    size_t i;
    json_t *item;

    x->c->configurations = new_object();
    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return bad(x, "configurations: want a list of {name, arguments}");
    json_array_foreach(list, i, item) {
        json_t *nv, *args = NULL, *v;
        const char *name, *key;

        if (!json_is_object(item))
            return bad(x, "configurations[%zu]: want a mapping with a name",
                       i);
        nv = json_object_get(item, "name");
        if (!nv || json_is_null(nv))
            return bad(x, "configurations[%zu]: missing name", i);
        if (!json_is_string(nv))
            return bad(x, "configurations[%zu].name: want a string", i);
        name = json_string_value(nv);
        json_object_foreach(item, key, v) {
            if (strcmp(key, "arguments") == 0) {
                if (!json_is_null(v) && !json_is_object(v))
                    return bad(x, "configurations[%zu].arguments: want a "
                                  "mapping", i);
                args = json_is_object(v) ? v : NULL;
            } else if (strcmp(key, "name") != 0) {
                warn(x, "configurations[%zu].%s: unknown key, ignored", i,
                     key);
            }
        }
        if (find_action(name, strlen(name)) < 0) {
            warn(x, "configurations[%zu].name: unknown action \"%s\", "
                    "ignored", i, name);
            continue;
        }
        if (json_object_get(x->c->configurations, name))
            return bad(x, "configurations[%zu].name: action \"%s\" "
                          "configured twice", i, name);
        if (json_object_set_new(x->c->configurations, name,
                                args ? json_incref(args) : new_object())) {
            fprintf(stderr, "muster: out of memory in configurations\n");
            abort();
        }
    }
    return 0;
}

/* reclaim takes from queues over their share; with no plugin that knows
 * the shares (proportion, reclaim on), every queue is a victim of every
 * other and evicted gangs win their GPUs back at the next cycle, for ever
 * (issue 12: 345,484 evictions in a day). So reclaim does nothing then,
 * and the configuration says so once. */
static void check_reclaim(struct ctx *x)
{
    bool listed = false;

    for (int i = 0; i < x->c->nactions; i++)
        listed |= x->c->actions[i] == MU_ACT_RECLAIM;
    if (!listed)
        return;
    for (int t = 0; t < x->c->ntiers; t++)
        for (int i = 0; i < x->c->tiers[t].n; i++) {
            const struct mu_plugin_opt *o = &x->c->tiers[t].plugins[i];

            if ((strcmp(o->name, "proportion") == 0 ||
                 strcmp(o->name, "capacity") == 0) &&
                mu_plugin_opt_on(o, MU_FLAG_RECLAIMABLE))
                return;
        }
    x->c->reclaim_inert = true;
    warn(x, "action reclaim: no plugin in the tiers shares the cluster "
            "between queues (proportion or capacity, with "
            "enableReclaimable): reclaim does nothing");
}

/* deviceClassMappings: [{name: RESOURCE, deviceClassNames: [CLASS...]}] */
static int parse_devmaps(struct ctx *x, json_t *list)
{
    size_t i, k;
    json_t *item, *cls;

    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return bad(x, "deviceClassMappings: want a list of {name, "
                      "deviceClassNames}");
    json_array_foreach(list, i, item) {
        const char *res = json_string_value(json_object_get(item, "name"));
        json_t *names = json_object_get(item, "deviceClassNames");

        if (!res || !*res)
            return bad(x, "deviceClassMappings[%zu].name: want a resource "
                          "name", i);
        if (!json_is_array(names) || !json_array_size(names))
            return bad(x, "deviceClassMappings[%zu].deviceClassNames: want "
                          "a list of DeviceClass names", i);
        json_array_foreach(names, k, cls) {
            const char *c = json_string_value(cls);
            struct mu_devmap *m;

            if (!c || !*c)
                return bad(x, "deviceClassMappings[%zu].deviceClassNames[%zu]"
                              ": want a DeviceClass name", i, k);
            for (size_t j = 0; j < x->c->ndevmaps; j++)
                if (!strcmp(x->c->devmaps[j].class_name, c))
                    return bad(x, "deviceClassMappings[%zu]."
                                  "deviceClassNames[%zu]: class \"%s\" is "
                                  "mapped twice", i, k, c);
            if (x->c->ndevmaps >= MU_CONF_MAX_DEVMAPS)
                return bad(x, "deviceClassMappings: more than %d classes",
                           MU_CONF_MAX_DEVMAPS);
            x->c->devmaps = mu_xrealloc(x->c->devmaps,
                                        (x->c->ndevmaps + 1) *
                                            sizeof(*x->c->devmaps));
            m = &x->c->devmaps[x->c->ndevmaps++];
            m->class_name = mu_xstrdup(c);
            m->resource = mu_xstrdup(res);
        }
    }
    return 0;
}

/* hyperNodeTiers: [{nodeLabel: LABEL, tierName: NAME}], tier 1 first */
static int parse_label_tiers(struct ctx *x, json_t *list)
{
    size_t i;
    json_t *item;

    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return bad(x, "hyperNodeTiers: want a list of {nodeLabel, tierName}, "
                      "tier 1 first");
    if (json_array_size(list) > MU_CONF_MAX_LABEL_TIERS)
        return bad(x, "hyperNodeTiers: more than %d tiers",
                   MU_CONF_MAX_LABEL_TIERS);
    x->c->label_tiers = mu_xcalloc(json_array_size(list) + 1,
                                   sizeof(*x->c->label_tiers));
    json_array_foreach(list, i, item) {
        const char *label = json_string_value(json_object_get(item, "nodeLabel"));
        json_t *tn = json_object_get(item, "tierName");
        const char *key;
        json_t *v;

        if (!json_is_object(item) || !label || !*label)
            return bad(x, "hyperNodeTiers[%zu].nodeLabel: want a node label "
                          "key", i);
        if (tn && !json_is_null(tn) && !json_is_string(tn))
            return bad(x, "hyperNodeTiers[%zu].tierName: want a string", i);
        json_object_foreach(item, key, v)
            if (strcmp(key, "nodeLabel") && strcmp(key, "tierName"))
                warn(x, "hyperNodeTiers[%zu].%s: unknown key, ignored", i,
                     key);
        for (size_t k = 0; k < x->c->nlabel_tiers; k++)
            if (!strcmp(x->c->label_tiers[k].label, label))
                return bad(x, "hyperNodeTiers[%zu].nodeLabel: \"%s\" is "
                              "tier %zu already", i, label, k + 1);
        x->c->label_tiers[x->c->nlabel_tiers].label = mu_xstrdup(label);
        x->c->label_tiers[x->c->nlabel_tiers].name = mu_xstrdup(
            json_is_string(tn) && *json_string_value(tn)
                ? json_string_value(tn)
                : label);
        x->c->nlabel_tiers++;
    }
    return 0;
}

static int parse_root(struct ctx *x, json_t *root)
{
    const char *key;
    json_t *v;
    int rc;

    if (!json_is_object(root))
        return bad(x, "want a mapping with actions and tiers");
    json_object_foreach(root, key, v) {
        if (strcmp(key, "actions") != 0 && strcmp(key, "tiers") != 0 &&
            strcmp(key, "configurations") != 0 && strcmp(key, "metrics") != 0 &&
            strcmp(key, "deviceClassMappings") != 0 &&
            strcmp(key, "hyperNodeTiers") != 0)
            warn(x, "%s: unknown key, ignored", key);
    }
    rc = parse_actions(x, json_object_get(root, "actions"));
    if (!rc)
        rc = parse_tiers(x, json_object_get(root, "tiers"));
    if (!rc)
        rc = parse_configurations(x, json_object_get(root, "configurations"));
    if (!rc)
        rc = parse_devmaps(x, json_object_get(root, "deviceClassMappings"));
    if (!rc)
        rc = parse_label_tiers(x, json_object_get(root, "hyperNodeTiers"));
    if (!rc)
        check_reclaim(x);
    return rc;
}

int mu_conf_parse(const char *name, const char *text, size_t len,
                  struct mu_conf *out, struct mu_err *err)
{
    struct ctx x = {name, out, err};
    struct mu_yaml_docs docs;
    int rc;

    memset(out, 0, sizeof(*out));
    if (len > MU_CONF_MAX_BYTES)
        return mu_err_set(err, -E2BIG, "%s: larger than %u bytes", name,
                          MU_CONF_MAX_BYTES);
    mu_yaml_docs_init(&docs);
    rc = mu_yaml_parse(name, text, len, &docs, err);
    if (rc)
        goto out;
    if (docs.n == 0)
        rc = bad(&x, "empty configuration");
    else if (docs.n > 1)
        rc = mu_err_set(err, -EINVAL,
                        "%s:%d: want one YAML document, found another",
                        name, docs.v[1].line);
    else
        rc = parse_root(&x, docs.v[0].root);
out:
    mu_yaml_docs_release(&docs);
    if (rc)
        mu_conf_release(out);
    return rc;
}

int mu_conf_load_file(const char *path, struct mu_conf *out,
                      struct mu_err *err)
{
    char *buf = mu_xmalloc(MU_CONF_MAX_BYTES + 1);
    FILE *f;
    size_t n;
    int rc;

    memset(out, 0, sizeof(*out));
    f = fopen(path, "rb");
    if (!f) {
        rc = -errno;
        mu_err_set(err, rc, "%s: %s", path, strerror(-rc));
        goto out;
    }
    n = fread(buf, 1, MU_CONF_MAX_BYTES + 1, f);
    if (ferror(f)) {
        rc = errno ? -errno : -EIO;
        mu_err_set(err, rc, "%s: %s", path, strerror(-rc));
    } else {
        rc = mu_conf_parse(path, buf, n, out, err);
    }
    fclose(f);
out:
    free(buf);
    return rc;
}

void mu_conf_default(struct mu_conf *out)
{
    struct mu_err err;

    if (mu_conf_parse("built-in configuration", mu_conf_default_text,
                      sizeof(mu_conf_default_text) - 1, out, &err) != 0) {
        fprintf(stderr, "muster: %s\n", err.msg);
        abort();
    }
    if (out->nwarnings) {
        fprintf(stderr, "muster: %s\n", out->warnings[0]);
        abort();
    }
}

void mu_conf_release(struct mu_conf *c)
{
    for (size_t i = 0; i < c->ndevmaps; i++) {
        free(c->devmaps[i].class_name);
        free(c->devmaps[i].resource);
    }
    free(c->devmaps);
    for (size_t i = 0; i < c->nlabel_tiers; i++) {
        free(c->label_tiers[i].label);
        free(c->label_tiers[i].name);
    }
    free(c->label_tiers);
    for (int t = 0; t < c->ntiers; t++) {
        for (int i = 0; i < c->tiers[t].n; i++) {
            free(c->tiers[t].plugins[i].name);
            json_decref(c->tiers[t].plugins[i].args);
        }
    }
    json_decref(c->configurations);
    for (size_t i = 0; i < c->nwarnings; i++)
        free(c->warnings[i]);
    free(c->warnings);
    memset(c, 0, sizeof(*c));
}

/* "string \"x\"", "integer 3", "a list" ... for argument warnings. */
static void describe(struct mu_sb *sb, json_t *v)
{
    char num[40];

    switch (json_typeof(v)) {
    case JSON_STRING: {
        char *q = json_dumps(v, JSON_ENCODE_ANY);

        if (!q) {
            fprintf(stderr, "muster: out of memory quoting a string\n");
            abort();
        }
        if (strlen(q) > 66)
            mu_sb_addf(sb, "string %.62s...\"", q);
        else
            mu_sb_addf(sb, "string %s", q);
        free(q);
        break;
    }
    case JSON_INTEGER:
        mu_sb_addf(sb, "integer %" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        mu_sb_addf(sb, "number %s",
                   mu_json_real_text(json_real_value(v), num, sizeof(num)));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        mu_sb_addf(sb, "boolean %s", json_is_true(v) ? "true" : "false");
        break;
    case JSON_NULL:
        mu_sb_add(sb, "null");
        break;
    case JSON_OBJECT:
        mu_sb_add(sb, "a mapping");
        break;
    case JSON_ARRAY:
        mu_sb_add(sb, "a list");
        break;
    }
}

static void arg_warn(struct mu_conf *c, const struct mu_plugin_opt *o,
                     const char *key, json_t *v, const char *want,
                     const char *using)
{
    struct mu_sb sb;

    if (!c)
        return;
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "plugin %s: argument %s: want %s, got ", o->name, key,
               want);
    describe(&sb, v);
    mu_sb_addf(&sb, "; using %s", using);
    add_warning(c, mu_sb_detach(&sb));
}

void mu_conf_arg_warn(struct mu_conf *c, const struct mu_plugin_opt *o,
                      const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    if (!c)
        return;
    mu_sb_init(&sb);
    mu_sb_addf(&sb, "plugin %s: ", o->name);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    add_warning(c, mu_sb_detach(&sb));
}

static json_t *arg_get(const struct mu_plugin_opt *o, const char *key)
{
    return o->args ? json_object_get(o->args, key) : NULL;
}

int64_t mu_conf_arg_int(struct mu_conf *c, const struct mu_plugin_opt *o,
                        const char *key, int64_t def)
{
    json_t *v = arg_get(o, key);
    char buf[24];

    if (!v || json_is_integer(v))
        return v ? (int64_t)json_integer_value(v) : def;
    snprintf(buf, sizeof(buf), "%" PRId64, def);
    arg_warn(c, o, key, v, "an integer", buf);
    return def;
}

double mu_conf_arg_float(struct mu_conf *c, const struct mu_plugin_opt *o,
                         const char *key, double def)
{
    json_t *v = arg_get(o, key);
    char buf[40];

    if (!v)
        return def;
    if (json_is_number(v))
        return json_number_value(v);
    arg_warn(c, o, key, v, "a number",
             mu_json_real_text(def, buf, sizeof(buf)));
    return def;
}

/* Go's strconv.ParseBool. */
static int parse_go_bool(const char *s)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True",
                                      NULL};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False",
                                     NULL};

    if (in_list(yes, s))
        return 1;
    if (in_list(no, s))
        return 0;
    return -1;
}

bool mu_conf_arg_bool(struct mu_conf *c, const struct mu_plugin_opt *o,
                      const char *key, bool def)
{
    json_t *v = arg_get(o, key);
    int b;

    if (!v)
        return def;
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_string(v) && (b = parse_go_bool(json_string_value(v))) >= 0)
        return b;
    arg_warn(c, o, key, v, "true or false", def ? "true" : "false");
    return def;
}

const char *mu_conf_arg_str(struct mu_conf *c, const struct mu_plugin_opt *o,
                            const char *key, const char *def)
{
    json_t *v = arg_get(o, key);
    char *quoted;

    if (!v)
        return def;
    if (json_is_string(v))
        return json_string_value(v);
    if (!c)
        return def;
    quoted = def ? mu_xasprintf("\"%s\"", def) : mu_xstrdup("nothing");
    arg_warn(c, o, key, v, "a string", quoted);
    free(quoted);
    return def;
}
