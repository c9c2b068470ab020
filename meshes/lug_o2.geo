// lug_o2.geo -- the lug of lug.geo in quadratic (10-node) tetrahedra: the same geometry, physical
// groups and meshing options, then second order with straight edges (Mesh.SecondOrderLinear: edge
// nodes at their edges' middles, the polyhedral surface of lug.msh's kind). Edge nodes moved onto the
// curved holes made element 274 of this coarse mesh invalid (a zero Jacobian at a quadrature point),
// and cofem's quadratic element is derived for straight edges (its centroid gradients, docs/decisions.md).
//   gmsh lug_o2.geo -3 -nt 1 -format msh41 -o lug_o2.msh   (size_factor 1.6: lug_o2.msh)
// lug.geo fixes Mesh.ElementOrder = 1 itself if it sets it; this file sets 2 after including it.
DefineConstant[ size_factor = {1.6, Name "Parameters/size_factor"} ];
Include "lug.geo";
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.SecondOrderLinear = 1;
