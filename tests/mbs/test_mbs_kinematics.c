/* Kinematic analysis (position, velocity, acceleration) of driven mechanisms against closed-form
 * kinematics:
 *  - a crank-rocker four-bar, crank angle theta(t) = theta0 + w0 t + a0 t^2 / 2, built with four
 *    revolute joints (3 redundant equations, declared) and as a non-redundant R-U-S-R chain;
 *  - an offset slider-crank with a massless (virtual) slider, driven by a rate driver;
 *  - the paper 004 slider-crank scene run by the dynamic integrator (a fully driven mechanism):
 *    its slider follows the closed form after every step. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"

static cfMbsBodyDef link_body(const char* name, double L, double x, double y, double angle) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.mass = 1;
  b.com[0] = L / 2;
  b.inertia[0] = 1e-3;
  b.inertia[1] = b.inertia[2] = L * L / 12;
  b.pos[0] = x, b.pos[1] = y;
  double z[3] = {0, 0, 1};
  cf_mbs_axis_angle(z, angle, b.rot);
  return b;
}

static void add_joint(cfMbsDef* def, const char* name, int type, int b1, int b2, double x, double y, const double* axis,
                      const double* axis2) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = type, j.body1 = b1, j.body2 = b2;
  j.point[0] = x, j.point[1] = y;
  if (axis) memcpy(j.axis, axis, sizeof j.axis);
  if (axis2) memcpy(j.axis2, axis2, sizeof j.axis2);
  CHECK(cf_mbs_add_joint(def, &j) >= 0);
}

/* ---- four-bar ---------------------------------------------------------------------------------- */
static const double FA = 0.3, FB = 1.0, FC = 0.8, FD = 0.9; /* crank, coupler, rocker, ground */

typedef struct FourBar { double C[3], vC[3], aC[3], w3; } FourBar;

/* closed form: C from the circle intersection (branch nearest Cprev), then the loop equations
 * differentiated once and twice, solved for the coupler and rocker rates */
static FourBar fourbar_exact(double th2, double w2, double al2, const double* Cprev) {
  FourBar f;
  double Bx = FA * cos(th2), By = FA * sin(th2);
  double Dx = FD - Bx, Dy = -By, dist = hypot(Dx, Dy);
  double x = (FB * FB - FC * FC + dist * dist) / (2 * dist), h = sqrt(FB * FB - x * x);
  double ux = Dx / dist, uy = Dy / dist;
  double C1[2] = {Bx + x * ux - h * uy, By + x * uy + h * ux}, C2[2] = {Bx + x * ux + h * uy, By + x * uy - h * ux};
  double* C = hypot(C1[0] - Cprev[0], C1[1] - Cprev[1]) < hypot(C2[0] - Cprev[0], C2[1] - Cprev[1]) ? C1 : C2;
  double th3 = atan2(C[1] - By, C[0] - Bx), th4 = atan2(C[1], C[0] - FD);
  /* [b e3p, -c e4p] [w3 w4]' = -a w2 e2p, e_p = (-sin, cos) */
  double m00 = -FB * sin(th3), m10 = FB * cos(th3), m01 = FC * sin(th4), m11 = -FC * cos(th4);
  double det = m00 * m11 - m01 * m10;
  double r0 = FA * w2 * sin(th2), r1 = -FA * w2 * cos(th2);
  double w3 = (r0 * m11 - m01 * r1) / det, w4 = (m00 * r1 - r0 * m10) / det;
  /* accelerations: [b e3p, -c e4p][al3 al4]' = -(a al2 e2p - a w2^2 e2 - b w3^2 e3 + c w4^2 e4) */
  double s0 = -(FA * al2 * -sin(th2) - FA * w2 * w2 * cos(th2) - FB * w3 * w3 * cos(th3) + FC * w4 * w4 * cos(th4));
  double s1 = -(FA * al2 * cos(th2) - FA * w2 * w2 * sin(th2) - FB * w3 * w3 * sin(th3) + FC * w4 * w4 * sin(th4));
  double al4 = (m00 * s1 - s0 * m10) / det;
  f.C[0] = C[0], f.C[1] = C[1], f.C[2] = 0;
  f.vC[0] = -FC * w4 * sin(th4), f.vC[1] = FC * w4 * cos(th4), f.vC[2] = 0;
  f.aC[0] = -FC * al4 * sin(th4) - FC * w4 * w4 * cos(th4);
  f.aC[1] = FC * al4 * cos(th4) - FC * w4 * w4 * sin(th4);
  f.aC[2] = 0;
  f.w3 = w3;
  return f;
}

