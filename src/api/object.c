/*
 * object.c - the decoders of object.h: metadata, resource lists, Nodes,
 * Pods, PodGroups, Queues and PriorityClasses read as the API server reads
 * them. Field access with paths is json.h's; durations and times are
 * times.h's; matching labels, taints and selectors is match.h's.
 */
#include "api/object.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"
#include "api/strconv.h"
#include "api/yaml.h"

static const char *const pod_phases[] = {
    "Pending", "Running", "Succeeded", "Failed", "Unknown",
};
static const char *const pg_phases[] = {
    "", "Pending", "Inqueue", "Running", "Unknown", "Completed",
};
static const char *const queue_states[] = {
    "Open", "Closed", "Closing", "Unknown",
};
static const char *const restart_always[] = {"Always"};
static const char *const preempt_policies[] = {
    "PreemptLowerPriority", "Never",
};

const char *mu_pod_phase_name(enum mu_pod_phase p)
{
    return (size_t)p < MU_ARRAY_LEN(pod_phases) ? pod_phases[p] : "Unknown";
}

enum mu_pod_phase mu_pod_phase_parse(const char *s)
{
    if (!s)
        return MU_POD_PENDING;
    for (size_t i = 0; i < MU_ARRAY_LEN(pod_phases); i++)
        if (!strcmp(s, pod_phases[i]))
            return (enum mu_pod_phase)i;
    return MU_POD_UNKNOWN;
}

const char *mu_pg_phase_name(enum mu_pg_phase p)
{
    return (size_t)p < MU_ARRAY_LEN(pg_phases) ? pg_phases[p] : "Unknown";
}

const char *mu_queue_state_name(enum mu_queue_state s)
{
    return (size_t)s < MU_ARRAY_LEN(queue_states) ? queue_states[s]
                                                   : "Unknown";
}

/* mu_json_member_int32 for fields whose presence does not matter: 0 or an
 * error. */
static int opt_int32(const json_t *o, const char *base, const char *key,
                     int32_t *out, struct mu_err *err)
{
    int rc = mu_json_member_int32(o, base, key, out, err);

    return rc < 0 ? rc : 0;
}

/* ---- metadata ---- */

void mu_meta_release(struct mu_meta *m)
{
    free(m->ns);
    free(m->name);
    free(m->uid);
    mu_kvs_release(&m->labels);
    mu_kvs_release(&m->annotations);
    free(m->owner_kind);
    free(m->owner_name);
    free(m->owner_uid);
    memset(m, 0, sizeof(*m));
}

static int owner_decode(const json_t *j, struct mu_meta *out,
                        struct mu_err *err)
{
    const json_t *refs, *ref;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    bool found = false;
    int rc = mu_json_member(j, "metadata", "ownerReferences", JSON_ARRAY, &refs,
                            err);

    json_array_foreach(refs, i, ref) {
        bool ctl = false;

        mu_json_path_at(p, "metadata", "ownerReferences", i);
        if (!json_is_object(ref))
            return mu_json_want(err, p, "an object", ref);
        rc = mu_json_member_bool(ref, p, "controller", &ctl, err);
        if (rc)
            return rc;
        if (!ctl || found)
            continue;
        found = true;
        rc = mu_json_member_dup(ref, p, "kind", &out->owner_kind, err);
        if (!rc)
            rc = mu_json_member_dup(ref, p, "name", &out->owner_name, err);
        if (!rc)
            rc = mu_json_member_dup(ref, p, "uid", &out->owner_uid, err);
        if (rc)
            return rc;
    }
    return rc;
}

int mu_meta_decode(const json_t *j, bool namespaced, struct mu_meta *out,
                   struct mu_err *err)
{
    const char *name, *ns, *ts;
    int rc;

