/* Smoothed-aggregation AMG preconditioner (host/fem/fem_amg.c, P^-1 = Q AMG(A0) Q^T):
 * (a) one V-cycle is a symmetric positive definite operator (x^T B y = y^T B x, x^T B x > 0),
 *     with and without supports;
 * (b) the two-level method on a clamped box beam reduces the A-norm error of A x = b by a factor
 *     per cycle below a measured bound; without the prolongator smoothing, or with the
 *     translations as the only near-null space, it does markedly worse;
 * (c) PCG iterations of a pulled 20k-tetrahedra beam, AMG against block Jacobi, same steps;
 * (d) near-null space: the stiffness annihilates the six rigid-body modes of a free mesh, the
 *     tentative prolongator reproduces them exactly on every level (P_tent B_c = B), the
 *     smoothed one to the accuracy with which A B = 0;
 * (e) the rotated application: with Q = I it is the V-cycle itself; for a part turned rigidly by
 *     Q, A(R) = Q A0 Q^T exactly and the preconditioned operator turns with it:
 *     P^-1(R) A(R) Q x = Q AMG(A0) A0 x;
 * (f) Newmark, generalized-alpha and the supports switched off go through it too, and a scene
 *     selects it by "solver.preconditioner": "amg". */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mesh_box.h"
#include "cofem/scene.h"
#include "fem/fem_amg.h"
#include "fem/fem_element.h"
#include "fem/fem_precond.h"

#define AMG_SMALL_BOUND 31 /* (c): measured 21 on the small beam, 1.5x */

