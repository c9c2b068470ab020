/* Geometric stiffness of the modes of a Craig-Bampton reduction (cofem/reduce.h,
 * cf_reduction_geometric; docs/craig-bampton.md, "Geometric stiffening"). Marinkovic and Zehn's
 * remedy (cited by paper 003) for a linear modal body that rotates fast: the stress the inertial
 * loads cause in the part stiffens (tension) or softens (compression) its modes. The stress is
 * linear in the loads, so it is precomputed for a basis of unit load cases and the modal body
 * combines the matrices with its current frame accelerations each step:
 *     K_modal(t) = Lambda + sum_c lambda_c(t) Kg_c,   Kg_c = B^T Kg(sigma_c) B.
 * Load cases: the body force per unit mass (body axes, s the rest position)
 *     b(s) = sum_ab lambda_ab e_a s_b + sum_a lambda_a e_a,
 * i.e. c = 3a + b: b = e_a s_b (lambda_ab = -(e_a . e_b'') of the frame: its angular velocity
 * squared and angular acceleration), c = 9 + a: b = e_a (lambda_a = e_a . (g - r'')).
 * For each: f_c = M b_c (the model's own mass, lumped or consistent), K u_c = f_c with the model's
 * fixed DOFs and the reduction's interface DOFs held (where the joints hold the part), the element
 * stress sigma_c,e = D eps(u_c) (constant in a linear tetrahedron), and
 *     Kg_c[j][k] = sum_e V_e tr(H_j,e sigma_c,e H_k,e^T),   H_j,e = sum_a phi_j,a g_a^T,
 * the modal projection of the element geometric stiffness K_G,e = V_e G^T S G (see
 * cf_tet_geometric_stiffness), computed per chunk of elements by one dgemm per case.
 * Quadratic (10-node) tetrahedra: the stress and the gradients vary in the element, so the sum runs
 * over its 4 quadrature points q (the rule of its stiffness, cf_tet10_gauss4) with the weights
 * W_q = det J_q / 24 in place of V_e, H_j,q = sum_a phi_j,a g_a(q)^T over its 10 nodes and
 * sigma_c,q = D eps(u_c)(q): K_G,e = sum_q W_q G_q^T S_q G_q, as its K_e = sum_q W_q B_q^T D B_q. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/reduce.h"
#include "fem/fem_element.h"
#include "fem/fem_sparse.h"

/* K_G,e = V G^T S G: block (a, b) = V (g_a^T sigma g_b) I3 (the 9 x 12 G maps the nodal
 * displacements to the displacement gradient, S = blockdiag(sigma, sigma, sigma)) */
void cf_tet_geometric_stiffness(const double* Dm_inv, double vol, const double* sigma, double* Kg) {
  double g[12];
  cf_shape_gradients(Dm_inv, g);
  memset(Kg, 0, 144 * sizeof(double));
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      double s = 0;
      for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++) s += g[3 * a + l] * sigma[3 * l + k] * g[3 * b + k];
      for (int i = 0; i < 3; i++) Kg[(3 * a + i) * 12 + 3 * b + i] = vol * s;
    }
}

/* The integration cells: one per linear tetrahedron (its constant gradients, weight V), four per
 * quadratic one (its quadrature points). g [3 npe]: the shape gradients at rest, *t the element's
 * nodes; returns the weight. */
static int cell_count(const cfModel* m) { return m->npe == 10 ? 4 * m->ntet : m->ntet; }
static double cell_gradients(const cfModel* m, int cell, double* g, const int** t) {
  if (m->npe == 4) {
    cf_shape_gradients(m->Dm_inv + 9 * (size_t)cell, g);
    *t = m->tet + 4 * (size_t)cell;
    return m->vol[cell];
  }
  const int e = cell / 4;
  *t = m->tet + 10 * (size_t)e;
  if (m->Gq) { /* the model's own per-point gradients and weights (fem_model.c) */
    memcpy(g, m->Gq + 120 * (size_t)e + 30 * (cell % 4), sizeof(double) * 30);
    return m->Wq[cell];
  }
  double Xe[30];
  cf_tet10_positions(m->X, *t, Xe);
  return cf_tet10_point(Xe, cell % 4, NULL, g);
}

/* sigma = lam tr(eps) I + 2 mu eps, eps = sym(H), H = sum_a u_a g_a^T (the displacement gradient
 * at the cell: g, t from cell_gradients) */
