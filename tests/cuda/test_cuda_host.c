/* The host side of the CUDA backend, on the CPU (every build, no device needed): the pieces the
 * GPU path shares with the CPU step, so that a fix checked here holds for both (issue 16).
 *  - the PCG's stopping rule (cf_pcg_target, run on the device by k_pcg_finish_b) and result
 *    (cf_pcg_result, the GPU's record_pcg): a NaN/Inf |b| or b_scale is CF_ERR_ARG with one
 *    message, never a 0-iteration "convergence"; cf_step with a NaN or Inf load fails and
 *    leaves the state as the GPU must (x, t, steps unchanged, v = v_prev = v0);
 *  - cf_cuda_check_model, cf_cuda_create and cf_sim_create refuse the methods the GPU does not
 *    run (Newmark, the symmetric consistent tangent, the rotated Cholesky, unknown values), in
 *    both builds, before any device call;
 *  - the A coefficients both sides take from cf_system_coefficients, against the integrators'
 *    formulas written out here: A x = (1 + h alpha) M x + (h beta + h^2) K x at rest (backward
 *    Euler), (1 + h alpha / 2) M x + (h beta / 2 + h^2 / 4) K x (Newmark), K from the elements;
 *  - the field table of upload/download (cf_cuda_field): every bit of CF_CUDA_ALL names its own
 *    array and length, and CF_CUDA_STATE carries v_prev, so a state round trip (the device copy
 *    after cf_sim_reset) reproduces x, v, v_prev and R. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/cuda.h"
#include "cofem/fem.h"
#include "cofem/mesh.h"
#include "cofem/mesh_box.h"
#include "cofem/sim.h"
#include "fem/fem_backend.h"
#include "fem/fem_element.h"
#include "cofem/status.h"

static cfMesh mesh;

static cfModel* make_model(cfModelDef def) {
  cfModel* m = NULL;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  if (!m) return NULL;
  const cfNodeSet* xmin = cf_mesh_find_nset(&mesh, "xmin");
  CHECK(xmin != NULL);
  if (xmin) CHECK_OK(cf_model_fix_nodes(m, xmin->nodes, xmin->count, 7));
  return m;
}

static int contains(const char* s, const char* part) {
  return strstr(s, part) != NULL;
}

/* ---- the stopping rule and the result of a solve ------------------------------------------- */
static void test_pcg_target(void) {
  double scale = -1, target = -1;
  CHECK(cf_pcg_target(3.0, 2.0, 1e-6, &scale, &target) == 1);
  CHECK(scale == 3.0 && target == 1e-6 * 3.0);
  CHECK(cf_pcg_target(1.0, 5.0, 1e-6, &scale, &target) == 1);
  CHECK(scale == 5.0 && target == 1e-6 * 5.0);
  CHECK(cf_pcg_target(0.0, 0.0, 1e-6, &scale, &target) == 1);
  CHECK(scale == 0.0 && target == 1e-6);
  /* any non-finite input refuses; fmax alone would drop the NaN b_scale */
  const double bad[] = {NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 3; i++) {
    CHECK(cf_pcg_target(bad[i], 1.0, 1e-6, &scale, &target) == 0);
    CHECK(cf_pcg_target(1.0, bad[i], 1e-6, &scale, &target) == 0);
    CHECK(cf_pcg_target(bad[i], bad[i], 1e-6, &scale, &target) == 0);
  }
}

static void test_pcg_result(const cfModel* m) {
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (!d) return;
  d->steps = 4;
  d->pcg_iters = 77;
  d->pcg_iters_total = 1000;
  /* the GPU's device status for a non-finite b */
  CHECK(cf_pcg_result(m, d, CF_ERR_ARG, 0, NAN, NAN, 1.0) == CF_ERR_ARG);
  CHECK(contains(cf_last_error(), "step 5: the right side is not finite"));
  CHECK(d->pcg_iters == 77 && d->pcg_iters_total == 1000);
  /* the device's verdict stands even where the norms it read back look finite */
  CHECK(cf_pcg_result(m, d, CF_ERR_ARG, 0, 1.0, 1.0, 1.0) == CF_ERR_ARG);
  CHECK(d->pcg_iters == 77 && d->pcg_iters_total == 1000);
  /* a status that says OK with a NaN b_scale still fails */
  CHECK(cf_pcg_result(m, d, CF_OK, 0, 0.0, 1.0, NAN) == CF_ERR_ARG);
  CHECK(d->pcg_iters == 77 && d->pcg_iters_total == 1000);
  /* the ordinary results */
  CHECK(cf_pcg_result(m, d, CF_OK, 12, 2e-7, 4.0, 1.0) == CF_OK);
  CHECK(d->pcg_iters == 12 && d->pcg_iters_total == 1012);
  CHECK_CLOSE(d->pcg_residual, 5e-8, 0, 1e-15);
  CHECK(cf_pcg_result(m, d, CF_WARN_PCG_NOT_CONVERGED, 30, 1.0, 2.0, 1.0) == CF_WARN_PCG_NOT_CONVERGED);
  CHECK(d->warning[CF_WARN_PCG_NOT_CONVERGED] == 1 && d->pcg_iters == 30);
  CHECK(contains(cf_last_error(), "PCG: not converged after 30 iterations"));
  cf_data_free(d);
}

