/* Semi-recursive dynamics of rigid and modal bodies in relative coordinates (paper 000 sections 2-3;
 * cofem/mbs_semirecursive.h; docs/mbs.md, "Topological formulation").
 *
 * Kinematics of a tree joint (parent P, child C): the joint is a chain of elementary motions, each a
 * rotation about or a translation along a unit axis e_k fixed in the frame the motions before it
 * leave (revolute: one rotation; prismatic: one translation; cylindrical: translation, rotation;
 * universal: rotation about the parent's axis, then about the child's; spherical: three rotations
 * about the parent's joint axes f, g, a; floating: translations along global x, y, z, then rotations
 * about the body's x, y, z). With x the joint point and R_I the frame so far,
 *   rotation:    R_I <- R_I Rot(e_k, z_k),  b_k = (x × e, e)            (e = R_I e_k, global)
 *   translation: x <- x + e z_k,            b_k = (e, 0)
 *   b_dot_k (e and x move with the frame before motion k, velocity (s_dot_I, w_I)):
 *     e_dot = w_I × e, x_dot = s_dot_I + w_I × x,
 *     rotation: (x_dot × e + x × e_dot, e_dot); translation: (e_dot, 0)
 *   Z_C = Z_P + sum_k b_k z_dot_k                                          (eq. 8)
 *   Z_dot_C = Z_dot_P + sum_k (b_k z_ddot_k + b_dot_k z_dot_k)             (eq. 9: D = the part
 *                                                                             without z_ddot)
 * and the child's pose R_C = R_I R0, r_C = x - R_C pc (R0, pc: its pose relative to the last frame,
 * from the assembled initial state, where z = 0).
 *
 * Dynamics of a body in Z = (s_dot, w) (g: centre of mass, I_G: inertia about it, both global):
 *   Mbar = [m I, -m g~; m g~, I_G - m g~ g~]
 *   Qbar = (F, n_O) - [m w × v_G; w × I_G w + m g × (w × v_G)],  v_G = s_dot + w × g
 * with the applied forces from the global model's natural-coordinate forces Q_nat (q_b = r, u, v, w):
 *   F = Q_r, n_O = r × Q_r + u × Q_u + v × Q_v + w × Q_w (the virtual power Q_nat . q_dot_b for
 *   r_dot = s_dot + w × r, u_dot = w × u, ...). Leaves to root (eqs. 30-33):
 *   Mhat_i = Mbar_i + sum over children Mhat_c, Phat_i = Qbar_i - Mbar_i D_i + sum Phat_c,
 *   M_z[k, l] = b_k . Mhat_(body of l) b_l (k on the path of l), Q_z[k] = b_k . Phat_(body of k).
 *
 * Closure: Phi_z = Phi_q q_z (eq. 34) on the cut joints' and drivers' equations of the global model,
 * the gradient row of a body g_b (12) giving w_b = (g_r, r × g_r + u × g_u + v × g_v + w × g_w) and
 * Phi_z[i, k] = sum over the bodies b below coordinate k of w_b . b_k; the acceleration bias is the
 * global bias at the tree's q_dot plus Phi_q q_ddot(z_ddot = 0). */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/fem.h"
#include "cofem/mbs_semirecursive.h"
#include "mbs/mbs_body_kind.h"
#include "mbs/mbs_internal.h"

#define NEWTON_FLOOR 100 /* as mbs_step.c: the largest |dz|, in tol_dq, a stalled Newton may end at */

typedef struct SrPrim {
  int rot;      /* 1 rotation, 0 translation */
  double e[3];  /* axis in the frame before the motion (at z = 0: the parent's axes) */
} SrPrim;

struct cfMbsSr {
  cfMbsTopology* topo;
  int nb, nz, nrow;
  int ntb, nzt;       /* the tree's bodies (topology order; a modal body's amplitude blocks are not bodies) and
                         its joint coordinates; the modal amplitudes follow them in z */
  /* modal bodies (paper 000 section 3, restricted to joints at frame points): the amplitudes y of modal body
   * i are z[mb_z0[i] .. + mb_nm[i]), stored in the global data at q[mb_qy[i] ..]; the body's equations in
   * (Z, y):  [Mbar C; C^T Myy] (Z_dot, y_ddot) = (Qbar, Q_y), from the model's natural-coordinate mass
   * (the inertia invariants, cf_mbs__apply_M) through q_dot = T Z (r_dot = s_dot + w × r, e_dot = w × e):
   *   Mbar = T^T M_ff T, C = T^T M_fy, Myy = M_yy; Qbar = T^T (Q_f - M_ff a0), Q_y - M_yf a0 with
   *   a0 = T_dot Z (r_ddot = w × r_dot, e_ddot = w × e_dot at Z_dot = 0) */
  int nmb;
  int *mb_body, *mb_nm, *mb_z0, *mb_qy, *mb_off, *mb_sq; /* [nmb]; mb_off: sum of the nm before (Cm at 6 mb_off, Py);
                                                         mb_sq: sum of the nm^2 before (Myy, Kyy) */
  int* body_mb;       /* [nb] the modal index of a frame body, else -1 */
  unsigned char* is_blk; /* [nb] an amplitude block (no pose of its own) */
  double *Cm, *Myy, *Py, *Kyy; /* [6 sum nm] [sum nm^2] [sum nm] [sum nm^2] (Kyy: h/2 C + h^2/4 K of the modes) */
  double *xv, *yv;    /* [nq] scratch of cf_mbs__apply_M */
  int* rows;          /* [nrow] the global equations kept: cut joints, then drivers */
  int ntree_row;
  int* tree_rows;     /* [ntree_row] the tree joints' equations (their reactions, cf_mbs_sr_reactions) */
  double alpha, mref;
  /* per body (definition order): the joint's motions, its point on the parent, the child's offset */
  int* nprim;         /* [nb] */
  SrPrim* prim;       /* [6 nb] */
  double* pp;         /* [3 nb] joint point in parent coordinates (ground: global) */
  double* pc;         /* [3 nb] child origin relative to the last frame's point, child coordinates */
  double* R0;         /* [9 nb] child rotation relative to the last frame */
  int* coord_body;    /* [nz] the body whose joint owns coordinate k */
  /* tree joints at a point of a modal parent (paper 000 section 3: the joint's frame moves with the parent's
   * deformation there): the joint point x = r_P + R_P (s + Phi y_P), the frame before the joint's own motions
   * R_P Rx(th_1) Ry(th_2) Rz(th_3), th = Th y_P (the point's small rotation, body axes; none for a spherical
   * joint, whose three rotations take any frame); the parent's amplitudes y_P are then motions of the child's
   * joint too, before its own: Z_C = Z_P + sum_j beta_j y_dot_j + sum_k b_k z_dot_k */
  int* xmb;           /* [nb] the modal index of the parent whose point the joint sits at, else -1 */
  const double **xPhi, **xTh; /* [nb] that point's translation rows [3 nm] and rotation rows (NULL: not turned) */
  /* the same at the child's own point (a modal child jointed at its node set): the point s + Phi y of the child
   * sits at the joint, its frame turned by th = Th y, so the child's frame follows its own amplitudes after the
   * joint's motions: R_C = R_I R0 Rz(-th_3) Ry(-th_2) Rx(-th_1), r_C = x - R_C (pc + Phi y); the child's amplitudes
   * are then motions of its own joint too, after its own coordinates */
  int* cmb;           /* [nb] the child's modal index when its joint point moves with its modes, else -1 */
  const double **cPhi, **cTh;
  /* the motions of every tree body's joint, mo0[a] .. + mon[a]: (coordinate mo_k, twist b + 6 mo_tw), a
   * modal parent's amplitudes first (their twists beta after the nz coordinates' in b, bd), then its own */
  int nmo, *mo0, *mon, *mo_k, *mo_tw;
  int *blk_mb, *blk_off; /* [nb] an amplitude block's modal index and its first amplitude (closure columns) */
  /* state */
  double *z, *zd, *zdd, *lam; /* [nz] [nz] [nz] [nrow] */
  double *zd_hat, *zdd_hat, *save; /* [nz] [nz] [3 nz + nrow] */
  /* recursion */
  double *R, *r;      /* [9 nb] [3 nb] poses */
  double *Z, *D, *Zd; /* [6 nb] velocities, D (eq. 9 without z_ddot), accelerations */
  double *b, *bd;     /* [6 nz] b_k, b_dot_k (global) */
  double *Mb, *Mh;    /* [36 nb] Mbar, accumulated */
  double *Pb, *Ph;    /* [6 nb] Qbar - Mbar D, accumulated */
  double *Mz, *Qz;    /* [nz nz] [nz] */
  double* KC;         /* [nz nz] h/2 C_z + h^2/4 K_z of the force elements: q_z^T (.) q_z (eq. 38 by the chain
                         rule, the derivative of q_z left out as eq. 37's approximate tangent allows) */
  double *G, *SG;     /* [24 nz] scratch: q_z of a force element's two bodies on their coordinates, S G */
  /* per force element (fixed by the tree, found once): the coordinates above either body, each once,
   * fcols[fcol0[e] .. fcol0[e + 1]), and fpath[4 (fcol0[e] + c) + 2 slot + {0, 1}]: 1 + the index of the twists by
   * which column c moves that slot (in b; 0: none; a second one where the coordinate is two motions on the path) */
  int *fcol0, *fcols;
  int* fpath;
  int need_fK;        /* a force element other than a point spring: its natural-coordinate K, C are used */
  /* the leading matrix's profile (skyline) factor: coordinates permuted to a post-order of the tree
   * (every subtree contiguous, children before parents), where eliminating a body's coordinates fills
   * nothing outside its path to the root; row i of the permuted matrix (and of its factor) is nonzero
   * only in columns env[i] .. i. perm[i]: the coordinate at permuted position i; jcol0/jcols: the
   * columns each closure row can touch (the coordinates above its bodies) */
  int *perm, *iperm, *env, *jcol0, *jcols;
  double* ysol;       /* [nz] lead_solve's scratch */
  double *J, *phi, *phit, *bias; /* [nrow nz] [nrow] [nrow] [nrow] */
  double *A, *rhs, *x, *sig, *w6; /* leading matrix [nz nz], scratch [nz], [nz], [nrow], [6 nb] */
};

/* ---- small dense helpers ---- */
static void rot_axis(const double e[3], double ang, double Rm[9]) { cf_mbs_axis_angle(e, ang, Rm); }
static void mat3_mul(const double* A, const double* B, double* C) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  memcpy(C, T, sizeof T);
}
static void mat3_vec(const double* A, const double* x, double* y) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
  memcpy(y, t, sizeof t);
}
static void mat3_tvec(const double* A, const double* x, double* y) { /* A^T x */
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
  memcpy(y, t, sizeof t);
}
static double dot6(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}
static void mat6_vec(const double* M, const double* x, double* y) {
  for (int i = 0; i < 6; i++) y[i] = dot6(M + 6 * i, x);
}
/* in-place Cholesky A = L L^T (lower triangle of row-major A); < 0 when not positive definite */
static int chol(int n, double* A) {
  for (int j = 0; j < n; j++) {
    double s = A[j * n + j];
    for (int k = 0; k < j; k++) s -= A[j * n + k] * A[j * n + k];
    if (!(s > 0)) return -(j + 1);
    double l = sqrt(s);
    A[j * n + j] = l;
    for (int i = j + 1; i < n; i++) {
      double t = A[i * n + j];
      for (int k = 0; k < j; k++) t -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = t / l;
    }
  }
  return 0;
}
static void chol_solve(int n, const double* L, const double* b, double* x) {
  for (int i = 0; i < n; i++) {
    double t = b[i];
    for (int k = 0; k < i; k++) t -= L[i * n + k] * x[k];
    x[i] = t / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double t = x[i];
    for (int k = i + 1; k < n; k++) t -= L[k * n + i] * x[k];
    x[i] = t / L[i * n + i];
  }
}

static void row_wrench(const cfMbsSr* s, int b, const double* g, double w[6]);

void cf_mbs_sr_free(cfMbsSr* s) {
  if (!s) return;
  cf_mbs_topology_free(s->topo);
  free(s->rows), free(s->tree_rows), free(s->nprim), free(s->prim), free(s->pp), free(s->pc), free(s->R0), free(s->coord_body);
  free(s->z), free(s->zd), free(s->zdd), free(s->lam), free(s->zd_hat), free(s->zdd_hat), free(s->save);
  free(s->R), free(s->r), free(s->Z), free(s->D), free(s->Zd), free(s->b), free(s->bd), free(s->Mb), free(s->Mh);
  free(s->Pb), free(s->Ph), free(s->Mz), free(s->Qz), free(s->KC), free(s->G), free(s->SG), free(s->fcol0), free(s->fcols), free(s->fpath), free(s->perm), free(s->iperm), free(s->ysol), free(s->env), free(s->jcol0), free(s->jcols), free(s->J), free(s->phi), free(s->phit), free(s->bias);
  free(s->A), free(s->rhs), free(s->x), free(s->sig), free(s->w6);
  free(s->mb_body), free(s->mb_nm), free(s->mb_z0), free(s->mb_qy), free(s->mb_off), free(s->mb_sq), free(s->body_mb), free(s->is_blk);
  free(s->Cm), free(s->Myy), free(s->Py), free(s->Kyy), free(s->xv), free(s->yv);
  free(s->xmb), free(s->xPhi), free(s->xTh), free(s->cmb), free(s->cPhi), free(s->cTh), free(s->mo0), free(s->mon), free(s->mo_k), free(s->mo_tw), free(s->blk_mb), free(s->blk_off);
  free(s);
}

const cfMbsTopology* cf_mbs_sr_topology(const cfMbsSr* s) { return s->topo; }
int cf_mbs_sr_nz(const cfMbsSr* s) { return s->nz; }
const double* cf_mbs_sr_z(const cfMbsSr* s) { return s->z; }
const double* cf_mbs_sr_zd(const cfMbsSr* s) { return s->zd; }
double cf_mbs_sr_penalty(const cfMbsSr* s) { return s->alpha; }

