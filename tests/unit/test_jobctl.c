/* The vcjob controller (src/ctrl/jobctl.h): Job and pod watch objects in,
 * the exact requests out, sent by a real writer (one worker, so in the
 * order they were submitted) to the fake API server of the kube tests,
 * which answers each request with the next scripted reply. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "api/vcjob.h"
#include "ctrl/jobctl.h"
#include "kube/writer.h"
#include "sched/cluster.h"
#include "test_ctl_harness.h"

#define NS "default"
#define PG_COLL "/apis/scheduling.volcano.sh/v1beta1/namespaces/" NS "/podgroups"
#define POD_COLL "/api/v1/namespaces/" NS "/pods"
#define JOBS "/apis/batch.volcano.sh/v1alpha1/namespaces/" NS "/jobs"
#define EVENTS "/api/v1/namespaces/" NS "/events"

static struct mu_jobctl *jc;
static size_t seen; /* requests already checked */

static void setup(void)
{
    th_start("jobctl-token");
    jc = mu_jobctl_new(&th.ctl); /* copies the context */
    seen = 0;
}

static void teardown(void)
{
    th_stop_writer(); /* its last done calls use the controller */
    mu_jobctl_free(jc);
    th_stop();
}

/* Every write sent and its completion handled (on this thread). */
static void settle(void)
{
    th_settle(1, 10000);
}

static void replies(int n, int status, const char *body)
{
    for (int i = 0; i < n; i++)
        kf_reply_body(&th.srv, status, body);
}

/* The next n requests are want[0..n) (va_list of "METHOD path"); returns
 * the index of the first one. */
static size_t expect_va(size_t n, va_list ap)
{
    size_t first = seen;

    for (size_t i = 0; i < n; i++) {
        const char *want = va_arg(ap, const char *);
        const struct kf_request *r;
        char got[512];

        ck_assert_msg(seen < kf_count(&th.srv), "request %zu (%s) not sent",
                      seen, want);
        r = kf_req(&th.srv, seen++);
        snprintf(got, sizeof(got), "%s %s", r->method, r->path);
        ck_assert_msg(!strcmp(got, want), "request %zu: got %s, want %s",
                      seen - 1, got, want);
    }
    return first;
}

/* Like expect, but more requests may follow the n given. */
static size_t expect_prefix(size_t n, ...)
{
    size_t first;
    va_list ap;

    va_start(ap, n);
    first = expect_va(n, ap);
    va_end(ap);
    return first;
}

/* The requests sent since the last call are exactly want[0..n), each
 * "METHOD path"; returns the index of the first one. */
static size_t expect(size_t n, ...)
{
    size_t first;
    va_list ap;

    va_start(ap, n);
    first = expect_va(n, ap);
    va_end(ap);
    if (kf_count(&th.srv) != seen)
        for (size_t i = 0; i < kf_count(&th.srv); i++)
            fprintf(stderr, "# %zu %s %s %s\n", i, kf_req(&th.srv, i)->method,
                    kf_req(&th.srv, i)->path, kf_req(&th.srv, i)->body);
    ck_assert_msg(kf_count(&th.srv) == seen, "%zu more requests than expected, "
                  "the next %s %s", kf_count(&th.srv) - seen,
                  kf_req(&th.srv, seen)->method, kf_req(&th.srv, seen)->path);
    return first;
}

static json_t *body(size_t i);

/* The requests from `from` on are the Job's status patches and exactly
 * `pg_deletes` deletes of its PodGroup, in any interleaving: the writer
 * merges two status patches only while the first is still queued, so a
 * slow run sends two where a fast one sends one. Returns the patches
 * applied in order (RFC 7386, owned by the caller); all requests seen. */
