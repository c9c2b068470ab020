/* Multibody model: definitions with defaults, time functions, validation of bodies, the model
 * (coordinates, constant mass matrix, compiled equations, leading-matrix pattern, assembled initial
 * state) and the data (state and every scratch array a step needs). */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>

#include "cofem/fem.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "mbs/mbs_internal.h"

/* ---- time functions ------------------------------------------------------------------------- */
cfMbsFunc cf_mbs_func_const(double value) {
  cfMbsFunc f;
  memset(&f, 0, sizeof f);
  f.type = CF_MBS_FUNC_CONST;
  f.c[0] = value;
  return f;
}

/* integral from -infinity of the cubic blend s(tau) = 3 tau^2 - 2 tau^3 (0 before t0) */
static double step_blend_integral(double t, double t0, double t1) {
  double D = t1 - t0;
  if (t <= t0) return 0;
  if (t >= t1) return 0.5 * D + (t - t1);
  double tau = (t - t0) / D;
  return D * (tau * tau * tau - 0.5 * tau * tau * tau * tau);
}

/* a table's segment holding t: the largest i with t_i <= t (0 before the first point), by bisection */
static int table_segment(const cfMbsFunc* f, double t) {
  int lo = 0, hi = f->n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (f->tab[2 * mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* a table's value at t and its slope (0 outside the points) */
static double table_value(const cfMbsFunc* f, double t, double* slope) {
  const double* p = f->tab;
  *slope = 0;
  if (t < p[0]) return p[1];
  if (t >= p[2 * (f->n - 1)]) return p[2 * (f->n - 1) + 1];
  int i = table_segment(f, t);
  double s = (p[2 * i + 3] - p[2 * i + 1]) / (p[2 * i + 2] - p[2 * i]);
  *slope = s;
  return p[2 * i + 1] + (t - p[2 * i]) * s;
}

/* int_(t_0)^t of a table (negative before its first point, where it is held at y_0) */
static double table_integral(const cfMbsFunc* f, double t) {
  const double* p = f->tab;
  if (t <= p[0]) return p[1] * (t - p[0]);
  int i = table_segment(f, t);
  double area = 0, slope;
  for (int k = 0; k < i; k++) area += 0.5 * (p[2 * k + 1] + p[2 * k + 3]) * (p[2 * k + 2] - p[2 * k]);
  return area + 0.5 * (p[2 * i + 1] + table_value(f, t, &slope)) * (t - p[2 * i]);
}

int cf_mbs__func_adopt(cfMbsModel* m, cfMbsFunc* f) {
  if (f->type != CF_MBS_FUNC_TABLE || !f->tab || f->n < 1) return CF_OK;
  double** grown = realloc(m->tabs, sizeof(double*) * (size_t)(m->ntabs + 1));
  if (!grown) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory for a table function");
  m->tabs = grown;
  double* copy = malloc(sizeof(double) * 2 * (size_t)f->n);
  if (!copy) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory for a table function");
  memcpy(copy, f->tab, sizeof(double) * 2 * (size_t)f->n);
  m->tabs[m->ntabs++] = copy;
  f->tab = copy;
  return CF_OK;
}

void cf_mbs_func_eval(const cfMbsFunc* f, double t, double y[3]) {
  double g = 0, g1 = 0, g2 = 0, G = 0; /* g and its derivatives, G its integral from 0 */
  switch (f->type) {
    case CF_MBS_FUNC_CONST:
      g = f->c[0];
      G = f->c[0] * t;
      break;
    case CF_MBS_FUNC_POLY: {
      double tp = 1;
      for (int k = 0; k < f->n; k++) {
        g += f->c[k] * tp;
        G += f->c[k] * tp * t / (k + 1);
        if (k >= 1) g1 += k * f->c[k] * pow(t, k - 1);
        if (k >= 2) g2 += k * (k - 1) * f->c[k] * pow(t, k - 2);
        tp *= t;
      }
      break;
    }
    case CF_MBS_FUNC_HARMONIC: {
      double a = f->c[0], w = f->c[1], ph = f->c[2], off = f->c[3];
      g = a * sin(w * t + ph) + off;
      g1 = a * w * cos(w * t + ph);
      g2 = -a * w * w * sin(w * t + ph);
      G = (w != 0 ? -a / w * (cos(w * t + ph) - cos(ph)) : a * sin(ph) * t) + off * t;
      break;
    }
    case CF_MBS_FUNC_STEP: {
      double y0 = f->c[0], y1 = f->c[1], t0 = f->c[2], t1 = f->c[3], D = t1 - t0;
      double tau = D > 0 ? (t - t0) / D : (t >= t0 ? 1 : 0);
      if (tau <= 0) g = y0;
      else if (tau >= 1) g = y1;
      else {
        g = y0 + (y1 - y0) * tau * tau * (3 - 2 * tau);
        g1 = (y1 - y0) * 6 * tau * (1 - tau) / D;
        g2 = (y1 - y0) * (6 - 12 * tau) / (D * D);
      }
      G = y0 * t + (y1 - y0) * (step_blend_integral(t, t0, t1) - step_blend_integral(0, t0, t1));
      break;
    }
    case CF_MBS_FUNC_TABLE: {
      /* piecewise linear: g = y_i + (t - t_i) (y_(i+1) - y_i) / (t_(i+1) - t_i) on [t_i, t_(i+1)], held
       * outside; G = int_0^t g by the trapezoidal areas (exact for a piecewise linear g) */
      g = table_value(f, t, &g1);
      G = table_integral(f, t) - table_integral(f, 0);
      break;
    }
    default: break;
  }
  if (f->rate) y[0] = G, y[1] = g, y[2] = g1;
  else y[0] = g, y[1] = g1, y[2] = g2;
}

/* ---- definitions ---------------------------------------------------------------------------- */
cfMbsOptions cf_mbs_default_options(void) {
  cfMbsOptions o;
  memset(&o, 0, sizeof o);
  o.dt = 1e-3;
  o.penalty = 0;
  o.tol_dq = 1e-9;
  o.tol_phi = 1e-9;
  o.max_iter = 50;
  o.proj_iter = 20;
  o.rho_inf = 1;
  o.redundant = 0;
  return o;
}

cfMbsBodyDef cf_mbs_default_body_def(void) {
  cfMbsBodyDef b;
  memset(&b, 0, sizeof b);
  b.rot[0] = b.rot[4] = b.rot[8] = 1;
  return b;
}

cfMbsMarkerDef cf_mbs_default_marker_def(void) {
  cfMbsMarkerDef k;
  memset(&k, 0, sizeof k);
  k.body = CF_MBS_GROUND;
  k.axis[2] = 1;
  return k;
}

cfMbsJointDef cf_mbs_default_joint_def(void) {
  cfMbsJointDef j;
  memset(&j, 0, sizeof j);
  j.type = CF_MBS_REVOLUTE;
  j.body1 = j.body2 = CF_MBS_GROUND;
  j.axis[2] = 1;
  j.axis2[0] = 1;
  j.distance = -1;
  j.modal_point1 = j.modal_point2 = -1;
  return j;
}

cfMbsDriverDef cf_mbs_default_driver_def(void) {
  cfMbsDriverDef d;
  memset(&d, 0, sizeof d);
  d.joint = -1;
  d.body1 = d.body2 = CF_MBS_GROUND;
  d.f = cf_mbs_func_const(0);
  return d;
}

cfMbsForceDef cf_mbs_default_force_def(void) {
  cfMbsForceDef f;
  memset(&f, 0, sizeof f);
  f.body1 = f.body2 = CF_MBS_GROUND;
  f.rest = NAN;
  f.joint = -1;
  f.scale = cf_mbs_func_const(1);
  f.actuator = cf_mbs_func_const(0);
  return f;
}

void cf_mbs_def_init(cfMbsDef* def) {
  memset(def, 0, sizeof *def);
  def->opt = cf_mbs_default_options();
}

void cf_mbs_def_free(cfMbsDef* def) {
  free(def->body);
  free(def->marker);
  free(def->joint);
  free(def->driver);
  free(def->force);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* the modal and FE bodies' definitions */
    if (cf_mbs__body_kinds[k]->def_free) cf_mbs__body_kinds[k]->def_free(def);
  cfMbsOptions o = def->opt;
  memset(def, 0, sizeof *def);
  def->opt = o;
}

static int grow(void** p, int* cap, int n, size_t size) {
  if (n < *cap) return CF_OK;
  int nc = *cap ? 2 * *cap : 8;
  void* q = realloc(*p, size * (size_t)nc);
  if (!q) return cf_error(CF_ERR_NOMEM, "mechanism definition: out of memory");
  *p = q;
  *cap = nc;
  return CF_OK;
}

#define CF_MBS_ADD(field, count, cap, item)                                      \
  do {                                                                           \
    int st_ = grow((void**)&def->field, &def->cap, def->count, sizeof *(item));  \
    if (st_ < 0) return st_;                                                     \
    def->field[def->count] = *(item);                                            \
    return def->count++;                                                         \
  } while (0)

int cf_mbs_add_body(cfMbsDef* def, const cfMbsBodyDef* b) { CF_MBS_ADD(body, nbody, cap_body, b); }
int cf_mbs_add_marker(cfMbsDef* def, const cfMbsMarkerDef* k) { CF_MBS_ADD(marker, nmarker, cap_marker, k); }
int cf_mbs_add_joint(cfMbsDef* def, const cfMbsJointDef* j) { CF_MBS_ADD(joint, njoint, cap_joint, j); }
int cf_mbs_add_driver(cfMbsDef* def, const cfMbsDriverDef* d) { CF_MBS_ADD(driver, ndriver, cap_driver, d); }
int cf_mbs_add_force(cfMbsDef* def, const cfMbsForceDef* f) { CF_MBS_ADD(force, nforce, cap_force, f); }

int cf_mbs_def_find_body(const cfMbsDef* def, const char* name) {
  if (!strcmp(name, "ground")) return CF_MBS_GROUND;
  for (int b = 0; b < def->nbody; b++)
    if (!strcmp(def->body[b].name, name)) return b;
  return CF_MBS_NONE;
}

void cf_mbs_axis_angle(const double axis[3], double angle, double R[9]) {
  double n = cf_mbs_norm3(axis);
  double x = n > 0 ? axis[0] / n : 0, y = n > 0 ? axis[1] / n : 0, z = n > 0 ? axis[2] / n : 1;
  double c = cos(angle), s = sin(angle), C = 1 - c;
  R[0] = c + x * x * C, R[1] = x * y * C - z * s, R[2] = x * z * C + y * s;
  R[3] = y * x * C + z * s, R[4] = c + y * y * C, R[5] = y * z * C - x * s;
  R[6] = z * x * C - y * s, R[7] = z * y * C + x * s, R[8] = c + z * z * C;
}

void cf_mbs__body_pose(const cfMbsDef* def, int b, double pos[3], double R[9]) {
  if (b < 0) {
    memset(pos, 0, 3 * sizeof(double));
    memset(R, 0, 9 * sizeof(double));
    R[0] = R[4] = R[8] = 1;
    return;
  }
  memcpy(pos, def->body[b].pos, 3 * sizeof(double));
  memcpy(R, def->body[b].rot, 9 * sizeof(double));
}

int cf_mbs__rethrow(int st, const char* prefix) { return cf_error(st, "%s%s", prefix, cf_last_error()); }

/* ---- lookups ---------------------------------------------------------------------------------- */
static int find_name(const char (*names)[CF_MBS_NAME_MAX], int n, const char* name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return i;
  return CF_MBS_NONE;
}
int cf_mbs_find_body(const cfMbsModel* m, const char* name) {
  if (!strcmp(name, "ground")) return CF_MBS_GROUND;
  return find_name((const char(*)[CF_MBS_NAME_MAX])m->body_name, m->nbody, name);
}
int cf_mbs_find_marker(const cfMbsModel* m, const char* name) {
  return find_name((const char(*)[CF_MBS_NAME_MAX])m->marker_name, m->nmarker, name);
}
int cf_mbs_find_joint(const cfMbsModel* m, const char* name) {
  return find_name((const char(*)[CF_MBS_NAME_MAX])m->joint_name, m->njoint, name);
}
int cf_mbs_find_driver(const cfMbsModel* m, const char* name) {
  return find_name((const char(*)[CF_MBS_NAME_MAX])m->driver_name, m->ndriver, name);
}

static const char* joint_type_name(int t) {
  static const char* names[] = {"spherical", "revolute", "prismatic", "cylindrical", "universal", "fixed",
                                "distance"};
  return t >= 0 && t < CF_MBS_JOINT_TYPES ? names[t] : "?";
}

void cf_mbs_describe_con(const cfMbsModel* m, int i, char* out, int n) {
  static const char* rigid_eq[] = {"|u| = 1", "|v| = 1", "|w| = 1", "u.v = 0", "u.w = 0", "v.w = 0"};
  const cfMbsCon* c = &m->con[i];
  if (c->kind == CF_MBS_CON_RIGID)
    snprintf(out, n, "body '%s' rigidity equation %s", m->body_name[c->owner], rigid_eq[c->eq % 6]);
  else if (c->kind == CF_MBS_CON_JOINT)
    snprintf(out, n, "joint '%s' (%s) equation %d of %d", m->joint_name[c->owner],
             joint_type_name(m->joint_type[c->owner]), c->eq + 1, m->joint_ncon[c->owner]);
  else
    snprintf(out, n, "driver '%s'", m->driver_name[c->owner]);
}

/* ---- bodies ----------------------------------------------------------------------------------- */
/* eigenvalues of a symmetric 3x3 matrix (ascending), closed form */
static void sym3_eig(const double A[9], double e[3]) {
  double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
  double q = (A[0] + A[4] + A[8]) / 3;
  double p2 = (A[0] - q) * (A[0] - q) + (A[4] - q) * (A[4] - q) + (A[8] - q) * (A[8] - q) + 2 * p1;
  double p = sqrt(p2 / 6);
  if (p == 0) {
    e[0] = e[1] = e[2] = q;
    return;
  }
  double B[9];
  for (int i = 0; i < 9; i++) B[i] = (A[i] - (i % 4 == 0 ? q : 0)) / p;
  double r = (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
              B[2] * (B[3] * B[7] - B[4] * B[6])) / 2;
  double phi = r <= -1 ? M_PI / 3 : r >= 1 ? 0 : acos(r) / 3;
  double e1 = q + 2 * p * cos(phi), e3 = q + 2 * p * cos(phi + 2 * M_PI / 3);
  e[2] = e1, e[0] = e3, e[1] = 3 * q - e1 - e3;
}

static int check_name(const char* kind, const char* name, int idx) {
  if (!name[0]) return cf_error(CF_ERR_SCENE, "%s %d has no name", kind, idx);
  return CF_OK;
}

static int check_bodies(const cfMbsDef* def) {
  for (int b = 0; b < def->nbody; b++) {
    const cfMbsBodyDef* B = &def->body[b];
    int st = check_name("body", B->name, b);
    if (st < 0) return st;
    if (!strcmp(B->name, "ground"))
      return cf_error(CF_ERR_SCENE, "body %d: \"ground\" is the name of the fixed frame; choose another", b);
    for (int c = 0; c < b; c++)
      if (!strcmp(def->body[c].name, B->name))
        return cf_error(CF_ERR_SCENE, "body '%s' is defined twice", B->name);
    double vals[3 + 3 + 6 + 3 + 9 + 3 + 3];
    int n = 0;
    vals[n++] = B->mass;
    for (int i = 0; i < 3; i++) vals[n++] = B->com[i];
    for (int i = 0; i < 6; i++) vals[n++] = B->inertia[i];
    for (int i = 0; i < 3; i++) vals[n++] = B->pos[i];
    for (int i = 0; i < 9; i++) vals[n++] = B->rot[i];
    for (int i = 0; i < 3; i++) vals[n++] = B->vel[i];
    for (int i = 0; i < 3; i++) vals[n++] = B->omega[i];
    for (int i = 0; i < n; i++)
      if (!isfinite(vals[i])) return cf_error(CF_ERR_SCENE, "body '%s': non-finite number in its definition", B->name);
    /* proper rotation */
    const double* R = B->rot;
    double err = 0;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
        err = fmax(err, fabs(s - (i == j)));
      }
    double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                 R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (err > 1e-9 || det < 0)
      return cf_error(CF_ERR_SCENE, "body '%s': its orientation is not a proper rotation (|R^T R - I| = %.3g, det %.3g)",
                      B->name, err, det);
    double Ic[9] = {B->inertia[0], B->inertia[3], B->inertia[4], B->inertia[3], B->inertia[1],
                    B->inertia[5], B->inertia[4], B->inertia[5], B->inertia[2]};
    if (B->is_virtual) {
      double s = fabs(B->mass);
      for (int i = 0; i < 6; i++) s += fabs(B->inertia[i]);
      if (s != 0)
        return cf_error(CF_ERR_SCENE, "body '%s' is virtual (massless): it cannot have mass or inertia", B->name);
      continue;
    }
    if (!(B->mass > 0))
      return cf_error(CF_ERR_SCENE, "body '%s': mass %g must be positive (a massless body must be declared virtual)",
                      B->name, B->mass);
    double e[3];
    sym3_eig(Ic, e);
    double tol = 1e-12 * (fabs(e[0]) + fabs(e[1]) + fabs(e[2]));
    if (e[0] < -tol || e[0] + e[1] < e[2] - tol)
      return cf_error(CF_ERR_SCENE,
                      "body '%s': inertia with principal moments %.6g, %.6g, %.6g is not physical (they must be >= 0 "
                      "and each at most the sum of the other two)", B->name, e[0], e[1], e[2]);
  }
  return CF_OK;
}

/* ---- model ------------------------------------------------------------------------------------- */
void cf_mbs_model_free(cfMbsModel* m) {
  if (!m) return;
  free(m->body_name); free(m->body_qadr); free(m->body_nq); free(m->body_virtual); free(m->body_mass);
  free(m->body_com); free(m->body_inertia); free(m->body_shape); free(m->body_Mbar);
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* modal and FE bodies */
    if (cf_mbs__body_kinds[k]->model_free) cf_mbs__body_kinds[k]->model_free(m);
  free(m->body_modal);
  free(m->marker_name); free(m->marker_body); free(m->marker_pos); free(m->marker_axis);
  free(m->joint_name); free(m->joint_type); free(m->joint_body); free(m->joint_frame); free(m->joint_con0); free(m->joint_mpoint); free(m->joint_fe_dir);
  free(m->joint_ncon);
  free(m->driver_name); free(m->driver_type); free(m->driver_joint); free(m->driver_f); free(m->driver_offset);
  free(m->driver_con);
  free(m->force_name); free(m->force);
  for (int i = 0; i < m->ntabs; i++) free(m->tabs[i]);
  free(m->tabs);
  for (int i = 0; m->con && i < m->ncon; i++) free(m->con[i].body);
  free(m->con); free(m->con_pen);
  free(m->Ap); free(m->Ai); free(m->pair_colstart); free(m->body_pair_ptr); free(m->body_pair_a);
  free(m->q0); free(m->qd0);
  free(m);
}

#define CF_MBS_ALLOC(ptr, count)                                          \
  do {                                                                    \
    (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof *(ptr));  \
    if (!(ptr)) ok = 0;                                                   \
  } while (0)

static int build_bodies_markers(const cfMbsDef* def, cfMbsModel* m) {
  int ok = 1, nb = def->nbody; /* + the kinds' blocks: modal amplitudes, FE nodes */
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->nblock) nb += cf_mbs__body_kinds[k]->nblock(def);
  CF_MBS_ALLOC(m->body_modal, nb);
  CF_MBS_ALLOC(m->body_name, nb);
  CF_MBS_ALLOC(m->body_qadr, nb);
  CF_MBS_ALLOC(m->body_nq, nb);
  CF_MBS_ALLOC(m->body_virtual, nb);
  CF_MBS_ALLOC(m->body_mass, nb);
  CF_MBS_ALLOC(m->body_com, 3 * nb);
  CF_MBS_ALLOC(m->body_inertia, 6 * nb);
  CF_MBS_ALLOC(m->body_shape, 6 * nb);
  CF_MBS_ALLOC(m->body_Mbar, 16 * nb);
  CF_MBS_ALLOC(m->marker_name, def->nmarker);
  CF_MBS_ALLOC(m->marker_body, def->nmarker);
  CF_MBS_ALLOC(m->marker_pos, 3 * def->nmarker);
  CF_MBS_ALLOC(m->marker_axis, 3 * def->nmarker);
  if (!ok) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  m->nbody = nb;
  m->nq = 0;
  m->mref = 0;
  for (int b = 0; b < def->nbody; b++) { /* the kinds' blocks follow (their compile) */
    const cfMbsBodyDef* B = &def->body[b];
    snprintf(m->body_name[b], CF_MBS_NAME_MAX, "%s", B->name);
    m->body_qadr[b] = m->nq;
    m->body_nq[b] = CF_MBS_BODY_NQ;
    m->nq += CF_MBS_BODY_NQ;
    m->body_virtual[b] = (unsigned char)(B->is_virtual != 0);
    m->body_mass[b] = B->mass;
    memcpy(m->body_com + 3 * b, B->com, sizeof B->com);
    memcpy(m->body_inertia + 6 * b, B->inertia, sizeof B->inertia);
    memcpy(m->body_shape + 6 * b, B->shape_center, sizeof B->shape_center);
    memcpy(m->body_shape + 6 * b + 3, B->shape_box, sizeof B->shape_box);
    /* Mbar = [m, m c^T; m c, J_c + m c c^T], J_c = integral of p p^T = tr(I)/2 1 - I about the com */
    double mass = B->mass, *c = m->body_com + 3 * b, *Mb = m->body_Mbar + 16 * b;
    const double* In = B->inertia;
    double Ic[9] = {In[0], In[3], In[4], In[3], In[1], In[5], In[4], In[5], In[2]};
    double tr = 0.5 * (Ic[0] + Ic[4] + Ic[8]);
    Mb[0] = mass;
    for (int i = 0; i < 3; i++) Mb[1 + i] = Mb[4 * (1 + i)] = mass * c[i];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Mb[4 * (1 + i) + 1 + j] = (i == j ? tr : 0) - Ic[3 * i + j] + mass * c[i] * c[j];
    for (int k = 0; k < 4; k++) m->mref = fmax(m->mref, Mb[5 * k]);
  }
  if (!(m->mref > 0)) m->mref = 1;
  m->nmarker = def->nmarker;
  for (int k = 0; k < def->nmarker; k++) {
    const cfMbsMarkerDef* K = &def->marker[k];
    int st = check_name("marker", K->name, k);
    if (st < 0) return st;
    for (int c = 0; c < k; c++)
      if (!strcmp(def->marker[c].name, K->name))
        return cf_error(CF_ERR_SCENE, "marker '%s' is defined twice", K->name);
    if (K->body < CF_MBS_GROUND || K->body >= nb)
      return cf_error(CF_ERR_SCENE, "marker '%s': body id %d does not exist", K->name, K->body);
    double n = cf_mbs_norm3(K->axis);
    if (!isfinite(n) || !isfinite(cf_mbs_norm3(K->pos)))
      return cf_error(CF_ERR_SCENE, "marker '%s': non-finite position or axis", K->name);
    if (n < 1e-12) return cf_error(CF_ERR_SCENE, "marker '%s': axis has zero length", K->name);
    snprintf(m->marker_name[k], CF_MBS_NAME_MAX, "%s", K->name);
    m->marker_body[k] = K->body;
    memcpy(m->marker_pos + 3 * k, K->pos, 3 * sizeof(double));
    for (int i = 0; i < 3; i++) m->marker_axis[3 * k + i] = K->axis[i] / n;
  }
  return CF_OK;
}

/* q, qd of the bodies' t = 0 poses and velocities */
static void initial_coordinates(const cfMbsDef* def, const cfMbsModel* m, double* q, double* qd) {
  for (int b = 0; b < def->nbody; b++) { /* the modal amplitudes below */
    const cfMbsBodyDef* B = &def->body[b];
    double* qb = q + m->body_qadr[b];
    double* vb = qd + m->body_qadr[b];
    for (int i = 0; i < 3; i++) qb[i] = B->pos[i], vb[i] = B->vel[i];
    for (int k = 0; k < 3; k++) {
      double e[3] = {B->rot[k], B->rot[3 + k], B->rot[6 + k]}, de[3];
      cf_mbs_cross3(B->omega, e, de);
      for (int i = 0; i < 3; i++) qb[3 + 3 * k + i] = e[i], vb[3 + 3 * k + i] = de[i];
    }
  }
  for (int k = 0; k < cf_mbs__nbody_kinds; k++) /* modal amplitudes, FE nodes, and their rates */
    if (cf_mbs__body_kinds[k]->initial) cf_mbs__body_kinds[k]->initial(def, m, q, qd);
}

static int check_options(const cfMbsOptions* o) {
  if (!(o->dt > 0) || !isfinite(o->dt)) return cf_error(CF_ERR_SCENE, "mechanism: time step dt = %g must be positive", o->dt);
  if (!(o->penalty >= 0) || !isfinite(o->penalty))
    return cf_error(CF_ERR_SCENE, "mechanism: penalty = %g must be >= 0 (0: automatic)", o->penalty);
  if (!(o->tol_dq > 0) || !(o->tol_phi > 0))
    return cf_error(CF_ERR_SCENE, "mechanism: tolerances must be positive");
  if (o->max_iter < 1 || o->proj_iter < 1)
    return cf_error(CF_ERR_SCENE, "mechanism: max_iter and proj_iter must be >= 1");
  if (o->redundant < 0) return cf_error(CF_ERR_SCENE, "mechanism: redundant_constraints must be >= 0");
  if (!(o->rho_inf >= 0.5 && o->rho_inf <= 1))
    return cf_error(CF_ERR_SCENE, "mechanism: rho_inf = %g must be in [0.5, 1] (1: trapezoidal rule)", o->rho_inf);
  for (int i = 0; i < 3; i++)
    if (!isfinite(o->gravity[i])) return cf_error(CF_ERR_SCENE, "mechanism: gravity must be finite");
  return CF_OK;
}

/* the redundant equations, named, for an error message */
static int redundancy_error(const cfMbsModel* m, int nred, const int* list, int nlist) {
  char buf[900] = "", one[200];
  int len = 0;
  for (int i = 0; i < nlist && i < 6; i++) {
    cf_mbs_describe_con(m, list[i], one, sizeof one);
    len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", i ? "; " : "", one);
    if (len >= (int)sizeof buf) break;
  }
  if (nlist > 6 && len < (int)sizeof buf - 8) snprintf(buf + len, sizeof buf - (size_t)len, "; ...");
  return cf_error(CF_ERR_SCENE,
                  "mechanism has %d redundant constraint equation%s (declared: %d): %s. The augmented Lagrangian "
                  "integrates consistent redundant equations, but their reactions are not unique; declare "
                  "\"redundant_constraints\": %d if this is intended, or use joints that do not over-constrain",
                  nred, nred == 1 ? "" : "s", m->opt.redundant, buf, nred);
}

/* The leading matrix M + a J'J is singular exactly when some motion has no mass and no constraint:
 * collect the null directions of every body's mass matrix (virtual bodies: all 12; bodies with an
 * inertia-free direction: those) and check that the gradient J has full rank on them (Gram-Schmidt
 * on the columns J z). A numerical factorisation alone would not see this: round-off leaves a tiny
 * positive pivot and a meaningless solution. */
static int check_massless_directions(const cfMbsModel* m, const cfMbsData* d) {
  int n = m->nq, nc = m->ncon, nz = 0;
  int* zbody = malloc(sizeof(int) * (size_t)n);
  double* Z = malloc(sizeof(double) * (size_t)n * 12); /* 12-vectors per direction (body-local) */
  double* JZ = malloc(sizeof(double) * (size_t)n * (size_t)(nc ? nc : 1));
  if (!zbody || !Z || !JZ) {
    free(zbody), free(Z), free(JZ);
    return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  }
  for (int b = 0; b < m->nbody; b++) {
    double A[16], w[4];
    memcpy(A, m->body_Mbar + 16 * b, sizeof A);
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 4, A, 4, w) != 0) continue;
    for (int k = 0; k < 4; k++) {
      if (w[k] > 1e-12 * m->mref) continue;
      for (int i = 0; i < 3; i++) {
        double* z = Z + 12 * (size_t)nz;
        memset(z, 0, 12 * sizeof(double));
        for (int l = 0; l < 4; l++) z[3 * l + i] = A[4 * l + k]; /* eigenvector column k */
        zbody[nz++] = b;
      }
    }
  }
  int st = CF_OK, rank = 0;
  for (int c = 0; c < nz && st >= 0; c++) {
    /* column J z_c: rows of the equations that involve the body */
    double* v = JZ + (size_t)rank * nc;
    memset(v, 0, sizeof(double) * (size_t)nc);
    for (int i = 0; i < nc; i++) {
      const cfMbsCon* con = &m->con[i];
      for (int sl = 0; sl < con->nb; sl++)
        if (con->body[sl] == zbody[c]) {
          const double* row = d->jac + (size_t)i * m->jac_stride + 12 * (size_t)sl;
          for (int k = 0; k < 12; k++) v[i] += row[k] * Z[12 * (size_t)c + k];
        }
    }
    double n0 = 0;
    for (int i = 0; i < nc; i++) n0 += v[i] * v[i];
    n0 = sqrt(n0);
    double r = 0;
    if (n0 > 0) {
      for (int i = 0; i < nc; i++) v[i] /= n0;
      for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < rank; b++) {
          const double* e = JZ + (size_t)b * nc;
          double sdot = 0;
          for (int i = 0; i < nc; i++) sdot += e[i] * v[i];
          for (int i = 0; i < nc; i++) v[i] -= sdot * e[i];
        }
      for (int i = 0; i < nc; i++) r += v[i] * v[i];
      r = sqrt(r);
    }
    if (r > 1e-8) {
      for (int i = 0; i < nc; i++) v[i] /= r;
      rank++;
    } else {
      int b = zbody[c];
      st = cf_error(CF_ERR_SCENE,
                    "body '%s': a motion of it has neither mass nor a constraint (the leading matrix M + a J'J is "
                    "singular): %s", m->body_name[b],
                    m->body_virtual[b] ? "a virtual body must be held by its joints in all six directions"
                                       : "its inertia is zero about a direction that no joint fixes; give it inertia");
    }
  }
  free(zbody), free(Z), free(JZ);
  (void)n;
  return st;
}