/* cf_step with a non-finite load: CF_ERR_ARG, nothing advanced (what cf_cuda_step must match) */
static void test_step_nonfinite(cfModelDef def, double bad, const char* label) {
  cfModel* m = make_model(def);
  if (!m) return;
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  const cfNodeSet* xmax = cf_mesh_find_nset(&mesh, "xmax");
  if (!d || !xmax) {
    CHECK(!"setup");
    cf_data_free(d);
    cf_model_free(m);
    return;
  }
  for (int i = 0; i < xmax->count; i++) d->f_ext[3 * xmax->nodes[i] + 2] = -1e4;
  CHECK_OK(cf_step(m, d));
  CHECK_OK(cf_step(m, d));
  const size_t nd = (size_t)m->ndof;
  double* x0 = malloc(nd * sizeof(double));
  double* v0 = malloc(nd * sizeof(double));
  if (x0 && v0) {
    memcpy(x0, d->x, nd * sizeof(double));
    memcpy(v0, d->v, nd * sizeof(double));
    const double t0 = d->t;
    const long steps0 = d->steps, total0 = d->pcg_iters_total;
    d->f_ext[3 * xmax->nodes[0] + 1] = bad;
    int st = cf_step(m, d);
    CHECK(st == CF_ERR_ARG);
    if (st != CF_ERR_ARG) printf("  %s: cf_step returned %d\n", label, st);
    CHECK(contains(cf_last_error(), "step 3: the right side is not finite"));
    CHECK(memcmp(d->x, x0, nd * sizeof(double)) == 0);
    CHECK(memcmp(d->v, v0, nd * sizeof(double)) == 0);
    CHECK(memcmp(d->v_prev, v0, nd * sizeof(double)) == 0);
    CHECK(d->t == t0 && d->steps == steps0 && d->pcg_iters_total == total0);
    printf("%s: CF_ERR_ARG \"%s\"; x, v, t, steps unchanged\n", label, cf_last_error());
    /* the load fixed, the run goes on */
    d->f_ext[3 * xmax->nodes[0] + 1] = 0;
    CHECK_OK(cf_step(m, d));
  } else {
    CHECK(!"out of memory");
  }
  free(x0);
  free(v0);
  cf_data_free(d);
  cf_model_free(m);
}

static void fill_vec(double* a, size_t n, unsigned long long seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    a[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
  }
}

/* ---- the system matrix's coefficients ------------------------------------------------------------ */
static void check_A(int integrator, double cm_expect, double ck_expect, const char* label) {
  cfModelDef def = cf_default_model_def();
  def.dt = 1e-3;
  def.rayleigh_alpha = 0.7;
  def.rayleigh_beta = 2e-4;
  def.integrator = integrator;
  cfModel* m = make_model(def);
  if (!m) return;
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  const size_t nd = (size_t)m->ndof;
  double *x = malloc(nd * sizeof(double)), *y = malloc(nd * sizeof(double)), *z = calloc(nd, sizeof(double));
  if (d && x && y && z) {
    fill_vec(x, nd, 11);
    /* at rest R = I, so K_R = K_e: the stages form A */
    cf_stage_polar(m, d);
    cf_stage_elastic(m, d);
    cf_stage_assemble_system(m, d, def.dt);
    for (int i = 0; i < m->nnode; i++) cf_bsr_row(i, m->row_ptr, m->col, d->A, x, y);
    /* cm M x + ck K x, M lumped (node masses), K x element by element */
    for (int e = 0; e < m->ntet; e++) {
      const double* K = m->Ke + 144 * (size_t)e;
      const int* t = m->tet + 4 * e;
      for (int a = 0; a < 12; a++) {
        double s = 0;
        for (int b = 0; b < 12; b++) s += K[12 * a + b] * x[3 * t[b / 3] + b % 3];
        z[3 * t[a / 3] + a % 3] += ck_expect * s;
      }
    }
    double err = 0, ref = 0;
    for (int n = 0; n < m->nnode; n++)
      for (int i = 0; i < 3; i++) {
        const double zi = z[3 * n + i] + cm_expect * m->node_mass[n] * x[3 * n + i];
        err = fmax(err, fabs(y[3 * n + i] - zi));
        ref = fmax(ref, fabs(zi));
      }
    printf("%s: |A x - (cm M + ck K) x| / max = %.3g (cm %.9g, ck %.9g)\n", label, err / ref, cm_expect, ck_expect);
    CHECK(err <= 1e-12 * ref);
  }
  free(x);
  free(y);
  free(z);
  cf_data_free(d);
  cf_model_free(m);
}

