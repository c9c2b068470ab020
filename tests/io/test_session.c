/* cfSession (cofem/session.h), cf_version, cf_data_dir: the handle steps exactly as the plain API
 * loop of `cofem run` does (also with extra forces), its statics is cf_linear_static /
 * cf_static_solve under the scene's full load, and its Craig-Bampton reduction reproduces the
 * linear static response to forces on the interface (exact for constraint modes). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/cofem.h"

static const char* kScene = COFEM_SOURCE_DIR "/scenes/lug_pull.json";

int main(void) {
  /* errors: no handle, a message naming the file */
  cfSession* bad = (cfSession*)1;
  CHECK(cf_session_open(COFEM_SOURCE_DIR "/no/such.json", &bad) < 0);
  CHECK(bad == NULL);
  CHECK(strstr(cf_last_error(), "no/such.json") != NULL);

  cfSession* s;
  CHECK_OK(cf_session_open(kScene, &s));
  if (!s) return 1;
  const cfModel* m = cf_session_model(s);
  int nn = cf_session_nnode(s), ndof = 3 * nn;
  const int* load;
  int nload = cf_session_node_set(s, "load", &load);
  CHECK(nload > 0);
  CHECK(cf_session_node_set(s, "nope", NULL) < 0 && strstr(cf_last_error(), "nope"));

  /* 1. stepping = the plain loop with the scene's loads plus the extra force */
  cfScene sc;
  cfModel* m2;
  cfData* d2;
  CHECK_OK(cf_scene_load(kScene, &sc));
  CHECK_OK(cf_scene_build(&sc, &m2, &d2));
  int node = load[0];
  cf_session_forces(s)[3 * node + 2] = -3e5;
  CHECK(cf_session_step(s, 25) >= 0);
  for (int k = 0; k < 25; k++) {
    cf_scene_forces(&sc, d2->t + sc.def.dt, 1.0, d2->f_ext);
    d2->f_ext[3 * node + 2] += -3e5;
    CHECK(cf_step(m2, d2) >= 0);
  }
  double dx = 0, dv = 0;
  for (int i = 0; i < ndof; i++) {
    dx = fmax(dx, fabs(cf_session_x(s)[i] - d2->x[i]));
    dv = fmax(dv, fabs(cf_session_v(s)[i] - d2->v[i]));
  }
  CHECK(dx == 0 && dv == 0);
  CHECK_CLOSE(cf_session_time(s), 25 * cf_session_dt(s), 1e-12, 0);
  double u[3], u2[3];
  CHECK_OK(cf_session_probe(s, "probe", u));
  cf_set_displacement(&sc.mesh, cf_mesh_find_nset(&sc.mesh, "probe"), d2->x, u2);
  CHECK(u[0] == u2[0] && u[1] == u2[1] && u[2] == u2[2] && u[0] > 1e-4); /* pulled in +x */
  double* vm = malloc(sizeof(double) * cf_session_ntet(s));
  cf_session_von_mises(s, vm);
  CHECK(vm[0] >= 0 && isfinite(vm[0]));
  free(vm);

  /* 2. statics: linear, scaled load and extra force = K^-1 f built here */
  cf_session_forces(s)[3 * node + 2] = 0;
  double* f = calloc(ndof, sizeof(double));
  cfScene full = sc;
  for (int l = 0; l < full.nload; l++) full.load[l].t_start = 0, full.load[l].ramp = 0, full.load[l].t_stop = INFINITY;
  cf_scene_forces(&full, 0, 0.5, f);
  for (int n = 0; n < nn; n++)
    for (int k = 0; k < 3; k++) f[3 * n + k] += 0.5 * m->node_mass[n] * sc.def.gravity[k];
  cf_data_reset(m2, d2);
  CHECK_OK(cf_linear_static(m2, d2, f));
  CHECK_OK(cf_session_static(s, 0.5, 1));
  dx = 0;
  for (int i = 0; i < ndof; i++) dx = fmax(dx, fabs(cf_session_x(s)[i] - d2->x[i]));
  CHECK(dx == 0);
  CHECK(cf_session_time(s) == 0 && cf_session_v(s)[3 * node] == 0);
  double ulin[3], unl[3];
  CHECK_OK(cf_session_probe(s, "probe", ulin));
  CHECK_OK(cf_session_static(s, 0.5, 0));  /* co-rotational: stiffer than linear at this load */
  CHECK_OK(cf_session_probe(s, "probe", unl));
  CHECK(unl[0] > 0.5 * ulin[0] && unl[0] < ulin[0]);
  CHECK(cf_session_step(s, 2) >= 0);       /* steps on from the static solution */
  CHECK_OK(cf_session_static(s, 0.0, 0));  /* no load at all: the rest state, no warning */
  CHECK(cf_session_x(s)[3 * node] == cf_session_rest(s)[3 * node]);
  CHECK_OK(cf_session_reset(s));
  CHECK(cf_session_x(s)[0] == cf_session_rest(s)[0] && cf_session_time(s) == 0);

  /* 3. reduction with the "load" set as interface: B K_r^-1 B^T f = K^-1 f for f on it */
  cfReduction r;
  const char* sets[] = {"load"};
  CHECK_OK(cf_session_reduce(s, sets, 1, 4, &r));
  CHECK(r.nb == 3 * nload && r.nk == 4 && r.n == r.nb + 4 && r.orthonormal && r.nrigid == 0);
  memset(f, 0, sizeof(double) * ndof);
  for (int i = 0; i < nload; i++) f[3 * load[i] + 1] = 1e5 / nload;
  cf_data_reset(m2, d2);
  CHECK_OK(cf_linear_static(m2, d2, f));
  double* q = calloc(r.n, sizeof(double));
  double* ur = calloc(ndof, sizeof(double));
  for (int j = 0; j < r.n; j++) {
    for (int i = 0; i < ndof; i++) q[j] += r.basis[(size_t)j * ndof + i] * f[i];
    q[j] /= r.omega2[j];
  }
  cf_reduction_displacement(&r, q, ur);
  double umax = 0, err = 0;
  for (int i = 0; i < nload; i++)
    for (int k = 0; k < 3; k++) {
      int dof = 3 * load[i] + k;
      umax = fmax(umax, fabs(d2->x[dof] - m->X[dof]));
      err = fmax(err, fabs(ur[dof] - (d2->x[dof] - m->X[dof])));
    }
  CHECK(umax > 1e-5);
  CHECK_CLOSE(err / umax, 0, 1e-8, 0);
  cf_reduction_free(&r);
  const char* none[] = {"nope"};
  CHECK(cf_session_reduce(s, none, 1, 4, &r) < 0 && strstr(cf_last_error(), "nope"));
  free(q);
  free(ur);
  free(f);

  /* 4. the little things */
  CHECK(cf_struct_size("cfReduction") == sizeof(cfReduction));
  CHECK(cf_struct_size("cfModelDef") == sizeof(cfModelDef));
  CHECK(cf_struct_size("cfNothing") == 0);
  CHECK(!strcmp(cf_version(), COFEM_VERSION_STRING) && cf_api_version() == COFEM_API_VERSION);
  setenv("COFEM_DATA", "/some/where", 1);
  CHECK(!strcmp(cf_data_dir(), "/some/where"));
  unsetenv("COFEM_DATA");
  CHECK(strlen(cf_data_dir()) > 0);

  cf_data_free(d2);
  cf_model_free(m2);
  cf_scene_free(&sc);
  cf_session_free(s);
  cf_session_free(NULL);
  printf("test_session: %d checks, %d failed\n", cf_test_checks, cf_test_failures);
  return cf_test_failures != 0;
}
