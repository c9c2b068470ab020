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

  cfModelDef n = def;
  n.integrator = CF_INTEGRATOR_NEWMARK;
  refused(n, -1, "backward Euler only (the model asks for Newmark)", "Newmark");
  /* the integrator added after the GPU (issue 15: generalized-alpha with Newton iterations) */
  refused(def, CF_INTEGRATOR_NEWMARK + 1, "backward Euler only (the model asks for ", "integrator 2");
  /* and one nobody has written yet */
  refused(def, 99, "backward Euler only (the model asks for another integrator)", "integrator 99");
  cfModelDef t = def;
  t.dyn_tangent = CF_DYN_TANGENT_SYM_CONSISTENT;
  refused(t, -1, "K_R only (the model asks for the symmetric consistent tangent)", "sym. consistent");
  cfModelDef p = def;
  p.preconditioner = CF_PRECOND_ROTATED_CHOLESKY;
  refused(p, -1, "block Jacobi only (the model asks for the rotated Cholesky)", "rotated Cholesky");
  p.preconditioner = CF_PRECOND_AMG;
  refused(p, -1, "block Jacobi only (the model asks for AMG)", "AMG");
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
                {CF_CUDA_PINV, a->Pinv, 3 * nd}, {CF_CUDA_V_PREV, a->v_prev, nd}};
  const int nexp = (int)(sizeof expect / sizeof expect[0]);
  int covered = 0;
  for (int i = 0; i < nexp; i++) {
    size_t n = 0;
    double* p = cf_cuda_field(a, m->nnode, m->ntet, m->nnzb, expect[i].bit, &n);
    CHECK(p == expect[i].p);
    CHECK(n == expect[i].n);
    covered |= expect[i].bit;
  }
  CHECK(covered == CF_CUDA_ALL); /* every bit of ALL is a field, and no field lies outside it */
  size_t n = 99;
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->nnzb, 0, &n) == NULL && n == 0);
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->nnzb, CF_CUDA_X | CF_CUDA_V, &n) == NULL && n == 0);
  CHECK(cf_cuda_field(a, m->nnode, m->ntet, m->nnzb, CF_CUDA_ALL + 1, &n) == NULL && n == 0);

  /* the state a step carries: a run's a, a device copy b that had another run's state; after
   * a reset of a, the state bits through the table (upload, then download) make b equal to a */
  fill_vec(a->x, nd, 1), fill_vec(a->v, nd, 2), fill_vec(a->v_prev, nd, 3), fill_vec(a->R, 9 * ne, 4);
  fill_vec(b->x, nd, 5), fill_vec(b->v, nd, 6), fill_vec(b->v_prev, nd, 7), fill_vec(b->R, 9 * ne, 8);
  cf_data_reset(m, a);
  for (int bit = 1; bit <= CF_CUDA_ALL; bit <<= 1) {
    if (!(CF_CUDA_STATE & bit)) continue;
    size_t na = 0, nb2 = 0;
    const double* src = cf_cuda_field(a, m->nnode, m->ntet, m->nnzb, bit, &na);
    double* dst = cf_cuda_field(b, m->nnode, m->ntet, m->nnzb, bit, &nb2);
    CHECK(src && dst && na == nb2);
    if (src && dst && na == nb2) memcpy(dst, src, na * sizeof(double));
  }
  CHECK(memcmp(a->x, b->x, nd * sizeof(double)) == 0);
  CHECK(memcmp(a->v, b->v, nd * sizeof(double)) == 0);
  CHECK(memcmp(a->v_prev, b->v_prev, nd * sizeof(double)) == 0); /* the warm start's 2nd vector */
  CHECK(memcmp(a->R, b->R, 9 * ne * sizeof(double)) == 0);
  CHECK((CF_CUDA_STATE & (CF_CUDA_KR | CF_CUDA_A | CF_CUDA_B | CF_CUDA_PINV)) == 0);
done:
  cf_data_free(a);
  cf_data_free(b);
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
  char why[256];
  CHECK(cf_cuda_device_available(-1, why, sizeof why) == 0);
  CHECK(why[0] != 0);
  printf("device -1: %s\n", why);
  cf_model_free(m);
  cf_mesh_free(&mesh);
  TEST_END();
}
