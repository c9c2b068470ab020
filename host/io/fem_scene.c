/* Scene files (JSON, parsed with cJSON). See docs/scene-format.md. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cuda.h"
#include "cofem/scene.h"
#include "io/json_fields.h"
#include "mesh/mesh_internal.h"

/* ---- JSON fields: every error names the file and the key (host/io/json_fields.h) --------------- */
#define AT(path, ctx) (&(cfJsonAt){(path), "", (ctx)})
enum { CF_SCENE_MAX_THREADS = 1024 }; /* solver.threads: 0 (OpenMP's default) .. this */
static int get_number(const cJSON* obj, const char* key, double* out, int required, const char* path,
                      const char* ctx) {
  return cf_json_number(obj, key, out, required, AT(path, ctx));
}
static int get_int(const cJSON* obj, const char* key, int* out, const char* path, const char* ctx) {
  return cf_json_int(obj, key, out, AT(path, ctx));
}
static int get_bool(const cJSON* obj, const char* key, int* out, const char* path, const char* ctx) {
  return cf_json_bool(obj, key, out, AT(path, ctx));
}
static int get_string(const cJSON* obj, const char* key, char* out, size_t n, int required, const char* path,
                      const char* ctx) {
  return cf_json_string(obj, key, out, n, required, AT(path, ctx));
}
static int get_vec3(const cJSON* obj, const char* key, double* out, int required, const char* path,
                    const char* ctx) {
  return cf_json_vec3(obj, key, out, required, AT(path, ctx));
}

void cf_scene_resolve_path(const char* scene_path, const char* rel, char* out, size_t n) {
  if (rel[0] == '/' || !strchr(scene_path, '/')) {
    snprintf(out, n, "%s", rel);
    return;
  }
  int dirlen = (int)(strrchr(scene_path, '/') - scene_path);
  snprintf(out, n, "%.*s/%s", dirlen, scene_path, rel);
}

static int parse_mask(const char* s, int* mask, const char* path, int idx) {
  *mask = 0;
  for (const char* c = s; *c; c++) {
    if (*c == 'x') *mask |= 1;
    else if (*c == 'y') *mask |= 2;
    else if (*c == 'z') *mask |= 4;
    else return cf_error(CF_ERR_SCENE, "%s: \"fixed\"[%d].dofs = \"%s\": use letters x, y, z", path, idx, s);
  }
  if (!*mask) return cf_error(CF_ERR_SCENE, "%s: \"fixed\"[%d].dofs is empty", path, idx);
  return CF_OK;
}

#define TRY(expr)               \
  do {                          \
    int st_ = (expr);           \
    if (st_ < 0) {              \
      cJSON_Delete(root);       \
      cf_scene_free(s);         \
      return st_;               \
    }                           \
  } while (0)

/* every key of obj is one of known (a typo such as "preconditoner" or "Young" would otherwise be
 * skipped and the run use the default); where: "solver." etc., as the messages name keys */
static int known_keys(const cJSON* obj, const char* const* known, const char* path, const char* where) {
  if (!cJSON_IsObject(obj)) {
    char name[64];
    snprintf(name, sizeof name, "%s", where);
    size_t n = strlen(name);
    if (n && name[n - 1] == '.') name[n - 1] = 0;
    return cf_error(CF_ERR_SCENE, "%s: \"%s\" must be an object", path, name);
  }
  for (const cJSON* it = obj->child; it; it = it->next) {
    int ok = 0;
    for (int k = 0; known[k]; k++) ok |= strcmp(it->string, known[k]) == 0;
    if (!ok) {
      char list[512] = "";
      size_t len = 0;
      for (int k = 0; known[k] && len < sizeof list; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s\"%s\"", k ? ", " : "", known[k]);
      return cf_error(CF_ERR_SCENE, "%s: unknown key \"%s%s\" (known there: %s)", path, where, it->string, list);
    }
  }
  return CF_OK;
}

