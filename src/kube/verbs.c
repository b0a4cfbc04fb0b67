#include "kube/verbs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define GET MU_VERB_GET
#define LIST MU_VERB_LIST
#define WATCH MU_VERB_WATCH
#define CREATE MU_VERB_CREATE
#define UPDATE MU_VERB_UPDATE
#define PATCH MU_VERB_PATCH
#define DELETE MU_VERB_DELETE

/* Keep manifests/rbac-muster.yaml in step (tests/unit/test_rbac.c). */
static const struct mu_api_grant grants[] = {
    /* the caches (serve/serve.c, sources[]) */
    {MU_API_NODE, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the nodes' watch"},
    {MU_API_PRIORITYCLASS, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the priority classes' watch"},
    {MU_API_DEVICECLASS, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the DRA device classes' watch"},
    {MU_API_RESOURCESLICE, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the DRA resource slices' watch"},
    {MU_API_RESOURCECLAIM, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the DRA resource claims' watch"},
    {MU_API_RESOURCECLAIMTEMPLATE, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL,
     false, "serve.c: the DRA claim templates' watch"},
    {MU_API_HYPERNODE, NULL, LIST | WATCH, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the HyperNodes' watch (networkTopology)"},
    {MU_API_HYPERNODE, "status", PATCH, MU_SCOPE_CLUSTER, NULL, false,
     "hnstatus.c: status.nodeCount"},
    {MU_API_POD, NULL, GET | LIST | WATCH | CREATE | PATCH | DELETE,
     MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the pods' watch, unbind_fn (delete); enforce.c: releases "
     "(strategic merge or get + json patch), announce (merge), evictions "
     "(delete); remake.c: a pod pinned where it cannot run (get, delete, "
     "create); pgctl.c: the group annotation (merge); jobctl_act.c: a "
     "Job's pods (create, delete)"},
    {MU_API_POD, "binding", CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "client.c mu_kube_bind, from serve.c bind_fn (/bind)"},
    {MU_API_POD, "status", PATCH, MU_SCOPE_CLUSTER, NULL, false,
     "enforce.c release_pod: waking another operator's pod (merge)"},
    {MU_API_EVENT, NULL, CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "writer.c mu_writer_event, from ctl.c and enforce.c"},
    /* owners of bare pods, read when their PodGroup is made */
    {MU_API_REPLICASET, NULL, GET, MU_SCOPE_CLUSTER, NULL, false,
     "pgctl.c make_run: the owner's annotations"},
    {MU_API_STATEFULSET, NULL, GET, MU_SCOPE_CLUSTER, NULL, false,
     "pgctl.c make_run: the owner's annotations"},
    {MU_API_DEPLOYMENT, NULL, GET, MU_SCOPE_CLUSTER, NULL, false,
     "pgctl.c make_run: the owner's annotations"},
    /* Volcano's objects */
    {MU_API_PODGROUP, NULL, LIST | WATCH | CREATE | PATCH | DELETE,
     MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the watch; pgctl.c and jobctl_act.c: create; jobctl_act.c: "
     "the spec of a scaled Job (merge), delete"},
    {MU_API_PODGROUP, "status", PATCH, MU_SCOPE_CLUSTER, NULL, false,
     "status.c: phase and conditions (merge)"},
    {MU_API_QUEUE, NULL, LIST | WATCH | CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the watch; queuectl.c: the default queue when missing"},
    {MU_API_QUEUE, "status", PATCH, MU_SCOPE_CLUSTER, NULL, false,
     "queuectl.c write_queue (merge)"},
    {MU_API_VCJOB, NULL, LIST | WATCH | DELETE, MU_SCOPE_CLUSTER, NULL, false,
     "serve.c: the watch; jobctl_status.c: ttlSecondsAfterFinished"},
    {MU_API_VCJOB, "status", PATCH, MU_SCOPE_CLUSTER, NULL, false,
     "jobctl_status.c mu_jc_write_status (merge)"},
    {MU_API_VCJOB, "finalizers", UPDATE, MU_SCOPE_CLUSTER, NULL, true,
     "the pods, PodGroup and plugin objects of a Job carry an "
     "ownerReference to it with blockOwnerDeletion (vcjob.c)"},
    {MU_API_COMMAND, NULL, LIST | WATCH | DELETE, MU_SCOPE_CLUSTER, NULL,
     false, "serve.c: the watch; queuectl.c: each carried out, deleted"},
    /* the job plugins' objects, made once per Job (jobctl_act.c
     * make_plugin_objects); the garbage collector deletes them with it */
    {MU_API_SERVICE, NULL, CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "svc plugin: the headless Service"},
    {MU_API_CONFIGMAP, NULL, CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "svc plugin: <job>-svc"},
    {MU_API_NETWORKPOLICY, NULL, CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "svc plugin: the job's NetworkPolicy"},
    {MU_API_SECRET, NULL, CREATE, MU_SCOPE_CLUSTER, NULL, false,
     "ssh plugin: <job>-ssh"},
    /* leader election (lease.c); create cannot name its object */
    {MU_API_LEASE, NULL, CREATE, MU_SCOPE_OWN_NS, NULL, false,
     "lease.c try_once: the first leader"},
    {MU_API_LEASE, NULL, GET | UPDATE, MU_SCOPE_OWN_NS, "muster", false,
     "lease.c try_once (renew, take over), give_up"},
};

static const char *const verb_names[MU_VERB__COUNT] = {
    "get", "list", "watch", "create", "update", "patch", "delete",
    "deletecollection",
};

const struct mu_api_grant *mu_api_grants(size_t *n)
{
    *n = sizeof(grants) / sizeof(grants[0]);
    return grants;
}

const char *mu_api_verb_name(unsigned bit)
{
    for (int i = 0; i < MU_VERB__COUNT; i++)
        if (bit == 1u << i)
            return verb_names[i];
    return NULL;
}

char *mu_api_group(enum mu_api_kind k, char *buf, size_t n)
{
    const char *p = mu_api_res(k)->prefix;
    const char *g = p + strlen("/apis/");

    if (!strcmp(p, "/api/v1"))
        snprintf(buf, n, "%s", "");
    else /* "/apis/<group>/<version>" */
        snprintf(buf, n, "%.*s", (int)strcspn(g, "/"), g);
    return buf;
}

/* The length of the segment at p (up to '/' or the end). */
static size_t seg(const char *p)
{
    return strcspn(p, "/");
}

/* path below kind k's prefix: [namespaces/NS/]plural[/name[/sub]]. */
static bool parse_rest(const struct mu_api_res *r, const char *p,
                       const char **name, const char **sub)
{
    size_t n;

    if (r->namespaced && !strncmp(p, "namespaces/", 11)) {
        p += 11;
        n = seg(p);
        if (!n || p[n] != '/')
            return false; /* a Namespace, not an object in one */
        p += n + 1;
    }
    n = strlen(r->plural);
    if (strncmp(p, r->plural, n) || (p[n] && p[n] != '/'))
        return false;
    p += n;
    *name = *sub = NULL;
    if (!*p)
        return true;
    p++;
    if (!(n = seg(p)))
        return false;
    *name = p;
    p += n;
    if (!*p)
        return true;
    p++;
    if (!(n = seg(p)) || p[n])
        return false;
    *sub = p;
    return true;
}

static unsigned verb_of(const char *method, bool object, bool watch)
{
    if (!strcmp(method, "GET"))
        return watch ? MU_VERB_WATCH : object ? MU_VERB_GET : MU_VERB_LIST;
    if (!strcmp(method, "POST"))
        return MU_VERB_CREATE;
    if (!strcmp(method, "PUT"))
        return MU_VERB_UPDATE;
    if (!strcmp(method, "PATCH"))
        return MU_VERB_PATCH;
    if (!strcmp(method, "DELETE"))
        return object ? MU_VERB_DELETE : MU_VERB_DELETECOLLECTION;
    return 0;
}

int mu_api_call_parse(const char *method, const char *path, bool watch,
                      struct mu_api_call *out)
{
    for (int k = 0; k < MU_API__COUNT; k++) {
        const struct mu_api_res *r = mu_api_res((enum mu_api_kind)k);
        size_t n = strlen(r->prefix);
        const char *name, *sub;
        unsigned verb;

        if (strncmp(path, r->prefix, n) || path[n] != '/' ||
            !parse_rest(r, path + n + 1, &name, &sub))
            continue;
        if (!(verb = verb_of(method, name != NULL, watch)))
            return -EINVAL;
        if (sub && strlen(sub) >= sizeof(out->sub))
            return -ENOENT;
        out->kind = (enum mu_api_kind)k;
        snprintf(out->sub, sizeof(out->sub), "%s", sub ? sub : "");
        out->verb = verb;
        return 0;
    }
    return -ENOENT;
}

bool mu_api_call_allowed(const struct mu_api_call *c)
{
    for (size_t i = 0; i < sizeof(grants) / sizeof(grants[0]); i++) {
        const struct mu_api_grant *g = &grants[i];

        if (!g->implied && g->kind == c->kind &&
            !strcmp(g->sub ? g->sub : "", c->sub) && (g->verbs & c->verb))
            return true;
    }
    return false;
}
