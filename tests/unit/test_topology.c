/* HyperNodes decoded and turned into network domains (api/hypernode.h,
 * sched/topology.h); placement on them is in tests/scenarios/topology_*. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/hypernode.h"
#include "sched/cluster.h"
#include "sched/conf.h"
#include "sched/topology.h"

static struct mu_cluster c;
static struct mu_topo t;

static void setup(void)
{
    mu_cluster_init(&c);
    mu_topo_init(&t);
    c.topo = &t;
}

static void teardown(void)
{
    mu_topo_free(&t);
    mu_cluster_release(&c);
}

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);

    ck_assert_msg(j != NULL, "bad JSON in test: %s", e.text);
    return j;
}

static void add_node(const char *name, const char *rack)
{
    char buf[512];
    struct mu_node n;
    json_t *j;

    snprintf(buf, sizeof(buf),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"rack\":\"%s\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"10\"}}}",
             name, rack);
    j = J(buf);
    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&c, &n, NULL));
    json_decref(j);
}

static int put(const char *s)
{
    struct mu_hypernode h;
    struct mu_err err = {0};
    json_t *j = J(s);
    int rc = mu_hypernode_decode(j, &h, &err);

    json_decref(j);
    if (rc == 0)
        rc = mu_topo_put(&t, &h);
    return rc;
}

/* decode error text of s */
static char err_buf[MU_ERR_MAX + 8];
static const char *decode_err(const char *s)
{
    struct mu_hypernode h;
    struct mu_err err = {0};
    json_t *j = J(s);

    ck_assert_int_eq(mu_hypernode_decode(j, &h, &err), -EINVAL);
    json_decref(j);
    snprintf(err_buf, sizeof(err_buf), "%s", err.msg);
    mu_hypernode_release(&h);
    return err_buf;
}

static const struct mu_domain *dom(const char *name)
{
    for (size_t i = 0; i < t.ndom; i++)
        if (!strcmp(t.dom[i].name, name))
            return &t.dom[i];
    ck_abort_msg("no domain %s", name);
    return NULL;
}

/* d's node names, space-joined */
static char names_buf[256];
static const char *names(const struct mu_domain *d)
{
    size_t len = 0;

    names_buf[0] = '\0';
    for (size_t i = 0; i < d->n; i++)
        len += (size_t)snprintf(names_buf + len, sizeof(names_buf) - len,
                                "%s%s", i ? " " : "",
                                c.nodes[d->nodes[i]]->spec.meta.name);
    return names_buf;
}

#define HN(name, tier, members)                                               \
    "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"tier\":" #tier         \
    ",\"members\":[" members "]}}"
#define NODE_EXACT(n) "{\"type\":\"Node\",\"selector\":{\"exactMatch\":{\"name\":\"" n "\"}}}"
#define NODE_RE(p) "{\"type\":\"Node\",\"selector\":{\"regexMatch\":{\"pattern\":\"" p "\"}}}"
#define HN_RE(p) "{\"type\":\"HyperNode\",\"selector\":{\"regexMatch\":{\"pattern\":\"" p "\"}}}"

START_TEST(test_members_by_name_regex_labels_and_nesting)
{
    add_node("a1", "a");
    add_node("a2", "a");
    add_node("b1", "b");
    add_node("b10", "b");
    add_node("c1", "c");
    ck_assert_int_eq(put(HN("rack-a", 1, NODE_EXACT("a1") "," NODE_EXACT("a2")
                                                          "," NODE_EXACT("gone"))),
                     0);
    ck_assert_int_eq(put(HN("rack-b", 1, NODE_RE("^b[0-9]+$"))), 0);
    ck_assert_int_eq(
        put(HN("rack-c", 1,
               "{\"type\":\"Node\",\"selector\":{\"labelMatch\":{"
               "\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\","
               "\"values\":[\"c\"]}]}}}")),
        0);
    ck_assert_int_eq(put(HN("spine", 2, HN_RE("^rack-[ab]$"))), 0);
    mu_topo_sync(&t, &c, NULL);
    ck_assert_uint_eq(t.ndom, 4);
    /* by tier, then name */
    ck_assert_str_eq(t.dom[0].name, "rack-a");
    ck_assert_str_eq(t.dom[3].name, "spine");
    ck_assert_str_eq(names(dom("rack-a")), "a1 a2");
    ck_assert_str_eq(names(dom("rack-b")), "b1 b10");
    ck_assert_str_eq(names(dom("rack-c")), "c1");
    ck_assert_str_eq(names(dom("spine")), "a1 a2 b1 b10");
    ck_assert(mu_domain_has(dom("spine"), c.nodes[3]->index));
    ck_assert(!mu_domain_has(dom("spine"), 4));
    ck_assert_uint_eq(t.nwarn, 0);
}
END_TEST

