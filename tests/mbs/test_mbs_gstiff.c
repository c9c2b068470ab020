/* Issue 30 item 2: geometric stiffening of modal bodies (host/reduce/reduce_geometric.c,
 * docs/craig-bampton.md "Geometric stiffening").
 *  1. One tetrahedron: K_G,e = V G^T S G against the analytic energy of a linear displacement field
 *     u = H X under a uniform stress sigma: u^T K_G u = V tr(H sigma H^T) (the work of the stress on
 *     the rotation/stretch of the field, second order); K_G's rows sum to zero (a translation stores
 *     no energy).
 *  2. Southwell's coefficient of the rotating cantilever (hub radius 0): w^2 = w0^2 + K_s W^2 with
 *     K_s = 1.1933 for the first flapping mode of a uniform Euler-Bernoulli beam (Southwell and Gough
 *     1921; Wright et al. 1982). The geometric stiffness of a mass-normalised mode phi under the
 *     centrifugal load of a unit rate about z is phi^T (Kg_xx + Kg_yy) phi = K_s: checked on the
 *     spin-up beam's coarse mesh (kane_beam_c, clamped, the first out-of-plane and in-plane bending
 *     modes, the second out-of-plane one: 6.4782); the ratio depends on the mode's shape, not on the
 *     locked tetrahedra's stiffness. Likewise a uniform axial body force (the frame's acceleration
 *     along the beam): 1.5709 / L for the first mode.
 *  3. The .cfred file carries the matrices (version 4, bit-exact round trip); a version 2 file (no
 *     Kg section) is still read; a modal body asked for stiffening without them is refused; the
 *     scene key "geometric_stiffening" is checked like its neighbours. */
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/cofem.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "fem/fem_element.h"

static double urand(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffff) / 65535.0 - 0.5;
}

static void test_one_tet(void) {
  unsigned seed = 7;
  double worst = 0, rowsum = 0;
  for (int trial = 0; trial < 20; trial++) {
    double X[12], Dm[9], Dminv[9], sigma[9], H[9];
    for (int k = 0; k < 12; k++) X[k] = urand(&seed);
    X[3] += 1, X[7] += 1, X[11] += 1; /* a well-shaped tetrahedron */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Dm[3 * i + j] = X[3 * (j + 1) + i] - X[i];
    double det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) +
                 Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
    Dminv[0] = (Dm[4] * Dm[8] - Dm[5] * Dm[7]) / det, Dminv[1] = (Dm[2] * Dm[7] - Dm[1] * Dm[8]) / det;
    Dminv[2] = (Dm[1] * Dm[5] - Dm[2] * Dm[4]) / det, Dminv[3] = (Dm[5] * Dm[6] - Dm[3] * Dm[8]) / det;
    Dminv[4] = (Dm[0] * Dm[8] - Dm[2] * Dm[6]) / det, Dminv[5] = (Dm[2] * Dm[3] - Dm[0] * Dm[5]) / det;
    Dminv[6] = (Dm[3] * Dm[7] - Dm[4] * Dm[6]) / det, Dminv[7] = (Dm[1] * Dm[6] - Dm[0] * Dm[7]) / det;
    Dminv[8] = (Dm[0] * Dm[4] - Dm[1] * Dm[3]) / det;
    double V = fabs(det) / 6;
    for (int i = 0; i < 3; i++)
      for (int j = i; j < 3; j++) sigma[3 * i + j] = sigma[3 * j + i] = 1e6 * urand(&seed);
    for (int k = 0; k < 9; k++) H[k] = urand(&seed);
    double Kg[144], u[12];
    cf_tet_geometric_stiffness(Dminv, V, sigma, Kg);
    for (int a = 0; a < 4; a++)
      for (int i = 0; i < 3; i++) u[3 * a + i] = H[3 * i] * X[3 * a] + H[3 * i + 1] * X[3 * a + 1] + H[3 * i + 2] * X[3 * a + 2];
    double e = 0, ref = 0;
    for (int r = 0; r < 12; r++)
      for (int c = 0; c < 12; c++) e += u[r] * Kg[12 * r + c] * u[c];
    for (int i = 0; i < 3; i++) /* tr(H sigma H^T) */
      for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++) ref += H[3 * i + l] * sigma[3 * l + k] * H[3 * i + k];
    ref *= V;
    worst = fmax(worst, fabs(e - ref) / (fabs(ref) + 1e-3 * V * 1e6));
    for (int r = 0; r < 12; r++) { /* translations: sum over the nodes of a column's component */
      double s = 0;
      for (int b = 0; b < 4; b++) s += Kg[12 * r + 3 * b + r % 3];
      rowsum = fmax(rowsum, fabs(s) / (V * 1e6));
    }
  }
  printf("one tetrahedron: energy of linear fields vs V tr(H sigma H^T): worst relative %.2e; row sums %.2e\n", worst, rowsum);
  CHECK(worst < 1e-11);  /* measured 1.5e-13 */
  CHECK(rowsum < 1e-10); /* measured 3.8e-13 */
}

