#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "sched/conf.h"

static const char volcano_builtin[] =
    "actions: \"enqueue, allocate, backfill\"\n"
    "tiers:\n"
    "- plugins:\n"
    "  - name: priority\n"
    "  - name: gang\n"
    "  - name: conformance\n"
    "- plugins:\n"
    "  - name: overcommit\n"
    "  - name: drf\n"
    "  - name: predicates\n"
    "  - name: proportion\n"
    "  - name: nodeorder\n";

/* volcano-api.md §4: the CI configuration. */
static const char volcano_ci[] =
    "actions: \"enqueue, allocate, backfill, reclaim, preempt\"\n"
    "tiers:\n"
    "- plugins:\n"
    "  - name: priority\n"
    "  - name: gang\n"
    "    enablePreemptable: false\n"
    "  - name: conformance\n"
    "  - name: sla\n"
    "- plugins:\n"
    "  - name: overcommit\n"
    "  - name: drf\n"
    "    enablePreemptable: false\n"
    "  - name: predicates\n"
    "  - name: proportion\n"
    "  - name: nodeorder\n"
    "  - name: binpack\n"
    "  - name: network-topology-aware\n";

static int parse(const char *text, struct mu_conf *c, struct mu_err *err)
{
    return mu_conf_parse("sched.conf", text, strlen(text), c, err);
}

static bool is_zero(const struct mu_conf *c)
{
    static const struct mu_conf zero;

    return memcmp(c, &zero, sizeof(zero)) == 0;
}

