/* The PodGroup controller (see pgctl.h). */
#include "ctrl/pgctl.h"

#include "api/implicit.h"
#include "kube/paths.h"

enum pgc_state {
    PGC_WAITING,  /* pod: its group is being made */
    PGC_SENDING,  /* a write is in flight */
    PGC_DONE,     /* made (group) or patched (pod) */
};

/* A group this controller makes: key "ns/name". */
struct pgc_group {
    enum pgc_state state; /* SENDING or DONE */
};

/* A bare pod: key "ns/name". */
struct pgc_pod {
    char *uid;
    char *group;          /* the group's key */
    enum pgc_state state;
};

struct mu_pgctl {
    const struct mu_ctl *ctl;
    struct mu_map groups; /* "ns/name" -> struct pgc_group */
    struct mu_map pods;   /* "ns/name" -> struct pgc_pod */
};

/*
 * What the group write needs on its worker: a copy of the fields of the
 * pod that mu_implicit_podgroup() reads (the cache is the owner's), the
 * request dimensions' names, and the owner's path. warn is the one field
 * run writes and done reads; done runs after run returned (the writer's
 * lock orders the two) and nothing else touches it.
 */
struct pgc_make {
    struct mu_pgctl *pc;
    char *key;            /* the group's */
    struct mu_pod pod;
    struct mu_resnames rn;
    char *owner_path;     /* NULL: no apps/v1 owner */
    struct mu_err warn;   /* msg "": nothing to say */
};

struct pgc_patch {
    struct mu_pgctl *pc;
    char *key, *uid;      /* the pod's */
};

static void pod_free(struct pgc_pod *p)
{
    if (!p)
        return;
    free(p->uid);
    free(p->group);
    free(p);
}

struct mu_pgctl *mu_pgctl_new(const struct mu_ctl *ctl)
{
    struct mu_pgctl *pc = mu_xcalloc(1, sizeof(*pc));

    pc->ctl = ctl;
    mu_map_init(&pc->groups);
    mu_map_init(&pc->pods);
    return pc;
}

void mu_pgctl_free(struct mu_pgctl *pc)
{
    size_t it = 0;
    void *v;

    if (!pc)
        return;
    while (mu_map_next(&pc->groups, &it, NULL, &v))
        free(v);
    it = 0;
    while (mu_map_next(&pc->pods, &it, NULL, &v))
        pod_free(v);
    mu_map_release(&pc->groups);
    mu_map_release(&pc->pods);
    free(pc);
}

static void kvs_copy(const struct mu_kvs *from, struct mu_kvs *to)
{
    to->n = from->n;
    to->v = from->n ? mu_xcalloc(from->n, sizeof(*to->v)) : NULL;
    for (size_t i = 0; i < from->n; i++) {
        to->v[i].key = mu_xstrdup(from->v[i].key);
        to->v[i].value = mu_xstrdup(from->v[i].value);
    }
}

/* The fields of p that mu_implicit_podgroup() reads (implicit.h). */
static void pod_copy(const struct mu_pod *p, struct mu_pod *out)
{
    memset(out, 0, sizeof(*out));
    out->meta.ns = mu_xstrdup_or_null(p->meta.ns);
    out->meta.name = mu_xstrdup(p->meta.name);
    out->meta.uid = mu_xstrdup_or_null(p->meta.uid);
    out->meta.owner_kind = mu_xstrdup_or_null(p->meta.owner_kind);
    out->meta.owner_name = mu_xstrdup_or_null(p->meta.owner_name);
    out->meta.owner_uid = mu_xstrdup_or_null(p->meta.owner_uid);
    kvs_copy(&p->meta.annotations, &out->meta.annotations);
    out->req = p->req;
    out->priority_class = mu_xstrdup_or_null(p->priority_class);
}

static void make_free(struct pgc_make *m)
{
    free(m->key);
    mu_pod_release(&m->pod);
    mu_resnames_release(&m->rn);
    free(m->owner_path);
    free(m);
}

/* The path of the apps/v1 owner of p, or NULL. */
static char *owner_path(const struct mu_pod *p)
{
    static const enum mu_api_kind kinds[] = {
        MU_API_REPLICASET, MU_API_STATEFULSET, MU_API_DEPLOYMENT};
    const char *plural = mu_implicit_owner_plural(p);

    for (size_t i = 0; plural && i < MU_ARRAY_LEN(kinds); i++)
        if (!strcmp(mu_api_res(kinds[i])->plural, plural))
            return mu_api_path(kinds[i], p->meta.ns, p->meta.owner_name,
                               NULL);
    return NULL;
}

