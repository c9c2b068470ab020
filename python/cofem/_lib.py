"""Loading libcofem.so and declaring the C functions (ctypes)."""
import ctypes
import ctypes.util
import os
import shutil

c_int, c_double, c_char_p, c_size_t, c_void_p = ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
P_double = ctypes.POINTER(c_double)
P_int = ctypes.POINTER(c_int)

SONAME = "libcofem.so.0.1"


HERE = os.path.dirname(os.path.abspath(__file__))
# what pip installs inside the package (setup.py): lib/libcofem.so, bin/cofem, share/cofem
NATIVE = os.path.join(HERE, "_native")
# where this module sits: PREFIX/lib/python3*/*-packages/cofem (cmake --install), or python/cofem
# of the source tree beside build/
_PREFIXES = ("../../build", "../../../..", "../../../../..")


def _candidates():
    """$COFEM_LIB (a file), then $COFEM_BUILD/libcofem.so (a build tree), then the library pip
    installed inside this package, then the loader's search (LD_LIBRARY_PATH, the system's folders),
    then the install this module sits in."""
    if os.environ.get("COFEM_LIB"):
        yield os.environ["COFEM_LIB"]
    if os.environ.get("COFEM_BUILD"):
        yield os.path.join(os.environ["COFEM_BUILD"], "libcofem.so")
    yield os.path.join(NATIVE, "lib", "libcofem.so")
    yield SONAME
    found = ctypes.util.find_library("cofem")
    if found:
        yield found
    for up in _PREFIXES:
        base = os.path.normpath(os.path.join(HERE, up))
        for sub in ("", "lib", "lib64", "lib/x86_64-linux-gnu"):
            yield os.path.join(base, sub, "libcofem.so")


