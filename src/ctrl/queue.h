/*
 * queue.h - the queue controller's logic (volcano-api.md §3.7), pure: the
 * Open / Closing / Closed / Unknown state machine, the PodGroup counts that
 * Queue status carries, and the controller's memory of the state it wrote.
 *
 * Callers: the queue controller (ctrl/queuectl.h) on muster serve's
 * scheduler thread, and the unit tests. Nothing here does I/O or reads a
 * clock: time is passed in, in milliseconds of any monotonic clock.
 *
 * Who writes status.state. Normally the controller alone: a Command
 * (vcctl queue operate -a open|close) moves the state, and every sync
 * moves Closing to Closed once the queue's PodGroups are gone. A user may
 * also write it directly (kubectl patch queue team-b --subresource=status
 * ...); the next sync keeps what the user wrote, as Volcano does, except
 * that a Closed queue that still holds PodGroups is Closing.
 *
 * Telling a user's write from an old event. The watch shows the queue's
 * status some time after muster wrote it, and events written before muster's
 * write may still be on the way. So after writing state S the controller
 * takes S as the queue's state until the watch shows S (the echo); a
 * different state seen before the echo is older than muster's write and is
 * ignored. Once the echo has been seen, every other state the watch shows
 * is newer, so it is the user's. Should the echo never come (a relist can
 * skip intermediate versions), the wait ends after MU_QCTL_ECHO_MS.
 */
#ifndef MU_CTRL_QUEUE_H
#define MU_CTRL_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "api/object.h"
#include "common/map.h"

/* What a sync or a Command asks of a queue. */
enum mu_qaction {
    MU_QACT_SYNC = 0, /* recompute (every cycle) */
    MU_QACT_OPEN,     /* Command action "OpenQueue" */
    MU_QACT_CLOSE,    /* Command action "CloseQueue" */
};

/* "OpenQueue", "CloseQueue", "SyncQueue" -> *out, 0; anything else
 * (NULL included) -> -EINVAL, *out untouched. */
int mu_qaction_parse(const char *s, enum mu_qaction *out);
/* "SyncQueue", "OpenQueue", "CloseQueue". */
const char *mu_qaction_name(enum mu_qaction a);

/*
 * The state after action a on a queue in state cur that holds npg
 * PodGroups (of any phase, Completed included, as Volcano counts them):
 *   OPEN   any state           -> Open
 *   CLOSE  any state           -> Closed when npg == 0, else Closing
 *   SYNC   Open                -> Open
 *          Closed or Closing   -> Closed when npg == 0, else Closing
 *          Unknown             -> Unknown (only a Command leaves it)
 */
enum mu_queue_state mu_queue_next(enum mu_queue_state cur, enum mu_qaction a,
                                  int npg);

/* PodGroups of one queue per status.phase (Queue status.pending ...). */
struct mu_queue_counts {
    int pending; /* Pending, and a phase not written yet */
    int running;
    int inqueue;
    int unknown;
    int completed;
};

/* Counts one PodGroup of phase p. */
void mu_queue_counts_add(struct mu_queue_counts *c, enum mu_pg_phase p);
/* pending + running + inqueue + unknown: the PodGroups that still hold the
 * queue (what refuses its deletion). */
int mu_queue_counts_held(const struct mu_queue_counts *c);
/* Every PodGroup, completed included (what keeps a queue Closing). */
int mu_queue_counts_total(const struct mu_queue_counts *c);

/* How long the controller waits for the echo of its own state write. */
#define MU_QCTL_ECHO_MS 10000

/* Longest queue UID kept (UIDs are 36 characters). */
#define MU_QCTL_UID_MAX 64
/* Longest "namespace/name" of a Command kept for the Queue's event. */
#define MU_QCTL_BY_MAX 192

/*
 * The controller's memory of one queue object. Plain data with no owned
 * pointers, so a map that holds it releases it with free().
 */
struct mu_qctl_q {
    char uid[MU_QCTL_UID_MAX]; /* the object it is about ("" not known) */
    bool status_written;       /* muster wrote this object's status once */
    bool requested;            /* a Command's action waits to be written */
    enum mu_qaction request;   /* that action */
    char by[MU_QCTL_BY_MAX];   /* and the Command, "namespace/name" */
    bool pending;              /* state `wrote` not yet seen back */
    enum mu_queue_state wrote; /* the state muster last wrote */
    int64_t at_ms;             /* when */
    int64_t status_at_ms;      /* the last status write of any kind */
    int status_npg;            /* the PodGroups it counted */
};

/*
 * The memory of queue name in m (a map of queue name -> struct mu_qctl_q
 * and nothing else), made on first use. A different uid means the queue
 * was deleted and made again: the memory starts afresh, except that memory
 * made with an unknown uid (NULL or "") adopts the first uid it is asked
 * with. The map owns the entry (free() releases it). Never NULL.
 */
struct mu_qctl_q *mu_qctl_get(struct mu_map *m, const char *name,
                              const char *uid);
/* Drops the memory of queue name (frees it). */
void mu_qctl_forget(struct mu_map *m, const char *name);

/*
 * A Command (by, "namespace/name") asks for action a. It replaces an
 * earlier request not yet written (open and close set a state, so the
 * last one decides) and is carried out by the next status write.
 */
void mu_qctl_request(struct mu_qctl_q *e, enum mu_qaction a, const char *by);

/*
 * The state the controller takes as the queue's current one, given the
 * state the watch shows (observed) at now_ms: the state muster wrote while
 * its echo is awaited (see the top of this file), else observed. Seeing
 * the echo, or the wait running out, ends the wait.
 */
enum mu_queue_state mu_qctl_current(struct mu_qctl_q *e,
                                    enum mu_queue_state observed,
                                    int64_t now_ms);

/*
 * The state to write for a queue holding npg PodGroups: mu_queue_next() of
 * mu_qctl_current() with the requested action, or with a sync when none
 * is requested.
 */
enum mu_queue_state mu_qctl_step(struct mu_qctl_q *e,
                                 enum mu_queue_state observed, int npg,
                                 int64_t now_ms);

/*
 * Whether a status write must carry state s, the watch showing observed:
 * when the two differ, when a Command asked, and on the first write for
 * the object (so a new queue shows status.state Open). Otherwise a write
 * of counts or allocation leaves state out, and so cannot undo a user's
 * write that muster has not seen yet.
 */
bool mu_qctl_state_due(const struct mu_qctl_q *e, enum mu_queue_state observed,
                       enum mu_queue_state s);

/* Records that muster wrote the queue's status, with state s when
 * with_state, at now_ms: the request is done and the echo is awaited. */
void mu_qctl_wrote(struct mu_qctl_q *e, bool with_state, enum mu_queue_state s,
                   int64_t now_ms);

#endif
