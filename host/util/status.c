/* Error messages: one buffer per thread, filled by cf_error(). */
#include "cofem/status.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_message[1024];

const char* cf_last_error(void) { return g_message; }

void cf_clear_error(void) { g_message[0] = '\0'; }

/* Formatted into a local buffer first: callers may pass cf_last_error() itself as an argument
 * ("backend cuda: %s", cf_last_error()), and vsnprintf into the buffer it reads from is undefined
 * (glibc printed "backend cuda: backend cuda: :"). */
int cf_error(int code, const char* fmt, ...) {
  char buf[sizeof g_message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  memcpy(g_message, buf, sizeof g_message);
  return code;
}

const char* cf_status_name(int s) {
  switch (s) {
    case CF_OK: return "CF_OK";
    case CF_WARN_PCG_NOT_CONVERGED: return "CF_WARN_PCG_NOT_CONVERGED";
    case CF_WARN_INVERTED: return "CF_WARN_INVERTED";
    case CF_WARN_INDEFINITE: return "CF_WARN_INDEFINITE";
    case CF_WARN_STATIC_NOT_CONVERGED: return "CF_WARN_STATIC_NOT_CONVERGED";
    case CF_WARN_STEP_CUT: return "CF_WARN_STEP_CUT";
    case CF_ERR_IO: return "CF_ERR_IO";
    case CF_ERR_PARSE: return "CF_ERR_PARSE";
    case CF_ERR_MESH: return "CF_ERR_MESH";
    case CF_ERR_NOMEM: return "CF_ERR_NOMEM";
    case CF_ERR_ARG: return "CF_ERR_ARG";
    case CF_ERR_SCENE: return "CF_ERR_SCENE";
    case CF_ERR_CUDA: return "CF_ERR_CUDA";
    case CF_ERR_SOLVER: return "CF_ERR_SOLVER";
    case CF_ERR_UNSUPPORTED: return "CF_ERR_UNSUPPORTED";
    case CF_ERR_DIVERGED: return "CF_ERR_DIVERGED";
    default: return "CF_UNKNOWN_STATUS";
  }
}
