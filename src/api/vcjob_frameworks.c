/*
 * vcjob_frameworks.c - the pytorch, tensorflow and mpi plugins' pod edits
 * (vcjob_frameworks.h).
 */
#include "api/vcjob_frameworks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/json.h"

/* The task named name, or NULL. */
static const struct task *task_named(const struct job *j, const char *name)
{
    for (size_t i = 0; i < j->ntask; i++)
        if (!strcmp(j->task[i].name, name))
            return &j->task[i];
    return NULL;
}

static const char *tmpl_str(const struct task *t, const char *key)
{
    const char *s = json_string_value(
        json_object_get(json_object_get(t->tmpl, "spec"), key));

    return s && *s ? s : NULL;
}

/* Replica i's host: "<hostname>.<subdomain>" (helpers.MakeDomainName). */
static char *host(const struct job *j, const struct task *t, int i)
{
    const char *h = tmpl_str(t, "hostname"), *s = tmpl_str(t, "subdomain");

    if (!s)
        s = j->name;
    return h ? mu_xasprintf("%s.%s", h, s)
             : mu_xasprintf("%s-%s-%d.%s", j->name, t->name, i, s);
}

static void add_env(json_t *c, const char *name, const char *value)
{
    json_t *v = mu_json_must(json_object());

    mu_json_set_str(v, "name", name);
    mu_json_set_str(v, "value", value);
    json_array_append_new(mu_json_child(c, "env", true), v);
}

/* A port numbered port, unless c has one with that number already. */
static void open_port(json_t *c, const char *name, int port)
{
    json_t *ports = mu_json_child(c, "ports", true), *p;
    size_t i;

    json_array_foreach (ports, i, p)
        if (json_integer_value(json_object_get(p, "containerPort")) == port)
            return;
    p = mu_json_must(json_object());
    mu_json_set_str(p, "name", name);
    mu_json_set_int(p, "containerPort", port);
    json_array_append_new(ports, p);
}

static void wait_for_master(json_t *spec, const struct mu_pytorch_args *a,
                            const char *addr)
{
    json_t *inits = mu_json_child(spec, "initContainers", true), *c;
    json_t *cmd;
    size_t i;
    char *script;

    json_array_foreach (inits, i, c)
        if (!mu_strcmp0(json_string_value(json_object_get(c, "name")),
                        "wait-for-master"))
            return;
    script = mu_xasprintf(
        "echo \"Waiting for master node %s:%d to be ready...\"\n"
        "TIMEOUT=%d\nELAPSED=0\n"
        "until { nc -z %s %d || echo > /dev/tcp/%s/%d; } 2>/dev/null; do\n"
        "  if [ $ELAPSED -ge $TIMEOUT ]; then\n"
        "    echo \"Timeout waiting for master after ${TIMEOUT} seconds\"\n"
        "    exit 1\n  fi\n"
        "  echo \"Master not ready yet, retrying in 2 seconds... (elapsed: "
        "${ELAPSED}s)\"\n"
        "  sleep 2\n  ELAPSED=$((ELAPSED + 2))\ndone\n"
        "echo \"Master node is ready!\"",
        addr, a->port, a->wait_timeout, addr, a->port, addr, a->port);
    c = mu_json_must(json_object());
    mu_json_set_str(c, "name", "wait-for-master");
    mu_json_set_str(c, "image", a->wait_image);
    cmd = mu_json_must(json_array());
    json_array_append_new(cmd, mu_json_must(json_string("sh")));
    json_array_append_new(cmd, mu_json_must(json_string("-c")));
    json_array_append_new(cmd, mu_json_must(json_string(script)));
    json_object_set_new(c, "command", cmd);
    json_array_append_new(inits, c);
    free(script);
}

static void pytorch_pod(const struct job *j, const struct task *t, int index,
                        json_t *spec)
{
    const struct mu_pytorch_args *a = &j->pytorch_args;
    const struct task *m = task_named(j, a->master);
    json_t *cs = json_object_get(spec, "containers"), *c;
    bool worker = !strcmp(t->name, a->worker);
    bool master = !strcmp(t->name, a->master);
    char *addr, port[16], world[16], rank[16];
    int64_t replicas = 0;
    size_t i;

    if (!m)
        return;
    addr = host(j, m, 0);
    for (size_t k = 0; k < j->ntask; k++)
        if (!strcmp(j->task[k].name, a->master) ||
            !strcmp(j->task[k].name, a->worker))
            replicas += j->task[k].replicas;
    snprintf(port, sizeof(port), "%d", a->port);
    snprintf(world, sizeof(world), "%lld", (long long)replicas);
    snprintf(rank, sizeof(rank), "%d", worker ? index + 1 : 0);
    if (worker && a->wait_master)
        wait_for_master(spec, a, addr);
    json_array_foreach (cs, i, c) {
        open_port(c, "pytorchjob-port", a->port);
        add_env(c, "MASTER_ADDR", addr);
        add_env(c, "MASTER_PORT", port);
        add_env(c, "WORLD_SIZE", world);
        if (worker || master)
            add_env(c, "RANK", rank);
    }
    free(addr);
}

