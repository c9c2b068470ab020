/* Joints, drivers and forces of the multibody core:
 *  - every joint type between the ground and a tumbling body: the degrees of freedom it leaves, the
 *    geometric relation it stands for (checked on the bodies' poses, not on its equations), the
 *    constraint violation after every step;
 *  - the gradient, Phi_t and the acceleration bias of every kind of equation against finite
 *    differences, at a state that does not satisfy them;
 *  - forces: a free body under a force and a torque (F = m a, T = I alpha), a spring-mass on a
 *    prismatic joint (period, static deflection, energy over 10 s), a damped one (logarithmic
 *    decrement), a rotational spring (period) with an actuator torque (static angle), a follower
 *    force, and the reaction of a hanging pendulum. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"
#include "mbs/mbs_internal.h"

static cfMbsBodyDef box_body(const char* name, double m, double Ix, double Iy, double Iz) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.mass = m;
  b.inertia[0] = Ix, b.inertia[1] = Iy, b.inertia[2] = Iz;
  return b;
}

static void set_joint(cfMbsJointDef* j, const char* name, int type, int b1, int b2, const double* p, const double* a) {
  *j = cf_mbs_default_joint_def();
  snprintf(j->name, sizeof j->name, "%s", name);
  j->type = type, j->body1 = b1, j->body2 = b2;
  if (p) memcpy(j->point, p, sizeof j->point);
  if (a) memcpy(j->axis, a, sizeof j->axis);
}

/* ---- joint types ----------------------------------------------------------------------------- */
static void test_joint_types(void) {
  static const char* names[] = {"spherical", "revolute", "prismatic", "cylindrical", "universal", "fixed", "distance"};
  static const int dof[] = {3, 1, 1, 2, 2, 0, 5};
  const double P[3] = {0.3, -0.2, 0.1};
  double ax[3] = {1, 2, 2};
  for (int i = 0; i < 3; i++) ax[i] /= 3;
  const double ax2[3] = {2.0 / 3, 1.0 / 3, -2.0 / 3}; /* perpendicular to ax */
  for (int type = 0; type < CF_MBS_JOINT_TYPES; type++) {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    def.opt.dt = 1e-3;
    def.opt.gravity[1] = -9.81;
    cfMbsBodyDef B = box_body("B", 2.0, 0.05, 0.08, 0.11);
    B.com[0] = 0.2, B.com[1] = 0.1;
    double rax[3] = {0.3, 0.4, 0.5};
    cf_mbs_axis_angle(rax, 0.7, B.rot);
    B.pos[0] = 0.1, B.pos[1] = 0.2;
    B.vel[0] = 0.5, B.vel[1] = -0.3, B.vel[2] = 0.4;
    B.omega[0] = 1.0, B.omega[1] = -2.0, B.omega[2] = 1.5;
    int b = cf_mbs_add_body(&def, &B);
    cfMbsJointDef j;
    set_joint(&j, names[type], type, CF_MBS_GROUND, b, P, ax);
    memcpy(j.axis2, ax2, sizeof ax2);
    double P2[3] = {0.6, 0.3, -0.2};
    memcpy(j.point2, P2, sizeof P2);
    cf_mbs_add_joint(&def, &j);
    cfMbsForceDef f = cf_mbs_default_force_def();
    snprintf(f.name, sizeof f.name, "push");
    f.type = CF_MBS_POINT_FORCE;
    f.body1 = b;
    f.point1[0] = 0.4;
    f.vec[2] = 3;
    cf_mbs_add_force(&def, &f);
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (!d) {
      cf_mbs_model_free(m);
      cf_mbs_def_free(&def);
      continue;
    }
    CHECK(m->ndof == dof[type]);
    CHECK(m->nredundant == 0);
    /* body coordinates of the joint points and axes (from the t = 0 pose) */
    double R0[9], pl[3], al[3], a2l[3], p2l[3];
    cf_mbs_rotation(m, d, b, R0);
    double x0[3] = {d->q[0], d->q[1], d->q[2]};
    for (int i = 0; i < 3; i++) {
      pl[i] = al[i] = a2l[i] = p2l[i] = 0;
      for (int k = 0; k < 3; k++) {
        pl[i] += R0[3 * k + i] * (P[k] - x0[k]);
        p2l[i] += R0[3 * k + i] * (P2[k] - x0[k]);
        al[i] += R0[3 * k + i] * ax[k];
        a2l[i] += R0[3 * k + i] * ax2[k];
      }
    }
    double worst_phi = 0, worst_rel = 0, moved = 0;
    for (int s = 0; s < 300; s++) {
      int st = cf_mbs_step(m, d);
      if (st < 0) {
        CHECK_OK(st);
        break;
      }
      worst_phi = fmax(worst_phi, d->phi_max);
      double R[9], x[3], p[3], a[3] = {0, 0, 0}, a2[3] = {0, 0, 0}, dp[3];
      cf_mbs_rotation(m, d, b, R);
      cf_mbs_point(m, d, b, pl, x);
      cf_mbs_point(m, d, b, p2l, p);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) a[i] += R[3 * i + k] * al[k], a2[i] += R[3 * i + k] * a2l[k];
      for (int i = 0; i < 3; i++) dp[i] = x[i] - P[i];
      double along = cf_mbs_dot3(dp, ax), perp[3], rot = 0, da[3];
      for (int i = 0; i < 3; i++) perp[i] = dp[i] - along * ax[i], da[i] = a[i] - ax[i];
      for (int i = 0; i < 9; i++) rot = fmax(rot, fabs(R[i] - R0[i]));
      double e = 0;
      switch (type) {
        case CF_MBS_SPHERICAL: e = cf_mbs_norm3(dp); break;
        case CF_MBS_REVOLUTE: e = fmax(cf_mbs_norm3(dp), cf_mbs_norm3(da)); break;
        case CF_MBS_PRISMATIC: e = fmax(cf_mbs_norm3(perp), rot); break;
        case CF_MBS_CYLINDRICAL: e = fmax(cf_mbs_norm3(perp), cf_mbs_norm3(da)); break;
        case CF_MBS_UNIVERSAL: e = fmax(cf_mbs_norm3(dp), fabs(cf_mbs_dot3(ax, a2))); break;
        case CF_MBS_FIXED: e = fmax(cf_mbs_norm3(dp), rot); break;
        case CF_MBS_DISTANCE: {
          double d0[3] = {P2[0] - P[0], P2[1] - P[1], P2[2] - P[2]}, d1[3] = {p[0] - P[0], p[1] - P[1], p[2] - P[2]};
          e = fabs(cf_mbs_norm3(d1) - cf_mbs_norm3(d0));
          break;
        }
      }
      worst_rel = fmax(worst_rel, e);
      moved = fmax(moved, fmax(rot, fabs(along)));
    }
    printf("%-11s joint: %d DOF, relation error %.2e, max |Phi| %.2e, motion %.3f\n", names[type], m->ndof, worst_rel,
           worst_phi, moved);
    CHECK(worst_rel < 1e-8);
    CHECK(worst_phi < 1e-8);
    if (type != CF_MBS_FIXED) CHECK(moved > 0.05);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
}

