/* File-system helpers shared by the command-line tools. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cofem/output.h"

int cf_make_dirs(const char* path) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return cf_error(CF_ERR_ARG, "%.64s...: path too long", path);
  for (char* p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(buf, 0777) && errno != EEXIST)
        return cf_error(CF_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
      *p = '/';
    }
  if (mkdir(buf, 0777) && errno != EEXIST)
    return cf_error(CF_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
  return CF_OK;
}
