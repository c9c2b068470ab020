/* Reading CalculiX (ccx) results: what the accuracy harness (host/cli/cmd_accuracy.c) and the
 * CalculiX comparisons in tests/ share. */
#ifndef COFEM_CCX_H
#define COFEM_CCX_H

#ifdef __cplusplus
extern "C" {
#endif

/* Eigenfrequencies [Hz] of the "E I G E N V A L U E   O U T P U T" table of a ccx .dat file
 * (*FREQUENCY), at most max of them, in mode order. Returns how many, or a negative status (the
 * file cannot be read; the message names it). */
int cf_ccx_read_frequencies(const char* dat_path, double* hz, int max);

#ifdef __cplusplus
}
#endif
#endif