/* ---- derivatives against finite differences ----------------------------------------------------- */
static void test_derivatives(void) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  double rax[3] = {1, -1, 2}, z[3] = {0, 0, 1}, xa[3] = {1, 0, 0};
  int ids[4];
  for (int k = 0; k < 4; k++) {
    cfMbsBodyDef B = box_body("b0", 1 + k, 0.1, 0.2, 0.25);
    B.name[1] = (char)('0' + k);
    cf_mbs_axis_angle(rax, 0.3 * k, B.rot);
    B.pos[0] = k;
    ids[k] = cf_mbs_add_body(&def, &B);
  }
  cfMbsJointDef j;
  double p0[3] = {0, 0, 0}, p1[3] = {1, 0, 0}, p2[3] = {2, 0, 0}, p3[3] = {3, 0, 0}, ap[3] = {0.6, 0.8, 0};
  set_joint(&j, "rev", CF_MBS_REVOLUTE, CF_MBS_GROUND, ids[0], p0, z), cf_mbs_add_joint(&def, &j);
  set_joint(&j, "cyl", CF_MBS_CYLINDRICAL, ids[0], ids[1], p1, ap), cf_mbs_add_joint(&def, &j);
  set_joint(&j, "uni", CF_MBS_UNIVERSAL, ids[1], ids[2], p2, z), j.axis2[0] = 1, j.axis2[1] = j.axis2[2] = 0;
  cf_mbs_add_joint(&def, &j);
  set_joint(&j, "pri", CF_MBS_PRISMATIC, ids[2], ids[3], p3, xa), cf_mbs_add_joint(&def, &j);
  set_joint(&j, "fix", CF_MBS_FIXED, ids[3], ids[0], p3, ap), cf_mbs_add_joint(&def, &j);
  set_joint(&j, "sph", CF_MBS_SPHERICAL, ids[1], ids[3], p2, NULL), cf_mbs_add_joint(&def, &j);
  set_joint(&j, "dst", CF_MBS_DISTANCE, ids[0], ids[2], p1, NULL), j.point2[0] = 2.5, j.point2[1] = 0.5;
  cf_mbs_add_joint(&def, &j);
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "ang");
  dr.type = CF_MBS_DRIVE_ANGLE, dr.joint = 0;
  dr.f.type = CF_MBS_FUNC_HARMONIC, dr.f.c[0] = 0.7, dr.f.c[1] = 3, dr.f.c[2] = 0.2, dr.f.c[3] = 0.1;
  cf_mbs_add_driver(&def, &dr);
  snprintf(dr.name, sizeof dr.name, "tra");
  dr.type = CF_MBS_DRIVE_TRANSLATION, dr.joint = 1;
  dr.f.type = CF_MBS_FUNC_POLY, dr.f.n = 3, dr.f.c[0] = 0.1, dr.f.c[1] = -0.5, dr.f.c[2] = 0.8;
  cf_mbs_add_driver(&def, &dr);
  snprintf(dr.name, sizeof dr.name, "dis");
  dr.type = CF_MBS_DRIVE_DISTANCE, dr.body1 = ids[1], dr.body2 = ids[3];
  dr.point1[1] = 1, dr.point2[0] = 3, dr.point2[2] = 1;
  dr.f.type = CF_MBS_FUNC_STEP, dr.f.rate = 1, dr.f.c[0] = 0.2, dr.f.c[1] = -0.3, dr.f.c[2] = 0.1, dr.f.c[3] = 0.6;
  cf_mbs_add_driver(&def, &dr);
  /* the model (assembly) is not needed: build the equations directly */
  cfMbsModel* m = calloc(1, sizeof *m);
  m->opt = def.opt;
  m->nbody = 4;
  m->nq = 48;
  int qadr[4] = {0, 12, 24, 36}, nqb[4] = {12, 12, 12, 12};
  m->body_qadr = qadr;
  m->body_nq = nqb;
  CHECK_OK(cf_mbs__compile_constraints(&def, m));
  cfMbsData d;
  memset(&d, 0, sizeof d);
  int nc = m->ncon;
  d.phi = calloc((size_t)nc, sizeof(double));
  d.jac = calloc((size_t)nc * m->jac_stride, sizeof(double));
  d.drv = calloc(9, sizeof(double));
  double *q = calloc(48, sizeof(double)), *qd = calloc(48, sizeof(double)), *qdd = calloc(48, sizeof(double));
  double *ph = calloc((size_t)nc, sizeof(double)), *pm = calloc((size_t)nc, sizeof(double)), *p0v = calloc((size_t)nc, sizeof(double));
  double *Jx = calloc((size_t)nc, sizeof(double)), *phit = calloc((size_t)nc, sizeof(double)), *bias = calloc((size_t)nc, sizeof(double));
  unsigned s = 12345;
  for (int i = 0; i < 48; i++) {
    s = s * 1103515245u + 12345u;
    q[i] = ((s >> 8) % 2000) / 1000.0 - 1;
    s = s * 1103515245u + 12345u;
    qd[i] = ((s >> 8) % 2000) / 1000.0 - 1;
    s = s * 1103515245u + 12345u;
    qdd[i] = ((s >> 8) % 2000) / 1000.0 - 1;
  }
  double t = 0.35;
  /* gradient: J qd against the directional derivative */
  double eps = 1e-6, gerr = 0, gscale = 0;
  cf_mbs__eval_phi(m, &d, q, t, 1);
  memcpy(p0v, d.phi, sizeof(double) * nc);
  cf_mbs__jac_mult(m, &d, qd, Jx);
  double* qp = calloc(48, sizeof(double));
  for (int i = 0; i < 48; i++) qp[i] = q[i] + eps * qd[i];
  cf_mbs__eval_phi(m, &d, qp, t, 0);
  memcpy(ph, d.phi, sizeof(double) * nc);
  for (int i = 0; i < 48; i++) qp[i] = q[i] - eps * qd[i];
  cf_mbs__eval_phi(m, &d, qp, t, 0);
  memcpy(pm, d.phi, sizeof(double) * nc);
  for (int i = 0; i < nc; i++) {
    gerr = fmax(gerr, fabs((ph[i] - pm[i]) / (2 * eps) - Jx[i]));
    gscale = fmax(gscale, fabs(Jx[i]));
  }
  /* Phi_t */
  cf_mbs__eval_phit(m, &d, q, t, phit);
  cf_mbs__eval_phi(m, &d, q, t + eps, 0);
  memcpy(ph, d.phi, sizeof(double) * nc);
  cf_mbs__eval_phi(m, &d, q, t - eps, 0);
  memcpy(pm, d.phi, sizeof(double) * nc);
  double terr = 0, tscale = 0;
  for (int i = 0; i < nc; i++) {
    terr = fmax(terr, fabs((ph[i] - pm[i]) / (2 * eps) - phit[i]));
    tscale = fmax(tscale, fabs(phit[i]));
  }
  /* bias: second derivative along q(tau) = q + qd tau + qdd tau^2 / 2, t + tau, minus J qdd */
  double tau = 1e-4;
  cf_mbs__eval_bias(m, &d, q, qd, t, bias);
  cf_mbs__eval_phi(m, &d, q, t, 1);
  cf_mbs__jac_mult(m, &d, qdd, Jx);
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < 48; i++) qp[i] = q[i] + sgn * tau * qd[i] + 0.5 * tau * tau * qdd[i];
    cf_mbs__eval_phi(m, &d, qp, t + sgn * tau, 0);
    memcpy(sgn < 0 ? pm : ph, d.phi, sizeof(double) * nc);
  }
  double berr = 0, bscale = 0;
  for (int i = 0; i < nc; i++) {
    double phidd = (ph[i] - 2 * p0v[i] + pm[i]) / (tau * tau);
    berr = fmax(berr, fabs(phidd - Jx[i] - bias[i]));
    bscale = fmax(bscale, fabs(phidd));
  }
  printf("derivatives of %d equations (7 joint types, 3 drivers) at a random state: gradient %.1e (of %.1f), "
         "Phi_t %.1e (of %.2f), bias %.1e (of %.1f)\n", nc, gerr, gscale, terr, tscale, berr, bscale);
  CHECK(gerr < 1e-8 * gscale);
  CHECK(terr < 1e-8 * fmax(tscale, 1));
  CHECK(berr < 1e-5 * bscale);
  CHECK(tscale > 0.1);
  free(q), free(qd), free(qdd), free(qp), free(ph), free(pm), free(p0v), free(Jx), free(phit), free(bias);
  free(d.phi), free(d.jac), free(d.drv);
  m->body_qadr = NULL;
  m->body_nq = NULL;
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* ---- forces ------------------------------------------------------------------------------------ */
static void test_free_body(void) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  cfMbsBodyDef B = box_body("free", 3.0, 0.2, 0.4, 0.5);
  B.com[0] = 0.1;
  int b = cf_mbs_add_body(&def, &B);
  cfMbsForceDef f = cf_mbs_default_force_def();
  snprintf(f.name, sizeof f.name, "F");
  f.type = CF_MBS_POINT_FORCE, f.body1 = b, f.point1[0] = 0.1; /* at the centre of mass */
  f.vec[0] = 6, f.vec[1] = -3, f.vec[2] = 1.5;
  cf_mbs_add_force(&def, &f);
  snprintf(f.name, sizeof f.name, "T");
  f.type = CF_MBS_TORQUE;
  f.vec[0] = 0.1, f.vec[1] = 0.2, f.vec[2] = -0.5;
  cf_mbs_add_force(&def, &f);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    CHECK(m->ndof == 6);
    double c[3] = {0.1, 0, 0}, a[3], al[3] = {0, 0, 0};
    cf_mbs_point_acc(m, d, b, c, a);
    const double* qb = d->q;
    const double* ab = d->qdd;
    for (int k = 1; k < 4; k++) { /* alpha = 1/2 sum e x e'' when omega = 0 */
      double x[3];
      cf_mbs_cross3(qb + 3 * k, ab + 3 * k, x);
      for (int i = 0; i < 3; i++) al[i] += 0.5 * x[i];
    }
    printf("free body: a = (%.6f %.6f %.6f) (F/m = 2 -1 0.5), alpha = (%.6f %.6f %.6f) (T/I = 0.5 0.5 -1)\n", a[0], a[1],
           a[2], al[0], al[1], al[2]);
    CHECK_CLOSE(a[0], 2, 1e-9, 0);
    CHECK_CLOSE(a[1], -1, 1e-9, 0);
    CHECK_CLOSE(a[2], 0.5, 1e-9, 0);
    CHECK_CLOSE(al[0], 0.5, 1e-9, 0);
    CHECK_CLOSE(al[1], 0.5, 1e-9, 0);
    CHECK_CLOSE(al[2], -1, 1e-9, 0);
    for (int s = 0; s < 500; s++) CHECK_OK(cf_mbs_step(m, d));
    double x[3];
    cf_mbs_point(m, d, b, c, x);
    CHECK_CLOSE(x[0], 0.1 + 0.5 * 2 * 0.25, 1e-9, 0);
    CHECK_CLOSE(x[1], -0.5 * 0.25, 1e-9, 0);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* mass m on a vertical prismatic joint, spring k (and damper c) to the ground, gravity */
