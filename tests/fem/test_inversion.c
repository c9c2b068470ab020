/* Inversion and solver-cap robustness on the lug (meshes/lug.msh, sets from scenes/lug_pull.json).
 *
 * 1. Crush: the eye ("load" set) is pushed down with 1e8 N (the lug's yield load is ~2e5 N: the
 *    plate is 60 x 15 mm, 250 MPa), ramped over 0.1 s, held to 0.3 s, then released. Elements
 *    invert; every such step must return CF_WARN_INVERTED and count it in
 *    d->warning[CF_WARN_INVERTED]; x, v, R, the element and assembled forces and the energies stay
 *    finite throughout; 0.5 s after the release the part is back in its rest shape (within 1 um of
 *    the same lug that was never crushed, at rest, no inverted element, no warning).
 * 2. PCG cap: the same crush with pcg_max_iter = 5. Every step returns a warning
 *    (CF_WARN_PCG_NOT_CONVERGED, which takes precedence over the inversion warning), counted per
 *    step, with a finite state and a finite residual above the tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/cofem.h"

static const double kForce = 1e8;   /* N, downwards on the eye */
static const double kRamp = 0.1, kRelease = 0.3, kRecover = 0.5; /* s */

static int all_finite(const double* a, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

static int state_finite(const cfModel* m, const cfData* d) {
  return all_finite(d->x, (size_t)m->ndof) && all_finite(d->v, (size_t)m->ndof) &&
         all_finite(d->R, 9 * (size_t)m->ntet) && all_finite(d->fe, 12 * (size_t)m->ntet) &&
         all_finite(d->f_el, (size_t)m->ndof) && all_finite(d->b, (size_t)m->ndof) &&
         isfinite(cf_kinetic_energy(m, d)) && isfinite(cf_strain_energy(m, d)) &&
         isfinite(d->pcg_residual);
}

static double max_dist(const cfModel* m, const double* x, const double* y) {
  double mx = 0;
  for (int n = 0; n < m->nnode; n++) {
    double s = 0;
    for (int k = 0; k < 3; k++) s += (x[3 * n + k] - y[3 * n + k]) * (x[3 * n + k] - y[3 * n + k]);
    mx = fmax(mx, sqrt(s));
  }
  return mx;
}

/* The crush load at time t on the eye nodes (equal shares). */
static void crush_forces(const cfModel* m, const cfNodeSet* eye, double t, double* f) {
  memset(f, 0, sizeof(double) * (size_t)m->ndof);
  double a = t < kRamp ? t / kRamp : (t <= kRelease ? 1.0 : 0.0);
  for (int i = 0; i < eye->count; i++) f[3 * eye->nodes[i] + 2] = -a * kForce / eye->count;
}

static void test_crush_and_release(const cfScene* s) {
  cfModel *m, *mr;
  cfData *d, *dr;
  CHECK_OK(cf_scene_build(s, &m, &d));
  CHECK_OK(cf_scene_build(s, &mr, &dr)); /* the reference: gravity only */
  const cfNodeSet* eye = cf_mesh_find_nset(&s->mesh, "load");
  CHECK(eye && eye->count > 0);
  const double h = m->def.dt;
  const long n_release = lround(kRelease / h), n_end = lround((kRelease + kRecover) / h);
  int steps_inverted = 0, returned_inverted = 0, max_inverted = 0, nonfinite_at = 0;
  int bad_status = 0, msg_ok = 1;
  double peak = 0;
  for (long k = 1; k <= n_end; k++) {
    crush_forces(m, eye, k * h, d->f_ext);
    int st = cf_step(m, d);
    cf_step(mr, dr);
    if (st < 0 || (st > 0 && st != CF_WARN_INVERTED && st != CF_WARN_PCG_NOT_CONVERGED)) bad_status++;
    if (d->ninverted > 0) {
      steps_inverted++;
      max_inverted = d->ninverted > max_inverted ? d->ninverted : max_inverted;
      if (st == CF_WARN_INVERTED) {
        returned_inverted++;
        msg_ok &= strstr(cf_last_error(), "inverted elements") != NULL;
      }
    } else if (st == CF_WARN_INVERTED) {
      bad_status++; /* a warning without inverted elements */
    }
    if (!nonfinite_at && !state_finite(m, d)) nonfinite_at = (int)k;
    peak = fmax(peak, max_dist(m, d->x, m->X));
    if (k == n_release)
      printf("crush %.0e N: peak displacement %.3g m, %d steps with inverted elements (max %d "
             "elements)\n", kForce, peak, steps_inverted, max_inverted);
  }
  double off = max_dist(m, d->x, dr->x), rest = max_dist(m, d->x, m->X);
  double ke = cf_kinetic_energy(m, d);
  printf("%.1f s after the release: %.3g m from the never-crushed lug (%.3g m from X), kinetic "
         "energy %.3g J, %d inverted; warnings: %d inverted, %d PCG not converged, %d indefinite\n",
         kRecover, off, rest, ke, d->ninverted, d->warning[CF_WARN_INVERTED],
         d->warning[CF_WARN_PCG_NOT_CONVERGED], d->warning[CF_WARN_INDEFINITE]);
  CHECK(nonfinite_at == 0);
  if (nonfinite_at) fprintf(stderr, "non-finite state at step %d\n", nonfinite_at);
  CHECK(bad_status == 0);
  CHECK(peak > 0.5);           /* a crush indeed */
  CHECK(max_inverted >= 10);   /* tets inverted */
  CHECK(steps_inverted >= 10);
  CHECK(d->warning[CF_WARN_INVERTED] == steps_inverted); /* counted once per step */
  CHECK(returned_inverted + d->warning[CF_WARN_PCG_NOT_CONVERGED] + d->warning[CF_WARN_INDEFINITE] >=
        steps_inverted); /* returned, unless a solver warning took precedence */
  CHECK(msg_ok);
  CHECK(off < 1e-6);           /* the rest shape again */
  CHECK(d->ninverted == 0);
  CHECK(ke < 1e-9);
  /* and it stays there: quiet steps, no warning */
  int quiet = 1;
  for (int k = 0; k < 10; k++) {
    crush_forces(m, eye, (n_end + 1 + k) * h, d->f_ext);
    quiet &= cf_step(m, d) == CF_OK;
  }
  CHECK(quiet);
  CHECK(state_finite(m, d));
  cf_data_free(d);
  cf_model_free(m);
  cf_data_free(dr);
  cf_model_free(mr);
}

static void test_pcg_cap(const cfScene* s0) {
  cfScene s = *s0; /* shares the mesh: only def changes */
  s.def.pcg_max_iter = 5;
  cfModel* m;
  cfData* d;
  CHECK_OK(cf_scene_build(&s, &m, &d));
  const cfNodeSet* eye = cf_mesh_find_nset(&s.mesh, "load");
  const double h = m->def.dt;
  const long n = lround((kRelease + 0.1) / h);
  int capped = 0, finite = 1, resid_ok = 1, iters_ok = 1, msg_ok = 1;
  for (long k = 1; k <= n; k++) {
    crush_forces(m, eye, k * h, d->f_ext);
    int st = cf_step(m, d);
    if (st == CF_WARN_PCG_NOT_CONVERGED) {
      capped++;
      msg_ok &= strstr(cf_last_error(), "not converged after 5 iterations") != NULL;
      resid_ok &= isfinite(d->pcg_residual) && d->pcg_residual > m->def.pcg_tol;
      iters_ok &= d->pcg_iters == 5;
    }
    finite &= state_finite(m, d);
  }
  printf("PCG capped at 5 iterations: %d of %ld steps not converged (warnings counted %d), "
         "%d with inverted elements, last residual %.3g, state %s\n", capped, n,
         d->warning[CF_WARN_PCG_NOT_CONVERGED], d->warning[CF_WARN_INVERTED], d->pcg_residual,
         finite ? "finite" : "NOT FINITE");
  CHECK(capped >= n / 2);
  CHECK(d->warning[CF_WARN_PCG_NOT_CONVERGED] == capped);
  CHECK(finite);
  CHECK(resid_ok);
  CHECK(iters_ok);
  CHECK(msg_ok);
  cf_data_free(d);
  cf_model_free(m);
}

int main(void) {
  cfScene s;
  int st = cf_scene_load("scenes/lug_pull.json", &s);
  CHECK_OK(st);
  if (st < 0) TEST_END();
  test_crush_and_release(&s);
  test_pcg_cap(&s);
  cf_scene_free(&s);
  TEST_END();
}
