"""pytest for python/cofem: the numbers are checked against the cofem program (probes.csv,
static.csv), against the integrator's own relations, and against the linear static solution."""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cofem

# the source tree's scenes and meshes ($COFEM_SOURCE_DIR: the tests copied elsewhere and run against
# an installed package, tests/python/test_python_install.sh)
SRC = os.environ.get("COFEM_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
LUG = os.path.join(SRC, "scenes", "lug_pull.json")
# the program that goes with the module under test (an installed package's own, or the build's)
COFEM_BIN = os.environ.get("COFEM_BIN") or cofem.program() or os.path.join(SRC, "build", "cofem")


def last_row(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows[-1]


def run_cli(*args):
    if not os.access(COFEM_BIN, os.X_OK):
        pytest.skip(f"{COFEM_BIN} not built")
    subprocess.run([COFEM_BIN, *args], check=True, stdout=subprocess.DEVNULL)


@pytest.fixture
def lug():
    with cofem.Scene(LUG) as s:
        yield s


def test_version_and_library():
    assert cofem.version().count(".") == 2
    assert os.path.exists(cofem.library_path()) or cofem.library_path().startswith("libcofem")


def test_positions_equal_cli_probes(lug, tmp_path):
    """20 steps here and `cofem run --steps 20`: the probe (mean displacement of the node set
    'probe', computed here from the positions array) equals probes.csv's last row."""
    run_cli("run", LUG, "--steps", "20", "--out", str(tmp_path), "--quiet")
    row = last_row(tmp_path / "probes.csv")
    lug.step(20)
    assert lug.time == pytest.approx(20 * lug.dt)
    nodes = lug.node_set("probe")
    u = (lug.positions[nodes] - lug.rest[nodes]).mean(axis=0)
    ref = np.array([float(row[f"probe_u{k}"]) for k in "xyz"])
    assert abs(ref[0]) > 1e-4  # the lug is being pulled in +x
    np.testing.assert_allclose(u, ref, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(lug.probe("probe"), u, rtol=1e-12, atol=1e-15)


def test_views_follow_the_library_without_copies(lug):
    addr = lug.positions.ctypes.data
    x0 = lug.positions.copy()
    lug.step(1)
    assert lug.positions.ctypes.data == addr            # the same memory, updated in place
    assert not np.array_equal(lug.positions, x0)
    # backward Euler: x1 = x0 + h v1, so the two views must agree
    np.testing.assert_allclose((lug.positions - x0) / lug.dt, lug.velocities, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError):
        lug.rest[0, 0] = 1.0


def test_forces_pull_the_node(lug):
    """An extra force written into the forces view moves the node along it, by the amount that
    linear statics gives for the same force (small force: linear is accurate)."""
    node = lug.node_set("load")[0]
    lug.forces[node] = (0.0, 1e5, 0.0)
    lug.static(scale=0.0, linear=True)
    u_lin = lug.positions[node] - lug.rest[node]
    lug.static(scale=0.0)
    u_cr = lug.positions[node] - lug.rest[node]
    assert u_lin[1] > 1e-4
    assert u_cr[1] == pytest.approx(u_lin[1], rel=0.02)
    lug.forces[:] = 0
    lug.static(scale=0.0, linear=True)
    np.testing.assert_allclose(lug.positions, lug.rest, atol=1e-15)


def test_static_equals_cli(lug, tmp_path):
    """Full scene load: co-rotational and linear probes equal `cofem static`'s static.csv."""
    run_cli("static", LUG, "--out", str(tmp_path))
    row = last_row(tmp_path / "static.csv")
    assert float(row["load_factor"]) == pytest.approx(1.0)
    lug.static(linear=True)
    u_lin = lug.probe("probe")
    lug.static()
    u_cr = lug.probe("probe")
    np.testing.assert_allclose(u_lin, [float(row[f"probe_u{k}_linear"]) for k in "xyz"], rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(u_cr, [float(row[f"probe_u{k}"]) for k in "xyz"], rtol=1e-6, atol=1e-10)
    assert np.all(lug.velocities == 0) and lug.time == 0


def test_reduction_reproduces_linear_statics(lug):
    """Constraint modes are exact for forces on the interface: B K_r^-1 B^T f = K^-1 f there."""
    red = lug.reduce(["load"], nmodes=6)
    load = lug.node_set("load")
    assert red.nb == 3 * len(load) and red.nk == 6 and red.nrigid == 0 and red.orthonormal
    assert np.all(np.diff(red.omega2) >= 0) and red.freq_hz[0] > 0
    np.testing.assert_allclose(red.Mr, np.eye(red.nb + red.nk), atol=1e-8)
    f = np.zeros((lug.nnode, 3))
    f[load, 2] = -2e5 / len(load)
    u_red = red.displacement((red.basis @ f.ravel()) / red.omega2)
    lug.forces[:] = f
    lug.static(scale=0.0, linear=True)
    u = lug.displacements
    assert np.abs(u[load]).max() > 1e-5
    np.testing.assert_allclose(u_red[load], u[load], rtol=0, atol=1e-8 * np.abs(u[load]).max())
    assert red.mass > 0 and red.center.shape == (3,)


def test_supports_released_the_part_falls(tmp_path):
    """The lug without its loads and supports falls freely: every node at v_z = -g t."""
    with open(LUG) as f:
        scene = json.load(f)
    del scene["loads"]
    scene["mesh"] = os.path.join(SRC, "meshes", "lug.msh")
    path = tmp_path / "free.json"
    path.write_text(json.dumps(scene))
    with cofem.Scene(path) as s:
        s.set_supports(False)
        n = 10
        s.step(n)
        np.testing.assert_allclose(s.velocities[:, 2], -9.81 * n * s.dt, rtol=1e-6)
        np.testing.assert_allclose(s.velocities[:, :2], 0, atol=1e-6)
        s.reset()
        assert s.time == 0 and np.array_equal(s.positions, s.rest)
        s.step(n)
        assert np.abs(s.velocities).max() < 1e-2  # supports back on after reset


def test_errors_carry_the_library_message(lug, tmp_path):
    with pytest.raises(cofem.Error) as e:
        cofem.Scene(tmp_path / "missing.json")
    assert "missing.json" in str(e.value) and e.value.status < 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"mesh": "%s", "material": {"E": -1, "nu": 0.3, "rho": 7850}}'
                   % os.path.join(SRC, "meshes", "lug.msh"))
    with pytest.raises(cofem.Error) as e:
        cofem.Scene(bad)
    assert "bad.json" in e.value.message
    with pytest.raises(cofem.Error, match="nope"):
        lug.probe("nope")
    with pytest.raises(cofem.Error, match="nope"):
        lug.reduce(["nope"])
    lug.close()
    with pytest.raises(cofem.Error, match="closed"):
        lug.step()


def test_load_sweep_example(tmp_path):
    """python/examples/load_sweep.py runs and writes its plot; the curve starts at 0 and the
    co-rotational part stiffens relative to linear FEM (the lug's known behaviour)."""
    pytest.importorskip("matplotlib")
    script = os.path.join(SRC, "python", "examples", "load_sweep.py")
    subprocess.run([sys.executable, script, LUG, "--points", "2", "--max", "1", "--out", str(tmp_path)],
                   check=True, stdout=subprocess.DEVNULL)
    assert (tmp_path / "load_sweep.png").stat().st_size > 10000
    data = np.loadtxt(tmp_path / "load_sweep.csv", delimiter=",", skiprows=1)
    assert data.shape == (3, 4) and data[0, 2] == 0 and data[0, 3] == 0
    assert 0 < data[2, 2] < data[2, 3]


# ---- mechanisms ----------------------------------------------------------------------------------
PENDULUM = os.path.join(SRC, "scenes", "mbs", "pendulum.json")


def test_mechanism_channels_match_cofem_run(tmp_path):
    """The scene's channels after 200 steps equal the last row of cofem run's mbs.csv (%.12g)."""
    run_cli("run", PENDULUM, "--steps", "200", "--out", str(tmp_path), "--quiet")
    row = last_row(tmp_path / "mbs.csv")
    with cofem.Mechanism(PENDULUM) as m:
        assert m.step(200) == 0
        assert m.time == pytest.approx(float(row["t"]), rel=1e-12)
        got = m.channels()
        assert list(got) == m.channel_labels and len(got) == 3
        for label, v in got.items():
            cols = [label] if len(v) == 1 else [f"{label}_{a}" for a in "xyz"]
            ref = np.array([float(row[c]) for c in cols])
            assert np.allclose(v, ref, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(ref).max())), label


def test_mechanism_pose_and_views():
    """pose: a rotation (R R^T = I), the tip marker at R (L, 0, 0) from the pinned origin; q and qd
    are views that follow the steps; reset goes back to t = 0 and the initial q."""
    with cofem.Mechanism(PENDULUM) as m:
        q0 = m.q.copy()
        addr = m.q.ctypes.data
        m.step(50)
        assert m.q.ctypes.data == addr and not np.array_equal(m.q, q0)
        assert np.abs(m.qd).max() > 0
        x, R = m.pose("bar")
        assert np.allclose(R @ R.T, np.eye(3), atol=1e-9)
        tip = m.channel("tip_position")
        L = np.linalg.norm(tip - x)
        assert np.allclose(tip, x + R @ np.array([L, 0, 0]), atol=1e-9)
        assert m.body("ground") == -1
        xg, Rg = m.pose("ground")
        assert np.array_equal(xg, np.zeros(3)) and np.array_equal(Rg, np.eye(3))
        m.reset()
        assert m.time == 0 and np.allclose(m.q, q0, atol=1e-12)


def test_mechanism_errors():
    with pytest.raises(cofem.Error, match="nothere.json"):
        cofem.Mechanism(os.path.join(SRC, "nothere.json"))
    with pytest.raises(cofem.Error, match="unknown key \"mesh\""):
        cofem.Mechanism(LUG)  # an FE scene
    with cofem.Mechanism(PENDULUM) as m:
        with pytest.raises(cofem.Error, match="no body 'nope'") as e:
            m.body("nope")
        assert e.value.name == "CF_ERR_ARG"
        with pytest.raises(cofem.Error):
            m.pose(99)
    with pytest.raises(cofem.Error, match="closed"):
        m.step()


# ---- memory safety (issue 31, class 1): each of these crashed, corrupted or misread before ------------
def test_views_outlive_close():
    """A view used after close() reads and writes live memory (the session's memory stays until its
    last view is gone; before, a write after close() corrupted the heap); the session itself refuses."""
    s = cofem.Scene(LUG)
    s.step(3)
    pos, forces = s.positions, s.forces
    before = pos.copy()
    s.close()
    forces[:] = 1.0  # the library's memory, still owned by the views
    assert np.array_equal(pos, before) and np.all(forces == 1.0)
    with pytest.raises(cofem.Error, match="closed"):
        s.step()
    with cofem.Mechanism(PENDULUM) as m:
        q = m.q
    q[:] = q * 1.0  # after the with block's close()
    del pos, forces, q  # the last views: the memory goes now


def test_views_cannot_be_rebound(lug):
    """s.forces = array silently disconnected the array from the solver; now an error that says how"""
    f = lug.forces
    with pytest.raises(AttributeError, match=r"forces\[:\] ="):
        lug.forces = np.zeros_like(f)
    with pytest.raises(AttributeError, match="positions"):
        lug.positions = None
    assert lug.forces is f
    lug.forces[:] = 0.0  # the way to set them
    with cofem.Mechanism(PENDULUM) as m:
        with pytest.raises(AttributeError, match=r"q\[:\] ="):
            m.q = np.zeros(m.nq)


def test_one_thread_at_a_time():
    """a call while another thread is inside one is refused (two threads stepping one Mechanism
    crashed in CHOLMOD or deadlocked); one thread at a time works"""
    import threading
    with cofem.Mechanism(PENDULUM) as m:
        m._lock.acquire()  # another thread inside a call
        try:
            with pytest.raises(cofem.Error, match="two threads"):
                m.step()
        finally:
            m._lock.release()
        errors, done = [], []

        def run():
            try:
                m.step(200)
                done.append(1)
            except cofem.Error as e:
                errors.append(str(e))
        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(done) >= 1 and len(done) + len(errors) == 2
        assert all("two threads" in e for e in errors)


def test_integers_are_checked(lug):
    """counts and ids past a C int wrapped around (step(2**32 + 1) ran one step, pose(2**40)
    returned body 0); bools and floats were taken as counts"""
    t0 = lug.time
    for bad in (2**32 + 1, -1):
        with pytest.raises(ValueError, match="n ="):
            lug.step(bad)
    for bad in (True, 1.5, "3", None):
        with pytest.raises(TypeError, match="n must be an integer"):
            lug.step(bad)
    assert lug.time == t0
    lug.step(np.int64(1))
    with cofem.Mechanism(PENDULUM) as m:
        with pytest.raises(ValueError, match="body ="):
            m.pose(2**40)
        with pytest.raises(ValueError, match="channel ="):
            m.channel(len(m.channel_labels))
        with pytest.raises(TypeError, match="name must be a str"):
            m.body(3)


def test_arguments_are_type_checked(tmp_path):
    """Scene(None) read a file named "None"; a path-like works"""
    import pathlib
    for bad in (None, 3, b"x.json"):
        with pytest.raises(TypeError, match="path must be a str or an os.PathLike"):
            cofem.Scene(bad)
        with pytest.raises(TypeError, match="path must be"):
            cofem.Mechanism(bad)
    with cofem.Scene(pathlib.Path(LUG)) as s:
        assert s.nnode > 0
        with pytest.raises(TypeError, match="name must be a str"):
            s.probe(None)
