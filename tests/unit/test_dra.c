/* DRA objects decoded (api/dra.h) and devices placed (sched/devices.h,
 * sched/cluster_dra.h): pools, holds, shared claims, quotas, undo. The
 * free-device counts of why-pending are test_dra_counts.c's; where the
 * inventory keeps what placement reads, test_dra_layout.c's. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "api/dra.h"
#include "api/object.h"
#include "sched/cluster.h"
#include "sched/cluster_dra.h"
#include "sched/statement.h"
#include "test_dra_fixture.h"

START_TEST(test_decode_errors_name_the_field)
{
    struct mu_err err;
    struct mu_slice s;
    struct mu_claim cl;
    struct mu_pod p;
    json_t *j;

    j = js("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d\","
           "\"pool\":{\"name\":\"p\"},\"devices\":[{\"name\":\"a\"},"
           "{\"name\":\"b\",\"capacity\":{\"memory\":{\"value\":\"x\"}}}]}}");
    ck_assert_int_eq(mu_slice_decode(j, &s, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "spec.devices[1].capacity.memory.value"),
                  "%s", err.msg);
    json_decref(j);
    j = js("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"pool\":"
           "{\"name\":\"p\"}}}");
    ck_assert_int_eq(mu_slice_decode(j, &s, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "spec.driver: Required value");
    json_decref(j);
    j = js("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":"
           "{\"requests\":[{\"name\":\"r\"}]}}}");
    ck_assert_int_eq(mu_claim_decode(j, &cl, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "spec.devices.requests[0]: exactly one of "
                              "exactly or firstAvailable is required");
    json_decref(j);
    j = js("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
           "[{\"name\":\"a\",\"resourceClaimName\":\"x\","
           "\"resourceClaimTemplateName\":\"y\"}],\"containers\":[]}}");
    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "spec.resourceClaims[0]: must specify "
                                  "one of"), "%s", err.msg);
    json_decref(j);
}
END_TEST

START_TEST(test_attributes_are_qualified_and_claims_read_their_status)
{
    struct mu_slice s;
    struct mu_claim cl;
    struct mu_pod p;
    json_t *j;

    j = js("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"gpu.x\","
           "\"nodeName\":\"n1\",\"pool\":{\"name\":\"p\",\"generation\":3,"
           "\"resourceSliceCount\":2},\"devices\":[{\"name\":\"a\","
           "\"attributes\":{\"model\":{\"string\":\"H100\"},"
           "\"other.io/n\":{\"int\":4}}}]}}");
    ck_assert_int_eq(mu_slice_decode(j, &s, NULL), 0);
    ck_assert_str_eq(s.devs[0].attrs[0].name, "gpu.x/model");
    ck_assert_str_eq(s.devs[0].attrs[1].name, "other.io/n");
    ck_assert_int_eq(s.devs[0].attrs[1].i, 4);
    ck_assert_int_eq(s.generation, 3);
    ck_assert_int_eq(s.slice_count, 2);
    mu_slice_release(&s);
    json_decref(j);
    j = js("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"devices\":"
           "{\"requests\":[{\"name\":\"r\",\"firstAvailable\":["
           "{\"name\":\"big\",\"deviceClassName\":\"gpu\",\"count\":2},"
           "{\"name\":\"small\",\"deviceClassName\":\"gpu\"}]}]}},"
           "\"status\":{\"allocation\":{\"devices\":{\"results\":[{"
           "\"request\":\"r/big\",\"driver\":\"gpu.x\",\"pool\":\"p\","
           "\"device\":\"a\"}]}},\"reservedFor\":[{\"resource\":\"pods\","
           "\"name\":\"x\",\"uid\":\"u1\"}]}}");
    ck_assert_int_eq(mu_claim_decode(j, &cl, NULL), 0);
    ck_assert_int_eq(cl.spec.reqs[0].nopts, 2);
    ck_assert_str_eq(cl.spec.reqs[0].opts[0].name, "r/big");
    ck_assert_int_eq(cl.spec.reqs[0].opts[0].count, 2);
    ck_assert(cl.allocated);
    ck_assert_str_eq(cl.results[0].device, "a");
    ck_assert_str_eq(cl.reserved_uids[0], "u1");
    mu_claim_release(&cl);
    json_decref(j);
    j = js("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
           "[{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"}],"
           "\"containers\":[]},\"status\":{\"resourceClaimStatuses\":"
           "[{\"name\":\"g\",\"resourceClaimName\":\"p-g-abc\"}]}}");
    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, NULL), 0);
    ck_assert_int_eq(p.nclaims, 1);
    ck_assert_str_eq(p.claims[0].tmpl, "t");
    ck_assert_str_eq(p.claims[0].claim, "p-g-abc");
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_incomplete_pool_and_old_generation_are_not_usable)
{
    struct mu_task *t;

    template_("one", ONE);
    t = pod("p", TMPL("one"), "{}");
    slice("a", "n1", "pool1", 1, 2, 2, "H100");
    ck_assert(!fits(t, "n1")); /* one of two slices */
    slice("b", "n1", "pool1", 1, 2, 2, "H100");
    ck_assert(fits(t, "n1"));
    slice("c", "n1", "pool1", 2, 1, 1, "H100"); /* newer generation */
    ck_assert(fits(t, "n1"));
    mu_cluster_del_slice(&c, "c");
    ck_assert(fits(t, "n1")); /* generation 1 is the newest again */
    ck_assert(!fits(t, "n2"));
    /* and the total counts only usable devices, by quota name */
    ck_assert_int_eq(c.total.v[mu_resnames_index(&c.rn, "nvidia.com/gpu",
                                                 false)], 4);
}
END_TEST

