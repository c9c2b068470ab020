"""Reading what `cofem run` and `cofem static` write, as named numpy arrays (no pandas needed; a
pandas.DataFrame(result) takes them as they are).

    run = cofem.read_probes("out/lug_pull")     # probes.csv of an FE run
    run["t"], run["probe_ux"]                    # columns by name: 1-D float arrays
    run.probe("probe")                           # [nrow, 3] displacement of one probe [m]
    mbs = cofem.read_mbs("out/door_on_fe_hinge") # mbs.csv of a mechanism run
    st = cofem.read_csv("out/lug/static.csv")    # any of cofem's CSV files

Units are those of the file's columns: SI (m, s, N, rad, J); docs/scene-format.md and docs/mbs.md
list the columns."""
import csv
import os

import numpy as np

__all__ = ["Table", "read_csv", "read_probes", "read_mbs"]


class Table(dict):
    """Columns of a CSV file by name, each a 1-D numpy array (float; int where every value is an
    integer written without a decimal point, as "step"). A dict: keys() are the header's names in
    order; len(table) is the number of columns, table.nrow the number of rows.

    table.array() gives one numpy structured array of the same columns (rows indexable: a[-1])."""

    def __init__(self, columns, path=None):
        super().__init__(columns)
        self.path = path

    @property
    def nrow(self):
        return len(next(iter(self.values()))) if self else 0

    def array(self):
        """The columns as one numpy structured array (a record per row)."""
        dt = [(k, v.dtype) for k, v in self.items()]
        out = np.empty(self.nrow, dtype=dt)
        for k, v in self.items():
            out[k] = v
        return out

    def vector(self, prefix):
        """Columns prefix_x, prefix_y, prefix_z (or prefix_ux, ...) as an [nrow, 3] array."""
        for names in ([f"{prefix}_{a}" for a in "xyz"], [f"{prefix}_u{a}" for a in "xyz"]):
            if all(n in self for n in names):
                return np.stack([self[n] for n in names], axis=1)
        raise KeyError(f"{self.path or 'table'}: no columns {prefix}_x/y/z or {prefix}_ux/uy/uz "
                       f"(columns: {', '.join(self)})")

    def probe(self, name):
        """Displacement [nrow, 3] of the probe (node set) name [m]."""
        return self.vector(name)

    def __repr__(self):
        return f"cofem.Table({self.path!r}: {self.nrow} rows, columns {list(self)})"


def _column(values, path, name):
    try:
        if all(v.lstrip("-").isdigit() for v in values):
            return np.array([int(v) for v in values], dtype=np.int64)
        return np.array([float(v) for v in values], dtype=np.float64)
    except ValueError as e:
        raise ValueError(f"{path}: column {name!r}: {e}") from None


def read_csv(path):
    """A CSV file of cofem (a header of names, then numbers) as a Table. Errors name the file, the line
    and the column."""
    path = os.fspath(path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or not rows[0]:
        raise ValueError(f"{path}: empty file (no header)")
    head = rows[0]
    if len(set(head)) != len(head):
        raise ValueError(f"{path}: line 1: repeated column names")
    body = [r for r in rows[1:] if r]
    for i, r in enumerate(rows[1:], start=2):
        if r and len(r) != len(head):
            raise ValueError(f"{path}: line {i}: {len(r)} values, the header names {len(head)} columns")
    cols = {name: _column([r[k] for r in body], path, name) for k, name in enumerate(head)}
    return Table(cols, path)


def _in_dir(path, name):
    path = os.fspath(path)
    return os.path.join(path, name) if os.path.isdir(path) else path


def read_probes(path):
    """probes.csv of `cofem run` on an FE scene (path: the output folder or the file): columns step, t,
    pcg_iters, pcg_residual, kinetic_energy [J], strain_energy [J] and SET_ux, SET_uy, SET_uz [m] per
    probe (node set)."""
    return read_csv(_in_dir(path, "probes.csv"))


def read_mbs(path):
    """mbs.csv of `cofem run` on a mechanism (path: the output folder or the file): step, t,
    newton_iters, constraint norms, kinetic, potential and energy [J], then the scene's channels
    (angles [rad], positions [m], velocities [m/s], reactions [N], ...)."""
    return read_csv(_in_dir(path, "mbs.csv"))
