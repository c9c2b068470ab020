/* Modal analysis: lowest eigenpairs of K phi = w^2 M phi on the free DOFs (see cofem/modal.h).
 * K is assembled from the element K_e (rest state), M from the model's mass blocks Mblk. */
#include <arpack/arpack.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/modal.h"
#include "fem/fem_element.h"
#include "fem/fem_sparse.h"

cfModalOptions cf_default_modal_options(void) {
  cfModalOptions o;
  o.method = CF_MODAL_AUTO;
  o.mass = CF_MODAL_MASS_MODEL;
  o.dense_max = 100; /* Lanczos wins from a few hundred DOFs up: include/cofem/modal.h */
  o.shift = NAN;
  o.tol = 1e-10;
  o.max_basis = 0;
  return o;
}

/* y = K x (full DOF vectors) with the unrotated element stiffness */
static void apply_K(const cfModel* m, const double* x, double* y) {
  memset(y, 0, sizeof(double) * m->ndof);
  for (int e = 0; e < m->ntet; e++) {
    const int np = m->npe, nk = 3 * np;
    const int* t = m->tet + np * (size_t)e;
    const double* K = m->Ke + (size_t)nk * nk * e;
    double u[30];
    for (int a = 0; a < np; a++)
      for (int i = 0; i < 3; i++) u[3 * a + i] = x[3 * t[a] + i];
    for (int r = 0; r < nk; r++) {
      double s = 0;
      for (int c = 0; c < nk; c++) s += K[nk * r + c] * u[c];
      y[3 * t[r / 3] + r % 3] += s;
    }
  }
}

