/* Mesh reading (.msh 2.2 / 4.1 ASCII / 4.1 binary, .inp), boundary extraction, quality, and the
 * .inp / .vtu / .pvd writers. Meshes are generated here: a unit cube split into tets written by
 * hand in every format, the same box meshed by the gmsh CLI when it is installed, and a
 * million-tet structured grid for the boundary extraction. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/mesh.h"
#include "cofem/output.h"

static char g_dir[256];

static const char* tmp_path(const char* name) {
  static char buf[8][512];
  static int k = 0;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- geometry checks ----------------------------------------------------------------------- */

/* Divergence theorem: V = (1/3) sum over boundary faces of centroid . (area normal). Only holds
 * when the boundary is closed and every face points outward. */
static double boundary_volume(const cfMesh* m) {
  double v = 0;
  for (int i = 0; i < m->ntri; i++) {
    const double* a = m->X + 3 * m->tri[3 * i];
    const double* b = m->X + 3 * m->tri[3 * i + 1];
    const double* c = m->X + 3 * m->tri[3 * i + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {0.5 * (u[1] * w[2] - u[2] * w[1]), 0.5 * (u[2] * w[0] - u[0] * w[2]),
                   0.5 * (u[0] * w[1] - u[1] * w[0])};
    for (int k = 0; k < 3; k++) v += (a[k] + b[k] + c[k]) / 3.0 * n[k] / 3.0;
  }
  return v;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* Closed, consistently oriented surface: every directed edge (a,b) has exactly one (b,a). */
static int boundary_closed(const cfMesh* m) {
  size_t ne = 3 * (size_t)m->ntri;
  uint64_t* e = malloc((ne ? ne : 1) * sizeof *e);
  if (!e) return 0;
  for (int i = 0; i < m->ntri; i++)
    for (int k = 0; k < 3; k++) {
      uint64_t a = (uint32_t)m->tri[3 * i + k], b = (uint32_t)m->tri[3 * i + (k + 1) % 3];
      e[3 * (size_t)i + k] = a << 32 | b;
    }
  qsort(e, ne, sizeof *e, cmp_u64);
  int ok = 1;
  for (size_t i = 0; i < ne && ok; i++) {
    if (i > 0 && e[i] == e[i - 1]) ok = 0; /* the same directed edge twice */
    uint64_t rev = (e[i] & 0xffffffffu) << 32 | e[i] >> 32;
    if (!bsearch(&rev, e, ne, sizeof *e, cmp_u64)) ok = 0;
  }
  free(e);
  /* and each face belongs to its element */
  for (int i = 0; i < m->ntri && ok; i++)
    for (int k = 0; k < 3; k++) {
      const int* t = m->tet + 4 * m->tri_tet[i];
      int v = m->tri[3 * i + k];
      if (t[0] != v && t[1] != v && t[2] != v && t[3] != v) ok = 0;
    }
  return ok;
}

static double mesh_volume(const cfMesh* m) {
  double v = 0;
  for (int e = 0; e < m->ntet; e++) v += cf_tet_volume(m, e);
  return v;
}

static int nset_count(const cfMesh* m, const char* name) {
  const cfNodeSet* s = cf_mesh_find_nset(m, name);
  return s ? s->count : -1;
}

static int eset_count(const cfMesh* m, const char* name) {
  const cfElemSet* s = cf_mesh_find_eset(m, name);
  return s ? s->count : -1;
}

static int sets_sorted(const cfMesh* m) {
  for (int i = 0; i < m->nnset; i++)
    for (int j = 0; j < m->nsets[i].count; j++) {
      int v = m->nsets[i].nodes[j];
      if (v < 0 || v >= m->nnode || (j > 0 && v <= m->nsets[i].nodes[j - 1])) return 0;
    }
  for (int i = 0; i < m->neset; i++)
    for (int j = 0; j < m->esets[i].count; j++) {
      int v = m->esets[i].elems[j];
      if (v < 0 || v >= m->ntet || (j > 0 && v <= m->esets[i].elems[j - 1])) return 0;
    }
  return 1;
}

/* ---- the unit cube, by hand ---------------------------------------------------------------- */

/* corner c: x = bit 0, y = bit 1, z = bit 2 */
static const int kKuhn[6][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7},
                                {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
static const int kFive[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 2, 7}, {5, 1, 4, 7}, {6, 2, 4, 7}};

static void corner(int c, double* x) {
  x[0] = c & 1;
  x[1] = (c >> 1) & 1;
  x[2] = (c >> 2) & 1;
}

/* Put a tet's corners in positive order. */
static void orient(int* t) {
  double a[3], b[3], c[3], d[3];
  corner(t[0], a);
  corner(t[1], b);
  corner(t[2], c);
  corner(t[3], d);
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
  double det = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
               u[2] * (v[0] * w[1] - v[1] * w[0]);
  if (det < 0) {
    int s = t[2];
    t[2] = t[3];
    t[3] = s;
  }
}

/* node id of corner c in the .msh files: sparse on purpose */
static int nid(int c) { return 10 * (c + 1) + 3; }

typedef struct Cube {
  int ntet;
  int tet[6][4];
} Cube;

static Cube make_cube(int five) {
  Cube c;
  c.ntet = five ? 5 : 6;
  for (int e = 0; e < c.ntet; e++) {
    memcpy(c.tet[e], five ? kFive[e] : kKuhn[e], sizeof c.tet[e]);
    orient(c.tet[e]);
  }
  return c;
}

/* bottom face z = 0: corners 0,1,2,3 as two triangles; corner 7 is a physical point */
static const int kBottom[2][3] = {{0, 2, 1}, {1, 2, 3}};

static void write_msh22(const char* path, const Cube* c) {
  FILE* f = fopen(path, "w");
  if (!f) {
    CHECK(f != NULL);
    return;
  }
  fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n");
  fprintf(f, "$PhysicalNames\n3\n2 2 \"bottom\"\n3 1 \"body\"\n3 4 \"also body\"\n"
             "$EndPhysicalNames\n");
  fprintf(f, "$Nodes\n8\n");
  for (int k = 7; k >= 0; k--) { /* any order */
    double x[3];
    corner(k, x);
    fprintf(f, "%d %g %g %g\n", nid(k), x[0], x[1], x[2]);
  }
  fprintf(f, "$EndNodes\n$Elements\n%d\n", 4 + 2 * c->ntet);
  int id = 100;
  fprintf(f, "%d 15 2 5 7 %d\n", id++, nid(7));              /* point, unnamed group 5 */
  fprintf(f, "%d 1 2 0 3 %d %d\n", id++, nid(0), nid(1));     /* line outside any group */
  for (int t = 0; t < 2; t++)
    fprintf(f, "%d 2 2 2 1 %d %d %d\n", id++, nid(kBottom[t][0]), nid(kBottom[t][1]),
            nid(kBottom[t][2]));
  /* gmsh 2.2 repeats an element once per physical group, with a new id */
  for (int e = 0; e < c->ntet; e++)
    for (int g = 0; g < 2; g++)
      fprintf(f, "%d 4 2 %d 1 %d %d %d %d\n", id++, g ? 4 : 1, nid(c->tet[e][0]),
              nid(c->tet[e][1]), nid(c->tet[e][2]), nid(c->tet[e][3]));
  fprintf(f, "$EndElements\n");
  fclose(f);
}

static void write_msh41_ascii(const char* path, const Cube* c) {
  FILE* f = fopen(path, "w");
  if (!f) {
    CHECK(f != NULL);
    return;
  }
  fprintf(f, "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n");
  fprintf(f, "$PhysicalNames\n2\n2 2 \"bottom\"\n3 1 \"body\"\n$EndPhysicalNames\n");
  fprintf(f, "$Comments\nanything $Nodes here is skipped\n$EndComments\n");
  fprintf(f, "$Entities\n1 0 1 1\n");
  fprintf(f, "7 1 1 1 1 5\n");
  fprintf(f, "3 0 0 0 1 1 0 1 2 0\n");
  fprintf(f, "9 0 0 0 1 1 1 2 1 4 1 3\n");
  fprintf(f, "$EndEntities\n");
  fprintf(f, "$Nodes\n1 8 %d %d\n3 9 0 8\n", nid(0), nid(7));
  for (int k = 0; k < 8; k++) fprintf(f, "%d\n", nid(k));
  for (int k = 0; k < 8; k++) {
    double x[3];
    corner(k, x);
    fprintf(f, "%.17g %.17g %.17g\n", x[0], x[1], x[2]);
  }
  fprintf(f, "$EndNodes\n$Elements\n3 %d 1 %d\n", 3 + c->ntet, 3 + c->ntet);
  fprintf(f, "0 7 15 1\n1 %d\n", nid(7));
  fprintf(f, "2 3 2 2\n");
  for (int t = 0; t < 2; t++)
    fprintf(f, "%d %d %d %d\n", 2 + t, nid(kBottom[t][0]), nid(kBottom[t][1]), nid(kBottom[t][2]));
  fprintf(f, "3 9 4 %d\n", c->ntet);
  for (int e = 0; e < c->ntet; e++)
    fprintf(f, "%d %d %d %d %d\n", 4 + e, nid(c->tet[e][0]), nid(c->tet[e][1]), nid(c->tet[e][2]),
            nid(c->tet[e][3]));
  fprintf(f, "$EndElements\n");
  fclose(f);
}

static void wi(FILE* f, int32_t v) { fwrite(&v, 4, 1, f); }
static void wz(FILE* f, uint64_t v) { fwrite(&v, 8, 1, f); }
static void wd(FILE* f, double v) { fwrite(&v, 8, 1, f); }

static void write_msh41_binary(const char* path, const Cube* c) {
  FILE* f = fopen(path, "wb");
  if (!f) {
    CHECK(f != NULL);
    return;
  }
  fprintf(f, "$MeshFormat\n4.1 1 8\n");
  wi(f, 1);
  fprintf(f, "\n$EndMeshFormat\n");
  fprintf(f, "$PhysicalNames\n2\n2 2 \"bottom\"\n3 1 \"body\"\n$EndPhysicalNames\n");
  fprintf(f, "$Entities\n");
  wz(f, 1), wz(f, 0), wz(f, 1), wz(f, 1);
  wi(f, 7), wd(f, 1), wd(f, 1), wd(f, 1), wz(f, 1), wi(f, 5);
  wi(f, 3);
  for (int k = 0; k < 6; k++) wd(f, k >= 3 && k != 5);
  wz(f, 1), wi(f, 2), wz(f, 0);
  wi(f, 9);
  for (int k = 0; k < 6; k++) wd(f, k >= 3);
  wz(f, 2), wi(f, 1), wi(f, 4), wz(f, 1), wi(f, 3);
  fprintf(f, "\n$EndEntities\n$Nodes\n");
  wz(f, 1), wz(f, 8), wz(f, (uint64_t)nid(0)), wz(f, (uint64_t)nid(7));
  wi(f, 3), wi(f, 9), wi(f, 0), wz(f, 8);
  for (int k = 0; k < 8; k++) wz(f, (uint64_t)nid(k));
  for (int k = 0; k < 8; k++) {
    double x[3];
    corner(k, x);
    wd(f, x[0]), wd(f, x[1]), wd(f, x[2]);
  }
  fprintf(f, "\n$EndNodes\n$Elements\n");
  wz(f, 3), wz(f, (uint64_t)(3 + c->ntet)), wz(f, 1), wz(f, (uint64_t)(3 + c->ntet));
  wi(f, 0), wi(f, 7), wi(f, 15), wz(f, 1);
  wz(f, 1), wz(f, (uint64_t)nid(7));
  wi(f, 2), wi(f, 3), wi(f, 2), wz(f, 2);
  for (int t = 0; t < 2; t++) {
    wz(f, (uint64_t)(2 + t));
    for (int k = 0; k < 3; k++) wz(f, (uint64_t)nid(kBottom[t][k]));
  }
  wi(f, 3), wi(f, 9), wi(f, 4), wz(f, (uint64_t)c->ntet);
  for (int e = 0; e < c->ntet; e++) {
    wz(f, (uint64_t)(4 + e));
    for (int k = 0; k < 4; k++) wz(f, (uint64_t)nid(c->tet[e][k]));
  }
  fprintf(f, "\n$EndElements\n");
  fclose(f);
}

/* ids 1..8 so that GENERATE can describe the sets */
static void write_inp(const char* path, const Cube* c) {
  FILE* f = fopen(path, "w");
  if (!f) {
    CHECK(f != NULL);
    return;
  }
  fprintf(f, "** unit cube\n*Heading\n cube for test_mesh_io\n*node, nset=all nodes\n");
  for (int k = 0; k < 8; k++) {
    double x[3];
    corner(k, x);
    fprintf(f, "%d, %g, %g, %g\n", k + 1, x[0], x[1], x[2]);
  }
  fprintf(f, "**\n*MATERIAL, NAME=steel\n*ELASTIC\n 210e9, 0.3\n");
  fprintf(f, "*Element, Type=c3d4,\n   ELSET=body\n");
  for (int e = 0; e < c->ntet; e++) {
    if (e == 1) /* a continuation line */
      fprintf(f, "%d, %d, %d,\n  %d, %d\n", 20 + e, c->tet[e][0] + 1, c->tet[e][1] + 1,
              c->tet[e][2] + 1, c->tet[e][3] + 1);
    else
      fprintf(f, "%d, %d, %d, %d, %d\n", 20 + e, c->tet[e][0] + 1, c->tet[e][1] + 1,
              c->tet[e][2] + 1, c->tet[e][3] + 1);
  }
  fprintf(f, "*NSET, NSET=bottom, GENERATE\n 1, 4\n");
  fprintf(f, "*nset,nset=odd,generate\n1, 7, 2\n");
  fprintf(f, "*NSET, NSET=phys5\n8,\n");
  fprintf(f, "*NSET, NSET=both\nBOTTOM, phys5,\n 5\n");
  fprintf(f, "*ELSET, ELSET=first, GENERATE\n20, 22\n*ELSET, ELSET=mixed\nfirst, 24\n");
  /* gmsh ends every set line with a comma: one long continued line, repeats allowed */
  fprintf(f, "*NSET, NSET=long\n");
  for (int i = 0; i < 20; i++) fprintf(f, "1, 2, 3, 4, 5, 6, 7, 8, \n");
  fprintf(f, "*STEP\n*STATIC\n*BOUNDARY\nbottom, 1, 3\n*END STEP\n");
  fclose(f);
}

static void check_cube(const char* path, int ntet, int inp) {
  cfMesh m;
  int st = cf_mesh_read(path, &m);
  CHECK_OK(st);
  if (st < 0) return;
  printf("%s: %d nodes, %d tets, %d boundary faces, %d node sets, %d element sets\n", path,
         m.nnode, m.ntet, m.ntri, m.nnset, m.neset);
  CHECK(m.nnode == 8);
  CHECK(m.ntet == ntet);
  CHECK_CLOSE(mesh_volume(&m), 1.0, 1e-14, 0);
  CHECK(m.ntri == 12);
  CHECK(boundary_closed(&m));
  CHECK_CLOSE(boundary_volume(&m), 1.0, 1e-14, 0);
  CHECK(sets_sorted(&m));
  CHECK(strcmp(m.source, path) == 0);
  CHECK(nset_count(&m, "bottom") == 4);
  CHECK(nset_count(&m, "phys5") == 1);
  CHECK(eset_count(&m, "body") == ntet);
  /* the ids of the file survive */
  const cfNodeSet* p5 = cf_mesh_find_nset(&m, "phys5");
  if (p5 && p5->count == 1) CHECK(m.node_id[p5->nodes[0]] == (inp ? 8 : nid(7)));
  for (int e = 0; e < m.ntet; e++) CHECK(cf_tet_volume(&m, e) > 0);
  if (inp) {
    CHECK(nset_count(&m, "all nodes") == 8);
    CHECK(nset_count(&m, "odd") == 4);
    CHECK(nset_count(&m, "both") == 6);
    CHECK(eset_count(&m, "first") == 3);
    CHECK(eset_count(&m, "mixed") == 4);
    CHECK(nset_count(&m, "long") == 8);
    const cfNodeSet* odd = cf_mesh_find_nset(&m, "odd");
    for (int j = 0; odd && j < odd->count; j++) CHECK(m.node_id[odd->nodes[j]] % 2 == 1);
    CHECK(m.elem_id[1] == 21); /* the continued line */
  } else {
    CHECK(nset_count(&m, "body") == 8);
    if (strstr(path, "22")) CHECK(nset_count(&m, "also body") == 8);
    if (strstr(path, "22")) CHECK(eset_count(&m, "also body") == ntet);
  }
  cf_mesh_free(&m);
  CHECK(m.X == NULL && m.nnode == 0 && m.nsets == NULL);
}

/* ---- gmsh ---------------------------------------------------------------------------------- */

static int g_gmsh_missing = 0;

static void test_gmsh(void) {
  if (access("/usr/bin/gmsh", X_OK) != 0) {
    printf("SKIP: /usr/bin/gmsh not found, not testing gmsh-written files (exit 77 if all else passes)\n");
    g_gmsh_missing = 1;
    return;
  }
  FILE* f = fopen(tmp_path("box.geo"), "w");
  if (!f) {
    CHECK(f != NULL);
    return;
  }
  fprintf(f, "SetFactory(\"OpenCASCADE\");\nBox(1) = {0, 0, 0, 2, 1, 0.5};\n"
             "Physical Volume(\"solid\") = {1};\nPhysical Volume(7) = {1};\n"
             "Physical Surface(\"fixed\") = {1};\nPhysical Surface(3) = {2};\n"
             "Physical Curve(\"edge\") = {1};\nPhysical Point(\"corner\") = {1};\n"
             "Mesh.CharacteristicLengthMax = 0.4;\n");
  fclose(f);
  static const char* fmt[3] = {"-format msh22", "-format msh41", "-format msh41 -bin"};
  static const char* out[3] = {"g22.msh", "g41.msh", "g41b.msh"};
  cfMesh m[3];
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/gmsh %s -3 %s -o %s > %s 2>&1", tmp_path("box.geo"), fmt[i],
             tmp_path(out[i]), tmp_path("gmsh.log"));
    int rc = system(cmd);
    CHECK(rc == 0);
    int st = cf_mesh_read(tmp_path(out[i]), &m[i]);
    CHECK_OK(st);
    if (rc != 0 || st < 0) ok = 0;
  }
  if (!ok) {
    for (int i = 0; i < 3; i++) cf_mesh_free(&m[i]);
    return;
  }
  for (int i = 0; i < 3; i++) {
    printf("gmsh %s: %d nodes, %d tets, %d boundary faces, sets:", fmt[i], m[i].nnode, m[i].ntet,
           m[i].ntri);
    for (int s = 0; s < m[i].nnset; s++) printf(" %s(%d)", m[i].nsets[s].name, m[i].nsets[s].count);
    printf("\n");
    CHECK(m[i].nnode == m[0].nnode);
    CHECK(m[i].ntet == m[0].ntet);
    CHECK(m[i].ntri == m[0].ntri);
    CHECK(m[i].nnset == m[0].nnset && m[i].neset == m[0].neset);
    CHECK_CLOSE(mesh_volume(&m[i]), 1.0, 1e-12, 0);
    CHECK_CLOSE(boundary_volume(&m[i]), 1.0, 1e-12, 0);
    CHECK(boundary_closed(&m[i]));
    CHECK(sets_sorted(&m[i]));
    for (int s = 0; s < m[i].nnset && s < m[0].nnset; s++) {
      CHECK(strcmp(m[i].nsets[s].name, m[0].nsets[s].name) == 0);
      CHECK(m[i].nsets[s].count == m[0].nsets[s].count);
    }
    CHECK(nset_count(&m[i], "solid") == m[i].nnode);
    CHECK(nset_count(&m[i], "phys7") == m[i].nnode);
    CHECK(eset_count(&m[i], "solid") == m[i].ntet);
    CHECK(eset_count(&m[i], "phys7") == m[i].ntet);
    CHECK(nset_count(&m[i], "corner") == 1);
    CHECK(nset_count(&m[i], "edge") >= 2);
    CHECK(nset_count(&m[i], "fixed") >= 3);
    CHECK(nset_count(&m[i], "phys3") >= 3);
    /* surface 1 of the OCC box is x = 0 */
    const cfNodeSet* fx = cf_mesh_find_nset(&m[i], "fixed");
    for (int j = 0; fx && j < fx->count; j++) CHECK(m[i].X[3 * fx->nodes[j]] == 0.0);
  }
  /* the three files hold the same mesh (ASCII coordinates carry 16 digits, binary 17) */
  for (int i = 1; i < 3; i++)
    if (m[i].nnode == m[0].nnode && m[i].ntet == m[0].ntet) {
      int same = 1;
      for (int k = 0; k < 3 * m[0].nnode; k++) same &= fabs(m[i].X[k] - m[0].X[k]) < 1e-14;
      for (int k = 0; k < m[0].nnode; k++) same &= m[i].node_id[k] == m[0].node_id[k];
      for (int k = 0; k < 4 * m[0].ntet; k++) same &= m[i].tet[k] == m[0].tet[k];
      CHECK(same);
    }
  for (int i = 0; i < 3; i++) cf_mesh_free(&m[i]);
}

