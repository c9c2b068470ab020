// kane_beam_o2.geo -- the spin-up cantilever of kane_beam.geo (Kane, Ryan and Banerjee 1987; L 10 m,
// A 4e-4 m^2, I 2e-7 m^4: a 77.46 x 5.164 mm rectangle) in quadratic (10-node) tetrahedra (issue 30,
// docs/comparison.md case 4), second order with straight edges (Mesh.SecondOrderLinear; a box).
// Unlike kane_beam.geo, the "root" layer (the set the hub's weld holds) has the same length hr on
// every mesh of the family: with one element layer as the root, the weld's set shrank with the
// mesh, and the welded length (the root set's mean at hr / 2) changed the tip's lag by O(h): 4.7%
// between 40 and 80 layers, more than the elements' own error.
//   gmsh kane_beam_o2.geo -setnumber nl 40 -3 -nt 1 -format msh41 -o kane_beam_o2_40.msh
// Parameters: ny, nz cells across the depth (y) and width (z), nl element layers along x (the
// first is the root layer, hr long; the other nl - 1 share L - hr), hr.
// Committed meshes (meshes/generate.sh small): kane_beam_o2_20/40/80.msh (ny 1, nz 1, nl 20/40/80).
// Node sets: "root" (volume) x in [0, hr]; "root_face" (surface) x = 0 (the clamp of the
// frequency check); "tip" (surface) x = L; "beam" (volume) everything.
DefineConstant[ ny = {1, Name "Parameters/ny"}, nz = {1, Name "Parameters/nz"}, nl = {40, Name "Parameters/nl"},
                hr = {0.125, Name "Parameters/hr"} ];
L = 10; d = Sqrt(12 * 2e-7 / 4e-4); w = 4e-4 / d;
Point(1) = {0, -d/2, -w/2}; Point(2) = {0, d/2, -w/2}; Point(3) = {0, d/2, w/2}; Point(4) = {0, -d/2, w/2};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = ny + 1;
Transfinite Curve{2, 4} = nz + 1;
Transfinite Surface{1};
e1[] = Extrude{hr, 0, 0}{ Surface{1}; Layers{1}; };
e2[] = Extrude{L - hr, 0, 0}{ Surface{e1[0]}; Layers{nl - 1}; };
Physical Volume("root") = {e1[1]};
Physical Surface("root_face") = {1};
Physical Surface("tip") = {e2[0]};
Physical Volume("beam") = {e1[1], e2[1]};
Mesh.ElementOrder = 2;
Mesh.HighOrderOptimize = 0;
Mesh.SecondOrderLinear = 1;
Mesh.MshFileVersion = 4.1;
Mesh.SaveAll = 0;
General.NumThreads = 1;
