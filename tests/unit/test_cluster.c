/* Cluster accounting and the statement's undo log. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

#include "api/object.h"
#include "sched/cluster.h"
#include "sched/statement.h"
#include "share.h"

static struct mu_cluster c;

static void add_node(const char *name, int gpus)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
        "{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":%d,"
        "\"pods\":\"3\"}}}", name, gpus);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&c, &n, NULL));
    json_decref(j);
    free(txt);
}

/* The pod of JSON text txt, decoded and added. */
static struct mu_task *add_pod_json(const char *txt)
{
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_pod p;
    struct mu_task *t;

    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, NULL), 0);
    t = mu_cluster_add_task(&c, &p, NULL);
    ck_assert_ptr_nonnull(t);
    json_decref(j);
    return t;
}

static struct mu_task *add_pod(const char *name, const char *group, int gpus,
                               const char *node, const char *phase)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"annotations\":{"
        "\"scheduling.k8s.io/group-name\":\"%s\"}},\"spec\":{%s%s%s"
        "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":%d,\"cpu\":\"1\"}}}]},\"status\":{\"phase\":"
        "\"%s\"}}", name, group, node ? "\"nodeName\":\"" : "",
        node ? node : "", node ? "\"," : "", gpus, phase);
    struct mu_task *t = add_pod_json(txt);

    free(txt);
    return t;
}

static struct mu_job *add_group(const char *name, int min)
{
    char *txt = mu_xasprintf("{\"metadata\":{\"name\":\"%s\"},\"spec\":"
                             "{\"minMember\":%d,\"queue\":\"q\"}}",
                             name, min);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_podgroup pg;
    struct mu_job *job;

    ck_assert_int_eq(mu_podgroup_decode(j, &c.rn, &pg, NULL), 0);
    job = mu_cluster_add_job(&c, &pg, NULL);
    ck_assert_ptr_nonnull(job);
    json_decref(j);
    free(txt);
    return job;
}

static void add_queue(const char *name)
{
    char *txt = mu_xasprintf("{\"metadata\":{\"name\":\"%s\"}}", name);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_queue_spec q;

    ck_assert_int_eq(mu_queue_decode(j, &c.rn, &q, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_queue(&c, &q, NULL));
    json_decref(j);
    free(txt);
}

static int gpu(void)
{
    return mu_resnames_index(&c.rn, "nvidia.com/gpu", false);
}

static void setup(void)
{
    mu_cluster_init(&c);
    add_queue("q");
    add_node("n1", 4);
    add_node("n2", 8);
}

static void teardown(void)
{
    mu_cluster_release(&c);
}

START_TEST(test_cluster_keeps_nodes_sorted_and_totals)
{
    add_node("a0", 2);
    ck_assert_str_eq(c.nodes[0]->spec.meta.name, "a0");
    ck_assert_int_eq(c.nodes[0]->index, 0);
    ck_assert_int_eq(c.nodes[2]->index, 2);
    ck_assert_int_eq(c.total.v[gpu()], 14);
    ck_assert_ptr_eq(mu_cluster_node(&c, "a0"), c.nodes[0]);
}
END_TEST

START_TEST(test_cluster_refuses_duplicate_names)
{
    struct mu_err err;
    json_t *j = json_loads("{\"metadata\":{\"name\":\"n1\"}}", 0, NULL);
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    ck_assert_ptr_null(mu_cluster_add_node(&c, &n, &err));
    ck_assert_str_eq(err.msg, "Node n1 exists already");
    mu_node_release(&n);
    json_decref(j);
    ck_assert_uint_eq(c.nnodes, 2);
}
END_TEST

START_TEST(test_running_pod_is_accounted_on_its_node_and_queue)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 3, "n1", "Running");
    struct mu_cnode *n1 = mu_cluster_node(&c, "n1");

    mu_cluster_link(&c);
    ck_assert_ptr_eq(t->node, n1);
    ck_assert_int_eq(t->status, MU_TASK_RUNNING);
    ck_assert_int_eq(n1->idle.v[gpu()], 1);
    ck_assert_int_eq(n1->used.v[gpu()], 3);
    ck_assert_int_eq(j->allocated.v[gpu()], 3);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 3);
    ck_assert_int_eq(mu_job_ready_num(j), 1);
}
END_TEST