/* On a worker: GET the owner, build the PodGroup, POST it (w->path). */
static int make_run(struct mu_kube *k, const struct mu_write *w, void *ctx,
                    struct mu_err *err)
{
    struct pgc_make *m = ctx;
    json_t *owner = NULL, *pg;
    const json_t *ann = NULL;
    struct mu_err got = {{0}};
    int r;

    if (m->owner_path) {
        if ((r = mu_kube_get(k, m->owner_path, NULL, &owner, &got)) < 0)
            mu_err_set(&m->warn, r, "owner of pod %s/%s: %s", m->pod.meta.ns,
                       m->pod.meta.name, got.msg);
        ann = json_object_get(json_object_get(owner, "metadata"),
                              "annotations");
    }
    pg = mu_implicit_podgroup(&m->pod, ann, &m->rn, &got);
    if (got.msg[0] && !m->warn.msg[0])
        m->warn = got;
    r = mu_kube_create(k, w->path, pg, NULL, err);
    json_decref(pg);
    json_decref(owner);
    return r == -EEXIST ? 0 : r;
}

static void patch_pod(struct mu_pgctl *pc, const char *key,
                      struct pgc_pod *p);

/* On the owner thread: the group is made (its waiting pods get their
 * annotation now) or not (forgotten with them: a later sync retries). */
static void make_done(void *ctx, int rc, const char *msg)
{
    struct pgc_make *m = ctx;
    struct mu_pgctl *pc = m->pc;
    struct pgc_group *g = mu_map_get(&pc->groups, m->key);
    size_t it = 0;
    const char *k;
    void *v;

    if (m->warn.msg[0])
        mu_ctl_log(pc->ctl, "%s", m->warn.msg);
    if (rc < 0 && rc != -ECANCELED)
        mu_ctl_log(pc->ctl, "create podgroup %s: %s", m->key, msg);
    if (rc == 0 && g) {
        g->state = PGC_DONE;
    } else if (g) {
        free(mu_map_del(&pc->groups, m->key));
        g = NULL;
    }
    while (mu_map_next(&pc->pods, &it, &k, &v)) {
        struct pgc_pod *p = v;

        if (p->state != PGC_WAITING || strcmp(p->group, m->key))
            continue;
        if (g)
            patch_pod(pc, k, p);
        else
            pod_free(mu_map_del(&pc->pods, k));
    }
    make_free(m);
}

static void patch_done(void *ctx, int rc, const char *msg)
{
    struct pgc_patch *c = ctx;
    struct pgc_pod *p = mu_map_get(&c->pc->pods, c->key);

    if (rc < 0 && rc != -ECANCELED)
        mu_ctl_log(c->pc->ctl, "group annotation on pod %s: %s", c->key,
                   msg);
    if (p && !strcmp(p->uid, c->uid)) {
        if (rc == 0)
            p->state = PGC_DONE;
        else
            pod_free(mu_map_del(&c->pc->pods, c->key));
    }
    free(c->key);
    free(c->uid);
    free(c);
}

/* The pod's annotation, once its group is made. Not sent (the writer is
 * stopping): the pod is forgotten. */
static void patch_pod(struct mu_pgctl *pc, const char *key, struct pgc_pod *p)
{
    struct pgc_patch *c = mu_xcalloc(1, sizeof(*c));
    const char *slash = strchr(key, '/');
    char *ns = mu_xasprintf("%.*s", (int)(slash - key), key);
    char *path = mu_api_path(MU_API_POD, ns, slash + 1, NULL);
    const char *group = strchr(p->group, '/') + 1;
    struct mu_write w = {
        .method = "PATCH", .path = path,
        .content_type = MU_KUBE_MERGE_PATCH,
        .body = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                          MU_ANN_GROUP, group),
        .done = patch_done, .ctx = c};

    c->pc = pc;
    c->key = mu_xstrdup(key);
    c->uid = mu_xstrdup(p->uid);
    p->state = PGC_SENDING;
    if (mu_writer_submit(pc->ctl->writer, &w) < 0) {
        /* the writer is stopping; key may be the map's own copy */
        mu_ctl_log(pc->ctl, "group annotation on pod %s: not sent", c->key);
        pod_free(mu_map_del(&pc->pods, c->key));
        free(c->key);
        free(c->uid);
        free(c);
    }
    free(path);
    free(ns);
}

