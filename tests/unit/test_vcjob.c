#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "api/object.h"
#include "api/vcjob.h"
#include "api/vcjob_expand.h"

#define UID "6f1c2d3e-8a4b-4c5d-9e6f-0a1b2c3d4e5f"
#define PG_NAME "pytorch-dist-8gpu-" UID

/* Test JSON is written with ' for " (see load()); \u0027 is a real '. */
#define CONTAINER(rank, env, limits)                                         \
    "{'name':'pytorch','image':'nvcr.io/nvidia/pytorch:24.05-py3',"          \
    "'command':['bash','-c','torchrun --nnodes=9 --node_rank=" rank          \
    " --nproc_per_node=1 --master_addr=pytorch-dist-8gpu-master-0 "          \
    "train.py']," env "'resources':{'limits':" limits "}}"

/* The book's pytorch-8gpu-vcjob.yaml, plus a uid; PLUGINS is spliced in. */
#define BOOK_JOB(plugins)                                                    \
    "{'apiVersion':'batch.volcano.sh/v1alpha1','kind':'Job',"                \
    "'metadata':{'name':'pytorch-dist-8gpu','uid':'" UID "'},"               \
    "'spec':{'minAvailable':9,'schedulerName':'volcano','queue':'team-a',"   \
    plugins "'policies':[{'event':'PodEvicted','action':'RestartJob'}],"     \
    "'tasks':["                                                              \
    "{'name':'master','replicas':1,'template':{'spec':{"                     \
    "'restartPolicy':'OnFailure','containers':["                             \
    CONTAINER("0", "", "{'cpu':'8','memory':'32Gi'}") "]}}},"                \
    "{'name':'worker','replicas':8,'template':{'spec':{"                     \
    "'restartPolicy':'OnFailure','containers':["                             \
    CONTAINER("$RANK",                                                       \
              "'env':[{'name':'RANK','valueFrom':{'fieldRef':{'fieldPath':"  \
              "'metadata.annotations[\\u0027volcano.sh/task-index\\u0027]'"  \
              "}}}],",                                                       \
              "{'nvidia.com/gpu':1,'cpu':'8','memory':'32Gi'}") "]}}}]}}"

#define BOOK BOOK_JOB("")

#define TPL "'template':{'spec':{'containers':[{'name':'c','image':'x'}]}}"
#define TASK(name, extra) "{'name':'" name "','replicas':1," TPL extra "}"
#define JOB(spec) "{'metadata':{'name':'j','uid':'u1'},'spec':{" spec "}}"

static json_t *load(const char *text)
{
    char *s = strdup(text);
    json_error_t jerr;
    json_t *j;

    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = json_loads(s, 0, &jerr);
    ck_assert_msg(j != NULL, "bad test JSON: %s at %d", jerr.text,
                  jerr.position);
    free(s);
    return j;
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static const char *ann(const json_t *pod, const char *key)
{
    return str(json_object_get(json_object_get(pod, "metadata"),
                               "annotations"), key);
}

static const char *label(const json_t *pod, const char *key)
{
    return str(json_object_get(json_object_get(pod, "metadata"), "labels"),
               key);
}

static json_t *at(const json_t *o, const char *k1, const char *k2)
{
    return json_object_get(json_object_get(o, k1), k2);
}

static json_t *container(const json_t *pod, const char *key, size_t i)
{
    return json_array_get(at(pod, "spec", key), i);
}

static json_t *podgroup(const char *text)
{
    json_t *job = load(text), *pg = NULL;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_vcjob_podgroup(job, &pg, &err) == 0, "%s", err.msg);
    json_decref(job);
    return pg;
}

static json_t *pod(const char *text, size_t task, int index, int gated)
{
    json_t *job = load(text), *p = NULL;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_vcjob_pod(job, task, index, 2, 1, gated, &p, &err) == 0,
                  "%s", err.msg);
    json_decref(job);
    return p;
}

static void assert_min_resources(const json_t *pg, const char *cpu,
                                 const char *mem, const char *gpu,
                                 const char *pods)
{
    json_t *mr = at(pg, "spec", "minResources");

    ck_assert_uint_eq(json_object_size(mr), gpu ? 4 : 3);
    ck_assert_str_eq(str(mr, "cpu"), cpu);
    ck_assert_str_eq(str(mr, "memory"), mem);
    ck_assert_str_eq(str(mr, "pods"), pods);
    if (gpu)
        ck_assert_str_eq(str(mr, "nvidia.com/gpu"), gpu);
}

