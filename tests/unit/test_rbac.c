/*
 * muster's RBAC against its API table (kube/verbs.h).
 *
 * Without arguments: the table itself (requests read back into resource
 * and verb, what it lets through). With --manifests: renders manifests/
 * with kubectl kustomize, takes every rule of every Role and ClusterRole
 * bound there to muster's ServiceAccount, and compares them, one (scope,
 * group, resource, verb, name) at a time, with the table: every row must
 * be granted and nothing else may be. Then the same comparison of the
 * rendered rules with one verb added and with one rule removed must fail,
 * so the check is known to see both. kubectl is $KUBECTL, else the e2e
 * cache's ($MUSTER_CACHE or ~/.cache/muster, k8s-v*), else kubectl on
 * PATH; without one it skips as a whole (TAP "1..0 # SKIP").
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/yaml.h"
#include "common/mu.h"
#include "kube/verbs.h"

#define SA_NS "muster-system"
#define SA_NAME "muster"

/* ------------------------------------------------------- the table -- */

static void parse_ok(const char *method, const char *path, bool watch,
                     enum mu_api_kind kind, const char *sub, unsigned verb)
{
    struct mu_api_call c;

    ck_assert_int_eq(mu_api_call_parse(method, path, watch, &c), 0);
    ck_assert_int_eq(c.kind, kind);
    ck_assert_str_eq(c.sub, sub);
    ck_assert_uint_eq(c.verb, verb);
}

START_TEST(test_rbac_call_parse_reads_resource_and_verb)
{
    struct mu_api_call c;

    parse_ok("GET", "/api/v1/pods", false, MU_API_POD, "", MU_VERB_LIST);
    parse_ok("GET", "/api/v1/pods", true, MU_API_POD, "", MU_VERB_WATCH);
    parse_ok("GET", "/api/v1/namespaces/a/pods/p", false, MU_API_POD, "",
             MU_VERB_GET);
    parse_ok("PATCH", "/api/v1/namespaces/a/pods/p/status", false,
             MU_API_POD, "status", MU_VERB_PATCH);
    parse_ok("POST", "/api/v1/namespaces/a/pods/p/binding", false,
             MU_API_POD, "binding", MU_VERB_CREATE);
    parse_ok("DELETE", "/api/v1/namespaces/a/pods", false, MU_API_POD, "",
             MU_VERB_DELETECOLLECTION);
    parse_ok("PUT",
             "/apis/coordination.k8s.io/v1/namespaces/muster-system/leases/"
             "muster",
             false, MU_API_LEASE, "", MU_VERB_UPDATE);
    parse_ok("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/q/status",
             false, MU_API_QUEUE, "status", MU_VERB_PATCH);
    /* a pod named "namespaces" is a pod */
    parse_ok("GET", "/api/v1/namespaces/a/pods/namespaces", false,
             MU_API_POD, "", MU_VERB_GET);
    /* not a kind of paths.h: a Namespace, a pod's log below its name,
     * another group, a path of nothing */
    ck_assert_int_eq(mu_api_call_parse("GET", "/api/v1/namespaces/a", false,
                                       &c),
                     -ENOENT);
    ck_assert_int_eq(mu_api_call_parse("GET", "/api/v1/namespaces/a/pods/p/"
                                              "log/x",
                                       false, &c),
                     -ENOENT);
    ck_assert_int_eq(mu_api_call_parse("GET", "/apis/apps/v2/deployments",
                                       false, &c),
                     -ENOENT);
    ck_assert_int_eq(mu_api_call_parse("GET", "/api/v1/podsx", false, &c),
                     -ENOENT);
    ck_assert_int_eq(mu_api_call_parse("GET", "/version", false, &c),
                     -ENOENT);
    ck_assert_int_eq(mu_api_call_parse("HEAD", "/api/v1/pods", false, &c),
                     -EINVAL);
}
END_TEST

static bool allowed(const char *method, const char *path, bool watch)
{
    struct mu_api_call c;

    return mu_api_call_parse(method, path, watch, &c) == 0 &&
           mu_api_call_allowed(&c);
}

