/* Nonlinear statics: load increments, equilibrium (Newton) iterations with rotations updated from
 * the current shape, a backtracking line search on the residual norm, and increment cutting.
 * Consistent tangent: fem_tangent.c. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "cofem/static.h"
#include "fem/fem_element.h"
#include "fem/fem_sparse.h"

cfStaticOptions cf_default_static_options(void) {
  cfStaticOptions o = {10, 1e-8, 25, CF_TANGENT_CONSISTENT, 10};
  return o;
}

/* ---- supports: the rigid-body modes they leave free ------------------------------------------- */
/* eigenvalues (ascending in w) and vectors (columns of V) of the symmetric 6x6 A (cyclic Jacobi) */
static void eig6(double A[6][6], double w[6], double V[6][6]) {
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) V[i][j] = i == j;
  for (int sweep = 0; sweep < 60; sweep++) {
    double off = 0;
    for (int p = 0; p < 6; p++)
      for (int q = p + 1; q < 6; q++) off += A[p][q] * A[p][q];
    if (off < 1e-300) break;
    for (int p = 0; p < 6; p++)
      for (int q = p + 1; q < 6; q++) {
        if (A[p][q] == 0) continue;
        double th = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
        double c = 1 / sqrt(t * t + 1), sn = t * c;
        for (int k = 0; k < 6; k++) { /* A = J^T A J */
          double akp = A[k][p], akq = A[k][q];
          A[k][p] = c * akp - sn * akq, A[k][q] = sn * akp + c * akq;
        }
        for (int k = 0; k < 6; k++) {
          double apk = A[p][k], aqk = A[q][k];
          A[p][k] = c * apk - sn * aqk, A[q][k] = sn * apk + c * aqk;
        }
        for (int k = 0; k < 6; k++) {
          double vkp = V[k][p], vkq = V[k][q];
          V[k][p] = c * vkp - sn * vkq, V[k][q] = sn * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < 6; i++) w[i] = A[i][i];
  for (int i = 0; i < 6; i++) /* sort ascending */
    for (int j = i + 1; j < 6; j++)
      if (w[j] < w[i]) {
        double t = w[i]; w[i] = w[j]; w[j] = t;
        for (int k = 0; k < 6; k++) t = V[k][i], V[k][i] = V[k][j], V[k][j] = t;
      }
}

int cf_model_free_rigid_modes(const cfModel* m, char* names, size_t n) {
  if (names && n) names[0] = '\0';
  /* rotations about the centroid of the held nodes (about the part's when none is held), scaled
   * by the part's size so that every column is O(1) */
  double c[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  int nheld = 0;
  for (int i = 0; i < m->nnode; i++) {
    int held = m->fixed[3 * i] || m->fixed[3 * i + 1] || m->fixed[3 * i + 2];
    for (int k = 0; k < 3; k++) {
      lo[k] = fmin(lo[k], m->X[3 * i + k]), hi[k] = fmax(hi[k], m->X[3 * i + k]);
      if (held) c[k] += m->X[3 * i + k];
    }
    nheld += held;
  }
  if (nheld) for (int k = 0; k < 3; k++) c[k] /= nheld;
  else for (int k = 0; k < 3; k++) c[k] = 0.5 * (lo[k] + hi[k]);
  double L = 0;
  for (int k = 0; k < 3; k++) L = fmax(L, hi[k] - lo[k]);
  if (!(L > 0)) L = 1;
  /* G = R^T R, R: the six rigid motions at the fixed DOFs */
  double G[6][6] = {{0}};
  for (int i = 0; i < m->nnode; i++)
    for (int k = 0; k < 3; k++) {
      if (!m->fixed[3 * i + k]) continue;
      double d[3] = {(m->X[3 * i] - c[0]) / L, (m->X[3 * i + 1] - c[1]) / L, (m->X[3 * i + 2] - c[2]) / L};
      double rot[3][3] = {{0, -d[2], d[1]}, {d[2], 0, -d[0]}, {-d[1], d[0], 0}}; /* rot[k][a] = (e_a x d)_k */
      double r[6] = {k == 0, k == 1, k == 2, rot[k][0], rot[k][1], rot[k][2]};
      for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++) G[a][b] += r[a] * r[b];
    }
  double w[6], V[6][6];
  eig6(G, w, V);
  double tol = 1e-10 * fmax(1.0, w[5]);
  int nfree = 0;
  while (nfree < 6 && w[nfree] <= tol) nfree++;
  if (!nfree || !names || !n) return nfree;
  /* name the pure motions in the free space; describe what is left as combinations */
  static const char* pure[6] = {"translation along x", "translation along y", "translation along z",
                                "rotation about x", "rotation about y", "rotation about z"};
  size_t len = 0;
  int named = 0, is_named[6] = {0};
  for (int j = 0; j < 6; j++) {
    double p = 0;
    for (int q = 0; q < nfree; q++) p += V[j][q] * V[j][q];
    if (p > 1 - 1e-6) {
      is_named[j] = 1;
      if (len < n) len += (size_t)snprintf(names + len, n - len, "%s%s", named ? ", " : "", pure[j]);
      named++;
    }
  }
  if (named < nfree) { /* the free space less the named directions: combined motions */
    double B[6][6];
    int nb = 0;
    for (int q = 0; q < nfree; q++) {
      double v[6];
      for (int j = 0; j < 6; j++) v[j] = is_named[j] ? 0 : V[j][q];
      for (int b = 0; b < nb; b++) {
        double dot = 0;
        for (int j = 0; j < 6; j++) dot += v[j] * B[b][j];
        for (int j = 0; j < 6; j++) v[j] -= dot * B[b][j];
      }
      double nv = 0;
      for (int j = 0; j < 6; j++) nv += v[j] * v[j];
      if (nv < 1e-12) continue;
      for (int j = 0; j < 6; j++) B[nb][j] = v[j] / sqrt(nv);
      if (len < n)
        len += (size_t)snprintf(names + len, n - len,
                              "%sthe motion with translation (%.2g, %.2g, %.2g) and rotation (%.2g, %.2g, %.2g) about (%.4g, %.4g, %.4g)",
                              named || nb ? ", " : "", B[nb][0], B[nb][1], B[nb][2], B[nb][3] / L, B[nb][4] / L,
                              B[nb][5] / L, c[0], c[1], c[2]);
      nb++;
    }
  }
  return nfree;
}

/* the part must be held against every rigid motion before a static solve */
static int check_supported(const cfModel* m, const char* what) {
  char names[512];
  int k = cf_model_free_rigid_modes(m, names, sizeof names);
  if (k == 0) return CF_OK;
  return cf_error(CF_ERR_SOLVER, "%s: the part is not supported: %s %s not held by the fixed DOFs (%d free rigid-body "
                  "mode%s); statics needs \"fixed\" sets that hold all six", what, names, k > 1 ? "are" : "is", k,
                  k > 1 ? "s" : "");
}

/* r = lambda f - f_el(x) on the free DOFs; returns |r|. Refreshes R, KR, fe. */
static double residual(const cfModel* m, cfData* d, const double* f, double lambda, double* r) {
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  double s = 0;
  for (int i = 0; i < m->ndof; i++) {
    r[i] = m->fixed[i] ? 0.0 : lambda * f[i] - d->f_el[i];
    s += r[i] * r[i];
  }
  return sqrt(s);
}

int cf_static_solve(const cfModel* m, cfData* d, const double* f, const cfStaticOptions* opt,
                    cfStaticCallback cb, void* user) {
  if (opt->increments < 1 || opt->max_iter < 1 || !(opt->tol > 0))
    return cf_error(CF_ERR_ARG, "static: increments, max_iter and tol must be positive");
  int st0 = check_supported(m, "static");
  if (st0 < 0) return st0;
  const int n = m->ndof;
  int sym = opt->tangent == CF_TANGENT_KR;
  cfSparseSolver s;
  double* r = malloc(sizeof(double) * n);
  double* du = malloc(sizeof(double) * n);
  double* x_conv = malloc(sizeof(double) * n);
  double* R_conv = malloc(sizeof(double) * 9 * (size_t)m->ntet);
  double* Kt = sym ? NULL : malloc(sizeof(double) * 9 * (size_t)m->npe * m->npe * m->ntet);
  int st = cf_sparse_init(m, sym, &s);
  if (st < 0 || !r || !du || !x_conv || !R_conv || (!sym && !Kt)) {
    if (st >= 0) st = cf_error(CF_ERR_NOMEM, "static: out of memory");
    goto done;
  }
  double fnorm = 0;
  for (int i = 0; i < n; i++)
    if (!m->fixed[i]) fnorm += f[i] * f[i];
  fnorm = sqrt(fnorm);
  const double target = opt->tol * (fnorm > 0 ? fnorm : 1.0);
  double lambda = 0, dl = 1.0 / opt->increments;
  int cuts = 0;
  memcpy(x_conv, d->x, sizeof(double) * n);
  memcpy(R_conv, d->R, sizeof(double) * 9 * (size_t)m->ntet);
  while (lambda < 1.0 - 1e-12) {
    double lt = lambda + dl > 1.0 ? 1.0 : lambda + dl;
    double rn = residual(m, d, f, lt, r);
    int it = 0, ok = 0;
    for (;;) {
      if (rn <= target) { ok = 1; break; }
      if (it >= opt->max_iter || !isfinite(rn)) break;
      it++;
      /* tangent blocks into d->A */
      if (sym) {
        for (int k = 0; k < m->nnzb; k++)
          cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, 0.0, 1.0, d->A);
      } else {
        for (int e = 0; e < m->ntet; e++) cf_elem_consistent_tangent(m, d, e, Kt + 9 * (size_t)m->npe * m->npe * e);
        for (int k = 0; k < m->nnzb; k++)
          cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, Kt, m->Mblk, 0.0, 1.0, d->A);
      }
      st = cf_sparse_factor_solve(&s, m, d->A, m->fixed, r, du);
      if (st < 0) goto done;
      /* line search (Crisfield): the out-of-balance force projected on the correction,
       * g(s) = du . r(x + s du), must fall in magnitude. |r| itself is no merit function here:
       * a good step often raises it at first (large axial forces where the linearised step
       * stretches a rotating member), and f_el is not the gradient of an energy. */
      double g0 = 0;
      for (int i = 0; i < n; i++) g0 += du[i] * r[i];
      double step = 1.0, rn_new = rn;
      int accepted = 0;
      for (int ls = 0; ls < 8 && !accepted; ls++) {
        for (int i = 0; i < n; i++) d->x[i] += step * du[i];
        rn_new = residual(m, d, f, lt, r);
        double g1 = 0;
        for (int i = 0; i < n; i++) g1 += du[i] * r[i];
        if (isfinite(rn_new) && (fabs(g1) <= 0.8 * fabs(g0) || rn_new < rn)) {
          accepted = 1;
          break;
        }
        for (int i = 0; i < n; i++) d->x[i] -= step * du[i];
        step *= 0.5;
      }
      if (!accepted) {
        residual(m, d, f, lt, r); /* restore R and r of the kept x */
        break;                    /* no progress: cut the increment */
      }
      /* converged in displacement: the correction is at the round-off of the positions (the
       * force residual then stalls at ~1e-9 of the internal forces, which can exceed tol |f|
       * under a tiny load). The round-off is of the positions themselves, eps |x|: under a tiny
       * load the displacement's 1e-10 lies far below it (the lug at 1 N: u 1e-9 m, the last
       * corrections 1e-15 m against |x| 0.1 m, and the increment was cut to load factor 0) */
      double dun = 0, un = 0, xn = 0;
      for (int i = 0; i < n; i++) {
        dun = fmax(dun, fabs(step * du[i]));
        un = fmax(un, fabs(d->x[i] - m->X[i]));
        xn = fmax(xn, fabs(d->x[i]));
      }
      if (dun <= fmax(1e-10 * un, 1e3 * DBL_EPSILON * xn)) {
        rn = rn_new;
        ok = 1;
        break;
      }
      if (getenv("CF_DEBUG_STATIC")) fprintf(stderr, "  it %d: |r| %.3e -> %.3e (step %g)\n", it, rn, rn_new, step);
      rn = rn_new;
    }
    if (ok) {
      lambda = lt;
      memcpy(x_conv, d->x, sizeof(double) * n);
      memcpy(R_conv, d->R, sizeof(double) * 9 * (size_t)m->ntet);
      if (cb && cb(lambda, it, m, d, user)) break;
      if (cuts > 0 && it < opt->max_iter / 3) dl *= 2; /* grow back after an easy increment */
      if (dl > 1.0 / opt->increments) dl = 1.0 / opt->increments;
    } else {
      memcpy(d->x, x_conv, sizeof(double) * n);
      memcpy(d->R, R_conv, sizeof(double) * 9 * (size_t)m->ntet);
      if (++cuts > opt->max_cuts) {
        d->warning[CF_WARN_STATIC_NOT_CONVERGED]++;
        st = cf_error(CF_WARN_STATIC_NOT_CONVERGED,
                      "static: increment to load factor %.4g not converged after %d cuts "
                      "(residual %.3g, target %.3g); stopped at load factor %.4g",
                      lt, opt->max_cuts, rn, target, lambda);
        residual(m, d, f, lambda, r);
        goto done;
      }
      dl *= 0.5;
    }
  }
  st = CF_OK;
