/* Mechanism scenes: JSON (cJSON) in the conventions of the FEM scenes (docs/mbs.md): SI units,
 * unknown keys are errors, every error names the file and the key, entities are referred to by
 * name. Points and axes are global at t = 0, or the name of a marker. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cofem/cuda.h"
#include "cofem/mbs_fe.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "io/json_fields.h"
#include "mbs/mbs_internal.h"
#include "mesh/mesh_internal.h"

typedef struct Ctx {
  const char* path;
  cfMbsScene* s;
} Ctx;

/* ---- JSON helpers ---------------------------------------------------------------------------- */
static int check_keys(const Ctx* c, const cJSON* obj, const char* const* known, const char* where) {
  if (!cJSON_IsObject(obj)) return cf_error(CF_ERR_SCENE, "%s: %s must be an object", c->path, where);
  for (const cJSON* it = obj->child; it; it = it->next) {
    int ok = 0;
    for (int k = 0; known[k]; k++) ok |= strcmp(it->string, known[k]) == 0;
    if (!ok) return cf_error(CF_ERR_SCENE, "%s: unknown key \"%s\" in %s", c->path, it->string, where);
  }
  return CF_OK;
}

/* typed fields through host/io/json_fields.h, with "<where>: " as the message prefix */
#define AT(c, where) (&(cfJsonAt){(c)->path, prefix_of(where, (char[200]){0}), ""})
static const char* prefix_of(const char* where, char* buf) {
  snprintf(buf, 200, "%s: ", where);
  return buf;
}
static int get_num(const Ctx* c, const cJSON* obj, const char* key, double* out, int required, const char* where) {
  return cf_json_number(obj, key, out, required, AT(c, where));
}
static int get_int(const Ctx* c, const cJSON* obj, const char* key, int* out, const char* where) {
  return cf_json_int(obj, key, out, AT(c, where));
}
static int get_bool(const Ctx* c, const cJSON* obj, const char* key, int* out, const char* where) {
  return cf_json_bool(obj, key, out, AT(c, where));
}
static int get_str(const Ctx* c, const cJSON* obj, const char* key, char* out, size_t n, int required, const char* where) {
  return cf_json_string(obj, key, out, n, required, AT(c, where));
}
static int num_array(const Ctx* c, const cJSON* it, double* out, int n_min, int n_max, int* n, const char* where,
                     const char* key) {
  return cf_json_numbers(it, key, out, n_min, n_max, n, AT(c, where));
}
static int get_vec3(const Ctx* c, const cJSON* obj, const char* key, double* out, int required, const char* where) {
  return cf_json_vec3(obj, key, out, required, AT(c, where));
}

/* the last error again, prefixed with "<file>: <where>: " */
static int rethrow_at(const Ctx* c, int st, const char* where) {
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s: %s: ", c->path, where);
  return cf_mbs__rethrow(st, prefix);
}

/* the head of a named entry of array `array`: its keys, its "name", and `where` = "\"<array>\"[i] ('<name>')" */
static int entry_head(const Ctx* c, const cJSON* o, const char* const* known, const char* array, int i, char* name,
                      size_t nname, char* where, size_t nwhere) {
  snprintf(where, nwhere, "\"%s\"[%d]", array, i);
  int st = check_keys(c, o, known, where);
  if (st >= 0) st = get_str(c, o, "name", name, nname, 1, where);
  if (st < 0) return st;
  snprintf(where, nwhere, "\"%s\"[%d] ('%s')", array, i, name);
  return CF_OK;
}

/* ---- names ------------------------------------------------------------------------------------- */
static void body_list(const cfMbsDef* def, char* out, size_t n) {
  size_t len = (size_t)snprintf(out, n, "ground");
  for (int b = 0; b < def->nbody && len < n; b++) len += (size_t)snprintf(out + len, n - len, ", %s", def->body[b].name);
}

static int body_ref(const Ctx* c, const cJSON* obj, const char* key, int* id, const char* where) {
  char name[CF_MBS_NAME_MAX];
  int st = get_str(c, obj, key, name, sizeof name, 1, where);
  if (st < 0) return st;
  *id = cf_mbs_def_find_body(&c->s->def, name);
  if (*id == CF_MBS_NONE) {
    char list[512];
    body_list(&c->s->def, list, sizeof list);
    return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" names body '%s', which the mechanism does not define (bodies: %s)",
                    c->path, where, key, name, list);
  }
  return CF_OK;
}

static int find_marker(const cfMbsDef* def, const char* name) {
  for (int k = 0; k < def->nmarker; k++)
    if (!strcmp(def->marker[k].name, name)) return k;
  return -1;
}
static int find_joint(const cfMbsDef* def, const char* name) {
  for (int k = 0; k < def->njoint; k++)
    if (!strcmp(def->joint[k].name, name)) return k;
  return -1;
}
static int find_driver(const cfMbsDef* def, const char* name) {
  for (int k = 0; k < def->ndriver; k++)
    if (!strcmp(def->driver[k].name, name)) return k;
  return -1;
}
static int find_force(const cfMbsDef* def, const char* name) {
  for (int k = 0; k < def->nforce; k++)
    if (!strcmp(def->force[k].name, name)) return k;
  return -1;
}

/* global position / axis at t = 0 of a marker */
static void marker_global(const cfMbsDef* def, int k, double P[3], double A[3]) {
  const cfMbsMarkerDef* mk = &def->marker[k];
  double pos[3], R[9];
  cf_mbs__body_pose(def, mk->body, pos, R);
  for (int i = 0; i < 3; i++) {
    P[i] = pos[i] + R[3 * i] * mk->pos[0] + R[3 * i + 1] * mk->pos[1] + R[3 * i + 2] * mk->pos[2];
    A[i] = R[3 * i] * mk->axis[0] + R[3 * i + 1] * mk->axis[1] + R[3 * i + 2] * mk->axis[2];
  }
}

/* a point or an axis: [x, y, z] (global at t = 0) or a marker name; axis = 1 takes the marker's axis */
static int get_point(const Ctx* c, const cJSON* obj, const char* key, double* out, int required, int axis,
                     const char* where) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return required ? cf_error(CF_ERR_SCENE, "%s: %s: missing \"%s\"", c->path, where, key) : CF_OK;
  if (cJSON_IsString(it)) {
    int k = find_marker(&c->s->def, it->valuestring);
    if (k < 0)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" names marker '%s', which the mechanism does not define", c->path,
                      where, key, it->valuestring);
    double P[3], A[3];
    marker_global(&c->s->def, k, P, A);
    memcpy(out, axis ? A : P, 3 * sizeof(double));
    return CF_OK;
  }
  return num_array(c, it, out, 3, 3, NULL, where, key);
}

/* {"type": "table", "t": [t0, t1, ...], "values": [y0, y1, ...]}: the points, in one block owned by the
 * scene (cfMbsScene.tabs), interleaved t0 y0 t1 y1 ... (cfMbsFunc.tab); times increasing */
static int get_table(const Ctx* c, const cJSON* it, cfMbsFunc* f, const char* w) {
  const cJSON* T = cJSON_GetObjectItemCaseSensitive(it, "t");
  const cJSON* Y = cJSON_GetObjectItemCaseSensitive(it, "values");
  if (!T || !Y) return cf_error(CF_ERR_SCENE, "%s: %s: missing \"%s\"", c->path, w, T ? "values" : "t");
  int n = cJSON_IsArray(T) ? cJSON_GetArraySize(T) : -1, ny = cJSON_IsArray(Y) ? cJSON_GetArraySize(Y) : -1;
  if (n < 1 || ny < 1)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" must be an array of at least one number", c->path, w, n < 1 ? "t" : "values");
  if (n != ny)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"t\" has %d times and \"values\" %d values: give one value per time", c->path,
                    w, n, ny);
  double** grown = realloc(c->s->tabs, sizeof(double*) * (size_t)(c->s->ntabs + 1));
  if (!grown) return cf_error(CF_ERR_NOMEM, "%s: %s: out of memory", c->path, w);
  c->s->tabs = grown;
  double* p = malloc(sizeof(double) * 2 * (size_t)n);
  if (!p) return cf_error(CF_ERR_NOMEM, "%s: %s: out of memory", c->path, w);
  c->s->tabs[c->s->ntabs++] = p; /* freed with the scene */
  /* the children in order (cJSON_GetArrayItem walks the list from its head: quadratic in n) */
  const cJSON* a = T->child;
  const cJSON* b = Y->child;
  for (int i = 0; i < n; i++, a = a->next, b = b->next) {
    if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble))
      return cf_error(CF_ERR_SCENE, "%s: %s: \"t\"[%d] must be a finite number", c->path, w, i);
    if (!cJSON_IsNumber(b) || !isfinite(b->valuedouble))
      return cf_error(CF_ERR_SCENE, "%s: %s: \"values\"[%d] must be a finite number", c->path, w, i);
    p[2 * i] = a->valuedouble, p[2 * i + 1] = b->valuedouble;
    if (i > 0 && !(p[2 * i] > p[2 * i - 2]))
      return cf_error(CF_ERR_SCENE, "%s: %s: \"t\" must increase: \"t\"[%d] = %.17g after \"t\"[%d] = %.17g", c->path, w, i,
                      p[2 * i], i - 1, p[2 * i - 2]);
  }
  f->type = CF_MBS_FUNC_TABLE;
  f->n = n;
  f->tab = p;
  return CF_OK;
}

/* a time function: a number, or {"type": "constant"|"poly"|"harmonic"|"step"|"table", ...} */
static int get_func(const Ctx* c, const cJSON* obj, const char* key, cfMbsFunc* f, int required, int* present,
                    const char* where) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (present) *present = it != NULL;
  if (!it) return required ? cf_error(CF_ERR_SCENE, "%s: %s: missing \"%s\"", c->path, where, key) : CF_OK;
  int rate = f->rate;
  memset(f, 0, sizeof *f);
  f->rate = rate;
  if (cJSON_IsNumber(it)) {
    if (!isfinite(it->valuedouble)) return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" must be finite", c->path, where, key);
    f->type = CF_MBS_FUNC_CONST;
    f->c[0] = it->valuedouble;
    return CF_OK;
  }
  char w[160], type[16] = "";
  snprintf(w, sizeof w, "%s \"%s\"", where, key);
  int st = get_str(c, it, "type", type, sizeof type, 1, w);
  if (st < 0) return st;
  if (!strcmp(type, "constant")) {
    static const char* known[] = {"type", "value", NULL};
    if ((st = check_keys(c, it, known, w)) < 0) return st;
    f->type = CF_MBS_FUNC_CONST;
    return get_num(c, it, "value", &f->c[0], 1, w);
  }
  if (!strcmp(type, "poly")) {
    static const char* known[] = {"type", "coeffs", NULL};
    if ((st = check_keys(c, it, known, w)) < 0) return st;
    f->type = CF_MBS_FUNC_POLY;
    const cJSON* co = cJSON_GetObjectItemCaseSensitive(it, "coeffs");
    if (!co) return cf_error(CF_ERR_SCENE, "%s: %s: missing \"coeffs\"", c->path, w);
    return num_array(c, co, f->c, 1, 7, &f->n, w, "coeffs");
  }
  if (!strcmp(type, "harmonic")) {
    static const char* known[] = {"type", "amplitude", "omega", "phase", "offset", NULL};
    if ((st = check_keys(c, it, known, w)) < 0) return st;
    f->type = CF_MBS_FUNC_HARMONIC;
    st = get_num(c, it, "amplitude", &f->c[0], 1, w);
    if (st >= 0) st = get_num(c, it, "omega", &f->c[1], 1, w);
    if (st >= 0) st = get_num(c, it, "phase", &f->c[2], 0, w);
    if (st >= 0) st = get_num(c, it, "offset", &f->c[3], 0, w);
    return st;
  }
  if (!strcmp(type, "step")) {
    static const char* known[] = {"type", "from", "to", "t0", "t1", NULL};
    if ((st = check_keys(c, it, known, w)) < 0) return st;
    f->type = CF_MBS_FUNC_STEP;
    st = get_num(c, it, "from", &f->c[0], 1, w);
    if (st >= 0) st = get_num(c, it, "to", &f->c[1], 1, w);
    if (st >= 0) st = get_num(c, it, "t0", &f->c[2], 1, w);
    if (st >= 0) st = get_num(c, it, "t1", &f->c[3], 1, w);
    if (st >= 0 && !(f->c[3] > f->c[2])) return cf_error(CF_ERR_SCENE, "%s: %s: a step needs t1 > t0", c->path, w);
    return st;
  }
  if (!strcmp(type, "table")) {
    static const char* known[] = {"type", "t", "values", NULL};
    if ((st = check_keys(c, it, known, w)) < 0) return st;
    return get_table(c, it, f, w);
  }
  return cf_error(CF_ERR_SCENE, "%s: %s: \"type\" = \"%s\": use \"constant\", \"poly\", \"harmonic\", \"step\" or \"table\"",
                  c->path, w, type);
}

