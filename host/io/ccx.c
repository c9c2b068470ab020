/* CalculiX result files: cofem/ccx.h. */
#include "cofem/ccx.h"

#include <stdio.h>
#include <string.h>

#include "cofem/status.h"

int cf_ccx_read_frequencies(const char* path, double* hz, int max) {
  FILE* f = fopen(path, "r");
  if (!f) return cf_error(CF_ERR_IO, "%s: cannot read the CalculiX results", path);
  char line[1024];
  int in = 0, n = 0;
  /* rows "mode eigenvalue rad/time cycles/time imaginary", numbered from 1; the table ends at the
   * first non-blank line that is not such a row */
  while (fgets(line, sizeof line, f) && n < max) {
    if (strstr(line, "E I G E N V A L U E   O U T P U T")) {
      in = 1;
      continue;
    }
    if (!in) continue;
    int mode;
    double ev, rad, cyc, im;
    if (sscanf(line, "%d %lf %lf %lf %lf", &mode, &ev, &rad, &cyc, &im) == 5 && mode == n + 1) hz[n++] = cyc;
    else if (n > 0 && strspn(line, " \t\r\n") != strlen(line)) in = 0;
  }
  fclose(f);
  return n;
}
