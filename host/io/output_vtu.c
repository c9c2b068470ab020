/* VTK XML output: one .vtu per frame (ASCII) and a .pvd collection. Both are written to
 * "<path>.tmp" and renamed, so a reader (ParaView polling a running simulation) never sees a
 * half-written file and a failure leaves no partial file behind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/output.h"

/* Open "<path>.tmp"; tmp receives the name. */
/* Opens path.tmp for writing (*tmp: its name, for the caller to rename and free); on failure
 * nothing is left to free and the message names the file. */
static int open_tmp(const char* path, char** tmp, FILE** f) {
  size_t n = strlen(path);
  *tmp = malloc(n + 5);
  *f = NULL;
  if (*tmp) {
    memcpy(*tmp, path, n);
    memcpy(*tmp + n, ".tmp", 5);
    *f = fopen(*tmp, "w");
  }
  if (!*f) {
    int err = errno;
    free(*tmp);
    *tmp = NULL;
    return cf_error(CF_ERR_IO, "%s.tmp: cannot open for writing: %s", path, strerror(err));
  }
  return CF_OK;
}

/* Close, then rename into place or remove: the one exit of both writers. */
static int finish(FILE* f, char* tmp, const char* path, int ok) {
  int err = 0;
  if (ferror(f)) ok = 0, err = errno;
  if (fclose(f) != 0 && ok) ok = 0, err = errno;
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  int st = CF_OK;
  if (!ok) {
    remove(tmp);
    st = cf_error(CF_ERR_IO, "%s: write failed: %s", path, err ? strerror(err) : "I/O error");
  }
  free(tmp);
  return st;
}

/* Values printed with 15 significant digits: exact enough for checks against analytic
 * solutions, a third smaller than round-trip precision. */
static void write_vec3(FILE* f, const char* name, int n, const double* a, const double* sub) {
  fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"3\" "
             "format=\"ascii\">\n", name);
  for (int i = 0; i < n; i++) {
    const double* p = a + 3 * (size_t)i;
    if (sub) {
      const double* q = sub + 3 * (size_t)i;
      fprintf(f, "          %.15g %.15g %.15g\n", p[0] - q[0], p[1] - q[1], p[2] - q[2]);
    } else {
      fprintf(f, "          %.15g %.15g %.15g\n", p[0], p[1], p[2]);
    }
  }
  fprintf(f, "        </DataArray>\n");
}

static void write_scalars(FILE* f, const char* name, int n, const double* a) {
  fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"ascii\">\n", name);
  for (int i = 0; i < n; i++) fprintf(f, "          %.15g\n", a[i]);
  fprintf(f, "        </DataArray>\n");
}

/* a symmetric tensor, 6 components in VTK's order xx yy zz xy yz xz (ParaView shows it as a tensor) */
static void write_sym6(FILE* f, const char* name, int n, const double* a) {
  fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"6\" "
             "ComponentName0=\"XX\" ComponentName1=\"YY\" ComponentName2=\"ZZ\" ComponentName3=\"XY\" "
             "ComponentName4=\"YZ\" ComponentName5=\"XZ\" format=\"ascii\">\n", name);
  for (int i = 0; i < n; i++) {
    const double* p = a + 6 * (size_t)i;
    fprintf(f, "          %.15g %.15g %.15g %.15g %.15g %.15g\n", p[0], p[1], p[2], p[3], p[4], p[5]);
  }
  fprintf(f, "        </DataArray>\n");
}

