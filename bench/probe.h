/*
 * probe.h - what a benchmark reads while it runs: a fixed-bucket histogram
 * of microseconds (log-linear, as wrk's src/stats.c: under 1.6 % error),
 * medians, the clocks, and the process's memory (RSS, its high-water mark
 * and the peak seen). Thread: the benchmark's one thread (the peak is
 * process-wide state of this file).
 */
#ifndef MU_BENCH_PROBE_H
#define MU_BENCH_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define PROBE_HIST_SUB_BITS 6
#define PROBE_HIST_SUB (1u << PROBE_HIST_SUB_BITS)
#define PROBE_HIST_MAJOR 40 /* up to 2^40 µs: 12 days */
#define PROBE_HIST_BUCKETS (PROBE_HIST_MAJOR * PROBE_HIST_SUB)

struct probe_hist {
    uint64_t count;
    uint64_t b[PROBE_HIST_BUCKETS];
};

void probe_hist_add(struct probe_hist *h, uint64_t us);
/* Smallest bucket bound below which p percent of the samples lie. */
uint64_t probe_hist_percentile(const struct probe_hist *h, double p);

/* The median of v[0..n) (n >= 1); sorts v. */
double probe_median(double *v, int n);

/* Milliseconds on clock id; probe_now_ms on CLOCK_MONOTONIC. */
double probe_clock_ms(clockid_t id);
double probe_now_ms(void);

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), or -1. */
long probe_status_kib(const char *field);
/* Resets VmHWM to the current RSS (Linux >= 4.0); false when it cannot. */
bool probe_reset_hwm(void);
/* Notes the highest RSS so far (resetting VmHWM also lowers what
 * ru_maxrss reports, so call it before every reset); probe_peak_mib
 * notes it once more and gives it. */
void probe_note_peak(void);
double probe_peak_mib(void);

#endif
