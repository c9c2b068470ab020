#!/usr/bin/env python3
"""Plot the lumped FE body's cost per step against its node count from cofem_bench_fe_mbs's CSV.

usage: perf/plot_fe_mbs.py perf/results/LABEL/results.csv OUT.png
The steel bars (section "growth"): ms per step (process CPU time, fastest round) and the stages
(wall clock scaled by that round's CPU / wall time) with the fitted power laws; the lug and the hinge at
the same dt beside them: lumped, corotational and the standalone FE step (rotated Cholesky).
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


def main():
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
