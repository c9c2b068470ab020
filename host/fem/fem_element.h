/* Per-element and per-row math of the co-rotational step, shared by the CPU loops (host/fem_*.c)
 * and the CUDA kernels (kernels/ .cu files): every function here is the body of one GPU thread
 * (an element, a block, a node), so the CPU tests check the very code the GPU runs.
 *
 * Conventions: 3x3 matrices row-major; element DOF k = 3*local_node + direction;
 * element matrices 12x12 row-major; the 3x3 block (a,b) of a 12x12 matrix starts at
 * (3a)*12 + 3b. */
#ifndef COFEM_FEM_ELEMENT_H
#define COFEM_FEM_ELEMENT_H
#include <math.h>

#if defined(__CUDACC__)
#define CF_HD __host__ __device__ __forceinline__
#else
#define CF_HD static inline
#endif
#include "util/math3.h" /* cf_det3, cf_mul3, cf_mul3_tn, cf_inv3 */

/* Edge matrix [x1-x0 | x2-x0 | x3-x0] (columns) of the corners of element e from positions x;
 * npe nodes per element (4, or 10 for the quadratic tetrahedron, whose corners come first). */
CF_HD void cf_edge_matrix_n(const double* x, const int* tet, int npe, int e, double* D) {
  const double* p0 = x + 3 * tet[npe * e];
  for (int c = 0; c < 3; c++) {
    const double* pc = x + 3 * tet[npe * e + 1 + c];
    for (int r = 0; r < 3; r++) D[3 * r + c] = pc[r] - p0[r];
  }
}
CF_HD void cf_edge_matrix(const double* x, const int* tet, int e, double* D) { cf_edge_matrix_n(x, tet, 4, e, D); }

/* Gradients of the four shape functions: dN_i/dX for i = 1..3 is row i-1 of Dm^-1,
 * dN_0 = -(dN_1 + dN_2 + dN_3). g[3*i + k]. */
CF_HD void cf_shape_gradients(const double* Dm_inv, double* g) {
  for (int k = 0; k < 3; k++) {
    g[3 + k] = Dm_inv[k];
    g[6 + k] = Dm_inv[3 + k];
    g[9 + k] = Dm_inv[6 + k];
    g[k] = -(g[3 + k] + g[6 + k] + g[9 + k]);
  }
}

/* ---- polar decomposition ----------------------------------------------------------------------
 * R = argmax over proper rotations of tr(R^T F) (Horn's quaternion method): for det F > 0 this is
 * the rotation of the polar decomposition F = R S; for det F <= 0 (inverted element) it is still a
 * proper rotation (det R = +1), R = U diag(1,1,det UV^T) V^T, and R^T F stays symmetric. The
 * quaternion is the eigenvector of the largest eigenvalue of a symmetric 4x4 matrix N(F), found by
 * cyclic Jacobi, which is robust for singular F. Warm start: with Q the previous rotation,
 * polar(F) = Q polar(Q^T F), and N(Q^T F) is then nearly diagonal, so Jacobi needs few sweeps. */
CF_HD void cf_quat_to_rot(const double* q, double* R) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double n = w * w + x * x + y * y + z * z;
  double s = 2.0 / n;
  R[0] = 1 - s * (y * y + z * z); R[1] = s * (x * y - w * z);     R[2] = s * (x * z + w * y);
  R[3] = s * (x * y + w * z);     R[4] = 1 - s * (x * x + z * z); R[5] = s * (y * z - w * x);
  R[6] = s * (x * z - w * y);     R[7] = s * (y * z + w * x);     R[8] = 1 - s * (x * x + y * y);
}

