/* The queue controller's state machine and memory (see queue.h). */
#include "ctrl/queue.h"

static const char *const action_names[] = {
    [MU_QACT_SYNC] = "SyncQueue",
    [MU_QACT_OPEN] = "OpenQueue",
    [MU_QACT_CLOSE] = "CloseQueue",
};

int mu_qaction_parse(const char *s, enum mu_qaction *out)
{
    for (size_t i = 0; s && i < MU_ARRAY_LEN(action_names); i++) {
        if (!strcmp(s, action_names[i])) {
            *out = (enum mu_qaction)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *mu_qaction_name(enum mu_qaction a)
{
    return (size_t)a < MU_ARRAY_LEN(action_names) ? action_names[a] : "?";
}

enum mu_queue_state mu_queue_next(enum mu_queue_state cur, enum mu_qaction a,
                                  int npg)
{
    enum mu_queue_state closed = npg > 0 ? MU_QUEUE_CLOSING : MU_QUEUE_CLOSED;

    switch (a) {
    case MU_QACT_OPEN:
        return MU_QUEUE_OPEN;
    case MU_QACT_CLOSE:
        return closed;
    case MU_QACT_SYNC:
    default:
        break;
    }
    switch (cur) {
    case MU_QUEUE_OPEN:
        return MU_QUEUE_OPEN;
    case MU_QUEUE_CLOSED:
    case MU_QUEUE_CLOSING:
        return closed;
    case MU_QUEUE_UNKNOWN:
    default:
        return MU_QUEUE_UNKNOWN;
    }
}

void mu_queue_counts_add(struct mu_queue_counts *c, enum mu_pg_phase p)
{
    switch (p) {
    case MU_PG_RUNNING:
        c->running++;
        break;
    case MU_PG_INQUEUE:
        c->inqueue++;
        break;
    case MU_PG_UNKNOWN:
        c->unknown++;
        break;
    case MU_PG_COMPLETED:
        c->completed++;
        break;
    case MU_PG_NONE:
    case MU_PG_PENDING:
    default:
        c->pending++;
        break;
    }
}

int mu_queue_counts_held(const struct mu_queue_counts *c)
{
    return c->pending + c->running + c->inqueue + c->unknown;
}

int mu_queue_counts_total(const struct mu_queue_counts *c)
{
    return mu_queue_counts_held(c) + c->completed;
}

struct mu_qctl_q *mu_qctl_get(struct mu_map *m, const char *name,
                              const char *uid)
{
    struct mu_qctl_q *e = mu_map_get(m, name);

    if (!uid)
        uid = "";
    if (!e) {
        e = mu_xcalloc(1, sizeof(*e));
        mu_map_put(m, name, e);
    } else if (*uid && *e->uid && strncmp(e->uid, uid, sizeof(e->uid) - 1)) {
        memset(e, 0, sizeof(*e));
    }
    if (*uid)
        snprintf(e->uid, sizeof(e->uid), "%s", uid);
    return e;
}

void mu_qctl_forget(struct mu_map *m, const char *name)
{
    free(mu_map_del(m, name));
}

void mu_qctl_request(struct mu_qctl_q *e, enum mu_qaction a, const char *by)
{
    e->requested = true;
    e->request = a;
    snprintf(e->by, sizeof(e->by), "%s", by ? by : "");
}

enum mu_queue_state mu_qctl_current(struct mu_qctl_q *e,
                                    enum mu_queue_state observed,
                                    int64_t now_ms)
{
    if (!e->pending)
        return observed;
    if (observed == e->wrote || now_ms - e->at_ms >= MU_QCTL_ECHO_MS) {
        e->pending = false;
        return observed;
    }
    return e->wrote;
}

enum mu_queue_state mu_qctl_step(struct mu_qctl_q *e,
                                 enum mu_queue_state observed, int npg,
                                 int64_t now_ms)
{
    return mu_queue_next(mu_qctl_current(e, observed, now_ms),
                         e->requested ? e->request : MU_QACT_SYNC, npg);
}

bool mu_qctl_state_due(const struct mu_qctl_q *e, enum mu_queue_state observed,
                       enum mu_queue_state s)
{
    return !e->status_written || e->requested || s != observed;
}

void mu_qctl_wrote(struct mu_qctl_q *e, bool with_state, enum mu_queue_state s,
                   int64_t now_ms)
{
    e->status_written = true;
    e->status_at_ms = now_ms;
    e->requested = false;
    e->by[0] = '\0';
    if (!with_state)
        return;
    e->wrote = s;
    e->pending = true;
    e->at_ms = now_ms;
}
