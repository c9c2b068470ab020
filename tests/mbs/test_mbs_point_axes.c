/* Joint axes at a reduction's interface point (issue 30 item 3: "joints at such a point hold its
 * rotation exactly"): a joint naming the point's set turns its axes by the point's own rotation,
 * Psi_j = Theta_j x e from the reduction's motion rows (cf_mbs__modal_dir_point). For a rigid point
 * the set moves rigidly, so the axis measured on the set's nodes by the older, independent path
 * (cf_mbs__modal_dir: the least-squares affine fit of the nodes' mode rows) must give the same rows.
 * Checked on paper 000's four-bar bar (scenes/mbs/double_fourbar_modal4.json: end_b a rigid point
 * with u_x, u_y kept, its bending static mode turning it about z), for the three axes. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"
#include "cofem/mbs_modal.h"
#include "cofem/modal_part.h"
#include "mbs/mbs_internal.h"

int main(void) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(COFEM_SOURCE_DIR "/scenes/mbs/double_fourbar_modal4.json", &s);
  CHECK_OK(st);
  if (st < 0) TEST_END();
  cfMbsModel* m = NULL;
  CHECK_OK(cf_mbs_model_create(&s.def, &m));
  if (m) {
    const cfModalPart* part = s.flex[0];
    const cfNodeSet* end_b = cf_mesh_find_nset(&part->scene.mesh, "end_b");
    const int ib = cf_mbs_modal_index(m, s.flex_body[0]);
    CHECK(end_b && ib >= 0);
    CHECK(cf_mbs__reduction_point_of(&part->red, end_b->nodes, end_b->count) == 0);
    const double E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double worst = 0, biggest = 0;
    for (int a = 0; a < 3; a++) {
      int d_meas, d_pt, fb, nm, b0, nb;
      CHECK_OK(cf_mbs__modal_dir(m, ib, end_b->nodes, end_b->count, E[a], "test", "end_b", &d_meas));
      CHECK_OK(cf_mbs__modal_dir_point(m, ib, &part->red, part->red.nrigid, 0, E[a], &d_pt));
      if (d_meas < 0 || d_pt < 0) { CHECK(0); continue; }
      const double* Pm = cf_mbs__modal_dir_rows(m, ib, d_meas, &fb, &nm, &b0, &nb);
      const double* Pp = cf_mbs__modal_dir_rows(m, ib, d_pt, &fb, &nm, &b0, &nb);
      for (int k = 0; k < 3 * nm; k++) worst = fmax(worst, fabs(Pm[k] - Pp[k])), biggest = fmax(biggest, fabs(Pp[k]));
    }
    /* measured 1.65e-13 against rows up to 3.1 */
    printf("rigid point end_b: axis rows from the point's rotation vs measured on its set: largest |difference| %.2e, "
           "largest row %.3e\n", worst, biggest);
    CHECK(biggest > 1e-3);
    CHECK(worst < 1e-9 * biggest);
  }
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  TEST_END();
}
