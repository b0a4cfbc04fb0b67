/*
 * cel.h - the subset of CEL that DRA device selectors use, compiled once and
 * evaluated against one device at a time.
 *
 * Dynamic Resource Allocation (resource.k8s.io/v1) selects devices with CEL
 * expressions over a `device` variable: its `driver` (a string), its
 * `attributes` and its `capacity`, both maps from a domain to a map of
 * names. Real DeviceClasses and claims use a small part of CEL; muster
 * evaluates exactly that part and refuses the rest at compile time with a
 * message naming it, so a selector is never guessed:
 *
 *   device.driver == "gpu.example.com"
 *   device.attributes["gpu.example.com"].model == "H100"
 *   device.attributes["gpu.example.com"]["model"] != "A100"
 *   device.attributes["gpu.example.com"].count >= 4        (int attributes)
 *   device.attributes["gpu.example.com"].mig == true       (bool attributes)
 *   device.attributes["gpu.example.com"].ok                (a bool on its own)
 *   device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0
 *   "model" in device.attributes["gpu.example.com"]
 *   a && b, a || b, !a, (a), true, false
 *
 * Comparisons: == and != on strings, ints and bools; <, <=, >, >= on ints
 * and strings (bytewise); compareTo() returns -1, 0 or 1 and is compared
 * with an int literal. String literals take "..." or '...' with the escapes
 * \" \' \\ \n \t. Int literals are decimal, optionally negative.
 *
 * Semantics follow CEL: && and || are commutative about errors (false &&
 * error is false, true || error is true); looking up an attribute or
 * capacity the device does not have is an evaluation error, as in
 * Kubernetes, and an expression that errors does not select the device.
 * Comparing values of different types (an int attribute with a string) is
 * an error too.
 *
 * Ownership: mu_cel_compile returns a tree the caller frees with
 * mu_cel_free (NULL is fine). Evaluation is pure and thread-safe on a
 * compiled tree nobody frees meanwhile.
 */
#ifndef MU_API_CEL_H
#define MU_API_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/mu.h"

/* Longest selector muster compiles, in bytes (the API allows 10 Ki). */
#define MU_CEL_MAX_LEN 10240
/* Deepest nesting of parentheses and operators. */
#define MU_CEL_MAX_DEPTH 64

enum mu_cel_kind {
    MU_CEL_STRING,
    MU_CEL_INT,
    MU_CEL_BOOL,
    MU_CEL_VERSION, /* a semver string; compared only with == and != */
};

/* One attribute of a device. name is qualified: "domain/name"; a
 * ResourceSlice attribute without a domain belongs to the driver's. */
struct mu_cel_attr {
    char *name;
    enum mu_cel_kind kind;
    char *s;   /* STRING, VERSION */
    int64_t i; /* INT */
    bool b;    /* BOOL */
};

/* One capacity of a device, qualified like an attribute; value in
 * milli-units (a quantity's MilliValue), so "80Gi" and "500m" compare
 * exactly. */
struct mu_cel_cap {
    char *name;
    int64_t milli;
};

/* What a selector sees. Sorted or not, looked up by exact name. */
struct mu_cel_device {
    const char *driver;
    size_t nattrs;
    const struct mu_cel_attr *attrs;
    size_t ncaps;
    const struct mu_cel_cap *caps;
};

struct mu_cel;

/* Compiles src. NULL with err set ("unsupported: method isGreaterThan",
 * "syntax error at offset 12: expected ')'", "too long") when src is
 * outside the subset above or not CEL. */
struct mu_cel *mu_cel_compile(const char *src, struct mu_err *err);
void mu_cel_free(struct mu_cel *e);

/* Evaluating a compiled selector: api/cel_eval.h. */

#endif
