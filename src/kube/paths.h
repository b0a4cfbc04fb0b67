/*
 * paths.h - every Kubernetes API path muster reads or writes, built in one
 * place.
 *
 * A resource is a row of one table (group/version, plural, namespaced or
 * not); mu_api_path() turns a row, a namespace, a name and a subresource
 * into the path. Every segment that comes from an object (namespace, name)
 * is percent-escaped (RFC 3986: anything but ALPHA DIGIT - . _ ~), so a
 * name can never add, remove or climb a segment ("../" stays inside its
 * segment as "..%2F"). Names that the apiserver would accept never need
 * escaping; the rule is for what arrives from a request or a bad object.
 *
 * Pure: no I/O, thread-safe. Strings returned are malloc'd, the caller
 * frees them.
 */
#ifndef MU_KUBE_PATHS_H
#define MU_KUBE_PATHS_H

#include <stdbool.h>

enum mu_api_kind {
    MU_API_POD,
    MU_API_NODE,
    MU_API_EVENT,
    MU_API_SERVICE,
    MU_API_CONFIGMAP,
    MU_API_SECRET,
    MU_API_NETWORKPOLICY,
    MU_API_REPLICASET,
    MU_API_STATEFULSET,
    MU_API_DEPLOYMENT,
    MU_API_PRIORITYCLASS,
    MU_API_LEASE,
    MU_API_PODGROUP,
    MU_API_QUEUE,
    MU_API_VCJOB,
    MU_API_COMMAND,
    MU_API_DEVICECLASS,
    MU_API_RESOURCESLICE,
    MU_API_RESOURCECLAIM,
    MU_API_RESOURCECLAIMTEMPLATE,
    MU_API_HYPERNODE,
    MU_API__COUNT
};

struct mu_api_res {
    const char *prefix;  /* "/api/v1" or "/apis/<group>/<version>" */
    const char *plural;  /* "pods" */
    const char *kind;    /* "Pod" */
    bool namespaced;
};

/* The row of kind (k < MU_API__COUNT). */
const struct mu_api_res *mu_api_res(enum mu_api_kind k);

/* The kind whose row has this apiVersion prefix's group ("apps/v1", "v1")
 * and kind ("ReplicaSet"), or -1. */
int mu_api_kind_find(const char *api_version, const char *kind);

/*
 * The path of kind k:
 *   ns NULL (or a cluster-scoped kind): the cluster-wide collection or a
 *     cluster-scoped object ("/api/v1/pods", "/apis/.../queues/default");
 *   name NULL: the collection ("/api/v1/namespaces/NS/pods");
 *   sub (may be NULL): a subresource ("status", "binding").
 * ns and name are escaped (see above). Never NULL.
 */
char *mu_api_path(enum mu_api_kind k, const char *ns, const char *name,
                  const char *sub);

/*
 * The body of a DELETE that removes only the object with this uid
 * (DeleteOptions with preconditions.uid): one made again under the same
 * name is left alone, and the apiserver answers 409 Conflict (-EBUSY).
 * propagation (may be NULL) is sent as propagationPolicy ("Background").
 * A new reference; NULL when uid is NULL (then no precondition is sent:
 * only for objects muster has not seen yet).
 */
struct json_t;
struct json_t *mu_api_delete_options(const char *uid, const char *propagation);

/* s percent-escaped as one path segment (see above); malloc'd. */
char *mu_api_escape(const char *s);

#endif