/* A flexible body's FE scene is read for its mesh, material, damping, supports and solver: its own
 * "gravity" and "loads" are not applied in a mechanism (the mechanism's "gravity" acts on every
 * body, and loads are the mechanism's "forces"); say so rather than drop them silently. */
static void note_unused_fe_keys(const Ctx* c, const cfScene* fe, const char* w) {
  const int grav = fe->def.gravity[0] != 0 || fe->def.gravity[1] != 0 || fe->def.gravity[2] != 0;
  if ((!grav && fe->nload == 0) || c->s->nwarning >= CF_MBS_MAX_FLEX) return;
  char what[64];
  snprintf(what, sizeof what, "%s%s%s", grav ? "\"gravity\"" : "", grav && fe->nload ? " and " : "",
           fe->nload ? "\"loads\"" : "");
  snprintf(c->s->warning[c->s->nwarning++], sizeof c->s->warning[0],
           "%s: %s: the FE scene %s: its %s %s not used in a mechanism; the mechanism's \"gravity\" acts on the body "
           "(%g, %g, %g), loads on it are \"forces\" at a \"node\" set", c->path, w, fe->path, what,
           grav && fe->nload ? "are" : "is", c->s->def.opt.gravity[0], c->s->def.opt.gravity[1], c->s->def.opt.gravity[2]);
}

/* The mechanism's step against the part's wave transit time (cf_scene_step_ratio): a density
 * millions of times too small, or a step far too long, loses the part's mass to round-off, and the
 * run fails naming an internal body ("lug.nodes0") or a coordinate */
static int check_part_step(const Ctx* c, const cfScene* fe, const char* w) {
  const double h = c->s->def.opt.dt, r = cf_scene_step_ratio(fe, h);
  if (!(r > CF_SCENE_MAX_STEP_RATIO)) return CF_OK;
  const double cw = sqrt(fe->def.E / fe->def.rho), L = h * cw / sqrt(r); /* r finite: h <= time.end */
  return cf_error(CF_ERR_SCENE, "%s: %s: the FE scene %s: its density \"material.rho\" = %g kg/m^3 (with \"E\" = %g Pa) "
                  "makes the part's wave transit time, %.3g m / %.3g m/s, %.3g times shorter than the mechanism's "
                  "\"time.dt\" = %g s: above %.0e its mass is lost to round-off against its stiffness; check the density "
                  "(kg/m^3) or use a smaller time step", c->path, w, fe->path, fe->def.rho, fe->def.E, L, cw, sqrt(r), h,
                  sqrt(CF_SCENE_MAX_STEP_RATIO));
}

/* The keys of "flexible" per formulation: a key of another formulation would be read by none and
 * silently do nothing ("factor" on a modal body), so it is refused, naming both. */
enum { FORM_MODAL = 1, FORM_COROT = 2, FORM_LUMPED = 4, FORM_ALL = 7 };
static const struct {
  const char* key;
  int forms;
} k_flex[] = {{"scene", FORM_ALL},           {"formulation", FORM_ALL},   {"description", FORM_ALL},
              {"supports", FORM_ALL},        {"interface", FORM_MODAL},   {"modes", FORM_MODAL},
              {"damping", FORM_MODAL},       {"reduction", FORM_MODAL},   {"factor", FORM_COROT},
              {"backend", FORM_COROT},       {"tol", FORM_COROT},         {"preconditioner", FORM_COROT},
              {"geometric_stiffening", FORM_MODAL}};
static const char* const form_names[] = {"modal", "corotational", "lumped"};

static int flexible_keys(const Ctx* c, const cJSON* fx, int form, const char* w) {
  const int n = (int)(sizeof k_flex / sizeof k_flex[0]);
  for (const cJSON* it = fx->child; it; it = it->next)
    for (int k = 0; k < n; k++) {
      if (strcmp(it->string, k_flex[k].key) || (k_flex[k].forms & form)) continue;
      char goes[64] = "", keys[256] = "";
      size_t len = 0;
      for (int f = 0; f < 3; f++)
        if (k_flex[k].forms & (1 << f))
          len += (size_t)snprintf(goes + len, sizeof goes - len, "%s\"%s\"", len ? " or " : "", form_names[f]);
      len = 0;
      for (int q = 0; q < n && len < sizeof keys; q++)
        if (k_flex[q].forms & form) len += (size_t)snprintf(keys + len, sizeof keys - len, "%s%s", len ? ", " : "", k_flex[q].key);
      const char* name = form_names[form == FORM_MODAL ? 0 : form == FORM_COROT ? 1 : 2];
      return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" goes with \"formulation\": %s; this body is \"%s\", which does "
                      "not use it (its keys: %s)%s", c->path, w, it->string, goes, name, keys,
                      form == FORM_LUMPED ? "; a lumped FE body is free, joints at its node sets hold it; its damping is "
                                            "the FE scene's Rayleigh damping" : "");
    }
  return CF_OK;
}

/* ---- sections ---------------------------------------------------------------------------------- */
/* A flexible body: "flexible": {"scene": FE scene, "interface": [sets], "modes": N, "supports":
 * "free" | "interface" | "clamp" (what the FE scene's fixed sets become; default free),
 * "damping": zeta | "adams", "reduction": cache file} (docs/mbs.md, "Flexible bodies"): the
 * scene's part reduced by Craig-Bampton (cofem/modal_part.h) and added as a modal body. */
/* "formulation": "lumped": every node of the scene's mesh a point mass of the mechanism, the
 * co-rotational internal forces as forces (cofem/mbs_fe.h); the scene's supports are left out */
