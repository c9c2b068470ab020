/* Modal analysis: lowest eigenpairs of K phi = w^2 M phi on the free DOFs (see cofem/modal.h).
 * K is assembled from the element K_e (rest state), M from the model's mass blocks Mblk. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/modal.h"
#include "fem_element.h"
#include "fem_sparse.h"

cfModalOptions cf_default_modal_options(void) {
  cfModalOptions o;
  o.method = CF_MODAL_AUTO;
  o.mass = CF_MODAL_MASS_MODEL;
  o.dense_max = 2000;
  o.shift = NAN;
  o.tol = 1e-10;
  o.max_basis = 0;
  return o;
}

/* y = K x (full DOF vectors) with the unrotated element stiffness */
static void apply_K(const cfModel* m, const double* x, double* y) {
  memset(y, 0, sizeof(double) * m->ndof);
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + 4 * e;
    const double* K = m->Ke + 144 * (size_t)e;
    double u[12];
    for (int a = 0; a < 4; a++)
      for (int i = 0; i < 3; i++) u[3 * a + i] = x[3 * t[a] + i];
    for (int r = 0; r < 12; r++) {
      double s = 0;
      for (int c = 0; c < 12; c++) s += K[12 * r + c] * u[c];
      y[3 * t[r / 3] + r % 3] += s;
    }
  }
}

void cf_mass_one_point(const cfModel* m, double* Mblk) {
  for (int q = 0; q < m->nnzb; q++) {
    double s = 0;
    for (int k = m->blk_src_ptr[q]; k < m->blk_src_ptr[q + 1]; k++) s += m->vol[m->blk_src[k] >> 4];
    Mblk[q] = m->def.rho * s / 16.0;
  }
}

/* y = M x (full DOF vectors, M from the block coefficients Mb), fixed DOFs of y set to zero when
 * mask_fixed */
static void apply_M(const cfModel* m, const double* Mb, const double* x, double* y, int mask_fixed) {
  for (int i = 0; i < m->nnode; i++) {
    double s[3] = {0, 0, 0};
    for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
      const double* xj = x + 3 * m->col[k];
      s[0] += Mb[k] * xj[0];
      s[1] += Mb[k] * xj[1];
      s[2] += Mb[k] * xj[2];
    }
    for (int a = 0; a < 3; a++) y[3 * i + a] = (mask_fixed && m->fixed[3 * i + a]) ? 0.0 : s[a];
  }
}

