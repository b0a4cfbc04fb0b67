/* inspect.c - muster get and muster explain (inspect.h). */
#include "cli/inspect.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/table.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/paths.h"
#include "sched/report.h"

static const char usage_get[] =
    "usage: muster get queues|gangs [-n NAMESPACE | -A] [-o table|json|yaml]\n"
    "                  [--kubeconfig FILE] [--context NAME]\n"
    "                  [--muster-url URL | --service NS/NAME:PORT]\n"
    "  queues: each queue's state, weight, deserved, allocated and\n"
    "          capability, and its pending and running gangs\n"
    "  gangs:  each gang's queue, phase, members running, wait and reason\n"
    "          (in -n NAMESPACE, the kubeconfig's namespace by default;\n"
    "          -A: every namespace)\n";

static const char usage_explain[] =
    "usage: muster explain podgroup/NAME|vcjob/NAME [-n NAMESPACE]\n"
    "                      [-o table|json|yaml] [--kubeconfig FILE]\n"
    "                      [--context NAME]\n"
    "                      [--muster-url URL | --service NS/NAME:PORT]\n"
    "  why the gang waits, with numbers: the reason muster gives, what\n"
    "  stands in its way (its queue's capability or share, room on the\n"
    "  nodes its pods may use), the gangs ahead of it in its queue, and\n"
    "  its queue's figures. Kinds: podgroup (pg, podgroups), vcjob (job,\n"
    "  vj, vcjobs)\n";

struct opts {
    const char *kubeconfig, *context, *ns, *url, *service, *output;
    bool all;
    const char *arg; /* the one positional argument */
};

struct src {
    const struct opts *o;
    struct mu_kube_config cfg;
    bool cfg_loaded;
    struct mu_kube *api;    /* the API server */
    struct mu_kube *direct; /* --muster-url */
    char *why;              /* why muster was not reached */
};

static int parse(int argc, char **argv, struct opts *o, const char *usage)
{
    memset(o, 0, sizeof(*o));
    o->service = MU_CLI_SERVICE;
    o->output = "table";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;

        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if (!strcmp(a, "-A") || !strcmp(a, "--all-namespaces")) {
            o->all = true;
            continue;
        }
        if (!strcmp(a, "-n") || !strcmp(a, "--namespace"))
            slot = &o->ns;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            slot = &o->output;
        else if (!strcmp(a, "--kubeconfig"))
            slot = &o->kubeconfig;
        else if (!strcmp(a, "--context"))
            slot = &o->context;
        else if (!strcmp(a, "--muster-url"))
            slot = &o->url;
        else if (!strcmp(a, "--service"))
            slot = &o->service;
        if (slot) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "muster %s: %s needs a value\n%s", argv[0], a,
                        usage);
                return 2;
            }
            *slot = argv[++i];
            continue;
        }
        if (a[0] == '-' || o->arg) {
            fprintf(stderr, "muster %s: unexpected argument %s\n%s", argv[0],
                    a, usage);
            return 2;
        }
        o->arg = a;
    }
    if (!o->arg) {
        fprintf(stderr, "muster %s: what to %s?\n%s", argv[0], argv[0],
                usage);
        return 2;
    }
    if (strcmp(o->output, "table") && strcmp(o->output, "json") &&
        strcmp(o->output, "yaml")) {
        fprintf(stderr, "muster %s: -o %s: want table, json or yaml\n",
                argv[0], o->output);
        return 2;
    }
    if (o->all && o->ns) {
        fprintf(stderr, "muster %s: -n and -A go not together\n", argv[0]);
        return 2;
    }
    return 0;
}

static int load_cfg(struct src *s, struct mu_err *err)
{
    int r;

    if (s->cfg_loaded)
        return 0;
    r = mu_kube_config_load(s->o->kubeconfig, s->o->context, &s->cfg, err);
    s->cfg_loaded = r == 0;
    return r;
}

static const char *namespace_of(struct src *s)
{
    struct mu_err err;

    if (s->o->ns)
        return s->o->ns;
    if (load_cfg(s, &err) == 0 && s->cfg.namespace)
        return s->cfg.namespace;
    return "default";
}

static int api_client(struct src *s, struct mu_err *err)
{
    struct mu_kube_opts ko = {.timeout_ms = MU_CLI_TIMEOUT_S * 1000,
                              .user_agent = "muster-cli"};
    int r;

    if (s->api)
        return 0;
    if ((r = load_cfg(s, err)) < 0)
        return r;
    return mu_kube_new(&s->cfg, &ko, &s->api, err);
}

