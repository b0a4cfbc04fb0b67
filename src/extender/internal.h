/*
 * internal.h - what the files of src/extender share and nobody else uses:
 * the request scanner behind the fast /filter and /prioritize paths, the
 * two halves of /bind (so the HTTP thread drops its view reference before
 * it blocks), and the barrier's entry point.
 */
#ifndef MU_EXTENDER_INTERNAL_H
#define MU_EXTENDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"
#include "extender/extender.h"
#include "extender/view.h"

/* The refusal of a request over MU_EXT_MAX_NODE_NAMES (extender.h), the
 * same on both paths. */
#define MU_EXT_TOO_MANY_NAMES                                                  \
    "ExtenderArgs.NodeNames: more than %u names (muster's cap)"

/* Deepest nesting the scanner accepts (jansson's limit; the scanner's
 * stack is this many bytes). Deeper input is malformed: -EINVAL, and the
 * request is answered with Error. */
#define MU_SCAN_MAX_DEPTH 2048

/* A JSON string token exactly as it appears in the input, quotes
 * included; p == NULL when absent (or null). esc: it has escapes; nul:
 * one of them is \u0000. */
struct mu_js_tok {
    const char *p;
    size_t len;
    bool esc;
    bool nul;
};

/* What /filter and /prioritize read from ExtenderArgs. Keys match without
 * regard to case and the last of several matching keys wins (Go's
 * encoding/json). Everything else is validated and skipped. The tokens
 * point into the scanned buffer. */
struct mu_ext_args {
    bool pod;                       /* "Pod" is an object */
    struct mu_js_tok ns, name, uid; /* Pod.metadata.* */
    struct mu_js_tok sched;         /* Pod.spec.schedulerName */
    bool node_names;                /* "NodeNames" is an array */
    bool names_nul;                 /* one of its elements has a \u0000 */
    const char *names_raw;          /* its text, '[' to ']' */
    size_t names_raw_len;
    struct mu_js_name *names; /* its elements (owned array of at most
                                 MU_EXT_MAX_NODE_NAMES) */
    size_t n_names, cap_names;
};

/* A NodeNames element, 8 bytes (thousands per request): its offset in
 * names_raw and its length, the top bit of which says it has escapes. */
struct mu_js_name {
    uint32_t off;
    uint32_t len;
};

#define MU_JS_NAME_ESC 0x80000000u

static inline struct mu_js_tok mu_ext_name(const struct mu_ext_args *a,
                                           size_t i)
{
    struct mu_js_tok t = {a->names_raw + a->names[i].off,
                          a->names[i].len & ~MU_JS_NAME_ESC,
                          (a->names[i].len & MU_JS_NAME_ESC) != 0, false};

    return t;
}

/*
 * Scans buf (len bytes, less than 2 GiB; need not be NUL-terminated) as
 * ExtenderArgs, checking that the whole of it is valid JSON (RFC 8259, UTF-8,
 * no lone surrogates, depth <= MU_SCAN_MAX_DEPTH). A \u0000 is valid JSON
 * (the API server accepts it in any string, api/json.h) and is skipped
 * where it is not read; the tokens read say whether they have one (nul,
 * names_nul), and the caller refuses those. 0, -EINVAL
 * with a message in err, or -E2BIG when NodeNames has more than
 * MU_EXT_MAX_NODE_NAMES elements (the scan stops there). a is always left
 * releasable.
 */
int mu_scan_ext_args(const char *buf, size_t len, struct mu_ext_args *a,
                     struct mu_err *err);
void mu_ext_args_release(struct mu_ext_args *a);
/* Decodes a valid string token into out (room for t.len bytes) with a NUL;
 * returns the decoded length. */
size_t mu_js_decode(struct mu_js_tok t, char *out);
/* True when the decoded token equals s. */
bool mu_js_tok_eq(struct mu_js_tok t, const char *s);
/* Length of the valid UTF-8 sequence starting at p (before end), or 0. */
size_t mu_utf8_seq_len(const char *p, const char *end);

/* /bind, split: prepare reads args and the view (copying what it needs);
 * finish meets the barrier (blocks) and returns the ExtenderBindingResult.
 * finish releases r. ns and name are the view's (NULL when refused). */
