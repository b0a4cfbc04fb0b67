/*
 * cel_eval.h - a selector compiled by mu_cel_compile (cel.h) evaluated
 * against one device. Pure and thread-safe on a tree nobody frees
 * meanwhile.
 */
#ifndef MU_API_CEL_EVAL_H
#define MU_API_CEL_EVAL_H

#include "api/cel.h"

/* 1 when the device is selected, 0 when not, -EINVAL when the evaluation
 * failed (err, if given, says why: "no attribute gpu.example.com/model").
 * A failed evaluation selects nothing. */
int mu_cel_eval(const struct mu_cel *e, const struct mu_cel_device *d,
                struct mu_err *err);

#endif