START_TEST(test_rbac_table_lets_through_only_what_muster_does)
{
    ck_assert(allowed("GET", "/api/v1/pods", true));
    ck_assert(allowed("POST", "/api/v1/namespaces/a/secrets", false));
    ck_assert(allowed("PATCH", "/api/v1/namespaces/a/pods/p/status", false));
    ck_assert(allowed("PUT",
                      "/apis/coordination.k8s.io/v1/namespaces/"
                      "muster-system/leases/muster",
                      false));
    /* Secrets are only created: never read, listed, changed or deleted */
    ck_assert(!allowed("GET", "/api/v1/namespaces/a/secrets/s", false));
    ck_assert(!allowed("GET", "/api/v1/secrets", false));
    ck_assert(!allowed("GET", "/api/v1/secrets", true));
    ck_assert(!allowed("PUT", "/api/v1/namespaces/a/secrets/s", false));
    ck_assert(!allowed("DELETE", "/api/v1/namespaces/a/secrets/s", false));
    /* what the old RBAC granted and no code sends */
    ck_assert(!allowed("PUT", "/api/v1/namespaces/a/pods/p", false));
    ck_assert(!allowed("POST", "/api/v1/namespaces/a/pods/p/eviction",
                       false));
    ck_assert(!allowed("GET", "/api/v1/nodes/n", false));
    ck_assert(!allowed("DELETE", "/api/v1/namespaces/a/pods", false));
    /* implied rows let no request through */
    ck_assert(!allowed("PUT",
                       "/apis/batch.volcano.sh/v1alpha1/namespaces/a/jobs/j/"
                       "finalizers",
                       false));
}
END_TEST

/* ------------------------------------------------------- the roles -- */

/* A set of "scope group resource verb name" lines. */
struct set {
    char **v;
    size_t n;
};

static void set_add(struct set *s, const char *scope, const char *group,
                    const char *res, const char *verb, const char *name)
{
    char *t = mu_xasprintf("%s %s %s %s %s", scope, *group ? group : "core",
                           res, verb, name ? name : "*");

    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], t)) {
            free(t);
            return;
        }
    s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
    ck_assert_ptr_nonnull(s->v);
    s->v[s->n++] = t;
}

static bool set_has(const struct set *s, const char *t)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], t))
            return true;
    return false;
}

static void set_release(struct set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static void table_set(struct set *s)
{
    size_t n;
    const struct mu_api_grant *g = mu_api_grants(&n);

    for (size_t i = 0; i < n; i++) {
        char group[64], *res;
        const char *scope = g[i].scope == MU_SCOPE_CLUSTER ? "cluster"
                                                           : "ns:" SA_NS;

        mu_api_group(g[i].kind, group, sizeof(group));
        res = g[i].sub ? mu_xasprintf("%s/%s", mu_api_res(g[i].kind)->plural,
                                      g[i].sub)
                       : mu_xstrdup(mu_api_res(g[i].kind)->plural);
        for (int b = 0; b < MU_VERB__COUNT; b++)
            if (g[i].verbs & (1u << b))
                set_add(s, scope, group, res, mu_api_verb_name(1u << b),
                        g[i].name);
        free(res);
    }
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);

    return json_string_value(b ? json_object_get(v, b) : v);
}

/* The document of this kind, name and namespace (NULL: none), or NULL. */
static const json_t *find(const json_t *docs, const char *kind,
                          const char *name, const char *ns)
{
    size_t i;
    const json_t *d;

    json_array_foreach(docs, i, d) {
        if (!mu_strcmp0(str_at(d, "kind", NULL), kind) &&
            !mu_strcmp0(str_at(d, "metadata", "name"), name) &&
            !mu_strcmp0(str_at(d, "metadata", "namespace"), ns))
            return d;
    }
    return NULL;
}

static bool binds_muster(const json_t *binding)
{
    size_t i;
    const json_t *s;

    json_array_foreach(json_object_get(binding, "subjects"), i, s) {
        if (!mu_strcmp0(str_at(s, "kind", NULL), "ServiceAccount") &&
            !mu_strcmp0(str_at(s, "name", NULL), SA_NAME) &&
            !mu_strcmp0(str_at(s, "namespace", NULL), SA_NS))
            return true;
    }
    return false;
}

static void add_rules(struct set *s, const char *scope, const json_t *role)
{
    size_t i, a, r, v, n;
    const json_t *rule, *g, *res, *verb, *name;

    json_array_foreach(json_object_get(role, "rules"), i, rule) {
        const json_t *names = json_object_get(rule, "resourceNames");

        json_array_foreach(json_object_get(rule, "apiGroups"), a, g)
        json_array_foreach(json_object_get(rule, "resources"), r, res)
        json_array_foreach(json_object_get(rule, "verbs"), v, verb) {
            if (!json_array_size(names))
                set_add(s, scope, json_string_value(g),
                        json_string_value(res), json_string_value(verb),
                        NULL);
            json_array_foreach(names, n, name)
                set_add(s, scope, json_string_value(g),
                        json_string_value(res), json_string_value(verb),
                        json_string_value(name));
        }
    }
}

