/* Statics refuses a part its supports do not hold, before anything is factored, naming the free
 * rigid-body modes (cf_model_free_rigid_modes: the six rigid modes projected onto the fixed DOFs),
 * the same way on every mesh (issue 17: a box without supports gave a 1e9 m linear solution,
 * the lug "stiffness matrix is singular"). */
#include <string.h>

#include "cf_test.h"
#include "cofem/cofem.h"

enum { NX = 4, NY = 2, NZ = 3 };
static const double LX = 2.0, LY = 0.5, LZ = 0.75;

/* node index of grid point (i, j, k) by position (the box generator's numbering is not assumed) */
static int node_at(const cfMesh* mesh, double x, double y, double z) {
  for (int n = 0; n < mesh->nnode; n++) {
    const double* p = mesh->X + 3 * n;
    if (fabs(p[0] - x) < 1e-9 && fabs(p[1] - y) < 1e-9 && fabs(p[2] - z) < 1e-9) return n;
  }
  return -1;
}

/* a model of the box with the nodes for which pick() is true fixed in dirs */
static cfModel* model_with(const cfMesh* mesh, int (*pick)(const double*), int dirs) {
  cfModelDef def = cf_default_model_def();
  def.E = 1e9, def.nu = 0.3, def.rho = 1000;
  cfModel* m = NULL;
  if (cf_model_create(mesh, &def, &m) < 0) return NULL;
  int* nodes = malloc(sizeof(int) * mesh->nnode);
  int c = 0;
  for (int n = 0; n < mesh->nnode && pick; n++)
    if (pick(mesh->X + 3 * n)) nodes[c++] = n;
  if (c) cf_model_fix_nodes(m, nodes, c, dirs);
  free(nodes);
  return m;
}

static int face_x0(const double* p) { return fabs(p[0]) < 1e-9; }
static int corner(const double* p) { return fabs(p[0]) + fabs(p[1]) + fabs(p[2]) < 1e-9; }
static int edge_z(const double* p) { return fabs(p[0] - LX) < 1e-9 && fabs(p[1] - LY) < 1e-9; }
static int edge_x(const double* p) { return fabs(p[1]) < 1e-9 && fabs(p[2]) < 1e-9; }

static void expect(const cfMesh* mesh, int (*pick)(const double*), int dirs, int nfree, const char* names) {
  cfModel* m = model_with(mesh, pick, dirs);
  CHECK(m != NULL);
  if (!m) return;
  char got[512];
  int k = cf_model_free_rigid_modes(m, got, sizeof got);
  CHECK(k == nfree);
  CHECK(strcmp(got, names) == 0);
  if (k != nfree || strcmp(got, names)) fprintf(stderr, "  want %d '%s', got %d '%s'\n", nfree, names, k, got);
  /* statics refuses it with the names, before factoring */
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  double* f = calloc(m->ndof, sizeof(double));
  for (int i = 0; i < m->ndof; i += 3) f[i] = 1.0;
  int st = cf_linear_static(m, d, f);
  if (nfree) {
    CHECK(st == CF_ERR_SOLVER && strstr(cf_last_error(), names) && strstr(cf_last_error(), "not held"));
    cfStaticOptions o = cf_default_static_options();
    st = cf_static_solve(m, d, f, &o, NULL, NULL);
    CHECK(st == CF_ERR_SOLVER && strstr(cf_last_error(), names));
  } else {
    CHECK(st == CF_OK);
  }
  free(f);
  cf_data_free(d);
  cf_model_free(m);
}

int main(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(NX, NY, NZ, LX, LY, LZ, &mesh));
  CHECK(node_at(&mesh, 0, 0, 0) >= 0);
  expect(&mesh, NULL, 0, 6, "translation along x, translation along y, translation along z, rotation about x, "
                            "rotation about y, rotation about z");
  expect(&mesh, face_x0, 7, 0, "");
  /* a face held only normal to it slides in its plane and turns about its normal */
  expect(&mesh, face_x0, 1, 3, "translation along y, translation along z, rotation about x");
  /* a face held in y and z: free along x, and tilting about y and z (its nodes slide along x) */
  expect(&mesh, face_x0, 6, 3, "translation along x, rotation about y, rotation about z");
  /* one node: the rotations about it */
  expect(&mesh, corner, 7, 3, "rotation about x, rotation about y, rotation about z");
  /* an edge along z away from the origin and the centre: a hinge about it */
  expect(&mesh, edge_z, 7, 1, "rotation about z");
  /* an edge along x held in y only: translation along x and z, rotation about x (about the edge)
   * and about y (through the edge's centre) */
  expect(&mesh, edge_x, 2, 4, "translation along x, translation along z, rotation about x, rotation about y");
  cf_mesh_free(&mesh);
  TEST_END();
}
