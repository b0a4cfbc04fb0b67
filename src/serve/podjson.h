/*
 * podjson.h - the pod JSON muster writes: the patches that release a gang
 * member (ungate and pin a gated pod, wake another operator's), the
 * annotations every release leaves on its members, and the pod made again
 * from a bare one pinned to a node that cannot run it. Pure functions:
 * every result is a new object the caller owns; nothing is sent here
 * (serve/enforce.c and serve/remake.c send them through the writer).
 */
#ifndef MU_SERVE_PODJSON_H
#define MU_SERVE_PODJSON_H

#include <jansson.h>
#include <stdbool.h>

/* The value new at every wake-up (mu_serve_wake_patch). */
#define MU_ANN_WAKE "muster.io/wake"

/* The JSON patch (RFC 6902) that releases a gated pod to node: drops
 * muster's gate (keeping others) and adds a required node affinity term on
 * metadata.name, whatever affinity the pod already has. */
json_t *mu_serve_release_patch(const json_t *pod, const char *node);
/* The strategic merge patch that does the same without reading the pod,
 * for a gated pod with no required node affinity term; uid (may be NULL)
 * is sent as a precondition. */
json_t *mu_serve_release_smp(const char *uid, const char *node);
/*
 * The wake-up of a reserved pod that muster did not gate (other operators'
 * pods carrying the group annotation): a merge patch for pods/<name>/status
 * that sets status.nominatedNodeName to node, so kube-scheduler tries that
 * one node first (PreferNominatedNode) instead of a sample of all, and the
 * annotations muster.io/reserved-node (node) and muster.io/wake (wake, a
 * value new at every wake-up), because kube-scheduler requeues a rejected
 * pod on a change of its metadata or spec, never of its status alone.
 * pods/status accepts metadata changes. uid (may be NULL) is sent as a
 * precondition. Binding clears the nomination (kube-apiserver v1.35,
 * ClearingNominatedNodeNameAfterBinding); a failed attempt makes
 * kube-scheduler clear it too.
 */
json_t *mu_serve_wake_patch(const char *uid, const char *node,
                            const char *wake);
/*
 * What a release writes on each member, in the same request as the
 * release itself, so that another process can finish or undo it from the
 * API alone (a new leader, mu_enforcer_adopt): MU_ANN_RELEASE (the batch
 * id), MU_ANN_RELEASE_SIZE (its members), MU_ANN_RESERVED (the node), and
 * MU_ANN_PINNED ("true") when the pod was ungated and pinned by muster
 * (deleting it is muster's way to undo; a woken pod is never deleted).
 * mu_serve_release_annotate adds them to a merge patch (strategic or
 * JSON merge) as metadata.annotations; the JSON patch of a pod read first
 * gets the same as "add" ops.
 */
#define MU_ANN_RELEASE "muster.io/release"
#define MU_ANN_RELEASE_SIZE "muster.io/release-size"
#define MU_ANN_RESERVED "muster.io/reserved-node"
#define MU_ANN_PINNED "muster.io/release-pinned"
void mu_serve_release_annotate(json_t *patch, const char *release, int batch,
                               const char *node, bool pinned);

/* The pod to create again from pod as read (a new object): its name,
 * namespace, labels and annotations (muster's release ones dropped, and
 * muster.io/made-again-from set to its uid), its spec without nodeName and
 * without the required node affinity matchField on metadata.name In [node]
 * (a term left empty goes, and so do emptied parents), with muster's gate
 * added. */
json_t *mu_serve_remade_pod(const json_t *pod, const char *node);

#endif
