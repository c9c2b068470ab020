/* Paper 002's effective-mass reading (Schilder et al., eqs. 3-4; issue 29): a chain of identical rigid
 * bars on a floating root. The root's condensed mass from the semi-recursive backward recursion
 * (cf_mbs_sr_condensed_mass: each eliminated body's effective mass added to its parent's) against the
 * global formulation's assembly, computed independently of the recursion: the natural-coordinate mass
 * matrix M (Mbar (x) I3 per body) and the global constraint Jacobian Phi_q (rigidity and joint
 * equations), the root's twist V imposed on its 12 velocities (r_dot = s_dot + w x r, u_dot = w x u),
 * the other bodies' velocities x minimising 1/2 qd^T M qd subject to Phi_q qd = 0 (a KKT solve), then
 *   M_root = Qd^T M Qd,  Qd = [qd(V = e_1) .. qd(V = e_6)]
 * (the kinetic energy of the whole chain as a function of the root's twist alone). With revolute joints
 * the joints move freely (the articulated, condensed mass); with fixed joints the chain is one rigid
 * body (eq. 30's composite inertia). Both must agree to round-off. Then the same for chains of 2 and 4
 * identical modal bars (free-free, 4 modes) jointed at frame points, their amplitudes set off zero: the
 * global side's M is the model's natural mass with the modal invariants (cf_mbs__apply_M), and both
 * condense the amplitudes too (Mbar - C Myy^-1 C^T on the recursion's side). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/mbs.h"
#include "cofem/mbs_modal.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/mesh_box.h"
#include "cofem/status.h"
#include "mbs/mbs_internal.h"

/* Gaussian elimination with partial pivoting, A [n x n] row-major (destroyed), b -> x; < 0 singular */
static int gauss(int n, double* A, double* b) {
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
    if (!(fabs(A[p * n + k]) > 1e-300)) return -1;
    if (p != k) {
      for (int j = 0; j < n; j++) {
        double t = A[k * n + j];
        A[k * n + j] = A[p * n + j], A[p * n + j] = t;
      }
      double t = b[k];
      b[k] = b[p], b[p] = t;
    }
    for (int i = k + 1; i < n; i++) {
      double f = A[i * n + k] / A[k * n + k];
      if (f == 0) continue;
      for (int j = k; j < n; j++) A[i * n + j] -= f * A[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    double v = b[i];
    for (int j = i + 1; j < n; j++) v -= A[i * n + j] * b[j];
    b[i] = v / A[i * n + i];
  }
  return 0;
}

/* a chain of n identical bars (1 m, 2 kg, centre of mass off the bar's line) from a floating root,
 * joints alternating about z and y so that the condensed mass is full; joint_type: revolute or fixed */
static void make_chain(cfMbsDef* def, int n, int joint_type) {
  cf_mbs_def_init(def);
  def->opt.dt = 1e-3;
  for (int i = 0; i < n; i++) {
    cfMbsBodyDef b = cf_mbs_default_body_def();
    snprintf(b.name, sizeof b.name, "bar%d", i);
    b.mass = 2;
    b.com[0] = 0.5, b.com[1] = 0.05;
    b.inertia[0] = 0.01, b.inertia[1] = 0.17, b.inertia[2] = 0.18, b.inertia[3] = 0.003;
    b.pos[0] = i, b.pos[2] = 0.3;
    double ax[3] = {0.3, 0.2, 1}, nrm = sqrt(0.09 + 0.04 + 1); /* a body frame turned off the global axes */
    for (int k = 0; k < 3; k++) ax[k] /= nrm;
    cf_mbs_axis_angle(ax, 0.1 * i, b.rot);
    b.pos[1] = 0.02 * i;
    int id = cf_mbs_add_body(def, &b);
    if (i == 0) continue; /* the root floats */
    cfMbsJointDef j = cf_mbs_default_joint_def();
    snprintf(j.name, sizeof j.name, "J%d", i);
    j.type = joint_type, j.body1 = id - 1, j.body2 = id;
    j.point[0] = i, j.point[1] = 0.02 * i, j.point[2] = 0.3;
    j.axis[0] = 0, j.axis[1] = i % 2 ? 0 : 1, j.axis[2] = i % 2 ? 1 : 0;
    cf_mbs_add_joint(def, &j);
  }
}

/* the global assembly's condensed mass of the whole chain on body 0 (see the top of the file) */
static int global_condensed(const cfMbsModel* m, cfMbsData* d, double M6[36]) {
  int nq = m->nq, q0 = m->body_qadr[0], nr = nq - 12;
  cf_mbs__eval_phi(m, d, d->q, d->t, 1);
  double* Phi = calloc((size_t)m->ncon * nq, sizeof(double));
  double* M = calloc((size_t)nq * nq, sizeof(double));
  int* keep = calloc((size_t)m->ncon, sizeof(int));
  double* Qd = calloc((size_t)6 * nq, sizeof(double));
  if (!Phi || !M || !keep || !Qd) return CF_ERR_NOMEM;
  for (int i = 0; i < m->ncon; i++) {
    const cfMbsCon* c = &m->con[i];
    for (int sl = 0; sl < c->nb; sl++)
      for (int x = 0; x < 12; x++) Phi[(size_t)i * nq + m->body_qadr[c->body[sl]] + x] += d->jac[(size_t)i * m->jac_stride + 12 * sl + x];
  }
  /* M column by column: the natural mass at d->q (rigid Mbar (x) I3, and the modal bodies' invariants) */
  double* e = calloc((size_t)nq, sizeof(double));
  double* col = calloc((size_t)nq, sizeof(double));
  if (!e || !col) return CF_ERR_NOMEM;
  for (int j = 0; j < nq; j++) {
    e[j] = 1;
    cf_mbs__apply_M(m, d, e, col);
    for (int i = 0; i < nq; i++) M[(size_t)i * nq + j] = col[i];
    e[j] = 0;
  }
  free(e), free(col);
  /* the free unknowns: every coordinate but the root's (assumed first); rows touching them */
  int nk = 0;
  for (int i = 0; i < m->ncon; i++) {
    int any = 0;
    for (int x = 0; x < nq; x++) any |= (x < q0 || x >= q0 + 12) && Phi[(size_t)i * nq + x] != 0;
    if (any) keep[nk++] = i;
  }
  int n = nr + nk, st = CF_OK;
  double *K = malloc(sizeof(double) * (size_t)n * n), *rhs = malloc(sizeof(double) * (size_t)n);
  if (q0 != 0 || !K || !rhs) st = CF_ERR_ARG;
  const double* qr = d->q + q0;
  for (int v = 0; v < 6 && st >= 0; v++) {
    double V[6] = {0}, qd0[12], w[3];
    V[v] = 1;
    for (int k = 0; k < 4; k++) { /* r_dot = s_dot + w x r, e_dot = w x e */
      cf_mbs_cross3(V + 3, qr + 3 * k, w);
      for (int i = 0; i < 3; i++) qd0[3 * k + i] = w[i] + (k == 0 ? V[i] : 0);
    }
    memset(K, 0, sizeof(double) * (size_t)n * n);
    for (int i = 0; i < nr; i++) {
      for (int j = 0; j < nr; j++) K[i * n + j] = M[(size_t)(12 + i) * nq + 12 + j];
      rhs[i] = 0;
      for (int j = 0; j < 12; j++) rhs[i] -= M[(size_t)(12 + i) * nq + j] * qd0[j];
    }
    for (int r = 0; r < nk; r++) {
      const double* row = Phi + (size_t)keep[r] * nq;
      for (int j = 0; j < nr; j++) K[(nr + r) * n + j] = K[j * n + nr + r] = row[12 + j];
      rhs[nr + r] = 0;
      for (int j = 0; j < 12; j++) rhs[nr + r] -= row[j] * qd0[j];
    }
    if (gauss(n, K, rhs) < 0) st = CF_ERR_SOLVER;
    memcpy(Qd + (size_t)v * nq, qd0, sizeof qd0);
    memcpy(Qd + (size_t)v * nq + 12, rhs, sizeof(double) * (size_t)nr);
  }
  for (int a = 0; a < 6 && st >= 0; a++)
    for (int b = 0; b < 6; b++) {
      double e = 0;
      for (int i = 0; i < nq; i++)
        for (int j = 0; j < nq; j++) e += Qd[(size_t)a * nq + i] * M[(size_t)i * nq + j] * Qd[(size_t)b * nq + j];
      M6[6 * a + b] = e;
    }
  free(Phi), free(M), free(keep), free(Qd), free(K), free(rhs);
  return st;
}

static void check_chain(int n, int joint_type, int free_joints, double* worst) {
  cfMbsDef def;
  make_chain(&def, n, joint_type);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  cfMbsSr* s = NULL;
  int st = cf_mbs_model_create(&def, &m);
  if (st >= 0) st = cf_mbs_data_create(m, &d);
  if (st >= 0) st = cf_mbs_sr_create(m, d, &s);
  if (st < 0) printf("chain of %d: %s\n", n, cf_last_error());
  CHECK_OK(st);
  double Ms[36], Mg[36];
  if (st >= 0) {
    CHECK_OK(cf_mbs_sr_condensed_mass(m, s, d, 0, free_joints, Ms));
    CHECK_OK(global_condensed(m, d, Mg));
    double scale = 0, diff = 0, locked_gap = 0, Ml[36];
    for (int i = 0; i < 36; i++) scale = fmax(scale, fabs(Mg[i])), diff = fmax(diff, fabs(Ms[i] - Mg[i]));
    /* the freed joints must matter: the locked (composite) mass differs from the condensed one */
    if (free_joints && joint_type == CF_MBS_REVOLUTE) {
      CHECK_OK(cf_mbs_sr_condensed_mass(m, s, d, 0, 0, Ml));
      for (int i = 0; i < 36; i++) locked_gap = fmax(locked_gap, fabs(Ml[i] - Mg[i]));
      CHECK(locked_gap > 1e-3 * scale);
    }
    printf("chain of %2d, %s joints (%s): root's condensed mass, recursion vs global, max |diff| %.2e of %.3g "
           "(locked instead of free: %.2e)\n", n, joint_type == CF_MBS_REVOLUTE ? "revolute" : "fixed",
           free_joints ? "free" : "locked", diff, scale, locked_gap);
    CHECK(diff <= 1e-14 * scale); /* round-off: measured 3.5e-16 .. 1.0e-15 relative */
    *worst = fmax(*worst, diff / scale);
    /* the composite mass of a fixed chain is eq. 30's total mass and first moment: sum m, sum m g~ */
    if (joint_type != CF_MBS_REVOLUTE) CHECK_CLOSE(Ms[0], 2.0 * n, 0, 1e-12 * n);
  }
  cf_mbs_sr_free(s);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

/* a chain of n identical modal bars (free-free, 4 modes, E 2e7 Pa) on a floating root, revolute joints
 * at frame points (alternating about z and y), every body's amplitudes set off zero (where the frame and
 * the modes couple: C(y) != 0): the root's condensed mass with joints and amplitudes free */
static void check_modal_chain(const cfReduction* red, const cfMesh* mesh, int n, double* worst) {
  cfMbsDef def;
  cf_mbs_def_init(&def);
  def.opt.dt = 1e-3;
  for (int i = 0; i < n; i++) {
    cfMbsBodyDef fb = cf_mbs_default_body_def();
    snprintf(fb.name, sizeof fb.name, "bar%d", i);
    fb.pos[0] = 0.3 * i, fb.pos[1] = -0.025, fb.pos[2] = -0.025;
    cfMbsModalDef md = cf_mbs_default_modal_def();
    md.red = red, md.X = mesh->X;
    CHECK(cf_mbs_add_modal_body(&def, &fb, &md) == i);
    if (i == 0) continue;
    cfMbsJointDef j = cf_mbs_default_joint_def();
    snprintf(j.name, sizeof j.name, "J%d", i);
    j.type = CF_MBS_REVOLUTE, j.body1 = i - 1, j.body2 = i;
    j.point[0] = 0.3 * i, j.point[1] = 0, j.point[2] = 0;
    j.axis[0] = 0, j.axis[1] = i % 2 ? 0 : 1, j.axis[2] = i % 2 ? 1 : 0;
    CHECK(cf_mbs_add_joint(&def, &j) >= 0);
  }
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  cfMbsSr* s = NULL;
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) {
    for (int i = 0; i < n; i++) { /* the amplitudes, set in place before the formulation starts from them */
      double* y = (double*)cf_mbs_modal_y(m, d, i);
      for (int k = 0; k < cf_mbs_modal_nmodes(m, i); k++) y[k] = 0.05 * (k + 1) * (i % 2 ? -1 : 1);
    }
    int st = cf_mbs_sr_create(m, d, &s);
    if (st < 0) printf("modal chain: %s\n", cf_last_error());
    CHECK_OK(st);
  }
  if (s) {
    double Ms[36], Mg[36], Ml[36], scale = 0, diff = 0, locked_gap = 0;
    CHECK_OK(cf_mbs_sr_condensed_mass(m, s, d, 0, 1, Ms));
    CHECK_OK(cf_mbs_sr_condensed_mass(m, s, d, 0, 0, Ml));
    CHECK_OK(global_condensed(m, d, Mg));
    for (int i = 0; i < 36; i++)
      scale = fmax(scale, fabs(Mg[i])), diff = fmax(diff, fabs(Ms[i] - Mg[i])), locked_gap = fmax(locked_gap, fabs(Ml[i] - Mg[i]));
    printf("modal chain of %d: root's condensed mass (joints and amplitudes free), recursion vs global, max |diff| %.2e "
           "of %.3g (locked instead: %.2e)\n", n, diff, scale, locked_gap);
    CHECK(diff <= 1e-14 * scale); /* round-off: measured 5.6e-17 (2 bars), 4.5e-16 (4) relative; without the
                                      amplitudes' condensation 1.5e-3 */
    CHECK(locked_gap > 1e-3 * scale);
    *worst = fmax(*worst, diff / scale);
  }
  cf_mbs_sr_free(s);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
}

int main(void) {
  double worst = 0;
  static const int sizes[] = {2, 3, 6, 10};
  for (int i = 0; i < 4; i++) {
    check_chain(sizes[i], CF_MBS_REVOLUTE, 1, &worst);
    check_chain(sizes[i], CF_MBS_FIXED, 1, &worst);
    check_chain(sizes[i], CF_MBS_FIXED, 0, &worst);
  }
  /* modal bars */
  cfMesh mesh;
  cfModel* model = NULL;
  cfReduction red;
  memset(&mesh, 0, sizeof mesh), memset(&red, 0, sizeof red);
  cfModelDef md = cf_default_model_def();
  md.E = 2e7, md.nu = 0.3, md.rho = 7850;
  cfReduceOptions ro = cf_default_reduce_options();
  ro.nmodes = 6 + 4; /* free-free: the 6 rigid-body vectors (the frame's), then 4 modes */
  CHECK_OK(cf_mesh_box(6, 1, 1, 0.3, 0.05, 0.05, &mesh));
  CHECK_OK(cf_model_create(&mesh, &md, &model));
  if (model) CHECK_OK(cf_reduce(model, NULL, 0, &ro, &red));
  if (red.n) {
    check_modal_chain(&red, &mesh, 2, &worst);
    check_modal_chain(&red, &mesh, 4, &worst);
    cf_reduction_free(&red);
  }
  cf_model_free(model);
  cf_mesh_free(&mesh);
  printf("worst relative difference %.2e\n", worst);
  /* a bad body id is refused with a message */
  cfMbsDef def;
  make_chain(&def, 2, CF_MBS_REVOLUTE);
  cfMbsModel* m = NULL;
  cfMbsData* d = NULL;
  cfMbsSr* s = NULL;
  double M6[36];
  CHECK_OK(cf_mbs_model_create(&def, &m));
  if (m) CHECK_OK(cf_mbs_data_create(m, &d));
  if (d) CHECK_OK(cf_mbs_sr_create(m, d, &s));
  if (s) {
    CHECK(cf_mbs_sr_condensed_mass(m, s, d, 7, 1, M6) == CF_ERR_ARG);
    CHECK(strstr(cf_last_error(), "body 7") != NULL);
  }
  cf_mbs_sr_free(s);
  cf_mbs_data_free(d);
  cf_mbs_model_free(m);
  cf_mbs_def_free(&def);
  TEST_END();
}