/* Everything granted to muster's ServiceAccount by the documents. */
static void granted_set(const json_t *docs, struct set *s)
{
    size_t i;
    const json_t *d;

    json_array_foreach(docs, i, d) {
        const char *kind = str_at(d, "kind", NULL);
        const char *rk = str_at(d, "roleRef", "kind");
        const char *rn = str_at(d, "roleRef", "name");
        const char *ns = str_at(d, "metadata", "namespace");
        const json_t *role;
        char *scope;

        if (!binds_muster(d))
            continue;
        if (!mu_strcmp0(kind, "ClusterRoleBinding")) {
            scope = mu_xstrdup("cluster");
            role = find(docs, "ClusterRole", rn, NULL);
        } else if (!mu_strcmp0(kind, "RoleBinding")) {
            scope = mu_xasprintf("ns:%s", ns);
            role = !mu_strcmp0(rk, "Role") ? find(docs, "Role", rn, ns)
                                           : find(docs, "ClusterRole", rn,
                                                  NULL);
        } else {
            continue;
        }
        ck_assert_msg(role, "%s %s: role %s %s not in manifests/", kind,
                      str_at(d, "metadata", "name"), rk, rn);
        add_rules(s, scope, role);
        free(scope);
    }
}

/* The differences of the documents' grants from the table, one line each
 * into out; returns how many. */
static size_t compare(const json_t *docs, char *out, size_t len)
{
    struct set want = {0}, got = {0};
    size_t bad = 0, used = 0;

    out[0] = '\0';
    table_set(&want);
    granted_set(docs, &got);
    for (size_t i = 0; i < want.n; i++)
        if (!set_has(&got, want.v[i])) {
            bad++;
            used += (size_t)snprintf(out + used, used < len ? len - used : 0,
                                     "not granted: %s\n", want.v[i]);
        }
    for (size_t i = 0; i < got.n; i++)
        if (!set_has(&want, got.v[i])) {
            bad++;
            used += (size_t)snprintf(out + used, used < len ? len - used : 0,
                                     "granted, not in the table: %s\n",
                                     got.v[i]);
        }
    set_release(&want);
    set_release(&got);
    return bad;
}

static const char *kubectl;
static json_t *rendered; /* the documents of manifests/, an array */

/* kubectl kustomize manifests/ into rendered. */
static void render(void)
{
    char *cmd = mu_xasprintf("'%s' kustomize '%s' 2>&1", kubectl,
                             MU_MANIFESTS);
    FILE *p = popen(cmd, "r");
    struct mu_sb sb;
    struct mu_yaml_docs docs;
    struct mu_err err = {{0}};
    char buf[4096];
    size_t n;
    int st;

    ck_assert_ptr_nonnull(p);
    mu_sb_init(&sb);
    mu_sb_add(&sb, "");
    while ((n = fread(buf, 1, sizeof(buf) - 1, p)) > 0) {
        buf[n] = '\0';
        mu_sb_add(&sb, buf);
    }
    st = pclose(p);
    ck_assert_msg(st == 0, "%s: %s", cmd, sb.buf);
    mu_yaml_docs_init(&docs);
    ck_assert_msg(mu_yaml_parse("kustomize", sb.buf, strlen(sb.buf), &docs,
                                &err) == 0,
                  "%s", err.msg);
    rendered = json_array();
    for (size_t i = 0; i < docs.n; i++)
        json_array_append(rendered, docs.v[i].root);
    mu_yaml_docs_release(&docs);
    mu_sb_release(&sb);
    free(cmd);
}

static void render_setup(void)
{
    render();
}

static void render_teardown(void)
{
    json_decref(rendered);
    rendered = NULL;
}

START_TEST(test_rbac_manifests_grant_exactly_the_table)
{
    char diff[16384];
    size_t bad;

    /* the roles are there and bound to the ServiceAccount */
    ck_assert_ptr_nonnull(find(rendered, "ClusterRole", "muster", NULL));
    ck_assert_ptr_nonnull(find(rendered, "ServiceAccount", SA_NAME, SA_NS));
    bad = compare(rendered, diff, sizeof(diff));
    ck_assert_msg(bad == 0,
                  "manifests/rbac-muster.yaml and src/kube/verbs.h "
                  "differ:\n%s",
                  diff);
}
END_TEST

