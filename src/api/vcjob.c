/*
 * vcjob.c - a Volcano Job read as Volcano's admission webhook reads it:
 * every field checked (the error names the field), the defaults resolved
 * (mu_vcjob_parse, mu_vcjob_default). vcjob_expand.c makes its objects.
 */
#include "api/vcjob.h"

#include <inttypes.h>

#include "api/json.h"
#include "api/object.h"
#include "api/resource.h"
#include "api/vcjob_args.h"
#include "api/vcjob_int.h"

#define DEFAULT_MAX_RETRY 3
#define DEFAULT_QUEUE "default"
#define DEFAULT_SCHEDULER "volcano"
#define DNS_LABEL_MAX 63
#define DNS_SUBDOMAIN_MAX 253
/* Pod names must be qualified names (and svc hostnames labels): 63. */
#define POD_NAME_MAX 63
#define PATH_LEN 128

static const char *const events[] = {
    "*",       "PodPending",    "PodRunning", "PodFailed", "PodEvicted",
    "Unknown", "TaskCompleted", "TaskFailed",
};
static const char *const actions[] = {
    "AbortJob",         "RestartJob",   "RestartTask", "RestartPod",
    "RestartPartition", "TerminateJob", "CompleteJob", "ResumeJob",
};
static const char *const plugins[] = {
    "svc", "env", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank",
};
/* Plugins the webhook completes with svc (§3.1); mpi also gets ssh. */
static const char *const needs_svc[] = {"tensorflow", "mpi", "pytorch", "ray"};

/* snprintf for field paths, which PATH_LEN bounds (gcc cannot tell). */
static void path_fmt(char *buf, size_t n, const char *fmt, ...)
    MU_PRINTF(3, 4);
static void path_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

static bool is_known(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return true;
    return false;
}

