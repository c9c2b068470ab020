/* The part's matrix of corotational FE bodies: "factor": "pcg" (host/mbs/mbs_fe.c; docs/mbs.md "The part's matrix"):
 * the part's matrix A0 = cm M + ck K_R + eps I solved by the PCG (the FE scene's preconditioner, the
 * interface columns warm-started from their last solutions) instead of a Cholesky factor. The CPU
 * reference of the GPU path ("backend": "cuda", tests/cuda/test_cuda_mbs_fe.c), checked here
 * against the exact factor (CHOLMOD), an independent solve of the same Newton systems:
 *  1. the steel lug hung at its eye, released 0.4 rad off the vertical, 30 steps of 10 ms: centre
 *     of mass and pin reaction as with the exact factor, for block Jacobi and the rotated Cholesky;
 *  2. paper 003's hinge clamped at its pin holes ("supports": "clamp", the clamped DOFs projected
 *     out of the PCG) carrying the 40 kg sliding door: the door's position as with the exact factor;
 *  3. the warm start of the solves (the FE scene's "warm_start": the Galerkin start in the span of
 *     the last solutions, mbs_fe.c z_guess and y_solve) takes fewer PCG iterations than cold
 *     starts, for the interface columns and for all, on the same trajectory;
 *  4. the rotated factor ("factor": "rotated") falling back to the exact one on the spin-up beam:
 *     the fallback factors K_R of the current state, which the matrix-free forces had not formed
 *     (with the stale K_R the step fails: "the leading matrix is not positive definite");
 *  5. mechanism statics with a "pcg" body (the exact factor there) against the exact body;
 *  6. bad input: "backend": "cuda" without "pcg", an AMG FE scene, an unknown backend, "tol" out of
 *     range: errors naming the file and key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"

#include "fe_pcg_run.h"

static void test_lug(void) {
  char json[4096];
  Run ex, pj, pr, pa;
  lug_json(json, sizeof json, "");
  CHECK_OK(run(json, kPath, 30, -1, -1, NULL, &ex));
  lug_json(json, sizeof json, ", \"factor\": \"pcg\"");
  CHECK_OK(run(json, kPath, 30, CF_PRECOND_BLOCK_JACOBI, -1, NULL, &pj));
  CHECK_OK(run(json, kPath, 30, CF_PRECOND_ROTATED_CHOLESKY, -1, NULL, &pr));
  lug_json(json, sizeof json, ", \"factor\": \"pcg\", \"preconditioner\": \"amg\"");
  CHECK_OK(run(json, kPath, 30, -1, -1, NULL, &pa));
  double dj = dist3(pj.centre, ex.centre), dr = dist3(pr.centre, ex.centre), da = dist3(pa.centre, ex.centre);
  printf("lug, AMG (the hierarchy of the Newton matrix; block Jacobi for the projections): off by %.2e m, %ld PCG "
         "iterations (%.1f per Newton iteration), pin reaction %.6f N\n", da, pa.pcg, (double)pa.pcg / pa.newton,
         pa.reaction);
  CHECK(da < 1e-10); /* measured: see above */
  CHECK_CLOSE(pa.reaction, ex.reaction, 0, 1e-6);
  CHECK(pa.pcg > 0 && pa.pcg < pj.pcg / 20); /* measured 102 against 10366 per step: AMG's is 100x fewer */
  printf("lug, 30 steps of 10 ms: centre (%.9f, %.9f) m exact factor; pcg block Jacobi off by %.2e m (%ld PCG "
         "iterations, %.0f per Newton iteration), rotated Cholesky %.2e m (%ld, %.1f); pin reaction %.6f N vs "
         "%.6f, %.6f\n",
         ex.centre[0], ex.centre[2], dj, pj.pcg, (double)pj.pcg / pj.newton, dr, pr.pcg, (double)pr.pcg / pr.newton,
         ex.reaction, pj.reaction, pr.reaction);
  CHECK(dj < 1e-10); /* measured 8e-13 m (the swing: 0.05 m) */
  CHECK(dr < 1e-10); /* measured 3e-13 m */
  CHECK_CLOSE(pj.reaction, ex.reaction, 0, 1e-6); /* measured 5e-8 relative */
  CHECK_CLOSE(pr.reaction, ex.reaction, 0, 1e-6);
  CHECK(pj.newton == ex.newton);
  CHECK(pj.pcg > 0 && pr.pcg > 0);
  CHECK(pr.pcg < pj.pcg); /* the rotated Cholesky preconditions A0 almost exactly */
}

