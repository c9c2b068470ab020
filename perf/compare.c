/* The comparison harness of issue 19 (docs/comparison.md): one mechanism, several flexible-body
 * paths, accuracy against a reference path and cost.
 *
 *   cofem_compare CASE.json [--out DIR] [--end T] [--only NAME[,NAME...]] [--every N]
 *
 * CASE.json names a mechanism scene (scenes/mbs/compare/...) and lists paths; for each path the
 * harness reads the scene's JSON, rewrites in memory the "flexible" object of its flexible bodies
 * ("formulation": corotational | lumped | modal, "modes", "interface", "damping", optionally
 * another FE "scene": a finer mesh with the same node sets), the time step and the solver's rho_inf,
 * parses it with cf_mbs_scene_parse (relative paths as from the scene file), runs it to the end
 * and samples the probes every `sample` seconds. Case keys:
 *
 *   "scene"   the mechanism scene, relative to the case file
 *   "end", "dt", "sample"     run length, default step, sampling interval (a multiple of every dt)
 *   "rho_inf" generalized-alpha rho_inf for every path (default: the scene's)
 *   "damping" modal damping ratio of modal paths (default 0: FE paths take the FE scene's Rayleigh)
 *   "factor"  the corotational paths' "factor" ("exact": the part factored every step, as these
 *             cases were measured; "rotated": factored once and turned); a path's "factor" overrides
 *   "probes"  [{"name", "type", ...}] outputs recorded per sample:
 *      "chord": "body" (flexible), node sets "a", "b", "m", "normal" [3]: the distance of the mean
 *               of m from the line through the means of a and b, along normal x (b - a)/|b - a|,
 *               times "scale" (default 1): the transverse deflection of a rod's middle.
 *      "frame": "body" (flexible), node set "set", "frame" (a rigid body), "origin" and "axis" (in
 *               that body's coordinates): (x_set - x_origin) . (R axis) times "scale": a beam tip's
 *               deflection in the rotating hub's axes.
 *      "point": "body", the global position of its node set "set" (a flexible body) or of its point
 *               "origin" (body coordinates, a rigid body) along the global "axis", times "scale": the
 *               same probe whichever kind the body is in a path.
 *      "stress": "body" (flexible): the largest von Mises stress over its elements (of the co-rotated
 *               linear strain, cf_von_mises, from the node positions: the same measure for every
 *               path), times "scale".
 *      "channel": a scene output channel by its label (e.g. "P_translation", "B_reaction_y").
 *   "paths"   [{"name", "formulation", "scene" (this path's own mechanism scene, relative to the case
 *             file: e.g. a modal body's frame welded where the FE body is clamped), "coupling" (the
 *             corotational bodies': "newton", the scene's default, or "linear"), "modes" (modal), "interface" (modal: default every node set
 *             a joint or load of that body names), "supports" (the FE scene's fixed sets: "free",
 *             "clamp": e.g. a modal body with cantilever modes, clamped "at the local frame"), "dt", "fe_scene" (replaces every flexible
 *             body's FE scene; relative to the mechanism scene), "rho_inf",
 *             "geometric_stiffening" (modal: true adds the modes' geometric stiffness)}]
 *   "reference"  the name of the path the others are measured against (it runs first);
 *   "baseline"   a second one (e.g. the corotational path on the same mesh: the error of the path
 *                itself, without the mesh's), its errors in their own columns.
 *   A path's "redundant_constraints" replaces the scene's (a path whose bodies make a closed loop
 *   over-constrained where the scene's do not).
 *
 * Writes DIR/<case>_series.csv (t, then every path's probes), DIR/<case>_summary.csv and
 * DIR/<case>.md (per path: nodes, coordinates, steps, ms/step (process CPU time of the steps),
 * real-time ratio, Newton iterations mean/max, setup and reduction time, per probe the max and RMS
 * error against the reference over the samples both have, and the largest |value|). A path whose
 * step fails stops there; its row says when. Exit status: 0, or 1 when the case could not be run
 * (a path failing is reported, not an exit status). perf/plot_compare.py plots the CSVs.
 * Run with OMP_THREAD_LIMIT=1 (Debian's CHOLMOD otherwise runs 4 threads on any machine). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"

#define MAXP 32
#define MAXPROBE 8

typedef struct Probe {
  char name[64], type[16], body[64], a[64], b[64], m[64], frame[64], channel[80];
  double normal[3], origin[3], axis[3], scale;
} Probe;

typedef struct Path {
  char name[64], form[32], fe_scene[512], supports[16], mscene[1024], factor[16], coupling[16];
  int gstiff; /* modal: "geometric_stiffening": true */
  char* mscene_json; /* the path's own mechanism scene ("scene"), or NULL: the case's */
  int modes, redundant; /* redundant: "redundant_constraints" of the scene for this path (-1: the scene's) */
  double dt, rho_inf;
  cJSON* interface; /* borrowed from the case JSON, or NULL */
  /* results */
  int nsample, failed, steps, nnode, nq, ncon, iters_max;
  double t_fail, cpu, setup, reduce, iters_mean;
  double* val; /* [nsample_max * nprobe] */
  char err[512];
  double err_max[MAXPROBE], err_rms[MAXPROBE], vmax[MAXPROBE];
  double berr_max[MAXPROBE], berr_rms[MAXPROBE]; /* against the baseline path */
  int ncmp;
} Path;