/* Rotation maximising tr(R^T F), starting from guess Q (NULL = identity). Returns det F. */
CF_HD double cf_polar_rotation(const double* F, const double* Q, double* R) {
  double G[9];
  if (Q) cf_mul3_tn(Q, F, G); else for (int i = 0; i < 9; i++) G[i] = F[i];
  /* Horn's matrix with S_ab = G_ba */
  double Sxx = G[0], Syy = G[4], Szz = G[8];
  double Sxy = G[3], Syx = G[1], Sxz = G[6], Szx = G[2], Syz = G[7], Szy = G[5];
  double N[16] = {Sxx + Syy + Szz, Syz - Szy, Szx - Sxz, Sxy - Syx,
                  Syz - Szy, Sxx - Syy - Szz, Sxy + Syx, Szx + Sxz,
                  Szx - Sxz, Sxy + Syx, -Sxx + Syy - Szz, Syz + Szy,
                  Sxy - Syx, Szx + Sxz, Syz + Szy, -Sxx - Syy + Szz};
  double V[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  double scale = 0;
  for (int i = 0; i < 16; i++) scale += N[i] * N[i];
  for (int sweep = 0; sweep < 12; sweep++) {
    double off = 0;
    for (int p = 0; p < 4; p++)
      for (int q = p + 1; q < 4; q++) off += N[4 * p + q] * N[4 * p + q];
    if (!(off > 1e-30 * scale)) break; /* off-diagonal at 1e-15 of N: R to ~1e-15 */
    for (int p = 0; p < 3; p++) {
      for (int q = p + 1; q < 4; q++) {
        double apq = N[4 * p + q];
        if (fabs(apq) <= 1e-300) continue;
        double theta = (N[4 * q + q] - N[4 * p + p]) / (2 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        /* N <- J^T N J, V <- V J with the rotation in the (p,q) plane */
        for (int k = 0; k < 4; k++) {
          double nkp = N[4 * k + p], nkq = N[4 * k + q];
          N[4 * k + p] = c * nkp - s * nkq;
          N[4 * k + q] = s * nkp + c * nkq;
        }
        for (int k = 0; k < 4; k++) {
          double npk = N[4 * p + k], nqk = N[4 * q + k];
          N[4 * p + k] = c * npk - s * nqk;
          N[4 * q + k] = s * npk + c * nqk;
        }
        for (int k = 0; k < 4; k++) {
          double vkp = V[4 * k + p], vkq = V[4 * k + q];
          V[4 * k + p] = c * vkp - s * vkq;
          V[4 * k + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i < 4; i++)
    if (N[5 * i] > N[5 * best]) best = i;
  double qv[4] = {V[best], V[4 + best], V[8 + best], V[12 + best]};
  double Rl[9];
  cf_quat_to_rot(qv, Rl);
  if (Q) cf_mul3(Q, Rl, R); else for (int i = 0; i < 9; i++) R[i] = Rl[i];
  return cf_det3(F);
}

/* The Newton correction w of the rotation for G = Q^T F (cf_polar_rotation_warm, below):
 * w = (tr G I - sym G)^-1 axial(G - G^T) by the symmetric adjugate. Returns 0 (w untouched)
 * where tr G I - G is not positive definite (Sylvester: m00, the leading 2x2 minor c22, det),
 * i.e. not the maximum. */
CF_HD int cf_polar_newton_w(const double* G, double* w) {
  const double a0 = G[7] - G[5], a1 = G[2] - G[6], a2 = G[3] - G[1];
  const double tr = G[0] + G[4] + G[8];
  /* Ms = tr I - sym G (symmetric) and its adjugate */
  const double m00 = tr - G[0], m11 = tr - G[4], m22 = tr - G[8];
  const double m01 = -0.5 * (G[1] + G[3]), m02 = -0.5 * (G[2] + G[6]), m12 = -0.5 * (G[5] + G[7]);
  const double c00 = m11 * m22 - m12 * m12, c01 = m02 * m12 - m01 * m22, c02 = m01 * m12 - m02 * m11;
  const double c11 = m00 * m22 - m02 * m02, c12 = m01 * m02 - m00 * m12, c22 = m00 * m11 - m01 * m01;
  const double det = m00 * c00 + m01 * c01 + m02 * c02;
  if (!(m00 > 0 && c22 > 0 && det > 0)) return 0;
  const double s = 1.0 / det;
  w[0] = (c00 * a0 + c01 * a1 + c02 * a2) * s;
  w[1] = (c01 * a0 + c11 * a1 + c12 * a2) * s;
  w[2] = (c02 * a0 + c12 * a1 + c22 * a2) * s;
  return 1;
}

/* Warm-started polar rotation, the fast path of the step: with G = Q^T F nearly symmetric, the
 * rotation still missing is R_w = exp([w]x), w = (tr G I - sym G)^-1 axial(G - G^T) (from
 * G - G^T = [w]x S + S [w]x = [(tr S I - S) w]x); Newton on w converges quadratically, usually
 * in 2 iterations. Each correction is applied as the quaternion (1, w/2) (angle 2 atan(|w|/2) =
 * |w| (1 - |w|^2/12 + ...): no trigonometry, and the O(|w|^3) shortfall leaves the convergence
 * quadratic). It is accepted only if it converged and tr G I - G is positive definite, the
 * second-order condition of the maximum of tr(R^T F) (a symmetric G can also be a saddle,
 * e.g. 180 degrees off); otherwise Horn's method decides. Returns det F. */
CF_HD double cf_polar_rotation_warm(const double* F, const double* Q, double* R) {
  double G[9], Rq[9];
  cf_mul3_tn(Q, F, G);
  for (int i = 0; i < 9; i++) Rq[i] = Q[i];
  for (int it = 0; it < 4; it++) {
    double w[3];
    if (!cf_polar_newton_w(G, w)) break;
    const double th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    if (th2 < 1e-26) {
      for (int i = 0; i < 9; i++) R[i] = Rq[i];
      return cf_det3(F);
    }
    const double q[4] = {1.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]};
    double Rw[9], T[9];
    cf_quat_to_rot(q, Rw);
    cf_mul3(Rq, Rw, T);
    for (int i = 0; i < 9; i++) Rq[i] = T[i];
    if (th2 < 1e-18) { /* quadratic convergence: the next correction is below round-off */
      for (int i = 0; i < 9; i++) R[i] = Rq[i];
      return cf_det3(F);
    }
    cf_mul3_tn(Rw, G, T);
    for (int i = 0; i < 9; i++) G[i] = T[i];
  }
  return cf_polar_rotation(F, Q, R);
}

/* One Newton correction of the rotation Q toward polar(F) (the first iteration of
 * cf_polar_rotation_warm, no convergence test): for rotations that only need to follow, such as
 * the preconditioner's node rotations, updated every step from the last ones. Falls back to
 * cf_polar_rotation_warm where tr G I - G is not positive definite (far from Q). */
CF_HD void cf_polar_rotation_step(const double* F, const double* Q, double* R) {
  double G[9], w[3];
  cf_mul3_tn(Q, F, G);
  if (!cf_polar_newton_w(G, w)) {
    cf_polar_rotation_warm(F, Q, R);
    return;
  }
  const double q[4] = {1.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]};
  double Rw[9];
  cf_quat_to_rot(q, Rw);
  cf_mul3(Q, Rw, R);
}

/* Stage 1 body, one element: F = Ds Dm^-1, R = polar(F) warm-started from the previous R.
 * Returns 1 if the element is inverted (det F <= 0). */
CF_HD int cf_elem_polar_n(int e, const int* tet, int npe, const double* Dm_inv, const double* x, double* R) {
  double Ds[9], F[9], Q[9], Rn[9];
  cf_edge_matrix_n(x, tet, npe, e, Ds);
  cf_mul3(Ds, Dm_inv + 9 * e, F);
  for (int i = 0; i < 9; i++) Q[i] = R[9 * e + i];
  double det = cf_polar_rotation_warm(F, Q, Rn);
  for (int i = 0; i < 9; i++) R[9 * e + i] = Rn[i];
  return det <= 0;
}
CF_HD int cf_elem_polar(int e, const int* tet, const double* Dm_inv, const double* x, double* R) {
  return cf_elem_polar_n(e, tet, 4, Dm_inv, x, R);
}

/* tan^2 of the angle by which element e at positions x has turned beyond the rotation R_e (the
 * linear coupling's frozen rotations): of M = F R_e^T, from its skew part and trace,
 * tan phi = |axial(M - M^T)| / (tr M - 1) (exact for a pure rotation M; a small stretch changes it by
 * its own order); INFINITY from a quarter turn on. No polar decomposition (a fifth of its cost), no
 * libm call: the caller takes the largest and one atan. */
CF_HD double cf_elem_turn_beyond2(int e, const int* tet, const double* Dm_inv, const double* x, const double* R) {
  double Ds[9], F[9], M[9];
  cf_edge_matrix(x, tet, e, Ds);
  cf_mul3(Ds, Dm_inv + 9 * e, F);
  const double* Re = R + 9 * e;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) M[3 * i + j] = F[3 * i] * Re[3 * j] + F[3 * i + 1] * Re[3 * j + 1] + F[3 * i + 2] * Re[3 * j + 2];
  const double a0 = M[7] - M[5], a1 = M[2] - M[6], a2 = M[3] - M[1], c = M[0] + M[4] + M[8] - 1;
  return c > 0 ? (a0 * a0 + a1 * a1 + a2 * a2) / (c * c) : INFINITY;
}

/* One Newton correction of R_e toward polar(F_e) (cf_polar_rotation_step), for rotations already
 * predicted close (the linear coupling's, mbs_fe.c): half of cf_elem_polar's cost, which iterates
 * until a correction is below round-off. */
CF_HD void cf_elem_polar_step(int e, const int* tet, const double* Dm_inv, const double* x, double* R) {
  double Ds[9], F[9], Rn[9];
  cf_edge_matrix(x, tet, e, Ds);
  cf_mul3(Ds, Dm_inv + 9 * e, F);
  cf_polar_rotation_step(F, R + 9 * e, Rn);
  for (int i = 0; i < 9; i++) R[9 * e + i] = Rn[i];
}

/* Lame constants of the material: lam = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)) */
CF_HD void cf_lame(double E, double nu, double* lam, double* mu) {
  *lam = E * nu / ((1 + nu) * (1 - 2 * nu));
  *mu = E / (2 * (1 + nu));
}

/* ---- element stiffness (precomputed once) -----------------------------------------------------
 * Linear tetrahedron: K_e = V B^T D B, engineering strain (xx, yy, zz, xy, yz, zx). */
CF_HD void cf_elem_stiffness(const double* Dm_inv, double vol, double E, double nu, double* Ke) {
  double g[12];
  cf_shape_gradients(Dm_inv, g);
  double lam, mu;
  cf_lame(E, nu, &lam, &mu);
  /* block (a,b) = V [ lam ga gb^T + mu gb ga^T + mu (ga . gb) I ] */
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      const double* ga = g + 3 * a;
      const double* gb = g + 3 * b;
      double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          Ke[(3 * a + i) * 12 + 3 * b + j] =
              vol * (lam * ga[i] * gb[j] + mu * ga[j] * gb[i] + (i == j ? mu * dot : 0.0));
    }
}

/* ---- stage 2 without K_R: matrix-free element products --------------------------------------
 * K_e = V B^T D B of the constant-strain tetrahedron gives, for a nodal vector y_e with gradient
 * H = sum_b y_b g_b^T = Ds(y) Dm^-1, (K_e y)_a = V sigma(H) g_a, sigma(H) = lam tr(H) I +
 * mu (H + H^T). Rotated, (R K_e R^T y)_a = V R sigma(R^T H) g_a = V sigma(H R^T) (R g_a) (since
 * R sigma(R^T H) R^T = sigma(H R^T)); so with the rotated gradients G_e = Dm^-1 R^T (row a-1 is
 * (R g_a)^T, formed once per step) a product is H' = Ds(y) G_e, then f_a = V sigma(H') G_e^T e_a.
 * The elastic force R K_e (R^T x - X) is the same with H' = Ds(x) G_e - I (F R^T - I: the
 * rotation-free strain, as sum_b (X_b - X_0) g_b^T = I). About 130 flops per product against
 * ~1500 to form R K_e R^T, so when the PCG needs few products (rotated-Cholesky preconditioner)
 * K_R is never formed. */

/* G_e = Dm^-1 R^T of element e into G_all */
CF_HD void cf_elem_rotated_gradients(int e, const double* Dm_inv, const double* R_all, double* G_all) {
  const double* Di = Dm_inv + 9 * e;
  const double* R = R_all + 9 * e;
  double* G = G_all + 9 * (long)e;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) G[3 * i + j] = Di[3 * i] * R[3 * j] + Di[3 * i + 1] * R[3 * j + 1] + Di[3 * i + 2] * R[3 * j + 2];
}

/* f[12] = V sigma(H) G^T e_a for the four nodes (vlam = V lam, vmu = V mu); f_0 = -(f_1 + f_2 + f_3) */
CF_HD void cf_elem_stress_forces(const double* H, const double* G, double vlam, double vmu, double* f) {
  const double t = vlam * (H[0] + H[4] + H[8]);
  const double s01 = vmu * (H[1] + H[3]), s02 = vmu * (H[2] + H[6]), s12 = vmu * (H[5] + H[7]);
  const double S[9] = {t + 2 * vmu * H[0], s01, s02, s01, t + 2 * vmu * H[4], s12, s02, s12, t + 2 * vmu * H[8]};
  for (int i = 0; i < 3; i++) f[i] = 0;
  for (int a = 1; a < 4; a++) {
    const double* g = G + 3 * (a - 1);
    for (int i = 0; i < 3; i++) {
      const double fi = S[3 * i] * g[0] + S[3 * i + 1] * g[1] + S[3 * i + 2] * g[2];
      f[3 * a + i] = fi;
      f[i] -= fi;
    }
  }
}

/* out[12] = V sigma(H') G_e^T e_a with H' = Ds(y) G (G: this element's rotated gradients),
 * minus I when strain (y = x: the rotation-free strain F R^T - I); the body of the products below
 * and of cf_elem_rotate's force. */
CF_HD void cf_elem_rotated_product(int e, const int* tet, const double* G, double vlam, double vmu,
                                   const double* y, int strain, double* out) {
  double D[9], H[9];
  cf_edge_matrix(y, tet, e, D);
  cf_mul3(D, G, H);
  if (strain) {
    H[0] -= 1.0;
    H[4] -= 1.0;
    H[8] -= 1.0;
  }
  cf_elem_stress_forces(H, G, vlam, vmu, out);
}

/* Stage 2 body, matrix-free: the elastic force fe of cf_elem_rotate without K_R (G_all from
 * cf_elem_rotated_gradients). */
CF_HD void cf_elem_force_mf(int e, const int* tet, const double* G_all, const double* vol, double lam, double mu,
                            const double* x, double* fe_all) {
  cf_elem_rotated_product(e, tet, G_all + 9 * (long)e, vol[e] * lam, vol[e] * mu, x, 1, fe_all + 12 * (long)e);
}

/* ye[12] = R K_e R^T y_e, the element's part of K_R y (ye: this element's outputs) */
CF_HD void cf_elem_apply_KR_mf(int e, const int* tet, const double* G_all, const double* vol, double lam, double mu,
                               const double* y, double* ye) {
  cf_elem_rotated_product(e, tet, G_all + 9 * (long)e, vol[e] * lam, vol[e] * mu, y, 0, ye);
}

/* ---- stage 2 body, one element: rotated stiffness and elastic force -------------------------
 * KR = R K_e R^T,  fe = R K_e (R^T x_e - X_e). With the rotated gradients g'_a = R g_a (rows of
 * G_e = Dm^-1 R^T, cf_elem_rotated_gradients), block (a,b) of R K_e R^T is
 * V [lam g'_a g'_b^T + mu g'_b g'_a^T + mu (g'_a . g'_b) I] (cf_elem_stiffness rotated), and fe is
 * the stress form of the matrix-free products above with Ds(x) G_e - I = F R^T - I, the
 * rotation-free strain measured relative to node 0 (rigid translations cancel; accurate on parts
 * far from the origin). Half the flops of R K_ab R^T, and K_e is not read. */
CF_HD void cf_elem_rotate(int e, const int* tet, const double* Dm_inv, const double* vol, double lam, double mu,
                          const double* R_all, const double* x, double* KR_all, double* fe_all) {
  double G[9], g[12];
  cf_elem_rotated_gradients(0, Dm_inv + 9 * e, R_all + 9 * e, G);
  const double vlam = vol[e] * lam, vmu = vol[e] * mu;
  for (int k = 0; k < 3; k++) {
    g[3 + k] = G[k];
    g[6 + k] = G[3 + k];
    g[9 + k] = G[6 + k];
    g[k] = -(G[k] + G[3 + k] + G[6 + k]);
  }
  double* KR = KR_all + 144 * (long)e;
  for (int a = 0; a < 4; a++)
    for (int b = a; b < 4; b++) {
      const double* ga = g + 3 * a;
      const double* gb = g + 3 * b;
      const double dot = vmu * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          const double v = vlam * ga[i] * gb[j] + vmu * ga[j] * gb[i] + (i == j ? dot : 0.0);
          KR[(3 * a + i) * 12 + 3 * b + j] = v;
          KR[(3 * b + j) * 12 + 3 * a + i] = v;
        }
    }
  cf_elem_rotated_product(e, tet, G, vlam, vmu, x, 1, fe_all + 12 * (long)e);
}

