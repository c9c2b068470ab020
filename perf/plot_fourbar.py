#!/usr/bin/env python3
"""Issue 19, case 2 (the double four-bar, paper 000 sec. 4.1): the table in the paper's form and the
plots, from cofem_compare's results of scenes/mbs/compare/double_fourbar_k{0..5}.compare.json.

  /usr/bin/python3 perf/plot_fourbar.py perf/results/compare docs/img

Writes DIR/double_fourbar.table.md, DIR/double_fourbar.csv and IMG/compare_fourbar.png (crank 1's
angle over time for every path and flexible-bar count; cost against the number of flexible bars)."""
import csv
import math
import sys

DIR = sys.argv[1] if len(sys.argv) > 1 else "perf/results/compare"
IMG = sys.argv[2] if len(sys.argv) > 2 else "docs/img"
PAPER_COORDS = {"global": [6, 13, 20, 27, 34, 41], "topological": [5, 8, 11, 14, 17, 20]}
PAPER_CPU = {"global": [0.91, 3.30, 6.24, 9.61, 11.51, 15.22], "topological": [4.85, 9.11, 12.62, 15.74, 17.74, 20.92]}


def load(k):
    with open("%s/double_fourbar_k%d.compare_summary.csv" % (DIR, k)) as f:
        summ = {r["path"]: r for r in csv.DictReader(f)}
    with open("%s/double_fourbar_k%d.compare_series.csv" % (DIR, k)) as f:
        rows = list(csv.reader(f))
    head, data = rows[0], rows[1:]
    # k = 5: the corotational path failed after the reference in the same process; its own run
    alone = "%s/double_fourbar_k%d_corot.compare" % (DIR, k)
    if k == 5 and summ.get("corot", {}).get("failed_at"):
        try:
            with open(alone + "_summary.csv") as f:
                summ["corot"] = dict(next(csv.DictReader(f)), path="corot")
            with open(alone + "_series.csv") as f:
                arows = list(csv.reader(f))
            ix = [arows[0].index("corot:" + n) for n in ("tip_x", "tip_y")]
            jx = [head.index("corot:" + n) for n in ("tip_x", "tip_y")]
            for r, a in zip(data, arows[1:]):
                for i, j in zip(ix, jx):
                    r[j] = a[i]
        except OSError:
            pass
    series = {}
    for p in summ:
        ix, iy = head.index(p + ":tip_x"), head.index(p + ":tip_y")
        t, ang = [], []
        prev = None
        for r in data:
            if not r[ix]:
                break
            a = math.atan2(float(r[iy]), float(r[ix]))
            if prev is not None:
                a += 2 * math.pi * round((prev - a) / (2 * math.pi))
            prev = a
            t.append(float(r[0]))
            ang.append(a)
        series[p] = (t, ang)
    return summ, series


def revolutions(ang):
    return (ang[0] - ang[-1]) / (2 * math.pi)  # clockwise from the vertical


rows = []
res = {}
for k in range(6):
    summ, series = load(k)
    res[k] = (summ, series)
    for p, r in summ.items():
        t, ang = series[p]
        failed = r["failed_at"] != ""
        rows.append({"flexible_bars": k, "path": p, "formulation": r["formulation"], "modes": r["modes"],
                     "nodes": r["nodes"], "coordinates": r["coordinates"], "steps": r["steps"],
                     "ms_per_step": r["ms_per_step"], "cpu_s": "%.4g" % (float(r["ms_per_step"]) * int(r["steps"]) / 1e3),
                     "real_time": r["real_time"], "newton_mean": r["newton_mean"], "newton_max": r["newton_max"],
                     "revolutions": "%.4f" % revolutions(ang) if not failed else "", "failed_at": r["failed_at"],
                     "angle_err_max": "%.4g" % max(abs(a - b) for a, b in zip(ang, series[list(summ)[0]][1])),
                     "angle_err_rms": "%.4g" % math.sqrt(sum((a - b) ** 2 for a, b in zip(ang, series[list(summ)[0]][1])) / len(ang))})
with open("%s/double_fourbar.csv" % DIR, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)


def row(k, p):
    for r in rows:
        if r["flexible_bars"] == k and r["path"] == p:
            return r
    return None


paths = [("ref_corot_n2", "corotational, 387-node bars (reference)"), ("corot", "corotational, 92-node bars"),
         ("lumped", "lumped, 92-node bars"), ("modal2", "modal, 2 modes + end layers (92-node bars)"),
         ("modal4", "modal, 4 modes + end layers")]
