#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/resource.h"
#include "sched/cycle.h"
#include "sim/sim.h"

#define SYNTAX_MSG                                                            \
    "quantities must match the regular expression "                         \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

static const struct {
    const char *s;
    enum mu_qunit unit;
    int64_t want;
} parse_ok[] = {
    {"0", MU_Q_MILLI, 0},
    {"1", MU_Q_MILLI, 1000},
    {"0.1", MU_Q_MILLI, 100},
    {"1.5", MU_Q_MILLI, 1500},
    {"500m", MU_Q_MILLI, 500},
    {"100u", MU_Q_MILLI, 1},
    {"1n", MU_Q_MILLI, 1},
    {"1001u", MU_Q_MILLI, 2},
    {"2e3", MU_Q_MILLI, 2000000},
    {"1E-2", MU_Q_MILLI, 10},
    {"1e-4", MU_Q_MILLI, 1},
    {"1.5e1", MU_Q_MILLI, 15000},
    {"2e+3", MU_Q_MILLI, 2000000},
    {"+4", MU_Q_MILLI, 4000},
    {".5", MU_Q_MILLI, 500},
    {"5.", MU_Q_MILLI, 5000},
    {"-0.5", MU_Q_MILLI, -500},
    {"-100u", MU_Q_MILLI, -1},
    {"-0", MU_Q_MILLI, 0},
    {"0.0001", MU_Q_MILLI, 1},
    {"1e-999999", MU_Q_MILLI, 1},
    {"0e999999", MU_Q_MILLI, 0},
    {"64", MU_Q_MILLI, 64000},
    {"1Ki", MU_Q_BYTES, 1024},
    {"1Mi", MU_Q_BYTES, 1048576},
    {"64Gi", MU_Q_BYTES, INT64_C(68719476736)},
    {"1.5Gi", MU_Q_BYTES, 1610612736},
    {".5Ki", MU_Q_BYTES, 512},
    {"1.0001Ki", MU_Q_BYTES, 1025},
    {"1Ti", MU_Q_BYTES, INT64_C(1099511627776)},
    {"1Pi", MU_Q_BYTES, INT64_C(1125899906842624)},
    {"1Ei", MU_Q_BYTES, INT64_C(1152921504606846976)},
    {"7Ei", MU_Q_BYTES, INT64_C(8070450532247928832)},
    {"1n", MU_Q_BYTES, 1},
    {"1u", MU_Q_BYTES, 1},
    {"100m", MU_Q_BYTES, 1},
    {"1500m", MU_Q_BYTES, 2},
    {"1k", MU_Q_BYTES, 1000},
    {"1M", MU_Q_BYTES, 1000000},
    {"1G", MU_Q_BYTES, 1000000000},
    {"1T", MU_Q_BYTES, INT64_C(1000000000000)},
    {"1P", MU_Q_BYTES, INT64_C(1000000000000000)},
    {"1E", MU_Q_BYTES, INT64_C(1000000000000000000)},
    {"9E", MU_Q_BYTES, INT64_C(9000000000000000000)},
    {"1e18", MU_Q_BYTES, INT64_C(1000000000000000000)},
    {"9223372036854775807", MU_Q_BYTES, INT64_MAX},
    {"-9223372036854775807", MU_Q_BYTES, -INT64_MAX},
    {"000000000000000000000000000001", MU_Q_BYTES, 1},
    {"0.000000000000000000000001", MU_Q_BYTES, 1},
    {"12345678901234567890e-10", MU_Q_BYTES, 1234567891},
    {"1", MU_Q_INTEGER, 1},
    {"1.0", MU_Q_INTEGER, 1},
    {"2e3", MU_Q_INTEGER, 2000},
    {"1k", MU_Q_INTEGER, 1000},
    {"1Ki", MU_Q_INTEGER, 1024},
    {"1.5Ki", MU_Q_INTEGER, 1536},
    {"1000m", MU_Q_INTEGER, 1},
    {"0", MU_Q_INTEGER, 0},
    {"8", MU_Q_INTEGER, 8},
};

START_TEST(test_quantity_parse_accepts_every_form)
{
    int64_t v = -42;
    struct mu_err err = {{0}};
    int rc = mu_quantity_parse(parse_ok[_i].s, parse_ok[_i].unit, &v, &err);

    ck_assert_msg(rc == 0, "%s: %s", parse_ok[_i].s, err.msg);
    ck_assert_msg(v == parse_ok[_i].want, "%s: got %lld want %lld",
                  parse_ok[_i].s, (long long)v,
                  (long long)parse_ok[_i].want);
}
END_TEST

