/* cfSession: an FE scene, its model, data and simulation behind one handle (cofem/session.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/session.h"
#include "cofem/sim.h"

#define NEED_SIM(s) \
  if (!(s)->sim) return cf_error(CF_ERR_ARG, "%s: the session lost its simulation (a failed restart)", (s)->scene.path)

struct cfSession {
  cfScene scene;
  cfModel* m;
  cfData* d;
  cfSim* sim;
  double* f_user; /* [ndof] extra forces */
  double* f_tmp;  /* [ndof] scratch */
};

void cf_session_free(cfSession* s) {
  if (!s) return;
  cf_sim_free(s->sim);
  cf_data_free(s->d);
  cf_model_free(s->m);
  cf_scene_free(&s->scene);
  free(s->f_user);
  free(s->f_tmp);
  free(s);
}

/* the scene from its file (json NULL) or from JSON text named scene_path */
static int session_open(const char* json, const char* scene_path, cfSession** out) {
  *out = NULL;
  if (!scene_path) return cf_error(CF_ERR_ARG, "cf_session_open: no scene path");
  cfSession* s = calloc(1, sizeof *s);
  if (!s) return cf_error(CF_ERR_NOMEM, "%s: out of memory", scene_path);
  int st = json ? cf_scene_load_text(json, scene_path, &s->scene) : cf_scene_load(scene_path, &s->scene);
  if (st >= 0) st = cf_scene_build(&s->scene, &s->m, &s->d);
  if (st >= 0) st = cf_sim_create(s->m, s->d, s->scene.backend, &s->sim);
  if (st >= 0) {
    s->f_user = calloc(s->m->ndof, sizeof(double));
    s->f_tmp = calloc(s->m->ndof, sizeof(double));
    if (!s->f_user || !s->f_tmp) st = cf_error(CF_ERR_NOMEM, "%s: out of memory", scene_path);
  }
  if (st < 0) {
    cf_session_free(s);
    return st;
  }
  *out = s;
  return CF_OK;
}

int cf_session_open(const char* scene_path, cfSession** out) { return session_open(NULL, scene_path, out); }

int cf_session_open_text(const char* json, const char* scene_path, cfSession** out) {
  if (!json) {
    *out = NULL;
    return cf_error(CF_ERR_ARG, "cf_session_open_text: no JSON text");
  }
  return session_open(json, scene_path, out);
}

const cfScene* cf_session_scene(const cfSession* s) { return &s->scene; }
const cfModel* cf_session_model(const cfSession* s) { return s->m; }
cfData* cf_session_data(cfSession* s) { return s->d; }
int cf_session_nnode(const cfSession* s) { return s->m->nnode; }
int cf_session_ntet(const cfSession* s) { return s->m->ntet; }
double cf_session_time(const cfSession* s) { return s->d->t; }
double cf_session_dt(const cfSession* s) { return s->m->def.dt; }
double* cf_session_x(cfSession* s) { return s->d->x; }
double* cf_session_v(cfSession* s) { return s->d->v; }
const double* cf_session_rest(const cfSession* s) { return s->m->X; }
double* cf_session_forces(cfSession* s) { return s->f_user; }

int cf_session_step(cfSession* s, int n) {
  NEED_SIM(s);
  if (n < 0) return cf_error(CF_ERR_ARG, "cf_session_step: %d steps", n);
  int worst = CF_OK;
  for (int k = 0; k < n; k++) {
    cf_scene_forces(&s->scene, s->d->t + s->m->def.dt, 1.0, s->d->f_ext);
    for (int i = 0; i < s->m->ndof; i++) s->d->f_ext[i] += s->f_user[i];
    int st = cf_sim_set_forces(s->sim, s->d->f_ext);
    if (st >= 0) st = cf_sim_step(s->sim);
    if (st >= 0) {
      int fst = cf_sim_fetch(s->sim);
      if (fst < 0) st = fst;
    }
    if (st < 0) return st;
    if (st > worst) worst = st;
  }
  return worst;
}

int cf_session_set_supports(cfSession* s, int active) {
  NEED_SIM(s);
  return cf_sim_set_supports(s->sim, active ? 1 : 0);
}

int cf_session_reset(cfSession* s) {
  NEED_SIM(s);
  s->d->supports_active = 1;
  int st = cf_sim_set_supports(s->sim, 1);
  return st < 0 ? st : cf_sim_reset(s->sim);
}

