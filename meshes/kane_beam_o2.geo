// kane_beam_o2.geo -- the spin-up cantilever of kane_beam.geo in quadratic (10-node) tetrahedra
// (issue 30, docs/comparison.md case 4): the same geometry, parameters and physical groups, then
// second order with straight edges (Mesh.SecondOrderLinear; the part is a box).
//   gmsh kane_beam_o2.geo -setnumber ny 1 -setnumber nz 1 -setnumber nl 40 -3 -nt 1 -format msh41 -o kane_beam_o2_40.msh
// Node sets: kane_beam.geo's, and "root_face" below.
// Committed meshes (meshes/generate.sh small): kane_beam_o2_20/40/80.msh (ny 1, nz 1, nl 20/40/80).
Include "kane_beam.geo";
// "root_face" (surface) the end face x = 0: the clamp of the cantilever's frequency check (clamping
// the whole "root" layer shortens the beam by h)
Physical Surface("root_face") = {1};
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.SecondOrderLinear = 1;