static const struct {
    const char *s;
    enum mu_qunit unit;
    const char *msg;
} parse_bad[] = {
    {"", MU_Q_MILLI, SYNTAX_MSG},
    {" 1", MU_Q_MILLI, SYNTAX_MSG},
    {"1 ", MU_Q_MILLI, SYNTAX_MSG},
    {"1.5.5", MU_Q_MILLI, SYNTAX_MSG},
    {"Gi", MU_Q_BYTES, SYNTAX_MSG},
    {"1gi", MU_Q_BYTES, SYNTAX_MSG},
    {"1KiB", MU_Q_BYTES, SYNTAX_MSG},
    {"1K", MU_Q_BYTES, SYNTAX_MSG},
    {"1mm", MU_Q_MILLI, SYNTAX_MSG},
    {"1i", MU_Q_BYTES, SYNTAX_MSG},
    {"1Ki5", MU_Q_BYTES, SYNTAX_MSG},
    {".", MU_Q_MILLI, SYNTAX_MSG},
    {"+", MU_Q_MILLI, SYNTAX_MSG},
    {"-", MU_Q_MILLI, SYNTAX_MSG},
    {"e3", MU_Q_MILLI, SYNTAX_MSG},
    {"1e", MU_Q_MILLI, SYNTAX_MSG},
    {"1e+", MU_Q_MILLI, SYNTAX_MSG},
    {"1e3.5", MU_Q_MILLI, SYNTAX_MSG},
    {"1e99999999999999999999", MU_Q_MILLI, SYNTAX_MSG},
    {"0x10", MU_Q_INTEGER, SYNTAX_MSG},
    {"1,5", MU_Q_MILLI, SYNTAX_MSG},
    {"--1", MU_Q_MILLI, SYNTAX_MSG},
    {"abc", MU_Q_MILLI, SYNTAX_MSG},
    {"0.5", MU_Q_INTEGER, "must be an integer"},
    {"500m", MU_Q_INTEGER, "must be an integer"},
    {"1.0001", MU_Q_INTEGER, "must be an integer"},
    {"1e-1", MU_Q_INTEGER, "must be an integer"},
    {"1n", MU_Q_INTEGER, "must be an integer"},
    {"8Ei", MU_Q_BYTES, "value too large"},
    {"10E", MU_Q_BYTES, "value too large"},
    {"1e19", MU_Q_BYTES, "value too large"},
    {"9223372036854775808", MU_Q_BYTES, "value too large"},
    {"-9223372036854775808", MU_Q_BYTES, "value too large"},
    {"9223372036854775807.5", MU_Q_BYTES, "value too large"},
    {"9223372036854775807", MU_Q_MILLI, "value too large"},
    {"1e999999", MU_Q_INTEGER, "value too large"},
};

START_TEST(test_quantity_parse_rejects_and_keeps_out)
{
    int64_t v = 12345;
    struct mu_err err = {{0}};

    ck_assert_msg(mu_quantity_parse(parse_bad[_i].s, parse_bad[_i].unit, &v,
                                    &err) == -EINVAL,
                  "'%s' parsed", parse_bad[_i].s);
    ck_assert_str_eq(err.msg, parse_bad[_i].msg);
    ck_assert_int_eq(v, 12345);
    ck_assert_int_eq(mu_quantity_parse(parse_bad[_i].s, parse_bad[_i].unit,
                                       &v, NULL),
                     -EINVAL);
}
END_TEST

START_TEST(test_resource_unit_by_name)
{
    ck_assert_int_eq(mu_resource_unit("cpu"), MU_Q_MILLI);
    ck_assert_int_eq(mu_resource_unit("memory"), MU_Q_BYTES);
    ck_assert_int_eq(mu_resource_unit("ephemeral-storage"), MU_Q_BYTES);
    ck_assert_int_eq(mu_resource_unit("storage"), MU_Q_BYTES);
    ck_assert_int_eq(mu_resource_unit("hugepages-2Mi"), MU_Q_BYTES);
    ck_assert_int_eq(mu_resource_unit("pods"), MU_Q_INTEGER);
    ck_assert_int_eq(mu_resource_unit("nvidia.com/gpu"), MU_Q_INTEGER);
    ck_assert_int_eq(mu_resource_unit("nvidia.com/mig-1g.5gb"), MU_Q_INTEGER);
    ck_assert_int_eq(mu_resource_unit("cpus"), MU_Q_INTEGER);
}
END_TEST

