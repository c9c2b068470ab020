/* Joints and drivers compiled to scalar equations of the natural coordinates, their values,
 * gradients, time derivatives and acceleration bias, and the rank check of the gradient.
 *
 * Every equation is Phi = sum_k s_k coef_k(t) (a_k . b_k) + c0 + cst(t) with a_k, b_k affine
 * 3-vectors of q (body points, body directions, their differences, ground constants), so
 *   Phi_q x       = sum s coef (a(x).b + a.b(x))         (a(x): the linear part applied to x)
 *   Phi_t         = sum s coef' (a.b) + cst'
 *   Phi'' - Phi_q qdd = sum s [coef'' a.b + 2 coef' (a(qd).b + a.b(qd)) + 2 coef a(qd).b(qd)] + cst''
 * exactly (the equations are quadratic in q). */
#include <stdio.h>
#include <stdlib.h>

#include "cofem/mbs_modal.h"
#include "cofem/mbs_fe.h"
#include "mbs/mbs_internal.h"

/* ---- affine vectors ---------------------------------------------------------------------------- */
static cfMbsVec vec_point(int b, const double p[3]) {
  cfMbsVec v;
  memset(&v, 0, sizeof v);
  if (b < 0) {
    memcpy(v.c, p, 3 * sizeof(double));
    return v;
  }
  v.nb = 1;
  v.body[0] = b;
  v.w[0][0] = 1, v.w[0][1] = p[0], v.w[0][2] = p[1], v.w[0][3] = p[2];
  return v;
}

static cfMbsVec vec_dir(int b, const double e[3]) {
  cfMbsVec v = vec_point(b, e);
  if (b >= 0) v.w[0][0] = 0;
  return v;
}

static cfMbsVec vec_const(const double c[3]) { return vec_point(-1, c); }

/* A - B (at most two bodies in all) */
static cfMbsVec vec_sub(cfMbsVec A, const cfMbsVec* B) {
  for (int i = 0; i < 3; i++) A.c[i] -= B->c[i];
  for (int t = 0; t < B->nb; t++) {
    int s = -1;
    for (int u = 0; u < A.nb; u++)
      if (A.body[u] == B->body[t]) s = u;
    if (s < 0) {
      s = A.nb++;
      A.body[s] = B->body[t];
      memset(A.w[s], 0, sizeof A.w[s]);
    }
    for (int k = 0; k < 4; k++) A.w[s][k] -= B->w[t][k];
  }
  return A;
}

/* ---- local frames --------------------------------------------------------------------------------- */
void cf_mbs__local_point(const cfMbsDef* def, int b, const double P[3], double p[3]) {
  double pos[3], R[9];
  cf_mbs__body_pose(def, b, pos, R);
  double d[3] = {P[0] - pos[0], P[1] - pos[1], P[2] - pos[2]};
  for (int i = 0; i < 3; i++) p[i] = R[i] * d[0] + R[3 + i] * d[1] + R[6 + i] * d[2];
}

static void to_local_dir(const cfMbsDef* def, int b, const double D[3], double e[3]) {
  double pos[3], R[9];
  cf_mbs__body_pose(def, b, pos, R);
  for (int i = 0; i < 3; i++) e[i] = R[i] * D[0] + R[3 + i] * D[1] + R[6 + i] * D[2];
}

/* unit a, and f, g = a x f completing a right-handed frame */
static void frame_from_axis(const double axis[3], double a[3], double f[3], double g[3]) {
  double n = cf_mbs_norm3(axis);
  for (int i = 0; i < 3; i++) a[i] = axis[i] / n;
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (fabs(a[i]) < fabs(a[k])) k = i;
  double e[3] = {0, 0, 0};
  e[k] = 1;
  double ae = cf_mbs_dot3(a, e);
  for (int i = 0; i < 3; i++) f[i] = e[i] - ae * a[i];
  double nf = cf_mbs_norm3(f);
  for (int i = 0; i < 3; i++) f[i] /= nf;
  cf_mbs_cross3(a, f, g);
}

/* ---- equation builder -------------------------------------------------------------------------------- */
static cfMbsCon* new_con(cfMbsModel* m, int kind, int owner, int eq) {
  cfMbsCon* c = &m->con[m->ncon++];
  memset(c, 0, sizeof *c);
  c->kind = kind, c->owner = owner, c->eq = eq;
  c->driver = -1;
  return c;
}

static void add_term(cfMbsCon* c, double s, int coef, cfMbsVec a, cfMbsVec b) {
  int k = c->nterm++;
  c->s[k] = s;
  c->coef[k] = coef;
  c->a[k] = a;
  c->b[k] = b;
}

int cf_mbs__con_add_slot(cfMbsCon* c, int b) {
  if (c->nb < 0) return -1;
  for (int s = 0; s < c->nb; s++)
    if (c->body[s] == b) return 0;
  if (c->nb == c->body_cap) {
    int cap = c->body_cap ? 2 * c->body_cap : 4;
    int* nbody = realloc(c->body, sizeof(int) * (size_t)cap);
    if (!nbody) {
      c->nb = -1;
      return -1;
    }
    c->body = nbody, c->body_cap = cap;
  }
  c->body[c->nb++] = b;
  return 0;
}

/* the bodies the equation involves become its gradient slots (nb = -1: out of memory) */
static void finish_con(cfMbsCon* c) {
  c->nb = 0;
  for (int k = 0; k < c->nterm; k++) {
    const cfMbsVec* vs[2] = {&c->a[k], &c->b[k]};
    for (int v = 0; v < 2; v++)
      for (int t = 0; t < vs[v]->nb; t++)
        if (cf_mbs__con_add_slot(c, vs[v]->body[t]) < 0) return;
  }
}

/* add blocks blk0 .. blk0 + nblk - 1 to the constraint's slots, each once; -1 (and c->nb = -1)
 * when out of memory */
static int add_block_slots(cfMbsCon* c, int blk0, int nblk) {
  for (int l = 0; l < nblk; l++)
    if (cf_mbs__con_add_slot(c, blk0 + l) < 0) return -1;
  return 0;
}
/* the amplitude blocks of the equation's modal point terms become slots too (after finish_con);
 * nb = -1 when they do not fit */
static void finish_modal_slots(const cfMbsModel* m, cfMbsCon* c) {
  for (int k = 0; k < c->nmt; k++) {
    int nm, blk0, nblk;
    cf_mbs__modal_point(m, c->mt_body[k], c->mt_point[k], NULL, NULL, &nm, &blk0, &nblk);
    if (add_block_slots(c, blk0, nblk) < 0) return;
  }
}
static void finish_modal_dir_slots(const cfMbsModel* m, cfMbsCon* c) {
  for (int sd = 0; sd < 2 && c->nmd && c->nb >= 0; sd++) {
    if (c->md_body[sd] < 0) continue;
    int fb, nm, blk0, nblk;
    cf_mbs__modal_dir_rows(m, c->md_body[sd], c->md_dir[sd], &fb, &nm, &blk0, &nblk);
    if (add_block_slots(c, blk0, nblk) < 0) return;
  }
}

static int slot_of(const cfMbsCon* c, int b) {
  for (int s = 0; s < c->nb; s++)
    if (c->body[s] == b) return s;
  return 0;
}

/* ---- compile ----------------------------------------------------------------------------------------- */
static int joint_eq_count(int type) {
  static const int n[] = {3, 5, 5, 4, 4, 6, 1};
  return n[type];
}

int cf_mbs__check_func(const cfMbsFunc* f, const char* who) {
  if (f->type < CF_MBS_FUNC_CONST || f->type > CF_MBS_FUNC_TABLE)
    return cf_error(CF_ERR_SCENE, "%s: unknown function type %d", who, f->type);
  if (f->type == CF_MBS_FUNC_TABLE) {
    if (f->n < 1 || !f->tab) return cf_error(CF_ERR_SCENE, "%s: a table needs at least one point", who);
    for (int i = 0; i < f->n; i++) {
      if (!isfinite(f->tab[2 * i]) || !isfinite(f->tab[2 * i + 1]))
        return cf_error(CF_ERR_SCENE, "%s: table point %d is not finite", who, i);
      if (i > 0 && !(f->tab[2 * i] > f->tab[2 * i - 2]))
        return cf_error(CF_ERR_SCENE, "%s: table times must increase: t[%d] = %.17g after t[%d] = %.17g", who, i,
                        f->tab[2 * i], i - 1, f->tab[2 * i - 2]);
    }
  }
  if (f->type == CF_MBS_FUNC_POLY && (f->n < 1 || f->n > 7))
    return cf_error(CF_ERR_SCENE, "%s: a polynomial takes 1 to 7 coefficients", who);
  for (int i = 0; i < 8; i++)
    if (!isfinite(f->c[i])) return cf_error(CF_ERR_SCENE, "%s: non-finite function parameter", who);
  if (f->type == CF_MBS_FUNC_STEP && !(f->c[3] > f->c[2]))
    return cf_error(CF_ERR_SCENE, "%s: a step needs t1 > t0", who);
  return CF_OK;
}

static int check_body_id(const cfMbsDef* def, int b, const char* who, const char* key) {
  if (b < CF_MBS_GROUND || b >= def->nbody) return cf_error(CF_ERR_SCENE, "%s: %s id %d is not a body", who, key, b);
  return CF_OK;
}