/* GET path?fresh=1 (the state of muster's last cycle); while muster
 * answers 503 "try again" (it makes a fresh report after its next cycle),
 * again every MU_CLI_RETRY_MS, MU_CLI_RETRIES times. */
static int get_fresh(struct mu_kube *k, const char *path, json_t **out,
                     struct mu_err *err)
{
    int r;

    static const struct mu_kube_param fresh[] = {{"fresh", "1"},
                                                 {NULL, NULL}};

    for (int i = 0;; i++) {
        r = mu_kube_get(k, path, fresh, out, err);
        if (r != -EIO || !strstr(err->msg, "try again") ||
            i + 1 >= MU_CLI_RETRIES)
            return r;
        nanosleep(&(struct timespec){0, MU_CLI_RETRY_MS * 1000000L}, NULL);
    }
}

/* GET path (a /debug one) from muster itself: --muster-url, else the API
 * server's service proxy. */
static int from_muster(struct src *s, const char *path, json_t **out,
                       struct mu_err *err)
{
    struct mu_kube_opts ko = {.timeout_ms = MU_CLI_TIMEOUT_S * 1000,
                              .user_agent = "muster-cli"};
    char ns[254], name[254], port[64];
    char *proxy;
    int r;

    if (s->o->url) {
        if (!s->direct) {
            struct mu_kube_config c;

            mu_kube_config_init(&c);
            c.server = mu_xstrdup(s->o->url);
            while (strlen(c.server) > 1 &&
                   c.server[strlen(c.server) - 1] == '/')
                c.server[strlen(c.server) - 1] = '\0';
            r = mu_kube_new(&c, &ko, &s->direct, err);
            mu_kube_config_release(&c);
            if (r < 0)
                return r;
        }
        return get_fresh(s->direct, path, out, err);
    }
    if (sscanf(s->o->service, "%253[^/]/%253[^:]:%63s", ns, name, port) != 3)
        return mu_err_set(err, -EINVAL,
                          "--service %s: want NAMESPACE/NAME:PORT",
                          s->o->service);
    if ((r = api_client(s, err)) < 0)
        return r;
    proxy = mu_xasprintf("/api/v1/namespaces/%s/services/http:%s:%s/proxy%s",
                         ns, name, port, path);
    r = get_fresh(s->api, proxy, out, err);
    free(proxy);
    return r;
}

/* The quantities of a resource map, as "k=v,k=v" (or "-"). */
static char *res_text(const json_t *m)
{
    struct mu_sb sb;
    const char *k;
    json_t *v;

    mu_sb_init(&sb);
    json_object_foreach((json_t *)m, k, v)
    {
        /* a Queue's spec as written may hold numbers (16), muster's
         * report strings ("16") */
        if (json_is_string(v))
            mu_sb_addf(&sb, "%s%s=%s", sb.len ? "," : "", k,
                       json_string_value(v));
        else if (json_is_integer(v))
            mu_sb_addf(&sb, "%s%s=%lld", sb.len ? "," : "", k,
                       (long long)json_integer_value(v));
        else if (json_is_real(v))
            mu_sb_addf(&sb, "%s%s=%g", sb.len ? "," : "", k,
                       json_real_value(v));
        else
            mu_sb_addf(&sb, "%s%s=?", sb.len ? "," : "", k);
    }
    if (!sb.len)
        mu_sb_add(&sb, "-");
    return mu_sb_detach(&sb);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s ? s : "";
}