/* A parent whose name sorts before its children's is built first: each
 * child's domain holds its own nodes only, not a sibling's. */
START_TEST(test_a_parent_built_first_keeps_its_children_apart)
{
    add_node("a1", "a");
    add_node("b1", "b");
    add_node("c1", "c");
    ck_assert_int_eq(put(HN("agg", 2, HN_RE("^rack-") "," NODE_EXACT("c1"))),
                     0);
    ck_assert_int_eq(put(HN("rack-a", 1, NODE_EXACT("a1"))), 0);
    ck_assert_int_eq(put(HN("rack-b", 1, NODE_EXACT("b1"))), 0);
    mu_topo_sync(&t, &c, NULL);
    ck_assert_str_eq(names(dom("rack-a")), "a1");
    ck_assert_str_eq(names(dom("rack-b")), "b1");
    ck_assert_str_eq(names(dom("agg")), "a1 b1 c1");
}
END_TEST

START_TEST(test_sync_follows_nodes_and_hypernodes)
{
    add_node("a1", "a");
    ck_assert_int_eq(put(HN("rack-a", 1, NODE_RE("^a"))), 0);
    mu_topo_sync(&t, &c, NULL);
    ck_assert_str_eq(names(dom("rack-a")), "a1");
    add_node("a0", "a"); /* indexes move: a0 comes first */
    mu_topo_sync(&t, &c, NULL);
    ck_assert_str_eq(names(dom("rack-a")), "a0 a1");
    /* replaced by name */
    ck_assert_int_eq(put(HN("rack-a", 3, NODE_EXACT("a1"))), 0);
    mu_topo_sync(&t, &c, NULL);
    ck_assert_uint_eq(t.ndom, 1);
    ck_assert_int_eq(dom("rack-a")->tier, 3);
    ck_assert_str_eq(names(dom("rack-a")), "a1");
    ck_assert(mu_topo_remove(&t, "rack-a"));
    ck_assert(!mu_topo_remove(&t, "rack-a"));
    mu_topo_sync(&t, &c, NULL);
    ck_assert_uint_eq(t.ndom, 0);
}
END_TEST

/* A node's labels changing moves it between label domains; a change of
 * its allocatable alone does not rebuild them. */
START_TEST(test_label_domains_follow_label_changes_only)
{
    struct mu_conf conf;
    struct mu_err err = {0};
    static const char text[] = "actions: \"allocate\"\n"
                               "tiers:\n- plugins:\n  - name: gang\n"
                               "hyperNodeTiers:\n- nodeLabel: rack\n";
    struct mu_node n;
    json_t *j;
    uint64_t builds;

    ck_assert_int_eq(mu_conf_parse("t.conf", text, strlen(text), &conf, &err),
                     0);
    add_node("n1", "a");
    add_node("n2", "a");
    mu_topo_sync(&t, &c, &conf);
    ck_assert_str_eq(names(dom("rack=a")), "n1 n2");
    builds = t.builds;
    j = J("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"rack\":\"a\"}},"
          "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"10\"}}}");
    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    json_decref(j);
    mu_cluster_update_node(&c, &n);
    mu_topo_sync(&t, &c, &conf);
    ck_assert_uint_eq(t.builds, builds); /* not rebuilt */
    j = J("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"rack\":\"b\"}},"
          "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"10\"}}}");
    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    json_decref(j);
    mu_cluster_update_node(&c, &n);
    mu_topo_sync(&t, &c, &conf);
    ck_assert_str_eq(names(dom("rack=a")), "n1");
    ck_assert_str_eq(names(dom("rack=b")), "n2");
    mu_conf_release(&conf);
}
END_TEST

START_TEST(test_a_hypernode_that_contains_itself_is_cut_with_a_warning)
{
    add_node("a1", "a");
    add_node("b1", "b");
    ck_assert_int_eq(put(HN("x", 2, NODE_EXACT("a1") "," HN_RE("^y$"))), 0);
    ck_assert_int_eq(put(HN("y", 3, NODE_EXACT("b1") "," HN_RE("^x$"))), 0);
    mu_topo_sync(&t, &c, NULL);
    ck_assert_uint_eq(t.ndom, 2);
    /* x takes y (and y's own nodes); y's member x is on the path: cut */
    ck_assert_str_eq(names(dom("x")), "a1 b1");
    ck_assert_str_eq(names(dom("y")), "b1");
    ck_assert_uint_eq(t.nwarn, 1);
    ck_assert_str_eq(t.warn[0], "HyperNode y: member HyperNode x would "
                                "contain y itself (or nests deeper than 16): "
                                "left out");
}
END_TEST

