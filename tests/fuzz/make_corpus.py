#!/usr/bin/env python3
"""Regenerates the seed corpus of the fuzz targets (tests/fuzz/corpus/<target>/). Run from the
repository root: python3 tests/fuzz/make_corpus.py. Small valid files of every flavour the readers
accept (hand-written, and gmsh's own output of tiny.geo when gmsh is installed), plus the
malformed catalogue of tests/data/bad for the error paths. The files are committed; the fuzzers
only add to a temporary copy (tools/run-fuzz.sh)."""
import glob
import os
import shutil
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "corpus")
BIN_HEAD = b"$MeshFormat\n4.1 1 8\n" + struct.pack("<i", 1) + b"\n$EndMeshFormat\n"


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def i32(v): return struct.pack("<i", v)
def u64(v): return struct.pack("<Q", v)
def f64(v): return struct.pack("<d", v)


NODES5 = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, -1)]

# ---- .msh, ASCII -----------------------------------------------------------------------------
V22 = ('$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n2 2 "base"\n3 1 "body"\n'
       '$EndPhysicalNames\n$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0 0 -1\n$EndNodes\n'
       '$Elements\n3\n1 2 2 2 1 1 2 3\n2 4 2 1 1 1 2 3 4\n3 4 2 1 1 1 3 2 5\n$EndElements\n')
# gmsh 2.2 repeats an element once per physical group: two 3-D groups on the same tets
V22_DUP = ('$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Comments\nanything $Nodes\n$EndComments\n'
           '$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0 0 -1\n$EndNodes\n'
           '$Elements\n6\n1 4 2 1 1 1 2 3 4\n2 4 2 1 1 1 3 2 5\n3 4 2 7 1 1 2 3 4\n'
           '4 4 2 7 1 1 3 2 5\n5 15 2 9 5 5\n6 1 2 8 3 1 2\n$EndElements\n')
V41 = ('$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n'
       '$Entities\n0 0 0 1\n1 0 0 0 1 1 1 1 1 0\n$EndEntities\n'
       '$Nodes\n1 5 1 5\n3 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n$EndNodes\n'
       '$Elements\n1 2 1 2\n3 1 4 2\n1 1 2 3 4\n2 1 3 2 5\n$EndElements\n')
# 4.1 with a surface group, a parametric node block and no $PhysicalNames (names become physN)
V41_SURF = ('$MeshFormat\n4.1 0 8\n$EndMeshFormat\n'
            '$Entities\n1 0 1 1\n1 0 0 -1 1 -3\n1 0 0 0 1 1 0 1 2 0\n1 0 0 -1 1 1 1 2 1 -5 0\n$EndEntities\n'
            '$Nodes\n3 5 1 5\n0 1 0 1\n5\n0 0 -1\n2 1 1 3\n1\n2\n3\n0 0 0 0 0\n1 0 0 1 0\n0 1 0 0 1\n'
            '3 1 0 1\n4\n0 0 1\n$EndNodes\n'
            '$Elements\n2 3 1 3\n2 1 2 1\n1 1 2 3\n3 1 4 2\n2 1 2 3 4\n3 1 3 2 5\n$EndElements\n'
            '$NodeData\n1\n"u"\n$EndNodeData\n')
for name, text in [("v22.msh", V22), ("v22_dup.msh", V22_DUP), ("v41.msh", V41),
                   ("v41_surface.msh", V41_SURF)]:
    put("msh", name, text)


# ---- .msh 4.1 binary -------------------------------------------------------------------------
def bin_body(tets, coords=NODES5, surf=True):
    b = b'$PhysicalNames\n2\n2 2 "base"\n3 1 "body"\n$EndPhysicalNames\n'
    b += b"$Entities\n" + u64(0) + u64(0) + u64(1 if surf else 0) + u64(1)
    if surf:
        b += i32(1) + b"".join(f64(v) for v in (0, 0, 0, 1, 1, 0)) + u64(1) + i32(2) + u64(0)
    b += i32(1) + b"".join(f64(v) for v in (0, 0, -1, 1, 1, 1)) + u64(1) + i32(1) + u64(0)
    b += b"\n$EndEntities\n"
    n = len(coords)
    b += b"$Nodes\n" + u64(1) + u64(n) + u64(1) + u64(n)
    b += i32(3) + i32(1) + i32(0) + u64(n)
    b += b"".join(u64(t) for t in range(1, n + 1))
    b += b"".join(f64(c) for x in coords for c in x)
    b += b"\n$EndNodes\n"
    nblk = 2 if surf else 1
    b += b"$Elements\n" + u64(nblk) + u64(len(tets) + (1 if surf else 0)) + u64(1) + u64(len(tets) + 1)
    if surf:
        b += i32(2) + i32(1) + i32(2) + u64(1) + u64(len(tets) + 1) + u64(1) + u64(2) + u64(3)
    b += i32(3) + i32(1) + i32(4) + u64(len(tets))
    for k, t in enumerate(tets):
        b += u64(k + 1) + b"".join(u64(v) for v in t)
    b += b"\n$EndElements\n"
    return b


bodies = {"two_tets.bin": bin_body([(1, 2, 3, 4), (1, 3, 2, 5)]),
          "one_tet.bin": bin_body([(1, 2, 3, 4)], coords=NODES5[:4], surf=False)}
for name, body in bodies.items():
    put("msh_bin", name, body)
    put("msh", name.replace(".bin", "_binary.msh"), BIN_HEAD + body)