/* s[3] = row n of M y (scalar mass coefficient per block, zero blocks skipped) */
CF_HD void cf_node_mass_row(int n, const int* row_ptr, const int* col, const double* Mblk, const double* y,
                            double* s) {
  double s0 = 0, s1 = 0, s2 = 0;
  for (int k = row_ptr[n]; k < row_ptr[n + 1]; k++) {
    const double c = Mblk[k];
    if (c == 0) continue;
    const double* yj = y + 3 * col[k];
    s0 += c * yj[0];
    s1 += c * yj[1];
    s2 += c * yj[2];
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
}

/* mv[3] = row n of M y; lumped: the mass blocks are diagonal (Mblk at diag[n] only) */
CF_HD void cf_node_mass_apply(int n, const int* row_ptr, const int* col, const int* diag, const double* Mblk,
                              int lumped, const double* y, double* mv) {
  if (lumped) {
    const double c = Mblk[diag[n]];
    for (int i = 0; i < 3; i++) mv[i] = c * y[3 * n + i];
  } else {
    cf_node_mass_row(n, row_ptr, col, Mblk, y, mv);
  }
}

/* Row n of A y = cm M y + ck K_R y, K_R y gathered from the element products ye (as
 * cf_node_gather); lumped: the mass blocks are diagonal (Mblk at diag[n] only). */
CF_HD void cf_node_apply_A_mf(int n, const int* src_ptr, const int* src, const double* ye_all, const int* row_ptr,
                              const int* col, const int* diag, const double* Mblk, int lumped, double cm,
                              double ck, const double* y, double* out) {
  double k[3] = {0, 0, 0};
  for (int j = src_ptr[n]; j < src_ptr[n + 1]; j++) {
    const double* ye = ye_all + 12 * (long)(src[j] >> 2) + 3 * (src[j] & 3);
    k[0] += ye[0];
    k[1] += ye[1];
    k[2] += ye[2];
  }
  double mv[3];
  cf_node_mass_apply(n, row_ptr, col, diag, Mblk, lumped, y, mv);
  for (int i = 0; i < 3; i++) out[3 * n + i] = cm * mv[i] + ck * k[i];
}

/* ---- gathers: each block / node sums its element contributions in a fixed order ------------- */

/* A_b = cm * Mblk_b * I + ck * sum KR contributions; npe nodes per element, element matrices
 * (3 npe)^2, contribution codes e*npe^2 + a*npe + b (cfModel.blk_src) */
CF_HD void cf_block_gather_n(int blk, int npe, const int* src_ptr, const int* src, const double* KR_all,
                             const double* Mblk, double cm, double ck, double* A) {
  const int nk = 3 * npe;
  double s[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = src_ptr[blk]; k < src_ptr[blk + 1]; k++) {
    int code = src[k];
    int e = code / (npe * npe), a = (code / npe) % npe, b = code % npe;
    const double* K = KR_all + (long)nk * nk * e + (3 * a) * nk + 3 * b;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) s[3 * i + j] += K[nk * i + j];
  }
  double m = cm * Mblk[blk];
  for (int i = 0; i < 9; i++) A[9 * (long)blk + i] = ck * s[i] + ((i % 4) == 0 ? m : 0.0);
}
CF_HD void cf_block_gather(int blk, const int* src_ptr, const int* src, const double* KR_all,
                           const double* Mblk, double cm, double ck, double* A) {
  cf_block_gather_n(blk, 4, src_ptr, src, KR_all, Mblk, cm, ck, A);
}