static void test_system_coefficients(void) {
  const double h = 1e-3, a = 0.7, b = 2e-4;
  check_A(CF_INTEGRATOR_BACKWARD_EULER, 1 + h * a, h * b + h * h, "A of backward Euler");
  check_A(CF_INTEGRATOR_NEWMARK, 1 + h * a / 2, h * b / 2 + h * h / 4, "A of Newmark");
}

/* ---- the methods the GPU runs ---------------------------------------------------------------- */
/* integrator >= 0: set after cf_model_create (a method cf_model_create knows and the GPU not) */
static void refused(cfModelDef def, int integrator, const char* what, const char* label) {
  cfModel* m = make_model(def);
  if (!m) return;
  if (integrator >= 0) m->def.integrator = integrator;
  CHECK(cf_cuda_check_model(m) == CF_ERR_UNSUPPORTED);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  CHECK(contains(msg, what));
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (d) {
    cfCuda* g = (cfCuda*)&mesh; /* must come back NULL */
    CHECK(cf_cuda_create(m, d, &g) == CF_ERR_UNSUPPORTED);
    CHECK(g == NULL);
    CHECK(!strcmp(cf_last_error(), msg)); /* the same message, device or not, CUDA build or not */
    cfCudaOptions o = cf_cuda_default_options();
    o.device = 3;
    CHECK(cf_cuda_create_ex(m, d, &o, &g) == CF_ERR_UNSUPPORTED);
    cfSim* s = NULL;
    CHECK(cf_sim_create(m, d, "cuda", &s) == CF_ERR_UNSUPPORTED);
    CHECK(s == NULL);
    CHECK(contains(cf_last_error(), what));
    /* the check's message once, after one "backend cuda: " (cf_error formatting its own
     * buffer into itself printed "backend cuda: backend cuda: :") */
    char want[600];
    snprintf(want, sizeof want, "backend cuda: %s", msg);
    if (strcmp(cf_last_error(), want)) printf("%s: cf_sim_create said \"%s\"\n", label, cf_last_error());
    CHECK(!strcmp(cf_last_error(), want));
    CHECK_OK(cf_sim_create(m, d, "auto", &s)); /* auto falls back to the CPU */
    if (s) CHECK(!strcmp(cf_sim_backend_name(s), "cpu"));
    cf_sim_free(s);
  }
  printf("%s: refused: %s\n", label, msg);
  cf_data_free(d);
  cf_model_free(m);
}

