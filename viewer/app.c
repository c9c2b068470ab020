/* The viewer's application logic (see app.h). No OpenGL here. */
#include "app.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "vmath.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

/* steps between recomputations of the picked point's compliance during a drag */
enum { VW_COMPLIANCE_EVERY = 10 };
static const double VW_DEFAULT_G[3] = {0, 0, -9.81};

/* ---- scenes -----------------------------------------------------------------------------------
 */

/* "lug" / "hinge" name the demos in scenes/; anything else is a scene file. */
static void resolve_scene(const char* name, char* out, size_t n) {
  static const char* demo[][2] = {{"lug", "scenes/lug_pull.json"},
                                  {"hinge", "scenes/hinge_pull.json"}};
  if (access(name, R_OK) == 0) {
    snprintf(out, n, "%s", name);
    return;
  }
  for (size_t i = 0; i < sizeof demo / sizeof demo[0]; i++)
    if (!strcmp(name, demo[i][0])) {
      if (access(demo[i][1], R_OK) == 0)
        snprintf(out, n, "%s", demo[i][1]);
      else
        snprintf(out, n, "%s/%s", COFEM_SOURCE_DIR, demo[i][1]);
      return;
    }
  snprintf(out, n, "%s", name);
}

static void free_mbs(vwApp* a);
static void mbs_release(vwApp* a);
double vw_mbs_gain(const vwApp* a, int k);

static void free_scene(vwApp* a) {
  free_mbs(a);
  cf_sim_free(a->sim);
  cf_data_free(a->scratch);
  cf_data_free(a->d);
  cf_model_free(a->m);
  if (a->scene_loaded) cf_scene_free(&a->scene);
  a->sim = NULL;
  a->scratch = NULL;
  a->d = NULL;
  a->m = NULL;
  a->scene_loaded = 0;
  free(a->f_new);
  free(a->corner_ptr);
  free(a->corner_face);
  free(a->edge);
  free(a->fnrm);
  free(a->node_val);
  free(a->elem_vm);
  free(a->node_vol);
  free(a->vbuf);
  free(a->ebuf);
  for (int i = 0; i < 3; i++) free(a->pick.z[i]);
  a->f_new = NULL;
  a->corner_ptr = NULL;
  a->corner_face = NULL;
  a->edge = NULL;
  a->fnrm = NULL;
  a->node_val = NULL;
  a->elem_vm = NULL;
  a->node_vol = NULL;
  a->vbuf = NULL;
  a->ebuf = NULL;
  memset(&a->pick, 0, sizeof a->pick);
  a->ntri = a->nedge = 0;
}

static int cmp_u64(const void* x, const void* y) {
  uint64_t a = *(const uint64_t*)x, b = *(const uint64_t*)y;
  return a < b ? -1 : a > b;
}

/* Corner normal lists (faces at the corner's node within 50 degrees of the corner's face, at
 * rest), unique edges, node volumes, buffers. */
static int build_surface(vwApp* a, const int* tri, int nt, const double* X, int nn) {
  a->ntri = nt;
  int* cnt = calloc((size_t)nn + 1, sizeof(int));
  double* nrest = malloc(sizeof(double) * 3 * (size_t)(nt > 0 ? nt : 1));
  if (!cnt || !nrest) goto nomem;
  for (int t = 0; t < nt; t++) {
    const int* v = tri + 3 * t;
    double e1[3], e2[3];
    v3_sub(e1, X + 3 * v[1], X + 3 * v[0]);
    v3_sub(e2, X + 3 * v[2], X + 3 * v[0]);
    v3_cross(nrest + 3 * t, e1, e2);
    v3_normalize(nrest + 3 * t);
    for (int k = 0; k < 3; k++) cnt[v[k] + 1]++;
  }
  for (int i = 0; i < nn; i++) cnt[i + 1] += cnt[i];
  int* node_tri = malloc(sizeof(int) * (size_t)(cnt[nn] > 0 ? cnt[nn] : 1));
  int* fill = calloc((size_t)nn, sizeof(int));
  if (!node_tri || !fill) {
    free(node_tri);
    free(fill);
    goto nomem;
  }
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      int n = tri[3 * t + k];
      node_tri[cnt[n] + fill[n]++] = t;
    }
  free(fill);
  size_t bound = 0;
  for (int c = 0; c < 3 * nt; c++) {
    int n = tri[c];
    bound += (size_t)(cnt[n + 1] - cnt[n]);
  }
  a->corner_ptr = malloc(sizeof(int) * (3 * (size_t)nt + 1));
  a->corner_face = malloc(sizeof(int) * (bound > 0 ? bound : 1));
  if (!a->corner_ptr || !a->corner_face) {
    free(node_tri);
    goto nomem;
  }
  const double crease = cos(50.0 * M_PI / 180.0);
  int k = 0;
  for (int c = 0; c < 3 * nt; c++) {
    int t = c / 3, n = tri[c];
    a->corner_ptr[c] = k;
    for (int j = cnt[n]; j < cnt[n + 1]; j++) {
      int f = node_tri[j];
      if (f == t || v3_dot(nrest + 3 * f, nrest + 3 * t) > crease) a->corner_face[k++] = f;
    }
  }
  a->corner_ptr[3 * nt] = k;
  free(node_tri);
  /* unique edges */
  uint64_t* keys = malloc(sizeof(uint64_t) * 3 * (size_t)(nt > 0 ? nt : 1));
  if (!keys) goto nomem;
  for (int t = 0; t < nt; t++)
    for (int j = 0; j < 3; j++) {
      uint64_t p = (uint64_t)tri[3 * t + j], q = (uint64_t)tri[3 * t + (j + 1) % 3];
      keys[3 * t + j] = p < q ? (p << 32) | q : (q << 32) | p;
    }
  qsort(keys, 3 * (size_t)nt, sizeof(uint64_t), cmp_u64);
  int ne = 0;
  for (int i = 0; i < 3 * nt; i++)
    if (i == 0 || keys[i] != keys[i - 1]) keys[ne++] = keys[i];
  a->nedge = ne;
  a->edge = malloc(sizeof(int) * 2 * (size_t)(ne > 0 ? ne : 1));
  if (!a->edge) {
    free(keys);
    goto nomem;
  }
  for (int i = 0; i < ne; i++) {
    a->edge[2 * i] = (int)(keys[i] >> 32);
    a->edge[2 * i + 1] = (int)(keys[i] & 0xffffffffu);
  }
  free(keys);
  /* buffers */
  a->fnrm = malloc(sizeof(double) * 3 * (size_t)(nt > 0 ? nt : 1));
  a->node_val = calloc((size_t)nn, sizeof(double));
  a->vbuf = malloc(sizeof(float) * 21 * (size_t)(nt > 0 ? nt : 1));
  a->ebuf = malloc(sizeof(float) * 6 * (size_t)(ne > 0 ? ne : 1));
  if (!a->fnrm || !a->node_val || !a->vbuf || !a->ebuf) goto nomem;
  free(cnt);
  free(nrest);
  return CF_OK;
nomem:
  free(cnt);
  free(nrest);
  return cf_error(CF_ERR_NOMEM, "viewer: out of memory for the surface of %s", a->name);
}

static void reset_timing(vwApp* a) {
  a->acc = 0;
  a->win_wall = a->win_sim = 0;
  a->win_dropped = 0;
  a->rt_ratio = -1;
  a->behind = 0;
}

static int load_mbs(vwApp* a, const char* path);
static void mbs_update(vwApp* a);

static void reset_common(vwApp* a) {
  a->ndiverged = 0;
  a->diverged[0] = 0;
  a->supports = 1;
  a->vmax = 0;
  a->error = 0;
  a->paused = 0;
  a->warn_steps = 0;
  a->last_status = 0;
  a->follow = 0;
  a->mouse_mode = VW_MOUSE_NONE;
  reset_timing(a);
  vw_camera_fit(a);
  vw_app_update_visuals(a);
}

/* One thread on small parts (cf_default_threads, as `cofem run`): the model's OpenMP regions
 * (model_threads, when it is 0) and CHOLMOD's BLAS, which is process-wide and so set back to its
 * first count for a larger scene. */
static int default_threads(long nnode, int* model_threads) {
  static int blas0 = -1;
  if (blas0 < 0) blas0 = cf_blas_threads();
  int one = cf_default_threads(nnode) == 1;
  if (one && model_threads && *model_threads == 0) *model_threads = 1;
  cf_set_blas_threads(one ? 1 : blas0);
  return one;
}

int vw_app_load(vwApp* a, int idx) {
  char path[CF_PATH_MAX];
  resolve_scene(a->opt.scenes[idx], path, sizeof path);
  if (cf_mbs_scene_is_mechanism(path) > 0) {
    int st = load_mbs(a, path);
    if (st < 0) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", cf_last_error());
      free_scene(a);
      return cf_error(st, "%s", msg);
    }
    a->cur = idx;
    const char* base = strrchr(path, '/');
    snprintf(a->name, sizeof a->name, "%s", base ? base + 1 : path);
    a->gravity = 1;
    a->loads = 1;
    if (a->color == VW_COLOR_STRESS) a->color = VW_COLOR_DISP; /* no stress for mechanisms */
    reset_common(a);
    return CF_OK;
  }
  cfScene sc;
  memset(&sc, 0, sizeof sc);
  int st = cf_scene_load(path, &sc);
  if (st < 0) return st;
  free_scene(a);
  a->scene = sc;
  a->scene_loaded = 1;
  a->cur = idx;
  const char* base = strrchr(path, '/');
  snprintf(a->name, sizeof a->name, "%s", base ? base + 1 : path);
  /* gravity is applied as nodal forces M g, so that it can be switched live */
  v3_copy(a->g_scene, a->scene.def.gravity);
  v3_set(a->scene.def.gravity, 0, 0, 0);
  default_threads(a->scene.mesh.nnode, &a->scene.def.threads);
  st = cf_scene_build(&a->scene, &a->m, &a->d);
  if (st < 0) goto fail;
  const char* backend = a->opt.backend ? a->opt.backend : a->scene.backend;
  st = cf_sim_create(a->m, a->d, backend, &a->sim);
  if (st < 0) goto fail;
  st = cf_data_create(a->m, &a->scratch);
  if (st < 0) goto fail;
  const cfModel* m = a->m;
  a->f_new = calloc((size_t)m->ndof, sizeof(double));
  for (int i = 0; i < 3; i++) a->pick.z[i] = calloc((size_t)m->ndof, sizeof(double));
  if (!a->f_new || !a->pick.z[0] || !a->pick.z[1] || !a->pick.z[2]) {
    st = cf_error(CF_ERR_NOMEM, "viewer: out of memory");
    goto fail;
  }
  st = build_surface(a, a->scene.mesh.tri, a->scene.mesh.ntri, m->X, m->nnode);
  if (st < 0) goto fail;
  a->elem_vm = calloc((size_t)m->ntet, sizeof(double));
  a->node_vol = calloc((size_t)m->nnode, sizeof(double));
  if (!a->elem_vm || !a->node_vol) {
    st = cf_error(CF_ERR_NOMEM, "viewer: out of memory for the surface of %s", a->name);
    goto fail;
  }
  for (int e = 0; e < m->ntet; e++)
    for (int j = 0; j < m->npe; j++) a->node_vol[m->tet[(size_t)m->npe * e + j]] += m->vol[e]; /* all nodes, edge nodes too */
  /* size, mass, automatic gain */
  for (int i = 0; i < 3; i++) a->bmin[i] = a->bmax[i] = m->X[i];
  a->mass = 0;
  for (int n = 0; n < m->nnode; n++) {
    for (int i = 0; i < 3; i++) {
      a->bmin[i] = fmin(a->bmin[i], m->X[3 * n + i]);
      a->bmax[i] = fmax(a->bmax[i], m->X[3 * n + i]);
    }
    a->mass += m->node_mass[n];
  }
  double diag[3];
  v3_sub(diag, a->bmax, a->bmin);
  a->L = v3_norm(diag);
  v3_copy(a->fmin, a->bmin), v3_copy(a->fmax, a->bmax);
  a->gain_auto = 0.01 * m->def.E * a->L;
  a->gravity = a->opt.gravity && v3_norm(a->g_scene) > 0;
  reset_common(a);
  return CF_OK;
