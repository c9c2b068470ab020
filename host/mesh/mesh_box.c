/* Structured box meshes (each hexahedral cell split into 6 tetrahedra around its main diagonal):
 * used by the tests, the benchmarks (VegaFEM's beam) and as an analytic reference geometry. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "cofem/mesh.h"
#include "cofem/mesh_box.h"

static int add_face_set(cfMesh* m, const char* name, int axis, int side, int nx, int ny, int nz) {
  cfNodeSet* s = &m->nsets[m->nnset];
  snprintf(s->name, sizeof s->name, "%s", name);
  int n[3] = {nx + 1, ny + 1, nz + 1};
  int cnt = 0;
  s->nodes = malloc(sizeof(int) * (size_t)m->nnode);
  if (!s->nodes) return -1;
  for (int k = 0; k < n[2]; k++)
    for (int j = 0; j < n[1]; j++)
      for (int i = 0; i < n[0]; i++) {
        int c[3] = {i, j, k};
        if (c[axis] == (side ? n[axis] - 1 : 0)) s->nodes[cnt++] = i + n[0] * (j + n[1] * k);
      }
  s->count = cnt;
  m->nnset++;
  return 0;
}

int cf_mesh_box(int nx, int ny, int nz, double lx, double ly, double lz, cfMesh* m) {
  memset(m, 0, sizeof *m);
  if (nx < 1 || ny < 1 || nz < 1 || !(lx > 0) || !(ly > 0) || !(lz > 0))
    return cf_error(CF_ERR_ARG, "box mesh: need positive cell counts and lengths");
  snprintf(m->source, sizeof m->source, "box(%dx%dx%d, %gx%gx%g)", nx, ny, nz, lx, ly, lz);
  m->nnode = (nx + 1) * (ny + 1) * (nz + 1);
  m->ntet = 6 * nx * ny * nz;
  m->X = malloc(sizeof(double) * 3 * m->nnode);
  m->node_id = malloc(sizeof(int) * m->nnode);
  m->tet = malloc(sizeof(int) * 4 * m->ntet);
  m->elem_id = malloc(sizeof(int) * m->ntet);
  m->nsets = calloc(7, sizeof(cfNodeSet));
  if (!m->X || !m->node_id || !m->tet || !m->elem_id || !m->nsets) goto nomem;
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        int id = i + (nx + 1) * (j + (ny + 1) * k);
        m->X[3 * id] = lx * i / nx;
        m->X[3 * id + 1] = ly * j / ny;
        m->X[3 * id + 2] = lz * k / nz;
        m->node_id[id] = id + 1;
      }
  /* cube corners c = bit0:x, bit1:y, bit2:z; six tets along the diagonal 0-7 */
  static const int kuhn[6][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7},
                                 {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
  int e = 0;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        for (int t = 0; t < 6; t++) {
          for (int a = 0; a < 4; a++) {
            int c = kuhn[t][a];
            int ii = i + (c & 1), jj = j + ((c >> 1) & 1), kk = k + ((c >> 2) & 1);
            m->tet[4 * e + a] = ii + (nx + 1) * (jj + (ny + 1) * kk);
          }
          if (cf_tet_volume(m, e) < 0) {
            int tmp = m->tet[4 * e + 1];
            m->tet[4 * e + 1] = m->tet[4 * e + 2];
            m->tet[4 * e + 2] = tmp;
          }
          m->elem_id[e] = e + 1;
          e++;
        }
  const char* names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
  for (int f = 0; f < 6; f++)
    if (add_face_set(m, names[f], f / 2, f % 2, nx, ny, nz)) goto nomem;
  int st = cf_mesh_extract_boundary(m);
  if (st < 0) {
    cf_mesh_free(m);
    return st;
  }
  return CF_OK;
nomem:
  cf_mesh_free(m);
  return cf_error(CF_ERR_NOMEM, "box mesh: out of memory");
}