/* in the section parsers below: an error returns at once (cf_scene_parse frees what was read) */
#define PASS(expr)            \
  do {                        \
    int st_ = (expr);         \
    if (st_ < 0) return st_;  \
  } while (0)

/* A relative tolerance below round-off cannot be met: the solver would stop on its iteration limit
 * and report something else (a failed step, "not converged"). */
#define CF_SCENE_MIN_TOL 1e-14
static int relative_tol(double tol, const char* key, const char* path) {
  if (tol < CF_SCENE_MIN_TOL)
    return cf_error(CF_ERR_SCENE, "%s: \"%s\" = %g is below round-off (a relative tolerance under %g cannot be "
                    "reached in double precision)", path, key, tol, CF_SCENE_MIN_TOL);
  return CF_OK;
}

/* Keys that only generalized-alpha reads (its Newton iterations and spectral radius): with
 * another integrator they would be silently ignored. */
static int integrator_keys(const cJSON* root, const char* path, const cfScene* s) {
  if (s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) return CF_OK;
  const char* integ = s->def.integrator == CF_INTEGRATOR_NEWMARK ? "newmark" : "backward_euler";
  const cJSON* time = cJSON_GetObjectItemCaseSensitive(root, "time");
  const cJSON* solver = cJSON_GetObjectItemCaseSensitive(root, "solver");
  static const char* const ga_solver[] = {"newton_tol", "newton_max_iter", "newton_max_cuts", NULL};
  const char* key = NULL;
  if (time && cJSON_GetObjectItemCaseSensitive(time, "rho_inf")) key = "time.rho_inf";
  for (int k = 0; !key && solver && ga_solver[k]; k++)
    if (cJSON_GetObjectItemCaseSensitive(solver, ga_solver[k])) key = ga_solver[k];
  if (!key) return CF_OK;
  return cf_error(CF_ERR_SCENE, "%s: \"%s%s\" has no effect with \"time.integrator\": \"%s\" (%s steps are "
                  "linear, without Newton iterations): remove it, or set \"time.integrator\": \"generalized_alpha\"",
                  path, strchr(key, '.') ? "" : "solver.", key, integ, integ);
}

/* "material" {E, nu, rho} and "damping" {alpha, beta} */
static int parse_material(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* mat = cJSON_GetObjectItemCaseSensitive(root, "material");
  if (!cJSON_IsObject(mat)) PASS(cf_error(CF_ERR_SCENE, "%s: missing \"material\" object {E, nu, rho}", path));
  static const char* const k_mat[] = {"E", "nu", "rho", NULL};
  PASS(known_keys(mat, k_mat, path, "material."));
  PASS(get_number(mat, "E", &s->def.E, 1, path, "material."));
  PASS(get_number(mat, "nu", &s->def.nu, 1, path, "material."));
  PASS(get_number(mat, "rho", &s->def.rho, 1, path, "material."));
  const cJSON* damp = cJSON_GetObjectItemCaseSensitive(root, "damping");
  if (damp) {
    static const char* const k_damp[] = {"alpha", "beta", NULL};
    PASS(known_keys(damp, k_damp, path, "damping."));
    PASS(get_number(damp, "alpha", &s->def.rayleigh_alpha, 0, path, "damping."));
    PASS(get_number(damp, "beta", &s->def.rayleigh_beta, 0, path, "damping."));
  }
  return CF_OK;
}

/* "fixed": [{set, dofs}] */
static int parse_fixed(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* fixed = cJSON_GetObjectItemCaseSensitive(root, "fixed");
  if (fixed) {
    if (!cJSON_IsArray(fixed)) PASS(cf_error(CF_ERR_SCENE, "%s: \"fixed\" must be an array", path));
    int i = 0;
    for (const cJSON* f = fixed->child; f; f = f->next, i++) {
      if (i >= CF_SCENE_MAX_ITEMS) PASS(cf_error(CF_ERR_SCENE, "%s: more than %d \"fixed\" entries", path, CF_SCENE_MAX_ITEMS));
      char ctx[32], dofs[8] = "xyz";
      snprintf(ctx, sizeof ctx, "fixed[%d].", i);
      static const char* const k_fix[] = {"set", "dofs", NULL};
      PASS(known_keys(f, k_fix, path, ctx));
      PASS(get_string(f, "set", s->fix[i].set, sizeof s->fix[i].set, 1, path, ctx));
      PASS(get_string(f, "dofs", dofs, sizeof dofs, 0, path, ctx));
      PASS(parse_mask(dofs, &s->fix[i].dir_mask, path, i));
      s->nfix++;
    }
  }
  return CF_OK;
}

