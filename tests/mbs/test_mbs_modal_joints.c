/* Joints at FE nodes of modal bodies (issue 9; cofem/mbs_modal.h "modal points"):
 *  1. the equations' gradient and acceleration bias (bilinear in the frame axes and the modal
 *     amplitudes) against central differences, at a random state, for a joint between modal
 *     points of two modal bodies (the most amplitude blocks in one equation);
 *  2. statics through the joints: a soft box held by spherical joints at three single nodes
 *     (ground), a tip load ramped slowly with critical modal damping, settles to the full linear
 *     FE solution with those nodes fixed (cf_linear_static), node by node, within the
 *     geometric nonlinearity of the floating frame (u/L relative):
 *     a. interface = the three joint nodes + the loaded node, 4 normal modes: Guyan's static
 *        condensation is exact for loads at interface nodes, so the truncated basis is exact;
 *     b. no interface, every normal mode kept (complete basis, 7 amplitude blocks per equation);
 *  3. a flexible pendulum hinged at the mean of its end face directly (revolute joint at the
 *     modal point) moves exactly as when a massless virtual body is fixed to that modal point
 *     and hinged (paper 004, section 4). */
#include <stdio.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs_modal.h"
#include "cofem/mesh_box.h"
#include "cofem/static.h"
#include "mbs/mbs_internal.h"

static int nearest_node(const cfMesh* mesh, double x, double y, double z) {
  int best = 0;
  double bd = 1e300;
  for (int p = 0; p < mesh->nnode; p++) {
    const double* X = mesh->X + 3 * p;
    double d = (X[0] - x) * (X[0] - x) + (X[1] - y) * (X[1] - y) + (X[2] - z) * (X[2] - z);
    if (d < bd) bd = d, best = p;
  }
  return best;
}

static cfMbsModalDef modal_def(const cfReduction* red, const cfMesh* mesh) {
  cfMbsModalDef md = cf_mbs_default_modal_def();
  md.red = red, md.X = mesh->X;
  return md;
}

static cfMbsBodyDef frame_def(const char* name) {
  cfMbsBodyDef b = cf_mbs_default_body_def();
  snprintf(b.name, sizeof b.name, "%s", name);
  return b;
}