/* pose of body b in the global data's natural coordinates */
static void pose_of(const cfMbsModel* m, const double* q, int b, double r[3], double R[9]) {
  const double* qb = q + m->body_qadr[b];
  for (int i = 0; i < 3; i++) r[i] = qb[i], R[3 * i] = qb[3 + i], R[3 * i + 1] = qb[6 + i], R[3 * i + 2] = qb[9 + i];
}

/* The parent's amplitudes y as motions of child c's joint (see cfMbsSr.xmb): from the frame R_I = R_P, x at the
 * point's rest position s, its velocity Zi (D: Di, acc Ai):
 *   translations: x <- x + v_j y_j, v_j = R_P Phi_j,  beta_j = (v_j, 0), beta_dot_j = (w_P × v_j, 0)
 *   rotations a = 1, 2, 3 about the frame's axis e_a (global: e = R_I E_a) by th_a = sum_j Th_aj y_j:
 *     u_a = (x × e, e), u_dot_a = (x_dot × e + x × e_dot, e_dot) (as a revolute motion),
 *     beta_j += Th_aj u_a, D += u_dot_a th_dot_a, R_I <- R_I Rot(E_a, th_a) */
static void modal_point_motions(cfMbsSr* s, int c, double RI[9], double x[3], double Zi[6], double Di[6], double Ai[6],
                                int want_acc) {
  int ip = s->xmb[c], nm = s->mb_nm[ip], y0 = s->mb_z0[ip], e0 = s->mo0[c];
  const double *Ph = s->xPhi[c], *Th = s->xTh[c];
  const double *yd = s->zd + y0, *ydd = s->zdd + y0, *y = s->z + y0;
  double dx[3] = {0, 0, 0};
  for (int j = 0; j < nm; j++) {
    double *bj = s->b + 6 * s->mo_tw[e0 + j], *bdj = s->bd + 6 * s->mo_tw[e0 + j], pj[3] = {Ph[j], Ph[nm + j], Ph[2 * nm + j]};
    mat3_vec(RI, pj, bj);
    cf_mbs_cross3(Zi + 3, bj, bdj);
    bj[3] = bj[4] = bj[5] = bdj[3] = bdj[4] = bdj[5] = 0;
    for (int i = 0; i < 3; i++) dx[i] += bj[i] * y[j];
  }
  for (int j = 0; j < nm; j++) {
    const double *bj = s->b + 6 * s->mo_tw[e0 + j], *bdj = s->bd + 6 * s->mo_tw[e0 + j];
    for (int i = 0; i < 6; i++) {
      Zi[i] += bj[i] * yd[j];
      Di[i] += bdj[i] * yd[j];
      if (want_acc) Ai[i] += bj[i] * ydd[j] + bdj[i] * yd[j];
    }
  }
  for (int i = 0; i < 3; i++) x[i] += dx[i];
  if (!Th) return;
  for (int a = 0; a < 3; a++) {
    const double* Tha = Th + a * nm;
    double E[3] = {a == 0, a == 1, a == 2}, e[3] = {RI[a], RI[3 + a], RI[6 + a]}, u[6], ud[6], ed[3], xd[3], t1[3], t2[3];
    double th = 0, thd = 0, thdd = 0;
    for (int j = 0; j < nm; j++) th += Tha[j] * y[j], thd += Tha[j] * yd[j], thdd += Tha[j] * ydd[j];
    cf_mbs_cross3(Zi + 3, e, ed);
    cf_mbs_cross3(Zi + 3, x, xd);
    for (int i = 0; i < 3; i++) xd[i] += Zi[i];
    cf_mbs_cross3(x, e, u);
    memcpy(u + 3, e, sizeof e);
    cf_mbs_cross3(xd, e, t1);
    cf_mbs_cross3(x, ed, t2);
    for (int i = 0; i < 3; i++) ud[i] = t1[i] + t2[i], ud[3 + i] = ed[i];
    for (int j = 0; j < nm; j++) { /* (beta_dot enters D through u_dot_a th_dot_a below: not stored) */
      double* bj = s->b + 6 * s->mo_tw[e0 + j];
      for (int i = 0; i < 6; i++) bj[i] += Tha[j] * u[i];
    }
    for (int i = 0; i < 6; i++) {
      Zi[i] += u[i] * thd;
      Di[i] += ud[i] * thd;
      if (want_acc) Ai[i] += u[i] * thdd + ud[i] * thd;
    }
    double Rk[9];
    rot_axis(E, th, Rk);
    mat3_mul(RI, Rk, RI);
  }
}

/* The child's own amplitudes y as the last motions of its joint (see cfMbsSr.cmb), from R_C = R_I R0 (its joint
 * frame), x the joint point and the velocity so far Zi (D: Di, acc Ai):
 *   rotations a = 3, 2, 1 about the frame's axis e_a (e = R_C E_a) by -th_a (the inverse of the point's turn):
 *     u_a as a revolute motion about x, beta_j -= Th_aj u_a, D -= u_dot_a th_dot_a, R_C <- R_C Rot(E_a, -th_a)
 *   translations (the body slides so that its point s + Phi y stays at x): v_j = -R_C Phi_j,
 *     beta_j += (v_j, 0), D += (w_C × v_j, 0) y_dot_j, x <- x + v_j y_j (then r_C = x - R_C pc) */
static void child_point_motions(cfMbsSr* s, int c, double RC[9], double x[3], double Zi[6], double Di[6], double Ai[6],
                                int want_acc) {
  int ip = s->cmb[c], nm = s->mb_nm[ip], y0 = s->mb_z0[ip], e0 = s->mo0[c] + s->mon[c] - nm;
  const double *Ph = s->cPhi[c], *Th = s->cTh[c];
  const double *yd = s->zd + y0, *ydd = s->zdd + y0, *y = s->z + y0;
  for (int j = 0; j < nm; j++) memset(s->b + 6 * s->mo_tw[e0 + j], 0, 6 * sizeof(double));
  for (int a = 2; Th && a >= 0; a--) {
    const double* Tha = Th + a * nm;
    double E[3] = {a == 0, a == 1, a == 2}, e[3] = {RC[a], RC[3 + a], RC[6 + a]}, u[6], ud[6], ed[3], xd[3], t1[3], t2[3];
    double th = 0, thd = 0, thdd = 0;
    for (int j = 0; j < nm; j++) th -= Tha[j] * y[j], thd -= Tha[j] * yd[j], thdd -= Tha[j] * ydd[j];
    cf_mbs_cross3(Zi + 3, e, ed);
    cf_mbs_cross3(Zi + 3, x, xd);
    for (int i = 0; i < 3; i++) xd[i] += Zi[i];
    cf_mbs_cross3(x, e, u);
    memcpy(u + 3, e, sizeof e);
    cf_mbs_cross3(xd, e, t1);
    cf_mbs_cross3(x, ed, t2);
    for (int i = 0; i < 3; i++) ud[i] = t1[i] + t2[i], ud[3 + i] = ed[i];
    for (int j = 0; j < nm; j++) {
      double* bj = s->b + 6 * s->mo_tw[e0 + j];
      for (int i = 0; i < 6; i++) bj[i] -= Tha[j] * u[i];
    }
    for (int i = 0; i < 6; i++) {
      Zi[i] += u[i] * thd;
      Di[i] += ud[i] * thd;
      if (want_acc) Ai[i] += u[i] * thdd + ud[i] * thd;
    }
    double Rk[9];
    rot_axis(E, th, Rk);
    mat3_mul(RC, Rk, RC);
  }
  double dx[3] = {0, 0, 0};
  for (int j = 0; j < nm; j++) {
    double pj[3] = {Ph[j], Ph[nm + j], Ph[2 * nm + j]}, v[3], vd[3], *bj = s->b + 6 * s->mo_tw[e0 + j];
    mat3_vec(RC, pj, v);
    for (int i = 0; i < 3; i++) v[i] = -v[i], bj[i] += v[i], dx[i] += v[i] * y[j];
    cf_mbs_cross3(Zi + 3, v, vd);
    for (int i = 0; i < 3; i++) {
      Zi[i] += v[i] * yd[j]; /* the angular velocity (Zi + 3) is the child's already: no translation changes it */
      Di[i] += vd[i] * yd[j];
      if (want_acc) Ai[i] += v[i] * ydd[j] + vd[i] * yd[j];
    }
  }
  for (int i = 0; i < 3; i++) x[i] += dx[i];
}

/* ---- forward recursion: poses, velocities Z, D (and accelerations Zd with z_ddot when want_acc) ---- */
static void forward(const cfMbsModel* m, cfMbsSr* s, int want_acc) {
  const cfMbsTopology* t = s->topo;
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z6[6] = {0, 0, 0, 0, 0, 0};
  for (int oi = 0; oi < s->ntb; oi++) {
    int c = t->order[oi], p = t->parent[c];
    const double* RP = p >= 0 ? s->R + 9 * p : I3;
    const double* rP = p >= 0 ? s->r + 3 * p : z6;
    const double* ZP = p >= 0 ? s->Z + 6 * p : z6;
    const double* DP = p >= 0 ? s->D + 6 * p : z6;
    const double* AP = p >= 0 ? s->Zd + 6 * p : z6;
    double RI[9], x[3], Zi[6], Di[6], Ai[6];
    memcpy(RI, RP, sizeof RI);
    mat3_vec(RP, s->pp + 3 * c, x);
    for (int i = 0; i < 3; i++) x[i] += rP[i];
    memcpy(Zi, ZP, sizeof Zi), memcpy(Di, DP, sizeof Di), memcpy(Ai, AP, sizeof Ai);
    if (s->xmb[c] >= 0) modal_point_motions(s, c, RI, x, Zi, Di, Ai, want_acc);
    for (int k = 0; k < s->nprim[c]; k++) {
      const SrPrim* pr = s->prim + 6 * c + k;
      int iz = t->z0[c] + k;
      double e[3], *bk = s->b + 6 * iz, *bdk = s->bd + 6 * iz;
      mat3_vec(RI, pr->e, e);
      const double* wI = Zi + 3;
      double ed[3], xd[3];
      cf_mbs_cross3(wI, e, ed);
      cf_mbs_cross3(wI, x, xd);
      for (int i = 0; i < 3; i++) xd[i] += Zi[i];
      if (pr->rot) {
        cf_mbs_cross3(x, e, bk);
        memcpy(bk + 3, e, sizeof e);
        double t1[3], t2[3];
        cf_mbs_cross3(xd, e, t1);
        cf_mbs_cross3(x, ed, t2);
        for (int i = 0; i < 3; i++) bdk[i] = t1[i] + t2[i], bdk[3 + i] = ed[i];
      } else {
        memcpy(bk, e, sizeof e);
        bk[3] = bk[4] = bk[5] = 0;
        memcpy(bdk, ed, sizeof ed);
        bdk[3] = bdk[4] = bdk[5] = 0;
      }
      for (int i = 0; i < 6; i++) {
        Zi[i] += bk[i] * s->zd[iz];
        Di[i] += bdk[i] * s->zd[iz];
        if (want_acc) Ai[i] += bk[i] * s->zdd[iz] + bdk[i] * s->zd[iz];
      }
      if (pr->rot) {
        double Rk[9];
        rot_axis(pr->e, s->z[iz], Rk);
        mat3_mul(RI, Rk, RI);
      } else
        for (int i = 0; i < 3; i++) x[i] += e[i] * s->z[iz];
    }
    double* RC = s->R + 9 * c;
    mat3_mul(RI, s->R0 + 9 * c, RC);
    if (s->cmb[c] >= 0) child_point_motions(s, c, RC, x, Zi, Di, Ai, want_acc);
    double o[3];
    mat3_vec(RC, s->pc + 3 * c, o);
    for (int i = 0; i < 3; i++) s->r[3 * c + i] = x[i] - o[i];
    memcpy(s->Z + 6 * c, Zi, sizeof Zi), memcpy(s->D + 6 * c, Di, sizeof Di);
    if (want_acc) memcpy(s->Zd + 6 * c, Ai, sizeof Ai);
  }
}

/* natural coordinates of the tree's state into q, qd and (with acc) qdd: r_dot = s_dot + w × r,
 * u_dot = w × u; r_ddot = s_ddot + w_dot × r + w × r_dot, u_ddot = w_dot × u + w × u_dot. acc: the
 * accelerations per body (s->Zd, or s->D for z_ddot = 0) */
static void to_natural(const cfMbsModel* m, const cfMbsSr* s, double* q, double* qd, double* qdd, const double* acc) {
  for (int i = 0; i < s->nmb; i++) /* the amplitudes; their accelerations with the bodies' (acc = Zd), else 0 */
    for (int k = 0; k < s->mb_nm[i]; k++) {
      q[s->mb_qy[i] + k] = s->z[s->mb_z0[i] + k], qd[s->mb_qy[i] + k] = s->zd[s->mb_z0[i] + k];
      if (qdd) qdd[s->mb_qy[i] + k] = acc == s->Zd ? s->zdd[s->mb_z0[i] + k] : 0;
    }
  for (int b = 0; b < s->nb; b++) {
    if (s->is_blk[b]) continue;
    double *qb = q + m->body_qadr[b], *vb = qd + m->body_qadr[b];
    const double *R = s->R + 9 * b, *r = s->r + 3 * b, *Z = s->Z + 6 * b;
    double vecs[4][3];
    memcpy(vecs[0], r, sizeof vecs[0]);
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 3; i++) vecs[k + 1][i] = R[3 * i + k];
    for (int k = 0; k < 4; k++) {
      double v[3];
      cf_mbs_cross3(Z + 3, vecs[k], v);
      if (k == 0)
        for (int i = 0; i < 3; i++) v[i] += Z[i];
      for (int i = 0; i < 3; i++) qb[3 * k + i] = vecs[k][i], vb[3 * k + i] = v[i];
      if (qdd) {
        const double* A = acc + 6 * b;
        double a1[3], a2[3];
        cf_mbs_cross3(A + 3, vecs[k], a1);
        cf_mbs_cross3(Z + 3, v, a2);
        for (int i = 0; i < 3; i++) qdd[m->body_qadr[b] + 3 * k + i] = a1[i] + a2[i] + (k == 0 ? A[i] : 0);
      }
    }
  }
}

