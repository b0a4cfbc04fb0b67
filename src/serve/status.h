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

#include <time.h>

#include "common/map.h"
#include "ctrl/ctl.h"

/* Status and event writes of ours in the writer at once at most (queued
 * or being sent). The writer's queue is first in, first out: a PodGroup
 * that went Running waits behind every status already in it. With half
 * the queue open to statuses (2,048), a 25,000-gang backlog queued its
 * Inqueue statuses ahead of the Running ones, and the last PodGroup said
 * Running 164-213 s after its pods were bound (issue 15, bench/RESULTS.md
 * 2026-12-06). Enough to keep the background workers busy between two
 * cycles (8 while binds run, 32 after, at 47-180 writes a second on the
 * bench's apiserver), few enough that a new status waits about a second. */
#define MU_STATUS_WINDOW 128u
/* PodGroups remembered past the cluster's own before the gone ones are
 * forgotten, in one walk (so the walk costs O(1) a PodGroup deleted). */
#define MU_STATUS_FORGET_SLACK 1024u

/* What was last written for one PodGroup. */
struct mu_pg_written {
    char *sig;  /* the status (phase, counts, condition), or NULL */
    char *cond; /* the condition's "type|reason" last written, or NULL */
    char *uid;  /* the PodGroup's: one made again under its name (a new
                   uid) is written as new, whatever was written before */
    enum mu_pg_phase phase; /* the phase in sig (MU_PG_NONE: none) */
    /* the event of the condition in cond, owed and not yet handed to the
     * writer: Warning Unschedulable (ev_msg its message) or Normal
     * Scheduled, stamped when the condition was written */
    char *ev_msg; /* NULL: none owed */
    bool ev_warn;
    time_t ev_at;
};

struct mu_status {
    const struct mu_ctl *ctl;
    struct mu_map pgs;  /* PodGroup key -> struct mu_pg_written */
    size_t inflight;    /* our writes in the writer: MU_STATUS_WINDOW */
    size_t events_owed; /* PodGroups with ev_msg set */
};

void mu_status_init(struct mu_status *s, const struct mu_ctl *ctl);
/* Logs how many events owed it drops (none is sent from here). */
void mu_status_release(struct mu_status *s);

/*
 * Writes the status of every PodGroup that is not implicit (see above)
 * whose status changed, while there is room for them, most pressing
 * first:
 *   1. the phase moved into or out of Running, Completed or Unknown
 *      (a gang's pods were bound, or it lost them);
 *   2. the events owed (below);
 *   3. the condition's kind changed;
 *   4. the phase moved otherwise (Pending to Inqueue: admitted, waiting);
 *   5. only the counts or the message changed;
 * and, within each, in the cluster's order of PodGroups (deterministic).
 * A status is rebuilt from the gang at every call, so one held back that
 * changed again is written once, as it stands.
 *
 * Events: a status whose condition's type or reason changed owes an event
 * on the PodGroup (none for WaitingForRelease), sent after the Running
 * statuses of the same call: while a backlog binds, the writer's few
 * background workers (MU_WRITER_BACKGROUND) took a status and its event
 * for every gang bound, fell 10 gangs a second behind at 25,000 gangs, and
 * the last PodGroup said Running 113 s after its pods were bound (issue
 * 15). An event owed that a newer condition makes stale is replaced by
 * that condition's event (or dropped, if it has none): the status says
 * what holds now, and an event tells of a change to it.
 *
 * What was written for PodGroups that are gone is forgotten once they
 * outnumber the live ones by MU_STATUS_FORGET_SLACK.
 *
 * Room: at most MU_STATUS_WINDOW of ours (statuses and events) in the
 * writer, and never past half its queue's cap, leaving the other half to
 * releases and deletes; it never blocks the scheduler thread on a full
 * queue (5,000 PodGroups changed in one cycle of a backlog). Half the
 * room left, taken afresh at every cycle, kept a backlog's statuses in a
 * queue that stayed full for minutes, and the release budget, which is
 * half the room left too (serve/enforce.h), down to a gang or two a cycle
 * (issue 15). Returns true when some statuses or events were held back:
 * the caller calls again at a later cycle (they are not taken as
 * written).
 */
bool mu_status_write(struct mu_status *s);

#endif
