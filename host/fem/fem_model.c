/* Model construction (everything that is computed once) and data allocation. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cofem/fem.h"
#include "fem/fem_element.h"
#include "fem/fem_newton.h"
#include "fem/fem_pcg.h"
#include "fem/fem_precond.h"

long cf_default_threads_min_nodes(void) {
  return omp_get_max_threads() >= CF_THREADS_MANY_CORES ? CF_THREADS_MIN_NODES_MANY : CF_THREADS_MIN_NODES;
}

int cf_default_threads(long nnode) {
  if (getenv("OMP_NUM_THREADS") || omp_get_max_threads() <= 1) return 0;
  return nnode < cf_default_threads_min_nodes() ? 1 : 0;
}

/* OpenBLAS's own setters (cblas.h of OpenBLAS; cofem links OpenBLAS, CMakeLists.txt) */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
void cf_set_blas_threads(int n) {
  if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(n > 0 ? n : 1);
}
int cf_blas_threads(void) { return openblas_get_num_threads(); }

double cf_wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cfModelDef cf_default_model_def(void) {
  cfModelDef d;
  memset(&d, 0, sizeof d);
  d.E = 210e9;
  d.nu = 0.3;
  d.rho = 7850;
  d.dt = 0.01;
  d.pcg_tol = 1e-6;
  d.pcg_max_iter = 1000;
  d.warm_start = 1;
  d.rho_inf = 0.9;
  d.newton_tol = 1e-6;
  d.newton_max_iter = 20;
  d.newton_max_cuts = 4;
  d.divergence_check = 1;
  d.rotations = CF_ROTATIONS_QUADRATURE; /* quadratic elements: 0.11% from CalculiX's NLGEOM where one
                                            rotation per element is 2.3% off (docs/decisions.md) */
  return d;
}