/* the door on the clamped hinge: the door's position after 20 steps */
static void test_clamped_hinge(void) {
  static char json[16384];
  Run ex, pc;
  CHECK_OK(hinge_json(json, sizeof json, ""));
  CHECK_OK(run(json, kHingePath, 20, -1, -1, "door", &ex));
  CHECK_OK(hinge_json(json, sizeof json, ", \"factor\": \"pcg\""));
  CHECK_OK(run(json, kHingePath, 20, -1, -1, "door", &pc));
  double dx = dist3(pc.centre, ex.centre);
  printf("door on the clamped hinge, 20 steps: door at (%.9f, %.9f, %.9f) m exact factor; pcg off by %.2e m "
         "(%ld PCG iterations); hinge reaction %.6f N vs %.6f N\n",
         ex.centre[0], ex.centre[1], ex.centre[2], dx, pc.pcg, ex.reaction, pc.reaction);
  CHECK(dx < 1e-9); /* measured 5.9e-15 m */
  CHECK_CLOSE(pc.reaction, ex.reaction, 1e-6, 1e-6); /* measured 2.2e-7 relative */
}

static void test_warm_start(void) {
  char json[4096];
  Run warm, cold;
  lug_json(json, sizeof json, ", \"factor\": \"pcg\"");
  CHECK_OK(run(json, kPath, 15, CF_PRECOND_BLOCK_JACOBI, 1, NULL, &warm));
  CHECK_OK(run(json, kPath, 15, CF_PRECOND_BLOCK_JACOBI, 0, NULL, &cold));
  double dx = dist3(warm.centre, cold.centre);
  printf("warm start of the interface solves: %ld PCG iterations of the interface columns against %ld cold (%.2fx); "
         "all solves %ld against %ld (%.2fx); trajectories %.2e m apart\n",
         warm.pcg_z, cold.pcg_z, (double)warm.pcg_z / cold.pcg_z, warm.pcg, cold.pcg, (double)warm.pcg / cold.pcg, dx);
  CHECK(dx < 1e-10);
  CHECK(warm.pcg_z > 0 && cold.pcg_z > 0);
  CHECK(warm.pcg_z < 0.88 * cold.pcg_z); /* measured 0.85x (0.91x from the last solutions alone, before the
                                          * Galerkin start in their span and their turned copies) */
  CHECK(warm.pcg < 0.88 * cold.pcg);     /* measured 0.83x: the Newton corrections' start too (y_solve) */
}

/* The rotated factor's fallback to the exact one (mbs_fe.c: a step whose Newton updates stall
 * finishes with A0 factored at its current K_R): the spin-up beam (scenes/mbs/compare/
 * spinup_beam_short.json: a hub spun up towards 25 rad/s, whose stiffening the matrix at rest
 * lacks) falls back from its first step on. The rotated factor's forces are matrix-free, so K_R is
 * not formed until the fallback forms it; factored from a stale K_R the fallback's Newton iteration
 * would not converge. Against the exact factor: the beam's centre after 20 steps. */
static void test_rotated_fallback(void) {
  static char json[16384];
  char path[4096];
  snprintf(path, sizeof path, "%s/scenes/mbs/compare/spinup_beam_short.json", kSourceDir);
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return;
  char text[16384];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  const char* key = "\"formulation\": \"corotational\"";
  const char* at = strstr(text, key);
  CHECK(at != NULL);
  if (!at) return;
  Run ex, ro;
  snprintf(json, sizeof json, "%.*s%s%s", (int)(at - text), text, key, at + strlen(key));
  CHECK_OK(run(json, path, 20, -1, -1, NULL, &ex));
  snprintf(json, sizeof json, "%.*s%s, \"factor\": \"rotated\"%s", (int)(at - text), text, key, at + strlen(key));
  CHECK_OK(run(json, path, 20, -1, -1, NULL, &ro));
  double dx = dist3(ro.centre, ex.centre);
  printf("spin-up beam, 20 steps: centre (%.9f, %.9f, %.9f) m exact factor, rotated (falling back) off by %.2e m; "
         "Newton iterations %d vs %d\n", ex.centre[0], ex.centre[1], ex.centre[2], dx, ro.newton, ex.newton);
  CHECK(dx < 1e-7); /* measured: see above */
  CHECK(ro.newton <= 2 * ex.newton);
}

