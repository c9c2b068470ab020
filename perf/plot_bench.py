#!/usr/bin/env python3
"""Plot time per step against element count from cofem_bench CSV files.

usage: perf/plot_bench.py OUT.png perf/results/LABEL/bench.csv [more.csv ...]
Needs matplotlib (Debian python3-matplotlib)."""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = []
    for path in sys.argv[2:]:
        with open(path) as f:
            rows += list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label, marker in (("ms_per_step_median", "block-Jacobi PCG (warm start)", "o"),
                               ("rotchol_ms_per_step", "rotated-Cholesky PCG", "s"),
                               ("amg_ms_per_step", "AMG PCG", "^")):
        pts = sorted((int(r["elements"]), float(r[key]), r["case"]) for r in rows
                     if r.get(key) not in (None, "", "nan") and not math.isnan(float(r[key])))
        if not pts:
            continue
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle="none", label=label)
        if key == "ms_per_step_median":  # one label per case: on the top series
            for n, t, name in pts:
                ax.annotate(name, (n, t), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.axhline(10.0, color="gray", linestyle="--", linewidth=1)
    ax.text(ax.get_xlim()[0] * 1.1, 11, "real time at dt = 10 ms", fontsize=8, color="gray")
    threads = {r["threads"] for r in rows}
    backends = {r["backend"] for r in rows}
    ax.set_xlabel("tetrahedra")
    ax.set_ylabel("ms per step (median)")
    ax.set_title("cofem step time, backend %s, %s thread(s)" % ("/".join(sorted(backends)), "/".join(sorted(threads))))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)
    print("wrote", sys.argv[1])


if __name__ == "__main__":
    main()
