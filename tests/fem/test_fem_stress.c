/* The stress fields of the output (host/fem/fem_stress.c) on homogeneous deformations of a box
 * mesh, against closed forms:
 *  1. x = R0 (I + E0) X with E0 symmetric (small) and R0 a large rotation: the polar decomposition
 *     of F = R0 (I + E0) is R0, so the co-rotated strain is E0 exactly in every element, whatever
 *     R0; von Mises of sigma = lam tr(E0) I + 2 mu E0 by the principal-stress formula;
 *  2. the small strain of a displacement u = E0 X is E0 (the modal bodies' measure);
 *  3. nodal averages of a field linear in the element index against sums done here;
 *  4. cf_von_mises (the viewer's and cofem run's call) equals the field's per-element values. */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"

int main(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(3, 2, 2, 0.3, 0.1, 0.1, &mesh));
  cfModelDef def = cf_default_model_def();
  def.E = 70e9, def.nu = 0.33, def.rho = 2700;
  cfModel* m = NULL;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  if (!m) TEST_END();
  const double E0[9] = {2e-4, 3e-5, -1e-5, 3e-5, -5e-5, 2e-5, -1e-5, 2e-5, 1e-4}; /* symmetric */
  const double axis[3] = {0.3, -0.5, 0.8}, n = sqrt(0.09 + 0.25 + 0.64), ang = 2.1; /* 120 degrees */
  /* Rodrigues: R0 = I + sin a [k]x + (1 - cos a) [k]x^2 */
  double k[3] = {axis[0] / n, axis[1] / n, axis[2] / n}, K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
  double R0[9], K2[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      K2[3 * i + j] = 0;
      for (int l = 0; l < 3; l++) K2[3 * i + j] += K[3 * i + l] * K[3 * l + j];
    }
  for (int i = 0; i < 9; i++) R0[i] = (i % 4 == 0) + sin(ang) * K[i] + (1 - cos(ang)) * K2[i];
  double* x = malloc(sizeof(double) * 3 * m->nnode);
  double* u = malloc(sizeof(double) * 3 * m->nnode);
  for (int p = 0; p < m->nnode; p++) {
    const double* X = m->X + 3 * p;
    double y[3];
    for (int i = 0; i < 3; i++) y[i] = X[i] + E0[3 * i] * X[0] + E0[3 * i + 1] * X[1] + E0[3 * i + 2] * X[2];
    for (int i = 0; i < 3; i++) {
      x[3 * p + i] = 5.0 + R0[3 * i] * y[0] + R0[3 * i + 1] * y[1] + R0[3 * i + 2] * y[2]; /* and moved 5 m */
      u[3 * p + i] = y[i] - X[i];
    }
  }
  /* sigma = lam tr I + 2 mu E0; von Mises from the deviator: sqrt(3/2 s:s) */
  const double lam = def.E * def.nu / ((1 + def.nu) * (1 - 2 * def.nu)), mu = def.E / (2 * (1 + def.nu));
  const double tr = E0[0] + E0[4] + E0[8];
  double s[9], ss = 0;
  for (int i = 0; i < 9; i++) s[i] = 2 * mu * E0[i] + (i % 4 == 0 ? lam * tr : 0);
  const double ps = (s[0] + s[4] + s[8]) / 3;
  for (int i = 0; i < 9; i++) {
    const double dv = s[i] - (i % 4 == 0 ? ps : 0);
    ss += dv * dv;
  }
  const double vm_ref = sqrt(1.5 * ss);
  const double e6[6] = {E0[0], E0[4], E0[8], E0[1], E0[5], E0[2]}; /* xx yy zz xy yz xz */

  cfStressField f;
  CHECK_OK(cf_stress_field_init(&f, m));
  double worst_eps = 0, worst_vm = 0;
  /* 1. co-rotated, cold and warm-started polar decompositions */
  for (int warm = 0; warm < 2; warm++) {
    double* Rg = NULL;
    if (warm) { /* a guess 0.3 rad off */
      Rg = malloc(sizeof(double) * 9 * m->ntet);
      double Rs[9];
      double c = cos(0.3), sn = sin(0.3), Rz[9] = {c, -sn, 0, sn, c, 0, 0, 0, 1};
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          Rs[3 * i + j] = 0;
          for (int l = 0; l < 3; l++) Rs[3 * i + j] += R0[3 * i + l] * Rz[3 * l + j];
        }
      for (int e = 0; e < m->ntet; e++) memcpy(Rg + 9 * e, Rs, sizeof Rs);
    }
    cf_stress_field_corotated(m, x, Rg, &f);
    for (int e = 0; e < m->ntet; e++) {
      for (int c = 0; c < 6; c++) worst_eps = fmax(worst_eps, fabs(f.strain[6 * e + c] - e6[c]));
      worst_vm = fmax(worst_vm, fabs(f.von_mises[e] - vm_ref) / vm_ref);
    }
    for (int p = 0; p < m->nnode; p++) {
      for (int c = 0; c < 6; c++) worst_eps = fmax(worst_eps, fabs(f.node_strain[6 * p + c] - e6[c]));
      worst_vm = fmax(worst_vm, fabs(f.node_von_mises[p] - vm_ref) / vm_ref);
    }
    free(Rg);
  }
  printf("co-rotated: strain error %.3g (of 2e-4), von Mises %.3g relative (%.6g Pa)\n", worst_eps, worst_vm, vm_ref);
  CHECK(worst_eps < 2e-13); /* measured: 2.9e-14 (round-off of R^T x over 0.05 m elements, 5 m away) */
  CHECK(worst_vm < 5e-10);  /* measured: 8.2e-11 */

  /* 2. small strain of u = E0 X */
  cf_stress_field_small(m, u, &f);
  double worst_small = 0;
  for (int e = 0; e < m->ntet; e++)
    for (int c = 0; c < 6; c++) worst_small = fmax(worst_small, fabs(f.strain[6 * e + c] - e6[c]));
  printf("small strain: error %.3g\n", worst_small);
  CHECK(worst_small < 5e-15); /* measured: 6.3e-16 */

  /* 3. nodal averages: element value e, weights the volumes */
  double* ev = malloc(sizeof(double) * m->ntet);
  double* nv = malloc(sizeof(double) * m->nnode);
  double* num = calloc(m->nnode, sizeof(double));
  double* den = calloc(m->nnode, sizeof(double));
  for (int e = 0; e < m->ntet; e++) {
    ev[e] = e;
    for (int a = 0; a < 4; a++) num[m->tet[4 * e + a]] += m->vol[e] * e, den[m->tet[4 * e + a]] += m->vol[e];
  }
  cf_node_average(m, ev, 1, nv);
  double worst_avg = 0;
  for (int p = 0; p < m->nnode; p++) worst_avg = fmax(worst_avg, fabs(nv[p] - num[p] / den[p]));
  printf("nodal averages: error %.3g\n", worst_avg);
  CHECK(worst_avg < 1e-10); /* measured: 0 (the same sums in another order) */

  /* 4. cf_von_mises at the same positions */
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (d) {
    memcpy(d->x, x, sizeof(double) * 3 * m->nnode);
    cf_stress_field_corotated(m, x, NULL, &f);
    cf_von_mises(m, d, ev);
    double worst = 0;
    for (int e = 0; e < m->ntet; e++) worst = fmax(worst, fabs(ev[e] - f.von_mises[e]) / vm_ref);
    printf("cf_von_mises vs the field: %.3g relative\n", worst);
    CHECK(worst < 5e-10); /* warm (from rest) vs cold polar; measured: 0 */
    cf_data_free(d);
  }
  free(ev), free(nv), free(num), free(den), free(x), free(u);
  cf_stress_field_free(&f);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