static int parse_fe_body(const Ctx* c, const cJSON* fx, cfMbsBodyDef* b, const char* scene, const char* scene_json,
                         const char* w, int corotational) {
  cfModalPart* part = calloc(1, sizeof *part); /* the scene and its model; no reduction */
  if (!part) return cf_error(CF_ERR_NOMEM, "%s: out of memory", c->path);
  c->s->flex[c->s->nflex] = part; /* owned by the scene from here on, freed with it */
  c->s->flex_body[c->s->nflex++] = c->s->def.nbody;
  char sup[16] = "free";
  int st = get_str(c, fx, "supports", sup, sizeof sup, 0, w);
  if (st < 0) return st;
  if (strcmp(sup, "free") && strcmp(sup, "clamp"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"supports\" = \"%s\": use \"free\" (joints hold the part) or \"clamp\" (the "
                    "FE scene's fixed sets stay where they are; corotational only)", c->path, w, sup);
  if (!strcmp(sup, "clamp") && !corotational)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"supports\": \"clamp\" needs \"formulation\": \"corotational\"", c->path, w);
  char factor[16] = "exact";
  if ((st = get_str(c, fx, "factor", factor, sizeof factor, 0, w)) < 0) return st;
  if (strcmp(factor, "rotated") && strcmp(factor, "exact") && strcmp(factor, "pcg"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"factor\" = \"%s\": use \"exact\" (factored at every step), "
                    "\"rotated\" (the part's matrix at rest factored once, turned with the part) or \"pcg\" (no "
                    "factor: the PCG, with the \"preconditioner\" key's or the FE scene's preconditioner)", c->path, w, factor);
  char backend[16] = "cpu";
  if ((st = get_str(c, fx, "backend", backend, sizeof backend, 0, w)) < 0) return st;
  if (strcmp(backend, "cpu") && strcmp(backend, "cuda"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"backend\" = \"%s\": use \"cpu\" or \"cuda\"", c->path, w, backend);
  const int cuda = !strcmp(backend, "cuda");
  if (cuda && strcmp(factor, "pcg") && c->s->def.opt.coupling != CF_MBS_COUPLING_LINEAR)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"backend\": \"cuda\" needs \"factor\": \"pcg\" or \"solver.coupling\": "
                    "\"linear\" (the GPU solves the part's matrix by the PCG)", c->path, w);
  double tol = 1e-10;
  if ((st = get_num(c, fx, "tol", &tol, 0, w)) < 0) return st;
  if (cJSON_GetObjectItemCaseSensitive(fx, "tol") && strcmp(factor, "pcg"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"tol\" goes with \"factor\": \"pcg\"", c->path, w);
  if (!(tol > 0 && tol < 1))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"tol\" = %g: a relative residual in (0, 1)", c->path, w, tol);
  char pre_key[32] = "";
  if ((st = get_str(c, fx, "preconditioner", pre_key, sizeof pre_key, 0, w)) < 0) return st;
  int pre = pre_key[0] ? cf_preconditioner_from_key(pre_key) : -1;
  if (pre_key[0] && strcmp(factor, "pcg"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"preconditioner\" goes with \"factor\": \"pcg\"", c->path, w);
  if (pre_key[0] && (pre < 0 || pre == CF_PRECOND_AUTO))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"preconditioner\" = \"%s\": use \"block_jacobi\", \"rotated_cholesky\" or "
                    "\"amg\"", c->path, w, pre_key);
  st = scene_json ? cf_scene_load_text(scene_json, scene, &part->scene) : cf_scene_load(scene, &part->scene);
  if (st >= 0) note_unused_fe_keys(c, &part->scene, w);
  if (st >= 0 && (st = check_part_step(c, &part->scene, w)) < 0) return st;
  if (st >= 0 && !strcmp(sup, "clamp") && part->scene.nfix == 0) /* it would run free, silently */
    st = cf_error(CF_ERR_SCENE, "\"supports\": \"clamp\", but the FE scene %s has no \"fixed\" sets to clamp", scene);
  if (st >= 0 && !strcmp(factor, "pcg")) {
    /* the part's PCG to "tol" (1e-10 by default; the FE scene's own tolerance is that of its
     * step's velocities, 1e-6 in the lug's: the condensation needs the part's matrix inverted to
     * far less, and Newton did not converge in 50 iterations with 1e-6) */
    part->scene.def.pcg_tol = tol;
    if (pre >= 0) part->scene.def.preconditioner = pre;
  }
  /* "pcg" on the GPU: block Jacobi or AMG (the device has no rotated Cholesky) */
  if (st >= 0 && cuda && part->scene.def.preconditioner == CF_PRECOND_ROTATED_CHOLESKY)
    st = cf_error(CF_ERR_SCENE, "\"factor\": \"pcg\" on the GPU: the rotated-Cholesky preconditioner (%s) does not "
                  "run there; set \"preconditioner\": \"amg\" or \"block_jacobi\" here",
                  pre >= 0 ? "this \"preconditioner\" key" : scene);
  /* the part's own step does not run inside a mechanism (mbs_fe.c factors or condenses it); with
   * "factor": "pcg" the FE scene's preconditioner, or the "preconditioner" key's, solves the part's
   * matrix: "auto" is block Jacobi there */
  cfModelDef mdef = part->scene.def; /* the scene's def keeps "auto" (cofem run --backend cuda makes it AMG) */
  if (mdef.preconditioner == CF_PRECOND_AUTO) mdef.preconditioner = CF_PRECOND_BLOCK_JACOBI;
  /* mbs_fe.c predicts, turns and checks one rotation per element (the linear coupling, the
   * reduction's rest matrices): a quadratic part in a mechanism keeps its element rotations */
  mdef.rotations = CF_ROTATIONS_ELEMENT;
  /* quadratic parts of mechanisms on the GPU: the device stages take them (cofem run), but the
   * mechanism's device path (mbs_fe.c: K_R downloads, the interface columns) has been checked on a
   * device with linear tetrahedra only (tests/cuda/test_cuda_mbs_fe.c) */
  if (st >= 0 && cuda && cf_mesh_npe(&part->scene.mesh) != 4)
    st = cf_error(CF_ERR_UNSUPPORTED, "the FE scene %s has 10-node (quadratic) tetrahedra: an FE body of a mechanism "
                  "on the GPU takes linear tetrahedra only (not yet checked on a device); run this body on the CPU", scene);
  if (st >= 0) st = cf_model_create(&part->scene.mesh, &mdef, &part->model);
  for (int k = 0; st >= 0 && !strcmp(sup, "clamp") && k < part->scene.nfix; k++) {
    const cfNodeSet* ns = cf_mesh_find_nset(&part->scene.mesh, part->scene.fix[k].set);
    st = ns ? cf_model_fix_nodes(part->model, ns->nodes, ns->count, part->scene.fix[k].dir_mask)
            : cf_error(CF_ERR_SCENE, "no node set '%s' in the mesh", part->scene.fix[k].set);
  }
  if (st < 0) return rethrow_at(c, st, w);
  st = cf_mbs_add_fe_body_as(&c->s->def, b, part->model, corotational);
  if (st >= 0) {
    cfMbsFeDef* fe = &c->s->def.fe[c->s->def.nfe - 1];
    fe->exact_factor = !strcmp(factor, "exact");
    fe->a0_pcg = !strcmp(factor, "pcg");
    fe->factor_given = cJSON_GetObjectItemCaseSensitive(fx, "factor") != NULL;
    fe->cuda = cuda;
  }
  return st < 0 ? rethrow_at(c, st, w) : CF_OK;
}

static int parse_flexible_part(const Ctx* c, const cJSON* fx, cfMbsBodyDef* b, const char* scene,
                               const char* scene_json, const char* w);

/* Every number of a (copied) tree made raw text printed with 17 significant digits: cJSON prints
 * "%1.15g" when that reads back within an epsilon, which loses the last bits (an inline FE scene's
 * E = 210000003000.00003 came back as 210000003000: not the file's part). Infinities (a 1e999 in
 * the text) print as 1e999 again, for the FE scene's own message. 0 on success. */
static int numbers_exact(cJSON* node) {
  for (cJSON* it = node->child; it;) {
    cJSON* next = it->next;
    if (cJSON_IsNumber(it)) {
      char num[40];
      const double v = it->valuedouble;
      if (isinf(v)) snprintf(num, sizeof num, "%s1e999", v < 0 ? "-" : "");
      else snprintf(num, sizeof num, "%.17g", v);
      cJSON* raw = cJSON_CreateRaw(num);
      /* in an object, the replacement takes the key (ReplaceItemViaPointer alone leaves it unnamed) */
      const int ok = raw && (cJSON_IsObject(node) ? cJSON_ReplaceItemInObjectCaseSensitive(node, it->string, raw)
                                                   : cJSON_ReplaceItemViaPointer(node, it, raw));
      if (!ok) {
        cJSON_Delete(raw);
        return -1;
      }
    } else if ((cJSON_IsObject(it) || cJSON_IsArray(it)) && numbers_exact(it) != 0) {
      return -1;
    }
    it = next;
  }
  return 0;
}
static int parse_flexible(const Ctx* c, const cJSON* fx, cfMbsBodyDef* b, const char* where) {
  static const char* known[] = {"scene", "formulation", "interface", "modes", "supports", "damping", "reduction",
                                "factor", "backend", "tol", "preconditioner", "description",
                                "geometric_stiffening", NULL};
  char w[160], rel[CF_MBS_PATH_MAX], scene[CF_MBS_PATH_MAX];
  snprintf(w, sizeof w, "%s \"flexible\"", where);
  if (!cJSON_IsObject(fx)) return cf_error(CF_ERR_SCENE, "%s: %s must be an object", c->path, w);
  int st = check_keys(c, fx, known, w);
  if (st < 0) return st;
  if (c->s->nflex >= CF_MBS_MAX_FLEX)
    return cf_error(CF_ERR_SCENE, "%s: %s: more than %d flexible bodies", c->path, w, CF_MBS_MAX_FLEX);
  /* "scene": the FE scene's file, or the FE scene itself (an object: a mechanism built in code),
   * named "<mechanism>: <where> \"scene\"" in messages, its paths relative to the mechanism's folder */
  const cJSON* inline_scene = cJSON_GetObjectItemCaseSensitive(fx, "scene");
  char* scene_json = NULL;
  if (cJSON_IsObject(inline_scene)) {
    snprintf(rel, sizeof rel, "%s \"scene\"", w);
    for (char* p = rel; *p; p++)
      if (*p == '/') *p = '_'; /* a body named "a/b" must not move the folder paths resolve against */
    snprintf(scene, sizeof scene, "%s: %s", c->path, rel);
    cJSON* copy = cJSON_Duplicate(inline_scene, 1);
    if (copy && numbers_exact(copy) == 0) scene_json = cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    if (!scene_json) return cf_error(CF_ERR_NOMEM, "%s: %s: out of memory", c->path, w);
  } else {
    if ((st = get_str(c, fx, "scene", rel, sizeof rel, 1, w)) < 0) return st;
    cf_scene_resolve_path(c->path, rel, scene, sizeof scene);
  }
  st = parse_flexible_part(c, fx, b, scene, scene_json, w);
  cJSON_free(scene_json);
  if (st < 0 && scene_json) { /* "<file>: <where>: <file>: <where> "scene": ..." said once */
    char prefix[640], msg[2048];
    int n = snprintf(prefix, sizeof prefix, "%s: %s: %s: ", c->path, w, scene);
    snprintf(msg, sizeof msg, "%s", cf_last_error());
    if (n > 0 && (size_t)n < sizeof prefix && !strncmp(msg, prefix, (size_t)n))
      cf_error(st, "%s: %s", scene, msg + n);
  }
  return st;
}

/* "interface" entry {"set": NAME, "point": "rigid" | "averaging", "dofs": ["x", "y", "z", "rx", "ry",
 * "rz"] (default all six)}: the set reduced as one interface point (cofem/reduce.h) */
static int parse_interface_point(const Ctx* c, const cJSON* o, cfPartPoint* p, const char* w, int k) {
  static const char* known[] = {"set", "point", "dofs", "description", NULL};
  static const char* dof_names[6] = {"x", "y", "z", "rx", "ry", "rz"};
  char where[200], kind[32] = "";
  snprintf(where, sizeof where, "%s \"interface\"[%d]", w, k);
  int st = check_keys(c, o, known, where);
  if (st < 0) return st;
  memset(p, 0, sizeof *p);
  if ((st = get_str(c, o, "set", p->set, sizeof p->set, 1, where)) < 0) return st;
  if ((st = get_str(c, o, "point", kind, sizeof kind, 1, where)) < 0) return st;
  if (!strcmp(kind, "rigid")) p->kind = CF_POINT_RIGID;
  else if (!strcmp(kind, "averaging")) p->kind = CF_POINT_AVERAGING;
  else return cf_error(CF_ERR_SCENE, "%s: %s: \"point\" = \"%s\": use \"rigid\" (RBE2-like) or \"averaging\" (RBE3-like)", c->path, where, kind);
  const cJSON* d = cJSON_GetObjectItemCaseSensitive(o, "dofs");
  if (d) {
    if (!cJSON_IsArray(d) || !d->child)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"dofs\" must be a non-empty array of \"x\", \"y\", \"z\", \"rx\", \"ry\", \"rz\"", c->path, where);
    for (const cJSON* it = d->child; it; it = it->next) {
      int a = -1;
      for (int q = 0; q < 6 && cJSON_IsString(it); q++)
        if (!strcmp(it->valuestring, dof_names[q])) a = q;
      if (a < 0 || (p->dofs >> a & 1u))
        return cf_error(CF_ERR_SCENE, "%s: %s: \"dofs\": %s; use \"x\", \"y\", \"z\", \"rx\", \"ry\", \"rz\", each once", c->path,
                        where, a < 0 ? "an unknown entry" : "a repeated entry");
      p->dofs |= 1u << a;
    }
  }
  return CF_OK;
}

