/* Strain and stress fields for output: the .vtu frames, the viewer's stress colours, the Python
 * module. One code for every caller (FE scenes, FE and modal bodies of mechanisms).
 *
 * Co-rotated small strain of element e (the element formulation's own measure, cf_elem_rotate):
 *   F_e = Ds(x) Dm^-1,  R_e = polar(F_e),
 *   u_a = R_e^T (x_a - x_0) - (X_a - X_0)          (node 0 as reference: translations cancel)
 *   H = sum_a u_a (x) g_a  (g_a: shape gradients),  eps = (H + H^T) / 2
 * (10-node elements: F and g_a at the centroid, as the element's own rotation is taken).
 * Stress sigma = lam tr(eps) I + 2 mu eps, von Mises
 *   s_vm = sqrt(1/2 ((sxx-syy)^2 + (syy-szz)^2 + (szz-sxx)^2) + 3 (sxy^2 + syz^2 + sxz^2)).
 * Symmetric tensors are stored as 6 values in VTK's order xx yy zz xy yz xz (tensor components,
 * not engineering shear), in the part's rest axes (the co-rotated frame). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/fem.h"
#include "fem/fem_element.h"

/* the shape gradients g [3 npe] of element e where its strain is taken: the linear element's
 * constant ones, the quadratic element's at its centroid (cfModel.Gc, as its rotation) */
static const double* strain_gradients(const cfModel* m, int e, double* g12) {
  if (m->npe == 10) return m->Gc + 30 * (size_t)e;
  cf_shape_gradients(m->Dm_inv + 9 * (size_t)e, g12);
  return g12;
}

/* eps6 of the displacement gradient of element e with node displacements u [3 npe] */
static void strain_of_disp(const cfModel* m, int e, const double* u, double* eps6) {
  double g12[12], H[9] = {0};
  const double* g = strain_gradients(m, e, g12);
  for (int a = 0; a < m->npe; a++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) H[3 * i + j] += u[3 * a + i] * g[3 * a + j];
  eps6[0] = H[0], eps6[1] = H[4], eps6[2] = H[8];
  eps6[3] = 0.5 * (H[1] + H[3]); /* xy */
  eps6[4] = 0.5 * (H[5] + H[7]); /* yz */
  eps6[5] = 0.5 * (H[2] + H[6]); /* xz */
}

void cf_elem_strain_corotated(const cfModel* m, const double* x, const double* R_guess, int e, double* eps6) {
  double F[9], R[9];
  const int* t = m->tet + (size_t)m->npe * e;
  if (m->npe == 10) { /* F at the centroid, as the element's own rotation (cf_tet10_elem_polar) */
    cf_tet10_deformation_gradient(x, t, m->Gc + 30 * (size_t)e, F);
  } else {
    double Ds[9];
    cf_edge_matrix(x, m->tet, e, Ds);
    cf_mul3(Ds, m->Dm_inv + 9 * (size_t)e, F);
  }
  if (R_guess) cf_polar_rotation_warm(F, R_guess + 9 * (size_t)e, R);
  else cf_polar_rotation(F, NULL, R);
  double u[30];
  cf_corotated_displacement_n(R, t, m->npe, m->X, x, u);
  strain_of_disp(m, e, u, eps6);
}

double cf_von_mises_of_strain(const cfModel* m, const double* eps6) {
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  const double tr = eps6[0] + eps6[1] + eps6[2];
  const double sxx = 2 * mu * eps6[0] + lam * tr, syy = 2 * mu * eps6[1] + lam * tr, szz = 2 * mu * eps6[2] + lam * tr;
  const double sxy = 2 * mu * eps6[3], syz = 2 * mu * eps6[4], sxz = 2 * mu * eps6[5];
  return sqrt(0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) +
              3 * (sxy * sxy + syz * syz + sxz * sxz));
}

void cf_strain_corotated(const cfModel* m, const double* x, const double* R_guess, double* eps) {
  for (int e = 0; e < m->ntet; e++) cf_elem_strain_corotated(m, x, R_guess, e, eps + 6 * (size_t)e);
}

void cf_strain_small(const cfModel* m, const double* disp, double* eps) {
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + (size_t)m->npe * e;
    double u[30];
    for (int a = 0; a < m->npe; a++)
      for (int i = 0; i < 3; i++) u[3 * a + i] = disp[3 * t[a] + i];
    strain_of_disp(m, e, u, eps + 6 * (size_t)e);
  }
}

/* node_n = sum over the elements e at n of V_e val_e / sum of their V_e */
void cf_node_average(const cfModel* m, const double* elem, int ncomp, double* node) {
  memset(node, 0, sizeof(double) * (size_t)ncomp * (size_t)m->nnode);
  for (int n = 0; n < m->nnode; n++) {
    double vsum = 0;
    for (int k = m->node_src_ptr[n]; k < m->node_src_ptr[n + 1]; k++) {
      const int e = m->node_src[k] / m->npe;
      const double V = m->vol[e];
      vsum += V;
      for (int c = 0; c < ncomp; c++) node[(size_t)ncomp * n + c] += V * elem[(size_t)ncomp * e + c];
    }
    if (vsum > 0)
      for (int c = 0; c < ncomp; c++) node[(size_t)ncomp * n + c] /= vsum;
  }
}

int cf_stress_field_init(cfStressField* s, const cfModel* m) {
  memset(s, 0, sizeof *s);
  s->nnode = m->nnode, s->ntet = m->ntet;
  s->von_mises = malloc(sizeof(double) * (size_t)m->ntet);
  s->strain = malloc(sizeof(double) * 6 * (size_t)m->ntet);
  s->node_von_mises = malloc(sizeof(double) * (size_t)m->nnode);
  s->node_strain = malloc(sizeof(double) * 6 * (size_t)m->nnode);
  if (!s->von_mises || !s->strain || !s->node_von_mises || !s->node_strain) {
    cf_stress_field_free(s);
    return cf_error(CF_ERR_NOMEM, "stress field: out of memory (%d elements)", m->ntet);
  }
  return CF_OK;
}

void cf_stress_field_free(cfStressField* s) {
  if (!s) return;
  free(s->von_mises), free(s->strain), free(s->node_von_mises), free(s->node_strain);
  memset(s, 0, sizeof *s);
}

/* von Mises of each element's strain, then both averaged to the nodes */
static void finish_field(const cfModel* m, cfStressField* s) {
  for (int e = 0; e < m->ntet; e++) s->von_mises[e] = cf_von_mises_of_strain(m, s->strain + 6 * (size_t)e);
  cf_node_average(m, s->von_mises, 1, s->node_von_mises);
  cf_node_average(m, s->strain, 6, s->node_strain);
}

void cf_stress_field_corotated(const cfModel* m, const double* x, const double* R_guess, cfStressField* s) {
  cf_strain_corotated(m, x, R_guess, s->strain);
  finish_field(m, s);
}

void cf_stress_field_small(const cfModel* m, const double* disp, cfStressField* s) {
  cf_strain_small(m, disp, s->strain);
  finish_field(m, s);
}