START_TEST(test_vcjob_podgroup_of_book_job)
{
    json_t *pg = podgroup(BOOK);
    json_t *ref = json_array_get(at(pg, "metadata", "ownerReferences"), 0);
    json_t *mtm = at(pg, "spec", "minTaskMember");

    ck_assert_str_eq(str(pg, "apiVersion"), "scheduling.volcano.sh/v1beta1");
    ck_assert_str_eq(str(pg, "kind"), "PodGroup");
    ck_assert_str_eq(str(json_object_get(pg, "metadata"), "name"), PG_NAME);
    ck_assert_str_eq(str(json_object_get(pg, "metadata"), "namespace"),
                     "default");
    ck_assert_int_eq(json_integer_value(at(pg, "spec", "minMember")), 9);
    ck_assert_uint_eq(json_object_size(mtm), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(mtm, "master")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(mtm, "worker")), 8);
    ck_assert_str_eq(str(json_object_get(pg, "spec"), "queue"), "team-a");
    ck_assert_ptr_null(at(pg, "spec", "priorityClassName"));
    assert_min_resources(pg, "72", "288Gi", "8", "9");
    ck_assert_str_eq(str(ref, "apiVersion"), "batch.volcano.sh/v1alpha1");
    ck_assert_str_eq(str(ref, "kind"), "Job");
    ck_assert_str_eq(str(ref, "name"), "pytorch-dist-8gpu");
    ck_assert_str_eq(str(ref, "uid"), UID);
    ck_assert(json_is_true(json_object_get(ref, "controller")));
    ck_assert(json_is_true(json_object_get(ref, "blockOwnerDeletion")));
    ck_assert_str_eq(str(json_object_get(pg, "status"), "phase"), "Pending");
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_podgroup_copies_metadata_and_priority_class)
{
    json_t *pg = podgroup(
        "{'metadata':{'name':'j','namespace':'ml','uid':'u1',"
        "'labels':{'team':'a'},'annotations':{'muster.io/run-for':'1h'}},"
        "'spec':{'priorityClassName':'high','tasks':[" TASK("a", "") "]}}");

    ck_assert_str_eq(str(json_object_get(pg, "metadata"), "name"), "j-u1");
    ck_assert_str_eq(str(json_object_get(pg, "metadata"), "namespace"), "ml");
    ck_assert_str_eq(str(at(pg, "metadata", "labels"), "team"), "a");
    ck_assert_str_eq(str(at(pg, "metadata", "annotations"),
                         "muster.io/run-for"), "1h");
    ck_assert_str_eq(str(json_object_get(pg, "spec"), "priorityClassName"),
                     "high");
    ck_assert_str_eq(str(json_object_get(pg, "spec"), "queue"), "default");
    ck_assert_str_eq(str(at(pg, "spec", "minResources"), "pods"), "1");
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_min_resources_takes_first_pods)
{
    json_t *job = load(BOOK), *pg = NULL;
    struct mu_err err = {{0}};

    json_object_set_new(json_object_get(job, "spec"), "minAvailable",
                        json_integer(3));
    ck_assert_int_eq(mu_vcjob_podgroup(job, &pg, &err), 0);
    /* the master and the first two workers */
    ck_assert_int_eq(json_integer_value(at(pg, "spec", "minMember")), 3);
    assert_min_resources(pg, "24", "96Gi", "2", "3");
    json_decref(pg);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_min_resources_tops_up_task_minimums)
{
    json_t *job = load(BOOK), *pg = NULL;
    json_t *worker = json_array_get(at(job, "spec", "tasks"), 1);
    struct mu_err err = {{0}};

    json_object_set_new(worker, "minAvailable", json_integer(4));
    json_object_set_new(json_object_get(job, "spec"), "minAvailable",
                        json_integer(6));
    ck_assert_int_eq(mu_vcjob_podgroup(job, &pg, &err), 0);
    /* 1 master + 4 workers, topped up with 1 more worker */
    assert_min_resources(pg, "48", "192Gi", "5", "6");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         at(pg, "spec", "minTaskMember"), "worker")),
                     4);
    json_decref(pg);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_min_resources_uses_scheduling_requests)
{
    /* requests, not limits; an init container larger than the sum wins */
    json_t *pg = podgroup(JOB(
        "'tasks':[{'name':'a','replicas':3,'template':{'spec':{"
        "'initContainers':[{'name':'i','resources':{'requests':"
        "{'cpu':'2','memory':'512Mi'}}}],"
        "'containers':[{'name':'c','resources':{'requests':{'cpu':'500m',"
        "'memory':'1Gi'},'limits':{'cpu':'4','memory':'2Gi'}}}]}}}]"));

    assert_min_resources(pg, "6", "3Gi", NULL, "3");
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_min_available_zero_reads_as_unset)
{
    /* Go's zero value: Volcano's webhook defaults 0 like an absent field */
    json_t *pg = podgroup(JOB("'minAvailable':0,'tasks':[" TASK("a", "")
                              ",{'name':'b','replicas':3,'minAvailable':0,"
                              TPL "}]"));

    ck_assert_int_eq(json_integer_value(at(pg, "spec", "minMember")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         at(pg, "spec", "minTaskMember"), "b")),
                     0);
    ck_assert_str_eq(str(at(pg, "spec", "minResources"), "pods"), "1");
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_min_resources_empty_without_replicas)
{
    json_t *pg = podgroup(JOB("'tasks':[{'name':'a','replicas':0," TPL "}]"));

    ck_assert_int_eq(json_integer_value(at(pg, "spec", "minMember")), 0);
    ck_assert_uint_eq(json_object_size(at(pg, "spec", "minResources")), 0);
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_podgroup_reports_bad_template_quantity)
{
    json_t *job = load(JOB(
        "'tasks':[{'name':'a','replicas':1,'template':{'spec':{'containers':"
        "[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'0.5'}}}]}}}]"));
    json_t *out = json_null();
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_podgroup(job, &out, &err), -EINVAL);
    ck_assert_ptr_eq(out, json_null());
    ck_assert_msg(mu_starts_with(err.msg, "spec.tasks[0].template: ") &&
                      strstr(err.msg, "nvidia.com/gpu"),
                  "%s", err.msg);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_pods_of_book_job)
{
    static const char *const idx[] = {"0", "1", "2", "3",
                                      "4", "5", "6", "7"};
    json_t *master = pod(BOOK, 0, 0, 1), *pg = podgroup(BOOK);
    const char *group = str(json_object_get(pg, "metadata"), "name");

    ck_assert_str_eq(group, PG_NAME);
    ck_assert_str_eq(str(json_object_get(master, "metadata"), "name"),
                     "pytorch-dist-8gpu-master-0");
    ck_assert_str_eq(ann(master, MU_ANN_TASK_SPEC), "master");
    json_decref(master);
    for (int i = 0; i < 8; i++) {
        json_t *p = pod(BOOK, 1, i, 1);
        json_t *meta = json_object_get(p, "metadata");
        json_t *ref = json_array_get(json_object_get(meta, "ownerReferences"),
                                     0);
        json_t *c = container(p, "containers", 0);
        json_t *env = json_object_get(c, "env");
        char name[64];

        snprintf(name, sizeof(name), "pytorch-dist-8gpu-worker-%d", i);
        ck_assert_str_eq(str(p, "apiVersion"), "v1");
        ck_assert_str_eq(str(p, "kind"), "Pod");
        ck_assert_str_eq(str(meta, "name"), name);
        ck_assert_str_eq(str(meta, "namespace"), "default");
        ck_assert_str_eq(ann(p, MU_ANN_GROUP), group);
        ck_assert_str_eq(ann(p, "volcano.sh/job-name"), "pytorch-dist-8gpu");
        ck_assert_str_eq(ann(p, "volcano.sh/queue-name"), "team-a");
        ck_assert_str_eq(ann(p, MU_ANN_TASK_SPEC), "worker");
        ck_assert_str_eq(ann(p, MU_ANN_TASK_INDEX), idx[i]);
        ck_assert_str_eq(ann(p, "volcano.sh/job-version"), "2");
        ck_assert_str_eq(ann(p, "volcano.sh/template-uid"),
                         "pytorch-dist-8gpu-worker");
        ck_assert_str_eq(ann(p, "volcano.sh/job-retry-count"), "1");
        ck_assert_str_eq(label(p, "volcano.sh/job-name"), "pytorch-dist-8gpu");
        ck_assert_str_eq(label(p, "volcano.sh/job-namespace"), "default");
        ck_assert_str_eq(label(p, "volcano.sh/queue-name"), "team-a");
        ck_assert_str_eq(label(p, MU_ANN_TASK_SPEC), "worker");
        ck_assert_str_eq(label(p, MU_ANN_TASK_INDEX), idx[i]);
        ck_assert_str_eq(str(ref, "kind"), "Job");
        ck_assert_str_eq(str(ref, "uid"), UID);
        ck_assert(json_is_true(json_object_get(ref, "controller")));
        ck_assert_str_eq(str(json_object_get(p, "spec"), "schedulerName"),
                         "volcano");
        ck_assert_str_eq(str(json_object_get(p, "spec"), "restartPolicy"),
                         "OnFailure");
        ck_assert_str_eq(str(json_array_get(at(p, "spec", "schedulingGates"),
                                            0), "name"), MU_GATE);
        /* the template's env (RANK from the task-index annotation) is kept */
        ck_assert_uint_eq(json_array_size(env), 1);
        ck_assert_str_eq(str(json_array_get(env, 0), "name"), "RANK");
        ck_assert_str_eq(str(at(json_array_get(env, 0), "valueFrom",
                                "fieldRef"), "fieldPath"),
                         "metadata.annotations['volcano.sh/task-index']");
        ck_assert_int_eq(json_integer_value(json_object_get(
                             at(c, "resources", "limits"), "nvidia.com/gpu")),
                         1);
        ck_assert_ptr_null(json_object_get(json_object_get(p, "spec"),
                                           "hostname"));
        json_decref(p);
    }
    json_decref(pg);
}
END_TEST

