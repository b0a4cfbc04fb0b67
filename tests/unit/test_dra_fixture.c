/* The DRA tests' fixture (test_dra_fixture.h). */
#include "test_dra_fixture.h"

#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "api/dra.h"
#include "api/object.h"
#include "sched/cluster_dra.h"

struct mu_cluster c;

json_t *js(const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;
    json_t *j;
    json_error_t e;

    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    j = json_loads(sb.buf, 0, &e);
    ck_assert_msg(j != NULL, "bad test JSON: %s: %s", e.text, sb.buf);
    mu_sb_release(&sb);
    return j;
}

void class_(const char *name, const char *sel, const char *ext)
{
    json_t *j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s"
                   "\"selectors\":[{\"cel\":{\"expression\":%s}}]}}",
                   name, ext ? "\"extendedResourceName\":\"" : "",
                   ext ? ext : "", ext ? "\"," : "", sel);
    struct mu_devclass dc;
    struct mu_err err;

    ck_assert_msg(mu_devclass_decode(j, &dc, &err) == 0, "%s", err.msg);
    mu_cluster_put_class(&c, &dc);
    json_decref(j);
}

/* A slice of n devices gpu-0.. with attribute model on node. */
void slice(const char *name, const char *node, const char *pool,
                  int gen, int count, int n, const char *model)
{
    struct mu_sb devs;
    json_t *j;
    struct mu_slice s;
    struct mu_err err;

    mu_sb_init(&devs);
    for (int i = 0; i < n; i++)
        mu_sb_addf(&devs,
                   "%s{\"name\":\"%s-%d\",\"attributes\":"
                   "{\"model\":{\"string\":\"%s\"}},"
                   "\"capacity\":{\"memory\":{\"value\":\"80Gi\"}}}",
                   i ? "," : "", name, i, model);
    j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"gpu.x\","
           "\"nodeName\":\"%s\",\"pool\":{\"name\":\"%s\",\"generation\":%d,"
           "\"resourceSliceCount\":%d},\"devices\":[%s]}}",
           name, node, pool, gen, count, devs.buf ? devs.buf : "");
    mu_sb_release(&devs);
    ck_assert_msg(mu_slice_decode(j, &s, &err) == 0, "%s", err.msg);
    mu_cluster_put_slice(&c, &s);
    json_decref(j);
}

void labelled_node(const char *name, const char *labels)
{
    json_t *j = js("{\"metadata\":{\"name\":\"%s\",\"labels\":%s},"
                   "\"status\":{\"allocatable\":{\"cpu\":\"8\","
                   "\"pods\":\"10\"}}}", name, labels);
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&c, &n, NULL));
    json_decref(j);
}

void node(const char *name)
{
    labelled_node(name, "{}");
}

void template_(const char *name, const char *requests)
{
    json_t *j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"spec\":"
                   "{\"devices\":{\"requests\":%s}}}}", name, requests);
    struct mu_claimtemplate t;
    struct mu_err err;

    ck_assert_msg(mu_claimtemplate_decode(j, &t, &err) == 0, "%s", err.msg);
    mu_cluster_put_template(&c, &t);
    json_decref(j);
}

/* A claim; status is "" or the JSON of its status. */
void claim(const char *name, const char *requests, const char *status)
{
    json_t *j = js("{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"devices\":"
                   "{\"requests\":%s}}%s%s}", name, requests,
                   *status ? ",\"status\":" : "", status);
    struct mu_claim cl;
    struct mu_err err;

    ck_assert_msg(mu_claim_decode(j, &cl, &err) == 0, "%s", err.msg);
    mu_cluster_put_claim(&c, &cl);
    json_decref(j);
}

/* A pod whose claims JSON is `claims` (spec.resourceClaims). */
struct mu_task *pod(const char *name, const char *claims,
                           const char *status)
{
    json_t *j = js("{\"metadata\":{\"name\":\"%s\",\"annotations\":{"
                   "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{"
                   "\"resourceClaims\":%s,\"containers\":[{\"name\":\"c\","
                   "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
                   "\"status\":%s}", name, claims, status);
    struct mu_pod p;
    struct mu_task *t;
    struct mu_err err;

    ck_assert_msg(mu_pod_decode(j, &c.rn, &p, &err) == 0, "%s", err.msg);
    t = mu_cluster_add_task(&c, &p, &err);
    ck_assert_ptr_nonnull(t);
    json_decref(j);
    return t;
}

bool fits(const struct mu_task *t, const char *n)
{
    const struct mu_devnode *nd = mu_devices_node(&c.dev, n);
    uint32_t dims = mu_cluster_node(&c, n)->spec.allocatable.set;
    bool ok = mu_devices_fit(&c.dev, t->dd, nd, n, dims, false);

    /* a pod of one private claim is asked through the claim alone in the
     * cycle (mu_ssn_fits): the same answers, now and in the future */
    if (t->dd_one) {
        ck_assert_int_eq(mu_devices_fit_one(&c.dev, t->dd_one, nd, n, false),
                         ok);
        ck_assert_int_eq(mu_devices_fit_one(&c.dev, t->dd_one, nd, n, true),
                         mu_devices_fit(&c.dev, t->dd, nd, n, dims, true));
    }
    return ok;
}

int held_on(const char *n)
{
    const struct mu_devnode *nd = mu_map_get(&c.dev.nodes, n);
    int k = 0;

    for (size_t i = 0; nd && i < nd->n; i++)
        for (size_t d = 0; d < nd->v[i]->s.ndevs; d++)
            k += nd->v[i]->holders[d] != NULL;
    return k;
}


void setup(void)
{
    mu_cluster_init(&c);
    class_("gpu", "\"device.driver == \\\"gpu.x\\\"\"", "nvidia.com/gpu");
    node("n1");
    node("n2");
}

void teardown(void)
{
    mu_cluster_release(&c);
}
