"""Cold start: say so before a fused loop compiles, and compile ahead of time (``prirfed warmup``).

The first call of a fused loop for a geometry compiles it (tens of seconds of CPU; then Numba's
on-disk cache serves every later process). :func:`announce_compile` is called by the verified
wrappers right before a loop runs: if this loop has not been compiled for this geometry in this
cache (a marker file next to Numba's cache index, written after the first successful compile),
it prints to stderr what is happening, how long it took here, and where the cache lives.
:func:`warmup` runs every verified trainer once on a tiny problem of the given geometries.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

__all__ = ["announce_compile", "compiling", "compile_seconds", "marker_path", "mark_compiled", "warmup", "GEOMETRIES"]

_SEEN = set()  # (loop name, dims class) run in this process: no file check any more

#: measured CPU seconds of the first verified call of one geometry with an empty cache (prirfed_loop,
#: the whole trainer family is about twice that; benchmarks/RESULTS.md, "Cold start")
COMPILE_SECONDS = {"sphere": 20, "sphere-retraction": 20, "spd": 30, "lorentz": 20, "stiefel": 60,
                   "stiefel-retraction": 40}
GEOMETRIES = tuple(COMPILE_SECONDS)


def compile_seconds(geometry: str) -> int:
    """The measured cold-compile time of one loop for ``geometry`` (seconds of CPU)."""
    return COMPILE_SECONDS.get(geometry, 30)


def marker_path(dispatcher, dims) -> str | None:
    """Where the marker of (loop, geometry) lives: beside the loop's Numba cache index (None: no disk cache)."""
    from .families import geometry_name

    cache = getattr(dispatcher, "_cache", None)
    path = getattr(cache, "_cache_path", None)
    if path is None:
        return None
    return os.path.join(path, f"prirfed-{dispatcher.py_func.__name__}-{geometry_name(dims)}.compiled")


def mark_compiled(dispatcher, dims) -> None:
    """Record that (loop, geometry) is in the cache (after a successful call)."""
    p = marker_path(dispatcher, dims)
    if p is not None and not os.path.exists(p):
        try:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write("compiled\n")
        except OSError:
            pass


def announce_compile(dispatcher, dims) -> bool:
    """Print the cold-start message to stderr if (loop, geometry) has no marker in the cache; returns
    whether it did. Silent once the loop has run in this process or in this cache."""
    from .families import geometry_name

    if (dispatcher.py_func.__name__, type(dims)) in _SEEN:
        return False
    p = marker_path(dispatcher, dims)
    if p is not None and os.path.exists(p):
        return False
    geometry = geometry_name(dims)
    where = os.path.dirname(p) if p else "memory only (no disk cache)"
    print(f"prirfed: compiling the fused {geometry} loops once ({dispatcher.py_func.__name__}, about "
          f"{compile_seconds(geometry)} s of CPU); cached in {where}", file=sys.stderr, flush=True)
    return True


@contextmanager
def compiling(dispatcher, dims):
    """``with compiling(loop, dims): loop(...)``: the message before a cold compile, the marker after
    a successful call."""
    announce_compile(dispatcher, dims)
    yield
    key = (dispatcher.py_func.__name__, type(dims))
    if key not in _SEEN:
        mark_compiled(dispatcher, dims)
        _SEEN.add(key)


def warmup(geometries=GEOMETRIES, *, verbose=True) -> list:
    """Run every verified trainer once on a tiny problem of each geometry (compiling or loading the
    loops). Returns the (geometry, trainer) pairs run."""
    import numpy as np

    from prirfed.reference.manifolds import SPD, Lorentz
    from prirfed.verified.problems import SPDFrechetMean, SpherePCA, StiefelKPCA
    from prirfed.verified.problems.hsp import HyperbolicStructuredPrediction

    from . import local as vl
    from . import prirfed as vp
    from . import rfed as vf
    from . import rgd as vr

    bad = [g for g in geometries if g not in GEOMETRIES]
    if bad:
        raise ValueError(f"warmup: unknown geometry {bad[0]!r} (expected some of {', '.join(GEOMETRIES)})")
    done = []
    rng = np.random.default_rng(0)
    for g in geometries:
        maps = "retraction" if g.endswith("retraction") else "exp"
        if g.startswith("sphere"):
            P, x0 = SpherePCA([np.array([[1.0, 0.2], [0.6, 0.8]]), np.array([[0.1, 1.0]])]), np.array([1.0, 0.0])
        elif g.startswith("stiefel"):
            P = StiefelKPCA([np.array([[1.0, 0.0, 0.1], [0.0, 2.0, 0.0]]), np.array([[0.0, 0.1, 1.0]])], 1)
            x0 = np.array([[1.0], [0.0], [0.0]])
        elif g == "spd":
            M = SPD(2)
            P, x0 = SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(2)])]), np.eye(2)
        else:
            M = Lorentz(2)
            W = [rng.standard_normal((3, 2))]
            Y = [np.stack([M.random_point(rng) for _ in range(3)])]
            P = HyperbolicStructuredPrediction(W, Y, np.zeros(2), 0.5, 1.0)
            x0 = M.origin()
        calls = {
            "prirfed": lambda: vp.prirfed(P, x0, 1, 1, 0.1, rng, sigma=0.1, tau=1.0, maps=maps),
            "dp_rsgd_local": lambda: vl.dp_rsgd_local(P, 0, x0, 1, 1, 0.1, 1.0, 0.1, rng, maps=maps),
            "rgd": lambda: vr.rgd(P, x0, 0.1, 1, maps=maps),
            "dp_rgd": lambda: vr.dp_rgd(P, x0, 0.1, 1, 1, 0.1, rng, maps=maps),
            "rfedsvrg": lambda: vf.rfedsvrg(P, x0, 1, 1, 0.1, 1, rng, maps=maps),
        }
        for name, call in calls.items():
            if verbose:
                print(f"prirfed warmup: {g} {name}", file=sys.stderr, flush=True)
            call()
            done.append((g, name))
    return done
