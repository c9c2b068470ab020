/* The linearisation inside the dynamic step. Under a large concentrated load (the lug pulled at
 * one node by ~4.9 MN, held), the paper's K_R step turns into a fixed-point iteration with the
 * wrong tangent and flips between two shapes every step (printed, not asserted: a defect); with
 * the symmetric part of the consistent tangent it settles on the static equilibrium computed by `cofem static`'s solver
 * (consistent tangent, independent code path: UMFPACK Newton). */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/scene.h"
#include "cofem/static.h"

static double run(const cfMesh* mesh, int tangent, double* last_jump, double* u_end, const double* f) {
  cfModelDef def = cf_default_model_def();
  def.dyn_tangent = tangent;
  def.pcg_max_iter = 3000;
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_model_create(mesh, &def, &m));
  const cfNodeSet* sup = cf_mesh_find_nset(mesh, "support");
  CHECK_OK(cf_model_fix_nodes(m, sup->nodes, sup->count, 7));
  CHECK_OK(cf_data_create(m, &d));
  const cfNodeSet* probe = cf_mesh_find_nset(mesh, "probe");
  double prev[3] = {0, 0, 0};
  memcpy(d->f_ext, f, sizeof(double) * m->ndof);
  for (int k = 0; k < 40; k++) {
    CHECK(cf_step(m, d) >= 0);
    double u[3];
    cf_set_displacement(mesh, probe, d->x, u);
    *last_jump = sqrt((u[0] - prev[0]) * (u[0] - prev[0]) + (u[1] - prev[1]) * (u[1] - prev[1]) +
                      (u[2] - prev[2]) * (u[2] - prev[2]));
    memcpy(prev, u, sizeof prev);
  }
  memcpy(u_end, prev, sizeof prev);
  double iters = (double)d->pcg_iters_total / 40;
  cf_data_free(d);
  cf_model_free(m);
  return iters;
}

int main(void) {
  cfMesh mesh;
  if (cf_mesh_read(COFEM_SOURCE_DIR "/meshes/lug.msh", &mesh) < 0) {
    fprintf(stderr, "%s\n", cf_last_error());
    return 1;
  }
  const cfNodeSet* probe = cf_mesh_find_nset(&mesh, "probe");
  CHECK(probe && probe->count == 1);
  double* f = calloc(3 * mesh.nnode, sizeof(double));
  const double F[3] = {4.84e6, 0.77e6, 0.74e6};
  for (int k = 0; k < 3; k++) f[3 * probe->nodes[0] + k] = F[k];

  /* the static equilibrium under the same force */
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  const cfNodeSet* sup = cf_mesh_find_nset(&mesh, "support");
  CHECK_OK(cf_model_fix_nodes(m, sup->nodes, sup->count, 7));
  CHECK_OK(cf_data_create(m, &d));
  cfStaticOptions o = cf_default_static_options();
  CHECK(cf_static_solve(m, d, f, &o, NULL, NULL) == CF_OK);
  double u_static[3];
  cf_set_displacement(&mesh, probe, d->x, u_static);
  cf_data_free(d);
  cf_model_free(m);

  double jump_kr, jump_sym, u_kr[3], u_sym[3];
  double it_kr = run(&mesh, CF_DYN_TANGENT_KR, &jump_kr, u_kr, f);
  double it_sym = run(&mesh, CF_DYN_TANGENT_SYM_CONSISTENT, &jump_sym, u_sym, f);
  double us = sqrt(u_static[0] * u_static[0] + u_static[1] * u_static[1] + u_static[2] * u_static[2]);
  double err_sym = 0;
  for (int k = 0; k < 3; k++) err_sym += (u_sym[k] - u_static[k]) * (u_sym[k] - u_static[k]);
  err_sym = sqrt(err_sym) / us;
  printf("static equilibrium: probe u = (%.5f, %.5f, %.5f) m\n", u_static[0], u_static[1], u_static[2]);
  printf("K_R step:           last step jump %.3g m, %.0f PCG iterations/step (printed only)\n", jump_kr, it_kr);
  printf("sym(K_T) step:      last step jump %.3g m, %.1f PCG iterations/step, %.3e from static\n", jump_sym,
         it_sym, err_sym);
  /* the consistent tangent's behaviour; the K_R step's (it flips between two shapes, 49 PCG
   * iterations per step) is printed, not asserted: it is a defect, and fixing it must not fail this */
  CHECK(jump_sym < 1e-9 * us); /* settled: measured 0 */
  CHECK(err_sym < 1e-6);       /* on the static solution: measured 3.0e-7 */
  CHECK(it_sym <= 33);         /* measured 22 per step */
  free(f);
  cf_mesh_free(&mesh);
  TEST_END();
}
