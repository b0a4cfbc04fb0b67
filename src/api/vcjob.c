#include "api/vcjob.h"


#include <inttypes.h>

#include "api/jsonx.h"
#include "api/object.h"
#include "api/resource.h"
#include "api/vcjob_plugins.h"

#define DEFAULT_MAX_RETRY 3
#define DEFAULT_QUEUE "default"
#define DEFAULT_SCHEDULER "volcano"
#define DNS_LABEL_MAX 63
#define DNS_SUBDOMAIN_MAX 253
/* Pod names must be qualified names (and svc hostnames labels): 63. */
#define POD_NAME_MAX 63
#define PATH_LEN 128

#define ANN_JOB_NAME "volcano.sh/job-name"
#define ANN_JOB_NAMESPACE "volcano.sh/job-namespace"
#define ANN_QUEUE "volcano.sh/queue-name"
#define ANN_JOB_VERSION "volcano.sh/job-version"
#define ANN_TEMPLATE_UID "volcano.sh/template-uid"
#define ANN_RETRY_COUNT "volcano.sh/job-retry-count"
#define ANN_NUMA_POLICY "volcano.sh/numa-topology-policy"
#define ANN_COOLDOWN "volcano.sh/cooldown-time"

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

/* Job annotations (and labels) the controller copies onto every pod. */
static const char *const copied_ann[] = {
    MU_ANN_PREEMPTABLE,
    ANN_COOLDOWN,
    "volcano.sh/revocable-zone",
    "volcano.sh/jdb-min-available",
    "volcano.sh/jdb-max-unavailable",
};
static const char *const copied_labels[] = {MU_ANN_PREEMPTABLE, ANN_COOLDOWN};

/* A validated job with the webhook's defaults resolved. Strings are
 * borrowed from the JSON it was read from. */
struct task {
    const json_t *json;
    const json_t *tmpl;
    const char *name;
    const char *topology;
    char defname[32]; /* "default<i>" when the task has no name */
    int32_t replicas;
    int32_t min;
};

struct job {
    const char *name;
    const char *ns;
    const char *uid;
    const char *queue;
    const char *sched;
    const char *pclass;
    const json_t *labels;
    const json_t *annotations;
    int32_t min;
    int32_t max_retry;
    int64_t task_min; /* sum of the tasks' minAvailable */
    bool env;
    bool svc;
    bool ssh;
    bool add_svc;
    bool add_ssh;
    struct mu_svc_args svc_args;
    struct mu_ssh_args ssh_args;
    size_t ntask;
    struct task *task;
};

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

static void set_int(json_t *o, const char *key, json_int_t v)
{
    json_object_set_new(o, key, mu_json_must(json_integer(v)));
}

/* o[key] as an object (or array), created when absent or null. */
static json_t *child(json_t *o, const char *key, bool array)
{
    json_t *v = json_object_get(o, key);

    if (v && !json_is_null(v))
        return v;
    v = mu_json_must(array ? json_array() : json_object());
    json_object_set_new(o, key, v);
    return v;
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

/* The optional string o[key] (path names o); "" and null read as absent. */
static int get_str(const json_t *o, const char *path, const char *key,
                   const char **out, struct mu_err *err)
{
    const json_t *v = json_object_get(o, key);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return mu_err_set(err, -EINVAL, "%s%s: must be a string", path, key);
    if (json_string_length(v) > 0)
        *out = json_string_value(v);
    return 0;
}

/* The optional int32 o[key]: 1 and *out when given, 0 and def when not. */
static int get_int(const json_t *o, const char *path, const char *key,
                   int32_t def, int32_t *out, struct mu_err *err)
{
    const json_t *v = json_object_get(o, key);
    json_int_t n;

    *out = def;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v))
        return mu_err_set(err, -EINVAL, "%s%s: must be an integer", path, key);
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
    const json_t *m = json_object_get(o, key);
    const char *k;
    json_t *v;

    if (!m || json_is_null(m))
        return 0;
    if (!json_is_object(m))
        return mu_err_set(err, -EINVAL, "%s%s: must be an object", path, key);
    json_object_foreach ((json_t *)m, k, v)
        if (!json_is_string(v))
            return mu_err_set(err, -EINVAL, "%s%s.%s: must be a string",
                              path, key, k);
    return 0;
}

