#!/usr/bin/env python3
"""Load-displacement curve of an FE scene: the scene's loads scaled from 0 to --max, solved by
co-rotational statics and by linear FEM at each level, the probe's displacement plotted.

    PYTHONPATH=python COFEM_BUILD=build python3 python/examples/load_sweep.py scenes/lug_pull.json
writes load_sweep.png (and load_sweep.csv) into --out (default: the current folder)."""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cofem  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scene", nargs="?", default=os.path.join(cofem.data_dir(), "scenes", "lug_pull.json"))
    ap.add_argument("--points", type=int, default=8, help="load levels after 0 (default 8)")
    ap.add_argument("--max", type=float, default=1.5, help="largest scale of the scene's loads (default 1.5)")
    ap.add_argument("--probe", help="node set to follow (default: the scene's first probe)")
    ap.add_argument("--out", default=".", help="folder for load_sweep.png and load_sweep.csv")
    a = ap.parse_args()
    with open(a.scene) as f:
        desc = json.load(f)
    probe = a.probe or desc.get("output", {}).get("probes", [None])[0]
    if not probe:
        sys.exit("load_sweep: the scene names no probe; give --probe SET")
    total = sum(np.linalg.norm(load["force"]) for load in desc.get("loads", []))
    if total == 0:
        sys.exit("load_sweep: the scene has no loads to scale")

    scales = np.linspace(0, a.max, a.points + 1)
    rows = []
    with cofem.Scene(a.scene) as s:
        for lam in scales:
            s.static(scale=lam, linear=True)
            u_lin = s.probe(probe)
            s.static(scale=lam)
            u_cr = s.probe(probe)
            rows.append((lam, lam * total, np.linalg.norm(u_cr), np.linalg.norm(u_lin)))
            print(f"load {lam * total / 1e6:8.3f} MN  |u| co-rotational {rows[-1][2] * 1e3:8.4f} mm"
                  f"  linear {rows[-1][3] * 1e3:8.4f} mm")
    rows = np.array(rows)
    os.makedirs(a.out, exist_ok=True)
    np.savetxt(os.path.join(a.out, "load_sweep.csv"), rows, delimiter=",",
               header="scale,load_N,u_corotational_m,u_linear_m", comments="")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.2), dpi=120)
    ax.plot(rows[:, 2] * 1e3, rows[:, 1] / 1e6, "o-", label="co-rotational (cofem static)")
    ax.plot(rows[:, 3] * 1e3, rows[:, 1] / 1e6, "--", color="gray", label="linear FEM")
    ax.set_xlabel(f"|u| of probe '{probe}' [mm]")
    ax.set_ylabel("load [MN]")
    ax.set_title(os.path.basename(a.scene))
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    png = os.path.join(a.out, "load_sweep.png")
    fig.savefig(png)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
