#!/usr/bin/env python3
"""Plots of `cofem accuracy`: python3 tools/plot_accuracy.py OUT_DIR IMG_DIR

Reads OUT_DIR/<case>_static.csv, <case>_dynamic.csv and <case>_modes.csv (written by the
harness, host/cli/cmd_accuracy.c) and writes IMG_DIR/accuracy_<case>_static.png (displacement
components against load, as Fig. 4 of paper 003), accuracy_<case>_dynamic.png (step response)
and accuracy_modes.png. Needs numpy and matplotlib (Debian python3-numpy, python3-matplotlib)."""
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.DictReader(lines))
    return rows


def col(rows, name):
    return np.array([float(r[name]) for r in rows])


def plot_static(path, img_dir):
    case = os.path.basename(path)[: -len("_static.csv")]
    rows = read_csv(path)
    load = col(rows, "load")
    torque = "ccx_twist_deg" in rows[0]
    unit = "torque [N m]" if torque else "force [N]"
    nplot = 4 if torque else 3
    fig, axes = plt.subplots(1, nplot, figsize=(4.2 * nplot, 4.0))
    for k, comp in enumerate("xyz"):
        ax = axes[k]
        ax.plot(load, 1e3 * col(rows, "linear_u" + comp), "--", color="tab:gray", label="linear FEM (cofem)")
        ax.plot(load, 1e3 * col(rows, "ccx_linear_u" + comp), "+", color="tab:gray", ms=7, label="linear (CalculiX)")
        if "ccx_neohooke_u" + comp in rows[0]:
            ax.plot(load, 1e3 * col(rows, "ccx_neohooke_u" + comp), ":", color="tab:purple", lw=1.2,
                    label="CalculiX NLGEOM, neo-Hooke")
        if "elastica_u" + comp in rows[0]:
            ax.plot(load, 1e3 * col(rows, "elastica_u" + comp), "-", color="tab:green", lw=1, label="elastica")
        ax.plot(load, 1e3 * col(rows, "ccx_u" + comp), "o", mfc="none", color="k", label="CalculiX NLGEOM (SVK)")
        ax.plot(load, 1e3 * col(rows, "corot_u" + comp), "-", color="tab:red", label="cofem co-rotational")
        ax.set_xlabel(unit)
        ax.set_ylabel("u_%s [mm]" % comp)
        ax.grid(alpha=0.3)
    if torque:
        ax = axes[3]
        ax.plot(load, col(rows, "linear_twist_deg"), "--", color="tab:gray", label="linear FEM")
        ax.plot(load, col(rows, "ccx_twist_deg"), "o", mfc="none", color="k", label="CalculiX NLGEOM")
        ax.plot(load, col(rows, "corot_twist_deg"), "-", color="tab:red", label="cofem co-rotational")
        ax.set_xlabel(unit)
        ax.set_ylabel("tip twist [deg]")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("%s: probe displacement against load" % case)
    fig.tight_layout()
    out = os.path.join(img_dir, "accuracy_%s_static.png" % case)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


STYLE = {
    "ccx_reference": dict(color="k", lw=2.0, ls="-"),
    "ccx": dict(color="tab:blue", marker="s", ms=3, ls="-", lw=0.8),
    "backward_euler": dict(color="tab:orange", marker="v", ms=3, ls="-", lw=0.8),
    "newmark": dict(color="tab:red", marker="o", ms=3, ls="-", lw=0.8),
    "generalized_alpha": dict(color="tab:purple", marker="d", ms=3, ls="-", lw=0.8),
}
LABEL = {"ccx_reference": "CalculiX reference", "ccx": "CalculiX", "backward_euler": "cofem backward Euler",
         "newmark": "cofem Newmark (linearised)", "generalized_alpha": "cofem generalized-alpha (Newton)"}