/* ---- writers ------------------------------------------------------------------------------- */

static void test_write_inp(void) {
  cfMesh m, r;
  CHECK_OK(cf_mesh_read(tmp_path("cube22.msh"), &m));
  FILE* f = fopen(tmp_path("rt.inp"), "w");
  CHECK(f != NULL);
  if (f) {
    CHECK_OK(cf_mesh_write_inp(&m, f));
    fclose(f);
  }
  int st = cf_mesh_read(tmp_path("rt.inp"), &r);
  CHECK_OK(st);
  if (st >= 0) {
    CHECK(r.nnode == m.nnode && r.ntet == m.ntet && r.ntri == m.ntri);
    CHECK_CLOSE(mesh_volume(&r), mesh_volume(&m), 1e-15, 0);
    CHECK(nset_count(&r, "BOTTOM") == 4);
    CHECK(nset_count(&r, "PHYS5") == 1);
    CHECK(nset_count(&r, "ALSO_BODY") == 8);
    CHECK(eset_count(&r, "BODY") == m.ntet);
    CHECK(eset_count(&r, "EALL") == m.ntet);
    int same = r.nnode == m.nnode;
    for (int i = 0; same && i < m.nnode; i++) same = r.node_id[i] == m.node_id[i];
    for (int k = 0; same && k < 3 * m.nnode; k++) same = r.X[k] == m.X[k];
    for (int e = 0; same && e < m.ntet; e++) same = r.elem_id[e] == m.elem_id[e];
    CHECK(same);
  }
  cf_mesh_free(&r);
  /* awkward coordinates: CalculiX reads at most 20 characters of a field; every field fits and
   * reads back to 14 significant digits at least (exactly where the shortest text fits) */
  for (int k = 0; k < 3 * m.nnode; k++) m.X[k] = (m.X[k] - 0.123456789012345) / 3.0e3;
  f = fopen(tmp_path("rt2.inp"), "w");
  CHECK(f != NULL);
  if (f) {
    CHECK_OK(cf_mesh_write_inp(&m, f));
    fclose(f);
  }
  f = fopen(tmp_path("rt2.inp"), "r");
  int widest = 0;
  char line[512];
  while (f && fgets(line, sizeof line, f) && strncmp(line, "*ELEMENT", 8)) {
    if (line[0] == '*') continue;
    for (char* tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n")) {
      while (*tok == ' ') tok++;
      widest = (int)strlen(tok) > widest ? (int)strlen(tok) : widest;
    }
  }
  if (f) fclose(f);
  st = cf_mesh_read(tmp_path("rt2.inp"), &r);
  CHECK_OK(st);
  double worst = 0;
  for (int k = 0; st >= 0 && k < 3 * m.nnode; k++) worst = fmax(worst, fabs(r.X[k] - m.X[k]) / fabs(m.X[k]));
  printf("inp writer: widest coordinate field %d characters, worst relative round-trip error %.1e\n", widest, worst);
  CHECK(widest <= 20);
  CHECK(worst < 1e-13);
  if (st >= 0) cf_mesh_free(&r);
  cf_mesh_free(&m);
}