START_TEST(test_job_added_after_its_pods_adopts_them)
{
    struct mu_task *t = add_pod("p", "late", 1, NULL, "Pending");
    struct mu_job *j;

    ck_assert_ptr_null(t->job);
    j = add_group("late", 1);
    ck_assert_ptr_eq(t->job, j);
    ck_assert_int_eq(j->count[MU_TASK_PENDING], 1);
}
END_TEST

/* A pending pod being deleted (deletionTimestamp set, a finalizer holds
 * it) is no member to place: the apiserver refuses to bind it. */
START_TEST(test_unbound_pod_being_deleted_is_not_pending)
{
    struct mu_job *j = add_group("g", 2);
    const char *txt =
        "{\"metadata\":{\"name\":\"d\",\"deletionTimestamp\":"
        "\"2026-01-01T00:00:00Z\",\"finalizers\":[\"x/y\"],"
        "\"annotations\":{\"scheduling.k8s.io/group-name\":\"g\"}},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"limits\":{\"nvidia.com/gpu\":1}}}]},\"status\":{\"phase\":"
        "\"Pending\"}}";
    struct mu_task *t = add_pod_json(txt);

    add_pod("q", "g", 1, NULL, "Pending");
    mu_cluster_link(&c);
    ck_assert_int_eq(t->status, MU_TASK_UNKNOWN);
    ck_assert_int_eq(j->count[MU_TASK_PENDING], 1);
    ck_assert_int_eq(j->count[MU_TASK_UNKNOWN], 1);
}
END_TEST

START_TEST(test_finished_pod_leaves_its_node)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 2, "n2", "Running");
    struct mu_cnode *n2 = mu_cluster_node(&c, "n2");

    mu_cluster_link(&c);
    mu_task_set_status(&c, t, MU_TASK_SUCCEEDED);
    ck_assert_ptr_null(t->node);
    ck_assert_int_eq(n2->idle.v[gpu()], 8);
    ck_assert_uint_eq(n2->ntasks, 0);
    ck_assert_int_eq(j->allocated.v[gpu()], 0);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 0);
    ck_assert_int_eq(j->count[MU_TASK_SUCCEEDED], 1);
}
END_TEST

/* A node's generation and the dirty log move with its sums only: a commit
 * (ALLOCATED -> BINDING) or a start (BOUND -> RUNNING) leaves both alone,
 * so the node index does not score the node again for nothing. */
START_TEST(test_only_a_change_of_node_sums_moves_the_generation)
{
    struct mu_task *t;
    struct mu_cnode *n1 = mu_cluster_node(&c, "n1");
    uint32_t gen;
    size_t dirty;

    add_group("g", 1);
    t = add_pod("p", "g", 1, NULL, "Pending");
    mu_cluster_link(&c);
    gen = n1->gen;
    dirty = c.ndirty;
    mu_task_place(&c, t, n1, MU_TASK_ALLOCATED);
    ck_assert_uint_ne(n1->gen, gen);
    ck_assert_uint_eq(c.ndirty, dirty + 1);
    gen = n1->gen;
    dirty = c.ndirty;
    mu_task_set_status(&c, t, MU_TASK_BINDING);
    mu_task_set_status(&c, t, MU_TASK_BOUND);
    mu_task_set_status(&c, t, MU_TASK_RUNNING);
    ck_assert_uint_eq(n1->gen, gen);
    ck_assert_uint_eq(c.ndirty, dirty);
    mu_task_set_status(&c, t, MU_TASK_RELEASING);
    ck_assert_uint_ne(n1->gen, gen);
    ck_assert_uint_eq(c.ndirty, dirty + 1);
    gen = n1->gen;
    mu_task_set_status(&c, t, MU_TASK_SUCCEEDED);
    ck_assert_uint_ne(n1->gen, gen);
    ck_assert_uint_eq(c.ndirty, dirty + 2);
}
END_TEST