START_TEST(test_vcjob_pod_decodes_as_a_gang_member)
{
    json_t *p = pod(BOOK, 1, 5, 1);
    struct mu_resnames rn;
    struct mu_pod d;
    struct mu_err err = {{0}};
    int gpu;

    mu_resnames_init(&rn);
    ck_assert_msg(mu_pod_decode(p, &rn, &d, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(d.group, PG_NAME);
    ck_assert_str_eq(d.task_spec, "worker");
    ck_assert_int_eq(d.task_index, 5);
    ck_assert_uint_eq(d.ngates, 1);
    ck_assert_str_eq(d.scheduler_name, "volcano");
    gpu = mu_resnames_index(&rn, "nvidia.com/gpu", false);
    ck_assert_int_ge(gpu, 0);
    ck_assert_int_eq(mu_res_get(&d.req, gpu), 1);
    ck_assert_int_eq(mu_res_get(&d.req, MU_RES_CPU), 8000);
    mu_pod_release(&d);
    mu_resnames_release(&rn);
    json_decref(p);
}
END_TEST

START_TEST(test_vcjob_pod_gate_only_when_gated_and_once)
{
    json_t *p = pod(BOOK, 0, 0, 0);
    json_t *job, *q = NULL;
    struct mu_err err = {{0}};

    ck_assert_ptr_null(at(p, "spec", "schedulingGates"));
    json_decref(p);
    job = load(JOB("'tasks':[{'name':'a','replicas':1,'template':{'spec':{"
                   "'schedulingGates':[{'name':'other'},"
                   "{'name':'muster.io/gang'}],"
                   "'containers':[{'name':'c'}]}}}]"));
    ck_assert_int_eq(mu_vcjob_pod(job, 0, 0, 0, 0, 1, &q, &err), 0);
    ck_assert_uint_eq(json_array_size(at(q, "spec", "schedulingGates")), 2);
    json_decref(q);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_pod_env_plugin_adds_task_index)
{
    json_t *p = pod(BOOK_JOB("'plugins':{'env':[]},"), 1, 3, 0);
    json_t *env = json_object_get(container(p, "containers", 0), "env");

    ck_assert_uint_eq(json_array_size(env), 3);
    ck_assert_str_eq(str(json_array_get(env, 0), "name"), "RANK");
    ck_assert_str_eq(str(json_array_get(env, 1), "name"), "VK_TASK_INDEX");
    ck_assert_str_eq(str(json_array_get(env, 1), "value"), "3");
    ck_assert_str_eq(str(json_array_get(env, 2), "name"), "VC_TASK_INDEX");
    ck_assert_str_eq(str(json_array_get(env, 2), "value"), "3");
    json_decref(p);

    p = pod(JOB("'plugins':{'env':null},'tasks':[{'name':'a','replicas':2,"
                "'template':{'spec':{'initContainers':[{'name':'i'}],"
                "'containers':[{'name':'c'},{'name':'d'}]}}}]"),
            0, 1, 0);
    ck_assert_str_eq(str(json_array_get(json_object_get(
                             container(p, "initContainers", 0), "env"), 0),
                         "value"), "1");
    ck_assert_uint_eq(json_array_size(json_object_get(
                          container(p, "containers", 1), "env")), 2);
    json_decref(p);
}
END_TEST

START_TEST(test_vcjob_pod_svc_plugin_sets_hostname)
{
    json_t *p = pod(BOOK_JOB("'plugins':{'pytorch':[]},"), 1, 2, 0);

    ck_assert_str_eq(str(json_object_get(p, "spec"), "hostname"),
                     "pytorch-dist-8gpu-worker-2");
    ck_assert_str_eq(str(json_object_get(p, "spec"), "subdomain"),
                     "pytorch-dist-8gpu");
    json_decref(p);
    p = pod(JOB("'plugins':{'svc':[]},'tasks':[{'name':'a','replicas':1,"
                "'template':{'spec':{'hostname':'h','containers':[{}]}}}]"),
            0, 0, 0);
    ck_assert_str_eq(str(json_object_get(p, "spec"), "hostname"), "h");
    ck_assert_str_eq(str(json_object_get(p, "spec"), "subdomain"), "j");
    json_decref(p);
}
END_TEST

/* env[name] of a container, or NULL. */
static const char *env_of(const json_t *c, const char *name)
{
    const char *v = NULL;
    json_t *e;
    size_t i;

    json_array_foreach (json_object_get(c, "env"), i, e)
        if (!strcmp(str(e, "name"), name))
            v = str(e, "value"); /* the last wins, as in a pod */
    return v;
}

START_TEST(test_vcjob_pod_pytorch_plugin_env_and_port)
{
    json_t *m = pod(BOOK_JOB("'plugins':{'pytorch':['--port=29500']},"), 0, 0, 0);
    json_t *w = pod(BOOK_JOB("'plugins':{'pytorch':['--port','29500']},"), 1, 3, 0);
    json_t *mc = container(m, "containers", 0), *wc = container(w, "containers", 0);
    json_t *port = json_array_get(json_object_get(wc, "ports"), 0);

    ck_assert_str_eq(env_of(mc, "MASTER_ADDR"),
                     "pytorch-dist-8gpu-master-0.pytorch-dist-8gpu");
    ck_assert_str_eq(env_of(wc, "MASTER_ADDR"),
                     "pytorch-dist-8gpu-master-0.pytorch-dist-8gpu");
    ck_assert_str_eq(env_of(wc, "MASTER_PORT"), "29500");
    ck_assert_str_eq(env_of(mc, "WORLD_SIZE"), "9");
    ck_assert_str_eq(env_of(mc, "RANK"), "0");
    ck_assert_str_eq(env_of(wc, "RANK"), "4"); /* index 3 + 1 */
    ck_assert_str_eq(str(port, "name"), "pytorchjob-port");
    ck_assert_int_eq(json_integer_value(json_object_get(port, "containerPort")),
                     29500);
    ck_assert_ptr_null(at(w, "spec", "initContainers")); /* not asked for */
    json_decref(m);
    json_decref(w);
    /* wait-for-master on workers only; a port already there is kept */
    w = pod(JOB("'plugins':{'pytorch':['--wait-master-enabled',"
                "'--wait-master-timeout=60']},"
                "'tasks':[{'name':'master','replicas':1," TPL "},"
                "{'name':'worker','replicas':2,'template':{'spec':{"
                "'containers':[{'name':'c','ports':[{'containerPort':23456}]}]"
                "}}}]"),
            1, 1, 0);
    wc = container(w, "initContainers", 0);
    ck_assert_str_eq(str(wc, "name"), "wait-for-master");
    ck_assert_str_eq(str(wc, "image"), "busybox:1.36.1");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(
                                     json_object_get(wc, "command"), 2)),
                                 "TIMEOUT=60\nELAPSED=0\nuntil { nc -z "
                                 "j-master-0.j 23456 || echo > "
                                 "/dev/tcp/j-master-0.j/23456; }"));
    wc = container(w, "containers", 0);
    ck_assert_uint_eq(json_array_size(json_object_get(wc, "ports")), 1);
    ck_assert_str_eq(env_of(wc, "RANK"), "2");
    ck_assert_str_eq(env_of(wc, "WORLD_SIZE"), "3");
    json_decref(w);
}
END_TEST

