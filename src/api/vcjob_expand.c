/*
 * vcjob_expand.c - a valid Job as its controller's objects: each pod of a
 * task (Volcano's names, labels, annotations and plugin wiring, gated) and
 * the PodGroup with its minResources (vcjob.h). Reading and checking the
 * Job is vcjob.c's.
 */
#include "api/vcjob_expand.h"

#include <inttypes.h>

#include "api/json.h"
#include "api/object.h"
#include "api/resource.h"
#include "api/vcjob.h"
#include "api/vcjob_args.h"
#include "api/vcjob_frameworks.h"
#include "api/vcjob_int.h"

/* Job annotations (and labels) the controller copies onto every pod. */
static const char *const copied_ann[] = {
    MU_ANN_PREEMPTABLE,
    ANN_COOLDOWN,
    "volcano.sh/revocable-zone",
    "volcano.sh/jdb-min-available",
    "volcano.sh/jdb-max-unavailable",
};
static const char *const copied_labels[] = {MU_ANN_PREEMPTABLE,
                                            ANN_COOLDOWN};

static void copy_keys(json_t *dst, const json_t *src,
                      const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(src, keys[i]);

        if (v)
            json_object_set(dst, keys[i], v);
    }
}

static void add_env(json_t *spec, const char *key, const char *index)
{
    static const char *const names[] = {"VK_TASK_INDEX", "VC_TASK_INDEX"};
    json_t *cs = json_object_get(spec, key);
    json_t *c;
    size_t i;

    json_array_foreach (cs, i, c) {
        json_t *env = mu_json_child(c, "env", true);

        for (size_t k = 0; k < MU_ARRAY_LEN(names); k++) {
            json_t *var = mu_json_must(json_object());

            mu_json_set_str(var, "name", names[k]);
            mu_json_set_str(var, "value", index);
            json_array_append_new(env, var);
        }
    }
}

static void add_gate(json_t *spec)
{
    json_t *gates = mu_json_child(spec, "schedulingGates", true);
    json_t *g;
    size_t i;

    json_array_foreach (gates, i, g)
        if (mu_strcmp0(json_string_value(json_object_get(g, "name")),
                       MU_GATE) == 0)
            return;
    g = mu_json_must(json_object());
    mu_json_set_str(g, "name", MU_GATE);
    json_array_append_new(gates, g);
}

static const char *const container_keys[] = {"containers", "initContainers"};

static bool has_item(const json_t *list, const char *key, const char *value)
{
    const json_t *v;
    size_t i;

    json_array_foreach (list, i, v)
        if (mu_strcmp0(json_string_value(json_object_get(v, key)), value) ==
            0)
            return true;
    return false;
}

/* Appends vol (stolen) to spec.volumes unless one has its name. */
static void add_volume(json_t *spec, json_t *vol)
{
    json_t *vols = mu_json_child(spec, "volumes", true);
    const char *name = json_string_value(json_object_get(vol, "name"));

    if (has_item(vols, "name", name))
        json_decref(vol);
    else
        json_array_append_new(vols, vol);
}

/* Gives every container and init container a copy of mount (stolen)
 * unless it already mounts something at that path. */
static void add_mount(json_t *spec, json_t *mount)
{
    const char *path = json_string_value(json_object_get(mount, "mountPath"));

    for (size_t k = 0; k < MU_ARRAY_LEN(container_keys); k++) {
        json_t *cs = json_object_get(spec, container_keys[k]);
        json_t *c;
        size_t i;

        json_array_foreach (cs, i, c) {
            json_t *vms = mu_json_child(c, "volumeMounts", true);

            if (!has_item(vms, "mountPath", path))
                json_array_append_new(vms, mu_json_must(json_deep_copy(mount)));
        }
    }
    json_decref(mount);
}

/* The svc plugin's pod side (vcjob_plugins.h): VC_<T>_HOSTS/VC_<T>_NUM
 * of every task from the ConfigMap <job>-svc, mounted at /etc/volcano. */
