/* Soak, CI variant: perf/soak.c (cofem_soak, whose header describes the random process) on the
 * lug for 10^4 steps (COFEM_SOAK_STEPS overrides; the benchmark default is 10^6), seed 1. Every
 * state must be finite and the energy bounded by the work put in, at every step; the run must
 * have exercised what it is for: pulls, support releases and steps with inverted elements, each
 * counted. */
#define SOAK_NO_MAIN 1
#include "../../perf/soak.c"

#include "cf_test.h"

int main(void) {
  SoakOptions o = soak_default_options();
  const char* env = getenv("COFEM_SOAK_STEPS");
  o.steps = env && atol(env) > 0 ? atol(env) : 10000;
  o.every = o.steps / 5;
  o.threads = 1; /* the lug is too small for threads to pay; ctest runs two tests at a time */
  SoakResult r;
  int st = soak_run(&o, &r);
  CHECK_OK(st);
  if (st < 0) TEST_END();
  CHECK(soak_report(&o, &r) == 0);
  CHECK(r.steps == o.steps);
  CHECK(r.nonfinite_step == 0);
  CHECK(r.energy_step == 0);
  CHECK(isfinite(r.max_disp) && isfinite(r.max_energy) && isfinite(r.work));
  CHECK(r.max_energy <= 1.01 * r.work + 1e-6);
  CHECK(r.pulls > 0 && r.releases > 0);
  if (o.steps >= 2000) CHECK(r.warning[CF_WARN_INVERTED] > 0); /* the crushes invert elements */
  TEST_END();
}
