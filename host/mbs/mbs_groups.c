/* Kinematics by structural groups (paper 001, Saura et al.; issue 29, item 3; cofem/mbs_topology.h).
 *
 * The groups of cf_mbs_topology_create are solved in their order. Group g owns the equations of the
 * global model whose bodies all lie in groups 0..g with at least one in g (its bodies' rigidity, the
 * joints to the bodies before it, its drivers); its unknowns are its bodies' natural coordinates q_S
 * (12 per body). Per step, from the prediction q_S + h qd_S + h^2/2 qdd_S:
 *   position:     Gauss-Newton  (J_S^T J_S) dq_S = -J_S^T Phi          until |Phi| <= tol_phi, |dq| <= tol_dq
 *   velocity:     (J_S^T J_S) qd_S  = J_S^T (-Phi_t - J_K qd_K)
 *   acceleration: (J_S^T J_S) qdd_S = J_S^T (-bias - J_K qdd_K)
 * (J_K: the columns of the bodies already known). The planar loops of spatial revolute joints make the
 * group's equations redundant (27 for a dyad's 24 unknowns) but consistent, so the normal equations
 * give the exact solution; starting from the prediction keeps each dyad on its assembly branch. A
 * Cholesky pivot of J_S^T J_S below 1e-12 of the largest is a dead point (the group's Jacobian loses
 * rank: the dyad stretched out or folded, beyond which it cannot be assembled): an error naming the
 * group. A planar RRR dyad's positions are found in closed form first (the intersection of two
 * circles, rrr_closed_form below) and a planar RRP dyad's (the slider-crank: a circle and the slider's line,
 * rrp_closed_form), which the Newton then only checks (0 updates); the velocities and accelerations go
 * through the normal equations. */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_topology.h"
#include "mbs/mbs_internal.h"

typedef struct KinGroup {
  int nbody, ncol, nrow;
  const int* body;   /* into topo->group_body */
  int* rows;         /* [nrow] global equations */
  /* a planar RRR dyad, solved in closed form: body[s] hinged to a known body by joint ext[s], the two
   * joined by joint inner; slots: the dyad body's side of each joint */
  int rrr, ext[2], inner, ext_slot[2], inner_slot[2];
  /* a planar RRP dyad (slider-crank): body[rod] hinged to a known body, body[1 - rod] (the slider) on a
   * prismatic joint to a known body, the two hinged together; same joint and slot fields as rrr */
  int rrp, rod;
  /* a planar RPR dyad (an inverted slider-crank, a hydraulic cylinder): each body hinged to a known body, the
   * two on a prismatic joint; a planar PRP dyad: each body on a prismatic joint to a known body, the two hinged */
  int rpr, prp;
} KinGroup;

struct cfMbsGroupKin {
  cfMbsTopology* topo;
  int ngroup;
  KinGroup* group;
  int* col;          /* [nbody] column of body b within its own group (12 per body) */
  int* gof;          /* [nbody] the group of body b */
  double *J, *JtJ, *rhs, *x, *c; /* scratch: [maxrow maxcol] [maxcol^2] [maxcol] [maxcol] [maxrow] */
  double* save;      /* [3 nq] */
  int closed_form;   /* planar RRR dyads in closed form (1, the default), else by the Newton of every group */
  long newton_iters; /* Gauss-Newton updates so far (a closed-form dyad needs none) */
};

void cf_mbs_group_kin_free(cfMbsGroupKin* g) {
  if (!g) return;
  for (int i = 0; g->group && i < g->ngroup; i++) free(g->group[i].rows);
  free(g->group), free(g->col), free(g->gof), free(g->J), free(g->JtJ), free(g->rhs), free(g->x), free(g->c), free(g->save);
  cf_mbs_topology_free(g->topo);
  free(g);
}

const cfMbsTopology* cf_mbs_group_kin_topology(const cfMbsGroupKin* g) { return g->topo; }

