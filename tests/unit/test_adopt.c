/* Takeover of another leader's releases (mu_enforcer_adopt,
 * src/serve/enforce.h), from the annotations a release writes on its
 * members, with a real writer on the fake API server (test_ctl_harness.h):
 * a release whose members are all there is finished (its unbound members
 * one batch in the ledger, on their node); one that is missing members is
 * undone (its pinned pods deleted, woken pods left alone). And the
 * remaker (src/serve/remake.h) on the same fixture: a pod pinned to a node
 * that is gone is deleted, or made again when nothing else would; and the
 * bookkeeping of gangs running partial (mu_enforcer_partial). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "serve/enforce.h"
#include "serve/remake.h"
#include "test_ctl_harness.h"

static struct mu_enforcer enf;
static struct mu_remaker rmk;
/* what fake_bind_gang saw and answers (reset for each test: under
 * valgrind the tests run in one process) */
static int gang_calls, gang_n, gang_rc;
static char gang_release[128];

static void setup(void)
{
    th_start(NULL);
    mu_enforcer_init(&enf, &th.ctl, 20000);
    mu_remaker_init(&rmk, &th.ctl, &enf);
    gang_calls = gang_n = gang_rc = 0;
    gang_release[0] = '\0';
}

static void teardown(void)
{
    th_stop_writer();
    mu_remaker_release(&rmk);
    mu_enforcer_release(&enf);
    th_stop();
}

static void add_node(const char *name)
{
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
        "{\"cpu\":\"8\",\"memory\":\"64Gi\",\"pods\":\"10\"}}}", name);
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_node n;

    ck_assert_int_eq(mu_node_decode(j, &th.cluster.rn, &n, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_node(&th.cluster, &n, NULL));
    json_decref(j);
    free(txt);
}

/* A pod of release rel (NULL: none) of size n; bound to node_name (NULL:
 * not bound); gated; pinned: released by muster's gate. A pod whose name
 * starts with "bare" has no controller; the others have a Job's
 * controller ownerReference. */
static void add_pod(const char *name, const char *rel, int n,
                    const char *node, const char *node_name, bool gated,
                    bool pinned)
{
    char *ann = rel ? mu_xasprintf(
                          "\"annotations\":{\"muster.io/release\":\"%s\","
                          "\"muster.io/release-size\":\"%d\","
                          "\"muster.io/reserved-node\":\"%s\"%s},",
                          rel, n, node,
                          pinned ? ",\"muster.io/release-pinned\":\"true\""
                                 : "")
                    : mu_xstrdup("");
    char *nn = node_name ? mu_xasprintf("\"nodeName\":\"%s\",", node_name)
                         : mu_xstrdup("");
    const char *owner = strncmp(name, "bare", 4)
                            ? "\"ownerReferences\":[{\"apiVersion\":"
                              "\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
                              "\"name\":\"j\",\"uid\":\"u-j\","
                              "\"controller\":true}],"
                            : "";
    char *txt = mu_xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"a\",\"uid\":\"u-%s\","
        "%s%s\"labels\":{}},\"spec\":{%s\"schedulerName\":\"volcano\",%s"
        "\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"%s\"}}",
        name, name, ann, owner, nn,
        gated ? "\"schedulingGates\":[{\"name\":\"muster.io/gang\"}]," : "",
        node_name ? "Running" : "Pending");
    json_t *j = json_loads(txt, 0, NULL);
    struct mu_pod p;
    struct mu_err err;

    ck_assert_msg(j != NULL, "%s", txt);
    ck_assert_int_eq(mu_pod_decode(j, &th.cluster.rn, &p, &err), 0);
    ck_assert_ptr_nonnull(mu_cluster_update_task(&th.cluster, &p, &err));
    json_decref(j);
    free(txt);
    free(ann);
    free(nn);
}

START_TEST(adopt_finishes_a_whole_release_and_undoes_a_partial_one)
{
    const struct mu_resv *r;

    add_node("gpu-1");
    add_node("gpu-2");
    /* a/g#5: one member bound, two pinned and waiting: finished */
    add_pod("g-0", "a/g#5", 3, "gpu-1", "gpu-1", false, true);
    add_pod("g-1", "a/g#5", 3, "gpu-2", NULL, false, true);
    add_pod("g-2", "a/g#5", 3, "gpu-2", NULL, false, true);
    /* a/h#9: one member pinned, two still gated: undone */
    add_pod("h-0", "a/h#9", 3, "gpu-1", NULL, false, true);
    add_pod("h-1", NULL, 0, NULL, NULL, true, false);
    add_pod("h-2", NULL, 0, NULL, NULL, true, false);
    /* a/k#2: an operator's pod woken, its peer gone: left alone */
    add_pod("k-0", "a/k#2", 2, "gpu-1", NULL, false, false);
    /* a plain pending pod and a gated one: nothing */
    add_pod("x", NULL, 0, NULL, NULL, false, false);
    kf_reply_body(&th.srv, 200, "{}");

    mu_enforcer_adopt(&enf);
    th_settle(2, 5000);

    r = mu_enforcer_resv(&enf, "a/g-1");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->release, "a/g#5");
    ck_assert_str_eq(r->node, "gpu-2");
    ck_assert_int_eq(r->batch, 2);
    ck_assert(r->pinned);
    ck_assert_ptr_nonnull(mu_enforcer_resv(&enf, "a/g-2"));
    ck_assert_int_eq(
        mu_cluster_task(&th.cluster, "a", "g-1")->status, MU_TASK_BINDING);
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/g-0"));
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/h-0"));
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/k-0"));
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/x"));
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path, "/api/v1/namespaces/a/pods/h-0");
    ck_assert_ptr_nonnull(strstr(th.logged, "release a/g#5: taken over, 2 of 3"));
    ck_assert_ptr_nonnull(strstr(th.logged, "release a/h#9: taken over "
                                            "incomplete"));
}
END_TEST

