"""cofem from Python: FE scenes of the co-rotational engine through libcofem.so (ctypes).

    import cofem
    with cofem.Scene("scenes/lug_pull.json") as s:
        s.forces[node] = (0, 1e5, 0)     # extra nodal force [N], added to the scene's loads
        s.step(50)
        print(s.probe("probe"), s.positions[node])
        s.static(scale=0.5)              # co-rotational statics (linear=True: linear FEM)
        red = s.reduce(["load"], nmodes=6)

    scene = json.load(open("scenes/lug_pull.json"))   # or built in code: a dict, or JSON text
    scene["material"]["E"] = 70e9
    with cofem.Scene(scene, base_dir="scenes") as s:   # relative paths in it against base_dir
        s.step(10)

    with cofem.Mechanism("scenes/mbs/slider_crank.json") as mech:   # a mechanism scene (docs/mbs.md)
        mech.step(100)
        x, R = mech.pose("crank")        # body frame: origin [3], rotation [3, 3]
        print(mech.channels())           # the scene's output channels, as cofem run's mbs.csv
        mech.set_load("crank", torque=(0, 0, 2.0))    # driving, held until changed (docs/mbs.md):
        mech.set_driver("crank_speed", speed=100.0)  # set_node_load, set_joint_active, nodes, von_mises
        table = mech.run(100, control=None)  # the channels as one structured array (mech.columns)

positions, velocities, rest and forces are numpy views of the library's own arrays (no copy; they
follow every step). They are attributes that cannot be rebound (write into them: s.forces[:] = f).
A view keeps the library's memory alive: after close() the session cannot be used, and its memory is
freed when the last view is gone. A Scene or Mechanism is used by one thread at a time: a call while
another thread is inside one raises cofem.Error. Counts and ids are checked integers (a C int).
Errors raise cofem.Error carrying the library's message (cf_last_error()).
"""
import ctypes
import json
import os
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from . import _lib

_L = _lib.load()

__all__ = ["Error", "Scene", "Mechanism", "Reduction", "version", "data_dir", "library_path", "program",
           "read_probes", "read_mbs", "read_csv", "sweep", "SweepResult"]


class Error(RuntimeError):
    """A cofem call failed: status (a negative cfStatus), name (e.g. CF_ERR_PARSE) and the message."""

    def __init__(self, status, message):
        self.status = status
        self.name = _L.cf_status_name(status).decode()
        self.message = message
        super().__init__(f"{message} [{self.name}]")


class Warning(UserWarning):  # noqa: A001 (cofem.Warning, as numpy's)
    """A step or a static solve ended with a positive cfStatus (e.g. PCG not converged)."""


def _check(status):
    if status < 0:
        raise Error(status, _L.cf_last_error().decode(errors="replace"))
    if status > 0:
        msg = _L.cf_last_error().decode(errors="replace")
        warnings.warn(_L.cf_status_name(status).decode() + (f": {msg}" if msg else ""), Warning, stacklevel=3)
    return status


def version():
    """The library's version, e.g. '0.1.0'."""
    return _L.cf_version().decode()


def data_dir():
    """Folder of the installed demo scenes and meshes ($COFEM_DATA overrides)."""
    return _L.cf_data_dir().decode()


def library_path():
    """The libcofem.so that was loaded."""
    return _L._cofem_path


def program():
    """The cofem program that goes with this module (python3 -m cofem runs it), or None."""
    return _lib.program()