    memset(out, 0, sizeof(*out));
    if (j && !json_is_null(j) && !json_is_object(j))
        return mu_json_want(err, "metadata", "an object", j);
    rc = mu_json_member_str(j, "metadata", "name", &name, err);
    if (rc)
        goto fail;
    if (!name || !*name) {
        rc = mu_err_set(err, -EINVAL, "metadata.name: required");
        goto fail;
    }
    out->name = mu_xstrdup(name);
    rc = mu_json_member_str(j, "metadata", "namespace", &ns, err);
    if (rc)
        goto fail;
    if (namespaced)
        out->ns = mu_xstrdup(ns && *ns ? ns : "default");
    rc = mu_json_member_dup(j, "metadata", "uid", &out->uid, err);
    if (rc)
        goto fail;
    rc = mu_json_member_str(j, "metadata", "creationTimestamp", &ts, err);
    if (rc)
        goto fail;
    if (ts && !mu_rfc3339_parse(ts, &out->created)) {
        rc = mu_err_set(err, -EINVAL,
                        "metadata.creationTimestamp: \"%s\" is not an "
                        "RFC 3339 time (2006-01-02T15:04:05Z)",
                        ts);
        goto fail;
    }
    rc = mu_json_member_str(j, "metadata", "deletionTimestamp", &ts, err);
    if (rc)
        goto fail;
    out->deleting = ts != NULL;
    rc = mu_kvs_decode(json_object_get(j, "labels"), "metadata.labels",
                       &out->labels, err);
    if (rc)
        goto fail;
    rc = mu_kvs_decode(json_object_get(j, "annotations"),
                       "metadata.annotations", &out->annotations, err);
    if (rc)
        goto fail;
    rc = owner_decode(j, out, err);
    if (rc)
        goto fail;
    return 0;
fail:
    mu_meta_release(out);
    return rc;
}

/* ---- resource lists ---- */

int mu_reslist_decode(const json_t *j, const char *path, struct mu_resnames *rn,
                      struct mu_res *out, struct mu_err *err)
{
    struct mu_res r;
    const char *key;
    json_t *v;

    memset(out, 0, sizeof(*out));
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_object(j))
        return mu_json_want(err, path, "an object", j);
    mu_res_zero(&r);
    json_object_foreach((json_t *)j, key, v) {
        const char *name = key, *text = NULL;
        char buf[64], p[MU_JSON_PATH_LEN];
        int64_t q;
        int d, rc;

        if (mu_starts_with(key, "limits.") || mu_starts_with(key, "count/"))
            continue;
        if (mu_starts_with(key, "requests."))
            name = key + strlen("requests.");
        mu_json_path(p, path, key);
        if (json_is_string(v)) {
            text = json_string_value(v);
        } else if (json_is_integer(v)) {
            snprintf(buf, sizeof(buf), "%lld",
                     (long long)json_integer_value(v));
            text = buf;
        } else if (json_is_real(v)) {
            text = mu_json_real_text(json_real_value(v), buf, sizeof(buf));
        } else {
            return mu_json_want(err, p, "a quantity", v);
        }
        rc = mu_quantity_parse(text, mu_resource_unit(name), &q, err);
        if (rc) {
            mu_err_prefix(err, "%s", p);
            return rc;
        }
        if (q < 0)
            return mu_err_set(err, -EINVAL,
                              "%s: must be greater than or equal to 0", p);
        d = mu_resnames_index(rn, name, true);
        if (d < 0)
            return mu_err_set(err, d,
                              "%s: too many resource names (at most %d)", p,
                              MU_RES_MAX);
        mu_res_put(&r, d, q);
    }
    *out = r;
    return 0;
}

static int reslist_at(const json_t *o, const char *base, const char *key,
                      struct mu_resnames *rn, struct mu_res *out,
                      struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];

    return mu_reslist_decode(json_object_get(o, key),
                             mu_json_path(p, base, key), rn, out, err);
}

/* ---- nodes ---- */

void mu_node_release(struct mu_node *n)
{
    mu_meta_release(&n->meta);
    mu_taints_release(n->taints, n->ntaints);
    memset(n, 0, sizeof(*n));
}

/* The decoders share this head: j must be an object; metadata, spec and
 * status are looked up. */
int mu_object_head(const json_t *j, bool namespaced, struct mu_meta *meta,
                   const json_t **spec, const json_t **status,
                   struct mu_err *err)
{
    const json_t *m;
    int rc;

    if (!json_is_object(j))
        return mu_json_want(err, "", "an object", j);
    rc = mu_json_member(j, "", "metadata", JSON_OBJECT, &m, err);
    if (!rc)
        rc = mu_meta_decode(m, namespaced, meta, err);
    if (!rc)
        rc = mu_json_member(j, "", "spec", JSON_OBJECT, spec, err);
    if (!rc)
        rc = mu_json_member(j, "", "status", JSON_OBJECT, status, err);
    return rc;
}