/* mechanism statics (cf_mbs_static: pseudo-steps growing to 1e4 times dt) with a "pcg" body: it
 * solves the part's matrix with the exact factor there (the PCG crawled: no increment in 14
 * minutes); the lug hung at its eye comes to rest below the pin with the pin's reaction its weight */
static void static_lug(const char* flexible, double c[3], double F[3]) {
  char json[4096];
  lug_json(json, sizeof json, flexible);
  cfMbsScene s;
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  int st = cf_mbs_scene_parse(json, kPath, &s);
  CHECK_OK(st);
  if (st < 0) return;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  cfMbsStaticOptions o;
  cf_mbs_static_defaults(&o);
  if (st >= 0) st = cf_mbs_static(m, d, &o, NULL, NULL);
  CHECK_OK(st);
  if (st >= 0) cf_mbs_fe_centre(m, d, 0, c, NULL), cf_mbs_joint_reaction(m, d, 0, F);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
}

static void test_statics(void) {
  double ce[3] = {0}, cp[3] = {0}, Fe[3] = {0}, Fp[3] = {0};
  static_lug("", ce, Fe);
  static_lug(", \"factor\": \"pcg\", \"preconditioner\": \"amg\"", cp, Fp);
  double dx = dist3(cp, ce);
  printf("statics, the lug hung at its eye: centre (%.9f, %.9f, %.9f) m exact, pcg body off by %.2e m; pin reaction "
         "z %.9f vs %.9f N\n", ce[0], ce[1], ce[2], dx, Fp[2], Fe[2]);
  CHECK(dx < 1e-9); /* measured 3.7e-11 m */
  CHECK_CLOSE(Fp[2], Fe[2], 0, 1e-6); /* measured 1.2e-8: both end within the statics tolerance (1e-10 m) */
  CHECK(fabs(Fe[2]) > 1); /* the weight, 12.9 N */
}

static void expect_error(const char* flexible, const char* needle) {
  char json[4096];
  lug_json(json, sizeof json, flexible);
  cfMbsScene s;
  int st = cf_mbs_scene_parse(json, kPath, &s);
  CHECK(st < 0);
  const char* msg = cf_last_error();
  printf("%s: %s\n", flexible, msg);
  CHECK(strstr(msg, "test_fe_pcg.json") != NULL);
  CHECK(strstr(msg, needle) != NULL);
  if (st >= 0) cf_mbs_scene_free(&s);
}

static void test_errors(void) {
  expect_error(", \"backend\": \"cuda\"", "\"backend\": \"cuda\" needs \"factor\": \"pcg\"");
  expect_error(", \"factor\": \"pcg\", \"backend\": \"gpu\"", "\"backend\" = \"gpu\"");
  expect_error(", \"factor\": \"pcg\", \"tol\": 0", "\"tol\" = 0");
  expect_error(", \"tol\": 1e-9", "\"tol\" goes with \"factor\": \"pcg\"");
  expect_error(", \"factor\": \"cg\"", "\"factor\" = \"cg\"");
  expect_error(", \"factor\": \"pcg\", \"preconditioner\": \"ilu\"", "\"preconditioner\" = \"ilu\"");
  expect_error(", \"factor\": \"pcg\", \"preconditioner\": \"rotated_cholesky\", \"backend\": \"cuda\"",
               "the GPU");
  expect_error(", \"preconditioner\": \"block_jacobi\"", "\"preconditioner\" goes with \"factor\": \"pcg\"");
}

int main(void) {
  fe_pcg_paths();
  test_errors();
  test_lug();
  test_warm_start();
  test_clamped_hinge();
  test_rotated_fallback();
  test_statics();
  TEST_END();
}
