/* Statics: (1) under a small load the co-rotational solution equals linear FEM to 1e-6;
 * (2) a cantilever under a small tip load converges to Timoshenko beam theory as the mesh is
 * refined; (3) large rotations (P L^2/(E I) = 5, and a strip twisted by 90 degrees) converge at
 * every increment with the consistent tangent, and the tip rotation is far from linear. */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/scene.h"
#include "cofem/static.h"

typedef struct Beam {
  cfMesh mesh;
  cfModel* m;
  cfData* d;
  double* f;
} Beam;

/* Cantilever along x, clamped at x = 0, total tip force P spread equally over the x = L nodes. */
static void beam_create(Beam* b, int nx, int ny, int nz, double L, double w, double h, const double* P) {
  CHECK_OK(cf_mesh_box(nx, ny, nz, L, w, h, &b->mesh));
  cfModelDef def = cf_default_model_def();
  CHECK_OK(cf_model_create(&b->mesh, &def, &b->m));
  const cfNodeSet* clamp = cf_mesh_find_nset(&b->mesh, "xmin");
  const cfNodeSet* tip = cf_mesh_find_nset(&b->mesh, "xmax");
  CHECK_OK(cf_model_fix_nodes(b->m, clamp->nodes, clamp->count, 7));
  CHECK_OK(cf_data_create(b->m, &b->d));
  b->f = calloc(b->m->ndof, sizeof(double));
  for (int i = 0; i < tip->count; i++)
    for (int k = 0; k < 3; k++) b->f[3 * tip->nodes[i] + k] = P[k] / tip->count;
}

static void beam_free(Beam* b) {
  free(b->f);
  cf_data_free(b->d);
  cf_model_free(b->m);
  cf_mesh_free(&b->mesh);
}

/* mean displacement of the tip face */
static void tip_u(const Beam* b, double* u) {
  cf_set_displacement(&b->mesh, cf_mesh_find_nset(&b->mesh, "xmax"), b->d->x, u);
}

/* Euler-Bernoulli elastica of a cantilever under a tip force of fixed direction, load parameter
 * lp = P L^2 / (E I), L = 1: theta'' = -lp cos(theta), theta(0) = 0, theta'(1) = 0, shot on
 * theta'(0) by bisection with RK4 (2000 steps); tip (u/L, w/L) = (int cos - 1, -int sin) */
static void elastica_tip(double lp, double* u, double* w) {
  double lo = 0, hi = lp, x = 0, z = 0;
  for (int it = 0; it < 60; it++) {
    double k0 = 0.5 * (lo + hi), th = 0, k = k0, h = 1.0 / 2000;
    x = z = 0;
    for (int i = 0; i < 2000; i++) {
      double a1t = k, a1k = -lp * cos(th);
      double a2t = k + h / 2 * a1k, a2k = -lp * cos(th + h / 2 * a1t);
      double a3t = k + h / 2 * a2k, a3k = -lp * cos(th + h / 2 * a2t);
      double a4t = k + h * a3k, a4k = -lp * cos(th + h * a3t);
      double th1 = th + h / 6 * (a1t + 2 * a2t + 2 * a3t + a4t);
      k += h / 6 * (a1k + 2 * a2k + 2 * a3k + a4k);
      x += h / 6 * (cos(th) + 4 * cos(0.5 * (th + th1)) + cos(th1));
      z += h / 6 * (sin(th) + 4 * sin(0.5 * (th + th1)) + sin(th1));
      th = th1;
    }
    if (k > 0) hi = k0; else lo = k0;
  }
  *u = x - 1, *w = -z;
}

static int count_increments(double lf, int it, const cfModel* m, const cfData* d, void* user) {
  int* c = user;
  c[0]++;
  if (it > c[1]) c[1] = it;
  return 0;
}