fail:;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  free_scene(a);
  return cf_error(st, "%s", msg);
}

int vw_app_init(vwApp* a, const vwOptions* opt) {
  memset(a, 0, sizeof *a);
  a->opt = *opt;
  a->color = opt->color;
  a->wireframe = opt->wireframe;
  a->loads = opt->loads;
  a->cam.width = opt->width > 0 ? opt->width : 1280;
  a->cam.height = opt->height > 0 ? opt->height : 800;
  return vw_app_load(a, 0);
}

void vw_app_free(vwApp* a) {
  free_scene(a);
}

void vw_app_reset(vwApp* a) {
  a->diverged[0] = 0;
  if (a->mbs) {
    if (a->pick.active) mbs_release(a);
    cf_mbs_reset(a->mbs->m, a->mbs->d);
    if (a->mbs->sr) { /* the relative coordinates start again from the assembled state */
      cf_mbs_sr_free(a->mbs->sr);
      a->mbs->sr = NULL;
      if (cf_mbs_sr_create(a->mbs->m, a->mbs->d, &a->mbs->sr) < 0) fprintf(stderr, "cofem_view: reset: %s\n", cf_last_error());
    }
    a->error = 0;
    a->pick.active = 0;
    a->pick.valid = 0;
    a->mbs->pick_flex = -1;
    if (a->mouse_mode == VW_MOUSE_PULL) a->mouse_mode = VW_MOUSE_NONE;
    a->vmax = 0;
    reset_timing(a);
    vw_app_update_visuals(a);
    return;
  }
  if (!a->sim) return;
  cf_sim_reset(a->sim);
  cf_sim_set_supports(a->sim, 1);
  a->supports = 1;
  a->error = 0;
  a->warn_steps = 0;
  a->pick.active = 0;
  a->pick.valid = 0;
  for (int i = 0; i < 3; i++) memset(a->pick.z[i], 0, sizeof(double) * a->m->ndof);
  if (a->mouse_mode == VW_MOUSE_PULL) a->mouse_mode = VW_MOUSE_NONE;
  a->vmax = 0;
  reset_timing(a);
  vw_app_update_visuals(a);
}

double vw_gain(const vwApp* a) {
  if (a->mbs) return vw_mbs_gain(a, a->mbs->pick_flex >= 0 ? a->mbs->pick_flex : 0);
  return (a->opt.gain > 0 ? a->opt.gain : a->gain_auto) * pow(2.0, a->gain_exp);
}

static const double* gravity_vec(const vwApp* a) {
  return v3_norm(a->g_scene) > 0 ? a->g_scene : VW_DEFAULT_G;
}

/* ---- the mouse spring -------------------------------------------------------------------------
 */

/* Compliance of the picked point over one step, dx1/df (3x3): three solves with the step matrix
 * A at the current positions (the stages of cofem/fem.h on a host scratch copy), warm-started
 * from the previous solutions. Backward Euler: x1 = x0 + h v1, A v1 = ... + h f, so
 * dx1/df = h^2 A^-1; Newmark: h^2/4 A^-1 per step, twice over two steps (f0 and f1). */
static void compute_compliance(vwApp* a) {
  /* the model as it is, but a looser PCG tolerance: the compliance only scales the spring */
  cfModel mc = *a->m;
  mc.def.pcg_tol = fmax(mc.def.pcg_tol, 1e-4);
  const cfModel* m = &mc;
  cfData* s = a->scratch;
  vwPick* p = &a->pick;
  const double h = m->def.dt;
  const double scale = m->def.integrator == CF_INTEGRATOR_NEWMARK ? 0.5 * h * h : h * h;
  memcpy(s->x, a->d->x, sizeof(double) * m->ndof);
  memset(s->v, 0, sizeof(double) * m->ndof);
  memset(s->f_ext, 0, sizeof(double) * m->ndof);
  s->supports_active = a->supports;
  cf_stage_polar(m, s);
  cf_stage_elastic(m, s);
  cf_stage_assemble_system(m, s, h);
  for (int c = 0; c < 3; c++) {
    memset(s->b, 0, sizeof(double) * m->ndof);
    for (int i = 0; i < 3; i++) s->b[3 * p->node[i] + c] += p->w[i];
    s->b_scale = 0;
    memcpy(s->v, p->z[c], sizeof(double) * m->ndof);
    cf_stage_pcg(m, s);
    memcpy(p->z[c], s->v, sizeof(double) * m->ndof);
    for (int r = 0; r < 3; r++) {
      double x = 0;
      for (int i = 0; i < 3; i++) x += p->w[i] * s->v[3 * p->node[i] + r];
      p->C[3 * r + c] = scale * x;
    }
  }
  for (int r = 0; r < 3; r++)
    for (int c = r + 1; c < 3; c++)
      p->C[3 * r + c] = p->C[3 * c + r] = 0.5 * (p->C[3 * r + c] + p->C[3 * c + r]);
  p->steps_since_C = 0;
  p->C_supports = a->supports;
}

static void pick_point(const vwApp* a, const double* x, double* out) {
  v3_set(out, 0, 0, 0);
  for (int i = 0; i < 3; i++) v3_axpy(out, x + 3 * a->pick.node[i], a->pick.w[i]);
}

/* The spring force for the next step. With the step compliance C of the point, the force is the
 * linearised implicit spring f = k (d - x1), x1 = x_pred + C f, i.e. f = k (I + k C)^-1 (d -
 * x_pred): stable for any gain. x_pred is where the point would go without the drag force:
 * supported, the part is quasi-static at this time step (x0 - C f_prev: the last force taken away);
 * free, it coasts (x0 + h v0 + h^2 g). */
static void drag_force(vwApp* a, double* f) {
  vwPick* p = &a->pick;
  const cfModel* m = a->m;
  const double h = m->def.dt;
  if (p->C_supports != a->supports || p->steps_since_C >= VW_COMPLIANCE_EVERY)
    compute_compliance(a);
  double x[3], pred[3], r[3];
  pick_point(a, a->d->x, x);
  if (a->supports) {
    double cf[3];
    m3_mulv(cf, p->C, p->force);
    v3_sub(pred, x, cf);
  } else {
    double v[3];
    pick_point(a, a->d->v, v);
    v3_copy(pred, x);
    v3_axpy(pred, v, h);
    if (a->gravity) v3_axpy(pred, gravity_vec(a), h * h);
  }
  v3_sub(r, p->target, pred);
  double k = vw_gain(a);
  if (!a->supports) {
    /* Free, a stiff spring would move the point to the cursor in one step and turn the part by
     * tens of degrees per step, which the linearised step cannot follow (it stretches the part,
     * and the elastic forces then blow up). So the gain is capped at k C = 1 (the point covers
     * half the gap per step) and the gap at L / 10 per step. C is dominated by the rigid-body
     * inertia here: h^2 (1/m + r x J^-1 x r). */
    double ct = (p->C[0] + p->C[4] + p->C[8]) / 3;
    if (ct > 0 && k * ct > 1.0) k = 1.0 / ct;
    double rn = v3_norm(r);
    if (rn > 0.1 * a->L) v3_scale(r, r, 0.1 * a->L / rn);
  } else {
    /* A spring much stiffer than the part makes a position constraint that the explicit coupling
     * (one force per step) cannot hold steadily once the part turns and stretches (the hinge's
     * arm pulled along an arc): k C is capped at 10, so the point still goes 90% of the way. */
    double ct = (p->C[0] + p->C[4] + p->C[8]) / 3;
    if (ct > 0 && k * ct > 10.0) k = 10.0 / ct;
  }
  p->k_used = k;
  double M[9], Mi[9];
  for (int i = 0; i < 9; i++) M[i] = k * p->C[i] + (i % 4 == 0 ? 1.0 : 0.0);
  if (!m3_inv(Mi, M)) {
    v3_copy(f, p->force);
    return;
  }
  m3_mulv(f, Mi, r);
  v3_scale(f, f, k);
  if (!a->supports) return;
  /* Supported, the part's response over a step is not exactly C: the step is one linearised
   * (K_R) iteration towards equilibrium, and a preloaded part can be much softer than K_R says
   * (the lug near lateral buckling). The force is therefore relaxed, f += beta (f_new - f),
   * which is stable while beta (1 + k C_true) / (1 + k C) < 2; beta drops when the updates
   * alternate in sign and recovers slowly. */
  double df[3];
  v3_sub(df, f, p->force);
  double dd = v3_dot(df, p->df_prev), nn = v3_norm(df) * v3_norm(p->df_prev);
  if (nn > 0 && dd < -0.3 * nn)
    p->beta = fmax(0.05, 0.6 * p->beta);
  else
    p->beta = fmin(0.5, 1.05 * p->beta);
  v3_scale(df, df, p->beta);
  v3_copy(p->df_prev, df);
  v3_add(f, p->force, df);
}

/* ---- stepping ---------------------------------------------------------------------------------
 */

static int mbs_step(vwApp* a);

