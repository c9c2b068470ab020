/* Flexible bodies in mechanism scenes (issue 9; docs/mbs.md "Flexible bodies"): a body with
 * "flexible": {scene, interface, modes, supports, damping, reduction} is the FE scene's part
 * reduced by Craig-Bampton; joints and forces refer to its node sets ("node1"/"node2"/"node").
 *  1. the lug hung at its eye (revolute joint at the mean of the 'load' nodes) and released from
 *     rest 0.4 rad off the vertical swings as the compound pendulum of the mesh's mass and inertia
 *     about the pin, summed in this test from the tets under the FE scene's lumped rule (rho V / 4
 *     per vertex; the reduction's invariants must equal them, 5e-15): period against the closed
 *     form with its amplitude series (T = 2 pi sqrt(I_pin / (m g d)) (1 + a^2 / 16 + 11 a^4 / 3072))
 *     to 2.5e-4 (-7.5e-5 measured), energy conserved without loads or damping to 2e-4 (4.9e-5);
 *  2. the pin's reaction, hanging at rest, carries the weight rho V g (time average, to 2e-5;
 *     5.5e-6 measured);
 *  3. the reduction cache is written, then read back and reused, with the same result;
 *  4. errors name the file and the key: unknown node set, "mass" beside "flexible", a node set on
 *     a rigid body, a missing FE scene, a bad "supports". */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "swing_period.h"

static const char* kPath = COFEM_SOURCE_DIR "/scenes/mbs/test_flexible.json"; /* for relative paths only */

static double g_damping = 0, g_dt = 1e-3;

static void scene_json(char* out, size_t n, const char* extra_body, const char* joint_node, const char* forces,
                       double theta0, const char* cache) {
  /* the lug's pin axis is y; turn the body about the pin by theta0 (the assembly keeps the pose) */
  snprintf(out, n,
           "{\"gravity\": [0, 0, -9.81],\n"
           " \"bodies\": [{\"name\": \"lug\", %s\"flexible\": {\"scene\": \"../lug_pull.json\", \"interface\": [\"load\"],"
           " \"modes\": 6, \"damping\": %g%s%s%s}, \"rotation\": {\"axis\": [0, 1, 0], \"angle\": %.17g}}],\n"
           " \"joints\": [{\"name\": \"pin\", \"type\": \"revolute\", \"body1\": \"ground\", \"body2\": \"lug\", %s,"
           " \"axis\": [0, 1, 0]}],\n"
           " \"forces\": [%s],\n"
           " \"time\": {\"dt\": %g, \"end\": 1.0}}\n",
           extra_body, g_damping, cache ? ", \"reduction\": \"" : "", cache ? cache : "", cache ? "\"" : "", theta0, joint_node,
           forces, g_dt);
}

static int load(const char* json, cfMbsScene* s) { return cf_mbs_scene_parse(json, kPath, s); }

/* mass, first moments sum m x and second moments sum m x x^T of the mesh under the lumped rule
 * (rho V / 4 at each vertex: the FE scene's "mass": "lumped"), summed here from the tets, not
 * taken from the reduction */
static void lumped_moments(const cfMesh* mesh, double rho, double* mass, double c[3], double J[9]) {
  *mass = 0;
  memset(c, 0, sizeof(double) * 3);
  memset(J, 0, sizeof(double) * 9);
  for (int e = 0; e < mesh->ntet; e++) {
    const int* t = mesh->tet + 4 * e;
    const double* x0 = mesh->X + 3 * t[0];
    double D[9];
    for (int a = 0; a < 3; a++)
      for (int k = 0; k < 3; k++) D[3 * k + a] = mesh->X[3 * t[a + 1] + k] - x0[k];
    double V = fabs(D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
                    D[2] * (D[3] * D[7] - D[4] * D[6])) / 6;
    *mass += rho * V;
    for (int a = 0; a < 4; a++) {
      const double* x = mesh->X + 3 * t[a];
      for (int i = 0; i < 3; i++) {
        c[i] += rho * V / 4 * x[i];
        for (int j = 0; j < 3; j++) J[3 * i + j] += rho * V / 4 * x[i] * x[j];
      }
    }
  }
}

