/* The cycle: actions, plugins through the framework, and the why text. */
#include <check.h>
#include <stdlib.h>

#include "sched/actions/actions.h"
#include "sched/cycle.h"
#include "sim/sim.h"

static struct mu_sim sim;
static struct mu_cycle_out out;

static void load(const char *yaml)
{
    struct mu_conf conf;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, NULL);
    ck_assert_int_eq(mu_sim_load_text(&sim, "t.yaml", yaml), 0);
    mu_sim_step(&sim);
    ck_assert_int_eq(sim.errors, 0);
}

static void cycle(void)
{
    mu_cycle_out_release(&out);
    mu_cycle_run(&sim.cluster, &sim.conf, sim.now_ms, &out);
}

/* Binds what the cycle decided and moves the clock on, as the simulator. */
static void run_binds(void)
{
    for (size_t i = 0; i < out.nbinds; i++) {
        out.binds[i]->pod.phase = MU_POD_RUNNING;
        mu_task_set_status(&sim.cluster, out.binds[i], MU_TASK_RUNNING);
    }
}

static void teardown(void)
{
    mu_cycle_out_release(&out);
    mu_sim_release(&sim);
}

static struct mu_job *job(const char *prefix)
{
    for (size_t i = 0; i < sim.cluster.njobs; i++)
        if (!strncmp(sim.cluster.jobs[i]->pg.meta.name, prefix,
                     strlen(prefix)))
            return sim.cluster.jobs[i];
    ck_abort_msg("no job %s", prefix);
    return NULL;
}

#define NODE(name, gpus)                                                      \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                \
    "status: {allocatable: {cpu: '32', memory: 256Gi, nvidia.com/gpu: " gpus  \
    ", pods: '110'}}\n---\n"

#define GANG(name, queue, replicas, min, gpus, extra)                         \
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"                      \
    "metadata: {name: " name "}\nspec:\n  minAvailable: " min "\n"            \
    "  queue: " queue "\n" extra "  tasks:\n  - name: w\n"                    \
    "    replicas: " replicas "\n    template:\n      spec:\n"                \
    "        containers:\n        - name: c\n          resources:\n"         \
    "            limits: {nvidia.com/gpu: " gpus "}\n---\n"

#define QUEUE(name, weight)                                                   \
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"                \
    "metadata: {name: " name "}\nspec: {weight: " weight "}\n---\n"

START_TEST(test_gang_that_does_not_fit_places_nothing)
{
    /* 10 GPUs on two nodes, three 3-GPU pods: two would fit, none start */
    load(NODE("n1", "5") NODE("n2", "5") GANG("big", "default", "3", "3", "3",
                                               ""));
    cycle(); /* enqueue + allocate */
    ck_assert_uint_eq(out.nbinds, 0);
    ck_assert_int_eq(job("big")->why.kind, MU_WHY_NODES);
    ck_assert_str_eq(job("big")->cond.type, "Unschedulable");
    ck_assert_str_eq(job("big")->cond.reason, "NotEnoughResources");
    ck_assert_str_eq(job("big")->cond.message,
                     "3/3 tasks in gang unschedulable: gang needs 3 more pods "
                     "with {nvidia.com/gpu: 9}; free in the cluster "
                     "{nvidia.com/gpu: 10}, at most {nvidia.com/gpu: 5} on "
                     "one node (n1); pod big-w-2 does not fit: 0/2 nodes are "
                     "unavailable: 2 Insufficient nvidia.com/gpu.");
    ck_assert_int_eq(mu_cluster_node(&sim.cluster, "n1")->used.v[
                         mu_resnames_index(&sim.cluster.rn, "nvidia.com/gpu",
                                           false)], 0);
}
END_TEST

START_TEST(test_gang_larger_than_the_cluster_is_not_admitted)
{
    load(NODE("n1", "5") GANG("big", "default", "8", "8", "1", ""));
    cycle();
    ck_assert_uint_eq(out.nbinds, 0);
    ck_assert_int_eq(job("big")->phase, MU_PG_PENDING);
    ck_assert_str_eq(job("big")->cond.message,
                     "8/8 tasks in gang unschedulable: insufficient "
                     "nvidia.com/gpu in the cluster: in use or admitted 0 + 8 "
                     "requested > 6 (5 × overcommit-factor 1.2)");
}
END_TEST

START_TEST(test_gang_that_fits_binds_whole)
{
    load(NODE("n1", "4") NODE("n2", "4") GANG("g", "default", "6", "6", "1",
                                               ""));
    cycle();
    ck_assert_uint_eq(out.nbinds, 6);
    for (size_t i = 0; i < out.nbinds; i++)
        ck_assert_int_eq(out.binds[i]->status, MU_TASK_BINDING);
    ck_assert_str_eq(job("g")->cond.type, "Scheduled");
}
END_TEST

START_TEST(test_first_gang_wins_and_second_waits_whole)
{
    load(NODE("n1", "8") NODE("n2", "4") GANG("a", "default", "8", "8", "1", "")
             GANG("b", "default", "8", "8", "1", ""));
    cycle();
    ck_assert_uint_eq(out.nbinds, 8);
    ck_assert_int_eq(mu_job_ready_num(job("a-")) + mu_job_ready_num(job("b-")),
                     8);
    ck_assert(mu_job_ready_num(job("a-")) == 0 ||
              mu_job_ready_num(job("b-")) == 0);
}
END_TEST

