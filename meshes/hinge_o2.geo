// hinge_o2.geo -- the hinge of hinge.geo in quadratic (10-node) tetrahedra: the same geometry, physical
// groups and meshing options, then second order with straight edges (Mesh.SecondOrderLinear: edge
// nodes at their edges' middles, the polyhedral surface of hinge.msh's kind), as lug_o2.geo and for
// its reasons: cofem's quadratic element is derived for straight edges (docs/decisions.md). For the
// accuracy harness against CalculiX C3D10 (scenes/accuracy/hinge_o2.json).
//   gmsh hinge_o2.geo -3 -nt 1 -format msh41 -o hinge_o2.msh   (size_factor 1.6: hinge_o2.msh)
// hinge.geo fixes Mesh.ElementOrder = 1 itself if it sets it; this file sets 2 after including it.
DefineConstant[ size_factor = {1.6, Name "Parameters/size_factor"} ];
Include "hinge.geo";
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.SecondOrderLinear = 1;
