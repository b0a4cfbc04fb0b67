#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/podpb.h"
#include "kube/watch.h"
#include "test_kube_fake.h"

/* ---- line splitter ------------------------------------------------------ */

struct lines {
    char v[64][64];
    size_t n;
    int stop_at; /* return 7 from the callback on this line (1-based) */
};

static int collect(void *ctx, const char *line, size_t len)
{
    struct lines *l = ctx;

    ck_assert_uint_lt(l->n, 64);
    ck_assert_uint_lt(len, 64);
    memcpy(l->v[l->n], line, len);
    l->v[l->n][len] = '\0';
    l->n++;
    return (int)l->n == l->stop_at ? 7 : 0;
}

static const char split_input[] = "a\n\nbc\r\n{\"x\":1}\n\r\nlast";
static const char *const split_want[] = {"a", "", "bc", "{\"x\":1}", ""};

/* Feeds split_input in three pieces cut at every pair of byte boundaries:
 * the same lines come out, and the unterminated tail is kept. */
START_TEST(test_linebuf_every_byte_boundary)
{
    size_t n = strlen(split_input), i, j, k;

    for (i = 0; i <= n; i++) {
        for (j = i; j <= n; j++) {
            struct mu_linebuf lb;
            struct lines l = {.n = 0};

            mu_linebuf_init(&lb, 64);
            ck_assert_int_eq(mu_linebuf_feed(&lb, split_input, i, collect, &l),
                             0);
            ck_assert_int_eq(
                mu_linebuf_feed(&lb, split_input + i, j - i, collect, &l), 0);
            ck_assert_int_eq(
                mu_linebuf_feed(&lb, split_input + j, n - j, collect, &l), 0);
            ck_assert_uint_eq(l.n, MU_ARRAY_LEN(split_want));
            for (k = 0; k < l.n; k++)
                ck_assert_str_eq(l.v[k], split_want[k]);
            ck_assert_uint_eq(lb.len, 4);
            ck_assert_mem_eq(lb.buf, "last", 4);
            mu_linebuf_release(&lb);
        }
    }
}
END_TEST

START_TEST(test_linebuf_byte_by_byte)
{
    size_t n = strlen(split_input), i, k;
    struct mu_linebuf lb;
    struct lines l = {.n = 0};

    mu_linebuf_init(&lb, 64);
    for (i = 0; i < n; i++)
        ck_assert_int_eq(mu_linebuf_feed(&lb, split_input + i, 1, collect, &l),
                         0);
    ck_assert_uint_eq(l.n, MU_ARRAY_LEN(split_want));
    for (k = 0; k < l.n; k++)
        ck_assert_str_eq(l.v[k], split_want[k]);
    mu_linebuf_reset(&lb);
    ck_assert_uint_eq(lb.len, 0);
    ck_assert_int_eq(mu_linebuf_feed(&lb, "z\n", 2, collect, &l), 0);
    ck_assert_str_eq(l.v[l.n - 1], "z");
    mu_linebuf_release(&lb);
}
END_TEST

/* With max 5: a 5-byte line passes, a 6-byte one fails wherever the input
 * is cut, and the splitter is usable afterwards. */
START_TEST(test_linebuf_oversize_line_at_every_boundary)
{
    static const char in[] = "12345\n1234\r\n123456\nok\n";
    size_t n = strlen(in), i;

    for (i = 0; i <= n; i++) {
        struct mu_linebuf lb;
        struct lines l = {.n = 0};
        int a, b;

        mu_linebuf_init(&lb, 5);
        a = mu_linebuf_feed(&lb, in, i, collect, &l);
        b = a ? 0 : mu_linebuf_feed(&lb, in + i, n - i, collect, &l);
        ck_assert_int_eq(a ? a : b, -ENOBUFS);
        ck_assert_uint_eq(lb.len, 0);
        ck_assert_uint_le(lb.cap, 8); /* never grew past the cap */
        ck_assert_uint_eq(l.n, 2);
        ck_assert_str_eq(l.v[0], "12345");
        ck_assert_str_eq(l.v[1], "1234");
        l.n = 0;
        ck_assert_int_eq(mu_linebuf_feed(&lb, "ok\n", 3, collect, &l), 0);
        ck_assert_uint_eq(l.n, 1);
        ck_assert_str_eq(l.v[0], "ok");
        mu_linebuf_release(&lb);
    }
}
END_TEST

START_TEST(test_linebuf_unterminated_oversize_fails_early)
{
    struct mu_linebuf lb;
    struct lines l = {.n = 0};

    mu_linebuf_init(&lb, 5);
    ck_assert_int_eq(mu_linebuf_feed(&lb, "123", 3, collect, &l), 0);
    ck_assert_int_eq(mu_linebuf_feed(&lb, "456", 3, collect, &l), -ENOBUFS);
    ck_assert_uint_eq(lb.len, 0);
    ck_assert_uint_eq(l.n, 0);
    mu_linebuf_release(&lb);
}
END_TEST

START_TEST(test_linebuf_callback_stop_drops_rest)
{
    struct mu_linebuf lb;
    struct lines l = {.n = 0, .stop_at = 2};

    mu_linebuf_init(&lb, 64);
    ck_assert_int_eq(mu_linebuf_feed(&lb, "a\nb\nc\nd", 7, collect, &l), 7);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_uint_eq(lb.len, 0);
    mu_linebuf_release(&lb);
}
END_TEST

/* ---- event parser ------------------------------------------------------- */

