/*
 * watch.h - list+watch of one Kubernetes collection, and the pieces it is
 * made of: a bounded line splitter and a watch-event parser.
 *
 * The loop (what client-go's reflector does):
 *   1. LIST the collection in pages (limit/continue); every item goes to the
 *      callback as MU_WATCH_LIST_ITEM between LIST_BEGIN and LIST_END. The
 *      list's metadata.resourceVersion becomes the current RV.
 *   2. WATCH ?watch=1&allowWatchBookmarks=true&resourceVersion=RV&
 *      timeoutSeconds=T (T drawn from [MU_WATCH_TIMEOUT_MIN_S,
 *      MU_WATCH_TIMEOUT_MAX_S] with the seed). The stream is split into
 *      lines; each complete line is parsed once. ADDED, MODIFIED and
 *      DELETED go to the callback; every event, BOOKMARK included, advances
 *      the RV.
 *   3. When the server ends the stream, watch again from the RV. When the
 *      connection breaks (even mid-line), wait (backoff) and watch again
 *      from the RV: the partial line is dropped, so no event is lost or
 *      delivered twice.
 *   4. Relist at once on an ERROR event whose Status code is 410 (the RV is
 *      too old) or an HTTP 410. Relist after a backoff on any bad input: a
 *      line that is not a JSON watch event, a line longer than
 *      MU_WATCH_MAX_LINE, an unknown event type, another ERROR event, or
 *      an HTTP 4xx. HTTP 429 and 5xx and transport errors are retried from
 *      the RV after a backoff. Nothing a server sends makes the loop crash
 *      or stop; only the stop flag does.
 *   5. One bad object is one bad object: a string with "\u0000" in it is
 *      read (api/json.h's mu_json_loadb, for LIST pages and watch lines
 *      alike); an item of a LIST page that is not an object is logged with
 *      its index and skipped (stats.skipped) while the rest of the page is
 *      delivered; an object goes to the callback even when it would not
 *      decode, and the callback's decoders report it by kind and name and
 *      skip it (serve/apply.c). Only input that names no object - a page
 *      or a line that is not JSON, an event without a type or an object -
 *      fails a LIST page or ends a watch (the relist of step 4), because
 *      the object it changed is unknown and only a relist catches up.
 * With stream_list (mu_watch_opts), step 1 is a WATCH instead
 * (the WatchList protocol, KEP-3157, what client-go's reflector uses when
 * its WatchListClient gate is on): ?watch=1&sendInitialEvents=true&
 * resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&
 * timeoutSeconds=T streams every object as ADDED, delivered as LIST_ITEM
 * after one LIST_BEGIN, then a BOOKMARK annotated MU_WATCH_INITIAL_END
 * "true", delivered as LIST_END; its RV is the current RV and the same
 * stream goes on as the WATCH of step 2. The server then sends the objects
 * from its watch cache one at a time: no page of them is held whole on
 * either side. The initial state is never resumed: a stream that breaks
 * before its bookmark (or sends MODIFIED or DELETED inside it) starts
 * again with LIST_BEGIN. An HTTP 4xx to that WATCH (other than 410 and
 * 429) is answered by a paged LIST at once; for 400 and 422 (the server
 * refuses the parameters: its WatchList gate is off) and for a stream that
 * ends with nothing of its initial state (a server that ignores them), the
 * watch lists in pages from then on, and says so once.
 *
 * Backoff doubles from MU_WATCH_BACKOFF_MIN_NS to MU_WATCH_BACKOFF_MAX_NS
 * (with jitter from the seed) and resets once a watch delivers an event or
 * ends normally.
 *
 * Threads: mu_watch_run() blocks; run it on a thread of its own. The watch
 * owns its own client (and so its own CURL handle); nothing in it is shared.
 * The stop flag may be set from any thread: it is checked between events
 * and before every request, and it interrupts a blocking transfer within
 * about a second (libcurl's progress callback) and a backoff sleep within
 * 100 ms.
 */
