/*
 * plugins.h - muster's scheduling plugins, each a const struct mu_plugin
 * (framework.h) reproducing the Volcano plugin of the same name
 * (volcano-api.md §8). The registry mu_plugins[] lists them all.
 *
 * Per-cycle state: a plugin's open() builds it from the session's cluster
 * and arguments; close() frees it. proportion also writes the queues' cycle
 * scratch (has_deserved, deserved, real_capability, inqueue) at open, which
 * overcommit reads, so proportion must be listed when those are wanted.
 */
#ifndef MU_PLUGINS_H
#define MU_PLUGINS_H

#include "sched/framework.h"

extern const struct mu_plugin mu_plugin_priority;
extern const struct mu_plugin mu_plugin_gang;
extern const struct mu_plugin mu_plugin_conformance;
extern const struct mu_plugin mu_plugin_overcommit;
extern const struct mu_plugin mu_plugin_drf;
extern const struct mu_plugin mu_plugin_predicates;
extern const struct mu_plugin mu_plugin_proportion;
extern const struct mu_plugin mu_plugin_nodeorder;
extern const struct mu_plugin mu_plugin_binpack;

#endif
