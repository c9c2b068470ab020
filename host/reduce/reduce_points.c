/* Interface points with rotations for the Craig-Bampton reduction (cofem/reduce.h,
 * docs/craig-bampton.md "Interface points"): a node set reduced as one point with 6 DOFs,
 * rigid (RBE2-like) or averaging (RBE3-like), its static modes the unit motions of the selected
 * point DOFs. */
#include <lapacke.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/reduce.h"
#include "fem/fem_sparse.h"
#include "reduce/reduce_internal.h"

/* p = r_n x v */
static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

int cf__point_geometry(const cfModel* m, const int* nodes, int nnode, cfPointGeometry* g) {
  memset(g, 0, sizeof *g);
  g->nodes = nodes, g->nnode = nnode;
  if (nnode < 1) return cf_error(CF_ERR_ARG, "reduce: an interface point with no nodes");
  for (int k = 0; k < nnode; k++)
    for (int a = 0; a < 3; a++) g->x[a] += m->X[3 * nodes[k] + a] / nnode;
  /* I_w = sum_n (|r_n|^2 1 - r_n r_n^T), r_n = X_n - X_P: the set's "inertia" with unit weights */
  double Iw[9] = {0}, scale = 0;
  for (int k = 0; k < nnode; k++) {
    double r[3];
    for (int a = 0; a < 3; a++) r[a] = m->X[3 * nodes[k] + a] - g->x[a];
    double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    scale += rr;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) Iw[3 * a + b] += (a == b ? rr : 0.0) - r[a] * r[b];
  }
  /* its inverse by the adjugate; a collinear set (one principal value ~ 0) cannot measure the
   * rotation about its line */
  double det = Iw[0] * (Iw[4] * Iw[8] - Iw[5] * Iw[7]) - Iw[1] * (Iw[3] * Iw[8] - Iw[5] * Iw[6]) + Iw[2] * (Iw[3] * Iw[7] - Iw[4] * Iw[6]);
  if (!(scale > 0) || !(fabs(det) > 1e-9 * scale * scale * scale))
    return cf_error(CF_ERR_ARG, "reduce: the %d nodes of an interface point are collinear (or one node): they do not "
                    "define its rotation", nnode);
  double* W = g->Iinv;
  W[0] = (Iw[4] * Iw[8] - Iw[5] * Iw[7]) / det, W[1] = (Iw[2] * Iw[7] - Iw[1] * Iw[8]) / det, W[2] = (Iw[1] * Iw[5] - Iw[2] * Iw[4]) / det;
  W[3] = (Iw[5] * Iw[6] - Iw[3] * Iw[8]) / det, W[4] = (Iw[0] * Iw[8] - Iw[2] * Iw[6]) / det, W[5] = (Iw[2] * Iw[3] - Iw[0] * Iw[5]) / det;
  W[6] = (Iw[3] * Iw[7] - Iw[4] * Iw[6]) / det, W[7] = (Iw[1] * Iw[6] - Iw[0] * Iw[7]) / det, W[8] = (Iw[0] * Iw[4] - Iw[1] * Iw[3]) / det;
  return CF_OK;
}

/* the least-squares fit of the set's displacements in u [ndof]:
 *   u_P = (1/N) sum_n u_n,   th_P = I_w^-1 sum_n r_n x u_n   (p = G u) */
void cf__point_fit(const cfModel* m, const cfPointGeometry* g, const double* u, double p[6]) {
  double s[3] = {0, 0, 0}, t[3] = {0, 0, 0}, r[3], c[3];
  for (int k = 0; k < g->nnode; k++) {
    const int n = g->nodes[k];
    for (int a = 0; a < 3; a++) r[a] = m->X[3 * n + a] - g->x[a], s[a] += u[3 * n + a];
    cross3(r, u + 3 * n, c);
    for (int a = 0; a < 3; a++) t[a] += c[a];
  }
  for (int a = 0; a < 3; a++) {
    p[a] = s[a] / g->nnode;
    p[3 + a] = g->Iinv[3 * a] * t[0] + g->Iinv[3 * a + 1] * t[1] + g->Iinv[3 * a + 2] * t[2];
  }
}

