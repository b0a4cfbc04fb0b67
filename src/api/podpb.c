/*
 * A Pod from protobuf, as the JSON muster reads (podpb.h). The field
 * numbers are k8s.io/api/core/v1's and k8s.io/apimachinery's
 * generated.proto (v0.35).
 */
#include "api/podpb.h"

#include "api/pbjson.h"

#define MSG(var, name_, ...)                                                \
    static const struct mu_pbj_field var##_f[] = {__VA_ARGS__};             \
    static const struct mu_pbj_msg var = {name_, var##_f,                   \
                                          MU_ARRAY_LEN(var##_f)}

/* ---- metadata ---- */
MSG(owner_m, "OwnerReference",
    {5, "apiVersion", MU_PBJ_STR, NULL},
    {1, "kind", MU_PBJ_STR, NULL},
    {3, "name", MU_PBJ_STR, NULL},
    {4, "uid", MU_PBJ_STR, NULL},
    {6, "controller", MU_PBJ_BOOL, NULL});
MSG(meta_m, "ObjectMeta",
    {1, "name", MU_PBJ_STR, NULL},
    {2, "generateName", MU_PBJ_STR, NULL},
    {3, "namespace", MU_PBJ_STR, NULL},
    {5, "uid", MU_PBJ_STR, NULL},
    {6, "resourceVersion", MU_PBJ_STR, NULL},
    {8, "creationTimestamp", MU_PBJ_TIME, NULL},
    {9, "deletionTimestamp", MU_PBJ_TIME, NULL},
    {11, "labels", MU_PBJ_MAP_STR, NULL},
    {12, "annotations", MU_PBJ_MAP_STR, NULL},
    {13, "ownerReferences", MU_PBJ_MSGS, &owner_m});

/* ---- spec ---- */
MSG(port_m, "ContainerPort",
    {2, "hostPort", MU_PBJ_I32, NULL});
MSG(resources_m, "ResourceRequirements",
    {1, "limits", MU_PBJ_MAP_QTY, NULL},
    {2, "requests", MU_PBJ_MAP_QTY, NULL});
MSG(container_m, "Container",
    {1, "name", MU_PBJ_STR, NULL},
    {6, "ports", MU_PBJ_MSGS, &port_m},
    {8, "resources", MU_PBJ_MSG, &resources_m},
    {24, "restartPolicy", MU_PBJ_STR, NULL});
/* every source kube_only (object.c) looks for, and the common others */
MSG(volsrc_m, "VolumeSource",
    {1, "hostPath", MU_PBJ_SET, NULL},
    {2, "emptyDir", MU_PBJ_SET, NULL},
    {3, "gcePersistentDisk", MU_PBJ_SET, NULL},
    {4, "awsElasticBlockStore", MU_PBJ_SET, NULL},
    {6, "secret", MU_PBJ_SET, NULL},
    {7, "nfs", MU_PBJ_SET, NULL},
    {8, "iscsi", MU_PBJ_SET, NULL},
    {10, "persistentVolumeClaim", MU_PBJ_SET, NULL},
    {11, "rbd", MU_PBJ_SET, NULL},
    {13, "cinder", MU_PBJ_SET, NULL},
    {16, "downwardAPI", MU_PBJ_SET, NULL},
    {19, "configMap", MU_PBJ_SET, NULL},
    {22, "azureDisk", MU_PBJ_SET, NULL},
    {26, "projected", MU_PBJ_SET, NULL},
    {28, "csi", MU_PBJ_SET, NULL},
    {29, "ephemeral", MU_PBJ_SET, NULL},
    {30, "image", MU_PBJ_SET, NULL});
MSG(volume_m, "Volume",
    {1, "name", MU_PBJ_STR, NULL},
    {2, "volumeSource", MU_PBJ_INLINE, &volsrc_m});
MSG(selreq_m, "NodeSelectorRequirement",
    {1, "key", MU_PBJ_STR, NULL},
    {2, "operator", MU_PBJ_STR, NULL},
    {3, "values", MU_PBJ_STRS, NULL});
MSG(term_m, "NodeSelectorTerm",
    {1, "matchExpressions", MU_PBJ_MSGS, &selreq_m},
    {2, "matchFields", MU_PBJ_MSGS, &selreq_m});
MSG(nodesel_m, "NodeSelector",
    {1, "nodeSelectorTerms", MU_PBJ_MSGS, &term_m});
MSG(preferred_m, "PreferredSchedulingTerm",
    {1, "weight", MU_PBJ_I32, NULL},
    {2, "preference", MU_PBJ_MSG, &term_m});
MSG(nodeaff_m, "NodeAffinity",
    {1, "requiredDuringSchedulingIgnoredDuringExecution", MU_PBJ_MSG,
     &nodesel_m},
    {2, "preferredDuringSchedulingIgnoredDuringExecution", MU_PBJ_MSGS,
     &preferred_m});
MSG(affinity_m, "Affinity",
    {1, "nodeAffinity", MU_PBJ_MSG, &nodeaff_m},
    {2, "podAffinity", MU_PBJ_SET, NULL},
    {3, "podAntiAffinity", MU_PBJ_SET, NULL});
MSG(toleration_m, "Toleration",
    {1, "key", MU_PBJ_STR, NULL},
    {2, "operator", MU_PBJ_STR, NULL},
    {3, "value", MU_PBJ_STR, NULL},
    {4, "effect", MU_PBJ_STR, NULL},
    {5, "tolerationSeconds", MU_PBJ_I64, NULL});
MSG(gate_m, "PodSchedulingGate",
    {1, "name", MU_PBJ_STR, NULL});
MSG(claim_m, "PodResourceClaim",
    {1, "name", MU_PBJ_STR, NULL},
    {3, "resourceClaimName", MU_PBJ_STR, NULL},
    {4, "resourceClaimTemplateName", MU_PBJ_STR, NULL});
MSG(spec_m, "PodSpec",
    {1, "volumes", MU_PBJ_MSGS, &volume_m},
    {2, "containers", MU_PBJ_MSGS, &container_m},
    {7, "nodeSelector", MU_PBJ_MAP_STR, NULL},
    {10, "nodeName", MU_PBJ_STR, NULL},
    {18, "affinity", MU_PBJ_MSG, &affinity_m},
    {19, "schedulerName", MU_PBJ_STR, NULL},
    {20, "initContainers", MU_PBJ_MSGS, &container_m},
    {22, "tolerations", MU_PBJ_MSGS, &toleration_m},
    {24, "priorityClassName", MU_PBJ_STR, NULL},
    {25, "priority", MU_PBJ_I32, NULL},
    {31, "preemptionPolicy", MU_PBJ_STR, NULL},
    {32, "overhead", MU_PBJ_MAP_QTY, NULL},
    {33, "topologySpreadConstraints", MU_PBJ_SETS, NULL},
    {38, "schedulingGates", MU_PBJ_MSGS, &gate_m},
    {39, "resourceClaims", MU_PBJ_MSGS, &claim_m});

/* ---- status ---- */
MSG(terminated_m, "ContainerStateTerminated",
    {1, "exitCode", MU_PBJ_I32, NULL});
MSG(state_m, "ContainerState",
    {1, "waiting", MU_PBJ_SET, NULL},
    {2, "running", MU_PBJ_SET, NULL},
    {3, "terminated", MU_PBJ_MSG, &terminated_m});
MSG(cstatus_m, "ContainerStatus",
    {1, "name", MU_PBJ_STR, NULL},
    {2, "state", MU_PBJ_MSG, &state_m},
    {5, "restartCount", MU_PBJ_I32, NULL});
MSG(claimstatus_m, "PodResourceClaimStatus",
    {1, "name", MU_PBJ_STR, NULL},
    {2, "resourceClaimName", MU_PBJ_STR, NULL});
MSG(extclaim_m, "PodExtendedResourceClaimStatus",
    {2, "resourceClaimName", MU_PBJ_STR, NULL});
MSG(status_m, "PodStatus",
    {1, "phase", MU_PBJ_STR, NULL},
    {7, "startTime", MU_PBJ_TIME, NULL},
    {8, "containerStatuses", MU_PBJ_MSGS, &cstatus_m},
    {15, "resourceClaimStatuses", MU_PBJ_MSGS, &claimstatus_m},
    {18, "extendedResourceClaimStatus", MU_PBJ_MSG, &extclaim_m});

MSG(pod_m, "Pod",
    {1, "metadata", MU_PBJ_MSG, &meta_m},
    {2, "spec", MU_PBJ_MSG, &spec_m},
    {3, "status", MU_PBJ_MSG, &status_m});

json_t *mu_podpb_json(const uint8_t *buf, size_t len, struct mu_err *err)
{
    json_t *pod = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "Pod");

    if (mu_pbj_read(&pod_m, buf, len, pod, err) < 0) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

json_t *mu_podpb_object(const char *kind, const uint8_t *raw, size_t len,
                        struct mu_err *err)
{
    if (strcmp(kind, "Pod")) {
        mu_err_set(err, -EPROTO, "a %s among pods", kind);
        return NULL;
    }
    return mu_podpb_json(raw, len, err);
}

const struct mu_pbj_msg *mu_podpb_schema(void)
{
    return &pod_m;
}
