/*
 * hypernode.h - Volcano's HyperNode (topology.volcano.sh/v1alpha1), decoded:
 * one network domain (an NVLink clique, a rack, a zone) at a tier, whose
 * members are nodes or other HyperNodes, chosen by exact name, by regular
 * expression over names, or by labels.
 *
 *   spec.tier       integer >= 0, required (lower tiers are nearer)
 *   spec.tierName   optional name of the tier (networkTopology's
 *                   highestTierName refers to it)
 *   spec.members[]  {type: Node|HyperNode, selector: {exactMatch: {name} |
 *                    regexMatch: {pattern} | labelMatch: LabelSelector}},
 *                   exactly one selector each, at least one member
 *
 * Regular expressions are compiled here as POSIX extended expressions
 * (regcomp REG_EXTENDED|REG_NOSUB), searched anywhere in the name as Go's
 * regexp.MatchString does; Volcano's Go (RE2) syntax beyond ERE (\d, (?i),
 * lazy quantifiers) is refused with the pattern named, never matched
 * differently in silence.
 *
 * Ownership: struct mu_hypernode owns everything in it, the compiled
 * expressions included; mu_hypernode_release frees. Decoding errors are
 * -EINVAL with the field path ("spec.members[1].selector.regexMatch.pattern:
 * ..."), *out released. Pure, no threads of its own.
 */
#ifndef MU_API_HYPERNODE_H
#define MU_API_HYPERNODE_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>

#include "api/object.h"

/* Most members one HyperNode may list. */
#define MU_HN_MAX_MEMBERS 4096

enum mu_hn_how { MU_HN_EXACT, MU_HN_REGEX, MU_HN_LABELS };

struct mu_hn_member {
    bool hypernode;         /* type HyperNode, else Node */
    enum mu_hn_how how;
    char *text;             /* the name or the pattern */
    regex_t re;             /* MU_HN_REGEX: compiled */
    struct mu_selterm sel;  /* MU_HN_LABELS */
};

struct mu_hypernode {
    struct mu_meta meta;    /* cluster-scoped: meta.ns is NULL */
    int tier;
    char *tier_name;        /* or NULL */
    size_t nmembers;
    struct mu_hn_member *members;
    int64_t status_count;   /* status.nodeCount, -1 when absent */
};

int mu_hypernode_decode(const json_t *j, struct mu_hypernode *out,
                        struct mu_err *err);
void mu_hypernode_release(struct mu_hypernode *h);

/* Does member m select an object of this name and labels? */
bool mu_hn_member_matches(const struct mu_hn_member *m, const char *name,
                          const struct mu_kvs *labels);

#endif
