/* Pods read from protobuf (api/podpb.h, api/pbjson.h, common/pb.h), held
 * against the same pods read as JSON. The pairs in tests/data/kube/pb/ were
 * read from a real kube-apiserver (v1.35.4) at one resourceVersion each:
 * NAME.pb as application/vnd.kubernetes.protobuf, NAME.json as JSON
 * (tests/data/kube/pb/capture.sh). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/object.h"
#include "api/pbjson.h"
#include "api/podpb.h"
#include "common/pb.h"

#define PB_DIR MU_KUBE_DATA "/pb"

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b;
    long sz;

    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)sz + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

/* The Pod message inside a GET's protobuf body: "k8s\0" and a
 * runtime.Unknown whose raw (2) is the Pod. */
static const uint8_t *pod_of(const uint8_t *body, size_t n, size_t *len)
{
    struct mu_pb r;
    struct mu_pb_field f;

    ck_assert(n > 4 && !memcmp(body, "k8s", 4));
    mu_pb_init(&r, body + 4, n - 4);
    while (mu_pb_next(&r, &f) > 0)
        if (f.num == 2) {
            *len = f.len;
            return f.data;
        }
    ck_abort_msg("no raw in the runtime.Unknown");
    return NULL;
}

/* The JSON pod projected on the schema: what the protobuf's JSON must be. */
static json_t *project(const json_t *j, const struct mu_pbj_msg *m)
{
    json_t *out = json_object();

    for (size_t i = 0; i < m->n; i++) {
        const struct mu_pbj_field *d = &m->fields[i];
        const json_t *v = json_object_get(j, d->key), *el;
        json_t *a;
        size_t k;

        if (d->kind == MU_PBJ_INLINE) {
            a = project(j, d->sub);
            json_object_update(out, a);
            json_decref(a);
            continue;
        }
        if (!v || json_is_null(v))
            continue;
        switch (d->kind) {
        case MU_PBJ_STR:
            if (json_string_length(v))
                json_object_set(out, d->key, (json_t *)v);
            break;
        case MU_PBJ_MAP_STR:
        case MU_PBJ_MAP_QTY:
            if (json_object_size(v))
                json_object_set(out, d->key, (json_t *)v);
            break;
        case MU_PBJ_MSG:
            json_object_set_new(out, d->key, project(v, d->sub));
            break;
        case MU_PBJ_SET:
            json_object_set_new(out, d->key, json_object());
            break;
        case MU_PBJ_MSGS:
        case MU_PBJ_SETS:
            if (!json_array_size(v))
                break;
            a = json_array();
            json_array_foreach(v, k, el)
                json_array_append_new(a, d->kind == MU_PBJ_SETS
                                             ? json_object()
                                             : project(el, d->sub));
            json_object_set_new(out, d->key, a);
            break;
        default: /* STRS, numbers, booleans, times: as they are */
            json_object_set(out, d->key, (json_t *)v);
            break;
        }
    }
    return out;
}

/* hostPort is an int32 JSON leaves out at 0 and protobuf always writes. */
static void drop_zero_host_ports(json_t *pod)
{
    const char *lists[] = {"containers", "initContainers"};

    for (size_t l = 0; l < 2; l++) {
        json_t *c, *p;
        size_t i, k;

        json_array_foreach(json_object_get(json_object_get(pod, "spec"),
                                           lists[l]), i, c)
            json_array_foreach(json_object_get(c, "ports"), k, p)
                if (json_integer_value(json_object_get(p, "hostPort")) == 0)
                    json_object_del(p, "hostPort");
    }
}

static void dump_kvs(FILE *f, const char *what, const struct mu_kvs *kv)
{
    fprintf(f, "%s:", what);
    for (size_t i = 0; i < kv->n; i++)
        fprintf(f, " %s=%s", kv->v[i].key, kv->v[i].value);
    fputc('\n', f);
}

static void dump_req(FILE *f, const struct mu_selreq *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, " [%s %d", r[i].key, (int)r[i].op);
        for (size_t v = 0; v < r[i].nvalues; v++)
            fprintf(f, " %s", r[i].values[v]);
        fputc(']', f);
    }
}