START_TEST(test_label_tiers_make_one_domain_per_value)
{
    struct mu_conf conf;
    struct mu_err err = {0};
    static const char text[] =
        "actions: \"allocate\"\n"
        "tiers:\n- plugins:\n  - name: gang\n"
        "hyperNodeTiers:\n- nodeLabel: rack\n  tierName: rack\n"
        "- nodeLabel: zone\n";
    char rack[] = "rack", row[] = "row";
    struct mu_netopo nt = {MU_TOPO_HARD, -1, NULL};

    ck_assert_int_eq(mu_conf_parse("t.conf", text, strlen(text), &conf, &err),
                     0);
    ck_assert_uint_eq(conf.nlabel_tiers, 2);
    ck_assert_str_eq(conf.label_tiers[1].name, "zone");
    add_node("n2", "b");
    add_node("n1", "a");
    add_node("n3", "a");
    add_node("n4", "");
    mu_topo_sync(&t, &c, &conf);
    ck_assert_uint_eq(t.ndom, 3); /* rack=, rack=a, rack=b; no zone label */
    ck_assert_str_eq(names(dom("rack=a")), "n1 n3");
    ck_assert_str_eq(names(dom("rack=b")), "n2");
    ck_assert_int_eq(mu_topo_tier_named(&t, "rack"), 1);
    ck_assert_int_eq(mu_topo_tier_named(&t, "zone"), -1);
    ck_assert_int_eq(mu_topo_tier_limit(&t, &nt), INT_MAX);
    nt.highest_tier = 3;
    nt.highest_tier_name = rack;
    ck_assert_int_eq(mu_topo_tier_limit(&t, &nt), 1);
    nt.highest_tier_name = row;
    ck_assert_int_eq(mu_topo_tier_limit(&t, &nt), -1);
    mu_conf_release(&conf);
}
END_TEST

START_TEST(test_bad_hypernodes_are_refused_naming_the_field)
{
    ck_assert_str_eq(decode_err("{\"metadata\":{\"name\":\"x\"},\"spec\":{"
                                "\"members\":[" NODE_EXACT("a") "]}}"),
                     "spec.tier: required");
    ck_assert_str_eq(decode_err(HN("x", 1, "")),
                     "spec.members: at least one member is required");
    ck_assert_str_eq(decode_err(HN("x", 1, NODE_RE("^n\\\\d+$"))),
                     "spec.members[0].selector.regexMatch.pattern: \"^n\\d+$\" "
                     "is not a regular expression muster reads (POSIX "
                     "extended; write \\d as [0-9])");
    ck_assert_str_eq(
        decode_err(HN("x", 1,
                      "{\"type\":\"Node\",\"selector\":{\"exactMatch\":{"
                      "\"name\":\"a\"},\"regexMatch\":{\"pattern\":\"a\"}}}")),
        "spec.members[0].selector: exactly one of exactMatch, regexMatch and "
        "labelMatch must be set");
    ck_assert(strstr(decode_err(HN("x", 1, "{\"type\":\"Rack\",\"selector\":{"
                                           "\"exactMatch\":{\"name\":\"a\"}}}")),
                     "spec.members[0].type"));
    ck_assert(strstr(decode_err(HN("x", 1, "{\"type\":\"Node\",\"selector\":{"
                                           "\"labelMatch\":{\"matchExpressions\":"
                                           "[{\"key\":\"k\",\"operator\":\"Gt\","
                                           "\"values\":[\"1\"]}]}}}")),
                     "spec.members[0].selector.labelMatch.matchExpressions[0]"
                     ".operator"));
    ck_assert_str_eq(decode_err("{\"metadata\":{\"name\":\"x\"},\"spec\":{"
                                "\"tier\":-1,\"members\":[" NODE_EXACT("a") "]}}"),
                     "spec.tier: must be between 0 and 1000000");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_members_by_name_regex_labels_and_nesting);
    tcase_add_test(tc, test_sync_follows_nodes_and_hypernodes);
    tcase_add_test(tc, test_a_parent_built_first_keeps_its_children_apart);
    tcase_add_test(tc, test_label_domains_follow_label_changes_only);
    tcase_add_test(tc, test_a_hypernode_that_contains_itself_is_cut_with_a_warning);
    tcase_add_test(tc, test_label_tiers_make_one_domain_per_value);
    tcase_add_test(tc, test_bad_hypernodes_are_refused_naming_the_field);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
