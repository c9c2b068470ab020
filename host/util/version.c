/* Version and data folder of the library (cofem/cofem.h). */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cofem/cofem.h"

#ifndef COFEM_DATA_DIR
#define COFEM_DATA_DIR "/usr/local/share/cofem"
#endif
#ifndef COFEM_LIB_TO_DATA
#define COFEM_LIB_TO_DATA "../share/cofem"
#endif
#ifndef COFEM_BIN_TO_DATA
#define COFEM_BIN_TO_DATA "../share/cofem"
#endif

const char* cf_version(void) { return COFEM_VERSION_STRING; }

int cf_api_version(void) { return COFEM_API_VERSION; }

/* <folder of file>/<rel> into out if that folder has scenes/ */
static int beside(const char* file, const char* rel, char* out, size_t n) {
  const char* slash = strrchr(file, '/');
  if (!slash) return 0;
  char scenes[4200];
  snprintf(out, n, "%.*s/%s", (int)(slash - file), file, rel);
  snprintf(scenes, sizeof scenes, "%s/scenes", out);
  struct stat st;
  if (stat(scenes, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  char canon[PATH_MAX];
  if (realpath(out, canon) && strlen(canon) < n) strcpy(out, canon); /* no "lib/../" in it */
  return 1;
}

const char* cf_data_dir(void) {
  static _Thread_local char dir[4096];
  const char* env = getenv("COFEM_DATA");
  if (env && env[0]) return env;
  /* the installed tree, wherever it was moved: beside libcofem.so, or beside the program that
   * linked libcofem.a */
  Dl_info info;
  if (dladdr((void*)&cf_data_dir, &info) && info.dli_fname && strstr(info.dli_fname, "libcofem.so")) {
    if (beside(info.dli_fname, COFEM_LIB_TO_DATA, dir, sizeof dir)) return dir;
  } else {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
      exe[len] = '\0';
      if (beside(exe, COFEM_BIN_TO_DATA, dir, sizeof dir)) return dir;
    }
  }
  return COFEM_DATA_DIR;
}
