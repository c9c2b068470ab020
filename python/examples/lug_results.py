#!/usr/bin/env python3
"""The lug, notebook-style: run it with the cofem program, read its results as named numpy arrays
(cofem.read_probes, cofem.read_csv) and plot them with matplotlib.

    python3 python/examples/lug_results.py [--out DIR] [--steps N] [--increments N]

1. `cofem run` of the lug demo (pulled sideways at its eye, then released): the probe's displacement
   against time -> DIR/lug_probe.png
2. `cofem static` of the same scene: the probe's displacement against the load, co-rotational and
   linear FEM -> DIR/lug_load_displacement.png
Exits 77 when matplotlib is missing (Debian: python3-matplotlib)."""
import argparse
import os
import subprocess
import sys

try:
    import matplotlib
except ImportError:
    print("lug_results: skipped, matplotlib is missing (Debian: python3-matplotlib)")
    sys.exit(77)
matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import cofem  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scene", default=os.path.join(cofem.data_dir(), "scenes", "lug_pull.json"))
    ap.add_argument("--out", default="lug_results", help="folder for the runs and the PNGs")
    ap.add_argument("--steps", type=int, default=100, help="time steps of the run (default 100: 1 s)")
    ap.add_argument("--increments", type=int, default=10, help="load increments of the statics (default 10)")
    a = ap.parse_args()
    prog = cofem.program()
    if prog is None:
        sys.exit("lug_results: the cofem program was not found (COFEM_BIN)")
    os.makedirs(a.out, exist_ok=True)
    run_dir, static_dir = os.path.join(a.out, "run"), os.path.join(a.out, "static")
    subprocess.run([prog, "run", a.scene, "--steps", str(a.steps), "--out", run_dir, "--quiet"], check=True)
    subprocess.run([prog, "static", a.scene, "--out", static_dir, "--increments", str(a.increments)], check=True,
                   stdout=subprocess.DEVNULL)

    # 1. the probe against time: columns by name, [nrow, 3] for a probe
    run = cofem.read_probes(run_dir)
    u = run.probe("probe") * 1e3
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, axis in enumerate("xyz"):
        ax.plot(run["t"], u[:, k], label=f"u_{axis}")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("probe displacement [mm]")
    ax.set_title("lug pulled at its eye (load ramped to 0.3 s, held, removed at 0.6 s)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "lug_probe.png"), dpi=110)

    # 2. load-displacement: static.csv, one row per increment
    st = cofem.read_csv(os.path.join(static_dir, "static.csv"))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(st["probe_ux"] * 1e3, st["load_factor"], "o-", label="co-rotational")
    ax.plot(st["probe_ux_linear"] * 1e3, st["load_factor"], "--", label="linear FEM")
    ax.set_xlabel("probe displacement u_x [mm]")
    ax.set_ylabel("load factor (1 = the scene's loads in full)")
    ax.set_title("lug: load-displacement (cofem static)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "lug_load_displacement.png"), dpi=110)
    print(f"wrote {a.out}/lug_probe.png and {a.out}/lug_load_displacement.png; peak probe u_x "
          f"{u[:, 0].max():.3f} mm at t = {run['t'][u[:, 0].argmax()]:.2f} s; static u_x at full load "
          f"{st['probe_ux'][-1] * 1e3:.3f} mm (linear {st['probe_ux_linear'][-1] * 1e3:.3f} mm)")


if __name__ == "__main__":
    main()
