/* Modal analysis (host/fem/fem_modal.c): the shift-invert Lanczos solver (ARPACK dsaupd/dseupd,
 * mode 3) agrees with the dense LAPACK solver (dsygvx) on a clamped beam with lumped, consistent
 * and one-point (CalculiX C3D4) mass and on a free beam (six rigid-body modes, then the elastic
 * ones); the modes of both are M-orthonormal and zero on fixed DOFs, the Lanczos ones bitwise
 * the same from call to call; k = free DOFs goes to the dense solver, a basis too short for the
 * tolerance is an error naming ARPACK's info code; the first bending frequency of a slender clamped beam is near
 * Euler-Bernoulli's; the one-point mass has the lumped masses as row sums and lies above the
 * consistent mass in frequency. (Against CalculiX: tests/cli/test_accuracy.sh.) */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/modal.h"

static void compare(cfMesh* mesh, int consistent, int clamp, int k, int one_point) {
  cfModelDef def = cf_default_model_def();
  def.consistent_mass = consistent;
  cfModel* m;
  CHECK_OK(cf_model_create(mesh, &def, &m));
  if (clamp) {
    const cfNodeSet* s = cf_mesh_find_nset(mesh, "xmin");
    CHECK_OK(cf_model_fix_nodes(m, s->nodes, s->count, 7));
  }
  double wd[32], wl[32];
  double* pd = malloc(sizeof(double) * k * m->ndof);
  double* pl = malloc(sizeof(double) * k * m->ndof);
  cfModalOptions o = cf_default_modal_options();
  if (one_point) o.mass = CF_MODAL_MASS_ONE_POINT;
  cfModalInfo id, il;
  o.method = CF_MODAL_DENSE;
  CHECK_OK(cf_modal_solve(m, k, &o, wd, pd, &id));
  o.method = CF_MODAL_LANCZOS;
  CHECK_OK(cf_modal_solve(m, k, &o, wl, pl, &il));
  printf("%s beam, %s mass, %d free DOFs: dense %.3f s (residual %.1e), Lanczos %.3f s (basis %d, %d restarts, "
         "%d solves, residual %.1e)\n",
         clamp ? "clamped" : "free", one_point ? "one-point" : consistent ? "consistent" : "lumped", id.nfree, id.seconds, id.max_residual,
         il.seconds, il.basis, il.iterations, il.solves, il.max_residual);
  CHECK(il.basis > k && il.iterations >= 1 && il.solves >= il.basis);
  CHECK(id.basis == 0 && id.iterations == 0 && id.solves == 0);
  CHECK(id.method == CF_MODAL_DENSE && il.method == CF_MODAL_LANCZOS);
  CHECK(id.max_residual < 1e-8 && il.max_residual < 1e-8);
  double scale = wd[k - 1];
  for (int i = 0; i < k; i++) {
    if (i < 3 || i == k - 1)
      printf("  mode %2d: %.6f Hz dense, %.6f Hz Lanczos\n", i + 1, sqrt(fabs(wd[i])) / (2 * M_PI),
             sqrt(fabs(wl[i])) / (2 * M_PI));
    CHECK_CLOSE(wl[i], wd[i], 1e-9 * scale, 1e-9);
    if (i > 0) CHECK(wl[i] >= wl[i - 1]);
  }
  /* M-orthonormal (phi_i^T M phi_j = delta_ij), zero on fixed DOFs, dense and Lanczos */
  double* y = malloc(sizeof(double) * m->ndof);
  double* Mb = malloc(sizeof(double) * m->nnzb);
  if (one_point) cf_mass_one_point(m, Mb);
  else memcpy(Mb, m->Mblk, sizeof(double) * m->nnzb);
  for (int which = 0; which < 2; which++) {
    const double* P = which ? pl : pd;
    double worst = 0;
    for (int i = 0; i < k; i++) {
      const double* phi = P + (size_t)i * m->ndof;
      for (int n = 0; n < m->nnode; n++) {
        double s[3] = {0, 0, 0};
        for (int q = m->row_ptr[n]; q < m->row_ptr[n + 1]; q++)
          for (int a = 0; a < 3; a++) s[a] += Mb[q] * phi[3 * m->col[q] + a];
        for (int a = 0; a < 3; a++) y[3 * n + a] = s[a];
      }
      for (int j = 0; j < k; j++) {
        const double* psi = P + (size_t)j * m->ndof;
        double s = 0;
        for (int d = 0; d < m->ndof; d++) s += psi[d] * y[d];
        double e = fabs(s - (i == j));
        if (e > worst) worst = e;
      }
      for (int d = 0; d < m->ndof; d++)
        if (m->fixed[d]) CHECK(phi[d] == 0.0);
    }
    printf("  %s: largest |phi_i^T M phi_j - delta_ij| %.1e\n", which ? "Lanczos" : "dense", worst);
    CHECK(worst < 1e-9);
  }
  /* the same modes bitwise on a second call (a fixed start vector, not ARPACK's random one) */
  {
    double w2[32];
    double* p2 = malloc(sizeof(double) * k * m->ndof);
    CHECK_OK(cf_modal_solve(m, k, &o, w2, p2, NULL));
    CHECK(memcmp(w2, wl, sizeof(double) * k) == 0 && memcmp(p2, pl, sizeof(double) * k * m->ndof) == 0);
    free(p2);
  }
  if (!clamp) {
    for (int i = 0; i < 6; i++) CHECK(fabs(wl[i]) < 1e-8 * wl[6]);
  } else {
    /* Euler-Bernoulli: w1 = 1.8751^2 sqrt(EI / (rho A L^4)); linear tets are stiffer */
    double L = 1.0, a = 0.1, I = a * a * a * a / 12, A = a * a;
    double w1 = 1.8751 * 1.8751 * sqrt(def.E * I / (def.rho * A * L * L * L * L));
    printf("  first bending mode %.2f Hz, Euler-Bernoulli %.2f Hz\n", sqrt(wd[0]) / (2 * M_PI), w1 / (2 * M_PI));
    CHECK(sqrt(wd[0]) > 0.95 * w1 && sqrt(wd[0]) < 1.5 * w1);
  }
  if (one_point) { /* row sums are the lumped node masses */
    for (int n = 0; n < m->nnode; n++) {
      double s = 0;
      for (int q = m->row_ptr[n]; q < m->row_ptr[n + 1]; q++) s += Mb[q];
      CHECK_CLOSE(s, m->node_mass[n], 0, 1e-12);
    }
  }
  /* arguments */
  CHECK(cf_modal_solve(m, 0, &o, wl, NULL, NULL) == CF_ERR_ARG);
  CHECK(cf_modal_solve(m, id.nfree + 1, &o, wl, NULL, NULL) == CF_ERR_ARG);
  free(Mb); free(y); free(pd); free(pl);
  cf_model_free(m);
}

