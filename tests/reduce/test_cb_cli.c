/* cofem reduce (host/cli/cmd_reduce.c, linked from cofem_commands): the lug scene reduced with its
 * supports as interface writes a file that reads back with six rigid-body modes and the printed
 * counts; bad arguments and unknown sets are refused. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/modal_part.h"
#include "cofem/scene.h"
#include "cf_test.h"

int main(void) {
  char out[128], scene[600];
  snprintf(out, sizeof out, "/tmp/cofem_test_cb_cli_%d.cfred", (int)getpid());
  snprintf(scene, sizeof scene, "%s/scenes/lug_pull.json", COFEM_SOURCE_DIR);
  char* a1[] = {"cofem", "reduce", scene, "--modes", "8", "--out", out, "--quiet", NULL};
  CHECK(cf_cmd_reduce(8, a1) == 0);
  cfReduction r;
  CHECK_OK(cf_reduction_read(out, &r));
  CHECK(r.nb == 171 && r.nk == 8 && r.n == 179 && r.nrigid == 6 && r.orthonormal == 1);
  /* the reduction's mass against rho V of the scene's mesh, summed here over the tets */
  {
    cfScene s;
    CHECK_OK(cf_scene_load(scene, &s));
    double V = 0;
    for (int e = 0; e < s.mesh.ntet; e++) {
      const int* t = s.mesh.tet + 4 * e;
      const double* x0 = s.mesh.X + 3 * t[0];
      double D[9];
      for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++) D[3 * k + a] = s.mesh.X[3 * t[a + 1] + k] - x0[k];
      V += fabs(D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
                D[2] * (D[3] * D[7] - D[4] * D[6])) / 6;
    }
    printf("reduction mass %.12g kg, rho V %.12g kg (%+.2e)\n", r.mass, s.def.rho * V, r.mass / (s.def.rho * V) - 1);
    CHECK_CLOSE(r.mass, s.def.rho * V, 0, 1e-13); /* measured 8.9e-16 */
    cf_scene_free(&s);
  }
  cf_reduction_free(&r);
  /* the file as a cache (cf_modal_part_load): reused with another damping ratio, which is not
   * part of the match, the damping asked for now is the one the part gets */
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 8;
  ro.damping = 0.05;
  cfModalPart p;
  CHECK_OK(cf_modal_part_load(scene, NULL, 0, CF_PART_SUPPORTS_INTERFACE, &ro, out, &p));
  CHECK(p.from_cache == 1);
  CHECK(p.red.n == 179 && p.red.nrigid == 6 && p.red.zeta[0] == 0.0 && p.red.zeta[6] == 0.05 && p.red.zeta[178] == 0.05);
  cf_modal_part_free(&p);
  /* the cache is refused, and the reduction made anew, after any input it depends on changes
   * (issue 31: with the density left out of the check, a cache made for another density was reused):
   * the material (E, nu, rho) and mass kind in a copy of the scene, the mode count, the interface,
   * the orthonormalisation */
  {
    static const char* const from[] = {"\"rho\": 7850", "\"E\": 210e9", "\"nu\": 0.3", "\"mass\": \"lumped\""};
    static const char* const to[] = {"\"rho\": 7851", "\"E\": 211e9", "\"nu\": 0.31",
                                     "\"mass\": \"consistent\""};
    FILE* f = fopen(scene, "r");
    char text[8192];
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[len] = '\0';
    char variant[700];
    snprintf(variant, sizeof variant, "/tmp/cofem_test_cb_cli_%d.json", (int)getpid());
    for (int k = 0; k < 4; k++) {
      const char* at = strstr(text, from[k]);
      CHECK(at != NULL);
      if (!at) continue;
      /* the copy in /tmp, its mesh by absolute path */
      char edited[8192], *mesh;
      snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, to[k], at + strlen(from[k]));
      FILE* g = fopen(variant, "w");
      if ((mesh = strstr(edited, "\"../meshes/")))
        fprintf(g, "%.*s\"%s/meshes/%s", (int)(mesh - edited), edited, COFEM_SOURCE_DIR, mesh + strlen("\"../meshes/"));
      fclose(g);
      cfModalPart q;
      int st = cf_modal_part_load(variant, NULL, 0, CF_PART_SUPPORTS_INTERFACE, &ro, out, &q);
      printf("cache after %s -> %s: %s\n", from[k], to[k], st < 0 ? cf_last_error() : q.from_cache ? "reused" : "recomputed");
      CHECK_OK(st);
      CHECK(st < 0 || q.from_cache == 0);
      cf_modal_part_free(&q);
      /* back to the original's cache for the next change */
      CHECK_OK(cf_modal_part_load(scene, NULL, 0, CF_PART_SUPPORTS_INTERFACE, &ro, out, &q));
      cf_modal_part_free(&q);
    }
    remove(variant);
    cfReduceOptions other = ro;
    other.nmodes = 9;
    const char* iface[] = {"load"};
    for (int k = 0; k < 3; k++) {
      cfReduceOptions o2 = k == 0 ? other : ro;
      if (k == 2) o2.orthonormalise = 0;
      cfModalPart q;
      int st = cf_modal_part_load(scene, k == 1 ? iface : NULL, k == 1 ? 1 : 0, CF_PART_SUPPORTS_INTERFACE, &o2, out, &q);
      CHECK_OK(st);
      CHECK(st < 0 || q.from_cache == 0);
      cf_modal_part_free(&q);
      CHECK_OK(cf_modal_part_load(scene, NULL, 0, CF_PART_SUPPORTS_INTERFACE, &ro, out, &q));
      cf_modal_part_free(&q);
    }
  }
  remove(out);
  char* a2[] = {"cofem", "reduce", scene, "--interface", "nope", NULL};
  CHECK(cf_cmd_reduce(5, a2) == 1);
  char* a3[] = {"cofem", "reduce", scene, "--modes", "x", NULL};
  CHECK(cf_cmd_reduce(5, a3) == 2);
  char* a4[] = {"cofem", "reduce", scene, "--clamp", "--interface", "probe,load", "--modes", "4", "--damping", "adams", NULL};
  CHECK(cf_cmd_reduce(10, a4) == 0);
  /* interface points (issue 30): the pin set as one rigid point, written as version 3 and read back
   * with its point; a point read as a cache matches only the same point; bad specs refused */
  char* a5[] = {"cofem", "reduce", scene, "--clamp", "--interface-point", "load:rigid", "--modes", "4", "--quiet", "--out", out, NULL};
  CHECK(cf_cmd_reduce(11, a5) == 0);
  CHECK(cf_reduction_file_version(out) == 3);
  cfReduction rp;
  if (cf_reduction_read(out, &rp) == CF_OK) {
    CHECK(rp.npoint == 1 && rp.nb == 6 && rp.nk == 4 && rp.points[0].kind == CF_POINT_RIGID && rp.points[0].nnode == 19);
    cf_reduction_free(&rp);
  } else CHECK(0);
  {
    cfPartPoint pt = {"load", CF_POINT_RIGID, 0};
    cfReduceOptions o4 = cf_default_reduce_options();
    o4.nmodes = 4;
    cfModalPart q;
    CHECK_OK(cf_modal_part_load_points(NULL, scene, NULL, 0, &pt, 1, CF_PART_SUPPORTS_CLAMP, &o4, out, &q));
    CHECK(q.from_cache == 1);
    cf_modal_part_free(&q);
    pt.dofs = 0x3; /* another point: recomputed */
    CHECK_OK(cf_modal_part_load_points(NULL, scene, NULL, 0, &pt, 1, CF_PART_SUPPORTS_CLAMP, &o4, out, &q));
    CHECK(q.from_cache == 0 && q.red.nb == 2);
    cf_modal_part_free(&q);
  }
  remove(out);
  char* a6[] = {"cofem", "reduce", scene, "--interface-point", "load:rigid:x,q", NULL};
  CHECK(cf_cmd_reduce(5, a6) == 2);
  char* a7[] = {"cofem", "reduce", scene, "--interface-point", "load:glued", NULL};
  CHECK(cf_cmd_reduce(5, a7) == 2);
  char* a8[] = {"cofem", "reduce", scene, "--interface-point", "nope:rigid", NULL};
  CHECK(cf_cmd_reduce(5, a8) == 1);
  TEST_END();
}
