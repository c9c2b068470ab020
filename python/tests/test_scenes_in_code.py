"""Scenes built in code (cofem.Scene(dict), cofem.Mechanism(dict), JSON text): the same numbers as the
same scene read from its file, to the last bit, and the same validation messages (the library parses
both; nothing is validated in Python)."""
import json
import os

import numpy as np
import pytest

import cofem

SRC = os.environ.get("COFEM_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENES = os.path.join(SRC, "scenes")
LUG = os.path.join(SCENES, "lug_pull.json")
DOOR = os.path.join(SCENES, "mbs", "door_on_fe_hinge.json")


def load(path):
    with open(path) as f:
        return json.load(f)


def test_dict_scene_is_the_file_scene_bit_for_bit(tmp_path):
    """The lug from a dict (its mesh path relative, resolved against base_dir) and from JSON text: 30
    steps (through the load's ramp) give the very positions and velocities of the same scene's file.
    Its material has numbers of 17 significant digits: one printed short (%.15g) on the way changes
    the last bits."""
    desc = load(LUG)
    desc["material"].update(E=2.1e11 * (1 + 1e-7 / 7), rho=7850 * (1 + 1e-7 / 7), nu=0.1 + 0.2)
    desc["mesh"] = os.path.relpath(os.path.join(SRC, "meshes", "lug.msh"), tmp_path)
    path = tmp_path / "lug.json"
    path.write_text(json.dumps(desc))
    with cofem.Scene(path) as f, cofem.Scene(desc, base_dir=tmp_path) as d, \
            cofem.Scene(json.dumps(desc, indent=1), base_dir=tmp_path) as t:
        for s in (f, d, t):
            s.step(30)
        assert np.abs(f.displacements).max() > 1e-3          # it moved
        for s in (d, t):
            assert np.array_equal(s.positions, f.positions)  # bit for bit
            assert np.array_equal(s.velocities, f.velocities)
            assert s.time == f.time
        assert d.path == os.path.join(str(tmp_path), "<scene>")


def test_a_changed_dict_changes_the_run():
    """The dict is what runs (not the file beside base_dir): E doubled halves the static displacement
    of linear FEM (u = K^-1 f, K proportional to E)."""
    desc = load(LUG)
    with cofem.Scene(desc, base_dir=SCENES) as a:
        a.static(linear=True)
        u1 = a.probe("probe")
    desc["material"]["E"] *= 2
    with cofem.Scene(desc, base_dir=SCENES) as b:
        b.static(linear=True)
        u2 = b.probe("probe")
    assert abs(u1[0]) > 1e-3
    np.testing.assert_allclose(u2, u1 / 2, rtol=1e-6)


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(colour="red"), 'unknown key "colour"'),
    (lambda d: d["material"].update(E=-1.0), "E = -1"),
    (lambda d: d["loads"][0].update(set="nowhere"), '"loads"[0] names node set "nowhere"'),
    (lambda d: d.update(mesh="nothere.msh"), "nothere.msh"),
])
def test_bad_dict_gives_the_file_message(tmp_path, change, words):
    """A bad key in a dict raises the message the same scene gets as a file (named by base_dir/name
    and the key path), word for word."""
    desc = load(LUG)
    desc["mesh"] = os.path.relpath(os.path.join(SRC, "meshes", "lug.msh"), tmp_path)
    change(desc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(desc))
    with pytest.raises(cofem.Error) as from_file:
        cofem.Scene(path)
    with pytest.raises(cofem.Error) as from_dict:
        cofem.Scene(desc, base_dir=tmp_path, name="bad.json")
    assert words in from_file.value.message
    assert from_dict.value.message == from_file.value.message
    assert from_dict.value.status == from_file.value.status


def test_relative_paths_against_base_dir(tmp_path):
    """Without base_dir the mesh is looked for beside the current folder, and the message says where."""
    desc = load(LUG)
    with pytest.raises(cofem.Error) as e:
        cofem.Scene(desc, base_dir=tmp_path)
    assert os.path.join(str(tmp_path), "../meshes/lug.msh") in e.value.message or "lug.msh" in e.value.message
    with pytest.raises(TypeError):
        cofem.Scene(LUG, base_dir=SCENES)  # base_dir goes with a dict, not a file
    with pytest.raises(ValueError):
        cofem.Scene(desc, base_dir=SCENES, name="a/b.json")


def door_with_inline_hinge():
    """door_on_fe_hinge.json as a dict whose hinge FE scene is a dict too (its mesh path made relative
    to the mechanism's folder, where an inline scene's paths are resolved)"""
    mech = load(DOOR)
    flex = mech["bodies"][0]["flexible"]
    hinge = load(os.path.join(SCENES, "mbs", flex["scene"]))
    hinge["mesh"] = os.path.relpath(os.path.normpath(os.path.join(SCENES, hinge["mesh"])), os.path.join(SCENES, "mbs"))
    flex["scene"] = hinge
    return mech, hinge


def test_mechanism_from_dict_with_inline_fe_body_is_the_file_mechanism(tmp_path):
    """The door on the FE hinge (scenes/mbs/door_on_fe_hinge.json) from dicts, the hinge's FE scene
    inline, steps to the very coordinates and channels of the same mechanism from its files."""
    n = 4
    mech, hinge = door_with_inline_hinge()
    hinge["material"]["E"] = 2.1e11 * (1 + 1e-7 / 7)  # 17 digits (cJSON prints what parses back exactly)
    # the same mechanism from files: the hinge's FE scene beside it, the mechanism naming it
    hinge_file = dict(hinge, mesh=os.path.normpath(os.path.join(SCENES, "mbs", hinge["mesh"])))
    (tmp_path / "hinge.json").write_text(json.dumps(hinge_file))
    mech_file = json.loads(json.dumps(mech))
    mech_file["bodies"][0]["flexible"]["scene"] = "hinge.json"
    (tmp_path / "door.json").write_text(json.dumps(mech_file))
    with cofem.Mechanism(tmp_path / "door.json") as f, cofem.Mechanism(mech, base_dir=os.path.join(SCENES, "mbs")) as d:
        f.step(n)
        d.step(n)
        assert f.time == d.time and np.abs(f.channel("door_omega")).max() > 1  # the door swings
        assert np.array_equal(d.q, f.q) and np.array_equal(d.qd, f.qd)
        cf, cd = f.channels(), d.channels()
        assert list(cf) == list(cd)
        for k in cf:
            assert np.array_equal(cf[k], cd[k]), k


