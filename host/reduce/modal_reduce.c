/* Craig-Bampton reduction (see cofem/reduce.h and docs/craig-bampton.md). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cofem/reduce.h"
#include "fem/fem_element.h"
#include "fem/fem_sparse.h"
#include "reduce/reduce_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

cfReduceOptions cf_default_reduce_options(void) {
  cfReduceOptions o;
  o.nmodes = 12;
  o.orthonormalise = 1;
  o.damping = 0.01;
  o.rigid_tol = 1e-8;
  o.max_modes = 0;
  o.geometric = 0;
  o.modal = cf_default_modal_options();
  return o;
}

void cf_reduction_free(cfReduction* r) {
  if (!r) return;
  free(r->bnodes); free(r->bdof); free(r->fixed_omega2); free(r->basis); free(r->Kr); free(r->Mr);
  free(r->omega2); free(r->zeta); free(r->P); free(r->T); free(r->S); free(r->Kg);
  for (int k = 0; r->points && k < r->npoint; k++) free(r->points[k].nodes), free(r->points[k].motion);
  free(r->points);
  memset(r, 0, sizeof *r);
}

double cf_reduction_freq_hz(const cfReduction* r, int i) {
  double w2 = r->omega2[i];
  return (w2 < 0 ? -1.0 : 1.0) * sqrt(fabs(w2)) / (2 * M_PI);
}

void cf_reduction_displacement(const cfReduction* r, const double* q, double* u) {
  memset(u, 0, sizeof(double) * r->ndof);
  for (int j = 0; j < r->n; j++) {
    const double* b = r->basis + (size_t)j * r->ndof;
    double qj = q[j];
    if (qj == 0.0) continue;
    for (int i = 0; i < r->ndof; i++) u[i] += qj * b[i];
  }
}

double cf_reduction_fingerprint(const cfModel* m) {
  double s = 0;
  for (int i = 0; i < m->ndof; i++) s += m->X[i] * (1 + i % 7);
  return s;
}

/* y = A x with 3x3 blocks A (or scalar blocks times I when scalar) */
void cf__reduce_block_mv(const cfModel* m, const double* A, int scalar, const double* x, double* y) {
  for (int i = 0; i < m->nnode; i++) {
    double s[3] = {0, 0, 0};
    for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
      const double* xj = x + 3 * m->col[k];
      if (scalar) {
        s[0] += A[k] * xj[0]; s[1] += A[k] * xj[1]; s[2] += A[k] * xj[2];
      } else {
        const double* B = A + 9 * (size_t)k;
        for (int r = 0; r < 3; r++) s[r] += B[3 * r] * xj[0] + B[3 * r + 1] * xj[1] + B[3 * r + 2] * xj[2];
      }
    }
    y[3 * i] = s[0]; y[3 * i + 1] = s[1]; y[3 * i + 2] = s[2];
  }
}

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

static double adams_damping(double hz) { return hz < 100 ? 0.01 : hz < 1000 ? 0.1 : 1.0; }

void cf_reduction_set_damping(cfReduction* r, double damping) {
  for (int i = 0; i < r->n; i++)
    r->zeta[i] = i < r->nrigid ? 0.0 : damping >= 0 ? damping : adams_damping(cf_reduction_freq_hz(r, i));
}

/* interface nodes (sorted, unique) and DOFs; fixed_i: the model's fixed DOFs and the interface's */
static int reduce_interface(const cfModel* m, const int* bnodes_in, int nbnode_in, cfReduction* r,
                            unsigned char* fixed_i, int* nfixed_i) {
  const int ndof = m->ndof;
  if (nbnode_in > 0) memcpy(r->bnodes, bnodes_in, sizeof(int) * nbnode_in); /* NULL when none */
  qsort(r->bnodes, nbnode_in, sizeof(int), cmp_int);
  for (int i = 0; i < nbnode_in; i++)
    if (r->nbnode == 0 || r->bnodes[r->nbnode - 1] != r->bnodes[i]) r->bnodes[r->nbnode++] = r->bnodes[i];
  r->bdof = malloc(sizeof(int) * (3 * r->nbnode + 1));
  if (!r->bdof) return cf_error(CF_ERR_NOMEM, "reduce: out of memory");
  for (int i = 0; i < r->nbnode; i++)
    for (int a = 0; a < 3; a++) {
      int d = 3 * r->bnodes[i] + a;
      if (!m->fixed[d]) r->bdof[r->nb++] = d;
    }
  *nfixed_i = 0;
  for (int d = 0; d < ndof; d++) fixed_i[d] = m->fixed[d];
  for (int i = 0; i < r->nb; i++) fixed_i[r->bdof[i]] = 1;
  for (int d = 0; d < ndof; d++) *nfixed_i += fixed_i[d];
  return CF_OK;
}

/* the reduction's arrays for a basis of r->n vectors */
static int alloc_reduction(cfReduction* r) {
  const int n = r->n, ndof = r->ndof;
  r->basis = calloc((size_t)n * ndof, sizeof(double));
  r->fixed_omega2 = malloc(sizeof(double) * (r->nk + 1));
  r->Kr = malloc(sizeof(double) * (size_t)n * n);
  r->Mr = malloc(sizeof(double) * (size_t)n * n);
  r->omega2 = malloc(sizeof(double) * n);
  r->zeta = malloc(sizeof(double) * n);
  r->P = malloc(sizeof(double) * 3 * (size_t)n);
  r->T = malloc(sizeof(double) * 9 * (size_t)n);
  r->S = malloc(sizeof(double) * 9 * (size_t)n * n);
  if (!r->basis || !r->fixed_omega2 || !r->Kr || !r->Mr || !r->omega2 || !r->zeta || !r->P || !r->T || !r->S)
    return cf_error(CF_ERR_NOMEM, "reduce: out of memory for %d modes of %d DOFs", n, ndof);
  return CF_OK;
}

/* 1. constraint modes: u_b = e_j, K_ii u_i = -K_ib e_j (one CHOLMOD factor, nb solves) */
static int constraint_modes(const cfModel* m, cfReduction* r, const double* Kb, const unsigned char* fixed_i) {
  if (r->nb == 0) return CF_OK;
  const int ndof = m->ndof;
  double *rhs = malloc(sizeof(double) * ndof), *x = malloc(sizeof(double) * ndof);
  cfSparseSolver sp;
  int st = !rhs || !x ? cf_error(CF_ERR_NOMEM, "reduce: out of memory") : cf_sparse_init(m, 1, &sp);
  const int sp_init = rhs && x;
  if (st < 0) goto done;
  st = cf_sparse_factor(&sp, Kb, fixed_i);
  /* CHOLMOD may well factor a singular K_ii in floating point: look at the pivots */
  double rc = st < 0 ? 0.0 : cholmod_rcond(sp.L, &sp.cc);
  if (st < 0 || !(rc > 1e-13)) {
    st = cf_error(CF_ERR_SOLVER, "reduce: K_ii is singular (rcond %.1e): the interface (%d nodes) and the supports "
                  "do not hold the part against rigid-body motion", rc, r->nbnode);
    goto done;
  }
  for (int j = 0; j < r->nb; j++) {
    int dj = r->bdof[j], nj = dj / 3, cj = dj % 3;
    memset(rhs, 0, sizeof(double) * ndof);
    /* column dj of K: K(3i+r, dj) = block (nj, i) entry (cj, r), found in row nj */
    for (int q = m->row_ptr[nj]; q < m->row_ptr[nj + 1]; q++) {
      int i = m->col[q];
      for (int rr = 0; rr < 3; rr++)
        if (!fixed_i[3 * i + rr]) rhs[3 * i + rr] = -Kb[9 * (size_t)q + 3 * cj + rr];
    }
    st = cf_sparse_solve(&sp, rhs, x);
    if (st < 0) goto done;
    double* col = r->basis + (size_t)j * ndof;
    for (int d = 0; d < ndof; d++) col[d] = fixed_i[d] ? 0.0 : x[d];
    col[dj] = 1.0;
    for (int d = 0; d < ndof; d++)
      if (!isfinite(col[d])) { st = cf_error(CF_ERR_SOLVER, "reduce: constraint mode %d is not finite (K_ii singular?)", j); goto done; }
  }
done:
  if (sp_init) cf_sparse_free(&sp);
  free(rhs); free(x);
  return st;
}

