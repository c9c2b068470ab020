/* Soak: the lug (or any scene) for a long run of random pulls and support toggles.
 *   cofem_soak [--steps N] [--seed S] [--fmax F] [--scene FILE] [--gravity] [--every K]
 *              [--backend cpu|cuda|auto] [--threads T]
 * Defaults: 1e6 steps of scenes/lug_pull.json (dt 0.01 s: 10^4 s simulated; about an hour on one
 * core of the 2-core development machine), seed 1, fmax 5e6 N (the demo's pull).
 *
 * The scene's loads are replaced by a seeded random process on its first load set ("load" for
 * the lug): segments of 5..60 steps; at the start of each the supports are released with
 * probability 0.15 (for that segment only: while released no force acts), otherwise a new force
 * is chosen, zero with probability 0.3, up to 10 fmax with probability 0.05 (a crush: elements
 * invert), else up to fmax, in a uniformly random direction, reached from the previous force
 * abruptly or ramped over part of the segment. Gravity is off unless --gravity (with supports
 * released it would make the part fall for ever).
 *
 * Every step: the state must be finite, and the energy (kinetic + co-rotational strain) must stay
 * below the work put in, W = sum over steps of (f_ext + M g) . (x1 - x0), plus 1% and 1 uJ: the
 * implicit Euler step dissipates (exactly so for a linear model; the co-rotational linearisation
 * and the PCG tolerance leave a little slack). A progress line every K steps (default 10000) and a
 * summary: max displacement, max and final energy, work, max energy / work, warnings (counted
 * steps with PCG not converged, inverted elements, indefinite matrix), PCG iterations, wall time.
 * Exit status 0 when every check held, 1 otherwise.
 *
 * tests/fem/test_soak.c includes this file (SOAK_NO_MAIN) and runs 10^4 steps as a CI test. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cofem.h"

typedef struct SoakOptions {
  const char* scene;
  long steps;
  uint64_t seed;
  double fmax;     /* N */
  int gravity;     /* keep the scene's gravity */
  long every;      /* progress line every this many steps (0: none) */
  const char* backend;
  int threads;
} SoakOptions;

typedef struct SoakResult {
  long steps;               /* steps done */
  long nonfinite_step;      /* first step with a non-finite state, 0 if none */
  long energy_step;         /* first step where the energy exceeded the bound, 0 if none */
  double max_disp;          /* max over steps and nodes of |x - X| [m] */
  double max_energy, final_energy, work; /* [J] */
  double max_ratio;         /* max over steps of energy / work (where work > 1 uJ) */
  int max_inverted;         /* most inverted elements in one step */
  long warning[CF_WARN_COUNT]; /* steps that returned / counted each warning */
  long pulls, releases;
  long pcg_iters_total;
  int pcg_iters_max;
  double wall;              /* s */
} SoakResult;

static SoakOptions soak_default_options(void) {
  SoakOptions o;
  memset(&o, 0, sizeof o);
  o.scene = "scenes/lug_pull.json";
  o.steps = 1000000;
  o.seed = 1;
  o.fmax = 5e6;
  o.every = 10000;
  o.backend = "cpu";
  return o;
}

/* splitmix64: small, seedable, the same sequence on every platform */
static uint64_t soak_next(uint64_t* s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}
static double soak_uniform(uint64_t* s) { return (double)(soak_next(s) >> 11) * 0x1.0p-53; }

