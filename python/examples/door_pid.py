#!/usr/bin/env python3
"""A closed loop around the simulation: a PID motor at the pin of the door on the FE hinge
(scenes/mbs/door_pid.json: door_on_fe_hinge.json at rest, without its stop spring) swings the
40 kg door up to 80 degrees about the pin's horizontal axis and holds it there against gravity.

The run starts from static equilibrium (Mechanism.static: the hinge already carries the door). Each
step the controller reads the pin's angle and the door's angular velocity and sets the motor
torque on the door (reacting on the wall) for the next step:
    theta_ref(t) = 80 deg * s(t / T_ramp),  s(x) = 3x^2 - 2x^3 (0 <= x <= 1; 1 after)
    e = theta_ref - theta,  tau = Kp e + Ki int e dt + Kd (omega_ref - omega_f)
(omega_f: omega through a first-order low-pass of 0.05 s, which keeps the hinge's vibration out of the
loop)
with Kp = I wn^2, Kd = 2 zeta wn I, Ki = Kp wn / 4 (I: the door's inertia about the pin, 56 kg m^2;
wn = 6 rad/s, zeta = 1); the integral term takes the gravity torque m g d sin(theta) it holds.

    PYTHONPATH=python COFEM_BUILD=build python3 python/examples/door_pid.py --out out/door_pid
writes door_pid.csv (t, reference, angle, omega, torque, the pin's reaction, the hinge's peak von Mises
stress) and door_pid.png (matplotlib; skipped with a message when it is not installed), and
door_pid_replay.json: the same scene with the motor's torque as recorded, a "torque" force whose scale
is a "table" function through the step ends (the torque set before step k acts at t_(k+1), where the
step evaluates its forces; exact times, as the run's clock has them), so that

    cofem run --static out/door_pid/door_pid_replay.json --out out/door_pid/replay

runs the same motion without Python; its mbs.csv has the hinge's peak von Mises per step
(hinge_von_mises_max), which python/tests/test_drive.py compares with this run's."""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cofem  # noqa: E402
from cofem.sweep import absolute_paths  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCENE = os.path.normpath(os.path.join(HERE, "..", "..", "scenes", "mbs", "door_pid.json"))


def smoothstep(x):
    x = min(max(x, 0.0), 1.0)
    return 3 * x * x - 2 * x ** 3, (6 * x - 6 * x * x)