/* a body's size for the initial joint check: the diagonal of an FE or modal body's mesh box, twice a
 * rigid body's radius of gyration; 0 for the ground and virtual bodies */
static double def_body_size(const cfMbsDef* def, int b) {
  if (b < 0) return 0;
  const double* X = NULL;
  int n = 0;
  for (int i = 0; i < def->nfe; i++)
    if (def->fe[i].body == b && def->fe[i].fem) X = def->fe[i].fem->X, n = def->fe[i].fem->nnode;
  for (int i = 0; i < def->nmodal; i++)
    if (def->modal[i].body == b && def->modal[i].red && def->modal[i].X) X = def->modal[i].X, n = def->modal[i].red->nnode;
  if (X && n > 0) {
    double lo[3] = {X[0], X[1], X[2]}, hi[3] = {X[0], X[1], X[2]};
    for (int k = 1; k < n; k++)
      for (int a = 0; a < 3; a++) lo[a] = fmin(lo[a], X[3 * k + a]), hi[a] = fmax(hi[a], X[3 * k + a]);
    return sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
  }
  const cfMbsBodyDef* B = &def->body[b];
  if (B->is_virtual || !(B->mass > 0)) return 0;
  return 2 * sqrt(fmax(0, B->inertia[0] + B->inertia[1] + B->inertia[2]) / (2 * B->mass));
}

