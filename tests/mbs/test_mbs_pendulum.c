/* Multibody dynamics on pendulums (index-3 augmented Lagrangian, trapezoidal rule, projections):
 *  1. small-amplitude period of a physical pendulum against 2 pi sqrt(I_o / (m g d));
 *  2. large amplitude (143 degrees) against an independent RK4 solution of the pendulum ODE;
 *  3. a chain through one and two massless virtual bodies (paper 004, section 4) moves as the chain
 *     with the direct joints (planar revolute and spatial spherical chains);
 *  4. energy of a conservative double pendulum drifts by less than 0.1% over 10 s with dt 1 ms;
 * and the constraint violation stays below 1e-8 after every step of all of them. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"

static const double G = 9.81;

/* a slender bar of length L and mass m along its body x axis, origin at one end */
static cfMbsBodyDef bar(const char* name, double L, double m, double x, double y, double z, double angle_z) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.mass = m;
  b.com[0] = L / 2;
  b.inertia[0] = 1e-4 * m;
  b.inertia[1] = b.inertia[2] = m * L * L / 12;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  double axis[3] = {0, 0, 1};
  cf_mbs_axis_angle(axis, angle_z, b.rot);
  return b;
}

static cfMbsBodyDef virtual_body(const char* name, double x, double y, double z) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  b.is_virtual = 1;
  b.pos[0] = x, b.pos[1] = y, b.pos[2] = z;
  return b;
}

static int joint(cfMbsDef* def, const char* name, int type, int b1, int b2, double x, double y, double z) {
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "%s", name);
  j.type = type;
  j.body1 = b1, j.body2 = b2;
  j.point[0] = x, j.point[1] = y, j.point[2] = z;
  return cf_mbs_add_joint(def, &j);
}

/* absolute angle from the downward vertical of a single pendulum released at theta0 */
static double run_single(double theta0, double dt, int steps, double* theta, double* worst_phi) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.gravity[1] = -G;
  cfMbsBodyDef B = bar("bar", 1.0, 1.0, 0, 0, 0, theta0 - M_PI / 2);
  int b = cf_mbs_add_body(&def, &B);
  int j = joint(&def, "hinge", CF_MBS_REVOLUTE, CF_MBS_GROUND, b, 0, 0, 0);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  *worst_phi = 0;
  if (!d) {
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
    return -1;
  }
  CHECK(m->ndof == 1 && m->nredundant == 0);
  theta[0] = theta0;
  for (int k = 1; k <= steps; k++) {
    int st = cf_mbs_step(m, d);
    if (st < 0) {
      CHECK_OK(st);
      break;
    }
    *worst_phi = fmax(*worst_phi, d->phi_max);
    theta[k] = theta0 + cf_mbs_joint_angle(m, d, j);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return 0;
}

static void test_small_amplitude_period(void) {
  double th0 = 0.02, dt = 1e-3;
  double T0 = 2 * M_PI * sqrt(2.0 / (3 * G)); /* I_o = m L^2 / 3, d = L / 2 */
  double T_exp = T0 * (1 + th0 * th0 / 16);
  int steps = (int)(5.2 * T0 / dt);
  double* th = calloc((size_t)steps + 1, sizeof(double));
  double worst;
  run_single(th0, dt, steps, th, &worst);
  /* downward zero crossings, linearly interpolated */
  double first = -1, last = -1;
  int n = 0;
  for (int k = 1; k <= steps; k++)
    if (th[k - 1] > 0 && th[k] <= 0) {
      double tc = dt * (k - 1 + th[k - 1] / (th[k - 1] - th[k]));
      if (first < 0) first = tc;
      last = tc;
      n++;
    }
  CHECK(n >= 5);
  double T = (last - first) / (n - 1);
  printf("small amplitude (%.3g rad): period %.9f s, analytic %.9f s (rel. error %.2e); max |Phi| %.2e\n", th0, T,
         T_exp, T / T_exp - 1, worst);
  CHECK_CLOSE(T, T_exp, 0, 1e-5);
  CHECK(worst < 1e-8);
  free(th);
}