static void test_check_model(void) {
  cfModelDef def = cf_default_model_def();
  cfModel* m = make_model(def);
  if (m) CHECK_OK(cf_cuda_check_model(m));
  cf_model_free(m);
  cfModelDef c = def; /* what the GPU does run: consistent mass, damping, cold start */
  c.consistent_mass = 1;
  c.rayleigh_alpha = 0.5;
  c.rayleigh_beta = 1e-4;
  c.warm_start = 0;
  m = make_model(c);
  if (m) CHECK_OK(cf_cuda_check_model(m));
  cf_model_free(m);
  CHECK(cf_cuda_check_model(NULL) == CF_ERR_ARG);
  /* cfCudaOptions.amg_float: off by default; a value other than 0 or 1 is refused before any
   * device call, naming the field (the stub refuses every create) */
  m = make_model(def);
  cfData* d = NULL;
  if (m) CHECK_OK(cf_data_create(m, &d));
  if (m && d) {
    cfCudaOptions o = cf_cuda_default_options();
    CHECK(o.amg_float == 0);
    o.amg_float = 2;
    cfCuda* g = NULL;
    const int st = cf_cuda_create_ex(m, d, &o, &g);
#ifdef COFEM_HAVE_CUDA
    CHECK(st == CF_ERR_ARG && contains(cf_last_error(), "amg_float"));
#else
    CHECK(st == CF_ERR_UNSUPPORTED);
#endif
    CHECK(g == NULL);
  }
  cf_data_free(d);
  cf_model_free(m);

  cfModelDef n = def;
  n.integrator = CF_INTEGRATOR_NEWMARK;
  refused(n, -1, "backward Euler and generalized-alpha only (the model asks for the linearised Newmark step)",
          "Newmark");
  /* generalized-alpha (issue 15) runs on the GPU with K_R; with the symmetric consistent tangent
   * (its scene default) it is refused for the tangent */
  cfModelDef ga = def;
  ga.integrator = CF_INTEGRATOR_GENERALIZED_ALPHA;
  ga.dyn_tangent = CF_DYN_TANGENT_KR;
  m = make_model(ga);
  if (m) CHECK_OK(cf_cuda_check_model(m));
  cf_model_free(m);
  ga.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
  refused(ga, -1, "K_R only (the model asks for the symmetric consistent tangent)", "generalized-alpha, sym. consistent");
  /* and an integrator nobody has written yet */
  refused(def, 99, "generalized-alpha only (the model asks for another integrator)", "integrator 99");
  cfModelDef t = def;
  t.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
  refused(t, -1, "K_R only (the model asks for the symmetric consistent tangent)", "sym. consistent");
  cfModelDef p = def;
  p.preconditioner = CF_PRECOND_ROTATED_CHOLESKY;
  refused(p, -1, "block Jacobi and AMG only (the model asks for the rotated Cholesky)", "rotated Cholesky");
  /* AMG runs on the GPU (fem_cuda_amg.cu) with backward Euler and (since 2026-11-29) with
   * generalized-alpha: its hierarchy is of cf_system_coefficients' Newton matrix, as the CPU's */
  p.preconditioner = CF_PRECOND_AMG;
  m = make_model(p);
  if (m) CHECK_OK(cf_cuda_check_model(m));
  cf_model_free(m);
  cfModelDef pa = ga;
  pa.dyn_tangent = CF_DYN_TANGENT_KR;
  pa.preconditioner = CF_PRECOND_AMG;
  m = make_model(pa);
  if (m) CHECK_OK(cf_cuda_check_model(m));
  cf_model_free(m);
  /* "auto" keeps block Jacobi for generalized-alpha on the GPU until its AMG path has run on a device */
  CHECK(cf_preconditioner_auto(1000, CF_INTEGRATOR_GENERALIZED_ALPHA, 1) == CF_PRECOND_BLOCK_JACOBI);
  CHECK(cf_preconditioner_auto(1000, CF_INTEGRATOR_BACKWARD_EULER, 1) == CF_PRECOND_AMG);
}


/* ---- the Newton driver both backends run (cf_newton_step, fem/fem_backend.h) ------------------
 * A fake backend: one mass-spring oscillator per "DOF" (m x'' + k x = F, no damping) behind the
 * cfNewtonOps the GPU implements, Newton's matrix cm m + ck k solved exactly. Against the
 * generalized-alpha recurrence written out here (Chung & Hulbert's alpha_m, alpha_f, gamma, beta
 * from rho_inf; balance at the generalized midpoints, solved for a1): the coefficients and the
 * Newmark relations the driver hands to a backend. Then what a backend's failures do: a
 * non-finite residual halves the step (the loads interpolated, CF_WARN_STEP_CUT, sub_restore),
 * a device error (CF_ERR_CUDA) ends it at once with that status and step_restore, an iteration
 * cap that halvings cannot help ends it with CF_ERR_DIVERGED, the state restored. */
enum { FK = 3 };
typedef struct Fake {
  double mass, k, F_prev[FK], F[FK];
  double x[FK], v[FK], a[FK], x0[FK], v0[FK], a0[FK], xs[FK], vs[FK], as[FK], F0[FK], F1[FK], r[FK];
  int ready, nres, nsolve, nsub_restore, nstep_restore, nsub;
  int fail_res_at;   /* residual call number (1-based) that returns a NaN residual */
  int fail_solve_at; /* solve call number that returns CF_ERR_CUDA */
  double damp_du;    /* < 1: a wrong Newton step (du scaled) */
} Fake;