int mu_node_decode(const json_t *j, struct mu_resnames *rn, struct mu_node *out,
                   struct mu_err *err)
{
    const json_t *spec, *status, *alloc;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, false, &out->meta, &spec, &status, err);
    if (rc)
        goto fail;
    rc = mu_json_member(status, "status", "allocatable", JSON_OBJECT, &alloc,
                        err);
    if (rc)
        goto fail;
    rc = reslist_at(status, "status", alloc ? "allocatable" : "capacity", rn,
                    &out->allocatable, err);
    if (!rc)
        rc = mu_taints_decode(spec, &out->ntaints, &out->taints, err);
    if (!rc)
        rc = mu_json_member_bool(spec, "spec", "unschedulable",
                                 &out->unschedulable, err);
    if (rc)
        goto fail;
    return 0;
fail:
    mu_node_release(out);
    return rc;
}

/* ---- pods ---- */

void mu_pod_release(struct mu_pod *p)
{
    mu_meta_release(&p->meta);
    free(p->scheduler_name);
    free(p->node_name);
    free(p->priority_class);
    mu_kvs_release(&p->node_selector);
    mu_affinity_release(&p->affinity);
    mu_tolerations_release(p->tol, p->ntol);
    free(p->group);
    free(p->task_spec);
    for (size_t i = 0; i < p->nclaims; i++) {
        free(p->claims[i].name);
        free(p->claims[i].claim);
        free(p->claims[i].tmpl);
    }
    free(p->claims);
    free(p->ext_claim);
    memset(p, 0, sizeof(*p));
}

/* A container's request after defaulting: limits fill missing requests. */
static int container_req(const json_t *c, const char *base,
                         struct mu_resnames *rn, struct mu_res *req,
                         struct mu_err *err)
{
    const json_t *res;
    struct mu_res lim;
    char p[MU_JSON_PATH_LEN];
    int rc;

    if (!json_is_object(c))
        return mu_json_want(err, base, "an object", c);
    rc = mu_json_member(c, base, "resources", JSON_OBJECT, &res, err);
    mu_json_path(p, base, "resources");
    if (!rc)
        rc = reslist_at(res, p, "requests", rn, req, err);
    if (!rc)
        rc = reslist_at(res, p, "limits", rn, &lim, err);
    if (rc)
        return rc;
    for (int d = 0; d < MU_RES_MAX; d++)
        if (mu_res_has(&lim, d) && !mu_res_has(req, d))
            mu_res_put(req, d, lim.v[d]);
    return 0;
}

/* kube-scheduler's resource.PodRequests, sidecar-aware. */
static int pod_request(const json_t *spec, struct mu_resnames *rn,
                       struct mu_res *out, struct mu_err *err)
{
    struct mu_res sum, sidecars, init, c, overhead;
    const json_t *arr, *el;
    char p[MU_JSON_PATH_LEN];
    size_t i;
    int rc;

    mu_res_zero(&sum);
    mu_res_zero(&sidecars);
    mu_res_zero(&init);
    rc = mu_json_member(spec, "spec", "containers", JSON_ARRAY, &arr, err);
    if (rc)
        return rc;
    json_array_foreach(arr, i, el) {
        rc = container_req(el, mu_json_path_at(p, "spec", "containers", i), rn,
                           &c, err);
        if (rc)
            return rc;
        mu_res_add(&sum, &c);
    }
    rc = mu_json_member(spec, "spec", "initContainers", JSON_ARRAY, &arr, err);
    if (rc)
        return rc;
    json_array_foreach(arr, i, el) {
        int always = -1;

        rc = container_req(el, mu_json_path_at(p, "spec", "initContainers", i),
                           rn, &c, err);
        if (!rc)
            rc = mu_json_member_enum(el, p, "restartPolicy", restart_always, 1,
                                     &always, err);
        if (rc)
            return rc;
        if (always == 0) {
            mu_res_add(&sum, &c);
            mu_res_add(&sidecars, &c);
            mu_res_max(&init, &sidecars);
        } else {
            mu_res_add(&c, &sidecars);
            mu_res_max(&init, &c);
        }
    }
    mu_res_max(&sum, &init);
    rc = reslist_at(spec, "spec", "overhead", rn, &overhead, err);
    if (rc)
        return rc;
    mu_res_add(&sum, &overhead);
    mu_res_put(&sum, MU_RES_PODS, 1);
    *out = sum;
    return 0;
}