#ifndef MU_KUBE_WATCH_H
#define MU_KUBE_WATCH_H

#include <jansson.h>
#include <stdatomic.h>

#include "common/mu.h"
#include "kube/caps.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/watchpb.h"

/* ---- line splitter ------------------------------------------------------ */

/*
 * Splits a byte stream fed in arbitrary pieces into '\n'-terminated lines.
 * Each byte is scanned once (memchr over new data only); a line wholly inside
 * one piece is handed out without a copy; only the unterminated tail is
 * kept, in buf. A line longer than max bytes is an error, so buf never
 * holds more than max bytes.
 */
struct mu_linebuf {
    char *buf;  /* the partial line carried to the next feed */
    size_t len; /* its length */
    size_t cap;
    size_t max; /* longest line accepted, without its '\n' */
};

void mu_linebuf_init(struct mu_linebuf *lb, size_t max);
void mu_linebuf_release(struct mu_linebuf *lb);
/* Drops the partial line (after a broken connection). */
void mu_linebuf_reset(struct mu_linebuf *lb);

/*
 * Feeds p[0..n). Calls on_line(ctx, line, len) for each line completed by
 * these bytes, in order; line excludes the '\n' and one '\r' before it, is
 * not NUL-terminated and is valid only during the call. Empty lines are
 * passed too. Returns 0; or on_line's non-zero return, at which point the
 * rest of p and the partial line are dropped; or -ENOBUFS when a line grows
 * beyond max, with the partial line dropped. Either way lb stays usable.
 */
int mu_linebuf_feed(struct mu_linebuf *lb, const char *p, size_t n,
                    int (*on_line)(void *ctx, const char *line, size_t len),
                    void *ctx) MU_WARN_UNUSED;

/* ---- events ------------------------------------------------------------- */

enum mu_watch_type {
    MU_WATCH_LIST_BEGIN, /* a (re)list starts (its first page arrived);
                          * obj is NULL */
    MU_WATCH_LIST_ITEM,  /* one listed object, an "ADDED"-like sync */
    MU_WATCH_LIST_END,   /* the list is complete; obj is NULL. Objects not
                          * listed since LIST_BEGIN no longer exist */
    MU_WATCH_ADDED,
    MU_WATCH_MODIFIED,
    MU_WATCH_DELETED,  /* obj is the last state of the deleted object */
    MU_WATCH_BOOKMARK, /* parser only: never delivered */
    MU_WATCH_ERROR,    /* parser only: never delivered */
};

/* "ADDED", "LIST_ITEM", ... */
const char *mu_watch_type_name(enum mu_watch_type t);

/* One parsed line of a watch stream. */
struct mu_watch_event {
    enum mu_watch_type type; /* ADDED..ERROR */
    json_t *object;          /* owned; the only reference */
    const char *rv;          /* object's metadata.resourceVersion,
                              * borrowed from object; NULL if absent */
    long code;               /* ERROR: the Status code; else 0 */
};

/*
 * Parses one line: {"type": T, "object": {...}} with T one of ADDED,
 * MODIFIED, DELETED, BOOKMARK, ERROR. A BOOKMARK must carry
 * object.metadata.resourceVersion. Returns 0 and fills *ev (the caller
 * releases it), or -EPROTO with err naming what is wrong; *ev is then empty.
 */
int mu_watch_event_parse(const char *line, size_t len,
                         struct mu_watch_event *ev,
                         struct mu_err *err) MU_WARN_UNUSED;
/* The same for one frame of a protobuf stream (kube/watchpb.h), its
 * object made JSON by fn. */
int mu_watch_event_parse_pb(const uint8_t *frame, size_t len,
                            mu_watch_pb_fn *fn, struct mu_watch_event *ev,
                            struct mu_err *err) MU_WARN_UNUSED;
void mu_watch_event_release(struct mu_watch_event *ev);

/* ---- the list+watch loop ------------------------------------------------ */

