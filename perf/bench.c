/* Throughput benchmark of the co-rotational step (CPU backend; CUDA when built and present).
 *   cofem_bench [--label NAME] [--steps N] [--threads T] [--backend cpu|cuda] [--big] [--family]
 *               [--meshes DIR] [--out DIR] [--warmup N] [--no-cold] [--no-amg] [--amg-skip LIST]
 *               [--amg-f32] [--amg-only] [--gpu-gbs GBS]
 *               [--scene FILE | --mesh FILE --fixed SET --load SET --force FX,FY,FZ]
 * --scene FILE: the scene's own part, material, supports, loads (with their ramps), dt, tolerance
 * and damping, stepped --steps times (the bench's preconditioner and warm/cold variants on it);
 * --mesh FILE ...: any mesh with named node sets (.msh, .inp), clamped at one set and pulled at
 * another with the bench's ramp, dt 0.01 s, tol 1e-6. Either runs that case alone.
 * Times: ms/step as the median and the mean of the timed steps (both printed and in the CSV);
 * setup apart: model build, data (with the rotated Cholesky's factorisation) and backend (the
 * GPU's upload), each once per variant. Nothing but cf_sim_step is inside the timed region.
 * --family adds the lug and hinge refinement family from DIR/cache (meshes/generate.sh family):
 * 10k and 100k tetrahedra, and 1M with --big.
 * Paths: meshes from --meshes DIR, else ./meshes (the repository root, as ctest runs), else
 * meshes/ under cf_data_dir() (an installed tree or a bundle: share/cofem beside the program);
 * results to --out DIR, else ./perf/results/<label>. Nothing of the build machine's paths.
 * Per mesh: nodes, elements, DOFs, ms per step (median over repeats after warm-up), real-time
 * ratio at dt, PCG iterations per step with warm and cold start, and the time per stage; on the
 * CPU also the rotated-Cholesky preconditioner (warm start) on the same run, and the CPU time of
 * the stepping thread per step (median; with --threads 1 the core time, which other processes on
 * a shared machine do not inflate as they do the wall time).
 * --case NAME runs one case only. --warmup N: untimed steps first (3); --no-cold: skip the
 * cold-start block-Jacobi run (at 1M tetrahedra it costs minutes); --no-amg: skip the AMG run;
 * --amg-skip LIST: skip it for the cases named in LIST (comma-separated; its host setup at 1M
 * takes seconds on 16 cores, a minute or more on one). A failed AMG run
 * is counted as a failure and its columns left nan; the case's block-Jacobi row is still written.
 * --amg-f32 (a GPU backend): after each AMG run the same steps again with the V-cycle's matrices
 * in float (cfCudaOptions.amg_float) on the same hierarchy: columns amg_f32_*, beside the double
 * AMG's; its failure is counted and leaves its columns nan, the rest of the row standing.
 * --amg-only: the AMG runs alone (no block Jacobi, cold or rotated Cholesky: nan columns);
 * tools/gpu-check.sh runs `--amg-only --amg-f32` as a process of its own after the full run.
 * AMG (the smoothed-aggregation preconditioner, rotated as the rotated Cholesky, set up once):
 * on the CPU at every size, PCG iterations, ms/step, the hierarchy's setup apart, the bytes one
 * V-cycle moves at least (host/fem/fem_amg.c, cf_amg_bytes_per_cycle) and the GPU PCG time per
 * step they imply at --gpu-gbs GB/s (3000: an H100's measured copy bandwidth) next to block
 * Jacobi's: iterations x bytes per iteration / bandwidth (an estimate, not a measurement).
 * Scenes: the lug and hinge of paper 003 pulled at their load sets, and VegaFEM's clamped
 * 1.0 x 0.1 x 0.1 m steel beam with a 525 kN tip load (DESIGN.md), dt 0.01 s, tol 1e-6.
 * PCG bytes per iteration: what the GPU's block-Jacobi iteration moves at least (each array read
 * or written once per kernel: A, its indices, the vectors, Pinv; the GPU kernels of
 * kernels/fem_cuda.cu), and the bandwidth it implies, bytes x iterations / PCG stage time.
 * GPU bytes per step (gpu_step_bytes): what each stage of the GPU's step moves at least, its time
 * at --gpu-gbs (the limit) and, on the GPU, the measured stage time over it; in bench.csv as
 * gpu_bytes_* / amg_gpu_bytes_* (elem: polar, assemble and update; pcg; step).
 * --kernel-times (a GPU backend): each run again from rest on a backend with kernel timers
 * (cfCudaOptions.kernel_timers): ms per step of each kernel group of the step against its bytes'
 * limit (the element stages kernel by kernel).
 * --step-graph (a GPU backend): each run again with the whole step as one CUDA graph
 * (cfCudaOptions.step_graph): its ms per step beside the batched graphs' (columns sg_*).
 * --spmv-warp (a GPU backend): each run again with the warp-per-row SpMV (CF_CUDA_SPMV_WARP): its
 * ms per step and PCG stage beside the thread-per-row kernel's, the PCG's GB/s (columns warp_*).
 * --budget CSV: no steps; the byte budget of each case of a measured bench.csv (a GPU run's) with
 * its iterations, against its stage times at --gpu-gbs (docs/cuda.md, "The step's bytes").
 * Writes <out>/bench.csv; exits 1 when a case was skipped (a mesh missing) or failed. Every figure printed is measured in this run, except the byte count. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cofem/cofem.h"
#include "cofem/scene.h"
#include "fem/fem_precond.h" /* the AMG hierarchy's figures */

typedef struct Case {
  const char* name;
  const char* mesh;     /* file under the meshes directory, or NULL for a box beam */
  int nx, ny, nz;       /* box cells */
  const char* fixed;    /* node set */
  const char* load;     /* node set */
  double force[3];
  const cfScene* scene; /* --scene: its model, supports and loads (mesh, sets, force unused) */
} Case;

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* CPU time of the calling thread [s]: with one thread, the time of the core running the step,
 * which time slices given to other processes on a shared machine do not inflate */