def test_shipped_door_from_dicts_is_the_shipped_file():
    """scenes/mbs/door_on_fe_hinge.json as it ships and as dicts (hinge inline): the same coordinates."""
    with cofem.Mechanism(DOOR) as f, cofem.Mechanism(door_with_inline_hinge()[0], base_dir=os.path.join(SCENES, "mbs")) as d:
        f.step(3)
        d.step(3)
        assert np.array_equal(d.q, f.q) and np.array_equal(d.qd, f.qd)


def test_bad_key_in_inline_fe_scene_names_the_body(tmp_path):
    """An inline FE scene's bad key: the file's message for that key, the scene named by the mechanism
    and the body's key path."""
    mech, hinge = door_with_inline_hinge()
    hinge["time"]["dt"] = "fast"
    with pytest.raises(cofem.Error) as e:
        cofem.Mechanism(mech, base_dir=os.path.join(SCENES, "mbs"), name="door.json")
    msg = e.value.message
    assert msg.startswith(os.path.join(SCENES, "mbs", "door.json") + ': "bodies"[0] (\'hinge\') "flexible" "scene": '
                          '"time.dt"'), msg
    assert msg.count("door.json") == 1, msg
    # the same FE scene as a file: the same words after the scene's name
    hinge = mech["bodies"][0]["flexible"]["scene"]
    hinge["mesh"] = os.path.normpath(os.path.join(SCENES, "mbs", hinge["mesh"]))
    path = tmp_path / "hinge.json"
    path.write_text(json.dumps(hinge))
    with pytest.raises(cofem.Error) as ef:
        cofem.Scene(path)
    assert ef.value.message.split(": ", 1)[1] in msg


def door_in_code():
    """scenes/mbs/door_on_fe_hinge.json written as code, as a user builds it (not read from the file)"""
    return {
        "gravity": [0, 0, -9.81],
        "bodies": [
            {"name": "hinge", "flexible": {"scene": "../hinge_pull.json", "formulation": "corotational",
                                           "supports": "clamp"}},
            {"name": "door", "mass": 40, "com": [0, 0, -1.0], "inertia": [16.0, 16.0, 2.7],
             "position": [0.2105, 0, 0.0512], "omega": [0, 1.5, 0],
             "shape": {"box": [0.9, 0.04, 2.0], "center": [0, 0, -1.0]}},
        ],
        "joints": [{"name": "pin", "type": "revolute", "body1": "hinge", "node1": "load", "body2": "door",
                    "axis": [0, 1, 0]}],
        "forces": [{"name": "stop", "type": "spring", "body1": "door", "point1": [0.2105, 0, -1.95], "body2": "ground",
                    "point2": [0.5105, 0, -1.95], "k": 2000, "c": 60}],
        "time": {"dt": 0.01, "end": 3.0},
        "output": {"every": 1, "channels": [{"body": "door", "what": "omega"}, {"joint": "pin", "what": "reaction"},
                                            {"body": "hinge", "what": "position"}]},
    }


def test_door_built_in_code_writes_the_shipped_scenes_mbs_csv(tmp_path):
    """The door on the FE hinge built as a dict in code, run from Python (Mechanism.run(out=)), writes the
    very mbs.csv `cofem run scenes/mbs/door_on_fe_hinge.json` writes, every column to the last printed digit
    (20 steps: the door swings into the stop spring's range; the FE hinge's threads: one, as the program
    takes for 1228 nodes)."""
    steps = 20
    prog = cofem.program() or os.path.join(SRC, "build", "cofem")
    if not os.access(prog, os.X_OK):
        pytest.skip("no cofem program found")
    import subprocess
    import sys
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([prog, "run", DOOR, "--steps", str(steps), "--out", str(tmp_path / "file"), "--quiet"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    # the Python run in a process of one thread too (CHOLMOD's threaded factorisation sums in another order:
    # 1e-9 relative apart after a step with two threads)
    code = ("import json, sys, cofem\n"
            "with cofem.Mechanism(json.loads(sys.argv[1]), base_dir=sys.argv[2]) as mech:\n"
            "    t = mech.run(int(sys.argv[3]), out=sys.argv[4])\n"
            "print(t['door_omega_y'][-1])\n")
    p = subprocess.run([sys.executable, "-c", code, json.dumps(door_in_code()), os.path.join(SCENES, "mbs"), str(steps),
                        str(tmp_path / "code")], check=True, stdout=subprocess.PIPE, text=True, env=env)
    omega_end = float(p.stdout.split()[-1])
    from_file = (tmp_path / "file" / "mbs.csv").read_text().splitlines()
    from_code = (tmp_path / "code" / "mbs.csv").read_text().splitlines()
    assert len(from_file) == steps + 2 and abs(omega_end - 1.5) > 0.01  # it moved
    assert from_code[0] == from_file[0]
    for k, (a, b) in enumerate(zip(from_code[1:], from_file[1:])):
        assert a == b, f"row {k}:\n  code {a}\n  file {b}"
    assert from_code == from_file