int main(void) {
  const double E = 210e9, nu = 0.3;
  double k_2044 = 0; /* linear compliance of the 20x4x4 cantilever against Euler-Bernoulli, from (2) */
  /* (1) small load: co-rotational == linear */
  {
    Beam b;
    double P[3] = {0, 0, -10.0};
    beam_create(&b, 10, 2, 2, 1.0, 0.1, 0.1, P);
    CHECK_OK(cf_linear_static(b.m, b.d, b.f));
    double ul[3];
    tip_u(&b, ul);
    cf_data_reset(b.m, b.d);
    cfStaticOptions o = cf_default_static_options();
    o.increments = 1;
    o.tol = 1e-12;
    CHECK_OK(cf_static_solve(b.m, b.d, b.f, &o, NULL, NULL));
    double uc[3];
    tip_u(&b, uc);
    printf("small load: linear tip w %.9e, co-rotational %.9e\n", ul[2], uc[2]);
    CHECK_CLOSE(uc[2], ul[2], 0, 1e-6);
    CHECK(fabs(uc[0] - ul[0]) < 1e-6 * fabs(ul[2]));
    /* same with the K_R tangent */
    cf_data_reset(b.m, b.d);
    o.tangent = CF_TANGENT_KR;
    CHECK_OK(cf_static_solve(b.m, b.d, b.f, &o, NULL, NULL));
    tip_u(&b, uc);
    CHECK_CLOSE(uc[2], ul[2], 0, 1e-6);
    beam_free(&b);
  }
  /* (1b) a load so small that the force residual's target, tol |f|, lies below the round-off of the
   * internal forces (~1e-9 of E L^2 times the positions' eps): statics must still converge, on the
   * correction reaching the positions' round-off, to the linear solution (cofem static of the lug
   * at 1 N without gravity stopped at load factor 0: residual 2.4e-7 N, target 2.5e-9) */
  {
    Beam b;
    double P[3] = {0, 0, -1e-3};
    beam_create(&b, 10, 2, 2, 1.0, 0.1, 0.1, P);
    CHECK_OK(cf_linear_static(b.m, b.d, b.f));
    double ul[3], uc[3];
    tip_u(&b, ul);
    cf_data_reset(b.m, b.d);
    cfStaticOptions o = cf_default_static_options(); /* tol 1e-8 */
    o.increments = 1;
    int st = cf_static_solve(b.m, b.d, b.f, &o, NULL, NULL);
    tip_u(&b, uc);
    printf("tiny load (1 mN): linear tip w %.9e, co-rotational %.9e (status %d)\n", ul[2], uc[2], st);
    CHECK(st == CF_OK); /* (a warning, CF_WARN_STATIC_NOT_CONVERGED, before) */
    CHECK_CLOSE(uc[2], ul[2], 0, 1e-6); /* measured 2.0e-7 */
    beam_free(&b);
  }
  /* (2) convergence to Timoshenko: w = P L^3/(3 E I) + P L/(k G A), k = 5/6 */
  {
    const double L = 1.0, a = 0.1, Pz = -1000.0;
    double I = a * a * a * a / 12, A = a * a, G = E / (2 * (1 + nu));
    double w_ref = Pz * L * L * L / (3 * E * I) + Pz * L / (5.0 / 6.0 * G * A);
    double prev_err = 1e9;
    int levels[3] = {1, 2, 4};
    for (int l = 0; l < 3; l++) {
      int r = levels[l];
      Beam b;
      double P[3] = {0, 0, Pz};
      beam_create(&b, 10 * r, 2 * r, 2 * r, L, a, a, P);
      CHECK_OK(cf_linear_static(b.m, b.d, b.f));
      double u[3];
      tip_u(&b, u);
      double err = fabs(u[2] - w_ref) / fabs(w_ref);
      if (r == 2) k_2044 = fabs(u[2]) / fabs(Pz * L * L * L / (3 * E * I)); /* vs Euler-Bernoulli */
      printf("cantilever %dx%dx%d cells (%d tets): tip w %.6e, beam theory %.6e, error %.2f%%\n", 10 * r, 2 * r,
             2 * r, b.m->ntet, u[2], w_ref, 100 * err);
      CHECK(err < prev_err); /* converges */
      CHECK(fabs(u[2]) < fabs(w_ref) * 1.01); /* linear tets are stiff: approach from below */
      prev_err = err;
      beam_free(&b);
    }
    CHECK(prev_err < 0.12);
  }
  /* (3a) large rotation: P L^2 / (E I) = 5 */
  {
    const double L = 1.0, a = 0.1;
    double I = a * a * a * a / 12;
    double Pz = -5.0 * E * I / (L * L);
    Beam b;
    double P[3] = {0, 0, Pz};
    beam_create(&b, 20, 4, 4, L, a, a, P);
    CHECK_OK(cf_linear_static(b.m, b.d, b.f));
    double ul[3];
    tip_u(&b, ul);
    cf_data_reset(b.m, b.d);
    cfStaticOptions o = cf_default_static_options();
    o.increments = 10;
    int cnt[2] = {0, 0};
    int st = cf_static_solve(b.m, b.d, b.f, &o, count_increments, cnt);
    CHECK(st == CF_OK);
    double u[3];
    tip_u(&b, u);
    printf("P L^2/EI = 5: co-rotational tip u = (%.4f, %.4f), linear w = %.4f; %d increments, max %d iterations\n",
           u[0], u[2], ul[2], cnt[0], cnt[1]);
    /* the stiffness of this coarse mesh is measured by its own linear solution: scaled so, the
     * elastica of P L^2/(EI) = 5 (w/L = -0.714, u/L = -0.387 at the linear w/L = -5/3) */
    double k = fabs(ul[2]) / (5.0 / 3.0 * L); /* effective compliance ratio of the mesh */
    double eu5, ew5, euk, ewk;
    elastica_tip(5.0, &eu5, &ew5);
    elastica_tip(5.0 * k, &euk, &ewk);
    double de = hypot(u[0] / L - euk, u[2] / L - ewk) / hypot(euk, ewk);
    printf("  mesh compliance ratio vs Euler-Bernoulli %.4f (the 20x4x4 linear cantilever of (2): %.4f)\n", k, k_2044);
    printf("  elastica at 5: (%.4f, %.4f); at 5 k = %.3f: (%.4f, %.4f); mesh tip / L off by %.2f%% of it\n", eu5, ew5,
           5 * k, euk, ewk, 100 * de);
    CHECK_CLOSE(eu5, -0.3876, 1e-4, 0); /* the elastica's known tip at P L^2/(E I) = 5 (shooting: -0.38763) */
    CHECK_CLOSE(ew5, -0.7138, 1e-4, 0); /* (-0.71379) */
    CHECK_CLOSE(k, k_2044, 0, 1e-6); /* the same mesh's linear compliance, any load scale */
    CHECK(de < 0.02); /* measured 0.75%: shear and the coarse section, which the scaled elastica ignores */
    CHECK(u[2] < 0 && fabs(u[2]) < 0.8 * fabs(ul[2])); /* linear FEM is far off */
    CHECK(u[0] < -0.1 * L);                            /* the tip swings back: large rotation */
    CHECK(cnt[0] == 10);                                /* no increment had to be cut */
    CHECK(cnt[1] <= 10);                                /* consistent tangent: fast convergence */
    beam_free(&b);
  }
  /* (3b) a strip twisted by 90 degrees by a torque at its tip (couple of forces) */
  {
    const double L = 0.5, w = 0.05, t = 0.005;
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(40, 8, 1, L, w, t, &mesh));
    cfModelDef def = cf_default_model_def();
    cfModel* m;
    cfData* d;
    CHECK_OK(cf_model_create(&mesh, &def, &m));
    const cfNodeSet* clamp = cf_mesh_find_nset(&mesh, "xmin");
    const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "xmax");
    CHECK_OK(cf_model_fix_nodes(m, clamp->nodes, clamp->count, 7));
    CHECK_OK(cf_data_create(m, &d));
    /* torque T about x giving 90 degrees by Saint-Venant torsion: phi = T L / (G J),
     * J = w t^3 / 3 (1 - 0.63 t / w) */
    double G = E / (2 * (1 + nu)), J = w * t * t * t / 3 * (1 - 0.63 * t / w);
    double T = (M_PI / 2) * G * J / L;
    /* the one-element-thick strip is stiffer than Saint-Venant: scale T so that the linear
     * solution twists by 120 degrees */
    double* f = calloc(m->ndof, sizeof(double));
    /* torque as tangential nodal forces proportional to the distance from the axis */
    double sum_r2 = 0;
    for (int i = 0; i < tip->count; i++) {
      const double* X = m->X + 3 * tip->nodes[i];
      double y = X[1] - w / 2, z = X[2] - t / 2;
      sum_r2 += y * y + z * z;
    }
    for (int i = 0; i < tip->count; i++) {
      const double* X = m->X + 3 * tip->nodes[i];
      double y = X[1] - w / 2, z = X[2] - t / 2;
      f[3 * tip->nodes[i] + 1] = -T * z / sum_r2;
      f[3 * tip->nodes[i] + 2] = T * y / sum_r2;
    }
    /* twist angle of the tip: direction of the tip's width vector */
    int a = -1, c = -1;
    for (int i = 0; i < tip->count; i++) {
      const double* X = m->X + 3 * tip->nodes[i];
      if (X[1] < 1e-9 && X[2] < 1e-9) a = tip->nodes[i];
      if (X[1] > w - 1e-9 && X[2] < 1e-9) c = tip->nodes[i];
    }
    CHECK_OK(cf_linear_static(m, d, f));
    double phi_lin = (d->x[3 * c + 2] - d->x[3 * a + 2]) / w; /* small-angle twist, radians */
    for (int i = 0; i < m->ndof; i++) f[i] *= (120 * M_PI / 180) / phi_lin;
    cf_data_reset(m, d);
    cfStaticOptions o = cf_default_static_options();
    o.increments = 10;
    int cnt[2] = {0, 0};
    int st = cf_static_solve(m, d, f, &o, count_increments, cnt);
    CHECK(st == CF_OK);
    double dy = d->x[3 * c + 1] - d->x[3 * a + 1], dz = d->x[3 * c + 2] - d->x[3 * a + 2];
    double angle = atan2(dz, dy) * 180 / M_PI;
    printf("strip: twist %.1f degrees under the torque that twists the linear model by 120; %d increments, max %d iterations\n",
           angle, cnt[0], cnt[1]);
    CHECK(angle > 50); /* well past where the K_R tangent alone stalls */
    free(f);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  TEST_END();
}