START_TEST(test_take_give_and_undo)
{
    struct mu_task *a, *b;
    struct mu_stmt st;

    template_("two", TWO);
    slice("s1", "n1", "p1", 0, 1, 3, "H100");
    a = pod("a", TMPL("two"), "{}");
    b = pod("b", TMPL("two"), "{}");
    mu_cluster_link(&c);
    ck_assert(fits(a, "n1"));
    mu_stmt_init(&st, &c);
    mu_stmt_place(&st, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 2);
    ck_assert(!fits(b, "n1")); /* one device left */
    /* the queue side counts the two devices */
    ck_assert_int_eq(a->qreq->v[mu_resnames_index(&c.rn, "nvidia.com/gpu",
                                                 false)], 2);
    mu_stmt_rollback(&st, 0);
    ck_assert_int_eq(held_on("n1"), 0);
    ck_assert(fits(b, "n1"));
    mu_stmt_release(&st);
}
END_TEST

START_TEST(test_shared_claim_is_held_once_on_one_node)
{
    struct mu_task *a, *b;

    slice("s1", "n1", "p1", 0, 1, 1, "H100");
    slice("s2", "n2", "p2", 0, 1, 1, "H100");
    claim("shared", ONE, "");
    a = pod("a", "[{\"name\":\"g\",\"resourceClaimName\":\"shared\"}]",
            "{}");
    b = pod("b", "[{\"name\":\"g\",\"resourceClaimName\":\"shared\"}]",
            "{}");
    mu_task_place(&c, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 1);
    ck_assert(fits(b, "n1")); /* the same claim: no second device */
    ck_assert(!fits(b, "n2")); /* held on n1 */
    mu_task_place(&c, b, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 1);
    mu_task_unplace(&c, a);
    ck_assert_int_eq(held_on("n1"), 1); /* b still uses it */
    mu_task_unplace(&c, b);
    ck_assert_int_eq(held_on("n1"), 0);
}
END_TEST

START_TEST(test_api_allocation_pins_the_claim_and_stays)
{
    struct mu_task *t;

    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    slice("s2", "n2", "p2", 0, 1, 2, "H100");
    template_("one", ONE);
    /* a refused bind: the claim made for p stays allocated on n2 */
    t = pod("p", TMPL("one"), "{\"resourceClaimStatuses\":[{\"name\":"
                              "\"gpu\",\"resourceClaimName\":\"p-gpu\"}]}");
    ck_assert(fits(t, "n1"));
    claim("p-gpu", ONE, "{\"allocation\":{\"devices\":{\"results\":[{"
                        "\"request\":\"gpu\",\"driver\":\"gpu.x\",\"pool\":"
                        "\"p2\",\"device\":\"s2-1\"}]}}}");
    ck_assert_int_eq(held_on("n2"), 1);
    ck_assert(!fits(t, "n1"));
    ck_assert(fits(t, "n2"));
    /* deallocated: free again, and the pod may go anywhere */
    claim("p-gpu", ONE, "");
    ck_assert_int_eq(held_on("n2"), 0);
    ck_assert(fits(t, "n1"));
    /* deleted: the pod waits for the claim its status names */
    mu_cluster_del_claim(&c, "default", "p-gpu");
    ck_assert(fits(t, "n1")); /* until then, planned from the template */
}
END_TEST

START_TEST(test_selectors_all_mode_and_first_available)
{
    struct mu_task *h, *all, *fa, *bad;

    slice("a100", "n1", "p1", 0, 1, 2, "A100");
    slice("h100", "n2", "p2", 0, 1, 2, "H100");
    template_("h100",
              "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu\","
              "\"selectors\":[{\"cel\":{\"expression\":\"device.attributes"
              "[\\\"gpu.x\\\"].model == \\\"H100\\\"\"}}]}}]");
    template_("all", "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"
                     "\"gpu\",\"allocationMode\":\"All\"}}]");
    template_("fa", "[{\"name\":\"g\",\"firstAvailable\":["
                    "{\"name\":\"four\",\"deviceClassName\":\"gpu\","
                    "\"count\":4},{\"name\":\"two\",\"deviceClassName\":"
                    "\"gpu\",\"count\":2}]}]");
    template_("bad",
              "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu\","
              "\"selectors\":[{\"cel\":{\"expression\":\"device.attributes"
              "[\\\"gpu.x\\\"].v.isGreaterThan(semver(\\\"1.0.0\\\"))\"}}]}}]");
    h = pod("h", TMPL("h100"), "{}");
    all = pod("all", TMPL("all"), "{}");
    fa = pod("fa", TMPL("fa"), "{}");
    bad = pod("bad", TMPL("bad"), "{}");
    ck_assert(!fits(h, "n1"));
    ck_assert(fits(h, "n2"));
    ck_assert(fits(all, "n1"));
    ck_assert(fits(fa, "n1")); /* four do not fit: two do */
    mu_task_place(&c, h, mu_cluster_node(&c, "n2"), MU_TASK_ALLOCATED);
    ck_assert(!fits(all, "n2")); /* All wants every matching device */
    ck_assert(!fits(bad, "n1"));
    ck_assert_ptr_nonnull(bad->dd->why);
    ck_assert_msg(strstr(bad->dd->why, "unsupported"), "%s", bad->dd->why);
}
END_TEST

START_TEST(test_missing_template_then_arrives)
{
    struct mu_task *t = pod("p", TMPL("late"), "{}");

    slice("s1", "n1", "p1", 0, 1, 1, "H100");
    ck_assert_ptr_nonnull(t->dd->why);
    ck_assert_str_eq(t->dd->why,
                     "waiting for ResourceClaimTemplate default/late");
    ck_assert(!fits(t, "n1"));
    template_("late", ONE);
    ck_assert_ptr_null(t->dd->why);
    ck_assert(fits(t, "n1"));
}
END_TEST

