/*
 * verbs.h - every API call muster makes: the table its RBAC is checked
 * against.
 *
 * One row per resource (a kind of paths.h, or one of its subresources)
 * and scope, with the RBAC verbs muster's code sends to it and the call
 * sites. It is the single list of what muster may ask the apiserver:
 *
 *   - at run time: a client whose config has api_table set (muster serve
 *     sets it, and so every client it makes: watches, writer, bind pool,
 *     lease) refuses, before sending, a request whose (resource, verb) no
 *     row lists: -EPERM "not in muster's API table". A call site added
 *     without its row fails in the unit tests of its controller and in
 *     the e2e (which run muster as its service account, under the
 *     manifests' roles), never only in a cluster;
 *   - in tests: tests/unit/test_rbac.c renders manifests/ with kubectl
 *     kustomize and compares muster's ClusterRole and Role with the rows,
 *     both ways: every row is granted, nothing else is.
 *
 * The verb of a request is the apiserver's (RequestInfo): GET of an object
 * "get", of a collection "list", of a collection with watch=1 "watch"; POST
 * "create"; PUT "update"; PATCH "patch"; DELETE of an object "delete", of
 * a collection "deletecollection".
 *
 * Pure: no I/O, thread-safe.
 */
#ifndef MU_KUBE_VERBS_H
#define MU_KUBE_VERBS_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/paths.h"

/* RBAC verbs, as bits. */
enum {
    MU_VERB_GET = 1u << 0,
    MU_VERB_LIST = 1u << 1,
    MU_VERB_WATCH = 1u << 2,
    MU_VERB_CREATE = 1u << 3,
    MU_VERB_UPDATE = 1u << 4,
    MU_VERB_PATCH = 1u << 5,
    MU_VERB_DELETE = 1u << 6,
    MU_VERB_DELETECOLLECTION = 1u << 7,
    MU_VERB__COUNT = 8
};

/* Where a row is granted. */
enum mu_api_scope {
    MU_SCOPE_CLUSTER, /* every namespace: muster's ClusterRole */
    MU_SCOPE_OWN_NS,  /* muster-system only: a Role there */
};

struct mu_api_grant {
    enum mu_api_kind kind;
    const char *sub;         /* NULL, or a subresource: "status" */
    unsigned verbs;          /* MU_VERB_* */
    enum mu_api_scope scope;
    /* Only the object of this name (RBAC resourceNames): the Lease, named
     * by --leader-elect-resource-name, whose default this is. */
    const char *name;
    /* Not a request: a permission the apiserver checks on muster's behalf
     * (OwnerReferencesPermissionEnforcement asks for update of
     * <owner>/finalizers when a create sets blockOwnerDeletion). Never
     * lets a request through. */
    bool implied;
    const char *why;         /* the call sites */
};

/* The table: *n rows. */
const struct mu_api_grant *mu_api_grants(size_t *n);

/* "get", "list", ... for one MU_VERB_* bit; NULL for anything else. */
const char *mu_api_verb_name(unsigned bit);

/* The RBAC group of kind k ("" for the core group, "apps", ...) in buf of
 * n bytes; returns buf. */
char *mu_api_group(enum mu_api_kind k, char *buf, size_t n);

/* A request as RBAC sees it. */
struct mu_api_call {
    enum mu_api_kind kind;
    char sub[32];  /* "" or the subresource */
    unsigned verb; /* one MU_VERB_* bit */
};

/*
 * Reads a request back: method ("GET", ...), path (as mu_api_path() makes
 * it, no query) and whether the query asks for a watch. Returns 0 and
 * *out, or -ENOENT for a path of no kind of paths.h (or of more segments
 * than an object's subresource), -EINVAL for a method RBAC has no verb for.
 */
int mu_api_call_parse(const char *method, const char *path, bool watch,
                      struct mu_api_call *out);

/* Whether a row that is not implied lists the call's resource and verb. */
bool mu_api_call_allowed(const struct mu_api_call *c);

#endif