static void svc_pod(json_t *spec, const struct job *j)
{
    static const char *const suffix[] = {"HOSTS", "NUM"};
    char *cm = mu_xasprintf("%s-svc", j->name);
    json_t *env = mu_json_must(json_array());
    json_t *vol, *src, *mount;

    for (size_t t = 0; t < j->ntask; t++) {
        for (size_t k = 0; k < MU_ARRAY_LEN(suffix); k++) {
            char *name = mu_xasprintf("VC_%s_%s", j->task[t].name, suffix[k]);
            json_t *var = mu_json_must(json_object());
            json_t *from = mu_json_must(json_object());
            json_t *ref = mu_json_must(json_object());

            for (char *c = name; *c; c++)
                if (*c == '-')
                    *c = '_';
                else if (*c >= 'a' && *c <= 'z')
                    *c = (char)(*c - 'a' + 'A');
            mu_json_set_str(ref, "name", cm);
            mu_json_set_str(ref, "key", name);
            json_object_set_new(from, "configMapKeyRef", ref);
            mu_json_set_str(var, "name", name);
            json_object_set_new(var, "valueFrom", from);
            json_array_append_new(env, var);
            free(name);
        }
    }
    for (size_t k = 0; k < MU_ARRAY_LEN(container_keys) &&
                       j->svc_args.inject_hosts_env; k++) {
        json_t *cs = json_object_get(spec, container_keys[k]);
        json_t *c, *v;
        size_t i, e;

        json_array_foreach (cs, i, c) {
            json_t *cenv = mu_json_child(c, "env", true);

            json_array_foreach (env, e, v)
                json_array_append_new(cenv, mu_json_must(json_deep_copy(v)));
        }
    }
    json_decref(env);

    vol = mu_json_must(json_object());
    src = mu_json_must(json_object());
    mu_json_set_str(vol, "name", cm);
    mu_json_set_str(src, "name", cm);
    json_object_set_new(vol, "configMap", src);
    add_volume(spec, vol);
    mount = mu_json_must(json_object());
    mu_json_set_str(mount, "name", cm);
    mu_json_set_str(mount, "mountPath", MU_SVC_MOUNT_PATH);
    add_mount(spec, mount);
    free(cm);
}

/* The ssh plugin's pod side: the Secret <job>-ssh as <path>/{id_rsa,
 * id_rsa.pub, authorized_keys, config}, mode 0600 under /root/.ssh and
 * 0644 elsewhere (a non-root user must be able to read it). */
static void ssh_pod(json_t *spec, const struct job *j)
{
    static const char *const keys[] = {"id_rsa", "id_rsa.pub",
                                       "authorized_keys", "config"};
    char *secret = mu_xasprintf("%s-ssh", j->name);
    json_t *vol = mu_json_must(json_object());
    json_t *src = mu_json_must(json_object());
    json_t *items = mu_json_must(json_array());
    json_t *mount = mu_json_must(json_object());

    for (size_t k = 0; k < MU_ARRAY_LEN(keys); k++) {
        json_t *item = mu_json_must(json_object());
        char *path = mu_xasprintf(".ssh/%s", keys[k]);

        mu_json_set_str(item, "key", keys[k]);
        mu_json_set_str(item, "path", path);
        json_array_append_new(items, item);
        free(path);
    }
    mu_json_set_str(src, "secretName", secret);
    json_object_set_new(src, "items", items);
    mu_json_set_int(src, "defaultMode",
            strcmp(j->ssh_args.key_path, MU_SSH_ROOT_PATH) == 0 ? 0600
                                                                 : 0644);
    mu_json_set_str(vol, "name", secret);
    json_object_set_new(vol, "secret", src);
    add_volume(spec, vol);
    mu_json_set_str(mount, "name", secret);
    mu_json_set_str(mount, "mountPath", j->ssh_args.key_path);
    mu_json_set_str(mount, "subPath", ".ssh");
    add_mount(spec, mount);
    free(secret);
}

