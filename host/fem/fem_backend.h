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
 * doubles, for a model of nnode nodes, ntet elements of npe nodes and nnzb blocks; NULL for zero bits, several
 * bits or an unknown one. CF_CUDA_B names d->b (its b_scale travels beside it). The upload and
 * download of kernels/fem_cuda.cu go through it. */
double* cf_cuda_field(cfData* d, int nnode, int ntet, int npe, int nnzb, int bit, size_t* count);

/* The stages of a generalized-alpha step (fem_newton.c) on one backend: the CPU's in fem_newton.c,
 * the GPU's in kernels/fem_cuda.cu. The arrays (x, v, a, the (sub)step's start x0, v0, a0, f0 =
 * f_el(x0), its loads F0, F1, the increment du and the step's first increment du1) are the
 * backend's own; the shared driver cf_newton_step sees only norms, so the Newton bookkeeping
 * (coefficients, convergence tests, the PCG target, halving, counters, messages) is one code.
 * Each returns CF_OK or a negative status (CF_ERR_CUDA / CF_ERR_NOMEM: a backend failure, which
 * ends the step without halving). */
typedef struct cfNewtonOps {
  void* ctx;
  /* held DOFs' v, a = 0; a consistent with the state where it is not yet (M a = F(t) + M g -
   * f_el(x) - C v, F(t) = f_ext_prev; d->ga_ready or the backend's own flag); the step's start
   * kept (x is kept by the caller: d->mon_x0 on the CPU) */
  int (*step_begin)(void* ctx);
  /* the step failed: x, v, a as at its start, R and f0 = f_el of that x */
  int (*step_restore)(void* ctx);
  /* a (sub)step from fraction th0 to th1 of the step: x0, v0, a0 = x, v, a; F0, F1 = f_ext_prev
   * + th (f_ext - f_ext_prev) */
  int (*sub_begin)(void* ctx, double th0, double th1);
  /* it converged: f0 = f_el (of the new x) */
  int (*sub_accept)(void* ctx);
  /* it failed: x, v, a = x0, v0, a0 */
  int (*sub_restore)(void* ctx);
  /* x = x0 + h v0 + h^2/2 a0 on the free DOFs, x0 on the held ones */
  int (*predict)(void* ctx, double h);
  /* a, v from x by the Newmark relations (par: alpha_m, alpha_f, gamma, beta), polar, elastic,
   * r = M a_m + C v_f + f_el,f - F_f - M g; out[6]: |M a_m|^2, |C v_f|^2, |f_el,f|^2,
   * |F_f + M g|^2 and |r|^2 over the free DOFs, |x - x0|^2 */
  int (*residual)(void* ctx, const double* par, double h, double* out);
  /* A du = -s r with A = cm M + ck T, the PCG's target pcg_tol max(|b|, b_scale), started from
   * du1 (first: the step's first iteration) or the last du, scaled by the warm start; first:
   * du1 = du after; x += du; |du|^2 over the free DOFs into dx2, the PCG iterations (d->pcg_iters
   * of each solve, summed) into pcg_iters; returns the PCG's status */
  int (*solve)(void* ctx, double cm, double ck, double s, double b_scale, int first, double* dx2, int* pcg_iters);
} cfNewtonOps;

/* One generalized-alpha step of d->def.dt from f_ext_prev (at t) to f_ext (at t + h) through ops:
 * Newton iterations, halving on failure (at most newton_max_cuts deep), d->newton_iters,
 * newton_iters_total, newton_residual, step_cuts, pcg_iters (the step's), CF_WARN_STEP_CUT;
 * CF_ERR_DIVERGED with the message naming step, time and what to try, the state restored. Does not
 * advance d->t or f_ext_prev (the caller's end of the step). */
int cf_newton_step(const cfModel* m, cfData* d, const cfNewtonOps* ops);

#ifdef __cplusplus
}
#endif
#endif
