/*
 * status.h - the PodGroup status muster serve owes the API after every
 * cycle: phase, running/succeeded/failed and the scheduling condition,
 * written with one merge patch per PodGroup when what it says changed,
 * and an event when the condition's kind (type and reason) changed (none
 * for WaitingForRelease: the gang fits and waits its turn, sched/cycle.c).
 * (Queue status is the queue controller's, ctrl/queuectl.h; a vcjob's is
 * the vcjob controller's.)
 *
 * A status is taken as written when it is handed to the writer (flagged
 * MU_WRITE_COALESCE: a newer one replaces one still queued); a write that
 * fails forgets it, so the next cycle sends it again.
 *
 * Threads: the scheduler thread, done callbacks included. Ownership: the
 * writer borrows ctl; mu_status_release() must come after mu_writer_free()
 * of ctl->writer.
 */
#ifndef MU_SERVE_STATUS_H
#define MU_SERVE_STATUS_H

#include "common/map.h"
#include "ctrl/ctl.h"

/* What was last written for one PodGroup. */
struct mu_pg_written {
    char *sig;  /* the status (phase, counts, condition), or NULL */
    char *cond; /* the condition's "type|reason" last evented, or NULL */
};

struct mu_status {
    const struct mu_ctl *ctl;
    struct mu_map pgs; /* PodGroup key -> struct mu_pg_written */
};

void mu_status_init(struct mu_status *s, const struct mu_ctl *ctl);
void mu_status_release(struct mu_status *s);

/*
 * Writes the status of every PodGroup that is not implicit (see above),
 * while the writer has room for them: status is what can wait, so it
 * never fills the writer's queue past half its cap (a status and its event
 * count two), leaving the other half to releases and deletes, and never
 * blocks the scheduler thread on a full queue (5,000 PodGroups changed in
 * one cycle of a backlog). Half the room left, taken afresh at every
 * cycle, kept a backlog's statuses (sent 8 at a time, MU_WRITER_BACKGROUND)
 * in a queue that stayed full for minutes, and the release budget, which
 * is half the room left too (serve/enforce.h), down to a gang or two a
 * cycle (issue 15). Returns true when some were held back: the caller calls
 * again at a later cycle (they are not taken as written).
 */
bool mu_status_write(struct mu_status *s);

#endif
