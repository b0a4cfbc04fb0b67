/*
 * ui.h - the read-only dashboard muster serve answers on GET /ui: one HTML
 * page with a little JavaScript, embedded in the binary (src/extender/
 * ui.html, made into C at build time by embed.py), no framework and no
 * fetch outside muster. It reads /debug/queues, /debug/gangs and
 * /debug/decisions every 3 s and draws queues (allocated against deserved
 * and capability, per resource, as bars), pending gangs with their reason,
 * wait and what would unblock them, running gangs per node, and the last
 * releases and evictions. Every value goes in as text (textContent), never
 * as markup.
 *
 * The DOM it keeps (what tests look for): tables #queues (rows
 * data-queue), #pending (rows data-gang="NS/NAME"), #nodes (data-node),
 * #decisions; #status says how many of each and when.
 */
#ifndef MU_EXTENDER_UI_H
#define MU_EXTENDER_UI_H

#include <stddef.h>

extern const char mu_ui_html[];
extern const size_t mu_ui_html_len;

#endif
