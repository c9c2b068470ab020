"""Parameter sweeps on Dask's distributed scheduler: each case one `cofem run` (or `cofem static`) of a
scene changed by the case's keys, in its own process (the cofem program in a subprocess, on a
Dask worker), the results gathered into one table; a case that fails is reported in its row, not
fatal to the sweep.

    res = cofem.sweep("scenes/lug_pull.json",
                      [{"loads.0.force": [f, 0, 0]} for f in (1e5, 2e5, 4e5)],
                      command="static")                     # a LocalCluster made for the sweep
    res = cofem.sweep(scene, cases, scheduler="tcp://head:8786")   # a running cluster's scheduler
    res.table["probe_ux"], res.failures                      # columns by name; [(case, message)]

A case is {key path: value}: "material.E", "loads.0.force" (list indices as numbers), or a tuple of
keys. Each run's result is its CSV's last row (probes.csv, mbs.csv or static.csv), or what
summarize(out_dir) returns (a dict of numbers), computed on the worker.

On a cluster of several machines the workers need cofem (this package, with its program) and the
scene's mesh and FE-scene files at the same absolute paths (relative ones are made absolute here,
against the scene's folder); the cases' output folders are on the workers (out=: a shared folder)."""
import copy
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from . import _lib
from .results import read_csv

__all__ = ["sweep", "SweepResult", "set_key", "absolute_paths"]

_CSV = {"run": ("probes.csv", "mbs.csv"), "static": ("static.csv",)}


@dataclass
class SweepResult:
    """table: {column: numpy array}, one row per case in the order given: "case" (index), "ok" (bool),
    the cases' keys (numbers; vectors as their own column per component, key[0], key[1], ...), "wall_s"
    (the run's seconds) and the result's columns (NaN where a case failed). failures: [(case index,
    message)] (the program's last error line, or the worker's exception). out_dirs: each case's
    output folder (on its worker)."""
    table: dict
    failures: list
    out_dirs: list
    errors: list = field(default_factory=list)

    def array(self):
        """The table as one numpy structured array."""
        out = np.empty(len(self.out_dirs), dtype=[(k, v.dtype) for k, v in self.table.items()])
        for k, v in self.table.items():
            out[k] = v
        return out


def _keys(path):
    if isinstance(path, (tuple, list)):
        return list(path)
    return [int(k) if k.lstrip("-").isdigit() else k for k in str(path).split(".")]


def set_key(scene, path, value):
    """scene (a dict) with the value at the key path ("loads.0.force" or ("loads", 0, "force")) set;
    KeyError naming the path where a key on the way is missing (the last key may be new)."""
    keys = _keys(path)
    node = scene
    for i, k in enumerate(keys[:-1]):
        try:
            node = node[k]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"sweep: key path {path!r}: no {'.'.join(map(str, keys[:i + 1]))!r} in the scene") from None
    try:
        node[keys[-1]] = value
    except (IndexError, TypeError):
        raise KeyError(f"sweep: key path {path!r}: cannot set {keys[-1]!r}") from None
    return scene


def absolute_paths(scene, base_dir):
    """A copy of scene (FE or mechanism) with the file paths cofem resolves against the scene's folder
    made absolute against base_dir: "mesh", and each flexible body's "scene" and "reduction" (an inline
    FE scene's "mesh" too), so that the scene runs from a file written elsewhere."""
    s = copy.deepcopy(scene)

    def fix(d, key):
        if isinstance(d.get(key), str) and not os.path.isabs(d[key]):
            d[key] = os.path.normpath(os.path.join(base_dir, d[key]))

    fix(s, "mesh")
    for b in s.get("bodies", []) if isinstance(s.get("bodies"), list) else []:
        fx = b.get("flexible") if isinstance(b, dict) else None
        if isinstance(fx, dict):
            fix(fx, "scene")
            fix(fx, "reduction")
            if isinstance(fx.get("scene"), dict):
                fix(fx["scene"], "mesh")
    return s


def _last_row(out_dir, command):
    for name in _CSV[command]:
        p = os.path.join(out_dir, name)
        if os.path.exists(p):
            t = read_csv(p)
            return {k: float(v[-1]) for k, v in t.items()} if t.nrow else {}
    raise FileNotFoundError(f"{out_dir}: none of {', '.join(_CSV[command])} written")