START_TEST(test_statement_rollback_restores_everything)
{
    struct mu_job *j = add_group("g", 2);
    struct mu_task *a = add_pod("a", "g", 4, NULL, "Pending");
    struct mu_task *b = add_pod("b", "g", 2, NULL, "Pending");
    struct mu_task *r = add_pod("r", "g", 2, "n2", "Running");
    struct mu_cnode *n1 = mu_cluster_node(&c, "n1");
    struct mu_cnode *n2 = mu_cluster_node(&c, "n2");
    struct mu_stmt s;
    size_t mark;

    mu_cluster_link(&c);
    mu_stmt_init(&s, &c);
    mark = mu_stmt_mark(&s);
    mu_stmt_place(&s, a, n1, MU_TASK_ALLOCATED);
    mu_stmt_evict(&s, r);
    mu_stmt_place(&s, b, n2, MU_TASK_PIPELINED);
    ck_assert_int_eq(n1->idle.v[gpu()], 0);
    ck_assert_int_eq(n2->releasing.v[gpu()], 2);
    ck_assert_int_eq(n2->pipelined.v[gpu()], 2);
    ck_assert_int_eq(mu_node_future_idle(n2, gpu()), 6);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 4); /* a, not r */
    ck_assert_int_eq(mu_job_waiting_num(j), 1);
    mu_stmt_rollback(&s, mark);
    ck_assert_int_eq(a->status, MU_TASK_PENDING);
    ck_assert_ptr_null(a->node);
    ck_assert_int_eq(r->status, MU_TASK_RUNNING);
    ck_assert_int_eq(b->status, MU_TASK_PENDING);
    ck_assert_int_eq(n1->idle.v[gpu()], 4);
    ck_assert_int_eq(n2->idle.v[gpu()], 6);
    ck_assert_int_eq(n2->releasing.v[gpu()], 0);
    ck_assert_int_eq(n2->pipelined.v[gpu()], 0);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 2);
    ck_assert_int_eq(j->count[MU_TASK_PENDING], 2);
    ck_assert_int_eq(j->count[MU_TASK_RUNNING], 1);
    mu_stmt_release(&s);
}
END_TEST

START_TEST(test_remove_task_frees_its_resources)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 4, "n1", "Running");

    mu_cluster_link(&c);
    mu_cluster_remove_task(&c, t);
    ck_assert_ptr_null(mu_cluster_task(&c, "default", "p"));
    ck_assert_int_eq(mu_cluster_node(&c, "n1")->idle.v[gpu()], 4);
    ck_assert_uint_eq(j->ntasks, 0);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 0);
}
END_TEST

START_TEST(test_same_shape_pods_share_a_shape_id)
{
    struct mu_task *a, *b, *d;

    add_group("g", 1);
    a = add_pod("a", "g", 1, NULL, "Pending");
    b = add_pod("b", "g", 1, NULL, "Pending");
    d = add_pod("d", "g", 2, NULL, "Pending");
    ck_assert_int_eq(a->shape, b->shape);
    ck_assert_int_ne(a->shape, d->shape);
}
END_TEST

START_TEST(test_tasks_sorted_in_task_order)
{
    struct mu_job *j = add_group("g", 3);

    add_pod("job-worker-10", "g", 1, NULL, "Pending");
    add_pod("job-worker-2", "g", 1, NULL, "Pending");
    add_pod("job-worker-1", "g", 1, NULL, "Pending");
    mu_cluster_link(&c);
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "job-worker-1");
    ck_assert_str_eq(j->tasks[1]->pod.meta.name, "job-worker-2");
    ck_assert_str_eq(j->tasks[2]->pod.meta.name, "job-worker-10");
}
END_TEST

START_TEST(test_priority_resolution)
{
    struct mu_priorityclass pc = {mu_xstrdup("high"), 1000, false, false};
    struct mu_priorityclass def = {mu_xstrdup("dflt"), 7, true, false};
    bool found;

    mu_cluster_add_priorityclass(&c, &pc);
    ck_assert_int_eq(mu_cluster_priority(&c, "high", &found), 1000);
    ck_assert(found);
    ck_assert_int_eq(mu_cluster_priority(&c, NULL, &found), 0);
    mu_cluster_add_priorityclass(&c, &def);
    ck_assert_int_eq(mu_cluster_priority(&c, NULL, NULL), 7);
    ck_assert_int_eq(mu_cluster_priority(&c, "missing", &found), 7);
    ck_assert(!found);
    ck_assert_int_eq(mu_cluster_priority(&c, "system-node-critical", NULL),
                     2000001000);
}
END_TEST

START_TEST(test_fake_uid_is_stable_and_uuid_shaped)
{
    char a[37], b[37], d[37];

    mu_fake_uid("Pod", "default", "x", a);
    mu_fake_uid("Pod", "default", "x", b);
    mu_fake_uid("Pod", "default", "y", d);
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, d);
    ck_assert_uint_eq(strlen(a), 36);
    ck_assert_int_eq(a[8], '-');
    ck_assert_int_eq(a[14], '4');
}
END_TEST