START_TEST(test_release_budget_places_gangs_in_turn)
{
    /* room for all three 4-pod gangs; a budget of 6 pods takes the first
     * whole (4), then not the second (4 + 4 > 6); the rest wait their turn */
    load(NODE("n1", "8") NODE("n2", "8") GANG("a", "default", "4", "4", "1", "")
             GANG("b", "default", "4", "4", "1", "")
                 GANG("c", "default", "4", "4", "1", ""));
    sim.cluster.release_budget = 6;
    cycle();
    ck_assert_uint_eq(out.nbinds, 4);
    ck_assert_int_eq(mu_job_ready_num(job("a-")), 4);
    ck_assert_int_eq(job("b-")->why.kind, MU_WHY_TURN);
    ck_assert_str_eq(job("b-")->cond.reason, "WaitingForRelease");
    ck_assert_str_eq(job("b-")->cond.message,
                     "4/4 tasks in gang unschedulable: it fits; waiting its "
                     "turn to be released: the gangs ahead of it fill "
                     "muster's release window (the pods released and not yet "
                     "bound, kept to the pace kube-scheduler binds them)");
    ck_assert_int_eq(job("c-")->why.kind, MU_WHY_TURN);
    /* a full window places nothing */
    run_binds();
    sim.cluster.release_budget = 0;
    cycle();
    ck_assert_uint_eq(out.nbinds, 0);
    ck_assert_int_eq(job("b-")->why.kind, MU_WHY_TURN);
    /* the first gang of a cycle goes whatever its size while any room is
     * left: a budget of 1 still takes b whole, and not c after it */
    sim.cluster.release_budget = 1;
    cycle();
    ck_assert_uint_eq(out.nbinds, 4);
    ck_assert_int_eq(mu_job_ready_num(job("b-")), 4);
    ck_assert_int_eq(job("c-")->why.kind, MU_WHY_TURN);
    /* no budget (the simulator's): everything that fits */
    run_binds();
    sim.cluster.release_budget = -1;
    cycle();
    ck_assert_uint_eq(out.nbinds, 4);
    ck_assert_int_eq(mu_job_ready_num(job("c-")), 4);
}
END_TEST

START_TEST(test_elastic_job_grows_to_what_fits)
{
    load(NODE("n1", "3") GANG("e", "default", "5", "2", "1", ""));
    cycle();
    ck_assert_uint_eq(out.nbinds, 3);
    ck_assert_str_eq(job("e")->cond.type, "Scheduled");
}
END_TEST

START_TEST(test_same_input_same_decisions)
{
    const char *y = NODE("n1", "8") NODE("n2", "8") NODE("n3", "8")
        GANG("a", "default", "4", "4", "2", "") GANG("b", "default", "6", "3",
                                                     "1", "")
            GANG("c", "default", "2", "2", "4", "");
    char *first[32];
    size_t n;

    load(y);
    cycle();
    n = out.nbinds;
    ck_assert_uint_le(n, 32);
    for (size_t i = 0; i < n; i++)
        first[i] = mu_xasprintf("%s@%s", out.binds[i]->key,
                                out.binds[i]->node->spec.meta.name);
    teardown();
    load(y);
    cycle();
    ck_assert_uint_eq(out.nbinds, n);
    for (size_t i = 0; i < n; i++) {
        char *s = mu_xasprintf("%s@%s", out.binds[i]->key,
                               out.binds[i]->node->spec.meta.name);

        ck_assert_str_eq(s, first[i]);
        free(s);
        free(first[i]);
    }
}
END_TEST

/* The first cycle binds `binds` pods (they run from 0); at 10 s the
 * objects of yaml arrive. */
static void arrive_at_10s(size_t binds, const char *yaml)
{
    cycle();
    ck_assert_uint_eq(out.nbinds, binds);
    run_binds();
    sim.now_ms = 10000;
    ck_assert_int_eq(mu_sim_load_text(&sim, "b.yaml", yaml), 0);
    mu_sim_step(&sim);
}

START_TEST(test_reclaim_evicts_a_minimal_set_of_whole_gangs)
{
    /* team-a runs four 2-GPU gangs on 8 GPUs; team-b (equal weight) needs
     * 2 GPUs: one gang of team-a goes, the youngest, and no more. */
    load(NODE("n1", "8") QUEUE("team-a", "1") QUEUE("team-b", "1")
             GANG("a1", "team-a", "2", "2", "1", "")
                 GANG("a2", "team-a", "2", "2", "1", "")
                     GANG("a3", "team-a", "2", "2", "1", "")
                         GANG("a4", "team-a", "2", "2", "1", ""));
    arrive_at_10s(8, GANG("b1", "team-b", "2", "2", "1", ""));
    cycle(); /* enqueue admits b1 (owed its share), reclaim evicts */
    ck_assert_uint_eq(out.nevicts, 2);
    ck_assert_ptr_eq(out.evicts[0].victim->job, out.evicts[1].victim->job);
    ck_assert_str_eq(out.evicts[0].action, "reclaim");
    ck_assert_int_eq(out.evicts[0].victim->status, MU_TASK_RELEASING);
    ck_assert_int_eq(job("b1")->why.kind, MU_WHY_WAITING);
    ck_assert_str_eq(job("b1")->cond.message,
                     "2/2 tasks in gang unschedulable: waiting for evicted "
                     "pods to terminate (2 terminating in the cluster)");
}
END_TEST