/* A batch that timed out (mu_enforcer_renew): kept on the same nodes under
 * a new id, nothing written, until a member goes or MU_RENEW_MAX. */
START_TEST(renew_keeps_a_timed_out_batch_on_its_nodes)
{
    const struct mu_resv *r;
    char *id;

    add_node("gpu-1");
    add_node("gpu-2");
    add_pod("g-0", "a/g#5", 2, "gpu-1", NULL, false, true);
    add_pod("g-1", "a/g#5", 2, "gpu-2", NULL, false, true);
    kf_reply_body(&th.srv, 200, "{}");
    mu_enforcer_adopt(&enf);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 0);
    ck_assert(!mu_enforcer_renew(&enf, "a/none#1"));

    ck_assert(mu_enforcer_renew(&enf, "a/g#5"));
    r = mu_enforcer_resv(&enf, "a/g-0");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_ne(r->release, "a/g#5");
    ck_assert_str_eq(r->node, "gpu-1");
    ck_assert_int_eq(r->batch, 2);
    ck_assert_int_eq(r->renewals, 1);
    id = mu_xstrdup(r->release);
    r = mu_enforcer_resv(&enf, "a/g-1");
    ck_assert_str_eq(r->release, id); /* one batch still */
    ck_assert_str_eq(r->node, "gpu-2");
    ck_assert_int_eq(
        mu_cluster_task(&th.cluster, "a", "g-1")->status, MU_TASK_BINDING);
    ck_assert(!mu_enforcer_renew(&enf, "a/g#5")); /* the old id is gone */
    ck_assert_ptr_nonnull(strstr(th.logged, "release a/g#5: not every member "
                                            "reached /bind in time; kept on "
                                            "the same nodes"));
    for (int i = 1; i < MU_RENEW_MAX; i++) {
        char *next;

        ck_assert(mu_enforcer_renew(&enf, id));
        next = mu_xstrdup(mu_enforcer_resv(&enf, "a/g-0")->release);
        free(id);
        id = next;
    }
    ck_assert(!mu_enforcer_renew(&enf, id)); /* kept often enough */
    th_settle(2, 2000);
    ck_assert_uint_eq(kf_count(&th.srv), 0); /* nothing was written */
    free(id);
}
END_TEST

START_TEST(renew_refuses_a_batch_that_lost_a_member)
{
    add_node("gpu-1");
    add_node("gpu-2");
    add_pod("g-0", "a/g#5", 2, "gpu-1", NULL, false, true);
    add_pod("g-1", "a/g#5", 2, "gpu-2", NULL, false, true);
    kf_reply_body(&th.srv, 200, "{}");
    mu_enforcer_adopt(&enf);
    mu_enforcer_pod_gone(&enf, "a/g-1", "u-g-1");
    ck_assert(!mu_enforcer_renew(&enf, "a/g#5"));
    ck_assert_str_eq(mu_enforcer_resv(&enf, "a/g-0")->release, "a/g#5");
}
END_TEST

START_TEST(adopt_never_deletes_a_pinned_pod_without_a_controller)
{
    char *why;

    add_node("gpu-1");
    /* a/h#9 incomplete: a controlled member and a bare one pinned, one
     * member still gated: only the controlled one is deleted */
    add_pod("h-0", "a/h#9", 3, "gpu-1", NULL, false, true);
    add_pod("bare-h-1", "a/h#9", 3, "gpu-1", NULL, false, true);
    add_pod("h-2", NULL, 0, NULL, NULL, true, false);
    kf_reply_body(&th.srv, 200, "{}");

    mu_enforcer_adopt(&enf);
    th_settle(2, 5000);

    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path, "/api/v1/namespaces/a/pods/h-0");
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/bare-h-1 was pinned to "
                                            "gpu-1 by release a/h#9, which "
                                            "did not complete; it has no "
                                            "controller to make it again: "
                                            "kept, pinned"));
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/bare-h-1"));
    /* a reason never hides a pin */
    why = mu_enforcer_reason(mu_cluster_task(&th.cluster, "a", "bare-h-1"),
                             "2/3 members");
    ck_assert_str_eq(why, "pinned to node gpu-1 by release a/h#9, not bound; "
                          "2/3 members");
    free(why);
    /* gated: not pinned */
    ck_assert_ptr_null(mu_enforcer_reason(
        mu_cluster_task(&th.cluster, "a", "h-2"), "2/3 members"));
}
END_TEST