static int finite3(const double* v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* checks of joint j */
static int check_joint(const cfMbsDef* def, const cfMbsModel* m, int j) {
  const cfMbsJointDef* J = &def->joint[j];
  char who[CF_MBS_NAME_MAX + 16];
  snprintf(who, sizeof who, "joint '%s'", J->name);
  if (!J->name[0]) return cf_error(CF_ERR_SCENE, "joint %d has no name", j);
  for (int k = 0; k < j; k++)
    if (!strcmp(def->joint[k].name, J->name)) return cf_error(CF_ERR_SCENE, "joint '%s' is defined twice", J->name);
  if (J->type < 0 || J->type >= CF_MBS_JOINT_TYPES) return cf_error(CF_ERR_SCENE, "%s: unknown type %d", who, J->type);
  int st = check_body_id(def, J->body1, who, "body1");
  if (st >= 0) st = check_body_id(def, J->body2, who, "body2");
  if (st < 0) return st;
  if (J->body1 == J->body2)
    return cf_error(CF_ERR_SCENE, "%s connects body '%s' to itself", who,
                    J->body1 < 0 ? "ground" : def->body[J->body1].name);
  if (!finite3(J->point) || !finite3(J->axis) || !finite3(J->axis2) || !finite3(J->point2) || !isfinite(J->distance))
    return cf_error(CF_ERR_SCENE, "%s: non-finite number in its definition", who);
  if (J->type != CF_MBS_SPHERICAL && J->type != CF_MBS_DISTANCE && cf_mbs_norm3(J->axis) < 1e-12)
    return cf_error(CF_ERR_SCENE, "%s: axis has zero length", who);
  if (J->type == CF_MBS_UNIVERSAL) {
    if (cf_mbs_norm3(J->axis2) < 1e-12) return cf_error(CF_ERR_SCENE, "%s: axis2 has zero length", who);
    double c = cf_mbs_dot3(J->axis, J->axis2) / (cf_mbs_norm3(J->axis) * cf_mbs_norm3(J->axis2));
    if (fabs(c) > 1e-9)
      return cf_error(CF_ERR_SCENE, "%s: axis and axis2 must be perpendicular (they are %.6g degrees apart)", who,
                      acos(fmax(-1, fmin(1, c))) * 180 / M_PI);
  }
  if (J->type == CF_MBS_DISTANCE) {
    double D[3] = {J->point2[0] - J->point[0], J->point2[1] - J->point[1], J->point2[2] - J->point[2]};
    if (J->distance == 0 || (J->distance < 0 && cf_mbs_norm3(D) < 1e-12))
      return cf_error(CF_ERR_SCENE, "%s: zero distance (use a spherical joint)", who);
  }
  for (int sl = 0; sl < 2; sl++) {
    int k = sl ? J->modal_point2 : J->modal_point1, b = sl ? J->body2 : J->body1;
    int fe = b >= 0 ? cf_mbs_def_fe_index(def, b) : -1;
    if (fe >= 0) { /* FE body: at one of its points, spherical or revolute */
      if (k < 0)
        return cf_error(CF_ERR_SCENE, "%s: body%d '%s' is an FE body: the joint must sit at one of its node sets "
                        "(\"node%d\")", who, sl + 1, def->body[b].name, sl + 1);
      if (k >= def->fe[fe].npoint)
        return cf_error(CF_ERR_SCENE, "%s: point %d of FE body '%s' does not exist", who, k, def->body[b].name);
      if (J->type != CF_MBS_SPHERICAL && J->type != CF_MBS_REVOLUTE && J->type != CF_MBS_FIXED)
        return cf_error(CF_ERR_SCENE, "%s: a joint at a node set of an FE body must be spherical, revolute or fixed "
                        "(attach a virtual body to the set with one of those... or use a modal body)", who);
      int fe1 = J->body1 >= 0 ? cf_mbs_def_fe_index(def, J->body1) : -1;
      if (sl == 1 && fe1 >= 0 && (def->fe[fe].corotational || def->fe[fe1].corotational))
        return cf_error(CF_ERR_SCENE, "%s: a joint between two FE bodies, one of them corotational, is not supported "
                        "(put a virtual body between them)", who);
      if (sl == 1 && fe1 >= 0 && J->type != CF_MBS_SPHERICAL)
        return cf_error(CF_ERR_SCENE, "%s: a %s joint between two FE bodies is not supported (put a virtual "
                        "body between them)", who, J->type == CF_MBS_FIXED ? "fixed" : "revolute");
      continue;
    }
    if (k == -1) continue;
    int ib = cf_mbs_modal_index(m, b);
    if (ib < 0) return cf_error(CF_ERR_SCENE, "%s: body%d '%s' has no modal points (it is not a modal body)", who,
                                sl + 1, b < 0 ? "ground" : def->body[b].name);
    if (k < 0 || k >= def->modal[ib].npoint)
      return cf_error(CF_ERR_SCENE, "%s: modal point %d of body '%s' does not exist", who, k, def->body[b].name);
    if (J->type != CF_MBS_SPHERICAL && J->type != CF_MBS_REVOLUTE && J->type != CF_MBS_UNIVERSAL &&
        J->type != CF_MBS_FIXED)
      return cf_error(CF_ERR_SCENE, "%s: a joint at a modal point must be spherical, revolute, universal or fixed", who);
  }
  return CF_OK;
}

/* checks of driver k */
static int check_driver(const cfMbsDef* def, int k) {
  const int nj = def->njoint;
  const cfMbsDriverDef* D = &def->driver[k];
  char who[CF_MBS_NAME_MAX + 16];
  snprintf(who, sizeof who, "driver '%s'", D->name);
  if (!D->name[0]) return cf_error(CF_ERR_SCENE, "driver %d has no name", k);
  for (int i = 0; i < k; i++)
    if (!strcmp(def->driver[i].name, D->name)) return cf_error(CF_ERR_SCENE, "driver '%s' is defined twice", D->name);
  int st = cf_mbs__check_func(&D->f, who);
  if (st < 0) return st;
  if (D->type == CF_MBS_DRIVE_ANGLE || D->type == CF_MBS_DRIVE_TRANSLATION) {
    if (D->joint < 0 || D->joint >= nj) return cf_error(CF_ERR_SCENE, "%s: joint id %d does not exist", who, D->joint);
    int t = def->joint[D->joint].type;
    for (int sl = 0; sl < 2; sl++) { /* an angle driver at an FE set: its angle is the set's measure */
      int b = sl ? def->joint[D->joint].body2 : def->joint[D->joint].body1;
      if (b >= 0 && cf_mbs_def_fe_index(def, b) >= 0 && D->type != CF_MBS_DRIVE_ANGLE)
        return cf_error(CF_ERR_SCENE, "%s: joint '%s' is on FE body '%s': only angle drivers act at an FE body's "
                        "joint (drive a virtual body welded to the set instead)", who, def->joint[D->joint].name,
                        def->body[b].name);
    }
    if (D->type == CF_MBS_DRIVE_ANGLE && t != CF_MBS_REVOLUTE && t != CF_MBS_CYLINDRICAL)
      return cf_error(CF_ERR_SCENE, "%s: an angle driver needs a revolute or cylindrical joint; '%s' is not one", who,
                      def->joint[D->joint].name);
    if (D->type == CF_MBS_DRIVE_TRANSLATION && t != CF_MBS_PRISMATIC && t != CF_MBS_CYLINDRICAL)
      return cf_error(CF_ERR_SCENE, "%s: a translation driver needs a prismatic or cylindrical joint; '%s' is not one",
                      who, def->joint[D->joint].name);
  } else if (D->type == CF_MBS_DRIVE_DISTANCE) {
    st = check_body_id(def, D->body1, who, "body1");
    if (st >= 0) st = check_body_id(def, D->body2, who, "body2");
    if (st < 0) return st;
    if (D->body1 == D->body2) return cf_error(CF_ERR_SCENE, "%s: both points are on the same body", who);
    if (!finite3(D->point1) || !finite3(D->point2)) return cf_error(CF_ERR_SCENE, "%s: non-finite point", who);
    double P[3] = {D->point2[0] - D->point1[0], D->point2[1] - D->point1[1], D->point2[2] - D->point1[2]};
    if (cf_mbs_norm3(P) < 1e-12) return cf_error(CF_ERR_SCENE, "%s: the two points coincide at t = 0", who);
    double y[3];
    cf_mbs_func_eval(&D->f, 0, y);
    if (!D->f.rate && !(y[0] > 0))
      return cf_error(CF_ERR_SCENE, "%s: the prescribed distance at t = 0 is %g; it must be positive", who, y[0]);
  } else
    return cf_error(CF_ERR_SCENE, "%s: unknown type %d", who, D->type);
  return CF_OK;
}

/* the joint, driver and equation arrays for nj joints, nd drivers and ncon equations */
static int alloc_constraints(cfMbsModel* m, int nj, int nd, int ncon) {
  m->njoint = nj;
  m->ndriver = nd;
  m->joint_name = calloc((size_t)(nj ? nj : 1), sizeof *m->joint_name);
  m->joint_type = calloc((size_t)(nj ? nj : 1), sizeof(int));
  m->joint_body = calloc((size_t)(2 * nj + 1), sizeof(int));
  m->joint_frame = calloc((size_t)(24 * nj + 1), sizeof(double));
  m->joint_con0 = calloc((size_t)(nj ? nj : 1), sizeof(int));
  m->joint_mpoint = calloc((size_t)(2 * nj + 1), sizeof(int));
  m->joint_fe_dir = malloc(sizeof(int) * (size_t)(4 * nj + 1));
  for (int k = 0; m->joint_fe_dir && k < 4 * nj; k++) m->joint_fe_dir[k] = -1;
  m->joint_ncon = calloc((size_t)(nj ? nj : 1), sizeof(int));
  m->driver_name = calloc((size_t)(nd ? nd : 1), sizeof *m->driver_name);
  m->driver_type = calloc((size_t)(nd ? nd : 1), sizeof(int));
  m->driver_joint = calloc((size_t)(nd ? nd : 1), sizeof(int));
  m->driver_f = calloc((size_t)(nd ? nd : 1), sizeof(cfMbsFunc));
  m->driver_offset = calloc((size_t)(nd ? nd : 1), sizeof(double));
  m->driver_con = calloc((size_t)(nd ? nd : 1), sizeof(int));
  m->con = calloc((size_t)ncon, sizeof(cfMbsCon));
  int ok = m->joint_name && m->joint_type && m->joint_body && m->joint_frame && m->joint_con0 && m->joint_mpoint &&
           m->joint_fe_dir && m->joint_ncon &&
       m->driver_name && m->driver_type && m->driver_joint && m->driver_f && m->driver_offset && m->driver_con && m->con;
  if (!ok) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  m->ncon = 0;
  return CF_OK;
}

/* rigidity: (u, v, w) orthonormal (not for FE bodies: their blocks are node positions) */
static void compile_rigidity(const cfMbsDef* def, cfMbsModel* m) {
  for (int b = 0; b < def->nbody; b++) {
    if (cf_mbs_def_fe_index(def, b) >= 0) continue;
    static const int pairs[6][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int e = 0; e < 6; e++) {
      cfMbsCon* c = new_con(m, CF_MBS_CON_RIGID, b, e);
      cfMbsVec A, B;
      memset(&A, 0, sizeof A);
      A.nb = 1, A.body[0] = b, A.w[0][pairs[e][0]] = 1;
      B = A;
      memset(B.w, 0, sizeof B.w);
      B.w[0][pairs[e][1]] = 1;
      add_term(c, 1, CF_MBS_COEF_ONE, A, B);
      c->c0 = e < 3 ? -1 : 0;
      finish_con(c);
    }
  }
}

/* A joint being compiled: its bodies, frame and points, and the next equation's index. */
typedef struct JointCtx {
  const cfMbsJointDef* J;
  int j, b1, b2;
  int mp[2], mib[2], fe[2], fev[2]; /* per side: modal or FE point, modal body, FE body, FE point vector */
  double a[3], f[3], g[3];          /* the joint's frame at t = 0 (global) */
  const double* fr;                 /* its frame per body, m->joint_frame + 24 j */
  cfMbsVec D;                       /* P2 - P1 */
  int eq;
} JointCtx;

/* the joint's frame: global at t = 0, then per body (m->joint_frame); P2 - P1 */
static void joint_frame(const cfMbsDef* def, cfMbsModel* m, int j, JointCtx* x) {
  const cfMbsJointDef* J = x->J = &def->joint[j];
  int b1 = x->b1 = J->body1, b2 = x->b2 = J->body2;
  x->j = j;
  snprintf(m->joint_name[j], CF_MBS_NAME_MAX, "%s", J->name);
  m->joint_type[j] = J->type;
  m->joint_body[2 * j] = b1, m->joint_body[2 * j + 1] = b2;
  m->joint_con0[j] = m->ncon;
  m->joint_ncon[j] = joint_eq_count(J->type);
  /* global frame at t = 0, then per body */
  double *a = x->a, *f = x->f, *g = x->g;
  a[0] = 0, a[1] = 0, a[2] = 1;
  if (J->type != CF_MBS_SPHERICAL && J->type != CF_MBS_DISTANCE) memcpy(a, J->axis, sizeof x->a);
  frame_from_axis(a, a, f, g);
  double P1g[3], P2g[3];
  memcpy(P1g, J->point, sizeof P1g);
  memcpy(P2g, J->type == CF_MBS_DISTANCE ? J->point2 : J->point, sizeof P2g);
  /* a modal point fixes the joint's point: where the point is at t = 0 (amplitudes left out) */
  int *mp = x->mp, *mib = x->mib, *fe = x->fe, *fev = x->fev;
  mp[0] = J->modal_point1, mp[1] = J->modal_point2;
  mib[0] = mib[1] = fe[0] = fe[1] = fev[0] = fev[1] = -1;
  for (int s = 1; s >= 0; s--) {
    m->joint_mpoint[2 * j + s] = mp[s];
    if (mp[s] < 0) continue;
    int bs = s ? b2 : b1;
    if ((fe[s] = cf_mbs_fe_index(m, bs)) >= 0) { /* FE point: where its nodes' mean is at t = 0 */
      fev[s] = cf_mbs__fe_point(m, fe[s], mp[s], P1g);
      if (s == 1 || mp[1] < 0) memcpy(P2g, P1g, sizeof P2g);
      continue;
    }
    int b = s ? b2 : b1, nm, blk0, nblk;
    double sbar[3], pos[3], R[9];
    mib[s] = cf_mbs_modal_index(m, b);
    cf_mbs__modal_point(m, mib[s], mp[s], sbar, NULL, &nm, &blk0, &nblk);
    cf_mbs__body_pose(def, b, pos, R);
    for (int i = 0; i < 3; i++) P1g[i] = pos[i] + R[3 * i] * sbar[0] + R[3 * i + 1] * sbar[1] + R[3 * i + 2] * sbar[2];
    if (s == 1 || mp[1] < 0) memcpy(P2g, P1g, sizeof P2g);
  }
  double* fr = m->joint_frame + 24 * j;
  x->fr = fr;
  for (int s = 0; s < 2; s++) {
    int b = s ? b2 : b1;
    cf_mbs__local_point(def, b, s ? P2g : P1g, fr + 12 * s);
    to_local_dir(def, b, a, fr + 12 * s + 3);
    to_local_dir(def, b, f, fr + 12 * s + 6);
    to_local_dir(def, b, g, fr + 12 * s + 9);
  }
  if (J->type == CF_MBS_UNIVERSAL) {
    double a2[3], n2 = cf_mbs_norm3(J->axis2);
    for (int i = 0; i < 3; i++) a2[i] = J->axis2[i] / n2;
    to_local_dir(def, b2, a2, fr + 12 + 3);
  }
  cfMbsVec P1 = vec_point(b1, fr), P2 = vec_point(b2, fr + 12);
  /* at an FE point, the point is the FE term S = mean of the nodes, added to the equations below */
  static const double origin[3] = {0, 0, 0};
  if (fe[0] >= 0) P1 = vec_const(origin);
  if (fe[1] >= 0) P2 = vec_const(origin);
  x->D = vec_sub(P2, &P1);
  x->eq = 0;
}

/* common point: P2 - P1 = 0 (with the FE points' node means and the modal points' amplitudes) */
static int joint_common_point(cfMbsModel* m, JointCtx* x) {
  static const double ex[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const int *mp = x->mp, *fe = x->fe;
  for (int k = 0; k < 3; k++) {
    cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
    add_term(c, 1, CF_MBS_COEF_ONE, x->D, vec_const(ex[k]));
    for (int sl = 0; sl < 2; sl++) /* D = P2 - P1: + S2 - S1 of FE points */
      if (fe[sl] >= 0) {
        int n = c->nft++;
        c->ft_fe[n] = fe[sl], c->ft_vec[n] = x->fev[sl], c->ft_comp[n] = k, c->ft_s[n] = sl ? 1 : -1;
      }
    for (int sl = 0; sl < 2; sl++) /* D = P2 - P1: + A2 Phibar2 y2 - A1 Phibar1 y1 */
      if (mp[sl] >= 0 && fe[sl] < 0) {
        int n = c->nmt++;
        c->mt_body[n] = x->mib[sl], c->mt_point[n] = mp[sl], c->mt_comp[n] = k, c->mt_sign[n] = sl ? 1 : -1;
      }
    finish_con(c);
    finish_modal_slots(m, c);
    cf_mbs__fe_slots(m, c);
    if (c->nb < 0) return cf_error(CF_ERR_NOMEM, "joint '%s': out of memory for its equations' gradients", x->J->name);
  }
  return CF_OK;
}

/* FE point of a revolute joint: the set's axis (its least-squares measure, cf_mbs__fe_axis)
 * perpendicular to the other body's f and g; of a fixed joint also the set's f perpendicular to
 * the other body's g (no rotation about the axis). A flat set (an end face) whose normal is the
 * joint's axis: its f and g (in its plane) perpendicular to the other body's axis, and for a fixed
 * joint its f perpendicular to the other's g. The set's f (or g) measure is kept for the joint's
 * angle (m->joint_fe_dir). */
static int fe_axis_modal_side(const cfMbsDef* def, cfMbsModel* m, const JointCtx* x, cfMbsCon* c, int which);
static int joint_fe_axis(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  const cfMbsJointDef* J = x->J;
  const int t = J->type, *fe = x->fe, *mp = x->mp;
  int s = fe[1] >= 0, ob = s ? x->b1 : x->b2;
  double L, Lf = 1, Lg = 1;
  char who[CF_MBS_NAME_MAX + 16];
  snprintf(who, sizeof who, "joint '%s'", J->name);
  const char* set = def->fe[cf_mbs_def_fe_index(def, s ? x->b2 : x->b1)].point[mp[s]].name;
  int normal = 0, nf = 0, ng = 0;
  int v = cf_mbs__fe_axis(m, fe[s], mp[s], x->a, who, set, &L, &normal);
  if (v < 0) return v;
  /* the set's f and g where they can be measured (a flat set's normal cannot) */
  int vf = cf_mbs__fe_axis(m, fe[s], mp[s], x->f, who, set, &Lf, &nf);
  if (vf < 0) return vf;
  int vg = -1;
  if (normal || nf) {
    vg = cf_mbs__fe_axis(m, fe[s], mp[s], x->g, who, set, &Lg, &ng);
    if (vg < 0) return vg;
  }
  m->joint_fe_dir[4 * x->j + 2 * s] = fe[s];
  m->joint_fe_dir[4 * x->j + 2 * s + 1] = nf ? -2 - vg : vf;
  const double* fo = x->fr + 12 * (1 - s) + 3; /* a, f, g of the other body */
  /* the equations: (vector of the set, its rest length, the other body's direction) */
  int nv = 0, vec[3];
  double len[3];
  const double* dir[3];
  if (!normal) {
    vec[nv] = v, len[nv] = L, dir[nv++] = fo + 3; /* a_set . f_other */
    vec[nv] = v, len[nv] = L, dir[nv++] = fo + 6; /* a_set . g_other */
    if (t == CF_MBS_FIXED) {
      if (nf)
        return cf_error(CF_ERR_SCENE, "%s: the joint's f direction is the flat node set '%s''s normal: give the fixed "
                        "joint an axis along the normal, or an f in the set's plane", who, set);
      vec[nv] = vf, len[nv] = Lf, dir[nv++] = fo + 6; /* f_set . g_other */
    }
  } else {
    vec[nv] = vf, len[nv] = Lf, dir[nv++] = fo; /* f_set . a_other */
    vec[nv] = vg, len[nv] = Lg, dir[nv++] = fo; /* g_set . a_other */
    if (t == CF_MBS_FIXED) vec[nv] = vf, len[nv] = Lf, dir[nv++] = fo + 6; /* f_set . g_other */
  }
  const int other_modal = x->mib[1 - s] >= 0; /* a modal body's node set: its measured directions */
  for (int k = 0; k < nv; k++) {
    cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
    c->nft = 1;
    c->ft_fe[0] = fe[s], c->ft_vec[0] = vec[k], c->ft_comp[0] = -1, c->ft_s[0] = 1 / len[k];
    c->ft_b[0] = vec_dir(ob, dir[k]);
    finish_con(c);
    cf_mbs__fe_slots(m, c);
    if (c->nb < 0)
      return cf_error(CF_ERR_NOMEM, "joint '%s': out of memory for its equations' gradients", J->name);
    if (other_modal) {
      int st = fe_axis_modal_side(def, m, x, c, (int)((dir[k] - fo) / 3) + 1);
      if (st < 0) return st;
    }
  }
  return CF_OK;
}

/* the interface point of reduction r whose set is nodes[0 .. nn - 1] (same nodes, any order), or -1 */
int cf_mbs__reduction_point_of(const cfReduction* r, const int* nodes, int nn) {
  for (int k = 0; r && k < r->npoint; k++) {
    const cfReductionPoint* P = &r->points[k];
    if (P->nnode != nn) continue;
    int all = 1;
    for (int i = 0; i < nn && all; i++) {
      int found = 0;
      for (int l = 0; l < nn && !found; l++) found = P->nodes[l] == nodes[i];
      all = found;
    }
    if (all) return k;
  }
  return -1;
}

/* A joint axis at a modal point is the node set's axis (cf_mbs__modal_dir), not the frame's: the
 * equation c (one bilinear term a . b: a a direction of body2 (wa: 1 a, 2 f, 3 g of the joint frame),
 * b one of body1 (wb); a universal joint's a1 . a2 when wa < 0) gets the modal parts of the sides
 * that sit at modal points; at a reduction's interface point, the point's own rotation (exact:
 * issue 30, "joints at such a point hold its rotation"). */
static int set_axes(const cfMbsDef* def, cfMbsModel* m, const JointCtx* x, cfMbsCon* c, int wa, int wb) {
  const cfMbsJointDef* J = x->J;
  int side[2] = {1, 0}, which[2] = {wa, wb}; /* the term's a is on body2, b on body1 */
  if (wa < 0) side[0] = 0, side[1] = 1, which[0] = which[1] = 1; /* universal: a1 . a2 */
  c->md_body[0] = c->md_body[1] = -1;
  for (int k = 0; k < 2; k++) {
    int sl = side[k], ib = x->mib[sl];
    if (ib < 0) continue;
    int b = sl ? x->b2 : x->b1, mp = x->mp[sl];
    const cfMbsModalDef* md = NULL;
    for (int i = 0; i < def->nmodal; i++)
      if (def->modal[i].body == b) md = &def->modal[i];
    if (!md) continue;
    const cfMbsModalPoint* pt = &md->point[mp];
    char who[CF_MBS_NAME_MAX + 16];
    snprintf(who, sizeof who, "joint '%s'", J->name);
    /* at an interface point of the reduction (its set, node for node): the point's own rotation */
    int ip = cf_mbs__reduction_point_of(md->red, pt->nodes, pt->nnode), dir, st;
    if (ip >= 0)
      st = cf_mbs__modal_dir_point(m, ib, md->red, md->first_mode < 0 ? md->red->nrigid : md->first_mode, ip,
                                   x->fr + 12 * sl + 3 * which[k], &dir);
    else
      st = cf_mbs__modal_dir(m, ib, pt->nodes, pt->nnode, x->fr + 12 * sl + 3 * which[k], who, pt->name, &dir);
    if (st < 0) return st;
    if (dir < 0) continue;
    c->md_body[k] = ib, c->md_dir[k] = dir, c->nmd = 1;
  }
  if (c->nmd) {
    finish_modal_dir_slots(m, c);
    if (c->nb < 0)
      return cf_error(CF_ERR_NOMEM, "joint '%s': out of memory for its equations' gradients", J->name);
  }
  return CF_OK;
}

/* The FE axis equation c (one FE term: the set's measure d . the other body's direction b) where the
 * other side sits at a modal point: b becomes that set's direction b + A Psi y (md_body[1],
 * md_dir[1]; which: 1 a, 2 f, 3 g of the joint's frame on that body), as set_axes does for rigid-
 * frame terms. */
static int fe_axis_modal_side(const cfMbsDef* def, cfMbsModel* m, const JointCtx* x, cfMbsCon* c, int which) {
  const int s = x->fe[1] >= 0, sl = 1 - s; /* the modal side */
  const int ib = x->mib[sl], b = sl ? x->b2 : x->b1, mp = x->mp[sl];
  c->md_body[0] = c->md_body[1] = -1;
  const cfMbsModalDef* md = NULL;
  for (int i = 0; i < def->nmodal; i++)
    if (def->modal[i].body == b) md = &def->modal[i];
  if (ib < 0 || !md) return CF_OK;
  const cfMbsModalPoint* pt = &md->point[mp];
  char who[CF_MBS_NAME_MAX + 16];
  snprintf(who, sizeof who, "joint '%s'", x->J->name);
  int ip = cf_mbs__reduction_point_of(md->red, pt->nodes, pt->nnode), dir, st;
  if (ip >= 0)
    st = cf_mbs__modal_dir_point(m, ib, md->red, md->first_mode < 0 ? md->red->nrigid : md->first_mode, ip,
                                 x->fr + 12 * sl + 3 * which, &dir);
  else
    st = cf_mbs__modal_dir(m, ib, pt->nodes, pt->nnode, x->fr + 12 * sl + 3 * which, who, pt->name, &dir);
  if (st < 0) return st;
  if (dir < 0) return CF_OK; /* a clamped point: the frame's axes are its axes */
  c->md_body[1] = ib, c->md_dir[1] = dir, c->nmd = 1;
  finish_modal_dir_slots(m, c);
  if (c->nb < 0) return cf_error(CF_ERR_NOMEM, "joint '%s': out of memory for its equations' gradients", x->J->name);
  return CF_OK;
}

/* parallel axes: a2 perpendicular to f1 and g1 (at modal points, the node sets' axes) */
static int joint_parallel_axes(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  const double *f1 = x->fr + 6, *g1 = x->fr + 9, *a2 = x->fr + 15;
  cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, vec_dir(x->b2, a2), vec_dir(x->b1, f1));
  finish_con(c);
  int st = set_axes(def, m, x, c, 1, 2);
  if (st < 0) return st;
  c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, vec_dir(x->b2, a2), vec_dir(x->b1, g1));
  finish_con(c);
  return set_axes(def, m, x, c, 1, 3);
}