static int file_has(const char* path, const char* s) {
  char* buf;
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, f);
  buf[got] = '\0';
  fclose(f);
  int r = strstr(buf, s) != NULL;
  free(buf);
  return r;
}

static void test_vtu(void) {
  cfMesh m;
  if (cf_mesh_read(tmp_path("cube41.msh"), &m) < 0) {
    CHECK(0);
    return;
  }
  double x[24], v[24], vm[6];
  for (int i = 0; i < 3 * m.nnode; i++) x[i] = m.X[i] + 0.25, v[i] = -1.5;
  for (int e = 0; e < m.ntet; e++) vm[e] = 1e6 * (e + 1);
  const char* p = tmp_path("frame_0001.vtu");
  CHECK_OK(cf_vtu_write(p, &m, x, v, vm));
  char tmp[600];
  snprintf(tmp, sizeof tmp, "%s.tmp", p);
  CHECK(access(p, F_OK) == 0);
  CHECK(access(tmp, F_OK) != 0);
  CHECK(file_has(p, "NumberOfPoints=\"8\" NumberOfCells=\"5\""));
  CHECK(file_has(p, "Name=\"displacement\""));
  CHECK(file_has(p, "0.25 0.25 0.25"));
  CHECK(file_has(p, "Name=\"velocity\""));
  CHECK(file_has(p, "Name=\"von_mises\""));
  CHECK(file_has(p, "5000000"));
  CHECK(file_has(p, "4 8 12 16 20"));
  CHECK(file_has(p, "</VTKFile>"));
  /* without the optional fields */
  const char* p2 = tmp_path("frame_0002.vtu");
  CHECK_OK(cf_vtu_write(p2, &m, m.X, NULL, NULL));
  CHECK(!file_has(p2, "velocity") && !file_has(p2, "von_mises"));
  CHECK(file_has(p2, "0 0 0\n"));
  /* an unwritable place: an error, and no .tmp left behind */
  int st = cf_vtu_write("/nonexistent-dir/x.vtu", &m, x, NULL, NULL);
  CHECK(st == CF_ERR_IO);
  CHECK(strstr(cf_last_error(), "/nonexistent-dir/x.vtu") != NULL);
  CHECK(cf_vtu_write(p, NULL, x, NULL, NULL) == CF_ERR_ARG);
  const char* files[2] = {"frame_0001.vtu", "a&b<c>.vtu"};
  double times[2] = {0.0, 0.125};
  const char* pvd = tmp_path("series.pvd");
  CHECK_OK(cf_pvd_write(pvd, 2, files, times));
  CHECK(file_has(pvd, "type=\"Collection\""));
  CHECK(file_has(pvd, "timestep=\"0.125\""));
  CHECK(file_has(pvd, "file=\"frame_0001.vtu\""));
  CHECK(file_has(pvd, "file=\"a&amp;b&lt;c&gt;.vtu\""));
  snprintf(tmp, sizeof tmp, "%s.tmp", pvd);
  CHECK(access(tmp, F_OK) != 0);
  CHECK(cf_pvd_write("/nonexistent-dir/s.pvd", 2, files, times) == CF_ERR_IO);
  cf_mesh_free(&m);
}