typedef struct Case {
  char path[1024], dir[1024], name[128], scene[1024], scene_dir[1024];
  char* scene_json;
  char factor[16]; /* "factor" of the corotational paths (default: the scene's) */
  double end, dt, sample, rho_inf, damping;
  int nprobe, npath, ref, base, nsample_max;
  Probe probe[MAXPROBE];
  Path p[MAXP];
} Case;

static double cpu_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void dirname_of(const char* path, char* dir, size_t n) {
  snprintf(dir, n, "%s", path);
  char* sl = strrchr(dir, '/');
  if (sl) *sl = 0;
  else snprintf(dir, n, ".");
}

static int die(const char* msg, const char* what) {
  fprintf(stderr, "cofem_compare: %s%s%s\n", msg, what ? ": " : "", what ? what : "");
  return 1;
}

static double num(const cJSON* o, const char* k, double def) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(it) ? it->valuedouble : def;
}
static void str(const cJSON* o, const char* k, char* out, size_t n) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsString(it)) snprintf(out, n, "%s", it->valuestring);
}
static void vec3(const cJSON* o, const char* k, double* v) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(o, k);
  if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 3)
    for (int a = 0; a < 3; a++) v[a] = cJSON_GetArrayItem(it, a)->valuedouble;
}

static int load_case(const char* path, Case* c) {
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  dirname_of(path, c->dir, sizeof c->dir);
  const char* base = strrchr(path, '/');
  snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : path);
  char* dot = strstr(c->name, ".json");
  if (dot) *dot = 0;
  char* text = read_text(path);
  if (!text) return die("cannot read the case", path);
  cJSON* j = cJSON_Parse(text);
  free(text);
  if (!j) return die("invalid JSON", path);
  char rel[512] = "";
  str(j, "scene", rel, sizeof rel);
  snprintf(c->scene, sizeof c->scene, "%s/%s", c->dir, rel);
  dirname_of(c->scene, c->scene_dir, sizeof c->scene_dir);
  c->end = num(j, "end", 0), c->dt = num(j, "dt", 0), c->sample = num(j, "sample", 0);
  c->rho_inf = num(j, "rho_inf", 0), c->damping = num(j, "damping", 0);
  str(j, "factor", c->factor, sizeof c->factor);
  const cJSON* pr = cJSON_GetObjectItemCaseSensitive(j, "probes");
  const cJSON* it;
  cJSON_ArrayForEach(it, pr) {
    if (c->nprobe == MAXPROBE) break;
    Probe* p = &c->probe[c->nprobe++];
    p->scale = num(it, "scale", 1.0);
    str(it, "name", p->name, sizeof p->name), str(it, "type", p->type, sizeof p->type);
    str(it, "body", p->body, sizeof p->body), str(it, "a", p->a, sizeof p->a), str(it, "b", p->b, sizeof p->b);
    str(it, "m", p->m, sizeof p->m), str(it, "set", p->m, sizeof p->m), str(it, "frame", p->frame, sizeof p->frame);
    str(it, "channel", p->channel, sizeof p->channel);
    p->normal[2] = 1, p->axis[1] = 1;
    vec3(it, "normal", p->normal), vec3(it, "origin", p->origin), vec3(it, "axis", p->axis);
  }
  char ref[64] = "";
  char basename[64] = "";
  str(j, "reference", ref, sizeof ref);
  str(j, "baseline", basename, sizeof basename);
  c->ref = c->base = -1;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "paths")) {
    if (c->npath == MAXP) break;
    Path* p = &c->p[c->npath];
    str(it, "name", p->name, sizeof p->name), str(it, "formulation", p->form, sizeof p->form);
    str(it, "fe_scene", p->fe_scene, sizeof p->fe_scene);
    char ms[512] = "";
    str(it, "scene", ms, sizeof ms);
    if (ms[0]) {
      snprintf(p->mscene, sizeof p->mscene, "%s/%s", c->dir, ms);
      if (!(p->mscene_json = read_text(p->mscene))) return die("cannot read the path's scene", p->mscene);
    }
    str(it, "supports", p->supports, sizeof p->supports);
    snprintf(p->factor, sizeof p->factor, "%s", c->factor);
    str(it, "factor", p->factor, sizeof p->factor);
    str(it, "coupling", p->coupling, sizeof p->coupling);
    if (p->coupling[0] && cf_mbs_coupling_from_key(p->coupling) < 0) return die("unknown \"coupling\"", p->coupling);
    p->redundant = (int)num(it, "redundant_constraints", -1);
    p->gstiff = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "geometric_stiffening"));
    p->modes = (int)num(it, "modes", 0), p->dt = num(it, "dt", c->dt), p->rho_inf = num(it, "rho_inf", c->rho_inf);
    const cJSON* itf = cJSON_GetObjectItemCaseSensitive(it, "interface");
    p->interface = itf ? cJSON_Duplicate(itf, 1) : NULL;
    if (!strcmp(p->name, ref)) c->ref = c->npath;
    if (!strcmp(p->name, basename)) c->base = c->npath;
    c->npath++;
  }
  cJSON_Delete(j);
  c->scene_json = read_text(c->scene);
  if (!c->scene_json) return die("cannot read the scene", c->scene);
  if (!(c->sample > 0) || !(c->end > 0) || !c->npath || !c->nprobe)
    return die("the case needs \"sample\" > 0, \"end\" > 0, paths and probes", path);
  return 0;
}

