/* strict.c - unknown fields and the API server's refusals (strict.h). */
#include "api/strict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/resource.h"

struct schema;

/* A field: its name; sub: the schema of its value (NULL: not looked
 * into); list: the value is a list of such objects. */
struct field {
    const char *name;
    const struct schema *sub;
    bool list;
};

struct schema {
    const struct field *f;
    size_t n;
};

#define SCHEMA(name, ...)                                                     \
    static const struct field name##_f[] = {__VA_ARGS__};                     \
    static const struct schema name = {name##_f, MU_ARRAY_LEN(name##_f)}

SCHEMA(meta_s, {"name", NULL, false}, {"namespace", NULL, false},
       {"generateName", NULL, false}, {"labels", NULL, false},
       {"annotations", NULL, false}, {"uid", NULL, false},
       {"resourceVersion", NULL, false}, {"generation", NULL, false},
       {"creationTimestamp", NULL, false}, {"deletionTimestamp", NULL, false},
       {"deletionGracePeriodSeconds", NULL, false},
       {"ownerReferences", NULL, false}, {"finalizers", NULL, false},
       {"managedFields", NULL, false}, {"selfLink", NULL, false});

SCHEMA(resources_s, {"limits", NULL, false}, {"requests", NULL, false},
       {"claims", NULL, false});

SCHEMA(container_s, {"name", NULL, false}, {"image", NULL, false},
       {"command", NULL, false}, {"args", NULL, false},
       {"workingDir", NULL, false}, {"ports", NULL, false},
       {"envFrom", NULL, false}, {"env", NULL, false},
       {"resources", &resources_s, false}, {"resizePolicy", NULL, false},
       {"restartPolicy", NULL, false}, {"restartPolicyRules", NULL, false},
       {"volumeMounts", NULL, false}, {"volumeDevices", NULL, false},
       {"livenessProbe", NULL, false}, {"readinessProbe", NULL, false},
       {"startupProbe", NULL, false}, {"lifecycle", NULL, false},
       {"terminationMessagePath", NULL, false},
       {"terminationMessagePolicy", NULL, false},
       {"imagePullPolicy", NULL, false}, {"securityContext", NULL, false},
       {"stdin", NULL, false}, {"stdinOnce", NULL, false},
       {"tty", NULL, false});

SCHEMA(podspec_s, {"volumes", NULL, false},
       {"initContainers", &container_s, true},
       {"containers", &container_s, true},
       {"ephemeralContainers", NULL, false}, {"restartPolicy", NULL, false},
       {"terminationGracePeriodSeconds", NULL, false},
       {"activeDeadlineSeconds", NULL, false}, {"dnsPolicy", NULL, false},
       {"nodeSelector", NULL, false}, {"serviceAccountName", NULL, false},
       {"serviceAccount", NULL, false},
       {"automountServiceAccountToken", NULL, false},
       {"nodeName", NULL, false}, {"hostNetwork", NULL, false},
       {"hostPID", NULL, false}, {"hostIPC", NULL, false},
       {"shareProcessNamespace", NULL, false},
       {"securityContext", NULL, false}, {"imagePullSecrets", NULL, false},
       {"hostname", NULL, false}, {"hostnameOverride", NULL, false},
       {"subdomain", NULL, false}, {"affinity", NULL, false},
       {"schedulerName", NULL, false}, {"tolerations", NULL, false},
       {"hostAliases", NULL, false}, {"priorityClassName", NULL, false},
       {"priority", NULL, false}, {"dnsConfig", NULL, false},
       {"readinessGates", NULL, false}, {"runtimeClassName", NULL, false},
       {"enableServiceLinks", NULL, false},
       {"preemptionPolicy", NULL, false}, {"overhead", NULL, false},
       {"topologySpreadConstraints", NULL, false},
       {"setHostnameAsFQDN", NULL, false}, {"os", NULL, false},
       {"hostUsers", NULL, false}, {"schedulingGates", NULL, false},
       {"resourceClaims", NULL, false}, {"resources", &resources_s, false},
       {"workloadRef", NULL, false});

SCHEMA(template_s, {"metadata", &meta_s, false}, {"spec", &podspec_s, false});

SCHEMA(policy_s, {"event", NULL, false}, {"events", NULL, false},
       {"action", NULL, false}, {"exitCode", NULL, false},
       {"timeout", NULL, false});

SCHEMA(task_s, {"name", NULL, false}, {"replicas", NULL, false},
       {"minAvailable", NULL, false}, {"maxRetry", NULL, false},
       {"template", &template_s, false}, {"policies", &policy_s, true},
       {"topologyPolicy", NULL, false}, {"dependsOn", NULL, false},
       {"partitionPolicy", NULL, false});

SCHEMA(jobspec_s, {"schedulerName", NULL, false},
       {"minAvailable", NULL, false}, {"minSuccess", NULL, false},
       {"maxRetry", NULL, false}, {"queue", NULL, false},
       {"priorityClassName", NULL, false},
       {"ttlSecondsAfterFinished", NULL, false},
       {"runningEstimate", NULL, false}, {"plugins", NULL, false},
       {"networkTopology", NULL, false}, {"volumes", NULL, false},
       {"policies", &policy_s, true}, {"tasks", &task_s, true});

SCHEMA(guarantee_s, {"resource", NULL, false});

SCHEMA(queuespec_s, {"weight", NULL, false}, {"capability", NULL, false},
       {"deserved", NULL, false}, {"guarantee", &guarantee_s, false},
       {"reclaimable", NULL, false}, {"priority", NULL, false},
       {"parent", NULL, false}, {"type", NULL, false},
       {"dequeueStrategy", NULL, false}, {"extendClusters", NULL, false},
       {"affinity", NULL, false});

SCHEMA(pgspec_s, {"minMember", NULL, false}, {"minTaskMember", NULL, false},
       {"queue", NULL, false}, {"priorityClassName", NULL, false},
       {"preemptable", NULL, false}, {"minResources", NULL, false},
       {"networkTopology", NULL, false}, {"subGroupPolicy", NULL, false});

SCHEMA(hnsel_s, {"exactMatch", NULL, false}, {"regexMatch", NULL, false},
       {"labelMatch", NULL, false});

SCHEMA(hnmember_s, {"type", NULL, false}, {"selector", &hnsel_s, false});

SCHEMA(hnspec_s, {"tier", NULL, false}, {"tierName", NULL, false},
       {"members", &hnmember_s, true});

SCHEMA(nodespec_s, {"podCIDR", NULL, false}, {"podCIDRs", NULL, false},
       {"providerID", NULL, false}, {"unschedulable", NULL, false},
       {"taints", NULL, false}, {"configSource", NULL, false},
       {"externalID", NULL, false});

SCHEMA(nodestatus_s, {"capacity", NULL, false}, {"allocatable", NULL, false},
       {"phase", NULL, false}, {"conditions", NULL, false},
       {"addresses", NULL, false}, {"daemonEndpoints", NULL, false},
       {"nodeInfo", NULL, false}, {"images", NULL, false},
       {"volumesInUse", NULL, false}, {"volumesAttached", NULL, false},
       {"config", NULL, false}, {"runtimeHandlers", NULL, false},
       {"features", NULL, false}, {"declaredFeatures", NULL, false});

#define TOP(name, ...)                                                        \
    SCHEMA(name, {"apiVersion", NULL, false}, {"kind", NULL, false},          \
           {"metadata", &meta_s, false}, __VA_ARGS__)

TOP(pod_s, {"spec", &podspec_s, false}, {"status", NULL, false});
TOP(node_s, {"spec", &nodespec_s, false}, {"status", &nodestatus_s, false});
TOP(queue_s, {"spec", &queuespec_s, false}, {"status", NULL, false});
TOP(pg_s, {"spec", &pgspec_s, false}, {"status", NULL, false});
TOP(job_s, {"spec", &jobspec_s, false}, {"status", NULL, false});
TOP(hn_s, {"spec", &hnspec_s, false}, {"status", NULL, false});
TOP(pc_s, {"value", NULL, false}, {"globalDefault", NULL, false},
    {"description", NULL, false}, {"preemptionPolicy", NULL, false});
TOP(other_s, {"spec", NULL, false}, {"status", NULL, false},
    {"data", NULL, false});

struct run {
    const struct mu_yaml_doc *d;
    const json_t *root;
    mu_strict_fn fn;
    void *ctx;
    int found, invalid;
};

static void say(struct run *r, const char *path, bool invalid,
                const char *msg)
{
    int line;

    if (++r->found > MU_STRICT_MAX_FINDINGS) {
        if (r->found == MU_STRICT_MAX_FINDINGS + 1)
            r->fn(r->ctx, r->d ? r->d->line : 0, false,
                  "more findings not shown");
        return;
    }
    if (r->d && r->root == r->d->root) {
        line = mu_yaml_path_line(r->d, path);
    } else {
        struct mu_yaml_doc sub = {(json_t *)r->root,
                                  r->d ? r->d->line : 0,
                                  r->d ? r->d->lines : NULL};

        line = mu_yaml_path_line(&sub, path);
    }
    r->fn(r->ctx, line, invalid, msg);
}

static void walk(struct run *r, const json_t *obj, const struct schema *s,
                 const char *path)
{
    const char *k;
    json_t *v;

    if (!json_is_object(obj))
        return;
    json_object_foreach((json_t *)obj, k, v)
    {
        const struct field *f = NULL;
        char sub[512];

        for (size_t i = 0; i < s->n && !f; i++)
            if (!strcmp(s->f[i].name, k))
                f = &s->f[i];
        snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", k);
        if (!f) {
            char *msg = mu_xasprintf("unknown field \"%s\"", sub);

            say(r, sub, false, msg);
            free(msg);
            continue;
        }
        if (!f->sub)
            continue;
        if (!f->list) {
            walk(r, v, f->sub, sub);
        } else if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                char item[540];

                snprintf(item, sizeof(item), "%s[%zu]", sub, i);
                walk(r, json_array_get(v, i), f->sub, item);
            }
        }
    }
}

