/* Craig-Bampton reduced parts from FE scenes: cofem/modal_part.h. */
#include "cofem/modal_part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cofem.h"
#include "cofem/output.h"
#include "reduce/reduce_internal.h"

static int cmp_int(const void* a, const void* b) { return (*(const int*)a > *(const int*)b) - (*(const int*)a < *(const int*)b); }

/* the cache holds this reduction: same model (checked by cf_reduction_check), interface nodes
 * (sorted, unique) and normal-mode count */
static int cache_matches(const cfReduction* r, const cfModel* m, const int* nodes, int n, const cfInterfacePoint* pts,
                         int npoint, const cfReduceOptions* o) {
  if (cf_reduction_check(r, m) < 0) {
    cf_clear_error();
    return 0;
  }
  if (r->npoint != npoint) return 0;
  for (int k = 0; k < npoint; k++) {
    const cfReductionPoint* P = &r->points[k];
    if (P->kind != pts[k].kind || P->dofs != (int)(pts[k].dofs ? pts[k].dofs : CF_POINT_ALL_DOFS) ||
        P->nnode != pts[k].nnode || memcmp(P->nodes, pts[k].nodes, sizeof(int) * (size_t)P->nnode) != 0)
      return 0;
  }
  if (r->nbnode != n || r->orthonormal != (o->orthonormalise != 0)) return 0;
  for (int i = 0; i < n; i++)
    if (r->bnodes[i] != nodes[i]) return 0;
  int held = 0; /* DOFs the normal modes hold: the interface nodes' and the points' sets' */
  for (int i = 0; i < r->nb; i++) held += r->bdof[i] >= 0;
  for (int k = 0; k < npoint; k++)
    for (int i = 0; i < pts[k].nnode; i++)
      for (int a = 0; a < 3; a++) held += !m->fixed[3 * pts[k].nodes[i] + a];
  int free_interior = m->ndof - m->nfixed - held;
  int want = o->nmodes < free_interior ? o->nmodes : free_interior;
  if (r->nk != want) return 0;
  /* its rigid-body modes those of its shapes (a cache written before they were found by shape
   * may have taken slow elastic modes for rigid ones, which the modal body skips) */
  int nrig = cf__reduction_rigid_count(m, r, o->rigid_tol);
  if (nrig < 0) cf_clear_error();
  return nrig == r->nrigid;
}

/* The interface nodes, sorted and unique (the order the reduction stores them in): the named
 * sets, and the scene's fixed sets when they are interface too; clamped supports are fixed in
 * the model instead. *nodes is allocated. */
static int interface_nodes(cfModalPart* out, const char* scene_path, const char* const* sets, int nsets,
                           int supports, int** nodes, int* count) {
  const cfScene* sc = &out->scene;
  const cfNodeSet** found = malloc(sizeof *found * (size_t)(nsets + sc->nfix + 1));
  if (!found) return cf_error(CF_ERR_NOMEM, "%s: out of memory", scene_path);
  int nfound = 0, total = 0;
  for (int i = 0; i < nsets + sc->nfix; i++) {
    const char* name = i < nsets ? sets[i] : sc->fix[i - nsets].set;
    const cfNodeSet* s = cf_mesh_find_nset(&sc->mesh, name);
    if (!s) {
      free(found);
      return cf_error(CF_ERR_SCENE, "%s: no node set '%s' in the mesh %s", scene_path, name, sc->mesh_path);
    }
    if (i >= nsets && supports == CF_PART_SUPPORTS_CLAMP)
      cf_model_fix_nodes(out->model, s->nodes, s->count, sc->fix[i - nsets].dir_mask);
    else if (i < nsets || supports == CF_PART_SUPPORTS_INTERFACE)
      found[nfound++] = s, total += s->count;
  }
  int* n = malloc(sizeof(int) * (size_t)(total + 1));
  if (!n) {
    free(found);
    return cf_error(CF_ERR_NOMEM, "%s: out of memory", scene_path);
  }
  int k = 0;
  for (int i = 0; i < nfound; i++) {
    memcpy(n + k, found[i]->nodes, sizeof(int) * (size_t)found[i]->count);
    k += found[i]->count;
  }
  free(found);
  qsort(n, (size_t)k, sizeof(int), cmp_int);
  int u = 0;
  for (int i = 0; i < k; i++)
    if (u == 0 || n[i] != n[u - 1]) n[u++] = n[i];
  *nodes = n, *count = u;
  return CF_OK;
}