def _source(source, base_dir, name, what):
    """(json text or None, path): a scene given as a file path, a dict or JSON text. A dict or JSON
    text is named base_dir/name in the library's messages, and relative paths in it are resolved
    against base_dir (default: the current folder), as for a file base_dir/name."""
    if isinstance(source, dict):
        try:
            text = json.dumps(source, allow_nan=False)  # floats as repr: they parse back to the same bits
        except ValueError:
            raise ValueError(f"{what}: the scene holds a NaN or an infinity, which JSON cannot carry") from None
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        text = source
    else:
        if base_dir is not None or name is not None:
            raise TypeError(f"{what}: base_dir and name go with a scene given as a dict or JSON text, not a file")
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(f"{what}: path must be a str or an os.PathLike, or the scene as a dict or JSON text; "
                            f"not {type(source).__name__}")
        return None, os.fspath(source)
    base = os.path.abspath(_path(base_dir if base_dir is not None else os.getcwd(), "base_dir"))
    name = "<scene>" if name is None else name
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"{what}: name must be a file name without '/' (it names the scene in messages), got {name!r}")
    return text, os.path.join(base, name)


@dataclass
class Reduction:
    """A Craig-Bampton reduction (include/cofem/reduce.h), copied into numpy arrays."""
    nb: int                 # constraint modes (interface DOFs)
    nk: int                 # fixed-interface normal modes
    nrigid: int             # rigid-body modes among the first
    orthonormal: bool
    omega2: np.ndarray      # [n] eigenvalues of (K_r, M_r) [rad^2/s^2]
    freq_hz: np.ndarray     # [n] sign(w^2) sqrt|w^2| / 2 pi
    zeta: np.ndarray        # [n] modal damping ratios
    basis: np.ndarray       # [n, ndof] the modes (rows), zero on fixed DOFs
    Kr: np.ndarray          # [n, n] reduced stiffness
    Mr: np.ndarray          # [n, n] reduced mass
    interface_dofs: np.ndarray  # [nb]
    mass: float
    center: np.ndarray      # [3] centre of mass (rest)

    def displacement(self, q):
        """Nodal displacements [nnode, 3] of the modal coordinates q [n]."""
        return (np.asarray(q, dtype=float) @ self.basis).reshape(-1, 3)


def _copy(ptr, shape):
    n = int(np.prod(shape))
    return np.ctypeslib.as_array(ptr, shape=(n,)).copy().reshape(shape) if n else np.zeros(shape)


_INT_MAX = 2**31 - 1


def _int(value, name, lo=0, hi=_INT_MAX):
    """value as a C int in [lo, hi], or TypeError / ValueError naming the argument (a bool, a float
    or a value past a C int was taken as something else: step(2**32 + 1) ran one step)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} = {int(value)} is out of range [{lo}, {hi}]")
    return int(value)


def _str(value, name):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value.encode()


def _path(value, name="path"):
    """a str or os.PathLike (Scene(None) read a file named "None")"""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or an os.PathLike, not {type(value).__name__}")
    return os.fspath(value)


class _Memory:
    """The C session's memory: freed when the handle is closed *and* no view of its arrays is left
    (each view holds this object), so a view used after close() reads and writes live memory."""

    def __init__(self, h, free):
        self.h, self._free = h, free

    def __del__(self):
        if self.h is not None:
            self._free(self.h)
            self.h = None


class _View:
    """A read-only attribute holding a view (s.forces = x would silently disconnect the array)."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        refresh = getattr(obj, "_refresh", {}).get(self.name)
        if refresh is not None and getattr(obj, "_h", None) is not None:
            refresh(obj._h)  # the C getter brings the array up to date (a GPU body's nodes)
        return obj._views[self.name]

    def __set__(self, obj, value):
        raise AttributeError(f"{self.name} is a view of the library's array and cannot be rebound: write into it "
                             f"({self.name}[:] = ...)")