/* f_n = sum of element forces at node n. Codes e*npe + a (cfModel.node_src) with 3 npe forces per
 * element, so the force of local node a of element e starts at 3 * code whatever npe is. */
CF_HD void cf_node_gather(int n, const int* src_ptr, const int* src, const double* fe_all, double* f) {
  double s[3] = {0, 0, 0};
  for (int k = src_ptr[n]; k < src_ptr[n + 1]; k++) {
    const double* fe = fe_all + 3 * (long)src[k];
    s[0] += fe[0]; s[1] += fe[1]; s[2] += fe[2];
  }
  f[3 * n] = s[0]; f[3 * n + 1] = s[1]; f[3 * n + 2] = s[2];
}

/* Backward-Euler right side of node n: b_n = (M v0)_n + h (f_ext + m_n g - f_el)_n. Adds the
 * node's free-DOF contributions to |M v0|^2, |f_ext + M g|^2 and |f_el|^2 into sq[3] (the force
 * scale of the PCG tolerance, b_scale in cofem/fem.h). */
CF_HD void cf_node_rhs_euler(int n, const int* row_ptr, const int* col, const double* Mblk,
                             const double* node_mass, const double* v, const double* f_ext,
                             const double* f_el, const unsigned char* fixed, int use_fixed, double h,
                             double g0, double g1, double g2, double* b, double* sq) {
  double s[3];
  cf_node_mass_row(n, row_ptr, col, Mblk, v, s);
  const double gr[3] = {g0, g1, g2};
  for (int i = 0; i < 3; i++) {
    const int k = 3 * n + i;
    const double fx = f_ext[k] + node_mass[n] * gr[i];
    if (!(use_fixed && fixed[k])) {
      sq[0] += s[i] * s[i];
      sq[1] += fx * fx;
      sq[2] += f_el[k] * f_el[k];
    }
    b[k] = s[i] + h * (fx - f_el[k]);
  }
}

/* The PCG's stopping rule from |b| on the free DOFs and the force scale b_scale (cofem/fem.h):
 * scale = max(|b|, b_scale), target = tol scale (tol where both are 0). Returns 0, leaving scale
 * and target unset, where |b| or b_scale is not finite: the solve must fail with CF_ERR_ARG
 * (cf_pcg_result), not "converge" on a NaN residual. Shared by the CPU PCG and the GPU's. */
