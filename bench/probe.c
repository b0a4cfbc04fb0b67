/*
 * probe.c - what a benchmark reads while it runs (probe.h).
 */
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/mu.h"

/* ---- fixed-bucket histogram (µs) ---- */

/* Bucket of v: values below PROBE_HIST_SUB exactly, above that the top
 * PROBE_HIST_SUB_BITS + 1 bits select (major, sub). */
static unsigned hist_bucket(uint64_t v)
{
    unsigned major, sub;

    if (v < PROBE_HIST_SUB)
        return (unsigned)v;
    major = 63u - (unsigned)__builtin_clzll(v); /* >= PROBE_HIST_SUB_BITS */
    sub = (unsigned)(v >> (major - PROBE_HIST_SUB_BITS)) & (PROBE_HIST_SUB - 1);
    major -= PROBE_HIST_SUB_BITS - 1;
    if (major >= PROBE_HIST_MAJOR)
        return PROBE_HIST_BUCKETS - 1;
    return major * PROBE_HIST_SUB + sub;
}

/* Largest value in bucket i. */
static uint64_t hist_upper(unsigned i)
{
    unsigned major = i / PROBE_HIST_SUB, sub = i % PROBE_HIST_SUB;
    unsigned shift;

    if (major == 0)
        return sub;
    shift = major - 1;
    return (((uint64_t)PROBE_HIST_SUB + sub + 1) << shift) - 1;
}

void probe_hist_add(struct probe_hist *h, uint64_t us)
{
    h->b[hist_bucket(us)]++;
    h->count++;
}

/* Smallest bucket bound below which p percent of the samples lie. */
uint64_t probe_hist_percentile(const struct probe_hist *h, double p)
{
    uint64_t want = (uint64_t)ceil((double)h->count * p / 100.0), seen = 0;

    if (want == 0)
        want = 1;
    for (unsigned i = 0; i < PROBE_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= want)
            return hist_upper(i);
    }
    return 0;
}

/* ---- memory ---- */

/* A field of /proc/self/status in KiB, or -1. */
long probe_status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char *line = NULL;
    size_t cap = 0, n = strlen(field);
    long v = -1;

    if (!f)
        return -1;
    while (getline(&line, &cap, f) > 0) {
        if (!strncmp(line, field, n) && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    free(line);
    fclose(f);
    return v;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0). */
bool probe_reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    bool ok;

    if (!f)
        return false;
    ok = fputs("5", f) >= 0;
    ok &= fclose(f) == 0;
    return ok;
}

static long peak_rss_kib(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru))
        return -1;
    return ru.ru_maxrss; /* KiB on Linux */
}

double probe_clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double probe_now_ms(void)
{
    return probe_clock_ms(CLOCK_MONOTONIC);
}

/* The highest RSS seen so far. Resetting VmHWM (probe_reset_hwm) also lowers
 * what ru_maxrss reports, so the process peak is tracked here: read it
 * before every reset and at the end. */
static long peak_seen_kib;

void probe_note_peak(void)
{
    long v = MU_MAX(peak_rss_kib(), probe_status_kib("VmHWM"));

    if (v > peak_seen_kib)
        peak_seen_kib = v;
}

double probe_peak_mib(void)
{
    probe_note_peak();
    return (double)peak_seen_kib / 1024;
}


static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

double probe_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
