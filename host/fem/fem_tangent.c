/* The consistent co-rotational element tangent, used by the static Newton iterations
 * (fem_static.c) and, symmetrised, by the dynamic step (fem_assemble.c).
 *
 * Consistent tangent. With F = R S, dR = R [w]x and S = R^T F symmetric:
 *   R^T dF - dF^T R = [w]x S + S [w]x = [(tr S I - S) w]x,  dF = sum_j dx_j (grad N_j)^T
 *   =>  w = (tr S I - S)^-1 sum_j [grad N_j]x R^T dx_j                       (W: 3x12)
 * f_e = R g, g = K_e (y - X), y_j = R^T x_j. Differentiating at fixed x the R-dependence:
 *   d f_i = R ( [w]x g_i - sum_j K_ij [w]x y_j ) = R ( -[g_i]x + sum_j K_ij [y_j]x ) w
 * so K_T = R K_e R^T + diag(R) H W, H_i = -[g_i]x + sum_j K_ij [y_j]x (12x3). Not symmetric:
 * the simplified co-rotational force is not the gradient of an energy. */
#include <math.h>
#include <string.h>

#include "cofem/static.h"
#include "fem/fem_element.h"

static void skew(const double* a, double* S) {
  S[0] = 0;     S[1] = -a[2]; S[2] = a[1];
  S[3] = a[2];  S[4] = 0;     S[5] = -a[0];
  S[6] = -a[1]; S[7] = a[0];  S[8] = 0;
}

/* Kt += the consistent tangent of one rotated unit: force R K (R^T x - X) (relative to node 0), R the
 * polar of F = sum_j x_j g_j^T, over np nodes t; K (nk x nk) annihilates translations. The element
 * is one unit; the quadratic element with rotations at its quadrature points is one per point
 * (K its share w_q B_q^T D B_q, g its gradients there). */
static void tangent_unit(const cfModel* m, const cfData* d, const int* t, int np, const double* R, const double* F,
                         const double* g, const double* Ke, double* Kt) {
  const int nk = 3 * np;
  double S[9], y[30], gf[30];
  cf_mul3_tn(R, F, S);
  /* y = R^T x relative to node 0, u = y - X relative to node 0, gf = K_e u */
  double u[30];
  for (int a = 0; a < np; a++) {
    double dx[3];
    for (int i = 0; i < 3; i++) dx[i] = d->x[3 * t[a] + i] - d->x[3 * t[0] + i];
    for (int i = 0; i < 3; i++) {
      y[3 * a + i] = R[i] * dx[0] + R[3 + i] * dx[1] + R[6 + i] * dx[2];
      u[3 * a + i] = y[3 * a + i] - (m->X[3 * t[a] + i] - m->X[3 * t[0] + i]);
    }
  }
  for (int i = 0; i < nk; i++) {
    gf[i] = 0;
    for (int j = 0; j < nk; j++) gf[i] += Ke[nk * i + j] * u[j];
  }
  /* M = tr S I - S; if nearly singular (flat or inverted element) keep K_R only */
  double Mm[9], Mi[9];
  double tr = S[0] + S[4] + S[8];
  for (int i = 0; i < 9; i++) Mm[i] = (i % 4 == 0 ? tr : 0.0) - S[i];
  double det = cf_inv3(Mm, Mi);
  double snorm = fabs(S[0]) + fabs(S[4]) + fabs(S[8]);
  /* K_R part */
  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++) {
      double Kab[9], T[9], KR[9];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Kab[3 * i + j] = Ke[(3 * a + i) * nk + 3 * b + j];
      cf_mul3(R, Kab, T);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          KR[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Kt[(3 * a + i) * nk + 3 * b + j] += KR[3 * i + j];
    }
  if (!(fabs(det) > 1e-6 * snorm * snorm * snorm)) return;
  /* W = Mi [g_j]x R^T (3 x nk) */
  double W[90];
  for (int j = 0; j < np; j++) {
    double Gx[9], GR[9], MGR[9];
    skew(g + 3 * j, Gx);
    /* GR = Gx R^T */
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        GR[3 * r + c] = Gx[3 * r] * R[3 * c] + Gx[3 * r + 1] * R[3 * c + 1] + Gx[3 * r + 2] * R[3 * c + 2];
    cf_mul3(Mi, GR, MGR);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) W[nk * r + 3 * j + c] = MGR[3 * r + c];
  }
  /* H_i = -[g_i]x + sum_j K_ij [y_j]x ; then R H_i W added to rows of node i */
  for (int a = 0; a < np; a++) {
    double Hm[9], RH[9];
    skew(gf + 3 * a, Hm);
    for (int i = 0; i < 9; i++) Hm[i] = -Hm[i];
    for (int b = 0; b < np; b++) {
      double Yx[9], Kab[9], KY[9];
      skew(y + 3 * b, Yx);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Kab[3 * i + j] = Ke[(3 * a + i) * nk + 3 * b + j];
      cf_mul3(Kab, Yx, KY);
      for (int i = 0; i < 9; i++) Hm[i] += KY[i];
    }
    cf_mul3(R, Hm, RH);
    for (int i = 0; i < 3; i++)
      for (int c = 0; c < nk; c++)
        Kt[(3 * a + i) * nk + c] += RH[3 * i] * W[c] + RH[3 * i + 1] * W[nk + c] + RH[3 * i + 2] * W[2 * nk + c];
  }
}

void cf_elem_consistent_tangent(const cfModel* m, const cfData* d, int e, double* Kt) {
  /* any element whose rotation is the polar of F = sum_j x_j g_j^T: the linear element's
   * (g its constant gradients) or the quadratic one's (g at the centroid, cfModel.Gc; or at each
   * quadrature point, cfModel.Gq, with the rotations there) */
  const int np = m->npe, nk = 3 * np;
  const int* t = m->tet + (size_t)np * e;
  double g[30], F[9];
  memset(Kt, 0, sizeof(double) * (size_t)nk * nk);
  if (np == 10 && m->Gq) {
    double lam, mu, Kq[900];
    cf_lame(m->def.E, m->def.nu, &lam, &mu);
    for (int q = 0; q < 4; q++) {
      const double* gq = m->Gq + 120 * (size_t)e + 30 * q;
      const double w = m->Wq[4 * (size_t)e + q];
      memset(Kq, 0, sizeof Kq);
      for (int a = 0; a < 10; a++)
        for (int b = 0; b < 10; b++) cf_iso_block_add(w, lam, mu, gq + 3 * a, gq + 3 * b, Kq + 3 * a * 30 + 3 * b, 30);
      cf_tet10_deformation_gradient(d->x, t, gq, F);
      tangent_unit(m, d, t, np, d->Rq + 36 * (size_t)e + 9 * q, F, gq, Kq, Kt);
    }
    return;
  }
  if (np == 10) {
    memcpy(g, m->Gc + 30 * (size_t)e, sizeof(double) * 30);
    cf_tet10_deformation_gradient(d->x, t, g, F);
  } else {
    double Ds[9];
    cf_shape_gradients(m->Dm_inv + 9 * e, g);
    cf_edge_matrix(d->x, m->tet, e, Ds);
    cf_mul3(Ds, m->Dm_inv + 9 * e, F);
  }
  tangent_unit(m, d, t, np, d->R + 9 * (size_t)e, F, g, m->Ke + (size_t)nk * nk * e, Kt);
}