/* Before the initial assembly pulls them together: each joint's two sides at t = 0 (its
 * common-point or common-line equations, the distance joint's length). A side far off (a body placed
 * 0.1 m from its joint, two node sets apart) would be dragged into place, tearing an FE mesh, and
 * the run fail later as "not positive definite": refused, naming the joint, its bodies and the gap. */
static int check_initial_joints(const cfMbsDef* def, const cfMbsModel* m, const cfMbsData* d) {
  for (int j = 0; j < m->njoint; j++) {
    const int t = m->joint_type[j], c0 = m->joint_con0[j], b1 = m->joint_body[2 * j], b2 = m->joint_body[2 * j + 1];
    int e0 = 0, e1 = 3;
    if (t == CF_MBS_PRISMATIC || t == CF_MBS_CYLINDRICAL) e0 = 2, e1 = 4;
    double gap = 0;
    if (t == CF_MBS_DISTANCE) {
      const double L2 = -2 * m->con[c0].c0, D2 = 2 * d->phi[c0] + L2;
      gap = fabs(sqrt(fmax(0, D2)) - sqrt(fmax(0, L2)));
    } else {
      for (int e = e0; e < e1 && e < m->joint_ncon[j]; e++) gap += d->phi[c0 + e] * d->phi[c0 + e];
      gap = sqrt(gap);
    }
    const double size = fmax(def_body_size(def, b1), def_body_size(def, b2));
    if (!(gap > 1e-3 * size) || size == 0) continue;
    char what[96];
    if (t == CF_MBS_DISTANCE)
      snprintf(what, sizeof what, "%.3g m off the joint's distance, %.3g m,", gap, sqrt(fmax(0, -2 * m->con[c0].c0)));
    else snprintf(what, sizeof what, "%.3g m from the joint's point on %s", gap, b1 >= 0 ? m->body_name[b1] : "the ground");
    return cf_error(CF_ERR_SCENE, "joint '%s': body2 '%s' is %s at t = 0 (the bodies are %.3g m in size; the initial "
                    "assembly would drag it there%s): place it on the joint", m->joint_name[j],
                    b2 >= 0 ? m->body_name[b2] : "ground", what, size, m->nfe ? ", tearing an FE mesh" : "");
  }
  return CF_OK;
}