static double rnd(unsigned long long* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

static double dotv(int n, const double* a, const double* b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static cfModel* beam_model(const cfMesh* mesh, int precond, int clamp) {
  cfModelDef def = cf_default_model_def();
  def.preconditioner = precond;
  def.pcg_tol = 1e-6;
  def.pcg_max_iter = 20000;
  cfModel* m = NULL;
  CHECK_OK(cf_model_create(mesh, &def, &m));
  if (m && clamp) {
    const cfNodeSet* c = cf_mesh_find_nset(mesh, "xmin");
    CHECK_OK(cf_model_fix_nodes(m, c->nodes, c->count, 7));
  }
  return m;
}

/* A0 of the model (fem_precond.c's), the hierarchy of it */
static cfAmg* build(const cfModel* m, const double* A0, int supports, const cfAmgOptions* o) {
  cfAmg* a = NULL;
  CHECK_OK(cf_amg_create(m->nnode, m->row_ptr, m->col, A0, m->X, supports ? m->fixed : NULL, o, &a));
  return a;
}

static void bsr_mv(const cfModel* m, const double* A, const double* x, double* y) {
  for (int i = 0; i < m->nnode; i++) cf_bsr_row(i, m->row_ptr, m->col, A, x, y);
}

/* (a) symmetry and positivity of z = B r */
static void test_spd(const cfModel* m, const double* A0, int supports) {
  cfAmgOptions o = cf_amg_default_options();
  o.coarse_max = 60; /* three levels on the small beam */
  cfAmg* a = build(m, A0, supports, &o);
  if (!a) return;
  CHECK(a->nlevel >= 3);
  const int n = m->ndof;
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
  double *Bx = malloc(sizeof(double) * n), *By = malloc(sizeof(double) * n);
  unsigned long long s = 12345;
  double worst_sym = 0, min_pos = INFINITY;
  for (int trial = 0; trial < 10; trial++) {
    for (int i = 0; i < n; i++) {
      x[i] = rnd(&s);
      y[i] = rnd(&s);
      if (supports && m->fixed[i]) x[i] = y[i] = 0; /* the PCG's residuals are projected */
    }
    CHECK_OK(cf_amg_apply(a, x, Bx));
    CHECK_OK(cf_amg_apply(a, y, By));
    const double xBy = dotv(n, x, By), yBx = dotv(n, y, Bx), xBx = dotv(n, x, Bx);
    const double scale = sqrt(dotv(n, x, Bx) * dotv(n, y, By));
    worst_sym = fmax(worst_sym, fabs(xBy - yBx) / scale);
    min_pos = fmin(min_pos, xBx / (dotv(n, x, x) * sqrt(dotv(n, Bx, Bx) / dotv(n, x, x))));
  }
  printf("(a) V-cycle, %s, %d levels: |x'By - y'Bx| / sqrt(x'Bx y'By) <= %.2e, min x'Bx / (|x| |Bx|) = %.3g\n",
         supports ? "supports" : "free body", a->nlevel, worst_sym, min_pos);
  /* measured 7.8e-15 (supports), 1.9e-15 (free body): round-off; a non-symmetric cycle
   * (post-smoothing with another polynomial, or none) gives 1e-2 and more */
  CHECK(worst_sym < 1e-12);
  CHECK(min_pos > 0);
  free(x); free(y); free(Bx); free(By);
  cf_amg_free(a);
}

/* (b) stationary two-level iteration x += B (b - A x): geometric mean of the A-norm error factor
 * over 20 cycles */
static double two_level_factor(const cfModel* m, const double* A0, int smooth_P, int nmodes) {
  cfAmgOptions o = cf_amg_default_options();
  o.max_levels = 2;
  o.coarse_max = 100;
  o.smooth_P = smooth_P;
  o.nmodes = nmodes;
  cfAmg* a = build(m, A0, 1, &o);
  if (!a) return NAN;
  CHECK(a->nlevel == 2);
  const int n = m->ndof;
  double *xs = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double));
  double *r = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n);
  unsigned long long s = 777;
  for (int i = 0; i < n; i++) xs[i] = m->fixed[i] ? 0 : rnd(&s);
  bsr_mv(m, a->lev[0].bval, xs, b);
  double e0 = 0, ek = 0;
  const int ncyc = 20;
  for (int k = 0; k <= ncyc; k++) {
    for (int i = 0; i < n; i++) e[i] = xs[i] - x[i];
    bsr_mv(m, a->lev[0].bval, e, r);
    const double en = sqrt(dotv(n, e, r));
    if (k == 0) e0 = en;
    ek = en;
    if (k == ncyc) break;
    bsr_mv(m, a->lev[0].bval, x, r);
    for (int i = 0; i < n; i++) r[i] = b[i] - r[i];
    CHECK_OK(cf_amg_apply(a, r, z));
    for (int i = 0; i < n; i++) x[i] += z[i];
  }
  free(xs); free(b); free(x); free(r); free(z); free(e);
  cf_amg_free(a);
  return pow(ek / e0, 1.0 / ncyc);
}

/* (c) PCG iterations of `steps` steps of the pulled beam (the bench's beam_20k load); the tip's
 * displacement into tip[3] */
static long pull_iters(const cfMesh* mesh, int precond, int steps, double* tip) {
  cfModel* m = beam_model(mesh, precond, 1);
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (!d) return -1;
  const cfNodeSet* t = cf_mesh_find_nset(mesh, "xmax");
  for (int k = 0; k < steps; k++) {
    memset(d->f_ext, 0, sizeof(double) * m->ndof);
    for (int i = 0; i < t->count; i++) d->f_ext[3 * t->nodes[i] + 2] = -525e3 * fmin(1.0, (k + 1.0) / steps) / t->count;
    CHECK(cf_step(m, d) == CF_OK);
  }
  long it = d->pcg_iters_total;
  cf_set_displacement(mesh, t, d->x, tip);
  cf_data_free(d);
  cf_model_free(m);
  return it;
}

