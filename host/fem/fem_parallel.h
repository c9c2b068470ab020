/* Parallel loops of the CPU stages (internal). */
#ifndef COFEM_FEM_PARALLEL_H
#define COFEM_FEM_PARALLEL_H
#include <omp.h>

#include "cofem/fem.h"

/* Threads of the model's parallel regions: def.threads, or OpenMP's default (omp_get_max_threads)
 * when it is 0. Passed to each region by a num_threads clause, so that two models in one process
 * can run with their own counts and the process-global setting (omp_set_num_threads) is not
 * touched. */
static inline int cf_threads(const cfModel* m) {
  return m->def.threads > 0 ? m->def.threads : omp_get_max_threads();
}

/* Test hook: the team size of the last parallel region that this thread started (written by the
 * region's thread 0, which is the thread that started it; thread-local, so no race). */
extern _Thread_local int cf_fem__last_team;
#define CF_NOTE_TEAM()                                          \
  do {                                                          \
    if (omp_get_thread_num() == 0) cf_fem__last_team = omp_get_num_threads(); \
  } while (0)

/* for (int i = 0; i < n; i++) body, on cf_threads(m) threads when `parallel` holds and that is
 * more than one, else a plain loop. Not an if() clause: libgomp enters the runtime (and makes
 * futex system calls, ~1-2 us each here) for every region even when if() keeps it on one thread,
 * which is the scale of a whole step of a small part. Results are the same either way (each
 * iteration writes its own outputs; sums are formed in a fixed order elsewhere). */
#define CF_FOR(m, i, n, parallel, ...) CF_FOR_T(cf_threads(m), i, n, parallel, __VA_ARGS__)

/* The same on `threads` threads (code without a model at hand: the AMG hierarchy keeps the
 * model's count). */
#define CF_FOR_T(threads, i, n, parallel, ...)                \
  do {                                                        \
    const int cf_for_n_ = (n);                                \
    const int cf_for_t_ = (threads);                          \
    if ((parallel) && cf_for_t_ > 1) {                        \
      _Pragma("omp parallel num_threads(cf_for_t_)")          \
      {                                                       \
        CF_NOTE_TEAM();                                       \
        _Pragma("omp for schedule(static)")                   \
        for (int i = 0; i < cf_for_n_; i++) { __VA_ARGS__; }  \
      }                                                       \
    } else {                                                  \
      for (int i = 0; i < cf_for_n_; i++) { __VA_ARGS__; }    \
    }                                                         \
  } while (0)
#endif
