/* Strict option values: the whole text, range-checked, finite (cofem/status.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cofem/status.h"

/* leading blanks are accepted by strtol/strtod: refuse them too, the value is the whole text */
static int blank_or_empty(const char* t) { return !t || !*t || strchr(" \t\n\r\f\v", t[0]) != NULL; }

int cf_parse_long(const char* option, const char* text, long lo, long hi, long* out) {
  char* end = NULL;
  errno = 0;
  long v = blank_or_empty(text) ? 0 : strtol(text, &end, 10);
  if (blank_or_empty(text) || *end || errno == ERANGE || v < lo || v > hi)
    return cf_error(CF_ERR_ARG, "%s wants an integer from %ld to %ld, got '%s'", option, lo, hi, text ? text : "");
  *out = v;
  return CF_OK;
}

int cf_parse_int(const char* option, const char* text, int lo, int hi, int* out) {
  long v = 0;
  int st = cf_parse_long(option, text, lo, hi, &v);
  if (st == CF_OK) *out = (int)v;
  return st;
}

int cf_parse_double(const char* option, const char* text, double lo, double hi, double* out) {
  char* end = NULL;
  double v = blank_or_empty(text) ? NAN : strtod(text, &end);
  if (blank_or_empty(text) || *end || !isfinite(v) || v < lo || v > hi)
    return cf_error(CF_ERR_ARG, "%s wants a number from %g to %g, got '%s'", option, lo, hi, text ? text : "");
  *out = v;
  return CF_OK;
}

int cf_parse_choice(const char* option, const char* text, const char* const* choices, int* out) {
  for (int i = 0; choices[i]; i++)
    if (text && !strcmp(text, choices[i])) {
      *out = i;
      return CF_OK;
    }
  char list[512] = "";
  size_t n = 0;
  for (int i = 0; choices[i] && n < sizeof list; i++) {
    const char* sep = !i ? "" : choices[i + 1] ? ", " : " or ";
    int w = snprintf(list + n, sizeof list - n, "%s%s", sep, choices[i]);
    if (w < 0) break;
    n += (size_t)w;
  }
  return cf_error(CF_ERR_ARG, "%s %s: use %s", option, text ? text : "(none)", list);
}