/* the (skip+1)-th lowest mode of a clamped reduction whose tip (largest x) moves along axis `dir` */
static int mode_along(const cfReduction* r, const double* X, int dir, int skip) {
  int tip = 0;
  for (int p = 0; p < r->nnode; p++)
    if (X[3 * p] > X[3 * tip]) tip = p;
  int best = -1;
  for (int j = 0; j < r->n && best < 0; j++) {
    const double* b = r->basis + (size_t)j * r->ndof + 3 * tip;
    if (fabs(b[dir]) > 3 * (fabs(b[0]) + fabs(b[(dir % 2) + 1])) && skip-- == 0) best = j;
  }
  return best;
}

/* scene: kane_beam_c (linear tetrahedra) or kane_beam_o2_20 (quadratic: K_G summed over the 4
 * quadrature points of each element); bound: of the coefficients' relative error */
static void test_southwell(cfModalPart* part, const char* scene, double bound) {
  cfReduceOptions o = cf_default_reduce_options();
  o.nmodes = 6;
  o.geometric = 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/scenes/mbs/compare/%s.json", COFEM_SOURCE_DIR, scene);
  printf("%s:\n", scene);
  CHECK_OK(cf_modal_part_load(path, NULL, 0, CF_PART_SUPPORTS_CLAMP, &o, NULL, part));
  const cfReduction* r = &part->red;
  CHECK(r->nkg == CF_REDUCTION_NKG && r->Kg);
  if (!r->Kg) return;
  const int n = r->n;
  const char* name[3] = {"out-of-plane (flapping, z)", "in-plane (lead-lag, y)", "second flapping"};
  /* int T phi'^2 / int m phi^2 with T = m W^2 (L^2 - x^2) / 2 and the Euler-Bernoulli cantilever's mode
   * shapes (beta L = 1.8751, 4.6941), integrated numerically (docs/craig-bampton.md) */
  const double southwell[3] = {1.1933, 1.1933, 6.4782};
  for (int k = 0; k < 3; k++) {
    int j = mode_along(r, part->scene.mesh.X, k == 1 ? 1 : 2, k == 2);
    CHECK(j >= 0);
    if (j < 0) continue;
    /* unit rate about z: lambda_xx = lambda_yy = W^2 = 1, the rest 0 (gstiff_lambda in mbs_modal.c) */
    double ks = r->Kg[(size_t)(0 * n + j) * n + j] + r->Kg[((size_t)4 * n + j) * n + j];
    printf("Southwell coefficient, mode %d (%.3f Hz) %s: %.4f (Euler-Bernoulli %.4f)\n", j + 1,
           cf_reduction_freq_hz(r, j), name[k], ks, southwell[k]);
    CHECK(fabs(ks / southwell[k] - 1) < bound);
  }
  /* the axial load case: a body force toward the tip (lambda_x > 0; the frame accelerating toward the
   * root) pulls the clamped beam and stiffens its bending modes (the opposite compresses it): with
   * T = m (L - x), int T phi'^2 / int m phi^2 = 1.5709 / L for the first cantilever mode (the same
   * integral), L = 10 m */
  int j = mode_along(r, part->scene.mesh.X, 2, 0);
  if (j >= 0) {
    double kx = r->Kg[((size_t)9 * n + j) * n + j];
    printf("first flapping mode, unit axial body force: %.4f (Euler-Bernoulli %.4f)\n", kx, 0.15709);
    CHECK(fabs(kx / 0.15709 - 1) < bound);
  }
}


