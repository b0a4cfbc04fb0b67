#include "sim/sim.h"

#include "api/strict.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include "api/implicit.h"
#include "api/json.h"
#include "api/vcjob_expand.h"
#include "api/yaml.h"
#include "sched/cluster_dra.h"
#include "sched/cycle.h"

enum arr_kind {
    ARR_NODE,
    ARR_HYPERNODE,
    ARR_CLASS,
    ARR_SLICE,
    ARR_QUEUE,
    ARR_PC,
    ARR_TEMPLATE,
    ARR_CLAIM,
    ARR_PODGROUP,
    ARR_POD,
    ARR_JOB,
};

struct mu_arrival {
    int64_t at_ms;
    size_t seq;
    enum arr_kind kind;
    json_t *obj;   /* owned */
    char *where;   /* "file:line", owned */
    char *file;    /* owned */
    int line;      /* of the document (or List item) */
    json_t *lines; /* the document's key lines (mu_yaml_doc), a reference */
};

void mu_sim_init(struct mu_sim *s, struct mu_conf *conf, FILE *log)
{
    memset(s, 0, sizeof(*s));
    mu_cluster_init(&s->cluster);
    mu_topo_init(&s->topo);
    s->cluster.topo = &s->topo;
    s->conf = *conf;
    memset(conf, 0, sizeof(*conf));
    mu_cluster_set_devmaps(&s->cluster, s->conf.devmaps, s->conf.ndevmaps);
    s->until_ms = MU_SIM_DEFAULT_UNTIL_MS;
    s->log = log;
    mu_sb_init(&s->timeline);
    mu_map_init(&s->job_where);
    mu_map_init(&s->owners);
}

void mu_sim_print_table(struct mu_sim *s, FILE *out)
{
    mu_sim_output_table(&s->cluster, s->timeline.buf, out);
}

void mu_sim_print_json(struct mu_sim *s, FILE *out)
{
    mu_sim_output_json(&s->cluster, s->vcjobs, s->now_ms, out);
}

void mu_sim_print_yaml(struct mu_sim *s, FILE *out)
{
    mu_sim_output_yaml(&s->cluster, s->vcjobs, s->now_ms, out);
}

void mu_sim_release(struct mu_sim *s)
{
    size_t it;
    void *v;

    for (size_t i = 0; i < s->narr; i++) {
        json_decref(s->arr[i].obj);
        free(s->arr[i].where);
        free(s->arr[i].file);
        json_decref(s->arr[i].lines);
    }
    free(s->arr);
    mu_cluster_release(&s->cluster);
    mu_topo_free(&s->topo);
    mu_conf_release(&s->conf);
    mu_sb_release(&s->timeline);
    it = 0;
    while (mu_map_next(&s->job_where, &it, NULL, &v))
        free(v);
    mu_map_release(&s->job_where);
    it = 0;
    while (mu_map_next(&s->owners, &it, NULL, &v))
        json_decref(v);
    mu_map_release(&s->owners);
    json_decref(s->vcjobs);
    memset(s, 0, sizeof(*s));
}

static void logf_(struct mu_sim *s, const char *fmt, ...) MU_PRINTF(2, 3);
static void logf_(struct mu_sim *s, const char *fmt, ...)
{
    va_list ap;

    if (!s->log)
        return;
    va_start(ap, fmt);
    vfprintf(s->log, fmt, ap);
    va_end(ap);
    fputc('\n', s->log);
}

static void event(struct mu_sim *s, const char *fmt, ...) MU_PRINTF(2, 3);
static void event(struct mu_sim *s, const char *fmt, ...)
{
    va_list ap;
    int64_t sec = s->now_ms / 1000;

    if (s->quiet)
        return;
    mu_sb_addf(&s->timeline, "[%3lld:%02lld:%02lld] ", (long long)(sec / 3600),
               (long long)(sec / 60 % 60), (long long)(sec % 60));
    va_start(ap, fmt);
    mu_sb_vaddf(&s->timeline, fmt, ap);
    va_end(ap);
    mu_sb_add(&s->timeline, "\n");
}

