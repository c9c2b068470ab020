/* FE bodies in mechanisms against the same part alone (issue 27): the corotational body's two
 * couplings, Newton (the accurate reference: Newton on the part's full residual every iteration)
 * and linear (the part linearised once per step: one PCG solve of its free motion), each against
 * `cofem run`'s step of the part's own FE scene, all in this process, in interleaved rounds.
 *
 *   cofem_bench_coupling [--rounds R] [--steps N] [--case lug|door|lug_100k|all] [--only VARIANT] [--label NAME]
 *                        [--backend cpu|cuda] [--mesh-dir DIR]
 *
 * One thread: run with OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_THREAD_LIMIT=1 (CHOLMOD's
 * supernodal factorisation of the Newton coupling otherwise takes several threads).
 * Variants: alone, newton, linear (the scenes' "factor": "exact": each linearisation's matrix
 * factored), linear_pcg ("factor": "pcg": the PCG with the scene's "auto" preconditioner, the interface
 * columns turned from rest), linear_rotated ("factor": "rotated": the part's factor at rest turned with
 * it as the step's matrix, applied exactly).
 * Cases: lug (scenes/mbs/lug_corotational.json: the lug hung at its eye, released 0.4 rad off the
 * vertical; alone: scenes/lug_pull.json), door (scenes/mbs/door_on_fe_hinge.json: the 40 kg door on
 * the clamped hinge; alone: scenes/hinge_pull.json), lug_100k (only by name: the lug case on
 * meshes/cache/lug_100k.msh, 20,642 nodes, from `meshes/generate.sh family`; the two scenes written
 * to a temporary folder with the mesh replaced; alone and linear_pcg only, the others take minutes a
 * step). dt is the scenes' (10 ms).
 * Printed per case: CPU ms per step (the fastest round), x the part alone, real-time factor, the
 * per-stage split, the PCG iterations of the linear coupling. --only: that variant alone (for a
 * profiler; no ratios). --label NAME: coupling.csv in
 * perf/results/NAME/. Every figure is measured in this run.
 * --backend cuda: on the GPU, wall-clock time: the part alone (cf_sim on the device) and the linear
 * coupling with the PCG ("backend": "cuda": the body's nodes on the device, its interface over the
 * bus, whose bytes per step are printed); the other variants are the CPU's and not run. Without a
 * device it says why and exits 77. The scenes are read from $COFEM_SOURCE_DIR when set (the device
 * machine's checkout), lug_100k's mesh from --mesh-dir (default meshes/cache of the source). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cofem/cofem.h"
#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"
#include "cofem/cuda.h"
#include "cofem/scene.h"
#include "cofem/sim.h"
#include "results_csv.h"

typedef struct Case {
  const char* name;
  const char* mechanism; /* relative to the source tree */
  const char* part;      /* the FE scene of its corotational body */
  const char* mesh;      /* NULL, or the mesh (source tree) replacing the part's: both scenes copied
                            into a temporary folder with it (big_scenes) */
} Case;

static const Case kCases[] = {
    {"lug", "scenes/mbs/lug_corotational.json", "scenes/lug_pull.json", NULL},
    {"door", "scenes/mbs/door_on_fe_hinge.json", "scenes/hinge_pull.json", NULL},
    {"lug_100k", "scenes/mbs/lug_corotational.json", "scenes/lug_pull.json", "meshes/cache/lug_100k.msh"},
};
#define NSMALL 2 /* the cases of "all" */

/* the copies of a case's scenes with its mesh: part.json (the FE scene, "mesh" replaced by the
 * mesh's absolute path) and mechanism.json (its flexible body's "scene" the copy) in dir */
