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
  /* the invariants against sums formed here, element by element, with the element mass written
   * in this test (rho V / 20 (1 + delta_ab) consistent, rho V / 4 on the diagonal lumped), not
   * the model's blocks; and mass, centre, second moments of the box 0.3 x 0.1 x 0.1 in closed
   * form (the consistent mass integrates x x^T exactly; the lumped one does not) */
  const double rho = def.rho, Lx = 0.3, Ly = 0.1, Lz = 0.1, mass = rho * Lx * Ly * Lz;
  double* Ph = calloc((size_t)3 * n, sizeof(double));  /* P */
  double* Th = calloc((size_t)9 * n, sizeof(double));  /* T */
  double Jh[9] = {0};
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + 4 * e;
    const double* x0 = m->X + 3 * t[0];
    double D[9];
    for (int a = 0; a < 3; a++)
      for (int k = 0; k < 3; k++) D[3 * k + a] = m->X[3 * t[a + 1] + k] - x0[k];
    double V = fabs(D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
                    D[2] * (D[3] * D[7] - D[4] * D[6])) / 6;
    msum += rho * V;
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        double mab = consistent ? rho * V / 20 * (a == b ? 2 : 1) : (a == b ? rho * V / 4 : 0);
        if (mab == 0) continue;
        const double *sp = m->X + 3 * t[a], *sq = m->X + 3 * t[b];
        for (int i = 0; i < 3; i++)
          for (int k = 0; k < 3; k++) Jh[3 * i + k] += mab * sp[i] * sq[k];
        for (int j = 0; j < n; j++) {
          const double* phi = r.basis + (size_t)j * m->ndof + 3 * t[b];
          for (int i = 0; i < 3; i++) {
            Ph[i * n + j] += mab * phi[i];
            for (int k = 0; k < 3; k++) Th[(i * 3 + k) * n + j] += mab * sp[i] * phi[k];
          }
        }
      }
  }
  double eP = 0, eT = 0, sP = 0, sT = 0, eJ = 0;
  for (int i = 0; i < 3 * n; i++) eP = fmax(eP, fabs(r.P[i] - Ph[i])), sP = fmax(sP, fabs(Ph[i]));
  for (int i = 0; i < 9 * n; i++) eT = fmax(eT, fabs(r.T[i] - Th[i])), sT = fmax(sT, fabs(Th[i]));
  for (int i = 0; i < 9; i++) eJ = fmax(eJ, fabs(r.J[i] - Jh[i]) / Jh[0]);
  printf("  invariants against this test's element sums: mass %+.1e, P %.1e, T %.1e, J %.1e (relative)\n",
         r.mass / msum - 1, eP / sP, eT / sT, eJ);
  CHECK_CLOSE(msum, mass, 0, 1e-13);   /* the tets fill the box */
  CHECK_CLOSE(r.mass, mass, 0, 1e-13); /* measured -1.1e-16 */
  CHECK(eP < 1e-13 * sP); /* measured 7.4e-15 at most */
  CHECK(eT < 1e-13 * sT); /* measured 5.3e-15 */
  CHECK(eJ < 1e-13);      /* measured 7.9e-16 */
  double c_ref[3] = {Lx / 2 * mass, Ly / 2 * mass, Lz / 2 * mass}; /* vertex mean = centroid: both rules */
  for (int a = 0; a < 3; a++) CHECK_CLOSE(r.c[a], c_ref[a], 0, 1e-13);
  if (consistent) { /* int rho x x^T over the box */
    const double Lb[3] = {Lx, Ly, Lz};
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++)
        CHECK_CLOSE(r.J[3 * i + k], mass * Lb[i] * Lb[k] / (i == k ? 3.0 : 4.0), 0, 1e-13);
  }
  free(Ph);
  free(Th);
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
    CHECK_CLOSE(pp, 3 * mass, 0, 1e-8);
  }

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