/* the node sets that joints and loads of body `name` name (the modal interface by default) */
static cJSON* default_interface(const cJSON* sc, const char* name) {
  cJSON* arr = cJSON_CreateArray();
  const char* lists[2] = {"joints", "forces"};
  for (int l = 0; l < 2; l++) {
    const cJSON* it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sc, lists[l])) {
      const char* pairs[3][2] = {{"body1", "node1"}, {"body2", "node2"}, {"body", "node"}};
      for (int k = 0; k < 3; k++) {
        const cJSON* b = cJSON_GetObjectItemCaseSensitive(it, pairs[k][0]);
        const cJSON* n = cJSON_GetObjectItemCaseSensitive(it, pairs[k][1]);
        if (!cJSON_IsString(b) || !cJSON_IsString(n) || strcmp(b->valuestring, name)) continue;
        int dup = 0;
        const cJSON* e;
        cJSON_ArrayForEach(e, arr) dup |= !strcmp(e->valuestring, n->valuestring);
        if (!dup) cJSON_AddItemToArray(arr, cJSON_CreateString(n->valuestring));
      }
    }
  }
  return arr;
}

static void set_item(cJSON* o, const char* k, cJSON* v) {
  if (cJSON_GetObjectItemCaseSensitive(o, k)) cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
  else cJSON_AddItemToObject(o, k, v);
}