/* unit motion a of the rigid point on its set's DOFs of v: u_n = e_a (a < 3), e_(a-3) x r_n */
void cf__point_rigid_motion(const cfModel* m, const cfPointGeometry* g, int a, double* v) {
  for (int k = 0; k < g->nnode; k++) {
    const int n = g->nodes[k];
    double r[3], e[3] = {0, 0, 0};
    for (int b = 0; b < 3; b++) r[b] = m->X[3 * n + b] - g->x[b];
    if (a < 3) {
      v[3 * n + a] = 1.0;
      continue;
    }
    e[a - 3] = 1.0;
    cross3(e, r, v + 3 * n);
  }
}

unsigned cf__point_blocked_dofs(const cfModel* m, const cfPointGeometry* g) {
  unsigned blocked = 0;
  double* v = calloc((size_t)m->ndof, sizeof(double));
  if (!v) return CF_POINT_ALL_DOFS;
  for (int a = 0; a < 6; a++) {
    cf__point_rigid_motion(m, g, a, v);
    for (int k = 0; k < g->nnode; k++)
      for (int c = 0; c < 3; c++) {
        int d = 3 * g->nodes[k] + c;
        if (m->fixed[d] && fabs(v[d]) > 1e-12 * (1 + fabs(m->X[d]))) blocked |= 1u << a;
        v[d] = 0;
      }
  }
  free(v);
  return blocked;
}

/* the load pattern G^T e_a on the set's DOFs: f_n = e_a / N (a < 3), c x r_n with c = I_w^-1 e_(a-3)
 * (the transpose of u -> I_w^-1 sum r_n x u_n; I_w^-1 symmetric) */
static void fit_transpose(const cfModel* m, const cfPointGeometry* g, int a, double* f) {
  for (int k = 0; k < g->nnode; k++) {
    const int n = g->nodes[k];
    double r[3], c[3];
    for (int b = 0; b < 3; b++) r[b] = m->X[3 * n + b] - g->x[b];
    if (a < 3) {
      f[3 * n + a] = 1.0 / g->nnode;
      continue;
    }
    for (int b = 0; b < 3; b++) c[b] = g->Iinv[3 * b + (a - 3)];
    cross3(c, r, f + 3 * n);
  }
}

/* Static modes of the interface nodes' DOFs (r->bdof[0 .. nplain)) and the points' selected DOFs,
 * into r->basis columns [0, r->nb).
 *
 * Every static mode lies in the span of a few candidate fields C, each with the interior in
 * static equilibrium (K factored with fixed_i: the model's fixed DOFs, the interface nodes and the
 * rigid points' sets; the averaging points' sets free):
 *   interface DOF d:      unit u_d, K_ii u_i = -K_id                      (the classic constraint mode)
 *   rigid point, DOF a:   the set moving rigidly, u_set = R e_a, K_ii u_i = -K_i,set R e_a
 *   averaging point, a:   the response to the load pattern G^T e_a on the set, K_ii u = G^T e_a
 * Static mode j minimises the strain energy 1/2 c^T K_C c (K_C = C^T K C) over fields u = C c
 * whose selected interface DOFs are e_j (A c = e_j, A = L C with L the DOFs' functionals: u_d, or
 * the point fit G); unselected point DOFs are free. Its stationarity conditions, the KKT system
 *   [K_C  A^T] [c]   [0  ]
 *   [A    0  ] [mu] = [e_j],
 * are solved for all j at once (dsytrf). For a fully selected rigid point this is exactly the
 * classic constraint mode of its nodes times R. */