START_TEST(test_vcjob_pod_tensorflow_plugin_tf_config)
{
    json_t *p = pod(JOB("'plugins':{'tensorflow':['--port=5000']},'tasks':["
                        "{'name':'ps','replicas':1," TPL "},"
                        "{'name':'worker','replicas':2," TPL "}]"),
                    1, 1, 0);

    ck_assert_str_eq(env_of(container(p, "containers", 0), "TF_CONFIG"),
                     "{\"cluster\":{\"ps\":[\"j-ps-0.j:5000\"],\"worker\":"
                     "[\"j-worker-0.j:5000\",\"j-worker-1.j:5000\"]},"
                     "\"task\":{\"type\":\"worker\",\"index\":1}}");
    json_decref(p);
    p = pod(JOB("'plugins':{'tensorflow':['--evaluator=eval']},'tasks':["
                "{'name':'worker','replicas':1," TPL "},"
                "{'name':'eval','replicas':1,'template':{'spec':{"
                "'hostname':'ev','subdomain':'s','containers':[{'name':'c'}]"
                "}}}]"),
            1, 0, 0);
    ck_assert_str_eq(env_of(container(p, "containers", 0), "TF_CONFIG"),
                     "{\"cluster\":{\"worker\":[\"j-worker-0.j:2222\"],"
                     "\"evaluator\":[\"ev.s:2222\"]},"
                     "\"task\":{\"type\":\"evaluator\",\"index\":0}}");
    json_decref(p);
    /* one task of one replica: nothing */
    p = pod(JOB("'plugins':{'tensorflow':[]},'tasks':[" TASK("worker", "") "]"),
            0, 0, 0);
    ck_assert_ptr_null(env_of(container(p, "containers", 0), "TF_CONFIG"));
    json_decref(p);
}
END_TEST

