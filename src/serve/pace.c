#include "serve/pace.h"

static void show(struct mu_pace *p)
{
    atomic_store(&p->shown, p->window);
}

void mu_pace_init(struct mu_pace *p)
{
    p->window = MU_PACE_START;
    p->grown = p->shrunk = 0;
    show(p);
}

void mu_pace_bound(struct mu_pace *p, int n)
{
    if (n < 1 || p->window >= MU_PACE_MAX)
        return;
    p->window = p->window + (size_t)n > MU_PACE_MAX ? MU_PACE_MAX
                                                     : p->window + (size_t)n;
    p->grown++;
    show(p);
}

void mu_pace_timed_out(struct mu_pace *p)
{
    size_t half = p->window / 2;

    if (p->window <= MU_PACE_MIN)
        return;
    p->window = half < MU_PACE_MIN ? MU_PACE_MIN : half;
    p->shrunk++;
    show(p);
}

size_t mu_pace_window(struct mu_pace *p)
{
    return atomic_load(&p->shown);
}
