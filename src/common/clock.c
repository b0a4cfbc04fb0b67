#include "common/clock.h"

int64_t mu_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t mu_now_ms(void)
{
    return mu_now_ns() / 1000000;
}

struct timespec mu_ns_to_timespec(int64_t ns)
{
    struct timespec ts;

    ts.tv_sec = (time_t)(ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    return ts;
}

int mu_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    int r;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    r = pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return r;
}

int64_t mu_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
