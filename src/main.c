/*
 * muster - gang-scheduling batch scheduler for Kubernetes GPU clusters.
 */
#include "cli/inspect.h"
#include "common/mu.h"
#include "sched/conf.h"
#include "serve/serve.h"
#include "sim/sim.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>

#ifndef MU_VERSION
#define MU_VERSION "0.1.0"
#endif

static const char usage[] =
    "usage: muster serve [--kubeconfig PATH] [--listen HOST:PORT] "
    "[--metrics-listen HOST:PORT]\n"
    "                    [--gang-bind release|first|all]\n"
    "                    [--initial-list watch|pages]\n"
    "                    [--kube-api-content-type "
    "application/vnd.kubernetes.protobuf|application/json]\n"
    "                    [--config FILE] [--tls-cert-file F "
    "--tls-private-key-file F\n"
    "                    --client-ca-file F]\n"
    "       muster simulate [-o table|json|yaml] [--config FILE] "
    "[--until DURATION] [--quiet] [--strict] FILE|DIR...\n"
    "       muster get queues|gangs [-n NS | -A] [-o table|json|yaml]\n"
    "       muster explain podgroup/NAME|vcjob/NAME [-n NS] "
    "[-o table|json|yaml]\n"
    "       muster version | --version\n"
    "\n"
    "serve     watches the cluster, runs the scheduling cycle, releases\n"
    "          whole gangs and answers kube-scheduler as its extender on\n"
    "          /filter /prioritize /bind /preempt /healthz /readyz /metrics,\n"
    "          and /debug/queues /debug/gangs /debug/gang/NS/NAME (JSON).\n"
    "  --kubeconfig PATH  default $KUBECONFIG, else the in-cluster account\n"
    "  --listen HOST:PORT default 127.0.0.1:8888\n"
    "  --config FILE      scheduler configuration (volcano-scheduler.conf)\n"
    "  --period DURATION  cycle tick (default 1s)\n"
    "  --gang-bind release|first|all  a gang whose pods need nothing of\n"
    "                     kube-scheduler but their node: release (default)\n"
    "                     muster binds it when it releases it (its own\n"
    "                     gated pods once ungated); first: bound whole when\n"
    "                     its first member reaches /bind; all: each member\n"
    "                     waits there for the others\n"
    "  --initial-list watch|pages  how each cache takes the cluster at\n"
    "                     start: one WATCH with sendInitialEvents (default;\n"
    "                     a server without it is listed in pages), or LIST\n"
    "                     pages of 500\n"
    "  --kube-api-content-type T  how the pods are watched:\n"
    "                     application/vnd.kubernetes.protobuf (default, as\n"
    "                     kube-scheduler) or application/json\n"
    "  --leader-elect     only the holder of a coordination.k8s.io Lease\n"
    "                     writes; the others are followers (warm caches,\n"
    "                     /readyz and /bind 503), kube-scheduler's flags:\n"
    "    --leader-elect-lease-duration D   (15s)\n"
    "    --leader-elect-renew-deadline D   (10s)\n"
    "    --leader-elect-retry-period D     (2s)\n"
    "    --leader-elect-resource-namespace NS (muster-system)\n"
    "    --leader-elect-resource-name NAME (muster)\n"
    "    --leader-elect-identity ID        (hostname_pid)\n"
    "  --metrics-listen HOST:PORT  /healthz /readyz /metrics there (plain\n"
    "                     HTTP), not on --listen\n"
    "  --tls-cert-file F, --tls-private-key-file F, --client-ca-file F\n"
    "                     HTTPS on --listen; a client needs a certificate\n"
    "                     the CA signed. The files are re-read when they\n"
    "                     change. Without them --listen must be loopback.\n"
    "\n";
static const char usage_more[] =
    "simulate  runs muster's scheduling cycle on the Nodes, Queues,\n"
    "          PriorityClasses, PodGroups, Pods and vcjobs in FILE... in\n"
    "          simulated time and prints a timeline and the final state\n"
    "          (\"-\" reads standard input; a directory, its *.yaml,\n"
    "          *.yml and *.json files in name order).\n"
    "  -o FORMAT         table (default), json or yaml (a Kubernetes List)\n"
    "  --config FILE     scheduler configuration in volcano-scheduler.conf\n"
    "                    format (default: built in; see --print-config)\n"
    "  --print-config    print the built-in configuration and exit\n"
    "  --quiet, -q       no timeline: only the final state\n"
    "  --strict          an unknown field refuses its object (as kubectl\n"
    "                    --validate=strict); without it, a warning with its\n"
    "                    line. Values the API server refuses (a request\n"
    "                    above its limit, a fractional or unequal GPU\n"
    "                    request, an unknown priorityClassName) always are\n"
    "  --until DURATION  stop simulated time there (default 24h)\n"
    "\n"
    "get, explain  what a live muster says of its queues and gangs, and why\n"
    "          a gang waits (muster get --help, muster explain --help); as\n"
    "          kubectl-muster on the PATH, also `kubectl muster ...`.\n";

