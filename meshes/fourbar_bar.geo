// fourbar_bar.geo -- a bar of the double four-bar (paper 000, sec. 4.1; issue 19, case 2): flex_rod.geo
// (the slider-crank rod) with L = 1 m between the pins and the square section of a 1 kg steel bar
// (rho 7850: side a = sqrt(1/7850) = 11.287 mm). Structured tetrahedra (extruded triangles, each prism
// split into 3 tets); x along the bar, y, z in [-a/2, a/2]. The joints sit at the means of the end
// sets, one element layer h = L/nl thick centred on x = 0 and x = L: the mesh runs from -h/2 to
// L + h/2 and the FE scene scales rho by L/(L + h) to keep the bar's mass 1 kg.
//
// Parameters (-setnumber): n = divisions of the section side, nl = element layers (even).
// Committed meshes (meshes/generate.sh small): fourbar_bar_n1.msh n 1, nl 20 (92 nodes);
// fourbar_bar_n2.msh n 2, nl 40 (387 nodes).
//
// Physical groups (node sets): "end_a" (volume) the first layer (mean at x = 0), "end_b" the last
// (mean at x = L), "mid" (surface) the section x = L/2, "rod" everything.

DefineConstant[ n = {2, Name "Parameters/n"}, nl = {80, Name "Parameters/nl"} ];
a = Sqrt(1/7850); L = 1.0; h = L/nl; // 1 kg of steel (rho 7850) over 1 m: a = 11.29 mm
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