static struct mu_node decode_node(const char *name, int gpus, const char *label)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"l\":\"%s\"}},"
        "\"status\":{\"allocatable\":{\"nvidia.com/gpu\":%d,"
        "\"pods\":\"3\"}}}", name, label, gpus);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &c.rn, &n, NULL), 0);
    json_decref(j);
    free(txt);
    return n;
}

START_TEST(test_node_heartbeat_changes_nothing)
{
    struct mu_node n = decode_node("n9", 4, "a");
    struct mu_cnode *cn;
    uint64_t gen;

    cn = mu_cluster_update_node(&c, &n); /* unknown: added */
    ck_assert_ptr_eq(cn, mu_cluster_node(&c, "n9"));
    gen = c.node_gen;
    n = decode_node("n9", 4, "a");
    ck_assert_ptr_eq(mu_cluster_update_node(&c, &n), cn);
    ck_assert_uint_eq(c.node_gen, gen);
    n = decode_node("n9", 4, "b");
    mu_cluster_update_node(&c, &n);
    ck_assert_uint_gt(c.node_gen, gen);
    ck_assert_str_eq(mu_kvs_get(&cn->spec.meta.labels, "l"), "b");
}
END_TEST

START_TEST(test_node_update_moves_idle_by_the_allocatable_change)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_node n;
    struct mu_cnode *n1 = mu_cluster_node(&c, "n1");

    add_pod("p", "g", 3, "n1", "Running");
    mu_cluster_link(&c);
    n = decode_node("n1", 6, "x");
    mu_cluster_update_node(&c, &n);
    ck_assert_int_eq(n1->idle.v[gpu()], 3);
    ck_assert_int_eq(c.total.v[gpu()], 14);
    ck_assert_uint_eq(n1->ntasks, 1);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 3);
}
END_TEST

START_TEST(test_removed_node_sends_its_tasks_back_to_pending)
{
    struct mu_task *t;

    add_group("g", 1);
    t = add_pod("p", "g", 3, "n1", "Running");
    mu_cluster_link(&c);
    mu_cluster_remove_node(&c, mu_cluster_node(&c, "n1"));
    ck_assert_ptr_null(mu_cluster_node(&c, "n1"));
    ck_assert_ptr_null(t->node);
    ck_assert_int_eq(t->status, MU_TASK_PENDING);
    ck_assert_int_eq(c.total.v[gpu()], 8);
    ck_assert_int_eq(c.nodes[0]->index, 0);
}
END_TEST

/* A removed node's place is the next node's, made fresh: none of the old
 * node's sums, tasks or gen carry over; and nodes beyond one slab of
 * places each get their own. */
START_TEST(test_a_removed_nodes_place_is_reused_fresh)
{
    struct mu_cnode *old, *n3, *seen[MU_CNODE_SLAB + 2];
    char name[32];

    add_group("g", 1);
    add_pod("p", "g", 3, "n1", "Running");
    mu_cluster_link(&c);
    old = mu_cluster_node(&c, "n1");
    ck_assert_uint_eq(old->ntasks, 1);
    mu_cluster_remove_node(&c, old);
    add_node("n3", 2);
    n3 = mu_cluster_node(&c, "n3");
    ck_assert_ptr_eq(n3, old);
    ck_assert_str_eq(n3->spec.meta.name, "n3");
    ck_assert_uint_eq(n3->ntasks, 0);
    ck_assert_int_eq(n3->idle.v[gpu()], 2);
    ck_assert_int_eq(n3->used.v[gpu()], 0);
    ck_assert_int_eq(c.total.v[gpu()], 10);
    for (int i = 0; i < MU_CNODE_SLAB + 2; i++) {
        snprintf(name, sizeof(name), "x%03d", i);
        add_node(name, 1);
        seen[i] = mu_cluster_node(&c, name);
        for (int k = 0; k < i; k++)
            ck_assert_ptr_ne(seen[k], seen[i]);
        ck_assert_ptr_ne(seen[i], n3);
        ck_assert_uint_eq((uintptr_t)seen[i] % 64, 0);
    }
    ck_assert_int_eq(c.total.v[gpu()], 10 + MU_CNODE_SLAB + 2);
}
END_TEST