static long long num(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* A wait the way kubectl prints an age: 45s, 5m3s, 2h5m, 3d4h. */
static void age(long long s, char *buf, size_t n)
{
    if (s < 0)
        snprintf(buf, n, "-");
    else if (s < 60)
        snprintf(buf, n, "%llds", s);
    else if (s < 3600)
        snprintf(buf, n, "%lldm%llds", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, n, "%lldh%lldm", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, n, "%lldd%lldh", s / 86400, s % 86400 / 3600);
}

/* Queue objects as the report's queues, for when muster is not reached. */
static json_t *queues_from_status(const json_t *list)
{
    json_t *out = json_array(), *it;
    size_t i;

    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        json_t *meta = json_object_get(it, "metadata");
        json_t *spec = json_object_get(it, "spec");
        json_t *st = json_object_get(it, "status");
        json_t *cap = json_object_get(spec, "capability");
        json_t *alloc = json_object_get(st, "allocated");
        json_t *w = json_object_get(spec, "weight");
        json_t *rec = json_object_get(spec, "reclaimable");

        json_array_append_new(
            out,
            json_pack("{s:s,s:s,s:I,s:b,s:o,s:o,s:I,s:I}", "name",
                      str(meta, "name"), "state",
                      str(st, "state")[0] ? str(st, "state") : "Open",
                      "weight", json_is_integer(w) ? json_integer_value(w) : 1,
                      "reclaimable", rec ? json_is_true(rec) : 1,
                      "capability",
                      cap ? json_deep_copy(cap) : json_object(), "allocated",
                      alloc ? json_deep_copy(alloc) : json_object(),
                      "pendingGangs",
                      (json_int_t)(num(st, "pending") + num(st, "inqueue")),
                      "runningGangs", (json_int_t)num(st, "running")));
    }
    return out;
}

/* The last condition's message of a PodGroup status, or "". */
static const char *pg_reason(const json_t *st)
{
    const json_t *conds = json_object_get(st, "conditions");
    size_t n = json_array_size(conds);

    return n ? str(json_array_get(conds, n - 1), "message") : "";
}

/* PodGroups as the report's gangs (priority unknown: 0). */
static json_t *gangs_from_status(const json_t *list)
{
    json_t *out = json_array(), *it;
    size_t i;

    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        json_t *meta = json_object_get(it, "metadata");
        json_t *spec = json_object_get(it, "spec");
        json_t *st = json_object_get(it, "status");
        json_t *owners = json_object_get(meta, "ownerReferences"), *ow;
        long long min = num(spec, "minMember"), run = num(st, "running");
        json_t *g = json_pack(
            "{s:s,s:s,s:s,s:s,s:I,s:i,s:s,s:{s:I,s:I,s:I},s:s}", "namespace",
            str(meta, "namespace"), "name", str(meta, "name"), "queue",
            str(spec, "queue")[0] ? str(spec, "queue") : "default", "phase",
            str(st, "phase")[0] ? str(st, "phase") : "Pending", "minMember",
            (json_int_t)min, "priority", 0, "created",
            str(meta, "creationTimestamp"), "pods", "running",
            (json_int_t)run, "succeeded", (json_int_t)num(st, "succeeded"),
            "failed", (json_int_t)num(st, "failed"), "reason",
            pg_reason(st));
        size_t k;

        json_array_foreach(owners, k, ow)
        {
            if (!strcmp(str(ow, "kind"), "Job"))
                json_object_set_new(g, "vcjob",
                                    json_string(str(ow, "name")));
        }
        if (run + num(st, "succeeded") < min)
            json_object_set_new(g, "needPods",
                                json_integer(min - run - num(st, "succeeded")));
        json_array_append_new(out, g);
    }
    return out;
}

/* The report's {queues, gangs} from the objects' status; ns NULL: every
 * namespace. */
static int from_status(struct src *s, const char *ns, json_t **snap,
                       struct mu_err *err)
{
    json_t *ql = NULL, *pl = NULL;
    char *qp = mu_api_path(MU_API_QUEUE, NULL, NULL, NULL);
    char *pp = mu_api_path(MU_API_PODGROUP, ns, NULL, NULL);
    int r;

    if ((r = api_client(s, err)) < 0 ||
        (r = mu_kube_get(s->api, qp, NULL, &ql, err)) < 0 ||
        (r = mu_kube_get(s->api, pp, NULL, &pl, err)) < 0)
        goto out;
    *snap = json_pack("{s:o,s:o}", "queues", queues_from_status(ql), "gangs",
                      gangs_from_status(pl));
out:
    json_decref(ql);
    json_decref(pl);
    free(qp);
    free(pp);
    return r;
}

static void say_fallback(const struct src *s, const char *why)
{
    fprintf(stderr,
            "muster: muster not reached (%s): from the PodGroups' and "
            "Queues' status\n",
            why);
    (void)s;
}

/* Prints j as YAML (block style; strings as JSON strings, valid YAML). */
static void yaml(FILE *f, const json_t *j, int indent, bool in_seq);

static void yaml_scalar(FILE *f, const json_t *j)
{
    char *s = json_dumps(j, JSON_ENCODE_ANY);

    fprintf(f, "%s\n", s ? s : "null");
    free(s);
}

