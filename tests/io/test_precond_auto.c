/* The preconditioner "auto" (issue 16: the demos keep their speed, the choice made by size):
 * a scene without solver.preconditioner gets "auto", which cf_scene_build turns into block Jacobi
 * for the GPU and, on the CPU, into the rotated Cholesky below CF_PRECOND_AUTO_AMG_TETS
 * tetrahedra and AMG from there (the crossover measured on the lug family: cofem/fem.h); an
 * explicit choice is kept; cf_model_create resolves "auto" for library users by the CPU rule. */
#include "cf_test.h"
#include "cofem/mesh_box.h"
#include "cofem/scene.h"

#include <string.h>

/* the preconditioner cf_model_create makes of "auto" on an nx x ny x nz box (6 nx ny nz tets) */
static int auto_on_box(int nx, int ny, int nz, int* ntet) {
  cfMesh mesh;
  int st = cf_mesh_box(nx, ny, nz, 1.0, 1.0, 1.0, &mesh);
  if (st < 0) return st;
  cfModelDef def = cf_default_model_def();
  def.preconditioner = CF_PRECOND_AUTO;
  cfModel* m = NULL;
  st = cf_model_create(&mesh, &def, &m);
  *ntet = mesh.ntet;
  if (st >= 0) st = m->def.preconditioner;
  cf_model_free(m);
  cf_mesh_free(&mesh);
  return st;
}

int main(void) {
  /* 1. a scene that names none: "auto", the rotated Cholesky on the CPU for the 1,298-tet lug */
  cfScene s;
  CHECK_OK(cf_scene_load(COFEM_SOURCE_DIR "/scenes/lug_pull.json", &s));
  if (cf_test_failures) TEST_END();
  CHECK(s.def.preconditioner == CF_PRECOND_AUTO);
  snprintf(s.backend, sizeof s.backend, "cpu");
  cfModel* m = NULL;
  cfData* d = NULL;
  CHECK_OK(cf_scene_build(&s, &m, &d));
  if (m) {
    printf("lug (%d tets), backend cpu: %s\n", m->ntet, cf_preconditioner_name(m->def.preconditioner));
    CHECK(m->def.preconditioner == CF_PRECOND_ROTATED_CHOLESKY);
    CHECK(d && d->precond != NULL); /* factored by cf_data_create */
  }
  cf_data_free(d);
  cf_model_free(m);
  /* 2. the same scene for the GPU: AMG (backward Euler), its hierarchy built on the host */
  snprintf(s.backend, sizeof s.backend, "cuda");
  CHECK_OK(cf_scene_build(&s, &m, &d));
  if (m) {
    printf("lug, backend cuda: %s\n", cf_preconditioner_name(m->def.preconditioner));
    CHECK(m->def.preconditioner == CF_PRECOND_AMG);
    CHECK(d && d->precond != NULL);
  }
  cf_data_free(d);
  cf_model_free(m);
  /* and with generalized-alpha, which the GPU runs with block Jacobi only: nothing factored */
  s.def.integrator = CF_INTEGRATOR_GENERALIZED_ALPHA;
  s.def.dyn_tangent = CF_DYN_TANGENT_KR;
  CHECK_OK(cf_scene_build(&s, &m, &d));
  if (m) {
    printf("lug, backend cuda, generalized-alpha: %s\n", cf_preconditioner_name(m->def.preconditioner));
    CHECK(m->def.preconditioner == CF_PRECOND_BLOCK_JACOBI);
    CHECK(d && d->precond == NULL);
  }
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&s);
  /* 3. an explicit choice is kept (the hinge names the rotated Cholesky; forced to AMG here) */
  CHECK_OK(cf_scene_load(COFEM_SOURCE_DIR "/scenes/hinge_pull.json", &s));
  if (cf_test_failures) TEST_END();
  CHECK(s.def.preconditioner == CF_PRECOND_ROTATED_CHOLESKY);
  s.def.preconditioner = CF_PRECOND_AMG;
  CHECK_OK(cf_scene_build(&s, &m, &d));
  if (m) CHECK(m->def.preconditioner == CF_PRECOND_AMG);
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&s);
  /* 4. the size rule at its boundary, through cf_model_create (no data: no factor or hierarchy) */
  int n1 = 0, n2 = 0;
  int below = auto_on_box(33, 25, 20, &n1), above = auto_on_box(34, 25, 20, &n2);
  printf("box %d tets: %s; box %d tets: %s (threshold %d)\n", n1, cf_preconditioner_name(below), n2,
         cf_preconditioner_name(above), CF_PRECOND_AUTO_AMG_TETS);
  CHECK(n1 < CF_PRECOND_AUTO_AMG_TETS && n2 >= CF_PRECOND_AUTO_AMG_TETS);
  CHECK(below == CF_PRECOND_ROTATED_CHOLESKY);
  CHECK(above == CF_PRECOND_AMG);
  CHECK(cf_preconditioner_auto(CF_PRECOND_AUTO_AMG_TETS, CF_INTEGRATOR_BACKWARD_EULER, 1) == CF_PRECOND_AMG);
  CHECK(cf_preconditioner_auto(1000, CF_INTEGRATOR_GENERALIZED_ALPHA, 1) == CF_PRECOND_BLOCK_JACOBI);
  /* 5. the scene key: "auto" accepted, a wrong value names it among the accepted ones */
#define SCENE(P)                                                                                    \
  "{\"mesh\": \"../meshes/lug.msh\", \"material\": {\"E\": 2.1e11, \"nu\": 0.3, \"rho\": 7850}, "             \
  "\"time\": {\"dt\": 0.01, \"end\": 0.1}, \"solver\": {\"preconditioner\": \"" P "\"}}"
  const char* ok = SCENE("auto");
  const char* bad = SCENE("ilu");
  CHECK_OK(cf_scene_parse(ok, COFEM_SOURCE_DIR "/scenes/x.json", &s));
  if (!cf_test_failures) {
    CHECK(s.def.preconditioner == CF_PRECOND_AUTO);
    cf_scene_free(&s);
  }
  CHECK(cf_scene_parse(bad, COFEM_SOURCE_DIR "/scenes/x.json", &s) == CF_ERR_SCENE);
  printf("bad value: %s\n", cf_last_error());
  CHECK(strstr(cf_last_error(), "\"ilu\"") && strstr(cf_last_error(), "\"auto\""));
  TEST_END();
}
