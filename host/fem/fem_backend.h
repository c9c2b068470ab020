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

/* The end of a PCG solve (fem_pcg.c; the GPU's from its device scalars): with status CF_OK or a
 * positive warning writes d->pcg_iters = it, d->pcg_residual = rnorm / max(|b|, b_scale),
 * d->pcg_iters_total, counts the warning and sets its message; returns status. Where status is
 * CF_ERR_ARG, or bnorm or b_scale is not finite (cf_pcg_target), writes nothing and returns
 * CF_ERR_ARG with "step N: the right side is not finite ...". */
int cf_pcg_result(const cfModel* m, cfData* d, int status, int it, double rnorm, double bnorm, double b_scale);

/* The host array of d behind one field bit of enum cfCudaField (cofem/cuda.h) and its length in
 * doubles, for a model of nnode nodes, ntet elements and nnzb blocks; NULL for zero bits, several
 * bits or an unknown one. CF_CUDA_B names d->b (its b_scale travels beside it). The upload and
 * download of kernels/fem_cuda.cu go through it. */
double* cf_cuda_field(cfData* d, int nnode, int ntet, int nnzb, int bit, size_t* count);

#ifdef __cplusplus
}
#endif
#endif
