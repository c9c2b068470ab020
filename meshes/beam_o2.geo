// beam_o2.geo -- the cantilever of beam.geo in quadratic (10-node) tetrahedra: the same geometry,
// physical groups and meshing options, then second order (straight edges: the part is a box).
//   gmsh beam_o2.geo -3 -o beam_o2.msh                                  (h = 0.05 m, 2 elements through
//                                                                        the 0.1 m depth: beam_o2.msh)
//   gmsh beam_o2.geo -3 -setnumber msh_version 2.2 -o ../tests/data/fe/tet10_beam_v22.msh
//   gmsh beam_o2.geo -3 -format inp -o ../tests/data/fe/tet10_beam.inp   (C3D10 and CPS6 sets)
// beam.geo sets Mesh.ElementOrder = 1 itself, which overrides "gmsh -order 2" on the command line;
// hence this file (and msh_version: beam.geo fixes Mesh.MshFileVersion = 4.1 too).
DefineConstant[ size_factor = {1.43, Name "Parameters/size_factor"} ];
DefineConstant[ msh_version = {4.1, Name "Parameters/msh_version"} ];
Include "beam.geo";
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.MshFileVersion = msh_version;
