/* Stage 3: preconditioned conjugate gradients for A v = b, three ways: block Jacobi (d->Pinv) or
 * a rotated preconditioner (d->precond: rotated Cholesky or AMG, fem_precond.c) on the assembled
 * blocks (cf_stage_pcg), and a rotated preconditioner with K_R applied element by element, A never
 * formed (cf_step_solve_matfree); all with the fixed DOFs projected out (their velocity stays 0, their residual is filtered), warm-started with the
 * previous velocities (paper 003: velocities change little within a step).
 * Convergence: |r| <= tol max(|b|, b_scale) on the free DOFs (see cofem/fem.h). A breakdown or the iteration cap leaves the
 * last finite iterate and returns a counted warning. */
#include <math.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_backend.h"
#include "fem/fem_element.h"
#include "fem/fem_parallel.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"

/* Deterministic dot product: fixed chunks, summed in order. */
static double dot_chunk(int c, int n, const double* a, const double* b) {
  int lo = c * CF_DOT_CHUNK, hi = lo + CF_DOT_CHUNK < n ? lo + CF_DOT_CHUNK : n;
  double s = 0;
  for (int i = lo; i < hi; i++) s += a[i] * b[i];
  return s;
}

static double dot(const cfModel* m, const cfData* d, int n, const double* a, const double* b) {
  const int nchunk = (n + CF_DOT_CHUNK - 1) / CF_DOT_CHUNK;
  CF_FOR(m, c, nchunk, nchunk > 4, d->dot_partial[c] = dot_chunk(c, n, a, b));
  double s = 0;
  for (int c = 0; c < nchunk; c++) s += d->dot_partial[c];
  return s;
}

static void spmv(const cfModel* m, const double* A, const double* x, double* y) {
  CF_FOR(m, i, m->nnode, m->nnode > 2048, cf_bsr_row(i, m->row_ptr, m->col, A, x, y));
}

/* z = P^-1 r. The rotated preconditioners can fail (a CHOLMOD solve, the AMG's coarsest solve):
 * their status goes back to the step, which then keeps its start state. */
static int precondition(const cfModel* m, cfData* d, const double* r, double* z) {
  if (d->precond) return cf_precond_apply(m, d, r, z);
  const double* Pinv = d->Pinv;
  for (int n = 0; n < m->nnode; n++) {
    const double* P = Pinv + 9 * n;
    const double* rn = r + 3 * n;
    for (int i = 0; i < 3; i++) z[3 * n + i] = P[3 * i] * rn[0] + P[3 * i + 1] * rn[1] + P[3 * i + 2] * rn[2];
  }
  return CF_OK;
}

static void project(const cfModel* m, const cfData* d, double* y) {
  if (!d->supports_active || !m->nfixed) return;
  for (int i = 0; i < m->ndof; i++)
    if (m->fixed[i]) y[i] = 0;
}

/* The warm start's sums over node chunk k into d->dot_partial. */
static void warm_chunk(const cfModel* m, cfData* d, int k, const double* v0, const double* v1) {
  const int use_fixed = d->supports_active && m->nfixed;
  double* s = d->dot_partial + CF_WARM_NSUM * k;
  for (int j = 0; j < CF_WARM_NSUM; j++) s[j] = 0;
  const int hi = (k + 1) * CF_WARM_CHUNK < m->nnode ? (k + 1) * CF_WARM_CHUNK : m->nnode;
  for (int n = k * CF_WARM_CHUNK; n < hi; n++) cf_node_warm_sums(n, v0, v1, d->warm_Av0, d->warm_Av1, d->b, m->fixed, use_fixed, s);
}

/* The warm start's coefficients c[2] (cf_warm_coefficients). */
static void warm_coefficients(const cfModel* m, cfData* d, const double* v0, const double* v1, double* c) {
  const int nchunk = (m->nnode + CF_WARM_CHUNK - 1) / CF_WARM_CHUNK;
  CF_FOR(m, k, nchunk, nchunk > 4, warm_chunk(m, d, k, v0, v1));
  double s[CF_WARM_NSUM] = {0};
  for (int k = 0; k < nchunk; k++)
    for (int j = 0; j < CF_WARM_NSUM; j++) s[j] += d->dot_partial[CF_WARM_NSUM * k + j];
  cf_warm_coefficients(s, m->def.pcg_tol, d->b_scale, c);
}

/* |b|^2 on the free DOFs */
static double b_norm2(const cfModel* m, const cfData* d) {
  double bb = 0;
  const int fixed = d->supports_active && m->nfixed;
  for (int i = 0; i < m->ndof; i++)
    if (!(fixed && m->fixed[i])) bb += d->b[i] * d->b[i];
  return bb;
}