/* "loads": [{set, force, start, ramp, stop}] */
static int parse_loads(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* loads = cJSON_GetObjectItemCaseSensitive(root, "loads");
  if (loads) {
    if (!cJSON_IsArray(loads)) PASS(cf_error(CF_ERR_SCENE, "%s: \"loads\" must be an array", path));
    int i = 0;
    for (const cJSON* l = loads->child; l; l = l->next, i++) {
      if (i >= CF_SCENE_MAX_ITEMS) PASS(cf_error(CF_ERR_SCENE, "%s: more than %d loads", path, CF_SCENE_MAX_ITEMS));
      char ctx[32];
      snprintf(ctx, sizeof ctx, "loads[%d].", i);
      static const char* const k_load[] = {"set", "force", "start", "ramp", "stop", NULL};
      PASS(known_keys(l, k_load, path, ctx));
      cfSceneLoad* L = &s->load[i];
      L->t_stop = INFINITY;
      PASS(get_string(l, "set", L->set, sizeof L->set, 1, path, ctx));
      PASS(get_vec3(l, "force", L->force, 1, path, ctx));
      PASS(get_number(l, "start", &L->t_start, 0, path, ctx));
      PASS(get_number(l, "ramp", &L->ramp, 0, path, ctx));
      PASS(get_number(l, "stop", &L->t_stop, 0, path, ctx));
      if (L->ramp < 0) PASS(cf_error(CF_ERR_SCENE, "%s: \"%sramp\" must be >= 0", path, ctx));
      if (!(L->t_stop > L->t_start)) /* it acts for start <= t <= stop: never */
        PASS(cf_error(CF_ERR_SCENE, "%s: \"%sstop\" = %g is not after \"%sstart\" = %g: the load would never act",
                      path, ctx, L->t_stop, ctx, L->t_start));
      s->nload++;
    }
  }
  return CF_OK;
}

/* "time": {dt, end, integrator, rho_inf} */
static int parse_time(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* time = cJSON_GetObjectItemCaseSensitive(root, "time");
  if (time) {
    static const char* const k_time[] = {"dt", "end", "integrator", "rho_inf", NULL};
    PASS(known_keys(time, k_time, path, "time."));
    PASS(get_number(time, "dt", &s->def.dt, 0, path, "time."));
    PASS(get_number(time, "end", &s->t_end, 0, path, "time."));
    char integ[32] = "backward_euler";
    PASS(get_string(time, "integrator", integ, sizeof integ, 0, path, "time."));
    if (strcmp(integ, "backward_euler") == 0) s->def.integrator = CF_INTEGRATOR_BACKWARD_EULER;
    else if (strcmp(integ, "newmark") == 0) s->def.integrator = CF_INTEGRATOR_NEWMARK;
    else if (strcmp(integ, "generalized_alpha") == 0) s->def.integrator = CF_INTEGRATOR_GENERALIZED_ALPHA;
    else PASS(cf_error(CF_ERR_SCENE, "%s: \"time.integrator\" = \"%s\": use \"backward_euler\", \"newmark\" or "
                      "\"generalized_alpha\"", path, integ));
    PASS(get_number(time, "rho_inf", &s->def.rho_inf, 0, path, "time."));
    if (!(s->def.rho_inf >= 0 && s->def.rho_inf <= 1))
      PASS(cf_error(CF_ERR_SCENE, "%s: \"time.rho_inf\" = %g must lie in [0, 1]", path, s->def.rho_inf));
    if (!(s->t_end > 0)) PASS(cf_error(CF_ERR_SCENE, "%s: \"time.end\" must be positive", path));
    if (s->def.dt > s->t_end)
      PASS(cf_error(CF_ERR_SCENE, "%s: \"time.dt\" = %g s is longer than the run (\"time.end\" = %g s%s)", path,
                    s->def.dt, s->t_end, cJSON_GetObjectItemCaseSensitive(time, "end") ? "" : ", the default"));
  }
  return CF_OK;
}