/* the scene text of path p */
static char* rewrite(const Case* c, const Path* p, double end) {
  cJSON* sc = cJSON_Parse(p->mscene_json ? p->mscene_json : c->scene_json);
  if (!sc) return NULL;
  const cJSON* b;
  cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(sc, "bodies")) {
    cJSON* fx = cJSON_GetObjectItemCaseSensitive(b, "flexible");
    if (!fx) continue;
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(b, "name");
    set_item(fx, "formulation", cJSON_CreateString(p->form));
    if (p->fe_scene[0]) set_item(fx, "scene", cJSON_CreateString(p->fe_scene));
    if (p->supports[0]) set_item(fx, "supports", cJSON_CreateString(p->supports));
    if (!strcmp(p->form, "corotational") && p->factor[0]) set_item(fx, "factor", cJSON_CreateString(p->factor));
    else if (strcmp(p->form, "corotational")) cJSON_DeleteItemFromObjectCaseSensitive(fx, "factor");
    if (!strcmp(p->form, "modal")) {
      set_item(fx, "modes", cJSON_CreateNumber(p->modes > 0 ? p->modes : 8));
      set_item(fx, "interface", p->interface ? cJSON_Duplicate(p->interface, 1)
                                             : default_interface(sc, cJSON_IsString(name) ? name->valuestring : ""));
      set_item(fx, "damping", cJSON_CreateNumber(c->damping));
      if (p->gstiff) set_item(fx, "geometric_stiffening", cJSON_CreateTrue());
      else cJSON_DeleteItemFromObjectCaseSensitive(fx, "geometric_stiffening");
    } else {
      const char* modal_only[] = {"interface", "modes", "damping", "reduction", "geometric_stiffening"};
      for (int k = 0; k < 5; k++) cJSON_DeleteItemFromObjectCaseSensitive(fx, modal_only[k]);
    }
  }
  if (p->redundant >= 0) set_item(sc, "redundant_constraints", cJSON_CreateNumber(p->redundant));
  cJSON* tm = cJSON_GetObjectItemCaseSensitive(sc, "time");
  if (!tm) cJSON_AddItemToObject(sc, "time", tm = cJSON_CreateObject());
  if (p->dt > 0) set_item(tm, "dt", cJSON_CreateNumber(p->dt));
  set_item(tm, "end", cJSON_CreateNumber(end));
  if (p->rho_inf > 0) {
    cJSON* so = cJSON_GetObjectItemCaseSensitive(sc, "solver");
    if (!so) cJSON_AddItemToObject(sc, "solver", so = cJSON_CreateObject());
    set_item(so, "rho_inf", cJSON_CreateNumber(p->rho_inf));
  }
  char* out = cJSON_Print(sc);
  cJSON_Delete(sc);
  return out;
}

/* ---- probes ---- */
typedef struct Live {
  const cfMbsScene* s;
  const cfMbsModel* m;
  const cfMbsData* d;
  double* x; /* node positions of the last flexible body read */
  int x_body;
  cfData* fd; /* "stress" probes: the FE model's data at those positions */
  double* vm;
  int fd_body;
} Live;

static int body_id(const cfMbsScene* s, const char* name) {
  for (int i = 0; i < s->def.nbody; i++)
    if (!strcmp(s->def.body[i].name, name)) return i;
  return -1;
}

static const cfMesh* flex_mesh(const cfMbsScene* s, int body) {
  for (int k = 0; k < s->nflex; k++)
    if (s->flex_body[k] == body) return &s->flex[k]->scene.mesh;
  return NULL;
}

/* global node positions of flexible body `body` into L->x */
static int flex_nodes(Live* L, int body) {
  if (L->x_body == body) return 0;
  const cfMesh* mesh = flex_mesh(L->s, body);
  if (!mesh) return -1;
  L->x = realloc(L->x, sizeof(double) * 3 * (size_t)mesh->nnode);
  int ib = cf_mbs_fe_index(L->m, body);
  if (ib >= 0) cf_mbs_fe_nodes(L->m, L->d, ib, L->x, NULL);
  else if ((ib = cf_mbs_modal_index(L->m, body)) >= 0) cf_mbs_modal_nodes(L->m, L->d, ib, L->x, NULL);
  else return -1;
  L->x_body = body;
  return 0;
}

