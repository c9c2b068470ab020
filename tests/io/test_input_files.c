/* Input hardening (issue 17) at the library level: strict number parsing (cf_parse_*), regular
 * files only (cf_read_regular_file: a FIFO is refused without blocking, /dev/zero without
 * reading), a reduction file whose header sizes do not add up to its size refused before
 * allocating, a path that is not a reduction file never replaced (cf_reduction_replaceable), and
 * duplicate scene keys. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cf_test.h"
#include "cofem/cofem.h"

static char dir[64];

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "wb");
  if (f) fputs(text, f), fclose(f);
}

static void test_parse(void) {
  long l = 7;
  int i = 7;
  double d = 7;
  CHECK(cf_parse_long("--n", "42", 1, 100, &l) == CF_OK && l == 42);
  CHECK(cf_parse_long("--n", "-3", -5, 5, &l) == CF_OK && l == -3);
  static const char* bad_long[] = {"", " 5", "5 ", "1e3", "abc", "0x10", "99999999999999999999", "101", "0", "4.0", NULL};
  for (int k = 0; bad_long[k]; k++) {
    l = 7;
    CHECK(cf_parse_long("--n", bad_long[k], 1, 100, &l) == CF_ERR_ARG && l == 7);
  }
  CHECK(strstr(cf_last_error(), "--n wants an integer from 1 to 100, got '4.0'") != NULL);
  CHECK(cf_parse_int("--i", "2147483648", 0, 2147483647, &i) == CF_ERR_ARG && i == 7);
  CHECK(cf_parse_double("--x", "2.5e-3", 0, 1, &d) == CF_OK && d == 2.5e-3);
  static const char* bad_double[] = {"", "nan", "inf", "-inf", "1e400", "0.5s", "2", "-0.1", " 0.5", NULL};
  for (int k = 0; bad_double[k]; k++) {
    d = 7;
    CHECK(cf_parse_double("--x", bad_double[k], 0, 1, &d) == CF_ERR_ARG && d == 7);
  }
  static const char* const ch[] = {"a", "bb", "ccc", NULL};
  CHECK(cf_parse_choice("--c", "bb", ch, &i) == CF_OK && i == 1);
  CHECK(cf_parse_choice("--c", "b", ch, &i) == CF_ERR_ARG && strstr(cf_last_error(), "--c b: use a, bb or ccc"));
}

static void test_special_files(void) {
  char fifo[128], sub[128], plain[128];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(plain, sizeof plain, "%s/plain.txt", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(mkdir(sub, 0700) == 0);
  write_file(plain, "hello");
  char* buf = NULL;
  size_t n = 0;
  CHECK(cf_read_regular_file(fifo, NULL, &buf, &n) == CF_ERR_IO && !buf);
  CHECK(strstr(cf_last_error(), "fifo: not a regular file but a FIFO") != NULL);
  CHECK(cf_read_regular_file(sub, "the scene", &buf, &n) == CF_ERR_IO);
  CHECK(strstr(cf_last_error(), "sub: the scene is not a regular file but a directory") != NULL);
  CHECK(cf_read_regular_file("/dev/zero", NULL, &buf, &n) == CF_ERR_IO);
  CHECK(strstr(cf_last_error(), "/dev/zero: not a regular file but a character device") != NULL);
  CHECK(cf_read_regular_file(plain, NULL, &buf, &n) == CF_OK && n == 5 && buf && !strcmp(buf, "hello"));
  free(buf);
  /* every reader goes through it */
  cfMesh mesh;
  char msh[160];
  snprintf(msh, sizeof msh, "%s/zero.msh", dir);
  CHECK(symlink("/dev/zero", msh) == 0);
  CHECK(cf_mesh_read(msh, &mesh) == CF_ERR_IO && strstr(cf_last_error(), "not a regular file"));
  cfScene s;
  CHECK(cf_scene_load(fifo, &s) == CF_ERR_IO && strstr(cf_last_error(), "not a regular file but a FIFO"));
  cfReduction r;
  CHECK(cf_reduction_read(fifo, &r) == CF_ERR_IO && strstr(cf_last_error(), "not a regular file but a FIFO"));
  CHECK(cf_reduction_replaceable(fifo) == CF_ERR_IO);
  CHECK(cf_reduction_replaceable(sub) == CF_ERR_IO && strstr(cf_last_error(), "not overwritten"));
  CHECK(cf_reduction_replaceable(plain) == CF_ERR_IO &&
        strstr(cf_last_error(), "plain.txt: exists and is not a cofem reduction file"));
  char absent[160];
  snprintf(absent, sizeof absent, "%s/absent.cfred", dir);
  CHECK(cf_reduction_replaceable(absent) == CF_OK);
  remove(msh), remove(fifo), remove(plain), rmdir(sub);
}