/* Mbar of every body at the current poses */
static void body_mass(const cfMbsModel* m, cfMbsSr* s) {
  for (int b = 0; b < s->nb; b++) {
    double* M = s->Mb + 36 * b;
    memset(M, 0, 36 * sizeof(double));
    if (s->is_blk[b] || s->body_mb[b] >= 0) continue; /* modal frames: modal_terms */
    double mass = m->body_mass[b];
    if (mass == 0) continue; /* a virtual body */
    const double *R = s->R + 9 * b, *in = m->body_inertia + 6 * b;
    double g[3], Ic[9] = {in[0], in[3], in[4], in[3], in[1], in[5], in[4], in[5], in[2]}, IG[9], T[9], Rt[9];
    mat3_vec(R, m->body_com + 3 * b, g);
    for (int i = 0; i < 3; i++) g[i] += s->r[3 * b + i];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
    mat3_mul(R, Ic, T);
    mat3_mul(T, Rt, IG);
    double gg = cf_mbs_dot3(g, g);
    for (int i = 0; i < 3; i++) {
      M[6 * i + i] = mass;
      for (int j = 0; j < 3; j++) /* I_G - m g~ g~ = I_G + m (|g|^2 I - g g^T) */
        M[6 * (3 + i) + 3 + j] = IG[3 * i + j] + mass * ((i == j) * gg - g[i] * g[j]);
    }
    /* -m g~ (upper right) and m g~ (lower left); g~ x = g × x */
    double gt[9] = {0, -g[2], g[1], g[2], 0, -g[0], -g[1], g[0], 0};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) M[6 * i + 3 + j] = -mass * gt[3 * i + j], M[6 * (3 + i) + j] = mass * gt[3 * i + j];
  }
}

/* Qbar - Mbar D of every body: applied forces from d->Q (natural), velocity terms */
static void body_forces(const cfMbsModel* m, cfMbsSr* s, const cfMbsData* d) {
  for (int b = 0; b < s->nb; b++) {
    double* P = s->Pb + 6 * b;
    if (s->is_blk[b]) {
      memset(P, 0, 6 * sizeof(double));
      continue;
    }
    if (s->body_mb[b] >= 0) continue; /* modal frames: modal_terms */
    const double* Qb = d->Q + m->body_qadr[b];
    const double *R = s->R + 9 * b, *r = s->r + 3 * b, *Z = s->Z + 6 * b, *w = Z + 3;
    memcpy(P, Qb, 3 * sizeof(double));
    cf_mbs_cross3(r, Qb, P + 3);
    for (int k = 0; k < 3; k++) {
      double e[3] = {R[k], R[3 + k], R[6 + k]}, t[3];
      cf_mbs_cross3(e, Qb + 3 + 3 * k, t);
      for (int i = 0; i < 3; i++) P[3 + i] += t[i];
    }
    double mass = m->body_mass[b];
    if (mass == 0) continue;
    /* velocity terms: from Mbar's blocks, m g = the lower-left block's axial vector, I_G w via Mbar */
    const double* M = s->Mb + 36 * b;
    double g[3] = {M[6 * 5 + 1] / mass, M[6 * 3 + 2] / mass, M[6 * 4 + 0] / mass}; /* m g~ (3..5, 0..2) */
    double vG[3], wg[3], wv[3], t1[3], t2[3], IGw[3];
    cf_mbs_cross3(w, g, wg);
    for (int i = 0; i < 3; i++) vG[i] = Z[i] + wg[i];
    cf_mbs_cross3(w, vG, wv);
    /* I_G w = (I_O - m (|g|^2 - g g^T)) w, I_O the lower-right block */
    double gw = cf_mbs_dot3(g, w), gg = cf_mbs_dot3(g, g);
    for (int i = 0; i < 3; i++)
      IGw[i] = M[6 * (3 + i) + 3] * w[0] + M[6 * (3 + i) + 4] * w[1] + M[6 * (3 + i) + 5] * w[2] - mass * (gg * w[i] - g[i] * gw);
    cf_mbs_cross3(w, IGw, t1);
    cf_mbs_cross3(g, wv, t2);
    for (int i = 0; i < 3; i++) P[i] -= mass * wv[i], P[3 + i] -= t1[i] + mass * t2[i];
    double MD[6];
    mat6_vec(M, s->D + 6 * b, MD);
    for (int i = 0; i < 6; i++) P[i] -= MD[i];
  }
}

/* the term v = b_k . M b_l of two motions (k, b_k), (l, b_l) into M_z[k, l] and M_z[l, k]; one coordinate can be two
 * motions on a path (a modal body's amplitude moves its own joint, cmb, and a child's jointed at its point, xmb):
 * their cross term then counts twice on the diagonal (same: the one motion with itself, once) */
static inline void mz_add(cfMbsSr* s, int k, int l, double v, int same) {
  if (k == l) s->Mz[(size_t)k * s->nz + k] += same ? v : 2 * v;
  else s->Mz[(size_t)k * s->nz + l] += v, s->Mz[(size_t)l * s->nz + k] += v;
}

/* Leaves to root (eqs. 30-33): Mh, Ph; then M_z (lower and upper) and Q_z. eps adds eps I6 to every
 * body's Mbar (the metric of the initial least-squares velocities) */
static void backward(cfMbsSr* s, double eps, int want_Q) {
  const cfMbsTopology* t = s->topo;
  int nz = s->nz;
  memcpy(s->Mh, s->Mb, sizeof(double) * 36 * (size_t)s->nb);
  if (want_Q) memcpy(s->Ph, s->Pb, sizeof(double) * 6 * (size_t)s->nb);
  for (int b = 0; b < s->nb; b++)
    for (int i = 0; i < 6; i++) s->Mh[36 * b + 7 * i] += eps;
  for (int oi = s->ntb - 1; oi >= 0; oi--) {
    int c = t->order[oi], p = t->parent[c];
    if (p < 0) continue;
    for (int i = 0; i < 36; i++) s->Mh[36 * p + i] += s->Mh[36 * c + i];
    if (want_Q)
      for (int i = 0; i < 6; i++) s->Ph[6 * p + i] += s->Ph[6 * c + i];
  }
  /* M_z[k, l] = sum over the motions (k, b_k), (l, b_l) on one path, (k, b_k) at or above (l, b_l) of body c,
   * of b_k . Mhat_c b_l (a modal parent's amplitude is a motion of each child jointed at its points, so a
   * pair can gather several terms: accumulated); Q_z[l] = sum of b_l . Phat_c */
  memset(s->Mz, 0, sizeof(double) * (size_t)nz * nz);
  if (want_Q) memset(s->Qz, 0, sizeof(double) * (size_t)nz);
  for (int c = 0; c < s->nb; c++)
    for (int el = s->mo0[c]; el < s->mo0[c] + s->mon[c]; el++) {
      int l = s->mo_k[el];
      const double* bl = s->b + 6 * s->mo_tw[el];
      double w[6];
      mat6_vec(s->Mh + 36 * c, bl, w);
      /* the joint's own motions up to this one, then every motion above it */
      for (int ek = s->mo0[c]; ek <= el; ek++) mz_add(s, s->mo_k[ek], l, dot6(s->b + 6 * s->mo_tw[ek], w), ek == el);
      for (int a = t->parent[c]; a >= 0; a = t->parent[a])
        for (int ek = s->mo0[a]; ek < s->mo0[a] + s->mon[a]; ek++) mz_add(s, s->mo_k[ek], l, dot6(s->b + 6 * s->mo_tw[ek], w), 0);
      if (want_Q) s->Qz[l] += dot6(bl, s->Ph + 6 * c);
    }
  /* modal amplitudes of body b: M_z[k, y] += b_k . C_b[:, y] for k on b's path, M_z[y, y'] += Myy, Q_z[y] += Py */
  for (int i = 0; i < s->nmb; i++) {
    int b = s->mb_body[i], nm = s->mb_nm[i], y0 = s->mb_z0[i];
    const double *C = s->Cm + 6 * s->mb_off[i], *My = s->Myy + s->mb_sq[i];
    for (int j = 0; j < nm; j++) {
      double cj[6];
      for (int r = 0; r < 6; r++) cj[r] = C[r * nm + j];
      for (int a = b; a >= 0; a = t->parent[a])
        for (int ek = s->mo0[a]; ek < s->mo0[a] + s->mon[a]; ek++) /* Z^T C y_dot: a cross term (twice on the
                                                                      diagonal when y_j moves the body's own joint) */
          mz_add(s, s->mo_k[ek], y0 + j, dot6(s->b + 6 * s->mo_tw[ek], cj), 0);
      for (int l = 0; l < nm; l++) s->Mz[(y0 + j) * nz + y0 + l] += My[j * nm + l] + (j == l ? eps : 0);
      if (want_Q) s->Qz[y0 + j] += s->Py[s->mb_off[i] + j];
    }
  }
}

/* The modal bodies' Mbar, C, Myy (cfMbsSr) and, with want_Q, their Pb = Qbar - Mbar D and Py = Q_y - M_yf a0
 * - C^T D, from the model's natural-coordinate mass at d->q (written by to_natural) applied to T's columns,
 * to the amplitudes' unit vectors and to a0, the bodies' columns batched in one vector (the mass couples no
 * two bodies); d->Q: the natural forces (cf_mbs__eval_forces). With want_tangent, Kyy from the kinds'
 * apply_tangent (the modes' damping and stiffness; its coupling to the frame, if any, left out of the
 * Newton tangent as eq. 37 allows). */
static void modal_terms(const cfMbsModel* m, cfMbsSr* s, const cfMbsData* d, int want_Q, int want_tangent) {
  if (!s->nmb) return;
  int nq = m->nq, maxnm = 0;
  for (int i = 0; i < s->nmb; i++) maxnm = s->mb_nm[i] > maxnm ? s->mb_nm[i] : maxnm;
  double* x = s->xv, *y = s->yv;
  /* T's columns: Z = e_j */
  for (int j = 0; j < 6; j++) {
    memset(x, 0, sizeof(double) * (size_t)nq);
    for (int i = 0; i < s->nmb; i++) {
      const double* qb = d->q + m->body_qadr[s->mb_body[i]];
      double* xb = x + m->body_qadr[s->mb_body[i]];
      double Z[6] = {0, 0, 0, 0, 0, 0};
      Z[j] = 1;
      for (int k = 0; k < 4; k++) {
        cf_mbs_cross3(Z + 3, qb + 3 * k, xb + 3 * k);
        if (k == 0)
          for (int c = 0; c < 3; c++) xb[c] += Z[c];
      }
    }
    cf_mbs__apply_M(m, d, x, y);
    for (int i = 0; i < s->nmb; i++) {
      int b = s->mb_body[i], nm = s->mb_nm[i];
      double w[6];
      row_wrench(s, b, y + m->body_qadr[b], w);
      for (int r = 0; r < 6; r++) s->Mb[36 * b + 6 * r + j] = w[r];
      for (int k = 0; k < nm; k++) s->Cm[6 * s->mb_off[i] + j * nm + k] = y[s->mb_qy[i] + k];
    }
  }
  /* the amplitudes' unit vectors: Myy (C from above: symmetric) */
  for (int j = 0; j < maxnm; j++) {
    memset(x, 0, sizeof(double) * (size_t)nq);
    for (int i = 0; i < s->nmb; i++)
      if (j < s->mb_nm[i]) x[s->mb_qy[i] + j] = 1;
    cf_mbs__apply_M(m, d, x, y);
    for (int i = 0; i < s->nmb; i++)
      for (int k = 0; j < s->mb_nm[i] && k < s->mb_nm[i]; k++) s->Myy[s->mb_sq[i] + k * s->mb_nm[i] + j] = y[s->mb_qy[i] + k];
    if (want_tangent) {
      memset(y, 0, sizeof(double) * (size_t)nq);
      double h = m->opt.dt;
      for (int k = 0; k < cf_mbs__nbody_kinds; k++)
        if (cf_mbs__body_kinds[k]->apply_tangent) cf_mbs__body_kinds[k]->apply_tangent(m, d, h / 2, h * h / 4, x, y);
      for (int i = 0; i < s->nmb; i++)
        for (int k = 0; j < s->mb_nm[i] && k < s->mb_nm[i]; k++) s->Kyy[s->mb_sq[i] + k * s->mb_nm[i] + j] = y[s->mb_qy[i] + k];
    }
  }
  if (!want_Q) return;
  /* a0 = T_dot Z: the natural accelerations at Z_dot = 0, y_ddot = 0 */
  memset(x, 0, sizeof(double) * (size_t)nq);
  for (int i = 0; i < s->nmb; i++) {
    int b = s->mb_body[i];
    const double *vb = d->qd + m->body_qadr[b], *w = s->Z + 6 * b + 3;
    for (int k = 0; k < 4; k++) cf_mbs_cross3(w, vb + 3 * k, x + m->body_qadr[b] + 3 * k);
  }
  cf_mbs__apply_M(m, d, x, y);
  for (int i = 0; i < s->nmb; i++) {
    int b = s->mb_body[i], nm = s->mb_nm[i];
    double g[12], w[6], MD[6];
    const double* Qb = d->Q + m->body_qadr[b];
    for (int k = 0; k < 12; k++) g[k] = Qb[k] - y[m->body_qadr[b] + k];
    row_wrench(s, b, g, w);
    mat6_vec(s->Mb + 36 * b, s->D + 6 * b, MD);
    for (int r = 0; r < 6; r++) s->Pb[6 * b + r] = w[r] - MD[r];
    const double* C = s->Cm + 6 * s->mb_off[i];
    for (int k = 0; k < nm; k++) {
      double v = d->Q[s->mb_qy[i] + k] - y[s->mb_qy[i] + k];
      for (int r = 0; r < 6; r++) v -= C[r * nm + k] * s->D[6 * b + r];
      s->Py[s->mb_off[i] + k] = v;
    }
  }
}

