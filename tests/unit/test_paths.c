/* API paths (src/kube/paths.h) and the map iterator (src/common/map.h). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/map.h"
#include "common/mu.h"
#include "kube/paths.h"

static const struct {
    enum mu_api_kind k;
    const char *ns, *name, *sub, *want;
} path_cases[] = {
    {MU_API_POD, NULL, NULL, NULL, "/api/v1/pods"},
    {MU_API_POD, "team-a", NULL, NULL, "/api/v1/namespaces/team-a/pods"},
    {MU_API_POD, "team-a", "p-0", "binding",
     "/api/v1/namespaces/team-a/pods/p-0/binding"},
    {MU_API_POD, "team-a", "p-0", "status",
     "/api/v1/namespaces/team-a/pods/p-0/status"},
    /* a name never climbs or adds a segment */
    {MU_API_POD, "kube-system", "../../nodes/n1", NULL,
     "/api/v1/namespaces/kube-system/pods/..%2F..%2Fnodes%2Fn1"},
    {MU_API_POD, "a b?c", "x#y%", NULL,
     "/api/v1/namespaces/a%20b%3Fc/pods/x%23y%25"},
    /* cluster-scoped kinds ignore a namespace */
    {MU_API_QUEUE, "ignored", "default", NULL,
     "/apis/scheduling.volcano.sh/v1beta1/queues/default"},
    {MU_API_NODE, NULL, "n-1", NULL, "/api/v1/nodes/n-1"},
    {MU_API_PODGROUP, "ns", "pg", "status",
     "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg/status"},
    {MU_API_VCJOB, "ns", NULL, NULL,
     "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs"},
    {MU_API_COMMAND, "ns", "c1", NULL,
     "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands/c1"},
    {MU_API_REPLICASET, "ns", "rs", NULL,
     "/apis/apps/v1/namespaces/ns/replicasets/rs"},
    {MU_API_LEASE, "muster-system", "muster", NULL,
     "/apis/coordination.k8s.io/v1/namespaces/muster-system/leases/muster"},
    {MU_API_PRIORITYCLASS, NULL, NULL, NULL,
     "/apis/scheduling.k8s.io/v1/priorityclasses"},
};

START_TEST(test_path_built_and_escaped)
{
    char *p = mu_api_path(path_cases[_i].k, path_cases[_i].ns,
                          path_cases[_i].name, path_cases[_i].sub);

    ck_assert_str_eq(p, path_cases[_i].want);
    free(p);
}
END_TEST

START_TEST(test_kind_find)
{
    ck_assert_int_eq(mu_api_kind_find("apps/v1", "ReplicaSet"),
                     MU_API_REPLICASET);
    ck_assert_int_eq(mu_api_kind_find("v1", "Pod"), MU_API_POD);
    ck_assert_int_eq(
        mu_api_kind_find("scheduling.volcano.sh/v1beta1", "PodGroup"),
        MU_API_PODGROUP);
    ck_assert_int_eq(mu_api_kind_find("apps/v1", "Pod"), -1);
    ck_assert_int_eq(mu_api_kind_find(NULL, "Pod"), -1);
    ck_assert_str_eq(mu_api_res(MU_API_SECRET)->plural, "secrets");
    ck_assert(!mu_api_res(MU_API_NODE)->namespaced);
}
END_TEST

START_TEST(test_delete_options_carry_the_uid)
{
    json_t *o = mu_api_delete_options("u-1", "Background");
    char *s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);

    ck_assert_str_eq(s, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\","
                        "\"preconditions\":{\"uid\":\"u-1\"},"
                        "\"propagationPolicy\":\"Background\"}");
    free(s);
    json_decref(o);
    ck_assert_ptr_null(mu_api_delete_options(NULL, NULL));
}
END_TEST

START_TEST(test_escape_empty)
{
    char *e = mu_api_escape("");

    ck_assert_str_eq(e, "");
    free(e);
}
END_TEST

/* Every live entry once, a removal during the walk allowed, sorted keys. */
START_TEST(test_map_next_and_sorted_keys)
{
    struct mu_map m;
    const char *k, **keys;
    void *v;
    size_t it = 0, n, seen = 0, sum = 0;
    static int vals[100];
    char buf[16];

    mu_map_init(&m);
    ck_assert(!mu_map_next(&m, &it, &k, &v));
    ck_assert_ptr_null(mu_map_sorted_keys(&m, &n));
    ck_assert_uint_eq(n, 0);
    for (int i = 0; i < 100; i++) {
        vals[i] = i;
        snprintf(buf, sizeof(buf), "k%03d", 99 - i);
        mu_map_put(&m, buf, &vals[i]);
    }
    mu_map_del(&m, "k050");
    it = 0;
    while (mu_map_next(&m, &it, &k, &v)) {
        seen++;
        sum += (size_t)*(int *)v;
        if (!strcmp(k, "k010"))
            mu_map_del(&m, k);
    }
    ck_assert_uint_eq(seen, 99);
    ck_assert_uint_eq(sum, 4950 - 49);
    ck_assert_ptr_null(mu_map_get(&m, "k010"));
    keys = mu_map_sorted_keys(&m, &n);
    ck_assert_uint_eq(n, 98);
    ck_assert_str_eq(keys[0], "k000");
    ck_assert_str_eq(keys[9], "k009");
    ck_assert_str_eq(keys[10], "k011");
    for (size_t i = 1; i < n; i++)
        ck_assert_int_lt(strcmp(keys[i - 1], keys[i]), 0);
    free(keys);
    mu_map_release(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("paths");
    TCase *tc = tcase_create("paths");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_path_built_and_escaped, 0,
                        (int)MU_ARRAY_LEN(path_cases));
    tcase_add_test(tc, test_kind_find);
    tcase_add_test(tc, test_escape_empty);
    tcase_add_test(tc, test_delete_options_carry_the_uid);
    tcase_add_test(tc, test_map_next_and_sorted_keys);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
