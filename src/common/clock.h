/*
 * clock.h - the one monotonic clock every muster thread reads.
 *
 * All deadlines, timeouts and durations inside muster (the event queue's
 * waits, the barrier's window, the writer's flush, the HTTP server's
 * request timings, the client's rate limiter) are in nanoseconds of
 * CLOCK_MONOTONIC, so a wall-clock step (NTP, a VM resumed) never fires or
 * stalls one. Wall time (time(NULL)) is used only for what goes into API
 * objects (timestamps) and simulated time never reads either.
 *
 * Condition variables that wait on these deadlines are made with
 * mu_cond_init_monotonic() and waited on with mu_ns_to_timespec().
 * Thread-safe.
 */
#ifndef MU_COMMON_CLOCK_H
#define MU_COMMON_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Now, in ns of CLOCK_MONOTONIC. */
int64_t mu_now_ns(void);
/* Now, in ms of CLOCK_MONOTONIC. */
int64_t mu_now_ms(void);
/* Now, in ms since the epoch (CLOCK_REALTIME): for times shown to people
 * and written to the API, never for durations. */
int64_t mu_wall_ms(void);
/* A CLOCK_MONOTONIC instant in ns as a timespec (for
 * pthread_cond_timedwait on a condition made below). */
struct timespec mu_ns_to_timespec(int64_t ns);
/* pthread_cond_init with CLOCK_MONOTONIC as the condition's clock.
 * Returns what pthread_cond_init returns. */
int mu_cond_init_monotonic(pthread_cond_t *c);

#endif
