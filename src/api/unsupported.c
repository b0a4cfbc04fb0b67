/* unsupported.c - the Unsupported status condition (unsupported.h). */
#include "api/unsupported.h"

#include <stdlib.h>
#include <string.h>

#include "api/json.h"

json_t *mu_unsupported_cond(const char *fields, const char *then,
                            const char *ts)
{
    char *msg = mu_xasprintf("muster does not act on %s: %s", fields, then);
    json_t *c = mu_json_must(json_pack(
        "{s:s,s:s,s:s,s:s,s:s}", "type", "Unsupported", "status", "True",
        "reason", "NotImplemented", "message", msg, "lastTransitionTime", ts));

    free(msg);
    return c;
}

json_t *mu_podgroup_unsupported_cond(const struct mu_podgroup *pg,
                                     const char *ts)
{
    if (!pg->unsupported)
        return NULL;
    return mu_unsupported_cond(pg->unsupported,
                               strchr(pg->unsupported, ',')
                                   ? "the gang is scheduled as if they were "
                                     "not set"
                                   : "the gang is scheduled as if it were not "
                                     "set",
                               ts);
}