/* kubectl's form of a quantity given as a JSON value; false also for a
 * string longer than buf (reported as not a quantity, never cut). */
static bool qty_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v)) {
        if (strlen(json_string_value(v)) >= n)
            return false;
        snprintf(buf, n, "%s", json_string_value(v));
    }
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        mu_json_real_text(json_real_value(v), buf, n);
    else
        return false;
    return true;
}

/* A name with a domain other than kubernetes.io (k8s'
 * IsExtendedResourceName). */
static bool extended(const char *name)
{
    const char *slash = strchr(name, '/');

    return slash && strncmp(name, "kubernetes.io/", 14) &&
           !strstr(name, ".kubernetes.io/") && strncmp(name, "requests.", 9);
}

static void invalid(struct run *r, const char *path, const char *value,
                    const char *why)
{
    char *msg = mu_xasprintf("%s: Invalid value: \"%s\": %s", path, value,
                             why);

    r->invalid++;
    say(r, path, true, msg);
    free(msg);
}

/* requests and limits of one container's resources. */
static void check_resources(struct run *r, const json_t *res,
                            const char *path)
{
    const json_t *lim = json_object_get(res, "limits");
    const json_t *req = json_object_get(res, "requests");
    const char *which[2] = {"limits", "requests"};
    const json_t *maps[2] = {lim, req};

    for (int m = 0; m < 2; m++) {
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)maps[m], k, v)
        {
            char p[600], text[64], why[256];
            int64_t x;
            struct mu_err err;

            snprintf(p, sizeof(p), "%s.%s[%s]", path, which[m], k);
            if (!qty_text(v, text, sizeof(text))) {
                invalid(r, p, json_is_string(v) ? "(longer than 63)" : "",
                        json_is_string(v)
                            ? "quantities must match the regular expression "
                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                            : "quantities must be a string or a number");
                continue;
            }
            if (mu_quantity_parse(text, MU_Q_BYTES, &x, &err) < 0) {
                invalid(r, p, text,
                        "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
                continue;
            }
            if (extended(k) &&
                mu_quantity_parse(text, MU_Q_INTEGER, &x, &err) < 0) {
                snprintf(why, sizeof(why), "must be an integer");
                invalid(r, p, text, why);
            }
        }
    }
    {
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)req, k, v)
        {
            const json_t *lv = json_object_get(lim, k);
            enum mu_qunit u = mu_resource_unit(k);
            char rt[64], lt[64], p[600], why[300];
            int64_t a, b;
            struct mu_err err;

            if (!lv || !qty_text(v, rt, sizeof(rt)) ||
                !qty_text(lv, lt, sizeof(lt)) ||
                mu_quantity_parse(rt, u, &a, &err) < 0 ||
                mu_quantity_parse(lt, u, &b, &err) < 0)
                continue;
            snprintf(p, sizeof(p), "%s.requests", path);
            if (extended(k) && a != b) {
                snprintf(why, sizeof(why), "must be equal to %s limit of %s",
                         k, lt);
                invalid(r, p, rt, why);
            } else if (a > b) {
                snprintf(why, sizeof(why),
                         "must be less than or equal to %s limit of %s", k,
                         lt);
                invalid(r, p, rt, why);
            }
        }
    }
}