/* ---- 1. gradient and bias ---- */
static void test_derivatives(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(4, 1, 1, 0.2, 0.05, 0.05, &mesh));
  cfModelDef mdef = cf_default_model_def();
  mdef.E = 2e8, mdef.rho = 1000;
  cfModel* model;
  CHECK_OK(cf_model_create(&mesh, &mdef, &model));
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 20; /* 26 modes, 20 elastic: two amplitude blocks */
  cfReduction red;
  CHECK_OK(cf_reduce(model, NULL, 0, &ro, &red));
  cfMbsDef def;
  cf_mbs_def_init(&def);
  cfMbsModalDef md = modal_def(&red, &mesh);
  cfMbsBodyDef b1 = frame_def("a"), b2 = frame_def("b");
  b2.pos[0] = 0.2;
  CHECK(cf_mbs_add_modal_body(&def, &b1, &md) == 0);
  CHECK(cf_mbs_add_modal_body(&def, &b2, &md) == 1);
  const cfNodeSet *xmin = cf_mesh_find_nset(&mesh, "xmin"), *xmax = cf_mesh_find_nset(&mesh, "xmax");
  CHECK(cf_mbs_add_modal_point(&def, 0, "end", xmax->nodes, xmax->count) == 0);
  CHECK(cf_mbs_add_modal_point(&def, 1, "start", xmin->nodes, xmin->count) == 0);
  CHECK(cf_mbs_add_modal_point(&def, 1, "start", xmin->nodes, 1) < 0); /* twice */
  int bad = -5;
  CHECK(cf_mbs_add_modal_point(&def, 1, "bad", &bad, 1) < 0);
  printf("refused: %s\n", cf_last_error());
  cfMbsJointDef j = cf_mbs_default_joint_def();
  snprintf(j.name, sizeof j.name, "link");
  j.type = CF_MBS_SPHERICAL, j.body1 = 0, j.body2 = 1, j.modal_point1 = 0, j.modal_point2 = 0;
  CHECK(cf_mbs_add_joint(&def, &j) == 0);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    /* a random state off the constraint manifold */
    unsigned s = 12345;
    double* q = malloc(sizeof(double) * m->nq);
    double* qd = malloc(sizeof(double) * m->nq);
    double* qp = malloc(sizeof(double) * m->nq);
    for (int i = 0; i < m->nq; i++) {
      s = s * 1103515245u + 12345u;
      q[i] = m->q0[i] + 0.2 * ((double)(s >> 8) / (1u << 24) - 0.5);
      s = s * 1103515245u + 12345u;
      qd[i] = (double)(s >> 8) / (1u << 24) - 0.5;
    }
    int c0 = m->joint_con0[0];
    double ejac = 0, ebias = 0, scale = 0;
    for (int i = c0; i < c0 + 3; i++) {
      const cfMbsCon* c = &m->con[i];
      CHECK(c->nb == 6); /* two frames, two blocks each */
      cf_mbs__eval_phi(m, d, q, 0, 1);
      double J[CF_MBS_CON_MAXB * 12];
      memcpy(J, d->jac + (size_t)i * CF_MBS_CON_MAXB * 12, sizeof J);
      double bias[64];
      cf_mbs__eval_bias(m, d, q, qd, 0, bias);
      /* gradient: central differences of Phi_i */
      for (int sl = 0; sl < c->nb; sl++)
        for (int k = 0; k < 12; k++) {
          int a = m->body_qadr[c->body[sl]] + k;
          double h = 1e-6, fp, fm;
          memcpy(qp, q, sizeof(double) * m->nq);
          qp[a] += h;
          cf_mbs__eval_phi(m, d, qp, 0, 0);
          fp = d->phi[i];
          qp[a] -= 2 * h;
          cf_mbs__eval_phi(m, d, qp, 0, 0);
          fm = d->phi[i];
          ejac = fmax(ejac, fabs((fp - fm) / (2 * h) - J[12 * sl + k]));
          scale = fmax(scale, fabs(J[12 * sl + k]));
        }
      /* bias = d/dt (Phi_q(q + t qd) qd) at t = 0 */
      double g[2];
      for (int sg = 0; sg < 2; sg++) {
        double h = sg ? -1e-6 : 1e-6;
        for (int a = 0; a < m->nq; a++) qp[a] = q[a] + h * qd[a];
        cf_mbs__eval_phi(m, d, qp, 0, 1);
        double v = 0;
        const double* row = d->jac + (size_t)i * CF_MBS_CON_MAXB * 12;
        for (int sl = 0; sl < c->nb; sl++)
          for (int k = 0; k < 12; k++) v += row[12 * sl + k] * qd[m->body_qadr[c->body[sl]] + k];
        g[sg] = v;
      }
      ebias = fmax(ebias, fabs((g[0] - g[1]) / 2e-6 - bias[i]));
    }
    printf("modal point joint: gradient error %.2e (scale %.2e), bias error %.2e\n", ejac, scale, ebias);
    CHECK(scale > 0.5);
    CHECK(ejac < 1e-7 * scale);
    CHECK(ebias < 1e-6);
    free(q), free(qd), free(qp);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  /* a prismatic joint at a modal point is refused */
  cfMbsDef def2;
  cf_mbs_def_init(&def2);
  CHECK(cf_mbs_add_modal_body(&def2, &b1, &md) == 0);
  CHECK(cf_mbs_add_modal_point(&def2, 0, "end", xmax->nodes, xmax->count) == 0);
  j.type = CF_MBS_PRISMATIC, j.body1 = CF_MBS_GROUND, j.body2 = 0, j.modal_point1 = -1, j.modal_point2 = 0;
  CHECK(cf_mbs_add_joint(&def2, &j) == 0);
  CHECK(cf_mbs_model_create(&def2, &m) < 0);
  printf("refused: %s\n", cf_last_error());
  cf_mbs_def_free(&def2);
  cf_mbs_def_free(&def);
  cf_reduction_free(&red);
  cf_model_free(model);
  cf_mesh_free(&mesh);
}