static const struct {
    const char *line;
    int rc;
    enum mu_watch_type type;
    const char *rv;
    long code;
} events[] = {
    {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":"
     "\"7\"}}}",
     0, MU_WATCH_ADDED, "7", 0},
    {"{\"object\":{\"metadata\":{\"resourceVersion\":\"8\"}},\"type\":"
     "\"MODIFIED\"}",
     0, MU_WATCH_MODIFIED, "8", 0},
    {"{\"type\":\"DELETED\",\"object\":{}}", 0, MU_WATCH_DELETED, NULL, 0},
    {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
     "\"9\"}}}",
     0, MU_WATCH_BOOKMARK, "9", 0},
    {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}", 0,
     MU_WATCH_ERROR, NULL, 410},
    {"{\"type\":\"BOOKMARK\",\"object\":{}}", -EPROTO, 0, NULL, 0},
    {"{\"type\":\"SYNC\",\"object\":{}}", -EPROTO, 0, NULL, 0},
    {"{\"type\":\"ADDED\"}", -EPROTO, 0, NULL, 0},
    {"{\"type\":\"ADDED\",\"object\":[]}", -EPROTO, 0, NULL, 0},
    {"{\"type\":7,\"object\":{}}", -EPROTO, 0, NULL, 0},
    {"[1,2]", -EPROTO, 0, NULL, 0},
    {"{\"type\":\"ADDED\",\"object\":{}", -EPROTO, 0, NULL, 0},
    {"{\"type\":\"ADDED\",\"object\":{}} trailing", -EPROTO, 0, NULL, 0},
    {"\xff\xfe", -EPROTO, 0, NULL, 0},
};

START_TEST(test_watch_event_parse_table)
{
    struct mu_watch_event ev;
    struct mu_err err = {{0}};
    int rc = mu_watch_event_parse(events[_i].line, strlen(events[_i].line), &ev,
                                  &err);

    ck_assert_msg(rc == events[_i].rc, "%s: %d %s", events[_i].line, rc,
                  err.msg);
    if (rc) {
        ck_assert_ptr_null(ev.object);
        ck_assert(mu_starts_with(err.msg, "watch event: "));
        return;
    }
    ck_assert_int_eq(ev.type, events[_i].type);
    ck_assert_int_eq(ev.code, events[_i].code);
    if (events[_i].rv)
        ck_assert_str_eq(ev.rv, events[_i].rv);
    else
        ck_assert_ptr_null(ev.rv);
    ck_assert_int_eq(ev.object->refcount, 1); /* detached from the line */
    mu_watch_event_release(&ev);
}
END_TEST

/* ---- the loop against the fake server ----------------------------------- */

static struct kf_server srv;
static atomic_bool stop;
static bool real_clock; /* watch_new: real time instead of the fake */

static void setup(void)
{
    ck_assert_int_eq(kf_start(&srv), 0);
    atomic_store(&stop, false);
    real_clock = false;
    srv.exhausted = &stop; /* the watch ends when the script does */
}

static void teardown(void)
{
    kf_stop(&srv);
}

struct fclock {
    int64_t now;
};

static int64_t fc_step; /* each reading of the fake clock advances it */

static int64_t f_now(void *c)
{
    return ((struct fclock *)c)->now += fc_step;
}

static void f_sleep(void *c, int64_t ns)
{
    ((struct fclock *)c)->now += ns;
}

/* What the callback saw, one line per event: "TYPE kind/name@rv". */
struct seen {
    struct mu_sb sb;
    unsigned n;
    unsigned stop_after; /* raise the stop flag after this many */
};

static void record(void *ctx, enum mu_watch_type t, json_t *obj)
{
    struct seen *s = ctx;
    const json_t *meta = json_object_get(obj, "metadata");

    mu_sb_addf(&s->sb, "%s", mu_watch_type_name(t));
    if (obj) {
        ck_assert_int_eq(obj->refcount, 1); /* ours alone */
        mu_sb_addf(&s->sb, " %s/%s@%s",
                   json_string_value(json_object_get(obj, "kind")),
                   json_string_value(json_object_get(meta, "name")),
                   json_string_value(json_object_get(meta, "resourceVersion")));
    }
    mu_sb_add(&s->sb, "\n");
    json_decref(obj);
    if (++s->n == s->stop_after)
        atomic_store(&stop, true);
}

static struct fclock fc;
static char logged[8192];

static void log_to_buf(void *ctx, const char *msg)
{
    size_t n = strlen(logged);

    snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static struct mu_watch *watch_new(struct mu_watch_opts o)
{
    struct mu_kube_config cfg;
    struct mu_watch *w = NULL;
    struct mu_err err = {{0}};

    mu_kube_config_init(&cfg);
    cfg.server = mu_xstrdup(srv.url);
    cfg.token = mu_xstrdup("watch-token");
    if (!o.path)
        o.path = "/api/v1/pods";
    o.stop = &stop;
    fc.now = 0;
    fc_step = 0;
    logged[0] = '\0';
    if (!real_clock) {
        o.kube.clock.now_ns = f_now;
        o.kube.clock.sleep_ns = f_sleep;
        o.kube.clock.ctx = &fc;
    }
    o.kube.log = log_to_buf;
    ck_assert_msg(mu_watch_new(&cfg, &o, &w, &err) == 0, "%s", err.msg);
    mu_kube_config_release(&cfg);
    return w;
}

/* Runs the watch to the end of the script; returns what it delivered
 * (owned). */
static char *run(struct mu_watch *w, struct mu_watch_stats *st)
{
    struct seen s = {.n = 0};

    mu_sb_init(&s.sb);
    mu_sb_add(&s.sb, "");
    ck_assert_int_eq(mu_watch_run(w, record, &s), 0);
    mu_watch_get_stats(w, st);
    return mu_sb_detach(&s.sb);
}

/* The query of recorded request i with its timeoutSeconds value checked to
 * be in range and replaced by "T". */
static char *query(size_t i)
{
    const struct kf_request *r = kf_req(&srv, i);
    const char *t;
    char *q;
    long v;

    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->method, "GET");
    ck_assert_str_eq(r->path, "/api/v1/pods");
    ck_assert_str_eq(r->authorization, "Bearer watch-token");
    t = strstr(r->query, "timeoutSeconds=");
    if (!t)
        return mu_xstrdup(r->query);
    v = strtol(t + 15, NULL, 10);
    ck_assert_int_ge(v, MU_WATCH_TIMEOUT_MIN_S);
    ck_assert_int_le(v, MU_WATCH_TIMEOUT_MAX_S);
    q = mu_xasprintf("%.*sT%s", (int)(t + 15 - r->query), r->query,
                     t + 15 + strspn(t + 15, "0123456789"));
    return q;
}

