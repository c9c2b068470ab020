#!/usr/bin/env python3
"""Issue 19, case 2: the double four-bar of paper 000 (sec. 4.1) with 0..5 flexible bars.

Writes scenes/mbs/compare/double_fourbar_k{K}.json (K bars flexible: crank1, coupler1, crank2,
coupler2, crank3 in that order; the others the rigid bars of scenes/mbs/double_fourbar.json) and the
case files double_fourbar_k{K}.compare.json (paths: corotational on fourbar_bar_n2 as the reference,
corotational, lumped and modal on fourbar_bar_n1). A pin between two flexible bars goes through a
massless virtual body (welded to the first bar's end set, hinged to the second's): an FE body takes
no revolute joint to another FE body. Run from the repository root: python3 perf/gen_fourbar.py
"""
import json

BARS = [  # name, origin, rotation (angle about z), velocity of the origin, omega z
    ("crank1", [0, 0, 0], 1.5707963267948966, [0, 0, 0], -1),
    ("crank2", [1, 0, 0], 1.5707963267948966, [0, 0, 0], -1),
    ("crank3", [2, 0, 0], 1.5707963267948966, [0, 0, 0], -1),
    ("coupler1", [0, 1, 0], 0, [1, 0, 0], 0),
    ("coupler2", [1, 1, 0], 0, [1, 0, 0], 0),
]
ORDER = ["crank1", "coupler1", "crank2", "coupler2", "crank3"]
LOOPS = [("crank1", "coupler1", "crank2"), ("crank2", "coupler2", "crank3")]
# joint, body1 (set), body2 (set), point
JOINTS = [
    ("A0", ("ground", None), ("crank1", "end_a"), [0, 0, 0]),
    ("B0", ("ground", None), ("crank2", "end_a"), [1, 0, 0]),
    ("C0", ("ground", None), ("crank3", "end_a"), [2, 0, 0]),
    ("A1", ("crank1", "end_b"), ("coupler1", "end_a"), [0, 1, 0]),
    ("B1", ("crank2", "end_b"), ("coupler1", "end_b"), [1, 1, 0]),
    ("B2", ("crank2", "end_b"), ("coupler2", "end_a"), [1, 1, 0]),
    ("C1", ("crank3", "end_b"), ("coupler2", "end_b"), [2, 1, 0]),
]


def scene(k):
    flex = set(ORDER[:k])
    bodies = []
    for name, pos, ang, vel, om in BARS:
        b = {"name": name, "position": pos, "velocity": vel, "omega": [0, 0, om]}
        if ang:
            b["rotation"] = {"axis": [0, 0, 1], "angle": ang}
        if name in flex:
            b["flexible"] = {"scene": "fourbar_bar_n1.json", "formulation": "corotational"}
        else:
            b.update({"mass": 1, "com": [0.5, 0, 0], "inertia": [1e-4, 1 / 12, 1 / 12]})
        bodies.append(b)
    # a planar loop of spatial revolutes is over-constrained by 3 unless one of its bars is flexible
    # (its end sets then measure their own axes)
    red = 3 * sum(not (flex & set(loop)) for loop in LOOPS)
    joints = []
    for jn, (b1, s1), (b2, s2), pt in JOINTS:
        j1 = {"type": "revolute", "point": pt, "axis": [0, 0, 1]}
        if b1 in flex and b2 in flex:  # through a virtual body welded to b1's set
            v = "pin_" + jn
            bodies.append({"name": v, "virtual": True, "position": pt})
            joints.append({"name": jn + "_weld", "type": "fixed", "body1": b1, "node1": s1, "body2": v})
            joints.append(dict(name=jn, body1=v, body2=b2, node2=s2, **j1))
            continue
        j = dict(name=jn, body1=b1, body2=b2, **j1)
        if b1 in flex:
            j["node1"] = s1
        if b2 in flex:
            j["node2"] = s2
        joints.append(j)
    return {
        "description": "Double four-bar of paper 000 (sec. 4.1; issue 19, case 2) with %d of its 5 bars flexible (%s): "
        "the bars of scenes/mbs/double_fourbar.json (unit length and mass, gravity, cranks vertical turning clockwise "
        "at 1 rad/s, dt 10 ms, 5 s); a flexible bar is a 1 kg steel bar of tetrahedra (fourbar_bar_n1.json) with "
        "its joints at its end layers; a pin between two flexible bars goes through a massless virtual body. "
        "Written by perf/gen_fourbar.py." % (k, ", ".join(ORDER[:k]) or "none")
        + (" Newton's tol_dq is 1e-6 m here (1e-9 by default): with a rigid, over-constrained loop beside the flexible "
           "one, the iteration stalls at 1e-9..1e-7 m through the change point (every bar horizontal, t = 1.23 s)."
           if k and red else ""),
        "gravity": [0, -9.81, 0],
        "redundant_constraints": red,
        "bodies": bodies,
        "joints": joints,
        "time": {"dt": 0.01, "end": 5.0},
        # the change point (every bar horizontal, t = 1.23 s) with the flexible bars' penalty needs more
        # than the default 50 iterations; with a rigid, over-constrained loop beside a flexible one
        # Newton stalls there at 1e-9..1e-7 m: tol_dq 1e-6 m for those
        "solver": dict({"max_iter": 300}, **({"tol_dq": 1e-6} if k and red else {})),
        "output": {"channels": []},
    }