int cf_mbs_group_kin_create(const cfMbsModel* m, cfMbsGroupKin** out) {
  *out = NULL;
  if (m->ndof != 0)
    return cf_error(CF_ERR_ARG, "kinematics by structural groups needs every motion driven, but the mechanism has %d "
                    "degree%s of freedom left", m->ndof, m->ndof == 1 ? "" : "s");
  for (int b = 0; b < m->nbody; b++)
    if (m->body_modal[b])
      return cf_error(CF_ERR_UNSUPPORTED, "kinematics by structural groups: body '%s' is flexible; rigid bodies only",
                      m->body_name[b]);
  cfMbsGroupKin* g = calloc(1, sizeof *g);
  if (!g) return cf_error(CF_ERR_NOMEM, "structural groups: out of memory");
  int st = cf_mbs_topology_create(m, &g->topo);
  if (st < 0) {
    free(g);
    return st;
  }
  const cfMbsTopology* t = g->topo;
  int nb = m->nbody, ng = g->ngroup = t->ngroup;
  g->group = calloc((size_t)ng + 1, sizeof *g->group);
  g->col = calloc((size_t)nb + 1, sizeof(int)), g->gof = calloc((size_t)nb + 1, sizeof(int));
  g->save = calloc(3 * (size_t)m->nq + 1, sizeof(double));
  int* count = calloc((size_t)ng + 1, sizeof(int));
  int* eq_group = malloc(((size_t)m->ncon + 1) * sizeof(int));
  if (!g->group || !g->col || !g->gof || !g->save || !count || !eq_group) {
    free(count), free(eq_group);
    cf_mbs_group_kin_free(g);
    return cf_error(CF_ERR_NOMEM, "structural groups: out of memory");
  }
  for (int k = 0; k < ng; k++) {
    KinGroup* G = &g->group[k];
    G->body = t->group_body + t->group_ptr[k];
    G->nbody = t->group_ptr[k + 1] - t->group_ptr[k];
    G->ncol = 12 * G->nbody;
    for (int i = 0; i < G->nbody; i++) g->gof[G->body[i]] = k, g->col[G->body[i]] = 12 * i;
  }
  /* each equation to the last group of its bodies */
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    int last = -1;
    for (int sl = 0; sl < c->nb; sl++) last = c->body[sl] >= 0 && g->gof[c->body[sl]] > last ? g->gof[c->body[sl]] : last;
    eq_group[i] = last;
    if (last >= 0) count[last]++;
  }
  int maxrow = 1, maxcol = 1;
  for (int k = 0; k < ng; k++) {
    KinGroup* G = &g->group[k];
    G->rows = malloc(((size_t)count[k] + 1) * sizeof(int));
    if (!G->rows) {
      free(count), free(eq_group);
      cf_mbs_group_kin_free(g);
      return cf_error(CF_ERR_NOMEM, "structural groups: out of memory");
    }
    for (int i = 0; i < m->ncon; i++)
      if (eq_group[i] == k) G->rows[G->nrow++] = i;
    maxrow = G->nrow > maxrow ? G->nrow : maxrow, maxcol = G->ncol > maxcol ? G->ncol : maxcol;
  }
  free(count), free(eq_group);
  /* planar RRR and RRP dyads: each body with one joint to the known bodies, one between them */
  for (int k = 0; k < ng && t->planar; k++) {
    KinGroup* G = &g->group[k];
    if (G->nbody != 2 || strncmp(t->group_kind[k], "dyad ", 5)) continue;
    int next[2] = {0, 0}, ninner = 0;
    for (int j = 0; j < m->njoint; j++) {
      int b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
      for (int sb = 0; sb < 2; sb++) {
        int b = G->body[sb];
        if (b1 != b && b2 != b) continue;
        int other = b1 == b ? b2 : b1, slot = b1 == b ? 0 : 1;
        if (other == G->body[1 - sb]) {
          if (sb == 0) G->inner = j, ninner++;
          G->inner_slot[sb] = slot;
        } else if (other == CF_MBS_GROUND || g->gof[other] < k) {
          G->ext[sb] = j, G->ext_slot[sb] = slot, next[sb]++;
        } /* a joint to a later group is that group's */
      }
    }
    G->rrr = ninner == 1 && next[0] == 1 && next[1] == 1 && m->joint_type[G->inner] == CF_MBS_REVOLUTE &&
             m->joint_type[G->ext[0]] == CF_MBS_REVOLUTE && m->joint_type[G->ext[1]] == CF_MBS_REVOLUTE;
    /* the RRP dyad, either body first: one outer revolute (the rod's), one outer prismatic (the slider's) */
    if (ninner == 1 && next[0] == 1 && next[1] == 1 && m->joint_type[G->inner] == CF_MBS_REVOLUTE)
      for (int r = 0; r < 2 && !G->rrp; r++)
        if (m->joint_type[G->ext[r]] == CF_MBS_REVOLUTE && m->joint_type[G->ext[1 - r]] == CF_MBS_PRISMATIC) G->rrp = 1, G->rod = r;
    if (ninner == 1 && next[0] == 1 && next[1] == 1) {
      int ti = m->joint_type[G->inner], t0 = m->joint_type[G->ext[0]], t1 = m->joint_type[G->ext[1]];
      G->rpr = ti == CF_MBS_PRISMATIC && t0 == CF_MBS_REVOLUTE && t1 == CF_MBS_REVOLUTE;
      G->prp = ti == CF_MBS_REVOLUTE && t0 == CF_MBS_PRISMATIC && t1 == CF_MBS_PRISMATIC;
    }
  }
  g->J = calloc((size_t)maxrow * maxcol, sizeof(double)), g->JtJ = calloc((size_t)maxcol * maxcol, sizeof(double));
  g->rhs = calloc((size_t)maxcol, sizeof(double)), g->x = calloc((size_t)maxcol, sizeof(double));
  g->c = calloc((size_t)maxrow, sizeof(double));
  if (!g->J || !g->JtJ || !g->rhs || !g->x || !g->c) {
    cf_mbs_group_kin_free(g);
    return cf_error(CF_ERR_NOMEM, "structural groups: out of memory");
  }
  g->closed_form = 1;
  *out = g;
  return CF_OK;
}

void cf_mbs_group_kin_set_closed_form(cfMbsGroupKin* g, int on) { g->closed_form = on; }
long cf_mbs_group_kin_newton_iterations(const cfMbsGroupKin* g) { return g->newton_iters; }