static void assert_query(size_t i, const char *want)
{
    char *q = query(i);

    ck_assert_str_eq(q, want);
    free(q);
}

#define WATCH_Q(rv)                                                            \
    "watch=1&allowWatchBookmarks=true&resourceVersion=" rv "&timeoutSeconds=T"

START_TEST(test_watch_list_pages_then_watch)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.page_size = 2});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_page1.json");
    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 200, "watch_deleted.ndjson");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\n"
                          "LIST_ITEM Pod/train-0@90\n"
                          "LIST_ITEM Pod/train-1@91\n"
                          "LIST_ITEM Pod/train-2@95\n"
                          "LIST_END\n"
                          "DELETED Pod/train-3@201\n");
    ck_assert_uint_eq(kf_count(&srv), 4);
    assert_query(0, "limit=2");
    assert_query(1, "limit=2&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTA"
                    "wLCJzdGFydCI6InRlYW0tYS90cmFpbi0xXHUwMDAwIn0%3d");
    assert_query(2, WATCH_Q("100"));
    assert_query(3, WATCH_Q("201")); /* re-watch after a normal end */
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.pages, 2);
    ck_assert_uint_eq(st.events, 1);
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_int_eq(st.slept_ns, 0);
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_bookmarks_advance_rv)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply_file(&srv, 200, "watch_bookmarks.ndjson");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n"
                          "ADDED Pod/train-3@101\n"
                          "MODIFIED Pod/train-3@160\n");
    assert_query(0, "limit=500");
    assert_query(1, WATCH_Q("100"));
    assert_query(2, WATCH_Q("200")); /* the last BOOKMARK's */
    ck_assert_uint_eq(st.bookmarks, 2);
    ck_assert_uint_eq(st.events, 2);
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_410_in_stream_relists)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 200, "watch_gone.ndjson");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n"
                          "ADDED Pod/train-3@101\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    assert_query(1, WATCH_Q("100"));
    assert_query(2, "limit=500"); /* a fresh list, no resourceVersion */
    assert_query(3, WATCH_Q("500"));
    ck_assert_uint_eq(st.relists, 1);
    ck_assert_int_eq(st.slept_ns, 0); /* at once */
    ck_assert_ptr_nonnull(strstr(logged, "ERROR event 410: too old"));
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_http_410_relists)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 410, "status_410.json");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    assert_query(1, WATCH_Q("100"));
    assert_query(2, "limit=500");
    assert_query(3, WATCH_Q("500"));
    ck_assert_uint_eq(st.relists, 1);
    ck_assert_int_eq(st.slept_ns, 0);
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_dropped_mid_line_resumes_without_loss_or_duplicates)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply(&srv, (struct kf_reply){200, NULL, NULL, "watch_drop_a.ndjson", 0,
                                     true, false});
    kf_reply_file(&srv, 200, "watch_drop_b.ndjson");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n"
                          "ADDED Pod/a@101\n"
                          "MODIFIED Pod/a@102\n"
                          "MODIFIED Pod/a@103\n"
                          "DELETED Pod/a@104\n");
    assert_query(1, WATCH_Q("100"));
    assert_query(2, WATCH_Q("102")); /* the half line was dropped */
    assert_query(3, WATCH_Q("104"));
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.errors, 1);
    /* first backoff: [MIN/2, MIN] */
    ck_assert_int_ge(st.slept_ns, MU_WATCH_BACKOFF_MIN_NS / 2);
    ck_assert_int_le(st.slept_ns, MU_WATCH_BACKOFF_MIN_NS);
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_malformed_line_relists)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply_file(&srv, 200, "watch_malformed.ndjson");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n"
                          "ADDED Pod/a@101\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    assert_query(2, "limit=500");
    assert_query(3, WATCH_Q("500"));
    ck_assert_uint_eq(st.relists, 1);
    ck_assert_uint_eq(st.errors, 1);
    ck_assert_ptr_nonnull(strstr(logged, "watch /api/v1/pods: watch event: "));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* One pod with a NUL in an annotation value, one with a NUL in a key and
 * one item that is no object, among good ones: the good ones and the NUL
 * ones are delivered, the non-object is logged by index and skipped, and
 * the list completes (a NUL used to fail the whole page). */