/* common line: the offset perpendicular to the axis vanishes */
static void joint_common_line(cfMbsModel* m, JointCtx* x) {
  const double *f1 = x->fr + 6, *g1 = x->fr + 9;
  cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, x->D, vec_dir(x->b1, f1));
  finish_con(c);
  c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, x->D, vec_dir(x->b1, g1));
  finish_con(c);
}

/* no rotation about the axis: f2 perpendicular to g1 */
static int joint_no_twist(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  const double *g1 = x->fr + 9, *f2 = x->fr + 18;
  cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, vec_dir(x->b2, f2), vec_dir(x->b1, g1));
  finish_con(c);
  return set_axes(def, m, x, c, 2, 3);
}

/* universal: a1 perpendicular to a2 */
static int joint_universal(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  const double *a1 = x->fr + 3, *a2 = x->fr + 15;
  cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 1, CF_MBS_COEF_ONE, vec_dir(x->b1, a1), vec_dir(x->b2, a2));
  finish_con(c);
  return set_axes(def, m, x, c, -1, -1);
}

/* distance: (|P2 - P1|^2 - L^2) / 2 */
static void joint_distance(cfMbsModel* m, JointCtx* x) {
  const cfMbsJointDef* J = x->J;
  double L = J->distance;
  if (L < 0) {
    double d0[3] = {J->point2[0] - J->point[0], J->point2[1] - J->point[1], J->point2[2] - J->point[2]};
    L = cf_mbs_norm3(d0);
  }
  cfMbsCon* c = new_con(m, CF_MBS_CON_JOINT, x->j, x->eq++);
  add_term(c, 0.5, CF_MBS_COEF_ONE, x->D, x->D);
  c->c0 = -0.5 * L * L;
  finish_con(c);
}