static json_t *status_patches(size_t from, int pg_deletes)
{
    json_t *merged = json_object();
    int patches = 0, deletes = 0;

    for (seen = from; seen < kf_count(&th.srv); seen++) {
        const struct kf_request *r = kf_req(&th.srv, seen);
        char got[512];

        snprintf(got, sizeof(got), "%s %s", r->method, r->path);
        if (!strcmp(got, "DELETE " PG_COLL "/j-j-uid")) {
            deletes++;
        } else {
            json_t *b;

            ck_assert_msg(!strcmp(got, "PATCH " JOBS "/j/status"),
                          "request %zu: got %s, want a status patch", seen,
                          got);
            b = body(seen);
            ck_assert_int_eq(json_object_update_recursive(merged, b), 0);
            json_decref(b);
            patches++;
        }
    }
    ck_assert_int_eq(deletes, pg_deletes);
    ck_assert_msg(patches >= 1, "no status patch sent");
    return merged;
}

/* The body of request i, parsed (owned by the caller). */
static json_t *body(size_t i)
{
    const struct kf_request *r = kf_req(&th.srv, i);
    json_t *b = json_loadb(r->body ? r->body : "", r->body_len, 0, NULL);

    ck_assert_msg(b != NULL, "request %zu has no JSON body", i);
    return b;
}

/* The member at a dotted path ("spec.minMember"), borrowed. */
static json_t *at(json_t *o, const char *path)
{
    char buf[256];

    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);

        snprintf(buf, sizeof(buf), "%.*s", (int)n, path);
        o = json_object_get(o, buf);
        path += dot ? n + 1 : n;
    }
    return o;
}

static const char *str(json_t *o, const char *path)
{
    const char *s = json_string_value(at(o, path));

    ck_assert_msg(s != NULL, "no string at %s", path);
    return s;
}

static json_int_t num(json_t *o, const char *path)
{
    json_t *v = at(o, path);

    ck_assert_msg(json_is_integer(v), "no integer at %s", path);
    return json_integer_value(v);
}

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);

    ck_assert_msg(j != NULL, "%s: %s", e.text, text);
    return j;
}

/* A Job "<name>" of uid "<name>-uid": one task "w" of `replicas`, with
 * `extra` spliced into its spec and `status` (may be "") after it. */
static void job(enum mu_watch_type type, const char *name, int gen,
                int replicas, const char *extra, const char *status)
{
    char text[4096];
    json_t *j;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS "\","
             "\"uid\":\"%s-uid\",\"generation\":%d},"
             "\"spec\":{\"minAvailable\":%d,%s\"tasks\":[{\"name\":\"w\","
             "\"replicas\":%d,\"template\":{\"spec\":{\"containers\":"
             "[{\"name\":\"c\",\"image\":\"busybox\"}]}}}]}%s%s}",
             name, name, gen, replicas, extra, replicas,
             *status ? ",\"status\":" : "", status);
    j = parse(text);
    mu_jobctl_job(jc, type, j);
    json_decref(j);
}

/* Pod <job>-w-<i> of version 0 as the watch shows it, bound to n1. */
static void pod(enum mu_watch_type type, const char *jobname, int i,
                const char *phase, int exit_code)
{
    char text[4096], status[512];
    json_t *p;

    if (exit_code >= 0)
        snprintf(status, sizeof(status),
                 ",\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":0,"
                 "\"state\":{\"terminated\":{\"exitCode\":%d}}}]", exit_code);
    else
        status[0] = '\0';
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s-w-%d\",\"namespace\":\"" NS "\","
             "\"uid\":\"pod-%d\",\"labels\":{\"volcano.sh/job-name\":\"%s\"},"
             "\"annotations\":{\"volcano.sh/task-spec\":\"w\","
             "\"volcano.sh/task-index\":\"%d\","
             "\"volcano.sh/job-version\":\"0\"},"
             "\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"ownerReferences\":[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\","
             "\"kind\":\"Job\",\"name\":\"%s\",\"uid\":\"%s-uid\","
             "\"controller\":true}]},"
             "\"spec\":{\"nodeName\":\"n1\"},"
             "\"status\":{\"phase\":\"%s\"%s}}",
             jobname, i, i, jobname, i, jobname, jobname, phase, status);
    p = parse(text);
    mu_jobctl_pod(jc, type, p);
    json_decref(p);
}

