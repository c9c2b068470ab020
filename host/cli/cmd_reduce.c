/* cofem reduce: Craig-Bampton reduction of a scene's part (docs/craig-bampton.md).
 *
 *   cofem reduce SCENE [--interface SET ...] [--modes N] [--out FILE] [--clamp]
 *                      [--damping Z|adams] [--no-orthonormalise] [--dense] [--geometric] [--quiet]
 *                      [--interface-point SET:rigid|averaging[:x,y,z,rx,ry,rz] ...]
 *
 * The mesh and material come from the scene. Interface nodes: the sets named by --interface
 * (repeatable, or comma-separated) and, unless --clamp, the scene's "fixed" sets (a support of
 * the FE scene is where the part attaches in a mechanism). With --clamp the scene's supports
 * stay fixed (zero in every mode). Prints the counts, the time of each phase and the
 * frequencies; --out writes the reduction (docs/reduction-format.md) for reuse.
 * --interface-point reduces a set as one point with 6 DOFs (docs/craig-bampton.md, "Interface
 * points"), its static modes those of the listed DOFs (default all six). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cofem/cofem.h"
#include "cofem/mbs.h"
#include "cofem/modal_part.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* the usage and what each option means: the command table's (cli_common.c), one text for
 * cofem reduce --help and the usage errors */
static void usage(FILE* f) { cf_cli_print_usage(f, "reduce"); }

/* SET:rigid|averaging[:x,y,...] */
static int parse_point_arg(const char* v, cfPartPoint* p) {
  static const char* dof_names[6] = {"x", "y", "z", "rx", "ry", "rz"};
  char buf[512];
  snprintf(buf, sizeof buf, "%s", v);
  memset(p, 0, sizeof *p);
  char* c1 = strchr(buf, ':');
  char* c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (c1) *c1 = '\0';
  if (c2) *c2 = '\0';
  if (!c1 || !buf[0]) {
    fprintf(stderr, "cofem: error: --interface-point '%s': give SET:rigid or SET:averaging[:DOFS]\n", v);
    return -1;
  }
  snprintf(p->set, sizeof p->set, "%s", buf);
  if (!strcmp(c1 + 1, "rigid")) p->kind = CF_POINT_RIGID;
  else if (!strcmp(c1 + 1, "averaging")) p->kind = CF_POINT_AVERAGING;
  else {
    fprintf(stderr, "cofem: error: --interface-point '%s': kind '%s': use rigid or averaging\n", v, c1 + 1);
    return -1;
  }
  for (char* tok = c2 ? strtok(c2 + 1, ",") : NULL; tok; tok = strtok(NULL, ",")) {
    int a = -1;
    for (int q = 0; q < 6; q++)
      if (!strcmp(tok, dof_names[q])) a = q;
    if (a < 0) {
      fprintf(stderr, "cofem: error: --interface-point '%s': DOF '%s': use x, y, z, rx, ry, rz\n", v, tok);
      return -1;
    }
    p->dofs |= 1u << a;
  }
  if (c2 && !p->dofs) {
    fprintf(stderr, "cofem: error: --interface-point '%s': no DOFs after the second ':'\n", v);
    return -1;
  }
  return 0;
}