static int set_mean(Live* L, int body, const char* set, double c[3]) {
  const cfMesh* mesh = flex_mesh(L->s, body);
  const cfNodeSet* ns = mesh ? cf_mesh_find_nset(mesh, set) : NULL;
  if (!ns || flex_nodes(L, body) < 0) return -1;
  c[0] = c[1] = c[2] = 0;
  for (int k = 0; k < ns->count; k++)
    for (int a = 0; a < 3; a++) c[a] += L->x[3 * ns->nodes[k] + a] / ns->count;
  return 0;
}

static int eval_probe(Live* L, const Probe* p, double* out) {
  if (!strcmp(p->type, "chord")) {
    int b = body_id(L->s, p->body);
    double A[3], B[3], M[3];
    if (b < 0 || set_mean(L, b, p->a, A) || set_mean(L, b, p->b, B) || set_mean(L, b, p->m, M)) return -1;
    double e[3], len = 0;
    for (int a = 0; a < 3; a++) e[a] = B[a] - A[a], len += e[a] * e[a];
    len = sqrt(len);
    for (int a = 0; a < 3; a++) e[a] /= len;
    const double* n = p->normal;
    double t[3] = {n[1] * e[2] - n[2] * e[1], n[2] * e[0] - n[0] * e[2], n[0] * e[1] - n[1] * e[0]};
    double s = 0;
    for (int a = 0; a < 3; a++) s += (M[a] - A[a]) * t[a];
    *out = p->scale * s;
    return 0;
  }
  if (!strcmp(p->type, "frame")) {
    int b = body_id(L->s, p->body), f = body_id(L->s, p->frame);
    double X[3], O[3], R[9], ax[3];
    if (b < 0 || f < 0 || set_mean(L, b, p->m, X)) return -1;
    cf_mbs_point(L->m, L->d, f, p->origin, O);
    cf_mbs_rotation(L->m, L->d, f, R);
    double s = 0;
    for (int i = 0; i < 3; i++) {
      ax[i] = R[3 * i] * p->axis[0] + R[3 * i + 1] * p->axis[1] + R[3 * i + 2] * p->axis[2];
      s += (X[i] - O[i]) * ax[i];
    }
    *out = p->scale * s;
    return 0;
  }
  if (!strcmp(p->type, "point")) {
    int b = body_id(L->s, p->body);
    double X[3];
    if (b < 0) return -1;
    if (flex_mesh(L->s, b)) {
      if (set_mean(L, b, p->m, X)) return -1;
    } else
      cf_mbs_point(L->m, L->d, b, p->origin, X);
    *out = p->scale * (X[0] * p->axis[0] + X[1] * p->axis[1] + X[2] * p->axis[2]);
    return 0;
  }
  if (!strcmp(p->type, "stress")) {
    int b = body_id(L->s, p->body), k = -1;
    for (int i = 0; i < L->s->nflex; i++)
      if (L->s->flex_body[i] == b) k = i;
    if (k < 0 || flex_nodes(L, b) < 0) return -1;
    const cfModel* fm = L->s->flex[k]->model;
    if (L->fd_body != b) {
      cf_data_free(L->fd);
      free(L->vm);
      L->fd = NULL, L->vm = malloc(sizeof(double) * (size_t)fm->ntet), L->fd_body = b;
      if (!L->vm || cf_data_create(fm, &L->fd) < 0) return -1;
    }
    memcpy(L->fd->x, L->x, sizeof(double) * 3 * (size_t)fm->nnode);
    cf_stage_polar(fm, L->fd);
    cf_von_mises(fm, L->fd, L->vm);
    double mx = 0;
    for (int e = 0; e < fm->ntet; e++) mx = fmax(mx, L->vm[e]);
    *out = p->scale * mx;
    return 0;
  }
  if (!strcmp(p->type, "channel")) {
    for (int k = 0; k < L->s->nchannel; k++) {
      const cfMbsChannel* ch = &L->s->channel[k];
      int n = cf_mbs_channel_size(ch);
      double v[3];
      cf_mbs_channel_eval(L->m, L->d, ch, v);
      const char* sfx[3] = {"_x", "_y", "_z"};
      for (int i = 0; i < n; i++) {
        char lab[128];
        snprintf(lab, sizeof lab, "%s%s", ch->label, n == 3 ? sfx[i] : "");
        if (!strcmp(lab, p->channel)) return *out = p->scale * v[i], 0;
      }
    }
    return -1;
  }
  return -1;
}