CF_HD int cf_pcg_target(double bnorm, double b_scale, double tol, double* scale, double* target) {
  if (!isfinite(bnorm) || !isfinite(b_scale)) return 0;
  *scale = fmax(bnorm, b_scale);
  *target = tol * (*scale > 0 ? *scale : 1.0);
  return 1;
}

/* y_i = sum_j A_ij x_j over block row i */
CF_HD void cf_bsr_row(int i, const int* row_ptr, const int* col, const double* A, const double* x,
                      double* y) {
  double s0 = 0, s1 = 0, s2 = 0;
  for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
    const double* B = A + 9 * (long)k;
    const double* xj = x + 3 * col[k];
    s0 += B[0] * xj[0] + B[1] * xj[1] + B[2] * xj[2];
    s1 += B[3] * xj[0] + B[4] * xj[1] + B[5] * xj[2];
    s2 += B[6] * xj[0] + B[7] * xj[1] + B[8] * xj[2];
  }
  y[3 * i] = s0; y[3 * i + 1] = s1; y[3 * i + 2] = s2;
}

/* Block-Jacobi: Pinv_n = inverse of the diagonal block with fixed DOFs replaced by identity
 * rows/columns (they are projected out of the solve anyway). */
CF_HD void cf_block_jacobi(int n, const int* diag, const double* A, const unsigned char* fixed,
                           int use_fixed, double* Pinv) {
  double D[9];
  for (int i = 0; i < 9; i++) D[i] = A[9 * (long)diag[n] + i];
  if (use_fixed)
    for (int i = 0; i < 3; i++)
      if (fixed[3 * n + i])
        for (int j = 0; j < 3; j++) {
          D[3 * i + j] = (i == j);
          D[3 * j + i] = (i == j);
        }
  double Di[9];
  double det = cf_inv3(D, Di);
  if (!(fabs(det) > 0) || !isfinite(det)) {
    for (int i = 0; i < 9; i++) Di[i] = (i % 4 == 0) ? 1.0 / (D[i] != 0 ? D[i] : 1.0) : 0.0;
  }
  for (int i = 0; i < 9; i++) Pinv[9 * n + i] = Di[i];
}

/* ---- PCG starting guess (the warm start) ------------------------------------------------------
 * x0 = c0 v0 + c1 v1 minimises the energy 1/2 x.A x - b.x over span{v0, v1}, v0 the velocities of
 * the last step and v1 those of the step before (both zero on fixed DOFs): the previous velocity
 * scaled optimally, plus its trend. In a quasi-static pull (h omega >> 1 for all but the lowest
 * modes) the velocity follows the load rate, which v0 alone misses by its change over a step,
 * and at rest v0 holds stiff components that the step damps to ~0, which a plain warm start
 * carries in (docs/decisions.md, 2026-11-27). The sums are over the free DOFs:
 *   s[0] = v0.Av0, s[1] = v0.Av1, s[2] = v1.Av1, s[3] = v0.b, s[4] = v1.b,
 *   s[5] = Av0.Av0, s[6] = Av0.Av1, s[7] = Av1.Av1, s[8] = Av0.b, s[9] = Av1.b, s[10] = b.b */
enum { CF_WARM_NSUM = 11 };

/* Adds node n's free-DOF terms to s[CF_WARM_NSUM]. */
CF_HD void cf_node_warm_sums(int n, const double* v0, const double* v1, const double* Av0, const double* Av1,
                             const double* b, const unsigned char* fixed, int use_fixed, double* s) {
  for (int i = 3 * n; i < 3 * n + 3; i++) {
    if (use_fixed && fixed[i]) continue;
    s[0] += v0[i] * Av0[i];
    s[1] += v0[i] * Av1[i];
    s[2] += v1[i] * Av1[i];
    s[3] += v0[i] * b[i];
    s[4] += v1[i] * b[i];
    s[5] += Av0[i] * Av0[i];
    s[6] += Av0[i] * Av1[i];
    s[7] += Av1[i] * Av1[i];
    s[8] += Av0[i] * b[i];
    s[9] += Av1[i] * b[i];
    s[10] += b[i] * b[i];
  }
}

/* c[2] from the sums: the 2x2 Galerkin system by Cholesky, v1 dropped when (nearly) parallel to
 * v0 or zero; then c = 0 (cold start) unless |b - A x0| < |b|, since the PCG stops on that norm
 * (a guess better in energy can be worse in it when |b| is already below the tolerance). Also
 * c = 0 when b.b <= bb_zero = (tol b_scale)^2: x = 0 then meets the PCG's tolerance as it is
 * (a part at rest; cf_warm_start_needed lets the CPU skip the products). */
CF_HD int cf_warm_start_needed(double bb, double tol, double b_scale) {
  return !(bb <= (tol * b_scale) * (tol * b_scale));
}

CF_HD void cf_warm_coefficients(const double* s, double tol, double b_scale, double* c) {
  const double a00 = s[0], a01 = s[1], a11 = s[2], g0 = s[3], g1 = s[4];
  c[0] = 0;
  c[1] = 0;
  if (!cf_warm_start_needed(s[10], tol, b_scale)) return;
  if (a00 > 0) {
    const double l = a01 / a00, schur = a11 - l * a01;
    if (a11 > 0 && schur > 1e-8 * a11) {
      c[1] = (g1 - l * g0) / schur;
      c[0] = (g0 - a01 * c[1]) / a00;
    } else {
      c[0] = g0 / a00;
    }
  } else if (a11 > 0) {
    c[1] = g1 / a11;
  }
  const double rr = s[10] - 2 * (c[0] * s[8] + c[1] * s[9]) + c[0] * c[0] * s[5] + 2 * c[0] * c[1] * s[6] +
                    c[1] * c[1] * s[7];
  if (!(rr < s[10]) || !isfinite(c[0]) || !isfinite(c[1])) {
    c[0] = 0;
    c[1] = 0;
  }
}


/* ---- divergence monitor (fem_divergence.c, the CUDA monitor) ---------------------------------- */
/* 1/2 u_e^T K_e u_e of element e in the stress form: H = R^T F - I (F = Ds Dm^-1), eps = sym H,
 * V (lam/2 (tr eps)^2 + mu eps:eps), exact for the linear tetrahedron. */
CF_HD double cf_elem_strain_energy_fast(const double* x, const int* tet, const double* Dm_inv, const double* R,
                                        double vol, double lam, double mu, int e) {
  double Ds[9], F[9], H[9];
  cf_edge_matrix(x, tet, e, Ds);
  cf_mul3(Ds, Dm_inv + 9 * e, F);
  cf_mul3_tn(R + 9 * e, F, H);
  H[0] -= 1, H[4] -= 1, H[8] -= 1;
  const double tr = H[0] + H[4] + H[8];
  const double e01 = 0.5 * (H[1] + H[3]), e02 = 0.5 * (H[2] + H[6]), e12 = 0.5 * (H[5] + H[7]);
  const double ee = H[0] * H[0] + H[4] * H[4] + H[8] * H[8] + 2 * (e01 * e01 + e02 * e02 + e12 * e12);
  return vol * (0.5 * lam * tr * tr + mu * ee);
}