/* 2b. B M-orthonormalised in place (Gram-Schmidt, each vector twice against the ones before: as
 * stable as modified Gram-Schmidt), before the projection. Why: constraint modes of a slender part
 * with a compact interface are huge and nearly parallel (a unit displacement of one node of the
 * spin-up beam's 77 x 5 mm root face turns the 10 m beam by ~200 rad, its tip ~2000 m), so
 * B^T K B of them cancels: the quadratic beam's reduced free-free frequencies came out at 0.110 and
 * 0.649 Hz where the full model has 0.260 and 0.742 (a Rayleigh-Ritz value below the true one is
 * round-off). The span, and so the reduction, is the same. Only for the orthonormalised reduction:
 * the other keeps [Psi Phi] as the user asked. A vector that is dependent on the ones before (its
 * M-norm below 1e-10 of what it was) is an error: the basis has fewer directions than modes. */
static int orthonormalise_basis(const cfModel* m, cfReduction* r, const double* Mb) {
  const int n = r->n, ndof = m->ndof;
  double* w = malloc(sizeof(double) * (size_t)ndof);
  double* h = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!w || !h) { free(w); free(h); return cf_error(CF_ERR_NOMEM, "reduce: out of memory"); }
  int st = CF_OK;
  for (int j = 0; j < n && st == CF_OK; j++) {
    double* b = r->basis + (size_t)j * ndof;
    cf__reduce_block_mv(m, Mb, 1, b, w);
    const double n0 = cblas_ddot(ndof, b, 1, w, 1);
    for (int pass = 0; pass < 2 && j > 0; pass++) {
      cf__reduce_block_mv(m, Mb, 1, b, w);
      cblas_dgemv(CblasRowMajor, CblasNoTrans, j, ndof, 1.0, r->basis, ndof, w, 1, 0.0, h, 1);
      cblas_dgemv(CblasRowMajor, CblasTrans, j, ndof, -1.0, r->basis, ndof, h, 1, 1.0, b, 1);
    }
    cf__reduce_block_mv(m, Mb, 1, b, w);
    const double n1 = cblas_ddot(ndof, b, 1, w, 1);
    if (!(n1 > 1e-20 * n0) || !isfinite(n1))
      st = cf_error(CF_ERR_SOLVER, "reduce: basis vector %d of %d (%s) depends on the ones before it", j + 1, n,
                    j < r->nb ? "a static mode" : "a normal mode");
    else
      cblas_dscal(ndof, 1 / sqrt(n1), b, 1);
  }
  free(w); free(h);
  return st;
}

/* 3. K_r = B^T K B, M_r = B^T M B (B stored transposed: n x ndof, row-major) */
static int project_basis(const cfModel* m, cfReduction* r, const double* Kb, const double* Mb) {
  const int n = r->n, ndof = m->ndof;
  double* KB = malloc(sizeof(double) * (size_t)n * ndof);
  double* MB = malloc(sizeof(double) * (size_t)n * ndof);
  if (!KB || !MB) {
    free(KB); free(MB);
    return cf_error(CF_ERR_NOMEM, "reduce: out of memory for %d modes of %d DOFs", n, ndof);
  }
  for (int j = 0; j < n; j++) {
    cf__reduce_block_mv(m, Kb, 0, r->basis + (size_t)j * ndof, KB + (size_t)j * ndof);
    cf__reduce_block_mv(m, Mb, 1, r->basis + (size_t)j * ndof, MB + (size_t)j * ndof);
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, ndof, 1.0, r->basis, ndof, KB, ndof, 0.0, r->Kr, n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, ndof, 1.0, r->basis, ndof, MB, ndof, 0.0, r->Mr, n);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double k = 0.5 * (r->Kr[i * n + j] + r->Kr[j * n + i]), mm = 0.5 * (r->Mr[i * n + j] + r->Mr[j * n + i]);
      r->Kr[i * n + j] = r->Kr[j * n + i] = k;
      r->Mr[i * n + j] = r->Mr[j * n + i] = mm;
    }
  free(KB);
  free(MB);
  return CF_OK;
}

/* The rigid motions the basis B holds, found by their shape. A free part's constraint modes span
 * its six rigid motions (a part clamped at one node, the three rotations about it), and they are
 * the reduced eigenproblem's zero eigenvalues; but a tolerance on w^2 cannot tell them from slow
 * elastic modes: the old rule, |w^2| <= 1e-10 max |w^2|, took the quadratic spin-up beam's free
 * bending modes up to 18 Hz for rigid motions (its stiffest constraint mode is at 1e6 Hz, 1e-10
 * of whose w^2 is 10 Hz), and the modal body, which skips its rigid modes, lost seven elastic ones
 * (the tip 48% off the corotational body; with geometric stiffening, a leading matrix not positive
 * definite at 2.1 s). The six rigid fields R (translations, rotations about the nodes' centroid)
 * are fitted in span(B) by M-weighted least squares, G = B M R^T, a = M_r^-1 G; the fit's residual
 * Gram E = e M e^T, e = R - a^T B, against R M R^T, has a null vector for every rigid motion in span(B):
 * eigenvalues (shares of the field's M-norm outside the basis) at most rigid_tol. Those motions'
 * coefficients go into A (n x 6, row-major, the first *nr columns). Returns CF_OK or an error. */
static int rigid_in_basis(const cfModel* m, const cfReduction* r, const double* Mb, double rigid_tol, double* A, int* nr) {
  const int n = r->n, ndof = m->ndof, nnode = m->nnode;
  int st = CF_OK;
  double* R = calloc(6 * (size_t)ndof, sizeof(double));  /* [6][ndof] */
  double* MR = malloc(sizeof(double) * 6 * (size_t)ndof);
  double* G = malloc(sizeof(double) * 6 * (size_t)n);    /* [n][6] */
  double* Mf = malloc(sizeof(double) * (size_t)n * n);
  int* all = malloc(sizeof(int) * (size_t)(nnode > 0 ? nnode : 1));
  double RMR[36], E[36], mu[6];
  cfPointGeometry whole;
  *nr = 0;
  if (!R || !MR || !G || !Mf || !all) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
  /* the six rigid fields: the unit motions of the whole mesh as one rigid point about its centroid
   * (only the nodes and the centroid: the motions need no I_w^-1, which a very slender mesh would
   * refuse as collinear) */
  memset(&whole, 0, sizeof whole);
  whole.nodes = all, whole.nnode = nnode;
  for (int p = 0; p < nnode; p++) {
    all[p] = p;
    for (int a = 0; a < 3; a++) whole.x[a] += m->X[3 * p + a] / nnode;
  }
  for (int k = 0; k < 6; k++) cf__point_rigid_motion(m, &whole, k, R + (size_t)k * ndof);
  for (int k = 0; k < 6; k++) cf__reduce_block_mv(m, Mb, 1, R + (size_t)k * ndof, MR + (size_t)k * ndof);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, 6, ndof, 1.0, r->basis, ndof, MR, ndof, 0.0, G, 6);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 6, 6, ndof, 1.0, R, ndof, MR, ndof, 0.0, RMR, 6);
  memcpy(Mf, r->Mr, sizeof(double) * (size_t)n * n);
  memcpy(A, G, sizeof(double) * 6 * (size_t)n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, Mf, n) != 0 || LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, 6, Mf, n, A, 6) != 0) {
    st = cf_error(CF_ERR_SOLVER, "reduce: the reduced mass is not positive definite: the basis is dependent");
    goto done;
  }
  /* the residual fields e = R - a^T B and E = e M e^T formed from them: R M R^T - G^T a cancels to
   * 1e-6 of R M R^T on the quadratic beam (its constraint modes make M_r ill-conditioned) */
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 6, ndof, n, -1.0, A, 6, r->basis, ndof, 1.0, R, ndof);
  for (int k = 0; k < 6; k++) cf__reduce_block_mv(m, Mb, 1, R + (size_t)k * ndof, MR + (size_t)k * ndof);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 6, 6, ndof, 1.0, R, ndof, MR, ndof, 0.0, E, 6);
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++) E[6 * i + j] = E[6 * j + i] = 0.5 * (E[6 * i + j] + E[6 * j + i]);
  /* E y = mu RMR y, ascending; y RMR-normalised, so A y is a unit-M-norm rigid motion when mu ~ 0 */
  if (LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', 6, E, 6, RMR, 6, mu) != 0) {
    st = cf_error(CF_ERR_SOLVER, "reduce: the rigid-motion fit failed (the mesh has no extent?)");
    goto done;
  }
  while (*nr < 6 && mu[*nr] <= rigid_tol) (*nr)++;
  /* A <- A Y (the first nr columns), Y = E's eigenvectors */
  for (int i = 0; i < n; i++) {
    double row[6];
    for (int k = 0; k < 6; k++) {
      double s = 0;
      for (int l = 0; l < 6; l++) s += A[6 * (size_t)i + l] * E[6 * l + k];
      row[k] = s;
    }
    memcpy(A + 6 * (size_t)i, row, sizeof row);
  }
