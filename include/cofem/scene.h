/* Scenes: a JSON file naming the mesh, material, supports, loads, time stepping, solver and
 * outputs (format documented in docs/scene-format.md). Paths inside a scene are relative to
 * the scene file. */
#ifndef COFEM_SCENE_H
#define COFEM_SCENE_H
#include "cofem/fem.h"
#include "cofem/static.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_SCENE_MAX_ITEMS 16
#define CF_PATH_MAX 512

typedef struct cfSceneFix {
  char set[CF_NAME_MAX];
  int dir_mask;          /* bit 0/1/2 = x/y/z */
} cfSceneFix;

/* A total force spread over a node set (area-weighted over the set's boundary faces, or equally
 * over its nodes when it has none), ramped linearly from 0 at t_start to full at t_start+ramp,
 * removed after t_stop. */
typedef struct cfSceneLoad {
  char set[CF_NAME_MAX];
  double force[3];       /* total force [N] */
  double t_start, ramp, t_stop;
} cfSceneLoad;

typedef struct cfScene {
  char path[CF_PATH_MAX];
  char mesh_path[CF_PATH_MAX];
  cfMesh mesh;
  cfModelDef def;
  int nfix;
  cfSceneFix fix[CF_SCENE_MAX_ITEMS];
  int nload;
  cfSceneLoad load[CF_SCENE_MAX_ITEMS];
  double t_end;
  char backend[16];      /* "cpu", "cuda" or "auto" */
  cfStaticOptions stat;
  /* outputs */
  char out_dir[CF_PATH_MAX];
  int vtu_every;         /* write a .vtu frame every N steps (0: none) */
  int nprobe;
  char probe[CF_SCENE_MAX_ITEMS][CF_NAME_MAX]; /* node sets whose mean displacement is logged */
  /* derived at load time: each load's nodal weights (summing to 1, indexed like its set) */
  double* load_weight[CF_SCENE_MAX_ITEMS];
} cfScene;

/* Read the scene and its mesh; every set it names must exist. Errors name the file and key. */
int cf_scene_load(const char* path, cfScene* scene);
/* cf_scene_load of a scene given as JSON text rather than a file (bindings building scenes in
 * code): the same parsing, mesh reading and checks, the same messages. path names the scene in
 * messages, and relative paths in it (the mesh) are resolved against path's folder, as for a file
 * at path (which need not exist): "/work/lug/<scene>" resolves "lug.msh" to /work/lug/lug.msh. */
int cf_scene_load_text(const char* json, const char* path, cfScene* scene);
/* Parse from a JSON string (path used for messages and for resolving relative paths); the mesh is
 * not read (cf_scene_load_text does the whole). */
int cf_scene_parse(const char* json, const char* path, cfScene* scene);
/* The time step against the part's own time scale: (dt c / L)^2 with c = sqrt(E / rho) the wave
 * speed and L the diagonal of the mesh's bounding box, about the ratio of the stiffness to the mass
 * terms of a step's matrix (M + h^2 K). Above CF_SCENE_MAX_STEP_RATIO the mass is lost to round-off
 * against the stiffness (the lug's step failed from dt = 1000 s, "not supported"): a time step
 * millions of times the part's wave transit time, or a density millions of times too small. */
#define CF_SCENE_MAX_STEP_RATIO 1e12
double cf_scene_step_ratio(const cfScene* scene, double dt);
/* CF_ERR_SCENE naming the scene, "time.dt" and the density when cf_scene_step_ratio(scene, dt) is
 * above the bound (cofem run checks the FE scene's step before building) */
int cf_scene_check_step(const cfScene* scene, double dt);
/* Model with the supports fixed, and data at rest. */
int cf_scene_build(const cfScene* scene, cfModel** model, cfData** data);
/* Nodal forces of all loads at time t into f ([ndof], overwritten); scale multiplies them. */
void cf_scene_forces(const cfScene* scene, double t, double scale, double* f);
/* A path written in a scene file, resolved against the scene file's directory (absolute: kept). */
void cf_scene_resolve_path(const char* scene_path, const char* rel, char* out, size_t n);
/* Nodal weights of a node set (sorted, as the mesh readers make them), summing to 1: area-weighted
 * over the boundary triangles whose three nodes are in the set, equal over its nodes if there are
 * none. w [set->count] is indexed like the set; in is a zeroed scratch [nnode], left zeroed. */
void cf_set_area_weights(const cfMesh* mesh, const cfNodeSet* set, double* w, unsigned char* in);
/* Mean displacement of a node set (x - X). */
void cf_set_displacement(const cfMesh* mesh, const cfNodeSet* set, const double* x, double* u);
void cf_scene_free(cfScene* scene);

#ifdef __cplusplus
}
#endif
#endif
