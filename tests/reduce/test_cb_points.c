/* Interface points with rotations (cf_reduce_points; docs/craig-bampton.md "Interface points"),
 * on the slender 1 x 0.02 x 0.02 m bar (meshes/beam_slender_100x2x2.inp) clamped at x = 0 (set
 * "fixed"), the point at the x = 1 face (set "load", 9 nodes):
 *  1. rigid point, 6 DOFs, static modes only: the point's 6x6 compliance (K_r^-1) against beam
 *     theory, tip force P: v = P L^3/3EI, tip moment M: v = M L^2/2EI, th = M L/EI; the mesh's own
 *     error measured independently by the full FE solution (cf_linear_static) under a uniform tip
 *     load, and the rigid point may be at most a few % stiffer than that;
 *  2. averaging point: its translation compliance equals the full FE mean tip deflection under
 *     the uniform load f_n = F/N (what G^T spreads a point force to), to round-off; the stored
 *     point motion equals the node average of every mode;
 *  3. the pin: a rigid point keeping u_x, u_y only gives 2 static modes, paper 000's axial
 *     (u_x(x) = x/L, stiffness EA/L) and bending (the tip-loaded cantilever's shape
 *     v(x) = (3 L x^2 - x^3)/2L^3, free end rotation 3/2L, stiffness 3EI/L^3);
 *  4. file round trip (version 3), a file without points stays version 2; bad input refused;
 *  5. a free part held by one rigid point only: accepted, its static fields being its rigid motions. */
#include <string.h>
#include <unistd.h>
#include <lapacke.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/modal.h"
#include "cofem/reduce.h"
#include "cofem/static.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

/* inverse of the n x n symmetric K (row-major) into C */
static int invert(const double* K, int n, double* C) {
  memcpy(C, K, sizeof(double) * n * n);
  lapack_int ipiv[64];
  if (LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, C, n, ipiv) != 0) return -1;
  return LAPACKE_dgetri(LAPACK_ROW_MAJOR, n, C, n, ipiv) == 0 ? 0 : -1;
}