done:
  free(R); free(MR); free(G); free(Mf); free(all);
  return st;
}

int cf__reduction_rigid_count(const cfModel* m, const cfReduction* r, double rigid_tol) {
  double* A = malloc(sizeof(double) * 6 * (size_t)(r->n > 0 ? r->n : 1));
  if (!A) return cf_error(CF_ERR_NOMEM, "reduce: out of memory");
  int nr = 0, st = rigid_in_basis(m, r, m->Mblk, rigid_tol, A, &nr);
  free(A);
  return st < 0 ? st : nr;
}

int cf_reduction_interface_rotations(const cfReduction* r, const double* X, double* theta) {
  if (r->nbnode < 3 || r->npoint > 0 || r->nrigid != 6 || !r->basis) return 0;
  /* the interface as one rigid point's set (reduce_points.c's fit; it reads only the positions) */
  cfModel mx;
  memset(&mx, 0, sizeof mx);
  mx.X = (double*)X;
  cfPointGeometry g;
  if (cf__point_geometry(&mx, r->bnodes, r->nbnode, &g) < 0) { /* collinear: no rotation about their line */
    cf_clear_error();
    return 0;
  }
  for (int j = 0; j < r->n; j++) {
    double p[6];
    cf__point_fit(&mx, &g, r->basis + (size_t)j * r->ndof, p);
    memcpy(theta + 3 * (size_t)j, p + 3, sizeof(double) * 3);
  }
  return 1;
}

/* 4. the reduced eigenproblem K_r Q = M_r Q Lambda; orthonormalise B <- B Q. The rigid motions
 * (rigid_in_basis) are set aside first: Q = [A, C Q_c], A those motions M_r-orthonormalised
 * (w^2 = 0 exactly), C an orthonormal basis of the vectors M_r-orthogonal to them (the last n - nr
 * columns of a full QR of M_r A), Q_c the eigenvectors of (C^T K_r C, C^T M_r C): the slow elastic
 * modes are then never mixed with the rigid ones by round-off (eps max w^2 is 4e-3 rad^2/s^2 on
 * the quadratic beam, its first bending mode 0.06). */
static int reduced_eigen(const cfModel* m, cfReduction* r, const cfReduceOptions* opt, const double* Mb) {
  const int n = r->n, ndof = m->ndof;
  int st = CF_OK, nr = 0;
  double* Q = malloc(sizeof(double) * (size_t)n * n);
  double* Mtmp = malloc(sizeof(double) * (size_t)n * n);
  double* A = malloc(sizeof(double) * 6 * (size_t)n);
  double *Bn = NULL, *C = NULL, *T = NULL, *Kc = NULL;
  if (!Q || !Mtmp || !A) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
  if ((st = rigid_in_basis(m, r, Mb, opt->rigid_tol, A, &nr)) < 0) goto done;
  const int nc = n - nr;
  if (nr == 0) {
    memcpy(Q, r->Kr, sizeof(double) * (size_t)n * n);
    memcpy(Mtmp, r->Mr, sizeof(double) * (size_t)n * n);
    int info = LAPACKE_dsygvd(LAPACK_ROW_MAJOR, 1, 'V', 'U', n, Q, n, Mtmp, n, r->omega2);
    if (info != 0) {
      st = cf_error(CF_ERR_SOLVER, "reduce: reduced eigenproblem failed (dsygvd info %d%s)", info,
                    info > n ? ": reduced mass not positive definite, the basis is dependent" : "");
      goto done;
    }
  } else {
    C = calloc((size_t)n * n, sizeof(double)); /* zeroed: LAPACKE_dorgqr checks all of it for NaN (its last
                                                  n - nr columns are outputs, and malloc's garbage failed it under ASan) */
    T = malloc(sizeof(double) * (size_t)n * n);
    Kc = malloc(sizeof(double) * (size_t)(nc > 0 ? nc : 1) * (nc > 0 ? nc : 1));
    double tau[6], g[36];
    if (!C || !T || !Kc) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
    /* A <- A L^-T, L L^T = A^T M_r A (A's nr columns, stride 6) */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nr, n, 1.0, r->Mr, n, A, 6, 0.0, T, nr); /* M_r A */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nr, nr, n, 1.0, A, 6, T, nr, 0.0, g, nr);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nr, g, nr) != 0) {
      st = cf_error(CF_ERR_SOLVER, "reduce: the rigid motions of the basis are dependent");
      goto done;
    }
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n, nr, 1.0, g, nr, A, 6);
    /* C: the last nc columns of the full QR of M_r A */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nr, n, 1.0, r->Mr, n, A, 6, 0.0, C, n);
    if (LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, n, nr, C, n, tau) != 0 || LAPACKE_dorgqr(LAPACK_ROW_MAJOR, n, n, nr, C, n, tau) != 0) {
      st = cf_error(CF_ERR_SOLVER, "reduce: the QR of the rigid motions failed");
      goto done;
    }
    const double* Cc = C + nr; /* n x nc, leading dimension n */
    if (nc > 0) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nc, n, 1.0, r->Kr, n, Cc, n, 0.0, T, nc);
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nc, nc, n, 1.0, Cc, n, T, nc, 0.0, Kc, nc);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nc, n, 1.0, r->Mr, n, Cc, n, 0.0, T, nc);
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nc, nc, n, 1.0, Cc, n, T, nc, 0.0, Mtmp, nc);
      for (int i = 0; i < nc; i++)
        for (int j = i + 1; j < nc; j++) {
          Kc[i * nc + j] = Kc[j * nc + i] = 0.5 * (Kc[i * nc + j] + Kc[j * nc + i]);
          Mtmp[i * nc + j] = Mtmp[j * nc + i] = 0.5 * (Mtmp[i * nc + j] + Mtmp[j * nc + i]);
        }
      int info = LAPACKE_dsygvd(LAPACK_ROW_MAJOR, 1, 'V', 'U', nc, Kc, nc, Mtmp, nc, r->omega2 + nr);
      if (info != 0) {
        st = cf_error(CF_ERR_SOLVER, "reduce: reduced eigenproblem failed (dsygvd info %d%s)", info,
                      info > nc ? ": reduced mass not positive definite, the basis is dependent" : "");
        goto done;
      }
    }
    /* Q = [A, C Q_c] */
    for (int i = 0; i < n; i++)
      for (int k = 0; k < nr; k++) Q[(size_t)i * n + k] = A[6 * (size_t)i + k];
    if (nc > 0)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nc, nc, 1.0, Cc, n, Kc, nc, 0.0, Q + nr, n);
    for (int k = 0; k < nr; k++) r->omega2[k] = 0;
  }
  r->nrigid = nr;
  cf_reduction_set_damping(r, opt->damping);
  if (opt->orthonormalise) {
    /* deterministic signs: the largest |component| of each B q_j positive */
    Bn = malloc(sizeof(double) * (size_t)n * ndof);
    if (!Bn) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, ndof, n, 1.0, Q, n, r->basis, ndof, 0.0, Bn, ndof);
    for (int j = 0; j < n; j++) {
      double* b = Bn + (size_t)j * ndof;
      int imax = 0;
      for (int d = 1; d < ndof; d++)
        if (fabs(b[d]) > fabs(b[imax]) * (1 + 1e-12)) imax = d;
      if (b[imax] < 0)
        for (int d = 0; d < ndof; d++) b[d] = -b[d];
    }
    free(r->basis);
    r->basis = Bn;
    Bn = NULL;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        r->Kr[i * n + j] = i == j ? r->omega2[i] : 0.0;
        r->Mr[i * n + j] = i == j ? 1.0 : 0.0;
      }
    r->orthonormal = 1;
  }
