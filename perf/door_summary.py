#!/usr/bin/env python3
"""Issue 19, case 3 (the door on the FE hinge): peak hinge stress and pin displacement per path, and
their errors against the corotational reference, from cofem_compare's door_hinge.compare CSVs.

  python3 perf/door_summary.py perf/results/compare        (writes DIR/door_hinge.peaks.md and .csv)"""
import csv
import math
import sys

DIR = sys.argv[1] if len(sys.argv) > 1 else "perf/results/compare"
rows = list(csv.reader(open("%s/door_hinge.compare_series.csv" % DIR)))
head, data = rows[0], rows[1:]
summ = {r["path"]: r for r in csv.DictReader(open("%s/door_hinge.compare_summary.csv" % DIR))}


def col(p, probe):
    i = head.index("%s:%s" % (p, probe))
    return [float(r[i]) for r in data if r[i] != ""]


ref = "corot"
out = ["| path | modes | coordinates | ms/step | real time | Newton mean/max | peak stress [MPa] (t) | stress vs "
       "corot max / RMS [MPa] | peak pin sag [mm] | sag vs corot max / RMS [mm] | peak pin x-move [mm] | note |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|"]
csvrows = []
S0, Z0, X0 = col(ref, "stress_max"), col(ref, "pin_z"), col(ref, "pin_x")
for p, r in summ.items():
    s, z, x = col(p, "stress_max"), col(p, "pin_z"), col(p, "pin_x")
    dz = [1e3 * (v - z[0]) for v in z]
    dzr = [1e3 * (v - Z0[0]) for v in Z0]
    dx = [1e3 * (v - x[0]) for v in x]
    n = min(len(s), len(S0))
    es = [s[i] - S0[i] for i in range(n)]
    ez = [dz[i] - dzr[i] for i in range(n)]
    imax = max(range(len(s)), key=lambda i: s[i])
    peak_sag = max(dz, key=abs)
    peak_dx = max(dx, key=abs)
    row = {"path": p, "modes": r["modes"] if r["formulation"] == "modal" else "-", "coordinates": r["coordinates"],
           "ms_per_step": float(r["ms_per_step"]), "real_time": float(r["real_time"]),
           "newton": "%s / %s" % (r["newton_mean"], r["newton_max"]), "peak_stress_MPa": max(s),
           "t_peak": imax * 0.01, "stress_err_max": max(map(abs, es)), "stress_err_rms": math.sqrt(sum(e * e for e in es) / n),
           "peak_sag_mm": peak_sag, "sag_err_max": max(map(abs, ez)), "sag_err_rms": math.sqrt(sum(e * e for e in ez) / n),
           "peak_dx_mm": peak_dx, "failed_at": r["failed_at"]}
    csvrows.append(row)
    out.append("| %s | %s | %s | %.3g | %.3gx | %s | %.4g (%.2f s) | %.3g / %.3g | %.4g | %.3g / %.3g | %.4g | %s |" % (
        p, row["modes"], row["coordinates"], row["ms_per_step"], row["real_time"], row["newton"], row["peak_stress_MPa"],
        row["t_peak"], row["stress_err_max"], row["stress_err_rms"], peak_sag, row["sag_err_max"], row["sag_err_rms"],
        peak_dx, ("failed at %s s" % r["failed_at"]) if r["failed_at"] else ""))
open("%s/door_hinge.peaks.md" % DIR, "w").write("\n".join(out) + "\n")
with open("%s/door_hinge.peaks.csv" % DIR, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(csvrows[0].keys()))
    w.writeheader()
    w.writerows(csvrows)
print("\n".join(out))