/* A new Job: its PodGroup, its pods (gated, version 0) and its status. */
static void start_job(const char *extra)
{
    size_t first;
    json_t *b;

    replies(4, 201, "{}");
    job(MU_WATCH_ADDED, "j", 1, 2, extra, "");
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(4, "POST " PG_COLL, "POST " POD_COLL, "POST " POD_COLL,
                   "PATCH " JOBS "/j/status");
    b = body(first);
    ck_assert_str_eq(str(b, "metadata.name"), "j-j-uid");
    ck_assert_int_eq(num(b, "spec.minMember"), 2);
    json_decref(b);
    for (int i = 0; i < 2; i++) {
        char name[32];

        b = body(first + 1 + (size_t)i);
        snprintf(name, sizeof(name), "j-w-%d", i);
        ck_assert_str_eq(str(b, "metadata.name"), name);
        ck_assert_str_eq(
            json_string_value(json_object_get(
                at(b, "metadata.annotations"), "volcano.sh/job-version")),
            "0");
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_array_get(at(b, "spec.schedulingGates"), 0),
                             "name")),
                         MU_GATE);
        json_decref(b);
    }
    ck_assert_str_eq(kf_req(&th.srv, first + 3)->content_type,
                     "application/merge-patch+json");
    b = body(first + 3);
    ck_assert_str_eq(str(b, "status.state.phase"), "Pending");
    ck_assert_int_eq(num(b, "status.version"), 0);
    ck_assert_int_eq(num(b, "status.minAvailable"), 2);
    json_decref(b);
}

/* start_job, then both pods Running: the Running status is sent; returns
 * its request's index. */
static size_t start_running(const char *extra)
{
    start_job(extra);
    replies(1, 200, "{}");
    pod(MU_WATCH_ADDED, "j", 0, "Running", -1);
    pod(MU_WATCH_ADDED, "j", 1, "Running", -1);
    mu_jobctl_sync(jc, false);
    settle();
    return expect(1, "PATCH " JOBS "/j/status");
}

START_TEST(test_jobctl_new_job_makes_podgroup_gated_pods_and_status)
{
    start_job("");
    /* nothing changed: nothing is sent again */
    mu_jobctl_sync(jc, false);
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
}
END_TEST

START_TEST(test_jobctl_failed_pod_restarts_the_job)
{
    size_t first;
    json_t *b;

    first = start_running("\"maxRetry\":3,\"policies\":[{\"event\":"
                          "\"PodFailed\",\"action\":\"RestartJob\"}],");
    b = body(first);
    ck_assert_str_eq(str(b, "status.state.phase"), "Running");
    ck_assert_int_eq(num(b, "status.running"), 2);
    json_decref(b);

    replies(5, 200, "{}");
    pod(MU_WATCH_MODIFIED, "j", 1, "Failed", 1);
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(5, "POST " EVENTS, "DELETE " POD_COLL "/j-w-0",
                   "DELETE " POD_COLL "/j-w-1", "DELETE " PG_COLL "/j-j-uid",
                   "PATCH " JOBS "/j/status");
    b = body(first);
    ck_assert_str_eq(str(b, "reason"), "ExecuteAction");
    ck_assert_str_eq(str(b, "message"), "Start to execute action RestartJob");
    ck_assert_str_eq(str(b, "involvedObject.name"), "j");
    json_decref(b);
    /* each delete names the pod it means: one made again is spared */
    for (int k = 0; k < 2; k++) {
        char want[16];

        snprintf(want, sizeof(want), "pod-%d", k);
        b = body(first + 1 + (size_t)k);
        ck_assert_str_eq(str(b, "kind"), "DeleteOptions");
        ck_assert_str_eq(str(b, "preconditions.uid"), want);
        json_decref(b);
    }
    b = body(first + 4);
    ck_assert_str_eq(str(b, "status.state.phase"), "Restarting");
    ck_assert_int_eq(num(b, "status.version"), 1);
    ck_assert_int_eq(num(b, "status.retryCount"), 1);
    json_decref(b);

    /* the old pods gone, version 1 is made: PodGroup, pods, status */
    replies(4, 201, "{}");
    pod(MU_WATCH_DELETED, "j", 0, "Running", -1);
    pod(MU_WATCH_DELETED, "j", 1, "Failed", 1);
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(4, "POST " PG_COLL, "POST " POD_COLL, "POST " POD_COLL,
                   "PATCH " JOBS "/j/status");
    b = body(first + 1);
    ck_assert_str_eq(json_string_value(json_object_get(
                         at(b, "metadata.annotations"),
                         "volcano.sh/job-version")),
                     "1");
    json_decref(b);
    b = body(first + 3);
    ck_assert_str_eq(str(b, "status.state.phase"), "Pending");
    json_decref(b);
}
END_TEST

