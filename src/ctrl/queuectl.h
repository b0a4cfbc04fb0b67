/*
 * queuectl.h - the queue controller and bus.volcano.sh Commands: Queue
 * status (state, PodGroup counts, allocated) and its events, vcctl's
 * OpenQueue / CloseQueue, the default queue. The state machine and the
 * memory it keeps per queue object are ctrl/queue.h; this is the part
 * that reads the cache and writes through the writer (ctrl/ctl.h).
 *
 * Commands. Each Command is deleted first and carried out only when the
 * delete succeeded, as Volcano does, so none is carried out twice (a
 * Command seen again after a relist finds itself gone: 404, nothing
 * done). The DELETE is a writer write; the Command is carried out in its
 * done callback. A Command muster cannot carry out is deleted too, with a
 * log line and a Warning event naming it and saying why. A queue action
 * waits in the controller's memory for the next mu_queuectl_sync(), which
 * writes the state. A job action (AbortJob, ResumeJob, ...) is not this
 * controller's: it logs it, posts CommandIssued on the Job and hands
 * (namespace, name, action) to its caller through mu_queuectl_next_job().
 * While a Command's DELETE is in flight the Command is not deleted again.
 *
 * Queue status. mu_queuectl_sync() writes, per queue, one merge patch of
 * status (PodGroup counts per phase, allocated -- its own and, as Volcano
 * does, that of every queue below it by spec.parent -- and state when
 * mu_qctl_state_due() says so) when what it says changed; the figures
 * alone at most every MU_QUEUE_FIGURES_MS. The memory moves (mu_qctl_wrote,
 * the transition's log line, the Command's event on the Queue) when the
 * write completes; a failed write changes nothing and the next sync sends
 * it again. While a queue's write is in flight no other is sent for it;
 * a change seen meanwhile marks the controller changed when the write
 * completes, so the caller runs another sync soon.
 *
 * Threads: the writer's owner thread (the scheduler thread) only, done
 * callbacks included; nothing locks.
 *
 * Ownership: the controller borrows its context, which must outlive it;
 * free it after mu_writer_free() of ctl->writer (whose last done calls
 * reach it).
 */
#ifndef MU_CTRL_QUEUECTL_H
#define MU_CTRL_QUEUECTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctrl/ctl.h"
#include "sched/conf.h"
#include "kube/watch.h"

/* A queue's figures (allocated, PodGroup counts) are written at most this
 * often: they change with every gang placed. State changes and Commands
 * are written at once. */
#define MU_QUEUE_FIGURES_MS 1000

struct mu_queuectl;

/* A job action a Command carried (its Command deleted): for the vcjob
 * controller. Owned strings; mu_queuectl_job_release(). */
struct mu_queuectl_job {
    char *ns, *name; /* the vcjob */
    char *action;    /* "AbortJob", ... (ctrl/command.h) */
};

/* Never NULL. ctl is borrowed. */
struct mu_queuectl *mu_queuectl_new(const struct mu_ctl *ctl);
/* NULL is a no-op. */
void mu_queuectl_free(struct mu_queuectl *qc);

/* What the caches say, for Commands (a queue that is not in a listed
 * cache does not exist; a job Command before every cache listed says so
 * in its log line). Call whenever it changes. */
void mu_queuectl_set_synced(struct mu_queuectl *qc, bool queues_listed,
                            bool all_listed);

/* A Command watch event (obj borrowed; other types than LIST_ITEM, ADDED
 * and MODIFIED are ignored): submits its DELETE (see above). */
void mu_queuectl_command(struct mu_queuectl *qc, enum mu_watch_type type,
                         const json_t *obj);

/* Takes the oldest job action due (into *out, owned by the caller) and
 * returns true, or returns false when none waits. */
bool mu_queuectl_next_job(struct mu_queuectl *qc,
                          struct mu_queuectl_job *out);
void mu_queuectl_job_release(struct mu_queuectl_job *j);

/* Which plugin shares the cluster between queues (sched/conf.h; default
 * MU_SHARE_PROPORTION): what a Queue's status says of spec.parent and
 * spec.deserved, and whether the root queue is made. */
void mu_queuectl_set_share(struct mu_queuectl *qc, enum mu_conf_share share);

/* Whether scheduling may have changed since the last call (a queue
 * Command carried out, a write that found newer work when it completed);
 * clears it. */
bool mu_queuectl_changed(struct mu_queuectl *qc);

/* Writes the status of every queue in the cache that changed (see above),
 * now_ms on a monotonic clock. */
void mu_queuectl_sync(struct mu_queuectl *qc, int64_t now_ms);

/* Posts the default queue (api/implicit.h) when the cache has none, and
 * with a queue tree (MU_SHARE_TREE) the root queue too, as Volcano's
 * scheduler does; a 409 counts as made. Once the caches have listed. */
void mu_queuectl_default_queue(struct mu_queuectl *qc);

#endif