static void test_file(const cfModalPart* part) {
  const cfReduction* r = &part->red;
  char f3[64], f2[64];
  snprintf(f3, sizeof f3, "/tmp/cofem_gstiff_%d.cfred", (int)getpid());
  snprintf(f2, sizeof f2, "/tmp/cofem_gstiff_%d_v2.cfred", (int)getpid());
  CHECK_OK(cf_reduction_write(r, f3));
  cfReduction back;
  CHECK_OK(cf_reduction_read(f3, &back));
  CHECK(back.nkg == r->nkg && back.Kg && !memcmp(back.Kg, r->Kg, sizeof(double) * r->nkg * r->n * r->n));
  CHECK(cf_reduction_file_version(f3) == 4);
  cf_reduction_free(&back);
  /* without the section the file is version 2, as before the geometric stiffness (and read so) */
  cfReduction nokg = *r;
  nokg.Kg = NULL, nokg.nkg = 0;
  CHECK_OK(cf_reduction_write(&nokg, f2));
  {
    CHECK(cf_reduction_file_version(f2) == 2);
    CHECK_OK(cf_reduction_read(f2, &back));
    CHECK(back.nkg == 0 && !back.Kg && back.n == r->n);
    /* a modal body asked for stiffening on it is refused, naming what is missing */
    static cfMbsDef defs;
    cfMbsDef* def = &defs;
    cf_mbs_def_init(def);
    cfMbsBodyDef b = cf_mbs_default_body_def();
    snprintf(b.name, sizeof b.name, "beam");
    cfMbsModalDef md = cf_mbs_default_modal_def();
    md.red = &back, md.X = part->scene.mesh.X, md.geometric_stiffening = 1;
    int st = cf_mbs_add_modal_body(def, &b, &md);
    printf("stiffening without Kg: %s\n", cf_last_error());
    CHECK(st < 0 && strstr(cf_last_error(), "geometric stiffness"));
    cf_clear_error();
    cf_mbs_def_free(def);
    cf_reduction_free(&back);
  }
  remove(f2);
  remove(f3);
}

static void test_scene_key(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/scenes/mbs/compare/spinup_beam.json", COFEM_SOURCE_DIR);
  const char* bad[3] = {"\"formulation\": \"modal\", \"supports\": \"clamp\", \"modes\": 2, \"geometric_stiffening\": 1",
                        "\"formulation\": \"corotational\", \"geometric_stiffening\": true",
                        "\"formulation\": \"modal\", \"modes\": 2, \"geometric_stiffening\": true"};
  const char* want[3] = {"\"geometric_stiffening\" must be true or false", "\"geometric_stiffening\" goes with",
                         "neither supported nor has an interface"};
  for (int k = 0; k < 3; k++) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"bodies\": [{\"name\": \"hub\", \"mass\": 10, \"inertia\": [1, 1, 1]}, {\"name\": \"beam\", \"flexible\": "
             "{\"scene\": \"kane_beam_c.json\", %s}}], \"joints\": [{\"name\": \"weld\", \"type\": \"fixed\", \"body1\": "
             "\"hub\", \"body2\": \"beam\"}], \"time\": {\"dt\": 0.01, \"end\": 0.1}}", bad[k]);
    if (k == 2) { /* free, no interface: nothing holds the part for the load cases */
      char* p = strstr(json, "\"joints\"");
      snprintf(p, 64, "\"time\": {\"dt\": 0.01, \"end\": 0.1}}");
    }
    cfMbsScene s;
    int st = cf_mbs_scene_parse(json, path, &s);
    printf("bad key %d: %s\n", k, st < 0 ? cf_last_error() : "(accepted)");
    CHECK(st < 0 && strstr(cf_last_error(), want[k]));
    cf_clear_error();
    if (st >= 0) cf_mbs_scene_free(&s);
  }
}

int main(void) {
  test_one_tet();
  static cfModalPart part;
  /* linear: measured +1.2%, +1.4%, +1.2%, axial +0.9% (the coarse mesh's mode shapes) */
  test_southwell(&part, "kane_beam_c", 0.04);
  if (part.red.Kg) test_file(&part);
  cf_modal_part_free(&part);
  /* quadratic (K_G over the 4 quadrature points): measured +2.0%, +2.4%, +1.8%, axial +1.4%; on
   * kane_beam_o2_40 +2.0%, +2.1%, +1.7%, +1.4%, with the consistent mass the same, and with an exact
   * 64-point rule for K_G the same to 1e-4: the solid beam's own difference from Euler-Bernoulli
   * (its clamped root face, one element through its 5 mm), not the rule's */
  test_southwell(&part, "kane_beam_o2_20", 0.04);
  cf_modal_part_free(&part);
  test_scene_key();
  TEST_END();
}