static void assert_plugins(const struct mu_tier *t, const char *const *names)
{
    int n = 0;

    for (; names[n]; n++) {
        ck_assert_int_lt(n, t->n);
        ck_assert_str_eq(t->plugins[n].name, names[n]);
        ck_assert_ptr_nonnull(t->plugins[n].args);
    }
    ck_assert_int_eq(t->n, n);
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

static const char *const tier1[] = {"priority", "gang", "conformance", NULL};
static const char *const tier2[] = {"overcommit", "drf",       "predicates",
                                    "proportion", "nodeorder", "binpack",
                                    NULL};

START_TEST(test_conf_default_is_helm_config_with_reclaim_and_preempt)
{
    static const enum mu_action want[] = {MU_ACT_ENQUEUE, MU_ACT_ALLOCATE,
                                          MU_ACT_BACKFILL, MU_ACT_RECLAIM,
                                          MU_ACT_PREEMPT};
    struct mu_conf c;

    mu_conf_default(&c);
    ck_assert_int_eq(c.nactions, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(c.actions[i], want[i]);
    ck_assert_int_eq(c.ntiers, 2);
    assert_plugins(&c.tiers[0], tier1);
    assert_plugins(&c.tiers[1], tier2);
    for (int t = 0; t < c.ntiers; t++) {
        for (int i = 0; i < c.tiers[t].n; i++) {
            const struct mu_plugin_opt *o = &c.tiers[t].plugins[i];
            bool no_preempt = strcmp(o->name, "gang") == 0 ||
                              strcmp(o->name, "drf") == 0;

            for (int f = 0; f < MU_FLAG__COUNT; f++)
                ck_assert_int_eq(mu_plugin_opt_on(o, f),
                                 !(no_preempt && f == MU_FLAG_PREEMPTABLE) &&
                                     f != MU_FLAG_HIERARCHY);
            ck_assert_uint_eq(json_object_size(o->args), 0);
        }
    }
    ck_assert_ptr_nonnull(c.configurations);
    ck_assert_uint_eq(json_object_size(c.configurations), 0);
    ck_assert_uint_eq(c.nwarnings, 0);
    mu_conf_release(&c);
    ck_assert(is_zero(&c));
}
END_TEST

START_TEST(test_conf_default_text_parses_without_warnings)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(parse(mu_conf_default_text, &c, &err), 0);
    ck_assert_uint_eq(c.nwarnings, 0);
    ck_assert_int_eq(c.nactions, 5);
    ck_assert_int_eq(c.ntiers, 2);
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_reclaim_without_a_share_plugin_is_inert_and_says_so)
{
    static const char *const cases[] = {
        /* neither proportion nor capacity */
        "actions: \"enqueue, allocate, reclaim\"\n"
        "tiers:\n- plugins:\n  - name: gang\n  - name: drf\n",
        /* capacity, but not for reclaim */
        "actions: \"enqueue, allocate, reclaim\"\n"
        "tiers:\n- plugins:\n  - name: gang\n  - name: capacity\n"
        "    enableReclaimable: false\n",
        /* proportion, but not for reclaim */
        "actions: \"enqueue, allocate, reclaim\"\n"
        "tiers:\n- plugins:\n  - name: gang\n  - name: proportion\n"
        "    enableReclaimable: false\n",
    };
    struct mu_conf c;
    struct mu_err err;

    for (size_t i = 0; i < MU_ARRAY_LEN(cases); i++) {
        ck_assert_int_eq(parse(cases[i], &c, &err), 0);
        ck_assert(c.reclaim_inert);
        ck_assert_str_eq(c.warnings[c.nwarnings - 1],
                         "sched.conf: action reclaim: no plugin in the tiers "
                         "shares the cluster between queues (proportion or "
                         "capacity, with enableReclaimable): reclaim does "
                         "nothing");
        mu_conf_release(&c);
    }
    /* the default has proportion; a config without reclaim says nothing */
    ck_assert_int_eq(parse(mu_conf_default_text, &c, &err), 0);
    ck_assert(!c.reclaim_inert);
    ck_assert_int_eq(mu_conf_share(&c), MU_SHARE_PROPORTION);
    mu_conf_release(&c);
    /* capacity shares too, flat or as a tree */
    ck_assert_int_eq(parse("actions: \"enqueue, allocate, reclaim\"\n"
                           "tiers:\n- plugins:\n  - name: capacity\n",
                           &c, &err),
                     0);
    ck_assert(!c.reclaim_inert);
    ck_assert_int_eq(mu_conf_share(&c), MU_SHARE_CAPACITY);
    mu_conf_release(&c);
    ck_assert_int_eq(parse("actions: \"enqueue, allocate, reclaim\"\n"
                           "tiers:\n- plugins:\n  - name: capacity\n"
                           "    enableHierarchy: true\n",
                           &c, &err),
                     0);
    ck_assert_int_eq(mu_conf_share(&c), MU_SHARE_TREE);
    mu_conf_release(&c);
    /* a configuration names one of the two */
    ck_assert_int_eq(parse("actions: allocate\n"
                           "tiers:\n- plugins:\n  - name: proportion\n"
                           "- plugins:\n  - name: capacity\n",
                           &c, &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "sched.conf: tiers: proportion and capacity "
                              "both share the cluster between queues "
                              "(weights, deserved values): name one");
    ck_assert_int_eq(parse("actions: \"enqueue, allocate\"\n"
                           "tiers:\n- plugins:\n  - name: gang\n",
                           &c, &err),
                     0);
    ck_assert(!c.reclaim_inert);
    ck_assert_uint_eq(c.nwarnings, 0);
    mu_conf_release(&c);
}
END_TEST

/* base followed by each tail is refused with its error, leaving zero. */
struct bad_tail {
    const char *tail, *err;
};
static void refuses_tails(const char *base, const struct bad_tail *bad,
                          size_t n)
{
    struct mu_conf c;
    struct mu_err err;

    for (size_t i = 0; i < n; i++) {
        char *txt = mu_xasprintf("%s%s", base, bad[i].tail);

        ck_assert_int_eq(parse(txt, &c, &err), -EINVAL);
        ck_assert_str_eq(err.msg, bad[i].err);
        ck_assert(is_zero(&c));
        free(txt);
    }
}

START_TEST(test_conf_hypernode_tiers)
{
    static const char base[] = "actions: \"allocate\"\n"
                               "tiers:\n- plugins:\n  - name: gang\n";
    static const struct bad_tail bad[] = {
        {"hyperNodeTiers: {nodeLabel: rack}\n",
         "sched.conf: hyperNodeTiers: want a list of {nodeLabel, tierName}, "
         "tier 1 first"},
        {"hyperNodeTiers:\n- tierName: rack\n",
         "sched.conf: hyperNodeTiers[0].nodeLabel: want a node label key"},
        {"hyperNodeTiers:\n- {nodeLabel: rack, tierName: [x]}\n",
         "sched.conf: hyperNodeTiers[0].tierName: want a string"},
        {"hyperNodeTiers:\n- nodeLabel: rack\n- nodeLabel: zone\n"
         "- nodeLabel: rack\n",
         "sched.conf: hyperNodeTiers[2].nodeLabel: \"rack\" is tier 1 "
         "already"},
    };
    struct mu_conf c;
    struct mu_err err;
    char *txt;

    txt = mu_xasprintf("%shyperNodeTiers:\n- nodeLabel: example.com/rack\n"
                       "  tierName: rack\n- {nodeLabel: zone, color: red}\n",
                       base);
    ck_assert_int_eq(parse(txt, &c, &err), 0);
    free(txt);
    ck_assert_uint_eq(c.nlabel_tiers, 2);
    ck_assert_str_eq(c.label_tiers[0].label, "example.com/rack");
    ck_assert_str_eq(c.label_tiers[0].name, "rack");
    ck_assert_str_eq(c.label_tiers[1].name, "zone");
    ck_assert_uint_eq(c.nwarnings, 1);
    ck_assert_str_eq(c.warnings[0], "sched.conf: hyperNodeTiers[1].color: "
                                    "unknown key, ignored");
    mu_conf_release(&c);
    refuses_tails(base, bad, MU_ARRAY_LEN(bad));
}
END_TEST

START_TEST(test_conf_device_class_mappings)
{
    static const char base[] = "actions: \"allocate\"\n"
                               "tiers:\n- plugins:\n  - name: gang\n";
    static const struct bad_tail bad[] = {
        {"deviceClassMappings: {}\n",
         "sched.conf: deviceClassMappings: want a list of {name, "
         "deviceClassNames}"},
        {"deviceClassMappings:\n- deviceClassNames: [a]\n",
         "sched.conf: deviceClassMappings[0].name: want a resource name"},
        {"deviceClassMappings:\n- name: x/gpu\n",
         "sched.conf: deviceClassMappings[0].deviceClassNames: want a list "
         "of DeviceClass names"},
        {"deviceClassMappings:\n- {name: x/gpu, deviceClassNames: [a]}\n"
         "- {name: y/gpu, deviceClassNames: [b, a]}\n",
         "sched.conf: deviceClassMappings[1].deviceClassNames[1]: class "
         "\"a\" is mapped twice"},
    };
    struct mu_conf c;
    struct mu_err err;
    char *txt;

    txt = mu_xasprintf("%sdeviceClassMappings:\n- name: nvidia.com/gpu\n"
                       "  deviceClassNames: [gpu.nvidia.com, "
                       "mig.nvidia.com]\n", base);
    ck_assert_int_eq(parse(txt, &c, &err), 0);
    free(txt);
    ck_assert_uint_eq(c.nwarnings, 0);
    ck_assert_uint_eq(c.ndevmaps, 2);
    ck_assert_str_eq(c.devmaps[1].class_name, "mig.nvidia.com");
    ck_assert_str_eq(c.devmaps[1].resource, "nvidia.com/gpu");
    mu_conf_release(&c);
    refuses_tails(base, bad, MU_ARRAY_LEN(bad));
}
END_TEST

START_TEST(test_conf_volcano_builtin_default_parses)
{
    struct mu_conf c;
    struct mu_err err;
    static const char *const t2[] = {"overcommit", "drf",      "predicates",
                                     "proportion", "nodeorder", NULL};

    ck_assert_int_eq(parse(volcano_builtin, &c, &err), 0);
    ck_assert_int_eq(c.nactions, 3);
    ck_assert_int_eq(c.actions[0], MU_ACT_ENQUEUE);
    ck_assert_int_eq(c.actions[1], MU_ACT_ALLOCATE);
    ck_assert_int_eq(c.actions[2], MU_ACT_BACKFILL);
    ck_assert_int_eq(c.ntiers, 2);
    assert_plugins(&c.tiers[0], tier1);
    assert_plugins(&c.tiers[1], t2);
    ck_assert(mu_plugin_opt_on(&c.tiers[0].plugins[1], MU_FLAG_PREEMPTABLE));
    ck_assert_uint_eq(c.nwarnings, 0);
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_volcano_ci_config_warns_and_drops_unsupported)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(parse(volcano_ci, &c, &err), 0);
    ck_assert_int_eq(c.nactions, 5);
    assert_plugins(&c.tiers[0], tier1);
    assert_plugins(&c.tiers[1], tier2);
    ck_assert_uint_eq(c.nwarnings, 2);
    ck_assert_str_eq(c.warnings[0],
                     "sched.conf: tiers[0].plugins[3].name: plugin \"sla\" "
                     "is not supported by muster and is ignored");
    ck_assert_str_eq(c.warnings[1],
                     "sched.conf: tiers[1].plugins[6].name: plugin "
                     "\"network-topology-aware\" is left out: muster places "
                     "networkTopology gangs in one HyperNode without it "
                     "(nearest tier, then fullest domain first)");
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_flow_style_and_json_parse)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(
        parse("{\"actions\": \"allocate\", \"tiers\": [{\"plugins\": "
              "[{\"name\": \"gang\", \"enableJobReady\": false}]}]}",
              &c, &err),
        0);
    ck_assert_int_eq(c.nactions, 1);
    ck_assert_int_eq(c.actions[0], MU_ACT_ALLOCATE);
    ck_assert_int_eq(c.tiers[0].n, 1);
    ck_assert(!mu_plugin_opt_on(&c.tiers[0].plugins[0], MU_FLAG_JOB_READY));
    mu_conf_release(&c);

    ck_assert_int_eq(parse("actions: \" enqueue ,allocate\\t\"\n"
                           "tiers:\n"
                           "- plugins: [{name: priority}]\n",
                           &c, &err),
                     0);
    ck_assert_int_eq(c.nactions, 2);
    ck_assert_int_eq(c.actions[1], MU_ACT_ALLOCATE);
    mu_conf_release(&c);
}
END_TEST

