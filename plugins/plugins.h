/*
 * plugins.h - muster's scheduling plugins, each a const struct mu_plugin
 * (framework.h) reproducing the Volcano plugin of the same name
 * (volcano-api.md §8). The registry mu_plugins[] lists them all, in the
 * order of plugin_list.h.
 *
 * Per-cycle state: a plugin's open() builds it from the session's cluster
 * and arguments; close() frees it. proportion also writes the queues' cycle
 * scratch (has_deserved, deserved, real_capability, inqueue) at open, which
 * overcommit reads, so proportion must be listed when those are wanted.
 */
#ifndef MU_PLUGINS_H
#define MU_PLUGINS_H

#include "plugin_list.h"
#include "sched/framework.h"

/* extern const struct mu_plugin mu_plugin_<name>; for each plugin */
#define X(name) extern const struct mu_plugin mu_plugin_##name;
MU_PLUGIN_LIST(X)
#undef X

/* The close hook of a plugin whose state is one block from mu_x*alloc (or
 * NULL): frees it. */
void mu_plugin_close_free(struct mu_ssn *ssn, void *st);

#endif