/* ---- 2. statics through joints at single nodes ---- */
static void test_statics(int complete) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(6, 1, 1, 0.3, 0.05, 0.05, &mesh));
  cfModelDef mdef = cf_default_model_def();
  mdef.E = 2e8, mdef.nu = 0.3, mdef.rho = 1000;
  cfModel* model;
  CHECK_OK(cf_model_create(&mesh, &mdef, &model));
  int sup[3] = {nearest_node(&mesh, 0, 0, 0), nearest_node(&mesh, 0, 0.05, 0), nearest_node(&mesh, 0, 0, 0.05)};
  int tip = nearest_node(&mesh, 0.3, 0.05, 0.05);
  const double F[3] = {0.03, -0.05, 0.1}; /* N: 2.5 um at the tip */
  /* the full FE answer */
  cfModel* fixed;
  CHECK_OK(cf_model_create(&mesh, &mdef, &fixed));
  CHECK_OK(cf_model_fix_nodes(fixed, sup, 3, 7));
  cfData* fd;
  CHECK_OK(cf_data_create(fixed, &fd));
  double* f = calloc((size_t)model->ndof, sizeof(double));
  for (int a = 0; a < 3; a++) f[3 * tip + a] = F[a];
  CHECK_OK(cf_linear_static(fixed, fd, f));
  /* the reduction (free-free: the frame carries the rigid-body modes) */
  cfReduceOptions ro = cf_default_reduce_options();
  ro.damping = 1.0; /* critical: a quasi-static ramp settles */
  int iface[4] = {sup[0], sup[1], sup[2], tip};
  ro.nmodes = complete ? model->ndof : 4;
  cfReduction red;
  CHECK_OK(cf_reduce(model, iface, complete ? 0 : 4, &ro, &red));
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 2e-3;
  cfMbsModalDef md = modal_def(&red, &mesh);
  cfMbsModalLoad ld;
  memset(&ld, 0, sizeof ld);
  ld.node = tip;
  memcpy(ld.force, F, sizeof ld.force);
  ld.has_scale = 1;
  ld.scale.type = CF_MBS_FUNC_STEP, ld.scale.c[0] = 0, ld.scale.c[1] = 1, ld.scale.c[2] = 0, ld.scale.c[3] = 0.3;
  md.nload = 1, md.load[0] = ld;
  cfMbsBodyDef fb = frame_def("box");
  CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == 0);
  for (int k = 0; k < 3; k++) {
    char nm[16];
    snprintf(nm, sizeof nm, "pin%d", k);
    CHECK(cf_mbs_add_modal_point(&def, 0, nm, &sup[k], 1) == k);
    cfMbsJointDef j = cf_mbs_default_joint_def();
    snprintf(j.name, sizeof j.name, "%s", nm);
    j.type = CF_MBS_SPHERICAL, j.body1 = CF_MBS_GROUND, j.body2 = 0, j.modal_point2 = k;
    CHECK(cf_mbs_add_joint(&def, &j) == k);
  }
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    while (d->t < 0.5 - 1e-12)
      if (cf_mbs_step(m, d) < 0) {
        CHECK_OK(-1);
        break;
      }
    double* x = malloc(sizeof(double) * 3 * mesh.nnode);
    cf_mbs_modal_nodes(m, d, 0, x, NULL);
    double err = 0, umax = 0;
    for (int i = 0; i < 3 * mesh.nnode; i++) {
      double ufe = fd->x[i] - mesh.X[i];
      err = fmax(err, fabs(x[i] - mesh.X[i] - ufe));
      umax = fmax(umax, fabs(ufe));
    }
    printf("statics through 3 pinned nodes, %s (%d modes, %d elastic, %d amplitude blocks): max |u - u_FE| %.3e of "
           "%.3e m (%.2e)\n",
           complete ? "complete basis" : "interface = pins + loaded node, 4 normal modes", red.n,
           cf_mbs_modal_nmodes(m, 0), (cf_mbs_modal_nmodes(m, 0) + 11) / 12, err, umax, err / umax);
    /* the modal body is geometrically nonlinear (its frame turns by ~u/L): the difference from
     * linear FE is of order u/L relative, 1.2e-5 here (it scales with the load: 1.0e-4 at 10x) */
    CHECK(umax > 1e-6);
    CHECK(err < 3e-5 * umax);
    free(x);
  }
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  cf_reduction_free(&red);
  free(f);
  cf_data_free(fd);
  cf_model_free(fixed);
  cf_model_free(model);
  cf_mesh_free(&mesh);
}

