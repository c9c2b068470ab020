/* Issue 30 item 3: the cost of a modal body's interface. The lug pendulum
 * (scenes/mbs/flexible_lug.json: pin set 'load', 19 interface nodes -> 57 constraint modes, less 6
 * rigid, + 6 normal = 57 modes) against the same body with the pin set reduced as one rigid
 * interface point (scenes/mbs/flexible_lug_rbe2.json: 6 static modes, all rigid, + 6 normal = 6
 * modes), both run in this one process, alternately, best of --repeat runs of --steps steps.
 * Prints ms/step of each and their ratio, and the pin's angle at the end of each (the two bodies
 * swing alike: the interface changes the elastic modes only).
 *   build/perf/cofem_bench_points [--steps N] [--repeat R] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cofem.h"
#include "cofem/mbs.h"
#include "cofem/modal_part.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

static int run(const char* path, int steps, double* ms, double* angle, int* nq, int* nmodes) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(path, &s);
  if (st < 0) return st;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  if (st >= 0) {
    *nq = m->nq;
    *nmodes = s.flex[0]->red.n - s.flex[0]->red.nrigid;
    double t0 = cf_wall_time();
    for (int k = 0; k < steps && st >= 0; k++) st = cf_mbs_step(m, d);
    *ms = (cf_wall_time() - t0) / steps * 1e3;
    *angle = cf_mbs_joint_angle(m, d, cf_mbs_find_joint(m, "pin"));
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return st;
}

int main(int argc, char** argv) {
  int steps = 500, repeat = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--steps N] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
  if (steps < 1 || repeat < 1) return 2;
  const char* names[2] = {"interface nodes (default)", "one rigid interface point"};
  const char* paths[2] = {COFEM_SOURCE_DIR "/scenes/mbs/flexible_lug.json", COFEM_SOURCE_DIR "/scenes/mbs/flexible_lug_rbe2.json"};
  double best[2] = {INFINITY, INFINITY}, angle[2] = {0, 0};
  int nq[2] = {0, 0}, nm[2] = {0, 0};
  for (int r = 0; r < repeat; r++)
    for (int k = 0; k < 2; k++) {
      double ms;
      if (run(paths[k], steps, &ms, &angle[k], &nq[k], &nm[k]) < 0) {
        fprintf(stderr, "%s: %s\n", paths[k], cf_last_error());
        return 1;
      }
      best[k] = fmin(best[k], ms);
    }
  for (int k = 0; k < 2; k++)
    printf("lug pendulum, %-26s: %3d modes, %3d coordinates, %.4f ms/step (best of %d x %d steps), pin angle %.6f rad\n",
           names[k], nm[k], nq[k], best[k], repeat, steps, angle[k]);
  printf("ratio default / point: %.2f\n", best[0] / best[1]);
  return 0;
}
