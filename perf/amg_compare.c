/* cofem's AMG preconditioner (host/fem/fem_amg.c: smoothed aggregation, set up once at rest and
 * rotated by the node rotations) against hypre's BoomerAMG on the same linear systems.
 *   cofem_amg_compare [--steps N] [--threads T] [--out DIR] MESH...
 * Each MESH (a lug of the refinement family: node sets "support" and "load") is clamped at
 * "support" and pulled at "load" with 5 MN along x, ramped over the first half of the steps (the
 * bench's lug case), backward Euler, dt 0.01 s. Every step forms the system A v = b of cf_step
 * (polar, K_R, A, b: cf_stage_*), then solves it three times from the same start (the velocities
 * of the step before, as the warm start of paper 003) to the same stopping rule (|r| <=
 * 1e-6 max(|b|, b_scale), cofem's):
 *   cofem AMG      PCG with P^-1 = Q AMG(A0) Q^T, the hierarchy built once in cf_data_create;
 *   hypre, setup every step   PCG + one BoomerAMG V-cycle, the hierarchy built for this A;
 *   hypre, setup once          the same, built for the first step's A and kept (its fine level
 *                              uses the current A: hypre's solve takes the matrix it is given);
 * and advances with cofem's velocities. Prints and writes <out>/amg_compare.csv: PCG iterations
 * per step and milliseconds per step (solve; the setup apart), means over the steps.
 * BoomerAMG settings, hypre's recommendations for 3D elasticity (its manual, "systems"): 3
 * functions per node (unknown approach), strong threshold 0.5, HMIS coarsening, extended+i
 * interpolation with at most 4 entries per row, l1-Gauss-Seidel (forward/backward: symmetric)
 * smoothing, one V-cycle per PCG iteration. hypre is linked sequential here (one MPI rank).
 * Built only when CMake finds hypre and MPI (Debian: libhypre-dev); otherwise not at all. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "HYPRE.h"
#include "HYPRE_IJ_mv.h"
#include "HYPRE_parcsr_ls.h"
#include "cofem/cofem.h"

typedef struct Hyp {
  HYPRE_IJMatrix A;
  HYPRE_ParCSRMatrix pA;
  HYPRE_IJVector b, x;
  HYPRE_ParVector pb, px;
  HYPRE_Solver pcg, amg;
  int have_solver;
} Hyp;

/* A in hypre's IJ form: the model's blocks, fixed DOFs as identity rows and columns */
static void hyp_matrix(const cfModel* m, const cfData* d, Hyp* h) {
  const int n = m->ndof;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, n - 1, 0, n - 1, &h->A);
  HYPRE_IJMatrixSetObjectType(h->A, HYPRE_PARCSR);
  int* sizes = malloc(sizeof(int) * n);
  int maxrow = 1;
  for (int i = 0; i < m->nnode; i++)
    for (int r = 0; r < 3; r++) {
      sizes[3 * i + r] = 3 * (m->row_ptr[i + 1] - m->row_ptr[i]);
      if (sizes[3 * i + r] > maxrow) maxrow = sizes[3 * i + r];
    }
  HYPRE_IJMatrixSetRowSizes(h->A, sizes);
  HYPRE_IJMatrixInitialize(h->A);
  int* cols = malloc(sizeof(int) * maxrow);
  double* vals = malloc(sizeof(double) * maxrow);
  for (int i = 0; i < m->nnode; i++)
    for (int r = 0; r < 3; r++) {
      const int gi = 3 * i + r;
      int nc = 0;
      for (int k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++)
        for (int c = 0; c < 3; c++) {
          const int gj = 3 * m->col[k] + c;
          double v = d->A[9 * (size_t)k + 3 * r + c];
          if (d->supports_active && (m->fixed[gi] || m->fixed[gj])) v = gi == gj ? 1.0 : 0.0;
          cols[nc] = gj, vals[nc] = v, nc++;
        }
      HYPRE_IJMatrixSetValues(h->A, 1, &nc, &gi, cols, vals);
    }
  HYPRE_IJMatrixAssemble(h->A);
  HYPRE_IJMatrixGetObject(h->A, (void**)&h->pA);
  free(sizes);
  free(cols);
  free(vals);
}