out = []
out.append("| # flexible bars | " + " | ".join(str(k) for k in range(6)) + " |")
out.append("|---|" + "---|" * 6)
out.append("| paper: coordinates, global / topological | " +
           " | ".join("%d / %d" % (PAPER_COORDS["global"][k], PAPER_COORDS["topological"][k]) for k in range(6)) + " |")
out.append("| paper: CPU time [s], global / topological (MATLAB, 2000s PC) | " +
           " | ".join("%.2f / %.2f" % (PAPER_CPU["global"][k], PAPER_CPU["topological"][k]) for k in range(6)) + " |")
for p, label in paths:
    cells_c, cells_t, cells_r = [], [], []
    for k in range(6):
        r = row(k, "rigid" if k == 0 else p)
        if r is None:
            cells_c.append("-"), cells_t.append("-"), cells_r.append("-")
            continue
        cells_c.append(r["coordinates"])
        if r["failed_at"]:
            cells_t.append("failed at %s s" % r["failed_at"])
        else:
            cells_t.append("%s (%.2f ms/step)" % (r["cpu_s"], float(r["ms_per_step"])))
        cells_r.append(r["revolutions"] or "-")
    out.append("| %s: coordinates | %s |" % (label, " | ".join(cells_c)))
    out.append("| %s: CPU time [s] for 500 steps | %s |" % (label, " | ".join(cells_t)))
    out.append("| %s: revolutions in 5 s | %s |" % (label, " | ".join(cells_r)))
    if p != "ref_corot_n2":
        cells_e = []
        for k in range(6):
            r = row(k, "rigid" if k == 0 else p)
            cells_e.append("-" if (r is None or r["failed_at"] or k == 0) else "%s / %s" % (r["angle_err_max"], r["angle_err_rms"]))
        out.append("| %s: crank 1 angle vs reference, max / RMS [rad] | %s |" % (label, " | ".join(cells_e)))
with open("%s/double_fourbar.table.md" % DIR, "w") as f:
    f.write("\n".join(out) + "\n")
print("\n".join(out))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))
styles = {"ref_corot_n2": "k-", "corot": "C0--", "lumped": "C1:", "modal2": "C2-.", "modal4": "C3-.", "rigid": "k-"}
for k in (0, 3, 5):
    summ, series = res[k]
    for p, (t, ang) in series.items():
        ax[0].plot(t, [(ang[0] - a) / (2 * math.pi) for a in ang], styles.get(p, "-"), lw=1,
                   label="%d flexible: %s" % (k, p), alpha=0.4 + 0.12 * k)
ax[0].set_xlabel("t [s]")
ax[0].set_ylabel("crank 1: revolutions (clockwise)")
ax[0].legend(fontsize=6, ncol=2)
ax[0].set_title("double four-bar: crank 1 (paper: about 2.7 in 5 s)")
for k in (3, 5):
    summ, series = res[k]
    tr, ar = series["ref_corot_n2"]
    for p in ("corot", "lumped", "modal2", "modal4"):
        t, ang = series[p]
        ax[1].plot(t, [(a - b) for a, b in zip(ang, ar)], styles[p], lw=1, label="%d flexible: %s - reference" % (k, p))
ax[1].set_xlabel("t [s]")
ax[1].set_ylabel("crank 1 angle - reference [rad]")
ax[1].legend(fontsize=6)
ax[1].set_title("error against the corotational 387-node bars")
for p in ("ref_corot_n2", "corot", "lumped", "modal2", "modal4"):
    ks, ms = [], []
    for k in range(6):
        r = row(k, "rigid" if k == 0 else p)
        if r and not r["failed_at"]:
            ks.append(k), ms.append(float(r["ms_per_step"]))
    ax[2].semilogy(ks, ms, "o-", color=styles[p].rstrip("-:."), label=p)
ax[2].semilogy(range(6), [1e3 * c / 500 for c in PAPER_CPU["global"]], "kx:", label="paper, global (MATLAB)")
ax[2].semilogy(range(6), [1e3 * c / 500 for c in PAPER_CPU["topological"]], "k+:", label="paper, topological (MATLAB)")
ax[2].set_xlabel("flexible bars")
ax[2].set_ylabel("ms per step (CPU, one core)")
ax[2].legend(fontsize=7)
ax[2].set_title("cost")
fig.tight_layout()
fig.savefig("%s/compare_fourbar.png" % IMG, dpi=110)
print("wrote %s/double_fourbar.table.md, double_fourbar.csv, %s/compare_fourbar.png" % (DIR, IMG))