/* Closure rows at the current natural state in d (d->q, d->qd): phi, J = Phi_z, and on request Phi_t
 * and the bias (global bias + Phi_q qdd(z_ddot = 0)); d->qdd is used as scratch for the latter */
static void closure(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, double t, int want_t, int want_bias) {
  int nz = s->nz;
  if (want_bias) to_natural(m, s, d->q, d->qd, d->qdd, s->D);
  cf_mbs__eval_rows(m, d, d->q, d->qd, t, s->rows, s->nrow, 1, want_t ? d->rhs_c : NULL, want_bias ? d->econ : NULL);
  const cfMbsTopology* tp = s->topo;
  for (int k = 0; k < s->nrow; k++) {
    int i = s->rows[k];
    const cfMbsCon* c = &m->con[i];
    const double* row = d->jac + (size_t)i * m->jac_stride;
    double* Jk = s->J + (size_t)k * nz;
    memset(Jk, 0, sizeof(double) * (size_t)nz);
    s->phi[k] = d->phi[i];
    if (want_t) s->phit[k] = d->rhs_c[i];
    double bias = want_bias ? d->econ[i] : 0;
    for (int sl = 0; sl < c->nb; sl++) {
      int b = c->body[sl];
      const double* g = row + 12 * sl;
      if (s->is_blk[b]) { /* an amplitude block (a joint at a modal point): its gradient is the amplitudes' columns */
        int ib = s->blk_mb[b], off = s->blk_off[b];
        for (int x = 0; x < 12 && off + x < s->mb_nm[ib]; x++) Jk[s->mb_z0[ib] + off + x] += g[x];
        continue; /* their accelerations at z_ddot = 0 are 0: no bias */
      }
      const double *R = s->R + 9 * b, *r = s->r + 3 * b;
      double w[6];
      memcpy(w, g, 3 * sizeof(double));
      cf_mbs_cross3(r, g, w + 3);
      for (int a = 0; a < 3; a++) {
        double e[3] = {R[a], R[3 + a], R[6 + a]}, tt[3];
        cf_mbs_cross3(e, g + 3 + 3 * a, tt);
        for (int x = 0; x < 3; x++) w[3 + x] += tt[x];
      }
      if (want_bias) {
        const double* qddb = d->qdd + m->body_qadr[b];
        for (int x = 0; x < 12; x++) bias += g[x] * qddb[x];
      }
      for (int a = b; a >= 0; a = tp->parent[a])
        for (int e = s->mo0[a]; e < s->mo0[a] + s->mon[a]; e++) Jk[s->mo_k[e]] += dot6(w, s->b + 6 * s->mo_tw[e]);
    }
    if (want_bias) s->bias[k] = bias;
  }
}

/* kinematics at (z, zd) and the natural coordinates (velocities too) written into d */
static void kinematics(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d) {
  forward(m, s, 0);
  to_natural(m, s, d->q, d->qd, NULL, NULL);
}

/* the columns of every force element (see cfMbsSr.fcols); 0 or CF_ERR_NOMEM */
static int force_columns(const cfMbsModel* m, cfMbsSr* s) {
  const cfMbsTopology* t = s->topo;
  int total = 0;
  for (int e = 0; e < m->nforce; e++)
    for (int sl = 0; sl < 2; sl++)
      for (int a = m->force[e].body[sl]; a >= 0; a = t->parent[a]) total += s->mon[a];
  s->fcol0 = malloc(((size_t)m->nforce + 1) * sizeof(int));
  s->fcols = malloc(((size_t)total + 1) * sizeof(int));
  s->fpath = calloc(4 * ((size_t)total + 1), sizeof(int));
  if (!s->fcol0 || !s->fcols || !s->fpath) return CF_ERR_NOMEM;
  int n = 0;
  for (int e = 0; e < m->nforce; e++) {
    const cfMbsForce* f = &m->force[e];
    s->fcol0[e] = n;
    for (int sl = 0; sl < 2; sl++)
      for (int a = f->body[sl]; a >= 0; a = t->parent[a])
        for (int mo = s->mo0[a]; mo < s->mo0[a] + s->mon[a]; mo++) {
          int c = s->fcol0[e], k = s->mo_k[mo];
          while (c < n && s->fcols[c] != k) c++;
          if (c == n) s->fcols[n++] = k;
          s->fpath[4 * c + 2 * sl + (s->fpath[4 * c + 2 * sl] ? 1 : 0)] = 1 + s->mo_tw[mo];
        }
    if (f->type != CF_MBS_SPRING) s->need_fK = 1;
  }
  s->fcol0[m->nforce] = n;
  return CF_OK;
}

/* the twist by which force column c (fcols) moves slot sl (the sum of its motions on the slot's path); 0: none */
static int col_twist(const cfMbsSr* s, int c, int sl, double bk[6]) {
  const int* f = s->fpath + 4 * c + 2 * sl;
  if (!f[0]) return 0;
  for (int i = 0; i < 6; i++) bk[i] = s->b[6 * (f[0] - 1) + i] + (f[1] ? s->b[6 * (f[1] - 1) + i] : 0);
  return 1;
}

/* KC += point spring e's h/2 C_z + h^2/4 K_z straight in relative coordinates: with P = d(x2 - x1)/dz
 * [3 x nc] (column k: b_k,lin + b_k,ang × x2 on body 2's path, minus the same at x1 on body 1's) and the
 * force f = Fs e3 on end 2 (-f on end 1), Fs = -k (l - l0) - c l_dot + act,
 *   K_z = -P^T sym(df/d(x2 - x1)) P, df/d(x2 - x1) = -k e e^T - c e Pd^T + Fs (I - e e^T)/l,
 *   Pd = (I - e e^T)(v2 - v1)/l;  C_z = c (P^T e)(e^T P).
 * This is mbs_forces.c's 24 x 24 natural-coordinate tangent D^T G D seen through q_z (P = D q_z), without
 * forming it. */
static void spring_tangent(const cfMbsModel* m, cfMbsSr* s, int e, double t, double cK, double cC) {
  const cfMbsForce* f = &m->force[e];
  int c0 = s->fcol0[e], nc = s->fcol0[e + 1] - c0, nz = s->nz;
  double x[2][3], v[2][3];
  for (int sl = 0; sl < 2; sl++) {
    int b = f->body[sl];
    if (b < 0) {
      memcpy(x[sl], f->p[sl], sizeof x[sl]);
      memset(v[sl], 0, sizeof v[sl]);
      continue;
    }
    const double *Z = s->Z + 6 * b, *rb = s->r + 3 * b;
    double wx[3];
    mat3_vec(s->R + 9 * b, f->p[sl], x[sl]);
    for (int i = 0; i < 3; i++) x[sl][i] += rb[i];
    cf_mbs_cross3(Z + 3, x[sl], wx);
    for (int i = 0; i < 3; i++) v[sl][i] = Z[i] + wx[i];
  }
  double dx[3], dv[3], e3[3];
  for (int i = 0; i < 3; i++) dx[i] = x[1][i] - x[0][i], dv[i] = v[1][i] - v[0][i];
  double l = cf_mbs_norm3(dx);
  if (l < 1e-14) return; /* as mbs_forces.c: no force, no tangent */
  for (int i = 0; i < 3; i++) e3[i] = dx[i] / l;
  double ldot = cf_mbs_dot3(e3, dv), act = 0;
  if (f->has_actuator) {
    double y[3];
    cf_mbs_func_eval(&f->actuator, t, y);
    act = y[0];
  }
  double Fs = -f->k * (l - f->rest) - f->c * ldot + act, Pd[3], S[3][3];
  for (int i = 0; i < 3; i++) Pd[i] = (dv[i] - ldot * e3[i]) / l;
  /* S = -cK sym(df/ddx): the stiffness part of KC in the 3 x 3 space of x2 - x1 */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      S[i][j] = -cK * (-f->k * e3[i] * e3[j] - 0.5 * f->c * (e3[i] * Pd[j] + e3[j] * Pd[i]) +
                       Fs * ((i == j) - e3[i] * e3[j]) / l);
  double* P = s->G; /* [3 nc], then S P [3 nc], then e^T P [nc] */
  double *SP = P + 3 * nc, *eP = SP + 3 * nc;
  memset(P, 0, sizeof(double) * 3 * (size_t)nc);
  for (int sl = 0; sl < 2; sl++) {
    if (f->body[sl] < 0) continue;
    double sign = sl ? 1 : -1;
    for (int c = 0; c < nc; c++) {
      double bk[6];
      if (!col_twist(s, c0 + c, sl, bk)) continue;
      double wx[3];
      cf_mbs_cross3(bk + 3, x[sl], wx);
      for (int i = 0; i < 3; i++) P[i * nc + c] += sign * (bk[i] + wx[i]);
    }
  }
  for (int c = 0; c < nc; c++) {
    eP[c] = 0;
    for (int i = 0; i < 3; i++) {
      SP[i * nc + c] = S[i][0] * P[c] + S[i][1] * P[nc + c] + S[i][2] * P[2 * nc + c];
      eP[c] += e3[i] * P[i * nc + c];
    }
  }
  double cc = cC * f->c;
  for (int p = 0; p < nc; p++) {
    double* row = s->KC + (size_t)s->fcols[c0 + p] * nz;
    for (int q = 0; q < nc; q++)
      row[s->fcols[c0 + q]] += P[p] * SP[q] + P[nc + p] * SP[nc + q] + P[2 * nc + p] * SP[2 * nc + q] + cc * eP[p] * eP[q];
  }
}

/* KC = h/2 C_z + h^2/4 K_z, K_z = G^T sym(K_e) G over the force elements e, G = q_z of the element's
 * bodies (column k of body b's 12 rows: T_b b_k, r_dot = s_dot + w × r, u_dot = w × u, ...); point
 * springs by spring_tangent */
static void force_tangent(const cfMbsModel* m, cfMbsSr* s, const cfMbsData* d, double t) {
  int nz = s->nz;
  double h = m->opt.dt, cC = h / 2, cK = h * h / 4;
  memset(s->KC, 0, sizeof(double) * (size_t)nz * nz);
  for (int e = 0; e < m->nforce; e++) {
    const cfMbsForce* f = &m->force[e];
    const int* cols = s->fcols + s->fcol0[e];
    int nc = s->fcol0[e + 1] - s->fcol0[e];
    if (!nc) continue;
    if (f->type == CF_MBS_SPRING) {
      spring_tangent(m, s, e, t, cK, cC);
      continue;
    }
    const double *K = d->fK + 576 * (size_t)e, *C = d->fC + 576 * (size_t)e;
    memset(s->G, 0, sizeof(double) * 24 * (size_t)nc);
    for (int sl = 0; sl < 2; sl++) {
      int b = f->body[sl];
      if (b < 0) continue;
      const double *R = s->R + 9 * b, *r = s->r + 3 * b;
      for (int c = 0; c < nc; c++) {
        double bk[6];
        if (!col_twist(s, s->fcol0[e] + c, sl, bk)) continue;
        double v[3];
        cf_mbs_cross3(bk + 3, r, v);
        for (int i = 0; i < 3; i++) s->G[(12 * sl + i) * nc + c] = bk[i] + v[i];
        for (int a = 0; a < 3; a++) {
          double e3[3] = {R[a], R[3 + a], R[6 + a]};
          cf_mbs_cross3(bk + 3, e3, v);
          for (int i = 0; i < 3; i++) s->G[(12 * sl + 3 + 3 * a + i) * nc + c] = v[i];
        }
      }
    }
    /* SG = S G [24 x nc], S = sym(cK K + cC C); KC[cols, cols] += G^T SG */
    double* SG = s->SG;
    memset(SG, 0, sizeof(double) * 24 * (size_t)nc);
    for (int i = 0; i < 24; i++)
      for (int j = 0; j < 24; j++) {
        double sij = 0.5 * (cK * (K[24 * i + j] + K[24 * j + i]) + cC * (C[24 * i + j] + C[24 * j + i]));
        if (sij == 0) continue;
        for (int c = 0; c < nc; c++) SG[i * nc + c] += sij * s->G[j * nc + c];
      }
    for (int p = 0; p < nc; p++)
      for (int q = 0; q < nc; q++) {
        double v = 0;
        for (int i = 0; i < 24; i++) v += s->G[i * nc + p] * SG[i * nc + q];
        s->KC[cols[p] * nz + cols[q]] += v;
      }
  }
}

/* M_z and Q_z at the current kinematics (d->q, d->qd written); with want_tangent also KC */
static void dynamics(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, double t, int want_tangent) {
  /* the natural-coordinate tangents only for the elements spring_tangent does not take */
  cf_mbs__eval_forces(m, d, d->q, d->qd, t, want_tangent && m->nforce > 0 && s->need_fK);
  body_mass(m, s);
  body_forces(m, s, d);
  modal_terms(m, s, d, 1, want_tangent);
  backward(s, 0, 1);
  if (want_tangent && m->nforce > 0) force_tangent(m, s, d, t);
  else memset(s->KC, 0, sizeof(double) * (size_t)s->nz * s->nz);
  for (int i = 0; want_tangent && i < s->nmb; i++) /* the modes' damping and stiffness */
    for (int j = 0; j < s->mb_nm[i]; j++)
      for (int k = 0; k < s->mb_nm[i]; k++)
        s->KC[(size_t)(s->mb_z0[i] + j) * s->nz + s->mb_z0[i] + k] += s->Kyy[s->mb_sq[i] + j * s->mb_nm[i] + k];
}

/* post-order of body b's subtree into post[*n] */
static void post_order(const cfMbsTopology* t, int nb, int b, int* post, int* n) {
  for (int c = 0; c < nb; c++)
    if (t->parent[c] == b && c != b) post_order(t, nb, c, post, n);
  if (b >= 0) post[(*n)++] = b;
}

/* column kk into closure row k's list (jcols), once */
static void add_col(cfMbsSr* s, int k, int kk, int* njc) {
  for (int q = s->jcol0[k]; q < *njc; q++)
    if (s->jcols[q] == kk) return;
  s->jcols[(*njc)++] = kk;
}

/* perm, env, jcol0/jcols (cfMbsSr) from the tree, the force elements and the closure rows; after
 * force_columns and the rows */