START_TEST(test_reclaim_evicts_nothing_when_the_gang_cannot_fit)
{
    /* b1 wants 3 GPUs on one node that has 2: no eviction helps. */
    load(NODE("n1", "2") NODE("n2", "2") QUEUE("team-a", "1")
             QUEUE("team-b", "1") GANG("a1", "team-a", "2", "2", "1", "")
                 GANG("a2", "team-a", "2", "2", "1", ""));
    cycle();
    run_binds();
    ck_assert_int_eq(mu_sim_load_text(&sim, "b.yaml",
                                      GANG("b1", "team-b", "1", "1", "3", "")),
                     0);
    mu_sim_step(&sim);
    cycle();
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_uint_eq(out.nbinds, 0);
    ck_assert_str_eq(job("b1")->cond.type, "Unschedulable");
}
END_TEST

START_TEST(test_reclaim_takes_elastic_surplus_before_a_gang)
{
    /* a1 runs 6 pods with minAvailable 2: its 4 surplus pods are what
     * team-b gets back, the gang itself stays. */
    load(NODE("n1", "8") QUEUE("team-a", "1") QUEUE("team-b", "1")
             GANG("a1", "team-a", "6", "2", "1", "")
                 GANG("a2", "team-a", "2", "2", "1", ""));
    for (int i = 0; i < 8; i++) {
        cycle();
        run_binds();
    }
    ck_assert_int_eq(mu_job_ready_num(job("a1")), 6);
    ck_assert_int_eq(mu_sim_load_text(&sim, "b.yaml",
                                      GANG("b1", "team-b", "2", "2", "1", "")),
                     0);
    mu_sim_step(&sim);
    cycle();
    ck_assert_uint_eq(out.nevicts, 2);
    for (size_t i = 0; i < out.nevicts; i++)
        ck_assert_ptr_eq(out.evicts[i].victim->job, job("a1"));
    ck_assert_int_eq(mu_job_ready_num(job("a1")), 4); /* still >= min */
}
END_TEST

START_TEST(test_preempt_displaces_lower_priority_gang_in_queue)
{
    load("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: hi}\nvalue: 100\n---\n" NODE("n1", "4")
             GANG("low", "default", "4", "4", "1", ""));
    cycle();
    run_binds();
    ck_assert_int_eq(mu_sim_load_text(&sim, "h.yaml",
                                      GANG("high", "default", "4", "4", "1",
                                           "  priorityClassName: hi\n")),
                     0);
    mu_sim_step(&sim);
    cycle();
    ck_assert_uint_eq(out.nevicts, 4);
    ck_assert_str_eq(out.evicts[0].action, "preempt");
    ck_assert_ptr_eq(out.evicts[0].for_job, job("high"));
}
END_TEST

/* Preempt takes the lowest-priority gang of the queue when another of a
 * higher priority than the pending one runs beside it: the queue's victims
 * are judged by the lowest, not by whichever comes last. */
START_TEST(test_preempt_finds_the_lowest_among_higher_ones)
{
    load("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: lo}\nvalue: 10\n---\n"
         "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: mid}\nvalue: 50\n---\n"
         "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
         "metadata: {name: hi}\nvalue: 100\n---\n" NODE("n1", "4")
             GANG("top", "default", "2", "2", "1", "  priorityClassName: hi\n")
                 GANG("low", "default", "2", "2", "1",
                      "  priorityClassName: lo\n"));
    cycle();
    run_binds();
    ck_assert_int_eq(mu_job_ready_num(job("top")), 2);
    ck_assert_int_eq(mu_job_ready_num(job("low")), 2);
    ck_assert_int_eq(mu_sim_load_text(&sim, "m.yaml",
                                      GANG("middle", "default", "2", "2", "1",
                                           "  priorityClassName: mid\n")),
                     0);
    mu_sim_step(&sim);
    cycle();
    ck_assert_uint_eq(out.nevicts, 2);
    for (size_t i = 0; i < out.nevicts; i++) {
        ck_assert_str_eq(out.evicts[i].action, "preempt");
        ck_assert_ptr_eq(out.evicts[i].victim->job, job("low"));
        ck_assert_ptr_eq(out.evicts[i].for_job, job("middle"));
    }
}
END_TEST

START_TEST(test_equal_priority_does_not_preempt)
{
    load(NODE("n1", "4") GANG("first", "default", "4", "4", "1", ""));
    cycle();
    run_binds();
    ck_assert_int_eq(mu_sim_load_text(&sim, "h.yaml",
                                      GANG("second", "default", "4", "4", "1",
                                           "")), 0);
    mu_sim_step(&sim);
    cycle();
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
}
END_TEST

START_TEST(test_unknown_queue_and_too_few_pods_say_so)
{
    load("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
         "metadata: {name: lost}\nspec: {minMember: 1, queue: nope}\n---\n"
         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
         "metadata: {name: short}\nspec: {minMember: 2}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: s0, annotations: "
         "{scheduling.k8s.io/group-name: short}}\nspec: {containers: "
         "[{name: c}]}\n");
    cycle();
    cycle();
    ck_assert_str_eq(job("lost")->cond.reason, "QueueNotFound");
    /* of the tasks that exist: 0/0 and 1/1, never 1/0 or 2/1 */
    ck_assert_str_eq(job("lost")->cond.message,
                     "0/0 tasks in gang unschedulable: queue \"nope\" does "
                     "not exist");
    ck_assert_str_eq(job("short")->cond.reason, "NotEnoughTasks");
    ck_assert_str_eq(job("short")->cond.message,
                     "1/1 tasks in gang unschedulable: Not enough valid tasks "
                     "for gang-scheduling, valid: 1, min: 2");
}
END_TEST