static void test_fourbar(int nonredundant, double dt) {
  const double th20 = M_PI / 3, w0 = 2.0, a0 = 3.0;
  double Cinit[3] = {FD, FC, 0};
  FourBar f0 = fourbar_exact(th20, w0, a0, Cinit);
  double Bx = FA * cos(th20), By = FA * sin(th20);
  double th3 = atan2(f0.C[1] - By, f0.C[0] - Bx), th4 = atan2(f0.C[1], f0.C[0] - FD);
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.tol_phi = 1e-12;
  def.opt.tol_dq = 1e-12;
  cfMbsBodyDef crank = link_body("crank", FA, 0, 0, th20), coupler = link_body("coupler", FB, Bx, By, th3),
               rocker = link_body("rocker", FC, FD, 0, th4);
  int c = cf_mbs_add_body(&def, &crank), k = cf_mbs_add_body(&def, &coupler), r = cf_mbs_add_body(&def, &rocker);
  double z[3] = {0, 0, 1}, n3[3] = {-sin(th3), cos(th3), 0};
  add_joint(&def, "O2", CF_MBS_REVOLUTE, CF_MBS_GROUND, c, 0, 0, z, NULL);
  add_joint(&def, "O4", CF_MBS_REVOLUTE, CF_MBS_GROUND, r, FD, 0, z, NULL);
  if (nonredundant) {
    add_joint(&def, "B", CF_MBS_UNIVERSAL, c, k, Bx, By, z, n3);
    add_joint(&def, "C", CF_MBS_SPHERICAL, k, r, f0.C[0], f0.C[1], NULL, NULL);
  } else {
    add_joint(&def, "B", CF_MBS_REVOLUTE, c, k, Bx, By, z, NULL);
    add_joint(&def, "C", CF_MBS_REVOLUTE, k, r, f0.C[0], f0.C[1], z, NULL);
    def.opt.redundant = 3;
  }
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "crank_angle");
  dr.type = CF_MBS_DRIVE_ANGLE;
  dr.joint = 0;
  dr.f.type = CF_MBS_FUNC_POLY;
  dr.f.n = 3;
  dr.f.c[1] = w0, dr.f.c[2] = a0 / 2;
  cf_mbs_add_driver(&def, &dr);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (!d) goto done;
  CHECK(m->ndof == 0);
  CHECK(m->nredundant == (nonredundant ? 0 : 3));
  /* the t = 0 state: velocities and accelerations from the analyses */
  CHECK_OK(cf_mbs_velocity_analysis(m, d));
  CHECK_OK(cf_mbs_acceleration_analysis(m, d));
  double tip[3] = {FC, 0, 0}, ep = 0, ev = 0, ea = 0, ew = 0, vmax = 0, amax = 0;
  double Cprev[3];
  memcpy(Cprev, f0.C, sizeof Cprev);
  int steps = (int)lround(2.0 / dt);
  for (int s = 0; s <= steps; s++) {
    if (s > 0) {
      int st = cf_mbs_kinematic_step(m, d);
      if (st < 0) {
        CHECK_OK(st);
        break;
      }
    }
    double t = d->t;
    FourBar f = fourbar_exact(th20 + w0 * t + a0 * t * t / 2, w0 + a0 * t, a0, Cprev);
    memcpy(Cprev, f.C, sizeof Cprev);
    double x[3], v[3], a[3], w[3];
    cf_mbs_point(m, d, r, tip, x);
    cf_mbs_point_vel(m, d, r, tip, v);
    cf_mbs_point_acc(m, d, r, tip, a);
    cf_mbs_omega(m, d, k, w);
    for (int i = 0; i < 3; i++) {
      ep = fmax(ep, fabs(x[i] - f.C[i]));
      ev = fmax(ev, fabs(v[i] - f.vC[i]));
      ea = fmax(ea, fabs(a[i] - f.aC[i]));
      vmax = fmax(vmax, fabs(f.vC[i]));
      amax = fmax(amax, fabs(f.aC[i]));
    }
    ew = fmax(ew, fabs(w[2] - f.w3));
  }
  printf("four-bar (%s, dt %g, %.2f crank turns): max error position %.2e m, velocity %.2e m/s (of %.2f), "
         "acceleration %.2e m/s^2 (of %.1f), coupler omega %.2e rad/s\n",
         nonredundant ? "R-U-S-R" : "4 revolute joints, 3 redundant", dt, (w0 * 2 + a0 * 2) / (2 * M_PI), ep, ev, vmax,
         ea, amax, ew);
  CHECK(ep < 1e-9);
  CHECK(ev < 1e-8 * vmax);
  CHECK(ea < 1e-7 * amax);
  CHECK(ew < 1e-8 * vmax);