START_TEST(test_vcjob_pod_mpi_plugin_host_list_and_port)
{
    const char *job = JOB("'plugins':{'mpi':['--port=2222']},'tasks':["
                          "{'name':'master','replicas':1,'template':{'spec':{"
                          "'initContainers':[{'name':'i'}],"
                          "'containers':[{'name':'c'}]}}},"
                          "{'name':'worker','replicas':3," TPL "}]");
    json_t *m = pod(job, 0, 0, 0), *w = pod(job, 1, 2, 0);
    json_t *port = json_array_get(
        json_object_get(container(w, "containers", 0), "ports"), 0);

    ck_assert_str_eq(env_of(container(m, "containers", 0), "MPI_HOST"),
                     "j-worker-0.j,j-worker-1.j,j-worker-2.j");
    ck_assert_str_eq(env_of(container(m, "initContainers", 0), "MPI_HOST"),
                     "j-worker-0.j,j-worker-1.j,j-worker-2.j");
    ck_assert_ptr_null(env_of(container(w, "containers", 0), "MPI_HOST"));
    ck_assert_str_eq(str(port, "name"), "mpijob-port");
    ck_assert_int_eq(json_integer_value(json_object_get(port, "containerPort")),
                     2222);
    /* the mpi plugin implies ssh and svc (the webhook adds them) */
    ck_assert_str_eq(str(json_object_get(m, "spec"), "subdomain"), "j");
    json_decref(m);
    json_decref(w);
}
END_TEST

START_TEST(test_vcjob_pod_keeps_template_and_copies_job_annotations)
{
    json_t *p = pod(
        "{'metadata':{'name':'j','uid':'u1','labels':{"
        "'volcano.sh/preemptable':'true','team':'a'},'annotations':{"
        "'muster.io/run-for':'10m','muster.io/submit-at':'30s',"
        "'volcano.sh/preemptable':'false','other':'x'}},"
        "'spec':{'priorityClassName':'high','queue':'q1','tasks':[{"
        "'name':'t','replicas':1,'topologyPolicy':'best-effort','template':{"
        "'metadata':{'labels':{'app':'x'},'annotations':{"
        "'muster.io/run-for':'1h'}},'spec':{'schedulerName':'other',"
        "'nodeSelector':{'gpu':'a100'},'tolerations':[{'operator':'Exists'}],"
        "'containers':[{'name':'c'}]}}}]}}",
        0, 0, 0);
    json_t *spec = json_object_get(p, "spec");

    ck_assert_str_eq(ann(p, "muster.io/run-for"), "1h");
    ck_assert_str_eq(ann(p, "muster.io/submit-at"), "30s");
    ck_assert_str_eq(ann(p, "volcano.sh/preemptable"), "false");
    ck_assert_str_eq(ann(p, "volcano.sh/numa-topology-policy"),
                     "best-effort");
    ck_assert_ptr_null(ann(p, "other"));
    ck_assert_str_eq(label(p, "app"), "x");
    ck_assert_str_eq(label(p, "volcano.sh/preemptable"), "true");
    ck_assert_ptr_null(label(p, "team"));
    ck_assert_str_eq(label(p, "volcano.sh/queue-name"), "q1");
    ck_assert_str_eq(str(spec, "schedulerName"), "other");
    ck_assert_str_eq(str(spec, "priorityClassName"), "high");
    ck_assert_str_eq(str(json_object_get(spec, "nodeSelector"), "gpu"),
                     "a100");
    ck_assert_uint_eq(json_array_size(json_object_get(spec, "tolerations")),
                      1);
    json_decref(p);
}
END_TEST

