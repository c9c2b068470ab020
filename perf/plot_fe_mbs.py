#!/usr/bin/env python3
"""Plot the lumped FE body's cost per step against its node count from cofem_bench_fe_mbs's CSV.

usage: perf/plot_fe_mbs.py perf/results/LABEL/results.csv OUT.png
       perf/plot_fe_mbs.py --family perf/results/LABEL/results.csv OUT.png
The steel bars (section "growth"): ms per step (process CPU time, fastest round) and the stages
(wall clock scaled by that round's CPU / wall time) with the fitted power laws; the lug and the hinge at
the same dt beside them: lumped, corotational and the standalone FE step (rotated Cholesky).
With --family (a run with cofem_bench_fe_mbs --family): the hung lug and its refinements (the
lug's "part" rows and the "family" rows at the family's dt), ms per step against nodes for each
formulation beside the part alone (backward Euler and generalized-alpha Newton steps).
Needs matplotlib (Debian python3-matplotlib)."""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def fit(xs, ys):
    """least-squares slope and factor of log y against log x"""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    n = len(lx)
    mx, my = sum(lx) / n, sum(ly) / n
    b = sum((a - mx) * (c - my) for a, c in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
    return b, math.exp(my - b * mx)


FAMILY_STYLE = [("fe_rc", "o", "C5", "part alone, backward Euler (cofem run)"),
                ("fe_ga", "s", "C2", "part alone, generalized-alpha Newton"),
                ("corot_rotated", "X", "C6", "corotational, rotated factor"),
                ("corotational", "P", "C4", "corotational, exact factor"),
                ("lumped", "*", "C3", "lumped")]


def family(csv_path, out):
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    fam = [r for r in rows if r["section"] == "family"]
    if not fam:
        sys.exit("%s: no family rows (cofem_bench_fe_mbs --family)" % csv_path)
    dt = float(fam[0]["dt"])
    rows = fam + [r for r in rows if r["section"] == "part" and r["part"] == "lug" and float(r["dt"]) == dt]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for variant, marker, color, label in FAMILY_STYLE:
        pts = sorted((int(r["nodes"]), float(r["cpu_ms_per_step"])) for r in rows if r["variant"] == variant)
        if pts:
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, label=label)
    ax.axhline(dt * 1e3, color="gray", linestyle="--", linewidth=1)
    ax.text(500, dt * 1e3 * 1.12, "real time at dt = %g s" % dt, fontsize=8, color="gray")
    ax.set_xlabel("FE nodes (lug, lug_10k, lug_100k)")
    ax.set_ylabel("ms per step (one core)")
    ax.set_title("the lug hung at its eye in a mechanism, dt %g s" % dt, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--family":
        return family(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = list(csv.DictReader(f))
    bars = sorted((r for r in rows if r["section"] == "growth"), key=lambda r: int(r["nodes"]))
    if len(bars) < 2:
        sys.exit("%s: fewer than two growth rows" % sys.argv[1])
    dt = float(bars[0]["dt"])
    x = [int(r["nodes"]) for r in bars]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    series = [("cpu_ms_per_step", "total (CPU time)", "o", "k"),
              ("mbs_factor_ms", "factor (CHOLMOD)", "s", "C3"),
              ("mbs_assemble_ms", "assemble", "^", "C0"),
              ("mbs_forces_ms", "forces (co-rotational)", "v", "C2"),
              ("mbs_solve_ms", "solve + projections", "D", "C1")]
    for key, label, marker, color in series:
        # stage timers are wall clock: scaled by the round's CPU / wall time, as the benchmark prints them
        y = [float(r[key]) * (1 if key == "cpu_ms_per_step" else
                              float(r["cpu_ms_per_step"]) / float(r["wall_ms_per_step_of_fastest"])) for r in bars]
        b, a = fit(x, y)
        ax.loglog(x, y, marker=marker, color=color, linestyle="none", label="%s: ~ nodes^%.2f" % (label, b))
        xs = [x[0], x[-1]]
        ax.loglog(xs, [a * v ** b for v in xs], color=color, linewidth=0.8, alpha=0.7)
    parts = [r for r in rows if r["section"] == "part" and float(r["dt"]) == dt]
    style = {"lumped": ("*", "C4", "lumped"), "corotational": ("X", "C6", "corotational"),
             "fe_rc": ("P", "C5", "FE step (rot. Cholesky)")}
    for r in parts:
        if r["variant"] not in style:
            continue
        marker, color, name = style[r["variant"]]
        ax.loglog([int(r["nodes"])], [float(r["cpu_ms_per_step"])], marker=marker, markersize=10, color=color,
                  linestyle="none")
        ax.annotate("%s %s" % (r["part"], name), (int(r["nodes"]), float(r["cpu_ms_per_step"])),
                    textcoords="offset points", xytext=(6, -3), fontsize=7)
    ax.axhline(dt * 1e3, color="gray", linestyle="--", linewidth=1)
    ax.text(x[0], dt * 1e3 * 1.12, "real time at dt = %g s" % dt, fontsize=8, color="gray")
    ax.set_xlabel("FE nodes")
    ax.set_ylabel("ms per step")
    ax.set_title("lumped FE body in the mechanism (steel bar hung at one end), dt %g s, %s rounds" %
                 (dt, bars[0]["rounds"]), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("wrote", sys.argv[2])


if __name__ == "__main__":
    main()
