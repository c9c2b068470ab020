/* Craig-Bampton reduction (host/reduce/modal_reduce.c):
 *  - all modes kept: the reduced eigenfrequencies are the full model's (1e-8 relative), for a
 *    free box (six rigid-body modes) and a clamped one, lumped and consistent mass;
 *  - the orthonormalised basis has M_r = I, K_r = diag(w^2); the invariants agree with the mass
 *    (sum of the node masses, S_xx + S_yy + S_zz = M_r, first moment and inertia of the mesh);
 *  - the file round trip reproduces every array; a reduction is refused for another model;
 *  - a free part with a single interface node (K_ii singular) is an error, not garbage. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/modal.h"
#include "cofem/reduce.h"

static void all_modes(int consistent, int clamp) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(3, 2, 2, 0.3, 0.1, 0.1, &mesh));
  cfModelDef def = cf_default_model_def();
  def.consistent_mass = consistent;
  cfModel* m;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  const cfNodeSet* xmin = cf_mesh_find_nset(&mesh, "xmin");
  const cfNodeSet* xmax = cf_mesh_find_nset(&mesh, "xmax");
  if (clamp) CHECK_OK(cf_model_fix_nodes(m, xmin->nodes, xmin->count, 7));
  int nf = m->ndof - m->nfixed;
  double* wf = malloc(sizeof(double) * nf);
  cfModalOptions mo = cf_default_modal_options();
  mo.method = CF_MODAL_DENSE;
  CHECK_OK(cf_modal_solve(m, nf, &mo, wf, NULL, NULL));

  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = m->ndof; /* all of them */
  ro.modal.method = CF_MODAL_DENSE;
  cfReduction r;
  const cfNodeSet* iface = clamp ? xmax : xmin;
  CHECK_OK(cf_reduce(m, iface->nodes, iface->count, &ro, &r));
  CHECK(r.n == nf);
  CHECK(r.nb == 3 * iface->count);
  CHECK(r.nrigid == (clamp ? 0 : 6));
  double wmax = wf[nf - 1], worst = 0;
  for (int i = 0; i < nf && i < r.n; i++) {
    double tol = i < (clamp ? 0 : 6) ? 1e-10 * wmax : 1e-8 * wf[i];
    CHECK_CLOSE(r.omega2[i], wf[i], tol, 0);
    if (i >= (clamp ? 0 : 6)) worst = fmax(worst, fabs(r.omega2[i] - wf[i]) / wf[i]);
  }
  printf("%s box, %s mass: %d DOFs, %d constraint + %d normal modes, worst relative w^2 error %.2e, "
         "first elastic %.3f Hz, %.3f s\n", clamp ? "clamped" : "free", consistent ? "consistent" : "lumped", nf, r.nb,
         r.nk, worst, cf_reduction_freq_hz(&r, clamp ? 0 : 6), r.t_total);
  /* orthonormal: Kr, Mr exact; check B^T M B = I directly for a few modes, and sum_abb S = Mr */
  int n = r.n;
  double msum = 0;
  for (int i = 0; i < m->nnode; i++) msum += m->node_mass[i];
  CHECK_CLOSE(r.mass, msum, 0, 1e-12);
  double c_ref[3] = {0.15 * msum, 0.05 * msum, 0.05 * msum};
  for (int a = 0; a < 3; a++) CHECK_CLOSE(r.c[a], c_ref[a], 0, 1e-12);
  double err_S = 0;
  for (int j = 0; j < n; j++)
    for (int k = 0; k < n; k++) {
      double s = 0;
      for (int a = 0; a < 3; a++) s += r.S[((size_t)(a * 3 + a) * n + j) * n + k];
      err_S = fmax(err_S, fabs(s - (j == k ? 1.0 : 0.0)));
    }
  CHECK(err_S < 1e-9);
  /* rigid translations: P of a mode is its momentum, |P|^2 summed over the rigid modes = 3 m
   * (the six M-orthonormal rigid modes span the translations) */
  if (!clamp) {
    double pp = 0;
    for (int j = 0; j < 6; j++)
      for (int a = 0; a < 3; a++) pp += r.P[a * n + j] * r.P[a * n + j];
    CHECK_CLOSE(pp, 3 * msum, 0, 1e-8);
  }
  /* second moment: J of the (lumped or consistent) discretised box */
  double Jxx_ref = 0;
  for (int p = 0; p < m->nnode; p++)
    for (int q = m->row_ptr[p]; q < m->row_ptr[p + 1]; q++) Jxx_ref += m->Mblk[q] * m->X[3 * p] * m->X[3 * m->col[q]];
  CHECK_CLOSE(r.J[0], Jxx_ref, 0, 1e-12);

  /* file round trip */
  char path[128];
  snprintf(path, sizeof path, "/tmp/cofem_test_cb_%d.cfred", (int)getpid());
  snprintf(r.source, sizeof r.source, "box");
  CHECK_OK(cf_reduction_write(&r, path));
  cfReduction r2;
  CHECK_OK(cf_reduction_read(path, &r2));
  CHECK(r2.n == r.n && r2.nb == r.nb && r2.nk == r.nk && r2.nrigid == r.nrigid && r2.orthonormal == 1);
  CHECK(!strcmp(r2.source, "box"));
  CHECK(memcmp(r2.basis, r.basis, sizeof(double) * n * r.ndof) == 0);
  CHECK(memcmp(r2.S, r.S, sizeof(double) * 9 * n * n) == 0);
  CHECK(memcmp(r2.omega2, r.omega2, sizeof(double) * n) == 0);
  CHECK(memcmp(r2.bdof, r.bdof, sizeof(int) * r.nb) == 0);
  CHECK(r2.mass == r.mass && r2.J[4] == r.J[4]);
  CHECK_OK(cf_reduction_check(&r2, m));
  cf_reduction_free(&r2);
  /* truncated file */
  FILE* f = fopen(path, "r+b");
  if (f) {
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    CHECK(truncate(path, len - 8) == 0);
    CHECK(cf_reduction_read(path, &r2) == CF_ERR_PARSE);
  }
  remove(path);
  /* another material is refused */
  cfModelDef d2 = def;
  d2.E *= 2;
  cfModel* m2;
  CHECK_OK(cf_model_create(&mesh, &d2, &m2));
  CHECK(cf_reduction_check(&r, m2) == CF_ERR_ARG);
  cf_model_free(m2);

  cf_reduction_free(&r);
  free(wf);
  cf_model_free(m);
  cf_mesh_free(&mesh);
}

int main(void) {
  all_modes(0, 0);
  all_modes(0, 1);
  all_modes(1, 0);
  all_modes(1, 1);
  /* a free box held at one node only: K_ii singular */
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(2, 1, 1, 0.2, 0.1, 0.1, &mesh));
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  cfReduction r;
  int node = 0;
  int st = cf_reduce(m, &node, 1, NULL, &r);
  printf("single interface node of a free part: %s\n", cf_last_error());
  CHECK(st == CF_ERR_SOLVER);
  CHECK(r.basis == NULL);
  /* bad arguments */
  node = m->nnode;
  CHECK(cf_reduce(m, &node, 1, NULL, &r) == CF_ERR_ARG);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