static double dot(int n, const double* a, const double* b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* largest |K phi - l M phi| / (max(l, 1e-3 l_max) |M phi|) over the pairs, on the free DOFs */
static double max_residual(const cfModel* m, const double* Mb, int k, const double* omega2, const double* modes) {
  const int n = m->ndof;
  double* kx = malloc(sizeof(double) * n);
  double* mx = malloc(sizeof(double) * n);
  if (!kx || !mx) { free(kx); free(mx); return NAN; }
  double lmax = 0;
  for (int i = 0; i < k; i++) lmax = fmax(lmax, fabs(omega2[i]));
  double worst = 0;
  for (int i = 0; i < k; i++) {
    const double* phi = modes + (size_t)i * n;
    apply_K(m, phi, kx);
    apply_M(m, Mb, phi, mx, 1);
    double rr = 0, mm = 0;
    for (int j = 0; j < n; j++) {
      if (m->fixed[j]) continue;
      double r = kx[j] - omega2[i] * mx[j];
      rr += r * r;
      mm += mx[j] * mx[j];
    }
    /* rigid-body modes (w^2 ~ 0): relative to the largest eigenvalue found instead */
    double den = fmax(fabs(omega2[i]), 1e-3 * lmax) * sqrt(mm);
    double res = den > 0 ? sqrt(rr) / den : sqrt(rr);
    if (res > worst) worst = res;
  }
  free(kx);
  free(mx);
  return worst;
}

/* ---- dense: LAPACKE dsygvx on the free DOFs ---------------------------------------------------- */
static int modal_dense(const cfModel* m, const double* Mb, int k, const int* map, int nf, double* omega2,
                       double* modes) {
  double* K = calloc((size_t)nf * nf, sizeof(double));
  double* M = calloc((size_t)nf * nf, sizeof(double));
  double* Z = malloc(sizeof(double) * (size_t)nf * k);
  double* w = malloc(sizeof(double) * nf);
  lapack_int* ifail = malloc(sizeof(lapack_int) * nf);
  int st = CF_OK;
  if (!K || !M || !Z || !w || !ifail) {
    st = cf_error(CF_ERR_NOMEM, "modal: out of memory for dense %d x %d matrices (%.0f MB)", nf, nf,
                  2.0 * nf * nf * 8 / 1e6);
    goto done;
  }
  /* column-major, upper triangle is all dsygvx reads; both triangles filled for simplicity */
  for (int e = 0; e < m->ntet; e++)
    for (int r = 0; r < 12; r++) {
      int gr = map[3 * m->tet[4 * e + r / 3] + r % 3];
      if (gr < 0) continue;
      for (int c = 0; c < 12; c++) {
        int gc = map[3 * m->tet[4 * e + c / 3] + c % 3];
        if (gc >= 0) K[(size_t)gc * nf + gr] += m->Ke[144 * (size_t)e + 12 * r + c];
      }
    }
  for (int i = 0; i < m->nnode; i++)
    for (int q = m->row_ptr[i]; q < m->row_ptr[i + 1]; q++)
      for (int a = 0; a < 3; a++) {
        int gr = map[3 * i + a], gc = map[3 * m->col[q] + a];
        if (gr >= 0 && gc >= 0) M[(size_t)gc * nf + gr] += Mb[q];
      }
  lapack_int found = 0;
  double abstol = 2 * LAPACKE_dlamch('S');
  lapack_int info = LAPACKE_dsygvx(LAPACK_COL_MAJOR, 1, 'V', 'I', 'U', nf, K, nf, M, nf, 0.0, 0.0, 1, k,
                                   abstol, &found, w, Z, nf, ifail);
  if (info != 0 || found < k) {
    st = cf_error(CF_ERR_SOLVER, "modal: LAPACKE_dsygvx failed (info %d, %d of %d eigenpairs)%s", (int)info,
                  (int)found, k, info > nf ? ": the mass matrix is not positive definite" : "");
    goto done;
  }
  for (int i = 0; i < k; i++) {
    omega2[i] = w[i];
    double* phi = modes + (size_t)i * m->ndof;
    for (int j = 0; j < m->ndof; j++) phi[j] = map[j] >= 0 ? Z[(size_t)i * nf + map[j]] : 0.0;
  }
done:
  free(K); free(M); free(Z); free(w); free(ifail);
  return st;
}

/* ---- shift-invert Lanczos with full M-reorthogonalisation ------------------------------------ */
static unsigned long long lcg_next(unsigned long long* s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

static int modal_lanczos(const cfModel* m, const double* Mb, int k, const cfModalOptions* opt, int nf,
                         double* omega2, double* modes, int* basis_out) {
  const int n = m->ndof;
  double sigma = opt->shift;
  if (isnan(sigma)) {
    sigma = 0;
    if (m->nfixed == 0) { /* free-free: K singular; shift below zero by a fraction of the mean K/M */
      double s = 0;
      int cnt = 0;
      for (int e = 0; e < m->ntet; e++)
        for (int r = 0; r < 12; r++, cnt++) s += m->Ke[144 * (size_t)e + 13 * r];
      double mass = 0;
      for (int i = 0; i < m->nnode; i++) mass += m->node_mass[i];
      sigma = -1e-4 * (s / cnt) / (mass / m->nnode);
    }
  }
  int mmax = opt->max_basis > 0 ? opt->max_basis : (20 * k > 300 ? 20 * k : 300);
  if (mmax > nf) mmax = nf;
  if (mmax < k) mmax = k;
  cfSparseSolver S;
  int st = cf_sparse_init(m, 1, &S);
  double* A = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  double* Q = malloc(sizeof(double) * (size_t)n * (mmax + 1));   /* Lanczos vectors */
  double* MQ = malloc(sizeof(double) * (size_t)n * (mmax + 1));  /* M times them */
  double* w = malloc(sizeof(double) * n);
  double* mw = malloc(sizeof(double) * n);
  double* alpha = malloc(sizeof(double) * mmax);
  double* beta = malloc(sizeof(double) * (mmax + 1));
  double* dT = malloc(sizeof(double) * mmax);
  double* eT = malloc(sizeof(double) * mmax);
  double* ZT = malloc(sizeof(double) * (size_t)mmax * mmax);
  if (st < 0 || !A || !Q || !MQ || !w || !mw || !alpha || !beta || !dT || !eT || !ZT) {
    if (st >= 0) st = cf_error(CF_ERR_NOMEM, "modal: out of memory for a Lanczos basis of %d x %d", mmax, n);
    goto done;
  }
  for (int q = 0; q < m->nnzb; q++) cf_block_gather(q, m->blk_src_ptr, m->blk_src, m->Ke, Mb, -sigma, 1.0, A);
  st = cf_sparse_factor(&S, A, m->fixed);
  if (st < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    st = cf_error(st, "modal: K - sigma M (sigma = %g) cannot be factored: %s", sigma, msg);
    goto done;
  }
  unsigned long long seed = 0x2545F4914F6CDD1DULL;
  int j = 0, converged = 0;
  double res_worst = INFINITY;
  int need_start = 1;
  while (j < mmax) {
    double* qj = Q + (size_t)j * n;
    double* mqj = MQ + (size_t)j * n;
    if (need_start) {
      /* a fresh (pseudo-random) start, purified by one application of the operator and
       * M-orthogonalised against the basis so far */
      for (int i = 0; i < n; i++) mw[i] = m->fixed[i] ? 0.0 : (double)(lcg_next(&seed) % 2000001) / 1e6 - 1.0;
      apply_M(m, Mb, mw, w, 1);
      if ((st = cf_sparse_solve(&S, w, qj)) < 0) goto done;
      for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < j; i++) {
          double c = dot(n, MQ + (size_t)i * n, qj);
          for (int r = 0; r < n; r++) qj[r] -= c * Q[(size_t)i * n + r];
        }
      for (int i = 0; i < n; i++) if (m->fixed[i]) qj[i] = 0;
      apply_M(m, Mb, qj, mqj, 1);
      double nr = sqrt(dot(n, qj, mqj));
      if (!(nr > 0)) { st = cf_error(CF_ERR_SOLVER, "modal: Lanczos start vector vanished"); goto done; }
      for (int i = 0; i < n; i++) { qj[i] /= nr; mqj[i] /= nr; }
      if (j > 0) beta[j] = 0; /* a new block of T */
      need_start = 0;
    }
    /* w = (K - sigma M)^-1 M q_j */
    if ((st = cf_sparse_solve(&S, mqj, w)) < 0) goto done;
    for (int i = 0; i < n; i++) if (m->fixed[i]) w[i] = 0;
    alpha[j] = dot(n, mqj, w);
    for (int i = 0; i < n; i++) w[i] -= alpha[j] * qj[i];
    if (j > 0 && beta[j] != 0)
      for (int i = 0; i < n; i++) w[i] -= beta[j] * Q[(size_t)(j - 1) * n + i];
    /* full reorthogonalisation, twice (classical Gram-Schmidt in the M inner product) */
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i <= j; i++) {
        double c = dot(n, MQ + (size_t)i * n, w);
        for (int r = 0; r < n; r++) w[r] -= c * Q[(size_t)i * n + r];
      }
    apply_M(m, Mb, w, mw, 1);
    double b = sqrt(fmax(dot(n, w, mw), 0.0));
    j++;
    /* convergence check of the k largest Ritz values of T_j (the lowest eigenvalues) */
    if (j >= k && (j % 5 == 0 || j == mmax || j == nf)) {
      for (int i = 0; i < j; i++) { dT[i] = alpha[i]; eT[i] = i + 1 < j ? beta[i + 1] : 0; }
      lapack_int info = LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', j, dT, eT, ZT, j);
      if (info != 0) { st = cf_error(CF_ERR_SOLVER, "modal: LAPACKE_dstev failed (%d)", (int)info); goto done; }
      /* dT ascending: the wanted theta are the last k */
      double worst = 0;
      for (int i = 0; i < k; i++) {
        int c = j - 1 - i;
        double th = dT[c];
        double est = fabs(b * ZT[(size_t)c * j + (j - 1)]) / fmax(fabs(th), 1e-300);
        if (!(th > 0)) est = INFINITY;
        if (est > worst) worst = est;
      }
      res_worst = worst;
      if (worst <= opt->tol || j == nf) {
        for (int i = 0; i < k; i++) {
          int c = j - 1 - i;
          omega2[i] = sigma + 1.0 / dT[c];
          double* phi = modes + (size_t)i * n;
          memset(phi, 0, sizeof(double) * n);
          for (int q = 0; q < j; q++) {
            double z = ZT[(size_t)c * j + q];
            const double* qq = Q + (size_t)q * n;
            for (int r = 0; r < n; r++) phi[r] += z * qq[r];
          }
        }
        converged = 1;
        break;
      }
    }
    if (j >= mmax) break;
    if (b <= 1e-12 * fabs(alpha[j - 1])) { /* invariant subspace: restart in a new block */
      need_start = 1;
      continue;
    }
    beta[j] = b;
    double* qn = Q + (size_t)j * n;
    double* mqn = MQ + (size_t)j * n;
    for (int i = 0; i < n; i++) { qn[i] = w[i] / b; mqn[i] = mw[i] / b; }
  }
  if (!converged) {
    st = cf_error(CF_ERR_SOLVER, "modal: Lanczos did not converge within a basis of %d (residual estimate %.2e > %.1e)",
                  mmax, res_worst, opt->tol);
    goto done;
  }
  *basis_out = j;
  st = CF_OK;
done:
  cf_sparse_free(&S);
  free(A); free(Q); free(MQ); free(w); free(mw); free(alpha); free(beta); free(dT); free(eT); free(ZT);
  return st;
}