START_TEST(test_removed_slice_leaves_its_holders)
{
    struct mu_task *t;

    template_("one", ONE);
    slice("s1", "n1", "p1", 0, 1, 1, "H100");
    t = pod("p", TMPL("one"), "{}");
    mu_task_place(&c, t, mu_cluster_node(&c, "n1"), MU_TASK_RUNNING);
    ck_assert_int_eq(held_on("n1"), 1);
    mu_cluster_del_slice(&c, "s1");
    ck_assert_int_eq(held_on("n1"), 0);
    slice("s1", "n1", "p1", 0, 1, 1, "H100"); /* back: free */
    ck_assert_int_eq(held_on("n1"), 0);
    mu_task_unplace(&c, t); /* gives nothing it does not hold */
    ck_assert_int_eq(held_on("n1"), 0);
}
END_TEST


/* A slice whose devices are named by names (a comma list), model H100. */
static void nslice(const char *name, const char *node, const char *pool,
                   int gen, const char *names)
{
    char devs[2048] = "", one[128];
    size_t len = 0;
    const char *p = names;
    json_t *j;
    struct mu_slice s;
    struct mu_err err;

    while (*p) {
        size_t n = strcspn(p, ",");

        snprintf(one, sizeof(one), "%.*s", (int)n, p);
        len += (size_t)snprintf(devs + len, sizeof(devs) - len,
                                "%s{\"name\":\"%s\",\"attributes\":"
                                "{\"model\":{\"string\":\"H100\"}}}",
                                len ? "," : "", one);
        p += n + (p[n] == ',');
    }
    j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"gpu.x\","
           "\"nodeName\":\"%s\",\"pool\":{\"name\":\"%s\",\"generation\":%d,"
           "\"resourceSliceCount\":1},\"devices\":[%s]}}",
           name, node, pool, gen, devs);
    ck_assert_msg(mu_slice_decode(j, &s, &err) == 0, "%s", err.msg);
    mu_cluster_put_slice(&c, &s);
    json_decref(j);
}

static const struct mu_dclaim *holder_of(const char *key)
{
    const struct mu_cdev *d = mu_map_get(&c.dev.devs, key);

    ck_assert_msg(d != NULL, "no device %s", key);
    return mu_dev_holder(d);
}

static const struct mu_dclaim *claim_of(const char *name)
{
    char *k = mu_xasprintf("default/%s", name);
    const struct mu_dclaim *cl = mu_map_get(&c.dev.claims, k);

    free(k);
    return cl;
}

#define ALLOC(pool, dev)                                                   \
    "{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","      \
    "\"driver\":\"gpu.x\",\"pool\":\"" pool "\",\"device\":\"" dev "\"}]}}}"
#define USE(cl) "[{\"name\":\"g\",\"resourceClaimName\":\"" cl "\"}]"

START_TEST(test_api_claim_waits_for_its_own_devices)
{
    struct mu_task *t, *o;

    template_("one", ONE);
    nslice("s1", "n1", "p1", 0, "s1-0");
    /* allocated on a device no slice shows yet */
    claim("c1", ONE, ALLOC("p1", "late-0"));
    t = pod("p", USE("c1"), "{}");
    ck_assert(!fits(t, "n1")); /* not where the API put it (yet) */
    mu_task_place(&c, t, mu_cluster_node(&c, "n1"), MU_TASK_RUNNING);
    ck_assert_ptr_null(holder_of("gpu.x/p1/s1-0")); /* nothing planned */
    nslice("late", "n1", "p1", 0, "late-0");
    ck_assert_ptr_eq(holder_of("gpu.x/p1/late-0"), claim_of("c1"));
    o = pod("o", TMPL("one"), "{}");
    ck_assert(fits(o, "n1")); /* s1-0 is free */
    ck_assert(fits(t, "n1"));
    ck_assert(!fits(t, "n2"));
}
END_TEST

START_TEST(test_generation_change_keeps_holds_on_the_newest_copy)
{
    struct mu_task *o;

    template_("one", ONE);
    nslice("old", "n1", "p1", 1, "g0");
    claim("ca", ONE, ALLOC("p1", "g0"));
    nslice("new", "n1", "p1", 2, "g0"); /* the driver republishes */
    o = pod("o", TMPL("one"), "{}");
    ck_assert_ptr_eq(holder_of("gpu.x/p1/g0"), claim_of("ca"));
    ck_assert(!fits(o, "n1"));
    mu_cluster_del_slice(&c, "old");
    ck_assert_ptr_eq(holder_of("gpu.x/p1/g0"), claim_of("ca"));
    ck_assert(!fits(o, "n1"));
    ck_assert_int_eq(held_on("n1"), 1);
}
END_TEST

START_TEST(test_api_allocation_over_a_planned_device_replans_the_other)
{
    struct mu_task *a, *b, *x;

    template_("one", ONE);
    nslice("s1", "n1", "p1", 0, "s1-0,s1-1");
    claim("ca", ONE, "");
    claim("cb", ONE, "");
    a = pod("a", USE("ca"), "{}");
    b = pod("b", USE("cb"), "{}");
    mu_task_place(&c, a, mu_cluster_node(&c, "n1"), MU_TASK_BINDING);
    mu_task_place(&c, b, mu_cluster_node(&c, "n1"), MU_TASK_BINDING);
    ck_assert_ptr_eq(holder_of("gpu.x/p1/s1-1"), claim_of("cb"));
    /* kube-scheduler allocates ca on s1-1, the one muster planned for cb */
    claim("ca", ONE, ALLOC("p1", "s1-1"));
    ck_assert_ptr_eq(holder_of("gpu.x/p1/s1-1"), claim_of("ca"));
    ck_assert_ptr_eq(holder_of("gpu.x/p1/s1-0"), claim_of("cb"));
    x = pod("x", TMPL("one"), "{}");
    ck_assert(!fits(x, "n1")); /* two devices, two claims */
}
END_TEST

