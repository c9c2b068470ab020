# gen_box_inp.py NX NY NZ LX LY LZ [orphan] > box.inp: a box of 6 NX NY NZ linear tetrahedra (.inp), node sets
# "fixed" (x = 0) and "load" (x = LX), element set "solid"; "orphan" adds a node in no element.
# For the hostile-input tests (coordinates scaled, a part flattened, an orphan node).
import sys
nx,ny,nz=map(int,sys.argv[1:4]); lx,ly,lz=map(float,sys.argv[4:7]); orphan=len(sys.argv)>7
def nid(i,j,k): return 1+i+(nx+1)*(j+(ny+1)*k)
print("*NODE")
for k in range(nz+1):
  for j in range(ny+1):
    for i in range(nx+1):
      print(f"{nid(i,j,k)}, {lx*i/nx!r}, {ly*j/ny!r}, {lz*k/nz!r}")
N=(nx+1)*(ny+1)*(nz+1)
if orphan: print(f"{N+1}, {2*lx!r}, 0, 0")
print("*ELEMENT, TYPE=C3D4, ELSET=solid")
e=1
for k in range(nz):
  for j in range(ny):
    for i in range(nx):
      c=[nid(i+a,j+b,k+cc) for cc in (0,1) for b in (0,1) for a in (0,1)]
      # 6-tet Kuhn subdivision along diagonal 0-7
      for t in ((0,1,3,7),(0,3,2,7),(0,2,6,7),(0,6,4,7),(0,4,5,7),(0,5,1,7)):
        p=[c[q] for q in t]
        print(f"{e}, {p[0]}, {p[1]}, {p[2]}, {p[3]}"); e+=1
print("*NSET, NSET=fixed")
print(", ".join(str(nid(0,j,k)) for k in range(nz+1) for j in range(ny+1)))
print("*NSET, NSET=load")
print(", ".join(str(nid(nx,j,k)) for k in range(nz+1) for j in range(ny+1)))