done:
  free(Q); free(Mtmp); free(Bn); free(A); free(C); free(T); free(Kc);
  return st;
}

/* 5. inertia invariants with the scalar mass coefficients M_pq */
static int invariants(const cfModel* m, cfReduction* r, const double* Mb) {
  const int n = r->n, ndof = m->ndof, nnode = m->nnode;
  const double* X = m->X;
  double y[3];
  r->mass = 0;
  memset(r->c, 0, sizeof r->c);
  memset(r->J, 0, sizeof r->J);
  double* rowsum = calloc(nnode, sizeof(double));
  double* MX = calloc(3 * (size_t)nnode, sizeof(double));         /* sum_p M_qp X_p */
  double* Phi = malloc(sizeof(double) * 3 * (size_t)n * nnode);    /* Phi_a: [a][j][p] */
  double* Wt = malloc(sizeof(double) * 3 * (size_t)n * nnode);     /* sum_p M_qp Phi_pj,b: [b][j][q] */
  if (!rowsum || !MX || !Phi || !Wt) {
    free(rowsum); free(MX); free(Phi); free(Wt);
    return cf_error(CF_ERR_NOMEM, "reduce: out of memory for the invariants");
  }
  for (int q = 0; q < nnode; q++) {
    y[0] = y[1] = y[2] = 0;
    for (int k = m->row_ptr[q]; k < m->row_ptr[q + 1]; k++) {
      int p = m->col[k];
      rowsum[q] += Mb[k];
      for (int a = 0; a < 3; a++) y[a] += Mb[k] * X[3 * p + a];
    }
    for (int a = 0; a < 3; a++) MX[3 * q + a] = y[a];
    r->mass += rowsum[q];
    for (int a = 0; a < 3; a++) {
      r->c[a] += rowsum[q] * X[3 * q + a];
      for (int b = 0; b < 3; b++) r->J[3 * a + b] += MX[3 * q + a] * X[3 * q + b];
    }
  }
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++) r->J[3 * a + b] = r->J[3 * b + a] = 0.5 * (r->J[3 * a + b] + r->J[3 * b + a]);
  for (int j = 0; j < n; j++) {
    const double* b = r->basis + (size_t)j * ndof;
    for (int a = 0; a < 3; a++) {
      double* ph = Phi + ((size_t)a * n + j) * nnode;
      for (int p = 0; p < nnode; p++) ph[p] = b[3 * p + a];
    }
    for (int a = 0; a < 3; a++) {
      double s = 0;
      for (int q = 0; q < nnode; q++) s += rowsum[q] * b[3 * q + a];
      r->P[a * n + j] = s;
      for (int bb = 0; bb < 3; bb++) {
        double t = 0;
        for (int q = 0; q < nnode; q++) t += MX[3 * q + a] * b[3 * q + bb];
        r->T[(a * 3 + bb) * n + j] = t;
      }
    }
    for (int bb = 0; bb < 3; bb++) {
      const double* ph = Phi + ((size_t)bb * n + j) * nnode;
      double* w = Wt + ((size_t)bb * n + j) * nnode;
      for (int q = 0; q < nnode; q++) {
        double s = 0;
        for (int k = m->row_ptr[q]; k < m->row_ptr[q + 1]; k++) s += Mb[k] * ph[m->col[k]];
        w[q] = s;
      }
    }
  }
  for (int a = 0; a < 3; a++)
    for (int bb = 0; bb < 3; bb++)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, nnode, 1.0, Phi + (size_t)a * n * nnode, nnode,
                  Wt + (size_t)bb * n * nnode, nnode, 0.0, r->S + (size_t)(a * 3 + bb) * n * n, n);
  free(rowsum); free(MX); free(Phi); free(Wt);
  return CF_OK;
}

int cf_reduce(const cfModel* m, const int* bnodes_in, int nbnode_in, const cfReduceOptions* opt_in,
              cfReduction* out) {
  return cf_reduce_points(m, bnodes_in, nbnode_in, NULL, 0, opt_in, out);
}

/* the interface points: geometry, overlap with the interface nodes, each other and the supports;
 * their selected DOFs appended to r->bdof (-1 - (6 k + a)); their sets fixed in fixed_i (rigid:
 * for the static fields and the normal modes) or in fixed_nm only (averaging: the normal modes) */
