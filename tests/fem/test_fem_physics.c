/* Physics of the FE model against answers that do not come from the model (issue 18):
 * (1) consistent mass: the kinetic energy of a rigid rotation, 1/2 v^T M v, equals the closed-form
 *     moment of inertia of the box (the consistent mass integrates rho |v|^2 of a linear field
 *     exactly; the lumped and the one-point rules do not), and of a rigid translation rho V;
 * (2) Lame constants: a uniaxial-stress patch test (symmetry supports, uniform traction on the
 *     x = L face as the boundary triangles' area / 3) has the homogeneous solution
 *     u = sigma/E (x, -nu y, -nu z), which linear tets represent exactly: every node to 1e-9;
 *     the co-rotational static solve under the same small load agrees; a simple-shear field
 *     has the strain energy G gamma^2 / 2 V;
 * (3) Rayleigh mass-proportional damping: an unsupported body translating freely feels no
 *     elastic force, so its velocity obeys dv/dt = -alpha v: backward Euler gives
 *     v_n = v_0 / (1 + h alpha)^n, Newmark (trapezoidal) v_n = v_0 ((1 - h alpha/2)/(1 + h alpha/2))^n,
 *     both within O(h alpha)^2 of exp(-alpha t); the clamped cantilever's free vibration decays
 *     as exp(-alpha t / 2) in every mode (zeta w = alpha / 2, closed form, independent of K);
 * (4) applied load in time: an unsupported body pulled at one face by a ramp F(t) = c t: the
 *     elastic forces sum to zero, so the total momentum is the impulse, c t^2 / 2 (Newmark's
 *     h/2 (F0 + F1) integrates the ramp exactly: 1e-12), backward Euler's h F1 gives
 *     c h^2 n (n + 1) / 2 exactly; and the centre of mass moves by c t^3 / (6 m) within O(h^2). */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/scene.h"
#include "cofem/static.h"

static const double E = 210e9, NU = 0.3, RHO = 7850;

static double total_momentum(const cfModel* m, const cfData* d, int k) {
  double s = 0; /* 1^T M v = sum of the row sums (node masses) times v, M symmetric */
  for (int i = 0; i < m->nnode; i++)
    for (int j = m->row_ptr[i]; j < m->row_ptr[i + 1]; j++) s += m->Mblk[j] * d->v[3 * m->col[j] + k];
  return s;
}

static int* nodes_where(const cfMesh* mesh, int axis, double value, int* count) {
  int* out = malloc(sizeof(int) * mesh->nnode);
  int c = 0;
  for (int i = 0; i < mesh->nnode; i++)
    if (fabs(mesh->X[3 * i + axis] - value) < 1e-9) out[c++] = i;
  *count = c;
  return out;
}