static void pod_annotations(json_t *ann, const struct job *j,
                            const struct task *t, const char *index,
                            int version, int retry)
{
    const char *k;
    json_t *v;
    char *s;

    json_object_foreach ((json_t *)j->annotations, k, v)
        if (mu_starts_with(k, "muster.io/") && !json_object_get(ann, k))
            json_object_set(ann, k, v);
    copy_keys(ann, j->annotations, copied_ann, MU_ARRAY_LEN(copied_ann));
    s = mu_xasprintf("%s-%s", j->name, j->uid);
    mu_json_set_str(ann, MU_ANN_GROUP, s);
    free(s);
    mu_json_set_str(ann, ANN_JOB_NAME, j->name);
    mu_json_set_str(ann, ANN_QUEUE, j->queue);
    mu_json_set_str(ann, MU_ANN_TASK_SPEC, t->name);
    mu_json_set_str(ann, MU_ANN_TASK_INDEX, index);
    s = mu_xasprintf("%d", version);
    mu_json_set_str(ann, ANN_JOB_VERSION, s);
    free(s);
    s = mu_xasprintf("%s-%s", j->name, t->name);
    mu_json_set_str(ann, ANN_TEMPLATE_UID, s);
    free(s);
    s = mu_xasprintf("%d", retry);
    mu_json_set_str(ann, ANN_RETRY_COUNT, s);
    free(s);
    if (t->topology)
        mu_json_set_str(ann, ANN_NUMA_POLICY, t->topology);
}

/* The pod of a parsed job; cannot fail once mu_vcjob_parse() accepted the job. */
static json_t *build_pod(const struct job *j, size_t ti, int index,
                         int version, int retry, int gated)
{
    const struct task *t = &j->task[ti];
    const json_t *tmeta = json_object_get(t->tmpl, "metadata");
    json_t *pod = mu_json_must(json_object());
    json_t *meta, *spec, *labels;
    char idx[16];
    char *name;

    snprintf(idx, sizeof(idx), "%d", index);
    name = mu_xasprintf("%s-%s-%s", j->name, t->name, idx);
    meta = json_is_object(tmeta) ? mu_json_must(json_deep_copy(tmeta))
                                 : mu_json_must(json_object());
    json_object_del(meta, "generateName");
    mu_json_set_str(meta, "name", name);
    mu_json_set_str(meta, "namespace", j->ns);
    json_object_set_new(meta, "ownerReferences", mu_vcjob_owner_refs(j->name, j->uid));
    labels = mu_json_child(meta, "labels", false);
    copy_keys(labels, j->labels, copied_labels, MU_ARRAY_LEN(copied_labels));
    mu_json_set_str(labels, MU_ANN_TASK_INDEX, idx);
    mu_json_set_str(labels, ANN_JOB_NAME, j->name);
    mu_json_set_str(labels, MU_ANN_TASK_SPEC, t->name);
    mu_json_set_str(labels, ANN_JOB_NAMESPACE, j->ns);
    mu_json_set_str(labels, ANN_QUEUE, j->queue);
    pod_annotations(mu_json_child(meta, "annotations", false), j, t, idx, version,
                    retry);

    spec = mu_json_must(json_deep_copy(json_object_get(t->tmpl, "spec")));
    if (!json_string_length(json_object_get(spec, "schedulerName")))
        mu_json_set_str(spec, "schedulerName", j->sched);
    if (j->pclass &&
        !json_string_length(json_object_get(spec, "priorityClassName")))
        mu_json_set_str(spec, "priorityClassName", j->pclass);
    if (j->env) {
        add_env(spec, "containers", idx);
        add_env(spec, "initContainers", idx);
    }
    if (j->svc) {
        if (!json_string_length(json_object_get(spec, "hostname")))
            mu_json_set_str(spec, "hostname", name);
        if (!json_string_length(json_object_get(spec, "subdomain")))
            mu_json_set_str(spec, "subdomain", j->name);
        svc_pod(spec, j);
    }
    if (j->ssh)
        ssh_pod(spec, j);
    mu_vcjob_frameworks_pod(j, ti, index, spec);
    if (gated)
        add_gate(spec);

    mu_json_set_str(pod, "apiVersion", "v1");
    mu_json_set_str(pod, "kind", "Pod");
    json_object_set_new(pod, "metadata", meta);
    json_object_set_new(pod, "spec", spec);
    free(name);
    return pod;
}