static double thread_cpu_time(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the GPU step's bytes by stage (gpu_step_bytes, below) */
typedef struct StepBytes {
  double polar, assemble, pcg_fixed, per_iter, update;
  /* by kernel group (CF_CUDA_KT_*, cf_cuda_kernel_times); kernel[CF_CUDA_KT_PCG] without the
   * iterations' per_iter */
  double kernel[CF_CUDA_KT_COUNT];
} StepBytes;

typedef struct Result {
  double ms_median, ms_min, ms_mean;
  double setup_ms[3]; /* model build, data (+ factorisation), backend (GPU upload) */
  double cpu_ms_median; /* thread CPU time per step, median */
  double iters;
  double stage_ms[CF_STAGE_COUNT];
  double pcg_bytes; /* per iteration, see the header */
  /* AMG only: bytes per V-cycle, operator complexity, hierarchy setup, its levels */
  double amg_bytes, amg_opc, amg_setup_ms;
  double amg_value_bytes; /* of amg_bytes, the matrices' values (half of them go with amg_float) */
  double amg_gpu_bytes;   /* amg_bytes as the GPU moves them (its coarsest level a dense inverse) */
  char amg_desc[1024];
  StepBytes gpu; /* the GPU step's bytes for this run's model and preconditioner */
  int have_kernel_ms;                 /* --kernel-times on the GPU: kernel_ms is set */
  double kernel_ms[CF_CUDA_KT_COUNT]; /* ms per timed step by kernel group (cf_cuda_kernel_times) */
  double sg_ms_median, sg_iters;      /* --step-graph: the same steps as one graph each */
  double warp_ms_median, warp_pcg_ms; /* --spmv-warp: the same steps with the warp-per-row SpMV */
} Result;

/* bytes one block-Jacobi PCG iteration of the GPU moves at least: k_spmv_dot (A 72 + col 4 per
 * block; row_ptr 4, p 24, q 24, fixed 3 per node), k_update_xrz (Pinv 72, p, q, z 24 each, x and r
 * read and written 96), k_update_p (z 24, p read and written 48) */
static double pcg_bytes_per_iter(const cfModel* m) {
  return 76.0 * m->nnzb + (4 + 24 + 24 + 3 + 72 + 72 + 96 + 72) * (double)m->nnode;
}

/* Run `steps` steps with the load ramped over the first half (a pull, as in the demo), or the
 * scene's loads at the scene's times. */
/* --warmup N (3): steps before the timed ones */
static int g_warmup = 3;

/* bytes the AMG-preconditioned PCG iteration adds on the GPU besides the V-cycle: the rotations
 * t = Q^T r and z = Q y (node_R 72, vectors in and out 48 per node, each twice), the projection */
static double amg_rotation_bytes(int nnode) {
  return 2 * (72.0 + 48.0) * nnode + 3.0 * nnode;
}

/* The bytes the GPU's backward-Euler step (cf_cuda_step, kernels/fem_cuda.cu) moves at least,
 * stage by stage as its event timers split it: each kernel reading and writing each of its arrays
 * once (indices 4 B, doubles 8 B, flags 1 B; block rows' vector reads counted once per node, the
 * caches' best case). At the card's copy bandwidth these are the step's physical limit, the
 * ratio of a measured stage time to its limit how far the kernel is from it (issue 28). E
 * elements of npe nodes, N nodes, B blocks of A; S = npe E element-node entries, npe^2 E the
 * element blocks the assembly gathers.
 *   polar      k_polar: tet 4 npe, Dm_inv 72, x 24 npe, R 72 written, per element (quadratic:
 *              k_polar10, the centroid's gradients 240, R, and with a rotation per point Gq 960
 *              and Rq 288)
 *   assemble   k_rotate: tet, Dm_inv, vol 8, R, x, K_R 72 npe^2 and the forces 24 npe written
 *              (quadratic with rotations per point: Gq, Wq 32, Rq; else K_e 7200, R, X 240);
 *              k_node_gather: S (src 4 + forces 24) + N (ptr 4 + f_el 24); k_block_gather: npe^2
 *              E (src 4 + K_R block 72) + B (ptr 4 + M block 72 + A 72 written); k_rhs: B (col 4
 *              + M block 72) + N (row_ptr 4, mass 8, v, f_ext, f_el, b 24 each, fixed 1 x 3);
 *              the preconditioner: AMG's k_node_rotation S (src 4 + R 72) + N (ptr 4 + node R 72),
 *              or block Jacobi's k_jacobi N (diag 4, A's diagonal block 72, fixed 3, Pinv 72)
 *   pcg        fixed: the warm start (two copies of v 2 x 48 N, k_warm_project 99 N, two SpMVs
 *              2 (76 B + 52 N), k_warm_sums 123 N, k_warm_combine 72 N) and the PCG's start
 *              (k_pcg_init_r 75 N, the SpMV of x 76 B + 55 N, and one iteration's preconditioner
 *              and vector work); then per iteration pcg_bytes_per_iter (block Jacobi) or that plus
 *              one V-cycle and its rotations (AMG), as the estimate below
 *   update     k_update_x: v read, x read and written, 72 N */
static StepBytes gpu_step_bytes(const cfModel* m, int amg, double vcycle_bytes) {
  const double E = m->ntet, N = m->nnode, B = m->nnzb, npe = m->npe, S = npe * E, EB = npe * npe * E;
  const int quad = m->npe == 10, per_point = quad && m->Gq != NULL;
  StepBytes b;
  b.polar = E * (4 * npe + 24 * npe + 72) + (quad ? E * 240 + (per_point ? E * (960 + 288) : 0) : E * 72);
  double rotate = E * (4 * npe + 24 * npe + 72 * npe * npe + 24 * npe);
  if (!quad) rotate += E * (72 + 8 + 72);
  else if (per_point) rotate += E * (960 + 32 + 288);
  else rotate += E * (7200 + 72 + 240);
  const double node_gather = S * (4 + 24) + N * (4 + 24);
  const double block_gather = EB * (4 + 72) + B * (4 + 72 + 72);
  const double rhs = B * (4 + 72) + N * (4 + 8 + 4 * 24 + 3);
  const double precond = amg ? S * (4 + 72) + N * (4 + 72) : N * (4 + 72 + 3 + 72);
  b.assemble = rotate + node_gather + block_gather + rhs + precond;
  b.per_iter = pcg_bytes_per_iter(m) + (amg ? vcycle_bytes + amg_rotation_bytes(m->nnode) : 0);
  const double warm = m->def.warm_start ? 2 * 48 * N + 99 * N + 2 * (76 * B + 52 * N) + 123 * N + 72 * N : 0;
  b.pcg_fixed = warm + 75 * N + 76 * B + 55 * N + (b.per_iter - pcg_bytes_per_iter(m)) + 273 * N;
  b.update = 72 * N;
  const double k[CF_CUDA_KT_COUNT] = {b.polar, rotate, node_gather, block_gather, rhs, precond, warm,
                                      b.pcg_fixed - warm, b.update};
  memcpy(b.kernel, k, sizeof k);
  return b;
}

/* the bytes of a step of `iters` PCG iterations */
static double step_bytes_total(const StepBytes* b, double iters) {
  return b->polar + b->assemble + b->pcg_fixed + iters * b->per_iter + b->update;
}

/* The byte budget of one run's step: per stage the bytes (MB), their time at gbs (the limit, ms)
 * and, when the run was on the GPU (measured), the stage's measured time over that limit. */
static void print_budget(const char* what, const Result* r, double gbs, int measured) {
  if (isnan(r->iters)) return;
  const double by[4] = {r->gpu.polar, r->gpu.assemble, r->gpu.pcg_fixed + r->iters * r->gpu.per_iter, r->gpu.update};
  const int stage[4] = {CF_STAGE_POLAR, CF_STAGE_ASSEMBLE, CF_STAGE_PCG, CF_STAGE_UPDATE};
  const char* name[4] = {"polar", "assemble", "pcg", "update"};
  double tot = 0, tms = 0;
  printf("%-10s GPU bytes per step, %s (%.1f PCG it; the kernels' minimum), limit at %.0f GB/s%s:", "", what, r->iters,
         gbs, measured ? ", measured / limit" : "");
  for (int k = 0; k < 4; k++) {
    const double lim = by[k] / (gbs * 1e9) * 1e3;
    tot += by[k], tms += r->stage_ms[stage[k]];
    printf(" %s %.2f MB %.4f ms", name[k], by[k] / 1e6, lim);
    if (measured) printf(" (%.1fx)", r->stage_ms[stage[k]] / lim);
    printf(k < 3 ? "," : ";");
  }
  const double lim = tot / (gbs * 1e9) * 1e3;
  printf(" step %.2f MB %.4f ms", tot / 1e6, lim);
  if (measured) printf(" (stages %.1fx, whole step %.1fx)", tms / lim, r->ms_median / lim);
  printf("\n");
}

/* --kernel-times: each kernel group's measured ms per step against its bytes' limit at gbs */
static void print_kernel_times(const char* what, const Result* r, double gbs) {
  if (!r->have_kernel_ms || isnan(r->iters)) return;
  printf("%-10s GPU kernels, %s, ms per step (measured / the limit at %.0f GB/s):", "", what, gbs);
  for (int k = 0; k < CF_CUDA_KT_COUNT; k++) {
    const double by = r->gpu.kernel[k] + (k == CF_CUDA_KT_PCG ? r->iters * r->gpu.per_iter : 0);
    printf(" %s %.4f (%.1fx)%s", cf_cuda_kernel_time_name(k), r->kernel_ms[k],
           r->kernel_ms[k] / (by / (gbs * 1e9) * 1e3), k + 1 < CF_CUDA_KT_COUNT ? "," : "\n");
  }
}

/* --kernel-times: a run on the GPU is repeated on a backend with kernel timers */
static int g_kernel_times = 0;
/* --step-graph: a run on the GPU is repeated with the whole step as one graph */
static int g_step_graph = 0;
/* --spmv-warp: a run on the GPU is repeated with the warp-per-row SpMV */
static int g_spmv_warp = 0;

/* warm-up and timed steps on sim, or on the CUDA backend g when sim is NULL (the float AMG
 * variant, which cf_sim cannot ask for); the figures into r. ms, cpu: [steps] scratch. */
static int timed_steps(const Case* c, const cfModel* m, cfData* d, const cfNodeSet* load, cfSim* sim, cfCuda* g,
                       int steps, double* ms, double* cpu, Result* r) {
  int st = CF_OK;
  long it0 = 0;
  double t_stage0[CF_STAGE_COUNT], kt0[CF_CUDA_KT_COUNT];
  const int warmup = g_warmup;
  for (int k = 0; k < steps + warmup; k++) {
    if (k == warmup) {
      it0 = d->pcg_iters_total;
      memcpy(t_stage0, d->timer, sizeof t_stage0);
      /* a backend with kernel timers: their sums at the first timed step (0 = none) */
      r->have_kernel_ms = g && cf_cuda_kernel_times(g, kt0, NULL) >= 0;
      if (g && !r->have_kernel_ms) cf_clear_error();
    }
    if (c->scene) {
      cf_scene_forces(c->scene, (k + 1) * m->def.dt, 1.0, d->f_ext);
    } else {
      double ramp = k < (steps + warmup) / 2 ? (double)k / ((steps + warmup) / 2) : 1.0;
      for (int i = 0; i < load->count; i++)
        for (int j = 0; j < 3; j++) d->f_ext[3 * load->nodes[i] + j] = ramp * c->force[j] / load->count;
    }
    if (sim) cf_sim_set_forces(sim, d->f_ext);
    else cf_cuda_set_forces(g, d->f_ext);
    double c0 = thread_cpu_time(), t0 = cf_wall_time();
    st = sim ? cf_sim_step(sim) : cf_cuda_step(g, m, d);
    double t1 = cf_wall_time(), c1 = thread_cpu_time();
    if (st < 0) break;
    if (k >= warmup) {
      ms[k - warmup] = 1e3 * (t1 - t0);
      cpu[k - warmup] = 1e3 * (c1 - c0);
    }
  }
  if (st >= 0) { /* a failed step leaves the figures unset: the caller reports the error */
    double sum = 0;
    for (int k = 0; k < steps; k++) sum += ms[k];
    r->ms_mean = sum / steps;
    qsort(ms, steps, sizeof(double), cmp_double);
    qsort(cpu, steps, sizeof(double), cmp_double);
    r->ms_median = ms[steps / 2];
    r->ms_min = ms[0];
    r->cpu_ms_median = cpu[steps / 2];
    r->iters = (double)(d->pcg_iters_total - it0) / steps;
    for (int s = 0; s < CF_STAGE_COUNT; s++) r->stage_ms[s] = 1e3 * (d->timer[s] - t_stage0[s]) / steps;
    if (r->have_kernel_ms && cf_cuda_kernel_times(g, r->kernel_ms, NULL) >= 0)
      for (int k = 0; k < CF_CUDA_KT_COUNT; k++) r->kernel_ms[k] = (r->kernel_ms[k] - kt0[k]) / steps;
  }
  return st < 0 ? st : CF_OK;
}

/* the same steps again from rest (cf_data_reset, as cf_sim_reset) on a CUDA backend created with
 * options o; the figures into rx */
static int rerun_gpu(const Case* c, const cfModel* m, cfData* d, const cfNodeSet* load, const cfCudaOptions* o,
                     int steps, double* ms, double* cpu, Result* rx) {
  cf_data_reset(m, d);
  cfCuda* g = NULL;
  int st = cf_cuda_create_ex(m, d, o, &g);
  if (st >= 0) st = timed_steps(c, m, d, load, NULL, g, steps, ms, cpu, rx);
  cf_cuda_free(g);
  return st;
}

/* r32 (AMG on the GPU only, else NULL): after the run, the same steps again with the float
 * V-cycle (cfCudaOptions.amg_float) on the same hierarchy, so that its host setup (seconds at
 * 1M tetrahedra) is paid once: the state back at rest (cf_data_reset, as cf_sim_reset), a
 * backend created with amg_float. Its status into *st32 (its failure is not run's). */
static int run(const cfMesh* mesh, const Case* c, int warm, int precond, int steps, const char* backend, Result* r,
               Result* r32, int* st32) {
  cfModelDef def = c->scene ? c->scene->def : cf_default_model_def();
  def.warm_start = warm;
  def.preconditioner = precond;
  if (!c->scene) def.pcg_max_iter = 5000;
  cfModel* m = NULL;
  cfData* d = NULL;
  cfSim* sim = NULL;
  double *ms = NULL, *cpu = NULL;
  const cfNodeSet* fix = c->scene ? NULL : cf_mesh_find_nset(mesh, c->fixed);
  const cfNodeSet* load = c->scene ? NULL : cf_mesh_find_nset(mesh, c->load);
  int st = CF_OK;
  /* every failure goes through the one cleanup below: a failed case leaks nothing */
  if (!c->scene && (!fix || !load))
    st = cf_error(CF_ERR_ARG, "%s: sets %s/%s missing", c->name, c->fixed, c->load);
  double w0 = cf_wall_time();
  if (st >= 0) st = cf_model_create(mesh, &def, &m);
  if (st >= 0 && fix) st = cf_model_fix_nodes(m, fix->nodes, fix->count, 7);
  for (int k = 0; c->scene && st >= 0 && k < c->scene->nfix; k++) {
    const cfNodeSet* set = cf_mesh_find_nset(mesh, c->scene->fix[k].set);
    st = set ? cf_model_fix_nodes(m, set->nodes, set->count, c->scene->fix[k].dir_mask)
             : cf_error(CF_ERR_ARG, "%s: set %s missing", c->name, c->scene->fix[k].set);
  }
  double w1 = cf_wall_time();
  if (st >= 0) st = cf_data_create(m, &d);
  double w2 = cf_wall_time();
  r->amg_bytes = r->amg_opc = r->amg_setup_ms = r->amg_value_bytes = r->amg_gpu_bytes = NAN;
  r->sg_ms_median = r->sg_iters = r->warp_ms_median = r->warp_pcg_ms = NAN;
  r->amg_desc[0] = '\0';
  double setup_s;
  if (st >= 0 && cf_precond_amg_info(d, &r->amg_bytes, &r->amg_opc, &setup_s, r->amg_desc, sizeof r->amg_desc))
    r->amg_setup_ms = 1e3 * setup_s, r->amg_value_bytes = cf_precond_amg_value_bytes(d),
    r->amg_gpu_bytes = cf_precond_amg_gpu_bytes(d, NULL);
  if (st >= 0) st = cf_sim_create(m, d, backend, &sim);
  double w3 = cf_wall_time();
  r->setup_ms[0] = 1e3 * (w1 - w0);
  r->setup_ms[1] = 1e3 * (w2 - w1);
  r->setup_ms[2] = 1e3 * (w3 - w2);
  if (st >= 0) {
    ms = malloc(sizeof(double) * steps);
    cpu = malloc(sizeof(double) * steps);
    if (!ms || !cpu) st = cf_error(CF_ERR_NOMEM, "%s: out of memory", c->name);
  }
  if (st < 0) goto done;
  r->pcg_bytes = pcg_bytes_per_iter(m);
  r->gpu = gpu_step_bytes(m, precond == CF_PRECOND_AMG, r->amg_gpu_bytes);
  r->have_kernel_ms = 0;
  st = timed_steps(c, m, d, load, sim, NULL, steps, ms, cpu, r);
  const int on_cuda = !strcmp(cf_sim_backend_name(sim), "cuda");
  /* the GPU variants, each the same steps from rest on a backend of its own (the run's device
   * memory given back first), so that the hierarchy's host setup is paid once; a variant's failure
   * is reported, not the run's */
  if (st >= 0 && on_cuda && (g_kernel_times || g_step_graph || g_spmv_warp || r32)) {
    cf_sim_free(sim);
    sim = NULL;
  }
  if (st >= 0 && on_cuda && g_kernel_times) {
    /* --kernel-times: the kernel timers' events are not in the run's own figures */
    cfCudaOptions o = cf_cuda_default_options();
    o.kernel_timers = 1;
    Result rk = *r;
    int sk = rerun_gpu(c, m, d, load, &o, steps, ms, cpu, &rk);
    if (sk < 0) printf("%-10s kernel timers failed: %s\n", c->name, cf_last_error());
    r->have_kernel_ms = sk >= 0 && rk.have_kernel_ms;
    memcpy(r->kernel_ms, rk.kernel_ms, sizeof r->kernel_ms);
  }
  if (st >= 0 && on_cuda && g_step_graph) {
    /* --step-graph: the whole step as one graph (cfCudaOptions.step_graph) */
    cfCudaOptions o = cf_cuda_default_options();
    o.step_graph = 1;
    Result rs = *r;
    int ss = rerun_gpu(c, m, d, load, &o, steps, ms, cpu, &rs);
    if (ss < 0) printf("%-10s one graph per step failed: %s\n", c->name, cf_last_error());
    else r->sg_ms_median = rs.ms_median, r->sg_iters = rs.iters;
  }
  if (st >= 0 && on_cuda && g_spmv_warp) {
    /* --spmv-warp: the PCG's SpMV (and the warm start's) a warp per block row */
    cfCudaOptions o = cf_cuda_default_options();
    o.spmv = CF_CUDA_SPMV_WARP;
    Result rw = *r;
    int sw = rerun_gpu(c, m, d, load, &o, steps, ms, cpu, &rw);
    if (sw < 0) printf("%-10s the warp-per-row SpMV failed: %s\n", c->name, cf_last_error());
    else r->warp_ms_median = rw.ms_median, r->warp_pcg_ms = rw.stage_ms[CF_STAGE_PCG];
  }
  if (st >= 0 && r32 && on_cuda) {
    cfCudaOptions o = cf_cuda_default_options();
    o.amg_float = 1;
    r32->setup_ms[0] = r->setup_ms[0];
    r32->setup_ms[1] = r32->setup_ms[2] = NAN; /* the hierarchy is r's; its backend's create not timed apart */
    r32->pcg_bytes = r->pcg_bytes;
    *st32 = rerun_gpu(c, m, d, load, &o, steps, ms, cpu, r32);
  }
done:
  free(ms);
  free(cpu);
  cf_sim_free(sim);
  cf_data_free(d);
  cf_model_free(m);
  return st < 0 ? st : CF_OK;
}

static int is_dir(const char* path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* mkdir -p */
static int make_dirs(const char* path) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
  for (char* q = buf + 1; *q; q++)
    if (*q == '/') {
      *q = 0;
      if (mkdir(buf, 0777) && errno != EEXIST) return -1;
      *q = '/';
    }
  return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

/* name is one of the comma-separated names of list */
static int in_list(const char* list, const char* name) {
  const size_t n = strlen(name);
  for (const char* p = list; *p;) {
    const char* e = strchr(p, ',');
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* ---- --budget CSV: the byte budget of a measured GPU run ------------------------------------- */
/* the value of column `key` in a CSV row (fields split at commas), NAN when absent or "nan" */
static double csv_value(char* const* head, int nhead, char* const* row, int nrow, const char* key) {
  for (int k = 0; k < nhead && k < nrow; k++)
    if (!strcmp(head[k], key)) {
      char* end = NULL;
      double v = strtod(row[k], &end);
      return end != row[k] ? v : NAN;
    }
  return NAN;
}

static int split_csv(char* line, char** f, int max) {
  int n = 0;
  line[strcspn(line, "\r\n")] = 0;
  for (char* p = line; n < max;) {
    f[n++] = p;
    char* c = strchr(p, ',');
    if (!c) break;
    *c = 0;
    p = c + 1;
  }
  return n;
}

/* For each case of a measured bench.csv (a GPU run's: tools/gpu-check.sh's bench.csv), its model
 * built here (and, where the row ran AMG, its hierarchy: the V-cycle's bytes), the byte budget of
 * its step (gpu_step_bytes) with the row's PCG iterations, against the row's measured stage times
 * at gbs GB/s (the card's measured copy bandwidth). Runs no step. */
static int budget_of_run(const char* csv_path, const Case* cases, int ncases, const char* meshes, double gbs) {
  FILE* f = fopen(csv_path, "r");
  if (!f) {
    fprintf(stderr, "cofem_bench --budget: cannot read %s: %s\n", csv_path, strerror(errno));
    return 2;
  }
  static char hline[8192], line[8192];
  char *head[128], *row[128];
  if (!fgets(hline, sizeof hline, f)) {
    fclose(f);
    fprintf(stderr, "cofem_bench --budget: %s is empty\n", csv_path);
    return 2;
  }
  const int nhead = split_csv(hline, head, 128);
  printf("GPU step byte budget of %s at %.0f GB/s: each stage's bytes (the kernels' minimum, gpu_step_bytes in "
         "perf/bench.c), its time at that bandwidth (the limit) and the measured time over the limit\n", csv_path, gbs);
  printf("%-10s %-13s %6s | %9s %9s %9s %9s %9s | %8s %8s %7s | %s\n", "case", "precond.", "it", "polar MB",
         "assem. MB", "pcg MB", "update MB", "step MB", "limit ms", "step ms", "ratio", "stage ratios polar/assemble/pcg/update");
  int nbad = 0;
  while (fgets(line, sizeof line, f)) {
    const int nrow = split_csv(line, row, 128);
    if (nrow < 2) continue;
    const Case* c = NULL;
    for (int k = 0; k < ncases; k++)
      if (!strcmp(cases[k].name, row[0])) c = &cases[k];
    if (!c) {
      printf("%-10s not a case of cofem_bench: skipped\n", row[0]);
      continue;
    }
    cfMesh mesh;
    char path[4200];
    if (c->mesh) snprintf(path, sizeof path, "%s/%s", meshes, c->mesh);
    int st = c->mesh ? cf_mesh_read(path, &mesh) : cf_mesh_box(c->nx, c->ny, c->nz, 1.0, 0.1, 0.1, &mesh);
    if (st < 0) {
      printf("%-10s skipped: %s\n", c->name, cf_last_error());
      nbad++;
      continue;
    }
    for (int amg = 0; amg < 2; amg++) {
      const char* pre = amg ? "amg_" : "";
      char key[64];
      snprintf(key, sizeof key, amg ? "amg_pcg_iters" : "pcg_iters_warm");
      const double iters = csv_value(head, nhead, row, nrow, key);
      if (isnan(iters)) continue;
      cfModelDef def = cf_default_model_def();
      def.warm_start = 1;
      def.pcg_max_iter = 5000;
      def.preconditioner = amg ? CF_PRECOND_AMG : CF_PRECOND_BLOCK_JACOBI;
      cfModel* m = NULL;
      cfData* d = NULL;
      const cfNodeSet* fix = cf_mesh_find_nset(&mesh, c->fixed);
      st = fix ? cf_model_create(&mesh, &def, &m) : cf_error(CF_ERR_ARG, "set %s missing", c->fixed);
      if (st >= 0) st = cf_model_fix_nodes(m, fix->nodes, fix->count, 7);
      if (st >= 0 && amg) st = cf_data_create(m, &d);
      if (st < 0) {
        printf("%-10s %s failed: %s\n", c->name, amg ? "AMG" : "block-Jacobi", cf_last_error());
        nbad++;
      } else {
        const StepBytes b = gpu_step_bytes(m, amg, amg ? cf_precond_amg_gpu_bytes(d, NULL) : 0);
        const double by[4] = {b.polar, b.assemble, b.pcg_fixed + iters * b.per_iter, b.update};
        static const char* const stage_key[4] = {"polar_ms", "assemble_ms", "pcg_ms", "update_ms"};
        const double tot = step_bytes_total(&b, iters), lim = tot / (gbs * 1e9) * 1e3;
        snprintf(key, sizeof key, amg ? "amg_ms_per_step" : "ms_per_step_median");
        const double ms = csv_value(head, nhead, row, nrow, key);
        printf("%-10s %-13s %6.1f | %9.2f %9.2f %9.2f %9.3f %9.2f | %8.4f %8.3f %6.1fx |", c->name,
               amg ? "AMG" : "block-Jacobi", iters, by[0] / 1e6, by[1] / 1e6, by[2] / 1e6, by[3] / 1e6, tot / 1e6, lim,
               ms, ms / lim);
        for (int k = 0; k < 4; k++) {
          snprintf(key, sizeof key, "%s%s", pre, stage_key[k]);
          const double sm = csv_value(head, nhead, row, nrow, key);
          printf(" %s", isnan(sm) ? "-" : "");
          if (!isnan(sm)) printf("%.1fx", sm / (by[k] / (gbs * 1e9) * 1e3));
        }
        printf("\n");
        if (amg) { /* where the V-cycle's bytes go: the coarsest level's dense inverse, the values */
          double dense = 0;
          const double vc = cf_precond_amg_gpu_bytes(d, &dense);
          printf("%-10s %-13s %6s   V-cycle %.1f MB: the coarsest level's dense inverse %.1f MB, the other levels' "
                 "matrix values %.1f MB (half of them with amg_float)\n", "", "", "", vc / 1e6, dense / 1e6,
                 cf_precond_amg_value_bytes(d) / 1e6);
        }
      }
      cf_data_free(d);
      cf_model_free(m);
    }
    cf_mesh_free(&mesh);
  }
  fclose(f);
  return nbad ? 1 : 0;
}

int main(int argc, char** argv) {
  const char* label = "local";
  const char* meshes = NULL; /* --meshes DIR */
  const char* out = NULL;    /* --out DIR */
  const char* backend = "cpu";
  int steps = 40, big = 0, fam = 0, no_cold = 0, no_amg = 0, amg_f32 = 0, amg_only = 0;
  double gpu_gbs = 3000;
  const char* only = NULL; /* --case NAME: run that case alone */
  const char* amg_skip = ""; /* --amg-skip LIST */
  const char* scene_path = NULL; /* --scene FILE */
  const char* budget_csv = NULL; /* --budget CSV */
  Case user = {"mesh", NULL, 0, 0, 0, NULL, NULL, {0, 0, 0}, NULL}; /* --mesh FILE --fixed --load --force */
  static const char* const backends[] = {"cpu", "cuda", "auto", NULL};
  int threads = 0, b = 0;
  for (int i = 1; i < argc; i++) {
    /* strict values (cf_parse_*, cofem/status.h): the whole text, in range */
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int st = CF_OK;
    if (!strcmp(a, "--big")) { big = 1; continue; }
    if (!strcmp(a, "--family")) { fam = 1; continue; }
    if (!strcmp(a, "--no-cold")) { no_cold = 1; continue; }
    if (!strcmp(a, "--no-amg")) { no_amg = 1; continue; }
    if (!strcmp(a, "--amg-f32")) { amg_f32 = 1; continue; }
    if (!strcmp(a, "--amg-only")) { amg_only = 1; continue; }
    if (!strcmp(a, "--kernel-times")) { g_kernel_times = 1; continue; }
    if (!strcmp(a, "--step-graph")) { g_step_graph = 1; continue; }
    if (!strcmp(a, "--spmv-warp")) { g_spmv_warp = 1; continue; }
    if (v && !strcmp(a, "--label")) label = v;
    else if (v && !strcmp(a, "--steps")) st = cf_parse_int(a, v, 1, 100000000, &steps);
    else if (v && !strcmp(a, "--threads")) st = cf_parse_int(a, v, 1, 1024, &threads);
    else if (v && !strcmp(a, "--warmup")) st = cf_parse_int(a, v, 0, 1000, &g_warmup);
    else if (v && !strcmp(a, "--gpu-gbs")) st = cf_parse_double(a, v, 1, 1e6, &gpu_gbs);
    else if (v && !strcmp(a, "--backend")) st = cf_parse_choice(a, v, backends, &b), backend = backends[b];
    else if (v && !strcmp(a, "--case")) only = v;
    else if (v && !strcmp(a, "--amg-skip")) amg_skip = v;
    else if (v && !strcmp(a, "--meshes")) meshes = v;
    else if (v && !strcmp(a, "--out")) out = v;
    else if (v && !strcmp(a, "--scene")) scene_path = v;
    else if (v && !strcmp(a, "--budget")) budget_csv = v;
    else if (v && !strcmp(a, "--mesh")) user.mesh = v;
    else if (v && !strcmp(a, "--fixed")) user.fixed = v;
    else if (v && !strcmp(a, "--load")) user.load = v;
    else if (v && !strcmp(a, "--force")) {
      char buf[256], *save = NULL;
      snprintf(buf, sizeof buf, "%s", v);
      char* tok = strtok_r(buf, ",", &save);
      for (int k = 0; k < 3 && st >= 0; k++, tok = strtok_r(NULL, ",", &save))
        st = tok ? cf_parse_double(a, tok, -1e15, 1e15, &user.force[k])
                 : cf_error(CF_ERR_ARG, "%s: three components FX,FY,FZ [N]", a);
      if (st >= 0 && tok) st = cf_error(CF_ERR_ARG, "%s: three components FX,FY,FZ [N]", a);
    } else {
      fprintf(stderr, "usage: cofem_bench [--label NAME] [--steps N] [--threads T] [--backend cpu|cuda|auto] [--big] [--family] [--case NAME] [--meshes DIR] [--out DIR] [--warmup N] [--no-cold] [--no-amg] [--amg-skip LIST] [--amg-f32] [--amg-only] [--gpu-gbs GBS] [--kernel-times] [--step-graph] [--spmv-warp] [--budget CSV] [--scene FILE | --mesh FILE --fixed SET --load SET --force FX,FY,FZ]\n");
      return 2;
    }
    if (st < 0) {
      fprintf(stderr, "cofem_bench: %s\n", cf_last_error());
      return 2;
    }
    i++;
  }
  if (threads > 0) omp_set_num_threads(threads);
  if (user.mesh && (!user.fixed || !user.load || scene_path)) {
    fprintf(stderr, "cofem_bench: --mesh needs --fixed SET and --load SET (and --force), and excludes --scene\n");
    return 2;
  }
  cfScene scene;
  memset(&scene, 0, sizeof scene);
  if (scene_path) {
    if (cf_scene_load(scene_path, &scene) < 0) {
      fprintf(stderr, "cofem_bench: %s\n", cf_last_error());
      return 2;
    }
    user.name = "scene";
    user.scene = &scene;
  }
  const int user_case = scene_path || user.mesh;
  const Case cases[] = {
      {"lug", "lug.msh", 0, 0, 0, "support", "load", {5e6, 0, 0}, NULL},
      {"hinge", "hinge.msh", 0, 0, 0, "support", "load", {0, 0, -2e4}, NULL},
      {"beam_1.4k", NULL, 25, 3, 3, "xmin", "xmax", {0, 0, -525e3}, NULL},
      {"beam_3.4k", NULL, 35, 4, 4, "xmin", "xmax", {0, 0, -525e3}, NULL},
      {"beam_20k", NULL, 60, 7, 8, "xmin", "xmax", {0, 0, -525e3}, NULL},
      {"beam_100k", NULL, 100, 13, 13, "xmin", "xmax", {0, 0, -525e3}, NULL},
  };
  const Case family[] = {
      {"lug_10k", "cache/lug_10k.msh", 0, 0, 0, "support", "load", {5e6, 0, 0}, NULL},
      {"lug_100k", "cache/lug_100k.msh", 0, 0, 0, "support", "load", {5e6, 0, 0}, NULL},
      {"lug_1m", "cache/lug_1m.msh", 0, 0, 0, "support", "load", {5e6, 0, 0}, NULL},
      {"hinge_10k", "cache/hinge_10k.msh", 0, 0, 0, "support", "load", {0, 0, -2e4}, NULL},
      {"hinge_100k", "cache/hinge_100k.msh", 0, 0, 0, "support", "load", {0, 0, -2e4}, NULL},
      {"hinge_1m", "cache/hinge_1m.msh", 0, 0, 0, "support", "load", {0, 0, -2e4}, NULL},
  };
  char data_meshes[4096];
  snprintf(data_meshes, sizeof data_meshes, "%s/meshes", cf_data_dir());
  if (!meshes) meshes = is_dir("meshes") ? "meshes" : data_meshes;
  if (budget_csv) {
    Case all[sizeof cases / sizeof cases[0] + sizeof family / sizeof family[0]];
    const int nc = (int)(sizeof cases / sizeof cases[0]), nf = (int)(sizeof family / sizeof family[0]);
    memcpy(all, cases, sizeof cases);
    memcpy(all + nc, family, sizeof family);
    return budget_of_run(budget_csv, all, nc + nf, meshes, gpu_gbs);
  }
  const int ncase_base = user_case ? 1 : big ? 6 : 5;
  const int ncase = user_case ? 1 : ncase_base + (fam ? (big ? 6 : 4) : 0);
  char dir[1024];
  if (out) snprintf(dir, sizeof dir, "%s", out);
  else snprintf(dir, sizeof dir, "perf/results/%s", label);
  if (make_dirs(dir) < 0) {
    fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  char csv_path[1100];
  snprintf(csv_path, sizeof csv_path, "%s/bench.csv", dir);
  FILE* csv = fopen(csv_path, "w");
  if (!csv) {
    fprintf(stderr, "cannot write %s: %s\n", csv_path, strerror(errno));
    return 1;
  }
  fprintf(csv, "case,backend,threads,nodes,elements,dofs,ms_per_step_median,ms_per_step_min,realtime_ratio,"
               "pcg_iters_warm,pcg_iters_cold,rotchol_ms_per_step,rotchol_pcg_iters,polar_ms,assemble_ms,pcg_ms,"
               "update_ms,transfer_ms,rotchol_polar_ms,rotchol_assemble_ms,rotchol_pcg_ms,rotchol_update_ms,cpu_ms_per_step_median,"
               "rotchol_cpu_ms_per_step,pcg_bytes_per_iter,pcg_gb_per_s,ms_per_step_mean,rotchol_ms_per_step_mean,"
               "setup_model_ms,setup_data_ms,setup_backend_ms,rotchol_setup_data_ms,dt_ms,amg_ms_per_step,amg_pcg_iters,"
               "amg_ms_per_step_mean,amg_cpu_ms_per_step,amg_setup_data_ms,amg_setup_hierarchy_ms,amg_bytes_per_vcycle,"
               "amg_op_complexity,amg_pcg_ms,gpu_est_bj_ms,gpu_est_amg_ms,amg_f32_ms_per_step,amg_f32_pcg_iters,amg_f32_pcg_ms,"
               "amg_f32_bytes_per_vcycle,gpu_bytes_elem,gpu_bytes_pcg,gpu_bytes_step,amg_gpu_bytes_elem,amg_gpu_bytes_pcg,"
               "amg_gpu_bytes_step,amg_polar_ms,amg_assemble_ms,amg_update_ms,sg_ms_per_step,amg_sg_ms_per_step,warp_ms_per_step,"
               "warp_pcg_ms,amg_warp_ms_per_step,amg_warp_pcg_ms\n");
  if (scene_path)
    printf("cofem_bench: backend %s, %d threads, %d steps after %d warm-up, scene %s (its dt %g s, PCG tol %g, loads)\n",
           backend, omp_get_max_threads(), steps, g_warmup, scene_path, scene.def.dt, scene.def.pcg_tol);
  else
    printf("cofem_bench: backend %s, %d threads, %d steps after %d warm-up, dt 0.01 s, PCG block-Jacobi tol 1e-6; "
           "meshes from %s\n", backend, omp_get_max_threads(), steps, g_warmup, user.mesh ? "--mesh" : meshes);
  printf("ms/step: the median over the timed steps (the mean on the line below); x real = dt / median\n");
  printf("%-10s %6s %7s %7s | %8s %7s %8s %8s | %7s %7s %7s | %6s %8s %6s %6s\n", "", "", "", "",
         "block-Jacobi PCG", "", "", "", "rotated-Cholesky", "", "", "stage ms (block-Jacobi)", "", "", "");
  printf("%-10s %6s %7s %7s | %8s %7s %8s %8s | %7s %7s %7s | %6s %8s %6s %6s\n", "case", "nodes", "elems", "DOFs",
         "ms/step", "x real", "it warm", "it cold", "ms/step", "x real", "it", "polar", "assemble", "pcg", "update");
  int nfailed = 0;
  for (int i = 0; i < ncase; i++) {
    const Case* c = user_case ? &user
                    : i < ncase_base ? &cases[i] : &family[big ? i - ncase_base : (int[]){0, 1, 3, 4}[i - ncase_base]];
    if (only && !user_case && strcmp(only, c->name)) continue;
    cfMesh mesh;
    char path[4200];
    if (c->mesh) snprintf(path, sizeof path, "%s/%s", meshes, c->mesh);
    if (c == &user && c->mesh) snprintf(path, sizeof path, "%s", c->mesh); /* as given */
    int st = CF_OK;
    if (c->scene)
      mesh = c->scene->mesh; /* the scene's; freed with the scene */
    else
      st = c->mesh ? cf_mesh_read(path, &mesh) : cf_mesh_box(c->nx, c->ny, c->nz, 1.0, 0.1, 0.1, &mesh);
    const double dt_ms = 1e3 * (c->scene ? c->scene->def.dt : cf_default_model_def().dt);
    if (st < 0) {
      printf("%-10s skipped: %s\n", c->name, cf_last_error());
      nfailed++;
      continue;
    }
    Result warm, cold, rc, amg;
    if (amg_only) { /* the block-Jacobi and rotated-Cholesky runs left out: their columns nan */
      memset(&warm, 0, sizeof warm);
      warm.ms_median = warm.ms_min = warm.ms_mean = warm.cpu_ms_median = warm.iters = NAN;
      warm.sg_ms_median = warm.sg_iters = warm.warp_ms_median = warm.warp_pcg_ms = NAN;
      for (int k = 0; k < 3; k++) warm.setup_ms[k] = NAN;
      for (int k = 0; k < CF_STAGE_COUNT; k++) warm.stage_ms[k] = NAN;
    } else {
      st = run(&mesh, c, 1, CF_PRECOND_BLOCK_JACOBI, steps, backend, &warm, NULL, NULL);
    }
    cold.iters = cold.ms_mean = NAN;
    if (st >= 0 && !no_cold && !amg_only) st = run(&mesh, c, 0, CF_PRECOND_BLOCK_JACOBI, steps, backend, &cold, NULL, NULL);
    rc.ms_median = NAN;
    rc.ms_mean = NAN;
    for (int k = 0; k < 3; k++) rc.setup_ms[k] = NAN;
    rc.cpu_ms_median = NAN;
    rc.iters = NAN;
    if (st >= 0 && !amg_only && !strcmp(backend, "cpu") && mesh.ntet <= 200000)
      st = run(&mesh, c, 1, CF_PRECOND_ROTATED_CHOLESKY, steps, backend, &rc, NULL, NULL);
    amg.ms_median = amg.ms_mean = amg.cpu_ms_median = amg.iters = amg.amg_bytes = amg.amg_opc = NAN;
    amg.sg_ms_median = amg.sg_iters = amg.warp_ms_median = amg.warp_pcg_ms = NAN;
    amg.amg_setup_ms = amg.setup_ms[1] = amg.stage_ms[CF_STAGE_PCG] = NAN;
    for (int k = 0; k < CF_STAGE_COUNT; k++) amg.stage_ms[k] = NAN;
    /* AMG on the CPU and, since the GPU runs it too (kernels/fem_cuda_amg.cu), on the GPU; its
     * failure leaves the block-Jacobi row standing */
    /* --amg-f32: the float V-cycle right after, on the same hierarchy; its failure (or a
     * backend that fell back to the CPU) leaves its columns nan and the others standing */
    Result a32;
    a32.ms_median = a32.ms_mean = a32.iters = a32.stage_ms[CF_STAGE_PCG] = NAN;
    int st32 = CF_OK;
    if (st >= 0 && !no_amg && !in_list(amg_skip, c->name)) {
      int sa = run(&mesh, c, 1, CF_PRECOND_AMG, steps, backend, &amg, amg_f32 ? &a32 : NULL, &st32);
      if (st32 < 0) {
        printf("%-10s AMG float failed: %s\n", c->name, cf_last_error());
        a32.ms_median = a32.ms_mean = a32.iters = a32.stage_ms[CF_STAGE_PCG] = NAN;
        nfailed++;
      }
      if (sa < 0) {
        printf("%-10s AMG failed: %s\n", c->name, cf_last_error());
        amg.ms_median = amg.ms_mean = amg.cpu_ms_median = amg.iters = amg.amg_bytes = amg.amg_opc = NAN;
    amg.sg_ms_median = amg.sg_iters = amg.warp_ms_median = amg.warp_pcg_ms = NAN;
        amg.amg_setup_ms = amg.setup_ms[1] = NAN;
        for (int k = 0; k < CF_STAGE_COUNT; k++) amg.stage_ms[k] = NAN;
        nfailed++;
      }
    }
    /* --amg-only: the PCG's own bytes per iteration (the AMG's figures add to them) from the model */
    if (amg_only) warm.pcg_bytes = isnan(amg.ms_median) ? NAN : amg.pcg_bytes;
    if (st < 0) {
      printf("%-10s failed: %s\n", c->name, cf_last_error());
      if (!c->scene) cf_mesh_free(&mesh);
      nfailed++;
      continue;
    }
    printf("%-10s %6d %7d %7d | %8.3f %7.2f %8.1f %8.1f | %7.3f %7.2f %7.1f | %6.3f %8.3f %6.3f %6.3f\n", c->name,
           mesh.nnode, mesh.ntet, 3 * mesh.nnode, warm.ms_median, dt_ms / warm.ms_median, warm.iters, cold.iters,
           rc.ms_median, dt_ms / rc.ms_median, rc.iters, warm.stage_ms[0], warm.stage_ms[1], warm.stage_ms[2],
           warm.stage_ms[3]);
    printf("%-10s mean ms/step: block-Jacobi %.3f (cold %.3f)", "", warm.ms_mean, cold.ms_mean);
    if (!isnan(rc.ms_median)) printf(", rotated-Cholesky %.3f", rc.ms_mean);
    printf("; setup ms (model, data, backend): block-Jacobi %.1f %.1f %.1f", warm.setup_ms[0], warm.setup_ms[1],
           warm.setup_ms[2]);
    if (!isnan(rc.ms_median))
      printf(", rotated-Cholesky %.1f %.1f (factorisation) %.1f", rc.setup_ms[0], rc.setup_ms[1], rc.setup_ms[2]);
    printf("\n");
    printf("%-10s CPU time of the stepping thread, median ms/step: block-Jacobi %.3f", "", warm.cpu_ms_median);
    if (!isnan(rc.cpu_ms_median)) printf(", rotated-Cholesky %.3f", rc.cpu_ms_median);
    printf("\n");
    const double gbs = warm.iters > 0 && warm.stage_ms[CF_STAGE_PCG] > 0
                           ? warm.pcg_bytes * warm.iters / (1e-3 * warm.stage_ms[CF_STAGE_PCG]) / 1e9
                           : NAN;
    printf("%-10s PCG: %.1f MB per iteration (GPU kernels' minimum), %.3f ms per iteration, %.1f GB/s\n", "",
           warm.pcg_bytes / 1e6, warm.iters > 0 ? warm.stage_ms[CF_STAGE_PCG] / warm.iters : NAN, gbs);
    if (!isnan(rc.ms_median))
      printf("%-10s %-56s rotated-Cholesky stages | %6.3f %8.3f %6.3f %6.3f\n", "", "", rc.stage_ms[0],
             rc.stage_ms[1], rc.stage_ms[2], rc.stage_ms[3]);
    else {
      for (int s = 0; s < CF_STAGE_COUNT; s++) rc.stage_ms[s] = NAN;
      if (!strcmp(backend, "cpu") && !amg_only) printf("%-10s rotated-Cholesky not run above 200k tetrahedra (its sparse factor)\n", "");
    }
    /* the GPU's PCG time per step these iteration counts imply at gpu_gbs (an estimate) */
    const double est_bj = warm.iters * warm.pcg_bytes / (gpu_gbs * 1e9) * 1e3;
    const double amg_it_bytes = warm.pcg_bytes + amg.amg_bytes + amg_rotation_bytes(mesh.nnode);
    const double est_amg = amg.iters * amg_it_bytes / (gpu_gbs * 1e9) * 1e3;
    /* the float V-cycle's bytes: the double count less half of its values' (nan without it) */
    const double a32_bytes = isnan(a32.ms_median) ? NAN : amg.amg_bytes - 0.5 * amg.amg_value_bytes;
    if (!isnan(amg.ms_median)) {
      printf("%-10s AMG: %.3f ms/step (mean %.3f, thread CPU %.3f), %.1f PCG it/step (block-Jacobi %.1f: %.1fx fewer), "
             "%.1fx block-Jacobi's speed; PCG stage %.3f ms/step, %.0f GB/s\n", "", amg.ms_median, amg.ms_mean,
             amg.cpu_ms_median, amg.iters, warm.iters, warm.iters / amg.iters, warm.ms_median / amg.ms_median,
             amg.stage_ms[CF_STAGE_PCG],
             amg.stage_ms[CF_STAGE_PCG] > 0 ? amg.iters * amg_it_bytes / (1e-3 * amg.stage_ms[CF_STAGE_PCG]) / 1e9 : NAN);
      printf("%-10s AMG setup: data %.1f ms, of which the hierarchies %.1f ms; operator complexity %.2f; %.1f MB per "
             "V-cycle, %.1f MB per PCG iteration with it (block-Jacobi %.1f)\n", "", amg.setup_ms[1], amg.amg_setup_ms,
             amg.amg_opc, amg.amg_bytes / 1e6, amg_it_bytes / 1e6, warm.pcg_bytes / 1e6);
      printf("%-10s estimated GPU PCG ms/step at %.0f GB/s (bytes x iterations): block-Jacobi %.2f, AMG %.2f\n", "",
             gpu_gbs, est_bj, est_amg);
      if (!isnan(a32.ms_median))
        printf("%-10s AMG float (amg_float): %.3f ms/step (mean %.3f), %.1f PCG it/step (double %.1f); PCG stage %.3f "
               "ms/step (double %.3f), %.0f GB/s; %.1f MB per V-cycle (double %.1f)\n", "", a32.ms_median, a32.ms_mean,
               a32.iters, amg.iters, a32.stage_ms[CF_STAGE_PCG], amg.stage_ms[CF_STAGE_PCG],
               a32.stage_ms[CF_STAGE_PCG] > 0
                   ? a32.iters * (a32_bytes + warm.pcg_bytes + amg_rotation_bytes(mesh.nnode)) /
                         (1e-3 * a32.stage_ms[CF_STAGE_PCG]) / 1e9
                   : NAN,
               a32_bytes / 1e6, amg.amg_bytes / 1e6);
      const char* q = amg.amg_desc;
      while (*q) { /* the hierarchy, one line per level */
        const char* e = strchr(q, '\n');
        const int len = e ? (int)(e - q) : (int)strlen(q);
        printf("%-10s   AMG %.*s\n", "", len, q);
        q += len + (e ? 1 : 0);
      }
    }
    /* the GPU step's byte budget (gpu_step_bytes), measured against on the GPU */
    const int on_gpu = !strcmp(backend, "cuda");
    print_budget("block-Jacobi", &warm, gpu_gbs, on_gpu);
    print_budget("AMG", &amg, gpu_gbs, on_gpu);
    print_kernel_times("block-Jacobi", &warm, gpu_gbs);
    print_kernel_times("AMG", &amg, gpu_gbs);
    if (g_spmv_warp && on_gpu) {
      const double bj_b = warm.gpu.pcg_fixed + warm.iters * warm.gpu.per_iter;
      const double am_b = amg.gpu.pcg_fixed + amg.iters * amg.gpu.per_iter;
      printf("%-10s warp-per-row SpMV: block-Jacobi %.3f ms/step, PCG %.3f ms (%.0f GB/s; a thread per row %.3f ms, "
             "%.0f GB/s); AMG %.3f ms/step, PCG %.3f ms (%.0f GB/s; a thread per row %.3f ms, %.0f GB/s)\n", "",
             warm.warp_ms_median, warm.warp_pcg_ms, bj_b / (1e-3 * warm.warp_pcg_ms) / 1e9,
             warm.stage_ms[CF_STAGE_PCG], bj_b / (1e-3 * warm.stage_ms[CF_STAGE_PCG]) / 1e9, amg.warp_ms_median,
             amg.warp_pcg_ms, am_b / (1e-3 * amg.warp_pcg_ms) / 1e9, amg.stage_ms[CF_STAGE_PCG],
             am_b / (1e-3 * amg.stage_ms[CF_STAGE_PCG]) / 1e9);
    }
    if (g_step_graph && on_gpu)
      printf("%-10s one graph per step (step_graph): block-Jacobi %.3f ms/step (%.1f it; batched %.3f: %.2fx), "
             "AMG %.3f ms/step (%.1f it; batched %.3f: %.2fx)\n", "", warm.sg_ms_median, warm.sg_iters,
             warm.ms_median, warm.ms_median / warm.sg_ms_median, amg.sg_ms_median, amg.sg_iters, amg.ms_median,
             amg.ms_median / amg.sg_ms_median);
    const double nan_ = NAN;
    const double bj_b[3] = {isnan(warm.iters) ? nan_ : warm.gpu.polar + warm.gpu.assemble + warm.gpu.update,
                            isnan(warm.iters) ? nan_ : warm.gpu.pcg_fixed + warm.iters * warm.gpu.per_iter,
                            isnan(warm.iters) ? nan_ : step_bytes_total(&warm.gpu, warm.iters)};
    const double am_b[3] = {isnan(amg.iters) ? nan_ : amg.gpu.polar + amg.gpu.assemble + amg.gpu.update,
                            isnan(amg.iters) ? nan_ : amg.gpu.pcg_fixed + amg.iters * amg.gpu.per_iter,
                            isnan(amg.iters) ? nan_ : step_bytes_total(&amg.gpu, amg.iters)};
    fprintf(csv, "%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.3f,%.1f,%.1f,%.4f,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.0f,%.2f,%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,%g,"
                 "%.4f,%.1f,%.4f,%.4f,%.2f,%.2f,%.0f,%.3f,%.4f,%.3f,%.3f,%.4f,%.1f,%.4f,%.0f,"
                 "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
            c->name, backend, omp_get_max_threads(), mesh.nnode, mesh.ntet, 3 * mesh.nnode, warm.ms_median,
            warm.ms_min, dt_ms / warm.ms_median, warm.iters, cold.iters, rc.ms_median, rc.iters, warm.stage_ms[0],
            warm.stage_ms[1], warm.stage_ms[2], warm.stage_ms[3], warm.stage_ms[4], rc.stage_ms[0], rc.stage_ms[1],
            rc.stage_ms[2], rc.stage_ms[3], warm.cpu_ms_median, rc.cpu_ms_median, warm.pcg_bytes, gbs,
            warm.ms_mean, rc.ms_mean, warm.setup_ms[0], warm.setup_ms[1], warm.setup_ms[2], rc.setup_ms[1], dt_ms,
            amg.ms_median, amg.iters, amg.ms_mean, amg.cpu_ms_median, amg.setup_ms[1], amg.amg_setup_ms, amg.amg_bytes,
            amg.amg_opc, amg.stage_ms[CF_STAGE_PCG], est_bj, est_amg, a32.ms_median, a32.iters, a32.stage_ms[CF_STAGE_PCG],
            a32_bytes, bj_b[0], bj_b[1], bj_b[2], am_b[0], am_b[1], am_b[2], amg.stage_ms[CF_STAGE_POLAR],
            amg.stage_ms[CF_STAGE_ASSEMBLE], amg.stage_ms[CF_STAGE_UPDATE], warm.sg_ms_median, amg.sg_ms_median,
            warm.warp_ms_median, warm.warp_pcg_ms, amg.warp_ms_median, amg.warp_pcg_ms);
    fflush(csv); /* a run stopped by a time limit keeps the rows it finished */
    if (!c->scene) cf_mesh_free(&mesh);
  }
  fclose(csv);
  if (scene_path) cf_scene_free(&scene);
  printf("wrote %s\n", csv_path);
  if (nfailed) fprintf(stderr, "cofem_bench: %d case(s) skipped or failed\n", nfailed);
  return nfailed ? 1 : 0;
}