static const struct {
    const char *name;
    int64_t v;
    const char *text;
} fmt[] = {
    {"cpu", 1500, "1500m"},
    {"cpu", 2000, "2"},
    {"cpu", 0, "0"},
    {"cpu", 1, "1m"},
    {"cpu", -500, "-500m"},
    {"cpu", -3000, "-3"},
    {"memory", INT64_C(34359738368), "32Gi"},
    {"memory", 1000000, "1M"},
    {"memory", 1000, "1k"},
    {"memory", 1234, "1234"},
    {"memory", 1536, "1536"},
    {"memory", 0, "0"},
    {"memory", 1610612736, "1536Mi"},
    {"memory", 1024000, "1024k"},
    {"memory", 1048576000, "1000Mi"},
    {"memory", -1024, "-1Ki"},
    {"memory", INT64_C(1152921504606846976), "1Ei"},
    {"memory", INT64_C(2000000000000000000), "2E"},
    {"memory", INT64_C(5000000000000), "5T"},
    {"memory", INT64_MAX, "9223372036854775807"},
    {"hugepages-2Mi", 2097152, "2Mi"},
    {"ephemeral-storage", 1000000000, "1G"},
    {"storage", INT64_C(1099511627776), "1Ti"},
    {"nvidia.com/gpu", 8, "8"},
    {"nvidia.com/gpu", 1024, "1024"},
    {"pods", 110, "110"},
};

START_TEST(test_accelerators_by_name)
{
    const char *yes[] = {"nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb",
                         "nvidia.com/gpu.shared", "gpu.intel.com/i915",
                         "habana.ai/gaudi", "aws.amazon.com/neuroncore",
                         "google.com/tpu", NULL};
    const char *no[] = {"cpu", "memory", "pods", "ephemeral-storage",
                        "hugepages-2Mi", "gpu", "/gpu", "nvidia.com/",
                        "example.com/foo", "rdma/hca", "nvidia.com/vgpu", NULL};

    for (int i = 0; yes[i]; i++)
        ck_assert_msg(mu_resource_is_accelerator(yes[i]), "%s", yes[i]);
    for (int i = 0; no[i]; i++)
        ck_assert_msg(!mu_resource_is_accelerator(no[i]), "%s", no[i]);
    ck_assert(!mu_resource_is_accelerator(NULL));
}
END_TEST

START_TEST(test_quantity_format_round_trips)
{
    char buf[32];
    int64_t back = 0;

    ck_assert_str_eq(mu_quantity_format(fmt[_i].name, fmt[_i].v, buf,
                                        sizeof(buf)),
                     fmt[_i].text);
    ck_assert_int_eq(mu_quantity_parse(buf, mu_resource_unit(fmt[_i].name),
                                       &back, NULL),
                     0);
    ck_assert_int_eq(back, fmt[_i].v);
}
END_TEST

START_TEST(test_quantity_format_truncates_to_buffer)
{
    char buf[4];

    ck_assert_str_eq(mu_quantity_format("cpu", 1500, buf, sizeof(buf)),
                     "150");
}
END_TEST

START_TEST(test_resnames_registers_in_order)
{
    struct mu_resnames r;
    char name[32];

    mu_resnames_init(&r);
    ck_assert_int_eq(r.n, 3);
    ck_assert_int_eq(mu_resnames_index(&r, "cpu", false), MU_RES_CPU);
    ck_assert_int_eq(mu_resnames_index(&r, "memory", false), MU_RES_MEMORY);
    ck_assert_int_eq(mu_resnames_index(&r, "pods", false), MU_RES_PODS);
    ck_assert_int_eq(mu_resnames_index(&r, "nvidia.com/gpu", false), -ENOENT);
    ck_assert_int_eq(r.n, 3);
    ck_assert_int_eq(mu_resnames_index(&r, "nvidia.com/gpu", true), 3);
    ck_assert_int_eq(mu_resnames_index(&r, "nvidia.com/gpu", true), 3);
    ck_assert_int_eq(mu_resnames_index(&r, "nvidia.com/gpu", false), 3);
    ck_assert_str_eq(r.name[3], "nvidia.com/gpu");
    for (int i = 4; i < MU_RES_MAX; i++) {
        snprintf(name, sizeof(name), "example.com/r%d", i);
        ck_assert_int_eq(mu_resnames_index(&r, name, true), i);
    }
    ck_assert_int_eq(mu_resnames_index(&r, "one/too-many", true), -ENOSPC);
    ck_assert_int_eq(r.n, MU_RES_MAX);
    ck_assert_int_eq(mu_resnames_index(&r, "example.com/r7", true), 7);
    mu_resnames_release(&r);
    ck_assert_int_eq(r.n, 0);
}
END_TEST