int main(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(16, 3, 3, 1.0, 0.1, 0.1, &mesh));
  compare(&mesh, 0, 1, 10, 0);
  compare(&mesh, 1, 1, 10, 0);
  compare(&mesh, 1, 1, 10, 1);
  compare(&mesh, 1, 0, 12, 0);
  /* one-point >= consistent in frequency, mode by mode: per element M_c - M_1 =
   * rho V / 20 (I - 1 1^T / 4) is positive semi-definite, so by min-max every eigenvalue with M_1
   * is at least the one with M_c (and M_l - M_c = rho V / 20 (4 I - 1 1^T) >= 0 puts the lumped
   * mass below both) */
  {
    cfModelDef def = cf_default_model_def();
    def.consistent_mass = 1;
    cfModel* m;
    CHECK_OK(cf_model_create(&mesh, &def, &m));
    const cfNodeSet* s = cf_mesh_find_nset(&mesh, "xmin");
    CHECK_OK(cf_model_fix_nodes(m, s->nodes, s->count, 7));
    double wc[6], w1[6], wl[6];
    cfModalOptions o = cf_default_modal_options();
    CHECK_OK(cf_modal_solve(m, 6, &o, wc, NULL, NULL));
    o.mass = CF_MODAL_MASS_ONE_POINT;
    CHECK_OK(cf_modal_solve(m, 6, &o, w1, NULL, NULL));
    cfModelDef defl = cf_default_model_def();
    cfModel* ml;
    CHECK_OK(cf_model_create(&mesh, &defl, &ml));
    CHECK_OK(cf_model_fix_nodes(ml, s->nodes, s->count, 7));
    o.mass = CF_MODAL_MASS_MODEL;
    CHECK_OK(cf_modal_solve(ml, 6, &o, wl, NULL, NULL));
    for (int i = 0; i < 6; i++) CHECK(w1[i] >= wc[i] * (1 - 1e-12) && wc[i] >= wl[i] * (1 - 1e-12));
    cf_model_free(ml);
    printf("one-point vs consistent mass, mode 6: %.4f Hz vs %.4f Hz\n", sqrt(w1[5]) / (2 * M_PI), sqrt(wc[5]) / (2 * M_PI));
    cf_model_free(m);
  }
  /* degenerate and failing Lanczos requests on a small clamped beam */
  {
    cfMesh small;
    CHECK_OK(cf_mesh_box(3, 1, 1, 0.3, 0.1, 0.1, &small));
    cfModelDef def = cf_default_model_def();
    cfModel* m;
    CHECK_OK(cf_model_create(&small, &def, &m));
    const cfNodeSet* s = cf_mesh_find_nset(&small, "xmin");
    CHECK_OK(cf_model_fix_nodes(m, s->nodes, s->count, 7));
    const int nf = m->ndof - m->nfixed;
    double* wd = malloc(sizeof(double) * nf);
    double* wl = malloc(sizeof(double) * nf);
    cfModalOptions o = cf_default_modal_options();
    cfModalInfo in;
    o.method = CF_MODAL_DENSE;
    CHECK_OK(cf_modal_solve(m, nf, &o, wd, NULL, &in));
    /* all free DOFs: ARPACK needs k below them, so the dense solver answers */
    o.method = CF_MODAL_LANCZOS;
    CHECK_OK(cf_modal_solve(m, nf, &o, wl, NULL, &in));
    CHECK(in.method == CF_MODAL_DENSE && in.basis == 0);
    /* one less: ARPACK with the whole space as basis */
    CHECK_OK(cf_modal_solve(m, nf - 1, &o, wl, NULL, &in));
    CHECK(in.method == CF_MODAL_LANCZOS && in.basis == nf);
    for (int i = 0; i < nf - 1; i++) CHECK_CLOSE(wl[i], wd[i], 1e-9 * wd[nf - 2], 1e-9);
    printf("%d free DOFs: Lanczos for %d pairs with a basis of %d, residual %.1e\n", nf, nf - 1, in.basis, in.max_residual);
    cf_model_free(m);
    cf_mesh_free(&small);
    free(wd); free(wl);
    /* a basis of k + 1 cannot reach a tolerance of 1e-16: ARPACK's info 1, named */
    cfModel* mb;
    CHECK_OK(cf_model_create(&mesh, &def, &mb));
    s = cf_mesh_find_nset(&mesh, "xmin");
    CHECK_OK(cf_model_fix_nodes(mb, s->nodes, s->count, 7));
    double w[10];
    o.max_basis = 11;
    o.tol = 1e-16;
    CHECK(cf_modal_solve(mb, 10, &o, w, NULL, NULL) == CF_ERR_SOLVER);
    printf("error: %s\n", cf_last_error());
    CHECK(strstr(cf_last_error(), "ARPACK dsaupd") && strstr(cf_last_error(), "info 1"));
    cf_model_free(mb);
  }
  cf_mesh_free(&mesh);
  TEST_END();
}
