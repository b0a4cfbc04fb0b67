#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/object.h"

static struct mu_resnames rn;
static int gpu;

static void setup(void)
{
    mu_resnames_init(&rn);
    gpu = mu_resnames_index(&rn, "nvidia.com/gpu", true);
}

static void teardown(void)
{
    mu_resnames_release(&rn);
}

/* Parses test JSON written with single quotes (none of it contains one). */
static json_t *js(const char *text)
{
    char *s = mu_xstrdup(text);
    json_error_t e;
    json_t *j;

    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = json_loads(s, 0, &e);
    ck_assert_msg(j != NULL, "test JSON: %s: %s", e.text, s);
    free(s);
    return j;
}

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

static int64_t req(const struct mu_pod *p, const char *name)
{
    int d = mu_resnames_index(&rn, name, false);

    ck_assert_int_ge(d, 0);
    return mu_res_get(&p->req, d);
}

/* ---- pods ---- */

START_TEST(test_pod_decode_defaults)
{
    json_t *j = js("{'metadata': {'name': 'job-worker-3', 'uid': 'u1',"
                   " 'creationTimestamp': '2024-01-02T03:04:05Z'},"
                   " 'spec': {'containers': [{'name': 'c', 'resources':"
                   " {'requests': {'cpu': '500m', 'memory': '1Gi'}}}]}}");
    struct mu_pod p;
    struct mu_err err;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, &err), 0);
    ck_assert_str_eq(p.meta.name, "job-worker-3");
    ck_assert_str_eq(p.meta.ns, "default");
    ck_assert_str_eq(p.meta.uid, "u1");
    ck_assert_int_eq(p.meta.created, 1704164645);
    ck_assert(!p.meta.deleting);
    ck_assert_str_eq(p.scheduler_name, "default-scheduler");
    ck_assert_ptr_null(p.node_name);
    ck_assert_int_eq(p.phase, MU_POD_PENDING);
    ck_assert_int_eq(req(&p, "cpu"), 500);
    ck_assert_int_eq(req(&p, "memory"), INT64_C(1073741824));
    ck_assert_int_eq(req(&p, "pods"), 1);
    ck_assert(mu_res_has(&p.req, MU_RES_PODS));
    ck_assert(!p.besteffort);
    ck_assert(!p.has_priority);
    ck_assert_int_eq(p.priority, 0);
    ck_assert_ptr_null(p.priority_class);
    ck_assert(!p.preempt_never);
    ck_assert_uint_eq(p.affinity.nterms, 0);
    ck_assert_uint_eq(p.ntol, 0);
    ck_assert_uint_eq(p.ngates, 0);
    ck_assert_ptr_null(p.group);
    ck_assert_ptr_null(p.task_spec);
    ck_assert_int_eq(p.task_index, 3);
    ck_assert(p.preemptable);
    ck_assert_int_eq(p.submit_at_ms, 0);
    ck_assert_int_eq(p.run_for_ms, -1);
    ck_assert(!p.kube_only);
    mu_pod_release(&p);
    ck_assert(all_zero(&p, sizeof(p)));
    json_decref(j);
}
END_TEST

/* What only kube-scheduler checks or prepares marks a pod kube_only;
 * what muster's engine models (node affinity, selectors, tolerations,
 * other volumes, ports without hostPort) does not. */
START_TEST(test_pod_kube_only_marks_what_only_kube_scheduler_checks)
{
    static const char *const spec_of[] = {
        "'volumes': [{'name': 'd', 'persistentVolumeClaim': "
        "{'claimName': 'c'}}]",
        "'volumes': [{'name': 'e', 'ephemeral': {'volumeClaimTemplate': "
        "{'spec': {}}}}]",
        "'volumes': [{'name': 'c', 'csi': {'driver': 'd'}}]",
        "'volumes': [{'name': 'g', 'gcePersistentDisk': {'pdName': 'p'}}]",
        "'volumes': [{'name': 'r', 'rbd': {'image': 'i'}}]",
        "'resourceClaims': [{'name': 'gpu', 'resourceClaimTemplateName': "
        "'t'}]",
        "'affinity': {'podAffinity': {}}",
        "'affinity': {'podAntiAffinity': {}}",
        "'topologySpreadConstraints': [{'maxSkew': 1, 'topologyKey': 'z', "
        "'whenUnsatisfiable': 'DoNotSchedule'}]",
        "'overhead': {'cpu': '100m'}",
        "'containers': [{'name': 'c', 'ports': [{'containerPort': 80, "
        "'hostPort': 8080}]}]",
        "'containers': [{'name': 'c'}], 'initContainers': [{'name': 'i', "
        "'ports': [{'containerPort': 80, 'hostPort': 80}]}]",
    };
    static const char *const plain_of[] = {
        "'volumes': [{'name': 'd', 'emptyDir': {}}, {'name': 'h', "
        "'hostPath': {'path': '/x'}}, {'name': 'm', 'configMap': "
        "{'name': 'x'}}, {'name': 's', 'secret': {'secretName': 'x'}}]",
        "'affinity': {'nodeAffinity': {'requiredDuringSchedulingIgnored"
        "DuringExecution': {'nodeSelectorTerms': [{'matchExpressions': "
        "[{'key': 'k', 'operator': 'Exists'}]}]}}}",
        "'containers': [{'name': 'c', 'ports': [{'containerPort': 80}]}]",
        "'resourceClaims': [], 'topologySpreadConstraints': []",
    };

    for (size_t k = 0; k < 2; k++) {
        const char *const *specs = k ? plain_of : spec_of;
        size_t n = k ? MU_ARRAY_LEN(plain_of) : MU_ARRAY_LEN(spec_of);

        for (size_t i = 0; i < n; i++) {
            char text[1024];
            struct mu_pod p;
            json_t *j;

            snprintf(text, sizeof(text),
                     "{'metadata': {'name': 'p', 'uid': 'u'}, 'spec': {%s%s}}",
                     specs[i],
                     strstr(specs[i], "'containers'")
                         ? ""
                         : ", 'containers': [{'name': 'c'}]");
            j = js(text);
            ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
            ck_assert_msg(p.kube_only == !k, "%s: kube_only %d", specs[i],
                          p.kube_only);
            mu_pod_release(&p);
            json_decref(j);
        }
    }
}
END_TEST

