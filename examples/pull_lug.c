/* pull_lug: the smallest program on libcofem. Loads a scene (scenes/lug_pull.json), runs it to its
 * end with an extra force on one node of the "load" set, and prints the scene's probes, the
 * pulled node's displacement and, to compare, the linear static solution under the forces left
 * at the end (the scene's own load is released at 0.6 s of 1 s: the extra force and gravity).
 *   cc pull_lug.c $(pkg-config --cflags --libs cofem) -o pull_lug
 *   ./pull_lug share/cofem/scenes/lug_pull.json [force_y_N] */
#include <stdio.h>
#include <stdlib.h>

#include <cofem/cofem.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SCENE.json [FORCE_Y_N]\n  (cofem %s, demo scenes in %s/scenes)\n", argv[0],
            cf_version(), cf_data_dir());
    return 2;
  }
  double pull[3] = {0, argc > 2 ? atof(argv[2]) : 1e5, 0};
  cfScene scene;
  cfModel* m = NULL;
  cfData* d = NULL;
  int st = cf_scene_load(argv[1], &scene);
  if (st < 0) return fprintf(stderr, "%s\n", cf_last_error()), 1;
  const cfNodeSet* load = cf_mesh_find_nset(&scene.mesh, "load");
  if (!load || (st = cf_scene_build(&scene, &m, &d)) < 0) {
    fprintf(stderr, "%s\n", load ? cf_last_error() : "the scene's mesh has no node set 'load'");
    cf_scene_free(&scene);
    return 1;
  }
  int node = load->nodes[0];
  long steps = (long)(scene.t_end / scene.def.dt + 0.5);
  for (long k = 0; k < steps && st >= 0; k++) {
    cf_scene_forces(&scene, d->t + scene.def.dt, 1.0, d->f_ext); /* the scene's loads at t + dt */
    for (int i = 0; i < 3; i++) d->f_ext[3 * node + i] += pull[i];
    st = cf_step(m, d);                                            /* < 0 error, > 0 warning */
  }
  double u[3], u_lin[3];
  for (int i = 0; i < 3; i++) u[i] = d->x[3 * node + i] - m->X[3 * node + i];
  if (st >= 0) {
    for (int p = 0; p < scene.nprobe; p++) {
      double up[3];
      cf_set_displacement(&scene.mesh, cf_mesh_find_nset(&scene.mesh, scene.probe[p]), d->x, up);
      printf("t %.3f s probe %s u %.9g %.9g %.9g\n", d->t, scene.probe[p], up[0], up[1], up[2]);
    }
    /* linear static estimate: K u = f_pull + M g */
    double* f = calloc(m->ndof, sizeof(double));
    for (int n = 0; n < m->nnode; n++)
      for (int i = 0; i < 3; i++) f[3 * n + i] = m->node_mass[n] * scene.def.gravity[i] + (n == node ? pull[i] : 0);
    cf_data_reset(m, d);
    st = cf_linear_static(m, d, f);
    for (int i = 0; i < 3; i++) u_lin[i] = d->x[3 * node + i] - m->X[3 * node + i];
    free(f);
  }
  if (st >= 0) {
    printf("pulled node %d force %g %g %g N\n", scene.mesh.node_id[node], pull[0], pull[1], pull[2]);
    printf("pulled node u %.9g %.9g %.9g\n", u[0], u[1], u[2]);
    printf("linear static u %.9g %.9g %.9g\n", u_lin[0], u_lin[1], u_lin[2]);
  } else {
    fprintf(stderr, "%s: %s\n", argv[1], cf_last_error());
  }
  cf_data_free(d);
  cf_model_free(m);
  cf_scene_free(&scene);
  return st < 0;
}