/* "Kind ns/name" for messages. */
static char *obj_label(const json_t *o)
{
    const json_t *md = json_object_get(o, "metadata");
    const char *kind = mu_json_str(o, "kind");
    const char *ns = mu_json_str(md, "namespace");
    const char *name = mu_json_str(md, "name");

    return mu_xasprintf("%s %s%s%s", kind ? kind : "object", ns ? ns : "",
                        ns ? "/" : "", name ? name : "(no name)");
}

static int64_t submit_at(struct mu_sim *s, const json_t *o, const char *where)
{
    const json_t *ann = json_object_get(json_object_get(o, "metadata"),
                                        "annotations");
    const char *v = mu_json_str(ann, MU_ANN_SUBMIT_AT);
    struct mu_err err;
    int64_t ms = 0;

    if (v && mu_duration_parse(v, &ms, &err) < 0) {
        char *l = obj_label(o);

        logf_(s, "%s: %s: metadata.annotations.%s: %s", where, l,
              MU_ANN_SUBMIT_AT, err.msg);
        free(l);
        s->errors++;
        return 0;
    }
    return ms;
}

/* Where an object came from: its file, its document (for the lines of its
 * fields) and the line it starts at. */
struct source {
    const char *file;
    const struct mu_yaml_doc *doc;
    int line;
};

static void push(struct mu_sim *s, enum arr_kind k, json_t *o,
                 const char *where, const struct source *src)
{
    struct mu_arrival *a;

    mu_xgrow((void **)&s->arr, &s->cap_arr, s->narr + 1, sizeof(*s->arr));
    a = &s->arr[s->narr];
    a->seq = s->narr;
    a->kind = k;
    a->obj = json_incref(o);
    a->where = mu_xstrdup(where);
    a->file = mu_xstrdup_or_null(src ? src->file : NULL);
    a->line = src ? src->line : 0;
    a->lines = src && src->doc ? json_incref(src->doc->lines) : NULL;
    a->at_ms = submit_at(s, o, where);
    s->narr++;
}

struct strict_ctx {
    struct mu_sim *s;
    const char *file;
    const char *label;
    bool refused;
};

/* A finding of mu_strict_check: an invalid value refuses the object, as
 * the API server does; an unknown field is a warning, or with --strict
 * (kubectl --validate=strict) refuses it too. */
static void strict_found(void *ctx, int line, bool invalid, const char *msg)
{
    struct strict_ctx *x = ctx;

    if (invalid || x->s->strict) {
        logf_(x->s, "%s:%d: %s: %s%s", x->file, line, x->label,
              invalid ? "" : "strict decoding error: ", msg);
        x->refused = true;
    } else {
        logf_(x->s, "%s:%d: warning: %s: %s", x->file, line, x->label, msg);
    }
}

/* True when o may go on (nothing refused it). */
static bool strict_ok(struct mu_sim *s, const char *kind, json_t *o,
                      const struct source *src)
{
    struct strict_ctx x = {s, src ? src->file : "?", NULL, false};
    char *label;

    if (!src || !src->doc)
        return true;
    label = obj_label(o);
    x.label = label;
    /* the count, not only what reached the callback: past
     * MU_STRICT_MAX_FINDINGS an invalid value is counted, not shown */
    if (mu_strict_check(kind, o, src->doc, strict_found, &x) > 0)
        x.refused = true;
    if (x.refused) {
        logf_(s, "%s:%d: %s: skipped", x.file, src->line, label);
        s->errors++;
    }
    free(label);
    return !x.refused;
}

static char *owner_key(const char *kind, const char *ns, const char *name)
{
    return mu_xasprintf("%s/%s/%s", kind, ns, name);
}

/* Keeps an apps/v1 workload for the implicit PodGroups of the pods it
 * controls (implicit_group). Read at load: the owner of a pod exists
 * before the pod, so its muster.io/submit-at is not used. */