static int parse_flexible_part(const Ctx* c, const cJSON* fx, cfMbsBodyDef* b, const char* scene,
                               const char* scene_json, const char* w) {
  char rel[CF_MBS_PATH_MAX], cache[CF_MBS_PATH_MAX] = "";
  int st;
  char form[32] = "modal";
  if ((st = get_str(c, fx, "formulation", form, sizeof form, 0, w)) < 0) return st;
  const int fbit = !strcmp(form, "modal") ? FORM_MODAL : !strcmp(form, "corotational") ? FORM_COROT
                   : !strcmp(form, "lumped") ? FORM_LUMPED : 0;
  if (!fbit)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"formulation\" = \"%s\": use \"modal\" (Craig-Bampton), \"corotational\" "
                    "or \"lumped\"", c->path, w, form);
  if ((st = flexible_keys(c, fx, fbit, w)) < 0) return st;
  if (fbit != FORM_MODAL) return parse_fe_body(c, fx, b, scene, scene_json, w, fbit == FORM_COROT);
  rel[0] = '\0';
  if ((st = get_str(c, fx, "reduction", rel, sizeof rel, 0, w)) < 0) return st;
  if (rel[0]) cf_scene_resolve_path(c->path, rel, cache, sizeof cache);
  cfReduceOptions ro = cf_default_reduce_options();
  int supports = CF_PART_SUPPORTS_FREE;
  char sup[16] = "free";
  if ((st = get_int(c, fx, "modes", &ro.nmodes, w)) < 0) return st;
  if (ro.nmodes < 0 || ro.nmodes > CF_MBS_MODAL_MAX_MODES)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"modes\" must be an integer from 0 to %d (a modal body's modes), got %d",
                    c->path, w, CF_MBS_MODAL_MAX_MODES, ro.nmodes);
  ro.max_modes = CF_MBS_MODAL_MAX_MODES;
  if ((st = get_str(c, fx, "supports", sup, sizeof sup, 0, w)) < 0) return st;
  if (!strcmp(sup, "interface")) supports = CF_PART_SUPPORTS_INTERFACE;
  else if (!strcmp(sup, "clamp")) supports = CF_PART_SUPPORTS_CLAMP;
  else if (strcmp(sup, "free"))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"supports\" = \"%s\": use \"free\", \"interface\" or \"clamp\"", c->path, w, sup);
  const cJSON* dz = cJSON_GetObjectItemCaseSensitive(fx, "damping");
  if (dz && cJSON_IsString(dz) && !strcmp(dz->valuestring, "adams")) ro.damping = -1;
  else if (dz && (st = get_num(c, fx, "damping", &ro.damping, 0, w)) < 0) return st;
  else if (dz && !(ro.damping >= 0))
    return cf_error(CF_ERR_SCENE, "%s: %s: \"damping\" must be a ratio >= 0 or \"adams\"", c->path, w);
  /* "geometric_stiffening": true: the modes' geometric stiffness under the frame's inertial loads
   * (docs/craig-bampton.md, "Geometric stiffening"); computed with the reduction, kept in its cache */
  int gstiff = 0;
  if ((st = get_bool(c, fx, "geometric_stiffening", &gstiff, w)) < 0) return st;
  ro.geometric = gstiff;
  char sets[CF_SCENE_MAX_ITEMS][CF_NAME_MAX];
  const char* setp[CF_SCENE_MAX_ITEMS];
  int nsets = 0;
  cfPartPoint points[CF_SCENE_MAX_ITEMS];
  int npoint = 0;
  const cJSON* itf = cJSON_GetObjectItemCaseSensitive(fx, "interface");
  if (itf) {
    if (!cJSON_IsArray(itf)) return cf_error(CF_ERR_SCENE, "%s: %s: \"interface\" must be an array of node-set names", c->path, w);
    for (const cJSON* it = itf->child; it; it = it->next) {
      if (cJSON_IsObject(it)) { /* an interface point: {"set", "point": "rigid" | "averaging", "dofs": [...]} */
        if (npoint == CF_SCENE_MAX_ITEMS) return cf_error(CF_ERR_SCENE, "%s: %s: more than %d interface points", c->path, w, CF_SCENE_MAX_ITEMS);
        if ((st = parse_interface_point(c, it, &points[npoint], w, npoint)) < 0) return st;
        npoint++;
        continue;
      }
      if (!cJSON_IsString(it) || !it->valuestring[0])
        return cf_error(CF_ERR_SCENE, "%s: %s: \"interface\" must be an array of node-set names", c->path, w);
      if (nsets == CF_SCENE_MAX_ITEMS) return cf_error(CF_ERR_SCENE, "%s: %s: more than %d interface sets", c->path, w, CF_SCENE_MAX_ITEMS);
      snprintf(sets[nsets], CF_NAME_MAX, "%s", it->valuestring);
      setp[nsets] = sets[nsets];
      nsets++;
    }
  }
  cfModalPart* part = calloc(1, sizeof *part);
  if (!part) return cf_error(CF_ERR_NOMEM, "%s: out of memory", c->path);
  c->s->flex[c->s->nflex] = part; /* owned by the scene from here on, freed with it */
  c->s->flex_body[c->s->nflex++] = c->s->def.nbody;
  if ((st = cf_modal_part_load_points(scene_json, scene, setp, nsets, points, npoint, supports, &ro,
                                       cache[0] ? cache : NULL, part)) < 0)
    return rethrow_at(c, st, w);
  note_unused_fe_keys(c, &part->scene, w);
  if ((st = check_part_step(c, &part->scene, w)) < 0) return st;
  cfMbsModalDef md = cf_mbs_default_modal_def();
  md.red = &part->red, md.X = part->scene.mesh.X;
  md.geometric_stiffening = gstiff ? CF_MBS_GSTIFF_RATES : CF_MBS_GSTIFF_OFF;
  st = cf_mbs_add_modal_body(&c->s->def, b, &md);
  return st < 0 ? st : CF_OK;
}

/* the flexible part of body `body`, or NULL */
static const cfModalPart* flex_part(const Ctx* c, int body) {
  for (int k = 0; k < c->s->nflex; k++)
    if (c->s->flex_body[k] == body) return c->s->flex[k];
  return NULL;
}

/* "node1" / "node2" / "node": a node set of a flexible body's mesh; the modal point at the mean of
 * its nodes (made once per set and body) */
static int modal_point_ref(const Ctx* c, const cJSON* o, const char* key, int body, int* point, const char* where) {
  char set[CF_NAME_MAX];
  int st = get_str(c, o, key, set, sizeof set, 1, where);
  if (st < 0) return st;
  const cfModalPart* part = flex_part(c, body);
  if (!part)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" names a node set, but body '%s' is not flexible", c->path, where, key,
                    body < 0 ? "ground" : c->s->def.body[body].name);
  const cfNodeSet* ns = cf_mesh_find_nset(&part->scene.mesh, set);
  if (!ns)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\": no node set '%s' in the mesh %s of body '%s'", c->path, where, key, set,
                    part->scene.mesh_path, c->s->def.body[body].name);
  if (cf_mbs_def_fe_index(&c->s->def, body) >= 0) { /* lumped FE body */
    *point = cf_mbs_find_fe_point(&c->s->def, body, set);
    if (*point < 0) *point = cf_mbs_add_fe_point(&c->s->def, body, set, ns->nodes, ns->count);
    return *point < 0 ? *point : CF_OK;
  }
  *point = cf_mbs_find_modal_point(&c->s->def, body, set);
  if (*point < 0) *point = cf_mbs_add_modal_point(&c->s->def, body, set, ns->nodes, ns->count);
  return *point < 0 ? *point : CF_OK;
}

/* the mean of node set `set` of flexible body `body` at t = 0 (global), and the diagonal of its
 * mesh's bounding box */
static void set_mean(const Ctx* c, int body, const char* set, double P[3], double* size) {
  const cfModalPart* part = flex_part(c, body);
  const cfNodeSet* ns = part ? cf_mesh_find_nset(&part->scene.mesh, set) : NULL;
  double X[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, pos[3], R[9];
  for (int k = 0; ns && k < ns->count; k++)
    for (int a = 0; a < 3; a++) X[a] += part->scene.mesh.X[3 * ns->nodes[k] + a] / ns->count;
  for (int i = 0; part && i < part->scene.mesh.nnode; i++)
    for (int a = 0; a < 3; a++)
      lo[a] = fmin(lo[a], part->scene.mesh.X[3 * i + a]), hi[a] = fmax(hi[a], part->scene.mesh.X[3 * i + a]);
  cf_mbs__body_pose(&c->s->def, body, pos, R);
  for (int a = 0; a < 3; a++) P[a] = pos[a] + R[3 * a] * X[0] + R[3 * a + 1] * X[1] + R[3 * a + 2] * X[2];
  *size = part ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2])) : 0;
}

static int parse_body(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"name", "mass", "com", "inertia", "position", "rotation", "quaternion", "velocity",
                                "omega", "virtual", "flexible", "shape", "description", NULL};
  char where[96];
  cfMbsBodyDef b = cf_mbs_default_body_def();
  int st = entry_head(c, o, known, "bodies", i, b.name, sizeof b.name, where, sizeof where);
  if (st < 0) return st;
  const cJSON* flex = cJSON_GetObjectItemCaseSensitive(o, "flexible");
  if (flex) {
    static const char* rigid_only[] = {"mass", "com", "inertia", "virtual"};
    for (int k = 0; k < 4; k++)
      if (cJSON_GetObjectItemCaseSensitive(o, rigid_only[k]))
        return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" does not go with \"flexible\" (mass and inertia come from the "
                        "reduction)", c->path, where, rigid_only[k]);
    b.mass = 1, b.inertia[0] = b.inertia[1] = b.inertia[2] = 1; /* replaced by the reduction's */
  }
  if ((st = get_bool(c, o, "virtual", &b.is_virtual, where)) < 0) return st;
  if (!flex && (st = get_num(c, o, "mass", &b.mass, !b.is_virtual, where)) < 0) return st;
  if ((st = get_vec3(c, o, "com", b.com, 0, where)) < 0) return st;
  const cJSON* in = cJSON_GetObjectItemCaseSensitive(o, "inertia");
  if (in) {
    double v[6] = {0, 0, 0, 0, 0, 0};
    int n;
    if ((st = num_array(c, in, v, 3, 6, &n, where, "inertia")) < 0) return st;
    if (n != 3 && n != 6)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"inertia\" takes 3 (principal) or 6 (Ixx Iyy Izz Ixy Ixz Iyz) numbers", c->path, where);
    memcpy(b.inertia, v, sizeof v);
  } else if (!b.is_virtual && !flex)
    return cf_error(CF_ERR_SCENE, "%s: %s: missing \"inertia\"", c->path, where);
  if ((st = get_vec3(c, o, "position", b.pos, 0, where)) < 0) return st;
  const cJSON* rot = cJSON_GetObjectItemCaseSensitive(o, "rotation");
  const cJSON* quat = cJSON_GetObjectItemCaseSensitive(o, "quaternion");
  if (rot && quat) return cf_error(CF_ERR_SCENE, "%s: %s: give \"rotation\" or \"quaternion\", not both", c->path, where);
  if (rot) {
    static const char* rk[] = {"axis", "angle", NULL};
    char w[128];
    snprintf(w, sizeof w, "%s \"rotation\"", where);
    double axis[3] = {0, 0, 1}, ang = 0;
    if ((st = check_keys(c, rot, rk, w)) < 0) return st;
    if ((st = get_vec3(c, rot, "axis", axis, 1, w)) < 0) return st;
    if ((st = get_num(c, rot, "angle", &ang, 1, w)) < 0) return st;
    if (cf_mbs_norm3(axis) < 1e-12) return cf_error(CF_ERR_SCENE, "%s: %s: \"axis\" has zero length", c->path, w);
    cf_mbs_axis_angle(axis, ang, b.rot);
  }
  if (quat) {
    double qv[4];
    if ((st = num_array(c, quat, qv, 4, 4, NULL, where, "quaternion")) < 0) return st;
    double n = sqrt(qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2] + qv[3] * qv[3]);
    if (fabs(n - 1) > 1e-6)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"quaternion\" [w, x, y, z] must have unit length (it has %.9g)", c->path, where, n);
    double w = qv[0] / n, x = qv[1] / n, y = qv[2] / n, z = qv[3] / n;
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(b.rot, R, sizeof R);
  }
  if ((st = get_vec3(c, o, "velocity", b.vel, 0, where)) < 0) return st;
  if ((st = get_vec3(c, o, "omega", b.omega, 0, where)) < 0) return st;
  const cJSON* shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
  if (shape) { /* the box the viewer draws: {"box": [lx, ly, lz], "center": [x, y, z]} in body axes */
    static const char* sk[] = {"box", "center", NULL};
    char w[128];
    snprintf(w, sizeof w, "%s \"shape\"", where);
    if (flex || b.is_virtual)
      return cf_error(CF_ERR_SCENE, "%s: %s: a %s body is drawn as %s, not as a \"shape\"", c->path, where,
                      flex ? "flexible" : "virtual", flex ? "its mesh" : "a point");
    if ((st = check_keys(c, shape, sk, w)) < 0) return st;
    if ((st = get_vec3(c, shape, "box", b.shape_box, 1, w)) < 0) return st;
    for (int k = 0; k < 3; k++)
      if (!(b.shape_box[k] > 0 && b.shape_box[k] < 1e6))
        return cf_error(CF_ERR_SCENE, "%s: %s: \"box\" edge %d is %g m: the edges must be in (0, 1e6) m", c->path, w,
                        k + 1, b.shape_box[k]);
    memcpy(b.shape_center, b.com, sizeof b.com);
    if ((st = get_vec3(c, shape, "center", b.shape_center, 0, w)) < 0) return st;
  }
  if (cf_mbs_def_find_body(&c->s->def, b.name) != CF_MBS_NONE)
    return cf_error(CF_ERR_SCENE, "%s: %s: body '%s' is defined twice%s", c->path, where, b.name,
                    strcmp(b.name, "ground") ? "" : " (\"ground\" is the fixed frame)");
  if (flex) return parse_flexible(c, flex, &b, where);
  st = cf_mbs_add_body(&c->s->def, &b);
  return st < 0 ? st : CF_OK;
}