/* "solver": PCG, Newton, backend, mass, tangent, preconditioner (defaults set here too) */
static int parse_solver(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* solver = cJSON_GetObjectItemCaseSensitive(root, "solver");
  s->def.preconditioner = CF_PRECOND_AUTO; /* resolved by cf_scene_build, knowing the backend */
  if (s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) s->def.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
  if (solver) {
    static const char* const k_solver[] = {"tol", "max_iter", "warm_start", "threads", "backend", "mass", "tangent",
                                           "newton_tol", "newton_max_iter", "newton_max_cuts", "divergence_check",
                                           "preconditioner", "rotations", NULL};
    PASS(known_keys(solver, k_solver, path, "solver."));
    char mass[16] = "lumped";
    PASS(get_number(solver, "tol", &s->def.pcg_tol, 0, path, "solver."));
    PASS(relative_tol(s->def.pcg_tol, "solver.tol", path));
    PASS(get_int(solver, "max_iter", &s->def.pcg_max_iter, path, "solver."));
    PASS(get_bool(solver, "warm_start", &s->def.warm_start, path, "solver."));
    PASS(cf_json_int_range(solver, "threads", &s->def.threads, 0, CF_SCENE_MAX_THREADS, AT(path, "solver.")));
    PASS(get_string(solver, "backend", s->backend, sizeof s->backend, 0, path, "solver."));
    PASS(get_string(solver, "mass", mass, sizeof mass, 0, path, "solver."));
    /* generalized-alpha's Newton iterations take the consistent tangent unless told otherwise */
    char tan[32] = "KR";
    if (s->def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) snprintf(tan, sizeof tan, "symmetric_consistent");
    PASS(get_string(solver, "tangent", tan, sizeof tan, 0, path, "solver."));
    PASS(get_number(solver, "newton_tol", &s->def.newton_tol, 0, path, "solver."));
    if (!(s->def.newton_tol > 0 && s->def.newton_tol < 1))
      PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.newton_tol\" = %g must lie in (0, 1)", path, s->def.newton_tol));
    PASS(relative_tol(s->def.newton_tol, "solver.newton_tol", path));
    PASS(cf_json_int_range(solver, "newton_max_iter", &s->def.newton_max_iter, 1, 1000, AT(path, "solver.")));
    PASS(cf_json_int_range(solver, "newton_max_cuts", &s->def.newton_max_cuts, 0, 20, AT(path, "solver.")));
    PASS(get_bool(solver, "divergence_check", &s->def.divergence_check, path, "solver."));
    if (strcmp(tan, "KR") == 0) s->def.dyn_tangent = CF_DYN_TANGENT_KR;
    else if (strcmp(tan, "symmetric_consistent") == 0) s->def.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
    else PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.tangent\" = \"%s\": use \"KR\" or \"symmetric_consistent\"", path, tan));
    char pre[32] = "auto";
    PASS(get_string(solver, "preconditioner", pre, sizeof pre, 0, path, "solver."));
    if ((s->def.preconditioner = cf_preconditioner_from_key(pre)) < 0) PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.preconditioner\" = \"%s\": use \"auto\", \"block_jacobi\", \"rotated_cholesky\" or \"amg\"", path, pre));
    char rot[16] = "";
    PASS(get_string(solver, "rotations", rot, sizeof rot, 0, path, "solver."));
    if (!strcmp(rot, "element")) s->def.rotations = CF_ROTATIONS_ELEMENT;
    else if (!strcmp(rot, "quadrature")) s->def.rotations = CF_ROTATIONS_QUADRATURE;
    else if (rot[0])
      PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.rotations\" = \"%s\": use \"element\" or \"quadrature\"", path, rot));
    if (strcmp(mass, "lumped") == 0) s->def.consistent_mass = 0;
    else if (strcmp(mass, "consistent") == 0) s->def.consistent_mass = 1;
    else PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.mass\" = \"%s\": use \"lumped\" or \"consistent\"", path, mass));
    if (strcmp(s->backend, "cpu") && strcmp(s->backend, "cuda") && strcmp(s->backend, "auto"))
      PASS(cf_error(CF_ERR_SCENE, "%s: \"solver.backend\" = \"%s\": use \"cpu\", \"cuda\" or \"auto\"", path, s->backend));
  }
  return CF_OK;
}

