/* A smaller time step never fails where a larger one passes (issue 31, class 7):
 *  1. the double four-bar of paper 000 (scenes/mbs/double_fourbar.json: redundant constraints,
 *     singular poses, the penalty growing as 1/dt^2) runs its 5 s at every dt from 20 ms to 0.5 ms,
 *     and its energy error falls as dt^2 (the trapezoidal rule is conservative to second order):
 *     largest deviation <= C dt^2 with C = 3x the measured 873 J/s^2 (10 ms: 0.0873 J; 0.5 ms:
 *     2.07e-4 J);
 *  2. the lug hung as a corotational FE pendulum (scenes/mbs/lug_corotational.json) runs 0.3 s at
 *     every dt from 20 ms to 1 ms, with both couplings, energy within 0.5% (measured at most 0.19%,
 *     at 20 ms).
 * Before the round-off floor of mbs_step.c, the four-bar stopped at dt 5, 2 and 1 ms with "Newton did
 * not converge" (|dq| stalled at 4e-9 to 2e-8 > tol_dq 1e-9). */
#include <math.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"

#define SRC COFEM_SOURCE_DIR

/* runs the scene to t_end at dt; largest |E - E0| over the run into *e_dev, the floor's count into *floor */
static int run_at(const char* path, double dt, double t_end, int coupling, double* e_dev, double* e0, int* floor) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(path, &s);
  if (st < 0) return st;
  s.def.opt.dt = dt;
  if (coupling >= 0) cf_mbs_scene_set_coupling(&s, coupling);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  *e_dev = 0, *floor = 0;
  if (st >= 0) {
    double T, V;
    cf_mbs_energy(m, d, &T, &V);
    *e0 = T + V;
    long n = lround(t_end / dt);
    for (long k = 0; k < n && st >= 0; k++) {
      st = cf_mbs_step(m, d);
      cf_mbs_energy(m, d, &T, &V);
      *e_dev = fmax(*e_dev, fabs(T + V - *e0));
    }
    *floor = d->warning[CF_MBS_WARN_NEWTON_FLOOR];
    if (st < 0) printf("  dt %g s: %s\n", dt, cf_last_error());
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return st;
}

static void test_double_fourbar(void) {
  static const double dts[] = {0.02, 0.01, 0.005, 0.002, 0.001, 0.0005};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    double dev, e0;
    int floor;
    int st = run_at(SRC "/scenes/mbs/double_fourbar.json", dts[i], 5.0, -1, &dev, &e0, &floor);
    printf("double four-bar, dt %g s: status %d, largest energy deviation %.3g J (%.3g%% of %.5g J, bound %.3g J); "
           "%d steps at Newton's round-off floor\n", dts[i], st, dev, 100 * dev / e0, e0, 3 * 873 * dts[i] * dts[i], floor);
    CHECK_OK(st);
    CHECK(dev <= 3 * 873 * dts[i] * dts[i]);
  }
}

static void test_lug_pendulum(void) {
  static const double dts[] = {0.02, 0.01, 0.005, 0.002, 0.001};
  for (int c = 0; c < 2; c++)
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
      double dev, e0;
      int floor;
      int coupling = c ? CF_MBS_COUPLING_LINEAR : CF_MBS_COUPLING_NEWTON;
      int st = run_at(SRC "/scenes/mbs/lug_corotational.json", dts[i], 0.3, coupling, &dev, &e0, &floor);
      printf("lug pendulum (%s coupling), dt %g s: status %d, largest energy deviation %.3g%% of %.4g J\n",
             c ? "linear" : "Newton", dts[i], st, 100 * dev / e0, e0);
      CHECK_OK(st);
      CHECK(dev <= 5e-3 * e0);
    }
}

int main(void) {
  test_double_fourbar();
  test_lug_pendulum();
  TEST_END();
}
