#include "api/hypernode.h"

#include "api/json.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static const char *const member_types[] = {"Node", "HyperNode"};

void mu_hypernode_release(struct mu_hypernode *h)
{
    for (size_t i = 0; i < h->nmembers; i++) {
        struct mu_hn_member *m = &h->members[i];

        if (m->how == MU_HN_REGEX && m->text)
            regfree(&m->re);
        if (m->how == MU_HN_LABELS)
            mu_labelsel_release(&m->sel);
        free(m->text);
    }
    free(h->members);
    mu_meta_release(&h->meta);
    free(h->tier_name);
    memset(h, 0, sizeof(*h));
}

/* RE2 spellings POSIX ERE reads differently or not at all. */
static bool re2_only(const char *pat)
{
    static const char *const bad[] = {
        "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B", "\\A",
        "\\z", "\\x", "\\p", "\\P", "\\Q", "\\E", "\\t", "\\n", "\\r",
        "\\f", "\\v", "\\a", "\\C", "(?",  "*?",  "+?",  "??",  "}?"};

    for (size_t i = 0; i < MU_ARRAY_LEN(bad); i++)
        if (strstr(pat, bad[i]))
            return true;
    return false;
}

static int regex_member(const json_t *rm, const char *p,
                        struct mu_hn_member *m, struct mu_err *err)
{
    char q[MU_JSON_PATH_LEN];
    int rc = mu_json_member_dup(rm, p, "pattern", &m->text, err);

    mu_json_path(q, p, "pattern");
    if (!rc && !m->text)
        return mu_err_set(err, -EINVAL, "%s: required", q);
    if (rc)
        return rc;
    if (re2_only(m->text) || regcomp(&m->re, m->text, REG_EXTENDED |
                                                          REG_NOSUB) != 0) {
        rc = mu_err_set(err, -EINVAL,
                        "%s: \"%s\" is not a regular expression muster "
                        "reads (POSIX extended; write \\d as [0-9])",
                        q, m->text);
        free(m->text);
        m->text = NULL;
        return rc;
    }
    return 0;
}

static int member_decode(const json_t *el, const char *p,
                         struct mu_hn_member *m, struct mu_err *err)
{
    const json_t *sel, *em, *rm, *lm;
    char sp[MU_JSON_PATH_LEN], q[MU_JSON_PATH_LEN];
    int type = -1, rc;

    if (!json_is_object(el))
        return mu_json_want(err, p, "an object", el);
    rc = mu_json_member_enum(el, p, "type", member_types,
                             MU_ARRAY_LEN(member_types), &type, err);
    if (!rc && type < 0)
        rc = mu_err_set(err, -EINVAL, "%s.type: required", p);
    if (!rc)
        rc = mu_json_member(el, p, "selector", JSON_OBJECT, &sel, err);
    if (!rc && !sel)
        rc = mu_err_set(err, -EINVAL, "%s.selector: required", p);
    if (rc)
        return rc;
    m->hypernode = type == 1;
    mu_json_path(sp, p, "selector");
    rc = mu_json_member(sel, sp, "exactMatch", JSON_OBJECT, &em, err);
    if (!rc)
        rc = mu_json_member(sel, sp, "regexMatch", JSON_OBJECT, &rm, err);
    if (!rc)
        rc = mu_json_member(sel, sp, "labelMatch", JSON_OBJECT, &lm, err);
    if (rc)
        return rc;
    if ((em != NULL) + (rm != NULL) + (lm != NULL) != 1)
        return mu_err_set(err, -EINVAL,
                          "%s: exactly one of exactMatch, regexMatch and "
                          "labelMatch must be set", sp);
    if (em) {
        m->how = MU_HN_EXACT;
        rc = mu_json_member_dup(em, mu_json_path(q, sp, "exactMatch"), "name",
                                &m->text, err);
        if (!rc && !m->text)
            rc = mu_err_set(err, -EINVAL, "%s.name: required", q);
        return rc;
    }
    if (rm) {
        m->how = MU_HN_REGEX;
        return regex_member(rm, mu_json_path(q, sp, "regexMatch"), m, err);
    }
    m->how = MU_HN_LABELS;
    return mu_labelsel_decode(lm, mu_json_path(q, sp, "labelMatch"), &m->sel,
                              err);
}

int mu_hypernode_decode(const json_t *j, struct mu_hypernode *out,
                        struct mu_err *err)
{
    const json_t *spec, *status, *members, *el;
    char p[MU_JSON_PATH_LEN];
    int64_t tier = 0;
    size_t i;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = mu_object_head(j, false, &out->meta, &spec, &status, err);
    if (rc)
        goto fail;
    if (!spec) {
        rc = mu_err_set(err, -EINVAL, "spec: required");
        goto fail;
    }
    rc = mu_json_member_int(spec, "spec", "tier", 0, 1000000, &tier, err);
    if (rc == 0)
        rc = mu_err_set(err, -EINVAL, "spec.tier: required");
    if (rc < 0)
        goto fail;
    out->tier = (int)tier;
    out->status_count = -1;
    rc = mu_json_member_int(status, "status", "nodeCount", 0, INT64_MAX,
                            &out->status_count, err);
    if (rc < 0)
        goto fail;
    rc = mu_json_member_dup(spec, "spec", "tierName", &out->tier_name, err);
    if (!rc)
        rc = mu_json_member(spec, "spec", "members", JSON_ARRAY, &members,
                            err);
    if (rc)
        goto fail;
    if (!json_array_size(members)) {
        rc = mu_err_set(err, -EINVAL, "spec.members: at least one member "
                                      "is required");
        goto fail;
    }
    if (json_array_size(members) > MU_HN_MAX_MEMBERS) {
        rc = mu_err_set(err, -EINVAL, "spec.members: more than %d members",
                        MU_HN_MAX_MEMBERS);
        goto fail;
    }
    out->members = mu_xcalloc(json_array_size(members),
                              sizeof(*out->members));
    json_array_foreach(members, i, el) {
        struct mu_hn_member *m = &out->members[out->nmembers++];

        rc = member_decode(el, mu_json_path_at(p, "spec", "members", i), m,
                           err);
        if (rc)
            goto fail;
    }
    return 0;
fail:
    mu_hypernode_release(out);
    return rc < 0 ? rc : -EINVAL;
}

bool mu_hn_member_matches(const struct mu_hn_member *m, const char *name,
                          const struct mu_kvs *labels)
{
    switch (m->how) {
    case MU_HN_EXACT:
        return strcmp(m->text, name) == 0;
    case MU_HN_REGEX:
        return regexec(&m->re, name, 0, NULL, 0) == 0;
    case MU_HN_LABELS:
        return mu_labelsel_matches(&m->sel, labels);
    }
    return false;
}