static int parse_marker(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"name", "body", "position", "axis", "description", NULL};
  char where[96];
  cfMbsMarkerDef k = cf_mbs_default_marker_def();
  int st = entry_head(c, o, known, "markers", i, k.name, sizeof k.name, where, sizeof where);
  if (st < 0) return st;
  if (find_marker(&c->s->def, k.name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: marker '%s' is defined twice", c->path, where, k.name);
  if ((st = body_ref(c, o, "body", &k.body, where)) < 0) return st;
  if ((st = get_vec3(c, o, "position", k.pos, 0, where)) < 0) return st;
  if ((st = get_vec3(c, o, "axis", k.axis, 0, where)) < 0) return st;
  if (cf_mbs_norm3(k.axis) < 1e-12) return cf_error(CF_ERR_SCENE, "%s: %s: \"axis\" has zero length", c->path, where);
  st = cf_mbs_add_marker(&c->s->def, &k);
  return st < 0 ? st : CF_OK;
}

static int joint_type(const char* s) {
  static const char* names[] = {"spherical", "revolute", "prismatic", "cylindrical", "universal", "fixed", "distance"};
  for (int t = 0; t < CF_MBS_JOINT_TYPES; t++)
    if (!strcmp(s, names[t])) return t;
  return -1;
}

/* A joint between node sets of two FE bodies (which the condensation cannot take directly: each
 * joint equation belongs to one FE body), or of an FE and a modal body when the type is not one an FE
 * set takes (spherical, revolute, fixed: those are direct): through a massless virtual body,
 * "<joint>/pin", at the mean of body1's set at t = 0, moving with it, welded to that set ("<joint>/weld",
 * fixed) and carrying the joint itself to body2's set, as scenes/mbs/compare/double_fourbar_k*.json
 * write by hand. The joint keeps its name (its channels and reactions are the pin's side). */
static int joint_through_pin(const Ctx* c, cfMbsJointDef* j, const cJSON* o, const char* where) {
  cfMbsDef* def = &c->s->def;
  const cfModalPart* part = flex_part(c, j->body1);
  char set[CF_NAME_MAX];
  int st = get_str(c, o, "node1", set, sizeof set, 1, where);
  if (st < 0) return st;
  const cfNodeSet* ns = part ? cf_mesh_find_nset(&part->scene.mesh, set) : NULL;
  if (!ns || ns->count < 1) return cf_error(CF_ERR_SCENE, "%s: %s: \"node1\": node set '%s' is empty", c->path, where, set);
  const cfMbsBodyDef* B1 = &def->body[j->body1];
  double X[3] = {0, 0, 0}, P[3], r[3], w[3];
  for (int k = 0; k < ns->count; k++)
    for (int a = 0; a < 3; a++) X[a] += part->scene.mesh.X[3 * ns->nodes[k] + a] / ns->count;
  for (int a = 0; a < 3; a++) r[a] = B1->rot[3 * a] * X[0] + B1->rot[3 * a + 1] * X[1] + B1->rot[3 * a + 2] * X[2];
  cf_mbs_cross3(B1->omega, r, w);
  { /* the pin carries the joint to body2's set as a rigid arm: the sets must meet at t = 0 */
    char set2[CF_NAME_MAX];
    double Q[3], P1[3], size1, size2;
    if ((st = get_str(c, o, "node2", set2, sizeof set2, 1, where)) < 0) return st;
    set_mean(c, j->body1, set, P1, &size1);
    set_mean(c, j->body2, set2, Q, &size2);
    const double gap = sqrt((Q[0] - P1[0]) * (Q[0] - P1[0]) + (Q[1] - P1[1]) * (Q[1] - P1[1]) + (Q[2] - P1[2]) * (Q[2] - P1[2]));
    if (gap > 1e-3 * fmax(size1, size2))
      return cf_error(CF_ERR_SCENE, "%s: %s: body2 '%s' is %.3g m from the joint at t = 0: its node set '%s' (mean at [%g, "
                      "%g, %g]) and body1 '%s''s node set '%s' (at [%g, %g, %g]) must meet there; place it on the joint",
                      c->path, where, def->body[j->body2].name, gap, set2, Q[0], Q[1], Q[2], B1->name, set, P1[0], P1[1],
                      P1[2]);
  }
  cfMbsBodyDef pin = cf_mbs_default_body_def();
  if (snprintf(pin.name, sizeof pin.name, "%s/pin", j->name) >= (int)sizeof pin.name)
    return cf_error(CF_ERR_SCENE, "%s: %s: joint name '%s' too long for its pin body", c->path, where, j->name);
  pin.is_virtual = 1;
  for (int a = 0; a < 3; a++) P[a] = B1->pos[a] + r[a], pin.pos[a] = P[a], pin.vel[a] = B1->vel[a] + w[a], pin.omega[a] = B1->omega[a];
  if (cf_mbs_def_find_body(def, pin.name) != CF_MBS_NONE)
    return cf_error(CF_ERR_SCENE, "%s: %s: a body is named '%s', the name of this joint's pin", c->path, where, pin.name);
  int ipin = cf_mbs_add_body(def, &pin);
  if (ipin < 0) return ipin;
  cfMbsJointDef weld = cf_mbs_default_joint_def();
  snprintf(weld.name, sizeof weld.name, "%.*s/weld", (int)sizeof weld.name - 6, j->name);
  if (find_joint(def, weld.name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: a joint is named '%s', the name of this joint's weld", c->path, where, weld.name);
  weld.type = CF_MBS_FIXED;
  weld.body1 = j->body1, weld.modal_point1 = j->modal_point1;
  weld.body2 = ipin;
  memcpy(weld.point, P, sizeof P);
  if ((st = cf_mbs_add_joint(def, &weld)) < 0) return st;
  j->body1 = ipin, j->modal_point1 = -1;
  memcpy(j->point, P, sizeof P);
  st = cf_mbs_add_joint(def, j);
  return st < 0 ? st : CF_OK;
}

static int parse_joint(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"name", "type", "body1", "body2", "point", "axis", "axis2", "point2", "distance",
                                "node1", "node2", "description", NULL};
  char where[128], type[32];
  cfMbsJointDef j = cf_mbs_default_joint_def();
  int st = entry_head(c, o, known, "joints", i, j.name, sizeof j.name, where, sizeof where);
  if (st < 0) return st;
  if (find_joint(&c->s->def, j.name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: joint '%s' is defined twice", c->path, where, j.name);
  if ((st = get_str(c, o, "type", type, sizeof type, 1, where)) < 0) return st;
  j.type = joint_type(type);
  if (j.type < 0)
    return cf_error(CF_ERR_SCENE,
                    "%s: %s: \"type\" = \"%s\": use spherical, revolute, prismatic, cylindrical, universal, fixed or distance",
                    c->path, where, type);
  if ((st = body_ref(c, o, "body1", &j.body1, where)) < 0) return st;
  if ((st = body_ref(c, o, "body2", &j.body2, where)) < 0) return st;
  /* at a node set of a flexible body: the joint sits at the mean of its nodes and moves with them */
  int at_node = 0;
  for (int k = 0; k < 2; k++) {
    const char* key = k ? "node2" : "node1";
    if (!cJSON_GetObjectItemCaseSensitive(o, key)) continue;
    if ((st = modal_point_ref(c, o, key, k ? j.body2 : j.body1, k ? &j.modal_point2 : &j.modal_point1, where)) < 0)
      return st;
    at_node = 1;
  }
  /* "point" beside a node set: the set's mean places the joint; the point must agree with it */
  const int point_too = at_node && cJSON_GetObjectItemCaseSensitive(o, "point") != NULL;
  if ((st = get_point(c, o, "point", j.point, !at_node, 0, where)) < 0) return st;
  for (int k = 0; point_too && k < 2; k++) {
    const char* key = k ? "node2" : "node1";
    int body = k ? j.body2 : j.body1;
    if (!cJSON_GetObjectItemCaseSensitive(o, key)) continue;
    double P[3], size = 0, dist;
    char set[CF_NAME_MAX];
    get_str(c, o, key, set, sizeof set, 1, where);
    set_mean(c, body, set, P, &size);
    dist = sqrt((P[0] - j.point[0]) * (P[0] - j.point[0]) + (P[1] - j.point[1]) * (P[1] - j.point[1]) +
                (P[2] - j.point[2]) * (P[2] - j.point[2]));
    if (dist > 1e-6 * size)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"point\" [%g, %g, %g] and \"%s\" conflict: the joint sits at the mean of "
                      "node set '%s' of body%d '%s', [%g, %g, %g] at t = 0, %.3g m away; give one of them (or make them "
                      "agree)", c->path, where, j.point[0], j.point[1], j.point[2], key, set, k + 1,
                      c->s->def.body[body].name, P[0], P[1], P[2], dist);
  }
  int needs_axis = j.type == CF_MBS_REVOLUTE || j.type == CF_MBS_PRISMATIC || j.type == CF_MBS_CYLINDRICAL ||
                   j.type == CF_MBS_UNIVERSAL;
  if ((st = get_point(c, o, "axis", j.axis, needs_axis, 1, where)) < 0) return st;
  if (j.type == CF_MBS_UNIVERSAL && (st = get_point(c, o, "axis2", j.axis2, 1, 1, where)) < 0) return st;
  if (j.type == CF_MBS_DISTANCE) {
    if ((st = get_point(c, o, "point2", j.point2, 1, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "distance", &j.distance, 0, where)) < 0) return st;
    if (cJSON_GetObjectItemCaseSensitive(o, "distance") && !(j.distance > 0))
      return cf_error(CF_ERR_SCENE, "%s: %s: \"distance\" must be positive", c->path, where);
  }
  if (needs_axis && cf_mbs_norm3(j.axis) < 1e-12)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"axis\" has zero length", c->path, where);
  if (j.type == CF_MBS_UNIVERSAL && cf_mbs_norm3(j.axis2) < 1e-12)
    return cf_error(CF_ERR_SCENE, "%s: %s: \"axis2\" has zero length", c->path, where);
  if (j.body1 == j.body2) return cf_error(CF_ERR_SCENE, "%s: %s: body1 and body2 are the same body", c->path, where);
  /* between node sets of two flexible bodies: directly when one is modal and the type is one an FE
   * set takes (the FE set's measure against the modal set's directions), else through a pin */
  const int fe1 = cf_mbs_def_fe_index(&c->s->def, j.body1) >= 0, fe2 = cf_mbs_def_fe_index(&c->s->def, j.body2) >= 0;
  const int fe_type = j.type == CF_MBS_SPHERICAL || j.type == CF_MBS_REVOLUTE || j.type == CF_MBS_FIXED;
  if (j.modal_point1 >= 0 && j.modal_point2 >= 0 && (fe1 || fe2) && ((fe1 && fe2) || !fe_type))
    return joint_through_pin(c, &j, o, where);
  st = cf_mbs_add_joint(&c->s->def, &j);
  return st < 0 ? st : CF_OK;
}

static int joint_ref(const Ctx* c, const cJSON* o, const char* key, int* id, const char* where) {
  char name[CF_MBS_NAME_MAX];
  int st = get_str(c, o, key, name, sizeof name, 1, where);
  if (st < 0) return st;
  *id = find_joint(&c->s->def, name);
  if (*id >= 0) return CF_OK;
  return cf_error(CF_ERR_SCENE, "%s: %s: \"%s\" names joint '%s', which the mechanism does not define", c->path, where, key, name);
}

static int parse_driver(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"name", "type", "joint", "body1", "body2", "point1", "point2", "function", "rate",
                                "description", NULL};
  char where[128], type[32];
  cfMbsDriverDef d = cf_mbs_default_driver_def();
  int st = entry_head(c, o, known, "drivers", i, d.name, sizeof d.name, where, sizeof where);
  if (st < 0) return st;
  if (find_driver(&c->s->def, d.name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: driver '%s' is defined twice", c->path, where, d.name);
  if ((st = get_str(c, o, "type", type, sizeof type, 1, where)) < 0) return st;
  if (!strcmp(type, "angle")) d.type = CF_MBS_DRIVE_ANGLE;
  else if (!strcmp(type, "translation")) d.type = CF_MBS_DRIVE_TRANSLATION;
  else if (!strcmp(type, "distance")) d.type = CF_MBS_DRIVE_DISTANCE;
  else return cf_error(CF_ERR_SCENE, "%s: %s: \"type\" = \"%s\": use angle, translation or distance", c->path, where, type);
  if (d.type == CF_MBS_DRIVE_DISTANCE) {
    if ((st = body_ref(c, o, "body1", &d.body1, where)) < 0) return st;
    if ((st = body_ref(c, o, "body2", &d.body2, where)) < 0) return st;
    if ((st = get_point(c, o, "point1", d.point1, 1, 0, where)) < 0) return st;
    if ((st = get_point(c, o, "point2", d.point2, 1, 0, where)) < 0) return st;
  } else {
    if ((st = joint_ref(c, o, "joint", &d.joint, where)) < 0) return st;
    int t = c->s->def.joint[d.joint].type;
    if (d.type == CF_MBS_DRIVE_ANGLE && t != CF_MBS_REVOLUTE && t != CF_MBS_CYLINDRICAL)
      return cf_error(CF_ERR_SCENE, "%s: %s: an angle driver needs a revolute or cylindrical joint; '%s' is not one",
                      c->path, where, c->s->def.joint[d.joint].name);
    if (d.type == CF_MBS_DRIVE_TRANSLATION && t != CF_MBS_PRISMATIC && t != CF_MBS_CYLINDRICAL)
      return cf_error(CF_ERR_SCENE, "%s: %s: a translation driver needs a prismatic or cylindrical joint; '%s' is not one",
                      c->path, where, c->s->def.joint[d.joint].name);
  }
  if ((st = get_bool(c, o, "rate", &d.f.rate, where)) < 0) return st;
  if ((st = get_func(c, o, "function", &d.f, 1, NULL, where)) < 0) return st;
  st = cf_mbs_add_driver(&c->s->def, &d);
  return st < 0 ? st : CF_OK;
}

static int parse_force(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"name", "type", "body", "point", "node", "force", "torque", "frame", "scale", "body1",
                                "point1", "body2", "point2", "k", "c", "rest", "actuator", "joint", "description", NULL};
  char where[128], type[32];
  cfMbsForceDef f = cf_mbs_default_force_def();
  int st = entry_head(c, o, known, "forces", i, f.name, sizeof f.name, where, sizeof where);
  if (st < 0) return st;
  if (find_force(&c->s->def, f.name) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: force '%s' is defined twice", c->path, where, f.name);
  if ((st = get_str(c, o, "type", type, sizeof type, 1, where)) < 0) return st;
  if (!strcmp(type, "force") || !strcmp(type, "torque")) {
    f.type = strcmp(type, "force") ? CF_MBS_TORQUE : CF_MBS_POINT_FORCE;
    if ((st = body_ref(c, o, "body", &f.body1, where)) < 0) return st;
    if (f.body1 < 0) return cf_error(CF_ERR_SCENE, "%s: %s: a load on the ground does nothing; name a moving body", c->path, where);
    if (f.type == CF_MBS_POINT_FORCE) {
      if ((st = get_point(c, o, "point", f.point1, 0, 0, where)) < 0) return st;
      if (!cJSON_GetObjectItemCaseSensitive(o, "point")) cf_mbs__body_pose(&c->s->def, f.body1, f.point1, (double[9]){0});
      if ((st = get_vec3(c, o, "force", f.vec, 1, where)) < 0) return st;
    } else if ((st = get_vec3(c, o, "torque", f.vec, 1, where)) < 0)
      return st;
    char frame[16] = "global";
    if ((st = get_str(c, o, "frame", frame, sizeof frame, 0, where)) < 0) return st;
    if (strcmp(frame, "global") && strcmp(frame, "body"))
      return cf_error(CF_ERR_SCENE, "%s: %s: \"frame\" = \"%s\": use \"global\" or \"body\"", c->path, where, frame);
    f.body_frame = !strcmp(frame, "body");
    if ((st = get_func(c, o, "scale", &f.scale, 0, &f.has_scale, where)) < 0) return st;
    if (cJSON_GetObjectItemCaseSensitive(o, "node")) { /* at a node set of a flexible body: shared by its nodes */
      if (f.type != CF_MBS_POINT_FORCE || cJSON_GetObjectItemCaseSensitive(o, "point"))
        return cf_error(CF_ERR_SCENE, "%s: %s: \"node\" goes with a \"force\" and no \"point\"", c->path, where);
      cfMbsModalLoad ml;
      memset(&ml, 0, sizeof ml);
      ml.at_point = 1;
      if ((st = modal_point_ref(c, o, "node", f.body1, &ml.point, where)) < 0) return st;
      memcpy(ml.force, f.vec, sizeof ml.force);
      ml.body_frame = f.body_frame, ml.has_scale = f.has_scale, ml.scale = f.scale;
      st = cf_mbs_def_fe_index(&c->s->def, f.body1) >= 0 ? cf_mbs_add_fe_load(&c->s->def, f.body1, &ml)
                                                         : cf_mbs_add_modal_load(&c->s->def, f.body1, &ml);
      if (st < 0) return rethrow_at(c, st, where);
      return CF_OK;
    }
  } else if (!strcmp(type, "spring")) {
    f.type = CF_MBS_SPRING;
    if ((st = body_ref(c, o, "body1", &f.body1, where)) < 0) return st;
    if ((st = body_ref(c, o, "body2", &f.body2, where)) < 0) return st;
    if ((st = get_point(c, o, "point1", f.point1, 1, 0, where)) < 0) return st;
    if ((st = get_point(c, o, "point2", f.point2, 1, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "k", &f.k, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "c", &f.c, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "rest", &f.rest, 0, where)) < 0) return st;
    if ((st = get_func(c, o, "actuator", &f.actuator, 0, &f.has_actuator, where)) < 0) return st;
  } else if (!strcmp(type, "rotational_spring")) {
    f.type = CF_MBS_ROT_SPRING;
    if ((st = joint_ref(c, o, "joint", &f.joint, where)) < 0) return st;
    int t = c->s->def.joint[f.joint].type;
    if (t != CF_MBS_REVOLUTE && t != CF_MBS_CYLINDRICAL)
      return cf_error(CF_ERR_SCENE, "%s: %s: a rotational spring needs a revolute or cylindrical joint; '%s' is not one",
                      c->path, where, c->s->def.joint[f.joint].name);
    if ((st = get_num(c, o, "k", &f.k, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "c", &f.c, 0, where)) < 0) return st;
    if ((st = get_num(c, o, "rest", &f.rest, 0, where)) < 0) return st;
    if ((st = get_func(c, o, "actuator", &f.actuator, 0, &f.has_actuator, where)) < 0) return st;
  } else
    return cf_error(CF_ERR_SCENE, "%s: %s: \"type\" = \"%s\": use force, torque, spring or rotational_spring", c->path,
                    where, type);
  if ((f.type == CF_MBS_SPRING || f.type == CF_MBS_ROT_SPRING) && (f.k < 0 || f.c < 0))
    return cf_error(CF_ERR_SCENE, "%s: %s: stiffness k = %g and damping c = %g must be >= 0", c->path, where, f.k, f.c);
  st = cf_mbs_add_force(&c->s->def, &f);
  return st < 0 ? st : CF_OK;
}

static int parse_channel(const Ctx* c, const cJSON* o, int i) {
  static const char* known[] = {"marker", "body", "joint", "driver", "what", NULL};
  char where[96], what[32] = "", name[CF_MBS_NAME_MAX] = "";
  snprintf(where, sizeof where, "\"output.channels\"[%d]", i);
  int st = check_keys(c, o, known, where);
  if (st < 0) return st;
  if (i >= CF_MBS_MAX_CHANNELS) return cf_error(CF_ERR_SCENE, "%s: more than %d output channels", c->path, CF_MBS_MAX_CHANNELS);
  cfMbsChannel* ch = &c->s->channel[i];
  static const char* kinds[] = {"marker", "body", "joint", "driver"};
  int nk = 0;
  for (int k = 0; k < 4; k++)
    if (cJSON_GetObjectItemCaseSensitive(o, kinds[k])) ch->kind = k, nk++;
  if (nk != 1) return cf_error(CF_ERR_SCENE, "%s: %s: name exactly one of marker, body, joint, driver", c->path, where);
  if ((st = get_str(c, o, kinds[ch->kind], name, sizeof name, 1, where)) < 0) return st;
  if ((st = get_str(c, o, "what", what, sizeof what, 1, where)) < 0) return st;
  const cfMbsDef* def = &c->s->def;
  if (ch->kind == 0) ch->id = find_marker(def, name);
  else if (ch->kind == 1) ch->id = cf_mbs_def_find_body(def, name); /* the ground and CF_MBS_NONE are < 0 */
  else if (ch->kind == 2) ch->id = find_joint(def, name);
  else ch->id = find_driver(def, name);
  if (ch->id < 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: %s '%s' is not defined (or is the ground)", c->path, where, kinds[ch->kind], name);
  static const char* whats[] = {"position", "velocity", "acceleration", "omega", "angle", "translation", "reaction", "lambda",
                                 "von_mises_max"};
  ch->what = -1;
  for (int k = 0; k < 9; k++)
    if (!strcmp(what, whats[k])) ch->what = k;
  if (ch->what == CF_MBS_OUT_VON_MISES_MAX) { /* an FE body's peak stress (modal bodies: their .vtu frames) */
    if (ch->kind != 1 || cf_mbs_def_fe_index(def, ch->id) < 0)
      return cf_error(CF_ERR_SCENE, "%s: %s: \"what\" = \"von_mises_max\" applies to FE bodies (corotational or lumped), "
                      "not to %s '%s'", c->path, where, kinds[ch->kind], name);
    snprintf(ch->label, sizeof ch->label, "%s_%s", name, what);
    c->s->nchannel = i + 1;
    return CF_OK;
  }
  int ok = ch->what >= 0;
  if (ch->kind == 0) ok = ok && ch->what <= CF_MBS_OUT_ACCELERATION;
  if (ch->kind == 1) ok = ok && ch->what <= CF_MBS_OUT_OMEGA;
  if (ch->kind == 2) {
    int t = def->joint[ch->id].type;
    ok = ok && ch->what >= CF_MBS_OUT_ANGLE && ch->what <= CF_MBS_OUT_REACTION;
    if (ch->what == CF_MBS_OUT_ANGLE) ok = ok && (t == CF_MBS_REVOLUTE || t == CF_MBS_CYLINDRICAL);
    if (ch->what == CF_MBS_OUT_TRANSLATION) ok = ok && (t == CF_MBS_PRISMATIC || t == CF_MBS_CYLINDRICAL);
  }
  if (ch->kind == 3) ok = ok && ch->what == CF_MBS_OUT_LAMBDA;
  /* an FE body has no frame: its centre of mass (position, velocity) */
  if (ch->kind == 1 && cf_mbs_def_fe_index(def, ch->id) >= 0 && ch->what > CF_MBS_OUT_VELOCITY)
    return cf_error(CF_ERR_SCENE, "%s: %s: FE body '%s' has no frame: its channels are the centre of mass's position and "
                    "velocity", c->path, where, name);
  if (ch->kind == 0 && cf_mbs_def_fe_index(def, def->marker[ch->id].body) >= 0)
    return cf_error(CF_ERR_SCENE, "%s: %s: marker '%s' is on an FE body, which has no frame", c->path, where, name);
  /* a joint's angle at an FE body's node set is measured on its nodes (cf_mbs__joint_raw_angle) */
  if (!ok)
    return cf_error(CF_ERR_SCENE,
                    "%s: %s: \"what\" = \"%s\" does not apply to %s '%s' (markers: position, velocity, acceleration; "
                    "bodies: those and omega; FE bodies: position, velocity, von_mises_max; joints: angle (revolute, "
                    "cylindrical), translation (prismatic, cylindrical), reaction; drivers: lambda)", c->path, where, what,
                    kinds[ch->kind], name);
  snprintf(ch->label, sizeof ch->label, "%s_%s", name, what);
  c->s->nchannel = i + 1;
  return CF_OK;
}

/* the mechanism's size at t = 0: the largest distance from the origin of a body's position or a
 * joint's point, at least 1 (the coordinates also hold unit axes) */
static double mechanism_size(const cfMbsDef* def) {
  double S = 1;
  for (int b = 0; b < def->nbody; b++) S = fmax(S, cf_mbs_norm3(def->body[b].pos));
  for (int j = 0; j < def->njoint; j++) S = fmax(S, cf_mbs_norm3(def->joint[j].point));
  return S;
}

/* the position tolerances are absolute (metres on coordinates of size S): below 1e-14 S Newton
 * cannot reach them in double precision and the run fails as "inconsistent" or "not converged" */
static int check_tolerances(const Ctx* c, const cJSON* solver) {
  static const char* keys[] = {"tol_phi", "tol_dq"};
  const double S = mechanism_size(&c->s->def), tol[] = {c->s->def.opt.tol_phi, c->s->def.opt.tol_dq};
  for (int k = 0; solver && k < 2; k++)
    if (cJSON_GetObjectItemCaseSensitive(solver, keys[k]) && tol[k] < 1e-14 * S)
      return cf_error(CF_ERR_SCENE, "%s: \"solver.%s\" = %g is below round-off: the coordinates are of size %g (m, and "
                      "unit axes), known to about %.0e; use %.0e or more", c->path, keys[k], tol[k], S, 2.2e-16 * S, 1e-12 * S);
  return CF_OK;
}

/* A driver that moves more in one step than the Newton iteration can follow from the last pose (the
 * factorisation then fails, blaming a body's mass): refused before the run, naming it. Limits per
 * step: a quarter turn (angle drivers; the pendulum ran at 1 rad per step and failed at 3), the
 * mechanism's size (translation and distance drivers). */
static int check_drivers(const Ctx* c) {
  const cfMbsDef* def = &c->s->def;
  const double h = def->opt.dt, S = mechanism_size(def);
  const double nd = fmin(ceil(c->s->t_end / h - 1e-9), 1e15); /* steps (a huge end: cast safely) */
  const long n = (long)nd, stride = n > 100000 ? n / 100000 : 1;
  for (int k = 0; k < def->ndriver; k++) {
    const cfMbsDriverDef* D = &def->driver[k];
    const int angle = D->type == CF_MBS_DRIVE_ANGLE;
    const double lim = angle ? M_PI / 2 : S;
    double worst = 0, at = 0, y0[3], y1[3];
    for (long i = 0; i < n; i += stride) {
      cf_mbs_func_eval(&D->f, i * h, y0);
      cf_mbs_func_eval(&D->f, (i + 1) * h, y1);
      double dv = fabs(y1[0] - y0[0]);
      if (!(dv <= worst)) worst = dv, at = i * h;
    }
    if (!(worst <= lim))
      return cf_error(CF_ERR_SCENE, "%s: driver '%s' moves %.3g %s in one step (\"time.dt\" = %g s, at t = %g s), more "
                      "than %s%.3g %s: no step can follow it; lower its amplitude or rate, or the time step", c->path,
                      D->name, worst, angle ? "rad" : "m", h, at, angle ? "a quarter turn, " : "the mechanism's size, ",
                      lim, angle ? "rad" : "m");
  }
  return CF_OK;
}

#define TRY(expr)         \
  do {                    \
    int st_ = (expr);     \
    if (st_ < 0) {        \
      cJSON_Delete(root); \
      cf_mbs_scene_free(s); \
      return st_;         \
    }                     \
  } while (0)

static int parse_array(const Ctx* c, const cJSON* root, const char* key, int required,
                       int (*fn)(const Ctx*, const cJSON*, int)) {
  const cJSON* arr = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!arr) return required ? cf_error(CF_ERR_SCENE, "%s: missing \"%s\"", c->path, key) : CF_OK;
  if (!cJSON_IsArray(arr)) return cf_error(CF_ERR_SCENE, "%s: \"%s\" must be an array", c->path, key);
  int i = 0;
  for (const cJSON* it = arr->child; it; it = it->next, i++) {
    int st = fn(c, it, i);
    if (st < 0) return st;
  }
  return CF_OK;
}

int cf_mbs_scene_parse(const char* json, const char* path, cfMbsScene* s) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  cf_mbs_def_init(&s->def);
  s->t_end = 1.0;
  s->every = 1;
  cJSON* root;
  int pst = cf_json_parse(json, path, &root);
  if (pst < 0) return pst;
  Ctx c = {path, s};
  static const char* known[] = {"description", "gravity", "bodies", "markers", "joints", "drivers", "forces",
                                "redundant_constraints", "time", "solver", "output", NULL};
  if (!cJSON_IsObject(root)) TRY(cf_error(CF_ERR_SCENE, "%s: the scene must be a JSON object", path));
  TRY(check_keys(&c, root, known, "the scene"));
  TRY(get_vec3(&c, root, "gravity", s->def.opt.gravity, 0, "the scene"));
  TRY(get_int(&c, root, "redundant_constraints", &s->def.opt.redundant, "the scene"));
  if (s->def.opt.redundant < 0) TRY(cf_error(CF_ERR_SCENE, "%s: \"redundant_constraints\" must be >= 0", path));
  const cJSON* time = cJSON_GetObjectItemCaseSensitive(root, "time");
  if (time) {
    static const char* tk[] = {"dt", "end", NULL};
    TRY(check_keys(&c, time, tk, "\"time\""));
    TRY(get_num(&c, time, "dt", &s->def.opt.dt, 0, "\"time\""));
    TRY(get_num(&c, time, "end", &s->t_end, 0, "\"time\""));
    if (!(s->def.opt.dt > 0)) TRY(cf_error(CF_ERR_SCENE, "%s: \"time.dt\" must be positive", path));
    if (!(s->t_end > 0)) TRY(cf_error(CF_ERR_SCENE, "%s: \"time.end\" must be positive", path));
    if (s->def.opt.dt > s->t_end)
      TRY(cf_error(CF_ERR_SCENE, "%s: \"time.dt\" = %g s is longer than the run (\"time.end\" = %g s%s)", path,
                   s->def.opt.dt, s->t_end, cJSON_GetObjectItemCaseSensitive(time, "end") ? "" : ", the default"));
  }
  const cJSON* solver = cJSON_GetObjectItemCaseSensitive(root, "solver");
  if (solver) {
    static const char* sk[] = {"penalty", "tol_dq", "tol_phi", "max_iter", "proj_iter", "analysis", "rho_inf",
                               "coupling", "formulation", NULL};
    char analysis[16] = "dynamic", coupling[16] = "newton", formulation[32] = "global";
    TRY(check_keys(&c, solver, sk, "\"solver\""));
    TRY(get_num(&c, solver, "penalty", &s->def.opt.penalty, 0, "\"solver\""));
    TRY(get_num(&c, solver, "tol_dq", &s->def.opt.tol_dq, 0, "\"solver\""));
    TRY(get_num(&c, solver, "rho_inf", &s->def.opt.rho_inf, 0, "\"solver\""));
    if (!(s->def.opt.rho_inf >= 0.5 && s->def.opt.rho_inf <= 1))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.rho_inf\" = %g must be in [0.5, 1] (1: the trapezoidal rule)", path,
                   s->def.opt.rho_inf));
    TRY(get_num(&c, solver, "tol_phi", &s->def.opt.tol_phi, 0, "\"solver\""));
    TRY(get_int(&c, solver, "max_iter", &s->def.opt.max_iter, "\"solver\""));
    TRY(get_int(&c, solver, "proj_iter", &s->def.opt.proj_iter, "\"solver\""));
    TRY(get_str(&c, solver, "analysis", analysis, sizeof analysis, 0, "\"solver\""));
    TRY(get_str(&c, solver, "coupling", coupling, sizeof coupling, 0, "\"solver\""));
    s->coupling_given = cJSON_GetObjectItemCaseSensitive(solver, "coupling") != NULL;
    s->def.opt.coupling = cf_mbs_coupling_from_key(coupling);
    if (s->def.opt.coupling < 0)
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.coupling\" = \"%s\": use \"newton\" (the FE bodies' full residual "
                   "in every Newton iteration) or \"linear\" (linearised once per step, one linear solve)", path,
                   coupling));
    TRY(get_str(&c, solver, "formulation", formulation, sizeof formulation, 0, "\"solver\""));
    if (!strcmp(formulation, "semi_recursive")) s->formulation = CF_MBS_SEMI_RECURSIVE;
    else if (!strcmp(formulation, "structural_groups")) s->formulation = CF_MBS_STRUCTURAL_GROUPS;
    else if (strcmp(formulation, "global"))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.formulation\" = \"%s\": use \"global\" (natural coordinates), "
                   "\"semi_recursive\" (dynamics in relative coordinates, rigid and modal bodies) or \"structural_groups\" "
                   "(kinematic analysis group by group)", path, formulation));
    if (s->formulation == CF_MBS_SEMI_RECURSIVE && !strcmp(analysis, "kinematic"))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.formulation\" = \"semi_recursive\" runs dynamics only: for the kinematic "
                   "analysis use \"structural_groups\" or \"global\"", path));
    if (s->formulation == CF_MBS_STRUCTURAL_GROUPS && strcmp(analysis, "kinematic"))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.formulation\" = \"structural_groups\" is a kinematic analysis: add "
                   "\"analysis\": \"kinematic\" (for dynamics use \"semi_recursive\" or \"global\")", path));
    if (!strcmp(analysis, "kinematic")) s->kinematic = 1;
    else if (strcmp(analysis, "dynamic"))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.analysis\" = \"%s\": use \"dynamic\" or \"kinematic\"", path, analysis));
    if (s->def.opt.penalty < 0) TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.penalty\" must be >= 0 (0: automatic)", path));
    if (!(s->def.opt.tol_dq > 0) || !(s->def.opt.tol_phi > 0))
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver\" tolerances must be positive", path));
    if (s->def.opt.max_iter < 1 || s->def.opt.proj_iter < 1)
      TRY(cf_error(CF_ERR_SCENE, "%s: \"solver.max_iter\" and \"proj_iter\" must be >= 1", path));
  }
  TRY(parse_array(&c, root, "bodies", 1, parse_body));
  if (s->def.nbody == 0) TRY(cf_error(CF_ERR_SCENE, "%s: \"bodies\" is empty", path));
  /* lumped FE bodies: generalized-alpha by default, the trapezoidal rule is unstable with their
   * unresolved stiff modes at the rigid motion's step (docs/mbs.md, "FE bodies") */
  if (s->def.nfe > 0 && !(solver && cJSON_GetObjectItemCaseSensitive(solver, "rho_inf"))) s->def.opt.rho_inf = 0.9;
  cf_mbs_scene_set_coupling(s, s->def.opt.coupling);
  TRY(parse_array(&c, root, "markers", 0, parse_marker));
  TRY(parse_array(&c, root, "joints", 0, parse_joint));
  TRY(parse_array(&c, root, "drivers", 0, parse_driver));
  TRY(parse_array(&c, root, "forces", 0, parse_force));
  TRY(check_tolerances(&c, solver));
  TRY(check_drivers(&c));
  const cJSON* out = cJSON_GetObjectItemCaseSensitive(root, "output");
  if (out) {
    static const char* ok[] = {"dir", "every", "vtu_every", "channels", NULL};
    TRY(check_keys(&c, out, ok, "\"output\""));
    TRY(get_str(&c, out, "dir", s->out_dir, sizeof s->out_dir, 0, "\"output\""));
    TRY(get_int(&c, out, "every", &s->every, "\"output\""));
    if (s->every < 1) TRY(cf_error(CF_ERR_SCENE, "%s: \"output.every\" must be >= 1", path));
    TRY(get_int(&c, out, "vtu_every", &s->vtu_every, "\"output\""));
    if (s->vtu_every < 0) TRY(cf_error(CF_ERR_SCENE, "%s: \"output.vtu_every\" must be >= 0", path));
    TRY(parse_array(&c, out, "channels", 0, parse_channel));
  }
  cJSON_Delete(root);
  return CF_OK;
}