START_TEST(test_vcjob_pod_rejects_bad_task_index_and_missing_uid)
{
    json_t *job = load(BOOK), *out = json_null(), *nouid;
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_pod(job, 1, 8, 0, 0, 0, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg,
                     "spec.tasks[1].replicas: index 8 is out of range "
                     "(replicas 8)");
    ck_assert_int_eq(mu_vcjob_pod(job, 1, -1, 0, 0, 0, &out, &err), -EINVAL);
    ck_assert_int_eq(mu_vcjob_pod(job, 2, 0, 0, 0, 0, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "spec.tasks: no task 2 (2 tasks)");
    nouid = json_deep_copy(job);
    json_object_del(json_object_get(nouid, "metadata"), "uid");
    ck_assert_int_eq(mu_vcjob_pod(nouid, 0, 0, 0, 0, 0, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "metadata.uid: required");
    ck_assert_int_eq(mu_vcjob_podgroup(nouid, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "metadata.uid: required");
    ck_assert_ptr_eq(out, json_null());
    /* err may be NULL */
    ck_assert_int_eq(mu_vcjob_podgroup(nouid, &out, NULL), -EINVAL);
    json_decref(nouid);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_default_applies_webhook_defaults)
{
    json_t *job = load(
        "{'metadata':{'name':'train'},'spec':{'priorityClassName':'high',"
        "'plugins':{'mpi':[]},'tasks':[{'replicas':2," TPL "},"
        "{'replicas':3,'maxRetry':5,'template':{'spec':{"
        "'schedulerName':'other','priorityClassName':'low',"
        "'containers':[{}]}}}]}}");
    json_t *d = NULL, *again = NULL, *spec, *t0, *t1;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_vcjob_default(job, &d, &err) == 0, "%s", err.msg);
    spec = json_object_get(d, "spec");
    t0 = json_array_get(json_object_get(spec, "tasks"), 0);
    t1 = json_array_get(json_object_get(spec, "tasks"), 1);
    ck_assert_str_eq(str(json_object_get(d, "metadata"), "namespace"),
                     "default");
    ck_assert_str_eq(str(spec, "schedulerName"), "volcano");
    ck_assert_str_eq(str(spec, "queue"), "default");
    ck_assert_int_eq(json_integer_value(json_object_get(spec, "maxRetry")), 3);
    ck_assert_int_eq(
        json_integer_value(json_object_get(spec, "minAvailable")), 5);
    ck_assert_ptr_nonnull(at(spec, "plugins", "svc"));
    ck_assert_ptr_nonnull(at(spec, "plugins", "ssh"));
    ck_assert_str_eq(str(t0, "name"), "default0");
    ck_assert_str_eq(str(t1, "name"), "default1");
    ck_assert_int_eq(json_integer_value(json_object_get(t0, "minAvailable")),
                     2);
    ck_assert_int_eq(json_integer_value(json_object_get(t1, "minAvailable")),
                     3);
    ck_assert_int_eq(json_integer_value(json_object_get(t0, "maxRetry")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(t1, "maxRetry")), 5);
    ck_assert_str_eq(str(at(t0, "template", "spec"), "schedulerName"),
                     "volcano");
    ck_assert_str_eq(str(at(t0, "template", "spec"), "priorityClassName"),
                     "high");
    ck_assert_str_eq(str(at(t1, "template", "spec"), "schedulerName"),
                     "other");
    ck_assert_str_eq(str(at(t1, "template", "spec"), "priorityClassName"),
                     "low");
    /* defaulting is idempotent */
    ck_assert_int_eq(mu_vcjob_default(d, &again, &err), 0);
    ck_assert(json_equal(d, again));
    json_decref(again);
    json_decref(d);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_default_keeps_given_values)
{
    json_t *job = load(BOOK), *d = NULL;
    struct mu_err err = {{0}};

    json_object_set_new(json_object_get(job, "spec"), "maxRetry",
                        json_integer(0));
    ck_assert_int_eq(mu_vcjob_default(job, &d, &err), 0);
    ck_assert_str_eq(str(json_object_get(d, "spec"), "queue"), "team-a");
    ck_assert_int_eq(json_integer_value(at(d, "spec", "minAvailable")), 9);
    ck_assert_int_eq(json_integer_value(at(d, "spec", "maxRetry")), 3);
    ck_assert_ptr_null(at(d, "spec", "plugins"));
    ck_assert_str_eq(str(json_array_get(at(d, "spec", "tasks"), 1), "name"),
                     "worker");
    json_decref(d);
    json_decref(job);
}
END_TEST

START_TEST(test_vcjob_inputs_are_not_modified)
{
    json_t *job = load(BOOK_JOB("'plugins':{'env':[],'pytorch':[]},"));
    char *before = json_dumps(job, JSON_SORT_KEYS), *after;
    json_t *d = NULL, *pg = NULL, *p = NULL;
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_default(job, &d, &err), 0);
    ck_assert_int_eq(mu_vcjob_podgroup(job, &pg, &err), 0);
    ck_assert_int_eq(mu_vcjob_pod(job, 1, 4, 0, 0, 1, &p, &err), 0);
    after = json_dumps(job, JSON_SORT_KEYS);
    ck_assert_str_eq(after, before);
    ck_assert(!json_equal(job, d));
    json_decref(d);
    json_decref(pg);
    json_decref(p);
    json_decref(job);
    free(before);
    free(after);
}
END_TEST

#define KNOWN_EVENTS                                                         \
    "(known: *, PodPending, PodRunning, PodFailed, PodEvicted, Unknown, "    \
    "TaskCompleted, TaskFailed)"
#define LONG_NAME "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdef"

static const struct {
    const char *job;
    const char *msg;
} invalid[] = {
    {JOB("'tasks':[]"), "spec.tasks: at least one task is required"},
    {"{'metadata':{'name':'j'}}", "spec.tasks: at least one task is required"},
    {"{'metadata':{},'spec':{'tasks':[" TASK("a", "") "]}}",
     "metadata.name: required"},
    {"{'metadata':{'name':'Bad_Name'},'spec':{'tasks':[" TASK("a", "") "]}}",
     "metadata.name: \"Bad_Name\" is not a valid name (lowercase letters, "
     "digits, '-' and '.', starting and ending with a letter or digit, at "
     "most 253 characters)"},
    {JOB("'tasks':[" TASK("a", "") ",{'name':'b','replicas':1}]"),
     "spec.tasks[1].template: required"},
    {JOB("'tasks':[{'name':'a','replicas':1,'template':{'spec':{}}}]"),
     "spec.tasks[0].template.spec.containers: at least one container is "
     "required"},
    {JOB("'tasks':[" TASK("master", "") "," TASK("worker", "") ","
         TASK("worker", "") "]"),
     "spec.tasks[2].name: duplicate task name \"worker\""},
    {JOB("'tasks':[" TASK("default1", "") ",{'replicas':1," TPL "}]"),
     "spec.tasks[1].name: duplicate task name \"default1\""},
    {JOB("'tasks':[" TASK("Worker", "") "]"),
     "spec.tasks[0].name: \"Worker\" is not a DNS label (lowercase letters, "
     "digits and '-', starting and ending with a letter or digit, at most 63 "
     "characters)"},
    {JOB("'tasks':[{'name':'a','replicas':-1," TPL "}]"),
     "spec.tasks[0].replicas: must be greater than or equal to 0"},
    {JOB("'tasks':[{'name':'a','replicas':'3'," TPL "}]"),
     "spec.tasks[0].replicas: must be an integer"},
    {JOB("'tasks':[{'name':'worker','replicas':8,'minAvailable':9," TPL "}]"),
     "spec.tasks[0].minAvailable: 9 is greater than replicas 8"},
    {JOB("'minAvailable':10,'tasks':[" TASK("master", "")
         ",{'name':'worker','replicas':8," TPL "}]"),
     "spec.minAvailable: 10 is greater than the total replicas 9"},
    {JOB("'minAvailable':-1,'tasks':[" TASK("a", "") "]"),
     "spec.minAvailable: must be greater than or equal to 0"},
    {JOB("'maxRetry':-1,'tasks':[" TASK("a", "") "]"),
     "spec.maxRetry: must be greater than or equal to 0"},
    {"{'metadata':{'name':'" LONG_NAME "'},'spec':{'tasks':[{'name':'worker',"
     "'replicas':100," TPL "}]}}",
     "spec.tasks[0].name: pod name \"" LONG_NAME "-worker-99\" is longer than "
     "63 characters"},
    {JOB("'policies':[{'event':'Foo','action':'RestartJob'}],'tasks':["
         TASK("a", "") "]"),
     "spec.policies[0].event: unknown event \"Foo\" " KNOWN_EVENTS},
    {JOB("'policies':[{'event':'PodEvicted','action':'Reboot'}],'tasks':["
         TASK("a", "") "]"),
     "spec.policies[0].action: unknown action \"Reboot\" (known: AbortJob, "
     "RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, "
     "CompleteJob, ResumeJob)"},
    {JOB("'policies':[{'event':'PodEvicted'}],'tasks':[" TASK("a", "") "]"),
     "spec.policies[0].action: required"},
    {JOB("'tasks':[" TASK("a", ",'policies':[{'events':['PodFailed','Bar'],"
                               "'action':'RestartTask'}]") "]"),
     "spec.tasks[0].policies[0].events[1]: unknown event \"Bar\" "
     KNOWN_EVENTS},
    {JOB("'policies':[{'event':'PodFailed','exitCode':1,'action':"
         "'RestartJob'}],'tasks':[" TASK("a", "") "]"),
     "spec.policies[0]: event and exitCode must not both be set"},
    {JOB("'policies':[{'exitCode':0,'action':'RestartJob'}],'tasks':["
         TASK("a", "") "]"),
     "spec.policies[0].exitCode: 0 is not a valid exit code"},
    {JOB("'policies':[{'exitCode':137,'action':'RestartJob'},{'exitCode':137,"
         "'action':'AbortJob'}],'tasks':[" TASK("a", "") "]"),
     "spec.policies[1].exitCode: duplicate exit code 137"},
    {JOB("'policies':[{'action':'RestartJob'}],'tasks':[" TASK("a", "") "]"),
     "spec.policies[0]: one of event, events or exitCode is required"},
    {JOB("'policies':[{'event':'PodEvicted','action':'RestartJob'},"
         "{'event':'PodEvicted','action':'AbortJob'}],'tasks':["
         TASK("a", "") "]"),
     "spec.policies[1].event: duplicate event \"PodEvicted\""},
    {JOB("'policies':[{'event':'*','action':'RestartJob'},"
         "{'event':'PodFailed','action':'AbortJob'}],'tasks':["
         TASK("a", "") "]"),
     "spec.policies: event \"*\" must be the only event"},
    {JOB("'plugins':{'svc':[],'x':[]},'tasks':[" TASK("a", "") "]"),
     "spec.plugins: unknown plugin \"x\" (known: svc, env, ssh, mpi, pytorch, "
     "tensorflow, ray, hcclrank)"},
    {JOB("'plugins':{'svc':'--disable-network-policy'},'tasks':["
         TASK("a", "") "]"),
     "spec.plugins.svc: must be a list of strings"},
    {JOB("'plugins':{'pytorch':['--bogus']},'tasks':[" TASK("a", "") "]"),
     "spec.plugins.pytorch[0]: unknown flag --bogus (known: --master, "
     "--worker, --port, --wait-master-enabled, --wait-master-timeout, "
     "--wait-master-image)"},
    {JOB("'plugins':{'pytorch':['--wait-master-timeout=-1']},'tasks':["
         TASK("a", "") "]"),
     "spec.plugins.pytorch[0]: --wait-master-timeout: \"-1\" is not a "
     "number of seconds"},
    {JOB("'plugins':{'tensorflow':['--port=0']},'tasks':[" TASK("a", "") "]"),
     "spec.plugins.tensorflow[0]: --port: \"0\" is not a port (1-65535)"},
    {JOB("'plugins':{'mpi':['--master=']},'tasks':[" TASK("a", "") "]"),
     "spec.plugins.mpi[0]: --master must not be empty"},
};

START_TEST(test_vcjob_default_rejects_invalid_jobs)
{
    json_t *job = load(invalid[_i].job);
    char *before = json_dumps(job, JSON_SORT_KEYS), *after;
    json_t *out = json_null();
    struct mu_err err = {{0}};

    ck_assert_int_eq(mu_vcjob_default(job, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, invalid[_i].msg);
    ck_assert_ptr_eq(out, json_null());
    /* podgroup and pod validate the same way */
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(mu_vcjob_podgroup(job, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, invalid[_i].msg);
    ck_assert_int_eq(mu_vcjob_pod(job, 0, 0, 0, 0, 1, &out, &err), -EINVAL);
    ck_assert_str_eq(err.msg, invalid[_i].msg);
    ck_assert_ptr_eq(out, json_null());
    after = json_dumps(job, JSON_SORT_KEYS);
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    json_decref(job);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vcjob");
    TCase *pg = tcase_create("podgroup");
    TCase *pods = tcase_create("pod");
    TCase *def = tcase_create("default");
    SRunner *sr;
    int failed;

    tcase_add_test(pg, test_vcjob_podgroup_of_book_job);
    tcase_add_test(pg, test_vcjob_podgroup_copies_metadata_and_priority_class);
    tcase_add_test(pg, test_vcjob_min_resources_takes_first_pods);
    tcase_add_test(pg, test_vcjob_min_resources_tops_up_task_minimums);
    tcase_add_test(pg, test_vcjob_min_resources_uses_scheduling_requests);
    tcase_add_test(pg, test_vcjob_min_available_zero_reads_as_unset);
    tcase_add_test(pg, test_vcjob_min_resources_empty_without_replicas);
    tcase_add_test(pg, test_vcjob_podgroup_reports_bad_template_quantity);
    tcase_add_test(pods, test_vcjob_pods_of_book_job);
    tcase_add_test(pods, test_vcjob_pod_decodes_as_a_gang_member);
    tcase_add_test(pods, test_vcjob_pod_gate_only_when_gated_and_once);
    tcase_add_test(pods, test_vcjob_pod_env_plugin_adds_task_index);
    tcase_add_test(pods, test_vcjob_pod_svc_plugin_sets_hostname);
    tcase_add_test(pods, test_vcjob_pod_pytorch_plugin_env_and_port);
    tcase_add_test(pods, test_vcjob_pod_tensorflow_plugin_tf_config);
    tcase_add_test(pods, test_vcjob_pod_mpi_plugin_host_list_and_port);
    tcase_add_test(pods,
                   test_vcjob_pod_keeps_template_and_copies_job_annotations);
    tcase_add_test(pods, test_vcjob_pod_rejects_bad_task_index_and_missing_uid);
    tcase_add_test(def, test_vcjob_default_applies_webhook_defaults);
    tcase_add_test(def, test_vcjob_default_keeps_given_values);
    tcase_add_test(def, test_vcjob_inputs_are_not_modified);
    tcase_add_loop_test(def, test_vcjob_default_rejects_invalid_jobs, 0,
                        (int)MU_ARRAY_LEN(invalid));
    suite_add_tcase(s, pg);
    suite_add_tcase(s, pods);
    suite_add_tcase(s, def);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
