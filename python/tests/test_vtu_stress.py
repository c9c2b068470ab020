"""Stress and strain in the .vtu frames (issue 32, item 4), read back by xml.etree, a reader
independent of the writer, and checked against the analytic uniaxial bar, against a numpy
co-rotated stress computed from the frame's own geometry (SVD polar decomposition), and against
the FE path (cofem.Scene) for the same deformation."""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import cofem

SRC = os.environ.get("COFEM_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))  # the tests may be copied out (test_python_install)
COFEM_BIN = os.environ.get("COFEM_BIN") or cofem.program() or os.path.join(SRC, "build", "cofem")
BAR_MESH = os.path.join(SRC, "meshes", "beam_box_10x2x2.inp")  # 1 x 0.1 x 0.1 m, sets XMIN .. ZMAX
E, NU = 210e9, 0.3
AREA = 0.1 * 0.1


def run_cli(*args):
    if not os.access(COFEM_BIN, os.X_OK):
        pytest.skip(f"{COFEM_BIN} not built")
    subprocess.run([COFEM_BIN, *args], check=True, stdout=subprocess.DEVNULL)


def read_vtu(path):
    """{'points': [n, 3], 'cells': [m, 4], 'point': {name: array}, 'cell': {name: array}}"""
    root = ET.parse(path).getroot()
    piece = root.find("UnstructuredGrid/Piece")
    out = {"npoint": int(piece.get("NumberOfPoints")), "ncell": int(piece.get("NumberOfCells")), "point": {}, "cell": {}}

    def arr(d):
        a = np.array(d.text.split(), dtype=float)
        nc = int(d.get("NumberOfComponents", "1"))
        return a.reshape(-1, nc) if nc > 1 else a

    for key, tag in (("point", "PointData"), ("cell", "CellData")):
        sec = piece.find(tag)
        if sec is not None:
            for d in sec.findall("DataArray"):
                out[key][d.get("Name")] = arr(d)
    out["points"] = arr(piece.find("Points/DataArray"))
    conn = [d for d in piece.find("Cells").findall("DataArray") if d.get("Name") == "connectivity"][0]
    out["cells"] = arr(conn).astype(int).reshape(-1, 4)
    return out


def check_sizes(v):
    n, m = v["npoint"], v["ncell"]
    assert v["point"]["displacement"].shape == (n, 3)
    assert v["point"]["von_mises"].shape == (n,)
    assert v["point"]["strain"].shape == (n, 6)
    assert v["cell"]["von_mises"].shape == (m,)
    assert v["cell"]["strain"].shape == (m, 6)


def bar_scene(tmp_path, force):
    """the bar on three symmetry planes (x at XMIN, y at YMIN, z at ZMIN held), pulled at XMAX: uniaxial
    stress F/A, free lateral contraction"""
    scene = {"mesh": BAR_MESH, "material": {"E": E, "nu": NU, "rho": 7850},
             "fixed": [{"set": "XMIN", "dofs": "x"}, {"set": "YMIN", "dofs": "y"}, {"set": "ZMIN", "dofs": "z"}],
             "loads": [{"set": "XMAX", "force": [force, 0, 0]}],
             "static": {"increments": 2, "tol": 1e-10},
             "time": {"dt": 1e-4, "end": 1e-3},
             "output": {"dir": str(tmp_path / "out"), "vtu_every": 5}}
    p = tmp_path / "bar.json"
    p.write_text(json.dumps(scene))
    return p


@pytest.mark.parametrize("force", [2.1e5, -2.1e5])
def test_bar_static_stress_is_uniaxial(tmp_path, force):
    """cofem static: von Mises = |F/A|, strain xx = F/(A E), yy = zz = -nu F/(A E), shear 0, in every
    element and at every node (linear tetrahedra pass the patch test; the co-rotational solution differs
    from the linear one by O(strain) = 1e-4)."""
    scene = bar_scene(tmp_path, force)
    run_cli("static", str(scene))
    v = read_vtu(tmp_path / "out" / "static.vtu")
    check_sizes(v)
    assert v["npoint"] == 99 and v["ncell"] == 240
    s, e = abs(force) / AREA, force / (AREA * E)
    for where in ("cell", "point"):
        vm, eps = v[where]["von_mises"], v[where]["strain"]
        # measured: von Mises within 5e-12 relative, strain within 1e-15 absolute (2026-11-28)
        np.testing.assert_allclose(vm, s, rtol=1e-9)
        np.testing.assert_allclose(eps[:, 0], e, rtol=1e-9)
        np.testing.assert_allclose(eps[:, 1:3], -NU * e, rtol=1e-9)
        np.testing.assert_allclose(eps[:, 3:], 0, atol=1e-12 * abs(e) * 1e3)


def test_run_frames_carry_stress(tmp_path):
    """cofem run: every frame has the point and cell arrays at the mesh's sizes"""
    scene = bar_scene(tmp_path, 2.1e5)
    run_cli("run", str(scene), "--quiet")
    frames = sorted((tmp_path / "out" / "frames").glob("frame_*.vtu"))
    assert len(frames) >= 2
    for f in frames:
        v = read_vtu(f)
        check_sizes(v)
        assert np.all(np.isfinite(v["cell"]["von_mises"])) and np.all(v["cell"]["von_mises"] >= 0)
    assert read_vtu(frames[-1])["cell"]["von_mises"].max() > 0


def numpy_corotated_von_mises(rest, x, tets, e_mod, nu):
    """independent of the library: F = Ds Dm^-1, R from the SVD (F = U S V^T, R = U V^T), eps = sym(R^T F) - I,
    sigma = lam tr(eps) I + 2 mu eps"""
    lam, mu = e_mod * nu / ((1 + nu) * (1 - 2 * nu)), e_mod / (2 * (1 + nu))
    Dm = np.stack([rest[tets[:, k]] - rest[tets[:, 0]] for k in (1, 2, 3)], axis=2)
    Ds = np.stack([x[tets[:, k]] - x[tets[:, 0]] for k in (1, 2, 3)], axis=2)
    F = Ds @ np.linalg.inv(Dm)
    U, _, Vt = np.linalg.svd(F)
    R = U @ Vt
    G = np.transpose(R, (0, 2, 1)) @ F
    eps = 0.5 * (G + np.transpose(G, (0, 2, 1))) - np.eye(3)
    tr = np.trace(eps, axis1=1, axis2=2)
    sig = 2 * mu * eps + lam * tr[:, None, None] * np.eye(3)
    d = sig - np.trace(sig, axis1=1, axis2=2)[:, None, None] * np.eye(3) / 3
    return np.sqrt(1.5 * np.sum(d * d, axis=(1, 2)))


def node_average(values, tets, vol, nnode):
    num, den = np.zeros(nnode), np.zeros(nnode)
    for k in range(4):
        np.add.at(num, tets[:, k], vol * values)
        np.add.at(den, tets[:, k], vol)
    return num / den


def test_mechanism_fe_body_stress(tmp_path):
    """the hung lug (corotational FE body): its .vtu frames' von Mises equals a numpy co-rotated stress of
    the frame's own geometry, its nodal values the volume-weighted averages; cofem.Mechanism.von_mises
    equals the FE path (cofem.Scene of the lug's FE scene with the same node positions)"""
    lug_fe = os.path.join(SRC, "scenes", "lug_pull.json")
    mech_scene = {"gravity": [0, 0, -9.81],
                  "bodies": [{"name": "lug", "flexible": {"scene": lug_fe, "formulation": "corotational"},
                              "rotation": {"axis": [0, 1, 0], "angle": -0.4}}],
                  "joints": [{"name": "pin", "type": "revolute", "body1": "ground", "body2": "lug", "node2": "load",
                              "axis": [0, 1, 0]}],
                  "time": {"dt": 0.01, "end": 0.05},
                  "output": {"dir": str(tmp_path / "out"), "vtu_every": 5}}
    p = tmp_path / "lug.json"
    p.write_text(json.dumps(mech_scene))
    run_cli("run", str(p), "--quiet")
    v = read_vtu(tmp_path / "out" / "lug_0001.vtu")
    check_sizes(v)
    x = v["points"]
    rest = x - v["point"]["displacement"]
    tets = v["cells"]
    vm_ref = numpy_corotated_von_mises(rest, x, tets, 210e9, 0.3)
    assert vm_ref.max() > 1e4  # the swinging lug is stressed by its own weight
    # the frame's 15 digits of positions over ~mm elements. measured: 4.1e-3 Pa of 5.2e4 Pa, 2026-11-28
    np.testing.assert_allclose(v["cell"]["von_mises"], vm_ref, rtol=0, atol=1e-6 * vm_ref.max())
    Dm = np.stack([rest[tets[:, k]] - rest[tets[:, 0]] for k in (1, 2, 3)], axis=2)
    vol = np.abs(np.linalg.det(Dm)) / 6
    np.testing.assert_allclose(v["point"]["von_mises"], node_average(v["cell"]["von_mises"], tets, vol, len(x)),
                               rtol=1e-9, atol=1e-9 * vm_ref.max())
    # the same deformation through the FE path
    with cofem.Mechanism(p) as mech:
        mech.step(5)
        xm, _ = mech.nodes("lug")
        vm_mech = mech.von_mises("lug")
        vm_nodes = mech.von_mises("lug", nodal=True)
    with cofem.Scene(lug_fe) as s:
        s.positions[:] = xm
        vm_fe = s.von_mises()
    assert vm_fe.max() > 1e4
    # the same element code, its polar decomposition started differently (cold here, warm from rest there):
    # round-off of the strain, 1e-16 x E. measured: 7.7e-5 Pa of 5.2e4 Pa at most, 2026-11-28
    np.testing.assert_allclose(vm_mech, vm_fe, rtol=0, atol=1e-3)
    assert vm_nodes.shape == (len(xm),)


def test_modal_body_frames_carry_stress(tmp_path):
    """a modal body (Craig-Bampton lug) in a mechanism: point and cell arrays of the right sizes, a stress
    that grows from zero as the push bends the lug, and the Python query equal to the frame's values"""
    lug_fe = os.path.join(SRC, "scenes", "lug_pull.json")
    scene = {"gravity": [0, 0, -9.81],
             "bodies": [{"name": "lug", "flexible": {"scene": lug_fe, "interface": ["load"], "modes": 6,
                                                     "reduction": str(tmp_path / "lug.cfred")}}],
             "joints": [{"name": "pin", "type": "revolute", "body1": "ground", "body2": "lug", "node2": "load",
                         "axis": [0, 1, 0]}],
             "forces": [{"name": "push", "type": "force", "body": "lug", "node": "support", "force": [2000, 0, 0]}],
             "time": {"dt": 1e-4, "end": 2e-3},
             "output": {"dir": str(tmp_path / "out"), "vtu_every": 20}}
    p = tmp_path / "modal.json"
    p.write_text(json.dumps(scene))
    run_cli("run", str(p), "--quiet")
    first = read_vtu(tmp_path / "out" / "lug_0000.vtu")
    last = read_vtu(tmp_path / "out" / "lug_0001.vtu")
    check_sizes(last)
    assert first["cell"]["von_mises"].max() == 0  # at rest, undeformed
    assert last["cell"]["von_mises"].max() > 1e3
    with cofem.Mechanism(p) as mech:
        mech.step(20)
        vm = mech.von_mises("lug")
    # measured: 1e-15 relative (the frame prints 15 digits), 2026-11-28
    np.testing.assert_allclose(vm, last["cell"]["von_mises"], rtol=1e-9, atol=1e-9 * vm.max())