int cf_mbs_model_create(const cfMbsDef* def, cfMbsModel** out) {
  *out = NULL;
  int st = check_options(&def->opt);
  if (st < 0) return st;
  if (def->nbody < 1) return cf_error(CF_ERR_SCENE, "mechanism has no moving body");
  st = check_bodies(def);
  if (st < 0) return st;
  cfMbsModel* m = calloc(1, sizeof *m);
  if (!m) return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  m->opt = def->opt;
  st = build_bodies_markers(def, m);
  /* the modal amplitude blocks, then the FE node blocks */
  for (int k = 0; st >= 0 && k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->compile) st = cf_mbs__body_kinds[k]->compile(def, m);
  if (st >= 0) st = cf_mbs__compile_constraints(def, m);
  if (st >= 0) st = cf_mbs__compile_forces(def, m);
  if (st >= 0) st = cf_mbs__build_pattern(m);
  if (st < 0) {
    cf_mbs_model_free(m);
    return st;
  }
  m->con_pen = malloc(sizeof(double) * (size_t)(m->ncon > 0 ? m->ncon : 1));
  if (!m->con_pen) {
    cf_mbs_model_free(m);
    return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  }
  cf_mbs__set_dt(m, m->opt.dt);
  m->q0 = calloc((size_t)m->nq, sizeof(double));
  m->qd0 = calloc((size_t)m->nq, sizeof(double));
  if (!m->q0 || !m->qd0) {
    cf_mbs_model_free(m);
    return cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
  }
  initial_coordinates(def, m, m->q0, m->qd0);

  /* assemble: Phi(q, 0) = 0 nearest to the given poses, then the equation check and the
   * velocity projection (which needs M + a J'J positive definite) */
  cfMbsData* d = NULL;
  st = cf_mbs_data_create(m, &d); /* q0 not assembled yet: data_create skips accelerations */
  if (st < 0) {
    cf_mbs_model_free(m);
    return st;
  }
  cf_mbs__eval_phi(m, d, d->q, 0.0, 1);
  st = check_initial_joints(def, m, d);
  if (st >= 0) {
    st = cf_mbs__assemble_positions(m, d, 0.0, 100);
    if (st < 0) st = cf_mbs__rethrow(st, "initial assembly: ");
  }
  if (st >= 0) {
    double shift = 0;
    for (int i = 0; i < m->nq; i++) shift = fmax(shift, fabs(d->q[i] - m->q0[i]));
    m->assembly_shift = shift;
    cf_mbs__eval_phi(m, d, d->q, 0.0, 1);
    int* list = malloc(sizeof(int) * (size_t)(m->ncon > 0 ? m->ncon : 1));
    int nred = 0;
    m->rank = list ? cf_mbs__rank(m, d, list, m->ncon, &nred) : -1;
    if (m->rank < 0) st = cf_error(CF_ERR_NOMEM, "mechanism: out of memory");
    else {
      m->nredundant = nred;
      m->ndof = m->nq - m->rank;
      if (nred != m->opt.redundant) {
        if (nred > 0) st = redundancy_error(m, nred, list, nred);
        else
          st = cf_error(CF_ERR_SCENE,
                        "mechanism declares %d redundant constraint equations but has none; remove "
                        "\"redundant_constraints\"", m->opt.redundant);
      }
    }
    free(list);
  }
  if (st >= 0) st = check_massless_directions(m, d);
  if (st >= 0) {
    memcpy(d->qd, m->qd0, sizeof(double) * m->nq);
    st = cf_mbs__project_initial_velocities(m, d);
    if (st < 0) st = cf_mbs__rethrow(st, "initial velocities: ");
  }
  if (st >= 0) {
    memcpy(m->q0, d->q, sizeof(double) * m->nq);
    memcpy(m->qd0, d->qd, sizeof(double) * m->nq);
  }
  cf_mbs_data_free(d);
  if (st < 0) {
    cf_mbs_model_free(m);
    return st;
  }
  *out = m;
  return CF_OK;
}

