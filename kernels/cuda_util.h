/* The CUDA backend's error macros (the .cu files of kernels/): one set, so that every file
 * reports a failed CUDA call the same way, "cudaMalloc: out of memory (cudaErrorMemoryAllocation) at
 * fem_cuda_amg.cu:123", naming the file the call is in. They return from the enclosing
 * function with the status (nothing exits):
 *   CU(call)            a CUDA runtime call
 *   CU_LAUNCHED(kernel) right after a <<<>>> launch: configuration errors surface here, faults
 *                       at the next synchronisation
 *   TRY(expr)           an int status of ours: return it when negative */
#ifndef COFEM_CUDA_UTIL_H
#define COFEM_CUDA_UTIL_H
#include <cuda_runtime.h>
#include <string.h>

#include "cofem/status.h"

/* the file name without its directories (__FILE__ is the full path in a CMake build) */
static inline const char* cf_cuda_base_name(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* CF_ERR_CUDA with "call: error string (error name) at file:line"; call is cut at its first '('
 * (the function's name, not its arguments) */
static inline int cf_cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
  int len = 0;
  while (call[len] && call[len] != '(') len++;
  return cf_error(CF_ERR_CUDA, "%.*s: %s (%s) at %s:%d", len, call, cudaGetErrorString(e), cudaGetErrorName(e),
                  cf_cuda_base_name(file), line);
}

/* the same for a launch: "launch k_amg_csr (R): ..." in full, the kernel told apart by what
 * follows its name (the AMG's R and P products share one kernel) */
static inline int cf_cuda_launch_fail(cudaError_t e, const char* kernel, const char* file, int line) {
  return cf_error(CF_ERR_CUDA, "launch %s: %s (%s) at %s:%d", kernel, cudaGetErrorString(e), cudaGetErrorName(e),
                  cf_cuda_base_name(file), line);
}

#define CU(call)                                                                     \
  do {                                                                               \
    cudaError_t cu_e_ = (call);                                                      \
    if (cu_e_ != cudaSuccess) return cf_cuda_fail(cu_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define CU_LAUNCHED(kernel)                                                                      \
  do {                                                                                           \
    cudaError_t cu_e_ = cudaGetLastError();                                                      \
    if (cu_e_ != cudaSuccess) return cf_cuda_launch_fail(cu_e_, #kernel, __FILE__, __LINE__);     \
  } while (0)

#define TRY(expr)                  \
  do {                             \
    int try_s_ = (expr);           \
    if (try_s_ < 0) return try_s_; \
  } while (0)

#endif
