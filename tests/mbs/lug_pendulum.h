/* The lug hung at its eye as a compound pendulum, shared by the pendulum tests: its node masses'
 * mass, centre, pin (the mean of the 'load' set) and moment of inertia about the pin's y axis, and
 * the swing angle of its centre of mass about the pin. */
#ifndef CF_TEST_LUG_PENDULUM_H
#define CF_TEST_LUG_PENDULUM_H
#include <math.h>

#include "cofem/mbs_fe.h"

/* mass, centre and pin (mean of the 'load' nodes) of the mesh's node masses, and I about the y axis
 * through the pin, in the mesh frame */
static inline void node_pendulum(const cfModel* fem, const cfMesh* mesh, double* mass, double c[3], double P[3], double* Iy) {
  const cfNodeSet* ns = cf_mesh_find_nset(mesh, "load");
  *mass = 0, c[0] = c[1] = c[2] = P[0] = P[1] = P[2] = 0;
  for (int k = 0; k < ns->count; k++)
    for (int a = 0; a < 3; a++) P[a] += fem->X[3 * ns->nodes[k] + a] / ns->count;
  *Iy = 0;
  for (int n = 0; n < fem->nnode; n++) {
    const double* X = fem->X + 3 * n;
    double mn = fem->node_mass[n];
    *mass += mn;
    for (int a = 0; a < 3; a++) c[a] += mn * X[a];
    *Iy += mn * ((X[0] - P[0]) * (X[0] - P[0]) + (X[2] - P[2]) * (X[2] - P[2]));
  }
  for (int a = 0; a < 3; a++) c[a] /= *mass;
}

/* swing angle of the lug: the centre of mass about the pin, in the xz plane */
static inline double swing_angle(const cfMbsModel* m, const cfMbsData* d, int ib) {
  double x[3], P[3];
  cf_mbs_fe_centre(m, d, ib, x, NULL);
  cf_mbs_fe_point(m, d, ib, 0, P);
  return atan2(x[0] - P[0], P[2] - x[2]);
}


#endif
