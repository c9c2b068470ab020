// beam.geo -- cantilever box beam 1.0 x 0.1 x 0.1 m (cofem verification part).
// Units: metres. Steel: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3 (not stored in the mesh).
//
//   x in [0, L] along the length (L = 1.0 m), y in [0, 0.1], z in [0, 0.1]
//
// Physical groups:
//   "clamp"      (surface)  the face x = 0 (clamped)
//   "tip"        (surface)  the face x = L (loaded)
//   "tip_center" (point)    (L, 0.05, 0.05): centre of the tip face, always a mesh node
//   "solid"      (volume)   the beam
//
// Mesh size: uniform h = h0 * size_factor; size_factor 1 -> ~2k tets (beam_coarse.msh),
// 0.55 -> ~10k tets (beam_medium.msh):
//   gmsh beam.geo -setnumber size_factor 0.55 -3 -format msh41 -o beam_medium.msh
SetFactory("OpenCASCADE");

DefineConstant[ size_factor = {1.0, Name "Parameters/size_factor"} ];
L = 1.0; B = 0.1; H = 0.1;
h0 = 0.035;

Box(1) = {0, 0, 0, L, B, H};
// a vertex at the centre of the tip face, so that a node lies there
Point(100) = {L, B/2, H/2};
v() = BooleanFragments{ Volume{1}; Delete; }{ Point{100}; Delete; };

e = 1e-5;
Physical Surface("clamp") = Surface In BoundingBox{-e, -e, -e, e, B + e, H + e};
Physical Surface("tip") = Surface In BoundingBox{L - e, -e, -e, L + e, B + e, H + e};
Physical Point("tip_center") = Point In BoundingBox{L - e, B/2 - e, H/2 - e, L + e, B/2 + e, H/2 + e};
Physical Volume("solid") = {Volume{:}};

Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeMax = h0*size_factor;
Mesh.MeshSizeMin = 0;
Mesh.ElementOrder = 1;
Mesh.Algorithm = 5;      // Delaunay 2D
Mesh.Algorithm3D = 1;    // Delaunay 3D (deterministic)
Mesh.Optimize = 1;
Mesh.RandomSeed = 1;
General.NumThreads = 1;
Mesh.SaveAll = 0;
Mesh.MshFileVersion = 4.1;