static int leading_profile(const cfMbsModel* m, cfMbsSr* s) {
  const cfMbsTopology* t = s->topo;
  int nz = s->nz, nb = s->nb;
  int* post = malloc(((size_t)nb + 1) * sizeof(int));
  int* inv = malloc(((size_t)nz + 1) * sizeof(int));
  unsigned char* pat = calloc((size_t)nz * nz + 1, 1); /* structural nonzeros, original numbering */
  s->perm = malloc(((size_t)nz + 1) * sizeof(int)), s->env = malloc(((size_t)nz + 1) * sizeof(int));
  s->iperm = malloc(((size_t)nz + 1) * sizeof(int)), s->ysol = malloc(((size_t)nz + 1) * sizeof(double));
  s->jcol0 = malloc(((size_t)s->nrow + 1) * sizeof(int));
  int njc = 0;
  for (int k = 0; k < s->nrow; k++) {
    const cfMbsCon* c = &m->con[s->rows[k]];
    for (int sl = 0; sl < c->nb; sl++) {
      if (s->is_blk[c->body[sl]]) njc += 12;
      else
        for (int a = c->body[sl]; a >= 0; a = t->parent[a]) njc += s->mon[a];
    }
  }
  s->jcols = malloc(((size_t)njc + 1) * sizeof(int));
  if (!post || !inv || !pat || !s->perm || !s->iperm || !s->ysol || !s->env || !s->jcol0 || !s->jcols) {
    free(post), free(inv), free(pat);
    return CF_ERR_NOMEM;
  }
  int n = 0;
  post_order(t, nb, CF_MBS_GROUND, post, &n); /* floating bodies' parent is the ground too */
  int np = 0;
  for (int i = 0; i < n; i++) {
    int b = post[i], ib = s->is_blk[b] ? -1 : s->body_mb[b];
    if (s->is_blk[b]) continue;
    for (int k = 0; ib >= 0 && k < s->mb_nm[ib]; k++) s->perm[np++] = s->mb_z0[ib] + k; /* amplitudes first */
    for (int k = 0; k < t->nz_body[b]; k++) s->perm[np++] = t->z0[b] + k;
  }
  for (int i = 0; i < np; i++) inv[s->perm[i]] = i;
  memcpy(s->iperm, inv, sizeof(int) * (size_t)nz);
  /* M_z: a coordinate with every coordinate on its path to the root; a body's amplitudes with each other */
  for (int c = 0; c < nb; c++)
    for (int el = s->mo0[c]; el < s->mo0[c] + s->mon[c]; el++)
      for (int a = c; a >= 0; a = t->parent[a])
        for (int ek = s->mo0[a]; ek < s->mo0[a] + s->mon[a]; ek++) {
          int l = s->mo_k[el], k = s->mo_k[ek];
          pat[(size_t)l * nz + k] = pat[(size_t)k * nz + l] = 1;
        }
  for (int i = 0; i < s->nmb; i++) /* the amplitudes with their body's path */
    for (int j = 0; j < s->mb_nm[i]; j++)
      for (int a = s->mb_body[i]; a >= 0; a = t->parent[a])
        for (int ek = s->mo0[a]; ek < s->mo0[a] + s->mon[a]; ek++) {
          int l = s->mb_z0[i] + j, k = s->mo_k[ek];
          pat[(size_t)l * nz + k] = pat[(size_t)k * nz + l] = 1;
        }
  for (int i = 0; i < s->nmb; i++)
    for (int j = 0; j < s->mb_nm[i]; j++)
      for (int k = 0; k < s->mb_nm[i]; k++) pat[(size_t)(s->mb_z0[i] + j) * nz + s->mb_z0[i] + k] = 1;
  /* KC: the pairs of a force element's columns */
  for (int e = 0; e < m->nforce; e++)
    for (int p = s->fcol0[e]; p < s->fcol0[e + 1]; p++)
      for (int q = s->fcol0[e]; q < s->fcol0[e + 1]; q++) pat[(size_t)s->fcols[p] * nz + s->fcols[q]] = 1;
  /* J^T J: the pairs of a closure row's columns */
  njc = 0;
  for (int k = 0; k < s->nrow; k++) {
    const cfMbsCon* c = &m->con[s->rows[k]];
    s->jcol0[k] = njc;
    for (int sl = 0; sl < c->nb; sl++) {
      int b = c->body[sl];
      for (int a = s->is_blk[b] ? -1 : b; a >= 0; a = t->parent[a])
        for (int mo = s->mo0[a]; mo < s->mo0[a] + s->mon[a]; mo++) add_col(s, k, s->mo_k[mo], &njc);
      for (int x = 0; s->is_blk[b] && x < 12 && s->blk_off[b] + x < s->mb_nm[s->blk_mb[b]]; x++)
        add_col(s, k, s->mb_z0[s->blk_mb[b]] + s->blk_off[b] + x, &njc);
    }
    for (int p = s->jcol0[k]; p < njc; p++)
      for (int q = s->jcol0[k]; q < njc; q++) pat[(size_t)s->jcols[p] * nz + s->jcols[q]] = 1;
  }
  s->jcol0[s->nrow] = njc;
  for (int i = 0; i < nz; i++) {
    s->env[i] = i;
    for (int j = 0; j < i; j++)
      if (pat[(size_t)s->perm[i] * nz + s->perm[j]]) {
        s->env[i] = j;
        break;
      }
  }
  free(post), free(inv), free(pat);
  return np == nz ? CF_OK : cf_error(CF_ERR_UNSUPPORTED, "semi-recursive: the tree's post-order has %d of %d coordinates", np, nz);
}

/* A = P (M_z + KC + a J^T J) P^T in the profile of env (row-major, lower triangle), factored in place:
 * L_ij = (A_ij - sum_{k = max(env_i, env_j)}^{j-1} L_ik L_jk) / L_jj, L_ii = sqrt(A_ii - sum_k L_ik^2)
 * (no fill outside the profile: Cholesky keeps a skyline) */
static int factor_leading(cfMbsSr* s, double a) {
  int nz = s->nz;
  const int *perm = s->perm, *env = s->env;
  double* A = s->A;
  for (int i = 0; i < nz; i++) {
    const double *Mi = s->Mz + (size_t)perm[i] * nz, *Ki = s->KC + (size_t)perm[i] * nz;
    for (int j = env[i]; j <= i; j++) A[i * nz + j] = Mi[perm[j]] + Ki[perm[j]];
  }
  /* a J^T J on each row's own columns (inside the profile by construction) */
  for (int k = 0; k < s->nrow; k++) {
    const double* Jk = s->J + (size_t)k * nz;
    for (int p = s->jcol0[k]; p < s->jcol0[k + 1]; p++) {
      int ci = s->jcols[p];
      double aji = a * Jk[ci];
      if (aji == 0) continue;
      for (int q = s->jcol0[k]; q < s->jcol0[k + 1]; q++) {
        int cj = s->jcols[q];
        int pi = s->iperm[ci], pj = s->iperm[cj];
        if (pj <= pi) A[pi * nz + pj] += aji * Jk[cj];
      }
    }
  }
  for (int i = 0; i < nz; i++) {
    double* Li = A + (size_t)i * nz;
    for (int j = env[i]; j <= i; j++) {
      const double* Lj = A + (size_t)j * nz;
      double v = Li[j];
      for (int k = env[i] > env[j] ? env[i] : env[j]; k < j; k++) v -= Li[k] * Lj[k];
      if (j < i) Li[j] = v / Lj[j];
      else if (!(v > 0))
        return cf_error(CF_ERR_SOLVER, "semi-recursive: the leading matrix is not positive definite at relative "
                        "coordinate %d (a motion with neither mass nor a closure equation)", perm[i]);
      else Li[i] = sqrt(v);
    }
  }
  return CF_OK;
}

/* x = A^-1 b with the profile factor (b and x in the original numbering; b may alias x) */
static void lead_solve(const cfMbsSr* s, const double* b, double* x) {
  int nz = s->nz;
  const int *perm = s->perm, *env = s->env;
  double* y = s->ysol;
  const double* L = s->A;
  for (int i = 0; i < nz; i++) {
    const double* Li = L + (size_t)i * nz;
    double v = b[perm[i]];
    for (int k = env[i]; k < i; k++) v -= Li[k] * y[k];
    y[i] = v / Li[i];
  }
  for (int i = nz - 1; i >= 0; i--) { /* L^T y' = y, row i of L scattered upwards once y'_i is known */
    const double* Li = L + (size_t)i * nz;
    double v = y[i] / Li[i];
    y[i] = v;
    for (int k = env[i]; k < i; k++) y[k] -= Li[k] * v;
  }
  for (int i = 0; i < nz; i++) x[perm[i]] = y[i];
}

/* min 1/2 (x - .)' W (x - .) - r'x subject to J x = c by augmented Lagrangian on the factor of
 * W + a J'J: A x = r + J^T (a c - sig), sig += a (J x - c); returns the iterations, < 0 not converged */
static int alm(cfMbsSr* s, double a, const double* r, const double* c, double* x, double tol, int maxit) {
  int nz = s->nz, nr = s->nrow;
  memset(s->sig, 0, sizeof(double) * (size_t)nr);
  for (int it = 1; it <= maxit; it++) {
    memcpy(s->rhs, r, sizeof(double) * (size_t)nz);
    for (int k = 0; k < nr; k++) {
      double e = a * c[k] - s->sig[k];
      const double* Jk = s->J + (size_t)k * nz;
      for (int i = 0; i < nz; i++) s->rhs[i] += Jk[i] * e;
    }
    lead_solve(s, s->rhs, x);
    double res = 0, cmax = 0;
    for (int k = 0; k < nr; k++) {
      const double* Jk = s->J + (size_t)k * nz;
      double jx = 0;
      for (int i = 0; i < nz; i++) jx += Jk[i] * x[i];
      s->sig[k] += a * (jx - c[k]);
      res = fmax(res, fabs(jx - c[k])), cmax = fmax(cmax, fabs(c[k]));
    }
    if (res <= tol * (1 + cmax)) return it;
  }
  return -maxit;
}

/* velocity (which 0) or acceleration (1) projection at the current kinematics and factor: x* is s->zd
 * or s->zdd, replaced; W = M_z + KC (eq. 39: M + h/2 C + h^2/4 K) */
static int project(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, double t, int which, double a) {
  int nz = s->nz;
  double* xs = which ? s->zdd : s->zd;
  if (which) {
    forward(m, s, 0); /* D at the projected velocities */
    to_natural(m, s, d->q, d->qd, NULL, NULL);
  }
  closure(m, s, d, t, !which, which);
  double* c = which ? s->bias : s->phit;
  for (int k = 0; k < s->nrow; k++) c[k] = -c[k];
  for (int i = 0; i < nz; i++) {
    double v = 0;
    for (int j = 0; j < nz; j++) v += (s->Mz[i * nz + j] + s->KC[i * nz + j]) * xs[j];
    s->x[i] = v;
  }
  double* r = s->w6; /* [6 nb] >= nz */
  memcpy(r, s->x, sizeof(double) * (size_t)nz);
  int it = alm(s, a, r, c, xs, m->opt.tol_phi, m->opt.proj_iter > 0 ? 10 * m->opt.proj_iter : 30);
  if (it < 0) d->warning[which ? CF_MBS_WARN_ACC_PROJECTION : CF_MBS_WARN_VEL_PROJECTION]++;
  d->proj_iters[which] = it < 0 ? -it : it;
  double res = 0;
  for (int k = 0; k < s->nrow; k++) {
    const double* Jk = s->J + (size_t)k * nz;
    double jx = 0;
    for (int i = 0; i < nz; i++) jx += Jk[i] * xs[i];
    res = fmax(res, fabs(jx - c[k]));
  }
  if (which) d->phidd_max = res;
  else d->phid_max = res;
  return CF_OK;
}

/* everything written back to the global data: q, qd, qdd (natural), multipliers */
static void publish(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d) {
  forward(m, s, 1);
  to_natural(m, s, d->q, d->qd, d->qdd, s->Zd);
  for (int i = 0; i < m->ncon; i++) d->lambda[i] = d->reaction[i] = NAN;
  for (int k = 0; k < s->nrow; k++) d->lambda[s->rows[k]] = s->lam[k], d->reaction[s->rows[k]] = s->lam[k] + s->sig[k];
  memcpy(d->acc, d->qdd, sizeof(double) * (size_t)m->nq);
}