static void check_podspec(struct run *r, const json_t *spec, const char *path)
{
    static const char *const lists[] = {"initContainers", "containers"};

    for (size_t l = 0; l < MU_ARRAY_LEN(lists); l++) {
        const json_t *cs = json_object_get(spec, lists[l]);

        for (size_t i = 0; i < json_array_size(cs); i++) {
            const json_t *res =
                json_object_get(json_array_get(cs, i), "resources");
            char p[512];

            if (!json_is_object(res))
                continue;
            snprintf(p, sizeof(p), "%s%s%s[%zu].resources", path,
                     path[0] ? "." : "", lists[l], i);
            check_resources(r, res, p);
        }
    }
}

int mu_strict_check(const char *kind, const json_t *obj,
                    const struct mu_yaml_doc *d, mu_strict_fn fn, void *ctx)
{
    struct run r = {d, obj, fn, ctx, 0, 0};
    const struct schema *s = &other_s;
    const json_t *spec = json_object_get(obj, "spec");

    if (!kind)
        kind = "";
    if (!strcmp(kind, "Pod"))
        s = &pod_s;
    else if (!strcmp(kind, "Node"))
        s = &node_s;
    else if (!strcmp(kind, "Queue"))
        s = &queue_s;
    else if (!strcmp(kind, "PodGroup"))
        s = &pg_s;
    else if (!strcmp(kind, "Job"))
        s = &job_s;
    else if (!strcmp(kind, "PriorityClass"))
        s = &pc_s;
    else if (!strcmp(kind, "HyperNode"))
        s = &hn_s;
    if (s == &other_s) {
        walk(&r, json_object_get(obj, "metadata"), &meta_s, "metadata");
        return 0;
    }
    walk(&r, obj, s, "");
    if (!strcmp(kind, "Pod")) {
        check_podspec(&r, spec, "spec");
    } else if (!strcmp(kind, "Job")) {
        const json_t *tasks = json_object_get(spec, "tasks");

        for (size_t i = 0; i < json_array_size(tasks); i++) {
            char p[128];

            snprintf(p, sizeof(p), "spec.tasks[%zu].template.spec", i);
            check_podspec(&r,
                          json_object_get(
                              json_object_get(json_array_get(tasks, i),
                                              "template"),
                              "spec"),
                          p);
        }
    }
    return r.invalid;
}