# ---- .inp ------------------------------------------------------------------------------------
VINP = ("*NODE, NSET=ALL\n1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 0, 0, 1\n5, 0, 0, -1\n"
        "*ELEMENT, TYPE=C3D4, ELSET=E\n1, 1, 2, 3, 4\n2, 1, 3,\n 2, 5\n"
        "*NSET, NSET=B, GENERATE\n1, 3\n*ELSET, ELSET=F\nE, 2\n")
VINP_RICH = ('*HEADING\ncofem fuzz seed\n** a comment\n*Node\n'
             '10, 0.0, 0.0, 0.0\n20, 1.0e0, 0, 0\n30, 0, 1., 0\n40, 0, 0, 1\n50, 0, 0, -1\n'
             '*element, type=c3d4, elset="Solid Part"\n7, 10, 20, 30, 40\n9, 10, 30, 20, 50\n'
             '*NSET, NSET=support\n10, 20,\n30\n*Nset, nset=Tip\n40\n*NSET, NSET=both\nsupport, Tip\n'
             '*NSET, NSET=gen, GENERATE\n10, 50, 10\n*ELSET, ELSET=all, GENERATE\n7, 9, 2\n'
             '*MATERIAL, NAME=STEEL\n*ELASTIC\n210000, 0.3\n*Node Print, NSET=Tip\nU\n*STEP\n*STATIC\n*END STEP\n')
put("inp", "v.inp", VINP)
put("inp", "v_rich.inp", VINP_RICH)

# ---- gmsh's own output (tiny.geo) ------------------------------------------------------------
GEO = '''SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 0.02, 0.01, 0.01};
Physical Surface("support") = {1};
Physical Surface("load") = {2};
Physical Point("probe") = {8};
Physical Volume("solid") = {1};
Mesh.MeshSizeMin = 0.01; Mesh.MeshSizeMax = 0.01;
'''
if shutil.which("gmsh"):
    with tempfile.TemporaryDirectory() as tmp:
        geo = os.path.join(tmp, "tiny.geo")
        with open(geo, "w") as f:
            f.write(GEO)
        for fmt, extra, out in [("msh41", [], "tiny41.msh"), ("msh41", ["-bin"], "tiny41b.msh"),
                                ("msh22", [], "tiny22.msh"), ("inp", [], "tiny.inp")]:
            path = os.path.join(tmp, out)
            subprocess.run(["gmsh", geo, "-3", "-format", fmt, *extra, "-o", path],
                           check=True, stdout=subprocess.DEVNULL)
            with open(path, "rb") as f:
                data = f.read()
            if out.endswith(".inp"):
                put("inp", "gmsh_" + out, data)
                # only the tetrahedra: what CalculiX users keep
                keep, skip = [], False
                for line in data.decode().splitlines(True):
                    if line.startswith("*"):
                        u = line.upper()
                        skip = (u.startswith("*ELEMENT") and "C3D4" not in u) or \
                            (u.startswith("*ELSET") and "SOLID" not in u)
                    if not skip:
                        keep.append(line)
                put("inp", "gmsh_c3d4_" + out, "".join(keep))
            else:
                put("msh", "gmsh_" + out, data)
                if out == "tiny41b.msh":
                    put("msh_bin", "gmsh_tiny41b.bin", data[len(BIN_HEAD):])

# ---- the malformed catalogue -----------------------------------------------------------------
for p in sorted(glob.glob(os.path.join(ROOT, "tests/data/bad/*"))):
    name = os.path.basename(p)
    with open(p, "rb") as f:
        data = f.read()
    if name.endswith(".msh"):
        put("msh", "bad_" + name, data)
        if data.startswith(BIN_HEAD):
            put("msh_bin", "bad_" + name.replace(".msh", ".bin"), data[len(BIN_HEAD):])
    elif name.endswith(".inp"):
        put("inp", "bad_" + name, data)

# ---- scenes (fuzz_scene provides box.msh with support/load/probe/body, box.inp with XMIN..ZMAX) --
SCENES = {
    "lug_like.json": open(os.path.join(ROOT, "scenes/lug_pull.json")).read()
    .replace("../meshes/lug.msh", "box.msh"),
    "inp.json": '{"mesh": "box.inp", "material": {"E": 70e9, "nu": 0.33, "rho": 2700},'
                ' "fixed": [{"set": "XMIN", "dofs": "xz"}, {"set": "ZMIN", "dofs": "y"}],'
                ' "loads": [{"set": "XMAX", "force": [0, 0, -100], "ramp": 0.1},'
                ' {"set": "YMAX", "force": [1, 2, 3], "start": 0.2, "stop": 0.4}],'
                ' "gravity": [0, 0, -9.81], "damping": {"alpha": 0.1, "beta": 1e-4},'
                ' "time": {"dt": 0.001, "end": 0.5},'
                ' "solver": {"tol": 1e-8, "max_iter": 50, "warm_start": false, "threads": 1, "mass": "consistent"},'
                ' "static": {"increments": 3, "tol": 1e-6, "max_iter": 10, "max_cuts": 2, "tangent": "KR"},'
                ' "output": {"vtu_every": 0, "probes": ["XMAX", "ZMAX"]}}',
    "minimal.json": '{"mesh": "box.msh", "material": {"E": 1, "nu": 0, "rho": 1}}',
    "absent_mesh.json": '{"mesh": "absent.msh", "material": {"E": 1, "nu": 0, "rho": 1}}',
}
for name, text in SCENES.items():
    put("scene", name, text)
for p in sorted(glob.glob(os.path.join(ROOT, "tests/data/scenes/*.json"))):
    with open(p) as f:
        text = f.read()
    text = text.replace("../../../meshes/lug.msh", "box.msh").replace("../bad/", "")
    text = text.replace("no_such_mesh.msh", "absent.msh")
    put("scene", "bad_" + os.path.basename(p), text)