START_TEST(test_res_add_sub_or_set_bits)
{
    struct mu_res a, b;

    mu_res_zero(&a);
    mu_res_zero(&b);
    mu_res_put(&a, MU_RES_CPU, 1000);
    mu_res_put(&b, MU_RES_CPU, 500);
    mu_res_put(&b, 5, 2);
    mu_res_add(&a, &b);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_CPU), 1500);
    ck_assert_int_eq(mu_res_get(&a, 5), 2);
    ck_assert(mu_res_has(&a, 5));
    ck_assert(!mu_res_has(&a, MU_RES_MEMORY));
    mu_res_sub(&a, &b);
    mu_res_sub(&a, &b);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_CPU), 500);
    ck_assert_int_eq(mu_res_get(&a, 5), -2);
    ck_assert_uint_eq(a.set, (1u << MU_RES_CPU) | (1u << 5));
}
END_TEST

START_TEST(test_res_max_reads_absent_as_zero)
{
    struct mu_res a, b;

    mu_res_zero(&a);
    mu_res_zero(&b);
    mu_res_put(&a, MU_RES_CPU, 1000);
    mu_res_put(&a, MU_RES_MEMORY, 10);
    mu_res_put(&b, MU_RES_CPU, 2000);
    mu_res_put(&b, 4, -3);
    mu_res_put(&b, 3, 7);
    mu_res_max(&a, &b);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_CPU), 2000);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_MEMORY), 10);
    ck_assert_int_eq(mu_res_get(&a, 3), 7);
    ck_assert_int_eq(mu_res_get(&a, 4), 0);
    ck_assert(mu_res_has(&a, 4));
}
END_TEST

START_TEST(test_res_is_empty_ignores_pods)
{
    struct mu_res r;

    mu_res_zero(&r);
    ck_assert(mu_res_is_empty(&r));
    mu_res_put(&r, MU_RES_PODS, 1);
    mu_res_put(&r, MU_RES_CPU, 0);
    ck_assert(mu_res_is_empty(&r));
    mu_res_put(&r, 9, 1);
    ck_assert(!mu_res_is_empty(&r));
}
END_TEST

START_TEST(test_res_first_short_checks_requested_dims)
{
    struct mu_res req, have;

    mu_res_zero(&req);
    mu_res_zero(&have);
    mu_res_put(&req, MU_RES_CPU, 1000);
    mu_res_put(&req, MU_RES_PODS, 1);
    mu_res_put(&req, 3, 2);
    mu_res_put(&req, MU_RES_MEMORY, 0);
    mu_res_put(&have, MU_RES_CPU, 1000);
    /* gpu (3) absent from have: zero vs unlimited */
    ck_assert_int_eq(mu_res_first_short(&req, &have, false), 3);
    ck_assert_int_eq(mu_res_first_short(&req, &have, true), -1);
    mu_res_put(&have, 3, 1);
    ck_assert_int_eq(mu_res_first_short(&req, &have, true), 3);
    mu_res_put(&have, 3, 2);
    ck_assert_int_eq(mu_res_first_short(&req, &have, false), -1);
    mu_res_put(&have, MU_RES_CPU, 999);
    ck_assert_int_eq(mu_res_first_short(&req, &have, true), MU_RES_CPU);
    /* pods never count, and a request of 0 fits anything */
    mu_res_put(&have, MU_RES_CPU, 1000);
    mu_res_put(&have, MU_RES_PODS, 0);
    mu_res_put(&have, MU_RES_MEMORY, -5);
    ck_assert_int_eq(mu_res_first_short(&req, &have, false), -1);
}
END_TEST