static int soak_finite(const double* a, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

/* Returns a cfStatus (a negative one when the scene cannot be loaded or a step fails); the checks
 * are in r (nonfinite_step, energy_step). */
static int soak_run(const SoakOptions* o, SoakResult* r) {
  memset(r, 0, sizeof *r);
  cfScene* s = malloc(sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "soak: out of memory");
  int st = cf_scene_load(o->scene, s);
  if (st < 0) {
    free(s);
    return st;
  }
  if (s->nload < 1) {
    cf_scene_free(s);
    free(s);
    return cf_error(CF_ERR_SCENE, "%s: soak: the scene has no load set to pull at", o->scene);
  }
  if (!o->gravity) s->def.gravity[0] = s->def.gravity[1] = s->def.gravity[2] = 0;
  if (o->threads > 0) s->def.threads = o->threads;
  cfModel* m = NULL;
  cfData* d = NULL;
  cfSim* sim = NULL;
  st = cf_scene_build(s, &m, &d);
  if (st >= 0) st = cf_sim_create(m, d, o->backend, &sim);
  const cfNodeSet* set = cf_mesh_find_nset(&s->mesh, s->load[0].set);
  const size_t nd = st >= 0 ? (size_t)m->ndof : 0;
  double* x0 = st >= 0 ? malloc(sizeof(double) * nd) : NULL;
  double* w = st >= 0 ? malloc(sizeof(double) * (size_t)set->count) : NULL;
  if (st >= 0 && (!x0 || !w)) st = cf_error(CF_ERR_NOMEM, "soak: out of memory");
  if (st < 0) goto out;

  /* the force on the set is spread like the scene's loads (area-weighted): take the weights
   * from cf_scene_forces with a unit force along x */
  {
    cfScene one = *s;
    one.nload = 1;
    one.load[0].force[0] = 1, one.load[0].force[1] = 0, one.load[0].force[2] = 0;
    one.load[0].t_start = 0, one.load[0].ramp = 0, one.load[0].t_stop = INFINITY;
    cf_scene_forces(&one, 0.0, 1.0, d->f_ext);
    for (int i = 0; i < set->count; i++) w[i] = d->f_ext[3 * set->nodes[i]];
    memset(d->f_ext, 0, sizeof(double) * nd);
  }
  const double* g = m->def.gravity;
  uint64_t rng = o->seed;
  double f_from[3] = {0, 0, 0}, f_to[3] = {0, 0, 0}, f[3] = {0, 0, 0};
  long seg_left = 0, seg_len = 1, ramp = 0;
  int released = 0;
  double t0 = cf_wall_time();
  for (long k = 1; k <= o->steps; k++) {
    if (seg_left == 0) { /* a new segment */
      seg_len = seg_left = 5 + (long)(soak_uniform(&rng) * 56);
      memcpy(f_from, f, sizeof f);
      if (released) {
        released = 0;
        cf_sim_set_supports(sim, 1);
      } else if (m->nfixed > 0 && soak_uniform(&rng) < 0.15) {
        released = 1;
        r->releases++;
        cf_sim_set_supports(sim, 0);
      }
      double u = soak_uniform(&rng), mag = 0;
      if (released || u < 0.3) mag = 0;
      else if (u < 0.35) mag = 10 * o->fmax * soak_uniform(&rng);
      else mag = o->fmax * soak_uniform(&rng);
      double cz = 2 * soak_uniform(&rng) - 1, ph = 2 * acos(-1.0) * soak_uniform(&rng);
      double sz = sqrt(fmax(0.0, 1 - cz * cz));
      f_to[0] = mag * sz * cos(ph), f_to[1] = mag * sz * sin(ph), f_to[2] = mag * cz;
      if (released) memset(f_from, 0, sizeof f_from); /* released: no force at all */
      ramp = soak_uniform(&rng) < 0.5 ? 0 : (long)(soak_uniform(&rng) * seg_len);
      if (mag > 0) r->pulls++;
    }
    long into = seg_len - seg_left + 1;
    double a = ramp > 0 && into < ramp ? (double)into / ramp : 1.0;
    for (int i = 0; i < 3; i++) f[i] = f_from[i] + a * (f_to[i] - f_from[i]);
    seg_left--;
    for (int i = 0; i < set->count; i++)
      for (int c = 0; c < 3; c++) d->f_ext[3 * set->nodes[i] + c] = w[i] * f[c];
    cf_sim_set_forces(sim, d->f_ext);
    memcpy(x0, d->x, sizeof(double) * nd);
    st = cf_sim_step(sim);
    if (st < 0) goto out;
    if (st > 0 && st < CF_WARN_COUNT) r->warning[st]++;
    cf_sim_fetch(sim);
    r->steps = k;
    r->pcg_iters_total += d->pcg_iters;
    if (d->pcg_iters > r->pcg_iters_max) r->pcg_iters_max = d->pcg_iters;
    if (d->ninverted > r->max_inverted) r->max_inverted = d->ninverted;
    /* work of the applied forces and gravity over the step */
    double dw = 0;
    for (int n = 0; n < m->nnode; n++)
      for (int c = 0; c < 3; c++) {
        size_t i = 3 * (size_t)n + c;
        dw += (d->f_ext[i] + m->node_mass[n] * g[c]) * (d->x[i] - x0[i]);
      }
    r->work += dw;
    double e = cf_kinetic_energy(m, d) + cf_strain_energy(m, d);
    double disp = 0;
    for (int n = 0; n < m->nnode; n++) {
      double q = 0;
      for (int c = 0; c < 3; c++) q += (d->x[3 * n + c] - m->X[3 * n + c]) * (d->x[3 * n + c] - m->X[3 * n + c]);
      disp = fmax(disp, q);
    }
    disp = sqrt(disp);
    if (!r->nonfinite_step && (!soak_finite(d->x, nd) || !soak_finite(d->v, nd) ||
                               !soak_finite(d->R, 9 * (size_t)m->ntet) || !isfinite(e) ||
                               !isfinite(r->work) || !isfinite(disp)))
      r->nonfinite_step = k;
    r->max_disp = fmax(r->max_disp, disp);
    r->max_energy = fmax(r->max_energy, e);
    r->final_energy = e;
    if (r->work > 1e-6) r->max_ratio = fmax(r->max_ratio, e / r->work);
    if (!r->energy_step && !(e <= 1.01 * r->work + 1e-6)) r->energy_step = k;
    if (o->every > 0 && (k % o->every == 0 || k == o->steps)) {
      double el = cf_wall_time() - t0;
      printf("step %ld  t %.0f s  |u| %.4g m (max %.4g)  energy %.4g J  work %.4g J  warnings %ld/%ld/%ld  "
             "%.2f ms/step\n", k, d->t, disp, r->max_disp, e, r->work,
             r->warning[CF_WARN_PCG_NOT_CONVERGED], r->warning[CF_WARN_INVERTED],
             r->warning[CF_WARN_INDEFINITE], 1e3 * el / k);
      fflush(stdout);
    }
    if (r->nonfinite_step) break; /* nothing sensible follows a NaN */
  }
  r->wall = cf_wall_time() - t0;
  st = CF_OK;
out:
  free(x0);
  free(w);
  cf_sim_free(sim);
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(s);
  free(s);
  return st;
}

/* Summary lines and the verdict (0: every check held). */
static int soak_report(const SoakOptions* o, const SoakResult* r) {
  printf("soak %s: %ld steps, seed %llu, fmax %.3g N, %ld pulls, %ld support releases\n", o->scene,
         r->steps, (unsigned long long)o->seed, o->fmax, r->pulls, r->releases);
  printf("  max displacement %.6g m; energy max %.6g J, final %.6g J; work put in %.6g J; max energy/work %.4f\n",
         r->max_disp, r->max_energy, r->final_energy, r->work, r->max_ratio);
  printf("  warnings (steps): %ld PCG not converged, %ld inverted elements (max %d in a step), %ld indefinite\n",
         r->warning[CF_WARN_PCG_NOT_CONVERGED], r->warning[CF_WARN_INVERTED], r->max_inverted,
         r->warning[CF_WARN_INDEFINITE]);
  printf("  PCG iterations per step: mean %.1f, max %d; %.1f s wall, %.3f ms/step\n",
         r->steps ? (double)r->pcg_iters_total / r->steps : 0.0, r->pcg_iters_max, r->wall,
         r->steps ? 1e3 * r->wall / r->steps : 0.0);
  int ok = 1;
  if (r->nonfinite_step) printf("  FAIL: non-finite state at step %ld\n", r->nonfinite_step), ok = 0;
  if (r->energy_step) printf("  FAIL: energy above the work put in at step %ld\n", r->energy_step), ok = 0;
  if (r->steps != o->steps) printf("  FAIL: stopped after %ld of %ld steps\n", r->steps, o->steps), ok = 0;
  printf("  %s\n", ok ? "all values finite, energy bounded by the work put in" : "FAILED");
  return ok ? 0 : 1;
}

#ifndef SOAK_NO_MAIN
static int usage(void) {
  fprintf(stderr, "usage: cofem_soak [--steps N] [--seed S] [--fmax F] [--scene FILE] [--gravity] "
                  "[--every K] [--backend cpu|cuda|auto] [--threads T]\n");
  return 2;
}

int main(int argc, char** argv) {
  SoakOptions o = soak_default_options();
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--gravity")) { o.gravity = 1; continue; }
    if (!v) return usage();
    /* strict values (cf_parse_*, cofem/status.h): the whole text, in range */
    static const char* const backends[] = {"cpu", "cuda", "auto", NULL};
    long seed = 0;
    int b = 0, st = CF_OK;
    if (!strcmp(a, "--steps")) st = cf_parse_long(a, v, 1, 1000000000000L, &o.steps);
    else if (!strcmp(a, "--seed")) st = cf_parse_long(a, v, 0, LONG_MAX, &seed), o.seed = (unsigned long long)seed;
    else if (!strcmp(a, "--fmax")) st = cf_parse_double(a, v, 0, 1e15, &o.fmax);
    else if (!strcmp(a, "--scene")) o.scene = v;
    else if (!strcmp(a, "--every")) st = cf_parse_long(a, v, 0, 1000000000000L, &o.every);
    else if (!strcmp(a, "--backend")) st = cf_parse_choice(a, v, backends, &b), o.backend = backends[b];
    else if (!strcmp(a, "--threads")) st = cf_parse_int(a, v, 0, 1024, &o.threads);
    else return usage();
    if (st < 0) {
      fprintf(stderr, "cofem_soak: %s\n", cf_last_error());
      return 2;
    }
    i++;
  }
  if (o.steps < 1 || !(o.fmax >= 0)) return usage();
  SoakResult r;
  int st = soak_run(&o, &r);
  if (st < 0) {
    fprintf(stderr, "cofem_soak: error: %s (%s)\n", cf_last_error(), cf_status_name(st));
    return 1;
  }
  return soak_report(&o, &r);
}
#endif