START_TEST(test_pod_update_follows_the_api)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 2, NULL, "Pending");
    json_t *js = json_loads(
        "{\"metadata\":{\"name\":\"p\",\"annotations\":{"
        "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{"
        "\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\","
        "\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}]},"
        "\"status\":{\"phase\":\"Running\"}}", 0, NULL);
    struct mu_pod p;

    mu_cluster_link(&c);
    ck_assert_int_eq(t->status, MU_TASK_PENDING);
    ck_assert_int_eq(mu_pod_decode(js, &c.rn, &p, NULL), 0);
    t = mu_cluster_update_task(&c, &p, NULL);
    ck_assert_int_eq(t->status, MU_TASK_RUNNING);
    ck_assert_ptr_eq(t->job, j);
    ck_assert_uint_eq(j->ntasks, 1);
    ck_assert_int_eq(mu_cluster_node(&c, "n2")->idle.v[gpu()], 6);
    ck_assert_int_eq(j->queue->allocated.v[gpu()], 2);
    json_decref(js);
}
END_TEST

/* An update puts the new task where the old one was: the cache's tasks
 * stay in key order, each found under its key, at the first, a middle and
 * the last slot. */
START_TEST(test_pod_update_keeps_the_tasks_in_key_order)
{
    static const char *const made[] = {"p3", "p1", "p5", "p2", "p4"};
    static const char *const updated[] = {"p1", "p3", "p5"};
    struct mu_job *j = add_group("g", 1);

    for (size_t i = 0; i < 5; i++)
        add_pod(made[i], "g", 1, NULL, "Pending");
    mu_cluster_link(&c);
    for (size_t u = 0; u < 3; u++) {
        char *txt = mu_xasprintf(
            "{\"metadata\":{\"name\":\"%s\",\"annotations\":{"
            "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{"
            "\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","
            "\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]},"
            "\"status\":{\"phase\":\"Running\"}}", updated[u]);
        json_t *js = json_loads(txt, 0, NULL);
        struct mu_pod p;
        struct mu_task *t;

        ck_assert_int_eq(mu_pod_decode(js, &c.rn, &p, NULL), 0);
        t = mu_cluster_update_task(&c, &p, NULL);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(t->status, MU_TASK_RUNNING);
        ck_assert_ptr_eq(mu_cluster_task(&c, "default", updated[u]), t);
        json_decref(js);
        free(txt);
    }
    ck_assert_uint_eq(c.ntasks, 5);
    ck_assert_uint_eq(j->ntasks, 5);
    for (size_t i = 0; i < 5; i++) {
        char key[32];

        snprintf(key, sizeof(key), "default/p%zu", i + 1);
        ck_assert_str_eq(c.tasks[i]->key, key);
        ck_assert_ptr_eq(mu_cluster_task(&c, "default", key + 8), c.tasks[i]);
    }
    ck_assert_int_eq(c.tasks[0]->status, MU_TASK_RUNNING);
    ck_assert_int_eq(c.tasks[1]->status, MU_TASK_PENDING);
    ck_assert_int_eq(c.tasks[2]->status, MU_TASK_RUNNING);
    ck_assert_int_eq(c.tasks[4]->status, MU_TASK_RUNNING);
    ck_assert_int_eq(mu_cluster_node(&c, "n1")->idle.v[gpu()], 1);
    /* and a removal at either end keeps the rest in order */
    mu_cluster_remove_task(&c, c.tasks[4]);
    mu_cluster_remove_task(&c, c.tasks[0]);
    ck_assert_uint_eq(c.ntasks, 3);
    ck_assert_str_eq(c.tasks[0]->key, "default/p2");
    ck_assert_str_eq(c.tasks[2]->key, "default/p4");
    ck_assert_int_eq(mu_cluster_node(&c, "n1")->idle.v[gpu()], 3);
}
END_TEST

START_TEST(test_job_update_keeps_phase_and_removal_frees_tasks)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 1, NULL, "Pending");
    json_t *js = json_loads("{\"metadata\":{\"name\":\"g\"},\"spec\":"
                            "{\"minMember\":4,\"queue\":\"q\"}}", 0, NULL);
    struct mu_podgroup pg;

    j->phase = MU_PG_INQUEUE;
    ck_assert_int_eq(mu_podgroup_decode(js, &c.rn, &pg, NULL), 0);
    ck_assert_ptr_eq(mu_cluster_update_job(&c, &pg), j);
    ck_assert_int_eq(j->pg.min_member, 4);
    ck_assert_int_eq(j->phase, MU_PG_INQUEUE);
    ck_assert_uint_eq(j->ntasks, 1);
    mu_cluster_link(&c);
    mu_cluster_remove_job(&c, j);
    ck_assert_ptr_null(t->job);
    ck_assert_ptr_null(mu_cluster_job(&c, "default", "g"));
    json_decref(js);
}
END_TEST