START_TEST(test_pod_limits_only_gpu_requests_its_limit)
{
    json_t *j = js("{'metadata': {'name': 'train'}, 'spec': {'containers':"
                   " [{'resources': {'limits': {'nvidia.com/gpu': 1,"
                   " 'cpu': 4, 'memory': '8Gi'}, 'requests': {'cpu': 2}}}]}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_int_eq(req(&p, "nvidia.com/gpu"), 1);
    ck_assert_int_eq(req(&p, "cpu"), 2000);
    ck_assert_int_eq(req(&p, "memory"), INT64_C(8589934592));
    ck_assert_int_eq(p.task_index, -1);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_request_init_containers_sidecars_overhead)
{
    /* containers 1500m/1Gi; init i1 2/512Mi; sidecar s1 1/1Gi; init i2
     * 1/4Gi (+ s1 = 2/5Gi); sidecar s2 200m. Sum with sidecars is
     * 2700m/2Gi; max with the init candidates is 2700m/5Gi; overhead
     * 100m/128Mi on top. */
    json_t *j = js(
        "{'metadata': {'name': 'p'}, 'spec': {"
        " 'containers': ["
        "  {'resources': {'requests': {'cpu': 1, 'memory': '1Gi'}}},"
        "  {'resources': {'requests': {'cpu': '500m'}}}],"
        " 'initContainers': ["
        "  {'resources': {'requests': {'cpu': 2, 'memory': '512Mi'}}},"
        "  {'restartPolicy': 'Always',"
        "   'resources': {'requests': {'cpu': 1, 'memory': '1Gi'}}},"
        "  {'resources': {'limits': {'cpu': 1, 'memory': '4Gi'}}},"
        "  {'restartPolicy': 'Always',"
        "   'resources': {'requests': {'cpu': '200m'}}}],"
        " 'overhead': {'cpu': '100m', 'memory': '128Mi'}}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_int_eq(req(&p, "cpu"), 2800);
    ck_assert_int_eq(req(&p, "memory"),
                     INT64_C(5) * 1073741824 + 128 * 1048576);
    ck_assert_int_eq(req(&p, "pods"), 1);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_init_container_dominates)
{
    json_t *j = js("{'metadata': {'name': 'p'}, 'spec': {"
                   " 'containers': [{'resources': {'requests': {'cpu': 1}}}],"
                   " 'initContainers': [{'resources': {'requests':"
                   " {'cpu': 3, 'nvidia.com/gpu': 2}}}]}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_int_eq(req(&p, "cpu"), 3000);
    ck_assert_int_eq(req(&p, "nvidia.com/gpu"), 2);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_besteffort)
{
    json_t *j = js("{'metadata': {'name': 'p'}, 'spec': {'containers':"
                   " [{'name': 'a'}, {'resources': {'requests':"
                   " {'cpu': 0}}}]}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert(p.besteffort);
    ck_assert_int_eq(req(&p, "pods"), 1);
    ck_assert_int_eq(req(&p, "cpu"), 0);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_spec_fields_and_annotations)
{
    json_t *j = js(
        "{'metadata': {'name': 'w-0', 'namespace': 'ml',"
        "  'labels': {'volcano.sh/task-spec': 'from-label', 'app': 'x'},"
        "  'annotations': {'scheduling.volcano.sh/group-name': 'pg1',"
        "   'volcano.sh/task-index': '7', 'volcano.sh/task-priority': '42',"
        "   'volcano.sh/preemptable': 'false',"
        "   'muster.io/submit-at': '1m30s', 'muster.io/run-for': '90'},"
        "  'ownerReferences': [{'kind': 'ReplicaSet', 'name': 'rs',"
        "   'uid': 'r1'}, {'kind': 'Job', 'name': 'j', 'uid': 'j1',"
        "   'controller': true}],"
        "  'deletionTimestamp': '2024-01-02T03:04:05Z'},"
        " 'spec': {'schedulerName': 'volcano', 'nodeName': 'n1',"
        "  'priority': 10, 'priorityClassName': 'high',"
        "  'preemptionPolicy': 'Never',"
        "  'nodeSelector': {'zone': 'a', 'gpu': 'h100'},"
        "  'schedulingGates': [{'name': 'muster.io/gang'}, {'name': 'x'}]},"
        " 'status': {'phase': 'Running'}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_str_eq(p.meta.ns, "ml");
    ck_assert_str_eq(p.meta.owner_kind, "Job");
    ck_assert_str_eq(p.meta.owner_name, "j");
    ck_assert_str_eq(p.meta.owner_uid, "j1");
    ck_assert(p.meta.deleting);
    ck_assert_str_eq(mu_kvs_get(&p.meta.labels, "app"), "x");
    ck_assert_str_eq(p.scheduler_name, "volcano");
    ck_assert_str_eq(p.node_name, "n1");
    ck_assert_int_eq(p.phase, MU_POD_RUNNING);
    ck_assert(p.has_priority);
    ck_assert_int_eq(p.priority, 42);
    ck_assert_str_eq(p.priority_class, "high");
    ck_assert(p.preempt_never);
    ck_assert_uint_eq(p.node_selector.n, 2);
    ck_assert_str_eq(p.node_selector.v[0].key, "gpu");
    ck_assert_str_eq(mu_kvs_get(&p.node_selector, "zone"), "a");
    ck_assert_ptr_null(mu_kvs_get(&p.node_selector, "nope"));
    ck_assert_uint_eq(p.ngates, 2);
    ck_assert_str_eq(p.group, "pg1");
    ck_assert_str_eq(p.task_spec, "from-label");
    ck_assert_int_eq(p.task_index, 7);
    ck_assert(!p.preemptable);
    ck_assert_int_eq(p.submit_at_ms, 90000);
    ck_assert_int_eq(p.run_for_ms, 90000);
    ck_assert(p.besteffort);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_annotation_precedence)
{
    json_t *j = js(
        "{'metadata': {'name': 'w-x1', 'labels': {'volcano.sh/task-spec':"
        "  'l'}, 'annotations': {'volcano.sh/task-spec': 'a',"
        "  'scheduling.k8s.io/group-name': 'k8s',"
        "  'scheduling.volcano.sh/group-name': 'vc',"
        "  'volcano.sh/task-priority': 'high',"
        "  'volcano.sh/task-index': 'x', 'volcano.sh/preemptable': 'True'}},"
        " 'spec': {'priority': 5}}");
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_str_eq(p.task_spec, "a");
    ck_assert_str_eq(p.group, "k8s");
    ck_assert_int_eq(p.priority, 5);
    ck_assert(p.has_priority);
    ck_assert_int_eq(p.task_index, -1);
    ck_assert(p.preemptable);
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

static const struct {
    const char *json;
    const char *msg;
} pod_bad[] = {
    {"{'metadata': {'name': 'p'}, 'spec': {'containers': [{'resources':"
     " {'limits': {'nvidia.com/gpu': '0.5'}}}]}}",
     "spec.containers[0].resources.limits.nvidia.com/gpu: must be an "
     "integer"},
    {"{'metadata': {'name': 'p'}, 'spec': {'containers': [{}, {'resources':"
     " {'requests': {'cpu': '1 core'}}}]}}",
     "spec.containers[1].resources.requests.cpu: quantities must match the "
     "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"{'metadata': {'name': 'p'}, 'spec': {'initContainers': [{'resources':"
     " {'requests': {'memory': '-1Gi'}}}]}}",
     "spec.initContainers[0].resources.requests.memory: must be greater "
     "than or equal to 0"},
    {"{'metadata': {'name': 'p'}, 'spec': {'containers': [{'resources':"
     " {'requests': {'cpu': true}}}]}}",
     "spec.containers[0].resources.requests.cpu: expected a quantity, got "
     "a boolean"},
    {"{'metadata': {'name': 'p'}, 'spec': {'overhead': {'nvidia.com/gpu':"
     " 1.5}}}",
     "spec.overhead.nvidia.com/gpu: must be an integer"},
    {"{'metadata': {}, 'spec': {}}", "metadata.name: required"},
    {"{'spec': {}}", "metadata.name: required"},
    {"{'metadata': {'name': ''}}", "metadata.name: required"},
    {"{'metadata': []}", "metadata: expected an object, got an array"},
    {"[]", "expected an object, got an array"},
    {"{'metadata': {'name': 7}}",
     "metadata.name: expected a string, got an integer"},
    {"{'metadata': {'name': 'p', 'labels': {'app': 3}}}",
     "metadata.labels.app: expected a string, got an integer"},
    {"{'metadata': {'name': 'p', 'annotations': []}}",
     "metadata.annotations: expected an object, got an array"},
    {"{'metadata': {'name': 'p', 'creationTimestamp': '2024-01-02'}}",
     "metadata.creationTimestamp: \"2024-01-02\" is not an RFC 3339 time "
     "(2006-01-02T15:04:05Z)"},
    {"{'metadata': {'name': 'p', 'ownerReferences': [{'controller': 1}]}}",
     "metadata.ownerReferences[0].controller: expected a boolean, got an "
     "integer"},
    {"{'metadata': {'name': 'p'}, 'spec': {'containers': {}}}",
     "spec.containers: expected an array, got an object"},
    {"{'metadata': {'name': 'p'}, 'spec': {'containers': ['c']}}",
     "spec.containers[0]: expected an object, got a string"},
    {"{'metadata': {'name': 'p'}, 'spec': 1}",
     "spec: expected an object, got an integer"},
    {"{'metadata': {'name': 'p'}, 'spec': {'priority': '1'}}",
     "spec.priority: expected an integer, got a string"},
    {"{'metadata': {'name': 'p'}, 'spec': {'priority': 3000000000}}",
     "spec.priority: must be between -2147483648 and 2147483647"},
    {"{'metadata': {'name': 'p'}, 'status': {'phase': 'Bogus'}}",
     "status.phase: unsupported value \"Bogus\": supported values: "
     "\"Pending\", \"Running\", \"Succeeded\", \"Failed\", \"Unknown\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'preemptionPolicy': 'Always'}}",
     "spec.preemptionPolicy: unsupported value \"Always\": supported "
     "values: \"PreemptLowerPriority\", \"Never\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'initContainers':"
     " [{'restartPolicy': 'OnFailure'}]}}",
     "spec.initContainers[0].restartPolicy: unsupported value "
     "\"OnFailure\": supported values: \"Always\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'nodeSelector': {'a': null}}}",
     "spec.nodeSelector.a: expected a string, got null"},
    {"{'metadata': {'name': 'p'}, 'spec': {'tolerations': [{'key': 'a'},"
     " {'operator': 'Foo'}]}}",
     "spec.tolerations[1].operator: unsupported value \"Foo\": supported "
     "values: \"Equal\", \"Exists\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'tolerations': [{'effect':"
     " 'NoExec'}]}}",
     "spec.tolerations[0].effect: unsupported value \"NoExec\": supported "
     "values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'affinity': {'nodeAffinity':"
     " {'requiredDuringSchedulingIgnoredDuringExecution':"
     " {'nodeSelectorTerms': [{'matchExpressions': [{'key': 'a',"
     " 'operator': 'In', 'values': ['x']}, {'key': 'b',"
     " 'operator': 'Near'}]}]}}}}}",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
     "Execution.nodeSelectorTerms[0].matchExpressions[1].operator: "
     "unsupported value \"Near\": supported values: \"In\", \"NotIn\", "
     "\"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'affinity': {'nodeAffinity':"
     " {'requiredDuringSchedulingIgnoredDuringExecution':"
     " {'nodeSelectorTerms': [{}, {'matchFields': [{'key': 'metadata.name',"
     " 'operator': 'Exists'}]}]}}}}}",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
     "Execution.nodeSelectorTerms[1].matchFields[0].operator: unsupported "
     "value \"Exists\": supported values: \"In\", \"NotIn\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'affinity': {'nodeAffinity':"
     " {'requiredDuringSchedulingIgnoredDuringExecution':"
     " {'nodeSelectorTerms': [{'matchFields': [{'key': 'spec.x',"
     " 'operator': 'In', 'values': ['a']}]}]}}}}}",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
     "Execution.nodeSelectorTerms[0].matchFields[0].key: unsupported value "
     "\"spec.x\": supported values: \"metadata.name\""},
    {"{'metadata': {'name': 'p'}, 'spec': {'affinity': {'nodeAffinity':"
     " {'requiredDuringSchedulingIgnoredDuringExecution':"
     " {'nodeSelectorTerms': [{'matchExpressions': [{'key': 'a',"
     " 'operator': 'In', 'values': ['x', 2]}]}]}}}}}",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
     "Execution.nodeSelectorTerms[0].matchExpressions[0].values[1]: "
     "expected a string, got an integer"},
    {"{'metadata': {'name': 'p', 'annotations': {'volcano.sh/preemptable':"
     " 'maybe'}}}",
     "metadata.annotations.volcano.sh/preemptable: \"maybe\" is not a "
     "boolean (true or false)"},
    {"{'metadata': {'name': 'p', 'annotations': {'muster.io/run-for':"
     " 'abc'}}}",
     "metadata.annotations.muster.io/run-for: invalid duration \"abc\""},
    {"{'metadata': {'name': 'p', 'annotations': {'muster.io/submit-at':"
     " '-5s'}}}",
     "metadata.annotations.muster.io/submit-at: must not be negative"},
};

START_TEST(test_pod_errors_name_the_field_and_zero_out)
{
    json_t *j = js(pod_bad[_i].json);
    struct mu_pod p;
    struct mu_err err = {{0}};

    memset(&p, 0x5a, sizeof(p));
    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, &err), -EINVAL);
    ck_assert_str_eq(err.msg, pod_bad[_i].msg);
    ck_assert(all_zero(&p, sizeof(p)));
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_pod_too_many_resource_names_is_enospc)
{
    struct mu_sb sb;
    struct mu_pod p;
    struct mu_err err;
    json_t *j;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "{'metadata': {'name': 'p'}, 'spec': {'containers': "
                   "[{'resources': {'limits': {");
    for (int i = 0; i < MU_RES_MAX; i++)
        mu_sb_addf(&sb, "%s'example.com/r%d': 1", i ? ", " : "", i);
    mu_sb_add(&sb, "}}}]}}");
    j = js(sb.buf);
    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, &err), -ENOSPC);
    ck_assert(all_zero(&p, sizeof(p)));
    ck_assert_ptr_nonnull(strstr(err.msg, "too many resource names"));
    ck_assert_int_eq(rn.n, MU_RES_MAX);
    mu_sb_release(&sb);
    json_decref(j);
}
END_TEST

/* ---- tolerations and affinity ---- */

/* Writable strings for the char * members of taints and labels. */
static char s_gpu[] = "gpu", s_h100[] = "h100", s_team[] = "team",
            s_ml[] = "ml", s_cv[] = "cv", s_x[] = "x", s_y[] = "y",
            s_k[] = "k", s_v[] = "v", s_empty[] = "", s_cores[] = "cores",
            s_64[] = "64", s_zone[] = "zone", s_a[] = "a";

START_TEST(test_toleration_decode_and_match)
{
    json_t *j = js("{'metadata': {'name': 'p'}, 'spec': {'tolerations': ["
                   " {'key': 'gpu', 'operator': 'Exists',"
                   "  'effect': 'NoSchedule'},"
                   " {'key': 'team', 'value': 'ml'},"
                   " {'operator': 'Exists'},"
                   " {'key': 'x', 'operator': 'Equal', 'value': 'y',"
                   "  'effect': 'NoExecute', 'tolerationSeconds': 30}]}}");
    struct mu_taint gpu_ns = {s_gpu, s_h100, MU_EFFECT_NO_SCHEDULE};
    struct mu_taint gpu_ne = {s_gpu, NULL, MU_EFFECT_NO_EXECUTE};
    struct mu_taint team = {s_team, s_ml, MU_EFFECT_PREFER_NO_SCHEDULE};
    struct mu_taint team2 = {s_team, s_cv, MU_EFFECT_NO_SCHEDULE};
    struct mu_taint xy = {s_x, s_y, MU_EFFECT_NO_EXECUTE};
    struct mu_pod p;

    ck_assert_int_eq(mu_pod_decode(j, &rn, &p, NULL), 0);
    ck_assert_uint_eq(p.ntol, 4);
    ck_assert_str_eq(p.tol[0].key, "gpu");
    ck_assert(p.tol[0].exists);
    ck_assert_int_eq(p.tol[0].effect, MU_EFFECT_NO_SCHEDULE);
    ck_assert(!p.tol[1].exists);
    ck_assert_int_eq(p.tol[1].effect, MU_EFFECT_NONE);
    ck_assert(p.tol[2].exists);
    ck_assert_ptr_null(p.tol[2].key);

    ck_assert(mu_toleration_matches(&p.tol[0], &gpu_ns));
    ck_assert(!mu_toleration_matches(&p.tol[0], &gpu_ne));
    ck_assert(!mu_toleration_matches(&p.tol[0], &team));
    ck_assert(mu_toleration_matches(&p.tol[1], &team));
    ck_assert(!mu_toleration_matches(&p.tol[1], &team2));
    ck_assert(!mu_toleration_matches(&p.tol[1], &gpu_ns));
    ck_assert(mu_toleration_matches(&p.tol[2], &gpu_ns));
    ck_assert(mu_toleration_matches(&p.tol[2], &team2));
    ck_assert(mu_toleration_matches(&p.tol[3], &xy));
    ck_assert(!mu_toleration_matches(&p.tol[3], &gpu_ne));
    mu_pod_release(&p);
    json_decref(j);
}
END_TEST

START_TEST(test_toleration_equal_compares_empty_values)
{
    struct mu_toleration t = {s_k, false, NULL, MU_EFFECT_NONE};
    struct mu_taint none = {s_k, NULL, MU_EFFECT_NO_SCHEDULE};
    struct mu_taint empty = {s_k, s_empty, MU_EFFECT_NO_EXECUTE};
    struct mu_taint v = {s_k, s_v, MU_EFFECT_NO_SCHEDULE};

    ck_assert(mu_toleration_matches(&t, &none));
    ck_assert(mu_toleration_matches(&t, &empty));
    ck_assert(!mu_toleration_matches(&t, &v));
    t.exists = true;
    ck_assert(mu_toleration_matches(&t, &v));
}
END_TEST

static struct mu_pod aff_pod;

static void decode_affinity(const char *terms)
{
    char text[2048];
    json_t *j;

    snprintf(text, sizeof(text),
             "{'metadata': {'name': 'p'}, 'spec': {'affinity':"
             " {'nodeAffinity': {'requiredDuringSchedulingIgnoredDuring"
             "Execution': {'nodeSelectorTerms': %s}}}}}",
             terms);
    j = js(text);
    ck_assert_int_eq(mu_pod_decode(j, &rn, &aff_pod, NULL), 0);
    json_decref(j);
}

static const struct {
    const char *terms;
    bool match; /* against labels {gpu: h100, zone: a, cores: 64} "n1" */
} aff[] = {
    {"[]", true},
    {"[{}]", false},
    {"[{'matchExpressions': []}]", false},
    {"[{'matchExpressions': [{'key': 'gpu', 'operator': 'In',"
     " 'values': ['a100', 'h100']}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'gpu', 'operator': 'In',"
     " 'values': ['a100']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'nope', 'operator': 'In',"
     " 'values': ['']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'gpu', 'operator': 'NotIn',"
     " 'values': ['a100']}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'gpu', 'operator': 'NotIn',"
     " 'values': ['h100']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'nope', 'operator': 'NotIn',"
     " 'values': ['x']}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'zone', 'operator': 'Exists'}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'nope', 'operator': 'Exists'}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'nope', 'operator':"
     " 'DoesNotExist'}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'zone', 'operator':"
     " 'DoesNotExist'}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Gt',"
     " 'values': ['32']}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Gt',"
     " 'values': ['64']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Lt',"
     " 'values': ['65']}]}]",
     true},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Lt',"
     " 'values': ['-1']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'zone', 'operator': 'Gt',"
     " 'values': ['1']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Gt',"
     " 'values': ['x']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'cores', 'operator': 'Gt',"
     " 'values': ['1', '2']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'nope', 'operator': 'Lt',"
     " 'values': ['100']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'gpu', 'operator': 'Exists'},"
     " {'key': 'zone', 'operator': 'In', 'values': ['b']}]}]",
     false},
    {"[{'matchExpressions': [{'key': 'zone', 'operator': 'In',"
     " 'values': ['b']}]}, {'matchExpressions': [{'key': 'gpu',"
     " 'operator': 'Exists'}]}]",
     true},
    {"[{'matchFields': [{'key': 'metadata.name', 'operator': 'In',"
     " 'values': ['n1']}]}]",
     true},
    {"[{'matchFields': [{'key': 'metadata.name', 'operator': 'In',"
     " 'values': ['n2']}]}]",
     false},
    {"[{'matchFields': [{'key': 'metadata.name', 'operator': 'NotIn',"
     " 'values': ['n2']}]}]",
     true},
    {"[{'matchFields': [{'key': 'metadata.name', 'operator': 'In',"
     " 'values': ['n1']}], 'matchExpressions': [{'key': 'gpu',"
     " 'operator': 'DoesNotExist'}]}]",
     false},
};

START_TEST(test_affinity_operators)
{
    struct mu_kv kv[] = {
        {s_cores, s_64}, {s_gpu, s_h100}, {s_zone, s_a}};
    struct mu_kvs labels = {MU_ARRAY_LEN(kv), kv};

    decode_affinity(aff[_i].terms);
    ck_assert_msg(mu_affinity_matches(&aff_pod.affinity, &labels, "n1") ==
                      aff[_i].match,
                  "%s", aff[_i].terms);
    mu_pod_release(&aff_pod);
}
END_TEST

START_TEST(test_affinity_decodes_terms)
{
    struct mu_kvs none = {0, NULL};

    decode_affinity("[{'matchExpressions': [{'key': 'a', 'operator': 'In',"
                    " 'values': ['x', 'y']}, {'key': 'b', 'operator':"
                    " 'Exists'}], 'matchFields': [{'key': 'metadata.name',"
                    " 'operator': 'NotIn', 'values': ['n9']}]}]");
    ck_assert_uint_eq(aff_pod.affinity.nterms, 1);
    ck_assert_uint_eq(aff_pod.affinity.terms[0].nexpr, 2);
    ck_assert_str_eq(aff_pod.affinity.terms[0].expr[0].key, "a");
    ck_assert_int_eq(aff_pod.affinity.terms[0].expr[0].op, MU_SEL_IN);
    ck_assert_uint_eq(aff_pod.affinity.terms[0].expr[0].nvalues, 2);
    ck_assert_str_eq(aff_pod.affinity.terms[0].expr[0].values[1], "y");
    ck_assert_int_eq(aff_pod.affinity.terms[0].expr[1].op, MU_SEL_EXISTS);
    ck_assert_uint_eq(aff_pod.affinity.terms[0].nfields, 1);
    ck_assert_int_eq(aff_pod.affinity.terms[0].fields[0].op,
                     MU_SEL_NOT_IN);
    ck_assert(!mu_affinity_matches(&aff_pod.affinity, &none, NULL));
    mu_pod_release(&aff_pod);
}
END_TEST

/* ---- metadata, timestamps, durations ---- */

static const struct {
    const char *ts;
    int64_t want;
} ts_ok[] = {
    {"2024-01-02T03:04:05Z", 1704164645},
    {"1970-01-01T00:00:00Z", 0},
    {"1969-12-31T23:59:59Z", -1},
    {"2024-02-29T00:00:00Z", 1709164800},
    {"2000-03-01T00:00:00Z", 951868800},
    {"2100-03-01T12:00:00Z", INT64_C(4107585600)},
    {"2024-01-02T05:34:05+02:30", 1704164645},
    {"2024-01-01T22:04:05-05:00", 1704164645},
    {"2024-01-02T03:04:05.999999Z", 1704164645},
};

START_TEST(test_meta_creation_timestamp)
{
    json_t *j = json_pack("{s:s, s:s}", "name", "a", "creationTimestamp",
                          ts_ok[_i].ts);
    struct mu_meta m;

    ck_assert_int_eq(mu_meta_decode(j, true, &m, NULL), 0);
    ck_assert_int_eq(m.created, ts_ok[_i].want);
    mu_meta_release(&m);
    json_decref(j);
}
END_TEST

static const char *const ts_bad[] = {
    "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-13-01T00:00:00Z",
    "2024-00-01T00:00:00Z", "2024-04-31T00:00:00Z", "2024-01-02 03:04:05Z",
    "2024-01-02T24:00:00Z", "2024-01-02T03:60:00Z", "2024-01-02T03:04:60Z",
    "2024-01-02T03:04:05",  "2024-01-02T03:04:05z", "2024-01-02T03:04:05.Z",
    "2024-01-02T03:04:05+0200", "2024-1-02T03:04:05Z", "",
    "2024-01-02T03:04:05Zjunk",
};

START_TEST(test_meta_rejects_bad_timestamp)
{
    json_t *j = json_pack("{s:s, s:s}", "name", "a", "creationTimestamp",
                          ts_bad[_i]);
    struct mu_meta m;
    struct mu_err err;

    ck_assert_int_eq(mu_meta_decode(j, true, &m, &err), -EINVAL);
    ck_assert_msg(strstr(err.msg, "metadata.creationTimestamp: ") == err.msg,
                  "%s", err.msg);
    ck_assert(all_zero(&m, sizeof(m)));
    json_decref(j);
}
END_TEST

START_TEST(test_meta_first_controller_owner_wins)
{
    json_t *j = js("{'name': 'p', 'ownerReferences': ["
                   " {'kind': 'A', 'controller': true},"
                   " {'kind': 'B', 'name': 'b', 'controller': true}]}");
    struct mu_meta m;

    ck_assert_int_eq(mu_meta_decode(j, true, &m, NULL), 0);
    ck_assert_str_eq(m.owner_kind, "A");
    ck_assert_ptr_null(m.owner_name);
    mu_meta_release(&m);
    json_decref(j);
}
END_TEST

START_TEST(test_meta_cluster_scoped_and_sorted_kvs)
{
    json_t *j = js("{'name': 'n', 'namespace': 'ignored', 'labels':"
                   " {'b': '2', 'a': '1', 'c': ''}}");
    struct mu_meta m;

    ck_assert_int_eq(mu_meta_decode(j, false, &m, NULL), 0);
    ck_assert_ptr_null(m.ns);
    ck_assert_ptr_null(m.uid);
    ck_assert_int_eq(m.created, 0);
    ck_assert_ptr_null(m.owner_name);
    ck_assert_uint_eq(m.labels.n, 3);
    ck_assert_str_eq(m.labels.v[0].key, "a");
    ck_assert_str_eq(m.labels.v[1].key, "b");
    ck_assert_str_eq(m.labels.v[2].key, "c");
    ck_assert_str_eq(mu_kvs_get(&m.labels, "c"), "");
    ck_assert_ptr_null(mu_kvs_get(&m.labels, "d"));
    ck_assert_uint_eq(m.annotations.n, 0);
    ck_assert_ptr_null(mu_kvs_get(&m.annotations, "a"));
    mu_meta_release(&m);
    ck_assert_int_eq(mu_meta_decode(NULL, false, &m, NULL), -EINVAL);
    json_decref(j);
}
END_TEST

START_TEST(test_kvs_decode_absent_and_errors)
{
    struct mu_kvs kvs;
    struct mu_err err;
    json_t *j = js("{'a': 'x', 'b': false}");

    ck_assert_int_eq(mu_kvs_decode(NULL, "spec.nodeSelector", &kvs, NULL), 0);
    ck_assert_uint_eq(kvs.n, 0);
    ck_assert_int_eq(mu_kvs_decode(j, "x", &kvs, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "x.b: expected a string, got a boolean");
    ck_assert_uint_eq(kvs.n, 0);
    ck_assert_ptr_null(kvs.v);
    json_decref(j);
}
END_TEST

static const struct {
    const char *s;
    int64_t ms;
} dur_ok[] = {
    {"1h30m", 5400000}, {"90s", 90000},  {"500ms", 500},
    {"1.5h", 5400000},  {"2m", 120000},  {"0", 0},
    {"90", 90000},      {"1h1m1s", 3661000}, {"1.5s", 1500},
    {".5s", 500},       {"1us", 0},      {"3000000us", 3000},
    {"1\xc2\xb5s", 0},  {"2000000ns", 2}, {"-1s", -1000},
    {"+2s", 2000},      {"-0", 0},       {"1.000s", 1000},
    {"0.001s", 1},      {"2562047h", INT64_C(9223369200000)},
};

START_TEST(test_duration_parse_go_forms)
{
    int64_t ms = 7;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_duration_parse(dur_ok[_i].s, &ms, &err) == 0, "%s: %s",
                  dur_ok[_i].s, err.msg);
    ck_assert_int_eq(ms, dur_ok[_i].ms);
}
END_TEST

static const struct {
    const char *s;
    const char *msg;
} dur_bad[] = {
    {"", "invalid duration \"\""},
    {"abc", "invalid duration \"abc\""},
    {"1x", "unknown unit \"x\" in duration \"1x\""},
    {"1.5", "missing unit in duration \"1.5\""},
    {"1h30", "missing unit in duration \"1h30\""},
    {"s", "invalid duration \"s\""},
    {".s", "invalid duration \".s\""},
    {"1 h", "unknown unit \" h\" in duration \"1 h\""},
    {"3000000h", "invalid duration \"3000000h\""},
    {"99999999999999999999", "invalid duration \"99999999999999999999\""},
    {"-", "invalid duration \"-\""},
};

START_TEST(test_duration_parse_errors_name_text)
{
    int64_t ms = 7;
    struct mu_err err;

    ck_assert_int_eq(mu_duration_parse(dur_bad[_i].s, &ms, &err), -EINVAL);
    ck_assert_str_eq(err.msg, dur_bad[_i].msg);
    ck_assert_int_eq(ms, 7);
}
END_TEST

/* ---- resource lists ---- */

START_TEST(test_reslist_accepts_json_numbers)
{
    json_t *j = js("{'cpu': 0.1, 'memory': 2.5, 'nvidia.com/gpu': 2,"
                   " 'example.com/foo': 1e3}");
    json_t *big = js("{'ephemeral-storage': 1e21}");
    struct mu_res r;
    struct mu_err err;

    ck_assert_int_eq(mu_reslist_decode(j, "spec.capability", &rn, &r, &err),
                     0);
    ck_assert_int_eq(mu_res_get(&r, MU_RES_CPU), 100);
    ck_assert_int_eq(mu_res_get(&r, MU_RES_MEMORY), 3);
    ck_assert_int_eq(mu_res_get(&r, gpu), 2);
    ck_assert_int_eq(
        mu_res_get(&r, mu_resnames_index(&rn, "example.com/foo", false)),
        1000);
    ck_assert_int_eq(mu_reslist_decode(big, "spec.capability", &rn, &r,
                                       &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg,
                     "spec.capability.ephemeral-storage: value too large");
    json_decref(j);
    json_decref(big);
}
END_TEST

START_TEST(test_reslist_skips_quota_only_names)
{
    json_t *j = js("{'requests.cpu': '250m', 'limits.cpu': '2',"
                   " 'count/pods': '3', 'requests.nvidia.com/gpu': 4,"
                   " 'cpu-ish': 0.0}");
    struct mu_res r;

    ck_assert_int_eq(mu_reslist_decode(j, "x", &rn, &r, NULL), 0);
    ck_assert_int_eq(mu_res_get(&r, MU_RES_CPU), 250);
    ck_assert_int_eq(mu_res_get(&r, gpu), 4);
    ck_assert(!mu_res_has(&r, MU_RES_PODS));
    ck_assert(mu_res_has(&r, mu_resnames_index(&rn, "cpu-ish", false)));
    ck_assert_int_eq(mu_resnames_index(&rn, "limits.cpu", false), -ENOENT);
    ck_assert_int_eq(mu_resnames_index(&rn, "count/pods", false), -ENOENT);
    json_decref(j);
}
END_TEST

START_TEST(test_reslist_errors_leave_out_zeroed)
{
    json_t *j = js("{'cpu': '1', 'nvidia.com/gpu': -1}");
    json_t *arr = js("[1]");
    struct mu_res r;
    struct mu_err err;

    memset(&r, 0x5a, sizeof(r));
    ck_assert_int_eq(mu_reslist_decode(j, "spec.minResources", &rn, &r,
                                       &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg, "spec.minResources.nvidia.com/gpu: must be "
                              "greater than or equal to 0");
    ck_assert(all_zero(&r, sizeof(r)));
    ck_assert_int_eq(mu_reslist_decode(arr, "spec.capability", &rn, &r,
                                       &err),
                     -EINVAL);
    ck_assert_str_eq(err.msg,
                     "spec.capability: expected an object, got an array");
    ck_assert_int_eq(mu_reslist_decode(NULL, "x", &rn, &r, &err), 0);
    ck_assert_uint_eq(r.set, 0);
    json_decref(j);
    json_decref(arr);
}
END_TEST

/* ---- nodes ---- */

START_TEST(test_node_decode)
{
    json_t *j = js("{'metadata': {'name': 'gpu-01', 'labels': {'zone': 'a'}},"
                   " 'spec': {'unschedulable': true, 'taints': ["
                   "  {'key': 'nvidia.com/gpu', 'effect': 'NoSchedule'},"
                   "  {'key': 'k', 'value': 'v', 'effect': 'NoExecute'}]},"
                   " 'status': {'capacity': {'cpu': 64, 'memory': '512Gi'},"
                   "  'allocatable': {'cpu': '63500m', 'memory': '500Gi',"
                   "   'nvidia.com/gpu': '8', 'pods': '110'}}}");
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &rn, &n, NULL), 0);
    ck_assert_str_eq(n.meta.name, "gpu-01");
    ck_assert_ptr_null(n.meta.ns);
    ck_assert(n.unschedulable);
    ck_assert_int_eq(mu_res_get(&n.allocatable, MU_RES_CPU), 63500);
    ck_assert_int_eq(mu_res_get(&n.allocatable, MU_RES_MEMORY),
                     INT64_C(500) << 30);
    ck_assert_int_eq(mu_res_get(&n.allocatable, gpu), 8);
    ck_assert_int_eq(mu_res_get(&n.allocatable, MU_RES_PODS), 110);
    ck_assert_uint_eq(n.ntaints, 2);
    ck_assert_str_eq(n.taints[0].key, "nvidia.com/gpu");
    ck_assert_ptr_null(n.taints[0].value);
    ck_assert_int_eq(n.taints[0].effect, MU_EFFECT_NO_SCHEDULE);
    ck_assert_str_eq(n.taints[1].value, "v");
    ck_assert_int_eq(n.taints[1].effect, MU_EFFECT_NO_EXECUTE);
    mu_node_release(&n);
    ck_assert(all_zero(&n, sizeof(n)));
    json_decref(j);
}
END_TEST

START_TEST(test_node_capacity_fallback)
{
    json_t *j = js("{'metadata': {'name': 'n'}, 'status': {'capacity':"
                   " {'cpu': 8, 'memory': '32Gi'}}}");
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &rn, &n, NULL), 0);
    ck_assert_int_eq(mu_res_get(&n.allocatable, MU_RES_CPU), 8000);
    ck_assert_int_eq(mu_res_get(&n.allocatable, MU_RES_MEMORY),
                     INT64_C(32) << 30);
    ck_assert(!n.unschedulable);
    ck_assert_uint_eq(n.ntaints, 0);
    mu_node_release(&n);
    json_decref(j);
}
END_TEST

static const struct {
    const char *json;
    const char *msg;
} node_bad[] = {
    {"{'metadata': {'name': 'n'}, 'spec': {'taints': [{'key': 'a'}]}}",
     "spec.taints[0].effect: required"},
    {"{'metadata': {'name': 'n'}, 'spec': {'taints': [{'key': 'a',"
     " 'effect': 'NoSchedule'}, {'effect': 'NoSchedule'}]}}",
     "spec.taints[1].key: required"},
    {"{'metadata': {'name': 'n'}, 'spec': {'unschedulable': 'yes'}}",
     "spec.unschedulable: expected a boolean, got a string"},
    {"{'metadata': {'name': 'n'}, 'status': {'allocatable': {'cpu': 'x'}}}",
     "status.allocatable.cpu: quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
};

START_TEST(test_node_errors)
{
    json_t *j = js(node_bad[_i].json);
    struct mu_node n;
    struct mu_err err;

    ck_assert_int_eq(mu_node_decode(j, &rn, &n, &err), -EINVAL);
    ck_assert_str_eq(err.msg, node_bad[_i].msg);
    ck_assert(all_zero(&n, sizeof(n)));
    json_decref(j);
}
END_TEST

/* ---- PodGroups ---- */

START_TEST(test_podgroup_decode)
{
    json_t *j = js("{'metadata': {'name': 'job-abc', 'namespace': 'ml',"
                   "  'annotations': {'muster.io/submit-at': '10s'}},"
                   " 'spec': {'minMember': 3, 'minTaskMember': {'worker': 2,"
                   "  'ps': 1, 'chief': 0}, 'queue': 'research',"
                   "  'priorityClassName': 'high', 'minResources':"
                   "  {'cpu': 3, 'nvidia.com/gpu': 8}},"
                   " 'status': {'phase': 'Inqueue'}}");
    struct mu_podgroup pg;

    ck_assert_int_eq(mu_podgroup_decode(j, &rn, &pg, NULL), 0);
    ck_assert_str_eq(pg.meta.ns, "ml");
    ck_assert_int_eq(pg.min_member, 3);
    ck_assert_uint_eq(pg.nmin_task, 3);
    ck_assert_str_eq(pg.min_task[0].task, "chief");
    ck_assert_int_eq(pg.min_task[0].min, 0);
    ck_assert_str_eq(pg.min_task[1].task, "ps");
    ck_assert_str_eq(pg.min_task[2].task, "worker");
    ck_assert_int_eq(pg.min_task[2].min, 2);
    ck_assert_str_eq(pg.queue, "research");
    ck_assert_str_eq(pg.priority_class, "high");
    ck_assert(pg.has_min_resources);
    ck_assert_int_eq(mu_res_get(&pg.min_resources, gpu), 8);
    ck_assert_int_eq(pg.phase, MU_PG_INQUEUE);
    ck_assert_int_eq(pg.submit_at_ms, 10000);
    mu_podgroup_release(&pg);
    ck_assert(all_zero(&pg, sizeof(pg)));
    json_decref(j);
}
END_TEST

START_TEST(test_podgroup_defaults)
{
    json_t *j = js("{'metadata': {'name': 'pg'}, 'spec': {'minResources':"
                   " {}}}");
    struct mu_podgroup pg;

    ck_assert_int_eq(mu_podgroup_decode(j, &rn, &pg, NULL), 0);
    ck_assert_int_eq(pg.min_member, 0);
    ck_assert_uint_eq(pg.nmin_task, 0);
    ck_assert_str_eq(pg.queue, "default");
    ck_assert_ptr_null(pg.priority_class);
    ck_assert(pg.has_min_resources);
    ck_assert_uint_eq(pg.min_resources.set, 0);
    ck_assert_int_eq(pg.phase, MU_PG_NONE);
    mu_podgroup_release(&pg);
    json_decref(j);
    j = js("{'metadata': {'name': 'pg'}}");
    ck_assert_int_eq(mu_podgroup_decode(j, &rn, &pg, NULL), 0);
    ck_assert(!pg.has_min_resources);
    mu_podgroup_release(&pg);
    json_decref(j);
}
END_TEST

static const struct {
    const char *json;
    const char *msg;
} pg_bad[] = {
    {"{'metadata': {'name': 'pg'}, 'spec': {'minMember': -1}}",
     "spec.minMember: must be greater than or equal to 0"},
    {"{'metadata': {'name': 'pg'}, 'spec': {'minMember': 1.5}}",
     "spec.minMember: expected an integer, got a number"},
    {"{'metadata': {'name': 'pg'}, 'spec': {'minTaskMember': {'a': 1,"
     " 'b': -2}}}",
     "spec.minTaskMember.b: must be greater than or equal to 0"},
    {"{'metadata': {'name': 'pg'}, 'spec': {'minTaskMember': {'a': '1'}}}",
     "spec.minTaskMember.a: expected an integer, got a string"},
    {"{'metadata': {'name': 'pg'}, 'spec': {'minResources': {'cpu': '1',"
     " 'nvidia.com/gpu': '0.5'}}}",
     "spec.minResources.nvidia.com/gpu: must be an integer"},
    {"{'metadata': {'name': 'pg'}, 'status': {'phase': 'Done'}}",
     "status.phase: unsupported value \"Done\": supported values: "
     "\"Pending\", \"Inqueue\", \"Running\", \"Unknown\", \"Completed\""},
};

START_TEST(test_podgroup_errors)
{
    json_t *j = js(pg_bad[_i].json);
    struct mu_podgroup pg;
    struct mu_err err;

    ck_assert_int_eq(mu_podgroup_decode(j, &rn, &pg, &err), -EINVAL);
    ck_assert_str_eq(err.msg, pg_bad[_i].msg);
    ck_assert(all_zero(&pg, sizeof(pg)));
    json_decref(j);
}
END_TEST

/* ---- Queues ---- */

START_TEST(test_queue_decode)
{
    json_t *j = js("{'metadata': {'name': 'research'}, 'spec': {'weight': 4,"
                   " 'capability': {'cpu': 100, 'nvidia.com/gpu': 16},"
                   " 'guarantee': {'resource': {'nvidia.com/gpu': 8}},"
                   " 'deserved': {'nvidia.com/gpu': 12},"
                   " 'reclaimable': false, 'priority': 5, 'parent': 'root'},"
                   " 'status': {'state': 'Closing'}}");
    struct mu_queue_spec q;

    ck_assert_int_eq(mu_queue_decode(j, &rn, &q, NULL), 0);
    ck_assert_ptr_null(q.meta.ns);
    ck_assert_int_eq(q.weight, 4);
    ck_assert_int_eq(mu_res_get(&q.capability, MU_RES_CPU), 100000);
    ck_assert_int_eq(mu_res_get(&q.capability, gpu), 16);
    ck_assert(!mu_res_has(&q.capability, MU_RES_MEMORY));
    ck_assert_int_eq(mu_res_get(&q.guarantee, gpu), 8);
    ck_assert_int_eq(mu_res_get(&q.deserved, gpu), 12);
    ck_assert(!q.reclaimable);
    ck_assert_int_eq(q.priority, 5);
    ck_assert_str_eq(q.parent, "root");
    ck_assert_int_eq(q.state, MU_QUEUE_CLOSING);
    mu_queue_spec_release(&q);
    ck_assert(all_zero(&q, sizeof(q)));
    json_decref(j);
}
END_TEST

START_TEST(test_queue_defaults)
{
    json_t *j = js("{'metadata': {'name': 'default'}}");
    json_t *z = js("{'metadata': {'name': 'z'}, 'spec': {'weight': 0}}");
    struct mu_queue_spec q;

    ck_assert_int_eq(mu_queue_decode(j, &rn, &q, NULL), 0);
    ck_assert_int_eq(q.weight, 1);
    ck_assert(q.reclaimable);
    ck_assert_int_eq(q.state, MU_QUEUE_OPEN);
    ck_assert_ptr_null(q.parent);
    ck_assert_uint_eq(q.capability.set, 0);
    mu_queue_spec_release(&q);
    ck_assert_int_eq(mu_queue_decode(z, &rn, &q, NULL), 0);
    ck_assert_int_eq(q.weight, 1);
    mu_queue_spec_release(&q);
    json_decref(j);
    json_decref(z);
}
END_TEST

static const struct {
    const char *json;
    const char *msg;
} queue_bad[] = {
    {"{'metadata': {'name': 'q'}, 'spec': {'weight': -1}}",
     "spec.weight: must be between 1 and 65535"},
    {"{'metadata': {'name': 'q'}, 'spec': {'weight': 65536}}",
     "spec.weight: must be between 1 and 65535"},
    {"{'metadata': {'name': 'q'}, 'spec': {'weight': '2'}}",
     "spec.weight: expected an integer, got a string"},
    {"{'metadata': {'name': 'q'}, 'spec': {'capability': {'cpu': 10,"
     " 'nvidia.com/gpu': 16}, 'guarantee': {'resource': {'cpu': 10,"
     " 'nvidia.com/gpu': 20}}}}",
     "spec.guarantee.resource.nvidia.com/gpu: 20 exceeds spec.capability "
     "16"},
    {"{'metadata': {'name': 'q'}, 'spec': {'capability': {'memory':"
     " '64Gi'}, 'guarantee': {'resource': {'memory': '65Gi'}}}}",
     "spec.guarantee.resource.memory: 65Gi exceeds spec.capability 64Gi"},
    {"{'metadata': {'name': 'q'}, 'spec': {'guarantee': {'resource': {'cpu':"
     " '-1'}}}}",
     "spec.guarantee.resource.cpu: must be greater than or equal to 0"},
    {"{'metadata': {'name': 'q'}, 'spec': {'guarantee': []}}",
     "spec.guarantee: expected an object, got an array"},
    {"{'metadata': {'name': 'q'}, 'spec': {'reclaimable': 'no'}}",
     "spec.reclaimable: expected a boolean, got a string"},
    {"{'metadata': {'name': 'q'}, 'status': {'state': 'Gone'}}",
     "status.state: unsupported value \"Gone\": supported values: \"Open\", "
     "\"Closed\", \"Closing\", \"Unknown\""},
};

START_TEST(test_queue_errors)
{
    json_t *j = js(queue_bad[_i].json);
    struct mu_queue_spec q;
    struct mu_err err;

    ck_assert_int_eq(mu_queue_decode(j, &rn, &q, &err), -EINVAL);
    ck_assert_str_eq(err.msg, queue_bad[_i].msg);
    ck_assert(all_zero(&q, sizeof(q)));
    json_decref(j);
}
END_TEST

START_TEST(test_queue_guarantee_within_capability_on_shared_dims)
{
    json_t *j = js("{'metadata': {'name': 'q'}, 'spec': {'capability':"
                   " {'cpu': 10}, 'guarantee': {'resource': {'cpu': 10,"
                   " 'nvidia.com/gpu': 99}}}}");
    struct mu_queue_spec q;

    ck_assert_int_eq(mu_queue_decode(j, &rn, &q, NULL), 0);
    mu_queue_spec_release(&q);
    json_decref(j);
}
END_TEST

/* ---- PriorityClasses ---- */

START_TEST(test_priorityclass_decode)
{
    json_t *j = js("{'metadata': {'name': 'high', 'labels': {'a': 'b'}},"
                   " 'value': 1000, 'globalDefault': true,"
                   " 'preemptionPolicy': 'Never'}");
    json_t *k = js("{'metadata': {'name': 'low'}, 'value': -5}");
    struct mu_priorityclass pc;

    ck_assert_int_eq(mu_priorityclass_decode(j, &pc, NULL), 0);
    ck_assert_str_eq(pc.name, "high");
    ck_assert_int_eq(pc.value, 1000);
    ck_assert(pc.global_default);
    ck_assert(pc.preempt_never);
    mu_priorityclass_release(&pc);
    ck_assert_int_eq(mu_priorityclass_decode(k, &pc, NULL), 0);
    ck_assert_int_eq(pc.value, -5);
    ck_assert(!pc.global_default);
    ck_assert(!pc.preempt_never);
    mu_priorityclass_release(&pc);
    json_decref(j);
    json_decref(k);
}
END_TEST

START_TEST(test_priorityclass_errors)
{
    json_t *j = js("{'metadata': {'name': 'x'}}");
    json_t *k = js("{'metadata': {'name': 'x'}, 'value': 1,"
                   " 'globalDefault': 'yes'}");
    struct mu_priorityclass pc;
    struct mu_err err;

    ck_assert_int_eq(mu_priorityclass_decode(j, &pc, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "value: required");
    ck_assert(all_zero(&pc, sizeof(pc)));
    ck_assert_int_eq(mu_priorityclass_decode(k, &pc, &err), -EINVAL);
    ck_assert_str_eq(err.msg, "globalDefault: expected a boolean, got a "
                              "string");
    ck_assert(all_zero(&pc, sizeof(pc)));
    json_decref(j);
    json_decref(k);
}
END_TEST

START_TEST(test_phase_and_state_names)
{
    ck_assert_str_eq(mu_pod_phase_name(MU_POD_PENDING), "Pending");
    ck_assert_str_eq(mu_pod_phase_name(MU_POD_RUNNING), "Running");
    ck_assert_str_eq(mu_pod_phase_name(MU_POD_SUCCEEDED), "Succeeded");
    ck_assert_str_eq(mu_pod_phase_name(MU_POD_FAILED), "Failed");
    ck_assert_str_eq(mu_pod_phase_name(MU_POD_UNKNOWN), "Unknown");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_NONE), "");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_PENDING), "Pending");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_INQUEUE), "Inqueue");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_RUNNING), "Running");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_UNKNOWN), "Unknown");
    ck_assert_str_eq(mu_pg_phase_name(MU_PG_COMPLETED), "Completed");
    ck_assert_str_eq(mu_queue_state_name(MU_QUEUE_OPEN), "Open");
    ck_assert_str_eq(mu_queue_state_name(MU_QUEUE_CLOSED), "Closed");
    ck_assert_str_eq(mu_queue_state_name(MU_QUEUE_CLOSING), "Closing");
    ck_assert_str_eq(mu_queue_state_name(MU_QUEUE_UNKNOWN), "Unknown");
}
END_TEST