static int check_list(const json_t *v, const char *path, struct mu_err *err)
{
    if (v && !json_is_null(v) && !json_is_array(v))
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
    if ((rc = mu_vcjob_svc_args(json_object_get(pl, "svc"), &j->svc_args,
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

static void job_release(struct job *j)
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
static int parse(const json_t *job, struct job *j, struct mu_err *err)
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
    int rc = parse(job, &j, err);

    if (rc < 0) {
        job_release(&j);
        return rc;
    }
    c = mu_json_must(json_deep_copy(job));
    mu_json_set_str(child(c, "metadata", false), "namespace", j.ns);
    spec = child(c, "spec", false);
    mu_json_set_str(spec, "schedulerName", j.sched);
    mu_json_set_str(spec, "queue", j.queue);
    set_int(spec, "maxRetry", j.max_retry);
    set_int(spec, "minAvailable", j.min);
    if (j.add_svc)
        json_object_set_new(child(spec, "plugins", false), "svc",
                            mu_json_must(json_array()));
    if (j.add_ssh)
        json_object_set_new(child(spec, "plugins", false), "ssh",
                            mu_json_must(json_array()));
    tasks = json_object_get(spec, "tasks");
    for (size_t i = 0; i < j.ntask; i++) {
        json_t *t = json_array_get(tasks, i);
        json_t *ts = json_object_get(json_object_get(t, "template"), "spec");
        int32_t retry = 0;

        mu_json_set_str(t, "name", j.task[i].name);
        set_int(t, "minAvailable", j.task[i].min);
        get_int(t, "", "maxRetry", 0, &retry, NULL);
        set_int(t, "maxRetry", retry ? retry : DEFAULT_MAX_RETRY);
        if (!json_string_length(json_object_get(ts, "schedulerName")))
            mu_json_set_str(ts, "schedulerName", j.sched);
        if (j.pclass &&
            !json_string_length(json_object_get(ts, "priorityClassName")))
            mu_json_set_str(ts, "priorityClassName", j.pclass);
    }
    job_release(&j);
    *out = c;
    return 0;
}

static json_t *owner_refs(const struct job *j)
{
    json_t *ref = mu_json_must(json_object());
    json_t *refs = mu_json_must(json_array());

    mu_json_set_str(ref, "apiVersion", "batch.volcano.sh/v1alpha1");
    mu_json_set_str(ref, "kind", "Job");
    mu_json_set_str(ref, "name", j->name);
    mu_json_set_str(ref, "uid", j->uid);
    json_object_set_new(ref, "controller", json_true());
    json_object_set_new(ref, "blockOwnerDeletion", json_true());
    json_array_append_new(refs, ref);
    return refs;
}

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
        json_t *env = child(c, "env", true);

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
    json_t *gates = child(spec, "schedulingGates", true);
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
    json_t *vols = child(spec, "volumes", true);
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
            json_t *vms = child(c, "volumeMounts", true);

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
            json_t *cenv = child(c, "env", true);

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
    set_int(src, "defaultMode",
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

/* The pod of a parsed job; cannot fail once parse() accepted the job. */
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
    json_object_set_new(meta, "ownerReferences", owner_refs(j));
    labels = child(meta, "labels", false);
    copy_keys(labels, j->labels, copied_labels, MU_ARRAY_LEN(copied_labels));
    mu_json_set_str(labels, MU_ANN_TASK_INDEX, idx);
    mu_json_set_str(labels, ANN_JOB_NAME, j->name);
    mu_json_set_str(labels, MU_ANN_TASK_SPEC, t->name);
    mu_json_set_str(labels, ANN_JOB_NAMESPACE, j->ns);
    mu_json_set_str(labels, ANN_QUEUE, j->queue);
    pod_annotations(child(meta, "annotations", false), j, t, idx, version,
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
    int rc = parse(job, &j, err);

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
    job_release(&j);
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

int mu_vcjob_podgroup(const json_t *job, json_t **out, struct mu_err *err)
{
    struct mu_resnames rn;
    struct mu_res sum;
    struct job j;
    json_t *pg, *meta, *spec, *mtm, *mres, *status;
    char *name;
    int rc;

    mu_resnames_init(&rn);
    if ((rc = parse(job, &j, err)) < 0)
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
    json_object_set_new(meta, "ownerReferences", owner_refs(&j));
    free(name);

    mtm = mu_json_must(json_object());
    for (size_t t = 0; t < j.ntask; t++)
        set_int(mtm, j.task[t].name, j.task[t].min);
    mres = mu_json_must(json_object());
    for (int d = 0; d < rn.n; d++) {
        char q[64];

        if (mu_res_has(&sum, d))
            mu_json_set_str(mres, rn.name[d],
                    mu_quantity_format(rn.name[d], mu_res_get(&sum, d), q,
                                       sizeof(q)));
    }
    spec = mu_json_must(json_object());
    set_int(spec, "minMember", j.min);
    json_object_set_new(spec, "minTaskMember", mtm);
    mu_json_set_str(spec, "queue", j.queue);
    if (j.pclass)
        mu_json_set_str(spec, "priorityClassName", j.pclass);
    json_object_set_new(spec, "minResources", mres);
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
    job_release(&j);
    mu_resnames_release(&rn);
    return rc;
}
