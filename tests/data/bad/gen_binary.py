#!/usr/bin/env python3
"""Regenerates the malformed binary .msh 4.1 files of this catalogue (m41b_*.msh).

Each is a single tetrahedron in a volume entity with a named physical group, as gmsh writes
it (little-endian, size_t = 8 bytes), with one defect. Run from this directory."""
import struct

NODES = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]


def i32(v): return struct.pack("<i", v)
def u64(v): return struct.pack("<Q", v)
def f64(v): return struct.pack("<d", v)


def mesh(marker=i32(1), dsize=8, nnodes=4, coords=NODES, tet=(1, 2, 3, 4), etype=4, truncate=None):
    b = b"$MeshFormat\n4.1 1 %d\n" % dsize + marker + b"\n$EndMeshFormat\n"
    b += b'$PhysicalNames\n1\n3 1 "body"\n$EndPhysicalNames\n'
    b += b"$Entities\n" + u64(0) + u64(0) + u64(0) + u64(1)
    b += i32(1) + b"".join(f64(v) for v in (0, 0, 0, 1, 1, 1)) + u64(1) + i32(1) + u64(0)
    b += b"\n$EndEntities\n"
    b += b"$Nodes\n" + u64(1) + u64(nnodes) + u64(1) + u64(4)
    b += i32(3) + i32(1) + i32(0) + u64(4)
    b += b"".join(u64(t) for t in (1, 2, 3, 4))
    b += b"".join(f64(c) for x in coords for c in x)
    b += b"\n$EndNodes\n"
    b += b"$Elements\n" + u64(1) + u64(1) + u64(1) + u64(1)
    b += i32(3) + i32(1) + i32(etype) + u64(1)
    b += u64(1) + b"".join(u64(t) for t in tet)
    b += b"\n$EndElements\n"
    return b[:truncate] if truncate else b


files = {
    "m41b_valid_reference.bin": mesh(),  # not read by the test: the base the others differ from
    "m41b_endian.msh": mesh(marker=struct.pack(">i", 1)),
    "m41b_marker.msh": mesh(marker=i32(7)),
    "m41b_datasize4.msh": mesh(dsize=4),
    "m41b_truncated.msh": mesh(truncate=400),
    "m41b_absent_node.msh": mesh(tet=(1, 2, 3, 99)),
    "m41b_huge_count.msh": mesh(nnodes=1 << 40),
    "m41b_nan.msh": mesh(coords=[(0, 0, 0), (1, 0, 0), (0, float("nan"), 0), (0, 0, 1)]),
    "m41b_tet10.msh": mesh(etype=11),
    "m41b_inverted.msh": mesh(tet=(1, 3, 2, 4)),
}
for name, data in files.items():
    with open(name, "wb") as f:
        f.write(data)