/* (d) rigid modes: K B ~ 0 on the free mesh; P B_c = B on every level */
static void test_null_space(const cfMesh* mesh) {
  cfModel* m = beam_model(mesh, CF_PRECOND_BLOCK_JACOBI, 0);
  if (!m) return;
  const int n = m->ndof;
  double* A = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  /* A = M + K: the stiffness with a mass 1e-10 of it (cm = ck = 1), positive definite */
  for (int k = 0; k < m->nnzb; k++) cf_block_gather(k, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, 0.0, 1.0, A);
  for (int pass = 0; pass < 2; pass++) {
    cfAmgOptions o = cf_amg_default_options();
    o.coarse_max = 150;
    o.smooth_P = pass; /* 0: P_tent, 1: smoothed */
    if (pass == 1)
      for (int k = 0; k < m->nnzb; k++) cf_block_gather(k, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, 1.0, 1.0, A);
    cfAmg* a = build(m, A, 0, &o);
    if (!a) break;
    CHECK(a->nlevel >= 3);
    const int nm = a->opt.nmodes;
    CHECK(nm == 6);
    double* col = malloc(sizeof(double) * n);
    double* Kc = malloc(sizeof(double) * n);
    if (pass == 0) { /* |K b_k| / (|K| |b_k|) for each mode, |K| the largest diagonal entry */
      double kmax = 0, worst = 0;
      for (int i = 0; i < m->nnode; i++)
        for (int r = 0; r < 3; r++) kmax = fmax(kmax, A[9 * (size_t)m->diag[i] + 4 * r]);
      for (int k = 0; k < nm; k++) {
        for (int i = 0; i < n; i++) col[i] = a->lev[0].B[(size_t)i * nm + k];
        bsr_mv(m, A, col, Kc);
        worst = fmax(worst, sqrt(dotv(n, Kc, Kc) / dotv(n, col, col)) / kmax);
      }
      printf("(d) free beam: max_k |K b_k| / (max K_ii |b_k|) = %.2e over the 6 rigid modes\n", worst);
      CHECK(worst < 1e-12); /* measured 2e-16: round-off (a wrong sign in a rotation mode: 0.5) */
    }
    for (int l = 0; l + 1 < a->nlevel; l++) {
      const cfAmgLevel *L = a->lev + l, *C = L + 1;
      double* Pc = malloc(sizeof(double) * L->n);
      double* cc = malloc(sizeof(double) * C->n);
      double worst = 0;
      for (int k = 0; k < nm; k++) {
        for (int i = 0; i < C->n; i++) cc[i] = C->B[(size_t)i * nm + k];
        cf_csr_spmv(&L->P, cc, Pc);
        double num = 0, den = 0;
        for (int i = 0; i < L->n; i++) {
          const double bi = L->B[(size_t)i * nm + k];
          num += (Pc[i] - bi) * (Pc[i] - bi);
          den += bi * bi;
        }
        worst = fmax(worst, sqrt(num / den));
      }
      printf("(d) level %d -> %d, %s P: max_k |P B_c - B| / |B| = %.2e\n", l, l + 1, pass ? "smoothed" : "tentative",
             worst);
      /* measured: tentative 4.8e-16, 5.4e-16 (exact up to round-off); smoothed 5.9e-12 and
       * 6.0e-11 (A B = M B is 1e-11 of K here: omega D^-1 A B is that small) */
      CHECK(worst < (pass == 0 ? 1e-13 : 1e-9));
      free(Pc);
      free(cc);
    }
    free(col);
    free(Kc);
    cf_amg_free(a);
  }
  free(A);
  cf_model_free(m);
}