START_TEST(test_slice_made_again_gives_the_api_claim_its_device)
{
    struct mu_task *x;

    template_("one", ONE);
    nslice("s1", "n1", "p1", 0, "s1-0");
    claim("ca", ONE, ALLOC("p1", "s1-0"));
    mu_cluster_del_slice(&c, "s1"); /* a driver restart */
    nslice("s1", "n1", "p1", 0, "s1-0");
    ck_assert_ptr_eq(holder_of("gpu.x/p1/s1-0"), claim_of("ca"));
    x = pod("x", TMPL("one"), "{}");
    ck_assert(!fits(x, "n1"));
}
END_TEST

START_TEST(test_overlapping_classes_count_a_device_once)
{
    class_("h100", "\"device.attributes[\\\"gpu.x\\\"].model == \\\"H100\\\"\"",
           "nvidia.com/gpu");
    nslice("s1", "n1", "p1", 0, "a,b");
    ck_assert_int_eq(c.total.v[mu_resnames_index(&c.rn, "nvidia.com/gpu",
                                                 false)], 2);
}
END_TEST

START_TEST(test_shared_claim_is_not_charged_per_pod)
{
    struct mu_task *a;
    int gpu;

    nslice("s1", "n1", "p1", 0, "a");
    claim("shared", ONE, "");
    a = pod("a", USE("shared"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert(a->dd->shared);
    ck_assert_int_ge(gpu, 0);
    ck_assert_int_eq(a->qreq->v[gpu], 0);
}
END_TEST

#define FA_REQ                                                           \
    "[{\"name\":\"g\",\"firstAvailable\":[{\"name\":\"four\","          \
    "\"deviceClassName\":\"gpu\",\"count\":4},{\"name\":\"mig\","        \
    "\"deviceClassName\":\"mig\"}]}]"

/* Task t (pod `name` of template `name`) made again with its claim
 * "<name>-g" of requests `reqs`, allocated the devices `results` (JSON
 * objects, comma-separated): the pod as it is once its claim is made. */
static struct mu_task *allocated(struct mu_task *t, const char *name,
                                 const char *reqs, const char *results)
{
    char tmpl[128], status[256], cname[64], alloc[1024];

    mu_cluster_remove_task(&c, t);
    snprintf(tmpl, sizeof(tmpl), TMPL("%s"), name);
    snprintf(cname, sizeof(cname), "%s-g", name);
    snprintf(status, sizeof(status),
             "{\"resourceClaimStatuses\":[{\"name\":\"gpu\","
             "\"resourceClaimName\":\"%s\"}]}", cname);
    snprintf(alloc, sizeof(alloc),
             "{\"allocation\":{\"devices\":{\"results\":[%s]}}}", results);
    t = pod(name, tmpl, status);
    claim(cname, reqs, alloc);
    return t;
}

/* The quota of an All request: the most devices it selects on one node
 * while pending (moving with the slices), the devices its allocation
 * names once allocated. A firstAvailable request: its first choice while
 * pending, the class of the choice allocated after. */
START_TEST(test_quota_of_all_and_first_available_follows_the_allocation)
{
    struct mu_task *all, *fa;
    int gpu, mig;

    class_("mig", "\"device.attributes[\\\"gpu.x\\\"].model == \\\"A100\\\"\"",
           "nvidia.com/mig-1g");
    slice("s1", "n1", "p1", 0, 1, 2, "A100");
    slice("s2", "n2", "p2", 0, 1, 4, "H100");
    template_("all", ALL_REQ);
    template_("fa", FA_REQ);
    all = pod("all", TMPL("all"), "{}");
    fa = pod("fa", TMPL("fa"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    mig = mu_resnames_index(&c.rn, "nvidia.com/mig-1g", false);
    ck_assert_int_ge(gpu, 0);
    ck_assert_int_ge(mig, 0);
    ck_assert(all->dd->by_slices);
    ck_assert_int_eq(all->qreq->v[gpu], 4);
    ck_assert_int_eq(fa->qreq->v[gpu], 4);
    ck_assert_int_eq(fa->qreq->v[mig], 0);
    /* a node with more devices comes and goes */
    node("n3");
    slice("s3", "n3", "p3", 0, 1, 6, "H100");
    ck_assert_int_eq(all->qreq->v[gpu], 4); /* until the next cycle */
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 6);
    mu_cluster_del_slice(&c, "s3");
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 4);
    /* allocated on n1: its two devices */
    all = allocated(all, "all", ALL_REQ,
                    "{\"request\":\"g\",\"driver\":\"gpu.x\",\"pool\":\"p1\","
                    "\"device\":\"s1-0\"},{\"request\":\"g\",\"driver\":"
                    "\"gpu.x\",\"pool\":\"p1\",\"device\":\"s1-1\"}");
    ck_assert(!all->dd->by_slices);
    ck_assert_int_eq(all->qreq->v[gpu], 2);
    slice("s4", "n3", "p4", 0, 1, 8, "H100");
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 2);
    /* the firstAvailable claim allocated its second choice (one device
     * of class mig): charged as such */
    fa = allocated(fa, "fa", FA_REQ,
                   "{\"request\":\"g/mig\",\"driver\":\"gpu.x\",\"pool\":"
                   "\"p1\",\"device\":\"s1-0\"}");
    ck_assert_int_eq(fa->qreq->v[gpu], 0);
    ck_assert_int_eq(fa->qreq->v[mig], 1);
}
END_TEST

/* A slice not bound to one node: `how` is its JSON member(s) standing
 * for nodeName ("\"allNodes\":true", a nodeSelector...), n devices. */
static void unbound_slice(const char *name, const char *how, int n)
{
    char devs[1024] = "";
    size_t len = 0;
    struct mu_slice s;
    struct mu_err err;
    json_t *j;

    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(devs + len, sizeof(devs) - len,
                                "%s{\"name\":\"%s-%d\"}", i ? "," : "",
                                name, i);
    j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"gpu.x\","
           "%s,\"pool\":{\"name\":\"%s\",\"generation\":0,"
           "\"resourceSliceCount\":1},\"devices\":[%s]}}",
           name, how, name, devs);
    ck_assert_msg(mu_slice_decode(j, &s, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(s.node);
    mu_cluster_put_slice(&c, &s);
    json_decref(j);
}

/* Devices of a slice with allNodes serve a pod on any node, those of a
 * nodeSelector slice on the nodes it selects; each is held once, and a
 * hold through one node moves every node that reaches it. They count in
 * the total once. A perDeviceNodeSelection slice is not planned, and
 * why-pending counts it apart. */
START_TEST(test_slices_not_bound_to_a_node)
{
    struct mu_task *t[5];
    struct mu_devfree f;
    uint64_t gen1;
    int gpu;

    labelled_node("n3", "{\"rack\":\"a\"}");
    slice("s1", "n1", "p1", 0, 1, 1, "H100");
    unbound_slice("net", "\"allNodes\":true", 2);
    unbound_slice("rack", "\"nodeSelector\":{\"nodeSelectorTerms\":[{"
                          "\"matchExpressions\":[{\"key\":\"rack\","
                          "\"operator\":\"In\",\"values\":[\"a\"]}]}]}", 1);
    unbound_slice("per", "\"perDeviceNodeSelection\":true", 4);
    template_("one", ONE);
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert_int_eq(c.total.v[gpu], 4); /* 1 + 2 + 1, each once */
    for (int i = 0; i < 5; i++) {
        char name[8];

        snprintf(name, sizeof(name), "p%d", i);
        t[i] = pod(name, TMPL("one"), "{}");
    }
    ck_assert(fits(t[0], "n1") && fits(t[0], "n2") && fits(t[0], "n3"));
    mu_devices_free_count(&c.dev, t[0]->dd, &f);
    ck_assert_int_eq(f.total, 4);
    ck_assert_int_eq(f.nodes, 3);
    ck_assert_int_eq(f.best, 3); /* n1: its own and the two of net; n3: net
                                    and rack */
    ck_assert_int_eq(f.unplanned, 4);
    /* two pods through n2 take net's two devices: n1 and n3 move too */
    gen1 = mu_cluster_node(&c, "n1")->gen;
    mu_task_place(&c, t[0], mu_cluster_node(&c, "n2"), MU_TASK_ALLOCATED);
    mu_task_place(&c, t[1], mu_cluster_node(&c, "n2"), MU_TASK_ALLOCATED);
    ck_assert_uint_gt(mu_cluster_node(&c, "n1")->gen, gen1);
    ck_assert(!fits(t[2], "n2"));
    ck_assert(fits(t[2], "n1")); /* its own device */
    ck_assert(fits(t[2], "n3")); /* rack's */
    mu_task_place(&c, t[2], mu_cluster_node(&c, "n3"), MU_TASK_ALLOCATED);
    ck_assert(!fits(t[3], "n3"));
    ck_assert(fits(t[3], "n1"));
    mu_task_place(&c, t[3], mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    ck_assert(!fits(t[4], "n1") && !fits(t[4], "n2") && !fits(t[4], "n3"));
    /* one leaves n2: its device is free again, for every node */
    mu_task_unplace(&c, t[0]);
    ck_assert(fits(t[4], "n1") && fits(t[4], "n2") && fits(t[4], "n3"));
    /* the allNodes slice goes: its holder keeps nothing, and the total
     * drops by its two */
    mu_cluster_del_slice(&c, "net");
    ck_assert_int_eq(c.total.v[gpu], 2);
    ck_assert(!fits(t[4], "n2"));
}
END_TEST

/* The edges of devices not bound to one node: a claim holding one of
 * them and one of a node slice that goes; a device the API allocates
 * away from a claim muster planned; a node that comes and reaches more;
 * a class that comes after the slices. */
START_TEST(test_slices_not_bound_to_a_node_edges)
{
    struct mu_task *a, *b, *all;
    int gpu, x;

    slice("s1", "n1", "p1", 0, 1, 1, "H100");
    unbound_slice("net", "\"allNodes\":true", 2);
    template_("two", TWO);
    template_("one", ONE);
    /* a's claim: n1's device and one of net; n1's slice goes: the claim
     * keeps net's, usable from every node */
    a = pod("a", TMPL("two"), "{}");
    mu_task_place(&c, a, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    mu_cluster_del_slice(&c, "s1");
    ck_assert(fits(a, "n2"));
    ck_assert(fits(a, "n1"));
    mu_task_unplace(&c, a);
    /* b planned on n2 takes net-0; the API allocates net-0 to claim x:
     * b's claim is planned again on n2, and nothing is left */
    b = pod("b", TMPL("one"), "{}");
    mu_task_place(&c, b, mu_cluster_node(&c, "n2"), MU_TASK_ALLOCATED);
    claim("x", ONE, "{\"allocation\":{\"devices\":{\"results\":[{"
                    "\"request\":\"gpu\",\"driver\":\"gpu.x\",\"pool\":"
                    "\"net\",\"device\":\"net-0\"}]}}}");
    ck_assert(!fits(pod("c", TMPL("one"), "{}"), "n2"));
    /* an All pod counts the most one node reaches; a node reaching more
     * comes: counted at the next cycle */
    template_("all", ALL_REQ);
    all = pod("all", TMPL("all"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert_int_eq(all->qreq->v[gpu], 2);
    unbound_slice("rack", "\"nodeSelector\":{\"nodeSelectorTerms\":[{"
                          "\"matchExpressions\":[{\"key\":\"rack\","
                          "\"operator\":\"In\",\"values\":[\"a\"]}]}]}", 3);
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 2); /* no node in rack a yet */
    labelled_node("n3", "{\"rack\":\"a\"}");
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 5);
    mu_cluster_remove_node(&c, mu_cluster_node(&c, "n3"));
    mu_cluster_dra_settle(&c);
    ck_assert_int_eq(all->qreq->v[gpu], 2);
    /* a class that maps another name, after the slices: their devices
     * count in the total once */
    class_("gpu2", "\"device.driver == \\\"gpu.x\\\"\"", "example.com/x");
    x = mu_resnames_index(&c.rn, "example.com/x", false);
    ck_assert_int_ge(x, 0);
    ck_assert_int_eq(c.total.v[x], 5); /* net's 2 and rack's 3 */
    ck_assert_int_eq(c.total.v[gpu], 5);
}
END_TEST

START_TEST(test_status_without_a_claim_name_needs_none)
{
    struct mu_pod p;
    json_t *j;

    j = js("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
           "[{\"name\":\"g\",\"resourceClaimTemplateName\":\"t\"},"
           "{\"name\":\"h\",\"resourceClaimTemplateName\":\"t\"}],"
           "\"containers\":[]},\"status\":{\"resourceClaimStatuses\":"
           "[{\"name\":\"g\"},{\"name\":\"h\",\"resourceClaimName\":\"x\"},"
           "{\"name\":\"h\",\"resourceClaimName\":\"p-h\"}]}}");
    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, NULL), 0);
    ck_assert_int_eq(p.nclaims, 1);
    ck_assert_str_eq(p.claims[0].name, "h");
    ck_assert_str_eq(p.claims[0].claim, "p-h"); /* the last entry wins */
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_extended_resource_served_by_a_class)
{
    struct mu_task *t;
    json_t *j;
    struct mu_node n;
    struct mu_pod p;
    struct mu_err err;

    /* a device-plugin node beside the DRA ones */
    j = js("{\"metadata\":{\"name\":\"dp\"},\"status\":{\"allocatable\":"
           "{\"cpu\":\"8\",\"pods\":\"10\",\"nvidia.com/gpu\":\"1\"}}}");
    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&c, &n, NULL));
    json_decref(j);
    nslice("s1", "n1", "p1", 0, "a,b");
    j = js("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{"
           "\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
           "\"2\"}}}]}}");
    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, &err), 0);
    t = mu_cluster_add_task(&c, &p, &err);
    json_decref(j);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(t->dd); /* the class "gpu" names nvidia.com/gpu */
    ck_assert(fits(t, "n1"));  /* 2 devices of the class */
    ck_assert(!fits(t, "n2")); /* none */
    ck_assert(fits(t, "dp"));  /* the device plugin's: devices not asked */
    mu_task_place(&c, t, mu_cluster_node(&c, "n1"), MU_TASK_BINDING);
    ck_assert_int_eq(held_on("n1"), 2);
    mu_task_unplace(&c, t);
    ck_assert_int_eq(held_on("n1"), 0);
    mu_task_place(&c, t, mu_cluster_node(&c, "dp"), MU_TASK_BINDING);
    ck_assert_int_eq(held_on("n1"), 0);
    mu_task_unplace(&c, t);
    /* the class gone: a plain extended resource again */
    mu_cluster_del_class(&c, "gpu");
    ck_assert_ptr_null(t->dd);
}
END_TEST