/* A v0 into d->warm_Av0 and A v1 into d->warm_Av1: the assembled blocks, or the element products */
typedef void (*WarmProducts)(const cfModel* m, cfData* d, const void* op, const double* v0, const double* v1);

static void warm_products_assembled(const cfModel* m, cfData* d, const void* op, const double* v0, const double* v1) {
  (void)op;
  spmv(m, d->A, v0, d->warm_Av0);
  spmv(m, d->A, v1, d->warm_Av1);
}

/* d->v = c0 v0 + c1 v1 (cf_pcg_warm_start); form_r: also d->r = b - A d->v on the free DOFs,
 * from the products already made, for pcg(.., have_r = 1) */
static void warm_start(const cfModel* m, cfData* d, double* v1, WarmProducts products, const void* op, int form_r) {
  const int n = m->ndof;
  double* v0 = d->v;
  if (!cf_warm_start_needed(b_norm2(m, d), m->def.pcg_tol, d->b_scale)) {
    memset(v0, 0, sizeof(double) * n); /* x = 0 meets the tolerance: no products (a part at rest) */
    if (form_r) {
      memcpy(d->r, d->b, sizeof(double) * n);
      project(m, d, d->r);
    }
    return;
  }
  double c[2];
  project(m, d, v0);
  project(m, d, v1);
  products(m, d, op, v0, v1);
  warm_coefficients(m, d, v0, v1, c);
  for (int i = 0; i < n; i++) v0[i] = c[0] * v0[i] + c[1] * v1[i];
  if (form_r) {
    const int fixed = d->supports_active && m->nfixed;
    for (int i = 0; i < n; i++) d->r[i] = fixed && m->fixed[i] ? 0.0 : d->b[i] - c[0] * d->warm_Av0[i] - c[1] * d->warm_Av1[i];
  }
}

void cf_pcg_warm_start(const cfModel* m, cfData* d, double* v1) {
  warm_start(m, d, v1, warm_products_assembled, NULL, 0);
}

/* y = A x for the PCG: the assembled blocks (op NULL), or the matrix-free products (op: a
 * cfMatfreeOp). */
typedef void (*ApplyA)(const cfModel* m, cfData* d, const void* op, const double* x, double* y);

static void apply_assembled(const cfModel* m, cfData* d, const void* op, const double* x, double* y) {
  (void)op;
  spmv(m, d->A, x, y);
}

