/* libFuzzer target: the scene reader (JSON). Every input goes through cf_scene_parse; when it
 * parses and names one of the meshes this target provides (box.msh, box.inp, or the absent
 * absent.msh, all beside the scene file) it is also loaded with cf_scene_load (mesh read, every
 * named set checked), built into a model (material, time step, supports) and its load forces are
 * evaluated. Other mesh paths are not followed, so the fuzzer never reads files of its own
 * choosing. Errors must name the scene file. */
#include "fuzz_common.h"

/* Two tetrahedra with the sets the corpus scenes use: 2.2 with named physical groups. */
static const char kBoxMsh[] =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n2 1 \"support\"\n2 2 \"load\"\n"
    "0 3 \"probe\"\n3 4 \"body\"\n$EndPhysicalNames\n$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n"
    "4 0 0 1\n5 0 0 -1\n$EndNodes\n$Elements\n5\n1 2 2 1 1 1 2 3\n2 2 2 2 2 1 2 4\n3 15 2 3 3 4\n"
    "4 4 2 4 1 1 2 3 4\n5 4 2 4 1 1 3 2 5\n$EndElements\n";

static void cff_scene_setup(char* msh, char* inp, char* absent, size_t n) {
  static int done;
  snprintf(absent, n, "%s/absent.msh", cff_dir());
  snprintf(msh, n, "%s/box.msh", cff_dir());
  snprintf(inp, n, "%s/box.inp", cff_dir());
  if (done) return;
  if (cff_write("box.msh", kBoxMsh, sizeof kBoxMsh - 1, msh, n)) abort();
  /* a 2x1x1 box with node sets XMIN, XMAX, YMIN, YMAX, ZMIN, ZMAX (upper-cased by the writer) */
  cfMesh box;
  if (cf_mesh_box(2, 1, 1, 0.2, 0.1, 0.1, &box) != CF_OK) abort();
  char tmp[600];
  if (cff_write("box.inp", "", 0, tmp, sizeof tmp)) abort();
  FILE* f = fopen(inp, "w");
  if (!f || cf_mesh_write_inp(&box, f) != CF_OK) abort();
  fclose(f);
  cf_mesh_free(&box);
  done = 1;
}

static int cff_scene_one(const uint8_t* data, size_t size) {
  char msh[600], inp[600], absent[600], path[600];
  cff_scene_setup(msh, inp, absent, sizeof msh);
  char* json = malloc(size + 1);
  if (!json) return 0;
  if (size) memcpy(json, data, size);
  json[size] = '\0';
  if (cff_write("scene.json", data, size, path, sizeof path)) {
    free(json);
    return 0;
  }
  cfScene* s = malloc(sizeof *s); /* large: keep it off the stack */
  if (!s) {
    free(json);
    return 0;
  }
  cf_clear_error();
  int st = cf_scene_parse(json, path, s);
  free(json);
  if (st < 0) {
    if (st < CF_ERR_UNSUPPORTED || !strstr(cf_last_error(), path))
      cff_die("%s: parse error %d without the file name", path, st);
    free(s);
    return 0;
  }
  int follow = !strcmp(s->mesh_path, msh) || !strcmp(s->mesh_path, inp) || !strcmp(s->mesh_path, absent);
  cf_scene_free(s);
  if (!follow) {
    free(s);
    return 0;
  }
  cf_clear_error();
  st = cf_scene_load(path, s);
  if (st < 0) {
    if (st < CF_ERR_UNSUPPORTED || !strstr(cf_last_error(), path))
      cff_die("%s: load error %d without the file name", path, st);
    free(s);
    return 0;
  }
  for (int i = 0; i < s->nfix; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->fix[i].set)) cff_die("fixed set %s accepted", s->fix[i].set);
  for (int i = 0; i < s->nload; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->load[i].set)) cff_die("load set %s accepted", s->load[i].set);
  for (int i = 0; i < s->nprobe; i++)
    if (!cf_mesh_find_nset(&s->mesh, s->probe[i])) cff_die("probe set %s accepted", s->probe[i]);
  cfModel* m = NULL;
  cfData* d = NULL;
  cf_clear_error();
  st = cf_scene_build(s, &m, &d);
  if (st < 0) {
    if (m || d) cff_die("cf_scene_build failed but returned a model or data");
  } else {
    double* f = malloc(sizeof(double) * (size_t)m->ndof);
    const double ts[4] = {0.0, 0.5 * s->t_end, s->t_end, -1.0};
    for (int k = 0; f && k < 4; k++) cf_scene_forces(s, ts[k], 1.0, f);
    for (int p = 0; p < s->nprobe; p++) {
      double u[3];
      cf_set_displacement(&s->mesh, cf_mesh_find_nset(&s->mesh, s->probe[p]), d->x, u);
      if (u[0] != 0 || u[1] != 0 || u[2] != 0) cff_die("probe %s moved at rest", s->probe[p]);
    }
    free(f);
    cf_data_free(d);
    cf_model_free(m);
  }
  cf_scene_free(s);
  free(s);
  return 0;
}

#ifndef CFF_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return cff_scene_one(data, size); }
#endif