static int fk_step_begin(void* c) {
  Fake* f = c;
  for (int i = 0; i < FK; i++) {
    if (!f->ready) f->a[i] = (f->F_prev[i] - f->k * f->x[i]) / f->mass;
    f->xs[i] = f->x[i], f->vs[i] = f->v[i], f->as[i] = f->a[i];
  }
  f->ready = 1;
  return CF_OK;
}
static int fk_step_restore(void* c) {
  Fake* f = c;
  f->nstep_restore++;
  for (int i = 0; i < FK; i++) f->x[i] = f->xs[i], f->v[i] = f->vs[i], f->a[i] = f->as[i];
  return CF_OK;
}
static int fk_sub_begin(void* c, double th0, double th1) {
  Fake* f = c;
  f->nsub++;
  for (int i = 0; i < FK; i++) {
    f->F0[i] = f->F_prev[i] + th0 * (f->F[i] - f->F_prev[i]);
    f->F1[i] = f->F_prev[i] + th1 * (f->F[i] - f->F_prev[i]);
    f->x0[i] = f->x[i], f->v0[i] = f->v[i], f->a0[i] = f->a[i];
  }
  return CF_OK;
}
static int fk_sub_accept(void* c) { (void)c; return CF_OK; }
static int fk_sub_restore(void* c) {
  Fake* f = c;
  f->nsub_restore++;
  for (int i = 0; i < FK; i++) f->x[i] = f->x0[i], f->v[i] = f->v0[i], f->a[i] = f->a0[i];
  return CF_OK;
}
static int fk_predict(void* c, double h) {
  Fake* f = c;
  for (int i = 0; i < FK; i++) f->x[i] = f->x0[i] + h * f->v0[i] + 0.5 * h * h * f->a0[i];
  return CF_OK;
}
static int fk_residual(void* c, const double* par, double h, double* out) {
  Fake* f = c;
  const double am = par[0], af = par[1], ga = par[2], be = par[3];
  for (int k = 0; k < 6; k++) out[k] = 0;
  for (int i = 0; i < FK; i++) {
    f->a[i] = (f->x[i] - f->x0[i] - h * f->v0[i] - h * h * (0.5 - be) * f->a0[i]) / (be * h * h);
    f->v[i] = f->v0[i] + h * ((1 - ga) * f->a0[i] + ga * f->a[i]);
    const double ma = f->mass * ((1 - am) * f->a[i] + am * f->a0[i]);
    const double fel = f->k * ((1 - af) * f->x[i] + af * f->x0[i]);
    const double fx = (1 - af) * f->F1[i] + af * f->F0[i];
    f->r[i] = ma + fel - fx;
    out[0] += ma * ma, out[2] += fel * fel, out[3] += fx * fx, out[4] += f->r[i] * f->r[i];
    out[5] += (f->x[i] - f->x0[i]) * (f->x[i] - f->x0[i]);
  }
  if (++f->nres == f->fail_res_at) out[4] = NAN;
  return CF_OK;
}
static int fk_solve(void* c, double cm, double ck, double s, double b_scale, int first, double* dx2, int* pcg) {
  Fake* f = c;
  (void)b_scale, (void)first;
  *pcg = 1;
  if (++f->nsolve == f->fail_solve_at) return cf_error(CF_ERR_CUDA, "fake device: launch failed");
  *dx2 = 0;
  for (int i = 0; i < FK; i++) {
    const double du = f->damp_du * -s * f->r[i] / (cm * f->mass + ck * f->k);
    f->x[i] += du;
    *dx2 += du * du;
  }
  return CF_OK;
}

/* the recurrence itself: one step of h from (x, v, a) under F0 -> F1 */
static void ga_reference(double rho, double mass, double k, double h, double F0, double F1, double* x, double* v,
                         double* a) {
  const double am = (2 * rho - 1) / (rho + 1), af = rho / (rho + 1);
  const double g = 0.5 - am + af, be = 0.25 * (1 - am + af) * (1 - am + af);
  /* x1 = xp + be h^2 a1, xp = x + h v + h^2 (1/2 - be) a; balance:
   * (1 - am) m a1 + am m a + (1 - af) k x1 + af k x = (1 - af) F1 + af F0 */
  const double xp = *x + h * *v + h * h * (0.5 - be) * *a;
  const double a1 = ((1 - af) * F1 + af * F0 - am * mass * *a - (1 - af) * k * xp - af * k * *x) /
                    ((1 - am) * mass + (1 - af) * k * be * h * h);
  const double x1 = xp + be * h * h * a1;
  *v += h * ((1 - g) * *a + g * a1);
  *x = x1;
  *a = a1;
}