/* (e) the rotated application */
static void test_rotated(const cfMesh* mesh) {
  cfModel* m = beam_model(mesh, CF_PRECOND_AMG, 0);
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (!d) return;
  const int n = m->ndof;
  double* A0 = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  cf_precond_rest_matrix(m, A0);
  cfAmg* a = build(m, A0, 0, NULL); /* the preconditioner's own hierarchy, made the same way */
  double *r = malloc(sizeof(double) * n), *z1 = malloc(sizeof(double) * n), *z2 = malloc(sizeof(double) * n);
  double *x = malloc(sizeof(double) * n), *t = malloc(sizeof(double) * n), *u = malloc(sizeof(double) * n);
  unsigned long long s = 99;
  for (int i = 0; i < n; i++) r[i] = rnd(&s);
  /* Q = I (after cf_data_create): the V-cycle itself */
  CHECK_OK(cf_precond_apply(m, d, r, z1));
  CHECK_OK(cf_amg_apply(a, r, z2));
  double diff = 0, nz = 0;
  for (int i = 0; i < n; i++) diff = fmax(diff, fabs(z1[i] - z2[i])), nz = fmax(nz, fabs(z2[i]));
  printf("(e) Q = I: max |P^-1 r - AMG(A0) r| = %.2e of %.2e\n", diff, nz);
  CHECK(diff <= 1e-14 * nz); /* measured 0: the same operations */
  /* turn the part by 120 degrees about (1,1,1): R_e = Q for every element */
  double q[4] = {0.5, 0.5, 0.5, 0.5}, Q[9];
  cf_quat_to_rot(q, Q);
  for (int i = 0; i < m->nnode; i++)
    for (int k = 0; k < 3; k++)
      d->x[3 * i + k] = Q[3 * k] * m->X[3 * i] + Q[3 * k + 1] * m->X[3 * i + 1] + Q[3 * k + 2] * m->X[3 * i + 2];
  cf_stage_polar(m, d);
  cf_stage_elastic(m, d);
  cf_stage_assemble_system(m, d, m->def.dt); /* A(R) into d->A; the node rotations updated */
  for (int it = 0; it < 5; it++) cf_precond_update(m, d); /* one Newton step each: converged */
  double worst_A = 0, amax = 0, worst_Q = 0;
  for (int k = 0; k < m->nnzb; k++) { /* A(R)_k against Q A0_k Q^T */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double v = 0;
        for (int p = 0; p < 3; p++)
          for (int w = 0; w < 3; w++) v += Q[3 * i + p] * A0[9 * (size_t)k + 3 * p + w] * Q[3 * j + w];
        worst_A = fmax(worst_A, fabs(d->A[9 * (size_t)k + 3 * i + j] - v));
        amax = fmax(amax, fabs(v));
      }
  }
  for (int i = 0; i < m->nnode; i++)
    for (int k = 0; k < 9; k++) worst_Q = fmax(worst_Q, fabs(d->node_R[9 * i + k] - Q[k]));
  printf("(e) rigid rotation: max |A(R) - Q A0 Q^T| = %.2e of %.2e; node rotations within %.1e of Q\n", worst_A, amax,
         worst_Q);
  CHECK(worst_A <= 1e-13 * amax); /* measured 6e-16 of the largest entry: round-off */
  CHECK(worst_Q <= 1e-12);        /* measured 4.7e-16 */
  /* the preconditioner turns with the part: P^-1(R) (Q u) = Q AMG(A0) u; with A(R) = Q A0 Q^T
   * above, P^-1(R) A(R) = Q [AMG(A0) A0] Q^T, the PCG of the turned part is that of the part at
   * rest, iteration by iteration */
  for (int i = 0; i < n; i++) x[i] = rnd(&s);
  for (int i = 0; i < m->nnode; i++) /* u = Q x */
    for (int k = 0; k < 3; k++) u[3 * i + k] = Q[3 * k] * x[3 * i] + Q[3 * k + 1] * x[3 * i + 1] + Q[3 * k + 2] * x[3 * i + 2];
  CHECK_OK(cf_precond_apply(m, d, u, z1));
  CHECK_OK(cf_amg_apply(a, x, t));
  diff = 0, nz = 0;
  for (int i = 0; i < m->nnode; i++)
    for (int k = 0; k < 3; k++) {
      const double v = Q[3 * k] * t[3 * i] + Q[3 * k + 1] * t[3 * i + 1] + Q[3 * k + 2] * t[3 * i + 2];
      diff = fmax(diff, fabs(z1[3 * i + k] - v));
      nz = fmax(nz, fabs(v));
    }
  printf("(e) rigid rotation: max |P^-1(R) Q x - Q AMG(A0) x| = %.2e of %.2e\n", diff, nz);
  CHECK(diff <= 1e-12 * nz); /* measured 2.4e-15 relative: round-off of the rotations */
  free(r); free(z1); free(z2); free(x); free(t); free(u); free(A0);
  cf_amg_free(a);
  cf_data_free(d);
  cf_model_free(m);
}