def run_case(index, scene, command="run", args=(), out_dir=None, program=None, summarize=None, timeout=None):
    """One case, in this process (a Dask task calls it on a worker): the scene (a dict, paths absolute)
    written to out_dir/scene.json, `cofem COMMAND out_dir/scene.json --out out_dir ARGS`, its result.
    Returns {"case", "ok", "error", "wall_s", "out_dir", "result": {...}}; never raises for a failed
    run."""
    row = {"case": index, "ok": False, "error": "", "wall_s": float("nan"), "out_dir": out_dir, "result": {}}
    try:
        prog = program or _lib.program()
        if not prog:
            raise RuntimeError("the cofem program was not found on this worker (COFEM_BIN, or install cofem)")
        if out_dir is None:
            out_dir = tempfile.mkdtemp(prefix=f"cofem-sweep-{index}-")
        os.makedirs(out_dir, exist_ok=True)
        row["out_dir"] = out_dir
        path = os.path.join(out_dir, "scene.json")
        with open(path, "w") as f:
            json.dump(scene, f, allow_nan=False)
        t0 = time.perf_counter()
        p = subprocess.run([prog, command, path, "--out", out_dir, *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        row["wall_s"] = time.perf_counter() - t0
        if p.returncode != 0:
            # the program's error line ("cofem: error: FILE: KEY ..."), else its last words
            err = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
            said = [ln for ln in err if "error" in ln] or err or [ln for ln in p.stdout.splitlines() if ln.strip()][-1:]
            row["error"] = f"cofem {command} exited with {p.returncode}: " + (said[0] if said else "(no message)")
            return row
        row["result"] = dict(summarize(out_dir)) if summarize else _last_row(out_dir, command)
        row["ok"] = True
    except Exception as e:  # reported in the case's row: one case never stops the sweep
        row["error"] = f"{type(e).__name__}: {e}"
    return row


def _flat(key, value):
    """a case's value as table columns: a number, or a vector's components key[0], key[1], ..."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return {f"{key}[{i}]": v for i, v in enumerate(value)}
    return {key: value}


def _client(scheduler, n_workers):
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise ImportError("cofem.sweep needs Dask's distributed scheduler (Debian: python3-distributed)") from e
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers or min(4, os.cpu_count() or 1), threads_per_worker=1,
                               processes=True, dashboard_address=None)
        return Client(cluster), True, cluster
    if isinstance(scheduler, str):
        return Client(scheduler), True, None
    return scheduler, False, None  # a distributed.Client given by the caller, left open


def sweep(scene, cases, *, command="run", args=(), base_dir=None, scheduler=None, n_workers=None, out=None,
          program=None, summarize=None, timeout=None):
    """Run the scene once per case on Dask's distributed scheduler and gather one table (SweepResult).

    scene: an FE or mechanism scene's file, or the scene as a dict (relative paths against base_dir,
    default the current folder). cases: a list of {key path: value} (set_key). command: "run" or
    "static" (the cofem subcommand); args: more arguments for it (["--steps", "50"]).
    scheduler: None (a LocalCluster of n_workers processes, made and closed here), a scheduler's
    address ("tcp://host:8786") or a distributed.Client. out: a folder for the cases' outputs
    (out/case_000, ...; default a temporary folder per case on its worker). program: the cofem
    program's path on the workers (default: found there as cofem.program() does). summarize:
    f(out_dir) -> {name: number}, run on the worker (default: the CSV's last row). timeout: seconds
    per run (a run past it fails its case)."""
    if command not in _CSV:
        raise ValueError(f"sweep: command must be one of {sorted(_CSV)}, got {command!r}")
    if isinstance(scene, dict):
        base = os.path.abspath(base_dir or os.getcwd())
        desc = scene
    else:
        path = os.path.abspath(os.fspath(scene))
        with open(path) as f:
            desc = json.load(f)
        base = os.path.dirname(path)
    desc = absolute_paths(desc, base)
    cases = list(cases)
    scenes = []
    for c in cases:
        s = copy.deepcopy(desc)
        for k, v in c.items():
            set_key(s, k, v)
        scenes.append(absolute_paths(s, base))  # a case may set a path too
    dirs = [os.path.join(os.path.abspath(out), f"case_{i:03d}") if out else None for i in range(len(cases))]

    client, own_client, cluster = _client(scheduler, n_workers)
    try:
        futures = [client.submit(run_case, i, s, command, list(args), dirs[i], program, summarize, timeout, pure=False)
                   for i, s in enumerate(scenes)]
        rows = []
        for i, fut in enumerate(futures):
            try:
                rows.append(fut.result())
            except Exception as e:  # the worker itself died: the case failed, the sweep goes on
                rows.append({"case": i, "ok": False, "error": f"worker: {type(e).__name__}: {e}", "wall_s": float("nan"),
                             "out_dir": dirs[i], "result": {}})
    finally:
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()

    # one table: the cases' keys, then every result column seen (NaN where a case has none)
    params = {}
    for i, c in enumerate(cases):
        for k, v in c.items():
            for name, x in _flat(k if isinstance(k, str) else ".".join(map(str, k)), v).items():
                params.setdefault(name, [np.nan] * len(cases))[i] = x
    names = []
    for r in rows:
        names += [n for n in r["result"] if n not in names]
    table = {"case": np.arange(len(cases)), "ok": np.array([r["ok"] for r in rows], dtype=bool)}
    for name, vals in params.items():
        try:
            table[name] = np.array(vals, dtype=float)
        except (TypeError, ValueError):
            table[name] = np.array([str(v) for v in vals])
    table["wall_s"] = np.array([r["wall_s"] for r in rows], dtype=float)
    for n in names:
        table[n] = np.array([r["result"].get(n, np.nan) for r in rows], dtype=float)
    failures = [(r["case"], r["error"]) for r in rows if not r["ok"]]
    return SweepResult(table=table, failures=failures, out_dirs=[r["out_dir"] for r in rows],
                       errors=[r["error"] for r in rows])