/* the whole file as text (cfi_read_file: in chunks, so a directory or a pipe is no problem) */
static int read_all(const char* path, char** buf) {
  size_t n = 0;
  int st = cfi_read_file(path, buf, &n);
  if (st < 0) return st;
  if (strlen(*buf) != n) {
    free(*buf);
    *buf = NULL;
    return cf_error(CF_ERR_PARSE, "%s: cannot read as text (a NUL byte)", path);
  }
  return CF_OK;
}

int cf_mbs_scene_load(const char* path, cfMbsScene* s) {
  memset(s, 0, sizeof *s);
  char* buf = NULL;
  int st = read_all(path, &buf);
  if (st < 0) return st;
  st = cf_mbs_scene_parse(buf, path, s);
  free(buf);
  return st;
}

int cf_mbs_scene_is_mechanism(const char* json_path) {
  char* buf = NULL;
  if (read_all(json_path, &buf) < 0) {
    cf_clear_error();
    return 0;
  }
  cJSON* root = cJSON_ParseWithLengthOpts(buf, strlen(buf) + 1, NULL, 0);
  free(buf);
  int yes = root && cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "bodies") != NULL;
  cJSON_Delete(root);
  return yes;
}

void cf_mbs_scene_free(cfMbsScene* s) {
  cf_mbs_def_free(&s->def);
  for (int i = 0; i < s->ntabs; i++) free(s->tabs[i]);
  free(s->tabs);
  s->tabs = NULL, s->ntabs = 0;
  for (int k = 0; k < s->nflex; k++) {
    cf_modal_part_free(s->flex[k]);
    free(s->flex[k]);
  }
  s->nflex = 0;
}

