/* Structured tetrahedral box meshes for tests and benchmarks. */
#ifndef COFEM_MESH_BOX_H
#define COFEM_MESH_BOX_H
#include "cofem/mesh.h"
#ifdef __cplusplus
extern "C" {
#endif
/* [0,lx]x[0,ly]x[0,lz] in nx*ny*nz cells of 6 tets; node sets xmin, xmax, ymin, ymax, zmin, zmax. */
int cf_mesh_box(int nx, int ny, int nz, double lx, double ly, double lz, cfMesh* mesh);
#ifdef __cplusplus
}
#endif
#endif