START_TEST(test_pipelined_tasks_do_not_share_a_future_device)
{
    struct mu_task *v, *a, *b;
    const struct mu_devnode *nd;

    template_("one", ONE);
    nslice("s1", "n1", "p1", 0, "a");
    v = pod("v", TMPL("one"), "{}");
    a = pod("a", TMPL("one"), "{}");
    b = pod("b", TMPL("one"), "{}");
    nd = mu_devices_node(&c.dev, "n1");
    mu_task_place(&c, v, mu_cluster_node(&c, "n1"), MU_TASK_RUNNING);
    mu_task_set_status(&c, v, MU_TASK_RELEASING);
    ck_assert(mu_devices_fit(&c.dev, a->dd, nd, "n1", 0, true));
    mu_task_place(&c, a, mu_cluster_node(&c, "n1"), MU_TASK_PIPELINED);
    ck_assert(!mu_devices_fit(&c.dev, b->dd, nd, "n1", 0, true));
    mu_task_unplace(&c, a);
    ck_assert(mu_devices_fit(&c.dev, b->dd, nd, "n1", 0, true));
}
END_TEST

/* The quota of a pod's claims rides in its qreq on top of its own
 * request, also of the same name; the node's devused counts the claims'
 * devices only, and goes back when the pod leaves. */
