// flex_rod_o2.geo -- the connecting rod of flex_rod.geo in quadratic (10-node) tetrahedra (issue 30,
// docs/comparison.md case 1): the same geometry, parameters (n, nl) and physical groups, then second
// order with straight edges (Mesh.SecondOrderLinear; the rod is a box).
//   gmsh flex_rod_o2.geo -setnumber n 1 -setnumber nl 40 -3 -nt 1 -format msh41 -o flex_rod_o2_n1_40.msh
// Committed meshes (meshes/generate.sh small): flex_rod_o2_n1_20/40/80.msh, flex_rod_o2_n2_40.msh.
Include "flex_rod.geo";
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.SecondOrderLinear = 1;