static void run_path(const Case* c, Path* p, double end) {
  char* json = rewrite(c, p, end);
  cfMbsScene s;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  memset(&s, 0, sizeof s);
  Live L = {0};
  L.x_body = -1, L.fd_body = -1;
  int st, parsed = 0;
  double w0 = cf_wall_time();
  if (!json) {
    snprintf(p->err, sizeof p->err, "scene rewrite failed");
    p->failed = 1;
    goto done;
  }
  if ((st = cf_mbs_scene_parse(json, p->mscene_json ? p->mscene : c->scene, &s)) < 0) goto fail;
  if (p->coupling[0]) cf_mbs_scene_set_coupling(&s, cf_mbs_coupling_from_key(p->coupling));
  parsed = 1;
  for (int k = 0; k < s.nflex; k++) {
    p->nnode += s.flex[k]->scene.mesh.nnode;
    if (!strcmp(p->form, "modal")) p->reduce += s.flex[k]->t_total - s.flex[k]->t_load;
  }
  if ((st = cf_mbs_model_create(&s.def, &m)) < 0) goto fail;
  if ((st = cf_mbs_data_create(m, &d)) < 0) goto fail;
  p->setup = cf_wall_time() - w0 - p->reduce;
  p->nq = m->nq, p->ncon = m->ncon;
  L.s = &s, L.m = m, L.d = d;
  double dt = s.def.opt.dt;
  int every = (int)lround(c->sample / dt);
  if (every < 1 || fabs(every * dt - c->sample) > 1e-9 * c->sample) {
    snprintf(p->err, sizeof p->err, "sample %g is not a multiple of dt %g", c->sample, dt);
    p->failed = 1;
    goto done;
  }
  int nstep = (int)lround(end / dt);
  for (int k = 0;; k++) {
    if (k % every == 0) {
      L.x_body = -1;
      for (int i = 0; i < c->nprobe; i++)
        if (eval_probe(&L, &c->probe[i], &p->val[p->nsample * c->nprobe + i]) < 0) {
          snprintf(p->err, sizeof p->err, "probe '%s' cannot be evaluated on this scene", c->probe[i].name);
          p->failed = 1;
          goto done;
        }
      p->nsample++;
    }
    if (k == nstep) break;
    double t0 = cpu_time();
    st = cf_mbs_step(m, d);
    p->cpu += cpu_time() - t0;
    if (st < 0) {
      p->t_fail = d->t;
      goto fail;
    }
    p->steps++;
    int bad = 0;
    for (int i = 0; i < m->nq; i++) bad |= !isfinite(d->q[i]);
    if (bad) {
      p->t_fail = d->t;
      snprintf(p->err, sizeof p->err, "non-finite coordinates at t = %g", d->t);
      p->failed = 1;
      goto done;
    }
  }
  p->iters_mean = p->steps ? (double)d->iters_total / p->steps : 0;
  p->iters_max = d->iters_max;
  goto done;
fail:
  p->failed = 1;
  snprintf(p->err, sizeof p->err, "%s", cf_last_error());
  if (d) p->iters_mean = p->steps ? (double)d->iters_total / p->steps : 0, p->iters_max = d->iters_max;
done:
  free(L.x);
  free(L.vm);
  cf_data_free(L.fd);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  if (parsed) cf_mbs_scene_free(&s);
  free(json);
}

#ifndef COFEM_COMPARE_NO_MAIN /* tests/mbs/test_compare.c includes this file for its functions */
static int mkdirs(const char* dir) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char* q = tmp + 1; *q; q++)
    if (*q == '/') *q = 0, mkdir(tmp, 0777), *q = '/';
  mkdir(tmp, 0777);
  return 0;
}