static void test_newton_driver(void) {
  cfModelDef def = cf_default_model_def();
  def.integrator = CF_INTEGRATOR_GENERALIZED_ALPHA;
  def.dt = 1e-4;
  def.rho_inf = 0.7;
  def.newton_tol = 1e-10;
  cfModel* m = make_model(def);
  cfData* d = NULL;
  if (m) CHECK_OK(cf_data_create(m, &d));
  if (!d) {
    cf_model_free(m);
    return;
  }
  Fake f;
  memset(&f, 0, sizeof f);
  f.mass = 100, f.k = 1e8, f.damp_du = 1; /* w = 1000 rad/s, w h = 0.1 */
  for (int i = 0; i < FK; i++) f.F[i] = 1e6 * (i + 1), f.F_prev[i] = 0;
  const cfNewtonOps ops = {&f, fk_step_begin, fk_step_restore, fk_sub_begin, fk_sub_accept, fk_sub_restore,
                           fk_predict, fk_residual, fk_solve};
  double xr[FK] = {0}, vr[FK] = {0}, ar[FK] = {0};
  double err = 0, xmax = 0;
  int st_all = 0;
  /* 20 plain steps, the load ramped over the first (F_prev 0 -> F) */
  for (int s = 0; s < 20; s++) {
    int st = cf_newton_step(m, d, &ops);
    st_all |= st;
    for (int i = 0; i < FK; i++) {
      if (s == 0) ar[i] = (f.F_prev[i] - f.k * 0) / f.mass;
      ga_reference(def.rho_inf, f.mass, f.k, def.dt, f.F_prev[i], f.F[i], &xr[i], &vr[i], &ar[i]);
      err = fmax(err, fabs(f.x[i] - xr[i]));
      xmax = fmax(xmax, fabs(xr[i]));
      f.F_prev[i] = f.F[i]; /* the caller's end of the step */
    }
    d->t += def.dt, d->steps++;
  }
  printf("Newton driver, fake backend: 20 steps, |x - recurrence| / max|x| = %.3g, %d Newton iterations "
         "(linear: 2 a step, the exact one and the one whose increment confirms it)\n", err / xmax,
         (int)d->newton_iters_total);
  CHECK(st_all == CF_OK);
  CHECK(err <= 1e-9 * xmax);
  CHECK(d->newton_iters_total == 40 && d->step_cuts == 0);
  /* a non-finite residual in the next step: halved, the two halves against the recurrence */
  f.fail_res_at = f.nres + 1;
  int st = cf_newton_step(m, d, &ops);
  err = 0;
  for (int i = 0; i < FK; i++) {
    ga_reference(def.rho_inf, f.mass, f.k, 0.5 * def.dt, f.F[i], f.F[i], &xr[i], &vr[i], &ar[i]);
    ga_reference(def.rho_inf, f.mass, f.k, 0.5 * def.dt, f.F[i], f.F[i], &xr[i], &vr[i], &ar[i]);
    err = fmax(err, fabs(f.x[i] - xr[i]));
  }
  printf("  NaN residual: %s, %d cut, sub_restore %d, |x - two half steps| / max|x| = %.3g: %s\n",
         cf_status_name(st), d->step_cuts, f.nsub_restore, err / xmax, cf_last_error());
  CHECK(st == CF_WARN_STEP_CUT && d->step_cuts == 1 && f.nsub_restore == 1 && f.nstep_restore == 0);
  CHECK(err <= 1e-9 * xmax);
  CHECK(contains(cf_last_error(), "the step was halved (1 cuts"));
  d->t += def.dt, d->steps++;
  /* a device error in the solve: that status at once, no halving, the step's start restored */
  double x_before[FK];
  memcpy(x_before, f.x, sizeof x_before);
  f.fail_solve_at = f.nsolve + 1;
  const int subs = f.nsub;
  st = cf_newton_step(m, d, &ops);
  printf("  device error: %s, %d substeps, step_restore %d: %s\n", cf_status_name(st), f.nsub - subs,
         f.nstep_restore, cf_last_error());
  CHECK(st == CF_ERR_CUDA && f.nsub - subs == 1 && f.nstep_restore == 1);
  CHECK(!memcmp(x_before, f.x, sizeof x_before));
  CHECK(contains(cf_last_error(), "generalized-alpha: fake device: launch failed"));
  CHECK(contains(cf_last_error(), "step 22, t = 0.0022"));
  /* a Newton step that converges too slowly for the cap: halvings do not help, CF_ERR_DIVERGED */
  f.damp_du = 0.5;
  m->def.newton_max_iter = 3;
  f.fail_solve_at = 0;
  st = cf_newton_step(m, d, &ops);
  printf("  iteration cap: %s, step_restore %d: %s\n", cf_status_name(st), f.nstep_restore, cf_last_error());
  CHECK(st == CF_ERR_DIVERGED && f.nstep_restore == 2);
  CHECK(!memcmp(x_before, f.x, sizeof x_before));
  CHECK(contains(cf_last_error(), "the iteration cap was reached") && contains(cf_last_error(), "after 4 halvings"));
  cf_data_free(d);
  cf_model_free(m);
}