static void add_owner(struct mu_sim *s, json_t *o, const char *kind,
                      const char *where)
{
    struct mu_meta m;
    struct mu_err err;
    char *key;

    if (mu_meta_decode(json_object_get(o, "metadata"), true, &m, &err) < 0) {
        char *l = obj_label(o);

        logf_(s, "%s: %s: %s", where, l, err.msg);
        free(l);
        s->errors++;
        return;
    }
    key = owner_key(kind, m.ns, m.name);
    if (mu_map_get(&s->owners, key)) {
        logf_(s, "%s: %s %s/%s exists already", where, kind, m.ns, m.name);
        s->errors++;
    } else {
        mu_map_put(&s->owners, key, json_incref(o));
    }
    free(key);
    mu_meta_release(&m);
}

static int classify(struct mu_sim *s, json_t *o, const char *where,
                    const struct source *src)
{
    const char *api = mu_json_str(o, "apiVersion");
    const char *kind = mu_json_str(o, "kind");
    static const struct {
        const char *api, *kind;
        enum arr_kind k;
    } known[] = {
        {"v1", "Node", ARR_NODE},
        {"v1", "Pod", ARR_POD},
        {"scheduling.volcano.sh/v1beta1", "PodGroup", ARR_PODGROUP},
        {"scheduling.volcano.sh/v1beta1", "Queue", ARR_QUEUE},
        {"scheduling.k8s.io/v1", "PriorityClass", ARR_PC},
        {"batch.volcano.sh/v1alpha1", "Job", ARR_JOB},
        {"topology.volcano.sh/v1alpha1", "HyperNode", ARR_HYPERNODE},
        {"resource.k8s.io/v1", "DeviceClass", ARR_CLASS},
        {"resource.k8s.io/v1", "ResourceSlice", ARR_SLICE},
        {"resource.k8s.io/v1", "ResourceClaimTemplate", ARR_TEMPLATE},
        {"resource.k8s.io/v1", "ResourceClaim", ARR_CLAIM},
    };
    static const char *const owners[] = {"ReplicaSet", "StatefulSet",
                                         "Deployment"};

    if (!json_is_object(o)) {
        logf_(s, "%s: a document must be a Kubernetes object (a mapping)",
              where);
        s->errors++;
        return 0;
    }
    if (kind && !strcmp(kind, "List")) {
        json_t *items = json_object_get(o, "items");
        size_t i;
        json_t *it;

        json_array_foreach(items, i, it)
        {
            struct source item = src ? *src : (struct source){0};
            int line = src ? mu_yaml_key_line(src->doc, it, "kind") : 0;
            char *w;

            if (line > 0)
                item.line = line;
            w = src && src->file ? mu_xasprintf("%s:%d", src->file, item.line)
                                 : mu_xstrdup(where);
            classify(s, it, w, src ? &item : NULL);
            free(w);
        }
        return 0;
    }
    for (size_t i = 0; i < MU_ARRAY_LEN(known); i++) {
        if (kind && api && !strcmp(kind, known[i].kind) &&
            !strcmp(api, known[i].api)) {
            if (strict_ok(s, kind, o, src))
                push(s, known[i].k, o, where, src);
            return 0;
        }
    }
    for (size_t i = 0; i < MU_ARRAY_LEN(owners); i++) {
        if (kind && api && !strcmp(kind, owners[i]) &&
            !strcmp(api, "apps/v1")) {
            add_owner(s, o, kind, where);
            return 0;
        }
    }
    /* a kind it reads, under another apiVersion: say which one it reads */
    for (size_t i = 0; kind && i < MU_ARRAY_LEN(known) + MU_ARRAY_LEN(owners);
         i++) {
        const char *k = i < MU_ARRAY_LEN(known)
                            ? known[i].kind
                            : owners[i - MU_ARRAY_LEN(known)];
        const char *want = i < MU_ARRAY_LEN(known) ? known[i].api : "apps/v1";

        if (strcmp(kind, k))
            continue;
        logf_(s, "%s: %s %s: muster simulate reads %s as apiVersion %s, not "
                 "%s; skipped",
              where, api ? api : "(no apiVersion)", kind, kind, want,
              api ? api : "a missing one");
        s->errors++;
        return 0;
    }
    logf_(s, "%s: %s%s%s: muster simulate reads Node, Pod, PodGroup, Queue, "
             "PriorityClass, Job (batch.volcano.sh/v1alpha1), HyperNode "
             "(topology.volcano.sh/v1alpha1), DeviceClass, "
             "ResourceSlice, ResourceClaim, ResourceClaimTemplate "
             "(resource.k8s.io/v1) and ReplicaSet, StatefulSet, Deployment "
             "(apps/v1); skipped",
          where, api ? api : "(no apiVersion)", kind ? " " : "",
          kind ? kind : " (no kind)");
    s->errors++;
    return 0;
}