START_TEST(test_queue_removal_orphans_its_jobs)
{
    struct mu_job *j = add_group("g", 1);

    add_pod("p", "g", 1, "n1", "Running");
    mu_cluster_link(&c);
    ck_assert_ptr_nonnull(j->queue);
    mu_cluster_remove_queue(&c, j->queue);
    ck_assert_ptr_null(j->queue);
    mu_cluster_link(&c);
    ck_assert_ptr_null(j->queue);
    ck_assert_uint_eq(c.nqueues, 0);
}
END_TEST

/* Removing from the middle keeps the rest in order, indexed, and found. */
START_TEST(test_removal_from_the_middle_keeps_order_and_indexes)
{
    struct mu_job *a, *b, *d;
    struct mu_task *p1, *p2, *p3;

    add_node("n3", 2);
    add_queue("r");
    add_queue("s");
    a = add_group("a", 1);
    b = add_group("b", 1);
    d = add_group("d", 1);
    p1 = add_pod("p1", "a", 1, NULL, "Pending");
    p2 = add_pod("p2", "a", 1, NULL, "Pending");
    p3 = add_pod("p3", "a", 1, NULL, "Pending");
    mu_cluster_link(&c);
    ck_assert_uint_eq(c.queues[0]->njobs, 3);

    mu_cluster_remove_node(&c, mu_cluster_node(&c, "n2"));
    ck_assert_uint_eq(c.nnodes, 2);
    ck_assert_str_eq(c.nodes[0]->spec.meta.name, "n1");
    ck_assert_str_eq(c.nodes[1]->spec.meta.name, "n3");
    ck_assert_int_eq(c.nodes[1]->index, 1);
    ck_assert_ptr_eq(mu_cluster_node(&c, "n3"), c.nodes[1]);

    mu_cluster_remove_queue(&c, mu_cluster_queue(&c, "r"));
    ck_assert_uint_eq(c.nqueues, 2);
    ck_assert_str_eq(c.queues[0]->spec.meta.name, "q");
    ck_assert_str_eq(c.queues[1]->spec.meta.name, "s");
    ck_assert_int_eq(c.queues[1]->index, 1);

    mu_cluster_remove_task(&c, p2);
    ck_assert_uint_eq(a->ntasks, 2);
    ck_assert_ptr_eq(a->tasks[0], p1);
    ck_assert_ptr_eq(a->tasks[1], p3);
    ck_assert_uint_eq(c.ntasks, 2);
    ck_assert_ptr_eq(c.tasks[0], p1);
    ck_assert_ptr_eq(c.tasks[1], p3);

    mu_cluster_remove_job(&c, b);
    ck_assert_uint_eq(c.njobs, 2);
    ck_assert_ptr_eq(c.jobs[0], a);
    ck_assert_ptr_eq(c.jobs[1], d);
    ck_assert_uint_eq(c.queues[0]->njobs, 2);
    ck_assert_ptr_eq(c.queues[0]->jobs[0], a);
    ck_assert_ptr_eq(c.queues[0]->jobs[1], d);
}
END_TEST

START_TEST(test_priorityclass_is_replaced_by_name)
{
    struct mu_priorityclass a = {mu_xstrdup("x"), 1, false, false};
    struct mu_priorityclass b = {mu_xstrdup("x"), 2, false, false};

    mu_cluster_add_priorityclass(&c, &a);
    mu_cluster_add_priorityclass(&c, &b);
    ck_assert_uint_eq(c.npcs, 1);
    ck_assert_int_eq(mu_cluster_priority(&c, "x", NULL), 2);
    mu_cluster_remove_priorityclass(&c, "x");
    ck_assert_uint_eq(c.npcs, 0);
}
END_TEST