/* the one writer: point data displacement, velocity, von_mises, strain; cell data von_mises, strain */
static int vtu_write(const char* path, const cfMesh* mesh, const double* x, const double* v,
                     const double* cell_vm, const double* cell_eps, const double* node_vm, const double* node_eps) {
  if (!path || !mesh || !x) return cf_error(CF_ERR_ARG, "cf_vtu_write: NULL argument");
  if (mesh->nnode <= 0 || mesh->ntet <= 0 || !mesh->X || !mesh->tet)
    return cf_error(CF_ERR_ARG, "%s: cf_vtu_write: empty mesh", path);
  char* tmp;
  FILE* f;
  int st = open_tmp(path, &tmp, &f);
  if (st < 0) return st;
  const int nn = mesh->nnode, ne = mesh->ntet;
  fprintf(f, "<?xml version=\"1.0\"?>\n"
             "<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
             "  <UnstructuredGrid>\n"
             "    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n", nn, ne);
  fprintf(f, "      <PointData Vectors=\"displacement\"%s>\n", node_vm ? " Scalars=\"von_mises\"" : "");
  write_vec3(f, "displacement", nn, x, mesh->X);
  if (v) write_vec3(f, "velocity", nn, v, NULL);
  if (node_vm) write_scalars(f, "von_mises", nn, node_vm);
  if (node_eps) write_sym6(f, "strain", nn, node_eps);
  fprintf(f, "      </PointData>\n");
  if (cell_vm || cell_eps) {
    fprintf(f, "      <CellData%s>\n", cell_vm ? " Scalars=\"von_mises\"" : "");
    if (cell_vm) write_scalars(f, "von_mises", ne, cell_vm);
    if (cell_eps) write_sym6(f, "strain", ne, cell_eps);
    fprintf(f, "      </CellData>\n");
  }
  fprintf(f, "      <Points>\n");
  write_vec3(f, "Points", nn, x, NULL);
  fprintf(f, "      </Points>\n      <Cells>\n"
             "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
  const int np = cf_mesh_npe(mesh); /* 10: VTK_QUADRATIC_TETRA (24), whose node order is cofem's */
  for (int e = 0; e < ne; e++) {
    const int* t = mesh->tet + np * (size_t)e;
    fprintf(f, "         ");
    for (int a = 0; a < np; a++) fprintf(f, " %d", t[a]);
    fprintf(f, "\n");
  }
  fprintf(f, "        </DataArray>\n"
             "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
  for (int e = 0; e < ne; e++) fprintf(f, "%s%lld", e % 16 ? " " : "          ", (long long)np * (e + 1));
  fprintf(f, "\n        </DataArray>\n"
             "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
  for (int e = 0; e < ne; e++) fprintf(f, "%s%d", e % 32 ? " " : (e ? "\n          " : "          "), np == 10 ? 24 : 10);
  fprintf(f, "\n        </DataArray>\n"
             "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
  return finish(f, tmp, path, 1);
}

int cf_vtu_write(const char* path, const cfMesh* mesh, const double* x, const double* v,
                 const double* von_mises) {
  return vtu_write(path, mesh, x, v, von_mises, NULL, NULL, NULL);
}

int cf_vtu_write_stress(const char* path, const cfMesh* mesh, const double* x, const double* v,
                        const cfStressField* s) {
  if (s && mesh && (s->ntet != mesh->ntet || s->nnode != mesh->nnode))
    return cf_error(CF_ERR_ARG, "%s: stress field of %d nodes / %d elements for a mesh of %d / %d", path ? path : "?",
                    s->nnode, s->ntet, mesh->nnode, mesh->ntet);
  return s ? vtu_write(path, mesh, x, v, s->von_mises, s->strain, s->node_von_mises, s->node_strain)
           : vtu_write(path, mesh, x, v, NULL, NULL, NULL, NULL);
}

/* An upper bound of what cf_vtu_write writes: every %.15g at its widest (22 characters,
 * "-1.23456789012345e-308"), node ids at the digits of nnode. */
double cf_vtu_size_bound(const cfMesh* mesh, int velocity, int von_mises) {
  double nn = mesh->nnode, ne = mesh->ntet, id = 1;
  for (int k = mesh->nnode; k >= 10; k /= 10) id++;
  double line3 = 10 + 3 * 23.0;            /* one vector */
  double b = 1024                           /* the XML around the arrays */
             + nn * line3 * (velocity ? 3 : 2)
             + (von_mises ? ne * 33 + nn * 33 : 0)       /* cell and point von Mises */
             + (von_mises ? (ne + nn) * (10 + 6 * 23.0) : 0) /* cell and point strain */
             + ne * (10 + cf_mesh_npe(mesh) * (id + 1)) /* connectivity */
             + ne * 13 + ne / 16 * 10       /* offsets (at most 11 digits + blank), indent per 16 */
             + ne * 3 + ne / 32 * 11;       /* types */
  return b;
}

/* File names go into an XML attribute. */
static void xml_attr(FILE* f, const char* s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default: fputc(*s, f);
    }
  }
}

int cf_pvd_write(const char* path, int n, const char* const* files, const double* times) {
  if (!path || n < 0 || (n > 0 && (!files || !times)))
    return cf_error(CF_ERR_ARG, "cf_pvd_write: invalid argument");
  for (int i = 0; i < n; i++)
    if (!files[i]) return cf_error(CF_ERR_ARG, "%s: cf_pvd_write: file %d is NULL", path, i);
  char* tmp;
  FILE* f;
  int st = open_tmp(path, &tmp, &f);
  if (st < 0) return st;
  fprintf(f, "<?xml version=\"1.0\"?>\n"
             "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
             "  <Collection>\n");
  for (int i = 0; i < n; i++) {
    fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", times[i]);
    xml_attr(f, files[i]);
    fprintf(f, "\"/>\n");
  }
  fprintf(f, "  </Collection>\n</VTKFile>\n");
  return finish(f, tmp, path, 1);
}