static int arr_cmp(const void *a, const void *b)
{
    const struct mu_arrival *x = a, *y = b;

    if (x->at_ms != y->at_ms)
        return x->at_ms < y->at_ms ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int load_docs(struct mu_sim *s, const char *name,
                     struct mu_yaml_docs *docs)
{
    for (size_t i = 0; i < docs->n; i++) {
        char *where = mu_xasprintf("%s:%d", name, docs->v[i].line);
        struct source src = {name, &docs->v[i], docs->v[i].line};

        classify(s, docs->v[i].root, where, &src);
        free(where);
    }
    mu_yaml_docs_release(docs);
    if (s->narr - s->next_arr > 1)
        qsort(s->arr + s->next_arr, s->narr - s->next_arr, sizeof(*s->arr),
              arr_cmp);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool manifest_name(const char *n)
{
    size_t len = strlen(n);

    if (n[0] == '.')
        return false;
    return (len > 5 && !strcmp(n + len - 5, ".yaml")) ||
           (len > 4 && !strcmp(n + len - 4, ".yml")) ||
           (len > 5 && !strcmp(n + len - 5, ".json"));
}

/* Every *.yaml, *.yml and *.json file directly in dir (not in its
 * subdirectories, as kubectl -f DIR without -R), in byte order of their
 * names. */
static int load_dir(struct mu_sim *s, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0;

    if (!d) {
        r = -errno;
        logf_(s, "%s: %s", dir, strerror(-r));
        s->errors++;
        return r;
    }
    while ((e = readdir(d))) {
        struct stat st;
        char *path;

        if (!manifest_name(e->d_name))
            continue;
        /* regular files (or links to one) only: a directory named x.yaml
         * is not read, nor a link back up the tree */
        path = mu_xasprintf("%s/%s", dir, e->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == MU_SIM_DIR_MAX_FILES) {
            free(path);
            logf_(s, "%s: more than %d manifest files; read none of them",
                  dir, MU_SIM_DIR_MAX_FILES);
            s->errors++;
            r = -E2BIG;
            goto out;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = mu_xrealloc(names, cap * sizeof(*names));
        }
        names[n++] = path;
    }
    if (!n) {
        logf_(s, "%s: a directory with no *.yaml, *.yml or *.json file in "
                 "it", dir);
        s->errors++;
        r = -ENOENT;
        goto out;
    }
    qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++) {
        int ri = mu_sim_load(s, names[i]);

        if (ri < 0 && !r)
            r = ri;
    }
out:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return r;
}

int mu_sim_load(struct mu_sim *s, const char *path)
{
    struct mu_yaml_docs docs;
    struct mu_err err;
    struct stat st;
    int r;

    if (strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode))
        return load_dir(s, path);
    mu_yaml_docs_init(&docs);
    r = mu_yaml_parse_file(path, &docs, &err);
    if (r < 0) {
        logf_(s, "%s", err.msg);
        s->errors++;
        return r;
    }
    return load_docs(s, path, &docs);
}

int mu_sim_load_text(struct mu_sim *s, const char *name, const char *text)
{
    struct mu_yaml_docs docs;
    struct mu_err err;
    int r;

    mu_yaml_docs_init(&docs);
    r = mu_yaml_parse(name, text, strlen(text), &docs, &err);
    if (r < 0) {
        logf_(s, "%s", err.msg);
        s->errors++;
        return r;
    }
    return load_docs(s, name, &docs);
}

/* The line of the field an error message starts with ("spec.minMember:
 * ..."), or the object's line. */
static int error_line(const struct mu_arrival *a, const char *msg)
{
    struct mu_yaml_doc d = {a->obj, a->line, a->lines};
    size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789_.[]");
    char path[256];

    if (!a->file || !n || n >= sizeof(path) || msg[n] != ':')
        return a->line;
    memcpy(path, msg, n);
    path[n] = '\0';
    return mu_yaml_path_line(&d, path);
}