static int unknown(struct mu_err *err, const char *path, const char *what,
                   const char *value, const char *const *names, size_t n)
{
    struct mu_sb sb;

    mu_sb_init(&sb);
    for (size_t i = 0; i < n; i++)
        mu_sb_addf(&sb, "%s%s", i ? ", " : "", names[i]);
    mu_err_set(err, -EINVAL, "%s: unknown %s \"%s\" (known: %s)", path, what,
               value, sb.buf);
    mu_sb_release(&sb);
    return -EINVAL;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 1123 label of s[0..n). */
static bool is_label(const char *s, size_t n)
{
    if (n == 0 || n > DNS_LABEL_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool is_subdomain(const char *s)
{
    const char *dot;

    if (strlen(s) > DNS_SUBDOMAIN_MAX)
        return false;
    while ((dot = strchr(s, '.'))) {
        if (!is_label(s, (size_t)(dot - s)))
            return false;
        s = dot + 1;
    }
    return is_label(s, strlen(s));
}

/*
 * The webhook's wording of json.h's getters ("<path><key>: must be a
 * string"; path ends in "." or is ""). The optional string o[key]: "" and
 * null read as absent.
 */
static int get_str(const json_t *o, const char *path, const char *key,
                   const char **out, struct mu_err *err)
{
    if (mu_json_get_str(o, key, out) < 0)
        return mu_err_set(err, -EINVAL, "%s%s: must be a string", path, key);
    if (*out && !**out)
        *out = NULL;
    return 0;
}

/* The optional int32 o[key]: 1 and *out when given, 0 and def when not. */
static int get_int(const json_t *o, const char *path, const char *key,
                   int32_t def, int32_t *out, struct mu_err *err)
{
    const json_t *v;
    json_int_t n;

    *out = def;
    if (mu_json_get(o, key, JSON_INTEGER, &v) < 0)
        return mu_err_set(err, -EINVAL, "%s%s: must be an integer", path, key);
    if (!v)
        return 0;
    n = json_integer_value(v);
    if (n < INT32_MIN || n > INT32_MAX)
        return mu_err_set(err, -EINVAL, "%s%s: %" JSON_INTEGER_FORMAT
                          " is out of range", path, key, n);
    *out = (int32_t)n;
    return 1;
}

/* Labels, annotations: an object of strings, or absent. */
static int check_strmap(const json_t *o, const char *path, const char *key,
                        struct mu_err *err)
{
    const json_t *m;
    const char *k;
    json_t *v;

    if (mu_json_get(o, key, JSON_OBJECT, &m) < 0)
        return mu_err_set(err, -EINVAL, "%s%s: must be an object", path, key);
    json_object_foreach ((json_t *)m, k, v)
        if (!json_is_string(v))
            return mu_err_set(err, -EINVAL, "%s%s.%s: must be a string",
                              path, key, k);
    return 0;
}

static int check_list(const json_t *v, const char *path, struct mu_err *err)
{
    const json_t *a;

    if (mu_json_as(v, JSON_ARRAY, &a) < 0)
        return mu_err_set(err, -EINVAL, "%s: must be a list", path);
    return 0;
}

/* The parts of a pod template the expansion writes into must have the
 * right shape, so that building a pod cannot fail later. */
static int check_containers(const json_t *spec, const char *path,
                            const char *key, bool required,
                            struct mu_err *err)
{
    const json_t *cs = json_object_get(spec, key);
    const json_t *c;
    size_t i;

    if ((!cs || json_is_null(cs)) && !required)
        return 0;
    if (!json_is_array(cs) || (required && json_array_size(cs) == 0))
        return mu_err_set(err, -EINVAL,
                          "%s.spec.%s: at least one container is required",
                          path, key);
    json_array_foreach (cs, i, c) {
        char at[PATH_LEN];

        path_fmt(at, sizeof(at), "%s.spec.%s[%zu]", path, key, i);
        if (!json_is_object(c))
            return mu_err_set(err, -EINVAL, "%s: must be an object", at);
        if (json_object_get(c, "env") &&
            !json_is_array(json_object_get(c, "env")) &&
            !json_is_null(json_object_get(c, "env")))
            return mu_err_set(err, -EINVAL, "%s.env: must be a list", at);
        if (json_object_get(c, "volumeMounts") &&
            !json_is_array(json_object_get(c, "volumeMounts")) &&
            !json_is_null(json_object_get(c, "volumeMounts")))
            return mu_err_set(err, -EINVAL, "%s.volumeMounts: must be a list",
                              at);
    }
    return 0;
}

static int check_template(const json_t *tm, const char *path,
                          struct mu_err *err)
{
    const json_t *meta = json_object_get(tm, "metadata");
    const json_t *spec = json_object_get(tm, "spec");
    const char *s;
    char at[PATH_LEN];
    int rc;

    if (!json_is_object(tm))
        return mu_err_set(err, -EINVAL, "%s: required", path);
    path_fmt(at, sizeof(at), "%s.metadata.", path);
    if (meta && !json_is_null(meta) && !json_is_object(meta))
        return mu_err_set(err, -EINVAL, "%s.metadata: must be an object",
                          path);
    if ((rc = check_strmap(meta, at, "labels", err)) < 0 ||
        (rc = check_strmap(meta, at, "annotations", err)) < 0)
        return rc;
    if (!json_is_object(spec))
        return mu_err_set(err, -EINVAL, "%s.spec: required", path);
    path_fmt(at, sizeof(at), "%s.spec.", path);
    if ((rc = get_str(spec, at, "schedulerName", &s, err)) < 0 ||
        (rc = get_str(spec, at, "priorityClassName", &s, err)) < 0 ||
        (rc = get_str(spec, at, "hostname", &s, err)) < 0 ||
        (rc = get_str(spec, at, "subdomain", &s, err)) < 0)
        return rc;
    path_fmt(at, sizeof(at), "%s.spec.volumes", path);
    if ((rc = check_list(json_object_get(spec, "volumes"), at, err)) < 0)
        return rc;
    path_fmt(at, sizeof(at), "%s.spec.schedulingGates", path);
    if ((rc = check_list(json_object_get(spec, "schedulingGates"), at,
                         err)) < 0 ||
        (rc = check_containers(spec, path, "containers", true, err)) < 0)
        return rc;
    return check_containers(spec, path, "initContainers", false, err);
}

static int event_index(const char *e)
{
    for (size_t i = 0; i < MU_ARRAY_LEN(events); i++)
        if (strcmp(events[i], e) == 0)
            return (int)i;
    return -1;
}

/* One event of policy `at`; seen collects the events of the whole list. */
static int check_event(const json_t *v, const char *at, unsigned *seen,
                       struct mu_err *err)
{
    int e;

    if (!json_is_string(v))
        return mu_err_set(err, -EINVAL, "%s: must be a string", at);
    e = event_index(json_string_value(v));
    if (e < 0)
        return unknown(err, at, "event", json_string_value(v), events,
                       MU_ARRAY_LEN(events));
    if (*seen & (1u << e))
        return mu_err_set(err, -EINVAL, "%s: duplicate event \"%s\"", at,
                          events[e]);
    *seen |= 1u << e;
    return 0;
}

static int check_policy(const json_t *pols, size_t i, const char *path,
                        unsigned *seen, struct mu_err *err)
{
    const json_t *p = json_array_get(pols, i);
    const json_t *ev, *evs, *code, *v;
    const char *action, *timeout;
    char at[PATH_LEN], sub[PATH_LEN];
    int64_t ms;
    size_t k;
    int rc;

    path_fmt(at, sizeof(at), "%s[%zu]", path, i);
    if (!json_is_object(p))
        return mu_err_set(err, -EINVAL, "%s: must be an object", at);
    ev = json_object_get(p, "event");
    evs = json_object_get(p, "events");
    code = json_object_get(p, "exitCode");
    if (ev && (json_is_null(ev) ||
               (json_is_string(ev) && json_string_length(ev) == 0)))
        ev = NULL;
    if (json_is_null(code))
        code = NULL;
    path_fmt(sub, sizeof(sub), "%s.events", at);
    if ((rc = check_list(evs, sub, err)) < 0)
        return rc;
    if ((ev || json_array_size(evs) > 0) && code)
        return mu_err_set(err, -EINVAL,
                          "%s: event and exitCode must not both be set", at);
    if (!ev && json_array_size(evs) == 0 && !code)
        return mu_err_set(err, -EINVAL,
                          "%s: one of event, events or exitCode is required",
                          at);
    path_fmt(sub, sizeof(sub), "%s.event", at);
    if (ev && (rc = check_event(ev, sub, seen, err)) < 0)
        return rc;
    json_array_foreach (evs, k, v) {
        path_fmt(sub, sizeof(sub), "%s.events[%zu]", at, k);
        if ((rc = check_event(v, sub, seen, err)) < 0)
            return rc;
    }
    if (code) {
        if (!json_is_integer(code))
            return mu_err_set(err, -EINVAL, "%s.exitCode: must be an integer",
                              at);
        if (json_integer_value(code) == 0)
            return mu_err_set(err, -EINVAL,
                              "%s.exitCode: 0 is not a valid exit code", at);
        for (k = 0; k < i; k++)
            if (json_equal(json_object_get(json_array_get(pols, k),
                                           "exitCode"), code))
                return mu_err_set(err, -EINVAL,
                                  "%s.exitCode: duplicate exit code %"
                                  JSON_INTEGER_FORMAT, at,
                                  json_integer_value(code));
    }
    path_fmt(sub, sizeof(sub), "%s.", at);
    if ((rc = get_str(p, sub, "action", &action, err)) < 0)
        return rc;
    if (!action)
        return mu_err_set(err, -EINVAL, "%s.action: required", at);
    path_fmt(sub, sizeof(sub), "%s.action", at);
    if (!is_known(actions, MU_ARRAY_LEN(actions), action))
        return unknown(err, sub, "action", action, actions,
                       MU_ARRAY_LEN(actions));
    path_fmt(sub, sizeof(sub), "%s.", at);
    if ((rc = get_str(p, sub, "timeout", &timeout, err)) < 0)
        return rc;
    if (timeout && (rc = mu_duration_parse(timeout, &ms, err)) < 0) {
        mu_err_prefix(err, "%s.timeout", at);
        return rc;
    }
    return 0;
}

static int check_policies(const json_t *pols, const char *path,
                          struct mu_err *err)
{
    unsigned seen = 0;
    int rc;

    if ((rc = check_list(pols, path, err)) < 0)
        return rc;
    for (size_t i = 0; i < json_array_size(pols); i++)
        if ((rc = check_policy(pols, i, path, &seen, err)) < 0)
            return rc;
    if ((seen & 1u) && seen != 1u)
        return mu_err_set(err, -EINVAL,
                          "%s: event \"*\" must be the only event", path);
    return 0;
}

static int check_plugins(const json_t *pl, struct job *j, struct mu_err *err)
{
    const char *k;
    json_t *v, *arg;
    size_t i;
    int rc;

    /* the defaults, for plugins the webhook adds */
    if ((rc = mu_vcjob_svc_args(NULL, &j->svc_args, err)) < 0 ||
        (rc = mu_vcjob_ssh_args(NULL, &j->ssh_args, err)) < 0)
        return rc;
    if (!pl || json_is_null(pl))
        return 0;
    if (!json_is_object(pl))
        return mu_err_set(err, -EINVAL, "spec.plugins: must be an object");
    json_object_foreach ((json_t *)pl, k, v) {
        if (!is_known(plugins, MU_ARRAY_LEN(plugins), k))
            return unknown(err, "spec.plugins", "plugin", k, plugins,
                           MU_ARRAY_LEN(plugins));
        if (!json_is_null(v) && !json_is_array(v))
            return mu_err_set(err, -EINVAL,
                              "spec.plugins.%s: must be a list of strings", k);
        json_array_foreach (v, i, arg)
            if (!json_is_string(arg))
                return mu_err_set(err, -EINVAL,
                                  "spec.plugins.%s[%zu]: must be a string", k,
                                  i);
    }
    j->env = json_object_get(pl, "env") != NULL;
    j->svc = json_object_get(pl, "svc") != NULL;
    for (i = 0; i < MU_ARRAY_LEN(needs_svc); i++)
        if (json_object_get(pl, needs_svc[i]))
            j->add_svc = !j->svc;
    j->svc = j->svc || j->add_svc;
    j->add_ssh = json_object_get(pl, "mpi") && !json_object_get(pl, "ssh");
    j->ssh = json_object_get(pl, "ssh") || j->add_ssh;
    j->pytorch = json_object_get(pl, "pytorch") != NULL;
    j->tensorflow = json_object_get(pl, "tensorflow") != NULL;
    j->mpi = json_object_get(pl, "mpi") != NULL;
    if ((rc = mu_vcjob_svc_args(json_object_get(pl, "svc"), &j->svc_args,
                                err)) < 0 ||
        (rc = mu_vcjob_pytorch_args(json_object_get(pl, "pytorch"),
                                    &j->pytorch_args, err)) < 0 ||
        (rc = mu_vcjob_tf_args(json_object_get(pl, "tensorflow"),
                               &j->tf_args, err)) < 0 ||
        (rc = mu_vcjob_mpi_args(json_object_get(pl, "mpi"), &j->mpi_args,
                                err)) < 0)
        return rc;
    return mu_vcjob_ssh_args(json_object_get(pl, "ssh"), &j->ssh_args, err);
}

static int decimal_len(int32_t n)
{
    int len = 1;

    while (n >= 10) {
        n /= 10;
        len++;
    }
    return len;
}

static int parse_task(struct job *j, size_t i, struct mu_err *err)
{
    struct task *t = &j->task[i];
    const json_t *tj = t->json;
    char path[PATH_LEN], at[PATH_LEN];
    int32_t retry;
    size_t len;
    int rc;

    path_fmt(path, sizeof(path), "spec.tasks[%zu].", i);
    if (!json_is_object(tj))
        return mu_err_set(err, -EINVAL, "spec.tasks[%zu]: must be an object",
                          i);
    if ((rc = get_str(tj, path, "name", &t->name, err)) < 0)
        return rc;
    if (!t->name) {
        snprintf(t->defname, sizeof(t->defname), "default%zu", i);
        t->name = t->defname;
    } else if (!is_label(t->name, strlen(t->name))) {
        return mu_err_set(err, -EINVAL,
                          "%sname: \"%s\" is not a DNS label (lowercase "
                          "letters, digits and '-', starting and ending with "
                          "a letter or digit, at most 63 characters)",
                          path, t->name);
    }
    for (size_t k = 0; k < i; k++)
        if (strcmp(j->task[k].name, t->name) == 0)
            return mu_err_set(err, -EINVAL,
                              "%sname: duplicate task name \"%s\"", path,
                              t->name);
    t->tmpl = json_object_get(tj, "template");
    path_fmt(at, sizeof(at), "spec.tasks[%zu].template", i);
    if ((rc = check_template(t->tmpl, at, err)) < 0)
        return rc;
    if ((rc = get_int(tj, path, "replicas", 0, &t->replicas, err)) < 0)
        return rc;
    if (t->replicas < 0)
        return mu_err_set(err, -EINVAL,
                          "%sreplicas: must be greater than or equal to 0",
                          path);
    if ((rc = get_int(tj, path, "minAvailable", t->replicas, &t->min, err)) < 0)
        return rc;
    if (t->min < 0)
        return mu_err_set(err, -EINVAL,
                          "%sminAvailable: must be greater than or equal to 0",
                          path);
    if (t->min > t->replicas)
        return mu_err_set(err, -EINVAL,
                          "%sminAvailable: %" PRId32
                          " is greater than replicas %" PRId32,
                          path, t->min, t->replicas);
    if ((rc = get_int(tj, path, "maxRetry", 0, &retry, err)) < 0 ||
        (rc = get_str(tj, path, "topologyPolicy", &t->topology, err)) < 0)
        return rc;
    path_fmt(at, sizeof(at), "spec.tasks[%zu].policies", i);
    if ((rc = check_policies(json_object_get(tj, "policies"), at, err)) < 0)
        return rc;
    len = strlen(j->name) + strlen(t->name) + 2 +
          (size_t)decimal_len(t->replicas > 0 ? t->replicas - 1 : 0);
    if (len > POD_NAME_MAX)
        return mu_err_set(err, -EINVAL,
                          "%sname: pod name \"%s-%s-%" PRId32
                          "\" is longer than %d characters",
                          path, j->name, t->name,
                          t->replicas > 0 ? t->replicas - 1 : 0, POD_NAME_MAX);
    return 0;
}

void mu_vcjob_job_release(struct job *j)
{
    free(j->task);
    j->task = NULL;
}

static int parse_spec(const json_t *spec, struct job *j, struct mu_err *err)
{
    const json_t *tasks = json_object_get(spec, "tasks");
    int64_t total = 0;
    int rc;

    if ((rc = get_str(spec, "spec.", "schedulerName", &j->sched, err)) < 0 ||
        (rc = get_str(spec, "spec.", "queue", &j->queue, err)) < 0 ||
        (rc = get_str(spec, "spec.", "priorityClassName", &j->pclass, err)) <
            0 ||
        (rc = get_int(spec, "spec.", "maxRetry", 0, &j->max_retry, err)) < 0)
        return rc;
    j->sched = j->sched ? j->sched : DEFAULT_SCHEDULER;
    j->queue = j->queue ? j->queue : DEFAULT_QUEUE;
    if (j->max_retry < 0)
        return mu_err_set(err, -EINVAL,
                          "spec.maxRetry: must be greater than or equal to 0");
    if (j->max_retry == 0)
        j->max_retry = DEFAULT_MAX_RETRY;
    if ((rc = check_list(tasks, "spec.tasks", err)) < 0)
        return rc;
    j->ntask = json_array_size(tasks);
    if (j->ntask == 0)
        return mu_err_set(err, -EINVAL,
                          "spec.tasks: at least one task is required");
    j->task = mu_xcalloc(j->ntask, sizeof(*j->task));
    for (size_t i = 0; i < j->ntask; i++) {
        j->task[i].json = json_array_get(tasks, i);
        if ((rc = parse_task(j, i, err)) < 0)
            return rc;
        total += j->task[i].replicas;
        j->task_min += j->task[i].min;
    }
    if (total > INT32_MAX)
        return mu_err_set(err, -EINVAL,
                          "spec.tasks: total replicas %" PRId64
                          " is out of range", total);
    if ((rc = get_int(spec, "spec.", "minAvailable", 0, &j->min, err)) < 0)
        return rc;
    /* Go's zero value: the webhook cannot tell 0 from absent */
    if (j->min == 0)
        j->min = (int32_t)j->task_min;
    if (j->min < 0)
        return mu_err_set(err, -EINVAL,
                          "spec.minAvailable: must be greater than or equal "
                          "to 0");
    if (j->min > total)
        return mu_err_set(err, -EINVAL,
                          "spec.minAvailable: %" PRId32
                          " is greater than the total replicas %" PRId64,
                          j->min, total);
    if ((rc = check_policies(json_object_get(spec, "policies"),
                             "spec.policies", err)) < 0)
        return rc;
    return check_plugins(json_object_get(spec, "plugins"), j, err);
}

/* Validates job and resolves its defaults into j (released by the caller
 * whatever the result). */
int mu_vcjob_parse(const json_t *job, struct job *j, struct mu_err *err)
{
    const json_t *meta = json_object_get(job, "metadata");
    const json_t *spec = json_object_get(job, "spec");
    int rc;

    memset(j, 0, sizeof(*j));
    if (!json_is_object(job))
        return mu_err_set(err, -EINVAL, "a Job must be a JSON object");
    if (meta && !json_is_object(meta))
        return mu_err_set(err, -EINVAL, "metadata: must be an object");
    if ((rc = get_str(meta, "metadata.", "name", &j->name, err)) < 0)
        return rc;
    if (!j->name)
        return mu_err_set(err, -EINVAL, "metadata.name: required");
    if (!is_subdomain(j->name))
        return mu_err_set(err, -EINVAL,
                          "metadata.name: \"%s\" is not a valid name "
                          "(lowercase letters, digits, '-' and '.', starting "
                          "and ending with a letter or digit, at most 253 "
                          "characters)",
                          j->name);
    if ((rc = get_str(meta, "metadata.", "namespace", &j->ns, err)) < 0 ||
        (rc = get_str(meta, "metadata.", "uid", &j->uid, err)) < 0 ||
        (rc = check_strmap(meta, "metadata.", "labels", err)) < 0 ||
        (rc = check_strmap(meta, "metadata.", "annotations", err)) < 0)
        return rc;
    j->ns = j->ns ? j->ns : "default";
    j->labels = json_object_get(meta, "labels");
    j->annotations = json_object_get(meta, "annotations");
    if (spec && !json_is_null(spec) && !json_is_object(spec))
        return mu_err_set(err, -EINVAL, "spec: must be an object");
    return parse_spec(spec, j, err);
}

int mu_vcjob_default(const json_t *job, json_t **out, struct mu_err *err)
{
    struct job j;
    json_t *c, *spec, *tasks;
    int rc = mu_vcjob_parse(job, &j, err);

    if (rc < 0) {
        mu_vcjob_job_release(&j);
        return rc;
    }
    c = mu_json_must(json_deep_copy(job));
    mu_json_set_str(mu_json_child(c, "metadata", false), "namespace", j.ns);
    spec = mu_json_child(c, "spec", false);
    mu_json_set_str(spec, "schedulerName", j.sched);
    mu_json_set_str(spec, "queue", j.queue);
    mu_json_set_int(spec, "maxRetry", j.max_retry);
    mu_json_set_int(spec, "minAvailable", j.min);
    if (j.add_svc)
        json_object_set_new(mu_json_child(spec, "plugins", false), "svc",
                            mu_json_must(json_array()));
    if (j.add_ssh)
        json_object_set_new(mu_json_child(spec, "plugins", false), "ssh",
                            mu_json_must(json_array()));
    tasks = json_object_get(spec, "tasks");
    for (size_t i = 0; i < j.ntask; i++) {
        json_t *t = json_array_get(tasks, i);
        json_t *ts = json_object_get(json_object_get(t, "template"), "spec");
        int32_t retry = 0;

        mu_json_set_str(t, "name", j.task[i].name);
        mu_json_set_int(t, "minAvailable", j.task[i].min);
        get_int(t, "", "maxRetry", 0, &retry, NULL);
        mu_json_set_int(t, "maxRetry", retry ? retry : DEFAULT_MAX_RETRY);
        if (!json_string_length(json_object_get(ts, "schedulerName")))
            mu_json_set_str(ts, "schedulerName", j.sched);
        if (j.pclass &&
            !json_string_length(json_object_get(ts, "priorityClassName")))
            mu_json_set_str(ts, "priorityClassName", j.pclass);
    }
    mu_vcjob_job_release(&j);
    *out = c;
    return 0;
}

json_t *mu_vcjob_owner_refs(const char *name, const char *uid)
{
    json_t *ref = mu_json_must(json_object());
    json_t *refs = mu_json_must(json_array());

    mu_json_set_str(ref, "apiVersion", "batch.volcano.sh/v1alpha1");
    mu_json_set_str(ref, "kind", "Job");
    mu_json_set_str(ref, "name", name);
    mu_json_set_str(ref, "uid", uid);
    json_object_set_new(ref, "controller", json_true());
    json_object_set_new(ref, "blockOwnerDeletion", json_true());
    json_array_append_new(refs, ref);
    return refs;
}
