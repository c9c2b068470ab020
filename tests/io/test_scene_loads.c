/* Scene loads in time (issue 18, mutation M22): scenes/lug_pull.json's load (5e6 N along x on the
 * 'load' set, start 0, ramp 0.3 s, stop 0.6 s) summed over the nodes by cf_scene_forces is the
 * ramp's value in closed form: 0 at t = 0, t / 0.3 of the force on the ramp, the whole force
 * until 0.6 s, none after; the scale argument multiplies it. */
#include "cf_test.h"
#include "cofem/scene.h"

int main(void) {
  cfScene s;
  CHECK_OK(cf_scene_load(COFEM_SOURCE_DIR "/scenes/lug_pull.json", &s));
  if (cf_test_failures) TEST_END();
  const int n = 3 * s.mesh.nnode;
  double* f = malloc(sizeof(double) * n);
  const double ts[6] = {0.0, 0.075, 0.15, 0.3, 0.45, 0.7}, want[6] = {0, 0.25, 0.5, 1, 1, 0};
  for (int k = 0; k < 6; k++)
    for (int sc = 1; sc <= 2; sc++) {
      for (int i = 0; i < n; i++) f[i] = 0;
      cf_scene_forces(&s, ts[k], sc, f);
      double F[3] = {0, 0, 0};
      for (int i = 0; i < n; i++) F[i % 3] += f[i];
      printf("t = %.3f s, scale %d: total load (%.6g, %.6g, %.6g) N, closed form %.6g N\n", ts[k], sc, F[0], F[1], F[2],
             sc * want[k] * 5e6);
      CHECK_CLOSE(F[0], sc * want[k] * 5e6, 1e-6, 1e-12);
      CHECK(fabs(F[1]) < 1e-6 && fabs(F[2]) < 1e-6);
    }
  free(f);
  cf_scene_free(&s);
  TEST_END();
}
