/*
 * podpb.h - a Pod read from protobuf (the Kubernetes API's
 * application/vnd.kubernetes.protobuf, k8s.io/api/core/v1 generated.proto)
 * into the JSON that mu_pod_decode and the vcjob controller read, so a pod
 * watched as protobuf is decoded by the same code as one read as JSON.
 *
 * Only what muster reads is made; everything else in the message is
 * skipped (its bytes are still checked as wire format):
 *   metadata  name, generateName, namespace, uid, resourceVersion,
 *             creationTimestamp, deletionTimestamp, labels, annotations,
 *             ownerReferences (apiVersion, kind, name, uid, controller)
 *   spec      nodeName, schedulerName, priorityClassName, priority,
 *             preemptionPolicy, nodeSelector, affinity (nodeAffinity whole;
 *             podAffinity and podAntiAffinity as {} when set), tolerations,
 *             schedulingGates, containers and initContainers (name,
 *             resources.requests and .limits, ports' hostPort,
 *             restartPolicy), overhead, volumes (name, and the key of their
 *             source as {}), resourceClaims, topologySpreadConstraints (one
 *             {} each)
 *   status    phase, startTime, containerStatuses (name, restartCount,
 *             state.terminated.exitCode), resourceClaimStatuses,
 *             extendedResourceClaimStatus.resourceClaimName
 * As JSON does (omitempty), an empty string, map or list is left out, and
 * a time is RFC 3339 UTC ("2006-01-02T15:04:05Z"; the zero time is left
 * out). A scalar the message carries is written even when 0 (priority,
 * restartCount, exitCode: the API writes these when set).
 *
 * Errors: NULL with err set (-EPROTO) for bytes that are not a Pod message
 * (malformed wire format, a field of the wrong wire type), naming the
 * field. Strings not UTF-8 and times out of range are read as pbjson.h
 * says, not refused.
 */
#ifndef MU_API_PODPB_H
#define MU_API_PODPB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"

/* The Pod message in buf[0..len) as JSON (owned; kind "Pod", apiVersion
 * "v1"). */
json_t *mu_podpb_json(const uint8_t *buf, size_t len, struct mu_err *err);

/* The same for an object of kind read from a stream of pods (a watch's
 * kube/watchpb.h mu_watch_pb_fn): a Pod as above; any other kind NULL,
 * -EPROTO. */
json_t *mu_podpb_object(const char *kind, const uint8_t *raw, size_t len,
                        struct mu_err *err);

struct mu_pbj_msg;
/* The schema above (api/pbjson.h), for tests that hold a Pod's JSON
 * against its protobuf. */
const struct mu_pbj_msg *mu_podpb_schema(void);

#endif