/* A pod that muster deletes to undo a gang bind (the barrier's undo) is
 * made again: no PodEvicted, no RestartJob, no retry counted. A pod of the
 * same name with another uid is not covered by the undo. */
START_TEST(test_jobctl_undone_pod_is_made_again_not_evicted)
{
    size_t first;
    json_t *b;

    start_running("\"maxRetry\":1,\"policies\":[{\"event\":\"PodEvicted\","
                  "\"action\":\"RestartJob\"}],");

    mu_jobctl_pod_undone(jc, NS, "j-w-0", "pod-0", true);
    replies(2, 201, "{}");
    pod(MU_WATCH_DELETED, "j", 0, "Running", -1);
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(2, "POST " POD_COLL, "PATCH " JOBS "/j/status");
    b = body(first);
    ck_assert_str_eq(str(b, "metadata.name"), "j-w-0");
    ck_assert_str_eq(json_string_value(json_object_get(
                         at(b, "metadata.annotations"),
                         "volcano.sh/job-version")),
                     "0");
    json_decref(b);
    /* one pod running, the job as it was: no retry, no new version */
    b = body(first + 1);
    ck_assert_int_eq(num(b, "status.running"), 1);
    ck_assert_ptr_null(at(b, "status.retryCount"));
    ck_assert_ptr_null(at(b, "status.version"));
    ck_assert_ptr_null(at(b, "status.state"));
    json_decref(b);

    /* an undo of another uid under the name: the loss is an eviction, and
     * with maxRetry 1 the job fails of it */
    mu_jobctl_pod_undone(jc, NS, "j-w-1", "pod-7", true);
    replies(5, 200, "{}");
    pod(MU_WATCH_DELETED, "j", 1, "Running", -1);
    mu_jobctl_sync(jc, false);
    settle();
    first = expect_prefix(2, "POST " EVENTS, "DELETE " PG_COLL "/j-j-uid");
    b = status_patches(first + 2, 1);
    ck_assert_str_eq(str(b, "status.state.phase"), "Failed");
    ck_assert_str_eq(str(b, "status.state.reason"), "MaxRetryReached");
    ck_assert_int_eq(num(b, "status.retryCount"), 1);
    json_decref(b);
}
END_TEST

/* An undo whose DELETE deleted nothing is taken back: the pod's later
 * loss is an eviction again (RestartJob). */
START_TEST(test_jobctl_undo_taken_back_leaves_an_eviction)
{
    size_t first;
    json_t *b;

    start_running("\"maxRetry\":3,\"policies\":[{\"event\":\"PodEvicted\","
                  "\"action\":\"RestartJob\"}],");
    mu_jobctl_pod_undone(jc, NS, "j-w-0", "pod-0", true);
    mu_jobctl_pod_undone(jc, NS, "j-w-0", "pod-0", false);
    replies(4, 200, "{}");
    pod(MU_WATCH_DELETED, "j", 0, "Running", -1);
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(4, "POST " EVENTS, "DELETE " POD_COLL "/j-w-1",
                   "DELETE " PG_COLL "/j-j-uid", "PATCH " JOBS "/j/status");
    b = body(first);
    ck_assert_str_eq(str(b, "message"), "Start to execute action RestartJob");
    json_decref(b);
    b = body(first + 3);
    ck_assert_int_eq(num(b, "status.retryCount"), 1);
    json_decref(b);
}
END_TEST