START_TEST(test_quota_rides_in_qreq_and_devused_counts_the_claims)
{
    struct mu_task *a;
    struct mu_cnode *n1;
    int gpu;
    json_t *j;
    struct mu_pod p;
    struct mu_err err;

    template_("two", TWO);
    slice("s1", "n1", "p1", 0, 1, 4, "H100");
    n1 = mu_cluster_node(&c, "n1");
    a = pod("a", TMPL("two"), "{}");
    gpu = mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
    ck_assert_int_ge(gpu, 0);
    ck_assert_uint_eq(a->dd->quota_set, 1u << gpu);
    ck_assert_int_eq(a->qreq->v[gpu], 2);
    ck_assert_int_eq(a->qreq->v[MU_RES_CPU], 1000);
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    ck_assert_int_eq(n1->devused.v[gpu], 2);
    /* a pod that asks one of the name itself, and a claim of two */
    j = js("{\"metadata\":{\"name\":\"b\",\"annotations\":{"
           "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{"
           "\"resourceClaims\":%s,\"containers\":[{\"name\":\"c\","
           "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]},"
           "\"status\":{}}", TMPL("two"));
    ck_assert_msg(mu_pod_decode(j, &c.rn, &p, &err) == 0, "%s", err.msg);
    json_decref(j);
    ck_assert_ptr_nonnull(mu_cluster_add_task(&c, &p, &err));
    {
        struct mu_task *b = mu_cluster_task(&c, "default", "b");

        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->qreq->v[gpu], 3);
        ck_assert_int_eq(mu_devdemand_quota_of(b->dd->qreq, &b->pod.req, gpu), 2);
        mu_task_place(&c, b, n1, MU_TASK_ALLOCATED);
        ck_assert_int_eq(n1->devused.v[gpu], 4);
        mu_task_unplace(&c, b);
    }
    ck_assert_int_eq(n1->devused.v[gpu], 2);
    mu_task_unplace(&c, a);
    ck_assert_int_eq(n1->devused.v[gpu], 0);
}
END_TEST