/* pin (mean of the 'load' nodes) and centre of mass of the part, body coordinates */
static void pin_and_centre(const cfMbsScene* s, double P[3], double c[3]) {
  const cfReduction* r = &s->flex[0]->red;
  const cfNodeSet* ns = cf_mesh_find_nset(&s->flex[0]->scene.mesh, "load");
  P[0] = P[1] = P[2] = 0;
  for (int k = 0; k < ns->count; k++)
    for (int a = 0; a < 3; a++) P[a] += s->flex[0]->scene.mesh.X[3 * ns->nodes[k] + a] / ns->count;
  for (int a = 0; a < 3; a++) c[a] = r->c[a] / r->mass;
}

static void test_pendulum(void) {
  char json[4096];
  /* the cache in the working directory (the build tree), by absolute path */
  char cache_path[1024], cwd[900];
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "/tmp");
  snprintf(cache_path, sizeof cache_path, "%s/test_mbs_flexible_scene.cfred", cwd);
  const char* cache = cache_path;
  remove(cache_path);
  double period[2] = {0, 0};
  for (int pass = 0; pass < 2; pass++) {
    double theta0 = -0.4; /* released 0.4 rad off the vertical */
    scene_json(json, sizeof json, "", "\"node2\": \"load\"", "", theta0, cache);
    cfMbsScene s;
    CHECK_OK(load(json, &s));
    if (s.nflex != 1) return;
    CHECK(s.flex[0]->from_cache == pass); /* computed, then reused */
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&s.def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (!d) return;
    /* the compound-pendulum constants from the mesh's own moments (lumped_moments), which the
     * reduction's invariants must equal */
    const cfReduction* r = &s.flex[0]->red;
    double P[3], c[3], mass, cm[3], Jm[9];
    pin_and_centre(&s, P, c);
    lumped_moments(&s.flex[0]->scene.mesh, s.flex[0]->scene.def.rho, &mass, cm, Jm);
    double dj = 0, dc = 0;
    for (int k = 0; k < 9; k++) dj = fmax(dj, fabs(r->J[k] - Jm[k]) / Jm[0]);
    for (int k = 0; k < 3; k++) dc = fmax(dc, fabs(r->c[k] - cm[k]) / (mass * 0.01)), c[k] = cm[k] / mass;
    printf("reduction against the mesh's lumped moments: mass %+.2e, first moments %.2e, second %.2e\n",
           r->mass / mass - 1, dc, dj);
    CHECK_CLOSE(r->mass, mass, 0, 1e-12); /* measured -2e-15 */
    CHECK(dc < 1e-12 && dj < 1e-12);      /* measured 2.1e-15, 5.5e-15 */
    /* I about the pin axis (y) through P: sum m ((x - Px)^2 + (z - Pz)^2) from the second moments */
    double Jy = Jm[0] - 2 * P[0] * cm[0] + mass * P[0] * P[0] + Jm[8] - 2 * P[2] * cm[2] + mass * P[2] * P[2];
    double dist = hypot(c[0] - P[0], c[2] - P[2]);
    double amp = theta0 + atan2(c[0] - P[0], P[2] - c[2]); /* from hanging straight down */
    double T_lin = 2 * M_PI * sqrt(Jy / (mass * 9.81 * dist));
    double T_exp = T_lin * (1 + amp * amp / 16 + 11 * pow(amp, 4) / 3072);
    double T0, V0, emax = 0, tmax = 0;
    cf_mbs_energy(m, d, &T0, &V0);
    enum { NSTEP = 1500 };
    static double ang[NSTEP + 1];
    ang[0] = cf_mbs_joint_angle(m, d, 0);
    for (int k = 1; k <= NSTEP; k++) {
      if (cf_mbs_step(m, d) < 0) {
        CHECK_OK(-1);
        break;
      }
      double T, V;
      ang[k] = cf_mbs_joint_angle(m, d, 0);
      cf_mbs_energy(m, d, &T, &V);
      emax = fmax(emax, fabs(T + V - T0 - V0));
      tmax = fmax(tmax, T);
    }
    period[pass] = swing_period(ang, NSTEP, g_dt);
    printf("flexible lug pendulum (%s): mass %.5f kg, pin-to-centre %.5f m, I_pin %.4e kg m^2: period %.6f s, "
           "compound pendulum %.6f s (%.2e); energy drift %.2e of %.3g J\n",
           pass ? "reduction read from the cache" : "reduction computed", r->mass, dist, Jy, period[pass], T_exp,
           period[pass] / T_exp - 1, emax / tmax, tmax);
    CHECK(period[pass] > 0); /* two upward crossings at least */
    CHECK_CLOSE(period[pass], T_exp, 0, 2.5e-4); /* measured -7.5e-5 */
    CHECK(emax < 2e-4 * tmax);                   /* measured 4.9e-5 */
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  }
  CHECK(period[0] == period[1]);
  remove(cache_path);
}

