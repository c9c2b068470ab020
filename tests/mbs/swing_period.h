/* The period of a swing from its sampled angle: the mean time between upward crossings of the
 * swing's centre (linear interpolation between samples). Shared by the pendulum tests. */
#ifndef CF_TEST_SWING_PERIOD_H
#define CF_TEST_SWING_PERIOD_H
#include <math.h>

/* ang[0..nstep] sampled every h; 0 with fewer than two crossings */
static double swing_period(const double* ang, int nstep, double h) {
  double lo = ang[0], hi = ang[0], first = -1, last = -1;
  for (int k = 0; k <= nstep; k++) lo = fmin(lo, ang[k]), hi = fmax(hi, ang[k]);
  double mid = 0.5 * (lo + hi);
  int ncross = 0;
  for (int k = 1; k <= nstep; k++)
    if (ang[k - 1] < mid && ang[k] >= mid) {
      double tc = h * (k - 1 + (mid - ang[k - 1]) / (ang[k] - ang[k - 1]));
      if (first < 0) first = tc;
      last = tc, ncross++;
    }
  return ncross > 1 ? (last - first) / (ncross - 1) : 0;
}

#endif