/* ---- output channels ----------------------------------------------------------------------------- */
int cf_mbs_channel_size(const cfMbsChannel* c) {
  return (c->what == CF_MBS_OUT_ANGLE || c->what == CF_MBS_OUT_TRANSLATION || c->what == CF_MBS_OUT_LAMBDA ||
          c->what == CF_MBS_OUT_VON_MISES_MAX) ? 1 : 3;
}

/* an FE body's largest element von Mises stress now, as its .vtu frame's (NaN when out of memory) */
static double fe_von_mises_max(const cfMbsModel* m, const cfMbsData* d, int body) {
  cfStressField f;
  if (cf_stress_field_init(&f, cf_mbs_fe_model(m, cf_mbs_fe_index(m, body))) < 0) return NAN;
  double vm = NAN;
  if (cf_mbs_flex_stress(m, d, body, NULL, &f) >= 0) {
    vm = 0;
    for (int e = 0; e < f.ntet; e++) vm = fmax(vm, f.von_mises[e]);
  }
  cf_stress_field_free(&f);
  return vm;
}

void cf_mbs_channel_eval(const cfMbsModel* m, const cfMbsData* d, const cfMbsChannel* c, double* v) {
  static const double zero[3] = {0, 0, 0};
  int body = c->kind == 0 ? m->marker_body[c->id] : c->id;
  const double* p = c->kind == 0 ? m->marker_pos + 3 * c->id : zero;
  int fe = c->kind == 1 ? cf_mbs_fe_index(m, body) : -1;
  if (fe >= 0 && (c->what == CF_MBS_OUT_POSITION || c->what == CF_MBS_OUT_VELOCITY)) {
    /* an FE body's "origin" is its centre of mass */
    cf_mbs_fe_centre(m, d, fe, c->what == CF_MBS_OUT_POSITION ? v : NULL, c->what == CF_MBS_OUT_VELOCITY ? v : NULL);
    return;
  }
  switch (c->what) {
    case CF_MBS_OUT_POSITION: cf_mbs_point(m, d, body, p, v); break;
    case CF_MBS_OUT_VELOCITY: cf_mbs_point_vel(m, d, body, p, v); break;
    case CF_MBS_OUT_ACCELERATION: cf_mbs_point_acc(m, d, body, p, v); break;
    case CF_MBS_OUT_OMEGA: cf_mbs_omega(m, d, body, v); break;
    case CF_MBS_OUT_ANGLE: v[0] = cf_mbs_joint_angle(m, d, c->id); break;
    case CF_MBS_OUT_TRANSLATION: v[0] = cf_mbs_joint_translation(m, d, c->id); break;
    case CF_MBS_OUT_REACTION: cf_mbs_joint_reaction(m, d, c->id, v); break;
    case CF_MBS_OUT_LAMBDA: v[0] = d->reaction[m->driver_con[c->id]]; break;
    case CF_MBS_OUT_VON_MISES_MAX: v[0] = fe_von_mises_max(m, d, c->id); break;
    default: v[0] = v[1] = v[2] = NAN;
  }
}