START_TEST(test_watch_list_page_with_nul_and_junk_delivers_the_rest)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_nul.json");
    kf_reply_file(&srv, 200, "watch_deleted.ndjson");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\n"
                          "LIST_ITEM Pod/train-0@90\n"
                          "LIST_ITEM Pod/nul-value@91\n"
                          "LIST_ITEM Pod/nul-key@92\n"
                          "LIST_ITEM Pod/train-1@93\n"
                          "LIST_END\n"
                          "DELETED Pod/train-3@201\n");
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.skipped, 1);
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_uint_eq(st.errors, 0);
    ck_assert_ptr_nonnull(strstr(logged, "watch /api/v1/pods: list: items[2]: "
                                         "expected an object, got a string; "
                                         "skipped"));
    assert_query(1, WATCH_Q("100"));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* Watch events whose objects carry a NUL in a value and in a key are
 * delivered; the stream carries on to the next event, no relist. */
START_TEST(test_watch_stream_with_nul_carries_on)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply_file(&srv, 200, "watch_nul.ndjson");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n"
                          "ADDED Pod/nul-value@101\n"
                          "MODIFIED Pod/nul-key@102\n"
                          "ADDED Pod/after@103\n");
    ck_assert_uint_eq(st.events, 3);
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_uint_eq(st.errors, 0);
    assert_query(2, WATCH_Q("103"));
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_oversize_event_relists)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.max_line = 200});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply_file(&srv, 200, "watch_big.ndjson");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n"
                          "ADDED Pod/a@101\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    ck_assert_uint_eq(st.relists, 1);
    ck_assert_ptr_nonnull(strstr(logged, "event longer than 200 bytes"));
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_backoff_is_exponential_and_capped)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.seed = 42});
    struct mu_watch_stats st;
    int64_t lo = 0, hi = 0, d = MU_WATCH_BACKOFF_MIN_NS;
    char *got;
    int i;

    kf_reply_file(&srv, 200, "pods_empty.json");
    for (i = 0; i < 8; i++) {
        kf_reply_file(&srv, 500, "status_500.json");
        lo += d / 2;
        hi += d;
        d = MU_MIN(2 * d, MU_WATCH_BACKOFF_MAX_NS);
    }
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n");
    for (i = 1; i <= 9; i++)
        assert_query((size_t)i, WATCH_Q("100")); /* never relisted */
    ck_assert_uint_eq(st.errors, 8);
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_int_ge(st.slept_ns, lo);
    ck_assert_int_le(st.slept_ns, hi);
    /* without the cap the 8th wait alone could reach 128 s */
    ck_assert_int_le(hi, 121LL * 1000000000LL);
    ck_assert_int_eq(fc.now, st.slept_ns); /* slept through the clock */
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_failed_list_backs_off_and_retries)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct mu_watch_stats st;
    char *got;

    kf_reply_body(&srv, 403,
                  "{\"kind\":\"Status\",\"code\":403,\"reason\":"
                  "\"Forbidden\",\"message\":\"pods is forbidden\"}");
    kf_reply_body(&srv, 200, "{\"kind\":\"Status\"}"); /* not a List */
    kf_reply_file(&srv, 200, "pods_page2.json");
    got = run(w, &st);
    /* LIST_BEGIN only once a page is in hand */
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n");
    ck_assert_uint_eq(st.errors, 2);
    ck_assert_ptr_nonnull(strstr(logged, "403 Forbidden: pods is forbidden"));
    ck_assert_ptr_nonnull(strstr(logged, "not a List"));
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_selectors_and_seeded_timeout)
{
    struct mu_watch_opts o = {
        .label_selector = "app=web&x",
        .field_selector = "spec.schedulerName=volcano",
        .seed = 7,
    };
    struct mu_watch *w = watch_new(o);
    struct mu_watch_stats st;
    long first;
    char *got, want[256];

    kf_reply_file(&srv, 200, "pods_empty.json");
    got = run(w, &st);
    free(got);
    assert_query(0, "limit=500&labelSelector=app%3dweb%26x&"
                    "fieldSelector=spec.schedulerName%3dvolcano");
    snprintf(want, sizeof(want),
             "watch=1&allowWatchBookmarks=true&resourceVersion=100&"
             "timeoutSeconds=%ld&labelSelector=app%%3dweb%%26x&"
             "fieldSelector=spec.schedulerName%%3dvolcano",
             st.last_timeout_s);
    ck_assert_str_eq(kf_req(&srv, 1)->query, want);
    first = st.last_timeout_s;
    mu_watch_free(w);

    /* the same seed gives the same timeout */
    kf_stop(&srv);
    setup();
    w = watch_new(o);
    kf_reply_file(&srv, 200, "pods_empty.json");
    got = run(w, &st);
    free(got);
    ck_assert_int_eq(st.last_timeout_s, first);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_timeouts_spread_over_range)
{
    long lo = 100000, hi = 0;
    uint64_t seed;

    for (seed = 0; seed < 6; seed++) {
        struct mu_watch *w;
        struct mu_watch_stats st;
        char *got;

        kf_stop(&srv);
        setup();
        w = watch_new((struct mu_watch_opts){.seed = seed});
        kf_reply_file(&srv, 200, "pods_empty.json");
        got = run(w, &st);
        free(got);
        lo = MU_MIN(lo, st.last_timeout_s);
        hi = MU_MAX(hi, st.last_timeout_s);
        mu_watch_free(w);
    }
    ck_assert_int_ge(lo, MU_WATCH_TIMEOUT_MIN_S);
    ck_assert_int_le(hi, MU_WATCH_TIMEOUT_MAX_S);
    ck_assert_int_gt(hi, lo); /* jittered */
}
END_TEST