static char g_big_part[1100], g_big_mech[1100];
static const char* g_src = COFEM_SOURCE_DIR; /* $COFEM_SOURCE_DIR overrides */
static const char* g_mesh_dir = NULL;         /* --mesh-dir: the cache meshes' folder */
static int g_cuda;                            /* --backend cuda */
static int big_scenes(const Case* c, const char* dir) {
  char path[1000];
  if (g_mesh_dir) snprintf(path, sizeof path, "%s/%s", g_mesh_dir, strrchr(c->mesh, '/') + 1);
  else snprintf(path, sizeof path, "%s/%s", g_src, c->mesh);
  FILE* test = fopen(path, "rb");
  if (!test) return fprintf(stderr, "%s: %s is missing (meshes/generate.sh family makes it)\n", c->name, path), -1;
  fclose(test);
  struct { const char *src, *key, *val; char* out; const char* name; } job[2] = {
      {c->part, "\"mesh\":", path, g_big_part, "part.json"},
      {c->mechanism, "\"scene\":", g_big_part, g_big_mech, "mechanism.json"}};
  for (int j = 0; j < 2; j++) {
    char src[1000];
    snprintf(src, sizeof src, "%s/%s", g_src, job[j].src);
    FILE* f = fopen(src, "rb");
    if (!f) return fprintf(stderr, "%s: cannot read %s\n", c->name, src), -1;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char* k = strstr(text, job[j].key); /* the key's string value, replaced */
    char* q0 = k ? strchr(k + strlen(job[j].key), '"') : NULL;
    char* q1 = q0 ? strchr(q0 + 1, '"') : NULL;
    if (!q1) return fprintf(stderr, "%s: no %s in %s\n", c->name, job[j].key, src), -1;
    snprintf(job[j].out, 1100, "%s/%s", dir, job[j].name);
    FILE* o = fopen(job[j].out, "wb");
    if (!o) return fprintf(stderr, "%s: cannot write %s\n", c->name, job[j].out), -1;
    fprintf(o, "%.*s\"%s\"%s", (int)(q0 - text), text, job[j].val, q1 + 1);
    fclose(o);
  }
  return 0;
}
#define NCASE ((int)(sizeof kCases / sizeof kCases[0]))

enum { ALONE, NEWTON, LINEAR, LINEAR_PCG, LINEAR_ROT, NVAR };
static const char* kVarName[NVAR] = {"alone", "newton", "linear", "linear_pcg", "linear_rotated"};

typedef struct Var {
  int kind;
  cfScene fs; /* ALONE */
  cfModel* fm;
  cfData* fd;
  cfSim* sim;   /* ALONE on the GPU */
  cfMbsScene ms; /* NEWTON, LINEAR */
  cfMbsModel* m;
  cfMbsData* d;
  double dt;
  int ok, steps;
  double best, stage[8]; /* per step: cfStage (ALONE) or cfMbsStage seconds */
  double newton, pcg_free, pcg_corr, corrected;
  double bus_up, bus_down; /* the GPU body's bytes per step (--backend cuda) */
} Var;