/* A step the divergence monitor stopped (CF_ERR_DIVERGED, issue 15): the library's message on
 * stderr as `cofem run` prints it (step, time, what grew, what to try) and on screen; the part is
 * reset to rest instead of drawing the last state (rolled back to the step's start, which may
 * already be far off) and paused, so that the message can be read; P runs it again. */
static void step_diverged(vwApp* a, int st) {
  char msg[sizeof a->diverged];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  const long step = (a->mbs ? a->mbs->d->steps : a->d->steps) + 1;
  const double t = (a->mbs ? a->mbs->d->t : a->d->t) + vw_dt(a);
  fprintf(stderr, "cofem_view: error: %s: %s (%s)\n", a->name, msg, cf_status_name(st));
  fprintf(stderr, "cofem_view: stopped: diverged at step %ld (t = %.6g s); the part was reset to rest and paused "
                  "[P runs it again]\n", step, t);
  vw_app_reset(a);
  a->paused = 1;
  a->ndiverged++;
  snprintf(a->diverged, sizeof a->diverged, "%s", msg);
  snprintf(a->message, sizeof a->message, "diverged at step %ld (t = %.4g s): reset to rest, paused [P]", step, t);
  a->message_until = 1e300;
}

static int do_step(vwApp* a) {
  const cfModel* m = a->m;
  cfData* d = a->d;
  const double h = m->def.dt;
  cf_scene_forces(&a->scene, d->t + h, a->loads ? 1.0 : 0.0, a->f_new);
  if (a->gravity) {
    const double* g = gravity_vec(a);
    for (int n = 0; n < m->nnode; n++)
      for (int i = 0; i < 3; i++) a->f_new[3 * n + i] += m->node_mass[n] * g[i];
  }
  if (a->pick.active) {
    cf_sim_fetch(a->sim); /* the spring needs the current state (CUDA: download) */
    double f[3];
    drag_force(a, f);
    v3_copy(a->pick.force, f);
    for (int i = 0; i < 3; i++) v3_axpy(a->f_new + 3 * a->pick.node[i], f, a->pick.w[i]);
  }
  if (memcmp(a->f_new, d->f_ext, sizeof(double) * m->ndof)) cf_sim_set_forces(a->sim, a->f_new);
  int st = cf_sim_step(a->sim);
  a->last_status = st;
  a->pick.steps_since_C++;
  if (st == CF_ERR_DIVERGED) {
    step_diverged(a, st);
  } else if (st < 0) {
    a->error = 1;
    snprintf(a->message, sizeof a->message, "stopped: %s", cf_last_error());
    a->message_until = 1e300;
    fprintf(stderr, "cofem_view: step failed: %s\n", cf_last_error());
  } else if (st > 0) {
    a->warn_steps++;
  }
  return st;
}

void vw_app_advance(vwApp* a, double wall_dt, double now) {
  (void)now;
  if (!a->sim && !a->mbs) return;
  const double h = vw_dt(a);
  const int fixed = a->opt.fixed_steps > 0;
  int n = 0, dropped = 0, done = 0;
  if (a->paused || a->error) {
    a->acc = 0;
  } else if (fixed) {
    n = a->opt.fixed_steps;
  } else {
    a->acc += wall_dt;
    n = (int)floor(a->acc / h + 1e-9);
  }
  double t0 = cf_wall_time();
  for (; done < n; done++) {
    if (!fixed && (done >= a->opt.max_steps ||
                   (done > 0 && (cf_wall_time() - t0) * 1e3 > a->opt.budget_ms))) {
      dropped = 1;
      break;
    }
    if ((a->mbs ? mbs_step(a) : do_step(a)) < 0) break;
  }
  double sim_ms = (cf_wall_time() - t0) * 1e3;
  if (!fixed) {
    if (dropped)
      a->acc = 0; /* time that could not be simulated is dropped, and said so */
    else
      a->acc -= done * h;
  }
  a->sim_ms = a->sim_ms > 0 ? 0.9 * a->sim_ms + 0.1 * sim_ms : sim_ms;
  a->frame_ms = a->frame_ms > 0 ? 0.9 * a->frame_ms + 0.1 * wall_dt * 1e3 : wall_dt * 1e3;
  /* real-time ratio over windows of half a second */
  if (a->paused || a->error) {
    a->win_wall = a->win_sim = 0;
    a->win_dropped = 0;
    a->behind = 0;
    return;
  }
  a->win_wall += wall_dt;
  a->win_sim += done * h;
  a->win_dropped |= dropped;
  if (a->win_wall >= 0.5) {
    a->rt_ratio = a->win_sim / a->win_wall;
    a->behind = a->win_dropped;
    a->win_wall = a->win_sim = 0;
    a->win_dropped = 0;
  } else if (dropped && !a->behind) {
    a->behind = 1; /* say it at once; the ratio follows at the end of the window */
    if (a->rt_ratio < 0 && a->win_wall > 0) a->rt_ratio = a->win_sim / a->win_wall;
  }
}

static void fill_surface(vwApp* a, const int* tri, const double* x);

/* ---- visuals ----------------------------------------------------------------------------------
 */

void vw_app_update_visuals(vwApp* a) {
  if (a->mbs) {
    mbs_update(a);
    return;
  }
  if (!a->sim) return;
  cf_sim_fetch(a->sim);
  const cfModel* m = a->m;
  const cfData* d = a->d;
  const cfMesh* me = &a->scene.mesh;
  const double* x = d->x;
  /* scalar per node */
  double vmax = 0;
  if (a->color == VW_COLOR_STRESS) {
    /* the .vtu frames' measure (cofem/fem.h): per element, volume-averaged to the nodes */
    cf_von_mises(m, d, a->elem_vm);
    cf_node_average(m, a->elem_vm, 1, a->node_val);
  } else {
    for (int n = 0; n < m->nnode; n++) {
      double u[3];
      v3_sub(u, x + 3 * n, m->X + 3 * n);
      a->node_val[n] = v3_norm(u);
    }
  }
  for (int n = 0; n < m->nnode; n++) vmax = fmax(vmax, a->node_val[n]);
  a->vmax_frame = vmax;
  /* the colour range follows the maximum up at once and down slowly; a floor keeps round-off
   * at rest from being painted over the whole range */
  double floor_v = a->color == VW_COLOR_STRESS ? 1e-4 * m->def.E : 1e-3 * a->L;
  a->vmax = fmax(fmax(vmax, 0.97 * a->vmax), floor_v);
  fill_surface(a, me->tri, x);
  /* camera follows the part's centroid */
  if (a->follow) {
    double c[3] = {0, 0, 0};
    for (int n = 0; n < m->nnode; n++) v3_axpy(c, x + 3 * n, m->node_mass[n] / a->mass);
    double dc[3];
    v3_sub(dc, c, a->follow_ref);
    v3_add(a->cam.target, a->cam.target, dc);
    v3_copy(a->follow_ref, c);
  }
}

/* face normals, then the triangle corners (position, normal, node_val), then the edges */
static void fill_surface(vwApp* a, const int* tri, const double* x) {
  for (int t = 0; t < a->ntri; t++) {
    const int* v = tri + 3 * t;
    double e1[3], e2[3];
    v3_sub(e1, x + 3 * v[1], x + 3 * v[0]);
    v3_sub(e2, x + 3 * v[2], x + 3 * v[0]);
    v3_cross(a->fnrm + 3 * t, e1, e2);
  }
  for (int c = 0; c < 3 * a->ntri; c++) {
    int n = tri[c];
    double nr[3] = {0, 0, 0};
    for (int k = a->corner_ptr[c]; k < a->corner_ptr[c + 1]; k++)
      v3_axpy(nr, a->fnrm + 3 * a->corner_face[k], 1.0);
    v3_normalize(nr);
    float* o = a->vbuf + 7 * (size_t)c;
    for (int i = 0; i < 3; i++) {
      o[i] = (float)x[3 * n + i];
      o[3 + i] = (float)nr[i];
    }
    o[6] = (float)a->node_val[n];
  }
  for (int e = 0; e < a->nedge; e++)
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 3; i++) a->ebuf[6 * e + 3 * j + i] = (float)x[3 * a->edge[2 * e + j] + i];
}

/* ---- mechanism scenes -------------------------------------------------------------------------
 * cf_mbs_scene_is_mechanism(path): the mechanism runs with cf_mbs_step in real time; the flexible
 * bodies' boundary surfaces are concatenated into the surface the FE path draws (a->ntri, vbuf,
 * ebuf), rigid bodies and joints go to xbuf. The mouse pulls an FE body through
 * cf_mbs_fe_set_extra_force: a spring-damper from the picked triangle's point to the cursor,
 * evaluated at the start of each step (explicit), its gain kept below the body's inertia over a
 * step (k h^2 / m = 1/4). */

static void free_mbs(vwApp* a) {
  vwMbs* b = a->mbs;
  if (!b) return;
  cf_mbs_sr_free(b->sr);
  cf_mbs_group_kin_free(b->gk);
  cf_mbs_data_free(b->d);
  cf_mbs_model_free(b->m);
  if (b->s_loaded) cf_mbs_scene_free(&b->s);
  free(b->X);
  free(b->x);
  free(b->x0);
  free(b->tri);
  free(b->tri_flex);
  free(b->fx);
  free(b->fv);
  free(b->fextra);
  free(b);
  a->mbs = NULL;
  free(a->xbuf);
  a->xbuf = NULL;
  a->nxtri = a->nxrigid = a->xcap = 0;
}

double vw_dt(const vwApp* a) {
  if (a->mbs) return a->mbs->m->opt.dt;
  return a->m ? a->m->def.dt : 0.01;
}

const double* vw_surface_x(const vwApp* a) {
  if (a->mbs) return a->mbs->x;
  return a->d ? a->d->x : NULL;
}

const int* vw_surface_tri(const vwApp* a) {
  if (a->mbs) return a->mbs->tri;
  return a->scene.mesh.tri;
}

static void closest_rotation(const double* H, double* R);

/* the nodes of every flexible body into b->x; centroids and the elastic displacement (x less the
 * best rigid motion of the body's rest mesh) into node_val */
