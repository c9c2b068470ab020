/* Minimal plain-C test macros (as Box2D's): a failed check prints file:line and the values,
 * counts the failure, and the test's main returns non-zero. Exit 77 means "skipped". */
#ifndef CF_TEST_H
#define CF_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int cf_test_failures = 0;
static int cf_test_checks = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    cf_test_checks++;                                                            \
    if (!(cond)) {                                                               \
      cf_test_failures++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

/* |a - b| <= atol + rtol*|b|, b being the reference */
#define CHECK_CLOSE(a, b, atol, rtol)                                                    \
  do {                                                                                   \
    double cf_a_ = (a), cf_b_ = (b);                                                     \
    cf_test_checks++;                                                                    \
    if (!(fabs(cf_a_ - cf_b_) <= (atol) + (rtol) * fabs(cf_b_))) {                       \
      cf_test_failures++;                                                                \
      fprintf(stderr, "%s:%d: CHECK_CLOSE failed: %s = %.12g, %s = %.12g (atol %g rtol %g)\n", \
              __FILE__, __LINE__, #a, cf_a_, #b, cf_b_, (double)(atol), (double)(rtol)); \
    }                                                                                    \
  } while (0)

#define CHECK_OK(expr)                                                                   \
  do {                                                                                   \
    int cf_s_ = (expr);                                                                  \
    cf_test_checks++;                                                                    \
    if (cf_s_ < 0) {                                                                     \
      cf_test_failures++;                                                                \
      fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, cf_s_,   \
              cf_last_error());                                                          \
    }                                                                                    \
  } while (0)

#define TEST_SKIP(why)                        \
  do {                                        \
    printf("SKIP: %s\n", why);                \
    return 77;                                \
  } while (0)

#define TEST_END()                                                                     \
  do {                                                                                 \
    printf("%d checks, %d failed\n", cf_test_checks, cf_test_failures);                \
    return cf_test_failures ? 1 : 0;                                                   \
  } while (0)

#endif