/* ---- data --------------------------------------------------------------------------------------- */
void cf_mbs_data_free(cfMbsData* d) {
  if (!d) return;
  for (int k = 0; k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->data_free) cf_mbs__body_kinds[k]->data_free(d);
  cf_mbs__solver_free(d);
  cf_mbs__monitor_free(d);
  free(d->q); free(d->qd); free(d->qdd); free(d->lambda); free(d->reaction); free(d->phi); free(d->jac); free(d->rhs_c);
  free(d->drv); free(d->Q); free(d->fK); free(d->fC); free(d->rot_angle); free(d->rot_angle_prev);
  free(d->joint_angle); free(d->Ax);
  free(d->r); free(d->x); free(d->dq); free(d->w); free(d->qd_hat); free(d->qdd_hat); free(d->sigma);
  free(d->econ); free(d->con_pen);
  free(d->save); free(d->acc); free(d->gen);
  free(d->body_load); free(d->driver_f); free(d->con_off);
  if (d->modal_force)
    for (int i = 0; i < d->nmodal_force; i++) free(d->modal_force[i]);
  free(d->modal_force);
  free(d);
}

int cf_mbs_data_create(const cfMbsModel* m, cfMbsData** out) {
  *out = NULL;
  cfMbsData* d = calloc(1, sizeof *d);
  if (!d) return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  int ok = 1, n = m->nq, nc = m->ncon;
  CF_MBS_ALLOC(d->q, n);
  CF_MBS_ALLOC(d->qd, n);
  CF_MBS_ALLOC(d->qdd, n);
  CF_MBS_ALLOC(d->lambda, nc);
  CF_MBS_ALLOC(d->reaction, nc);
  CF_MBS_ALLOC(d->phi, nc);
  CF_MBS_ALLOC(d->jac, (size_t)nc * m->jac_stride);
  CF_MBS_ALLOC(d->rhs_c, nc);
  CF_MBS_ALLOC(d->drv, 3 * m->ndriver);
  CF_MBS_ALLOC(d->Q, n);
  CF_MBS_ALLOC(d->fK, (size_t)m->nforce * 576);
  CF_MBS_ALLOC(d->fC, (size_t)m->nforce * 576);
  CF_MBS_ALLOC(d->rot_angle, m->nforce);
  CF_MBS_ALLOC(d->rot_angle_prev, m->nforce);
  CF_MBS_ALLOC(d->joint_angle, m->njoint);
  CF_MBS_ALLOC(d->Ax, m->nnz);
  CF_MBS_ALLOC(d->r, n);
  CF_MBS_ALLOC(d->x, n);
  CF_MBS_ALLOC(d->dq, n);
  CF_MBS_ALLOC(d->w, n);
  CF_MBS_ALLOC(d->qd_hat, n);
  CF_MBS_ALLOC(d->qdd_hat, n);
  CF_MBS_ALLOC(d->sigma, nc);
  CF_MBS_ALLOC(d->econ, nc);
  CF_MBS_ALLOC(d->con_pen, nc);
  CF_MBS_ALLOC(d->acc, n);
  CF_MBS_ALLOC(d->save, 4 * n + nc);
  d->gen = malloc(sizeof(int) * (size_t)(2 * m->nbody + 4)); /* a kind owns at most one range per body */
  if (d->gen) d->ngen = 1, d->gen[0] = 0, d->gen[1] = n;
  ok = ok && d->gen;
  d->body_load = calloc((size_t)(9 * m->nbody + 1), sizeof(double));
  d->driver_f = calloc((size_t)(m->ndriver + 1), sizeof(cfMbsFunc));
  d->con_off = calloc((size_t)(nc + 1), 1);
  d->modal_force = calloc((size_t)(m->nmodal + 1), sizeof(double*));
  d->nmodal_force = m->nmodal;
  ok = ok && d->body_load && d->driver_f && d->con_off && d->modal_force;
  if (!ok) {
    cf_mbs_data_free(d);
    return cf_error(CF_ERR_NOMEM, "mechanism data: out of memory");
  }
  int st = cf_mbs__solver_create(m, d);
  for (int k = 0; st >= 0 && k < cf_mbs__nbody_kinds; k++)
    if (cf_mbs__body_kinds[k]->data_create) st = cf_mbs__body_kinds[k]->data_create(m, d);
  if (st < 0) {
    cf_mbs_data_free(d);
    return st;
  }
  memcpy(d->q, m->q0, sizeof(double) * n);
  memcpy(d->qd, m->qd0, sizeof(double) * n);
  memcpy(d->con_pen, m->con_pen, sizeof(double) * (size_t)m->ncon);
  if (m->ndriver) memcpy(d->driver_f, m->driver_f, sizeof(cfMbsFunc) * (size_t)m->ndriver);
  cf_mbs_set_load_factor(m, d, 1.0);
  /* during cf_mbs_model_create the model is not complete yet (rank 0 and no ndof): the caller
   * assembles; otherwise start from the assembled state with consistent accelerations */
  if (m->rank > 0) {
    st = cf_mbs_reset(m, d);
    if (st >= 0) st = cf_mbs__monitor_create(m, d);
    if (st < 0) {
      cf_mbs_data_free(d);
      return st;
    }
  }
  *out = d;
  return CF_OK;
}