/* Free devices are searched from a slice's first free one (holds fill it
 * from the front), the future search passes over held devices only while
 * no claim is leaving, and a claim's holds move from its one inline slot
 * to an array at the second device. */
START_TEST(test_free_device_search_skips_only_what_is_held)
{
    struct mu_task *a, *b, *d, *e, *x;
    struct mu_cnode *n1;
    const struct mu_devnode *nd;
    const struct mu_cdev *dv;

    template_("one", ONE);
    template_("three", "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"
                       "\"gpu\",\"count\":3}}]");
    slice("s1", "n1", "p1", 0, 1, 4, "H100");
    a = pod("a", TMPL("one"), "{}");
    b = pod("b", TMPL("one"), "{}");
    d = pod("d", TMPL("one"), "{}");
    e = pod("e", TMPL("one"), "{}");
    x = pod("x", TMPL("three"), "{}");
    n1 = mu_cluster_node(&c, "n1");
    nd = mu_devices_node(&c.dev, "n1");
    dv = nd->v[0]->devs;
    mu_task_place(&c, a, n1, MU_TASK_ALLOCATED);
    mu_task_place(&c, b, n1, MU_TASK_ALLOCATED);
    mu_task_place(&c, d, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(mu_dev_holder(&dv[1]), b->dd->c[0].priv);
    ck_assert_uint_eq(nd->v[0]->first_free, 3);
    /* a device freed before the first free one is found again */
    mu_task_unplace(&c, b);
    ck_assert_uint_eq(nd->v[0]->first_free, 1);
    mu_task_place(&c, e, n1, MU_TASK_ALLOCATED);
    ck_assert_ptr_eq(mu_dev_holder(&dv[1]), e->dd->c[0].priv);
    ck_assert_uint_eq(nd->v[0]->first_free, 3);
    ck_assert(!mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, false));
    ck_assert(!mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, true));
    /* two held devices leaving: the future search must see them */
    mu_task_set_status(&c, a, MU_TASK_RELEASING);
    mu_task_set_status(&c, d, MU_TASK_RELEASING);
    ck_assert_int_eq(c.dev.leaving_marks, 2);
    ck_assert(!mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, false));
    ck_assert(mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, true));
    mu_task_set_status(&c, d, MU_TASK_ALLOCATED);
    ck_assert_int_eq(c.dev.leaving_marks, 1);
    ck_assert(!mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, true));
    mu_task_unplace(&c, a);
    ck_assert_int_eq(c.dev.leaving_marks, 0);
    mu_task_unplace(&c, d);
    mu_task_unplace(&c, e);
    ck_assert_uint_eq(nd->v[0]->first_free, 0);
    /* three devices for one claim, then none */
    mu_task_place(&c, x, n1, MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 3);
    ck_assert_uint_eq(x->dd->c[0].priv->nheld, 3);
    ck_assert_ptr_eq(mu_dev_holder(&dv[2]), x->dd->c[0].priv);
    mu_task_unplace(&c, x);
    ck_assert_int_eq(held_on("n1"), 0);
    ck_assert(mu_devices_fit(&c.dev, x->dd, nd, "n1", 0, false));
}
END_TEST

/* A demand remembers the claim its key names; the inventory losing that
 * claim, or making it again, is seen at the next fit check even when the
 * demand is not resolved again (ASan: no read of the freed claim). */
START_TEST(test_a_claim_gone_or_made_again_is_seen_by_the_demand)
{
    struct mu_task *t;
    json_t *j;
    struct mu_claim cl;
    struct mu_err err;

    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    claim("a-gpu", ONE, "");
    t = pod("a", "[{\"name\":\"gpu\",\"resourceClaimName\":\"a-gpu\"}]",
            "{}");
    ck_assert(fits(t, "n1"));
    mu_devices_del_claim(&c.dev, "default", "a-gpu"); /* not the cluster's */
    ck_assert(!fits(t, "n1"));
    j = js("{\"metadata\":{\"namespace\":\"default\",\"name\":\"a-gpu\"},"
           "\"spec\":{\"devices\":{\"requests\":" ONE "}}}");
    ck_assert_msg(mu_claim_decode(j, &cl, &err) == 0, "%s", err.msg);
    json_decref(j);
    mu_devices_put_claim(&c.dev, &cl);
    ck_assert(fits(t, "n1"));
    mu_task_place(&c, t, mu_cluster_node(&c, "n1"), MU_TASK_ALLOCATED);
    ck_assert_int_eq(held_on("n1"), 1);
}
END_TEST