/* The annotation on the bookmark that ends a WATCH's initial state. */
#define MU_WATCH_INITIAL_END "k8s.io/initial-events-end"

struct mu_watch;

struct mu_watch_opts {
    const char *path;           /* collection, e.g. "/api/v1/pods" or
                                 * "/apis/scheduling.volcano.sh/v1beta1/
                                 * namespaces/ns/podgroups" */
    const char *label_selector; /* optional */
    const char *field_selector; /* optional */
    unsigned page_size;         /* LIST limit; 0: MU_WATCH_PAGE_SIZE */
    bool stream_list;           /* the initial state by a WATCH (above) */
    size_t max_line;            /* longest event; 0: MU_WATCH_MAX_LINE */
    /* Optional: WATCHes ask for protobuf (kube/watchpb.h; JSON still
     * accepted, and read as JSON when that is what comes), and the
     * objects of a protobuf stream are made JSON by it (their kind and
     * message), so the callback sees JSON either way. LISTs stay JSON. */
    mu_watch_pb_fn *protobuf;
    uint64_t seed;              /* jitter of timeoutSeconds and backoff */
    const atomic_bool *stop;    /* required; owned by the caller */
    struct mu_kube_opts kube;   /* the watch client's options: rate limit,
                                 * clock (also used for backoff), log */
};

/* Counters, for tests and metrics. */
struct mu_watch_stats {
    unsigned long lists;   /* complete LISTs (streamed ones too) */
    unsigned long streamed; /* objects of initial states streamed */
    unsigned long refused; /* initial-state WATCHes answered 4xx */
    unsigned long pages;   /* LIST pages received */
    unsigned long watches; /* WATCH requests sent */
    unsigned long events;  /* ADDED/MODIFIED/DELETED delivered */
    unsigned long bookmarks;
    unsigned long relists; /* relists decided after the first list */
    unsigned long errors;  /* failures that led to a backoff */
    unsigned long skipped; /* LIST items that were not objects */
    int64_t slept_ns;      /* total backoff */
    long last_timeout_s;   /* timeoutSeconds of the last WATCH */
};

/*
 * Called on the watch thread for each event, in order.
 * obj (NULL for LIST_BEGIN and LIST_END) is a new reference owned by the
 * callee and shared with nothing: the callback must hand it to the
 * scheduler thread (through a queue) or json_decref it; it must not keep
 * using it on this thread after handing it over. Items of a LIST carry
 * kind and apiVersion (filled in from the List when the server omits
 * them). A LIST_BEGIN may be followed by another LIST_BEGIN without
 * LIST_END when a list fails midway or the watch is stopped: drop the
 * partial set. The callback may set the stop flag; it must not call
 * mu_watch_run or mu_watch_free.
 */
typedef void mu_watch_fn(void *ctx, enum mu_watch_type type, json_t *obj);

/* Creates a watch of o->path with its own client for cfg (copied).
 * -EINVAL without path or stop. */
int mu_watch_new(const struct mu_kube_config *cfg,
                 const struct mu_watch_opts *o, struct mu_watch **out,
                 struct mu_err *err) MU_WARN_UNUSED;

/*
 * Lists and watches until the stop flag is set, calling fn(ctx, ...) for
 * every event. Returns 0 once stopped (never another error: failures are
 * retried as described above and reported through the log hook), or
 * -EINVAL for a NULL fn (fn is then never called). May be called again
 * after it returned; it then starts with a fresh LIST.
 */
int mu_watch_run(struct mu_watch *w, mu_watch_fn *fn, void *ctx);

/* The current resourceVersion ("" before the first list). Borrowed; valid
 * until the next event. Call on the watch thread or after run returned. */
const char *mu_watch_rv(const struct mu_watch *w);
void mu_watch_get_stats(const struct mu_watch *w, struct mu_watch_stats *st);
/* NULL is a no-op. Not while mu_watch_run is running. */
void mu_watch_free(struct mu_watch *w);

#endif
