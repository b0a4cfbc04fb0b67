/*
 * match.h - labels, taints, tolerations and required node affinity: their
 * C form, how they are read from an object's JSON, and the Kubernetes
 * rules that match them (k8s.io/apimachinery labels.Requirement.Matches,
 * the TaintToleration and NodeAffinity filters).
 *
 * Ownership: decoded lists own their strings; release them with the
 * matching _release(). The decoders read the fields named in their
 * comment, name the field at fault in err ("spec.tolerations[0].operator:
 * unsupported value ...", json.h wording) and return -EINVAL; what they
 * read before the fault stays in *out (counted in *n) for the caller's
 * release. Matching is pure and thread-safe.
 */
#ifndef MU_API_MATCH_H
#define MU_API_MATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/mu.h"

/* A sorted (by key) list of string pairs: labels, annotations, selectors. */
struct mu_kv {
    char *key;
    char *value;
};
struct mu_kvs {
    size_t n;
    struct mu_kv *v;
};
/* Value for key, or NULL. Binary search. */
const char *mu_kvs_get(const struct mu_kvs *kvs, const char *key);
void mu_kvs_release(struct mu_kvs *kvs);
/* Reads a JSON object of strings (labels, annotations, nodeSelector). A
 * non-string value is an error naming path.key. NULL/absent gives empty. */
int mu_kvs_decode(const json_t *j, const char *path, struct mu_kvs *out,
                  struct mu_err *err);

enum mu_taint_effect {
    MU_EFFECT_NONE = 0, /* toleration: matches every effect */
    MU_EFFECT_NO_SCHEDULE,
    MU_EFFECT_PREFER_NO_SCHEDULE,
    MU_EFFECT_NO_EXECUTE,
};

struct mu_taint {
    char *key;
    char *value; /* may be NULL */
    enum mu_taint_effect effect;
};

struct mu_toleration {
    char *key;   /* NULL/empty with op Exists = tolerate everything */
    bool exists; /* operator Exists (else Equal) */
    char *value;
    enum mu_taint_effect effect; /* NONE = all effects */
};
/* True when tol tolerates taint, per the Kubernetes rule. */
bool mu_toleration_matches(const struct mu_toleration *tol,
                           const struct mu_taint *taint);

/* A Node's spec.taints (spec may be NULL): key and effect required. */
int mu_taints_decode(const json_t *spec, size_t *n, struct mu_taint **out,
                     struct mu_err *err);
void mu_taints_release(struct mu_taint *t, size_t n);
/* A Pod's spec.tolerations (spec may be NULL). */
int mu_tolerations_decode(const json_t *spec, size_t *n,
                          struct mu_toleration **out, struct mu_err *err);
void mu_tolerations_release(struct mu_toleration *t, size_t n);

enum mu_selop {
    MU_SEL_IN,
    MU_SEL_NOT_IN,
    MU_SEL_EXISTS,
    MU_SEL_DOES_NOT_EXIST,
    MU_SEL_GT,
    MU_SEL_LT,
};

struct mu_selreq {
    char *key;
    enum mu_selop op;
    size_t nvalues;
    char **values;
};

/* One nodeSelectorTerm: every expression and field must match. */
struct mu_selterm {
    size_t nexpr;
    struct mu_selreq *expr;   /* matchExpressions, against labels */
    size_t nfields;
    struct mu_selreq *fields; /* matchFields; only metadata.name exists */
};

/* requiredDuringSchedulingIgnoredDuringExecution: terms are OR-ed. An empty
 * list (nterms == 0) means "no required affinity". */
struct mu_affinity {
    size_t nterms;
    struct mu_selterm *terms;
};
/* True when a node with these labels and name satisfies the affinity. */
bool mu_affinity_matches(const struct mu_affinity *a,
                         const struct mu_kvs *labels, const char *node_name);

/* A Pod's spec.affinity.nodeAffinity.requiredDuringScheduling...
 * (spec may be NULL); matchFields accepts only metadata.name. */
int mu_affinity_decode(const json_t *spec, struct mu_affinity *out,
                       struct mu_err *err);
/* A core/v1 NodeSelector object at path base (its nodeSelectorTerms, as
 * above). Beware: to the API a NodeSelector of no terms selects no node,
 * while mu_affinity_matches takes nterms == 0 as "no affinity". */
int mu_nodeselector_decode(const json_t *sel, const char *base,
                           struct mu_affinity *out, struct mu_err *err);
/* Frees the terms and empties a. */
void mu_affinity_release(struct mu_affinity *a);

/*
 * A metav1.LabelSelector at path (matchLabels, matchExpressions with In,
 * NotIn, Exists, DoesNotExist) as one term: matchLabels k: v becomes the
 * requirement k In [v]. Every requirement must match; an empty selector
 * matches every object, as in Kubernetes. On failure -EINVAL naming the
 * field, *out released.
 */
int mu_labelsel_decode(const json_t *sel, const char *path,
                       struct mu_selterm *out, struct mu_err *err);
bool mu_labelsel_matches(const struct mu_selterm *t,
                         const struct mu_kvs *labels);
void mu_labelsel_release(struct mu_selterm *t);

#endif