static void cell_stress(int npe, const double* g, const int* t, const double* u, double lam, double mu, double* sigma) {
  double H[9] = {0};
  for (int a = 0; a < npe; a++)
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) H[3 * i + l] += u[3 * t[a] + i] * g[3 * a + l];
  double tr = H[0] + H[4] + H[8];
  for (int i = 0; i < 3; i++)
    for (int l = 0; l < 3; l++) sigma[3 * i + l] = mu * (H[3 * i + l] + H[3 * l + i]) + (i == l ? lam * tr : 0);
}

/* the static displacement u [NKG ndof] of each unit load case, held DOFs zero */
static int load_case_solutions(const cfModel* m, const unsigned char* held, double* u) {
  const int ndof = m->ndof, nnode = m->nnode;
  double* Kb = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  double *field = malloc(sizeof(double) * ndof), *f = malloc(sizeof(double) * ndof);
  cfSparseSolver sp;
  int st = !Kb || !field || !f ? cf_error(CF_ERR_NOMEM, "geometric stiffness: out of memory") : cf_sparse_init(m, 1, &sp);
  const int sp_init = st >= 0;
  if (st < 0) goto done;
  /* K blocks from the element K_e (rest state), as cf_reduce gathers them */
  for (int q = 0; q < m->nnzb; q++) cf_block_gather_n(q, m->npe, m->blk_src_ptr, m->blk_src, m->Ke, m->Mblk, 0.0, 1.0, Kb);
  st = cf_sparse_factor(&sp, Kb, held);
  double rc = st < 0 ? 0.0 : cholmod_rcond(sp.L, &sp.cc);
  if (st < 0 || !(rc > 1e-13)) {
    st = cf_error(CF_ERR_SOLVER, "geometric stiffness: K with the interface and the supports held is singular (rcond "
                  "%.1e): they do not hold the part against rigid-body motion", rc);
    goto done;
  }
  for (int c = 0; c < CF_REDUCTION_NKG; c++) {
    /* b_c at the nodes: e_a X_b (c = 3a + b) or e_a (c = 9 + a) */
    memset(field, 0, sizeof(double) * ndof);
    for (int p = 0; p < nnode; p++) field[3 * p + (c < 9 ? c / 3 : c - 9)] = c < 9 ? m->X[3 * p + c % 3] : 1.0;
    /* f = M b (scalar mass blocks), zero on held DOFs */
    for (int p = 0; p < nnode; p++) {
      double s[3] = {0, 0, 0};
      for (int k = m->row_ptr[p]; k < m->row_ptr[p + 1]; k++)
        for (int i = 0; i < 3; i++) s[i] += m->Mblk[k] * field[3 * m->col[k] + i];
      for (int i = 0; i < 3; i++) f[3 * p + i] = held[3 * p + i] ? 0.0 : s[i];
    }
    double* uc = u + (size_t)c * ndof;
    if ((st = cf_sparse_solve(&sp, f, uc)) < 0) goto done;
    for (int d = 0; d < ndof; d++) {
      if (held[d]) uc[d] = 0;
      if (!isfinite(uc[d])) { st = cf_error(CF_ERR_SOLVER, "geometric stiffness: load case %d is not finite", c); goto done; }
    }
  }
done:
  if (sp_init) cf_sparse_free(&sp);
  free(Kb); free(field); free(f);
  return st;
}

enum { CHUNK = 256 }; /* elements per dgemm */