#define DONE_STATUS                                                         \
    "{\"state\":{\"phase\":\"Completed\",\"lastTransitionTime\":"           \
    "\"2020-01-01T00:00:00Z\"},\"conditions\":[{\"status\":\"Completed\","  \
    "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"}]}"

START_TEST(test_jobctl_ttl_deletes_the_job_once)
{
    size_t first;
    json_t *b;

    kf_reply_file(&th.srv, 500, "status_500.json");
    job(MU_WATCH_ADDED, "j", 1, 2, "\"ttlSecondsAfterFinished\":30,",
        DONE_STATUS);
    mu_jobctl_sync(jc, false);
    mu_jobctl_sync(jc, true); /* still in the writer: not sent twice */
    settle();
    first = expect(1, "DELETE " JOBS "/j");
    b = body(first);
    ck_assert_str_eq(str(b, "kind"), "DeleteOptions");
    ck_assert_str_eq(str(b, "propagationPolicy"), "Background");
    ck_assert_str_eq(str(b, "preconditions.uid"), "j-uid");
    json_decref(b);
    ck_assert_ptr_nonnull(strstr(th.logged, "vcjob default/j: delete after ttl"));

    /* failed: sent again at the next sync, and then never again */
    replies(1, 200, "{}");
    mu_jobctl_sync(jc, true);
    settle();
    first = expect(1, "DELETE " JOBS "/j");
    ck_assert_ptr_nonnull(strstr(th.logged, "deleted 30s after it finished"));
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
}
END_TEST

/* 409 Conflict: the uid precondition met another Job under the name,
 * which is not this one's to delete: done, never sent again. */
START_TEST(test_jobctl_ttl_delete_of_another_job_is_not_retried)
{
    kf_reply_file(&th.srv, 409, "status_409_conflict.json");
    job(MU_WATCH_ADDED, "j", 1, 2, "\"ttlSecondsAfterFinished\":0,",
        DONE_STATUS);
    mu_jobctl_sync(jc, false);
    settle();
    expect(1, "DELETE " JOBS "/j");
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
    ck_assert_ptr_null(strstr(th.logged, "delete after ttl"));
}
END_TEST

/* The PodGroup in the cache is Unschedulable: the Pending Job says why. */
START_TEST(test_jobctl_pending_status_carries_the_podgroup_message)
{
    json_t *pgj = parse("{\"metadata\":{\"name\":\"j-j-uid\","
                        "\"namespace\":\"" NS "\"},\"spec\":"
                        "{\"minMember\":2,\"queue\":\"default\"}}");
    struct mu_podgroup pg;
    struct mu_err err;
    struct mu_job *cj;
    size_t first;
    json_t *b;

    ck_assert_int_eq(mu_podgroup_decode(pgj, &th.cluster.rn, &pg, &err), 0);
    json_decref(pgj);
    cj = mu_cluster_update_job(&th.cluster, &pg);
    mu_podgroup_release(&pg);
    ck_assert_ptr_nonnull(cj);
    cj->cond.type = mu_xstrdup("Unschedulable"); /* the cluster frees them */
    cj->cond.message = mu_xstrdup("2/2 tasks in gang unschedulable");
    replies(4, 201, "{}");
    job(MU_WATCH_ADDED, "j", 1, 2, "", "");
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(4, "POST " PG_COLL, "POST " POD_COLL, "POST " POD_COLL,
                   "PATCH " JOBS "/j/status");
    b = body(first + 3);
    ck_assert_str_eq(str(b, "status.state.phase"), "Pending");
    ck_assert_str_eq(str(b, "status.state.message"),
                     "2/2 tasks in gang unschedulable");
    json_decref(b);
}
END_TEST

#define SVC "\"plugins\":{\"svc\":[]},"
#define SERVICES "/api/v1/namespaces/" NS "/services"
#define CONFIGMAPS "/api/v1/namespaces/" NS "/configmaps"
#define NETPOLS "/apis/networking.k8s.io/v1/namespaces/" NS "/networkpolicies"