/* ---- quality, big meshes ------------------------------------------------------------------- */

static void test_quality(void) {
  double X[12] = {1, 1, 1, 1, -1, -1, -1, 1, -1, -1, -1, 1};
  int tet[4] = {0, 1, 2, 3}, nid4[4] = {1, 2, 3, 4}, eid = 1;
  cfMesh m;
  memset(&m, 0, sizeof m);
  m.nnode = 4;
  m.X = X;
  m.node_id = nid4;
  m.ntet = 1;
  m.tet = tet;
  m.elem_id = &eid;
  if (cf_tet_volume(&m, 0) < 0) tet[2] = 3, tet[3] = 2;
  CHECK_OK(cf_mesh_validate(&m));
  cfMeshQuality q;
  CHECK_OK(cf_mesh_quality(&m, &q));
  double edge = sqrt(8.0);
  CHECK_CLOSE(q.volume, edge * edge * edge / (6 * sqrt(2.0)), 1e-14, 1e-14);
  CHECK_CLOSE(q.max_aspect_ratio, 1.0, 1e-14, 0);
  CHECK_CLOSE(q.min_dihedral_deg, acos(1.0 / 3.0) * 180 / acos(-1.0), 1e-10, 0);
  CHECK_CLOSE(q.max_dihedral_deg, acos(1.0 / 3.0) * 180 / acos(-1.0), 1e-10, 0);
  CHECK(q.min_elem_volume == q.max_elem_volume);
  CHECK(q.bbox_min[0] == -1 && q.bbox_max[2] == 1);
  /* a flattened tet has a huge aspect ratio and a dihedral angle near 180 */
  X[11] = -0.999;
  X[2] = -0.999 + 1e-3;
  cfMeshQuality q2;
  CHECK_OK(cf_mesh_quality(&m, &q2));
  CHECK(q2.max_aspect_ratio > 50);
  CHECK(q2.max_dihedral_deg > 170);
}