static bool has_host_port(const json_t *spec, const char *key)
{
    const json_t *c, *port;
    size_t i, k;

    json_array_foreach(json_object_get(spec, key), i, c)
        json_array_foreach(json_object_get(c, "ports"), k, port)
            if (json_integer_value(json_object_get(port, "hostPort")) > 0)
                return true;
    return false;
}

/* Volume sources kube-scheduler binds (claims) or counts and checks per
 * node (VolumeRestrictions, NodeVolumeLimits, VolumeZone). */
static const char *const kube_volumes[] = {
    "persistentVolumeClaim", "ephemeral", "csi", "gcePersistentDisk",
    "awsElasticBlockStore", "azureDisk", "cinder", "rbd", "iscsi",
};

/* What only kube-scheduler checks or prepares (struct mu_pod, kube_only). */
static bool kube_only(const json_t *spec)
{
    const json_t *aff = json_object_get(spec, "affinity"), *vol;
    size_t i;

    json_array_foreach(json_object_get(spec, "volumes"), i, vol)
        for (size_t k = 0; k < MU_ARRAY_LEN(kube_volumes); k++)
            if (json_object_get(vol, kube_volumes[k]))
                return true;
    return json_array_size(json_object_get(spec, "resourceClaims")) ||
           json_object_get(aff, "podAffinity") ||
           json_object_get(aff, "podAntiAffinity") ||
           json_array_size(json_object_get(spec,
                                           "topologySpreadConstraints")) ||
           json_object_size(json_object_get(spec, "overhead")) ||
           has_host_port(spec, "containers") ||
           has_host_port(spec, "initContainers");
}

static int pod_spec(const json_t *spec, struct mu_resnames *rn,
                    struct mu_pod *out, struct mu_err *err)
{
    const json_t *gates;
    const char *s;
    int policy = 0;
    int rc = mu_json_member_str(spec, "spec", "schedulerName", &s, err);

    if (rc)
        return rc;
    out->scheduler_name = mu_xstrdup(s && *s ? s : "default-scheduler");
    rc = mu_json_member_dup(spec, "spec", "nodeName", &out->node_name, err);
    if (!rc)
        rc = mu_json_member_dup(spec, "spec", "priorityClassName",
                                &out->priority_class, err);
    if (!rc) {
        rc = mu_json_member_int32(spec, "spec", "priority", &out->priority,
                                  err);
        out->has_priority = rc == 1;
        rc = MU_MIN(rc, 0);
    }
    if (!rc)
        rc = mu_json_member_enum(spec, "spec", "preemptionPolicy",
                                 preempt_policies,
                                 MU_ARRAY_LEN(preempt_policies), &policy, err);
    out->preempt_never = policy == 1;
    if (!rc)
        rc = mu_kvs_decode(json_object_get(spec, "nodeSelector"),
                           "spec.nodeSelector", &out->node_selector, err);
    if (!rc)
        rc = mu_affinity_decode(spec, &out->affinity, err);
    if (!rc)
        rc = mu_tolerations_decode(spec, &out->ntol, &out->tol, err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "schedulingGates", JSON_ARRAY, &gates,
                            err);
    if (!rc) {
        size_t i;
        json_t *g;

        out->ngates = json_array_size(gates);
        json_array_foreach(gates, i, g) if (!mu_strcmp0(json_string_value(
                   json_object_get(g, "name")), MU_GATE_NAME))
            out->muster_gate = true;
    }
    if (!rc)
        rc = pod_request(spec, rn, &out->req, err);
    out->kube_only = kube_only(spec);
    return rc;
}

static int ann_duration(const struct mu_meta *m, const char *key, int64_t *ms,
                        struct mu_err *err)
{
    const char *s = mu_kvs_get(&m->annotations, key);
    int64_t v;
    int rc;

