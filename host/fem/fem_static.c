/* Nonlinear statics: load increments, equilibrium (Newton) iterations with rotations updated from
 * the current shape, a backtracking line search on the residual norm, and increment cutting.
 * Consistent tangent: fem_tangent.c. */
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
  const int n = m->ndof;
  int sym = opt->tangent == CF_TANGENT_KR;
  cfSparseSolver s;
  double* r = malloc(sizeof(double) * n);
  double* du = malloc(sizeof(double) * n);
  double* x_conv = malloc(sizeof(double) * n);
  double* R_conv = malloc(sizeof(double) * 9 * (size_t)m->ntet);
  double* Kt = sym ? NULL : malloc(sizeof(double) * 144 * (size_t)m->ntet);
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
          cf_block_gather(k, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, 0.0, 1.0, d->A);
      } else {
        for (int e = 0; e < m->ntet; e++) cf_elem_consistent_tangent(m, d, e, Kt + 144 * (size_t)e);
        for (int k = 0; k < m->nnzb; k++)
          cf_block_gather(k, m->blk_src_ptr, m->blk_src, Kt, m->Mblk, 0.0, 1.0, d->A);
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
       * under a tiny load) */
      double dun = 0, un = 0;
      for (int i = 0; i < n; i++) {
        dun = fmax(dun, fabs(step * du[i]));
        un = fmax(un, fabs(d->x[i] - m->X[i]));
      }
      if (dun <= 1e-10 * un) {
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
    cf_block_gather(k, m->blk_src_ptr, m->blk_src, d->KR, m->Mblk, 0.0, 1.0, d->A);
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