int cf_cmd_reduce(int argc, char** argv) {
  /* argv[0] "cofem", argv[1] "reduce" (or argv[0] "reduce"): skip to the arguments */
  int a0 = 1;
  if (argc > 1 && !strcmp(argv[1], "reduce")) a0 = 2;
  const char* scene_path = NULL;
  const char* out = NULL;
  char sets[CF_SCENE_MAX_ITEMS * 4][CF_NAME_MAX];
  int nsets = 0, clamp = 0, quiet = 0, npoint = 0;
  cfPartPoint points[CF_SCENE_MAX_ITEMS];
  cfReduceOptions opt = cf_default_reduce_options();
  for (int i = a0; i < argc; i++) {
    const char* s = argv[i];
    const char* v = NULL;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) { usage(stdout); return 0; }
    else if (!strcmp(s, "--interface")) {
      if (!(v = cf_cli_arg_value(argc, argv, &i))) return 2;
      size_t vl = strlen(v); /* strtok would skip empty names: "" or "a,,b" must not mean fewer sets */
      if (!vl || v[0] == ',' || v[vl - 1] == ',' || strstr(v, ",,")) {
        fprintf(stderr, "cofem: error: --interface '%s': an empty node-set name (give SET or SET1,SET2)\n", v);
        return 2;
      }
      char buf[1024];
      snprintf(buf, sizeof buf, "%s", v);
      for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (nsets == (int)(sizeof sets / sizeof sets[0])) { fprintf(stderr, "cofem: error: --interface: too many interface sets\n"); return 2; }
        snprintf(sets[nsets++], CF_NAME_MAX, "%s", tok);
      }
    } else if (!strcmp(s, "--interface-point")) {
      if (!(v = cf_cli_arg_value(argc, argv, &i))) return 2;
      if (npoint == CF_SCENE_MAX_ITEMS) { fprintf(stderr, "cofem: error: --interface-point: too many points\n"); return 2; }
      if (parse_point_arg(v, &points[npoint]) < 0) return 2;
      npoint++;
    } else if (!strcmp(s, "--modes")) {
      int rc = cf_cli_opt_int(argc, argv, &i, 0, 100000, &opt.nmodes);
      if (rc) return rc;
    } else if (!strcmp(s, "--out")) {
      if (!(out = cf_cli_arg_value(argc, argv, &i))) return 2;
    } else if (!strcmp(s, "--damping")) {
      if (!(v = cf_cli_arg_value(argc, argv, &i))) return 2;
      if (!strcmp(v, "adams")) opt.damping = -1;
      else if (cf_parse_double("--damping", v, 0, 100, &opt.damping) < 0) {
        fprintf(stderr, "cofem: error: %s, or 'adams'\n", cf_last_error());
        return 2;
      }
    } else if (!strcmp(s, "--clamp")) clamp = 1;
    else if (!strcmp(s, "--no-orthonormalise") || !strcmp(s, "--no-orthonormalize")) opt.orthonormalise = 0;
    else if (!strcmp(s, "--dense")) opt.modal.method = CF_MODAL_DENSE;
    else if (!strcmp(s, "--geometric")) opt.geometric = 1;
    else if (!strcmp(s, "--quiet")) quiet = 1;
    else if (s[0] == '-' || scene_path) return cf_cli_bad_arg(s); /* named first, then the usage; 2 */
    else scene_path = s;
  }
  if (!scene_path) { usage(stderr); return 2; }
  if (cf_mbs_scene_is_mechanism(scene_path) > 0) { /* its "bodies" would be an unknown key of an FE scene */
    fprintf(stderr, "cofem reduce: %s is a mechanism (it has \"bodies\"): reduce takes an FE scene; a mechanism's "
            "modal bodies are reduced when it is run (\"formulation\": \"modal\")\n", scene_path);
    return 2;
  }

  const char* setp[CF_SCENE_MAX_ITEMS * 4];
  for (int i = 0; i < nsets; i++) setp[i] = sets[i];
  cfModalPart part;
  int rc = 1;
  if (cf_modal_part_load_points(NULL, scene_path, setp, nsets, points, npoint,
                                clamp ? CF_PART_SUPPORTS_CLAMP : CF_PART_SUPPORTS_INTERFACE, &opt, NULL, &part) < 0) {
    fprintf(stderr, "cofem reduce: %s\n", cf_last_error());
    goto done;
  }
  const cfModel* m = part.model;
  const cfReduction r = part.red;
  const cfScene sc = part.scene;
  if (!clamp)
    for (int i = 0; i < sc.nfix && nsets < (int)(sizeof sets / sizeof sets[0]); i++) snprintf(sets[nsets++], CF_NAME_MAX, "%s", sc.fix[i].set);
  double t_load = part.t_load;
  printf("cofem reduce %s: %d nodes, %d elements, %s mass, %d fixed DOFs\n", scene_path, m->nnode, m->ntet,
         m->def.consistent_mass ? "consistent" : "lumped", m->nfixed);
  printf("  interface: %d nodes (", r.nbnode);
  for (int i = 0; i < nsets; i++) printf("%s%s", i ? ", " : "", sets[i]);
  printf(") -> %d constraint modes; %d fixed-interface normal modes", r.nb, r.nk);
  for (int k = 0; k < r.npoint; k++)
    printf("; point %s (%s, %d nodes, at %.6g %.6g %.6g)", points[k].set, r.points[k].kind == CF_POINT_RIGID ? "rigid" : "averaging",
           r.points[k].nnode, r.points[k].x[0], r.points[k].x[1], r.points[k].x[2]);
  if (r.nk > 0) printf(" (%.2f .. %.2f Hz)", sqrt(fabs(r.fixed_omega2[0])) / (2 * M_PI), sqrt(fabs(r.fixed_omega2[r.nk - 1])) / (2 * M_PI));
  printf("\n  basis: %d modes, %s, %d rigid-body; mass %.6g kg, centre of mass (%.6g, %.6g, %.6g) m\n", r.n,
         r.orthonormal ? "orthonormalised" : "not orthonormalised", r.nrigid, r.mass, r.c[0] / r.mass, r.c[1] / r.mass,
         r.c[2] / r.mass);
  printf("  time: %.3f s (load %.3f, constraint modes %.3f, normal modes %.3f, projection %.3f, "
         "orthonormalisation %.3f, invariants %.3f)\n", r.t_total + t_load, t_load, r.t_constraint, r.t_normal,
         r.t_project, r.t_ortho, r.t_invariants);
  if (r.Kg) printf("  geometric stiffness: %d unit load cases, %.3f s\n", r.nkg, r.t_geometric);
  if (!quiet) {
    printf("  mode  frequency [Hz]   damping%s\n", r.Kg ? "   Kg/W^2 about x, y, z [1/s^2 per (rad/s)^2]" : "");
    for (int i = 0; i < r.n; i++) {
      printf("  %4d  %14.6f  %8.4f", i + 1, i < r.nrigid ? 0.0 : cf_reduction_freq_hz(&r, i), r.zeta[i]);
      /* a unit rate about axis a: lambda_bb = 1 for b != a (the centrifugal load), so the mode's
       * stiffening is the sum of the other two diagonal cases (its Southwell coefficient when
       * mass-normalised) */
      for (int a = 0; a < 3 && r.Kg; a++) {
        double k = 0;
        for (int b = 0; b < 3; b++)
          if (b != a) k += r.Kg[((size_t)(4 * b) * r.n + i) * r.n + i];
        printf("  %10.4g", k);
      }
      printf("%s\n", i < r.nrigid ? "  rigid body" : "");
    }
  }
  if (out) {
    if (cf_reduction_write(&r, out) < 0) { fprintf(stderr, "cofem reduce: %s\n", cf_last_error()); goto done; }
    printf("  written to %s\n", out);
  }
  rc = 0;
done:
  cf_modal_part_free(&part);
  return rc;
}