int cf_session_node_set(const cfSession* s, const char* name, const int** nodes) {
  const cfNodeSet* set = name ? cf_mesh_find_nset(&s->scene.mesh, name) : NULL;
  if (!set) return cf_error(CF_ERR_ARG, "%s: no node set '%s'", s->scene.mesh_path, name ? name : "(null)");
  if (nodes) *nodes = set->nodes;
  return set->count;
}

int cf_session_probe(const cfSession* s, const char* name, double u[3]) {
  int n = cf_session_node_set(s, name, NULL);
  if (n < 0) return n;
  cf_set_displacement(&s->scene.mesh, cf_mesh_find_nset(&s->scene.mesh, name), s->d->x, u);
  return CF_OK;
}

void cf_session_von_mises(const cfSession* s, double* out) { cf_von_mises(s->m, s->d, out); }

int cf_session_static(cfSession* s, double scale, int linear) {
  if (!isfinite(scale)) return cf_error(CF_ERR_ARG, "cf_session_static: load scale %g", scale);
  cfScene full = s->scene; /* every load in full, whatever its time profile (as cofem static) */
  for (int l = 0; l < full.nload; l++) full.load[l].t_start = 0, full.load[l].ramp = 0, full.load[l].t_stop = INFINITY;
  double* f = s->f_tmp;
  cf_scene_forces(&full, 0.0, scale, f);
  for (int n = 0; n < s->m->nnode; n++)
    for (int k = 0; k < 3; k++) f[3 * n + k] += scale * s->m->node_mass[n] * s->scene.def.gravity[k] + s->f_user[3 * n + k];
  int st = cf_session_reset(s);
  if (st < 0) return st;
  double fmax_abs = 0;
  for (int i = 0; i < s->m->ndof; i++) fmax_abs = fmax(fmax_abs, fabs(f[i]));
  if (fmax_abs == 0) return CF_OK; /* no load: the rest state (the solver's relative tolerance has no scale) */
  st = linear ? cf_linear_static(s->m, s->d, f) : cf_static_solve(s->m, s->d, f, &s->scene.stat, NULL, NULL);
  memset(s->d->v, 0, sizeof(double) * s->m->ndof);
  s->d->t = 0;
  if (st >= 0 && strcmp(cf_sim_backend_name(s->sim), "cpu")) {
    /* the state lives on the device: start it again from the host's (the static solution) */
    cf_sim_free(s->sim);
    s->sim = NULL;
    int up = cf_sim_create(s->m, s->d, s->scene.backend, &s->sim);
    if (up < 0) return up;
  }
  return st;
}

int cf_session_reduce(const cfSession* s, const char* const* sets, int nsets, int nmodes, cfReduction* out) {
  memset(out, 0, sizeof *out);
  if (nsets < 0 || (nsets > 0 && !sets)) return cf_error(CF_ERR_ARG, "cf_session_reduce: %d sets", nsets);
  int total = 0;
  for (int i = 0; i < nsets; i++) {
    int n = cf_session_node_set(s, sets[i], NULL);
    if (n < 0) return n;
    total += n;
  }
  int* nodes = malloc(sizeof(int) * (total > 0 ? total : 1));
  if (!nodes) return cf_error(CF_ERR_NOMEM, "cf_session_reduce: out of memory");
  total = 0;
  for (int i = 0; i < nsets; i++) {
    const int* set = NULL;
    int n = cf_session_node_set(s, sets[i], &set);
    if (n < 0) break;
    memcpy(nodes + total, set, sizeof(int) * n);
    total += n;
  }
  cfReduceOptions opt = cf_default_reduce_options();
  if (nmodes >= 0) opt.nmodes = nmodes;
  int st = cf_reduce(s->m, nodes, total, &opt, out);
  free(nodes);
  return st;
}

size_t cf_struct_size(const char* name) {
  if (!name) return 0;
  if (!strcmp(name, "cfReduction")) return sizeof(cfReduction);
  if (!strcmp(name, "cfReduceOptions")) return sizeof(cfReduceOptions);
  if (!strcmp(name, "cfModalOptions")) return sizeof(cfModalOptions);
  if (!strcmp(name, "cfStaticOptions")) return sizeof(cfStaticOptions);
  if (!strcmp(name, "cfModelDef")) return sizeof(cfModelDef);
  return 0;
}