int mu_vcjob_pod(const json_t *job, size_t task, int index, int version,
                 int retry, int gated, json_t **out, struct mu_err *err)
{
    struct job j;
    int rc = mu_vcjob_parse(job, &j, err);

    if (rc < 0)
        goto out;
    if (!j.uid) {
        rc = mu_err_set(err, -EINVAL, "metadata.uid: required");
    } else if (task >= j.ntask) {
        rc = mu_err_set(err, -EINVAL, "spec.tasks: no task %zu (%zu tasks)",
                        task, j.ntask);
    } else if (index < 0 || index >= j.task[task].replicas) {
        rc = mu_err_set(err, -EINVAL,
                        "spec.tasks[%zu].replicas: index %d is out of range "
                        "(replicas %" PRId32 ")",
                        task, index, j.task[task].replicas);
    } else {
        *out = build_pod(&j, task, index, version, retry, gated);
    }
out:
    mu_vcjob_job_release(&j);
    return rc;
}

/* sum += n pods of task t (each one's scheduling request). */
static int add_pods(const struct job *j, size_t t, int64_t n,
                    struct mu_resnames *rn, struct mu_res *sum,
                    struct mu_err *err)
{
    json_t *pod = build_pod(j, t, 0, 0, 0, 0);
    struct mu_pod p;
    int rc = mu_pod_decode(pod, rn, &p, err);

    json_decref(pod);
    if (rc < 0) {
        mu_err_prefix(err, "spec.tasks[%zu].template", t);
        goto out;
    }
    for (int d = 0; d < rn->n; d++) {
        int64_t v = mu_res_get(&p.req, d);

        if (!mu_res_has(&p.req, d))
            continue;
        if (v > 0 && v > (INT64_MAX - mu_res_get(sum, d)) / n) {
            rc = mu_err_set(err, -EINVAL,
                            "spec.tasks[%zu]: the job's total %s is out of "
                            "range", t, rn->name[d]);
            goto out;
        }
        mu_res_put(sum, d, mu_res_get(sum, d) + v * n);
    }
out:
    mu_pod_release(&p);
    return rc;
}

/*
 * §3.3 with every task at the same priority (PriorityClass values are not
 * known here), so tasks keep their order.
 */
static int min_resources(const struct job *j, struct mu_resnames *rn,
                         struct mu_res *sum, struct mu_err *err)
{
    int64_t *cnt = mu_xcalloc(j->ntask, sizeof(*cnt));
    int64_t left = j->min;
    size_t t;
    int rc = 0;

    if (j->min < j->task_min) {
        for (t = 0; t < j->ntask; t++) {
            cnt[t] = MU_MIN(j->task[t].replicas, left);
            left -= cnt[t];
        }
    } else {
        for (t = 0; t < j->ntask; t++) {
            cnt[t] = MU_MIN(j->task[t].min, left);
            left -= cnt[t];
        }
        for (t = 0; t < j->ntask; t++) {
            int64_t n = MU_MIN(j->task[t].replicas - j->task[t].min, left);

            cnt[t] += n;
            left -= n;
        }
    }
    mu_res_zero(sum);
    for (t = 0; t < j->ntask && rc == 0; t++)
        if (cnt[t] > 0)
            rc = add_pods(j, t, cnt[t], rn, sum, err);
    free(cnt);
    return rc;
}

/* What of the job muster does not act on, for its PodGroup's
 * MU_ANN_UNSUPPORTED (which its status then says), or NULL. */