/* "static": {increments, tol, max_iter, max_cuts, tangent} */
static int parse_static(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* st = cJSON_GetObjectItemCaseSensitive(root, "static");
  if (st) {
    static const char* const k_static[] = {"increments", "tol", "max_iter", "max_cuts", "tangent", NULL};
    PASS(known_keys(st, k_static, path, "static."));
    char tangent[16] = "consistent";
    PASS(get_int(st, "increments", &s->stat.increments, path, "static."));
    PASS(get_number(st, "tol", &s->stat.tol, 0, path, "static."));
    PASS(get_int(st, "max_iter", &s->stat.max_iter, path, "static."));
    PASS(cf_json_int_range(st, "max_cuts", &s->stat.max_cuts, 0, 20, AT(path, "static.")));
    PASS(get_string(st, "tangent", tangent, sizeof tangent, 0, path, "static."));
    if (strcmp(tangent, "consistent") == 0) s->stat.tangent = CF_TANGENT_CONSISTENT;
    else if (strcmp(tangent, "KR") == 0) s->stat.tangent = CF_TANGENT_KR;
    else PASS(cf_error(CF_ERR_SCENE, "%s: \"static.tangent\" = \"%s\": use \"consistent\" or \"KR\"", path, tangent));
    if (s->stat.increments < 1 || s->stat.max_iter < 1 || !(s->stat.tol > 0))
      PASS(cf_error(CF_ERR_SCENE, "%s: \"static\": increments, max_iter and tol must be positive", path));
    if (!(s->stat.tol < 1))
      PASS(cf_error(CF_ERR_SCENE, "%s: \"static.tol\" = %g must lie in (0, 1) (a residual relative to the load)",
                    path, s->stat.tol));
    PASS(relative_tol(s->stat.tol, "static.tol", path));
  }
  return CF_OK;
}

/* "output": {dir, vtu_every, probes} */
static int parse_output(const cJSON* root, const char* path, cfScene* s) {
  const cJSON* out = cJSON_GetObjectItemCaseSensitive(root, "output");
  if (out) {
    static const char* const k_out[] = {"dir", "vtu_every", "probes", NULL};
    PASS(known_keys(out, k_out, path, "output."));
    char dir[CF_PATH_MAX] = "";
    PASS(get_string(out, "dir", dir, sizeof dir, 0, path, "output."));
    if (dir[0]) snprintf(s->out_dir, sizeof s->out_dir, "%s", dir); /* relative to the cwd */
    PASS(cf_json_int_range(out, "vtu_every", &s->vtu_every, 0, 1000000000, AT(path, "output.")));
    const cJSON* probes = cJSON_GetObjectItemCaseSensitive(out, "probes");
    if (probes) {
      if (!cJSON_IsArray(probes)) PASS(cf_error(CF_ERR_SCENE, "%s: \"output.probes\" must be an array of set names", path));
      for (const cJSON* p = probes->child; p; p = p->next) {
        if (!cJSON_IsString(p) || strlen(p->valuestring) >= CF_NAME_MAX || s->nprobe >= CF_SCENE_MAX_ITEMS)
          PASS(cf_error(CF_ERR_SCENE, "%s: \"output.probes\" entries must be set names (at most %d)", path, CF_SCENE_MAX_ITEMS));
        strcpy(s->probe[s->nprobe++], p->valuestring);
      }
    }
  }
  return CF_OK;
}