/* Each flag, by its YAML key, turns off exactly its own bit. */
START_TEST(test_conf_each_flag_key_turns_off_its_bit)
{
    enum mu_flag f = (enum mu_flag)_i;
    struct mu_conf c;
    struct mu_err err;
    char *text = mu_xasprintf("actions: allocate\n"
                              "tiers:\n"
                              "- plugins:\n"
                              "  - name: proportion\n"
                              "    %s: false\n"
                              "  - name: gang\n"
                              "    %s: true\n",
                              mu_flag_key(f), mu_flag_key(f));

    ck_assert_int_eq(parse(text, &c, &err), 0);
    ck_assert_uint_eq(c.nwarnings, 0);
    /* enableHierarchy is off unless written true (Volcano) */
    ck_assert_uint_eq(c.tiers[0].plugins[0].off,
                      (1u << f) | (1u << MU_FLAG_HIERARCHY));
    ck_assert_uint_eq(c.tiers[0].plugins[1].off,
                      f == MU_FLAG_HIERARCHY ? 0 : 1u << MU_FLAG_HIERARCHY);
    mu_conf_release(&c);
    free(text);
}
END_TEST

START_TEST(test_conf_flag_keys_use_volcano_spellings)
{
    struct mu_conf c;
    struct mu_err err;
    const struct mu_plugin_opt *o;

    ck_assert_str_eq(mu_flag_key(MU_FLAG_JOB_ORDER), "enableJobOrder");
    ck_assert_str_eq(mu_flag_key(MU_FLAG_OVERUSED), "enabledOverused");
    ck_assert_str_eq(mu_flag_key(MU_FLAG_CLUSTER_ORDER),
                     "enabledClusterOrder");
    ck_assert_str_eq(mu_flag_key(MU_FLAG_VICTIM), "enabledVictim");
    ck_assert_str_eq(mu_flag_key(MU_FLAG_PREEMPTIVE), "enablePreemptive");
    ck_assert_str_eq(mu_flag_key(MU_FLAG_HYPERNODE_GRADIENT),
                     "enabledHyperNodeGradient");
    ck_assert_ptr_null(mu_flag_key(MU_FLAG__COUNT));
    ck_assert_str_eq(mu_action_name(MU_ACT_ENQUEUE), "enqueue");
    ck_assert_str_eq(mu_action_name(MU_ACT_PREEMPT), "preempt");
    ck_assert_str_eq(mu_action_name(MU_ACT_RECLAIM), "reclaim");
    ck_assert_ptr_null(mu_action_name(MU_ACT__COUNT));

    ck_assert_int_eq(parse("actions: allocate\n"
                           "tiers:\n"
                           "- plugins:\n"
                           "  - name: proportion\n"
                           "    enabledOverused: false\n"
                           "    enableJobOrder: false\n"
                           "    enableOverused: false\n",
                           &c, &err),
                     0);
    o = find_plugin(&c, "proportion");
    ck_assert(!mu_plugin_opt_on(o, MU_FLAG_OVERUSED));
    ck_assert(!mu_plugin_opt_on(o, MU_FLAG_JOB_ORDER));
    ck_assert(mu_plugin_opt_on(o, MU_FLAG_QUEUE_ORDER));
    ck_assert_uint_eq(c.nwarnings, 1);
    ck_assert_str_eq(c.warnings[0], "sched.conf: tiers[0].plugins[0]."
                                    "enableOverused: unknown key, ignored");
    mu_conf_release(&c);
}
END_TEST