static char *job_unsupported(const json_t *job, const struct job *j)
{
    static const char *const fields[] = {"dependsOn", "partitionPolicy"};
    static const char *const plugins[] = {"ray", "hcclrank"};
    const json_t *pl = json_object_get(json_object_get(job, "spec"), "plugins");
    struct mu_sb sb;

    mu_sb_init(&sb);
    for (size_t t = 0; t < j->ntask; t++)
        for (size_t f = 0; f < MU_ARRAY_LEN(fields); f++)
            if (mu_json_given(json_object_get(j->task[t].json, fields[f])))
                mu_sb_addf(&sb, "%sthe vcjob's spec.tasks[%zu].%s",
                           sb.len ? ", " : "", t, fields[f]);
    for (size_t p = 0; p < MU_ARRAY_LEN(plugins); p++)
        if (json_object_get(pl, plugins[p]))
            mu_sb_addf(&sb, "%sthe vcjob's spec.plugins.%s",
                       sb.len ? ", " : "", plugins[p]);
    if (!sb.len) {
        mu_sb_release(&sb);
        return NULL;
    }
    return mu_sb_detach(&sb);
}

int mu_vcjob_podgroup(const json_t *job, json_t **out, struct mu_err *err)
{
    struct mu_resnames rn;
    struct mu_res sum;
    struct job j;
    json_t *pg, *meta, *spec, *mtm, *mres, *status;
    char *name;
    int rc;

    mu_resnames_init(&rn);
    if ((rc = mu_vcjob_parse(job, &j, err)) < 0)
        goto out;
    if (!j.uid) {
        rc = mu_err_set(err, -EINVAL, "metadata.uid: required");
        goto out;
    }
    if ((rc = min_resources(&j, &rn, &sum, err)) < 0)
        goto out;

    name = mu_xasprintf("%s-%s", j.name, j.uid);
    meta = mu_json_must(json_object());
    mu_json_set_str(meta, "name", name);
    mu_json_set_str(meta, "namespace", j.ns);
    if (json_is_object(j.labels))
        json_object_set_new(meta, "labels", mu_json_must(json_deep_copy(j.labels)));
    if (json_is_object(j.annotations))
        json_object_set_new(meta, "annotations",
                            mu_json_must(json_deep_copy(j.annotations)));
    json_object_set_new(meta, "ownerReferences", mu_vcjob_owner_refs(j.name, j.uid));
    free(name);
    if ((name = job_unsupported(job, &j))) {
        mu_json_set_str(mu_json_child(meta, "annotations", false),
                        MU_ANN_UNSUPPORTED, name);
        free(name);
    }

    mtm = mu_json_must(json_object());
    for (size_t t = 0; t < j.ntask; t++)
        mu_json_set_int(mtm, j.task[t].name, j.task[t].min);
    mres = mu_json_must(json_object());
    for (int d = 0; d < rn.n; d++) {
        char q[64];

        if (mu_res_has(&sum, d))
            mu_json_set_str(mres, rn.name[d],
                    mu_quantity_format(rn.name[d], mu_res_get(&sum, d), q,
                                       sizeof(q)));
    }
    spec = mu_json_must(json_object());
    mu_json_set_int(spec, "minMember", j.min);
    json_object_set_new(spec, "minTaskMember", mtm);
    mu_json_set_str(spec, "queue", j.queue);
    if (j.pclass)
        mu_json_set_str(spec, "priorityClassName", j.pclass);
    json_object_set_new(spec, "minResources", mres);
    /* as Volcano's controller copies it (v1.12+) */
    if (json_object_get(json_object_get(job, "spec"), "networkTopology"))
        json_object_set(spec, "networkTopology",
                        json_object_get(json_object_get(job, "spec"),
                                        "networkTopology"));
    status = mu_json_must(json_object());
    mu_json_set_str(status, "phase", "Pending");

    pg = mu_json_must(json_object());
    mu_json_set_str(pg, "apiVersion", "scheduling.volcano.sh/v1beta1");
    mu_json_set_str(pg, "kind", "PodGroup");
    json_object_set_new(pg, "metadata", meta);
    json_object_set_new(pg, "spec", spec);
    json_object_set_new(pg, "status", status);
    *out = pg;
out:
    mu_vcjob_job_release(&j);
    mu_resnames_release(&rn);
    return rc;
}