/* n^3 cubes of 6 Kuhn tets (conforming, as all cubes split along the same diagonal). */
static void test_big_boundary(int n) {
  cfMesh m;
  memset(&m, 0, sizeof m);
  int n1 = n + 1;
  m.nnode = n1 * n1 * n1;
  m.ntet = 6 * n * n * n;
  m.X = malloc(sizeof(double) * 3 * (size_t)m.nnode);
  m.tet = malloc(sizeof(int) * 4 * (size_t)m.ntet);
  m.node_id = malloc(sizeof(int) * (size_t)m.nnode);
  m.elem_id = malloc(sizeof(int) * (size_t)m.ntet);
  snprintf(m.source, sizeof m.source, "grid %d^3", n);
  for (int k = 0, i = 0; k < n1; k++)
    for (int j = 0; j < n1; j++)
      for (int l = 0; l < n1; l++, i++) {
        m.X[3 * i] = l, m.X[3 * i + 1] = j, m.X[3 * i + 2] = k;
        m.node_id[i] = i + 1;
      }
  Cube c = make_cube(0);
  int e = 0;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int l = 0; l < n; l++)
        for (int t = 0; t < 6; t++, e++) {
          for (int a = 0; a < 4; a++) {
            int cc = c.tet[t][a];
            m.tet[4 * e + a] = (l + (cc & 1)) + n1 * ((j + ((cc >> 1) & 1)) + n1 * (k + (cc >> 2)));
          }
          m.elem_id[e] = e + 1;
        }
  double t0 = now();
  CHECK_OK(cf_mesh_validate(&m));
  double t1 = now();
  CHECK_OK(cf_mesh_extract_boundary(&m));
  double t2 = now();
  printf("grid %d^3: %d tets, validate %.3f s, boundary %.3f s, %d faces\n", n, m.ntet, t1 - t0,
         t2 - t1, m.ntri);
  CHECK(m.ntri == 12 * n * n);
  CHECK_CLOSE(boundary_volume(&m), (double)n * n * n, 1e-9, 1e-12);
  if (n <= 20) CHECK(boundary_closed(&m));
  CHECK(t2 - t1 < 60); /* catches a quadratic algorithm, not a slow machine */
  /* two copies of one element: the shared faces are seen from the same side */
  if (n <= 20) {
    memcpy(m.tet + 4, m.tet, 4 * sizeof(int));
    CHECK(cf_mesh_extract_boundary(&m) == CF_ERR_MESH);
    CHECK(strstr(cf_last_error(), "overlap") != NULL);
    printf("expected error: %s\n", cf_last_error());
  }
  cf_mesh_free(&m);
}

