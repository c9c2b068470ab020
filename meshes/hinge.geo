// hinge.geo -- sliding-door hinge bracket / roller arm (cofem test part, cf. paper Sec. 4,
// Figs. 2-4: "fixed nodes over the surface of the holes for the hinge pin", force at the roller).
// Units: metres (dimensions below written as mm*value). Steel: E = 210 GPa, nu = 0.3,
// rho = 7850 kg/m^3 (the material is not stored in the mesh; see README.md).
//
// Geometry (x = along the arm, y = across, z = up); all plate parts are 10 mm thick:
//   base plate   x in [0,70], y in [-30,30], z in [0,10], outer corners (x = 0) rounded R 12;
//                two hinge-pin holes d = 12 mm at (20, +-17) mm
//   arm          30 mm wide (y in [-15,15]), 10 mm thick, leaves the base plate at x = 70 (R 8
//                fillets in the two concave corners) and
//                runs to x = 100, a 45 deg joggle lifts it by 30 mm (x 100..130), then it runs
//                level (z in [30,40]) to the roller mount at x = 210
//   roller mount round pad d = 40 mm (z in [30,40]) centred at (210, 0) with an axle stub
//                d = 16 mm, 20 mm high (z in [40,60]) for the guide-rail roller
//   overall      230 x 60 x 60 mm; arm length from the base plate to the axle: 140 mm (150 to the
//                pad's end)
//
// Physical groups:
//   "support" (surface)  the two hinge-pin hole cylinders (fixed)
//   "load"    (surface)  the axle stub: its cylinder and end face (roller contact / load)
//   "probe"   (point)    (210, 0, 60) mm: centre of the axle end face, the load point (a mesh node)
//   "solid"   (volume)   the whole part
//
// Mesh size: uniform h = h0 * size_factor (h0 tuned to the paper's 3342 tets / 1288 nodes);
//   gmsh hinge.geo -setnumber size_factor 0.5 -3 -format msh41 -o hinge_x.msh
SetFactory("OpenCASCADE");

DefineConstant[ size_factor = {1.0, Name "Parameters/size_factor"} ];
mm = 1e-3;
h0 = 5.5*mm;   // tuned: 3496 tets / 1228 nodes at size_factor = 1 (paper: 3342 / 1288)

T = 10*mm;                     // plate thickness
// ---- base plate with rounded outer corners
Lb = 70*mm; Wb = 60*mm; rc = 12*mm;
Box(1) = {0, -Wb/2, 0, Lb, Wb, T};
e = 1e-5;
corner() = Curve In BoundingBox{-e, -Wb/2 - e, -e, e, Wb/2 + e, T + e};   // x = 0 edges
vert() = {};
For i In {0 : #corner() - 1}
  bb() = BoundingBox Curve{corner(i)};
  If (Fabs(bb(5) - bb(2)) > T/2)   // vertical edge
    vert() += corner(i);
  EndIf
EndFor
base() = Fillet{1}{vert()}{rc};

// ---- arm: bent plate, profile in the x-z plane at y = -wa/2, extruded across
wa = 30*mm;
x1 = 100*mm; dz = 30*mm; x3 = 210*mm; x0 = Lb - 10*mm;
k = T*Tan(Pi/8);               // offset of the bend corners for a 45 deg joggle
Point(1001) = {x0,        -wa/2, 0};
Point(1002) = {x1,        -wa/2, 0};
Point(1003) = {x1 + dz,   -wa/2, dz};
Point(1004) = {x3,        -wa/2, dz};
Point(1005) = {x3,        -wa/2, dz + T};
Point(1006) = {x1 + dz - k, -wa/2, dz + T};
Point(1007) = {x1 - k,    -wa/2, T};
Point(1008) = {x0,        -wa/2, T};
For i In {1001 : 1007}
  Line(i) = {i, i + 1};
EndFor
Line(1008) = {1008, 1001};
Curve Loop(1001) = {1001 : 1008};
Plane Surface(1001) = {1001};
arm[] = Extrude {0, wa, 0} { Surface{1001}; };

// ---- roller mount: pad and axle stub
rp = 20*mm; ra = 8*mm; ha = 20*mm;
Cylinder(1010) = {x3, 0, dz, 0, 0, T, rp};
Cylinder(1011) = {x3, 0, dz + T, 0, 0, ha, ra};

part() = BooleanUnion{ Volume{base()}; Delete; }{ Volume{arm[1], 1010, 1011}; Delete; };

// ---- fillets R 8 in the two concave corners where the arm leaves the base plate
rj = 8*mm;
jn() = Curve In BoundingBox{Lb - e, -wa/2 - e, -e, Lb + e, wa/2 + e, T + e};
jv() = {};
For i In {0 : #jn() - 1}
  bb() = BoundingBox Curve{jn(i)};
  If (Fabs(bb(5) - bb(2)) > T/2)
    jv() += jn(i);
  EndIf
EndFor
part() = Fillet{part()}{jv()}{rj};

// ---- hinge-pin holes
rh = 6*mm; xh = 20*mm; yh = 17*mm;
Cylinder(1020) = {xh,  yh, -1*mm, 0, 0, T + 2*mm, rh};
Cylinder(1021) = {xh, -yh, -1*mm, 0, 0, T + 2*mm, rh};
part() = BooleanDifference{ Volume{part()}; Delete; }{ Volume{1020, 1021}; Delete; };

// ---- probe vertex: centre of the axle end face
ztop = dz + T + ha;
Point(1100) = {x3, 0, ztop};
part() = BooleanFragments{ Volume{part()}; Delete; }{ Point{1100}; Delete; };

// ---- physical groups (by bounding boxes)
sup() = Surface In BoundingBox{xh - rh - e, -yh - rh - e, -e, xh + rh + e, yh + rh + e, T + e};
ld()  = Surface In BoundingBox{x3 - ra - e, -ra - e, dz + T - e, x3 + ra + e, ra + e, ztop + e};
pr()  = Point In BoundingBox{x3 - e, -e, ztop - e, x3 + e, e, ztop + e};
Physical Surface("support") = {sup()};
Physical Surface("load") = {ld()};
Physical Point("probe") = {pr()};
Physical Volume("solid") = {Volume{:}};

// ---- mesh settings: uniform size, linear tets, deterministic
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeFromCurvature = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeMax = h0*size_factor;
Mesh.MeshSizeMin = 0;
Mesh.ElementOrder = 1;
Mesh.Algorithm = 5;      // Delaunay 2D
Mesh.Algorithm3D = 1;    // Delaunay 3D (deterministic; HXT is not, even single-threaded)
Mesh.Optimize = 1;
Mesh.RandomSeed = 1;
General.NumThreads = 1;
Mesh.SaveAll = 0;
Mesh.MshFileVersion = 4.1;