/* snprintf at *len into out [n], *len growing by what it needed even past n */
#define CSV_PUT(...)                                                                        \
  do {                                                                                      \
    int w_ = snprintf(out && len < n ? out + len : NULL, out && len < n ? (size_t)(n - len) : 0, __VA_ARGS__); \
    if (w_ > 0) len += w_;                                                                  \
  } while (0)

int cf_mbs_csv_header(const cfMbsScene* s, char* out, int n) {
  int len = 0;
  if (out && n > 0) out[0] = 0;
  CSV_PUT("step,t,newton_iters,phi_max,phid_max,phidd_max,kinetic,potential,energy");
  for (int c = 0; c < s->nchannel; c++) {
    const char* l = s->channel[c].label;
    if (cf_mbs_channel_size(&s->channel[c]) == 1) CSV_PUT(",%s", l);
    else CSV_PUT(",%s_x,%s_y,%s_z", l, l, l);
  }
  CSV_PUT("\n");
  return len;
}

int cf_mbs_csv_row(const cfMbsModel* m, const cfMbsData* d, const cfMbsScene* s, long k, char* out, int n) {
  int len = 0;
  if (out && n > 0) out[0] = 0;
  double T, V;
  cf_mbs_energy(m, d, &T, &V);
  CSV_PUT("%ld,%.10g,%d,%.3e,%.3e,%.3e,%.12g,%.12g,%.12g", k, d->t, d->iters, d->phi_max, d->phid_max, d->phidd_max, T,
          V, T + V);
  for (int c = 0; c < s->nchannel; c++) {
    double v[3];
    cf_mbs_channel_eval(m, d, &s->channel[c], v);
    for (int i = 0; i < cf_mbs_channel_size(&s->channel[c]); i++) CSV_PUT(",%.12g", v[i]);
  }
  CSV_PUT("\n");
  return len;
}
#undef CSV_PUT

void cf_mbs_scene_interactive(cfMbsScene* s) {
  if (s->coupling_given) return;
  for (int i = 0; i < s->def.nfe; i++)
    if (s->def.fe[i].corotational && !s->def.fe[i].factor_given) s->def.fe[i].a0_pcg = 0, s->def.fe[i].exact_factor = 0;
  cf_mbs_scene_set_coupling(s, CF_MBS_COUPLING_LINEAR);
}

int cf_mbs_scene_set_backend(cfMbsScene* s, int backend) {
  if (backend < 0) return CF_OK;
  char why[256] = "";
  int gpu = backend == 1 || (backend == 2 && cf_cuda_available(why, sizeof why));
  int ncorot = 0;
  for (int k = 0; k < s->nflex; k++) {
    int i = cf_mbs_def_fe_index(&s->def, s->flex_body[k]);
    if (i < 0 || !s->def.fe[i].corotational) continue;
    cfMbsFeDef* fe = &s->def.fe[i];
    cfModel* fem = s->flex[k]->model;
    ncorot++;
    if (!gpu) {
      /* a GPU body of the linear coupling had AMG for "auto" (cf_mbs_scene_set_coupling): the CPU's */
      if (fe->cuda && fem && s->def.opt.coupling == CF_MBS_COUPLING_LINEAR &&
          s->flex[k]->scene.def.preconditioner == CF_PRECOND_AUTO)
        fem->def.preconditioner = cf_preconditioner_auto(fem->ntet, fem->def.integrator, 0);
      fe->cuda = 0;
      continue;
    }
    if (!fe->a0_pcg) fem->def.pcg_tol = 1e-10; /* the scene's "tol" default for "pcg" */
    /* AMG unless the FE scene or the body's "preconditioner" key asked for block Jacobi (its "auto"
     * is block Jacobi on the CPU, kept as "auto" in the scene's def) */
    if (s->flex[k]->scene.def.preconditioner != CF_PRECOND_BLOCK_JACOBI) fem->def.preconditioner = CF_PRECOND_AMG;
    fe->a0_pcg = 1, fe->exact_factor = 0, fe->cuda = 1;
  }
  if (backend == 1 && !ncorot)
    return cf_error(CF_ERR_UNSUPPORTED, "--backend cuda: the mechanism has no corotational FE body (its multibody core, "
                    "rigid, modal and lumped bodies run on the CPU)");
  return CF_OK;
}

void cf_mbs_scene_set_coupling(cfMbsScene* s, int coupling) {
  s->def.opt.coupling = coupling;
  for (int k = 0; k < s->nflex; k++) {
    int i = cf_mbs_def_fe_index(&s->def, s->flex_body[k]);
    if (i < 0 || !s->def.fe[i].corotational || !s->flex[k]->model) continue;
    if (s->flex[k]->scene.def.preconditioner != CF_PRECOND_AUTO) continue; /* the scene chose one */
    cfModel* fem = s->flex[k]->model;
    fem->def.preconditioner = coupling == CF_MBS_COUPLING_LINEAR
                                  ? (s->def.fe[i].cuda ? CF_PRECOND_AMG : cf_preconditioner_auto(fem->ntet, fem->def.integrator, 0))
                                  : CF_PRECOND_BLOCK_JACOBI;
  }
}
