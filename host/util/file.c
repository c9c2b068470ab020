/* Input files: regular files only, read with an allocation bounded by the size (cofem/status.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cofem/status.h"

static const char* kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "a special file";
}

static int refuse(const char* path, const char* what, mode_t m) {
  if (what && *what) return cf_error(CF_ERR_IO, "%s: %s is not a regular file but %s", path, what, kind(m));
  return cf_error(CF_ERR_IO, "%s: not a regular file but %s", path, kind(m));
}

int cf_check_regular_file(const char* path, const char* what, long long* size) {
  struct stat sb;
  if (!path) return cf_error(CF_ERR_ARG, "file path is NULL");
  if (stat(path, &sb) != 0) return cf_error(CF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  if (!S_ISREG(sb.st_mode)) return refuse(path, what, sb.st_mode);
  if (size) *size = (long long)sb.st_size;
  return CF_OK;
}

int cf_open_regular_file(const char* path, const char* what, FILE** file, long long* size) {
  *file = NULL;
  int st = cf_check_regular_file(path, what, NULL);
  if (st < 0) return st;
  /* O_NONBLOCK: if the path was swapped for a FIFO after the check, the open does not wait for a
   * writer; fstat of what was opened decides */
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return cf_error(CF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    st = cf_error(CF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    return st;
  }
  if (!S_ISREG(sb.st_mode)) {
    st = refuse(path, what, sb.st_mode);
    close(fd);
    return st;
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  FILE* f = fdopen(fd, "rb");
  if (!f) {
    st = cf_error(CF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    return st;
  }
  *file = f;
  if (size) *size = (long long)sb.st_size;
  return CF_OK;
}

int cf_read_regular_file(const char* path, const char* what, char** buf, size_t* size) {
  *buf = NULL;
  if (size) *size = 0;
  FILE* f;
  long long len;
  int st = cf_open_regular_file(path, what, &f, &len);
  if (st < 0) return st;
  if (len < 0 || (unsigned long long)len >= (unsigned long long)SIZE_MAX) {
    fclose(f);
    return cf_error(CF_ERR_NOMEM, "%s: too large to read (%lld bytes)", path, len);
  }
  char* b = malloc((size_t)len + 1);
  if (!b) {
    fclose(f);
    return cf_error(CF_ERR_NOMEM, "%s: out of memory reading %lld bytes", path, len);
  }
  size_t n = fread(b, 1, (size_t)len, f);
  int err = ferror(f) ? (errno ? errno : EIO) : 0;
  int grew = !err && n == (size_t)len && fgetc(f) != EOF;
  fclose(f);
  if (err || grew || n != (size_t)len) {
    free(b);
    if (err) return cf_error(CF_ERR_IO, "%s: read error: %s", path, strerror(err));
    return cf_error(CF_ERR_IO, "%s: the file changed size while it was read (%lld bytes expected)", path, len);
  }
  b[n] = '\0';
  *buf = b;
  if (size) *size = n;
  return CF_OK;
}