def program():
    """The cofem program that goes with this module: $COFEM_BIN, the one pip installed inside the
    package, PREFIX/bin/cofem of the install this module sits in, $COFEM_BUILD/cofem or the source
    tree's build/cofem, then cofem on PATH; None if there is none."""
    cands = [os.environ.get("COFEM_BIN"), os.path.join(NATIVE, "bin", "cofem")]
    cands += [os.path.normpath(os.path.join(HERE, up, "bin", "cofem")) for up in _PREFIXES[1:]]
    if os.environ.get("COFEM_BUILD"):
        cands.append(os.path.join(os.environ["COFEM_BUILD"], "cofem"))
    cands += [os.path.normpath(os.path.join(HERE, "..", "..", "build", "cofem")), shutil.which("cofem")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        _declare(lib)
        lib._cofem_path = path
        return lib
    raise ImportError("cofem: libcofem.so not found; set COFEM_LIB to the library file or COFEM_BUILD to "
                      "the build folder (tried: " + "; ".join(errors or ["nothing found"]) + ")")


class Reduction_c(ctypes.Structure):
    """Mirror of cfReduction (include/cofem/reduce.h); checked against cf_struct_size."""
    _fields_ = [
        ("version", c_int), ("nnode", c_int), ("ntet", c_int), ("ndof", c_int), ("consistent_mass", c_int),
        ("E", c_double), ("nu", c_double), ("rho", c_double), ("fingerprint", c_double),
        ("source", ctypes.c_char * 512),
        ("nbnode", c_int), ("bnodes", P_int), ("nb", c_int), ("bdof", P_int), ("nk", c_int),
        ("fixed_omega2", P_double),
        ("n", c_int), ("orthonormal", c_int), ("nrigid", c_int),
        ("basis", P_double), ("Kr", P_double), ("Mr", P_double), ("omega2", P_double), ("zeta", P_double),
        ("mass", c_double), ("c", c_double * 3), ("J", c_double * 9),
        ("P", P_double), ("T", P_double), ("S", P_double),
        ("t_constraint", c_double), ("t_normal", c_double), ("t_project", c_double), ("t_ortho", c_double),
        ("t_invariants", c_double), ("t_total", c_double),
        ("npoint", c_int), ("points", ctypes.c_void_p),
        ("nkg", c_int), ("Kg", P_double), ("t_geometric", c_double),
    ]


def _fn(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


def _declare(lib):
    _fn(lib, "cf_last_error", c_char_p)
    _fn(lib, "cf_status_name", c_char_p, c_int)
    _fn(lib, "cf_version", c_char_p)
    _fn(lib, "cf_api_version", c_int)
    _fn(lib, "cf_data_dir", c_char_p)
    _fn(lib, "cf_struct_size", c_size_t, c_char_p)
    _fn(lib, "cf_session_open", c_int, c_char_p, ctypes.POINTER(c_void_p))
    _fn(lib, "cf_session_open_text", c_int, c_char_p, c_char_p, ctypes.POINTER(c_void_p))
    _fn(lib, "cf_session_free", None, c_void_p)
    for name in ("cf_session_nnode", "cf_session_ntet"):
        _fn(lib, name, c_int, c_void_p)
    for name in ("cf_session_time", "cf_session_dt"):
        _fn(lib, name, c_double, c_void_p)
    for name in ("cf_session_x", "cf_session_v", "cf_session_rest", "cf_session_forces"):
        _fn(lib, name, P_double, c_void_p)
    _fn(lib, "cf_session_step", c_int, c_void_p, c_int)
    _fn(lib, "cf_session_set_supports", c_int, c_void_p, c_int)
    _fn(lib, "cf_session_reset", c_int, c_void_p)
    _fn(lib, "cf_session_node_set", c_int, c_void_p, c_char_p, ctypes.POINTER(P_int))
    _fn(lib, "cf_session_probe", c_int, c_void_p, c_char_p, P_double)
    _fn(lib, "cf_session_von_mises", None, c_void_p, P_double)
    _fn(lib, "cf_session_static", c_int, c_void_p, c_double, c_int)
    _fn(lib, "cf_session_reduce", c_int, c_void_p, ctypes.POINTER(c_char_p), c_int, c_int,
        ctypes.POINTER(Reduction_c))
    _fn(lib, "cf_reduction_free", None, ctypes.POINTER(Reduction_c))
    _fn(lib, "cf_mbs_session_open", c_int, c_char_p, ctypes.POINTER(c_void_p))
    _fn(lib, "cf_mbs_session_open_text", c_int, c_char_p, c_char_p, ctypes.POINTER(c_void_p))
    _fn(lib, "cf_mbs_session_free", None, c_void_p)
    for name in ("cf_mbs_session_time", "cf_mbs_session_dt"):
        _fn(lib, name, c_double, c_void_p)
    for name in ("cf_mbs_session_q", "cf_mbs_session_qd"):
        _fn(lib, name, P_double, c_void_p)
    for name in ("cf_mbs_session_nq", "cf_mbs_session_nchannel", "cf_mbs_session_reset"):
        _fn(lib, name, c_int, c_void_p)
    _fn(lib, "cf_mbs_session_step", c_int, c_void_p, c_int)
    _fn(lib, "cf_mbs_session_body", c_int, c_void_p, c_char_p, P_int)
    _fn(lib, "cf_mbs_session_body_pose", c_int, c_void_p, c_int, P_double, P_double)
    _fn(lib, "cf_mbs_session_channel_label", c_char_p, c_void_p, c_int)
    _fn(lib, "cf_mbs_session_channel", c_int, c_void_p, c_int, P_double)
    _declare_drive(lib)
    size = lib.cf_struct_size(b"cfReduction")
    if size != ctypes.sizeof(Reduction_c):
        raise ImportError(f"cofem: cfReduction is {size} bytes in the library, {ctypes.sizeof(Reduction_c)} in "
                          "python/cofem/_lib.py: the module does not match the library")


def _declare_drive(lib):
    """driving a mechanism (include/cofem/mbs.h, "driving"; session.h): the model-level calls take the
    session's model and data pointers"""
    _fn(lib, "cf_mbs_session_model", c_void_p, c_void_p)
    _fn(lib, "cf_mbs_session_data", c_void_p, c_void_p)
    _fn(lib, "cf_mbs_session_joint", c_int, c_void_p, c_char_p, P_int)
    _fn(lib, "cf_mbs_session_driver", c_int, c_void_p, c_char_p, P_int)
    _fn(lib, "cf_mbs_session_flex_size", c_int, c_void_p, c_int, P_int, P_int)
    _fn(lib, "cf_mbs_session_set_node_load", c_int, c_void_p, c_int, c_char_p, P_double)
    _fn(lib, "cf_mbs_session_flex_stress", c_int, c_void_p, c_int, P_double, P_double)
    _fn(lib, "cf_mbs_session_joint_reaction", c_int, c_void_p, c_int, P_double)
    _fn(lib, "cf_mbs_session_static", c_int, c_void_p)
    _fn(lib, "cf_mbs_set_body_load", c_int, c_void_p, c_void_p, c_int, P_double, P_double, P_double)
    _fn(lib, "cf_mbs_set_node_load", c_int, c_void_p, c_void_p, c_int, P_int, c_int, P_double)
    _fn(lib, "cf_mbs_set_driver_target", c_int, c_void_p, c_void_p, c_int, c_double, c_double)
    _fn(lib, "cf_mbs_set_driver_speed", c_int, c_void_p, c_void_p, c_int, c_double)
    _fn(lib, "cf_mbs_driver_value", c_double, c_void_p, c_void_p, c_int)
    _fn(lib, "cf_mbs_set_joint_active", c_int, c_void_p, c_void_p, c_int, c_int)
    _fn(lib, "cf_mbs_set_driver_active", c_int, c_void_p, c_void_p, c_int, c_int)
    _fn(lib, "cf_mbs_flex_nodes", c_int, c_void_p, c_void_p, c_int, P_double, P_double)
    _fn(lib, "cf_mbs_joint_angle", c_double, c_void_p, c_void_p, c_int)
    _fn(lib, "cf_mbs_session_scene", c_void_p, c_void_p)
    _fn(lib, "cf_mbs_csv_header", c_int, c_void_p, ctypes.c_char_p, c_int)
    _fn(lib, "cf_mbs_csv_row", c_int, c_void_p, c_void_p, c_void_p, ctypes.c_long, ctypes.c_char_p, c_int)