/* the joint's motions (see the top of the file) and its geometry, from the assembled state q */
static void setup_joint(const cfMbsModel* m, cfMbsSr* s, const double* q, int c) {
  const cfMbsTopology* t = s->topo;
  int j = t->parent_joint[c], p = t->parent[c];
  double rP[3] = {0, 0, 0}, RP[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, rC[3], RC[9], xm[3] = {0, 0, 0};
  int at_modal = 0;
  if (p >= 0) pose_of(m, q, p, rP, RP);
  pose_of(m, q, c, rC, RC);
  if (s->xmb[c] >= 0) { /* at a modal parent's point: R_P is the frame that point's deformation turns, xm its
                           modal displacement, both at the assembled amplitudes (as the forward recursion) */
    int ip = s->xmb[c], nm = s->mb_nm[ip], jj = t->parent_joint[c], frame, nmm, blk0, nblk;
    const double* y = q + s->mb_qy[ip];
    double sbar[3], Zz[6] = {0}, Dz[6], Az[6], zd_save[CF_MBS_MODAL_MAX_MODES], zdd_save[CF_MBS_MODAL_MAX_MODES], z_save[CF_MBS_MODAL_MAX_MODES];
    cf_mbs__modal_point(m, ip, m->joint_mpoint[2 * jj + (t->reversed[jj] ? 1 : 0)], sbar, &frame, &nmm, &blk0, &nblk);
    double x0[3];
    mat3_vec(RP, sbar, x0);
    for (int i = 0; i < 3; i++) x0[i] += rP[i], xm[i] = x0[i];
    for (int k = 0; k < nm; k++) { /* the recursion's own routine on the assembled amplitudes, rates 0 */
      z_save[k] = s->z[s->mb_z0[ip] + k], zd_save[k] = s->zd[s->mb_z0[ip] + k], zdd_save[k] = s->zdd[s->mb_z0[ip] + k];
      s->z[s->mb_z0[ip] + k] = y[k], s->zd[s->mb_z0[ip] + k] = s->zdd[s->mb_z0[ip] + k] = 0;
    }
    memset(Dz, 0, sizeof Dz), memset(Az, 0, sizeof Az);
    modal_point_motions(s, c, RP, xm, Zz, Dz, Az, 0);
    for (int k = 0; k < nm; k++)
      s->z[s->mb_z0[ip] + k] = z_save[k], s->zd[s->mb_z0[ip] + k] = zd_save[k], s->zdd[s->mb_z0[ip] + k] = zdd_save[k];
    at_modal = 1; /* xm: the joint point; RP now the turned frame */
  }
  double R0[9]; /* R_P^T R_C */
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) R0[3 * i + k] = RP[i] * RC[k] + RP[3 + i] * RC[3 + k] + RP[6 + i] * RC[6 + k];
  const double* yc = s->cmb[c] >= 0 ? q + s->mb_qy[s->cmb[c]] : NULL; /* the child's assembled amplitudes */
  if (yc && s->cTh[c]) { /* R0 <- R0 Rx(th_1) Ry(th_2) Rz(th_3): the recursion's inverse turn gives R_C back */
    int nm = s->mb_nm[s->cmb[c]];
    for (int a = 0; a < 3; a++) {
      double E[3] = {a == 0, a == 1, a == 2}, th = 0, Rk[9];
      for (int j = 0; j < nm; j++) th += s->cTh[c][a * nm + j] * yc[j];
      rot_axis(E, th, Rk);
      mat3_mul(R0, Rk, R0);
    }
  }
  SrPrim* pr = s->prim + 6 * c;
  int n = 0;
  if (j == CF_MBS_FLOATING) {
    memcpy(s->pp + 3 * c, rC, sizeof rC); /* the joint point: the body's origin (ground coordinates) */
    for (int k = 0; k < 3; k++) {
      pr[n].rot = 0, pr[n].e[0] = k == 0, pr[n].e[1] = k == 1, pr[n].e[2] = k == 2, n++;
    }
    for (int k = 0; k < 3; k++) { /* the body's axes at z = 0, in the ground's (= the frame's) coordinates */
      pr[n].rot = 1;
      for (int i = 0; i < 3; i++) pr[n].e[i] = RC[3 * i + k];
      n++;
    }
  } else {
    int ps = t->reversed[j] ? 1 : 0, cs = 1 - ps; /* the parent's and the child's slots */
    const double* fp = m->joint_frame + 24 * j + 12 * ps;  /* p a f g in the parent's coordinates */
    const double* fc = m->joint_frame + 24 * j + 12 * cs;
    memcpy(s->pp + 3 * c, fp, 3 * sizeof(double));
    if (s->xmb[c] >= 0) { /* the modal point's rest position */
      int frame, nm, blk0, nblk;
      cf_mbs__modal_point(m, s->xmb[c], m->joint_mpoint[2 * j + ps], s->pp + 3 * c, &frame, &nm, &blk0, &nblk);
    }
    double ac[3]; /* the child's axis in the parent's coordinates at z = 0 */
    mat3_vec(R0, fc + 3, ac);
    switch (m->joint_type[j]) {
      case CF_MBS_REVOLUTE: pr[n].rot = 1, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++; break;
      case CF_MBS_PRISMATIC: pr[n].rot = 0, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++; break;
      case CF_MBS_CYLINDRICAL:
        pr[n].rot = 0, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++;
        pr[n].rot = 1, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++;
        break;
      case CF_MBS_UNIVERSAL: /* the parent's own axis first, then the child's (fixed in it) */
        pr[n].rot = 1, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++;
        pr[n].rot = 1, memcpy(pr[n].e, ac, sizeof pr[n].e), n++;
        break;
      case CF_MBS_SPHERICAL:
        pr[n].rot = 1, memcpy(pr[n].e, fp + 6, sizeof pr[n].e), n++;
        pr[n].rot = 1, memcpy(pr[n].e, fp + 9, sizeof pr[n].e), n++;
        pr[n].rot = 1, memcpy(pr[n].e, fp + 3, sizeof pr[n].e), n++;
        break;
      default: break; /* fixed */
    }
  }
  s->nprim[c] = n;
  memcpy(s->R0 + 9 * c, R0, sizeof R0);
  /* pc = R_C^T (x - r_C), x the joint point at z = 0: z = 0 gives the assembled pose exactly */
  double x[3], dx[3];
  mat3_vec(RP, s->pp + 3 * c, x);
  for (int i = 0; i < 3; i++) dx[i] = at_modal ? xm[i] - rC[i] : x[i] + rP[i] - rC[i];
  mat3_tvec(RC, dx, s->pc + 3 * c);
  if (yc) { /* the child's point at its assembled amplitudes: pc <- pc - Phi y */
    int nm = s->mb_nm[s->cmb[c]];
    for (int a = 0; a < 3; a++)
      for (int j = 0; j < nm; j++) s->pc[3 * c + a] -= s->cPhi[c][a * nm + j] * yc[j];
  }
}

/* whether modal point k of modal body ib moves neither with the modes nor turns (a set clamped in the reduction):
 * a frame point then */
static int still_point(const cfMbsModel* m, int ib, int k) {
  int frame, nm, blk0, nblk;
  const double *Ph = cf_mbs__modal_point(m, ib, k, NULL, &frame, &nm, &blk0, &nblk), *Th = cf_mbs__modal_point_rotation(m, ib, k);
  for (int i = 0; i < 3 * nm; i++)
    if (Ph[i] != 0 || !Th || Th[i] != 0) return 0;
  return 1;
}

/* Which joints sit at a modal parent's point (xmb, xPhi, xTh), the tree bodies' motions (mo0, mon, mo_k, mo_tw) and
 * the amplitude blocks' columns (blk_mb, blk_off). Refused, naming the joint and the body: a tree joint at a modal
 * point of its child (the child's frame would depend on its own amplitudes), and a joint other than a spherical one
 * at a point whose rotation is not known (a node set that is not an interface point of the reduction). */
static int unknown_rotation(const cfMbsModel* m, int j, int b) {
  return cf_error(CF_ERR_UNSUPPORTED, "\"formulation\": \"semi_recursive\": joint '%s' sits at a node set of modal body "
                  "'%s' that is not an interface point of its reduction: the rotation that turns the joint's frame there "
                  "is not known (a %s joint needs it; a spherical joint takes any node set): make the set one of the "
                  "reduction's interface points (cofem reduce's \"points\", a scene's \"interface\": [{\"set\": ..., "
                  "\"point\": \"rigid\"}]), or use the global formulation", m->joint_name[j], m->body_name[b],
                  m->joint_type[j] == CF_MBS_REVOLUTE ? "revolute" : m->joint_type[j] == CF_MBS_UNIVERSAL ? "universal" :
                  m->joint_type[j] == CF_MBS_FIXED ? "fixed" : "non-spherical");
}

static int joint_motions(const cfMbsModel* m, cfMbsSr* s) {
  const cfMbsTopology* t = s->topo;
  int nb = s->nb;
  s->xmb = malloc(((size_t)nb + 1) * sizeof(int)), s->cmb = malloc(((size_t)nb + 1) * sizeof(int));
  s->xPhi = calloc((size_t)nb + 1, sizeof(double*)), s->xTh = calloc((size_t)nb + 1, sizeof(double*));
  s->cPhi = calloc((size_t)nb + 1, sizeof(double*)), s->cTh = calloc((size_t)nb + 1, sizeof(double*));
  s->mo0 = calloc((size_t)nb + 1, sizeof(int)), s->mon = calloc((size_t)nb + 1, sizeof(int));
  s->blk_mb = malloc(((size_t)nb + 1) * sizeof(int)), s->blk_off = calloc((size_t)nb + 1, sizeof(int));
  if (!s->xmb || !s->xPhi || !s->xTh || !s->cmb || !s->cPhi || !s->cTh || !s->mo0 || !s->mon || !s->blk_mb || !s->blk_off)
    return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  int nx = 0;
  for (int b = 0; b < nb; b++) {
    s->xmb[b] = s->cmb[b] = s->blk_mb[b] = -1;
    for (int i = 0; s->is_blk[b] && i < s->nmb; i++) {
      int off = m->body_qadr[b] - s->mb_qy[i];
      if (off >= 0 && off < s->mb_nm[i]) s->blk_mb[b] = i, s->blk_off[b] = off;
    }
    int j = t->parent_joint[b];
    if (s->is_blk[b] || j < 0) continue;
    int ps = t->reversed[j] ? 1 : 0, cs = 1 - ps, p = t->parent[b];
    int kc = m->joint_mpoint[2 * j + cs];
    if (kc >= 0 && !still_point(m, s->body_mb[b], kc)) { /* the child's own point, moving with its modes */
      int ic = s->body_mb[b], frame, nm, blk0, nblk;
      s->cmb[b] = ic;
      s->cPhi[b] = cf_mbs__modal_point(m, ic, kc, NULL, &frame, &nm, &blk0, &nblk);
      if (m->joint_type[j] != CF_MBS_SPHERICAL && !(s->cTh[b] = cf_mbs__modal_point_rotation(m, ic, kc)))
        return unknown_rotation(m, j, b);
      nx += s->mb_nm[ic];
    }
    int k = m->joint_mpoint[2 * j + ps];
    if (k < 0) continue;
    int ip = p >= 0 ? s->body_mb[p] : -1, frame, nm, blk0, nblk;
    if (ip < 0)
      return cf_error(CF_ERR_UNSUPPORTED, "\"formulation\": \"semi_recursive\": joint '%s': a point of body '%s', which is "
                      "not a modal body's frame", m->joint_name[j], p >= 0 ? m->body_name[p] : "ground");
    s->xmb[b] = ip;
    s->xPhi[b] = cf_mbs__modal_point(m, ip, k, NULL, &frame, &nm, &blk0, &nblk);
    if (m->joint_type[j] != CF_MBS_SPHERICAL && !(s->xTh[b] = cf_mbs__modal_point_rotation(m, ip, k)))
      return unknown_rotation(m, j, p);
    nx += s->mb_nm[ip];
  }
  s->nmo = s->nzt + nx;
  s->mo_k = malloc(((size_t)s->nmo + 1) * sizeof(int)), s->mo_tw = malloc(((size_t)s->nmo + 1) * sizeof(int));
  if (!s->mo_k || !s->mo_tw) return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  int n = 0, ntw = s->nz;
  for (int b = 0; b < nb; b++) {
    s->mo0[b] = n;
    if (s->is_blk[b] || t->parent_joint[b] == CF_MBS_NONE) continue;
    for (int j = 0; s->xmb[b] >= 0 && j < s->mb_nm[s->xmb[b]]; j++) s->mo_k[n] = s->mb_z0[s->xmb[b]] + j, s->mo_tw[n++] = ntw++;
    for (int k = 0; k < t->nz_body[b]; k++) s->mo_k[n] = s->mo_tw[n] = t->z0[b] + k, n++;
    for (int j = 0; s->cmb[b] >= 0 && j < s->mb_nm[s->cmb[b]]; j++) s->mo_k[n] = s->mb_z0[s->cmb[b]] + j, s->mo_tw[n++] = ntw++;
    s->mon[b] = n - s->mo0[b];
  }
  s->nmo = ntw - s->nz; /* the twists b holds after the nz coordinates' */
  return n == s->nzt + nx ? CF_OK : cf_error(CF_ERR_UNSUPPORTED, "semi-recursive: %d motions of %d", n, s->nzt + nx);
}

/* body velocities Z from natural velocities: w = 1/2 sum_k e_k × e_k_dot, s_dot = r_dot - w × r */
static void cartesian_velocities(const cfMbsModel* m, cfMbsSr* s, const double* q, const double* qd) {
  for (int b = 0; b < s->nb; b++) {
    if (s->is_blk[b]) continue;
    const double *qb = q + m->body_qadr[b], *vb = qd + m->body_qadr[b];
    double* Z = s->Z + 6 * b;
    memset(Z, 0, 6 * sizeof(double));
    for (int k = 1; k < 4; k++) {
      double t[3];
      cf_mbs_cross3(qb + 3 * k, vb + 3 * k, t);
      for (int i = 0; i < 3; i++) Z[3 + i] += 0.5 * t[i];
    }
    double wr[3];
    cf_mbs_cross3(Z + 3, qb, wr);
    for (int i = 0; i < 3; i++) Z[i] = vb[i] - wr[i];
  }
}

