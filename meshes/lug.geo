// lug.geo -- bolted lifting lug (cofem test part, cf. paper Sec. 5, Fig. 5).
// Units: metres (all dimensions below are written as mm*value). Steel: E = 210 GPa, nu = 0.3,
// rho = 7850 kg/m^3 (the material is not stored in the mesh; see README.md).
//
// Geometry (x = along the flange, y = thickness of the lug plate, z = up):
//   base flange  120 x 40 x 22 mm, x in [-60,60], y in [-20,20], z in [0,22]
//                two bolt holes d = 11 mm (M10 clearance) at x = +-45 mm, y = 0
//   lug plate    60 mm wide (x in [-30,30]), 15 mm thick (y in [-7.5,7.5]), rising from the flange;
//                rounded top of radius 30 mm around the eye centre (0, 0, 70) -> total height 100 mm
//   eye          hole d = 20 mm at (0, *, 70), with a boss d = 40 mm, 3 mm proud on each face
//                (boss thickness 21 mm)
//
// Physical groups:
//   "support" (surface)  the two bolt-hole cylinders: the lug is clamped at its bolts
//   "base"    (surface)  the flange underside z = 0 (alternative support: welded/bonded base)
//   "load"    (surface)  upper half (z >= 70 mm) of the eye hole, where a pin pulls upwards
//   "probe"   (point)    (0, 0, 100 mm): top of the eye on the mid-plane y = 0 (a mesh node)
//   "solid"   (volume)   the whole part
//
// Mesh size: uniform h = h0 * size_factor (h0 tuned towards the paper's 1453 tets / 417 nodes);
//   gmsh lug.geo -setnumber size_factor 0.5 -3 -format msh41 -o lug_x.msh
SetFactory("OpenCASCADE");

DefineConstant[ size_factor = {1.0, Name "Parameters/size_factor"},
                t_mm = {15, Name "Parameters/plate thickness (mm)"},
                Tf_mm = {22, Name "Parameters/flange thickness (mm)"},
                Wf_mm = {40, Name "Parameters/flange width (mm)"},
                tb_mm = {3, Name "Parameters/boss height per face (mm)"} ];
mm = 1e-3;
h0 = 10.6*mm;  // tuned: 1298 tets / 469 nodes at size_factor = 1 (paper: 1453 / 417)

// ---- lug plate: profile in the x-z plane at y = -t/2, extruded through the thickness
t  = t_mm*mm;    // plate thickness
W  = 60*mm;    // plate width
zc = 70*mm;    // eye centre height
R  = W/2;      // rounded top radius
z0 = 5*mm;     // plate starts inside the flange (overlap for the fusion)
y0 = -t/2;
Point(1) = {-W/2, y0, z0};
Point(2) = { W/2, y0, z0};
Point(3) = { W/2, y0, zc};
Point(4) = { 0,   y0, zc + R};
Point(5) = {-W/2, y0, zc};
Point(6) = { 0,   y0, zc};
Line(1) = {1, 2};
Line(2) = {2, 3};
Circle(3) = {3, 6, 4};
Circle(4) = {4, 6, 5};
Line(5) = {5, 1};
Curve Loop(1) = {1, 2, 3, 4, 5};
Plane Surface(1) = {1};
plate[] = Extrude {0, t, 0} { Surface{1}; };

// ---- boss around the eye
tb = tb_mm*mm;
Rb = 20*mm;
Cylinder(10) = {0, -t/2 - tb, zc, 0, t + 2*tb, 0, Rb};

// ---- base flange
Lf = 120*mm; Wf = Wf_mm*mm; Tf = Tf_mm*mm;
Box(11) = {-Lf/2, -Wf/2, 0, Lf, Wf, Tf};

part() = BooleanUnion{ Volume{plate[1]}; Delete; }{ Volume{10, 11}; Delete; };

// ---- eye hole: a cylinder whose side is made of 4 quarter faces, so that the upper half of
// the hole surface is a separate pair of faces after the boolean difference
re = 10*mm;
yh = -t/2 - tb - 1*mm;
Point(101) = {0, yh, zc};
Point(102) = { re, yh, zc};
Point(103) = {0, yh, zc + re};
Point(104) = {-re, yh, zc};
Point(105) = {0, yh, zc - re};
Circle(101) = {102, 101, 103};
Circle(102) = {103, 101, 104};
Circle(103) = {104, 101, 105};
Circle(104) = {105, 101, 102};
Curve Loop(101) = {101, 102, 103, 104};
Plane Surface(101) = {101};
eye[] = Extrude {0, t + 2*tb + 2*mm, 0} { Surface{101}; };

// ---- bolt holes
rbolt = 5.5*mm; xb = 45*mm;
Cylinder(20) = { xb, 0, -1*mm, 0, 0, Tf + 2*mm, rbolt};
Cylinder(21) = {-xb, 0, -1*mm, 0, 0, Tf + 2*mm, rbolt};

part() = BooleanDifference{ Volume{part()}; Delete; }{ Volume{eye[1], 20, 21}; Delete; };

// ---- probe vertex at the top of the eye, mid-thickness (splits the top edge)
Point(200) = {0, 0, zc + R};
part() = BooleanFragments{ Volume{part()}; Delete; }{ Point{200}; Delete; };

// ---- physical groups (found by bounding boxes, independent of OCC's numbering)
e = 1e-5;  // 0.01 mm
sup1() = Surface In BoundingBox{ xb - rbolt - e, -rbolt - e, -e,  xb + rbolt + e, rbolt + e, Tf + e};
sup2() = Surface In BoundingBox{-xb - rbolt - e, -rbolt - e, -e, -xb + rbolt + e, rbolt + e, Tf + e};
ld()   = Surface In BoundingBox{-re - e, -t/2 - tb - e, zc - e, re + e, t/2 + tb + e, zc + re + e};
bot()  = Surface In BoundingBox{-Lf/2 - e, -Wf/2 - e, -e, Lf/2 + e, Wf/2 + e, e};
pr()   = Point In BoundingBox{-e, -e, zc + R - e, e, e, zc + R + e};
Physical Surface("support") = {sup1(), sup2()};
Physical Surface("load") = {ld()};
Physical Surface("base") = {bot()};
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
Mesh.OptimizeNetgen = 0;  // (Netgen is not compiled into the Debian gmsh 4.8.4)
Mesh.RandomSeed = 1;
General.NumThreads = 1;
Mesh.SaveAll = 0;
Mesh.MshFileVersion = 4.1;