int main(int argc, char** argv) {
  const char *case_path = NULL, *out = "out/compare", *only = NULL;
  double end = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--end") && i + 1 < argc) end = atof(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (argv[i][0] != '-' && !case_path) case_path = argv[i];
    else {
      fprintf(stderr, "usage: cofem_compare CASE.json [--out DIR] [--end T] [--only NAME,...]\n");
      return 2;
    }
  }
  if (!case_path) return die("no case file", NULL);
  static Case c;
  if (load_case(case_path, &c)) return 1;
  if (end <= 0) end = c.end;
  c.nsample_max = (int)lround(end / c.sample) + 1;
  /* the reference and the baseline run first; --only keeps them */
  int order[MAXP], n = 0;
  if (c.ref >= 0) order[n++] = c.ref;
  if (c.base >= 0 && c.base != c.ref) order[n++] = c.base;
  for (int i = 0; i < c.npath; i++) {
    if (i == c.ref || i == c.base) continue;
    if (only) {
      char key[80];
      snprintf(key, sizeof key, ",%s,", c.p[i].name);
      char lst[1024];
      snprintf(lst, sizeof lst, ",%s,", only);
      if (!strstr(lst, key)) continue;
    }
    order[n++] = i;
  }
  for (int k = 0; k < n; k++) {
    Path* p = &c.p[order[k]];
    p->val = calloc((size_t)c.nsample_max * c.nprobe, sizeof(double));
    fprintf(stderr, "%s: %s ...\n", c.name, p->name);
    run_path(&c, p, end);
    fprintf(stderr, "  %d steps, %.3f ms/step, %d samples%s%s\n", p->steps, p->steps ? 1e3 * p->cpu / p->steps : 0,
            p->nsample, p->failed ? ", FAILED: " : "", p->failed ? p->err : "");
  }
  /* errors against the reference */
  const Path* R = c.ref >= 0 ? &c.p[c.ref] : NULL;
  for (int k = 0; k < n; k++) {
    Path* p = &c.p[order[k]];
    int ns = R ? (p->nsample < R->nsample ? p->nsample : R->nsample) : 0;
    p->ncmp = ns;
    for (int i = 0; i < c.nprobe; i++) {
      double mx = 0, sq = 0, vm = 0;
      for (int s = 0; s < p->nsample; s++) vm = fmax(vm, fabs(p->val[s * c.nprobe + i]));
      for (int s = 0; s < ns; s++) {
        double e = p->val[s * c.nprobe + i] - R->val[s * c.nprobe + i];
        mx = fmax(mx, fabs(e)), sq += e * e;
      }
      p->err_max[i] = mx, p->err_rms[i] = ns ? sqrt(sq / ns) : 0, p->vmax[i] = vm;
      const Path* B = c.base >= 0 ? &c.p[c.base] : NULL;
      int nb = B ? (p->nsample < B->nsample ? p->nsample : B->nsample) : 0;
      mx = 0, sq = 0;
      for (int s = 0; s < nb; s++) {
        double e = p->val[s * c.nprobe + i] - B->val[s * c.nprobe + i];
        mx = fmax(mx, fabs(e)), sq += e * e;
      }
      p->berr_max[i] = mx, p->berr_rms[i] = nb ? sqrt(sq / nb) : 0;
    }
  }
  mkdirs(out);
  char fn[2048];
  snprintf(fn, sizeof fn, "%s/%s_series.csv", out, c.name);
  FILE* f = fopen(fn, "w");
  if (!f) return die("cannot write", fn);
  fprintf(f, "t");
  for (int k = 0; k < n; k++)
    for (int i = 0; i < c.nprobe; i++) fprintf(f, ",%s:%s", c.p[order[k]].name, c.probe[i].name);
  fprintf(f, "\n");
  for (int s = 0; s < c.nsample_max; s++) {
    fprintf(f, "%.9g", s * c.sample);
    for (int k = 0; k < n; k++)
      for (int i = 0; i < c.nprobe; i++) {
        const Path* p = &c.p[order[k]];
        if (s < p->nsample) fprintf(f, ",%.9g", p->val[s * c.nprobe + i]);
        else fprintf(f, ",");
      }
    fprintf(f, "\n");
  }
  fclose(f);
  snprintf(fn, sizeof fn, "%s/%s_summary.csv", out, c.name);
  FILE* fs = fopen(fn, "w");
  snprintf(fn, sizeof fn, "%s/%s.md", out, c.name);
  FILE* fm = fopen(fn, "w");
  if (!fs || !fm) return die("cannot write", fn);
  fprintf(fs, "path,formulation,modes,dt,nodes,coordinates,constraints,steps,ms_per_step,real_time,newton_mean,newton_max,"
              "setup_s,reduction_s,failed_at");
  for (int i = 0; i < c.nprobe; i++)
    fprintf(fs, ",%s_err_max,%s_err_rms,%s_max_abs,%s_base_err_max,%s_base_err_rms", c.probe[i].name, c.probe[i].name,
            c.probe[i].name, c.probe[i].name, c.probe[i].name);
  fprintf(fs, "\n");
  fprintf(fm, "Case `%s` (scene `%s`), %g s, reference path `%s`, baseline `%s`; errors (max, RMS) over the samples "
              "every %g s; ms/step is the process CPU time of the steps.\n\n", c.name, c.scene, end, R ? R->name : "-",
          c.base >= 0 ? c.p[c.base].name : "-", c.sample);
  fprintf(fm, "| path | modes | dt [s] | coordinates | ms/step | real time | Newton mean/max |");
  for (int i = 0; i < c.nprobe; i++) fprintf(fm, " %s: max abs | vs ref max / RMS | vs baseline max / RMS |", c.probe[i].name);
  fprintf(fm, " note |\n|---|---|---|---|---|---|---|");
  for (int i = 0; i < c.nprobe; i++) fprintf(fm, "---|---|---|");
  fprintf(fm, "---|\n");
  for (int k = 0; k < n; k++) {
    const Path* p = &c.p[order[k]];
    double ms = p->steps ? 1e3 * p->cpu / p->steps : 0, dt = p->dt > 0 ? p->dt : c.dt;
    fprintf(fs, "%s,%s,%d,%g,%d,%d,%d,%d,%.5g,%.5g,%.3f,%d,%.4g,%.4g,%s", p->name, p->form, p->modes, dt, p->nnode, p->nq,
            p->ncon, p->steps, ms, ms > 0 ? 1e3 * dt / ms : 0, p->iters_mean, p->iters_max, p->setup, p->reduce, "");
    if (p->failed) fprintf(fs, "%g", p->t_fail);
    for (int i = 0; i < c.nprobe; i++)
      fprintf(fs, ",%.5g,%.5g,%.5g,%.5g,%.5g", p->err_max[i], p->err_rms[i], p->vmax[i], p->berr_max[i], p->berr_rms[i]);
    fprintf(fs, "\n");
    char modes[16] = "-";
    if (!strcmp(p->form, "modal")) snprintf(modes, sizeof modes, "%d", p->modes);
    fprintf(fm, "| %s%s | %s | %g | %d | %.3g | %.3gx | %.2f / %d |", p->name, order[k] == c.ref ? " (ref)" : "", modes,
            dt, p->nq, ms, ms > 0 ? 1e3 * dt / ms : 0, p->iters_mean, p->iters_max);
    for (int i = 0; i < c.nprobe; i++)
      fprintf(fm, " %.3g | %.3g / %.3g | %.3g / %.3g |", p->vmax[i], p->err_max[i], p->err_rms[i], p->berr_max[i], p->berr_rms[i]);
    if (p->failed) fprintf(fm, " failed at t = %g s: %.120s |\n", p->t_fail, p->err);
    else fprintf(fm, " |\n");
  }
  fclose(fs);
  fclose(fm);
  int nfail = 0;
  for (int k = 0; k < n; k++) nfail += c.p[order[k]].failed;
  fprintf(stderr, "wrote %s/%s_series.csv, %s_summary.csv, %s.md (%d of %d paths failed)\n", out, c.name, c.name, c.name,
          nfail, n);
  for (int i = 0; i < c.npath; i++) free(c.p[i].val), free(c.p[i].mscene_json), cJSON_Delete(c.p[i].interface);
  free(c.scene_json);
  return 0;
}
#endif