int cf_mbs_sr_create(const cfMbsModel* m, cfMbsData* d, cfMbsSr** out) {
  *out = NULL;
  for (int b = 0; b < m->nbody; b++)
    if (m->body_modal[b] >= 3)
      return cf_error(CF_ERR_UNSUPPORTED, "\"formulation\": \"semi_recursive\": body '%s' is a corotational or lumped FE "
                      "body; the semi-recursive formulation takes rigid, virtual and modal bodies: use the global formulation",
                      m->body_name[b]);
  if (m->nfe)
    return cf_error(CF_ERR_UNSUPPORTED, "\"formulation\": \"semi_recursive\" takes no FE bodies: use the global formulation");
  if (m->opt.rho_inf < 1)
    return cf_error(CF_ERR_UNSUPPORTED, "\"formulation\": \"semi_recursive\" integrates with the trapezoidal rule "
                    "only (\"solver.rho_inf\" = %g asks for generalized-alpha)", m->opt.rho_inf);
  cfMbsSr* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  int st = cf_mbs_topology_create(m, &s->topo);
  if (st < 0) {
    free(s);
    return st;
  }
  const cfMbsTopology* t = s->topo;
  int nb = s->nb = m->nbody;
  s->ntb = t->nbody, s->nzt = t->nz;
  s->nmb = m->nmodal;
  int nmtot = 0, nsq = 0;
  s->mb_body = calloc((size_t)s->nmb + 1, sizeof(int)), s->mb_nm = calloc((size_t)s->nmb + 1, sizeof(int));
  s->mb_z0 = calloc((size_t)s->nmb + 1, sizeof(int)), s->mb_qy = calloc((size_t)s->nmb + 1, sizeof(int));
  s->mb_off = calloc((size_t)s->nmb + 1, sizeof(int)), s->mb_sq = calloc((size_t)s->nmb + 1, sizeof(int));
  s->body_mb = malloc(((size_t)nb + 1) * sizeof(int)), s->is_blk = calloc((size_t)nb + 1, 1);
  if (!s->mb_body || !s->mb_nm || !s->mb_z0 || !s->mb_qy || !s->mb_off || !s->mb_sq || !s->body_mb || !s->is_blk) {
    cf_mbs_sr_free(s);
    return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  }
  for (int b = 0; b < nb; b++) s->body_mb[b] = -1, s->is_blk[b] = m->body_modal[b] == 2;
  for (int i = 0; i < s->nmb; i++) {
    s->mb_body[i] = cf_mbs_modal_frame(m, i), s->mb_nm[i] = cf_mbs_modal_nmodes(m, i);
    s->mb_qy[i] = (int)(cf_mbs_modal_y(m, d, i) - d->q);
    s->mb_z0[i] = s->nzt + nmtot, s->mb_off[i] = nmtot, s->mb_sq[i] = nsq;
    s->body_mb[s->mb_body[i]] = i;
    nmtot += s->mb_nm[i], nsq += s->mb_nm[i] * s->mb_nm[i];
  }
  int nz = s->nz = s->nzt + nmtot;
  if ((st = joint_motions(m, s)) < 0) {
    cf_mbs_sr_free(s);
    return st;
  }
  s->Cm = calloc(6 * (size_t)nmtot + 1, sizeof(double)), s->Py = calloc((size_t)nmtot + 1, sizeof(double));
  s->Myy = calloc((size_t)nsq + 1, sizeof(double)), s->Kyy = calloc((size_t)nsq + 1, sizeof(double));
  s->xv = calloc((size_t)m->nq + 1, sizeof(double)), s->yv = calloc((size_t)m->nq + 1, sizeof(double));
  if (!s->Cm || !s->Py || !s->Myy || !s->Kyy || !s->xv || !s->yv) {
    cf_mbs_sr_free(s);
    return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  }
  for (int j = 0; j < m->njoint; j++)
    if (t->role[j] == CF_MBS_ROLE_CUT) s->nrow += m->joint_ncon[j];
  s->nrow += m->ndriver;
  size_t Z1 = (size_t)nz + 1, B1 = (size_t)nb + 1, R1 = (size_t)s->nrow + 1;
  s->rows = malloc(R1 * sizeof(int));
  for (int j = 0; j < m->njoint; j++)
    if (t->role[j] == CF_MBS_ROLE_TREE) s->ntree_row += m->joint_ncon[j];
  s->tree_rows = malloc(((size_t)s->ntree_row + 1) * sizeof(int));
  s->nprim = calloc(B1, sizeof(int)), s->prim = calloc(6 * B1, sizeof(SrPrim));
  s->pp = calloc(3 * B1, sizeof(double)), s->pc = calloc(3 * B1, sizeof(double)), s->R0 = calloc(9 * B1, sizeof(double));
  s->coord_body = calloc(Z1, sizeof(int));
  s->z = calloc(Z1, sizeof(double)), s->zd = calloc(Z1, sizeof(double)), s->zdd = calloc(Z1, sizeof(double));
  s->lam = calloc(R1, sizeof(double)), s->zd_hat = calloc(Z1, sizeof(double)), s->zdd_hat = calloc(Z1, sizeof(double));
  s->save = calloc(3 * Z1 + R1, sizeof(double));
  s->R = calloc(9 * B1, sizeof(double)), s->r = calloc(3 * B1, sizeof(double));
  s->Z = calloc(6 * B1, sizeof(double)), s->D = calloc(6 * B1, sizeof(double)), s->Zd = calloc(6 * B1, sizeof(double));
  s->b = calloc(6 * (Z1 + (size_t)s->nmo), sizeof(double)), s->bd = calloc(6 * (Z1 + (size_t)s->nmo), sizeof(double));
  s->Mb = calloc(36 * B1, sizeof(double)), s->Mh = calloc(36 * B1, sizeof(double));
  s->Pb = calloc(6 * B1, sizeof(double)), s->Ph = calloc(6 * B1, sizeof(double));
  s->Mz = calloc(Z1 * Z1, sizeof(double)), s->Qz = calloc(Z1, sizeof(double));
  s->KC = calloc(Z1 * Z1, sizeof(double)), s->G = calloc(24 * Z1, sizeof(double));
  s->SG = calloc(24 * Z1, sizeof(double));
  s->J = calloc(R1 * Z1, sizeof(double)), s->phi = calloc(R1, sizeof(double)), s->phit = calloc(R1, sizeof(double));
  s->bias = calloc(R1, sizeof(double)), s->A = calloc(Z1 * Z1, sizeof(double)), s->rhs = calloc(Z1, sizeof(double));
  s->x = calloc(Z1, sizeof(double)), s->sig = calloc(R1, sizeof(double)), s->w6 = calloc(6 * B1 + Z1, sizeof(double));
  if (!s->rows || !s->tree_rows || !s->nprim || !s->prim || !s->pp || !s->pc || !s->R0 || !s->coord_body || !s->z || !s->zd || !s->zdd ||
      !s->lam || !s->zd_hat || !s->zdd_hat || !s->save || !s->R || !s->r || !s->Z || !s->D || !s->Zd || !s->b || !s->bd ||
      !s->Mb || !s->Mh || !s->Pb || !s->Ph || !s->Mz || !s->Qz || !s->KC || !s->G || !s->SG || force_columns(m, s) < 0 || !s->J || !s->phi || !s->phit || !s->bias || !s->A ||
      !s->rhs || !s->x || !s->sig || !s->w6) {
    cf_mbs_sr_free(s);
    return cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory");
  }
  int nr = 0;
  for (int j = 0; j < m->njoint; j++)
    if (t->role[j] == CF_MBS_ROLE_CUT)
      for (int e = 0; e < m->joint_ncon[j]; e++) s->rows[nr++] = m->joint_con0[j] + e;
  for (int k = 0; k < m->ndriver; k++) s->rows[nr++] = m->driver_con[k];
  nr = 0;
  for (int j = 0; j < m->njoint; j++)
    if (t->role[j] == CF_MBS_ROLE_TREE)
      for (int e = 0; e < m->joint_ncon[j]; e++) s->tree_rows[nr++] = m->joint_con0[j] + e;
  for (int b = 0; b < nb; b++) {
    if (s->is_blk[b]) continue;
    setup_joint(m, s, d->q, b);
    for (int k = 0; k < t->nz_body[b]; k++) s->coord_body[t->z0[b] + k] = b;
  }
  for (int i = 0; i < s->nmb; i++) /* the amplitudes start where the model has them */
    for (int k = 0; k < s->mb_nm[i]; k++) s->coord_body[s->mb_z0[i] + k] = s->mb_body[i], s->z[s->mb_z0[i] + k] = d->q[s->mb_qy[i] + k];
  if ((st = leading_profile(m, s)) < 0) {
    cf_mbs_sr_free(s);
    return st == CF_ERR_NOMEM ? cf_error(CF_ERR_NOMEM, "semi-recursive: out of memory") : st;
  }
  /* z = 0 here; z_dot by least squares on the body velocities, metric Mbar + eps I (exact when d->qd is a
   * tree velocity, which the model's projected initial velocities are) */
  double h = m->opt.dt, t0 = d->t;
  forward(m, s, 0);
  body_mass(m, s);
  modal_terms(m, s, d, 0, 0); /* d->q is the model's state, which z = 0 (and the amplitudes) reproduce */
  cartesian_velocities(m, s, d->q, d->qd);
  double mref = 0;
  backward(s, 0, 0);
  for (int i = 0; i < nz; i++) mref = fmax(mref, s->Mz[i * nz + i]);
  s->mref = mref > 0 ? mref : 1;
  s->alpha = m->opt.penalty > 0 ? m->opt.penalty : 1e5 * s->mref * 4 / (h * h);
  for (int b = 0; b < nb; b++) mat6_vec(s->Mb + 36 * b, s->Z + 6 * b, s->Pb + 6 * b);
  double eps = 1e-6 * s->mref;
  for (int b = 0; b < nb; b++)
    for (int i = 0; i < 6; i++) s->Pb[6 * b + i] += eps * s->Z[6 * b + i];
  /* a modal body's momenta in (Z, y): (Mbar Z + C y_dot, C^T Z + Myy y_dot), y_dot the model's */
  for (int i = 0; i < s->nmb; i++) {
    int b = s->mb_body[i], nm = s->mb_nm[i];
    const double *C = s->Cm + 6 * s->mb_off[i], *My = s->Myy + s->mb_sq[i], *yd = d->qd + s->mb_qy[i];
    for (int r = 0; r < 6; r++)
      for (int k = 0; k < nm; k++) s->Pb[6 * b + r] += C[r * nm + k] * yd[k];
    for (int k = 0; k < nm; k++) {
      double v = eps * yd[k];
      for (int r = 0; r < 6; r++) v += C[r * nm + k] * s->Z[6 * b + r];
      for (int l = 0; l < nm; l++) v += My[k * nm + l] * yd[l];
      s->Py[s->mb_off[i] + k] = v;
    }
  }
  backward(s, eps, 1);
  memcpy(s->A, s->Mz, sizeof(double) * (size_t)nz * nz);
  if ((st = chol(nz, s->A)) < 0) {
    cf_mbs_sr_free(s);
    return cf_error(CF_ERR_SOLVER, "semi-recursive: initial velocities: singular metric");
  }
  chol_solve(nz, s->A, s->Qz, s->zd);
  /* velocities projected onto the closure, then the initial accelerations and multipliers:
   * M z_ddot + Phi_z^T lambda = Q, Phi_z z_ddot = -bias */
  double a = s->alpha * h * h / 4;
  kinematics(m, s, d);
  dynamics(m, s, d, t0, 0);
  closure(m, s, d, t0, 1, 0);
  if ((st = factor_leading(s, a)) >= 0) st = project(m, s, d, t0, 0, a);
  if (st >= 0) {
    forward(m, s, 0);
    to_natural(m, s, d->q, d->qd, NULL, NULL);
    dynamics(m, s, d, t0, 0);
    closure(m, s, d, t0, 0, 1);
    for (int k = 0; k < s->nrow; k++) s->bias[k] = -s->bias[k];
    st = factor_leading(s, a);
  }
  if (st >= 0) {
    int it = alm(s, a, s->Qz, s->bias, s->zdd, m->opt.tol_phi, 100);
    if (it < 0) d->warning[CF_MBS_WARN_ACC_PROJECTION]++;
    for (int k = 0; k < s->nrow; k++) s->lam[k] = s->sig[k], s->sig[k] = 0;
  }
  if (st < 0) {
    cf_mbs_sr_free(s);
    return cf_mbs__rethrow(st, "semi-recursive formulation, initial state: ");
  }
  publish(m, s, d);
  cf_mbs__accept_angles(m, d);
  *out = s;
  return CF_OK;
}

/* the wrench (F, n_O) of a gradient row g (12, natural coordinates of body b) on the body: T_b^T g,
 * F = g_r, n_O = r × g_r + u × g_u + v × g_v + w × g_w */
static void row_wrench(const cfMbsSr* s, int b, const double* g, double w[6]) {
  const double *R = s->R + 9 * b, *r = s->r + 3 * b;
  memcpy(w, g, 3 * sizeof(double));
  cf_mbs_cross3(r, g, w + 3);
  for (int a = 0; a < 3; a++) {
    double e[3] = {R[a], R[3 + a], R[6 + a]}, t[3];
    cf_mbs_cross3(e, g + 3 + 3 * a, t);
    for (int x = 0; x < 3; x++) w[3 + x] += t[x];
  }
}

/* Tree joints' reactions by a backward recursion: the wrench the parent applies to the subtree of body
 * c, W_c = sum over the subtree (Mbar Z_dot - Qbar - F_closure), F_closure_b = -T_b^T Phi_q,b^T lambda
 * (the cut joints' and drivers' reactions); then the joint's multipliers lambda_j with
 * -T_c^T Phi_j,q,c^T lambda_j = W_c (least squares over the joint's equations, exact for a consistent
 * state), written into d->reaction so that cf_mbs_joint_reaction reads them as the global formulation's */