struct bad_case {
    const char *text;
    const char *msg;
};

#define ONE_TIER(p) "actions: allocate\ntiers:\n- plugins:\n" p

static const struct bad_case bad_cases[] = {
    {"actions: \"enqueue, allocat\"\n",
     "sched.conf: actions: unknown action \"allocat\" (known: enqueue, "
     "allocate, backfill, reclaim, preempt)"},
    {"actions: \"enqueue, shuffle\"\n",
     "sched.conf: actions: action \"shuffle\" is not supported by muster"},
    {"actions: gangpreempt\n",
     "sched.conf: actions: action \"gangpreempt\" is not supported by muster"},
    {"actions: gangreclaim\n",
     "sched.conf: actions: action \"gangreclaim\" is not supported by muster"},
    {"actions: Allocate\n",
     "sched.conf: actions: unknown action \"Allocate\" (known: enqueue, "
     "allocate, backfill, reclaim, preempt)"},
    {"actions: \"allocate, backfill, allocate\"\n",
     "sched.conf: actions: \"allocate\" listed twice"},
    {"actions: \"\"\n", "sched.conf: actions: no action listed"},
    {"actions: \"  \"\n", "sched.conf: actions: no action listed"},
    {"actions: \"enqueue,,allocate\"\n",
     "sched.conf: actions: empty name in \"enqueue,,allocate\""},
    {"actions: \"enqueue, allocate,\"\n",
     "sched.conf: actions: empty name in \"enqueue, allocate,\""},
    {"tiers: []\n",
     "sched.conf: actions: missing (want e.g. \"enqueue, allocate, "
     "backfill\")"},
    {"actions: [enqueue, allocate]\n",
     "sched.conf: actions: want one comma-separated string like \"enqueue, "
     "allocate, backfill\""},
    {"actions: allocate\n"
     "tiers:\n"
     "- plugins: [{name: gang}]\n"
     "- plugins: [{name: fooo}]\n",
     "sched.conf: tiers[1].plugins[0].name: unknown plugin \"fooo\""},
    {ONE_TIER("  - name: gang\n  - name: priority\n  - name: gang\n"),
     "sched.conf: tiers[0].plugins[2].name: plugin \"gang\" listed twice "
     "(first at tiers[0].plugins[0])"},
    {"actions: allocate\n"
     "tiers:\n"
     "- plugins: [{name: sla}]\n"
     "- plugins: [{name: sla}]\n",
     "sched.conf: tiers[1].plugins[0].name: plugin \"sla\" listed twice "
     "(first at tiers[0].plugins[0])"},
    {ONE_TIER("  - name: drf\n    enableHierarchy: true\n"
              "  - name: proportion\n"),
     "sched.conf: tiers[0]: proportion and drf with hierarchy enabled "
     "conflicts"},
    {ONE_TIER("  - name: proportion\n"
              "  - name: drf\n    enableHierarchy: true\n"),
     "sched.conf: tiers[0]: proportion and drf with hierarchy enabled "
     "conflicts"},
    {ONE_TIER("  - name: gang\n  - name: priority\n"
              "    enableJobOrder: \"false\"\n"),
     "sched.conf: tiers[0].plugins[1].enableJobOrder: want true or false"},
    {ONE_TIER("  - name: gang\n    enablePreemptable: 0\n"),
     "sched.conf: tiers[0].plugins[0].enablePreemptable: want true or false"},
    {ONE_TIER("  - name: gang\n    enabledOverused:\n"),
     "sched.conf: tiers[0].plugins[0].enabledOverused: want true or false"},
    {ONE_TIER("  - gang\n"),
     "sched.conf: tiers[0].plugins[0]: want a mapping with a name"},
    {ONE_TIER("  - enableJobOrder: true\n"),
     "sched.conf: tiers[0].plugins[0]: missing name"},
    {ONE_TIER("  - name: [gang]\n"),
     "sched.conf: tiers[0].plugins[0].name: want a string"},
    {ONE_TIER("  - name: binpack\n    arguments: [1]\n"),
     "sched.conf: tiers[0].plugins[0].arguments: want a mapping"},
    {"actions: allocate\ntiers:\n- plugins: gang\n",
     "sched.conf: tiers[0].plugins: want a list"},
    {"actions: allocate\ntiers:\n- [gang]\n",
     "sched.conf: tiers[0]: want a mapping with plugins"},
    {"actions: allocate\ntiers: {plugins: []}\n",
     "sched.conf: tiers: want a list of {plugins: [...]}"},
    {"- actions: allocate\n",
     "sched.conf: want a mapping with actions and tiers"},
    {"allocate\n", "sched.conf: want a mapping with actions and tiers"},
    {"", "sched.conf: empty configuration"},
    {"# nothing here\n", "sched.conf: empty configuration"},
    {"actions: allocate\n---\nactions: enqueue\n",
     "sched.conf:3: want one YAML document, found another"},
    {"actions: allocate\nconfigurations: {name: allocate}\n",
     "sched.conf: configurations: want a list of {name, arguments}"},
    {"actions: allocate\nconfigurations: [allocate]\n",
     "sched.conf: configurations[0]: want a mapping with a name"},
    {"actions: allocate\nconfigurations:\n- arguments: {}\n",
     "sched.conf: configurations[0]: missing name"},
    {"actions: allocate\nconfigurations:\n- name: 3\n",
     "sched.conf: configurations[0].name: want a string"},
    {"actions: allocate\nconfigurations:\n- name: preempt\n  arguments: x\n",
     "sched.conf: configurations[0].arguments: want a mapping"},
    {"actions: allocate\n"
     "configurations:\n"
     "- name: preempt\n"
     "- name: allocate\n"
     "- name: preempt\n",
     "sched.conf: configurations[2].name: action \"preempt\" configured "
     "twice"},
    {"actions: \"enqueue,enqueue,enqueue,enqueue,enqueue,enqueue,enqueue,"
     "enqueue,enqueue,enqueue,enqueue,enqueue,enqueue,enqueue,enqueue,"
     "enqueue,enqueue\"\n",
     "sched.conf: actions: 17 listed, at most 16 allowed"},
    {"actions: allocate\ntiers: [{plugins: [{name: gang}]}, {}, {}, {}, {}, "
     "{}, {}, {}, {}]\n",
     "sched.conf: tiers: 9 listed, at most 8 allowed"},
};