int cf_scene_parse(const char* json, const char* path, cfScene* s) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  cJSON* root; /* "{...} x" is no scene either */
  int pst = cf_json_parse(json, path, &root);
  if (pst < 0) return pst;
  if (!cJSON_IsObject(root)) TRY(cf_error(CF_ERR_SCENE, "%s: the scene must be a JSON object", path));
  TRY(cf_json_no_duplicates(root, AT(path, "")));
  static const char* known[] = {"mesh", "material", "damping", "gravity", "fixed", "loads", "time",
                                "solver", "static", "output", "description", NULL};
  for (const cJSON* it = root->child; it; it = it->next) {
    int ok = 0;
    for (int k = 0; known[k]; k++) ok |= strcmp(it->string, known[k]) == 0;
    if (!ok) TRY(cf_error(CF_ERR_SCENE, "%s: unknown key \"%s\"", path, it->string));
  }
  s->def = cf_default_model_def();
  s->stat = cf_default_static_options();
  s->t_end = 1.0;
  strcpy(s->backend, "cpu");
  s->vtu_every = 0;

  char rel[CF_PATH_MAX];
  TRY(get_string(root, "mesh", rel, sizeof rel, 1, path, ""));
  cf_scene_resolve_path(path, rel, s->mesh_path, sizeof s->mesh_path);

  TRY(parse_material(root, path, s));
  TRY(get_vec3(root, "gravity", s->def.gravity, 0, path, ""));

  TRY(parse_fixed(root, path, s));
  TRY(parse_loads(root, path, s));
  TRY(parse_time(root, path, s));
  TRY(parse_solver(root, path, s));
  TRY(integrator_keys(root, path, s));
  TRY(parse_static(root, path, s));
  TRY(parse_output(root, path, s));
  cJSON_Delete(root);
  return CF_OK;
}
#undef TRY

/* The whole file, NUL-terminated, or NULL (cf_last_error() says why): a regular file only (a
 * FIFO, device or directory is refused before it is opened), the allocation bounded by its size
 * (cf_read_regular_file, host/util/file.c). */
static char* read_text(const char* path) {
  char* buf = NULL;
  size_t n = 0;
  if (cf_read_regular_file(path, NULL, &buf, &n) != CF_OK) return NULL;
  return buf;
}

int cf_scene_load(const char* path, cfScene* s) {
  memset(s, 0, sizeof *s);
  char* text = read_text(path);
  if (!text) { /* the reason, without the path cfi_read_file put first */
    const char* why = cf_last_error();
    size_t len = strlen(path);
    if (strncmp(why, path, len) == 0 && why[len] == ':') why += len + 1 + (why[len + 1] == ' ');
    char msg[640];
    snprintf(msg, sizeof msg, "%s", why);
    return cf_error(CF_ERR_IO, "%s: cannot read the scene file (%s)", path, msg);
  }
  int st = cf_scene_load_text(text, path, s);
  free(text);
  return st;
}