static void mbs_gather(vwApp* a) {
  vwMbs* b = a->mbs;
  double vmax = 0;
  for (int k = 0; k < b->nflex; k++) {
    vwMbsFlex* f = &b->flex[k];
    double* x = b->x + 3 * (size_t)f->node0;
    const double* X = b->X + 3 * (size_t)f->node0;
    if (f->fe >= 0)
      cf_mbs_fe_nodes(b->m, b->d, f->fe, x, NULL);
    else
      cf_mbs_modal_nodes(b->m, b->d, f->modal, x, NULL);
    double cx[3] = {0, 0, 0}, cX[3] = {0, 0, 0}, H[9] = {0}, R[9];
    for (int n = 0; n < f->nnode; n++) {
      v3_axpy(cx, x + 3 * n, 1.0 / f->nnode);
      v3_axpy(cX, X + 3 * n, 1.0 / f->nnode);
    }
    for (int n = 0; n < f->nnode; n++) {
      double p[3], q[3];
      v3_sub(p, x + 3 * n, cx);
      v3_sub(q, X + 3 * n, cX);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) H[3 * i + j] += p[i] * q[j];
    }
    closest_rotation(H, R);
    f->uel_max = 0;
    for (int n = 0; n < f->nnode && f->clamped; n++) {
      double e[3];
      v3_sub(e, x + 3 * n, b->x0 + 3 * (size_t)(f->node0 + n));
      a->node_val[f->node0 + n] = v3_norm(e);
      f->uel_max = fmax(f->uel_max, a->node_val[f->node0 + n]);
    }
    for (int n = 0; n < f->nnode && !f->clamped; n++) {
      double q[3], rq[3], e[3];
      v3_sub(q, X + 3 * n, cX);
      m3_mulv(rq, R, q);
      v3_add(rq, rq, cx);
      v3_sub(e, x + 3 * n, rq);
      double u = v3_norm(e);
      a->node_val[f->node0 + n] = u;
      f->uel_max = fmax(f->uel_max, u);
    }
    v3_copy(f->c, cx);
    vmax = fmax(vmax, f->uel_max);
  }
  a->vmax_frame = vmax;
  a->vmax = fmax(fmax(vmax, 0.97 * a->vmax), 1e-6 * a->L);
}

/* global position of joint j (its point on the body whose point can be evaluated) */
static void mbs_joint_pos(const vwMbs* b, int j, double* x) {
  const cfMbsModel* m = b->m;
  for (int slot = 0; slot < 2; slot++) {
    int body = m->joint_body[2 * j + slot], mp = m->joint_mpoint[2 * j + slot];
    const double* p = m->joint_frame + 24 * j + 12 * slot;
    if (mp >= 0) {
      int fe = cf_mbs_fe_index(m, body), mo = cf_mbs_modal_index(m, body);
      if (fe >= 0) {
        cf_mbs_fe_point(m, b->d, fe, mp, x);
        return;
      }
      if (mo >= 0) {
        int idx = -1;
        for (int i = 0; i < b->s.def.nmodal; i++)
          if (b->s.def.modal[i].body == body) idx = i;
        if (idx >= 0 && mp < b->s.def.modal[idx].npoint) {
          const cfMbsModalPoint* pt = &b->s.def.modal[idx].point[mp];
          v3_set(x, 0, 0, 0);
          for (int i = 0; i < pt->nnode; i++) {
            double y[3];
            cf_mbs_modal_node(m, b->d, mo, pt->nodes[i], y, NULL);
            v3_axpy(x, y, 1.0 / pt->nnode);
          }
          return;
        }
      }
      continue;
    }
    if (body == CF_MBS_GROUND) {
      v3_copy(x, p);
      return;
    }
    if (cf_mbs_fe_index(m, body) >= 0) continue;
    cf_mbs_point(m, b->d, body, p, x);
    return;
  }
  v3_set(x, 0, 0, 0);
}

/* a drawable rigid body: not virtual, not a flexible body's frame or node / amplitude block */
static int mbs_rigid(const cfMbsModel* m, int body) {
  return !m->body_virtual[body] && m->body_modal[body] == 0 && cf_mbs_fe_index(m, body) < 0 &&
         m->body_mass[body] > 0;
}

/* the box drawn for a rigid body: its centre (body coordinates) and half extents: the scene's
 * "shape", else the box with the body's mass and (diagonal) inertia about the com */
static void mbs_box(const cfMbsModel* m, int body, double* ctr, double* h) {
  const double* S = m->body_shape + 6 * body;
  if (S[3] > 0 && S[4] > 0 && S[5] > 0) {
    for (int i = 0; i < 3; i++) ctr[i] = S[i], h[i] = 0.5 * S[3 + i];
    return;
  }
  for (int i = 0; i < 3; i++) ctr[i] = m->body_com[3 * body + i];
  const double* I = m->body_inertia + 6 * body;
  double mass = m->body_mass[body], e2[3];
  e2[0] = 6 * (I[1] + I[2] - I[0]) / mass;
  e2[1] = 6 * (I[0] + I[2] - I[1]) / mass;
  e2[2] = 6 * (I[0] + I[1] - I[2]) / mass;
  double emax = 0;
  for (int i = 0; i < 3; i++) emax = fmax(emax, sqrt(fmax(e2[i], 0)));
  if (!(emax > 0)) emax = 0.05;
  for (int i = 0; i < 3; i++) h[i] = 0.5 * fmax(sqrt(fmax(e2[i], 0)), 0.04 * emax);
}

static int xbuf_reserve(vwApp* a, int ntri) {
  if (a->nxtri + ntri <= a->xcap) return 1;
  int cap = a->xcap ? a->xcap : 256;
  while (cap < a->nxtri + ntri) cap *= 2;
  float* v = realloc(a->xbuf, sizeof(float) * 21 * (size_t)cap);
  if (!v) return 0;
  a->xbuf = v;
  a->xcap = cap;
  return 1;
}

static void xbuf_tri(vwApp* a, const double* p0, const double* p1, const double* p2,
                     const double* n0, const double* n1, const double* n2) {
  if (!xbuf_reserve(a, 1)) return;
  float* o = a->xbuf + 21 * (size_t)a->nxtri++;
  const double *p[3] = {p0, p1, p2}, *n[3] = {n0, n1, n2};
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 3; i++) {
      o[7 * k + i] = (float)p[k][i];
      o[7 * k + 3 + i] = (float)n[k][i];
    }
    o[7 * k + 6] = 0;
  }
}

static void mbs_solids(vwApp* a) {
  vwMbs* b = a->mbs;
  const cfMbsModel* m = b->m;
  a->nxtri = 0;
  for (int body = 0; body < m->nbody; body++) {
    if (!mbs_rigid(m, body)) continue;
    double h[3], R[9], com[3];
    mbs_box(m, body, com, h);
    cf_mbs_rotation(m, b->d, body, R);
    for (int ax = 0; ax < 3; ax++)
      for (int sg = -1; sg <= 1; sg += 2) {
        int u = (ax + 1) % 3, v = (ax + 2) % 3;
        double c[4][3], n[3];
        for (int k = 0; k < 4; k++) {
          double p[3];
          p[ax] = com[ax] + sg * h[ax];
          p[u] = com[u] + ((k == 1 || k == 2) ? h[u] : -h[u]) * sg;
          p[v] = com[v] + (k >= 2 ? h[v] : -h[v]);
          cf_mbs_point(m, b->d, body, p, c[k]);
        }
        for (int i = 0; i < 3; i++) n[i] = sg * R[3 * i + ax];
        xbuf_tri(a, c[0], c[1], c[2], n, n, n);
        xbuf_tri(a, c[0], c[2], c[3], n, n, n);
      }
  }
  a->nxrigid = a->nxtri;
  /* joints: spheres of radius 1.2% of the scene's size, or 5% of the smallest flexible body's */
  const int ns = 6, nl = 10;
  double r = 0.012 * a->L;
  for (int k = 0; k < b->nflex; k++) {
    const vwMbsFlex* f = &b->flex[k];
    double lo[3], hi[3], dd[3];
    for (int i = 0; i < 3; i++) lo[i] = hi[i] = b->X[3 * (size_t)f->node0 + i];
    for (int n = 0; n < f->nnode; n++)
      for (int i = 0; i < 3; i++) {
        lo[i] = fmin(lo[i], b->X[3 * (size_t)(f->node0 + n) + i]);
        hi[i] = fmax(hi[i], b->X[3 * (size_t)(f->node0 + n) + i]);
      }
    v3_sub(dd, hi, lo);
    r = fmin(r, 0.05 * v3_norm(dd));
  }
  for (int j = 0; j < m->njoint; j++) {
    double c[3];
    mbs_joint_pos(b, j, c);
    for (int i = 0; i < ns; i++)
      for (int k = 0; k < nl; k++) {
        double pt[4][3], nr[4][3];
        for (int q = 0; q < 4; q++) {
          int ii = i + (q >= 2), kk = k + (q == 1 || q == 2);
          double th = M_PI * ii / ns, ph = 2 * M_PI * kk / nl;
          double d[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)};
          v3_copy(nr[q], d);
          v3_copy(pt[q], c);
          v3_axpy(pt[q], d, r);
        }
        xbuf_tri(a, pt[0], pt[1], pt[2], nr[0], nr[1], nr[2]);
        xbuf_tri(a, pt[0], pt[2], pt[3], nr[0], nr[2], nr[3]);
      }
  }
}

static void mbs_update(vwApp* a) {
  mbs_gather(a);
  fill_surface(a, a->mbs->tri, a->mbs->x);
  mbs_solids(a);
  if (a->follow && a->mbs->nflex > 0) {
    double dc[3];
    v3_sub(dc, a->mbs->flex[0].c, a->follow_ref);
    v3_add(a->cam.target, a->cam.target, dc);
    v3_copy(a->follow_ref, a->mbs->flex[0].c);
  }
}