START_TEST(test_watch_callback_may_stop)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){0});
    struct seen s = {.n = 0, .stop_after = 2};

    kf_reply_file(&srv, 200, "pods_page1.json");
    kf_reply_file(&srv, 200, "pods_page2.json");
    mu_sb_init(&s.sb);
    ck_assert_int_eq(mu_watch_run(w, record, &s), 0);
    ck_assert_str_eq(s.sb.buf, "LIST_BEGIN\nLIST_ITEM Pod/train-0@90\n");
    ck_assert_uint_eq(kf_count(&srv), 1);
    ck_assert_int_eq(mu_watch_run(w, NULL, NULL), -EINVAL);
    mu_sb_release(&s.sb);
    mu_watch_free(w);
}
END_TEST


/* ---- the initial state streamed (stream_list, WatchList) ---------------- */

#define STREAM_Q                                                               \
    "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"        \
    "allowWatchBookmarks=true&timeoutSeconds=T"
#define EV(type, name, rv)                                                     \
    "{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":"      \
    "\"v1\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"team-a\","    \
    "\"resourceVersion\":\"" rv "\"}}}\n"
#define MARK(rv, ann)                                                          \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":"     \
    "\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\"" ann "}}}\n"
#define END_ANN ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"

START_TEST(test_watch_streams_the_initial_state)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.stream_list = true});
    struct mu_watch_stats st;
    char *got;

    /* objects in no RV order, a plain bookmark among them (not an RV to go
     * on from), the marked one, then the same stream as a plain watch */
    kf_reply_body(&srv, 200,
                  EV("ADDED", "train-1", "91") MARK("95", "")
                      EV("ADDED", "train-0", "90") MARK("100", END_ANN)
                          EV("MODIFIED", "train-1", "150"));
    kf_reply_body(&srv, 200, EV("MODIFIED", "train-0", "170"));
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\n"
                          "LIST_ITEM Pod/train-1@91\n"
                          "LIST_ITEM Pod/train-0@90\n"
                          "LIST_END\n"
                          "MODIFIED Pod/train-1@150\n"
                          "MODIFIED Pod/train-0@170\n");
    ck_assert_uint_eq(kf_count(&srv), 3);
    assert_query(0, STREAM_Q);
    assert_query(1, WATCH_Q("150"));
    assert_query(2, WATCH_Q("170"));
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_uint_eq(st.pages, 0); /* no LIST was sent */
    ck_assert_uint_eq(st.streamed, 2);
    ck_assert_uint_eq(st.events, 2);
    ck_assert_uint_eq(st.relists, 0);
    ck_assert_int_eq(st.slept_ns, 0);
    ck_assert_str_eq(logged, "watch /api/v1/pods: initial state streamed: 2 "
                             "objects\n");
    free(got);
    mu_watch_free(w);
}
END_TEST

START_TEST(test_watch_streamed_empty_state_still_begins_and_ends)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.stream_list = true});
    struct mu_watch_stats st;
    char *got;

    kf_reply_body(&srv, 200, MARK("7", END_ANN));
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_END\n");
    assert_query(1, WATCH_Q("7"));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* A stream broken before its marked bookmark is not resumed (its objects'
 * RVs are no position): the state is streamed again from the start. */
START_TEST(test_watch_broken_initial_state_starts_again)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.stream_list = true});
    struct mu_watch_stats st;
    char *got;

    kf_reply_body(&srv, 200, EV("ADDED", "train-0", "90"));
    kf_reply_body(&srv, 200,
                  EV("ADDED", "train-0", "90") EV("DELETED", "train-0", "93"));
    kf_reply_body(&srv, 200,
                  EV("ADDED", "train-1", "91") MARK("120", END_ANN));
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-0@90\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@90\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-1@91\nLIST_END\n");
    assert_query(0, STREAM_Q);
    assert_query(1, STREAM_Q);
    assert_query(2, STREAM_Q);
    assert_query(3, WATCH_Q("120"));
    ck_assert_uint_eq(st.relists, 2);
    ck_assert_uint_eq(st.lists, 1);
    ck_assert_int_gt(st.slept_ns, 0);
    ck_assert_ptr_nonnull(strstr(logged, "DELETED event inside the initial "
                                         "state; relisting"));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* A server whose WatchList gate is off refuses the parameters (422): a
 * paged LIST at once, and from then on, said once. */
START_TEST(test_watch_stream_refused_lists_in_pages_from_then_on)
{
    struct mu_watch *w = watch_new(
        (struct mu_watch_opts){.stream_list = true, .page_size = 2});
    struct mu_watch_stats st;
    char *got;

    kf_reply_body(&srv, 422,
                  "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\","
                  "\"message\":\"sendInitialEvents is forbidden for watch "
                  "unless the WatchList feature gate is enabled\"}");
    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 200, "watch_gone.ndjson");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n"
                          "ADDED Pod/train-3@101\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    assert_query(0, STREAM_Q);
    assert_query(1, "limit=2");
    assert_query(2, WATCH_Q("100"));
    assert_query(3, "limit=2"); /* the relist after the 410 too */
    assert_query(4, WATCH_Q("500"));
    ck_assert_uint_eq(st.refused, 1);
    ck_assert_int_eq(st.slept_ns, 0);
    ck_assert_ptr_nonnull(strstr(logged, "feature gate is enabled: the server "
                                         "does not stream a watch's initial "
                                         "state; listing in pages from now on"));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* A 404 (a CRD not installed yet) lists this time, as before, and streams
 * again at the next relist. */
START_TEST(test_watch_stream_404_lists_this_time_only)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.stream_list = true});
    struct mu_watch_stats st;
    char *got;

    kf_reply_file(&srv, 404, "status_404.json");
    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 410, "status_410.json");
    kf_reply_body(&srv, 200, MARK("300", END_ANN) EV("ADDED", "x", "301"));
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n"
                          "LIST_BEGIN\nLIST_END\nADDED Pod/x@301\n");
    assert_query(0, STREAM_Q);
    assert_query(1, "limit=500");
    assert_query(2, WATCH_Q("100"));
    assert_query(3, STREAM_Q);
    assert_query(4, WATCH_Q("301"));
    ck_assert_uint_eq(st.refused, 1);
    free(got);
    mu_watch_free(w);
}
END_TEST

