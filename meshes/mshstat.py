#!/usr/bin/env python3
"""Statistics of a gmsh .msh 4.1 ASCII tetrahedral mesh (cofem test meshes).

Usage: mshstat.py [--md] file.msh [...]

Prints node count (all nodes in the file and those used by tetrahedra), tetrahedron count,
physical groups with their node counts, bounding box, volume, min/max dihedral angle and max
aspect ratio, defined as in cofem's cf_mesh_quality: longest edge / (2*sqrt(6)*inradius), 1 for a
regular tetrahedron. Needs numpy.
"""
import sys
import numpy as np

ELEM_NNODE = {15: 1, 1: 2, 2: 3, 4: 4, 11: 10, 9: 6}


def read_msh41(path):
    with open(path, "r") as f:
        lines = f.read().split("\n")
    i = 0
    n = len(lines)
    phys = {}          # (dim, tag) -> name
    ent_phys = {}      # (dim, entity tag) -> [phys tags]
    nodes = {}
    ids_all = []
    xyz_all = []
    elems = {}         # type -> list of (entity dim, entity tag, array)
    while i < n:
        s = lines[i].strip()
        if s == "$MeshFormat":
            ver = lines[i + 1].split()
            if not ver[0].startswith("4.1") or ver[1] != "0":
                raise SystemExit("%s: only msh 4.1 ASCII is supported" % path)
            i += 2
        elif s == "$PhysicalNames":
            cnt = int(lines[i + 1])
            for k in range(cnt):
                tok = lines[i + 2 + k].split(None, 2)
                phys[(int(tok[0]), int(tok[1]))] = tok[2].strip().strip('"')
            i += 2 + cnt
        elif s == "$Entities":
            c = [int(v) for v in lines[i + 1].split()]
            j = i + 2
            for dim in range(4):
                for k in range(c[dim]):
                    tok = lines[j].split()
                    tag = int(tok[0])
                    if dim == 0:
                        nph = int(tok[4]); ph = tok[5:5 + nph]
                    else:
                        nph = int(tok[7]); ph = tok[8:8 + nph]
                    ent_phys[(dim, tag)] = [int(p) for p in ph]
                    j += 1
            i = j
        elif s == "$Nodes":
            nb, nn, _, _ = [int(v) for v in lines[i + 1].split()]
            j = i + 2
            for b in range(nb):
                edim, etag, par, cnt = [int(v) for v in lines[j].split()]
                ids = [int(lines[j + 1 + k]) for k in range(cnt)]
                xyz = [[float(v) for v in lines[j + 1 + cnt + k].split()[:3]] for k in range(cnt)]
                ids_all += ids
                xyz_all += xyz
                for nid in ids:
                    nodes.setdefault((edim, etag), []).append(nid)
                j += 1 + 2 * cnt
            i = j
        elif s == "$Elements":
            nb, ne, _, _ = [int(v) for v in lines[i + 1].split()]
            j = i + 2
            for b in range(nb):
                edim, etag, etype, cnt = [int(v) for v in lines[j].split()]
                arr = np.array([[int(v) for v in lines[j + 1 + k].split()] for k in range(cnt)],
                               dtype=np.int64).reshape(cnt, -1)
                elems.setdefault(etype, []).append((edim, etag, arr))
                j += 1 + cnt
            i = j
        else:
            i += 1
    ids_all = np.array(ids_all, dtype=np.int64)
    xyz_all = np.array(xyz_all, dtype=float).reshape(-1, 3)
    return phys, ent_phys, ids_all, xyz_all, elems