static void hyp_vector(int n, const double* v, HYPRE_IJVector* iv, HYPRE_ParVector* pv) {
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, n - 1, iv);
  HYPRE_IJVectorSetObjectType(*iv, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(*iv);
  int* idx = malloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) idx[i] = i;
  HYPRE_IJVectorSetValues(*iv, n, idx, v);
  HYPRE_IJVectorAssemble(*iv);
  HYPRE_IJVectorGetObject(*iv, (void**)pv);
  free(idx);
}

static void hyp_solver(Hyp* h, double abs_tol) {
  HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &h->pcg);
  HYPRE_PCGSetMaxIter(h->pcg, 5000);
  HYPRE_PCGSetTol(h->pcg, 0.0);
  HYPRE_PCGSetAbsoluteTol(h->pcg, abs_tol);
  HYPRE_PCGSetTwoNorm(h->pcg, 1);
  HYPRE_PCGSetPrintLevel(h->pcg, 0);
  HYPRE_BoomerAMGCreate(&h->amg);
  HYPRE_BoomerAMGSetNumFunctions(h->amg, 3);
  HYPRE_BoomerAMGSetStrongThreshold(h->amg, 0.5);
  HYPRE_BoomerAMGSetCoarsenType(h->amg, 10); /* HMIS */
  HYPRE_BoomerAMGSetInterpType(h->amg, 6);   /* extended+i */
  HYPRE_BoomerAMGSetPMaxElmts(h->amg, 4);
  HYPRE_BoomerAMGSetRelaxType(h->amg, 8);    /* l1-Gauss-Seidel, symmetric */
  HYPRE_BoomerAMGSetNumSweeps(h->amg, 1);
  HYPRE_BoomerAMGSetMaxIter(h->amg, 1);
  HYPRE_BoomerAMGSetTol(h->amg, 0.0);
  HYPRE_BoomerAMGSetPrintLevel(h->amg, 0);
  HYPRE_PCGSetPrecond(h->pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup,
                      h->amg);
  h->have_solver = 1;
}

static void hyp_free_solver(Hyp* h) {
  if (!h->have_solver) return;
  HYPRE_ParCSRPCGDestroy(h->pcg);
  HYPRE_BoomerAMGDestroy(h->amg);
  h->have_solver = 0;
}