int cf_scene_load_text(const char* json, const char* path, cfScene* s) {
  memset(s, 0, sizeof *s);
  if (!json || !path) return cf_error(CF_ERR_ARG, "cf_scene_load_text: no %s", json ? "path" : "JSON text");
  int st = cf_scene_parse(json, path, s);
  if (st < 0) return st;
  st = cf_mesh_read(s->mesh_path, &s->mesh);
  if (st < 0) {
    cf_scene_free(s); /* sets no message: cf_last_error() still names the failure */
    return cf_error(st, "%s: mesh: %s", path, cf_last_error());
  }
  /* every named set must exist */
  for (int i = 0; i < s->nfix; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->fix[i].set)) goto unknown_set_fix;
  for (int i = 0; i < s->nload; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->load[i].set)) {
      st = cf_error(CF_ERR_SCENE, "%s: \"loads\"[%d] names node set \"%s\", which %s does not define",
                    path, i, s->load[i].set, s->mesh_path);
      cf_scene_free(s);
      return st;
    }
  /* load weights, once */
  unsigned char* in = calloc(s->mesh.nnode, 1);
  for (int i = 0; i < s->nload && in; i++) {
    const cfNodeSet* set = cf_mesh_find_nset(&s->mesh, s->load[i].set);
    s->load_weight[i] = malloc(sizeof(double) * (set->count > 0 ? set->count : 1));
    if (!s->load_weight[i]) break;
    cf_set_area_weights(&s->mesh, set, s->load_weight[i], in);
  }
  int have_weights = in != NULL;
  for (int i = 0; i < s->nload; i++) have_weights &= s->load_weight[i] != NULL;
  free(in);
  if (!have_weights) {
    cf_scene_free(s);
    return cf_error(CF_ERR_NOMEM, "%s: out of memory", path);
  }
  for (int i = 0; i < s->nprobe; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->probe[i])) {
      st = cf_error(CF_ERR_SCENE, "%s: \"output.probes\" names node set \"%s\", which %s does not define",
                    path, s->probe[i], s->mesh_path);
      cf_scene_free(s);
      return st;
    }
  return CF_OK;
unknown_set_fix:
  for (int i = 0; i < s->nfix; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->fix[i].set)) {
      st = cf_error(CF_ERR_SCENE, "%s: \"fixed\"[%d] names node set \"%s\", which %s does not define",
                    path, i, s->fix[i].set, s->mesh_path);
      break;
    }
  cf_scene_free(s);
  return st;
}

int cf_scene_build(const cfScene* s, cfModel** model, cfData** data) {
  *model = NULL;
  *data = NULL;
  /* "auto": the GPU's preconditioner where the run will go to the GPU (backend "cuda", or "auto"
   * with a usable device), else the CPU's choice by size (cf_preconditioner_auto) */
  cfModelDef def = s->def;
  if (def.preconditioner == CF_PRECOND_AUTO) {
    /* the GPU's methods (cf_cuda_check_model): a scene it refuses runs on the CPU with "auto" */
    const int gpu_method = def.dyn_tangent == CF_DYN_TANGENT_KR && (def.integrator == CF_INTEGRATOR_BACKWARD_EULER ||
                                                                    def.integrator == CF_INTEGRATOR_GENERALIZED_ALPHA);
    int gpu = !strcmp(s->backend, "cuda") || (!strcmp(s->backend, "auto") && gpu_method && cf_cuda_available(NULL, 0));
    def.preconditioner = cf_preconditioner_auto(s->mesh.ntet, def.integrator, gpu);
  }
  int st = cf_model_create(&s->mesh, &def, model);
  if (st < 0) return cf_error(st, "%s: %s", s->path, cf_last_error());
  for (int i = 0; i < s->nfix; i++) {
    const cfNodeSet* set = cf_mesh_find_nset(&s->mesh, s->fix[i].set);
    st = cf_model_fix_nodes(*model, set->nodes, set->count, s->fix[i].dir_mask);
    if (st < 0) break;
  }
  if (st >= 0) st = cf_data_create(*model, data);
  if (st < 0) {
    cf_model_free(*model);
    *model = NULL;
  }
  return st;
}

/* the diagonal of the mesh's bounding box */
static double mesh_size(const cfMesh* mesh) {
  if (mesh->nnode < 1) return 0;
  double lo[3], hi[3], L2 = 0;
  for (int k = 0; k < 3; k++) lo[k] = hi[k] = mesh->X[k];
  for (int i = 1; i < mesh->nnode; i++)
    for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], mesh->X[3 * i + k]), hi[k] = fmax(hi[k], mesh->X[3 * i + k]);
  for (int k = 0; k < 3; k++) L2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
  return sqrt(L2);
}

