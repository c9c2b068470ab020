/* Modal (Craig-Bampton) bodies: reduction time and real-time ratio of the reduced model.
 *
 *   cofem_bench_modal [--steps N] [--dt H]
 *
 * For the lug and the hinge (meshes/lug.msh, hinge.msh, steel), clamped at "support", interface "probe":
 * reduction time (best of 3) with 6, 12 and 24 fixed-interface modes, and the real-time ratio of
 * the reduced equations M_r qdd + C_r qd + K_r q = B^T f(t) (orthonormal basis: diagonal, modal
 * damping 1%) integrated with the average-acceleration Newmark rule at dt (default 1e-5 s), with
 * the probe displacement recovered from B every step. This is the elastic part of a modal body;
 * the floating-frame terms are not included (see docs/craig-bampton.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/cofem.h"
#include "cofem/reduce.h"

#ifndef COFEM_SOURCE_DIR
#define COFEM_SOURCE_DIR "."
#endif

int main(int argc, char** argv) {
  long steps = 100000;
  double dt = 1e-5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atol(argv[++i]);
    else if (!strcmp(argv[i], "--dt") && i + 1 < argc) dt = atof(argv[++i]);
    else { fprintf(stderr, "usage: cofem_bench_modal [--steps N] [--dt H]\n"); return 2; }
  }
  const char* parts[2] = {"lug", "hinge"};
  const int nms[3] = {6, 12, 24};
  printf("| part | free DOFs | modes (constraint + normal) | reduction [s] | first freq [Hz] | steps/s | real-time ratio | probe |u| at end [m] |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int ip = 0; ip < 2; ip++) {
    char path[600];
    snprintf(path, sizeof path, "%s/meshes/%s.msh", COFEM_SOURCE_DIR, parts[ip]);
    cfMesh mesh;
    if (cf_mesh_read(path, &mesh) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
    cfModelDef def = cf_default_model_def();
    cfModel* m;
    if (cf_model_create(&mesh, &def, &m) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
    const cfNodeSet* sup = cf_mesh_find_nset(&mesh, "support");
    const cfNodeSet* probe = cf_mesh_find_nset(&mesh, "probe");
    if (!sup || !probe) { fprintf(stderr, "%s: no support/probe set\n", path); return 1; }
    cf_model_fix_nodes(m, sup->nodes, sup->count, 7);
    int pn = probe->nodes[0];
    for (int c = 0; c < 3; c++) {
      cfReduceOptions o = cf_default_reduce_options();
      o.nmodes = nms[c];
      cfReduction r;
      double best = 1e30;
      for (int rep = 0; rep < 3; rep++) {
        double t0 = cf_wall_time();
        if (cf_reduce(m, probe->nodes, probe->count, &o, &r) < 0) { fprintf(stderr, "%s\n", cf_last_error()); return 1; }
        best = fmin(best, cf_wall_time() - t0);
        if (rep < 2) cf_reduction_free(&r);
      }
      int n = r.n;
      /* load: 1 kN along z at the probe, ramped over 1 ms */
      double* g = malloc(sizeof(double) * n);
      double *q = calloc(n, sizeof(double)), *qd = calloc(n, sizeof(double)), *qdd = calloc(n, sizeof(double));
      double* Bp = malloc(sizeof(double) * 3 * n); /* probe rows of B */
      for (int j = 0; j < n; j++) {
        g[j] = 1000.0 * r.basis[(size_t)j * r.ndof + 3 * pn + 2];
        for (int a = 0; a < 3; a++) Bp[3 * j + a] = r.basis[(size_t)j * r.ndof + 3 * pn + a];
      }
      double up[3] = {0, 0, 0};
      double t0 = cf_wall_time(), t = 0;
      for (long s = 0; s < steps; s++) {
        t += dt;
        double ramp = t < 1e-3 ? t / 1e-3 : 1.0;
        for (int j = 0; j < n; j++) { /* Newmark beta 1/4, gamma 1/2, diagonal modal equations */
          double w2 = r.omega2[j], cd = 2 * r.zeta[j] * sqrt(fabs(w2));
          double qp = q[j] + dt * qd[j] + 0.25 * dt * dt * qdd[j];
          double vp = qd[j] + 0.5 * dt * qdd[j];
          double a = (ramp * g[j] - cd * vp - w2 * qp) / (1 + 0.5 * dt * cd + 0.25 * dt * dt * w2);
          q[j] = qp + 0.25 * dt * dt * a;
          qd[j] = vp + 0.5 * dt * a;
          qdd[j] = a;
        }
        up[0] = up[1] = up[2] = 0;
        for (int j = 0; j < n; j++)
          for (int a = 0; a < 3; a++) up[a] += Bp[3 * j + a] * q[j];
      }
      double wall = cf_wall_time() - t0;
      printf("| %s | %d | %d (%d + %d) | %.3f | %.1f | %.3g | %.3g | %.4e |\n", parts[ip], m->ndof - m->nfixed, n, r.nb,
             r.nk, best, cf_reduction_freq_hz(&r, 0), steps / wall, t / wall, sqrt(up[0] * up[0] + up[1] * up[1] + up[2] * up[2]));
      free(g); free(q); free(qd); free(qdd); free(Bp);
      cf_reduction_free(&r);
    }
    cf_model_free(m);
    cf_mesh_free(&mesh);
  }
  return 0;
}
