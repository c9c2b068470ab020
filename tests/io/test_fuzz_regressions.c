/* Replays the fuzz targets' inputs without libFuzzer: every file of tests/fuzz/regressions/<target>/
 * (inputs that once crashed, hung or broke the contract; see docs/reliability.md) and of the seed
 * corpus tests/fuzz/corpus/<target>/ goes through the same code as the fuzz target, with the
 * same checks (tests/fuzz/fuzz_common.h: clean error naming the file and a cleared mesh, or a
 * valid mesh that survives an .inp round trip). A broken contract aborts, naming the file; an
 * input that takes longer than COFEM_FUZZ_REPLAY_TIMEOUT seconds (default 20) counts as a hang.
 * A regression input may come with NAME.expect, whose first line the error message must contain
 * (so that a fix that is undone shows even where the input would still fail cleanly). */
#define _POSIX_C_SOURCE 200809L
#define CFF_NO_ENTRY 1
#include <dirent.h>
#include <signal.h>

#include "fuzz/fuzz_inp.c"
#include "fuzz/fuzz_msh.c"
#include "fuzz/fuzz_msh_bin.c"
#include "fuzz/fuzz_scene.c"

#include "cf_test.h"

typedef int (*OneInput)(const uint8_t*, size_t);

static const struct {
  const char* dir; /* under tests/fuzz/corpus/ and tests/fuzz/regressions/ */
  OneInput fn;
  int nreg_min; /* regression inputs committed (git ls-files): fewer replayed is a failure */
} kTargets[] = {{"msh", cff_msh_one, 2}, {"msh_bin", cff_msh_bin_one, 1}, {"inp", cff_inp_one, 2},
                {"scene", cff_scene_one, 0}};

static char g_current[700];

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "\ntest_fuzz_regressions: HANG (timeout) on the input named above\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
  _exit(3);
}

static int cmp_str(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static int replay_dir(const char* dir, OneInput fn, int timeout) {
  DIR* d = opendir(dir);
  if (!d) return -1; /* missing: the caller decides whether that is allowed */
  char** names = NULL;
  int n = 0, cap = 0;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.' || strstr(e->d_name, ".expect")) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      names = realloc(names, sizeof *names * (size_t)cap);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  if (n == 0) {
    free(names);
    return 0;
  }
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  for (int i = 0; i < n; i++) {
    snprintf(g_current, sizeof g_current, "%s/%s", dir, names[i]);
    FILE* f = fopen(g_current, "rb");
    CHECK(f != NULL);
    if (!f) continue;
    uint8_t* buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
      if (len == cap) {
        cap = cap ? 2 * cap : 65536;
        buf = realloc(buf, cap);
      }
      size_t got = fread(buf + len, 1, cap - len, f);
      len += got;
      if (got == 0) break;
    }
    fclose(f);
    /* every name is printed before its run, so a crash names its input (ctest shows the output
     * of failed tests only) */
    printf("  %s (%zu bytes)\n", g_current, len);
    fflush(stdout);
    alarm((unsigned)timeout);
    double t0 = cf_wall_time();
    fn(buf, len);
    alarm(0);
    double dt = cf_wall_time() - t0;
    if (dt > 1.0) printf("  slow: %s took %.2f s\n", g_current, dt);
    cf_test_checks++;
    char want[256], expect_path[720];
    snprintf(expect_path, sizeof expect_path, "%s.expect", g_current);
    FILE* ef = fopen(expect_path, "r");
    if (ef) {
      if (fgets(want, sizeof want, ef)) {
        want[strcspn(want, "\n")] = '\0';
        int ok = strstr(cf_last_error(), want) != NULL;
        CHECK(ok);
        if (!ok) fprintf(stderr, "%s: message '%s' lacks '%s'\n", g_current, cf_last_error(), want);
      }
      fclose(ef);
    }
    free(buf);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  return n;
}

int main(void) {
  const char* to = getenv("COFEM_FUZZ_REPLAY_TIMEOUT");
  int timeout = to && atoi(to) > 0 ? atoi(to) : 20;
  signal(SIGALRM, on_alarm);
  for (size_t t = 0; t < sizeof kTargets / sizeof kTargets[0]; t++) {
    char dir[256];
    snprintf(dir, sizeof dir, "tests/fuzz/regressions/%s", kTargets[t].dir);
    int nreg = replay_dir(dir, kTargets[t].fn, timeout);
    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", kTargets[t].dir);
    int ncorp = replay_dir(dir, kTargets[t].fn, timeout);
    printf("fuzz_%s: %d regression inputs, %d corpus inputs replayed\n", kTargets[t].dir, nreg, ncorp);
    /* our own inputs: a missing directory (-1) or fewer files than committed is a failure, not
     * 0 inputs replayed in silence (a target without regressions may lack the directory) */
    CHECK(ncorp >= 100); /* 139 .. 500 committed */
    CHECK(kTargets[t].nreg_min == 0 ? nreg >= -1 : nreg >= kTargets[t].nreg_min);
  }
  TEST_END();
}