/* theta'' = -(3 g / 2 L) sin theta, RK4 */
static void rk4_pendulum(double th0, double t_end, double h, int nout, double dt_out, double* out) {
  double th = th0, w = 0, t = 0, k = 3 * G / 2;
  int next = 0;
  long nsteps = lround(t_end / h);
  long every = lround(dt_out / h);
  for (long s = 0; s <= nsteps; s++) {
    if (s % every == 0 && next < nout) out[next++] = th;
    if (s == nsteps) break;
    double a1 = w, b1 = -k * sin(th);
    double a2 = w + h / 2 * b1, b2 = -k * sin(th + h / 2 * a1);
    double a3 = w + h / 2 * b2, b3 = -k * sin(th + h / 2 * a2);
    double a4 = w + h * b3, b4 = -k * sin(th + h * a3);
    th += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    w += h / 6 * (b1 + 2 * b2 + 2 * b3 + b4);
    t += h;
  }
  (void)t;
}

static void test_large_amplitude(void) {
  double th0 = 2.5, dt = 1e-3, t_end = 3.0;
  int steps = (int)lround(t_end / dt);
  double* th = calloc((size_t)steps + 1, sizeof(double));
  double worst;
  run_single(th0, dt, steps, th, &worst);
  enum { NOUT = 13 };
  double ref[NOUT];
  rk4_pendulum(th0, t_end, 1e-5, NOUT, 0.25, ref);
  double err = 0;
  for (int i = 0; i < NOUT; i++) err = fmax(err, fabs(th[i * 250] - ref[i]));
  printf("large amplitude (%.3g rad): max |theta - theta_RK4| over %g s = %.2e rad (theta(3 s) = %.6f, RK4 %.6f); "
         "max |Phi| %.2e\n", th0, t_end, err, th[steps], ref[NOUT - 1], worst);
  CHECK(err < 2e-4);
  CHECK(worst < 1e-8);
  free(th);
}

/* Double pendulum of unit bars, horizontal at t = 0. type: revolute (planar) or spherical (spatial,
 * with an out-of-plane initial velocity). nvirt: 0 direct A-B joint; 1 through a virtual body fixed
 * to A; 2 through virtual bodies fixed to A and to B. Records B's tip and A's axis. */
static int run_chain(int type, int nvirt, double dt, int steps, double* rec, double* worst_phi, double* drift) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = dt;
  def.opt.gravity[1] = -G;
  cfMbsBodyDef A = bar("A", 1, 1, 0, 0, 0, 0), B = bar("B", 1, 1, 1, 0, 0, 0);
  if (type == CF_MBS_SPHERICAL) {
    A.omega[1] = 1.5;          /* swings out of the plane */
    A.vel[0] = A.vel[1] = 0;
    B.omega[1] = 1.5;
    B.vel[2] = -1.5;           /* B's origin moves with A's tip: omega x (1, 0, 0) */
  }
  int a = cf_mbs_add_body(&def, &A), b = cf_mbs_add_body(&def, &B);
  joint(&def, "O", type, CF_MBS_GROUND, a, 0, 0, 0);
  if (nvirt == 0) joint(&def, "AB", type, a, b, 1, 0, 0);
  else {
    cfMbsBodyDef V1 = virtual_body("V1", 1, 0, 0);
    if (type == CF_MBS_SPHERICAL) V1.omega[1] = 1.5, V1.vel[2] = -1.5;
    int v1 = cf_mbs_add_body(&def, &V1);
    joint(&def, "V1_A", CF_MBS_FIXED, a, v1, 1, 0, 0);
    if (nvirt == 1) joint(&def, "AB", type, v1, b, 1, 0, 0);
    else {
      cfMbsBodyDef V2 = virtual_body("V2", 1, 0, 0);
      if (type == CF_MBS_SPHERICAL) V2.omega[1] = 1.5, V2.vel[2] = -1.5;
      int v2 = cf_mbs_add_body(&def, &V2);
      joint(&def, "V2_B", CF_MBS_FIXED, b, v2, 1, 0, 0);
      joint(&def, "AB", type, v1, v2, 1, 0, 0);
    }
  }
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  int st = cf_mbs_model_create(&def, &m);
  CHECK_OK(st);
  if (m) CHECK_OK(st = cf_mbs_data_create(m, &d));
  *worst_phi = 0;
  if (drift) *drift = 0;
  if (!d) {
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
    return -1;
  }
  CHECK(m->ndof == (type == CF_MBS_REVOLUTE ? 2 : 6));
  /* energy relative to the state at rest hanging down: E - V_min, V_min = -m g (1/2 + 3/2) */
  double T0, V0;
  cf_mbs_energy(m, d, &T0, &V0);
  double E0 = T0 + V0 + 2 * G;
  double tip[3] = {1, 0, 0};
  for (int k = 0; k <= steps; k++) {
    if (k > 0) {
      st = cf_mbs_step(m, d);
      if (st < 0) {
        CHECK_OK(st);
        break;
      }
      *worst_phi = fmax(*worst_phi, d->phi_max);
    }
    if (rec) {
      cf_mbs_point(m, d, b, tip, rec + 6 * k);
      double R[9];
      cf_mbs_rotation(m, d, a, R);
      rec[6 * k + 3] = R[0], rec[6 * k + 4] = R[3], rec[6 * k + 5] = R[6];
    }
    if (drift) {
      double T, V;
      cf_mbs_energy(m, d, &T, &V);
      *drift = fmax(*drift, fabs(T + V + 2 * G - E0) / E0);
    }
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  return 0;
}