/* ---- 3. virtual body at a modal point = direct joint ---- */
static void test_virtual_body(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(6, 1, 1, 0.3, 0.05, 0.05, &mesh));
  cfModelDef mdef = cf_default_model_def();
  mdef.E = 5e8, mdef.nu = 0.3, mdef.rho = 1000;
  cfModel* model;
  CHECK_OK(cf_model_create(&mesh, &mdef, &model));
  const cfNodeSet* xmin = cf_mesh_find_nset(&mesh, "xmin");
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 6;
  cfReduction red;
  CHECK_OK(cf_reduce(model, xmin->nodes, xmin->count, &ro, &red));
  int tip = nearest_node(&mesh, 0.3, 0.05, 0.05);
  double traj[2][3], phimax[2] = {0, 0};
  for (int virt = 0; virt < 2; virt++) {
    cfMbsDef def;
    cf_mbs_def_init(&def);
    def.opt.dt = 1e-3;
    def.opt.gravity[1] = -9.81;
    cfMbsModalDef md = modal_def(&red, &mesh);
    cfMbsBodyDef fb = frame_def("bar");
    CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == 0);
    CHECK(cf_mbs_add_modal_point(&def, 0, "root", xmin->nodes, xmin->count) == 0);
    cfMbsJointDef j = cf_mbs_default_joint_def();
    snprintf(j.name, sizeof j.name, "hinge");
    j.type = CF_MBS_REVOLUTE, j.body1 = CF_MBS_GROUND, j.axis[0] = 0, j.axis[1] = 0.3, j.axis[2] = 1;
    if (virt) {
      cfMbsBodyDef vb = frame_def("attach");
      vb.is_virtual = 1;
      vb.pos[1] = vb.pos[2] = 0.025; /* anywhere: it is assembled onto the modal point */
      CHECK(cf_mbs_add_body(&def, &vb) == 1);
      cfMbsJointDef fx = cf_mbs_default_joint_def();
      snprintf(fx.name, sizeof fx.name, "weld");
      fx.type = CF_MBS_FIXED, fx.body1 = 1, fx.body2 = 0, fx.modal_point2 = 0;
      CHECK(cf_mbs_add_joint(&def, &fx) == 0);
      j.body2 = 1;
      j.point[1] = j.point[2] = 0.025;
    } else {
      j.body2 = 0, j.modal_point2 = 0;
    }
    CHECK(cf_mbs_add_joint(&def, &j) >= 0);
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    CHECK_OK(cf_mbs_model_create(&def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      while (d->t < 0.4 - 1e-12) {
        if (cf_mbs_step(m, d) < 0) {
          CHECK_OK(-1);
          break;
        }
        phimax[virt] = fmax(phimax[virt], d->phi_max);
      }
      double v[3];
      cf_mbs_modal_node(m, d, 0, tip, traj[virt], v);
    }
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_def_free(&def);
  }
  double dx = 0, sw = 0;
  for (int i = 0; i < 3; i++) dx = fmax(dx, fabs(traj[1][i] - traj[0][i]));
  sw = hypot(traj[0][0] - 0.3, traj[0][1] - 0.05);
  printf("pendulum hinged at a modal point: tip after 0.4 s (%.6f, %.6f, %.6f), swung %.3f m; via a virtual body: "
         "difference %.2e m; constraint violation %.1e / %.1e\n",
         traj[0][0], traj[0][1], traj[0][2], sw, dx, phimax[0], phimax[1]);
  CHECK(sw > 0.05);
  CHECK(dx < 1e-9); /* 2e-11 seen */
  CHECK(phimax[0] < 1e-8 && phimax[1] < 1e-8);
  cf_reduction_free(&red);
  cf_model_free(model);
  cf_mesh_free(&mesh);
}

int main(void) {
  test_derivatives();
  test_statics(0);
  test_statics(1);
  test_virtual_body();
  TEST_END();
}