/* Everything mu_pod_decode made of a pod, as text. */
static char *digest(const json_t *j)
{
    struct mu_resnames rn;
    struct mu_pod p;
    struct mu_err err;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    mu_resnames_init(&rn);
    ck_assert_msg(mu_pod_decode(j, &rn, &p, &err) == 0, "%s", err.msg);
    fprintf(f, "meta %s/%s %s %lld del=%d owner=%s/%s/%s\n", p.meta.ns,
            p.meta.name, p.meta.uid ? p.meta.uid : "-",
            (long long)p.meta.created, p.meta.deleting,
            p.meta.owner_kind ? p.meta.owner_kind : "-",
            p.meta.owner_name ? p.meta.owner_name : "-",
            p.meta.owner_uid ? p.meta.owner_uid : "-");
    dump_kvs(f, "labels", &p.meta.labels);
    dump_kvs(f, "annotations", &p.meta.annotations);
    fprintf(f, "sched=%s node=%s phase=%d be=%d prio=%d/%d pc=%s never=%d\n",
            p.scheduler_name, p.node_name ? p.node_name : "-", (int)p.phase,
            p.besteffort, p.priority, p.has_priority,
            p.priority_class ? p.priority_class : "-", p.preempt_never);
    fprintf(f, "req set=%x", p.req.set);
    for (int d = 0; d < MU_RES_MAX; d++)
        if (p.req.v[d])
            fprintf(f, " %d=%lld", d, (long long)p.req.v[d]);
    fputc('\n', f);
    dump_kvs(f, "nodeSelector", &p.node_selector);
    for (size_t t = 0; t < p.affinity.nterms; t++) {
        fprintf(f, "term");
        dump_req(f, p.affinity.terms[t].expr, p.affinity.terms[t].nexpr);
        fprintf(f, " |");
        dump_req(f, p.affinity.terms[t].fields, p.affinity.terms[t].nfields);
        fputc('\n', f);
    }
    for (size_t t = 0; t < p.ntol; t++)
        fprintf(f, "tol %s %d %s %d\n", p.tol[t].key ? p.tol[t].key : "-",
                p.tol[t].exists, p.tol[t].value ? p.tol[t].value : "-",
                (int)p.tol[t].effect);
    fprintf(f, "gates=%zu muster=%d group=%s task=%s idx=%d preemptable=%d "
               "submit=%lld run=%lld started=%lld kube_only=%d ext=%s\n",
            p.ngates, p.muster_gate, p.group ? p.group : "-",
            p.task_spec ? p.task_spec : "-", p.task_index, p.preemptable,
            (long long)p.submit_at_ms, (long long)p.run_for_ms,
            (long long)p.started, p.kube_only,
            p.ext_claim ? p.ext_claim : "-");
    for (size_t c = 0; c < p.nclaims; c++)
        fprintf(f, "claim %s %s %s\n", p.claims[c].name,
                p.claims[c].claim ? p.claims[c].claim : "-",
                p.claims[c].tmpl ? p.claims[c].tmpl : "-");
    fclose(f);
    mu_pod_release(&p);
    mu_resnames_release(&rn);
    return buf;
}

/* Each pair: the protobuf's JSON is the JSON projected on the schema, and
 * mu_pod_decode makes the same pod of the whole JSON, of its projection
 * and of the protobuf (so the decoder reads nothing the schema leaves
 * out). */
START_TEST(protobuf_pods_read_as_their_json)
{
    DIR *d = opendir(PB_DIR);
    struct dirent *e;
    int pairs = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        char path[512], *dj, *dp, *dw;
        size_t n, plen;
        uint8_t *body;
        const uint8_t *pod;
        json_t *want, *proj, *got;
        struct mu_err err;
        size_t nl = strlen(e->d_name);

        if (nl < 4 || strcmp(e->d_name + nl - 3, ".pb"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", PB_DIR, e->d_name);
        body = slurp(path, &n);
        pod = pod_of(body, n, &plen);
        got = mu_podpb_json(pod, plen, &err);
        ck_assert_msg(got != NULL, "%s: %s", e->d_name, err.msg);
        snprintf(path + strlen(path) - 3, 8, ".json");
        want = json_load_file(path, 0, NULL);
        ck_assert_msg(want != NULL, "%s", path);
        proj = project(want, mu_podpb_schema());
        json_object_set(proj, "kind", json_object_get(want, "kind"));
        json_object_set(proj, "apiVersion", json_object_get(want, "apiVersion"));
        drop_zero_host_ports(got);
        {
            char *a = json_dumps(proj, JSON_SORT_KEYS | JSON_INDENT(1));
            char *b = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));

            if (!json_equal(proj, got))
                fprintf(stderr, "%s:\nJSON:\n%s\nprotobuf:\n%s\n", e->d_name,
                        a, b);
            ck_assert_msg(json_equal(proj, got), "%s: the protobuf's JSON is "
                                                 "not the JSON's (stderr)",
                          e->d_name);
            free(a);
            free(b);
        }
        dj = digest(want);
        dp = digest(proj);
        dw = digest(got);
        ck_assert_str_eq(dp, dj);
        ck_assert_str_eq(dw, dj);
        free(dj);
        free(dp);
        free(dw);
        json_decref(want);
        json_decref(proj);
        json_decref(got);
        free(body);
        pairs++;
    }
    closedir(d);
    ck_assert_int_ge(pairs, 5);
}
END_TEST

/* Every prefix of a real pod's message is read or refused, never read
 * past (valgrind and ASan watch the reads). */