static void test_validate_api(void) {
  cfMesh m;
  memset(&m, 0, sizeof m);
  CHECK(cf_mesh_validate(&m) == CF_ERR_MESH);
  CHECK(cf_mesh_validate(NULL) == CF_ERR_ARG);
  CHECK(cf_mesh_read(NULL, &m) == CF_ERR_ARG);
  CHECK(cf_mesh_find_nset(&m, "x") == NULL);
  cf_mesh_free(&m);
  cf_mesh_free(NULL);
  /* extension match ignores case */
  CHECK_OK(cf_mesh_read(tmp_path("CUBE.INP"), &m));
  cf_mesh_free(&m);
}

static void cleanup(void) {
  if (getenv("COFEM_KEEP_TMP")) { /* for debugging a failure */
    printf("kept %s\n", g_dir);
    return;
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/cofem_mesh_io_XXXXXX");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  Cube six = make_cube(0), five = make_cube(1);
  write_msh22(tmp_path("cube22.msh"), &six);
  write_msh41_ascii(tmp_path("cube41.msh"), &five);
  write_msh41_binary(tmp_path("cube41b.msh"), &five);
  write_inp(tmp_path("cube.inp"), &six);
  write_inp(tmp_path("CUBE.INP"), &five);
  check_cube(tmp_path("cube22.msh"), 6, 0);
  check_cube(tmp_path("cube41.msh"), 5, 0);
  check_cube(tmp_path("cube41b.msh"), 5, 0);
  check_cube(tmp_path("cube.inp"), 6, 1);
  test_write_inp();
  test_vtu();
  test_quality();
  test_validate_api();
  test_big_boundary(12);
  test_big_boundary(56); /* 1,053,696 tets */
  test_gmsh();
  cleanup();
  /* a missing optional tool: counted as skipped by CTest (77), never as a pass; a failure of the
   * parts that ran still fails */
  if (g_gmsh_missing && cf_test_failures == 0) {
    printf("%d checks, 0 failed; gmsh part skipped\n", cf_test_checks);
    return 77;
  }
  TEST_END();
}