static void reject(struct mu_sim *s, const struct mu_arrival *a,
                   const struct mu_err *err)
{
    char *l = obj_label(a->obj);

    if (a->file)
        logf_(s, "%s:%d: %s: %s", a->file, error_line(a, err->msg), l,
              err->msg);
    else
        logf_(s, "%s: %s: %s", a->where, l, err->msg);
    free(l);
    s->errors++;
}

static void set_uid(json_t *o, const char *kind)
{
    json_t *md = json_object_get(o, "metadata");
    char uid[37];

    if (!json_is_object(md) || mu_json_str(md, "uid"))
        return;
    mu_fake_uid(kind, mu_json_str(md, "namespace"),
                mu_json_str(md, "name") ? mu_json_str(md, "name") : "", uid);
    json_object_set_new(md, "uid", json_string(uid));
}

static void add_pod_json(struct mu_sim *s, const struct mu_arrival *a,
                         json_t *o);
static void note_source(struct mu_sim *s, const char *ns, const char *name,
                        const char *where);

static void add_job(struct mu_sim *s, const struct mu_arrival *a)
{
    json_t *job = NULL, *pg = NULL, *tasks;
    char *key = NULL;
    struct mu_err err;
    size_t ti;
    json_t *task;
    struct mu_podgroup dpg;

    set_uid(a->obj, "Job");
    if (mu_vcjob_default(a->obj, &job, &err) < 0 ||
        mu_vcjob_podgroup(job, &pg, &err) < 0) {
        reject(s, a, &err);
        goto out;
    }
    if (mu_podgroup_decode(pg, &s->cluster.rn, &dpg, &err) < 0) {
        reject(s, a, &err);
        goto out;
    }
    dpg.submit_at_ms = a->at_ms;
    dpg.meta.created = s->now_ms / 1000;
    key = mu_xasprintf("%s/%s", dpg.meta.ns ? dpg.meta.ns : "",
                       dpg.meta.name);
    note_source(s, dpg.meta.ns, dpg.meta.name, a->where);
    if (!mu_cluster_add_job(&s->cluster, &dpg, &err)) {
        mu_podgroup_release(&dpg);
        reject(s, a, &err);
        goto out;
    }
    /* listed by -o json once its PodGroup is in (a refused one is not) */
    if (!s->vcjobs)
        s->vcjobs = json_array();
    json_array_append_new(s->vcjobs,
                          json_pack("{s:O,s:s}", "job", job, "podgroup", key));
    tasks = json_object_get(json_object_get(job, "spec"), "tasks");
    json_array_foreach(tasks, ti, task) {
        json_int_t reps = json_integer_value(json_object_get(task, "replicas"));

        for (json_int_t r = 0; r < reps; r++) {
            json_t *pod = NULL;

            if (mu_vcjob_pod(job, ti, (int)r, 0, 0, 0, &pod, &err) < 0) {
                reject(s, a, &err);
                continue;
            }
            add_pod_json(s, a, pod);
            json_decref(pod);
        }
    }
out:
    free(key);
    json_decref(job);
    json_decref(pg);
}

/* The annotations of pod p's controlling owner when the input has it
 * (add_owner), else NULL. Borrowed. */
static const json_t *owner_annotations(struct mu_sim *s,
                                       const struct mu_pod *p)
{
    const json_t *o, *md;
    const char *uid;
    char *key;

    if (!mu_implicit_owner_plural(p))
        return NULL;
    key = owner_key(p->meta.owner_kind, p->meta.ns, p->meta.owner_name);
    o = mu_map_get(&s->owners, key);
    free(key);
    md = json_object_get(o, "metadata");
    uid = mu_json_str(md, "uid");
    if (uid && p->meta.owner_uid && strcmp(uid, p->meta.owner_uid))
        return NULL; /* another object of that name */
    return json_object_get(md, "annotations");
}

/* A pod without a group gets its own PodGroup, as Volcano's podgroup
 * controller makes one (api/implicit.h, the rule `muster serve` uses). */