START_TEST(test_res_format_sorts_names)
{
    struct mu_resnames names;
    struct mu_res r;
    struct mu_sb sb;
    int gpu, eph;

    mu_resnames_init(&names);
    gpu = mu_resnames_index(&names, "nvidia.com/gpu", true);
    eph = mu_resnames_index(&names, "ephemeral-storage", true);
    mu_res_zero(&r);
    mu_sb_init(&sb);
    mu_res_format(&r, &names, true, &sb);
    ck_assert_str_eq(sb.buf, "{}");
    mu_sb_release(&sb);

    mu_res_put(&r, gpu, 1);
    mu_res_put(&r, MU_RES_MEMORY, INT64_C(34359738368));
    mu_res_put(&r, MU_RES_CPU, 8000);
    mu_res_put(&r, eph, 0);
    mu_res_put(&r, MU_RES_PODS, 0);
    mu_sb_add(&sb, "x=");
    mu_res_format(&r, &names, false, &sb);
    ck_assert_str_eq(sb.buf, "x={cpu: 8, memory: 32Gi, nvidia.com/gpu: 1}");
    mu_sb_release(&sb);
    mu_res_format(&r, &names, true, &sb);
    ck_assert_str_eq(sb.buf, "{cpu: 8, ephemeral-storage: 0, memory: 32Gi, "
                             "nvidia.com/gpu: 1, pods: 0}");
    mu_sb_release(&sb);
    mu_resnames_release(&names);
}
END_TEST

/* ---- saturating sums ---------------------------------------------------- */

/* The largest quantities the API server accepts, as muster reads them. */
#define MEM_MAX "9223372036854775807"  /* memory: 2^63 - 1 bytes */
#define CPU_MAX "9223372036854775807m" /* cpu: 2^63 - 1 millicores */

START_TEST(test_add_sub_sat_clamp_at_the_bounds)
{
    ck_assert_int_eq(mu_add_sat(INT64_MAX, 1), INT64_MAX);
    ck_assert_int_eq(mu_add_sat(INT64_MAX, INT64_MAX), INT64_MAX);
    ck_assert_int_eq(mu_add_sat(INT64_MIN, -1), INT64_MIN);
    ck_assert_int_eq(mu_add_sat(INT64_MIN, INT64_MIN), INT64_MIN);
    ck_assert_int_eq(mu_add_sat(INT64_MAX, INT64_MIN), -1);
    ck_assert_int_eq(mu_add_sat(40, 2), 42);
    ck_assert_int_eq(mu_sub_sat(INT64_MIN, 1), INT64_MIN);
    ck_assert_int_eq(mu_sub_sat(INT64_MAX, -1), INT64_MAX);
    ck_assert_int_eq(mu_sub_sat(0, INT64_MIN), INT64_MAX);
    ck_assert_int_eq(mu_sub_sat(-1, INT64_MAX), INT64_MIN);
    ck_assert_int_eq(mu_sub_sat(-1, INT64_MIN), INT64_MAX);
    ck_assert_int_eq(mu_sub_sat(44, 2), 42);
}
END_TEST

/* Two pods of the largest memory the API server accepts: the sum stays at
 * INT64_MAX (a wrapping sum would read -2), and taking it back off
 * saturates at the other end instead of wrapping. */
START_TEST(test_res_add_saturates_with_accepted_quantities)
{
    struct mu_err err = {{0}};
    struct mu_res a, b, neg;
    int64_t mem, cpu;

    ck_assert_int_eq(mu_quantity_parse(MEM_MAX, MU_Q_BYTES, &mem, &err), 0);
    ck_assert_int_eq(mu_quantity_parse(CPU_MAX, MU_Q_MILLI, &cpu, &err), 0);
    ck_assert_int_eq(mem, INT64_MAX);
    ck_assert_int_eq(cpu, INT64_MAX);
    mu_res_zero(&a);
    mu_res_zero(&b);
    mu_res_put(&b, MU_RES_MEMORY, mem);
    mu_res_put(&b, MU_RES_CPU, cpu);
    mu_res_put(&b, MU_RES_PODS, 1);
    for (int i = 0; i < 3; i++)
        mu_res_add(&a, &b);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_MEMORY), INT64_MAX);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_CPU), INT64_MAX);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_PODS), 3);
    mu_res_zero(&neg);
    mu_res_put(&neg, MU_RES_MEMORY, -mem);
    mu_res_sub(&a, &neg);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_MEMORY), INT64_MAX);
    mu_res_zero(&a);
    for (int i = 0; i < 3; i++)
        mu_res_sub(&a, &b);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_MEMORY), -INT64_MAX - 1);
    ck_assert_int_eq(mu_res_get(&a, MU_RES_PODS), -3);
}
END_TEST

#define HUGE_NODE(name)                                                       \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                \
    "status: {allocatable: {cpu: '" CPU_MAX "', memory: '" MEM_MAX "', "      \
    "pods: '110'}}\n---\n"