/* spherical: a common point */
static int compile_spherical(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  (void)def;
  return joint_common_point(m, x);
}

/* revolute: a common point and parallel axes (at an FE point, the set's axis) */
static int compile_revolute(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  int st = joint_common_point(m, x);
  if (st < 0) return st;
  if (x->fe[0] >= 0 || x->fe[1] >= 0) return joint_fe_axis(def, m, x);
  return joint_parallel_axes(def, m, x);
}

/* universal: a common point and perpendicular axes */
static int compile_universal(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  int st = joint_common_point(m, x);
  if (st < 0) return st;
  return joint_universal(def, m, x);
}

/* fixed: a common point, parallel axes and no rotation about them (at an FE point, the set's
 * axis and f) */
static int compile_fixed(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  int st = joint_common_point(m, x);
  if (st < 0) return st;
  if (x->fe[0] >= 0 || x->fe[1] >= 0) return joint_fe_axis(def, m, x);
  if ((st = joint_parallel_axes(def, m, x)) < 0) return st;
  return joint_no_twist(def, m, x);
}

/* cylindrical: parallel axes and a common line */
static int compile_cylindrical(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  int st = joint_parallel_axes(def, m, x);
  if (st < 0) return st;
  joint_common_line(m, x);
  return CF_OK;
}