static void implicit_group(struct mu_sim *s, const struct mu_arrival *a,
                           struct mu_pod *p)
{
    struct mu_podgroup pg;
    struct mu_err err, warn;
    struct mu_job *j;
    json_t *o;

    p->group = mu_implicit_group_name(p);
    if (mu_cluster_job(&s->cluster, p->meta.ns, p->group))
        return;
    o = mu_implicit_podgroup(p, owner_annotations(s, p), &s->cluster.rn,
                             &warn);
    if (warn.msg[0])
        logf_(s, "%s: %s", a->where, warn.msg);
    if (mu_podgroup_decode(o, &s->cluster.rn, &pg, &err) < 0) {
        json_decref(o);
        reject(s, a, &err);
        return;
    }
    json_decref(o);
    pg.meta.created = p->meta.created;
    j = mu_cluster_add_job(&s->cluster, &pg, NULL);
    if (j)
        j->implicit = true;
    else
        mu_podgroup_release(&pg);
}

/* A PriorityClass the cluster has now, or one Kubernetes makes itself. */
static bool known_priority_class(const struct mu_cluster *c, const char *name)
{
    if (!strcmp(name, "system-node-critical") ||
        !strcmp(name, "system-cluster-critical"))
        return true;
    for (size_t i = 0; i < c->npcs; i++)
        if (!strcmp(c->pcs[i].name, name))
            return true;
    return false;
}

static void add_pod_json(struct mu_sim *s, const struct mu_arrival *a,
                         json_t *o)
{
    struct mu_pod p;
    struct mu_task *t;
    struct mu_err err;
    struct mu_arrival tmp = *a;

    tmp.obj = o;
    if (o != a->obj)
        tmp.lines = NULL; /* made from a Job: not a node of its document */
    set_uid(o, "Pod");
    if (mu_pod_decode(o, &s->cluster.rn, &p, &err) < 0) {
        reject(s, &tmp, &err);
        return;
    }
    p.meta.created = s->now_ms / 1000;
    /* the API server's Priority admission refuses such a pod */
    if (p.priority_class && !known_priority_class(&s->cluster,
                                                  p.priority_class)) {
        mu_err_set(&err, -EINVAL,
                   "pods \"%s\" is forbidden: no PriorityClass with name %s "
                   "was found",
                   p.meta.name, p.priority_class);
        mu_pod_release(&p);
        reject(s, &tmp, &err);
        return;
    }
    if (!p.group)
        implicit_group(s, &tmp, &p);
    if (!(t = mu_cluster_add_task(&s->cluster, &p, &err))) {
        mu_pod_release(&p);
        reject(s, &tmp, &err);
        return;
    }
    /* the simulator's clock starts at 0: a pod that runs already started
     * when it arrived, whatever its startTime says */
    t->started_ms = s->now_ms;
}

