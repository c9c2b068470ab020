/* What the CPU step shares with the CUDA backend (kernels/fem_cuda.cu): the host-side pieces of a
 * step that both must do alike, so that a change on one side cannot leave the other behind.
 * Internal; the per-element and per-node bodies are in fem_element.h, the A coefficients are
 * cf_system_coefficients (fem_precond.h). */
#ifndef COFEM_FEM_BACKEND_H
#define COFEM_FEM_BACKEND_H
#include "cofem/fem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The end of a step that has advanced the state (fem_step.c): counts it (d->steps) and the
 * inverted-element warning. Returns st, or CF_WARN_INVERTED (with its message) where st is
 * CF_OK and d->ninverted > 0. */
int cf_step_finish(cfData* d, int st);

#ifdef __cplusplus
}
#endif
#endif