void cf_mass_calculix(const cfModel* m, double* Mblk) {
  if (m->npe == 4) {
    cf_mass_one_point(m, Mblk);
    return;
  }
  /* quadratic: blk_src holds 100 e + 10 a + b (fem_model.c): every element's 4-point mass formed
   * once (800 bytes an element), then gathered; without the memory, formed again whenever the
   * element changes between consecutive entries (a block gathers from ~5-20 elements) */
  double Me[100], Xe[30];
  double* Mall = malloc(sizeof(double) * 100 * (size_t)(m->ntet > 0 ? m->ntet : 1));
  for (int e = 0; Mall && e < m->ntet; e++) {
    cf_tet10_positions(m->X, m->tet + 10 * (size_t)e, Xe);
    cf_tet10_mass_gauss4(Xe, m->def.rho, Mall + 100 * (size_t)e);
  }
  int e_have = -1;
  for (int q = 0; q < m->nnzb; q++) {
    double s = 0;
    for (int k = m->blk_src_ptr[q]; k < m->blk_src_ptr[q + 1]; k++) {
      const int i = m->blk_src[k], e = i / 100, ab = i % 100;
      if (Mall) {
        s += Mall[i];
        continue;
      }
      if (e != e_have) {
        cf_tet10_positions(m->X, m->tet + 10 * (size_t)e, Xe);
        cf_tet10_mass_gauss4(Xe, m->def.rho, Me);
        e_have = e;
      }
      s += Me[ab];
    }
    Mblk[q] = s;
  }
  free(Mall);
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
  const int np = m->npe, nk = 3 * np;
  for (int e = 0; e < m->ntet; e++)
    for (int r = 0; r < nk; r++) {
      int gr = map[3 * m->tet[np * e + r / 3] + r % 3];
      if (gr < 0) continue;
      for (int c = 0; c < nk; c++) {
        int gc = map[3 * m->tet[np * e + c / 3] + c % 3];
        if (gc >= 0) K[(size_t)gc * nf + gr] += m->Ke[(size_t)nk * nk * e + nk * r + c];
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

/* ---- shift-invert Lanczos: ARPACK dsaupd/dseupd, mode 3 ----------------------------------------
 * Implicitly restarted Lanczos (ARPACK, arpack-ng's C binding) on OP = (K - sigma M)^-1 M in the M
 * inner product (bmat 'G'), the vectors restricted to the free DOFs; K - sigma M is factored once
 * by CHOLMOD (fem_sparse.c, fixed DOFs as identity rows). which 'LM': the largest |theta| of OP,
 * theta = 1 / (w^2 - sigma), are the eigenvalues nearest sigma. */

static unsigned long long lcg_next(unsigned long long* s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* the default shift: 0 with supports; free-free (K singular) a fraction of the mean K/M below 0,
 * so that K - sigma M is positive definite and the rigid-body modes are the nearest to sigma */
static double default_shift(const cfModel* m) {
  if (m->nfixed > 0) return 0;
  double s = 0;
  int cnt = 0;
  for (int e = 0; e < m->ntet; e++)
    for (int r = 0; r < 3 * m->npe; r++, cnt++) s += m->Ke[9 * (size_t)m->npe * m->npe * e + (3 * m->npe + 1) * r];
  double mass = 0;
  for (int i = 0; i < m->nnode; i++) mass += m->node_mass[i];
  return -1e-4 * (s / cnt) / (mass / m->nnode);
}

static const char* dsaupd_info_text(int info) {
  switch (info) {
    case 1: return "maximum number of restarts taken";
    case 3: return "no shifts could be applied during a restart: raise max_basis (ncv)";
    case -1: return "N must be positive";
    case -2: return "NEV must be positive";
    case -3: return "NCV must be greater than NEV and at most N";
    case -4: return "the maximum number of restarts must be positive";
    case -7: return "workspace LWORKL too small";
    case -8: return "error in the tridiagonal eigen solve (LAPACK dsteqr)";
    case -9: return "starting vector is zero";
    case -9999: return "could not build a Lanczos factorisation";
    default: return "see the ARPACK documentation of dsaupd";
  }
}

static const char* dseupd_info_text(int info) {
  switch (info) {
    case -8: return "error in the tridiagonal eigen solve (LAPACK dsteqr)";
    case -9: return "starting vector is zero";
    case -14: return "dsaupd found no eigenvalue to sufficient accuracy";
    case -17: return "dseupd found a different number of converged Ritz values than dsaupd";
    default: return "see the ARPACK documentation of dseupd";
  }
}

typedef struct {
  const cfModel* m;
  const double* Mb;
  const int* free_dof; /* [nf] full DOF index of each free DOF */
  cfSparseSolver* S;
  double *xf, *yf;     /* [ndof] scratch */
} ArpackOp;

/* y = M x on the free DOFs */
static void op_M(ArpackOp* o, int nf, const double* x, double* y) {
  memset(o->xf, 0, sizeof(double) * o->m->ndof);
  for (int i = 0; i < nf; i++) o->xf[o->free_dof[i]] = x[i];
  apply_M(o->m, o->Mb, o->xf, o->yf, 1);
  for (int i = 0; i < nf; i++) y[i] = o->yf[o->free_dof[i]];
}

/* y = (K - sigma M)^-1 b on the free DOFs */
static int op_solve(ArpackOp* o, int nf, const double* b, double* y) {
  memset(o->xf, 0, sizeof(double) * o->m->ndof);
  for (int i = 0; i < nf; i++) o->xf[o->free_dof[i]] = b[i];
  int st = cf_sparse_solve(o->S, o->xf, o->yf);
  if (st < 0) return st;
  for (int i = 0; i < nf; i++) y[i] = o->yf[o->free_dof[i]];
  return CF_OK;
}

typedef struct {
  int nf, k, ncv, maxitr;
  double tol, sigma;
  double *resid, *v, *workd, *workl, *d, *z;
  a_int* select;
  int iterations, solves; /* out */
} ArpackRun;

/* The reverse-communication loop of dsaupd, then dseupd for the Ritz values w^2 (d) and the
 * M-orthonormal Ritz vectors (z). ARPACK keeps its state between the calls in Fortran SAVE
 * variables: the caller runs this in a critical section. */
static int arpack_run(ArpackOp* o, ArpackRun* r) {
  const int nf = r->nf;
  a_int ido = 0, info = 1; /* info 1: resid holds the starting vector */
  a_int iparam[11] = {0}, ipntr[11] = {0};
  iparam[0] = 1;         /* exact shifts */
  iparam[2] = r->maxitr; /* restarts allowed */
  iparam[3] = 1;         /* block size */
  iparam[6] = 3;         /* shift-invert, generalised */
  const a_int lworkl = r->ncv * (r->ncv + 8);
  for (;;) {
    dsaupd_c(&ido, "G", nf, "LM", r->k, r->tol, r->resid, r->ncv, r->v, nf, iparam, ipntr, r->workd, r->workl,
             lworkl, &info);
    double* x = r->workd + ipntr[0] - 1;
    double* y = r->workd + ipntr[1] - 1;
    if (ido == -1) { /* y = OP x, M x not given */
      op_M(o, nf, x, y);
      memcpy(x, y, sizeof(double) * nf); /* x is ARPACK's scratch here; y = A^-1 (M x) */
      int st = op_solve(o, nf, x, y);
      if (st < 0) return st;
    } else if (ido == 1) { /* y = OP x with M x at ipntr[2] */
      int st = op_solve(o, nf, r->workd + ipntr[2] - 1, y);
      if (st < 0) return st;
    } else if (ido == 2) {
      op_M(o, nf, x, y);
    } else break;
  }
  r->iterations = iparam[2];
  r->solves = iparam[8];
  if (info < 0 || info == 3)
    return cf_error(CF_ERR_SOLVER, "modal: ARPACK dsaupd failed (info %d: %s; n %d, nev %d, ncv %d)", (int)info,
                    dsaupd_info_text(info), nf, r->k, r->ncv);
  if (info == 1 || iparam[4] < r->k)
    return cf_error(CF_ERR_SOLVER,
                    "modal: ARPACK dsaupd did not converge (info %d: %s): %d of %d eigenpairs to tolerance %.1e after "
                    "%d restarts with a basis of %d (raise max_basis)",
                    (int)info, dsaupd_info_text(info), (int)iparam[4], r->k, r->tol,
                    info == 1 ? r->maxitr : (int)iparam[2], r->ncv);
  dseupd_c(1, "A", r->select, r->d, r->z, nf, r->sigma, "G", nf, "LM", r->k, r->tol, r->resid, r->ncv, r->v, nf,
           iparam, ipntr, r->workd, r->workl, lworkl, &info);
  if (info != 0)
    return cf_error(CF_ERR_SOLVER, "modal: ARPACK dseupd failed (info %d: %s)", (int)info, dseupd_info_text(info));
  return CF_OK;
}

static int modal_lanczos(const cfModel* m, const double* Mb, int k, const cfModalOptions* opt, const int* map,
                         int nf, double* omega2, double* modes, int* basis_out, int* iter_out, int* solves_out) {
  const int n = m->ndof;
  const double sigma = isnan(opt->shift) ? default_shift(m) : opt->shift;
  /* ARPACK: k < ncv <= nf (the caller sends k = nf to the dense solver) */
  int ncv = opt->max_basis > 0 ? opt->max_basis : (2 * k > k + 20 ? 2 * k : k + 20);
  if (ncv > nf) ncv = nf;
  if (ncv <= k) ncv = k + 1;
  cfSparseSolver S;
  int st = cf_sparse_init(m, 1, &S);
  ArpackRun r = {.nf = nf, .k = k, .ncv = ncv, .maxitr = 300, .tol = opt->tol, .sigma = sigma};
  ArpackOp o = {.m = m, .Mb = Mb, .S = &S};
  double* A = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  int* free_dof = malloc(sizeof(int) * nf);
  o.xf = malloc(sizeof(double) * n);
  o.yf = malloc(sizeof(double) * n);
  r.resid = malloc(sizeof(double) * nf);
  r.v = malloc(sizeof(double) * (size_t)nf * ncv);
  r.workd = malloc(sizeof(double) * 3 * (size_t)nf);
  r.workl = malloc(sizeof(double) * (size_t)ncv * (ncv + 8));
  r.d = malloc(sizeof(double) * k);
  r.z = malloc(sizeof(double) * (size_t)nf * k);
  r.select = calloc(ncv, sizeof(a_int));
  int* order = malloc(sizeof(int) * k);
  if (st < 0 || !A || !free_dof || !o.xf || !o.yf || !r.resid || !r.v || !r.workd || !r.workl || !r.d || !r.z ||
      !r.select || !order) {
    if (st >= 0) st = cf_error(CF_ERR_NOMEM, "modal: out of memory for a Lanczos basis of %d x %d", ncv, nf);
    goto done;
  }
  for (int i = 0; i < n; i++)
    if (map[i] >= 0) free_dof[map[i]] = i;
  o.free_dof = free_dof;
  for (int q = 0; q < m->nnzb; q++) cf_block_gather_n(q, m->npe, m->blk_src_ptr, m->blk_src, m->Ke, Mb, -sigma, 1.0, A);
  st = cf_sparse_factor(&S, A, m->fixed);
  if (st < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    st = cf_error(st, "modal: K - sigma M (sigma = %g) cannot be factored: %s", sigma, msg);
    goto done;
  }
  /* a deterministic start (ARPACK's own random start continues one sequence across calls) */
  unsigned long long seed = 0x2545F4914F6CDD1DULL;
  for (int i = 0; i < nf; i++) r.resid[i] = (double)(lcg_next(&seed) % 2000001) / 1e6 - 1.0;
#pragma omp critical(cofem_arpack)
  st = arpack_run(&o, &r);
  if (st < 0) goto done;
  /* ascending w^2 (dseupd's order is not relied on) */
  for (int i = 0; i < k; i++) {
    int j = i;
    while (j > 0 && r.d[order[j - 1]] > r.d[i]) { order[j] = order[j - 1]; j--; }
    order[j] = i;
  }
  for (int i = 0; i < k; i++) {
    omega2[i] = r.d[order[i]];
    const double* zi = r.z + (size_t)order[i] * nf;
    double* phi = modes + (size_t)i * n;
    memset(phi, 0, sizeof(double) * n);
    for (int j = 0; j < nf; j++) phi[free_dof[j]] = zi[j];
  }
  *basis_out = ncv;
  *iter_out = r.iterations;
  *solves_out = r.solves;
  st = CF_OK;
done:
  cf_sparse_free(&S);
  free(A); free(free_dof); free(o.xf); free(o.yf); free(r.resid); free(r.v); free(r.workd); free(r.workl);
  free(r.d); free(r.z); free(r.select); free(order);
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
  if (method == CF_MODAL_AUTO) method = nf <= opt.dense_max || 3 * k > nf ? CF_MODAL_DENSE : CF_MODAL_LANCZOS;
  if (k == nf) method = CF_MODAL_DENSE; /* ARPACK needs k < free DOFs: all of them is a dense problem */
  double* own = modes ? NULL : malloc(sizeof(double) * (size_t)k * m->ndof);
  double* phi = modes ? modes : own;
  double* Mown = opt.mass == CF_MODAL_MASS_CALCULIX ? malloc(sizeof(double) * m->nnzb) : NULL;
  const double* Mb = m->Mblk;
  if (Mown) {
    cf_mass_calculix(m, Mown);
    Mb = Mown;
  }
  int basis = 0, iterations = 0, solves = 0, st;
  if (!phi || (opt.mass == CF_MODAL_MASS_CALCULIX && !Mown)) st = cf_error(CF_ERR_NOMEM, "modal: out of memory for %d modes", k);
  else if (method == CF_MODAL_DENSE) {
    st = modal_dense(m, Mb, k, map, nf, omega2, phi);
    if (st < 0 && opt.method == CF_MODAL_AUTO && k < nf) { /* e.g. a singular one-point mass: Lanczos needs no M^-1 */
      method = CF_MODAL_LANCZOS;
      st = modal_lanczos(m, Mb, k, &opt, map, nf, omega2, phi, &basis, &iterations, &solves);
    }
  } else st = modal_lanczos(m, Mb, k, &opt, map, nf, omega2, phi, &basis, &iterations, &solves);
  if (st >= 0 && info) {
    info->method = method;
    info->nfree = nf;
    info->basis = basis;
    info->iterations = iterations;
    info->solves = solves;
    info->max_residual = max_residual(m, Mb, k, omega2, phi);
    info->seconds = cf_wall_time() - t0;
  }
  free(Mown);
  free(own);
  free(map);
  return st;
}
