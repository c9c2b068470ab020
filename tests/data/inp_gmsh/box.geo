SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 0.2, 0.2};
Physical Surface("support") = {1};
Physical Surface("load") = {2};
Physical Curve("edge") = {1};
Physical Volume("solid") = {1};
Mesh.CharacteristicLengthMax = 0.2;