/* TF_CONFIG as Go's json.Marshal writes tfClusterSpec: cluster roles in
 * the struct's order, empty ones left out, then the task. */
static char *tf_config(const struct job *j, const struct task *t, int index)
{
    const struct mu_tf_args *a = &j->tf_args;
    const char *roles[] = {a->ps, a->worker, a->chief, a->evaluator};
    const char *keys[] = {"ps", "worker", "chief", "evaluator"};
    json_t *o = mu_json_must(json_object()), *cl = mu_json_must(json_object());
    json_t *task = mu_json_must(json_object());
    /* the type: Go's getTaskType switch, chief first */
    const char *type = !strcmp(t->name, a->chief)       ? "chief"
                       : !strcmp(t->name, a->worker)    ? "worker"
                       : !strcmp(t->name, a->ps)        ? "ps"
                       : !strcmp(t->name, a->evaluator) ? "evaluator"
                                                        : t->name;
    char *s;

    for (int r = 0; r < 4; r++) {
        const struct task *rt = NULL;
        json_t *hosts;

        /* the first task a role's name matches (Go's switch order) */
        for (size_t k = 0; k < j->ntask && !rt; k++) {
            int first = -1;

            for (int q = 0; q < 4 && first < 0; q++)
                if (!strcmp(j->task[k].name, roles[q]))
                    first = q;
            if (first == r)
                rt = &j->task[k];
        }
        if (!rt || rt->replicas <= 0)
            continue;
        hosts = mu_json_must(json_array());
        for (int i = 0; i < rt->replicas; i++) {
            char *h = host(j, rt, i), *hp = mu_xasprintf("%s:%d", h, a->port);

            json_array_append_new(hosts, mu_json_must(json_string(hp)));
            free(hp);
            free(h);
        }
        json_object_set_new(cl, keys[r], hosts);
    }
    json_object_set_new(o, "cluster", cl);
    mu_json_set_str(task, "type", type);
    mu_json_set_int(task, "index", index);
    json_object_set_new(o, "task", task);
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s) {
        fputs("muster: out of memory in jansson\n", stderr);
        abort();
    }
    return s;
}

static void tf_pod(const struct job *j, const struct task *t, int index,
                   json_t *spec)
{
    json_t *cs = json_object_get(spec, "containers"), *c;
    size_t i;
    char *cfg;

    if (j->ntask == 1 && j->task[0].replicas == 1)
        return;
    cfg = tf_config(j, t, index);
    json_array_foreach (cs, i, c)
        add_env(c, "TF_CONFIG", cfg);
    free(cfg);
}

static void mpi_pod(const struct job *j, const struct task *t, json_t *spec)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const struct mu_mpi_args *a = &j->mpi_args;
    const struct task *w = NULL;
    struct mu_sb hosts;
    bool master = !strcmp(t->name, a->master);

    mu_sb_init(&hosts);
    if (master) {
        if (!(w = task_named(j, a->worker)))
            return;
        for (int i = 0; i < w->replicas; i++) {
            char *h = host(j, w, i);

            mu_sb_addf(&hosts, "%s%s", i ? "," : "", h);
            free(h);
            if (tmpl_str(w, "hostname"))
                break;
        }
    }
    for (int l = 0; l < 2; l++) {
        json_t *cs = json_object_get(spec, lists[l]), *c;
        size_t i;

        json_array_foreach (cs, i, c) {
            open_port(c, "mpijob-port", a->port);
            if (master)
                add_env(c, "MPI_HOST", hosts.buf ? hosts.buf : "");
        }
    }
    mu_sb_release(&hosts);
}

void mu_vcjob_frameworks_pod(const struct job *j, size_t ti, int index,
                             json_t *spec)
{
    const struct task *t = &j->task[ti];

    if (j->pytorch)
        pytorch_pod(j, t, index, spec);
    if (j->tensorflow)
        tf_pod(j, t, index, spec);
    if (j->mpi)
        mpi_pod(j, t, spec);
}
