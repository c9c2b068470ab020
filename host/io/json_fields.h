/* Typed fields of a JSON object (cJSON) for the scene readers (host/io/fem_scene.c, host/io/mbs_scene.c):
 * every error is CF_ERR_SCENE and names the file, where in it, and the key:
 *     "<path>: <prefix>missing \"<ctx><key>\""
 *     "<path>: <prefix>\"<ctx><key>\" must be a finite number"
 * The FEM scenes use ctx ("material.") and no prefix, the mechanism scenes a prefix
 * ("\"bodies\"[0] ('arm'): ") and no ctx. Absent optional fields leave *out as it is. */
#ifndef COFEM_JSON_FIELDS_H
#define COFEM_JSON_FIELDS_H
#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct cfJsonAt {
  const char* path;    /* the file */
  const char* prefix;  /* "" or "where: " */
  const char* ctx;     /* "" or "object." */
} cfJsonAt;

/* Parse a whole scene text (nothing but white space after the value): *out, or CF_ERR_SCENE
 * "<path>:<line>: invalid JSON" with the line where the parser stopped, taken from the parse-end
 * argument of cJSON_ParseWithLengthOpts (cJSON_GetErrorPtr reads one pointer for the whole
 * process, which another thread's parse may have replaced; cJSON still writes it, nothing here
 * reads it). */
int cf_json_parse(const char* json, const char* path, cJSON** out);
int cf_json_number(const cJSON* obj, const char* key, double* out, int required, const cfJsonAt* at);
int cf_json_int(const cJSON* obj, const char* key, int* out, const cfJsonAt* at);
/* an optional integer in [lo, hi]: "\"<ctx><key>\" must be an integer from lo to hi" */
int cf_json_int_range(const cJSON* obj, const char* key, int* out, int lo, int hi, const cfJsonAt* at);
/* No object anywhere in node (objects and arrays, recursively) has a key twice (cJSON keeps both
 * and lookups find the first). Error: "<path>: <prefix>duplicate key \"<ctx>material\"", the
 * key given with where it is ("loads[1].force"). */
int cf_json_no_duplicates(const cJSON* node, const cfJsonAt* at);
int cf_json_bool(const cJSON* obj, const char* key, int* out, const cfJsonAt* at);
int cf_json_string(const cJSON* obj, const char* key, char* out, size_t n, int required, const cfJsonAt* at);
/* it (the value of key) must be an array of n_min .. n_max finite numbers; *n (if given) = count */
int cf_json_numbers(const cJSON* it, const char* key, double* out, int n_min, int n_max, int* n, const cfJsonAt* at);
/* an optional / required array of exactly 3 finite numbers */
int cf_json_vec3(const cJSON* obj, const char* key, double* out, int required, const cfJsonAt* at);

#endif