/* compute the reduction and write the cache (its folder made if need be) */
static int reduce_and_cache(cfModalPart* out, const int* nodes, int count, const cfInterfacePoint* pts, int npoint,
                            const cfReduceOptions* opt, const char* cache) {
  int st = cf_reduce_points(out->model, nodes, count, pts, npoint, opt, &out->red);
  if (st < 0 || !cache) return st;
  snprintf(out->red.source, sizeof out->red.source, "%s", out->scene.mesh_path);
  char dir[CF_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", cache);
  char* slash = strrchr(dir, '/');
  if (slash && slash != dir) *slash = '\0', st = cf_make_dirs(dir);
  return st < 0 ? st : cf_reduction_write(&out->red, cache);
}

int cf_modal_part_load(const char* scene_path, const char* const* sets, int nsets, int supports,
                       const cfReduceOptions* opt, const char* cache, cfModalPart* out) {
  return cf_modal_part_load_text(NULL, scene_path, sets, nsets, supports, opt, cache, out);
}

int cf_modal_part_load_text(const char* json, const char* scene_path, const char* const* sets, int nsets,
                            int supports, const cfReduceOptions* opt, const char* cache, cfModalPart* out) {
  return cf_modal_part_load_points(json, scene_path, sets, nsets, NULL, 0, supports, opt, cache, out);
}

int cf_modal_part_load_points(const char* json, const char* scene_path, const char* const* sets, int nsets,
                              const cfPartPoint* points, int npoint, int supports, const cfReduceOptions* opt,
                              const char* cache, cfModalPart* out) {
  memset(out, 0, sizeof *out);
  cfInterfacePoint pts[CF_SCENE_MAX_ITEMS];
  if (npoint > CF_SCENE_MAX_ITEMS) return cf_error(CF_ERR_SCENE, "%s: more than %d interface points", scene_path, CF_SCENE_MAX_ITEMS);
  double t0 = cf_wall_time();
  int st = json ? cf_scene_load_text(json, scene_path, &out->scene) : cf_scene_load(scene_path, &out->scene);
  if (st < 0) return st;
  if (supports == CF_PART_SUPPORTS_CLAMP && out->scene.nfix == 0) /* it would run free, silently */
    return cf_error(CF_ERR_SCENE, "%s: clamped supports (\"supports\": \"clamp\", cofem reduce --clamp), but the scene "
                    "has no \"fixed\" sets to clamp", scene_path);
  /* the reduction solves with CHOLMOD, not the part's PCG */
  if (out->scene.def.preconditioner == CF_PRECOND_AUTO) out->scene.def.preconditioner = CF_PRECOND_BLOCK_JACOBI;
  if ((st = cf_model_create(&out->scene.mesh, &out->scene.def, &out->model)) < 0) return st;
  int *nodes = NULL, count = 0;
  if ((st = interface_nodes(out, scene_path, sets, nsets, supports, &nodes, &count)) < 0) return st;
  for (int k = 0; k < npoint; k++) { /* the points' sets, in the order given */
    const cfNodeSet* ps = cf_mesh_find_nset(&out->scene.mesh, points[k].set);
    if (!ps) {
      free(nodes);
      return cf_error(CF_ERR_SCENE, "%s: interface point %d: no node set '%s' in the mesh %s", scene_path, k,
                      points[k].set, out->scene.mesh_path);
    }
    pts[k].nodes = ps->nodes, pts[k].nnode = ps->count, pts[k].kind = points[k].kind, pts[k].dofs = points[k].dofs;
  }
  out->t_load = cf_wall_time() - t0;
  if (opt->max_modes > 0) { /* the basis' size, known before the reduction: refused before any work or file */
    int nb = 0;
    for (int i = 0; i < count; i++)
      for (int k = 0; k < 3; k++) nb += !out->model->fixed[3 * nodes[i] + k];
    for (int k = 0; k < npoint; k++)
      for (int a = 0; a < 6; a++) nb += pts[k].dofs ? (int)(pts[k].dofs >> a & 1u) : 1;
    int held = nb;
    for (int k = 0; k < npoint; k++) {
      for (int i = 0; i < pts[k].nnode; i++)
        for (int a = 0; a < 3; a++) held += !out->model->fixed[3 * pts[k].nodes[i] + a];
      for (int a = 0; a < 6; a++) held -= pts[k].dofs ? (int)(pts[k].dofs >> a & 1u) : 1;
    }
    int free_interior = out->model->ndof - out->model->nfixed - held;
    int nk = opt->nmodes < free_interior ? opt->nmodes : free_interior;
    int nrigid = supports == CF_PART_SUPPORTS_FREE && out->model->nfixed == 0 ? 6 : 0;
    if (nb + nk - nrigid > opt->max_modes) {
      free(nodes);
      return cf_error(CF_ERR_SCENE, "%s: the reduction would have %d modes (%d constraint modes of %d interface "
                      "node%s, %d normal modes%s), a modal body takes at most %d: ask for fewer \"modes\" or a smaller "
                      "interface%s%s", scene_path, nb + nk - nrigid, nb, count, count == 1 ? "" : "s", nk,
                      nrigid ? ", less 6 rigid" : "", opt->max_modes, cache ? "; nothing written to " : "",
                      cache ? cache : "");
    }
  }
  /* a cache path that is not ours (a user's file, a directory, a device) is refused before the
   * reduction, never read as a cache nor overwritten */
  if (cache && (st = cf_reduction_replaceable(cache)) < 0) {
    free(nodes);
    return cf_error(st, "%s: reduction cache %s", scene_path, cf_last_error());
  }
  /* a cache of this version that does not read back (checksum, contents) was changed after cofem
   * wrote it: an error naming it, never used nor silently replaced; one of another version, or of
   * another model or interface, is recomputed and rewritten */
  int rd = cache && cf_reduction_file_version(cache) >= 0 ? cf_reduction_read(cache, &out->red) : CF_ERR_IO;
  if (cache && rd < 0 && cf_reduction_file_version(cache) >= 2) { /* the versions this build reads */
    free(nodes);
    return cf_error(rd, "%s: reduction cache %s (refused: remove the file to recompute it)", scene_path,
                    cf_last_error());
  }
  if (rd >= 0 && cache_matches(&out->red, out->model, nodes, count, pts, npoint, opt)) {
    out->from_cache = 1;
    cf_reduction_set_damping(&out->red, opt->damping); /* not part of the match: asked for now */
  } else {
    cf_clear_error();
    cf_reduction_free(&out->red);
    st = reduce_and_cache(out, nodes, count, pts, npoint, opt, cache);
  }
  free(nodes);
  /* the modes' geometric stiffness, when asked for and not already in the cache (a cache without it
   * is completed and rewritten) */
  if (st >= 0 && opt->geometric && !out->red.Kg) {
    st = cf_reduction_geometric(out->model, &out->red);
    if (st >= 0 && cache) st = cf_reduction_write(&out->red, cache);
  }
  if (st < 0) return cf_error(st, "%s: %s", scene_path, cf_last_error()); /* name the scene */
  /* a body clamped at its supports whose supports do not hold it: the reduction has rigid-body
   * modes, which a clamped modal body (its frame carrying no rigid motion of the part) cannot take */
  if (supports == CF_PART_SUPPORTS_CLAMP && out->red.nrigid > 0)
    return cf_error(CF_ERR_SCENE, "%s: its clamped supports do not hold the part: the reduction has %d rigid-body "
                    "mode%s (0 Hz, they were reported as elastic ones); clamp sets that hold it, or let the supports "
                    "be interface sets (cofem reduce without --clamp)", scene_path, out->red.nrigid,
                    out->red.nrigid == 1 ? "" : "s");
  out->t_total = cf_wall_time() - t0;
  return CF_OK;
}

void cf_modal_part_free(cfModalPart* p) {
  cf_reduction_free(&p->red);
  cf_model_free(p->model);
  cf_scene_free(&p->scene);
  memset(p, 0, sizeof *p);
}
