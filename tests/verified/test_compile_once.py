"""The verified kernels are Numba ``cache=True`` dispatchers and the fused loops compile once (issue 5).

Oracles: Numba's own bookkeeping. A dispatcher built by ``@njit(cache=True)`` holds a
``numba.core.caching.FunctionCache`` (``NullCache`` without caching); ``dispatcher.signatures``
lists the compiled specialisations; ``dispatcher.stats`` counts, per signature, the loads from the
on-disk cache (``cache_hits``) and the compilations (``cache_misses``) of this process.

What must hold:
- every dispatcher defined in ``prirfed.verified`` caches to disk (a missing ``cache=True`` would
  make every process, every CI job and every worker pay the 25-45 s compile again);
- the session fixture ``compiled_fused_loops`` (tests/conftest.py) leaves each fused loop with
  exactly one signature, and a battery of trainer calls over every fused problem, local trainer,
  option and input form (lists, Python scalars, per-agent arrays, record_every) adds none: one
  compiled loop serves every setting, so no test in tests/verified compiles a loop again;
- a second round of the same calls neither compiles nor loads anything anywhere in
  ``prirfed.verified``;
- a fresh process finds the fused loops in the on-disk cache (hits, no compilation).
"""

import importlib
import json
import math
import os
import pkgutil
import subprocess
import sys
import warnings

import numpy as np
from numba.core.caching import FunctionCache
from numba.core.dispatcher import Dispatcher

import prirfed.verified as V
from prirfed.backend import refusal
from prirfed.reference.manifolds import SPD, Lorentz, Sphere
from prirfed.verified.problems import HyperbolicStructuredPrediction, SPDFrechetMean, SpherePCA
from prirfed.verified.trainers import prirfed as vp
from prirfed.verified.trainers import rfed as vf
from prirfed.verified.trainers import rgd as vr

FUSED_LOOPS = ("prirfed.verified.trainers.prirfed.prirfed_loop", "prirfed.verified.trainers.rgd.rgd_loop",
               "prirfed.verified.trainers.rgd.dp_rgd_loop", "prirfed.verified.trainers.rfed.federated_loop")


def verified_dispatchers(prefix="prirfed.verified"):
    """{module.name: dispatcher} for every Numba dispatcher defined (not merely imported) in a module of
    prirfed.verified whose name starts with ``prefix``."""
    out = {}
    mods = [V] + [importlib.import_module(m.name) for m in pkgutil.walk_packages(V.__path__, V.__name__ + ".")]
    for mod in mods:
        if not mod.__name__.startswith(prefix):
            continue
        for name, obj in vars(mod).items():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == mod.__name__:
                out[f"{mod.__name__}.{name}"] = obj
    return out


def compiled_state(dispatchers):
    """{name: (number of signatures, loads + compilations so far)} of the given dispatchers."""
    return {k: (len(d.signatures), sum(d.stats.cache_hits.values()) + sum(d.stats.cache_misses.values()))
            for k, d in dispatchers.items()}


def is_fused_loop(d):
    """A compiled-and-called loop, not an ``inline="always"`` helper (those are typed inside the loops and
    never compiled on their own)."""
    return d.targetoptions.get("inline", "never") != "always"


def test_every_verified_kernel_is_a_cached_dispatcher():
    ds = verified_dispatchers()
    assert len(ds) >= 100, f"only {len(ds)} dispatchers found in prirfed.verified: the walk is broken"
    for name in FUSED_LOOPS:
        assert name in ds, f"{name} is not a Numba dispatcher"
    not_cached = sorted(k for k, d in ds.items() if not isinstance(d._cache, FunctionCache))
    assert not not_cached, f"dispatchers without cache=True: {not_cached}"


def geometries_warmed(compiled_fused_loops):
    return {c.split("/")[1] for c in compiled_fused_loops}


def test_fixture_compiled_each_fused_loop_once(compiled_fused_loops):
    """Once per geometry (prirfed.verified.trainers.families: the class of ``dims``, argument 0); the
    signatures of one loop differ only in that argument (and the Stiefel ones in the rank of A, 3-D
    for every geometry)."""
    assert {"prirfed/sphere", "rgd/sphere", "dp_rgd/sphere", "rfedsvrg/sphere"} <= set(compiled_fused_loops)
    n_geometries = len(geometries_warmed(compiled_fused_loops))
    ds = verified_dispatchers("prirfed.verified.trainers")
    for name in FUSED_LOOPS:
        sigs = ds[name].signatures
        assert len(sigs) == n_geometries, f"{name}: {sigs}"
        dims_types = {str(sig[0]) for sig in sigs}
        assert len(dims_types) == n_geometries, f"{name}: two signatures with the same dims type {dims_types}"
        others = {tuple(str(t) for k, t in enumerate(sig) if k != 0) for sig in sigs}
        assert len(others) == 1, f"{name}: the geometries' signatures differ beyond dims: {sigs}"
        assert ds[name]._cache is not None and isinstance(ds[name]._cache, FunctionCache)


