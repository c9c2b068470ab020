/* Result files: VTK XML unstructured grids (.vtu) and a ParaView series (.pvd). */
#ifndef COFEM_OUTPUT_H
#define COFEM_OUTPUT_H
#include "cofem/fem.h"
#include "cofem/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write one frame: points at x (current positions, [3*nnode]), point data "displacement"
 * (x - X) and, when given, "velocity" ([3*nnode]); cell data "von_mises" ([ntet]) when given.
 * ASCII VTK XML, readable by ParaView. The file is written to path.tmp and renamed, so a
 * failure never leaves a partial file. */
int cf_vtu_write(const char* path, const cfMesh* mesh, const double* x, const double* v,
                 const double* von_mises);

/* The same with the stress of the frame (cofem/fem.h, cfStressField; NULL: none): point data
 * "von_mises" and "strain" (nodal averages), cell data "von_mises" [Pa] and "strain" (per element;
 * 6 components xx yy zz xy yz xz, rest axes). */
int cf_vtu_write_stress(const char* path, const cfMesh* mesh, const double* x, const double* v,
                        const cfStressField* s);

/* Bytes cf_vtu_write / cf_vtu_write_stress write at most for this mesh (velocity: with velocity data;
 * von_mises: with the stress fields, cell and point). */
double cf_vtu_size_bound(const cfMesh* mesh, int velocity, int von_mises);

/* mkdir -p: create the directory and its parents (existing ones are fine). */
int cf_make_dirs(const char* path);

/* Write a .pvd collection listing `n` frame files (paths as written into the file) and times. */
int cf_pvd_write(const char* path, int n, const char* const* files, const double* times);

#ifdef __cplusplus
}
#endif
#endif