/* (f) the other paths through the preconditioner: Newmark and generalized-alpha (assembled A,
 * cf_stage_pcg and the Newton iterations), and the supports switched off (the free body's
 * hierarchy): the same tip motion as block Jacobi, fewer iterations */
static void test_paths(const cfMesh* mesh) {
  const int integ[3] = {CF_INTEGRATOR_NEWMARK, CF_INTEGRATOR_GENERALIZED_ALPHA, CF_INTEGRATOR_BACKWARD_EULER};
  const char* names[3] = {"Newmark", "generalized-alpha", "backward Euler, supports off at step 3"};
  const cfNodeSet* t = cf_mesh_find_nset(mesh, "xmax");
  for (int v = 0; v < 3; v++) {
    double tip[2][3];
    long it[2];
    for (int pc = 0; pc < 2; pc++) {
      cfModel* m = beam_model(mesh, pc ? CF_PRECOND_AMG : CF_PRECOND_BLOCK_JACOBI, 1);
      m->def.integrator = integ[v];
      m->def.pcg_tol = 1e-9;
      if (integ[v] == CF_INTEGRATOR_GENERALIZED_ALPHA) m->def.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
      cfData* d = NULL;
      CHECK_OK(cf_data_create(m, &d));
      if (!d) return;
      for (int k = 0; k < 6; k++) {
        if (v == 2 && k == 3) d->supports_active = 0;
        memset(d->f_ext, 0, sizeof(double) * m->ndof);
        for (int i = 0; i < t->count; i++) d->f_ext[3 * t->nodes[i] + 2] = -2e5 / t->count;
        CHECK(cf_step(m, d) == CF_OK);
      }
      it[pc] = d->pcg_iters_total;
      cf_set_displacement(mesh, t, d->x, tip[pc]);
      cf_data_free(d);
      cf_model_free(m);
    }
    printf("(f) %s: tip z block Jacobi %.9f, AMG %.9f; PCG iterations %ld, %ld\n", names[v], tip[0][2], tip[1][2],
           it[0], it[1]);
    /* measured relative differences: Newmark < 1e-9, generalized-alpha 4e-8 (PCG tol 1e-9); the
     * free beam 2.5e-5: it flies off under the tip load, its A = M + h^2 K is conditioned by
     * the mass of the rigid modes, so the same residual leaves a larger velocity error */
    CHECK_CLOSE(tip[1][2], tip[0][2], 0, v == 2 ? 1e-4 : 1e-6);
    CHECK(it[1] < it[0]);
  }
}

/* "solver.preconditioner": "amg" in a scene (host/io/fem_scene.c); a wrong name is refused */
static void test_scene(void) {
  char cwd[2048], mesh[2200];
  CHECK(getcwd(cwd, sizeof cwd) != NULL); /* ctest runs in the repository root */
  snprintf(mesh, sizeof mesh, "%s/meshes/lug.msh", cwd);
  const char* names[2] = {"amg", "AMG"};
  for (int k = 0; k < 2; k++) {
    char path[] = "/tmp/cofem_amg_sceneXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE* f = fdopen(fd, "w");
    fprintf(f, "{\"mesh\": \"%s\", \"material\": {\"E\": 210e9, \"nu\": 0.3, \"rho\": 7850},\n"
               " \"fixed\": [{\"set\": \"support\", \"dofs\": \"xyz\"}],\n"
               " \"solver\": {\"preconditioner\": \"%s\"}}\n", mesh, names[k]);
    fclose(f);
    cfScene sc;
    const int st = cf_scene_load(path, &sc);
    if (k == 0) {
      CHECK_OK(st);
      if (st >= 0) {
        CHECK(sc.def.preconditioner == CF_PRECOND_AMG);
        cf_scene_free(&sc);
      }
    } else {
      CHECK(st == CF_ERR_SCENE);
      printf("scene with \"AMG\": %s\n", cf_last_error());
      CHECK(strstr(cf_last_error(), "\"amg\"") != NULL);
    }
    remove(path);
  }
}

