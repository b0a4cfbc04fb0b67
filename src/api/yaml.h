/*
 * yaml.h - YAML documents (as users write them for kubectl) to jansson.
 *
 * Turns a multi-document YAML stream into one json_t per document, typed the
 * way kubectl's sigs.k8s.io/yaml types it (YAML 1.1 as go-yaml v2 reads it):
 * plain `null`, `~` and empty scalars are null; true/false/yes/no/on/off (any
 * case form go-yaml accepts) are booleans; decimal, 0x and 0o/leading-0
 * integers that fit int64 are integers; other numbers (1.5, 2e3, .inf) are
 * reals; everything quoted or otherwise is a string. Mapping keys are always
 * strings. Aliases are expanded (a copy per use); `<<` merge keys are
 * applied. Empty documents (only comments, or `---` alone) are skipped.
 *
 * JSON is YAML, so the same function reads JSON files.
 *
 * Ownership: every returned json_t is a new reference owned by the caller;
 * mu_yaml_docs_release() drops them all.
 */
#ifndef MU_API_YAML_H
#define MU_API_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "common/mu.h"

/* Largest YAML input read from one file or buffer. */
#define MU_YAML_MAX_BYTES (64u << 20)
/* Deepest nesting of mappings and sequences accepted. */
#define MU_YAML_MAX_DEPTH 64
/* Most alias expansions in one document (billion-laughs guard). */
#define MU_YAML_MAX_ALIASES 10000

/* Mapping keys whose line one document remembers (mu_yaml_key_line); the
 * keys past it answer the document's line. */
#define MU_YAML_MAX_LINE_KEYS 1000000

struct mu_yaml_doc {
    json_t *root;  /* owned */
    int line;      /* 1-based line where the document's content starts */
    json_t *lines; /* owned: where each mapping key was written (below) */
};

struct mu_yaml_docs {
    size_t n;
    size_t cap;
    struct mu_yaml_doc *v;
};

void mu_yaml_docs_init(struct mu_yaml_docs *d);
void mu_yaml_docs_release(struct mu_yaml_docs *d);

/*
 * Parses buf[0..len) and appends its documents to docs. `name` names the
 * input in error messages. On a syntax error returns -EINVAL with err like
 * "jobs.yaml:12:5: mapping values are not allowed in this context" (a tab
 * where indentation goes adds "; YAML indents with spaces, not tabs") and
 * leaves docs exactly as it was (documents before the error are not kept).
 * Inputs larger than MU_YAML_MAX_BYTES, deeper than MU_YAML_MAX_DEPTH or with
 * more than MU_YAML_MAX_ALIASES alias uses are refused with -E2BIG.
 */
int mu_yaml_parse(const char *name, const char *buf, size_t len,
                  struct mu_yaml_docs *docs, struct mu_err *err) MU_WARN_UNUSED;

/* Reads the file at path (or standard input when path is "-") and parses
 * it as above. -errno from open/read, with err naming the path. */
int mu_yaml_parse_file(const char *path, struct mu_yaml_docs *docs,
                       struct mu_err *err) MU_WARN_UNUSED;

/* The 1-based line of key in mapping obj of document d (obj is a node of
 * d->root), or 0 when it is not known (a key from an alias or merge). */
int mu_yaml_key_line(const struct mu_yaml_doc *d, const json_t *obj,
                     const char *key);

/* The line of the field a path names in d ("spec.tasks[1].replicas", as
 * decoders name fields in their errors): of the deepest key of the path
 * that exists, else d->line. */
int mu_yaml_path_line(const struct mu_yaml_doc *d, const char *path);

/* Formats a JSON real the shortest way that reads back to the same double
 * (0.1 -> "0.1", 1e+21 -> "1e+21"), as Go's encoding/json would print it.
 * Writes into buf of n bytes; returns buf. */
char *mu_json_real_text(double v, char *buf, size_t n);

#endif