struct mu_ext_bind_req {
    char *ns, *name, *uid, *node;
    char *release; /* NULL: bind at once */
    int batch_size;
    bool controlled; /* the view's: may be deleted to undo a batch */
    /* every member of the batch (this one among them), set when all
     * batch_size of them are in the view, reserved and plain: the barrier
     * binds the whole gang at this arrival (mu_barrier_bind_gang) */
    struct mu_barrier_member *gang;
    int ngang;
    char *error; /* set: refuse with this error, bind nothing */
    bool unknown; /* refused as not in the view: a pod a gang bound whole
                     is answered from the barrier (mu_barrier_bound_by_gang) */
    bool bad;    /* the request was malformed */
};
void mu_ext_bind_prepare(const struct mu_view *v, const json_t *args,
                         struct mu_ext_bind_req *r);
json_t *mu_ext_bind_finish(struct mu_barrier *b, struct mu_ext_bind_req *r);

/* Binds one pod through its release batch (release NULL: at once, no
 * report). controlled: the pod has a controller, so undoing its batch may
 * delete it (never otherwise). Blocks until the batch is done. 0, or
 * -errno with err. */
int mu_barrier_bind(struct mu_barrier *b, const char *release, int batch_size,
                    const char *ns, const char *name, const char *uid,
                    const char *node, bool controlled, struct mu_err *err);

/*
 * Binds the whole release batch at the arrival of one of its members
 * (uid, one of gang[0..n-1]; each plain, mu_view_pod): kube-scheduler
 * has checked that member on its node, and nothing in the others' specs
 * is left for it to check or prepare, so muster binds them all now
 * instead of holding this member's /bind until kube-scheduler reaches
 * each of the others (which, behind a backlog, takes longer than any
 * barrier window: issue 15). A member's bind is tried up to
 * MU_BARRIER_GANG_TRIES times a round (its release, sent with the
 * first's, may still be on its way: a gated pod's bind gets a 409 until
 * it lands). At most MU_BARRIER_GANGS_BINDING gangs bind at once, each on
 * up to MU_BARRIER_GANG_THREADS threads (this one and helpers; fewer when
 * a thread cannot be made), so that a gang's binds go out together
 * instead of being spread over a burst; a gang that finds no room waits
 * for one up to MU_BARRIER_SLOT_WAIT_MS, counted with the members waiting
 * in /bind (MU_BARRIER_MAX_WAITING, extender.h), and is refused with
 * -EAGAIN, nothing bound, past that time or that cap (kube-scheduler
 * tries the pod again). No bind is started
 * past MU_BARRIER_RETRY_MS from the start of the gang's binds (extender.h).
 * The binds are retried and judged as a gathered batch's
 * are (a member that still fails undoes the ones that bound, controlled
 * ones only), and the outcome is reported once. A member's later /bind
 * (kube-scheduler reached it before it saw the binding) is answered from
 * the tombstone: 0 when the batch bound and it was bound to node, the
 * batch's error when it failed; one arriving while the binds run waits
 * for them. A batch already being gathered the other way (begun under an
 * older view) goes on that way: this member joins it. Blocks; 0, or
 * -errno with err. The caller keeps gang.
 *
 * uid and node NULL: the gang is bound at its release, no member having
 * reached /bind (relbind.h): a batch the barrier holds already for the
 * release (bound, binding, or gathered) is left to its course and
 * -EALREADY is returned (err not set); with every gang slot taken it
 * does not wait but returns -ENOSPC, nothing made; else the gang is bound
 * as above, not counted among the gangs bound at their first member, and
 * the batch's outcome is returned.
 */
/* True when a gang bound whole (mu_barrier_bind_gang) bound pod uid to
 * node, and its tombstone is still kept: the answer to a late /bind of a
 * pod the view no longer holds because it is bound. Takes the lock. */
bool mu_barrier_bound_by_gang(struct mu_barrier *b, const char *uid,
                              const char *node);
/* Reports release's outcome through the barrier's report callback, as a
 * batch's own outcome is (a gang the release binder gives up before the
 * barrier has it, relbind.h). */
void mu_barrier_report(struct mu_barrier *b, const char *release, bool ok,
                       const char *detail);
#define MU_BARRIER_GANG_THREADS 8
#define MU_BARRIER_GANG_TRIES 12 /* per member and round, within
                                    MU_BARRIER_RETRY_MS (extender.h) */
#define MU_BARRIER_GANGS_BINDING 16
#define MU_BARRIER_SLOT_WAIT_MS 10000
int mu_barrier_bind_gang(struct mu_barrier *b, const char *release,
                         const struct mu_barrier_member *gang, int n,
                         const char *uid, const char *node,
                         struct mu_err *err);
/* Counts timed-out batches into st (NULL: stop counting). */
void mu_barrier_set_stats(struct mu_barrier *b, struct mu_ext_stats *st);

#endif