def _problems():
    """Tiny sphere PCA, SPD(2) Frechet mean and HSP on H^2 problems (verified classes) with a start point,
    plus Stiefel kPCA if the verified backend accepts it."""
    rng = np.random.default_rng(7)
    S2 = Sphere(2)
    out = [("sphere", SpherePCA([rng.standard_normal((3, 3)), rng.standard_normal((2, 3))]), S2.random_point(rng))]
    M = SPD(2)
    out.append(("spd", SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(3)]),
                                      np.stack([M.random_point(rng) for _ in range(2)])]), M.random_point(rng)))
    L = Lorentz(2)
    o = L.origin()
    Y = [np.stack([L.exp(o, np.array([0.0, *(0.3 * rng.standard_normal(2))])) for _ in range(k)]) for k in (3, 2)]
    out.append(("hsp", HyperbolicStructuredPrediction([0.1 * rng.standard_normal((3, 2)), 0.1 * rng.standard_normal((2, 2))],
                                                      Y, np.zeros(2), 0.5, 10.0), o))
    try:
        from prirfed.verified.problems.stiefel_kpca import StiefelKPCA
    except ImportError:
        return out
    P = StiefelKPCA([rng.standard_normal((4, 3)), rng.standard_normal((3, 3))], 2)
    if refusal("rgd", {"problem": P}) is None:
        out.append(("stiefel", P, np.linalg.qr(rng.standard_normal((3, 2)))[0]))
    return out


def _battery():
    """Trainer calls over every fused problem and the inputs users pass: Python and NumPy scalars, lists
    and arrays of per-agent sigma and b, both local trainers, both options, record_every, tau = inf.
    A call is made only where :func:`prirfed.backend.refusal` says the verified trainer accepts it."""
    for kind, P, x0 in _problems():
        rng = np.random.default_rng(3)
        calls = [
            ("prirfed", lambda: vp.prirfed(P, x0, 2, 1, 0.05, rng, sigma=0.1, tau=1.0)),
            ("prirfed", lambda: vp.prirfed(P, x0.tolist(), 2, 2, [0.05, 0.04], rng, local="dp_rsgd", K=2, b=[1, 2],
                                           sigma=[0.1, 0.0], option=2, local_option=1, record_every=2, keep_iterates=True)),
            ("prirfed", lambda: vp.prirfed(P, x0, np.int64(2), 1, np.float64(0.05), rng, local="dp_rsvrg", K=1, m=2,
                                           sigma=np.array([0.1, 0.2]), tau0=math.inf, tau1=2.0, option=1, local_option=2)),
            ("dp_rgd", lambda: vr.dp_rgd(P, x0, 0.05, 2, 2, 0.1, rng, tau=1.0, output=3)),
            ("dp_rgd", lambda: vr.dp_rgd(P, x0, 0.05, 2, 1, 0.0, rng)),
            ("rgd", lambda: vr.rgd(P, x0, 0.05, 2, record_every=2)),
            ("rfedsvrg", lambda: vf.rfedsvrg(P, x0, 2, 2, 0.05, 2, rng, option=2)),
            ("rfedavg", lambda: vf.rfedavg(P, x0, 2, 1, 0.05, 1, rng)),
            ("rfedprox", lambda: vf.rfedprox(P, x0, 2, 2, 0.05, 2, 0.1, rng)),
        ]
        for name, call in calls:
            if refusal(name, {"problem": P}) is None:
                call()


def test_no_trainer_call_compiles_a_fused_loop_again(compiled_fused_loops):
    loops = {k: d for k, d in verified_dispatchers("prirfed.verified.trainers").items() if is_fused_loop(d)}
    before = {k: len(d.signatures) for k, d in loops.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to the reference would not exercise the loops
        _battery()
    grown = {k: (before[k], len(d.signatures), [str(s) for s in d.signatures]) for k, d in loops.items()
             if len(d.signatures) > max(before[k], 1)}
    assert not grown, f"fused loops compiled a second specialisation: {grown}"
    n_geometries = len(geometries_warmed(compiled_fused_loops))  # one signature per geometry
    for name in FUSED_LOOPS:
        assert len(loops[name].signatures) == before[name] == n_geometries


def test_a_second_round_of_calls_compiles_and_loads_nothing(compiled_fused_loops):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _battery()
        first = compiled_state(verified_dispatchers())
        _battery()
        second = compiled_state(verified_dispatchers())
    changed = {k: (first[k], second[k]) for k in first if first[k] != second[k]}
    assert not changed, f"(signatures, loads + compilations) changed on the second round: {changed}"


FRESH_PROCESS = """
import json, numpy as np
from prirfed.verified.problems import SpherePCA
from prirfed.verified.trainers import prirfed as vp, rfed as vf, rgd as vr
P = SpherePCA([np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[0.0, 1.0]])])
x0, rng = np.array([1.0, 0.0]), np.random.default_rng(0)
vp.prirfed(P, x0, 1, 1, 0.1, rng, sigma=0.1, tau=1.0)
vr.rgd(P, x0, 0.1, 1)
vr.dp_rgd(P, x0, 0.1, 1, 1, 0.1, rng)
vf.rfedsvrg(P, x0, 1, 1, 0.1, 1, rng)
out = {}
for d in (vp.prirfed_loop, vr.rgd_loop, vr.dp_rgd_loop, vf.federated_loop):
    out[d.py_func.__name__] = [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
print(json.dumps(out))
"""


def test_a_fresh_process_loads_the_fused_loops_from_the_disk_cache(compiled_fused_loops):
    """The fixture (this process) compiled or loaded the loops, so their on-disk cache entries exist: a new
    Python process must load each (one cache hit) and compile none (no miss)."""
    res = subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, env=dict(os.environ),
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    stats = json.loads(res.stdout.strip().splitlines()[-1])
    assert set(stats) == {"prirfed_loop", "rgd_loop", "dp_rgd_loop", "federated_loop"}
    for name, (hits, misses) in stats.items():
        assert (hits, misses) == (1, 0), f"{name}: {hits} cache hits, {misses} compilations in a fresh process"
