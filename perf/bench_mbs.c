/* Multibody benchmarks (CPU):
 *   cofem_bench_mbs [--repeat N] [--label NAME]
 *  - the double four-bar of paper 000 (Lugris et al.), section 4.1: five bars of unit length and
 *    mass, revolute joints, gravity, 1 rad/s, dt 10 ms, 5 s (scenes/mbs/double_fourbar.json);
 *    the paper's CPU times (MATLAB, their Table 2, rigid bars): global 0.91 s, topological 4.85 s;
 *  - the slider-crank of paper 004 (Goncalves & Ambrosio), Table 2, with a rigid rod, dt 0.1 ms,
 *    0.1 s, with the joints direct and through one and two virtual bodies
 *    (scenes/mbs/slider_crank*.json); the paper gives only analysis times normalised by the case
 *    without virtual bodies (its Table 3, flexible rod, sparse solver): 1.00, 1.08, 1.33.
 * Each whole simulation is run N times (default 7) from the same initial state; printed: the
 * fastest run's CPU time (process CPU time: less disturbed by other jobs on a shared machine than
 * the wall clock) and its wall time, the median wall time, the real-time ratio and ms per step (of
 * the CPU time), Newton iterations and the time per stage. Every figure is measured in this run.
 * With --label, also writes perf/results/<label>/bench_mbs.csv. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/output.h"
#include "results_csv.h"

typedef struct Case {
  const char* name;
  const char* scene;
  const char* paper;  /* the paper's figure, as printed beside ours */
} Case;

static const Case kCases[] = {
    {"double_fourbar", "scenes/mbs/double_fourbar.json", "paper 000 Table 2 (MATLAB, rigid): global 0.91 s (5.5x real time), topological 4.85 s"},
    {"slider_crank", "scenes/mbs/slider_crank.json", "paper 004 Table 3 (flexible rod, sparse): 1.00 (reference)"},
    {"slider_crank_virtual1", "scenes/mbs/slider_crank_virtual1.json", "paper 004 Table 3: 1.08 of the reference"},
    {"slider_crank_virtual2", "scenes/mbs/slider_crank_virtual2.json", "paper 004 Table 3: 1.33 of the reference"},
};

typedef struct Result {
  double cpu_min, wall_of_min, wall_median, t_sim, iters, stage[CF_MBS_STAGE_COUNT];
  long steps;
  int nq, ncon, nnz;
} Result;

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int run_case(const Case* c, int repeat, Result* r) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", COFEM_SOURCE_DIR, c->scene);
  cfMbsScene s;
  int st = cf_mbs_scene_load(path, &s);
  if (st < 0) return st;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  if (st < 0) {
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return st;
  }
  long steps = lround(s.t_end / m->opt.dt);
  double* wall = malloc(sizeof(double) * (size_t)repeat);
  memset(r, 0, sizeof *r);
  r->cpu_min = INFINITY;
  for (int k = 0; k < repeat && st >= 0; k++) {
    st = cf_mbs_reset(m, d);
    double c0 = cpu_time(), w0 = cf_wall_time();
    for (long n = 0; n < steps && st >= 0; n++) st = s.kinematic ? cf_mbs_kinematic_step(m, d) : cf_mbs_step(m, d);
    double w = cf_wall_time() - w0, cpu = cpu_time() - c0;
    wall[k] = w;
    if (cpu < r->cpu_min) {
      r->cpu_min = cpu, r->wall_of_min = w;
      memcpy(r->stage, d->timer, sizeof r->stage);
      r->iters = (double)d->iters_total / (double)(d->steps ? d->steps : 1);
    }
  }
  qsort(wall, (size_t)repeat, sizeof(double), cmp_double);
  r->wall_median = wall[repeat / 2];
  r->steps = steps;
  r->t_sim = d->t;
  r->nq = m->nq, r->ncon = m->ncon, r->nnz = m->nnz;
  free(wall);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return st;
}

