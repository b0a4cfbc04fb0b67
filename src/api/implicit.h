/*
 * implicit.h - the objects muster makes that nobody asked for by name,
 * one rule each, used by `muster simulate` and `muster serve` alike so the
 * two always decide the same on the same objects.
 *
 * A lone pod's PodGroup (Volcano's podgroup controller, volcano-api.md
 * §3.6): a pod of a served schedulerName without a group annotation gets
 * PodGroup podgroup-<uid of its controlling owner>, or podgroup-<pod uid>
 * when it has none, so all pods of one ReplicaSet (one Deployment
 * revision) or StatefulSet share one PodGroup. minMember is 1, or the
 * owner's annotation scheduling.volcano.sh/group-min-member (a positive
 * integer; anything else is refused with a warning and 1 is used);
 * minResources is the pod's request times minMember; queue from the pod's
 * scheduling.volcano.sh/queue-name annotation, else "default"; the pod's
 * priorityClassName; the owner's volcano.sh/ annotations; an
 * ownerReference to the owner (or the pod).
 *
 * The default queue (Volcano's scheduler makes it when missing): Queue
 * "default", weight 1, reclaimable.
 *
 * Pure: no I/O, thread-safe. Returned objects are new references the
 * caller owns; strings are malloc'd.
 */
#ifndef MU_API_IMPLICIT_H
#define MU_API_IMPLICIT_H

#include <jansson.h>

#include "api/object.h"
#include "api/resource.h"
#include "common/mu.h"

/* The owner annotation that sets a lone pod's PodGroup's minMember. */
#define MU_ANN_GROUP_MIN_MEMBER "scheduling.volcano.sh/group-min-member"

/* The name of pod p's implicit PodGroup (see above). */
char *mu_implicit_group_name(const struct mu_pod *p);

/*
 * The resource plural ("replicasets", "statefulsets", "deployments") of
 * pod p's controlling owner when it is an apps/v1 workload whose
 * annotations count (see above), else NULL (no owner, or another kind: a
 * Job, a custom resource). Static string.
 */
const char *mu_implicit_owner_plural(const struct mu_pod *p);

/*
 * The PodGroup for pod p. owner_ann is the annotations object of p's
 * controlling owner (as mu_implicit_owner_plural names it), or NULL when
 * p has none or it could not be read. rn names p's request dimensions.
 * When an owner annotation is refused, *warn (may be NULL) gets one line
 * naming the pod, the annotation and its value; otherwise warn->msg is
 * left "". Never NULL.
 */
json_t *mu_implicit_podgroup(const struct mu_pod *p, const json_t *owner_ann,
                             const struct mu_resnames *rn, struct mu_err *warn);

/* The default Queue object (see above). Never NULL. */
json_t *mu_default_queue(void);

#endif