    if (!s)
        return 0;
    rc = mu_duration_parse(s, &v, err);
    if (rc) {
        mu_err_prefix(err, "metadata.annotations.%s", key);
        return rc;
    }
    if (v < 0)
        return mu_err_set(err, -EINVAL,
                          "metadata.annotations.%s: must not be negative",
                          key);
    *ms = v;
    return 0;
}

static int task_index(const struct mu_meta *m)
{
    const char *s = mu_kvs_get(&m->annotations, MU_ANN_TASK_INDEX);
    long long v;

    if (s && mu_strconv_int(s, INT_MIN, INT_MAX, &v) == 0)
        return (int)v;
    s = strrchr(m->name, '-');
    if (s && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1) &&
        mu_strconv_int(s + 1, 0, INT_MAX, &v) == 0)
        return (int)v;
    return -1;
}

static int pod_annotations(struct mu_pod *out, struct mu_err *err)
{
    const struct mu_meta *m = &out->meta;
    const char *s;
    long long v;
    int rc;

    s = mu_kvs_get(&m->annotations, MU_ANN_TASK_PRIORITY);
    if (s && mu_strconv_int(s, INT32_MIN, INT32_MAX, &v) == 0) {
        out->priority = (int32_t)v;
        out->has_priority = true;
    }
    out->task_index = task_index(m);
    s = mu_kvs_get(&m->annotations, MU_ANN_TASK_SPEC);
    if (!s)
        s = mu_kvs_get(&m->labels, MU_ANN_TASK_SPEC);
    out->task_spec = mu_xstrdup_or_null(s);
    s = mu_kvs_get(&m->annotations, MU_ANN_GROUP);
    if (!s)
        s = mu_kvs_get(&m->annotations, MU_ANN_GROUP_ALIAS);
    out->group = mu_xstrdup_or_null(s);
    out->preemptable = true;
    s = mu_kvs_get(&m->annotations, MU_ANN_PREEMPTABLE);
    if (s && mu_strconv_bool(s, &out->preemptable))
        return mu_err_set(err, -EINVAL,
                          "metadata.annotations.%s: \"%s\" is not a "
                          "boolean (true or false)",
                          MU_ANN_PREEMPTABLE, s);
    out->run_for_ms = -1;
    rc = ann_duration(m, MU_ANN_SUBMIT_AT, &out->submit_at_ms, err);
    if (!rc)
        rc = ann_duration(m, MU_ANN_RUN_FOR, &out->run_for_ms, err);
    return rc;
}

/* The claims a pod asks for in the DRA API (spec.resourceClaims: at most
 * one of a claim name or a template each) and the names of the claims made
 * for its templates (status.resourceClaimStatuses). */
/* status.startTime: when the kubelet took the pod (what reclaim's minimum
 * run time counts from). The kubelet writes it; one that does not read as
 * a time is taken as absent rather than losing the pod from the cache. */
static int pod_start(const json_t *status, struct mu_pod *out,
                     struct mu_err *err)
{
    const char *ts;
    int rc = mu_json_member_str(status, "status", "startTime", &ts, err);

    if (rc || !ts || !mu_rfc3339_parse(ts, &out->started))
        out->started = 0;
    return rc;
}

static int pod_claims(const json_t *spec, const json_t *status,
                      struct mu_pod *out, struct mu_err *err)
{
    char p[MU_JSON_PATH_LEN];
    const json_t *a, *st, *v;
    size_t i;
    int rc = mu_json_member(spec, "spec", "resourceClaims", JSON_ARRAY, &a,
                            err);