static int load_mbs(vwApp* a, const char* path) {
  vwMbs* b = calloc(1, sizeof *b);
  if (!b) return cf_error(CF_ERR_NOMEM, "viewer: out of memory");
  int st = cf_mbs_scene_load(path, &b->s);
  if (st < 0) {
    free(b);
    return st;
  }
  b->s_loaded = 1;
  free_scene(a);
  a->mbs = b;
  /* interactive: the corotational FE bodies by the linear coupling and the PCG unless the scene chose
   * (the door on the FE hinge: 1.2x real time against the Newton coupling's 0.7x, docs/mbs.md) */
  cf_mbs_scene_interactive(&b->s);
  /* --backend moves the corotational FE bodies as `cofem run --backend` does (the multibody core
   * runs on the CPU) */
  if (a->opt.backend) {
    static const char* const backends[] = {"cpu", "cuda", "auto"};
    int backend = -1;
    for (int k = 0; k < 3; k++)
      if (!strcmp(a->opt.backend, backends[k])) backend = k;
    if ((st = cf_mbs_scene_set_backend(&b->s, backend)) < 0) return st;
  }
  int one = default_threads(cf_mbs_scene_fe_nodes(&b->s), NULL);
  for (int k = 0; one && k < b->s.nflex; k++) /* the FE bodies' stages (read at every step) */
    if (b->s.flex[k]->model && !b->s.flex[k]->model->def.threads) b->s.flex[k]->model->def.threads = 1;
  st = cf_mbs_model_create(&b->s.def, &b->m);
  if (st >= 0) st = cf_mbs_data_create(b->m, &b->d);
  /* the scene's formulation, as `cofem run` and the sessions take it */
  if (st >= 0 && b->s.formulation == CF_MBS_SEMI_RECURSIVE) st = cf_mbs_sr_create(b->m, b->d, &b->sr);
  if (st >= 0 && b->s.formulation == CF_MBS_STRUCTURAL_GROUPS) st = cf_mbs_group_kin_create(b->m, &b->gk);
  if (st < 0) return st;
  const cfMbsModel* m = b->m;
  /* the flexible bodies' meshes, concatenated */
  int nn = 0, nt = 0, nmax = 1;
  for (int k = 0; k < b->s.nflex; k++) {
    vwMbsFlex* f = &b->flex[b->nflex++];
    f->body = b->s.flex_body[k];
    f->fe = cf_mbs_fe_index(m, f->body);
    f->modal = f->fe >= 0 ? -1 : cf_mbs_modal_index(m, f->body);
    f->mesh = &b->s.flex[k]->scene.mesh;
    f->nnode = f->mesh->nnode;
    f->node0 = nn;
    f->mass = f->fe >= 0 ? cf_mbs_fe_total_mass(m, f->fe) : 0;
    if (f->fe >= 0) {
      const cfModel* fem = cf_mbs_fe_model(m, f->fe);
      for (int i = 0; i < 3 * fem->nnode && fem->fixed; i++) f->clamped |= fem->fixed[i] != 0;
    }
    nn += f->nnode;
    nt += f->mesh->ntri;
    if (f->nnode > nmax) nmax = f->nnode;
  }
  b->nnode = nn;
  b->X = malloc(sizeof(double) * 3 * (size_t)(nn > 0 ? nn : 1));
  b->x = malloc(sizeof(double) * 3 * (size_t)(nn > 0 ? nn : 1));
  b->x0 = malloc(sizeof(double) * 3 * (size_t)(nn > 0 ? nn : 1));
  b->tri = malloc(sizeof(int) * 3 * (size_t)(nt > 0 ? nt : 1));
  b->tri_flex = malloc(sizeof(int) * (size_t)(nt > 0 ? nt : 1));
  b->fx = malloc(sizeof(double) * 3 * (size_t)nmax);
  b->fv = malloc(sizeof(double) * 3 * (size_t)nmax);
  b->fextra = calloc(3 * (size_t)nmax, sizeof(double));
  if (!b->X || !b->x || !b->x0 || !b->tri || !b->tri_flex || !b->fx || !b->fv || !b->fextra)
    return cf_error(CF_ERR_NOMEM, "viewer: out of memory");
  nt = 0;
  for (int k = 0; k < b->nflex; k++) {
    vwMbsFlex* f = &b->flex[k];
    memcpy(b->X + 3 * (size_t)f->node0, f->mesh->X, sizeof(double) * 3 * (size_t)f->nnode);
    for (int t = 0; t < f->mesh->ntri; t++) {
      for (int i = 0; i < 3; i++) b->tri[3 * nt + i] = f->mesh->tri[3 * t + i] + f->node0;
      b->tri_flex[nt++] = k;
    }
  }
  /* the current positions first: the surface's crease normals are taken from the rest shape
   * as placed in the mechanism at t = 0 */
  for (int k = 0; k < b->nflex; k++) {
    vwMbsFlex* f = &b->flex[k];
    double* x = b->x + 3 * (size_t)f->node0;
    if (f->fe >= 0)
      cf_mbs_fe_nodes(m, b->d, f->fe, x, NULL);
    else
      cf_mbs_modal_nodes(m, b->d, f->modal, x, NULL);
  }
  memcpy(b->x0, b->x, sizeof(double) * 3 * (size_t)(nn > 0 ? nn : 1));
  st = build_surface(a, b->tri, nt, b->x, nn);
  if (st < 0) return st;
  /* size: flexible bodies' nodes, rigid bodies' boxes, joints */
  int first = 1;
#define VW_GROW(p)                                                 \
  do {                                                             \
    for (int i_ = 0; i_ < 3; i_++) {                               \
      a->bmin[i_] = first ? (p)[i_] : fmin(a->bmin[i_], (p)[i_]); \
      a->bmax[i_] = first ? (p)[i_] : fmax(a->bmax[i_], (p)[i_]); \
    }                                                              \
    first = 0;                                                     \
  } while (0)
  for (int n = 0; n < nn; n++) VW_GROW(b->x + 3 * n);
  for (int body = 0; body < m->nbody; body++) {
    if (!mbs_rigid(m, body)) continue;
    double h[3], ctr[3];
    mbs_box(m, body, ctr, h);
    for (int c = 0; c < 8; c++) {
      double p[3], x[3];
      for (int i = 0; i < 3; i++) p[i] = ctr[i] + ((c >> i) & 1 ? h[i] : -h[i]);
      cf_mbs_point(m, b->d, body, p, x);
      VW_GROW(x);
    }
  }
  for (int j = 0; j < m->njoint; j++) {
    double x[3];
    mbs_joint_pos(b, j, x);
    VW_GROW(x);
  }
#undef VW_GROW
  if (first) {
    v3_set(a->bmin, -0.5, -0.5, -0.5);
    v3_set(a->bmax, 0.5, 0.5, 0.5);
  }
  double diag[3];
  v3_sub(diag, a->bmax, a->bmin);
  a->L = fmax(v3_norm(diag), 1e-3);
  /* the view frames the flexible bodies when they are under a fifth of the scene's size */
  v3_copy(a->fmin, a->bmin), v3_copy(a->fmax, a->bmax);
  if (nn > 0) {
    double lo[3], hi[3], df[3];
    v3_copy(lo, b->x), v3_copy(hi, b->x);
    for (int n = 1; n < nn; n++)
      for (int i = 0; i < 3; i++) lo[i] = fmin(lo[i], b->x[3 * n + i]), hi[i] = fmax(hi[i], b->x[3 * n + i]);
    v3_sub(df, hi, lo);
    if (5 * v3_norm(df) < a->L) v3_copy(a->fmin, lo), v3_copy(a->fmax, hi);
  }
  for (int k = 0; k < b->nflex; k++) {
    vwMbsFlex* f = &b->flex[k];
    v3_set(f->c0, 0, 0, 0);
    for (int n = 0; n < f->nnode; n++) v3_axpy(f->c0, b->x + 3 * (size_t)(f->node0 + n), 1.0 / f->nnode);
  }
  b->pick_flex = -1;
  return CF_OK;
}

double vw_mbs_gain(const vwApp* a, int k) {
  const vwMbs* b = a->mbs;
  double h = b->m->opt.dt, mass = k >= 0 && k < b->nflex ? b->flex[k].mass : 0;
  double base = a->opt.gain > 0 ? a->opt.gain : 0.25 * mass / (h * h);
  return base * pow(2.0, a->gain_exp);
}

/* the mouse spring on FE body pick_flex: nodal forces for the next step */
static void mbs_drag_force(vwApp* a) {
  vwMbs* b = a->mbs;
  vwPick* p = &a->pick;
  const vwMbsFlex* f = &b->flex[b->pick_flex];
  cf_mbs_fe_nodes(b->m, b->d, f->fe, b->fx, b->fv);
  double x[3] = {0, 0, 0}, v[3] = {0, 0, 0}, r[3];
  for (int i = 0; i < 3; i++) {
    int n = p->node[i] - f->node0;
    v3_axpy(x, b->fx + 3 * n, p->w[i]);
    v3_axpy(v, b->fv + 3 * n, p->w[i]);
  }
  double k = vw_mbs_gain(a, b->pick_flex), c = sqrt(k * f->mass);
  v3_sub(r, p->target, x);
  v3_scale(p->force, r, k);
  v3_axpy(p->force, v, -c);
  p->k_used = k;
  memset(b->fextra, 0, sizeof(double) * 3 * (size_t)f->nnode);
  for (int i = 0; i < 3; i++) v3_axpy(b->fextra + 3 * (p->node[i] - f->node0), p->force, p->w[i]);
  cf_mbs_fe_set_extra_force(b->m, b->d, f->fe, b->fextra);
}

static void mbs_release(vwApp* a) {
  vwMbs* b = a->mbs;
  if (b->pick_flex >= 0 && b->flex[b->pick_flex].fe >= 0)
    cf_mbs_fe_set_extra_force(b->m, b->d, b->flex[b->pick_flex].fe, NULL);
  v3_set(a->pick.force, 0, 0, 0);
}

static int mbs_step(vwApp* a) {
  vwMbs* b = a->mbs;
  if (a->pick.active && b->pick_flex >= 0) mbs_drag_force(a);
  double t0 = cf_wall_time();
  int st = b->gk ? cf_mbs_group_kin_step(b->m, b->gk, b->d) : b->sr ? cf_mbs_sr_step(b->m, b->sr, b->d) : cf_mbs_step(b->m, b->d);
  double ms = (cf_wall_time() - t0) * 1e3;
  b->step_ms = b->step_ms > 0 ? 0.9 * b->step_ms + 0.1 * ms : ms;
  a->last_status = st;
  if (st == CF_ERR_DIVERGED) {
    step_diverged(a, st);
  } else if (st < 0) {
    a->error = 1;
    snprintf(a->message, sizeof a->message, "stopped: %s", cf_last_error());
    a->message_until = 1e300;
    fprintf(stderr, "cofem_view: step failed: %s\n", cf_last_error());
  }
  return st;
}

static int mbs_start_pull(vwApp* a, double sx, double sy) {
  vwMbs* b = a->mbs;
  double o[3], dir[3], w[3], t;
  vw_ray(&a->cam, sx, sy, o, dir);
  int tri = vw_raycast(a, o, dir, w, &t);
  if (tri < 0) return 0;
  int k = b->tri_flex[tri];
  if (b->flex[k].fe < 0) return 0; /* modal bodies are not pulled (yet) */
  vwPick* p = &a->pick;
  p->tri = tri;
  for (int i = 0; i < 3; i++) {
    p->node[i] = b->tri[3 * tri + i];
    p->w[i] = w[i];
  }
  b->pick_flex = k;
  pick_point(a, b->X, p->rest);
  pick_point(a, b->x, p->pos0);
  vw_camera_basis(&a->cam, NULL, p->plane_n, NULL, NULL);
  v3_copy(p->target, p->pos0);
  v3_set(p->force, 0, 0, 0);
  p->active = p->valid = 1;
  return 1;
}

