"""Cold start: say so before a fused loop compiles, and compile ahead of time (``prirfed warmup``).

The first call of a fused loop for a geometry compiles it (tens of seconds of CPU; then Numba's
on-disk cache serves every later process). :func:`announce_compile` is called by the verified
wrappers right before a loop runs: if this loop has not been compiled for this geometry in this
cache (a marker file next to Numba's cache index, written after the first successful compile),
it prints to stderr what is happening, how long it took here, and where the cache lives.
:func:`prirfed.verified.trainers.warmup.warmup` (its own module: it imports the loops, which import
this one) runs every verified trainer once on a tiny problem of the given geometries.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

__all__ = ["announce_compile", "compiling", "compile_seconds", "marker_path", "mark_compiled", "GEOMETRIES"]

_SEEN = set()  # (loop name, dims class) run in this process: no file check any more

#: measured CPU seconds of the first verified call of one geometry with an empty cache (prirfed_loop,
#: the whole trainer family is about twice that; benchmarks/RESULTS.md, "Cold start")
COMPILE_SECONDS = {"sphere": 20, "sphere-retraction": 20, "spd": 30, "lorentz": 20, "stiefel": 60,
                   "stiefel-retraction": 40}
GEOMETRIES = tuple(COMPILE_SECONDS)


def compile_seconds(geometry: str) -> int:
    """The measured cold-compile time of one loop for ``geometry`` (seconds of CPU).

    Helper, not a paper formula: a measured constant.

    Parameters
    ----------
    geometry : str
        Geometry name (``sphere``, ``spd``, ...).

    Returns
    -------
    int
        Seconds (30 for an unknown geometry).
    """
    return COMPILE_SECONDS.get(geometry, 30)


def marker_path(dispatcher, dims) -> str | None:
    """Where the marker of (loop, geometry) lives: beside the loop's Numba cache index, named with the
    sources' stamp of :func:`prirfed.verified.jitcache.dependency_stamp` (None: no disk cache).

    Helper, not a paper formula: cache bookkeeping.

    Parameters
    ----------
    dispatcher : numba dispatcher
        A fused loop (Numba dispatcher).
    dims : named tuple
        The geometry (a class of :mod:`prirfed.verified.trainers.families`).

    Returns
    -------
    str or None
        The path, or ``None`` without a disk cache.
    """
    from prirfed.verified.jitcache import dependency_stamp

    from .families import geometry_name

    cache = getattr(dispatcher, "_cache", None)
    path = getattr(cache, "_cache_path", None)
    if path is None:
        return None
    # stamped like the cache index itself: after a source edit the loops recompile, and so must the
    # message come back
    stamp = dependency_stamp()[:16]
    return os.path.join(path, f"prirfed-{dispatcher.py_func.__name__}-{geometry_name(dims)}-{stamp}.compiled")


def mark_compiled(dispatcher, dims) -> None:
    """Record that (loop, geometry) is in the cache (after a successful call).

    Helper, not a paper formula: cache bookkeeping.

    Parameters
    ----------
    dispatcher : numba dispatcher
        A fused loop (Numba dispatcher).
    dims : named tuple
        The geometry.
    """
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
    whether it did. Silent once the loop has run in this process or in this cache.

    Helper, not a paper formula: a message.

    Parameters
    ----------
    dispatcher : numba dispatcher
        A fused loop (Numba dispatcher).
    dims : named tuple
        The geometry.

    Returns
    -------
    bool
        Whether the message was printed.
    """
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
    a successful call.

    Helper, not a paper formula: a context manager.

    Parameters
    ----------
    dispatcher : numba dispatcher
        A fused loop (Numba dispatcher).
    dims : named tuple
        The geometry.
    """
    announce_compile(dispatcher, dims)
    yield
    key = (dispatcher.py_func.__name__, type(dims))
    if key not in _SEEN:
        mark_compiled(dispatcher, dims)
        _SEEN.add(key)