static int is_dir(const char* path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

typedef struct Acc {
  double it, ms, setup_ms;
} Acc;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  HYPRE_Init();
  int steps = 6, threads = 1, nmesh = 0;
  const char* out = "perf/results/local";
  const char* meshes[16];
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--steps")) steps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--threads")) threads = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--out")) out = argv[++i];
    else if (argv[i][0] != '-' && nmesh < 16) meshes[nmesh++] = argv[i];
    else {
      fprintf(stderr, "usage: cofem_amg_compare [--steps N] [--threads T] [--out DIR] MESH...\n");
      return 2;
    }
  }
  if (steps < 1 || threads < 1 || nmesh == 0) {
    fprintf(stderr, "usage: cofem_amg_compare [--steps N >= 1] [--threads T >= 1] [--out DIR] MESH...\n");
    return 2;
  }
  char csv_path[1200];
  snprintf(csv_path, sizeof csv_path, "%s/amg_compare.csv", out);
  FILE* csv = is_dir(out) ? fopen(csv_path, "w") : NULL;
  if (!csv) {
    fprintf(stderr, "cannot write %s (the folder must exist)\n", csv_path);
    return 1;
  }
  fprintf(csv, "mesh,nodes,elements,dofs,steps,cofem_it,cofem_ms,cofem_setup_ms,hypre_every_it,hypre_every_ms,"
               "hypre_every_setup_ms,hypre_once_it,hypre_once_ms,hypre_once_setup_ms\n");
  printf("cofem_amg_compare: %d steps per mesh, %d thread(s) for cofem, hypre %s sequential (one MPI rank); "
         "PCG to |r| <= 1e-6 max(|b|, b_scale), from the last step's velocities\n",
         steps, threads, HYPRE_RELEASE_VERSION);
  printf("%-32s %8s | %-26s | %-34s | %-30s\n", "", "", "cofem AMG (set up once)", "hypre BoomerAMG, setup every step",
         "hypre BoomerAMG, setup once");
  printf("%-32s %8s | %6s %9s %9s | %6s %9s %9s %7s | %6s %9s %9s\n", "mesh", "elements", "it", "ms/step", "setup ms",
         "it", "ms/step", "setup ms", "total", "it", "ms/step", "setup ms");
  int rc = 0;
  for (int k = 0; k < nmesh; k++) {
    cfMesh mesh;
    if (cf_mesh_read(meshes[k], &mesh) < 0) {
      printf("%s: %s\n", meshes[k], cf_last_error());
      rc = 1;
      continue;
    }
    cfModelDef def = cf_default_model_def();
    def.preconditioner = CF_PRECOND_AMG;
    def.threads = threads;
    def.pcg_max_iter = 5000;
    def.divergence_check = 0;
    cfModel* m = NULL;
    cfData* d = NULL;
    const cfNodeSet* fix = cf_mesh_find_nset(&mesh, "support");
    const cfNodeSet* load = cf_mesh_find_nset(&mesh, "load");
    int st = fix && load ? cf_model_create(&mesh, &def, &m) : cf_error(CF_ERR_ARG, "sets support/load missing");
    if (st >= 0) st = cf_model_fix_nodes(m, fix->nodes, fix->count, 7);
    const double t0 = cf_wall_time();
    if (st >= 0) st = cf_data_create(m, &d);
    const double cofem_setup = 1e3 * (cf_wall_time() - t0);
    if (st < 0) {
      printf("%s: %s\n", meshes[k], cf_last_error());
      cf_data_free(d);
      cf_model_free(m);
      cf_mesh_free(&mesh);
      rc = 1;
      continue;
    }
    const int n = m->ndof;
    double* v0 = malloc(sizeof(double) * n);
    Acc co = {0, 0, cofem_setup}, ev = {0, 0, 0}, on = {0, 0, 0};
    Hyp once = {0};
    for (int s = 0; s < steps && st >= 0; s++) {
      const double ramp = s < steps / 2 ? (double)(s + 1) / (steps / 2) : 1.0;
      memset(d->f_ext, 0, sizeof(double) * n);
      for (int i = 0; i < load->count; i++) d->f_ext[3 * load->nodes[i]] = ramp * 5e6 / load->count;
      cf_stage_polar(m, d);
      cf_stage_elastic(m, d);
      cf_stage_assemble_system(m, d, m->def.dt); /* A, b, b_scale; the node rotations */
      for (int i = 0; i < n; i++) v0[i] = m->fixed[i] ? 0.0 : d->v[i];
      double bb = 0;
      for (int i = 0; i < n; i++)
        if (!m->fixed[i]) bb += d->b[i] * d->b[i];
      const double abs_tol = m->def.pcg_tol * fmax(sqrt(bb), d->b_scale);
      double* b = malloc(sizeof(double) * n);
      for (int i = 0; i < n; i++) b[i] = m->fixed[i] ? 0.0 : d->b[i];
      /* hypre, a hierarchy for this A */
      Hyp ew = {0};
      hyp_matrix(m, d, &ew);
      hyp_vector(n, b, &ew.b, &ew.pb);
      hyp_vector(n, v0, &ew.x, &ew.px);
      hyp_solver(&ew, abs_tol);
      double w0 = cf_wall_time();
      HYPRE_ParCSRPCGSetup(ew.pcg, ew.pA, ew.pb, ew.px);
      double w1 = cf_wall_time();
      HYPRE_ParCSRPCGSolve(ew.pcg, ew.pA, ew.pb, ew.px);
      double w2 = cf_wall_time();
      int its = 0;
      HYPRE_PCGGetNumIterations(ew.pcg, &its);
      ev.it += its, ev.setup_ms += 1e3 * (w1 - w0), ev.ms += 1e3 * (w2 - w1);
      hyp_free_solver(&ew);
      /* hypre, the first step's hierarchy (its matrix kept alive with it) */
      Hyp cur = {0};
      hyp_matrix(m, d, &cur);
      hyp_vector(n, b, &cur.b, &cur.pb);
      hyp_vector(n, v0, &cur.x, &cur.px);
      if (s == 0) {
        once = cur;
        hyp_solver(&once, abs_tol);
        w0 = cf_wall_time();
        HYPRE_ParCSRPCGSetup(once.pcg, once.pA, once.pb, once.px);
        on.setup_ms += 1e3 * (cf_wall_time() - w0);
      } else {
        HYPRE_PCGSetAbsoluteTol(once.pcg, abs_tol);
      }
      w1 = cf_wall_time();
      HYPRE_ParCSRPCGSolve(once.pcg, cur.pA, cur.pb, cur.px);
      w2 = cf_wall_time();
      HYPRE_PCGGetNumIterations(once.pcg, &its);
      on.it += its, on.ms += 1e3 * (w2 - w1);
      /* cofem: the same system, the same start */
      memcpy(d->v, v0, sizeof(double) * n);
      w1 = cf_wall_time();
      st = cf_stage_pcg(m, d);
      w2 = cf_wall_time();
      co.it += d->pcg_iters, co.ms += 1e3 * (w2 - w1);
      /* the solutions agree (all three to the same tolerance) */
      double* xh = malloc(sizeof(double) * n);
      int* idx = malloc(sizeof(int) * n);
      for (int i = 0; i < n; i++) idx[i] = i;
      HYPRE_IJVectorGetValues(ew.x, n, idx, xh);
      double dv = 0, vn = 0;
      for (int i = 0; i < n; i++) dv = fmax(dv, fabs(xh[i] - d->v[i])), vn = fmax(vn, fabs(d->v[i]));
      if (s == steps - 1) printf("%-32s last step: max |v_hypre - v_cofem| = %.2e of max |v| %.2e\n", "", dv, vn);
      free(xh);
      free(idx);
      free(b);
      HYPRE_IJMatrixDestroy(ew.A);
      HYPRE_IJVectorDestroy(ew.b);
      HYPRE_IJVectorDestroy(ew.x);
      if (s > 0) {
        HYPRE_IJMatrixDestroy(cur.A);
        HYPRE_IJVectorDestroy(cur.b);
        HYPRE_IJVectorDestroy(cur.x);
      }
      if (st < 0) break;
      cf_stage_update(m, d, m->def.dt);
    }
    if (st < 0) {
      printf("%s: %s\n", meshes[k], cf_last_error());
      rc = 1;
    } else {
      const double S = steps;
      printf("%-32s %8d | %6.1f %9.2f %9.1f | %6.1f %9.2f %9.1f %7.1f | %6.1f %9.2f %9.1f\n", meshes[k], m->ntet,
             co.it / S, co.ms / S, co.setup_ms, ev.it / S, ev.ms / S, ev.setup_ms / S, (ev.ms + ev.setup_ms) / S,
             on.it / S, on.ms / S, on.setup_ms);
      fprintf(csv, "%s,%d,%d,%d,%d,%.2f,%.3f,%.1f,%.2f,%.3f,%.1f,%.2f,%.3f,%.1f\n", meshes[k], m->nnode, m->ntet, n,
              steps, co.it / S, co.ms / S, co.setup_ms, ev.it / S, ev.ms / S, ev.setup_ms / S, on.it / S, on.ms / S,
              on.setup_ms);
      fflush(csv);
    }
    hyp_free_solver(&once);
    if (once.A) {
      HYPRE_IJMatrixDestroy(once.A);
      HYPRE_IJVectorDestroy(once.b);
      HYPRE_IJVectorDestroy(once.x);
    }
    free(v0);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  fclose(csv);
  printf("ms/step: the PCG solve; setup ms: cofem's cf_data_create (both AMG hierarchies, with and without "
         "the supports), hypre's BoomerAMG setup (per step where it is set up every step; total: setup + solve)\n");
  printf("wrote %s\n", csv_path);
  HYPRE_Finalize();
  MPI_Finalize();
  return rc;
}