START_TEST(failed_batch_deletes_only_its_pinned_pods_with_a_controller)
{
    add_node("gpu-1");
    add_node("gpu-2");
    /* a whole release taken over (both members in the ledger) whose
     * batch then fails at /bind */
    add_pod("g-0", "a/g#5", 2, "gpu-1", NULL, false, true);
    add_pod("bare-g-1", "a/g#5", 2, "gpu-2", NULL, false, true);
    kf_reply_body(&th.srv, 200, "{}");
    mu_enforcer_adopt(&enf);
    ck_assert_ptr_nonnull(mu_enforcer_resv(&enf, "a/g-0"));
    ck_assert_ptr_nonnull(mu_enforcer_resv(&enf, "a/bare-g-1"));

    mu_enforcer_bind_report(&enf, "a/g#5", false, "gang batch a/g#5: ...");
    th_settle(2, 5000);

    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path, "/api/v1/namespaces/a/pods/g-0");
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/g-0"));
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/bare-g-1"));
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/bare-g-1 was pinned to "
                                            "gpu-2 by a release that did not "
                                            "complete; it has no controller "
                                            "to make it again: kept, pinned"));
    /* the pod being deleted leaves the plans (a cycle before its delete
     * lands would release it again, and bind it only for the delete to
     * take it from under its gang); the kept one stays to be planned */
    ck_assert_int_eq(mu_cluster_task(&th.cluster, "a", "g-0")->status,
                     MU_TASK_UNKNOWN);
    ck_assert_int_eq(mu_cluster_task(&th.cluster, "a", "bare-g-1")->status,
                     MU_TASK_PENDING);
    /* a later event of the pod (its delete did not go through) shows it
     * as the API has it */
    add_pod("g-0", "a/g#5", 2, "gpu-1", NULL, false, true);
    ck_assert_int_eq(mu_cluster_task(&th.cluster, "a", "g-0")->status,
                     MU_TASK_PENDING);
}
END_TEST

/* The pod bare-p as the apiserver has it: released by muster to gpu-9
 * (pinned: the matchField a release adds, beside the user's own term),
 * unbound. */
static const char pinned_pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
    "\"bare-p\",\"namespace\":\"a\",\"uid\":\"u-bare-p\","
    "\"resourceVersion\":\"7\",\"labels\":{\"app\":\"x\"},\"annotations\":{"
    "\"muster.io/release\":\"a/p#1\",\"muster.io/release-size\":\"1\","
    "\"muster.io/reserved-node\":\"gpu-9\",\"muster.io/release-pinned\":"
    "\"true\",\"keep\":\"me\"}},\"spec\":{\"schedulerName\":\"volcano\","
    "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
    "Execution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
    "\"zone\",\"operator\":\"In\",\"values\":[\"z1\"]}],\"matchFields\":[{"
    "\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"gpu-9\"]}]"
    "}]}}},\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":"
    "\"Pending\"}}";

START_TEST(remade_pod_is_unpinned_gated_and_keeps_the_rest)
{
    json_t *pod = json_loads(pinned_pod, 0, NULL), *made, *want, *term;
    char *got;

    ck_assert_ptr_nonnull(pod);
    made = mu_serve_remade_pod(pod, "gpu-9");
    want = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
        "\"bare-p\",\"namespace\":\"a\",\"labels\":{\"app\":\"x\"},"
        "\"annotations\":{\"keep\":\"me\",\"muster.io/made-again-from\":"
        "\"u-bare-p\"}},\"spec\":{\"schedulerName\":\"volcano\",\"affinity\":"
        "{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\","
        "\"operator\":\"In\",\"values\":[\"z1\"]}]}]}}},\"containers\":[{"
        "\"name\":\"c\"}],\"schedulingGates\":[{\"name\":\"muster.io/gang\"}]}}",
        0, NULL);
    got = json_dumps(made, JSON_SORT_KEYS);
    ck_assert_msg(json_equal(made, want), "%s", got);
    free(got);
    json_decref(made);
    json_decref(want);
    /* the pin alone: the whole affinity goes */
    term = json_array_get(
        json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_object_get(pod, "spec"), "affinity"),
                    "nodeAffinity"),
                "requiredDuringSchedulingIgnoredDuringExecution"),
            "nodeSelectorTerms"),
        0);
    ck_assert_int_eq(json_object_del(term, "matchExpressions"), 0);
    made = mu_serve_remade_pod(pod, "gpu-9");
    ck_assert_ptr_null(json_object_get(json_object_get(made, "spec"),
                                       "affinity"));
    json_decref(made);
    json_decref(pod);
}
END_TEST

