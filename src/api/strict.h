/*
 * strict.h - what `kubectl --validate=strict` and the API server would say
 * of an object muster simulate reads, before anything decodes it:
 *
 *   unknown fields   every mapping key of the object that its kind does not
 *                    have, by path: unknown field "spec.tasks[0].replica"
 *                    (the fields of apiVersion, kind, metadata, the Pod
 *                    spec, its containers and their resources, Node status,
 *                    Queue, PodGroup and Job (batch.volcano.sh) specs,
 *                    their tasks and policies, PriorityClass; maps of
 *                    names such as labels, annotations, limits, requests,
 *                    capability and plugins take any key; status, volumes,
 *                    affinity and probes are not looked into);
 *   invalid values   what the API server refuses in a Pod's containers
 *                    (or a Job's task templates), with its message: a
 *                    request above its limit ("must be less than or equal
 *                    to cpu limit of 1"), an extended resource (a name with
 *                    a domain, e.g. nvidia.com/gpu) that is not a whole
 *                    number ("must be an integer") or whose request is not
 *                    its limit ("must be equal to nvidia.com/gpu limit of
 *                    2"), and an unparsable quantity.
 *
 * Each finding goes to the callback with the line of the field (from the
 * YAML document, mu_yaml_path_line; the document's line when not known)
 * and whether it is an invalid value (the API server refuses the object)
 * or an unknown field (a warning, an error with --strict).
 *
 * Threads: pure; any thread. Ownership: borrows everything; the message
 * is valid during the call only.
 */
#ifndef MU_API_STRICT_H
#define MU_API_STRICT_H

#include <jansson.h>
#include <stdbool.h>

#include "api/yaml.h"

/* Most findings reported for one object (the rest are counted in one last
 * message). */
#define MU_STRICT_MAX_FINDINGS 50

typedef void (*mu_strict_fn)(void *ctx, int line, bool invalid,
                             const char *msg);

/* Checks obj (a document of d, or an item of a List in it) of the given
 * kind ("Pod", "Node", "Queue", "PodGroup", "Job", "PriorityClass", or
 * another, of which only apiVersion, kind and metadata are checked).
 * Returns the number of invalid values found. */
int mu_strict_check(const char *kind, const json_t *obj,
                    const struct mu_yaml_doc *d, mu_strict_fn fn, void *ctx);

#endif