class _Handle:
    """A C session behind a Python object: views of its arrays, closing, the with statement, one
    thread at a time."""
    _free = None   # name of the C function that frees the handle
    _what = "session"

    def _open(self, h):
        self._mem = _Memory(h, getattr(_L, self._free))
        self._h = h
        self._views = {}
        self._lock = threading.Lock()

    def _view(self, getter, n):
        addr = ctypes.cast(getter(self._h), ctypes.c_void_p).value
        buf = (ctypes.c_double * n).from_address(addr)
        buf._owner = self._mem  # the view keeps the C memory alive, not the session
        return np.frombuffer(buf, dtype=np.float64)

    def _live(self):
        if getattr(self, "_h", None) is None:
            raise Error(-5, f"{getattr(self, 'path', '?')}: the {self._what} is closed")
        return self._h

    def _use(self):
        """the handle for one call, refused while another thread is inside one (CHOLMOD and the
        session's state are not thread-safe: two threads stepping one Mechanism crashed)"""
        h = self._live()
        if not self._lock.acquire(blocking=False):
            raise Error(-5, f"{self.path}: the {self._what} is used from two threads at once; give each thread "
                            f"its own, or serialise the calls")
        return _Locked(self._lock, h)

    def close(self):
        """Close the session (it cannot be used afterwards). Its memory is freed once no view of its
        arrays is left."""
        if getattr(self, "_h", None) is not None:
            with self._use():
                self._h = None
            self._mem = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self._h = None
            self._mem = None


class _Locked:
    def __init__(self, lock, h):
        self.lock, self.h = lock, h

    def __enter__(self):
        return self.h

    def __exit__(self, *exc):
        self.lock.release()


class Scene(_Handle):
    """An FE scene (JSON, docs/scene-format.md) loaded and ready to step on its backend."""
    _free = "cf_session_free"
    _what = "scene"
    positions = _View()
    velocities = _View()
    rest = _View()
    forces = _View()

    def __init__(self, source, base_dir=None, name=None):
        """source: the scene's file, or the scene itself as a dict or JSON text (docs/scene-format.md),
        validated by the library as a file is, with the same messages; its relative paths (the mesh)
        are resolved against base_dir (default: the current folder) and it is named base_dir/name
        in messages (name default "<scene>")."""
        text, path = _source(source, base_dir, name, "Scene")
        h = ctypes.c_void_p()
        if text is None:
            _check(_L.cf_session_open(path.encode(), ctypes.byref(h)))
        else:
            _check(_L.cf_session_open_text(text.encode(), path.encode(), ctypes.byref(h)))
        self.path = path
        self._open(h)
        self.nnode = _L.cf_session_nnode(h)
        self.ntet = _L.cf_session_ntet(h)
        self.dt = _L.cf_session_dt(h)
        # views of the library's arrays: same addresses for the session's life
        n = self.nnode
        self._views["positions"] = self._view(_L.cf_session_x, 3 * n).reshape(n, 3)
        self._views["velocities"] = self._view(_L.cf_session_v, 3 * n).reshape(n, 3)
        self._views["rest"] = self._view(_L.cf_session_rest, 3 * n).reshape(n, 3)
        self._views["rest"].flags.writeable = False
        self._views["forces"] = self._view(_L.cf_session_forces, 3 * n).reshape(n, 3)

    # ---- state -------------------------------------------------------------------------------------
    @property
    def time(self):
        return _L.cf_session_time(self._live())

    @property
    def displacements(self):
        """positions - rest (a new array)."""
        return self.positions - self.rest

    def step(self, n=1):
        """n time steps with the scene's loads plus self.forces. Returns the worst status (0, or a
        positive warning, also issued as cofem.Warning); an error raises cofem.Error."""
        n = _int(n, "n")
        with self._use() as h:
            return _check(_L.cf_session_step(h, n))

    def set_supports(self, active=True):
        with self._use() as h:
            _check(_L.cf_session_set_supports(h, 1 if active else 0))

    def reset(self):
        """Back to rest (t = 0, supports on); self.forces is kept."""
        with self._use() as h:
            _check(_L.cf_session_reset(h))

    def node_set(self, name):
        """Node indices of a node set of the mesh (a copy)."""
        p = _lib.P_int()
        with self._use() as h:
            n = _L.cf_session_node_set(h, _str(name, "name"), ctypes.byref(p))
        _check(min(n, 0))
        return _copy(p, (n,)).astype(np.int64)

    def probe(self, name):
        """Mean displacement [3] of a node set (the scene's probes are node sets)."""
        u = (ctypes.c_double * 3)()
        with self._use() as h:
            _check(_L.cf_session_probe(h, _str(name, "name"), u))
        return np.array(u[:])

    def von_mises(self):
        """Per-element von Mises stress [ntet] of the current state [Pa]."""
        out = np.empty(self.ntet)
        with self._use() as h:
            _L.cf_session_von_mises(h, out.ctypes.data_as(_lib.P_double))
        return out

    # ---- analyses ----------------------------------------------------------------------------------
    def static(self, scale=1.0, linear=False):
        """Statics from rest under scale * (every scene load in full + gravity) + self.forces, as
        `cofem static`: co-rotational by load increments, or linear FEM. positions is left at the
        solution. Returns the status (positive: not converged, a cofem.Warning)."""
        with self._use() as h:
            return _check(_L.cf_session_static(h, float(scale), 1 if linear else 0))

    def reduce(self, interface=(), nmodes=-1):
        """Craig-Bampton reduction with the named node sets as interface (the scene's supports stay
        fixed) and nmodes fixed-interface normal modes (-1: the library's default)."""
        if isinstance(interface, str):
            interface = [interface]
        names = (ctypes.c_char_p * max(1, len(interface)))(*[_str(s, "interface") for s in interface])
        nmodes = _int(nmodes, "nmodes", -1)
        r = _lib.Reduction_c()
        with self._use() as h:
            st = _L.cf_session_reduce(h, names, len(interface), nmodes, ctypes.byref(r))
        try:
            _check(st)
            n, ndof = r.n, r.ndof
            omega2 = _copy(r.omega2, (n,))
            return Reduction(
                nb=r.nb, nk=r.nk, nrigid=r.nrigid, orthonormal=bool(r.orthonormal), omega2=omega2,
                freq_hz=np.sign(omega2) * np.sqrt(np.abs(omega2)) / (2 * np.pi), zeta=_copy(r.zeta, (n,)),
                basis=_copy(r.basis, (n, ndof)), Kr=_copy(r.Kr, (n, n)), Mr=_copy(r.Mr, (n, n)),
                interface_dofs=_copy(r.bdof, (r.nb,)).astype(np.int64), mass=r.mass,
                center=np.array(r.c[:]) / r.mass)
        finally:
            _L.cf_reduction_free(ctypes.byref(r))

    def __repr__(self):
        return f"cofem.Scene({self.path!r}: {self.nnode} nodes, {self.ntet} tetrahedra)"