def analyse(path):
    phys, ent_phys, ids, xyz, elems = read_msh41(path)
    idx = np.full(ids.max() + 1, -1, dtype=np.int64)
    idx[ids] = np.arange(len(ids))
    if 4 not in elems:
        raise SystemExit("%s: no linear tetrahedra (type 4) saved" % path)
    tet = idx[np.vstack([a[:, 1:5] for (_, _, a) in elems[4]])]
    X = xyz
    P = [X[tet[:, k]] for k in range(4)]
    vol = np.einsum("ij,ij->i", np.cross(P[1] - P[0], P[2] - P[0]), P[3] - P[0]) / 6.0
    # face normals (faces opposite each vertex)
    faces = [(1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)]
    area = []
    nrm = []
    for (a, b, c) in faces:
        cr = np.cross(P[b] - P[a], P[c] - P[a])
        ar = np.linalg.norm(cr, axis=1)
        area.append(0.5 * ar)
        nrm.append(cr / ar[:, None])
    S = sum(area)
    inr = 3.0 * np.abs(vol) / S
    edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    L = np.stack([np.linalg.norm(P[b] - P[a], axis=1) for (a, b) in edges], axis=1)
    aspect = L.max(axis=1) / (2.0 * np.sqrt(6.0) * inr)
    # dihedral angle at edge (a,b) is between the two faces containing it, i.e. the faces
    # opposite the two other vertices c,d: angle = pi - angle(n_c, n_d) (outward normals)
    dih = []
    for (a, b) in edges:
        c, d = [k for k in range(4) if k not in (a, b)]
        cosv = np.clip(np.einsum("ij,ij->i", nrm[c], nrm[d]), -1, 1)
        dih.append(180.0 - np.degrees(np.arccos(cosv)))
    dih = np.stack(dih, axis=1)
    used = np.unique(tet)
    groups = []
    for (dim, tag), name in sorted(phys.items(), key=lambda kv: (kv[0][0], kv[1])):
        ns = set()
        for etype, blocks in elems.items():
            for (edim, etag, arr) in blocks:
                if edim == dim and tag in ent_phys.get((edim, etag), []):
                    ns.update(arr[:, 1:1 + ELEM_NNODE.get(etype, arr.shape[1] - 1)].ravel().tolist())
        where = ""
        if len(ns) == 1:
            where = " at (%.6g, %.6g, %.6g)" % tuple(X[idx[next(iter(ns))]])
        groups.append((dim, name, len(ns), where))
    return dict(path=path, nnode_file=len(ids), nnode=len(used), ntet=len(tet),
                vol=np.abs(vol).sum(), neg=(vol <= 0).sum(), bbmin=X[used].min(axis=0),
                bbmax=X[used].max(axis=0), dmin=dih.min(), dmax=dih.max(),
                amax=aspect.max(), amean=aspect.mean(), groups=groups,
                d5=(dih.min(axis=1) < 5.0).sum())


def main():
    args = sys.argv[1:]
    md = False
    if args and args[0] == "--md":
        md = True
        args = args[1:]
    if md:
        print("| mesh | tets | nodes | min dihedral (deg) | max dihedral (deg) | max aspect | mean aspect |")
        print("|---|---:|---:|---:|---:|---:|---:|")
    for p in args:
        r = analyse(p)
        if md:
            print("| %s | %d | %d | %.2f | %.2f | %.2f | %.2f |" % (
                r["path"].split("/")[-1], r["ntet"], r["nnode"], r["dmin"], r["dmax"],
                r["amax"], r["amean"]))
            continue
        print("%s" % r["path"])
        print("  tets %d  nodes %d (in file %d)  volume %.6g m^3  non-positive %d"
              % (r["ntet"], r["nnode"], r["nnode_file"], r["vol"], r["neg"]))
        print("  bbox (%.4g %.4g %.4g) - (%.4g %.4g %.4g)" % (tuple(r["bbmin"]) + tuple(r["bbmax"])))
        print("  dihedral min %.2f max %.2f deg (tets with min < 5 deg: %d)  aspect max %.2f mean %.3f"
              % (r["dmin"], r["dmax"], r["d5"], r["amax"], r["amean"]))
        for (dim, name, nn, where) in r["groups"]:
            print("  group dim %d %-12s %d nodes%s" % (dim, '"%s"' % name, nn, where))


if __name__ == "__main__":
    main()