static void run_spring_mass(double c, double* period, double* decrement, double* drift, double* y_eq) {
  const double mass = 2.0, k = 800.0, g = 9.81;
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  def.opt.gravity[1] = -g;
  cfMbsBodyDef B = box_body("mass", mass, 0.01, 0.01, 0.01);
  B.pos[1] = -1.0;
  B.vel[1] = 0.3;
  int b = cf_mbs_add_body(&def, &B);
  cfMbsJointDef j;
  double y[3] = {0, 1, 0}, p[3] = {0, -1, 0};
  set_joint(&j, "slide", CF_MBS_PRISMATIC, CF_MBS_GROUND, b, p, y);
  cf_mbs_add_joint(&def, &j);
  cfMbsForceDef f = cf_mbs_default_force_def();
  snprintf(f.name, sizeof f.name, "spring");
  f.type = CF_MBS_SPRING, f.body1 = CF_MBS_GROUND, f.body2 = b;
  f.point2[1] = -1.0;
  f.k = k, f.c = c, f.rest = 1.0;
  cf_mbs_add_force(&def, &f);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  *period = *decrement = *drift = *y_eq = NAN;
  if (d) {
    double T0, V0;
    cf_mbs_energy(m, d, &T0, &V0);
    double prev = 0, first = -1, last = -1, lo = 1e9, hi = -1e9;
    int n = 0;
    double yeq = -1.0 - mass * g / k, dE = 0, Escale = 0.5 * mass * 0.3 * 0.3;
    for (int s = 1; s <= 10000; s++) {
      CHECK_OK(cf_mbs_step(m, d));
      double yy = d->q[1] - yeq, T, V;
      cf_mbs_energy(m, d, &T, &V);
      dE = fmax(dE, fabs(T + V - T0 - V0));
      lo = fmin(lo, d->q[1]), hi = fmax(hi, d->q[1]);
      if (s > 1 && prev > 0 && yy <= 0) {
        double tc = d->t - m->opt.dt * yy / (yy - prev);
        if (first < 0) first = tc;
        last = tc;
        n++;
      }
      prev = yy;
    }
    *period = (last - first) / (n - 1);
    *drift = dE / (Escale + 0.5 * mass * mass * g * g / k);
    *y_eq = 0.5 * (lo + hi);
    /* logarithmic decrement from the first two maxima of a fresh run */
    CHECK_OK(cf_mbs_reset(m, d));
    double ymax[2] = {0, 0}, vprev = d->qd[1];
    int nm = 0;
    for (int s = 1; s <= 5000 && nm < 2; s++) {
      CHECK_OK(cf_mbs_step(m, d));
      if (vprev > 0 && d->qd[1] <= 0) ymax[nm++] = d->q[1] - yeq;
      vprev = d->qd[1];
    }
    *decrement = nm == 2 ? log(ymax[0] / ymax[1]) : NAN;
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

static void test_spring_mass(void) {
  const double mass = 2.0, k = 800.0;
  double T, dec, drift, yeq;
  run_spring_mass(0.0, &T, &dec, &drift, &yeq);
  double T_ex = 2 * M_PI * sqrt(mass / k);
  printf("spring-mass: period %.6f s (analytic %.6f), mid-position %.6f m (static %.6f), energy drift over 10 s %.2e\n", T,
         T_ex, yeq, -1.0 - mass * 9.81 / k, drift);
  CHECK_CLOSE(T, T_ex, 0, 2e-4);
  CHECK_CLOSE(yeq, -1.0 - mass * 9.81 / k, 1e-5, 0);
  CHECK(drift < 1e-3);
  double c = 4.0, zeta = c / (2 * sqrt(k * mass));
  run_spring_mass(c, &T, &dec, &drift, &yeq);
  double dec_ex = 2 * M_PI * zeta / sqrt(1 - zeta * zeta);
  printf("damped spring-mass (zeta %.4f): logarithmic decrement %.5f (analytic %.5f)\n", zeta, dec, dec_ex);
  CHECK_CLOSE(dec, dec_ex, 0, 5e-3);
}

static void test_rotational_spring(void) {
  const double I = 0.5, k = 20.0, tau = 2.0;
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  cfMbsBodyDef B = box_body("wheel", 1.0, 0.3, 0.3, I);
  B.omega[2] = 1.0;
  int b = cf_mbs_add_body(&def, &B);
  cfMbsJointDef j;
  double z[3] = {0, 0, 1}, o[3] = {0, 0, 0};
  set_joint(&j, "axle", CF_MBS_REVOLUTE, CF_MBS_GROUND, b, o, z);
  cf_mbs_add_joint(&def, &j);
  cfMbsForceDef f = cf_mbs_default_force_def();
  snprintf(f.name, sizeof f.name, "torsion");
  f.type = CF_MBS_ROT_SPRING, f.joint = 0, f.k = k;
  cf_mbs_add_force(&def, &f);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    double prev = 0, first = -1, last = -1;
    int n = 0;
    for (int s = 1; s <= 4000; s++) {
      CHECK_OK(cf_mbs_step(m, d));
      double a = cf_mbs_joint_angle(m, d, 0);
      if (s > 1 && prev > 0 && a <= 0) {
        double tc = d->t - m->opt.dt * a / (a - prev);
        if (first < 0) first = tc;
        last = tc;
        n++;
      }
      prev = a;
    }
    double T = (last - first) / (n - 1), T_ex = 2 * M_PI * sqrt(I / k);
    printf("rotational spring: period %.6f s (analytic %.6f)\n", T, T_ex);
    CHECK_CLOSE(T, T_ex, 0, 2e-4);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  /* damped, with a constant actuator torque: settles at tau / k */
  def.force[0].c = 2 * sqrt(k * I);
  def.force[0].has_actuator = 1;
  def.force[0].actuator = cf_mbs_func_const(tau);
  m = NULL, d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    for (int s = 1; s <= 5000; s++) CHECK_OK(cf_mbs_step(m, d));
    printf("rotational spring-damper with actuator torque %.1f N m: angle %.6f rad (tau/k = %.6f)\n", tau,
           cf_mbs_joint_angle(m, d, 0), tau / k);
    CHECK_CLOSE(cf_mbs_joint_angle(m, d, 0), tau / k, 1e-5, 0);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* a body-frame force turns with the body; the hinge of a hanging pendulum carries m g */
static void test_follower_and_reaction(void) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  def.opt.gravity[1] = -9.81;
  cfMbsBodyDef B = box_body("bob", 2.0, 0.01, 0.01, 0.01);
  double z[3] = {0, 0, 1};
  cf_mbs_axis_angle(z, M_PI / 2, B.rot); /* body x along global y */
  B.pos[1] = -1;
  int b = cf_mbs_add_body(&def, &B);
  cfMbsJointDef j;
  double o[3] = {0, 0, 0};
  set_joint(&j, "hinge", CF_MBS_REVOLUTE, CF_MBS_GROUND, b, o, z);
  cf_mbs_add_joint(&def, &j);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    for (int s = 0; s < 10; s++) CHECK_OK(cf_mbs_step(m, d));
    double F[3];
    cf_mbs_joint_reaction(m, d, 0, F);
    printf("hanging pendulum: hinge reaction on the bob (%.6f, %.6f, %.6f) N (m g = 19.62)\n", F[0], F[1], F[2]);
    CHECK_CLOSE(F[0], 0, 1e-6, 0);
    CHECK_CLOSE(F[1], 2 * 9.81, 1e-6, 0);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);

  /* free body, rotated 90 degrees about z, force (1, 0, 0) in its frame: accelerates along +y */
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  cfMbsBodyDef C = box_body("rot", 1.0, 0.1, 0.1, 0.1);
  cf_mbs_axis_angle(z, M_PI / 2, C.rot);
  b = cf_mbs_add_body(&def, &C);
  cfMbsForceDef f = cf_mbs_default_force_def();
  snprintf(f.name, sizeof f.name, "thrust");
  f.type = CF_MBS_POINT_FORCE, f.body1 = b, f.body_frame = 1, f.vec[0] = 1;
  f.has_scale = 1, f.scale = cf_mbs_func_const(3);
  cf_mbs_add_force(&def, &f);
  m = NULL, d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    double a[3];
    cf_mbs_point_acc(m, d, b, o, a);
    printf("follower force: acceleration (%.6f, %.6f, %.6f)\n", a[0], a[1], a[2]);
    CHECK_CLOSE(a[0], 0, 1e-9, 0);
    CHECK_CLOSE(a[1], 3, 1e-9, 0);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

int main(void) {
  test_joint_types();
  test_derivatives();
  test_free_body();
  test_spring_mass();
  test_rotational_spring();
  test_follower_and_reaction();
  TEST_END();
}