static int cmp_int(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

void cf_model_free(cfModel* m) {
  if (!m) return;
  free(m->X); free(m->tet); free(m->Dm_inv); free(m->vol); free(m->Ke);
  free(m->node_mass); free(m->Mblk); free(m->row_ptr); free(m->col); free(m->diag);
  free(m->blk_src_ptr); free(m->blk_src); free(m->node_src_ptr); free(m->node_src);
  free(m->fixed); free(m->Me); free(m->Gc); free(m->Gq); free(m->Wq);
  free(m);
}

static int check_def(const cfModelDef* d) {
  if (!(isfinite(d->E) && d->E > 0))
    return cf_error(CF_ERR_ARG, "material: Young's modulus E = %g must be positive and finite", d->E);
  if (!(isfinite(d->nu) && d->nu > -1 && d->nu < 0.5))
    return cf_error(CF_ERR_ARG, "material: Poisson ratio nu = %g must lie in (-1, 0.5)", d->nu);
  if (!(isfinite(d->rho) && d->rho > 0))
    return cf_error(CF_ERR_ARG, "material: density rho = %g must be positive and finite", d->rho);
  if (!(isfinite(d->dt) && d->dt > 0))
    return cf_error(CF_ERR_ARG, "time step dt = %g must be positive and finite", d->dt);
  if (!(isfinite(d->rayleigh_alpha) && d->rayleigh_alpha >= 0 && isfinite(d->rayleigh_beta) &&
        d->rayleigh_beta >= 0))
    return cf_error(CF_ERR_ARG, "damping: Rayleigh alpha = %g, beta = %g must be >= 0",
                    d->rayleigh_alpha, d->rayleigh_beta);
  if (!(isfinite(d->pcg_tol) && d->pcg_tol > 0 && d->pcg_tol < 1))
    return cf_error(CF_ERR_ARG, "solver: tolerance %g must lie in (0, 1)", d->pcg_tol);
  if (d->integrator != CF_INTEGRATOR_BACKWARD_EULER && d->integrator != CF_INTEGRATOR_NEWMARK &&
      d->integrator != CF_INTEGRATOR_GENERALIZED_ALPHA)
    return cf_error(CF_ERR_ARG, "integrator %d: use backward Euler (0), Newmark (1) or generalized-alpha (2)",
                    d->integrator);
  if (d->integrator == CF_INTEGRATOR_GENERALIZED_ALPHA) {
    int st = cf_newton_check_def(d);
    if (st < 0) return st;
  }
  if (d->dyn_tangent != CF_DYN_TANGENT_KR && d->dyn_tangent != CF_DYN_TANGENT_SYM_CONSISTENT)
    return cf_error(CF_ERR_ARG, "dynamics tangent %d: use K_R (0) or symmetric consistent (1)", d->dyn_tangent);
  if (d->preconditioner != CF_PRECOND_BLOCK_JACOBI && d->preconditioner != CF_PRECOND_ROTATED_CHOLESKY &&
      d->preconditioner != CF_PRECOND_AMG && d->preconditioner != CF_PRECOND_AUTO)
    return cf_error(CF_ERR_ARG, "preconditioner %d: use block Jacobi (0), rotated Cholesky (1), AMG (2) or auto (3)",
                    d->preconditioner);
  if (d->pcg_max_iter < 1)
    return cf_error(CF_ERR_ARG, "solver: max_iter %d must be >= 1", d->pcg_max_iter);
  for (int i = 0; i < 3; i++)
    if (!isfinite(d->gravity[i])) return cf_error(CF_ERR_ARG, "gravity must be finite");
  return CF_OK;
}

int cf_model_create(const cfMesh* mesh, const cfModelDef* def, cfModel** out) {
  *out = NULL;
  int st = check_def(def);
  if (st < 0) return st;
  if (!mesh || mesh->nnode <= 0 || mesh->ntet <= 0)
    return cf_error(CF_ERR_ARG, "model: the mesh is empty");
  cfModel* m = calloc(1, sizeof *m);
  if (!m) return cf_error(CF_ERR_NOMEM, "model: out of memory");
  const int nn = mesh->nnode, ne = mesh->ntet;
  const int np = cf_mesh_npe(mesh), nk = 3 * np; /* nodes and DOFs per element */
  m->npe = np;
  m->nnode = nn;
  m->ntet = ne;
  m->ndof = 3 * nn;
  m->def = *def;
  if (m->def.preconditioner == CF_PRECOND_AUTO) m->def.preconditioner = cf_preconditioner_auto(ne, m->def.integrator, 0);
  m->X = malloc(sizeof(double) * 3 * nn);
  m->tet = malloc(sizeof(int) * np * ne);
  m->Dm_inv = malloc(sizeof(double) * 9 * ne);
  m->vol = malloc(sizeof(double) * ne);
  m->Ke = malloc(sizeof(double) * nk * nk * (size_t)ne);
  m->node_mass = calloc(nn, sizeof(double));
  m->node_src_ptr = calloc(nn + 1, sizeof(int));
  m->node_src = malloc(sizeof(int) * np * ne);
  m->row_ptr = calloc(nn + 1, sizeof(int));
  m->diag = malloc(sizeof(int) * nn);
  m->fixed = calloc(3 * nn, 1);
  if (!m->X || !m->tet || !m->Dm_inv || !m->vol || !m->Ke || !m->node_mass || !m->node_src_ptr ||
      !m->node_src || !m->row_ptr || !m->diag || !m->fixed)
    goto nomem;
  memcpy(m->X, mesh->X, sizeof(double) * 3 * nn);
  memcpy(m->tet, mesh->tet, sizeof(int) * np * ne);
  if (np == 10) {
    m->Me = malloc(sizeof(double) * 100 * (size_t)ne);
    m->Gc = malloc(sizeof(double) * 30 * (size_t)ne);
    if (!m->Me || !m->Gc) goto nomem;
    if (def->rotations == CF_ROTATIONS_QUADRATURE) {
      m->Gq = malloc(sizeof(double) * 120 * (size_t)ne);
      m->Wq = malloc(sizeof(double) * 4 * (size_t)ne);
      if (!m->Gq || !m->Wq) goto nomem;
    }
  }

  /* per element: Dm^-1 (of the corners), volume, K_e, lumped mass */
  for (int e = 0; e < ne; e++) {
    double Dm[9];
    cf_edge_matrix_n(m->X, m->tet, np, e, Dm);
    double det = cf_inv3(Dm, m->Dm_inv + 9 * e);
    m->vol[e] = det / 6.0;
    double min_det_j = det;
    if (np == 10 && m->vol[e] > 0) {
      double Xe[30];
      cf_tet10_positions(m->X, m->tet + 10 * (size_t)e, Xe);
      min_det_j = cf_tet10_stiffness(Xe, def->E, def->nu, m->Ke + 900 * (size_t)e, &m->vol[e]);
      cf_tet10_mass(Xe, def->rho, m->Me + 100 * (size_t)e);
      const double centroid[3] = {0.25, 0.25, 0.25};
      if (!(cf_tet10_gradients(Xe, centroid, NULL, m->Gc + 30 * (size_t)e) > 0)) min_det_j = 0;
      for (int q = 0; m->Gq && q < 4; q++) m->Wq[4 * (size_t)e + q] = cf_tet10_point(Xe, q, NULL, m->Gq + 120 * (size_t)e + 30 * q);
    }
    if (!(m->vol[e] > 0) || !(min_det_j > 0)) {
      int id = mesh->elem_id ? mesh->elem_id[e] : e + 1;
      cf_model_free(m);
      if (np == 10 && det > 0)
        return cf_error(CF_ERR_MESH, "%s: element %d (10-node tetrahedron) has a Jacobian determinant %g <= 0 at a "
                        "quadrature point (edge nodes far from their edges' middles)", mesh->source, id, min_det_j);
      return cf_error(CF_ERR_MESH, "%s: element %d has volume %g <= 0", mesh->source, id, det / 6.0);
    }
    if (np == 4) {
      cf_elem_stiffness(m->Dm_inv + 9 * e, m->vol[e], def->E, def->nu, m->Ke + 144 * (size_t)e);
      for (int a = 0; a < 4; a++) m->node_mass[m->tet[4 * e + a]] += def->rho * m->vol[e] / 4.0;
    } else {
      double ml[10];
      cf_tet10_mass_hrz(m->Me + 100 * (size_t)e, ml);
      for (int a = 0; a < 10; a++) m->node_mass[m->tet[10 * e + a]] += ml[a];
    }
  }

  /* node -> (element, local index), in element order */
  for (int e = 0; e < ne; e++)
    for (int a = 0; a < np; a++) m->node_src_ptr[m->tet[np * e + a] + 1]++;
  for (int n = 0; n < nn; n++) m->node_src_ptr[n + 1] += m->node_src_ptr[n];
  {
    int* fill = malloc(sizeof(int) * nn);
    if (!fill) goto nomem;
    memcpy(fill, m->node_src_ptr, sizeof(int) * nn);
    for (int e = 0; e < ne; e++)
      for (int a = 0; a < np; a++) m->node_src[fill[m->tet[np * e + a]]++] = np * e + a;
    free(fill);
  }

  /* block pattern: row n couples to every node of every element touching n (and itself) */
  {
    int maxdeg = 0;
    for (int n = 0; n < nn; n++) {
      int d = m->node_src_ptr[n + 1] - m->node_src_ptr[n];
      if (d > maxdeg) maxdeg = d;
    }
    int* cand = malloc(sizeof(int) * (np * maxdeg + 1));
    long cap = (long)np * np * ne + nn;
    m->col = malloc(sizeof(int) * cap);
    if (!cand || !m->col) { free(cand); goto nomem; }
    int nnzb = 0;
    for (int n = 0; n < nn; n++) {
      int c = 0;
      cand[c++] = n;
      for (int k = m->node_src_ptr[n]; k < m->node_src_ptr[n + 1]; k++) {
        int e = m->node_src[k] / np;
        for (int a = 0; a < np; a++) cand[c++] = m->tet[np * e + a];
      }
      qsort(cand, c, sizeof(int), cmp_int);
      m->row_ptr[n] = nnzb;
      for (int i = 0; i < c; i++)
        if (i == 0 || cand[i] != cand[i - 1]) {
          if (cand[i] == n) m->diag[n] = nnzb;
          m->col[nnzb++] = cand[i];
        }
    }
    m->row_ptr[nn] = nnzb;
    m->nnzb = nnzb;
    free(cand);
  }

  /* block -> element contributions (e*np^2 + a*np + b), in element order */
  const int np2 = np * np;
  m->blk_src_ptr = calloc(m->nnzb + 1, sizeof(int));
  m->blk_src = malloc(sizeof(int) * np2 * (size_t)ne);
  m->Mblk = calloc(m->nnzb, sizeof(double));
  int* blk_of = malloc(sizeof(int) * np2 * (size_t)ne);
  if (!m->blk_src_ptr || !m->blk_src || !m->Mblk || !blk_of) { free(blk_of); goto nomem; }
  for (int e = 0; e < ne; e++)
    for (int a = 0; a < np; a++) {
      int r = m->tet[np * e + a];
      for (int b = 0; b < np; b++) {
        int c = m->tet[np * e + b];
        int lo = m->row_ptr[r], hi = m->row_ptr[r + 1] - 1;
        while (lo < hi) {
          int mid = (lo + hi) / 2;
          if (m->col[mid] < c) lo = mid + 1; else hi = mid;
        }
        blk_of[np2 * e + np * a + b] = lo;
        m->blk_src_ptr[lo + 1]++;
      }
    }
  for (int k = 0; k < m->nnzb; k++) m->blk_src_ptr[k + 1] += m->blk_src_ptr[k];
  {
    int* fill = malloc(sizeof(int) * m->nnzb);
    if (!fill) { free(blk_of); goto nomem; }
    memcpy(fill, m->blk_src_ptr, sizeof(int) * m->nnzb);
    for (int i = 0; i < np2 * ne; i++) m->blk_src[fill[blk_of[i]]++] = i;
    free(fill);
  }

  /* mass per block: lumped puts rho V / 4 on the diagonal; consistent rho V / 20 (1 + delta_ab);
   * quadratic: the element's consistent mass (cf_tet10_mass) or its HRZ lumping */
  for (int e = 0; e < ne; e++)
    for (int a = 0; a < np; a++)
      for (int b = 0; b < np; b++) {
        double mab;
        if (np == 10) {
          const double* Me = m->Me + 100 * (size_t)e;
          double ml[10];
          if (def->consistent_mass) mab = Me[10 * a + b];
          else if (a == b) cf_tet10_mass_hrz(Me, ml), mab = ml[a];
          else mab = 0.0;
        } else if (def->consistent_mass) mab = def->rho * m->vol[e] / 20.0 * (a == b ? 2.0 : 1.0);
        else mab = (a == b) ? def->rho * m->vol[e] / 4.0 : 0.0;
        m->Mblk[blk_of[np2 * e + np * a + b]] += mab;
      }
  free(blk_of);
  *out = m;
  return CF_OK;
nomem:
  cf_model_free(m);
  return cf_error(CF_ERR_NOMEM, "model: out of memory for %d nodes, %d elements", nn, ne);
}

int cf_model_fix_nodes(cfModel* m, const int* nodes, int count, int dir_mask) {
  for (int i = 0; i < count; i++) {
    if (nodes[i] < 0 || nodes[i] >= m->nnode)
      return cf_error(CF_ERR_ARG, "fix: node index %d out of range", nodes[i]);
    for (int k = 0; k < 3; k++)
      if (dir_mask & (1 << k)) m->fixed[3 * nodes[i] + k] = 1;
  }
  m->nfixed = 0;
  for (int i = 0; i < m->ndof; i++) m->nfixed += m->fixed[i];
  return CF_OK;
}

void cf_data_free(cfData* d) {
  if (!d) return;
  free(d->x); free(d->v); free(d->f_ext); free(d->f_ext_prev); free(d->v_prev); free(d->R); free(d->Rq); free(d->KR); free(d->fe); free(d->f_el);
  free(d->A); free(d->b); free(d->Pinv); free(d->r); free(d->z); free(d->p); free(d->q);
  free(d->warm_v1); free(d->warm_Av0); free(d->warm_Av1);
  free(d->dot_partial);
  free(d->node_R);
  cf_newton_data_free(d);
  cf_precond_free(d);
  free(d);
}

void cf_data_reset(const cfModel* m, cfData* d) {
  memcpy(d->x, m->X, sizeof(double) * m->ndof);
  memset(d->v, 0, sizeof(double) * m->ndof);
  memset(d->v_prev, 0, sizeof(double) * m->ndof);
  memset(d->f_ext_prev, 0, sizeof(double) * m->ndof);
  for (int e = 0; e < m->ntet; e++)
    for (int i = 0; i < 9; i++) d->R[9 * e + i] = (i % 4 == 0) ? 1.0 : 0.0;
  for (int k = 0; d->Rq && k < 4 * m->ntet; k++)
    for (int i = 0; i < 9; i++) d->Rq[9 * (size_t)k + i] = (i % 4 == 0) ? 1.0 : 0.0;
  for (int n = 0; n < m->nnode; n++)
    for (int i = 0; i < 9; i++) d->node_R[9 * n + i] = (i % 4 == 0) ? 1.0 : 0.0;
  d->t = 0;
  d->steps = 0;
  d->pcg_iters = 0;
  d->pcg_residual = 0;
  d->pcg_iters_total = 0;
  d->ninverted = 0;
  memset(d->warning, 0, sizeof d->warning);
  memset(d->timer, 0, sizeof d->timer);
  cf_newton_data_reset(m, d);
}

int cf_data_create(const cfModel* m, cfData** out) {
  *out = NULL;
  cfData* d = calloc(1, sizeof *d);
  if (!d) return cf_error(CF_ERR_NOMEM, "data: out of memory");
  size_t nd = (size_t)m->ndof, ne = (size_t)m->ntet;
  d->x = malloc(sizeof(double) * nd);
  d->v = malloc(sizeof(double) * nd);
  d->f_ext = calloc(nd, sizeof(double));
  d->f_ext_prev = calloc(nd, sizeof(double));
  d->v_prev = calloc(nd, sizeof(double));
  d->R = malloc(sizeof(double) * 9 * ne);
  if (m->Gq) d->Rq = malloc(sizeof(double) * 36 * ne);
  const size_t nk = 3 * (size_t)m->npe;
  d->KR = calloc(nk * nk * ne, sizeof(double)); /* zero until the first rotation stage: read (times 0) by a
                                                      mechanism's initial velocity projection (cf_mbs__fe_factor) */
  d->fe = malloc(sizeof(double) * nk * ne);
  d->f_el = calloc(nd, sizeof(double));
  d->A = malloc(sizeof(double) * 9 * (size_t)m->nnzb);
  d->b = malloc(sizeof(double) * nd);
  d->Pinv = malloc(sizeof(double) * 3 * nd);
  d->r = malloc(sizeof(double) * nd);
  d->z = malloc(sizeof(double) * nd);
  d->p = malloc(sizeof(double) * nd);
  d->q = malloc(sizeof(double) * nd);
  d->warm_v1 = malloc(sizeof(double) * nd);
  d->warm_Av0 = malloc(sizeof(double) * nd);
  d->warm_Av1 = malloc(sizeof(double) * nd);
  /* per-chunk partials: the dot products and the warm start's CF_WARM_NSUM sums per node chunk */
  size_t npart = nd / CF_DOT_CHUNK + 1, nwarm = CF_WARM_NSUM * ((size_t)m->nnode / CF_WARM_CHUNK + 1);
  d->dot_partial = malloc(sizeof(double) * (npart > nwarm ? npart : nwarm));
  d->node_R = malloc(sizeof(double) * 9 * (size_t)m->nnode);
  if (!d->x || !d->v || !d->f_ext || !d->f_ext_prev || !d->v_prev || !d->R || !d->KR || !d->fe || !d->f_el || !d->A || !d->b ||
      !d->Pinv || !d->r || !d->z || !d->p || !d->q || !d->warm_v1 || !d->warm_Av0 ||
      !d->warm_Av1 || !d->dot_partial || !d->node_R || (m->Gq && !d->Rq)) {
    cf_data_free(d);
    return cf_error(CF_ERR_NOMEM, "data: out of memory for %d DOFs", m->ndof);
  }
  d->supports_active = 1;
  if (cf_newton_data_alloc(m, d) < 0) {
    cf_data_free(d);
    return cf_error(CF_ERR_NOMEM, "data: out of memory for %d DOFs", m->ndof);
  }
  cf_data_reset(m, d);
  if (m->def.preconditioner == CF_PRECOND_ROTATED_CHOLESKY || m->def.preconditioner == CF_PRECOND_AMG) {
    int st = cf_precond_create(m, d);
    if (st < 0) {
      cf_data_free(d);
      return st;
    }
  }
  *out = d;
  return CF_OK;
}