/* The texts objects and reasons are written with (common/mu.h): mu_sb_addf
 * formats a text shorter than MU_SB_ROOM in one pass on the stack and a
 * longer one in two; the result is the same on either side of that bound
 * and at it, at any length already in the buffer. */
START_TEST(test_sb_addf_same_text_at_every_boundary)
{
    char want[4 * MU_SB_ROOM + 64], arg[2 * MU_SB_ROOM + 1];

    for (size_t pre = 0; pre <= 2 * MU_SB_ROOM + 3; pre++) {
        for (size_t len = 0; len <= 2 * MU_SB_ROOM; len += 7) {
            struct mu_sb sb;

            memset(arg, 'a' + (int)(len % 26), len);
            arg[len] = '\0';
            mu_sb_init(&sb);
            for (size_t i = 0; i < pre; i++)
                mu_sb_add(&sb, "x");
            mu_sb_addf(&sb, "[%s]%d", arg, (int)len);
            snprintf(want, sizeof(want), "%.*s[%s]%d", (int)pre,
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                     arg, (int)len);
            ck_assert_str_eq(sb.buf, want);
            ck_assert_uint_eq(sb.len, strlen(want));
            mu_sb_addf(&sb, "%s", "");
            ck_assert_str_eq(sb.buf, want);
            mu_sb_release(&sb);
        }
    }
}
END_TEST

