/* cofem status codes and error reporting.
 * Convention (as CHOLMOD): 0 is success, negative is an error, positive is a warning.
 * The library never exits: every failing call returns a negative cfStatus and leaves a
 * human-readable message (file, line, entity) retrievable with cf_last_error(). */
#ifndef COFEM_STATUS_H
#define COFEM_STATUS_H
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cfStatus {
  CF_OK = 0,
  /* warnings: the result is finite and usable, but something numerical happened */
  CF_WARN_PCG_NOT_CONVERGED = 1,   /* PCG hit its iteration cap above tolerance */
  CF_WARN_INVERTED = 2,            /* at least one element has det F <= 0 */
  CF_WARN_INDEFINITE = 3,          /* PCG met p^T A p <= 0 */
  CF_WARN_STATIC_NOT_CONVERGED = 4,/* a load increment ended above the force tolerance */
  CF_WARN_STEP_CUT = 5,            /* a generalized-alpha step was halved (Newton failed at h) */
  /* errors */
  CF_ERR_IO = -1,          /* file cannot be opened/read/written */
  CF_ERR_PARSE = -2,       /* malformed input text or binary */
  CF_ERR_MESH = -3,        /* well-formed but invalid mesh (bad ids, zero/negative volume) */
  CF_ERR_NOMEM = -4,       /* allocation failed */
  CF_ERR_ARG = -5,         /* invalid argument / value out of range */
  CF_ERR_SCENE = -6,       /* invalid scene description */
  CF_ERR_CUDA = -7,        /* CUDA runtime or library failure, or no device */
  CF_ERR_SOLVER = -8,      /* direct solver failed (e.g. singular system) */
  CF_ERR_UNSUPPORTED = -9, /* feature not available in this build */
  CF_ERR_DIVERGED = -10    /* the dynamics diverged (non-finite state, energy or displacement
                            * growth, Newton failing after its step halvings) */
} cfStatus;

enum { CF_WARN_COUNT = 6 }; /* size of cfData.warning[], indexed by positive cfStatus */

/* Message of the most recent error or warning set on this thread ("" if none). */
const char* cf_last_error(void);
/* Short symbolic name of a status code, e.g. "CF_ERR_PARSE". */
const char* cf_status_name(int status);
/* Record a printf-style message and return `code` (used by the library and tools). The arguments
 * may include cf_last_error() itself, to re-raise a message with context:
 * cf_error(st, "%s: %s", path, cf_last_error()). */
int cf_error(int code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Clear the last message. */
void cf_clear_error(void);

/* ---- strict values of command-line options (host/util/parse.c) ------------------------------
 * The whole text must be the number: no trailing junk, no empty string, in [lo, hi], finite.
 * On failure: CF_ERR_ARG, and the message names the option and the accepted range, e.g.
 *   "--steps wants an integer from 1 to 1000000000, got '1e12'". *out is set only on success. */
int cf_parse_long(const char* option, const char* text, long lo, long hi, long* out);
int cf_parse_int(const char* option, const char* text, int lo, int hi, int* out);
int cf_parse_double(const char* option, const char* text, double lo, double hi, double* out);
/* text must be one of choices (NULL-terminated); *out = its index. Otherwise CF_ERR_ARG:
 *   "--tangent bogus: use consistent or KR" */
int cf_parse_choice(const char* option, const char* text, const char* const* choices, int* out);

/* ---- input files (host/util/file.c) ---------------------------------------------------------
 * Only regular files are read: a directory, FIFO, device (/dev/zero, also through a symlink) or
 * socket is refused before it is opened, with CF_ERR_IO and "<path>: not a regular file but a FIFO".
 * `what` (may be NULL) names the file's role in the message: "<path>: <what> is not a regular file but ...".
 * cf_open_regular_file opens it for reading ("rb") and gives its size; cf_read_regular_file reads
 * it whole, NUL-terminated, allocating the file's size + 1 bytes, never more. */
int cf_check_regular_file(const char* path, const char* what, long long* size);
int cf_open_regular_file(const char* path, const char* what, FILE** file, long long* size);
int cf_read_regular_file(const char* path, const char* what, char** buf, size_t* size);

#ifdef __cplusplus
}
#endif
#endif