void cf_mbs_sr_reactions(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d) {
  const cfMbsTopology* t = s->topo;
  cf_mbs__eval_forces(m, d, d->q, d->qd, d->t, 0);
  body_mass(m, s);
  body_forces(m, s, d); /* Pb = Qbar - Mbar D at the published state (s->D, s->Zd from publish) */
  modal_terms(m, s, d, 1, 0);
  double* W = s->Ph;
  for (int b = 0; b < s->nb; b++) {
    double a[6], mz[6], md[6];
    for (int i = 0; i < 6; i++) a[i] = s->Zd[6 * b + i];
    mat6_vec(s->Mb + 36 * b, a, mz);
    mat6_vec(s->Mb + 36 * b, s->D + 6 * b, md);
    for (int i = 0; i < 6; i++) W[6 * b + i] = mz[i] - (s->Pb[6 * b + i] + md[i]);
    int ib = s->body_mb[b]; /* a modal body: + C y_ddot */
    for (int i = 0; ib >= 0 && i < 6; i++)
      for (int k = 0; k < s->mb_nm[ib]; k++) W[6 * b + i] += s->Cm[6 * s->mb_off[ib] + i * s->mb_nm[ib] + k] * s->zdd[s->mb_z0[ib] + k];
  }
  /* the closure forces on each body: -T_b^T g lambda, moved to the left side */
  cf_mbs__eval_rows(m, d, d->q, d->qd, d->t, s->rows, s->nrow, 1, NULL, NULL);
  for (int k = 0; k < s->nrow; k++) {
    int i = s->rows[k];
    const cfMbsCon* c = &m->con[i];
    const double* row = d->jac + (size_t)i * m->jac_stride;
    double lam = d->reaction[i];
    for (int sl = 0; sl < c->nb; sl++) {
      double w[6];
      if (s->is_blk[c->body[sl]]) continue; /* an amplitude block: no pose, not in the tree */
      row_wrench(s, c->body[sl], row + 12 * sl, w);
      for (int x = 0; x < 6; x++) W[6 * c->body[sl] + x] += w[x] * lam;
    }
  }
  for (int oi = s->ntb - 1; oi >= 0; oi--) {
    int c = t->order[oi], p = t->parent[c];
    if (p >= 0)
      for (int i = 0; i < 6; i++) W[6 * p + i] += W[6 * c + i];
  }
  /* each tree joint: A lambda_j = W_c, A's columns -T_c^T g_e (e: the joint's equations) */
  cf_mbs__eval_rows(m, d, d->q, d->qd, d->t, s->tree_rows, s->ntree_row, 1, NULL, NULL);
  for (int b = 0; b < s->nb; b++) {
    int j = t->parent_joint[b];
    if (j < 0 || s->is_blk[b]) continue;
    int ne = m->joint_ncon[j], e0 = m->joint_con0[j];
    double A[6][6], N[36], rhs[6], lam[6];
    for (int e = 0; e < ne; e++) {
      const cfMbsCon* c = &m->con[e0 + e];
      const double* row = d->jac + (size_t)(e0 + e) * m->jac_stride;
      for (int x = 0; x < 6; x++) A[e][x] = 0;
      for (int sl = 0; sl < c->nb; sl++)
        if (c->body[sl] == b) {
          double w[6];
          row_wrench(s, b, row + 12 * sl, w);
          for (int x = 0; x < 6; x++) A[e][x] = -w[x];
        }
    }
    for (int e = 0; e < ne; e++) {
      rhs[e] = dot6(A[e], W + 6 * b);
      for (int f = 0; f < ne; f++) N[e * ne + f] = dot6(A[e], A[f]);
    }
    if (chol(ne, N) < 0) continue; /* the joint's equations dependent here: left NAN */
    chol_solve(ne, N, rhs, lam);
    for (int e = 0; e < ne; e++) d->reaction[e0 + e] = lam[e];
  }
}

void cf_mbs_sr_mass_matrix(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, double* Mz) {
  forward(m, s, 0);
  body_mass(m, s);
  modal_terms(m, s, d, 0, 0);
  backward(s, 0, 0);
  memcpy(Mz, s->Mz, sizeof(double) * (size_t)s->nz * s->nz);
}

/* Paper 002's effective-mass reading of the backward recursion (eqs. 3-4 there): eliminating body c
 * from the chain adds to its parent p the mass of c's subtree condensed on their joint,
 *   Mc_p += Mc_c - Mc_c B (B^T Mc_c B)^-1 B^T Mc_c       (B = [b_k], the joint's motions, 6 x nz_c)
 * (the subtree's effective mass when the joint's coordinates move freely with no force along them; a
 * fixed joint has no B and adds Mc_c whole, eq. 30's composite inertia Mhat). All in the one global
 * twist basis Z = (s_dot, w) that every body's Mbar uses. */
int cf_mbs_sr_condensed_mass(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d, int body, int free_joints, double M6[36]) {
  if (body < 0 || body >= s->nb) return cf_error(CF_ERR_ARG, "cf_mbs_sr_condensed_mass: body %d is not one of the %d bodies", body, s->nb);
  const cfMbsTopology* t = s->topo;
  for (int b = 0; b < s->nb; b++)
    if (s->xmb[b] >= 0 || s->cmb[b] >= 0)
      return cf_error(CF_ERR_UNSUPPORTED, "cf_mbs_sr_condensed_mass: body '%s' is jointed at a modal point: its condensed "
                      "mass is not a 6 x 6 one in the frames' twists (the amplitudes move the joint)", m->body_name[b]);
  forward(m, s, 0);
  body_mass(m, s);
  modal_terms(m, s, d, 0, 0);
  double* Mc = s->Mh;
  memcpy(Mc, s->Mb, sizeof(double) * 36 * (size_t)s->nb);
  /* a modal body's amplitudes, free: its own effective mass Mbar - C Myy^-1 C^T (locked: Mbar) */
  for (int i = 0; free_joints && i < s->nmb; i++) {
    int b = s->mb_body[i], nm = s->mb_nm[i];
    const double* C = s->Cm + 6 * s->mb_off[i];
    double* L = s->A; /* scratch: Myy's factor */
    memcpy(L, s->Myy + s->mb_sq[i], sizeof(double) * (size_t)nm * nm);
    if (chol(nm, L) < 0) return cf_error(CF_ERR_SOLVER, "cf_mbs_sr_condensed_mass: modal body '%s': singular modal mass", m->body_name[b]);
    for (int r = 0; r < 6; r++) {
      double cr[CF_MBS_MODAL_MAX_MODES], x[CF_MBS_MODAL_MAX_MODES];
      for (int k = 0; k < nm; k++) cr[k] = C[r * nm + k];
      chol_solve(nm, L, cr, x);
      for (int c = 0; c < 6; c++)
        for (int k = 0; k < nm; k++) Mc[36 * b + 6 * c + r] -= C[c * nm + k] * x[k];
    }
  }
  for (int oi = s->ntb - 1; oi >= 0; oi--) {
    int c = t->order[oi], p = t->parent[c];
    if (p < 0 || c == body) continue; /* the wanted body's own joint is not eliminated */
    double* A = Mc + 36 * c;
    int nj = free_joints ? t->nz_body[c] : 0;
    double MB[6][6], N[36], Ninv_BtM[6][6]; /* MB = Mc_c B [6 x nj], N = B^T Mc_c B, then N^-1 (MB)^T */
    for (int k = 0; k < nj; k++) {
      const double* bk = s->b + 6 * (t->z0[c] + k);
      for (int i = 0; i < 6; i++) MB[i][k] = dot6(A + 6 * i, bk);
    }
    for (int k = 0; k < nj; k++)
      for (int l = 0; l < nj; l++) {
        const double* bk = s->b + 6 * (t->z0[c] + k);
        N[k * nj + l] = 0;
        for (int i = 0; i < 6; i++) N[k * nj + l] += bk[i] * MB[i][l];
      }
    if (nj && chol(nj, N) < 0)
      return cf_error(CF_ERR_SOLVER, "cf_mbs_sr_condensed_mass: the subtree of body '%s' has no mass along its joint", m->body_name[c]);
    for (int i = 0; i < 6 && nj; i++) {
      double col[6] = {MB[i][0], MB[i][1], MB[i][2], MB[i][3], MB[i][4], MB[i][5]}, x[6];
      chol_solve(nj, N, col, x);
      for (int k = 0; k < nj; k++) Ninv_BtM[k][i] = x[k];
    }
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 6; j++) {
        double v = A[6 * i + j];
        for (int k = 0; k < nj; k++) v -= MB[i][k] * Ninv_BtM[k][j];
        Mc[36 * p + 6 * i + j] += v;
      }
  }
  memcpy(M6, Mc + 36 * body, 36 * sizeof(double));
  return CF_OK;
}

static void save(cfMbsSr* s) {
  int n = s->nz;
  memcpy(s->save, s->z, sizeof(double) * (size_t)n);
  memcpy(s->save + n, s->zd, sizeof(double) * (size_t)n);
  memcpy(s->save + 2 * n, s->zdd, sizeof(double) * (size_t)n);
  memcpy(s->save + 3 * n, s->lam, sizeof(double) * (size_t)s->nrow);
}
static void restore(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d) {
  int n = s->nz;
  memcpy(s->z, s->save, sizeof(double) * (size_t)n);
  memcpy(s->zd, s->save + n, sizeof(double) * (size_t)n);
  memcpy(s->zdd, s->save + 2 * n, sizeof(double) * (size_t)n);
  memcpy(s->lam, s->save + 3 * n, sizeof(double) * (size_t)s->nrow);
  memset(s->sig, 0, sizeof(double) * (size_t)s->nrow);
  publish(m, s, d);
}

/* One step: eqs. 35-39 on z, as mbs_step.c on q:
 *   z_dot = 2/h z + zd_hat, z_ddot = 4/h^2 z + zdd_hat                                  (35)
 *   f(z) = h^2/4 (M z_ddot + Phi_z^T (lambda* + alpha Phi) - Q) = 0                      (36, 37)
 *   [M + h/2 C + h^2/4 (alpha Phi_z^T Phi_z + K)] dz = -f; lambda* += alpha Phi after each update (37, 2)
 * with the force elements' K = q_z^T K_q q_z, C = q_z^T C_q q_z (38), then the projections (39) with
 * W = M + h/2 C + h^2/4 K. */
int cf_mbs_sr_step(const cfMbsModel* m, cfMbsSr* s, cfMbsData* d) {
  int nz = s->nz, nr = s->nrow;
  double h = m->opt.dt, t1 = d->t + h, alpha = s->alpha, h2 = h * h / 4, a = alpha * h2;
  save(s);
  for (int i = 0; i < nz; i++) {
    s->zd_hat[i] = -(2 / h * s->z[i] + s->zd[i]);
    s->zdd_hat[i] = -(4 / (h * h) * s->z[i] + 4 / h * s->zd[i] + s->zdd[i]);
    s->z[i] += h * s->zd[i] + 0.5 * h * h * s->zdd[i];
  }
  double dzmax = INFINITY, phimax = 0, dz_hist[3] = {INFINITY, INFINITY, INFINITY};
  int it, converged = 0, st = CF_OK;
  for (it = 0;; it++) {
    for (int i = 0; i < nz; i++) {
      s->zd[i] = 2 / h * s->z[i] + s->zd_hat[i];
      s->zdd[i] = 4 / (h * h) * s->z[i] + s->zdd_hat[i];
    }
    double tc = cf_wall_time();
    kinematics(m, s, d);
    closure(m, s, d, t1, 0, 0);
    d->timer[CF_MBS_STAGE_CONSTRAINTS] += cf_wall_time() - tc;
    phimax = cf_mbs_maxabs(nr, s->phi);
    if (!isfinite(phimax)) break;
    if (it > 0) {
      for (int k = 0; k < nr; k++) s->lam[k] += alpha * s->phi[k];
      if (dzmax <= m->opt.tol_dq && phimax <= m->opt.tol_phi) {
        converged = 1;
        break;
      }
      if (it >= 4 && phimax <= m->opt.tol_phi && dzmax <= NEWTON_FLOOR * m->opt.tol_dq && !(dzmax < 0.5 * dz_hist[2])) {
        converged = 1;
        d->warning[CF_MBS_WARN_NEWTON_FLOOR]++;
        break;
      }
    }
    if (it >= m->opt.max_iter) break;
    tc = cf_wall_time();
    dynamics(m, s, d, t1, 1);
    d->timer[CF_MBS_STAGE_FORCES] += cf_wall_time() - tc;
    /* r = -h^2/4 (M z_ddot + J^T (lambda* + alpha Phi) - Q) */
    for (int i = 0; i < nz; i++) {
      double v = -s->Qz[i];
      for (int j = 0; j < nz; j++) v += s->Mz[i * nz + j] * s->zdd[j];
      s->rhs[i] = v;
    }
    for (int k = 0; k < nr; k++) {
      double e = s->lam[k] + alpha * s->phi[k];
      const double* Jk = s->J + (size_t)k * nz;
      for (int i = 0; i < nz; i++) s->rhs[i] += Jk[i] * e;
    }
    for (int i = 0; i < nz; i++) s->rhs[i] *= -h2;
    tc = cf_wall_time();
    st = factor_leading(s, a);
    d->timer[CF_MBS_STAGE_FACTOR] += cf_wall_time() - tc;
    if (st < 0) break;
    tc = cf_wall_time();
    lead_solve(s, s->rhs, s->x);
    d->timer[CF_MBS_STAGE_SOLVE] += cf_wall_time() - tc;
    dz_hist[2] = dz_hist[1], dz_hist[1] = dz_hist[0], dz_hist[0] = dzmax;
    dzmax = 0;
    for (int i = 0; i < nz; i++) s->z[i] += s->x[i], dzmax = fmax(dzmax, fabs(s->x[i]));
  }
  if (st < 0 || !converged) {
    int w = 0;
    for (int k = 1; k < nr; k++)
      if (!(fabs(s->phi[k]) <= fabs(s->phi[w]))) w = k;
    char who[256] = "the equations";
    if (nr) cf_mbs_describe_con(m, s->rows[w], who, sizeof who);
    restore(m, s, d);
    if (st < 0) {
      char prefix[80];
      snprintf(prefix, sizeof prefix, "step %ld (t = %.6g s): ", d->steps + 1, t1);
      return cf_mbs__rethrow(st, prefix);
    }
    return cf_error(CF_ERR_SOLVER, "step %ld (t = %.6g s), semi-recursive: Newton did not converge in %d iterations "
                    "(max |dz| %.3g, max |Phi| %.3g, worst in %s); try a smaller time step", d->steps + 1, t1, it,
                    dzmax, phimax, who);
  }
  d->iters = it;
  d->phi_max = phimax;
  /* projections (39) at the converged positions, W = M */
  double tc = cf_wall_time();
  dynamics(m, s, d, t1, 1);
  closure(m, s, d, t1, 1, 0);
  d->timer[CF_MBS_STAGE_FORCES] += cf_wall_time() - tc;
  st = factor_leading(s, a);
  if (st >= 0) st = project(m, s, d, t1, 0, a);
  if (st >= 0) st = project(m, s, d, t1, 1, a);
  if (st < 0) {
    restore(m, s, d);
    return cf_mbs__rethrow(st, "semi-recursive projections: ");
  }
  d->t = t1;
  publish(m, s, d);
  d->steps++;
  d->iters_total += it;
  if (it > d->iters_max) d->iters_max = it;
  cf_mbs__accept_angles(m, d);
  return CF_OK;
}