START_TEST(recover_makes_a_bare_pod_pinned_to_a_gone_node_again)
{
    json_t *body, *want;

    add_node("gpu-1");
    /* pinned to gpu-9, which is not in the cache; and one pinned to gpu-1,
     * which can still run it: left to the cycle */
    add_pod("bare-p", "a/p#1", 1, "gpu-9", NULL, false, true);
    add_pod("bare-q", "a/q#1", 1, "gpu-1", NULL, false, true);
    kf_reply_body(&th.srv, 200, pinned_pod);
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 201, "{}");

    mu_remaker_recover(&rmk);
    mu_remaker_recover(&rmk); /* one write per pod at a time */
    th_settle(2, 5000);

    ck_assert_uint_eq(kf_count(&th.srv), 3);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "GET");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path,
                     "/api/v1/namespaces/a/pods/bare-p");
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 1)->path,
                     "/api/v1/namespaces/a/pods/bare-p");
    body = json_loads(kf_req(&th.srv, 1)->body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(body, "preconditions"), "uid")),
                     "u-bare-p");
    json_decref(body);
    ck_assert_str_eq(kf_req(&th.srv, 2)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 2)->path, "/api/v1/namespaces/a/pods");
    body = json_loads(kf_req(&th.srv, 2)->body, 0, NULL);
    want = json_loads(pinned_pod, 0, NULL);
    {
        json_t *made = mu_serve_remade_pod(want, "gpu-9");

        ck_assert(json_equal(body, made));
        json_decref(made);
    }
    json_decref(want);
    json_decref(body);
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/bare-p is pinned to gpu-9, "
                                            "which is gone, and has no "
                                            "controller: making it again"));
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/bare-p was pinned to "
                                            "gpu-9, which cannot run it, and "
                                            "has no controller: made again"));
    ck_assert_ptr_null(mu_map_get(&rmk.pods, "u-bare-p"));
}
END_TEST

START_TEST(recover_never_gives_up_a_pod_it_deleted_to_make_again)
{
    struct mu_remake *m;

    add_pod("bare-p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 200, pinned_pod);
    kf_reply_body(&th.srv, 200, "{}");
    for (int i = 0; i < 3; i++) /* the run's creates */
        kf_reply_body(&th.srv, 500, "{\"kind\":\"Status\",\"code\":500}");
    kf_reply_body(&th.srv, 201, "{}"); /* the later try */

    mu_remaker_recover(&rmk);
    th_settle(2, 10000);
    ck_assert_uint_eq(kf_count(&th.srv), 5);
    m = mu_map_get(&rmk.pods, "u-bare-p");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(m->made);
    ck_assert_int_eq(m->tries, 1);
    ck_assert_ptr_nonnull(strstr(th.logged, "creating it failed (try 1)"));
    /* the watch shows the old pod gone: the pod to make is kept */
    mu_remaker_pod_gone(&rmk, "u-bare-p");
    ck_assert_ptr_nonnull(mu_map_get(&rmk.pods, "u-bare-p"));
    mu_remaker_recover(&rmk); /* before its time: nothing */
    th_settle(1, 2000);
    ck_assert_uint_eq(kf_count(&th.srv), 5);
    m->next_ns = 0;
    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 6);
    ck_assert_str_eq(kf_req(&th.srv, 5)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 5)->path, "/api/v1/namespaces/a/pods");
    ck_assert_str_eq(kf_req(&th.srv, 5)->body, kf_req(&th.srv, 4)->body);
    ck_assert_ptr_null(mu_map_get(&rmk.pods, "u-bare-p"));
}
END_TEST

START_TEST(recover_deletes_a_controlled_pod_pinned_to_a_gone_node_once)
{
    add_pod("p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 200, "{}");

    mu_remaker_recover(&rmk);
    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path, "/api/v1/namespaces/a/pods/p");
    mu_remaker_pod_gone(&rmk, "u-p");
    ck_assert_ptr_null(mu_map_get(&rmk.pods, "u-p"));
}
END_TEST

/* A delete that fails is not fire and forget: the entry waits its
 * backoff, then the pod, still stuck, is deleted again; and the pod's
 * DELETED event while a delete is in flight is kept for its done. */
START_TEST(recover_deletes_again_a_controlled_pod_whose_delete_failed)
{
    struct mu_remake *m;

    add_pod("p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 500, "{\"kind\":\"Status\",\"code\":500}");
    kf_reply_body(&th.srv, 200, "{}");

    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    m = mu_map_get(&rmk.pods, "u-p");
    ck_assert_ptr_nonnull(m);
    ck_assert(!m->inflight);
    ck_assert_int_eq(m->tries, 1);
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/p: deleting it failed "
                                            "(try 1)"));
    ck_assert(!mu_remaker_idle(&rmk));
    mu_remaker_recover(&rmk); /* before its time: nothing */
    th_settle(1, 1000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    m->next_ns = 0;
    mu_remaker_recover(&rmk);
    ck_assert(m->inflight);
    /* the pod's DELETED event before the delete's done: kept till then */
    mu_remaker_pod_gone(&rmk, "u-p");
    ck_assert_ptr_eq(mu_map_get(&rmk.pods, "u-p"), m);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 1)->method, "DELETE");
    ck_assert_str_eq(kf_req(&th.srv, 1)->path, "/api/v1/namespaces/a/pods/p");
    ck_assert_ptr_nonnull(strstr(th.logged, "pod a/p: deleting it again "
                                            "(try 2)"));
    ck_assert_ptr_null(mu_map_get(&rmk.pods, "u-p"));
    ck_assert(mu_remaker_idle(&rmk));
}
END_TEST

/* A failed delete whose pod is no longer stuck (its node came back) is
 * forgotten at its time, not sent again. */