double cf_scene_step_ratio(const cfScene* s, double dt) {
  const double L = mesh_size(&s->mesh);
  if (!(L > 0) || !(s->def.rho > 0) || !(s->def.E > 0)) return 0;
  const double n = dt * sqrt(s->def.E / s->def.rho) / L; /* the step in wave transit times */
  return n * n;
}

int cf_scene_check_step(const cfScene* s, double dt) {
  if (!(cf_scene_step_ratio(s, dt) > CF_SCENE_MAX_STEP_RATIO)) return CF_OK;
  const double c = sqrt(s->def.E / s->def.rho), L = mesh_size(&s->mesh);
  return cf_error(CF_ERR_SCENE, "%s: \"time.dt\" = %g s is %.3g times the part's wave transit time (its size %.3g m "
                  "over the wave speed sqrt(E / rho) = %.3g m/s, \"material.rho\" = %g kg/m^3): above %.0e its mass is "
                  "lost to round-off against its stiffness in a step; use a smaller time step (or a density of the "
                  "right order)", s->path, dt, dt * c / L, L, c, s->def.rho, sqrt(CF_SCENE_MAX_STEP_RATIO));
}

void cf_set_area_weights(const cfMesh* mesh, const cfNodeSet* set, double* w, unsigned char* in) {
  for (int i = 0; i < set->count; i++) {
    w[i] = 0;
    in[set->nodes[i]] = 1;
  }
  double total = 0;
  for (int t = 0; t < mesh->ntri; t++) {
    const int* v = mesh->tri + 3 * t;
    if (!(in[v[0]] && in[v[1]] && in[v[2]])) continue;
    const double *a = mesh->X + 3 * v[0], *b = mesh->X + 3 * v[1], *c = mesh->X + 3 * v[2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, q[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * q[2] - u[2] * q[1], u[2] * q[0] - u[0] * q[2], u[0] * q[1] - u[1] * q[0]};
    double area = 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++) {
      /* sets are sorted: binary search for the position of the node */
      int lo = 0, hi = set->count - 1;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (set->nodes[mid] < v[k]) lo = mid + 1; else hi = mid;
      }
      w[lo] += area / 3;
    }
    total += area;
  }
  for (int i = 0; i < set->count; i++) in[set->nodes[i]] = 0;
  if (total > 0)
    for (int i = 0; i < set->count; i++) w[i] /= total;
  else
    for (int i = 0; i < set->count; i++) w[i] = 1.0 / set->count;
}

void cf_scene_forces(const cfScene* s, double t, double scale, double* f) {
  memset(f, 0, sizeof(double) * 3 * s->mesh.nnode);
  for (int l = 0; l < s->nload; l++) {
    const cfSceneLoad* L = &s->load[l];
    if (t < L->t_start || t > L->t_stop) continue;
    double ramp = L->ramp > 0 ? fmin(1.0, (t - L->t_start) / L->ramp) : 1.0;
    const cfNodeSet* set = cf_mesh_find_nset(&s->mesh, L->set);
    const double* w = s->load_weight[l];
    for (int i = 0; i < set->count; i++)
      for (int k = 0; k < 3; k++) f[3 * set->nodes[i] + k] += scale * ramp * w[i] * L->force[k];
  }
}

void cf_set_displacement(const cfMesh* mesh, const cfNodeSet* set, const double* x, double* u) {
  u[0] = u[1] = u[2] = 0;
  for (int i = 0; i < set->count; i++)
    for (int k = 0; k < 3; k++) u[k] += x[3 * set->nodes[i] + k] - mesh->X[3 * set->nodes[i] + k];
  for (int k = 0; k < 3; k++) u[k] /= set->count;
}

void cf_scene_free(cfScene* s) {
  for (int i = 0; i < CF_SCENE_MAX_ITEMS; i++) free(s->load_weight[i]);
  cf_mesh_free(&s->mesh);
  memset(s, 0, sizeof *s);
}