/* ---- camera -----------------------------------------------------------------------------------
 */

void vw_camera_basis(const vwCamera* c, double* eye, double* fwd, double* right, double* up) {
  double o[3] = {cos(c->pitch) * sin(c->yaw), -cos(c->pitch) * cos(c->yaw), sin(c->pitch)};
  double f[3], r[3], u[3], z[3] = {0, 0, 1};
  v3_scale(f, o, -1);
  v3_cross(r, f, z);
  v3_normalize(r);
  v3_cross(u, r, f);
  if (eye) {
    v3_copy(eye, c->target);
    v3_axpy(eye, o, c->dist);
  }
  if (fwd) v3_copy(fwd, f);
  if (right) v3_copy(right, r);
  if (up) v3_copy(up, u);
}

void vw_camera_fit(vwApp* a) {
  vwCamera* c = &a->cam;
  for (int i = 0; i < 3; i++) c->target[i] = 0.5 * (a->fmin[i] + a->fmax[i]);
  c->fovy = 30.0 * M_PI / 180.0;
  c->yaw = 25.0 * M_PI / 180.0;
  c->pitch = 20.0 * M_PI / 180.0;
  /* distance at which the box's corners fill 70% of the height and 65% of the width (the legend
   * takes the right edge) */
  double f[3], r[3], u[3], th = tan(0.5 * c->fovy), aspect = (double)c->width / c->height;
  vw_camera_basis(c, NULL, f, r, u);
  c->dist = 0;
  for (int k = 0; k < 8; k++) {
    double q[3] = {(k & 1 ? a->fmax : a->fmin)[0] - c->target[0],
                   (k & 2 ? a->fmax : a->fmin)[1] - c->target[1],
                   (k & 4 ? a->fmax : a->fmin)[2] - c->target[2]};
    double need = fmax(fabs(v3_dot(q, r)) / (0.65 * th * aspect), fabs(v3_dot(q, u)) / (0.7 * th)) -
                  v3_dot(q, f);
    c->dist = fmax(c->dist, need);
  }
  if (!(c->dist > 0)) c->dist = a->L;
}

int vw_project(const vwCamera* c, const double* p, double* sx, double* sy) {
  double eye[3], f[3], r[3], u[3], q[3];
  vw_camera_basis(c, eye, f, r, u);
  v3_sub(q, p, eye);
  double zc = v3_dot(q, f);
  if (zc <= 1e-12) return 0;
  double th = tan(0.5 * c->fovy), aspect = (double)c->width / c->height;
  *sx = (v3_dot(q, r) / (zc * th * aspect) + 1) * 0.5 * c->width;
  *sy = (1 - v3_dot(q, u) / (zc * th)) * 0.5 * c->height;
  return 1;
}

void vw_ray(const vwCamera* c, double sx, double sy, double* origin, double* dir) {
  double f[3], r[3], u[3];
  vw_camera_basis(c, origin, f, r, u);
  double th = tan(0.5 * c->fovy), aspect = (double)c->width / c->height;
  double nx = 2 * sx / c->width - 1, ny = 1 - 2 * sy / c->height;
  v3_copy(dir, f);
  v3_axpy(dir, r, nx * th * aspect);
  v3_axpy(dir, u, ny * th);
  v3_normalize(dir);
}

void vw_camera_matrices(const vwCamera* c, double znear_scale, float* view, float* proj) {
  double eye[3], f[3], r[3], u[3];
  vw_camera_basis(c, eye, f, r, u);
  /* view: rows r, u, -f (column-major storage) */
  double V[16] = {r[0],
                  u[0],
                  -f[0],
                  0,
                  r[1],
                  u[1],
                  -f[1],
                  0,
                  r[2],
                  u[2],
                  -f[2],
                  0,
                  -v3_dot(r, eye),
                  -v3_dot(u, eye),
                  v3_dot(f, eye),
                  1};
  double zn = c->dist * znear_scale, zf = c->dist * 100.0;
  double th = tan(0.5 * c->fovy), aspect = (double)c->width / c->height;
  double P[16] = {0};
  P[0] = 1 / (th * aspect);
  P[5] = 1 / th;
  P[10] = -(zf + zn) / (zf - zn);
  P[11] = -1;
  P[14] = -2 * zf * zn / (zf - zn);
  for (int i = 0; i < 16; i++) {
    view[i] = (float)V[i];
    proj[i] = (float)P[i];
  }
}

void vw_app_set_size(vwApp* a, int width, int height) {
  a->cam.width = width > 0 ? width : 1;
  a->cam.height = height > 0 ? height : 1;
}

/* ---- picking ----------------------------------------------------------------------------------
 */

int vw_raycast(const vwApp* a, const double* o, const double* dir, double* w, double* tout) {
  const int* tri = vw_surface_tri(a);
  const double* x = vw_surface_x(a);
  int best = -1;
  double tbest = 1e300;
  for (int t = 0; t < a->ntri; t++) {
    /* Moller-Trumbore */
    const double *p0 = x + 3 * tri[3 * t], *p1 = x + 3 * tri[3 * t + 1], *p2 = x + 3 * tri[3 * t + 2];
    double e1[3], e2[3], pv[3], tv[3], qv[3];
    v3_sub(e1, p1, p0);
    v3_sub(e2, p2, p0);
    v3_cross(pv, dir, e2);
    double det = v3_dot(e1, pv);
    if (fabs(det) < 1e-300) continue;
    double inv = 1.0 / det;
    v3_sub(tv, o, p0);
    double u = v3_dot(tv, pv) * inv;
    if (u < -1e-9 || u > 1 + 1e-9) continue;
    v3_cross(qv, tv, e1);
    double v = v3_dot(dir, qv) * inv;
    if (v < -1e-9 || u + v > 1 + 1e-9) continue;
    double t_hit = v3_dot(e2, qv) * inv;
    if (t_hit > 0 && t_hit < tbest) {
      tbest = t_hit;
      best = t;
      w[0] = 1 - u - v;
      w[1] = u;
      w[2] = v;
    }
  }
  if (best >= 0 && tout) *tout = tbest;
  return best;
}

static void drag_target(vwApp* a, double sx, double sy) {
  double o[3], dir[3], q[3];
  vw_ray(&a->cam, sx, sy, o, dir);
  double den = v3_dot(dir, a->pick.plane_n);
  if (fabs(den) < 1e-9) return;
  v3_sub(q, a->pick.pos0, o);
  double t = v3_dot(q, a->pick.plane_n) / den;
  v3_copy(a->pick.target, o);
  v3_axpy(a->pick.target, dir, t);
}

static int mbs_start_pull(vwApp* a, double sx, double sy);

static int start_pull(vwApp* a, double sx, double sy) {
  if (a->mbs) return mbs_start_pull(a, sx, sy);
  double o[3], dir[3], w[3], t;
  cf_sim_fetch(a->sim);
  vw_ray(&a->cam, sx, sy, o, dir);
  int tri = vw_raycast(a, o, dir, w, &t);
  if (tri < 0) return 0;
  vwPick* p = &a->pick;
  p->tri = tri;
  for (int i = 0; i < 3; i++) {
    p->node[i] = a->scene.mesh.tri[3 * tri + i];
    p->w[i] = w[i];
  }
  pick_point(a, a->m->X, p->rest);
  pick_point(a, a->d->x, p->pos0);
  vw_camera_basis(&a->cam, NULL, p->plane_n, NULL, NULL);
  v3_copy(p->target, p->pos0);
  v3_set(p->force, 0, 0, 0);
  v3_set(p->df_prev, 0, 0, 0);
  p->beta = 0.5;
  for (int i = 0; i < 3; i++) memset(p->z[i], 0, sizeof(double) * a->m->ndof);
  compute_compliance(a);
  p->active = p->valid = 1;
  return 1;
}

void vw_app_mouse_button(vwApp* a, int button, int press, int mods, double x, double y) {
  a->mx = x;
  a->my = y;
  if (!press) {
    if (a->mouse_mode == VW_MOUSE_PULL) {
      if (a->mbs) mbs_release(a);
      a->pick.active = 0;
      v3_set(a->pick.force, 0, 0, 0);
    }
    a->mouse_mode = VW_MOUSE_NONE;
    return;
  }
  if ((!a->sim && !a->mbs) || a->mouse_mode != VW_MOUSE_NONE) return;
  a->press_x = x;
  a->press_y = y;
  if (button == VW_BUTTON_LEFT && (mods & VW_MOD_SHIFT)) {
    a->mouse_mode = VW_MOUSE_PAN;
  } else if (button == VW_BUTTON_LEFT) {
    if (!(mods & VW_MOD_CTRL) && start_pull(a, x, y))
      a->mouse_mode = VW_MOUSE_PULL;
    else
      a->mouse_mode = VW_MOUSE_ORBIT;
  } else {
    a->mouse_mode = VW_MOUSE_PAN;
  }
}

void vw_app_cursor(vwApp* a, double x, double y) {
  double dx = x - a->mx, dy = y - a->my;
  a->mx = x;
  a->my = y;
  vwCamera* c = &a->cam;
  switch (a->mouse_mode) {
    case VW_MOUSE_ORBIT:
      c->yaw -= dx * 0.005;
      c->pitch = fmax(-1.55, fmin(1.55, c->pitch + dy * 0.005));
      break;
    case VW_MOUSE_PAN: {
      double r[3], u[3], s = 2 * c->dist * tan(0.5 * c->fovy) / c->height;
      vw_camera_basis(c, NULL, NULL, r, u);
      v3_axpy(c->target, r, -dx * s);
      v3_axpy(c->target, u, dy * s);
      break;
    }
    case VW_MOUSE_PULL:
      drag_target(a, x, y);
      break;
    default:
      break;
  }
}

void vw_app_scroll(vwApp* a, double dy) {
  a->cam.dist *= pow(0.9, dy);
  if (a->mouse_mode == VW_MOUSE_PULL) drag_target(a, a->mx, a->my);
}

/* ---- keys -------------------------------------------------------------------------------------
 */

static void say(vwApp* a, double now, const char* msg) {
  snprintf(a->message, sizeof a->message, "%s", msg);
  a->message_until = now + 2.5;
}

