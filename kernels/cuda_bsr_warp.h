/* The block row of y = A x computed by one warp (CF_CUDA_SPMV_WARP): shared by the PCG's products
 * (fem_cuda.cu) and the V-cycle's level 0 (fem_cuda_amg.cu). A row's 3x3 blocks are contiguous
 * (9 values each, row-major), so lane l reads the row's values l, l + 32, ... (every load of the
 * warp coalesced, where a thread per row streams its ~1 KB alone) and adds A_j x_col into the
 * partial of the block row j % 9 / 3 it belongs to; a butterfly over the warp, in a fixed order,
 * sums the three partials into every lane (deterministic; the CPU's cf_bsr_row sums in row order,
 * so the two differ by round-off). T: double, or float (amg_float) widened to double. Every lane
 * of the warp must call it (the shuffles take the full mask). */
#ifndef COFEM_CUDA_BSR_WARP_H
#define COFEM_CUDA_BSR_WARP_H

template <class T>
__device__ __forceinline__ void cf_warp_bsr_row(int n, const int* row_ptr, const int* col, const T* A, const double* x,
                                                int lane, double* y0, double* y1, double* y2) {
  const long j1 = 9 * (long)row_ptr[n + 1];
  double s0 = 0, s1 = 0, s2 = 0;
  for (long j = 9 * (long)row_ptr[n] + lane; j < j1; j += 32) {
    const long k = j / 9;
    const int c = (int)(j - 9 * k), r = c / 3;
    const double a = (double)A[j] * x[3 * (long)col[k] + (c - 3 * r)];
    if (r == 0) s0 += a;
    else if (r == 1) s1 += a;
    else s2 += a;
  }
  for (int off = 16; off > 0; off >>= 1) {
    s0 += __shfl_xor_sync(0xffffffffu, s0, off);
    s1 += __shfl_xor_sync(0xffffffffu, s1, off);
    s2 += __shfl_xor_sync(0xffffffffu, s2, off);
  }
  *y0 = s0, *y1 = s1, *y2 = s2;
}

#endif
