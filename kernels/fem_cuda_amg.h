/* The AMG preconditioner on the device (internal to the CUDA backend; kernels/fem_cuda_amg.cu).
 *
 * The hierarchy is the CPU's (host/fem/fem_amg.c), built once on the host for the system matrix
 * at rest A0 and uploaded as it is: level 0 as A0's 3x3 blocks on the model's pattern, coarser
 * levels as scalar CSR, P and R = P^T per level, the inverse diagonal blocks of the smoother,
 * and the coarsest level as a dense inverse (<= 3000 unknowns: LAPACKE dpotrf/dpotri on the
 * host, a dense product on the device, no host round trip). The V-cycle is the CPU's
 * (vcycle/chebyshev of fem_amg.c) with the same Chebyshev coefficients, computed on the host.
 * Applied rotated, z = Q AMG(A0) Q^T r, with the node rotations Q of the device.
 * Every kernel returns at once when *done is set (the PCG's flag), so PCG batches after
 * convergence cost launches only. */
#ifndef COFEM_FEM_CUDA_AMG_H
#define COFEM_FEM_CUDA_AMG_H
#include <cuda_runtime.h>
#include <stddef.h>

extern "C" {
#include "fem/fem_amg.h"
}

struct cfCudaAmg;

/* CF_OK, or CF_ERR_UNSUPPORTED saying what of amg the device path does not take (a smoother on
 * diag(A), a Chebyshev degree above 8, an aggregate of more than 6 unknowns, a coarsest level of
 * more than 8192 unknowns). cf_cuda_amg_create checks it too. */
int cf_cuda_amg_check(const cfAmg* amg);
/* Device bytes cf_cuda_amg_create allocates for amg with the same f32 (the backend's
 * free-memory check). */
size_t cf_cuda_amg_bytes(const cfAmg* amg, int f32);
/* Upload amg; row_ptr/col: the model's block pattern already on the device (level 0).
 * f32 (cfCudaOptions.amg_float): the matrices' values (A0's blocks, the coarser A, P, R) as
 * float, the rest as with 0 (fem_cuda_amg.cu's header says why). */
int cf_cuda_amg_create(const cfAmg* amg, int f32, const int* row_ptr_dev, const int* col_dev, cudaStream_t s,
                       cfCudaAmg** out);
void cf_cuda_amg_free(cfCudaAmg* a);
/* Level 0's products a warp per block row (on: 1; the backend's CF_CUDA_SPMV_WARP) or a thread
 * per block row (0, the default). */
void cf_cuda_amg_set_warp_spmv(cfCudaAmg* a, int on);
/* Enqueue z = Q AMG(A0) Q^T r on s: node_R [9 nnode] the node rotations (row-major), fixed
 * DOFs of t = Q^T r zeroed when zero_fixed (the supports' hierarchy), done: the PCG's flag. */
int cf_cuda_amg_apply(cfCudaAmg* a, cudaStream_t s, const double* node_R, const unsigned char* fixed,
                      int zero_fixed, const double* r, double* z, const int* done);
/* Bytes one application moves at least (for the benchmark's bandwidth figure). */
double cf_cuda_amg_bytes_per_apply(const cfCudaAmg* a);

#endif