START_TEST(test_conf_rejects_bad_config_and_leaves_out_zero)
{
    const struct bad_case *bc = &bad_cases[_i];
    struct mu_conf c;
    struct mu_err err = {{0}};

    memset(&c, 0xa5, sizeof(c));
    ck_assert_int_eq(parse(bc->text, &c, &err), -EINVAL);
    ck_assert_str_eq(err.msg, bc->msg);
    ck_assert(is_zero(&c));
    mu_conf_release(&c); /* harmless on a zeroed conf */
}
END_TEST

START_TEST(test_conf_rejects_too_many_plugins_in_a_tier)
{
    struct mu_sb sb;
    struct mu_conf c;
    struct mu_err err;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "actions: allocate\ntiers:\n- plugins:\n");
    for (int i = 0; i < MU_CONF_MAX_PLUGINS + 1; i++)
        mu_sb_add(&sb, "  - name: gang\n");
    ck_assert_int_eq(parse(sb.buf, &c, &err), -EINVAL);
    ck_assert_str_eq(err.msg,
                     "sched.conf: tiers[0].plugins: 33 listed, at most 32 "
                     "allowed");
    ck_assert(is_zero(&c));
    mu_sb_release(&sb);
}
END_TEST

START_TEST(test_conf_rejects_text_over_max_bytes)
{
    size_t n = MU_CONF_MAX_BYTES + 1;
    char *text = mu_xmalloc(n);
    struct mu_conf c;
    struct mu_err err;

    memset(text, '\n', n);
    memcpy(text, "actions: allocate\n", 18);
    ck_assert_int_eq(mu_conf_parse("sched.conf", text, n, &c, &err), -E2BIG);
    ck_assert_str_eq(err.msg, "sched.conf: larger than 1048576 bytes");
    ck_assert(is_zero(&c));
    /* Exactly at the limit is fine. */
    ck_assert_int_eq(mu_conf_parse("sched.conf", text, n - 1, &c, &err), 0);
    ck_assert_int_eq(c.nactions, 1);
    mu_conf_release(&c);
    free(text);
}
END_TEST