def write_replay(scene_path, out_path, times, torques):
    """the scene with the recorded motor torque as a scene force: torque (0, 1, 0) N m on the door scaled by a
    table through (times[k], torques[k]) (piecewise linear; the steps evaluate it at their ends only, where
    it is the very value the controller held), the hinge's FE scene path made absolute, and the hinge's
    peak von Mises as an output channel"""
    with open(scene_path) as f:
        scene = json.load(f)
    scene = absolute_paths(scene, os.path.dirname(os.path.abspath(scene_path)))
    scene.setdefault("forces", []).append({
        "name": "motor", "type": "torque", "body": "door", "torque": [0.0, 1.0, 0.0],
        "scale": {"type": "table", "t": [float(t) for t in times], "values": [float(v) for v in torques]}})
    scene["time"]["end"] = float(times[-1])
    scene["output"]["channels"].append({"body": "hinge", "what": "von_mises_max"})
    scene["output"].pop("dir", None)
    with open(out_path, "w") as f:
        json.dump(scene, f, indent=1)  # floats as repr: they parse back to the same bits


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scene", nargs="?", default=DEFAULT_SCENE)
    ap.add_argument("--target", type=float, default=80.0, help="angle to reach and hold [deg] (80)")
    ap.add_argument("--ramp", type=float, default=1.5, help="time of the reference's swing [s] (1.5)")
    ap.add_argument("--end", type=float, default=4.0, help="simulated time [s] (4)")
    ap.add_argument("--out", default=".", help="folder for door_pid.csv and door_pid.png")
    ap.add_argument("--no-static", action="store_true",
                    help="start from the unloaded hinge (default: from static equilibrium, the hinge carrying the door)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    inertia = 16.0 + 40.0 * 1.0 ** 2          # about the pin: I_com + m d^2 [kg m^2]
    wn, zeta = 6.0, 1.0
    kp, kd = inertia * wn ** 2, 2 * zeta * wn * inertia
    ki = kp * wn / 4
    tf = 0.05                                   # derivative filter [s]
    target = np.radians(a.target)
    rows = []
    clock = [0.0]     # the run's own times t_1, t_2, ... (mech.time after each step), for the replay
    with cofem.Mechanism(a.scene) as mech:
        if not a.no_static:
            mech.static()  # the hinge carrying the door's weight at t = 0: no shock when the run starts
        h = mech.dt
        integral = 0.0
        for k in range(int(round(a.end / h)) + 1):
            t = mech.time
            s, ds = smoothstep(t / a.ramp)
            ref, ref_rate = target * s, target * ds / a.ramp
            theta = mech.joint_angle("pin")
            omega = mech.channel("door_omega")[1]   # about the pin's axis (global y)
            # the derivative through a first-order low-pass (time constant tf): the door's rate carries the
            # FE hinge's vibration, which an unfiltered D term feeds back
            omega_f = omega if k == 0 else omega_f + h / (tf + h) * (omega - omega_f)
            e = ref - theta
            integral += e * h
            tau = kp * e + ki * integral + kd * (ref_rate - omega_f)
            rows.append((t, ref, theta, omega, tau, *mech.reaction("pin"), mech.von_mises("hinge").max()))
            if k * h >= a.end - 1e-12:
                break
            mech.set_load("door", torque=(0.0, tau, 0.0))  # the motor, held for the next step
            mech.step()
            clock.append(mech.time)
    table = np.array(rows)
    write_replay(a.scene, os.path.join(a.out, "door_pid_replay.json"), clock, [0.0] + list(table[:-1, 4]))
    header = "t,reference,angle,omega,torque,pin_reaction_x,pin_reaction_y,pin_reaction_z,hinge_von_mises_max"
    csv = os.path.join(a.out, "door_pid.csv")
    np.savetxt(csv, table, delimiter=",", header=header, comments="", fmt="%.10g")
    hold = table[table[:, 0] >= a.end - 1.0]
    err = np.degrees(np.abs(hold[:, 2] - target)).max()
    print(f"door_pid: angle {np.degrees(table[-1, 2]):.3f} deg at t = {table[-1, 0]:.2f} s (target {a.target} deg); "
          f"largest error over the last second {err:.3f} deg; hinge's peak von Mises {table[:, 8].max() / 1e6:.1f} MPa")
    print(f"  wrote {csv}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("door_pid: matplotlib not installed (Debian python3-matplotlib): no plot")
        return 0
    fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    ax[0].plot(table[:, 0], np.degrees(table[:, 1]), "k--", label="reference")
    ax[0].plot(table[:, 0], np.degrees(table[:, 2]), "C0", label="door angle (pin)")
    ax[0].axhline(a.target, color="0.7", lw=0.8)
    ax[0].set_ylabel("angle [deg]")
    ax[0].legend(loc="lower right")
    ax[0].set_title("PID motor at the door's pin, door on the FE hinge")
    ax[1].plot(table[:, 0], table[:, 4], "C1")
    ax[1].set_ylabel("motor torque [N m]")
    ax[2].plot(table[:, 0], table[:, 8] / 1e6, "C3")
    ax[2].set_ylabel("hinge peak von Mises [MPa]")
    ax[2].set_xlabel("t [s]")
    for x in ax:
        x.grid(alpha=0.3)
    fig.tight_layout()
    png = os.path.join(a.out, "door_pid.png")
    fig.savefig(png, dpi=110)
    print(f"  wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
