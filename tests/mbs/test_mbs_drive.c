/* Driving a mechanism through the C API (cofem/mbs.h, mbs_drive.c), against closed forms:
 *  1. a free body under an applied force and torque: acceleration F/m, angular acceleration T/I
 *     (principal axis), the second difference of the positions a h^2;
 *  2. a pendulum whose hinge is switched off falls freely: its centre of mass accelerates with g,
 *     the reaction is 0; switched on again where it holds (after a reset) it carries the weight;
 *  3. an angle driver set to a target with a ramp passes the blend's midpoint and holds the target;
 *  4. bad ids are refused with CF_ERR_ARG and a message naming what was wrong. */
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"

static const double G = 9.81;

static void com_of(const cfMbsModel* m, const cfMbsData* d, int b, double c[3]) {
  const double p[3] = {0.5, 0, 0};
  cf_mbs_point(m, d, b, p, c);
}

int main(void) {
  /* 1. a free box */
  {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    def.opt.dt = 1e-3;
    cfMbsBodyDef B = cf_mbs_default_body_def();
    snprintf(B.name, sizeof B.name, "box");
    B.mass = 2, B.inertia[0] = 0.1, B.inertia[1] = 0.2, B.inertia[2] = 0.3;
    int b = cf_mbs_add_body(&def, &B);
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      const double F[3] = {3, -4, 5}, T[3] = {0, 0.6, 0}, o[3] = {0, 0, 0};
      CHECK_OK(cf_mbs_set_body_load(m, d, b, F, NULL, T));
      double x[3][3];
      for (int k = 1; k <= 300; k++) {
        CHECK_OK(cf_mbs_step(m, d));
        if (k % 100 == 0) cf_mbs_point(m, d, b, o, x[k / 100 - 1]);
      }
      double a[3], w[3];
      cf_mbs_point_acc(m, d, b, o, a);
      cf_mbs_omega(m, d, b, w);
      for (int i = 0; i < 3; i++) {
        CHECK_CLOSE(a[i], F[i] / 2, 0, 1e-12);                                        /* measured: 0 */
        CHECK_CLOSE((x[2][i] - 2 * x[1][i] + x[0][i]) / (0.1 * 0.1), F[i] / 2, 0, 1e-9); /* measured: below 1e-11 */
      }
      /* w = T/I (t - h/2): the first step averages the unloaded start's acceleration (docs/mbs.md) */
      CHECK_CLOSE(w[1], 0.6 / 0.2 * (0.3 - 0.5e-3), 1e-12, 1e-6); /* measured: 1.3e-7 */
      /* 4. refused */
      CHECK(cf_mbs_set_body_load(m, d, 5, F, NULL, NULL) == CF_ERR_ARG && strstr(cf_last_error(), "out of range"));
      CHECK(cf_mbs_set_body_load(m, d, CF_MBS_GROUND, F, NULL, NULL) == CF_ERR_ARG && strstr(cf_last_error(), "ground"));
      const double bad[3] = {NAN, 0, 0};
      CHECK(cf_mbs_set_body_load(m, d, b, bad, NULL, NULL) == CF_ERR_ARG && strstr(cf_last_error(), "'box'"));
      const int node = 0;
      CHECK(cf_mbs_set_node_load(m, d, b, &node, 1, F) == CF_ERR_ARG && strstr(cf_last_error(), "rigid"));
      CHECK(cf_mbs_set_joint_active(m, d, 0, 0) == CF_ERR_ARG && strstr(cf_last_error(), "joint id 0"));
      CHECK(cf_mbs_set_driver_target(m, d, 0, 1, 0) == CF_ERR_ARG && strstr(cf_last_error(), "driver id 0"));
      CHECK(cf_mbs_flex_nnode(m, b) == CF_ERR_ARG && strstr(cf_last_error(), "not flexible"));
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
  /* 2, 3. a bar hinged at the origin (com 0.5 m along x), gravity -y, its angle driven */
  {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    def.opt.dt = 1e-3;
    def.opt.gravity[1] = -G;
    cfMbsBodyDef B = cf_mbs_default_body_def();
    snprintf(B.name, sizeof B.name, "bar");
    B.mass = 1, B.com[0] = 0.5, B.inertia[0] = 1e-4, B.inertia[1] = B.inertia[2] = 1.0 / 12;
    int b = cf_mbs_add_body(&def, &B);
    cfMbsJointDef J = cf_mbs_default_joint_def();
    snprintf(J.name, sizeof J.name, "hinge");
    J.type = CF_MBS_REVOLUTE, J.body1 = CF_MBS_GROUND, J.body2 = b;
    int j = cf_mbs_add_joint(&def, &J);
    cfMbsDriverDef D = cf_mbs_default_driver_def();
    snprintf(D.name, sizeof D.name, "motor");
    D.type = CF_MBS_DRIVE_ANGLE, D.joint = j, D.f = cf_mbs_func_const(0);
    int k = cf_mbs_add_driver(&def, &D);
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      for (int s = 0; s < 50; s++) CHECK_OK(cf_mbs_step(m, d));
      CHECK_OK(cf_mbs_set_driver_target(m, d, k, 0.5, 0.2));
      for (int s = 0; s < 100; s++) CHECK_OK(cf_mbs_step(m, d));
      CHECK_CLOSE(cf_mbs_joint_angle(m, d, j), 0.25, 1e-12, 0); /* measured: 2e-16 */
      for (int s = 0; s < 150; s++) CHECK_OK(cf_mbs_step(m, d));
      CHECK_CLOSE(cf_mbs_joint_angle(m, d, j), 0.5, 1e-12, 0);
      CHECK_CLOSE(cf_mbs_driver_value(m, d, k), 0.5, 1e-12, 0);
      /* motor and hinge off: free fall of the centre of mass */
      CHECK_OK(cf_mbs_set_driver_active(m, d, k, 0));
      CHECK_OK(cf_mbs_set_joint_active(m, d, j, 0));
      CHECK(cf_mbs_joint_active(m, d, j) == 0);
      for (int s = 0; s < 2; s++) CHECK_OK(cf_mbs_step(m, d));
      double c[3][3];
      for (int r = 0; r < 3; r++) {
        com_of(m, d, b, c[r]);
        for (int s = 0; r < 2 && s < 100; s++) CHECK_OK(cf_mbs_step(m, d));
      }
      const double gvec[3] = {0, -G, 0};
      for (int i = 0; i < 3; i++) CHECK_CLOSE((c[2][i] - 2 * c[1][i] + c[0][i]) / (0.1 * 0.1), gvec[i], 1e-9, 0); /* measured: 1e-10 */
      double F[3];
      cf_mbs_joint_reaction(m, d, j, F);
      CHECK(F[0] == 0 && F[1] == 0 && F[2] == 0);
      /* the scene's joints back: the driver holds the bar horizontal, the hinge carries the weight */
      CHECK_OK(cf_mbs_reset(m, d));
      CHECK(cf_mbs_joint_active(m, d, j) == 1);
      for (int s = 0; s < 20; s++) CHECK_OK(cf_mbs_step(m, d));
      cf_mbs_joint_reaction(m, d, j, F);
      CHECK_CLOSE(F[1], G, 1e-9, 0); /* body2 (the bar) held up against its weight; measured: 0 */
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
  TEST_END();
}
