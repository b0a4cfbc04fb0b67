/* plugins.c - the plugin registry. */
#include "plugins.h"

const struct mu_plugin *const mu_plugins[] = {
#define X(name) &mu_plugin_##name,
    MU_PLUGIN_LIST(X)
#undef X
    NULL,
};

void mu_plugin_close_free(struct mu_ssn *ssn, void *st)
{
    (void)ssn;
    free(st);
}

const struct mu_plugin *mu_plugin_find(const char *name)
{
    for (const struct mu_plugin *const *p = mu_plugins; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}