    if (!rc)
        rc = mu_json_member(status, "status", "resourceClaimStatuses",
                            JSON_ARRAY, &st, err);
    if (rc)
        return rc;
    out->ext_claim = mu_xstrdup_or_null(mu_json_nonempty(
        json_object_get(status, "extendedResourceClaimStatus"),
        "resourceClaimName"));
    if (!json_array_size(a))
        return 0;
    out->claims = mu_xcalloc(json_array_size(a), sizeof(*out->claims));
    json_array_foreach(a, i, v) {
        struct mu_pod_claim *c = &out->claims[out->nclaims];
        const json_t *s;
        size_t k;

        memset(c, 0, sizeof(*c));
        out->nclaims++;
        mu_json_path_at(p, "spec", "resourceClaims", i);
        rc = mu_json_member_dup(v, p, "name", &c->name, err);
        if (!rc && !c->name)
            rc = mu_err_set(err, -EINVAL, "%s.name: Required value", p);
        if (!rc)
            rc = mu_json_member_dup(v, p, "resourceClaimName", &c->claim, err);
        if (!rc)
            rc = mu_json_member_dup(v, p, "resourceClaimTemplateName",
                                    &c->tmpl, err);
        if (!rc && !c->claim == !c->tmpl)
            rc = mu_err_set(err, -EINVAL, "%s: must specify one of: "
                            "`resourceClaimName`, "
                            "`resourceClaimTemplateName`", p);
        if (rc)
            return rc;
        json_array_foreach(st, k, s) {
            const char *made = mu_json_str(s, "resourceClaimName");

            if (!c->tmpl || mu_strcmp0(mu_json_str(s, "name"), c->name))
                continue;
            free(c->claim);
            c->claim = NULL;
            if (made && *made) {
                c->claim = mu_xstrdup(made);
            } else {
                /* the API's word that no claim is needed for it: the
                 * entry asks for nothing */
                free(c->name);
                free(c->tmpl);
                out->nclaims--;
                break;
            }
        }
    }
    return 0;
}

int mu_pod_decode(const json_t *j, struct mu_resnames *rn, struct mu_pod *out,
                  struct mu_err *err)
{
    const json_t *spec, *status;
    int phase = MU_POD_PENDING;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = pod_spec(spec, rn, out, err);
    if (!rc)
        rc = mu_json_member_enum(status, "status", "phase", pod_phases,
                                 MU_ARRAY_LEN(pod_phases), &phase, err);
    if (!rc)
        rc = pod_annotations(out, err);
    if (!rc)
        rc = pod_claims(spec, status, out, err);
    if (!rc)
        rc = pod_start(status, out, err);
    if (rc)
        goto fail;
    out->phase = (enum mu_pod_phase)phase;
    out->besteffort = true;
    for (int d = 0; d < MU_RES_MAX; d++)
        if (d != MU_RES_PODS && out->req.v[d] > 0)
            out->besteffort = false;
    return 0;
fail:
    mu_pod_release(out);
    return rc;
}

/* ---- PodGroups ---- */

void mu_podgroup_release(struct mu_podgroup *pg)
{
    mu_meta_release(&pg->meta);
    for (size_t i = 0; i < pg->nmin_task; i++)
        free(pg->min_task[i].task);
    free(pg->min_task);
    free(pg->queue);
    free(pg->priority_class);
    free(pg->unsupported);
    free(pg->topo.highest_tier_name);
    memset(pg, 0, sizeof(*pg));
}

static void pg_unsupported(const json_t *spec, struct mu_podgroup *out)
{
    static const char *const fields[] = {"subGroupPolicy"};
    const char *ann = mu_kvs_get(&out->meta.annotations, MU_ANN_UNSUPPORTED);
    struct mu_sb sb;

    mu_sb_init(&sb);
    for (size_t i = 0; i < MU_ARRAY_LEN(fields); i++)
        if (mu_json_given(json_object_get(spec, fields[i])))
            mu_sb_addf(&sb, "%sspec.%s", sb.len ? ", " : "", fields[i]);
    if (ann && *ann)
        mu_sb_addf(&sb, "%s%s", sb.len ? ", " : "", ann);
    if (sb.len)
        out->unsupported = mu_sb_detach(&sb);
    else
        mu_sb_release(&sb);
}

static int min_task_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mu_min_task *)a)->task,
                  ((const struct mu_min_task *)b)->task);
}

static int min_task_decode(const json_t *spec, struct mu_podgroup *out,
                           struct mu_err *err)
{
    const json_t *mt;
    const char *key;
    json_t *v;
    int rc = mu_json_member(spec, "spec", "minTaskMember", JSON_OBJECT, &mt,
                            err);