/* prismatic: parallel axes, a common line and no rotation about it */
static int compile_prismatic(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  int st = joint_parallel_axes(def, m, x);
  if (st < 0) return st;
  joint_common_line(m, x);
  return joint_no_twist(def, m, x);
}

/* distance: the two points' distance */
static int compile_distance(const cfMbsDef* def, cfMbsModel* m, JointCtx* x) {
  (void)def;
  joint_distance(m, x);
  return CF_OK;
}

/* joint j: its frame and equations */
static int compile_joint(const cfMbsDef* def, cfMbsModel* m, int j) {
  typedef int (*CompileJoint)(const cfMbsDef* def, cfMbsModel* m, JointCtx* x);
  static const CompileJoint by_type[CF_MBS_JOINT_TYPES] = {
      [CF_MBS_SPHERICAL] = compile_spherical,     [CF_MBS_REVOLUTE] = compile_revolute,
      [CF_MBS_UNIVERSAL] = compile_universal,     [CF_MBS_FIXED] = compile_fixed,
      [CF_MBS_CYLINDRICAL] = compile_cylindrical, [CF_MBS_PRISMATIC] = compile_prismatic,
      [CF_MBS_DISTANCE] = compile_distance};
  JointCtx x;
  memset(&x, 0, sizeof x);
  joint_frame(def, m, j, &x);
  return by_type[x.J->type](def, m, &x);
}

/* An angle driver at a joint with an FE node set on side s: the angle cf_mbs__joint_raw_angle
 * measures, atan2(g1 . f2, f1 . f2), with the set's f the node sum d_f (or, where f is a flat set's
 * normal, d_g x a_o from its g measure; a_o, f_o, g_o the other body's axes) and g1 = a2 x f1 when
 * the set is body1. Written as sin(th) (f1 . f2) - cos(th) (g1 . f2) = sin(th - angle), every term
 * is (node sum) . (the other body's direction), times sin(th) or -cos(th):
 *   s = 1 (body2 at the set):  f: sin th (d_f . f_o) - cos th (d_f . g_o)
 *                              g: sin th (d_g . g_o) + cos th (d_g . f_o)   (f2 = d_g x a_o)
 *   s = 0 (body1 at the set):  f: sin th (d_f . f_o) + cos th (d_f . g_o)   (g1 = a_o x d_f)
 *                              g: sin th (d_g . g_o) - cos th (d_g . f_o)   (f1 = d_g x a_o,
 *                                 g1 = a_o x f1 = d_g - a_o (a_o . d_g): the second part is
 *                                 perpendicular to f_o)
 * with the vectors' rest length 1. The FE terms' time-dependent coefficients: ft_coef. */
static void driver_fe_angle(cfMbsModel* m, cfMbsCon* c, int j) {
  const int s = m->joint_fe_dir[4 * j + 2] >= 0, ob = m->joint_body[2 * j + 1 - s];
  const int ib = m->joint_fe_dir[4 * j + 2 * s], v = m->joint_fe_dir[4 * j + 2 * s + 1];
  const double* fo = m->joint_frame + 24 * j + 12 * (1 - s) + 6; /* the other body's f, g */
  const int gmeas = v < -1;
  /* per case: the directions (f_o or g_o) of the sin and the cos term, and the cos term's sign */
  const double* dsin = gmeas ? fo + 3 : fo;
  const double* dcos = gmeas ? fo : fo + 3;
  const double scos = (s == 1) != gmeas ? 1 : -1; /* the -cos term's sign (the four cases above) */
  c->nft = 2;
  for (int k = 0; k < 2; k++) {
    c->ft_fe[k] = ib, c->ft_vec[k] = gmeas ? -2 - v : v, c->ft_comp[k] = -1;
    c->ft_coef[k] = k ? CF_MBS_COEF_NEGCOS : CF_MBS_COEF_SIN;
    c->ft_s[k] = k ? scos : 1;
    c->ft_b[k] = vec_dir(ob, k ? dcos : dsin);
  }
  finish_con(c);
  cf_mbs__fe_slots(m, c);
}

/* driver k: its equation */
static void compile_driver(const cfMbsDef* def, cfMbsModel* m, int k) {
  const cfMbsDriverDef* Dd = &def->driver[k];
  snprintf(m->driver_name[k], CF_MBS_NAME_MAX, "%s", Dd->name);
  m->driver_type[k] = Dd->type;
  m->driver_joint[k] = Dd->joint;
  m->driver_f[k] = Dd->f;
  m->driver_offset[k] = 0;
  m->driver_con[k] = m->ncon;
  cfMbsCon* c = new_con(m, CF_MBS_CON_DRIVER, k, 0);
  c->driver = k;
  /* a revolute at an FE set keeps the set's f (or g) measure (joint_fe_axis) */
  if (Dd->type == CF_MBS_DRIVE_ANGLE && (m->joint_fe_dir[4 * Dd->joint] >= 0 || m->joint_fe_dir[4 * Dd->joint + 2] >= 0)) {
    driver_fe_angle(m, c, Dd->joint);
    return;
  } else if (Dd->type == CF_MBS_DRIVE_ANGLE) {
    /* sin(f) (f1.f2) - cos(f) (g1.f2) = sin(f - angle) */
    int j = Dd->joint, b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double* fr = m->joint_frame + 24 * j;
    add_term(c, 1, CF_MBS_COEF_SIN, vec_dir(b2, fr + 18), vec_dir(b1, fr + 6));
    add_term(c, 1, CF_MBS_COEF_NEGCOS, vec_dir(b2, fr + 18), vec_dir(b1, fr + 9));
  } else if (Dd->type == CF_MBS_DRIVE_TRANSLATION) {
    /* (P2 - P1) . a1 - f */
    int j = Dd->joint, b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    const double* fr = m->joint_frame + 24 * j;
    cfMbsVec P1 = vec_point(b1, fr), P2 = vec_point(b2, fr + 12);
    add_term(c, 1, CF_MBS_COEF_ONE, vec_sub(P2, &P1), vec_dir(b1, fr + 3));
    c->cst = CF_MBS_CST_NEG_F;
  } else {
    /* (|P2 - P1|^2 - f^2) / 2 */
    double p1[3], p2[3];
    cf_mbs__local_point(def, Dd->body1, Dd->point1, p1);
    cf_mbs__local_point(def, Dd->body2, Dd->point2, p2);
    cfMbsVec P1 = vec_point(Dd->body1, p1), P2 = vec_point(Dd->body2, p2);
    cfMbsVec D = vec_sub(P2, &P1);
    add_term(c, 0.5, CF_MBS_COEF_ONE, D, D);
    c->cst = CF_MBS_CST_NEG_HALF_F2;
    if (Dd->f.rate) {
      double d0[3] = {Dd->point2[0] - Dd->point1[0], Dd->point2[1] - Dd->point1[1], Dd->point2[2] - Dd->point1[2]};
      m->driver_offset[k] = cf_mbs_norm3(d0);
    }
  }
  finish_con(c);
}