int main(void) {
  const double L = 1.0, a = 0.1, b = 0.06;
  /* (1) consistent mass against the box's inertia */
  {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(10, 3, 2, L, a, b, &mesh));
    for (int cm = 1; cm >= 0; cm--) {
      cfModelDef def = cf_default_model_def();
      def.consistent_mass = cm;
      cfModel* m;
      CHECK_OK(cf_model_create(&mesh, &def, &m));
      cfData* d;
      CHECK_OK(cf_data_create(m, &d));
      /* box [0,L]x[0,a]x[0,b] (cf_mesh_box's frame), centre c; rotation about the x axis through
       * the centre with rate 1: I_x = m (a^2 + b^2) / 12; about z through the origin:
       * I_z = m (L^2 + a^2) / 3 */
      double mass = RHO * L * a * b, cy = a / 2, cz = b / 2;
      double Ix = mass * (a * a + b * b) / 12, Iz0 = mass * (L * L + a * a) / 3;
      for (int i = 0; i < m->nnode; i++) {
        const double* X = m->X + 3 * i;
        d->v[3 * i] = 0, d->v[3 * i + 1] = -(X[2] - cz), d->v[3 * i + 2] = X[1] - cy;
      }
      double Tx = cf_kinetic_energy(m, d);
      for (int i = 0; i < m->nnode; i++) {
        const double* X = m->X + 3 * i;
        d->v[3 * i] = -X[1], d->v[3 * i + 1] = X[0], d->v[3 * i + 2] = 0;
      }
      double Tz = cf_kinetic_energy(m, d);
      for (int i = 0; i < m->ndof; i++) d->v[i] = (i % 3 == 1) ? 1.0 : 0.0;
      double Tt = cf_kinetic_energy(m, d), P = total_momentum(m, d, 1);
      printf("%s mass: 2T / (rho V) %.15f (1), rotation about x: 2T / I_x - 1 = %+.3e, about z: %+.3e\n",
             cm ? "consistent" : "lumped", 2 * Tt / mass, 2 * Tx / Ix - 1, 2 * Tz / Iz0 - 1);
      CHECK_CLOSE(2 * Tt, mass, 0, 1e-13); /* both rules keep the mass (measured 4e-15) */
      CHECK_CLOSE(P, mass, 0, 1e-13);
      if (cm) {
        CHECK_CLOSE(2 * Tx, Ix, 0, 1e-13); /* exact quadrature: measured 3e-15 */
        CHECK_CLOSE(2 * Tz, Iz0, 0, 1e-13); /* measured 0 */
      } else {
        /* rho V / 4 at the vertices: for the convex |v|^2 of a linear field the vertex mean
         * is at least the element mean (Jensen), so the lumped energy lies above the exact one */
        CHECK(2 * Tx / Ix - 1 > 0.1); /* measured +0.296 */
        CHECK(2 * Tz / Iz0 - 1 > 1e-3); /* measured +5.5e-3 */
      }
      cf_data_free(d);
      cf_model_free(m);
    }
    cf_mesh_free(&mesh);
  }
  /* (2) Lame constants: uniaxial stress patch test, and pure shear energy */
  {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(6, 2, 2, L, a, b, &mesh));
    cfModelDef def = cf_default_model_def();
    cfModel* m;
    CHECK_OK(cf_model_create(&mesh, &def, &m));
    for (int ax = 0; ax < 3; ax++) { /* symmetry planes x = 0, y = 0, z = 0 */
      int c, *s = nodes_where(&mesh, ax, 0.0, &c);
      CHECK_OK(cf_model_fix_nodes(m, s, c, 1 << ax));
      free(s);
    }
    cfData* d;
    CHECK_OK(cf_data_create(m, &d));
    const double sigma = 1e6;
    double* f = calloc(m->ndof, sizeof(double)), fsum = 0;
    static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    for (int e = 0; e < m->ntet; e++)
      for (int k = 0; k < 4; k++) {
        const int* t = m->tet + 4 * e;
        const double *p0 = m->X + 3 * t[face[k][0]], *p1 = m->X + 3 * t[face[k][1]], *p2 = m->X + 3 * t[face[k][2]];
        if (fabs(p0[0] - L) > 1e-9 || fabs(p1[0] - L) > 1e-9 || fabs(p2[0] - L) > 1e-9) continue;
        double u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]}, w[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        double cx = u[1] * w[2] - u[2] * w[1], cy = u[2] * w[0] - u[0] * w[2], cz = u[0] * w[1] - u[1] * w[0];
        double area = 0.5 * sqrt(cx * cx + cy * cy + cz * cz);
        for (int j = 0; j < 3; j++) f[3 * t[face[k][j]]] += sigma * area / 3;
        fsum += sigma * area;
      }
    CHECK_CLOSE(fsum, sigma * a * b, 0, 1e-12);
    double umax = sigma * L / E;
    for (int pass = 0; pass < 2; pass++) {
      cf_data_reset(m, d);
      if (pass == 0) {
        CHECK_OK(cf_linear_static(m, d, f));
      } else { /* co-rotational: a pure stretch has R = I, so the same solution */
        cfStaticOptions o = cf_default_static_options();
        o.increments = 1;
        o.tol = 1e-12;
        CHECK_OK(cf_static_solve(m, d, f, &o, NULL, NULL));
      }
      double err = 0;
      for (int i = 0; i < m->nnode; i++) {
        const double* X = m->X + 3 * i;
        double ref[3] = {sigma * X[0] / E, -NU * sigma * X[1] / E, -NU * sigma * X[2] / E};
        for (int k = 0; k < 3; k++) err = fmax(err, fabs(d->x[3 * i + k] - X[k] - ref[k]));
      }
      printf("uniaxial stress patch test (%s): max nodal error %.3e of sigma L / E = %.3e\n",
             pass ? "co-rotational static" : "linear static", err / umax, umax);
      CHECK(err < 1e-10 * umax); /* measured 1.3e-11 for both */
    }
    /* pure shear u = gamma/2 (y, x, 0): no rotation, strain energy G gamma^2 / 2 V */
    const double gamma = 1e-4, G = E / (2 * (1 + NU));
    cf_data_reset(m, d);
    for (int i = 0; i < m->nnode; i++) {
      d->x[3 * i] += 0.5 * gamma * m->X[3 * i + 1];
      d->x[3 * i + 1] += 0.5 * gamma * m->X[3 * i];
    }
    double U = cf_strain_energy(m, d), Uref = 0.5 * G * gamma * gamma * L * a * b;
    printf("pure shear: strain energy / (G gamma^2 V / 2) - 1 = %+.3e\n", U / Uref - 1);
    CHECK_CLOSE(U, Uref, 0, 3e-11); /* measured 3.2e-12 */
    /* volumetric u = eps (x, y, z): energy K (3 eps)^2 / 2 V, K = E / (3 (1 - 2 nu)) */
    const double eps = 1e-5, Kb = E / (3 * (1 - 2 * NU));
    cf_data_reset(m, d);
    for (int i = 0; i < m->ndof; i++) d->x[i] += eps * m->X[i];
    U = cf_strain_energy(m, d), Uref = 0.5 * Kb * 9 * eps * eps * L * a * b;
    printf("dilatation: strain energy / (K (3 eps)^2 V / 2) - 1 = %+.3e\n", U / Uref - 1);
    CHECK_CLOSE(U, Uref, 0, 5e-11); /* measured 8.8e-12 */
    free(f);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  /* (3) Rayleigh alpha on a free translation, (4) a ramp load on a free body */
  for (int integ = 0; integ <= 1; integ++) {
    cfMesh mesh;
    CHECK_OK(cf_mesh_box(8, 2, 2, L, a, b, &mesh));
    cfModelDef def = cf_default_model_def();
    def.integrator = integ;
    def.pcg_tol = 1e-12;
    def.dt = 1e-3;
    def.rayleigh_alpha = 20.0;
    def.rayleigh_beta = 1e-4; /* acts on deformation only: none here */
    cfModel* m;
    CHECK_OK(cf_model_create(&mesh, &def, &m));
    cfData* d;
    CHECK_OK(cf_data_create(m, &d));
    const double h = def.dt, al = def.rayleigh_alpha, mass = RHO * L * a * b;
    for (int i = 0; i < m->ndof; i++) d->v[i] = (i % 3 == 2) ? 1.0 : 0.0;
    const int n = 50;
    for (int k = 0; k < n; k++) CHECK(cf_step(m, d) == CF_OK);
    double vz = total_momentum(m, d, 2) / mass, spread = 0;
    for (int i = 0; i < m->nnode; i++) spread = fmax(spread, fabs(d->v[3 * i + 2] - vz));
    double g = integ ? (1 - h * al / 2) / (1 + h * al / 2) : 1 / (1 + h * al), vd = pow(g, n), vc = exp(-al * n * h);
    printf("%s, free translation, Rayleigh alpha %g 1/s, %d steps of %g s: v / v0 = %.12f, scheme %.12f "
           "(%+.2e), exp(-alpha t) %.12f (%+.2e), spread %.1e\n",
           integ ? "Newmark" : "backward Euler", al, n, h, vz, vd, vz / vd - 1, vc, vz / vc - 1, spread);
    CHECK_CLOSE(vz, vd, 0, 1e-9); /* the scheme's own amplification (measured 1.6e-10, 7.8e-11) */
    CHECK_CLOSE(vz, vc, 0, integ ? 1e-4 : 2e-2); /* the ODE: Newmark -3.3e-5 (alpha^3 t h^2 / 12), BE +9.9e-3 */
    CHECK(spread < 1e-9);
    cf_data_free(d);
    cf_model_free(m);

    /* (4) ramp F(t) = c t in x at the x = L face, no damping */
    def.rayleigh_alpha = 0;
    def.rayleigh_beta = 0;
    CHECK_OK(cf_model_create(&mesh, &def, &m));
    CHECK_OK(cf_data_create(m, &d));
    const cfNodeSet* tip = cf_mesh_find_nset(&mesh, "xmax");
    const double c = 1e6; /* N/s */
    double xc0 = 0;
    for (int i = 0; i < m->nnode; i++) xc0 += m->node_mass[i] * m->X[3 * i] / mass;
    for (int k = 1; k <= n; k++) {
      for (int i = 0; i < tip->count; i++) d->f_ext[3 * tip->nodes[i]] = c * k * h / tip->count;
      CHECK(cf_step(m, d) >= 0);
    }
    double P = total_momentum(m, d, 0), t = n * h, xc = 0;
    for (int i = 0; i < m->nnode; i++) xc += m->node_mass[i] * d->x[3 * i] / mass;
    double P_ode = c * t * t / 2, P_scheme = integ ? P_ode : c * h * h * n * (n + 1) / 2;
    double x_ode = c * t * t * t / (6 * mass), x_scheme = integ ? x_ode * (1 + 0.5 / ((double)n * n)) : x_ode * (1 + 1.0 / n) * (1 + 2.0 / n);
    printf("%s, ramp pull c t on a free body, %d steps: momentum / impulse c t^2/2 - 1 = %+.3e (scheme %+.3e), "
           "centre of mass moved %.6e m, c t^3 / (6 m) = %.6e m\n",
           integ ? "Newmark" : "backward Euler", n, P / P_ode - 1, P_scheme / P_ode - 1, xc - xc0, x_ode);
    CHECK_CLOSE(P, P_scheme, 0, 1e-10); /* the impulse the scheme applies (measured 1e-11) */
    /* Newmark x_n = h/2 sum (v_k + v_k+1): c t^3 / (6 m) (1 + 1/(2 n^2)); backward Euler
     * x_n = h sum v_k: (1 + 1/n)(1 + 2/n) */
    CHECK_CLOSE(xc - xc0, x_scheme, 0, 1e-8);
    cf_data_free(d);
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  TEST_END();
}
