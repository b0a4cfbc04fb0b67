/* The DRA tests' cluster and how they fill it (test_dra.c, test_dra_counts.c):
 * classes, slices, nodes, templates, claims and pods made from JSON text
 * and put into the one cluster `c`, which setup() makes (a class "gpu" for
 * driver gpu.x with extendedResourceName nvidia.com/gpu; nodes n1, n2) and
 * teardown() releases. A decode that fails fails the test with its
 * message. Threads: the test's only. */
#ifndef MU_TEST_DRA_FIXTURE_H
#define MU_TEST_DRA_FIXTURE_H

#include <jansson.h>
#include <stdbool.h>

#include "sched/cluster.h"

extern struct mu_cluster c;

/* JSON from printf-style text (the caller owns it). */
json_t *js(const char *fmt, ...) MU_PRINTF(1, 2);
/* A DeviceClass with CEL selector text sel; ext its extendedResourceName
 * or NULL. */
void class_(const char *name, const char *sel, const char *ext);
/* A slice of n devices <name>-0.. with attribute model on node. */
void slice(const char *name, const char *node, const char *pool, int gen,
           int count, int n, const char *model);
void labelled_node(const char *name, const char *labels);
void node(const char *name);
void template_(const char *name, const char *requests);
/* A claim; status is "" or the JSON of its status. */
void claim(const char *name, const char *requests, const char *status);
/* A pod whose claims JSON is `claims` (spec.resourceClaims). */
struct mu_task *pod(const char *name, const char *claims, const char *status);
/* Whether t's devices fit node n now (checking, for a pod of one private
 * claim, that its claim alone answers the same, now and in the future). */
bool fits(const struct mu_task *t, const char *n);
/* Devices held on node n. */
int held_on(const char *n);
void setup(void);
void teardown(void);

#define ONE "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]"
/* one request of two devices of class gpu */
#define TWO                                                              \
    "[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\","     \
    "\"count\":2}}]"
/* one request of every device of class gpu on its node */
#define ALL_REQ                                                          \
    "[{\"name\":\"g\",\"exactly\":{\"deviceClassName\":\"gpu\","       \
    "\"allocationMode\":\"All\"}}]"
#define TMPL(t) "[{\"name\":\"gpu\",\"resourceClaimTemplateName\":\"" t "\"}]"

#endif
