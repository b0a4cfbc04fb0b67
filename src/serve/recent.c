/* recent.c - the ring of recent decisions (recent.h). */
#include "serve/recent.h"

#include <stdarg.h>
#include <string.h>

#include "api/times.h"

void mu_recent_init(struct mu_recent *r)
{
    memset(r, 0, sizeof(*r));
}

void mu_recent_release(struct mu_recent *r)
{
    for (size_t i = 0; i < MU_RECENT_MAX; i++)
        free(r->v[i].text);
    memset(r, 0, sizeof(*r));
}

void mu_recent_add(struct mu_recent *r, const char *kind, int64_t at,
                   const char *fmt, ...)
{
    struct mu_sb sb;
    va_list ap;

    mu_sb_init(&sb);
    va_start(ap, fmt);
    mu_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    free(r->v[r->next].text);
    r->v[r->next].at = at;
    r->v[r->next].kind = kind;
    r->v[r->next].text = mu_sb_detach(&sb);
    r->next = (r->next + 1) % MU_RECENT_MAX;
    if (r->n < MU_RECENT_MAX)
        r->n++;
}

json_t *mu_recent_json(const struct mu_recent *r)
{
    json_t *a = json_array();

    for (size_t k = 0; k < r->n; k++) {
        size_t i = (r->next + MU_RECENT_MAX - 1 - k) % MU_RECENT_MAX;
        char when[32];

        mu_rfc3339_format(r->v[i].at, when, sizeof(when));
        json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "at", when,
                                           "kind", r->v[i].kind, "text",
                                           r->v[i].text));
    }
    return a;
}