static int reduce_points_setup(const cfModel* m, cfReduction* r, const cfInterfacePoint* pts, int npoint,
                               cfPointGeometry* geo, unsigned char* fixed_i, unsigned char* fixed_nm, int* nfixed_nm) {
  unsigned char* owner = calloc(m->nnode, 1); /* 1: interface node, 2: in a point's set */
  int* bdof = realloc(r->bdof, sizeof(int) * (r->nb + 6 * (size_t)npoint + 1));
  r->points = calloc((size_t)npoint, sizeof *r->points);
  if (!owner || !bdof || !r->points) { free(owner); if (bdof) r->bdof = bdof; return cf_error(CF_ERR_NOMEM, "reduce: out of memory"); }
  r->bdof = bdof;
  r->npoint = npoint;
  for (int i = 0; i < r->nbnode; i++) owner[r->bnodes[i]] = 1;
  int st = CF_OK;
  for (int k = 0; k < npoint && st == CF_OK; k++) {
    const cfInterfacePoint* p = &pts[k];
    if (p->kind != CF_POINT_RIGID && p->kind != CF_POINT_AVERAGING) { st = cf_error(CF_ERR_ARG, "reduce: interface point %d: unknown kind %d", k, p->kind); break; }
    if (p->dofs > CF_POINT_ALL_DOFS) { st = cf_error(CF_ERR_ARG, "reduce: interface point %d: DOF mask 0x%x (6 bits: x y z rx ry rz)", k, p->dofs); break; }
    if (p->nnode < 1 || !p->nodes) { st = cf_error(CF_ERR_ARG, "reduce: interface point %d has no nodes", k); break; }
    cfReductionPoint* P = &r->points[k];
    P->kind = p->kind, P->dofs = p->dofs ? (int)p->dofs : CF_POINT_ALL_DOFS, P->nnode = p->nnode;
    P->nodes = malloc(sizeof(int) * (size_t)p->nnode);
    P->motion = NULL; /* allocated once the basis size r->n is known */
    if (!P->nodes) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); break; }
    for (int i = 0; i < p->nnode && st == CF_OK; i++) {
      int nd = p->nodes[i];
      if (nd < 0 || nd >= m->nnode) { st = cf_error(CF_ERR_ARG, "reduce: interface point %d: node %d out of range (model has %d nodes)", k, nd, m->nnode); break; }
      if (owner[nd]) { st = cf_error(CF_ERR_ARG, "reduce: interface point %d: node %d is also %s", k, nd, owner[nd] == 1 ? "an interface node" : "in another interface point (or twice in this one)"); break; }
      owner[nd] = 2;
      P->nodes[i] = nd;
    }
    if (st < 0) break;
    if ((st = cf__point_geometry(m, P->nodes, P->nnode, &geo[k])) < 0) { st = cf_error(st, "%s (interface point %d)", cf_last_error(), k); break; }
    memcpy(P->x, geo[k].x, sizeof P->x);
    /* a support on the set (e.g. u_z held everywhere for a planar part) takes away the point DOFs
     * whose rigid motion would move it: they may not be selected */
    unsigned blocked = cf__point_blocked_dofs(m, &geo[k]);
    if (p->kind == CF_POINT_RIGID && (P->dofs & (int)blocked)) {
      st = cf_error(CF_ERR_ARG, "reduce: interface point %d: its DOF mask 0x%x asks for DOFs (0x%x) whose motion moves "
                    "nodes a support holds", k, P->dofs, P->dofs & (int)blocked);
      break;
    }
    for (int a = 0; a < 6; a++)
      if (P->dofs >> a & 1) r->bdof[r->nb++] = -1 - (6 * k + a);
    for (int i = 0; i < P->nnode; i++)
      for (int a = 0; a < 3; a++) {
        int d = 3 * P->nodes[i] + a;
        if (p->kind == CF_POINT_RIGID) fixed_i[d] = 1;
        if (!fixed_nm[d]) fixed_nm[d] = 1, (*nfixed_nm)++;
      }
  }
  free(owner);
  return st;
}

int cf_reduce_points(const cfModel* m, const int* bnodes_in, int nbnode_in, const cfInterfacePoint* pts, int npoint,
                     const cfReduceOptions* opt_in, cfReduction* out) {
  cfReduceOptions opt = opt_in ? *opt_in : cf_default_reduce_options();
  memset(out, 0, sizeof *out);
  double t0 = cf_wall_time();
  const int ndof = m->ndof, nnode = m->nnode;
  int st = CF_OK;
  if (nbnode_in < 0 || (nbnode_in > 0 && !bnodes_in)) return cf_error(CF_ERR_ARG, "reduce: bad interface node list");
  if (npoint < 0 || (npoint > 0 && !pts)) return cf_error(CF_ERR_ARG, "reduce: bad interface point list");
  if (opt.nmodes < 0) return cf_error(CF_ERR_ARG, "reduce: %d normal modes asked for", opt.nmodes);
  /* linear or quadratic tetrahedra alike: the reduction takes the model's assembled K and M blocks
   * (Ke gathered, Mblk), never an element's shape functions; only the one-point mass is the
   * linear element's */
  if (m->npe != 4 && opt.modal.mass == CF_MODAL_MASS_ONE_POINT)
    return cf_error(CF_ERR_UNSUPPORTED, "reduce: the one-point mass is the linear tetrahedron's; the mesh has %d-node "
                    "tetrahedra (use the model's mass)", m->npe);
  for (int i = 0; i < nbnode_in; i++)
    if (bnodes_in[i] < 0 || bnodes_in[i] >= nnode)
      return cf_error(CF_ERR_ARG, "reduce: interface node %d out of range (model has %d nodes)", bnodes_in[i], nnode);

  cfReduction* r = out;
  r->version = 2; /* 3 when it has interface points */
  r->nnode = nnode; r->ntet = m->ntet; r->ndof = ndof;
  r->consistent_mass = m->def.consistent_mass;
  r->E = m->def.E; r->nu = m->def.nu; r->rho = m->def.rho;
  r->fingerprint = cf_reduction_fingerprint(m);

  unsigned char* fixed_i = calloc(ndof, 1);
  unsigned char* fixed_nm = calloc(ndof, 1); /* the normal modes': fixed_i and every point's set */
  cfPointGeometry* geo = calloc((size_t)npoint + 1, sizeof *geo);
  double* Kb = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  /* the mass the options name (as cf_modal_solve takes it for the normal modes): the model's
   * blocks or the one-point rule, for the projection and the invariants alike */
  double* Mone = opt.modal.mass == CF_MODAL_MASS_ONE_POINT ? malloc(sizeof(double) * (size_t)m->nnzb) : NULL;
  const double* Mb = Mone ? Mone : m->Mblk;
  r->bnodes = malloc(sizeof(int) * (nbnode_in > 0 ? nbnode_in : 1));
  if (!fixed_i || !fixed_nm || !geo || !Kb || !r->bnodes || (opt.modal.mass == CF_MODAL_MASS_ONE_POINT && !Mone)) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }

  if (Mone) cf_mass_one_point(m, Mone);

  int nfixed_i = 0;
  if ((st = reduce_interface(m, bnodes_in, nbnode_in, r, fixed_i, &nfixed_i)) < 0) goto done;
  memcpy(fixed_nm, fixed_i, ndof);
  const int nplain = r->nb;
  if (npoint > 0 && (st = reduce_points_setup(m, r, pts, npoint, geo, fixed_i, fixed_nm, &nfixed_i)) < 0) goto done;
  int ninterior = ndof - nfixed_i;
  r->nk = opt.nmodes < ninterior ? opt.nmodes : ninterior;
  r->n = r->nb + r->nk;
  if (r->n == 0) { st = cf_error(CF_ERR_ARG, "reduce: empty basis (no interface DOFs and no normal modes)"); goto done; }
  if ((st = alloc_reduction(r)) < 0) goto done;
  /* K blocks from the element K_e (rest state), as the modal solve and the preconditioner gather them */
  for (int q = 0; q < m->nnzb; q++) cf_block_gather_n(q, m->npe, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, 0.0, 1.0, Kb);

  double t1 = cf_wall_time();
  if (npoint > 0) {
    r->version = 3;
    for (int k = 0; k < npoint; k++) {
      double* mo = realloc(r->points[k].motion, sizeof(double) * 6 * (size_t)r->n);
      if (!mo) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
      r->points[k].motion = mo;
    }
    if ((st = cf__point_static_modes(m, r, Kb, fixed_i, geo, pts, npoint, nplain)) < 0) goto done;
  } else if ((st = constraint_modes(m, r, Kb, fixed_i)) < 0) goto done;
  double t2 = cf_wall_time();
  r->t_constraint = t2 - t1;

  /* 2. fixed-interface normal modes: the model with its interface DOFs fixed */
  if (r->nk > 0) {
    cfModel mi = *m;
    mi.fixed = fixed_nm; /* a point's set held: admissible (its point DOFs 0), though the unselected
                          * DOFs of a pin would let it turn; the static modes carry that motion */
    mi.nfixed = nfixed_i;
    st = cf_modal_solve(&mi, r->nk, &opt.modal, r->fixed_omega2, r->basis + (size_t)r->nb * ndof, NULL);
    if (st < 0) goto done;
  }
  double t3 = cf_wall_time();
  r->t_normal = t3 - t2;

  if (opt.orthonormalise && (st = orthonormalise_basis(m, r, Mb)) < 0) goto done;
  if ((st = project_basis(m, r, Kb, Mb)) < 0) goto done;
  double t4 = cf_wall_time();
  r->t_project = t4 - t3;

  if ((st = reduced_eigen(m, r, &opt, Mb)) < 0) goto done;
  double t5 = cf_wall_time();
  r->t_ortho = t5 - t4;

  if ((st = invariants(m, r, Mb)) < 0) goto done;
  if (npoint > 0 && (st = cf__point_motions(m, r, geo)) < 0) goto done;
  double t6 = cf_wall_time();
  r->t_invariants = t6 - t5;
  r->t_total = t6 - t0;