/* enqueue moves a job's phase during the cycle: a change of phase alone,
 * the condition as it was, is still a change the cycle reports (the
 * simulator's timeline, muster serve's status). */
START_TEST(test_a_phase_change_alone_is_reported)
{
    struct mu_job *j;
    bool seen = false;

    load("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
         "metadata: {name: short}\nspec: {minMember: 2}\n---\n"
         "apiVersion: v1\nkind: Pod\nmetadata: {name: s0, annotations: "
         "{scheduling.k8s.io/group-name: short}}\nspec: {containers: "
         "[{name: c}]}\n");
    cycle();
    j = job("short");
    ck_assert_int_eq(j->phase, MU_PG_INQUEUE);
    cycle();
    ck_assert_uint_eq(out.nchanged, 0); /* nothing new */
    /* as a restarted muster reads it back from a PodGroup status */
    j->phase = MU_PG_PENDING;
    cycle();
    ck_assert_int_eq(j->phase, MU_PG_INQUEUE);
    for (size_t i = 0; i < out.nchanged; i++)
        seen |= out.changed[i] == j;
    ck_assert_msg(seen, "Pending -> Inqueue with the same condition not "
                        "reported");
}
END_TEST

START_TEST(test_closed_queue_admits_nothing_new)
{
    load(NODE("n1", "4")
         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
         "metadata: {name: shut}\nspec: {weight: 1}\nstatus: {state: Closed}\n"
         "---\n" GANG("g", "shut", "1", "1", "1", ""));
    cycle();
    cycle();
    ck_assert_uint_eq(out.nbinds, 0);
    ck_assert_str_eq(job("g")->cond.reason, "QueueClosed");
    ck_assert_msg(strstr(job("g")->cond.message, "queue shut is Closed") != NULL,
                  "%s", job("g")->cond.message);
}
END_TEST

START_TEST(test_condition_changes_only_when_reason_changes)
{
    int64_t since;

    load(NODE("n1", "1") GANG("g", "default", "2", "2", "1", ""));
    cycle();
    since = job("g")->cond.since_ms;
    sim.now_ms = 5000;
    cycle();
    ck_assert_int_eq(job("g")->cond.since_ms, since);
    ck_assert_uint_eq(out.nchanged, 0);
}
END_TEST

START_TEST(test_without_enqueue_allocate_admits)
{
    struct mu_conf conf;
    struct mu_err err;
    static const char txt[] =
        "actions: \"allocate\"\ntiers:\n- plugins: [{name: gang}]\n"
        "- plugins: [{name: predicates}, {name: proportion}]\n";

    load(NODE("n1", "2") GANG("g", "default", "2", "2", "1", ""));
    mu_conf_release(&sim.conf);
    ck_assert_int_eq(mu_conf_parse("c", txt, sizeof(txt) - 1, &conf, &err), 0);
    sim.conf = conf;
    cycle();
    ck_assert_uint_eq(out.nbinds, 2);
}
END_TEST

START_TEST(test_besteffort_pod_is_backfilled)
{
    load(NODE("n1", "1")
         "apiVersion: v1\nkind: Pod\nmetadata: {name: be}\n"
         "spec: {containers: [{name: c}]}\n");
    cycle();
    ck_assert_uint_eq(out.nbinds, 1);
    ck_assert_str_eq(out.binds[0]->pod.meta.name, "be");
}
END_TEST

/* ---- reclaim's damping (proportion's arguments) ---- */

/* load() with the default's plugins but overcommit (which admits no gang
 * past 1.2 times the cluster: these clusters are full), and proportion's
 * arguments args (a flow mapping's inside). */
static void load_damped(const char *args, const char *yaml)
{
    char *txt = mu_xasprintf(
        "actions: \"enqueue, allocate, backfill, reclaim, preempt\"\n"
        "tiers:\n- plugins: [{name: priority}, {name: gang}, "
        "{name: conformance}]\n- plugins: [{name: drf}, "
        "{name: predicates}, {name: proportion, arguments: {%s}}, "
        "{name: nodeorder}, {name: binpack}]\n", args);
    struct mu_conf conf;
    struct mu_err err;

    load(yaml);
    mu_conf_release(&sim.conf);
    ck_assert_int_eq(mu_conf_parse("c", txt, strlen(txt), &conf, &err), 0);
    sim.conf = conf;
    free(txt);
}

#define TEAM_A                                                                \
    NODE("n1", "8") QUEUE("team-a", "1") QUEUE("team-b", "1")                 \
    GANG("a1", "team-a", "2", "2", "1", "") GANG("a2", "team-a", "2", "2", "1", "") \
    GANG("a3", "team-a", "2", "2", "1", "") GANG("a4", "team-a", "2", "2", "1", "")

START_TEST(test_reclaim_needs_the_whole_gang_owed)
{
    /* team-a runs gangs of 6 and 2 GPUs on 8; team-b deserves 4 and its
     * gang needs 6. Reclaim for it would put team-b 2 over its share and
     * team-a (then under) would take them back, for ever: nothing is
     * evicted, and no damping is blamed (the dry run's allocatable says
     * no at the gang's fifth pod; preemptive says so up front). */
    load_damped("", NODE("n1", "8") QUEUE("team-a", "1") QUEUE("team-b", "1")
                        GANG("a1", "team-a", "6", "6", "1", "")
                            GANG("a2", "team-a", "2", "2", "1", ""));
    arrive_at_10s(8, GANG("b1", "team-b", "6", "6", "1", ""));
    cycle();
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_ptr_null(strstr(job("b1")->cond.message, "reclaim waits"));
}
END_TEST