done:
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* ---- slider-crank ------------------------------------------------------------------------------ */
/* slider on y = e: x = r cos th + sqrt(l^2 - (r sin th - e)^2) and two time derivatives */
static void slider_exact(double r, double l, double e, double th, double w, double al, double out[3]) {
  double s = r * sin(th) - e, sd = r * cos(th) * w, sdd = -r * sin(th) * w * w + r * cos(th) * al;
  double S = sqrt(l * l - s * s), Sd = -s * sd / S, Sdd = -(sd * sd + s * sdd + Sd * Sd) / S;
  out[0] = r * cos(th) + S;
  out[1] = -r * sin(th) * w + Sd;
  out[2] = -r * cos(th) * w * w - r * sin(th) * al + Sdd;
}

static void test_slider_crank_kinematic(void) {
  const double r = 0.1524, l = 0.3048, e = 0.02, w0 = 20, a0 = 50, dt = 2e-3;
  double x0[3];
  slider_exact(r, l, e, 0, 0, 0, x0);
  double phi = atan2(e, x0[0] - r); /* rod angle at theta = 0: from (r, 0) to (x0, e) */
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.tol_phi = 1e-12;
  def.opt.tol_dq = 1e-12;
  def.opt.redundant = 3;
  cfMbsBodyDef crank = link_body("crank", r, 0, 0, 0), rod = link_body("rod", l, r, 0, phi);
  cfMbsBodyDef slider = cf_mbs_default_body_def();
  snprintf(slider.name, sizeof slider.name, "slider");
  slider.is_virtual = 1;
  slider.pos[0] = x0[0], slider.pos[1] = e;
  int c = cf_mbs_add_body(&def, &crank), k = cf_mbs_add_body(&def, &rod), s = cf_mbs_add_body(&def, &slider);
  double z[3] = {0, 0, 1}, xa[3] = {1, 0, 0};
  add_joint(&def, "O", CF_MBS_REVOLUTE, CF_MBS_GROUND, c, 0, 0, z, NULL);
  add_joint(&def, "A", CF_MBS_REVOLUTE, c, k, r, 0, z, NULL);
  add_joint(&def, "B", CF_MBS_REVOLUTE, k, s, x0[0], e, z, NULL);
  add_joint(&def, "P", CF_MBS_PRISMATIC, CF_MBS_GROUND, s, x0[0], e, xa, NULL);
  cfMbsDriverDef dr = cf_mbs_default_driver_def();
  snprintf(dr.name, sizeof dr.name, "crank_rate");
  dr.type = CF_MBS_DRIVE_ANGLE;
  dr.joint = 0;
  dr.f.type = CF_MBS_FUNC_POLY;
  dr.f.rate = 1; /* angular velocity w0 + a0 t */
  dr.f.n = 2;
  dr.f.c[0] = w0, dr.f.c[1] = a0;
  cf_mbs_add_driver(&def, &dr);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    CHECK(m->ndof == 0 && m->nredundant == 3);
    CHECK_OK(cf_mbs_velocity_analysis(m, d));
    CHECK_OK(cf_mbs_acceleration_analysis(m, d));
    double err[3] = {0, 0, 0}, scale[3] = {0, 0, 0}, o[3] = {0, 0, 0};
    int steps = 500;
    for (int n = 0; n <= steps; n++) {
      if (n > 0 && cf_mbs_kinematic_step(m, d) < 0) {
        CHECK_OK(-1);
        break;
      }
      double t = d->t, ex[3], got[3];
      slider_exact(r, l, e, w0 * t + a0 * t * t / 2, w0 + a0 * t, a0, ex);
      double p[3], v[3], a[3];
      cf_mbs_point(m, d, s, o, p);
      cf_mbs_point_vel(m, d, s, o, v);
      cf_mbs_point_acc(m, d, s, o, a);
      got[0] = p[0], got[1] = v[0], got[2] = a[0];
      CHECK(fabs(p[1] - e) < 1e-10 && fabs(v[1]) < 1e-8 && fabs(a[1]) < 1e-5);
      for (int i = 0; i < 3; i++) err[i] = fmax(err[i], fabs(got[i] - ex[i])), scale[i] = fmax(scale[i], fabs(ex[i]));
    }
    printf("offset slider-crank (rate driver, %.1f turns): max error position %.2e m, velocity %.2e m/s (of %.2f), "
           "acceleration %.2e m/s^2 (of %.0f)\n", (w0 + a0 / 2) / (2 * M_PI), err[0], err[1], scale[1], err[2], scale[2]);
    CHECK(err[0] < 1e-10);
    CHECK(err[1] < 1e-9 * scale[1]);
    CHECK(err[2] < 1e-7 * scale[2]);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* The dynamic integrator on the fully driven paper 004 slider-crank (massless slider): after every
 * step the slider follows the closed form, and the driver's power equals d(kinetic energy)/dt. */
static void test_slider_crank_dynamic(void) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(COFEM_SOURCE_DIR "/scenes/mbs/slider_crank.json", &s);
  CHECK_OK(st);
  if (st < 0) return;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    const double r = 0.1524, l = 0.3048, w = 124.8;
    int slider = cf_mbs_find_body(m, "slider"), drv = cf_mbs_find_driver(m, "crank_speed");
    double o[3] = {0, 0, 0}, err[3] = {0, 0, 0}, scale[3] = {0, 0, 0}, worst = 0, perr = 0, pscale = 0;
    double T_prev, V, P_prev = 0;
    cf_mbs_energy(m, d, &T_prev, &V);
    for (int n = 1; n <= 500; n++) {
      if ((st = cf_mbs_step(m, d)) < 0) {
        CHECK_OK(st);
        break;
      }
      worst = fmax(worst, d->phi_max);
      double ex[3], p[3], v[3], a[3], T;
      slider_exact(r, l, 0, w * d->t, w, 0, ex);
      cf_mbs_point(m, d, slider, o, p);
      cf_mbs_point_vel(m, d, slider, o, v);
      cf_mbs_point_acc(m, d, slider, o, a);
      double got[3] = {p[0], v[0], a[0]};
      for (int i = 0; i < 3; i++) err[i] = fmax(err[i], fabs(got[i] - ex[i])), scale[i] = fmax(scale[i], fabs(ex[i]));
      /* power of the driver: the multiplier of sin(f - angle) = 0 is the torque about the joint
       * axis (dPhi/dangle = -1): P = lambda w must match dT/dt (trapezoidal average over the step) */
      cf_mbs_energy(m, d, &T, &V);
      double P = d->reaction[m->driver_con[drv]] * w;
      if (n > 1) {
        perr = fmax(perr, fabs((T - T_prev) / m->opt.dt - 0.5 * (P + P_prev)));
        pscale = fmax(pscale, fabs(P));
      }
      T_prev = T, P_prev = P;
    }
    printf("paper 004 slider-crank, dynamic integrator, 500 steps: slider error position %.2e m, velocity %.2e m/s "
           "(of %.1f), acceleration %.2e m/s^2 (of %.0f); max |Phi| %.2e; |dT/dt - driver power| %.2e W (of %.0f W)\n",
           err[0], err[1], scale[1], err[2], scale[2], worst, perr, pscale);
    CHECK(err[0] < 1e-9);
    CHECK(err[1] < 1e-8 * scale[1]);
    CHECK(err[2] < 1e-6 * scale[2]);
    CHECK(worst < 1e-8);
    CHECK(perr < 0.01 * pscale);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

/* A non-finite coordinate is an error of the position analysis, not a converged state (the
 * residual's maximum must see the NaN). */
static void test_nan_state(void) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(COFEM_SOURCE_DIR "/scenes/mbs/slider_crank.json", &s);
  CHECK_OK(st);
  if (st < 0) return;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    d->q[0] = NAN;
    st = cf_mbs_position_analysis(m, d, 0);
    CHECK(st < 0);
    CHECK(st < 0 && strstr(cf_last_error(), "non-finite") != NULL);
    printf("NaN coordinate: position analysis says: %s\n", st < 0 ? cf_last_error() : "(converged)");
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

int main(void) {
  test_fourbar(0, 1e-2);
  test_fourbar(1, 1e-2);
  test_fourbar(0, 1e-3);
  test_slider_crank_kinematic();
  test_slider_crank_dynamic();
  test_nan_state();
  TEST_END();
}