START_TEST(truncated_pods_are_refused_or_read_never_past_the_end)
{
    char path[512];
    size_t n, plen, refused = 0;
    uint8_t *body;
    const uint8_t *pod;

    snprintf(path, sizeof(path), "%s/%s", PB_DIR, "rich.pb");
    body = slurp(path, &n);
    pod = pod_of(body, n, &plen);
    for (size_t cut = 0; cut < plen; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        struct mu_err err;
        json_t *j;

        memcpy(copy, pod, cut);
        j = mu_podpb_json(copy, cut, &err);
        if (!j) {
            refused++;
            ck_assert_ptr_nonnull(strstr(err.msg, "protobuf "));
        }
        json_decref(j);
        free(copy);
    }
    ck_assert_uint_gt(refused, plen / 2);
    free(body);
}
END_TEST

START_TEST(wire_reader_refuses_what_is_not_wire_format)
{
    static const struct {
        const char *bytes;
        size_t n;
    } bad[] = {
        {"\x08", 1},                                     /* varint cut */
        {"\x08\x80\x80", 3},                             /* varint cut */
        {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12}, /* 11 bytes */
        {"\x0a\x05" "abc", 5},                           /* LEN past end */
        {"\x0b", 1},                                     /* a group */
        {"\x0e", 1},                                     /* wire type 6 */
        {"\x09\x01\x02", 3},                             /* I64 cut */
        {"\x00", 1},                                     /* field 0 */
    };
    struct mu_pb r;
    struct mu_pb_field f;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        mu_pb_init(&r, bad[i].bytes, bad[i].n);
        ck_assert_msg(mu_pb_next(&r, &f) == -EPROTO, "case %zu", i);
        ck_assert_int_eq(mu_pb_next(&r, &f), 0); /* at its end after */
    }
    /* field 2, LEN 3 "abc"; field 3 varint 300; field 4 I32 */
    mu_pb_init(&r, "\x12\x03" "abc" "\x18\xac\x02" "\x25\x01\x00\x00\x00", 13);
    ck_assert_int_eq(mu_pb_next(&r, &f), 1);
    ck_assert(f.num == 2 && f.wire == MU_PB_LEN && f.len == 3 &&
              !memcmp(f.data, "abc", 3));
    ck_assert_int_eq(mu_pb_next(&r, &f), 1);
    ck_assert(f.num == 3 && f.wire == MU_PB_VARINT && f.v == 300);
    ck_assert_int_eq(mu_pb_next(&r, &f), 1);
    ck_assert(f.num == 4 && f.wire == MU_PB_I32 && f.v == 1);
    ck_assert_int_eq(mu_pb_next(&r, &f), 0);
}
END_TEST

/* A field of the wrong wire type, a string that is not UTF-8, a negative
 * int32, a later scalar over an earlier one, the zero time. */
START_TEST(schema_reads_scalars_as_protobuf_means_them)
{
    struct mu_err err;
    json_t *j;

    /* metadata (1) { name (1) = 5 as a varint } */
    j = mu_podpb_json((const uint8_t *)"\x0a\x02\x08\x05", 4, &err);
    ck_assert_ptr_null(j);
    ck_assert_ptr_nonnull(strstr(err.msg, "ObjectMeta.name: wrong wire type"));
    /* metadata { name = "a\xff\xed\xa0\x80b" (a stray byte, a surrogate),
     * annotations { "k\xc0" = "\xf4\x90\x80\x80" (overlong, past
     * U+10FFFF) } }: each bad byte U+FFFD, as Go's JSON writes them */
    j = mu_podpb_json((const uint8_t *)"\x0a\x14\x0a\x06" "a\xff\xed\xa0\x80" "b"
                                       "\x62\x0a\x0a\x02" "k\xc0"
                                       "\x12\x04" "\xf4\x90\x80\x80",
                      22, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(j, "metadata"), "name")),
                     "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "b");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(j, "metadata"),
                                         "annotations"),
                         "k\xef\xbf\xbd")),
                     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    json_decref(j);
    /* spec (2) { priority (25) = -1; nodeName (10) = "a", then "" } */
    j = mu_podpb_json(
        (const uint8_t *)"\x12\x11\xc8\x01\xff\xff\xff\xff\xff\xff\xff\xff"
                         "\xff\x01\x52\x01" "a" "\x52\x00",
        19, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(j, "spec"), "priority")), -1);
    ck_assert_ptr_null(json_object_get(json_object_get(j, "spec"),
                                       "nodeName"));
    json_decref(j);
    /* metadata { creationTimestamp (8) { seconds = Go's zero time } } */
    j = mu_podpb_json((const uint8_t *)"\x0a\x0d\x42\x0b\x08\x80\x92\xb8\xc3"
                                       "\x98\xfe\xff\xff\xff\x01",
                      15, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_ptr_null(json_object_get(json_object_get(j, "metadata"),
                                       "creationTimestamp"));
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("podpb");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, protobuf_pods_read_as_their_json);
    tcase_add_test(tc, truncated_pods_are_refused_or_read_never_past_the_end);
    tcase_add_test(tc, wire_reader_refuses_what_is_not_wire_format);
    tcase_add_test(tc, schema_reads_scalars_as_protobuf_means_them);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