/* Deletes job prefix and its pods, as if its owner deleted them. */
static void delete_job(const char *prefix)
{
    struct mu_job *j = job(prefix);

    while (j->ntasks)
        mu_cluster_remove_task(&sim.cluster, j->tasks[j->ntasks - 1]);
    mu_cluster_remove_job(&sim.cluster, j);
    mu_cluster_link(&sim.cluster);
}

START_TEST(test_reclaim_waits_for_a_settled_share)
{
    /* At 10 s team-b's 4-GPU gang and team-c's 100-GPU pod arrive: with
     * weights 1:1:2, team-b's share is 2 of the 8 GPUs, not the whole gang.
     * At 20 s team-c's pod is deleted: team-b's share is 4 now, but it was
     * 2 a moment ago; it reclaims once the 2 has left the shareWindow. */
    load_damped("proportion.shareWindow: 2m", TEAM_A QUEUE("team-c", "2"));
    arrive_at_10s(8, GANG("b1", "team-b", "4", "4", "1", "")
                       GANG("c0", "team-c", "1", "1", "100", ""));
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_ptr_null(strstr(job("b1")->cond.message, "reclaim waits"));
    sim.now_ms = 20000;
    delete_job("c0");
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_ptr_nonnull(strstr(
        job("b1")->cond.message,
        "; reclaim waits: queue team-b is owed the gang's nvidia.com/gpu now, "
        "not yet over time: allocated 0 + 4 the gang lacks > 2, the least "
        "its deserved share was in the last 120s (proportion.shareWindow)"));
    ck_assert_int_eq(out.wake_ms, 30000); /* the window's next span */
    sim.now_ms = 60000;
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    sim.now_ms = 120000; /* the span that saw 2 has left the window */
    cycle();
    ck_assert_uint_eq(out.nevicts, 4);
    ck_assert_str_eq(out.evicts[0].action, "reclaim");
}
END_TEST

START_TEST(test_a_team_whose_work_comes_after_a_quiet_spell_is_owed_at_once)
{
    /* team-b runs a GPU-less pod, so it deserves no GPU, but it waits for
     * nothing: when its gang comes at 60 s it is owed at once */
    load_damped("proportion.shareWindow: 2m", TEAM_A);
    arrive_at_10s(8, GANG("b0", "team-b", "1", "1", "0", ""));
    cycle();
    run_binds();
    sim.now_ms = 30000;
    cycle();
    sim.now_ms = 60000;
    ck_assert_int_eq(mu_sim_load_text(&sim, "b1.yaml",
                                      GANG("b1", "team-b", "2", "2", "1", "")),
                     0);
    mu_sim_step(&sim);
    cycle();
    ck_assert_uint_eq(out.nevicts, 2);
}
END_TEST

START_TEST(test_reclaim_may_take_a_queue_below_its_share_for_a_whole_gang)
{
    /* 10 GPUs; team-a's capability 4, so team-b deserves 6 and holds 8
     * in two 4-GPU pods on n1; team-a's 4-GPU pod fits only there. Giving
     * it its share puts team-b at 4, below its 6: reclaim still does (the
     * evicted gang cannot win it back: team-b is not owed a whole 4) */
    load_damped("", NODE("n1", "8") NODE("n2", "2")
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                "metadata: {name: team-a}\nspec: {weight: 1, capability: "
                "{nvidia.com/gpu: 4}}\n---\n" QUEUE("team-b", "1")
                    GANG("b1", "team-b", "1", "1", "4", "")
                        GANG("b2", "team-b", "1", "1", "4", ""));
    arrive_at_10s(2, GANG("a1", "team-a", "1", "1", "4", ""));
    cycle();
    ck_assert_uint_eq(out.nevicts, 1);
    cycle();
    ck_assert_uint_eq(out.nevicts, 0); /* and nothing back */
}
END_TEST

START_TEST(test_reclaim_spares_a_queue_that_would_be_owed_its_waiting_gang)
{
    /* 8 GPUs on n1; team-a's capability 3, so team-b deserves 5 and holds
     * 8 in two 4-GPU pods. team-a's 3-GPU pod would take one of them: team-b
     * at 4 would then be owed its own waiting 1-GPU gang at once (4 + 1 <=
     * 5) while below team-a's share (4/5 against 3/3), so reclaim leaves it
     * (the least waiting need of the victim's queue, proportion.c vneed_of) */
    load_damped("", NODE("n1", "8")
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                "metadata: {name: team-a}\nspec: {weight: 1, capability: "
                "{nvidia.com/gpu: 3}}\n---\n" QUEUE("team-b", "1")
                    GANG("b1", "team-b", "1", "1", "4", "")
                        GANG("b2", "team-b", "1", "1", "4", ""));
    cycle();
    ck_assert_uint_eq(out.nbinds, 2);
    run_binds();
    sim.now_ms = 10000;
    ck_assert_int_eq(
        mu_sim_load_text(&sim, "a.yaml",
                         GANG("a1", "team-a", "1", "1", "3", "")
                             GANG("b3", "team-b", "1", "1", "1", "")),
        0);
    mu_sim_step(&sim);
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
}
END_TEST