START_TEST(recover_forgets_a_failed_delete_whose_pod_can_run_again)
{
    struct mu_remake *m;

    add_pod("p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 503, "{\"kind\":\"Status\",\"code\":503}");

    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    m = mu_map_get(&rmk.pods, "u-p");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->tries, 1);
    add_node("gpu-9");
    m->next_ns = 0;
    mu_remaker_recover(&rmk);
    th_settle(1, 1000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    ck_assert(mu_remaker_idle(&rmk));
}
END_TEST

/* A deleted pod whose DELETED event never comes (a relist that missed
 * it) is forgotten once the cache no longer holds it under that uid. */
START_TEST(recover_forgets_a_deleted_pod_the_cache_lost_without_its_event)
{
    struct mu_task *t;

    add_pod("p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 200, "{}");
    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 1);
    mu_remaker_recover(&rmk); /* still in the cache: still waiting */
    ck_assert(!mu_remaker_idle(&rmk));
    t = mu_map_get(&th.cluster.task_by_key, "a/p");
    ck_assert_ptr_nonnull(t);
    mu_cluster_remove_task(&th.cluster, t);
    mu_remaker_recover(&rmk);
    ck_assert(mu_remaker_idle(&rmk));
    ck_assert_uint_eq(kf_count(&th.srv), 1); /* no second delete */
}
END_TEST

START_TEST(failed_batch_tells_its_podgroup_why)
{
    json_t *j = json_loads("{\"metadata\":{\"name\":\"g\",\"namespace\":\"a\","
                           "\"uid\":\"u-g\"},\"spec\":{\"minMember\":1}}",
                           0, NULL);
    struct mu_podgroup pg;
    struct mu_pod p;
    json_t *body;

    add_node("gpu-1");
    ck_assert_int_eq(mu_podgroup_decode(j, &th.cluster.rn, &pg, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_add_job(&th.cluster, &pg, NULL));
    json_decref(j);
    j = json_loads(
        "{\"metadata\":{\"name\":\"bare-g-0\",\"namespace\":\"a\",\"uid\":"
        "\"u-bare-g-0\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
        "\"g\",\"muster.io/release\":\"a/g#5\",\"muster.io/release-size\":"
        "\"1\",\"muster.io/reserved-node\":\"gpu-1\","
        "\"muster.io/release-pinned\":\"true\"}},\"spec\":{\"schedulerName\":"
        "\"volcano\",\"containers\":[{\"name\":\"c\"}]},\"status\":{"
        "\"phase\":\"Pending\"}}",
        0, NULL);
    ck_assert_int_eq(mu_pod_decode(j, &th.cluster.rn, &p, NULL), 0);
    ck_assert_ptr_nonnull(mu_cluster_update_task(&th.cluster, &p, NULL));
    json_decref(j);
    mu_cluster_link(&th.cluster);
    kf_reply_body(&th.srv, 201, "{}");
    mu_enforcer_adopt(&enf);
    ck_assert_ptr_nonnull(mu_enforcer_resv(&enf, "a/bare-g-0"));

    mu_enforcer_bind_report(&enf, "a/g#5", false,
                            "gang batch a/g#5: binding a/bare-g-0 failed");
    th_settle(2, 5000);

    ck_assert_uint_eq(kf_count(&th.srv), 1); /* the event; no delete */
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path, "/api/v1/namespaces/a/events");
    body = json_loads(kf_req(&th.srv, 0)->body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(body, "involvedObject"), "kind")),
                     "PodGroup");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(body, "involvedObject"), "name")),
                     "g");
    ck_assert_str_eq(json_string_value(json_object_get(body, "reason")),
                     "BindFailed");
    ck_assert_str_eq(json_string_value(json_object_get(body, "message")),
                     "gang batch a/g#5: binding a/bare-g-0 failed");
    json_decref(body);
}
END_TEST

START_TEST(recover_reads_a_409_back_and_knows_its_own_pod)
{
    struct mu_remake *m;

    add_pod("bare-p", "a/p#1", 1, "gpu-9", NULL, false, true);
    kf_reply_body(&th.srv, 200, pinned_pod);
    kf_reply_body(&th.srv, 200, "{}");
    /* the name is still the old pod's (a finalizer): tried again later */
    kf_reply_body(&th.srv, 409, "{\"kind\":\"Status\",\"code\":409,"
                                "\"reason\":\"AlreadyExists\"}");
    kf_reply_body(&th.srv, 200, pinned_pod);
    for (int i = 0; i < 2; i++) {
        kf_reply_body(&th.srv, 500, "{\"kind\":\"Status\",\"code\":500}");
    }
    /* the later try: 409 again, and the pod there is the one made */
    kf_reply_body(&th.srv, 409, "{\"kind\":\"Status\",\"code\":409,"
                                "\"reason\":\"AlreadyExists\"}");
    kf_reply_body(&th.srv, 200,
                  "{\"metadata\":{\"name\":\"bare-p\",\"namespace\":\"a\","
                  "\"uid\":\"u-new\",\"annotations\":{"
                  "\"muster.io/made-again-from\":\"u-bare-p\"}}}");

    mu_remaker_recover(&rmk);
    th_settle(2, 10000);
    ck_assert_uint_eq(kf_count(&th.srv), 6); /* GET DELETE POST GET POST POST */
    ck_assert_str_eq(kf_req(&th.srv, 3)->method, "GET");
    m = mu_map_get(&rmk.pods, "u-bare-p");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->tries, 1);
    m->next_ns = 0;
    mu_remaker_recover(&rmk);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 8);
    ck_assert_str_eq(kf_req(&th.srv, 6)->method, "POST");
    ck_assert_str_eq(kf_req(&th.srv, 7)->method, "GET");
    ck_assert_ptr_null(mu_map_get(&rmk.pods, "u-bare-p"));
    ck_assert_ptr_nonnull(strstr(th.logged, "made again, unpinned, gated"));
}
END_TEST