/* The usage text (two strings: C11 promises 4095 bytes a literal). */
static void put_usage(FILE *f)
{
    fputs(usage, f);
    fputs(usage_more, f);
}

static int cmd_simulate(int argc, char **argv)
{
    const char *format = "table", *conf_path = NULL;
    int64_t until = MU_SIM_DEFAULT_UNTIL_MS;
    struct mu_conf conf;
    struct mu_sim sim;
    struct mu_err err;
    int nfiles = 0, rc;
    bool quiet = false, strict = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(a, "--config") && i + 1 < argc) {
            conf_path = argv[++i];
        } else if (!strcmp(a, "--until") && i + 1 < argc) {
            if (mu_duration_parse(argv[++i], &until, &err) < 0) {
                fprintf(stderr, "muster: --until: %s\n", err.msg);
                return 2;
            }
            if (until < 0) {
                fprintf(stderr, "muster: --until: \"%s\": simulated time "
                                "starts at 0; want a duration of 0 or more\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--print-config")) {
            fputs(mu_conf_default_text, stdout);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            put_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "muster: unknown option %s\n", a);
            put_usage(stderr);
            return 2;
        } else {
            nfiles++;
        }
    }
    if (strcmp(format, "table") && strcmp(format, "json") &&
        strcmp(format, "yaml")) {
        fprintf(stderr, "muster: -o: unknown format \"%s\" (table, json or "
                        "yaml)\n", format);
        return 2;
    }
    if (!nfiles) {
        fprintf(stderr, "muster: simulate needs at least one FILE\n");
        put_usage(stderr);
        return 2;
    }
    if (conf_path) {
        if (mu_conf_load_file(conf_path, &conf, &err) < 0) {
            fprintf(stderr, "muster: %s\n", err.msg);
            return 2;
        }
    } else {
        mu_conf_default(&conf);
    }
    for (size_t i = 0; i < conf.nwarnings; i++)
        fprintf(stderr, "muster: warning: %s\n", conf.warnings[i]);
    mu_sim_init(&sim, &conf, stderr);
    sim.until_ms = until;
    sim.quiet = quiet;
    sim.strict = strict;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
            !strcmp(a, "--config") || !strcmp(a, "--until")) {
            i++;
            continue;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet") ||
            !strcmp(a, "--strict"))
            continue;
        mu_sim_load(&sim, a);
    }
    mu_sim_run(&sim);
    if (!strcmp(format, "json"))
        mu_sim_print_json(&sim, stdout);
    else if (!strcmp(format, "yaml"))
        mu_sim_print_yaml(&sim, stdout);
    else
        mu_sim_print_table(&sim, stdout);
    rc = sim.errors ? 1 : 0;
    mu_sim_release(&sim);
    return rc;
}

static atomic_bool stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_flag, true);
}

/* One --leader-elect-* flag with its value: 0, or 2 (said why). */
static int leader_flag(struct mu_serve_opts *o, const char *a, const char *v)
{
    int64_t *d = NULL;
    struct mu_err err;

    if (!strcmp(a, "--leader-elect-lease-duration"))
        d = &o->lease_ms;
    else if (!strcmp(a, "--leader-elect-renew-deadline"))
        d = &o->renew_ms;
    else if (!strcmp(a, "--leader-elect-retry-period"))
        d = &o->retry_ms;
    else if (!strcmp(a, "--leader-elect-resource-namespace"))
        o->lease_ns = v;
    else if (!strcmp(a, "--leader-elect-resource-name"))
        o->lease_name = v;
    else if (!strcmp(a, "--leader-elect-identity"))
        o->lease_identity = v;
    else {
        fprintf(stderr, "muster: serve: unknown option %s\n", a);
        put_usage(stderr);
        return 2;
    }
    if (d && mu_duration_parse(v, d, &err) < 0) {
        fprintf(stderr, "muster: %s: %s\n", a, err.msg);
        return 2;
    }
    if (d && *d <= 0) {
        fprintf(stderr, "muster: %s: must be positive\n", a);
        return 2;
    }
    return 0;
}

/* --tls-cert-file, --tls-private-key-file, --client-ca-file and
 * --metrics-listen: true (and *i past its value) when argv[*i] is one. */
