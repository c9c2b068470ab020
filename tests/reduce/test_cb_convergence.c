/* Craig-Bampton reduction of the lug and the hinge (meshes/lug.msh, hinge.msh), clamped at their
 * "support" set, interface at the "probe" node and at the "load" surface:
 *  - the first six reduced frequencies lie above the full FE ones (Rayleigh-Ritz) and come down
 *    to them as fixed-interface modes are added (6, 12, 24, 48);
 *  - a static load at the interface nodes gives the full FE linear static response
 *    (cf_linear_static) to round-off: the constraint modes are exact there. */
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/modal.h"
#include "cofem/reduce.h"
#include "cofem/static.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

static void part(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/meshes/%s.msh", COFEM_SOURCE_DIR, name);
  cfMesh mesh;
  int st = cf_mesh_read(path, &mesh);
  CHECK_OK(st);
  if (st < 0) return;
  cfModelDef def = cf_default_model_def();
  cfModel* m;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  const cfNodeSet* sup = cf_mesh_find_nset(&mesh, "support");
  const cfNodeSet* probe = cf_mesh_find_nset(&mesh, "probe");
  const cfNodeSet* load = cf_mesh_find_nset(&mesh, "load");
  CHECK(sup && probe && load);
  if (!sup || !probe || !load) return;
  CHECK_OK(cf_model_fix_nodes(m, sup->nodes, sup->count, 7));
  double wf[6];
  cfModalInfo mi;
  CHECK_OK(cf_modal_solve(m, 6, NULL, wf, NULL, &mi));
  printf("%s: %d nodes, %d free DOFs, full FE modes in %.2f s: ", name, m->nnode, mi.nfree, mi.seconds);
  for (int i = 0; i < 6; i++) printf(" %.2f", sqrt(wf[i]) / (2 * M_PI));
  printf(" Hz\n");

  const int nm[4] = {6, 12, 24, 48};
  double prev[6];
  for (int it = 0; it < 2; it++) {
    const cfNodeSet* iface = it == 0 ? probe : load;
    for (int c = 0; c < 4; c++) {
      cfReduceOptions ro = cf_default_reduce_options();
      ro.nmodes = nm[c];
      cfReduction r;
      CHECK_OK(cf_reduce(m, iface->nodes, iface->count, &ro, &r));
      if (!r.basis) continue;
      CHECK(r.nrigid == 0);
      printf("  interface %-5s (%3d DOFs) + %2d modes: %.3f s (constraint %.3f, normal %.3f, project %.3f, "
             "ortho %.3f, invariants %.3f)\n   ", iface->name, r.nb, r.nk, r.t_total, r.t_constraint, r.t_normal,
             r.t_project, r.t_ortho, r.t_invariants);
      double worst = 0;
      for (int i = 0; i < 6; i++) {
        double e = (r.omega2[i] - wf[i]) / wf[i];
        printf(" %+.2e", e);
        CHECK(e > -1e-9); /* from above */
        if (c > 0) CHECK(r.omega2[i] <= prev[i] * (1 + 1e-9)); /* monotone */
        prev[i] = r.omega2[i];
        worst = fmax(worst, e);
      }
      printf("  (relative w^2 error of modes 1-6)\n");
      if (c == 3) CHECK(worst < 2e-3); /* 48 modes: 0.11% (lug, "load" interface) */
      if (c == 1) {
        /* static load at the interface nodes: exact */
        int ndof = m->ndof;
        double* f = calloc(ndof, sizeof(double));
        double* u = malloc(sizeof(double) * ndof);
        double* g = malloc(sizeof(double) * r.n);
        double* q = malloc(sizeof(double) * r.n);
        for (int k = 0; k < iface->count; k++) {
          int p = iface->nodes[k];
          f[3 * p + 0] = 300.0 / iface->count * (1 + 0.1 * (k % 3));
          f[3 * p + 1] = -200.0 / iface->count;
          f[3 * p + 2] = 1000.0 / iface->count * (1 + 0.05 * (k % 5));
        }
        for (int j = 0; j < r.n; j++) {
          double s = 0;
          for (int d = 0; d < ndof; d++) s += r.basis[(size_t)j * ndof + d] * f[d];
          g[j] = s;
          q[j] = s / r.omega2[j]; /* orthonormal: K_r = diag(w^2) */
        }
        cf_reduction_displacement(&r, q, u);
        cfData* d;
        CHECK_OK(cf_data_create(m, &d));
        CHECK_OK(cf_linear_static(m, d, f));
        double emax = 0, umax = 0;
        for (int i = 0; i < ndof; i++) {
          double uf = d->x[i] - m->X[i];
          umax = fmax(umax, fabs(uf));
          emax = fmax(emax, fabs(u[i] - uf));
        }
        printf("   static load at the interface: max |u| %.4e m, max |u_CB - u_FE| %.2e (relative %.1e)\n", umax, emax,
               emax / umax);
        CHECK(emax <= 1e-8 * umax);
        cf_data_free(d);
        free(f); free(u); free(g); free(q);
      }
      cf_reduction_free(&r);
    }
  }
  cf_model_free(m);
  cf_mesh_free(&mesh);
}

int main(void) {
  part("lug");
  part("hinge");
  TEST_END();
}