/* the group's bodies, for messages */
static void group_names(const cfMbsModel* m, const KinGroup* G, char* out, size_t n) {
  size_t len = 0;
  out[0] = 0;
  for (int i = 0; i < G->nbody && len + 2 < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s'%s'", i ? ", " : "", m->body_name[G->body[i]]);
}

/* J_S from the gradient rows (the group's columns), and the known bodies' part J_K x into c (c -= J_K x)
 * when x is given */
static void group_jacobian(const cfMbsModel* m, const cfMbsGroupKin* g, int k, const cfMbsData* d, const double* x,
                           double* c) {
  const KinGroup* G = &g->group[k];
  int nc = G->ncol;
  memset(g->J, 0, sizeof(double) * (size_t)G->nrow * nc);
  for (int r = 0; r < G->nrow; r++) {
    const cfMbsCon* con = &m->con[G->rows[r]];
    const double* row = d->jac + (size_t)G->rows[r] * m->jac_stride;
    for (int sl = 0; sl < con->nb; sl++) {
      int b = con->body[sl];
      if (g->gof[b] == k)
        for (int j = 0; j < 12; j++) g->J[(size_t)r * nc + g->col[b] + j] += row[12 * sl + j];
      else if (x) {
        const double* xb = x + m->body_qadr[b];
        for (int j = 0; j < 12; j++) c[r] -= row[12 * sl + j] * xb[j];
      }
    }
  }
}

/* (J^T J) y = J^T c by Cholesky; CF_ERR_SOLVER at a pivot below 1e-12 of the largest (a dead point).
 * reuse: J is the one of the last call, whose factor is kept */
static int normal_solve(const cfMbsGroupKin* g, int nrow, int nc, const double* c, double* y, int reuse) {
  double *A = g->JtJ, *J = g->J;
  for (int i = 0; i < nc; i++) {
    for (int j = 0; j <= i && !reuse; j++) {
      double v = 0;
      for (int r = 0; r < nrow; r++) v += J[(size_t)r * nc + i] * J[(size_t)r * nc + j];
      A[i * nc + j] = v;
    }
    double v = 0;
    for (int r = 0; r < nrow; r++) v += J[(size_t)r * nc + i] * c[r];
    g->rhs[i] = v;
  }
  if (reuse) goto solve;
  double dmax = 0;
  for (int i = 0; i < nc; i++) dmax = fmax(dmax, A[i * nc + i]);
  for (int j = 0; j < nc; j++) {
    double s = A[j * nc + j];
    for (int k = 0; k < j; k++) s -= A[j * nc + k] * A[j * nc + k];
    if (!(s > 1e-12 * dmax)) return CF_ERR_SOLVER;
    double l = sqrt(s);
    A[j * nc + j] = l;
    for (int i = j + 1; i < nc; i++) {
      double v = A[i * nc + j];
      for (int k = 0; k < j; k++) v -= A[i * nc + k] * A[j * nc + k];
      A[i * nc + j] = v / l;
    }
  }
solve:
  for (int i = 0; i < nc; i++) {
    double v = g->rhs[i];
    for (int k = 0; k < i; k++) v -= A[i * nc + k] * y[k];
    y[i] = v / A[i * nc + i];
  }
  for (int i = nc - 1; i >= 0; i--) {
    double v = y[i];
    for (int k = i + 1; k < nc; k++) v -= A[k * nc + i] * y[k];
    y[i] = v / A[i * nc + i];
  }
  return CF_OK;
}

static void scatter(const cfMbsModel* m, const KinGroup* G, const double* y, double* x, int add) {
  for (int i = 0; i < G->nbody; i++) {
    double* xb = x + m->body_qadr[G->body[i]];
    for (int j = 0; j < 12; j++) xb[j] = add ? xb[j] + y[12 * i + j] : y[12 * i + j];
  }
}

/* Closed-form planar RRR dyad: the inner point C is where the circles of radius L1 about P1 and L2 about
 * P2 meet (in the plane normal to the axes n, each body's in-plane lever L and height h along n from its
 * local points), on the side of P1 P2 where the prediction has it (the assembly branch):
 *   a = (L1^2 - L2^2 + d^2) / (2 d),  C = P1' + a e + s sqrt(L1^2 - a^2) (n × e),  e = (P2' - P1') / d
 * then each body turned about n from its previous pose so its lever points at C, and placed at its
 * outer joint. Returns CF_ERR_SOLVER at a dead point (no or a double intersection). q_prev: the step's
 * start (orthonormal frames). */
static int rrr_closed_form(const cfMbsModel* m, const KinGroup* G, const double* q_prev, cfMbsData* d) {
  double P[2][3], n[3], v[2][3], h[2], L[2];
  cf_mbs__joint_vec(m, d->q, G->ext[0], 1 - G->ext_slot[0], 1, n);
  double nn = cf_mbs_norm3(n);
  for (int i = 0; i < 3; i++) n[i] /= nn;
  for (int sb = 0; sb < 2; sb++) {
    const double* fr = m->joint_frame + 24 * G->ext[sb] + 12 * G->ext_slot[sb]; /* p, a on the dyad body */
    const double* fc = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[sb];
    cf_mbs__joint_vec(m, d->q, G->ext[sb], 1 - G->ext_slot[sb], 0, P[sb]); /* the known body's point */
    double lv[3] = {fc[0] - fr[0], fc[1] - fr[1], fc[2] - fr[2]};
    h[sb] = cf_mbs_dot3(lv, fr + 3);
    for (int i = 0; i < 3; i++) v[sb][i] = lv[i] - h[sb] * fr[3 + i]; /* the in-plane lever, body coordinates */
    L[sb] = cf_mbs_norm3(v[sb]);
    for (int i = 0; i < 3; i++) P[sb][i] += h[sb] * n[i];
  }
  double D[3], dn;
  for (int i = 0; i < 3; i++) D[i] = P[1][i] - P[0][i];
  dn = cf_mbs_dot3(D, n);
  for (int i = 0; i < 3; i++) D[i] -= dn * n[i];
  double dist = cf_mbs_norm3(D), a = (L[0] * L[0] - L[1] * L[1] + dist * dist) / (2 * dist);
  double h2 = L[0] * L[0] - a * a;
  if (!(dist > 0) || !(h2 > 1e-16 * L[0] * L[0])) return CF_ERR_SOLVER;
  double e[3], f[3], C[3], Cp[3];
  for (int i = 0; i < 3; i++) e[i] = D[i] / dist;
  cf_mbs_cross3(n, e, f);
  /* the branch: the side of the predicted inner point */
  const double* qb = d->q + m->body_qadr[G->body[0]];
  const double* pc = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[0];
  for (int i = 0; i < 3; i++) Cp[i] = qb[i] + pc[0] * qb[3 + i] + pc[1] * qb[6 + i] + pc[2] * qb[9 + i] - P[0][i];
  double side = cf_mbs_dot3(Cp, f) >= 0 ? 1 : -1, hh = sqrt(h2);
  for (int i = 0; i < 3; i++) C[i] = P[0][i] + a * e[i] + side * hh * f[i];
  for (int sb = 0; sb < 2; sb++) {
    int b = G->body[sb];
    const double* qo = q_prev + m->body_qadr[b];
    double* qn = d->q + m->body_qadr[b];
    double Rp[9], u_old[3], u_new[3], c[3], Rn[9], Rt[9];
    for (int i = 0; i < 3; i++) Rp[3 * i] = qo[3 + i], Rp[3 * i + 1] = qo[6 + i], Rp[3 * i + 2] = qo[9 + i];
    for (int i = 0; i < 3; i++) u_old[i] = Rp[3 * i] * v[sb][0] + Rp[3 * i + 1] * v[sb][1] + Rp[3 * i + 2] * v[sb][2];
    for (int i = 0; i < 3; i++) u_new[i] = C[i] - P[sb][i];
    cf_mbs_cross3(u_old, u_new, c);
    double th = atan2(cf_mbs_dot3(c, n), cf_mbs_dot3(u_old, u_new));
    cf_mbs_axis_angle(n, th, Rt);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Rn[3 * i + j] = Rt[3 * i] * Rp[j] + Rt[3 * i + 1] * Rp[3 + j] + Rt[3 * i + 2] * Rp[6 + j];
    const double* pe = m->joint_frame + 24 * G->ext[sb] + 12 * G->ext_slot[sb];
    double Pe[3]; /* the outer joint's point, on the plane of the known body's point */
    cf_mbs__joint_vec(m, d->q, G->ext[sb], 1 - G->ext_slot[sb], 0, Pe);
    for (int i = 0; i < 3; i++) {
      qn[i] = Pe[i] - (Rn[3 * i] * pe[0] + Rn[3 * i + 1] * pe[1] + Rn[3 * i + 2] * pe[2]);
      qn[3 + i] = Rn[3 * i], qn[6 + i] = Rn[3 * i + 1], qn[9 + i] = Rn[3 * i + 2];
    }
  }
  return CF_OK;
}

/* Closed-form planar RRP dyad (the slider-crank's rod and slider). The slider keeps the orientation of
 * the known body K it slides on: its joint frame (a, f, g) equal to K's, R_s = [a f g]_K,global
 * [a f g]_s,body^T. Its point p_s then lies on K's line x(sigma) = p_K + sigma a, and the inner joint's
 * point on it is C(sigma) = C0 + sigma a, C0 = p_K + R_s (c_s - p_s). The rod, hinged at the known point
 * P (raised along the axis n by the rod's height h, as in the RRR dyad), reaches C when the in-plane
 * distance is its lever L:
 *   |d + sigma a|^2 = L^2, d = (C0 - P') without its n part:
 *   sigma = -(d . a) + s sqrt((d . a)^2 - |d|^2 + L^2)
 * with s the sign of (sigma + d . a) at the prediction (the side of the foot of P' on the line: the
 * assembly branch). A root that vanishes (the rod perpendicular to the line) or is imaginary (the line
 * out of reach) is a dead point: CF_ERR_SOLVER. The rod is then turned about n from its previous pose
 * to point its lever at C and placed at its outer joint, as in rrr_closed_form. */
static int rrp_closed_form(const cfMbsModel* m, const KinGroup* G, const double* q_prev, cfMbsData* d) {
  int r = G->rod, sl = 1 - G->rod, jr = G->ext[r], jp = G->ext[sl];
  int br = G->body[r], bs = G->body[sl];
  /* the slider's orientation from K's frame of the prismatic joint */
  double FK[3][3]; /* global a, f, g of K's side */
  for (int w = 0; w < 3; w++) cf_mbs__joint_vec(m, d->q, jp, 1 - G->ext_slot[sl], 1 + w, FK[w]);
  const double* fs = m->joint_frame + 24 * jp + 12 * G->ext_slot[sl]; /* p a f g, slider coordinates */
  double Rs[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rs[3 * i + j] = FK[0][i] * fs[3 + j] + FK[1][i] * fs[6 + j] + FK[2][i] * fs[9 + j];
  double pK[3], C0[3], ps_c[3];
  cf_mbs__joint_vec(m, d->q, jp, 1 - G->ext_slot[sl], 0, pK);
  const double* cs = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[sl];
  for (int i = 0; i < 3; i++) ps_c[i] = cs[i] - fs[i];
  for (int i = 0; i < 3; i++) C0[i] = pK[i] + Rs[3 * i] * ps_c[0] + Rs[3 * i + 1] * ps_c[1] + Rs[3 * i + 2] * ps_c[2];
  /* the rod: axis, outer point raised to the plane of its inner point, in-plane lever */
  double n[3], P[3], v[3], a[3];
  cf_mbs__joint_vec(m, d->q, jr, 1 - G->ext_slot[r], 1, n);
  double nn = cf_mbs_norm3(n);
  for (int i = 0; i < 3; i++) n[i] /= nn, a[i] = FK[0][i];
  const double* fr = m->joint_frame + 24 * jr + 12 * G->ext_slot[r];
  const double* fc = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[r];
  cf_mbs__joint_vec(m, d->q, jr, 1 - G->ext_slot[r], 0, P);
  double lv[3] = {fc[0] - fr[0], fc[1] - fr[1], fc[2] - fr[2]}, h = cf_mbs_dot3(lv, fr + 3);
  for (int i = 0; i < 3; i++) v[i] = lv[i] - h * fr[3 + i], P[i] += h * n[i];
  double L = cf_mbs_norm3(v), dv[3];
  for (int i = 0; i < 3; i++) dv[i] = C0[i] - P[i];
  double dn = cf_mbs_dot3(dv, n);
  for (int i = 0; i < 3; i++) dv[i] -= dn * n[i];
  double da = cf_mbs_dot3(dv, a), disc = da * da - cf_mbs_dot3(dv, dv) + L * L;
  if (!(disc > 1e-16 * L * L)) return CF_ERR_SOLVER;
  /* the branch: the predicted slider's place on the line */
  const double* qs = d->q + m->body_qadr[bs];
  double xs[3];
  for (int i = 0; i < 3; i++) xs[i] = qs[i] + fs[0] * qs[3 + i] + fs[1] * qs[6 + i] + fs[2] * qs[9 + i] - pK[i];
  double sig_pred = cf_mbs_dot3(xs, a), side = sig_pred + da >= 0 ? 1 : -1;
  double sigma = -da + side * sqrt(disc), C[3];
  for (int i = 0; i < 3; i++) C[i] = C0[i] + sigma * a[i];
  /* the slider: R_s, its prismatic point at p_K + sigma a */
  double* qn = d->q + m->body_qadr[bs];
  for (int i = 0; i < 3; i++) {
    qn[i] = pK[i] + sigma * a[i] - (Rs[3 * i] * fs[0] + Rs[3 * i + 1] * fs[1] + Rs[3 * i + 2] * fs[2]);
    qn[3 + i] = Rs[3 * i], qn[6 + i] = Rs[3 * i + 1], qn[9 + i] = Rs[3 * i + 2];
  }
  /* the rod: turned about n so that its lever points at C (C raised to the rod's outer point's plane) */
  double Cr[3];
  double cn = cf_mbs_dot3(C, n) - cf_mbs_dot3(P, n);
  for (int i = 0; i < 3; i++) Cr[i] = C[i] - cn * n[i];
  const double* qo = q_prev + m->body_qadr[br];
  double Rp[9], u_old[3], u_new[3], c[3], Rt[9], Rn[9];
  for (int i = 0; i < 3; i++) Rp[3 * i] = qo[3 + i], Rp[3 * i + 1] = qo[6 + i], Rp[3 * i + 2] = qo[9 + i];
  for (int i = 0; i < 3; i++) u_old[i] = Rp[3 * i] * v[0] + Rp[3 * i + 1] * v[1] + Rp[3 * i + 2] * v[2], u_new[i] = Cr[i] - P[i];
  cf_mbs_cross3(u_old, u_new, c);
  cf_mbs_axis_angle(n, atan2(cf_mbs_dot3(c, n), cf_mbs_dot3(u_old, u_new)), Rt);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rn[3 * i + j] = Rt[3 * i] * Rp[j] + Rt[3 * i + 1] * Rp[3 + j] + Rt[3 * i + 2] * Rp[6 + j];
  double Pe[3];
  cf_mbs__joint_vec(m, d->q, jr, 1 - G->ext_slot[r], 0, Pe);
  qn = d->q + m->body_qadr[br];
  for (int i = 0; i < 3; i++) {
    qn[i] = Pe[i] - (Rn[3 * i] * fr[0] + Rn[3 * i + 1] * fr[1] + Rn[3 * i + 2] * fr[2]);
    qn[3 + i] = Rn[3 * i], qn[6 + i] = Rn[3 * i + 1], qn[9 + i] = Rn[3 * i + 2];
  }
  return CF_OK;
}

/* q_b's frame (columns u, v, w) as a row-major rotation */
static void frame_of(const double* qb, double R[9]) {
  for (int i = 0; i < 3; i++) R[3 * i] = qb[3 + i], R[3 * i + 1] = qb[6 + i], R[3 * i + 2] = qb[9 + i];
}

/* body b placed with rotation R and its body point pb at the global point P: q_b = (P - R pb, R's columns) */
static void place(const cfMbsModel* m, cfMbsData* d, int b, const double R[9], const double pb[3], const double P[3]) {
  double* qn = d->q + m->body_qadr[b];
  for (int i = 0; i < 3; i++) {
    qn[i] = P[i] - (R[3 * i] * pb[0] + R[3 * i + 1] * pb[1] + R[3 * i + 2] * pb[2]);
    qn[3 + i] = R[3 * i], qn[6 + i] = R[3 * i + 1], qn[9 + i] = R[3 * i + 2];
  }
}

/* Closed-form planar RPR dyad: body A = body[0] hinged to a known body at P1 (its point e1), B = body[1] hinged to
 * a known body at P2 (its point e2), B sliding on A along A's axis u (the prismatic's frames: p_A, u in A's
 * coordinates, p_B in B's). The prismatic keeps B's orientation A's: R_B = R_A M, M = [a f g]_A [a f g]_B^T; in A's
 * coordinates B's hinge is then at p_A + sigma u + w, w = M (e2 - p_B), and from P1 at c + sigma u, c = p_A + w - e1.
 * Its in-plane length must be the hinges' in-plane distance |D| (D = P2 - P1 without its part along n):
 *   |c + sigma u|^2 = |D|^2:  sigma = -(c . u) + s sqrt((c . u)^2 - |c|^2 + |D|^2)     (c without its n part)
 * s the sign of sigma + c . u at the prediction (which way along u B's hinge lies from the foot of P1: the assembly
 * branch). A root that vanishes or turns imaginary is the dead point (the slide line perpendicular to P1 P2,
 * grazing the circle of B's hinge). A is then turned about n from its previous pose until R_A (c + sigma u) points
 * along D, and placed at P1; B is R_A M placed at P2. */
static int rpr_closed_form(const cfMbsModel* m, const KinGroup* G, const double* q_prev, cfMbsData* d) {
  int bA = G->body[0], bB = G->body[1], ji = G->inner;
  const double* fa = m->joint_frame + 24 * G->ext[0] + 12 * G->ext_slot[0]; /* e1, n_A on A */
  const double* fb = m->joint_frame + 24 * G->ext[1] + 12 * G->ext_slot[1]; /* e2 on B */
  const double* pa = m->joint_frame + 24 * ji + 12 * G->inner_slot[0];       /* p_A, u (a), f, g on A */
  const double* pbf = m->joint_frame + 24 * ji + 12 * G->inner_slot[1];      /* p_B, a, f, g on B */
  double n[3], P1[3], P2[3], M[9], w[3], c[3], D[3];
  cf_mbs__joint_vec(m, d->q, G->ext[0], 1 - G->ext_slot[0], 1, n);
  double nn = cf_mbs_norm3(n);
  for (int i = 0; i < 3; i++) n[i] /= nn;
  cf_mbs__joint_vec(m, d->q, G->ext[0], 1 - G->ext_slot[0], 0, P1);
  cf_mbs__joint_vec(m, d->q, G->ext[1], 1 - G->ext_slot[1], 0, P2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) M[3 * i + j] = pa[3 + i] * pbf[3 + j] + pa[6 + i] * pbf[6 + j] + pa[9 + i] * pbf[9 + j];
  double e2p[3] = {fb[0] - pbf[0], fb[1] - pbf[1], fb[2] - pbf[2]};
  for (int i = 0; i < 3; i++) w[i] = M[3 * i] * e2p[0] + M[3 * i + 1] * e2p[1] + M[3 * i + 2] * e2p[2];
  for (int i = 0; i < 3; i++) c[i] = pa[i] + w[i] - fa[i];
  const double *nA = fa + 3, *u = pa + 3;
  double cn = cf_mbs_dot3(c, nA), dn;
  for (int i = 0; i < 3; i++) c[i] -= cn * nA[i], D[i] = P2[i] - P1[i];
  dn = cf_mbs_dot3(D, n);
  for (int i = 0; i < 3; i++) D[i] -= dn * n[i];
  double cu = cf_mbs_dot3(c, u), DD = cf_mbs_dot3(D, D), disc = cu * cu - cf_mbs_dot3(c, c) + DD;
  if (!(disc > 1e-16 * (DD + cf_mbs_dot3(c, c)))) return CF_ERR_SOLVER;
  /* the branch: where B's prismatic point is predicted along A's axis */
  const double *qA = d->q + m->body_qadr[bA], *qB = d->q + m->body_qadr[bB];
  double RA[9], RB[9], xA[3], xB[3], ug[3];
  frame_of(qA, RA), frame_of(qB, RB);
  for (int i = 0; i < 3; i++) {
    xA[i] = qA[i] + RA[3 * i] * pa[0] + RA[3 * i + 1] * pa[1] + RA[3 * i + 2] * pa[2];
    xB[i] = qB[i] + RB[3 * i] * pbf[0] + RB[3 * i + 1] * pbf[1] + RB[3 * i + 2] * pbf[2];
    ug[i] = RA[3 * i] * u[0] + RA[3 * i + 1] * u[1] + RA[3 * i + 2] * u[2];
  }
  double sig_pred = (xB[0] - xA[0]) * ug[0] + (xB[1] - xA[1]) * ug[1] + (xB[2] - xA[2]) * ug[2];
  double side = sig_pred + cu >= 0 ? 1 : -1, sigma = -cu + side * sqrt(disc), V[3], Vg[3], x[3], Rp[9], Rt[9], Rn[9];
  for (int i = 0; i < 3; i++) V[i] = c[i] + sigma * u[i];
  frame_of(q_prev + m->body_qadr[bA], Rp);
  for (int i = 0; i < 3; i++) Vg[i] = Rp[3 * i] * V[0] + Rp[3 * i + 1] * V[1] + Rp[3 * i + 2] * V[2];
  cf_mbs_cross3(Vg, D, x);
  cf_mbs_axis_angle(n, atan2(cf_mbs_dot3(x, n), cf_mbs_dot3(Vg, D)), Rt);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rn[3 * i + j] = Rt[3 * i] * Rp[j] + Rt[3 * i + 1] * Rp[3 + j] + Rt[3 * i + 2] * Rp[6 + j];
  place(m, d, bA, Rn, fa, P1);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) RB[3 * i + j] = Rn[3 * i] * M[j] + Rn[3 * i + 1] * M[3 + j] + Rn[3 * i + 2] * M[6 + j];
  place(m, d, bB, RB, fb, P2);
  return CF_OK;
}

/* Closed-form planar PRP dyad: each body s slides on a known body K_s and keeps its orientation, R_s = [a f g]_K,global
 * [a f g]_s,body^T (as the RRP's slider); the inner hinge's point on it then runs on a line C_s(sigma_s) = C0_s +
 * sigma_s a_s, C0_s = p_K + R_s (c_s - p_s). The two meet where C0_1 + sigma_1 a_1 = C0_2 + sigma_2 a_2 (in the plane
 * normal to the hinge's axis n; e = C0_2 - C0_1):
 *   sigma_1 = ((e × a_2) . n) / ((a_1 × a_2) . n),  sigma_2 = ((e × a_1) . n) / ((a_1 × a_2) . n)
 * one solution (no branch); parallel lines are the dead point: (a_1 × a_2) . n vanishing, or changing its sign
 * from the step's start (the hinge went through infinity within the step). */
static int prp_closed_form(const cfMbsModel* m, const KinGroup* G, const double* q_prev, cfMbsData* d) {
  double R[2][9], C0[2][3], a[2][3], pK[2][3], n[3], a_prev[2][3];
  const double* fs[2];
  for (int sb = 0; sb < 2; sb++) {
    int jp = G->ext[sb];
    double FK[3][3];
    for (int w = 0; w < 3; w++) cf_mbs__joint_vec(m, d->q, jp, 1 - G->ext_slot[sb], 1 + w, FK[w]);
    cf_mbs__joint_vec(m, q_prev, jp, 1 - G->ext_slot[sb], 1, a_prev[sb]);
    fs[sb] = m->joint_frame + 24 * jp + 12 * G->ext_slot[sb];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) R[sb][3 * i + j] = FK[0][i] * fs[sb][3 + j] + FK[1][i] * fs[sb][6 + j] + FK[2][i] * fs[sb][9 + j];
    cf_mbs__joint_vec(m, d->q, jp, 1 - G->ext_slot[sb], 0, pK[sb]);
    const double* cs = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[sb];
    double v[3] = {cs[0] - fs[sb][0], cs[1] - fs[sb][1], cs[2] - fs[sb][2]};
    for (int i = 0; i < 3; i++)
      C0[sb][i] = pK[sb][i] + R[sb][3 * i] * v[0] + R[sb][3 * i + 1] * v[1] + R[sb][3 * i + 2] * v[2], a[sb][i] = FK[0][i];
  }
  const double* ci = m->joint_frame + 24 * G->inner + 12 * G->inner_slot[0] + 3; /* the hinge's axis on body 0 */
  for (int i = 0; i < 3; i++) n[i] = R[0][3 * i] * ci[0] + R[0][3 * i + 1] * ci[1] + R[0][3 * i + 2] * ci[2];
  double a12[3], e[3], ea[2][3];
  cf_mbs_cross3(a[0], a[1], a12);
  double den = cf_mbs_dot3(a12, n);
  cf_mbs_cross3(a_prev[0], a_prev[1], a12);
  if (!(fabs(den) > 1e-8) || !(den * cf_mbs_dot3(a12, n) > 0)) return CF_ERR_SOLVER;
  for (int i = 0; i < 3; i++) e[i] = C0[1][i] - C0[0][i];
  cf_mbs_cross3(e, a[1], ea[0]);
  cf_mbs_cross3(e, a[0], ea[1]);
  for (int sb = 0; sb < 2; sb++) {
    double sigma = cf_mbs_dot3(ea[sb], n) / den, P[3];
    for (int i = 0; i < 3; i++) P[i] = pK[sb][i] + sigma * a[sb][i];
    place(m, d, G->body[sb], R[sb], fs[sb], P);
  }
  return CF_OK;
}