static bool serve_tls_flag(struct mu_serve_opts *o, char **argv, int *i,
                           int argc)
{
    static const char *const names[] = {"--tls-cert-file",
                                        "--tls-private-key-file",
                                        "--client-ca-file", "--metrics-listen"};
    const char **fields[] = {&o->tls_cert_file, &o->tls_key_file,
                             &o->client_ca_file, &o->metrics_listen};

    for (size_t k = 0; k < MU_ARRAY_LEN(names); k++)
        if (!strcmp(argv[*i], names[k]) && *i + 1 < argc) {
            *fields[k] = argv[++*i];
            return true;
        }
    return false;
}

/* A flag whose value is word a or word b: *is_b set, true; else said,
 * false. */
static bool one_of(const char *flag, const char *v, const char *a,
                   const char *b, bool *is_b)
{
    if (strcmp(v, a) && strcmp(v, b)) {
        fprintf(stderr, "muster: %s: \"%s\": want %s or %s\n", flag, v, a, b);
        return false;
    }
    *is_b = !strcmp(v, b);
    return true;
}

/* --gang-bind release|first|all; 0, or 1 after saying why. */
static int gang_bind_flag(const char *flag, const char *v,
                          enum mu_gang_bind *out)
{
    static const char *const names[] = {"release", "first", "all"};

    for (int i = 0; i < 3; i++)
        if (!strcmp(v, names[i])) {
            *out = (enum mu_gang_bind)i;
            return 0;
        }
    fprintf(stderr, "muster: %s: \"%s\": want release, first or all\n",
            flag, v);
    return 1;
}

static int cmd_serve(int argc, char **argv)
{
    struct mu_serve_opts o;
    struct mu_err err;
    struct sigaction sa;
    int r;

    mu_serve_opts_init(&o);
    o.stop = &stop_flag;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            put_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--kubeconfig") && i + 1 < argc) {
            o.kubeconfig = argv[++i];
        } else if (!strcmp(a, "--listen") && i + 1 < argc) {
            o.listen = argv[++i];
        } else if (!strcmp(a, "--config") && i + 1 < argc) {
            o.config_path = argv[++i];
        } else if (!strcmp(a, "--period") && i + 1 < argc) {
            if (mu_duration_parse(argv[++i], &o.period_ms, &err) < 0 ||
                o.period_ms <= 0) {
                fprintf(stderr, "muster: --period: %s\n",
                        o.period_ms <= 0 ? "must be positive" : err.msg);
                return 2;
            }
        } else if (!strcmp(a, "--gang-bind") && i + 1 < argc) {
            if (gang_bind_flag(a, argv[++i], &o.gang_bind))
                return 2;
        } else if (!strcmp(a, "--initial-list") && i + 1 < argc) {
            if (!one_of(a, argv[++i], "pages", "watch", &o.watch_list))
                return 2;
        } else if (!strcmp(a, "--kube-api-content-type") && i + 1 < argc) {
            if (!one_of(a, argv[++i], "application/json",
                        "application/vnd.kubernetes.protobuf", &o.protobuf))
                return 2;
        } else if (!strcmp(a, "--leader-elect")) {
            o.leader_elect = true;
        } else if (!strncmp(a, "--leader-elect-", 15) && i + 1 < argc) {
            int r2 = leader_flag(&o, a, argv[++i]);

            if (r2)
                return r2;
        } else if (serve_tls_flag(&o, argv, &i, argc)) {
            continue;
        } else {
            fprintf(stderr, "muster: serve: unknown option %s\n", a);
            put_usage(stderr);
            return 2;
        }
    }
    if ((o.tls_cert_file || o.tls_key_file || o.client_ca_file) &&
        !(o.tls_cert_file && o.tls_key_file && o.client_ca_file)) {
        fprintf(stderr, "muster: serve: --tls-cert-file, "
                        "--tls-private-key-file and --client-ca-file go "
                        "together\n");
        return 2;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    {
        /* every /bind held by the barrier keeps a connection open */
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    }
    r = mu_serve_run(&o, &err);
    if (r == -ENOLCK) { /* lost the Lease: restart as a follower */
        fprintf(stderr, "muster: serve: %s\n", err.msg);
        return 3;
    }
    if (r < 0) {
        fprintf(stderr, "muster: serve: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("muster %s\n", MU_VERSION);
        return 0;
    }
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        put_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version")) {
        printf("muster %s\n", MU_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "simulate"))
        return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "serve"))
        return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(argv[1], "get"))
        return mu_cli_get(argc - 1, argv + 1);
    if (!strcmp(argv[1], "explain"))
        return mu_cli_explain(argc - 1, argv + 1);
    fprintf(stderr, "muster: unknown command \"%s\"\n", argv[1]);
    put_usage(stderr);
    return 2;
}