START_TEST(test_conf_yaml_syntax_error_names_the_file)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(parse("actions: [allocate\n", &c, &err), -EINVAL);
    ck_assert_msg(mu_starts_with(err.msg, "sched.conf:"), "got %s", err.msg);
    ck_assert(is_zero(&c));
}
END_TEST

START_TEST(test_conf_hierarchy_conflict_needs_same_tier_and_explicit_true)
{
    static const char *const ok[] = {
        ONE_TIER("  - name: drf\n  - name: proportion\n"),
        ONE_TIER("  - name: drf\n    enableHierarchy: false\n"
                 "  - name: proportion\n"),
        "actions: allocate\n"
        "tiers:\n"
        "- plugins: [{name: drf, enableHierarchy: true}]\n"
        "- plugins: [{name: proportion}]\n",
    };

    for (size_t i = 0; i < MU_ARRAY_LEN(ok); i++) {
        struct mu_conf c;
        struct mu_err err;

        ck_assert_int_eq(parse(ok[i], &c, &err), 0);
        ck_assert_ptr_nonnull(find_plugin(&c, "proportion"));
        mu_conf_release(&c);
    }
}
END_TEST

START_TEST(test_conf_warnings_for_ignored_parts)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(parse("actions: allocate\n"
                           "metrics: {address: \"http://prom:9090\"}\n"
                           "extra: 1\n"
                           "tiers:\n"
                           "- plugins: []\n"
                           "- plugins:\n"
                           "  - name: sla\n"
                           "    enableHierarchy: true\n"
                           "  - name: gang\n"
                           "    enabledHierarchy: true\n"
                           "- weight: 2\n"
                           "  plugins:\n"
                           "  - name: binpack\n"
                           "configurations:\n"
                           "- name: shuffle\n"
                           "  arguments: {a: b}\n"
                           "- name: allocate\n"
                           "  args: {}\n",
                           &c, &err),
                     0);
    ck_assert_int_eq(c.ntiers, 3);
    ck_assert_int_eq(c.tiers[0].n, 0);
    ck_assert_int_eq(c.tiers[1].n, 1);
    ck_assert_str_eq(c.tiers[1].plugins[0].name, "gang");
    ck_assert_str_eq(c.tiers[2].plugins[0].name, "binpack");
    ck_assert_uint_eq(c.nwarnings, 7);
    ck_assert_str_eq(c.warnings[0], "sched.conf: extra: unknown key, ignored");
    ck_assert_str_eq(c.warnings[1], "sched.conf: tiers[0]: no plugins");
    ck_assert_str_eq(c.warnings[2],
                     "sched.conf: tiers[1].plugins[0].name: plugin "
                     "\"sla\" is not supported by muster and is ignored");
    ck_assert_str_eq(c.warnings[3], "sched.conf: tiers[1].plugins[1]."
                                    "enabledHierarchy: unknown key, ignored");
    ck_assert_str_eq(c.warnings[4],
                     "sched.conf: tiers[2].weight: unknown key, ignored");
    ck_assert_str_eq(c.warnings[5], "sched.conf: configurations[0].name: "
                                    "unknown action \"shuffle\", ignored");
    ck_assert_str_eq(c.warnings[6], "sched.conf: configurations[1].args: "
                                    "unknown key, ignored");
    ck_assert_ptr_null(json_object_get(c.configurations, "shuffle"));
    ck_assert_uint_eq(json_object_size(
                          json_object_get(c.configurations, "allocate")),
                      0);
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_no_tiers_is_a_warning)
{
    struct mu_conf c;
    struct mu_err err;

    ck_assert_int_eq(parse("actions: allocate\n", &c, &err), 0);
    ck_assert_int_eq(c.ntiers, 0);
    ck_assert_uint_eq(c.nwarnings, 1);
    ck_assert_str_eq(c.warnings[0],
                     "sched.conf: tiers: none listed, so no plugin runs");
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_configurations_stored_by_action)
{
    struct mu_conf c;
    struct mu_err err;
    json_t *pre;

    ck_assert_int_eq(parse("actions: \"allocate, preempt\"\n"
                           "tiers:\n"
                           "- plugins: [{name: gang}]\n"
                           "configurations:\n"
                           "- name: preempt\n"
                           "  arguments:\n"
                           "    enableTopologyAwarePreemption: true\n"
                           "    minCandidateNodesPercentage: 20\n"
                           "- name: backfill\n",
                           &c, &err),
                     0);
    ck_assert_uint_eq(c.nwarnings, 0);
    ck_assert_uint_eq(json_object_size(c.configurations), 2);
    pre = json_object_get(c.configurations, "preempt");
    ck_assert(json_is_true(
        json_object_get(pre, "enableTopologyAwarePreemption")));
    ck_assert_int_eq(
        json_integer_value(json_object_get(pre, "minCandidateNodesPercentage")),
        20);
    ck_assert(json_is_object(json_object_get(c.configurations, "backfill")));
    mu_conf_release(&c);
}
END_TEST

static const char args_text[] =
    "actions: allocate\n"
    "tiers:\n"
    "- plugins:\n"
    "  - name: binpack\n"
    "    arguments:\n"
    "      binpack.weight: x\n"
    "      binpack.cpu: 3\n"
    "      binpack.memory: 1.5\n"
    "      binpack.resources: \"nvidia.com/gpu, example.com/foo\"\n"
    "      binpack.resources.nvidia.com/gpu: 2\n"
    "      b.true: true\n"
    "      b.str: \"False\"\n"
    "      b.bad: \"yes\"\n"
    "      b.null:\n"
    "      b.list: [1]\n"
    "      s.int: 7\n";