int cf_modal_solve(const cfModel* m, int k, const cfModalOptions* opt_in, double* omega2, double* modes,
                   cfModalInfo* info) {
  cfModalOptions opt = opt_in ? *opt_in : cf_default_modal_options();
  double t0 = cf_wall_time();
  int* map = malloc(sizeof(int) * m->ndof);
  if (!map) return cf_error(CF_ERR_NOMEM, "modal: out of memory");
  int nf = 0;
  for (int i = 0; i < m->ndof; i++) map[i] = m->fixed[i] ? -1 : nf++;
  if (k < 1 || k > nf) {
    free(map);
    return cf_error(CF_ERR_ARG, "modal: %d eigenpairs asked for, the model has %d free DOFs", k, nf);
  }
  if (!(opt.tol > 0)) {
    free(map);
    return cf_error(CF_ERR_ARG, "modal: tolerance %g must be positive", opt.tol);
  }
  int method = opt.method;
  if (method == CF_MODAL_AUTO) method = nf <= opt.dense_max ? CF_MODAL_DENSE : CF_MODAL_LANCZOS;
  double* own = modes ? NULL : malloc(sizeof(double) * (size_t)k * m->ndof);
  double* phi = modes ? modes : own;
  double* Mown = opt.mass == CF_MODAL_MASS_ONE_POINT ? malloc(sizeof(double) * m->nnzb) : NULL;
  const double* Mb = m->Mblk;
  if (Mown) {
    cf_mass_one_point(m, Mown);
    Mb = Mown;
  }
  int basis = 0, st;
  if (!phi || (opt.mass == CF_MODAL_MASS_ONE_POINT && !Mown)) st = cf_error(CF_ERR_NOMEM, "modal: out of memory for %d modes", k);
  else if (method == CF_MODAL_DENSE) {
    st = modal_dense(m, Mb, k, map, nf, omega2, phi);
    if (st < 0 && opt.method == CF_MODAL_AUTO) { /* e.g. a singular one-point mass: Lanczos needs no M^-1 */
      method = CF_MODAL_LANCZOS;
      st = modal_lanczos(m, Mb, k, &opt, nf, omega2, phi, &basis);
    }
  } else st = modal_lanczos(m, Mb, k, &opt, nf, omega2, phi, &basis);
  if (st >= 0 && info) {
    info->method = method;
    info->nfree = nf;
    info->basis = basis;
    info->max_residual = max_residual(m, Mb, k, omega2, phi);
    info->seconds = cf_wall_time() - t0;
  }
  free(Mown);
  free(own);
  free(map);
  return st;
}