static void test_virtual_chain(void) {
  int steps = 2000;
  double dt = 1e-3;
  int types[2] = {CF_MBS_REVOLUTE, CF_MBS_SPHERICAL};
  for (int ti = 0; ti < 2; ti++) {
    double* ref = calloc(6 * ((size_t)steps + 1), sizeof(double));
    double* alt = calloc(6 * ((size_t)steps + 1), sizeof(double));
    double worst;
    run_chain(types[ti], 0, dt, steps, ref, &worst, NULL);
    CHECK(worst < 1e-8);
    for (int nv = 1; nv <= 2; nv++) {
      double w2;
      run_chain(types[ti], nv, dt, steps, alt, &w2, NULL);
      double diff = 0, travel = 0;
      for (int k = 0; k <= steps; k++)
        for (int i = 0; i < 6; i++) diff = fmax(diff, fabs(alt[6 * k + i] - ref[6 * k + i]));
      for (int i = 0; i < 3; i++) travel = fmax(travel, fabs(ref[6 * steps + i] - ref[i]));
      printf("%s chain, %d virtual bod%s: max difference from the direct joint over 2 s = %.2e (tip moved %.3f m); "
             "max |Phi| %.2e\n", ti ? "spherical" : "revolute", nv, nv == 1 ? "y" : "ies", diff, travel, w2);
      CHECK(diff < 1e-8); /* 1.3e-10 .. 3.5e-10 seen (round-off of the projections) */
      CHECK(travel > 0.5);
      CHECK(w2 < 1e-8);
    }
    free(ref);
    free(alt);
  }
}

static void test_energy_drift(void) {
  double worst, drift;
  run_chain(CF_MBS_REVOLUTE, 0, 1e-3, 10000, NULL, &worst, &drift);
  printf("double pendulum, 10 s at dt 1 ms: largest energy drift %.2e of the energy above rest; max |Phi| %.2e\n", drift,
         worst);
  CHECK(drift < 1e-3);
  CHECK(worst < 1e-8);
  run_chain(CF_MBS_SPHERICAL, 1, 1e-3, 10000, NULL, &worst, &drift);
  printf("spatial double pendulum with a virtual body, 10 s at dt 1 ms: energy drift %.2e; max |Phi| %.2e\n", drift, worst);
  CHECK(drift < 1e-3);
  CHECK(worst < 1e-8);
}

int main(void) {
  test_small_amplitude_period();
  test_large_amplitude();
  test_virtual_chain();
  test_energy_drift();
  TEST_END();
}