/* The ClusterRole's rule for this group and first resource. */
static json_t *rule_of(const char *group, const char *res)
{
    json_t *role = (json_t *)find(rendered, "ClusterRole", "muster", NULL);
    size_t i;
    json_t *rule;

    json_array_foreach(json_object_get(role, "rules"), i, rule) {
        if (!mu_strcmp0(json_string_value(json_array_get(
                            json_object_get(rule, "apiGroups"), 0)),
                        group) &&
            !mu_strcmp0(json_string_value(json_array_get(
                            json_object_get(rule, "resources"), 0)),
                        res))
            return rule;
    }
    return NULL;
}

START_TEST(test_rbac_compare_sees_a_verb_added)
{
    json_t *rule = rule_of("", "services");
    char diff[16384];

    ck_assert_ptr_nonnull(rule);
    json_array_append_new(json_object_get(rule, "verbs"), json_string("get"));
    ck_assert_uint_eq(compare(rendered, diff, sizeof(diff)), 3);
    ck_assert_ptr_nonnull(
        strstr(diff, "granted, not in the table: cluster core secrets get *"));
}
END_TEST

START_TEST(test_rbac_compare_sees_a_rule_removed)
{
    json_t *role = (json_t *)find(rendered, "ClusterRole", "muster", NULL);
    json_t *rules = json_object_get(role, "rules");
    char diff[16384];
    size_t i;
    json_t *rule;

    json_array_foreach(rules, i, rule) {
        if (rule == rule_of("", "pods/binding"))
            break;
    }
    ck_assert_uint_lt(i, json_array_size(rules));
    json_array_remove(rules, i);
    ck_assert_uint_eq(compare(rendered, diff, sizeof(diff)), 1);
    ck_assert_str_eq(diff, "not granted: cluster core pods/binding create *\n");
}
END_TEST

START_TEST(test_rbac_compare_sees_a_lease_name_dropped)
{
    json_t *role =
        (json_t *)find(rendered, "Role", "muster-leader-election", SA_NS);
    size_t i;
    json_t *rule;
    char diff[16384];

    ck_assert_ptr_nonnull(role);
    json_array_foreach(json_object_get(role, "rules"), i, rule)
        json_object_del(rule, "resourceNames");
    /* get and update of every Lease there, not only muster's */
    ck_assert_uint_eq(compare(rendered, diff, sizeof(diff)), 4);
}
END_TEST

/* $KUBECTL, the e2e cache's newest, or kubectl on PATH; NULL if none. */
static const char *find_kubectl(void)
{
    static char path[4096];
    const char *env = getenv("KUBECTL"), *cache = getenv("MUSTER_CACHE");
    const char *home = getenv("HOME");
    char *pat;
    glob_t g;

    if (env && *env)
        return env;
    pat = cache && *cache
              ? mu_xasprintf("%s/k8s-v*/bin/kubectl", cache)
              : mu_xasprintf("%s/.cache/muster/k8s-v*/bin/kubectl",
                             home ? home : "/root");
    if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc) {
        snprintf(path, sizeof(path), "%s", g.gl_pathv[g.gl_pathc - 1]);
        globfree(&g);
        free(pat);
        return path;
    }
    free(pat);
    if (system("kubectl version --client >/dev/null 2>&1") == 0)
        return "kubectl";
    return NULL;
}

int main(int argc, char **argv)
{
    Suite *s = suite_create("rbac");
    TCase *tc;
    SRunner *sr;
    int failed;

    if (argc > 1 && !strcmp(argv[1], "--manifests")) {
        if (!(kubectl = find_kubectl())) {
            printf("1..0 # SKIP kubectl not found (tests/e2e/"
                   "build-control-plane.sh, or $KUBECTL)\n");
            return 77;
        }
        tc = tcase_create("manifests");
        tcase_add_checked_fixture(tc, render_setup, render_teardown);
        tcase_add_test(tc, test_rbac_manifests_grant_exactly_the_table);
        tcase_add_test(tc, test_rbac_compare_sees_a_verb_added);
        tcase_add_test(tc, test_rbac_compare_sees_a_rule_removed);
        tcase_add_test(tc, test_rbac_compare_sees_a_lease_name_dropped);
    } else {
        tc = tcase_create("table");
        tcase_add_test(tc, test_rbac_call_parse_reads_resource_and_verb);
        tcase_add_test(tc, test_rbac_table_lets_through_only_what_muster_does);
    }
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