static void test_reaction(void) {
  char json[4096];
  /* critical modal damping; the part is turned so that its centre of mass hangs right below the
   * pin (the eye's nodes are not exactly symmetric). The multipliers of the trapezoidal rule
   * carry the undamped high-frequency accelerations of the stiff modes (+-0.5% step to step
   * here), so the reaction is averaged over 0.2 s of hanging still */
  g_damping = 1, g_dt = 1e-4;
  cfMbsScene s;
  scene_json(json, sizeof json, "", "\"node2\": \"load\"", "", 0, NULL);
  CHECK_OK(load(json, &s));
  if (s.nflex != 1) return;
  double P[3], c[3];
  pin_and_centre(&s, P, c);
  cf_mbs_scene_free(&s);
  double phi = atan2(c[0] - P[0], P[2] - c[2]); /* R_y(phi) takes (c - P) to straight down */
  scene_json(json, sizeof json, "", "\"node2\": \"load\"", "", phi, NULL);
  CHECK_OK(load(json, &s));
  double mass_rho_v, cm[3], Jm[9];
  lumped_moments(&s.flex[0]->scene.mesh, s.flex[0]->scene.def.rho, &mass_rho_v, cm, Jm);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    double F[3] = {0, 0, 0};
    for (int k = 1; k <= 3000; k++) {
      CHECK_OK(cf_mbs_step(m, d));
      double G[3];
      cf_mbs_joint_reaction(m, d, 0, G);
      for (int a = 0; a < 3 && k > 1000; a++) F[a] += G[a] / 2000;
    }
    double W = mass_rho_v * 9.81; /* rho V of the mesh, summed in this test */
    printf("hanging at rest (turned %.3g mrad): mean pin reaction (%.6g, %.6g, %.9g) N, weight %.9g N\n", 1e3 * phi, F[0], F[1],
           F[2], W);
    CHECK_CLOSE(fabs(F[2]), W, 0, 2e-5); /* measured 5.5e-6 */
    CHECK(fabs(F[0]) < 2e-9 * W && fabs(F[1]) < 2e-9 * W); /* measured 2.5e-10 */
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  g_damping = 0, g_dt = 1e-3;
}

static void expect_error(const char* json, const char* what, const char* needle) {
  cfMbsScene s;
  int st = load(json, &s);
  CHECK(st < 0);
  const char* msg = cf_last_error();
  printf("%s: %s\n", what, msg);
  CHECK(strstr(msg, "test_flexible.json") != NULL);
  CHECK(strstr(msg, needle) != NULL);
  if (st >= 0) cf_mbs_scene_free(&s);
}

static void test_errors(void) {
  char json[4096];
  scene_json(json, sizeof json, "", "\"node2\": \"hole\"", "", 0, NULL);
  expect_error(json, "unknown node set", "no node set 'hole'");
  scene_json(json, sizeof json, "\"mass\": 2, ", "\"node2\": \"load\"", "", 0, NULL);
  expect_error(json, "mass beside flexible", "\"mass\" does not go with \"flexible\"");
  scene_json(json, sizeof json, "", "\"node1\": \"load\"", "", 0, NULL);
  expect_error(json, "node set on the ground", "'ground' is not flexible");
  char bad[4096];
  scene_json(json, sizeof json, "", "\"node2\": \"load\"", "", 0, NULL);
  char* at = strstr(json, "../lug_pull.json");
  snprintf(bad, sizeof bad, "%.*s../nonexistent.json%s", (int)(at - json), json, at + strlen("../lug_pull.json"));
  expect_error(bad, "missing FE scene", "nonexistent.json");
  at = strstr(json, "\"modes\"");
  snprintf(bad, sizeof bad, "%.*s\"supports\": \"welded\", %s", (int)(at - json), json, at);
  expect_error(bad, "bad supports", "\"supports\" = \"welded\"");
}

int main(void) {
  test_errors();
  test_reaction();
  test_pendulum();
  TEST_END();
}