int cf_mbs__compile_constraints(const cfMbsDef* def, cfMbsModel* m) {
  int nj = def->njoint, nd = def->ndriver, st;
  /* checks, and the number of equations */
  int ncon = 6 * (def->nbody - def->nfe); /* FE bodies have no rigidity equations */
  for (int j = 0; j < nj; j++) {
    if ((st = check_joint(def, m, j)) < 0) return st;
    ncon += joint_eq_count(def->joint[j].type);
  }
  for (int k = 0; k < nd; k++) {
    if ((st = check_driver(def, k)) < 0) return st;
    ncon++;
  }
  if ((st = alloc_constraints(m, nj, nd, ncon)) < 0) return st;
  compile_rigidity(def, m);
  for (int j = 0; j < nj; j++)
    if ((st = compile_joint(def, m, j)) < 0) return st;
  for (int k = 0; k < nd; k++) {
    compile_driver(def, m, k);
    if ((st = cf_mbs__func_adopt(m, &m->driver_f[k])) < 0) return st;
  }
  m->jac_stride = 12;
  for (int i = 0; i < m->ncon; i++) {
    if (m->con[i].nb < 0) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory for the equations' gradients");
    if (12 * m->con[i].nb > m->jac_stride) m->jac_stride = 12 * m->con[i].nb;
  }
  return CF_OK;
}

/* ---- evaluation -------------------------------------------------------------------------------------- */
static void update_drivers(const cfMbsModel* m, cfMbsData* d, double t) {
  for (int k = 0; k < m->ndriver; k++) {
    double* y = d->drv + 3 * k;
    cf_mbs_func_eval(d->driver_f ? &d->driver_f[k] : &m->driver_f[k], t, y); /* a controller's (mbs_drive.c) */
    y[0] += m->driver_offset[k];
  }
}

/* coefficient and its two time derivatives */
static void coef_eval(int kind, const double* F, double c[3]) {
  if (kind == CF_MBS_COEF_ONE) {
    c[0] = 1, c[1] = 0, c[2] = 0;
    return;
  }
  double s = sin(F[0]), co = cos(F[0]);
  if (kind == CF_MBS_COEF_SIN) c[0] = s, c[1] = co * F[1], c[2] = -s * F[1] * F[1] + co * F[2];
  else c[0] = -co, c[1] = s * F[1], c[2] = co * F[1] * F[1] + s * F[2];
}

static void cst_eval(int kind, const double* F, double c[3]) {
  if (kind == CF_MBS_CST_NEG_F) c[0] = -F[0], c[1] = -F[1], c[2] = -F[2];
  else if (kind == CF_MBS_CST_NEG_HALF_F2) c[0] = -0.5 * F[0] * F[0], c[1] = -F[0] * F[1], c[2] = -(F[1] * F[1] + F[0] * F[2]);
  else c[0] = c[1] = c[2] = 0;
}

static const double kZero3[3] = {0, 0, 0};

double cf_mbs__fe_term_coef(const cfMbsData* d, const cfMbsCon* c, int t) {
  if (c->ft_coef[t] == CF_MBS_COEF_ONE || c->driver < 0) return 1;
  double co[3];
  coef_eval(c->ft_coef[t], d->drv + 3 * c->driver, co);
  return co[0];
}

static void add_grad(const cfMbsModel* m, const cfMbsCon* c, double* row, const cfMbsVec* v, const double g[3]) {
  (void)m;
  for (int t = 0; t < v->nb; t++) {
    double* r = row + 12 * slot_of(c, v->body[t]);
    for (int k = 0; k < 4; k++) {
      double w = v->w[t][k];
      if (w != 0) r[3 * k] += w * g[0], r[3 * k + 1] += w * g[1], r[3 * k + 2] += w * g[2];
    }
  }
}

/* Modal point term k of equation c: value s e_i . A Phibar y (A = [u v w] of the frame), its
 * gradient (d/du_a[i] = s Phibar_a . y; d/dy_j = s sum_a A[i][a] Phibar_a,j) added to row, or its
 * acceleration bias 2 s e_i . Adot Phibar ydot when qd is given (q is then not used). */
static double modal_term(const cfMbsModel* m, const cfMbsCon* c, int k, const double* q, const double* qd,
                         double* row) {
  int fb, nm, blk0, nblk, i = c->mt_comp[k];
  const double* Phi = cf_mbs__modal_point(m, c->mt_body[k], c->mt_point[k], NULL, &fb, &nm, &blk0, &nblk);
  double s = c->mt_sign[k];
  const double* ya = (qd ? qd : q) + m->body_qadr[blk0]; /* amplitude blocks are consecutive */
  const double* qf = (qd ? qd : q) + m->body_qadr[fb];
  double v = 0, py[3];
  for (int a = 0; a < 3; a++) {
    py[a] = 0;
    for (int j = 0; j < nm; j++) py[a] += Phi[a * nm + j] * ya[j];
    v += qf[3 + 3 * a + i] * py[a]; /* A[i][a] = (axis a)_i */
  }
  if (qd) return 2 * s * v;
  if (row) {
    double* rf = row + 12 * slot_of(c, fb);
    for (int a = 0; a < 3; a++) rf[3 + 3 * a + i] += s * py[a];
    for (int j = 0; j < nm; j++) {
      double g = 0;
      for (int a = 0; a < 3; a++) g += qf[3 + 3 * a + i] * Phi[a * nm + j];
      row[12 * slot_of(c, blk0 + j / 12) + j % 12] += s * g;
    }
  }
  return s * v;
}

/* The modal part M = A Psi y of direction term side sd of equation c at q: value M, and with qd its
 * rate Md = Adot Psi y + A Psi ydot and curvature Mc = 2 Adot Psi ydot (the part of Mdd that is not
 * M_q qdd); py = Psi y */
typedef struct ModalDir {
  int fb, nm, blk0;
  const double* Psi;
  double py[3], M[3];
} ModalDir;


static void modal_dir_eval(const cfMbsModel* m, const cfMbsCon* c, int sd, const double* q, const double* qd, ModalDir* o,
                           double Md[3], double Mc[3]) {
  int nblk;
  o->Psi = cf_mbs__modal_dir_rows(m, c->md_body[sd], c->md_dir[sd], &o->fb, &o->nm, &o->blk0, &nblk);
  const double *y = q + m->body_qadr[o->blk0], *A = q + m->body_qadr[o->fb] + 3;
  double pyd[3] = {0, 0, 0};
  for (int a = 0; a < 3; a++) {
    o->py[a] = 0;
    for (int j = 0; j < o->nm; j++) o->py[a] += o->Psi[a * o->nm + j] * y[j];
  }
  for (int i = 0; i < 3; i++) o->M[i] = A[i] * o->py[0] + A[3 + i] * o->py[1] + A[6 + i] * o->py[2];
  if (!qd) return;
  const double *yd = qd + m->body_qadr[o->blk0], *Ad = qd + m->body_qadr[o->fb] + 3;
  for (int a = 0; a < 3; a++)
    for (int j = 0; j < o->nm; j++) pyd[a] += o->Psi[a * o->nm + j] * yd[j];
  for (int i = 0; i < 3; i++) {
    Md[i] = 0, Mc[i] = 0;
    for (int a = 0; a < 3; a++) {
      Md[i] += Ad[3 * a + i] * o->py[a] + A[3 * a + i] * pyd[a];
      Mc[i] += 2 * Ad[3 * a + i] * pyd[a];
    }
  }
}

void cf_mbs__fe_term_dir(const cfMbsModel* m, const cfMbsData* d, const cfMbsCon* c, int t, const double* q, double B[3]) {
  B[0] = B[1] = B[2] = 0;
  if (c->ft_comp[t] >= 0) B[c->ft_comp[t]] = 1;
  else cf_mbs_vec_val(m, &c->ft_b[t], q, B);
  if (c->nmd) { /* a modal set's direction: + A Psi y */
    ModalDir o;
    modal_dir_eval(m, c, 1, q, NULL, &o, NULL, NULL);
    for (int a = 0; a < 3; a++) B[a] += o.M[a];
  }
  const double co = c->ft_s[t] * cf_mbs__fe_term_coef(d, c, t);
  for (int a = 0; a < 3; a++) B[a] *= co;
}

/* row += s d(g . M)/dq for a fixed vector g: the frame's axes e_a get s g py_a, y_j gets s sum_a (g . e_a) Psi_aj */
static void modal_dir_grad(const cfMbsModel* m, const cfMbsCon* c, const ModalDir* o, const double* q, const double g[3],
                           double s, double* row) {
  const double* A = q + m->body_qadr[o->fb] + 3;
  double* rf = row + 12 * slot_of(c, o->fb);
  double ge[3];
  for (int a = 0; a < 3; a++) {
    for (int i = 0; i < 3; i++) rf[3 + 3 * a + i] += s * g[i] * o->py[a];
    ge[a] = s * cf_mbs_dot3(g, A + 3 * a);
  }
  for (int j = 0; j < o->nm; j++)
    row[12 * slot_of(c, o->blk0 + j / 12) + j % 12] += ge[0] * o->Psi[j] + ge[1] * o->Psi[o->nm + j] + ge[2] * o->Psi[2 * o->nm + j];
}

