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

/* ---- cofem info ------------------------------------------------------------------------------- */
int cf_cmd_info(int argc, char** argv) {
  if (argc != 3) return cf_cli_usage();
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