/* Row i of v^T M v (scalar mass blocks Mblk): sum_j M_ij v_i . v_j. */
CF_HD double cf_node_kinetic2(int i, const int* row_ptr, const int* col, const double* Mblk, const double* v) {
  double s = 0;
  for (int k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
    const int j = col[k];
    s += Mblk[k] * (v[3 * i] * v[3 * j] + v[3 * i + 1] * v[3 * j + 1] + v[3 * i + 2] * v[3 * j + 2]);
  }
  return s;
}


/* ---- quadratic tetrahedron (10 nodes) ---------------------------------------------------------
 * Node order (VTK_QUADRATIC_TETRA = Abaqus C3D10; the Gmsh reader swaps its nodes 8 and 9 into
 * it): corners 0-3, then the edge nodes 4:(0,1) 5:(1,2) 6:(2,0) 7:(0,3) 8:(1,3) 9:(2,3).
 * Barycentric L0 = 1 - xi - eta - zeta, L1 = xi, L2 = eta, L3 = zeta;
 *   corners N_i = L_i (2 L_i - 1),  edges N_ij = 4 L_i L_j.
 * Isoparametric: X(xi) = sum_a N_a X_a, J = dX/dxi, grad N_a = J^-T dN_a/dxi; element matrices
 * 30x30, DOF 3a + direction as for the linear element. */
#define CF_TET10_NODES 10
#define CF_TET10_DOFS 30
/* corners i, j of edge node 4 + k */
CF_HD void cf_tet10_edge(int k, int* i, int* j) {
  const int ei[6] = {0, 1, 2, 0, 1, 2}, ej[6] = {1, 2, 0, 3, 3, 3};
  *i = ei[k];
  *j = ej[k];
}

/* N[10] and dN/dxi [10x3] at reference point xi[3] */
CF_HD void cf_tet10_shape(const double* xi, double* N, double* dN) {
  const double L[4] = {1 - xi[0] - xi[1] - xi[2], xi[0], xi[1], xi[2]};
  /* dL_i/dxi_k */
  const double dL[12] = {-1, -1, -1, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int i = 0; i < 4; i++) {
    if (N) N[i] = L[i] * (2 * L[i] - 1);
    for (int k = 0; k < 3; k++) dN[3 * i + k] = (4 * L[i] - 1) * dL[3 * i + k];
  }
  for (int e = 0; e < 6; e++) {
    int i, j;
    cf_tet10_edge(e, &i, &j);
    if (N) N[4 + e] = 4 * L[i] * L[j];
    for (int k = 0; k < 3; k++) dN[3 * (4 + e) + k] = 4 * (L[i] * dL[3 * j + k] + L[j] * dL[3 * i + k]);
  }
}

/* Physical gradients g[10x3] of the shape functions at xi from the nodes' rest positions Xe[30];
 * returns det J (the volume density: dV = det J dxi dEta dZeta). */
CF_HD double cf_tet10_gradients(const double* Xe, const double* xi, double* N, double* g) {
  double dN[30], J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9];
  cf_tet10_shape(xi, N, dN);
  for (int a = 0; a < 10; a++) /* J_ij = sum_a X_ai dN_a/dxi_j */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) J[3 * i + j] += Xe[3 * a + i] * dN[3 * a + j];
  const double det = cf_inv3(J, Ji);
  for (int a = 0; a < 10; a++) /* g_a = J^-T dN_a: g_aj = sum_k Ji_kj dN_ak */
    for (int j = 0; j < 3; j++)
      g[3 * a + j] = Ji[j] * dN[3 * a] + Ji[3 + j] * dN[3 * a + 1] + Ji[6 + j] * dN[3 * a + 2];
  return det;
}

/* The 4-point Gauss rule of the tetrahedron (degree 2, exact for K of a straight-sided element,
 * whose B is linear; CalculiX's C3D10 uses the same): barycentric (b, b, b, a) permuted,
 * a = (5 + 3 sqrt 5) / 20, b = (5 - sqrt 5) / 20, weight 1/24 each (reference volume 1/6). */
CF_HD void cf_tet10_gauss4(int q, double* xi) {
  const double a = 0.5854101966249685, b = 0.1381966011250105;
  xi[0] = q == 1 ? a : b;
  xi[1] = q == 2 ? a : b;
  xi[2] = q == 3 ? a : b;
}

/* Quadrature point q (0..3) of the 4-point rule on the element at Xe: its shape values N[10] (or
 * NULL) and gradients g[30] (cf_tet10_gradients); returns its weight det J_q / 24 (<= 0: inverted
 * there). The one place the rule's points and weights are applied: stiffness, CalculiX's mass, the
 * model's per-point gradients (fem_model.c), the modes' geometric stiffness (reduce_geometric.c) and
 * the accuracy harness's strains. */
CF_HD double cf_tet10_point(const double* Xe, int q, double* N, double* g);

/* Gather the element's rest positions Xe[30] */
CF_HD void cf_tet10_positions(const double* X, const int* t, double* Xe) {
  for (int a = 0; a < 10; a++)
    for (int i = 0; i < 3; i++) Xe[3 * a + i] = X[3 * t[a] + i];
}

/* K_ab += w [lam g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I]: one quadrature point's share of the
 * isotropic element stiffness between nodes a and b (K: the block's first entry, rows stride apart) */
CF_HD void cf_iso_block_add(double w, double lam, double mu, const double* ga, const double* gb, double* K, int stride) {
  const double dot = ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) K[stride * i + j] += w * (lam * ga[i] * gb[j] + mu * ga[j] * gb[i] + (i == j ? mu * dot : 0.0));
}

CF_HD double cf_tet10_point(const double* Xe, int q, double* N, double* g) {
  double xi[3];
  cf_tet10_gauss4(q, xi);
  return cf_tet10_gradients(Xe, xi, N, g) / 24.0;
}

/* K_e = sum_q w_q det J_q B_q^T D B_q (4-point rule), block (a,b) =
 * w det J [lam g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I]. Returns the smallest det J of the
 * quadrature points (<= 0: the element is inverted or too curved); *vol = sum_q w_q det J_q. */
CF_HD double cf_tet10_stiffness(const double* Xe, double E, double nu, double* Ke, double* vol) {
  double lam, mu, min_det = 1e300;
  cf_lame(E, nu, &lam, &mu);
  for (int i = 0; i < 900; i++) Ke[i] = 0;
  *vol = 0;
  for (int q = 0; q < 4; q++) {
    double g[30];
    const double w = cf_tet10_point(Xe, q, 0, g);
    if (24.0 * w < min_det) min_det = 24.0 * w;
    *vol += w;
    for (int a = 0; a < 10; a++)
      for (int b = 0; b < 10; b++) cf_iso_block_add(w, lam, mu, g + 3 * a, g + 3 * b, Ke + 3 * a * 30 + 3 * b, 30);
  }
  return min_det;
}

