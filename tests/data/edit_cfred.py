# edit_cfred.py FILE FIELD FACTOR [resum]: scale one array of a reduction file (docs/reduction-format.md)
# in place, as a user or a damaged disk might: FIELD is fixed_omega2, omega2, zeta, Kr, Mr, P, T, S or
# basis; "resum" then recomputes the version-2 checksum (64-bit FNV-1a with its own 8 bytes as zero),
# so that only the contents checks can catch the edit. FIELD "version" sets the version to FACTOR.
import struct
import sys

path, field, factor = sys.argv[1], sys.argv[2], float(sys.argv[3])
b = bytearray(open(path, "rb").read())
if field == "version":
    struct.pack_into("<i", b, 8, int(factor))
    struct.pack_into("<Q", b, 56, 0)
else:
    nnode, ntet, ndof, cm, nbnode, nb, nk, n = struct.unpack_from("<8i", b, 16)
    off = 712 + 4 * (nbnode + nb)
    for name, cnt in (("fixed_omega2", nk), ("omega2", n), ("zeta", n), ("Kr", n * n), ("Mr", n * n),
                      ("P", 3 * n), ("T", 9 * n), ("S", 9 * n * n), ("basis", n * ndof)):
        if name == field:
            vals = struct.unpack_from("<%dd" % cnt, b, off)
            struct.pack_into("<%dd" % cnt, b, off, *[v * factor for v in vals])
            break
        off += 8 * cnt
    else:
        sys.exit("no field " + field)
if len(sys.argv) > 4 and sys.argv[4] == "resum":
    b[56:64] = bytes(8)
    h = 0xCBF29CE484222325
    for x in b:
        h = ((h ^ x) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    struct.pack_into("<Q", b, 56, h)
open(path, "wb").write(b)