/* ---- a plain batch bound at its release (enforce.h, bind_gang) ----------- */


static int fake_bind_gang(void *ctx, const char *release,
                          struct mu_task *const *t, int n)
{
    ck_assert_ptr_eq(ctx, &enf);
    gang_calls++;
    gang_n = n;
    snprintf(gang_release, sizeof(gang_release), "%s", release);
    for (int i = 0; i < n; i++)
        ck_assert_ptr_nonnull(mu_enforcer_resv(&enf, t[i]->key));
    return gang_rc;
}

/* Places pods names[0..n-1] (made with add_pod) on nodes n1, n2, ... as a
 * cycle would, reserves them as one batch and releases them. */
static void release_these(const char *const *names, int n)
{
    struct mu_task *binds[8];
    struct mu_cycle_out out;

    ck_assert_int_le(n, 8);
    mu_cluster_link(&th.cluster);
    for (int i = 0; i < n; i++) {
        char node[8];

        snprintf(node, sizeof(node), "n%d", i + 1);
        binds[i] = mu_cluster_task(&th.cluster, "a", names[i]);
        ck_assert_ptr_nonnull(binds[i]);
        mu_task_place(&th.cluster, binds[i], mu_cluster_node(&th.cluster, node),
                      MU_TASK_BINDING);
    }
    memset(&out, 0, sizeof(out));
    out.binds = binds;
    out.nbinds = (size_t)n;
    ck_assert(mu_enforcer_reserve(&enf, &out));
    mu_enforcer_release_pods(&enf, &out);
    th_settle(2, 5000);
}

/* A batch of plain pods nobody gated goes to bind_gang whole, with no
 * write (no wake-up), and a /filter miss of one of them wakes nothing. */
START_TEST(release_hands_a_plain_batch_to_bind_gang_unwoken)
{
    static const char *const names[] = {"p-0", "p-1"};

    add_node("n1");
    add_node("n2");
    add_pod("p-0", NULL, 0, NULL, NULL, false, false);
    add_pod("p-1", NULL, 0, NULL, NULL, false, false);
    enf.bind_gang = fake_bind_gang;
    enf.bind_gang_ctx = &enf;
    release_these(names, 2);
    ck_assert_int_eq(gang_calls, 1);
    ck_assert_int_eq(gang_n, 2);
    ck_assert_str_eq(mu_enforcer_resv(&enf, "a/p-0")->release, gang_release);
    ck_assert(mu_enforcer_resv(&enf, "a/p-0")->direct);
    ck_assert(mu_enforcer_resv(&enf, "a/p-1")->direct);
    ck_assert_uint_eq(kf_count(&th.srv), 0);
    mu_enforcer_filter_miss(&enf, "u-p-1");
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 0);
    /* its outcome comes as a bind report, as a /bind gang's does */
    mu_enforcer_bind_report(&enf, gang_release, false, NULL);
    ck_assert_ptr_null(mu_enforcer_resv(&enf, "a/p-0"));
}
END_TEST

/* bind_gang refusing (its queue full): the batch is released the other
 * way, each pod woken by a write. */
START_TEST(release_wakes_a_batch_bind_gang_refuses)
{
    static const char *const woken[] = {"w-0", "w-1"};

    add_node("n1");
    add_node("n2");
    add_pod("w-0", NULL, 0, NULL, NULL, false, false);
    add_pod("w-1", NULL, 0, NULL, NULL, false, false);
    enf.bind_gang = fake_bind_gang;
    enf.bind_gang_ctx = &enf;
    gang_rc = -EAGAIN;
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    release_these(woken, 2);
    ck_assert_int_eq(gang_calls, 1);
    ck_assert(!mu_enforcer_resv(&enf, "a/w-0")->direct);
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 0)->method, "PATCH");
    ck_assert_str_eq(kf_req(&th.srv, 0)->path,
                     "/api/v1/namespaces/a/pods/w-0/status");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 0)->body, "nominatedNodeName"));
    ck_assert(!mu_enforcer_has_ungated(&enf));
}
END_TEST

/* Nodes n1..nodes, pods gp-0 and gp-1 gated by muster, fake_bind_gang. */
static void gated_pair(int nodes)
{
    for (int i = 1; i <= nodes; i++) {
        char node[8];

        snprintf(node, sizeof(node), "n%d", i);
        add_node(node);
    }
    add_pod("gp-0", NULL, 0, NULL, NULL, true, false);
    add_pod("gp-1", NULL, 0, NULL, NULL, true, false);
    enf.bind_gang = fake_bind_gang;
    enf.bind_gang_ctx = &enf;
}

/* A batch of pods muster gated (a vcjob's): their release patches go out
 * (ungate and pin), the plain member is not woken, and once every patch
 * has landed the batch goes to bind_gang whole, the gated members
 * bindable while the cache still shows their gate. */
