/* plugins.c - the plugin registry. */
#include "plugins.h"

const struct mu_plugin *const mu_plugins[] = {
    &mu_plugin_priority,   &mu_plugin_gang,       &mu_plugin_conformance,
    &mu_plugin_overcommit, &mu_plugin_drf,        &mu_plugin_predicates,
    &mu_plugin_proportion, &mu_plugin_nodeorder,  &mu_plugin_binpack,
    NULL,
};

const struct mu_plugin *mu_plugin_find(const char *name)
{
    for (const struct mu_plugin *const *p = mu_plugins; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}
