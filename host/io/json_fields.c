/* Typed JSON fields with errors naming file and key: host/io/json_fields.h. */
#include "io/json_fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

int cf_json_int_range(const cJSON* obj, const char* key, int* out, int lo, int hi, const cfJsonAt* at) {
  const cJSON* it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it) return CF_OK;
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble != floor(it->valuedouble) ||
      it->valuedouble < lo || it->valuedouble > hi)
    return cf_error(CF_ERR_SCENE, "%s: %s\"%s%s\" must be an integer from %d to %d", at->path, at->prefix, at->ctx,
                    key, lo, hi);
  *out = (int)it->valuedouble;
  return CF_OK;
}

static int cmp_key(const void* a, const void* b) {
  return strcmp((*(const cJSON* const*)a)->string, (*(const cJSON* const*)b)->string);
}

/* where: the keys and indices leading to node, "" at the top */
static int no_dup(const cJSON* node, char* where, size_t wlen, const cfJsonAt* at) {
  size_t n = 0;
  for (const cJSON* c = node->child; c; c = c->next) n++;
  if (cJSON_IsObject(node) && n > 1) {
    const cJSON** keys = malloc(sizeof *keys * n);
    if (!keys) return cf_error(CF_ERR_NOMEM, "%s: out of memory", at->path);
    size_t k = 0;
    for (const cJSON* c = node->child; c; c = c->next) keys[k++] = c;
    qsort(keys, n, sizeof *keys, cmp_key);
    for (size_t i = 1; i < n; i++)
      if (!strcmp(keys[i]->string, keys[i - 1]->string)) {
        int st = cf_error(CF_ERR_SCENE, "%s: %sduplicate key \"%s%s%s%s\"", at->path, at->prefix, at->ctx, where,
                          where[0] ? "." : "", keys[i]->string);
        free(keys);
        return st;
      }
    free(keys);
  }
  size_t len = strlen(where);
  int i = 0;
  for (const cJSON* c = node->child; c; c = c->next, i++) {
    if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
    if (cJSON_IsObject(node)) snprintf(where + len, wlen - len, "%s%s", len ? "." : "", c->string);
    else snprintf(where + len, wlen - len, "[%d]", i);
    int st = no_dup(c, where, wlen, at);
    where[len] = '\0';
    if (st < 0) return st;
  }
  return CF_OK;
}

int cf_json_no_duplicates(const cJSON* node, const cfJsonAt* at) {
  char where[512] = "";
  return no_dup(node, where, sizeof where, at);
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

int cf_json_parse(const char* json, const char* path, cJSON** out) {
  const char* end = NULL;
  *out = cJSON_ParseWithLengthOpts(json, strlen(json) + 1, &end, 1);
  if (*out) return CF_OK;
  int line = 1;
  for (const char* c = json; end && c < end && *c; c++) line += *c == '\n';
  return cf_error(CF_ERR_SCENE, "%s:%d: invalid JSON", path, line);
}
