/* A Craig-Bampton reduced part made from an FE scene (docs/craig-bampton.md): the scene gives
 * the mesh, material and supports; the interface is the named node sets, and the scene's fixed
 * sets are ignored, added to the interface, or kept fixed (zero in every mode). Shared by `cofem reduce` and the
 * flexible bodies of mechanism scenes. A cache file (docs/reduction-format.md) is reused when it
 * matches the mesh, material, interface and mode count, and (re)written otherwise. */
#ifndef COFEM_MODAL_PART_H
#define COFEM_MODAL_PART_H
#include "cofem/reduce.h"
#include "cofem/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cfModalPart {
  cfScene scene;             /* the FE scene (mesh in scene.mesh) */
  cfModel* model;            /* its model (with the supports fixed when clamp) */
  cfReduction red;
  int from_cache;            /* 1: red was read from the cache file */
  double t_load, t_total;    /* [s] scene + model; everything */
} cfModalPart;

typedef enum cfPartSupports {
  CF_PART_SUPPORTS_FREE = 0,       /* the scene's fixed sets are ignored (a free part) */
  CF_PART_SUPPORTS_INTERFACE = 1,  /* they are interface sets too (where the part attaches) */
  CF_PART_SUPPORTS_CLAMP = 2       /* they stay fixed */
} cfPartSupports;

/* sets[nsets]: interface node sets; supports: cfPartSupports. cache: file to reuse / write, or
 * NULL. Errors name the scene and the set. out is zeroed first; free it with cf_modal_part_free
 * (also after an error). */
int cf_modal_part_load(const char* scene_path, const char* const* sets, int nsets, int supports,
                       const cfReduceOptions* opt, const char* cache, cfModalPart* out);
/* The same with the FE scene given as JSON text named scene_path (cf_scene_load_text); json NULL:
 * read the file scene_path. */
int cf_modal_part_load_text(const char* json, const char* scene_path, const char* const* sets, int nsets,
                            int supports, const cfReduceOptions* opt, const char* cache, cfModalPart* out);
/* An interface point of a part (cofem/reduce.h cfInterfacePoint) named by its node set. */
typedef struct cfPartPoint {
  char set[CF_NAME_MAX];
  int kind;                  /* CF_POINT_RIGID or CF_POINT_AVERAGING */
  unsigned dofs;             /* kept static modes, bit a = DOF a of x y z rx ry rz; 0: all six */
} cfPartPoint;
/* The same with interface points besides the interface sets (points[npoint]; NULL, 0: none). */
int cf_modal_part_load_points(const char* json, const char* scene_path, const char* const* sets, int nsets,
                              const cfPartPoint* points, int npoint, int supports, const cfReduceOptions* opt,
                              const char* cache, cfModalPart* out);
void cf_modal_part_free(cfModalPart* p);

#ifdef __cplusplus
}
#endif
#endif
