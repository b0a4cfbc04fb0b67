/*
 * cluster_dra.h - DRA objects into the cluster: the inventory of devices.h
 * kept in step with the nodes and tasks of cluster.h.
 *
 * Each call moves the decoded object into the cluster's inventory (the
 * source is zeroed) and then brings the rest up to date: tasks whose
 * demand depends on what changed are resolved again (every task with
 * claims when a class, template or mapping changed; a claim's users when
 * the claim did), nodes whose devices changed get a new generation (so
 * placement's per-shape node index looks at them again) and their devices
 * by quota name are moved in and out of the cluster's total.
 *
 * Thread and ownership: as cluster.h.
 */
#ifndef MU_SCHED_CLUSTER_DRA_H
#define MU_SCHED_CLUSTER_DRA_H

#include "api/dra.h"
#include "sched/cluster.h"

void mu_cluster_put_slice(struct mu_cluster *c, struct mu_slice *s);
void mu_cluster_del_slice(struct mu_cluster *c, const char *name);
void mu_cluster_put_class(struct mu_cluster *c, struct mu_devclass *dc);
void mu_cluster_del_class(struct mu_cluster *c, const char *name);
void mu_cluster_put_claim(struct mu_cluster *c, struct mu_claim *cl);
void mu_cluster_del_claim(struct mu_cluster *c, const char *ns,
                          const char *name);
void mu_cluster_put_template(struct mu_cluster *c, struct mu_claimtemplate *t);
void mu_cluster_del_template(struct mu_cluster *c, const char *ns,
                             const char *name);
/* The config's deviceClassMappings (copied). */
void mu_cluster_set_devmaps(struct mu_cluster *c, const struct mu_devmap *m,
                            size_t n);

/* What the calls above end with; for callers that edit c->dev directly. */
void mu_cluster_dra_sync(struct mu_cluster *c);
/* What a cycle does first: the tasks whose quota counts an All request by
 * what the slices offer (MU_CLUSTER_SLICE_USERS) are resolved again, once
 * for any number of slice changes since the last call (a start streams
 * thousands of slices: resolving at each would cost slices x tasks). */
void mu_cluster_dra_settle(struct mu_cluster *c);

#endif