/* A claim's class, looked up when the claim came, follows the class
 * changing after it (ASan: no read of the class replaced). */
START_TEST(test_a_claims_class_changed_after_it_is_seen)
{
    struct mu_task *t;

    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    claim("a-gpu", ONE, "");
    t = pod("a", "[{\"name\":\"gpu\",\"resourceClaimName\":\"a-gpu\"}]",
            "{}");
    ck_assert(fits(t, "n1"));
    class_("gpu", "\"device.driver == \\\"gpu.y\\\"\"", "nvidia.com/gpu");
    ck_assert(!fits(t, "n1"));
    class_("gpu", "\"device.driver == \\\"gpu.x\\\"\"", "nvidia.com/gpu");
    ck_assert(fits(t, "n1"));
}
END_TEST

/* A claim of one device of class cls, for pod name, and the pod. */
static struct mu_task *pod_of_class(const char *name, const char *cls)
{
    char req[256], key[64], ref[160];

    snprintf(req, sizeof(req),
             "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":"
             "\"%s\"}}]", cls);
    snprintf(key, sizeof(key), "%s-gpu", name);
    claim(key, req, "");
    snprintf(ref, sizeof(ref),
             "[{\"name\":\"gpu\",\"resourceClaimName\":\"%s\"}]", key);
    return pod(name, ref, "{}");
}

#define MODEL_IS(m) \
    "\"device.attributes[\\\"gpu.x\\\"].model == \\\"" m "\\\"\""

/* A device remembers each class's answer in the class's own bit: filled
 * when its slice comes, forgotten when any class changes (a class put
 * again, or a new one taking a deleted class's bit, is asked again), and
 * a class beyond the memo's bits is matched every time. */
START_TEST(test_each_class_keeps_its_own_answer_on_a_device)
{
    struct mu_task *h, *a, *b, *last, *none;
    char name[32];

    class_("h", MODEL_IS("H100"), NULL);
    class_("a", MODEL_IS("A100"), NULL);
    slice("s1", "n1", "p1", 0, 1, 2, "H100");
    h = pod_of_class("h", "h");
    a = pod_of_class("a", "a");
    for (int i = 0; i < 3; i++) { /* asked in turn: neither answer lost */
        ck_assert(fits(h, "n1"));
        ck_assert(!fits(a, "n1"));
    }
    /* a goes, b (H100) comes: it takes a's bit, and is asked */
    mu_cluster_del_class(&c, "a");
    class_("b", MODEL_IS("H100"), NULL);
    b = pod_of_class("b", "b");
    ck_assert(fits(b, "n1"));
    ck_assert(fits(h, "n1"));
    /* h put again selecting A100: its old answer is not kept */
    class_("h", MODEL_IS("A100"), NULL);
    ck_assert(!fits(h, "n1"));
    ck_assert(fits(b, "n1"));
    /* beyond the memo's bits (gpu, h and b hold three) */
    for (int i = 0; i < MU_DEV_CLASS_MEMO; i++) {
        snprintf(name, sizeof(name), "x%02d", i);
        class_(name, MODEL_IS("V100"), NULL);
    }
    class_("zlast", MODEL_IS("H100"), NULL);
    class_("znone", MODEL_IS("V100"), NULL);
    last = pod_of_class("last", "zlast");
    none = pod_of_class("none", "znone");
    ck_assert(fits(last, "n1"));
    ck_assert(!fits(none, "n1"));
    ck_assert(fits(b, "n1"));
    ck_assert(!fits(h, "n1"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dra");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_decode_errors_name_the_field);
    tcase_add_test(tc, test_attributes_are_qualified_and_claims_read_their_status);
    tcase_add_test(tc, test_incomplete_pool_and_old_generation_are_not_usable);
    tcase_add_test(tc, test_take_give_and_undo);
    tcase_add_test(tc, test_shared_claim_is_held_once_on_one_node);
    tcase_add_test(tc, test_api_allocation_pins_the_claim_and_stays);
    tcase_add_test(tc, test_selectors_all_mode_and_first_available);
    tcase_add_test(tc, test_missing_template_then_arrives);
    tcase_add_test(tc, test_removed_slice_leaves_its_holders);
    tcase_add_test(tc, test_api_claim_waits_for_its_own_devices);
    tcase_add_test(tc, test_generation_change_keeps_holds_on_the_newest_copy);
    tcase_add_test(tc, test_api_allocation_over_a_planned_device_replans_the_other);
    tcase_add_test(tc, test_slice_made_again_gives_the_api_claim_its_device);
    tcase_add_test(tc, test_overlapping_classes_count_a_device_once);
    tcase_add_test(tc, test_shared_claim_is_not_charged_per_pod);
    tcase_add_test(
        tc, test_quota_of_all_and_first_available_follows_the_allocation);
    tcase_add_test(tc, test_slices_not_bound_to_a_node);
    tcase_add_test(tc, test_slices_not_bound_to_a_node_edges);
    tcase_add_test(tc, test_status_without_a_claim_name_needs_none);
    tcase_add_test(tc, test_extended_resource_served_by_a_class);
    tcase_add_test(tc, test_pipelined_tasks_do_not_share_a_future_device);
    tcase_add_test(tc, test_free_device_search_skips_only_what_is_held);
    tcase_add_test(tc, test_quota_rides_in_qreq_and_devused_counts_the_claims);
    tcase_add_test(tc, test_a_claim_gone_or_made_again_is_seen_by_the_demand);
    tcase_add_test(tc, test_a_claims_class_changed_after_it_is_seen);
    tcase_add_test(tc, test_each_class_keeps_its_own_answer_on_a_device);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