static void yaml(FILE *f, const json_t *j, int indent, bool in_seq)
{
    const char *k;
    json_t *v;
    size_t i;
    bool first = true;

    if (json_is_object(j) && json_object_size(j)) {
        json_object_foreach((json_t *)j, k, v)
        {
            json_t *ks = json_string(k);
            char *key = json_dumps(ks, JSON_ENCODE_ANY);

            json_decref(ks);
            if (!(in_seq && first))
                fprintf(f, "%*s", indent, "");
            first = false;
            fprintf(f, "%s:", key);
            free(key);
            if ((json_is_object(v) && json_object_size(v)) ||
                (json_is_array(v) && json_array_size(v))) {
                fputc('\n', f);
                yaml(f, v, indent + 2, false);
            } else {
                fputc(' ', f);
                yaml(f, v, indent + 2, false);
            }
        }
    } else if (json_is_array(j) && json_array_size(j)) {
        json_array_foreach(j, i, v)
        {
            fprintf(f, "%*s- ", indent, "");
            if ((json_is_object(v) && json_object_size(v)))
                yaml(f, v, indent + 2, true);
            else
                yaml(f, v, indent + 2, false);
        }
    } else if (json_is_object(j)) {
        fputs("{}\n", f);
    } else if (json_is_array(j)) {
        fputs("[]\n", f);
    } else {
        yaml_scalar(f, j);
    }
}

static void emit(const struct opts *o, const json_t *j)
{
    if (!strcmp(o->output, "yaml")) {
        yaml(stdout, j, 0, false);
    } else {
        char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

        printf("%s\n", s ? s : "null");
        free(s);
    }
}

static void print_queues(const json_t *qs)
{
    struct mu_table t;
    const json_t *q;
    size_t i;

    mu_table_init(&t, 8);
    mu_table_add(&t, "NAME", "STATE", "WEIGHT", "DESERVED", "ALLOCATED",
                 "CAPABILITY", "PENDING", "RUNNING");
    json_array_foreach(qs, i, q)
    {
        char w[24], p[24], r[24];
        char *d = json_object_get(q, "deserved")
                      ? res_text(json_object_get(q, "deserved"))
                      : mu_xstrdup("-");
        char *a = res_text(json_object_get(q, "allocated"));
        char *c = res_text(json_object_get(q, "capability"));

        snprintf(w, sizeof(w), "%lld", num(q, "weight"));
        snprintf(p, sizeof(p), "%lld", num(q, "pendingGangs"));
        snprintf(r, sizeof(r), "%lld", num(q, "runningGangs"));
        mu_table_add(&t, str(q, "name"), str(q, "state"), w, d, a, c, p, r);
        free(d);
        free(a);
        free(c);
    }
    mu_table_print(&t, stdout);
    mu_table_release(&t);
}

static void print_gangs(const json_t *gs, bool all, const char *ns)
{
    struct mu_table t;
    const json_t *g;
    size_t i;

    mu_table_init(&t, 7);
    mu_table_add(&t, "NAMESPACE", "NAME", "QUEUE", "PHASE", "RUNNING",
                 "WAIT", "REASON");
    json_array_foreach(gs, i, g)
    {
        char run[48], wait[32];
        const json_t *pods = json_object_get(g, "pods");

        if (!all && strcmp(str(g, "namespace"), ns))
            continue;
        snprintf(run, sizeof(run), "%lld/%lld", num(pods, "running"),
                 num(g, "minMember"));
        if (json_object_get(g, "waitSeconds"))
            age(num(g, "waitSeconds"), wait, sizeof(wait));
        else
            snprintf(wait, sizeof(wait), "-");
        mu_table_add(&t, str(g, "namespace"), str(g, "name"), str(g, "queue"),
                     str(g, "phase"), run, wait,
                     str(g, "reason")[0] ? str(g, "reason") : "-");
    }
    if (t.nrows == 1)
        fprintf(stderr, "No gangs found%s%s.\n", all ? "" : " in namespace ",
                all ? "" : ns);
    else
        mu_table_print(&t, stdout);
    mu_table_release(&t);
}

/* gangs filtered to one namespace (a new array), or all of them. */
static json_t *in_namespace(const json_t *gs, bool all, const char *ns)
{
    json_t *out = json_array(), *g;
    size_t i;

    json_array_foreach(gs, i, g)
    {
        if (all || !strcmp(str(g, "namespace"), ns))
            json_array_append(out, g);
    }
    return out;
}