#define HUGE_GANG(name, spec)                                                 \
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"                      \
    "metadata: {name: " name "}\nspec:\n  minAvailable: 2\n"                 \
    "  tasks:\n  - name: w\n    replicas: 2\n    template:\n      spec:\n"   \
    spec "        containers:\n        - name: c\n          resources:\n"    \
    "            requests: {cpu: '3000000000000000000m', memory: "            \
    "'3000000000000000000'}\n---\n"

/* Many nodes of the largest cpu and memory: the cycle's sums (free in the
 * cluster, node scores, the overcommit limit) saturate instead of
 * overflowing, a gang that fits binds, and one that matches no node says
 * the cluster has the most there is free (a wrapping sum would be
 * negative and left out). Run under -fsanitize=undefined (the asan
 * setup halts on the first signed overflow). */
START_TEST(test_cycle_with_huge_nodes_does_not_overflow)
{
    struct mu_cycle_out out = {0};
    struct mu_sim sim;
    struct mu_conf conf;
    const struct mu_job *fits = NULL, *big = NULL;

    mu_conf_default(&conf);
    mu_sim_init(&sim, &conf, stderr);
    ck_assert_int_eq(
        mu_sim_load_text(&sim, "huge.yaml",
                         HUGE_NODE("n1") HUGE_NODE("n2") HUGE_NODE("n3")
                             HUGE_NODE("n4") HUGE_GANG("fits", "")
                                 HUGE_GANG("big", "        nodeSelector: {zone: none}\n")),
        0);
    mu_sim_step(&sim);
    ck_assert_int_eq(sim.errors, 0);
    size_t binds = 0;

    for (int c = 0; c < 2; c++) {
        mu_cycle_out_release(&out);
        mu_cycle_run(&sim.cluster, &sim.conf, sim.now_ms, &out);
        for (size_t i = 0; i < out.nbinds; i++)
            binds += !strncmp(out.binds[i]->pod.meta.name, "fits", 4);
    }
    for (size_t i = 0; i < sim.cluster.njobs; i++) {
        const struct mu_job *j = sim.cluster.jobs[i];

        if (!strncmp(j->pg.meta.name, "fits", 4))
            fits = j;
        if (!strncmp(j->pg.meta.name, "big", 3))
            big = j;
    }
    ck_assert_ptr_nonnull(fits);
    ck_assert_ptr_nonnull(big);
    ck_assert_msg(binds == 2, "%zu binds; fits: %s", binds,
                  fits->cond.message ? fits->cond.message : "");
    ck_assert_ptr_nonnull(big->cond.message);
    ck_assert_msg(strstr(big->cond.message,
                         "free in the cluster {cpu: 9223372036854775807m, "
                         "memory: 9223372036854775807}") != NULL,
                  "%s", big->cond.message);
    mu_cycle_out_release(&out);
    mu_sim_release(&sim);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resource");
    TCase *tq = tcase_create("quantity");
    TCase *tv = tcase_create("vector");
    TCase *ts = tcase_create("saturate");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tq, test_quantity_parse_accepts_every_form, 0,
                        (int)MU_ARRAY_LEN(parse_ok));
    tcase_add_loop_test(tq, test_quantity_parse_rejects_and_keeps_out, 0,
                        (int)MU_ARRAY_LEN(parse_bad));
    tcase_add_test(tq, test_resource_unit_by_name);
    tcase_add_test(tq, test_accelerators_by_name);
    tcase_add_loop_test(tq, test_quantity_format_round_trips, 0,
                        (int)MU_ARRAY_LEN(fmt));
    tcase_add_test(tq, test_quantity_format_truncates_to_buffer);
    suite_add_tcase(s, tq);
    tcase_add_test(tv, test_resnames_registers_in_order);
    tcase_add_test(tv, test_res_add_sub_or_set_bits);
    tcase_add_test(tv, test_res_max_reads_absent_as_zero);
    tcase_add_test(tv, test_res_is_empty_ignores_pods);
    tcase_add_test(tv, test_res_first_short_checks_requested_dims);
    tcase_add_test(tv, test_res_format_sorts_names);
    suite_add_tcase(s, tv);
    tcase_add_test(ts, test_add_sub_sat_clamp_at_the_bounds);
    tcase_add_test(ts, test_res_add_saturates_with_accepted_quantities);
    tcase_add_test(ts, test_cycle_with_huge_nodes_does_not_overflow);
    suite_add_tcase(s, ts);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
