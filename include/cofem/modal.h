/* Modal analysis of a cofem model: the lowest eigenpairs of K phi = w^2 M phi on the free DOFs,
 * K the linear stiffness assembled from the element K_e (the model's rest state), M the model's
 * mass (lumped or consistent, as cfModelDef.consistent_mass says).
 *
 * Two solvers:
 *  - dense: LAPACKE_dsygvx on the full K and M of the free DOFs (exact to round-off; memory
 *    2 n^2 doubles and O(n^3) time, so meant for n up to a few thousand);
 *  - Lanczos: ARPACK's implicitly restarted Lanczos (dsaupd/dseupd, mode 3: shift-invert,
 *    generalised, which = "LM") on (K - sigma M)^-1 M in the M inner product, K - sigma M factored
 *    once by CHOLMOD. It finds the k eigenvalues nearest sigma, the k lowest for the default
 *    shift. Memory (max_basis + k + 4) * free DOFs doubles. ARPACK keeps its state in static
 *    variables: concurrent calls are serialised (an OpenMP critical section around the iteration).
 * CF_MODAL_AUTO takes dense up to dense_max free DOFs or when k > free DOFs / 3, Lanczos otherwise (and where the dense solver
 * finds the mass matrix not positive definite). k equal to the free DOFs always goes dense
 * (ARPACK needs k below them). */
#ifndef COFEM_MODAL_H
#define COFEM_MODAL_H
#include "cofem/fem.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cfModalMethod { CF_MODAL_AUTO = 0, CF_MODAL_DENSE = 1, CF_MODAL_LANCZOS = 2 };

/* Which mass matrix: the model's (lumped or consistent), or CalculiX's: CalculiX 2.20 integrates
 * the mass with its element's stiffness rule (e_c3d.f): one point for C3D4, rho V / 16 for every
 * node pair of an element (checked against ccx *FREQUENCY to all printed digits), and the 4-point
 * Gauss rule for C3D10 (degree 2, where N_a N_b is of degree 4: cofem's exact consistent mass is
 * 1e-5 .. 2e-4 off it in the frequencies; the rule matches ccx to its printed digits). Both are
 * stiffer than the consistent mass in the higher modes. CF_MODAL_MASS_ONE_POINT is the old name. */
enum cfModalMass { CF_MODAL_MASS_MODEL = 0, CF_MODAL_MASS_CALCULIX = 1, CF_MODAL_MASS_ONE_POINT = 1 };

typedef struct cfModalOptions {
  int method;     /* enum cfModalMethod */
  int mass;       /* enum cfModalMass (default: the model's) */
  int dense_max;  /* AUTO: dense up to this many free DOFs (default 100), and wherever k is over a
                   * third of them; Lanczos otherwise. Measured on 2 cores (best of 3, 6 / 12 / 24
                   * modes): 252-DOF bar dense 4.3 / 4.9 / 6.1 ms, Lanczos 0.4 / 0.6 / 1.1 ms; the
                   * 1236-DOF lug dense 0.27 / 0.23 / 0.24 s, Lanczos 6 / 8 / 13 ms; 2700-DOF beam
                   * dense 2.0 / 1.3 / 1.4 s, Lanczos 9 / 10 / 15 ms (frequencies equal to 1e-9).
                   * It was 2000 until the measurement (issue 30). */
  double shift;   /* Lanczos shift sigma [rad^2/s^2]: the k eigenvalues nearest it are found;
                   * NAN (default): 0 when the model has fixed DOFs, else a small negative shift
                   * (1e-4 of the mean diagonal K over the mean node mass below 0) so that K - sigma M
                   * is nonsingular and the rigid-body modes are found */
  double tol;     /* Lanczos: ARPACK's TOL, the residual estimate of each Ritz pair of
                   * (K - sigma M)^-1 M relative to its Ritz value (1e-10) */
  int max_basis;  /* Lanczos basis length kept between ARPACK's implicit restarts (its NCV),
                   * clamped to k + 1 .. free DOFs (0: min(free DOFs, max(2 k, k + 20))); the
                   * restarts are capped at 300 */
} cfModalOptions;

cfModalOptions cf_default_modal_options(void);

typedef struct cfModalInfo {
  int method;          /* the solver used (CF_MODAL_DENSE or CF_MODAL_LANCZOS) */
  int nfree;           /* free DOFs */
  int basis;           /* Lanczos basis length, ARPACK's NCV (0 for dense) */
  double max_residual; /* largest |K phi - w^2 M phi| / (w^2 |M phi|), w^2 at least 1e-3 of the largest */
  double seconds;      /* wall time */
  int iterations;      /* Lanczos: ARPACK's implicit restarts, IPARAM(3) on return (0 for dense) */
  int solves;          /* Lanczos: applications of (K - sigma M)^-1 M, IPARAM(9) (0 for dense) */
} cfModalInfo;

/* The k lowest eigenpairs. omega2[k]: eigenvalues w^2 [rad^2/s^2], ascending. modes: NULL or
 * [k * ndof], mode i at modes + i * ndof, M-normalised (phi^T M phi = 1), zero on fixed DOFs.
 * info: NULL or filled. Errors: k out of range (1 .. free DOFs), out of memory, singular
 * K - sigma M, ARPACK failure or no convergence within its restarts (CF_ERR_SOLVER, naming the
 * ARPACK info code and the pairs converged). */
int cf_modal_solve(const cfModel* m, int k, const cfModalOptions* opt, double* omega2, double* modes,
                   cfModalInfo* info);

/* The one-point-rule block mass (see enum cfModalMass) into Mblk [m->nnzb] (linear tetrahedra).
 * Its row sums equal the lumped node masses. */
void cf_mass_one_point(const cfModel* m, double* Mblk);
/* CalculiX's block mass (see enum cfModalMass) into Mblk [m->nnzb]: the one-point rule for linear
 * tetrahedra, the 4-point Gauss rule (cf_tet10_mass_gauss4) for quadratic ones. */
void cf_mass_calculix(const cfModel* m, double* Mblk);

#ifdef __cplusplus
}
#endif
#endif