/* the members that depend on the step: dt, the FE stiffness scale h^2/4 K, alpha and the
 * equations' penalties (the statics' relaxation grows its pseudo-step with this) */
void cf_mbs__set_dt(cfMbsModel* m, double h) {
  if (m->kref > 0) m->kref *= (h * h) / (m->opt.dt * m->opt.dt); /* kref = h^2/4 K_max */
  m->opt.dt = h;
  m->alpha = m->opt.penalty > 0 ? m->opt.penalty : 1e5 * (m->kref > m->mref ? m->kref : m->mref) * 4 / (h * h);
  for (int i = 0; i < m->ncon; i++) { /* the equations that hold no FE node: the penalty of the masses */
    const cfMbsCon* c = &m->con[i];
    int fe = c->nft > 0;
    for (int s = 0; s < c->nb; s++) fe |= m->body_modal[c->body[s]] == 3;
    m->con_pen[i] = (m->opt.penalty > 0 || fe || !(m->kref > m->mref)) ? 1.0 : m->mref / m->kref;
  }
}

void cf_mbs_set_load_factor(const cfMbsModel* m, cfMbsData* d, double factor) {
  d->load_factor = factor;
  for (int i = 0; i < 3; i++) d->gravity[i] = factor * m->opt.gravity[i];
}