static void src_release(struct src *s)
{
    mu_kube_free(s->api);
    mu_kube_free(s->direct);
    mu_kube_config_release(&s->cfg);
    free(s->why);
}

int mu_cli_get(int argc, char **argv)
{
    struct opts o;
    struct src s = {.o = &o};
    struct mu_err err;
    json_t *j = NULL, *snap = NULL;
    bool queues;
    int r = parse(argc, argv, &o, usage_get), rc = 1;
    const char *ns;

    if (r)
        return r == 1 ? 0 : r;
    mu_kube_config_init(&s.cfg);
    queues = !strcmp(o.arg, "queues") || !strcmp(o.arg, "queue") ||
             !strcmp(o.arg, "q");
    if (!queues && strcmp(o.arg, "gangs") && strcmp(o.arg, "gang") &&
        strcmp(o.arg, "podgroups") && strcmp(o.arg, "pg")) {
        fprintf(stderr, "muster get: \"%s\": want queues or gangs\n%s",
                o.arg, usage_get);
        src_release(&s);
        return 2;
    }
    ns = namespace_of(&s);
    if (from_muster(&s, queues ? "/debug/queues" : "/debug/gangs", &j,
                    &err) < 0) {
        say_fallback(&s, err.msg);
        if (from_status(&s, o.all ? NULL : ns, &snap, &err) < 0) {
            fprintf(stderr, "muster get: %s\n", err.msg);
            goto out;
        }
        j = json_incref(json_object_get(snap, queues ? "queues" : "gangs"));
    }
    if (!json_is_array(j)) {
        fprintf(stderr, "muster get: the answer is not a list\n");
        goto out;
    }
    if (!strcmp(o.output, "table")) {
        if (queues)
            print_queues(j);
        else
            print_gangs(j, o.all, ns);
    } else {
        json_t *f = queues ? json_incref(j) : in_namespace(j, o.all, ns);

        emit(&o, f);
        json_decref(f);
    }
    rc = 0;
out:
    json_decref(j);
    json_decref(snap);
    src_release(&s);
    return rc;
}

static void print_explain(const json_t *a)
{
    const json_t *g = json_object_get(a, "gang");
    const json_t *q = json_object_get(a, "queue");
    const json_t *ahead = json_object_get(a, "aheadGangs"), *v;
    const json_t *pods = json_object_get(g, "pods");
    char wait[32];
    size_t i;

    printf("PodGroup %s/%s", str(g, "namespace"), str(g, "name"));
    if (json_object_get(g, "vcjob"))
        printf(" (vcjob %s)", str(g, "vcjob"));
    printf(": %s in queue %s, %lld of %lld members running", str(g, "phase"),
           str(g, "queue"), num(pods, "running"), num(g, "minMember"));
    if (json_object_get(g, "waitSeconds")) {
        age(num(g, "waitSeconds"), wait, sizeof(wait));
        printf(", waiting %s", wait);
    }
    printf("\n");
    printf("Reason:   %s\n", str(g, "reason")[0] ? str(g, "reason") : "-");
    if (json_object_get(g, "unblock"))
        printf("Blocked:  %s\n", str(g, "unblock"));
    else if (!json_object_get(g, "needPods"))
        printf("Blocked:  nothing: it runs its minMember\n");
    if (json_object_get(g, "podRequest")) {
        char *r = res_text(json_object_get(g, "podRequest"));

        printf("Pod asks: %s\n", r);
        free(r);
    }
    printf("Ahead:    %lld gang(s) in queue %s", num(a, "ahead"),
           str(g, "queue"));
    json_array_foreach(ahead, i, v)
    {
        printf("%s%s", i ? ", " : ": ", json_string_value(v));
    }
    if (num(a, "ahead") > (long long)json_array_size(ahead))
        printf(", ...");
    printf("\n");
    if (json_is_object(q)) {
        char *d = json_object_get(q, "deserved")
                      ? res_text(json_object_get(q, "deserved"))
                      : mu_xstrdup("-");
        char *al = res_text(json_object_get(q, "allocated"));
        char *c = res_text(json_object_get(q, "capability"));

        printf("Queue %s: %s, weight %lld, deserved %s, allocated %s, "
               "capability %s; %lld pending, %lld running gang(s)\n",
               str(q, "name"), str(q, "state"), num(q, "weight"), d, al, c,
               num(q, "pendingGangs"), num(q, "runningGangs"));
        free(d);
        free(al);
        free(c);
    } else {
        printf("Queue %s: not found\n", str(g, "queue"));
    }
}