static void arrive(struct mu_sim *s, struct mu_arrival *a)
{
    struct mu_err err;
    int r = 0;

    switch (a->kind) {
    case ARR_NODE: {
        struct mu_node n;

        if ((r = mu_node_decode(a->obj, &s->cluster.rn, &n, &err)) < 0)
            break;
        if (!mu_cluster_add_node(&s->cluster, &n, &err)) {
            mu_node_release(&n);
            r = -EEXIST;
        }
        break;
    }
    case ARR_QUEUE: {
        struct mu_queue_spec q;

        if ((r = mu_queue_decode(a->obj, &s->cluster.rn, &q, &err)) < 0)
            break;
        q.meta.created = s->now_ms / 1000;
        if (!mu_cluster_add_queue(&s->cluster, &q, &err)) {
            mu_queue_spec_release(&q);
            r = -EEXIST;
        }
        break;
    }
    case ARR_PC: {
        struct mu_priorityclass pc;

        if ((r = mu_priorityclass_decode(a->obj, &pc, &err)) < 0)
            break;
        mu_cluster_add_priorityclass(&s->cluster, &pc);
        break;
    }
    case ARR_PODGROUP: {
        struct mu_podgroup pg;

        if ((r = mu_podgroup_decode(a->obj, &s->cluster.rn, &pg, &err)) < 0)
            break;
        pg.meta.created = s->now_ms / 1000;
        note_source(s, pg.meta.ns, pg.meta.name, a->where);
        if (pg.phase == MU_PG_NONE)
            pg.phase = MU_PG_PENDING;
        if (!mu_cluster_add_job(&s->cluster, &pg, &err)) {
            mu_podgroup_release(&pg);
            r = -EEXIST;
        }
        break;
    }
    case ARR_HYPERNODE: {
        struct mu_hypernode hn;

        if ((r = mu_hypernode_decode(a->obj, &hn, &err)) < 0)
            break;
        if ((r = mu_topo_put(&s->topo, &hn)) < 0)
            mu_err_set(&err, r, "more than %d HyperNodes",
                       MU_TOPO_MAX_HYPERNODES);
        break;
    }
    case ARR_CLASS: {
        struct mu_devclass dc;

        if ((r = mu_devclass_decode(a->obj, &dc, &err)) < 0)
            break;
        mu_cluster_put_class(&s->cluster, &dc);
        break;
    }
    case ARR_SLICE: {
        struct mu_slice sl;

        if ((r = mu_slice_decode(a->obj, &sl, &err)) < 0)
            break;
        mu_cluster_put_slice(&s->cluster, &sl);
        break;
    }
    case ARR_TEMPLATE: {
        struct mu_claimtemplate t;

        if ((r = mu_claimtemplate_decode(a->obj, &t, &err)) < 0)
            break;
        mu_cluster_put_template(&s->cluster, &t);
        break;
    }
    case ARR_CLAIM: {
        struct mu_claim cl;

        if ((r = mu_claim_decode(a->obj, &cl, &err)) < 0)
            break;
        mu_cluster_put_claim(&s->cluster, &cl);
        break;
    }
    case ARR_POD:
        add_pod_json(s, a, a->obj);
        return;
    case ARR_JOB:
        add_job(s, a);
        return;
    }
    if (r < 0)
        reject(s, a, &err);
}

/* Volcano's scheduler makes the default queue when it is missing. */
static void ensure_default_queue(struct mu_sim *s)
{
    struct mu_queue_spec q;
    json_t *o;

    if (mu_cluster_queue(&s->cluster, "default"))
        return;
    o = mu_default_queue();
    if (mu_queue_decode(o, &s->cluster.rn, &q, NULL) == 0 &&
        !mu_cluster_add_queue(&s->cluster, &q, NULL))
        mu_queue_spec_release(&q);
    json_decref(o);
}

/* Remembers which file and line a PodGroup came from, for the report. */
static void note_source(struct mu_sim *s, const char *ns, const char *name,
                        const char *where)
{
    char *key = mu_xasprintf("%s/%s", ns ? ns : "", name);

    if (!mu_map_get(&s->job_where, key))
        mu_map_put(&s->job_where, key, mu_xstrdup(where));
    free(key);
}

/* After the run: a gang that can never start because of its own spec
 * (unknown queue, fewer pods than minMember) is named with the field. */
static void report_spec_problems(struct mu_sim *s)
{
    for (size_t i = 0; i < s->cluster.njobs; i++) {
        const struct mu_job *j = s->cluster.jobs[i];
        const char *where = mu_map_get(&s->job_where, j->key);

        if (!j->cond.reason || !where)
            continue;
        if (!strcmp(j->cond.reason, "QueueNotFound"))
            logf_(s, "%s: PodGroup %s: spec.queue: queue \"%s\" does not "
                     "exist", where, j->key, j->pg.queue);
        else if (!strcmp(j->cond.reason, "NotEnoughTasks"))
            logf_(s, "%s: PodGroup %s: spec.minMember: %d, but only %d pods "
                     "of the group exist", where, j->key, j->pg.min_member,
                  mu_job_valid_num(j));
    }
}