int cf_reduction_geometric(const cfModel* m, cfReduction* r) {
  if (r->ndof != m->ndof || r->nnode != m->nnode || !r->basis)
    return cf_error(CF_ERR_ARG, "geometric stiffness: the reduction (%d nodes) is not of this model (%d nodes)", r->nnode,
                    m->nnode);
  const int ndof = m->ndof, n = r->n, NKG = CF_REDUCTION_NKG;
  const double t0 = cf_wall_time();
  unsigned char* held = calloc((size_t)ndof, 1);
  double* u = malloc(sizeof(double) * NKG * (size_t)ndof);
  double* Kg = calloc((size_t)NKG * n * n, sizeof(double));
  double* Gm = malloc(sizeof(double) * (size_t)n * 9 * CHUNK); /* [n][9 CHUNK]: H_j,e row-major per element */
  double* Y = malloc(sizeof(double) * (size_t)n * 9 * CHUNK);
  double* sig = malloc(sizeof(double) * 9 * NKG * CHUNK);
  double* wcell = malloc(sizeof(double) * CHUNK);
  int st = CF_OK;
  if (!held || !u || !Kg || !Gm || !Y || !sig || !wcell) { st = cf_error(CF_ERR_NOMEM, "geometric stiffness: out of memory"); goto done; }
  int nheld = 0;
  for (int d = 0; d < ndof; d++) nheld += held[d] = m->fixed[d] != 0;
  /* the interface: its node DOFs, and the whole set of each interface point (its DOFs are numbered
   * -1 - (6 point + a) in bdof; the inertial loads' stress is that of the part held there) */
  for (int i = 0; i < r->nb; i++)
    if (r->bdof[i] >= 0 && r->bdof[i] < ndof) nheld += !held[r->bdof[i]], held[r->bdof[i]] = 1;
  for (int k = 0; r->points && k < r->npoint; k++)
    for (int i = 0; i < r->points[k].nnode; i++)
      for (int a = 0; a < 3; a++) {
        const int dof = 3 * r->points[k].nodes[i] + a;
        if (dof >= 0 && dof < ndof) nheld += !held[dof], held[dof] = 1;
      }
  if (nheld == 0) {
    st = cf_error(CF_ERR_ARG, "geometric stiffness: the part is neither supported nor has an interface: nothing holds "
                  "it against the inertial loads whose stress stiffens it (reduce it with an interface or clamped supports)");
    goto done;
  }
  if ((st = load_case_solutions(m, held, u)) < 0) goto done;
  double lam, mu;
  cf_lame(m->def.E, m->def.nu, &lam, &mu);
  const int ncell = cell_count(m), npe = m->npe;
  for (int e0 = 0; e0 < ncell; e0 += CHUNK) {
    const int ne = ncell - e0 < CHUNK ? ncell - e0 : CHUNK, w = 9 * ne;
    /* H_j,e = sum_a phi_j,a g_a^T for every mode j (e: a cell, element or quadrature point) */
    for (int el = 0; el < ne; el++) {
      double g[30];
      const int* t;
      wcell[el] = cell_gradients(m, e0 + el, g, &t);
      for (int j = 0; j < n; j++) {
        const double* b = r->basis + (size_t)j * ndof;
        double* H = Gm + (size_t)j * w + 9 * el;
        for (int k = 0; k < 9; k++) H[k] = 0;
        for (int a = 0; a < npe; a++)
          for (int i = 0; i < 3; i++)
            for (int l = 0; l < 3; l++) H[3 * i + l] += b[3 * t[a] + i] * g[3 * a + l];
      }
      for (int c = 0; c < NKG; c++) cell_stress(npe, g, t, u + (size_t)c * ndof, lam, mu, sig + 9 * (NKG * el + c));
    }
    for (int c = 0; c < NKG; c++) {
      /* Y_j,e = V_e H_j,e sigma_c,e; then Kg_c += Y Gm^T: sum_e V_e tr(H_j sigma H_k^T) */
      for (int j = 0; j < n; j++)
        for (int el = 0; el < ne; el++) {
          const double *H = Gm + (size_t)j * w + 9 * el, *S = sig + 9 * (NKG * el + c);
          double* yj = Y + (size_t)j * w + 9 * el;
          const double V = wcell[el];
          for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++)
              yj[3 * i + k] = V * (H[3 * i] * S[k] + H[3 * i + 1] * S[3 + k] + H[3 * i + 2] * S[6 + k]);
        }
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, w, 1.0, Y, w, Gm, w, 1.0, Kg + (size_t)c * n * n, n);
    }
  }
  for (int c = 0; c < NKG; c++) { /* exactly symmetric */
    double* K = Kg + (size_t)c * n * n;
    for (int j = 0; j < n; j++)
      for (int k = j + 1; k < n; k++) K[j * n + k] = K[k * n + j] = 0.5 * (K[j * n + k] + K[k * n + j]);
  }
  free(r->Kg);
  r->Kg = Kg, r->nkg = NKG, Kg = NULL, r->version = 4;
  r->t_geometric = cf_wall_time() - t0;
done:
  free(held); free(u); free(Kg); free(Gm); free(Y); free(sig); free(wcell);
  return st;
}