/* A server that ignores sendInitialEvents (one older than the protocol)
 * sends no object and ends the watch at its timeout: listed in pages from
 * then on, said once. */
START_TEST(test_watch_stream_ignored_lists_for_good)
{
    struct mu_watch *w = watch_new((struct mu_watch_opts){.stream_list = true});
    struct mu_watch_stats st;
    char *got;

    fc_step = 2 * MU_WATCH_SHORT_NS; /* every watch lasted its while */
    kf_reply_body(&srv, 200, "");
    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply_file(&srv, 200, "watch_gone.ndjson");
    kf_reply_file(&srv, 200, "pods_relist.json");
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-2@95\nLIST_END\n"
                          "ADDED Pod/train-3@101\n"
                          "LIST_BEGIN\nLIST_ITEM Pod/train-0@480\nLIST_END\n");
    assert_query(0, STREAM_Q);
    assert_query(1, "limit=500");
    assert_query(2, WATCH_Q("100"));
    assert_query(3, "limit=500");
    ck_assert_ptr_nonnull(strstr(logged, "the watch ended without the "
                                         "initial state: listing in pages "
                                         "from now on"));
    free(got);
    mu_watch_free(w);
}
END_TEST

struct runner {
    struct mu_watch *w;
    struct seen s;
};

static void *run_thread(void *arg)
{
    struct runner *r = arg;

    mu_watch_run(r->w, record, &r->s);
    return NULL;
}

/* The stop flag interrupts a watch blocked on a silent stream (real
 * clock: this is libcurl's progress callback at work). */
START_TEST(test_watch_stop_interrupts_blocking_stream)
{
    struct mu_watch_opts o = {0};
    struct runner r = {.s = {.n = 0}};
    struct timespec a, b, nap = {0, 300 * 1000 * 1000};
    pthread_t th;
    double secs;

    real_clock = true;
    r.w = watch_new(o);
    srv.exhausted = NULL;
    kf_reply_file(&srv, 200, "pods_empty.json");
    kf_reply(&srv, (struct kf_reply){200, NULL, "", NULL, 0, false, true});
    mu_sb_init(&r.s.sb);
    ck_assert_int_eq(pthread_create(&th, NULL, run_thread, &r), 0);
    while (kf_count(&srv) < 2)
        nanosleep(&nap, NULL);
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_MONOTONIC, &a);
    atomic_store(&stop, true);
    pthread_join(th, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    secs = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    ck_assert_msg(secs < 2.5, "took %.2f s to stop", secs);
    ck_assert_uint_eq(kf_count(&srv), 2);
    ck_assert_str_eq(r.s.sb.buf, "LIST_BEGIN\nLIST_END\n");
    mu_sb_release(&r.s.sb);
    mu_watch_free(r.w);
}
END_TEST

/* ---- protobuf streams (opts.protobuf, kube/watchpb.h) ------------------ */

/* A protobuf encoder for the frames below. */
struct enc {
    uint8_t b[4096];
    size_t n;
};

