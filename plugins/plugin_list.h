/*
 * plugin_list.h - every plugin muster has, in registry order: the one list
 * the registry (plugins.c: mu_plugins[]) and the configuration parser
 * (sched/conf.c: the names it accepts) are both made from.
 *
 * X(name) per plugin: `name` is the plugin's name in a configuration and
 * the stem of its struct, mu_plugin_<name> in plugins/<name>.c, whose
 * .name must spell the same (test_plugins checks). Adding a plugin is one
 * line here plus its file.
 *
 * Header only, no declarations: including it adds no dependency on the
 * plugins, so the parser can use it without linking them.
 */
#ifndef MU_PLUGIN_LIST_H
#define MU_PLUGIN_LIST_H

#define MU_PLUGIN_LIST(X)                                                     \
    X(priority)                                                               \
    X(gang)                                                                   \
    X(conformance)                                                            \
    X(overcommit)                                                             \
    X(drf)                                                                    \
    X(predicates)                                                             \
    X(proportion)                                                             \
    X(capacity)                                                               \
    X(nodeorder)                                                              \
    X(binpack)

#endif