done:
  free(fixed_i); free(fixed_nm); free(geo); free(Kb); free(Mone);
  if (st < 0) {
    cf_reduction_free(out); /* sets no message: cf_last_error() still names the failure */
    return st;
  }
  return CF_OK;
}

/* ---- file format (docs/reduction-format.md) ------------------------------------------------- */
static const char MAGIC[8] = {'C', 'F', 'R', 'E', 'D', 'U', 'C', 'E'};
enum { BOM = 0x01020304, HEADER_INTS = 12, SOURCE_LEN = 512, CHECKSUM_OFFSET = 56 };

/* 64-bit FNV-1a over every byte of the file but the checksum's own 8 (read as zero) */
#define FNV_OFFSET 0xcbf29ce484222325ULL
static void fnv(uint64_t* h, const void* p, size_t n) {
  const unsigned char* b = p;
  uint64_t x = *h;
  for (size_t i = 0; i < n; i++) x = (x ^ b[i]) * 0x100000001b3ULL;
  *h = x;
}
/* fwrite / fread that also hash what they move */
static int hwrite(const void* p, size_t size, size_t n, FILE* f, uint64_t* h) {
  fnv(h, p, size * n);
  return fwrite(p, size, n, f) == n;
}
static int hread(void* p, size_t size, size_t n, FILE* f, uint64_t* h) {
  if (fread(p, size, n, f) != n) return 0;
  fnv(h, p, size * n);
  return 1;
}

/* PATH may be (re)written: it does not exist, or it is a regular file that starts with the magic
 * (one of ours, any version). Anything else (a user's file given by mistake, a directory, a
 * device) is never overwritten. */
int cf_reduction_replaceable(const char* path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (errno == ENOENT) return CF_OK;
    return cf_error(CF_ERR_IO, "%s: reduction file: %s", path, strerror(errno));
  }
  FILE* f;
  int st = cf_open_regular_file(path, "the reduction file", &f, NULL);
  if (st < 0) return cf_error(st, "%s (not overwritten)", cf_last_error());
  char magic[8];
  int ours = fread(magic, 1, 8, f) == 8 && memcmp(magic, MAGIC, 8) == 0;
  fclose(f);
  if (!ours)
    return cf_error(CF_ERR_IO, "%s: exists and is not a cofem reduction file (no CFREDUCE header); "
                    "not overwritten: remove it or name another file", path);
  return CF_OK;
}

/* Written to PATH.tmp.PID and renamed: a reader (another process reusing the cache) never sees
 * a half-written file, and a failed write leaves the old file as it was. */
int cf_reduction_write(const cfReduction* r, const char* path) {
  int st0 = cf_reduction_replaceable(path);
  if (st0 < 0) return st0;
  char tmpname[4200];
  snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", path, (long)getpid());
  FILE* f = fopen(tmpname, "wb");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot open for writing (%s)", path, strerror(errno));
  /* version 2 unless there are interface points (3) or the geometric stiffness (4) */
  int32_t ver = r->nkg > 0 && r->Kg ? 4 : r->npoint > 0 ? 3 : 2, bom = BOM;
  int32_t h[HEADER_INTS] = {r->nnode, r->ntet, r->ndof, r->consistent_mass, r->nbnode, r->nb,
                            r->nk, r->n, r->orthonormal, r->nrigid, 0, 0}; /* h[10..11]: the checksum, set last */
  double hd[17] = {r->E, r->nu, r->rho, r->fingerprint, r->mass, r->c[0], r->c[1], r->c[2]};
  memcpy(hd + 8, r->J, sizeof r->J);
  char src[SOURCE_LEN] = {0};
  snprintf(src, sizeof src, "%s", r->source);
  size_t n = r->n;
  uint64_t sum = FNV_OFFSET;
  int ok = hwrite(MAGIC, 1, 8, f, &sum) && hwrite(&ver, 4, 1, f, &sum) && hwrite(&bom, 4, 1, f, &sum) &&
           hwrite(h, 4, HEADER_INTS, f, &sum) && hwrite(hd, 8, 17, f, &sum) && hwrite(src, 1, SOURCE_LEN, f, &sum);
  int32_t* tmp = malloc(sizeof(int32_t) * (r->nbnode + r->nb + 1));
  if (!tmp) ok = 0;
  if (ok) {
    for (int i = 0; i < r->nbnode; i++) tmp[i] = r->bnodes[i];
    for (int i = 0; i < r->nb; i++) tmp[r->nbnode + i] = r->bdof[i];
    ok = hwrite(tmp, 4, (size_t)(r->nbnode + r->nb), f, &sum);
  }
  free(tmp);
  ok = ok && hwrite(r->fixed_omega2, 8, (size_t)r->nk, f, &sum) && hwrite(r->omega2, 8, n, f, &sum) &&
       hwrite(r->zeta, 8, n, f, &sum) && hwrite(r->Kr, 8, n * n, f, &sum) && hwrite(r->Mr, 8, n * n, f, &sum) &&
       hwrite(r->P, 8, 3 * n, f, &sum) && hwrite(r->T, 8, 9 * n, f, &sum) && hwrite(r->S, 8, 9 * n * n, f, &sum) &&
       hwrite(r->basis, 8, n * (size_t)r->ndof, f, &sum);
  if (ver >= 3) { /* the interface points (docs/reduction-format.md); version 4: maybe none */
    int32_t np = r->npoint;
    ok = ok && hwrite(&np, 4, 1, f, &sum);
    for (int k = 0; ok && k < r->npoint; k++) {
      const cfReductionPoint* P = &r->points[k];
      int32_t ph[3] = {P->kind, P->dofs, P->nnode};
      ok = hwrite(ph, 4, 3, f, &sum) && hwrite(P->x, 8, 3, f, &sum);
      for (int i = 0; ok && i < P->nnode; i++) {
        int32_t nd = P->nodes[i];
        ok = hwrite(&nd, 4, 1, f, &sum);
      }
      ok = ok && hwrite(P->motion, 8, 6 * n, f, &sum);
    }
  }
  if (ver >= 4) { /* the geometric stiffness section: its case count, then the matrices */
    int32_t nkg = r->nkg;
    ok = ok && hwrite(&nkg, 4, 1, f, &sum) && hwrite(r->Kg, 8, (size_t)nkg * n * n, f, &sum);
  }
  /* the checksum into the header's last two ints (hashed as zero) */
  ok = ok && fseek(f, CHECKSUM_OFFSET, SEEK_SET) == 0 && fwrite(&sum, 8, 1, f) == 1;
  int err = ok ? 0 : errno; /* the cause (EFBIG past a file-size limit, ENOSPC, EIO), before fclose */
  if (fclose(f) != 0 && ok) ok = 0, err = errno;
  if (ok && rename(tmpname, path) != 0) ok = 0, err = errno;
  if (!ok) {
    remove(tmpname);
    return cf_error(CF_ERR_IO, "%s: write failed: %s (nothing written)", path, err ? strerror(err) : "I/O error");
  }
  return CF_OK;
}

/* What a reduction must satisfy whatever its checksum says: finite numbers; for an orthonormal
 * basis M_r = I and K_r = diag(omega2) (the mechanism uses omega2, so a K_r that disagrees with it
 * means the file was made up or edited); omega2 ascending, and no negative stiffness beyond the
 * rigid-body modes' round-off; damping ratios >= 0. */