/* Consistent scalar mass M_ab = rho int N_a N_b dV (the 3x3 block is M_ab I), by the conical
 * product rule (xi = u, eta = v (1 - u), zeta = w (1 - u)(1 - v), dxi = (1 - u)^2 (1 - v) du dv dw)
 * with 4 Gauss-Legendre points per direction: exact to degree 5, so for the straight-sided
 * element (N_a N_b of degree 4, det J constant) it is rho V / 420 times the closed form
 * (corners 6 diagonal, 1 between corners; corner-edge -4 touching, -6 not; edges 32 diagonal, 16
 * sharing a corner, 8 opposite), which tests/fem/test_fem_tet10.c checks. */
CF_HD void cf_tet10_mass(const double* Xe, double rho, double* M) {
  const double gx[4] = {0.0694318442029737, 0.3300094782075719, 0.6699905217924281, 0.9305681557970263};
  const double gw[4] = {0.1739274225687269, 0.3260725774312731, 0.3260725774312731, 0.1739274225687269};
  for (int i = 0; i < 100; i++) M[i] = 0;
  for (int iu = 0; iu < 4; iu++)
    for (int iv = 0; iv < 4; iv++)
      for (int iw = 0; iw < 4; iw++) {
        const double u = gx[iu], v = gx[iv], w = gx[iw];
        const double xi[3] = {u, v * (1 - u), w * (1 - u) * (1 - v)};
        double N[10], g[30];
        const double det = cf_tet10_gradients(Xe, xi, N, g);
        const double wt = rho * gw[iu] * gw[iv] * gw[iw] * (1 - u) * (1 - u) * (1 - v) * det;
        for (int a = 0; a < 10; a++)
          for (int b = 0; b < 10; b++) M[10 * a + b] += wt * N[a] * N[b];
      }
}

/* CalculiX's C3D10 mass (e_c3d.f integrates it with the stiffness's 4-point rule, cf_tet10_gauss4):
 * M_ab = rho sum_q det J_q / 24 N_a(q) N_b(q), exact for the total mass and its first moments, not
 * for N_a N_b (degree 4) */
CF_HD void cf_tet10_mass_gauss4(const double* Xe, double rho, double* M) {
  for (int i = 0; i < 100; i++) M[i] = 0;
  for (int q = 0; q < 4; q++) {
    double N[10], g[30];
    const double wt = rho * cf_tet10_point(Xe, q, N, g);
    for (int a = 0; a < 10; a++)
      for (int b = 0; b < 10; b++) M[10 * a + b] += wt * N[a] * N[b];
  }
}

/* HRZ lumping (Hinton, Rock and Zienkiewicz 1976): m_a = M_aa * sum_bc M_bc / sum_b M_bb, positive
 * and of the right total where the row sums give the corners negative masses (-rho V / 20 each on
 * a straight-sided element; HRZ gives rho V / 36 to a corner and 4 rho V / 27 to an edge node). */
CF_HD void cf_tet10_mass_hrz(const double* M, double* m) {
  double total = 0, diag = 0;
  for (int i = 0; i < 100; i++) total += M[i];
  for (int a = 0; a < 10; a++) diag += M[11 * a];
  for (int a = 0; a < 10; a++) m[a] = M[11 * a] * total / diag;
}

/* Co-rotated displacement u_a = R^T (x_a - x_0) - (X_a - X_0) of an element of npe nodes t (node 0
 * the reference: rigid translations cancel exactly, accurate on parts far from the origin). */
CF_HD void cf_corotated_displacement_n(const double* R, const int* t, int npe, const double* X, const double* x,
                                       double* u) {
  const int n0 = t[0];
  for (int a = 0; a < npe; a++) {
    const int n = t[a];
    double dx[3];
    for (int i = 0; i < 3; i++) dx[i] = x[3 * n + i] - x[3 * n0 + i];
    for (int i = 0; i < 3; i++)
      u[3 * a + i] = R[i] * dx[0] + R[3 + i] * dx[1] + R[6 + i] * dx[2] - (X[3 * n + i] - X[3 * n0 + i]);
  }
}

/* Deformation gradient of a quadratic element at its centroid, F = sum_a x_a g_a^T, g [30] the rest
 * gradients there (cfModel.Gc). Straight-sided, the corners' weights vanish (4 L - 1 = 0) and F
 * is the element's mean gradient (F is linear in xi); at rest F = I exactly, rigidly F = R. */
CF_HD void cf_tet10_deformation_gradient(const double* x, const int* t, const double* g, double* F) {
  for (int i = 0; i < 9; i++) F[i] = 0;
  for (int a = 0; a < 10; a++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) F[3 * i + j] += x[3 * t[a] + i] * g[3 * a + j];
}

/* Stage 1 body for the quadratic element: R = polar(F at the centroid), warm-started from the
 * previous R. Why the centroid's F and not the corners' frame Ds Dm^-1: in a bent element the
 * corners' chord frame is turned from the element's mean rotation by O(kappa h), and the linear
 * strain of R^T F - I then picks up sym([psi]x eps), an error of first order in h: on a cantilever
 * at P L^2/(E I) = 5 the tip missed the elastica by 9.0, 4.7, 2.4% with 10, 20, 40 elements along
 * it. The centroid's polar makes R^T F symmetric on average over the element (tests/fem/
 * test_fem_tet10.c, "large rotation"). Returns 1 if det F <= 0. */
CF_HD int cf_tet10_elem_polar(int e, const int* tet, const double* Gc, const double* x, double* R) {
  double F[9], Q[9], Rn[9];
  cf_tet10_deformation_gradient(x, tet + 10 * (long)e, Gc + 30 * (long)e, F);
  for (int i = 0; i < 9; i++) Q[i] = R[9 * e + i];
  double det = cf_polar_rotation_warm(F, Q, Rn);
  for (int i = 0; i < 9; i++) R[9 * e + i] = Rn[i];
  return det <= 0;
}

/* Stage 2 body for the quadratic tetrahedron, one element: KR = R K_e R^T block by block
 * ((R K_ab R^T), 100 blocks) and fe = R K_e (R^T x_e - X_e) (= R K_e u, u as above since K_e
 * annihilates translations). R from cf_tet10_elem_polar. */