    if (rc || !mt)
        return rc;
    out->min_task = mu_xcalloc(json_object_size(mt), sizeof(*out->min_task));
    json_object_foreach((json_t *)mt, key, v) {
        struct mu_min_task *t = &out->min_task[out->nmin_task];
        char p[MU_JSON_PATH_LEN];

        mu_json_path(p, "spec.minTaskMember", key);
        if (!json_is_integer(v))
            return mu_json_want(err, p, "an integer", v);
        if (json_integer_value(v) < 0)
            return mu_err_set(err, -EINVAL,
                              "%s: must be greater than or equal to 0", p);
        if (json_integer_value(v) > INT32_MAX)
            return mu_err_set(err, -EINVAL, "%s: must be at most %d", p,
                              INT32_MAX);
        t->task = mu_xstrdup(key);
        t->min = (int32_t)json_integer_value(v);
        out->nmin_task++;
    }
    qsort(out->min_task, out->nmin_task, sizeof(*out->min_task),
          min_task_cmp);
    return 0;
}

/* spec.networkTopology {mode: hard|soft (default hard), highestTierAllowed,
 * highestTierName} */
static int netopo_decode(const json_t *spec, struct mu_netopo *out,
                         struct mu_err *err)
{
    static const char *const modes[] = {"", "hard", "soft"};
    static const char base[] = "spec.networkTopology";
    const json_t *nt;
    int64_t tier = -1;
    int mode = MU_TOPO_HARD;
    int rc = mu_json_member(spec, "spec", "networkTopology", JSON_OBJECT, &nt,
                            err);

    out->highest_tier = -1;
    if (rc || !nt)
        return rc;
    rc = mu_json_member_enum(nt, base, "mode", modes, MU_ARRAY_LEN(modes),
                             &mode, err);
    if (!rc && mode == MU_TOPO_NONE)
        mode = MU_TOPO_HARD;
    if (!rc)
        rc = mu_json_member_int(nt, base, "highestTierAllowed", 0, 1000000,
                                &tier, err);
    if (rc < 0)
        return rc;
    rc = mu_json_member_dup(nt, base, "highestTierName",
                            &out->highest_tier_name, err);
    if (rc)
        return rc;
    out->mode = (enum mu_topo_mode)mode;
    out->highest_tier = (int)tier;
    return 0;
}

int mu_podgroup_decode(const json_t *j, struct mu_resnames *rn,
                       struct mu_podgroup *out, struct mu_err *err)
{
    const json_t *spec, *status, *minres;
    const char *queue;
    int phase = MU_PG_NONE;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, true, &out->meta, &spec, &status, err);
    if (!rc)
        rc = opt_int32(spec, "spec", "minMember", &out->min_member, err);
    if (!rc && out->min_member < 0)
        rc = mu_err_set(err, -EINVAL,
                        "spec.minMember: must be greater than or equal to 0");
    if (!rc)
        rc = min_task_decode(spec, out, err);
    if (!rc)
        rc = mu_json_member_str(spec, "spec", "queue", &queue, err);
    if (rc)
        goto fail;
    out->queue = mu_xstrdup(queue && *queue ? queue : "default");
    rc = mu_json_member_dup(spec, "spec", "priorityClassName",
                            &out->priority_class, err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "minResources", JSON_OBJECT, &minres,
                            err);
    if (!rc) {
        out->has_min_resources = minres != NULL;
        rc = mu_reslist_decode(minres, "spec.minResources", rn,
                               &out->min_resources, err);
    }
    if (!rc)
        rc = netopo_decode(spec, &out->topo, err);
    if (!rc)
        rc = mu_json_member_enum(status, "status", "phase", pg_phases,
                                 MU_ARRAY_LEN(pg_phases), &phase, err);
    if (!rc)
        rc = ann_duration(&out->meta, MU_ANN_SUBMIT_AT, &out->submit_at_ms,
                          err);
    if (rc)
        goto fail;
    out->phase = (enum mu_pg_phase)phase;
    pg_unsupported(spec, out);
    return 0;
fail:
    mu_podgroup_release(out);
    return rc;
}

/* ---- Queues ---- */

void mu_queue_spec_release(struct mu_queue_spec *q)
{
    mu_meta_release(&q->meta);
    free(q->parent);
    memset(q, 0, sizeof(*q));
}