int main(int argc, char** argv) {
  int repeat = 7;
  const char* label = NULL;
  for (int i = 1; i < argc; i++) {
    int st = CF_OK; /* strict values (cf_parse_*, cofem/status.h) */
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) st = cf_parse_int("--repeat", argv[++i], 1, 100000, &repeat);
    else if (!strcmp(argv[i], "--label") && i + 1 < argc) label = argv[++i];
    else {
      fprintf(stderr, "usage: cofem_bench_mbs [--repeat N] [--label NAME]\n");
      return 2;
    }
    if (st < 0) {
      fprintf(stderr, "cofem_bench_mbs: %s\n", cf_last_error());
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  int n = (int)(sizeof kCases / sizeof kCases[0]);
  Result res[sizeof kCases / sizeof kCases[0]];
  printf("multibody benchmarks: whole simulations, %d runs each; the fastest run's CPU time (and its wall time), the "
         "median wall time\n", repeat);
  for (int i = 0; i < n; i++) {
    int st = run_case(&kCases[i], repeat, &res[i]);
    if (st < 0) {
      fprintf(stderr, "%s: %s\n", kCases[i].name, cf_last_error());
      return 1;
    }
    const Result* r = &res[i];
    printf("\n%s: %d coordinates, %d equations, %d matrix nonzeros; %ld steps, %.3g s simulated\n", kCases[i].name,
           r->nq, r->ncon, r->nnz, r->steps, r->t_sim);
    printf("  CPU %.4f s (wall %.4f s; median wall %.4f s): %.1fx real time, %.4f ms/step, Newton %.2f it/step\n",
           r->cpu_min, r->wall_of_min, r->wall_median, r->t_sim / r->cpu_min, 1e3 * r->cpu_min / (double)r->steps, r->iters);
    printf("  per step [ms]: constraints %.4f, forces %.4f, assemble %.4f, factor %.4f, solve %.4f\n",
           1e3 * r->stage[CF_MBS_STAGE_CONSTRAINTS] / (double)r->steps, 1e3 * r->stage[CF_MBS_STAGE_FORCES] / (double)r->steps,
           1e3 * r->stage[CF_MBS_STAGE_ASSEMBLE] / (double)r->steps, 1e3 * r->stage[CF_MBS_STAGE_FACTOR] / (double)r->steps,
           1e3 * r->stage[CF_MBS_STAGE_SOLVE] / (double)r->steps);
    if (i >= 1) printf("  normalised by the direct slider-crank: %.2f\n", r->cpu_min / res[1].cpu_min);
    printf("  beside: %s\n", kCases[i].paper);
  }
  printf("\ndouble four-bar: %.1fx faster than the paper's global formulation in MATLAB (0.91 s); different "
         "machine and language, so only an order of magnitude\n", 0.91 / res[0].cpu_min);
  if (label) {
    char path[700];
    FILE* f = open_results_csv(label, "bench_mbs.csv", path, sizeof path);
    if (!f) return 1;
    fprintf(f, "case,coordinates,equations,nnz,steps,sim_s,cpu_s,wall_s,wall_median_s,realtime_ratio,ms_per_step,"
               "newton_per_step,normalised,constraints_ms,forces_ms,assemble_ms,factor_ms,solve_ms\n");
    for (int i = 0; i < n; i++) {
      const Result* r = &res[i];
      fprintf(f, "%s,%d,%d,%d,%ld,%.6g,%.6g,%.6g,%.6g,%.4g,%.5g,%.3f,%.3f,%.5g,%.5g,%.5g,%.5g,%.5g\n", kCases[i].name, r->nq,
              r->ncon, r->nnz, r->steps, r->t_sim, r->cpu_min, r->wall_of_min, r->wall_median, r->t_sim / r->cpu_min,
              1e3 * r->cpu_min / (double)r->steps, r->iters, i >= 1 ? r->cpu_min / res[1].cpu_min : 1.0,
              1e3 * r->stage[CF_MBS_STAGE_CONSTRAINTS] / (double)r->steps, 1e3 * r->stage[CF_MBS_STAGE_FORCES] / (double)r->steps,
              1e3 * r->stage[CF_MBS_STAGE_ASSEMBLE] / (double)r->steps, 1e3 * r->stage[CF_MBS_STAGE_FACTOR] / (double)r->steps,
              1e3 * r->stage[CF_MBS_STAGE_SOLVE] / (double)r->steps);
    }
    fclose(f);
    printf("wrote %s\n", path);
  }
  return 0;
}