START_TEST(test_reclaim_spares_gangs_younger_than_min_runtime)
{
    load_damped("proportion.shareWindow: 0s, proportion.reclaimMinRuntime: 5m",
                TEAM_A);
    arrive_at_10s(8, GANG("b1", "team-b", "2", "2", "1", ""));
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_int_eq(out.wake_ms, 300000); /* team-a's gangs turn 5m old */
    sim.now_ms = 300000;
    cycle();
    ck_assert_uint_eq(out.nevicts, 2);
}
END_TEST

START_TEST(test_a_gang_reclaim_evicted_does_not_reclaim_straight_back)
{
    load_damped("proportion.shareWindow: 0s", TEAM_A);
    arrive_at_10s(8, GANG("b1", "team-b", "2", "2", "1", ""));
    job("b1")->reclaimed = true; /* as if reclaim had evicted it at 5 s */
    job("b1")->reclaimed_ms = 5000;
    cycle();
    cycle();
    ck_assert_uint_eq(out.nevicts, 0);
    ck_assert_ptr_nonnull(strstr(job("b1")->cond.message,
                                 "; reclaim waits: gang default/b1-"));
    ck_assert_ptr_nonnull(strstr(job("b1")->cond.message,
                                 " was evicted by reclaim less than 600s ago "
                                 "(proportion.reclaimWindow); it may not "
                                 "reclaim for itself before that"));
    ck_assert_int_eq(out.wake_ms, 605000);
    sim.now_ms = 605000;
    cycle();
    ck_assert_uint_eq(out.nevicts, 2);
    /* and its victims' gang is marked in turn */
    ck_assert(out.evicts[0].victim->job->reclaimed);
    ck_assert_int_eq(out.evicts[0].victim->job->reclaimed_ms, 605000);
}
END_TEST

START_TEST(test_a_bad_damping_argument_is_warned_and_defaulted)
{
    load_damped("proportion.reclaimMinRuntime: soon, proportion.reclaimWindow: -1m",
                TEAM_A);
    cycle();
    ck_assert_uint_eq(sim.conf.nwarnings, 2);
    ck_assert_str_eq(sim.conf.warnings[0],
                     "plugin proportion: argument proportion.reclaimMinRuntime: "
                     "invalid duration \"soon\"; using 0s");
    ck_assert_str_eq(sim.conf.warnings[1],
                     "plugin proportion: argument proportion.reclaimWindow: "
                     "must not be negative; using 10m");
}
END_TEST

/* The node index scores a changed node again once per change, however
 * often the dirty log names it: two places and their rollback name two
 * nodes twice each, and the next pick scores each of them once. */
