"""cofem.read_probes / read_mbs against Python's csv module on files cofem run wrote; python3 -m cofem
against the program; cofem.sweep on a LocalCluster against the linear relation u ~ F."""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cofem

SRC = os.environ.get("COFEM_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
LUG = os.path.join(SRC, "scenes", "lug_pull.json")
PENDULUM = os.path.join(SRC, "scenes", "mbs", "pendulum.json")


def cofem_m(*args, **kw):
    """python3 -m cofem ARGS (the program that goes with the module)"""
    if cofem.program() is None:
        pytest.skip("no cofem program found")
    return subprocess.run([sys.executable, "-m", "cofem", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def csv_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_python_m_cofem_runs_the_program(tmp_path):
    """python3 -m cofem run SCENE writes what the program writes; its exit status and message are the
    program's (a missing scene: nonzero, the file named)."""
    p = cofem_m("run", LUG, "--steps", "12", "--out", str(tmp_path), "--quiet")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "probes.csv").exists()
    bad = cofem_m("run", str(tmp_path / "nothere.json"))
    assert bad.returncode != 0 and "nothere.json" in bad.stderr
    v = cofem_m("--version")
    assert cofem.version() in v.stdout + v.stderr


def test_read_probes_and_read_mbs_match_the_csv(tmp_path):
    """Every column of probes.csv (FE run) and mbs.csv (mechanism run) as the csv module reads it;
    probe() is the three displacement columns; the mbs channels' last row equals the library's
    channels after the same steps."""
    cofem_m("run", LUG, "--steps", "12", "--out", str(tmp_path / "lug"), "--quiet", check=True)
    t = cofem.read_probes(tmp_path / "lug")
    rows = csv_rows(tmp_path / "lug" / "probes.csv")
    assert t.nrow == len(rows) == 12 and list(t) == list(rows[0])
    for k in t:
        np.testing.assert_array_equal(t[k], [float(r[k]) for r in rows])
    assert t["step"].dtype == np.int64 and t["t"].dtype == np.float64
    u = t.probe("probe")
    assert u.shape == (12, 3) and np.array_equal(u[:, 0], t["probe_ux"])
    a = t.array()
    assert a["probe_uy"][-1] == t["probe_uy"][-1] and len(a) == 12

    cofem_m("run", PENDULUM, "--steps", "100", "--out", str(tmp_path / "pend"), "--quiet", check=True)
    m = cofem.read_mbs(tmp_path / "pend")
    rows = csv_rows(tmp_path / "pend" / "mbs.csv")
    assert m.nrow == len(rows) and list(m) == list(rows[0])
    for k in m:
        np.testing.assert_array_equal(m[k], [float(r[k]) for r in rows])
    with cofem.Mechanism(PENDULUM) as mech:
        mech.step(100)
        np.testing.assert_allclose(mech.channel("hinge_angle"), m["hinge_angle"][-1], rtol=1e-10)
        np.testing.assert_allclose(mech.channel("tip_position"), m.vector("tip_position")[-1], rtol=1e-10, atol=1e-12)


def test_read_csv_errors_name_file_and_line(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n3\n")
    with pytest.raises(ValueError, match=r"x.csv: line 3: 1 values"):
        cofem.read_csv(p)
    p.write_text("a,b\n1,zz\n")
    with pytest.raises(ValueError, match=r"x.csv: column 'b'"):
        cofem.read_csv(p)


def test_sweep_on_a_local_cluster_is_linear_in_the_load(tmp_path):
    """Four static runs of the lug without gravity at loads F = 1e4 .. 8e4 N on a LocalCluster of two
    worker processes, one case made to fail (a negative Young's modulus): the failure is reported in its
    row with the program's message, the three others give u = c F (small loads: co-rotational statics
    is linear to about 2e-5 here: u/F spread 2.0e-5 of its mean measured over the four loads) and match the
    same scene's linear FEM column; each case's table row is its static.csv's last row."""
    pytest.importorskip("distributed")
    base = json.load(open(LUG))
    base["gravity"] = [0, 0, 0]
    loads = [1e4, 2e4, 4e4, 8e4]
    cases = [{"loads.0.force": [F, 0, 0]} for F in loads]
    cases[2]["material.E"] = -1.0  # made to fail
    res = cofem.sweep(base, cases, base_dir=os.path.dirname(LUG), command="static", n_workers=2,
                      out=tmp_path / "sweep")
    tab = res.table
    assert list(tab["ok"]) == [True, True, False, True]
    assert [c for c, _ in res.failures] == [2]
    assert "material" in res.failures[0][1] and "E" in res.failures[0][1], res.failures
    assert np.isnan(tab["probe_ux"][2])
    ok = tab["ok"]
    F, u = tab["loads.0.force[0]"][ok], tab["probe_ux"][ok]
    c = u / F
    assert u.min() > 0 and np.all(tab["load_factor"][ok] == 1)
    assert np.ptp(c) / c.mean() < 1e-4, c                        # u proportional to F (2.0e-5 measured)
    np.testing.assert_allclose(u, tab["probe_ux_linear"][ok], rtol=1e-4)  # and to linear FEM (2.3e-5 measured)
    for i in np.flatnonzero(ok):                                 # the table is the runs' own files
        row = csv_rows(os.path.join(res.out_dirs[i], "static.csv"))[-1]
        assert tab["probe_ux"][i] == float(row["probe_ux"])


def test_sweep_same_code_against_a_scheduler_address(tmp_path):
    """The same call given a running scheduler's address (here a LocalCluster's) instead of making one:
    the same table as the local sweep of the same cases."""
    distributed = pytest.importorskip("distributed")
    base = json.load(open(LUG))
    base["gravity"] = [0, 0, 0]
    cases = [{"loads.0.force": [F, 0, 0]} for F in (1e4, 3e4)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        res = cofem.sweep(base, cases, base_dir=os.path.dirname(LUG), command="static", scheduler=lc.scheduler_address)
    assert not res.failures and list(res.table["ok"]) == [True, True]
    ref = cofem.sweep(base, cases, base_dir=os.path.dirname(LUG), command="static", n_workers=1)
    np.testing.assert_array_equal(res.table["probe_ux"], ref.table["probe_ux"])


def test_lug_results_example(tmp_path):
    """python/examples/lug_results.py runs the lug and writes its two PNGs; the run it plots, read back,
    holds the static solution while the load is held (the ramp is slow: the probe at t = 0.35 s is
    `cofem static`'s at full load, 0.03% measured, 1% allowed)."""
    script = os.path.join(SRC, "python", "examples", "lug_results.py")
    p = subprocess.run([sys.executable, script, "--scene", LUG, "--out", str(tmp_path), "--steps", "40",
                        "--increments", "4"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode == 77:
        pytest.skip(p.stdout.strip())
    assert p.returncode == 0, p.stdout
    for png in ("lug_probe.png", "lug_load_displacement.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, png
    run = cofem.read_probes(tmp_path / "run")
    st = cofem.read_csv(tmp_path / "static" / "static.csv")
    held = np.argmin(np.abs(run["t"] - 0.35))
    assert st["load_factor"][-1] == 1 and st.nrow == 5
    np.testing.assert_allclose(run.probe("probe")[held, 0], st["probe_ux"][-1], rtol=1e-2)


def test_door_mass_sweep_is_sixteen_runs_one_after_another(tmp_path):
    """The mass of the door on the FE hinge (scenes/mbs/door_on_fe_hinge.json, the issue's door: a co-rotational
    hinge carrying the swinging door) over 16 values on a LocalCluster, the 8th made to fail (a negative mass),
    30 steps each (0.3 s of the 3 s scene: 16 full runs twice take 6 minutes on two cores, 30 steps about 1.3 s
    a run): the table's rows are, to the last printed digit, the last rows of mbs.csv of 16 `cofem run`s of
    the same scenes run here one after another, and each case's whole mbs.csv is theirs byte for byte; the
    failed run is reported in its row with the program's message and the sweep goes on."""
    pytest.importorskip("distributed")
    door = os.path.join(SRC, "scenes", "mbs", "door_on_fe_hinge.json")
    masses = [10.0 * (k + 1) for k in range(16)]
    masses[7] = -1.0
    steps = ["--steps", "30"]
    res = cofem.sweep(door, [{"bodies.1.mass": m} for m in masses], args=steps, n_workers=2, out=tmp_path / "sweep")
    assert list(res.table["ok"]) == [k != 7 for k in range(16)]
    assert len(res.failures) == 1 and res.failures[0][0] == 7, res.failures
    assert "mass" in res.failures[0][1] and "door" in res.failures[0][1], res.failures
    np.testing.assert_array_equal(res.table["bodies.1.mass"], masses)
    base = json.load(open(door))
    base["bodies"][0]["flexible"]["scene"] = os.path.join(SRC, "scenes", "hinge_pull.json")  # beside the copies
    swing = []
    for k, m in enumerate(masses):
        scene = json.loads(json.dumps(base))
        scene["bodies"][1]["mass"] = m
        path = tmp_path / f"seq_{k}.json"
        path.write_text(json.dumps(scene))
        p = subprocess.run([cofem.program(), "run", str(path), *steps, "--out", str(tmp_path / f"seq_{k}"), "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if k == 7:
            assert p.returncode != 0 and np.isnan(res.table["t"][k])
            assert p.stderr.strip().splitlines()[-1].split(".json: ", 1)[1] in res.failures[0][1]  # the program's words
            continue
        assert p.returncode == 0, p.stderr
        seq_csv = tmp_path / f"seq_{k}" / "mbs.csv"
        last = csv_rows(seq_csv)[-1]
        assert float(last["step"]) == 30
        for col, v in last.items():
            assert res.table[col][k] == float(v), (k, col)
        assert (open(os.path.join(res.out_dirs[k], "mbs.csv")).read() == seq_csv.read_text()), k
        swing.append(float(last["door_omega_y"]))
    # the mass changes the motion (the door's rate after 0.3 s: 0.23 rad/s at 10 kg, -0.74 at 160 kg, 2026-11-28):
    # the cases did differ
    assert np.ptp(swing) > 0.1, swing