def plot_dynamic(path, img_dir):
    case = os.path.basename(path)[: -len("_dynamic.csv")]
    with open(path) as f:
        head = f.readline()
    s_static = None
    if head.startswith("#"):
        w = head.split(":")[1].split(";")[0].split()
        d = head.split("direction")[1].split()
        u = np.array([float(x) for x in w])
        e = np.array([float(x) for x in d])
        s_static = float(u @ e)
    rows = read_csv(path)
    runs = {}
    for r in rows:
        runs.setdefault((r["solver"], float(r["dt"])), []).append((float(r["t"]), float(r["s"])))
    ref = [k for k in runs if k[0] == "ccx_reference"][0]
    dt_ref = ref[1]
    t_ref = max(t for t, _ in runs[ref])
    panels = [(dt_ref, "dt = %.3g s (T1/100)" % dt_ref), (0.001, "dt = 0.001 s"), (0.01, "dt = 0.01 s")]
    # only the time steps that were run (cofem accuracy --dt-ref-only runs T1/100 alone)
    panels = [p for p in panels if p[0] == dt_ref or any(
        k[0] != "ccx_reference" and abs(k[1] - p[0]) <= 1e-12 * p[0] for k in runs)]
    fig, axes = plt.subplots(1, len(panels), figsize=(max(5 * len(panels), 9), 4.2), squeeze=False)
    axes = axes[0]
    for ax, (dt, title) in zip(axes, panels):
        ts, ss = np.array(runs[ref]).T
        t_end = t_ref
        for (solver, d), pts in sorted(runs.items()):
            if solver == "ccx_reference" or abs(d - dt) > 1e-12 * max(d, dt):
                continue
            t, s = np.array(pts).T
            t_end = max(t_end, t.max())
            ax.plot(t * 1e3, s * 1e3, label="%s" % LABEL[solver], **STYLE[solver])
        ax.plot(ts * 1e3, ss * 1e3, label=LABEL["ccx_reference"] + " (dt %.2g s)" % dt_ref, zorder=0,
                **STYLE["ccx_reference"])
        # a run that diverged ends where the monitor stopped it; keep the axes on the reference
        lo, hi = min(ss.min(), 0.0), max(ss.max(), 0.0)
        ax.set_ylim((lo - 0.5 * (hi - lo)) * 1e3, (hi + 0.5 * (hi - lo)) * 1e3)
        if s_static is not None:
            ax.axhline(s_static * 1e3, color="tab:green", ls=":", lw=1, label="static co-rot. solution")
        ax.set_xlim(0, t_end * 1e3)
        ax.set_xlabel("t [ms]")
        ax.set_ylabel("s = u . e [mm]")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("%s: response to a suddenly applied load (CalculiX reference covers %.3g ms)" % (case, t_ref * 1e3))
    fig.tight_layout()
    out = os.path.join(img_dir, "accuracy_%s_dynamic.png" % case)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def plot_modes(paths, img_dir):
    if not paths:
        return None
    fig, axes = plt.subplots(1, len(paths), figsize=(4.0 * len(paths), 3.8), squeeze=False)
    for ax, path in zip(axes[0], paths):
        case = os.path.basename(path)[: -len("_modes.csv")]
        rows = read_csv(path)
        mode = col(rows, "mode")
        ref = col(rows, "ccx_hz")
        for name, lab, st in [("cofem_onepoint_hz", "one-point mass (CalculiX's)", "o"),
                              ("cofem_consistent_hz", "consistent mass", "s"),
                              ("cofem_lumped_hz", "lumped mass", "v")]:
            ax.plot(mode, 100 * (col(rows, name) - ref) / ref, st + "-", ms=4, lw=0.8, label=lab)
        ax.axhspan(-0.5, 0.5, color="tab:green", alpha=0.12, label="+-0.5%")
        ax.set_xlabel("mode")
        ax.set_ylabel("cofem vs CalculiX [%]")
        ax.set_title(case)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("eigenfrequencies: cofem modal analysis against CalculiX *FREQUENCY (C3D4)")
    fig.tight_layout()
    out = os.path.join(img_dir, "accuracy_modes.png")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    out_dir, img_dir = sys.argv[1], sys.argv[2]
    os.makedirs(img_dir, exist_ok=True)
    written = []
    for p in sorted(glob.glob(os.path.join(out_dir, "*_static.csv"))):
        written.append(plot_static(p, img_dir))
    for p in sorted(glob.glob(os.path.join(out_dir, "*_dynamic.csv"))):
        written.append(plot_dynamic(p, img_dir))
    m = plot_modes(sorted(glob.glob(os.path.join(out_dir, "*_modes.csv"))), img_dir)
    if m:
        written.append(m)
    for w in written:
        print("wrote", w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