bool mu_sim_step(struct mu_sim *s)
{
    struct mu_cluster *c = &s->cluster;
    bool any = false;
    while (s->next_arr < s->narr && s->arr[s->next_arr].at_ms <= s->now_ms) {
        arrive(s, &s->arr[s->next_arr++]);
        any = true;
    }
    for (size_t i = 0; i < c->ntasks;) {
        struct mu_task *t = c->tasks[i];

        if (t->status == MU_TASK_RELEASING) {
            bool owned = t->pod.meta.owner_uid != NULL;

            event(s, "pod %s terminated%s", t->key,
                  owned ? "; its controller recreates it" : "");
            any = true;
            if (owned) {
                free(t->pod.node_name);
                t->pod.node_name = NULL;
                mu_task_unplace(c, t);
                i++;
            } else {
                mu_cluster_remove_task(c, t);
            }
            continue;
        }
        if (t->status == MU_TASK_RUNNING && t->pod.run_for_ms >= 0 &&
            t->started_ms + t->pod.run_for_ms <= s->now_ms) {
            mu_task_set_status(c, t, MU_TASK_SUCCEEDED);
            t->pod.phase = MU_POD_SUCCEEDED;
            event(s, "pod %s succeeded", t->key);
            any = true;
        }
        i++;
    }
    ensure_default_queue(s);
    mu_cluster_link(c);
    return any;
}

static int64_t next_event(struct mu_sim *s)
{
    const struct mu_cluster *c = &s->cluster;
    int64_t next = INT64_MAX;

    if (s->next_arr < s->narr)
        next = s->arr[s->next_arr].at_ms;
    for (size_t i = 0; i < c->ntasks; i++) {
        const struct mu_task *t = c->tasks[i];

        if (t->status == MU_TASK_RUNNING && t->pod.run_for_ms >= 0 &&
            t->started_ms + t->pod.run_for_ms < next)
            next = t->started_ms + t->pod.run_for_ms;
    }
    return next;
}

static bool apply(struct mu_sim *s, struct mu_cycle_out *o)
{
    struct mu_cluster *c = &s->cluster;

    for (size_t i = 0; i < o->nchanged; i++) {
        struct mu_job *j = o->changed[i];

        if (j->cond.type && !strcmp(j->cond.type, "Unschedulable"))
            event(s, "podgroup %s %s: %s", j->key, mu_pg_phase_name(j->phase),
                  j->cond.message);
        else
            event(s, "podgroup %s %s", j->key, mu_pg_phase_name(j->phase));
    }
    for (size_t i = 0; i < o->nevicts; i++) {
        const struct mu_eviction *e = &o->evicts[i];

        event(s, "evict pod %s from %s (%s for %s)", e->victim->key,
              e->victim->node->spec.meta.name, e->action, e->for_job->key);
    }
    for (size_t i = 0; i < o->nbinds; i++) {
        struct mu_task *t = o->binds[i];

        event(s, "bind pod %s to %s", t->key, t->node->spec.meta.name);
        free(t->pod.node_name);
        t->pod.node_name = mu_xstrdup(t->node->spec.meta.name);
        t->pod.phase = MU_POD_RUNNING;
        t->started_ms = s->now_ms;
        mu_task_set_status(c, t, MU_TASK_RUNNING);
    }
    return o->nbinds || o->nevicts || o->nchanged;
}

void mu_sim_run(struct mu_sim *s)
{
    bool busy = true;

    while (s->now_ms <= s->until_ms) {
        struct mu_cycle_out out;
        bool changed;
        int64_t wake;

        changed = mu_sim_step(s);
        mu_cycle_run(&s->cluster, &s->conf, s->now_ms, &out);
        s->cycles++;
        if (s->topo.warn_sig != s->topo_logged) {
            s->topo_logged = s->topo.warn_sig;
            for (size_t i = 0; i < s->topo.nwarn; i++)
                logf_(s, "warning: %s", s->topo.warn[i]);
        }
        changed |= apply(s, &out);
        wake = out.wake_ms;
        mu_cycle_out_release(&out);
        if (changed || busy) {
            busy = changed;
            s->now_ms += MU_SIM_PERIOD_MS;
            continue;
        }
        {
            int64_t next = MU_MIN(next_event(s), wake);

            if (next == INT64_MAX)
                break;
            s->now_ms = next > s->now_ms ? next : s->now_ms + MU_SIM_PERIOD_MS;
            busy = true;
        }
    }
    report_spec_problems(s);
}