static int queue_limits(const json_t *spec, struct mu_resnames *rn,
                        struct mu_queue_spec *out, struct mu_err *err)
{
    const json_t *g;
    char a[32], b[32];
    int rc = reslist_at(spec, "spec", "capability", rn, &out->capability,
                        err);

    if (!rc)
        rc = mu_json_member(spec, "spec", "guarantee", JSON_OBJECT, &g, err);
    if (!rc)
        rc = reslist_at(g, "spec.guarantee", "resource", rn, &out->guarantee,
                        err);
    if (!rc)
        rc = reslist_at(spec, "spec", "deserved", rn, &out->deserved, err);
    if (rc)
        return rc;
    for (int d = 0; d < MU_RES_MAX; d++) {
        const char *name = rn->name[d];

        if (!mu_res_has(&out->guarantee, d) ||
            !mu_res_has(&out->capability, d) ||
            out->guarantee.v[d] <= out->capability.v[d])
            continue;
        return mu_err_set(
            err, -EINVAL, "spec.guarantee.resource.%s: %s exceeds "
            "spec.capability %s", name,
            mu_quantity_format(name, out->guarantee.v[d], a, sizeof(a)),
            mu_quantity_format(name, out->capability.v[d], b, sizeof(b)));
    }
    return 0;
}

int mu_queue_decode(const json_t *j, struct mu_resnames *rn,
                    struct mu_queue_spec *out, struct mu_err *err)
{
    const json_t *spec, *status, *w;
    int state = MU_QUEUE_OPEN;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, false, &out->meta, &spec, &status, err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "weight", JSON_INTEGER, &w, err);
    if (rc)
        goto fail;
    out->weight = 1;
    if (w && json_integer_value(w) != 0) {
        if (json_integer_value(w) < 1 || json_integer_value(w) > 65535) {
            rc = mu_err_set(err, -EINVAL,
                            "spec.weight: must be between 1 and 65535");
            goto fail;
        }
        out->weight = (int32_t)json_integer_value(w);
    }
    rc = queue_limits(spec, rn, out, err);
    out->reclaimable = true;
    if (!rc)
        rc = mu_json_member_bool(spec, "spec", "reclaimable", &out->reclaimable,
                                 err);
    if (!rc)
        rc = opt_int32(spec, "spec", "priority", &out->priority, err);
    if (!rc)
        rc = mu_json_member_dup(spec, "spec", "parent", &out->parent, err);
    if (!rc)
        rc = mu_json_member_enum(status, "status", "state", queue_states,
                                 MU_ARRAY_LEN(queue_states), &state, err);
    if (!rc)
        rc = ann_duration(&out->meta, MU_ANN_SUBMIT_AT, &out->submit_at_ms,
                          err);
    if (rc)
        goto fail;
    out->state = (enum mu_queue_state)state;
    return 0;
fail:
    mu_queue_spec_release(out);
    return rc;
}

/* ---- PriorityClasses ---- */

void mu_priorityclass_release(struct mu_priorityclass *pc)
{
    free(pc->name);
    memset(pc, 0, sizeof(*pc));
}

int mu_priorityclass_decode(const json_t *j, struct mu_priorityclass *out,
                            struct mu_err *err)
{
    const json_t *mj;
    struct mu_meta m;
    int policy = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!json_is_object(j))
        return mu_json_want(err, "", "an object", j);
    rc = mu_json_member(j, "", "metadata", JSON_OBJECT, &mj, err);
    if (!rc)
        rc = mu_meta_decode(mj, false, &m, err);
    if (rc)
        return rc;
    out->name = m.name;
    m.name = NULL;
    mu_meta_release(&m);
    rc = mu_json_member_int32(j, "", "value", &out->value, err);
    if (rc == 0)
        rc = mu_err_set(err, -EINVAL, "value: required");
    if (rc < 0)
        goto fail;
    rc = mu_json_member_bool(j, "", "globalDefault", &out->global_default, err);
    if (!rc)
        rc = mu_json_member_enum(j, "", "preemptionPolicy", preempt_policies,
                                 MU_ARRAY_LEN(preempt_policies), &policy, err);
    if (rc)
        goto fail;
    out->preempt_never = policy == 1;
    return 0;
fail:
    mu_priorityclass_release(out);
    return rc;
}
