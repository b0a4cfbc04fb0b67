#include "api/implicit.h"

char *mu_implicit_group_name(const struct mu_pod *p)
{
    return mu_xasprintf("podgroup-%s",
                        p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid);
}

const char *mu_implicit_owner_plural(const struct mu_pod *p)
{
    static const struct {
        const char *kind, *plural;
    } kinds[] = {{"ReplicaSet", "replicasets"},
                 {"StatefulSet", "statefulsets"},
                 {"Deployment", "deployments"}};

    if (!p->meta.owner_kind || !p->meta.owner_name)
        return NULL;
    for (size_t i = 0; i < MU_ARRAY_LEN(kinds); i++)
        if (!strcmp(p->meta.owner_kind, kinds[i].kind))
            return kinds[i].plural;
    return NULL;
}

/* minMember from the owner's annotations; the volcano.sh/ ones go to ann. */
static long owner_min_member(const struct mu_pod *p, const json_t *owner_ann,
                             json_t *ann, struct mu_err *warn)
{
    const char *k;
    json_t *v;
    long min = 1;

    json_object_foreach((json_t *)owner_ann, k, v) {
        if (!strcmp(k, MU_ANN_GROUP_MIN_MEMBER) && json_is_string(v)) {
            char *end;
            long m = strtol(json_string_value(v), &end, 10);

            if (*end || end == json_string_value(v) || m < 1 || m > 1000000)
                mu_err_set(warn, -EINVAL,
                           "pod %s/%s: owner annotation %s=\"%s\" is not a "
                           "positive integer; using 1",
                           p->meta.ns, p->meta.name, k, json_string_value(v));
            else
                min = m;
        } else if (!strncmp(k, "volcano.sh/", 11)) {
            json_object_set(ann, k, v);
        }
    }
    return min;
}

json_t *mu_implicit_podgroup(const struct mu_pod *p, const json_t *owner_ann,
                             const struct mu_resnames *rn, struct mu_err *warn)
{
    const char *q = mu_kvs_get(&p->meta.annotations, MU_ANN_QUEUE_NAME);
    json_t *minres = json_object(), *ann = json_object(), *pg;
    char *name = mu_implicit_group_name(p);
    long min;

    if (warn)
        warn->msg[0] = '\0';
    min = owner_min_member(p, owner_ann, ann, warn);
    for (int d = 0; d < rn->n; d++) {
        char buf[64];

        if (p->req.v[d] > 0)
            json_object_set_new(
                minres, rn->name[d],
                json_string(mu_quantity_format(rn->name[d], p->req.v[d] * min,
                                               buf, sizeof(buf))));
    }
    pg = json_pack("{s:s,s:s,s:{s:s,s:s,s:o},s:{s:I,s:s,s:o},s:{s:s}}",
                   "apiVersion", "scheduling.volcano.sh/v1beta1", "kind",
                   "PodGroup", "metadata", "name", name, "namespace",
                   p->meta.ns, "annotations", ann, "spec", "minMember",
                   (json_int_t)min, "queue", q ? q : "default", "minResources",
                   minres, "status", "phase", "Pending");
    free(name);
    if (p->priority_class)
        json_object_set_new(json_object_get(pg, "spec"), "priorityClassName",
                            json_string(p->priority_class));
    json_object_set_new(
        json_object_get(pg, "metadata"), "ownerReferences",
        json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion",
                  p->meta.owner_kind ? "apps/v1" : "v1", "kind",
                  p->meta.owner_kind ? p->meta.owner_kind : "Pod", "name",
                  p->meta.owner_name ? p->meta.owner_name : p->meta.name,
                  "uid", p->meta.owner_uid ? p->meta.owner_uid : p->meta.uid));
    return pg;
}

json_t *mu_default_queue(void)
{
    return json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:b}}", "apiVersion",
                     "scheduling.volcano.sh/v1beta1", "kind", "Queue",
                     "metadata", "name", "default", "spec", "weight", 1,
                     "reclaimable", 1);
}
