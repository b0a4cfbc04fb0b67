/*
 * output.h - the state of a simulated cluster as `muster simulate` prints
 * it: a kubectl-style List of the Queues, PodGroups and Pods (JSON or
 * YAML), or tables (PodGroups, why each pending one waits, Queues) after
 * the timeline. Simulated time is shown as wall-clock time from
 * MU_SIM_EPOCH.
 *
 * Knows nothing of the simulator (sim.h uses it, not the other way):
 * every function reads a cluster it borrows and writes to `out`.
 * Deterministic: the same cluster gives the same bytes (resource names are
 * sorted, objects listed in the cluster's order).
 */
#ifndef MU_SIM_OUTPUT_H
#define MU_SIM_OUTPUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/cluster.h"

/* The wall-clock instant simulated time 0 is printed as
 * (2026-01-01T00:00:00Z). */
#define MU_SIM_EPOCH 1767225600LL

/* RFC 3339 text of simulated time ms (MU_SIM_EPOCH + ms/1000); buf holds
 * 48 bytes. */
void mu_sim_time_text(int64_t ms, char buf[48]);

/* The List of Queues, PodGroups (status, conditions; and status.startTime
 * once minMember pods started, status.waitSeconds from creation to then or
 * to now_ms), vcjobs (batch.volcano.sh Jobs: vcjobs is an array of
 * {"job": the defaulted Job, "podgroup": "ns/name"}, may be NULL; status
 * from their PodGroup) and Pods (status.startTime once started). */
void mu_sim_output_json(const struct mu_cluster *c, const json_t *vcjobs,
                        int64_t now_ms, FILE *out);
void mu_sim_output_yaml(const struct mu_cluster *c, const json_t *vcjobs,
                        int64_t now_ms, FILE *out);

/* timeline (may be NULL or ""), then the PodGroup, "Why pending" and Queue
 * tables. */
void mu_sim_output_table(const struct mu_cluster *c, const char *timeline,
                         FILE *out);

#endif