int vw_app_key(vwApp* a, int key, int mods, double now) {
  char msg[256];
  switch (key) {
    case VW_KEY_ESCAPE:
    case 'Q':
      return 1;
    case 'P':
    case ' ':
      a->paused = !a->paused;
      if (!a->paused && a->diverged[0]) { /* running again after a divergence: the note goes */
        a->diverged[0] = 0;
        a->message_until = 0;
      }
      break;
    case 'R':
      vw_app_reset(a);
      say(a, now, "reset");
      break;
    case 'S':
    case 'G':
    case 'L':
      if (a->mbs) {
        say(a, now, "not in a mechanism (supports, gravity and loads are the scene's)");
        break;
      }
      if (key != 'S') goto toggles;
      if (!a->sim) break;
      a->supports = !a->supports;
      cf_sim_set_supports(a->sim, a->supports);
      say(a, now,
          a->supports ? "supports set again (held where they are now)" : "supports removed");
      break;
    toggles:
      if (key == 'G') {
        a->gravity = !a->gravity;
        say(a, now, a->gravity ? "gravity on" : "gravity off");
      } else {
        a->loads = !a->loads;
        say(a, now, a->loads ? "scene loads on" : "scene loads off");
      }
      break;
    case 'C':
      if (a->mbs) /* elastic |u| or plain */
        a->color = a->color == VW_COLOR_PLAIN ? VW_COLOR_DISP : VW_COLOR_PLAIN;
      else
        a->color = (a->color + 1) % VW_COLOR_COUNT;
      a->vmax = 0;
      break;
    case 'W':
      a->wireframe = !a->wireframe;
      break;
    case 'F':
      a->follow = !a->follow;
      if (a->follow && a->mbs && a->mbs->nflex > 0) {
        v3_copy(a->follow_ref, a->mbs->flex[0].c);
      } else if (a->follow && a->m) {
        double c[3] = {0, 0, 0};
        for (int n = 0; n < a->m->nnode; n++)
          v3_axpy(c, a->d->x + 3 * n, a->m->node_mass[n] / a->mass);
        v3_copy(a->follow_ref, c);
      }
      say(a, now, a->follow ? "camera follows the part" : "camera fixed");
      break;
    case 'V':
    case VW_KEY_HOME:
      vw_camera_fit(a);
      a->follow = 0;
      break;
    case 'H':
    case VW_KEY_F1:
      a->help = !a->help;
      break;
    case VW_KEY_PLUS:
    case '=':
    case ']':
    case VW_KEY_MINUS:
    case '-':
    case '[':
    case '0':
      if (key == '0')
        a->gain_exp = 0;
      else
        a->gain_exp += (key == VW_KEY_PLUS || key == '=' || key == ']') ? 1 : -1;
      snprintf(msg, sizeof msg, "spring gain %.3g N/m", vw_gain(a));
      say(a, now, msg);
      break;
    case 'N':
    case VW_KEY_TAB:
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
      int n = a->opt.nscenes, idx;
      if (key >= '1' && key <= '9')
        idx = key - '1';
      else
        idx = (a->cur + ((mods & VW_MOD_SHIFT) ? n - 1 : 1)) % n;
      if (idx >= n) break;
      int prev = a->cur;
      if (vw_app_load(a, idx) < 0) {
        snprintf(msg, sizeof msg, "cannot open %s: %s", a->opt.scenes[idx], cf_last_error());
        fprintf(stderr, "cofem_view: %s\n", msg);
        if (!a->sim && !a->mbs) vw_app_load(a, prev);
        say(a, now, msg);
      } else {
        snprintf(msg, sizeof msg, "scene %s (%s)", a->name,
                 a->mbs ? "mechanism" : cf_sim_backend_name(a->sim));
        say(a, now, msg);
      }
      break;
    }
    default:
      break;
  }
  return 0;
}

/* ---- loads and sets ---------------------------------------------------------------------------
 */

double vw_load_factor(const cfSceneLoad* l, double t) {
  if (t < l->t_start || t > l->t_stop) return 0;
  if (l->ramp <= 0) return 1;
  return fmin(1.0, (t - l->t_start) / l->ramp);
}

int vw_set_position(const vwApp* a, const char* set, double* p) {
  if (a->mbs) { /* SET (the first flexible body that has it) or BODY/SET */
    const vwMbs* b = a->mbs;
    const char* slash = strchr(set, '/');
    for (int k = 0; k < b->nflex; k++) {
      const vwMbsFlex* f = &b->flex[k];
      if (slash && (strncmp(b->m->body_name[f->body], set, (size_t)(slash - set)) ||
                    b->m->body_name[f->body][slash - set]))
        continue;
      const cfNodeSet* ns = cf_mesh_find_nset(f->mesh, slash ? slash + 1 : set);
      if (!ns || ns->count == 0) continue;
      v3_set(p, 0, 0, 0);
      for (int i = 0; i < ns->count; i++)
        v3_axpy(p, b->x + 3 * (size_t)(f->node0 + ns->nodes[i]), 1.0 / ns->count);
      return 1;
    }
    return 0;
  }
  const cfNodeSet* s = cf_mesh_find_nset(&a->scene.mesh, set);
  if (!s || s->count == 0) return 0;
  v3_set(p, 0, 0, 0);
  for (int i = 0; i < s->count; i++) v3_axpy(p, a->d->x + 3 * s->nodes[i], 1.0 / s->count);
  return 1;
}

/* ---- text -------------------------------------------------------------------------------------
 */

static const char* color_name(int c) {
  return c == VW_COLOR_DISP     ? "colour |u|"
         : c == VW_COLOR_STRESS ? "colour von Mises"
                                : "colour plain";
}

/* "x1.00 real time (fixed 4 steps/frame)": the speed part of both status lines */
static void speed_text(const vwApp* a, char* out, int n) {
  char rt[64];
  if (a->rt_ratio < 0)
    snprintf(rt, sizeof rt, "x-- real time");
  else
    snprintf(rt, sizeof rt, "x%.2f real time", a->rt_ratio);
  char mode[64] = "";
  if (a->opt.fixed_steps > 0)
    snprintf(mode, sizeof mode, " (fixed %d steps/frame)", a->opt.fixed_steps);
  snprintf(out, n, "%s%s", rt, mode);
}

static void mbs_status_text(const vwApp* a, char* l1, int n1, char* l2, int n2) {
  const vwMbs* b = a->mbs;
  char speed[128];
  speed_text(a, speed, sizeof speed);
  snprintf(l1, n1, "t %.2f s  %s  %.2f ms/step  Newton %d it (mean %.1f)  %.1f ms/frame", b->d->t,
           speed, b->step_ms, b->d->iters,
           b->d->steps > 0 ? (double)b->d->iters_total / (double)b->d->steps : 0.0, a->frame_ms);
  int nfe = 0, nrig = 0;
  for (int k = 0; k < b->nflex; k++) nfe += b->flex[k].fe >= 0;
  for (int i = 0; i < b->m->nbody; i++) nrig += mbs_rigid(b->m, i);
  char pull[96] = "";
  if (nfe > 0) snprintf(pull, sizeof pull, "  pull an FE body: gain %.2g N/m [+/-]", vw_gain(a));
  snprintf(l2, n2, "mechanism: %d FE + %d modal + %d rigid bodies, %d joints%s%s  help [H]", nfe,
           b->nflex - nfe, nrig, b->m->njoint, pull, b->nflex > 0 ? "  colour elastic |u|" : "");
}

void vw_status_text(const vwApp* a, char* l1, int n1, char* l2, int n2, char* warn, int nw) {
  warn[0] = 0;
  if (a->mbs) {
    mbs_status_text(a, l1, n1, l2, n2);
    if (a->error || (a->diverged[0] && a->paused))
      snprintf(warn, nw, "%s", a->message);
    else if (a->paused)
      snprintf(warn, nw, "paused [P]");
    else if (a->behind && a->opt.fixed_steps <= 0)
      snprintf(warn, nw, "slower than real time (x%.2f)", a->rt_ratio >= 0 ? a->rt_ratio : 0.0);
    return;
  }
  if (!a->sim) {
    snprintf(l1, n1, "no scene");
    l2[0] = 0;
    return;
  }
  const cfData* d = a->d;
  char speed[128];
  speed_text(a, speed, sizeof speed);
  char warns[64] = "";
  if (a->warn_steps > 0) snprintf(warns, sizeof warns, "  %ld steps warned", a->warn_steps);
  snprintf(l1, n1, "t %.2f s  %s  PCG %d it  %s  %.1f ms/frame (sim %.1f ms)%s", d->t, speed,
           d->pcg_iters, cf_sim_backend_name(a->sim), a->frame_ms, a->sim_ms, warns);
  snprintf(l2, n2,
           "supports %s [S]  gravity %s [G]  loads %s [L]  gain %.2g N/m [+/-]  %s [C]  help [H]",
           a->supports ? "ON" : "OFF", a->gravity ? "ON" : "OFF", a->loads ? "ON" : "OFF",
           vw_gain(a), color_name(a->color));
  if (a->error || (a->diverged[0] && a->paused))
    snprintf(warn, nw, "%s", a->message);
  else if (a->paused)
    snprintf(warn, nw, "paused [P]");
  else if (a->behind && a->opt.fixed_steps <= 0)
    snprintf(warn, nw, "slower than real time (x%.2f)", a->rt_ratio >= 0 ? a->rt_ratio : 0.0);
}

void vw_legend_unit(int color, double vmax, double* scale, const char** unit, const char** title) {
  if (color == VW_COLOR_STRESS) {
    *title = "von Mises";
    if (vmax < 1e6) {
      *scale = 1e-3;
      *unit = "kPa";
    } else if (vmax < 1e9) {
      *scale = 1e-6;
      *unit = "MPa";
    } else {
      *scale = 1e-9;
      *unit = "GPa";
    }
  } else {
    *title = "|u|";
    if (vmax < 1e-3) {
      *scale = 1e6;
      *unit = "um";
    } else if (vmax < 1.0) {
      *scale = 1e3;
      *unit = "mm";
    } else {
      *scale = 1.0;
      *unit = "m";
    }
  }
}

/* Turbo (Google, polynomial approximation), restricted to [0.1, 0.9] so that zero is blue,
 * not black. The fragment shader uses the same coefficients. */
