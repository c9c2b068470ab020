// strip.geo -- thin strip 0.5 x 0.05 x 0.005 m for large twisting (cofem verification part).
// Units: metres. Steel: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3 (not stored in the mesh).
//
//   x in [0, L] along the length (L = 0.5 m), y in [0, 0.05] (width), z in [0, 0.005] (thickness)
//
// Physical groups:
//   "clamp"      (surface)  the face x = 0 (clamped)
//   "tip"        (surface)  the face x = L (loaded / twisted)
//   "tip_center" (point)    (L, 0.025, 0.0025): centre of the tip face, always a mesh node
//   "solid"      (volume)   the strip
//
// Mesh: the bottom face z = 0 is meshed with triangles of size h = h0 * size_factor and extruded
// through the thickness in `layers` layers (rounded up to even), each prism split into 3 tetrahedra (a free 3-D
// Delaunay mesh of such a thin plate produces slivers). size_factor 1, layers 2 -> strip.msh:
//   gmsh strip.geo -3 -format msh41 -o strip.msh
SetFactory("OpenCASCADE");

DefineConstant[ size_factor = {1.0, Name "Parameters/size_factor"},
                layers = {2, Name "Parameters/layers through the thickness"} ];
L = 0.5; B = 0.05; H = 0.005;
h0 = 0.005;

// bottom face, with a vertex at the middle of the tip edge; extruded in two halves so that the
// tip centre (L, B/2, H/2) is a geometry vertex, hence a mesh node
Point(1) = {0, 0, 0};
Point(2) = {L, 0, 0};
Point(3) = {L, B/2, 0};
Point(4) = {L, B, 0};
Point(5) = {0, B, 0};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 5};
Line(5) = {5, 1};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
nl = Ceil(layers/2);
lo[] = Extrude {0, 0, H/2} { Surface{1}; Layers{nl}; };
up[] = Extrude {0, 0, H/2} { Surface{lo[0]}; Layers{nl}; };

e = 1e-5;
Physical Surface("clamp") = Surface In BoundingBox{-e, -e, -e, e, B + e, H + e};
Physical Surface("tip") = Surface In BoundingBox{L - e, -e, -e, L + e, B + e, H + e};
Physical Point("tip_center") = Point In BoundingBox{L - e, B/2 - e, H/2 - e, L + e, B/2 + e, H/2 + e};
Physical Volume("solid") = {lo[1], up[1]};

Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeMax = h0*size_factor;
Mesh.MeshSizeMin = 0;
Mesh.ElementOrder = 1;
Mesh.Algorithm = 5;      // Delaunay 2D
Mesh.Optimize = 1;
Mesh.RandomSeed = 1;
General.NumThreads = 1;
Mesh.SaveAll = 0;
Mesh.MshFileVersion = 4.1;