/* mu_i64_text writes what "%lld" writes, and mu_quantity_format (which
 * uses it) truncates as snprintf would. */
START_TEST(test_i64_text_is_printf_lld)
{
    static const int64_t v[] = {0, 1, -1, 9, 10, -10, 999, 1000, 123456789,
                                -987654321012LL, INT64_MAX, INT64_MIN,
                                INT64_MAX - 1, INT64_MIN + 1};
    char got[MU_I64_TEXT], want[32], q[8], qw[8];

    for (size_t i = 0; i < MU_ARRAY_LEN(v); i++) {
        size_t n = mu_i64_text(v[i], got);

        snprintf(want, sizeof(want), "%lld", (long long)v[i]);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(n, strlen(want));
        for (size_t cap = 1; cap <= sizeof(q); cap++) {
            snprintf(qw, cap, "%lld", (long long)v[i]);
            ck_assert_str_eq(mu_quantity_format("nvidia.com/gpu", v[i], q,
                                                cap), qw);
            snprintf(qw, cap, "%lldm", (long long)v[i]);
            if (v[i] % 1000)
                ck_assert_str_eq(mu_quantity_format("cpu", v[i], q, cap),
                                 qw);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("object");
    TCase *tp = tcase_create("pod");
    TCase *ts = tcase_create("selection");
    TCase *tm = tcase_create("meta");
    TCase *to = tcase_create("objects");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tp, setup, teardown);
    tcase_add_test(tp, test_pod_decode_defaults);
    tcase_add_test(tp, test_pod_kube_only_marks_what_only_kube_scheduler_checks);
    tcase_add_test(tp, test_pod_limits_only_gpu_requests_its_limit);
    tcase_add_test(tp, test_pod_request_init_containers_sidecars_overhead);
    tcase_add_test(tp, test_pod_init_container_dominates);
    tcase_add_test(tp, test_pod_besteffort);
    tcase_add_test(tp, test_pod_spec_fields_and_annotations);
    tcase_add_test(tp, test_pod_annotation_precedence);
    tcase_add_loop_test(tp, test_pod_errors_name_the_field_and_zero_out, 0,
                        (int)MU_ARRAY_LEN(pod_bad));
    tcase_add_test(tp, test_pod_too_many_resource_names_is_enospc);
    suite_add_tcase(s, tp);

    tcase_add_checked_fixture(ts, setup, teardown);
    tcase_add_test(ts, test_toleration_decode_and_match);
    tcase_add_test(ts, test_toleration_equal_compares_empty_values);
    tcase_add_loop_test(ts, test_affinity_operators, 0,
                        (int)MU_ARRAY_LEN(aff));
    tcase_add_test(ts, test_affinity_decodes_terms);
    suite_add_tcase(s, ts);

    tcase_add_loop_test(tm, test_meta_creation_timestamp, 0,
                        (int)MU_ARRAY_LEN(ts_ok));
    tcase_add_loop_test(tm, test_meta_rejects_bad_timestamp, 0,
                        (int)MU_ARRAY_LEN(ts_bad));
    tcase_add_test(tm, test_meta_first_controller_owner_wins);
    tcase_add_test(tm, test_meta_cluster_scoped_and_sorted_kvs);
    tcase_add_test(tm, test_kvs_decode_absent_and_errors);
    tcase_add_loop_test(tm, test_duration_parse_go_forms, 0,
                        (int)MU_ARRAY_LEN(dur_ok));
    tcase_add_loop_test(tm, test_duration_parse_errors_name_text, 0,
                        (int)MU_ARRAY_LEN(dur_bad));
    suite_add_tcase(s, tm);

    tcase_add_checked_fixture(to, setup, teardown);
    tcase_add_test(to, test_reslist_accepts_json_numbers);
    tcase_add_test(to, test_reslist_skips_quota_only_names);
    tcase_add_test(to, test_reslist_errors_leave_out_zeroed);
    tcase_add_test(to, test_node_decode);
    tcase_add_test(to, test_node_capacity_fallback);
    tcase_add_loop_test(to, test_node_errors, 0,
                        (int)MU_ARRAY_LEN(node_bad));
    tcase_add_test(to, test_podgroup_decode);
    tcase_add_test(to, test_podgroup_defaults);
    tcase_add_loop_test(to, test_podgroup_errors, 0,
                        (int)MU_ARRAY_LEN(pg_bad));
    tcase_add_test(to, test_queue_decode);
    tcase_add_test(to, test_queue_defaults);
    tcase_add_loop_test(to, test_queue_errors, 0,
                        (int)MU_ARRAY_LEN(queue_bad));
    tcase_add_test(to, test_queue_guarantee_within_capability_on_shared_dims);
    tcase_add_test(to, test_priorityclass_decode);
    tcase_add_test(to, test_priorityclass_errors);
    tcase_add_test(to, test_phase_and_state_names);
    tcase_add_test(to, test_sb_addf_same_text_at_every_boundary);
    tcase_add_test(to, test_i64_text_is_printf_lld);
    suite_add_tcase(s, to);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
