/* Parallel loops of the CPU stages (internal). */
#ifndef COFEM_FEM_PARALLEL_H
#define COFEM_FEM_PARALLEL_H
#include <omp.h>

/* for (int i = 0; i < n; i++) body, on the OpenMP threads when `parallel` holds and more than
 * one thread is configured, else a plain loop. Not an if() clause: libgomp enters the runtime
 * (and makes futex system calls, ~1-2 us each here) for every region even when if() keeps it on
 * one thread, which is the scale of a whole step of a small part. Results are the same either
 * way (each iteration writes its own outputs; sums are formed in a fixed order elsewhere). */
#define CF_FOR(i, n, parallel, ...)                           \
  do {                                                        \
    const int cf_for_n_ = (n);                                \
    if ((parallel) && omp_get_max_threads() > 1) {            \
      _Pragma("omp parallel for schedule(static)")            \
      for (int i = 0; i < cf_for_n_; i++) { __VA_ARGS__; }    \
    } else {                                                  \
      for (int i = 0; i < cf_for_n_; i++) { __VA_ARGS__; }    \
    }                                                         \
  } while (0)
#endif
