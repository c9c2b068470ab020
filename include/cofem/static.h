/* Nonlinear statics of the co-rotational model by load increments with equilibrium iterations,
 * and the linear solution for comparison. Sparse direct solves: CHOLMOD for the symmetric K_R
 * tangent, UMFPACK for the (non-symmetric) consistent co-rotational tangent. */
#ifndef COFEM_STATIC_H
#define COFEM_STATIC_H
#include "cofem/fem.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cfTangent {
  CF_TANGENT_KR = 0,         /* K_R = R K_e R^T only (paper 003): stalls at very large rotations */
  CF_TANGENT_CONSISTENT = 1  /* K_R plus the derivative of R (quadratic convergence) */
};

typedef struct cfStaticOptions {
  int increments;   /* equal load increments to reach the full load */
  double tol;       /* converged when |r| <= tol |f| on the free DOFs */
  int max_iter;     /* equilibrium iterations per increment before the increment is cut */
  int tangent;      /* enum cfTangent */
  int max_cuts;     /* times an increment may be halved */
} cfStaticOptions;

cfStaticOptions cf_default_static_options(void);

/* Called after every converged increment; return non-zero to stop. */
typedef int (*cfStaticCallback)(double load_factor, int iterations, const cfModel* m,
                                const cfData* d, void* user);

/* Apply f_total ([ndof], nodal forces) in increments from the current state d->x (normally the
 * rest shape). On return d->x is the deformed shape at the last converged load factor. Returns
 * CF_OK, CF_WARN_STATIC_NOT_CONVERGED (increment could not be converged even after cutting; d->x
 * is the last converged state) or an error (singular stiffness: the part is not supported). */
int cf_static_solve(const cfModel* m, cfData* d, const double* f_total, const cfStaticOptions* opt,
                    cfStaticCallback cb, void* user);

/* The rigid-body motions that the fixed DOFs leave free: the six rigid modes (translations along
 * x, y, z; rotations about x, y, z through the centroid of the held nodes) projected onto the
 * fixed DOFs; their null space. Returns its dimension (0: the part is held) and, in names (may be
 * NULL), e.g. "translation along x, rotation about z" (other combinations spelled out). One
 * connected part is assumed. cf_static_solve and cf_linear_static refuse a part with free modes
 * (CF_ERR_SOLVER, the modes named) before anything is factored. */
int cf_model_free_rigid_modes(const cfModel* m, char* names, size_t n);

/* Linear FEM: d->x = X + K^-1 f (K the unrotated stiffness). */
int cf_linear_static(const cfModel* m, cfData* d, const double* f_total);

/* Consistent co-rotational tangent of one element: K_T = R K_e R^T + d(R)/dx terms, from the
 * current R and x. Kt is 12x12 row-major (30x30 for 10-node elements, whose R is the corners'
 * frame's). Exposed for the finite-difference test. */
void cf_elem_consistent_tangent(const cfModel* m, const cfData* d, int e, double* Kt);

#ifdef __cplusplus
}
#endif
#endif
