#!/usr/bin/env python3
"""Render the boundary of a gmsh .msh 4.1 tetrahedral mesh to a PNG (headless, matplotlib).

Usage: render.py in.msh out.png [title]

Boundary triangles are the tetrahedron faces that belong to exactly one element. Faces whose
three nodes all lie in a physical group are coloured: "support"/"clamp" blue, "load"/"tip" red;
physical points are drawn as black dots. Two views (front-ish and back-ish) side by side.
"""
import sys
sys.dont_write_bytecode = True
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import mshstat

COLORS = {"support": (0.25, 0.45, 0.95), "clamp": (0.25, 0.45, 0.95),
          "load": (0.95, 0.25, 0.2), "tip": (0.95, 0.25, 0.2)}


def boundary(tet):
    f = np.concatenate([tet[:, [1, 2, 3]], tet[:, [0, 3, 2]], tet[:, [0, 1, 3]], tet[:, [0, 2, 1]]])
    key = np.sort(f, axis=1)
    _, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return f[cnt[inv.ravel()] == 1]


def main():
    src, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else src.split("/")[-1]
    phys, ent_phys, ids, X, elems = mshstat.read_msh41(src)
    idx = np.full(ids.max() + 1, -1, dtype=np.int64)
    idx[ids] = np.arange(len(ids))
    tet = idx[np.vstack([a[:, 1:5] for (_, _, a) in elems[4]])]
    tri = boundary(tet)
    # node sets of groups
    sets = {}
    points = []
    for (dim, tag), name in phys.items():
        ns = set()
        for etype, blocks in elems.items():
            for (edim, etag, arr) in blocks:
                if edim == dim and tag in ent_phys.get((edim, etag), []):
                    ns.update(idx[arr[:, 1:]].ravel().tolist())
        if dim == 0:
            points += [(name, X[n]) for n in ns]
        elif dim == 2:
            sets[name] = np.zeros(len(X), bool)
            sets[name][list(ns)] = True
    base = np.array([0.78, 0.78, 0.80])
    col = np.tile(base, (len(tri), 1))
    for name, c in COLORS.items():
        if name in sets:
            m = sets[name][tri].all(axis=1)
            col[m] = c
    P = X[tri]
    n = np.cross(P[:, 1] - P[:, 0], P[:, 2] - P[:, 0])
    n /= np.linalg.norm(n, axis=1)[:, None]
    lo, hi = X.min(axis=0), X.max(axis=0)
    ctr, span = 0.5 * (lo + hi), (hi - lo).max()
    elongated = (hi - lo).max() > 3.2 * (hi - lo).min()
    fig = plt.figure(figsize=(10, 3.9 if elongated else 5), dpi=90)
    for k, (elev, azim) in enumerate([(22, -60), (28, 130)]):
        ax = fig.add_subplot(1, 2, k + 1, projection="3d")
        ax.computed_zorder = False
        e, a = np.radians(elev), np.radians(azim)
        view = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
        light = view + np.array([0.3, -0.2, 0.6])
        light /= np.linalg.norm(light)
        shade = 0.35 + 0.65 * np.abs(n @ light)
        fc = np.clip(col * shade[:, None], 0, 1)
        pc = Poly3DCollection(P, facecolors=fc, edgecolors=(0.15, 0.15, 0.15, 0.35), linewidths=0.25,
                              zorder=1)
        ax.add_collection3d(pc)
        for name, x in points:
            ax.scatter([x[0]], [x[1]], [x[2]], color="k", s=25, depthshade=False, zorder=10)
        ext = np.maximum(hi - lo, 0.08 * span)
        for d, f in enumerate([ax.set_xlim, ax.set_ylim, ax.set_zlim]):
            f(ctr[d] - ext[d] / 2, ctr[d] + ext[d] / 2)
        ax.set_box_aspect(tuple(ext), zoom=1.25 if elongated else 1.2)
        ax.view_init(elev=elev, azim=azim)
        ax.set_xlabel("x"); ax.set_ylabel("y"); ax.set_zlabel("z")
        ax.tick_params(labelsize=6)
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    fig.suptitle("%s: %d tets, %d nodes (blue: support/clamp, red: load/tip, dot: probe)"
                 % (title, len(tet), len(np.unique(tet))), fontsize=9)
    fig.tight_layout()
    fig.savefig(out, pil_kwargs={"optimize": True})


if __name__ == "__main__":
    main()
