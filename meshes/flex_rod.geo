// flex_rod.geo -- the connecting rod of the flexible slider-crank (paper 004, Table 2; issue 19):
// a square steel rod of cross-section 3.16e-5 m^2 (side a = sqrt(3.16e-5) = 5.6214 mm), length
// L = 0.3048 m between the pins, structured tetrahedra (extruded triangles, each prism split into
// 3 tets). Units: metres. x along the rod; y, z in [-a/2, a/2]. The joints sit at the means of
// the end sets, which are one element layer h = L/nl thick and centred on x = 0 and x = L: so the
// mesh runs from -h/2 to L + h/2 (L + h long; the FE scenes scale rho by L/(L + h) to keep the
// rod's mass 7820 A L = 0.07532 kg) and the pins are L apart on every mesh of the family.
//
// Parameters (-setnumber): n = divisions of the cross-section side (2 triangles per square cell),
// nl = element layers along the rod (even). Committed meshes (meshes/generate.sh small):
//   flex_rod_n1.msh  n 1, nl 40 (172 nodes) ; flex_rod_n2.msh  n 2, nl 80 (747)
//   flex_rod_n3.msh  n 3, nl 120 (1968) ; flex_rod_n4.msh  n 4, nl 160 (4075)
//
// Physical groups (node sets):
//   "end_a" (volume) the first element layer x in [-h/2, h/2]: the crank end's joint set (3-D, so
//                    that a revolute joint can measure its axis; its mean is at x = 0)
//   "end_b" (volume) the last layer x in [L - h/2, L + h/2]: the slider end (mean at x = L)
//   "mid"   (surface) the cross-section x = L/2 (the deflection probe)
//   "rod"   (volume) everything

DefineConstant[ n = {2, Name "Parameters/n"}, nl = {80, Name "Parameters/nl"} ];
a = Sqrt(3.16e-5); L = 0.3048; h = L/nl;
x0 = -h/2;
Point(1) = {x0, -a/2, -a/2}; Point(2) = {x0, a/2, -a/2}; Point(3) = {x0, a/2, a/2}; Point(4) = {x0, -a/2, a/2};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 2, 3, 4} = n + 1;
Transfinite Surface{1};
e1[] = Extrude{h, 0, 0}{ Surface{1}; Layers{1}; };
e2[] = Extrude{L/2 - h/2, 0, 0}{ Surface{e1[0]}; Layers{nl/2}; };
e3[] = Extrude{L/2 - h/2, 0, 0}{ Surface{e2[0]}; Layers{nl/2}; };
e4[] = Extrude{h, 0, 0}{ Surface{e3[0]}; Layers{1}; };
Physical Volume("end_a") = {e1[1]};
Physical Volume("end_b") = {e4[1]};
Physical Surface("mid") = {e2[0]};
Physical Volume("rod") = {e1[1], e2[1], e3[1], e4[1]};
Mesh.ElementOrder = 1;
Mesh.MshFileVersion = 4.1;
Mesh.SaveAll = 0;
General.NumThreads = 1;