int main(void) {
  test_scene();
  cfMesh small;
  CHECK_OK(cf_mesh_box(20, 4, 4, 1.0, 0.1, 0.1, &small));
  {
    cfModel* m = beam_model(&small, CF_PRECOND_BLOCK_JACOBI, 1);
    double* A0 = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
    cf_precond_rest_matrix(m, A0);
    test_spd(m, A0, 1);
    test_spd(m, A0, 0);
    const double f = two_level_factor(m, A0, 1, 6);
    const double f_tent = two_level_factor(m, A0, 0, 6);
    const double f_trans = two_level_factor(m, A0, 1, 3);
    printf("(b) two-level error factor per cycle, clamped beam (%d DOFs): SA %.3f, unsmoothed P %.3f, "
           "translations only %.3f\n", m->ndof, f, f_tent, f_trans);
    /* measured SA 0.623 (4.9 cycles per digit; Chebyshev degree 2 on aggregates of 3x3x3 nodes
     * and more, on a beam 4 elements thick), unsmoothed P 0.728 (7.3 cycles per digit),
     * translations only 0.758 (8.3); deterministic (fixed vectors, thread-independent sums) */
    CHECK(f < 0.65); /* deterministic: 0.623; the prolongator smoothing's weight halved gives 0.684 */
    CHECK(f_tent > f + 0.04);
    CHECK(f_trans > f + 0.04);
    free(A0);
    cf_model_free(m);
  }
  test_null_space(&small);
  test_rotated(&small);
  test_paths(&small);
  {
    /* (c) the bench's beam_20k: 61 x 8 x 9 nodes, 20160 tetrahedra, clamped, pulled at the tip */
    cfMesh big;
    CHECK_OK(cf_mesh_box(60, 7, 8, 1.0, 0.1, 0.1, &big));
    const int steps = 6;
    double tip_bj[3], tip_amg[3];
    const long it_bj = pull_iters(&big, CF_PRECOND_BLOCK_JACOBI, steps, tip_bj);
    const long it_amg = pull_iters(&big, CF_PRECOND_AMG, steps, tip_amg);
    printf("(c) beam_20k (%d tetrahedra), %d steps: PCG iterations block Jacobi %ld, AMG %ld (%.1fx fewer)\n", big.ntet,
           steps, it_bj, it_amg, (double)it_bj / it_amg);
    /* measured: block Jacobi 5418, AMG 64 (85x fewer); the issue asks for 5x at least */
    CHECK(it_amg > 0 && 5 * it_amg <= it_bj);
    /* and the AMG's own count within 1.5x of the measured one, on this mesh and the small one
     * (issue 31: halving the prolongator smoothing's weight or dropping the Chebyshev smoother's
     * 1.1 margin made the AMG slower without a test seeing it) */
    double tip_small[3];
    const long it_small = pull_iters(&small, CF_PRECOND_AMG, steps, tip_small);
    printf("(c) AMG iterations: beam_20k %ld (bound 96), small beam %ld (bound %d)\n", it_amg, it_small, AMG_SMALL_BOUND);
    CHECK(it_amg <= 96);                 /* measured 64, 1.5x */
    CHECK(it_small <= AMG_SMALL_BOUND);
    printf("(c) tip deflection z: block Jacobi %.9f m, AMG %.9f m\n", tip_bj[2], tip_amg[2]);
    CHECK_CLOSE(tip_amg[2], tip_bj[2], 0, 1e-5); /* measured 1.1e-6 relative: the PCG tolerance */
    cf_mesh_free(&big);
  }
  cf_mesh_free(&small);
  TEST_END();
}