/* The modal direction terms of equation c: U = a + M_a, W = b + M_b, value s (U.W - a.b); gradient
 * s (M_a' W + a' M_b + M_b' U + b' M_a) into row; or (qd given) the acceleration bias
 * s (Mc_a . W + U . Mc_b + 2 (Ud . Wd - ad . bd)) */
static double modal_dir_term(const cfMbsModel* m, const cfMbsCon* c, const double* q, const double* qd, double* row) {
  ModalDir o[2];
  double M[2][3] = {{0}}, Md[2][3] = {{0}}, Mc[2][3] = {{0}}, V[2][3], Vd[2][3];
  const cfMbsVec* vs[2] = {&c->a[0], &c->b[0]};
  for (int k = 0; k < 2; k++) {
    cf_mbs_vec_val(m, vs[k], q, V[k]);
    if (qd) cf_mbs_vec_lin(m, vs[k], qd, Vd[k]);
    if (c->md_body[k] < 0) continue;
    modal_dir_eval(m, c, k, q, qd, &o[k], Md[k], Mc[k]);
    memcpy(M[k], o[k].M, sizeof M[k]);
  }
  double U[3], W[3], s = c->s[0];
  for (int i = 0; i < 3; i++) U[i] = V[0][i] + M[0][i], W[i] = V[1][i] + M[1][i];
  if (qd) {
    double Ud[3], Wd[3];
    for (int i = 0; i < 3; i++) Ud[i] = Vd[0][i] + Md[0][i], Wd[i] = Vd[1][i] + Md[1][i];
    return s * (cf_mbs_dot3(Mc[0], W) + cf_mbs_dot3(U, Mc[1]) + 2 * (cf_mbs_dot3(Ud, Wd) - cf_mbs_dot3(Vd[0], Vd[1])));
  }
  if (row) {
    if (c->md_body[0] >= 0) {
      modal_dir_grad(m, c, &o[0], q, W, s, row);
      double g[3] = {s * M[0][0], s * M[0][1], s * M[0][2]};
      add_grad(m, c, row, vs[1], g);
    }
    if (c->md_body[1] >= 0) {
      modal_dir_grad(m, c, &o[1], q, U, s, row);
      double g[3] = {s * M[1][0], s * M[1][1], s * M[1][2]};
      add_grad(m, c, row, vs[0], g);
    }
  }
  return s * (cf_mbs_dot3(U, W) - cf_mbs_dot3(V[0], V[1]));
}

/* equation i's Phi (and gradient row): the loop body of cf_mbs__eval_phi */
static void phi_row(const cfMbsModel* m, cfMbsData* d, const double* q, int want_jac, int i) {
  {
    const cfMbsCon* c = &m->con[i];
    const double* F = c->driver >= 0 ? d->drv + 3 * c->driver : kZero3;
    double cs[3];
    cst_eval(c->cst, F, cs);
    double phi = c->c0 + cs[0];
    double* row = d->jac + (size_t)i * m->jac_stride;
    if (want_jac) memset(row, 0, sizeof(double) * 12 * (size_t)c->nb);
    for (int k = 0; k < c->nterm; k++) {
      double A[3], B[3], co[3];
      cf_mbs_vec_val(m, &c->a[k], q, A);
      cf_mbs_vec_val(m, &c->b[k], q, B);
      coef_eval(c->coef[k], F, co);
      double s = c->s[k] * co[0];
      phi += s * cf_mbs_dot3(A, B);
      if (want_jac) {
        double gA[3] = {s * B[0], s * B[1], s * B[2]}, gB[3] = {s * A[0], s * A[1], s * A[2]};
        add_grad(m, c, row, &c->a[k], gA);
        add_grad(m, c, row, &c->b[k], gB);
      }
    }
    for (int k = 0; k < c->nmt; k++) phi += modal_term(m, c, k, q, NULL, want_jac ? row : NULL);
    for (int k = 0; k < c->nft; k++) {
      double co[3];
      coef_eval(c->ft_coef[k], F, co);
      if (c->nmd) { /* an FE set's measure against a modal set's direction b + M (fe_axis_modal_side) */
        ModalDir o;
        double S[3], B[3];
        modal_dir_eval(m, c, 1, q, NULL, &o, NULL, NULL);
        phi += cf_mbs__fe_term(m, c, k, q, NULL, want_jac ? row : NULL, co[0], o.M);
        cf_mbs__fe_term_vecs(m, c, k, q, NULL, S, B, NULL, NULL);
        if (want_jac) modal_dir_grad(m, c, &o, q, S, c->ft_s[k] * co[0], row);
        continue;
      }
      phi += cf_mbs__fe_term(m, c, k, q, NULL, want_jac ? row : NULL, co[0], NULL);
    }
    if (c->nmd && !c->nft) phi += modal_dir_term(m, c, q, NULL, want_jac ? row : NULL);
    if (d->con_off && d->con_off[i]) { /* switched off (cf_mbs_set_joint_active): holds nothing */
      phi = 0;
      if (want_jac) memset(row, 0, sizeof(double) * 12 * (size_t)c->nb);
    }
    d->phi[i] = phi;
  }
}

void cf_mbs__eval_phi(const cfMbsModel* m, cfMbsData* d, const double* q, double t, int want_jac) {
  update_drivers(m, d, t);
  for (int i = 0; i < m->ncon; i++) phi_row(m, d, q, want_jac, i);
}

/* equation i's Phi_t: the loop body of cf_mbs__eval_phit */
static void phit_row(const cfMbsModel* m, cfMbsData* d, const double* q, double* out, int i) {
  {
    const cfMbsCon* c = &m->con[i];
    if (c->driver < 0) {
      out[i] = 0;
      return;
    }
    const double* F = d->drv + 3 * c->driver;
    double cs[3];
    cst_eval(c->cst, F, cs);
    double v = cs[1];
    for (int k = 0; k < c->nterm; k++) {
      double A[3], B[3], co[3];
      coef_eval(c->coef[k], F, co);
      if (co[1] == 0) continue;
      cf_mbs_vec_val(m, &c->a[k], q, A);
      cf_mbs_vec_val(m, &c->b[k], q, B);
      v += c->s[k] * co[1] * cf_mbs_dot3(A, B);
    }
    for (int k = 0; k < c->nft; k++) { /* FE terms of an angle driver: co' s S . B */
      double co[3];
      coef_eval(c->ft_coef[k], F, co);
      if (co[1] != 0) v += cf_mbs__fe_term(m, c, k, q, NULL, NULL, co[1], NULL);
    }
    out[i] = d->con_off && d->con_off[i] ? 0 : v;
  }
}

void cf_mbs__eval_phit(const cfMbsModel* m, cfMbsData* d, const double* q, double t, double* out) {
  update_drivers(m, d, t);
  for (int i = 0; i < m->ncon; i++) phit_row(m, d, q, out, i);
}

/* equation i's acceleration bias: the loop body of cf_mbs__eval_bias */
static void bias_row(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double* out, int i) {
  {
    const cfMbsCon* c = &m->con[i];
    const double* F = c->driver >= 0 ? d->drv + 3 * c->driver : kZero3;
    double cs[3];
    cst_eval(c->cst, F, cs);
    double v = cs[2];
    for (int k = 0; k < c->nterm; k++) {
      double A[3], B[3], Ad[3], Bd[3], co[3];
      coef_eval(c->coef[k], F, co);
      cf_mbs_vec_lin(m, &c->a[k], qd, Ad);
      cf_mbs_vec_lin(m, &c->b[k], qd, Bd);
      double s = c->s[k];
      v += s * 2 * co[0] * cf_mbs_dot3(Ad, Bd);
      if (co[1] != 0 || co[2] != 0) {
        cf_mbs_vec_val(m, &c->a[k], q, A);
        cf_mbs_vec_val(m, &c->b[k], q, B);
        v += s * (co[2] * cf_mbs_dot3(A, B) + 2 * co[1] * (cf_mbs_dot3(Ad, B) + cf_mbs_dot3(A, Bd)));
      }
    }
    for (int k = 0; k < c->nmt; k++) v += modal_term(m, c, k, q, qd, NULL);
    for (int k = 0; k < c->nft; k++) {
      double co[3];
      coef_eval(c->ft_coef[k], F, co);
      v += cf_mbs__fe_term(m, c, k, q, qd, NULL, co[0], NULL); /* 2 co s Sd . Bd */
      if (c->nmd) { /* the modal set's direction b + M: its part 2 s Sd . Md + s S . Mc */
        ModalDir o;
        double S[3], B[3], Sd[3], Bd[3], Md[3], Mc[3];
        modal_dir_eval(m, c, 1, q, qd, &o, Md, Mc);
        cf_mbs__fe_term_vecs(m, c, k, q, qd, S, B, Sd, Bd);
        v += c->ft_s[k] * co[0] * (2 * cf_mbs_dot3(Sd, Md) + cf_mbs_dot3(S, Mc));
      }
      if (co[1] != 0 || co[2] != 0) { /* an angle driver's: s (co'' S . B + 2 co' (Sd . B + S . Bd)) */
        double S[3], B[3], Sd[3], Bd[3];
        cf_mbs__fe_term_vecs(m, c, k, q, qd, S, B, Sd, Bd);
        v += c->ft_s[k] * (co[2] * cf_mbs_dot3(S, B) + 2 * co[1] * (cf_mbs_dot3(Sd, B) + cf_mbs_dot3(S, Bd)));
      }
    }
    if (c->nmd && !c->nft) v += modal_dir_term(m, c, q, qd, NULL);
    out[i] = d->con_off && d->con_off[i] ? 0 : v;
  }
}

