/* Stage 3: block-Jacobi preconditioned conjugate gradients for A v = b, with the fixed DOFs
 * projected out (their velocity stays 0, their residual is filtered), warm-started with the
 * previous velocities (paper 003: velocities change little within a step).
 * Convergence: |r| <= tol max(|b|, b_scale) on the free DOFs (see cofem/fem.h). A breakdown or the iteration cap leaves the
 * last finite iterate and returns a counted warning. */
#include <math.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem_element.h"
#include "fem_pcg.h"
#include "fem_precond.h"

/* Deterministic dot product: fixed chunks, summed in order. */
static double dot(const cfData* d, int n, const double* a, const double* b) {
  const int nchunk = (n + CF_DOT_CHUNK - 1) / CF_DOT_CHUNK;
#pragma omp parallel for schedule(static) if (nchunk > 4)
  for (int c = 0; c < nchunk; c++) {
    int lo = c * CF_DOT_CHUNK, hi = lo + CF_DOT_CHUNK < n ? lo + CF_DOT_CHUNK : n;
    double s = 0;
    for (int i = lo; i < hi; i++) s += a[i] * b[i];
    d->dot_partial[c] = s;
  }
  double s = 0;
  for (int c = 0; c < nchunk; c++) s += d->dot_partial[c];
  return s;
}

static void spmv(const cfModel* m, const double* A, const double* x, double* y) {
#pragma omp parallel for schedule(static) if (m->nnode > 2048)
  for (int i = 0; i < m->nnode; i++) cf_bsr_row(i, m->row_ptr, m->col, A, x, y);
}

static void precondition(const cfModel* m, cfData* d, const double* r, double* z) {
  if (d->precond) {
    cf_precond_apply(m, d, r, z);
    return;
  }
  const double* Pinv = d->Pinv;
  for (int n = 0; n < m->nnode; n++) {
    const double* P = Pinv + 9 * n;
    const double* rn = r + 3 * n;
    for (int i = 0; i < 3; i++) z[3 * n + i] = P[3 * i] * rn[0] + P[3 * i + 1] * rn[1] + P[3 * i + 2] * rn[2];
  }
}

static void project(const cfModel* m, const cfData* d, double* y) {
  if (!d->supports_active || !m->nfixed) return;
  for (int i = 0; i < m->ndof; i++)
    if (m->fixed[i]) y[i] = 0;
}

void cf_pcg_warm_start(const cfModel* m, cfData* d, double* v1) {
  double* v0 = d->v;
  project(m, d, v0);
  project(m, d, v1);
  spmv(m, d->A, v0, d->q);
  spmv(m, d->A, v1, d->z);
  const int use_fixed = d->supports_active && m->nfixed;
  const int nchunk = (m->nnode + CF_WARM_CHUNK - 1) / CF_WARM_CHUNK;
#pragma omp parallel for schedule(static) if (nchunk > 4)
  for (int c = 0; c < nchunk; c++) {
    double* s = d->dot_partial + CF_WARM_NSUM * c;
    for (int k = 0; k < CF_WARM_NSUM; k++) s[k] = 0;
    const int hi = (c + 1) * CF_WARM_CHUNK < m->nnode ? (c + 1) * CF_WARM_CHUNK : m->nnode;
    for (int n = c * CF_WARM_CHUNK; n < hi; n++) cf_node_warm_sums(n, v0, v1, d->q, d->z, d->b, m->fixed, use_fixed, s);
  }
  double s[CF_WARM_NSUM] = {0}, c[2];
  for (int k = 0; k < nchunk; k++)
    for (int j = 0; j < CF_WARM_NSUM; j++) s[j] += d->dot_partial[CF_WARM_NSUM * k + j];
  cf_warm_coefficients(s, c);
  for (int i = 0; i < m->ndof; i++) v0[i] = c[0] * v0[i] + c[1] * v1[i];
}

int cf_stage_pcg(const cfModel* m, cfData* d) {
  const int n = m->ndof;
  double *x = d->v, *r = d->r, *z = d->z, *p = d->p, *q = d->q;
  if (!m->def.warm_start) memset(x, 0, sizeof(double) * n);
  project(m, d, x);
  /* b on the free DOFs sets the scale of the tolerance */
  memcpy(r, d->b, sizeof(double) * n);
  project(m, d, r);
  const double bnorm = sqrt(dot(d, n, r, r));
  spmv(m, d->A, x, q);
  for (int i = 0; i < n; i++) r[i] -= q[i];
  project(m, d, r);
  double rnorm = sqrt(dot(d, n, r, r));
  if (!isfinite(bnorm) || !isfinite(d->b_scale)) /* absurd inputs (1e300 N, 1e300 kg/m^3) overflow */
    return cf_error(CF_ERR_ARG, "step %ld: the right side is not finite (|b| = %g, force scale %g): "
                    "forces, density or time step out of range", d->steps + 1, bnorm, d->b_scale);
  const double scale = fmax(bnorm, d->b_scale);
  const double target = m->def.pcg_tol * (scale > 0 ? scale : 1.0);
  int it = 0, status = CF_OK;
  if (rnorm > target) {
    precondition(m, d, r, z);
    memcpy(p, z, sizeof(double) * n);
    project(m, d, p);
    double rz = dot(d, n, r, z);
    for (it = 1; it <= m->def.pcg_max_iter; it++) {
      spmv(m, d->A, p, q);
      project(m, d, q);
      double pq = dot(d, n, p, q);
      if (!(pq > 0) || !isfinite(pq)) {
        status = CF_WARN_INDEFINITE;
        it--;
        break;
      }
      double alpha = rz / pq;
      for (int i = 0; i < n; i++) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
      }
      rnorm = sqrt(dot(d, n, r, r));
      if (rnorm <= target) break;
      precondition(m, d, r, z);
      double rz_new = dot(d, n, r, z);
      double beta = rz_new / rz;
      rz = rz_new;
      for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
      project(m, d, p);
    }
    if (it > m->def.pcg_max_iter) {
      it = m->def.pcg_max_iter;
      status = CF_WARN_PCG_NOT_CONVERGED;
    }
  }
  d->pcg_iters = it;
  d->pcg_residual = rnorm / (scale > 0 ? scale : 1.0);
  d->pcg_iters_total += it;
  if (status > 0) {
    d->warning[status]++;
    cf_error(status, "PCG: %s after %d iterations, relative residual %.3g (tolerance %.3g)",
             status == CF_WARN_INDEFINITE ? "matrix not positive definite" : "not converged", it,
             d->pcg_residual, m->def.pcg_tol);
  }
  return status;
}