static int check_contents(const cfReduction* r, const char* path) {
  size_t n = (size_t)r->n;
  const struct { const char* name; const double* a; size_t k; } arr[] = {
      {"fixed_omega2", r->fixed_omega2, (size_t)r->nk}, {"omega2", r->omega2, n}, {"zeta", r->zeta, n},
      {"Kr", r->Kr, n * n}, {"Mr", r->Mr, n * n}, {"P", r->P, 3 * n}, {"T", r->T, 9 * n}, {"S", r->S, 9 * n * n},
      {"basis", r->basis, n * (size_t)r->ndof}, {"Kg", r->Kg, r->Kg ? (size_t)r->nkg * n * n : 0}};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++)
    for (size_t i = 0; i < arr[a].k; i++)
      if (!isfinite(arr[a].a[i])) return cf_error(CF_ERR_PARSE, "%s: %s[%zu] is not finite", path, arr[a].name, i);
  double wmax = 0;
  for (size_t i = 0; i < n; i++) wmax = fmax(wmax, fabs(r->omega2[i]));
  for (size_t i = 0; i < n; i++) {
    if (r->omega2[i] < -1e-6 * wmax)
      return cf_error(CF_ERR_PARSE, "%s: mode %zu has a negative stiffness (omega2 %g): not a reduction of an elastic part",
                      path, i, r->omega2[i]);
    if (i > 0 && r->omega2[i] < r->omega2[i - 1] - 1e-9 * wmax)
      return cf_error(CF_ERR_PARSE, "%s: omega2 is not ascending at mode %zu (%g after %g)", path, i, r->omega2[i],
                      r->omega2[i - 1]);
    if (r->zeta[i] < 0) return cf_error(CF_ERR_PARSE, "%s: mode %zu has a negative damping ratio %g", path, i, r->zeta[i]);
  }
  if (r->orthonormal)
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        double k = r->Kr[i * n + j], mm = r->Mr[i * n + j];
        double kw = i == j ? r->omega2[i] : 0, mw = i == j ? 1 : 0;
        if (fabs(k - kw) > 1e-6 * wmax + 1e-9)
          return cf_error(CF_ERR_PARSE, "%s: Kr[%zu][%zu] = %g, but the basis is orthonormal and omega2 says %g: the "
                          "stiffness does not match the frequencies", path, i, j, k, kw);
        if (fabs(mm - mw) > 1e-6)
          return cf_error(CF_ERR_PARSE, "%s: Mr[%zu][%zu] = %g, but the basis is orthonormal (M_r = I)", path, i, j, mm);
      }
  return CF_OK;
}

int cf_reduction_file_version(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return -1;
  char magic[8];
  int32_t ver = -1;
  int ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, MAGIC, 8) == 0 && fread(&ver, 4, 1, f) == 1;
  fclose(f);
  return ok ? ver : -1;
}

/* version 3's interface points: int32 npoint, then per point int32 kind, dofs, nnode, double x[3],
 * int32 nodes[nnode], double motion[6 n]; each size checked against the bytes left before it
 * is allocated, and the static modes' DOF list against the points */
static int read_points(FILE* f, uint64_t* sum, cfReduction* r, const char* path, long long fsize, int none_ok) {
  int32_t np;
  const size_t n = (size_t)r->n;
  if (!hread(&np, 4, 1, f, sum) || np < (none_ok ? 0 : 1) || np > r->nnode) return cf_error(CF_ERR_PARSE, "%s: bad interface point count", path);
  r->points = np ? calloc((size_t)np, sizeof *r->points) : NULL;
  if (np && !r->points) return cf_error(CF_ERR_NOMEM, "%s: out of memory", path);
  r->npoint = np;
  int nsel = 0;
  for (int k = 0; k < np; k++) {
    cfReductionPoint* P = &r->points[k];
    int32_t ph[3];
    if (!hread(ph, 4, 3, f, sum)) return cf_error(CF_ERR_PARSE, "%s: truncated interface point %d", path, k);
    if ((ph[0] != CF_POINT_RIGID && ph[0] != CF_POINT_AVERAGING) || ph[1] < 1 || ph[1] > CF_POINT_ALL_DOFS ||
        ph[2] < 1 || ph[2] > r->nnode)
      return cf_error(CF_ERR_PARSE, "%s: interface point %d: bad kind %d, DOF mask %d or node count %d", path, k, ph[0], ph[1], ph[2]);
    long long left = fsize - ftell(f);
    if ((double)left < 24.0 + 4.0 * ph[2] + 48.0 * (double)n)
      return cf_error(CF_ERR_PARSE, "%s: interface point %d: truncated", path, k);
    P->kind = ph[0], P->dofs = ph[1], P->nnode = ph[2];
    for (int a = 0; a < 6; a++) nsel += P->dofs >> a & 1;
    P->nodes = malloc(sizeof(int) * (size_t)P->nnode);
    P->motion = malloc(sizeof(double) * 6 * n);
    if (!P->nodes || !P->motion) return cf_error(CF_ERR_NOMEM, "%s: out of memory", path);
    if (!hread(P->x, 8, 3, f, sum)) return cf_error(CF_ERR_PARSE, "%s: truncated interface point %d", path, k);
    for (int i = 0; i < P->nnode; i++) {
      int32_t nd;
      if (!hread(&nd, 4, 1, f, sum) || nd < 0 || nd >= r->nnode)
        return cf_error(CF_ERR_PARSE, "%s: interface point %d: bad node", path, k);
      P->nodes[i] = nd;
    }
    if (!hread(P->motion, 8, 6 * n, f, sum)) return cf_error(CF_ERR_PARSE, "%s: truncated interface point %d", path, k);
    for (size_t i = 0; i < 6 * n; i++)
      if (!isfinite(P->motion[i])) return cf_error(CF_ERR_PARSE, "%s: interface point %d: motion not finite", path, k);
  }
  int nplain = 0;
  for (int i = 0; i < r->nb; i++) {
    if (r->bdof[i] >= 0) { nplain++; continue; }
    int code = -1 - r->bdof[i];
    if (code >= 6 * np || !(r->points[code / 6].dofs >> (code % 6) & 1))
      return cf_error(CF_ERR_PARSE, "%s: static mode %d names no selected DOF of an interface point", path, i);
  }
  if (nplain > 3 * r->nbnode || nplain + nsel != r->nb)
    return cf_error(CF_ERR_PARSE, "%s: %d static modes, the interface nodes and points give %d + %d", path, r->nb, nplain, nsel);
  return CF_OK;
}

