/*
 * inspect.h - `muster get queues|gangs` and `muster explain KIND/NAME`:
 * what a live muster says about its queues and gangs (sched/report.h),
 * read from `muster serve`'s /debug endpoints.
 *
 * Where the report comes from, first that answers:
 *   --muster-url URL   muster's metrics address itself (after `kubectl
 *                      port-forward -n muster-system svc/muster 8889:metrics`:
 *                      http://127.0.0.1:8889);
 *   otherwise          the API server's service proxy to --service
 *                      (default muster-system/muster:metrics), with the
 *                      kubeconfig's credentials;
 *   and when neither answers, the PodGroups' and Queues' own status
 *   (phase, the condition's message, counts), said so on stderr.
 *
 * Installed as `kubectl-muster` on the PATH, the same binary is kubectl's
 * plugin: `kubectl muster get gangs -A`.
 *
 * Output: -o table (default, one row per object, kubectl-like columns),
 * -o json (the report's JSON, pretty, keys in report order) or -o yaml (the
 * same data as YAML). Exit status: 0, 1 when nothing could be read or the
 * object is unknown (the message says which), 2 for a usage error.
 * Threads: the calling thread only; it waits on the network.
 */
#ifndef MU_CLI_INSPECT_H
#define MU_CLI_INSPECT_H

/* Default service for the API server's proxy: NAMESPACE/NAME:PORT. */
#define MU_CLI_SERVICE "muster-system/muster:metrics"
/* Seconds each request may take. */
#define MU_CLI_TIMEOUT_S 10
/* muster builds its report on demand and answers 503 "try again" until it
 * has a fresh one (after its next cycle): asked again this often, so many
 * times. */
#define MU_CLI_RETRY_MS 250
#define MU_CLI_RETRIES 20

/* argv[0] is "get" or "explain". */
int mu_cli_get(int argc, char **argv);
int mu_cli_explain(int argc, char **argv);

#endif
