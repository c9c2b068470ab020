/* Host-side pieces of the CUDA backend that do not need CUDA (fem/fem_backend.h, cofem/cuda.h):
 * compiled in every build, so that the CPU tests check them and the stub refuses the same models
 * with the same message as the CUDA build. */
#include <stddef.h>

#include "cofem/cuda.h"
#include "fem/fem_backend.h"

int cf_cuda_check_model(const cfModel* m) {
  if (!m) return cf_error(CF_ERR_ARG, "cf_cuda_create: NULL model");
  const cfModelDef* def = &m->def;
  if (m->npe != 4 && m->npe != 10)
    return cf_error(CF_ERR_UNSUPPORTED, "cf_cuda_create: %d-node elements (the GPU takes 4- and 10-node tetrahedra)",
                    m->npe);
  if (def->integrator != CF_INTEGRATOR_BACKWARD_EULER && def->integrator != CF_INTEGRATOR_GENERALIZED_ALPHA)
    return cf_error(CF_ERR_UNSUPPORTED,
                    "cf_cuda_create: the GPU runs backward Euler and generalized-alpha only (the model asks "
                    "for %s); use the cpu backend",
                    def->integrator == CF_INTEGRATOR_NEWMARK ? "the linearised Newmark step" : "another integrator");
  if (def->dyn_tangent != CF_DYN_TANGENT_KR)
    return cf_error(CF_ERR_UNSUPPORTED,
                    "cf_cuda_create: the GPU linearises with K_R only (the model asks for %s); "
                    "use the cpu backend",
                    def->dyn_tangent == CF_DYN_TANGENT_SYM_CONSISTENT ? "the symmetric consistent tangent"
                                                                       : "another tangent");
  if (def->preconditioner != CF_PRECOND_BLOCK_JACOBI && def->preconditioner != CF_PRECOND_AMG)
    return cf_error(CF_ERR_UNSUPPORTED,
                    "cf_cuda_create: the GPU preconditions with block Jacobi and AMG only (the model "
                    "asks for %s); use the cpu backend",
                    def->preconditioner == CF_PRECOND_ROTATED_CHOLESKY ? "the rotated Cholesky"
                                                                       : "another preconditioner");
  return CF_OK;
}

double* cf_cuda_field(cfData* d, int nnode, int ntet, int npe, int nnzb, int bit, size_t* count) {
  const size_t nd = 3 * (size_t)nnode, ne = (size_t)ntet, nb = (size_t)nnzb, nk = 3 * (size_t)npe;
  size_t n = 0;
  double* p = NULL;
  switch (bit) {
    case CF_CUDA_X: p = d->x, n = nd; break;
    case CF_CUDA_V: p = d->v, n = nd; break;
    case CF_CUDA_V_PREV: p = d->v_prev, n = nd; break;
    case CF_CUDA_R: p = d->R, n = 9 * ne; break;
    case CF_CUDA_F_EXT: p = d->f_ext, n = nd; break;
    case CF_CUDA_KR: p = d->KR, n = nk * nk * ne; break;
    case CF_CUDA_FE: p = d->fe, n = nk * ne; break;
    case CF_CUDA_F_EL: p = d->f_el, n = nd; break;
    case CF_CUDA_A: p = d->A, n = 9 * nb; break;
    case CF_CUDA_B: p = d->b, n = nd; break;
    case CF_CUDA_PINV: p = d->Pinv, n = 3 * nd; break;
    case CF_CUDA_F_EXT_PREV: p = d->f_ext_prev, n = nd; break;
    case CF_CUDA_ACC: p = d->a, n = nd; break; /* NULL (none) but for generalized-alpha */
    default: break;
  }
  if (count) *count = p ? n : 0;
  return p;
}

const char* cf_cuda_kernel_time_name(int k) {
  static const char* const name[CF_CUDA_KT_COUNT] = {"polar",   "rotate", "node_gather", "block_gather", "rhs",
                                                     "precond", "warm",   "pcg",         "update"};
  return k >= 0 && k < CF_CUDA_KT_COUNT ? name[k] : "?";
}