CF_HD void cf_tet10_rotate(int e, const int* tet, const double* Ke_all, const double* R_all, const double* X,
                           const double* x, double* KR_all, double* fe_all) {
  const double* R = R_all + 9 * (long)e;
  const double* K = Ke_all + 900 * (long)e;
  const int* t = tet + 10 * (long)e;
  double* KR = KR_all + 900 * (long)e;
  double* fe = fe_all + 30 * (long)e;
  double u[30], ku[30];
  cf_corotated_displacement_n(R, t, 10, X, x, u);
  for (int i = 0; i < 30; i++) {
    double s = 0;
    for (int j = 0; j < 30; j++) s += K[30 * i + j] * u[j];
    ku[i] = s;
  }
  for (int a = 0; a < 10; a++)
    for (int i = 0; i < 3; i++) fe[3 * a + i] = R[3 * i] * ku[3 * a] + R[3 * i + 1] * ku[3 * a + 1] + R[3 * i + 2] * ku[3 * a + 2];
  for (int a = 0; a < 10; a++)
    for (int b = 0; b < 10; b++) {
      double T[9];
      /* T = R K_ab, then KR_ab = T R^T */
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          T[3 * i + j] = R[3 * i] * K[(3 * a) * 30 + 3 * b + j] + R[3 * i + 1] * K[(3 * a + 1) * 30 + 3 * b + j] +
                         R[3 * i + 2] * K[(3 * a + 2) * 30 + 3 * b + j];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          KR[(3 * a + i) * 30 + 3 * b + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    }
}

/* Stage 2 body for the quadratic tetrahedron with one rotation per quadrature point (the element's
 * "rotations": "quadrature"): at each of the 4 points q, F_q = sum_a x_a g_qa^T, R_q = polar(F_q)
 * (stage 1), the linear strain of the rotated gradient and its stress,
 *   eps_q = sym(R_q^T F_q) - I,  sigma_q = lam tr(eps_q) I + 2 mu eps_q,
 *   fe_a = sum_q w_q R_q sigma_q g_qa                    (w_q = det J_q / 24),
 *   KR_ab = sum_q w_q [lam h_a h_b^T + mu h_b h_a^T + mu (h_a . h_b) I],   h_a = R_q g_qa,
 * i.e. sum_q R_q K_q R_q^T with K_q the point's share of K_e (cf_tet10_stiffness). With one rotation
 * per element (cf_tet10_rotate) a bent element's strain carries the rotation's variation inside it,
 * an error of first order in the element length; here each point is turned by its own. Gq [120 e]:
 * the rest gradients at the points, Wq [4 e] their weights (cfModel). Returns 1 if a det F_q <= 0. */
CF_HD void cf_tet10_rotate_qp(int e, const int* tet, const double* Gq, const double* Wq, double lam, double mu,
                              const double* x, const double* Rq_all, double* KR_all, double* fe_all) {
  const int* t = tet + 10 * (long)e;
  double* KR = KR_all + 900 * (long)e;
  double* fe = fe_all + 30 * (long)e;
  for (int i = 0; i < 900; i++) KR[i] = 0;
  for (int i = 0; i < 30; i++) fe[i] = 0;
  for (int q = 0; q < 4; q++) {
    const double* g = Gq + 120 * (long)e + 30 * q;
    const double w = Wq[4 * (long)e + q];
    const double* R = Rq_all + 36 * (long)e + 9 * q;
    double F[9], S[9], sig[9], sg[9], h[30];
    cf_tet10_deformation_gradient(x, t, g, F);
    cf_mul3_tn(R, F, S); /* R^T F */
    double tr = S[0] + S[4] + S[8] - 3;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        const double eij = 0.5 * (S[3 * i + j] + S[3 * j + i]) - (i == j);
        sig[3 * i + j] = 2 * mu * eij + (i == j ? lam * tr : 0.0);
      }
    /* sg = R sigma R^T (the stress turned to global axes) */
    double T[9];
    cf_mul3(R, sig, T);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) sg[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
    for (int a = 0; a < 10; a++) {
      const double* ga = g + 3 * a;
      for (int i = 0; i < 3; i++) h[3 * a + i] = R[3 * i] * ga[0] + R[3 * i + 1] * ga[1] + R[3 * i + 2] * ga[2];
      for (int i = 0; i < 3; i++)
        fe[3 * a + i] += w * (sg[3 * i] * h[3 * a] + sg[3 * i + 1] * h[3 * a + 1] + sg[3 * i + 2] * h[3 * a + 2]);
    }
    for (int a = 0; a < 10; a++)
      for (int b = 0; b < 10; b++) cf_iso_block_add(w, lam, mu, h + 3 * a, h + 3 * b, KR + 3 * a * 30 + 3 * b, 30);
  }
}

/* Stage 1 body for the quadratic element turned at its quadrature points: R_q = polar(F_q), warm-
 * started from the last (Rq [36 e + 9 q]). Returns 1 if a det F_q <= 0. */
CF_HD int cf_tet10_elem_polar_qp(int e, const int* tet, const double* Gq, const double* x, double* Rq_all) {
  int bad = 0;
  for (int q = 0; q < 4; q++) {
    double F[9], R[9];
    double* Rq = Rq_all + 36 * (long)e + 9 * q;
    cf_tet10_deformation_gradient(x, tet + 10 * (long)e, Gq + 120 * (long)e + 30 * q, F);
    if (cf_polar_rotation_warm(F, Rq, R) <= 0) bad = 1;
    for (int i = 0; i < 9; i++) Rq[i] = R[i];
  }
  return bad;
}

/* The quadratic element's strain energy with its quadrature points' rotations (cf_tet10_rotate_qp's
 * Rq, of its last call): sum_q w_q (lam/2 (tr eps_q)^2 + mu eps_q : eps_q) */
CF_HD double cf_tet10_strain_energy_qp(int e, const int* tet, const double* Gq, const double* Wq, double lam, double mu,
                                       const double* Rq_all, const double* x) {
  double s = 0;
  for (int q = 0; q < 4; q++) {
    double F[9], S[9];
    cf_tet10_deformation_gradient(x, tet + 10 * (long)e, Gq + 120 * (long)e + 30 * q, F);
    cf_mul3_tn(Rq_all + 36 * (long)e + 9 * q, F, S);
    double tr = S[0] + S[4] + S[8] - 3, ee = 0;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        const double eij = 0.5 * (S[3 * i + j] + S[3 * j + i]) - (i == j);
        ee += eij * eij;
      }
    s += Wq[4 * (long)e + q] * (0.5 * lam * tr * tr + mu * ee);
  }
  return s;
}

/* 1/2 u^T K_e u with u the co-rotated displacement, any element (nk = 3 npe DOFs) */
CF_HD double cf_elem_strain_energy_n(const double* R, const int* t, int npe, const double* Ke, const double* X,
                                     const double* x) {
  double u[30];
  const int nk = 3 * npe;
  cf_corotated_displacement_n(R, t, npe, X, x, u);
  double s = 0;
  for (int i = 0; i < nk; i++) {
    double ki = 0;
    for (int j = 0; j < nk; j++) ki += Ke[nk * i + j] * u[j];
    s += 0.5 * u[i] * ki;
  }
  return s;
}

#endif