static int solve_group(const cfMbsModel* m, cfMbsGroupKin* g, int k, cfMbsData* d, double t) {
  const KinGroup* G = &g->group[k];
  int nc = G->ncol, nr = G->nrow, st = CF_OK;
  char who[300];
  group_names(m, G, who, sizeof who);
  if (G->rrr && g->closed_form && rrr_closed_form(m, G, g->save, d) < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point: its two bars cannot "
                    "reach each other (or lie on one line) beyond this position", t, k + 1, g->topo->group_kind[k], who);
  if (G->rrp && g->closed_form && rrp_closed_form(m, G, g->save, d) < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point: the rod stands "
                    "perpendicular to the slider's line (or cannot reach it) beyond this position", t, k + 1,
                    g->topo->group_kind[k], who);
  if (G->rpr && g->closed_form && rpr_closed_form(m, G, g->save, d) < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point: the slide line stands "
                    "perpendicular to the line of the two hinges (or cannot reach the outer hinge) beyond this position",
                    t, k + 1, g->topo->group_kind[k], who);
  if (G->prp && g->closed_form && prp_closed_form(m, G, g->save, d) < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point: its two slide lines are "
                    "parallel (the hinge between them has no place) at this position", t, k + 1, g->topo->group_kind[k], who);
  /* position: Gauss-Newton */
  double res = INFINITY, dxmax = INFINITY;
  int it;
  for (it = 0; it <= m->opt.max_iter; it++) {
    cf_mbs__eval_rows(m, d, d->q, d->qd, t, G->rows, nr, 1, NULL, NULL);
    res = 0;
    for (int r = 0; r < nr; r++) res = fmax(res, fabs(d->phi[G->rows[r]])), g->c[r] = -d->phi[G->rows[r]];
    if (!isfinite(res)) break;
    if (res <= m->opt.tol_phi && (it > 0 ? dxmax <= m->opt.tol_dq : 1)) break;
    if (it == m->opt.max_iter) break;
    group_jacobian(m, g, k, d, NULL, NULL);
    if ((st = normal_solve(g, nr, nc, g->c, g->x, 0)) < 0) break;
    dxmax = cf_mbs_maxabs(nc, g->x);
    scatter(m, G, g->x, d->q, 1);
    g->newton_iters++;
  }
  if (st < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point: its Jacobian is singular "
                    "(the group cannot be assembled beyond this position; the drivers ask for a motion the linkage "
                    "does not have)", t, k + 1, g->topo->group_kind[k], who);
  if (!(res <= m->opt.tol_phi))
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s): Newton did not converge in %d iterations "
                    "(max |Phi| %.3g): past a dead point, or a time step too long", t, k + 1, g->topo->group_kind[k], who,
                    it, res);
  /* velocity: J_S qd_S = -Phi_t - J_K qd_K */
  cf_mbs__eval_rows(m, d, d->q, d->qd, t, G->rows, nr, 1, d->rhs_c, NULL);
  for (int r = 0; r < nr; r++) g->c[r] = -d->rhs_c[G->rows[r]];
  group_jacobian(m, g, k, d, d->qd, g->c);
  if ((st = normal_solve(g, nr, nc, g->c, g->x, 0)) < 0)
    return cf_error(CF_ERR_SOLVER, "t = %.6g s: structural group %d (%s, %s) at a dead point (velocities)", t, k + 1,
                    g->topo->group_kind[k], who);
  scatter(m, G, g->x, d->qd, 0);
  /* acceleration: J_S qdd_S = -bias - J_K qdd_K (the bias at the group's new velocities) */
  cf_mbs__eval_rows(m, d, d->q, d->qd, t, G->rows, nr, 0, NULL, d->econ);
  for (int r = 0; r < nr; r++) g->c[r] = -d->econ[G->rows[r]];
  group_jacobian(m, g, k, d, d->qdd, g->c);
  normal_solve(g, nr, nc, g->c, g->x, 1); /* the velocity solve's factor: the same J (J_K's part is in c) */
  scatter(m, G, g->x, d->qdd, 0);
  return CF_OK;
}

int cf_mbs_group_kin_step(const cfMbsModel* m, cfMbsGroupKin* g, cfMbsData* d) {
  int n = m->nq;
  double h = m->opt.dt, t0 = d->t, t1 = t0 + h;
  memcpy(g->save, d->q, sizeof(double) * (size_t)n);
  memcpy(g->save + n, d->qd, sizeof(double) * (size_t)n);
  memcpy(g->save + 2 * n, d->qdd, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) d->q[i] += h * d->qd[i] + 0.5 * h * h * d->qdd[i];
  int st = CF_OK;
  for (int k = 0; k < g->ngroup && st >= 0; k++) st = solve_group(m, g, k, d, t1);
  if (st < 0) {
    memcpy(d->q, g->save, sizeof(double) * (size_t)n);
    memcpy(d->qd, g->save + n, sizeof(double) * (size_t)n);
    memcpy(d->qdd, g->save + 2 * n, sizeof(double) * (size_t)n);
    return st;
  }
  d->t = t1;
  d->steps++;
  d->iters = 0;
  for (int i = 0; i < m->ncon; i++) d->reaction[i] = NAN;
  cf_mbs__accept_angles(m, d);
  return CF_OK;
}