static void e_varint(struct enc *e, uint64_t v)
{
    do {
        ck_assert_uint_lt(e->n, sizeof(e->b));
        e->b[e->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void e_bytes(struct enc *e, uint32_t num, const void *p, size_t n)
{
    e_varint(e, (uint64_t)num << 3 | 2);
    e_varint(e, n);
    ck_assert_uint_le(e->n + n, sizeof(e->b));
    memcpy(e->b + e->n, p, n);
    e->n += n;
}

static void e_str(struct enc *e, uint32_t num, const char *s)
{
    e_bytes(e, num, s, strlen(s));
}

static void e_msg(struct enc *e, uint32_t num, const struct enc *m)
{
    e_bytes(e, num, m->b, m->n);
}

/* A frame: WatchEvent {type, object {raw: "k8s\0" Unknown {typeMeta {kind},
 * raw: msg}}}, with its 4-byte length, appended to out. */
static void frame(struct enc *out, const char *type, const char *kind,
                  const struct enc *msg)
{
    struct enc tm = {.n = 0}, unk = {.n = 0}, raw = {.n = 0}, ext = {.n = 0},
               ev = {.n = 0};

    e_str(&tm, 1, "v1");
    e_str(&tm, 2, kind);
    memcpy(raw.b, "k8s", 4);
    raw.n = 4;
    e_msg(&unk, 1, &tm);
    e_msg(&unk, 2, msg);
    memcpy(raw.b + raw.n, unk.b, unk.n);
    raw.n += unk.n;
    e_msg(&ext, 1, &raw);
    e_str(&ev, 1, type);
    e_msg(&ev, 2, &ext);
    out->b[out->n++] = (uint8_t)(ev.n >> 24);
    out->b[out->n++] = (uint8_t)(ev.n >> 16);
    out->b[out->n++] = (uint8_t)(ev.n >> 8);
    out->b[out->n++] = (uint8_t)ev.n;
    memcpy(out->b + out->n, ev.b, ev.n);
    out->n += ev.n;
}

/* A Pod {metadata {name, namespace, resourceVersion[, the initial-end
 * annotation]}}. */
static struct enc pod_msg(const char *name, const char *rv, bool end)
{
    struct enc meta = {.n = 0}, pod = {.n = 0}, ann = {.n = 0};

    if (name) {
        e_str(&meta, 1, name);
        e_str(&meta, 3, "team-a");
    }
    e_str(&meta, 6, rv);
    if (end) {
        e_str(&ann, 1, MU_WATCH_INITIAL_END);
        e_str(&ann, 2, "true");
        e_msg(&meta, 12, &ann);
    }
    e_msg(&pod, 1, &meta);
    return pod;
}

static void reply_pb(const struct enc *body)
{
    kf_reply(&srv, (struct kf_reply){
                       .status = 200,
                       .content_type =
                           "application/vnd.kubernetes.protobuf;stream=watch",
                       .body = (const char *)body->b,
                       .body_len = body->n});
}

/* The initial state and the watch after it, as protobuf: the same events
 * as the JSON stream gives, and WATCHes that ask for protobuf. */
START_TEST(test_watch_protobuf_stream_delivers_as_json_does)
{
    struct mu_watch *w = watch_new(
        (struct mu_watch_opts){.stream_list = true, .protobuf = mu_podpb_object});
    struct mu_watch_stats st;
    struct enc a = {.n = 0}, b = {.n = 0}, m;
    char *got;

    m = pod_msg("train-1", "91", false);
    frame(&a, "ADDED", "Pod", &m);
    m = pod_msg("train-0", "90", false);
    frame(&a, "ADDED", "Pod", &m);
    m = pod_msg(NULL, "100", true);
    frame(&a, "BOOKMARK", "Pod", &m);
    m = pod_msg("train-1", "150", false);
    frame(&a, "MODIFIED", "Pod", &m);
    reply_pb(&a);
    m = pod_msg("train-0", "170", false);
    frame(&b, "DELETED", "Pod", &m);
    reply_pb(&b);
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\n"
                          "LIST_ITEM Pod/train-1@91\n"
                          "LIST_ITEM Pod/train-0@90\n"
                          "LIST_END\n"
                          "MODIFIED Pod/train-1@150\n"
                          "DELETED Pod/train-0@170\n");
    ck_assert_uint_eq(kf_count(&srv), 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(kf_req(&srv, i)->accept,
                         "application/vnd.kubernetes.protobuf;stream=watch, "
                         "application/json");
    assert_query(0, STREAM_Q);
    assert_query(1, WATCH_Q("150"));
    assert_query(2, WATCH_Q("170"));
    ck_assert_uint_eq(st.streamed, 2);
    ck_assert_uint_eq(st.events, 2);
    free(got);
    mu_watch_free(w);
}
END_TEST

/* A server that answers JSON to a watch that can read protobuf is read
 * as JSON (a CRD, an older server). */
START_TEST(test_watch_protobuf_asked_json_answered_is_read)
{
    struct mu_watch *w = watch_new(
        (struct mu_watch_opts){.stream_list = true, .protobuf = mu_podpb_object});
    struct mu_watch_stats st;
    char *got;

    kf_reply_body(&srv, 200,
                  EV("ADDED", "train-0", "90") MARK("100", END_ANN));
    got = run(w, &st);
    ck_assert_str_eq(got, "LIST_BEGIN\nLIST_ITEM Pod/train-0@90\nLIST_END\n");
    free(got);
    mu_watch_free(w);
}
END_TEST

/* An ERROR event's Status read from protobuf: 410 relists at once; a
 * frame that is not a WatchEvent relists after a backoff and says why. */
START_TEST(test_watch_protobuf_status_and_garbage)
{
    struct mu_watch *w = watch_new(
        (struct mu_watch_opts){.stream_list = false, .protobuf = mu_podpb_object});
    struct mu_watch_stats st;
    struct enc a = {.n = 0}, b = {.n = 0}, status = {.n = 0};
    char *got;

    kf_reply_file(&srv, 200, "pods_page2.json");
    e_str(&status, 3, "too old resource version");
    e_varint(&status, 6 << 3);
    e_varint(&status, 410);
    frame(&a, "ERROR", "Status", &status);
    reply_pb(&a);
    kf_reply_file(&srv, 200, "pods_page2.json");
    memcpy(b.b, "\x00\x00\x00\x03\x0b\x0b\x0b", 7); /* groups: not wire */
    b.n = 7;
    reply_pb(&b);
    got = run(w, &st);
    ck_assert_ptr_nonnull(strstr(logged, "ERROR event 410: too old resource "
                                         "version; relisting"));
    ck_assert_ptr_nonnull(strstr(logged, "watch event (protobuf): needs a "
                                         "type and an object; relisting"));
    ck_assert_uint_ge(st.lists, 2);
    free(got);
    mu_watch_free(w);
}
END_TEST

/* An error answered in protobuf (the Accept asks for it) still says its
 * reason and message. */
START_TEST(test_watch_protobuf_error_body_is_read)
{
    struct mu_watch *w = watch_new(
        (struct mu_watch_opts){.stream_list = false,
                               .protobuf = mu_podpb_object});
    struct mu_watch_stats st;
    struct enc tm = {.n = 0}, unk = {.n = 0}, status = {.n = 0};
    char *got;

    e_str(&tm, 1, "v1");
    e_str(&tm, 2, "Status");
    e_str(&status, 3, "pods is forbidden: User \"muster\" cannot watch");
    e_str(&status, 4, "Forbidden");
    e_varint(&status, 6 << 3);
    e_varint(&status, 403);
    memcpy(unk.b, "k8s", 4);
    unk.n = 4;
    e_msg(&unk, 1, &tm);
    e_msg(&unk, 2, &status);
    kf_reply_file(&srv, 200, "pods_page2.json");
    kf_reply(&srv, (struct kf_reply){.status = 403,
                                     .content_type =
                                         "application/vnd.kubernetes.protobuf",
                                     .body = (const char *)unk.b,
                                     .body_len = unk.n});
    got = run(w, &st);
    ck_assert_ptr_nonnull(strstr(logged, ": 403 Forbidden: pods is forbidden: "
                                         "User \"muster\" cannot watch"));
    free(got);
    mu_watch_free(w);
}
END_TEST

/* Frames split at every byte boundary come out whole and in order; a
 * frame over the cap is refused wherever it is cut. */
struct frames {
    size_t n, len[8];
    uint8_t first[8];
};

static int on_fr(void *ctx, const uint8_t *f, size_t len)
{
    struct frames *fr = ctx;

    ck_assert_uint_lt(fr->n, 8);
    fr->len[fr->n] = len;
    fr->first[fr->n++] = len ? f[0] : 0;
    return 0;
}

START_TEST(test_framebuf_every_byte_boundary)
{
    static const char in[] = "\x00\x00\x00\x02" "ab" "\x00\x00\x00\x00"
                             "\x00\x00\x00\x03" "xyz";
    size_t n = sizeof(in) - 1;

    for (size_t cut = 0; cut <= n; cut++) {
        struct mu_framebuf fb;
        struct frames fr = {.n = 0};

        mu_framebuf_init(&fb, 16);
        ck_assert_int_eq(mu_framebuf_feed(&fb, in, cut, on_fr, &fr), 0);
        ck_assert_int_eq(mu_framebuf_feed(&fb, in + cut, n - cut, on_fr, &fr),
                         0);
        ck_assert_uint_eq(fr.n, 3);
        ck_assert(fr.len[0] == 2 && fr.first[0] == 'a');
        ck_assert(fr.len[1] == 0);
        ck_assert(fr.len[2] == 3 && fr.first[2] == 'x');
        ck_assert_uint_eq(fb.len, 0);
        mu_framebuf_release(&fb);
    }
    for (size_t cut = 0; cut <= 8; cut++) {
        static const char big[] = "\x00\x00\x00\x11" "0123456789abcdefg";
        struct mu_framebuf fb;
        struct frames fr = {.n = 0};
        int rc;

        mu_framebuf_init(&fb, 16);
        rc = mu_framebuf_feed(&fb, big, cut, on_fr, &fr);
        if (!rc)
            rc = mu_framebuf_feed(&fb, big + cut, sizeof(big) - 1 - cut,
                                  on_fr, &fr);
        ck_assert_int_eq(rc, -ENOBUFS);
        ck_assert_uint_eq(fr.n, 0);
        ck_assert_uint_le(fb.len, 4);
        mu_framebuf_release(&fb);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_watch");
    TCase *tl = tcase_create("linebuf");
    TCase *te = tcase_create("event");
    TCase *tw = tcase_create("watch");
    SRunner *sr;
    int failed;

    tcase_add_test(tl, test_linebuf_every_byte_boundary);
    tcase_add_test(tl, test_linebuf_byte_by_byte);
    tcase_add_test(tl, test_linebuf_oversize_line_at_every_boundary);
    tcase_add_test(tl, test_linebuf_unterminated_oversize_fails_early);
    tcase_add_test(tl, test_linebuf_callback_stop_drops_rest);
    tcase_add_loop_test(te, test_watch_event_parse_table, 0,
                        (int)MU_ARRAY_LEN(events));
    tcase_add_checked_fixture(tw, setup, teardown);
    tcase_add_test(tw, test_watch_list_pages_then_watch);
    tcase_add_test(tw, test_watch_bookmarks_advance_rv);
    tcase_add_test(tw, test_watch_410_in_stream_relists);
    tcase_add_test(tw, test_watch_http_410_relists);
    tcase_add_test(
        tw, test_watch_dropped_mid_line_resumes_without_loss_or_duplicates);
    tcase_add_test(tw, test_watch_malformed_line_relists);
    tcase_add_test(tw, test_watch_list_page_with_nul_and_junk_delivers_the_rest);
    tcase_add_test(tw, test_watch_stream_with_nul_carries_on);
    tcase_add_test(tw, test_watch_oversize_event_relists);
    tcase_add_test(tw, test_watch_backoff_is_exponential_and_capped);
    tcase_add_test(tw, test_watch_failed_list_backs_off_and_retries);
    tcase_add_test(tw, test_watch_selectors_and_seeded_timeout);
    tcase_add_test(tw, test_watch_timeouts_spread_over_range);
    tcase_add_test(tw, test_watch_callback_may_stop);
    tcase_add_test(tw, test_watch_stop_interrupts_blocking_stream);
    tcase_add_test(tw, test_watch_streams_the_initial_state);
    tcase_add_test(tw, test_watch_streamed_empty_state_still_begins_and_ends);
    tcase_add_test(tw, test_watch_broken_initial_state_starts_again);
    tcase_add_test(tw, test_watch_stream_refused_lists_in_pages_from_then_on);
    tcase_add_test(tw, test_watch_stream_404_lists_this_time_only);
    tcase_add_test(tw, test_watch_stream_ignored_lists_for_good);
    tcase_add_test(tw, test_watch_protobuf_stream_delivers_as_json_does);
    tcase_add_test(tw, test_watch_protobuf_asked_json_answered_is_read);
    tcase_add_test(tw, test_watch_protobuf_status_and_garbage);
    tcase_add_test(tw, test_watch_protobuf_error_body_is_read);
    tcase_add_test(tl, test_framebuf_every_byte_boundary);
    suite_add_tcase(s, tl);
    suite_add_tcase(s, te);
    suite_add_tcase(s, tw);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
