/* "No allocation inside a step": every mechanism scene, rigid and flexible (the Craig-Bampton
 * lug; the rigid and modal ones also in the semi-recursive formulation), steps 200 times after two warm-up
 * steps without a single malloc, calloc or realloc, and
 * so does the FE step (cf_step on scenes/lug_pull.json: backward Euler, Newmark and generalized-alpha,
 * block Jacobi, the rotated-Cholesky preconditioner, the consistent-tangent step), counted by interposing them;
 * glibc only, skipped under sanitizers, which interpose them themselves. */
#include <stddef.h>
#include <string.h>

#include "cf_test.h"
#include "cofem/fem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_semirecursive.h"
#include "cofem/scene.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define CF_NO_INTERPOSE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
#define CF_NO_INTERPOSE 1
#endif

#ifndef CF_NO_INTERPOSE
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
static long g_allocs = 0;
static int g_counting = 0;
void* malloc(size_t n) {
  g_allocs += g_counting;
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  g_allocs += g_counting;
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  g_allocs += g_counting;
  return __libc_realloc(p, n);
}

static const char* kScenes[] = {"pendulum", "double_fourbar", "slider_crank", "slider_crank_virtual1",
                                "slider_crank_virtual2", "fourbar_kinematic", "quarter_car", "door", "virtual_chain",
                                "flexible_lug", "flexible_lug_rbe2", "double_fourbar_modal4"};
/* not scenes/mbs/lug_lumped.json: with FE bodies the factorisation is supernodal, and CHOLMOD's
 * supernodal numeric factorisation allocates its dense workspace on every call (docs/mbs.md) */

int main(void) {
  for (size_t i = 0; i < sizeof kScenes / sizeof kScenes[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, COFEM_SOURCE_DIR "/scenes/mbs/%s.json", kScenes[i]);
    cfMbsScene s;
    cfMbsModel* m = NULL;
    cfMbsData* d = NULL;
    int st = cf_mbs_scene_load(path, &s);
    CHECK_OK(st);
    if (st < 0) continue;
    CHECK_OK(cf_mbs_model_create(&s.def, &m));
    if (m) CHECK_OK(cf_mbs_data_create(m, &d));
    if (d) {
      for (int k = 0; k < 202 && st >= 0; k++) {
        if (k == 2) g_allocs = 0, g_counting = 1;
        st = s.kinematic ? cf_mbs_kinematic_step(m, d) : cf_mbs_step(m, d);
      }
      g_counting = 0;
      CHECK_OK(st);
      printf("%-22s %ld allocations in 200 steps\n", kScenes[i], g_allocs);
      CHECK(g_allocs == 0);
    }
    /* the semi-recursive formulation (cofem/mbs_semirecursive.h) of the dynamic scenes it takes (rigid, and modal
     * bodies jointed at frame or interface points: flexible_lug_rbe2, double_fourbar_modal4) */
    cfMbsData* d2 = NULL;
    cfMbsSr* sr = NULL;
    if (m && !s.kinematic && !m->nfe && strcmp(kScenes[i], "flexible_lug") && cf_mbs_data_create(m, &d2) >= 0 &&
        cf_mbs_sr_create(m, d2, &sr) >= 0) {
      st = CF_OK;
      for (int k = 0; k < 202 && st >= 0; k++) {
        if (k == 2) g_allocs = 0, g_counting = 1;
        st = cf_mbs_sr_step(m, sr, d2);
      }
      g_counting = 0;
      CHECK_OK(st);
      printf("%-22s %ld allocations in 200 semi-recursive steps\n", kScenes[i], g_allocs);
      CHECK(g_allocs == 0);
    }
    cf_mbs_sr_free(sr);
    cf_mbs_data_free(d2);
    cf_mbs_data_free(d);
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
  }
  /* the FE step, as `cofem run scenes/lug_pull.json` with each integrator, preconditioner and
   * step tangent; the load ramp (cf_scene_forces) is outside the count */
  static const struct { const char* name; int integ, precond, tangent; } kFe[] = {
      {"backward Euler", CF_INTEGRATOR_BACKWARD_EULER, CF_PRECOND_BLOCK_JACOBI, CF_DYN_TANGENT_KR},
      {"Newmark", CF_INTEGRATOR_NEWMARK, CF_PRECOND_BLOCK_JACOBI, CF_DYN_TANGENT_KR},
      {"rotated Cholesky", CF_INTEGRATOR_BACKWARD_EULER, CF_PRECOND_ROTATED_CHOLESKY, CF_DYN_TANGENT_KR},
      {"Newmark, rot. Cholesky", CF_INTEGRATOR_NEWMARK, CF_PRECOND_ROTATED_CHOLESKY, CF_DYN_TANGENT_KR},
      {"consistent tangent", CF_INTEGRATOR_BACKWARD_EULER, CF_PRECOND_BLOCK_JACOBI, CF_DYN_TANGENT_SYM_CONSISTENT},
      {"generalized-alpha", CF_INTEGRATOR_GENERALIZED_ALPHA, CF_PRECOND_BLOCK_JACOBI, CF_DYN_TANGENT_SYM_CONSISTENT}};
  for (size_t i = 0; i < sizeof kFe / sizeof kFe[0]; i++) {
    cfScene s;
    int st = cf_scene_load(COFEM_SOURCE_DIR "/scenes/lug_pull.json", &s);
    CHECK_OK(st);
    if (st < 0) continue;
    s.def.integrator = kFe[i].integ;
    s.def.preconditioner = kFe[i].precond;
    s.def.dyn_tangent = kFe[i].tangent;
    cfModel* m = NULL;
    cfData* d = NULL;
    CHECK_OK(cf_scene_build(&s, &m, &d));
    long allocs = 0;
    for (int k = 0; d && k < 62 && st >= 0; k++) {
      cf_scene_forces(&s, d->t + s.def.dt, 0.2, d->f_ext); /* a fifth of the pull: the linearised
                                                             * Newmark step diverges at full load */
      if (k >= 2) g_allocs = 0, g_counting = 1;
      st = cf_step(m, d);
      g_counting = 0;
      if (k >= 2) allocs += g_allocs;
    }
    CHECK_OK(st);
    printf("FE step, %-22s %ld allocations in 60 steps\n", kFe[i].name, allocs);
    CHECK(allocs == 0);
    cf_data_free(d);
    cf_model_free(m);
    cf_scene_free(&s);
  }
  TEST_END();
}
#else
int main(void) {
  (void)cf_test_checks;
  (void)cf_test_failures;
  TEST_SKIP("allocation counting needs glibc without sanitizers");
}
#endif
