/* cofem status codes and error reporting.
 * Convention (as CHOLMOD): 0 is success, negative is an error, positive is a warning.
 * The library never exits: every failing call returns a negative cfStatus and leaves a
 * human-readable message (file, line, entity) retrievable with cf_last_error(). */
#ifndef COFEM_STATUS_H
#define COFEM_STATUS_H

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
  /* errors */
  CF_ERR_IO = -1,          /* file cannot be opened/read/written */
  CF_ERR_PARSE = -2,       /* malformed input text or binary */
  CF_ERR_MESH = -3,        /* well-formed but invalid mesh (bad ids, zero/negative volume) */
  CF_ERR_NOMEM = -4,       /* allocation failed */
  CF_ERR_ARG = -5,         /* invalid argument / value out of range */
  CF_ERR_SCENE = -6,       /* invalid scene description */
  CF_ERR_CUDA = -7,        /* CUDA runtime or library failure, or no device */
  CF_ERR_SOLVER = -8,      /* direct solver failed (e.g. singular system) */
  CF_ERR_UNSUPPORTED = -9  /* feature not available in this build */
} cfStatus;

enum { CF_WARN_COUNT = 5 }; /* size of cfData.warning[], indexed by positive cfStatus */

/* Message of the most recent error or warning set on this thread ("" if none). */
const char* cf_last_error(void);
/* Short symbolic name of a status code, e.g. "CF_ERR_PARSE". */
const char* cf_status_name(int status);
/* Record a printf-style message and return `code` (used by the library and tools). */
int cf_error(int code, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Clear the last message. */
void cf_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
