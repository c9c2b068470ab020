/* cofem info MESH: counts, volume, element quality, sets. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"
#include "cofem/mbs_modal.h"
#include "cofem/mbs_topology.h"

/* ---- cofem info MECHANISM.json: the joint graph (cofem/mbs_topology.h) ---------------------------- */
static const char* body_label(const cfMbsModel* m, int b) { return b == CF_MBS_GROUND ? "ground" : m->body_name[b]; }

static int info_mechanism(const char* path) {
  cfMbsScene s;
  int st = cf_mbs_scene_load(path, &s);
  if (st < 0) return cf_cli_fail(st);
  cfMbsModel* m = NULL;
  cfMbsTopology* t = NULL;
  st = cf_mbs_model_create(&s.def, &m);
  if (st >= 0) st = cf_mbs_topology_create(m, &t);
  if (st < 0) {
    fprintf(stderr, "cofem: error: %s: %s (%s)\n", path, cf_last_error(), cf_status_name(st));
    cf_mbs_model_free(m);
    cf_mbs_scene_free(&s);
    return 1;
  }
  int nflex = m->nfe;
  for (int b = 0; b < m->nbody; b++) nflex += m->body_modal[b] == 1;
  printf("%s: mechanism, %d bod%s (%d flexible), %d joint%s, %d driver%s, %d force%s\n", path, t->nbody,
         t->nbody == 1 ? "y" : "ies", nflex, m->njoint, m->njoint == 1 ? "" : "s", m->ndriver,
         m->ndriver == 1 ? "" : "s", m->nforce, m->nforce == 1 ? "" : "s");
  printf("  global formulation: %d natural coordinates, %d equations (rank %d, %d redundant), %d degree%s of freedom "
         "with the drivers\n", m->nq, m->ncon, m->rank, m->nredundant, m->ndof, m->ndof == 1 ? "" : "s");
  printf("  topological formulation: %d relative coordinates, %d cut joint%s (%d closure equations), %d floating base%s\n",
         t->nz, t->ncut, t->ncut == 1 ? "" : "s", t->ncut_eq, t->nfloating, t->nfloating == 1 ? "" : "s");
  if (nflex) { /* the semi-recursive formulation carries the modal amplitudes as coordinates too */
    int namp = 0;
    for (int i = 0; i < m->nmodal; i++) namp += cf_mbs_modal_nmodes(m, i);
    printf("  (joint coordinates only: the modal bodies' %d amplitudes are coordinates of the semi-recursive formulation "
           "too, which takes modal bodies jointed at frame points; FE bodies only in the global one)\n", namp);
  }
  printf("  spanning tree from the ground (breadth first; spherical joints cut where a loop has a choice):\n");
  for (int i = 0; i < t->nbody; i++) {
    int b = t->order[i], j = t->parent_joint[b];
    if (j == CF_MBS_FLOATING)
      printf("    %*s%s <- ground by a floating joint (6 coordinates: z[%d..%d])\n", 2 * (t->depth[b] - 1), "",
             body_label(m, b), t->z0[b], t->z0[b] + 5);
    else if (t->nz_body[b] == 0)
      printf("    %*s%s <- %s by joint '%s' (%s, no coordinates)\n", 2 * (t->depth[b] - 1), "", body_label(m, b),
             body_label(m, t->parent[b]), m->joint_name[j], cf_mbs_joint_type_name(m->joint_type[j]));
    else if (t->nz_body[b] == 1)
      printf("    %*s%s <- %s by joint '%s' (%s, z[%d])\n", 2 * (t->depth[b] - 1), "", body_label(m, b),
             body_label(m, t->parent[b]), m->joint_name[j], cf_mbs_joint_type_name(m->joint_type[j]), t->z0[b]);
    else
      printf("    %*s%s <- %s by joint '%s' (%s, z[%d..%d])\n", 2 * (t->depth[b] - 1), "", body_label(m, b),
             body_label(m, t->parent[b]), m->joint_name[j], cf_mbs_joint_type_name(m->joint_type[j]), t->z0[b],
             t->z0[b] + t->nz_body[b] - 1);
  }
  printf("  cut joints:");
  if (!t->ncut) printf(" none (an open tree)");
  for (int j = 0; j < m->njoint; j++)
    if (t->role[j] == CF_MBS_ROLE_CUT)
      printf(" '%s' (%s, %s-%s, %d equations)", m->joint_name[j], cf_mbs_joint_type_name(m->joint_type[j]),
             body_label(m, m->joint_body[2 * j]), body_label(m, m->joint_body[2 * j + 1]), m->joint_ncon[j]);
  printf("\n");
  printf("  mobility (Grubler-Kutzbach): spatial 6 n - sum c = %d", t->mobility_spatial);
  if (t->planar) printf(", planar 3 n - 2 (revolute + prismatic) - ... = %d (the joint axes make it planar)", t->mobility_planar);
  printf("; %d driver%s: %d left\n", t->ndriver, t->ndriver == 1 ? "" : "s", t->mobility - t->ndriver);
  printf("  structural groups (paper 001), in solve order:\n");
  for (int g = 0; g < t->ngroup; g++) {
    printf("    %d. %-10s", g + 1, t->group_kind[g]);
    for (int k = t->group_ptr[g]; k < t->group_ptr[g + 1]; k++) printf(" %s", body_label(m, t->group_body[k]));
    if (t->input_chosen[g]) printf("  (undriven: chosen as an input)");
    printf("\n");
  }
  cf_mbs_topology_free(t);
  cf_mbs_model_free(m);
  cf_mbs_scene_free(&s);
  return 0;
}

/* ---- cofem info ------------------------------------------------------------------------------- */
int cf_cmd_info(int argc, char** argv) {
  if (argc != 3) return cf_cli_usage();
  if (cf_mbs_scene_is_mechanism(argv[2])) return info_mechanism(argv[2]);
  cfMesh mesh;
  int st = cf_mesh_read(argv[2], &mesh);
  if (st < 0) return cf_cli_fail(st);
  cfMeshQuality q;
  cf_mesh_quality(&mesh, &q);
  const int quadratic = cf_mesh_npe(&mesh) == 10;
  printf("%s: %d nodes, %d tetrahedra%s, %d boundary triangles\n", argv[2], mesh.nnode, mesh.ntet,
         quadratic ? " (quadratic, 10 nodes)" : "", mesh.ntri);
  if (mesh.note[0]) printf("  note: %s\n", mesh.note);
  printf("  bounding box [%g, %g] x [%g, %g] x [%g, %g]\n", q.bbox_min[0], q.bbox_max[0], q.bbox_min[1],
         q.bbox_max[1], q.bbox_min[2], q.bbox_max[2]);
  printf("  volume %.6g (element volumes %.3g .. %.3g)\n", q.volume, q.min_elem_volume, q.max_elem_volume);
  printf("  dihedral angles %.2f .. %.2f deg, max aspect ratio %.2f%s\n", q.min_dihedral_deg, q.max_dihedral_deg,
         q.max_aspect_ratio, quadratic ? " (of the corner tetrahedra)" : "");
  for (int i = 0; i < mesh.nnset; i++) printf("  node set %-16s %6d nodes\n", mesh.nsets[i].name, mesh.nsets[i].count);
  for (int i = 0; i < mesh.neset; i++) printf("  element set %-13s %6d elements\n", mesh.esets[i].name, mesh.esets[i].count);
  cf_mesh_free(&mesh);
  return 0;
}
