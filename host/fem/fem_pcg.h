/* PCG internals shared by the step (internal; the stage API is in cofem/fem.h). */
#ifndef COFEM_FEM_PCG_H
#define COFEM_FEM_PCG_H
#include "cofem/fem.h"

/* Nodes per chunk of the fused warm-start sums (fixed chunks summed in order: thread-independent). */
enum { CF_WARM_CHUNK = 512 };

/* Starting guess of the PCG (the warm start): d->v = c0 v0 + c1 v1 minimising the energy of
 * A v = b over span{v0, v1} (cf_warm_coefficients in fem_element.h), v0 = d->v and v1 the
 * velocities of the step before, both projected on the free DOFs in place; d->v = 0 when |b| is
 * already within the PCG's tolerance (cf_warm_start_needed). Needs d->A, d->b and d->b_scale;
 * leaves A v0 and A v1 in d->warm_Av0 and d->warm_Av1. cf_step passes d->warm_v1. */
void cf_pcg_warm_start(const cfModel* m, cfData* d, double* v1);

/* b and b_scale of backward Euler: b = M v0 + h (f_ext + M g - f_el), v0 = d->v, f_el = d->f_el
 * (fem_assemble.c; cf_stage_assemble_system and the matrix-free step). */
void cf_rhs_euler(const cfModel* m, cfData* d, double h);

/* Stage 2 and 3 of cf_step with the rotated-Cholesky preconditioner, backward Euler and the K_R
 * tangent: elastic force, b, node rotations, warm start and PCG with K_R applied element by
 * element (fem_element.h, cf_elem_apply_KR_mf); d->KR, d->A and d->Pinv are not formed. v1 as in
 * cf_pcg_warm_start; *t_assembled = wall time when the right side and preconditioner are ready.
 * Returns as cf_stage_pcg. */
int cf_step_solve_matfree(const cfModel* m, cfData* d, double* v1, double* t_assembled);

/* A = cm M + ck K_R + eps I applied element by element: G the rotated gradients of the current
 * element rotations ([9 ntet], cf_elem_rotated_gradients), ye scratch of [24 ntet]. */
typedef struct cfMatfreeOp {
  const double* G;
  double* ye;
  double cm, ck, eps;
} cfMatfreeOp;

/* y = A x, element by element (op) or assembled (A: block CSR of m, e.g. d->A) */
void cf_matfree_apply(const cfModel* m, const cfMatfreeOp* op, const double* x, double* y);
void cf_bsr_apply(const cfModel* m, const double* A, const double* x, double* y);

/* A d->v = d->b by the PCG with A applied by op (preconditioner d->precond or d->Pinv, clamped DOFs
 * as d->supports_active, tolerance as cf_stage_pcg with d->b_scale). v1 NULL: from d->v as it is
 * (the caller's start); else the two-vector warm start of d->v and v1 (cf_pcg_warm_start), both
 * projected in place. Returns as cf_stage_pcg. */
int cf_pcg_matfree(const cfModel* m, cfData* d, const cfMatfreeOp* op, double* v1);

/* nc <= CF_PCG_MULTI_MAX systems A x_c = b_c in lockstep (a mechanism part's interface columns):
 * each column's iterates are cf_pcg_matfree's from the start x_c (projected in place), with its own
 * tolerance scale b_scale[c]; each pass over the elements and over the preconditioner's copied
 * factor (cf_precond_apply_multi) serves every column still iterating. work: cf_pcg_multi_work(m,
 * nc) doubles. Each column's result is counted as cf_stage_pcg's (d->pcg_iters_total, warnings);
 * returns the worst status (an error before any warning). */
enum { CF_PCG_MULTI_MAX = 32 };
long cf_pcg_multi_work(const cfModel* m, int nc);
int cf_pcg_matfree_multi(const cfModel* m, cfData* d, const cfMatfreeOp* op, int nc, const double* const* b,
                         double* const* x, const double* b_scale, double* work);
#endif