/* a reduction file with inflated header sizes: refused by the size check, not by malloc */
static void test_reduction_sizes(void) {
  cfMesh mesh;
  CHECK_OK(cf_mesh_box(3, 1, 1, 1.0, 0.2, 0.2, &mesh));
  cfModelDef def = cf_default_model_def();
  def.E = 1e9, def.nu = 0.3, def.rho = 1000;
  cfModel* m = NULL;
  CHECK_OK(cf_model_create(&mesh, &def, &m));
  if (!m) return;
  int nodes[64], nb = 0; /* the face x = 0 is the interface */
  for (int i = 0; i < mesh.nnode && nb < 64; i++)
    if (mesh.X[3 * i] == 0) nodes[nb++] = i;
  cfReduceOptions o = cf_default_reduce_options();
  o.nmodes = 2;
  cfReduction r;
  CHECK_OK(cf_reduce(m, nodes, nb, &o, &r));
  char path[160];
  snprintf(path, sizeof path, "%s/r.cfred", dir);
  CHECK_OK(cf_reduction_write(&r, path));
  CHECK(cf_reduction_replaceable(path) == CF_OK);
  cfReduction back;
  CHECK_OK(cf_reduction_read(path, &back));
  cf_reduction_free(&back);
  /* nnode 2e8, ndof 6e8, n 6e8: ~3e18 bytes of basis if the header were believed */
  FILE* f = fopen(path, "r+b");
  int32_t h[3] = {200000000, 1, 600000000}, nn = 600000000, nk = 600000000 - r.nb;
  if (f) {
    fseek(f, 16, SEEK_SET), fwrite(h, 4, 3, f);
    fseek(f, 40, SEEK_SET), fwrite(&nk, 4, 1, f), fwrite(&nn, 4, 1, f);
    fclose(f);
  }
  CHECK(cf_reduction_read(path, &back) == CF_ERR_PARSE && strstr(cf_last_error(), "the header's sizes want"));
  /* one byte more or less than the header's sizes */
  CHECK_OK(cf_reduction_write(&r, path));
  f = fopen(path, "ab");
  if (f) fputc(0, f), fclose(f);
  CHECK(cf_reduction_read(path, &back) == CF_ERR_PARSE);
  remove(path);
  cf_reduction_free(&r);
  cf_model_free(m);
  cf_mesh_free(&mesh);
}

static void test_duplicates(void) {
  cfScene s;
  const char* dup = "{\"mesh\": \"x.msh\", \"material\": {\"E\": 1, \"nu\": 0.3, \"rho\": 1}, "
                    "\"loads\": [{\"set\": \"a\", \"force\": [1, 0, 0]}, {\"set\": \"b\", \"force\": [1, 0, 0], \"set\": \"c\"}]}";
  CHECK(cf_scene_parse(dup, "dup.json", &s) == CF_ERR_SCENE);
  CHECK(strstr(cf_last_error(), "dup.json: duplicate key \"loads[1].set\"") != NULL);
  const char* top = "{\"mesh\": \"x.msh\", \"mesh\": \"y.msh\", \"material\": {\"E\": 1, \"nu\": 0.3, \"rho\": 1}}";
  CHECK(cf_scene_parse(top, "top.json", &s) == CF_ERR_SCENE && strstr(cf_last_error(), "duplicate key \"mesh\""));
  const char* ok = "{\"mesh\": \"x.msh\", \"material\": {\"E\": 1, \"nu\": 0.3, \"rho\": 1}, \"solver\": {\"threads\": 4}}";
  CHECK(cf_scene_parse(ok, "ok.json", &s) == CF_OK && s.def.threads == 4);
  cf_scene_free(&s);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/cofem_input_files_%d", (int)getpid());
  if (mkdir(dir, 0700) != 0) TEST_SKIP("cannot make a temporary folder");
  test_parse();
  test_special_files();
  test_reduction_sizes();
  test_duplicates();
  rmdir(dir);
  TEST_END();
}