/* ---- the field table and the state bits -------------------------------------------------------- */

static void test_fields(const cfModel* m) {
  cfData *a = NULL, *b = NULL;
  CHECK_OK(cf_data_create(m, &a));
  CHECK_OK(cf_data_create(m, &b));
  if (!a || !b) goto done;
  const size_t nd = (size_t)m->ndof, ne = (size_t)m->ntet, nb = (size_t)m->nnzb;
  struct {
    int bit;
    double* p;
    size_t n;
  } expect[] = {{CF_CUDA_X, a->x, nd},       {CF_CUDA_V, a->v, nd},          {CF_CUDA_R, a->R, 9 * ne},
                {CF_CUDA_F_EXT, a->f_ext, nd}, {CF_CUDA_KR, a->KR, 144 * ne}, {CF_CUDA_FE, a->fe, 12 * ne},
                {CF_CUDA_F_EL, a->f_el, nd},   {CF_CUDA_A, a->A, 9 * nb},     {CF_CUDA_B, a->b, nd},
                {CF_CUDA_PINV, a->Pinv, 3 * nd}, {CF_CUDA_V_PREV, a->v_prev, nd},
                {CF_CUDA_F_EXT_PREV, a->f_ext_prev, nd},
                {CF_CUDA_ACC, a->a, a->a ? nd : 0}}; /* accelerations: generalized-alpha's only */
  const int nexp = (int)(sizeof expect / sizeof expect[0]);
  int covered = 0;
  for (int i = 0; i < nexp; i++) {
    size_t n = 0;
    double* p = cf_cuda_field(a, m->nnode, m->ntet, m->npe, m->nnzb, expect[i].bit, &n);
    CHECK(p == expect[i].p);
    CHECK(n == expect[i].n);
    covered |= expect[i].bit;
  }
  CHECK(covered == CF_CUDA_ALL); /* every bit of ALL is a field, and no field lies outside it */
  size_t n = 99;
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->npe, m->nnzb, 0, &n) == NULL && n == 0);
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->npe, m->nnzb, CF_CUDA_X | CF_CUDA_V, &n) == NULL && n == 0);
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->npe, m->nnzb, CF_CUDA_ALL + 1, &n) == NULL && n == 0);

  /* the state a step carries: a run's a, a device copy b that had another run's state; after
   * a reset of a, the state bits through the table (upload, then download) make b equal to a */
  fill_vec(a->x, nd, 1), fill_vec(a->v, nd, 2), fill_vec(a->v_prev, nd, 3), fill_vec(a->R, 9 * ne, 4);
  fill_vec(b->x, nd, 5), fill_vec(b->v, nd, 6), fill_vec(b->v_prev, nd, 7), fill_vec(b->R, 9 * ne, 8);
  cf_data_reset(m, a);
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(CF_CUDA_STATE & bit)) continue;
    size_t na = 0, nb2 = 0;
    const double* src = cf_cuda_field(a, m->nnode, m->ntet, m->npe, m->nnzb, bit, &na);
    double* dst = cf_cuda_field(b, m->nnode, m->ntet, m->npe, m->nnzb, bit, &nb2);
    if (!src) { /* a field this integrator has not (d->a): nothing to carry, on either side */
      CHECK(na == 0 && !dst && nb2 == 0);
      continue;
    }
    CHECK(src && dst && na == nb2);
    if (src && dst && na == nb2) memcpy(dst, src, na * sizeof(double));
  }
  CHECK(memcmp(a->x, b->x, nd * sizeof(double)) == 0);
  CHECK(memcmp(a->v, b->v, nd * sizeof(double)) == 0);
  CHECK(memcmp(a->v_prev, b->v_prev, nd * sizeof(double)) == 0); /* the warm start's 2nd vector */
  CHECK(memcmp(a->R, b->R, 9 * ne * sizeof(double)) == 0);
  CHECK((CF_CUDA_STATE & (CF_CUDA_KR | CF_CUDA_A | CF_CUDA_B | CF_CUDA_PINV)) == 0);
  /* generalized-alpha carries its load at t and its accelerations from step to step */
  CHECK((CF_CUDA_STATE & (CF_CUDA_F_EXT_PREV | CF_CUDA_ACC)) == (CF_CUDA_F_EXT_PREV | CF_CUDA_ACC));
done:
  cf_data_free(a);
  cf_data_free(b);
}

/* The divergence monitor's decision (cf_divergence_decide), which the GPU step feeds with its
 * device figures: each test on hand-made figures, and the CPU's own figures give cf_divergence_check's
 * verdict and message. */