void vw_colormap(double x, float* rgb) {
  static const double r4[4] = {0.13572138, 4.61539260, -42.66032258, 132.13108234};
  static const double g4[4] = {0.09140261, 2.19418839, 4.84296658, -14.18503333};
  static const double b4[4] = {0.10667330, 12.64194608, -60.58204836, 110.36276771};
  static const double r2[2] = {-152.94239396, 59.28637943};
  static const double g2[2] = {4.27729857, 2.82956604};
  static const double b2[2] = {-89.90310912, 27.34824973};
  x = fmin(1.0, fmax(0.0, x));
  x = 0.1 + 0.8 * x;
  double v4[4] = {1, x, x * x, x * x * x}, v2[2] = {v4[2] * v4[2], v4[3] * v4[2]};
  double c[3] = {0, 0, 0};
  for (int i = 0; i < 4; i++) {
    c[0] += v4[i] * r4[i];
    c[1] += v4[i] * g4[i];
    c[2] += v4[i] * b4[i];
  }
  for (int i = 0; i < 2; i++) {
    c[0] += v2[i] * r2[i];
    c[1] += v2[i] * g2[i];
    c[2] += v2[i] * b2[i];
  }
  for (int i = 0; i < 3; i++) rgb[i] = (float)fmin(1.0, fmax(0.0, c[i]));
}

/* ---- reports ----------------------------------------------------------------------------------
 */

/* Rotation closest to H (polar decomposition by Higham's iteration). */
static void closest_rotation(const double* H, double* R) {
  double n = 0;
  for (int i = 0; i < 9; i++) n += H[i] * H[i];
  n = sqrt(n);
  if (!(n > 0)) {
    for (int i = 0; i < 9; i++) R[i] = i % 4 == 0;
    return;
  }
  for (int i = 0; i < 9; i++) R[i] = H[i] / n;
  for (int it = 0; it < 100; it++) {
    double Ri[9], RiT[9], diff = 0;
    if (!m3_inv(Ri, R)) break;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) RiT[3 * i + j] = Ri[3 * j + i];
    for (int i = 0; i < 9; i++) {
      double r = 0.5 * (R[i] + RiT[i]);
      diff += fabs(r - R[i]);
      R[i] = r;
    }
    if (diff < 1e-14) break;
  }
}

static void put_vec(FILE* out, const char* key, const double* v) {
  fprintf(out, " %s=%.6g,%.6g,%.6g", key, v[0], v[1], v[2]);
}

static void mbs_report(vwApp* a, FILE* out, const char* label, long frame) {
  vwMbs* b = a->mbs;
  char l1[512], l2[512], warn[256];
  vw_status_text(a, l1, sizeof l1, l2, sizeof l2, warn, sizeof warn);
  fprintf(out, "report label=%s frame=%ld t=%.6g steps=%ld scene=%s mechanism=1 newton=%d paused=%d",
          label, frame, b->d->t, b->d->steps, a->name, b->d->iters, a->paused);
  fprintf(out, " error=%d gain=%.6g drag=%d picked=%d formulation=%s", a->error, vw_gain(a), a->pick.active,
          a->pick.valid, b->sr ? "semi_recursive" : b->gk ? "structural_groups" : "global");
  if (a->pick.valid && b->pick_flex >= 0) {
    double p[3];
    pick_point(a, b->x, p);
    fprintf(out, " pick_body=%s", b->m->body_name[b->flex[b->pick_flex].body]);
    put_vec(out, "pick0", a->pick.pos0);
    put_vec(out, "pick", p);
    put_vec(out, "target", a->pick.target);
    put_vec(out, "force", a->pick.force);
    fprintf(out, " fmag=%.6g", v3_norm(a->pick.force));
  }
  for (int k = 0; k < b->nflex; k++) {
    const vwMbsFlex* f = &b->flex[k];
    char key[CF_MBS_NAME_MAX + 16];
    double du[3];
    v3_sub(du, f->c, f->c0);
    snprintf(key, sizeof key, "c_%s", b->m->body_name[f->body]);
    put_vec(out, key, f->c);
    snprintf(key, sizeof key, "du_%s", b->m->body_name[f->body]);
    put_vec(out, key, du);
    fprintf(out, " uel_%s=%.6g", b->m->body_name[f->body], f->uel_max);
  }
  for (int i = 0, k = 0; i < b->m->nbody; i++) {
    if (!mbs_rigid(b->m, i)) continue;
    double x[3];
    cf_mbs_point(b->m, b->d, i, b->m->body_com + 3 * i, x);
    char key[CF_MBS_NAME_MAX + 16];
    snprintf(key, sizeof key, "x_%s", b->m->body_name[i]);
    put_vec(out, key, x);
    /* the edges of the box drawn for it (mbs_solids: 12 triangles per rigid body, in body order),
     * measured on the drawn vertices in the body's axes */
    if (12 * (k + 1) <= a->nxrigid) {
      double R[9], o[3], lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
      const double zero[3] = {0, 0, 0};
      cf_mbs_rotation(b->m, b->d, i, R);
      cf_mbs_point(b->m, b->d, i, zero, o);
      for (int t = 12 * k; t < 12 * (k + 1); t++)
        for (int v = 0; v < 3; v++) {
          const float* p = a->xbuf + 21 * (size_t)t + 7 * v;
          double dx[3] = {p[0] - o[0], p[1] - o[1], p[2] - o[2]};
          for (int c = 0; c < 3; c++) {
            double pc = R[c] * dx[0] + R[3 + c] * dx[1] + R[6 + c] * dx[2]; /* R^T dx */
            lo[c] = fmin(lo[c], pc), hi[c] = fmax(hi[c], pc);
          }
        }
      double edge[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
      snprintf(key, sizeof key, "box_%s", b->m->body_name[i]);
      put_vec(out, key, edge);
    }
    k++;
  }
  fprintf(out, " ntri=%d nxtri=%d njoint=%d", a->ntri, a->nxtri, b->m->njoint);
  fprintf(out, " cam=%.6g,%.6g,%.6g", a->cam.yaw * 180 / M_PI, a->cam.pitch * 180 / M_PI,
          a->cam.dist);
  fprintf(out, " vmax=%.6g rt=%.4g behind=%d", a->vmax_frame, a->rt_ratio,
          a->behind && a->opt.fixed_steps <= 0);
  fprintf(out, " diverged=%d warn=\"%s\" status=\"%s\" diverge_msg=\"%s\"\n", a->ndiverged, warn, l1,
          a->diverged);
  fflush(out);
}

void vw_report(vwApp* a, FILE* out, const char* label, long frame) {
  if (a->mbs) {
    mbs_report(a, out, label, frame);
    return;
  }
  if (!a->sim) {
    fprintf(out, "report label=%s frame=%ld scene=none\n", label, frame);
    fflush(out);
    return;
  }
  cf_sim_fetch(a->sim);
  const cfModel* m = a->m;
  const cfData* d = a->d;
  /* rigid-body fit: mass-weighted centroids, the closest rotation, rms of what is left */
  double cX[3] = {0, 0, 0}, cx[3] = {0, 0, 0}, H[9] = {0}, R[9], umax = 0;
  for (int n = 0; n < m->nnode; n++) {
    v3_axpy(cX, m->X + 3 * n, m->node_mass[n] / a->mass);
    v3_axpy(cx, d->x + 3 * n, m->node_mass[n] / a->mass);
  }
  for (int n = 0; n < m->nnode; n++) {
    double p[3], q[3], u[3];
    v3_sub(p, d->x + 3 * n, cx);
    v3_sub(q, m->X + 3 * n, cX);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) H[3 * i + j] += m->node_mass[n] * p[i] * q[j];
    v3_sub(u, d->x + 3 * n, m->X + 3 * n);
    umax = fmax(umax, v3_norm(u));
  }
  closest_rotation(H, R);
  double rms = 0;
  for (int n = 0; n < m->nnode; n++) {
    double q[3], rq[3], e[3];
    v3_sub(q, m->X + 3 * n, cX);
    m3_mulv(rq, R, q);
    v3_add(rq, rq, cx);
    v3_sub(e, d->x + 3 * n, rq);
    rms += m->node_mass[n] * v3_dot(e, e);
  }
  rms = sqrt(rms / a->mass);
  double angle = acos(fmax(-1.0, fmin(1.0, 0.5 * (R[0] + R[4] + R[8] - 1)))) * 180 / M_PI;
  double cu[3];
  v3_sub(cu, cx, cX);
  char l1[512], l2[512], warn[256];
  vw_status_text(a, l1, sizeof l1, l2, sizeof l2, warn, sizeof warn);
  fprintf(out,
          "report label=%s frame=%ld t=%.6g steps=%ld scene=%s backend=%s supports=%d gravity=%d "
          "loads=%d",
          label, frame, d->t, d->steps, a->name, cf_sim_backend_name(a->sim), a->supports,
          a->gravity, a->loads);
  fprintf(out, " paused=%d color=%s wireframe=%d help=%d follow=%d gain=%.6g drag=%d picked=%d",
          a->paused,
          a->color == VW_COLOR_DISP     ? "disp"
          : a->color == VW_COLOR_STRESS ? "stress"
                                        : "plain",
          a->wireframe, a->help, a->follow, vw_gain(a), a->pick.active, a->pick.valid);
  if (a->pick.valid) {
    double p[3];
    pick_point(a, d->x, p);
    put_vec(out, "pick_rest", a->pick.rest);
    put_vec(out, "pick0", a->pick.pos0);
    put_vec(out, "pick", p);
    put_vec(out, "target", a->pick.target);
    put_vec(out, "force", a->pick.force);
    fprintf(out, " fmag=%.6g k_used=%.6g", v3_norm(a->pick.force), a->pick.k_used);
  }
  fprintf(out, " u_max=%.6g", umax);
  put_vec(out, "centroid_u", cu);
  fprintf(out, " rigid_rms=%.6g rigid_angle=%.6g", rms, angle);
  for (int s = 0; s < a->scene.mesh.nnset; s++) {
    const cfNodeSet* set = &a->scene.mesh.nsets[s];
    double u[3] = {0, 0, 0};
    for (int i = 0; i < set->count; i++) {
      double du[3];
      v3_sub(du, d->x + 3 * set->nodes[i], m->X + 3 * set->nodes[i]);
      v3_axpy(u, du, 1.0 / set->count);
    }
    char key[CF_NAME_MAX + 8];
    snprintf(key, sizeof key, "u_%s", set->name);
    put_vec(out, key, u);
  }
  fprintf(out, " cam=%.6g,%.6g,%.6g", a->cam.yaw * 180 / M_PI, a->cam.pitch * 180 / M_PI,
          a->cam.dist);
  put_vec(out, "cam_target", a->cam.target);
  fprintf(out, " vmax=%.6g rt=%.4g behind=%d pcg=%d warn_steps=%ld", a->vmax_frame, a->rt_ratio,
          a->behind && a->opt.fixed_steps <= 0, d->pcg_iters, a->warn_steps);
  fprintf(out, " diverged=%d warn=\"%s\" status=\"%s\" diverge_msg=\"%s\"\n", a->ndiverged, warn, l1,
          a->diverged);
  fflush(out);
}