START_TEST(test_jobctl_svc_objects_first_and_409_counts_as_made)
{
    size_t first;
    json_t *b;

    kf_reply_body(&th.srv, 201, "{}");
    kf_reply_file(&th.srv, 409, "status_409_exists.json");
    replies(2, 201, "{}");
    job(MU_WATCH_ADDED, "j", 1, 2, SVC, "");
    mu_jobctl_sync(jc, false);
    mu_jobctl_sync(jc, true); /* in the writer: none sent twice */
    settle();
    first = expect(4, "POST " SERVICES, "POST " CONFIGMAPS, "POST " NETPOLS,
                   "PATCH " JOBS "/j/status");
    b = body(first);
    ck_assert_str_eq(str(b, "metadata.name"), "j");
    json_decref(b);
    b = body(first + 1);
    ck_assert_str_eq(str(b, "metadata.name"), "j-svc");
    json_decref(b);

    /* all made (the ConfigMap was there): the PodGroup and pods follow,
     * and no object is POSTed again */
    replies(3, 201, "{}");
    mu_jobctl_sync(jc, false);
    settle();
    expect(3, "POST " PG_COLL, "POST " POD_COLL, "POST " POD_COLL);
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
    ck_assert_ptr_null(strstr(th.logged, "create configmap"));
}
END_TEST

START_TEST(test_jobctl_failed_create_is_retried_at_the_next_sync)
{
    size_t first;
    json_t *b;

    kf_reply_body(&th.srv, 201, "{}");
    kf_reply_file(&th.srv, 500, "status_500.json");
    replies(3, 201, "{}"); /* the network policy, the status, the event */
    job(MU_WATCH_ADDED, "j", 1, 2, SVC, "");
    mu_jobctl_sync(jc, false);
    settle(); /* the ConfigMap's failure: an event */
    settle();
    first = expect(5, "POST " SERVICES, "POST " CONFIGMAPS, "POST " NETPOLS,
                   "PATCH " JOBS "/j/status", "POST " EVENTS);
    b = body(first + 4);
    ck_assert_str_eq(str(b, "reason"), "FailedCreate");
    ck_assert_ptr_nonnull(strstr(str(b, "message"), "create configmap: "));
    json_decref(b);
    ck_assert_ptr_nonnull(strstr(th.logged, "vcjob default/j: create configmap"));

    /* the next sync sends that one only; then the PodGroup and pods */
    replies(4, 201, "{}");
    mu_jobctl_sync(jc, true);
    settle();
    expect(1, "POST " CONFIGMAPS);
    mu_jobctl_sync(jc, false);
    settle();
    expect(3, "POST " PG_COLL, "POST " POD_COLL, "POST " POD_COLL);
}
END_TEST

START_TEST(test_jobctl_scaled_job_patches_its_podgroup_spec)
{
    size_t first;
    json_t *b;

    start_job("");
    replies(3, 200, "{}");
    job(MU_WATCH_MODIFIED, "j", 2, 3, "", "");
    mu_jobctl_sync(jc, false);
    mu_jobctl_sync(jc, true); /* in the writer: not sent twice */
    settle();
    first = expect(3, "PATCH " PG_COLL "/j-j-uid", "POST " POD_COLL,
                   "PATCH " JOBS "/j/status");
    ck_assert_str_eq(kf_req(&th.srv, first)->content_type,
                     "application/merge-patch+json");
    b = body(first);
    ck_assert_int_eq(num(b, "spec.minMember"), 3);
    ck_assert_int_eq(json_object_size(b), 1); /* the spec only */
    json_decref(b);
    b = body(first + 1);
    ck_assert_str_eq(str(b, "metadata.name"), "j-w-2");
    json_decref(b);
    b = body(first + 2);
    ck_assert_int_eq(num(b, "status.minAvailable"), 3);
    json_decref(b);
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
}
END_TEST

