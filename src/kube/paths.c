#include "kube/paths.h"

#include <jansson.h>

#include "common/mu.h"

static const struct mu_api_res table[MU_API__COUNT] = {
    [MU_API_POD] = {"/api/v1", "pods", "Pod", true},
    [MU_API_NODE] = {"/api/v1", "nodes", "Node", false},
    [MU_API_EVENT] = {"/api/v1", "events", "Event", true},
    [MU_API_SERVICE] = {"/api/v1", "services", "Service", true},
    [MU_API_CONFIGMAP] = {"/api/v1", "configmaps", "ConfigMap", true},
    [MU_API_SECRET] = {"/api/v1", "secrets", "Secret", true},
    [MU_API_NETWORKPOLICY] = {"/apis/networking.k8s.io/v1",
                              "networkpolicies", "NetworkPolicy", true},
    [MU_API_REPLICASET] = {"/apis/apps/v1", "replicasets", "ReplicaSet", true},
    [MU_API_STATEFULSET] = {"/apis/apps/v1", "statefulsets", "StatefulSet",
                            true},
    [MU_API_DEPLOYMENT] = {"/apis/apps/v1", "deployments", "Deployment", true},
    [MU_API_PRIORITYCLASS] = {"/apis/scheduling.k8s.io/v1", "priorityclasses",
                              "PriorityClass", false},
    [MU_API_LEASE] = {"/apis/coordination.k8s.io/v1", "leases", "Lease", true},
    [MU_API_PODGROUP] = {"/apis/scheduling.volcano.sh/v1beta1", "podgroups",
                         "PodGroup", true},
    [MU_API_QUEUE] = {"/apis/scheduling.volcano.sh/v1beta1", "queues",
                      "Queue", false},
    [MU_API_VCJOB] = {"/apis/batch.volcano.sh/v1alpha1", "jobs", "Job", true},
    [MU_API_COMMAND] = {"/apis/bus.volcano.sh/v1alpha1", "commands",
                        "Command", true},
    [MU_API_DEVICECLASS] = {"/apis/resource.k8s.io/v1", "deviceclasses",
                            "DeviceClass", false},
    [MU_API_RESOURCESLICE] = {"/apis/resource.k8s.io/v1", "resourceslices",
                              "ResourceSlice", false},
    [MU_API_RESOURCECLAIM] = {"/apis/resource.k8s.io/v1", "resourceclaims",
                              "ResourceClaim", true},
    [MU_API_RESOURCECLAIMTEMPLATE] = {"/apis/resource.k8s.io/v1",
                                      "resourceclaimtemplates",
                                      "ResourceClaimTemplate", true},
    [MU_API_HYPERNODE] = {"/apis/topology.volcano.sh/v1alpha1", "hypernodes",
                          "HyperNode", false},
};

const struct mu_api_res *mu_api_res(enum mu_api_kind k)
{
    return &table[k];
}

int mu_api_kind_find(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return -1;
    for (int k = 0; k < MU_API__COUNT; k++) {
        const char *p = table[k].prefix;
        /* "/api/v1" is apiVersion "v1"; "/apis/G/V" is "G/V" */
        const char *av = !strcmp(p, "/api/v1") ? "v1" : p + strlen("/apis/");

        if (!strcmp(av, api_version) && !strcmp(table[k].kind, kind))
            return k;
    }
    return -1;
}

char *mu_api_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    struct mu_sb sb;

    mu_sb_init(&sb);
    mu_sb_add(&sb, "");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[4] = {(char)c, 0, 0, 0};

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
              c == '~')) {
            e[0] = '%';
            e[1] = hex[c >> 4];
            e[2] = hex[c & 15];
        }
        mu_sb_add(&sb, e);
    }
    return sb.buf;
}

char *mu_api_path(enum mu_api_kind k, const char *ns, const char *name,
                  const char *sub)
{
    const struct mu_api_res *r = &table[k];
    struct mu_sb sb;
    char *e;

    mu_sb_init(&sb);
    mu_sb_add(&sb, r->prefix);
    if (r->namespaced && ns) {
        mu_sb_add(&sb, "/namespaces/");
        e = mu_api_escape(ns);
        mu_sb_add(&sb, e);
        free(e);
    }
    mu_sb_add(&sb, "/");
    mu_sb_add(&sb, r->plural);
    if (name) {
        mu_sb_add(&sb, "/");
        e = mu_api_escape(name);
        mu_sb_add(&sb, e);
        free(e);
        if (sub) {
            mu_sb_add(&sb, "/");
            mu_sb_add(&sb, sub);
        }
    }
    return sb.buf;
}

json_t *mu_api_delete_options(const char *uid, const char *propagation)
{
    json_t *o;

    if (!uid)
        return NULL;
    o = json_pack("{s:s,s:s,s:{s:s}}", "kind", "DeleteOptions", "apiVersion",
                  "v1", "preconditions", "uid", uid);
    if (o && propagation)
        json_object_set_new(o, "propagationPolicy", json_string(propagation));
    return o;
}