done:
  cf_sparse_free(&s);
  free(r); free(du); free(x_conv); free(R_conv); free(Kt);
  return st;
}

int cf_linear_static(const cfModel* m, cfData* d, const double* f) {
  int st0 = check_supported(m, "linear static");
  if (st0 < 0) return st0;
  cfSparseSolver s;
  int st = cf_sparse_init(m, 1, &s);
  double* u = malloc(sizeof(double) * m->ndof);
  double* rhs = malloc(sizeof(double) * m->ndof);
  if (st < 0 || !u || !rhs) {
    if (st >= 0) st = cf_error(CF_ERR_NOMEM, "linear static: out of memory");
    goto done;
  }
  /* K = K_R at R = I, x = X */
  cf_data_reset(m, d);
  cf_stage_elastic(m, d);
  for (int k = 0; k < m->nnzb; k++)
    cf_block_gather_n(k, m->npe, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, 0.0, 1.0, d->A);
  for (int i = 0; i < m->ndof; i++) rhs[i] = m->fixed[i] ? 0.0 : f[i];
  st = cf_sparse_factor_solve(&s, m, d->A, m->fixed, rhs, u);
  if (st < 0) goto done;
  for (int i = 0; i < m->ndof; i++) d->x[i] = m->X[i] + u[i];
done:
  cf_sparse_free(&s);
  free(u);
  free(rhs);
  return st;
}
