/* cfModelDef.threads: the library runs its parallel regions on def.threads threads (0: OpenMP's
 * default, omp_get_max_threads), without changing the process-wide setting, and the results do
 * not depend on the count: a clamped beam large enough that every parallel loop is split (more
 * than 4096 nodes and tetrahedra) pulled at its tip for a few steps with 1, 2 and 3 threads,
 * block-Jacobi (assembled) and rotated-Cholesky (matrix-free) PCG, positions compared bit for bit.
 * The team size is read through the test hook cf_fem__last_team (host/fem/fem_parallel.h). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "fem/fem_parallel.h"

enum { STEPS = 2 };

/* STEPS pulled steps with def.threads = threads; x (ndof) out; *team: the hook after the steps */
static void run(const cfMesh* mesh, int precond, int threads, double* x, int* team) {
  cfModelDef def = cf_default_model_def();
  def.threads = threads;
  def.preconditioner = precond;
  def.pcg_max_iter = 30; /* not converged (a warning) on block Jacobi: enough to compare, and short */
  cfModel* m = NULL;
  cfData* d = NULL;
  CHECK_OK(cf_model_create(mesh, &def, &m));
  if (!m) return;
  const cfNodeSet* clamp = cf_mesh_find_nset(mesh, "xmin");
  const cfNodeSet* tip = cf_mesh_find_nset(mesh, "xmax");
  CHECK_OK(cf_model_fix_nodes(m, clamp->nodes, clamp->count, 7));
  CHECK_OK(cf_data_create(m, &d));
  cf_fem__last_team = 0;
  for (int k = 0; k < STEPS && d; k++) {
    memset(d->f_ext, 0, sizeof(double) * m->ndof);
    for (int i = 0; i < tip->count; i++) d->f_ext[3 * tip->nodes[i] + 2] = -4e3 / tip->count;
    CHECK_OK(cf_step(m, d));
  }
  *team = cf_fem__last_team;
  if (d) memcpy(x, d->x, sizeof(double) * m->ndof);
  cf_data_free(d);
  cf_model_free(m);
}

/* cf_default_threads (the programs' default: one thread on small parts) and cf_set_blas_threads
 * (OPENBLAS_NUM_THREADS wins) */
static void test_default_threads(void) {
  unsetenv("OMP_NUM_THREADS");
  unsetenv("OPENBLAS_NUM_THREADS");
  omp_set_num_threads(2); /* below CF_THREADS_MANY_CORES: the 2-core threshold */
  printf("default threads: 469 nodes -> %d, %d nodes -> %d (0: OpenMP's default)\n", cf_default_threads(469),
         CF_THREADS_MIN_NODES, cf_default_threads(CF_THREADS_MIN_NODES));
  CHECK(cf_default_threads_min_nodes() == CF_THREADS_MIN_NODES);
  CHECK(cf_default_threads(469) == 1);
  CHECK(cf_default_threads(CF_THREADS_MIN_NODES - 1) == 1);
  CHECK(cf_default_threads(CF_THREADS_MIN_NODES) == 0);
  omp_set_num_threads(CF_THREADS_MANY_CORES); /* many cores: the lower threshold */
  CHECK(cf_default_threads(CF_THREADS_MIN_NODES_MANY - 1) == 1);
  CHECK(cf_default_threads(CF_THREADS_MIN_NODES_MANY) == 0);
  omp_set_num_threads(1); /* one thread is all there is: nothing to choose */
  CHECK(cf_default_threads(469) == 0);
  omp_set_num_threads(2);
  setenv("OMP_NUM_THREADS", "2", 1); /* the user's count wins */
  CHECK(cf_default_threads(469) == 0);
  unsetenv("OMP_NUM_THREADS");
  cf_set_blas_threads(1);
  CHECK(cf_blas_threads() == 1);
  cf_set_blas_threads(2);
  int two = cf_blas_threads(); /* 2, or OpenBLAS's own cap of 1 on a 1-core machine */
  CHECK(two == (omp_get_num_procs() >= 2 ? 2 : 1));
  setenv("OPENBLAS_NUM_THREADS", "2", 1); /* the user's count wins: no change */
  cf_set_blas_threads(1);
  CHECK(cf_blas_threads() == two);
  unsetenv("OPENBLAS_NUM_THREADS");
}

int main(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(40, 10, 10, 1.0, 0.25, 0.25, &mesh));
  CHECK(mesh.nnode > 4096 && mesh.ntet > 4096);
  const int ndof = 3 * mesh.nnode;
  const int limit = omp_get_thread_limit();
  omp_set_num_threads(2);
  double* x1 = calloc((size_t)ndof, sizeof(double));
  double* xt = calloc((size_t)ndof, sizeof(double));
  const int pre[2] = {CF_PRECOND_BLOCK_JACOBI, CF_PRECOND_ROTATED_CHOLESKY};
  for (int p = 0; p < 2; p++) {
    int team;
    run(&mesh, pre[p], 1, x1, &team);
    printf("preconditioner %d, threads 1: last team %d\n", pre[p], team);
    CHECK(team == 0); /* one thread: no parallel region at all */
    for (int t = 2; t <= 3; t++) {
      run(&mesh, pre[p], t, xt, &team);
      const int want = t < limit ? t : limit;
      printf("preconditioner %d, threads %d: last team %d (thread limit %d)\n", pre[p], t, team, limit);
      CHECK(team == want);
      CHECK(memcmp(x1, xt, sizeof(double) * ndof) == 0);
    }
    /* threads 0: OpenMP's default, here the 2 set above */
    run(&mesh, pre[p], 0, xt, &team);
    CHECK(team == (2 < limit ? 2 : limit));
    CHECK(memcmp(x1, xt, sizeof(double) * ndof) == 0);
    /* the library did not change the process-wide count */
    CHECK(omp_get_max_threads() == 2);
  }
  if (limit < 3) printf("note: OMP_THREAD_LIMIT %d caps the teams: the count is checked only up to it\n", limit);
  test_default_threads();
  free(x1);
  free(xt);
  cf_mesh_free(&mesh);
  TEST_END();
}