START_TEST(release_binds_a_gated_batch_once_its_patches_landed)
{
    static const char *const names[] = {"gp-0", "gp-1", "p-2"};

    gated_pair(3);
    add_pod("p-2", NULL, 0, NULL, NULL, false, false);
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    release_these(names, 3);
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert_str_eq(kf_req(&th.srv, 0)->path,
                     "/api/v1/namespaces/a/pods/gp-0");
    ck_assert_str_eq(kf_req(&th.srv, 1)->path,
                     "/api/v1/namespaces/a/pods/gp-1");
    ck_assert_ptr_nonnull(strstr(kf_req(&th.srv, 0)->body, "schedulingGates"));
    ck_assert_int_eq(gang_calls, 0); /* not before bind_ungated */
    ck_assert(mu_enforcer_has_ungated(&enf));
    ck_assert(mu_enforcer_resv(&enf, "a/gp-0")->ungated);
    ck_assert(mu_enforcer_resv(&enf, "a/p-2")->direct);
    ck_assert(mu_enforcer_bindable(&th.cluster,
                                   mu_cluster_task(&th.cluster, "a", "gp-1"),
                                   mu_enforcer_resv(&enf, "a/gp-1")));
    /* a /filter miss of the plain member wakes nothing meanwhile */
    mu_enforcer_filter_miss(&enf, "u-p-2");
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    mu_enforcer_bind_ungated(&enf);
    ck_assert_int_eq(gang_calls, 1);
    ck_assert_int_eq(gang_n, 3);
    ck_assert_str_eq(mu_enforcer_resv(&enf, "a/gp-0")->release, gang_release);
    ck_assert(!mu_enforcer_has_ungated(&enf));
    mu_enforcer_bind_ungated(&enf); /* once only */
    ck_assert_int_eq(gang_calls, 1);
}
END_TEST

/* The view calls a reserved pod gated by muster alone plain from its
 * release on (kube-scheduler brings it to /bind only once ungated); muster
 * binds it itself only once its patch has landed; a pod with another
 * gate, or not reserved, is neither. */
START_TEST(gated_pods_are_plain_at_bind_and_bindable_once_ungated)
{
    static const char *const names[] = {"gp-0", "gp-1"};
    const struct mu_task *t0, *t2;

    gated_pair(3);
    add_pod("other-gate", NULL, 0, NULL, NULL, false, false);
    t0 = mu_cluster_task(&th.cluster, "a", "gp-0");
    t2 = mu_cluster_task(&th.cluster, "a", "other-gate");
    ck_assert(!mu_enforcer_plain_at_bind(&th.cluster, t0, NULL));
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    enf.bind_gang = NULL; /* --gang-bind first: released the other way */
    mu_cluster_link(&th.cluster);
    {
        struct mu_task *binds[2];
        struct mu_cycle_out out;

        for (int i = 0; i < 2; i++) {
            char node[8];

            snprintf(node, sizeof(node), "n%d", i + 1);
            binds[i] = mu_cluster_task(&th.cluster, "a", names[i]);
            mu_task_place(&th.cluster, binds[i],
                          mu_cluster_node(&th.cluster, node), MU_TASK_BINDING);
        }
        memset(&out, 0, sizeof(out));
        out.binds = binds;
        out.nbinds = 2;
        ck_assert(mu_enforcer_reserve(&enf, &out));
        ck_assert(mu_enforcer_plain_at_bind(&th.cluster, t0,
                                            mu_enforcer_resv(&enf, "a/gp-0")));
        ck_assert(!mu_enforcer_bindable(&th.cluster, t0,
                                        mu_enforcer_resv(&enf, "a/gp-0")));
        mu_enforcer_release_pods(&enf, &out);
        th_settle(2, 5000);
    }
    ck_assert(mu_enforcer_bindable(&th.cluster, t0,
                                   mu_enforcer_resv(&enf, "a/gp-0")));
    ck_assert(!mu_enforcer_has_ungated(&enf)); /* no bind_gang: none kept */
    /* a second gate (someone else's) is kube-scheduler's to wait on */
    {
        char n3[] = "n3";
        struct mu_resv r = {.node = n3};
        struct mu_task *t = (struct mu_task *)t2;
        size_t ng = t->pod.ngates;
        bool mg = t->pod.muster_gate;

        t->pod.ngates = 2;
        t->pod.muster_gate = true;
        ck_assert(!mu_enforcer_plain_at_bind(&th.cluster, t, &r));
        t->pod.ngates = 1;
        ck_assert(mu_enforcer_plain_at_bind(&th.cluster, t, &r));
        /* a batch too big for its patches to land within the barrier's
         * bind window waits at /bind whole, as before */
        r.batch = MU_GATED_AT_RELEASE_MAX + 1;
        ck_assert(!mu_enforcer_plain_at_bind(&th.cluster, t, &r));
        t->pod.ngates = ng;
        t->pod.muster_gate = mg;
    }
}
END_TEST

/* A gated batch whose patch fails is not bound by muster (it expires, as
 * before); one bind_gang refuses is left to kube-scheduler, its plain
 * member woken then. */
