/* Helpers of the tests of corotational FE bodies with "factor": "pcg" (tests/mbs/test_mbs_fe_pcg.c,
 * on the CPU; tests/cuda/test_cuda_mbs_fe.c, the same runs with "backend": "cuda"): the lug hung at
 * its eye, the door on the clamped hinge, a run of N steps and what is compared. */
#ifndef COFEM_TEST_FE_PCG_RUN_H
#define COFEM_TEST_FE_PCG_RUN_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_fe.h"
#include "cofem/modal_part.h"

/* The source tree: COFEM_SOURCE_DIR of the build, or of the environment when set (the device
 * machine runs the bundle's copy in another checkout: tools/gpu-check.sh sets it). */
static char kPath[4096], kHingePath[4096]; /* kPath for relative paths only: the file is not read */
static const char* kSourceDir = COFEM_SOURCE_DIR;
static void fe_pcg_paths(void) {
  const char* src = getenv("COFEM_SOURCE_DIR");
  if (!src || !*src) src = COFEM_SOURCE_DIR;
  kSourceDir = src;
  snprintf(kPath, sizeof kPath, "%s/scenes/mbs/test_fe_pcg.json", src);
  snprintf(kHingePath, sizeof kHingePath, "%s/scenes/mbs/door_on_fe_hinge.json", src);
}

static void lug_json(char* out, size_t n, const char* flexible) {
  snprintf(out, n,
           "{\"gravity\": [0, 0, -9.81],\n"
           " \"bodies\": [{\"name\": \"lug\", \"flexible\": {\"scene\": \"../lug_pull.json\", \"formulation\": "
           "\"corotational\"%s}, \"rotation\": {\"axis\": [0, 1, 0], \"angle\": -0.4}}],\n"
           " \"joints\": [{\"name\": \"pin\", \"type\": \"revolute\", \"body1\": \"ground\", \"body2\": \"lug\", "
           "\"node2\": \"load\", \"axis\": [0, 1, 0]}],\n"
           " \"time\": {\"dt\": 0.01, \"end\": 1.0}}\n",
           flexible);
}

typedef struct {
  double centre[3]; /* FE body 0's centre of mass (or rigid body `rigid`'s position) */
  double reaction;  /* |joint 0's reaction force| */
  long pcg;         /* PCG iterations of FE body 0 */
  long pcg_z;       /* ... of them, the interface columns' */
  int newton;       /* Newton iterations, all steps */
  int ndof;         /* FE body 0's DOFs */
  double bus_h2d, bus_d2h; /* bytes FE body 0's GPU backend copied per step after the first (0 on the CPU) */
  int iface;        /* FE body 0's interface nodes in the linear coupling (cf_mbs_fe_interface_nodes) */
  double kinetic, potential; /* cf_mbs_energy after the last step (g_run_energy: after every step) */
} Run;

/* nstep steps of the scene; precond >= 0 replaces the FE scene's preconditioner, warm >= 0 its
 * warm start; rigid: report that body's origin instead of the FE centre */
static int g_run_coupling = -1; /* >= 0: run() sets the scene's coupling (cf_mbs_scene_set_coupling) */
static int g_run_energy = 0;    /* 1: cf_mbs_energy after every step, as cofem run's mbs.csv (its bytes counted) */
static int run(const char* json, const char* path, int nstep, int precond, int warm, const char* rigid, Run* r) {
  cfMbsScene s;
  memset(r, 0, sizeof *r);
  int st = cf_mbs_scene_parse(json, path, &s);
  if (st < 0) return st;
  if (g_run_coupling >= 0) cf_mbs_scene_set_coupling(&s, g_run_coupling);
  if (precond >= 0) s.flex[0]->model->def.preconditioner = precond;
  if (warm >= 0) s.flex[0]->model->def.warm_start = warm;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  unsigned long long h0 = 0, d0 = 0, h1 = 0, d1 = 0;
  const int on_gpu = st >= 0 && cf_mbs_fe_bus_bytes(m, d, 0, &h0, &d0) >= 0;
  if (!on_gpu) cf_clear_error();
  for (int k = 0; st >= 0 && k < nstep; k++) {
    st = cf_mbs_step(m, d);
    r->newton += d->iters;
    if (st >= 0 && (g_run_energy || k == nstep - 1)) cf_mbs_energy(m, d, &r->kinetic, &r->potential);
    if (k == 0 && on_gpu) cf_mbs_fe_bus_bytes(m, d, 0, &h0, &d0);
  }
  if (st >= 0 && on_gpu && nstep > 1) {
    cf_mbs_fe_bus_bytes(m, d, 0, &h1, &d1);
    r->bus_h2d = (double)(h1 - h0) / (nstep - 1), r->bus_d2h = (double)(d1 - d0) / (nstep - 1);
  }
  if (st >= 0) r->ndof = 3 * s.flex[0]->model->nnode, r->iface = cf_mbs_fe_interface_nodes(m, d, 0, NULL);
  if (st >= 0) {
    int ib = 0;
    if (rigid) {
      const double o[3] = {0, 0, 0};
      cf_mbs_point(m, d, cf_mbs_find_body(m, rigid), o, r->centre);
    } else {
      cf_mbs_fe_centre(m, d, ib, r->centre, NULL);
    }
    double f[3];
    cf_mbs_joint_reaction(m, d, 0, f);
    r->reaction = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    r->pcg = cf_mbs_fe_pcg_iterations(m, d, ib, &r->pcg_z);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return st;
}

static double dist3(const double* a, const double* b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}


/* scenes/mbs/door_on_fe_hinge.json with `flexible` added to the hinge's "flexible" object */
static int hinge_json(char* out, size_t n, const char* flexible) {
  char text[16384];
  FILE* f = fopen(kHingePath, "rb");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot open", kHingePath);
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = 0;
  const char* key = "\"supports\": \"clamp\"";
  const char* at = strstr(text, key);
  if (!at) return cf_error(CF_ERR_SCENE, "%s: no %s", kHingePath, key);
  snprintf(out, n, "%.*s%s%s%s", (int)(at - text), text, key, flexible, at + strlen(key));
  return CF_OK;
}
#endif