void cf_mbs__eval_bias(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                       double* out) {
  update_drivers(m, d, t);
  for (int i = 0; i < m->ncon; i++) bias_row(m, d, q, qd, out, i);
}

/* the same three on the equations rows[0..nrows-1] only (the semi-recursive formulation's closure
 * equations: the rest hold by construction); phi and the gradient into d->phi, d->jac, Phi_t and the
 * bias into out_t, out_b (either NULL: not wanted) at their equations' indices */
void cf_mbs__eval_rows(const cfMbsModel* m, cfMbsData* d, const double* q, const double* qd, double t,
                       const int* rows, int nrows, int want_phi, double* out_t, double* out_b) {
  update_drivers(m, d, t);
  for (int k = 0; k < nrows; k++) {
    if (want_phi) phi_row(m, d, q, 1, rows[k]);
    if (out_t) phit_row(m, d, q, out_t, rows[k]);
    if (out_b) bias_row(m, d, q, qd, out_b, rows[k]);
  }
}

void cf_mbs__jac_mult(const cfMbsModel* m, const cfMbsData* d, const double* x, double* y) {
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    const double* row = d->jac + (size_t)i * m->jac_stride;
    double s = 0;
    for (int sl = 0; sl < c->nb; sl++) {
      const double* xb = x + m->body_qadr[c->body[sl]];
      for (int k = 0; k < 12; k++) s += row[12 * sl + k] * xb[k];
    }
    y[i] = s;
  }
}

void cf_mbs__jacT_mult_add(const cfMbsModel* m, const cfMbsData* d, const double* z, double* y) {
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    const double* row = d->jac + (size_t)i * m->jac_stride;
    double zi = z[i];
    if (zi == 0) continue;
    for (int sl = 0; sl < c->nb; sl++) {
      double* yb = y + m->body_qadr[c->body[sl]];
      for (int k = 0; k < 12; k++) yb[k] += row[12 * sl + k] * zi;
    }
  }
}

/* Modified Gram-Schmidt over the normalised gradient rows in equation order (rigidity, joints,
 * drivers), twice per row: a row left with less than 1e-8 of its length is redundant. */
int cf_mbs__rank(const cfMbsModel* m, const cfMbsData* d, int* redundant, int cap, int* nred) {
  int n = m->nq;
  int nbasis = m->ncon < n ? m->ncon : n; /* the rank is at most min(ncon, nq): FE bodies have thousands of coordinates */
  double* basis = malloc(sizeof(double) * (size_t)n * (size_t)(nbasis > 0 ? nbasis : 1));
  double* v = malloc(sizeof(double) * (size_t)n);
  if (!basis || !v) {
    free(basis);
    free(v);
    return -1;
  }
  int rank = 0;
  *nred = 0;
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    const double* row = d->jac + (size_t)i * m->jac_stride;
    memset(v, 0, sizeof(double) * (size_t)n);
    for (int sl = 0; sl < c->nb; sl++)
      for (int k = 0; k < 12; k++) v[m->body_qadr[c->body[sl]] + k] += row[12 * sl + k];
    double nrm = 0;
    for (int k = 0; k < n; k++) nrm += v[k] * v[k];
    nrm = sqrt(nrm);
    int indep = 0;
    if (nrm > 0 && rank < nbasis) {
      for (int k = 0; k < n; k++) v[k] /= nrm;
      for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < rank; b++) {
          const double* e = basis + (size_t)b * n;
          double s = 0;
          for (int k = 0; k < n; k++) s += e[k] * v[k];
          for (int k = 0; k < n; k++) v[k] -= s * e[k];
        }
      double r = 0;
      for (int k = 0; k < n; k++) r += v[k] * v[k];
      r = sqrt(r);
      if (r > 1e-8) {
        double* e = basis + (size_t)rank * n;
        for (int k = 0; k < n; k++) e[k] = v[k] / r;
        rank++;
        indep = 1;
      }
    }
    if (!indep) {
      if (*nred < cap) redundant[*nred] = i;
      (*nred)++;
    }
  }
  free(basis);
  free(v);
  return rank;
}

/* ---- joint frames on the current state ---------------------------------------------------------------- */
void cf_mbs__joint_vec(const cfMbsModel* m, const double* q, int j, int slot, int which, double o[3]) {
  int b = m->joint_body[2 * j + slot];
  const double* l = m->joint_frame + 24 * j + 12 * slot + 3 * which;
  if (b < 0) {
    memcpy(o, l, 3 * sizeof(double));
    return;
  }
  const double* qb = q + m->body_qadr[b];
  for (int i = 0; i < 3; i++) o[i] = (which == 0 ? qb[i] : 0) + l[0] * qb[3 + i] + l[1] * qb[6 + i] + l[2] * qb[9 + i];
  int mp = m->joint_mpoint[2 * j + slot];
  if (which == 0 && mp >= 0) { /* the point moves with the modes */
    double u[3];
    cf_mbs__modal_point_disp(m, cf_mbs_modal_index(m, b), mp, q, u);
    for (int i = 0; i < 3; i++) o[i] += u[i];
  }
}

/* the f direction of slot s of joint j at q: the body's, or an FE set's measure (m->joint_fe_dir;
 * from its g, f = g x a with a the other body's axis, when f is a flat set's normal); 0 when the
 * slot is an FE set without one */
static int fe_slot(const cfMbsModel* m, int j, int s) {
  const int b = m->joint_body[2 * j + s]; /* an FE body's definition body: its first node block (lumped, 3) or
                                             its placeholder (corotational, 5) */
  return m->joint_fe_dir[4 * j + 2 * s] >= 0 || (b >= 0 && (m->body_modal[b] == 3 || m->body_modal[b] == 5));
}

static int joint_f(const cfMbsModel* m, const double* q, int j, int s, double f[3]) {
  if (!fe_slot(m, j, s)) return cf_mbs__joint_vec(m, q, j, s, 2, f), 1;
  const int ib = m->joint_fe_dir[4 * j + 2 * s], v = m->joint_fe_dir[4 * j + 2 * s + 1];
  if (ib < 0 || v == -1) return 0;
  double d[3], a[3];
  cf_mbs__fe_vec(m, ib, v >= 0 ? v : -2 - v, q, d);
  if (v < -1) { /* g measured: f = g x a */
    cf_mbs__joint_vec(m, q, j, 1 - s, 1, a);
    double t[3];
    cf_mbs_cross3(d, a, t);
    memcpy(d, t, sizeof t);
  }
  double n = cf_mbs_norm3(d);
  if (!(n > 0)) return 0;
  for (int k = 0; k < 3; k++) f[k] = d[k] / n;
  return 1;
}

double cf_mbs__joint_raw_angle(const cfMbsModel* m, const double* q, int j) {
  /* the angle of body2's f about the joint axis from body1's f; an FE set has no frame, its f is
   * measured on its nodes, and body1's g is then the other body's axis times that f */
  double f1[3], g1[3], f2[3], a[3];
  if (!joint_f(m, q, j, 0, f1) || !joint_f(m, q, j, 1, f2)) return NAN;
  if (fe_slot(m, j, 0)) {
    cf_mbs__joint_vec(m, q, j, 1, 1, a);
    cf_mbs_cross3(a, f1, g1);
  } else {
    cf_mbs__joint_vec(m, q, j, 0, 3, g1);
  }
  return atan2(cf_mbs_dot3(g1, f2), cf_mbs_dot3(f1, f2));
}

double cf_mbs__unwrap(double raw, double ref) { return raw + 2 * M_PI * nearbyint((ref - raw) / (2 * M_PI)); }

/* Ax += scale sum_i mult_i Phi_i,qq over the bilinear terms s A.B of the equations: in natural
 * coordinates A and B are linear in q (dA = w_A (x) I3), so each term's Hessian is the constant
 * s (dA^T dB + dB^T dA). The modal and FE terms are left out (their parts bring their own
 * stiffness). The constraint forces' stiffness: a pendulum's tension is what holds it hanging, so
 * Newton on the static equations needs it (cf_mbs_static). */
void cf_mbs__add_constraint_hessian(const cfMbsModel* m, const cfMbsData* d, const double* mult, double scale,
                                    double* Ax) {
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    if (mult[i] == 0) continue;
    const double* F = c->driver >= 0 ? d->drv + 3 * c->driver : kZero3;
    for (int k = 0; k < c->nterm; k++) {
      double co[3];
      coef_eval(c->coef[k], F, co);
      double s = scale * mult[i] * c->s[k] * co[0];
      const cfMbsVec *A = &c->a[k], *B = &c->b[k];
      for (int ta = 0; ta < A->nb; ta++)
        for (int tb = 0; tb < B->nb; tb++) {
          int ba = A->body[ta], bb = B->body[tb];
          double H[144] = {0};
          for (int l1 = 0; l1 < 4; l1++)
            for (int l2 = 0; l2 < 4; l2++) {
              double v = s * (ba == bb ? A->w[ta][l1] * B->w[tb][l2] + B->w[tb][l1] * A->w[ta][l2]
                                        : A->w[ta][l1] * B->w[tb][l2]);
              for (int x = 0; x < 3; x++) H[12 * (3 * l1 + x) + 3 * l2 + x] = v;
            }
          cf_mbs__add_blk(m, Ax, ba, bb, H, 12, 1.0);
        }
    }
  }
}