START_TEST(release_leaves_a_gated_batch_whose_patch_fails_or_is_refused)
{
    static const char *const failing[] = {"gp-0", "gp-1"};
    static const char *const refused[] = {"gq-0", "q-1"};

    gated_pair(2);
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 500, "{\"message\":\"etcd is down\"}");
    release_these(failing, 2);
    ck_assert_uint_eq(kf_count(&th.srv), 2);
    ck_assert(!mu_enforcer_has_ungated(&enf));
    ck_assert(mu_enforcer_resv(&enf, "a/gp-0")->ungated);
    ck_assert(!mu_enforcer_resv(&enf, "a/gp-1")->ungated);
    ck_assert_int_eq(mu_enforcer_resv(&enf, "a/gp-1")->since_ns, 0);
    mu_enforcer_bind_ungated(&enf);
    ck_assert_int_eq(gang_calls, 0);

    add_pod("gq-0", NULL, 0, NULL, NULL, true, false);
    add_pod("q-1", NULL, 0, NULL, NULL, false, false);
    gang_rc = -EAGAIN;
    kf_reply_body(&th.srv, 200, "{}");
    kf_reply_body(&th.srv, 200, "{}");
    release_these(refused, 2);
    ck_assert_uint_eq(kf_count(&th.srv), 3); /* gq-0's patch only */
    mu_enforcer_bind_ungated(&enf);
    ck_assert_int_eq(gang_calls, 1);
    ck_assert(!mu_enforcer_resv(&enf, "a/q-1")->direct);
    th_settle(2, 5000);
    ck_assert_uint_eq(kf_count(&th.srv), 4);
    ck_assert_str_eq(kf_req(&th.srv, 3)->path,
                     "/api/v1/namespaces/a/pods/q-1/status");
}
END_TEST

/* A PodGroup running partial is timed from the first tick that sees it;
 * one deleted meanwhile is forgotten at the next tick, the others keep
 * their time. */
START_TEST(partial_forgets_a_podgroup_deleted_while_partial)
{
    const char *names[] = {"pa", "pb"};
    struct mu_job *j[2];
    struct mu_partial *p;
    int64_t since;

    for (int i = 0; i < 2; i++) {
        char *txt = mu_xasprintf("{\"metadata\":{\"name\":\"%s\","
                                 "\"namespace\":\"a\",\"uid\":\"u-%s\"},"
                                 "\"spec\":{\"minMember\":2}}",
                                 names[i], names[i]);
        json_t *js = json_loads(txt, 0, NULL);
        struct mu_podgroup pg;

        ck_assert_int_eq(mu_podgroup_decode(js, &th.cluster.rn, &pg, NULL),
                         0);
        j[i] = mu_cluster_add_job(&th.cluster, &pg, NULL);
        ck_assert_ptr_nonnull(j[i]);
        j[i]->phase = MU_PG_UNKNOWN;
        json_decref(js);
        free(txt);
    }
    mu_enforcer_partial(&enf);
    ck_assert_uint_eq(enf.partial.n, 2);
    p = mu_map_get(&enf.partial, "a/pb");
    ck_assert_ptr_nonnull(p);
    since = p->since_ns;
    mu_cluster_remove_job(&th.cluster, j[0]);
    mu_enforcer_partial(&enf);
    ck_assert_uint_eq(enf.partial.n, 1);
    ck_assert_ptr_null(mu_map_get(&enf.partial, "a/pa"));
    p = mu_map_get(&enf.partial, "a/pb");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->since_ns, since);
    j[1]->phase = MU_PG_RUNNING;
    mu_enforcer_partial(&enf);
    ck_assert_uint_eq(enf.partial.n, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adopt");
    TCase *tc = tcase_create("adopt");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, adopt_finishes_a_whole_release_and_undoes_a_partial_one);
    tcase_add_test(tc, renew_keeps_a_timed_out_batch_on_its_nodes);
    tcase_add_test(tc, renew_refuses_a_batch_that_lost_a_member);
    tcase_add_test(tc, adopt_never_deletes_a_pinned_pod_without_a_controller);
    tcase_add_test(tc,
                   failed_batch_deletes_only_its_pinned_pods_with_a_controller);
    tcase_add_test(tc, remade_pod_is_unpinned_gated_and_keeps_the_rest);
    tcase_add_test(tc, recover_makes_a_bare_pod_pinned_to_a_gone_node_again);
    tcase_add_test(tc, recover_never_gives_up_a_pod_it_deleted_to_make_again);
    tcase_add_test(tc,
                   recover_deletes_a_controlled_pod_pinned_to_a_gone_node_once);
    tcase_add_test(tc,
                   recover_deletes_again_a_controlled_pod_whose_delete_failed);
    tcase_add_test(tc, recover_forgets_a_failed_delete_whose_pod_can_run_again);
    tcase_add_test(tc,
                   recover_forgets_a_deleted_pod_the_cache_lost_without_its_event);
    tcase_add_test(tc, failed_batch_tells_its_podgroup_why);
    tcase_add_test(tc, release_hands_a_plain_batch_to_bind_gang_unwoken);
    tcase_add_test(tc, release_wakes_a_batch_bind_gang_refuses);
    tcase_add_test(tc, release_binds_a_gated_batch_once_its_patches_landed);
    tcase_add_test(
        tc, release_leaves_a_gated_batch_whose_patch_fails_or_is_refused);
    tcase_add_test(tc, gated_pods_are_plain_at_bind_and_bindable_once_ungated);
    tcase_add_test(tc, recover_reads_a_409_back_and_knows_its_own_pod);
    tcase_add_test(tc, partial_forgets_a_podgroup_deleted_while_partial);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