static void test_monitor_decide(const cfModel* m) {
  cfData* d = NULL;
  CHECK_OK(cf_data_create(m, &d));
  if (!d) return;
  for (int i = 0; i < m->ndof; i += 3) d->f_ext[i + 2] = -1e3;
  for (int s = 0; s < 3; s++) CHECK(cf_step(m, d) >= 0);
  cfMonitorStats st;
  cf_divergence_stats(m, d, &st);
  CHECK(st.bad_dof == -1 && st.kinetic > 0 && st.dev > 0);
  CHECK(st.full == 0); /* step 4: the kinetic energy alone */
  CHECK(cf_divergence_decide(m, d, &st) == CF_OK);
  const double size = d->mon_size;
  CHECK(size > 1.0 && size < 1.1); /* the 1 x 0.1 x 0.1 box's diagonal: 1.00995 */
  char msg[1024];
  /* 1. non-finite: the first bad DOF's node (1-based), position before velocity */
  cfMonitorStats b = st;
  b.bad_dof = 7, b.bad_x = 0.5, b.bad_v = NAN;
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED);
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  printf("  decide, NaN velocity: %s\n", msg);
  const char* want = "step 4, t = 0.003 s: the dynamics diverged: the velocity of node index 3 is not finite (nan)";
  CHECK(!strncmp(msg, want, strlen(want)));
  b.bad_x = INFINITY;
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED);
  CHECK(strstr(cf_last_error(), "the position of node index 3 is not finite (inf)") != NULL);
  /* 2. displacement: 100 part sizes is the limit */
  b = st;
  b.dev = 99 * size, b.dev_node = 11;
  CHECK(cf_divergence_decide(m, d, &b) == CF_OK);
  b.dev = 101 * size;
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED);
  CHECK(strstr(cf_last_error(), "node index 12 moved ") != NULL);
  CHECK(strstr(cf_last_error(), "more than 100 x the part's size") != NULL);
  /* 3. energy above E0 + W + 10 scale (scale = max(E0, max |W|, E_floor) = max |W| here) */
  const double limit = d->mon_energy0 + d->mon_work + 10 * fmax(fmax(d->mon_energy0, d->mon_work_max), 1e-300);
  b = st;
  b.kinetic = 0.99 * limit;
  CHECK(cf_divergence_decide(m, d, &b) == CF_OK);
  b.kinetic = 1.01 * limit;
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED);
  CHECK(strstr(cf_last_error(), "the kinetic energy alone grew to ") != NULL);
  b.full = 1, b.kinetic = 0.5 * limit, b.strain = 0.52 * limit; /* the sum decides */
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED);
  CHECK(strstr(cf_last_error(), "the energy grew to ") != NULL && strstr(cf_last_error(), " + strain ") != NULL);
  b.kinetic = NAN, b.full = 0;
  CHECK(cf_divergence_decide(m, d, &b) == CF_ERR_DIVERGED); /* a non-finite energy is never "within" */
  printf("  decide: limits at 100 sizes (%.4g m) and E0 + W + 10 scale (%.4g J) ok\n", 100 * size, limit);
  /* the CPU's check is stats + decide: same verdict and message on a blown-up state */
  d->v[5] *= 1e8;
  cf_divergence_stats(m, d, &st);
  int s1 = cf_divergence_decide(m, d, &st);
  snprintf(msg, sizeof msg, "%s", cf_last_error());
  int s2 = cf_divergence_check(m, d);
  CHECK(s1 == CF_ERR_DIVERGED && s2 == s1);
  CHECK(!strcmp(msg, cf_last_error()));
  cf_data_free(d);
}

int main(void) {
  CHECK_OK(cf_mesh_box(6, 2, 2, 1.0, 0.1, 0.1, &mesh));
  cfModelDef def = cf_default_model_def();
  def.dt = 1e-3;
  cfModel* m = make_model(def);
  if (!m) TEST_END();
  test_pcg_target();
  test_pcg_result(m);
  test_step_nonfinite(def, NAN, "NaN load, warm start");
  cfModelDef cold = def;
  cold.warm_start = 0;
  test_step_nonfinite(cold, INFINITY, "Inf load, cold start");
  test_check_model();
  test_system_coefficients();
  test_fields(m);
  test_newton_driver();
  test_monitor_decide(m);
  char why[256];
  CHECK(cf_cuda_device_available(-1, why, sizeof why) == 0);
  CHECK(why[0] != 0);
  printf("device -1: %s\n", why);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