def case(k):
    probes = [
        {"name": "tip_x", "type": "point", "body": "crank1", "set": "end_b", "origin": [1, 0, 0], "axis": [1, 0, 0]},
        {"name": "tip_y", "type": "point", "body": "crank1", "set": "end_b", "origin": [1, 0, 0], "axis": [0, 1, 0]},
        {"name": "c1_mid_y", "type": "point", "body": "coupler1", "set": "mid", "origin": [0.5, 0, 0], "axis": [0, 1, 0]},
    ]
    paths = [{"name": "rigid" if k == 0 else "corot", "formulation": "corotational"}]
    if k:
        paths = [{"name": "ref_corot_n2", "formulation": "corotational", "fe_scene": "fourbar_bar_n2.json"},
                 {"name": "corot", "formulation": "corotational"},
                 {"name": "lumped", "formulation": "lumped"},
                 {"name": "modal2", "formulation": "modal", "modes": 2},
                 {"name": "modal4", "formulation": "modal", "modes": 4}]
    return {
        "description": "Issue 19, case 2: the double four-bar (paper 000, sec. 4.1, Tables 1-2) with %d flexible bars. "
        "Probes: crank 1's tip (x, y: the revolutions) and coupler 1's mid-section height. Written by "
        "perf/gen_fourbar.py." % k,
        "scene": "double_fourbar_k%d.json" % k,
        # every path with generalized-alpha rho_inf 0.9 (the FE bodies' default; a modal-only scene would
        # take the trapezoidal rule, rho_inf 1)
        "end": 5.0, "dt": 0.01, "sample": 0.01, "damping": 0, "rho_inf": 0.9 if k else 1.0,
        "factor": "exact",  # the corotational parts factored every step ("rotated" fails here: docs/comparison.md)
        "probes": probes,
        "reference": paths[0]["name"],
        "baseline": "corot" if k else paths[0]["name"],
        "paths": paths,
    }


for k in range(6):
    with open("scenes/mbs/compare/double_fourbar_k%d.json" % k, "w") as f:
        json.dump(scene(k), f, indent=1)
        f.write("\n")
    with open("scenes/mbs/compare/double_fourbar_k%d.compare.json" % k, "w") as f:
        json.dump(case(k), f, indent=1)
        f.write("\n")
print("wrote scenes/mbs/compare/double_fourbar_k0..5.json and .compare.json")