int cf_mbs_reset(const cfMbsModel* m, cfMbsData* d) {
  cf_mbs__fe_host_writes(m, d); /* (then written: the next step takes d's state to the device) */
  d->t = 0;
  d->steps = 0;
  d->iters = d->iters_max = 0;
  d->iters_total = 0;
  d->proj_iters[0] = d->proj_iters[1] = 0;
  memset(d->timer, 0, sizeof d->timer);
  memset(d->warning, 0, sizeof d->warning);
  memcpy(d->q, m->q0, sizeof(double) * m->nq);
  memcpy(d->qd, m->qd0, sizeof(double) * m->nq);
  memset(d->qdd, 0, sizeof(double) * m->nq);
  memset(d->lambda, 0, sizeof(double) * (m->ncon > 0 ? m->ncon : 1));
  memcpy(d->con_pen, m->con_pen, sizeof(double) * (size_t)m->ncon);
  /* the scene's drivers and joints back (a controller's settings are undone; applied loads kept) */
  if (m->ndriver) memcpy(d->driver_f, m->driver_f, sizeof(cfMbsFunc) * (size_t)m->ndriver);
  memset(d->con_off, 0, (size_t)m->ncon);
  cf_mbs_set_load_factor(m, d, 1.0);
  memset(d->rot_angle, 0, sizeof(double) * (m->nforce > 0 ? m->nforce : 1));
  memset(d->rot_angle_prev, 0, sizeof(double) * (m->nforce > 0 ? m->nforce : 1));
  memset(d->joint_angle, 0, sizeof(double) * (m->njoint > 0 ? m->njoint : 1));
  cf_mbs__accept_angles(m, d);
  int st = cf_mbs__initial_accelerations(m, d);
  if (st < 0) return cf_mbs__rethrow(st, "initial accelerations: ");
  memcpy(d->reaction, d->lambda, sizeof(double) * (size_t)m->ncon);
  memcpy(d->acc, d->qdd, sizeof(double) * (size_t)m->nq);
  double v[3];
  cf_mbs_violation(m, d, v);
  return CF_OK;
}

const char* cf_mbs_coupling_name(int coupling) {
  return coupling == CF_MBS_COUPLING_LINEAR ? "linear" : coupling == CF_MBS_COUPLING_NEWTON ? "newton" : "?";
}

int cf_mbs_coupling_from_key(const char* key) {
  if (!strcmp(key, "newton")) return CF_MBS_COUPLING_NEWTON;
  if (!strcmp(key, "linear")) return CF_MBS_COUPLING_LINEAR;
  return -1;
}
