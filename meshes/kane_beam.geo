// kane_beam.geo -- the spin-up cantilever of Kane, Ryan and Banerjee (1987) (issue 19, case 4):
// length L = 10 m, cross-section A = 4e-4 m^2 with I = 2e-7 m^4 about the axis of in-plane bending:
// a rectangle of depth d = sqrt(12 I / A) = 77.46 mm (y: the plane of rotation) and width
// w = A / d = 5.164 mm (z). Structured tetrahedra (extruded triangles, each prism 3 tets).
// Units: metres. x in [0, L] from the hub axis; y in [-d/2, d/2]; z in [-w/2, w/2].
//
// Parameters (-setnumber): ny cells across the depth, nz across the width, nl layers along.
// Committed meshes (meshes/generate.sh small):
//   kane_beam_c.msh  ny 3, nz 1, nl 100 (808 nodes)
//   kane_beam_f.msh  ny 4, nz 1, nl 800 (8010 nodes)
//
// Physical groups (node sets):
//   "root" (volume)  the first element layer x in [0, L/nl]: welded to the hub (a 3-D set, so that a
//                    fixed joint can measure its axes; its mean is at x = L/(2 nl))
//   "tip"  (surface) the end face x = L (the deflection probe)
//   "beam" (volume)  everything
DefineConstant[ ny = {3, Name "Parameters/ny"}, nz = {1, Name "Parameters/nz"}, nl = {100, Name "Parameters/nl"} ];
L = 10; d = Sqrt(12 * 2e-7 / 4e-4); w = 4e-4 / d; h = L/nl;
Point(1) = {0, -d/2, -w/2}; Point(2) = {0, d/2, -w/2}; Point(3) = {0, d/2, w/2}; Point(4) = {0, -d/2, w/2};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = ny + 1;
Transfinite Curve{2, 4} = nz + 1;
Transfinite Surface{1};
e1[] = Extrude{h, 0, 0}{ Surface{1}; Layers{1}; };
e2[] = Extrude{L - h, 0, 0}{ Surface{e1[0]}; Layers{nl - 1}; };
Physical Volume("root") = {e1[1]};
Physical Surface("tip") = {e2[0]};
Physical Volume("beam") = {e1[1], e2[1]};
Mesh.ElementOrder = 1;
Mesh.MshFileVersion = 4.1;
Mesh.SaveAll = 0;
General.NumThreads = 1;
