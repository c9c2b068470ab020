#!/usr/bin/env python3
"""Plots of cofem_compare's CSVs (issue 19, docs/comparison.md).

    python3 perf/plot_compare.py DIR CASE [CASE ...] [--paths A,B,...] [--probe NAME] [--tmax T]
                                 [--ylim LO,HI]   (the first probe's axis: a diverging path off-scale)

For each CASE (the case file's name without .json, e.g. slider_crank.compare) it reads
DIR/CASE_series.csv and DIR/CASE_summary.csv and writes
  DIR/CASE_series.png   every probe over time, one line per path (--paths: only these);
  DIR/CASE_cost.png     error against cost: the RMS error of each path's first probe (or --probe)
                        against the reference (dots) and against the baseline (squares: the path's
                        own error on the same mesh), over ms per step (log-log), relative to the
                        reference's largest |value|: the chart a user picks a path from.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3 where another python3 is
first on PATH)."""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def series_plot(d, case, only, tmax, ylim=None):
    head, rows = read_csv(os.path.join(d, case + "_series.csv"))
    t = [float(r[0]) for r in rows]
    cols = {}
    for j, h in enumerate(head[1:], 1):
        path, probe = h.split(":", 1)
        if only and path not in only:
            continue
        cols.setdefault(probe, []).append((path, j))
    probes = list(cols)
    fig, axes = plt.subplots(len(probes), 1, figsize=(9, 3.2 * len(probes)), sharex=True, squeeze=False)
    for ax, probe in zip(axes[:, 0], probes):
        for k, (path, j) in enumerate(cols[probe]):
            tt, vv = [], []
            for ti, r in zip(t, rows):
                if r[j] != "" and (tmax is None or ti <= tmax):
                    tt.append(ti)
                    vv.append(float(r[j]))
            style = "-" if k < 10 else "--"
            ax.plot(tt, vv, style, lw=2.2 if k == 0 else 1.0, label=path)
        ax.set_ylabel(probe)
        ax.grid(alpha=0.3)
        if ylim and probe == probes[0]:
            ax.set_ylim(*ylim)
    axes[0, 0].legend(fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    axes[0, 0].set_title(case)
    fig.tight_layout()
    out = os.path.join(d, case + "_series.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print("wrote", out)


def cost_plot(d, case, probe):
    head, rows = read_csv(os.path.join(d, case + "_summary.csv"))
    ix = {h: i for i, h in enumerate(head)}
    if probe is None:
        probe = [h for h in head if h.endswith("_err_rms") and "_base_" not in h][0][: -len("_err_rms")]
    pts = []
    for r in rows:
        ms = float(r[ix["ms_per_step"]])
        err = float(r[ix[probe + "_err_rms"]])
        berr = float(r[ix[probe + "_base_err_rms"]])
        if ms > 0:
            pts.append((r[ix["path"]], ms, err, berr, float(r[ix[probe + "_max_abs"]]), r[ix["failed_at"]]))
    ref_scale = pts[0][4] if pts and pts[0][4] > 0 else 1.0
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for k, (name, ms, err, berr, _, failed) in enumerate(pts):
        col = "C%d" % (k % 10)
        if err > 0:
            ax.loglog(ms, err / ref_scale, "x" if failed else "o", color=col, ms=7)
            ax.annotate(name + (" (failed)" if failed else ""), (ms, err / ref_scale), fontsize=7, xytext=(4, 3),
                        textcoords="offset points")
        if berr > 0:
            ax.loglog(ms, berr / ref_scale, "s", mfc="none", color=col, ms=7)
    ax.plot([], [], "ko", label="vs the reference (mesh + path)")
    ax.plot([], [], "ks", mfc="none", label="vs the baseline (the path alone)")
    ax.legend(fontsize=7)
    ax.set_xlabel("ms per step (CPU, one core)")
    ax.set_ylabel("RMS error of %s / max |reference|" % probe)
    ax.set_title(case + ": error against cost")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    out = os.path.join(d, case + "_cost.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print("wrote", out)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    d, cases, only, probe, tmax, ylim = argv[1], [], None, None, None, None
    i = 2
    while i < len(argv):
        if argv[i] == "--paths":
            only = set(argv[i + 1].split(","))
            i += 2
        elif argv[i] == "--probe":
            probe = argv[i + 1]
            i += 2
        elif argv[i] == "--ylim":
            ylim = [float(v) for v in argv[i + 1].split(",")]
            i += 2
        elif argv[i] == "--tmax":
            tmax = float(argv[i + 1])
            i += 2
        else:
            cases.append(argv[i])
            i += 1
    for c in cases:
        series_plot(d, c, only, tmax, ylim)
        cost_plot(d, c, probe)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
