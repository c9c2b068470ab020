/* Element stiffness: symmetric, positive semi-definite with exactly the six rigid-body modes in its
 * null space; patch test on a mesh: a linear displacement field gives its exact constant strain
 * and no out-of-balance force at interior nodes. */
#include <lapacke.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "fem_element.h"

static void check_element(const double* Xe /* 4 nodes */) {
  double Dm[9], Dmi[9], Ke[144];
  int tet[4] = {0, 1, 2, 3};
  cf_edge_matrix(Xe, tet, 0, Dm);
  double vol = cf_inv3(Dm, Dmi) / 6.0;
  CHECK(vol > 0);
  const double E = 210e9, nu = 0.3;
  cf_elem_stiffness(Dmi, vol, E, nu, Ke);
  double kmax = 0;
  for (int i = 0; i < 144; i++) kmax = fmax(kmax, fabs(Ke[i]));
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) CHECK_CLOSE(Ke[12 * i + j], Ke[12 * j + i], 1e-13 * kmax, 0);
  double A[144], w[12];
  memcpy(A, Ke, sizeof A);
  CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 12, A, 12, w) == 0);
  /* eigenvalues ascending: six zeros (rigid modes), then six strictly positive */
  for (int i = 0; i < 6; i++) CHECK(fabs(w[i]) < 1e-10 * w[11]);
  CHECK(w[6] > 1e-6 * w[11]);
  /* the rigid modes themselves: translations and infinitesimal rotations give zero force */
  for (int mode = 0; mode < 6; mode++) {
    double u[12], f[12];
    for (int a = 0; a < 4; a++) {
      const double* p = Xe + 3 * a;
      double t[3] = {0, 0, 0};
      if (mode < 3) t[mode] = 1;
      else {
        double om[3] = {0, 0, 0};
        om[mode - 3] = 1;
        t[0] = om[1] * p[2] - om[2] * p[1];
        t[1] = om[2] * p[0] - om[0] * p[2];
        t[2] = om[0] * p[1] - om[1] * p[0];
      }
      for (int i = 0; i < 3; i++) u[3 * a + i] = t[i];
    }
    for (int i = 0; i < 12; i++) {
      f[i] = 0;
      for (int j = 0; j < 12; j++) f[i] += Ke[12 * i + j] * u[j];
      CHECK(fabs(f[i]) < 1e-9 * kmax);
    }
  }
}

int main(void) {
  double regular[12] = {1, 1, 1, 1, -1, -1, -1, 1, -1, -1, -1, 1};
  /* make it positively oriented */
  double Dm[9];
  int tet[4] = {0, 1, 2, 3};
  cf_edge_matrix(regular, tet, 0, Dm);
  if (cf_det3(Dm) < 0)
    for (int i = 0; i < 3; i++) {
      double t = regular[3 + i];
      regular[3 + i] = regular[6 + i];
      regular[6 + i] = t;
    }
  check_element(regular);
  double sliver[12] = {0, 0, 0, 0.01, 0, 0, 0, 0.02, 0, 0.003, 0.004, 0.0005};
  check_element(sliver);

  /* patch test: u = H X on a box, every element strain = sym(H), interior forces = 0 */
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(4, 3, 3, 0.4, 0.3, 0.3, &mesh));
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  CHECK_OK(cf_data_create(m, &d));
  const double H[9] = {1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, 0, 7e-4, 4e-4};
  for (int n = 0; n < m->nnode; n++)
    for (int i = 0; i < 3; i++) {
      double u = 0;
      for (int j = 0; j < 3; j++) u += H[3 * i + j] * m->X[3 * n + j];
      d->x[3 * n + i] = m->X[3 * n + i] + u;
    }
  /* linear FEM: R = I (do not run the polar stage) */
  cf_stage_elastic(m, d);
  double fscale = def.E * 1e-3 * 0.1 * 0.1;
  int interior_checked = 0;
  for (int n = 0; n < m->nnode; n++) {
    const double* X = m->X + 3 * n;
    int interior = X[0] > 1e-9 && X[0] < 0.4 - 1e-9 && X[1] > 1e-9 && X[1] < 0.3 - 1e-9 &&
                   X[2] > 1e-9 && X[2] < 0.3 - 1e-9;
    if (!interior) continue;
    interior_checked++;
    for (int i = 0; i < 3; i++) CHECK(fabs(d->f_el[3 * n + i]) < 1e-9 * fscale);
  }
  CHECK(interior_checked > 0);
  for (int e = 0; e < m->ntet; e++) {
    double g[12], Hn[9] = {0};
    cf_shape_gradients(m->Dm_inv + 9 * e, g);
    for (int a = 0; a < 4; a++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          Hn[3 * i + j] += (d->x[3 * m->tet[4 * e + a] + i] - m->X[3 * m->tet[4 * e + a] + i]) * g[3 * a + j];
    for (int i = 0; i < 9; i++) CHECK_CLOSE(Hn[i], H[i], 1e-15, 1e-9);
  }
  cf_data_free(d);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