START_TEST(test_pod_on_a_node_not_yet_seen_is_adopted_by_it)
{
    struct mu_task *t;
    struct mu_node n;

    add_group("g", 1);
    t = add_pod("early", "g", 2, "n7", "Running");
    ck_assert_ptr_null(t->node);
    n = decode_node("n7", 4, "x");
    mu_cluster_add_node(&c, &n, NULL);
    ck_assert_ptr_eq(t->node, mu_cluster_node(&c, "n7"));
    ck_assert_int_eq(t->node->idle.v[gpu()], 2);
    ck_assert_int_eq(t->status, MU_TASK_RUNNING);
}
END_TEST

START_TEST(test_group_deleted_and_made_again_adopts_its_pods_again)
{
    struct mu_job *j = add_group("g", 1);
    struct mu_task *t = add_pod("p", "g", 1, NULL, "Pending");

    mu_cluster_link(&c);
    mu_cluster_remove_job(&c, j);
    ck_assert_ptr_null(t->job);
    j = add_group("g", 1);
    ck_assert_ptr_eq(t->job, j);
    /* and a removed pod is forgotten by the waiting lists */
    mu_cluster_remove_job(&c, j);
    mu_cluster_remove_task(&c, t);
    j = add_group("g", 1);
    ck_assert_uint_eq(j->ntasks, 0);
}
END_TEST

/* The pod of a gpus-GPU member p of group g, pending, held by gate (NULL:
 * none) on top of nothing else, decoded and added or (update) updated. */
static struct mu_task *gated_pod(const char *name, int gpus, const char *gate,
                                 bool update)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"annotations\":{"
        "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{%s%s%s"
        "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":%d}}}]},\"status\":{\"phase\":\"Pending\"}}",
        name, gate ? "\"schedulingGates\":[{\"name\":\"" : "",
        gate ? gate : "", gate ? "\"}]," : "", gpus);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_pod p;
    struct mu_task *t;

    ck_assert_int_eq(mu_pod_decode(j, &c.rn, &p, NULL), 0);
    t = update ? mu_cluster_update_task(&c, &p, NULL)
               : mu_cluster_add_task(&c, &p, NULL);
    ck_assert_ptr_nonnull(t);
    json_decref(j);
    free(txt);
    return t;
}

/* A job's sum of its tasks' requests and its count of tasks another's gate
 * holds follow pods that join, change and leave; the gang's need (what
 * reclaim asks a queue's share for) is the sum only while no task is held
 * by another's gate. */
START_TEST(test_job_sums_follow_its_tasks)
{
    struct mu_job *j = add_group("g", 3);
    struct mu_task *a = gated_pod("a", 2, NULL, false);
    struct mu_res need;

    gated_pod("b", 1, NULL, false);
    ck_assert_int_eq(mu_job_req_sum(j)->v[gpu()], 3);
    gated_pod("c", 4, NULL, false);
    ck_assert_int_eq(mu_job_req_sum(j)->v[gpu()], 7);
    mu_share_gang_need(j, &need);
    ck_assert_int_eq(need.v[gpu()], 7);
    /* b asks 3 now, and another controller holds it back */
    gated_pod("b", 3, "example.com/quota", true);
    ck_assert_int_eq(j->gated_others, 1);
    ck_assert_int_eq(mu_job_req_sum(j)->v[gpu()], 9);
    mu_share_gang_need(j, &need);
    ck_assert_int_eq(need.v[gpu()], 6); /* a and c: b is not the gang's yet */
    /* muster's own gate is not another's */
    gated_pod("b", 3, "muster.io/gang", true);
    ck_assert_int_eq(j->gated_others, 0);
    mu_share_gang_need(j, &need);
    ck_assert_int_eq(need.v[gpu()], 9);
    mu_cluster_remove_task(&c, a);
    ck_assert_int_eq(mu_job_req_sum(j)->v[gpu()], 7);
    ck_assert_uint_eq(j->ntasks, 2);
    /* one of them bound: the need is the pending one's alone */
    mu_task_place(&c, j->tasks[0], mu_cluster_node(&c, "n2"), MU_TASK_BOUND);
    mu_share_gang_need(j, &need);
    ck_assert_int_eq(need.v[gpu()], j->tasks[1]->qreq->v[gpu()]);
    ck_assert_int_eq(mu_job_req_sum(j)->v[gpu()], 7); /* every task's */
}
END_TEST

/* A pending member of group g named name, of PriorityClass pc (NULL:
 * none), added. */
