/* Scenes given as JSON text (issue 32): cf_session_open_text and cf_mbs_session_open_text with the
 * text of a scene file and that file's path step to the very numbers of cf_session_open /
 * cf_mbs_session_open of the file (bit for bit), refuse a bad key with the file's message word for
 * word, resolve relative paths against the named file's folder (which need not exist: a mesh not
 * found there is an error naming that folder), and a mechanism's flexible body whose "scene" is the
 * FE scene itself (an object) steps as the same FE scene in a file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/cofem.h"

#define SRC COFEM_SOURCE_DIR
static const char* kLug = SRC "/scenes/lug_pull.json";

static char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (buf) buf[n] = '\0';
  fclose(f);
  return buf;
}

/* text with the first `from` replaced by `to` (a fresh string) */
static char* replaced(const char* text, const char* from, const char* to) {
  const char* at = strstr(text, from);
  if (!at) return NULL;
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char* out = malloc(n);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return out;
}

int main(void) {
  char* lug = slurp(kLug);
  CHECK(lug != NULL);
  if (!lug) return 1;

  /* 1. the same text: the same run, bit for bit */
  cfSession *f = NULL, *t = NULL;
  CHECK_OK(cf_session_open(kLug, &f));
  CHECK_OK(cf_session_open_text(lug, kLug, &t));
  if (!f || !t) return 1;
  CHECK(cf_session_step(f, 30) >= 0 && cf_session_step(t, 30) >= 0);
  const int ndof = 3 * cf_session_nnode(f);
  CHECK(memcmp(cf_session_x(f), cf_session_x(t), sizeof(double) * ndof) == 0);
  CHECK(memcmp(cf_session_v(f), cf_session_v(t), sizeof(double) * ndof) == 0);
  double u[3];
  CHECK_OK(cf_session_probe(t, "probe", u));
  CHECK(u[0] > 1e-3); /* it was pulled */
  cf_session_free(f);
  cf_session_free(t);

  /* 2. a bad key: the file's message, word for word (the file written beside the lug's) */
  char* bad = replaced(lug, "\"material\": {\"E\": 210e9", "\"material\": {\"E\": -5");
  CHECK(bad != NULL);
  char dir[] = "/tmp/cofem-scene-text-XXXXXX", bad_path[64];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(bad_path, sizeof bad_path, "%s/bad.json", dir);
  char* bad2 = replaced(bad, "../meshes/lug.msh", SRC "/meshes/lug.msh");
  FILE* out = fopen(bad_path, "wb");
  CHECK(out != NULL);
  if (out) fputs(bad2, out), fclose(out);
  char msg_file[1024] = "";
  CHECK(cf_session_open(bad_path, &f) < 0 && f == NULL);
  snprintf(msg_file, sizeof msg_file, "%s", cf_last_error());
  CHECK(cf_session_open_text(bad2, bad_path, &t) < 0 && t == NULL);
  CHECK(strcmp(msg_file, cf_last_error()) == 0);
  CHECK(strstr(msg_file, bad_path) && strstr(msg_file, "-5"));
  remove(bad_path);
  remove(dir);
  free(bad);
  free(bad2);

  /* 3. relative paths against the named file's folder, which need not exist */
  CHECK(cf_session_open_text(lug, SRC "/no/where/lug.json", &t) < 0);
  CHECK(strstr(cf_last_error(), SRC "/no/where/../meshes/lug.msh") != NULL);
  CHECK(cf_session_open_text(NULL, kLug, &t) < 0 && t == NULL);

  /* 4. a mechanism whose FE body's "scene" is the FE scene itself: the door on the FE hinge */
  const char* door_path = SRC "/scenes/mbs/door_on_fe_hinge.json";
  char* door = slurp(door_path);
  char* hinge = slurp(SRC "/scenes/hinge_pull.json");
  CHECK(door && hinge);
  if (!door || !hinge) return 1;
  char* hinge_rel = replaced(hinge, "\"../meshes/hinge.msh\"", "\"../../meshes/hinge.msh\""); /* from scenes/mbs */
  char* door_inline = replaced(door, "\"../hinge_pull.json\"", hinge_rel);
  CHECK(hinge_rel && door_inline);
  cfMbsSession *mf = NULL, *mt = NULL;
  CHECK_OK(cf_mbs_session_open(door_path, &mf));
  CHECK_OK(cf_mbs_session_open_text(door_inline, door_path, &mt));
  if (!mf || !mt) return 1;
  CHECK(cf_mbs_session_step(mf, 3) >= 0 && cf_mbs_session_step(mt, 3) >= 0);
  const int nq = cf_mbs_session_nq(mf);
  CHECK(nq == cf_mbs_session_nq(mt) && nq > 1000);
  CHECK(memcmp(cf_mbs_session_q(mf), cf_mbs_session_q(mt), sizeof(double) * nq) == 0);
  CHECK(memcmp(cf_mbs_session_qd(mf), cf_mbs_session_qd(mt), sizeof(double) * nq) == 0);
  cf_mbs_session_free(mf);
  cf_mbs_session_free(mt);
  /* its bad key named by the mechanism and the body */
  char* hinge_bad = replaced(hinge_rel, "\"fixed\"", "\"fixd\"");
  char* door_bad = replaced(door, "\"../hinge_pull.json\"", hinge_bad);
  CHECK(cf_mbs_session_open_text(door_bad, door_path, &mt) < 0 && mt == NULL);
  CHECK(strstr(cf_last_error(), "door_on_fe_hinge.json: \"bodies\"[0] ('hinge') \"flexible\" \"scene\": unknown key "
                                "\"fixd\"") != NULL);
  printf("inline FE scene's error: %s\n", cf_last_error());
  free(hinge_bad);
  free(door_bad);
  free(hinge_rel);
  free(door_inline);
  free(door);
  free(hinge);
  free(lug);
  TEST_END();
}