START_TEST(test_conf_args_typed_per_volcano)
{
    struct mu_conf c;
    struct mu_err err;
    const struct mu_plugin_opt *o;

    ck_assert_int_eq(parse(args_text, &c, &err), 0);
    o = &c.tiers[0].plugins[0];
    ck_assert_uint_eq(c.nwarnings, 0);
    ck_assert_int_eq(mu_conf_arg_int(&c, o, "binpack.cpu", 1), 3);
    ck_assert_int_eq(mu_conf_arg_int(&c, o, "absent", 42), 42);
    ck_assert_double_eq_tol(mu_conf_arg_float(&c, o, "binpack.memory", 1), 1.5,
                            1e-12);
    /* A float argument accepts an integer. */
    ck_assert_double_eq_tol(mu_conf_arg_float(&c, o, "binpack.cpu", 1), 3.0,
                            1e-12);
    ck_assert_double_eq_tol(mu_conf_arg_float(&c, o, "absent", 0.25), 0.25,
                            1e-12);
    ck_assert_str_eq(mu_conf_arg_str(&c, o, "binpack.resources", ""),
                     "nvidia.com/gpu, example.com/foo");
    ck_assert_str_eq(mu_conf_arg_str(&c, o, "absent", "dflt"), "dflt");
    ck_assert_ptr_null(mu_conf_arg_str(&c, o, "absent", NULL));
    ck_assert(mu_conf_arg_bool(&c, o, "b.true", false));
    ck_assert(!mu_conf_arg_bool(&c, o, "b.str", true));
    ck_assert(mu_conf_arg_bool(&c, o, "absent", true));
    ck_assert_int_eq(
        mu_conf_arg_int(&c, o, "binpack.resources.nvidia.com/gpu", 1), 2);
    ck_assert_uint_eq(c.nwarnings, 0);
    mu_conf_release(&c);
}
END_TEST

START_TEST(test_conf_args_of_wrong_type_warn_and_use_default)
{
    struct mu_conf c;
    struct mu_err err;
    const struct mu_plugin_opt *o;

    ck_assert_int_eq(parse(args_text, &c, &err), 0);
    o = &c.tiers[0].plugins[0];
    ck_assert_int_eq(mu_conf_arg_int(&c, o, "binpack.weight", 1), 1);
    ck_assert_int_eq(mu_conf_arg_int(&c, o, "binpack.memory", -2), -2);
    ck_assert_double_eq_tol(mu_conf_arg_float(&c, o, "binpack.weight", 0.5),
                            0.5, 1e-12);
    ck_assert(mu_conf_arg_bool(&c, o, "b.bad", true));
    ck_assert(!mu_conf_arg_bool(&c, o, "b.null", false));
    ck_assert(!mu_conf_arg_bool(&c, o, "b.list", false));
    ck_assert_str_eq(mu_conf_arg_str(&c, o, "s.int", "d"), "d");
    ck_assert_ptr_null(mu_conf_arg_str(&c, o, "b.true", NULL));

    ck_assert_uint_eq(c.nwarnings, 8);
    ck_assert_str_eq(c.warnings[0], "plugin binpack: argument binpack.weight: "
                                    "want an integer, got string \"x\"; "
                                    "using 1");
    ck_assert_str_eq(c.warnings[1], "plugin binpack: argument binpack.memory: "
                                    "want an integer, got number 1.5; "
                                    "using -2");
    ck_assert_str_eq(c.warnings[2], "plugin binpack: argument binpack.weight: "
                                    "want a number, got string \"x\"; "
                                    "using 0.5");
    ck_assert_str_eq(c.warnings[3], "plugin binpack: argument b.bad: want "
                                    "true or false, got string \"yes\"; "
                                    "using true");
    ck_assert_str_eq(c.warnings[4], "plugin binpack: argument b.null: want "
                                    "true or false, got null; using false");
    ck_assert_str_eq(c.warnings[5], "plugin binpack: argument b.list: want "
                                    "true or false, got a list; using false");
    ck_assert_str_eq(c.warnings[6], "plugin binpack: argument s.int: want a "
                                    "string, got integer 7; using \"d\"");
    ck_assert_str_eq(c.warnings[7], "plugin binpack: argument b.true: want a "
                                    "string, got boolean true; using nothing");

    /* Asking again (every cycle) does not pile up the same warning. */
    ck_assert_int_eq(mu_conf_arg_int(&c, o, "binpack.weight", 1), 1);
    ck_assert_uint_eq(c.nwarnings, 8);
    /* Without a conf to hold warnings the default still comes back. */
    ck_assert_int_eq(mu_conf_arg_int(NULL, o, "binpack.weight", 5), 5);
    mu_conf_release(&c);
}
END_TEST

static const struct {
    const char *s;
    bool v;
} go_bools[] = {
    {"1", true},      {"t", true},      {"T", true},     {"TRUE", true},
    {"true", true},   {"True", true},   {"0", false},    {"f", false},
    {"F", false},     {"FALSE", false}, {"false", false}, {"False", false},
};