/* The PodGroup name of vcjob name in gangs, or NULL. */
static const char *vcjob_group(const json_t *gangs, const char *ns,
                               const char *name)
{
    const json_t *g;
    size_t i;

    json_array_foreach(gangs, i, g)
    {
        if (!strcmp(str(g, "namespace"), ns) && !strcmp(str(g, "vcjob"), name))
            return str(g, "name");
    }
    return NULL;
}

static bool has_gang(const json_t *gangs, const char *ns, const char *name)
{
    const json_t *g;
    size_t i;

    json_array_foreach(gangs, i, g)
    {
        if (!strcmp(str(g, "namespace"), ns) && !strcmp(str(g, "name"), name))
            return true;
    }
    return false;
}

int mu_cli_explain(int argc, char **argv)
{
    struct opts o;
    struct src s = {.o = &o};
    struct mu_err err;
    json_t *a = NULL, *snap = NULL, *gangs = NULL;
    char kind[32], *path = NULL, *group = NULL;
    const char *name, *ns, *slash;
    bool vcjob, reached = true;
    int status = 0, r = parse(argc, argv, &o, usage_explain), rc = 1;

    if (r)
        return r == 1 ? 0 : r;
    mu_kube_config_init(&s.cfg);
    slash = strchr(o.arg, '/');
    if (!slash || slash == o.arg || !slash[1] ||
        (size_t)(slash - o.arg) >= sizeof(kind)) {
        fprintf(stderr, "muster explain: \"%s\": want KIND/NAME\n%s", o.arg,
                usage_explain);
        src_release(&s);
        return 2;
    }
    snprintf(kind, sizeof(kind), "%.*s", (int)(slash - o.arg), o.arg);
    name = slash + 1;
    vcjob = !strcmp(kind, "vcjob") || !strcmp(kind, "vcjobs") ||
            !strcmp(kind, "job") || !strcmp(kind, "vj");
    if (!vcjob && strcmp(kind, "podgroup") && strcmp(kind, "podgroups") &&
        strcmp(kind, "pg")) {
        fprintf(stderr, "muster explain: kind \"%s\": want podgroup or "
                        "vcjob\n%s",
                kind, usage_explain);
        src_release(&s);
        return 2;
    }
    ns = namespace_of(&s);
    if (from_muster(&s, "/debug/gangs", &gangs, &err) < 0) {
        reached = false;
        say_fallback(&s, err.msg);
        if (from_status(&s, NULL, &snap, &err) < 0) {
            fprintf(stderr, "muster explain: %s\n", err.msg);
            goto out;
        }
        gangs = json_incref(json_object_get(snap, "gangs"));
    }
    if (vcjob) {
        const char *pg = vcjob_group(gangs, ns, name);

        if (!pg) {
            fprintf(stderr,
                    "muster explain: no PodGroup of vcjob %s/%s%s\n", ns,
                    name, reached ? " in muster's cache" : "");
            goto out;
        }
        group = mu_xstrdup(pg);
    } else {
        group = mu_xstrdup(name);
    }
    if (!has_gang(gangs, ns, group)) {
        fprintf(stderr, "muster explain: no PodGroup %s/%s%s\n", ns, group,
                reached ? " in muster's cache" : "");
        goto out;
    }
    path = mu_xasprintf("/debug/gang/%s/%s", ns, group);
    if (reached) {
        if (from_muster(&s, path, &a, &err) < 0) {
            fprintf(stderr, "muster explain: %s\n", err.msg);
            goto out;
        }
    } else {
        char *text = mu_report_answer(snap, path, &status);

        a = json_loads(text, 0, NULL);
        free(text);
        if (status != 200 || !a) {
            fprintf(stderr, "muster explain: no PodGroup %s/%s\n", ns,
                    group);
            goto out;
        }
    }
    if (!strcmp(o.output, "table"))
        print_explain(a);
    else
        emit(&o, a);
    rc = 0;
out:
    json_decref(a);
    json_decref(gangs);
    json_decref(snap);
    free(path);
    free(group);
    src_release(&s);
    return rc;
}
