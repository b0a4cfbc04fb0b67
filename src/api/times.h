/*
 * times.h - durations and instants as Kubernetes and Go write them.
 *
 * Pure, no I/O, thread-safe. Out-parameters are written on success only.
 */
#ifndef MU_API_TIMES_H
#define MU_API_TIMES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/mu.h"

/*
 * Durations as Go writes them ("1h30m", "90s", "500ms", "2m") or a bare
 * integer number of seconds. Returns 0 and milliseconds in *ms, or -EINVAL
 * with err: "invalid duration \"x\"", "missing unit in duration ...",
 * "unknown unit \"d\" in duration ...".
 */
int mu_duration_parse(const char *s, int64_t *ms, struct mu_err *err);

/* Parses an RFC 3339 time as the API writes it ("2006-01-02T15:04:05Z",
 * fractions and offsets accepted) into seconds since the epoch; false for
 * NULL or anything else. */
bool mu_rfc3339_parse(const char *s, int64_t *out);

/* Seconds since the epoch as RFC 3339 in UTC ("2006-01-02T15:04:05Z"),
 * into buf of at least 21 bytes; false (buf "") when not representable. */
bool mu_rfc3339_format(int64_t s, char *buf, size_t n);

#endif
