/* Typed JSON fields with errors naming file and key: host/io/json_fields.h. */
#include "io/json_fields.h"

#include <math.h>
#include <string.h>

#include "cofem/status.h"

static int missing(const char* key, const cfJsonAt* at) {
  return cf_error(CF_ERR_SCENE, "%s: %smissing \"%s%s\"", at->path, at->prefix, at->ctx, key);
}

int cf_json_number(const cJSON* obj, const char* key, double* out, int required, const cfJsonAt* at) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return required ? missing(key, at) : CF_OK;
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be a finite number", at->path, at->prefix, at->ctx, key);
  *out = it->valuedouble;
  return CF_OK;
}

int cf_json_int(const cJSON* obj, const char* key, int* out, const cfJsonAt* at) {
  double v = *out;
  int st = cf_json_number(obj, key, &v, 0, at);
  if (st < 0) return st;
  if (v != floor(v) || fabs(v) > 2e9)
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be an integer", at->path, at->prefix, at->ctx, key);
  *out = (int)v;
  return CF_OK;
}

int cf_json_bool(const cJSON* obj, const char* key, int* out, const cfJsonAt* at) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return CF_OK;
  if (!cJSON_IsBool(it))
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be true or false", at->path, at->prefix, at->ctx, key);
  *out = cJSON_IsTrue(it);
  return CF_OK;
}

int cf_json_string(const cJSON* obj, const char* key, char* out, size_t n, int required, const cfJsonAt* at) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return required ? missing(key, at) : CF_OK;
  if (!cJSON_IsString(it))
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be a string", at->path, at->prefix, at->ctx, key);
  if (strlen(it->valuestring) >= n)
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" is too long", at->path, at->prefix, at->ctx, key);
  strcpy(out, it->valuestring);
  return CF_OK;
}

int cf_json_numbers(const cJSON* it, const char* key, double* out, int n_min, int n_max, int* n, const cfJsonAt* at) {
  int sz = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : -1;
  if (sz < n_min || sz > n_max) {
    if (n_min == n_max)
      return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be an array of %d numbers", at->path, at->prefix, at->ctx, key,
                      n_min);
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be an array of %d to %d numbers", at->path, at->prefix, at->ctx,
                    key, n_min, n_max);
  }
  for (int i = 0; i < sz; i++) {
    const cJSON* v = cJSON_GetArrayItem(it, i);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
      return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\"[%d] must be a finite number", at->path, at->prefix, at->ctx, key, i);
    out[i] = v->valuedouble;
  }
  if (n) *n = sz;
  return CF_OK;
}

int cf_json_vec3(const cJSON* obj, const char* key, double* out, int required, const cfJsonAt* at) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return required ? missing(key, at) : CF_OK;
  return cf_json_numbers(it, key, out, 3, 3, NULL, at);
}
