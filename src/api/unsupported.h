/*
 * unsupported.h - the status condition that says which fields of an object
 * muster does not act on (a PodGroup's mu_podgroup.unsupported, a Queue's
 * tree fields): {type: Unsupported, status: "True", reason: NotImplemented,
 * message: "muster does not act on <fields>: <then>", lastTransitionTime}.
 * Pure; each result is a new reference owned by the caller.
 */
#ifndef MU_API_UNSUPPORTED_H
#define MU_API_UNSUPPORTED_H

#include <jansson.h>

#include "api/object.h"

/* The condition for fields (", "-joined), then what muster does instead,
 * stamped ts (RFC 3339). */
json_t *mu_unsupported_cond(const char *fields, const char *then,
                            const char *ts);
/* The one of pg->unsupported ("the gang is scheduled as if ... not set"),
 * or NULL when nothing is unsupported. */
json_t *mu_podgroup_unsupported_cond(const struct mu_podgroup *pg,
                                     const char *ts);

#endif