START_TEST(test_node_index_scores_a_changed_node_once)
{
    struct mu_ssn s;
    struct mu_place p;
    struct mu_job *j;
    struct mu_cnode *a, *b;
    size_t mark;
    bool pipe;

    load(QUEUE("q", "1") NODE("n1", "8") NODE("n2", "8") NODE("n3", "8")
             GANG("g", "q", "2", "2", "1", ""));
    mu_ssn_open(&s, &sim.cluster, &sim.conf, sim.now_ms);
    mu_place_init(&p, &s);
    j = job("g");
    ck_assert_uint_eq(j->ntasks, 2);
    a = mu_pick_node(&p, j->tasks[0], true, &pipe, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(p.nrescored, 0);
    b = a == sim.cluster.nodes[0] ? sim.cluster.nodes[1]
                                  : sim.cluster.nodes[0];
    mark = mu_stmt_mark(&s.stmt);
    mu_stmt_place(&s.stmt, j->tasks[0], a, MU_TASK_ALLOCATED);
    mu_stmt_place(&s.stmt, j->tasks[1], b, MU_TASK_ALLOCATED);
    mu_place_rollback(&p, mark);
    ck_assert_ptr_eq(mu_pick_node(&p, j->tasks[0], true, &pipe, NULL), a);
    ck_assert_uint_eq(p.nrescored, 2);
    mu_place_release(&p);
    mu_ssn_close(&s);
}
END_TEST

/* ---- the indexed paths against the straightforward ones ----
 *
 * Seeded random clusters with something for reclaim and preempt to do:
 * nodes in two pools, queues of several weights (some not reclaimable),
 * two priority classes, running gangs (some elastic, some pods not
 * preemptable or in kube-system) and pending gangs, some of them tied to a
 * pool. Each is scheduled twice, once with the place state's `plain` set,
 * and both must decide the same binds and evictions, in the same order.
 * This covers the node index too (plain: every pick scores every node):
 * it fails if a changed node is sifted only one way or left in its heap
 * when it no longer fits.
 */

struct rnd {
    uint64_t s;
};

static uint64_t rnd_next(struct rnd *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}

static int rnd_below(struct rnd *r, int n)
{
    return n > 0 ? (int)(rnd_next(r) % (uint64_t)n) : 0;
}

static void kv1(struct mu_kvs *kvs, const char *k, const char *v)
{
    kvs->n = 1;
    kvs->v = mu_xcalloc(1, sizeof(*kvs->v));
    kvs->v[0].key = mu_xstrdup(k);
    kvs->v[0].value = mu_xstrdup(v);
}

#define RG_NODES_MAX 24

struct rgen {
    struct mu_cluster *c;
    struct rnd r;
    int gpu, nnodes, nqueues;
    int free_gpus[RG_NODES_MAX];
};

static void rg_pod(struct rgen *g, const char *ns, const char *group, int i,
                   int gpus, int node, const char *pool, int64_t created)
{
    struct mu_pod p;
    struct mu_err err;

    memset(&p, 0, sizeof(p));
    p.meta.ns = mu_xstrdup(ns);
    p.meta.name = mu_xasprintf("%s-w-%d", group, i);
    p.meta.created = created;
    p.scheduler_name = mu_xstrdup("volcano");
    p.phase = MU_POD_PENDING;
    if (node >= 0) {
        p.node_name = mu_xasprintf("n%02d", node);
        p.phase = MU_POD_RUNNING;
    }
    mu_res_zero(&p.req);
    mu_res_put(&p.req, MU_RES_CPU, 1000);
    mu_res_put(&p.req, g->gpu, gpus);
    mu_res_put(&p.req, MU_RES_PODS, 1);
    if (pool)
        kv1(&p.node_selector, "pool", pool);
    p.group = mu_xstrdup(group);
    p.task_spec = mu_xstrdup("w");
    p.task_index = i;
    p.preemptable = rnd_below(&g->r, 10) != 0;
    p.run_for_ms = -1;
    ck_assert_ptr_nonnull(mu_cluster_add_task(g->c, &p, &err));
}

/* A gang of 1-4 (running) or 1-6 (pending) pods of 1-2 GPUs each; running
 * pods go wherever they fit (one that finds no room stays pending). */
static void rg_gang(struct rgen *g, int n, bool run, int64_t created)
{
    static const char *const pcs[] = {NULL, "low", "high"};
    const char *ns = run && rnd_below(&g->r, 12) == 0 ? "kube-system" : "t";
    int size = 1 + rnd_below(&g->r, run ? 4 : 6);
    int gpus = 1 + rnd_below(&g->r, 2);
    const char *pool = !run && rnd_below(&g->r, 4) == 0 ? "a" : NULL;
    const char *pc = pcs[rnd_below(&g->r, 3)];
    struct mu_podgroup pg;
    struct mu_err err;
    char *name = mu_xasprintf("%s%03d", run ? "r" : "p", n);

    memset(&pg, 0, sizeof(pg));
    pg.meta.ns = mu_xstrdup(ns);
    pg.meta.name = mu_xstrdup(name);
    pg.meta.created = created;
    pg.min_member = rnd_below(&g->r, 3) == 0 ? 1 + rnd_below(&g->r, size)
                                             : size;
    pg.queue = mu_xasprintf("q%d", rnd_below(&g->r, g->nqueues));
    pg.priority_class = mu_xstrdup_or_null(pc);
    pg.phase = run ? MU_PG_RUNNING : MU_PG_INQUEUE;
    ck_assert_ptr_nonnull(mu_cluster_add_job(g->c, &pg, &err));
    for (int i = 0; i < size; i++) {
        int node = -1;

        for (int k = 0; run && k < g->nnodes && node < 0; k++) {
            int at = (n * 7 + i + k) % g->nnodes;

            if (g->free_gpus[at] >= gpus)
                node = at;
        }
        if (node >= 0)
            g->free_gpus[node] -= gpus;
        rg_pod(g, ns, name, i, gpus, node, pool, created);
    }
    free(name);
}

static void rg_build(struct mu_cluster *c, uint64_t seed)
{
    struct rgen g;
    struct mu_err err;
    int nrun, npend;

    memset(&g, 0, sizeof(g));
    g.c = c;
    g.r.s = seed * 0x9e3779b97f4a7c15ull + 1;
    g.gpu = mu_resnames_index(&c->rn, "nvidia.com/gpu", true);
    g.nnodes = 4 + rnd_below(&g.r, RG_NODES_MAX - 4);
    g.nqueues = 2 + rnd_below(&g.r, 4);
    for (int i = 0; i < g.nnodes; i++) {
        struct mu_node n;

        memset(&n, 0, sizeof(n));
        n.meta.name = mu_xasprintf("n%02d", i);
        kv1(&n.meta.labels, "pool", i % 3 ? "b" : "a");
        g.free_gpus[i] = rnd_below(&g.r, 2) ? 8 : 4;
        mu_res_zero(&n.allocatable);
        mu_res_put(&n.allocatable, MU_RES_CPU, 64000);
        mu_res_put(&n.allocatable, MU_RES_PODS, 110);
        mu_res_put(&n.allocatable, g.gpu, g.free_gpus[i]);
        ck_assert_ptr_nonnull(mu_cluster_add_node(c, &n, &err));
    }
    for (int i = 0; i < g.nqueues; i++) {
        struct mu_queue_spec q;

        memset(&q, 0, sizeof(q));
        q.meta.name = mu_xasprintf("q%d", i);
        q.meta.created = 1000 + i;
        q.weight = 1 + rnd_below(&g.r, 4);
        q.reclaimable = rnd_below(&g.r, 5) != 0;
        q.state = MU_QUEUE_OPEN;
        ck_assert_ptr_nonnull(mu_cluster_add_queue(c, &q, &err));
    }
    for (int i = 0; i < 2; i++) {
        struct mu_priorityclass pc = {mu_xstrdup(i ? "high" : "low"),
                                      i ? 1000 : 10, false, false};

        mu_cluster_add_priorityclass(c, &pc);
    }
    nrun = 2 + rnd_below(&g.r, 3 * g.nnodes);
    npend = 1 + rnd_below(&g.r, 2 * g.nnodes);
    for (int i = 0; i < nrun; i++)
        rg_gang(&g, i, true, 2000 + rnd_below(&g.r, 50));
    for (int i = 0; i < npend; i++)
        rg_gang(&g, i, false, 3000 + rnd_below(&g.r, 50));
    mu_cluster_link(c);
}

struct decided {
    char *text; /* every bind and eviction, in order */
    size_t nbinds, nreclaim, npreempt;
};

/* One session with the default configuration, as mu_cycle_run runs it,
 * with p.plain as given. */
static void rg_decide(uint64_t seed, bool plain, struct decided *d)
{
    static void (*const act[MU_ACT__COUNT])(struct mu_ssn *,
                                            struct mu_place *) = {
#define X(id, name) [MU_ACT_##id] = mu_action_##name,
        MU_ACTION_LIST(X)
#undef X
    };
    struct mu_cluster c;
    struct mu_conf conf;
    struct mu_ssn s;
    struct mu_place p;
    struct mu_sb sb;

    mu_cluster_init(&c);
    rg_build(&c, seed);
    mu_conf_default(&conf);
    mu_ssn_open(&s, &c, &conf, 4000 * 1000);
    mu_place_init(&p, &s);
    p.plain = plain;
    for (int i = 0; i < conf.nactions; i++)
        act[conf.actions[i]](&s, &p);
    mu_sb_init(&sb);
    mu_sb_add(&sb, "");
    memset(d, 0, sizeof(*d));
    for (size_t i = 0; i < s.nbinds; i++)
        mu_sb_addf(&sb, "bind %s %s\n", s.binds[i]->key,
                   s.binds[i]->node->spec.meta.name);
    for (size_t i = 0; i < s.nevicts; i++) {
        mu_sb_addf(&sb, "%s %s for %s\n", s.evicts[i].action,
                   s.evicts[i].victim->key, s.evicts[i].for_job->key);
        if (!strcmp(s.evicts[i].action, "reclaim"))
            d->nreclaim++;
        else
            d->npreempt++;
    }
    d->nbinds = s.nbinds;
    d->text = mu_sb_detach(&sb);
    mu_place_release(&p);
    mu_ssn_close(&s);
    mu_conf_release(&conf);
    mu_cluster_release(&c);
}

START_TEST(test_indexed_eviction_decides_as_the_plain_scan)
{
    size_t binds = 0, reclaim = 0, preempt = 0;

    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct decided a, b;

        rg_decide(seed, false, &a);
        rg_decide(seed, true, &b);
        ck_assert_msg(!strcmp(a.text, b.text),
                      "seed %llu: indexed\n%s\nplain\n%s",
                      (unsigned long long)seed, a.text, b.text);
        binds += a.nbinds;
        reclaim += a.nreclaim;
        preempt += a.npreempt;
        free(a.text);
        free(b.text);
    }
    /* the clusters gave both actions something to do */
    ck_assert_uint_gt(binds, 100);
    ck_assert_uint_gt(reclaim, 20);
    ck_assert_uint_gt(preempt, 20);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cycle");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_gang_that_does_not_fit_places_nothing);
    tcase_add_test(tc, test_gang_larger_than_the_cluster_is_not_admitted);
    tcase_add_test(tc, test_gang_that_fits_binds_whole);
    tcase_add_test(tc, test_first_gang_wins_and_second_waits_whole);
    tcase_add_test(tc, test_release_budget_places_gangs_in_turn);
    tcase_add_test(tc, test_elastic_job_grows_to_what_fits);
    tcase_add_test(tc, test_same_input_same_decisions);
    tcase_add_test(tc, test_reclaim_evicts_a_minimal_set_of_whole_gangs);
    tcase_add_test(tc, test_reclaim_evicts_nothing_when_the_gang_cannot_fit);
    tcase_add_test(tc, test_reclaim_takes_elastic_surplus_before_a_gang);
    tcase_add_test(tc, test_preempt_displaces_lower_priority_gang_in_queue);
    tcase_add_test(tc, test_preempt_finds_the_lowest_among_higher_ones);
    tcase_add_test(tc, test_equal_priority_does_not_preempt);
    tcase_add_test(tc, test_unknown_queue_and_too_few_pods_say_so);
    tcase_add_test(tc, test_a_phase_change_alone_is_reported);
    tcase_add_test(tc, test_closed_queue_admits_nothing_new);
    tcase_add_test(tc, test_condition_changes_only_when_reason_changes);
    tcase_add_test(tc, test_without_enqueue_allocate_admits);
    tcase_add_test(tc, test_besteffort_pod_is_backfilled);
    tcase_add_test(tc, test_indexed_eviction_decides_as_the_plain_scan);
    tcase_add_test(tc, test_node_index_scores_a_changed_node_once);
    tcase_add_test(tc, test_reclaim_needs_the_whole_gang_owed);
    tcase_add_test(tc, test_reclaim_waits_for_a_settled_share);
    tcase_add_test(tc, test_a_team_whose_work_comes_after_a_quiet_spell_is_owed_at_once);
    tcase_add_test(tc, test_reclaim_spares_gangs_younger_than_min_runtime);
    tcase_add_test(tc, test_reclaim_may_take_a_queue_below_its_share_for_a_whole_gang);
    tcase_add_test(tc, test_reclaim_spares_a_queue_that_would_be_owed_its_waiting_gang);
    tcase_add_test(tc, test_a_gang_reclaim_evicted_does_not_reclaim_straight_back);
    tcase_add_test(tc, test_a_bad_damping_argument_is_warned_and_defaulted);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