/* Submits the write that makes group gkey for pod p; false if refused. */
static bool make_group(struct mu_pgctl *pc, const char *gkey,
                       const struct mu_pod *p)
{
    struct pgc_make *m = mu_xcalloc(1, sizeof(*m));
    const struct mu_resnames *rn = &pc->ctl->cluster->rn;
    char *path = mu_api_path(MU_API_PODGROUP, p->meta.ns, NULL, NULL);
    char *key = mu_api_path(MU_API_PODGROUP, p->meta.ns,
                            strchr(gkey, '/') + 1, NULL);
    struct mu_write w = {.method = "POST", .path = path, .key = key,
                         .run = make_run, .done = make_done, .ctx = m};
    bool ok = true;

    m->pc = pc;
    m->key = mu_xstrdup(gkey);
    pod_copy(p, &m->pod);
    m->rn.n = rn->n;
    for (int d = 0; d < rn->n; d++)
        m->rn.name[d] = mu_xstrdup(rn->name[d]);
    m->owner_path = owner_path(p);
    if (mu_writer_submit(pc->ctl->writer, &w) < 0) {
        mu_ctl_log(pc->ctl, "create podgroup %s: not sent", gkey);
        make_free(m);
        ok = false;
    }
    free(path);
    free(key);
    return ok;
}

static bool bare(const struct mu_pod *p)
{
    return !p->group && !p->node_name && p->meta.uid &&
           !strcmp(p->scheduler_name, "volcano") &&
           p->phase == MU_POD_PENDING;
}

/* Forgets pods the cache shows grouped, bound, gone or made again, unless
 * a write for them is in flight (its done callback needs the entry), and
 * groups the cache shows. */
static void forget(struct mu_pgctl *pc)
{
    struct mu_cluster *c = pc->ctl->cluster;
    size_t it = 0;
    const char *k;
    void *v;

    while (mu_map_next(&pc->pods, &it, &k, &v)) {
        struct pgc_pod *p = v;
        const struct mu_task *t = mu_map_get(&c->task_by_key, k);

        if (p->state == PGC_SENDING)
            continue;
        if (!t || !bare(&t->pod) || strcmp(t->pod.meta.uid, p->uid))
            pod_free(mu_map_del(&pc->pods, k));
    }
    it = 0;
    while (mu_map_next(&pc->groups, &it, &k, &v)) {
        const char *slash = strchr(k, '/');
        char *ns = mu_xasprintf("%.*s", (int)(slash - k), k);

        if (((struct pgc_group *)v)->state == PGC_DONE &&
            mu_cluster_job(c, ns, slash + 1))
            free(mu_map_del(&pc->groups, k));
        free(ns);
    }
}

void mu_pgctl_sync(struct mu_pgctl *pc)
{
    struct mu_cluster *c = pc->ctl->cluster;

    forget(pc);
    for (size_t i = 0; i < c->ntasks; i++) {
        const struct mu_task *t = c->tasks[i];
        const struct mu_pod *p = &t->pod;
        struct pgc_group *g;
        char *name, *gkey;
        bool exists;
        struct pgc_pod *pp;

        /* bare first: a grouped pod costs no lookup (every cycle walks
         * them all) */
        if (!bare(p) || mu_map_get(&pc->pods, t->key))
            continue;
        name = mu_implicit_group_name(p);
        gkey = mu_xasprintf("%s/%s", p->meta.ns, name);
        g = mu_map_get(&pc->groups, gkey);
        exists = mu_cluster_job(c, p->meta.ns, name) != NULL;
        if (!g && !exists && make_group(pc, gkey, p)) {
            g = mu_xcalloc(1, sizeof(*g));
            g->state = PGC_SENDING;
            mu_map_put(&pc->groups, gkey, g);
        }
        if (g || exists) {
            pp = mu_xcalloc(1, sizeof(*pp));
            pp->uid = mu_xstrdup(p->meta.uid);
            pp->group = mu_xstrdup(gkey);
            pp->state = PGC_WAITING;
            mu_map_put(&pc->pods, t->key, pp);
            if (exists || g->state == PGC_DONE)
                patch_pod(pc, t->key, pp);
        }
        free(gkey);
        free(name);
    }
}
