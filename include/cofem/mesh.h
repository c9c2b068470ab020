/* Tetrahedral meshes: reading (.msh 2.2/4.1 ASCII and binary, Abaqus/CalculiX .inp),
 * validation, boundary extraction, quality, and writing (.inp for CalculiX). */
#ifndef COFEM_MESH_H
#define COFEM_MESH_H
#include <stdio.h>
#include "cofem/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_NAME_MAX 64

/* A named set of nodes: 0-based node indices, sorted ascending, unique. */
typedef struct cfNodeSet {
  char name[CF_NAME_MAX];
  int count;
  int* nodes;
} cfNodeSet;

/* A named set of elements: 0-based element indices, sorted ascending, unique. */
typedef struct cfElemSet {
  char name[CF_NAME_MAX];
  int count;
  int* elems;
} cfElemSet;

/* A tetrahedral mesh of linear (4-node) or quadratic (10-node) elements, not mixed. Node indices are 0-based and dense; the ids the file used are kept
 * in node_id/elem_id so that messages can name them. Tetrahedra are positively oriented:
 * (X1-X0) x (X2-X0) . (X3-X0) > 0. */
typedef struct cfMesh {
  int nnode;
  double* X;      /* [3*nnode] rest coordinates */
  int* node_id;   /* [nnode] id in the source file */
  int ntet;
  int* tet;       /* [4*ntet] node indices */
  int* elem_id;   /* [ntet] id in the source file */
  int nnset;
  cfNodeSet* nsets;
  int neset;
  cfElemSet* esets;
  int ntri;
  int* tri;       /* [3*ntri] boundary faces, counter-clockwise seen from outside */
  int* tri_tet;   /* [ntri] element owning each boundary face */
  char source[512]; /* file it came from, for messages */
  char note[256];   /* what the reader left out, for the user ("skipped 120 surface and line
                       elements (96 CPS3, 24 T3D2); their element sets are node sets"), or "" */
  /* Nodes per element: 4 (0 reads as 4: meshes built by hand) or 10, tet then [10*ntet] in the
   * order of VTK_QUADRATIC_TETRA and Abaqus C3D10: corners 0-3 (positively oriented as above),
   * then the edge nodes of (0,1) (1,2) (2,0) (0,3) (1,3) (2,3). Gmsh's type 11 lists the last
   * two the other way, (2,3) then (1,3); its reader swaps them. tri holds corner triangles. */
  int tet_nodes;
} cfMesh;

/* Nodes per element of a mesh: 4 or 10 */
static inline int cf_mesh_npe(const cfMesh* mesh) { return mesh->tet_nodes == 10 ? 10 : 4; }

/* Read a mesh; the format is chosen from the extension (.msh or .inp). On success the mesh is
 * validated (cf_mesh_validate) and its boundary extracted. On failure *mesh is left empty
 * (all zero) and cf_last_error() names the file, line and entity. */
int cf_mesh_read(const char* path, cfMesh* mesh);
int cf_mesh_read_msh(const char* path, cfMesh* mesh);
int cf_mesh_read_inp(const char* path, cfMesh* mesh);

/* Check ids, coordinates (finite, magnitude <= CF_MESH_COORD_MAX), that every node is in a
 * tetrahedron (orphan nodes are an error, whatever the command), and element volumes: volume
 * <= 0 is "zero or negative volume", a positive volume below CF_MESH_FLAT_RATIO times the
 * element's longest edge cubed is "degenerate" (flat); the errors name up to 10 elements. */
#define CF_MESH_COORD_MAX 1e100
#define CF_MESH_FLAT_RATIO 1e-8
int cf_mesh_validate(const cfMesh* mesh);
/* Fill tri/tri_tet/ntri with the faces that belong to exactly one element. */
int cf_mesh_extract_boundary(cfMesh* mesh);

/* Element quality figures for `cofem info`. */
typedef struct cfMeshQuality {
  double volume;           /* total volume */
  double min_elem_volume, max_elem_volume;
  double min_dihedral_deg, max_dihedral_deg;
  double max_aspect_ratio; /* longest edge / (2*sqrt(6)*inradius): 1 for a regular tet */
  double bbox_min[3], bbox_max[3];
} cfMeshQuality;
int cf_mesh_quality(const cfMesh* mesh, cfMeshQuality* q);

/* Volume of element e (signed). */
double cf_tet_volume(const cfMesh* mesh, int e);

/* Look up a set by name (exact match); NULL if absent. */
const cfNodeSet* cf_mesh_find_nset(const cfMesh* mesh, const char* name);
const cfElemSet* cf_mesh_find_eset(const cfMesh* mesh, const char* name);

/* Write the mesh as Abaqus/CalculiX input: *NODE, *ELEMENT TYPE=C3D4 (ELSET=EALL), *NSET per
 * node set (names upper-cased as CalculiX does), *ELSET per element set. */
int cf_mesh_write_inp(const cfMesh* mesh, FILE* out);

/* The quadratic (10-node) mesh of a linear one with straight edges: a node at the middle of every
 * edge (numbered after the corners, in the order the edges are first met), the same elements and
 * element sets; an edge node joins a node set when both its corners are in it (a face's set gets
 * its edges' nodes). For tests and convergence studies on one corner mesh; out is validated. */
int cf_mesh_quadratic(const cfMesh* linear, cfMesh* out);

void cf_mesh_free(cfMesh* mesh);

#ifdef __cplusplus
}
#endif
#endif