int cf__point_static_modes(const cfModel* m, cfReduction* r, const double* Kb, const unsigned char* fixed_i,
                           const cfPointGeometry* geo, const cfInterfacePoint* pts, int npoint, int nplain) {
  const int ndof = m->ndof, nc = nplain + 6 * npoint, ns = r->nb, N = nc + ns;
  int st = CF_OK, sp_init = 0;
  cfSparseSolver sp;
  double* C = calloc((size_t)nc * ndof, sizeof(double));
  double* KC = malloc(sizeof(double) * (size_t)nc * ndof);
  double* rhs = malloc(sizeof(double) * ndof);
  double* x = malloc(sizeof(double) * ndof);
  double* KCC = malloc(sizeof(double) * (size_t)nc * nc);
  double* kkt = calloc((size_t)N * N, sizeof(double));
  double* sol = calloc((size_t)N * ns, sizeof(double));
  lapack_int* ipiv = malloc(sizeof(lapack_int) * (size_t)N);
  if (!C || !KC || !rhs || !x || !KCC || !kkt || !sol || !ipiv) { st = cf_error(CF_ERR_NOMEM, "reduce: out of memory"); goto done; }
  unsigned blocked[64] = {0};
  if (npoint > 64) { st = cf_error(CF_ERR_ARG, "reduce: more than 64 interface points"); goto done; }
  for (int k = 0; k < npoint; k++) blocked[k] = pts[k].kind == CF_POINT_RIGID ? cf__point_blocked_dofs(m, &geo[k]) : 0u;
  if ((st = cf_sparse_init(m, 1, &sp)) < 0) goto done;
  sp_init = 1;
  st = cf_sparse_factor(&sp, Kb, fixed_i);
  double rc = st < 0 ? 0.0 : cholmod_rcond(sp.L, &sp.cc);
  if (st < 0 || !(rc > 1e-13)) {
    int navg = 0;
    for (int k = 0; k < npoint; k++) navg += pts[k].kind == CF_POINT_AVERAGING;
    st = cf_error(CF_ERR_SOLVER, "reduce: K_ii is singular (rcond %.1e): the interface nodes, the rigid points and the "
                  "supports do not hold the part against rigid-body motion%s", rc,
                  navg ? " (an averaging point leaves its set free: the part must be held by a support or a rigid "
                  "point besides it)" : "");
    goto done;
  }
  /* the candidate fields */
  for (int j = 0; j < nc; j++) {
    double* col = C + (size_t)j * ndof;
    memset(rhs, 0, sizeof(double) * ndof);
    if (j < nplain) {
      col[r->bdof[j]] = 1.0;
    } else {
      int k = (j - nplain) / 6, a = (j - nplain) % 6;
      if (pts[k].kind == CF_POINT_RIGID) {
        if (blocked[k] >> a & 1u) continue; /* not a field of this part: c_j = 0 (unit diagonal below) */
        cf__point_rigid_motion(m, &geo[k], a, col);
      }
      else fit_transpose(m, &geo[k], a, rhs);
    }
    if (j < nplain || pts[(j - nplain) / 6].kind == CF_POINT_RIGID) {
      /* -K u_b on the free DOFs */
      cf__reduce_block_mv(m, Kb, 0, col, x);
      for (int d = 0; d < ndof; d++) rhs[d] = fixed_i[d] ? 0.0 : -x[d];
    }
    if ((st = cf_sparse_solve(&sp, rhs, x)) < 0) goto done;
    double big = 0;
    for (int d = 0; d < ndof; d++) {
      if (!fixed_i[d]) col[d] = x[d];
      if (!isfinite(col[d])) { st = cf_error(CF_ERR_SOLVER, "reduce: static field %d is not finite (K_ii singular?)", j); goto done; }
      big = fmax(big, fabs(col[d]));
    }
    if (big > 0) /* columns of comparable size for the KKT system; c absorbs the scale */
      for (int d = 0; d < ndof; d++) col[d] /= big;
    else if (j >= nplain) /* an averaging point's load pattern wholly on supported DOFs: no field */
      blocked[(j - nplain) / 6] |= 1u << ((j - nplain) % 6);
  }
  /* K_C = C^T K C */
  for (int j = 0; j < nc; j++) cf__reduce_block_mv(m, Kb, 0, C + (size_t)j * ndof, KC + (size_t)j * ndof);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nc, nc, ndof, 1.0, C, ndof, KC, ndof, 0.0, KCC, nc);
  /* the KKT rows' scale: K_C's largest diagonal, or K's own where the static fields carry no strain
   * energy beyond round-off (a free part's single rigid point: its six fields are its rigid motions,
   * A is square and decides c alone); the exact-zero test this replaces let round-off decide
   * whether such a reduction was refused */
  double kscale = 0, kdiag = 0;
  for (int j = 0; j < nc; j++) kscale = fmax(kscale, KCC[(size_t)j * nc + j]);
  for (int n = 0; n < m->nnode; n++)
    for (int a = 0; a < 3; a++) kdiag = fmax(kdiag, Kb[9 * (size_t)m->diag[n] + 4 * a]);
  if (!isfinite(kscale)) { st = cf_error(CF_ERR_SOLVER, "reduce: the static fields' stiffness is not finite"); goto done; }
  if (!(kscale > 1e-12 * kdiag)) kscale = kdiag;
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++) kkt[(size_t)i * N + j] = 0.5 * (KCC[(size_t)i * nc + j] + KCC[(size_t)j * nc + i]) / kscale;
  for (int j = nplain; j < nc; j++) /* the blocked fields (all zero): c_j = 0 */
    if (blocked[(j - nplain) / 6] >> ((j - nplain) % 6) & 1u) kkt[(size_t)j * N + j] = 1.0;
  /* A = L C: row i the i-th selected interface DOF's functional of each field */
  for (int j = 0; j < nc; j++) {
    const double* col = C + (size_t)j * ndof;
    int row = nc;
    for (int i = 0; i < nplain; i++, row++) kkt[(size_t)row * N + j] = kkt[(size_t)j * N + row] = col[r->bdof[i]];
    for (int k = 0; k < npoint; k++) {
      double p[6];
      cf__point_fit(m, &geo[k], col, p);
      for (int a = 0; a < 6; a++)
        if (r->points[k].dofs >> a & 1) kkt[(size_t)row * N + j] = kkt[(size_t)j * N + row] = p[a], row++;
    }
  }
  for (int j = 0; j < ns; j++) sol[(size_t)(nc + j) * ns + j] = 1.0;
  double anorm = LAPACKE_dlansy(LAPACK_ROW_MAJOR, '1', 'U', N, kkt, N), rcond = 0;
  lapack_int info = LAPACKE_dsytrf(LAPACK_ROW_MAJOR, 'U', N, kkt, N, ipiv);
  if (info == 0) info = LAPACKE_dsycon(LAPACK_ROW_MAJOR, 'U', N, kkt, N, ipiv, anorm, &rcond);
  if (info != 0 || !(rcond > 1e-13)) {
    st = cf_error(CF_ERR_SOLVER, "reduce: the interface points' static modes are not defined (KKT rcond %.1e): the "
                  "points' free DOFs leave the part free to move, or the selected DOFs are not independent", rcond);
    goto done;
  }
  if ((info = LAPACKE_dsytrs(LAPACK_ROW_MAJOR, 'U', N, ns, kkt, N, ipiv, sol, ns)) != 0) {
    st = cf_error(CF_ERR_SOLVER, "reduce: KKT solve failed (dsytrs info %d)", (int)info);
    goto done;
  }
  /* mode j = C c_j (rows [0, nc) of sol) */
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ns, ndof, nc, 1.0, sol, ns, C, ndof, 0.0, r->basis, ndof);
done:
  if (sp_init) cf_sparse_free(&sp);
  free(C); free(KC); free(rhs); free(x); free(KCC); free(kkt); free(sol); free(ipiv);
  return st;
}

/* motion[6 n] of each point: the fit of every basis column */
int cf__point_motions(const cfModel* m, cfReduction* r, const cfPointGeometry* geo) {
  const int n = r->n;
  for (int k = 0; k < r->npoint; k++) {
    cfReductionPoint* P = &r->points[k];
    for (int j = 0; j < n; j++) {
      double p[6];
      cf__point_fit(m, &geo[k], r->basis + (size_t)j * r->ndof, p);
      for (int a = 0; a < 6; a++) P->motion[(size_t)a * n + j] = p[a];
    }
  }
  return CF_OK;
}

void cf_reduction_point_motion(const cfReduction* r, int p, const double* q, double out[6]) {
  const cfReductionPoint* P = &r->points[p];
  for (int a = 0; a < 6; a++) {
    double s = 0;
    for (int j = 0; j < r->n; j++) s += P->motion[(size_t)a * r->n + j] * q[j];
    out[a] = s;
  }
}