int main(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/meshes/beam_slender_100x2x2.inp", COFEM_SOURCE_DIR);
  cfMesh mesh;
  int st = cf_mesh_read(path, &mesh);
  CHECK_OK(st);
  if (st < 0) return 1;
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  const cfNodeSet* fix = cf_mesh_find_nset(&mesh, "fixed");
  const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "load");
  CHECK(fix && tip);
  if (!fix || !tip) return 1;
  CHECK_OK(cf_model_fix_nodes(m, fix->nodes, fix->count, 7));
  const double E = m->def.E, a = 0.02, L = 1.0, A = a * a, Iz = a * a * a * a / 12;
  const int ndof = m->ndof;

  /* the mesh's own bending error: full FE, uniform tip load F in y, mean tip deflection */
  double mean_fe = 0;
  {
    double* f = calloc(ndof, sizeof(double));
    for (int k = 0; k < tip->count; k++) f[3 * tip->nodes[k] + 1] = 1.0 / tip->count;
    cfData* d;
    CHECK_OK(cf_data_create(m, &d));
    CHECK_OK(cf_linear_static(m, d, f));
    for (int k = 0; k < tip->count; k++) mean_fe += (d->x[3 * tip->nodes[k] + 1] - m->X[3 * tip->nodes[k] + 1]) / tip->count;
    cf_data_free(d);
    free(f);
  }
  const double v_beam = L * L * L / (3 * E * Iz);
  printf("full FE, uniform tip load 1 N: mean deflection %.6e m, beam theory %.6e m (ratio %.4f: the mesh's error)\n",
         mean_fe, v_beam, mean_fe / v_beam);

  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 0;
  ro.orthonormalise = 0; /* K_r in the point's DOFs: the static modes are the unit point motions */

  /* 1. rigid point, all 6 DOFs */
  {
    cfInterfacePoint p = {tip->nodes, tip->count, CF_POINT_RIGID, 0};
    cfReduction r;
    CHECK_OK(cf_reduce_points(m, NULL, 0, &p, 1, &ro, &r));
    CHECK(r.n == 6 && r.nb == 6 && r.npoint == 1);
    if (r.n == 6) {
      double C[36];
      CHECK(invert(r.Kr, 6, C) == 0);
      double vP = C[1 * 6 + 1], vM = C[1 * 6 + 5], thM = C[5 * 6 + 5];
      double vP_b = v_beam, vM_b = L * L / (2 * E * Iz), thM_b = L / (E * Iz);
      printf("rigid point: tip force: v/P %.6e (beam %.6e, ratio %.4f); tip moment: v/M %.6e (beam %.6e, ratio %.4f), "
             "th/M %.6e (beam %.6e, ratio %.4f)\n", vP, vP_b, vP / vP_b, vM, vM_b, vM / vM_b, thM, thM_b, thM / thM_b);
      /* the rigid point is at most a little stiffer than the uniform load (it holds the face flat):
       * measured 0.9992 of the FE compliance */
      CHECK(vP <= mean_fe * (1 + 1e-6) && vP >= 0.98 * mean_fe);
      /* against beam theory within the mesh's error: measured ratio / FE ratio 0.99-1.00 for all three */
      CHECK(fabs(vP / vP_b / (mean_fe / v_beam) - 1) < 0.03);
      CHECK(fabs(vM / vM_b / (mean_fe / v_beam) - 1) < 0.03);
      CHECK(fabs(thM / thM_b / (mean_fe / v_beam) - 1) < 0.03);
      /* the mesh's error itself: linear tetrahedra lock, measured ratio printed above */
      CHECK(mean_fe / v_beam > 0.5 && mean_fe / v_beam < 1.05);
      /* axial compliance L/EA: tetrahedra do not lock in tension (measured in the print) */
      printf("rigid point: axial u/N %.6e (beam L/EA %.6e, ratio %.4f)\n", C[0], L / (E * A), C[0] * E * A / L);
      CHECK(fabs(C[0] * E * A / L - 1) < 0.02);
    }
    /* the rigid point's modes move its set rigidly: node k's displacement = u_P + th x r_k */
    double worst = 0;
    for (int j = 0; j < r.n; j++) {
      const double* b = r.basis + (size_t)j * ndof;
      double uP[3], th[3];
      for (int c = 0; c < 3; c++) uP[c] = r.points[0].motion[c * r.n + j], th[c] = r.points[0].motion[(3 + c) * r.n + j];
      for (int k = 0; k < tip->count; k++) {
        const int n = tip->nodes[k];
        double rr[3];
        for (int c = 0; c < 3; c++) rr[c] = m->X[3 * n + c] - r.points[0].x[c];
        double w[3] = {uP[0] + th[1] * rr[2] - th[2] * rr[1], uP[1] + th[2] * rr[0] - th[0] * rr[2],
                       uP[2] + th[0] * rr[1] - th[1] * rr[0]};
        for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(b[3 * n + c] - w[c]));
      }
      for (int c = 0; c < 6; c++) CHECK_CLOSE(r.points[0].motion[c * r.n + j], c == j ? 1.0 : 0.0, 1e-9, 0);
    }
    printf("rigid point: largest deviation of its set from the rigid motion %.2e\n", worst);
    CHECK(worst < 1e-10);
    /* file round trip: version 3 */
    char file[64];
    snprintf(file, sizeof file, "/tmp/cofem_cb_points_%d.cfred", (int)getpid());
    CHECK_OK(cf_reduction_write(&r, file));
    CHECK(cf_reduction_file_version(file) == 3);
    cfReduction r2;
    CHECK_OK(cf_reduction_read(file, &r2));
    CHECK(r2.npoint == 1 && r2.points && r2.points[0].nnode == tip->count && r2.points[0].kind == CF_POINT_RIGID);
    if (r2.points) CHECK(memcmp(r2.points[0].motion, r.points[0].motion, sizeof(double) * 6 * r.n) == 0);
    CHECK(r2.nb == 6 && r2.bdof[5] == -6);
    cf_reduction_free(&r2);
    /* a reduction without points: version 2, as before */
    cfReduction r0;
    CHECK_OK(cf_reduce(m, tip->nodes, tip->count, &ro, &r0));
    CHECK_OK(cf_reduction_write(&r0, file));
    CHECK(cf_reduction_file_version(file) == 2);
    CHECK_OK(cf_reduction_read(file, &r2));
    CHECK(r2.npoint == 0 && r2.nb == 27);
    cf_reduction_free(&r2);
    cf_reduction_free(&r0);
    remove(file);
    cf_reduction_free(&r);
  }

  /* 2. averaging point: exact against the full FE mean under the uniform load */
  {
    cfInterfacePoint p = {tip->nodes, tip->count, CF_POINT_AVERAGING, 0};
    cfReduction r;
    CHECK_OK(cf_reduce_points(m, NULL, 0, &p, 1, &ro, &r));
    if (r.n == 6) {
      double C[36];
      CHECK(invert(r.Kr, 6, C) == 0);
      printf("averaging point: v/P %.9e, full FE mean under F/N per node %.9e (relative %.1e)\n", C[7], mean_fe,
             C[7] / mean_fe - 1);
      CHECK_CLOSE(C[7], mean_fe, 0, 1e-8); /* measured 1e-13 */
      /* stored motion = node average of every mode (translations), and the unit point motions */
      double worst = 0;
      for (int j = 0; j < r.n; j++) {
        for (int c = 0; c < 3; c++) {
          double avg = 0;
          for (int k = 0; k < tip->count; k++) avg += r.basis[(size_t)j * ndof + 3 * tip->nodes[k] + c] / tip->count;
          worst = fmax(worst, fabs(avg - r.points[0].motion[c * r.n + j]));
          CHECK_CLOSE(avg, c == j ? 1.0 : 0.0, 1e-9, 0);
        }
      }
      printf("averaging point: |node average - point motion| <= %.2e\n", worst);
      CHECK(worst < 1e-12);
      /* the set deforms (not rigid): the rotation mode's face is not flat */
    }
    cf_reduction_free(&r);
    /* nothing else holds the part: refused with a message naming the averaging point */
    cfModel* mf;
    CHECK_OK(cf_model_create(&mesh, &def, &mf));
    CHECK(cf_reduce_points(mf, NULL, 0, &p, 1, &ro, &r) < 0);
    printf("refused (free part): %s\n", cf_last_error());
    CHECK(strstr(cf_last_error(), "averaging") != NULL);
    cf_model_free(mf);
  }

  /* 3. the pin: u_x, u_y kept, the rest free: paper 000's axial + bending static modes */
  {
    cfInterfacePoint p = {tip->nodes, tip->count, CF_POINT_RIGID, 0x3};
    cfReduction r;
    CHECK_OK(cf_reduce_points(m, NULL, 0, &p, 1, &ro, &r));
    CHECK(r.n == 2);
    if (r.n == 2) {
      /* stiffnesses: EA/L and 3EI/L^3 (the mesh's error as above) */
      printf("pin: axial stiffness %.6e (EA/L %.6e, ratio %.4f), bending %.6e (3EI/L^3 %.6e, ratio %.4f; 1/mesh ratio %.4f)\n",
             r.Kr[0], E * A / L, r.Kr[0] * L / (E * A), r.Kr[3], 3 * E * Iz / (L * L * L), r.Kr[3] / (3 * E * Iz),
             v_beam / mean_fe);
      CHECK(fabs(r.Kr[0] * L / (E * A) - 1) < 0.02);
      CHECK(fabs(r.Kr[3] * L * L * L / (3 * E * Iz) * (mean_fe / v_beam) - 1) < 0.03);
      printf("pin: axial-bending coupling K_r[0][1] %.3e (%.1e of the axial)\n", r.Kr[1], r.Kr[1] / r.Kr[0]);
      /* nearly uncoupled: the structured 6-tet mesh is not symmetric in y; measured 0.045 */
      CHECK(fabs(r.Kr[1]) < 0.15 * sqrt(r.Kr[0] * r.Kr[3]));
      /* shapes on the centre line nodes y = z = 0.01 at x = 0.25, 0.5, 0.75 */
      double worst_ax = 0, worst_b = 0;
      for (int i = 0; i < m->nnode; i++) {
        const double* X = m->X + 3 * i;
        if (fabs(X[1] - 0.01) > 1e-9 || fabs(X[2] - 0.01) > 1e-9) continue;
        double x = X[0] / L;
        if (fabs(x - 0.25) > 1e-9 && fabs(x - 0.5) > 1e-9 && fabs(x - 0.75) > 1e-9) continue;
        double ux = r.basis[3 * i], vy = r.basis[(size_t)ndof + 3 * i + 1];
        double v_b = (3 * x * x - x * x * x) / 2;
        printf("pin: x = %.2f: axial mode u_x %.5f (x/L %.5f), bending mode v %.5f (beam %.5f)\n", x, ux, x, vy, v_b);
        worst_ax = fmax(worst_ax, fabs(ux - x));
        worst_b = fmax(worst_b, fabs(vy - v_b));
      }
      CHECK(worst_ax < 0.01);  /* measured in the print */
      CHECK(worst_b < 0.02);   /* measured in the print */
      double th = r.points[0].motion[5 * r.n + 1];
      printf("pin: bending mode's free end rotation %.5f rad (beam 3/2L %.5f)\n", th, 1.5 / L);
      CHECK(fabs(th * L / 1.5 - 1) < 0.02);
    }
    cf_reduction_free(&r);
  }

  /* the sparse (Lanczos, the default from 100 free DOFs) and dense fixed-interface solves give the
   * same reduction: the pin with 8 normal modes */
  {
    cfInterfacePoint p = {tip->nodes, tip->count, CF_POINT_RIGID, 0x3};
    cfReduceOptions o2 = cf_default_reduce_options();
    o2.nmodes = 8;
    cfReduction rs, rd;
    o2.modal.method = CF_MODAL_LANCZOS;
    CHECK_OK(cf_reduce_points(m, NULL, 0, &p, 1, &o2, &rs));
    double ts = rs.t_normal;
    o2.modal.method = CF_MODAL_DENSE;
    CHECK_OK(cf_reduce_points(m, NULL, 0, &p, 1, &o2, &rd));
    double worst = 0;
    for (int i = 0; i < rs.n && i < rd.n; i++) worst = fmax(worst, fabs(rs.omega2[i] / rd.omega2[i] - 1));
    printf("pin + 8 normal modes: Lanczos %.4f s, dense %.4f s; largest relative w^2 difference %.1e\n", ts,
           rd.t_normal, worst);
    CHECK(rs.n == 10 && rd.n == 10);
    CHECK(worst < 1e-7); /* measured in the print */
    cf_reduction_free(&rs);
    cf_reduction_free(&rd);
  }

  /* bad input */
  {
    cfReduction r;
    cfInterfacePoint p = {tip->nodes, tip->count, CF_POINT_RIGID, 0};
    CHECK(cf_reduce_points(m, tip->nodes, 1, &p, 1, &ro, &r) < 0); /* node in both */
    printf("refused: %s\n", cf_last_error());
    int line[2] = {tip->nodes[0], tip->nodes[1]};
    cfInterfacePoint pl = {line, 2, CF_POINT_RIGID, 0};
    CHECK(cf_reduce_points(m, NULL, 0, &pl, 1, &ro, &r) < 0); /* collinear */
    printf("refused: %s\n", cf_last_error());
    cfInterfacePoint pf = {fix->nodes, fix->count, CF_POINT_RIGID, 0};
    CHECK(cf_reduce_points(m, NULL, 0, &pf, 1, &ro, &r) < 0); /* on the support */
    printf("refused: %s\n", cf_last_error());
  }
  cf_model_free(m);
  cf_mesh_free(&mesh);

  /* 5. a free part held by one rigid point only (the spin-up beam's root layer, kane_beam_c: 808
   * nodes, linear tetrahedra): its six static fields are its rigid motions, which carry no strain
   * energy beyond round-off. Accepted (it was refused, "the static fields carry no strain energy",
   * by an exact-zero test that round-off decided), six rigid-body modes, and the free-interface
   * frequencies from above within the truncation error of the full model's Lanczos. */
  {
    cfMesh kb;
    CHECK_OK(cf_mesh_read(COFEM_SOURCE_DIR "/meshes/kane_beam_c.msh", &kb));
    cfModelDef kd = cf_default_model_def();
    kd.E = 7e10, kd.nu = 0.3, kd.rho = 3000;
    cfModel* mk;
    CHECK_OK(cf_model_create(&kb, &kd, &mk));
    const cfNodeSet* root = cf_mesh_find_nset(&kb, "root");
    CHECK(root != NULL);
    double wf[9];
    cfModalOptions mo = cf_default_modal_options();
    mo.shift = -1, mo.max_basis = 60;
    CHECK_OK(cf_modal_solve(mk, 9, &mo, wf, NULL, NULL));
    cfReduceOptions o5 = cf_default_reduce_options();
    o5.nmodes = 8;
    cfInterfacePoint pr = {root ? root->nodes : NULL, root ? root->count : 0, CF_POINT_RIGID, 0};
    cfReduction r5;
    int st5 = cf_reduce_points(mk, NULL, 0, &pr, 1, &o5, &r5);
    CHECK_OK(st5);
    if (st5 >= 0) {
      CHECK(r5.nrigid == 6);
      double lo = INFINITY, hi = 0;
      for (int i = 6; i < 9; i++) {
        const double e = r5.omega2[i] / wf[i] - 1;
        lo = fmin(lo, e), hi = fmax(hi, e);
      }
      printf("free beam, one rigid point: %d rigid-body modes, free modes 1-3 within %+.2e .. %+.2e (w^2) of the "
             "full eigen-solve's\n", r5.nrigid, lo, hi);
      CHECK(lo > -1e-6); /* Rayleigh-Ritz: from above (measured +2.6e-4) */
      CHECK(hi < 0.01);  /* measured 2.2e-3 */
      cf_reduction_free(&r5);
    }
    cf_model_free(mk);
    cf_mesh_free(&kb);
  }
  TEST_END();
}
