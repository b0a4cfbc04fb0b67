#include "ctrl/ctl.h"

#include <time.h>

void mu_ctl_log(const struct mu_ctl *c, const char *fmt, ...)
{
    va_list ap;
    char line[2048];

    if (!c->log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    c->log(c->log_ctx, line);
}

void mu_ctl_event(const struct mu_ctl *c, const char *api, const char *kind,
                  const char *ns, const char *name, const char *uid,
                  const char *type, const char *reason, const char *msg)
{
    struct mu_kube_event ev = {
        .involved = {api, kind, ns, name, uid},
        .type = type,
        .reason = reason,
        .message = msg,
        .first_time = time(NULL),
        .last_time = time(NULL),
        .count = 1,
    };

    if (mu_writer_event(c->writer, &ev) < 0)
        mu_ctl_log(c, "event %s on %s/%s: not sent", reason, ns ? ns : "",
                   name);
}