/* PCG from x = d->v; have_r: d->r already holds b - A x on the free DOFs (x projected). */
static int pcg(const cfModel* m, cfData* d, ApplyA apply, const void* op, int have_r) {
  const int n = m->ndof;
  double *x = d->v, *r = d->r, *z = d->z, *p = d->p, *q = d->q;
  double bnorm, rnorm;
  if (have_r) {
    bnorm = sqrt(b_norm2(m, d));
    rnorm = sqrt(dot(m, d, n, r, r));
  } else {
    if (!m->def.warm_start) memset(x, 0, sizeof(double) * n);
    project(m, d, x);
    /* b on the free DOFs sets the scale of the tolerance */
    memcpy(r, d->b, sizeof(double) * n);
    project(m, d, r);
    bnorm = sqrt(dot(m, d, n, r, r));
    apply(m, d, op, x, q);
    for (int i = 0; i < n; i++) r[i] -= q[i];
    project(m, d, r);
    rnorm = sqrt(dot(m, d, n, r, r));
  }
  double scale, target; /* absurd inputs (1e300 N, 1e300 kg/m^3) overflow: CF_ERR_ARG */
  if (!cf_pcg_target(bnorm, d->b_scale, m->def.pcg_tol, &scale, &target))
    return cf_pcg_result(m, d, CF_ERR_ARG, 0, rnorm, bnorm, d->b_scale);
  int it = 0, status = CF_OK;
  if (rnorm > target) {
    if ((status = precondition(m, d, r, z)) < 0) return status;
    memcpy(p, z, sizeof(double) * n);
    project(m, d, p);
    double rz = dot(m, d, n, r, z);
    for (it = 1; it <= m->def.pcg_max_iter; it++) {
      apply(m, d, op, p, q);
      project(m, d, q);
      double pq = dot(m, d, n, p, q);
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
      rnorm = sqrt(dot(m, d, n, r, r));
      if (rnorm <= target) break;
      if ((status = precondition(m, d, r, z)) < 0) return status;
      double rz_new = dot(m, d, n, r, z);
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
  return cf_pcg_result(m, d, status, it, rnorm, bnorm, d->b_scale);
}

int cf_pcg_result(const cfModel* m, cfData* d, int status, int it, double rnorm, double bnorm, double b_scale) {
  double scale, target;
  if (status == CF_ERR_ARG || !cf_pcg_target(bnorm, b_scale, m->def.pcg_tol, &scale, &target))
    return cf_error(CF_ERR_ARG, "step %ld: the right side is not finite (|b| = %g, force scale %g): "
                    "forces, density or time step out of range", d->steps + 1, bnorm, b_scale);
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

int cf_stage_pcg(const cfModel* m, cfData* d) {
  return pcg(m, d, apply_assembled, NULL, 0);
}

/* ---- the matrix-free step (rotated Cholesky): K_R is applied element by element ----------- */

/* Element products K_R x_k and rows of A x_k = cm M x_k + ck K_R x_k (+ eps x_k) for nx (1 or 2)
 * vectors. In parallel: one pass over the elements into the scratch ye, then each node gathers its
 * contributions (cf_node_apply_A_mf). On one thread the element results are added into y at once
 * (no scratch round trip), in element order, which is the gather's order (node_src is sorted by
 * element): the same sums, bit for bit. */
static void elem_products(const cfModel* m, const double* G, double lam, double mu, int e, int nx,
                          const double* const* x, double* ye) {
  for (int k = 0; k < nx; k++)
    cf_elem_apply_KR_mf(e, m->tet, G, m->vol, lam, mu, x[k], ye + 12 * ((size_t)m->ntet * k + e));
}

static void node_products(const cfModel* m, const double* ye, double cm, double ck, int n, int nx,
                          const double* const* x, double* const* y) {
  for (int k = 0; k < nx; k++)
    cf_node_apply_A_mf(n, m->node_src_ptr, m->node_src, ye + 12 * (size_t)m->ntet * k, m->row_ptr, m->col, m->diag,
                       m->Mblk, !m->def.consistent_mass, cm, ck, x[k], y[k]);
}

static void apply_matfree_n(const cfModel* m, const cfMatfreeOp* op, int nx, const double* const* x, double* const* y) {
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  const double cm = op->cm, ck = op->ck, eps = op->eps;
  if (m->ntet > 2048 && cf_threads(m) > 1) {
    CF_FOR(m, e, m->ntet, 1, elem_products(m, op->G, lam, mu, e, nx, x, op->ye));
    CF_FOR(m, n, m->nnode, m->nnode > 4096, node_products(m, op->ye, cm, ck, n, nx, x, y));
  } else {
    for (int k = 0; k < nx; k++) {
      double* yk = y[k];
      memset(yk, 0, sizeof(double) * m->ndof);
      for (int e = 0; e < m->ntet; e++) {
        double f[12];
        const int* t = m->tet + 4 * e;
        cf_elem_apply_KR_mf(e, m->tet, op->G, m->vol, lam, mu, x[k], f);
        for (int a = 0; a < 4; a++)
          for (int i = 0; i < 3; i++) yk[3 * t[a] + i] += f[3 * a + i];
      }
      for (int n = 0; n < m->nnode; n++) {
        double mv[3];
        cf_node_mass_apply(n, m->row_ptr, m->col, m->diag, m->Mblk, !m->def.consistent_mass, x[k], mv);
        for (int i = 0; i < 3; i++) yk[3 * n + i] = cm * mv[i] + ck * yk[3 * n + i];
      }
    }
  }
  if (eps != 0)
    for (int k = 0; k < nx; k++)
      for (int i = 0; i < m->ndof; i++) y[k][i] += eps * x[k][i];
}

void cf_matfree_apply(const cfModel* m, const cfMatfreeOp* op, const double* x, double* y) {
  apply_matfree_n(m, op, 1, &x, &y);
}

void cf_bsr_apply(const cfModel* m, const double* A, const double* x, double* y) { spmv(m, A, x, y); }

static void apply_matfree(const cfModel* m, cfData* d, const void* op, const double* x, double* y) {
  (void)d;
  apply_matfree_n(m, op, 1, &x, &y);
}

static void warm_products_matfree(const cfModel* m, cfData* d, const void* op, const double* v0, const double* v1) {
  const double* x[2] = {v0, v1};
  double* y[2] = {d->warm_Av0, d->warm_Av1};
  apply_matfree_n(m, op, 2, x, y);
}

int cf_pcg_matfree(const cfModel* m, cfData* d, const cfMatfreeOp* op, double* v1) {
  if (v1) {
    warm_start(m, d, v1, warm_products_matfree, op, 1);
    return pcg(m, d, apply_matfree, op, 1);
  }
  return pcg(m, d, apply_matfree, op, 0);
}

int cf_step_solve_matfree(const cfModel* m, cfData* d, double* v1, double* t_assembled) {
  /* elastic force (d->fe, d->f_el) without K_R; b and b_scale as cf_stage_assemble_system */
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  double* ye = cf_precond_scratch(d);
  double* G = ye + 24 * (size_t)m->ntet;
  CF_FOR(m, e, m->ntet, m->ntet > 2048, cf_elem_rotated_gradients(e, m->Dm_inv, d->R, G));
  CF_FOR(m, e, m->ntet, m->ntet > 2048, cf_elem_force_mf(e, m->tet, G, m->vol, lam, mu, d->x, d->fe));
  CF_FOR(m, k, m->nnode, m->nnode > 4096, cf_node_gather(k, m->node_src_ptr, m->node_src, d->fe, d->f_el));
  cf_rhs_euler(m, d, m->def.dt);
  cf_precond_update(m, d);
  *t_assembled = cf_wall_time();
  cfMatfreeOp op = {G, ye, 0, 0, 0};
  cf_system_coefficients(m, m->def.dt, &op.cm, &op.ck);
  /* the warm start (cf_pcg_warm_start) with A v0, A v1 from the element products */
  return cf_pcg_matfree(m, d, &op, m->def.warm_start ? v1 : NULL);
}

/* ---- several right-hand sides in lockstep (cf_pcg_matfree_multi) ----------------------------- */

/* y_k = A x_k for nx vectors: each element's rotated gradients read once for all of them */
static void apply_matfree_multi(const cfModel* m, const cfMatfreeOp* op, int nx, const double* const* x, double* const* y) {
  if (m->ntet > 2048 && cf_threads(m) > 1) { /* the parallel products, two vectors at a time (ye) */
    for (int k = 0; k < nx; k += 2) apply_matfree_n(m, op, nx - k < 2 ? 1 : 2, x + k, y + k);
    return;
  }
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  for (int k = 0; k < nx; k++) memset(y[k], 0, sizeof(double) * m->ndof);
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + 4 * e;
    for (int k = 0; k < nx; k++) {
      double f[12];
      cf_elem_apply_KR_mf(e, m->tet, op->G, m->vol, lam, mu, x[k], f);
      double* yk = y[k];
      for (int a = 0; a < 4; a++)
        for (int i = 0; i < 3; i++) yk[3 * t[a] + i] += f[3 * a + i];
    }
  }
  for (int k = 0; k < nx; k++) {
    double* yk = y[k];
    for (int n = 0; n < m->nnode; n++) {
      double mv[3];
      cf_node_mass_apply(n, m->row_ptr, m->col, m->diag, m->Mblk, !m->def.consistent_mass, x[k], mv);
      for (int i = 0; i < 3; i++) yk[3 * n + i] = op->cm * mv[i] + op->ck * yk[3 * n + i] + op->eps * x[k][3 * n + i];
    }
  }
}

/* z_k = P^-1 r_k for nx vectors: one pass over a copied factor for all of them */
static int precondition_multi(const cfModel* m, cfData* d, int nx, const double* const* r, double* const* z, double* work) {
  if (d->precond) return cf_precond_apply_multi(m, d, nx, r, z, work);
  for (int k = 0; k < nx; k++) {
    int st = precondition(m, d, r[k], z[k]);
    if (st < 0) return st;
  }
  return CF_OK;
}

long cf_pcg_multi_work(const cfModel* m, int nc) {
  return 4L * nc * m->ndof + cf_precond_apply_multi_work(m, nc);
}

int cf_pcg_matfree_multi(const cfModel* m, cfData* d, const cfMatfreeOp* op, int nc, const double* const* b,
                         double* const* x, const double* b_scale, double* work) {
  enum { MAXC = CF_PCG_MULTI_MAX };
  if (nc > MAXC) return cf_error(CF_ERR_ARG, "cf_pcg_matfree_multi: %d right-hand sides (at most %d)", nc, MAXC);
  const int n = m->ndof;
  double *R = work, *Zv = R + (size_t)nc * n, *P = Zv + (size_t)nc * n, *Q = P + (size_t)nc * n;
  double* pw = Q + (size_t)nc * n; /* cf_precond_apply_multi's */
  double bnorm[MAXC], rnorm[MAXC], target[MAXC], rz[MAXC];
  int cnt[MAXC], stat[MAXC], act[MAXC], na = 0;
  const double* ptr_in[MAXC] = {0};
  double* ptr_out[MAXC] = {0};
  for (int c = 0; c < nc; c++) {
    double* r = R + (size_t)c * n;
    memcpy(r, b[c], sizeof(double) * n);
    project(m, d, r);
    bnorm[c] = sqrt(dot(m, d, n, r, r));
    project(m, d, x[c]);
    ptr_in[c] = x[c], ptr_out[c] = Q + (size_t)c * n;
  }
  apply_matfree_multi(m, op, nc, ptr_in, ptr_out);
  for (int c = 0; c < nc; c++) {
    double *r = R + (size_t)c * n, *q = Q + (size_t)c * n, scale;
    for (int i = 0; i < n; i++) r[i] -= q[i];
    project(m, d, r);
    rnorm[c] = sqrt(dot(m, d, n, r, r));
    cnt[c] = 0, stat[c] = CF_OK;
    if (!cf_pcg_target(bnorm[c], b_scale[c], m->def.pcg_tol, &scale, &target[c]))
      return cf_pcg_result(m, d, CF_ERR_ARG, 0, rnorm[c], bnorm[c], b_scale[c]);
    if (rnorm[c] > target[c]) act[na++] = c;
  }
  /* z = P^-1 r, p = z over the columns still iterating */
  for (int k = 0; k < na; k++) ptr_in[k] = R + (size_t)act[k] * n, ptr_out[k] = Zv + (size_t)act[k] * n;
  int st = na ? precondition_multi(m, d, na, ptr_in, ptr_out, pw) : CF_OK;
  if (st < 0) return st;
  for (int k = 0; k < na; k++) {
    const int c = act[k];
    double *p = P + (size_t)c * n, *z = Zv + (size_t)c * n;
    memcpy(p, z, sizeof(double) * n);
    project(m, d, p);
    rz[c] = dot(m, d, n, R + (size_t)c * n, z);
  }
  for (int it = 1; na > 0 && it <= m->def.pcg_max_iter; it++) {
    for (int k = 0; k < na; k++) ptr_in[k] = P + (size_t)act[k] * n, ptr_out[k] = Q + (size_t)act[k] * n;
    apply_matfree_multi(m, op, na, ptr_in, ptr_out);
    int keep = 0;
    for (int k = 0; k < na; k++) {
      const int c = act[k];
      double *p = P + (size_t)c * n, *q = Q + (size_t)c * n, *r = R + (size_t)c * n, *xc = x[c];
      project(m, d, q);
      double pq = dot(m, d, n, p, q);
      if (!(pq > 0) || !isfinite(pq)) { /* as pcg(): the last finite iterate, a counted warning */
        stat[c] = CF_WARN_INDEFINITE, cnt[c] = it - 1;
        continue;
      }
      double alpha = rz[c] / pq;
      for (int i = 0; i < n; i++) xc[i] += alpha * p[i], r[i] -= alpha * q[i];
      rnorm[c] = sqrt(dot(m, d, n, r, r));
      cnt[c] = it;
      if (rnorm[c] <= target[c]) continue;
      act[keep++] = c;
    }
    na = keep;
    if (!na) break;
    if (it == m->def.pcg_max_iter) {
      for (int k = 0; k < na; k++) stat[act[k]] = CF_WARN_PCG_NOT_CONVERGED;
      break;
    }
    for (int k = 0; k < na; k++) ptr_in[k] = R + (size_t)act[k] * n, ptr_out[k] = Zv + (size_t)act[k] * n;
    if ((st = precondition_multi(m, d, na, ptr_in, ptr_out, pw)) < 0) return st;
    for (int k = 0; k < na; k++) {
      const int c = act[k];
      double *p = P + (size_t)c * n, *z = Zv + (size_t)c * n;
      double rz_new = dot(m, d, n, R + (size_t)c * n, z);
      double beta = rz_new / rz[c];
      rz[c] = rz_new;
      for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
      project(m, d, p);
    }
  }
  /* each column's result as cf_stage_pcg's (counters, warnings); the worst status: an error
   * before any warning */
  int worst = CF_OK;
  for (int c = 0; c < nc; c++) {
    int sc = cf_pcg_result(m, d, stat[c], cnt[c], rnorm[c], bnorm[c], b_scale[c]);
    if (worst >= 0 && (sc < 0 || sc > worst)) worst = sc;
  }
  return worst;
}
