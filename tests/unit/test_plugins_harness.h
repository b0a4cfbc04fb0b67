/*
 * test_plugins_harness.h - a small cluster, a configuration and a session
 * for the plugin tests (test_plugins.c, test_capacity.c): one file's
 * statics, included once per test program. setup/teardown are the
 * fixtures.
 */
#ifndef MU_TEST_PLUGINS_HARNESS_H
#define MU_TEST_PLUGINS_HARNESS_H

#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "plugins.h"

/* a helper one of the test programs does not use */
#define HARNESS_UNUSED __attribute__((unused))

static struct mu_cluster C;
static struct mu_conf conf;
static struct mu_ssn ssn;
static bool opened;
static int GPU;

static void setup(void)
{
    mu_cluster_init(&C);
    GPU = mu_resnames_index(&C.rn, "nvidia.com/gpu", true);
    memset(&conf, 0, sizeof(conf));
    opened = false;
}

static void teardown(void)
{
    if (opened)
        mu_ssn_close(&ssn);
    mu_conf_release(&conf);
    mu_cluster_release(&C);
}

/* JSON written with single quotes, for readability. */
static MU_PRINTF(1, 2) json_t *js(const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;
    json_error_t e;
    json_t *j;

    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    for (char *p = sb.buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = json_loads(sb.buf, 0, &e);
    ck_assert_msg(j != NULL, "bad test JSON %s: %s", sb.buf, e.text);
    mu_sb_release(&sb);
    return j;
}

static struct mu_cnode *add_node(json_t *j)
{
    struct mu_node n;
    struct mu_err err;
    struct mu_cnode *cn;

    ck_assert_int_eq(mu_node_decode(j, &C.rn, &n, &err), 0);
    json_decref(j);
    cn = mu_cluster_add_node(&C, &n, &err);
    ck_assert_ptr_nonnull(cn);
    return cn;
}

/* 64 cores, 256Gi, 110 pods and `gpus` GPUs. */
static struct mu_cnode *gpu_node(const char *name, int gpus)
{
    return add_node(js("{'metadata':{'name':'%s'},'status':{'allocatable':"
                       "{'cpu':'64','memory':'256Gi','pods':'110',"
                       "'nvidia.com/gpu':'%d'}}}",
                       name, gpus));
}

/* cap or guarantee < 0: absent. */
HARNESS_UNUSED static struct mu_cqueue *add_queue(const char *name, int weight, int cap,
                                   int guarantee, const char *state)
{
    char c[96] = "", g[96] = "";
    struct mu_queue_spec q;
    struct mu_err err;
    struct mu_cqueue *cq;
    json_t *j;

    if (cap >= 0)
        snprintf(c, sizeof(c), ",'capability':{'nvidia.com/gpu':'%d'}", cap);
    if (guarantee >= 0)
        snprintf(g, sizeof(g), ",'guarantee':{'resource':{'nvidia.com/gpu':"
                               "'%d'}}",
                 guarantee);
    j = js("{'metadata':{'name':'%s'},'spec':{'weight':%d%s%s},"
           "'status':{'state':'%s'}}",
           name, weight, c, g, state);
    ck_assert_int_eq(mu_queue_decode(j, &C.rn, &q, &err), 0);
    json_decref(j);
    cq = mu_cluster_add_queue(&C, &q, &err);
    ck_assert_ptr_nonnull(cq);
    return cq;
}

/* min_gpu < 0: no minResources; extra: more spec members (",'k':v"). */
static struct mu_job *add_job_x(const char *name, const char *queue, int min,
                                const char *phase, int min_gpu,
                                const char *extra)
{
    char m[96] = "";
    struct mu_podgroup pg;
    struct mu_err err;
    struct mu_job *jb;
    json_t *j;

    if (min_gpu >= 0)
        snprintf(m, sizeof(m), ",'minResources':{'nvidia.com/gpu':'%d'}",
                 min_gpu);
    j = js("{'metadata':{'namespace':'default','name':'%s'},'spec':{"
           "'minMember':%d,'queue':'%s'%s%s},'status':{'phase':'%s'}}",
           name, min, queue, m, extra, phase);
    ck_assert_int_eq(mu_podgroup_decode(j, &C.rn, &pg, &err), 0);
    json_decref(j);
    jb = mu_cluster_add_job(&C, &pg, &err);
    ck_assert_ptr_nonnull(jb);
    return jb;
}

static struct mu_job *add_job(const char *name, const char *queue, int min,
                              const char *phase, int min_gpu)
{
    return add_job_x(name, queue, min, phase, min_gpu, "");
}

static struct mu_task *add_task(json_t *j)
{
    struct mu_pod p;
    struct mu_err err;
    struct mu_task *t;

    ck_assert_int_eq(mu_pod_decode(j, &C.rn, &p, &err), 0);
    json_decref(j);
    t = mu_cluster_add_task(&C, &p, &err);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* A pod of group with 1 cpu, 1Gi and gpus GPUs; running on node, or
 * pending when node is NULL. */
static struct mu_task *pod_x(const char *group, const char *name, int gpus,
                             const char *node, const char *role)
{
    char n[64] = "", r[96] = "";

    if (node)
        snprintf(n, sizeof(n), "'nodeName':'%s',", node);
    if (role)
        snprintf(r, sizeof(r), ",'volcano.sh/task-spec':'%s'", role);
    return add_task(js("{'metadata':{'namespace':'default','name':'%s',"
                       "'annotations':{'scheduling.k8s.io/group-name':'%s'%s}},"
                       "'spec':{%s'containers':[{'name':'c','resources':{"
                       "'requests':{'cpu':'1','memory':'1Gi',"
                       "'nvidia.com/gpu':'%d'}}}]},'status':{'phase':'%s'}}",
                       name, group, r, n, gpus, node ? "Running" : "Pending"));
}

static struct mu_task *pod(const char *group, const char *name, int gpus,
                           const char *node)
{
    return pod_x(group, name, gpus, node, NULL);
}

/* count one-GPU pods named <group>-<first..first+count-1> */
static void pods(const char *group, int first, int count, const char *node)
{
    for (int i = first; i < first + count; i++) {
        char name[64];

        snprintf(name, sizeof(name), "%s-%d", group, i);
        pod(group, name, 1, node);
    }
}

static void open_ssn(const char *plugins)
{
    struct mu_err err;
    char *text = mu_xasprintf("actions: \"enqueue, allocate\"\n"
                              "tiers:\n- plugins:\n%s",
                              plugins);

    mu_cluster_link(&C);
    ck_assert_msg(mu_conf_parse("test.conf", text, strlen(text), &conf,
                                &err) == 0,
                  "%s", err.msg);
    free(text);
    mu_ssn_open(&ssn, &C, &conf, 0);
    opened = true;
}

HARNESS_UNUSED static void *state(const struct mu_plugin *p)
{
    for (int i = 0; i < ssn.ninst; i++)
        if (ssn.inst[i] == p)
            return ssn.inst_st[i];
    ck_abort_msg("plugin %s not open", p->name);
    return NULL;
}

static int64_t gpus(const struct mu_res *r)
{
    return mu_res_has(r, GPU) ? r->v[GPU] : 0;
}

#endif