static struct mu_task *classed_pod(const char *name, const char *pc)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"annotations\":{"
        "\"scheduling.k8s.io/group-name\":\"g\"}},\"spec\":{%s%s%s"
        "\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":"
        "\"Pending\"}}", name, pc ? "\"priorityClassName\":\"" : "",
        pc ? pc : "", pc ? "\"," : "");
    struct mu_task *t = add_pod_json(txt);

    free(txt);
    return t;
}

/* Link sorts a job's tasks again when a PriorityClass changes their
 * priorities or a task joins, and not otherwise. */
START_TEST(test_link_sorts_again_what_changed)
{
    struct mu_job *j = add_group("g", 3);
    struct mu_priorityclass hi = {mu_xstrdup("hi"), 100, false, false};
    struct mu_priorityclass low = {mu_xstrdup("hi"), -5, false, false};

    classed_pod("p2", NULL);
    classed_pod("p1", "hi");
    mu_cluster_link(&c); /* no classes yet: 0 and 0, by name */
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "p1");
    mu_cluster_add_priorityclass(&c, &hi);
    mu_cluster_link(&c);
    ck_assert_int_eq(j->tasks[0]->pod.priority, 100);
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "p1");
    /* the class made again below the default: p1 goes last */
    mu_cluster_add_priorityclass(&c, &low);
    mu_cluster_link(&c);
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "p2");
    ck_assert_str_eq(j->tasks[1]->pod.meta.name, "p1");
    ck_assert_int_eq(j->tasks[1]->pod.priority, -5);
    /* a task that joins takes its place at the next link */
    classed_pod("p0", NULL);
    ck_assert_int_eq(j->tasks[2]->pod.priority, 0); /* resolved when added */
    mu_cluster_link(&c);
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "p0");
    ck_assert_str_eq(j->tasks[1]->pod.meta.name, "p2");
    ck_assert_str_eq(j->tasks[2]->pod.meta.name, "p1");
    /* and the class removed: back to the default, first by name */
    mu_cluster_remove_priorityclass(&c, "hi");
    mu_cluster_link(&c);
    ck_assert_str_eq(j->tasks[0]->pod.meta.name, "p0");
    ck_assert_str_eq(j->tasks[1]->pod.meta.name, "p1");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_cluster_keeps_nodes_sorted_and_totals);
    tcase_add_test(tc, test_cluster_refuses_duplicate_names);
    tcase_add_test(tc, test_unbound_pod_being_deleted_is_not_pending);
    tcase_add_test(tc, test_running_pod_is_accounted_on_its_node_and_queue);
    tcase_add_test(tc, test_job_added_after_its_pods_adopts_them);
    tcase_add_test(tc, test_finished_pod_leaves_its_node);
    tcase_add_test(tc, test_statement_rollback_restores_everything);
    tcase_add_test(tc, test_remove_task_frees_its_resources);
    tcase_add_test(tc, test_same_shape_pods_share_a_shape_id);
    tcase_add_test(tc, test_tasks_sorted_in_task_order);
    tcase_add_test(tc, test_priority_resolution);
    tcase_add_test(tc, test_fake_uid_is_stable_and_uuid_shaped);
    tcase_add_test(tc, test_node_heartbeat_changes_nothing);
    tcase_add_test(tc, test_node_update_moves_idle_by_the_allocatable_change);
    tcase_add_test(tc, test_removed_node_sends_its_tasks_back_to_pending);
    tcase_add_test(tc, test_pod_update_follows_the_api);
    tcase_add_test(tc, test_pod_update_keeps_the_tasks_in_key_order);
    tcase_add_test(tc, test_job_update_keeps_phase_and_removal_frees_tasks);
    tcase_add_test(tc, test_queue_removal_orphans_its_jobs);
    tcase_add_test(tc, test_removal_from_the_middle_keeps_order_and_indexes);
    tcase_add_test(tc, test_priorityclass_is_replaced_by_name);
    tcase_add_test(tc, test_pod_on_a_node_not_yet_seen_is_adopted_by_it);
    tcase_add_test(tc, test_group_deleted_and_made_again_adopts_its_pods_again);
    tcase_add_test(tc, test_only_a_change_of_node_sums_moves_the_generation);
    tcase_add_test(tc, test_job_sums_follow_its_tasks);
    tcase_add_test(tc, test_a_removed_nodes_place_is_reused_fresh);
    tcase_add_test(tc, test_link_sorts_again_what_changed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