/* A change while the spec patch is in the writer goes after it, once. */
START_TEST(test_jobctl_podgroup_patches_one_at_a_time)
{
    size_t first;
    json_t *b;

    start_job("");
    replies(4, 200, "{}");
    job(MU_WATCH_MODIFIED, "j", 2, 3, "", "");
    mu_jobctl_sync(jc, false);
    job(MU_WATCH_MODIFIED, "j", 3, 3, "\"queue\":\"q2\",", "");
    mu_jobctl_sync(jc, false); /* the first patch is still in the writer */
    settle();
    expect(3, "PATCH " PG_COLL "/j-j-uid", "POST " POD_COLL,
           "PATCH " JOBS "/j/status");
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(1, "PATCH " PG_COLL "/j-j-uid");
    b = body(first);
    ck_assert_str_eq(str(b, "spec.queue"), "q2");
    json_decref(b);
}
END_TEST

START_TEST(test_jobctl_failed_podgroup_patch_is_retried)
{
    start_job("");
    kf_reply_file(&th.srv, 500, "status_500.json");
    replies(2, 200, "{}");
    job(MU_WATCH_MODIFIED, "j", 2, 3, "", "");
    mu_jobctl_sync(jc, false);
    settle();
    expect(3, "PATCH " PG_COLL "/j-j-uid", "POST " POD_COLL,
           "PATCH " JOBS "/j/status");
    ck_assert_ptr_nonnull(strstr(th.logged, "vcjob default/j: update podgroup"));
    replies(1, 200, "{}");
    mu_jobctl_sync(jc, true);
    settle();
    expect(1, "PATCH " PG_COLL "/j-j-uid");
    mu_jobctl_sync(jc, true);
    settle();
    expect(0);
}
END_TEST

START_TEST(test_jobctl_command_aborts_the_job)
{
    size_t first;
    json_t *b;

    start_job("");
    replies(6, 200, "{}");
    pod(MU_WATCH_ADDED, "j", 0, "Running", -1);
    pod(MU_WATCH_ADDED, "j", 1, "Running", -1);
    mu_jobctl_command(jc, NS, "j", "AbortJob");
    mu_jobctl_command(jc, NS, "j", "NoSuchAction"); /* logged, dropped */
    mu_jobctl_sync(jc, false);
    settle();
    first = expect(5, "POST " EVENTS, "DELETE " POD_COLL "/j-w-0",
                   "DELETE " POD_COLL "/j-w-1", "DELETE " PG_COLL "/j-j-uid",
                   "PATCH " JOBS "/j/status");
    b = body(first + 4);
    ck_assert_str_eq(str(b, "status.state.phase"), "Aborting");
    json_decref(b);
    ck_assert_ptr_nonnull(strstr(th.logged, "NoSuchAction for vcjob default/j: "
                                       "unknown action"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jobctl");
    TCase *tc = tcase_create("requests");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_jobctl_new_job_makes_podgroup_gated_pods_and_status);
    tcase_add_test(tc, test_jobctl_failed_pod_restarts_the_job);
    tcase_add_test(tc, test_jobctl_undone_pod_is_made_again_not_evicted);
    tcase_add_test(tc, test_jobctl_undo_taken_back_leaves_an_eviction);
    tcase_add_test(tc, test_jobctl_ttl_deletes_the_job_once);
    tcase_add_test(tc, test_jobctl_ttl_delete_of_another_job_is_not_retried);
    tcase_add_test(tc, test_jobctl_pending_status_carries_the_podgroup_message);
    tcase_add_test(tc, test_jobctl_svc_objects_first_and_409_counts_as_made);
    tcase_add_test(tc, test_jobctl_failed_create_is_retried_at_the_next_sync);
    tcase_add_test(tc, test_jobctl_scaled_job_patches_its_podgroup_spec);
    tcase_add_test(tc, test_jobctl_podgroup_patches_one_at_a_time);
    tcase_add_test(tc, test_jobctl_failed_podgroup_patch_is_retried);
    tcase_add_test(tc, test_jobctl_command_aborts_the_job);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