START_TEST(test_conf_bool_arg_accepts_go_parsebool_strings)
{
    struct mu_conf c;
    struct mu_err err;
    char *text = mu_xasprintf(ONE_TIER("  - name: predicates\n"
                                       "    arguments:\n"
                                       "      predicate.CacheEnable: \"%s\"\n"),
                              go_bools[_i].s);

    ck_assert_int_eq(parse(text, &c, &err), 0);
    ck_assert_int_eq(mu_conf_arg_bool(&c, &c.tiers[0].plugins[0],
                                      "predicate.CacheEnable", !go_bools[_i].v),
                     go_bools[_i].v);
    ck_assert_uint_eq(c.nwarnings, 0);
    mu_conf_release(&c);
    free(text);
}
END_TEST

static char tmp_path[64];

static void write_tmp(const char *text, size_t n)
{
    int fd;
    FILE *f;

    snprintf(tmp_path, sizeof(tmp_path), "/tmp/test_conf_XXXXXX");
    fd = mkstemp(tmp_path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, n, f), n);
    fclose(f);
}

START_TEST(test_conf_load_file_reads_and_names_path)
{
    struct mu_conf c;
    struct mu_err err;
    char *want;

    write_tmp(volcano_builtin, strlen(volcano_builtin));
    ck_assert_int_eq(mu_conf_load_file(tmp_path, &c, &err), 0);
    ck_assert_int_eq(c.nactions, 3);
    ck_assert_int_eq(c.ntiers, 2);
    mu_conf_release(&c);
    unlink(tmp_path);

    write_tmp("actions: allocat\n", 17);
    ck_assert_int_eq(mu_conf_load_file(tmp_path, &c, &err), -EINVAL);
    want = mu_xasprintf("%s: actions: unknown action \"allocat\" (known: "
                        "enqueue, allocate, backfill, reclaim, preempt)",
                        tmp_path);
    ck_assert_str_eq(err.msg, want);
    ck_assert(is_zero(&c));
    free(want);
    unlink(tmp_path);

    ck_assert_int_eq(mu_conf_load_file("/nonexistent/sched.conf", &c, &err),
                     -ENOENT);
    ck_assert_str_eq(err.msg,
                     "/nonexistent/sched.conf: No such file or directory");
    ck_assert(is_zero(&c));
}
END_TEST

START_TEST(test_conf_load_file_refuses_large_file)
{
    size_t n = MU_CONF_MAX_BYTES + 1;
    char *text = mu_xmalloc(n);
    struct mu_conf c;
    struct mu_err err;
    char *want;

    memset(text, '\n', n);
    write_tmp(text, n);
    ck_assert_int_eq(mu_conf_load_file(tmp_path, &c, &err), -E2BIG);
    want = mu_xasprintf("%s: larger than 1048576 bytes", tmp_path);
    ck_assert_str_eq(err.msg, want);
    ck_assert(is_zero(&c));
    free(want);
    free(text);
    unlink(tmp_path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conf");
    TCase *tc = tcase_create("parse");
    TCase *ta = tcase_create("args");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_conf_default_is_helm_config_with_reclaim_and_preempt);
    tcase_add_test(tc, test_conf_default_text_parses_without_warnings);
    tcase_add_test(tc, test_conf_volcano_builtin_default_parses);
    tcase_add_test(tc, test_conf_volcano_ci_config_warns_and_drops_unsupported);
    tcase_add_test(tc, test_conf_flow_style_and_json_parse);
    tcase_add_loop_test(tc, test_conf_each_flag_key_turns_off_its_bit, 0,
                        MU_FLAG__COUNT);
    tcase_add_test(tc, test_conf_flag_keys_use_volcano_spellings);
    tcase_add_loop_test(tc, test_conf_rejects_bad_config_and_leaves_out_zero, 0,
                        (int)MU_ARRAY_LEN(bad_cases));
    tcase_add_test(tc, test_conf_rejects_too_many_plugins_in_a_tier);
    tcase_add_test(tc, test_conf_rejects_text_over_max_bytes);
    tcase_add_test(tc, test_conf_yaml_syntax_error_names_the_file);
    tcase_add_test(tc,
                   test_conf_hierarchy_conflict_needs_same_tier_and_explicit_true);
    tcase_add_test(tc, test_conf_warnings_for_ignored_parts);
    tcase_add_test(tc, test_conf_no_tiers_is_a_warning);
    tcase_add_test(tc, test_conf_configurations_stored_by_action);
    tcase_add_test(tc, test_conf_load_file_reads_and_names_path);
    tcase_add_test(tc, test_conf_load_file_refuses_large_file);
    suite_add_tcase(s, tc);

    tcase_add_test(ta, test_conf_args_typed_per_volcano);
    tcase_add_test(ta, test_conf_reclaim_without_a_share_plugin_is_inert_and_says_so);
    tcase_add_test(ta, test_conf_device_class_mappings);
    tcase_add_test(ta, test_conf_hypernode_tiers);
    tcase_add_test(ta, test_conf_args_of_wrong_type_warn_and_use_default);
    tcase_add_loop_test(ta, test_conf_bool_arg_accepts_go_parsebool_strings, 0,
                        (int)MU_ARRAY_LEN(go_bools));
    suite_add_tcase(s, ta);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