/* CPU time of the process; on the GPU the wall clock (the host waits for the device) */
static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(g_cuda ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int setup(Var* v, const Case* c, int kind) {
  char path[1200];
  memset(v, 0, sizeof *v);
  v->kind = kind;
  if (c->mesh && (kind == NEWTON || kind == LINEAR || kind == LINEAR_ROT)) return CF_OK; /* minutes a step (the rotated factor: its
                                                                                     factorisation): not run (ok 0) */
  if (g_cuda && kind != ALONE && kind != LINEAR_PCG) return CF_OK; /* the CPU's variants */
  if (kind == ALONE) {
    if (c->mesh) snprintf(path, sizeof path, "%s", g_big_part);
    else snprintf(path, sizeof path, "%s/%s", g_src, c->part);
    int st = cf_scene_load(path, &v->fs);
    if (st >= 0 && g_cuda) snprintf(v->fs.backend, sizeof v->fs.backend, "cuda"); /* "auto": the GPU's preconditioner */
    if (st >= 0) st = cf_scene_build(&v->fs, &v->fm, &v->fd);
    if (st >= 0) st = cf_sim_create(v->fm, v->fd, g_cuda ? "cuda" : "cpu", &v->sim);
    if (st < 0) return fprintf(stderr, "%s alone: %s\n", c->name, cf_last_error()), st;
    v->dt = v->fs.def.dt;
  } else {
    if (c->mesh) snprintf(path, sizeof path, "%s", g_big_mech);
    else snprintf(path, sizeof path, "%s/%s", g_src, c->mechanism);
    int st = cf_mbs_scene_load(path, &v->ms);
    if (st >= 0 && kind == LINEAR_PCG) /* "factor": "pcg": the part's matrix by the PCG, no factor */
      for (int i = 0; i < v->ms.def.nfe; i++) v->ms.def.fe[i].a0_pcg = 1, v->ms.def.fe[i].exact_factor = 0;
    if (st >= 0 && kind == LINEAR_ROT) /* "factor": "rotated": the rotated factor at rest as the step's matrix */
      for (int i = 0; i < v->ms.def.nfe; i++) v->ms.def.fe[i].a0_pcg = 0, v->ms.def.fe[i].exact_factor = 0;
    if (st >= 0) cf_mbs_scene_set_coupling(&v->ms, kind == NEWTON ? CF_MBS_COUPLING_NEWTON : CF_MBS_COUPLING_LINEAR);
    if (st >= 0 && g_cuda) st = cf_mbs_scene_set_backend(&v->ms, 1); /* as cofem run --backend cuda: AMG, on the GPU */
    if (st >= 0) st = cf_mbs_model_create(&v->ms.def, &v->m);
    if (st >= 0) st = cf_mbs_data_create(v->m, &v->d);
    if (st < 0) return fprintf(stderr, "%s %s: %s\n", c->name, kVarName[kind], cf_last_error()), st;
    v->dt = v->m->opt.dt;
  }
  v->ok = 1;
  return CF_OK;
}

static void release(Var* v) {
  if (v->kind == ALONE) {
    cf_sim_free(v->sim);
    cf_data_free(v->fd);
    cf_model_free(v->fm);
    cf_scene_free(&v->fs);
  } else {
    cf_mbs_data_free(v->d);
    cf_mbs_model_free(v->m);
    cf_mbs_scene_free(&v->ms);
  }
}

/* `steps` steps from the initial state; the fastest round's figures are kept */
static void round_of(Var* v, const Case* c, int steps, int timed) {
  if (!v->ok) return;
  int st = CF_OK;
  long it0 = 0, ls0 = 0, lc0 = 0, lf0 = 0, li0 = 0;
  double tm0[8] = {0};
  unsigned long long up0 = 0, down0 = 0;
  if (v->kind == ALONE) {
    cf_data_reset(v->fm, v->fd);
    st = cf_sim_reset(v->sim);
    for (int s = 0; s < CF_STAGE_COUNT; s++) tm0[s] = v->fd->timer[s];
  } else {
    st = cf_mbs_reset(v->m, v->d);
    it0 = v->d->iters_total;
    cf_mbs_fe_linear_stats(v->m, v->d, 0, &ls0, NULL, &lc0, &lf0, &li0);
    for (int s = 0; s < CF_MBS_STAGE_COUNT; s++) tm0[s] = v->d->timer[s];
  }
  if (st >= 0 && v->kind != ALONE && g_cuda && cf_mbs_fe_bus_bytes(v->m, v->d, 0, &up0, &down0) < 0) cf_clear_error();
  double t0 = cpu_time();
  for (int k = 0; k < steps && st >= 0; k++) {
    if (v->kind == ALONE) {
      cf_scene_forces(&v->fs, v->fd->t + v->fs.def.dt, 1.0, v->fd->f_ext);
      st = cf_sim_set_forces(v->sim, v->fd->f_ext);
      if (st >= 0) st = cf_sim_step(v->sim);
    } else {
      st = cf_mbs_step(v->m, v->d);
    }
  }
  double t = cpu_time() - t0;
  unsigned long long up1 = 0, down1 = 0;
  if (st >= 0 && v->kind != ALONE && g_cuda && cf_mbs_fe_bus_bytes(v->m, v->d, 0, &up1, &down1) < 0) cf_clear_error();
  if (st < 0) {
    fprintf(stderr, "%s %s: %s\n", c->name, kVarName[v->kind], cf_last_error());
    v->ok = 0;
    return;
  }
  if (!timed || (v->steps && t / steps >= v->best)) return;
  v->best = t / steps, v->steps = steps;
  v->bus_up = (double)(up1 - up0) / steps, v->bus_down = (double)(down1 - down0) / steps;
  if (v->kind == ALONE) {
    for (int s = 0; s < CF_STAGE_COUNT; s++) v->stage[s] = (v->fd->timer[s] - tm0[s]) / steps;
  } else {
    for (int s = 0; s < CF_MBS_STAGE_COUNT; s++) v->stage[s] = (v->d->timer[s] - tm0[s]) / steps;
    v->newton = (double)(v->d->iters_total - it0) / steps;
    long ls, lc, lf, li;
    cf_mbs_fe_linear_stats(v->m, v->d, 0, &ls, NULL, &lc, &lf, &li);
    v->pcg_free = (double)(lf - lf0) / steps, v->pcg_corr = (double)(li - li0) / steps;
    v->corrected = (double)(lc - lc0) / steps;
  }
}

int main(int argc, char** argv) {
  int rounds = 3, steps = 100, only = -1, only_var = -1;
  const char* label = NULL;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--rounds") && val) rounds = atoi(argv[++i]);
    else if (!strcmp(a, "--steps") && val) steps = atoi(argv[++i]);
    else if (!strcmp(a, "--label") && val) label = argv[++i];
    else if (!strcmp(a, "--mesh-dir") && val) g_mesh_dir = argv[++i];
    else if (!strcmp(a, "--backend") && val) {
      if (strcmp(val, "cpu") && strcmp(val, "cuda"))
        return fprintf(stderr, "cofem_bench_coupling: --backend %s: use cpu or cuda\n", val), 2;
      g_cuda = !strcmp(argv[++i], "cuda");
    }
    else if (!strcmp(a, "--only") && val) {
      for (int k = 0; k < NVAR; k++)
        if (!strcmp(val, kVarName[k])) only_var = k;
      if (only_var < 0)
        return fprintf(stderr, "cofem_bench_coupling: --only %s: use alone, newton, linear, linear_pcg or linear_rotated\n", val), 2;
      ++i;
    }
    else if (!strcmp(a, "--case") && val) {
      only = -2;
      for (int k = 0; k < NCASE; k++)
        if (!strcmp(val, kCases[k].name)) only = k;
      if (!strcmp(val, "all")) only = -1;
      ++i;
      if (only == -2) return fprintf(stderr, "cofem_bench_coupling: --case %s: use lug, door, lug_100k or all\n", val), 2;
    } else {
      fprintf(stderr, "usage: cofem_bench_coupling [--rounds R] [--steps N] [--case lug|door|lug_100k|all] "
                      "[--only alone|newton|linear|linear_pcg|linear_rotated] [--label NAME] [--backend cpu|cuda] "
                      "[--mesh-dir DIR]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 100 || steps < 1 || steps > 100000)
    return fprintf(stderr, "cofem_bench_coupling: --rounds 1..100, --steps 1..100000\n"), 2;
  if (getenv("COFEM_SOURCE_DIR")) g_src = getenv("COFEM_SOURCE_DIR");
  if (g_cuda) {
    char why[256];
    if (!cf_cuda_available(why, sizeof why)) return printf("cofem_bench_coupling --backend cuda: no device: %s\n", why), 77;
  }
  FILE* csv = NULL;
  char csv_path[800];
  if (label && (csv = open_results_csv(label, "coupling.csv", csv_path, sizeof csv_path)))
    fprintf(csv, "case,variant,dt,steps,ms_per_step,x_alone,realtime,newton_per_step,pcg_free_per_step,"
                 "pcg_corr_per_step,columns_corrected_per_step\n");
  printf("cofem_bench_coupling: %d rounds of %d steps, %s of the fastest round, one process%s\n", rounds, steps,
         g_cuda ? "on the GPU, wall-clock time" : "CPU time",
         getenv("OMP_THREAD_LIMIT") ? "" : " (OMP_THREAD_LIMIT not set: CHOLMOD may take several threads)");
  int bad = 0;
  for (int ci = 0; ci < NCASE; ci++) {
    if (only >= 0 ? ci != only : ci >= NSMALL) continue;
    const Case* c = &kCases[ci];
    char tmpdir[] = "/tmp/cofem_bench_coupling_XXXXXX";
    if (c->mesh && (!mkdtemp(tmpdir) || big_scenes(c, tmpdir) < 0)) {
      bad = 1;
      continue;
    }
    Var v[NVAR];
    for (int k = 0; k < NVAR; k++)
      if (only_var < 0 || k == only_var) setup(&v[k], c, k);
      else memset(&v[k], 0, sizeof v[k]), v[k].kind = k;
    for (int k = 0; k < NVAR; k++) round_of(&v[k], c, steps < 5 ? steps : 5, 0); /* warm-up */
    for (int r = 0; r < rounds; r++)
      for (int k = 0; k < NVAR; k++) round_of(&v[k], c, steps, 1);
    double dt = 0; /* the mechanism's, from a variant that ran */
    for (int k = 0; k < NVAR; k++)
      if (k != ALONE && v[k].ok && v[k].steps) dt = v[k].dt;
    printf("\n%s (%s; alone: %s), dt %g s\n", c->name, c->mechanism, c->part, dt);
    printf("| variant | ms/step | x alone | real time | Newton it/step | stages [ms/step] |\n|---|---|---|---|---|---|\n");
    for (int k = 0; k < NVAR; k++) {
      if (only_var >= 0 && k != only_var) continue;
      if (c->mesh && (k == NEWTON || k == LINEAR)) {
        printf("| %s | not run (minutes a step at this size) | | | | |\n", kVarName[k]);
        continue;
      }
      if (g_cuda && k != ALONE && k != LINEAR_PCG) continue;
      if (!v[k].ok || !v[k].steps) {
        printf("| %s | failed | | | | |\n", kVarName[k]);
        bad = 1;
        continue;
      }
      const double ms = 1e3 * v[k].best, xa = v[ALONE].ok ? v[k].best / v[ALONE].best : NAN;
      const double rt = v[k].dt / v[k].best;
      char stg[200];
      if (k == ALONE)
        snprintf(stg, sizeof stg, "polar %.3f, assemble %.3f, pcg %.3f, update %.3f", 1e3 * v[k].stage[CF_STAGE_POLAR],
                 1e3 * v[k].stage[CF_STAGE_ASSEMBLE], 1e3 * v[k].stage[CF_STAGE_PCG], 1e3 * v[k].stage[CF_STAGE_UPDATE]);
      else
        snprintf(stg, sizeof stg, "constraints %.3f, forces %.3f, assemble %.3f, factor %.3f, solve %.3f",
                 1e3 * v[k].stage[CF_MBS_STAGE_CONSTRAINTS], 1e3 * v[k].stage[CF_MBS_STAGE_FORCES],
                 1e3 * v[k].stage[CF_MBS_STAGE_ASSEMBLE], 1e3 * v[k].stage[CF_MBS_STAGE_FACTOR],
                 1e3 * v[k].stage[CF_MBS_STAGE_SOLVE]);
      char nwt[32] = "", xas[32] = "-"; /* "-": the part alone not run (--only) */
      if (k != ALONE) snprintf(nwt, sizeof nwt, "%.2f", v[k].newton);
      if (isfinite(xa)) snprintf(xas, sizeof xas, "%.2f", xa);
      printf("| %s | %.3f | %s | %.1fx | %s | %s |\n", kVarName[k], ms, xas, rt, nwt, stg);
      if (csv)
        fprintf(csv, "%s,%s,%g,%d,%.5f,%.4f,%.3f,%.3f,%.3f,%.3f,%.3f\n", c->name, kVarName[k], v[k].dt, v[k].steps, ms,
                xa, rt, v[k].newton, v[k].pcg_free, v[k].pcg_corr, v[k].corrected);
    }
    if (v[LINEAR].ok && v[LINEAR].steps && v[NEWTON].ok && v[NEWTON].steps)
      printf("linear coupling: %.2fx faster than the Newton coupling\n", v[NEWTON].best / v[LINEAR].best);
    if (v[LINEAR_PCG].ok && v[LINEAR_PCG].steps) {
      printf("linear coupling with the PCG: %.2f PCG iterations per step for the free motion, %.2f for %.2f interface "
             "columns corrected per step", v[LINEAR_PCG].pcg_free, v[LINEAR_PCG].pcg_corr, v[LINEAR_PCG].corrected);
      if (v[NEWTON].ok && v[NEWTON].steps) printf("; %.2fx faster than the Newton coupling", v[NEWTON].best / v[LINEAR_PCG].best);
      if (g_cuda)
        printf("; the GPU body's bus per step %.1f kB up, %.1f kB down (its interface: %d nodes)", v[LINEAR_PCG].bus_up / 1e3,
               v[LINEAR_PCG].bus_down / 1e3, cf_mbs_fe_interface_nodes(v[LINEAR_PCG].m, v[LINEAR_PCG].d, 0, NULL));
      printf("\n");
    }
    if (v[LINEAR_ROT].ok && v[LINEAR_ROT].steps && v[NEWTON].ok && v[NEWTON].steps)
      printf("linear coupling with the rotated factor: %.2fx faster than the Newton coupling\n", v[NEWTON].best / v[LINEAR_ROT].best);
    for (int k = 0; k < NVAR; k++)
      if (v[k].ok || v[k].steps) release(&v[k]);
    if (c->mesh) remove(g_big_part), remove(g_big_mech), remove(tmpdir);
  }
  if (csv) {
    fclose(csv);
    printf("\nwrote %s\n", csv_path);
  }
  return bad;
}