class Mechanism(_Handle):
    """A mechanism scene (JSON with "bodies", docs/mbs.md) loaded and ready to step: rigid, modal
    and FE bodies, joints, drivers and forces, kinematic or dynamic as the scene says.

    q and qd are numpy views of the library's coordinates and their rates (no copy; they follow
    every step and must not be used after close())."""
    _free = "cf_mbs_session_free"
    _what = "mechanism"
    q = _View()
    qd = _View()

    def __init__(self, source, base_dir=None, name=None):
        """source: the mechanism scene's file, or the scene itself as a dict or JSON text (docs/mbs.md),
        relative paths against base_dir, named base_dir/name in messages (as Scene). A flexible body's
        "scene" may be a file or the FE scene itself as a dict (its paths against base_dir too)."""
        text, path = _source(source, base_dir, name, "Mechanism")
        h = ctypes.c_void_p()
        if text is None:
            _check(_L.cf_mbs_session_open(path.encode(), ctypes.byref(h)))
        else:
            _check(_L.cf_mbs_session_open_text(text.encode(), path.encode(), ctypes.byref(h)))
        self.path = path
        self._open(h)
        self.dt = _L.cf_mbs_session_dt(h)
        self.nq = _L.cf_mbs_session_nq(h)
        self._views["q"] = self._view(_L.cf_mbs_session_q, self.nq)
        self._views["qd"] = self._view(_L.cf_mbs_session_qd, self.nq)
        # a linearly coupled FE body on the GPU keeps its nodes on the device between steps: each
        # access of q or qd asks the library for them (cf_mbs_sync; nothing to do on the CPU)
        self._refresh = {"q": _L.cf_mbs_session_q, "qd": _L.cf_mbs_session_qd}
        n = _L.cf_mbs_session_nchannel(h)
        self.channel_labels = [_L.cf_mbs_session_channel_label(h, c).decode() for c in range(n)]

    @property
    def time(self):
        return _L.cf_mbs_session_time(self._live())

    def step(self, n=1):
        """n steps (kinematic or dynamic as the scene says). Returns the worst status (0, or a
        positive warning, also issued as cofem.Warning); an error raises cofem.Error."""
        n = _int(n, "n")
        with self._use() as h:
            return _check(_L.cf_mbs_session_step(h, n))

    def reset(self):
        """Back to the initial configuration (t = 0)."""
        with self._use() as h:
            _check(_L.cf_mbs_session_reset(h))

    def body(self, name):
        """Body id by name ("ground" included)."""
        b = ctypes.c_int()
        with self._use() as h:
            _check(_L.cf_mbs_session_body(h, _str(name, "name"), ctypes.byref(b)))
        return b.value

    def pose(self, body):
        """The body's frame now: origin [3] and rotation [3, 3] (body to global). body: name or id."""
        b = self.body(body) if isinstance(body, str) else _int(body, "body", -1)
        x = np.empty(3)
        R = np.empty(9)
        with self._use() as h:
            _check(_L.cf_mbs_session_body_pose(h, b, x.ctypes.data_as(_lib.P_double), R.ctypes.data_as(_lib.P_double)))
        return x, R.reshape(3, 3)

    def position(self, body):
        """Origin [3] of the body's frame now."""
        return self.pose(body)[0]

    def channel(self, c):
        """The scene's output channel c (index or label) now: 1 or 3 values."""
        i = self.channel_labels.index(c) if isinstance(c, str) else _int(c, "channel", 0, len(self.channel_labels) - 1)
        v = np.empty(3)
        with self._use() as h:
            n = _L.cf_mbs_session_channel(h, i, v.ctypes.data_as(_lib.P_double))
        _check(min(n, 0))
        return v[:n].copy()

    def channels(self):
        """All output channels now: {label: array of 1 or 3 values}."""
        return {label: self.channel(i) for i, label in enumerate(self.channel_labels)}

    # ---- driving, step by step (docs/python.md): each input is held until it is changed ----------
    def _md(self, h):
        return _L.cf_mbs_session_model(h), _L.cf_mbs_session_data(h)

    def _named(self, kind, x):
        """id of a body / joint / driver given by name or id"""
        if not isinstance(x, str):
            return _int(x, kind, -1)
        if kind == "body":
            return self.body(x)
        i = ctypes.c_int()
        with self._use() as h:
            _check(getattr(_L, f"cf_mbs_session_{kind}")(h, _str(x, kind), ctypes.byref(i)))
        return i.value

    @staticmethod
    def _vec3(v, name):
        a = np.ascontiguousarray(v, dtype=float).reshape(-1)
        if a.shape != (3,):
            raise ValueError(f"{name} must have 3 components, not {a.size}")
        return a

    def set_load(self, body, force=(0, 0, 0), point=None, torque=(0, 0, 0)):
        """Applied force [N] at a body point (body coordinates [m]; None: the origin) and torque [N m],
        both global, on a rigid or modal body; replaces its previous applied load. FE bodies: set_node_load."""
        b = self._named("body", body)
        F, T = self._vec3(force, "force"), self._vec3(torque, "torque")
        p = None if point is None else self._vec3(point, "point")
        with self._use() as h:
            m, d = self._md(h)
            _check(_L.cf_mbs_set_body_load(m, d, b, F.ctypes.data_as(_lib.P_double),
                                           None if p is None else p.ctypes.data_as(_lib.P_double),
                                           T.ctypes.data_as(_lib.P_double)))

    def set_node_load(self, body, nodes, force):
        """Force [N] (global) on a node set of a flexible body (FE or modal), shared equally by its nodes:
        nodes is the name of a node set of the body's mesh or node indices. Replaces the applied force on
        those nodes (zero removes it)."""
        b = self._named("body", body)
        F = self._vec3(force, "force")
        with self._use() as h:
            if isinstance(nodes, str):
                _check(_L.cf_mbs_session_set_node_load(h, b, _str(nodes, "nodes"), F.ctypes.data_as(_lib.P_double)))
                return
            idx = np.ascontiguousarray(nodes, dtype=np.int32).reshape(-1)
            m, d = self._md(h)
            _check(_L.cf_mbs_set_node_load(m, d, b, idx.ctypes.data_as(_lib.P_int), idx.size,
                                           F.ctypes.data_as(_lib.P_double)))

    def set_driver(self, driver, target=None, speed=None, ramp=0.0):
        """A driver (a motor) set by a controller: target (its value [rad or m], reached from the value now
        in a cubic blend over ramp [s]; 0: at once) or speed [rad/s or m/s] (from the value now)."""
        k = self._named("driver", driver)
        if (target is None) == (speed is None):
            raise ValueError("set_driver: give either target or speed")
        with self._use() as h:
            m, d = self._md(h)
            if target is not None:
                _check(_L.cf_mbs_set_driver_target(m, d, k, float(target), float(ramp)))
            else:
                _check(_L.cf_mbs_set_driver_speed(m, d, k, float(speed)))

    def driver_value(self, driver):
        """The driven value now [rad or m] (0 at the t = 0 pose plus the driver's function)."""
        k = self._named("driver", driver)
        with self._use() as h:
            m, d = self._md(h)
            return _L.cf_mbs_driver_value(m, d, k)

    def set_joint_active(self, joint, active=True):
        """Switch a joint (a support, a clamp) off (False) or on again (True)."""
        j = self._named("joint", joint)
        with self._use() as h:
            m, d = self._md(h)
            _check(_L.cf_mbs_set_joint_active(m, d, j, 1 if active else 0))

    def set_driver_active(self, driver, active=True):
        """Switch a driver off (the joint turns freely) or on again."""
        k = self._named("driver", driver)
        with self._use() as h:
            m, d = self._md(h)
            _check(_L.cf_mbs_set_driver_active(m, d, k, 1 if active else 0))

    def joint_angle(self, joint):
        """Angle of a revolute / cylindrical joint now [rad], unwrapped, 0 at the t = 0 pose."""
        j = self._named("joint", joint)
        with self._use() as h:
            m, d = self._md(h)
            return _L.cf_mbs_joint_angle(m, d, j)

    def reaction(self, joint):
        """Force the joint applies on its body2 now [N], global."""
        j = self._named("joint", joint)
        F = np.empty(3)
        with self._use() as h:
            _check(_L.cf_mbs_session_joint_reaction(h, j, F.ctypes.data_as(_lib.P_double)))
        return F

    def static(self):
        """Static equilibrium from the current state (as `cofem static` does for the scene, with the
        applied loads and the drivers held now): the mechanism left at rest there, its reactions set.
        Returns the status (positive: not converged, a cofem.Warning)."""
        with self._use() as h:
            return _check(_L.cf_mbs_session_static(h))

    def _flex_size(self, h, b):
        nn, ne = ctypes.c_int(), ctypes.c_int()
        _check(_L.cf_mbs_session_flex_size(h, b, ctypes.byref(nn), ctypes.byref(ne)))
        return nn.value, ne.value

    def nodes(self, body):
        """Node positions and velocities of a flexible body (FE or modal) now: two [nnode, 3] arrays
        (global [m], [m/s], mesh order)."""
        b = self._named("body", body)
        with self._use() as h:
            nn, _ = self._flex_size(h, b)
            x, v = np.empty((nn, 3)), np.empty((nn, 3))
            m, d = self._md(h)
            _check(_L.cf_mbs_flex_nodes(m, d, b, x.ctypes.data_as(_lib.P_double), v.ctypes.data_as(_lib.P_double)))
        return x, v

    def von_mises(self, body, nodal=False):
        """von Mises stress [Pa] of a flexible body now: per element [ntet], or averaged to the nodes
        (volume-weighted) [nnode] with nodal=True; as the .vtu frames carry it."""
        b = self._named("body", body)
        with self._use() as h:
            nn, ne = self._flex_size(h, b)
            out = np.empty(nn if nodal else ne)
            p = out.ctypes.data_as(_lib.P_double)
            _check(_L.cf_mbs_session_flex_stress(h, b, None if nodal else p, p if nodal else None))
        return out

    @property
    def columns(self):
        """Names of the columns of run()'s table: step, t, then the channels (3-vectors as _x _y _z),
        as in cofem run's mbs.csv."""
        names = ["step", "t"]
        for i, label in enumerate(self.channel_labels):
            n = self.channel(i).size
            names += [label] if n == 1 else [f"{label}_{c}" for c in "xyz"]
        return names

    def _row(self, step):
        return (step, self.time, *np.concatenate([self.channel(i) for i in range(len(self.channel_labels))]
                                                 if self.channel_labels else []))

    def _csv_text(self, fn, *args):
        """a line of cofem run's mbs.csv from the library (cf_mbs_csv_header / cf_mbs_csv_row)"""
        with self._use() as h:
            m, d = self._md(h)
            sc = _L.cf_mbs_session_scene(h)
            pre = (sc,) if fn == "cf_mbs_csv_header" else (m, d, sc, *args)
            need = getattr(_L, fn)(*pre, None, 0)
            buf = ctypes.create_string_buffer(need + 1)
            getattr(_L, fn)(*pre, buf, need + 1)
        return buf.value.decode()

    def run(self, steps, every=1, control=None, out=None):
        """steps steps; control(mech), if given, is called before each one (a controller: it sets loads,
        drivers and joints). Returns the channels as one numpy structured array with named columns
        (self.columns), a row now and then one every `every` steps (and after the last).
        out: a folder (made if missing) for mbs.csv as `cofem run` writes it, the same rows and every column
        (newton_iters, the constraint violations and the energies too), the same digits; the step
        numbers count from this call."""
        steps, every = _int(steps, "steps"), _int(every, "every", 1)
        names = self.columns
        csv = None
        if out is not None:
            os.makedirs(_path(out, "out"), exist_ok=True)
            csv = open(os.path.join(os.fspath(out), "mbs.csv"), "w")
            csv.write(self._csv_text("cf_mbs_csv_header"))
            csv.write(self._csv_text("cf_mbs_csv_row", 0))
        rows = [self._row(0)]
        try:
            for k in range(1, steps + 1):
                if control is not None:
                    control(self)
                self.step()
                if k % every == 0 or k == steps:
                    rows.append(self._row(k))
                    if csv:
                        csv.write(self._csv_text("cf_mbs_csv_row", k))
        finally:
            if csv:
                csv.close()
        table = np.zeros(len(rows), dtype=[(n, np.int64 if n == "step" else float) for n in names])
        for i, r in enumerate(rows):
            table[i] = r
        return table

    def __repr__(self):
        return f"cofem.Mechanism({self.path!r}: {self.nq} coordinates)"


from .results import read_csv, read_mbs, read_probes  # noqa: E402
from .sweep import SweepResult, sweep  # noqa: E402