int cf_reduction_read(const char* path, cfReduction* r) {
  memset(r, 0, sizeof *r);
  FILE* f;
  long long fsize = 0;
  int st0 = cf_open_regular_file(path, "the reduction file", &f, &fsize);
  if (st0 < 0) return st0;
  char magic[8];
  int32_t ver, bom, h[HEADER_INTS];
  double hd[17];
  int st = CF_OK;
  uint64_t sum = FNV_OFFSET, stored = 0;
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, MAGIC, 8) != 0) { st = cf_error(CF_ERR_PARSE, "%s: not a cofem reduction file (magic)", path); goto done; }
  if (fread(&ver, 4, 1, f) != 1 || fread(&bom, 4, 1, f) != 1) { st = cf_error(CF_ERR_PARSE, "%s: truncated header", path); goto done; }
  if (bom != BOM) { st = cf_error(CF_ERR_PARSE, "%s: written on a machine of the other byte order", path); goto done; }
  if (ver < 2 || ver > CF_REDUCTION_VERSION) { st = cf_error(CF_ERR_PARSE, "%s: version %d, this build reads versions 2 to %d", path, (int)ver, CF_REDUCTION_VERSION); goto done; }
  if (fread(h, 4, HEADER_INTS, f) != HEADER_INTS || fread(hd, 8, 17, f) != 17 ||
      fread(r->source, 1, SOURCE_LEN, f) != SOURCE_LEN) { st = cf_error(CF_ERR_PARSE, "%s: truncated header", path); goto done; }
  memcpy(&stored, h + 10, 8);
  h[10] = h[11] = 0;
  fnv(&sum, magic, 8), fnv(&sum, &ver, 4), fnv(&sum, &bom, 4), fnv(&sum, h, 4 * HEADER_INTS), fnv(&sum, hd, 8 * 17);
  fnv(&sum, r->source, SOURCE_LEN);
  r->source[SOURCE_LEN - 1] = 0;
  r->version = ver;
  r->nnode = h[0]; r->ntet = h[1]; r->ndof = h[2]; r->consistent_mass = h[3]; r->nbnode = h[4]; r->nb = h[5];
  r->nk = h[6]; r->n = h[7]; r->orthonormal = h[8]; r->nrigid = h[9];
  if (r->nnode <= 0 || r->ndof != 3 * r->nnode || r->ntet <= 0 || r->nbnode < 0 || r->nbnode > r->nnode ||
      r->nb < 0 || r->nb > (ver >= 3 ? r->ndof : 3 * r->nbnode) || r->nk < 0 || r->n != r->nb + r->nk || r->n <= 0 || r->n > r->ndof ||
      r->nrigid < 0 || r->nrigid > r->n) { st = cf_error(CF_ERR_PARSE, "%s: inconsistent sizes in the header", path); goto done; }
  { /* the sizes must add up to the file's size before anything is allocated from them */
    double nn = r->n, want = 712.0 + 4.0 * ((double)r->nbnode + r->nb) +
                             8.0 * ((double)r->nk + 2 * nn + 2 * nn * nn + 12 * nn + 9 * nn * nn + nn * r->ndof);
    if (ver >= 3 ? want + 4 > (double)fsize : want != (double)fsize) { st = cf_error(CF_ERR_PARSE, "%s: %lld bytes, the header's sizes want %.0f", path, fsize, want); goto done; }
  }
  r->E = hd[0]; r->nu = hd[1]; r->rho = hd[2]; r->fingerprint = hd[3]; r->mass = hd[4];
  memcpy(r->c, hd + 5, sizeof r->c);
  memcpy(r->J, hd + 8, sizeof r->J);
  size_t n = r->n;
  r->bnodes = malloc(sizeof(int) * (r->nbnode + 1));
  r->bdof = malloc(sizeof(int) * (r->nb + 1));
  r->fixed_omega2 = malloc(sizeof(double) * (r->nk + 1));
  r->omega2 = malloc(sizeof(double) * n);
  r->zeta = malloc(sizeof(double) * n);
  r->Kr = malloc(sizeof(double) * n * n);
  r->Mr = malloc(sizeof(double) * n * n);
  r->P = malloc(sizeof(double) * 3 * n);
  r->T = malloc(sizeof(double) * 9 * n);
  r->S = malloc(sizeof(double) * 9 * n * n);
  r->basis = malloc(sizeof(double) * n * r->ndof);
  int32_t* tmp = malloc(sizeof(int32_t) * (r->nbnode + r->nb + 1));
  if (!r->bnodes || !r->bdof || !r->fixed_omega2 || !r->omega2 || !r->zeta || !r->Kr || !r->Mr || !r->P ||
      !r->T || !r->S || !r->basis || !tmp) { free(tmp); st = cf_error(CF_ERR_NOMEM, "%s: out of memory", path); goto done; }
  int ok = hread(tmp, 4, (size_t)(r->nbnode + r->nb), f, &sum);
  for (int i = 0; ok && i < r->nbnode; i++) {
    r->bnodes[i] = tmp[i];
    if (tmp[i] < 0 || tmp[i] >= r->nnode) ok = 0;
  }
  for (int i = 0; ok && i < r->nb; i++) {
    r->bdof[i] = tmp[r->nbnode + i];
    if ((ver < 3 && r->bdof[i] < 0) || r->bdof[i] >= r->ndof) ok = 0; /* < 0: a point's DOF, checked below */
  }
  free(tmp);
  if (!ok) { st = cf_error(CF_ERR_PARSE, "%s: bad interface node/DOF list", path); goto done; }
  ok = hread(r->fixed_omega2, 8, (size_t)r->nk, f, &sum) && hread(r->omega2, 8, n, f, &sum) &&
       hread(r->zeta, 8, n, f, &sum) && hread(r->Kr, 8, n * n, f, &sum) && hread(r->Mr, 8, n * n, f, &sum) &&
       hread(r->P, 8, 3 * n, f, &sum) && hread(r->T, 8, 9 * n, f, &sum) && hread(r->S, 8, 9 * n * n, f, &sum) &&
       hread(r->basis, 8, n * (size_t)r->ndof, f, &sum);
  if (!ok) { st = cf_error(CF_ERR_PARSE, "%s: truncated data", path); goto done; }
  if (ver >= 3 && (st = read_points(f, &sum, r, path, fsize, ver >= 4)) < 0) goto done;
  if (ver >= 4) { /* the geometric stiffness section: 0 or CF_REDUCTION_NKG n x n matrices */
    int32_t nkg = -1;
    if (!hread(&nkg, 4, 1, f, &sum) || (nkg != 0 && nkg != CF_REDUCTION_NKG) ||
        (double)(fsize - ftell(f)) != 8.0 * nkg * (double)n * (double)n) {
      st = cf_error(CF_ERR_PARSE, "%s: bad geometric stiffness section (%d cases; %d expected, or 0)", path, (int)nkg, CF_REDUCTION_NKG);
      goto done;
    }
    r->nkg = nkg;
    if (nkg) {
      r->Kg = malloc(sizeof(double) * (size_t)nkg * n * n);
      if (!r->Kg) { st = cf_error(CF_ERR_NOMEM, "%s: out of memory", path); goto done; }
      if (!hread(r->Kg, 8, (size_t)nkg * n * n, f, &sum)) { st = cf_error(CF_ERR_PARSE, "%s: truncated data", path); goto done; }
    }
  }
  if (fgetc(f) != EOF) { st = cf_error(CF_ERR_PARSE, "%s: trailing bytes after the data", path); goto done; }
  if (sum != stored) {
    st = cf_error(CF_ERR_PARSE, "%s: checksum mismatch (stored %016llx, the contents give %016llx): the file was "
                  "changed or damaged after cofem wrote it", path, (unsigned long long)stored, (unsigned long long)sum);
    goto done;
  }
  if ((st = check_contents(r, path)) < 0) goto done;
done:
  fclose(f);
  if (st < 0) {
    cf_reduction_free(r); /* sets no message: cf_last_error() still names the failure */
    return st;
  }
  return CF_OK;
}

int cf_reduction_check(const cfReduction* r, const cfModel* m) {
  if (r->nnode != m->nnode || r->ntet != m->ntet)
    return cf_error(CF_ERR_ARG, "reduction of a mesh with %d nodes / %d elements, the model has %d / %d",
                    r->nnode, r->ntet, m->nnode, m->ntet);
  double fp = cf_reduction_fingerprint(m);
  if (fabs(fp - r->fingerprint) > 1e-9 * (fabs(fp) + 1e-30) + 1e-300)
    return cf_error(CF_ERR_ARG, "reduction of another mesh (node positions differ)");
  if (r->E != m->def.E || r->nu != m->def.nu || r->rho != m->def.rho || r->consistent_mass != m->def.consistent_mass)
    return cf_error(CF_ERR_ARG, "reduction made with another material or mass (E %g nu %g rho %g %s)", r->E, r->nu,
                    r->rho, r->consistent_mass ? "consistent" : "lumped");
  return CF_OK;
}
